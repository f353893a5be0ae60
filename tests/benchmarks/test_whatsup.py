"""What'sUp adapter: the six splits, caption graphs, official scoring with ties, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from benchmarks import ProposalSourceError, whatsup
from benchmarks.base import DataError
from rcrn.cli import main
from rcrn.structures import Prediction, Proposals

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples" / "whatsup"
needs_samples = pytest.mark.skipif(not SAMPLES.is_dir(), reason="shared samples absent")
SAMPLE_A = SAMPLES / "controlled_images_A_sample.json"
SAMPLE_B = SAMPLES / "controlled_images_B_sample.json"

PREPS_A = {"on": "on", "under": "under", "left_of": "to the left of",
           "right_of": "to the right of"}
PREPS_B = {"in-front_of": "in front of", "behind": "behind", "left_of": "to the left of",
           "right_of": "to the right of"}


def controlled_records(subset: str, groups: list[tuple[str, str]]) -> list[dict]:
    """Controlled records in the released layout, four per (subject, object) group."""
    preps = PREPS_A if subset == "a" else PREPS_B
    folder = "controlled_images" if subset == "a" else "controlled_clevr"
    out = []
    for subj, obj in groups:
        for prep, phrase in preps.items():
            others = [p for p in preps.values() if p != phrase]
            caps = [f"A {subj.replace('-', ' ')} {p} a {obj}" for p in [phrase, *others]]
            out.append({"image_path": f"data/{folder}/{subj}_{prep}_{obj}.jpeg",
                        "caption_options": caps})
    return out


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def boxes(image: str) -> Proposals:
    return Proposals(boxes=np.zeros((1, 4)), image_size=(64, 48), image_id=image)


# ------------------------------------------------------------------ real samples
@needs_samples
@pytest.mark.parametrize("path,split,preps", [(SAMPLE_A, "controlled_a", PREPS_A),
                                              (SAMPLE_B, "controlled_b", PREPS_B)])
def test_samples_load(path: Path, split: str, preps: dict[str, str]) -> None:
    bench = whatsup.WhatsUpBenchmark(path)  # split inferred from the released file name
    assert bench.split == split and len(bench) == 12 and bench.num_options == 4
    assert {it.preposition for it in bench.items} == set(preps)
    assert len({it.group for it in bench.items}) == 3
    for it in bench.items:
        assert it.image.startswith("data/controlled_")
        assert it.name is not None and it.group == (it.name.split("_")[0],
                                                    it.name.split("_")[-1])
        assert it.slot == it.name.split("_")[1]
        assert preps[it.preposition] in it.options[0]  # gold = option 0 always


@needs_samples
def test_sample_graphs_reconstruct_the_phrases() -> None:
    for path, preps in ((SAMPLE_A, PREPS_A), (SAMPLE_B, PREPS_B)):
        for it in whatsup.WhatsUpBenchmark(path).items:
            rels = []
            for k, caption in enumerate(it.options):
                g = it.graph(k)
                assert (g.num_entities, g.num_relations, g.root) == (2, 1, 0)
                subj, obj = g.entities
                assert subj.text == f"a {it.subject}" and obj.text == f"a {it.object}"
                assert g.span_text(subj.span).lower() == subj.text
                assert g.span_text(obj.span) == obj.text
                rel = g.relations[0]
                assert (rel.subject, rel.object) == (0, 1)
                assert g.span_text(rel.span) == rel.text
                assert " ".join(g.tokens) == caption
                rels.append(rel.text)
            assert rels[0] == preps[it.preposition]
            assert sorted(rels) == sorted(preps.values())
    beer = whatsup.WhatsUpBenchmark(SAMPLE_A).items[0]
    assert beer.subject == "beer bottle" and beer.graph().entities[0].head == "bottle"


@needs_samples
def test_sample_problems() -> None:
    bench = whatsup.WhatsUpBenchmark(SAMPLE_B, proposals=boxes)
    problems = list(bench.problems())
    assert len(problems) == 48
    assert [p.match for p in problems[:4]] == [1, 0, 0, 0]
    assert problems[5].meta["item"] == 1 and problems[5].meta["option"] == 1
    assert problems[5].id == "whatsup:controlled_b:1:1"
    assert problems[5].proposals.image_id == "data/controlled_clevr/mug_left_of_knife.jpeg"
    with pytest.raises(ProposalSourceError):
        next(whatsup.WhatsUpBenchmark(SAMPLE_B).problems())


# ------------------------------------------------------------------ scoring
def _a_items(tmp_path: Path) -> list[whatsup.WhatsUpItem]:
    path = write_json(tmp_path / "controlled_images_dataset.json",
                      controlled_records("a", [("mug", "table"), ("beer-bottle", "chair"),
                                               ("scarf", "armchair")]))
    return whatsup.read_items(path, "controlled_a")


def test_pair_and_set_accuracy_hand_computed(tmp_path: Path) -> None:
    items = _a_items(tmp_path)  # slots per group in order: on, under, left, right
    right = np.array([[1.0, 0.0, 0.0, 0.0]])
    wrong = np.array([[0.0, 1.0, 0.0, 0.0]])
    rows = [right] * 4                                # group 1: all four right
    rows += [right, right, wrong, right]              # group 2: on/under pair only
    rows += [wrong, right, right, right]              # group 3: left/right pair only
    m = whatsup.score(items, np.concatenate(rows))
    assert (m["correct"], m["count"]) == (10, 12) and m["accuracy"] == pytest.approx(10 / 12)
    assert m["pairs_correct"] == 4 and m["pair_accuracy"] == pytest.approx(4 / 6)
    assert m["sets_correct"] == 1 and m["set_accuracy"] == pytest.approx(1 / 3)
    assert m["per_preposition"] == {
        "left_of": {"accuracy": pytest.approx(2 / 3), "count": 3},
        "on": {"accuracy": pytest.approx(2 / 3), "count": 3},
        "right_of": {"accuracy": 1.0, "count": 3}, "under": {"accuracy": 1.0, "count": 3}}
    assert m["ties"] == 0


def test_ties_count_wrong_by_default(tmp_path: Path) -> None:
    items = _a_items(tmp_path)[:4]  # one group: on, under, left, right
    scores = np.array([[2.0, 1.0, 2.0, 0.0],   # gold ties another option at the top
                       [1.0, 3.0, 3.0, 0.0],   # a tie above the gold: plainly wrong
                       [5.0, 1.0, 1.0, 1.0],   # strictly right
                       [1.0, 1.0, 1.0, 1.0]])  # all equal: a tie
    m = whatsup.score(items, scores)
    assert m["ties"] == 2 and m["correct"] == 1 and m["accuracy"] == 0.25
    assert m["pairs_correct"] == 0 and m["ties_correct"] is False
    official = whatsup.score(items, scores, ties_correct=True)
    assert official["ties"] == 2 and official["correct"] == 3
    assert official["pairs_correct"] == 1  # left/right both right under argmax-first
    assert official["pair_accuracy"] == pytest.approx(1 / 2)
    assert official["set_accuracy"] == 0.0


@settings(max_examples=50, deadline=None)
@given(arrays(np.int8, st.tuples(st.integers(1, 12), st.sampled_from([2, 4])),
              elements=st.integers(0, 2)))
def test_tie_rules_against_argmax(scores: np.ndarray) -> None:
    official, tied = whatsup.correctness(scores, ties_correct=True)
    strict, _ = whatsup.correctness(scores)
    assert np.array_equal(official, np.argmax(scores, axis=1) == 0)
    assert np.array_equal(strict, official & ~tied)
    assert int(official.sum()) - int(strict.sum()) == int(tied.sum())


def test_score_shape_errors(tmp_path: Path) -> None:
    items = _a_items(tmp_path)
    with pytest.raises(DataError, match=r"shape \[11, 4\] for 12 items"):
        whatsup.score(items, np.zeros((11, 4)))
    with pytest.raises(DataError, match="2 scores per item for 4 options"):
        whatsup.score(items, np.zeros((12, 2)))
    bad = np.zeros((12, 4))
    bad[3, 1] = np.nan
    with pytest.raises(DataError, match="item 3"):
        whatsup.score(items, bad)
    assert whatsup.score(items, np.zeros((12, 1, 4)))["ties"] == 12


def test_macro_average() -> None:
    results = {"controlled_a": {"accuracy": 0.5, "pair_accuracy": 0.2, "set_accuracy": 0.1},
               "Controlled_Images_B": {"accuracy": 0.7, "pair_accuracy": 0.4,
                                       "set_accuracy": 0.0},
               "coco_one": {"accuracy": 0.6}, "coco_two": {"accuracy": 0.8},
               "gqa_one": {"accuracy": 0.9}}
    m = whatsup.macro_average(results)
    assert set(m) == {"controlled", "coco"}  # GQA lacks its two-object half
    assert m["controlled"]["accuracy"] == pytest.approx(0.6)
    assert m["controlled"]["pair_accuracy"] == pytest.approx(0.3)
    assert m["controlled"]["set_accuracy"] == pytest.approx(0.05)
    assert m["coco"] == {"splits": ["coco_one", "coco_two"], "accuracy": pytest.approx(0.7)}


# ------------------------------------------------------------------ COCO / GQA
def _qa_root(tmp_path: Path) -> Path:
    write_json(tmp_path / "coco_qa_one_obj.json", [
        [397133, "A dog on the left", "A dog on the right"],
        [37777, "A bus on the bottom", "A bus on the top"]])
    write_json(tmp_path / "coco_qa_two_obj.json", [
        [252219, "A cup to the right of a dining table", "A cup to the left of a dining table"],
        [87038, "A person above a horse", "A person below a horse"],
        [174482, "A cat below a chair", "A cat above a chair"]])
    write_json(tmp_path / "vg_qa_one_obj.json", [[2354786, "A man on the left",
                                                  "A man on the right"]])
    write_json(tmp_path / "vg_qa_two_obj.json", [
        ["2368544", "A car in front of a building", "A car behind a building"],
        [2317171, "A lamp on top of a table", "A lamp under a table"]])
    return tmp_path


def test_qa_splits(tmp_path: Path) -> None:
    root = _qa_root(tmp_path)
    one = whatsup.WhatsUpBenchmark(root, "coco_one")
    assert [it.image for it in one.items] == ["val2017/000000397133.jpg",
                                              "val2017/000000037777.jpg"]
    assert [it.preposition for it in one.items] == ["left", "bottom"]
    g = one.items[0].graph(1)
    assert (g.num_entities, g.num_relations, g.entities[0].text) == (1, 0, "a dog")
    problem = next(whatsup.WhatsUpBenchmark(root, "coco_one", proposals=boxes).problems())
    assert problem.meta["image_relation"] == "on the left" and problem.match == 1

    two = whatsup.WhatsUpBenchmark(root, "COCO_QA_two_obj")
    assert [it.preposition for it in two.items] == ["right", "above", "below"]
    g = two.items[0].graph(0)
    assert [e.text for e in g.entities] == ["a cup", "a dining table"]
    assert g.relations[0].text == "to the right of"

    gqa = whatsup.WhatsUpBenchmark(root, "gqa_two")
    assert [it.image for it in gqa.items] == ["vg_images/2368544.jpg", "vg_images/2317171.jpg"]
    assert [it.preposition for it in gqa.items] == ["front", "top"]  # as the official code
    assert gqa.items[1].graph(0).relations[0].text == "on top of"
    assert whatsup.WhatsUpBenchmark(root, "gqa_one").items[0].preposition == "left"

    m = two.score(np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]))
    assert (m["correct"], m["ties"]) == (1, 1) and "pair_accuracy" not in m
    assert m["per_preposition"]["right"] == {"accuracy": 1.0, "count": 1}
    with pytest.raises(DataError, match="unknown split 'coco_three'"):
        whatsup.WhatsUpBenchmark(root, "coco_three")
    with pytest.raises(DataError, match="controlled_images_dataset.json"):
        whatsup.WhatsUpBenchmark(root, "controlled_a")


def test_bad_records_name_file_and_record(tmp_path: Path) -> None:
    path = tmp_path / "controlled_images_dataset.json"
    path.write_text('[{"image_path": "data/x/a_on_b.jpeg", ', encoding="utf-8")
    with pytest.raises(DataError, match=r"controlled_images_dataset\.json: invalid JSON"):
        whatsup.WhatsUpBenchmark(tmp_path, "controlled_a")
    records = controlled_records("a", [("mug", "table")])
    del records[1]["caption_options"]
    write_json(path, records)
    with pytest.raises(DataError, match=r"record 1: field 'caption_options' missing"):
        whatsup.WhatsUpBenchmark(tmp_path, "controlled_a")
    write_json(path, controlled_records("b", [("mug", "table")]))
    with pytest.raises(DataError, match=r"record 0: image .* preposition 'in-front'"):
        whatsup.WhatsUpBenchmark(tmp_path, "controlled_a")
    qa = write_json(tmp_path / "coco_qa_two_obj.json", [[1, "A a to the left of a b", "x"],
                                                        [2, "only one caption"]])
    with pytest.raises(DataError, match=r"coco_qa_two_obj\.json record 1: expected"):
        whatsup.read_items(qa, "coco_two")


def test_pillow_swap_option(tmp_path: Path) -> None:
    records = controlled_records("a", [("pillow", "chair"), ("mug", "table")])
    write_json(tmp_path / "controlled_images_dataset.json", records)
    official = whatsup.WhatsUpBenchmark(tmp_path, "controlled_a")
    fixed = whatsup.WhatsUpBenchmark(tmp_path, "controlled_a", fix_pillow_swap=True)
    assert not official.pillow_swapped and fixed.pillow_swapped
    assert official.items[2].image.endswith("pillow_left_of_chair.jpeg")
    assert fixed.items[2].image.endswith("pillow_right_of_chair.jpeg")
    assert fixed.items[3].image.endswith("pillow_left_of_chair.jpeg")
    # Captions, groups and scoring keys stay with the records.
    assert fixed.items[2].slot == "left" and fixed.items[2].options == official.items[2].options
    assert [it.image for it in fixed.items[4:]] == [it.image for it in official.items[4:]]
    # the scores flag the two known swapped records, and only those
    flags = official.score(np.tile([1.0, 0, 0, 0], (8, 1)))["flags"]
    assert len(flags) == 2 and all("pillow" in f and "swapped" in f for f in flags)
    assert "flags" not in whatsup.score(official.items[4:], np.tile([1.0, 0, 0, 0], (4, 1)))


# ------------------------------------------------------------------ files and CLI
def test_read_scores_formats_and_errors(tmp_path: Path) -> None:
    text = tmp_path / "scores.txt"
    text.write_text("0.9, 0.1\n0.2 0.8\n\t1e-3,\t2e-3\n\n", encoding="utf-8")
    assert whatsup.read_scores(text, 3, 2).tolist() == [[0.9, 0.1], [0.2, 0.8], [1e-3, 2e-3]]
    with pytest.raises(DataError, match=r"scores\.txt: 3 score rows for 4 items"):
        whatsup.read_scores(text, 4, 2)
    text.write_text("0.9, 0.1\n0.2\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"scores\.txt line 2: 1 scores, expected 2"):
        whatsup.read_scores(text)
    text.write_text("0.9, abc\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"scores\.txt line 1: not a list of numbers"):
        whatsup.read_scores(text)
    npy = tmp_path / "scores.npy"
    np.save(npy, np.arange(12, dtype=np.float32).reshape(3, 1, 4))
    assert whatsup.read_scores(npy, 3, 4).shape == (3, 4)
    with pytest.raises(DataError, match=r"scores\.npy: 3 score rows for 5 items"):
        whatsup.read_scores(npy, 5, 4)


def test_evaluate_predictions(tmp_path: Path) -> None:
    write_json(tmp_path / "controlled_clevr_dataset.json",
               controlled_records("b", [("mug", "knife")]))
    bench = whatsup.WhatsUpBenchmark(tmp_path, "controlled_b")
    preds = [Prediction(id=it.option_id(k), match_prob=0.9 if k == 0 else 0.1)
             for it in bench.items for k in range(4)]
    preds[4] = Prediction(id=bench.items[1].option_id(0), match_prob=0.1)  # a tie: wrong
    m = bench.evaluate(preds[::-1])
    assert (m["correct"], m["ties"], m["pairs_correct"], m["sets_correct"]) == (3, 1, 1, 0)


def test_cli_score_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_json(tmp_path / "controlled_clevr_dataset.json",
               controlled_records("b", [("mug", "knife"), ("bowl", "cup")]))
    scores = tmp_path / "scores.txt"
    rows = ["1,0,0,0"] * 8
    rows[1] = "1 1 0 0"
    scores.write_text("\n".join(rows) + "\n", encoding="utf-8")
    args = ["score", "--benchmark", "whatsup", "--root", str(tmp_path), "--split",
            "controlled_b", "--predictions", str(scores), "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accuracy"] == pytest.approx(7 / 8) and out["ties"] == 1
    assert out["pair_accuracy"] == pytest.approx(3 / 4) and out["set_accuracy"] == 0.5
    assert set(out["per_preposition"]) == set(PREPS_B)
    assert all(0.0 <= v["accuracy"] <= 1.0 for v in out["per_preposition"].values())
    assert main(args + ["--ties-correct"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accuracy"] == 1.0 and out["set_accuracy"] == 1.0 and out["ties"] == 1
    assert main(args + ["--ties", "official"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == 1.0
    scores.write_text("\n".join(rows[:7]) + "\n", encoding="utf-8")
    assert main(args) == 2
    assert "scores.txt: 7 score rows for 8 items" in capsys.readouterr().err
    assert main(args[:-1] + ["--categories", "x.txt"]) == 2
    assert "--categories does not apply to benchmark 'whatsup'" in capsys.readouterr().err
