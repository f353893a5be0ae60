"""The proposal-source protocol and the registry of sources.

A *proposal source* maps image ids to :class:`rcrn.structures.Proposals`::

    source = detectors.load("vinvl", path="predictions.tsv", sizes="hw.tsv")
    proposals = source["000000451431"]
    for image_id in source.image_ids(): ...

Image ids are strings everywhere (numeric ids of COCO, GQA or GITM-MR are
turned into their decimal strings); indexing also accepts an ``int``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable

from detectors.errors import DetectorDataError, ImageNotFoundError
from rcrn.structures import Proposals, StructureError

__all__ = ["ProposalSource", "BaseSource", "register", "load", "available", "make_proposals"]


@runtime_checkable
class ProposalSource(Protocol):
    """What every reader, feature store and live detector over a folder provides."""

    name: str

    def __getitem__(self, image_id: str | int) -> Proposals:
        """Proposals of one image; :class:`ImageNotFoundError` when the id is absent."""
        ...

    def image_ids(self) -> list[str]:
        """Every image id, in the order of the underlying file."""
        ...

    def __len__(self) -> int:
        ...

    def __contains__(self, image_id: object) -> bool:
        ...

    def __iter__(self) -> Iterator[Proposals]:
        """Proposals of every image in :meth:`image_ids` order (sequential, fast)."""
        ...


class BaseSource:
    """Shared plumbing of the sources: id lookup, iteration, ``len``, ``in``.

    Subclasses set ``name`` and ``location`` (the file or folder, used in
    messages) and implement :meth:`image_ids` and :meth:`_get` (called with an
    id known to be present).
    """

    name = "source"
    location = ""

    def image_ids(self) -> list[str]:
        raise DetectorDataError(f"{type(self).__name__} does not list its image ids")

    def _id_set(self) -> set[str] | dict[str, Any]:
        cached = self.__dict__.get("_ids_cache")
        if cached is None:
            cached = set(self.image_ids())
            self.__dict__["_ids_cache"] = cached
        return cached

    def _get(self, image_id: str) -> Proposals:
        raise DetectorDataError(f"{type(self).__name__} cannot read proposals")

    def _key(self, image_id: object) -> str:
        key = image_id.decode() if isinstance(image_id, bytes) else str(image_id)
        if key not in self._id_set():
            raise ImageNotFoundError(image_id, self.location or self.name)
        return key

    def __getitem__(self, image_id: str | int) -> Proposals:
        return self._get(self._key(image_id))

    def get(self, image_id: str | int, default: Proposals | None = None) -> Proposals | None:
        """Proposals of ``image_id`` or ``default`` when the id is absent."""
        try:
            return self[image_id]
        except ImageNotFoundError:
            return default

    def __contains__(self, image_id: object) -> bool:
        key = image_id.decode() if isinstance(image_id, bytes) else str(image_id)
        return key in self._id_set()

    def __len__(self) -> int:
        return len(self.image_ids())

    def __iter__(self) -> Iterator[Proposals]:
        for image_id in self.image_ids():
            yield self._get(image_id)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r}, images={len(self)})"


def make_proposals(where: str, **fields: Any) -> Proposals:
    """Build :class:`Proposals`, turning a structure error into one that names ``where``.

    Args:
        where: the file and row or record, e.g. ``"predictions.tsv row 12"``.
        **fields: the fields of :class:`Proposals`.

    Raises:
        DetectorDataError: the boxes, scores, labels or features are malformed
            (NaN features, boxes not xyxy, mismatched counts, ...).
    """
    try:
        return Proposals(**fields)
    except StructureError as exc:
        raise DetectorDataError(f"{where}: {exc}") from None


_REGISTRY: dict[str, Callable[..., Any]] = {}
_DESCRIPTIONS: dict[str, str] = {}


def register(name: str, description: str = "") -> Callable[[Callable[..., Any]], Any]:
    """Class decorator adding a source factory to the registry under ``name``."""

    def wrap(factory: Callable[..., Any]) -> Any:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"a proposal source named {name!r} is already registered")
        _REGISTRY[name] = factory
        doc = (factory.__doc__ or "").strip().splitlines()
        _DESCRIPTIONS[name] = description or (doc[0] if doc else "")
        return factory

    return wrap


def _ensure_builtin() -> None:
    # importing the reader modules registers them
    import detectors.components  # noqa: F401
    import detectors.detectron2_backend  # noqa: F401
    import detectors.readers  # noqa: F401
    import detectors.store  # noqa: F401


def available() -> dict[str, str]:
    """Registered source names with a one-line description each."""
    _ensure_builtin()
    return dict(sorted(_DESCRIPTIONS.items()))


def load(name: str, *args: Any, **options: Any) -> Any:
    """Open the proposal source registered as ``name``.

    Args:
        name: a registered name (see :func:`available`), e.g. ``"vinvl"``, ``"oscar"``,
            ``"uniter"``, ``"bottomup"``, ``"gitm-mr"``, ``"sgmn"``, ``"coco"``, ``"gqa"``,
            ``"components"``, ``"store"``.
        *args: positional arguments of the source (usually the path).
        **options: keyword options of the source.

    Raises:
        KeyError: no source has that name (the message lists the known ones).
    """
    _ensure_builtin()
    key = name.lower().replace("_", "-")
    if key not in _REGISTRY:
        raise KeyError(f"no proposal source named {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[key](*args, **options)
