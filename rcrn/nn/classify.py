"""Classify: confidence that a phrase matches some region."""

from __future__ import annotations

import torch
from torch import nn

from rcrn.nn.functional import masked_topk
from rcrn.nn.sim import MLP, batch_norm

__all__ = ["Classify"]


class Classify(nn.Module):
    r"""``p = sigmoid(MLP_match(sort(top_K(b))))`` (paper 4.2.1, appendix A.2).

    With ``log_input=True`` the MLP reads ``log(sort(top_K(b)) + eps)`` instead:
    beliefs are products of messages and can all be small, and on a log scale the
    absolute level of a belief stays visible to the MLP.

    ``layers="release"`` is the release's readout: ``Linear(K, hidden) -> BatchNorm ->
    ReLU -> Dropout -> Linear(hidden, 1)`` (Xavier-normal weights, zero biases), and
    the slots of a node with fewer than ``K`` valid regions read a learned pad value
    (``"plain"``: ``Linear -> ReLU -> Linear``, pads read 0).  ``logits=True`` returns
    the logit instead of the probability.

    ``floor_rows [V]`` marks nodes whose sorted top-K is read with every value below
    ``floor`` raised to it: the release scores every node over 126 region slots and
    resets the slots outside the match branch's pruned set to ``1e-6`` after a
    propagation step, so an updated node's sorted top-K never reads less than that.

    Shapes: ``b [V, S]``, ``mask [V, S]`` -> ``[V]``.
    """

    def __init__(self, k: int = 5, hidden: int = 64, log_input: bool = False,
                 eps: float = 1e-6, layers: str = "plain", dropout: float = 0.2,
                 logits: bool = False) -> None:
        super().__init__()
        if layers not in ("plain", "release"):
            raise ValueError(f"Classify layers must be 'plain' or 'release', got {layers!r}")
        self.k, self.log_input, self.eps = k, log_input, eps
        self.layers, self.logits = layers, logits
        if layers == "plain":
            self.mlp = MLP(k, hidden, 1)
        else:
            self.fc1, self.bn = nn.Linear(k, hidden), nn.BatchNorm1d(hidden)
            self.drop, self.fc2 = nn.Dropout(dropout), nn.Linear(hidden, 1)
            self.pad_value = nn.Parameter(torch.zeros(()))
            self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.layers == "plain":
            self.mlp.reset_parameters()
            return
        for fc in (self.fc1, self.fc2):
            nn.init.xavier_normal_(fc.weight)
            nn.init.zeros_(fc.bias)
        self.bn.reset_parameters()
        nn.init.zeros_(self.pad_value)

    def forward(self, b: torch.Tensor, mask: torch.Tensor,
                floor_rows: torch.Tensor | None = None, floor: float = 1e-6) -> torch.Tensor:
        top, _, valid = masked_topk(b, mask, self.k)
        if floor_rows is not None:
            top = torch.where(floor_rows[:, None] & valid, top.clamp(min=floor), top)
        x = self.features(top)
        if self.layers == "plain":
            logit = self.mlp(x)
        else:
            x = torch.where(valid, x, self.pad_value)
            logit = self.fc2(self.drop(torch.relu(batch_norm(self.bn, self.fc1(x)))))
        logit = logit.squeeze(-1)
        return logit if self.logits else torch.sigmoid(logit)

    def features(self, top: torch.Tensor) -> torch.Tensor:
        """What the MLP reads from the sorted top-K beliefs."""
        return torch.log(top + self.eps) if self.log_input else top

    def __repr__(self) -> str:
        hidden = (self.mlp.fc1 if self.layers == "plain" else self.fc1).out_features
        return (f"Classify(k={self.k}, hidden={hidden}, log_input={self.log_input}, "
                f"layers={self.layers!r}, logits={self.logits})")
