"""The ViPhy adapter: a split of one task as candidate-statement problems, official scoring.

ViPhy is text-only: every item (an object, or an ordered object pair in a scene) becomes
one :class:`~rcrn.structures.GroundingProblem` per class -- the statement that the class
holds, e.g. ``in a kitchen , the mug is above the table`` -- with ``match = 1`` when the
class is in the gold set.  The problems carry empty proposals.  A model's per-candidate
``match_prob`` values, renormalised per item, are the item's class probabilities.

Score files (``rcrn score --benchmark viphy``) hold one line per item with its class
probabilities separated by commas (or spaces), in the official class order:

* spatial: above, below, same level
* size (also ``size_sub``, ``size_trans``): bigger, smaller
* colour: red, orange, yellow, brown, green, blue, purple, pink, white, gray, black

Rows that do not sum to 1 are rescaled (and counted in ``rows_renormalised``).  Test rows
whose inverse pair ``(o2, o1)`` is in the task's train split are reported separately
(``subsets``): 879 of 4,599 spatial and 6,043 of 30,167 size test rows in the release.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import predictions_by_id
from benchmarks.base import (
    DataError,
    check_relation_index,
    prediction_where,
    read_number_rows,
    resolve_root,
)
from benchmarks.viphy.data import (
    CLASSES,
    SPLITS,
    TASKS,
    ViPhyItem,
    base_task,
    canonical_task,
    inverse_keys,
    read_items,
    task_file,
)
from benchmarks.viphy.metrics import normalise_rows, score_matrix
from rcrn.structures import GroundingProblem, Prediction, Proposals

__all__ = ["ViPhyBenchmark", "read_probabilities", "score_items"]


def read_probabilities(path: str | Path, n_items: int | None = None,
                       n_classes: int | None = None) -> np.ndarray:
    """Read a ViPhy prediction file: one line of class probabilities per item.

    Values are separated by commas or whitespace; a ``.npy`` file holding an
    ``[items, classes]`` matrix works too.

    Raises:
        DataError: naming the file and line of a malformed line or a wrong number of
            values, or the counts when the number of lines differs from ``n_items``.
    """
    path = Path(path)
    if path.suffix == ".npy":
        try:
            matrix = np.load(path, allow_pickle=False).astype(np.float64)
        except (OSError, ValueError, TypeError) as exc:
            raise DataError(f"{path}: not a readable numeric .npy array ({exc})") from exc
        if matrix.ndim != 2:
            raise DataError(f"{path}: expected an [items, classes] matrix, got shape "
                            f"{list(matrix.shape)}")
    else:
        matrix = read_number_rows(path, n_classes, "values",
                                  "not a text file of probabilities")
    if n_classes is not None and matrix.shape[1] != n_classes:
        raise DataError(f"{path}: {matrix.shape[1]} values per item, expected {n_classes}")
    if n_items is not None and len(matrix) != n_items:
        raise DataError(f"{path}: {len(matrix)} lines of probabilities for {n_items} items")
    return matrix


def score_items(items: Sequence[ViPhyItem], probs: Any, *, zero_shot: bool = False,
                inverse_in_train: set[tuple[str, str]] | None = None,
                what: str = "probabilities") -> dict[str, Any]:
    """Official metrics of class probabilities for ``items``.

    Args:
        items: the items of one split (all of one task).
        probs: ``[items, classes]`` in the official class order.
        zero_shot: spatial only: skip items whose gold set contains ``same level``.
        inverse_in_train: ``(o1, o2)`` pairs of the train split; when given, the metrics
            are also reported for the items whose inverse pair ``(o2, o1)`` is among them
            and for the others (``subsets``).
        what: names the source in messages.

    Returns:
        ``task``, ``count``, ``r_acc``, ``confidence``, ``f1``, ``per_class_f1``,
        ``rows_renormalised``, ``skipped`` (zero-shot) and ``subsets``.

    Raises:
        DataError: a shape mismatch or invalid probabilities.
    """
    if not items:
        raise DataError(f"{what}: no items to score")
    task = items[0].task
    classes = CLASSES[base_task(task)]
    matrix, rescaled = normalise_rows(probs, what)
    if matrix.shape != (len(items), len(classes)):
        raise DataError(f"{what}: shape {list(matrix.shape)} for {len(items)} items and "
                        f"{len(classes)} classes ({', '.join(classes)})")
    gold = np.asarray([it.gold_vector() for it in items], dtype=np.int64)
    keep = np.ones(len(items), dtype=bool)
    if zero_shot:
        if base_task(task) != "spatial":
            raise DataError(f"ViPhy {task}: zero-shot skipping applies to the spatial task only")
        keep = gold[:, classes.index("same level")] == 0
    out: dict[str, Any] = {"task": task}
    main = score_matrix(gold[keep], matrix[keep], classes)
    out.update({k: main[k] for k in ("count", "r_acc", "confidence", "f1")})
    out["per_class_f1"] = main["per_class_f1"]
    out["rows_renormalised"] = rescaled
    if zero_shot:
        out["skipped"] = int((~keep).sum())
    if inverse_in_train is not None and base_task(task) != "color":
        inv = np.asarray([(it.o2, it.o1) in inverse_in_train for it in items], dtype=bool)
        subsets: dict[str, dict[str, Any]] = {}
        for name, mask in (("all", keep), ("inverse_in_train", keep & inv),
                           ("no_inverse_in_train", keep & ~inv)):
            part = score_matrix(gold[mask], matrix[mask], classes)
            subsets[name] = {k: part[k] for k in ("count", "r_acc", "confidence", "f1")}
        out["subsets"] = subsets
    return out


def _split_parts(split: str) -> tuple[str | None, str]:
    parts = [p for p in re.split(r"[/\\]+", split.strip()) if p]
    if len(parts) == 2:
        return parts[0], parts[1]
    if len(parts) == 1:
        return None, parts[0]
    raise DataError(f"ViPhy: split {split!r} is not 'SPLIT' or 'TASK/SPLIT'")


class ViPhyBenchmark:
    """One split of one ViPhy task: items, candidate problems and official scoring.

    Args:
        root: the release's ``dataset`` directory (holding ``spatial/``, ``size/``, ...),
            a task directory (holding ``train.csv`` ...), or a data file.
        split: ``train``, ``val`` or ``test``; ``TASK/SPLIT`` (e.g. ``size_sub/test``)
            names the task too.  A data file named ``train``/``val``/``test`` gives its
            own split.
        task: ``spatial``, ``size``, ``size_sub``, ``size_trans`` or ``color``
            (``colour`` too); may be omitted when the split, the directory or the file's
            folder names it.
        zero_shot: spatial only: score without the items whose gold set contains
            ``same level`` (the paper's zero-shot setting).
        train: the train file used to find test rows whose inverse pair is in train
            (default: ``train.csv`` of the task -- of ``size`` for ``size_sub`` and
            ``size_trans`` -- when present).

    Raises:
        DataError: missing or malformed data, or an unknown task or split.
    """

    name = "viphy"

    def __init__(self, root: str | Path, split: str = "test", task: str | None = None, *,
                 zero_shot: bool = False, train: str | Path | None = None) -> None:
        base = resolve_root(root, "ViPhy")
        split_task, part = _split_parts(split)
        if split_task is not None:
            split_task = canonical_task(split_task)
            if task is not None and canonical_task(task) != split_task:
                raise DataError(f"ViPhy: split {split!r} and task {task!r} disagree")
            task = split_task
        if base.is_file():
            self.path = base
            folder = base.parent
            task = canonical_task(task if task is not None else self._task_from(folder.name))
            if base.stem in SPLITS:
                part = base.stem
        else:
            if task is None:
                task = self._task_from(base.name)
            task = canonical_task(task)
            if part not in SPLITS:
                raise DataError(f"ViPhy: unknown split {part!r}; use one of {', '.join(SPLITS)}")
            fname = task_file(task, part)
            candidates = [base / task / fname, base / "dataset" / task / fname, base / fname]
            found = [c for c in candidates if c.is_file()]
            if not found:
                raise DataError(f"ViPhy {task}: split {part} not found; looked for "
                                f"{', '.join(str(c) for c in candidates)}")
            self.path = found[0]
            folder = self.path.parent
        self.task = task
        self.split = part
        self.zero_shot = bool(zero_shot)
        if self.zero_shot and base_task(task) != "spatial":
            raise DataError(f"ViPhy {task}: zero_shot applies to the spatial task only")
        self.items: list[ViPhyItem] = read_items(self.path, task, part)
        self.train_path = self._train_file(folder, train)
        self._train_pairs: set[tuple[str, str]] | None = None

    @staticmethod
    def _task_from(name: str) -> str:
        try:
            return canonical_task(name)
        except DataError:
            raise DataError(f"ViPhy: cannot tell the task from {name!r}; pass task= "
                            f"({', '.join(TASKS)})") from None

    def _train_file(self, folder: Path, train: str | Path | None) -> Path | None:
        if base_task(self.task) == "color":
            return None
        if train is not None:
            path = Path(train)
            if not path.is_file():
                raise DataError(f"ViPhy {self.task}: train file {path} does not exist")
            return path
        if self.task in ("size_sub", "size_trans"):
            for candidate in (folder.parent / "size" / "train.csv", folder / "train.csv"):
                if candidate.is_file():
                    return candidate
            return None
        candidate = folder / "train.csv"
        return candidate if candidate.is_file() else None

    # ------------------------------------------------------------ items
    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[ViPhyItem]:
        return iter(self.items)

    @property
    def classes(self) -> tuple[str, ...]:
        """The task's classes in the official order (the columns of a score file)."""
        return CLASSES[base_task(self.task)]

    def train_pairs(self) -> set[tuple[str, str]] | None:
        """The ``(o1, o2)`` pairs of the train split (None when it is not available)."""
        if self.train_path is None:
            return None
        if self._train_pairs is None:
            if self.train_path.resolve() == self.path.resolve():
                train_items = self.items
            else:
                train_items = read_items(self.train_path, base_task(self.task), "train")
            self._train_pairs = inverse_keys(train_items)
        return self._train_pairs

    def inverse_in_train(self) -> list[bool]:
        """Per item: is its inverse pair ``(o2, o1)`` in the train split."""
        pairs = self.train_pairs()
        if pairs is None:
            return [False] * len(self.items)
        return [(it.o2, it.o1) in pairs for it in self.items]

    def scored_items(self) -> list[ViPhyItem]:
        """The items the metrics count (zero-shot spatial drops gold sets with ``=``)."""
        if not self.zero_shot:
            return list(self.items)
        return [it for it in self.items if "same level" not in it.gold]

    # ------------------------------------------------------------ problems
    def problem(self, index: int, cls: str) -> GroundingProblem:
        """The candidate statement ``cls`` of item ``index`` (match = ``cls`` in gold)."""
        it = self.items[index]
        try:
            graph = it.candidate_graphs()[self.classes.index(cls)]
        except ValueError as exc:
            raise DataError(f"{self.path} line {it.line}: {exc}") from exc
        meta = {"benchmark": "viphy", "task": self.task, "split": self.split, "item": index,
                "candidate": cls, "candidates": list(self.classes), "gold": list(it.gold),
                "o1": it.o1, "o2": it.o2, "scene": it.scene, "prompt": it.prompt()}
        empty = Proposals(boxes=np.zeros((0, 4), dtype=np.float32), image_size=(1, 1),
                          image_id="")
        return GroundingProblem(graph=graph, proposals=empty, match=int(cls in it.gold),
                                id=it.option_id(cls), meta=meta)

    def problems(self) -> Iterator[GroundingProblem]:
        """Every candidate of every item, item-major, in class order."""
        for i in range(len(self.items)):
            for cls in self.classes:
                yield self.problem(i, cls)

    # ------------------------------------------------------------ scoring
    def score(self, probs: Any, what: str = "probabilities") -> dict[str, Any]:
        """Official metrics of an ``[items, classes]`` probability matrix.

        With ``zero_shot`` the matrix may also hold only the scored items' rows.
        """
        matrix = np.asarray(probs, dtype=np.float64)
        items = self.items
        if self.zero_shot and matrix.ndim == 2 and len(matrix) != len(self.items):
            kept = self.scored_items()
            if len(matrix) == len(kept):
                items = kept
        return score_items(items, matrix, zero_shot=self.zero_shot,
                           inverse_in_train=self.train_pairs(), what=what)

    def evaluate(self, predictions: Sequence[Prediction]) -> dict[str, Any]:
        """Official metrics of model predictions, one per candidate problem (by id).

        Each item's candidate ``match_prob`` values, divided by their sum, are its
        class probabilities.
        """
        ids = [it.option_id(c) for it in self.items for c in self.classes]
        ordered = predictions_by_id(predictions, ids, f"viphy {self.task} {self.split}")
        n_relations = 0 if base_task(self.task) == "color" else 1  # see candidate_graph
        for p in ordered:
            check_relation_index(p, n_relations, prediction_where(predictions, p.id))
        matrix = np.asarray([p.match_prob for p in ordered], dtype=np.float64)
        return self.score(matrix.reshape(len(self.items), len(self.classes)),
                          what="predictions")

    def score_file(self, path: str | Path) -> dict[str, Any]:
        """Official metrics of a prediction file (see :func:`read_probabilities`)."""
        matrix = read_probabilities(path, n_classes=len(self.classes))
        wanted = {len(self.items)}
        if self.zero_shot:
            wanted.add(len(self.scored_items()))
        if len(matrix) not in wanted:
            raise DataError(f"{path}: {len(matrix)} lines of probabilities for "
                            f"{len(self.items)} items"
                            + (f" ({len(self.scored_items())} scored zero-shot)"
                               if self.zero_shot else ""))
        return self.score(matrix, what=str(path))
