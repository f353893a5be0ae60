"""``rcrn parse`` and ``rcrn parse-eval``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rcrn.cli import main as run
from rcrn.structures import LanguageGraph

SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "samples"


def test_parse_prints_a_table(capsys):
    assert run(["parse", "the cup to the left of the plate that is on the table"]) == 0
    out = capsys.readouterr().out
    assert "entities:" in out and "relations:" in out
    assert "0*  the cup" in out
    assert "to the left of" in out and "1 the plate" in out and "2 the table" in out
    assert "root: 0 (the cup)" in out


def test_parse_json_is_a_language_graph(capsys):
    assert run(["parse", "--json", "The cat is under the laptop."]) == 0
    doc = json.loads(capsys.readouterr().out)
    g = LanguageGraph.from_dict(doc)
    assert [r.text for r in g.relations] == ["under"]
    assert doc["warnings"] == []


def test_parse_json_several_texts(capsys):
    assert run(["parse", "--json", "a dog on a sofa", "the cat is under"]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert isinstance(docs, list) and len(docs) == 2
    assert docs[1]["warnings"]


def test_parse_errors_are_clear(capsys):
    assert run(["parse", "..."]) == 2
    assert "no word" in capsys.readouterr().err
    assert run(["parse", "--parser", "nope", "x"]) == 2
    assert "unknown parser 'nope'" in capsys.readouterr().err
    assert run(["parse"]) == 2
    assert run(["parse", "--option", "novalue", "x"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_list_parsers(capsys):
    assert run(["parse", "--list-parsers"]) == 0
    out = capsys.readouterr().out
    assert "rule" in out and "spacy" in out and "stanza" in out


def _vsr_fixture(tmp_path: Path) -> Path:
    folder = tmp_path / "vsr"
    folder.mkdir()
    recs = [{"caption": "The cat is under the table.", "relation": "under", "label": 1},
            {"caption": "The train contains the laptop.", "relation": "contains", "label": 0},
            {"caption": "The teddy bear is at the left side of the bed.",
             "relation": "at the left side of", "label": 1}]
    (folder / "dev.jsonl").write_text("\n".join(json.dumps({"image": f"{i:012d}.jpg", **r})
                                                for i, r in enumerate(recs)) + "\n")
    return folder


def test_parse_eval_vsr_table_and_json(tmp_path, capsys):
    root = _vsr_fixture(tmp_path)
    assert run(["parse-eval", "--benchmark", "vsr", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "exact triple accuracy  100.00%" in out
    assert "sentences              3" in out
    assert run(["parse-eval", "--benchmark", "vsr", "--root", str(root / "dev.jsonl"),
                "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sentences"] == 3
    assert report["triple_accuracy"] == 1.0
    assert report["sentences_per_second"] > 0


def test_parse_eval_whatsup(tmp_path, capsys):
    data = [{"image_path": "data/controlled_images/mug_on_table.jpeg",
             "caption_options": ["A mug on a table", "A mug under a table",
                                 "A mug to the left of a table", "A mug to the right of a table"]}]
    path = tmp_path / "controlled_images_dataset.json"
    path.write_text(json.dumps(data))
    assert run(["parse-eval", "--benchmark", "whatsup", "--root", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sentences"] == 4 and report["triple_accuracy"] == 1.0
    assert set(report["per_relation"]) == {"on", "under", "to the left of", "to the right of"}


def test_parse_eval_bad_input_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "broken.jsonl"
    record = {"image": "1.jpg", "label": 1, "caption": "The cat is under the table.",
              "relation": "under"}
    bad.write_text(json.dumps(record) + "\n{oops\n")
    assert run(["parse-eval", "--benchmark", "vsr", "--root", str(bad)]) == 2
    assert "broken.jsonl line 2: invalid JSON" in capsys.readouterr().err
    bad.write_text(json.dumps(dict(record, caption="A cat sits.")) + "\n")
    assert run(["parse-eval", "--benchmark", "vsr", "--root", str(bad)]) == 2
    assert "broken.jsonl line 1: caption 'A cat sits.' does not" in capsys.readouterr().err
    assert run(["parse-eval", "--benchmark", "vsr", "--root", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err
    wu = tmp_path / "controlled_images_w.json"
    wu.write_text(json.dumps([{"image_path": "mug_on_table.jpg",
                               "caption_options": ["Two mugs", "A mug under a table"]}]))
    assert run(["parse-eval", "--benchmark", "whatsup", "--root", str(wu)]) == 2
    assert "controlled_images_w.json#0.0: caption 'Two mugs'" in capsys.readouterr().err


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="shared samples not present")
def test_parse_eval_on_the_samples(capsys):
    assert run(["parse-eval", "--benchmark", "vsr", "--root", str(SAMPLES / "vsr"),
                "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sentences"] == 80 and report["triple_accuracy"] == 1.0


def test_through_the_rcrn_entry_point(capsys):
    from rcrn.cli import main

    assert main(["parse", "--json", "A mug behind a knife"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [e["text"] for e in doc["entities"]] == ["A mug", "a knife"]
