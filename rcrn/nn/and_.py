"""And: soft logical AND as a minimum (paper Eq. 7)."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["And", "EdgeAnd"]


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


class EdgeAnd(nn.Module):
    r"""``p = min_{(i -> j)} max(p^bp_i, p^td_j)`` over the edges of every graph.

    A relation ``i -> j`` (parent i, child j) is judged wrong only when both nodes
    it feeds disagree: the parent's bottom-up confidence (which receives the
    relation's message going up) and the child's top-down one (which receives it
    going down).  A single noisy node confidence of a matched pair then no longer
    decides the pair, so the AND does not fall with the number of nodes the way a
    minimum over all of them does; a mismatched relation lowers both ends.  A
    graph without relations takes ``min(p^bp_root, p^td_root)``.

    Shapes: ``p_up [V]``, ``p_down [V]``, ``edge_index [2, E]`` (parent, child),
    ``node_batch [V]``, ``root [B]`` -> ``[B]``.
    """

    def reset_parameters(self) -> None:
        """EdgeAnd has no parameters."""

    def forward(self, p_up: torch.Tensor, p_down: torch.Tensor, edge_index: torch.Tensor,
                node_batch: torch.Tensor, root: torch.Tensor) -> torch.Tensor:
        parent, child = edge_index[0], edge_index[1]
        per_edge = torch.maximum(p_up[parent], p_down[child])
        out = torch.minimum(p_up[root], p_down[root])
        has_edge = torch.zeros_like(out, dtype=torch.bool)
        has_edge[node_batch[parent]] = True
        edges = out.new_full(out.shape, float("inf")).scatter_reduce(
            0, node_batch[parent], per_edge, reduce="amin", include_self=True)
        return torch.where(has_edge, edges, out)

    def __repr__(self) -> str:
        return "EdgeAnd(min over edges of max(parent up, child down))"
