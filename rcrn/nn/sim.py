"""Sim: local correspondence between text and visual features (paper Eq. 1, 4, 14-16)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from rcrn.encoders import pair_gaps, spatial_pair

__all__ = ["MLP", "EntitySim", "RelationSim"]


class MLP(nn.Module):
    """Linear -> ReLU -> Linear (the feature transformation MLPs of the paper)."""

    def __init__(self, in_dim: int, hidden: int, out_dim: int) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(in_dim, hidden), nn.Linear(hidden, out_dim)

    def reset_parameters(self) -> None:
        self.fc1.reset_parameters()
        self.fc2.reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


class EntitySim(nn.Module):
    r"""Entity Sim: vector similarity of SGRAF style, squashed to [-1, 1].

    ``F_trf(x) = L2Norm(MLP(x))``;
    ``b_ij = tanh(W_eval^T ReLU(W_v (F_trf^t(x_i) - F_trf^v(y_j))^2))``.

    Shapes: ``text [V, Dt]``, ``vis [B, N, Dv]``, ``node_batch [V]`` -> ``[V, N]``
    (every node against every proposal of its own graph).
    """

    def __init__(self, text_dim: int, vis_dim: int, joint: int, hidden: int,
                 sim_dim: int) -> None:
        super().__init__()
        self.text_trf = MLP(text_dim, hidden, joint)
        self.vis_trf = MLP(vis_dim, hidden, joint)
        self.vec = nn.Linear(joint, sim_dim)
        self.w_eval = nn.Linear(sim_dim, 1)
        self.dims = (text_dim, vis_dim, joint, hidden, sim_dim)

    def reset_parameters(self) -> None:
        for m in (self.text_trf, self.vis_trf, self.vec, self.w_eval):
            m.reset_parameters()

    def transform(self, text: torch.Tensor, vis: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor]:
        return (F.normalize(self.text_trf(text), dim=-1),
                F.normalize(self.vis_trf(vis), dim=-1))

    def score(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Similarity of transformed features broadcast to ``[..., J]`` -> ``[...]``."""
        return torch.tanh(self.w_eval(F.relu(self.vec((x - y) ** 2)))).squeeze(-1)

    def forward(self, text: torch.Tensor, vis: torch.Tensor,
                node_batch: torch.Tensor) -> torch.Tensor:
        x, y = self.transform(text, vis)
        return self.score(x[:, None, :], y[node_batch])

    def __repr__(self) -> str:
        t, v, j, h, s = self.dims
        return f"EntitySim(text={t}, vis={v}, joint={j}, hidden={h}, sim={s})"


class RelationSim(nn.Module):
    r"""Relation Sim: ``[A_ij]_kl = ReLU(<F_trf(r^e_ij), F_trf(r^o_kl)>)``.

    The visual pair feature is ``r^o_kl = [W_l s_kl, W_e [o_k, o_l]]`` (Eq. 12).
    The first layer of ``F_trf`` on ``r^o`` is linear in ``[s_kl, o_k, o_l]``, so
    ``project`` maps every box once (``U1 = W1b W_e^sub o``, ``U2 = W1b W_e^obj o``)
    and ``forward`` adds the projections per pair: the same math as
    concatenating and projecting each pair, with the 2D-wide product done per box.

    Shapes: ``forward(text [E, Dt], boxes [M, 4], (U1, U2) [M, H], rows [E, R],
    cols [E, C], row_is_subject [E])`` -> ``[E, R, C]``; rows/cols index the
    ``M`` boxes of the batch.

    Start: the ReLU of Eq. 16 passes no gradient where the cosine is negative,
    and at random initialisation the two transforms' outputs are dominated by
    their own fixed directions, so for some seeds every pair's cosine is (or
    after a few steps becomes) negative: every ``A`` is 0 for good, messages
    carry nothing and matching never learns.  ``align`` (default 2.0) gives
    both transforms' last layers the same bias ``align * u`` (``u`` a random
    unit vector), so training starts with every pair mildly related (cosines
    around 0.5) whatever the seed; ``align=0`` keeps PyTorch's default biases.

    ``diff=True`` appends ``|o_k - o_l|`` to the pair feature (``r^o = [W_l s,
    W_e [o_k, o_l], |o_k - o_l|]``, a departure from Eq. 12): relations that
    compare the two regions (the same colour / shape as) then read their
    difference directly instead of learning equality from a concatenation.
    ``gaps=True`` appends the boxes' absolute separation (:func:`pair_gaps`) to
    the geometry ``s`` (also a departure): distance relations (near, far from,
    next to) are thresholds on it, which ``s`` alone, in units of the subject's
    size, gives only through a division.
    """

    def __init__(self, text_dim: int, vis_dim: int, spatial_dim: int, pair_dim: int,
                 hidden: int, joint: int, align: float = 2.0, diff: bool = False,
                 gaps: bool = False) -> None:
        super().__init__()
        self.align, self.diff, self.gaps = align, diff, gaps
        self.W_l = nn.Linear(12 if gaps else 5, spatial_dim)
        self.W_e = nn.Linear(2 * vis_dim, pair_dim)
        self.vis_fc1 = nn.Linear(spatial_dim + pair_dim + (vis_dim if diff else 0), hidden)
        self.vis_fc2 = nn.Linear(hidden, joint)
        self.text_trf = MLP(text_dim, hidden, joint)
        self.dims = (text_dim, vis_dim, spatial_dim, pair_dim, hidden, joint)
        self._align_biases()

    def reset_parameters(self) -> None:
        for m in (self.W_l, self.W_e, self.vis_fc1, self.vis_fc2, self.text_trf):
            m.reset_parameters()
        self._align_biases()

    @torch.no_grad()
    def _align_biases(self) -> None:
        if self.align:
            u = F.normalize(torch.randn(self.vis_fc2.out_features), dim=0) * self.align
            self.vis_fc2.bias.copy_(u)
            self.text_trf.fc2.bias.copy_(u)

    def geometry(self, sub: torch.Tensor, obj: torch.Tensor) -> torch.Tensor:
        """The pair geometry ``s`` of subject and object boxes ``[..., 4]``:
        :func:`spatial_pair`, followed by :func:`pair_gaps` with ``gaps``."""
        s = spatial_pair(sub, obj)
        return torch.cat([s, pair_gaps(sub, obj)], dim=-1) if self.gaps else s

    # -- the plain form (reference): one pair feature at a time
    def pair_feature(self, o_sub: torch.Tensor, o_obj: torch.Tensor,
                     s: torch.Tensor) -> torch.Tensor:
        """``r^o = [W_l s, W_e [o_sub, o_obj]]`` (``+ [|o_sub - o_obj|]`` with ``diff``)."""
        o_sub, o_obj = torch.broadcast_tensors(o_sub, o_obj)
        appearance = self.W_e(torch.cat([o_sub, o_obj], dim=-1))
        spatial = self.W_l(s).expand(*appearance.shape[:-1], self.W_l.out_features)
        parts = [spatial, appearance] + ([(o_sub - o_obj).abs()] if self.diff else [])
        return torch.cat(parts, dim=-1)

    def visual_transform(self, r_o: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.vis_fc2(F.relu(self.vis_fc1(r_o))), dim=-1)

    def text_transform(self, text: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.text_trf(text), dim=-1)

    # -- the fused form
    def _first_layer(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Columns of the first visual layer on ``W_l s``, on ``W_e [o, o]`` and on ``|o - o|``."""
        k, p = self.W_l.out_features, self.W_e.out_features
        w = self.vis_fc1.weight
        return w[:, :k], w[:, k:k + p], w[:, k + p:]

    def project(self, vis: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Per-box first-layer projections ``(U1, U2)`` of boxes ``[M, Dv]`` as subject /
        object (with ``diff``, the boxes' features follow as a third item)."""
        d = vis.shape[-1]
        w1b = self._first_layer()[1]
        sub = vis @ self.W_e.weight[:, :d].t()
        obj = vis @ self.W_e.weight[:, d:].t()
        return (sub @ w1b.t(), obj @ w1b.t()) + ((vis,) if self.diff else ())

    def _constant(self) -> tuple[torch.Tensor, torch.Tensor]:
        w1a, w1b, _ = self._first_layer()
        m_s = w1a @ self.W_l.weight                      # [H, 5]
        c = w1a @ self.W_l.bias + w1b @ self.W_e.bias + self.vis_fc1.bias
        return m_s, c

    def forward(self, text: torch.Tensor, boxes: torch.Tensor,
                proj: tuple[torch.Tensor, ...] | torch.Tensor, rows: torch.Tensor,
                cols: torch.Tensor, row_is_subject: torch.Tensor) -> torch.Tensor:
        """Relation scores; ``proj`` is ``project(vis)`` (fused) or the raw ``vis`` ``[M, Dv]``.

        With raw features every pair's ``[o_sub, o_obj]`` goes through ``W_e`` and the
        first MLP layer (the arithmetic of the official release), for comparison.
        """
        flag = row_is_subject[:, None, None]
        b_row, b_col = boxes[rows][:, :, None, :], boxes[cols][:, None, :, :]
        s = torch.where(flag[..., None], self.geometry(b_row, b_col),
                        self.geometry(b_col, b_row))                   # [E, R, C, 5 | 12]
        txt = self.text_transform(text)                                # [E, J]
        if isinstance(proj, torch.Tensor):
            o_row, o_col = proj[rows][:, :, None, :], proj[cols][:, None, :, :]
            o_row, o_col = torch.broadcast_tensors(o_row, o_col)
            o_sub = torch.where(flag[..., None], o_row, o_col)
            o_obj = torch.where(flag[..., None], o_col, o_row)
            vis = self.visual_transform(self.pair_feature(o_sub, o_obj, s))
            return F.relu(torch.einsum("ercj,ej->erc", vis, txt))
        u_sub, u_obj = proj[:2]
        m_s, c = self._constant()
        a_row = torch.where(flag, u_sub[rows], u_obj[rows])            # [E, R, H]
        a_col = torch.where(flag, u_obj[cols], u_sub[cols])            # [E, C, H]
        pre = a_row[:, :, None, :] + a_col[:, None, :, :] + s @ m_s.t() + c
        if self.diff:
            feats = proj[2]
            gap = (feats[rows][:, :, None, :] - feats[cols][:, None, :, :]).abs()
            pre = pre + gap @ self._first_layer()[2].t()
        hidden = F.relu(pre)
        vis = F.normalize(self.vis_fc2(hidden), dim=-1)                # [E, R, C, J]
        return F.relu(torch.einsum("ercj,ej->erc", vis, txt))

    def __repr__(self) -> str:
        t, v, s, p, h, j = self.dims
        return (f"RelationSim(text={t}, vis={v}, spatial={s}, pair={p}, hidden={h}, joint={j}, "
                f"align={self.align:g}, diff={self.diff}, gaps={self.gaps}, fused_pairs=True)")
