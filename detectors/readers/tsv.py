"""Readers for TSV detector outputs: VinVL predictions, Oscar features, bottom-up (LXMERT).

Each row is ``image_id \\t ...``; the readers index rows once (from the
``.lineidx`` file when there is one) and then decode any image on demand.
Rows are split on tabs directly, so no ``csv.field_size_limit`` is involved.
"""

from __future__ import annotations

import json
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
    decode_array,
    read_vocab,
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

    def _empty_features(self) -> np.ndarray | None:
        """Features ``[0, d]`` for a 0-box row, ``d`` from the first row that has boxes."""
        if self.__dict__.get("_probing"):
            return None
        if "_dim" not in self.__dict__:
            self.__dict__["_probing"] = True
            dim = 0
            try:
                for row, line in self.index.iter_rows():
                    props = self._parse(row, line)
                    if len(props):
                        dim = props.feature_dim
                        break
            finally:
                self.__dict__["_probing"] = False
            self.__dict__["_dim"] = dim
        dim = self.__dict__["_dim"]
        return np.zeros((0, dim), dtype=np.float32) if dim else None

    def _json(self, text: bytes, where: str) -> Any:
        try:
            return json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DetectorDataError(f"{where}: not valid JSON ({exc}); the row may be "
                                    f"truncated") from None


def _fields(line: bytes, where: str, counts: tuple[int, ...]) -> list[bytes]:
    parts = line.split(b"\t")
    if len(parts) not in counts:
        want = " or ".join(str(c) for c in counts)
        raise DetectorDataError(f"{where}: expected {want} tab-separated fields, got "
                                f"{len(parts)} (truncated row?)")
    return parts


@register("vinvl", "VinVL predictions.tsv (+ .lineidx): boxes, classes, scores, features")
class VinVLPredictions(_TsvSource):
    """VinVL ``predictions.tsv``: ``image_key \\t {"objects": [{rect, class, conf, feature}]}``.

    ``rect`` is xyxy in pixels, ``feature`` base64 float32 (2048-d, or 2054-d with
    the normalised box appended).  The image size is read from the row's
    ``image_w`` / ``image_h`` when present, else from ``sizes``.

    Args:
        path: the ``predictions.tsv`` file.
        sizes: image sizes when rows lack them (see :class:`ImageSizes`).
        lineidx: the ``.lineidx`` file (default: next to ``path`` when present, else a scan).
    """

    name = "vinvl"

    def __init__(self, path: str | Path, sizes: Any = None,
                 lineidx: str | Path | bool | None = None) -> None:
        self.index = TsvIndex(path, lineidx)
        self.location = str(self.index.path)
        self.sizes = ImageSizes(sizes)

    def _parse(self, row: int, line: bytes) -> Proposals:
        where = self.index.where(row)
        key, payload = _fields(line, where, (2,))
        image_id = key.decode("utf-8")
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
            try:
                boxes[j] = np.asarray(obj["rect"], dtype=np.float32)
                scores[j] = float(obj.get("conf", 1.0))
            except (TypeError, ValueError):
                raise DetectorDataError(f"{what}: 'rect' must be 4 numbers and 'conf' a "
                                        f"number") from None
            labels.append(str(obj.get("class", "")))
            if "feature" in obj:
                feats.append(decode_array(obj["feature"], np.float32, what, "feature"))
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
        elif not objects:
            features = self._empty_features()
        return make_proposals(where, boxes=boxes, image_size=size, scores=scores, labels=labels,
                              features=features, image_id=image_id)


_OSCAR_CANDIDATES = [(2054, np.float32), (2048, np.float32), (2054, np.float16),
                     (2048, np.float16)]


@register("oscar", "Oscar/VinVL features.tsv: region features (2048/2054-d, float32/16)")
class OscarFeatures(_TsvSource):
    """Oscar / VinVL ``features.tsv`` in either layout.

    Rows are ``key \\t {"num_boxes": n, "features": base64}`` or
    ``key \\t n \\t base64``.  The feature size and precision are detected from
    the byte length, which must equal ``n * dim * itemsize`` for one of 2054 or
    2048 dimensions in float32 or float16 (or the given ``dim`` / ``dtype``).

    Boxes come from ``labels`` (a VinVL ``predictions.tsv`` / ``label.tsv`` whose
    rows hold ``rect``, ``class``, ``conf`` per object) when given, else from the
    last 6 values of 2054-d features (normalised ``x1, y1, x2, y2, w, h``) scaled
    by the image size from ``sizes``.

    Args:
        path: the ``features.tsv`` file.
        sizes: image sizes (see :class:`ImageSizes`); needed for boxes from 2054-d features.
        labels: a TSV of per-object ``rect`` / ``class`` / ``conf`` for the same keys.
        dim: force the feature size instead of detecting it.
        dtype: force ``"float32"`` or ``"float16"``.
        keep_box_values: keep the 6 box values in 2054-d features (default: drop them,
            since they are in ``boxes``).
        lineidx: the ``.lineidx`` file (default: next to ``path`` when present).
    """

    name = "oscar"

    def __init__(self, path: str | Path, sizes: Any = None, labels: str | Path | None = None,
                 dim: int | None = None, dtype: str | None = None,
                 keep_box_values: bool = False,
                 lineidx: str | Path | bool | None = None) -> None:
        self.index = TsvIndex(path, lineidx)
        self.location = str(self.index.path)
        self.sizes = ImageSizes(sizes)
        self.labels = VinVLPredictions(labels, sizes=self.sizes) if labels else None
        self.keep_box_values = bool(keep_box_values)
        dims = [int(dim)] if dim else [2054, 2048]
        dtypes = [np.dtype(dtype)] if dtype else [np.dtype(np.float32), np.dtype(np.float16)]
        for dt in dtypes:
            if dt not in (np.float32, np.float16):
                raise DetectorDataError(f"{path}: dtype must be float32 or float16, got {dt}")
        self.candidates = [(d, dt) for dt in dtypes for d in dims]
        self.layout: tuple[int, np.dtype] | None = None

    def _split(self, row: int, line: bytes) -> tuple[str, int, bytes]:
        where = self.index.where(row)
        parts = _fields(line, where, (2, 3))
        key = parts[0].decode("utf-8")
        if len(parts) == 3:
            count_text, text = parts[1], parts[2]
        else:
            data = self._json(parts[1], where)
            if not isinstance(data, dict) or "num_boxes" not in data or "features" not in data:
                raise DetectorDataError(f"{where}: expected {{'num_boxes': n, 'features': "
                                        f"base64}}")
            count_text, text = data["num_boxes"], data["features"]
        try:
            count = int(count_text)
        except (TypeError, ValueError):
            raise DetectorDataError(f"{where}: number of boxes {count_text!r} is not an "
                                    f"integer") from None
        if count < 0:
            raise DetectorDataError(f"{where}: negative number of boxes {count}")
        return key, count, b64bytes(text, where, "features")

    def _detect(self, row: int, count: int, nbytes: int) -> tuple[int, np.dtype]:
        where = self.index.where(row)
        matches = [(d, dt) for d, dt in self.candidates if count * d * dt.itemsize == nbytes]
        if not matches:
            tried = ", ".join(f"{count}*{d}*{dt.itemsize} = {count * d * dt.itemsize} "
                              f"({dt.name})" for d, dt in self.candidates)
            raise DetectorDataError(f"{where}: features hold {nbytes} bytes for {count} boxes, "
                                    f"which matches none of: {tried}")
        return matches[0]

    def _layout(self) -> tuple[int, np.dtype]:
        if self.layout is None:
            for row, line in self.index.iter_rows():
                _, count, raw = self._split(row, line)
                if count:
                    self.layout = self._detect(row, count, len(raw))
                    break
            else:
                self.layout = self.candidates[0]
        return self.layout

    def _parse(self, row: int, line: bytes) -> Proposals:
        where = self.index.where(row)
        image_id, count, raw = self._split(row, line)
        dim, dt = self._layout()
        if count * dim * dt.itemsize != len(raw):
            found = self._detect(row, count, len(raw))
            raise DetectorDataError(f"{where}: features are {found[0]}-d {found[1].name} but "
                                    f"earlier rows are {dim}-d {dt.name}")
        feats = np.frombuffer(raw, dtype=dt.newbyteorder("<")).reshape(count, dim)
        scores = labels = None
        if self.labels is not None:
            if image_id not in self.labels:
                raise DetectorDataError(f"{where}: image has no row in {self.labels.location}")
            ref = self.labels[image_id]
            if len(ref) != count:
                raise DetectorDataError(f"{where}: {count} feature rows but {len(ref)} objects "
                                        f"in {self.labels.location}")
            boxes, size, scores, labels = ref.boxes, ref.image_size, ref.scores, ref.labels
        elif dim >= 2054:
            size = self.sizes.require(image_id, where)
            boxes = boxes_from_features6(feats[:, -6:].astype(np.float64), size)
        else:
            raise DetectorDataError(f"{where}: {dim}-d features carry no boxes; pass "
                                    f"labels=<predictions.tsv> to read them")
        if dim >= 2054 and not self.keep_box_values:
            feats = feats[:, :-6]
        return make_proposals(where, boxes=boxes, image_size=size, scores=scores, labels=labels,
                              features=np.ascontiguousarray(feats.astype(dt.newbyteorder("="))),
                              image_id=image_id)


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
    float32 ``[n, d]``.  The layout is told apart by the number of columns.

    Args:
        path: the ``.tsv`` file.
        vocab: object class names (a list or ``objects_vocab.txt``) to turn
            ``objects_id`` into labels; without it labels are the ids as text.
        lineidx: a ``.lineidx`` file (default: next to ``path`` when present, else a scan).
    """

    name = "bottomup"

    def __init__(self, path: str | Path, vocab: Any = None,
                 lineidx: str | Path | bool | None = None) -> None:
        self.index = TsvIndex(path, lineidx)
        self.location = str(self.index.path)
        self.vocab = read_vocab(vocab)

    def _parse(self, row: int, line: bytes) -> Proposals:
        where = self.index.where(row)
        parts = _fields(line, where, (len(_NEW_COLUMNS), len(_OLD_COLUMNS)))
        cols = _NEW_COLUMNS if len(parts) == len(_NEW_COLUMNS) else _OLD_COLUMNS
        rec = dict(zip(cols, parts))
        image_id = parts[0].decode("utf-8")
        try:
            if cols is _NEW_COLUMNS:
                size = (int(rec["img_w"]), int(rec["img_h"]))
            else:
                size = (int(rec["image_w"]), int(rec["image_h"]))
            n = int(rec["num_boxes"])
        except ValueError:
            raise DetectorDataError(f"{where}: image size and num_boxes must be "
                                    f"integers") from None
        boxes = decode_array(rec["boxes"], np.float32, where, "boxes", n * 4).reshape(n, 4)
        flat = decode_array(rec["features"], np.float32, where, "features")
        if n == 0:
            if flat.size:
                raise DetectorDataError(f"{where}: 0 boxes but {flat.size} feature values")
            features = self._empty_features()
        else:
            if flat.size % n:
                raise DetectorDataError(f"{where}: {flat.size} feature values do not split into "
                                        f"{n} boxes (truncated?)")
            features = flat.reshape(n, flat.size // n)
        scores = labels = None
        if cols is _NEW_COLUMNS:
            ids = decode_array(rec["objects_id"], np.int64, where, "objects_id", n)
            scores = decode_array(rec["objects_conf"], np.float32, where, "objects_conf", n)
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
