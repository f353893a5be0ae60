"""Helpers shared by the readers: TSV row indexes, base64 arrays, image sizes, h5 files."""

from __future__ import annotations

import base64
import binascii
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from detectors.errors import DetectorDataError, MissingDependencyError

__all__ = ["TsvIndex", "decode_array", "ImageSizes", "H5Files", "require_h5py", "read_vocab",
           "require_file"]


def require_file(path: str | Path, what: str) -> Path:
    """``path`` as a :class:`Path`, or a clear error when it does not exist."""
    path = Path(path)
    if not path.exists():
        raise DetectorDataError(f"{path}: {what} not found")
    return path


class TsvIndex:
    """Random access to the rows of a TSV file keyed by its first column.

    Row offsets come from the VinVL ``.lineidx`` companion file (one decimal
    byte offset per line) when it exists, else from one scan of the file.  The
    open file handle is per process and dropped on pickling, so an index can be
    sent to DataLoader workers.

    Args:
        path: the ``.tsv`` file.
        lineidx: the offsets file; default ``path`` with the suffix ``.lineidx``
            (``predictions.tsv`` -> ``predictions.lineidx``); ``False`` to always scan.
    """

    def __init__(self, path: str | Path, lineidx: str | Path | bool | None = None) -> None:
        self.path = require_file(path, "TSV file")
        if lineidx is None:
            candidate = self.path.with_suffix(".lineidx")
            lineidx = candidate if candidate.exists() else False
        elif lineidx is not False and lineidx is not True:
            lineidx = require_file(lineidx, "line index")
        elif lineidx is True:
            lineidx = require_file(self.path.with_suffix(".lineidx"), "line index")
        self.lineidx_path: Path | None = lineidx if lineidx else None
        self._fh: Any = None
        self._pid = -1
        if self.lineidx_path is not None:
            self.offsets, self.keys = self._from_lineidx(self.lineidx_path)
        else:
            self.offsets, self.keys = self._scan()
        self.rows: dict[str, int] = {}
        for i, key in enumerate(self.keys):
            if key in self.rows:
                raise DetectorDataError(f"{self.path}: image id {key!r} appears twice, on lines "
                                        f"{self.rows[key] + 1} and {i + 1}")
            self.rows[key] = i

    # --------------------------------------------------------------- building
    def _scan(self) -> tuple[np.ndarray, list[str]]:
        offsets: list[int] = []
        keys: list[str] = []
        pos = 0
        with open(self.path, "rb") as f:
            for i, line in enumerate(f):
                if line.strip():
                    offsets.append(pos)
                    keys.append(self._key_of(line, i))
                pos += len(line)
        return np.asarray(offsets, dtype=np.int64), keys

    def _key_of(self, line: bytes, row: int) -> str:
        tab = line.find(b"\t")
        if tab <= 0:
            raise DetectorDataError(f"{self.path} line {row + 1}: no tab-separated image id "
                                    f"(truncated or not a TSV row)")
        try:
            return line[:tab].decode("utf-8")
        except UnicodeDecodeError:
            raise DetectorDataError(f"{self.path} line {row + 1}: image id is not UTF-8") from None

    def _from_lineidx(self, lineidx: Path) -> tuple[np.ndarray, list[str]]:
        size = self.path.stat().st_size
        offsets: list[int] = []
        with open(lineidx, encoding="utf-8") as f:
            for i, text in enumerate(f):
                text = text.strip()
                if not text:
                    continue
                try:
                    value = int(text)
                except ValueError:
                    raise DetectorDataError(f"{lineidx} line {i + 1}: not a byte offset: "
                                            f"{text[:40]!r}") from None
                if not 0 <= value < size:
                    raise DetectorDataError(f"{lineidx} line {i + 1}: offset {value} lies outside "
                                            f"{self.path} ({size} bytes); the index is stale")
                offsets.append(value)
        keys = []
        with open(self.path, "rb") as f:
            for i, off in enumerate(offsets):
                if off:
                    f.seek(off - 1)
                    if f.read(1) != b"\n":
                        raise DetectorDataError(f"{lineidx} line {i + 1}: offset {off} is not the "
                                                f"start of a line of {self.path}; the index is "
                                                f"stale")
                else:
                    f.seek(0)
                head = f.read(512)
                while b"\t" not in head and b"\n" not in head:
                    more = f.read(4096)
                    if not more:
                        break
                    head += more
                keys.append(self._key_of(head, i))
        return np.asarray(offsets, dtype=np.int64), keys

    # ---------------------------------------------------------------- reading
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_fh"] = None
        state["_pid"] = -1
        return state

    def _handle(self) -> Any:
        if self._fh is None or self._pid != os.getpid():
            self._fh = open(self.path, "rb")
            self._pid = os.getpid()
        return self._fh

    def __len__(self) -> int:
        return len(self.keys)

    def read(self, row: int) -> bytes:
        """The raw bytes of data row ``row`` (0-based), without the line ending."""
        fh = self._handle()
        fh.seek(int(self.offsets[row]))
        return fh.readline().rstrip(b"\r\n")

    def iter_rows(self) -> Iterator[tuple[int, bytes]]:
        """``(row, bytes)`` of every row in file order, read sequentially."""
        if self.lineidx_path is not None:
            for row in range(len(self.keys)):
                yield row, self.read(row)
            return
        row = 0
        with open(self.path, "rb") as f:
            for line in f:
                if line.strip():
                    yield row, line.rstrip(b"\r\n")
                    row += 1

    def where(self, row: int) -> str:
        """``"<file> line <n> (image <id>)"`` for messages."""
        line = row + 1
        if self.lineidx_path is None:
            return f"{self.path} row {line} (image {self.keys[row]!r})"
        return f"{self.path} row {line} (image {self.keys[row]!r}, byte {int(self.offsets[row])})"

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def decode_array(text: bytes | str, dtype: Any, where: str, what: str,
                 count: int | None = None) -> np.ndarray:
    """Decode a base64 field into a flat array, checking its byte length.

    Args:
        text: the base64 text.
        dtype: numpy dtype of the encoded values (upstream files are little-endian).
        where: file and row, for messages.
        what: the field name, for messages.
        count: the number of values the field must hold, when known.

    Raises:
        DetectorDataError: not base64, or a byte length that does not fit.
    """
    dtype = np.dtype(dtype).newbyteorder("<")
    raw = b64bytes(text, where, what)
    if len(raw) % dtype.itemsize:
        raise DetectorDataError(f"{where}: field {what!r} holds {len(raw)} bytes, not a whole "
                                f"number of {dtype.name} values (truncated?)")
    arr = np.frombuffer(raw, dtype=dtype)
    if count is not None and arr.size != count:
        raise DetectorDataError(f"{where}: field {what!r} holds {arr.size} {dtype.name} values, "
                                f"expected {count} (truncated or wrong box count?)")
    return arr.astype(dtype.newbyteorder("="), copy=False)


def b64bytes(text: bytes | str, where: str, what: str) -> bytes:
    """Strictly decode base64 text, with a clear error naming ``where`` and ``what``."""
    try:
        if sys.version_info >= (3, 11):  # strict decoding without a separate regex pass
            return binascii.a2b_base64(text, strict_mode=True)
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise DetectorDataError(f"{where}: field {what!r} is not valid base64 ({exc})") from None


def _size_pair(value: Any, where: str) -> tuple[int, int]:
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]
    if isinstance(value, Mapping):
        w = value.get("width", value.get("image_w", value.get("w")))
        h = value.get("height", value.get("image_h", value.get("h")))
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        w, h = value
    else:
        raise DetectorDataError(f"{where}: expected an image size [width, height] or "
                                f"{{'width', 'height'}}, got {str(value)[:80]!r}")
    try:
        w, h = int(w), int(h)
    except (TypeError, ValueError):
        raise DetectorDataError(f"{where}: image size {str(value)[:80]!r} is not two "
                                f"integers") from None
    if w <= 0 or h <= 0:
        raise DetectorDataError(f"{where}: image size must be positive, got {w} x {h}")
    return w, h


class ImageSizes:
    """Image sizes ``(width, height)`` for formats that do not store them.

    Args:
        spec: one of
            - a mapping ``{image_id: (W, H) | {"width": W, "height": H}}``;
            - a JSON file holding such a mapping;
            - a VinVL ``hw.tsv`` (``key \\t [{"height": H, "width": W}]``);
            - a folder of images, read lazily (only the header of each file);
            - ``None``: no sizes known.
    """

    def __init__(self, spec: Any = None) -> None:
        self.where = "image sizes"
        self._sizes: dict[str, tuple[int, int]] = {}
        self._folder: Path | None = None
        self._files: dict[str, Path] | None = None
        if spec is None:
            return
        if isinstance(spec, ImageSizes):
            self.__dict__.update(spec.__dict__)
            return
        if isinstance(spec, Mapping):
            for k, v in spec.items():
                self._sizes[str(k)] = _size_pair(v, f"image sizes, image {k!r}")
            return
        path = require_file(spec, "image-size file")
        self.where = str(path)
        if path.is_dir():
            self._folder = path
        elif path.suffix == ".json":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise DetectorDataError(f"{path}: not valid JSON ({exc})") from None
            if not isinstance(data, Mapping):
                raise DetectorDataError(f"{path}: expected a JSON object {{image_id: [W, H]}}")
            for k, v in data.items():
                self._sizes[str(k)] = _size_pair(v, f"{path} image {k!r}")
        else:
            with open(path, encoding="utf-8") as f:
                for i, line in enumerate(f):
                    if not line.strip():
                        continue
                    key, sep, rest = line.rstrip("\r\n").partition("\t")
                    where = f"{path} line {i + 1}"
                    if not sep:
                        raise DetectorDataError(f"{where}: expected 'image_id <TAB> size'")
                    try:
                        value = json.loads(rest)
                    except json.JSONDecodeError as exc:
                        raise DetectorDataError(f"{where}: size is not JSON ({exc})") from None
                    self._sizes[key] = _size_pair(value, where)

    def __bool__(self) -> bool:
        return bool(self._sizes) or self._folder is not None

    def get(self, image_id: str) -> tuple[int, int] | None:
        """The size of ``image_id`` or ``None`` when unknown."""
        if image_id in self._sizes:
            return self._sizes[image_id]
        if self._folder is None:
            return None
        if self._files is None:
            self._files = {}
            for p in sorted(self._folder.iterdir()):
                self._files.setdefault(p.stem, p)
                self._files.setdefault(p.name, p)
        path = self._files.get(image_id)
        if path is None:
            return None
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(path) as im:
                size = (int(im.width), int(im.height))
        except (OSError, UnidentifiedImageError) as exc:
            raise DetectorDataError(f"{path}: cannot read the image size ({exc})") from None
        self._sizes[image_id] = size
        return size

    def require(self, image_id: str, where: str) -> tuple[int, int]:
        """The size of ``image_id``, or a clear error naming ``where``."""
        size = self.get(image_id)
        if size is None:
            hint = "" if self else " (pass sizes=<hw.tsv | sizes.json | image folder>)"
            raise DetectorDataError(f"{where}: the image size is not stored in this format and "
                                    f"not found in {self.where}{hint}")
        return size


def require_h5py(what: str) -> Any:
    """Import ``h5py`` or raise :class:`MissingDependencyError` naming the extra."""
    try:
        import h5py
    except ImportError:
        raise MissingDependencyError(f"reading {what} needs h5py, which is not installed: "
                                     f"pip install rcrn[h5]  (or: pip install h5py)") from None
    return h5py


class H5Files:
    """Lazily opened, per-process h5 files (picklable: handles are dropped)."""

    def __init__(self, what: str) -> None:
        self.what = what
        require_h5py(what)
        self._files: dict[str, Any] = {}
        self._pid = -1

    def __getstate__(self) -> dict[str, Any]:
        return {"what": self.what, "_files": {}, "_pid": -1}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def open(self, path: Path) -> Any:
        """The open ``h5py.File`` for ``path`` (opened on first use in this process)."""
        if self._pid != os.getpid():
            self._files = {}
            self._pid = os.getpid()
        key = str(path)
        handle = self._files.get(key)
        if handle is None:
            h5py = require_h5py(self.what)
            if not path.exists():
                raise DetectorDataError(f"{path}: h5 file not found")
            try:
                handle = h5py.File(path, "r")
            except OSError as exc:
                raise DetectorDataError(f"{path}: not a readable h5 file ({exc})") from None
            self._files[key] = handle
        return handle

    def dataset(self, path: Path, name: str) -> Any:
        """Dataset ``name`` of the h5 file ``path``, or an error naming both."""
        handle = self.open(path)
        if name not in handle:
            raise DetectorDataError(f"{path}: no dataset {name!r} (has {sorted(handle.keys())})")
        return handle[name]

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files = {}


def read_vocab(spec: Any) -> list[str] | None:
    """Class names from a list or a vocabulary file (one class a line; ``name,alias`` keeps
    ``name``)."""
    if spec is None:
        return None
    if isinstance(spec, (list, tuple)):
        return [str(x) for x in spec]
    path = require_file(spec, "vocabulary file")
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\r\n").split(",")[0] for line in f if line.strip()]
