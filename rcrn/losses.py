"""The training objective of RCRN (paper Eq. 9-11, appendix B)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from rcrn.batching import GroundingBatch
from rcrn.boxes import encode_deltas, paired_iou
from rcrn.models.output import ModelOutput

__all__ = ["LossConfig", "TERMS", "loss_terms", "rcrn_loss", "loss_items", "pair_term",
           "blame_term", "align_term", "counterparts"]


@dataclass
class LossConfig:
    """Weights of the loss ``L = L_grd + mu * L_match + omega * L_reg`` (Eq. 11), plus
    ``pair * L_pair``, ``blame * L_blame`` and ``align * L_align``, the toolkit's
    pair-ranking, relation-blame and entity-alignment terms (0: off, the paper's loss).

    ``reg`` chooses the regression term's rule:
    ``"release"`` (L1 on the offsets, on chosen proposals whose IoU with the referent,
    pixels counted inclusively, exceeds ``iou_threshold``) or ``"toolkit"``
    (smooth-L1, IoU of exclusive boxes at least ``iou_threshold``).
    """

    mu: float = 3.0
    omega: float = 1.0
    iou_threshold: float = 0.5
    reg: str = "toolkit"
    pair: float = 0.0
    pair_margin: float = 1.0
    blame: float = 0.0
    align: float = 0.0

    def __post_init__(self) -> None:
        if self.reg not in ("toolkit", "release"):
            raise ValueError(f"loss.reg must be 'toolkit' or 'release', got {self.reg!r}")

    def weights(self) -> dict[str, float]:
        """The weight of every term of :func:`rcrn_loss` by name."""
        return {"grd": 1.0, "match": self.mu, "reg": self.omega, "pair": self.pair,
                "blame": self.blame, "align": self.align}


TERMS = ("grd", "match", "reg", "pair", "blame", "align")


def counterparts(batch: GroundingBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """The mismatched items of ``batch`` whose matched counterpart (``meta["counter_id"]``,
    the pair the benchmark built them from) is in the same batch with a target proposal:
    ``(negatives, positives)``, two ``[P]`` index tensors into the batch's items."""
    where = {item: g for g, item in enumerate(batch.ids)}
    neg, pos = [], []
    for g, meta in enumerate(batch.meta):
        c = where.get(meta.get("counter_id")) if batch.match[g] == 0 else None
        if c is not None and batch.match[c] == 1 and batch.target_index[c] >= 0:
            neg.append(g)
            pos.append(c)
    device = batch.match.device
    return (torch.tensor(neg, dtype=torch.long, device=device),
            torch.tensor(pos, dtype=torch.long, device=device))


def loss_items(out: ModelOutput, batch: GroundingBatch, cfg: LossConfig
               ) -> dict[str, torch.Tensor]:
    """The items every loss term averages over, as boolean masks.

    ``grd``: matched items with a target proposal; ``match``: items with a known
    match label; ``reg``: matched items whose chosen proposal overlaps the referent
    by ``cfg.iou_threshold`` (all False when the model regresses no box); each over
    the ``B`` items.
    """
    positive = (batch.match == 1) & (batch.target_index >= 0)
    reg = torch.zeros_like(positive)
    if out.deltas is not None and out.ground_index is not None and positive.any():
        ar = torch.arange(batch.num_graphs, device=batch.match.device)
        chosen = batch.boxes_px[ar, out.ground_index.clamp(min=0)]
        if cfg.reg == "release":
            iou = paired_iou(chosen, batch.referent_box, inclusive=True)
            reg = positive & (iou > cfg.iou_threshold)
        else:
            reg = positive & (paired_iou(chosen, batch.referent_box) >= cfg.iou_threshold)
    return {"grd": positive, "match": batch.match >= 0, "reg": reg}


def pair_term(out: ModelOutput, batch: GroundingBatch, margin: float
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """The pair-ranking term as ``(sum, count)`` over the mismatched items whose matched
    counterpart shares the batch: ``softplus(margin - (log b+[t] - log b-[t]))``, ``b+``
    and ``b-`` the two expressions' root beliefs (``out.ground_belief``, floored at
    1e-6) over the image's proposals and ``t`` the referent's proposal.

    The two expressions differ in one relation phrase, so the difference of their log
    beliefs at the referent is the difference of what that relation's messages send
    there: the term trains Relation Sim on the evidence a match decision needs from the
    first step, where the match term alone waits until the beliefs already separate
    matched from mismatched pairs (``docs/ablations.md``).
    """
    zero = batch.box_feats.new_zeros(())
    if out.ground_belief is None:
        return zero, zero
    neg, pos = counterparts(batch)
    if not len(neg):
        return zero, zero
    target = batch.target_index[pos]
    log_b = out.ground_belief.clamp(min=1e-6).log()
    gap = log_b[pos, target] - log_b[neg, target]
    return F.softplus(margin - gap).sum(), zero.new_tensor(float(len(neg)))


def blame_term(out: ModelOutput, batch: GroundingBatch, margin: float = 1.0
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """The relation-blame term as ``(sum, count)`` over the mismatched items with a known
    mismatched relation ``k`` and at least one other relation: the mean over the other
    relations ``j`` of ``softplus(margin - (s[j] - s[k]))``, ``s`` the Compare scores
    (``out.edge_scores``, lower = more suspect).

    It trains what Locate reads, the mismatched relation's score below the others of its
    graph, and with it the node confidences that the match decision also reads
    (``docs/ablations.md``)."""
    zero = batch.box_feats.new_zeros(())
    s = out.edge_scores
    if s is None or not batch.num_edges:
        return zero, zero
    eb, rel = batch.edge_batch, batch.edge_relation
    wanted = torch.where(batch.match == 0, batch.mismatch, -1)          # [B]
    is_k = rel == wanted[eb]                                            # [E]
    B = batch.num_graphs
    s_k = s.new_zeros(B).index_put((eb[is_k],), s[is_k])
    has_k = torch.zeros(B, dtype=torch.bool, device=s.device).index_fill_(0, eb[is_k], True)
    other = ~is_k & has_k[eb]                                           # [E]
    if not other.any():
        return zero, zero
    g = eb[other]
    per_edge = F.softplus(margin - (s[other] - s_k[g]))
    total = s.new_zeros(B).index_add(0, g, per_edge)
    count = torch.bincount(g, minlength=B)
    used = count > 0
    return (total[used] / count[used]).sum(), zero.new_tensor(float(used.sum()))


def loss_terms(out: ModelOutput, batch: GroundingBatch, cfg: LossConfig | None = None
               ) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Every loss term of one batch as ``(sum, count)``: its sum over the items it applies
    to and their number (0 when the model gives no output the term reads).

    * ``grd``: cross-entropy of ``softmax(out.ground_logits)`` over the image's
      proposals against the proposal of maximum IoU with the referent, on matched
      pairs only (Eq. 9; RCRN's logits are its scaled root belief, see
      ``RCRN.grounding_logits``).
    * ``match``: binary cross-entropy of P(match) (Eq. 10), on ``out.match_logit``
      where the model gives it (the release), else on the probability clamped to
      ``[1e-6, 1 - 1e-6]``.
    * ``reg``: smooth-L1 (``cfg.reg="release"``: L1) between predicted and target
      offsets of the chosen proposal, on matched pairs whose chosen proposal overlaps
      the referent box (omega = 0 otherwise, appendix B; see ``LossConfig``).
    * ``pair``: :func:`pair_term` with ``cfg.pair_margin``, when ``cfg.pair`` is not 0
      (the toolkit's term; (0, 0) otherwise).
    * ``blame``: :func:`blame_term` (margin 1), when ``cfg.blame`` is not 0 (the toolkit's
      term; (0, 0) otherwise).
    * ``align``: :func:`align_term`, when ``cfg.align`` is not 0 (the toolkit's term for
      the cross-encoder's verifier; (0, 0) otherwise).

    Returns:
        ``{term: (sum, count)}`` for every term of :data:`TERMS`; a term's value is
        ``sum / count`` (:func:`rcrn_loss`), and summing both over the ranks gives the
        global batch's (``rcrn.engine.distributed.global_batch_loss``).
    """
    cfg = cfg or LossConfig()
    zero = batch.box_feats.new_zeros(())
    terms = dict.fromkeys(TERMS, (zero, zero))
    items = loss_items(out, batch, cfg)
    positive = items["grd"]
    if out.ground_logits is not None and positive.any():
        logits = out.ground_logits.masked_fill(~batch.box_mask, float("-inf"))
        terms["grd"] = (F.cross_entropy(logits[positive], batch.target_index[positive],
                                        reduction="sum"), positive.sum())
    known = items["match"]
    if out.match_logit is not None and known.any():
        terms["match"] = (F.binary_cross_entropy_with_logits(
            out.match_logit[known], batch.match[known], reduction="sum"), known.sum())
    elif out.match_prob is not None and known.any():
        p = out.match_prob[known].clamp(1e-6, 1 - 1e-6)
        terms["match"] = (F.binary_cross_entropy(p, batch.match[known], reduction="sum"),
                          known.sum())
    use = items["reg"]
    if use.any():
        ar = torch.arange(batch.num_graphs, device=batch.match.device)
        chosen = batch.boxes_px[ar, out.ground_index.clamp(min=0)]
        target = encode_deltas(chosen[use], batch.referent_box[use])
        if cfg.reg == "release":
            reg = F.l1_loss(out.deltas[use], target, reduction="sum")
        else:
            reg = F.smooth_l1_loss(out.deltas[use], target, reduction="sum")
        terms["reg"] = (reg, use.sum())
    if cfg.pair:
        terms["pair"] = pair_term(out, batch, cfg.pair_margin)
    if cfg.blame:
        terms["blame"] = blame_term(out, batch)
    if cfg.align:
        terms["align"] = align_term(out, batch)
    return terms


def align_term(out: ModelOutput, batch: GroundingBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy of every entity phrase's scores over its image's proposals
    (``out.values["entity_logits"]``, ``[V, N]``) against the proposal of its object
    (``batch.entity_target``), summed over the nodes that have one, and their count."""
    logits = out.values.get("entity_logits")
    zero = batch.box_feats.new_zeros(())
    if logits is None or batch.entity_target is None:
        return zero, zero
    known = batch.entity_target >= 0
    if not known.any():
        return zero, zero
    return (F.cross_entropy(logits[known], batch.entity_target[known], reduction="sum"),
            known.sum())


def rcrn_loss(out: ModelOutput, batch: GroundingBatch, cfg: LossConfig | None = None
              ) -> dict[str, torch.Tensor]:
    """The loss of one batch: ``loss`` and each term of :func:`loss_terms` as the mean
    over the items it applies to (0 where there are none)."""
    cfg = cfg or LossConfig()
    means = {k: total / count.clamp(min=1) for k, (total, count) in
             loss_terms(out, batch, cfg).items()}
    weights = cfg.weights()
    return {"loss": sum(weights[k] * means[k] for k in TERMS), **means}
