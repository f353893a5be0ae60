"""Export to networkx and DGL (DGL faked: it is not installable with this torch)."""

import sys
import types

import numpy as np
import pytest
import torch

from rcrn.batching import Vocab, collate
from rcrn.interop import DGLUnavailableError, to_dgl, to_networkx
from rcrn.structures import GroundingProblem, LanguageGraph, Proposals
from rcrn.testing import random_problem

TEXT = "the Red cup to the left of the plate on the table"


def example_graph():
    # "the plate on the table" points from child to parent: the table's parent is the plate
    return LanguageGraph.from_triples(TEXT, [("the Red cup", "to the left of", "the plate"),
                                             ("the plate", "on", "the table")])


def random_problems(seed=0, sizes=(1, 3, 6, 4)):
    rng = np.random.default_rng(seed)
    return [random_problem(rng, n, 5, 4, shape=s, item_id=f"p{i}")
            for i, (n, s) in enumerate(zip(sizes, ["chain", "star", "mixed", "mixed"]))]


def test_language_graph():
    G = to_networkx(example_graph())
    assert list(G.nodes) == [0, 1, 2] and G.graph["root"] == 0 and G.graph["text"] == TEXT
    assert G.nodes[0] == {"text": "the Red cup", "words": ["the", "Red", "cup"], "head": "cup",
                          "modifiers": [], "span": (0, 3), "depth": 0, "is_root": True}
    assert [G.nodes[i]["depth"] for i in G] == [0, 1, 2]
    assert not G.nodes[2]["is_root"]
    assert sorted(G.edges) == [(0, 1), (1, 2)]
    e = G.edges[1, 2]
    assert e["text"] == "on" and e["relation"] == 1 and e["parent_is_subject"]
    assert (e["subject"], e["object"]) == (1, 2) and e["spo_text"] == "the plate on the table"
    # the root as an object: the edge still points root -> child
    g = LanguageGraph.from_triples(TEXT, [("the Red cup", "to the left of", "the plate")],
                                   root="the plate")
    H = to_networkx(g)
    assert list(H.edges) == [(1, 0)] and not H.edges[1, 0]["parent_is_subject"]
    assert H.nodes[1]["is_root"] and H.graph["root"] == 1


def test_batch_graphs_equal_the_language_graphs():
    problems = random_problems()
    vocab = Vocab.build(problems)
    batch = collate(problems, vocab)
    graphs = to_networkx(batch, vocab=vocab)
    assert len(graphs) == len(problems)
    for G, p in zip(graphs, problems):
        H = to_networkx(p)
        assert G.graph["id"] == p.id and G.graph["root"] == p.graph.root
        assert G.graph["match"] == p.match and G.graph["target_index"] == p.target_index
        assert G.graph["mismatch"] is None
        assert set(G.edges) == set(H.edges)
        for v in H:
            for key in ("text", "depth", "is_root"):
                assert G.nodes[v][key] == H.nodes[v][key], (p.id, v, key)
        for e in H.edges:
            for key in ("relation", "text", "spo_text", "subject", "object",
                        "parent_is_subject"):
                assert G.edges[e][key] == H.edges[e][key], (p.id, e, key)
    # the PyG export of the same batch agrees on structure and names
    pyg = batch.to_pyg()
    for g, G in enumerate(graphs):
        data = pyg.get_example(g)
        assert data.num_nodes == G.number_of_nodes()
        assert sorted(map(tuple, data.edge_index.t().tolist())) == sorted(G.edges)
        assert data.depth.tolist() == [G.nodes[v]["depth"] for v in range(data.num_nodes)]
        rel = {tuple(e): int(r) for e, r in zip(data.edge_index.t().tolist(), data.relation)}
        assert rel == {e: G.edges[e]["relation"] for e in G.edges}


def test_batch_text_is_normalised_and_spans_are_optional():
    problem = GroundingProblem(example_graph(), Proposals(np.zeros((2, 4)), (10, 10)),
                               match=1, referent_box=np.zeros(4), mismatched_relation=1,
                               id="x")
    vocab = Vocab.build([problem])
    batch = collate([problem], vocab)
    G = to_networkx(batch, index=0, vocab=vocab)
    assert G.nodes[0]["text"] == "the red cup" and G.edges[0, 1]["text"] == "to the left of"
    assert G.graph["mismatch"] == 1 and G.graph["match"] == 1 and G.graph["target_index"] == 0
    if getattr(batch, "edge_span", None) is not None:
        batch.edge_span = None  # the relation phrase from the spo words instead
        assert to_networkx(batch, 0, vocab).edges[0, 1]["text"] == "to the left of"
    small = Vocab(["the", "cup"])
    G = to_networkx(collate([problem], small), 0, small)
    assert G.nodes[0]["text"] == "the <unk> cup"
    plain = to_networkx(batch, 0)
    assert "text" not in plain.nodes[0] and plain.nodes[0]["token_ids"] == \
        vocab.encode(["the", "red", "cup"])


def test_proposals_as_attributes():
    problems = random_problems(sizes=(2, 3))
    problems[1].proposals = Proposals(problems[1].proposals.boxes[:3], (640, 480),
                                      features=problems[1].proposals.features[:3])
    problems[1].referent_box = None
    vocab = Vocab.build(problems)
    batch = collate(problems, vocab)
    G = to_networkx(batch, 1, proposals=True, features=True)
    np.testing.assert_allclose(G.graph["boxes"], problems[1].proposals.boxes)
    np.testing.assert_allclose(G.graph["features"], problems[1].proposals.features)
    assert G.graph["image_size"] == (640, 480) and G.graph["target_index"] is None
    assert "features" not in to_networkx(batch, 1, proposals=True).graph
    H = to_networkx(problems[0], proposals=True, features=True)
    np.testing.assert_array_equal(H.graph["boxes"], problems[0].proposals.boxes)
    assert H.graph["features"].shape == (5, 4)
    assert len(to_networkx(problems)) == 2 and to_networkx(problems, 1).graph["id"] == "p1"
    with pytest.raises(IndexError):
        to_networkx(batch, 2)
    with pytest.raises(ValueError, match="no proposals"):
        to_networkx(problems[0].graph, proposals=True)
    with pytest.raises(TypeError):
        to_networkx(42)


def test_to_dgl_without_dgl_says_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "dgl", None)  # import dgl -> ImportError
    problems = random_problems()
    batch = collate(problems, Vocab.build(problems))
    with pytest.raises(DGLUnavailableError, match="torch 2.2") as info:
        to_dgl(batch)
    assert isinstance(info.value, ImportError)
    with pytest.raises(ImportError, match="to_pyg"):
        to_dgl(example_graph())


class FakeGraph:
    def __init__(self, data, num_nodes, idtype, device):
        self.src, self.dst = data
        self.num_nodes, self.idtype, self.device = num_nodes, idtype, device
        self.ndata, self.edata, self.calls = {}, {}, []

    def set_batch_num_nodes(self, counts):
        self.calls.append(("set_batch_num_nodes", counts.tolist()))

    def set_batch_num_edges(self, counts):
        self.calls.append(("set_batch_num_edges", counts.tolist()))


@pytest.fixture
def fake_dgl(monkeypatch):
    module = types.ModuleType("dgl")
    module.made = []

    def graph(data, num_nodes=None, idtype=None, device=None):
        g = FakeGraph(data, num_nodes, idtype, device)
        module.made.append(g)
        return g

    module.graph = graph
    monkeypatch.setitem(sys.modules, "dgl", module)
    return module


def test_to_dgl_builds_the_batched_graph(fake_dgl):
    problems = random_problems()
    vocab = Vocab.build(problems)
    batch = collate(problems, vocab)
    g = to_dgl(batch)
    assert fake_dgl.made == [g]
    assert torch.equal(g.src, batch.edge_index[0]) and torch.equal(g.dst, batch.edge_index[1])
    assert g.num_nodes == batch.num_nodes and g.idtype == torch.int64
    assert g.calls == [("set_batch_num_nodes", [1, 3, 6, 4]),
                       ("set_batch_num_edges", [0, 2, 5, 3])]
    assert set(g.ndata) == {"depth", "is_root", "batch", "tokens", "lengths"}
    assert set(g.edata) == {"relation", "parent_is_subject", "batch", "tokens", "lengths"}
    assert torch.equal(g.ndata["depth"], batch.node_depth)
    assert g.ndata["is_root"].nonzero().flatten().tolist() == batch.root.tolist()
    assert torch.equal(g.edata["relation"], batch.edge_relation)
    assert torch.equal(g.edata["tokens"], batch.spo_tokens)
    # one language graph, with and without a vocabulary
    graph = example_graph()
    h = to_dgl(graph, vocab=Vocab.build([problems[0]]))
    assert (h.src.tolist(), h.dst.tolist(), h.num_nodes) == ([0, 1], [1, 2], 3)
    assert h.ndata["depth"].tolist() == [0, 1, 2] and h.ndata["is_root"].tolist() == [
        True, False, False]
    assert h.edata["parent_is_subject"].tolist() == [True, True]
    assert h.ndata["lengths"].tolist() == [3, 2, 2] and h.edata["lengths"].tolist() == [9, 5]
    assert h.calls == [("set_batch_num_nodes", [3]), ("set_batch_num_edges", [2])]
    bare = to_dgl(graph)
    assert "tokens" not in bare.ndata and "tokens" not in bare.edata
    with pytest.raises(TypeError):
        to_dgl(problems[0])
