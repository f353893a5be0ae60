"""Reader for UNITER-style ``.npz`` region features (one file per image)."""

from __future__ import annotations

import math
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import BaseSource, make_proposals, register
from detectors.errors import DetectorDataError
from detectors.readers._common import (
    ImageSizes,
    os_error,
    read_vocab,
    require_file,
    strict_int,
    strict_number,
)
from rcrn.boxes import boxes_from_features6
from rcrn.structures import Proposals

__all__ = ["UniterNpz", "uniter_num_boxes", "MAX_ARRAY_BYTES"]

#: The largest array read from one ``.npz`` member (a UNITER image holds well under
#: 1 MiB); a larger declared size is refused before anything is allocated.
MAX_ARRAY_BYTES = 2**30

_WANTED = ("features", "norm_bb", "conf", "soft_labels", "image_w", "image_h")
_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, TypeError, EOFError,
           zlib.error, NotImplementedError, RuntimeError, KeyError, OverflowError)


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> np.ndarray:
    """One ``.npy`` member, its header checked against its stored size before reading."""
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise DetectorDataError(f"{where}: .npy format version {version} is not read")
        if dtype.hasobject:
            raise DetectorDataError(f"{where}: holds Python objects (a pickle), which are not "
                                    f"read")
        nbytes = math.prod(int(d) for d in shape) * dtype.itemsize
        stored = info.file_size - f.tell()
        if nbytes > MAX_ARRAY_BYTES:
            raise DetectorDataError(f"{where}: declares shape {list(shape)} {dtype.name} "
                                    f"({nbytes:,} bytes), above the cap of "
                                    f"{MAX_ARRAY_BYTES:,} bytes per array")
        if nbytes != stored:
            raise DetectorDataError(f"{where}: declares shape {list(shape)} {dtype.name} "
                                    f"({nbytes:,} bytes) but holds {stored:,} bytes "
                                    f"(truncated or corrupt)")
        data = f.read(nbytes)
    if len(data) != nbytes:
        raise DetectorDataError(f"{where}: holds {len(data)} of {nbytes} bytes (truncated)")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")


def load_npz(path: Path) -> dict[str, np.ndarray]:
    """The UNITER arrays of the ``.npz`` file ``path`` (others are not read).

    Each array's header is checked against the bytes the archive holds before any
    memory is allocated, so a corrupt or hostile file is an error, never a huge
    allocation; pickled (object) arrays are refused.
    """
    where = str(path)
    try:
        with zipfile.ZipFile(path) as zf:
            arrays = {}
            for info in zf.infolist():
                key = info.filename[:-4] if info.filename.endswith(".npy") else None
                if key in _WANTED and key not in arrays:
                    try:
                        arrays[key] = _read_member(zf, info, f"{where} array {key!r}")
                    except DetectorDataError:
                        raise
                    except _ERRORS as exc:
                        raise DetectorDataError(f"{where} array {key!r}: not a readable .npy "
                                                f"array ({exc})") from None
    except DetectorDataError:
        raise
    except (IsADirectoryError, PermissionError) as exc:
        raise os_error(path, exc) from None
    except _ERRORS as exc:
        raise DetectorDataError(f"{where}: not a readable .npz file ({exc})") from None
    return arrays


def _float_array(arrays: dict[str, np.ndarray], key: str, ndim: int, where: str) -> np.ndarray:
    arr = arrays[key]
    if arr.dtype.kind not in "fiu" or arr.ndim != ndim:
        raise DetectorDataError(f"{where}: array {key!r} must be a {ndim}-d array of numbers, "
                                f"got {arr.dtype.name} of shape {list(arr.shape)}")
    return arr


def _scalar(arrays: dict[str, np.ndarray], key: str, where: str) -> int:
    arr = arrays[key]
    if arr.size != 1 or arr.dtype.kind not in "fiu":
        raise DetectorDataError(f"{where}: array {key!r} must be one integer, got "
                                f"{arr.dtype.name} of shape {list(arr.shape)}")
    return strict_int(arr.reshape(-1)[0].item(), where, key, minimum=1)


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
            try:
                files = sorted(p for p in root.glob("*.npz") if p.is_file())
            except OSError as exc:
                raise os_error(root, exc) from None
            if not files:
                raise DetectorDataError(f"{root}: holds no .npz files (an empty source)")
        else:
            files = [root]
        self.files = {p.stem: p for p in files}
        self.sizes = ImageSizes(sizes)
        where = f"{root}: option"
        self.conf_th = strict_number(conf_th, where, "conf_th")
        self.min_bb = strict_int(min_bb, where, "min_bb", minimum=0)
        self.max_bb = strict_int(max_bb, where, "max_bb", minimum=max(1, self.min_bb))
        self.num_bb = None if num_bb is None else strict_int(num_bb, where, "num_bb", minimum=1)
        self.vocab = read_vocab(vocab)

    def image_ids(self) -> list[str]:
        return list(self.files)

    def _id_set(self) -> dict[str, Path]:
        return self.files

    def _get(self, image_id: str) -> Proposals:
        path = self.files[image_id]
        where = str(path)
        arrays = load_npz(path)
        for key in ("features", "norm_bb", "conf"):
            if key not in arrays:
                raise DetectorDataError(f"{where}: missing array {key!r} (has "
                                        f"{sorted(arrays)})")
        feats = arrays["features"]
        norm_bb = _float_array(arrays, "norm_bb", 2, where)
        conf = _float_array(arrays, "conf", arrays["conf"].ndim, where).reshape(-1)
        n = len(conf)
        if feats.ndim != 2 or len(feats) != n or len(norm_bb) != n or norm_bb.shape[1] < 4:
            raise DetectorDataError(f"{where}: expected features [n, d], norm_bb [n, 6], conf [n];"
                                    f" got {list(feats.shape)}, {list(norm_bb.shape)}, [{n}]")
        if feats.dtype.kind != "f" or feats.dtype.itemsize not in (2, 4, 8):
            raise DetectorDataError(f"{where}: features are {feats.dtype.name}, expected float16, "
                                    f"float32 or float64")
        if feats.shape[1] == 0:
            raise DetectorDataError(f"{where}: features have no values per box (shape "
                                    f"{list(feats.shape)})")
        if not np.isfinite(conf).all():
            raise DetectorDataError(f"{where}: conf holds NaN or infinite values")
        if "image_w" in arrays and "image_h" in arrays:
            size = (_scalar(arrays, "image_w", where), _scalar(arrays, "image_h", where))
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
            if soft is None or soft.ndim != 2 or len(soft) != n or soft.shape[1] < 2 \
                    or soft.dtype.kind not in "fiu":
                raise DetectorDataError(f"{where}: labelling boxes needs soft_labels [n, classes]")
            if not np.isfinite(soft[:keep]).all():
                raise DetectorDataError(f"{where}: soft_labels hold NaN or infinite values")
            cls = soft[:keep, 1:].argmax(axis=1) if keep else np.zeros(0, dtype=np.int64)
            if soft.shape[1] - 1 > len(self.vocab):
                raise DetectorDataError(f"{where}: soft_labels has {soft.shape[1] - 1} classes, "
                                        f"the vocabulary {len(self.vocab)}")
            labels = [self.vocab[int(c)] for c in cls]
        features = feats[:keep]
        if features.dtype.itemsize == 8 or not features.dtype.isnative:
            with np.errstate(over="ignore"):
                features = features.astype(np.float32 if features.dtype.itemsize > 2
                                           else np.float16)
        with np.errstate(over="ignore"):
            scores = conf[:keep].astype(np.float32)
        if not np.isfinite(scores).all():
            raise DetectorDataError(f"{where}: conf holds values beyond float32")
        return make_proposals(where, boxes=boxes, image_size=size, scores=scores, labels=labels,
                              features=features, image_id=image_id)
