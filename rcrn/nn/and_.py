"""And: soft logical AND as a minimum (paper Eq. 7)."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["And"]


class And(nn.Module):
    r"""``p = min_i min_t p^t_i`` over the nodes of every graph and all inputs.

    Shapes: a list of ``[V]`` confidences, ``node_batch [V]`` -> ``[B]``.
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
