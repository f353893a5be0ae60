"""Readers for region features shipped in h5 files: GITM-MR ``vinvl_objects`` and SGMN
``gt_objects`` (Ref-Reasoning)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import BaseSource, make_proposals, register
from detectors.errors import DetectorDataError
from detectors.readers._common import H5Files, require_file
from rcrn import safe_pickle
from rcrn.structures import Proposals

__all__ = ["GitmMrObjects", "SgmnObjects"]


def _row(dataset: Any, idx: int, count: int, where: str, what: str, width: int | None) -> Any:
    if not 0 <= idx < dataset.shape[0]:
        raise DetectorDataError(f"{where}: row {idx} is outside {what} with {dataset.shape[0]} "
                                f"rows")
    if count > dataset.shape[1]:
        raise DetectorDataError(f"{where}: {count} objects but {what} holds at most "
                                f"{dataset.shape[1]} per image")
    if width is not None and (dataset.ndim != 3 or dataset.shape[2] != width):
        raise DetectorDataError(f"{where}: {what} has shape {list(dataset.shape)}, expected "
                                f"[images, objects, {width}]")
    return dataset[idx, :count]


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
        require_file(self.info_path, "rois_info.pkl")
        try:
            info = safe_pickle.load(self.info_path)
        except safe_pickle.UnsafePickleError as exc:
            raise DetectorDataError(str(exc)) from None
        if not isinstance(info, Mapping):
            raise DetectorDataError(f"{self.info_path}: expected a dict {{image_id: record}}, "
                                    f"got {type(info).__name__}")
        self.info = {str(k): v for k, v in info.items()}
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
        try:
            n = int(rec["num_objs"])
            boxes = np.asarray(rec["box"], dtype=np.float32).reshape(-1, 4)
            size = (int(rec["size"][0]), int(rec["size"][1]))
            idx = int(rec["idx"])
        except (TypeError, ValueError, IndexError) as exc:
            raise DetectorDataError(f"{where}: malformed record ({exc})") from None
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
        h5_path = self.root / f"gt_objects_{rec['file']}.h5"
        dataset = self.h5.dataset(h5_path, "features")
        feats = _row(dataset, idx, n, f"{where} ({h5_path})", "dataset 'features'", None)
        return make_proposals(f"{where} ({h5_path} row {idx})", boxes=boxes, image_size=size,
                              labels=labels, features=np.asarray(feats), image_id=image_id)


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
        require_file(self.info_path, "gt_objects_info.json")
        try:
            info = json.loads(self.info_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DetectorDataError(f"{self.info_path}: not valid JSON ({exc})") from None
        if not isinstance(info, dict):
            raise DetectorDataError(f"{self.info_path}: expected {{image_id: record}}")
        self.info = {str(k): v for k, v in info.items()}
        self.h5 = H5Files("SGMN region features")

    def image_ids(self) -> list[str]:
        return list(self.info)

    def _id_set(self) -> dict[str, Any]:
        return self.info

    def _get(self, image_id: str) -> Proposals:
        where = f"{self.info_path} record {image_id!r}"
        rec = self.info[image_id]
        try:
            n, idx = int(rec["objectsNum"]), int(rec["idx"])
            size = (int(rec["width"]), int(rec["height"]))
            h5_path = self.root / f"gt_objects_{rec['file']}.h5"
        except (TypeError, ValueError, KeyError) as exc:
            raise DetectorDataError(f"{where}: expected {{file, idx, objectsNum, width, height}} "
                                    f"({type(exc).__name__}: {exc})") from None
        at = f"{where} ({h5_path} row {idx})"
        feats = _row(self.h5.dataset(h5_path, "features"), idx, n, at, "dataset 'features'",
                     None)
        boxes = _row(self.h5.dataset(h5_path, "bboxes"), idx, n, at, "dataset 'bboxes'", 4)
        return make_proposals(at, boxes=np.asarray(boxes), image_size=size,
                              features=np.asarray(feats), image_id=image_id)
