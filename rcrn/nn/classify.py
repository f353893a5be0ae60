"""Classify: confidence that a phrase matches some region."""

from __future__ import annotations

import torch
from torch import nn

from rcrn.nn.functional import masked_topk
from rcrn.nn.sim import MLP

__all__ = ["Classify"]


class Classify(nn.Module):
    r"""``p = sigmoid(MLP_match(sort(top_K(b))))`` (paper 4.2.1, appendix A.2).

    Shapes: ``b [V, S]``, ``mask [V, S]`` -> ``[V]`` in (0, 1).
    """

    def __init__(self, k: int = 5, hidden: int = 64) -> None:
        super().__init__()
        self.k = k
        self.mlp = MLP(k, hidden, 1)

    def reset_parameters(self) -> None:
        self.mlp.reset_parameters()

    def forward(self, b: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        top = masked_topk(b, mask, self.k)[0]
        return torch.sigmoid(self.mlp(top)).squeeze(-1)

    def __repr__(self) -> str:
        return f"Classify(k={self.k}, hidden={self.mlp.fc1.out_features})"
