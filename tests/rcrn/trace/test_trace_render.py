"""Trace JSON, PNG and HTML outputs."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from rcrn.batching import Vocab
from rcrn.models import RCRN, RCRNConfig
from rcrn.testing import random_problem
from rcrn.trace import Trace, render_html, render_png, trace_problems, write_trace

SMALL = dict(word_dim=8, lstm_hidden=6, joint=12, hidden=10, sim_dim=7, vis_dim=9,
             spatial_dim=4, pair_dim=6, classify_hidden=5)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Trace], Path]:
    folder = tmp_path_factory.mktemp("img")
    rng = np.random.default_rng(0)
    problems = [random_problem(rng, nodes, 12, SMALL["vis_dim"], item_id=f"item/{i}",
                               shape="mixed", image_size=(160, 120))
                for i, nodes in enumerate([4, 1, 3])]
    # the first item has a real image: a solid blue picture
    image = folder / "scene.png"
    Image.new("RGB", (160, 120), (20, 40, 220)).save(image)
    problems[0].meta["image_path"] = str(image)
    problems[1].meta["image_path"] = str(folder / "missing.png")  # falls back to a canvas
    torch.manual_seed(0)
    vocab = Vocab.build(problems)
    model = RCRN(RCRNConfig(**SMALL), len(vocab))
    return trace_problems(model, vocab, problems), folder


def test_json_round_trip_is_exact(traced: tuple[list[Trace], Path], tmp_path: Path) -> None:
    traces, _ = traced
    for t in traces:
        path = t.save(tmp_path / "t.json")
        back = Trace.load(path)
        assert back == t
        assert back.to_dict() == t.to_dict()
        assert json.loads(path.read_text())["format"] == 1
    assert traces[0].image_path and traces[0].image_path.endswith("scene.png")
    with pytest.raises(ValueError, match="format"):
        Trace.from_dict(dict(traces[0].to_dict(), format=99))
    with pytest.raises(KeyError, match="no belief stage"):
        traces[0].belief("sideways")


def test_png_is_a_valid_picture_with_the_image(traced: tuple[list[Trace], Path],
                                               tmp_path: Path) -> None:
    traces, _ = traced
    for t in traces[:2]:                         # a real image, then a blank canvas
        path = render_png(t, tmp_path / f"{t.num_nodes}.png")
        data = path.read_bytes()
        assert data[:8] == PNG_MAGIC
        assert 10_000 < len(data) < 3_000_000
        with Image.open(path) as im:
            im.verify()
        with Image.open(path) as im:
            w, h = im.size
            pixels = np.asarray(im.convert("RGB")).astype(int)
        assert w >= 600 and h >= 400
        # the blue scene is drawn in every stage cell; the canvas items show no blue
        blue = ((pixels[..., 2] > 180) & (pixels[..., 0] < 60)).mean()
        assert (blue > 0.05) == (t.id == "item/0")
        # a tall graph gets one row per phrase
        assert h > 300 * min(t.num_nodes, 8) * 0.6


def _embedded(page: str) -> list[dict]:
    match = re.search(r'<script type="application/json" id="trace-data">(.*?)</script>', page,
                      re.S)
    assert match
    return json.loads(match.group(1))


def test_html_is_one_offline_file_with_data_and_stage_control(
        traced: tuple[list[Trace], Path], tmp_path: Path) -> None:
    traces, _ = traced
    path = render_html(traces[0], tmp_path / "one.html")
    page = path.read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page
    assert "<link" not in page and "src=" not in page          # nothing loaded from outside
    assert 'id="stage" type="range"' in page and 'id="next"' in page
    (data,) = _embedded(page)
    assert data["id"] == "item/0"
    labels = [s["label"] for s in data["stages"]]
    assert labels == ["local", "bottom-up (ground_up)", "bottom-up (match_up)",
                      "top-down (match_down)"]
    # the image is inline PNG data of the picture itself
    uri = data["image"]
    assert uri.startswith("data:image/png;base64,")
    raw = base64.b64decode(uri.split(",", 1)[1])
    with Image.open(io.BytesIO(raw)) as im:
        assert im.size == (160, 120)
        assert im.convert("RGB").getpixel((5, 5)) == (20, 40, 220)
    # the numbers: top-5 per phrase and stage, confidences, Compare scores
    t = traces[0]
    for s, stage in zip(data["stages"], t.stages()):
        assert s["top"][t.root] == [list(x) for x in stage.top(t.root, 5)]
    assert data["edge_scores"] == t.edge_scores
    assert data["stages"][2]["conf"] == t.confidence("up").values
    assert data["stages"][3]["conf"] == t.confidence("down").values

    batch = render_html(traces, tmp_path / "all.html").read_text(encoding="utf-8")
    assert [d["id"] for d in _embedded(batch)] == [t.id for t in traces]
    assert 'id="item"' in batch and "https://" not in batch


_HARNESS = r"""
const fs = require("fs");
const html = fs.readFileSync(process.argv[2], "utf8");
const data = html.match(/<script type="application\/json" id="trace-data">([\s\S]*?)<\/script>/)[1];
const script = html.match(/<script>([\s\S]*?)<\/script>/)[1];
const els = {}, doc = {};
function el(id) {
  if (!els[id]) els[id] = { innerHTML: "", textContent: id === "trace-data" ? data : "",
    value: "0", max: "0", style: {}, attrs: {}, on: {},
    setAttribute(k, v) { this.attrs[k] = v; }, getAttribute(k) { return this.attrs[k]; },
    addEventListener(t, f) { (this.on[t] = this.on[t] || []).push(f); } };
  return els[id];
}
global.document = { getElementById: el, querySelectorAll: () => [],
  addEventListener(t, f) { (doc[t] = doc[t] || []).push(f); } };
eval(script);
const seen = [];
for (let i = 0; i < 5; i++) {
  seen.push({ stage: els.stagename.textContent,
              rects: (els.canvas.innerHTML.match(/<rect/g) || []).length,
              image: els.canvas.innerHTML.indexOf("data:image/png;base64,") >= 0,
              ellipses: (els.graph.innerHTML.match(/<ellipse/g) || []).length });
  els.next.on.click.forEach(f => f());
}
doc.keydown.forEach(f => f({ key: "ArrowLeft" }));
seen.push({ stage: els.stagename.textContent });
console.log(JSON.stringify(seen));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page script")
def test_html_script_steps_through_the_stages(traced: tuple[list[Trace], Path],
                                              tmp_path: Path) -> None:
    traces, _ = traced
    t = traces[0]
    page = render_html(t, tmp_path / "one.html")
    harness = tmp_path / "harness.js"
    harness.write_text(_HARNESS, encoding="utf-8")
    run = subprocess.run(["node", str(harness), str(page)], capture_output=True, text=True,
                         timeout=30)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    root = t.node_names()[t.root]
    assert [s["stage"] for s in seen[:4]] == [
        f"1/4: local \u2014 {root}", f"2/4: bottom-up (ground_up) \u2014 {root}",
        f"3/4: bottom-up (match_up) \u2014 {root}", f"4/4: top-down (match_down) \u2014 {root}"]
    assert seen[4]["stage"] == seen[3]["stage"]              # stops at the last stage
    assert seen[5]["stage"].startswith("3/4")                # the left arrow steps back
    for s in seen[:4]:
        assert s["image"] and s["ellipses"] == t.num_nodes
        assert s["rects"] >= min(5, t.num_proposals)         # the root's top-5 boxes


def test_write_trace_writes_json_png_html_per_item(traced: tuple[list[Trace], Path],
                                                   tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    problems = [random_problem(rng, 3, 7, SMALL["vis_dim"], item_id=f"a b/{i}")
                for i in range(2)]
    torch.manual_seed(1)
    vocab = Vocab.build(problems)
    model = RCRN(RCRNConfig(**SMALL), len(vocab))
    paths = write_trace(model, vocab, problems, tmp_path / "out")
    names = sorted(p.name for p in paths)
    assert names == ["a_b_0.html", "a_b_0.json", "a_b_0.png", "a_b_1.html", "a_b_1.json",
                     "a_b_1.png", "traces.html"]
    assert all(p.stat().st_size > 1000 for p in paths)
    assert Trace.load(tmp_path / "out" / "a_b_1.json").id == "a b/1"


def test_box_labels_name_the_proposal_and_sit_outside_their_box_and_each_other() -> None:
    from rcrn.trace.layout import box_labels

    def shared(a: list[float], b: list[float]) -> float:
        return (max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
                * max(0.0, min(a[3], b[3]) - max(a[1], b[1])))

    rng = np.random.default_rng(0)
    for _ in range(200):
        # five boxes of a 640 x 480 picture, away from its edges so there is room around them
        xy = rng.uniform([40, 40], [560, 400], size=(5, 2))
        wh = rng.uniform(10, 70, size=(5, 2))
        boxes = np.concatenate([xy, xy + wh], axis=1).tolist()
        pairs = [(int(p), float(v)) for p, v in zip(rng.permutation(5), rng.uniform(0, 1, 5))]
        labels = box_labels(boxes, pairs, (0, 0, 640, 480), font=12)
        assert [q["proposal"] for q in labels] == [p for p, _ in pairs]
        rects = [[q["x"], q["y"], q["x"] + q["w"], q["y"] + q["h"]] for q in labels]
        for (p, v), q, r in zip(pairs, labels, rects):
            assert q["text"] == f"{p}:{v:.2f}"
            assert 0 <= r[0] and r[2] <= 640 and 0 <= r[1] and r[3] <= 480
            assert shared(r, boxes[p]) == 0, (q, boxes[p])
        for i in range(5):
            for j in range(i + 1, 5):
                assert shared(rects[i], rects[j]) == 0, (labels[i], labels[j])
    # a box against the picture's top edge gets its label below it, not over it
    edge = box_labels([[10, 0, 60, 30]], [(0, 0.5)], (0, 0, 640, 480), font=12)[0]
    assert edge["y"] >= 30
