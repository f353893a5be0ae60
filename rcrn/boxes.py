"""Box geometry shared by the whole toolkit (one place for IoU and box conventions).

Boxes are ``x1, y1, x2, y2`` in pixels with continuous coordinates unless a
function says otherwise: a box covering pixel columns ``c0 .. c1`` (inclusive)
is ``x1 = c0, x2 = c1 + 1`` and its width is ``x2 - x1``.

Ref-Reasoning / SGMN (and so GITM-MR) use the *inclusive-pixel* convention
instead: ``x2`` is the last pixel column, so ``w = x2 - x1 + 1``.  Functions
that care take ``inclusive=True`` to follow it.

Every function accepts numpy arrays; :func:`encode_deltas`, :func:`decode_deltas`,
:func:`box_area` and the conversions also accept ``torch`` tensors and return
the same kind (so the box-regression head and its loss can use them).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "box_iou",
    "box_area",
    "xywh_to_xyxy",
    "xyxy_to_xywh",
    "normalize_boxes",
    "denormalize_boxes",
    "box_features6",
    "boxes_from_features6",
    "clip_boxes",
    "gt_index",
    "encode_deltas",
    "decode_deltas",
    "DELTA_CLAMP",
    "paired_iou",
]

#: Upper bound on the decoded log-scale deltas (as in Faster R-CNN): ``log(1000 / 16)``.
DELTA_CLAMP = math.log(1000.0 / 16)


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def _stack(parts: list[Any], like: Any) -> Any:
    if _is_torch(like):
        import torch

        return torch.stack(parts, dim=-1)
    return np.stack(parts, axis=-1)


def _float(x: Any) -> Any:
    if _is_torch(x):
        return x if x.is_floating_point() else x.float()
    arr = np.asarray(x)
    return arr if arr.dtype.kind == "f" else arr.astype(np.float32)


def _check4(x: Any, what: str) -> None:
    if x.shape[-1] != 4:
        raise ValueError(f"{what}: expected boxes with 4 coordinates in the last axis, "
                         f"got shape {tuple(x.shape)}")


def box_iou(a: np.ndarray, b: np.ndarray, inclusive: bool = False) -> np.ndarray:
    """IoU between every box of ``a`` [..., n, 4] and ``b`` [..., m, 4] (xyxy).

    Args:
        a: boxes ``[..., n, 4]`` (or a single box ``[4]``).
        b: boxes ``[..., m, 4]`` (or a single box ``[4]``); leading axes broadcast
            against ``a``'s (a batch of images).
        inclusive: use the inclusive-pixel convention (``w = x2 - x1 + 1``).

    Returns:
        float64 array ``[..., n, m]``; 0 where the union is empty.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = (x[None] if x.ndim == 1 else x for x in (a, b))
    one = 1.0 if inclusive else 0.0
    lt = np.maximum(a[..., :, None, :2], b[..., None, :, :2])
    rb = np.minimum(a[..., :, None, 2:], b[..., None, :, 2:])
    wh = np.clip(rb - lt + one, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    area_a, area_b = (np.clip(x[..., 2] - x[..., 0] + one, 0, None)
                      * np.clip(x[..., 3] - x[..., 1] + one, 0, None) for x in (a, b))
    union = area_a[..., :, None] + area_b[..., None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def box_area(boxes: Any, inclusive: bool = False) -> Any:
    """Area of every box ``[..., 4]`` (xyxy); negative extents count as 0."""
    boxes = _float(boxes)
    _check4(boxes, "box_area")
    one = 1.0 if inclusive else 0.0
    w = (boxes[..., 2] - boxes[..., 0] + one).clip(min=0)
    h = (boxes[..., 3] - boxes[..., 1] + one).clip(min=0)
    return w * h


def xywh_to_xyxy(boxes: Any, inclusive: bool = False) -> Any:
    """``[x, y, w, h]`` to ``[x1, y1, x2, y2]``.

    Args:
        boxes: ``[..., 4]`` array or tensor.
        inclusive: Ref-Reasoning convention, ``x2 = x + w - 1``.
    """
    boxes = _float(boxes)
    _check4(boxes, "xywh_to_xyxy")
    one = 1.0 if inclusive else 0.0
    x, y, w, h = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
    return _stack([x, y, x + w - one, y + h - one], boxes)


def xyxy_to_xywh(boxes: Any, inclusive: bool = False) -> Any:
    """``[x1, y1, x2, y2]`` to ``[x, y, w, h]``.

    Args:
        boxes: ``[..., 4]`` array or tensor.
        inclusive: Ref-Reasoning convention, ``w = x2 - x1 + 1``.
    """
    boxes = _float(boxes)
    _check4(boxes, "xyxy_to_xywh")
    one = 1.0 if inclusive else 0.0
    x1, y1, x2, y2 = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
    return _stack([x1, y1, x2 - x1 + one, y2 - y1 + one], boxes)


def normalize_boxes(boxes: Any, image_size: tuple[float, float]) -> Any:
    """Pixel xyxy boxes to fractions of the image: ``[x1/W, y1/H, x2/W, y2/H]``.

    Args:
        boxes: ``[..., 4]`` xyxy in pixels.
        image_size: ``(width, height)``.
    """
    w, h = float(image_size[0]), float(image_size[1])
    if w <= 0 or h <= 0:
        raise ValueError(f"normalize_boxes: image size must be positive, got {image_size}")
    boxes = _float(boxes)
    _check4(boxes, "normalize_boxes")
    return _stack([boxes[..., 0] / w, boxes[..., 1] / h, boxes[..., 2] / w, boxes[..., 3] / h],
                  boxes)


def denormalize_boxes(boxes: Any, image_size: tuple[float, float]) -> Any:
    """Inverse of :func:`normalize_boxes`: fractions of the image to pixel xyxy."""
    w, h = float(image_size[0]), float(image_size[1])
    if w <= 0 or h <= 0:
        raise ValueError(f"denormalize_boxes: image size must be positive, got {image_size}")
    boxes = _float(boxes)
    _check4(boxes, "denormalize_boxes")
    return _stack([boxes[..., 0] * w, boxes[..., 1] * h, boxes[..., 2] * w, boxes[..., 3] * h],
                  boxes)


def box_features6(boxes: np.ndarray, image_size: tuple[float, float]) -> np.ndarray:
    """The 6-value location feature of UNITER / Oscar: ``[x1/W, y1/H, x2/W, y2/H, w/W, h/H]``.

    Args:
        boxes: ``[n, 4]`` xyxy pixels.
        image_size: ``(width, height)``.

    Returns:
        float32 ``[n, 6]``.
    """
    norm = np.asarray(normalize_boxes(np.asarray(boxes, dtype=np.float64).reshape(-1, 4),
                                      image_size))
    wh = norm[:, 2:4] - norm[:, 0:2]
    return np.concatenate([norm, wh], axis=1).astype(np.float32)


def boxes_from_features6(values: np.ndarray, image_size: tuple[float, float]) -> np.ndarray:
    """Pixel xyxy boxes ``[n, 4]`` from 6-value location features (see :func:`box_features6`)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] < 4:
        raise ValueError(f"boxes_from_features6: expected [n, 6] values, got {list(values.shape)}")
    return np.asarray(denormalize_boxes(values[:, :4], image_size), dtype=np.float32)


def clip_boxes(boxes: np.ndarray, image_size: tuple[float, float]) -> np.ndarray:
    """Clip xyxy boxes ``[n, 4]`` to ``[0, W] x [0, H]``."""
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4).copy()
    w, h = float(image_size[0]), float(image_size[1])
    boxes[:, 0::2] = boxes[:, 0::2].clip(0, w)
    boxes[:, 1::2] = boxes[:, 1::2].clip(0, h)
    return boxes


def gt_index(proposals: np.ndarray, gt_box: np.ndarray, inclusive: bool = False) -> int:
    """Index of the proposal of maximum IoU with a ground-truth box (-1 if there are none).

    Ties go to the first proposal, as ``argmax`` does.

    Args:
        proposals: ``[n, 4]`` xyxy.
        gt_box: ``[4]`` xyxy.
        inclusive: use the inclusive-pixel convention for the IoU.
    """
    proposals = np.asarray(proposals, dtype=np.float64).reshape(-1, 4)
    if len(proposals) == 0:
        return -1
    return int(box_iou(np.asarray(gt_box).reshape(1, 4), proposals, inclusive)[0].argmax())


def _center_size(boxes: Any) -> tuple[Any, Any, Any, Any]:
    w = boxes[..., 2] - boxes[..., 0]
    h = boxes[..., 3] - boxes[..., 1]
    return boxes[..., 0] + 0.5 * w, boxes[..., 1] + 0.5 * h, w, h


def encode_deltas(boxes: Any, targets: Any,
                  weights: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)) -> Any:
    """Box-regression targets that turn ``boxes`` into ``targets`` (Faster R-CNN form).

    ``dx = wx (tx - px) / pw``, ``dy = wy (ty - py) / ph``, ``dw = ww log(tw / pw)``,
    ``dh = wh log(th / ph)`` with centres ``(px, py)`` and sizes ``(pw, ph)``.

    Args:
        boxes: source boxes ``[..., 4]`` xyxy (positive width and height).
        targets: target boxes, same shape.
        weights: ``(wx, wy, ww, wh)`` scaling of the four deltas.

    Returns:
        deltas ``[..., 4]``, numpy or torch like ``boxes``.
    """
    boxes, targets = _float(boxes), _float(targets)
    _check4(boxes, "encode_deltas")
    _check4(targets, "encode_deltas")
    px, py, pw, ph = _center_size(boxes)
    tx, ty, tw, th = _center_size(targets)
    log = _log_of(boxes)
    wx, wy, ww, wh = weights
    return _stack([wx * (tx - px) / pw, wy * (ty - py) / ph, ww * log(tw / pw),
                   wh * log(th / ph)], boxes)


def decode_deltas(boxes: Any, deltas: Any,
                  weights: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0),
                  clamp: float = DELTA_CLAMP) -> Any:
    """Apply regression ``deltas`` to ``boxes`` (inverse of :func:`encode_deltas`).

    Args:
        boxes: ``[..., 4]`` xyxy.
        deltas: ``[..., 4]``.
        weights: the weights used to encode.
        clamp: upper bound on the scaled log-size deltas, so ``exp`` cannot overflow.

    Returns:
        boxes ``[..., 4]`` xyxy, numpy or torch like ``boxes``.
    """
    boxes, deltas = _float(boxes), _float(deltas)
    _check4(boxes, "decode_deltas")
    _check4(deltas, "decode_deltas")
    px, py, pw, ph = _center_size(boxes)
    wx, wy, ww, wh = weights
    dx, dy = deltas[..., 0] / wx, deltas[..., 1] / wy
    dw = (deltas[..., 2] / ww).clip(max=clamp)
    dh = (deltas[..., 3] / wh).clip(max=clamp)
    exp = _exp_of(boxes)
    cx, cy = px + dx * pw, py + dy * ph
    w, h = pw * exp(dw), ph * exp(dh)
    return _stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], boxes)


def _log_of(like: Any) -> Any:
    if _is_torch(like):
        import torch

        return torch.log
    return np.log


def _exp_of(like: Any) -> Any:
    if _is_torch(like):
        import torch

        return torch.exp
    return np.exp


def paired_iou(a: Any, b: Any, inclusive: bool = False) -> Any:
    """IoU of ``a[i]`` with ``b[i]`` for torch xyxy boxes ``[n, 4]`` (differentiable);
    ``inclusive`` counts pixels inclusively (``w = x2 - x1 + 1``)."""
    import torch

    one = 1.0 if inclusive else 0.0
    lt = torch.maximum(a[:, :2], b[:, :2])
    rb = torch.minimum(a[:, 2:], b[:, 2:])
    inter = (rb - lt + one).clamp(min=0).prod(-1)
    union = ((a[:, 2:] - a[:, :2] + one).prod(-1) + (b[:, 2:] - b[:, :2] + one).prod(-1)
             - inter)
    return inter / union.clamp(min=1e-9)
