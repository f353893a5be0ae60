"""Aggregate: product over context nodes of relation-aligned messages (paper Eq. 4)."""

from __future__ import annotations

import torch
from torch_geometric.nn import MessagePassing

__all__ = ["Aggregate"]


class Aggregate(MessagePassing):
    r"""``log b^agg_i = sum_{j in Ctx(i)} log(A_ij b^sel_j + eps)``.

    The product of Eq. 4 is taken as a sum in log space (stable for many
    children and for zero relation scores).  Each edge ``j -> i`` carries the
    message ``A_ij b^sel_j`` (``[S]`` over the target's slots); messages are
    summed at the target in log space.  Nodes without context get 0 (b^agg = 1).

    ``reduce`` chooses how a target combines its context nodes' log messages:
    ``"sum"`` (the product of Eq. 4) or ``"min"`` (the weakest message per slot: a soft AND over the context nodes,
    which more context nodes that agree lower little, unlike the product).

    Shapes: ``A [E, S, K]``, ``b_sel [E, K]``, ``edge_index [2, E]`` as
    (context node, target node) -> ``[V, S]``.
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
