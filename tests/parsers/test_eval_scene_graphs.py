"""FACTUAL scene-graph scoring: :mod:`parsers.evaluate`, ``rcrn parse-eval --format
factual`` and the ``scripts/eval_scene_graphs.py`` wrapper, on tiny CSVs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import parsers
from parsers import evaluate as ev
from parsers.evaluate import DataError
from rcrn.cli import main as run

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "eval_scene_graphs.py"
_spec = importlib.util.spec_from_file_location("eval_scene_graphs", _PATH)
esg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(esg)

CSV = (
    "image_id,region_id,caption,scene_graph\n"
    '1,1,white stove in a kitchen,"( stove , is , white ) , ( stove , in , kitchen )"\n'
    '2,2,people sitting in bleachers,"( people , sit in , bleachers )"\n'
    '3,3,a man wearing a hat,"( man , wear , hat )"\n'
    '4,4,a red car,"( car , is , red )"\n'
)


def _write(tmp_path: Path, text: str, name: str = "sg.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_lemma_is_symmetric_for_inflections():
    assert ev.lemma("sitting") == ev.lemma("sit") == "sit"
    assert ev.lemma("wearing") == "wear"
    assert ev.lemma("riding") == ev.lemma("ride")
    assert ev.lemma("bushes") == "bush"
    assert ev.lemma("people") == ev.lemma("person")
    assert ev.relation_key("is sitting on") == ev.relation_key("sit on") == "sit on"
    assert ev.relation_key("is") == ""
    assert ev.relation_key("is not holding") == ev.relation_key("holds")


@pytest.mark.parametrize("forms", [
    ("use", "using", "used", "uses"), ("go", "going", "goes"), ("stick", "stuck"),
    ("sniff", "sniffing", "sniffed"), ("stuff", "stuffing"), ("die", "dying"),
    ("tie", "tying", "ties"), ("roll", "rolling"), ("hit", "hitting"), ("run", "running"),
    ("take", "taken", "took", "taking"), ("hide", "hidden", "hid"), ("fly", "flown", "flew"),
    ("break", "broken", "broke"), ("give", "given", "gave"), ("fall", "fallen", "fell"),
    ("travel", "travelled", "traveled", "travelling"), ("label", "labelled", "labeled"),
    ("fill", "filled", "filling"),
])
def test_short_and_irregular_verb_forms_share_their_base_forms_key(forms):
    assert {ev.lemma(w) for w in forms} == {ev.lemma(forms[0])}


def test_a_number_word_and_its_digits_are_one_attribute():
    assert ev.attribute_key("two") == ev.attribute_key("2") == "2"
    assert ev.attribute_key("Three") == "3"
    assert ev.attribute_key("two-tone") != ev.attribute_key("2")
    _, attrs = ev.parse_scene_graph("( surfers , is , 2 )")
    assert attrs == {(ev.lemma("surfers"), ev.attribute_key("two"))}


def test_a_final_of_leaves_an_attribute_key():
    assert ev.attribute_key("group of") == ev.attribute_key("group") == "group"
    assert ev.attribute_key("out of focus") == "out of focus"
    assert ev.attribute_key("of") == "of"


def test_scene_graph_keys_separate_attributes_and_entities():
    triples, attrs = ev.parse_scene_graph(
        "( stove , is , white ) , ( stove , in , kitchen ) , ( oven ) , "
        "( chairs , are , dark brown )")
    assert triples == {(ev.lemma("stove"), "in", "kitchen")}
    assert attrs == {(ev.lemma("stove"), ev.attribute_key("white")),
                     ("chair", ev.attribute_key("dark brown"))}
    assert ev.parse_scene_graph("") == (set(), set())


@pytest.mark.parametrize("graph, what", [
    ("( man , wear )", "neither"),
    ("( man , , hat )", "neither"),
    ("( man , wear , hat", "outside"),
    ("man wear hat", "outside"),
])
def test_malformed_scene_graphs_name_the_place(graph, what):
    with pytest.raises(DataError, match=rf"^f\.csv:7: .*{what}"):
        ev.parse_scene_graph(graph, "f.csv:7")


def test_read_factual_names_file_and_line_of_a_bad_row(tmp_path):
    path = _write(tmp_path, CSV + '5,5,a dog,"( dog , chases )"\n')
    with pytest.raises(DataError, match=r"sg\.csv:6: .*\( ?dog , chases ?\)"):
        ev.read_factual(path)
    # a caption spanning two physical lines: the error names the line the row ends on
    path = _write(tmp_path, CSV + '5,5,"a dog\nrunning","( dog , run )"\n')
    with pytest.raises(DataError, match=r"sg\.csv:7: "):
        ev.read_factual(path)
    with pytest.raises(DataError, match=r"bad\.csv:1: needs the columns"):
        ev.read_factual(_write(tmp_path, "a,b\n1,2\n", "bad.csv"))
    with pytest.raises(DataError, match="cannot read"):
        ev.read_factual(tmp_path / "missing.csv")
    assert [it.source for it in ev.read_factual(_write(tmp_path, CSV), limit=2)] == [
        f"{tmp_path / 'sg.csv'}:2", f"{tmp_path / 'sg.csv'}:3"]


def test_score_sets_is_micro_and_counts_exact_sets():
    out = ev.score_sets([{1, 2}, set(), {3}], [{1}, set(), {4}])
    assert out["true_positives"] == 1 and out["predicted"] == 3 and out["gold"] == 2
    assert out["precision"] == pytest.approx(1 / 3) and out["recall"] == 0.5
    assert out["f1"] == pytest.approx(0.4) and out["exact_set_rate"] == pytest.approx(1 / 3)


def test_rule_parser_scores_tiny_csv(tmp_path):
    items = ev.read_factual(_write(tmp_path, CSV))
    assert len(items) == 4
    result = ev.evaluate_factual(parsers.load("rule"), items, max_errors=5)
    assert result["captions"] == 4 and result["gold_triples"] == 3
    assert result["f1"] == 1.0 and result["exact_set_rate"] == 1.0
    assert result["errors"] == []
    att = result["attributes"]
    assert att["gold"] == 2 and att["true_positives"] == 2 and att["f1"] == 1.0
    assert result["sentences_per_second"] > 0


def test_mistakes_are_listed_with_their_line(tmp_path):
    path = _write(tmp_path, CSV + '5,5,a cat under a bed,"( cat , on , bed )"\n')
    result = ev.evaluate_factual(parsers.load("rule"), ev.read_factual(path), max_errors=3)
    assert result["errors"] == [{"source": f"{path}:6", "text": "a cat under a bed",
                                 "gold": [["cat", "on", "bed"]],
                                 "predicted": [["cat", "under", "bed"]]}]
    assert result["precision"] == pytest.approx(3 / 4)


def test_parse_eval_format_factual_table_and_json(tmp_path, capsys):
    path = _write(tmp_path, CSV)
    assert run(["parse-eval", "--format", "factual", str(path)]) == 0
    out = capsys.readouterr().out
    rows = {line[:33].strip(): line[33:].strip() for line in out.splitlines()}
    assert rows["triple F1"] == "100.00%" and rows["captions"] == "4"
    assert rows["missed: unrelated"] == "0" and rows["wrong: pair not related"] == "0"
    assert "attribute F1" in rows
    assert run(["parse-eval", "--format", "factual", str(path), "--json", "--limit", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "factual" and report["captions"] == 2
    assert report["gold_triples"] == 2 and report["f1"] == 1.0
    assert report["missed"] == dict.fromkeys(ev.MISSED_KINDS, 0)


def test_each_missed_and_wrong_triple_is_told_why():
    from parsers.scene import SceneEntity, SceneGraph

    graph = SceneGraph("", ["x"], [SceneEntity(h, [], h, [(0, 1)])
                                for h in ("man", "hors", "field", "hat")], [])
    gold = {("man", "rid", "hors"), ("hors", "in", "field"), ("man", "wear", "hat"),
            ("field", "hav", "fenc"), ("man", "on", "field")}
    predicted = {("man", "on", "hors"), ("field", "in", "hors"), ("man", "on", "field"),
                 ("hat", "on", "hors")}
    assert ev.triple_errors(graph, gold, predicted) == {
        "missed: other relation": 1,     # man - horse related by `on`
        "missed: reversed": 1,           # field - horse, the other way round
        "missed: unrelated": 1,          # man and hat: both entities, not related
        "missed: entity missing": 1,     # no fence
        "wrong: pair related otherwise": 2, "wrong: pair not related": 1}
    # a rejected caption: every gold triple misses its entities
    assert ev.triple_errors(None, gold, set()) == {"missed: entity missing": 5}


def test_parse_eval_format_factual_errors(tmp_path, capsys):
    assert run(["parse-eval", "--format", "factual"]) == 2
    assert "needs the scene-graph CSV" in capsys.readouterr().err
    bad = _write(tmp_path, 'caption,scene_graph\nA dog,"( dog , chases )"\n', "bad.csv")
    assert run(["parse-eval", "--format", "factual", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and len(err.strip().splitlines()) == 1
    assert run(["parse-eval", "--format", "factual", str(bad), "--benchmark", "vsr"]) == 2
    assert "--benchmark is for template captions" in capsys.readouterr().err
    assert run(["parse-eval", str(bad)]) == 2
    assert "FILE is for --format factual" in capsys.readouterr().err
    assert run(["parse-eval"]) == 2
    assert "need --benchmark" in capsys.readouterr().err


def test_script_wraps_the_factual_scorer(tmp_path, capsys):
    path = _write(tmp_path, CSV)
    assert esg.main([str(path), "--parser", "rule"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["f1"] == 1.0 and printed["sentences_per_second"] > 0
    assert esg.main([str(_write(tmp_path, "a,b\n1,2\n", "bad.csv"))]) == 2
    assert "bad.csv:1: needs the columns" in capsys.readouterr().err


def test_parser_options_reach_the_backend(tmp_path, capsys):
    path = _write(tmp_path, CSV)
    assert esg.main([str(path), "--parser", "rule", "--option", "colour=red"]) == 2
    assert "does not accept the options ['colour']" in capsys.readouterr().err
    assert esg.main([str(path), "--option", "model"]) == 2
    err = capsys.readouterr().err
    assert "'model'" in err and "KEY=VALUE" in err
