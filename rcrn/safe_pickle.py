"""A restricted unpickler for data files that datasets ship as pickles.

Pickle files can run arbitrary code when loaded.  Dataset pickles (GITM-MR
parses, VinVL ``rois_info.pkl``) only hold plain containers, numbers, strings
and numpy arrays, so ``load`` admits exactly those and refuses anything else
with an error naming the file and the refused global.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

__all__ = ["UnsafePickleError", "load", "loads"]

_ALLOWED = {
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "complex"),
    ("builtins", "slice"), ("builtins", "range"), ("builtins", "bytearray"),
    ("collections", "OrderedDict"), ("collections", "defaultdict"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
    ("_codecs", "encode"),
}
# numpy scalar types (numpy.float32, numpy.int64, ...) are referenced by dtype reconstruction
_NUMPY_SCALARS = {"bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float16", "float32", "float64", "longlong", "ulonglong",
                  "complex64", "complex128", "str_", "bytes_"}


class UnsafePickleError(ValueError):
    """The pickle references something other than plain data."""


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, source: str) -> None:
        super().__init__(file, encoding="latin1")
        self._source = source

    def find_class(self, module: str, name: str) -> Any:
        module = {"__builtin__": "builtins", "copy_reg": "copyreg"}.get(module, module)
        if (module, name) in _ALLOWED or (module == "numpy" and name in _NUMPY_SCALARS):
            return super().find_class(module, name)
        raise UnsafePickleError(
            f"{self._source}: refusing to unpickle {module}.{name}; only plain containers, "
            f"numbers, strings and numpy arrays are admitted from data files")


def loads(data: bytes, source: str = "<bytes>") -> Any:
    """Unpickle ``data`` admitting only plain data (see module docstring)."""
    try:
        return _RestrictedUnpickler(io.BytesIO(data), source).load()
    except UnsafePickleError:
        raise
    except Exception as exc:  # truncated or corrupt stream
        raise UnsafePickleError(f"{source}: not a readable pickle ({exc})") from exc


def load(path: str | Path) -> Any:
    """Read a pickle file admitting only plain data (see module docstring)."""
    path = Path(path)
    return loads(path.read_bytes(), str(path))
