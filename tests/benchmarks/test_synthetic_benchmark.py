"""The synthetic benchmark adapter: problems, subsets, parser / detector hooks, evaluation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import benchmarks
from benchmarks.base import Benchmark, DataError
from benchmarks.synthetic import SyntheticBenchmark, ensure_dataset
from benchmarks.synthetic.generator import GeneratorConfig, generate_dataset
from rcrn.structures import Entity, GroundingProblem, LanguageGraph, Prediction, Proposals


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("synthetic_bench") / "data"
    generate_dataset(path, GeneratorConfig(scenes=30, seed=5), progress=False)
    return path


def _records(root: Path, split: str) -> list[dict]:
    text = (root / "annotations" / f"{split}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _perfect(problems: list[GroundingProblem], use_box: bool = True) -> list[Prediction]:
    out = []
    for p in problems:
        if p.match == 1:
            out.append(Prediction(id=p.id, match_prob=0.9,
                                  box=p.referent_box.tolist() if use_box else None,
                                  proposal=-1 if use_box else p.target_index))
        else:
            out.append(Prediction(id=p.id, match_prob=0.1,
                                  mismatched_relation=p.mismatched_relation))
    return out


def test_problems_follow_the_records(root: Path) -> None:
    bench = SyntheticBenchmark(root, "test")
    assert isinstance(bench, Benchmark) and bench.name == "synthetic" and bench.split == "test"
    records = _records(root, "test")
    problems = list(bench.problems())
    assert len(bench) == len(problems) == len(records) > 0
    scenes = {json.loads(s)["id"]: json.loads(s) for s in
              (root / "scenes.jsonl").read_text().splitlines()}
    for rec, p in zip(records, problems):
        assert p.id == rec["id"] and p.match == rec["match"]
        assert p.graph.to_dict() == rec["graph"]
        objects = scenes[rec["scene_id"]]["objects"]
        assert p.proposals.boxes.tolist() == [o["box"] for o in objects]
        assert p.proposals.features is None and p.proposals.image_id == rec["scene_id"]
        assert p.proposals.image_size == (128, 128)
        assert Path(p.meta["image_path"]).is_file()
        assert p.meta["words"] == rec["words"] and p.meta["relations"] == rec["relations"]
        assert p.meta["pair_id"] == rec["pair_id"] and p.meta["split"] == "test"
        if p.match == 1:
            assert p.referent_box.tolist() == rec["target_box"]
            assert p.target_index == rec["target"] and p.mismatched_relation is None
            # the box of each entity's object, the referent's first
            assert p.meta["entity_boxes"] == [objects[k]["box"] for k in rec["entity_objects"]]
            assert p.meta["entity_boxes"][0] == rec["target_box"]
        else:
            assert p.referent_box is None and "entity_boxes" not in p.meta
            assert p.mismatched_relation == rec["mismatched_relation"]
            k = p.mismatched_relation
            assert p.graph.relations[k].text == p.meta["replacement_phrase"]


def test_perfect_predictions_score_one_and_buckets_split_by_length(root: Path) -> None:
    bench = SyntheticBenchmark(root, "test")
    problems = list(bench.problems())
    m = bench.evaluate(_perfect(problems))
    for bucket in ("full", "in_distribution", "out_of_distribution"):
        for key in ("match", "grounding", "mrr", "grounding_oracle", "mrr_oracle"):
            assert m[bucket][key] in (1.0, None), (bucket, key)
    assert m["full"]["match"] == 1.0 and m["full"]["grounding"] == 1.0 == m["full"]["mrr"]
    records = _records(root, "test")
    threshold = json.loads((root / "manifest.json").read_text())["thresholds"]["max_words"]
    assert m["threshold"] == threshold == bench.threshold
    assert m["in_distribution"]["n"] == sum(r["pair_words"] <= threshold for r in records)
    assert m["in_distribution"]["n"] + m["out_of_distribution"]["n"] == len(records)
    # proposal indices into the ground-truth boxes ground as well as boxes
    assert bench.evaluate(_perfect(problems, use_box=False))["full"]["grounding"] == 1.0
    # everything predicted "matched": Match% is the share of positives, MRR% is zero
    lazy = [Prediction(id=p.id, match_prob=1.0, box=None if p.referent_box is None
                       else p.referent_box.tolist(), mismatched_relation=p.mismatched_relation)
            for p in problems]
    m = bench.evaluate(lazy)
    assert m["full"]["match"] == pytest.approx(m["full"]["n_matched"] / m["full"]["n"])
    assert m["full"]["mrr"] == 0.0 and m["full"]["mrr_oracle"] == 1.0
    by_rel = SyntheticBenchmark(root, "test", length="relations", max_relations=1)
    m = by_rel.evaluate(_perfect(problems))
    assert m["threshold"] == 1 and m["length"] == "relations"
    assert m["in_distribution"]["n"] == sum(r["relations"] <= 1 for r in records)


def test_train_subsets_keep_whole_pairs(root: Path) -> None:
    full = SyntheticBenchmark(root, "train")
    words = SyntheticBenchmark(root, "train", train_subset="len_words")
    rels = SyntheticBenchmark(root, "train", train_subset="len_rels")
    short = SyntheticBenchmark(root, "train", train_subset="len_words", max_words=11)
    th = full.thresholds
    assert 0 < len(short) < len(words) < len(full) and 0 < len(rels) < len(full)
    assert all(r["pair_words"] <= th["max_words"] for r in words.records)
    assert all(r["pair_words"] <= 11 for r in short.records)
    assert all(r["relations"] <= th["max_relations"] for r in rels.records)
    # short by both: what either Train-Len experiment may see (e.g. when pre-training)
    both = SyntheticBenchmark(root, "train", train_subset="len_short")
    assert {r["id"] for r in both.records} == (
        {r["id"] for r in words.records} & {r["id"] for r in rels.records})
    assert 0 < len(both) < min(len(words), len(rels))
    ids = {r["id"] for r in words.records}
    assert all(r["counter_id"] in ids for r in words.records if r["counter_id"])
    assert {r["scene_id"] for r in full.records}.isdisjoint(
        r["scene_id"] for r in SyntheticBenchmark(root, "test").records)
    with pytest.raises(ValueError, match="unknown train subset"):
        SyntheticBenchmark(root, "train", train_subset="len_chars")
    with pytest.raises(ValueError, match="unknown split"):
        SyntheticBenchmark(root, "dev")


def test_parser_graphs_get_the_mismatch_mapped(root: Path) -> None:
    gold = {r["text"]: r["graph"] for r in _records(root, "val")}

    def reversed_parser(text: str) -> LanguageGraph:
        d = dict(gold[text])
        d["relations"] = list(reversed(d["relations"]))
        return LanguageGraph.from_dict(d)

    bench = SyntheticBenchmark(root, "val", parser=reversed_parser)
    problems = list(bench.problems())
    negatives = [p for p in problems if p.match == 0]
    assert negatives
    for p in negatives:
        assert p.graph.relations[p.mismatched_relation].text == p.meta["replacement_phrase"]
        assert p.graph.relations[p.mismatched_relation].span == tuple(p.meta["phrase_span"])
    assert bench.evaluate(_perfect(problems))["full"]["mrr"] == 1.0
    # a fresh adapter maps the relations again in evaluate
    again = SyntheticBenchmark(root, "val", parser=reversed_parser)
    assert again.evaluate(_perfect(problems))["full"]["mrr"] == 1.0

    def one_entity(text: str) -> LanguageGraph:
        return LanguageGraph(tokens=text.split(), entities=[Entity(text="x", span=(0, 1))])

    p = next(p for p in SyntheticBenchmark(root, "val", parser=one_entity).problems()
             if p.match == 0)
    assert p.mismatched_relation is None and p.meta["mismatch_unmapped"] is True
    with pytest.raises(TypeError, match="not LanguageGraph"):
        next(SyntheticBenchmark(root, "val", parser=lambda t: {"text": t}).problems())


def test_detector_sees_each_image_once(root: Path) -> None:
    calls = []

    def detector(pixels: np.ndarray) -> Proposals:
        calls.append(pixels.shape)
        assert pixels.dtype == np.uint8
        return Proposals(boxes=[[0, 0, 5, 5], [1, 1, 9, 9]], image_size=pixels.shape[1::-1])

    bench = SyntheticBenchmark(root, "test", detector=detector)
    problems = list(bench.problems())
    assert len(calls) == len({p.meta["scene_id"] for p in problems})
    assert set(calls) == {(128, 128, 3)}
    assert all(len(p.proposals) == 2 and p.proposals.image_id == p.meta["scene_id"]
               for p in problems)
    preds = [Prediction(id=p.id, match_prob=float(p.match), proposal=0,
                        mismatched_relation=p.mismatched_relation) for p in problems]
    m = bench.evaluate(preds)
    assert m["full"]["grounding"] == 0.0 and m["full"]["mrr"] == 1.0
    with pytest.raises(TypeError, match="not Proposals"):
        next(SyntheticBenchmark(root, "test", detector=lambda x: x).problems())


def _copy(root: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(root, dst)
    return dst


def test_bad_data_names_file_and_line(root: Path, tmp_path: Path) -> None:
    data = _copy(root, tmp_path)
    path = data / "annotations" / "test.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2] + ["{not json"] + lines[2:]) + "\n")
    with pytest.raises(DataError, match=r"test\.jsonl: line 3: invalid JSON"):
        SyntheticBenchmark(data, "test")

    at = next(i for i, line in enumerate(lines) if json.loads(line)["relations"] > 0)
    rec = json.loads(lines[at])
    rec["graph"]["relations"] = []
    path.write_text("\n".join(lines[:at] + [json.dumps(rec)] + lines[at + 1:]) + "\n")
    with pytest.raises(DataError, match=rf"line {at + 1}: record '{rec['id']}': not a tree"):
        SyntheticBenchmark(data, "test")

    rec = json.loads(lines[0])
    del rec["target_box"]
    path.write_text("\n".join([json.dumps(rec)] + lines[1:]) + "\n")
    with pytest.raises(DataError, match=r"line 1: .*missing field\(s\) \['target_box'\]"):
        SyntheticBenchmark(data, "test")

    rec = json.loads(lines[0])
    rec["scene_id"] = "s999999"
    path.write_text("\n".join([json.dumps(rec)] + lines[1:]) + "\n")
    with pytest.raises(DataError, match="unknown scene 's999999'"):
        SyntheticBenchmark(data, "test")
    path.write_text("\n".join(lines) + "\n")

    scenes = data / "scenes.jsonl"
    scene_lines = scenes.read_text().splitlines()
    bad = json.loads(scene_lines[0])
    bad["objects"][0]["shape"] = "hexagon"
    bad["split"] = "test"
    scenes.write_text("\n".join([json.dumps(bad)] + scene_lines[1:]) + "\n")
    with pytest.raises(DataError, match=r"scenes\.jsonl: line 1: malformed scene"):
        SyntheticBenchmark(data, "test")

    (data / "manifest.json").unlink()
    with pytest.raises(DataError, match="no manifest"):
        SyntheticBenchmark(data, "test")
    with pytest.raises(DataError, match="does not exist"):
        SyntheticBenchmark(tmp_path / "nowhere", "test")


def test_ensure_dataset_generates_once(tmp_path: Path) -> None:
    root = ensure_dataset(tmp_path / "demo", scenes=4, seed=1, progress=False)
    manifest = root / "manifest.json"
    stamp = manifest.stat().st_mtime_ns
    assert json.loads(manifest.read_text())["totals"]["scenes"] == 4
    assert ensure_dataset(root, scenes=4, seed=1, progress=False) == root
    with pytest.warns(UserWarning, match=r"manifest.json: using the existing dataset, which has "
                                         r"scenes 4 \(asked 50\), seed 1 \(asked 0\)"):
        assert ensure_dataset(root, scenes=50, progress=False) == root
    assert manifest.stat().st_mtime_ns == stamp
    foreign = tmp_path / "other"
    foreign.mkdir()
    (foreign / "manifest.json").write_text(json.dumps({"name": "something else"}))
    with pytest.raises(DataError, match="not a manifest of the synthetic benchmark"):
        ensure_dataset(foreign, scenes=2, progress=False)
    old = json.loads(manifest.read_text())
    old["generator_version"] = "0.1"
    manifest.write_text(json.dumps(old))
    ensure_dataset(root, scenes=3, seed=2, progress=False)
    assert json.loads(manifest.read_text())["totals"]["scenes"] == 3


def test_registry_loads_the_adapter(root: Path) -> None:
    bench = benchmarks.load("synthetic", root, "val", train_subset="len_rels")
    assert isinstance(bench, SyntheticBenchmark) and bench.train_subset == "len_rels"
