"""Grounding problems whose proposals are read from a feature store on access.

A :class:`StoreProblemDataset` holds only the language side of every item (its
graph, image id and targets); the proposals and region features of an item are
read from a feature store (``detectors.store``, written by ``rcrn features
convert``) when the item is fetched.  The store is opened lazily in every
process that reads from it, and the dataset drops its open store when pickled,
so DataLoader workers (fork or spawn) each open their own memory maps::

    from detectors.dataset import StoreProblemDataset
    from rcrn.engine.trainer import make_loader

    data = StoreProblemDataset.from_graphs("stores/vinvl", graphs, image_ids,
                                           matches=labels)
    loader = make_loader(data, vocab, batch_size=64, shuffle=True, num_workers=2)
    for batch in loader:            # GroundingBatch, collated in the workers
        ...
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from rcrn.structures import GroundingProblem, LanguageGraph

__all__ = ["StoreItem", "StoreProblemDataset"]


@dataclass
class StoreItem:
    """The language side of one problem; its proposals come from the store.

    Attributes:
        graph: the language scene graph of the expression.
        image_id: the store id of the image whose proposals the item is grounded in.
        match, referent_box, mismatched_relation, id, meta: as in
            :class:`rcrn.structures.GroundingProblem`.
    """

    graph: LanguageGraph
    image_id: str
    match: int | None = None
    referent_box: Any = None
    mismatched_relation: int | None = None
    id: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


class StoreProblemDataset(Dataset):
    """Problems assembled on access from language items and a feature store.

    Args:
        store: path of the feature store folder.
        items: one :class:`StoreItem` per problem.
        dtype: dtype of the features handed to ``collate``; ``np.float32`` (the
            default) converts a float16 store's features (exactly, with torch's
            vectorised conversion), ``None`` keeps the stored dtype.
        validate: run every check of ``Proposals`` on each read (the store checked
            its values when it was written).

    Raises:
        detectors.DetectorDataError: the store is missing or incomplete.
        KeyError: an item names an image the store does not hold.
    """

    def __init__(self, store: str | Path, items: Sequence[StoreItem],
                 dtype: Any = np.float32, validate: bool = False) -> None:
        self.store_path = Path(store)
        self.items = list(items)
        if dtype is not None and np.dtype(dtype).kind != "f":
            raise ValueError(f"dtype must be a floating type, got {np.dtype(dtype)}")
        self.dtype = dtype
        self.validate = bool(validate)
        self._store: Any = None
        self._pid = -1
        opened = self.store
        missing = [it.image_id for it in self.items if str(it.image_id) not in opened]
        if missing:
            raise KeyError(f"{len(missing)} item(s) name images absent from the store "
                           f"{self.store_path}: {missing[:5]}")

    # ------------------------------------------------------------ builders
    @classmethod
    def from_graphs(cls, store: str | Path, graphs: Sequence[LanguageGraph],
                    image_ids: Sequence[str], ids: Sequence[str] | None = None,
                    matches: Sequence[int | None] | None = None,
                    referent_boxes: Sequence[Any] | None = None,
                    mismatched_relations: Sequence[int | None] | None = None,
                    **kwargs: Any) -> StoreProblemDataset:
        """A dataset of ``graphs[i]`` grounded in the store's image ``image_ids[i]``."""
        n = len(graphs)
        for name, seq in (("image_ids", image_ids), ("ids", ids), ("matches", matches),
                          ("referent_boxes", referent_boxes),
                          ("mismatched_relations", mismatched_relations)):
            if seq is not None and len(seq) != n:
                raise ValueError(f"{name} has {len(seq)} entries for {n} graphs")
        items = [StoreItem(graph=g, image_id=str(image_ids[i]),
                           match=None if matches is None else matches[i],
                           referent_box=None if referent_boxes is None else referent_boxes[i],
                           mismatched_relation=(None if mismatched_relations is None
                                                else mismatched_relations[i]),
                           id=str(i) if ids is None else str(ids[i]))
                 for i, g in enumerate(graphs)]
        return cls(store, items, **kwargs)

    @classmethod
    def from_problems(cls, store: str | Path, problems: Sequence[GroundingProblem],
                      image_ids: Sequence[str] | None = None,
                      **kwargs: Any) -> StoreProblemDataset:
        """The language side of in-memory problems, their proposals read from ``store``.

        ``image_ids`` defaults to every problem's ``proposals.image_id``.
        """
        items = []
        for i, p in enumerate(problems):
            image_id = p.proposals.image_id if image_ids is None else image_ids[i]
            if not image_id:
                raise ValueError(f"problem {p.id!r}: no image id to read its proposals by")
            items.append(StoreItem(graph=p.graph, image_id=str(image_id), match=p.match,
                                   referent_box=p.referent_box,
                                   mismatched_relation=p.mismatched_relation, id=p.id,
                                   meta={k: v for k, v in p.meta.items() if k != "image"}))
        return cls(store, items, **kwargs)

    # -------------------------------------------------------------- access
    @property
    def store(self) -> Any:
        """The feature store, opened on first use in the calling process."""
        if self._store is None or self._pid != os.getpid():
            from detectors.store import open_store

            # read in the stored dtype; __getitem__ converts (faster than the store's
            # numpy converter)
            self._store = open_store(self.store_path, validate=self.validate)
            self._pid = os.getpid()
        return self._store

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_store"] = None  # every worker opens its own memory maps
        state["_pid"] = -1
        return state

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> GroundingProblem:
        item = self.items[i]
        props = self.store[item.image_id]
        feats = props.features
        if feats is not None and self.dtype is not None and feats.dtype != self.dtype:
            want = np.dtype(self.dtype)
            if feats.dtype == np.float16 and want == np.float32:
                props.features = torch.from_numpy(feats).float().numpy()
            else:
                props.features = feats.astype(want)
        return GroundingProblem(item.graph, props, match=item.match,
                                referent_box=item.referent_box,
                                mismatched_relation=item.mismatched_relation,
                                id=item.id or str(i), meta=dict(item.meta))

    def image_ids(self) -> list[str]:
        return [it.image_id for it in self.items]
