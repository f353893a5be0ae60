"""Readers for TSV detector outputs: VinVL predictions, Oscar features, bottom-up (LXMERT).

Each row is ``image_id \\t ...``; the readers index rows once (from the
``.lineidx`` file when there is one) and then decode any image on demand.
Rows are split on tabs directly, so no ``csv.field_size_limit`` is involved.

Feature bytes are checked against the widths and the dtype the reader is told
(float32 unless ``dtype="float16"`` is given): float16 or float64 bytes are an
error naming the row, never features of half or twice the width.  Each row is
decoded on its own, so one malformed row is an error for that row only.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import BaseSource, make_proposals, register
from detectors.errors import DetectorDataError
from detectors.readers._common import (
    ImageSizes,
    TsvIndex,
    _size_pair,
    b64bytes,
    check_feature_bytes,
    decode_array,
    feature_layout,
    json_loads,
    read_vocab,
    strict_int,
    strict_number,
)
from rcrn.boxes import boxes_from_features6
from rcrn.structures import Proposals

__all__ = ["VinVLPredictions", "OscarFeatures", "BottomUpTsv"]


class _TsvSource(BaseSource):
    """A source over the rows of one indexed TSV file."""

    index: TsvIndex

    def image_ids(self) -> list[str]:
        return list(self.index.keys)

    def _id_set(self) -> dict[str, int]:
        return self.index.rows

    def _get(self, image_id: str) -> Proposals:
        row = self.index.rows[image_id]
        return self._parse(row, self.index.read(row))

    def __len__(self) -> int:
        return len(self.index)

    def __iter__(self) -> Iterator[Proposals]:
        for row, line in self.index.iter_rows():
            yield self._parse(row, line)

    @abstractmethod
    def _parse(self, row: int, line: bytes) -> Proposals:
        """Decode data row ``row`` (its raw bytes ``line``) into proposals."""

    def _fields(self, row: int, line: bytes, counts: tuple[int, ...]) -> list[bytes]:
        """The tab-separated fields of row ``row``; the first must be the indexed image id."""
        where = self.index.where(row)
        parts = line.split(b"\t")
        if len(parts) not in counts:
            want = " or ".join(str(c) for c in counts)
            raise DetectorDataError(f"{where}: expected {want} tab-separated fields, got "
                                    f"{len(parts)} (truncated row?)")
        if parts[0] != self.index.keys[row].encode("utf-8"):
            raise DetectorDataError(f"{where}: the row now starts with "
                                    f"{parts[0][:40]!r}; the file changed since it was indexed")
        return parts

    def _empty_features(self, known: int | None = None) -> np.ndarray | None:
        """Features ``[0, d]`` for a 0-box row.

        ``d`` is ``known`` when the options fix it, else the width of the first row
        with boxes that reads without error (a malformed row is skipped here: it is
        reported when it is itself read).
        """
        if known:
            return np.zeros((0, known), dtype=self._out_dtype())
        if self.__dict__.get("_probing"):
            return None
        if "_dim" not in self.__dict__:
            self.__dict__["_probing"] = True
            dim = 0
            try:
                for row, line in self.index.iter_rows():
                    try:
                        props = self._parse(row, line)
                    except DetectorDataError:
                        continue
                    if len(props):
                        dim = props.feature_dim
                        break
            finally:
                self.__dict__["_probing"] = False
            self.__dict__["_dim"] = dim
        dim = self.__dict__["_dim"]
        return np.zeros((0, dim), dtype=self._out_dtype()) if dim else None

    def _out_dtype(self) -> np.dtype:
        dt = getattr(self, "dtype", np.dtype(np.float32))
        return np.dtype(dt).newbyteorder("=")

    def _json(self, text: bytes, where: str) -> Any:
        return json_loads(text, where, "; the row may be truncated")

    def _features(self, text: Any, count: int, where: str, what: str) -> np.ndarray:
        """``count`` feature rows decoded from base64 ``text``, checked against the accepted
        widths and dtype; float32 or float16 in native byte order."""
        raw = b64bytes(text, where, what)
        dim = check_feature_bytes(len(raw), count, self.dims, self.dtype, where, what)
        feats = np.frombuffer(raw, dtype=self.dtype).reshape(count, dim)
        return feats.astype(self._out_dtype(), copy=False)


def _scores_ok(scores: np.ndarray, where: str, what: str) -> np.ndarray:
    if not np.isfinite(scores).all():
        raise DetectorDataError(f"{where}: {what} hold NaN or infinite values")
    return scores


@register("vinvl", "VinVL predictions.tsv (+ .lineidx): boxes, classes, scores, features")
class VinVLPredictions(_TsvSource):
    """VinVL ``predictions.tsv``: ``image_key \\t {"objects": [{rect, class, conf, feature}]}``.

    ``rect`` is xyxy in pixels, ``feature`` base64 float32 (2048-d, or 2054-d with
    the normalised box appended).  The image size is read from the row's
    ``image_w`` / ``image_h`` when present, else from ``sizes``.  Each feature's
    byte length must be ``dim * 4`` (``dim * 2`` with ``dtype="float16"``).

    Args:
        path: the ``predictions.tsv`` file.
        sizes: image sizes when rows lack them (see :class:`ImageSizes`).
        lineidx: the ``.lineidx`` file (default: next to ``path`` when present, else a scan).
        dim: the feature width (default: 2048 or 2054).
        dtype: the precision of the feature bytes, ``"float32"`` (default) or ``"float16"``.
        features: ``False`` to ignore the ``feature`` fields (boxes, classes and scores only).
    """

    name = "vinvl"

    def __init__(self, path: str | Path, sizes: Any = None,
                 lineidx: str | Path | bool | None = None, dim: int | None = None,
                 dtype: str | None = None, features: bool = True) -> None:
        self.dims, self.dtype = feature_layout(str(path), dim, dtype, (2048, 2054))
        self.index = TsvIndex(path, lineidx)
        self.location = str(self.index.path)
        self.sizes = ImageSizes(sizes)
        self.read_features = bool(features)

    def _parse(self, row: int, line: bytes) -> Proposals:
        where = self.index.where(row)
        _, payload = self._fields(row, line, (2,))
        image_id = self.index.keys[row]
        data = self._json(payload, where)
        objects = data.get("objects") if isinstance(data, dict) else data
        if not isinstance(objects, list):
            raise DetectorDataError(f"{where}: expected {{'objects': [...]}}, got "
                                    f"{type(data).__name__}")
        if isinstance(data, dict) and "image_w" in data and "image_h" in data:
            size = _size_pair({"width": data["image_w"], "height": data["image_h"]}, where)
        else:
            size = self.sizes.require(image_id, where)
        boxes = np.zeros((len(objects), 4), dtype=np.float32)
        scores = np.zeros(len(objects), dtype=np.float32)
        labels: list[str] = []
        feats: list[np.ndarray] = []
        for j, obj in enumerate(objects):
            what = f"{where} object {j}"
            if not isinstance(obj, dict) or "rect" not in obj:
                raise DetectorDataError(f"{what}: expected an object with 'rect'")
            rect = obj["rect"]
            if not isinstance(rect, list) or len(rect) != 4:
                raise DetectorDataError(f"{what}: 'rect' must be 4 numbers [x1, y1, x2, y2], "
                                        f"got {str(rect)[:60]!r}")
            with np.errstate(over="ignore"):
                boxes[j] = [strict_number(v, what, "'rect'") for v in rect]
                scores[j] = strict_number(obj.get("conf", 1.0), what, "'conf'")
            if not np.isfinite(scores[j]):
                raise DetectorDataError(f"{what}: 'conf' {obj.get('conf')} is beyond float32")
            labels.append(str(obj.get("class", "")))
            if self.read_features and "feature" in obj:
                feats.append(self._features(obj["feature"], 1, what, "feature")[0])
        features = None
        if feats:
            if len(feats) != len(objects):
                raise DetectorDataError(f"{where}: {len(feats)} of {len(objects)} objects carry "
                                        f"a feature; all or none must")
            dims = {f.size for f in feats}
            if len(dims) != 1:
                raise DetectorDataError(f"{where}: objects carry features of different sizes "
                                        f"{sorted(dims)}")
            features = np.stack(feats)
        elif not objects and self.read_features:
            features = self._empty_features(self.dims[0] if len(self.dims) == 1 else None)
        return make_proposals(where, boxes=boxes, image_size=size, scores=scores, labels=labels,
                              features=features, image_id=image_id)


@register("oscar", "Oscar/VinVL features.tsv: region features (2048/2054-d, float32/16)")
class OscarFeatures(_TsvSource):
    """Oscar / VinVL ``features.tsv`` in either layout.

    Rows are ``key \\t {"num_boxes": n, "features": base64}`` or
    ``key \\t n \\t base64``.  The byte length of each row's features must equal
    ``n * dim * itemsize`` for 2054 or 2048 dimensions (or the given ``dim``) in
    float32, or in float16 when ``dtype="float16"`` is given; the width is decided
    row by row, so one malformed row is an error for that row alone.

    Boxes come from ``labels`` (a VinVL ``predictions.tsv`` / ``label.tsv`` whose
    rows hold ``rect``, ``class``, ``conf`` per object) when given, else from the
    last 6 values of 2054-d features (normalised ``x1, y1, x2, y2, w, h``) scaled
    by the image size from ``sizes``.

    Args:
        path: the ``features.tsv`` file.
        sizes: image sizes (see :class:`ImageSizes`); needed for boxes from 2054-d features.
        labels: a TSV of per-object ``rect`` / ``class`` / ``conf`` for the same keys.
        dim: the feature width, 2054 or 2048 by default.
        dtype: the precision of the bytes, ``"float32"`` (default) or ``"float16"``.
        keep_box_values: keep the 6 box values in 2054-d features (default: drop them,
            since they are in ``boxes``).
        lineidx: the ``.lineidx`` file (default: next to ``path`` when present).
    """

    name = "oscar"

    def __init__(self, path: str | Path, sizes: Any = None, labels: str | Path | None = None,
                 dim: int | None = None, dtype: str | None = None,
                 keep_box_values: bool = False,
                 lineidx: str | Path | bool | None = None) -> None:
        self.dims, self.dtype = feature_layout(str(path), dim, dtype, (2054, 2048))
        self.index = TsvIndex(path, lineidx)
        self.location = str(self.index.path)
        self.sizes = ImageSizes(sizes)
        self.labels = VinVLPredictions(labels, sizes=self.sizes, features=False) \
            if labels else None
        self.keep_box_values = bool(keep_box_values)

    def _split(self, row: int, line: bytes) -> tuple[str, int, Any]:
        where = self.index.where(row)
        parts = self._fields(row, line, (2, 3))
        key = self.index.keys[row]
        if len(parts) == 3:
            count_text, text = parts[1], parts[2]
        else:
            data = self._json(parts[1], where)
            if not isinstance(data, dict) or "num_boxes" not in data or "features" not in data:
                raise DetectorDataError(f"{where}: expected {{'num_boxes': n, 'features': "
                                        f"base64}}")
            count_text, text = data["num_boxes"], data["features"]
        count = strict_int(count_text, where, "the number of boxes", minimum=0)
        return key, count, text

    def _out_width(self, dim: int) -> int:
        return dim - 6 if dim >= 2054 and not self.keep_box_values else dim

    def _parse(self, row: int, line: bytes) -> Proposals:
        where = self.index.where(row)
        image_id, count, text = self._split(row, line)
        feats = self._features(text, count, where, "features")
        dim = feats.shape[1]
        scores = labels = None
        if self.labels is not None:
            if image_id not in self.labels:
                raise DetectorDataError(f"{where}: image has no row in {self.labels.location}")
            ref = self.labels[image_id]
            if len(ref) != count:
                raise DetectorDataError(f"{where}: {count} feature rows but {len(ref)} objects "
                                        f"in {self.labels.location}")
            boxes, size, scores, labels = ref.boxes, ref.image_size, ref.scores, ref.labels
        elif count == 0 and any(d >= 2054 for d in self.dims):
            size = self.sizes.require(image_id, where)
            boxes = np.zeros((0, 4), dtype=np.float32)
        elif dim >= 2054:
            size = self.sizes.require(image_id, where)
            six = feats[:, -6:].astype(np.float64)
            if not np.isfinite(six).all():
                raise DetectorDataError(f"{where}: the 6 box values of the features hold NaN "
                                        f"or infinite values")
            boxes = boxes_from_features6(six, size)
        else:
            raise DetectorDataError(f"{where}: {dim}-d features carry no boxes; pass "
                                    f"labels=<predictions.tsv> to read them")
        if count == 0:
            widths = {self._out_width(d) for d in self.dims}
            out = self._empty_features(widths.pop() if len(widths) == 1 else None)
            features = out if out is not None else feats
        else:
            features = feats[:, :-6] if dim >= 2054 and not self.keep_box_values else feats
        return make_proposals(where, boxes=boxes, image_size=size, scores=scores, labels=labels,
                              features=np.ascontiguousarray(features), image_id=image_id)


_NEW_COLUMNS = ("img_id", "img_h", "img_w", "objects_id", "objects_conf", "attrs_id",
                "attrs_conf", "num_boxes", "boxes", "features")
_OLD_COLUMNS = ("image_id", "image_w", "image_h", "num_boxes", "boxes", "features")


@register("bottomup", "bottom-up attention / LXMERT TSV (10-column and older 6-column layouts)")
class BottomUpTsv(_TsvSource):
    """Bottom-up-attention TSV as used by LXMERT, in both layouts.

    LXMERT: ``img_id, img_h, img_w, objects_id, objects_conf, attrs_id, attrs_conf,
    num_boxes, boxes, features``; the older layout: ``image_id, image_w, image_h,
    num_boxes, boxes, features`` (width before height).  Array fields are base64:
    ids int64, confidences float32, boxes float32 ``[n, 4]`` xyxy pixels, features
    float32 ``[n, 2048]`` (or ``dim`` / ``dtype`` as given).  The layout is told
    apart by the number of columns.

    Args:
        path: the ``.tsv`` file.
        vocab: object class names (a list or ``objects_vocab.txt``) to turn
            ``objects_id`` into labels; without it labels are the ids as text.
        lineidx: a ``.lineidx`` file (default: next to ``path`` when present, else a scan).
        dim: the feature width (default 2048).
        dtype: the precision of the feature bytes, ``"float32"`` (default) or ``"float16"``.
    """

    name = "bottomup"

    def __init__(self, path: str | Path, vocab: Any = None,
                 lineidx: str | Path | bool | None = None, dim: int | None = None,
                 dtype: str | None = None) -> None:
        self.dims, self.dtype = feature_layout(str(path), dim, dtype, (2048,))
        self.index = TsvIndex(path, lineidx)
        self.location = str(self.index.path)
        self.vocab = read_vocab(vocab)

    def _parse(self, row: int, line: bytes) -> Proposals:
        where = self.index.where(row)
        parts = self._fields(row, line, (len(_NEW_COLUMNS), len(_OLD_COLUMNS)))
        cols = _NEW_COLUMNS if len(parts) == len(_NEW_COLUMNS) else _OLD_COLUMNS
        rec = dict(zip(cols, parts))
        image_id = self.index.keys[row]
        if cols is _NEW_COLUMNS:
            size = _size_pair([rec["img_w"], rec["img_h"]], where)
        else:
            size = _size_pair([rec["image_w"], rec["image_h"]], where)
        n = strict_int(rec["num_boxes"], where, "num_boxes", minimum=0)
        boxes = decode_array(rec["boxes"], np.float32, where, "boxes", n * 4).reshape(n, 4)
        features = self._features(rec["features"], n, where, "features")
        if n == 0:
            features = self._empty_features(self.dims[0] if len(self.dims) == 1 else None)
        scores = labels = None
        if cols is _NEW_COLUMNS:
            ids = decode_array(rec["objects_id"], np.int64, where, "objects_id", n)
            scores = _scores_ok(decode_array(rec["objects_conf"], np.float32, where,
                                             "objects_conf", n), where, "objects_conf")
            decode_array(rec["attrs_id"], np.int64, where, "attrs_id", n)
            decode_array(rec["attrs_conf"], np.float32, where, "attrs_conf", n)
            labels = self._labels(ids, where)
        return make_proposals(where, boxes=boxes, image_size=size, scores=scores, labels=labels,
                              features=features, image_id=image_id)

    def _labels(self, ids: np.ndarray, where: str) -> list[str]:
        if self.vocab is None:
            return [str(int(i)) for i in ids]
        bad = [int(i) for i in ids if not 0 <= i < len(self.vocab)]
        if bad:
            raise DetectorDataError(f"{where}: object ids {bad[:5]} are outside the vocabulary "
                                    f"of {len(self.vocab)} classes")
        return [self.vocab[int(i)] for i in ids]
