"""Reader for UNITER-style ``.npz`` region features (one file per image)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import BaseSource, make_proposals, register
from detectors.errors import DetectorDataError
from detectors.readers._common import ImageSizes, read_vocab, require_file
from rcrn.boxes import boxes_from_features6
from rcrn.structures import Proposals

__all__ = ["UniterNpz", "uniter_num_boxes"]


def uniter_num_boxes(conf: np.ndarray, conf_th: float = 0.2, min_bb: int = 10,
                     max_bb: int = 100) -> int:
    """UNITER's rule for how many boxes to keep: ``clip(#(conf > conf_th), min_bb, max_bb)``.

    The result never exceeds the number of boxes stored.
    """
    conf = np.asarray(conf).reshape(-1)
    keep = int((conf > conf_th).sum())
    keep = min(max_bb, max(min_bb, keep))
    return min(keep, len(conf))


@register("uniter", "UNITER .npz per image: features, norm_bb, conf (soft_labels)")
class UniterNpz(BaseSource):
    """A folder of UNITER ``.npz`` files (or a single file), one image each.

    Each file holds ``features`` ``[n, 2048]``, ``norm_bb`` ``[n, 6]`` =
    ``[x1/W, y1/H, x2/W, y2/H, w/W, h/H]``, ``conf`` ``[n]`` and optionally
    ``soft_labels`` ``[n, 1 + classes]`` (column 0 is background).  The image id is
    the file name without ``.npz``.  Boxes are stored normalised, so the image size
    comes from the file's ``image_w`` / ``image_h`` entries when present, else from
    ``sizes``.  Rows are kept in stored order (by confidence) and cut to ``num_bb``
    when given, else by :func:`uniter_num_boxes`.

    Args:
        path: a folder of ``.npz`` files or one ``.npz`` file.
        sizes: image sizes (see :class:`ImageSizes`), e.g. the COCO image folder.
        conf_th: confidence threshold of the box-count rule.
        min_bb: lower bound of the box-count rule.
        max_bb: upper bound of the box-count rule.
        num_bb: a fixed number of boxes (e.g. 36 or 100) instead of the rule.
        vocab: class names (a list or ``objects_vocab.txt``, without background) to label
            each box with its arg-max ``soft_labels`` class.
    """

    name = "uniter"

    def __init__(self, path: str | Path, sizes: Any = None, conf_th: float = 0.2,
                 min_bb: int = 10, max_bb: int = 100, num_bb: int | None = None,
                 vocab: Any = None) -> None:
        root = require_file(path, "UNITER .npz file or folder")
        self.location = str(root)
        if root.is_dir():
            files = sorted(root.glob("*.npz"))
        else:
            files = [root]
        self.files = {p.stem: p for p in files}
        self.sizes = ImageSizes(sizes)
        self.conf_th, self.min_bb, self.max_bb = float(conf_th), int(min_bb), int(max_bb)
        self.num_bb = None if num_bb is None else int(num_bb)
        self.vocab = read_vocab(vocab)

    def image_ids(self) -> list[str]:
        return list(self.files)

    def _id_set(self) -> dict[str, Path]:
        return self.files

    def _get(self, image_id: str) -> Proposals:
        path = self.files[image_id]
        where = str(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise DetectorDataError(f"{where}: not a readable .npz file ({exc})") from None
        for key in ("features", "norm_bb", "conf"):
            if key not in arrays:
                raise DetectorDataError(f"{where}: missing array {key!r} (has "
                                        f"{sorted(arrays)})")
        feats, norm_bb = arrays["features"], arrays["norm_bb"]
        conf = arrays["conf"].reshape(-1)
        n = len(conf)
        if feats.ndim != 2 or len(feats) != n or norm_bb.ndim != 2 or len(norm_bb) != n \
                or norm_bb.shape[1] < 4:
            raise DetectorDataError(f"{where}: expected features [n, d], norm_bb [n, 6], conf [n];"
                                    f" got {list(feats.shape)}, {list(norm_bb.shape)}, [{n}]")
        if "image_w" in arrays and "image_h" in arrays:
            size = (int(arrays["image_w"]), int(arrays["image_h"]))
        else:
            size = self.sizes.require(image_id, where)
        keep = min(self.num_bb, n) if self.num_bb is not None else uniter_num_boxes(
            conf, self.conf_th, self.min_bb, self.max_bb)
        if not np.isfinite(norm_bb[:keep]).all():
            raise DetectorDataError(f"{where}: norm_bb holds NaN or infinite values")
        boxes = boxes_from_features6(norm_bb[:keep], size)
        labels = None
        if self.vocab is not None:
            soft = arrays.get("soft_labels")
            if soft is None or soft.ndim != 2 or len(soft) != n:
                raise DetectorDataError(f"{where}: labelling boxes needs soft_labels [n, classes]")
            cls = soft[:keep, 1:].argmax(axis=1) if keep else np.zeros(0, dtype=np.int64)
            if soft.shape[1] - 1 > len(self.vocab):
                raise DetectorDataError(f"{where}: soft_labels has {soft.shape[1] - 1} classes, "
                                        f"the vocabulary {len(self.vocab)}")
            labels = [self.vocab[int(c)] for c in cls]
        features = feats[:keep]
        if features.dtype not in (np.float16, np.float32):
            features = features.astype(np.float32)
        return make_proposals(where, boxes=boxes, image_size=size,
                              scores=conf[:keep].astype(np.float32), labels=labels,
                              features=features, image_id=image_id)
