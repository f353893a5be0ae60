"""The learned relation filter of an annotation style: :mod:`parsers.relation_filter`,
``AnnotationStyle.fit(learn_filter=True)`` and ``rcrn parse-style --filter``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import parsers
from parsers.evaluate import evaluate_factual, predicted_triples, read_factual
from parsers.relation_filter import THRESHOLDS, Caption, RelationFilter, relation_features
from parsers.scene import SceneGraph
from parsers.style import AnnotationStyle, StyledParser, StyleError
from rcrn.cli import main as run
from rcrn.structures import LanguageGraph

PAIRS = [("boy", "kite"), ("girl", "hat"), ("man", "dog"), ("woman", "bag"),
         ("child", "ball"), ("lady", "cup"), ("player", "bat"), ("cook", "pan"),
         ("farmer", "goat"), ("rider", "helmet"), ("baker", "tray"), ("guard", "radio")]
LONG = "a {x} with a {y} on a large wooden table in a small room"


def _corpus() -> str:
    """Annotators who write the ``with`` of a short caption and leave it out of a long one
    (the same relation and heads in both: only its context tells them apart)."""
    rows = ["image_id,region_id,caption,scene_graph"]
    for i, (x, y) in enumerate(PAIRS):
        rows.append(f'{2 * i},1,a {x} with a {y},"( {x} , with , {y} )"')
        rows.append(f'{2 * i + 1},2,{LONG.format(x=x, y=y)},'
                    f'"( {x} ) , ( {y} , on , table ) , ( table , in , room )"')
    return "\n".join(rows) + "\n"


@pytest.fixture(scope="module")
def rule():
    return parsers.load("rule")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("filter") / "train.csv"
    path.write_text(_corpus(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def styles(rule, corpus):
    items = read_factual(corpus)
    return AnnotationStyle.fit(rule, items), AnnotationStyle.fit(rule, items, learn_filter=True)


def test_the_filter_drops_by_context_what_the_rules_keep(styles, rule):
    rules_only, learned = styles
    short, long = "a cat with a ball", LONG.format(x="cat", y="ball")
    # the rules see ( X , with , Y ) kept as often as left out, so they keep it everywhere
    assert rules_only.decision("cat", "with", "ball").action == "keep"
    assert ("cat", "with", "ball") in predicted_triples(StyledParser(rule, rules_only).parse(long))
    styled = StyledParser(rule, learned)
    assert predicted_triples(styled.parse(short)) == {("cat", "with", "ball")}
    assert predicted_triples(styled.parse(long)) == {("ball", "on", "tabl"),
                                                     ("tabl", "in", "room")}
    assert learned.filter.threshold in THRESHOLDS


def test_a_dropped_relation_keeps_its_link_in_a_tree_and_leaves_a_scene_graph(styles, rule):
    styled = StyledParser(rule, styles[1])
    text = LONG.format(x="cat", y="ball")
    tree = styled.parse(text)
    assert isinstance(tree, LanguageGraph) and tree.root == 0
    assert len(tree.relations) == tree.num_entities - 1
    assert [(r.subject, r.text, r.object) for r in tree.relations][0] == (0, "", 1)
    scene = styled.parse(text, mode="scene")
    assert isinstance(scene, SceneGraph)
    assert [(scene.entities[r.subject].head, r.text) for r in scene.relations] == \
        [("ball", "on"), ("table", "in")]
    assert [e.head for e in scene.entities][:2] == ["cat", "ball"]    # entities stay


def test_the_filter_raises_the_score_of_held_out_captions(styles, rule, tmp_path):
    held = tmp_path / "held.csv"
    held.write_text(
        "caption,scene_graph\n"
        'a cat with a ball,"( cat , with , ball )"\n'
        f'{LONG.format(x="dog", y="bone")},"( dog ) , ( bone , on , table ) , '
        '( table , in , room )"\n', encoding="utf-8")
    items = read_factual(held)
    before = evaluate_factual(StyledParser(rule, styles[0]), items)
    after = evaluate_factual(StyledParser(rule, styles[1]), items)
    assert before["precision"] == pytest.approx(3 / 4) and after["precision"] == 1.0
    assert after["f1"] == 1.0 and after["recall"] == before["recall"]


def test_features_name_the_relation_its_heads_and_its_context(rule):
    text = "a tall man with a dog , on a bench"
    graph = rule.parse(text)
    rel = graph.relations[1]
    features = relation_features(graph, rel, ["man", "dog", "bench"])
    assert {"r=on", "r,o=on,bench", "s,r,o=man,on,bench", "first=True", "gap=4-6",
            "between with", "between ,", "written=True", "before=,", "after=$",
            "subject modified=True", "subject relations=2"} <= set(features)
    # the same relation of the scene graph (entities found by their mentions) alike
    scene = rule.parse(text, mode="scene")
    assert relation_features(scene, scene.relations[1], ["man", "dog", "bench"]) == features


def test_fit_chooses_the_threshold_of_the_best_cross_fitted_f1():
    # a feature "good" on the relations the annotators wrote, "bad" on the others
    captions = [Caption([((f"a{i}", "on", "b"), ["bias", "good"]),
                         ((f"c{i}", "on", "d"), ["bias", "bad"])],
                        frozenset({(f"a{i}", "on", "b")})) for i in range(40)]
    learned = RelationFilter.fit(captions)
    assert learned.weights["good"] > 0 > learned.weights["bad"]
    assert learned.keeps(["bias", "good"]) and not learned.keeps(["bias", "bad"])
    assert RelationFilter.fit(captions, threshold=0.9).threshold == 0.9
    assert RelationFilter.fit([]).weights == {}


def test_a_style_with_a_filter_round_trips_through_its_file(styles, rule, tmp_path):
    learned = styles[1]
    path = learned.save(tmp_path / "style.json")
    again = AnnotationStyle.load(path)
    assert again.filter == learned.filter and again.relations == learned.relations
    text = LONG.format(x="cat", y="ball")
    assert StyledParser(rule, again).parse(text) == StyledParser(rule, learned).parse(text)
    assert "filter" not in styles[0].to_dict()          # a style without one has no entry


@pytest.mark.parametrize("entry, message", [
    ([1, 2], "style.json.filter: expected an object"),
    ({"threshold": 1.5, "weights": {}}, "style.json.filter.threshold: expected a number"),
    ({"threshold": True, "weights": {}}, "style.json.filter.threshold: expected a number"),
    ({"threshold": 0.3}, "style.json.filter.weights: expected an object"),
    ({"threshold": 0.3, "weights": {"r=on": "x"}}, "style.json.filter.weights['r=on']"),
])
def test_a_bad_filter_entry_is_one_error_naming_the_file(styles, tmp_path, entry, message):
    doc = styles[0].to_dict()
    doc["filter"] = entry
    path = tmp_path / "style.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(StyleError) as err:
        AnnotationStyle.load(path)
    assert str(err.value).startswith(str(tmp_path / message)) or message in str(err.value)
    assert "\n" not in str(err.value)


def test_parse_style_learns_a_filter_on_the_command_line(corpus, tmp_path, capsys):
    out = tmp_path / "style.json"
    assert run(["parse-style", str(corpus), "--out", str(out), "--filter",
                "--threshold", "0.4"]) == 0
    assert "a relation filter (threshold 0.4" in capsys.readouterr().out
    assert AnnotationStyle.load(out).filter.threshold == 0.4
    assert run(["parse", "--style", str(out), LONG.format(x="cat", y="ball")]) == 0
    printed = capsys.readouterr().out
    assert "on" in printed and "with" not in printed.split("relations")[-1]
    for bad in (["--threshold", "0.4"], ["--filter", "--threshold", "1"]):
        assert run(["parse-style", str(corpus), "--out", str(tmp_path / "x.json"),
                    *bad]) == 2
        assert "--threshold needs --filter" in capsys.readouterr().err


def test_the_filter_also_learns_from_another_corpus(rule, corpus, tmp_path, capsys):
    items = read_factual(corpus)
    short = [it for it in items if "table" not in it.text]    # every `with` written
    long = [it for it in items if "table" in it.text]         # every `with` left out
    text = LONG.format(x="cat", y="ball")
    alone = AnnotationStyle.fit(rule, short, learn_filter=True, filter_threshold=0.5)
    helped = AnnotationStyle.fit(rule, short, learn_filter=True, filter_threshold=0.5,
                                 filter_also=long)
    assert ("cat", "with", "ball") in predicted_triples(StyledParser(rule, alone).parse(text))
    assert ("cat", "with", "ball") not in \
        predicted_triples(StyledParser(rule, helped).parse(text))
    # the rules counted per key come from the style's own captions only
    assert helped.relations == alone.relations
    with pytest.raises(ValueError, match="filter_also is for the relation filter"):
        AnnotationStyle.fit(rule, short, filter_also=long)
    # on the command line
    own = tmp_path / "short.csv"
    lines = _corpus().splitlines()
    own.write_text("\n".join(lines[:1] + lines[1::2]) + "\n", encoding="utf-8")  # short
    out = tmp_path / "style.json"
    assert run(["parse-style", str(own), "--out", str(out), "--filter",
                "--filter-also", str(corpus)]) == 0
    assert f"also fitted on 24 captions of {corpus})" in capsys.readouterr().out
    assert run(["parse-style", str(own), "--out", str(out), "--overwrite",
                "--filter-also", str(corpus)]) == 2
    assert "--filter-also needs --filter" in capsys.readouterr().err
