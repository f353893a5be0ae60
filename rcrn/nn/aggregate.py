"""Aggregate: product over context nodes of relation-aligned messages (paper Eq. 4)."""

from __future__ import annotations

import torch
from torch_geometric.nn import MessagePassing

__all__ = ["Aggregate"]


class Aggregate(MessagePassing):
    r"""Product over a node's context nodes of their relation-aligned messages (paper Eq. 4).

    .. math::
        \log \mathbf{b}^{\rm agg}_i = \sum_{j \in \mathrm{Ctx}(i)}
        \log\left(\mathbf{A}_{ij} \mathbf{b}^{\rm sel}_j + \epsilon\right)

    The product of Eq. 4 is taken as a sum in log space (stable for many children and
    for zero relation scores).  Each edge :math:`j \to i` carries the message
    :math:`\mathbf{A}_{ij} \mathbf{b}^{\rm sel}_j` (one value per slot of the target);
    messages are summed at the target in log space.  Nodes without context get 0
    (:math:`\mathbf{b}^{\rm agg} = 1`).

    Args:
        eps (float, optional): :math:`\epsilon`, added to every message before its
            logarithm. (default: :obj:`1e-6`)
        reduce (str, optional): How a target combines its context nodes' log messages:
            :obj:`"sum"` (the product of Eq. 4) or :obj:`"min"` (the weakest message per
            slot: a soft AND over the context nodes, which more context nodes that agree
            lower little, unlike the product). (default: :obj:`"sum"`)

    Shapes:
        - **input:** relation scores A :math:`(E, S, K)`, selected beliefs b_sel
          :math:`(E, K)`, edge indices :math:`(2, E)` as (context node, target node),
          num_nodes :math:`V`
        - **output:** :math:`\log \mathbf{b}^{\rm agg}` :math:`(V, S)`
    """

    REDUCE = ("sum", "min")

    def __init__(self, eps: float = 1e-6, reduce: str = "sum") -> None:
        if reduce not in self.REDUCE:
            raise ValueError(f"Aggregate reduce must be one of {self.REDUCE}, got {reduce!r}")
        super().__init__(aggr=reduce, node_dim=0)
        self.eps, self.reduce = eps, reduce

    def reset_parameters(self) -> None:
        """Aggregate has no parameters."""

    def forward(self, A: torch.Tensor, b_sel: torch.Tensor, edge_index: torch.Tensor,
                num_nodes: int) -> torch.Tensor:
        log_msg = torch.log(torch.einsum("esk,ek->es", A, b_sel) + self.eps)
        return self.propagate(edge_index, log_msg=log_msg, size=(num_nodes, num_nodes))

    def message(self, log_msg: torch.Tensor) -> torch.Tensor:
        return log_msg

    def __repr__(self) -> str:
        return f"Aggregate(log_space=True, eps={self.eps}, reduce={self.reduce!r})"
