"""The scene-graph triple evaluation script on a tiny CSV."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import parsers

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


def test_lemma_is_symmetric_for_inflections():
    assert esg.lemma("sitting") == esg.lemma("sit") == "sit"
    assert esg.lemma("wearing") == "wear"
    assert esg.lemma("riding") == esg.lemma("ride")
    assert esg.lemma("bushes") == "bush"
    assert esg.lemma("people") == esg.lemma("person")
    assert esg.relation_key("is sitting on") == esg.relation_key("sit on") == "sit on"
    assert esg.relation_key("is") == ""


def test_gold_triples_leave_attributes_out():
    gold = esg.gold_triples("( stove , is , white ) , ( stove , in , kitchen )")
    assert gold == {(esg.lemma("stove"), "in", "kitchen")}


def test_rule_parser_scores_tiny_csv(tmp_path, capsys):
    path = tmp_path / "sg.csv"
    path.write_text(CSV, encoding="utf-8")
    rows = esg.read_csv(path)
    assert len(rows) == 4
    result = esg.evaluate(parsers.load("rule"), rows, max_errors=5)
    assert result["captions"] == 4
    assert result["gold_triples"] == 3
    assert 0.0 <= result["precision"] <= 1.0 and 0.0 <= result["f1"] <= 1.0
    assert result["exact_set_rate"] == 1.0
    assert esg.main([str(path), "--parser", "rule"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["f1"] == 1.0 and printed["sentences_per_second"] > 0


def test_missing_columns_are_reported(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    assert esg.main([str(path)]) == 2


def test_parser_options_reach_the_backend(tmp_path, capsys):
    path = tmp_path / "sg.csv"
    path.write_text(CSV, encoding="utf-8")
    assert esg.main([str(path), "--parser", "rule", "--option", "colour=red"]) == 2
    assert "does not accept the options ['colour']" in capsys.readouterr().err
    assert esg.main([str(path), "--option", "model"]) == 2
    assert "'model' is not KEY=VALUE" in capsys.readouterr().err
