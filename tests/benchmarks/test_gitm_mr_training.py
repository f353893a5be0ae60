"""`rcrn train` / `rcrn evaluate` on a GITM-MR layout, checked against the synthetic adapter."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from PIL import Image

from benchmarks.gitm_mr import convert_synthetic
from benchmarks.gitm_mr.synthetic import simple_features
from benchmarks.synthetic import GeneratorConfig, SyntheticBenchmark, generate_dataset
from rcrn.batching import Vocab
from rcrn.cli import main
from rcrn.engine.trainer import Trainer, predict

SMALL = ["model.word_dim=16", "model.lstm_hidden=16", "model.joint=32", "model.hidden=32",
         "model.sim_dim=16", "model.spatial_dim=8", "model.pair_dim=16",
         "model.classify_hidden=16", "train.steps=40", "train.batch_size=16",
         "train.lr=0.003", "train.log_every=20", "train.eval_every=0"]


def with_features(bench: SyntheticBenchmark, dim: int) -> list:
    """The synthetic problems with the converter's region features on their boxes."""
    problems = list(bench.problems())
    for p in problems:
        with Image.open(p.meta["image_path"]) as img:
            pixels = np.asarray(img.convert("RGB"))
        p.proposals.features = simple_features(pixels, p.proposals.boxes,
                                               p.proposals.image_size, dim)
    return problems


def test_synthetic_in_the_gitm_layout_trains_and_scores_as_the_synthetic_adapter(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src, release = tmp_path / "synthetic", tmp_path / "gitm"
    generate_dataset(src, GeneratorConfig(scenes=12, seed=0, size=64, per_scene=3),
                     progress=False)
    convert_synthetic(src, release, feature_dim=16)
    threshold = SyntheticBenchmark(src, "test").threshold
    run = tmp_path / "run"
    assert main(["train", "--benchmark", "gitm-mr", "--root", str(release), "--out", str(run),
                 "data.train_subset=null", "data.eval_split=null",
                 f"data.threshold={threshold}", *SMALL]) == 0
    config = yaml.safe_load((run / "config.yaml").read_text())
    assert config["model"]["vis_dim"] == 16 and "region_encoder" not in config
    capsys.readouterr()
    assert main(["evaluate", "--checkpoint", str(run / "last.pt"), "--benchmark", "gitm_mr",
                 "--split", "test", "--json"]) == 0
    through_gitm = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (run / "eval_test" / "predictions.jsonl").exists()

    # the same data through the synthetic adapter, the same resolved config, seed and
    # vocabulary (the layout's parses list only phrase words, so a vocabulary built from
    # them lacks the connectives; the model reads phrase words only)
    train = with_features(SyntheticBenchmark(src, "train"), 16)
    state = torch.load(run / "last.pt", weights_only=True)
    trainer = Trainer(config, train, tmp_path / "direct", vocab=Vocab.from_list(state["vocab"]))
    trainer.fit()
    for name, value in trainer.model.state_dict().items():
        torch.testing.assert_close(value, state["model"][name], msg=name)
    test = SyntheticBenchmark(src, "test")
    preds = predict(trainer.model, with_features(test, 16), trainer.vocab)
    direct = test.evaluate(preds)
    assert direct["full"]["n"] > 0
    for part in ("full", "in_distribution", "out_of_distribution"):
        assert through_gitm[part] == pytest.approx(direct[part]), part


def test_gitm_training_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["train", "--benchmark", "gitm_mr", "--out", str(tmp_path / "r"),
                 "data.root=null"]) == 2
    assert "gitm_mr: no data root; set data.root (or --root)" in capsys.readouterr().err
    assert main(["train", "--benchmark", "gitm_mr", "--root", str(tmp_path), "--out",
                 str(tmp_path / "r")]) == 2
    assert "gitm_mr train" in capsys.readouterr().err
