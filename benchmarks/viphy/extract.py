"""ViPhy's extraction pipeline (paper section 2 and appendix A.1-A.3) on annotated scenes.

Input: a JSON list of scenes (an image's annotations)::

    [{"scene_type": "kitchen", "id": "img-1",          # id optional
      "objects": [{"name": "mug", "box": [x1, y1, x2, y2], "depth": 2.5},
                  {"name": "rug", "polygon": [[x, y], ...], "depth": 4.0}, ...]}, ...]

Boxes and polygons are in image pixels with ``y`` growing downwards; ``depth`` is the
object's mean distance from the camera (larger = farther).  An object gives a ``box``, a
``polygon`` (at least 3 ``[x, y]`` points) or both; with a polygon, its lowest point and
its area centroid place the object vertically (paper appendix A.3: "bounding box or
polygon mask"), and its bounding box gives the area used for size.

Spatial relations (:func:`scene_relations`): per pair, ``above`` when the lowest point
of ``o1`` (its box's ``y2``, or its polygon's largest ``y``) lies above the centroid of
``o2``, ``below`` for the converse, else ``same level``. Only objects that share a depth
partition are compared directly: the depth range is cut into 3 partitions of uniform
size and overlap (by default each half the range, starting every quarter); pairs without
a common partition are related transitively through objects in the overlaps (``above``
then ``above`` or ``same level`` gives ``above``; ``same level`` twice gives
``same level``; contradicting paths leave the pair unrelated). Counts are images per
``(o1, o2, relation)`` and scene type, written in the released layout
``,o1,o2,>,=,<,scene,freq,typical`` with the typical labels of
:func:`~benchmarks.viphy.metrics.typical_from_distribution`.

Size relations (:func:`scene_size_clusters`): objects are clustered by Jenks natural
breaks (k = 5, :func:`jenks_breaks`) on box area times depth; an object of a larger
cluster is ``bigger`` than one of a smaller cluster (images with at most ``k`` objects
give no relation, as in the release).  Pairs are aggregated over images, kept when seen
``min_freq`` times, written in both orders, labelled ``>`` or ``<`` when that side has at
least ``majority`` (0.7) of the votes and dropped otherwise (single-label task), in the
layout ``,o1,o2,>,<,typical``.

The released extraction code differs from the paper's rule in two places, available as
options: ``rule="release"`` compares the TOP point of the lower object with the centroid
of the other, and ``partitions`` may be non-overlapping (``overlap=0``), which disables
the transitive step.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.base import DataError, read_json
from benchmarks.viphy.metrics import typical_from_distribution

__all__ = [
    "SceneObject",
    "Scene",
    "polygon_centroid",
    "SpatialRow",
    "SizeRow",
    "read_scenes",
    "pairwise_relation",
    "depth_partitions",
    "scene_relations",
    "aggregate_spatial",
    "jenks_breaks",
    "jenks_labels",
    "scene_size_clusters",
    "size_votes",
    "aggregate_size",
    "write_spatial_csv",
    "write_size_csv",
]

ABOVE, SAME, BELOW = ">", "=", "<"
_FLIP = {ABOVE: BELOW, BELOW: ABOVE, SAME: SAME}
#: (o1 r m, m r o2) -> o1 r o2, for elevation as a total preorder.
_COMPOSE = {
    (ABOVE, ABOVE): ABOVE, (ABOVE, SAME): ABOVE, (SAME, ABOVE): ABOVE,
    (BELOW, BELOW): BELOW, (BELOW, SAME): BELOW, (SAME, BELOW): BELOW,
    (SAME, SAME): SAME,
}


def polygon_centroid(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The area centroid of a simple polygon (shoelace formula); the mean of the
    vertices when the polygon has no area (collinear points)."""
    pts = [(float(x), float(y)) for x, y in points]
    if not pts:
        raise ValueError("a polygon needs at least one point")
    area2 = cx = cy = 0.0
    for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]):
        cross = x0 * y1 - x1 * y0
        area2 += cross
        cx += (x0 + x1) * cross
        cy += (y0 + y1) * cross
    if abs(area2) < 1e-12:
        return (sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts))
    return (cx / (3.0 * area2), cy / (3.0 * area2))


@dataclass
class SceneObject:
    """An annotated object: name, ``[x1, y1, x2, y2]`` box (px, y down), mean depth, and
    optionally its polygon mask (then the box is the polygon's bounding box unless
    given)."""

    name: str
    box: tuple[float, float, float, float]
    depth: float
    polygon: tuple[tuple[float, float], ...] | None = None

    @classmethod
    def from_polygon(cls, name: str, polygon: Sequence[Sequence[float]],
                     depth: float) -> SceneObject:
        """An object given by its polygon; the box is the polygon's bounding box."""
        pts = tuple((float(p[0]), float(p[1])) for p in polygon)
        if len(pts) < 3:
            raise ValueError(f"a polygon needs at least 3 points, got {len(pts)}")
        xs, ys = [x for x, _ in pts], [y for _, y in pts]
        return cls(name=name, box=(min(xs), min(ys), max(xs), max(ys)), depth=depth,
                   polygon=pts)

    @property
    def lowest_y(self) -> float:
        """The image ``y`` of the object's lowest point (the largest ``y``)."""
        if self.polygon:
            return max(y for _, y in self.polygon)
        return self.box[3]

    @property
    def top_y(self) -> float:
        """The image ``y`` of the object's highest point (the smallest ``y``)."""
        if self.polygon:
            return min(y for _, y in self.polygon)
        return self.box[1]

    @property
    def centroid_y(self) -> float:
        """The ``y`` of the centroid: the polygon's area centroid, else the box centre."""
        if self.polygon:
            return polygon_centroid(self.polygon)[1]
        return (self.box[1] + self.box[3]) / 2.0

    @property
    def area(self) -> float:
        return (self.box[2] - self.box[0]) * (self.box[3] - self.box[1])


@dataclass
class Scene:
    """One annotated image: its scene type and objects."""

    scene_type: str
    objects: list[SceneObject] = field(default_factory=list)
    id: str = ""


@dataclass
class SpatialRow:
    """One row of the spatial CSV: image counts of ``o1`` above / same level / below
    ``o2`` in one scene type, and the typical labels."""

    o1: str
    o2: str
    above: int
    same: int
    below: int
    scene: str

    @property
    def freq(self) -> int:
        return self.above + self.same + self.below

    @property
    def typical(self) -> str:
        signs = (ABOVE, SAME, BELOW)
        keep = typical_from_distribution([self.above, self.same, self.below])
        return ",".join(signs[i] for i in keep)


@dataclass
class SizeRow:
    """One row of the size CSV: votes for ``o1`` bigger / smaller than ``o2``."""

    o1: str
    o2: str
    bigger: int
    smaller: int
    typical: str


# ---------------------------------------------------------------- input
def _number(value: Any, where: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise DataError(f"{where}: {what} must be a finite number, got {value!r}")
    return float(value)


def _read_polygon(value: Any, where: str) -> list[tuple[float, float]] | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) < 3:
        raise DataError(f"{where}: field 'polygon' must be a list of at least 3 [x, y] points")
    points = []
    for point in value:
        if not isinstance(point, list) or len(point) != 2:
            raise DataError(f"{where}: polygon point {point!r} is not [x, y]")
        points.append((_number(point[0], where, "a polygon coordinate"),
                       _number(point[1], where, "a polygon coordinate")))
    return points


def read_scenes(path: str | Path) -> list[Scene]:
    """Read annotated scenes (see the module docstring for the format).

    Raises:
        DataError: naming the file, scene record and object of a malformed entry.
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of scenes")
    scenes: list[Scene] = []
    for i, rec in enumerate(data):
        where = f"{path} record {i}"
        if not isinstance(rec, dict):
            raise DataError(f"{where}: expected an object with scene_type and objects")
        scene_type = rec.get("scene_type")
        if not isinstance(scene_type, str) or not scene_type.strip():
            raise DataError(f"{where}: field 'scene_type' must be a non-empty string")
        objects = rec.get("objects")
        if not isinstance(objects, list):
            raise DataError(f"{where}: field 'objects' must be a list")
        parsed: list[SceneObject] = []
        for j, obj in enumerate(objects):
            owhere = f"{where} object {j}"
            if not isinstance(obj, dict):
                raise DataError(f"{owhere}: expected an object with name, box, depth")
            name = obj.get("name")
            if not isinstance(name, str) or not name.strip():
                raise DataError(f"{owhere}: field 'name' must be a non-empty string")
            polygon = _read_polygon(obj.get("polygon"), owhere)
            box = obj.get("box")
            if box is None and polygon is not None:
                coords = None
            else:
                if not isinstance(box, list) or len(box) != 4:
                    raise DataError(f"{owhere}: field 'box' must be [x1, y1, x2, y2] "
                                    f"(or give a 'polygon' [[x, y], ...])")
                x1, y1, x2, y2 = (_number(v, owhere, "a box coordinate") for v in box)
                if x2 < x1 or y2 < y1:
                    raise DataError(f"{owhere}: box {box} is not x1 <= x2, y1 <= y2")
                coords = (x1, y1, x2, y2)
            depth = _number(obj.get("depth"), owhere, "field 'depth'")
            if depth < 0:
                raise DataError(f"{owhere}: depth must be >= 0, got {depth}")
            clean = " ".join(name.split())
            if polygon is None:
                assert coords is not None
                parsed.append(SceneObject(name=clean, box=coords, depth=depth))
            else:
                made = SceneObject.from_polygon(clean, polygon, depth)
                if coords is not None:
                    made.box = coords
                parsed.append(made)
        scenes.append(Scene(scene_type=scene_type.strip(), objects=parsed,
                            id=str(rec.get("id", i))))
    return scenes


# ---------------------------------------------------------------- spatial
def pairwise_relation(o1: SceneObject, o2: SceneObject, rule: str = "paper") -> str:
    """``>`` (o1 above o2), ``<`` (below) or ``=`` (similar level) from two boxes or
    polygons.

    ``paper``: above when o1's lowest point (box ``y2``, polygon's largest ``y``) is above
    (smaller ``y`` than) o2's centroid; below when o2's lowest point is above o1's
    centroid.  ``release``: below when o1's top (``y1``) is under o2's centroid; above
    when o2's top is under o1's centroid (the released code's comparison).
    """
    if rule == "paper":
        if o1.lowest_y < o2.centroid_y:
            return ABOVE
        if o2.lowest_y < o1.centroid_y:
            return BELOW
        return SAME
    if rule == "release":
        if o1.top_y > o2.centroid_y:
            return BELOW
        if o2.top_y > o1.centroid_y:
            return ABOVE
        return SAME
    raise ValueError(f"unknown rule {rule!r}; use 'paper' or 'release'")


def depth_partitions(depths: Sequence[float], n: int = 3, overlap: float = 0.5,
                     depth_range: tuple[float, float] | None = None) -> list[set[int]]:
    """Partition memberships of objects by depth.

    The range (the scene's min and max depth unless ``depth_range`` is given) is cut
    into ``n`` windows of equal width ``w`` starting every ``w * (1 - overlap)``, so that
    they cover the range exactly; an object belongs to every window holding its depth
    (bounds included).

    Returns:
        Per window, the indices of its objects.
    """
    if n < 1:
        raise ValueError(f"need at least one partition, got {n}")
    if not 0 <= overlap < 1:
        raise ValueError(f"overlap must be in [0, 1), got {overlap}")
    d = np.asarray(depths, dtype=np.float64)
    if d.size == 0:
        return [set() for _ in range(n)]
    lo, hi = depth_range if depth_range is not None else (float(d.min()), float(d.max()))
    if hi < lo:
        raise ValueError(f"depth range ({lo}, {hi}) is empty")
    span = hi - lo
    width = span / (1 + (n - 1) * (1 - overlap))
    stride = width * (1 - overlap)
    eps = 1e-9 * max(1.0, abs(hi), abs(lo))
    out = []
    for k in range(n):
        start = lo + k * stride
        end = hi if k == n - 1 else start + width
        out.append({i for i, v in enumerate(d) if start - eps <= v <= end + eps})
    return out


def scene_relations(scene: Scene, *, partitions: int = 3, overlap: float = 0.5,
                    depth_range: tuple[float, float] | None = None,
                    rule: str = "paper") -> dict[tuple[int, int], str]:
    """Relations between the objects of one scene, by object index.

    Pairs sharing a depth partition are compared directly (:func:`pairwise_relation`);
    the others are derived transitively, one step per round through an object related
    to both, until nothing changes; pairs whose derivations disagree stay unrelated.

    Returns:
        ``{(i, j): sign}`` for every related ordered pair ``i != j`` (both orders).
    """
    objs = scene.objects
    member = depth_partitions([o.depth for o in objs], partitions, overlap, depth_range)
    groups = [{k for k, part in enumerate(member) if i in part} for i in range(len(objs))]
    rel: dict[tuple[int, int], str] = {}
    for i in range(len(objs)):
        for j in range(i + 1, len(objs)):
            if groups[i] & groups[j]:
                r = pairwise_relation(objs[i], objs[j], rule)
                rel[(i, j)], rel[(j, i)] = r, _FLIP[r]
    blocked: set[tuple[int, int]] = set()
    changed = True
    while changed:
        changed = False
        found: dict[tuple[int, int], set[str]] = {}
        for i in range(len(objs)):
            for j in range(len(objs)):
                if i == j or (i, j) in rel or (i, j) in blocked:
                    continue
                derived = set()
                for m in range(len(objs)):
                    if (i, m) in rel and (m, j) in rel:
                        r = _COMPOSE.get((rel[(i, m)], rel[(m, j)]))
                        derived.add(r if r is not None else "?")
                derived.discard("?")
                if derived:
                    found[(i, j)] = derived
        for pair, derived in found.items():
            if len(derived) == 1:
                rel[pair] = next(iter(derived))
                changed = True
            else:
                blocked.add(pair)
    return rel


def aggregate_spatial(scenes: Iterable[Scene], *, min_freq: int = 1, partitions: int = 3,
                      overlap: float = 0.5, rule: str = "paper") -> list[SpatialRow]:
    """Count, per scene type and ordered object-name pair, the images showing each
    relation (an image counts once per relation of a pair) and keep pairs seen in at
    least ``min_freq`` (relation, image) counts.  Pairs of same-named objects are left
    out.  Both orders of a pair are emitted, with mirrored counts, as in the release.

    Returns:
        Rows sorted by scene type, then ``o1``, then ``o2``.
    """
    counts: Counter[tuple[str, str, str, str]] = Counter()
    for scene in scenes:
        rel = scene_relations(scene, partitions=partitions, overlap=overlap, rule=rule)
        seen = {(scene.scene_type, scene.objects[i].name, scene.objects[j].name, r)
                for (i, j), r in rel.items()
                if scene.objects[i].name != scene.objects[j].name}
        counts.update(seen)
    pairs = sorted({(s, a, b) for s, a, b, _ in counts})
    rows = []
    for scene_type, a, b in pairs:
        row = SpatialRow(o1=a, o2=b, above=counts[(scene_type, a, b, ABOVE)],
                         same=counts[(scene_type, a, b, SAME)],
                         below=counts[(scene_type, a, b, BELOW)], scene=scene_type)
        if row.freq >= min_freq:
            rows.append(row)
    return rows


# ---------------------------------------------------------------- Jenks
def jenks_breaks(values: Sequence[float], k: int) -> list[float]:
    """Jenks natural breaks: the ``k``-class split of sorted ``values`` into contiguous
    runs that minimises the total within-class sum of squared deviations (Fisher's
    exact dynamic programme, O(k n^2)).

    Returns:
        ``k + 1`` break values: the minimum, the upper bound of each of the first ``k - 1``
        classes, and the maximum.

    Raises:
        ValueError: fewer values than classes, or ``k < 1``.
    """
    x = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))
    n = len(x)
    if k < 1:
        raise ValueError(f"need at least one class, got k={k}")
    if n < k:
        raise ValueError(f"{n} values cannot form {k} classes")
    if not np.isfinite(x).all():
        raise ValueError("values must be finite")
    s1 = np.concatenate([[0.0], np.cumsum(x)])
    s2 = np.concatenate([[0.0], np.cumsum(x * x)])

    def ssd(i: int, j: int) -> float:
        """Sum of squared deviations of x[i:j] (j exclusive)."""
        m = j - i
        total = s1[j] - s1[i]
        return float(s2[j] - s2[i] - total * total / m)

    inf = float("inf")
    # cost[c][j]: best cost of x[:j] in c classes; cut[c][j]: start of the last class.
    cost = [[inf] * (n + 1) for _ in range(k + 1)]
    cut = [[0] * (n + 1) for _ in range(k + 1)]
    cost[0][0] = 0.0
    for c in range(1, k + 1):
        for j in range(c, n - (k - c) + 1):
            best, arg = inf, c - 1
            for i in range(c - 1, j):
                if cost[c - 1][i] == inf:
                    continue
                v = cost[c - 1][i] + ssd(i, j)
                if v < best - 1e-12:
                    best, arg = v, i
            cost[c][j], cut[c][j] = best, arg
    starts = []
    j = n
    for c in range(k, 0, -1):
        i = cut[c][j]
        starts.append(i)
        j = i
    starts.reverse()
    breaks = [float(x[0])] + [float(x[s - 1]) for s in starts[1:]] + [float(x[-1])]
    return breaks


def jenks_labels(values: Sequence[float], k: int) -> list[int]:
    """Class of each value (0 = smallest) under :func:`jenks_breaks`: class ``c`` holds
    the values above break ``c`` and up to break ``c + 1`` (class 0 includes the
    minimum)."""
    breaks = jenks_breaks(values, k)
    inner = breaks[1:-1]
    return [int(sum(v > b for b in inner)) for v in values]


def scene_size_clusters(scene: Scene, k: int = 5) -> list[int]:
    """Size class per object (0 = smallest) by Jenks on box area times depth; all 0
    when the scene has at most ``k`` objects."""
    if len(scene.objects) <= k:
        return [0] * len(scene.objects)
    return jenks_labels([o.area * o.depth for o in scene.objects], k)


def size_votes(scenes: Iterable[Scene], *, k: int = 5) -> Counter[tuple[str, str]]:
    """Votes ``(bigger, smaller) -> count``: every pair of differently named objects in
    different Jenks clusters (:func:`scene_size_clusters`) of an image is one vote that
    the one in the larger cluster is bigger."""
    votes: Counter[tuple[str, str]] = Counter()
    for scene in scenes:
        labels = scene_size_clusters(scene, k)
        objs = scene.objects
        for i, a in enumerate(objs):
            for j, b in enumerate(objs):
                if labels[i] > labels[j] and a.name != b.name:
                    votes[(a.name, b.name)] += 1
    return votes


def aggregate_size(scenes: Iterable[Scene], *, k: int = 5, min_freq: int = 1,
                   majority: float = 0.7) -> list[SizeRow]:
    """Size relations over scenes (see the module docstring).

    Every pair of objects in different clusters of an image is one vote that the one in
    the larger cluster is bigger (same-named objects excluded).

    Returns:
        Both orders of each kept pair, adjacent, pairs in name order.
    """
    if not 0.5 < majority <= 1:
        raise ValueError(f"majority must be in (0.5, 1], got {majority}")
    votes = size_votes(scenes, k=k)
    rows: list[SizeRow] = []
    for a, b in sorted({tuple(sorted(p)) for p in votes}):
        big, small = votes[(a, b)], votes[(b, a)]
        total = big + small
        if total < min_freq:
            continue
        if big / total >= majority:
            typ = ">"
        elif small / total >= majority:
            typ = "<"
        else:
            continue
        rows.append(SizeRow(o1=a, o2=b, bigger=big, smaller=small, typical=typ))
        rows.append(SizeRow(o1=b, o2=a, bigger=small, smaller=big,
                            typical="<" if typ == ">" else ">"))
    return rows


# ---------------------------------------------------------------- output
def write_spatial_csv(rows: Iterable[SpatialRow], path: str | Path,
                      index: bool = True) -> Path:
    """Write spatial rows in the released layout ``,o1,o2,>,=,<,scene,freq,typical``
    (``index=False`` drops the leading index column)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, lineterminator="\n")
        head = ["o1", "o2", ">", "=", "<", "scene", "freq", "typical"]
        out.writerow(([""] if index else []) + head)
        for i, r in enumerate(rows):
            cells = [r.o1, r.o2, r.above, r.same, r.below, r.scene, r.freq, r.typical]
            out.writerow(([i] if index else []) + cells)
    return path


def write_size_csv(rows: Iterable[SizeRow], path: str | Path, index: bool = True) -> Path:
    """Write size rows in the released layout ``,o1,o2,>,<,typical`` (``index=False``:
    ``o1,o2,>,<,typical`` as in ``size_sub`` / ``size_trans``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(([""] if index else []) + ["o1", "o2", ">", "<", "typical"])
        for i, r in enumerate(rows):
            out.writerow(([i] if index else []) + [r.o1, r.o2, r.bigger, r.smaller, r.typical])
    return path
