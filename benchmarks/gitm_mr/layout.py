"""Paths and checked readers of the GITM-MR release layout.

::

    expression/{split}_expressions_ori_rel.json   positives {sent_id: {image_id, bbox, expression}}
    expression/{split}_expressions_foil_rel.json  negatives, + foil_pos, foil_indices,
                                                  foil_phrase, target_phrase
    counter/{split}_id2id_foil_rel.pkl            {pos_sent_id: {'sentid': neg_sent_id,
                                                                 'counter_type': str}}
    parse/{split}_graphs.pkl, parse/{split}_foil_rel_graphs.pkl
    small/train_small_sent_ids_{16,11}.json       {'pos': [sent_id, ...]}
    vinvl_objects/rois_info.pkl, vinvl_objects/gt_objects_{file}.h5
    word_embedding/vocabulary_72700.txt

Every reader raises :class:`benchmarks.base.DataError` naming the file and the
record at fault.  Pickles are read only through :func:`rcrn.safe_pickle.load`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.base import DataError
from rcrn import safe_pickle

__all__ = [
    "SPLITS",
    "LENGTH_SUBSETS",
    "expression_path",
    "counter_path",
    "parse_path",
    "small_path",
    "vocabulary_path",
    "word_count",
    "token_count",
    "read_json",
    "read_pickle",
    "read_expressions",
    "read_counter",
    "read_small",
]

#: Splits of the release.
SPLITS: tuple[str, ...] = ("train", "val", "test")
#: Word thresholds of the Train-Len subsets.
LENGTH_SUBSETS: tuple[int, ...] = (16, 11)

_WORD = re.compile(r"[^\W_]", re.UNICODE)


def expression_path(root: Path, split: str, negative: bool) -> Path:
    kind = "foil_rel" if negative else "ori_rel"
    return root / "expression" / f"{split}_expressions_{kind}.json"


def counter_path(root: Path, split: str) -> Path:
    return root / "counter" / f"{split}_id2id_foil_rel.pkl"


def parse_path(root: Path, split: str, negative: bool) -> Path:
    return root / "parse" / (f"{split}_foil_rel_graphs.pkl" if negative else f"{split}_graphs.pkl")


def small_path(root: Path, split: str, threshold: int) -> Path:
    return root / "small" / f"{split}_small_sent_ids_{threshold}.json"


def vocabulary_path(root: Path) -> Path | None:
    """``word_embedding/vocabulary_72700.txt``, else the only ``vocabulary_*.txt`` there."""
    folder = root / "word_embedding"
    official = folder / "vocabulary_72700.txt"
    if official.is_file():
        return official
    found = sorted(folder.glob("vocabulary*.txt")) if folder.is_dir() else []
    if len(found) > 1:
        raise DataError(f"{folder}: several vocabulary files {[p.name for p in found]}; "
                        f"keep one or name it vocabulary_72700.txt")
    return found[0] if found else None


def word_count(text: str) -> int:
    """Length of an expression in words: whitespace-separated tokens holding a letter or digit.

    Punctuation standing alone (``"the cup , near the plate ."``) is not a word.  This is
    the ``rules="toolkit"`` length; the official evaluation uses :func:`token_count`.
    """
    return sum(1 for w in text.split() if _WORD.search(w))


def token_count(text: str) -> int:
    """Length of an expression as the official evaluation counts it: ``len(text.split())``.

    Every whitespace-separated token counts, punctuation standing alone included
    (``"the cup , near the plate ."`` has 7).
    """
    return len(text.split())


def read_json(path: Path, what: str) -> Any:
    if not path.is_file():
        raise DataError(f"{path}: {what} not found")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: {what} is not UTF-8 text ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: line {exc.lineno}: {what} is not valid JSON ({exc.msg})"
                        ) from exc


def read_pickle(path: Path, what: str) -> Any:
    if not path.is_file():
        raise DataError(f"{path}: {what} not found")
    try:
        return safe_pickle.load(path)
    except safe_pickle.UnsafePickleError as exc:
        raise DataError(str(exc)) from exc
    except Exception as exc:  # a truncated or corrupt pickle raises many kinds
        raise DataError(f"{path}: {what} is not a readable pickle ({type(exc).__name__}: "
                        f"{exc})") from exc


def _bbox(value: Any, where: str) -> list[float]:
    try:
        box = [float(v) for v in value]
    except (TypeError, ValueError):
        raise DataError(f"{where}: bbox must be [x, y, w, h] numbers, got {value!r}") from None
    if len(box) != 4 or not all(math.isfinite(v) for v in box):
        raise DataError(f"{where}: bbox must be 4 finite numbers [x, y, w, h], got {value!r}")
    if box[2] < 0 or box[3] < 0:
        raise DataError(f"{where}: bbox width and height must be >= 0, got {value!r}")
    return box


def read_expressions(path: Path, negative: bool) -> dict[str, dict[str, Any]]:
    """Read and check an ``expression/`` file.

    Returns:
        ``{sent_id: record}`` in file order; ``bbox`` as 4 floats, ``image_id`` as a
        string, and for negatives ``foil_pos`` as an int or None.
    """
    what = "negative expressions" if negative else "positive expressions"
    data = read_json(path, what)
    if not isinstance(data, Mapping):
        raise DataError(f"{path}: expected {{sent_id: record}}, got {type(data).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for sid, rec in data.items():
        where = f"{path}: record {sid!r}"
        if not isinstance(rec, Mapping):
            raise DataError(f"{where}: expected a dict, got {type(rec).__name__}")
        missing = [k for k in ("image_id", "bbox", "expression") if k not in rec]
        if missing:
            raise DataError(f"{where}: missing field(s) {missing}")
        if not isinstance(rec["expression"], str) or not rec["expression"].strip():
            raise DataError(f"{where}: expression must be a non-empty string")
        item = dict(rec)
        item["image_id"] = str(rec["image_id"])
        item["bbox"] = _bbox(rec["bbox"], where)
        if negative:
            pos = rec.get("foil_pos")
            if pos is not None:
                try:
                    pos = int(pos)
                except (TypeError, ValueError):
                    raise DataError(f"{where}: foil_pos must be an integer, got {pos!r}") from None
            item["foil_pos"] = pos
            ind = rec.get("foil_indices")
            if ind is not None:
                try:
                    ind = [int(v) for v in ind]
                except (TypeError, ValueError):
                    raise DataError(f"{where}: foil_indices must be [start, end], got "
                                    f"{ind!r}") from None
                if len(ind) != 2 or ind[0] < 0 or ind[1] < ind[0]:
                    raise DataError(f"{where}: foil_indices must be [start, end], got {ind!r}")
            item["foil_indices"] = ind
            for key in ("foil_phrase", "target_phrase"):
                if item.get(key) is not None and not isinstance(item[key], str):
                    raise DataError(f"{where}: {key} must be a string, got {item[key]!r}")
        out[str(sid)] = item
    return out


def read_counter(path: Path) -> dict[str, tuple[str, str]]:
    """Read ``counter/{split}_id2id_foil_rel.pkl`` into ``{pos_id: (neg_id, counter_type)}``."""
    data = read_pickle(path, "positive/negative pairing")
    if not isinstance(data, Mapping):
        raise DataError(f"{path}: expected {{pos_sent_id: {{'sentid', 'counter_type'}}}}, got "
                        f"{type(data).__name__}")
    out: dict[str, tuple[str, str]] = {}
    seen: dict[str, str] = {}
    for pos, rec in data.items():
        where = f"{path}: record {pos!r}"
        if not isinstance(rec, Mapping) or "sentid" not in rec:
            raise DataError(f"{where}: expected a dict with 'sentid', got {rec!r}")
        neg = str(rec["sentid"])
        if neg in seen:
            raise DataError(f"{where}: negative {neg!r} is already paired with positive "
                            f"{seen[neg]!r}")
        seen[neg] = str(pos)
        out[str(pos)] = (neg, str(rec.get("counter_type", "")))
    return out


def read_small(path: Path) -> list[str]:
    """Read ``small/..._small_sent_ids_{n}.json``: the positive sentence ids of a subset."""
    data = read_json(path, "Train-Len subset")
    if not isinstance(data, Mapping) or not isinstance(data.get("pos"), list):
        raise DataError(f"{path}: expected {{'pos': [sent_id, ...]}}")
    return [str(s) for s in data["pos"]]
