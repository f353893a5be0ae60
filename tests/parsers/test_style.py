"""Annotation styles learned from human scene graphs: :mod:`parsers.style`, ``rcrn
parse-style`` and ``--style`` in ``rcrn parse`` / ``rcrn parse-eval``."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

import parsers
from parsers.evaluate import evaluate_factual, predicted_triples, read_factual
from parsers.scene import SceneGraph
from parsers.style import AnnotationStyle, Decision, StyledParser, StyleError, _pruned
from rcrn.cli import main as run
from rcrn.structures import LanguageGraph

# annotators who write "under" for "beneath", write "( frosting , cover , cake )" for
# "covered with", leave out what a woman holds, and write colours but not "many"
TRAIN = (
    "image_id,region_id,caption,scene_graph\n"
    '1,1,a dog beneath a table,"( dog , under , table )"\n'
    '2,2,a bowl beneath a lamp,"( bowl , under , lamp )"\n'
    '3,3,a boy beneath a tree,"( boy , under , tree )"\n'
    '4,4,a cake covered with frosting,"( frosting , cover , cake )"\n'
    '5,5,a pie covered with cream,"( cream , cover , pie )"\n'
    '6,6,a tart covered with sugar,"( sugar , cover , tart )"\n'
    '7,7,a woman holding an umbrella,"( woman ) , ( umbrella )"\n'
    '8,8,a woman holding a cup,"( woman ) , ( cup )"\n'
    '9,9,a woman holding a bag,"( woman ) , ( bag )"\n'
    '10,10,a man riding a horse,"( man , ride , horse )"\n'
    '11,11,many birds on a wire,"( birds , on , wire )"\n'
    '12,12,many cows in a field,"( cows , in , field )"\n'
    '13,13,many boats near a dock,"( boats , near , dock )"\n'
    '14,14,a red bus on a road,"( bus , is , red ) , ( bus , on , road )"\n'
    '15,15,a red kite in the sky,"( kite , is , red ) , ( kite , in , sky )"\n'
    '16,16,a red boat near a dock,"( boat , is , red ) , ( boat , near , dock )"\n'
)
HELD_OUT = (
    "image_id,region_id,caption,scene_graph\n"
    '1,1,a cat beneath a chair,"( cat , under , chair )"\n'
    '2,2,a bun covered with seeds,"( seeds , cover , bun )"\n'
    '3,3,a man riding a bike,"( man , ride , bike )"\n'
    '4,4,many red apples in a bowl,"( apples , is , red ) , ( apples , in , bowl )"\n'
)


def _write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def rule():
    return parsers.load("rule")


@pytest.fixture()
def style(tmp_path, rule):
    return AnnotationStyle.fit(rule, read_factual(_write(tmp_path, TRAIN, "train.csv")))


def test_read_factual_keeps_each_relation_as_written(tmp_path):
    items = read_factual(_write(tmp_path, TRAIN, "train.csv"))
    assert items[0].phrases == frozenset({("under", "under")})
    assert items[6].phrases == frozenset()          # entity groups name no relation
    assert read_factual(_write(
        tmp_path, 'caption,scene_graph\na,"( man , is sitting on , bench )"\n', "s.csv")
    )[0].phrases == frozenset({("sit on", "is sitting on")})


def test_a_style_learns_relabels_flips_and_drops(style, rule):
    assert style.decision("cat", "beneath", "chair") == Decision("relabel", "under")
    assert style.decision("woman", "hold", "phone").action == "drop"
    assert style.decision("man", "rid", "bike").action == "keep"
    assert style.phrases["under"] == "under"
    graph = StyledParser(rule, style).parse("a cat beneath a chair")
    assert [(r.subject, r.text, r.object) for r in graph.relations] == [(0, "under", 1)]


def test_the_parse_of_covered_with_already_matches_so_it_is_kept(style):
    # the rule parser writes ( frosting , cover , cake ) itself: the style learns "keep"
    assert style.decision("frost", "cover", "cak").action == "keep"


def test_a_flip_swaps_subject_and_object_in_both_modes(rule, tmp_path):
    text = ("image_id,region_id,caption,scene_graph\n"
            + "".join(f'{i},{i},a plate with {f},"( {f} , on , plate )"\n'
                      for i, f in enumerate(["bread", "rice", "cheese"])))
    items = read_factual(_write(tmp_path, text, "flip.csv"))
    for mode in ("referring", "scene"):      # a style is fitted in the mode it serves
        style = AnnotationStyle.fit(rule, items, mode)
        graph = StyledParser(rule, style).parse("a plate with pasta", mode=mode)
        assert predicted_triples(graph) == {("pasta", "on", "plat")}
    style = AnnotationStyle.fit(rule, items)
    assert style.decision("plat", "with", "pasta") == Decision("flip", "on")
    tree = StyledParser(rule, style).parse("a plate with pasta")
    assert isinstance(tree, LanguageGraph) and tree.root == 0   # still the plate's tree


def test_a_drop_empties_a_trees_relation_and_leaves_a_scene_graph(style, rule):
    styled = StyledParser(rule, style)
    tree = styled.parse("a woman holding a phone")
    assert isinstance(tree, LanguageGraph) and tree.root == 0
    assert len(tree.relations) == tree.num_entities - 1       # a tree keeps its edges
    assert [(r.subject, r.text, r.object) for r in tree.relations] == [(0, "", 1)]
    assert predicted_triples(tree) == set()
    scene = styled.parse("a woman holding a phone", mode="scene")
    assert isinstance(scene, SceneGraph) and scene.relations == []
    assert [e.head for e in scene.entities] == ["woman", "phone"]   # entities stay


def test_more_detailed_keys_win_over_general_ones(rule, tmp_path):
    # "beneath" is "under" in general, but this corpus keeps it for a cat
    rows = TRAIN + "".join(
        f'{20 + i},{20 + i},a cat beneath a {o},"( cat , beneath , {o} )"\n'
        for i, o in enumerate(["rug", "rug", "bed"])) + "".join(
        f'{30 + i},{30 + i},a {s} beneath a car,"( {s} , under , car )"\n'
        for i, s in enumerate(["pan", "box", "hat"]))
    style = AnnotationStyle.fit(rule, read_factual(_write(tmp_path, rows, "t.csv")))
    assert style.decision("cat", "beneath", "rug").action == "keep"
    assert style.decision("cat", "beneath", "sofa").action == "keep"
    assert style.decision("fox", "beneath", "sofa") == Decision("relabel", "under")


def test_min_count_and_share_hold_decisions_back(tmp_path, rule):
    items = read_factual(_write(tmp_path, TRAIN, "train.csv"))
    assert AnnotationStyle.fit(rule, items, min_count=4).decision(
        "cat", "beneath", "chair").action == "keep"
    # "many" is written three times: it decides at min_count 3, not at 4
    assert AnnotationStyle.fit(rule, items, min_count=3).attribute_decision(
        "appl", "many").action == "drop"
    assert AnnotationStyle.fit(rule, items, min_count=4).attribute_decision(
        "appl", "many").action == "keep"
    with pytest.raises(ValueError, match="min_count"):
        AnnotationStyle.fit(rule, items, min_count=0)


def test_pruning_changes_no_lookup():
    rng = random.Random(0)
    words, relations = ["a", "b", "c"], ["on", "in"]
    choices = [Decision("keep"), Decision("drop"), Decision("relabel", "x"),
               Decision("flip", "y")]
    for _ in range(200):
        rules = {}
        for r in relations:
            for s, o in itertools.product(["", *words], repeat=2):
                if rng.random() < 0.5:
                    rules[(r, s, o)] = rng.choice(choices)
        full, small = AnnotationStyle(rules), AnnotationStyle(_pruned(rules))
        for r, s, o in itertools.product(relations, words + ["z"], words + ["z"]):
            assert small.decision(s, r, o) == full.decision(s, r, o)
        assert len(small.relations) <= len(full.relations)


def test_a_style_round_trips_through_its_file(style, tmp_path):
    path = style.save(tmp_path / "style.json")
    again = AnnotationStyle.load(path)
    assert again.relations == style.relations and again.phrases == style.phrases
    assert again.attributes == style.attributes and style.attributes
    assert json.loads(path.read_text())["format"] == "rcrn-annotation-style"


@pytest.mark.parametrize("doc, message", [
    ({"format": "other"}, "not an annotation style"),
    ({"format": "rcrn-annotation-style", "version": 2, "relations": []}, "unsupported version"),
    ({"format": "rcrn-annotation-style", "version": 1, "relations": {}},
     r"relations: expected a list"),
    ({"format": "rcrn-annotation-style", "version": 1,
      "relations": [{"relation": "on", "action": "keep"}, {"relation": "on", "action": "move"}]},
     r"relations\[1\]\.action"),
    ({"format": "rcrn-annotation-style", "version": 1,
      "relations": [{"relation": "on", "action": "relabel"}]}, r"relations\[0\]\.to: needed"),
    ({"format": "rcrn-annotation-style", "version": 1,
      "relations": [{"relation": "on", "subject": 3, "action": "drop"}]},
     r"relations\[0\]\.subject"),
    ({"format": "rcrn-annotation-style", "version": 1,
      "attributes": [{"attribute": "red", "action": "relabel"}]}, r"attributes\[0\]\.action"),
    ({"format": "rcrn-annotation-style", "version": 1, "attributes": ["red"]},
     r"attributes\[0\]: expected an object"),
])
def test_a_bad_style_file_is_one_error_naming_the_file_and_rule(tmp_path, doc, message):
    path = _write(tmp_path, json.dumps(doc), "bad.json")
    with pytest.raises(StyleError, match=message) as info:
        AnnotationStyle.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_parse_style_and_style_options_on_the_command_line(tmp_path, capsys):
    train, held = _write(tmp_path, TRAIN, "train.csv"), _write(tmp_path, HELD_OUT, "held.csv")
    out = tmp_path / "style.json"
    assert run(["parse-style", str(train), "--out", str(out)]) == 0
    assert "learned from 16 captions" in capsys.readouterr().out
    assert run(["parse-style", str(train), "--out", str(out)]) == 2     # no silent overwrite
    assert "exists" in capsys.readouterr().err
    reports = []
    for extra in ([], ["--style", str(out)]):
        assert run(["parse-eval", "--format", "factual", str(held), "--json", *extra]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    assert reports[0]["f1"] < reports[1]["f1"] == pytest.approx(1.0)
    assert reports[0]["attributes"]["f1"] < reports[1]["attributes"]["f1"] == pytest.approx(1.0)
    assert reports[1]["style"] == str(out)
    assert run(["parse", "--style", str(out), "--json", "a fox beneath a bench"]) == 0
    assert json.loads(capsys.readouterr().out)["relations"][0]["text"] == "under"
    assert run(["parse", "--style", str(tmp_path / "none.json"), "a fox"]) == 2
    assert "none.json: cannot read" in capsys.readouterr().err


def test_a_styled_parser_scores_as_its_graphs(style, rule, tmp_path):
    items = read_factual(_write(tmp_path, HELD_OUT, "held.csv"))
    plain, styled = (evaluate_factual(p, items) for p in (rule, StyledParser(rule, style)))
    assert plain["true_positives"] == 3 and styled["true_positives"] == 4


def test_a_scene_graph_does_not_get_the_same_relation_twice(style, rule):
    text = "A dog is beneath a table. The dog is under the table."
    plain = rule.parse(text, mode="scene")
    assert [r.text for r in plain.relations] == ["beneath", "under"]
    styled = StyledParser(rule, style).parse(text, mode="scene")
    assert [(r.subject, r.text, r.object) for r in styled.relations] == [(0, "under", 1)]
    assert styled.entities == plain.entities


def test_a_style_learns_which_modifiers_the_annotators_write(style, rule):
    assert style.attribute_decision("appl", "many").action == "drop"
    assert style.attribute_decision("appl", "red").action == "keep"
    styled = StyledParser(rule, style)
    tree = styled.parse("many red apples in a bowl")
    assert tree.entities[0].modifiers == ["red"]
    assert rule.parse("many red apples in a bowl").entities[0].modifiers == ["many", "red"]
    scene = styled.parse("Many red apples are in a bowl.", mode="scene")
    assert scene.entities[0].attributes == ["red"]
