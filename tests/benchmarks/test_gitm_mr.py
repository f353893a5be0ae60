"""The GITM-MR release loader: pairing, parses, proposals, subsets, metrics, bad input."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import h5py
import numpy as np
import pytest

import benchmarks
from benchmarks.base import Benchmark, DataError
from benchmarks.gitm_mr import GITMMRBenchmark, canonical_subset
from benchmarks.gitm_mr.benchmark import foil_word_span, relation_order
from rcrn.boxes import xywh_to_xyxy
from rcrn.cli import main
from rcrn.structures import Prediction

VOCAB = ["<pad>", "<unk>", "the", "tall", "man", "with", "a", "black", "hat", "to", "left", "of",
         "small", "red", "car", "right", "woman", "holding", "umbrella", "on", "top", "big",
         "wooden", "table", "next", "dog", "under", "bench", "above", "ball"]
W = {w: i for i, w in enumerate(VOCAB)}

MAN = "the tall man with a black hat"
CAR = "the small red car"
POSITIVES = {
    "11": (1, [10, 10, 20, 20], f"{MAN} to the left of {CAR}"),                  # 15 words
    "12": (1, [9, 9, 22, 19], "the woman that is holding the umbrella which is on top of the "
                              "big wooden table in the kitchen"),                # 19 words
    "13": (7, [50, 50, 10, 10], "the dog under the bench"),                      # 5 words
    "14": (7, [0, 0, 4, 4], "the red ball"),                                     # unpaired
}
NEGATIVES = {
    "21": (1, f"{MAN} to the right of {CAR}", 0, [7, 11], "to the right of", "to the left of"),
    # foil_indices with an inclusive end, as some releases write them
    "22": (1, "the woman that is holding the umbrella which is next to the big wooden table in "
              "the kitchen", 0, [9, 10], "next to", "on top of"),
    "23": (7, "the dog above the bench", 0, [2, 3], "above", "under"),
}
COUNTER = {11: {"sentid": 21, "counter_type": "rel"}, "12": {"sentid": "22", "counter_type": "rel"},
           13: {"sentid": 23, "counter_type": "rel"}}


def ids(words: str) -> list[int]:
    return [W[w] for w in words.split()]


def two(subj: str, rel: str, obj: str, full_spo: bool = False) -> dict:
    spo = f"{subj} {rel} {obj}" if full_spo else rel
    return {"entity_phrase_list": [ids(subj), ids(obj)], "spo_phrase": [ids(spo)],
            "adj_matrix": np.array([[-1, 0], [-1, -1]]),
            "parent_matrix": np.array([[0, 1], [0, 0]]), "referent": 0}


def three(rel_b: str) -> dict:
    # phrase 0 joins umbrella -> table, phrase 1 woman -> umbrella: not in the
    # row-major order of adj_matrix, yet relation j of the graph is phrase j
    return {"entity_phrase_list": [ids("the woman"), ids("the umbrella"),
                                   ids("the big wooden table")],
            "spo_phrase": [ids(rel_b), ids("holding")],
            "adj_matrix": np.array([[-1, 1, -1], [-1, -1, 0], [-1, -1, -1]]),
            "parent_matrix": np.zeros((3, 3), dtype=int), "referent": np.int64(0)}


def write_release(root: Path, split: str = "train") -> Path:
    for sub in ("expression", "counter", "parse", "small", "vinvl_objects", "word_embedding"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "word_embedding" / "vocabulary_72700.txt").write_text("\n".join(VOCAB) + "\n")
    pos = {k: {"image_id": img, "bbox": box, "expression": e, "num_nodes": 2}
           for k, (img, box, e) in POSITIVES.items()}
    neg = {k: {"image_id": img, "bbox": POSITIVES[str(int(k) - 10)][1], "expression": e,
               "foil_pos": fp, "foil_indices": fi, "foil_phrase": f, "target_phrase": t}
           for k, (img, e, fp, fi, f, t) in NEGATIVES.items()}
    (root / "expression" / f"{split}_expressions_ori_rel.json").write_text(json.dumps(pos))
    (root / "expression" / f"{split}_expressions_foil_rel.json").write_text(json.dumps(neg))
    (root / "counter" / f"{split}_id2id_foil_rel.pkl").write_bytes(pickle.dumps(COUNTER))
    pos_graphs = {"11": two(MAN, "to the left of", CAR, full_spo=True), "12": three("on top of"),
                  13: two("the dog", "under", "the bench"),
                  "14": {"entity_phrase_list": [ids("the red ball")], "spo_phrase": [],
                         "adj_matrix": np.full((1, 1), -1), "parent_matrix": np.zeros((1, 1)),
                         "referent": 0}}
    neg_graphs = {"21": two(MAN, "to the right of", CAR, full_spo=True), "22": three("next to"),
                  "23": two("the dog", "above", "the bench")}
    (root / "parse" / f"{split}_graphs.pkl").write_bytes(pickle.dumps(pos_graphs))
    (root / "parse" / f"{split}_foil_rel_graphs.pkl").write_bytes(pickle.dumps(neg_graphs))
    small = root / "small"
    (small / f"{split}_small_sent_ids_16.json").write_text(json.dumps({"pos": ["11", "13"]}))
    (root / "small" / f"{split}_small_sent_ids_11.json").write_text(json.dumps({"pos": [13]}))
    boxes = {"1": [[0, 0, 5, 5], [10, 10, 30, 30], [9, 9, 31, 28]],
             "7": [[0, 0, 10, 10], [48, 48, 61, 61], [50, 50, 55, 55]]}
    info = {img: {"size": (100, 80), "num_objs": 3, "box": np.array(b, dtype=np.float32),
                  "cls": ["a", "b", "c"], "file": 0, "idx": row}
            for row, (img, b) in enumerate(boxes.items())}
    (root / "vinvl_objects" / "rois_info.pkl").write_bytes(pickle.dumps(info))
    with h5py.File(root / "vinvl_objects" / "gt_objects_0.h5", "w") as h5:
        h5["features"] = np.arange(2 * 4 * 8, dtype=np.float32).reshape(2, 4, 8)
    return root


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return write_release(tmp_path / "gitm")


def perfect(bench: GITMMRBenchmark) -> list[Prediction]:
    out = []
    for p in bench.problems():
        if p.match:
            out.append(Prediction(id=p.id, match_prob=0.9, proposal=p.meta["gt_idx"]))
        else:
            out.append(Prediction(id=p.id, match_prob=0.1,
                                  mismatched_relation=p.mismatched_relation))
    return out


def test_pairs_follow_the_counter_file(release: Path) -> None:
    bench = GITMMRBenchmark(release, "train")
    assert isinstance(bench, Benchmark)
    assert bench.ids == ["pos/11", "neg/21", "pos/12", "neg/22", "pos/13", "neg/23"]
    assert [it["match"] for it in bench.items] == [1, 0, 1, 0, 1, 0]
    # both halves of a pair carry the positive's word count
    assert [it["length"] for it in bench.items] == [15, 15, 19, 19, 5, 5]
    assert bench.items[1]["counter_id"] == "11" and bench.items[0]["counter_id"] == "21"
    everything = GITMMRBenchmark(release, "train", include_unpaired=True)
    assert everything.ids[-1] == "pos/14" and len(everything) == 7


def test_problems_graphs_proposals_and_gt_idx(release: Path) -> None:
    problems = {p.id: p for p in GITMMRBenchmark(release, "train").problems()}
    man = problems["pos/11"]
    # the full subject-predicate-object phrase is cut down to the relation words
    assert [r.text for r in man.graph.relations] == ["to the left of"]
    assert man.graph.text == POSITIVES["11"][2]
    np.testing.assert_allclose(man.referent_box, [10, 10, 30, 30])
    inclusive = GITMMRBenchmark(release, "train", inclusive_boxes=True).items[0]["box"]
    np.testing.assert_allclose(inclusive, xywh_to_xyxy(np.array([10.0, 10, 20, 20]), True))
    assert man.meta["gt_idx"] == 1 and man.meta["gt_iou"] == pytest.approx(1.0)
    assert man.proposals.features.shape == (3, 8) and man.proposals.image_id == "1"
    dog = problems["pos/13"]
    assert dog.meta["gt_idx"] == 1 and dog.meta["image_id"] == "7"
    assert dog.meta["in_distribution"] and not problems["pos/12"].meta["in_distribution"]
    neg = problems["neg/21"]
    assert neg.match == 0 and neg.referent_box is None
    assert neg.mismatched_relation == 0 and neg.meta["mismatch_from"] == "foil_pos"
    assert neg.meta["foil_phrase"] == "to the right of"


def test_relations_follow_the_spo_index_so_foil_pos_is_the_relation(release: Path) -> None:
    raw = three("next to")
    assert relation_order(raw) == [0, 1]
    problems = {p.id: p for p in GITMMRBenchmark(release, "train").problems()}
    neg = problems["neg/22"]
    assert [(r.subject, r.object, r.text) for r in neg.graph.relations] == [
        (1, 2, "next to"), (0, 1, "holding")]
    assert neg.mismatched_relation == 0 and neg.meta["mismatch_from"] == "foil_pos"
    assert neg.graph.relations[neg.mismatched_relation].text == NEGATIVES["22"][4]
    assert [r.text for r in problems["pos/12"].graph.relations] == ["on top of", "holding"]


def test_foil_pos_is_taken_as_it_is(release: Path) -> None:
    path = release / "expression" / "train_expressions_foil_rel.json"
    negatives = json.loads(path.read_text())
    # foil_pos 1 is 'holding' although the record names 'next to': the index decides
    negatives["22"]["foil_pos"] = 1
    path.write_text(json.dumps(negatives))
    problems = {p.id: p for p in GITMMRBenchmark(release, "train").problems()}
    assert problems["neg/22"].mismatched_relation == 1
    # no foil_pos: the relation whose words contain foil_phrase
    del negatives["22"]["foil_pos"]
    path.write_text(json.dumps(negatives))
    problems = {p.id: p for p in GITMMRBenchmark(release, "train").problems()}
    assert problems["neg/22"].mismatched_relation == 0
    assert problems["neg/22"].meta["mismatch_from"] == "phrase"
    negatives["22"]["foil_pos"] = 2
    path.write_text(json.dumps(negatives))
    with pytest.raises(DataError, match=r"train_expressions_foil_rel.json record '22': "
                                        r"foil_pos 2 is not the spo index of a relation"):
        list(GITMMRBenchmark(release, "train").problems())


def test_a_parser_replaces_the_shipped_parses(release: Path) -> None:
    import parsers

    bench = GITMMRBenchmark(release, "train", parser=parsers.load("rule"))
    problems = {p.id: p for p in bench.problems()}
    for pid, phrase in (("neg/21", "to the right of"), ("neg/22", "next to"),
                        ("neg/23", "above")):
        p = problems[pid]
        assert p.meta["mismatch_from"] == "span"
        assert phrase in p.graph.relations[p.mismatched_relation].text
    assert foil_word_span(NEGATIVES["22"][1], {"foil_indices": [9, 10],
                                               "foil_phrase": "next to"}) == (9, 11)
    assert foil_word_span("a b c", {"foil_indices": [1, 2], "foil_phrase": "b"}) == (1, 2)


def test_train_len_and_uniform_subsets(release: Path) -> None:
    len16 = GITMMRBenchmark(release, "train", subset="Train-Len16")
    assert len16.ids == ["pos/11", "neg/21", "pos/13", "neg/23"] and len16.threshold == 16
    len11 = GITMMRBenchmark(release, "train", subset="len11")
    assert len11.ids == ["pos/13", "neg/23"] and len11.threshold == 11
    assert len11.subset_source.endswith("train_small_sent_ids_11.json")
    a = GITMMRBenchmark(release, "train", subset="5pct", subset_fraction=0.5, subset_seed=3)
    b = GITMMRBenchmark(release, "train", subset="uniform", subset_fraction=0.5, subset_seed=3)
    assert a.ids == b.ids and len(a) == 4  # round(0.5 * 3 pairs) = 2 pairs, kept whole
    assert len(GITMMRBenchmark(release, "train", subset="uniform")) == 2  # at least one pair
    assert canonical_subset("train_len11") == "len11"
    with pytest.raises(ValueError, match="unknown subset"):
        GITMMRBenchmark(release, "train", subset="len20")


def test_length_rule_outside_train(tmp_path: Path) -> None:
    root = write_release(tmp_path / "gitm", split="val")
    for n in (16, 11):
        (root / "small" / f"val_small_sent_ids_{n}.json").unlink()
    bench = GITMMRBenchmark(root, "val", subset="len16")
    assert bench.subset_source == "word length <= 16"
    assert bench.ids == ["pos/11", "neg/21", "pos/13", "neg/23"]


def test_evaluate_uses_gitm_metrics(release: Path) -> None:
    bench = GITMMRBenchmark(release, "train")
    preds = perfect(bench)
    m = bench.evaluate(preds)
    assert m["full"]["match"] == m["full"]["grounding"] == m["full"]["mrr"] == 1.0
    assert m["in_distribution"]["n"] == 4 and m["out_of_distribution"]["n"] == 2
    assert (m["benchmark"], m["split"], m["threshold"]) == ("gitm_mr", "train", 16)
    # a fresh adapter scores proposal indices from the vinvl_objects boxes by itself
    fresh = GITMMRBenchmark(release, "train")
    wrong = [Prediction(id=p.id, match_prob=p.match_prob, proposal=0,
                        mismatched_relation=int(p.id == "neg/22")) for p in preds]
    m = fresh.evaluate(wrong)
    assert m["full"]["match"] == 1.0 and m["full"]["grounding"] == 0.0
    assert m["full"]["mrr"] == pytest.approx(2 / 3)  # neg/22's mismatch is relation 0
    assert m["full"]["grounding_oracle"] == 0.0
    with pytest.raises(DataError, match="no prediction"):
        fresh.evaluate(preds[:-1])


def test_rcrn_score_through_the_registry(release: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture) -> None:
    table = dict(benchmarks._REGISTRY)
    table.setdefault("gitm_mr", "benchmarks.gitm_mr:GITMMRBenchmark")
    monkeypatch.setattr(benchmarks, "_REGISTRY", table)
    bench = GITMMRBenchmark(release, "train", subset="len16")
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in perfect(bench)))
    code = main(["score", "--benchmark", "gitm_mr", "--root", str(release), "--split", "train",
                 "--predictions", str(path), "--option", "subset=len16", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["full"]["n"] == 4 and out["full"]["mrr"] == 1.0 and out["subset"] == "len16"


class NotData:
    """Anything outside plain data is refused by the restricted unpickler."""


@pytest.mark.parametrize("breakage, message", [
    (lambda r: (r / "counter" / "train_id2id_foil_rel.pkl").unlink(),
     r"train_id2id_foil_rel.pkl: positive/negative pairing not found"),
    (lambda r: (r / "counter" / "train_id2id_foil_rel.pkl").write_bytes(
        pickle.dumps({"11": {"sentid": "99"}})), r"record '11': negative '99' not in"),
    (lambda r: (r / "counter" / "train_id2id_foil_rel.pkl").write_bytes(
        pickle.dumps({"11": NotData()})), r"train_id2id_foil_rel.pkl"),
    (lambda r: (r / "counter" / "train_id2id_foil_rel.pkl").write_bytes(b"garbage"),
     r"not a readable pickle"),
    (lambda r: (r / "expression" / "train_expressions_ori_rel.json").write_text(
        json.dumps({"11": {"image_id": 1, "bbox": [1, 2, 3], "expression": "x"}})),
     r"train_expressions_ori_rel.json: record '11': bbox must be 4"),
    (lambda r: (r / "expression" / "train_expressions_foil_rel.json").write_text("{bad"),
     r"train_expressions_foil_rel.json: line 1: negative expressions is not valid JSON"),
    (lambda r: (r / "expression" / "train_expressions_foil_rel.json").write_text(
        json.dumps({"21": {"image_id": 1, "bbox": [0, 0, 1, 1]}})),
     r"record '21': missing field\(s\) \['expression'\]"),
    (lambda r: (r / "small" / "train_small_sent_ids_16.json").write_text('{"pos": ["404"]}'),
     r"train_small_sent_ids_16.json: 1 sentence id"),
])
def test_bad_input_names_file_and_record(release: Path, breakage, message: str) -> None:
    breakage(release)
    with pytest.raises(DataError, match=message):
        GITMMRBenchmark(release, "train", subset="len16")


def test_missing_parses_vocabulary_and_proposals(release: Path) -> None:
    (release / "parse" / "train_foil_rel_graphs.pkl").unlink()
    bench = GITMMRBenchmark(release, "train")
    with pytest.raises(DataError, match="train_foil_rel_graphs.pkl: parse file not found; "
                                        "pass parser="):
        next(bench.problems())
    (release / "word_embedding" / "vocabulary_72700.txt").unlink()
    with pytest.raises(DataError, match="no vocabulary file"):
        next(GITMMRBenchmark(release, "train").problems())
    (release / "small" / "train_small_sent_ids_11.json").unlink()
    with pytest.raises(DataError, match="Train-Len11 subset file not found"):
        GITMMRBenchmark(release, "train", subset="len11")
    with pytest.raises(ValueError, match="unknown split"):
        GITMMRBenchmark(release, "dev")
    with pytest.raises(DataError, match="does not exist"):
        GITMMRBenchmark(release / "nowhere", "train")


def test_broken_parse_and_proposals(release: Path) -> None:
    graphs = pickle.loads((release / "parse" / "train_graphs.pkl").read_bytes())
    graphs["12"]["spo_phrase"][0] = [999]
    (release / "parse" / "train_graphs.pkl").write_bytes(pickle.dumps(graphs))
    with pytest.raises(DataError, match="train_graphs.pkl: record '12'.*word id 999"):
        next(GITMMRBenchmark(release, "train").problems())
    info = pickle.loads((release / "vinvl_objects" / "rois_info.pkl").read_bytes())
    del info["7"]
    (release / "vinvl_objects" / "rois_info.pkl").write_bytes(pickle.dumps(info))
    bench = GITMMRBenchmark(release, "train", subset="len11")
    with pytest.raises(benchmarks.ProposalSourceError, match="no proposals for image '7'"):
        next(bench.problems())
