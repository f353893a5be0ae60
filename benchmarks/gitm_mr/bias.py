"""Linguistic-bias checks of generated mismatches.

* :func:`relation_distributions` / :func:`total_variation` -- how far the relation
  phrase distribution of mismatched expressions is from the matched ones
  (phrases of :data:`~benchmarks.gitm_mr.substitutions.RELATION_VOCABULARY`).
* :func:`bias_classifier` -- a text-only logistic regression on hashed word
  n-grams (numpy), trained to tell matched from mismatched expressions; its
  held-out accuracy estimates the bias left (0.5 = none).  Pairs are split
  between training and held-out data as a whole, so a held-out negative's
  positive is never seen in training.
"""

from __future__ import annotations

import random
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from benchmarks.gitm_mr.substitutions import RELATION_VOCABULARY, count_phrases

__all__ = ["relation_distributions", "total_variation", "hashed_ngrams", "bias_classifier"]


def relation_distributions(positives: Iterable[str], negatives: Iterable[str]
                           ) -> tuple[dict[str, int], dict[str, int]]:
    """Counts of every table phrase in matched and in mismatched expressions."""
    pos: Counter[str] = Counter()
    neg: Counter[str] = Counter()
    for text in positives:
        pos.update(count_phrases(text.split()))
    for text in negatives:
        neg.update(count_phrases(text.split()))
    return ({p: pos[p] for p in RELATION_VOCABULARY if pos[p]},
            {p: neg[p] for p in RELATION_VOCABULARY if neg[p]})


def total_variation(a: dict[str, int], b: dict[str, int]) -> float:
    """Total variation distance between two count tables (0 identical, 1 disjoint)."""
    sa, sb = sum(a.values()), sum(b.values())
    if sa == 0 or sb == 0:
        return 0.0 if sa == sb else 1.0
    keys = set(a) | set(b)
    return 0.5 * sum(abs(a.get(k, 0) / sa - b.get(k, 0) / sb) for k in keys)


def hashed_ngrams(text: str, dim: int, orders: Sequence[int] = (1, 2, 3)) -> np.ndarray:
    """Sorted unique feature indices of the word n-grams of ``text`` (CRC32 hashing)."""
    words = text.lower().split()
    feats = set()
    for n in orders:
        for i in range(len(words) - n + 1):
            gram = " ".join(words[i:i + n])
            feats.add(zlib.crc32(f"{n}:{gram}".encode()) % dim)
    return np.array(sorted(feats), dtype=np.int64)


def _fit(rows: list[np.ndarray], labels: np.ndarray, dim: int, epochs: int, lr: float,
         l2: float, seed: int) -> tuple[np.ndarray, float]:
    w = np.zeros(dim, dtype=np.float64)
    b = 0.0
    g2 = np.full(dim, 1e-8)
    gb2 = 1e-8
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        for i in rng.permutation(len(rows)):
            idx = rows[i]
            z = w[idx].sum() + b
            p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
            g = p - labels[i]
            grad = g + l2 * w[idx]
            g2[idx] += grad * grad
            w[idx] -= lr * grad / np.sqrt(g2[idx])
            gb2 += g * g
            b -= lr * g / np.sqrt(gb2)
    return w, b


def _predict(rows: list[np.ndarray], w: np.ndarray, b: float) -> np.ndarray:
    return np.array([w[idx].sum() + b > 0 for idx in rows], dtype=np.int64)


def bias_classifier(pairs: Sequence[tuple[str, str]], seed: int = 0, holdout: float = 0.2,
                    dim: int = 1 << 18, epochs: int = 5, lr: float = 0.5, l2: float = 1e-4,
                    max_pairs: int = 50000) -> dict[str, Any]:
    """Held-out accuracy of a text-only matched-vs-mismatched classifier.

    Args:
        pairs: ``(positive text, negative text)`` per pair.
        seed: seed of the pair split, the sampling and the training order.
        holdout: share of pairs held out for testing.
        dim: number of hashed features.
        epochs: passes of Adagrad over the training texts.
        lr: Adagrad step size.
        l2: L2 penalty.
        max_pairs: at most this many pairs are used (a seeded sample).

    Returns:
        ``{"heldout_accuracy", "train_accuracy", "n_train_pairs", "n_heldout_pairs",
        "features", "model"}``; accuracies are None with fewer than 2 pairs.
    """
    pairs = list(pairs)
    rng = random.Random(f"gitm-mr-bias:{seed}")
    if len(pairs) > max_pairs:
        pairs = rng.sample(pairs, max_pairs)
    order = list(range(len(pairs)))
    rng.shuffle(order)
    n_test = max(1, int(round(holdout * len(pairs)))) if len(pairs) >= 2 else 0
    test_ids, train_ids = order[:n_test], order[n_test:]
    info: dict[str, Any] = {"n_train_pairs": len(train_ids), "n_heldout_pairs": len(test_ids),
                            "features": f"hashed word 1-3-grams ({dim} buckets)",
                            "model": "logistic regression (Adagrad, numpy)",
                            "heldout_accuracy": None, "train_accuracy": None}
    if not train_ids or not test_ids:
        return info

    def expand(ids: list[int]) -> tuple[list[np.ndarray], np.ndarray]:
        rows, labels = [], []
        for i in ids:
            pos, neg = pairs[i]
            rows += [hashed_ngrams(pos, dim), hashed_ngrams(neg, dim)]
            labels += [1, 0]
        return rows, np.array(labels, dtype=np.float64)

    train_rows, train_y = expand(train_ids)
    test_rows, test_y = expand(test_ids)
    w, b = _fit(train_rows, train_y, dim, epochs, lr, l2, seed)
    info["train_accuracy"] = float((_predict(train_rows, w, b) == train_y).mean())
    info["heldout_accuracy"] = float((_predict(test_rows, w, b) == test_y).mean())
    return info
