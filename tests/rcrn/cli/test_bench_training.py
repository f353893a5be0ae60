"""Training-speed and data-pipeline benchmarks, and the store-backed dataset."""

import dataclasses
import json
import pickle

import numpy as np
import pytest
import torch

from detectors.dataset import StoreProblemDataset
from detectors.store import StoreWriter
from rcrn.batching import Vocab, collate
from rcrn.cli import main
from rcrn.cli.bench import (
    PeakMemory,
    bench_pipeline,
    bench_training,
    pipeline_markdown,
    training_markdown,
)
from rcrn.engine.trainer import make_loader
from rcrn.structures import GroundingProblem, Proposals
from rcrn.testing import random_problem

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
TIMING = {"batch", "proposals", "nodes", "dims", "device", "amp", "samples_per_s", "step_ms",
          "step_ms_mean", "steps_timed", "peak_memory_mb", "base_memory_mb", "peak_extra_mb",
          "memory_measure", "params", "loss", "threads"}
TINY = dict(dims=["synthetic"], batches=[2], proposals=[6], nodes=[2, 3], min_time=0.0,
            max_iters=1)


@pytest.mark.parametrize("device", DEVICES)
def test_training_rows_have_the_fields(device):
    peak, *rows = list(bench_training(device=device, **TINY))
    assert peak["matmul_2048_flops_per_s"] > 0 and peak["device"] == device
    assert [(r["batch"], r["proposals"], r["nodes"]) for r in rows] == [(2, 6, 2), (2, 6, 3)]
    for r in rows:
        assert "error" not in r, r
        assert TIMING <= set(r)
        assert r["flops_per_step"] > 0
        assert r["fraction_of_matmul_peak"] == pytest.approx(
            r["flops_per_step"] / (r["step_ms"] / 1000) / peak["matmul_2048_flops_per_s"])
        assert r["samples_per_s"] > 0 and r["steps_timed"] == 1
        assert np.isfinite(r["loss"])
        assert r["peak_memory_mb"] >= r["base_memory_mb"] > 0
        assert r["memory_measure"] == ("cuda_max_memory_allocated" if device == "cuda"
                                       else "cpu_process_rss_peak")
    md = training_markdown(rows)
    assert "| batch | proposals | 2 nodes | 3 nodes |" in md
    assert f"| 2 | 6 | {rows[0]['samples_per_s']:,.1f} |" in md
    assert "peak extra memory" in md


def test_bf16_autocast_row():
    rows = list(bench_training(amp="bf16", **dict(TINY, nodes=[3])))[1:]
    assert len(rows) == 1 and "error" not in rows[0], rows[0]
    assert rows[0]["amp"] == "bf16" and rows[0]["samples_per_s"] > 0
    assert "LSTM" in rows[0].get("notes", "")


def test_unknown_settings_are_refused():
    with pytest.raises(ValueError, match="dimension set"):
        list(bench_training(dims=["huge"]))
    with pytest.raises(ValueError, match="amp"):
        list(bench_training(amp="int4", **TINY))
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="cuda"):
            list(bench_training(device="cpu,cuda", **TINY))


def test_cli_writes_rows_and_markdown(tmp_path, capsys):
    md = tmp_path / "out" / "training.md"
    assert main(["bench", "training", "--quick", "--batch", "2", "--proposals", "5",
                 "--nodes", "2", "--min-time", "0", "--max-iters", "1",
                 "--markdown", str(md)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()][1:]
    assert len(rows) == 1 and rows[0]["batch"] == 2 and rows[0]["proposals"] == 5
    assert md.exists() and "# Training speed" in md.read_text()
    assert main(["bench", "training", "--dims", "nope"]) == 2


def test_peak_memory_sees_an_allocation():
    with PeakMemory("cpu") as mem:
        block = np.ones(64 * 2 ** 20 // 8)  # 64 MiB, touched
        del block
    res = mem.result()
    assert res["memory_measure"] == "cpu_process_rss_peak"
    assert res["peak_extra_mb"] >= 60


# ------------------------------------------------------------ store dataset
def _problems(count=5, dim=7, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        p = random_problem(rng, int(rng.integers(1, 5)), int(rng.integers(1, 9)), dim,
                           item_id=f"q{i}")
        p.proposals.image_id = f"im{i}"
        p.proposals.scores = rng.uniform(size=len(p.proposals)).astype(np.float32)
        out.append(p)
    return out


def _store(path, problems, float16=False, extra=2):
    writer = StoreWriter(path, float16=float16)
    rng = np.random.default_rng(9)
    for k in range(extra):  # images no problem refers to, to shift the offsets
        writer.add(Proposals(rng.uniform(0, 5, (3, 4)).cumsum(1), (50, 50),
                             scores=np.zeros(3), features=rng.normal(size=(3, 7)),
                             image_id=f"other{k}"))
    for p in reversed(problems):
        writer.add(p.proposals)
    writer.close()
    return path


def assert_batches_equal(a, b):
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, torch.Tensor):
            assert torch.equal(x, y), f.name
        elif isinstance(x, list) and x and isinstance(x[0], torch.Tensor):
            assert len(x) == len(y) and all(torch.equal(u, v) for u, v in zip(x, y)), f.name
        else:
            assert x == y, f.name


def test_store_dataset_reads_the_right_proposals(tmp_path):
    problems = _problems()
    store = _store(tmp_path / "store", problems)
    data = StoreProblemDataset.from_problems(store, problems)
    assert len(data) == len(problems)
    for p, q in zip(problems, data):
        assert q.id == p.id and q.match == p.match and q.graph is p.graph
        assert q.proposals.image_id == p.proposals.image_id
        np.testing.assert_array_equal(q.proposals.boxes, p.proposals.boxes)
        np.testing.assert_array_equal(q.proposals.features, p.proposals.features)
        np.testing.assert_array_equal(q.proposals.scores, p.proposals.scores)
        assert q.target_index == p.target_index
    vocab = Vocab.build(problems)
    assert_batches_equal(collate(list(data), vocab), collate(problems, vocab))


def test_store_dataset_in_workers_collates_like_memory(tmp_path):
    problems = _problems(count=6)
    store = _store(tmp_path / "store", problems)
    vocab = Vocab.build(problems)
    # graphs grounded in other images than their own: image ids are per item
    order = [3, 0, 5, 1, 4, 2]
    data = StoreProblemDataset.from_graphs(
        store, [p.graph for p in problems], [f"im{j}" for j in order],
        ids=[p.id for p in problems], matches=[p.match for p in problems])
    want = [GroundingProblem(p.graph, problems[j].proposals, match=p.match, id=p.id)
            for p, j in zip(problems, order)]
    clone = pickle.loads(pickle.dumps(data))
    assert clone._store is None and clone[2].proposals.image_id == "im5"
    loader = make_loader(data, vocab, batch_size=4, shuffle=False, num_workers=1)
    got = list(loader)
    assert [b.num_graphs for b in got] == [4, 2]
    assert_batches_equal(got[0], collate(want[:4], vocab))
    assert_batches_equal(got[1], collate(want[4:], vocab))


def test_float16_store_and_missing_images(tmp_path):
    problems = _problems(count=3)
    store = _store(tmp_path / "store16", problems, float16=True)
    data = StoreProblemDataset.from_problems(store, problems)
    for p, q in zip(problems, data):
        assert q.proposals.features.dtype == np.float32
        np.testing.assert_array_equal(q.proposals.features,
                                      p.proposals.features.astype(np.float16))
    kept = StoreProblemDataset.from_problems(store, problems, dtype=None)
    assert kept[0].proposals.features.dtype == np.float16
    with pytest.raises(KeyError, match="absent"):
        StoreProblemDataset.from_graphs(store, [problems[0].graph], ["nope"])
    with pytest.raises(ValueError, match="entries"):
        StoreProblemDataset.from_graphs(store, [problems[0].graph], ["im0", "im1"])


def test_pipeline_benchmark_compares_with_the_step(tmp_path):
    rows = list(bench_pipeline(quick=True, tmp_dir=tmp_path))
    kinds = [r["bench"] for r in rows]
    assert kinds == ["pipeline", "pipeline", "step", "pipeline_vs_step"]
    assert [r["workers"] for r in rows[:2]] == [0, 1]
    assert rows[0]["read_ms"] >= 0 and rows[0]["collate_ms"] > 0
    assert all(r["ms_per_batch"] > 0 for r in rows[:2])
    cmp = rows[-1]
    assert cmp["step_ms"] == rows[2]["step_ms"] > 0
    for w in (0, 1):
        assert cmp[f"step_over_pipeline_{w}_workers"] == pytest.approx(
            cmp["step_ms"] / cmp[f"pipeline_ms_{w}_workers"], rel=0.01)
    md = pipeline_markdown(rows)
    assert "read+collate ms/batch" in md and "| synthetic | 64 (float16) |" in md
    assert not list(tmp_path.iterdir())  # the temporary store is removed
