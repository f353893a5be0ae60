"""The β gates and the gated combinations of beliefs (paper Eq. 2, 5-6; Table 1, 3).

:class:`Gate` computes β from a node's phrase state and belief context;
:class:`GateSum` weighs local correspondences with it (message initialisation, Eq. 2)
and :class:`GateProd` raises an aggregated message to it (message update, Eq. 5-6).
"""

from __future__ import annotations

import torch
from torch import nn

from rcrn.nn.functional import f_norm

__all__ = ["Gate", "GateSum", "GateProd", "GATE_MODES"]

GATE_MODES = ("full", "lang", "ctx", "const")


class Gate(nn.Module):
    r"""The β gate of :class:`GateSum` and :class:`GateProd` (paper Eq. 2 and 5).

    .. math::
        \beta_i = \mathrm{sigmoid}\left(\mathbf{W}^{\top}
        [\mathbf{h}_i, \mathbf{c}_i]\right) \in (0, 1)^{\text{outputs}}

    where :math:`\mathbf{h}_i` is node :math:`i`'s phrase state and :math:`\mathbf{c}_i`
    its belief context (its sorted top-K local scores,
    :func:`~rcrn.nn.functional.gate_context`).  No gradient flows into
    :math:`\mathbf{c}_i`: β takes the beliefs as context, not as something to optimise
    through (the caller decides whether the phrase state's gradient is cut too).

    Args:
        phrase_dim (int): Size :math:`H` of the phrase state :math:`\mathbf{h}`.
        context_dim (int): Size :math:`C` of the belief context :math:`\mathbf{c}`.
        outputs (int, optional): Number of gates per node. (default: :obj:`1`)
        mode (str, optional): What β reads (the ablations of paper Table 3):
            :obj:`"full"` both :math:`\mathbf{h}` and :math:`\mathbf{c}` (the paper),
            :obj:`"lang"` only :math:`\mathbf{h}` (no context in β), :obj:`"ctx"` only
            :math:`\mathbf{c}` (no language in β), :obj:`"const"` one learned constant
            :math:`\mathrm{sigmoid}(b)` per gate. (default: :obj:`"full"`)

    Shapes:
        - **input:** phrase :math:`(V, H)`, context :math:`(V, C)`
        - **output:** β :math:`(V, \text{outputs})`
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
        # built initialised, then drawn again by reset_parameters(): seeded models keep
        # the initial values (and the random stream) they always had
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
        context = context.detach()
        x = {"full": lambda: torch.cat([phrase, context], dim=-1), "lang": lambda: phrase,
             "ctx": lambda: context}[self.mode]()
        return torch.sigmoid(self.linear(x))

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(mode={self.mode}, phrase_dim={self.phrase_dim}, "
                f"context_dim={self.context_dim}, outputs={self.outputs})")


class GateSum(nn.Module):
    r"""Gated sum of local correspondences: a node's local belief (paper Eq. 2).

    .. math::
        \mathbf{b}^{\rm loc}_i = \mathrm{F_{norm}}\Big(\sum_t \beta^t_i
        \mathbf{b}^t_i\Big) + \text{floor}, \qquad
        \beta^t_i = \mathrm{sigmoid}\left(\mathbf{W}_t^{\top}
        [\mathbf{h}_i, \mathbf{c}_i]\right)

    with the signed :func:`~rcrn.nn.functional.f_norm`: the sum is rescaled into
    :math:`[-1, 1]` and mapped linearly to :math:`[0, 1]`, and ``floor`` is added to the
    valid entries.  The :math:`T` gates are one :class:`Gate` with :math:`T` outputs.

    Args:
        phrase_dim (int): Size :math:`H` of the phrase state.
        context_dim (int): Size :math:`C` of the belief context.
        inputs (int, optional): Number :math:`T` of beliefs combined. (default: :obj:`2`)
        mode (str, optional): The gate's inputs (:class:`Gate`). (default: :obj:`"full"`)
        floor (float, optional): Added to the valid entries at the end (the release adds
            :obj:`1e-6` so that their logarithm stays finite). (default: :obj:`0.0`)

    Shapes:
        - **input:** beliefs: a list of :math:`T` tensors :math:`(V, S)` in :math:`[-1, 1]`,
          phrase :math:`(V, H)`, context :math:`(V, C)`, mask :math:`(V, S)`,
          padded :math:`(V)` (optional)
        - **output:** belief :math:`(V, S)` in :math:`[0, 1]` (0 at masked slots),
          β :math:`(V, T)`
    """

    def __init__(self, phrase_dim: int, context_dim: int, inputs: int = 2,
                 mode: str = "full", floor: float = 0.0) -> None:
        super().__init__()
        # the gate initialises itself (Gate.__init__ ends with reset_parameters()); a
        # second reset here would draw its weights once more and shift the random stream
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
        g = self.gate
        return (f"GateSum(phrase_dim={g.phrase_dim}, context_dim={g.context_dim}, "
                f"inputs={g.outputs}, gate={g.mode}, floor={self.floor:g})")


class GateProd(nn.Module):
    r"""Gated product of a belief and an aggregated message: message update (paper Eq. 5-6).

    .. math::
        \mathbf{b}''_i = \mathrm{F_{norm}}\left(\mathbf{b}_i \circ
        (\mathbf{b}'_i)^{\beta_i}\right), \qquad
        \beta_i = \mathrm{sigmoid}\left(\mathbf{W}_{\rm rel}^{\top}
        [\mathbf{h}_i, \mathbf{c}_i]\right)

    :math:`\mathbf{b}'` arrives in log space from :class:`~rcrn.nn.Aggregate`, so
    :math:`(\mathbf{b}')^{\beta} = \exp(\beta \log \mathbf{b}')`; F_norm is the unsigned
    :func:`~rcrn.nn.functional.f_norm`.

    Args:
        phrase_dim (int): Size :math:`H` of the phrase state.
        context_dim (int): Size :math:`C` of the belief context.
        mode (str, optional): The gate's inputs (:class:`Gate`). (default: :obj:`"full"`)

    Shapes:
        - **input:** belief b :math:`(V, S)`, log_agg :math:`\log \mathbf{b}'` :math:`(V, S)`,
          phrase :math:`(V, H)`, context :math:`(V, C)`, mask :math:`(V, S)`
        - **output:** belief :math:`(V, S)` (0 at masked slots), β :math:`(V)`
    """

    def __init__(self, phrase_dim: int, context_dim: int, mode: str = "full") -> None:
        super().__init__()
        # the gate initialises itself; see GateSum
        self.gate = Gate(phrase_dim, context_dim, 1, mode)

    def reset_parameters(self) -> None:
        self.gate.reset_parameters()

    def forward(self, b: torch.Tensor, log_agg: torch.Tensor, phrase: torch.Tensor,
                context: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        beta = self.gate(phrase, context)
        return f_norm(b * torch.exp(beta * log_agg), mask), beta.squeeze(-1)

    def __repr__(self) -> str:
        g = self.gate
        return f"GateProd(phrase_dim={g.phrase_dim}, context_dim={g.context_dim}, gate={g.mode})"
