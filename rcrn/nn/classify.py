"""Classify: confidence that a phrase matches some region."""

from __future__ import annotations

import torch
from torch import nn

from rcrn.nn.functional import masked_topk, uninitialized
from rcrn.nn.sim import MLP, batch_norm

__all__ = ["Classify"]


class Classify(nn.Module):
    r"""Confidence that a node's phrase matches some region (paper 4.2.1, appendix A.2).

    .. math::
        p_i = \mathrm{sigmoid}\left(\mathrm{MLP_{match}}\left(
        \mathrm{sort}(\mathrm{top}_K(\mathbf{b}_i))\right)\right)

    With ``log_input=True`` the MLP reads :math:`\log(\mathrm{sort}(\mathrm{top}_K
    (\mathbf{b}_i)) + \epsilon)` instead: beliefs are products of messages and can all
    be small, and on a log scale the absolute level of a belief stays visible to the MLP.

    ``layers="release"`` is the release's readout: ``Linear(K, hidden) -> BatchNorm ->
    ReLU -> Dropout -> Linear(hidden, 1)`` (Xavier-normal weights, zero biases), and
    the slots of a node with fewer than :math:`K` valid regions read a learned pad value
    (``"plain"``: ``Linear -> ReLU -> Linear``, pads read 0).

    ``forward``'s ``floor_rows`` :math:`(V)` marks nodes whose sorted top-K is read with
    every value below ``floor`` raised to it: the release scores every node over 126
    region slots and resets the slots outside the match branch's pruned set to
    :math:`10^{-6}` after a propagation step, so an updated node's sorted top-K never
    reads less than that.

    Args:
        k (int, optional): :math:`K`, the number of sorted beliefs the MLP reads.
            (default: :obj:`5`)
        hidden (int, optional): Hidden size of the MLP. (default: :obj:`64`)
        log_input (bool, optional): Read the logarithm of the beliefs.
            (default: :obj:`False`)
        eps (float, optional): :math:`\epsilon` of the logarithm. (default: :obj:`1e-6`)
        layers (str, optional): :obj:`"plain"` or :obj:`"release"`. (default: :obj:`"plain"`)
        dropout (float, optional): Dropout of the release's readout (unused by
            :obj:`"plain"`). (default: :obj:`0.2`)
        logits (bool, optional): Return the logit instead of the probability.
            (default: :obj:`False`)

    Shapes:
        - **input:** b :math:`(V, S)`, mask :math:`(V, S)`, floor_rows :math:`(V)`
          (optional)
        - **output:** :math:`(V)`
    """

    def __init__(self, k: int = 5, hidden: int = 64, log_input: bool = False,
                 eps: float = 1e-6, layers: str = "plain", dropout: float = 0.2,
                 logits: bool = False) -> None:
        super().__init__()
        if layers not in ("plain", "release"):
            raise ValueError(f"Classify layers must be 'plain' or 'release', got {layers!r}")
        self.k, self.log_input, self.eps = k, log_input, eps
        self.layers, self.logits = layers, logits
        if layers == "plain":
            with uninitialized(self):
                self.mlp = MLP(k, hidden, 1)
        else:
            # built initialised, then drawn again (Xavier) by reset_parameters(): seeded
            # models keep the initial values (and the random stream) they always had
            self.fc1, self.bn = nn.Linear(k, hidden), nn.BatchNorm1d(hidden)
            self.drop, self.fc2 = nn.Dropout(dropout), nn.Linear(hidden, 1)
            self.pad_value = nn.Parameter(torch.zeros(()))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.layers == "plain":
            self.mlp.reset_parameters()
            return
        for fc in (self.fc1, self.fc2):
            nn.init.xavier_normal_(fc.weight)
            nn.init.zeros_(fc.bias)
        self.bn.reset_parameters()
        nn.init.zeros_(self.pad_value)

    def forward(self, b: torch.Tensor, mask: torch.Tensor,
                floor_rows: torch.Tensor | None = None, floor: float = 1e-6) -> torch.Tensor:
        top, _, valid = masked_topk(b, mask, self.k)
        if floor_rows is not None:
            top = torch.where(floor_rows[:, None] & valid, top.clamp(min=floor), top)
        x = self.features(top)
        if self.layers == "plain":
            logit = self.mlp(x)
        else:
            x = torch.where(valid, x, self.pad_value)
            logit = self.fc2(self.drop(torch.relu(batch_norm(self.bn, self.fc1(x)))))
        logit = logit.squeeze(-1)
        return logit if self.logits else torch.sigmoid(logit)

    def features(self, top: torch.Tensor) -> torch.Tensor:
        """What the MLP reads from the sorted top-K beliefs."""
        return torch.log(top + self.eps) if self.log_input else top

    def __repr__(self) -> str:
        hidden = (self.mlp.fc1 if self.layers == "plain" else self.fc1).out_features
        drop = f", dropout={self.drop.p:g}" if self.layers == "release" else ""
        return (f"Classify(k={self.k}, hidden={hidden}, log_input={self.log_input}, "
                f"eps={self.eps:g}, layers={self.layers!r}{drop}, logits={self.logits})")
