"""RCRN: Relation-sensitive Correspondence Reasoning Network (paper section 4).

The model encodes the batch once (phrases, regions, per-box relation
projections), then evaluates its reasoning program (``rcrn.programs``) over
the batch: every primitive runs batched over all graphs, and propagation loops
over tree levels only (the schedule comes from ``collate``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn

from rcrn import programs as P
from rcrn.batching import GroundingBatch
from rcrn.boxes import decode_deltas
from rcrn.encoders import PhraseEncoder, WordEmbedding, location_feature
from rcrn.models.vl import VLConfig, VLEncoder
from rcrn.nn import (
    MLP,
    Aggregate,
    And,
    Classify,
    Compare,
    EdgeAnd,
    EntitySim,
    GateProd,
    GateSum,
    Locate,
    RelationSim,
    Select,
)
from rcrn.nn.functional import gate_context

__all__ = ["RCRNConfig", "RCRN", "Belief", "ModelOutput"]


@dataclass
class RCRNConfig:
    """Dimensions and switches of RCRN.

    The defaults are the synthetic benchmark's; ``RCRNConfig.paper()`` gives the
    paper's (BiLSTM 512x2 over 300-d words, joint 1024, 2048-d regions, K=5).

    ``vl_layers > 0`` adds vision-language layers (paper 4.1.2, Table 9): a
    transformer of that many layers (``vl_dim`` wide, ``vl_heads`` heads,
    ``vl_ff`` feed-forward) reads the whole expression and the regions, and its
    word and region outputs replace the word vectors and region features the
    phrases and similarities are computed from.  ``vl_init`` names a local
    checkpoint (e.g. a trained cross-encoder's ``last.pt``) whose first layers
    initialise them (see ``rcrn.models.vl.load_vl_weights``); otherwise they
    start random.

    ``message_norm="max"`` divides the beliefs a context node sends by their
    largest value before Aggregate (the paper, ``"none"``, sends them as they
    are).  Each message is then a per-slot scaling of one vector, so the
    target's argmax and grounding are unchanged, but a node's absolute belief
    reflects only its own phrase and its direct relations instead of the product
    of every message below it: Classify reads the same scale for a 1-relation and
    a 6-relation expression (see ``RCRN.propagate``).

    ``message_reduce`` maps propagation steps (e.g. ``{"match_up": "min"}``) to
    how their Aggregate combines the log messages of a node's context nodes:
    ``"sum"`` (the product of Eq. 4, every step not named), ``"mean"`` (a
    geometric mean) or ``"min"`` (the weakest message, per slot).  Under the
    product a node with three children scores lower than one with a single child
    merely for receiving more factors below 1, so its Classify confidence falls
    with the number of children; the minimum keeps one wrong relation's message
    whole while adding children who agree costs little.

    ``relation_align`` is the shared start bias of Relation Sim's two transforms
    (``RelationSim(align=...)``): it keeps Eq. 16's ReLU from starting dead; 0
    gives PyTorch's default initialisation.  ``relation_diff`` adds the absolute
    difference of the two regions' features to Relation Sim's pair feature
    (``RelationSim(diff=True)``); ``relation_gaps`` adds the boxes' absolute
    separation to its geometry (``RelationSim(gaps=True)``).
    """

    word_dim: int = 64
    lstm_hidden: int = 64
    joint: int = 128
    hidden: int = 128
    sim_dim: int = 64
    vis_dim: int = 64
    spatial_dim: int = 16
    pair_dim: int = 64
    k: int = 5
    classify_hidden: int = 32
    regression: bool = True
    grounding_scale: float = 1.0
    grounding_norm: str = "none"
    classify_log: bool = False
    fused_pairs: bool = True
    eps: float = 1e-6
    message_norm: str = "none"
    message_reduce: dict[str, str] = field(default_factory=dict)
    relation_align: float = 2.0
    relation_diff: bool = False
    relation_gaps: bool = False
    vl_layers: int = 0
    vl_dim: int = 128
    vl_heads: int = 4
    vl_ff: int = 256
    vl_dropout: float = 0.1
    vl_init: str | None = None
    program: str = field(default_factory=lambda: P.to_text(P.RCRN_PROGRAM))

    @classmethod
    def paper(cls, **overrides: Any) -> RCRNConfig:
        base = dict(word_dim=300, lstm_hidden=512, joint=1024, hidden=1024, sim_dim=256,
                    vis_dim=2048, spatial_dim=64, pair_dim=2048, k=5, classify_hidden=64)
        base.update(overrides)
        return cls(**base)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Belief:
    """Beliefs of every node over a set of slots (regions).

    Attributes:
        values: ``[V, S]`` belief of every node in every slot.
        slots: ``[V, S]`` batch-global region index of every slot.
        mask: ``[V, S]`` valid slots.
    """

    values: torch.Tensor
    slots: torch.Tensor
    mask: torch.Tensor


@dataclass
class ModelOutput:
    """What a forward pass returns.

    Attributes:
        match_prob: ``[B]`` P(match).
        ground_belief: ``[B, N]`` the root's bottom-up belief (grounding branch).
        ground_index: ``[B]`` chosen proposal (-1 when the graph has none).
        box: ``[B, 4]`` predicted referent box in pixels (after regression).
        deltas: ``[B, 4]`` regression offsets of the chosen proposal.
        edge_scores: ``[E]`` Compare scores (lower = more suspect).
        mismatch_index: ``[B]`` blamed relation index in each graph (-1 if none).
        values: every evaluated sub-expression, keyed by its text.
        ground_logits: ``[B, N]`` grounding scores used as they are by the loss
            (models without beliefs, e.g. the cross-encoder; padded slots -inf).
        match_nodes: ``[T, V]`` the node confidences a ``(match (and P_1 .. P_T))``
            readout takes its minimum over (``None`` for other readouts).
    """

    match_prob: torch.Tensor | None
    ground_belief: torch.Tensor | None
    ground_index: torch.Tensor | None
    box: torch.Tensor | None
    deltas: torch.Tensor | None
    edge_scores: torch.Tensor | None
    mismatch_index: torch.Tensor | None
    values: dict[str, Any] = field(default_factory=dict)
    ground_logits: torch.Tensor | None = None
    match_nodes: torch.Tensor | None = None


class _Encoded:
    """Per-forward features shared by every step of the program."""

    def __init__(self, model: RCRN, batch: GroundingBatch) -> None:
        cfg = model.config
        self.batch = batch
        regions = model.region_features(batch)                         # [B, N, Dv]
        text = None
        if model.vl is not None:
            _, text_ctx, region_ctx = model.vl(batch, regions)
            regions = model.vl_regions(region_ctx) * batch.box_mask[..., None]
            text = model.vl_words(text_ctx).reshape(-1, model.words.dim)
        words = model.embed(batch.ent_tokens, batch.ent_token_pos, text)
        self.phrase, heads = model.phrases(words, batch.ent_lengths)
        self.ent_app, self.ent_pos = heads["app"], heads["pos"]
        if batch.num_edges:
            spo_words = model.embed(batch.spo_tokens, batch.spo_token_pos, text)
            _, spo = model.phrases(spo_words, batch.spo_lengths)
            self.rel = spo["spo"]
        else:
            self.rel = self.phrase.new_zeros(0, cfg.joint)
        self.regions = regions
        self.location = location_feature(batch.boxes)                  # [B, N, 5]
        B, N = batch.box_mask.shape
        self.boxes_flat = batch.boxes.reshape(B * N, 4)
        flat = self.regions.reshape(B * N, -1)
        self.proj = model.rel_sim.project(flat) if cfg.fused_pairs else flat
        self.node_mask = batch.box_mask[batch.node_batch]               # [V, N]
        self.node_slots = (batch.node_batch[:, None] * N
                           + torch.arange(N, device=batch.box_mask.device)[None])
        self.b_app = model.app_sim(self.ent_app, self.regions, batch.node_batch)
        self.b_pos = model.pos_sim(self.ent_pos, self.location, batch.node_batch)
        _, self.context = gate_context(self.phrase, [self.b_app, self.b_pos], self.node_mask,
                                       cfg.k)


class RCRN(nn.Module):
    """The RCRN model: encoders, shared Sim modules, the gated modules of its program.

    Args:
        config: dimensions and the program text.
        vocab_size: number of words (``Vocab``).
        word_vectors: optional pretrained word vectors ``[vocab_size, word_dim]``.
        freeze_words: keep pretrained word vectors fixed.
        region_encoder: optional module mapping ``(images [U,3,H,W], image_index [B],
            boxes_px [B,N,4])`` to region features ``[B, N, vis_dim]``; used when the
            batch holds images.
    """

    def __init__(self, config: RCRNConfig, vocab_size: int,
                 word_vectors: torch.Tensor | None = None, freeze_words: bool = False,
                 region_encoder: nn.Module | None = None) -> None:
        super().__init__()
        self.config = config
        self.program = P.parse(config.program)
        cfg = config
        self.words = WordEmbedding(vocab_size, cfg.word_dim, word_vectors, freeze_words)
        self.phrases = PhraseEncoder(self.words.dim, cfg.lstm_hidden, cfg.joint)
        state = self.phrases.state_dim
        self.app_sim = EntitySim(cfg.joint, cfg.vis_dim, cfg.joint, cfg.hidden, cfg.sim_dim)
        self.pos_sim = EntitySim(cfg.joint, 5, cfg.joint, cfg.hidden, cfg.sim_dim)
        self.rel_sim = RelationSim(cfg.joint, cfg.vis_dim, cfg.spatial_dim, cfg.pair_dim,
                                   cfg.hidden, cfg.joint, cfg.relation_align,
                                   cfg.relation_diff, cfg.relation_gaps)
        ctx = 2 * cfg.k
        self.gates = nn.ModuleDict()
        for name, (kind, mode) in P.gate_specs(self.program).items():
            self.gates[name] = (GateSum(state, ctx, 2, mode) if kind == "gatesum"
                                else GateProd(state, ctx, mode))
        self.select = Select(cfg.k)
        cfg.message_reduce = dict(cfg.message_reduce)
        self.aggregates = nn.ModuleDict({r: Aggregate(cfg.eps, r) for r in Aggregate.REDUCE})
        self.classify = Classify(cfg.k, cfg.classify_hidden, cfg.classify_log, cfg.eps)
        self.compare_up, self.compare_down = Compare(), Compare(reverse=True)
        self.and_ = And()
        self.and_edges = EdgeAnd()
        self.locate = Locate()
        unknown = set(cfg.message_reduce) - {name for name, (kind, _) in
                                             P.gate_specs(self.program).items()
                                             if kind == "gateprod"}
        if unknown:
            raise ValueError(f"message_reduce names {sorted(unknown)}, which the program does "
                             f"not propagate")
        bad = {r for r in cfg.message_reduce.values() if r not in Aggregate.REDUCE}
        if bad:
            raise ValueError(f"message_reduce values must be in {Aggregate.REDUCE}, got "
                             f"{sorted(bad)}")
        if cfg.message_norm not in ("none", "max"):
            raise ValueError(f"message_norm must be 'none' or 'max', got {cfg.message_norm!r}")
        self.region_encoder = region_encoder
        self.vl = self.vl_words = self.vl_regions = None
        if cfg.vl_layers > 0:
            self.vl = VLEncoder(vocab_size, self.words.dim, cfg.vis_dim,
                                VLConfig(cfg.vl_dim, cfg.vl_layers, cfg.vl_heads, cfg.vl_ff,
                                         cfg.vl_dropout), word_vectors, freeze_words)
            self.vl_words = nn.Linear(cfg.vl_dim, self.words.dim)
            self.vl_regions = nn.Linear(cfg.vl_dim, cfg.vis_dim)
        self.regress = (MLP(cfg.vis_dim + 5 + cfg.joint, cfg.hidden, 4)
                        if cfg.regression else None)
        self._recorders: list[Callable[[str, Any], None]] = []

    # ----------------------------------------------------------- recording
    def add_recorder(self, fn: Callable[[str, Any], None]) -> Callable[[], None]:
        """Call ``fn(step_text, value)`` for every evaluated step; returns a remover."""
        self._recorders.append(fn)
        return lambda: self._recorders.remove(fn)

    def _emit(self, key: str, value: Any) -> None:
        for fn in self._recorders:
            fn(key, value)

    # ------------------------------------------------------------ encoding
    def embed(self, tokens: torch.Tensor, positions: torch.Tensor | None,
              text: torch.Tensor | None) -> torch.Tensor:
        """Word vectors of phrases ``[P, L] -> [P, L, word_dim]``: the contextual
        vectors ``text[positions]`` of the vision-language layers where the phrase
        has a position in its expression, the word embedding elsewhere."""
        words = self.words(tokens)
        if text is None or positions is None:
            return words
        has = positions >= 0
        ctx = text[positions.clamp(min=0)]
        return torch.where(has[..., None], ctx, words)

    def region_features(self, batch: GroundingBatch) -> torch.Tensor:
        if self.region_encoder is not None and batch.images is not None:
            feats = self.region_encoder(batch.images, batch.image_index, batch.boxes_px)
            return feats * batch.box_mask[..., None]
        return batch.box_feats

    # ---------------------------------------------------------- primitives
    def local_belief(self, enc: _Encoded, mode: str) -> Belief:
        b, beta = self.gates[f"local_{mode}"]([enc.b_app, enc.b_pos], enc.phrase, enc.context,
                                             enc.node_mask)
        self._emit(f"beta:local_{mode}", beta)
        return Belief(b, enc.node_slots, enc.node_mask)

    def prune(self, x: Belief, k: int) -> Belief:
        values, pos, mask = Select(k)(x.values, x.mask)
        return Belief(values, x.slots.gather(1, pos), mask)

    def propagate(self, enc: _Encoded, x: Belief, direction: str, name: str) -> Belief:
        """Bottom-up (``up``) or top-down (``down``) message passing (paper 4.2.1).

        One batched step per tree level: Select on the context nodes, relation
        scores only for (target slot, context top-K slot) pairs, Aggregate in
        log space, GateProd on the target nodes.
        """
        batch, gate = enc.batch, self.gates[name]
        aggregate = self.aggregates[self.config.message_reduce.get(name, "sum")]
        b = x.values
        up = direction == "up"
        order = range(len(batch.levels) - 1, -1, -1) if up else range(len(batch.levels))
        betas = []
        for d in order:
            lv = batch.levels[d]
            parent, child = batch.edge_index[0, lv], batch.edge_index[1, lv]
            tgt, src = (parent, child) if up else (child, parent)
            sel_val, sel_pos, _ = self.select(b[src], x.mask[src])
            if self.config.message_norm == "max":
                # sorted top-K: column 0 is each sender's largest belief
                sel_val = sel_val / sel_val[:, :1].clamp(min=1e-12)
            cols = x.slots[src].gather(1, sel_pos)
            rows = x.slots[tgt]
            subj = batch.edge_parent_is_subject[lv]
            A = self.rel_sim(enc.rel[lv], enc.boxes_flat, enc.proj, rows, cols,
                             subj if up else ~subj)
            self._emit(f"relation:{name}:{d + 1}", (lv, A))
            log_agg = aggregate(A, sel_val, torch.stack([src, tgt]), b.shape[0])
            nodes = batch.level_parents[d] if up else child
            new, beta = gate(x.values[nodes], log_agg[nodes], enc.phrase[nodes],
                             enc.context[nodes], x.mask[nodes])
            betas.append((nodes, beta))
            b = b.index_copy(0, nodes, new)
        self._emit(f"beta:{name}", betas)
        return Belief(b, x.slots, x.mask)

    # ------------------------------------------------------------- program
    def _eval(self, expr: tuple, enc: _Encoded, cache: dict[tuple, Any]) -> Any:
        if expr in cache:
            return cache[expr]
        head = expr[0]
        if head == "local":
            value = self.local_belief(enc, expr[1][1])
        elif head == "select":
            value = self.prune(self._eval(expr[2], enc, cache), expr[1])
        elif head == "propagate":
            value = self.propagate(enc, self._eval(expr[2], enc, cache), expr[1], expr[3])
        elif head == "classify":
            x = self._eval(expr[1], enc, cache)
            value = self.classify(x.values, x.mask)
        elif head == "and":
            confs = [self._eval(e, enc, cache) for e in expr[1:]]
            value = self.and_(confs, enc.batch.node_batch, enc.batch.num_graphs)
        elif head == "and_edges":
            up, down = (self._eval(e, enc, cache) for e in expr[1:])
            b = enc.batch
            value = self.and_edges(up, down, b.edge_index, b.node_batch, b.root)
        elif head == "compare":
            confs = [self._eval(e, enc, cache) for e in expr[1:]]
            ei = enc.batch.edge_index
            value = self.compare_up(confs[0], ei)
            if len(confs) == 2:
                value = value + self.compare_down(confs[1], ei)
        else:
            raise P.ProgramError(f"cannot evaluate {P.to_text(expr)}")
        cache[expr] = value
        self._emit(P.to_text(expr), value)
        return value

    def forward(self, batch: GroundingBatch) -> ModelOutput:
        enc = _Encoded(self, batch)
        cache: dict[tuple, Any] = {}
        parts = dict(self.program[1:])
        out = ModelOutput(None, None, None, None, None, None, None)
        B, N = batch.box_mask.shape
        if "ground" in parts:
            belief = self._eval(parts["ground"], enc, cache)
            root = belief.values[batch.root]                            # [B, N]
            out.ground_belief = root
            out.ground_index = self.locate(-root, batch.box_mask)
            out.box, out.deltas = self._regress(enc, out.ground_index)
        if "match" in parts:
            out.match_prob = self._eval(parts["match"], enc, cache)
            if parts["match"][0] == "and":
                out.match_nodes = torch.stack([cache[e] for e in parts["match"][1:]])
        if "mismatch" in parts:
            d = self._eval(parts["mismatch"], enc, cache)
            out.edge_scores = d
            max_rel = int(batch.edge_relation.max()) + 1 if batch.num_edges else 0
            dense = d.new_full((B, max_rel), float("inf"))
            mask = torch.zeros(B, max_rel, dtype=torch.bool, device=d.device)
            dense[batch.edge_batch, batch.edge_relation] = d
            mask[batch.edge_batch, batch.edge_relation] = True
            out.mismatch_index = self.locate(dense, mask)
        out.values = {P.to_text(k): v for k, v in cache.items()}
        self._emit("output", out)
        return out

    def _regress(self, enc: _Encoded, index: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        batch = enc.batch
        B = batch.num_graphs
        idx = index.clamp(min=0)
        ar = torch.arange(B, device=idx.device)
        proposal = batch.boxes_px[ar, idx]
        if self.regress is None:
            return proposal, proposal.new_zeros(B, 4)
        if batch.num_edges:
            summed = enc.rel.new_zeros(B, enc.rel.shape[1]).index_add(0, batch.edge_batch,
                                                                      enc.rel)
            count = torch.bincount(batch.edge_batch, minlength=B).clamp(min=1)
            glob = summed / count[:, None]
        else:
            glob = enc.rel.new_zeros(B, self.config.joint)
        feats = torch.cat([enc.regions[ar, idx], enc.location[ar, idx], glob], dim=-1)
        deltas = self.regress(feats)
        return decode_deltas(proposal, deltas), deltas

    def extra_repr(self) -> str:
        return f"program={P.to_text(self.program)}"
