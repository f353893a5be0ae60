"""The benchmark protocol every adapter implements."""

from __future__ import annotations

import json
import math
import numbers
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rcrn.errors import RcrnError
from rcrn.structures import GroundingProblem, Prediction


class DataError(RcrnError, ValueError):
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
    many as the first row when ``width`` is None); a file without rows is an error.

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
    if not rows:
        raise DataError(f"{path}: no lines of {noun}")
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)


def read_json(path: Path) -> Any:
    """Parse a JSON file; unreadable or invalid files raise DataError naming the file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from exc
    except ValueError as exc:
        raise DataError(f"{path}: invalid JSON ({exc})") from exc
    except RecursionError:
        raise DataError(f"{path}: invalid JSON (nested too deeply)") from None


# ---------------------------------------------------------------- text files
def text_lines(path: str | Path, what: str = "text") -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 text file, read line by line.

    Raises:
        DataError: the file cannot be opened (a directory, missing, no permission) or a
            line is not UTF-8, naming the file (and line).
    """
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: is a directory, not a {what} file")
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from exc
    with fh:
        for number, raw in enumerate(fh, 1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"{path} line {number}: not UTF-8 text (byte "
                                f"{raw[exc.start]:#04x} at column {exc.start + 1})") from None


# ---------------------------------------------------------------- image paths


def real_matrix(values: Any, what: str, shape: str) -> np.ndarray:
    """``values`` as a float64 array, refusing ragged rows and values that are not real
    numbers (complex, text, objects); ``what`` names them, ``shape`` their layout."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged rows
        raise DataError(f"{what}: not an {shape} matrix of numbers ({exc})") from None
    if raw.dtype.kind not in "biuf":
        raise DataError(f"{what}: must be real numbers, got {raw.dtype} values")
    return raw.astype(np.float64)

def json_lines(path: str | Path, what: str = "jsonl") -> Iterator[tuple[int, str, Any]]:
    """``(line number, "FILE line N", record)`` of every non-blank line of a JSON-lines
    file (:func:`text_lines`).

    Raises:
        DataError: naming the file and line of a line that is not JSON.
    """
    for lineno, line in text_lines(path, what):
        if not line.strip():
            continue
        where = f"{path} line {lineno}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise DataError(f"{where}: invalid JSON ({exc})") from None
        except RecursionError:
            raise DataError(f"{where}: invalid JSON (nested too deeply)") from None
        yield lineno, where, record

def confined_path(root: str | Path, name: str, folder: str = "", what: str = "image") -> Path:
    """The path of ``name`` (under ``folder``) of ``root``, refused when it leads out of it.

    The path is checked without following links (an image folder may be a link to a
    shared copy): after normalising ``..``, it must stay inside ``root`` and name
    something below it.  Whether the file exists is not checked.

    Raises:
        DataError: ``name`` is not a non-empty string, holds a NUL character, is
            absolute or leads out of ``root`` with ``..``.
    """
    if not isinstance(name, str) or not name.strip():
        raise DataError(f"{what} path {name!r} is not a file name")
    if "\0" in name:
        raise DataError(f"{what} path {name!r} holds a NUL character")
    base = Path(os.path.normpath(Path(root).expanduser().absolute()))
    candidate = Path(os.path.normpath(base / folder / name))
    if candidate == base or not candidate.is_relative_to(base):
        raise DataError(f"{what} path {name!r} leads out of the data root {base}")
    return candidate


def find_image(root: str | Path, name: str, folders: Sequence[str] = ("",)) -> Path:
    """The file of image ``name`` under the first of ``folders`` of ``root`` that holds it.

    Raises:
        DataError: the path leads out of ``root`` (see :func:`confined_path`), or no
            folder holds the file.
    """
    tried = []
    for folder in folders:
        candidate = confined_path(root, name, folder)
        if candidate.is_file():
            return candidate
        tried.append(str(candidate))
    raise DataError(f"image {name!r} not found (looked for {', '.join(tried)})")


# ---------------------------------------------------------------- predictions
class PredictionList(list):
    """Predictions read from a file: a list that remembers the line of every id."""

    def __init__(self, items: Iterable[Prediction] = (), path: str | Path = "",
                 lines: Mapping[str, int] | None = None) -> None:
        super().__init__(items)
        self.path = str(path)
        self.lines = dict(lines or {})


def prediction_where(predictions: Any, ident: Any) -> str:
    """Where a prediction comes from: ``FILE line N`` when read from a file, else its id."""
    lines = getattr(predictions, "lines", None)
    if isinstance(lines, Mapping) and ident in lines:
        return f"{predictions.path} line {lines[ident]}"
    return f"prediction {ident!r}"


def _is_number(value: Any) -> bool:
    return (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)))


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (OverflowError, TypeError, ValueError):
        return False


def _is_integer(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_prediction(pred: Prediction, where: str) -> None:
    """Check the fields of one prediction as the metrics read them.

    ``match_prob`` a finite number in [0, 1]; ``box`` None or four finite numbers
    ``x1 <= x2``, ``y1 <= y2``; ``proposal`` an integer >= -1; ``mismatched_relation``
    None or an integer >= 0; ``relation_scores`` finite numbers.

    Raises:
        DataError: naming ``where`` and the field.
    """
    if not isinstance(pred.id, str) or not pred.id:
        raise DataError(f"{where}: 'id' must be a non-empty string, got {pred.id!r}")
    prob = pred.match_prob
    if not _is_number(prob):
        raise DataError(f"{where}: 'match_prob' must be a number in [0, 1], got {prob!r}")
    if not (_finite(prob) and 0.0 <= float(prob) <= 1.0):
        raise DataError(f"{where}: 'match_prob' must be a finite number in [0, 1], "
                        f"got {_short(prob)}")
    box = pred.box
    if box is not None:
        values = list(box) if isinstance(box, (list, tuple, np.ndarray)) else None
        if (values is None or len(values) != 4 or not all(_is_number(v) for v in values)
                or not all(_finite(v) for v in values)):
            raise DataError(f"{where}: 'box' must be null or [x1, y1, x2, y2] (4 finite "
                            f"numbers), got {_short(box)}")
        x1, y1, x2, y2 = (float(v) for v in values)
        if x2 < x1 or y2 < y1:
            raise DataError(f"{where}: 'box' {[x1, y1, x2, y2]} has x2 < x1 or y2 < y1 "
                            f"(expected [x1, y1, x2, y2])")
    if not _is_integer(pred.proposal) or pred.proposal < -1:
        raise DataError(f"{where}: 'proposal' must be an integer >= -1 (-1: none), "
                        f"got {pred.proposal!r}")
    rel = pred.mismatched_relation
    if rel is not None and (not _is_integer(rel) or rel < 0):
        raise DataError(f"{where}: 'mismatched_relation' must be null or a relation index "
                        f">= 0, got {rel!r}")
    scores = pred.relation_scores
    if not isinstance(scores, (list, tuple, np.ndarray)) or not all(
            _is_number(v) and _finite(v) for v in scores):
        raise DataError(f"{where}: 'relation_scores' must be a list of finite numbers, "
                        f"got {_short(scores)}")


def check_relation_index(pred: Prediction, n_relations: int | None, where: str) -> None:
    """Refuse a ``mismatched_relation`` that is no relation of the item's graph.

    Raises:
        DataError: the index is not in ``[0, n_relations)`` (nothing is checked when
            ``n_relations`` is None, i.e. unknown).
    """
    rel = pred.mismatched_relation
    if rel is None or n_relations is None:
        return
    if not _is_integer(rel) or not 0 <= rel < n_relations:
        known = ("the item's graph has no relations" if n_relations == 0 else
                 f"the item's graph has {n_relations} relation(s), 0..{n_relations - 1}")
        raise DataError(f"{where}: 'mismatched_relation' {rel!r} is out of range ({known})")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_PREDICTION_KEYS = ("id", "match_prob", "box", "proposal", "mismatched_relation",
                    "relation_scores")


def prediction_from_record(record: Any, where: str) -> Prediction:
    """A :class:`Prediction` from one JSON record, with every field checked (no coercion).

    A string ``"0.9"`` or ``true`` is not a probability; see :func:`check_prediction`.

    Raises:
        DataError: naming ``where`` and the field.
    """
    if not isinstance(record, dict):
        raise DataError(f"{where}: not a prediction (a JSON object with 'id' and "
                        f"'match_prob'), got {type(record).__name__}")
    for key in ("id", "match_prob"):
        if key not in record:
            raise DataError(f"{where}: not a prediction (field {key!r} missing)")
    pred = Prediction(id=record["id"], match_prob=record["match_prob"],
                      box=record.get("box"), proposal=record.get("proposal", -1),
                      mismatched_relation=record.get("mismatched_relation"),
                      relation_scores=record.get("relation_scores", []))
    check_prediction(pred, where)
    pred.match_prob = float(pred.match_prob)
    if pred.box is not None:
        pred.box = [float(v) for v in pred.box]
    pred.relation_scores = [float(v) for v in pred.relation_scores]
    return pred


def read_prediction_file(path: str | Path) -> PredictionList:
    """Read JSON lines of :meth:`Prediction.to_dict` records, checking every field.

    Blank lines are skipped.  Values are taken as written: NaN, infinity, numbers
    outside [0, 1], strings and booleans are not probabilities.

    Raises:
        DataError: naming the file and line of a malformed record, a second
            prediction for an id (with the line of the first), a non-UTF-8 line, or
            a file that cannot be read.
    """
    path = Path(path)
    out: list[Prediction] = []
    lines: dict[str, int] = {}
    for lineno, where, record in json_lines(path, "predictions"):
        pred = prediction_from_record(record, where)
        if pred.id in lines:
            raise DataError(f"{where}: a second prediction for {pred.id!r} (the first is on "
                            f"line {lines[pred.id]})")
        lines[pred.id] = lineno
        out.append(pred)
    return PredictionList(out, path, lines)
