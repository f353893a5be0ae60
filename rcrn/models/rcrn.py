"""RCRN: Relation-sensitive Correspondence Reasoning Network (paper section 4).

The model encodes the batch once (phrases, regions, per-box relation
projections), then evaluates its reasoning program (``rcrn.programs``) over
the batch: every primitive runs batched over all graphs, and propagation loops
over tree levels only (the schedule comes from ``collate``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from rcrn import programs as P
from rcrn.batching import GroundingBatch
from rcrn.boxes import decode_deltas
from rcrn.encoders import PhraseEncoder, WordEmbedding, location_feature
from rcrn.models.output import ModelOutput
from rcrn.models.uniter import UniterEncoder, UniterSettings, WordPieces, box_positions
from rcrn.models.vl import VLConfig, VLEncoder
from rcrn.nn import (
    MLP,
    Aggregate,
    And,
    Belief,
    Classify,
    Compare,
    EntitySim,
    GateProd,
    GateSum,
    Locate,
    Propagation,
    RelationSim,
    Select,
)
from rcrn.nn.functional import gate_context
from rcrn.nn.sim import BNMLP, EntitySimBN, NormalizeScale, RelationSimBN

__all__ = ["RCRNConfig", "RCRN", "Belief", "Encoded", "ModelOutput"]


@dataclass
class RCRNConfig:
    """Dimensions and switches of RCRN.

    The defaults are the synthetic benchmark's; ``RCRNConfig.paper()`` gives the
    paper's (BiLSTM 512x2 over 300-d words, joint 1024, 2048-d regions, K=5).

    ``vl`` adds vision-language layers (paper 4.1.2, Table 9) when it is not empty:
    a transformer (``rcrn.models.vl.VLConfig``: ``layers``, ``dim`` wide, ``heads``,
    ``ff`` feed-forward, ``dropout``) reads the whole expression and the regions, and
    its word and region outputs replace the word vectors and region features the
    phrases and similarities are computed from.  ``vl.init`` names a local checkpoint
    (e.g. a trained cross-encoder's ``last.pt``) whose first layers initialise them
    (see ``rcrn.models.vl.load_vl_weights``); otherwise they start random.

    ``message_norm="max"`` divides the beliefs a context node sends by their
    largest value before Aggregate (the paper, ``"none"``, sends them as they
    are).  Each message is then a per-slot scaling of one vector, so the
    target's argmax and grounding are unchanged, but a node's absolute belief
    reflects only its own phrase and its direct relations instead of the product
    of every message below it: Classify reads the same scale for a 1-relation and
    a 6-relation expression (see ``RCRN.propagate``).

    ``message_reduce`` maps propagation steps (e.g. ``{"match_up": "min"}``) to
    how their Aggregate combines the log messages of a node's context nodes:
    ``"sum"`` (the product of Eq. 4, every step not named) or ``"min"`` (the
    weakest message, per slot).  Under the
    product a node with three children scores lower than one with a single child
    merely for receiving more factors below 1, so its Classify confidence falls
    with the number of children; the minimum keeps one wrong relation's message
    whole while adding children who agree costs little.

    The remaining switches choose between the official release's computation and the
    toolkit's own (``RCRNConfig.official()`` sets every one to the release's; the
    table "The official preset and the toolkit's departures" in docs/ablations.md says
    what each changes and what it measured):

    * ``layers``: ``"release"`` builds the release's networks (BatchNorm and Dropout
      ``dropout`` in every feature transformation, NormalizeScale x20 on region,
      location, pair and spatial features, the L2 normalisation of the vector
      similarity, the release's pair layers, Classify with BatchNorm, Dropout and a
      learned pad value, the release's box-regression head on the mean entity
      phrase); ``"plain"`` the toolkit's (no normalisation layers).
    * ``phrase_attention``: ``"release"`` (scores from the LSTM states, attended word
      vectors) or ``"projected"`` (see ``PhraseEncoder``); ``word_dropout`` on the
      LSTM input.
    * ``gate_phrase_grad``: let gradients reach the phrase state through every β
      (the release and the paper's appendix D.1.1 cut them: ``False``).
    * ``context``: the relation context boxes of a node's child are its top-K by the
      child's ``"local"`` belief (paper Eq. 3, the release) or by its
      ``"propagated"`` one; message values always come from the propagated belief.
    * ``grounding_scale``: a number, or ``"learned"`` (a parameter starting at 1,
      the release's ``ScaleLayer``).
    * ``confidences``: Classify's outputs as ``"logits"`` (And takes the minimum
      logit, the match loss is BCE on it, Compare subtracts logits: the release) or
      ``"probs"`` (probabilities, as the paper writes Eq. 7-8).
    * ``boxes``: ``"inclusive"`` counts box sizes in pixels inclusively
      (``x2 - x1 + 1``) in the location and pair features (the release), or
      ``"exclusive"``.
    * ``belief_floor``: added to every local belief (the release: ``1e-6``).
    * ``release_slots``: the release scores every image over this many region slots
      (126), padding absent ones with similarity -1; two places see the padding: the
      local belief's F_norm divides by at least ``sum β`` while an image has fewer
      proposals, and the match readout never reads a propagated node's belief below
      ``1e-6`` (see ``Classify``).  0: no padding.

    ``front="uniter"`` reads words and regions through the first layers of UNITER
    (the paper's full model; ``rcrn.models.uniter``): ``uniter`` holds its sizes
    (``UniterSettings``, UNITER-base's first 6 layers by default) and the local
    tokenizer folder and weights; ``word_dim`` and ``vis_dim`` are then UNITER's
    width, and the batch's region features its input (``uniter["img_dim"]`` wide).
    ``"words"``: word vectors and region features as they are (RCRN-T).

    ``relation_align`` is the shared start bias of Relation Sim's two transforms
    (``RelationSim(align=...)``): it keeps Eq. 16's ReLU from starting dead; 0
    gives PyTorch's default initialisation.  ``relation_diff`` adds the absolute
    difference of the two regions' features to Relation Sim's pair feature
    (``RelationSim(diff=True)``).
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
    vl: dict[str, Any] = field(default_factory=dict)
    program: str = "rcrn"
    layers: str = "plain"
    dropout: float = 0.2
    word_dropout: float = 0.0
    phrase_attention: str = "projected"
    gate_phrase_grad: bool = True
    context: str = "propagated"
    confidences: str = "probs"
    boxes: str = "exclusive"
    belief_floor: float = 0.0
    release_slots: int = 0
    front: str = "words"
    uniter: dict[str, Any] = field(default_factory=dict)

    #: What ``official()`` sets besides the sizes: every switch at the release's value.
    OFFICIAL = dict(layers="release", dropout=0.2, word_dropout=0.2,
                    phrase_attention="release", gate_phrase_grad=False, context="local",
                    grounding_scale="learned", grounding_norm="none", confidences="logits",
                    boxes="inclusive", belief_floor=1e-6, release_slots=126,
                    classify_log=False, eps=1e-6, message_norm="none", message_reduce={},
                    relation_align=0.0, relation_diff=False,
                    regression=True, vl={})

    @classmethod
    def paper(cls, **overrides: Any) -> RCRNConfig:
        """The paper's sizes (BiLSTM 512x2 over 300-d words, joint 1024, 2048-d regions,
        K=5) with the toolkit's switches."""
        base = dict(word_dim=300, lstm_hidden=512, joint=1024, hidden=1024, sim_dim=256,
                    vis_dim=2048, spatial_dim=64, pair_dim=2048, k=5, classify_hidden=64)
        base.update(overrides)
        return cls(**base)

    @classmethod
    def official(cls, **overrides: Any) -> RCRNConfig:
        """RCRN-T of the official release: its sizes and every switch at its value, the
        full program (``rcrn/configs/official.yaml`` is the same as a config file)."""
        base = dict(cls.paper().to_dict(), **copy.deepcopy(cls.OFFICIAL))
        base.update(overrides)
        return cls(**base)

    @classmethod
    def official_uniter(cls, **overrides: Any) -> RCRNConfig:
        """The release's full model (the paper's "RCRN"): :meth:`official` with the first
        6 layers of UNITER-base as its front end (768-d words and regions).  Pass
        ``uniter={"tokenizer": folder, "weights": "uniter-base.pt"}`` for local files."""
        from rcrn.models.uniter import UniterSettings

        settings = UniterSettings.from_dict(overrides.pop("uniter", None))
        width = settings.hidden
        base = dict(front="uniter", uniter=settings.to_dict(), word_dim=width, vis_dim=width,
                    pair_dim=width)
        base.update(overrides)
        return cls.official(**base)

    def validate(self) -> None:
        """Raise ``ValueError`` naming the setting for a value out of range or a switch
        that does not apply to the chosen layers."""
        choices = {"layers": ("plain", "release"), "phrase_attention": ("projected", "release"),
                   "context": ("propagated", "local"), "confidences": ("probs", "logits"),
                   "boxes": ("exclusive", "inclusive"), "grounding_norm": ("none", "max"),
                   "message_norm": ("none", "max")}
        for key, allowed in choices.items():
            if getattr(self, key) not in allowed:
                raise ValueError(f"model.{key} must be one of {list(allowed)}, got "
                                 f"{getattr(self, key)!r}")
        scale = self.grounding_scale
        if not (scale == "learned" or (isinstance(scale, (int, float))
                                       and not isinstance(scale, bool) and scale > 0)):
            raise ValueError(f"model.grounding_scale must be a positive number or 'learned', "
                             f"got {scale!r}")
        if self.front not in ("words", "uniter"):
            raise ValueError(f"model.front must be one of ['words', 'uniter'], got "
                             f"{self.front!r}")
        if self.front == "uniter":
            from rcrn.models.uniter import UniterSettings

            width = UniterSettings.from_dict(self.uniter).hidden
            for key in ("word_dim", "vis_dim"):
                if getattr(self, key) != width:
                    raise ValueError(f"model.{key} must be UNITER's width "
                                     f"(model.uniter.hidden, {width}) with front 'uniter', "
                                     f"got {getattr(self, key)}")
            if self.vl_settings() is not None:
                raise ValueError("model.vl applies to front 'words' only (UNITER is the "
                                 "vision-language front end)")
        elif self.uniter:
            raise ValueError("model.uniter applies to front 'uniter' only; set "
                             "model.front: uniter or remove model.uniter")
        self.vl_settings()
        if self.release_slots < 0:
            raise ValueError(f"model.release_slots must be >= 0, got {self.release_slots}")
        if self.layers == "release":
            plain_only = {"relation_align": 0.0, "relation_diff": False, "fused_pairs": True}
            bad = [k for k, v in plain_only.items() if getattr(self, k) != v]
            if bad:
                raise ValueError(f"model.{bad[0]} applies to layers 'plain' only (the release's "
                                 f"relation layers have no such switch); set it to "
                                 f"{plain_only[bad[0]]!r} with layers 'release'")

    def vl_settings(self) -> VLConfig | None:
        """The vision-language layers of ``vl`` (None for none: ``vl`` empty or
        ``layers: 0``); raises ``ValueError`` naming a bad key."""
        settings = VLConfig.from_dict(self.vl)
        return settings if self.vl and settings.layers > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Encoded:
    """What every step of a program reads: the batch's phrases, regions and local scores
    (:meth:`RCRN.encode`).

    Attributes:
        batch: the batch encoded.
        phrase: ``[V, H]`` every entity phrase's BiLSTM state (the gates' language input).
        context: ``[V, 2K]`` every node's gate context (its top-K local scores).
        ent_app, ent_pos: ``[V, Dt]`` the entity phrases' appearance / location vectors.
        rel: ``[E, Dt]`` the relation phrases' vectors.
        rel_txt: ``[E, J]`` their Relation Sim text transform (release layers), else None.
        regions: ``[B, N, Dv]`` region features (after the front end).
        location: ``[B, N, 5]`` the regions' location feature.
        boxes_flat: ``[B * N, 4]`` normalised boxes, batch-global slot order.
        proj: ``[B * N, ...]`` region features as Relation Sim reads them.
        node_mask: ``[V, N]`` the valid proposals of every node's image.
        node_slots: ``[V, N]`` their batch-global slot indices.
        b_app, b_pos: ``[V, N]`` the appearance and location Sim scores.
        padded: ``[V]`` nodes of images with fewer boxes than ``release_slots`` (or None).
    """

    batch: GroundingBatch
    phrase: torch.Tensor
    context: torch.Tensor
    ent_app: torch.Tensor
    ent_pos: torch.Tensor
    rel: torch.Tensor
    rel_txt: torch.Tensor | None
    regions: torch.Tensor
    location: torch.Tensor
    boxes_flat: torch.Tensor
    proj: torch.Tensor
    node_mask: torch.Tensor
    node_slots: torch.Tensor
    b_app: torch.Tensor
    b_pos: torch.Tensor
    padded: torch.Tensor | None


class BoxHead(nn.Module):
    r"""The release's box-regression head: offsets of the grounded proposal from
    ``W [L2(F_v(NS(o))), l, L2(F_t(e))]``, with :class:`BNMLP` transforms ``F`` of the
    proposal's region feature ``o`` and of the mean entity phrase ``e``, and its 5-d
    location ``l``.

    Shapes: ``region [B, Dv]``, ``location [B, 5]``, ``phrase [B, Dt]`` -> ``[B, 4]``.
    """

    def __init__(self, vis_dim: int, text_dim: int, joint: int, dropout: float = 0.2) -> None:
        super().__init__()
        self.norm = NormalizeScale(vis_dim)
        self.vis_trf = BNMLP(vis_dim, joint, dropout)
        self.text_trf = BNMLP(text_dim, joint, dropout)
        self.out = nn.Linear(2 * joint + 5, 4)

    def forward(self, region: torch.Tensor, location: torch.Tensor,
                phrase: torch.Tensor) -> torch.Tensor:
        v = F.normalize(self.vis_trf(self.norm(region)), dim=-1)
        t = F.normalize(self.text_trf(phrase), dim=-1)
        return self.out(torch.cat([v, location, t], dim=-1))


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
                 region_encoder: nn.Module | None = None,
                 word_pieces: WordPieces | None = None) -> None:
        super().__init__()
        self.config = config
        self.program = P.resolve(config.program, config.k)
        cfg = config
        cfg.validate()
        self.words: WordEmbedding | None = None
        self.uniter: UniterEncoder | None = None
        if cfg.front == "uniter":
            self.uniter = UniterEncoder(UniterSettings.from_dict(cfg.uniter), word_pieces)
        else:
            self.words = WordEmbedding(vocab_size, cfg.word_dim, word_vectors, freeze_words)
        self.word_dropout = nn.Dropout(cfg.word_dropout)
        self.phrases = PhraseEncoder(cfg.word_dim if self.words is None else self.words.dim,
                                     cfg.lstm_hidden, cfg.joint,
                                     attention=cfg.phrase_attention)
        state, text = self.phrases.state_dim, self.phrases.out_dim
        release = cfg.layers == "release"
        if release:
            self.app_sim = EntitySimBN(text, cfg.vis_dim, cfg.joint, cfg.sim_dim, cfg.dropout)
            self.pos_sim = EntitySimBN(text, 5, cfg.joint, cfg.sim_dim, cfg.dropout, pre=True)
            self.rel_sim = RelationSimBN(text, cfg.vis_dim, cfg.spatial_dim, cfg.joint,
                                         cfg.dropout)
        else:
            self.app_sim = EntitySim(text, cfg.vis_dim, cfg.joint, cfg.hidden, cfg.sim_dim)
            self.pos_sim = EntitySim(text, 5, cfg.joint, cfg.hidden, cfg.sim_dim)
            self.rel_sim = RelationSim(text, cfg.vis_dim, cfg.spatial_dim, cfg.pair_dim,
                                       cfg.hidden, cfg.joint, align=cfg.relation_align,
                                       diff=cfg.relation_diff)
        ctx = 2 * cfg.k
        self.gates = nn.ModuleDict()
        for name, (kind, mode) in P.gate_specs(self.program).items():
            self.gates[name] = (GateSum(state, ctx, 2, mode, cfg.belief_floor)
                                if kind == "gatesum" else GateProd(state, ctx, mode))
        self.propagation = Propagation(cfg.k, cfg.context, cfg.message_norm,
                                       track_updates=cfg.release_slots > 0)
        cfg.message_reduce = dict(cfg.message_reduce)
        self.aggregates = nn.ModuleDict({r: Aggregate(cfg.eps, r) for r in Aggregate.REDUCE})
        self.classify = Classify(cfg.k, cfg.classify_hidden, cfg.classify_log, cfg.eps,
                                 cfg.layers, cfg.dropout, logits=cfg.confidences == "logits")
        self.compare_up, self.compare_down = Compare(), Compare(reverse=True)
        self.and_ = And()
        self.locate = Locate()
        self.ground_scale = (nn.Parameter(torch.ones(()))
                             if cfg.grounding_scale == "learned" else None)
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
        self.region_encoder = region_encoder
        self.vl = self.vl_words = self.vl_regions = None
        vl = cfg.vl_settings()
        if vl is not None:
            self.vl = VLEncoder(vocab_size, self.words.dim, cfg.vis_dim, vl, word_vectors,
                                freeze_words)
            self.vl_words = nn.Linear(vl.dim, self.words.dim)
            self.vl_regions = nn.Linear(vl.dim, cfg.vis_dim)
        self.regress: nn.Module | None = None
        if cfg.regression:
            self.regress = (BoxHead(cfg.vis_dim, text, cfg.joint, cfg.dropout) if release
                            else MLP(cfg.vis_dim + 5 + text, cfg.hidden, 4))
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
    def encode(self, batch: GroundingBatch) -> Encoded:
        """Phrases, regions and the local Sim scores of ``batch``, computed once per
        forward pass for every step of the program."""
        cfg = self.config
        regions = self.region_features(batch)                          # [B, N, Dv]
        text = None
        if self.vl is not None:
            _, text_ctx, region_ctx = self.vl(batch, regions)
            regions = self.vl_regions(region_ctx) * batch.box_mask[..., None]
            text = self.vl_words(text_ctx).reshape(-1, self.words.dim)
        if self.uniter is not None:
            if batch.texts is None:
                raise ValueError("the batch has no texts; collate it with rcrn.batching.collate")
            words_ctx, regions = self.uniter(batch.texts, regions,
                                             box_positions(batch.boxes, batch.image_size),
                                             batch.box_mask, batch.ids)
            text = words_ctx.reshape(-1, words_ctx.shape[-1])
        words = self.word_dropout(self.embed(batch.ent_tokens, batch.ent_token_pos, text))
        phrase, heads = self.phrases(words, batch.ent_lengths, ("app", "pos"))
        if batch.num_edges:
            spo_words = self.word_dropout(self.embed(batch.spo_tokens, batch.spo_token_pos,
                                                     text))
            rel = self.phrases(spo_words, batch.spo_lengths, ("spo",))[1]["spo"]
        else:
            rel = phrase.new_zeros(0, self.phrases.out_dim)
        # the release's relation text BatchNorm sees every relation of the batch at once
        rel_txt = self.rel_sim.text_transform(rel) if cfg.layers == "release" else None
        boxes = batch.boxes
        if cfg.boxes == "inclusive":
            # the far corner one pixel further: sizes x2 - x1 + 1 as the release counts them
            one_px = 1.0 / batch.image_size.clamp(min=1.0)              # [B, 2]
            boxes = boxes + torch.cat([torch.zeros_like(one_px), one_px], -1)[:, None, :]
        location = location_feature(boxes)                              # [B, N, 5]
        B, N = batch.box_mask.shape
        flat = regions.reshape(B * N, -1)
        proj = self.rel_sim.project(flat) if cfg.fused_pairs else flat
        node_mask = batch.box_mask[batch.node_batch]                    # [V, N]
        node_slots = (batch.node_batch[:, None] * N
                      + torch.arange(N, device=batch.box_mask.device)[None])
        sim_kw = {"box_mask": batch.box_mask} if cfg.layers == "release" else {}
        b_app = self.app_sim(heads["app"], regions, batch.node_batch, **sim_kw)
        b_pos = self.pos_sim(heads["pos"], location, batch.node_batch, **sim_kw)
        padded = None
        if cfg.release_slots:
            padded = (batch.box_mask.sum(1) < cfg.release_slots)[batch.node_batch]
        phrase, context = gate_context(
            phrase, [b_app, b_pos], node_mask, cfg.k,
            detach_phrase=not cfg.gate_phrase_grad, pad=-1.0 if cfg.release_slots else 0.0)
        return Encoded(batch=batch, phrase=phrase, context=context, ent_app=heads["app"],
                       ent_pos=heads["pos"], rel=rel, rel_txt=rel_txt, regions=regions,
                       location=location, boxes_flat=boxes.reshape(B * N, 4),
                       proj=proj,
                       node_mask=node_mask, node_slots=node_slots, b_app=b_app, b_pos=b_pos,
                       padded=padded)

    def embed(self, tokens: torch.Tensor, positions: torch.Tensor | None,
              text: torch.Tensor | None) -> torch.Tensor:
        """Word vectors of phrases ``[P, L] -> [P, L, word_dim]``: the contextual
        vectors ``text[positions]`` of the vision-language layers where the phrase
        has a position in its expression, the word embedding elsewhere (zeros without
        a word embedding: the UNITER front end)."""
        if self.words is None:
            has = (positions >= 0)[..., None]
            return torch.where(has, text[positions.clamp(min=0)], text.new_zeros(()))
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
    def local_belief(self, enc: Encoded, mode: str) -> Belief:
        b, beta = self.gates[f"local_{mode}"]([enc.b_app, enc.b_pos], enc.phrase, enc.context,
                                             enc.node_mask, enc.padded)
        self._emit(f"beta:local_{mode}", beta)
        return Belief(b, enc.node_slots, enc.node_mask)

    def prune(self, x: Belief, k: int) -> Belief:
        values, pos, mask = Select(k)(x.values, x.mask)
        return Belief(values, x.slots.gather(1, pos), mask, x.updated)

    def propagate(self, enc: Encoded, x: Belief, direction: str, name: str) -> Belief:
        """Bottom-up (``up``) or top-down (``down``) message passing (paper 4.2.1) with
        the GateProd named ``name``: :class:`~rcrn.nn.Propagation` over the batch, the
        relation scores from Relation Sim, only for (target slot, context top-K slot)
        pairs."""
        rel_txt = enc.rel_txt

        def scores(lv: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
                   subj: torch.Tensor) -> torch.Tensor:
            return self.rel_sim(enc.rel[lv], enc.boxes_flat, enc.proj, rows, cols, subj,
                                txt=None if rel_txt is None else rel_txt[lv])

        aggregate = self.aggregates[self.config.message_reduce.get(name, "sum")]
        out, betas = self.propagation(
            x, direction, enc.batch, scores, self.gates[name], aggregate, enc.phrase,
            enc.context,
            on_scores=lambda d, lv, A: self._emit(f"relation:{name}:{d + 1}", (lv, A)))
        self._emit(f"beta:{name}", betas)
        return out

    # ------------------------------------------------------------- program
    def _eval(self, expr: tuple, enc: Encoded, cache: dict[tuple, Any]) -> Any:
        """The value of one form: its registered evaluation (:data:`EVALUATE`), each
        distinct sub-expression evaluated once per forward pass."""
        if expr not in cache:
            evaluate = EVALUATE.get(expr[0])
            if evaluate is None:
                raise P.ProgramError(f"cannot evaluate {P.to_text(expr)}")
            cache[expr] = evaluate(self, expr, enc, lambda e: self._eval(e, enc, cache))
            self._emit(P.to_text(expr), cache[expr])
        return cache[expr]

    def forward(self, batch: GroundingBatch) -> ModelOutput:
        enc = self.encode(batch)
        cache: dict[tuple, Any] = {}
        parts = dict(self.program[1:])
        out = ModelOutput(None, None, None, None, None, None, None)
        B, N = batch.box_mask.shape
        if "ground" in parts:
            belief = self._eval(parts["ground"], enc, cache)
            root = belief.values[batch.root]                            # [B, N]
            out.ground_belief = root
            out.ground_logits = self.grounding_logits(root)
            out.ground_index = self.locate(-root, batch.box_mask)
            out.box, out.deltas = self._regress(enc, out.ground_index)
        if "match" in parts:
            value = self._eval(parts["match"], enc, cache)
            out.match_prob = value
            if self.classify.logits:
                out.match_logit, out.match_prob = value, torch.sigmoid(value)
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

    def grounding_logits(self, belief: torch.Tensor) -> torch.Tensor:
        """The logits of the grounding softmax over a root belief ``[B, N]``:
        ``scale * belief`` (``grounding_scale``: a number or the learned scale), with
        ``grounding_norm: max`` the belief divided by its largest value first (products
        of messages can shrink every belief towards 0; the argmax is unchanged)."""
        if self.config.grounding_norm == "max":
            belief = belief / belief.amax(dim=-1, keepdim=True).clamp(min=1e-12)
        scale = (self.ground_scale if self.ground_scale is not None
                 else float(self.config.grounding_scale))
        return scale * belief

    def _regress(self, enc: Encoded, index: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        batch = enc.batch
        B = batch.num_graphs
        idx = index.clamp(min=0)
        ar = torch.arange(B, device=idx.device)
        proposal = batch.boxes_px[ar, idx]
        if self.regress is None:
            return proposal, proposal.new_zeros(B, 4)
        if isinstance(self.regress, BoxHead):
            # the mean of the graph's entity phrases (the release's language input)
            summed = enc.ent_app.new_zeros(B, enc.ent_app.shape[1]).index_add(
                0, batch.node_batch, enc.ent_app)
            count = torch.bincount(batch.node_batch, minlength=B).clamp(min=1)
            deltas = self.regress(enc.regions[ar, idx], enc.location[ar, idx],
                                  summed / count[:, None])
            return decode_deltas(proposal, deltas), deltas
        if batch.num_edges:
            summed = enc.rel.new_zeros(B, enc.rel.shape[1]).index_add(0, batch.edge_batch,
                                                                      enc.rel)
            count = torch.bincount(batch.edge_batch, minlength=B).clamp(min=1)
            glob = summed / count[:, None]
        else:
            glob = enc.rel.new_zeros(B, enc.rel.shape[1])
        feats = torch.cat([enc.regions[ar, idx], enc.location[ar, idx], glob], dim=-1)
        deltas = self.regress(feats)
        return decode_deltas(proposal, deltas), deltas

    def extra_repr(self) -> str:
        return f"program={P.to_text(self.program)}"


# ---------------------------------------------------------------- evaluation
#: ``Evaluate(model, expr, encoded, ev)``: the value of the form ``expr``; ``ev(e)`` is
#: the (cached) value of a sub-expression ``e``.
Evaluate = Callable[[RCRN, tuple, Encoded, Callable[[Any], Any]], Any]


def _compare(model: RCRN, expr: tuple, enc: Encoded, ev: Callable[[Any], Any]) -> Any:
    ei = enc.batch.edge_index
    return sum((model.compare_down if P.direction(e) == "down" else model.compare_up)(
        ev(e), ei) for e in expr[1:])


def _classify(model: RCRN, expr: tuple, enc: Encoded, ev: Callable[[Any], Any]) -> Any:
    x = ev(expr[1])
    return model.classify(x.values, x.mask, x.updated)


EVALUATE: dict[str, Evaluate] = {
    "local": lambda m, e, enc, ev: m.local_belief(enc, e[1][1]),
    "select": lambda m, e, enc, ev: m.prune(ev(e[2]), e[1]),
    "propagate": lambda m, e, enc, ev: m.propagate(enc, ev(e[2]), e[1], e[3]),
    "classify": _classify,
    "and": lambda m, e, enc, ev: m.and_([ev(x) for x in e[1:]], enc.batch.node_batch,
                                        enc.batch.num_graphs),
    # the largest of the match readouts (probabilities or logits: the maximum commutes
    # with the sigmoid)
    "or": lambda m, e, enc, ev: torch.stack([ev(x) for x in e[1:]]).amax(0),
    "compare": _compare,
}
"""How RCRN evaluates every form of ``rcrn.programs.FORMS``."""
