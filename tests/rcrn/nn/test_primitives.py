"""Each primitive on its own: shapes, math, gradcheck, edge cases."""

import numpy as np
import pytest
import torch

import rcrn.nn
import rcrn.nn.gate
from rcrn.nn import (
    MLP,
    Aggregate,
    And,
    Classify,
    Compare,
    EntitySim,
    Gate,
    GateProd,
    GateSum,
    Locate,
    RelationSim,
    Select,
    f_norm,
)
from rcrn.nn.sim import BNMLP, EntitySimBN, NormalizeScale, RelationSimBN

torch.manual_seed(0)
D = torch.float64


def test_f_norm_rescales_only_above_one_and_maps_signed_range():
    mask = torch.tensor([[True, True, False]])
    x = torch.tensor([[0.5, -0.25, 9.0]], dtype=D)
    assert torch.equal(f_norm(x, mask), torch.tensor([[0.5, -0.25, 0.0]], dtype=D))
    y = torch.tensor([[4.0, -2.0, 1.0]], dtype=D)
    assert torch.allclose(f_norm(y, mask), torch.tensor([[1.0, -0.5, 0.0]], dtype=D))
    assert torch.allclose(f_norm(y, mask, signed=True), torch.tensor([[1.0, 0.25, 0.0]], dtype=D))


def test_select_handles_fewer_proposals_than_k():
    b = torch.tensor([[0.2, 0.9, 0.5, 0.0], [0.3, 0.1, 0.0, 0.0]], dtype=D)
    mask = torch.tensor([[True, True, True, False], [True, True, False, False]])
    values, pos, slot_mask = Select(3)(b, mask)
    assert values.tolist() == [[0.9, 0.5, 0.2], [0.3, 0.1, 0.0]]
    assert pos[0].tolist() == [1, 2, 0] and pos[1, :2].tolist() == [0, 1]
    assert slot_mask.tolist() == [[True] * 3, [True, True, False]]
    values, _, slot_mask = Select(6)(b, mask)  # K larger than the padded width
    assert values.shape == (2, 6) and slot_mask.sum().item() == 5


def test_aggregate_is_a_product_over_children_in_log_space():
    A = torch.rand(3, 4, 2, dtype=D)
    b_sel = torch.rand(3, 2, dtype=D)
    edge_index = torch.tensor([[1, 2, 3], [0, 0, 1]])  # children 1, 2 -> 0; child 3 -> 1
    out = Aggregate(eps=0.0)(A, b_sel, edge_index, 4)
    m = torch.einsum("esk,ek->es", A, b_sel)
    assert torch.allclose(out[0].exp(), m[0] * m[1])
    assert torch.allclose(out[1].exp(), m[2])
    assert torch.equal(out[2:], torch.zeros(2, 4, dtype=D))


def test_aggregate_min_reduces_over_children_per_slot():
    A = torch.rand(3, 4, 2, dtype=D)
    b_sel = torch.rand(3, 2, dtype=D)
    edge_index = torch.tensor([[1, 2, 3], [0, 0, 1]])
    log_m = torch.einsum("esk,ek->es", A, b_sel).log()
    low = Aggregate(eps=0.0, reduce="min")(A, b_sel, edge_index, 4)
    assert torch.allclose(low[0], torch.minimum(log_m[0], log_m[1]))
    assert torch.allclose(low[1], log_m[2])
    assert torch.equal(low[2:], torch.zeros(2, 4, dtype=D))  # no context: b^agg = 1
    # two children sending 0.2 and 0.5 in every slot: the product is 0.1, the minimum 0.2
    one = torch.ones(1, 4, 1, dtype=D)
    two = torch.cat([one * 0.2, one * 0.5])
    ei = torch.tensor([[1, 2], [0, 0]])
    b = torch.ones(2, 1, dtype=D)
    assert torch.allclose(Aggregate(eps=0.0, reduce="min")(two, b, ei, 3)[0].exp(),
                          torch.full((4,), 0.2, dtype=D))
    assert torch.allclose(Aggregate(eps=0.0)(two, b, ei, 3)[0].exp(),
                          torch.full((4,), 0.1, dtype=D))
    with pytest.raises(ValueError, match="reduce"):
        Aggregate(reduce="max")


def test_gateprod_and_gatesum_math():
    gp = GateProd(3, 2).double()
    h, c = torch.randn(2, 3, dtype=D), torch.randn(2, 2, dtype=D)
    b, agg = torch.rand(2, 4, dtype=D), torch.rand(2, 4, dtype=D) + 0.1
    mask = torch.ones(2, 4, dtype=torch.bool)
    out, beta = gp(b, agg.log(), h, c, mask)
    raw = b * agg ** beta[:, None]
    assert torch.allclose(out, raw / raw.max(-1, keepdim=True).values.clamp(min=1))
    gs = GateSum(3, 2, 2).double()
    x, y = torch.rand(2, 4, dtype=D) * 2 - 1, torch.rand(2, 4, dtype=D) * 2 - 1
    out, beta = gs([x, y], h, c, mask)
    s = beta[:, :1] * x + beta[:, 1:] * y
    s = s / s.abs().max(-1, keepdim=True).values.clamp(min=1)
    assert torch.allclose(out, (s + 1) / 2)
    assert ((out >= 0) & (out <= 1)).all()


def test_gate_modes_use_the_right_inputs():
    h, c = torch.randn(2, 3, dtype=D), torch.randn(2, 2, dtype=D)
    mask = torch.ones(2, 4, dtype=torch.bool)
    b, agg = torch.rand(2, 4, dtype=D), torch.rand(2, 4, dtype=D).log()
    lang = GateProd(3, 2, mode="lang").double()
    assert torch.equal(lang(b, agg, h, c, mask)[1], lang(b, agg, h, c * 7, mask)[1])
    ctx = GateProd(3, 2, mode="ctx").double()
    assert torch.equal(ctx(b, agg, h, c, mask)[1], ctx(b, agg, h * 7, c, mask)[1])
    const = GateProd(3, 2, mode="const").double()
    assert torch.allclose(const(b, agg, h, c, mask)[1], torch.full((2,), 0.5, dtype=D))
    with pytest.raises(ValueError):
        GateProd(3, 2, mode="bogus")


def test_locate_compare_and():
    p = torch.tensor([[0.3, 0.1, 0.5], [0.2, 0.9, 0.0]], dtype=D)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    assert Locate()(p, mask).tolist() == [1, 0]
    assert Locate()(p, torch.zeros_like(mask)).tolist() == [-1, -1]
    conf = torch.tensor([0.9, 0.4, 0.7], dtype=D)
    ei = torch.tensor([[0, 0], [1, 2]])
    assert torch.allclose(Compare()(conf, ei), torch.tensor([0.5, 0.2], dtype=D))
    assert torch.allclose(Compare(reverse=True)(conf, ei), torch.tensor([-0.5, -0.2], dtype=D))
    out = And()([conf, torch.tensor([0.8, 0.6, 0.1], dtype=D)], torch.tensor([0, 0, 1]), 2)
    assert out.tolist() == [0.4, 0.1]


@pytest.mark.parametrize("diff", [False, True])
def test_relation_sim_fused_equals_plain_pair_features(diff):
    rs = RelationSim(6, 5, 3, 4, 7, 8, diff=diff).double()
    vis = torch.randn(6, 5, dtype=D)
    boxes = torch.rand(6, 2, dtype=D) * 0.5
    boxes = torch.cat([boxes, boxes + 0.2 + torch.rand(6, 2, dtype=D) * 0.3], -1)
    text = torch.randn(2, 6, dtype=D)
    rows, cols = torch.tensor([[0, 1, 2], [3, 4, 5]]), torch.tensor([[5, 4], [0, 2]])
    subj = torch.tensor([True, False])
    A = rs(text, boxes, rs.project(vis), rows, cols, subj)
    from rcrn.encoders import spatial_pair
    for e in range(2):
        t = rs.text_transform(text[e])
        for a, r in enumerate(rows[e].tolist()):
            for b, c in enumerate(cols[e].tolist()):
                s, o = (r, c) if subj[e] else (c, r)
                geometry = spatial_pair(boxes[s], boxes[o])
                pair = rs.pair_feature(vis[s], vis[o], geometry)
                assert len(pair) == 3 + 4 + 5 * diff
                if diff:
                    assert torch.equal(pair[-5:], (vis[s] - vis[o]).abs())
                want = torch.relu(torch.dot(rs.visual_transform(pair), t))
                assert torch.allclose(A[e, a, b], want)


@pytest.mark.parametrize("name", ["sim", "relsim", "relsim_diff", "gatesum",
                                  "gateprod",
                                  "aggregate", "aggregate_min", "classify", "compare",
                                  "and"])
def test_gradcheck(name):
    mask = torch.ones(2, 3, dtype=torch.bool)
    r = lambda *s: torch.rand(*s, dtype=D, requires_grad=True)  # noqa: E731
    if name == "sim":
        m = EntitySim(4, 3, 5, 6, 2).double()
        fn, args = (lambda t, v: m(t, v, torch.tensor([0, 1]))), (r(2, 4), r(2, 3, 3))
    elif name.startswith("relsim"):
        m = RelationSim(4, 3, 2, 3, 5, 4, diff=name.endswith("diff")).double()
        boxes = torch.tensor([[0.1, 0.1, 0.4, 0.5], [0.5, 0.2, 0.9, 0.6], [0.2, 0.6, 0.3, 0.9]],
                             dtype=D)
        fn = lambda t, v: m(t, boxes, m.project(v), torch.tensor([[0, 1]]),  # noqa: E731
                            torch.tensor([[2, 1]]), torch.tensor([True]))
        args = (r(1, 4), r(3, 3))
    elif name == "gatesum":
        m, ctx = GateSum(2, 2).double(), torch.rand(2, 2, dtype=D)  # β's context: no gradient
        fn, args = (lambda a, b, h: m([a, b], h, ctx, mask)[0]), (r(2, 3), r(2, 3), r(2, 2))
    elif name == "gateprod":
        m, ctx = GateProd(2, 2).double(), torch.rand(2, 2, dtype=D)
        fn, args = (lambda b, a, h: m(b, a, h, ctx, mask)[0]), (r(2, 3), r(2, 3), r(2, 2))
    elif name in ("aggregate", "aggregate_min"):
        m = Aggregate(reduce="min" if name == "aggregate_min" else "sum")
        fn, args = (lambda A, b: m(A, b, torch.tensor([[1, 2], [0, 0]]), 3)), (r(2, 3, 2),
                                                                               r(2, 2))
    elif name == "classify":
        m = Classify(3, 4).double()
        fn, args = (lambda b: m(b, mask)), (r(2, 3),)
    elif name == "compare":
        m = Compare()
        fn, args = (lambda p: m(p, torch.tensor([[0, 0], [1, 2]]))), (r(3),)
    else:
        m = And()
        fn = lambda p, q: m([p, q], torch.tensor([0, 0, 1]), 2)  # noqa: E731
        args = (torch.tensor([0.2, 0.5, 0.9], dtype=D, requires_grad=True),
                torch.tensor([0.7, 0.3, 0.4], dtype=D, requires_grad=True))
    assert torch.autograd.gradcheck(fn, args)


def test_reprs_name_their_settings():
    assert "k=7" in repr(Select(7))
    assert "gate=lang" in repr(GateProd(2, 2, mode="lang"))
    assert repr(Aggregate(eps=1e-3, reduce="min")) == (
        "Aggregate(log_space=True, eps=0.001, reduce='min')")
    assert repr(GateSum(3, 2, 2, "ctx", 1e-6)) == (
        "GateSum(phrase_dim=3, context_dim=2, inputs=2, gate=ctx, floor=1e-06)")
    assert repr(GateProd(3, 2)) == "GateProd(phrase_dim=3, context_dim=2, gate=full)"
    assert repr(Gate(3, 2, 4, "lang")) == (
        "Gate(mode=lang, phrase_dim=3, context_dim=2, outputs=4)")
    assert "eps=0.01" in repr(Classify(3, 4, eps=1e-2))
    assert "dropout=0.3" in repr(Classify(3, 4, layers="release", dropout=0.3))
    assert repr(MLP(3, 4, 5)) == "MLP(3, 4, 5)"
    assert repr(BNMLP(3, 4, 0.1)) == "BNMLP(3, 4, dropout=0.1)"
    assert repr(NormalizeScale(4, 10.0)) == "NormalizeScale(4, init=10)"
    assert "dropout=0.1, init_norm=5" in repr(EntitySimBN(4, 3, 5, 6, 0.1, init_norm=5.0))
    assert "dropout=0.1, init_norm=5" in repr(RelationSimBN(4, 3, 2, 5, 0.1, init_norm=5.0))
    assert repr(Compare(reverse=True)) == "Compare(child - parent)"
    # the fused or plain pair form is the caller's choice per call, not a setting
    text = repr(RelationSim(2, 3, 4, 5, 6, 7, align=0.5, diff=True))
    assert text.startswith("RelationSim(text=2, vis=3, spatial=4, pair=5, hidden=6, joint=7")
    assert "align=0.5, diff=True" in text and "fused" not in text


def _start_scores(seed: int, align: float) -> torch.Tensor:
    torch.manual_seed(seed)
    rs = RelationSim(32, 16, 4, 16, 32, 32, align=align)
    g = torch.Generator().manual_seed(100)
    vis, text = torch.rand(12, 16, generator=g), torch.randn(6, 32, generator=g)
    boxes = torch.rand(12, 2, generator=g) * 0.5
    boxes = torch.cat([boxes, boxes + 0.2], -1)
    rows, cols = torch.arange(12).reshape(6, 2), torch.arange(12).flip(0).reshape(6, 2)
    with torch.no_grad():
        return rs(text, boxes, rs.project(vis), rows, cols, torch.ones(6, dtype=torch.bool))


def test_relation_sim_starts_with_live_scores_for_every_seed():
    # Eq. 16's ReLU passes no gradient below 0: with PyTorch's default biases some seeds
    # start with almost every score at 0 (those are the runs whose matching never learns)
    default = [float((_start_scores(seed, align=0.0) > 0).float().mean()) for seed in range(20)]
    assert min(default) < 0.25, default
    aligned = [_start_scores(seed, align=2.0) for seed in range(20)]
    assert all(bool((A > 0).all()) for A in aligned)
    assert 0.2 < float(torch.stack(aligned).mean()) < 0.9
    rs = RelationSim(4, 3, 2, 3, 5, 4, align=2.0)
    rs.reset_parameters()
    assert torch.equal(rs.vis_fc2.bias, rs.text_trf.fc2.bias)
    assert torch.isclose(rs.vis_fc2.bias.norm(), torch.tensor(2.0))


@pytest.mark.parametrize("diff", [False, True])
def test_relation_sim_unfused_path_equals_fused(diff):
    rs = RelationSim(6, 5, 3, 4, 7, 8, diff=diff).double()
    vis = torch.randn(6, 5, dtype=D)
    boxes = torch.rand(6, 2, dtype=D) * 0.5
    boxes = torch.cat([boxes, boxes + 0.1], -1)
    text = torch.randn(2, 6, dtype=D)
    rows, cols = torch.tensor([[0, 1, 2], [3, 4, 5]]), torch.tensor([[5, 4], [0, 2]])
    subj = torch.tensor([False, True])
    fused = rs(text, boxes, rs.project(vis), rows, cols, subj)
    plain = rs(text, boxes, vis, rows, cols, subj)
    assert torch.allclose(fused, plain)


def test_classify_log_input_reads_log_beliefs():
    c = Classify(3, 4, log_input=True, eps=1e-6).double()
    b = torch.tensor([[0.5, 0.25, 0.125]], dtype=D)
    mask = torch.ones(1, 3, dtype=torch.bool)
    want = torch.sigmoid(c.mlp(torch.log(b + 1e-6)))[:, 0]
    assert torch.allclose(c(b, mask), want)
    assert "log_input=True" in repr(c)


def test_relation_sim_settings_after_the_dimensions_are_keyword_only():
    with pytest.raises(TypeError):
        RelationSim(2, 3, 4, 5, 6, 7, 0.5)
    assert RelationSim(2, 3, 4, 5, 6, 7, align=0.5, diff=True).diff


def test_the_gates_live_in_one_module():
    for name in ("Gate", "GateSum", "GateProd"):
        assert getattr(rcrn.nn, name) is getattr(rcrn.nn.gate, name)


# modules whose __init__ draws every initial value once, through reset_parameters()
RESET = {
    "mlp": lambda: MLP(3, 4, 5),
    "sim": lambda: EntitySim(4, 3, 5, 6, 2),
    "relsim": lambda: RelationSim(4, 3, 2, 3, 5, 4),
    "relsim_diff_no_align": lambda: RelationSim(4, 3, 2, 3, 5, 4, align=0.0, diff=True),
    "classify": lambda: Classify(3, 4),
    "normalize_scale": lambda: NormalizeScale(4, 3.0),
    "bnmlp": lambda: BNMLP(3, 4),
    "sim_bn": lambda: EntitySimBN(4, 3, 5, 6, pre=True),
    "relsim_bn": lambda: RelationSimBN(4, 3, 2, 5),
}


@pytest.mark.parametrize("name", sorted(RESET))
def test_init_goes_through_reset_parameters(name):
    with torch.random.fork_rng():
        torch.manual_seed(3)
        m = RESET[name]()
        after_init = torch.random.get_rng_state()
        start = {k: v.clone() for k, v in m.state_dict().items()}
        for v in m.state_dict().values():
            v.add_(1)  # parameters and buffers (BatchNorm statistics) moved off their start
        torch.manual_seed(3)
        m.reset_parameters()
        assert torch.equal(torch.random.get_rng_state(), after_init)
    assert all(v.device.type == "cpu" for v in m.state_dict().values())
    for k, v in m.state_dict().items():
        assert torch.equal(v, start[k]), k


def test_gate_takes_its_context_without_gradient():
    h = torch.randn(2, 3, dtype=D, requires_grad=True)
    c = torch.randn(2, 2, dtype=D, requires_grad=True)
    for mode in ("full", "ctx"):
        g = Gate(3, 2, 2, mode).double()
        g(h, c).sum().backward()
        assert c.grad is None
    assert h.grad is not None and bool(h.grad.abs().sum() > 0)
    mask = torch.ones(2, 4, dtype=torch.bool)
    b, agg = torch.rand(2, 4, dtype=D), torch.rand(2, 4, dtype=D).log()
    GateProd(3, 2).double()(b, agg, h, c, mask)[0].sum().backward()
    assert c.grad is None


class _ProductGate(torch.nn.Module):
    """A gate with β = 1: the new belief is the old one times the aggregated message."""

    def forward(self, b, log_agg, phrase, context, mask):
        return b * torch.exp(log_agg), torch.ones(len(b), 1, dtype=b.dtype)


@pytest.mark.parametrize("direction", ["up", "down"])
def test_propagation_runs_outside_rcrn_level_by_level(direction):
    from rcrn.batching import Vocab, collate
    from rcrn.nn import Belief, Propagation
    from rcrn.structures import Entity, GroundingProblem, LanguageGraph, Proposals, Relation

    # a chain 0 - 1 - 2 rooted at 0; every relation score 1 (no Relation Sim at all)
    words = "a b c d e".split()
    graph = LanguageGraph(words, [Entity("a", (0, 1), "a"), Entity("c", (2, 3), "c"),
                                  Entity("e", (4, 5), "e")],
                          [Relation(0, 1, "b", (1, 2)), Relation(1, 2, "d", (3, 4))], root=0)
    boxes = np.array([[0, 0, 10, 10], [5, 5, 20, 20], [1, 2, 3, 4]], dtype=np.float32)
    problem = GroundingProblem(graph, Proposals(boxes, (32, 32), features=np.ones((3, 2))))
    batch = collate([problem], Vocab.build([problem]))
    b = torch.tensor([[0.5, 0.2, 0.1], [0.3, 0.6, 0.9], [0.4, 0.8, 0.2]], dtype=D)
    slots = torch.arange(3).repeat(3, 1)
    x = Belief(b, slots, torch.ones(3, 3, dtype=torch.bool))
    seen = []

    def scores(lv, rows, cols, subj):
        seen.append(batch.edge_index[:, lv].tolist())
        return torch.ones(len(lv), rows.shape[1], cols.shape[1], dtype=D)

    prop = Propagation(k=3)
    assert not list(prop.parameters())
    out, betas = prop(x, direction, batch, scores, _ProductGate(), Aggregate(eps=0.0),
                      torch.zeros(3, 1), torch.zeros(3, 1))
    # each receiver's message is the sum of its sender's (already updated) belief
    want = b.clone()
    if direction == "up":     # the deepest level first: node 1 hears 2, then 0 hears 1
        want[1] = b[1] * b[2].sum()
        want[0] = b[0] * want[1].sum()
        assert seen == [[[1], [2]], [[0], [1]]]
    else:                     # the root first: node 1 hears 0, then 2 hears 1
        want[1] = b[1] * b[0].sum()
        want[2] = b[2] * want[1].sum()
        assert seen == [[[0], [1]], [[1], [2]]]
    assert torch.allclose(out.values, want)
    assert len(betas) == 2 and out.updated is None
    with pytest.raises(ValueError, match="direction"):
        prop(x, "sideways", batch, scores, _ProductGate(), Aggregate(), torch.zeros(3, 1),
             torch.zeros(3, 1))
