"""The batched model against the per-tree reference, and its symmetries."""

import numpy as np
import pytest
import torch

from rcrn import programs as P
from rcrn.batching import Vocab, collate
from rcrn.models import RCRN, RCRNConfig
from rcrn.testing import random_problem, reference_forward

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
SMALL = dict(word_dim=8, lstm_hidden=6, joint=12, hidden=10, sim_dim=7, vis_dim=9,
             spatial_dim=4, pair_dim=6, classify_hidden=5)


def build(problems, program=P.RCRN_PROGRAM, k=5, seed=0, device="cpu", **extra):
    torch.manual_seed(seed)
    vocab = Vocab.build(problems)
    cfg = RCRNConfig(k=k, program=P.to_text(program), **SMALL, **extra)
    model = RCRN(cfg, len(vocab)).double()
    return model.eval().to(device), vocab


def random_set(seed, count=6, max_nodes=10, max_props=120):
    rng = np.random.default_rng(seed)
    shapes = ["chain", "star", "mixed"]
    return [random_problem(rng, int(rng.integers(1, max_nodes + 1)),
                           int(rng.integers(1, max_props + 1)), SMALL["vis_dim"],
                           shape=shapes[i % 3], item_id=f"p{i}") for i in range(count)]


def run(model, problems, vocab):
    batch = collate(problems, vocab).to(next(model.parameters()).device)
    batch.box_feats = batch.box_feats.double()
    batch.boxes, batch.boxes_px = batch.boxes.double(), batch.boxes_px.double()
    batch.referent_box = batch.referent_box.double()
    with torch.no_grad():
        return model(batch), batch


def close(a, b):
    torch.testing.assert_close(torch.as_tensor(a, dtype=torch.float64).cpu(),
                               torch.as_tensor(b, dtype=torch.float64).cpu(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed,k,program,extra", [
    (0, 5, "rcrn", {}), (1, 3, "rcrn", {}), (2, 8, "rcrn", {"classify_log": True}),
    (3, 5, "no_top_down", {}), (4, 5, "const_beta", {}), (5, 2, "no_context_in_beta", {}),
    (6, 5, "no_language_in_beta", {}), (7, 5, "rcrn", {"message_norm": "max"}),
    (8, 3, "rcrn", {"message_norm": "max", "classify_log": True, "eps": 0.01}),
    (9, 5, "rcrn", {"message_norm": "max",
                    "message_reduce": {"match_up": "mean", "match_down": "mean"}}),
    (14, 5, "rcrn", {"message_norm": "max", "message_reduce": {"match_up": "min"}}),
    (15, 3, "rcrn", {"message_reduce": {"match_up": "min", "ground_up": "min"}}),
    (10, 5, "edge_and", {}), (11, 4, "edge_and", {"message_norm": "max"}),
    (12, 5, "rcrn", {"message_norm": "max", "relation_diff": True}),
    (16, 5, "rcrn", {"relation_gaps": True, "relation_diff": True}),
    (13, 3, "rcrn", {"relation_align": 0.0}),
])
def test_batched_equals_reference(seed, k, program, extra, device):
    problems = random_set(seed)
    # K larger and smaller than the proposal counts, 1-10 nodes, chains / stars / mixed
    model, vocab = build(problems, P.ABLATIONS[program], k=k, seed=seed, device=device,
                         **extra)
    out, batch = run(model, problems, vocab)
    ref = reference_forward(model, problems, vocab)
    up_key = P.to_text(P.ABLATIONS[program][1][1])  # (ground X)
    ground_up = out.values[up_key].values
    for g, (p, r) in enumerate(zip(problems, ref)):
        n = len(p.proposals)
        nodes = (batch.node_batch == g).nonzero().flatten().cpu()
        close(out.match_prob[g], r["match_prob"])
        close(out.ground_belief[g, :n], r["ground_belief"])
        assert not out.ground_belief[g, n:].any()
        assert int(out.ground_index[g]) == r["ground_index"]
        close(out.box[g], r["box"])
        for local_i, node in enumerate(nodes.tolist()):
            close(ground_up[node, :n], r["ground_up"][local_i])
        edges = (batch.edge_batch == g).nonzero().flatten()
        if len(edges):
            close(out.edge_scores[edges], r["edge_scores"][batch.edge_relation[edges]])
        assert int(out.mismatch_index[g]) == r["mismatch_index"]


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
    close(scale(a.ground_belief), scale(b.ground_belief))
    assert not torch.allclose(a.match_prob, b.match_prob)
    with pytest.raises(ValueError, match="message_norm"):
        build(problems, message_norm="sum")
    with pytest.raises(ValueError, match=r"message_reduce names \['nope'\]"):
        build(problems, message_reduce={"nope": "min"})
    with pytest.raises(ValueError, match=r"message_reduce values .* \['max'\]"):
        build(problems, message_reduce={"match_up": "max"})


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
