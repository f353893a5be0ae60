"""The training loop learns, checkpoints round-trip, configs resolve."""

import json

import numpy as np
import pytest
import torch

from rcrn.batching import Vocab
from rcrn.engine.config import ConfigError, apply_overrides, load_config
from rcrn.engine.trainer import Trainer, load_checkpoint, predict
from rcrn.testing import learnable_problems

CONFIG = {
    "seed": 0,
    "model": dict(word_dim=16, lstm_hidden=16, joint=32, hidden=32, sim_dim=16, vis_dim=16,
                  spatial_dim=4, pair_dim=16, classify_hidden=16, grounding_scale=5.0),
    "loss": {"mu": 3.0, "omega": 1.0},
    "train": {"steps": 300, "batch_size": 32, "lr": 0.003, "log_every": 50},
}


def grounding_accuracy(preds, problems):
    hits = [p.proposal == q.target_index for p, q in zip(preds, problems) if q.match == 1]
    return float(np.mean(hits))


def test_training_loss_falls_and_grounding_beats_chance(tmp_path):
    torch.set_num_threads(1)
    train = learnable_problems(400, seed=0)
    test = learnable_problems(200, seed=1)
    vocab = Vocab.build(train + test)
    trainer = Trainer(CONFIG, train, tmp_path, vocab=vocab)
    before = grounding_accuracy(predict(trainer.model, test, vocab), test)
    trainer.fit(progress=False)
    logs = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in logs if "loss" in r]
    assert losses[-1] < 0.6 * losses[0], losses
    preds = predict(trainer.model, test, vocab)
    after = grounding_accuracy(preds, test)
    chance = 1 / 8
    assert after > 0.6 and after > before + 0.3, (before, after)
    assert after > 4 * chance
    match_acc = np.mean([(p.match_prob >= 0.5) == q.match for p, q in zip(preds, test)])
    assert match_acc > 0.7, match_acc

    # the checkpoint restores the same model
    model, vocab2, config, state = load_checkpoint(tmp_path / "last.pt")
    assert state["step"] == 300 and config["model"]["joint"] == 32
    again = predict(model, test[:20], vocab2)
    assert [p.proposal for p in again] == [p.proposal for p in preds[:20]]
    assert np.allclose([p.match_prob for p in again], [p.match_prob for p in preds[:20]],
                       atol=1e-6)
    assert (tmp_path / "config.yaml").exists()


def test_resume_continues_from_the_last_step(tmp_path):
    torch.set_num_threads(1)
    train = learnable_problems(64, seed=3)
    cfg = apply_overrides(CONFIG, ["train.steps=4", "train.log_every=2"])
    Trainer(cfg, train, tmp_path).fit(progress=False)
    trainer = Trainer(apply_overrides(cfg, ["train.steps=6"]), train, tmp_path)
    assert trainer.resume() and trainer.step == 4
    trainer.fit(progress=False)
    steps = [json.loads(x)["step"] for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert steps == [2, 4, 6]


def test_cosine_learning_rate_decays_to_zero_and_resumes(tmp_path):
    from rcrn.engine.schema import section
    from rcrn.engine.trainer import learning_rate

    def train(**given):
        return section({"train": given}, "train")

    at = learning_rate(train(lr=0.01, steps=100, lr_decay="cosine"))
    assert at(0) == 0.01 and abs(at(50) - 0.005) < 1e-12 and at(100) < 1e-12
    assert learning_rate(train(lr=0.01, steps=100))(99) == 0.01
    torch.set_num_threads(1)
    train = learnable_problems(64, seed=3)
    cfg = apply_overrides(CONFIG, ["train.steps=4", "train.log_every=2",
                                   "train.lr_decay=cosine"])
    trainer = Trainer(cfg, train, tmp_path)
    trainer.fit(progress=False)
    # the last update (step index 3 of 4) used lr * (1 + cos(3 pi / 4)) / 2
    want = 0.003 * 0.5 * (1 + np.cos(3 * np.pi / 4))
    assert np.isclose(trainer.optimizer.param_groups[0]["lr"], want)
    longer = Trainer(apply_overrides(cfg, ["train.steps=8"]), train, tmp_path)
    assert longer.resume()
    longer.fit(progress=False)
    assert np.isclose(longer.optimizer.param_groups[0]["lr"],
                      0.003 * 0.5 * (1 + np.cos(7 * np.pi / 8)))
    with pytest.raises(ValueError, match="lr_decay"):
        Trainer(apply_overrides(cfg, ["train.lr_decay=linear"]), train, tmp_path)


def test_config_base_and_overrides(tmp_path):
    (tmp_path / "base.yaml").write_text("train: {steps: 10, lr: 0.1}\nmodel: {k: 5}\n")
    (tmp_path / "top.yaml").write_text("_base_: base.yaml\ntrain: {steps: 20}\n")
    cfg = load_config(tmp_path / "top.yaml", ["model.k=3", "train.new=[1, 2]"])
    assert cfg["train"] == {"steps": 20, "lr": 0.1, "new": [1, 2]} and cfg["model"]["k"] == 3
    with pytest.raises(ConfigError, match="key=value"):
        apply_overrides(cfg, ["oops"])
    (tmp_path / "bad.yaml").write_text("train: [unclosed\n")
    with pytest.raises(ConfigError, match="bad.yaml"):
        load_config(tmp_path / "bad.yaml")


def test_glove_word_vectors_are_read_for_the_vocabulary(tmp_path):
    from rcrn.engine.trainer import Trainer as T

    words = ["<pad>", "the", "cup", "plate", "left"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    matrix = np.arange(len(words) * 6, dtype=np.float32).reshape(len(words), 6)
    np.save(tmp_path / "embed.npy", matrix)
    train = learnable_problems(16, seed=5)
    cfg = apply_overrides(CONFIG, ["train.steps=2", "words.freeze=true"])
    cfg["words"]["glove"] = [str(tmp_path / "vocab.txt"), str(tmp_path / "embed.npy")]
    trainer = T(cfg, train, tmp_path / "run")
    emb = trainer.model.words.embedding.weight
    assert emb.shape[1] == 6 and not emb.requires_grad
    assert torch.equal(emb[trainer.vocab.stoi["cup"]], torch.from_numpy(matrix[2]))
    assert torch.equal(emb[0], torch.zeros(6))
    trainer.fit(progress=False)
    model, vocab, _, _ = load_checkpoint(tmp_path / "run" / "last.pt")
    assert torch.equal(model.words.embedding.weight[vocab.stoi["plate"]],
                       torch.from_numpy(matrix[3]))
    bad = tmp_path / "short.npy"
    np.save(bad, matrix[:3])
    cfg["words"]["glove"] = [str(tmp_path / "vocab.txt"), str(bad)]
    with pytest.raises(ValueError, match="does not match"):
        T(cfg, train, tmp_path / "run2")


def test_transformer_word_vectors_name_the_missing_package(tmp_path):
    from rcrn.encoders import transformer_word_vectors

    # a folder without a model is named, whether or not transformers is installed
    with pytest.raises(FileNotFoundError, match="config.json"):
        transformer_word_vectors(tmp_path, Vocab(["cup"]))
    try:
        import transformers  # noqa: F401
    except ImportError:
        (tmp_path / "config.json").write_text("{}", encoding="utf-8")
        with pytest.raises(ImportError, match=r"rcrn\[transformers\]"):
            transformer_word_vectors(tmp_path, Vocab(["cup"]))


def test_bench_propagation_reports_every_figure():
    from rcrn.cli.bench import bench_propagation

    rows = list(bench_propagation(dims=["synthetic"], batches=[2], proposals=[5], nodes=[3],
                                  min_time=0.0))
    assert rows[0]["matmul_2048_flops_per_s"] > 0
    row = rows[1]
    for key in ("batched_samples_per_s", "reference_samples_per_s", "unfused_samples_per_s",
                "flops_per_step", "achieved_flops_per_s", "speedup_vs_reference"):
        assert row[key] > 0, key
    assert (row["batch"], row["proposals"], row["nodes"]) == (2, 5, 3)


def test_bad_model_settings_are_config_errors(tmp_path):
    from rcrn.cli import main

    train = learnable_problems(8, seed=2)
    with pytest.raises(ConfigError, match="unknown setting"):
        Trainer(apply_overrides(CONFIG, ["model.jointt=3"]), train, tmp_path)
    with pytest.raises(ConfigError, match=r"region_encoder\.max_pol: unknown key"):
        Trainer(apply_overrides(CONFIG, ["region_encoder.max_pol=true"]), train, tmp_path)
    with pytest.raises(ConfigError, match="model.program"):
        Trainer(apply_overrides(CONFIG, ["model.program=(outputs (match (local)))"]), train,
                tmp_path)
    assert main(["train", "--config", str(tmp_path / "missing.yaml")]) == 2


def test_synthetic_data_settings_reach_the_generator(tmp_path):
    from benchmarks.synthetic.benchmark import load_manifest
    from rcrn.cli.commands import synthetic_benchmark

    config = {"seed": 2, "data": {"root": str(tmp_path / "syn"), "scenes": 5, "per_scene": 1}}
    bench = synthetic_benchmark(config, "train", progress=False)
    made = load_manifest(tmp_path / "syn")["config"]
    assert (made["scenes"], made["per_scene"], made["seed"]) == (5, 1, 2)
    assert len(bench) > 0


def test_match_warmup_trains_grounding_alone_first(tmp_path):
    torch.set_num_threads(1)
    train = learnable_problems(32, seed=4)
    cfg = apply_overrides(CONFIG, ["train.steps=4", "train.log_every=1", "train.match_warmup=2",
                                   "train.batch_size=16"])
    trainer = Trainer(cfg, train, tmp_path)
    trainer.fit(progress=False)
    logs = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    for r in logs:
        mu = 0.0 if r["step"] <= 2 else 3.0
        assert r["match"] > 0
        assert r["loss"] == pytest.approx(r["grd"] + mu * r["match"] + r["reg"], rel=1e-5)
    assert trainer.loss_cfg.mu == 3.0


@pytest.mark.parametrize("scale, norm", [(5.0, "none"), (10.0, "max"), ("learned", "none")])
def test_the_loss_reads_the_models_grounding_logits(scale, norm):
    """The model's readout makes the grounding logits (scale times the root belief,
    divided by its largest first with ``grounding_norm: max``); the loss reads only
    them, so RCRN and the cross-encoder share one path."""
    import torch.nn.functional as F

    from rcrn.batching import collate
    from rcrn.engine.trainer import build_model
    from rcrn.losses import LossConfig, rcrn_loss

    torch.manual_seed(0)
    problems = learnable_problems(10, seed=3)
    vocab = Vocab.build(problems)
    model_cfg = dict(CONFIG["model"], grounding_scale=scale, grounding_norm=norm)
    model = build_model({"model": model_cfg}, vocab)
    batch = collate(problems, vocab)
    out = model(batch)
    belief = out.ground_belief
    if norm == "max":
        belief = belief / belief.amax(-1, keepdim=True)
    factor = model.ground_scale if scale == "learned" else scale
    torch.testing.assert_close(out.ground_logits, factor * belief)
    positive = batch.match == 1
    want = F.cross_entropy(out.ground_logits.masked_fill(~batch.box_mask, float("-inf"))[
        positive], batch.target_index[positive])
    torch.testing.assert_close(rcrn_loss(out, batch, LossConfig())["grd"], want)


@pytest.mark.parametrize("removed, loads", [({"relation_gaps": False}, True),
                                            ({"vl_layers": 0, "vl_dim": 64}, True),
                                            ({"relation_gaps": True}, False),
                                            ({"message_reduce": {"match_up": "mean"}}, False)])
def test_a_checkpoint_naming_a_removed_setting_loads_only_at_its_neutral_value(
        tmp_path, removed, loads):
    from rcrn.engine.trainer import CheckpointError, build_model, save_checkpoint

    problems = learnable_problems(4, seed=3)
    vocab = Vocab.build(problems)
    model = build_model(CONFIG, vocab)
    config = dict(CONFIG, model={**CONFIG["model"], **removed})
    save_checkpoint(tmp_path / "old.pt", model, vocab, config)
    if loads:
        again, _, _, _ = load_checkpoint(tmp_path / "old.pt")
        for k, v in model.state_dict().items():
            assert torch.equal(again.state_dict()[k], v), k
    else:
        with pytest.raises(CheckpointError, match="a setting this version removed|which this "
                                                  "version removed"):
            load_checkpoint(tmp_path / "old.pt")


def test_a_checkpoint_with_the_flat_vision_language_settings_loads_them_as_model_vl(tmp_path):
    from rcrn.engine.trainer import build_model, save_checkpoint

    problems = learnable_problems(4, seed=3)
    vocab = Vocab.build(problems)
    vl = {"layers": 1, "dim": 16, "heads": 2, "ff": 32, "dropout": 0.0}
    model = build_model(dict(CONFIG, model={**CONFIG["model"], "vl": vl}), vocab)
    old = {**CONFIG["model"], **{f"vl_{k}": v for k, v in vl.items()}}
    save_checkpoint(tmp_path / "old.pt", model, vocab, dict(CONFIG, model=old))
    again, _, _, _ = load_checkpoint(tmp_path / "old.pt")
    assert again.config.vl == vl and again.vl is not None
    for k, v in model.state_dict().items():
        assert torch.equal(again.state_dict()[k], v), k
