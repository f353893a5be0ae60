"""The benchmark protocol every adapter implements."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

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
