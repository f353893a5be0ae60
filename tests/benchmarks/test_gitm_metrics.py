"""GITM-MR metrics on hand-computed examples, under both rule sets.

``rules="official"`` (the default) is the release's ``refdet_evaluation.py``: match
``p > 0.5``, IoU with ``w = x2 - x1 + 1`` strictly above 0.5, grounding over every
positive, each item's own ``len(expression.split())`` against the threshold.
``rules="toolkit"``: ``p >= 0.5``, IoU ``>= 0.5`` with ``w = x2 - x1``, grounding over
positives with a box, the pair's positive word count.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from benchmarks.gitm_metrics import RULES, as_target, format_table, gitm_metrics
from benchmarks.gitm_mr import GITMMRBenchmark
from benchmarks.gitm_mr.layout import token_count, word_count
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
    assert m["threshold"] == 10 and m["n_missing"] == 0 and m["rules"] == "official"
    # no tie, no box question: both rule sets agree here
    toolkit = gitm_metrics(_items(), _predictions(), threshold=10, rules="toolkit")
    assert toolkit["rules"] == "toolkit"
    assert {k: toolkit[k] for k in ("full", "in_distribution", "out_of_distribution")} == {
        k: m[k] for k in ("full", "in_distribution", "out_of_distribution")}


def test_threshold_is_inclusive_for_in_distribution() -> None:
    m = gitm_metrics(_items(), _predictions(), threshold=5)
    assert m["in_distribution"]["n"] == 2
    m = gitm_metrics(_items(), _predictions(), threshold=4.9)
    assert m["in_distribution"]["n"] == 0
    assert m["in_distribution"]["match"] is None


def test_no_threshold_reports_full_only() -> None:
    m = gitm_metrics(_items(), _predictions())
    assert "in_distribution" not in m and "out_of_distribution" not in m


def _grounded(gt: list[float], pred: list[float], rules: str) -> bool:
    items = [{"id": "p", "match": 1, "referent_box": gt}]
    m = gitm_metrics(items, [Prediction(id="p", match_prob=1.0, box=pred)], rules=rules)
    assert m["full"]["grounding"] == m["full"]["grounding_oracle"]
    return m["full"]["grounding"] == 1.0


def test_iou_exactly_half_under_both_conventions() -> None:
    # [0,0,9,9] vs [0,0,9,4]: inclusive 10*5 / (10*10) = 0.5 exactly, exclusive 36/81
    assert not _grounded([0, 0, 9, 9], [0, 0, 9, 4], "official")     # 0.5 is not > 0.5
    assert not _grounded([0, 0, 9, 9], [0, 0, 9, 4], "toolkit")      # 0.444
    # [0,0,10,10] vs [0,0,10,5]: exclusive 50/100 = 0.5 exactly, inclusive 66/121
    assert _grounded(BOX, [0, 0, 10, 5], "toolkit")                  # 0.5 >= 0.5
    assert _grounded(BOX, [0, 0, 10, 5], "official")                 # 0.545
    # [0,0,10,4.9]: exclusive 0.49 (wrong), inclusive 64.9/121 = 0.536 (right)
    assert _grounded(BOX, [0, 0, 10, 4.9], "official")
    assert not _grounded(BOX, [0, 0, 10, 4.9], "toolkit")
    # iou_threshold moves the boundary under both: strict official, inclusive toolkit
    items = [{"id": "p", "match": 1, "referent_box": BOX}]
    preds = [Prediction(id="p", match_prob=1.0, box=[0, 0, 10, 5])]
    assert gitm_metrics(items, preds, iou_threshold=66 / 121)["full"]["grounding"] == 0.0
    assert gitm_metrics(items, preds, iou_threshold=0.5, rules="toolkit")["full"][
        "grounding"] == 1.0


def test_wrong_relation_and_oracle() -> None:
    items = [{"id": "n", "match": 0, "referent_box": None, "mismatched_relation": 2},
             {"id": "o", "match": 0, "referent_box": None, "mismatched_relation": 1}]
    preds = [Prediction(id="n", match_prob=0.0, mismatched_relation=1),   # wrong relation
             Prediction(id="o", match_prob=0.9, mismatched_relation=1)]   # said matched
    for rules in RULES:
        m = gitm_metrics(items, preds, rules=rules)["full"]
        assert (m["mrr"], m["mrr_oracle"], m["match"]) == (0.0, 0.5, 0.5)


def test_match_at_exactly_half() -> None:
    items = [{"id": "x", "match": 1, "referent_box": BOX, "mismatched_relation": None},
             {"id": "y", "match": 0, "referent_box": None, "mismatched_relation": 0}]
    preds = [Prediction(id="x", match_prob=0.5, box=BOX),
             Prediction(id="y", match_prob=0.5, mismatched_relation=0)]
    official = gitm_metrics(items, preds)["full"]
    toolkit = gitm_metrics(items, preds, rules="toolkit")["full"]
    # official: logit > 0, so p = 0.5 says "mismatched"; toolkit: p >= 0.5 says "matched"
    assert (official["match"], official["grounding"], official["mrr"]) == (0.5, 0.0, 1.0)
    assert (toolkit["match"], toolkit["grounding"], toolkit["mrr"]) == (0.5, 1.0, 0.0)
    assert official["grounding_oracle"] == toolkit["grounding_oracle"] == 1.0
    assert official["mrr_oracle"] == toolkit["mrr_oracle"] == 1.0
    nudged = [Prediction(id="x", match_prob=0.5000001, box=BOX),
              Prediction(id="y", match_prob=0.4999, mismatched_relation=0)]
    assert gitm_metrics(items, nudged)["full"]["match"] == 1.0


def test_positive_without_box_is_in_the_official_denominator() -> None:
    items = [{"id": "x", "match": 1, "referent_box": BOX},
             {"id": "z", "match": 1, "referent_box": None}]
    preds = [Prediction(id="x", match_prob=0.9, box=BOX), Prediction(id="z", match_prob=0.9)]
    official = gitm_metrics(items, preds)["full"]
    toolkit = gitm_metrics(items, preds, rules="toolkit")["full"]
    assert official["grounding"] == official["grounding_oracle"] == 0.5
    assert toolkit["grounding"] == toolkit["grounding_oracle"] == 1.0
    only = gitm_metrics(items[1:], preds[1:], rules="toolkit")["full"]
    assert only["grounding"] is None and only["n_matched"] == 1
    assert gitm_metrics(items[1:], preds[1:])["full"]["grounding"] == 0.0


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
    with pytest.raises(ValueError, match="unknown GITM-MR metric rules 'paper'"):
        gitm_metrics(_items(), _predictions(), rules="paper")


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
    assert lines[-1] == "Rules: official (SHTUPLUS/GITM-MR refdet_evaluation.py)"
    toolkit = format_table(gitm_metrics(_items(), _predictions(), rules="toolkit"))
    assert toolkit.strip().splitlines()[-1].startswith("Rules: toolkit (")
    assert "Rules" not in format_table({"full": m["full"]})
    short = format_table(gitm_metrics(_items()[:2], _predictions()[:2]), oracle=False)
    assert "oracle" not in short and "| Full | 2 | 50.00 | 50.00 | – |" in short
    assert np.isclose(m["full"]["match"], 0.5)


# ------------------------------------------------- lengths through the GITM-MR adapter
# threshold 11.  (positive, negative) expressions with their relation phrase; the
# official length is each expression's own len(split()), the toolkit one the pair's
# positive word count (punctuation-only tokens skipped).
PAIRS = {
    # positive 13 tokens; negative 10 tokens: OOD -> in-distribution by substitution
    "a": ("the tall man with a hat", "to the left of", "behind", "the red car", ""),
    # positive 11 tokens; negative 14 tokens: in-distribution -> OOD by substitution
    "b": ("the big dog", "riding", "to the right of", "the small red bike", "in the park"),
    # positive 12 tokens of which 3 are punctuation (9 words); negative 11 tokens
    "c": ("the cup ,", "next to", "under", "the plate ,", "on the table ."),
}
GRAPHS: dict[str, LanguageGraph] = {}


def _text(subj: str, rel: str, obj: str, tail: str) -> str:
    return " ".join(part for part in (subj, rel, obj, tail) if part)


def _parse(text: str) -> LanguageGraph:
    return GRAPHS[text]


def _release(root: Path) -> Path:
    pos, neg, counter = {}, {}, {}
    for k, (subj, rel, foil, obj, tail) in PAIRS.items():
        s = subj.replace(" ,", "")
        o = obj.replace(" ,", "")
        for sid, r, out in ((f"1{k}", rel, pos), (f"2{k}", foil, neg)):
            text = _text(subj, r, obj, tail)
            GRAPHS[text] = LanguageGraph.from_triples(text, [(s, r, o)])
            out[sid] = {"image_id": "img", "bbox": [10, 10, 20, 20], "expression": text}
        start = len(subj.split())
        neg[f"2{k}"].update(foil_pos=0, foil_indices=[start, start + len(foil.split())],
                            foil_phrase=foil, target_phrase=rel)
        counter[f"1{k}"] = {"sentid": f"2{k}", "counter_type": "rel"}
    for sub in ("expression", "counter"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "expression" / "test_expressions_ori_rel.json").write_text(json.dumps(pos))
    (root / "expression" / "test_expressions_foil_rel.json").write_text(json.dumps(neg))
    (root / "counter" / "test_id2id_foil_rel.pkl").write_bytes(pickle.dumps(counter))
    return root


def _length_predictions() -> list[Prediction]:
    right = [10, 10, 30, 30]  # official IoU with gt_xyxy [10, 10, 29, 29]: 400/441
    return [
        Prediction(id="pos/1a", match_prob=0.9, box=right),
        Prediction(id="neg/2a", match_prob=0.1, mismatched_relation=0),
        Prediction(id="pos/1b", match_prob=0.9, box=right),
        Prediction(id="neg/2b", match_prob=0.8, mismatched_relation=0),   # said matched
        Prediction(id="pos/1c", match_prob=0.5, box=right),               # the tie
        Prediction(id="neg/2c", match_prob=0.2),   # names no relation (one is in range)
    ]


def _rates(bucket: dict) -> tuple:
    return tuple(bucket[k] for k in ("n", "match", "grounding", "mrr", "grounding_oracle",
                                     "mrr_oracle"))


def test_lengths_straddling_the_threshold(tmp_path: Path) -> None:
    bench = GITMMRBenchmark(_release(tmp_path / "gitm"), "test", parser=_parse, threshold=11)
    assert bench.rules == "official"
    assert [it["tokens"] for it in bench.items] == [13, 10, 11, 14, 12, 11]
    assert [it["length"] for it in bench.items] == [13, 13, 11, 11, 9, 9]
    assert token_count("the cup , under the plate , on the table .") == 11
    assert word_count("the cup , under the plate , on the table .") == 8
    preds = _length_predictions()
    m = bench.evaluate(preds)
    assert m["rules"] == "official" and m["threshold"] == 11
    # in: neg/2a (10), pos/1b (11), neg/2c (11); out: pos/1a (13), neg/2b (14), pos/1c (12)
    assert _rates(m["full"]) == pytest.approx((6, 4 / 6, 2 / 3, 1 / 3, 1.0, 2 / 3))
    assert _rates(m["in_distribution"]) == pytest.approx((3, 1.0, 1.0, 0.5, 1.0, 0.5))
    assert _rates(m["out_of_distribution"]) == pytest.approx((3, 1 / 3, 0.5, 0.0, 1.0, 1.0))
    assert (m["in_distribution"]["n_matched"], m["in_distribution"]["n_mismatched"]) == (1, 2)
    # toolkit: in: the b and c pairs (11, 9 words); out: the a pair (13)
    t = bench.evaluate(preds, rules="toolkit")
    assert t["rules"] == "toolkit"
    assert _rates(t["full"]) == pytest.approx((6, 5 / 6, 1.0, 1 / 3, 1.0, 2 / 3))
    assert _rates(t["in_distribution"]) == pytest.approx((4, 0.75, 1.0, 0.0, 1.0, 0.5))
    assert _rates(t["out_of_distribution"]) == pytest.approx((2, 1.0, 1.0, 1.0, 1.0, 1.0))
    same = GITMMRBenchmark(tmp_path / "gitm", "test", parser=_parse, threshold=11,
                           rules="toolkit").evaluate(preds)
    assert {k: same[k] for k in ("full", "in_distribution", "out_of_distribution")} == {
        k: t[k] for k in ("full", "in_distribution", "out_of_distribution")}
    json.dumps(m)  # the metrics stay JSON


def test_adapter_rules_errors(tmp_path: Path) -> None:
    root = _release(tmp_path / "gitm")
    with pytest.raises(ValueError, match="unknown GITM-MR metric rules 'paper'"):
        GITMMRBenchmark(root, "test", parser=_parse, rules="paper")
    with pytest.raises(ValueError, match="unknown GITM-MR metric rules 'x'"):
        GITMMRBenchmark(root, "test", parser=_parse).evaluate(_length_predictions(), rules="x")
