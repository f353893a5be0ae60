"""ViPhy adapter: loaders (both CSV layouts, colour JSON), official metrics, problems, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.base import DataError
from benchmarks.viphy import ViPhyBenchmark, read_items, read_probabilities, score_items
from benchmarks.viphy.data import CLASSES, candidate_graph
from benchmarks.viphy.metrics import (
    macro_f1,
    normalise_rows,
    per_class_f1,
    typical_from_distribution,
    typical_set,
)
from rcrn.cli import main
from rcrn.structures import Prediction

SPATIAL_HEADER = ",o1,o2,>,=,<,scene,freq,typical"
# (o1, o2, >, =, <, scene, typical) -- gold sets in file order
SPATIAL_TEST = [
    ("mug", "table", 90, 10, 0, "kitchen", ">"),
    ("lamp", "sofa", 40, 40, 20, "living_room", ">,="),
    ("rug", "lamp", 0, 5, 95, "living_room", "<"),
    ("chair", "table", 10, 80, 10, "kitchen", "="),
]
SPATIAL_TRAIN = [
    ("table", "mug", 0, 10, 90, "kitchen", "<"),       # inverse of test row 0
    ("lamp", "rug", 95, 5, 0, "living_room", ">"),      # inverse of test row 2
    ("mug", "floor", 100, 0, 0, "kitchen", ">"),
]
# Hand-computed example: probabilities of the four test rows (above, below, same level).
PROBS = [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.05, 0.9, 0.05], [0.3, 0.05, 0.65]]


def spatial_csv(rows: list[tuple], index: bool = True) -> str:
    head = SPATIAL_HEADER if index else SPATIAL_HEADER[1:]
    lines = [head]
    for i, (o1, o2, a, s, b, scene, typ) in enumerate(rows):
        typ = f'"{typ}"' if "," in typ else typ
        cells = f"{o1},{o2},{a},{s},{b},{scene},{a + s + b},{typ}"
        lines.append(f"{i},{cells}" if index else cells)
    return "\n".join(lines) + "\n"


def size_csv(rows: list[tuple], index: bool = True) -> str:
    lines = [",o1,o2,>,<,typical" if index else "o1,o2,>,<,typical"]
    for i, (o1, o2, big, small, typ) in enumerate(rows):
        cells = f"{o1},{o2},{big},{small},{typ}"
        lines.append(f"{i},{cells}" if index else cells)
    return "\n".join(lines) + "\n"


SIZE_TRAIN = [("cat", "mouse", 90, 10, ">"), ("mouse", "cat", 10, 90, "<"),
              ("car", "cup", 50, 2, ">")]
SIZE_TEST = [("mouse", "car", 1, 40, "<"), ("car", "cat", 30, 3, ">")]
COLOR_TEST = {"banana": {"yellow": 0.8, "green": 0.2}, "snow": {"white": 1.0},
              "traffic light": {"red": 0.4, "green": 0.3, "black": 0.3}}


def make_release(root: Path) -> Path:
    """A miniature release: dataset/{spatial,size,size_sub,size_trans,color}/..."""
    for task in ("spatial", "size", "size_sub", "size_trans", "color"):
        (root / task).mkdir(parents=True, exist_ok=True)
    (root / "spatial" / "train.csv").write_text(spatial_csv(SPATIAL_TRAIN), encoding="utf-8")
    (root / "spatial" / "val.csv").write_text(spatial_csv(SPATIAL_TRAIN[:1]), encoding="utf-8")
    (root / "spatial" / "test.csv").write_text(spatial_csv(SPATIAL_TEST), encoding="utf-8")
    (root / "size" / "train.csv").write_text(size_csv(SIZE_TRAIN), encoding="utf-8")
    (root / "size" / "val.csv").write_text(size_csv(SIZE_TRAIN[:1]), encoding="utf-8")
    (root / "size" / "test.csv").write_text(size_csv(SIZE_TEST), encoding="utf-8")
    (root / "size_sub" / "test.csv").write_text(
        size_csv([("tabby cat", "field mouse", 9, 1, ">")], index=False), encoding="utf-8")
    (root / "size_trans" / "test.csv").write_text(
        size_csv([("cat", "car", 100, 100, "<"), ("cup", "car", 0, 9, "<")], index=False),
        encoding="utf-8")
    for split in ("train", "val", "test"):
        (root / "color" / f"{split}.json").write_text(json.dumps(COLOR_TEST), encoding="utf-8")
    return root


@pytest.fixture()
def release(tmp_path: Path) -> Path:
    return make_release(tmp_path / "dataset")


# ------------------------------------------------------------------ loaders
def test_spatial_csv_with_and_without_index_column(tmp_path: Path) -> None:
    with_index = tmp_path / "a.csv"
    without = tmp_path / "b.csv"
    with_index.write_text(spatial_csv(SPATIAL_TEST), encoding="utf-8")
    without.write_text(spatial_csv(SPATIAL_TEST, index=False), encoding="utf-8")
    a, b = read_items(with_index, "spatial"), read_items(without, "spatial")
    assert [(i.o1, i.o2, i.gold, i.scene, i.counts) for i in a] == \
           [(i.o1, i.o2, i.gold, i.scene, i.counts) for i in b]
    assert a[1].gold == ("above", "same level")  # official order: above, below, same level
    assert a[2].gold == ("below",) and a[3].gold == ("same level",)
    assert a[0].counts == {"above": 90.0, "below": 0.0, "same level": 10.0}
    assert a[0].freq == 100 and a[0].line == 2 and a[0].id == "viphy:spatial:test:0"
    assert a[1].gold_vector() == [1, 0, 1]


def test_size_layouts_and_single_labels(release: Path) -> None:
    test = read_items(release / "size" / "test.csv", "size")
    sub = read_items(release / "size_sub" / "test.csv", "size_sub")  # no index column
    assert [i.gold for i in test] == [("smaller",), ("bigger",)]
    assert sub[0].o1 == "tabby cat" and sub[0].gold == ("bigger",)
    assert sub[0].classes == ("bigger", "smaller") and sub[0].task == "size_sub"


def test_color_json(release: Path) -> None:
    items = read_items(release / "color" / "test.json", "colour", "test")
    assert [i.o1 for i in items] == ["banana", "snow", "traffic light"]
    assert items[0].gold == ("yellow", "green")  # class order, not file order
    assert items[2].gold_vector() == [1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1]
    assert len(items[0].classes) == 11 and items[0].classes[0] == "red"


@pytest.mark.parametrize("text,message", [
    (",o1,o2,>,<,scene,freq,typical\n", "line 1: header lacks column(s) ="),
    (SPATIAL_HEADER + "\n0,mug,table,9,x,0,kitchen,9,>\n", "line 2: column '=' is not a number"),
    (SPATIAL_HEADER + "\n0,mug,table,9,0,0,kitchen,9,>\n1,cup,mug,1,0,0,kitchen,1,^\n",
     "line 3: 'typical' holds '^'"),
    (SPATIAL_HEADER + "\n0,mug,table,9,0,0,kitchen,9\n", "line 2: 8 fields, the header names 9"),
    (SPATIAL_HEADER + "\n0,,table,9,0,0,kitchen,9,>\n", "line 2: empty object name"),
    (SPATIAL_HEADER + "\n0,mug,table,9,0,-1,kitchen,9,>\n", "line 2: column '<' must be"),
    (SPATIAL_HEADER + "\n0,mug,table,9,0,0,kitchen,9,\n", "line 2: empty 'typical'"),
    ("", "empty file"),
])
def test_csv_errors_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_items(path, "spatial")
    assert str(path) in str(exc.value) and message in str(exc.value)


def test_size_typical_must_be_single(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text(size_csv([("a", "b", 5, 5, '">,<"')]), encoding="utf-8")
    with pytest.raises(DataError, match=r"s\.csv line 2: a size item has one typical label"):
        read_items(path, "size")


@pytest.mark.parametrize("data,message", [
    ({"banana": {"yelow": 1.0}}, "record 0 ('banana'): 'yelow' is not one of the 11 colours"),
    ({"snow": {"white": 1.0}, "tar": {"black": "dark"}}, "record 1 ('tar'): probability"),
    ({"snow": {}}, "record 0 ('snow'): expected a non-empty object"),
    ([1, 2], "expected a non-empty JSON object"),
])
def test_color_errors_name_file_and_record(tmp_path: Path, data: object, message: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError) as exc:
        read_items(path, "color")
    assert str(path) in str(exc.value) and message in str(exc.value)


# ------------------------------------------------------------------ thresholding
@pytest.mark.parametrize("probs,expected", [
    ([0.75, 0.25], [0, 1]),                 # first pass removes nothing: both stay
    ([0.9, 0.1], [0, 1]),                   # p >= 0.1 is kept
    ([0.95, 0.05], [0]),
    ([0.6, 0.3, 0.1], [0, 1, 2]),
    ([0.65, 0.27, 0.08], [0]),              # -> 0.707 / 0.293, then 0.3 removes the second
    ([0.7, 0.25, 0.05], [0]),
    ([0.3, 0.05, 0.65], [0, 2]),            # -> 0.316 / 0.684, both >= 0.3
    ([0.45, 0.25, 0.15, 0.09, 0.06], [0, 1]),   # 3 left -> 0.2 drops 0.176 -> 0.643/0.357
    ([0.5, 0.22, 0.2, 0.08], [0, 1, 2]),    # 3 left at 0.543/0.239/0.217: all >= 0.2
    ([1 / 11] * 11, list(range(11))),       # nothing reaches 0.1: keep the set
    ([3.0, 1.0], [0, 1]),                   # unnormalised input is renormalised first
])
def test_typical_set(probs: list[float], expected: list[int]) -> None:
    assert typical_set(probs) == expected


def test_typical_set_rejects_bad_vectors() -> None:
    for bad in ([0.0, 0.0], [0.5, -0.1], [float("nan"), 1.0], []):
        with pytest.raises(ValueError):
            typical_set(bad)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=11).filter(lambda v: sum(v) > 1e-3))
def test_typical_set_properties(probs: list[float]) -> None:
    chosen = typical_set(probs)
    assert chosen and chosen == sorted(set(chosen))
    assert int(np.argmax(probs)) in chosen or probs[chosen[0]] == max(probs)


def test_typical_from_distribution_reproduces_release_labels() -> None:
    # counts > = < from the released spatial train file and their `typical` column
    assert typical_from_distribution([287, 50, 57]) == [0]
    assert typical_from_distribution([65, 15, 32]) == [0, 2]
    assert typical_from_distribution([30, 178, 399]) == [1, 2]
    assert typical_from_distribution([120, 47, 23]) == [0]
    # 36 / 84 after renormalising is 0.3 exactly in doubles and just under in float32
    assert typical_from_distribution([36, 84, 26]) == [1]
    assert typical_from_distribution([36, 84, 26], float32=False) == [0, 1]


# ------------------------------------------------------------------ F1
def test_macro_f1_hand_computed() -> None:
    gold = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0]])
    pred = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]])
    # class 0: TP 1, FP 1, FN 1 -> 0.5; class 1: TP 2 -> 1; class 2: nothing -> 0
    assert per_class_f1(gold, pred).tolist() == [0.5, 1.0, 0.0]
    assert macro_f1(gold, pred) == pytest.approx(0.5)
    assert macro_f1(np.zeros((2, 2)), np.zeros((2, 2))) == 0.0


# At least 2 columns: scikit-learn reads a one-column matrix as binary labels, not multi-hot.
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 8), st.integers(2, 11), st.randoms(use_true_random=False))
def test_macro_f1_matches_sklearn(n: int, c: int, rnd) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    gold = np.array([[rnd.random() < 0.4 for _ in range(c)] for _ in range(n)], dtype=int)
    pred = np.array([[rnd.random() < 0.4 for _ in range(c)] for _ in range(n)], dtype=int)
    ref = metrics.f1_score(gold, pred, average="macro", zero_division=0)
    assert macro_f1(gold, pred) == pytest.approx(ref)


# ------------------------------------------------------------------ scoring
def test_score_items_hand_computed(release: Path) -> None:
    bench = ViPhyBenchmark(release, "test", task="spatial")
    out = bench.score(PROBS)
    assert out["count"] == 4
    assert out["r_acc"] == pytest.approx(3 / 4)
    assert out["confidence"] == pytest.approx((0.7 + 0.5 + 0.9 + 0.65) / 4)
    # predicted sets: {a,b,s}, {a,b,s}, {b}, {a,s}; F1 above 0.8, below 0.5, same 0.8
    assert out["per_class_f1"] == pytest.approx({"above": 0.8, "below": 0.5,
                                                 "same level": 0.8})
    assert out["f1"] == pytest.approx(0.7)
    assert out["rows_renormalised"] == 0


def test_inverse_pairs_reported_separately(release: Path) -> None:
    bench = ViPhyBenchmark(release, "test", task="spatial")
    assert bench.inverse_in_train() == [True, False, True, False]
    subsets = bench.score(PROBS)["subsets"]
    assert subsets["all"]["count"] == 4
    inv, rest = subsets["inverse_in_train"], subsets["no_inverse_in_train"]
    assert inv["count"] == 2 and inv["r_acc"] == 1.0
    assert inv["confidence"] == pytest.approx((0.7 + 0.9) / 2)
    assert rest["count"] == 2 and rest["r_acc"] == pytest.approx(0.5)
    # size_sub / size_trans look their inverse pairs up in size/train.csv
    trans = ViPhyBenchmark(release, "size_trans/test")
    assert trans.train_path == release / "size" / "train.csv"
    assert trans.inverse_in_train() == [False, True]  # (car, cup) is in train


def test_zero_shot_skips_gold_sets_with_same_level(release: Path) -> None:
    bench = ViPhyBenchmark(release, "test", task="spatial", zero_shot=True)
    out = bench.score(PROBS)
    assert out["count"] == 2 and out["skipped"] == 2
    assert out["r_acc"] == 1.0 and out["confidence"] == pytest.approx(0.8)
    # sets {a,b,s} and {b} against {a} and {b}: F1 1, 2/3, 0
    assert out["f1"] == pytest.approx(5 / 9)
    # a file holding only the scored rows is accepted as well
    assert bench.score([PROBS[0], PROBS[2]])["r_acc"] == 1.0
    with pytest.raises(DataError, match="spatial task only"):
        ViPhyBenchmark(release, "test", task="size", zero_shot=True)


def test_size_two_labels_at_075_025_count_both_in_f1(release: Path) -> None:
    bench = ViPhyBenchmark(release, "test", task="size")
    out = bench.score([[0.25, 0.75], [0.75, 0.25]])
    assert out["r_acc"] == 1.0 and out["confidence"] == pytest.approx(0.75)
    # both items predict {bigger, smaller}: each class TP 1, FP 1 -> 2/3
    assert out["f1"] == pytest.approx(2 / 3)
    assert bench.score([[0.05, 0.95], [0.95, 0.05]])["f1"] == 1.0


def test_rows_are_renormalised_and_bad_rows_rejected(release: Path) -> None:
    bench = ViPhyBenchmark(release, "test", task="size")
    out = bench.score([[1.0, 3.0], [6.0, 2.0]])
    assert out["rows_renormalised"] == 2 and out["confidence"] == pytest.approx(0.75)
    with pytest.raises(DataError, match="row 2: negative value"):
        normalise_rows([[0.5, 0.5], [-1.0, 2.0]])
    with pytest.raises(DataError, match="shape"):
        bench.score([[0.5, 0.5]])


# ------------------------------------------------------------------ benchmark
def test_root_layouts_and_tasks(release: Path) -> None:
    assert len(ViPhyBenchmark(release, "test", task="spatial")) == 4
    assert len(ViPhyBenchmark(release.parent, "spatial/test")) == 4  # dataset/ below root
    assert len(ViPhyBenchmark(release / "spatial", "val")) == 1       # task from the folder
    from_file = ViPhyBenchmark(release / "color" / "train.json")
    assert len(from_file) == 3 and (from_file.task, from_file.split) == ("color", "train")
    assert ViPhyBenchmark(release, "test", task="colour").classes == CLASSES["color"]
    assert len(ViPhyBenchmark(release, "size_sub/test")) == 1
    with pytest.raises(DataError, match="unknown task 'depth'"):
        ViPhyBenchmark(release, "test", task="depth")
    with pytest.raises(DataError, match="split dev not found|unknown split 'dev'"):
        ViPhyBenchmark(release, "dev", task="spatial")
    with pytest.raises(DataError, match="cannot tell the task"):
        ViPhyBenchmark(release, "test")


def test_problems_are_candidate_statements(release: Path) -> None:
    bench = ViPhyBenchmark(release, "test", task="spatial")
    problems = list(bench.problems())
    assert len(problems) == 4 * 3
    first = problems[:3]
    assert [p.meta["candidate"] for p in first] == ["above", "below", "same level"]
    assert [p.match for p in first] == [1, 0, 0]
    g = first[0].graph
    assert g.text == "in a kitchen, the mug is above the table"
    assert [e.text for e in g.entities] == ["the mug", "the table"]
    assert g.relations[0].text == "above" and g.root == 0
    assert first[2].graph.relations[0].text == "at a similar level as"
    assert first[0].meta["scene"] == "kitchen" and len(first[0].proposals) == 0
    assert [p.match for p in problems[3:6]] == [1, 0, 1]  # lamp/sofa: above, same level
    json.dumps(first[0].to_dict())  # JSON-compatible


def test_color_and_size_graphs(release: Path) -> None:
    color = ViPhyBenchmark(release, "test", task="color")
    item = color.items[2]
    g = candidate_graph(item, "red")
    assert g.text == "the traffic light is red" and g.num_entities == 1
    assert g.entities[0].head == "light" and g.entities[0].modifiers == ["red"]
    size = ViPhyBenchmark(release, "test", task="size")
    g = candidate_graph(size.items[0], "bigger")
    assert g.text == "the mouse is bigger than the car"
    assert g.relations[0].text == "bigger than"
    assert size.items[0].prompt() == "the size of mouse in comparison to car"
    assert color.items[0].prompt() == "color of banana"
    spatial = ViPhyBenchmark(release, "test", task="spatial")
    assert spatial.items[1].prompt() == \
        "in a living room, the lamp is located in comparison to sofa"


def test_evaluate_predictions_equals_matrix_scoring(release: Path) -> None:
    bench = ViPhyBenchmark(release, "test", task="spatial")
    preds = [Prediction(id=it.option_id(c), match_prob=0.5 * PROBS[i][k])
             for i, it in enumerate(bench.items) for k, c in enumerate(bench.classes)]
    out = bench.evaluate(list(reversed(preds)))
    ref = bench.score(PROBS)
    assert out["r_acc"] == ref["r_acc"] and out["f1"] == pytest.approx(ref["f1"])
    assert out["confidence"] == pytest.approx(ref["confidence"])
    with pytest.raises(DataError, match="have no prediction"):
        bench.evaluate(preds[:-1])


def test_score_file_and_errors(release: Path, tmp_path: Path) -> None:
    bench = ViPhyBenchmark(release, "test", task="spatial")
    path = tmp_path / "probs.txt"
    path.write_text("\n".join(",".join(str(v) for v in row) for row in PROBS) + "\n",
                    encoding="utf-8")
    assert bench.score_file(path)["f1"] == pytest.approx(0.7)
    np.save(tmp_path / "probs.npy", np.asarray(PROBS))
    assert bench.score_file(tmp_path / "probs.npy")["r_acc"] == pytest.approx(0.75)
    path.write_text("0.7,0.2,0.1\n0.5 0.5\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"probs\.txt line 2: 2 values, expected 3"):
        bench.score_file(path)
    path.write_text("0.7,0.2,0.1\nhigh,0,0\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"probs\.txt line 2: not a list of numbers"):
        read_probabilities(path)
    path.write_text("0.7,0.2,0.1\n", encoding="utf-8")
    with pytest.raises(DataError, match="1 lines of probabilities for 4 items"):
        bench.score_file(path)


def test_cli_score(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "probs.txt"
    path.write_text("\n".join(",".join(str(v) for v in row) for row in PROBS) + "\n",
                    encoding="utf-8")
    args = ["score", "--benchmark", "viphy", "--root", str(release), "--split", "test",
            "--option", "task=spatial", "--predictions", str(path), "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["r_acc"] == pytest.approx(0.75) and out["f1"] == pytest.approx(0.7)
    assert 0 <= out["confidence"] <= 1 and out["subsets"]["inverse_in_train"]["count"] == 2
    assert main(args + ["--option", "zero_shot=true"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == 2
    task_flag = [a for a in args if a != "task=spatial"]
    task_flag[task_flag.index("--option")] = "--task"
    task_flag.insert(task_flag.index("--task") + 1, "spatial")
    assert main(task_flag) == 0
    assert json.loads(capsys.readouterr().out)["r_acc"] == pytest.approx(0.75)
    assert main(args[:-1]) == 0  # the table
    assert "inverse_in_train" in capsys.readouterr().out
    path.write_text("0.5,0.5\n", encoding="utf-8")
    assert main(args) == 2
    assert "probs.txt line 1: 2 values, expected 3" in capsys.readouterr().err


def test_score_items_needs_items() -> None:
    with pytest.raises(DataError, match="no items"):
        score_items([], np.zeros((0, 3)))
