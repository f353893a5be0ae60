"""A feature store: every image's proposals and region features in memory-mapped arrays.

Layout of a store folder::

    meta.json      format, version, source (format, location, options), feature_dim,
                   dtype, counts, label vocabulary; written last, so a store without it
                   is incomplete
    index.json     image_ids, offsets, counts, sizes ([W, H]) -- one entry per image
    features.bin   [boxes, feature_dim] float16 or float32, little-endian, row-major
    boxes.bin      [boxes, 4] float32 xyxy pixels
    scores.bin     [boxes] float32                   (when the source has scores)
    labels.bin     [boxes] int32 index into meta["labels"]  (when it has labels)

Images are contiguous runs of rows, so reading one image is one slice of each
array (O(1) random access).  :class:`FeatureStore` opens the arrays lazily in
each process and drops them when pickled, so it can be handed to torch
DataLoader workers.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import BaseSource, make_proposals, register
from detectors.errors import DetectorDataError
from rcrn.structures import Proposals

_HAS_PREADV = hasattr(os, "preadv")  # Linux and the BSDs; elsewhere reads copy the map

__all__ = ["FeatureStore", "StoreWriter", "open_store", "convert", "store_info",
           "STORE_FORMAT", "STORE_VERSION"]

STORE_FORMAT = "rcrn-feature-store"
STORE_VERSION = 1
_FILES = ("meta.json", "index.json", "features.bin", "boxes.bin", "scores.bin", "labels.bin")


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


class StoreWriter:
    """Append the proposals of images one by one, then :meth:`close` to finish the store.

    Args:
        path: the store folder to create.
        float16: store features as float16 (half the size) instead of float32.
        source: a description of where the proposals come from, e.g.
            ``{"format": "vinvl", "location": "predictions.tsv"}``; saved in ``meta.json``.
        overwrite: replace an existing store at ``path``.
    """

    def __init__(self, path: str | Path, float16: bool = False,
                 source: dict[str, Any] | None = None, overwrite: bool = False) -> None:
        self.path = Path(path)
        if self.path.exists():
            if not self.path.is_dir():
                raise DetectorDataError(f"{self.path}: exists and is not a folder")
            present = [p.name for p in self.path.iterdir()]
            foreign = [n for n in present if n not in _FILES]
            if present and not overwrite:
                raise DetectorDataError(f"{self.path}: exists and is not empty; pass "
                                        f"overwrite=True (--overwrite) to replace it")
            if foreign:
                raise DetectorDataError(f"{self.path}: holds files that are not part of a "
                                        f"store ({foreign[:3]}); refusing to overwrite")
            for name in present:
                (self.path / name).unlink()
        self.path.mkdir(parents=True, exist_ok=True)
        self.dtype = np.dtype("<f2" if float16 else "<f4")
        self.source = _jsonable(source or {})
        self.ids: list[str] = []
        self.seen: set[str] = set()
        self.offsets: list[int] = []
        self.counts: list[int] = []
        self.sizes: list[list[int]] = []
        self.total = 0
        self.dim: int | None = None
        self.has: dict[str, bool] = {}
        self.vocab: dict[str, int] = {}
        self._files = {name: open(self.path / f"{name}.bin", "wb")
                       for name in ("features", "boxes", "scores", "labels")}
        self.closed = False

    def _decide(self, what: str, present: bool, image_id: str) -> bool:
        if what not in self.has:
            self.has[what] = present
        elif self.has[what] != present:
            state = "have" if self.has[what] else "lack"
            raise DetectorDataError(f"image {image_id!r}: earlier images {state} {what}, this one "
                                    f"does not match; a store holds {what} for all images or none")
        return present

    def add(self, props: Proposals) -> None:
        """Append the proposals of one image.

        Raises:
            DetectorDataError: a repeated image id, a feature size unlike earlier
                images, or features that overflow float16.
        """
        if self.closed:
            raise DetectorDataError(f"{self.path}: the store is already closed")
        image_id = str(props.image_id)
        if not image_id:
            raise DetectorDataError("proposals without an image_id cannot be stored")
        if image_id in self.seen:
            raise DetectorDataError(f"image {image_id!r} appears twice in the source")
        n = len(props)
        if n:
            if self._decide("features", props.features is not None, image_id):
                dim = props.feature_dim
                if self.dim is None:
                    self.dim = dim
                elif dim != self.dim:
                    raise DetectorDataError(f"image {image_id!r}: {dim}-d features but earlier "
                                            f"images have {self.dim}-d")
                with np.errstate(over="ignore"):
                    feats = np.ascontiguousarray(props.features, dtype=self.dtype)
                if not np.isfinite(feats).all():
                    raise DetectorDataError(f"image {image_id!r}: features overflow "
                                            f"{self.dtype.name} (|value| > "
                                            f"{np.finfo(self.dtype).max:g}); store float32")
                self._files["features"].write(feats.tobytes())
            self._files["boxes"].write(np.ascontiguousarray(props.boxes, "<f4").tobytes())
            if self._decide("scores", props.scores is not None, image_id):
                self._files["scores"].write(np.ascontiguousarray(props.scores, "<f4").tobytes())
            if self._decide("labels", props.labels is not None, image_id):
                ids = [self.vocab.setdefault(label, len(self.vocab))
                       for label in props.labels or []]
                self._files["labels"].write(np.asarray(ids, "<i4").tobytes())
        self.seen.add(image_id)
        self.ids.append(image_id)
        self.offsets.append(self.total)
        self.counts.append(n)
        self.sizes.append([int(props.image_size[0]), int(props.image_size[1])])
        self.total += n

    def close(self) -> dict[str, Any]:
        """Write the index and metadata; returns the metadata."""
        for f in self._files.values():
            f.close()
        for name in ("features", "scores", "labels"):
            if not self.has.get(name, False):
                (self.path / f"{name}.bin").unlink()
        with open(self.path / "index.json", "w", encoding="utf-8") as f:
            json.dump({"image_ids": self.ids, "offsets": self.offsets, "counts": self.counts,
                       "sizes": self.sizes}, f)
        meta = {
            "format": STORE_FORMAT, "version": STORE_VERSION, "source": self.source,
            "feature_dim": int(self.dim or 0) if self.has.get("features") else 0,
            "dtype": "float16" if self.dtype.itemsize == 2 else "float32",
            "num_images": len(self.ids), "num_boxes": self.total,
            "has_features": bool(self.has.get("features", False)),
            "has_scores": bool(self.has.get("scores", False)),
            "has_labels": bool(self.has.get("labels", False)),
            "labels": sorted(self.vocab, key=self.vocab.__getitem__),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        with open(self.path / "meta.json.tmp", "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
        os.replace(self.path / "meta.json.tmp", self.path / "meta.json")
        self.closed = True
        return meta

    def abort(self) -> None:
        """Close the files and delete the partial store."""
        for f in self._files.values():
            f.close()
        self.closed = True
        shutil.rmtree(self.path, ignore_errors=True)


def store_info(path: str | Path) -> dict[str, Any]:
    """The metadata (``meta.json``) of a store, checked to be a complete store."""
    path = Path(path)
    meta_path = path / "meta.json"
    if not path.is_dir():
        raise DetectorDataError(f"{path}: no such feature store folder")
    if not meta_path.exists():
        hint = " (incomplete: the conversion did not finish)" if (path / "boxes.bin").exists() \
            else ""
        raise DetectorDataError(f"{path}: not a feature store, meta.json is missing{hint}")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DetectorDataError(f"{meta_path}: not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != STORE_FORMAT:
        raise DetectorDataError(f"{meta_path}: not an {STORE_FORMAT} metadata file")
    if int(meta.get("version", 0)) > STORE_VERSION:
        raise DetectorDataError(f"{meta_path}: store version {meta['version']} is newer than "
                                f"this reader ({STORE_VERSION}); upgrade rcrn")
    return meta


@register("store", "a feature store written by `rcrn features convert`")
class FeatureStore(BaseSource):
    """Read a feature store (see the module docstring); ``store[image_id]`` gives Proposals.

    Features come back in the stored dtype by default (float16 for a ``--float16``
    store: half the memory and half the bytes sent from DataLoader workers); pass
    ``dtype=np.float32`` to get float32 (converted exactly).  The values were
    checked to be finite when the store was written, so reads skip the checks of
    :class:`Proposals` unless ``validate=True``.

    Args:
        path: the store folder.
        dtype: dtype of the returned features; ``None`` keeps the stored dtype.
        validate: run every check of :class:`Proposals` on each read.
    """

    name = "store"

    def __init__(self, path: str | Path, dtype: Any = None, validate: bool = False) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        self.meta = store_info(self.path)
        self.out_dtype = None if dtype is None else np.dtype(dtype)
        if self.out_dtype is not None and self.out_dtype.kind != "f":
            raise ValueError(f"dtype must be a floating type, got {self.out_dtype}")
        self.validate = bool(validate)
        index_path = self.path / "index.json"
        try:
            index = json.loads(index_path.read_text(encoding="utf-8"))
            self._ids: list[str] = [str(x) for x in index["image_ids"]]
            self._offsets = np.asarray(index["offsets"], dtype=np.int64)
            self._counts = np.asarray(index["counts"], dtype=np.int64)
            self._sizes = np.asarray(index["sizes"], dtype=np.int64).reshape(-1, 2)
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise DetectorDataError(f"{index_path}: unreadable store index ({exc})") from None
        n = len(self._ids)
        if not (len(self._offsets) == len(self._counts) == len(self._sizes) == n) or \
                n != self.meta["num_images"]:
            raise DetectorDataError(f"{index_path}: index arrays disagree in length with each "
                                    f"other or with meta.json")
        self._rows = {image_id: i for i, image_id in enumerate(self._ids)}
        self._labels: list[str] = list(self.meta.get("labels", []))
        self._check_sizes()
        self._arrays: dict[str, np.ndarray] | None = None
        self._features_file: Any = None
        self._pid = -1

    @property
    def feature_dim(self) -> int:
        """Size of the stored region features (0 when the store has none)."""
        return int(self.meta["feature_dim"])

    @property
    def source(self) -> dict[str, Any]:
        """Where the proposals came from (format, location, options)."""
        return dict(self.meta.get("source", {}))

    def _layout(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        total = int(self.meta["num_boxes"])
        parts = {"boxes": ("<f4", (total, 4))}
        if self.meta["has_features"]:
            dt = "<f2" if self.meta["dtype"] == "float16" else "<f4"
            parts["features"] = (dt, (total, self.feature_dim))
        if self.meta["has_scores"]:
            parts["scores"] = ("<f4", (total,))
        if self.meta["has_labels"]:
            parts["labels"] = ("<i4", (total,))
        return parts

    def _check_sizes(self) -> None:
        for name, (dt, shape) in self._layout().items():
            path = self.path / f"{name}.bin"
            want = int(np.prod(shape)) * np.dtype(dt).itemsize
            have = path.stat().st_size if path.exists() else -1
            if have != want:
                state = "missing" if have < 0 else f"{have} bytes"
                raise DetectorDataError(f"{path}: expected {want} bytes for shape {list(shape)} "
                                        f"{np.dtype(dt).name}, found {state} (truncated store?)")

    def _open(self) -> dict[str, np.ndarray]:
        if self._arrays is None or self._pid != os.getpid():
            arrays = {}
            for name, (dt, shape) in self._layout().items():
                if shape[0] == 0:
                    arrays[name] = np.zeros(shape, dtype=dt)
                else:
                    arrays[name] = np.memmap(self.path / f"{name}.bin", dtype=dt, mode="r",
                                             shape=shape)
            features_file = None
            if "features" in arrays and _HAS_PREADV and arrays["features"].size:
                features_file = open(self.path / "features.bin", "rb",  # noqa: SIM115
                                     buffering=0)
            # published whole, file first: a reader thread never sees half of a state
            self._features_file = features_file
            self._arrays = arrays
            self._pid = os.getpid()
        return self._arrays

    def _features(self, arrays: dict[str, np.ndarray], start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of the features, in ``self.out_dtype``.

        One ``preadv`` straight into the result where the OS has it: a cold read of a
        whole image is then one request for its bytes, where copying from the memory
        map faults page by page (about 5x fewer reads/s from a dropped page cache).
        """
        mapped = arrays["features"]
        features_file = self._features_file
        if features_file is None or stop == start:
            return _convert(mapped[start:stop], self.out_dtype)
        block = np.empty((stop - start, mapped.shape[1]), dtype=mapped.dtype)
        offset = start * mapped.shape[1] * mapped.dtype.itemsize
        got = os.preadv(features_file.fileno(), [block], offset)
        if got != block.nbytes:
            raise DetectorDataError(f"{self.path / 'features.bin'}: short read at byte "
                                    f"{offset} ({got} of {block.nbytes} bytes)")
        if self.out_dtype in (None, block.dtype) and block.dtype.isnative:
            return block
        return _convert(block, self.out_dtype)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_arrays"] = None
        state["_features_file"] = None
        state["_pid"] = -1
        state.pop("_ids_cache", None)
        return state

    def image_ids(self) -> list[str]:
        return list(self._ids)

    def _id_set(self) -> dict[str, int]:
        return self._rows

    def __len__(self) -> int:
        return len(self._ids)

    def _get(self, image_id: str) -> Proposals:
        i = self._rows[image_id]
        return self._read(i)

    def _read(self, i: int) -> Proposals:
        arrays = self._open()
        start = int(self._offsets[i])
        stop = start + int(self._counts[i])
        feats = None
        if "features" in arrays:
            feats = self._features(arrays, start, stop)
        labels = None
        if "labels" in arrays:
            names = self._labels
            labels = [names[j] for j in arrays["labels"][start:stop].tolist()]
        fields = {
            "boxes": np.array(arrays["boxes"][start:stop]),
            "image_size": (int(self._sizes[i, 0]), int(self._sizes[i, 1])),
            "scores": np.array(arrays["scores"][start:stop]) if "scores" in arrays else None,
            "labels": labels, "image_id": self._ids[i]}
        if self.validate:
            return make_proposals(f"{self.path} image {self._ids[i]!r}", features=feats,
                                  **fields)
        props = Proposals(**fields)  # small arrays: the checks cost little
        props.features = feats  # finite by construction (checked when written)
        return props

    def __iter__(self) -> Iterator[Proposals]:
        for i in range(len(self._ids)):
            yield self._read(i)

    def nbytes(self) -> int:
        """Total size of the store's files on disk."""
        return sum(p.stat().st_size for p in self.path.iterdir() if p.is_file())


def open_store(path: str | Path, dtype: Any = None, validate: bool = False) -> FeatureStore:
    """Open a feature store for random access (see :class:`FeatureStore`)."""
    return FeatureStore(path, dtype=dtype, validate=validate)


def _convert(block: np.ndarray, dtype: np.dtype | None) -> np.ndarray:
    """A private in-memory copy of ``block`` in ``dtype`` (float16 to float32 done fast)."""
    if dtype is None or dtype == block.dtype:
        return np.array(block, dtype=block.dtype.newbyteorder("="))
    if block.dtype.itemsize == 2 and dtype == np.float32:
        # exact for finite halves: move exponent and mantissa into place, rescale the
        # exponent bias by 2**112, put the sign back (several times faster than astype)
        bits = np.asarray(block).view("<u2").astype(np.uint32)
        sign = (bits & 0x8000) << 16
        bits &= 0x7FFF
        bits <<= 13
        out = bits.view(np.float32)
        out *= np.float32(2.0 ** 112)
        bits |= sign
        return out
    return np.asarray(block).astype(dtype)


def convert(source: Any, out: str | Path, float16: bool = False, progress: bool = True,
            overwrite: bool = False, source_info: dict[str, Any] | None = None,
            limit: int | None = None) -> dict[str, Any]:
    """Write every image of a proposal source into a new store.

    Args:
        source: a proposal source (see :func:`detectors.load`) or any iterable of
            :class:`Proposals`.
        out: the store folder to create.
        float16: store features as float16.
        progress: show a tqdm progress bar.
        overwrite: replace an existing store.
        source_info: recorded in ``meta.json``; default: the source's name and location.
        limit: stop after this many images.

    Returns:
        The store's metadata.  On any error the partial store is deleted.
    """
    if source_info is None:
        source_info = {"format": getattr(source, "name", type(source).__name__),
                       "location": getattr(source, "location", "")}
    total = len(source) if hasattr(source, "__len__") else None
    if limit is not None and total is not None:
        total = min(total, limit)
    writer = StoreWriter(out, float16=float16, source=source_info, overwrite=overwrite)
    try:
        items: Iterable[Proposals] = iter(source)
        if progress:
            from tqdm import tqdm

            items = tqdm(items, total=total, desc=f"convert -> {Path(out).name}", unit="img")
        for k, props in enumerate(items):
            if limit is not None and k >= limit:
                break
            if not isinstance(props, Proposals):
                raise DetectorDataError(f"item {k} of the source is a {type(props).__name__}, "
                                        f"not Proposals")
            try:
                writer.add(props)
            except DetectorDataError as exc:
                where = source_info.get("location") or source_info.get("format", "source")
                raise DetectorDataError(f"{where}: {exc}") from None
        return writer.close()
    except BaseException:
        writer.abort()
        raise
