"""Functions shared by the primitives."""

from __future__ import annotations

import torch

__all__ = ["f_norm", "masked_topk", "gate_context"]


def f_norm(x: torch.Tensor, mask: torch.Tensor, signed: bool = False,
           peak_floor: torch.Tensor | None = None, floor: float = 0.0) -> torch.Tensor:
    """F_norm of the paper (appendix A.2).

    Divides each row by its largest absolute value over the valid entries when
    that value exceeds 1; with ``signed=True`` (local correspondences, range
    [-1, 1]) the result is then mapped linearly to [0, 1] and ``floor`` added.
    Invalid entries are 0.

    Args:
        x: ``[..., S]`` values.
        mask: ``[..., S]`` bool, True for valid entries.
        signed: map [-1, 1] to [0, 1] after rescaling.
        peak_floor: ``[..., 1]`` a lower bound of the divisor besides 1 (the absolute
            value of entries the row has beyond ``S``, such as padding slots).
        floor: added to the valid entries at the end (the release adds ``1e-6`` to
            the local beliefs so that their logarithm stays finite).
    """
    x = x.masked_fill(~mask, 0.0)
    peak = x.abs().amax(dim=-1, keepdim=True).clamp(min=1.0)
    if peak_floor is not None:
        peak = torch.maximum(peak, peak_floor)
    x = x / peak
    if signed:
        x = (x + 1.0) * 0.5 + floor
    return x.masked_fill(~mask, 0.0)


def masked_topk(x: torch.Tensor, mask: torch.Tensor, k: int, pad: float = 0.0
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Top-``k`` valid entries of every row, sorted in decreasing order.

    Rows with fewer than ``k`` valid entries are padded: value ``pad``, index 0,
    slot mask False.  ``k`` larger than the row length is allowed.

    Returns:
        ``(values [.., k], indices [.., k], slot_mask [.., k])``.
    """
    size = x.shape[-1]
    kk = min(k, size)
    filled = x.masked_fill(~mask, float("-inf"))
    values, indices = filled.topk(kk, dim=-1, largest=True, sorted=True)
    valid = torch.isfinite(values)
    values = values.masked_fill(~valid, pad)
    indices = indices.masked_fill(~valid, 0)
    if kk < k:
        more = k - kk
        values = torch.cat([values, values.new_full((*values.shape[:-1], more), pad)], dim=-1)
        indices = torch.cat([indices, indices.new_zeros(*indices.shape[:-1], more)], dim=-1)
        valid = torch.cat([valid, valid.new_zeros(*valid.shape[:-1], more)], dim=-1)
    return values, indices, valid


def gate_context(phrase: torch.Tensor, beliefs: list[torch.Tensor], mask: torch.Tensor,
                 k: int, detach_phrase: bool = False, pad: float = 0.0
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs of every β gate: the phrase state and the detached sorted top-``k`` beliefs.

    Gradients are cut on the belief inputs (the paper's β takes them as
    context, not as something to optimise through), and on the phrase state with
    ``detach_phrase`` (the paper's appendix D.1.1 and the release cut both).  A node
    with fewer than ``k`` valid regions reads ``pad`` in the missing slots (the
    release's similarities are -1 there).

    Returns:
        ``(phrase [V, H], context [V, k * len(beliefs)])``.
    """
    tops = [masked_topk(b.detach(), mask, k, pad)[0] for b in beliefs]
    return (phrase.detach() if detach_phrase else phrase), torch.cat(tops, dim=-1)
