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

__all__ = ["TsvIndex", "decode_array", "b64bytes", "ImageSizes", "H5Files", "require_h5py",
           "read_vocab", "require_file", "os_error", "strict_int", "strict_number", "json_loads",
           "read_json_file", "feature_layout", "check_feature_bytes", "FEATURE_DTYPES",
           "MAX_IMAGE_SIDE"]


def require_file(path: str | Path, what: str, kind: str = "any") -> Path:
    """``path`` as a :class:`Path`, or a clear error when it does not exist.

    Args:
        path: the file or folder.
        what: what it should be, for messages (``"TSV file"``).
        kind: ``"file"`` (a regular file, not a folder), ``"dir"`` (a folder) or
            ``"any"``.
    """
    path = Path(path)
    if not path.exists():
        raise DetectorDataError(f"{path}: {what} not found")
    if kind == "file" and not path.is_file():
        state = "a folder" if path.is_dir() else "not a regular file"
        raise DetectorDataError(f"{path}: is {state}, expected a {what}")
    if kind == "dir" and not path.is_dir():
        raise DetectorDataError(f"{path}: is not a folder, expected a {what}")
    return path


def os_error(path: str | Path, exc: OSError, doing: str = "cannot read") -> DetectorDataError:
    """A one-line :class:`DetectorDataError` for an ``OSError`` met on ``path``."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return DetectorDataError(f"{exc.filename or path}: {doing} ({reason})")


def strict_int(value: Any, where: str, what: str, minimum: int | None = None) -> int:
    """``value`` as an ``int`` when it is one exactly: an integer, an integral float, or
    the decimal text of an integer; never a bool, a fraction, NaN or infinity.

    Raises:
        DetectorDataError: naming ``where`` and ``what``.
    """
    result: int | None = None
    if isinstance(value, (bool, np.bool_)):
        result = None
    elif isinstance(value, (int, np.integer)):
        result = int(value)
    elif isinstance(value, (float, np.floating)):
        if np.isfinite(value) and float(value).is_integer():
            result = int(value)
    elif isinstance(value, (str, bytes)):
        text = value.decode("ascii", "replace") if isinstance(value, bytes) else value
        text = text.strip()
        body = text[1:] if text[:1] in "+-" else text
        if body.isascii() and body.isdigit() and len(body) <= 30:
            result = int(text)
    if result is None:
        shown = value if not isinstance(value, (str, bytes)) else value[:40]
        raise DetectorDataError(f"{where}: {what} must be an integer, got {shown!r}")
    if minimum is not None and result < minimum:
        raise DetectorDataError(f"{where}: {what} must be at least {minimum}, got {result}")
    return result


def strict_number(value: Any, where: str, what: str) -> float:
    """``value`` as a finite ``float`` when it is a number (not a bool, text, NaN or inf)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        raise DetectorDataError(f"{where}: {what} must be a number, got {str(value)[:40]!r}")
    number = float(value)
    if not np.isfinite(number):
        raise DetectorDataError(f"{where}: {what} must be finite, got {number}")
    return number


def json_loads(text: str | bytes, where: str, hint: str = "") -> Any:
    """Parse JSON text, with one clear error for malformed, non-UTF-8 or too deep text
    (``hint`` is appended to the message)."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DetectorDataError(f"{where}: not valid JSON ({exc}){hint}") from None
    except RecursionError:
        raise DetectorDataError(f"{where}: JSON nests too deeply to read{hint}") from None


def read_json_file(path: Path) -> Any:
    """The JSON content of the file ``path`` (errors name the file)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise os_error(path, exc) from None
    return json_loads(data, str(path))


FEATURE_DTYPES = {"float32": np.dtype("<f4"), "float16": np.dtype("<f2")}


def feature_layout(where: str, dim: Any, dtype: Any,
                   default_dims: tuple[int, ...]) -> tuple[tuple[int, ...], np.dtype]:
    """The feature widths and the dtype a reader accepts: ``dim`` (one width) or
    ``default_dims``, and ``dtype`` (``"float32"``, the default, or ``"float16"``)."""
    if dim is None or dim == "":
        dims = tuple(default_dims)
    else:
        dims = (strict_int(dim, where, "option dim", minimum=1),)
    if dtype is None or dtype == "":
        dt = FEATURE_DTYPES["float32"]
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = str(dtype)
        if name not in FEATURE_DTYPES:
            raise DetectorDataError(f"{where}: option dtype must be float32 or float16, got "
                                    f"{str(dtype)[:40]!r}")
        dt = FEATURE_DTYPES[name]
    return dims, dt


def check_feature_bytes(nbytes: int, count: int, dims: tuple[int, ...], dtype: np.dtype,
                        where: str, what: str) -> int:
    """The feature width for ``count`` boxes held in ``nbytes`` bytes of ``dtype`` values.

    The byte length must equal ``count * dim * itemsize`` for one accepted width; the
    error says what the bytes would be in other precisions, so float16 or float64
    bytes read as float32 are named, never turned into features of another width.
    """
    for d in dims:
        if count * d * dtype.itemsize == nbytes:
            return d
    want = " or ".join(f"{count * d * dtype.itemsize}" for d in dims)
    widths = "/".join(str(d) for d in dims)
    hints = []
    if count > 0 and nbytes % count == 0:
        per_box = nbytes // count
        for name, other in (("float16", 2), ("float32", 4), ("float64", 8)):
            if per_box % other == 0 and per_box // other in dims and other != dtype.itemsize:
                how = (f": pass dtype={name} (--opt dtype={name}) if the file holds {name}"
                       if name in FEATURE_DTYPES else
                       ", which this reader does not read (float32 or float16 only)")
                hints.append(f"the bytes would be {per_box // other}-d {name}{how}")
        if not hints and per_box % dtype.itemsize == 0:
            hints.append(f"that is {per_box // dtype.itemsize}-d {dtype.name}: pass dim=N "
                         f"(--opt dim=N) for another width")
    hint = f"; {'; '.join(hints)}" if hints else " (truncated or wrong box count?)"
    boxes = "1 box" if count == 1 else f"{count} boxes"
    raise DetectorDataError(f"{where}: field {what!r} holds {nbytes} bytes for {boxes}, "
                            f"expected {want} ({widths}-d {dtype.name}){hint}")


_WHITESPACE = b" \t\r\n\x0b\x0c"


class TsvIndex:
    """Random access to the rows of a TSV file keyed by its first column.

    Row offsets come from the VinVL ``.lineidx`` companion file (one decimal
    byte offset per line) when it exists, else from one scan of the file.  The
    open file handle is per process and dropped on pickling, so an index can be
    sent to DataLoader workers.

    A ``.lineidx`` must cover the file: offsets strictly increasing, each at the
    start of a line, the first at the first row and the last at the last row
    (checked when opening); a row left out between two listed rows is an error
    when the row before it is read (so converting the file always finds it).

    Args:
        path: the ``.tsv`` file.
        lineidx: the offsets file; default ``path`` with the suffix ``.lineidx``
            (``predictions.tsv`` -> ``predictions.lineidx``); ``False`` to always scan.

    Raises:
        DetectorDataError: a missing, unreadable or empty file, a row without an
            image id, a repeated id, or a ``.lineidx`` that does not fit the file.
    """

    def __init__(self, path: str | Path, lineidx: str | Path | bool | None = None) -> None:
        self.path = require_file(path, "TSV file", kind="file")
        if lineidx is None:
            candidate = self.path.with_suffix(".lineidx")
            lineidx = candidate if candidate.exists() and candidate != self.path else False
        elif lineidx is True:
            lineidx = self.path.with_suffix(".lineidx")
        if lineidx is not False:
            lineidx = require_file(lineidx, "line index", kind="file")
        self.lineidx_path: Path | None = lineidx if lineidx else None
        self._fh: Any = None
        self._pid = -1
        try:
            self.size = self.path.stat().st_size
            if self.lineidx_path is not None:
                self.offsets, self.keys = self._from_lineidx(self.lineidx_path)
            else:
                self.offsets, self.keys = self._scan()
        except OSError as exc:
            raise os_error(self.path, exc) from None
        if not self.keys:
            raise DetectorDataError(f"{self.path}: holds no rows (an empty TSV file)")
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
        line = line.split(b"\n", 1)[0]
        tab = line.find(b"\t")
        if tab <= 0:
            raise DetectorDataError(f"{self.path} line {row + 1}: no tab-separated image id "
                                    f"(truncated or not a TSV row)")
        try:
            return line[:tab].decode("utf-8")
        except UnicodeDecodeError:
            raise DetectorDataError(f"{self.path} line {row + 1}: image id is not UTF-8") from None

    def _from_lineidx(self, lineidx: Path) -> tuple[np.ndarray, list[str]]:
        size = self.size
        offsets: list[int] = []
        with open(lineidx, "rb") as f:
            for i, raw in enumerate(f):
                text = raw.strip()
                if not text:
                    continue
                if not text.isdigit() or len(text) > 20:
                    raise DetectorDataError(f"{lineidx} line {i + 1}: not a byte offset: "
                                            f"{text[:40]!r}")
                value = int(text)
                if not value < size:
                    raise DetectorDataError(f"{lineidx} line {i + 1}: offset {value} lies outside "
                                            f"{self.path} ({size} bytes); the index is stale")
                if offsets and value <= offsets[-1]:
                    raise DetectorDataError(f"{lineidx} line {i + 1}: offset {value} does not "
                                            f"follow the previous one ({offsets[-1]}); offsets "
                                            f"must increase, one per row in file order")
                offsets.append(value)
        if not offsets:
            if size and self._blank_between(None, 0, size):
                return np.zeros(0, dtype=np.int64), []
            raise DetectorDataError(f"{lineidx}: lists no rows but {self.path} holds "
                                    f"{size} bytes; the index is stale or incomplete")
        keys = []
        with open(self.path, "rb") as f:
            if not self._blank_between(f, 0, offsets[0]):
                raise DetectorDataError(f"{lineidx}: its first offset {offsets[0]} skips the "
                                        f"start of {self.path}; the index does not cover "
                                        f"the file")
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
            f.seek(offsets[-1])
            end = offsets[-1] + len(f.readline())
            if not self._blank_between(f, end, size):
                raise DetectorDataError(f"{lineidx}: lists {len(offsets)} rows but {self.path} "
                                        f"goes on after the last one (byte {end} of {size}); "
                                        f"the index is stale or incomplete (delete it to index "
                                        f"the file by a scan)")
        return np.asarray(offsets, dtype=np.int64), keys

    def _blank_between(self, f: Any, start: int, stop: int) -> bool:
        """Whether bytes ``start:stop`` of the file hold only whitespace."""
        if stop <= start:
            return True
        if f is None:
            with open(self.path, "rb") as g:
                return self._blank_between(g, start, stop)
        f.seek(start)
        left = stop - start
        while left > 0:
            chunk = f.read(min(left, 65536))
            if not chunk:
                return True
            if chunk.strip(_WHITESPACE):
                return False
            left -= len(chunk)
        return True

    # ---------------------------------------------------------------- reading
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_fh"] = None
        state["_pid"] = -1
        return state

    def _handle(self) -> Any:
        if self._fh is None or self._pid != os.getpid():
            try:
                self._fh = open(self.path, "rb")  # noqa: SIM115
            except OSError as exc:
                raise os_error(self.path, exc) from None
            self._pid = os.getpid()
        return self._fh

    def __len__(self) -> int:
        return len(self.keys)

    def read(self, row: int) -> bytes:
        """The raw bytes of data row ``row`` (0-based), without the line ending.

        With a ``.lineidx``, the row must end where the next listed row starts (or
        only whitespace lies between): otherwise the index left a row out.
        """
        fh = self._handle()
        start = int(self.offsets[row])
        try:
            fh.seek(start)
            line = fh.readline()
            if self.lineidx_path is not None and row + 1 < len(self.offsets):
                end, nxt = start + len(line), int(self.offsets[row + 1])
                if end != nxt and not (end < nxt and self._blank_between(fh, end, nxt)):
                    raise DetectorDataError(
                        f"{self.lineidx_path}: no entry for the line at byte {end} of "
                        f"{self.path}, between rows {row + 1} and {row + 2} of the index; the "
                        f"index does not cover the file (delete it to index the file by a scan)")
        except OSError as exc:
            raise os_error(self.path, exc) from None
        return line.rstrip(b"\r\n")

    def iter_rows(self) -> Iterator[tuple[int, bytes]]:
        """``(row, bytes)`` of every row in file order, read sequentially."""
        if self.lineidx_path is not None:
            for row in range(len(self.keys)):
                yield row, self.read(row)
            return
        row = 0
        try:
            with open(self.path, "rb") as f:
                for line in f:
                    if line.strip():
                        if row >= len(self.keys):
                            raise DetectorDataError(f"{self.path}: the file changed since it "
                                                    f"was indexed ({len(self.keys)} rows)")
                        yield row, line.rstrip(b"\r\n")
                        row += 1
        except OSError as exc:
            raise os_error(self.path, exc) from None

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
    if not isinstance(text, (str, bytes)):
        raise DetectorDataError(f"{where}: field {what!r} must be base64 text, got "
                                f"{type(text).__name__}")
    try:
        if sys.version_info >= (3, 11):  # strict decoding without a separate regex pass
            return binascii.a2b_base64(text, strict_mode=True)
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise DetectorDataError(f"{where}: field {what!r} is not valid base64 ({exc})") from None


#: The largest image side accepted (sizes are stored as 64-bit integers; anything
#: near this is a corrupt value, not an image).
MAX_IMAGE_SIDE = 2**31 - 1


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
        w = strict_int(w, where, "image width")
        h = strict_int(h, where, "image height")
    except DetectorDataError:
        raise DetectorDataError(f"{where}: image size {str(value)[:80]!r} is not two "
                                f"integers") from None
    if w <= 0 or h <= 0:
        raise DetectorDataError(f"{where}: image size must be positive, got {w} x {h}")
    if w > MAX_IMAGE_SIDE or h > MAX_IMAGE_SIDE:
        raise DetectorDataError(f"{where}: image size {w} x {h} exceeds {MAX_IMAGE_SIDE} "
                                f"pixels a side (a corrupt value?)")
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
        if not isinstance(spec, (str, Path)):
            raise DetectorDataError(f"image sizes: expected a mapping, a file or a folder, "
                                    f"got {type(spec).__name__}")
        path = require_file(spec, "image-size file")
        self.where = str(path)
        if path.is_dir():
            self._folder = path
        elif path.suffix == ".json":
            data = read_json_file(path)
            if not isinstance(data, Mapping):
                raise DetectorDataError(f"{path}: expected a JSON object {{image_id: [W, H]}}")
            for k, v in data.items():
                self._sizes[str(k)] = _size_pair(v, f"{path} image {k!r}")
        else:
            try:
                with open(path, "rb") as f:
                    lines = list(f)
            except OSError as exc:
                raise os_error(path, exc) from None
            for i, raw in enumerate(lines):
                where = f"{path} line {i + 1}"
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise DetectorDataError(f"{where}: not UTF-8 text") from None
                if not line.strip():
                    continue
                key, sep, rest = line.rstrip("\r\n").partition("\t")
                if not sep:
                    raise DetectorDataError(f"{where}: expected 'image_id <TAB> size'")
                self._sizes[key] = _size_pair(json_loads(rest, f"{where}: size"), where)

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
            try:
                entries = sorted(self._folder.iterdir())
            except OSError as exc:
                raise os_error(self._folder, exc) from None
            for p in entries:
                self._files.setdefault(p.stem, p)
                self._files.setdefault(p.name, p)
        path = self._files.get(image_id)
        if path is None:
            return None
        from PIL import Image

        try:
            with Image.open(path) as im:
                size = (int(im.width), int(im.height))
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
            raise DetectorDataError(f"{path}: cannot read the image size ({exc})") from None
        if size[0] <= 0 or size[1] <= 0:
            raise DetectorDataError(f"{path}: the image has no pixels ({size[0]} x {size[1]})")
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
            if not path.is_file():
                raise DetectorDataError(f"{path}: is not a regular file, expected an h5 file")
            try:
                handle = h5py.File(path, "r")
            except (OSError, ValueError, RuntimeError) as exc:
                raise DetectorDataError(f"{path}: not a readable h5 file ({exc})") from None
            self._files[key] = handle
        return handle

    def dataset(self, path: Path, name: str) -> Any:
        """Dataset ``name`` of the h5 file ``path``, or an error naming both."""
        h5py = require_h5py(self.what)
        handle = self.open(path)
        try:
            if name not in handle:
                raise DetectorDataError(f"{path}: no dataset {name!r} (has "
                                        f"{sorted(handle.keys())})")
            dataset = handle[name]
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            raise DetectorDataError(f"{path}: cannot read dataset {name!r} ({exc})") from None
        if not isinstance(dataset, h5py.Dataset):
            raise DetectorDataError(f"{path}: {name!r} is a {type(dataset).__name__}, not a "
                                    f"dataset")
        return dataset

    @staticmethod
    def read(dataset: Any, index: Any, where: str) -> np.ndarray:
        """``dataset[index]`` as an array; a corrupt or truncated file is an error naming
        ``where``."""
        try:
            return np.asarray(dataset[index])
        except (OSError, ValueError, RuntimeError, TypeError, KeyError) as exc:
            raise DetectorDataError(f"{where}: cannot read the h5 data ({exc})") from None

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
    path = require_file(spec, "vocabulary file", kind="file")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise os_error(path, exc) from None
    except UnicodeDecodeError as exc:
        raise DetectorDataError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    names = [line.rstrip("\r").split(",")[0] for line in text.split("\n") if line.strip()]
    if not names:
        raise DetectorDataError(f"{path}: the vocabulary file lists no classes")
    return names
