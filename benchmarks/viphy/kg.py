"""A knowledge-graph scorer for ViPhy size: transitive inference over the train relations.

The ``size_trans`` test set pairs objects that the size data links only through other
objects (``a > b`` and ``b > c`` give ``a > c``).  :class:`SizeGraph` stores every train
relation as a directed edge from the bigger to the smaller object and scores an ordered
pair ``(o1, o2)`` by the paths between them, both ways:

* ``e(a -> b) = paths * decay ** (length - 1)``, where ``length`` is the shortest path
  length from ``a`` to ``b`` and ``paths`` the number of shortest paths (capped at
  ``max_paths``); no path gives 0.  A direct edge is worth 1 per train row.
* ``P(bigger) = (e(o1 -> o2) + alpha * q) / (e(o1 -> o2) + e(o2 -> o1) + alpha)``, with
  ``q`` the fallback's ``P(bigger)``: paths one way only push the probability towards
  that side, paths both ways (contradicting train rows) balance out, and no path at all
  leaves the fallback (by default a :class:`~benchmarks.viphy.probe.FrequencyPrior` of
  the same train rows; uniform when none is fitted).

An object missing from the graph is looked up by its head noun (its last word) when that
is a node, so that ``tabby cat`` (``size_sub``) reads as ``cat``.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.viphy.data import CLASSES, ViPhyItem, base_task
from benchmarks.viphy.probe import FrequencyPrior, fallback_probs

__all__ = ["SizeGraph"]


class SizeGraph:
    """Directed size graph ``bigger -> smaller`` from train rows, scored by paths.

    Args:
        decay: weight of each extra step of a path (``0 < decay <= 1``).
        alpha: pseudo-count of the fallback in the path evidence.
        max_depth: longest path searched (``None``: any length).
        max_paths: cap on the number of shortest paths counted per direction.
        head_backoff: look up an unknown object by its last word.
        fallback: the scorer of pairs without a path (default: the frequency prior of the
            train rows given to :meth:`fit`).
    """

    task = "size"
    classes = CLASSES["size"]

    def __init__(self, *, decay: float = 0.5, alpha: float = 0.5, max_depth: int | None = None,
                 max_paths: int = 100, head_backoff: bool = True,
                 fallback: Any | None = None) -> None:
        if not 0 < decay <= 1:
            raise ValueError(f"decay must be in (0, 1], got {decay}")
        if alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {alpha}")
        if max_depth is not None and max_depth < 1:
            raise ValueError(f"max_depth must be at least 1, got {max_depth}")
        self.decay = float(decay)
        self.alpha = float(alpha)
        self.max_depth = max_depth
        self.max_paths = int(max_paths)
        self.head_backoff = bool(head_backoff)
        self.fallback = fallback
        self._own_fallback = fallback is None
        self.edges: dict[str, Counter[str]] = {}
        self._bfs: dict[str, dict[str, tuple[int, int]]] = {}

    # ------------------------------------------------------------ building
    def add(self, bigger: str, smaller: str, weight: int = 1) -> None:
        """Add ``weight`` train rows saying ``bigger`` is bigger than ``smaller``."""
        if bigger == smaller:
            return
        self.edges.setdefault(bigger, Counter())[smaller] += int(weight)
        self.edges.setdefault(smaller, Counter())
        self._bfs.clear()

    def fit(self, train: Sequence[ViPhyItem]) -> SizeGraph:
        """Add an edge per train row (``bigger``: ``o1 -> o2``; ``smaller``: ``o2 -> o1``)
        and fit the default fallback on the same rows.  Returns ``self``."""
        if not train:
            raise ValueError("no training items")
        for it in train:
            if base_task(it.task) != "size":
                raise ValueError(f"item {it.id} is of task {it.task}; the size graph scores "
                                 f"size")
            if it.gold == ("bigger",):
                self.add(it.o1, it.o2)
            elif it.gold == ("smaller",):
                self.add(it.o2, it.o1)
        if self._own_fallback:
            self.fallback = FrequencyPrior("size").fit(train)
        return self

    @property
    def nodes(self) -> list[str]:
        """The objects of the graph, sorted."""
        return sorted(self.edges)

    # ------------------------------------------------------------ paths
    def _reach(self, source: str) -> dict[str, tuple[int, int]]:
        """``node -> (shortest length, number of shortest paths)`` from ``source``."""
        hit = self._bfs.get(source)
        if hit is not None:
            return hit
        found: dict[str, tuple[int, int]] = {source: (0, 1)}
        queue = deque([source])
        while queue:
            node = queue.popleft()
            length, paths = found[node]
            if self.max_depth is not None and length >= self.max_depth:
                continue
            for nxt, weight in self.edges.get(node, {}).items():
                add = min(paths * weight, self.max_paths)
                if nxt not in found:
                    found[nxt] = (length + 1, add)
                    queue.append(nxt)
                elif found[nxt][0] == length + 1:
                    found[nxt] = (length + 1, min(found[nxt][1] + add, self.max_paths))
        self._bfs[source] = found
        return found

    def node(self, name: str) -> str | None:
        """The graph node standing for ``name``: itself, else its head noun, else None."""
        if name in self.edges:
            return name
        if self.head_backoff:
            head = name.split()[-1] if name.split() else ""
            if head in self.edges:
                return head
        return None

    def path_stats(self, a: str, b: str) -> tuple[int, int] | None:
        """``(shortest length, shortest paths)`` from ``a`` to ``b`` (objects, mapped by
        :meth:`node`), or None without a path."""
        na, nb = self.node(a), self.node(b)
        if na is None or nb is None or na == nb:
            return None
        hit = self._reach(na).get(nb)
        return hit if hit is not None and hit[0] > 0 else None

    def evidence(self, a: str, b: str) -> float:
        """``paths * decay ** (length - 1)`` of the shortest paths ``a -> b`` (0: none)."""
        stats = self.path_stats(a, b)
        if stats is None:
            return 0.0
        length, paths = stats
        return float(paths) * self.decay ** (length - 1)

    def path(self, a: str, b: str) -> list[str] | None:
        """One shortest chain ``a > ... > b`` (graph nodes), or None."""
        na, nb = self.node(a), self.node(b)
        if na is None or nb is None or na == nb:
            return None
        parent: dict[str, str | None] = {na: None}
        queue = deque([na])
        while queue:
            node = queue.popleft()
            if node == nb:
                chain = [node]
                while parent[chain[-1]] is not None:
                    chain.append(parent[chain[-1]])  # type: ignore[arg-type]
                return chain[::-1]
            for nxt in self.edges.get(node, {}):
                if nxt not in parent:
                    parent[nxt] = node
                    queue.append(nxt)
        return None

    # ------------------------------------------------------------ scoring
    def level(self, item: ViPhyItem) -> str:
        """``direct`` (an edge either way), ``path`` (a longer path either way) or
        ``fallback``."""
        lengths = [s[0] for s in (self.path_stats(item.o1, item.o2),
                                  self.path_stats(item.o2, item.o1)) if s is not None]
        if not lengths:
            return "fallback"
        return "direct" if min(lengths) == 1 else "path"

    def score(self, item: ViPhyItem) -> np.ndarray:
        """``[P(bigger), P(smaller)]`` of ``item`` (see the module docstring)."""
        if base_task(item.task) != "size":
            raise ValueError(f"item {item.id} is of task {item.task}; the size graph scores "
                             f"size")
        prior = fallback_probs(self.fallback, item, self.classes)
        fwd, back = self.evidence(item.o1, item.o2), self.evidence(item.o2, item.o1)
        if fwd == 0 and back == 0:
            return prior
        bigger = (fwd + self.alpha * prior[0]) / (fwd + back + self.alpha)
        return np.asarray([bigger, 1.0 - bigger])

    def score_many(self, items: Sequence[ViPhyItem]) -> np.ndarray:
        """Probabilities ``[items, 2]``."""
        if not items:
            return np.zeros((0, len(self.classes)))
        return np.stack([self.score(it) for it in items])
