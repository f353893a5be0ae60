"""The batched model against the independent per-tree oracle, and its symmetries.

``rcrn.testing.reference_forward`` computes every primitive from its equation with
parameters read by name from the state dict (no module of the model runs), so these
tests check the model's layers, its padding emulation and its fused relation scores
as well as its batching.
"""

from importlib import resources

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import rcrn.encoders
import rcrn.nn.functional
import rcrn.nn.gate
import rcrn.nn.sim
from rcrn import programs as P
from rcrn.batching import Vocab, collate
from rcrn.engine.config import load_config
from rcrn.models import RCRN, RCRNConfig
from rcrn.nn import Classify, RelationSim
from rcrn.nn.sim import NormalizeScale
from rcrn.testing import random_problem, reference_forward

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
SMALL = dict(word_dim=8, lstm_hidden=6, joint=12, hidden=10, sim_dim=7, vis_dim=9,
             spatial_dim=4, pair_dim=6, classify_hidden=5)
OFFICIAL_SMALL = dict(word_dim=6, lstm_hidden=5, joint=8, hidden=8, sim_dim=4, vis_dim=7,
                      spatial_dim=3, pair_dim=7, classify_hidden=6)
SIZES = set(SMALL) | {"k"}


def synthetic_switches():
    """The synthetic demo's model switches (rcrn/configs/synthetic.yaml), without its sizes."""
    model = load_config(resources.files("rcrn") / "configs" / "synthetic.yaml")["model"]
    return {k: v for k, v in model.items() if k not in SIZES}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The oracle runs many tiny ops: intra-op threads only add contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ------------------------------------------------------------------------ helpers
def build(problems, program=P.RCRN_PROGRAM, k=5, seed=0, device="cpu", official=False,
          **extra):
    torch.manual_seed(seed)
    vocab = Vocab.build(problems)
    # one K: the program's selects and the model's (a named program is built with it)
    text = P.to_text(P.with_k(P.parse(program) if isinstance(program, str) else program, k))
    if official:
        cfg = RCRNConfig.official(k=k, program=text, **OFFICIAL_SMALL, **extra)
    else:
        cfg = RCRNConfig(k=k, program=text, **SMALL, **extra)
    model = RCRN(cfg, len(vocab)).double()
    randomise(model, seed)
    return model.eval().to(device), vocab


@torch.no_grad()
def randomise(model, seed):
    """BatchNorm statistics and affine terms, NormalizeScale weights, Classify's pad value
    and constant gates away from their initial values, so that each of them matters."""
    gen = torch.Generator().manual_seed(1000 + seed)

    def rand(shape, lo, hi):
        return (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo)

    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm1d):
            # small shifts in Relation Sim: its cosines then take both signs (a constant
            # direction of either transform would leave Eq. 16's ReLU 0 for every pair)
            shift = 0.02 if name.startswith("rel_sim.") else 0.1
            c = m.num_features
            m.running_mean.copy_(rand(c, -shift, shift))
            m.running_var.copy_(rand(c, 0.3, 1.5))
            m.weight.copy_(rand(c, 0.5, 1.5))
            m.bias.copy_(rand(c, -shift, shift))
            if name.startswith("rel_sim.") and name.endswith("bn2"):
                fc2 = model.get_submodule(name[:-3] + "fc2")
                fc2.bias.mul_(0.1)
        elif isinstance(m, NormalizeScale):
            m.weight.copy_(rand(m.weight.shape, 5.0, 30.0))
        elif isinstance(m, Classify) and m.layers == "release":
            m.pad_value.fill_(float(rand((), -1.0, 1.0)))
        elif name.startswith("gates.") and getattr(m, "bias", None) is not None \
                and isinstance(m.bias, nn.Parameter) and m.bias.ndim == 1:
            m.bias.copy_(rand(m.bias.shape, -1.0, 1.0))


def random_set(seed, count=4, max_nodes=8, dim=SMALL["vis_dim"], max_props=14):
    """Chains, stars and mixed trees of 1-8 entities; proposal counts below K (5), below
    6 and above it."""
    rng = np.random.default_rng(seed)
    shapes = ["chain", "star", "mixed"]
    ranges = [(1, 5), (5, 8), (8, max_props + 1)]
    out = []
    for i in range(count):
        lo, hi = ranges[i % 3] if i < 3 else (1, max_props + 1)
        out.append(random_problem(rng, int(rng.integers(1, max_nodes + 1)),
                                  int(rng.integers(lo, hi)), dim, shape=shapes[i % 3],
                                  item_id=f"p{i}"))
    return out


def run(model, problems, vocab):
    batch = collate(problems, vocab).to(next(model.parameters()).device)
    batch.box_feats = batch.box_feats.double()
    batch.boxes, batch.boxes_px = batch.boxes.double(), batch.boxes_px.double()
    batch.referent_box = batch.referent_box.double()
    with torch.no_grad():
        return model(batch), batch


def reference(model, problems, vocab):
    """``reference_forward`` and the names of the state-dict entries it read."""
    read = set()
    real = model.state_dict

    class Recording(dict):
        def __getitem__(self, key):
            read.add(key)
            return dict.__getitem__(self, key)

    model.state_dict = lambda *a, **kw: Recording(real(*a, **kw))
    try:
        with torch.no_grad():
            ref = reference_forward(model, problems, vocab)
    finally:
        del model.state_dict
    return ref, read


def _t(x):
    return torch.as_tensor(x, dtype=torch.float64).detach().cpu()


def differences(out, batch, ref, problems, model):
    """Every output and every sub-expression of the model that differs from the oracle."""
    bad = []
    N = batch.box_mask.shape[1]
    logits = model.config.confidences == "logits"

    def check(what, a, b, positive=False):
        a, b = _t(a), _t(b)
        if a.shape != b.shape:
            bad.append(f"{what}: shape {tuple(a.shape)} != {tuple(b.shape)}")
            return
        if not torch.allclose(a, b, atol=1e-5, rtol=1e-5):
            bad.append(f"{what}: max |diff| {float((a - b).abs().max()):.3g}")
        elif positive:
            # beliefs are products: tiny ones (deep trees) are compared in log space
            both = (a > 1e-250) & (b > 1e-250)
            if not torch.allclose(a[both].log(), b[both].log(), atol=1e-5, rtol=0):
                bad.append(f"{what}: log beliefs differ")

    def same(what, a, b):
        if a != b:
            bad.append(f"{what}: {a} != {b}")

    for g, (p, r) in enumerate(zip(problems, ref)):
        n = len(p.proposals)
        nodes = (batch.node_batch == g).nonzero().flatten().tolist()
        edges = (batch.edge_batch == g).nonzero().flatten()
        if r["match_prob"] is not None:
            check(f"[{g}] match_prob", out.match_prob[g], r["match_prob"])
            if logits:
                check(f"[{g}] match_logit", out.match_logit[g], r["match_logit"])
        if r["ground_belief"] is not None:
            check(f"[{g}] ground_belief", out.ground_belief[g, :n], r["ground_belief"],
                  positive=True)
            if out.ground_belief[g, n:].any():
                bad.append(f"[{g}] ground_belief: padded proposals are not 0")
            same(f"[{g}] ground_index", int(out.ground_index[g]), r["ground_index"])
            check(f"[{g}] box", out.box[g], r["box"])
            check(f"[{g}] deltas", out.deltas[g], r["deltas"])
        if r["edge_scores"] is not None:
            if len(edges):
                check(f"[{g}] edge_scores", out.edge_scores[edges],
                      r["edge_scores"][batch.edge_relation[edges].cpu()])
            same(f"[{g}] mismatch_index", int(out.mismatch_index[g]), r["mismatch_index"])
        for key, rv in r["values"].items():
            mv = out.values[key]
            if isinstance(rv, dict):                      # a belief
                for i, v in enumerate(nodes):
                    mask = mv.mask[v]
                    slots = (mv.slots[v][mask] - g * N).tolist()
                    vals = dict(zip(slots, mv.values[v][mask].tolist()))
                    want = dict(zip(rv["slots"][i], rv["values"][i].tolist()))
                    if set(vals) != set(want):
                        bad.append(f"[{g}] {key} node {i}: slots {sorted(vals)} != "
                                   f"{sorted(want)}")
                        continue
                    order = sorted(want)
                    check(f"[{g}] {key} node {i}", [vals[s] for s in order],
                          [want[s] for s in order], positive=True)
                    if mv.updated is not None:
                        same(f"[{g}] {key} node {i} updated", bool(mv.updated[v]),
                             rv["updated"][i])
            elif key.startswith("(classify"):
                check(f"[{g}] {key}", mv[nodes], rv)
            elif key.startswith("(compare"):
                if len(edges):
                    check(f"[{g}] {key}", mv[edges],
                          rv[batch.edge_relation[edges].cpu()])
            else:                                         # and
                check(f"[{g}] {key}", mv[g], rv)
    return bad


def unread(model, read):
    """Parameters and BatchNorm statistics of the model that the oracle did not read
    (the learned grounding scale enters the loss only; the regression head only the
    ground readout)."""
    names = {n for n, _ in model.named_parameters()} - {"ground_scale"}
    if "ground" not in dict(model.program[1:]):
        names = {n for n in names if not n.startswith("regress.")}
    names |= {n for n, _ in model.named_buffers() if n.endswith(("running_mean", "running_var"))}
    return sorted(names - read)


TOP_DOWN_ONLY = """(outputs (ground (propagate up (local) g_up))
  (match (and (classify (propagate down (select 5 (local)) td))))
  (mismatch (compare (classify (propagate down (select 5 (local)) td)))))"""
MIXED_PROGRAM = """(outputs (ground (propagate down (local :gate ctx) gd :gate ctx))
  (match (and (classify (select 3 (propagate up (local :gate lang) g1 :gate lang)))
              (classify (local))))
  (mismatch (compare (classify (propagate up (select 4 (local)) u1))
                     (classify (propagate down (select 4 (local)) d1 :gate const)))))"""
MATCH_ONLY = "(outputs (match (and (classify (local)) (classify (propagate down " \
    "(local) d)))))"

PLAIN_RELEASE_SWITCHES = dict(context="local", release_slots=6, confidences="logits",
                              boxes="inclusive", belief_floor=1e-6)

CASES = [
    # layers "plain": the defaults, the synthetic demo's switches, K below / above 5
    ("default", 0, 5, "rcrn", False, {}),
    ("synthetic", 1, 5, "rcrn", False, synthetic_switches()),
    ("k3", 2, 3, "rcrn", False, {}),
    ("k8_log", 3, 8, "rcrn", False, {"classify_log": True}),
    ("norm_min", 4, 5, "rcrn", False, {"message_norm": "max",
                                       "message_reduce": {"match_up": "min",
                                                          "match_down": "min"}}),
    ("min", 5, 3, "rcrn", False, {"message_reduce": {"match_up": "min", "ground_up": "min"}}),
    ("diff", 6, 5, "rcrn", False, {"relation_diff": True}),
    ("no_align", 7, 3, "rcrn", False, {"relation_align": 0.0}),
    ("release_switches", 8, 5, "rcrn", False, PLAIN_RELEASE_SWITCHES),
    ("release_attention", 9, 5, "rcrn", False, {"phrase_attention": "release"}),
    ("no_top_down_norm", 10, 4, "no_top_down", False, {"message_norm": "max"}),
    ("lang_beta_k2", 11, 2, "no_context_in_beta", False, {}),
    # programs outside the RCRN family
    ("top_down_only", 15, 5, TOP_DOWN_ONLY, False, {}),
    ("mixed_program", 16, 3, MIXED_PROGRAM, False, {"message_norm": "max"}),
    ("match_only", 17, 5, MATCH_ONLY, False, {}),
    # RCRNConfig.official(): the release's layers and switches
    ("official", 20, 5, "rcrn", True, {}),
    ("official_propagated", 33, 5, "rcrn", True, {"context": "propagated"}),
    ("official_slots6", 22, 5, "rcrn", True, {"release_slots": 6}),
    ("official_slots6_propagated", 23, 5, "rcrn", True, {"release_slots": 6,
                                                         "context": "propagated"}),
    ("official_no_slots", 24, 5, "rcrn", True, {"release_slots": 0, "belief_floor": 0.0}),
    ("official_projected", 25, 4, "rcrn", True, {"phrase_attention": "projected",
                                                 "confidences": "probs"}),
    ("official_top_down_only", 26, 5, TOP_DOWN_ONLY, True, {"release_slots": 6}),
    ("official_mixed_program", 27, 5, MIXED_PROGRAM, True, {}),
    # one departure from the preset: the toolkit's layers under the release's phrase pooling
    ("official_plain_layers", 28, 5, "rcrn", True, {"layers": "plain"}),
]
# every named program (the Table 3 ablations and the toolkit's) with both layer families
# ("rcrn" itself is the "default" and "official" cases)
_NAMED = [name for name in P.ABLATIONS if name != "rcrn"]
CASES += [(name, 60 + i, 5, name, False, {}) for i, name in enumerate(_NAMED)]
CASES += [(f"official_{name}", 80 + i, 5, name, True, {"release_slots": (6, 126)[i % 2]})
          for i, name in enumerate(_NAMED)]


def _program(name):
    return P.ABLATIONS[name] if name in P.ABLATIONS else name


# -------------------------------------------------------------------------- tests
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,seed,k,program,official,extra", CASES,
                         ids=[c[0] for c in CASES])
def test_batched_equals_reference(name, seed, k, program, official, extra, device):
    dim = OFFICIAL_SMALL["vis_dim"] if official else SMALL["vis_dim"]
    problems = random_set(seed, dim=dim)
    model, vocab = build(problems, _program(program), k=k, seed=seed, device=device,
                         official=official, **extra)
    scores = []
    model.add_recorder(lambda key, v: scores.append(v[1]) if key.startswith("relation:")
                       else None)
    out, batch = run(model, problems, vocab)
    ref, read = reference(model, problems, vocab)
    bad = differences(out, batch, ref, problems, model)
    assert not bad, "\n".join(bad[:20])
    # Relation Sim is alive (a ReLU that is 0 for every pair would check nothing)
    assert not scores or any(bool((a > 0).any()) for a in scores)
    assert not unread(model, read), unread(model, read)
    # every output the program has was compared
    parts = dict(model.program[1:])
    assert ("ground" in parts) == (ref[0]["ground_belief"] is not None)
    assert ("match" in parts) == (ref[0]["match_prob"] is not None)
    assert ("mismatch" in parts) == (ref[0]["edge_scores"] is not None)


def test_message_norm_with_local_context():
    problems = random_set(40)
    model, vocab = build(problems, seed=40, context="local", message_norm="max")
    out, batch = run(model, problems, vocab)
    ref, _ = reference(model, problems, vocab)
    assert not differences(out, batch, ref, problems, model)


def _drop_peak_floor(x, mask, signed=False, peak_floor=None, floor=0.0):
    return rcrn.nn.functional.f_norm(x, mask, signed=signed, floor=floor)


def _swapped_pair(sub, obj, eps=1e-3):
    return rcrn.encoders.spatial_pair(obj, sub, eps)


def _batch_norm_eps(m, x):
    return F.batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, False, 0.0, 1e-3)


def _classify_floor(real):
    def forward(self, b, mask, floor_rows=None, floor=1e-6):
        return real(self, b, mask, floor_rows, 1e-2)
    return forward


def _fused_without_bias(real):
    def constant(self):
        m_s, c = real(self)
        return m_s, c - self._first_layer()[1] @ self.W_e.bias
    return constant


def _nudge_output(module_name):
    def plant(model, monkeypatch):
        module = model.get_submodule(module_name)
        real = module.forward
        monkeypatch.setattr(module, "forward", lambda *a, **kw: real(*a, **kw) + 1e-3)
    return plant


PLANTED = {
    # the release's layers
    "no_l2norm_in_vector_similarity": (True, lambda model, mp: mp.setattr(
        rcrn.nn.sim, "l2norm", lambda x, eps=1e-8: x)),
    "normalize_scale_ignores_its_weight": (True, lambda model, mp: mp.setattr(
        NormalizeScale, "forward", lambda self, x: F.normalize(x, dim=-1) * self.init)),
    "batch_norm_eps": (True, lambda model, mp: mp.setattr(
        rcrn.nn.sim, "batch_norm", _batch_norm_eps)),
    "no_padding_floor_in_local_f_norm": (True, lambda model, mp: mp.setattr(
        rcrn.nn.gate, "f_norm", _drop_peak_floor)),
    "classify_floor": (True, lambda model, mp: mp.setattr(
        Classify, "forward", _classify_floor(Classify.forward))),
    "pair_geometry_swapped": (True, lambda model, mp: mp.setattr(
        rcrn.nn.sim, "spatial_pair", _swapped_pair)),
    "release_classify_fc1": (True, _nudge_output("classify.fc1")),
    # the toolkit's layers
    "fused_pairs_without_W_e_bias": (False, lambda model, mp: mp.setattr(
        RelationSim, "_constant", _fused_without_bias(RelationSim._constant))),
    "entity_sim_text_transform": (False, _nudge_output("app_sim.text_trf.fc2")),
    "phrase_projection": (False, _nudge_output("phrases.proj.pos")),
    "top_down_gate": (False, _nudge_output("gates.match_down.gate.linear")),
    "regression_mlp": (False, _nudge_output("regress.fc2")),
}


@pytest.fixture(scope="module")
def planted_base():
    """Per layer family: problems, a model, its batch and the oracle's outputs (which
    the batched model matches)."""
    cache = {}

    def get(official):
        if official not in cache:
            problems = random_set(50, count=4,
                                  dim=OFFICIAL_SMALL["vis_dim"] if official else SMALL["vis_dim"])
            model, vocab = build(problems, seed=50, official=official)
            out, batch = run(model, problems, vocab)
            ref, _ = reference(model, problems, vocab)
            assert not differences(out, batch, ref, problems, model)
            cache[official] = problems, model, vocab, out, batch, ref
        return cache[official]
    return get


@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_oracle_catches_a_planted_bug(bug, planted_base, monkeypatch):
    """A bug planted in one of the model's layers changes the model's outputs away from
    the oracle's."""
    official, plant = PLANTED[bug]
    problems, model, vocab, _, batch, ref = planted_base(official)
    plant(model, monkeypatch)
    bugged, _ = run(model, problems, vocab)
    assert differences(bugged, batch, ref, problems, model)


@pytest.mark.parametrize("official", [False, True])
def test_oracle_shares_no_code_with_the_model(official, planted_base, monkeypatch):
    """With every planted bug of a layer family in place, the oracle's outputs are
    unchanged: it calls none of the model's modules or layer functions."""
    problems, model, vocab, out, batch, _ = planted_base(official)
    for fam, plant in PLANTED.values():
        if fam == official:
            plant(model, monkeypatch)
    ref, _ = reference(model, problems, vocab)
    assert not differences(out, batch, ref, problems, model)


def test_oracle_sees_every_parameter():
    """Altering any one parameter after the reference was computed changes the
    model's outputs (so every parameter the oracle reads is one that matters)."""
    problems = random_set(54, count=3, dim=OFFICIAL_SMALL["vis_dim"])
    model, vocab = build(problems, seed=54, official=True, release_slots=6)
    ref, read = reference(model, problems, vocab)
    for name in ("rel_sim.W_f.bias", "rel_sim.spatial_norm.weight", "pos_sim.pre.weight",
                 "classify.pad_value", "phrases.lstm.weight_ih_l0_reverse",
                 "regress.text_trf.bn2.running_var"):
        assert name in read
        tensor = model.state_dict(keep_vars=True)[name]
        with torch.no_grad():
            tensor.view(-1)[0] += 1e-2
        out, batch = run(model, problems, vocab)
        assert differences(out, batch, ref, problems, model), name
        with torch.no_grad():
            tensor.view(-1)[0] -= 1e-2


def test_reference_runs_any_program():
    """Gate names come from the program: a top-down-only program and one without a
    grounding readout run (the earlier reference hard-coded ground_up / match_up)."""
    problems = random_set(52, count=3)
    model, vocab = build(problems, TOP_DOWN_ONLY, seed=52)
    ref, _ = reference(model, problems, vocab)
    assert set(model.gates) == {"local_full", "g_up", "td"}
    assert all(r["match_up"] == [] and len(r["p_up"]) == p.graph.num_entities
               for r, p in zip(ref, problems))
    model, vocab = build(problems, MATCH_ONLY, seed=52)
    ref, _ = reference(model, problems, vocab)
    assert all(r["ground_belief"] is None and r["box"] is None and r["edge_scores"] is None
               for r in ref)


def test_reference_is_differentiable_in_float32():
    """``rcrn bench propagation`` times forward + backward through the reference."""
    problems = random_set(53, count=2)
    torch.manual_seed(0)
    vocab = Vocab.build(problems)
    model = RCRN(RCRNConfig(**SMALL), len(vocab))
    outs = reference_forward(model, problems, vocab)
    loss = sum(o["match_prob"] + o["ground_belief"].sum() for o in outs)
    loss.backward()
    assert model.rel_sim.W_e.weight.grad is not None
    assert model.phrases.lstm.weight_ih_l0.grad.abs().sum() > 0


def test_message_norm_keeps_the_grounding_pattern():
    """Sending max-normalised beliefs rescales each message by one number, so the
    root's belief pattern (grounding) is the paper's while absolute levels differ."""
    rng = np.random.default_rng(3)
    problems = [random_problem(rng, n, 40, SMALL["vis_dim"], shape="chain", item_id=f"c{n}")
                for n in (2, 4, 6, 8)]
    paper, vocab = build(problems, eps=1e-12)
    normed, _ = build(problems, eps=1e-12, message_norm="max")
    normed.load_state_dict(paper.state_dict())
    a, _ = run(paper, problems, vocab)
    b, _ = run(normed, problems, vocab)
    assert torch.equal(a.ground_index, b.ground_index)
    scale = lambda x: x / x.amax(-1, keepdim=True)  # noqa: E731
    torch.testing.assert_close(scale(a.ground_belief), scale(b.ground_belief), atol=1e-5,
                               rtol=1e-5)
    assert not torch.allclose(a.match_prob, b.match_prob)
    with pytest.raises(ValueError, match="message_norm"):
        build(problems, message_norm="sum")
    with pytest.raises(ValueError, match=r"message_reduce names \['nope'\]"):
        build(problems, message_reduce={"nope": "min"})
    with pytest.raises(ValueError, match=r"message_reduce values .* \['max'\]"):
        build(problems, message_reduce={"match_up": "max"})


def close(a, b):
    torch.testing.assert_close(_t(a), _t(b), atol=1e-5, rtol=1e-5)


def test_permuting_proposals_permutes_beliefs():
    problems = random_set(11, count=3, max_props=30)
    model, vocab = build(problems)
    out, _ = run(model, problems, vocab)
    rng = np.random.default_rng(0)
    perms = []
    for p in problems:
        perm = rng.permutation(len(p.proposals))
        perms.append(perm)
        p.proposals.boxes = p.proposals.boxes[perm]
        p.proposals.features = p.proposals.features[perm]
    out2, _ = run(model, problems, vocab)
    for g, perm in enumerate(perms):
        n = len(perm)
        close(out2.ground_belief[g, :n], out.ground_belief[g, :n][perm])
        close(out2.match_prob[g], out.match_prob[g])
        close(out2.box[g], out.box[g])


def test_permuting_graphs_permutes_outputs():
    problems = random_set(12, count=5, max_props=40)
    model, vocab = build(problems)
    out, _ = run(model, problems, vocab)
    order = [3, 0, 4, 1, 2]
    out2, _ = run(model, [problems[i] for i in order], vocab)
    n = out.ground_belief.shape[1]
    close(out2.match_prob, out.match_prob[order])
    close(out2.ground_belief[:, :n], out.ground_belief[order])
    close(out2.box, out.box[order])
    assert out2.mismatch_index.tolist() == out.mismatch_index[order].tolist()


def test_single_node_graph_without_relations():
    problems = random_set(13, count=2, max_nodes=1)
    model, vocab = build(problems)
    out, _ = run(model, problems, vocab)
    assert out.mismatch_index.tolist() == [-1, -1]
    assert ((out.match_prob > 0) & (out.match_prob < 1)).all()


def test_every_form_of_the_registry_has_an_evaluation() -> None:
    from rcrn.models.rcrn import EVALUATE

    assert set(EVALUATE) == set(P.FORMS)


@pytest.mark.parametrize("official", [False, True])
def test_an_or_form_takes_the_largest_of_its_match_readouts(official) -> None:
    up = "(and (classify (propagate up (select 5 (local)) u)))"
    down = "(and (classify (propagate down (select 5 (local)) d)))"
    problems = random_set(50, dim=OFFICIAL_SMALL["vis_dim"] if official else SMALL["vis_dim"])
    model, vocab = build(problems, f"(outputs (match (or {up} {down})))", seed=50,
                         official=official)
    out, _ = run(model, problems, vocab)
    a, b = out.values[up], out.values[down]
    assert (a > b).any() and (b > a).any()              # each readout wins somewhere
    if official:                                         # confidences are logits there
        torch.testing.assert_close(out.match_logit, torch.maximum(a, b), rtol=0, atol=0)
        torch.testing.assert_close(out.match_prob, torch.sigmoid(torch.maximum(a, b)))
    else:
        torch.testing.assert_close(out.match_prob, torch.maximum(a, b), rtol=0, atol=0)
    with pytest.raises(P.ProgramError, match=r"\(or \(classify \(local\)\)\): expected a match"):
        P.parse("(outputs (match (or (classify (local)))))")
