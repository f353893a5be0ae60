"""What a model's forward pass returns, and its split into one prediction per item."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from rcrn.batching import GroundingBatch
from rcrn.structures import Prediction

__all__ = ["ModelOutput"]


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
        ground_logits: ``[B, N]`` the grounding softmax's logits, what the loss reads
            (RCRN: the root belief times ``grounding_scale``, divided by its largest
            value first with ``grounding_norm: max``; padded slots are masked there).
        match_logit: ``[B]`` the logit of P(match) when confidences are logits.
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
    match_logit: torch.Tensor | None = None

    def to_predictions(self, batch: GroundingBatch) -> list[Prediction]:
        """One :class:`~rcrn.structures.Prediction` per item of ``batch``, in order: the
        match probability (1.0 without a match readout), the chosen proposal and box,
        the blamed relation and every relation's Compare score by relation index."""
        preds = []
        scores = self.edge_scores.detach().cpu() if self.edge_scores is not None else None
        for g, item in enumerate(batch.ids):
            rel_scores: list[float] = []
            if scores is not None:
                edges = (batch.edge_batch == g).nonzero().flatten().cpu()
                order = batch.edge_relation[edges].cpu()
                rel = torch.zeros(len(edges))
                rel[order] = scores[edges].float()
                rel_scores = rel.tolist()
            mm = int(self.mismatch_index[g]) if self.mismatch_index is not None else -1
            grounded = self.ground_index is not None and int(self.ground_index[g]) >= 0
            preds.append(Prediction(
                id=item,
                match_prob=float(self.match_prob[g]) if self.match_prob is not None else 1.0,
                box=self.box[g].detach().cpu().tolist() if self.box is not None and grounded
                else None,
                proposal=int(self.ground_index[g]) if self.ground_index is not None else -1,
                mismatched_relation=mm if mm >= 0 else None, relation_scores=rel_scores))
        return preds
