"""The training objective of RCRN (paper Eq. 9-11, appendix B)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from rcrn.batching import GroundingBatch
from rcrn.boxes import encode_deltas, paired_iou
from rcrn.models.rcrn import ModelOutput

__all__ = ["LossConfig", "TERMS", "rcrn_loss", "loss_items", "belief_loss"]


@dataclass
class LossConfig:
    """Weights of the loss:
    ``L = L_grd + mu * L_match + omega * L_reg + nu * L_nodes + belief * L_belief``.

    ``nu`` and ``belief`` (default 0, the paper's loss) weigh the node and belief
    terms of :func:`rcrn_loss`.  ``reg`` chooses the regression term's rule:
    ``"release"`` (L1 on the offsets, on chosen proposals whose IoU with the referent,
    pixels counted inclusively, exceeds ``iou_threshold``) or ``"toolkit"``
    (smooth-L1, IoU of exclusive boxes at least ``iou_threshold``).
    """

    mu: float = 3.0
    omega: float = 1.0
    iou_threshold: float = 0.5
    nu: float = 0.0
    belief: float = 0.0
    reg: str = "toolkit"

    def __post_init__(self) -> None:
        if self.reg not in ("toolkit", "release"):
            raise ValueError(f"loss.reg must be 'toolkit' or 'release', got {self.reg!r}")

    def weights(self) -> dict[str, float]:
        """The weight of every term of :func:`rcrn_loss` by name."""
        return {"grd": 1.0, "match": self.mu, "reg": self.omega, "nodes": self.nu,
                "belief": self.belief}


TERMS = ("grd", "match", "reg", "nodes", "belief")


def loss_items(out: ModelOutput, batch: GroundingBatch, cfg: LossConfig
               ) -> dict[str, torch.Tensor]:
    """The items every loss term averages over, as boolean masks.

    ``grd``: matched items with a target proposal; ``match``: items with a known
    match label; ``reg``: matched items whose chosen proposal overlaps the referent
    by ``cfg.iou_threshold`` (all False when the model regresses no box);
    ``belief``: as ``grd`` -- these four over the ``B`` items; ``nodes``: over the
    ``T * V`` entries of ``out.match_nodes`` (flattened), those of matched items (empty
    when the model gives no ``match_nodes``).
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
    nodes = torch.zeros(0, dtype=torch.bool, device=batch.match.device)
    if out.match_nodes is not None:
        nodes = (batch.match == 1)[batch.node_batch].repeat(out.match_nodes.shape[0])
    return {"grd": positive, "match": batch.match >= 0, "reg": reg, "nodes": nodes,
            "belief": positive}


def rcrn_loss(out: ModelOutput, batch: GroundingBatch, cfg: LossConfig | None = None
              ) -> dict[str, torch.Tensor]:
    """Loss terms for one batch.

    * ``grd``: cross-entropy of ``softmax(out.ground_logits)`` over the image's
      proposals against the proposal of maximum IoU with the referent, on matched
      pairs only (Eq. 9; RCRN's logits are its scaled root belief, see
      ``RCRN.grounding_logits``).
    * ``match``: binary cross-entropy of P(match) (Eq. 10), on ``out.match_logit``
      where the model gives it (the release), else on the probability clamped to
      ``[1e-6, 1 - 1e-6]``.
    * ``nodes`` (weight ``cfg.nu``): binary cross-entropy towards 1 of every node
      confidence the match AND takes its minimum over (``out.match_nodes``), on
      matched pairs only.  Eq. 10 trains the minimum alone, so on a matched pair
      only its least confident node is pushed up, and the others may sit just
      above the decision level; every node of a matched pair matches, and
      training them all is meant to keep a longer pair's minimum over more nodes
      from falling below it (on the synthetic demo it delayed the start of the
      match head instead; see the README).  A mismatched pair's label says only
      that some node is wrong, so it trains the minimum as in Eq. 10.
    * ``belief`` (weight ``cfg.belief``): the root's bottom-up belief (in [0, 1])
      read as a probability per proposal: binary cross-entropy towards 1 at the
      target proposal plus the mean towards 0 over the other proposals, on matched
      pairs.  ``grd`` sees the root belief only relative to its largest value, so
      nothing there fixes the absolute level of a relation's score; the match
      head needs it (a mismatched relation must score low for every pair), and
      until then reads beliefs that say little about matching.  This term asks
      the Sim modules for absolute levels from the grounding labels alone (on the
      synthetic demo it started the match head earlier in some seeds but did not
      improve the end result; see the README).
    * ``reg``: smooth-L1 (``cfg.reg="release"``: L1) between predicted and target
      offsets of the chosen proposal, on matched pairs whose chosen proposal overlaps
      the referent box (omega = 0 otherwise, appendix B; see ``LossConfig``).

    Returns:
        dict with ``loss`` and each term (means over the pairs they apply to).
    """
    cfg = cfg or LossConfig()
    zero = batch.box_feats.new_zeros(())
    terms = dict.fromkeys(TERMS, zero)
    items = loss_items(out, batch, cfg)
    positive = items["grd"]
    if out.ground_logits is not None and positive.any():
        logits = out.ground_logits.masked_fill(~batch.box_mask, float("-inf"))
        terms["grd"] = F.cross_entropy(logits[positive], batch.target_index[positive])
    known = items["match"]
    if out.match_logit is not None and known.any():
        terms["match"] = F.binary_cross_entropy_with_logits(out.match_logit[known],
                                                            batch.match[known])
    elif out.match_prob is not None and known.any():
        p = out.match_prob[known].clamp(1e-6, 1 - 1e-6)
        terms["match"] = F.binary_cross_entropy(p, batch.match[known])
    use = items["reg"]
    if use.any():
        ar = torch.arange(batch.num_graphs, device=batch.match.device)
        chosen = batch.boxes_px[ar, out.ground_index.clamp(min=0)]
        target = encode_deltas(chosen[use], batch.referent_box[use])
        if cfg.reg == "release":
            reg = F.l1_loss(out.deltas[use], target, reduction="none")
        else:
            reg = F.smooth_l1_loss(out.deltas[use], target, reduction="none")
        terms["reg"] = reg.sum(-1).mean()
    if cfg.nu:
        if out.match_nodes is None:
            raise ValueError("loss.nu > 0 needs the node confidences of a match readout "
                             "(and ...); this model gives none")
        if items["nodes"].any():
            p = out.match_nodes.reshape(-1)[items["nodes"]].clamp(1e-6, 1 - 1e-6)
            terms["nodes"] = -torch.log(p).mean()
    if cfg.belief:
        if out.ground_belief is None:
            raise ValueError("loss.belief > 0 needs the root beliefs of a grounding readout; "
                             "this model gives none")
        if positive.any():
            terms["belief"] = belief_loss(out.ground_belief[positive],
                                          batch.box_mask[positive], batch.target_index[positive])
    weights = cfg.weights()
    total = sum(weights[k] * terms[k] for k in TERMS)
    return {"loss": total, **terms}


def belief_loss(belief: torch.Tensor, mask: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean over items of ``-log b[target] - mean_{j != target} log(1 - b[j])``.

    Shapes: ``belief [B, N]`` in [0, 1], ``mask [B, N]`` valid proposals,
    ``target [B]`` -> scalar.
    """
    b = belief.clamp(1e-6, 1 - 1e-6)
    is_target = F.one_hot(target, b.shape[1]).bool()
    others = mask & ~is_target
    pos = -torch.log(b.gather(1, target[:, None])).squeeze(1)
    neg = -(torch.log1p(-b) * others).sum(1) / others.sum(1).clamp(min=1)
    return (pos + neg).mean()
