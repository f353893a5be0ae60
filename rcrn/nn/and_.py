"""And: soft logical AND as a minimum (paper Eq. 7)."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["And"]


class And(nn.Module):
    r"""Soft logical AND of confidences: their minimum per graph (paper Eq. 7).

    .. math::
        p = \min_{i} \min_{t} p^t_i

    over the nodes :math:`i` of every graph and all inputs :math:`t` (image-text
    matching: :math:`P(y=1 \mid I, L) = \min_i \min(p^{\rm bp}_i, p^{\rm td}_i)`).  A
    graph without nodes gets :math:`+\infty`.  And has no settings.

    Shapes:
        - **input:** confidences: a list of :math:`T` tensors :math:`(V)`, node_batch
          :math:`(V)` (the graph of every node), num_graphs :math:`B`
        - **output:** :math:`(B)`
    """

    def reset_parameters(self) -> None:
        """And has no parameters."""

    def forward(self, confidences: list[torch.Tensor], node_batch: torch.Tensor,
                num_graphs: int) -> torch.Tensor:
        p = torch.stack(confidences, dim=0).amin(dim=0)
        out = p.new_full((num_graphs,), float("inf"))
        return out.scatter_reduce(0, node_batch, p, reduce="amin", include_self=True)

    def __repr__(self) -> str:
        return "And(min)"
