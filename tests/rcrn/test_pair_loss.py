"""The pair-ranking term: a mismatched expression's root belief at the referent is ranked
below its matched counterpart's, for the pairs that share a batch."""

import json

import pytest
import torch
import torch.nn.functional as F

from rcrn.batching import Vocab, collate
from rcrn.engine.config import apply_overrides
from rcrn.engine.trainer import Trainer, build_model
from rcrn.losses import LossConfig, counterparts, loss_terms, pair_term, rcrn_loss
from rcrn.structures import GroundingProblem, LanguageGraph
from rcrn.testing import learnable_problems

MODEL = dict(word_dim=16, lstm_hidden=16, joint=32, hidden=32, sim_dim=16, vis_dim=16,
             spatial_dim=4, pair_dim=16, classify_hidden=16, grounding_scale=5.0)


def twin(problem: GroundingProblem, relation: str, id: str, counter_id: str | None,
         match: int) -> GroundingProblem:
    """``problem``'s image with its expression's relation phrase replaced."""
    (rel,) = problem.graph.relations
    subj, obj = (problem.graph.entities[i].text for i in (rel.subject, rel.object))
    graph = LanguageGraph.from_triples(f"{subj} {relation} {obj}", [(subj, relation, obj)])
    return GroundingProblem(graph, problem.proposals, match=match,
                            referent_box=problem.referent_box if match else None, id=id,
                            mismatched_relation=None if match else 0,
                            meta={"counter_id": counter_id})


def pairs_batch():
    """Items: 0 matched, 1 its mismatch (after it), 2 a mismatch before its counterpart
    3, 4 a mismatch whose counterpart is in no batch, 5 a matched item alone."""
    base = [p for p in learnable_problems(12, seed=3) if p.match == 1]
    items = [twin(base[0], "under", "a-pos", "a-neg", 1),
             twin(base[0], "above", "a-neg", "a-pos", 0),
             twin(base[1], "left of", "b-neg", "b-pos", 0),
             twin(base[1], "right of", "b-pos", "b-neg", 1),
             twin(base[2], "near", "c-neg", "c-pos", 0),
             twin(base[3], "on", "d-pos", None, 1)]
    vocab = Vocab.build(items)
    return items, vocab, collate(items, vocab)


def test_counterparts_pair_each_mismatch_with_its_matched_expression_in_the_batch():
    _, _, batch = pairs_batch()
    neg, pos = counterparts(batch)
    assert neg.tolist() == [1, 2] and pos.tolist() == [0, 3]


def test_the_pair_term_ranks_the_mismatch_below_its_counterpart_at_the_referent():
    torch.manual_seed(0)
    _, vocab, batch = pairs_batch()
    model = build_model({"model": MODEL}, vocab)
    out = model(batch)
    total, count = pair_term(out, batch, margin=1.0)
    log_b = out.ground_belief.clamp(min=1e-6).log()
    want = sum(F.softplus(1.0 - (log_b[p, batch.target_index[p]] - log_b[n, batch.target_index[p]]))
               for n, p in ((1, 0), (2, 3)))
    assert count.item() == 2
    torch.testing.assert_close(total, want)
    # the two expressions differ only in their relation: the gradient reaches Relation Sim
    total.backward()
    grads = [p.grad for n, p in model.named_parameters() if n.startswith("rel_sim.")]
    assert any(g is not None and g.abs().sum() > 0 for g in grads)


def test_the_pair_term_is_off_by_default_and_weighted_when_on():
    torch.manual_seed(0)
    _, vocab, batch = pairs_batch()
    out = build_model({"model": MODEL}, vocab)(batch)
    off = rcrn_loss(out, batch, LossConfig())
    assert off["pair"].item() == 0
    assert loss_terms(out, batch, LossConfig())["pair"][1].item() == 0
    on = rcrn_loss(out, batch, LossConfig(pair=2.0, pair_margin=0.5))
    assert on["pair"].item() > 0
    torch.testing.assert_close(on["loss"], off["loss"] + 2.0 * on["pair"])


def test_training_with_the_pair_term_logs_it(tmp_path):
    torch.set_num_threads(1)
    items, _, _ = pairs_batch()
    cfg = apply_overrides({"seed": 0, "model": MODEL,
                           "train": {"steps": 3, "batch_size": 6, "log_every": 1}},
                          ["loss.pair=1.0"])
    Trainer(cfg, items, tmp_path).fit(progress=False)
    logs = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert all(r["pair"] > 0 for r in logs)
    for r in logs:
        assert r["loss"] == pytest.approx(r["grd"] + 3.0 * r["match"] + r["reg"] + r["pair"],
                                          rel=1e-5)
