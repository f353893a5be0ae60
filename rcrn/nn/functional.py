"""Functions shared by the primitives."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

__all__ = ["f_norm", "masked_topk", "gate_context", "uninitialized"]


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
    """Inputs of every β gate: the phrase state and the sorted top-``k`` beliefs.

    The gates cut the gradients on the belief context themselves (:class:`~rcrn.nn.Gate`:
    the paper's β takes the beliefs as context, not as something to optimise through);
    ``detach_phrase`` cuts them on the phrase state too (the paper's appendix D.1.1 and
    the release cut both).  A node with fewer than ``k`` valid regions reads ``pad`` in
    the missing slots (the release's similarities are -1 there).

    Returns:
        ``(phrase [V, H], context [V, k * len(beliefs)])``.
    """
    tops = [masked_topk(b, mask, k, pad)[0] for b in beliefs]
    return (phrase.detach() if detach_phrase else phrase), torch.cat(tops, dim=-1)


@contextmanager
def uninitialized(module: nn.Module) -> Iterator[None]:
    """Build ``module``'s layers inside the block without drawing their initial values.

    The layers are created on the meta device (no storage, no random draws) and every
    parameter and buffer of ``module`` gets empty storage on the current default device
    when the block ends; ``module.reset_parameters()`` must then initialise them all.  A
    module whose ``__init__`` ends with ``reset_parameters()`` so draws each initial value
    once, in the order its ``reset_parameters()`` visits the layers.
    """
    device = torch.empty(0).device
    with torch.device("meta"):
        yield
    module.to_empty(device=device)
