"""The benchmark protocol every adapter implements."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rcrn.structures import GroundingProblem, Prediction


class DataError(ValueError):
    """Bad input data; the message names the file and the line or record."""


@runtime_checkable
class Benchmark(Protocol):
    """A split of a benchmark, expressed as graph-grounding problems.

    Implementations take ``(root, split, **options)`` in their constructor,
    read only local files under ``root`` and never download anything.
    """

    name: str
    split: str

    def __len__(self) -> int:
        """Number of items in the split."""

    def problems(self) -> Iterator[GroundingProblem]:
        """The items as ``GroundingProblem``s, in file order."""

    def evaluate(self, predictions: Sequence[Prediction]) -> dict[str, Any]:
        """Official metrics of ``predictions`` (one per problem, matched by id); rates in [0, 1]."""


def resolve_root(root: str | Path, what: str) -> Path:
    path = Path(root).expanduser()
    if not path.exists():
        raise DataError(f"{what}: data root {path} does not exist")
    return path


def read_number_rows(path: Path, width: int | None, noun: str = "values",
                     not_text: str = "not a text file of numbers") -> np.ndarray:
    """Read a text file of one row of numbers per line (commas or whitespace between).

    Trailing blank lines are ignored.  Every row must hold ``width`` numbers (or as
    many as the first row when ``width`` is None).

    Raises:
        DataError: naming the file and line of a malformed row (``noun`` names the
            numbers in the message), or ``not_text`` when the file is not text.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: {not_text}") from exc
    while lines and not lines[-1].strip():
        lines.pop()
    rows: list[list[float]] = []
    for lineno, line in enumerate(lines, 1):
        fields = [f for f in re.split(r"[,\s]+", line.strip()) if f]
        try:
            row = [float(f) for f in fields]
        except ValueError as exc:
            raise DataError(f"{path} line {lineno}: not a list of numbers: "
                            f"{line.strip()!r}") from exc
        want = width if width is not None else (len(rows[0]) if rows else None)
        if not row or (want is not None and len(row) != want):
            raise DataError(f"{path} line {lineno}: {len(row)} {noun}, expected "
                            f"{want if want is not None else 'at least 1'}")
        rows.append(row)
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)


def read_json(path: Path) -> Any:
    """Parse a JSON file; unreadable or invalid files raise DataError naming the file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from exc
    except ValueError as exc:
        raise DataError(f"{path}: invalid JSON ({exc})") from exc
