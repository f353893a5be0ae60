"""Sim: local correspondence between text and visual features (paper Eq. 1, 4, 12, 14-16)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from rcrn.encoders import spatial_pair
from rcrn.nn.functional import uninitialized

__all__ = ["MLP", "EntitySim", "RelationSim", "NormalizeScale", "BNMLP", "EntitySimBN",
           "RelationSimBN", "l2norm", "batch_norm"]


class MLP(nn.Module):
    r"""Linear -> ReLU -> Linear: the feature transformation MLPs of the paper (Eq. 14).

    .. math::
        \mathrm{MLP}(\mathbf{x}) = \mathbf{W}_2 \, \mathrm{ReLU}(\mathbf{W}_1 \mathbf{x}
        + \mathbf{b}_1) + \mathbf{b}_2

    Args:
        in_dim (int): Size of each input sample.
        hidden (int): Size of the hidden layer.
        out_dim (int): Size of each output sample.

    Shapes:
        - **input:** :math:`(*, \text{in\_dim})`
        - **output:** :math:`(*, \text{out\_dim})`
    """

    def __init__(self, in_dim: int, hidden: int, out_dim: int) -> None:
        super().__init__()
        with uninitialized(self):
            self.fc1, self.fc2 = nn.Linear(in_dim, hidden), nn.Linear(hidden, out_dim)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.fc1.reset_parameters()
        self.fc2.reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))

    def __repr__(self) -> str:
        return f"MLP({self.fc1.in_features}, {self.fc1.out_features}, {self.fc2.out_features})"


def oriented_pairs(geometry: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
                   boxes: torch.Tensor, proj: tuple[torch.Tensor, ...] | torch.Tensor,
                   rows: torch.Tensor, cols: torch.Tensor, row_is_subject: torch.Tensor
                   ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor] | None]:
    """What both Relation Sims read of the (row box, column box) pairs of every edge,
    oriented subject first: ``geometry(subject, object)`` ``[E, R, C, *]`` and, when
    ``proj`` holds raw features ``[M, D]``, the pairs' ``(o_sub, o_obj)`` ``[E, R, C, D]``
    (``None`` for per-box projections)."""
    flag = row_is_subject[:, None, None]
    b_row, b_col = boxes[rows][:, :, None, :], boxes[cols][:, None, :, :]
    s = torch.where(flag[..., None], geometry(b_row, b_col), geometry(b_col, b_row))
    if not isinstance(proj, torch.Tensor):
        return s, None
    o_row, o_col = torch.broadcast_tensors(proj[rows][:, :, None, :], proj[cols][:, None, :, :])
    return s, (torch.where(flag[..., None], o_row, o_col),
               torch.where(flag[..., None], o_col, o_row))


class EntitySim(nn.Module):
    r"""Entity Sim: SGRAF-style vector similarity of phrases and regions (paper Eq. 1, 14-15).

    .. math::
        b_{ij} = \tanh\left(\mathbf{W}_{\rm eval}^{\top} \mathrm{ReLU}\left(
        \mathbf{W}_v \left(\mathrm{F^t_{trf}}(\mathbf{x}_i)
        - \mathrm{F^v_{trf}}(\mathbf{y}_j)\right)^2\right)\right),
        \qquad \mathrm{F_{trf}}(\mathbf{x}) = \mathrm{L2Norm}(\mathrm{MLP}(\mathbf{x}))

    for every node :math:`i` (phrase vector :math:`\mathbf{x}_i`) against every proposal
    :math:`j` of its own graph (feature :math:`\mathbf{y}_j`), squashed to
    :math:`[-1, 1]`; the square is elementwise.  The appearance and location scores
    :math:`b^{\rm app}, b^{\rm pos}` of Eq. 1 are two EntitySims.

    Args:
        text_dim (int): Size :math:`D_t` of the phrase vectors.
        vis_dim (int): Size :math:`D_v` of the region features.
        joint (int): Size :math:`J` of both transforms' outputs.
        hidden (int): Hidden size of both transformation MLPs.
        sim_dim (int): Size of the vector similarity
            :math:`\mathbf{W}_v (\cdot)^2`.

    Shapes:
        - **input:** text :math:`(V, D_t)`, vis :math:`(B, N, D_v)`, node_batch :math:`(V)`
          (the graph of every node)
        - **output:** :math:`(V, N)`
    """

    def __init__(self, text_dim: int, vis_dim: int, joint: int, hidden: int,
                 sim_dim: int) -> None:
        super().__init__()
        with uninitialized(self):
            self.text_trf = MLP(text_dim, hidden, joint)
            self.vis_trf = MLP(vis_dim, hidden, joint)
            self.vec = nn.Linear(joint, sim_dim)
            self.w_eval = nn.Linear(sim_dim, 1)
        self.dims = (text_dim, vis_dim, joint, hidden, sim_dim)
        self.reset_parameters()

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
    r"""Relation Sim: cosine alignment of relation phrases and region pairs (paper Eq. 4, 12, 16).

    .. math::
        [\mathbf{A}_{ij}]_{kl} = \mathrm{ReLU}\left(\left\langle
        \mathrm{F_{trf}}(\mathbf{r}^e_{ij}), \mathrm{F_{trf}}(\mathbf{r}^o_{kl})
        \right\rangle\right), \qquad
        \mathbf{r}^o_{kl} = \left[\mathbf{W}_l \mathbf{s}_{kl},
        \mathbf{W}_e [\mathbf{o}_k, \mathbf{o}_l]\right]

    for a relation phrase :math:`\mathbf{r}^e_{ij}` and the pair (subject :math:`k`,
    object :math:`l`) of boxes with geometry :math:`\mathbf{s}_{kl}` (:func:`spatial_pair`)
    and features :math:`\mathbf{o}_k, \mathbf{o}_l`; :math:`\mathrm{F_{trf}}` is
    ``L2Norm(MLP(.))`` (Eq. 14), one per modality.  The first layer of the visual
    :math:`\mathrm{F_{trf}}` is linear in :math:`[\mathbf{s}_{kl}, \mathbf{o}_k,
    \mathbf{o}_l]`, so :meth:`project` maps every box once (``U1 = W1b W_e^sub o``,
    ``U2 = W1b W_e^obj o``) and :meth:`forward` adds the projections per pair: the same
    math as concatenating and projecting each pair, with the 2D-wide product done per box.

    Start: the ReLU of Eq. 16 passes no gradient where the cosine is negative,
    and at random initialisation the two transforms' outputs are dominated by
    their own fixed directions, so for some seeds every pair's cosine is (or
    after a few steps becomes) negative: every ``A`` is 0 for good, messages
    carry nothing and matching never learns.  ``align`` gives both transforms'
    last layers the same bias ``align * u`` (``u`` a random unit vector), so
    training starts with every pair mildly related (cosines around 0.5) whatever
    the seed; ``align=0`` keeps PyTorch's default biases.

    ``diff=True`` appends ``|o_k - o_l|`` to the pair feature (``r^o = [W_l s,
    W_e [o_k, o_l], |o_k - o_l|]``, a departure from Eq. 12): relations that
    compare the two regions (the same colour / shape as) then read their
    difference directly instead of learning equality from a concatenation.

    Args:
        text_dim (int): Size :math:`D_t` of the relation phrase vectors.
        vis_dim (int): Size :math:`D_v` of the region features.
        spatial_dim (int): Size of :math:`\mathbf{W}_l \mathbf{s}` (the geometry has 5).
        pair_dim (int): Size of :math:`\mathbf{W}_e [\mathbf{o}_k, \mathbf{o}_l]`.
        hidden (int): Hidden size :math:`H` of both transformation MLPs.
        joint (int): Size :math:`J` of both transforms' outputs.
        align (float, optional): Norm of the shared starting bias of both transforms'
            last layers (keyword-only; :obj:`0` keeps PyTorch's). (default: :obj:`2.0`)
        diff (bool, optional): Append :math:`|\mathbf{o}_k - \mathbf{o}_l|` to the pair
            feature (keyword-only). (default: :obj:`False`)

    Shapes:
        - **input:** text :math:`(E, D_t)`, boxes :math:`(M, 4)`, proj: :meth:`project`'s
          per-box projections (``U1, U2`` :math:`(M, H)`, with ``diff`` the features
          :math:`(M, D_v)`) or the raw features :math:`(M, D_v)` (the per-pair form),
          rows :math:`(E, R)`, cols :math:`(E, C)` (indices into the :math:`M` boxes of
          the batch), row_is_subject :math:`(E)`, txt :math:`(E, J)` (optional)
        - **output:** :math:`(E, R, C)`
    """

    def __init__(self, text_dim: int, vis_dim: int, spatial_dim: int, pair_dim: int,
                 hidden: int, joint: int, *, align: float = 2.0, diff: bool = False) -> None:
        super().__init__()
        self.align, self.diff = align, diff
        with uninitialized(self):
            self.W_l = nn.Linear(5, spatial_dim)
            self.W_e = nn.Linear(2 * vis_dim, pair_dim)
            self.vis_fc1 = nn.Linear(spatial_dim + pair_dim + (vis_dim if diff else 0), hidden)
            self.vis_fc2 = nn.Linear(hidden, joint)
            self.text_trf = MLP(text_dim, hidden, joint)
        self.dims = (text_dim, vis_dim, spatial_dim, pair_dim, hidden, joint)
        self.reset_parameters()

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
        """The pair geometry ``s`` of subject and object boxes ``[..., 4]``
        (:func:`spatial_pair`)."""
        return spatial_pair(sub, obj)

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
                cols: torch.Tensor, row_is_subject: torch.Tensor,
                txt: torch.Tensor | None = None) -> torch.Tensor:
        """Relation scores; ``proj`` is ``project(vis)`` (fused) or the raw ``vis`` ``[M, Dv]``;
        ``txt`` is ``text_transform(text)`` when the caller has it.

        With raw features every pair's ``[o_sub, o_obj]`` goes through ``W_e`` and the
        first MLP layer one pair at a time (the plain form), for comparison.
        """
        flag = row_is_subject[:, None, None]
        s, raw = oriented_pairs(self.geometry, boxes, proj, rows, cols, row_is_subject)
        txt = self.text_transform(text) if txt is None else txt      # [E, J]
        if raw is not None:
            vis = self.visual_transform(self.pair_feature(*raw, s))
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
                f"align={self.align:g}, diff={self.diff})")


# ----------------------------------------------------------------------------------------
# The layers of the official release (``RCRNConfig(layers="release")``)
def l2norm(x: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``x / (sqrt(sum x^2 + eps) + eps)`` over the last axis: the L2 normalisation the
    release applies after the 256-d vector-similarity projection (SGRAF's ``l2norm``)."""
    return x / ((x.pow(2).sum(-1, keepdim=True) + eps).sqrt() + eps)


def batch_norm(m: nn.BatchNorm1d, x: torch.Tensor) -> torch.Tensor:
    """``m(x)`` for rows ``[R, C]``; while training, a single row (no batch statistics)
    is normalised with the running statistics, as in evaluation, and leaves them as
    they are."""
    if not (m.training and x.shape[0] < 2):
        return m(x)
    return F.batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, False, 0.0, m.eps)


class NormalizeScale(nn.Module):
    r"""L2 normalisation with a learned per-dimension scale (the release's NormalizeScale).

    .. math::
        \mathbf{y} = \mathbf{w} \odot \frac{\mathbf{x}}{\|\mathbf{x}\|_2}

    over the last axis; :math:`\mathbf{w}` starts at ``init`` in every dimension.

    Args:
        dim (int): Size of the last axis.
        init (float, optional): Starting value of every weight (20 in the release).
            (default: :obj:`20.0`)

    Shapes:
        - **input:** :math:`(*, \text{dim})`
        - **output:** :math:`(*, \text{dim})`
    """

    def __init__(self, dim: int, init: float = 20.0) -> None:
        super().__init__()
        self.init = init
        self.weight = nn.Parameter(torch.empty(1, dim))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.constant_(self.weight, self.init)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, dim=-1) * self.weight[0]

    def __repr__(self) -> str:
        return f"NormalizeScale({self.weight.shape[1]}, init={self.init:g})"


class BNMLP(nn.Module):
    r"""Linear -> BatchNorm -> ReLU -> Dropout -> Linear -> BatchNorm: the release's MLP.

    .. math::
        \mathrm{BNMLP}(\mathbf{x}) = \mathrm{BN}_2\left(\mathbf{W}_2 \,
        \mathrm{Dropout}\left(\mathrm{ReLU}\left(\mathrm{BN}_1(\mathbf{W}_1 \mathbf{x}
        + \mathbf{b}_1)\right)\right) + \mathbf{b}_2\right)

    The release's feature transformations (in place of the paper's MLP of Eq. 14), over
    any leading shape (BatchNorm sees the flattened rows).  With a boolean ``mask`` over
    the leading shape only the valid rows are transformed (so padding never enters the
    batch statistics); the others are 0.  While training, a single row has no batch
    statistics: it is normalised with the running ones and leaves them unchanged.

    Args:
        in_dim (int): Size of each input sample.
        out_dim (int): Size of the hidden layer and of each output sample.
        dropout (float, optional): Dropout probability. (default: :obj:`0.2`)

    Shapes:
        - **input:** x :math:`(*, \text{in\_dim})`, mask :math:`(*)` (optional)
        - **output:** :math:`(*, \text{out\_dim})`
    """

    def __init__(self, in_dim: int, out_dim: int, dropout: float = 0.2) -> None:
        super().__init__()
        with uninitialized(self):
            self.fc1, self.bn1 = nn.Linear(in_dim, out_dim), nn.BatchNorm1d(out_dim)
            self.drop = nn.Dropout(dropout)
            self.fc2, self.bn2 = nn.Linear(out_dim, out_dim), nn.BatchNorm1d(out_dim)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for m in (self.fc1, self.bn1, self.fc2, self.bn2):
            m.reset_parameters()

    def rows(self, x: torch.Tensor) -> torch.Tensor:
        """The transformation of ``[R, in]`` rows."""
        return self.after_first(self.fc1(x))

    def after_first(self, pre: torch.Tensor) -> torch.Tensor:
        """The rest of the transformation from the first Linear's output ``[R, out]``.

        While training, a single row has no batch statistics: it is normalised with
        the running ones (as in evaluation) and leaves them unchanged.
        """
        return batch_norm(self.bn2, self.fc2(self.drop(F.relu(batch_norm(self.bn1, pre)))))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        lead = x.shape[:-1]
        if mask is None:
            return self.rows(x.reshape(-1, x.shape[-1])).reshape(*lead, -1)
        out = x.new_zeros(*lead, self.fc2.out_features)
        out[mask] = self.rows(x[mask])
        return out

    def __repr__(self) -> str:
        return (f"BNMLP({self.fc1.in_features}, {self.fc1.out_features}, "
                f"dropout={self.drop.p:g})")


class EntitySimBN(nn.Module):
    r"""Entity Sim with the release's layers (paper Eq. 1, 14-15).

    .. math::
        b_{ij} = \tanh\left(\mathbf{W}_{\rm eval}^{\top} \mathrm{ReLU}\left(
        \mathrm{l2norm}\left(\mathbf{W}_v (\mathbf{x}_i - \mathbf{y}_j)^2\right)
        \right)\right)

    with :math:`\mathbf{x}_i = \mathrm{L2}(\mathrm{F}_t(\mathbf{e}_i))` and
    :math:`\mathbf{y}_j = \mathrm{L2}(\mathrm{F}_v(\mathrm{NS}(\mathbf{o}_j)))`
    (:math:`\mathrm{NS}` = :class:`NormalizeScale`; with ``pre`` the normalised input
    first goes through a Linear to ``joint``: the location branch), both transforms
    :class:`BNMLP`; :func:`l2norm` is SGRAF's.

    Args:
        text_dim (int): Size :math:`D_t` of the phrase vectors.
        vis_dim (int): Size :math:`D_v` of the region features.
        joint (int): Size :math:`J` of both transforms' outputs (and of ``pre``'s).
        sim_dim (int): Size of the vector similarity :math:`\mathbf{W}_v (\cdot)^2`.
        dropout (float, optional): Dropout of both :class:`BNMLP`. (default: :obj:`0.2`)
        pre (bool, optional): A Linear to ``joint`` after the NormalizeScale.
            (default: :obj:`False`)
        init_norm (float, optional): NormalizeScale's starting weight.
            (default: :obj:`20.0`)

    Shapes:
        - **input:** text :math:`(V, D_t)`, vis :math:`(B, N, D_v)`, node_batch :math:`(V)`,
          box_mask :math:`(B, N)` (optional: keeps padding out of BatchNorm)
        - **output:** :math:`(V, N)`
    """

    def __init__(self, text_dim: int, vis_dim: int, joint: int, sim_dim: int,
                 dropout: float = 0.2, pre: bool = False, init_norm: float = 20.0) -> None:
        super().__init__()
        with uninitialized(self):
            self.norm = NormalizeScale(vis_dim, init_norm)
            self.pre = nn.Linear(vis_dim, joint) if pre else None
            self.vis_trf = BNMLP(joint if pre else vis_dim, joint, dropout)
            self.text_trf = BNMLP(text_dim, joint, dropout)
            self.vec = nn.Linear(joint, sim_dim)
            self.w_eval = nn.Linear(sim_dim, 1)
        self.dims = (text_dim, vis_dim, joint, sim_dim)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for m in (self.norm, self.pre, self.vis_trf, self.text_trf, self.vec, self.w_eval):
            if m is not None:
                m.reset_parameters()

    def transform(self, text: torch.Tensor, vis: torch.Tensor,
                  box_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        v = self.norm(vis)
        if self.pre is not None:
            v = self.pre(v)
        return (F.normalize(self.text_trf(text), dim=-1),
                F.normalize(self.vis_trf(v, box_mask), dim=-1))

    def score(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.w_eval(F.relu(l2norm(self.vec((x - y) ** 2))))).squeeze(-1)

    def forward(self, text: torch.Tensor, vis: torch.Tensor, node_batch: torch.Tensor,
                box_mask: torch.Tensor | None = None) -> torch.Tensor:
        x, y = self.transform(text, vis, box_mask)
        return self.score(x[:, None, :], y[node_batch])

    def __repr__(self) -> str:
        t, v, j, s = self.dims
        return (f"EntitySimBN(text={t}, vis={v}, joint={j}, sim={s}, "
                f"pre={self.pre is not None}, dropout={self.vis_trf.drop.p:g}, "
                f"init_norm={self.norm.init:g})")


class RelationSimBN(nn.Module):
    r"""Relation Sim with the release's layers (paper Eq. 4, 12, 16).

    .. math::
        [\mathbf{A}_{ij}]_{kl} = \mathrm{ReLU}\left(\left\langle
        \mathrm{L2}(\mathrm{F}_t(\mathbf{r}^e_{ij})), \mathrm{L2}(\mathrm{F}_v(
        \mathbf{r}_{kl}))\right\rangle\right), \qquad
        \mathbf{r}_{kl} = \mathbf{W}_f \left[\mathrm{NS}(\mathbf{W}_e [\mathbf{o}_k,
        \mathbf{o}_l]), \mathrm{NS}'(\mathbf{W}_l \mathbf{s}_{kl})\right]

    with :class:`BNMLP` transforms :math:`\mathrm{F}_t, \mathrm{F}_v` and
    :class:`NormalizeScale` :math:`\mathrm{NS}, \mathrm{NS}'` (``W_e`` maps
    ``2 Dv -> Dv`` as in the release).

    Exactly the same arithmetic, without a per-pair product on ``2 Dv``-wide rows:
    ``x = W_e^sub o_k + W_e^obj o_l + c`` is a sum of two per-box projections, its
    norm is ``sqrt(|a_k|^2 + |b_l|^2 + 2 a_k . b_l)``, and the Linear layers that follow
    the normalisation (``W_f``'s visual columns, then ``F_v``'s first layer) are linear,
    so ``F_v.fc1(W_f^vis NS(x)) = (G a_k + G b_l) / |x|`` with ``G = F_v.fc1 W_f^vis
    diag(w)`` applied once per box (:meth:`project`).  Only the dot product
    ``a_k . b_l`` and the 64-d spatial branch are per pair before ``F_v``'s BatchNorm.

    Args:
        text_dim (int): Size :math:`D_t` of the relation phrase vectors.
        vis_dim (int): Size :math:`D_v` of the region features (and of
            :math:`\mathbf{W}_e [\mathbf{o}_k, \mathbf{o}_l]`).
        spatial_dim (int): Size of :math:`\mathbf{W}_l \mathbf{s}` (the geometry has 5).
        joint (int): Size :math:`J` of :math:`\mathbf{r}_{kl}` and of both transforms.
        dropout (float, optional): Dropout of both :class:`BNMLP`. (default: :obj:`0.2`)
        init_norm (float, optional): Both NormalizeScales' starting weight.
            (default: :obj:`20.0`)

    Shapes:
        - **input:** as :class:`RelationSim`, with proj :meth:`project`'s tuple (or the
          raw features :math:`(M, D_v)`)
        - **output:** :math:`(E, R, C)`
    """

    def __init__(self, text_dim: int, vis_dim: int, spatial_dim: int, joint: int,
                 dropout: float = 0.2, init_norm: float = 20.0) -> None:
        super().__init__()
        with uninitialized(self):
            self.W_e = nn.Linear(2 * vis_dim, vis_dim)
            self.vis_norm = NormalizeScale(vis_dim, init_norm)
            self.W_l = nn.Linear(5, spatial_dim)
            self.spatial_norm = NormalizeScale(spatial_dim, init_norm)
            self.W_f = nn.Linear(vis_dim + spatial_dim, joint)
            self.vis_trf = BNMLP(joint, joint, dropout)
            self.text_trf = BNMLP(text_dim, joint, dropout)
        self.dims = (text_dim, vis_dim, spatial_dim, joint)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for m in (self.W_e, self.vis_norm, self.W_l, self.spatial_norm, self.W_f,
                  self.vis_trf, self.text_trf):
            m.reset_parameters()

    def geometry(self, sub: torch.Tensor, obj: torch.Tensor) -> torch.Tensor:
        return spatial_pair(sub, obj)

    def _g(self) -> torch.Tensor:
        """``G = F_v.fc1 W_f^vis diag(w)``: the first visual layer folded into ``W_f``'s
        visual columns and the NormalizeScale weight (``[H, Dv]``)."""
        d = self.W_e.out_features
        return self.vis_trf.fc1.weight @ (self.W_f.weight[:, :d] * self.vis_norm.weight)

    def project(self, vis: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Per box ``[M, Dv]``: ``a`` (as subject, with ``W_e``'s bias), ``b`` (as
        object), their squared norms and their images under ``G``."""
        d = vis.shape[-1]
        a = vis @ self.W_e.weight[:, :d].t() + self.W_e.bias
        b = vis @ self.W_e.weight[:, d:].t()
        g = self._g()
        return a, b, (a * a).sum(-1), (b * b).sum(-1), a @ g.t(), b @ g.t()

    def pair_feature(self, o_sub: torch.Tensor, o_obj: torch.Tensor,
                     s: torch.Tensor) -> torch.Tensor:
        """The plain form (one pair at a time): ``W_f [NS(W_e [o_k, o_l]), NS'(W_l s)]``."""
        o_sub, o_obj = torch.broadcast_tensors(o_sub, o_obj)
        vis = self.vis_norm(self.W_e(torch.cat([o_sub, o_obj], dim=-1)))
        sp = self.spatial_norm(self.W_l(s)).expand(*vis.shape[:-1], -1)
        return self.W_f(torch.cat([vis, sp], dim=-1))

    def text_transform(self, text: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.text_trf(text), dim=-1)

    def forward(self, text: torch.Tensor, boxes: torch.Tensor,
                proj: tuple[torch.Tensor, ...] | torch.Tensor, rows: torch.Tensor,
                cols: torch.Tensor, row_is_subject: torch.Tensor,
                txt: torch.Tensor | None = None) -> torch.Tensor:
        """Relation scores; ``proj`` is :meth:`project` (fused) or raw features ``[M, Dv]``;
        ``txt`` is ``text_transform(text)`` when the caller has it."""
        s, raw = oriented_pairs(self.geometry, boxes, proj, rows, cols, row_is_subject)
        txt = self.text_transform(text) if txt is None else txt      # [E, J]
        if raw is not None:
            pre = self.vis_trf.fc1(self.pair_feature(*raw, s))
        else:
            a, b, na, nb, ga, gb = proj
            fc1 = self.vis_trf.fc1
            g_spatial = fc1.weight @ self.W_f.weight[:, self.W_e.out_features:]  # [H, S]

            def pick(x: torch.Tensor, y: torch.Tensor, idx: torch.Tensor,
                     f: torch.Tensor) -> torch.Tensor:
                f = f.reshape(f.shape[0], *([1] * (idx.dim() - 1 + x.dim() - 1)))
                return torch.where(f, x[idx], y[idx])

            sub_r, obj_c = pick(a, b, rows, row_is_subject), pick(b, a, cols, row_is_subject)
            dot = torch.einsum("erd,ecd->erc", sub_r, obj_c)
            n2 = (pick(na, nb, rows, row_is_subject)[:, :, None]
                  + pick(nb, na, cols, row_is_subject)[:, None, :] + 2 * dot)
            g = (pick(ga, gb, rows, row_is_subject)[:, :, None, :]
                 + pick(gb, ga, cols, row_is_subject)[:, None, :, :])
            vis = g / n2.clamp(min=0).sqrt().clamp(min=1e-12)[..., None]
            sp = self.spatial_norm(self.W_l(s))
            pre = (vis + sp @ g_spatial.t() + fc1.weight @ self.W_f.bias + fc1.bias)
        shape = pre.shape
        vis = F.normalize(self.vis_trf.after_first(pre.reshape(-1, shape[-1])), dim=-1)
        vis = vis.reshape(*shape[:-1], -1)                             # [E, R, C, J]
        return F.relu(torch.einsum("ercj,ej->erc", vis, txt))

    def __repr__(self) -> str:
        t, v, s, j = self.dims
        return (f"RelationSimBN(text={t}, vis={v}, spatial={s}, joint={j}, "
                f"dropout={self.vis_trf.drop.p:g}, init_norm={self.vis_norm.init:g})")
