"""scripts/relation_probe.py: its items say what their labels claim, and a short run reports."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

_PATH = Path(__file__).resolve().parents[3] / "scripts" / "relation_probe.py"
_spec = importlib.util.spec_from_file_location("relation_probe", _PATH)
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)


def _centres(item):
    boxes = item["boxes"]
    return (boxes[..., :2] + boxes[..., 2:]) / 2


@pytest.mark.parametrize("task", probe.TASKS)
def test_the_words_name_the_first_two_regions_and_the_label_is_their_geometry(task):
    stream = probe.Stream(task, objects=5, feature_dim=16, seed=3)
    item = stream.draw(400, torch.Generator().manual_seed(4))
    feats, tokens, label = item["feats"], item["tokens"], item["label"].bool()
    # each object word's class vector is the nearest to its region's features
    for word, region in ((0, 0), (2, 1)):
        own = feats[:, region] - stream.common
        distance = (own[:, None] - stream.classes[None]).norm(dim=-1)
        assert torch.equal(distance.argmin(dim=1), tokens[:, word] - 1)
    c = _centres(item)
    a, b = c[:, 0], c[:, 1]
    if task == "subject_x":
        assert torch.equal(label, a[:, 0] < 0.45)
    elif task == "left_of":
        assert torch.equal(label, a[:, 0] < b[:, 0])
    else:
        rel = tokens[:, 1] - (stream.objects + 1)
        holds = torch.stack([a[:, 0] < b[:, 0], a[:, 0] >= b[:, 0],
                             a[:, 1] < b[:, 1], a[:, 1] >= b[:, 1]], dim=1)
        stated = holds[torch.arange(len(rel)), rel]
        assert torch.equal(label, stated)
        assert 0.4 < label.float().mean() < 0.6        # negatives: the opposite relation
    assert 0.3 < label.float().mean() < 0.7


def test_a_short_run_prints_every_evaluation_and_a_summary(capsys):
    assert probe.main(["--task", "relation", "--steps", "4", "--eval-every", "2",
                       "--batch-size", "8", "--align", "1.0", "--locate", "0.5"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["step"] for r in rows[:-1]] == [2, 4]
    assert all(0 <= r["val_accuracy"] <= 1 and r["align_loss"] >= 0 and r["locate_loss"] >= 0
               for r in rows[:-1])
    summary = rows[-1]
    assert summary["task"] == "relation" and summary["steps"] == 4 and summary["align"] == 1.0
    assert summary["locate"] == 0.5 and summary["read"] == "cls"
    assert summary["best_val_accuracy"] == max(r["val_accuracy"] for r in rows[:-1])
    assert 0.5 <= summary["chance"] < 0.6


def test_the_referent_read_out_sees_the_first_named_region_only():
    """With ``read="referent"`` the match logit changes with A's region and, with no
    attention layers to mix the regions, not with a region that no word names."""
    torch.manual_seed(0)
    stream = probe.Stream("left_of", objects=4, feature_dim=8, seed=0)
    item = stream.draw(3, torch.Generator().manual_seed(1))
    model = probe.Probe(stream.vocab_size, 8, probe.VLConfig(16, 0, 2, 16, 0.0), "referent")
    logit = model(item)[0]
    changed = dict(item, feats=item["feats"].clone())
    changed["feats"][:, 3] += 1.0                          # an unnamed region
    assert torch.allclose(model(changed)[0], logit)
    changed["feats"][:, 0] += 1.0                          # A's region
    assert not torch.allclose(model(changed)[0], logit)


def test_the_relation_read_out_sees_the_relation_word_only():
    """With ``read="relation"`` and no attention layers the match logit changes with the
    relation word and not with the regions or the object words."""
    torch.manual_seed(0)
    stream = probe.Stream("relation", objects=4, feature_dim=8, seed=0)
    item = stream.draw(3, torch.Generator().manual_seed(1))
    model = probe.Probe(stream.vocab_size, 8, probe.VLConfig(16, 0, 2, 16, 0.0), "relation")
    logit = model(item)[0]
    changed = dict(item, feats=item["feats"] + 1.0, tokens=item["tokens"].clone())
    changed["tokens"][:, 0] = changed["tokens"][:, 2]      # A's word
    assert torch.allclose(model(changed)[0], logit)
    changed["tokens"][:, 1] = stream.vocab_size - 1 - (changed["tokens"][:, 1]
                                                       - stream.objects - 1)
    assert not torch.allclose(model(changed)[0], logit)


def test_the_mark_goes_on_the_first_named_region_and_the_head_reads_cls():
    """With ``read="marked"`` the mark changes A's input only: the logit equals that of the
    plain ``[CLS]`` read-out given A's features plus the mark."""
    torch.manual_seed(0)
    stream = probe.Stream("left_of", objects=4, feature_dim=8, seed=0)
    item = stream.draw(3, torch.Generator().manual_seed(1))
    config = probe.VLConfig(16, 1, 2, 16, 0.0)
    marked = probe.Probe(stream.vocab_size, 8, config, "marked")
    plain = probe.Probe(stream.vocab_size, 8, config, "cls")
    plain.load_state_dict({k: v for k, v in marked.state_dict().items() if k != "mark"})
    assert plain.mark is None and marked.mark.abs().sum() > 0
    by_hand = dict(item, feats=item["feats"].clone())
    by_hand["feats"][:, 0] += marked.mark.detach()
    assert torch.allclose(marked(item)[0], plain(by_hand)[0], atol=1e-6)
    assert not torch.allclose(marked(item)[0], plain(item)[0])


def test_the_locate_term_is_the_l1_distance_to_the_first_named_region():
    stream = probe.Stream("left_of", objects=4, feature_dim=8, seed=0)
    item = stream.draw(5, torch.Generator().manual_seed(1))
    a_box = item["boxes"][:, 0]
    assert probe.Probe.locate_loss(a_box, item).item() == 0
    moved = a_box + torch.tensor([0.1, 0.0, -0.2, 0.0])
    assert probe.Probe.locate_loss(moved, item).item() == pytest.approx(0.3)
    other = item["boxes"][:, 1]                   # B's box is not the target
    assert probe.Probe.locate_loss(other, item).item() > 0


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="unknown task"):
        probe.Stream("above", objects=4, feature_dim=8, seed=0)
    with pytest.raises(ValueError, match="at least 2"):
        probe.Stream("left_of", objects=1, feature_dim=8, seed=0)
    with pytest.raises(SystemExit):
        probe.main(["--steps", "0"])


@pytest.mark.parametrize("task", probe.TASKS)
def test_the_gap_is_how_far_the_label_is_from_flipping(task):
    """The gap is the distance, along the compared axis, from A's centre to B's (to
    x = 0.45 for subject_x)."""
    stream = probe.Stream(task, objects=4, feature_dim=8, seed=0)
    item = stream.draw(300, torch.Generator().manual_seed(2))
    c = _centres(item)
    rel = item["tokens"][:, 1] - (stream.objects + 1)
    axis = rel // 2 if task == "relation" else torch.zeros_like(rel)
    other = torch.full_like(c[:, 0, 0], 0.45) if task == "subject_x" \
        else c[torch.arange(len(rel)), 1, axis]
    own = c[torch.arange(len(rel)), 0, axis]
    assert torch.allclose(item["gap"], (own - other).abs(), atol=1e-6)
    assert (item["gap"] >= 0).all() and item["gap"].max() > 0.3


def test_the_summary_reports_accuracy_by_gap(capsys):
    assert probe.main(["--task", "left_of", "--steps", "2", "--eval-every", "2",
                       "--batch-size", "8"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    by_gap = summary["final_accuracy_by_gap"]
    assert list(by_gap) == [f"{lo}-{hi}" for lo, hi in probe.GAP_BINS]
    assert all(v is None or 0 <= v <= 1 for v in by_gap.values())
    assert any(v is not None for v in by_gap.values())
