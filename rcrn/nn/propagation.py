"""Belief propagation over a batch of trees: one pass, bottom-up or top-down (paper 4.2.1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from rcrn.nn.aggregate import Aggregate
from rcrn.nn.gate import GateProd
from rcrn.nn.selection import Select

__all__ = ["Belief", "Propagation", "RelationScores"]


@dataclass
class Belief:
    """Beliefs of every node over a set of slots (regions).

    Attributes:
        values: ``[V, S]`` belief of every node in every slot.
        slots: ``[V, S]`` batch-global region index of every slot.
        mask: ``[V, S]`` valid slots.
        updated: ``[V]`` nodes a propagation step has updated (kept only when the
            model emulates the release's padding slots, ``release_slots > 0``).
    """

    values: torch.Tensor
    slots: torch.Tensor
    mask: torch.Tensor
    updated: torch.Tensor | None = None


#: ``(level edges [E_d], target slots [E_d, S], context slots [E_d, K], subject is the
#: target [E_d]) -> A [E_d, S, K]``: the relation score of every (target slot, context
#: slot) pair of the edges of one tree level (e.g. a Relation Sim over the edges' phrases).
RelationScores = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
                          torch.Tensor]


class Propagation(nn.Module):
    r"""One pass of message passing over a batch of trees, level by level (paper 4.2.1).

    Bottom-up (``"up"``) a parent receives from its children, deepest level first;
    top-down (``"down"``) a child receives from its parent, root first.  At each level
    every sender's belief is pruned to its top ``k`` slots (Select), every receiver
    slot scores every sent slot (``A``, from the ``scores`` callable), the messages
    ``A b^sel`` are combined in log space (Aggregate, Eq. 4) and the gate merges them
    into the receivers' beliefs (GateProd, Eq. 5-6):
    ``b_i <- b_i * exp(β_i * log b^agg_i)``.

    The module has no parameters of its own: the relation scores, the gate and the
    aggregation are given to :meth:`forward`, so one propagation serves any model whose
    parts compute them (RCRN's Relation Sim and its named GateProd modules).

    Args:
        k: slots a sender sends (Select's top-K).
        context: ``"propagated"`` (a sender's top-K slots by the belief propagated so
            far) or ``"local"`` (by its belief before the pass, the release's rule); the
            values sent are the propagated ones either way.
        message_norm: ``"max"`` divides every sender's values by their largest before
            sending; ``"none"`` sends them as they are.
        track_updates: keep :attr:`Belief.updated`, the nodes the pass updated (the
            release's padding emulation reads it).

    Shapes:
        ``forward(belief [V, S], ...)`` -> ``(Belief [V, S], [(nodes [n_d], β [n_d, 1])])``.
    """

    def __init__(self, k: int, context: str = "propagated", message_norm: str = "none",
                 track_updates: bool = False) -> None:
        super().__init__()
        if context not in ("propagated", "local"):
            raise ValueError(f"context must be 'propagated' or 'local', got {context!r}")
        if message_norm not in ("none", "max"):
            raise ValueError(f"message_norm must be 'none' or 'max', got {message_norm!r}")
        self.select = Select(k)
        self.context, self.message_norm = context, message_norm
        self.track_updates = track_updates

    def reset_parameters(self) -> None:
        """Propagation has no parameters."""

    def forward(self, x: Belief, direction: str, batch: Any, scores: RelationScores,
                gate: GateProd, aggregate: Aggregate, phrase: torch.Tensor,
                context: torch.Tensor,
                on_scores: Callable[[int, torch.Tensor, torch.Tensor], None] | None = None
                ) -> tuple[Belief, list[tuple[torch.Tensor, torch.Tensor]]]:
        """One pass over ``batch``'s trees (a ``GroundingBatch``: ``levels``,
        ``edge_index`` (parent, child), ``edge_parent_is_subject``, ``level_parents``).

        Args:
            x: the beliefs before the pass.
            direction: ``"up"`` or ``"down"``.
            scores: the relation scores of one level's edges (:data:`RelationScores`).
            gate: the GateProd of this pass; ``phrase [V, H]`` and ``context [V, C]``
                are its language and belief-context inputs.
            aggregate: how a receiver combines its senders' log messages.
            on_scores: called with ``(level, level edges, A)`` for every level.

        Returns:
            ``(beliefs after the pass, [(updated nodes, their β)] level by level)``.
        """
        if direction not in ("up", "down"):
            raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
        b = x.values
        up = direction == "up"
        order = range(len(batch.levels) - 1, -1, -1) if up else range(len(batch.levels))
        betas = []
        updated = None
        if self.track_updates:
            updated = (x.updated.clone() if x.updated is not None
                       else torch.zeros(b.shape[0], dtype=torch.bool, device=b.device))
        for d in order:
            lv = batch.levels[d]
            parent, child = batch.edge_index[0, lv], batch.edge_index[1, lv]
            tgt, src = (parent, child) if up else (child, parent)
            if self.context == "local":
                _, sel_pos, sel_mask = self.select(x.values[src], x.mask[src])
                sel_val = b[src].gather(1, sel_pos).masked_fill(~sel_mask, 0.0)
            else:
                sel_val, sel_pos, _ = self.select(b[src], x.mask[src])
            if self.message_norm == "max":
                # each sender's largest belief among those it sends (with a local context
                # the slots are in the order of the local belief, not of these values)
                sel_val = sel_val / sel_val.amax(-1, keepdim=True).clamp(min=1e-12)
            cols = x.slots[src].gather(1, sel_pos)
            rows = x.slots[tgt]
            subj = batch.edge_parent_is_subject[lv]
            A = scores(lv, rows, cols, subj if up else ~subj)
            if on_scores is not None:
                on_scores(d, lv, A)
            log_agg = aggregate(A, sel_val, torch.stack([src, tgt]), b.shape[0])
            nodes = batch.level_parents[d] if up else child
            new, beta = gate(x.values[nodes], log_agg[nodes], phrase[nodes], context[nodes],
                             x.mask[nodes])
            betas.append((nodes, beta))
            b = b.index_copy(0, nodes, new)
            if updated is not None:
                updated[nodes] = True
        return Belief(b, x.slots, x.mask, updated), betas

    def extra_repr(self) -> str:
        return (f"k={self.select.k}, context={self.context!r}, "
                f"message_norm={self.message_norm!r}, track_updates={self.track_updates}")
