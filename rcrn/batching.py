"""Batching: many ``GroundingProblem``s into one ``GroundingBatch``.

Graph structure lives in flat PyG-style tensors (``edge_index``, node-to-graph
``node_batch``); beliefs are dense over the padded proposals of each graph with
a proposal mask.  The propagation schedule (node depths, edges grouped by the
depth of their child) is computed here, once per batch, so the model's forward
never walks a tree in Python.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import torch

from rcrn.boxes import box_iou
from rcrn.structures import GroundingProblem

__all__ = ["Vocab", "GroundingBatch", "collate", "normalize_token"]

PAD, UNK = "<pad>", "<unk>"


def normalize_token(token: str) -> str:
    return token.lower()


class Vocab:
    """Word-to-id mapping; id 0 is ``<pad>``.

    A vocabulary the toolkit builds (``Vocab(words)``, :meth:`build`) puts ``<unk>``
    at id 1.  A vocabulary read from a file or a saved word list
    (:meth:`from_file`, :meth:`from_list`) follows the GITM-MR release's word
    mapper: a word's id is its line, a word listed twice keeps its last line,
    ``<unk>`` must be listed (anywhere) and unknown tokens get its id.  Tokens
    are lowercased before look-up (:func:`normalize_token`); the listed words are
    kept as written.
    """

    def __init__(self, words: Iterable[str] = ()) -> None:
        self.itos: list[str] = [PAD, UNK]
        self.stoi: dict[str, int] = {PAD: 0, UNK: 1}
        for w in words:
            self.add(w)

    def add(self, word: str) -> int:
        word = normalize_token(word)
        if word not in self.stoi:
            self.stoi[word] = len(self.itos)
            self.itos.append(word)
        return self.stoi[word]

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, word: str) -> bool:
        return normalize_token(word) in self.stoi

    @property
    def unk_id(self) -> int:
        """The id unknown tokens map to: that of ``<unk>``, wherever it is listed."""
        return self.stoi[UNK]

    def encode(self, words: Sequence[str]) -> list[int]:
        unk = self.unk_id
        return [self.stoi.get(normalize_token(w), unk) for w in words]

    @classmethod
    def build(cls, problems: Iterable[GroundingProblem], min_count: int = 1) -> Vocab:
        """Vocabulary of every token of the problems' graphs seen ``min_count`` times."""
        counts: Counter[str] = Counter()
        for p in problems:
            counts.update(normalize_token(t) for t in p.graph.tokens)
        return cls(sorted(w for w, c in counts.items() if c >= min_count))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Vocab:
        """Read a vocabulary file as the GITM-MR release does.

        Every line, stripped of surrounding white space (UTF-8), is a word and its
        line number (from 0) the word's id.  Line 0 must be ``<pad>`` and ``<unk>``
        must be listed; a word listed twice keeps its last line.

        Raises:
            OSError: the file cannot be opened.
            ValueError: (naming the file) not UTF-8, no ``<pad>`` first, no ``<unk>``.
        """
        try:
            with open(path, encoding="utf-8") as f:
                words = [line.strip() for line in f.readlines()]
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: the vocabulary is not UTF-8 ({exc})") from None
        return cls._listed(words, str(path))

    def to_list(self) -> list[str]:
        return list(self.itos)

    @classmethod
    def from_list(cls, words: Sequence[str]) -> Vocab:
        """The vocabulary of a word list (index = id), as :meth:`from_file` reads one."""
        return cls._listed([str(w) for w in words], "word list")

    @classmethod
    def _listed(cls, words: list[str], where: str) -> Vocab:
        if not words or words[0] != PAD:
            first = repr(words[0]) if words else "nothing (empty)"
            raise ValueError(f"{where}: line 0 must be {PAD!r}, found {first}")
        vocab = cls()
        vocab.itos = list(words)
        vocab.stoi = {w: i for i, w in enumerate(words)}  # a repeated word keeps its last id
        if UNK not in vocab.stoi:
            raise ValueError(f"{where}: no {UNK!r} word (unknown tokens need its id)")
        return vocab


@dataclass
class GroundingBatch:
    """A batch of grounding problems with its propagation schedule.

    Shapes: ``B`` graphs, ``V`` entity nodes, ``E`` relation edges, ``N`` the
    largest proposal count in the batch, ``D`` the region feature size.

    Attributes:
        ids: problem identifiers, length ``B``.
        ent_tokens: ``[V, Le]`` word ids of every entity phrase (0-padded).
        ent_lengths: ``[V]`` phrase lengths (>= 1).
        spo_tokens: ``[E, Ls]`` word ids of every subject-predicate-object phrase.
        spo_lengths: ``[E]``.
        node_batch: ``[V]`` graph of every node.
        node_depth: ``[V]`` depth of every node in its tree (root 0).
        root: ``[B]`` global index of every graph's root node.
        edge_index: ``[2, E]`` (parent node, child node), global indices.
        edge_batch: ``[E]`` graph of every edge.
        edge_relation: ``[E]`` index of the edge's relation in its graph's ``relations``.
        edge_parent_is_subject: ``[E]`` True when the parent is the relation's subject.
        levels: edges grouped by the depth of their child; ``levels[d - 1]`` holds
            the edges whose child is at depth ``d``.
        level_parents: unique parent nodes of every level.
        box_feats: ``[B, N, D]`` region features (zeros where padded).
        boxes: ``[B, N, 4]`` boxes normalised to [0, 1] (xyxy).
        boxes_px: ``[B, N, 4]`` boxes in pixels.
        box_mask: ``[B, N]`` True for real proposals.
        image_size: ``[B, 2]`` (width, height).
        match: ``[B]`` match labels (-1 when unknown).
        target_index: ``[B]`` proposal of maximum IoU with the referent box (-1 unknown).
        referent_box: ``[B, 4]`` referent box in pixels (zeros when unknown).
        mismatch: ``[B]`` index of the mismatched relation (-1 when none).
        images: optional ``[U, 3, H, W]`` float images in [0, 1] for pixel encoders,
            one per distinct image of the batch.
        image_index: ``[B]`` row of ``images`` of every item (when images are given).
        text_tokens: ``[B, Lt]`` word ids of every whole expression (``graph.tokens``),
            for sentence encoders (cross-encoder, vision-language layers).
        text_lengths: ``[B]`` expression lengths (>= 1).
        ent_token_pos: ``[V, Le]`` position of every ``ent_tokens`` word in the flat
            ``text_tokens.reshape(-1)`` (-1 for padding or a phrase without a span).
        spo_token_pos: ``[E, Ls]`` the same for ``spo_tokens``.
        edge_span: ``[E, 2]`` token range ``[start, end)`` of every edge's relation
            phrase in its expression.
        texts: the tokens of every whole expression (``graph.tokens``), for front ends
            with their own tokenizer (UNITER's word pieces).
        entity_target: ``[V]`` the proposal of every node's object, where the problem's
            ``meta["entity_boxes"]`` gives one box per entity (the synthetic benchmark,
            for matched expressions): the proposal of maximum IoU when that is at least
            0.5, else -1 (-1 for every node without a box).
    """

    ids: list[str]
    ent_tokens: torch.Tensor
    ent_lengths: torch.Tensor
    spo_tokens: torch.Tensor
    spo_lengths: torch.Tensor
    node_batch: torch.Tensor
    node_depth: torch.Tensor
    root: torch.Tensor
    edge_index: torch.Tensor
    edge_batch: torch.Tensor
    edge_relation: torch.Tensor
    edge_parent_is_subject: torch.Tensor
    levels: list[torch.Tensor]
    level_parents: list[torch.Tensor]
    box_feats: torch.Tensor
    boxes: torch.Tensor
    boxes_px: torch.Tensor
    box_mask: torch.Tensor
    image_size: torch.Tensor
    match: torch.Tensor
    target_index: torch.Tensor
    referent_box: torch.Tensor
    mismatch: torch.Tensor
    images: torch.Tensor | None = None
    image_index: torch.Tensor | None = None
    meta: list[dict[str, Any]] = field(default_factory=list)
    text_tokens: torch.Tensor | None = None
    text_lengths: torch.Tensor | None = None
    ent_token_pos: torch.Tensor | None = None
    spo_token_pos: torch.Tensor | None = None
    edge_span: torch.Tensor | None = None
    texts: list[list[str]] | None = None
    entity_target: torch.Tensor | None = None

    @property
    def num_graphs(self) -> int:
        return len(self.ids)

    @property
    def num_nodes(self) -> int:
        return int(self.node_batch.numel())

    @property
    def num_edges(self) -> int:
        return int(self.edge_batch.numel())

    @property
    def max_boxes(self) -> int:
        return int(self.box_mask.shape[1])

    def to(self, device: torch.device | str, non_blocking: bool = False) -> GroundingBatch:
        """Move every tensor to ``device`` (pinned batches copy asynchronously)."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, torch.Tensor):
                v = v.to(device, non_blocking=non_blocking)
            elif isinstance(v, list) and v and isinstance(v[0], torch.Tensor):
                v = [t.to(device, non_blocking=non_blocking) for t in v]
            out[f.name] = v
        return GroundingBatch(**out)

    def pin_memory(self) -> GroundingBatch:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, torch.Tensor):
                setattr(self, f.name, v.pin_memory())
            elif isinstance(v, list) and v and isinstance(v[0], torch.Tensor):
                setattr(self, f.name, [t.pin_memory() for t in v])
        return self

    def to_pyg(self) -> Any:
        """The graph structure as a ``torch_geometric.data.Batch`` (for analysis and interop)."""
        from torch_geometric.data import Batch, Data

        graphs = []
        for g in range(self.num_graphs):
            nodes = (self.node_batch == g).nonzero().flatten()
            edges = (self.edge_batch == g).nonzero().flatten()
            offset = int(nodes[0]) if len(nodes) else 0
            graphs.append(Data(edge_index=self.edge_index[:, edges] - offset,
                               depth=self.node_depth[nodes],
                               relation=self.edge_relation[edges],
                               num_nodes=len(nodes)))
        return Batch.from_data_list(graphs)


def _pad(seqs: list[list[int]], fill: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``[len(seqs), longest]`` ids padded with ``fill``, and the lengths (at least 1)."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    out = np.full((len(seqs), max(int(lengths.max(initial=0)), 1)), fill, dtype=np.int64)
    if len(seqs):
        rows = np.repeat(np.arange(len(seqs)), lengths)
        cols = np.arange(len(rows)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        out[rows, cols] = np.fromiter((x for s in seqs for x in s), dtype=np.int64,
                                      count=len(rows))
    return torch.from_numpy(out), torch.from_numpy(np.maximum(lengths, 1))


def _flat_positions(positions: list[list[int]], graph_of: list[int], width: int,
                    length: int) -> torch.Tensor:
    """``[len(positions), length]`` positions in the flat ``[B * width]`` token grid
    (-1 where padded)."""
    out, _ = _pad(positions, fill=-1)
    out = out[:, :length] if out.shape[1] >= length else torch.cat(
        [out, out.new_full((len(positions), length - out.shape[1]), -1)], dim=1)
    offset = torch.tensor(graph_of, dtype=torch.long)[:, None] * width
    return torch.where(out >= 0, out + offset, out)


def collate(problems: Sequence[GroundingProblem], vocab: Vocab,
            feature_dim: int | None = None, with_images: bool = False) -> GroundingBatch:
    """Collate problems into one batch and compute the propagation schedule.

    Args:
        problems: the items; every one needs a valid tree and proposals.
        vocab: maps words to ids.
        feature_dim: region feature size; inferred from the first problem with
            features; problems without features get zeros.
        with_images: stack ``problem.meta["image"]`` (HxWx3 uint8 arrays of one
            size) into ``images``, once per distinct ``meta["image_path"]`` (or array).

    Returns:
        The batch; every index is global to the batch.
    """
    if not problems:
        raise ValueError("collate needs at least one problem")
    if feature_dim is None:
        feature_dim = next((p.proposals.feature_dim for p in problems
                            if p.proposals.features is not None), 0)
    n_max = max(1, max(len(p.proposals) for p in problems))
    B = len(problems)

    ent_seqs: list[list[int]] = []
    spo_seqs: list[list[int]] = []
    text_seqs: list[list[int]] = []
    ent_pos: list[list[int]] = []       # sentence positions, local to the expression
    spo_pos: list[list[int]] = []
    pos_batch_ent: list[int] = []
    pos_batch_spo: list[int] = []
    edge_span: list[tuple[int, int]] = []
    node_batch, node_depth, roots = [], [], []
    parents, children, edge_batch, edge_rel, parent_is_subj = [], [], [], [], []
    # filled per item as numpy arrays, made tensors once (a torch call per item costs more
    # than the copy)
    box_feats = np.zeros((B, n_max, feature_dim), dtype=np.float32)
    boxes_px = np.zeros((B, n_max, 4), dtype=np.float32)
    box_mask = np.zeros((B, n_max), dtype=bool)
    image_size = np.zeros((B, 2), dtype=np.float32)
    match = np.full(B, -1.0, dtype=np.float32)
    target = np.full(B, -1, dtype=np.int64)
    ref_box = np.zeros((B, 4), dtype=np.float32)
    mismatch = np.full(B, -1, dtype=np.int64)
    # the target proposal (``GroundingProblem.target_index``) of every item at once
    referent = np.zeros((B, 4))
    has_referent = np.zeros(B, dtype=bool)
    proposals64 = np.zeros((B, n_max, 4))

    offset = 0
    for g, p in enumerate(problems):
        graph = p.graph
        depth = graph.depths()
        text_seqs.append(vocab.encode(graph.tokens))
        for i in range(graph.num_entities):
            ent_seqs.append(vocab.encode(graph.entity_tokens(i)))
            ent_pos.append(list(range(*graph.entities[i].span)))
            pos_batch_ent.append(g)
            node_batch.append(g)
            node_depth.append(depth[i])
        roots.append(offset + graph.root)
        for parent, child, k in graph.tree_edges():
            parents.append(offset + parent)
            children.append(offset + child)
            edge_batch.append(g)
            edge_rel.append(k)
            parent_is_subj.append(graph.relations[k].subject == parent)
            spo_seqs.append(vocab.encode(graph.spo_tokens(k)))
            r = graph.relations[k]
            spo_pos.append([j for e in (graph.entities[r.subject].span, r.span,
                                        graph.entities[r.object].span) for j in range(*e)])
            pos_batch_spo.append(g)
            edge_span.append(r.span)
        offset += graph.num_entities

        props = p.proposals
        n = len(props)
        image_size[g] = props.image_size
        if n:
            boxes_px[g, :n] = props.boxes
            box_mask[g, :n] = True
            if props.features is not None and feature_dim:
                if props.feature_dim != feature_dim:
                    raise ValueError(f"problem {p.id!r}: features of size {props.feature_dim}, "
                                     f"batch uses {feature_dim}")
                box_feats[g, :n] = props.features
        if p.match is not None:
            match[g] = float(p.match)
        if p.referent_box is not None:
            ref_box[g] = p.referent_box
            if n:
                referent[g], has_referent[g] = p.referent_box, True
                proposals64[g, :n] = props.boxes
        if p.mismatched_relation is not None:
            mismatch[g] = p.mismatched_relation

    if has_referent.any():
        iou = np.where(box_mask, box_iou(referent[:, None], proposals64)[:, 0], -1.0)
        target[has_referent] = iou.argmax(1)[has_referent]
    entity_target = torch.from_numpy(_entity_targets(problems))
    wh = image_size[:, None, [0, 1, 0, 1]]                          # [B, 1, (w, h, w, h)]
    boxes = np.divide(boxes_px, wh, out=np.zeros_like(boxes_px), where=box_mask[..., None])
    # computed in float32, held in torch's default float type
    real = torch.get_default_dtype()
    box_feats, boxes, boxes_px, image_size, match, ref_box = (
        torch.from_numpy(a).to(real) for a in (box_feats, boxes, boxes_px, image_size, match,
                                               ref_box))
    box_mask, target, mismatch = (torch.from_numpy(a) for a in (box_mask, target, mismatch))
    ent_tokens, ent_lengths = _pad(ent_seqs)
    spo_tokens, spo_lengths = _pad(spo_seqs) if spo_seqs else (
        torch.zeros(0, 1, dtype=torch.long), torch.zeros(0, dtype=torch.long))
    text_tokens, text_lengths = _pad(text_seqs)
    width = text_tokens.shape[1]
    ent_token_pos = _flat_positions(ent_pos, pos_batch_ent, width, ent_tokens.shape[1])
    spo_token_pos = _flat_positions(spo_pos, pos_batch_spo, width, spo_tokens.shape[1])
    edge_index = torch.tensor([parents, children], dtype=torch.long).reshape(2, -1)
    child_depth = torch.tensor(node_depth, dtype=torch.long)[edge_index[1]]
    max_depth = int(child_depth.max()) if len(child_depth) else 0
    levels = [(child_depth == d).nonzero().flatten() for d in range(1, max_depth + 1)]
    level_parents = [torch.unique(edge_index[0, lv]) for lv in levels]

    images = image_index = None
    if with_images:
        rows: dict[Any, int] = {}
        arrays, index = [], []
        for p in problems:
            array = p.meta.get("image")
            if array is None:
                raise ValueError(f"problem {p.id!r}: meta['image'] is missing")
            key = p.meta.get("image_path") or id(array)
            if key not in rows:
                rows[key] = len(arrays)
                arrays.append(array)
            index.append(rows[key])
        images = torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2).float().div_(255.0)
        image_index = torch.tensor(index, dtype=torch.long)

    return GroundingBatch(
        ids=[p.id for p in problems], ent_tokens=ent_tokens, ent_lengths=ent_lengths,
        spo_tokens=spo_tokens, spo_lengths=spo_lengths,
        node_batch=torch.tensor(node_batch, dtype=torch.long),
        node_depth=torch.tensor(node_depth, dtype=torch.long),
        root=torch.tensor(roots, dtype=torch.long), edge_index=edge_index,
        edge_batch=torch.tensor(edge_batch, dtype=torch.long),
        edge_relation=torch.tensor(edge_rel, dtype=torch.long),
        edge_parent_is_subject=torch.tensor(parent_is_subj, dtype=torch.bool),
        levels=levels, level_parents=level_parents, box_feats=box_feats, boxes=boxes,
        boxes_px=boxes_px, box_mask=box_mask, image_size=image_size, match=match,
        target_index=target, referent_box=ref_box, mismatch=mismatch, images=images,
        image_index=image_index,
        meta=[{k: v for k, v in p.meta.items() if k != "image"} for p in problems],
        text_tokens=text_tokens, text_lengths=text_lengths, ent_token_pos=ent_token_pos,
        spo_token_pos=spo_token_pos,
        edge_span=torch.tensor(edge_span, dtype=torch.long).reshape(-1, 2),
        texts=[list(p.graph.tokens) for p in problems], entity_target=entity_target,
    )


def _entity_targets(problems: Sequence[GroundingProblem]) -> np.ndarray:
    """``GroundingBatch.entity_target`` of ``problems``, node by node."""
    out = []
    for p in problems:
        row = np.full(p.graph.num_entities, -1, dtype=np.int64)
        boxes = p.meta.get("entity_boxes")
        if boxes is not None and len(boxes) == len(row) and len(p.proposals):
            iou = box_iou(np.asarray(boxes, dtype=np.float64), p.proposals.boxes)
            best = iou.argmax(axis=1)
            row = np.where(iou.max(axis=1) >= 0.5, best, -1)
        out.append(row)
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)
