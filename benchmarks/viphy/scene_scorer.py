"""A scene-evidence scorer: ViPhy labels mined from annotated scenes, as probabilities.

The extraction pipeline (:mod:`benchmarks.viphy.extract`) runs over a folder of annotated
scenes (every ``*.json`` file under it, each a list of scenes in the format of
:func:`~benchmarks.viphy.extract.read_scenes`; objects give a ``box`` or a ``polygon``):

* spatial: per image, the paper's elevation rule inside the overlapping depth
  partitions, with transitive links across partitions
  (:func:`~benchmarks.viphy.extract.scene_relations`); counts of images per scene type
  and ordered pair (:func:`~benchmarks.viphy.extract.aggregate_spatial`);
* size: Jenks natural breaks (k = 5) on box area times depth per image; one vote per
  pair of objects in different clusters (:func:`~benchmarks.viphy.extract.size_votes`).

An item is scored from the counts of the first level that has any: spatial -- the pair in
the item's scene type (``scene``), else the pair pooled over all scene types (``pooled``);
size -- the votes for the pair either way (``scene``).  The probabilities are the counts
smoothed towards the fallback: ``(counts + alpha * fallback) / (sum + alpha)``.  Without
counts the fallback scores the item alone (``fallback``; uniform when none is given).
:meth:`SceneEvidenceScorer.typical` gives the mined label set by the release's
typical-label thresholds.  Colour has no scene evidence here (annotations carry no colour).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.base import DataError
from benchmarks.viphy.data import CLASSES, ViPhyItem, base_task
from benchmarks.viphy.extract import (
    Scene,
    SpatialRow,
    aggregate_spatial,
    read_scenes,
    size_votes,
)
from benchmarks.viphy.metrics import typical_from_distribution
from benchmarks.viphy.probe import fallback_probs

__all__ = ["SceneEvidenceScorer", "read_scene_dir", "scene_key"]


def scene_key(scene_type: str) -> str:
    """A scene type as compared: lower case, spaces and dashes as ``_``
    (``Living Room`` -> ``living_room``)."""
    return "_".join(scene_type.strip().lower().replace("-", " ").split())


def read_scene_dir(path: str | Path) -> list[Scene]:
    """The scenes of every ``*.json`` file under ``path`` (recursively, in path order), or
    of ``path`` itself when it is a file.

    Raises:
        DataError: no such folder or no scene file in it, or a malformed file.
    """
    path = Path(path)
    if path.is_file():
        return read_scenes(path)
    if not path.is_dir():
        raise DataError(f"{path}: no such scene folder or file")
    files = sorted(p for p in path.rglob("*.json") if p.is_file())
    if not files:
        raise DataError(f"{path}: no *.json scene files in the folder")
    scenes: list[Scene] = []
    for f in files:
        scenes.extend(read_scenes(f))
    return scenes


class SceneEvidenceScorer:
    """Class probabilities of spatial or size items from relations mined in scenes.

    Args:
        task: ``spatial`` or ``size`` (``size_sub`` / ``size_trans`` score as size).
        fallback: the scorer of items without evidence (and the smoothing target);
            None: uniform.
        alpha: pseudo-count of the fallback.
        partitions, overlap, rule: spatial extraction settings
            (:func:`~benchmarks.viphy.extract.scene_relations`).
        k: size extraction: the number of Jenks clusters.
    """

    def __init__(self, task: str, *, fallback: Any | None = None, alpha: float = 1.0,
                 partitions: int = 3, overlap: float = 0.5, rule: str = "paper",
                 k: int = 5) -> None:
        self.task = base_task(task)
        if self.task == "color":
            raise ValueError("the scene scorer mines spatial and size relations; annotated "
                             "scenes carry no colour")
        if alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {alpha}")
        self.classes = CLASSES[self.task]
        self.fallback = fallback
        self.alpha = float(alpha)
        self.partitions, self.overlap, self.rule, self.k = partitions, overlap, rule, k
        self.rows: list[SpatialRow] = []
        self._scene: dict[tuple[str, str, str], np.ndarray] = {}
        self._pooled: dict[tuple[str, str], np.ndarray] = {}
        self._votes: Counter[tuple[str, str]] = Counter()
        self.n_scenes = 0

    def fit(self, scenes: Iterable[Scene]) -> SceneEvidenceScorer:
        """Mine the scenes' relations.  Returns ``self``."""
        scenes = list(scenes)
        self.n_scenes = len(scenes)
        if self.task == "spatial":
            self.rows = aggregate_spatial(scenes, partitions=self.partitions,
                                          overlap=self.overlap, rule=self.rule)
            self._scene, self._pooled = {}, {}
            for r in self.rows:
                vec = np.asarray([r.above, r.below, r.same], dtype=np.float64)
                key = (scene_key(r.scene), r.o1, r.o2)
                self._scene[key] = self._scene.get(key, 0.0) + vec
                self._pooled[(r.o1, r.o2)] = self._pooled.get((r.o1, r.o2), 0.0) + vec
        else:
            self._votes = size_votes(scenes, k=self.k)
        return self

    @classmethod
    def from_dir(cls, path: str | Path, task: str, **kwargs: Any) -> SceneEvidenceScorer:
        """A scorer fitted on :func:`read_scene_dir` of ``path``."""
        return cls(task, **kwargs).fit(read_scene_dir(path))

    # ------------------------------------------------------------ evidence
    def counts(self, item: ViPhyItem) -> tuple[str, np.ndarray | None]:
        """``(level, counts in class order)`` of ``item``; ``("fallback", None)`` without
        evidence."""
        if base_task(item.task) != self.task:
            raise ValueError(f"item {item.id} is of task {item.task}; the scene scorer "
                             f"scores {self.task}")
        if self.task == "spatial":
            hit = self._scene.get((scene_key(item.scene), item.o1, item.o2))
            if hit is not None and hit.sum() > 0:
                return "scene", hit.copy()
            hit = self._pooled.get((item.o1, item.o2))
            if hit is not None and hit.sum() > 0:
                return "pooled", hit.copy()
            return "fallback", None
        big, small = self._votes[(item.o1, item.o2)], self._votes[(item.o2, item.o1)]
        if big + small == 0:
            return "fallback", None
        return "scene", np.asarray([big, small], dtype=np.float64)

    def level(self, item: ViPhyItem) -> str:
        """``scene``, ``pooled`` (spatial) or ``fallback``."""
        return self.counts(item)[0]

    def typical(self, item: ViPhyItem) -> tuple[str, ...]:
        """The mined typical labels of ``item`` (release thresholds on the counts);
        empty without evidence."""
        counts = self.counts(item)[1]
        if counts is None:
            return ()
        return tuple(self.classes[i] for i in typical_from_distribution(counts))

    def score(self, item: ViPhyItem) -> np.ndarray:
        """Class probabilities of ``item`` (see the module docstring)."""
        prior = fallback_probs(self.fallback, item, self.classes)
        counts = self.counts(item)[1]
        if counts is None:
            return prior
        return (counts + self.alpha * prior) / (counts.sum() + self.alpha)

    def score_many(self, items: Sequence[ViPhyItem]) -> np.ndarray:
        """Probabilities ``[items, classes]``."""
        if not items:
            return np.zeros((0, len(self.classes)))
        return np.stack([self.score(it) for it in items])
