"""The synthetic generator: determinism, uniqueness of positives, falsity of mismatches,
gold graphs, grammar, rendering and splits."""

from __future__ import annotations

import hashlib
import json
from collections import deque
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from benchmarks.synthetic.expressions import (
    CONNECTOR_WORDS,
    Descriptor,
    Edge,
    Expression,
    execute,
    execute_graph,
    query_from_graph,
)
from benchmarks.synthetic.generator import GeneratorConfig, generate_dataset, generate_scene
from benchmarks.synthetic.mismatches import SUBSTITUTIONS
from benchmarks.synthetic.relations import (
    AMBIGUOUS,
    FALSE,
    FAMILY,
    PHRASE_TO_RELATION,
    PHRASES,
    RELATIONS,
    TRUE,
    SceneRelations,
    relation_truth,
)
from benchmarks.synthetic.scene import BACKGROUND, COLORS, SIZES, Geometry, SceneObject
from benchmarks.synthetic.splits import assign_splits
from rcrn.structures import LanguageGraph

GEOMETRY = Geometry.for_size(128)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("synthetic") / "data"
    generate_dataset(root, GeneratorConfig(scenes=40, seed=7), progress=False)
    return root


def _read(root: Path) -> tuple[dict, list[dict]]:
    scenes = {}
    for line in open(root / "scenes.jsonl", encoding="utf-8"):
        s = json.loads(line)
        scenes[s["id"]] = s
    records = []
    for split in ("train", "val", "test"):
        for line in open(root / "annotations" / f"{split}.jsonl", encoding="utf-8"):
            records.append(json.loads(line))
    return scenes, records


def _relations(scene: dict) -> SceneRelations:
    objects = [SceneObject.from_dict(o) for o in scene["objects"]]
    return SceneRelations(objects, Geometry.for_size(scene["width"]))


# ----------------------------------------------------------------- a reference parser
_PHRASES = sorted((p.split() for p in PHRASES.values()), key=len, reverse=True)


def reference_parse(text: str) -> LanguageGraph:
    """Parse the synthetic grammar by its two attachment rules (see expressions.py)."""
    tokens = text.split()
    entities: list[tuple[int, int]] = []
    relations: list[tuple[int, int, tuple[int, int]]] = []
    parent: list[int] = []
    pending: tuple[int, tuple[int, int]] | None = None
    branch = False
    i = 0
    while i < len(tokens):
        if tokens[i] == "and":
            branch, i = True, i + 1
            continue
        if tokens[i] in CONNECTOR_WORDS:
            i += 1
            continue
        phrase = next((p for p in _PHRASES if tokens[i:i + len(p)] == p), None)
        if phrase is not None:
            last = len(entities) - 1
            subject = parent[last] if branch else last
            pending, branch = (subject, (i, i + len(phrase))), False
            i += len(phrase)
            continue
        assert tokens[i] == "the", f"unexpected word {tokens[i]!r} in {text!r}"
        j = i + 1
        while tokens[j] in SIZES or tokens[j] in COLORS:
            j += 1
        entities.append((i, j + 1))
        if pending is not None:
            relations.append((pending[0], len(entities) - 1, pending[1]))
            parent.append(pending[0])
            pending = None
        else:
            parent.append(-1)
        i = j + 1
    return LanguageGraph.from_dict({
        "tokens": tokens, "root": 0, "text": text,
        "entities": [{"text": " ".join(tokens[s:e]), "span": [s, e]} for s, e in entities],
        "relations": [{"subject": s, "object": o, "text": " ".join(tokens[a:b]), "span": [a, b]}
                      for s, o, (a, b) in relations],
    })


# --------------------------------------------------------------------------- tests
def test_same_seed_same_records_and_image_bytes(tmp_path: Path) -> None:
    config = GeneratorConfig(scenes=12, seed=3)
    generate_dataset(tmp_path / "a", config, progress=False)
    generate_dataset(tmp_path / "b", GeneratorConfig(scenes=12, seed=3), progress=False)
    generate_dataset(tmp_path / "c", GeneratorConfig(scenes=12, seed=4), progress=False)

    def digest(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(root.rglob("*")) if p.is_file()}

    a, b, c = digest(tmp_path / "a"), digest(tmp_path / "b"), digest(tmp_path / "c")
    assert len([k for k in a if k.endswith(".png")]) == 12
    assert a == b
    assert a["scenes.jsonl"] != c["scenes.jsonl"]
    # a scene does not depend on how many scenes are generated
    one = generate_scene(5, "train", GeneratorConfig(scenes=1, seed=3))
    line = (tmp_path / "a" / "scenes.jsonl").read_text().splitlines()[5]
    assert json.loads(line)["objects"] == one.scene["objects"]


def test_every_positive_is_unique_and_every_mismatch_false(dataset: Path) -> None:
    scenes, records = _read(dataset)
    assert len(records) > 250
    for rec in records:
        rels = _relations(scenes[rec["scene_id"]])
        graph = LanguageGraph.from_dict(rec["graph"])
        if rec["match"] == 1:
            assert execute_graph(graph, rels, lenient=True) == [rec["target"]], rec["text"]
            assert execute_graph(graph, rels, lenient=False) == [rec["target"]], rec["text"]
            objs = rec["entity_objects"]
            assert objs[graph.root] == rec["target"]
            assert len(set(objs)) == len(objs)
            for r in graph.relations:
                key = PHRASE_TO_RELATION[r.text]
                assert rels.truth(key, objs[r.subject], objs[r.object]) == TRUE, rec["text"]
        else:
            assert execute_graph(graph, rels, lenient=True) == [], rec["text"]


def test_records_are_paired_and_lengths_consistent(dataset: Path) -> None:
    manifest = json.loads((dataset / "manifest.json").read_text())
    th = manifest["thresholds"]
    _, records = _read(dataset)
    by_id = {r["id"]: r for r in records}
    for rec in records:
        graph = LanguageGraph.from_dict(rec["graph"])
        assert rec["words"] == len(graph.tokens) == len(rec["text"].split())
        assert rec["relations"] == graph.num_relations
        assert rec["in_dist_words"] == (rec["pair_words"] <= th["max_words"])
        assert rec["in_dist_rels"] == (rec["relations"] <= th["max_relations"])
        if rec["match"] == 1 and rec["relations"] == 0:
            assert rec["counter_id"] is None
            continue
        other = by_id[rec["counter_id"]]
        assert other["counter_id"] == rec["id"] and other["pair_id"] == rec["pair_id"]
        assert {rec["match"], other["match"]} == {0, 1}
        pos = rec if rec["match"] else other
        assert rec["pair_words"] == pos["words"]
        assert rec["target_box"] == other["target_box"]


def test_mismatch_replaces_exactly_one_phrase(dataset: Path) -> None:
    _, records = _read(dataset)
    by_id = {r["id"]: r for r in records}
    negatives = [r for r in records if r["match"] == 0]
    assert negatives
    for neg in negatives:
        pos = by_id[neg["counter_id"]]
        k = neg["mismatched_relation"]
        pt, nt = pos["graph"]["tokens"], neg["graph"]["tokens"]
        (ps, pe), (ns, ne) = pos["graph"]["relations"][k]["span"], neg["phrase_span"]
        assert (ps, pe) == tuple(neg["original_span"])
        assert " ".join(pt[ps:pe]) == neg["original_phrase"] == pos["graph"]["relations"][k]["text"]
        assert " ".join(nt[ns:ne]) == neg["replacement_phrase"]
        assert neg["graph"]["relations"][k]["text"] == neg["replacement_phrase"]
        assert pt[:ps] == nt[:ns] and pt[pe:] == nt[ne:]
        original = PHRASE_TO_RELATION[neg["original_phrase"]]
        assert PHRASE_TO_RELATION[neg["replacement_phrase"]] in SUBSTITUTIONS[original]
        # same tree: only the replaced relation's text and spans may differ
        for a, b in zip(pos["graph"]["relations"], neg["graph"]["relations"]):
            assert (a["subject"], a["object"]) == (b["subject"], b["object"])


def test_gold_graphs_are_trees_whose_spans_rebuild_the_phrases(dataset: Path) -> None:
    _, records = _read(dataset)
    shapes = {"circle", "square", "triangle", "diamond", "cross", "object"}
    for rec in records:
        graph = LanguageGraph.from_dict(rec["graph"])  # validates the tree
        assert graph.root == 0 and graph.text == rec["text"]
        covered = set()
        for e in graph.entities:
            assert graph.span_text(e.span) == e.text
            assert e.text.split()[0] == "the" and e.head == e.text.split()[-1] in shapes
            assert e.modifiers == e.text.split()[1:-1]
            covered.update(range(*e.span))
        for r in graph.relations:
            assert graph.span_text(r.span) == r.text and r.text in PHRASE_TO_RELATION
            assert not covered & set(range(*r.span))
            covered.update(range(*r.span))
        leftover = {graph.tokens[i] for i in range(len(graph.tokens)) if i not in covered}
        assert leftover <= set(CONNECTOR_WORDS)


def test_reference_parser_recovers_every_gold_graph(dataset: Path) -> None:
    _, records = _read(dataset)
    for rec in records:
        gold = LanguageGraph.from_dict(rec["graph"])
        parsed = reference_parse(rec["text"])
        assert [e.span for e in parsed.entities] == [e.span for e in gold.entities], rec["text"]
        assert ([(r.subject, r.object, r.span) for r in parsed.relations]
                == [(r.subject, r.object, r.span) for r in gold.relations]), rec["text"]


def test_grammar_variety(dataset: Path) -> None:
    _, records = _read(dataset)
    texts = [r["text"] for r in records if r["match"] == 1]
    joined = " | ".join(texts)
    for marker in (" that is ", " which is ", " with the same ", " and "):
        assert marker in joined
    used = {r["text"] for rec in records for r in rec["graph"]["relations"]}
    assert used == set(PHRASES.values())
    counts = {r["relations"] for r in records}
    assert {1, 2, 3, 4, 5} <= counts and max(counts) >= 6
    # reduced relatives: a relation phrase right after its entity, with no connector
    graphs = [LanguageGraph.from_dict(r["graph"]) for r in records]
    assert any(g.relations[0].span[0] == g.entities[0].span[1] for g in graphs if g.relations)
    assert any(g.tokens[g.relations[0].span[0] - 1] == "with" for g in graphs if g.relations)
    # chains (an entity that has a clause is itself related) and branches (two clauses)
    assert any(max(LanguageGraph.from_dict(r["graph"]).depths()) >= 3 for r in records)
    assert any(len({x["subject"] for x in r["graph"]["relations"]}) < r["relations"]
               for r in records)


def test_relation_margins_give_three_values() -> None:
    def obj(x: float, y: float, side: float = 12, size: str = "small", color: str = "red",
            shape: str = "circle") -> SceneObject:
        return SceneObject(shape=shape, color=color, size=size, box=(x, y, x + side, y + side))

    a = obj(10, 50)
    assert relation_truth("left_of", a, obj(40, 50), GEOMETRY) == TRUE
    assert relation_truth("right_of", obj(40, 50), a, GEOMETRY) == TRUE
    assert relation_truth("left_of", a, obj(40, 90), GEOMETRY) == TRUE  # any vertical offset
    assert relation_truth("left_of", a, obj(20, 90), GEOMETRY) == AMBIGUOUS  # boxes overlap in x
    assert relation_truth("left_of", a, obj(12, 90), GEOMETRY) == FALSE  # centres within margin
    assert relation_truth("left_of", obj(40, 50), a, GEOMETRY) == FALSE
    assert relation_truth("above", a, obj(10, 90), GEOMETRY) == TRUE
    assert relation_truth("below", obj(10, 90), a, GEOMETRY) == TRUE
    assert relation_truth("near", a, obj(30, 50), GEOMETRY) == TRUE  # gap 8
    assert relation_truth("near", a, obj(40, 50), GEOMETRY) == AMBIGUOUS  # gap 18
    assert relation_truth("near", a, obj(60, 50), GEOMETRY) == FALSE
    assert relation_truth("far_from", a, obj(90, 50), GEOMETRY) == TRUE
    assert relation_truth("far_from", a, obj(62, 50), GEOMETRY) == AMBIGUOUS  # gap 40
    assert relation_truth("far_from", a, obj(40, 50), GEOMETRY) == FALSE
    assert relation_truth("next_to", a, obj(28, 50), GEOMETRY) == TRUE
    assert relation_truth("next_to", a, obj(28, 58), GEOMETRY) == AMBIGUOUS  # little overlap
    assert relation_truth("next_to", a, obj(10, 66), GEOMETRY) == FALSE  # stacked
    assert relation_truth("next_to", a, obj(50, 50), GEOMETRY) == FALSE
    big = obj(60, 60, 22, "large", "blue", "square")
    assert relation_truth("bigger_than", big, a, GEOMETRY) == TRUE
    assert relation_truth("smaller_than", a, big, GEOMETRY) == TRUE
    assert relation_truth("bigger_than", a, obj(90, 90), GEOMETRY) == FALSE
    assert relation_truth("same_color", a, obj(90, 90, color="red"), GEOMETRY) == TRUE
    assert relation_truth("same_shape", a, big, GEOMETRY) == FALSE
    with pytest.raises(KeyError):
        relation_truth("inside", a, big, GEOMETRY)


def test_executor_set_semantics_and_mismatch_filter() -> None:
    # circle(0) left of square(1); a second circle(2) far right, below the square
    objects = [SceneObject("circle", "red", "small", (10, 10, 22, 22)),
               SceneObject("square", "blue", "large", (50, 10, 72, 32)),
               SceneObject("circle", "red", "small", (100, 80, 112, 92))]
    rels = SceneRelations(objects, GEOMETRY)
    circle = Expression(nodes=[Descriptor(shape="circle")])
    assert execute(circle, rels) == 0b101
    left = Expression(nodes=[Descriptor(shape="circle"), Descriptor(shape="square")],
                      edges=[Edge(0, 1, "left_of")])
    assert execute(left, rels) == 0b001
    assert execute(left.with_relation(0, "right_of"), rels, lenient=True) == 0b100
    below = left.with_relation(0, "below")
    assert execute(below, rels) == 0b100
    # the executor reads parsed graphs whose relation runs from child to parent too
    graph = LanguageGraph.from_dict({
        "tokens": "the square that the circle is to the left of".split(), "root": 0,
        "entities": [{"text": "the square", "span": [0, 2]},
                     {"text": "the circle", "span": [3, 5]}],
        "relations": [{"subject": 1, "object": 0, "text": "is to the left of", "span": [5, 10]}],
    })
    assert query_from_graph(graph).edges == [(0, 1, "left_of", True)]
    assert execute_graph(graph, rels) == [1]
    bad = LanguageGraph.from_triples("the big cup", [], root="the big cup")
    with pytest.raises(ValueError, match="unknown word 'big'"):
        query_from_graph(bad)


def test_substitutions_keep_the_clause_verb() -> None:
    assert set(SUBSTITUTIONS) == set(RELATIONS)
    for key, subs in SUBSTITUTIONS.items():
        assert subs and key not in subs
        assert all(FAMILY[s] == FAMILY[key] for s in subs)


def test_rendered_objects_are_exact_connected_components(dataset: Path) -> None:
    scenes, _ = _read(dataset)
    for scene in list(scenes.values())[:4]:
        pixels = np.asarray(Image.open(dataset / scene["image"]).convert("RGB"))
        assert pixels.shape == (128, 128, 3)
        fg = (pixels != np.array(BACKGROUND, dtype=np.uint8)).any(axis=2)
        seen = np.zeros_like(fg)
        boxes = []
        for y0, x0 in zip(*np.nonzero(fg)):
            if seen[y0, x0]:
                continue
            seen[y0, x0] = True
            queue, ys, xs = deque([(y0, x0)]), [], []
            while queue:
                y, x = queue.popleft()
                ys.append(y)
                xs.append(x)
                for dy in (-1, 0, 1):
                    for dx in (-1, 0, 1):
                        v, u = y + dy, x + dx
                        if 0 <= v < 128 and 0 <= u < 128 and fg[v, u] and not seen[v, u]:
                            seen[v, u] = True
                            queue.append((v, u))
            boxes.append([min(xs), min(ys), max(xs) + 1, max(ys) + 1])
        expected = sorted([[int(v) for v in o["box"]] for o in scene["objects"]])
        assert sorted(boxes) == expected
        for o in scene["objects"]:
            x1, y1, x2, y2 = (int(v) for v in o["box"])
            colours = {tuple(c) for c in pixels[y1:y2, x1:x2][fg[y1:y2, x1:x2]]}
            assert len(colours) == 1


def test_splits_are_disjoint_in_scenes(dataset: Path) -> None:
    scenes, records = _read(dataset)
    by_split: dict[str, set[str]] = {}
    for rec in records:
        assert scenes[rec["scene_id"]]["split"] == rec["split"]
        by_split.setdefault(rec["split"], set()).add(rec["scene_id"])
    assert set(by_split) == {"train", "val", "test"}
    assert not by_split["train"] & by_split["val"]
    assert not by_split["train"] & by_split["test"]
    assert not by_split["val"] & by_split["test"]
    names = assign_splits(100, seed=1)
    assert (names.count("train"), names.count("val"), names.count("test")) == (80, 10, 10)
    assert assign_splits(3, seed=0).count("test") == 1
    assert names == assign_splits(100, seed=1) != assign_splits(100, seed=2)
    with pytest.raises(ValueError):
        assign_splits(10, 0, (0.5, 0.5, 0.5))


def test_manifest_describes_the_data(dataset: Path) -> None:
    m = json.loads((dataset / "manifest.json").read_text())
    _, records = _read(dataset)
    assert m["seed"] == 7 and m["generator_version"] and m["image_size"] == [128, 128]
    assert m["totals"]["expressions"] == len(records)
    assert m["totals"]["pairs"] == sum(r["match"] == 0 for r in records)
    assert m["totals"]["scenes"] == 40
    words = {w for r in records for w in r["text"].split()}
    assert words <= set(m["vocabulary"]["words"])
    test_rel = m["distributions"]["test"]["relations"]
    assert sum(test_rel.values()) == m["counts"]["test"]["expressions"]


def test_generator_rejects_bad_settings(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="image size"):
        generate_dataset(tmp_path, GeneratorConfig(scenes=2, size=32), progress=False)
    with pytest.raises(ValueError, match="min_objects"):
        GeneratorConfig(min_objects=5, max_objects=4).validate()
    generate_dataset(tmp_path, GeneratorConfig(scenes=3, seed=0), progress=False)
    with pytest.raises(FileExistsError):
        generate_dataset(tmp_path, GeneratorConfig(scenes=3, seed=0), progress=False)


def test_other_image_size_keeps_invariants() -> None:
    config = GeneratorConfig(scenes=1, seed=11, size=96)
    for sample in (generate_scene(i, "test", config) for i in range(3)):
        assert sample.image.size == (96, 96)
        rels = _relations(sample.scene)
        for rec in sample.records:
            graph = LanguageGraph.from_dict(rec["graph"])
            found = execute_graph(graph, rels, lenient=True)
            assert found == ([rec["target"]] if rec["match"] else [])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), index=st.integers(0, 10**5))
def test_any_scene_keeps_the_invariants(seed: int, index: int) -> None:
    sample = generate_scene(index, "train", GeneratorConfig(scenes=1, seed=seed))
    assert 3 <= len(sample.scene["objects"]) <= 10
    rels = _relations(sample.scene)
    for rec in sample.records:
        graph = LanguageGraph.from_dict(rec["graph"])
        expected = [rec["target"]] if rec["match"] else []
        assert execute_graph(graph, rels, lenient=True) == expected, rec["text"]
        parsed = reference_parse(rec["text"])
        assert ([(r.subject, r.object, r.span) for r in parsed.relations]
                == [(r.subject, r.object, r.span) for r in graph.relations])


# ------------------------------------------------- output folders: only its own files
def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_generation_never_touches_a_folder_of_other_files(tmp_path: Path) -> None:
    from benchmarks.base import DataError
    from benchmarks.outputs import ForeignFilesError
    from benchmarks.synthetic import ensure_dataset

    # someone else's data in the layout's folder names, no synthetic manifest
    other = tmp_path / "vsr"
    (other / "images").mkdir(parents=True)
    (other / "annotations").mkdir()
    (other / "images" / "000000001.jpg").write_bytes(b"\xff\xd8 a photo")
    (other / "annotations" / "instances_train2017.json").write_text("{}")
    before = _files(other)
    for overwrite in (False, True):
        with pytest.raises(ForeignFilesError, match=r"did not write, e\.g\. .*"
                                                    r"instances_train2017\.json \(2 in all\)"):
            generate_dataset(other, GeneratorConfig(scenes=2), progress=False,
                             overwrite=overwrite)
    # rcrn train / demo / lengthgen go through ensure_dataset
    with pytest.raises(DataError, match=r"vsr holds files the synthetic generator did not"):
        ensure_dataset(other, scenes=2, progress=False)
    assert _files(other) == before
    # a manifest of something else
    (other / "manifest.json").write_text(json.dumps({"layout": "gitm-mr"}))
    with pytest.raises(ForeignFilesError, match="not a manifest of the synthetic generator"):
        generate_dataset(other, GeneratorConfig(scenes=2), progress=False, overwrite=True)
    # a file added to a generated dataset keeps the whole dataset as it is
    root = tmp_path / "syn"
    generate_dataset(root, GeneratorConfig(scenes=3, seed=0), progress=False)
    (root / "images" / "notes.txt").write_text("mine")
    before = _files(root)
    with pytest.raises(ForeignFilesError, match=r"images/notes\.txt \(1 in all\)"):
        generate_dataset(root, GeneratorConfig(scenes=2, seed=1), progress=False,
                         overwrite=True)
    assert _files(root) == before
    # a file where the folder should be
    (tmp_path / "file").write_text("x")
    with pytest.raises(ForeignFilesError, match="is a file"):
        generate_dataset(tmp_path / "file", GeneratorConfig(scenes=2), progress=False)


def test_overwrite_removes_only_the_files_the_manifest_lists(tmp_path: Path) -> None:
    from benchmarks.outputs import ForeignFilesError

    root = tmp_path / "syn"
    first = generate_dataset(root, GeneratorConfig(scenes=5, seed=0), progress=False)
    assert set(_files(root)) == set(first["written"]) | {"manifest.json"}
    assert len([f for f in first["written"] if f.startswith("images/")]) == 5
    second = generate_dataset(root, GeneratorConfig(scenes=2, seed=1), progress=False,
                              overwrite=True)
    # the three images of the first dataset that the second has not are gone
    assert set(_files(root)) == set(second["written"]) | {"manifest.json"}
    assert json.loads((root / "manifest.json").read_text())["seed"] == 1
    # a manifest that lists nothing (an older generator's) lets nothing be replaced
    manifest = json.loads((root / "manifest.json").read_text())
    del manifest["written"]
    (root / "manifest.json").write_text(json.dumps(manifest))
    before = _files(root)
    with pytest.raises(ForeignFilesError, match="lists no files it wrote"):
        generate_dataset(root, GeneratorConfig(scenes=2, seed=2), progress=False,
                         overwrite=True)
    assert _files(root) == before


def test_an_interrupted_generation_is_replaced_by_the_next(tmp_path: Path,
                                                          monkeypatch) -> None:
    import benchmarks.synthetic.generator as gen
    from benchmarks.base import DataError
    from benchmarks.outputs import JOURNAL
    from benchmarks.synthetic import SyntheticBenchmark, ensure_dataset

    real = gen.generate_scene

    def interrupted(index: int, split: str, config: GeneratorConfig):
        if index == 2:
            raise KeyboardInterrupt  # stands for a killed process: no manifest is written
        return real(index, split, config)

    monkeypatch.setattr(gen, "generate_scene", interrupted)
    root = tmp_path / "syn"
    with pytest.raises(KeyboardInterrupt):
        gen.generate_dataset(root, GeneratorConfig(scenes=4, seed=1), progress=False)
    monkeypatch.setattr(gen, "generate_scene", real)
    assert (root / JOURNAL).exists() and not (root / "manifest.json").exists()
    assert (root / "images" / "s000001.png").exists()
    # with a file of someone else's in it, it is not replaced
    (root / "mine.txt").write_text("x")
    with pytest.raises(DataError, match="did not write, e.g. .*mine.txt"):
        ensure_dataset(root, scenes=4, seed=1, progress=False)
    (root / "mine.txt").unlink()
    assert ensure_dataset(root, scenes=4, seed=1, progress=False) == root
    assert not (root / JOURNAL).exists()
    assert len(list((root / "images").glob("*.png"))) == 4
    assert len(SyntheticBenchmark(root, "train")) > 0


def test_the_gitm_mr_layout_writer_replaces_only_its_own_output(tmp_path: Path) -> None:
    from benchmarks.gitm_mr import convert_synthetic
    from benchmarks.outputs import ForeignFilesError

    src = tmp_path / "syn"
    generate_dataset(src, GeneratorConfig(scenes=3, seed=0, size=64, per_scene=2),
                     progress=False)
    # a folder like the official release (no manifest): never written into
    release = tmp_path / "release"
    (release / "expression").mkdir(parents=True)
    (release / "expression" / "train_expressions_ori_rel.json").write_text('{"1": {}}')
    before = _files(release)
    with pytest.raises(ForeignFilesError, match="train_expressions_ori_rel.json"):
        convert_synthetic(src, release, feature_dim=16)
    assert _files(release) == before
    # its own output is replaced file by file: a vocabulary of another size goes
    out = tmp_path / "gitm"
    first = convert_synthetic(src, out, feature_dim=16)
    assert set(_files(out)) == set(first["written"]) | {"manifest.json"}
    stale = out / first["vocabulary"]
    renamed = stale.with_name("vocabulary_99999.txt")
    stale.rename(renamed)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["written"] = [renamed.relative_to(out).as_posix() if f == first["vocabulary"]
                           else f for f in manifest["written"]]
    (out / "manifest.json").write_text(json.dumps(manifest))
    second = convert_synthetic(src, out, feature_dim=8)
    assert not renamed.exists() and set(_files(out)) == set(second["written"]) | {
        "manifest.json"}
