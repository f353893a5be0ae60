"""Reading the ViPhy release: spatial / size CSVs and colour JSON, as typed items.

Layouts (``<root>/<task>/<split>.<ext>``):

================  ===================================  =========================
task              header                               gold label set
================  ===================================  =========================
``spatial``       ``,o1,o2,>,=,<,scene,freq,typical``  ``typical``: 1-2 of > = <
``size``          ``,o1,o2,>,<,typical``               ``typical``: one of > <
``size_sub``      ``o1,o2,>,<,typical`` (no index)     as ``size`` (test only)
``size_trans``    ``o1,o2,>,<,typical`` (no index)     as ``size`` (test only)
``color``         ``{object: {color: prob}}`` (JSON)   the inner keys
================  ===================================  =========================

The leading unnamed index column is optional for every CSV (pandas writes it; the
``size_sub`` / ``size_trans`` files lack it).  Class orders follow the official probe:
spatial ``above, below, same level`` (``>``, ``<``, ``=``), size ``bigger, smaller``
(``>``, ``<``), colour ``red ... black`` (:data:`COLORS`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.base import DataError, read_json
from rcrn.structures import Entity, LanguageGraph, Relation

__all__ = [
    "TASKS",
    "SPLITS",
    "COLORS",
    "CLASSES",
    "SPATIAL_SIGNS",
    "SIZE_SIGNS",
    "ViPhyItem",
    "canonical_task",
    "base_task",
    "task_file",
    "read_csv_items",
    "read_color_items",
    "read_items",
    "prompt",
    "candidate_graph",
    "inverse_keys",
    "inverse_vector",
    "RELATION_PHRASES",
]

#: Every task directory of the release.
TASKS = ("spatial", "size", "size_sub", "size_trans", "color")
#: The split files.
SPLITS = ("train", "val", "test")
#: The 11 basic colours, in the official class order.
COLORS = ("red", "orange", "yellow", "brown", "green", "blue", "purple", "pink", "white",
          "gray", "black")
#: Class names per base task, in the official order of the probe's outputs.
CLASSES: dict[str, tuple[str, ...]] = {
    "spatial": ("above", "below", "same level"),
    "size": ("bigger", "smaller"),
    "color": COLORS,
}
#: ``typical`` sign -> spatial class.
SPATIAL_SIGNS = {">": "above", "<": "below", "=": "same level"}
#: ``typical`` sign -> size class.
SIZE_SIGNS = {">": "bigger", "<": "smaller"}
#: The column of counts behind each class (CSV tasks).
_COUNT_COLUMNS = {"spatial": (">", "<", "="), "size": (">", "<")}
_INVERSE = {"spatial": (1, 0, 2), "size": (1, 0)}
_ALIASES = {"colour": "color", "colors": "color", "colours": "color", "sizes": "size",
            "size-sub": "size_sub", "size-trans": "size_trans", "subtype": "size_sub",
            "transitive": "size_trans", "space": "spatial"}

#: Relation phrases of the candidate statements (spatial and size).
RELATION_PHRASES: dict[str, str] = {
    "above": "above", "below": "below", "same level": "at a similar level as",
    "bigger": "bigger than", "smaller": "smaller than",
}


def canonical_task(task: str) -> str:
    """The task directory name (``spatial``, ``size``, ``size_sub``, ``size_trans``,
    ``color``) of a name or alias such as ``colour``.

    Raises:
        DataError: an unknown task.
    """
    key = task.strip().lower().replace(" ", "_")
    key = _ALIASES.get(key, key)
    if key not in TASKS:
        raise DataError(f"ViPhy: unknown task {task!r}; use one of {', '.join(TASKS)}")
    return key


def base_task(task: str) -> str:
    """The class set a task uses: ``size_sub`` and ``size_trans`` score as ``size``."""
    task = canonical_task(task)
    return "size" if task.startswith("size") else task


def task_file(task: str, split: str) -> str:
    """The file name of a split of a task, e.g. ``test.csv`` or ``val.json``."""
    return f"{split}.json" if canonical_task(task) == "color" else f"{split}.csv"


@dataclass
class ViPhyItem:
    """One ViPhy item: an object (colour) or an ordered object pair (spatial, size).

    Attributes:
        index: position in the file (0-based).
        task: the task directory (``spatial``, ``size``, ``size_sub``, ``size_trans``,
            ``color``).
        split: ``train``, ``val`` or ``test``.
        o1: the object (colour) or the first object of the pair.
        o2: the second object of the pair (``""`` for colour).
        gold: the gold label set, as class names in the official class order.
        scene: spatial only: ``kitchen``, ``living_room``, ``bathroom``, ``bedroom``,
            ``office``.
        counts: the raw label counts or probabilities, by class name.
        freq: spatial only: the pair frequency column.
        line: where the item was read: a CSV line number (1-based, header = line 1)
            or, for colour, the record number (0-based) in the JSON object.
        id: identifier prefix of the item's problems, ``viphy:<task>:<split>:<index>``.
    """

    index: int
    task: str
    split: str
    o1: str
    o2: str = ""
    gold: tuple[str, ...] = ()
    scene: str = ""
    counts: dict[str, float] = field(default_factory=dict)
    freq: int | None = None
    line: int = 0
    id: str = ""

    @property
    def classes(self) -> tuple[str, ...]:
        """The task's classes in the official order."""
        return CLASSES[base_task(self.task)]

    def gold_vector(self) -> list[int]:
        """The multi-hot gold vector over :attr:`classes`."""
        return [int(c in self.gold) for c in self.classes]

    def prompt(self) -> str:
        """The fine-tuning prompt of the paper (Table 2) for this item."""
        return prompt(self)

    def candidate_graphs(self) -> list[LanguageGraph]:
        """One statement graph per class, in class order (see :func:`candidate_graph`)."""
        return [candidate_graph(self, c) for c in self.classes]

    def option_id(self, cls: str) -> str:
        """The problem id of candidate class ``cls``."""
        return f"{self.id}:{cls.replace(' ', '_')}"


# ---------------------------------------------------------------- text views
def _words(name: str) -> list[str]:
    return name.split()


def prompt(item: ViPhyItem) -> str:
    """The paper's fine-tuning prompt (Table 2, the text after ``[CLS]``).

    ``color of O``; ``the size of O1 in comparison to O2``; ``in a S, the O1 is located
    in comparison to O2`` (``living_room`` read as ``living room``).
    """
    task = base_task(item.task)
    o1, o2 = " ".join(_words(item.o1)), " ".join(_words(item.o2))
    if task == "color":
        return f"color of {o1}"
    if task == "size":
        return f"the size of {o1} in comparison to {o2}"
    return f"in a {item.scene.replace('_', ' ')}, the {o1} is located in comparison to {o2}"


def candidate_graph(item: ViPhyItem, cls: str) -> LanguageGraph:
    """The statement that class ``cls`` holds for ``item``, as a language graph.

    * spatial: ``in a kitchen , the mug is above the table`` -- entities ``the mug``
      (root) and ``the table`` joined by the candidate relation (``above``, ``below``,
      ``at a similar level as``); the scene words precede the statement.
    * size: ``the cat is bigger than the dog`` (``bigger than`` / ``smaller than``).
    * colour: ``the banana is yellow`` -- one entity, ``the banana``, with the colour
      as its modifier and no relation.

    Raises:
        DataError: ``cls`` is not a class of the item's task.
    """
    task = base_task(item.task)
    if cls not in CLASSES[task]:
        raise DataError(f"ViPhy {item.task}: {cls!r} is not one of {', '.join(CLASSES[task])}")
    w1 = _words(item.o1)
    if task == "color":
        tokens = ["the", *w1, "is", cls]
        entity = Entity(text=" ".join(["the", *w1]), span=(0, 1 + len(w1)), head=w1[-1],
                        modifiers=[cls])
        return LanguageGraph(tokens=tokens, entities=[entity], relations=[], root=0,
                             text=" ".join(tokens))
    w2 = _words(item.o2)
    rel = RELATION_PHRASES[cls].split()
    prefix = ["in", "a", *item.scene.replace("_", " ").split(), ","] if task == "spatial" else []
    s1 = len(prefix)
    tokens = [*prefix, "the", *w1, "is", *rel, "the", *w2]
    r0 = s1 + 1 + len(w1) + 1
    o0 = r0 + len(rel)
    subj = Entity(text=" ".join(["the", *w1]), span=(s1, s1 + 1 + len(w1)), head=w1[-1])
    obj = Entity(text=" ".join(["the", *w2]), span=(o0, len(tokens)), head=w2[-1])
    relation = Relation(subject=0, object=1, text=" ".join(rel), span=(r0, o0))
    return LanguageGraph(tokens=tokens, entities=[subj, obj], relations=[relation], root=0,
                         text=" ".join(tokens).replace(" , ", ", "))


def inverse_keys(items: Iterable[ViPhyItem]) -> set[tuple[str, str]]:
    """The ``(o1, o2)`` pairs of ``items`` (to test a row's inverse ``(o2, o1)`` against)."""
    return {(it.o1, it.o2) for it in items}


def inverse_vector(task: str, vector: Sequence[float]) -> list[float]:
    """A class vector of ``(o1, o2)`` re-ordered as the one of ``(o2, o1)``.

    Above <-> below (same level stays), bigger <-> smaller; colour has no pairs.
    """
    order = _INVERSE[base_task(task)]
    return [vector[i] for i in order]


# ---------------------------------------------------------------- reading
def _parse_typical(value: str, task: str, where: str) -> tuple[str, ...]:
    signs = SPATIAL_SIGNS if task == "spatial" else SIZE_SIGNS
    parts = [p.strip() for p in value.replace(" ", ",").split(",") if p.strip()]
    if not parts:
        raise DataError(f"{where}: empty 'typical' label set")
    unknown = [p for p in parts if p not in signs]
    if unknown:
        raise DataError(f"{where}: 'typical' holds {unknown[0]!r}, not one of "
                        f"{', '.join(signs)}")
    if len(set(parts)) != len(parts):
        raise DataError(f"{where}: 'typical' {value!r} repeats a label")
    if task == "size" and len(parts) != 1:
        raise DataError(f"{where}: a size item has one typical label, got {value!r}")
    names = {signs[p] for p in parts}
    return tuple(c for c in CLASSES[task] if c in names)


def _count(row: dict[str, str], column: str, where: str) -> float:
    raw = (row.get(column) or "").strip()
    try:
        value = float(raw)
    except ValueError as exc:
        raise DataError(f"{where}: column {column!r} is not a number: {raw!r}") from exc
    if not math.isfinite(value) or value < 0:
        raise DataError(f"{where}: column {column!r} must be a finite count >= 0, got {raw!r}")
    return value


def read_csv_items(path: str | Path, task: str, split: str = "test") -> list[ViPhyItem]:
    """Read a spatial or size CSV (with or without the leading unnamed index column).

    Args:
        path: the CSV file.
        task: ``spatial``, ``size``, ``size_sub`` or ``size_trans``.
        split: the split the file holds (for item ids).

    Raises:
        DataError: naming the file and line of a missing column, a malformed count or
            label set, or an empty object name; or an empty file.
    """
    path = Path(path)
    task = canonical_task(task)
    base = base_task(task)
    if base == "color":
        raise DataError(f"{path}: the colour task is a JSON file, not a CSV")
    required = ["o1", "o2", *_COUNT_COLUMNS[base], "typical"] + (
        ["scene"] if base == "spatial" else [])
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a UTF-8 text file ({exc.reason})") from exc
    except csv.Error as exc:
        raise DataError(f"{path}: malformed CSV ({exc})") from exc
    if not rows:
        raise DataError(f"{path}: empty file (expected a header line)")
    header = [h.strip() for h in rows[0]]
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    has_index = bool(header) and header[0] in ("", "Unnamed: 0")
    names = header[1:] if has_index else header
    missing = [c for c in required if c not in names]
    if missing:
        layout = (",o1,o2,>,=,<,scene,freq,typical" if base == "spatial"
                  else ",o1,o2,>,<,typical")
        raise DataError(f"{path} line 1: header lacks column(s) {', '.join(missing)}; "
                        f"expected {layout!r} (the leading index column is optional)")
    items: list[ViPhyItem] = []
    for lineno, raw in enumerate(rows[1:], 2):
        if not raw or not any(cell.strip() for cell in raw):
            continue
        where = f"{path} line {lineno}"
        if len(raw) != len(header):
            raise DataError(f"{where}: {len(raw)} fields, the header names {len(header)}")
        cells = raw[1:] if has_index else raw
        row = dict(zip(names, cells))
        o1, o2 = row["o1"].strip(), row["o2"].strip()
        if not o1 or not o2:
            raise DataError(f"{where}: empty object name")
        counts = {cls: _count(row, col, where)
                  for cls, col in zip(CLASSES[base], _COUNT_COLUMNS[base])}
        gold = _parse_typical(row["typical"], base, where)
        freq = None
        if base == "spatial":
            if not row["scene"].strip():
                raise DataError(f"{where}: empty scene")
            if "freq" in row and row["freq"].strip():
                freq = int(_count(row, "freq", where))
        index = len(items)
        items.append(ViPhyItem(index=index, task=task, split=split, o1=o1, o2=o2, gold=gold,
                               scene=row.get("scene", "").strip(), counts=counts, freq=freq,
                               line=lineno, id=f"viphy:{task}:{split}:{index}"))
    if not items:
        raise DataError(f"{path}: no rows after the header")
    return items


def read_color_items(path: str | Path, split: str = "test") -> list[ViPhyItem]:
    """Read a colour file: one JSON object ``{object: {color: prob}}``.

    The keys of each inner object are the item's gold colours.

    Raises:
        DataError: naming the file and record (object number and name) of an unknown
            colour, a non-numeric probability or an empty colour set.
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict) or not data:
        raise DataError(f"{path}: expected a non-empty JSON object {{object: {{color: prob}}}}")
    items: list[ViPhyItem] = []
    for index, (obj, colors) in enumerate(data.items()):
        where = f"{path} record {index} ({obj!r})"
        if not isinstance(obj, str) or not obj.strip():
            raise DataError(f"{where}: empty object name")
        if not isinstance(colors, dict) or not colors:
            raise DataError(f"{where}: expected a non-empty object {{color: prob}}")
        counts: dict[str, float] = {}
        for color, prob in colors.items():
            if color not in COLORS:
                raise DataError(f"{where}: {color!r} is not one of the 11 colours "
                                f"({', '.join(COLORS)})")
            if isinstance(prob, bool) or not isinstance(prob, (int, float)) \
                    or not math.isfinite(prob) or prob < 0:
                raise DataError(f"{where}: probability of {color!r} must be a number >= 0, "
                                f"got {prob!r}")
            counts[color] = float(prob)
        gold = tuple(c for c in COLORS if c in counts)
        items.append(ViPhyItem(index=index, task="color", split=split, o1=obj.strip(),
                               gold=gold, counts=counts, line=index,
                               id=f"viphy:color:{split}:{index}"))
    return items


def read_items(path: str | Path, task: str, split: str = "test") -> list[ViPhyItem]:
    """Read any ViPhy file of ``task`` (CSV or colour JSON)."""
    task = canonical_task(task)
    if task == "color":
        return read_color_items(path, split)
    return read_csv_items(path, task, split)
