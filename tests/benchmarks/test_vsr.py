"""VSR adapter: reading both record variants, caption graphs, official scoring, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import ProposalSourceError, vsr
from benchmarks.base import DataError
from rcrn.cli import main
from rcrn.structures import Prediction, Proposals

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"
VSR_SAMPLES = SAMPLES / "vsr"
needs_samples = pytest.mark.skipif(not VSR_SAMPLES.is_dir(), reason="shared samples absent")
CATEGORY_FILE = VSR_SAMPLES / "rel_meta_category_dict.txt"


def record(caption: str, relation: str, label: int = 1, **extra: object) -> dict:
    rec = {"image": "000000000001.jpg", "image_link": "http://example.invalid/1.jpg",
           "caption": caption, "label": label, "relation": relation, "annotator_id": 3,
           "vote_true_validator_id": "[1, 2]", "vote_false_validator_id": "[]"}
    rec.update(extra)
    return rec


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def boxes(image: str) -> Proposals:
    return Proposals(boxes=np.array([[0, 0, 10, 10], [5, 5, 20, 20]]), image_size=(32, 24),
                     image_id=image)


# ------------------------------------------------------------------ real samples
@needs_samples
@pytest.mark.parametrize("variant", ["random", "zeroshot"])
def test_samples_load_with_their_fields(variant: str) -> None:
    items = vsr.read_records(VSR_SAMPLES / f"{variant}_dev_head40.jsonl")
    assert len(items) == 40
    for it in items:
        assert it.image.endswith(".jpg") and it.label in (0, 1)
        assert all(isinstance(v, int) for v in it.vote_true_validator_id)
        assert all(isinstance(v, int) for v in it.vote_false_validator_id)
        assert it.vote_true_validator_id or it.vote_false_validator_id
    first = items[0]
    if variant == "random":
        assert first.caption == "The bench is at the right side of the train."
        assert first.vote_false_validator_id == [2, 10, 1] and first.reference_frame is None
        assert any(it.reference_frame is not None for it in items)
        assert all(it.upstream_subj is None for it in items)
    else:
        assert (first.subject, first.object, first.upstream_subj) == ("dog", "surfboard", "dog")
        assert all(it.reference_frame is None for it in items)
        # The sample rows are not among the truncated ones: caption and field agree.
        assert all(it.subject == it.upstream_subj and it.object == it.upstream_obj
                   for it in items)


@needs_samples
@pytest.mark.parametrize("variant", ["random", "zeroshot"])
def test_sample_captions_rebuild_from_subject_relation_object(variant: str) -> None:
    for it in vsr.read_records(VSR_SAMPLES / f"{variant}_dev_head40.jsonl"):
        copula = "" if it.relation in vsr.NO_COPULA else "is "
        assert it.caption == f"The {it.subject} {copula}{it.relation} the {it.object}."


@needs_samples
@pytest.mark.parametrize("variant", ["random", "zeroshot"])
def test_sample_graphs_spans_reconstruct_the_phrases(variant: str) -> None:
    for it in vsr.read_records(VSR_SAMPLES / f"{variant}_dev_head40.jsonl"):
        g = it.graph()
        assert (g.num_entities, g.num_relations, g.root) == (2, 1, 0)
        subj, obj = g.entities
        rel = g.relations[0]
        assert (rel.subject, rel.object) == (0, 1)
        assert subj.text == f"the {it.subject}" and obj.text == f"the {it.object}"
        assert g.span_text(subj.span).lower() == subj.text
        assert g.span_text(obj.span) == obj.text
        assert g.span_text(rel.span) == rel.text == it.relation
        assert " ".join(g.tokens[:-1]) + g.tokens[-1] == it.caption
        assert subj.head == it.subject.split()[-1]


def test_subject_comes_from_caption_not_truncated_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "dev.jsonl", [
        record("The horse is near the hot dog.", "near", subj="orse", obj="hot dog"),
        record("The elephant is far away from the handbag.", "far away from",
               subj="lephant", obj="handbag")])
    items = vsr.read_records(path)
    assert [(it.subject, it.object) for it in items] == [("horse", "hot dog"),
                                                         ("elephant", "handbag")]
    assert items[0].upstream_subj == "orse"
    g = items[0].graph()
    assert g.span_text(g.entities[1].span) == "the hot dog"


def test_relations_without_copula_and_multiword_phrases() -> None:
    g = vsr.caption_graph("The car has as a part the wheel.", "has as a part")
    assert g.tokens == ["The", "car", "has", "as", "a", "part", "the", "wheel", "."]
    assert g.relations[0].span == (2, 6) and g.entities[1].span == (6, 8)
    g = vsr.caption_graph("The teddy bear is at the left side of the dining table.",
                          "at the left side of")
    assert [e.text for e in g.entities] == ["the teddy bear", "the dining table"]
    assert g.relations[0].span == (4, 9)
    assert vsr.parse_caption("The pizza consists of the cheese.", "consists of") == (
        "pizza", "cheese", False)
    with pytest.raises(ValueError, match="does not follow"):
        vsr.parse_caption("The cat is on the bed.", "under")


# nouns only: a noun phrase holding a relation word ("cat on the") is ambiguous by design
WORD = st.sampled_from(["cat", "hot", "dog", "teddy", "bear", "dining", "table", "sheep"])


@settings(max_examples=60, deadline=None)
@given(subj=st.lists(WORD, min_size=1, max_size=3),
       obj=st.lists(WORD, min_size=1, max_size=3),
       relation=st.sampled_from(["on", "in front of", "contains", "at the left side of",
                                 "has as a part", "near", "on top of"]))
def test_caption_graph_round_trip(subj: list[str], obj: list[str], relation: str) -> None:
    subject, object_ = " ".join(subj), " ".join(obj)
    copula = "" if relation in vsr.NO_COPULA else "is "
    caption = f"The {subject} {copula}{relation} the {object_}."
    g = vsr.caption_graph(caption, relation)
    # Whatever the words, the spans partition the caption into its template parts.
    rebuilt = (g.span_text(g.entities[0].span) + (" is " if copula else " ")
               + g.span_text(g.relations[0].span) + " " + g.span_text(g.entities[1].span))
    assert rebuilt + "." == caption
    assert g.span_text(g.relations[0].span) == relation


# ------------------------------------------------------------------ splits and errors
def test_split_layouts(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "splits" / "random" / "test.jsonl",
                [record("The cat is on the bed.", "on")])
    write_jsonl(tmp_path / "zeroshot" / "dev.jsonl",
                [record("The dog is under the table.", "under", subj="dog", obj="table")] * 2)
    assert len(vsr.VSRBenchmark(tmp_path, "random/test")) == 1
    bench = vsr.VSRBenchmark(tmp_path, "zeroshot/dev")
    assert len(bench) == 2 and bench.split == "zeroshot/dev"
    assert bench.items[1].id == "vsr:zeroshot/dev:1"
    assert len(vsr.VSRBenchmark(tmp_path / "zeroshot" / "dev.jsonl")) == 2
    assert len(vsr.VSRBenchmark(tmp_path, "zeroshot/dev.jsonl")) == 2
    with pytest.raises(DataError, match="unknown split 'random/val'"):
        vsr.VSRBenchmark(tmp_path, "random/val")
    with pytest.raises(DataError, match=r"split 'zeroshot/test' not found; looked for .*test"):
        vsr.VSRBenchmark(tmp_path, "zeroshot/test")
    with pytest.raises(DataError, match="does not exist"):
        vsr.VSRBenchmark(tmp_path / "nowhere", "random/test")


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    good = json.dumps(record("The cat is on the bed.", "on"))
    path = tmp_path / "dev.jsonl"
    path.write_text(f"{good}\n{good}\n{{\"image\": \n{good}\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"dev\.jsonl line 3: invalid JSON"):
        vsr.read_records(path)
    rec = record("The cat is on the bed.", "on")
    del rec["label"]
    write_jsonl(path, [record("The cat is on the bed.", "on")] * 16 + [rec])
    with pytest.raises(DataError, match=r"dev\.jsonl line 17: field 'label' missing"):
        vsr.read_records(path)
    bad = [
        (record("The cat is on the bed.", "on", label=2), "line 1: field 'label' must be 0 or 1"),
        (record("A cat sits on the bed.", "on"), "line 1: caption .* does not start"),
        (record("The cat is on the bed.", "under"), "line 1: caption .* does not follow"),
        (record("The cat is on the bed.", "on", vote_true_validator_id="[1, "),
         "line 1: field 'vote_true_validator_id' is not a JSON list"),
        (record("The cat is on the bed.", "on", vote_false_validator_id=[1, "x"]),
         "line 1: field 'vote_false_validator_id' must be a list"),
    ]
    for rec, message in bad:
        write_jsonl(path, [rec])
        with pytest.raises(DataError, match=message):
            vsr.read_records(path)
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(DataError, match="no records"):
        vsr.read_records(path)


def test_validator_ids_as_real_lists(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "all_vsr_validated_data.jsonl", [
        record("The cat is on the bed.", "on", vote_true_validator_id=[4, 5],
               vote_false_validator_id=[])])
    bench = vsr.VSRBenchmark(tmp_path, "all")
    assert bench.items[0].vote_true_validator_id == [4, 5]
    assert vsr.read_records(path)[0].vote_false_validator_id == []


# ------------------------------------------------------------------ categories and scoring
@needs_samples
def test_official_category_file_quirks() -> None:
    cats = vsr.read_categories(CATEGORY_FILE)
    assert cats["among"] == "Unallocated"  # listed under Topological too; the last one wins
    assert "congruent" not in cats
    assert cats["has as a part"] == "Topological" and cats["left of"] == "Projective"
    assert cats["down from"] == "Directional"  # the line ends with a trailing space
    assert len(set(cats.values())) == 7


def test_category_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "cats.txt"
    path.write_text("Projective: left of, right of\nno colon here\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"cats\.txt line 2"):
        vsr.read_categories(path)


def _scored_records() -> tuple[list[dict], list[int], dict[str, str]]:
    records = [{"label": 1, "relation": "among"}, {"label": 0, "relation": "among"},
               {"label": 1, "relation": "congruent"}, {"label": 1, "relation": "left of"},
               {"label": 0, "relation": "left of"}, {"label": 1, "relation": "next to"}]
    preds = [1, 1, 1, 0, 0, 1]
    cats = {"among": "Unallocated", "left of": "Projective", "next to": "Unallocated"}
    return records, preds, cats


def test_score_hand_computed() -> None:
    records, preds, cats = _scored_records()
    m = vsr.score(records, preds, cats)
    assert m["accuracy"] == pytest.approx(4 / 6) and (m["correct"], m["count"]) == (4, 6)
    assert m["per_relation"] == {
        "among": {"accuracy": 0.5, "count": 2}, "congruent": {"accuracy": 1.0, "count": 1},
        "left of": {"accuracy": 0.5, "count": 2}, "next to": {"accuracy": 1.0, "count": 1}}
    # congruent (no category) is left out; among counts as Unallocated.
    assert m["per_category"] == {
        "Projective": {"accuracy": 0.5, "count": 2},
        "Unallocated": {"accuracy": pytest.approx(2 / 3), "count": 3}}
    assert m["uncategorized"] == 1
    no_cats = vsr.score(records, preds)
    assert no_cats["per_category"] == {} and no_cats["accuracy"] == m["accuracy"]
    with pytest.raises(DataError, match="5 predictions for 6 items"):
        vsr.score(records, preds[:5])
    with pytest.raises(DataError, match="prediction 2: expected 0 or 1"):
        vsr.score(records, [1, 1, 2, 0, 0, 1])


@needs_samples
def test_score_with_official_category_file_on_samples() -> None:
    items = vsr.read_records(VSR_SAMPLES / "random_dev_head40.jsonl")
    m = vsr.score(items, [1] * len(items), vsr.read_categories(CATEGORY_FILE))
    assert m["accuracy"] == pytest.approx(sum(it.label for it in items) / 40)
    touching = [it.label for it in items if it.relation == "touching"]
    assert m["per_relation"]["touching"] == {"accuracy": pytest.approx(np.mean(touching)),
                                             "count": len(touching)}
    assert sum(v["count"] for v in m["per_category"].values()) == 40


def test_preds_file_round_trip_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "preds.txt"
    vsr.write_preds(path, [1, 0, 1])
    assert path.read_text() == "1\n0\n1\n"
    assert vsr.read_preds(path, 3) == [1, 0, 1]
    with pytest.raises(DataError, match=r"preds\.txt: 3 prediction lines for 4 items"):
        vsr.read_preds(path, 4)
    path.write_text("1\n0.7\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"preds\.txt line 2: expected 0 or 1, got '0.7'"):
        vsr.read_preds(path)
    with pytest.raises(ValueError, match="prediction 1"):
        vsr.write_preds(path, [1, 2])


# ------------------------------------------------------------------ problems and evaluate
def _bench(tmp_path: Path, **options: object) -> vsr.VSRBenchmark:
    write_jsonl(tmp_path / "splits" / "random" / "dev.jsonl", [
        record("The cat is on the bed.", "on", label=1),
        record("The dog is left of the car.", "left of", label=0),
        record("The pizza is among the plates.", "among", label=1)])
    (tmp_path / "rel_meta_category_dict.txt").write_text(
        "Projective: left of, on\nTopological: among\nUnallocated: among\n", encoding="utf-8")
    return vsr.VSRBenchmark(tmp_path, "random/dev", **options)


def test_problems_need_a_proposal_source(tmp_path: Path) -> None:
    bench = _bench(tmp_path)
    assert bench.categories is not None and bench.categories["among"] == "Unallocated"
    with pytest.raises(ProposalSourceError, match="proposals="):
        next(bench.problems())
    problems = list(_bench(tmp_path, proposals=boxes).problems())
    assert [p.match for p in problems] == [1, 0, 1]
    assert problems[1].graph.entities[0].text == "the dog"
    assert problems[1].proposals.image_id == "000000000001.jpg"
    assert problems[2].meta["category"] == "Unallocated"
    assert problems[0].id == "vsr:random/dev:0"
    with pytest.raises(ProposalSourceError, match="no proposals for image"):
        next(_bench(tmp_path, proposals={}).problems())


def test_evaluate_predictions_by_id(tmp_path: Path) -> None:
    bench = _bench(tmp_path)
    ids = [it.id for it in bench.items]
    preds = [Prediction(id=ids[2], match_prob=0.5), Prediction(id=ids[0], match_prob=0.9),
             Prediction(id=ids[1], match_prob=0.49)]
    m = bench.evaluate(preds)
    assert m["accuracy"] == 1.0
    assert m["per_category"]["Unallocated"] == {"accuracy": 1.0, "count": 1}
    with pytest.raises(DataError, match="1 of 3 problems have no prediction"):
        bench.evaluate(preds[:2])
    with pytest.raises(DataError, match="two predictions"):
        bench.evaluate(preds + preds[:1])


# ------------------------------------------------------------------ command line
def test_cli_score_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _bench(tmp_path)
    preds = tmp_path / "preds.txt"
    vsr.write_preds(preds, [1, 1, 0])
    cats = tmp_path / "cats.txt"
    cats.write_text("Proximity: on\nOrientation: left of\n", encoding="utf-8")
    rc = main(["score", "--benchmark", "vsr", "--root", str(tmp_path), "--split", "random/dev",
               "--predictions", str(preds), "--categories", str(cats), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["accuracy"] == pytest.approx(1 / 3)
    assert out["per_relation"]["on"] == {"accuracy": 1.0, "count": 1}
    # --categories overrides the file under the root: among is now uncategorized.
    assert out["per_category"] == {"Orientation": {"accuracy": 0.0, "count": 1},
                                   "Proximity": {"accuracy": 1.0, "count": 1}}
    assert out["uncategorized"] == 1


def test_cli_table_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _bench(tmp_path)
    preds = tmp_path / "preds.txt"
    vsr.write_preds(preds, [1, 0, 1])
    args = ["score", "--benchmark", "vsr", "--root", str(tmp_path), "--split", "random/dev",
            "--predictions", str(preds)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "accuracy" in out and "100.00" in out and "per_category" in out
    vsr.write_preds(preds, [1, 0])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "preds.txt: 2 prediction lines for 3 items" in err
    assert main(args[:-2] + ["--predictions", str(tmp_path / "missing.txt")]) == 2
    assert "does not exist" in capsys.readouterr().err
