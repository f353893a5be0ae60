"""``rcrn trace`` on a small generated synthetic dataset and an untrained checkpoint."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from rcrn.errors import RcrnError


def _parser() -> argparse.ArgumentParser:
    from rcrn.cli.trace import register

    parser = argparse.ArgumentParser(prog="rcrn")
    register(parser.add_subparsers(dest="command"))
    return parser


def test_trace_command_writes_json_png_html_for_the_chosen_items(tmp_path: Path) -> None:
    pytest.importorskip("benchmarks.synthetic")
    from benchmarks.synthetic import SyntheticBenchmark
    from benchmarks.synthetic.benchmark import ensure_dataset
    from rcrn.batching import Vocab
    from rcrn.cli.commands import default_config_path
    from rcrn.engine.config import load_config
    from rcrn.engine.trainer import build_model, save_checkpoint
    from rcrn.trace import Trace

    root = ensure_dataset(tmp_path / "syn", scenes=4, seed=1, size=64, per_scene=2,
                          progress=False)
    config = load_config(default_config_path(), [
        f"data.root={root}", "model.word_dim=8", "model.lstm_hidden=8", "model.joint=16",
        "model.hidden=16", "model.sim_dim=8", "model.vis_dim=8", "model.spatial_dim=4",
        "model.pair_dim=8", "model.classify_hidden=8"])
    config["region_encoder"] = {"channels": [4, 4, 4], "pool_size": 2}
    split = next(s for s in ("test", "val", "train") if len(SyntheticBenchmark(root, s)))
    ids = [rec["id"] for rec in SyntheticBenchmark(root, split).records[:2]]
    vocab = Vocab(["the", "left", "of", "red", "blue", "circle", "square"])
    model = build_model(config, vocab)
    ckpt = tmp_path / "last.pt"
    save_checkpoint(ckpt, model, vocab, config)

    out = tmp_path / "traces"
    args = _parser().parse_args(["trace", "--checkpoint", str(ckpt), "--benchmark", "synthetic",
                                 "--split", split, "--items", ",".join(ids), "--out", str(out),
                                 "--no-png"])
    assert args.func(args) == 0
    written = sorted(p.name for p in out.iterdir())
    stems = [i.replace("/", "_") for i in ids]
    assert "traces.html" in written
    for stem, item in zip(stems, ids):
        trace = Trace.load(out / f"{stem}.json")
        assert trace.id == item
        assert trace.image_path and Path(trace.image_path).is_file()
        assert len(trace.boxes) >= 1 and trace.match_prob is not None
        page = (out / f"{stem}.html").read_text(encoding="utf-8")
        assert "data:image/png;base64," in page and "https://" not in page
    assert not any(name.endswith(".png") for name in written)

    # an unknown id is a user error naming it
    bad = _parser().parse_args(["trace", "--checkpoint", str(ckpt), "--split", split,
                                "--items", "nope", "--out", str(out)])
    with pytest.raises(RcrnError, match="'nope'"):
        bad.func(bad)
    missing = _parser().parse_args(["trace", "--checkpoint", str(tmp_path / "none.pt"),
                                    "--items", "x", "--out", str(out)])
    with pytest.raises(RcrnError, match="does not exist"):
        missing.func(missing)
    json.loads((out / f"{stems[0]}.json").read_text())
