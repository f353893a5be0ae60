"""GateProd: message update by a gated product (paper Eq. 5-6)."""

from __future__ import annotations

import torch
from torch import nn

from rcrn.nn.functional import f_norm
from rcrn.nn.gate import Gate

__all__ = ["GateProd"]


class GateProd(nn.Module):
    r"""``b'' = F_norm(b ∘ (b')^β)``, ``β = sigmoid(W_rel^T [h, c])``.

    ``b'`` arrives in log space from Aggregate, so ``(b')^β = exp(β log b')``.

    Shapes: ``b [V, S]``, ``log_agg [V, S]``, ``phrase [V, H]``, ``context [V, C]``,
    ``mask [V, S]`` -> ``([V, S], β [V])``.
    """

    def __init__(self, phrase_dim: int, context_dim: int, mode: str = "full") -> None:
        super().__init__()
        self.gate = Gate(phrase_dim, context_dim, 1, mode)

    def reset_parameters(self) -> None:
        self.gate.reset_parameters()

    def forward(self, b: torch.Tensor, log_agg: torch.Tensor, phrase: torch.Tensor,
                context: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        beta = self.gate(phrase, context)
        return f_norm(b * torch.exp(beta * log_agg), mask), beta.squeeze(-1)

    def __repr__(self) -> str:
        return f"GateProd(gate={self.gate.mode})"
