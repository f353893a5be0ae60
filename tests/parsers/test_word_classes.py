"""English word classes for words the lexicon lacks (:mod:`parsers.word_classes`) and how
the ``rule`` parser uses them: verbs, adverbs and conjunctions are no entities."""

from __future__ import annotations

import pytest

from parsers import word_classes as wc


def _triples(graph):
    ents = graph.entities
    return {(ents[r.subject].head, r.text, ents[r.object].head) for r in graph.relations}


def _entity_words(graph):
    return {w.lower() for e in graph.entities for w in e.text.split()}


def test_inflections_follow_english_spelling():
    assert wc.inflections("grab") == ["grabs", "grabing", "grabbing", "grabed", "grabbed"]
    assert wc.inflections("ignore") == ["ignores", "ignoring", "ignored"]
    assert wc.inflections("carry") == ["carries", "carrying", "carried"]
    assert wc.inflections("tie") == ["ties", "tying", "tied"]
    assert wc.inflections("reach") == ["reaches", "reaching", "reached"]


def test_the_table_classes_verb_forms_adverbs_and_conjunctions():
    for form in ("ignores", "ignoring", "grabbing", "sits", "gallops", "dropping"):
        assert wc.is_verb_form(form), form
    assert wc.verb_class("ignores") == wc.VERB
    assert wc.verb_class("drops") == wc.WEAK          # also a noun
    assert wc.verb_class("poles") == wc.NOUNISH       # mostly a noun
    assert wc.verb_class("shelves") != wc.VERB        # plural of shelf (noun.exc)
    assert wc.verb_class("sat") and wc.verb_class("caught")  # irregular forms
    for word in ("table", "tables", "phone", "kitchen"):
        assert wc.verb_class(word) != wc.VERB, word
    assert not wc.is_verb_form("kitesurfing") and not wc.is_verb_form("the")
    for word in ("together", "apart", "closely", "quickly"):
        assert wc.is_adverb(word), word
    for word in ("table", "red", "grab"):
        assert not wc.is_adverb(word), word
    assert wc.is_conjunction("because") and wc.is_conjunction("nor")
    assert not wc.is_conjunction("table")


@pytest.mark.parametrize("text, triples, not_entities", [
    ("A baby is dropping some poles", {("baby", "dropping", "poles")}, {"dropping"}),
    ("A woman sits on a ledge and ignores her phone",
     {("woman", "sits on", "ledge"), ("woman", "ignores", "phone")}, {"ignores"}),
    ("a cat that ignores the dog", {("cat", "ignores", "dog")}, {"ignores"}),
    ("a boy grabbing a rope near a tree",
     {("boy", "grabbing", "rope"), ("rope", "near", "tree")}, {"grabbing"}),
    ("a man chopping vegetables in a kitchen",
     {("man", "chopping", "vegetables"), ("vegetables", "in", "kitchen")}, {"chopping"}),
    ("the girl who adores the puppy", {("girl", "adores", "puppy")}, {"adores"}),
])
def test_verbs_the_lexicon_lacks_are_relations(rule, text, triples, not_entities):
    result = rule.analyse(text)
    assert _triples(result.graph) == triples
    assert not (_entity_words(result.graph) & not_entities)
    assert not any("guessed" in w for w in result.warnings)


def test_a_verb_after_an_infinitive_is_no_entity(rule):
    g = rule.parse("A dog is reaching up to grab a Frisbee")
    assert [e.head for e in g.entities] == ["dog", "Frisbee"]
    assert "grab" in g.relations[0].text


@pytest.mark.parametrize("text, heads", [
    ("two people sitting together on a couch", ["people", "couch"]),
    ("two girls walking apart", ["girls"]),
    ("two men seated closely together on a bench", ["men", "bench"]),
])
def test_adverbs_are_no_entities(rule, text, heads):
    assert [e.head for e in rule.parse(text).entities] == heads


@pytest.mark.parametrize("text, head, modifier", [
    ("a red hooded jacket on a chair", "jacket", "hooded"),
    ("a closet with white shelves", "shelves", "white"),
    ("a plant with yellowing leaves", "leaves", "yellowing"),
    ("a brightly colored kite", "kite", "colored"),
])
def test_participles_and_plurals_inside_noun_phrases_stay_there(rule, text, head, modifier):
    g = rule.parse(text)
    ent = next(e for e in g.entities if e.head == head)
    assert modifier in ent.modifiers
    assert all(r.text not in (modifier, head) for r in g.relations)


def test_conjunctions_the_lexicon_lacks_are_no_entities(rule):
    g = rule.parse("a dog barking because a cat sits on the fence")
    assert "because" not in _entity_words(g)
    assert ("cat", "sits on", "fence") in _triples(g)


def _fake_wordnet(root):
    (root / "index.verb").write_text(
        "  1 header line\n"
        "grab v 1 1 @ 1 1 00000001  \ndrop v 1 1 @ 1 1 00000002  \n"
        "pole v 1 1 @ 1 1 00000003  \nrede v 1 1 @ 1 0 00000004  \n"
        "shelve v 1 1 @ 1 1 00000005  \ngo_out v 1 1 @ 1 0 00000006  \n")
    (root / "index.noun").write_text("drop n 1 1 @ 1 1 1  \npole n 1 1 @ 1 1 1  \n"
                                     "shelf n 1 1 @ 1 1 1  \n")
    (root / "index.adj").write_text("dropping a 1 1 & 1 0 1  \napart a 1 1 & 1 0 1  \n")
    (root / "index.adv").write_text("apart r 1 0 1 1 1  \ntogether r 1 0 1 1 1  \n")
    (root / "verb.exc").write_text("dropt drop\n")
    (root / "noun.exc").write_text("shelves shelf\n")
    (root / "cntlist.rev").write_text(
        "grab%2:35:00:: 1 5\ndrop%2:38:00:: 1 9\ndrop%1:23:00:: 1 4\n"
        "pole%2:35:00:: 1 1\npole%1:06:00:: 1 12\nshelve%2:35:00:: 1 2\n"
        "shelf%1:06:00:: 1 8\napart%4:02:00:: 1 6\napart%3:00:00:: 1 1\n")


def test_build_table_from_a_wordnet_folder(tmp_path):
    _fake_wordnet(tmp_path)
    source = wc.build_table(tmp_path)
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in source
    ns: dict = {}
    exec(compile(source, "word_class_table", "exec"), ns)
    lemmas = dict(e.split(":") for e in ns["VERB_LEMMAS"].split())
    assert lemmas["grab"] == "VVVV"        # only a verb
    assert lemmas["drop"] == "WWWV"        # noun "drop"; adjective "dropping"
    assert lemmas["pole"][:2] == "NN"      # mostly a noun
    assert lemmas["rede"] == "WWWW"        # never tagged: not trusted as a verb only
    assert lemmas["shelve"][1] != "V"      # "shelves" is the plural of shelf
    assert "go_out" not in lemmas          # multi-word lemmas are left out
    assert ns["VERB_FORMS"]["V"].split() == ["dropt"]
    assert ns["ADVERBS"].split() == ["apart", "together"]


def test_build_table_reports_a_folder_that_is_no_wordnet(tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="not a WordNet database folder"):
        wc.build_table(tmp_path)
    assert wc.main([str(tmp_path)]) == 2
    assert "not a WordNet database folder" in capsys.readouterr().err
    assert wc.main([]) == 2
