"""Compare: confidence difference across every edge (paper Eq. 8)."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["Compare"]


class Compare(nn.Module):
    r"""Confidence difference across every edge (paper Eq. 8).

    .. math::
        d_{ij} = p_i - p_j

    for every edge :math:`(i, j)` (:math:`i` the parent, :math:`j` the child); with
    ``reverse`` :math:`p_j - p_i`.  The mismatch score of Eq. 8 is
    ``Compare(p^bp) + Compare(reverse=True)(p^td)``: a mismatched relation lowers the
    receiving node's confidence in each pass, and Locate picks the smallest sum.

    Args:
        reverse (bool, optional): Child minus parent instead of parent minus child.
            (default: :obj:`False`)

    Shapes:
        - **input:** confidences p :math:`(V)`, edge indices :math:`(2, E)` as
          (parent, child)
        - **output:** :math:`(E)`
    """

    def __init__(self, reverse: bool = False) -> None:
        super().__init__()
        self.reverse = reverse

    def reset_parameters(self) -> None:
        """Compare has no parameters."""

    def forward(self, p: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        d = p[edge_index[0]] - p[edge_index[1]]
        return -d if self.reverse else d

    def __repr__(self) -> str:
        return f"Compare({'child - parent' if self.reverse else 'parent - child'})"
