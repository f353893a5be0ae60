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
array (O(1) random access).  :class:`FeatureStore` opens the files lazily in
each process and drops them when pickled, so it can be handed to torch
DataLoader workers.

Reads never go through a memory map: each slice is copied with one positional
read (``preadv``) straight into the returned array, after the sizes of the files
were checked against ``meta.json`` (when the store is opened and again when a
process first reads it).  A file cut short while the store is open is then a
short read, reported as an error naming the file, where a memory map would kill
the process with SIGBUS.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import shutil
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import BaseSource, make_proposals, register
from detectors.errors import DetectorDataError
from detectors.readers._common import MAX_IMAGE_SIDE, json_loads, os_error
from rcrn.structures import Proposals, StructureError

_HAS_PREADV = hasattr(os, "preadv")  # Linux and the BSDs
_HAS_PREAD = hasattr(os, "pread")  # every POSIX system; elsewhere: seek + read under a lock

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
        w, h = props.image_size
        if not (0 < w <= MAX_IMAGE_SIDE and 0 < h <= MAX_IMAGE_SIDE):
            raise DetectorDataError(f"image {image_id!r}: image size {w} x {h} is not between 1 "
                                    f"and {MAX_IMAGE_SIDE} pixels a side")
        if n:
            if self._decide("features", props.features is not None, image_id):
                dim = props.feature_dim
                if dim < 1:
                    raise DetectorDataError(f"image {image_id!r}: features have no values per "
                                            f"box")
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


_META_INTS = ("version", "num_images", "num_boxes", "feature_dim")
_META_FLAGS = ("has_features", "has_scores", "has_labels")


def store_info(path: str | Path) -> dict[str, Any]:
    """The metadata (``meta.json``) of a store, checked to be a complete store."""
    path = Path(path)
    meta_path = path / "meta.json"
    if not path.is_dir():
        if path.exists():
            raise DetectorDataError(f"{path}: is not a folder, expected a feature store folder")
        raise DetectorDataError(f"{path}: no such feature store folder")
    if not meta_path.exists():
        hint = " (incomplete: the conversion did not finish)" if (path / "boxes.bin").exists() \
            else ""
        raise DetectorDataError(f"{path}: not a feature store, meta.json is missing{hint}")
    try:
        text = meta_path.read_bytes()
    except OSError as exc:
        raise os_error(meta_path, exc) from None
    meta = json_loads(text, str(meta_path))
    if not isinstance(meta, dict) or meta.get("format") != STORE_FORMAT:
        raise DetectorDataError(f"{meta_path}: not an {STORE_FORMAT} metadata file")
    for key in _META_INTS:
        value = meta.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise DetectorDataError(f"{meta_path}: {key!r} must be a whole number >= 0, got "
                                    f"{str(value)[:40]!r}")
    if meta["version"] > STORE_VERSION:
        raise DetectorDataError(f"{meta_path}: store version {meta['version']} is newer than "
                                f"this reader ({STORE_VERSION}); upgrade rcrn")
    for key in _META_FLAGS:
        if not isinstance(meta.get(key), bool):
            raise DetectorDataError(f"{meta_path}: {key!r} must be true or false, got "
                                    f"{str(meta.get(key))[:40]!r}")
    if meta.get("dtype") not in ("float16", "float32"):
        raise DetectorDataError(f"{meta_path}: 'dtype' must be float16 or float32, got "
                                f"{str(meta.get('dtype'))[:40]!r}")
    labels = meta.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
        raise DetectorDataError(f"{meta_path}: 'labels' must be a list of class names")
    if not isinstance(meta.get("source", {}), dict):
        raise DetectorDataError(f"{meta_path}: 'source' must be an object")
    if meta["has_features"] and meta["feature_dim"] < 1:
        raise DetectorDataError(f"{meta_path}: has_features is true but feature_dim is "
                                f"{meta['feature_dim']}")
    return meta


def _int_array(value: Any, where: str, what: str, shape: tuple[int, ...]) -> np.ndarray:
    """A list of JSON integers as an int64 array of ``shape`` (``-1``: any length)."""
    if not isinstance(value, list):
        raise DetectorDataError(f"{where}: {what!r} must be a list, got {type(value).__name__}")
    try:
        arr = np.asarray(value) if value else np.zeros(0, dtype=np.int64)
    except (ValueError, TypeError, OverflowError):
        arr = np.zeros(0, dtype=object)
    if len(shape) > 1 and arr.size == 0:
        arr = arr.reshape((0,) + shape[1:])
    ok = arr.dtype.kind == "i" and arr.ndim == len(shape) and all(
        want in (-1, have) for want, have in zip(shape, arr.shape))
    if not ok:
        form = "[n, 2] integers" if len(shape) > 1 else "integers"
        raise DetectorDataError(f"{where}: {what!r} must hold {form}")
    return arr.astype(np.int64, copy=False)


def _read_into(handle: Any, lock: threading.Lock, block: np.ndarray, offset: int,
               done: int = 0) -> int:
    """Fill ``block`` from the file at byte ``offset``, its first ``done`` bytes being
    filled already; returns the bytes read now (fewer at the end of the file)."""
    fd = handle.fileno()
    want = block.nbytes
    view = memoryview(block).cast("B")
    got = done
    while got < want:
        if _HAS_PREADV:
            k = os.preadv(fd, [view[got:]], offset + got)
        elif _HAS_PREAD:
            data = os.pread(fd, want - got, offset + got)
            k = len(data)
            view[got:got + k] = data
        else:
            with lock:
                handle.seek(offset + got)
                k = handle.readinto(view[got:]) or 0
        if k <= 0:
            break
        got += k
    return got - done


@register("store", "a feature store written by `rcrn features convert`")
class FeatureStore(BaseSource):
    """Read a feature store (see the module docstring); ``store[image_id]`` gives Proposals.

    Features come back in the stored dtype by default (float16 for a ``--float16``
    store: half the memory and half the bytes sent from DataLoader workers); pass
    ``dtype=np.float32`` to get float32 (converted exactly).  The values were
    checked to be finite when the store was written, so reads skip the feature
    checks of :class:`Proposals` unless ``validate=True``; boxes, scores and label
    indices are checked on every read.

    The files' sizes are checked against ``meta.json`` and ``index.json`` when the
    store is opened and when a process first reads it; a file truncated while the
    store is open is a :class:`DetectorDataError` naming the file on the next read
    that reaches past its new end.

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
        self._read_index(self.path / "index.json")
        self._labels: list[str] = list(self.meta.get("labels", []))
        self._parts = self._layout()
        self._rows_of = {name: (dt, shape[1:], math.prod(shape[1:]) * dt.itemsize)
                         for name, (dt, shape, _) in self._parts.items()}
        self._check_sizes()
        self._files: dict[str, Any] | None = None
        self._pid = -1
        self._lock = threading.Lock()

    def _read_index(self, index_path: Path) -> None:
        where = str(index_path)
        try:
            text = index_path.read_bytes()
        except OSError as exc:
            raise os_error(index_path, exc) from None
        index = json_loads(text, where)
        if not isinstance(index, dict):
            raise DetectorDataError(f"{where}: unreadable store index (not a JSON object)")
        missing = [k for k in ("image_ids", "offsets", "counts", "sizes") if k not in index]
        if missing:
            raise DetectorDataError(f"{where}: unreadable store index (missing {missing})")
        ids = index["image_ids"]
        if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
            raise DetectorDataError(f"{where}: 'image_ids' must be a list of strings")
        n = len(ids)
        self._ids: list[str] = ids
        self._offsets = _int_array(index["offsets"], where, "offsets", (n,))
        self._counts = _int_array(index["counts"], where, "counts", (n,))
        self._sizes = _int_array(index["sizes"], where, "sizes", (n, 2))
        if n != self.meta["num_images"]:
            raise DetectorDataError(f"{where}: {n} images but meta.json says "
                                    f"{self.meta['num_images']}")
        total = int(self.meta["num_boxes"])
        if n:
            if (self._counts < 0).any() or int(self._counts.sum()) != total:
                raise DetectorDataError(f"{where}: box counts must be >= 0 and sum to num_boxes "
                                        f"({total}) of meta.json")
            starts = np.concatenate([[0], np.cumsum(self._counts)[:-1]])
            if not np.array_equal(starts, self._offsets):
                bad = int(np.flatnonzero(starts != self._offsets)[0])
                raise DetectorDataError(f"{where}: image {ids[bad]!r} starts at box "
                                        f"{int(self._offsets[bad])}, expected {int(starts[bad])}"
                                        f" (images are contiguous runs of boxes)")
            if (self._sizes <= 0).any() or (self._sizes > MAX_IMAGE_SIDE).any():
                bad = int(np.flatnonzero(((self._sizes <= 0) |
                                          (self._sizes > MAX_IMAGE_SIDE)).any(axis=1))[0])
                raise DetectorDataError(f"{where}: image {ids[bad]!r} has size "
                                        f"{self._sizes[bad].tolist()}, not positive pixels")
        elif total:
            raise DetectorDataError(f"{where}: no images but meta.json counts {total} boxes")
        self._rows = {image_id: i for i, image_id in enumerate(ids)}
        if len(self._rows) != n:
            seen: set[str] = set()
            dup = next(x for x in ids if x in seen or seen.add(x))  # type: ignore[func-returns-value]
            raise DetectorDataError(f"{where}: image id {dup!r} appears twice")

    @property
    def feature_dim(self) -> int:
        """Size of the stored region features (0 when the store has none)."""
        return int(self.meta["feature_dim"])

    @property
    def source(self) -> dict[str, Any]:
        """Where the proposals came from (format, location, options)."""
        return dict(self.meta.get("source", {}))

    def _layout(self) -> dict[str, tuple[np.dtype, tuple[int, ...], int]]:
        """``name -> (dtype, shape, bytes)`` of every array file of the store."""
        total = int(self.meta["num_boxes"])
        parts: dict[str, tuple[str, tuple[int, ...]]] = {"boxes": ("<f4", (total, 4))}
        if self.meta["has_features"]:
            dt = "<f2" if self.meta["dtype"] == "float16" else "<f4"
            parts["features"] = (dt, (total, self.feature_dim))
        if self.meta["has_scores"]:
            parts["scores"] = ("<f4", (total,))
        if self.meta["has_labels"]:
            parts["labels"] = ("<i4", (total,))
        return {name: (np.dtype(dt), shape, math.prod(shape) * np.dtype(dt).itemsize)
                for name, (dt, shape) in parts.items()}

    def _size_error(self, name: str, have: int, when: str = "") -> DetectorDataError:
        dt, shape, want = self._parts[name]
        path = self.path / f"{name}.bin"
        state = "missing" if have < 0 else f"{have} bytes"
        return DetectorDataError(f"{path}: expected {want} bytes for shape {list(shape)} "
                                 f"{dt.name}, found {state}{when} (truncated store?)")

    def _check_sizes(self) -> None:
        for name, (_, _, want) in self._parts.items():
            path = self.path / f"{name}.bin"
            try:
                have = path.stat().st_size if path.is_file() else -1
            except OSError:
                have = -1
            if have != want:
                raise self._size_error(name, have)

    def _open(self) -> dict[str, Any]:
        """The store's files, opened once per process, their sizes checked again."""
        files = self._files
        if files is None or self._pid != os.getpid():
            files = {}
            try:
                for name, (_, _, want) in self._parts.items():
                    if not want:
                        continue
                    path = self.path / f"{name}.bin"
                    try:
                        handle = open(path, "rb", buffering=0)  # noqa: SIM115
                    except OSError as exc:
                        raise os_error(path, exc, "cannot open") from None
                    files[name] = handle
                    have = os.fstat(handle.fileno()).st_size
                    if have != want:
                        raise self._size_error(name, have, " since the store was opened")
            except BaseException:
                for handle in files.values():
                    handle.close()
                raise
            # published whole: a reader thread never sees half of a state
            self._files = files
            self._pid = os.getpid()
        return files

    def _block(self, files: dict[str, Any], name: str, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of array ``name``, read with one positional read into a new
        array; a short read (the file was cut after opening) is an error naming it."""
        dt, tail, row = self._rows_of[name]
        block = np.empty((stop - start,) + tail, dtype=dt)
        if stop == start or not row:
            return block
        offset = start * row
        want = (stop - start) * row
        try:
            if _HAS_PREADV:  # the common case: one system call straight into the array
                got = os.preadv(files[name].fileno(), [block], offset)
                if got != want and got > 0:
                    got += _read_into(files[name], self._lock, block, offset, got)
            else:
                got = _read_into(files[name], self._lock, block, offset)
        except OSError as exc:
            raise os_error(self.path / f"{name}.bin", exc) from None
        if got != want:
            raise DetectorDataError(f"{self.path / (name + '.bin')}: short read at byte {offset} "
                                    f"({got} of {want} bytes): the file was truncated "
                                    f"or replaced while the store was open")
        return block if dt.isnative else block.astype(dt.newbyteorder("="))

    def _features(self, files: dict[str, Any], start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of the features, in ``self.out_dtype``.

        One ``preadv`` straight into the result where the OS has it: a cold read of a
        whole image is then one request for its bytes (a memory map would fault page
        by page, and die with SIGBUS on a file cut short while open).
        """
        block = self._block(files, "features", start, stop)
        if self.out_dtype in (None, block.dtype):
            return block
        return _convert(block, self.out_dtype)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_files"] = None
        state["_pid"] = -1
        state["_lock"] = None
        state.pop("_ids_cache", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

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
        files = self._open()
        start = int(self._offsets[i])
        stop = start + int(self._counts[i])
        parts = self._parts
        feats = self._features(files, start, stop) if "features" in parts else None
        labels = None
        if "labels" in parts:
            ids = self._block(files, "labels", start, stop).tolist()
            names = self._labels
            if ids and (min(ids) < 0 or max(ids) >= len(names)):
                raise DetectorDataError(f"{self.path / 'labels.bin'}: image {self._ids[i]!r} has "
                                        f"label index {min(ids) if min(ids) < 0 else max(ids)}, "
                                        f"outside the {len(names)} labels of meta.json")
            labels = [names[j] for j in ids]
        fields = {
            "boxes": self._block(files, "boxes", start, stop),
            "image_size": (int(self._sizes[i, 0]), int(self._sizes[i, 1])),
            "scores": self._block(files, "scores", start, stop) if "scores" in parts else None,
            "labels": labels, "image_id": self._ids[i]}
        where = f"{self.path} image {self._ids[i]!r}"
        if self.validate:
            return make_proposals(where, features=feats, **fields)
        try:
            props = Proposals(**fields)  # small arrays: the checks cost little
        except StructureError as exc:
            raise DetectorDataError(f"{where}: {exc}") from None
        props.features = feats  # finite by construction (checked when written)
        return props

    def __iter__(self) -> Iterator[Proposals]:
        for i in range(len(self._ids)):
            yield self._read(i)

    def close(self) -> None:
        """Close the files this process opened (a later read opens them again)."""
        files, self._files = self._files, None
        if files is not None and self._pid == os.getpid():
            for handle in files.values():
                handle.close()

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

    Raises:
        DetectorDataError: a malformed image, or a source that yields no image at all
            (an empty source is an error, not an empty store).
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                              or limit < 1):
        raise DetectorDataError(f"limit must be a whole number >= 1, got {limit!r}")
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
        if not writer.ids:
            where = source_info.get("location") or source_info.get("format", "source")
            raise DetectorDataError(f"{where}: the source holds no images; nothing to convert")
        return writer.close()
    except BaseException:
        writer.abort()
        raise
