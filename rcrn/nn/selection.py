"""Select: top-K pruning of a belief (paper Eq. 3)."""

from __future__ import annotations

import torch
from torch import nn

from rcrn.nn.functional import masked_topk

__all__ = ["Select"]


class Select(nn.Module):
    r"""``b' = F_topk(b)``: the ``K`` largest valid entries of every row, sorted.

    Rows with fewer than ``K`` valid entries give masked slots (value 0).

    Shapes: ``b [V, S]``, ``mask [V, S]`` -> values ``[V, K]``, slot positions
    ``[V, K]`` (into ``S``), slot mask ``[V, K]``.
    """

    def __init__(self, k: int = 5) -> None:
        super().__init__()
        if k < 1:
            raise ValueError(f"Select needs K >= 1, got {k}")
        self.k = k

    def reset_parameters(self) -> None:
        """Select has no parameters."""

    def forward(self, b: torch.Tensor, mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return masked_topk(b, mask, self.k)

    def __repr__(self) -> str:
        return f"Select(k={self.k})"
