"""Geometric and attribute relations of a synthetic scene, with margins.

Every relation between two distinct objects is three-valued: it holds, it does
not hold, or it is *ambiguous* (the geometry falls inside a margin where people
could disagree).  Expressions only use relations that surely hold; mismatch
checks count ambiguous relations as "could hold".

Definitions for ``a REL b`` with boxes ``(x1, y1, x2, y2)``, centres ``c`` and the
thresholds of :class:`~benchmarks.synthetic.scene.Geometry`:

* ``to the left of``: holds when ``a.x2 + margin <= b.x1`` (a lies wholly left of b,
  whatever the vertical offset, as in CLEVR); does not hold when
  ``b.cx - a.cx <= margin``; ambiguous otherwise.  ``to the right of``,
  ``above`` and ``below`` are the same on the other side / on the vertical axis.
* ``near``: box distance ``d <= near_true`` holds, ``d >= near_false`` does not.
* ``far from``: ``d >= far_true`` holds, ``d <= far_false`` does not.
* ``next to`` (side by side): holds when the horizontal gap is at most
  ``next_true`` and the vertical overlap is at least half the smaller height;
  does not hold when the gap is at least ``next_false`` or the boxes do not
  overlap vertically.
* ``bigger than`` / ``smaller than``: size classes large vs small (never ambiguous).
* ``the same color as`` / ``the same shape as``: attribute equality (never ambiguous).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchmarks.synthetic.scene import Geometry, SceneObject

__all__ = [
    "TRUE",
    "FALSE",
    "AMBIGUOUS",
    "RELATIONS",
    "PHRASES",
    "PHRASE_TO_RELATION",
    "FAMILY",
    "pair_truths",
    "relation_truth",
    "SceneRelations",
]

TRUE, FALSE, AMBIGUOUS = 1, 0, 2

#: Relation keys, in vocabulary order.
RELATIONS: tuple[str, ...] = (
    "left_of", "right_of", "above", "below", "near", "far_from", "next_to",
    "bigger_than", "smaller_than", "same_color", "same_shape",
)

#: The words of each relation phrase.
PHRASES: dict[str, str] = {
    "left_of": "to the left of",
    "right_of": "to the right of",
    "above": "above",
    "below": "below",
    "near": "near",
    "far_from": "far from",
    "next_to": "next to",
    "bigger_than": "bigger than",
    "smaller_than": "smaller than",
    "same_color": "the same color as",
    "same_shape": "the same shape as",
}

PHRASE_TO_RELATION: dict[str, str] = {v: k for k, v in PHRASES.items()}

#: How a relative clause introduces the phrase: ``"is"`` ("that is above") or
#: ``"has"`` ("that has the same color as").
FAMILY: dict[str, str] = {k: "has" if k.startswith("same_") else "is" for k in RELATIONS}

Box = tuple[float, float, float, float]


def _directional(a_hi: float, b_lo: float, a_c: float, b_c: float, margin: float) -> int:
    """``a`` before ``b`` on one axis (smaller coordinates first)."""
    if a_hi + margin <= b_lo:
        return TRUE
    if b_c - a_c <= margin:
        return FALSE
    return AMBIGUOUS


def _box_distance(a: Box, b: Box) -> float:
    dx = max(b[0] - a[2], a[0] - b[2], 0.0)
    dy = max(b[1] - a[3], a[1] - b[3], 0.0)
    return math.hypot(dx, dy)


def pair_truths(a: SceneObject, b: SceneObject, geometry: Geometry) -> dict[str, int]:
    """Truth value of ``a KEY b`` for every key of :data:`RELATIONS`.

    Args:
        a: the subject object.
        b: the object object.
        geometry: thresholds of the image size.

    Returns:
        ``{key: TRUE | FALSE | AMBIGUOUS}``.
    """
    m = geometry.margin
    ab, bb = a.box, b.box
    acx, acy = (ab[0] + ab[2]) / 2.0, (ab[1] + ab[3]) / 2.0
    bcx, bcy = (bb[0] + bb[2]) / 2.0, (bb[1] + bb[3]) / 2.0
    d = _box_distance(ab, bb)
    gap = max(bb[0] - ab[2], ab[0] - bb[2])
    overlap = min(ab[3], bb[3]) - max(ab[1], bb[1])
    smaller = min(ab[3] - ab[1], bb[3] - bb[1])
    if gap >= geometry.next_false or overlap <= 0 or gap < 0:
        next_to = FALSE
    elif gap <= geometry.next_true and overlap >= 0.5 * smaller:
        next_to = TRUE
    else:
        next_to = AMBIGUOUS
    return {
        "left_of": _directional(ab[2], bb[0], acx, bcx, m),
        "right_of": _directional(bb[2], ab[0], bcx, acx, m),
        "above": _directional(ab[3], bb[1], acy, bcy, m),
        "below": _directional(bb[3], ab[1], bcy, acy, m),
        "near": TRUE if d <= geometry.near_true else FALSE if d >= geometry.near_false
        else AMBIGUOUS,
        "far_from": TRUE if d >= geometry.far_true else FALSE if d <= geometry.far_false
        else AMBIGUOUS,
        "next_to": next_to,
        "bigger_than": TRUE if (a.size, b.size) == ("large", "small") else FALSE,
        "smaller_than": TRUE if (a.size, b.size) == ("small", "large") else FALSE,
        "same_color": TRUE if a.color == b.color else FALSE,
        "same_shape": TRUE if a.shape == b.shape else FALSE,
    }


def relation_truth(key: str, a: SceneObject, b: SceneObject, geometry: Geometry) -> int:
    """Whether ``a KEY b`` holds: :data:`TRUE`, :data:`FALSE` or :data:`AMBIGUOUS`.

    Args:
        key: a name of :data:`RELATIONS`.
        a: the subject object.
        b: the object object.
        geometry: thresholds of the image size.

    Raises:
        KeyError: for an unknown relation.
    """
    truths = pair_truths(a, b, geometry)
    if key not in truths:
        raise KeyError(f"unknown relation {key!r}")
    return truths[key]


class SceneRelations:
    """All pairwise relations of one scene, as bit masks over objects.

    For a relation ``r`` and object ``i``, ``sure[r][i]`` has bit ``j`` set when
    ``i r j`` surely holds and ``maybe[r][i]`` when it holds or is ambiguous;
    ``sure_inv`` / ``maybe_inv`` are the same for ``j r i``.  ``attribute[(name,
    value)]`` is the mask of the objects with that attribute value.

    Args:
        objects: the scene's objects.
        geometry: thresholds of the image size.
    """

    def __init__(self, objects: Sequence[SceneObject], geometry: Geometry) -> None:
        self.objects = list(objects)
        self.geometry = geometry
        n = len(self.objects)
        self.all = (1 << n) - 1
        self.sure: dict[str, list[int]] = {k: [0] * n for k in RELATIONS}
        self.maybe: dict[str, list[int]] = {k: [0] * n for k in RELATIONS}
        self.sure_inv: dict[str, list[int]] = {k: [0] * n for k in RELATIONS}
        self.maybe_inv: dict[str, list[int]] = {k: [0] * n for k in RELATIONS}
        for i, a in enumerate(self.objects):
            for j, b in enumerate(self.objects):
                if i == j:
                    continue
                for key, t in pair_truths(a, b, geometry).items():
                    if t != FALSE:
                        self.maybe[key][i] |= 1 << j
                        self.maybe_inv[key][j] |= 1 << i
                        if t == TRUE:
                            self.sure[key][i] |= 1 << j
                            self.sure_inv[key][j] |= 1 << i
        self.attribute: dict[tuple[str, str], int] = {}
        for i, o in enumerate(self.objects):
            for name in ("shape", "color", "size"):
                k = (name, getattr(o, name))
                self.attribute[k] = self.attribute.get(k, 0) | (1 << i)

    def truth(self, key: str, i: int, j: int) -> int:
        """Truth value of ``object i KEY object j``."""
        if self.sure[key][i] >> j & 1:
            return TRUE
        return AMBIGUOUS if self.maybe[key][i] >> j & 1 else FALSE

    def table(self, key: str, lenient: bool, inverse: bool = False) -> list[int]:
        """The mask table of ``key``: sure or could-hold, forward or inverse."""
        if inverse:
            return self.maybe_inv[key] if lenient else self.sure_inv[key]
        return self.maybe[key] if lenient else self.sure[key]
