"""GateSum: gated combination of local correspondences (paper Eq. 2)."""

from __future__ import annotations

import torch
from torch import nn

from rcrn.nn.functional import f_norm
from rcrn.nn.gate import Gate

__all__ = ["GateSum"]


class GateSum(nn.Module):
    r"""``b = F_norm(sum_t sigmoid(W_t^T [h, c]) b_t) + floor`` with signed F_norm (to [0, 1]).

    Shapes: ``beliefs`` a list of ``T`` tensors ``[V, S]``, ``phrase [V, H]``,
    ``context [V, C]``, ``mask [V, S]`` -> ``([V, S], β [V, T])``.
    """

    def __init__(self, phrase_dim: int, context_dim: int, inputs: int = 2,
                 mode: str = "full", floor: float = 0.0) -> None:
        super().__init__()
        self.gate = Gate(phrase_dim, context_dim, inputs, mode)
        self.floor = floor

    def reset_parameters(self) -> None:
        self.gate.reset_parameters()

    def forward(self, beliefs: list[torch.Tensor], phrase: torch.Tensor, context: torch.Tensor,
                mask: torch.Tensor, padded: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """``padded [V]`` marks nodes whose row has padding slots beyond ``S`` where every
        input belief is -1 (the release's 126 slots): their sum ``-sum_t β_t`` then
        bounds the divisor of F_norm from below."""
        beta = self.gate(phrase, context)
        total = sum(beta[:, t:t + 1] * b for t, b in enumerate(beliefs))
        peak = None
        if padded is not None:
            peak = torch.where(padded, beta.sum(-1), torch.zeros_like(beta[:, 0]))[:, None]
        return f_norm(total, mask, signed=True, peak_floor=peak, floor=self.floor), beta

    def __repr__(self) -> str:
        return f"GateSum(inputs={self.gate.outputs}, gate={self.gate.mode})"
