"""ViPhy's official metrics: R-Acc, True Confidence and macro-F1 with "typical" sets.

Per item with gold label set ``G`` and class probabilities ``p`` (the softmax of the
probe's outputs):

* **R-Acc** (relaxed accuracy): ``argmax p`` (first maximum on ties) is in ``G``.
* **True Confidence**: ``sum(p[c] for c in G)``.
* **macro-F1**: scikit-learn's ``f1_score(average='macro')`` over ALL classes of the
  multi-hot gold vectors against multi-hot predicted vectors; a class with neither gold
  nor predicted positives scores 0 (``zero_division=0``) and still counts in the mean.
  The predicted set comes from :func:`typical_set`.

Zero-shot spatial scoring skips items whose gold set contains ``same level`` (``=``): the
masked-word baselines can only answer one word (above / below).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.base import DataError, real_matrix

__all__ = [
    "typical_set",
    "typical_matrix",
    "typical_from_distribution",
    "macro_f1",
    "per_class_f1",
    "r_acc",
    "true_confidence",
    "normalise_rows",
    "score_matrix",
]


#: Rounding allowance of the thresholds of :func:`typical_set`.
_TIE = 1e-9


def _p_min(n_left: int) -> float | None:
    """The threshold for ``n_left`` remaining labels (None: stop)."""
    if n_left >= 4:
        return 0.1
    if n_left == 3:
        return 0.2
    if n_left == 2:
        return 0.3
    return None


def typical_set(probs: Sequence[float]) -> list[int]:
    """The predicted label set of one probability vector, by the official thresholding.

    Start with ``p_min = 0.1`` whatever the number of labels; keep the labels with
    ``p >= p_min`` (if none survives, keep the set as it was) and renormalise; stop when
    the pass removed nothing; otherwise take ``p_min`` from the number of labels left
    (>= 4: 0.1, 3: 0.2, 2: 0.3, 1: stop) and repeat.  A first pass that removes nothing
    therefore ends it: two labels at 0.75 / 0.25 both stay.  Comparisons allow 1e-9 of
    rounding, so that a probability written as 0.1 stays at the threshold after the
    renormalisations.

    Args:
        probs: non-negative class probabilities (renormalised to sum 1 first).

    Returns:
        The indices of the predicted labels, ascending.

    Raises:
        ValueError: negative, non-finite or all-zero probabilities.
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1)
    if p.size == 0 or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
        raise ValueError(f"not a probability vector: {p.tolist()}")
    keep = np.arange(p.size)
    dist = p / p.sum()
    p_min: float | None = 0.1
    while p_min is not None:
        survivors = dist >= p_min - _TIE
        if not survivors.any() or survivors.all():
            break
        keep, dist = keep[survivors], dist[survivors]
        dist = dist / dist.sum()
        p_min = _p_min(len(keep))
    return sorted(int(i) for i in keep)


def typical_matrix(probs: np.ndarray) -> np.ndarray:
    """Multi-hot predicted sets ``[n, classes]`` of a probability matrix (see
    :func:`typical_set`)."""
    probs = np.asarray(probs, dtype=np.float64)
    out = np.zeros(probs.shape, dtype=np.int64)
    for i, row in enumerate(probs):
        out[i, typical_set(row)] = 1
    return out


def typical_from_distribution(counts: Sequence[float], float32: bool = True) -> list[int]:
    """Typical labels of a raw label distribution, as the dataset was built (paper A.2).

    The threshold follows the number of candidate labels from the start (all classes:
    >= 4: 0.1, 3: 0.2, 2: 0.3), keeping ``p >= p_min`` and renormalising, until a pass
    removes nothing or one label is left.  For the spatial task this gives the released
    ``typical`` column, e.g. counts ``>`` / ``=`` / ``<`` of 65 / 15 / 32 -> ``>,<`` and
    287 / 50 / 57 -> ``>``.

    Args:
        counts: raw label counts (or probabilities), one per class.
        float32: normalise in single precision as the release did (a share of exactly
            0.3 after renormalising, e.g. 36 of 120, comes out just under 0.3 and is
            dropped); ``False`` works in double precision.

    Returns:
        The indices of the typical labels, ascending.

    Raises:
        ValueError: negative, non-finite or all-zero counts.
    """
    c = np.asarray(counts, dtype=np.float64).reshape(-1)
    if c.size == 0 or not np.isfinite(c).all() or (c < 0).any() or c.sum() <= 0:
        raise ValueError(f"not a label distribution: {c.tolist()}")
    dtype = np.float32 if float32 else np.float64
    keep = np.arange(c.size)
    dist = c.astype(dtype)
    dist = dist / dist.sum(dtype=dtype)
    p_min = _p_min(len(keep))
    while p_min is not None:
        survivors = dist >= dtype(p_min)
        if survivors.all() or not survivors.any():
            break
        keep, dist = keep[survivors], dist[survivors]
        dist = dist / dist.sum(dtype=dtype)
        p_min = _p_min(len(keep))
    return sorted(int(i) for i in keep)


def per_class_f1(gold: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """F1 of every class (column) of multi-hot matrices; 0 where undefined.

    ``F1 = 2 TP / (2 TP + FP + FN)``, and 0 when ``2 TP + FP + FN = 0`` (a class nobody
    has nor predicts), which is scikit-learn's ``zero_division=0``.
    """
    gold = np.asarray(gold, dtype=bool)
    pred = np.asarray(pred, dtype=bool)
    if gold.shape != pred.shape or gold.ndim != 2:
        raise ValueError(f"gold {gold.shape} and predicted {pred.shape} must be equal 2-d shapes")
    tp = (gold & pred).sum(axis=0).astype(np.float64)
    fp = (~gold & pred).sum(axis=0).astype(np.float64)
    fn = (gold & ~pred).sum(axis=0).astype(np.float64)
    denom = 2 * tp + fp + fn
    return np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)


def macro_f1(gold: np.ndarray, pred: np.ndarray) -> float:
    """scikit-learn ``f1_score(gold, pred, average='macro', zero_division=0)`` on
    multi-hot matrices: the unweighted mean of :func:`per_class_f1` over all columns."""
    scores = per_class_f1(gold, pred)
    return float(scores.mean()) if scores.size else 0.0


def r_acc(gold: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Per-item relaxed accuracy: is the first maximum of ``probs`` a gold label."""
    top = np.asarray(probs).argmax(axis=1)
    return np.asarray(gold, dtype=bool)[np.arange(len(top)), top]


def true_confidence(gold: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Per-item probability mass on the gold labels."""
    return (np.asarray(probs, dtype=np.float64) * np.asarray(gold, dtype=bool)).sum(axis=1)


def normalise_rows(probs: Any, what: str = "probabilities",
                   tol: float = 1e-4) -> tuple[np.ndarray, int]:
    """Check a probability matrix and rescale rows that do not sum to 1.

    Args:
        probs: ``[items, classes]``.
        what: names the source in messages.
        tol: rows whose sum is within ``tol`` of 1 are kept as they are.

    Returns:
        ``(matrix, rows rescaled)``.

    Raises:
        DataError: values that are not real numbers (complex, text, objects), or naming
            the (1-based) row of a negative, non-finite or all-zero row, or of one whose
            sum overflows.
    """
    matrix = real_matrix(probs, f"{what}: probabilities", "[items, classes]")
    if matrix.ndim != 2:
        raise DataError(f"{what}: expected an [items, classes] matrix, got shape "
                        f"{list(matrix.shape)}")
    bad = np.flatnonzero(~np.isfinite(matrix).all(axis=1))
    if len(bad):
        raise DataError(f"{what} row {bad[0] + 1}: NaN or infinite value")
    bad = np.flatnonzero((matrix < 0).any(axis=1))
    if len(bad):
        raise DataError(f"{what} row {bad[0] + 1}: negative value (give probabilities, e.g. "
                        f"the softmax of the logits)")
    with np.errstate(over="ignore"):
        sums = matrix.sum(axis=1)
    bad = np.flatnonzero(sums <= 0)
    if len(bad):
        raise DataError(f"{what} row {bad[0] + 1}: all probabilities are 0")
    bad = np.flatnonzero(~np.isfinite(sums))
    if len(bad):
        raise DataError(f"{what} row {bad[0] + 1}: the values are too large to add up "
                        f"(give probabilities)")
    off = np.abs(sums - 1.0) > tol
    if off.any():
        matrix = matrix.copy()
        matrix[off] /= sums[off, None]
    return matrix, int(off.sum())


def score_matrix(gold: np.ndarray, probs: np.ndarray,
                 classes: Sequence[str]) -> dict[str, Any]:
    """The official metrics of a probability matrix against multi-hot gold sets.

    Args:
        gold: multi-hot ``[items, classes]``.
        probs: class probabilities ``[items, classes]`` (rows summing to 1).
        classes: class names, for the per-class F1.

    Returns:
        ``count``, ``r_acc``, ``confidence``, ``f1`` (fractions in [0, 1]) and
        ``per_class_f1`` (class -> F1).  An empty selection gives ``count`` 0 and
        ``None`` for the rates.
    """
    gold = np.asarray(gold, dtype=np.int64)
    probs = np.asarray(probs, dtype=np.float64)
    n = len(gold)
    if n == 0:
        return {"count": 0, "r_acc": None, "confidence": None, "f1": None,
                "per_class_f1": {c: None for c in classes}}
    pred = typical_matrix(probs)
    f1s = per_class_f1(gold, pred)
    return {
        "count": int(n),
        "r_acc": float(r_acc(gold, probs).mean()),
        "confidence": float(true_confidence(gold, probs).mean()),
        "f1": float(f1s.mean()),
        "per_class_f1": {c: float(v) for c, v in zip(classes, f1s)},
    }
