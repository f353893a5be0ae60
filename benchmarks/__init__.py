"""Benchmark adapters and their registry.

Each adapter turns one split of a benchmark into graph-grounding problems and
scores predictions with the benchmark's official metric definitions (see
:class:`benchmarks.base.Benchmark`).  Adapters are registered by dotted path and
imported only when loaded, so a missing optional adapter never breaks the
others::

    import benchmarks

    bench = benchmarks.load("vsr", root="data/vsr", split="random/test")
    metrics = bench.score_file("preds.txt")

The name ``benchmarks`` is generic: unrelated PyPI distributions use it too.
This package is the one shipped with ``rcrn``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.base import (
    Benchmark,
    DataError,
    check_prediction,
    prediction_where,
    read_prediction_file,
)
from benchmarks.config_keys import TABLES as _CONFIG_TABLES  # noqa: F401  (registers them)
from rcrn.errors import RcrnError
from rcrn.structures import Prediction, Proposals

__all__ = [
    "Benchmark",
    "DataError",
    "RegistryError",
    "ProposalSourceError",
    "ProposalSource",
    "register",
    "available",
    "load",
    "get_proposals",
    "predictions_by_id",
    "read_predictions",
]

#: name -> "module:Class" (imported lazily) or the class itself.
_REGISTRY: dict[str, str | type] = {
    "synthetic": "benchmarks.synthetic:SyntheticBenchmark",
    "vsr": "benchmarks.vsr:VSRBenchmark",
    "whatsup": "benchmarks.whatsup:WhatsUpBenchmark",
    "gitm_mr": "benchmarks.gitm_mr:GITMMRBenchmark",
    "viphy": "benchmarks.viphy:ViPhyBenchmark",
}

#: A source of region proposals: ``image name -> Proposals`` as a callable or a mapping.
ProposalSource = Callable[[str], Proposals] | Mapping[str, Proposals]


class RegistryError(RcrnError, ValueError):
    """An unknown benchmark name, or a registered adapter that cannot be imported."""


class ProposalSourceError(RcrnError, ValueError):
    """Problems were asked for without a usable source of region proposals."""


def register(name: str, target: str | type, *, overwrite: bool = False) -> None:
    """Register an adapter under ``name``.

    Args:
        name: the benchmark name used by :func:`load` and ``rcrn score --benchmark``.
        target: the adapter class, or its dotted path ``"package.module:Class"``
            (imported on first use).
        overwrite: replace an existing registration instead of raising.

    Raises:
        RegistryError: ``name`` is taken (and ``overwrite`` is false) or ``target``
            is a malformed dotted path.
    """
    if name in _REGISTRY and not overwrite:
        raise RegistryError(f"benchmark {name!r} is already registered as {_REGISTRY[name]!r}")
    if isinstance(target, str) and (target.count(":") != 1 or not all(target.split(":"))):
        raise RegistryError(f"benchmark {name!r}: target {target!r} is not 'module:Class'")
    _REGISTRY[name] = target


def _module_present(target: str | type) -> bool:
    if not isinstance(target, str):
        return True
    module = target.split(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def available(installed_only: bool = False) -> list[str]:
    """Names of the registered benchmarks, sorted.

    Args:
        installed_only: list only adapters whose module can be found in this
            installation (without importing it).
    """
    return sorted(n for n, t in _REGISTRY.items() if not installed_only or _module_present(t))


def adapter_class(name: str) -> type:
    """The adapter class registered under ``name`` (imports its module).

    Raises:
        RegistryError: unknown name, or the adapter's module / class is missing.
    """
    if name not in _REGISTRY:
        raise RegistryError(f"unknown benchmark {name!r}; available: {', '.join(available())}")
    target = _REGISTRY[name]
    if not isinstance(target, str):
        return target
    module_name, class_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise RegistryError(f"benchmark {name!r} is registered as {target} but module "
                                f"{module_name} is not part of this installation") from exc
        raise
    cls = getattr(module, class_name, None)
    if cls is None:
        raise RegistryError(f"benchmark {name!r}: module {module_name} has no {class_name}")
    return cls


def load(name: str, root: str | Path, split: str | None = None, **options: Any) -> Any:
    """Load one split of a registered benchmark.

    Args:
        name: a name from :func:`available`, e.g. ``"vsr"`` or ``"whatsup"``.
        root: the local data directory (or, where the adapter allows it, a data file).
        split: the split, e.g. ``"random/test"`` (VSR) or ``"controlled_a"`` (What'sUp);
            ``None`` takes the adapter's default.
        **options: adapter options (e.g. ``proposals=``, ``categories=``).

    Returns:
        An object following :class:`benchmarks.base.Benchmark`.

    Raises:
        RegistryError: unknown or unavailable benchmark.
        DataError: the data under ``root`` is missing or malformed.
    """
    cls = adapter_class(name)
    if split is None:
        return cls(root, **options)
    return cls(root, split, **options)


def get_proposals(source: ProposalSource | None, image: str, benchmark: str) -> Proposals:
    """Look up the proposals of ``image`` in a proposal source.

    Args:
        source: a callable ``image -> Proposals`` or a mapping from image to ``Proposals``.
        image: the image name the benchmark uses.
        benchmark: the benchmark's name, for messages.

    Raises:
        ProposalSourceError: no source was given, it has no entry for ``image``, or it
            returned something other than :class:`~rcrn.structures.Proposals`.
    """
    if source is None:
        raise ProposalSourceError(
            f"{benchmark}: problems need region proposals; pass proposals= (a callable "
            f"image name -> rcrn.structures.Proposals, or a mapping), e.g. from a detector "
            f"output reader. Items and scoring work without images.")
    try:
        if isinstance(source, Mapping):
            result = source[image]
        elif callable(source):
            result = source(image)
        else:
            raise ProposalSourceError(f"{benchmark}: proposals= must be a callable or a mapping, "
                                      f"got {type(source).__name__}")
    except KeyError as exc:
        raise ProposalSourceError(f"{benchmark}: no proposals for image {image!r}") from exc
    if not isinstance(result, Proposals):
        raise ProposalSourceError(f"{benchmark}: the proposal source returned "
                                  f"{type(result).__name__} for image {image!r}, not Proposals")
    return result


def predictions_by_id(predictions: Iterable[Prediction], ids: Iterable[str],
                      what: str) -> list[Prediction]:
    """Order ``predictions`` as ``ids``, checking that each id has exactly one prediction.

    Args:
        predictions: predictions in any order (a list read by :func:`read_predictions`
            names its file and lines in the errors).
        ids: the problem ids, in benchmark order.
        what: the benchmark split, for messages.

    Raises:
        DataError: a duplicate, missing or unknown id, or a prediction whose fields the
            metrics cannot read (see :func:`benchmarks.base.check_prediction`).
    """
    source = getattr(predictions, "path", "")
    where = f"{what}: {source}" if source else what
    table: dict[str, Prediction] = {}
    for p in predictions:
        if p.id in table:
            raise DataError(f"{where}: two predictions for problem {p.id!r}")
        check_prediction(p, prediction_where(predictions, p.id))
        table[p.id] = p
    wanted = list(ids)
    missing = [i for i in wanted if i not in table]
    if missing:
        raise DataError(f"{where}: {len(missing)} of {len(wanted)} problems have no prediction "
                        f"(first: {missing[:3]})")
    if len(table) != len(wanted):
        extra = sorted(set(table) - set(wanted))
        raise DataError(f"{where}: {len(extra)} predictions name unknown problems "
                        f"(first: {extra[:3]})")
    return [table[i] for i in wanted]


def read_predictions(path: str | Path) -> list[Prediction]:
    """Read predictions written as JSON lines of :meth:`Prediction.to_dict` objects.

    Every field is checked as written (see :func:`benchmarks.base.read_prediction_file`);
    the list remembers the line of each id, so the metrics name it in their errors.

    Raises:
        DataError: naming the file and line of a malformed record or a repeated id.
    """
    return read_prediction_file(path)
