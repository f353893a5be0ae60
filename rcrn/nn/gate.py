"""The β gates of GateSum and GateProd, with the ablation modes of paper Table 3."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["Gate", "GATE_MODES"]

GATE_MODES = ("full", "lang", "ctx", "const")


class Gate(nn.Module):
    r"""β = sigmoid(W^T [h, c]) for ``outputs`` gates per node.

    Modes: ``full`` uses the phrase state ``h`` and the belief context ``c``
    (the paper); ``lang`` only ``h`` (no context in β); ``ctx`` only ``c`` (no
    language in β); ``const`` one learned constant per gate.

    Shapes: ``h [V, H]``, ``c [V, C]`` -> ``[V, outputs]``.
    """

    def __init__(self, phrase_dim: int, context_dim: int, outputs: int = 1,
                 mode: str = "full") -> None:
        super().__init__()
        if mode not in GATE_MODES:
            raise ValueError(f"gate mode {mode!r} is not one of {GATE_MODES}")
        self.mode, self.phrase_dim, self.context_dim, self.outputs = (
            mode, phrase_dim, context_dim, outputs)
        in_dim = {"full": phrase_dim + context_dim, "lang": phrase_dim, "ctx": context_dim,
                  "const": 0}[mode]
        self.linear = nn.Linear(in_dim, outputs) if in_dim else None
        self.bias = nn.Parameter(torch.zeros(outputs)) if in_dim == 0 else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.linear is not None:
            self.linear.reset_parameters()
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, phrase: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        if self.mode == "const":
            return torch.sigmoid(self.bias).expand(phrase.shape[0], -1)
        x = {"full": lambda: torch.cat([phrase, context], dim=-1), "lang": lambda: phrase,
             "ctx": lambda: context}[self.mode]()
        return torch.sigmoid(self.linear(x))

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(mode={self.mode}, phrase_dim={self.phrase_dim}, "
                f"context_dim={self.context_dim}, outputs={self.outputs})")
