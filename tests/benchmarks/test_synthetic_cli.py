"""``rcrn synthetic generate`` and ``rcrn synthetic stats``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.synthetic import SyntheticBenchmark
from rcrn.cli import main


def test_generate_writes_images_annotations_and_manifest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "syn"
    args = ["synthetic", "generate", "--out", str(out), "--scenes", "6", "--seed", "2",
            "--size", "96", "--per-scene", "2", "--max-words", "12", "--quiet"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "wrote 6 scenes" in printed and "pairs/s" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 2 and manifest["image_size"] == [96, 96]
    assert manifest["thresholds"] == {"max_words": 12, "max_relations": 2}
    assert manifest["config"]["per_scene"] == 2
    assert len(list((out / "images").glob("*.png"))) == 6
    assert len((out / "scenes.jsonl").read_text().splitlines()) == 6
    total = sum(len((out / "annotations" / f"{s}.jsonl").read_text().splitlines())
                for s in ("train", "val", "test"))
    assert total == manifest["totals"]["expressions"] > 0
    first = json.loads((out / "annotations" / "train.jsonl").read_text().splitlines()[0])
    for key in ("text", "graph", "match", "mismatched_relation", "target_box", "split",
                "words", "relations", "pair_words", "in_dist_words", "in_dist_rels"):
        assert key in first
    assert len(SyntheticBenchmark(out, "train")) > 0

    # an existing dataset is kept unless --overwrite
    assert main(args) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(args + ["--overwrite", "--seed", "3"]) == 0
    assert json.loads((out / "manifest.json").read_text())["seed"] == 3

    assert main(["synthetic", "stats", "--root", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "train:" in printed and "relations:" in printed and "max_words 12" in printed


def test_user_errors_exit_with_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["synthetic", "generate", "--out", str(tmp_path / "x"), "--size", "32",
                 "--quiet"]) == 2
    assert "image size must be at least 64" in capsys.readouterr().err
    assert main(["synthetic", "stats", "--root", str(tmp_path / "missing")]) == 2
    assert "no manifest" in capsys.readouterr().err
    assert main(["synthetic"]) == 1
