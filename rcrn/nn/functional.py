"""Functions shared by the primitives."""

from __future__ import annotations

import torch

__all__ = ["f_norm", "masked_topk", "gate_context"]


def f_norm(x: torch.Tensor, mask: torch.Tensor, signed: bool = False) -> torch.Tensor:
    """F_norm of the paper (appendix A.2).

    Divides each row by its largest absolute value over the valid entries when
    that value exceeds 1; with ``signed=True`` (local correspondences, range
    [-1, 1]) the result is then mapped linearly to [0, 1].  Invalid entries are 0.

    Args:
        x: ``[..., S]`` values.
        mask: ``[..., S]`` bool, True for valid entries.
        signed: map [-1, 1] to [0, 1] after rescaling.
    """
    x = x.masked_fill(~mask, 0.0)
    peak = x.abs().amax(dim=-1, keepdim=True).clamp(min=1.0)
    x = x / peak
    if signed:
        x = (x + 1.0) * 0.5
    return x.masked_fill(~mask, 0.0)


def masked_topk(x: torch.Tensor, mask: torch.Tensor, k: int
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top-``k`` valid entries of every row, sorted in decreasing order.

    Rows with fewer than ``k`` valid entries are padded: value 0, index 0,
    slot mask False.  ``k`` larger than the row length is allowed.

    Returns:
        ``(values [.., k], indices [.., k], slot_mask [.., k])``.
    """
    size = x.shape[-1]
    kk = min(k, size)
    filled = x.masked_fill(~mask, float("-inf"))
    values, indices = filled.topk(kk, dim=-1, largest=True, sorted=True)
    valid = torch.isfinite(values)
    values = values.masked_fill(~valid, 0.0)
    indices = indices.masked_fill(~valid, 0)
    if kk < k:
        pad = k - kk
        values = torch.cat([values, values.new_zeros(*values.shape[:-1], pad)], dim=-1)
        indices = torch.cat([indices, indices.new_zeros(*indices.shape[:-1], pad)], dim=-1)
        valid = torch.cat([valid, valid.new_zeros(*valid.shape[:-1], pad)], dim=-1)
    return values, indices, valid


def gate_context(phrase: torch.Tensor, beliefs: list[torch.Tensor], mask: torch.Tensor,
                 k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs of every β gate: the phrase state and the detached sorted top-``k`` beliefs.

    Gradients are cut on the belief inputs (the paper's β takes them as
    context, not as something to optimise through).

    Returns:
        ``(phrase [V, H], context [V, k * len(beliefs)])``.
    """
    tops = [masked_topk(b.detach(), mask, k)[0] for b in beliefs]
    return phrase, torch.cat(tops, dim=-1)
