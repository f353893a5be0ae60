"""Readers for region features shipped in h5 files: GITM-MR ``vinvl_objects`` and SGMN
``gt_objects`` (Ref-Reasoning)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import BaseSource, make_proposals, register
from detectors.errors import DetectorDataError
from detectors.readers._common import (
    H5Files,
    _size_pair,
    os_error,
    read_json_file,
    require_file,
    strict_int,
)
from rcrn import safe_pickle
from rcrn.structures import Proposals

__all__ = ["GitmMrObjects", "SgmnObjects"]


def _row(dataset: Any, idx: int, count: int, where: str, what: str, width: int | None) -> Any:
    if dataset.ndim != 3 or (width is not None and dataset.shape[2] != width):
        want = f"[images, objects, {width}]" if width is not None else "[images, objects, dim]"
        raise DetectorDataError(f"{where}: {what} has shape {list(dataset.shape)}, expected "
                                f"{want}")
    if dataset.dtype.kind != "f":
        raise DetectorDataError(f"{where}: {what} holds {dataset.dtype}, expected floats")
    if not 0 <= idx < dataset.shape[0]:
        raise DetectorDataError(f"{where}: row {idx} is outside {what} with {dataset.shape[0]} "
                                f"rows")
    if count > dataset.shape[1]:
        raise DetectorDataError(f"{where}: {count} objects but {what} holds at most "
                                f"{dataset.shape[1]} per image")
    return H5Files.read(dataset, (idx, slice(0, count)), f"{where} {what}")


def _file_part(value: Any, where: str) -> str:
    """The ``{file}`` of ``gt_objects_{file}.h5``: a plain name, never a path."""
    text = str(value)
    if isinstance(value, (bool, float)) or not text or "/" in text or "\\" in text \
            or ".." in text or "\x00" in text:
        raise DetectorDataError(f"{where}: 'file' must name a gt_objects_<file>.h5 next to the "
                                f"index, got {text[:40]!r}")
    return text


def _records(info: Any, path: Path) -> dict[str, Any]:
    if not isinstance(info, Mapping):
        raise DetectorDataError(f"{path}: expected a dict {{image_id: record}}, got "
                                f"{type(info).__name__}")
    if not info:
        raise DetectorDataError(f"{path}: holds no images (an empty source)")
    return {str(k): v for k, v in info.items()}


@register("gitm-mr", "GITM-MR vinvl_objects/: rois_info.pkl + gt_objects_{file}.h5")
class GitmMrObjects(BaseSource):
    """GITM-MR ``vinvl_objects/``: ``rois_info.pkl`` and ``gt_objects_{file}.h5``.

    ``rois_info.pkl`` maps each image id to ``{size (W, H), num_objs, box [n, 4]
    xyxy px, cls, file, idx}``; row ``idx`` of dataset ``features`` in
    ``gt_objects_{file}.h5`` holds the image's features ``[<=126, 2048]`` (padded).
    The pickle is read with :mod:`rcrn.safe_pickle`, which admits plain data only.

    Args:
        path: the ``vinvl_objects`` folder (or its ``rois_info.pkl``).
    """

    name = "gitm-mr"

    def __init__(self, path: str | Path) -> None:
        path = require_file(path, "GITM-MR vinvl_objects folder")
        self.info_path = path / "rois_info.pkl" if path.is_dir() else path
        self.root = self.info_path.parent
        self.location = str(self.info_path)
        require_file(self.info_path, "rois_info.pkl", kind="file")
        try:
            info = safe_pickle.load(self.info_path)
        except safe_pickle.UnsafePickleError as exc:
            raise DetectorDataError(str(exc)) from None
        except OSError as exc:
            raise os_error(self.info_path, exc) from None
        self.info = _records(info, self.info_path)
        self.h5 = H5Files("GITM-MR region features")

    def image_ids(self) -> list[str]:
        return list(self.info)

    def _id_set(self) -> dict[str, Any]:
        return self.info

    def _get(self, image_id: str) -> Proposals:
        where = f"{self.info_path} record {image_id!r}"
        rec = self.info[image_id]
        if not isinstance(rec, Mapping):
            raise DetectorDataError(f"{where}: expected a dict, got {type(rec).__name__}")
        missing = [k for k in ("size", "num_objs", "box", "file", "idx") if k not in rec]
        if missing:
            raise DetectorDataError(f"{where}: missing fields {missing}")
        n = strict_int(rec["num_objs"], where, "num_objs", minimum=0)
        idx = strict_int(rec["idx"], where, "idx", minimum=0)
        size = _size_pair(list(rec["size"]) if isinstance(rec["size"], (tuple, np.ndarray))
                          else rec["size"], where)
        try:
            with np.errstate(over="ignore"):
                boxes = np.asarray(rec["box"], dtype=np.float32).reshape(-1, 4)
        except (TypeError, ValueError, OverflowError) as exc:
            raise DetectorDataError(f"{where}: 'box' is not an [n, 4] array of numbers "
                                    f"({exc})") from None
        if len(boxes) < n:
            raise DetectorDataError(f"{where}: num_objs is {n} but only {len(boxes)} boxes")
        boxes = boxes[:n]
        labels = None
        if rec.get("cls") is not None:
            cls = list(np.asarray(rec["cls"]).reshape(-1)) if not isinstance(
                rec["cls"], (list, tuple)) else list(rec["cls"])
            if len(cls) < n:
                raise DetectorDataError(f"{where}: num_objs is {n} but only {len(cls)} classes")
            labels = [c.decode() if isinstance(c, bytes) else str(c) for c in cls[:n]]
        h5_path = self.root / f"gt_objects_{_file_part(rec['file'], where)}.h5"
        dataset = self.h5.dataset(h5_path, "features")
        feats = _row(dataset, idx, n, f"{where} ({h5_path})", "dataset 'features'", None)
        return make_proposals(f"{where} ({h5_path} row {idx})", boxes=boxes, image_size=size,
                              labels=labels, features=feats, image_id=image_id)


@register("sgmn", "Ref-Reasoning/SGMN gt_objects/: gt_objects_info.json + gt_objects_{n}.h5")
class SgmnObjects(BaseSource):
    """Ref-Reasoning (SGMN) ground-truth objects.

    ``gt_objects_info.json`` maps each image id to ``{file, idx, objectsNum,
    width, height}``; ``gt_objects_{file}.h5`` holds ``features`` ``[images,
    max_obj, 2048]`` and ``bboxes`` ``[images, max_obj, 4]`` (xyxy, as stored:
    Ref-Reasoning counts pixels inclusively, see :mod:`rcrn.boxes`).  The first
    ``objectsNum`` rows of the image are valid.

    Args:
        path: the ``gt_objects`` folder (or its ``gt_objects_info.json``).
    """

    name = "sgmn"

    def __init__(self, path: str | Path) -> None:
        path = require_file(path, "SGMN gt_objects folder")
        self.info_path = path / "gt_objects_info.json" if path.is_dir() else path
        self.root = self.info_path.parent
        self.location = str(self.info_path)
        require_file(self.info_path, "gt_objects_info.json", kind="file")
        self.info = _records(read_json_file(self.info_path), self.info_path)
        self.h5 = H5Files("SGMN region features")

    def image_ids(self) -> list[str]:
        return list(self.info)

    def _id_set(self) -> dict[str, Any]:
        return self.info

    def _get(self, image_id: str) -> Proposals:
        where = f"{self.info_path} record {image_id!r}"
        rec = self.info[image_id]
        missing = [k for k in ("file", "idx", "objectsNum", "width", "height")
                   if not isinstance(rec, Mapping) or k not in rec]
        if missing:
            raise DetectorDataError(f"{where}: expected {{file, idx, objectsNum, width, height}}"
                                    f", missing {missing}")
        n = strict_int(rec["objectsNum"], where, "objectsNum", minimum=0)
        idx = strict_int(rec["idx"], where, "idx", minimum=0)
        size = _size_pair([rec["width"], rec["height"]], where)
        h5_path = self.root / f"gt_objects_{_file_part(rec['file'], where)}.h5"
        at = f"{where} ({h5_path} row {idx})"
        feats = _row(self.h5.dataset(h5_path, "features"), idx, n, at, "dataset 'features'",
                     None)
        boxes = _row(self.h5.dataset(h5_path, "bboxes"), idx, n, at, "dataset 'bboxes'", 4)
        return make_proposals(at, boxes=boxes, image_size=size, features=feats,
                              image_id=image_id)
