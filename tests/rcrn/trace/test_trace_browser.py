"""The trace HTML page in a real browser: headless Chromium draws it and the stage control works.

The page chooses its stage from the address (``page.html#stage=2``, counted from 1), through
the same code the step control uses, so a plain ``chromium --screenshot`` call can capture any
stage without a browser driver.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from rcrn.batching import Vocab
from rcrn.models import RCRN, RCRNConfig
from rcrn.testing import random_problem
from rcrn.trace import Trace, render_html, trace_problems

SMALL = dict(word_dim=8, lstm_hidden=6, joint=12, hidden=10, sim_dim=7, vis_dim=9,
             spatial_dim=4, pair_dim=6, classify_hidden=5)
WINDOW = (1200, 900)
SCENE = (20, 40, 220)                    # the solid colour of the traced picture
TIMEOUT = 60
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--mute-audio"]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("RCRN_REQUIRE_CHROMIUM"):
            pytest.fail("chromium not found, and RCRN_REQUIRE_CHROMIUM is set")
        pytest.skip("chromium not found: apt-get install chromium")
    return found


def _run_chromium(binary: str, *args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="rcrn-chromium-") as profile:
        run = subprocess.run([binary, *FLAGS, f"--user-data-dir={profile}", *args],
                             capture_output=True, text=True, timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr[-2000:]
    return run


def _screenshot(binary: str, url: str, out: Path) -> np.ndarray:
    _run_chromium(binary, f"--screenshot={out}", f"--window-size={WINDOW[0]},{WINDOW[1]}", url)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(io.BytesIO(data)) as im:
        im.verify()
    with Image.open(io.BytesIO(data)) as im:
        assert im.size == WINDOW
        return np.asarray(im.convert("RGB")).astype(int)


def _dump_dom(binary: str, url: str) -> str:
    return _run_chromium(binary, "--dump-dom", "--virtual-time-budget=2000", url).stdout


def _picture_region(shot: np.ndarray) -> tuple[slice, slice]:
    """Rows and columns of the drawn picture: where the scene's blue lies in the screenshot."""
    blue = np.abs(shot - np.array(SCENE)).max(axis=2) <= 12
    rows, cols = np.nonzero(blue)
    assert rows.size > 0, "the picture is not in the screenshot"
    return slice(rows.min(), rows.max() + 1), slice(cols.min(), cols.max() + 1)


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Trace]:
    folder = tmp_path_factory.mktemp("scene")
    rng = np.random.default_rng(0)
    problems = [random_problem(rng, nodes, 12, SMALL["vis_dim"], item_id=f"item/{i}",
                               shape="mixed", image_size=(160, 120))
                for i, nodes in enumerate([4, 3])]
    image = folder / "scene.png"
    Image.new("RGB", (160, 120), SCENE).save(image)
    for p in problems:
        p.meta["image_path"] = str(image)
    torch.manual_seed(0)
    vocab = Vocab.build(problems)
    model = RCRN(RCRNConfig(**SMALL), len(vocab))
    return trace_problems(model, vocab, problems)


def test_chromium_draws_the_picture_and_the_stage_control_changes_it(
        traces: list[Trace], tmp_path: Path) -> None:
    binary = _chromium()
    t = traces[0]
    labels = [s.label for s in t.stages()]
    assert labels[:2] == ["local", "bottom-up (ground_up)"]
    root = t.node_names()[t.root]
    page = render_html(t, tmp_path / "page.html").resolve()
    url = page.as_uri()

    first = _screenshot(binary, url, tmp_path / "initial.png")
    second = _screenshot(binary, url + "#stage=2", tmp_path / "stage2.png")

    # the picture: the inlined image at its aspect ratio, large, with coloured boxes over it
    rows, cols = _picture_region(first)
    height, width = rows.stop - rows.start, cols.stop - cols.start
    assert width >= 300 and abs(width / height - 160 / 120) < 0.05
    assert _picture_region(second) == (rows, cols)          # same place in both stages
    pic1, pic2 = first[rows, cols], second[rows, cols]
    for pic in (pic1, pic2):
        assert pic.std(axis=(0, 1)).max() > 20                # not one flat colour
        assert len(np.unique(pic.reshape(-1, 3), axis=0)) > 50
        blue = (np.abs(pic - np.array(SCENE)).max(axis=2) <= 12).mean()
        assert 0.5 < blue < 0.99                            # mostly scene, partly boxes
    # the step to stage 2 redraws the boxes over the picture
    changed = (np.abs(pic1 - pic2).max(axis=2) > 30).mean()
    assert changed > 0.005, f"only {changed:.4%} of the picture changed"

    # the page's own state follows: the stage label, the active stage and the table column
    dom1, dom2 = _dump_dom(binary, url), _dump_dom(binary, url + "#stage=2")
    assert f'<span id="stagename">1/4: local \u2014 {root}</span>' in dom1
    assert f'<span id="stagename">2/4: bottom-up (ground_up) \u2014 {root}</span>' in dom2
    assert '<span data-stage="0" class="on">local</span>' in dom1
    assert '<span data-stage="1" class="on">bottom-up (ground_up)</span>' in dom2
    assert '<span data-stage="0" class="">local</span>' in dom2
    assert '<th class="cur">bottom-up (ground_up)' in dom2


def test_the_address_chooses_item_and_stage(traces: list[Trace], tmp_path: Path) -> None:
    binary = _chromium()
    page = render_html(traces, tmp_path / "batch.html").resolve()
    t = traces[1]
    n = len(t.stages())
    dom = _dump_dom(binary, page.as_uri() + f"?item=2#stage={n + 5}")   # clamped to the last
    assert f'<p id="text">{t.graph["text"]}</p>' in dom
    last = t.stages()[-1].label
    assert f'<span id="stagename">{n}/{n}: {last} \u2014 {t.node_names()[t.root]}' in dom


def _rects(dom: str, pattern: str) -> list[tuple[str, tuple[float, float, float, float]]]:
    """``(captured, (x0, y0, x1, y1))`` of every SVG rectangle the pattern finds."""
    out = []
    for m in re.finditer(pattern, dom):
        x, y, w, h = (float(m.group(k)) for k in ("x", "y", "w", "h"))
        out.append((m.group("key"), (x, y, x + w, y + h)))
    return out


def _gap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """The distance between two rectangles (0 where they touch or overlap)."""
    dx = max(0.0, max(a[0], b[0]) - min(a[2], b[2]))
    dy = max(0.0, max(a[1], b[1]) - min(a[3], b[3]))
    return (dx * dx + dy * dy) ** 0.5


def _shared(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return (max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
            * max(0.0, min(a[3], b[3]) - max(a[1], b[1])))


NUM = r'"(?P<{}>-?[0-9.e+-]+)"'
BOX = (r'<rect class="box" data-proposal="(?P<key>\d+)" x={} y={} width={} height={}'
       .format(*(NUM.format(k) for k in "xywh")))
LABEL = (r'<g class="boxlabel" data-proposal="\d+"><rect x={} y={} width={} height={}[^>]*>'
         r'</rect><text[^>]*>(?P<key>[^<]*)</text>'.format(*(NUM.format(k) for k in "xywh")))


def test_the_grounded_box_is_labelled_with_the_title_index(
        traces: list[Trace], tmp_path: Path) -> None:
    binary = _chromium()
    t = traces[0]
    stages = t.stages()
    ground = max(j for j, s in enumerate(stages) if "ground" in s.branches)
    assert stages[ground].top(t.root, 1)[0][0] == t.ground_index
    url = render_html(t, tmp_path / "page.html").resolve().as_uri()
    dom = _dump_dom(binary, url + f"#stage={ground + 1}")
    title = re.search(r'<p id="summary">[^<]*grounded to proposal (\d+)', dom)
    assert title is not None, dom[:2000]
    boxes = dict(_rects(dom, BOX))
    labels = _rects(dom, LABEL)
    assert len(labels) == len(boxes) == len(stages[ground].top(t.root, 5))
    # the box drawn where the grounded proposal lies carries the label nearest to it, and
    # that label reads the title's index
    grounded = tuple(float(c) for c in t.boxes[t.ground_index])
    drawn = [k for k, b in boxes.items() if np.allclose(b, grounded)]
    assert drawn == [title.group(1)]
    nearest = min(labels, key=lambda kv: _gap(kv[1], grounded))
    assert nearest[0].split(":")[0] == title.group(1)
    # every label lies outside its box and clear of the other labels
    for i, (text, rect) in enumerate(labels):
        assert _shared(rect, boxes[text.split(":")[0]]) == 0, text
        for _, other in labels[i + 1:]:
            assert _shared(rect, other) == 0, (text, labels)
