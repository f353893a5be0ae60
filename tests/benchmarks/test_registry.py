"""The benchmark registry, shared adapter helpers and the generic ``rcrn score`` paths."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import benchmarks
from benchmarks.base import Benchmark, DataError
from rcrn.cli import main
from rcrn.structures import Prediction, Proposals

CAPTIONS = [("The cat is on the bed.", "on", 1), ("The dog is under the car.", "under", 0)]


def vsr_root(tmp_path: Path) -> Path:
    split = tmp_path / "splits" / "random"
    split.mkdir(parents=True)
    (split / "test.jsonl").write_text("".join(
        json.dumps({"image": f"{i:012d}.jpg", "caption": c, "label": y, "relation": r,
                    "vote_true_validator_id": "[]", "vote_false_validator_id": "[]"}) + "\n"
        for i, (c, r, y) in enumerate(CAPTIONS)), encoding="utf-8")
    return tmp_path


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> dict:
    """The registry table, restored after the test."""
    table = dict(benchmarks._REGISTRY)
    monkeypatch.setattr(benchmarks, "_REGISTRY", table)
    return table


def test_available_names() -> None:
    names = benchmarks.available()
    assert {"synthetic", "vsr", "whatsup"} <= set(names) and names == sorted(names)
    assert {"vsr", "whatsup"} <= set(benchmarks.available(installed_only=True))


def test_load_gives_a_protocol_object(tmp_path: Path) -> None:
    bench = benchmarks.load("vsr", root=vsr_root(tmp_path), split="random/test")
    assert isinstance(bench, Benchmark)
    assert (bench.name, bench.split, len(bench)) == ("vsr", "random/test", 2)
    assert [it.label for it in bench.items] == [1, 0]
    default = benchmarks.load("vsr", root=tmp_path)  # the adapter's default split
    assert default.split == "random/test"


def test_unknown_and_missing_adapters(registry: dict) -> None:
    with pytest.raises(benchmarks.RegistryError, match="unknown benchmark 'nope'; available:"):
        benchmarks.load("nope", root=".")
    benchmarks.register("later", "benchmarks.not_written_yet:LaterBenchmark")
    assert "later" in benchmarks.available()
    assert "later" not in benchmarks.available(installed_only=True)
    with pytest.raises(benchmarks.RegistryError, match="benchmarks.not_written_yet is not part"):
        benchmarks.load("later", root=".")
    benchmarks.register("noclass", "benchmarks.vsr:NoSuchBenchmark")
    with pytest.raises(benchmarks.RegistryError, match="has no NoSuchBenchmark"):
        benchmarks.load("noclass", root=".")
    with pytest.raises(benchmarks.RegistryError, match="already registered"):
        benchmarks.register("vsr", "benchmarks.vsr:VSRBenchmark")
    with pytest.raises(benchmarks.RegistryError, match="not 'module:Class'"):
        benchmarks.register("bad", "benchmarks.vsr.VSRBenchmark")


def test_registered_module_is_imported_lazily(registry: dict, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lazy_bench_mod.py").write_text(
        "class LazyBench:\n"
        "    name = 'lazy'\n"
        "    def __init__(self, root, split='all', scale=1):\n"
        "        self.root, self.split, self.scale = root, split, scale\n"
        "    def __len__(self):\n        return 3\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    benchmarks.register("lazy", "lazy_bench_mod:LazyBench")
    assert "lazy_bench_mod" not in sys.modules
    bench = benchmarks.load("lazy", root="r", split="s", scale=2)
    assert (bench.split, bench.scale) == ("s", 2)
    monkeypatch.delitem(sys.modules, "lazy_bench_mod")


def test_register_a_class(registry: dict) -> None:
    class Tiny:
        name = "tiny"

        def __init__(self, root: str, split: str = "x") -> None:
            self.split = split

    benchmarks.register("tiny", Tiny)
    assert benchmarks.load("tiny", root=".").split == "x"
    benchmarks.register("tiny", Tiny, overwrite=True)


def test_get_proposals() -> None:
    props = Proposals(boxes=np.zeros((0, 4)), image_size=(4, 4), image_id="a.jpg")
    assert benchmarks.get_proposals({"a.jpg": props}, "a.jpg", "t") is props
    assert benchmarks.get_proposals(lambda name: props, "a.jpg", "t") is props
    with pytest.raises(benchmarks.ProposalSourceError, match="t: problems need region"):
        benchmarks.get_proposals(None, "a.jpg", "t")
    with pytest.raises(benchmarks.ProposalSourceError, match="returned list"):
        benchmarks.get_proposals(lambda name: [], "a.jpg", "t")
    with pytest.raises(benchmarks.ProposalSourceError, match="callable or a mapping"):
        benchmarks.get_proposals(3, "a.jpg", "t")  # type: ignore[arg-type]


def test_predictions_by_id() -> None:
    preds = [Prediction(id="b", match_prob=0.2), Prediction(id="a", match_prob=0.7)]
    assert [p.id for p in benchmarks.predictions_by_id(preds, ["a", "b"], "t")] == ["a", "b"]
    with pytest.raises(DataError, match="1 predictions name unknown problems"):
        benchmarks.predictions_by_id(preds, ["a"], "t")


def test_read_predictions_errors(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"id": "a", "match_prob": 0.3}\n\n{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"predictions\.jsonl line 3: not a prediction"):
        benchmarks.read_predictions(path)
    path.write_text('{"id": "a", "match_prob": 0.3}\n[1]\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"predictions\.jsonl line 2"):
        benchmarks.read_predictions(path)


def test_cli_scores_prediction_jsonl_of_any_model(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = vsr_root(tmp_path)
    bench = benchmarks.load("vsr", root=root, split="random/test")
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(Prediction(id=it.id, match_prob=0.8).to_dict()) + "\n"
                            for it in bench.items), encoding="utf-8")
    assert main(["score", "--benchmark", "vsr", "--root", str(root), "--split", "random/test",
                 "--predictions", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["benchmark"], out["split"], out["accuracy"]) == ("vsr", "random/test", 0.5)


def test_cli_list_and_option_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["benchmarks"]) == 0
    listing = capsys.readouterr().out
    assert "vsr" in listing and "whatsup" in listing
    root = vsr_root(tmp_path)
    preds = tmp_path / "preds.txt"
    preds.write_text("1\n0\n", encoding="utf-8")
    base = ["score", "--benchmark", "vsr", "--root", str(root), "--predictions", str(preds)]
    assert main(base + ["--option", "colour=red"]) == 2
    assert "--colour does not apply to benchmark 'vsr'" in capsys.readouterr().err
    assert main(base + ["--option", "novalue"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err
    assert main(["score", "--benchmark", "nope", "--root", ".", "--predictions", "x"]) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err
