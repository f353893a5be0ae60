"""The relation-blame term: in a mismatched expression, the mismatched relation's Compare
score is ranked below the scores of the graph's other relations."""

import json

import pytest
import torch
import torch.nn.functional as F

from rcrn.batching import Vocab, collate
from rcrn.engine.config import apply_overrides
from rcrn.engine.trainer import Trainer, build_model
from rcrn.losses import LossConfig, blame_term, rcrn_loss
from rcrn.structures import GroundingProblem, LanguageGraph
from rcrn.testing import learnable_problems

MODEL = dict(word_dim=16, lstm_hidden=16, joint=32, hidden=32, sim_dim=16, vis_dim=16,
             spatial_dim=4, pair_dim=16, classify_hidden=16, grounding_scale=5.0)

TRIPLES = [("cup", "left of", "plate"), ("plate", "on", "table"), ("cup", "near", "lamp")]


def item(base: GroundingProblem, relations: int, mismatch: int | None, id: str
         ) -> GroundingProblem:
    """``base``'s image with a graph of the first ``relations`` of :data:`TRIPLES`."""
    triples = TRIPLES[:relations]
    text = " ".join(w for t in triples for w in t)
    graph = LanguageGraph.from_triples(text, triples, root="cup")
    match = int(mismatch is None)
    return GroundingProblem(graph, base.proposals, match=match,
                            referent_box=base.referent_box if match else None, id=id,
                            mismatched_relation=mismatch)


def blame_batch():
    """Items: 0 mismatched at relation 1 of 3, 1 mismatched at relation 0 of 2, 2 matched,
    3 mismatched with one relation (nothing to rank), 4 mismatched, relation unknown."""
    base = [p for p in learnable_problems(12, seed=3) if p.match == 1]
    items = [item(base[0], 3, 1, "a"), item(base[1], 2, 0, "b"), item(base[2], 3, None, "c"),
             item(base[3], 1, 0, "d"), item(base[0], 2, None, "e")]
    items[4].match = 0
    vocab = Vocab.build(items)
    return items, vocab, collate(items, vocab)


def test_the_blame_term_ranks_the_mismatched_relation_below_the_others_of_its_graph():
    torch.manual_seed(0)
    _, vocab, batch = blame_batch()
    model = build_model({"model": MODEL}, vocab)
    out = model(batch)
    total, count = blame_term(out, batch, margin=1.0)

    def score(g: int, k: int) -> torch.Tensor:
        (e,) = ((batch.edge_batch == g) & (batch.edge_relation == k)).nonzero().flatten()
        return out.edge_scores[e]

    want = (sum(F.softplus(1.0 - (score(0, j) - score(0, 1))) for j in (0, 2)) / 2
            + F.softplus(1.0 - (score(1, 1) - score(1, 0))))
    assert count.item() == 2
    torch.testing.assert_close(total, want)
    total.backward()
    grads = [p.grad for n, p in model.named_parameters() if n.startswith("classify")]
    assert any(g is not None and g.abs().sum() > 0 for g in grads)


def test_the_blame_term_is_off_by_default_and_weighted_when_on():
    torch.manual_seed(0)
    _, vocab, batch = blame_batch()
    out = build_model({"model": MODEL}, vocab)(batch)
    off = rcrn_loss(out, batch, LossConfig())
    assert off["blame"].item() == 0
    on = rcrn_loss(out, batch, LossConfig(blame=2.0))
    assert on["blame"].item() > 0
    torch.testing.assert_close(on["loss"], off["loss"] + 2.0 * on["blame"])


def test_training_with_the_blame_term_logs_it(tmp_path):
    torch.set_num_threads(1)
    items, _, _ = blame_batch()
    cfg = apply_overrides({"seed": 0, "model": MODEL,
                           "train": {"steps": 3, "batch_size": 5, "log_every": 1}},
                          ["loss.blame=1.0"])
    Trainer(cfg, items, tmp_path).fit(progress=False)
    logs = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert all(r["blame"] > 0 for r in logs)
    for r in logs:
        assert r["loss"] == pytest.approx(r["grd"] + 3.0 * r["match"] + r["reg"] + r["blame"],
                                          rel=1e-5)
