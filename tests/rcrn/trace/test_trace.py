"""Trace recording: the recorded numbers are the model's, per item, from one forward pass."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

from rcrn import programs as P
from rcrn.batching import Vocab, collate
from rcrn.losses import rcrn_loss
from rcrn.models import RCRN, RCRNConfig
from rcrn.testing import random_problem
from rcrn.trace import Trace, record, trace_problems
from rcrn.trace.writer import cast_batch

SMALL = dict(word_dim=8, lstm_hidden=6, joint=12, hidden=10, sim_dim=7, vis_dim=9,
             spatial_dim=4, pair_dim=6, classify_hidden=5)


def problems_for(seed: int, count: int = 6, max_nodes: int = 6, max_props: int = 14) -> list:
    rng = np.random.default_rng(seed)
    shapes = ["chain", "star", "mixed"]
    # 1..max_nodes entities, proposal counts below and above K
    return [random_problem(rng, int(rng.integers(1, max_nodes + 1)),
                           int(rng.integers(2, max_props + 1)), SMALL["vis_dim"],
                           shape=shapes[i % 3], item_id=f"p{i}") for i in range(count)]


def build(problems: list, program: tuple = P.RCRN_PROGRAM, double: bool = False,
          seed: int = 0) -> tuple[RCRN, Vocab]:
    torch.manual_seed(seed)
    vocab = Vocab.build(problems)
    model = RCRN(RCRNConfig(program=P.to_text(program), **SMALL), len(vocab))
    if double:
        model = model.double()
    return model.eval(), vocab


def run(model: RCRN, problems: list, vocab: Vocab) -> tuple[Any, Any, list[Trace]]:
    batch = cast_batch(collate(problems, vocab), next(model.parameters()).dtype)
    with torch.no_grad(), record(model) as rec:
        out = model(batch)
    return out, batch, rec.traces(batch, problems)


def assert_close_tree(a: Any, b: Any, tol: float = 1e-6, where: str = "") -> None:
    """Equal structure, equal ints / strings / bools, floats within ``tol``."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for k in a:
            assert_close_tree(a[k], b[k], tol, f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close_tree(x, y, tol, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=tol, abs_tol=tol), f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def test_recorded_predictions_and_beliefs_equal_the_model_outputs() -> None:
    problems = problems_for(0)
    model, vocab = build(problems)
    out, batch, traces = run(model, problems, vocab)
    assert [t.id for t in traces] == batch.ids
    up_key = P.to_text(P.propagate("up", P.select(5, P.local()), "match_up"))
    down_key = P.to_text(P.propagate("down", P.select(5, P.local()), "match_down"))
    for g, (t, p) in enumerate(zip(traces, problems)):
        n = len(p.proposals)
        nodes = (batch.node_batch == g).nonzero().flatten().tolist()
        edges = (batch.edge_batch == g).nonzero().flatten().tolist()
        # final predictions, bit for bit
        assert t.match_prob == float(out.match_prob[g])
        assert t.ground_belief == out.ground_belief[g, :n].tolist()
        assert t.ground_index == int(out.ground_index[g])
        assert t.box == out.box[g].tolist()
        assert t.mismatch_index == int(out.mismatch_index[g])
        for e in edges:
            assert t.edge_scores[int(batch.edge_relation[e])] == float(out.edge_scores[e])
        assert len(t.edge_scores) == p.graph.num_relations
        # the grounding branch: the root's bottom-up belief is the model's ground belief
        ground = t.find_belief(kind="propagate", direction="up", branch="ground")
        assert ground is not None and ground.branches == ["ground"]
        assert ground.proposals[t.root] == list(range(n))
        assert ground.values[t.root] == out.ground_belief[g, :n].tolist()
        # every node's belief at every stage, mapped to the item's own proposals
        local = t.belief("(local)")
        for i, v in enumerate(nodes):
            assert local.values[i] == out.values["(local)"].values[v, :n].tolist()
            for key in (up_key, down_key):
                b = out.values[key]
                m = b.mask[v]
                assert t.belief(key).values[i] == b.values[v][m].tolist()
                assert t.belief(key).proposals[i] == (b.slots[v][m] - g * batch.max_boxes
                                                      ).tolist()
        # confidences p^bp / p^td and the readouts they make
        p_up, p_down = t.confidence("up"), t.confidence("down")
        assert p_up.values == out.values[f"(classify {up_key})"][nodes].tolist()
        assert p_down.values == out.values[f"(classify {down_key})"][nodes].tolist()
        assert t.match_prob == pytest.approx(min(p_up.values + p_down.values), abs=1e-7)
        for e in t.edges:
            d = (p_up.values[e.parent] - p_up.values[e.child]
                 + p_down.values[e.child] - p_down.values[e.parent])
            assert t.edge_scores[e.relation] == pytest.approx(d, abs=1e-6)
        # Select's top-K of the local belief: the 5 best proposals, best first
        sel = t.belief("select 5")
        for i in range(t.num_nodes):
            order = sorted(range(n), key=lambda j: -local.values[i][j])[:5]
            assert sel.proposals[i] == order == sel.top_proposals[i]
            assert sel.values[i] == sorted(local.values[i], reverse=True)[:5]
        # labels and graph travel with the trace
        assert t.graph == p.graph.to_dict()
        assert t.boxes == p.proposals.boxes.tolist()
        assert t.truth.get("match") == p.match


def _f_norm(x: list[float]) -> list[float]:
    peak = max([abs(v) for v in x] + [1.0])
    return [v / peak for v in x]


def test_every_propagation_is_reproduced_from_the_recorded_numbers() -> None:
    """β, relation scores, context top-K and input beliefs rebuild each updated belief."""
    problems = problems_for(1, count=5, max_nodes=7)
    model, vocab = build(problems, double=True)
    _, _, traces = run(model, problems, vocab)
    eps = model.config.eps
    checked = 0
    for t in traces:
        local, sel = t.belief("(local)"), t.belief("select 5")
        inputs = {"ground_up": local, "match_up": sel, "match_down": sel}
        for stage in (s for s in t.beliefs if s.kind == "propagate"):
            before = inputs[stage.gate]
            incoming: dict[int, list] = {}
            for r in stage.relations:
                # rows: the target's slots; cols: the context's top-K in this stage
                assert r.rows == stage.proposals[r.target]
                assert r.cols == stage.top_proposals[r.context]
                incoming.setdefault(r.target, []).append(r)
            for v in range(t.num_nodes):
                if v not in incoming:
                    assert stage.beta[v] is None
                    assert stage.values[v] == before.values[v]
                    continue
                (beta,) = stage.beta[v]
                log_agg = [0.0] * len(stage.proposals[v])
                for r in incoming[v]:
                    ctx = stage.top_values[r.context]
                    for a, row in enumerate(r.scores):
                        log_agg[a] += math.log(sum(s * c for s, c in zip(row, ctx)) + eps)
                expect = _f_norm([b * math.exp(beta * la)
                                  for b, la in zip(before.values[v], log_agg)])
                assert stage.values[v] == pytest.approx(expect, rel=1e-9, abs=1e-12)
                checked += 1
        # bottom-up relations come from children, top-down from parents
        for e in t.edges:
            up = [r for r in t.belief("bottom-up (match_up)").relations if r.relation == e.relation]
            down = [r for r in t.belief("top-down (match_down)").relations
                    if r.relation == e.relation]
            assert [(r.target, r.context, r.level) for r in up] == [(e.parent, e.child, e.depth)]
            assert [(r.target, r.context) for r in down] == [(e.child, e.parent)]
        # gate values: GateSum's two β on the local belief, one GateProd β per updated node
        assert local.beta_names == ["app", "pos"]
        assert all(b is not None and len(b) == 2 and all(0 < x < 1 for x in b)
                   for b in local.beta)
    assert checked > 10


def test_traces_of_a_batch_equal_traces_of_each_item_alone() -> None:
    problems = problems_for(2, count=5, max_props=20)
    model, vocab = build(problems, double=True)
    _, _, together = run(model, problems, vocab)
    for p, t in zip(problems, together):
        _, _, (alone,) = run(model, [p], vocab)
        assert_close_tree(t.to_dict(), alone.to_dict(), tol=1e-6, where=p.id)


@pytest.mark.parametrize("program", ["no_top_down", "const_beta"])
def test_ablated_programs_are_traced(program: str) -> None:
    problems = problems_for(3, count=3)
    model, vocab = build(problems, P.ABLATIONS[program])
    out, _, traces = run(model, problems, vocab)
    for g, t in enumerate(traces):
        assert t.match_prob == float(out.match_prob[g])
        assert (t.confidence("down") is None) == (program == "no_top_down")
        labels = [s.label for s in t.stages()]
        assert labels[0].startswith("local") and "bottom-up (ground_up)" in labels


def test_recording_changes_neither_outputs_nor_gradients() -> None:
    problems = problems_for(4, count=4)
    model, vocab = build(problems)
    model.train()
    batch = collate(problems, vocab)

    def step() -> tuple[torch.Tensor, list[torch.Tensor]]:
        model.zero_grad(set_to_none=True)
        out = model(batch)
        loss = rcrn_loss(out, batch)["loss"]
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    loss0, grads0 = step()
    with record(model) as rec:
        loss1, grads1 = step()
        assert rec.has_forward
    assert model._recorders == []
    assert torch.equal(loss0, loss1)
    assert all(torch.equal(a, b) for a, b in zip(grads0, grads1))
    traces = rec.traces(batch, problems)          # still available after the block
    assert all(isinstance(x, float) for x in traces[0].belief("(local)").values[0])


def test_the_latest_forward_is_traced_and_misuse_is_reported() -> None:
    problems = problems_for(5, count=4)
    model, vocab = build(problems)
    rec = record(model)
    with pytest.raises(RuntimeError, match="no complete forward"):
        rec.traces(collate(problems, vocab))
    first, second = collate(problems[:2], vocab), collate(problems[2:], vocab)
    with torch.no_grad(), rec:
        model(first)
        out = model(second)
    traces = rec.traces(second, problems[2:])
    assert [t.id for t in traces] == ["p2", "p3"]
    assert [t.match_prob for t in traces] == out.match_prob.tolist()
    with pytest.raises(ValueError, match="do not match"):
        rec.traces(second, problems[:2])
    rec.clear()
    assert not rec.has_forward


def test_graph_is_rebuilt_from_the_batch_without_problems() -> None:
    problems = problems_for(6, count=3)
    model, vocab = build(problems)
    batch = collate(problems, vocab)
    with torch.no_grad(), record(model) as rec:
        model(batch)
    for p, t in zip(problems, rec.traces(batch, vocab=vocab)):
        g = p.graph
        assert t.node_names() == [e.text for e in g.entities]
        assert t.relation_names() == [r.text for r in g.relations]
        assert [(r["subject"], r["object"]) for r in t.graph["relations"]] == \
            [(r.subject, r.object) for r in g.relations]
        assert t.root == g.root


def test_trace_problems_handles_chunks_and_restores_training_mode() -> None:
    problems = problems_for(7, count=5)
    model, vocab = build(problems, double=True)
    model.train()
    traces = trace_problems(model, vocab, problems, batch_size=2)
    assert model.training
    _, _, direct = run(model.eval(), problems, vocab)
    for a, b in zip(traces, direct):
        assert_close_tree(a.to_dict(), b.to_dict(), tol=1e-6, where=a.id)
    (single,) = trace_problems(model, vocab, problems[0])
    assert single.id == "p0"
