"""Scene mode: whole descriptions parse to one scene graph with coreferent mentions merged."""

from __future__ import annotations

import json

import pytest

import parsers
from parsers import SceneGraph
from parsers.base import ParseError, split_sentences
from parsers.scene import SceneEntity, SceneRelation
from rcrn.structures import LanguageGraph, StructureError


@pytest.fixture(scope="module")
def rule():
    return parsers.load("rule")


def _triples(g: SceneGraph) -> set[tuple[str, str, str]]:
    return set(g.triples())


def _heads(g: SceneGraph) -> list[str]:
    return [e.head for e in g.entities]


def test_split_sentences_keeps_each_sentence_with_its_end():
    assert split_sentences("A dog sits. The dog is brown!  Is it? ...") == [
        "A dog sits.", "The dog is brown!", "Is it? ..."]
    assert split_sentences("no end mark") == ["no end mark"]
    assert split_sentences(" . , ") == []


def test_a_definite_noun_names_the_entity_of_an_earlier_sentence(rule):
    g = rule.parse("A dog sits on a couch. The dog is brown.", mode="scene")
    assert isinstance(g, SceneGraph)
    assert _heads(g) == ["dog", "couch"]
    dog = g.entities[0]
    assert dog.attributes == ["brown"]
    assert [g.tokens[s:e] for s, e in dog.mentions] == [["A", "dog"], ["The", "dog"]]
    assert _triples(g) == {("dog", "sits on", "couch")}
    assert rule.last_warnings == []


def test_relations_and_attributes_come_from_every_sentence(rule):
    g = rule.parse_scene("A woman holds a phone. She is wearing a red hat. "
                         "The phone is black. A cat sleeps under the table.")
    assert _heads(g) == ["woman", "phone", "hat", "cat", "table"]
    assert _triples(g) == {("woman", "holds", "phone"), ("woman", "wearing", "hat"),
                           ("cat", "sleeps under", "table")}
    attrs = {e.head: e.attributes for e in g.entities}
    assert attrs["phone"] == ["black"] and attrs["hat"] == ["red"]
    # no empty relation joins the sentences as a tree parse would
    assert all(r.text for r in g.relations)


def test_pronoun_subjects_and_objects_across_sentences(rule):
    g = rule.parse_scene("A man holds a cup. He is standing on a rug.")
    assert _triples(g) == {("man", "holds", "cup"), ("man", "standing on", "rug")}
    assert len(g.entities[0].mentions) == 2
    g = rule.parse_scene("Two dogs play on the grass. They are brown. A man watches them.")
    assert _heads(g) == ["dogs", "grass", "man"]
    assert ("man", "watches", "dogs") in _triples(g)
    assert "brown" in g.entities[0].attributes
    # "it" agrees with neither the man nor the dogs: a new entity
    g = rule.parse_scene("A man walks two dogs. It is sunny.")
    assert _heads(g)[-1] == "It"


@pytest.mark.parametrize("text, dogs", [
    ("A dog sits on a couch. A dog lies on the floor.", 2),
    ("A dog sits on a couch. Another dog lies on the floor.", 2),
    ("A dog sits on a couch. A second dog lies on the floor.", 2),
    ("Two dogs sit on a couch. The dog on the left is brown.", 1),  # number differs
    ("A dog sits on a couch. The dogs are brown.", 1),
])
def test_distinct_indefinite_mentions_are_not_merged(rule, text, dogs):
    g = rule.parse_scene(text)
    assert sum(e.head == "dog" for e in g.entities) == dogs


def test_which_earlier_entity_a_definite_noun_names(rule):
    text = "A dog sits on a couch. Another dog lies on the floor. "
    g = rule.parse_scene(text + "The dog is black.")  # the latest dog
    dogs = [e for e in g.entities if e.head == "dog"]
    assert [d.attributes for d in dogs] == [[], ["black"]]
    g = rule.parse_scene(text + "The other dog is black.")  # the one before the latest
    dogs = [e for e in g.entities if e.head == "dog"]
    assert [d.attributes for d in dogs] == [["black"], []]
    g = rule.parse_scene(text + "The first dog is black.")
    dogs = [e for e in g.entities if e.head == "dog"]
    assert [d.attributes for d in dogs] == [["black"], []]
    # a colour that contradicts the latest dog names the other one
    g = rule.parse_scene("A black cat sits on a couch. A white cat lies on a rug. "
                         "The black cat is sleeping.")
    cats = [e for e in g.entities if e.head == "cat"]
    assert len(cats) == 2 and len(cats[0].mentions) == 2 and len(cats[1].mentions) == 1


def test_a_definite_noun_related_to_a_namesake_is_not_merged_with_it(rule):
    g = rule.parse_scene("A dog is next to the dog.")
    assert _heads(g) == ["dog", "dog"]
    assert g.triples() == [("dog", "next to", "dog")]
    assert g.relations[0].subject != g.relations[0].object


def test_referring_mode_is_unchanged_and_the_default(rule):
    text = "A dog sits on a couch. The dog is brown."
    tree = rule.parse(text)
    assert isinstance(tree, LanguageGraph)
    assert tree.to_dict() == rule.parse(text, mode="referring").to_dict()
    assert len(tree.entities) == 3 and tree.root == 0
    with pytest.raises(ValueError, match="mode must be 'referring' or 'scene'"):
        rule.parse(text, mode="paragraph")
    with pytest.raises(ParseError):
        rule.parse_scene(" . ! ")
    graphs = rule.parse_many([text, "A cat."], mode="scene")
    assert [len(g.entities) for g in graphs] == [2, 1]


def test_scene_graph_json_round_trip(rule):
    g = rule.parse_scene("A man holds a cup. He is standing on a rug. The cup is white.")
    doc = json.loads(json.dumps(g.to_dict()))
    again = SceneGraph.from_dict(doc)
    assert again == g
    assert again.to_dict() == doc
    assert doc["relations"][0] == {"subject": 0, "relation": "holds", "object": 1,
                                   "span": [2, 3]}


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("tokens"), r"^scene graph\.tokens: missing$"),
    (lambda d: d.update(entities={}), r"^scene graph\.entities: expected list, got dict"),
    (lambda d: d["entities"][1].update(head=3), r"^scene graph\.entities\[1\]\.head: expected str"),
    (lambda d: d["entities"][0].update(mentions=[[0, 2], [5]]),
     r"^scene graph\.entities\[0\]\.mentions\[1\]: expected a token range"),
    (lambda d: d["entities"][0]["attributes"].append(None),
     r"^scene graph\.entities\[0\]\.attributes\[0\]: expected str"),
    (lambda d: d["relations"][0].update(object=7),
     r"^scene graph\.relations\[0\]\.object: 7 is not an entity index \(have 2\)$"),
    (lambda d: d["relations"][0].update(subject=True),
     r"^scene graph\.relations\[0\]\.subject: expected int, got bool"),
    (lambda d: d["relations"][0].pop("relation"),
     r"^scene graph\.relations\[0\]\.relation: missing$"),
    (lambda d: d["relations"][0].update(span=[2, 99]),
     r"^scene graph\.relations\[0\]\.span: \[2, 99\] exceeds 7 tokens$"),
    (lambda d: d["relations"].append("x"),
     r"^scene graph\.relations\[1\]: expected an object, got str$"),
])
def test_from_dict_names_the_bad_field_in_one_line(rule, change, message):
    doc = rule.parse_scene("A dog sits on a couch.").to_dict()
    change(doc)
    with pytest.raises(StructureError, match=message) as info:
        SceneGraph.from_dict(doc)
    assert "\n" not in str(info.value)
    with pytest.raises(StructureError, match=r"^scene graph: expected an object"):
        SceneGraph.from_dict([1, 2])


def test_to_factual_writes_relations_attributes_and_lone_entities():
    g = SceneGraph("t", ["a"] * 6,
                   [SceneEntity("dog", ["brown"], "a dog", [(0, 2)]),
                    SceneEntity("couch", [], "a couch", [(2, 4)]),
                    SceneEntity("lamp", [], "a lamp", [(4, 6)])],
                   [SceneRelation(0, "sits on", 1, (1, 2)), SceneRelation(0, "", 1)])
    assert g.to_factual() == ("( dog , sits on , couch ) , ( dog , is , brown ) , "
                              "( lamp )")
    # commas and parentheses inside a phrase do not break the layout
    g = SceneGraph("t", [], [SceneEntity("a, b (c)"), SceneEntity("d")],
                   [SceneRelation(0, "next to,", 1)])
    assert g.to_factual() == "( a b c , next to , d )"


# ------------------------------------------------------------------ scoring and CLI
#: paragraphs written for these tests, with the scene graphs a reader gives them
PARAGRAPHS = [
    ("A dog sits on a couch. The dog is brown. A cat sleeps under a table.",
     "( dog , sit on , couch ) , ( dog , is , brown ) , ( cat , sleep under , table )"),
    ("A man holds a cup. He is standing on a rug. The cup is white.",
     "( man , hold , cup ) , ( man , stand on , rug ) , ( cup , is , white )"),
    ("A woman rides a horse. She wears a red hat. The horse is running on a beach.",
     "( woman , ride , horse ) , ( woman , wear , hat ) , ( hat , is , red ) , "
     "( horse , run on , beach )"),
]


def _csv(tmp_path, rows):
    import csv

    path = tmp_path / "paragraphs.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["caption", "scene_graph"])
        w.writerows(rows)
    return path


def test_a_scene_graph_scores_by_the_keys_of_its_factual_layout(rule):
    from parsers.evaluate import parse_scene_graph, predicted_attributes, predicted_triples

    for text, _ in PARAGRAPHS:
        g = rule.parse_scene(text)
        assert parse_scene_graph(g.to_factual()) == (predicted_triples(g),
                                                     predicted_attributes(g))


def test_evaluate_factual_scores_the_scene_mode(rule, tmp_path):
    from parsers.evaluate import evaluate_factual, read_factual

    items = read_factual(_csv(tmp_path, PARAGRAPHS))
    scene = evaluate_factual(rule, items, max_errors=5, mode="scene")
    assert scene["mode"] == "scene"
    assert evaluate_factual(rule, items)["mode"] == "referring"
    # every gold relation and attribute is found once the mentions are merged
    assert scene["f1"] == 1.0 and scene["exact_set_rate"] == 1.0
    assert scene["attributes"]["f1"] == 1.0
    assert scene["errors"] == []
    # a paragraph the scene mode gets wrong is listed with what it predicted
    items = read_factual(_csv(tmp_path, [(PARAGRAPHS[0][0], "( dog , on , floor )")]))
    report = evaluate_factual(rule, items, max_errors=5, mode="scene")
    assert report["f1"] == 0.0
    assert report["errors"][0]["predicted"] == [["cat", "sleep under", "tabl"],
                                                ["dog", "sit on", "couch"]]


def test_cli_parse_scene_prints_merged_entities_and_the_factual_line(capsys):
    from rcrn.cli import main as run

    assert run(["parse", "--scene", "A dog sits on a couch. The dog is brown."]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()]
    assert ["0", "dog", "brown", "A", "dog;", "The", "dog"] in rows
    assert ["0", "0", "dog", "sits", "on", "1", "couch"] in rows
    assert "factual: ( dog , sits on , couch ) , ( dog , is , brown )" in out
    assert "root:" not in out
    assert run(["parse", "--scene", "--json", "A man holds a cup. He smiles.", "A cat."]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert len(docs) == 2
    g = SceneGraph.from_dict({k: v for k, v in docs[0].items() if k != "warnings"})
    assert g.triples() == [("man", "holds", "cup")]
    assert isinstance(docs[0]["warnings"], list)


def test_cli_parse_eval_scene(tmp_path, capsys):
    from rcrn.cli import main as run

    path = _csv(tmp_path, PARAGRAPHS)
    assert run(["parse-eval", "--format", "factual", str(path), "--scene", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["mode"] == "scene" and report["f1"] == 1.0 and report["captions"] == 3
    assert run(["parse-eval", "--format", "factual", str(path), "--scene"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("  ")[1]: line.split()[-1] for line in out.splitlines()[1:]}
    assert rows["mode"] == "scene" and rows["triple F1"] == "100.00%"
    assert run(["parse-eval", "--benchmark", "vsr", "--root", str(path), "--scene"]) == 2
    assert "--scene scores scene graphs: use it with --format factual" in capsys.readouterr().err
