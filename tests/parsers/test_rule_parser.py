"""Behaviour of the default ``rule`` parser on the constructions it must handle."""

from __future__ import annotations

import pytest

import parsers
from parsers.base import ParseError, tokenize
from parsers.lexicon import (
    GITM_MR_RELATIONS,
    PREPOSITION_PHRASES,
    RELATION_TRIE,
    SYNTHETIC_RELATIONS,
    VSR_RELATIONS,
)
from parsers.rule import RuleParser
from rcrn.structures import LanguageGraph


@pytest.fixture(scope="module")
def rule() -> RuleParser:
    return RuleParser()


def triples(g: LanguageGraph) -> list[tuple[str, str, str]]:
    return [(g.entities[r.subject].head, r.text, g.entities[r.object].head) for r in g.relations]


def assert_spans_match(g: LanguageGraph) -> None:
    for e in g.entities:
        assert g.span_text(e.span) == e.text
    for r in g.relations:
        if r.span[1] > r.span[0]:
            assert g.span_text(r.span) == r.text


def test_copula_caption(rule):
    g = rule.parse("The cat is under the laptop.")
    assert [e.text for e in g.entities] == ["The cat", "the laptop"]
    assert triples(g) == [("cat", "under", "laptop")]
    assert g.root == 0
    assert g.tokens[-1] == "."  # punctuation is split off, tokens keep their spelling
    assert_spans_match(g)


def test_multiword_relation_drops_the_copula(rule):
    g = rule.parse("The bench is at the left side of the train.")
    assert triples(g) == [("bench", "at the left side of", "train")]
    assert g.relations[0].span == (3, 8)


def test_chain_through_relative_clause(rule):
    g = rule.parse("the cup to the left of the plate that is on the table")
    assert triples(g) == [("cup", "to the left of", "plate"), ("plate", "on", "table")]
    assert g.root == 0
    assert g.depths() == [0, 1, 2]


def test_branches_from_one_subject(rule):
    g = rule.parse("the red circle that is to the left of the blue square and above the "
                   "small triangle")
    assert triples(g) == [("circle", "to the left of", "square"), ("circle", "above", "triangle")]
    assert g.entities[0].text == "the red circle"
    assert g.entities[0].modifiers == ["red"]
    assert g.entities[2].modifiers == ["small"]
    assert g.parents() == [-1, 0, 0]


def test_prepositional_chain_attaches_low(rule):
    g = rule.parse("the cup left of the plate on the table")
    assert triples(g) == [("cup", "left of", "plate"), ("plate", "on", "table")]


@pytest.mark.parametrize("pronoun", ["that is", "which is", "who is", "that are"])
def test_relative_pronouns(rule, pronoun):
    g = rule.parse(f"the dog {pronoun} next to the car")
    assert triples(g) == [("dog", "next to", "car")]


def test_participles(rule):
    assert triples(rule.parse("the man wearing a hat")) == [("man", "wearing", "hat")]
    g = rule.parse("the man next to the car wearing a black and white hat")
    assert triples(g) == [("man", "next to", "car"), ("man", "wearing", "hat")]
    assert g.entities[2].modifiers == ["black", "white"]
    g = rule.parse("The man wearing a hat is holding an umbrella")
    assert triples(g) == [("man", "wearing", "hat"), ("man", "holding", "umbrella")]


def test_verb_with_preposition_is_one_relation(rule):
    g = rule.parse("the woman standing in front of the bus")
    assert triples(g) == [("woman", "standing in front of", "bus")]
    g = rule.parse("the dog is sitting on the sofa")
    assert triples(g) == [("dog", "sitting on", "sofa")]


def test_coordinated_objects_share_the_relation(rule):
    g = rule.parse("the cup to the left of the plate and the bowl")
    assert triples(g) == [("cup", "to the left of", "plate"), ("cup", "to the left of", "bowl")]
    assert g.relations[0].span == g.relations[1].span


def test_coordinated_clauses(rule):
    g = rule.parse("The cat is under the table and the dog is on the sofa.")
    assert triples(g) == [("cat", "under", "table"), ("cat", "and", "dog"), ("dog", "on", "sofa")]


def test_attributes_and_articles(rule):
    g = rule.parse("A small wooden table near an old red chair")
    assert g.entities[0].text == "A small wooden table"
    assert g.entities[0].head == "table"
    assert g.entities[0].modifiers == ["small", "wooden"]
    assert g.entities[1].text == "an old red chair"
    assert g.entities[1].modifiers == ["old", "red"]


def test_predicate_adjective_becomes_a_modifier(rule):
    g = rule.parse("The cup, which is red, is on the table.")
    assert triples(g) == [("cup", "on", "table")]
    assert g.entities[0].modifiers == ["red"]


def test_plurals(rule):
    g = rule.parse("two dogs are lying on the grass")
    assert triples(g) == [("dogs", "lying on", "grass")]
    assert g.entities[0].modifiers == ["two"]


@pytest.mark.parametrize("noun", ["hair drier", "teddy bear", "beer bottle", "fire hydrant",
                                  "cell phone", "parking meter", "potted plant", "hot dog"])
def test_multiword_nouns_stay_one_entity(rule, noun):
    g = rule.parse(f"The {noun} is next to the chair.")
    assert g.entities[0].text == f"The {noun}"
    # the head as FACTUAL names it: "cell phone" is written "cellphone"
    head = {"cell phone": "cellphone"}.get(noun, noun)
    assert g.entities[0].head == head
    assert triples(g) == [(head, "next to", "chair")]


def test_negation_is_part_of_the_relation(rule):
    assert triples(rule.parse("The cat is not under the table")) == [("cat", "not under", "table")]


def test_object_relative_clause_is_turned_around(rule):
    g = rule.parse("the dog that the man is holding")
    assert triples(g) == [("man", "holding", "dog")]
    assert g.root == 0


def test_fronted_relation_takes_the_subject_after_the_copula(rule):
    g = rule.parse("To the left of the plate is a cup.")
    assert triples(g) == [("cup", "To the left of", "plate")]
    assert g.entities[g.root].head == "cup"


def test_there_is(rule):
    g = rule.parse("There is a cat on the table")
    assert [e.text for e in g.entities] == ["a cat", "the table"]
    assert triples(g) == [("cat", "on", "table")]


def test_partitive_noun_phrase(rule):
    g = rule.parse("a pair of scissors on the desk")
    assert g.entities[0].text == "a pair of scissors"
    assert g.entities[0].head == "scissors"


def test_auxiliary_word_used_as_a_noun(rule):
    assert triples(rule.parse("A can behind a knife")) == [("can", "behind", "knife")]
    assert triples(rule.parse("The can is on the table")) == [("can", "on", "table")]


def test_possessive_noun_is_not_a_verb(rule):
    g = rule.parse("the cat's face in the mirror")
    assert [e.head for e in g.entities] == ["face", "cat", "mirror"]
    assert sorted(triples(g)) == [("cat", "has", "face"), ("face", "in", "mirror")]
    assert g.entities[g.root].head == "face"


@pytest.mark.parametrize("rel", sorted(set(VSR_RELATIONS) | set(SYNTHETIC_RELATIONS)))
def test_every_spatial_relation_is_one_unit(rule, rel):
    g = rule.parse(f"The cat is {rel} the dog.")
    assert triples(g) == [("cat", rel, "dog")]


@pytest.mark.parametrize("rel", sorted(set(GITM_MR_RELATIONS)))
def test_every_gitm_mr_relation_and_substitute(rule, rel):
    g = rule.parse(f"the man {rel} the horse")
    assert triples(g) == [("man", rel, "horse")]


def test_lexicon_holds_the_substitution_table():
    for rel in ["to the left of", "looking at", "on the side of", "standing by",
                "standing in front of", "walking down", "has as a part", "consists of",
                "far away from", "the same colour as", "same color as"]:
        assert rel in RELATION_TRIE or rel.split()[0] in parsers.lexicon.VERB_FORMS
    assert "at the right side of" in PREPOSITION_PHRASES


def test_unparsable_parts_give_warnings_not_exceptions(rule):
    # a verb neither the lexicon nor the word-class table knows is guessed, with a warning
    result = rule.analyse("the man vapes the liquids")
    assert triples(result.graph) == [("man", "vapes", "liquids")]
    assert any("vapes" in w for w in result.warnings)
    # one the word-class table knows is a verb without a guess
    result = rule.analyse("the man juggles the balls")
    assert triples(result.graph) == [("man", "juggles", "balls")]
    assert not result.warnings
    result = rule.analyse("the cat is under")
    assert result.graph.num_entities == 1
    assert any("no object" in w for w in result.warnings)
    result = rule.analyse("The cat is on the mat. The dog sleeps.")
    assert result.graph.num_entities == 3
    assert any("attached" in w for w in result.warnings)
    rule.parse("the cat is under")
    assert rule.last_warnings and "no object" in rule.last_warnings[0]


def test_text_without_a_noun_phrase_is_one_entity(rule):
    result = rule.analyse("is on")
    assert result.graph.num_entities == 1
    assert result.graph.entities[0].span == (0, 2)
    assert result.warnings


@pytest.mark.parametrize("text", ["", "   ", "...", "?!", " , ; "])
def test_text_without_words_raises_parse_error(rule, text):
    with pytest.raises(ParseError, match="no word"):
        rule.parse(text)


def test_parse_many_matches_parse(rule):
    texts = ["The cat is under the laptop.", "the man wearing a hat", "A mug behind a knife"]
    many = rule.parse_many(texts)
    assert [g.to_dict() for g in many] == [rule.parse(t).to_dict() for t in texts]


def test_graph_round_trips_through_dicts(rule):
    g = rule.parse("the cup to the left of the plate that is on the table")
    assert LanguageGraph.from_dict(g.to_dict()).to_dict() == g.to_dict()


def test_tokenize_keeps_words_and_splits_punctuation():
    assert tokenize("The man's left-hand cup, isn't it?") == [
        "The", "man's", "left-hand", "cup", ",", "isn't", "it", "?"]


def test_extra_vocabulary(rule):
    custom = RuleParser(extra_relations=["diagonally across from"], extra_compounds=["lava lamp"])
    g = custom.parse("the lava lamp diagonally across from the sofa")
    assert triples(g) == [("lava lamp", "diagonally across from", "sofa")]


def test_registry():
    assert isinstance(parsers.load(), RuleParser)
    assert isinstance(parsers.load("rule"), parsers.Parser)
    names = {b["name"]: b for b in parsers.available()}
    assert {"rule", "spacy", "sng", "stanza"} <= set(names)
    assert names["rule"]["installed"] is True
    with pytest.raises(parsers.UnknownParser, match="unknown parser 'nope'"):
        parsers.load("nope")
    with pytest.raises(parsers.UnknownParser, match="does not accept"):
        parsers.load("rule", colour="blue")


@pytest.mark.parametrize("text, heads", [
    # compounds FACTUAL writes as one word, casual words for a person, and a pronoun that
    # stands for nothing named before get FACTUAL's names as heads; the text stays
    ("a guy on a surf board", ["person", "surfboard"]),
    ("two dudes on the side walk", ["people", "sidewalk"]),
    ("someone in a wet suit holding a cell phone", ["person", "wetsuit", "cellphone"]),
    ("a ball next to her", ["ball", "woman"]),
    ("a plate on the counter top", ["plate", "countertop"]),
    # plural compounds as well
    ("two cell phones on surf boards", ["cellphones", "surfboards"]),
])
def test_heads_named_as_factual_names_them(rule, text, heads):
    g = rule.parse(text)
    assert [e.head for e in g.entities] == heads
    assert all(e.text.lower() in text for e in g.entities)


@pytest.mark.parametrize("text, head, modifiers", [
    # a label noun keeps the head; the name, number or quoted words after it modify it
    ("the number 42 on a jersey", "number", ["42"]),
    ("the letters ab-c on a truck", "letters", ["ab-c"]),
    ("the words hello world on a mug", "words", ["hello", "world"]),
    ("the sign `` stop here '' on a pole", "sign", ["stop", "here"]),
    ('a label " happy birthday " on a box', "label", ["happy", "birthday"]),
])
def test_a_label_and_its_name(rule, text, head, modifiers):
    g = rule.parse(text)
    first = g.entities[0]
    assert (first.head, first.modifiers) == (head, modifiers)
    assert [e.head for e in g.entities[1:]] == [text.split()[-1]]


@pytest.mark.parametrize("text, person, hair_words", [
    # "X haired" gives the person a hair entity that the words before "haired" describe
    ("a blonde haired woman on a bench", "woman", ["blonde"]),
    ("a young red-haired boy with a kite", "boy", ["red"]),
    ("two dark brown haired girls", "girls", ["dark", "brown"]),
])
def test_haired(rule, triples_of, text, person, hair_words):
    g = rule.parse(text)
    assert (person, "has", "hair") in triples_of(g)
    hair = next(e for e in g.entities if e.head == "hair")
    owner = next(e for e in g.entities if e.head == person)
    assert hair.modifiers == hair_words
    assert not set(hair_words) & set(owner.modifiers)
