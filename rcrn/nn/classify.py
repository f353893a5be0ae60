"""Classify: confidence that a phrase matches some region."""

from __future__ import annotations

import torch
from torch import nn

from rcrn.nn.functional import masked_topk
from rcrn.nn.sim import MLP

__all__ = ["Classify"]


class Classify(nn.Module):
    r"""``p = sigmoid(MLP_match(sort(top_K(b))))`` (paper 4.2.1, appendix A.2).

    With ``log_input=True`` the MLP reads ``log(sort(top_K(b)) + eps)`` instead:
    beliefs are products of messages and can all be small, and on a log scale the
    absolute level of a belief stays visible to the MLP.

    Shapes: ``b [V, S]``, ``mask [V, S]`` -> ``[V]`` in (0, 1).
    """

    def __init__(self, k: int = 5, hidden: int = 64, log_input: bool = False,
                 eps: float = 1e-6) -> None:
        super().__init__()
        self.k, self.log_input, self.eps = k, log_input, eps
        self.mlp = MLP(k, hidden, 1)

    def reset_parameters(self) -> None:
        self.mlp.reset_parameters()

    def forward(self, b: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        top = masked_topk(b, mask, self.k)[0]
        return torch.sigmoid(self.mlp(self.features(top))).squeeze(-1)

    def features(self, top: torch.Tensor) -> torch.Tensor:
        """What the MLP reads from the sorted top-K beliefs."""
        return torch.log(top + self.eps) if self.log_input else top

    def __repr__(self) -> str:
        return (f"Classify(k={self.k}, hidden={self.mlp.fc1.out_features}, "
                f"log_input={self.log_input})")
