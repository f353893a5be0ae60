"""A restricted unpickler for data files that datasets ship as pickles.

Pickle files can run arbitrary code when loaded.  Dataset pickles (GITM-MR
parses, VinVL ``rois_info.pkl``) only hold plain containers, numbers, strings
and numpy arrays, so ``load`` admits exactly those and refuses anything else
with an error naming the file and the refused global.

A few admitted callables build objects whose size the pickle only declares:
``bytearray(n)``, ``range(n)``, ``set(range(n))``, ``numpy.ndarray(shape)``, ...
A pickle of a few dozen bytes could otherwise allocate gigabytes, so the sizes
such calls declare are capped (a copy of data the pickle itself holds, e.g.
``set([...])`` or ``bytearray(b"...")``, costs no more than the file and is not
counted):

* :data:`MAX_BYTES` -- bytes of one byte string or numpy array built from a
  declared size (``max_bytes``);
* :data:`MAX_ITEMS` -- length of one ``range``, ``set`` or ``frozenset`` built
  from a declared length (``max_items``);
* :data:`MAX_TOTAL` -- everything declared in one load, bytes plus 8 bytes per
  container item (``max_total``).

The error names the cap, e.g. ``x.pkl: bytearray of 1,073,741,824 bytes exceeds
the cap of 67,108,864 bytes (max_bytes)``.  Object arrays (``dtype=object``) are
checked before numpy fills them: their stored values must match their shape.
A memo index (``PUT``, ``LONG_BINPUT``) beyond the data is refused before loading:
the fast unpickler sizes its memo table by the largest index, so a 7-byte pickle
could ask for gigabytes.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import collections
import importlib
import io
import math
import pickle
import pickletools
from pathlib import Path
from typing import Any

import numpy as np

from rcrn.errors import RcrnError

__all__ = ["UnsafePickleError", "load", "loads", "MAX_BYTES", "MAX_ITEMS", "MAX_TOTAL"]

#: Bytes of one byte string or array built from a size the pickle declares.
MAX_BYTES = 64 * 2**20
#: Length of one range / set / frozenset built from a length the pickle declares.
MAX_ITEMS = 2**20
#: Everything declared in one load: bytes plus 8 bytes per container item.
MAX_TOTAL = 256 * 2**20

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
_ITEM_BYTES = 8


class UnsafePickleError(RcrnError, ValueError):
    """The pickle references something other than plain data, or declares sizes above the caps."""


class _ObjectArrays(Exception):
    """The pickle builds an object-dtype array: load it again with checked array states."""


class _Budget:
    """The caps of one load and what the pickle has declared so far."""

    def __init__(self, source: str, max_bytes: int, max_items: int, max_total: int) -> None:
        self.source = source
        self.max_bytes = int(max_bytes)
        self.max_items = int(max_items)
        self.max_total = int(max_total)
        self.total = 0

    def _spend(self, cost: int) -> None:
        self.total += cost
        if self.total > self.max_total:
            raise UnsafePickleError(
                f"{self.source}: the pickle declares more than {self.max_total:,} bytes in "
                f"all (max_total); it is not a plain data file or needs a higher cap")

    def check_bytes(self, what: str, n: int) -> None:
        if n > self.max_bytes:
            raise UnsafePickleError(f"{self.source}: {what} of {n:,} bytes exceeds the cap of "
                                    f"{self.max_bytes:,} bytes (max_bytes)")

    def bytes(self, what: str, n: int) -> None:
        self.check_bytes(what, n)
        self._spend(n)

    def items(self, what: str, n: int) -> None:
        if n > self.max_items:
            raise UnsafePickleError(f"{self.source}: {what} of {n:,} items exceeds the cap of "
                                    f"{self.max_items:,} items (max_items)")
        self._spend(n * _ITEM_BYTES)


def _shape_size(shape: Any, source: str) -> int:
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0
               for d in dims):
        raise UnsafePickleError(f"{source}: array shape {shape!r} is not a tuple of "
                                f"non-negative integers")
    return math.prod(int(d) for d in dims)


def _declared_length(value: Any) -> int | None:
    """Items a set/frozenset built from ``value`` gets beyond what the pickle holds."""
    if isinstance(value, range):
        return len(value)
    return None


class _Callables:
    """The admitted callables, wrapped so that declared sizes are checked first."""

    def __init__(self, budget: _Budget, object_arrays: bool) -> None:
        self.budget = budget
        self.object_arrays = object_arrays  # False: an object dtype restarts the load

    def bytearray(self, source: Any = b"", *args: Any) -> bytearray:
        if isinstance(source, (int, np.integer)) and not isinstance(source, bool):
            self.budget.bytes("bytearray", max(int(source), 0))
        elif isinstance(source, range):
            self.budget.bytes("bytearray", len(source))
        return bytearray(source, *args)

    def range(self, *args: Any) -> range:
        value = range(*args)
        self.budget.items("range", len(value))
        return value

    def set(self, iterable: Any = ()) -> set:
        n = _declared_length(iterable)
        if n is not None:
            self.budget.items("set", n)
        return set(iterable)

    def frozenset(self, iterable: Any = ()) -> frozenset:
        n = _declared_length(iterable)
        if n is not None:
            self.budget.items("frozenset", n)
        return frozenset(iterable)

    def defaultdict(self, factory: Any = None, *args: Any) -> collections.defaultdict:
        # a pickled defaultdict(set) names the wrapper: keep the real builtin as factory
        real = {self.set: set, self.frozenset: frozenset, self.bytearray: bytearray,
                self.range: range}
        for wrapper, builtin in real.items():
            if factory == wrapper:
                factory = builtin
        return collections.defaultdict(factory, *args)

    def dtype(self, *args: Any, **kwargs: Any) -> np.dtype:
        dt = np.dtype(*args, **kwargs)
        if dt.hasobject and not self.object_arrays:
            raise _ObjectArrays
        self.budget.check_bytes("numpy dtype", dt.itemsize)
        return dt

    def ndarray_new(self, shape: Any = (), dtype: Any = float, *args: Any, **kwargs: Any
                    ) -> np.ndarray:
        dt = np.dtype(dtype)
        self.budget.bytes("numpy array", _shape_size(shape, self.budget.source) * dt.itemsize)
        return np.ndarray(shape, dt, *args, **kwargs)

    def reconstruct(self, real: Any) -> Any:
        def _reconstruct(subtype: Any, shape: Any, dtype: Any) -> np.ndarray:
            if isinstance(subtype, type) and issubclass(subtype, _CheckedNdarray):
                subtype = np.ndarray
            dt = np.dtype(dtype)
            self.budget.bytes("numpy array", _shape_size(shape, self.budget.source)
                              * dt.itemsize)
            return real(subtype, shape, dtype)
        return _reconstruct


class _CheckedNdarray(np.ndarray):
    """Stands for ``numpy.ndarray`` in a pickle: calling it checks the declared size first.

    A call gives a plain ``numpy.ndarray``; as the subtype argument of
    ``_reconstruct`` it is replaced by ``numpy.ndarray``.
    """


def _import(module: str, name: str) -> Any:
    return getattr(importlib.import_module(module), name)


def _find_class(unpickler: Any, module: str, name: str) -> Any:
    # Python 2 names (``__builtin__.xrange``, ...) as pickle's fix_imports reads them
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    if not ((module, name) in _ALLOWED or (module == "numpy" and name in _NUMPY_SCALARS)):
        raise UnsafePickleError(
            f"{unpickler.source}: refusing to unpickle {module}.{name}; only plain containers, "
            f"numbers, strings and numpy arrays are admitted from data files")
    calls: _Callables = unpickler.calls
    if module == "builtins" and name in ("bytearray", "range", "set", "frozenset"):
        return getattr(calls, name)
    if (module, name) == ("collections", "defaultdict"):
        return calls.defaultdict
    if (module, name) == ("numpy", "dtype"):
        return calls.dtype
    if (module, name) == ("numpy", "ndarray"):
        return unpickler.ndarray
    if name == "_reconstruct":
        return calls.reconstruct(_import(module, name))
    if (module, name) == ("_codecs", "encode"):
        return codecs.encode  # its output is no larger than a few times its input
    return _import(module, name)


def _ndarray_class(calls: _Callables) -> type:
    class _Ndarray(_CheckedNdarray):
        def __new__(cls, *args: Any, **kwargs: Any) -> np.ndarray:
            return calls.ndarray_new(*args, **kwargs)
    return _Ndarray


class _RestrictedUnpickler(pickle.Unpickler):
    """The fast (C) unpickler; an object-dtype array makes the load start over checked."""

    def __init__(self, file: Any, source: str, budget: _Budget) -> None:
        super().__init__(file, encoding="latin1", fix_imports=False)
        self.source = source
        self.calls = _Callables(budget, object_arrays=False)
        self.ndarray = _ndarray_class(self.calls)

    def find_class(self, module: str, name: str) -> Any:
        return _find_class(self, module, name)


class _CheckedUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """The Python unpickler, which checks an array's state before numpy reads it.

    numpy fills an object array from the stored list without checking its length
    (a short list crashes the process), so the list must hold one value per element.
    """

    def __init__(self, file: Any, source: str, budget: _Budget) -> None:
        super().__init__(file, encoding="latin1", fix_imports=False)
        self.source = source
        self.calls = _Callables(budget, object_arrays=True)
        self.ndarray = _ndarray_class(self.calls)
        # load() looks the opcodes up in self.dispatch: BUILD checks array states first
        self.dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]
        self.dispatch[pickle.BUILD[0]] = _CheckedUnpickler._checked_build

    def find_class(self, module: str, name: str) -> Any:
        return _find_class(self, module, name)

    def _checked_build(self) -> None:
        if len(self.stack) >= 2 and isinstance(self.stack[-2], np.ndarray):
            _check_array_state(self.stack[-1], self.source)
        pickle._Unpickler.load_build(self)  # type: ignore[attr-defined]


def _check_array_state(state: Any, source: str) -> None:
    if not isinstance(state, tuple) or len(state) not in (4, 5):
        raise UnsafePickleError(f"{source}: malformed numpy array state")
    shape, dtype, data = state[-4], state[-3], state[-1]
    if not isinstance(dtype, np.dtype):
        raise UnsafePickleError(f"{source}: numpy array state without a dtype")
    size = _shape_size(shape, source)
    if dtype.hasobject:
        if dtype.fields is not None or dtype.subdtype is not None:
            raise UnsafePickleError(f"{source}: structured or sub-array object dtypes are not "
                                    f"admitted from data files")
        if not isinstance(data, list) or len(data) != size:
            held = len(data) if isinstance(data, list) else type(data).__name__
            raise UnsafePickleError(f"{source}: an object array of shape {tuple(shape)} stores "
                                    f"{held} values, expected {size}")


_MEMO_PUTS = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})


def _check_memo_indices(data: bytes, source: str) -> None:
    """Refuse a memo index that the stream cannot have written.

    The C unpickler grows its memo table to the largest index a ``PUT`` names
    (``LONG_BINPUT 2**30`` in a 7-byte pickle asks for 16 GiB). A pickler numbers
    its memo entries from 0 and every ``PUT`` takes at least two bytes, so a real
    index is below the position it is read at.
    """
    for op, arg, pos in pickletools.genops(data):
        if op.name in _MEMO_PUTS and arg > pos:
            raise UnsafePickleError(f"{source}: memo index {arg:,} at byte {pos} is beyond "
                                    "the data; not a pickle a pickler wrote")


def loads(data: bytes, source: str = "<bytes>", *, max_bytes: int = MAX_BYTES,
          max_items: int = MAX_ITEMS, max_total: int = MAX_TOTAL) -> Any:
    """Unpickle ``data`` admitting only plain data (see module docstring).

    Args:
        data: the pickle.
        source: names the data in messages (a file path).
        max_bytes, max_items, max_total: the size caps (see module docstring).

    Raises:
        UnsafePickleError: a refused global, a declared size above a cap, or a
            truncated or corrupt stream; the message names ``source``.
    """
    def run(cls: type) -> Any:
        budget = _Budget(source, max_bytes, max_items, max_total)
        return cls(io.BytesIO(data), source, budget).load()

    try:
        try:
            _check_memo_indices(data, source)
            return run(_RestrictedUnpickler)
        except _ObjectArrays:
            return run(_CheckedUnpickler)
    except UnsafePickleError:
        raise
    except RecursionError as exc:
        raise UnsafePickleError(f"{source}: the pickle nests too deeply to read") from exc
    except Exception as exc:  # truncated or corrupt stream
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise UnsafePickleError(f"{source}: not a readable pickle ({detail})") from exc


def load(path: str | Path, **caps: int) -> Any:
    """Read a pickle file admitting only plain data (see module docstring and :func:`loads`)."""
    path = Path(path)
    return loads(path.read_bytes(), str(path), **caps)
