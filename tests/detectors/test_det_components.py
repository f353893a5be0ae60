"""The connected-components detector finds drawn shapes exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

import detectors
from detectors import ComponentsDetector, find_components, label_components
from detectors.components import DESCRIPTOR_NAMES, border_background


def _scene() -> tuple[Image.Image, dict[str, list[float]]]:
    """Shapes on a grey background; PIL fills ``[x0, y0, x1, y1]`` inclusive."""
    im = Image.new("RGB", (128, 128), (200, 200, 200))
    draw = ImageDraw.Draw(im)
    draw.rectangle([5, 8, 30, 20], fill=(255, 0, 0))
    draw.ellipse([40, 40, 80, 70], fill=(0, 0, 255))
    draw.rectangle([90, 100, 127, 127], fill=(0, 160, 0))  # touches the border
    draw.ellipse([10, 90, 12, 92], fill=(250, 250, 0))  # tiny disc
    expect = {"#ff0000": [5, 8, 31, 21], "#0000ff": [40, 40, 81, 71],
              "#00a000": [90, 100, 128, 128], "#fafa00": [10, 90, 13, 93]}
    return im, expect


def test_finds_rectangles_and_circles_exactly() -> None:
    im, expect = _scene()
    props = ComponentsDetector()(im, image_id="scene")
    got = dict(zip(props.labels, props.boxes.tolist()))
    assert got == expect
    assert props.image_size == (128, 128) and props.image_id == "scene"
    scores = dict(zip(props.labels, props.scores.tolist()))
    assert scores["#ff0000"] == 1.0 and 0.7 < scores["#0000ff"] < 0.85  # fill ratio
    # numpy input and a PIL image agree
    assert ComponentsDetector()(np.asarray(im)).boxes.tolist() == props.boxes.tolist()


def test_touching_shapes_split_by_colour_or_joined() -> None:
    im = Image.new("RGB", (64, 64), (0, 0, 0))
    draw = ImageDraw.Draw(im)
    draw.rectangle([10, 10, 19, 19], fill=(255, 0, 0))
    draw.rectangle([20, 12, 29, 15], fill=(0, 255, 0))  # touches the red square
    split = ComponentsDetector()(im)
    assert sorted(split.boxes.tolist()) == [[10, 10, 20, 20], [20, 12, 30, 16]]
    joined = ComponentsDetector(split_colours=False)(im)
    assert joined.boxes.tolist() == [[10, 10, 30, 20]] and joined.labels == ["object"]


def test_connectivity_on_a_diagonal() -> None:
    mask = np.eye(6, dtype=bool)
    assert label_components(mask, 4)[1] == 6
    labels, count = label_components(mask, 8)
    assert count == 1 and (labels[mask] == 1).all() and (labels[~mask] == 0).all()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([4, 8]), st.floats(0.2, 0.7))
def test_labels_match_scipy(seed: int, connectivity: int, density: float) -> None:
    ndimage = pytest.importorskip("scipy.ndimage")
    mask = np.random.default_rng(seed).random((23, 31)) < density
    ours, count = label_components(mask, connectivity)
    structure = np.ones((3, 3)) if connectivity == 8 else None
    ref, ref_count = ndimage.label(mask, structure)
    assert count == ref_count
    np.testing.assert_array_equal(ours, ref)  # both number regions in raster order
    found = find_components(mask, connectivity)
    for k, (x1, y1, x2, y2) in enumerate(found["boxes"].astype(int)):
        ys, xs = np.nonzero(ref == k + 1)
        assert (x1, y1, x2, y2) == (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
        assert found["areas"][k] == len(xs)


def test_background_is_the_commonest_border_colour() -> None:
    rgb = np.full((10, 10, 3), 7, np.uint8)
    rgb[0, :] = 255  # one white border row is fewer pixels than the rest of the border
    assert border_background(rgb) == (7, 7, 7)
    assert find_components(np.zeros((5, 5, 3), np.uint8))["boxes"].shape == (0, 4)


def test_perturbations_are_seeded() -> None:
    im, expect = _scene()
    noisy = ComponentsDetector(jitter=0.1, miss_rate=0.3, spurious=3, seed=5)
    a, b = noisy(im, "x"), noisy(im, "x")
    np.testing.assert_array_equal(a.boxes, b.boxes)
    assert a.labels == b.labels and a.labels.count("spurious") == 3
    assert len(a) <= len(expect) + 3
    assert (a.boxes[:, 2:] >= a.boxes[:, :2]).all()
    assert (a.boxes >= 0).all() and (a.boxes <= 128).all()
    other = ComponentsDetector(jitter=0.1, miss_rate=0.3, spurious=3, seed=6)(im, "x")
    assert not np.array_equal(other.boxes, a.boxes)


def test_descriptors() -> None:
    im, _ = _scene()
    props = ComponentsDetector(describe=True)(im)
    assert props.features.shape == (len(props), len(DESCRIPTOR_NAMES))
    red = props.labels.index("#ff0000")
    np.testing.assert_allclose(props.features[red, :3], [1, 0, 0])
    np.testing.assert_allclose(props.features[red, 3:7], np.array([5, 8, 31, 21]) / 128)
    assert props.features[red, 9] == 1.0


def test_image_folder_source(tmp_path: Path) -> None:
    im, expect = _scene()
    im.save(tmp_path / "s1.png")
    (tmp_path / "broken.png").write_bytes(b"not a png")
    src = detectors.load("components", tmp_path, connectivity=8)
    assert src.image_ids() == ["broken", "s1"]
    assert dict(zip(src["s1"].labels, src["s1"].boxes.tolist())) == expect
    with pytest.raises(detectors.DetectorDataError, match=r"broken.png: not a readable image"):
        src["broken"]
    with pytest.raises(ValueError, match="connectivity"):
        ComponentsDetector(connectivity=6)
