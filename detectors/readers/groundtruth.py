"""Ground-truth boxes as proposals: COCO ``instances_*.json`` and GQA ``*_sceneGraphs.json``.

These sources carry no region features; labels are the category / object names.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import BaseSource, make_proposals, register
from detectors.errors import DetectorDataError
from detectors.readers._common import _size_pair, read_json_file, require_file, strict_int
from rcrn.structures import Proposals

__all__ = ["CocoBoxes", "GqaSceneGraphs"]


def _read_json(path: Path) -> Any:
    return read_json_file(path)


def _xywh(value: Any, where: str) -> list[float]:
    numbers = isinstance(value, (list, tuple)) and len(value) == 4 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    if not numbers:
        raise DetectorDataError(f"{where}: bbox must be 4 numbers [x, y, w, h], got "
                                f"{str(value)[:60]!r}")
    x, y, w, h = (float(v) for v in value)
    if not all(np.isfinite([x, y, w, h, x + w, y + h])) or w < 0 or h < 0:
        raise DetectorDataError(f"{where}: bbox [x, y, w, h] = {[x, y, w, h]} needs finite "
                                f"values and w, h >= 0")
    return [x, y, x + w, y + h]


def _name_filter(categories: Iterable[str] | str | None) -> set[str] | None:
    if categories is None:
        return None
    if isinstance(categories, str):
        categories = [c for c in categories.split(",") if c.strip()]
    return {c.strip() for c in categories}


@register("coco", "COCO instances_*.json ground-truth boxes (labels = category names)")
class CocoBoxes(BaseSource):
    """COCO ``instances_*.json`` annotations as proposals (boxes from ``[x, y, w, h]``).

    Image ids are the COCO ids as text; an image can also be looked up by its
    file name (``000000451431.jpg``) or file stem.

    Args:
        path: the ``instances_*.json`` file.
        categories: keep only these category names (a list or comma-separated text).
        include_crowd: keep ``iscrowd`` annotations (default: dropped, they mark groups).
    """

    name = "coco"

    def __init__(self, path: str | Path, categories: Iterable[str] | str | None = None,
                 include_crowd: bool = False) -> None:
        path = require_file(path, "COCO annotation file", kind="file")
        self.location = str(path)
        data = _read_json(path)
        if not isinstance(data, dict) or "images" not in data or "annotations" not in data:
            raise DetectorDataError(f"{path}: expected a COCO file with 'images', 'annotations' "
                                    f"and 'categories'")
        for key in ("images", "annotations", "categories"):
            if not isinstance(data.get(key, []), list):
                raise DetectorDataError(f"{path}: {key!r} must be a list, got "
                                        f"{type(data[key]).__name__}")
        if not data["images"]:
            raise DetectorDataError(f"{path}: 'images' is empty (an empty source)")
        names: dict[int, str] = {}
        for k, cat in enumerate(data.get("categories", [])):
            if not isinstance(cat, dict) or "id" not in cat or "name" not in cat:
                raise DetectorDataError(f"{path} categories[{k}]: needs 'id' and 'name'")
            names[strict_int(cat["id"], f"{path} categories[{k}]", "'id'")] = str(cat["name"])
        wanted = _name_filter(categories)
        if wanted is not None and not wanted <= set(names.values()):
            unknown = sorted(wanted - set(names.values()))
            raise DetectorDataError(f"{path}: unknown categories {unknown}")
        self.images: dict[str, dict[str, Any]] = {}
        self.aliases: dict[str, str] = {}
        for k, img in enumerate(data["images"]):
            where = f"{path} images[{k}]"
            if not isinstance(img, dict) or not {"id", "width", "height"} <= img.keys():
                raise DetectorDataError(f"{where}: needs 'id', 'width' and 'height'")
            if isinstance(img["id"], bool) or not isinstance(img["id"], (int, str)) \
                    or img["id"] == "":
                raise DetectorDataError(f"{where}: 'id' must be an integer or a name, got "
                                        f"{str(img['id'])[:40]!r}")
            key = str(img["id"])
            size = _size_pair([img["width"], img["height"]], where)
            if key in self.images:
                raise DetectorDataError(f"{where}: image id {key} appears twice in 'images'")
            self.images[key] = {"size": size, "boxes": [], "labels": []}
            name = str(img.get("file_name", ""))
            if name:
                self.aliases[name] = key
                self.aliases[Path(name).stem] = key
        for k, ann in enumerate(data["annotations"]):
            ann_id = ann.get("id") if isinstance(ann, dict) else "?"
            where = f"{path} annotations[{k}] (id {ann_id})"
            if not isinstance(ann, dict) or "image_id" not in ann or "bbox" not in ann:
                raise DetectorDataError(f"{where}: needs 'image_id', 'bbox' and 'category_id'")
            if ann.get("iscrowd", 0) and not include_crowd:
                continue
            key = str(ann["image_id"])
            if key not in self.images:
                raise DetectorDataError(f"{where}: image_id {str(ann['image_id'])[:40]!r} is not "
                                        f"in 'images'")
            cat_id = ann.get("category_id")
            try:
                label = names.get(strict_int(cat_id, where, "category_id"))
            except DetectorDataError:
                label = None
            if label is None:
                raise DetectorDataError(f"{where}: category_id {str(cat_id)[:40]!r} is not in "
                                        f"'categories'")
            if wanted is not None and label not in wanted:
                continue
            rec = self.images[key]
            rec["boxes"].append(_xywh(ann["bbox"], where))
            rec["labels"].append(label)

    def image_ids(self) -> list[str]:
        return list(self.images)

    def _id_set(self) -> dict[str, Any]:
        return self.images

    def _key(self, image_id: object) -> str:
        key = str(image_id)
        if key not in self.images and key in self.aliases:
            return self.aliases[key]
        return super()._key(image_id)

    def __contains__(self, image_id: object) -> bool:
        return super().__contains__(image_id) or str(image_id) in self.aliases

    def _get(self, image_id: str) -> Proposals:
        rec = self.images[image_id]
        return make_proposals(f"{self.location} image {image_id}",
                              boxes=np.asarray(rec["boxes"], dtype=np.float32).reshape(-1, 4),
                              image_size=rec["size"], labels=list(rec["labels"]),
                              image_id=image_id)


@register("gqa", "GQA *_sceneGraphs.json ground-truth objects (labels = object names)")
class GqaSceneGraphs(BaseSource):
    """GQA scene graphs as proposals: every object's ``x, y, w, h`` box and ``name``.

    Objects keep the order of the file; their GQA ids are in :attr:`object_ids`.

    Args:
        path: the ``*_sceneGraphs.json`` file.
        categories: keep only objects with these names (a list or comma-separated text).
    """

    name = "gqa"

    def __init__(self, path: str | Path,
                 categories: Iterable[str] | str | None = None) -> None:
        path = require_file(path, "GQA scene-graph file", kind="file")
        self.location = str(path)
        data = _read_json(path)
        if not isinstance(data, dict):
            raise DetectorDataError(f"{path}: expected {{imageId: scene graph}}")
        if not data:
            raise DetectorDataError(f"{path}: holds no scene graphs (an empty source)")
        wanted = _name_filter(categories)
        self.images: dict[str, dict[str, Any]] = {}
        for image_id, graph in data.items():
            where = f"{path} image {image_id!r}"
            if not isinstance(graph, dict):
                raise DetectorDataError(f"{where}: expected a scene graph object")
            if "width" not in graph or "height" not in graph:
                raise DetectorDataError(f"{where}: needs integer 'width' and 'height'")
            size = _size_pair([graph["width"], graph["height"]], where)
            boxes, labels, ids = [], [], []
            objects = graph.get("objects", {})
            if not isinstance(objects, dict):
                raise DetectorDataError(f"{where}: 'objects' must map object ids to objects")
            for obj_id, obj in objects.items():
                at = f"{where} object {obj_id!r}"
                if not isinstance(obj, dict) or "name" not in obj:
                    raise DetectorDataError(f"{at}: needs 'name', 'x', 'y', 'w', 'h'")
                name = str(obj["name"])
                if wanted is not None and name not in wanted:
                    continue
                boxes.append(_xywh([obj.get(k) for k in ("x", "y", "w", "h")], at))
                labels.append(name)
                ids.append(str(obj_id))
            self.images[str(image_id)] = {"size": size, "boxes": boxes, "labels": labels,
                                          "ids": ids}

    def image_ids(self) -> list[str]:
        return list(self.images)

    def _id_set(self) -> dict[str, Any]:
        return self.images

    def object_ids(self, image_id: str | int) -> list[str]:
        """GQA object ids of the boxes of ``image_id``, in proposal order."""
        return list(self.images[self._key(image_id)]["ids"])

    def _get(self, image_id: str) -> Proposals:
        rec = self.images[image_id]
        return make_proposals(f"{self.location} image {image_id!r}",
                              boxes=np.asarray(rec["boxes"], dtype=np.float32).reshape(-1, 4),
                              image_size=rec["size"], labels=list(rec["labels"]),
                              image_id=image_id)
