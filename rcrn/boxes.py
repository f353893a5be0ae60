"""Box geometry shared by the whole toolkit (one place for IoU and box conventions).

Boxes are ``x1, y1, x2, y2`` in pixels with continuous coordinates unless a
function says otherwise.
"""

from __future__ import annotations

import numpy as np

__all__ = ["box_iou"]


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU between every box of ``a`` [n, 4] and ``b`` [m, 4] (xyxy, continuous coordinates)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)
