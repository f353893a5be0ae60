"""Select: top-K pruning of a belief (paper Eq. 3)."""

from __future__ import annotations

import torch
from torch import nn

from rcrn.nn.functional import masked_topk

__all__ = ["Select"]


class Select(nn.Module):
    r"""Top-K pruning of a belief (paper Eq. 3).

    .. math::
        \mathbf{b}^{\rm sel} = \mathrm{F_{topk}}(\mathbf{b})

    the :math:`K` largest valid entries of every row, sorted in decreasing order.  Rows
    with fewer than :math:`K` valid entries give masked slots (value 0).

    Args:
        k (int, optional): :math:`K`, at least 1 (it may exceed the row length).
            (default: :obj:`5`)

    Shapes:
        - **input:** b :math:`(V, S)`, mask :math:`(V, S)`
        - **output:** values :math:`(V, K)`, slot positions :math:`(V, K)` (into
          :math:`S`), slot mask :math:`(V, K)`
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
