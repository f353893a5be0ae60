"""GITM-MR metrics on hand-computed examples."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.gitm_metrics import as_target, format_table, gitm_metrics
from rcrn.structures import GroundingProblem, LanguageGraph, Prediction, Proposals

BOX = [0.0, 0.0, 10.0, 10.0]


def _items() -> list[dict]:
    return [
        {"id": "a", "match": 1, "referent_box": BOX, "mismatched_relation": None, "length": 5},
        {"id": "b", "match": 1, "referent_box": BOX, "mismatched_relation": None, "length": 20},
        {"id": "c", "match": 0, "referent_box": None, "mismatched_relation": 1, "length": 5},
        {"id": "d", "match": 0, "referent_box": None, "mismatched_relation": 0, "length": 20},
    ]


def _predictions() -> list[Prediction]:
    return [
        # right match, right box
        Prediction(id="a", match_prob=0.9, box=BOX),
        # says mismatched although the box is right: grounding counts only as oracle
        Prediction(id="b", match_prob=0.4, box=BOX),
        # right mismatch, right relation
        Prediction(id="c", match_prob=0.2, mismatched_relation=1),
        # says matched although the relation is right: MRR counts only as oracle
        Prediction(id="d", match_prob=0.7, mismatched_relation=0),
    ]


def test_full_and_length_buckets_hand_computed() -> None:
    m = gitm_metrics(_items(), list(reversed(_predictions())), threshold=10)
    assert m["full"] == {"match": 0.5, "grounding": 0.5, "mrr": 0.5, "grounding_oracle": 1.0,
                         "mrr_oracle": 1.0, "n": 4, "n_matched": 2, "n_mismatched": 2}
    ind, ood = m["in_distribution"], m["out_of_distribution"]
    assert (ind["n"], ind["match"], ind["grounding"], ind["mrr"]) == (2, 1.0, 1.0, 1.0)
    assert (ood["n"], ood["match"], ood["grounding"], ood["mrr"]) == (2, 0.0, 0.0, 0.0)
    assert (ood["grounding_oracle"], ood["mrr_oracle"]) == (1.0, 1.0)
    assert m["threshold"] == 10 and m["n_missing"] == 0


def test_threshold_is_inclusive_for_in_distribution() -> None:
    m = gitm_metrics(_items(), _predictions(), threshold=5)
    assert m["in_distribution"]["n"] == 2
    m = gitm_metrics(_items(), _predictions(), threshold=4.9)
    assert m["in_distribution"]["n"] == 0
    assert m["in_distribution"]["match"] is None


def test_no_threshold_reports_full_only() -> None:
    m = gitm_metrics(_items(), _predictions())
    assert "in_distribution" not in m and "out_of_distribution" not in m


def test_iou_boundary_and_wrong_relation() -> None:
    items = [{"id": "p", "match": 1, "referent_box": BOX, "mismatched_relation": None},
             {"id": "q", "match": 1, "referent_box": BOX, "mismatched_relation": None},
             {"id": "n", "match": 0, "referent_box": None, "mismatched_relation": 2}]
    preds = [Prediction(id="p", match_prob=1.0, box=[0, 0, 10, 5]),      # IoU 0.5: correct
             Prediction(id="q", match_prob=1.0, box=[0, 0, 10, 4.9]),    # IoU 0.49: wrong
             Prediction(id="n", match_prob=0.0, mismatched_relation=1)]  # wrong relation
    m = gitm_metrics(items, preds)["full"]
    assert m["grounding"] == 0.5 and m["grounding_oracle"] == 0.5
    assert m["mrr"] == 0.0 and m["mrr_oracle"] == 0.0 and m["match"] == 1.0


def test_match_threshold_is_half() -> None:
    items = [{"id": "x", "match": 1, "referent_box": None, "mismatched_relation": None},
             {"id": "y", "match": 0, "referent_box": None, "mismatched_relation": 0}]
    m = gitm_metrics(items, [Prediction(id="x", match_prob=0.5),
                             Prediction(id="y", match_prob=0.4999)])["full"]
    assert m["match"] == 1.0
    # a positive without a referent box is left out of grounding
    assert m["grounding"] is None and m["n_matched"] == 1


def test_proposal_index_used_when_no_box() -> None:
    items = [{"id": "p", "match": 1, "referent_box": BOX, "mismatched_relation": None,
              "proposal_boxes": [[50, 50, 60, 60], [0, 0, 10, 10]]}]
    assert gitm_metrics(items, [Prediction(id="p", match_prob=0.8, proposal=1)])[
        "full"]["grounding"] == 1.0
    assert gitm_metrics(items, [Prediction(id="p", match_prob=0.8, proposal=0)])[
        "full"]["grounding"] == 0.0
    # no box and no proposal: wrong
    assert gitm_metrics(items, [Prediction(id="p", match_prob=0.8)])["full"]["grounding"] == 0.0


def test_grounding_problems_are_accepted() -> None:
    graph = LanguageGraph.from_triples("the red circle above the square",
                                       [("the red circle", "above", "the square")])
    proposals = Proposals(boxes=[[0, 0, 10, 10], [20, 20, 30, 30]], image_size=(64, 64))
    pos = GroundingProblem(graph=graph, proposals=proposals, match=1, referent_box=BOX,
                           id="p", meta={"words": 6})
    neg = GroundingProblem(graph=graph, proposals=proposals, match=0, mismatched_relation=0,
                           id="n", meta={"words": 12})
    preds = [Prediction(id="p", match_prob=0.9, proposal=0),
             Prediction(id="n", match_prob=0.1, mismatched_relation=0)]
    m = gitm_metrics([pos, neg], preds, threshold=8)
    assert m["full"]["grounding"] == 1.0 and m["full"]["mrr"] == 1.0
    assert m["in_distribution"]["n"] == 1 and m["out_of_distribution"]["n_mismatched"] == 1
    target = as_target(pos)
    assert target.length == 6 and target.proposal_boxes.shape == (2, 4)
    m = gitm_metrics([pos, neg], preds, threshold=8, length_fn=lambda p: 100)
    assert m["in_distribution"]["n"] == 0


def test_missing_and_duplicate_predictions() -> None:
    preds = _predictions()[:3]
    with pytest.raises(ValueError, match="no prediction.*'d'"):
        gitm_metrics(_items(), preds)
    m = gitm_metrics(_items(), preds, allow_missing=True)
    assert m["n_missing"] == 1 and m["full"]["mrr_oracle"] == 0.5 and m["full"]["match"] == 0.5
    with pytest.raises(ValueError, match="two predictions"):
        gitm_metrics(_items(), _predictions() + [Prediction(id="a", match_prob=0.1)])
    with pytest.raises(ValueError, match="occurs twice"):
        gitm_metrics(_items() + [_items()[0]], _predictions())
    with pytest.raises(ValueError, match="no length"):
        gitm_metrics([{"id": "z", "match": 1}], [Prediction(id="z", match_prob=1)], threshold=3)
    with pytest.raises(ValueError, match="match must be 0 or 1"):
        gitm_metrics([{"id": "z", "match": None}], [Prediction(id="z", match_prob=1)])


def test_negative_without_known_relation_counts_as_error() -> None:
    items = [{"id": "n", "match": 0, "referent_box": None, "mismatched_relation": None}]
    m = gitm_metrics(items, [Prediction(id="n", match_prob=0.0, mismatched_relation=0)])
    assert m["full"]["mrr"] == 0.0 and m["full"]["match"] == 1.0


def test_markdown_table() -> None:
    m = gitm_metrics(_items(), _predictions(), threshold=10)
    table = format_table(m, title="Synthetic test")
    lines = table.strip().splitlines()
    assert lines[0] == "### Synthetic test"
    assert lines[2].startswith("| Part | N | Match% | Grounding% | MRR% |")
    assert "| Full | 4 | 50.00 | 50.00 | 50.00 | 100.00 | 100.00 |" in lines
    assert "| In-distribution (<= 10) | 2 | 100.00 | 100.00 | 100.00 | 100.00 | 100.00 |" in lines
    assert "| Out-of-distribution (> 10) | 2 | 0.00 | 0.00 | 0.00 | 100.00 | 100.00 |" in lines
    short = format_table(gitm_metrics(_items()[:2], _predictions()[:2]), oracle=False)
    assert "oracle" not in short and "| Full | 2 | 50.00 | 50.00 | – |" in short
    assert np.isclose(m["full"]["match"], 0.5)
