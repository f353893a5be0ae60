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
    r"""``p = min_{(i -> j)} max(p^bp_i, p^td_j)`` over the edges of every graph
    (``ends="max"``), or of ``sqrt(p^bp_i p^td_j)`` (``ends="mean"``).

    A relation ``i -> j`` (parent i, child j) is judged wrong only when both nodes
    it feeds disagree: the parent's bottom-up confidence (which receives the
    relation's message going up) and the child's top-down one (which receives it
    going down).  A single noisy node confidence of a matched pair then no longer
    decides the pair, so the AND does not fall with the number of nodes the way a
    minimum over all of them does; a mismatched relation lowers both ends.  A
    graph without relations takes ``min(p^bp_root, p^td_root)``.

    With ``ends="mean"`` a relation's truth is the geometric mean of the two
    judgements instead: one end that is sure the relation holds can outweigh a
    doubtful other end, but two doubtful ends (what a mismatched relation gives)
    stay low -- between the maximum above and the minimum over every node.

    Shapes: ``p_up [V]``, ``p_down [V]``, ``edge_index [2, E]`` (parent, child),
    ``node_batch [V]``, ``root [B]`` -> ``[B]``.
    """

    def __init__(self, ends: str = "max") -> None:
        super().__init__()
        if ends not in ("max", "mean"):
            raise ValueError(f"EdgeAnd ends must be 'max' or 'mean', got {ends!r}")
        self.ends = ends

    def reset_parameters(self) -> None:
        """EdgeAnd has no parameters."""

    def forward(self, p_up: torch.Tensor, p_down: torch.Tensor, edge_index: torch.Tensor,
                node_batch: torch.Tensor, root: torch.Tensor) -> torch.Tensor:
        parent, child = edge_index[0], edge_index[1]
        if self.ends == "max":
            per_edge = torch.maximum(p_up[parent], p_down[child])
        else:
            per_edge = (p_up[parent] * p_down[child]).clamp(min=1e-12).sqrt()
        out = torch.minimum(p_up[root], p_down[root])
        has_edge = torch.zeros_like(out, dtype=torch.bool)
        has_edge[node_batch[parent]] = True
        edges = out.new_full(out.shape, float("inf")).scatter_reduce(
            0, node_batch[parent], per_edge, reduce="amin", include_self=True)
        return torch.where(has_edge, edges, out)

    def __repr__(self) -> str:
        what = "max" if self.ends == "max" else "geometric mean"
        return f"EdgeAnd(min over edges of {what}(parent up, child down))"
