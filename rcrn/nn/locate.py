"""Locate: the position of the smallest value of every group (paper Table 1)."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["Locate"]


class Locate(nn.Module):
    r"""The position of the smallest valid entry of every row (paper Table 1).

    .. math::
        i = \arg\min(\mathbf{p})

    Grounding is ``Locate(-b_root)``; the mismatched relation is ``Locate(d)`` over the
    Compare scores of a graph's edges (Eq. 8).  Locate has no settings.

    Shapes:
        - **input:** p :math:`(B, S)`, mask :math:`(B, S)`
        - **output:** :math:`(B)` (-1 for rows with no valid entry)
    """

    def reset_parameters(self) -> None:
        """Locate has no parameters."""

    def forward(self, p: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if p.shape[-1] == 0:
            return torch.full(p.shape[:-1], -1, dtype=torch.long, device=p.device)
        idx = p.masked_fill(~mask, float("inf")).argmin(dim=-1)
        return idx.masked_fill(~mask.any(dim=-1), -1)

    def __repr__(self) -> str:
        return "Locate()"
