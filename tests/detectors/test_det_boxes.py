"""Box geometry in rcrn.boxes: conventions, IoU, gt_index, regression deltas."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rcrn.boxes import (
    box_area,
    box_features6,
    box_iou,
    boxes_from_features6,
    clip_boxes,
    decode_deltas,
    denormalize_boxes,
    encode_deltas,
    gt_index,
    normalize_boxes,
    xywh_to_xyxy,
    xyxy_to_xywh,
)


def test_box_iou_keeps_its_signature_and_values() -> None:
    a = np.array([[0, 0, 10, 10]])
    b = np.array([[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30], [3, 3, 3, 3]])
    np.testing.assert_allclose(box_iou(a, b), [[1.0, 50 / 150, 0.0, 0.0]])
    assert box_iou(np.zeros((0, 4)), b).shape == (0, 4)
    assert box_iou([0, 0, 1, 1], [0, 0, 1, 1]).shape == (1, 1)


def test_inclusive_pixel_convention() -> None:
    # Ref-Reasoning: a box from pixel 0 to pixel 9 inclusive is 10 pixels wide
    xywh = np.array([[0.0, 0.0, 10.0, 10.0]])
    xyxy = xywh_to_xyxy(xywh, inclusive=True)
    np.testing.assert_array_equal(xyxy, [[0, 0, 9, 9]])
    np.testing.assert_array_equal(xyxy_to_xywh(xyxy, inclusive=True), xywh)
    np.testing.assert_array_equal(xywh_to_xyxy(xywh), [[0, 0, 10, 10]])
    assert box_area(xyxy, inclusive=True)[0] == 100 == box_area(xywh_to_xyxy(xywh))[0]
    np.testing.assert_allclose(box_iou(xyxy, np.array([[5, 0, 14, 9]]), inclusive=True),
                               [[50 / 150]])
    assert box_iou([[4, 4, 4, 4]], [[4, 4, 4, 4]], inclusive=True)[0, 0] == 1.0  # one pixel


def test_normalised_boxes_and_features6() -> None:
    boxes = np.array([[10, 20, 110, 220], [0, 0, 640, 480]], np.float32)
    norm = normalize_boxes(boxes, (640, 480))
    np.testing.assert_allclose(norm[1], [0, 0, 1, 1])
    np.testing.assert_allclose(denormalize_boxes(norm, (640, 480)), boxes, rtol=1e-6)
    six = box_features6(boxes, (640, 480))
    np.testing.assert_allclose(six[0], [10 / 640, 20 / 480, 110 / 640, 220 / 480,
                                        100 / 640, 200 / 480], rtol=1e-6)
    np.testing.assert_allclose(boxes_from_features6(six, (640, 480)), boxes, rtol=1e-5)
    with pytest.raises(ValueError, match="positive"):
        normalize_boxes(boxes, (0, 480))
    np.testing.assert_array_equal(clip_boxes([[-5, 3, 700, 500]], (640, 480)),
                                  [[0, 3, 640, 480]])


def test_gt_index() -> None:
    props = np.array([[0, 0, 10, 10], [50, 50, 100, 100], [48, 52, 99, 101]])
    assert gt_index(props, np.array([49, 51, 100, 100])) in (1, 2)
    assert gt_index(props, [50, 50, 100, 100]) == 1
    assert gt_index(np.zeros((0, 4)), [0, 0, 1, 1]) == -1
    assert gt_index(props, [200, 200, 210, 210]) == 0  # all IoU 0: the first, like argmax


def test_conversions_accept_torch() -> None:
    t = torch.tensor([[1.0, 2.0, 3.0, 4.0]], requires_grad=True)
    out = xyxy_to_xywh(xywh_to_xyxy(t))
    assert isinstance(out, torch.Tensor) and torch.allclose(out, t)
    out.sum().backward()
    assert t.grad is not None
    assert torch.equal(box_area(torch.tensor([[0, 0, 2, 3]])), torch.tensor([6.0]))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 500), min_size=2, max_size=2),
       st.lists(st.floats(5, 300), min_size=2, max_size=2),
       st.lists(st.floats(0, 500), min_size=2, max_size=2),
       st.lists(st.floats(5, 300), min_size=2, max_size=2))
def test_deltas_round_trip(p_xy: list, p_wh: list, t_xy: list, t_wh: list) -> None:
    src = np.array([[*p_xy, p_xy[0] + p_wh[0], p_xy[1] + p_wh[1]]])
    dst = np.array([[*t_xy, t_xy[0] + t_wh[0], t_xy[1] + t_wh[1]]])
    weights = (10.0, 10.0, 5.0, 5.0)
    deltas = encode_deltas(src, dst, weights)
    np.testing.assert_allclose(decode_deltas(src, deltas, weights), dst, rtol=1e-9, atol=1e-6)
    tdeltas = encode_deltas(torch.tensor(src), torch.tensor(dst), weights)
    assert isinstance(tdeltas, torch.Tensor)
    np.testing.assert_allclose(tdeltas.numpy(), deltas, rtol=1e-9, atol=1e-9)


def test_deltas_identity_and_clamp() -> None:
    box = np.array([[10.0, 10.0, 30.0, 50.0]])
    np.testing.assert_allclose(encode_deltas(box, box), 0.0)
    huge = decode_deltas(box, np.array([[0.0, 0.0, 100.0, 100.0]]))
    assert np.isfinite(huge).all()
    assert huge[0, 2] - huge[0, 0] == pytest.approx(20 * 1000 / 16)
    with pytest.raises(ValueError, match="4 coordinates"):
        encode_deltas(np.zeros((2, 3)), np.zeros((2, 3)))
