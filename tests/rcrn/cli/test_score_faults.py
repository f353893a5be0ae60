"""Bad input to the scorers and benchmark readers: a clean one-line error or a right result.

Every benchmark's ``rcrn score`` refuses predictions it cannot score (non-finite or
out-of-range probabilities, strings and booleans, malformed boxes, missing or repeated
ids, relation and proposal indices out of range) with an error naming the file and
line; readers name the file and line of undecodable text; image paths stay inside the
data root; the restricted unpickler caps the sizes a pickle declares; program text
nests at most ``MAX_DEPTH`` deep.  The fuzz tests feed random bytes, truncations,
wrong JSON types, NaN / infinity and huge values and accept only the project's error
classes or a result that matches a direct computation.
"""

from __future__ import annotations

import json
import math
import pickle
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import benchmarks
from benchmarks import vsr, whatsup
from benchmarks.base import DataError, confined_path, prediction_from_record
from benchmarks.gitm_metrics import gitm_metrics
from benchmarks.gitm_mr import GITMMRBenchmark, convert_synthetic
from benchmarks.synthetic import SyntheticBenchmark
from benchmarks.synthetic.benchmark import load_records, load_scenes
from benchmarks.synthetic.generator import GeneratorConfig, generate_dataset
from benchmarks.viphy.metrics import normalise_rows
from rcrn import programs as P
from rcrn import safe_pickle
from rcrn.cli import main
from rcrn.cli.benchmark_runs import image_path
from rcrn.structures import Prediction

FUZZ = settings(deadline=None, max_examples=40,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
BAD_PROBS = [("nan", "NaN"), ("inf", "Infinity"), ("minus5", "-5"), ("string", '"0.9"'),
             ("bool", "true")]


# ------------------------------------------------------------------ data of every benchmark
def _vsr_record(caption: str, relation: str, label: int, image: str) -> dict:
    return {"image": image, "caption": caption, "label": label, "relation": relation}


def _write_vsr(root: Path) -> Path:
    path = root / "splits" / "random" / "test.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [_vsr_record("The cat is on the bed.", "on", 1, "000000000001.jpg"),
               _vsr_record("The dog is under the table.", "under", 0, "000000000002.jpg"),
               _vsr_record("The cup is left of the plate.", "left of", 1, "000000000003.jpg")]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return root


PREPS_A = {"on": "on", "under": "under", "left_of": "to the left of",
           "right_of": "to the right of"}


def _controlled_a(groups: list[tuple[str, str]]) -> list[dict]:
    out = []
    for subj, obj in groups:
        for prep, phrase in PREPS_A.items():
            others = [p for p in PREPS_A.values() if p != phrase]
            out.append({"image_path": f"data/controlled_images/{subj}_{prep}_{obj}.jpeg",
                        "caption_options": [f"A {subj} {p} a {obj}" for p in [phrase, *others]]})
    return out


def _write_whatsup(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "controlled_images_dataset.json").write_text(
        json.dumps(_controlled_a([("mug", "plate"), ("book", "box")])), encoding="utf-8")
    return root


def _write_viphy(root: Path) -> Path:
    folder = root / "spatial"
    folder.mkdir(parents=True, exist_ok=True)
    rows = [("mug", "table", 90, 10, 0, "kitchen", ">"),
            ("lamp", "sofa", 40, 40, 20, "living_room", '">,="'),
            ("rug", "lamp", 0, 5, 95, "living_room", "<")]
    lines = [",o1,o2,>,=,<,scene,freq,typical"]
    lines += [f"{i},{o1},{o2},{a},{s},{b},{sc},{a + s + b},{t}"
              for i, (o1, o2, a, s, b, sc, t) in enumerate(rows)]
    (folder / "test.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Roots, splits and perfect prediction records of the five benchmarks."""
    base = tmp_path_factory.mktemp("score_faults")
    synth = base / "synthetic"
    generate_dataset(synth, GeneratorConfig(scenes=12, seed=1), progress=False)
    gitm = base / "gitm"
    convert_synthetic(synth, gitm, feature_dim=8)
    out: dict[str, Any] = {"base": base}
    roots = {"vsr": (_write_vsr(base / "vsr"), "random/test"),
             "whatsup": (_write_whatsup(base / "whatsup"), "controlled_a"),
             "viphy": (_write_viphy(base / "viphy"), "test"),
             "synthetic": (synth, "test"), "gitm_mr": (gitm, "test")}
    for name, (root, split) in roots.items():
        bench = benchmarks.load(name, root, split)
        out[name] = {"root": root, "split": split, "bench": bench,
                     "records": _perfect(name, bench)}
    return out


def _perfect(name: str, bench: Any) -> list[dict]:
    """Prediction records that score every item right."""
    if name == "vsr":
        return [{"id": it.id, "match_prob": 0.9 if it.label else 0.1} for it in bench.items]
    if name == "whatsup":
        return [{"id": it.option_id(k), "match_prob": 0.9 if k == 0 else 0.1}
                for it in bench.items for k in range(len(it.options))]
    if name == "viphy":
        return [{"id": it.option_id(c), "match_prob": 0.9 if c in it.gold else 0.1}
                for it in bench.items for c in bench.classes]
    out = []
    for p in bench.problems():
        if p.match == 1:
            rec: dict[str, Any] = {"id": p.id, "match_prob": 0.9}
            if name == "synthetic":
                rec["box"] = [float(v) for v in p.referent_box]
            else:
                rec["proposal"] = p.meta["gt_idx"]
        else:
            rec = {"id": p.id, "match_prob": 0.1, "mismatched_relation": p.mismatched_relation}
        out.append(rec)
    assert out, f"the {name} fixture has no problems"
    return out


def _score(data: dict, name: str, lines: list[str], capsys: pytest.CaptureFixture[str],
           file: str = "predictions.jsonl") -> tuple[int, str, str, Path]:
    path = data["base"] / f"{name}_{file}"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    d = data[name]
    rc = main(["score", "--benchmark", name, "--root", str(d["root"]), "--split", d["split"],
               "--predictions", str(path), "--json"])
    out, err = capsys.readouterr()
    return rc, out, err, path


def _lines(records: list[dict]) -> list[str]:
    return [json.dumps(r) for r in records]


def _one_line_error(rc: int, err: str, *needles: str) -> None:
    assert rc == 2, err
    assert err.count("\n") == 1 and err.startswith("rcrn score: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)


NAMES = ["vsr", "whatsup", "viphy", "synthetic", "gitm_mr"]


def test_perfect_predictions_score_perfectly(data: dict,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    for name in NAMES:
        rc, out, err, _ = _score(data, name, _lines(data[name]["records"]), capsys)
        assert rc == 0, err
        metrics = json.loads(out)
        if name in ("vsr", "whatsup"):
            assert metrics["accuracy"] == 1.0
        elif name == "viphy":
            assert metrics["r_acc"] == 1.0
        else:
            assert metrics["full"]["match"] == 1.0 and metrics["full"]["mrr"] == 1.0
            assert metrics["full"]["grounding"] == 1.0


# ------------------------------------------------------------------ predictions.jsonl faults
def _refused_with_raw_field(data: dict, name: str, index: int, field: str, raw: str,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """Record ``index`` with ``field`` written as the raw JSON text ``raw``: `rcrn score`
    refuses it in one line naming the file, the line and the field."""
    lines = _lines(data[name]["records"])
    rec = dict(data[name]["records"][index])
    rec[field] = "@"
    lines[index] = json.dumps(rec).replace('"@"', raw)
    rc, _, err, path = _score(data, name, lines, capsys)
    _one_line_error(rc, err, f"{path} line {index + 1}", repr(field))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("label,value", BAD_PROBS, ids=[b[0] for b in BAD_PROBS])
def test_bad_match_prob_names_file_and_line(data: dict, name: str, label: str, value: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _refused_with_raw_field(data, name, 1, "match_prob", value, capsys)


@pytest.mark.parametrize("name", ["vsr", "synthetic", "gitm_mr"])
@pytest.mark.parametrize("box", ["[1, 2]", '["a", 1, 2, 3]', "[0, 0, NaN, 3]",
                                 "[5, 5, 1, 1]", '"0 0 1 1"', "[true, 0, 1, 1]"])
def test_malformed_box_names_file_and_line(data: dict, name: str, box: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _refused_with_raw_field(data, name, 0, "box", box, capsys)


def _negative_line(records: list[dict]) -> int:
    """Index of a record of a mismatched item (any record for the others)."""
    return next((i for i, r in enumerate(records) if r.get("mismatched_relation") is not None),
                0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("index", [99, -3, "0", 1.5])
def test_mismatch_index_out_of_range_names_file_and_line(
        data: dict, name: str, index: Any, capsys: pytest.CaptureFixture[str]) -> None:
    records = [dict(r) for r in data[name]["records"]]
    i = _negative_line(records)
    records[i]["mismatched_relation"] = index
    rc, _, err, path = _score(data, name, _lines(records), capsys)
    _one_line_error(rc, err, f"{path} line {i + 1}", "'mismatched_relation'")


def test_mismatch_index_in_range_is_scored(data: dict,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("synthetic", "gitm_mr"):
        records = [dict(r) for r in data[name]["records"]]
        i = _negative_line(records)
        wrong = 0 if records[i]["mismatched_relation"] else 1   # another relation, in range
        records[i]["mismatched_relation"] = wrong
        rc, out, err, _ = _score(data, name, _lines(records), capsys)
        assert rc == 0, err
        assert json.loads(out)["full"]["mrr"] < 1.0


@pytest.mark.parametrize("name", ["synthetic", "gitm_mr"])
def test_proposal_index_out_of_range(data: dict, name: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    records = [dict(r) for r in data[name]["records"]]
    records[0].pop("box", None)
    records[0]["proposal"] = 99
    rc, _, err, path = _score(data, name, _lines(records), capsys)
    _one_line_error(rc, err, f"{path} line 1", "'proposal' 99 is out of range")


@pytest.mark.parametrize("name", NAMES)
def test_missing_and_repeated_predictions(data: dict, name: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    lines = _lines(data[name]["records"])
    rc, _, err, path = _score(data, name, lines[:-1], capsys)
    _one_line_error(rc, err, str(path), "no prediction")
    rc, _, err, path = _score(data, name, lines + [lines[0]], capsys)
    _one_line_error(rc, err, f"{path} line {len(lines) + 1}", "line 1)")


def test_predictions_that_are_no_json_object(data: dict,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("[1, 2]", '{"id": 3, "match_prob": 0.5}', '{"match_prob": 0.5}',
                '{"id": "x", "match_prob": 0.5', "[" * 50000, '{"id": ""', "1e999"):
        lines = _lines(data["vsr"]["records"])
        lines[1] = bad
        rc, _, err, path = _score(data, "vsr", lines, capsys)
        _one_line_error(rc, err, f"{path} line 2")


def test_predictions_directory_is_called_a_directory(data: dict,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    d = data["vsr"]
    folder = data["base"] / "predictions_dir.jsonl"
    folder.mkdir(exist_ok=True)
    rc = main(["score", "--benchmark", "vsr", "--root", str(d["root"]), "--split", d["split"],
               "--predictions", str(folder)])
    err = capsys.readouterr().err
    _one_line_error(rc, err, str(folder), "is a directory")
    assert "does not exist" not in err


def test_non_utf8_files_name_file_and_line(data: dict, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # a VSR split file
    root = _write_vsr(tmp_path / "vsr")
    split = root / "splits" / "random" / "test.jsonl"
    raw = split.read_bytes().splitlines(keepends=True)
    raw[1] = raw[1].replace(b"dog", b"d\xf6g")   # latin-1, not UTF-8
    split.write_bytes(b"".join(raw))
    with pytest.raises(DataError, match=rf"{split} line 2: not UTF-8"):
        vsr.VSRBenchmark(root, "random/test")
    preds = data["base"] / "vsr_ok.jsonl"
    preds.write_text("".join(line + "\n" for line in _lines(data["vsr"]["records"])))
    rc = main(["score", "--benchmark", "vsr", "--root", str(root), "--split", "random/test",
               "--predictions", str(preds)])
    _one_line_error(rc, capsys.readouterr().err, f"{split} line 2", "not UTF-8")
    # a predictions file
    bad = tmp_path / "predictions.jsonl"
    bad.write_bytes(preds.read_bytes() + b'{"id": "\xff", "match_prob": 0.5}\n')
    rc = main(["score", "--benchmark", "vsr", "--root", str(data["vsr"]["root"]),
               "--split", "random/test", "--predictions", str(bad)])
    _one_line_error(rc, capsys.readouterr().err, f"{bad} line 4", "not UTF-8")
    # the synthetic benchmark's scenes
    synth = tmp_path / "synthetic"
    shutil.copytree(data["synthetic"]["root"], synth)
    scenes = synth / "scenes.jsonl"
    scenes.write_bytes(scenes.read_bytes() + b"\x80\x81\n")
    n = len(scenes.read_bytes().splitlines())
    with pytest.raises(DataError, match=rf"{scenes} line {n}: not UTF-8"):
        SyntheticBenchmark(synth, "test")


def test_whatsup_repeated_record_names_both(data: dict, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    records = _controlled_a([("mug", "plate")])
    path = tmp_path / "controlled_images_dataset.json"
    path.write_text(json.dumps(records + [records[2]]), encoding="utf-8")
    with pytest.raises(DataError, match=rf"{path} record 4: repeats record 2"):
        whatsup.WhatsUpBenchmark(tmp_path, "controlled_a")
    # the same slot under another file name is a repeat too
    twin = dict(records[0], image_path="data/other/mug_on_plate.jpg")
    path.write_text(json.dumps(records + [twin]), encoding="utf-8")
    scores = tmp_path / "scores.txt"
    scores.write_text("0.9 0.1 0.1 0.1\n" * 5, encoding="utf-8")
    rc = main(["score", "--benchmark", "whatsup", "--root", str(tmp_path), "--split",
               "controlled_a", "--predictions", str(scores)])
    _one_line_error(rc, capsys.readouterr().err, "record 4: repeats record 0")


def test_scores_that_are_no_real_numbers(tmp_path: Path) -> None:
    items = whatsup.read_items(_write_whatsup(tmp_path)
                               / "controlled_images_dataset.json", "controlled_a")
    for bad in (np.ones((8, 4), dtype=complex), np.array([["a"] * 4] * 8),
                [[1, 2], [3]] * 4):
        with pytest.raises(DataError):
            whatsup.score(items, bad)
    np.save(tmp_path / "c.npy", np.ones((8, 4), dtype=complex))
    with pytest.raises(DataError, match="real numbers"):
        whatsup.read_scores(tmp_path / "c.npy", 8, 4)
    for bad in (np.ones((2, 3), dtype=complex), [[1e308, 1e308, 1.0]], [[1, 2], [3]]):
        with pytest.raises(DataError):
            normalise_rows(bad)


# ------------------------------------------------------------------ confinement
@pytest.mark.parametrize("image", ["../outside.png", "images/../../outside.png", "ABSOLUTE"])
def test_scene_images_stay_inside_the_data_root(data: dict, tmp_path: Path, image: str) -> None:
    outside = tmp_path / "outside.png"
    first = json.loads((data["synthetic"]["root"] / "scenes.jsonl").read_text().splitlines()[0])
    shutil.copy(data["synthetic"]["root"] / first["image"], outside)
    root = tmp_path / "synthetic"
    shutil.copytree(data["synthetic"]["root"], root)
    lines = (root / "scenes.jsonl").read_text(encoding="utf-8").splitlines()
    first["image"] = str(outside) if image == "ABSOLUTE" else image
    lines[0] = json.dumps(first)
    (root / "scenes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    opened: list[Any] = []

    def detector(pixels: np.ndarray) -> Any:
        opened.append(pixels)
        raise AssertionError("an image was read")

    pattern = rf"scenes.jsonl: line 1: scene '{first['id']}': image path .* leads out of"
    with pytest.raises(DataError, match=pattern):
        SyntheticBenchmark(root, first["split"], detector=detector)
    with pytest.raises(DataError, match=pattern):
        convert_synthetic(root, tmp_path / "gitm_out", feature_dim=8)
    assert not opened and not (tmp_path / "gitm_out" / "manifest.json").exists()


def test_one_confinement_rule_for_every_benchmark(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.jpg").write_bytes(b"x")
    assert image_path(tmp_path, "a.jpg", ("images", "")) == tmp_path / "images" / "a.jpg"
    assert confined_path(tmp_path, "images/../images/a.jpg") == tmp_path / "images" / "a.jpg"
    for bad in ("../a.jpg", "/etc/passwd", "images/../../a.jpg", "", ".", "a\0.jpg"):
        with pytest.raises(DataError, match="image path"):
            confined_path(tmp_path, bad)
        with pytest.raises(DataError, match="image path"):
            image_path(tmp_path, bad, ("",))
    with pytest.raises(DataError, match="image path '../../a.jpg' leads out"):
        image_path(tmp_path, "../../a.jpg", ("images",))


# ------------------------------------------------------------------ the restricted unpickler
DECLARED = {
    "bytearray(2**30)": b"\x80\x02cbuiltins\nbytearray\nJ\x00\x00\x00@\x85R.",
    "set(range(2**23))": b"\x80\x02cbuiltins\nset\ncbuiltins\nrange\nJ\x00\x00\x80\x00\x85R\x85R.",
    "frozenset(range(2**23))": (b"\x80\x02cbuiltins\nfrozenset\ncbuiltins\nrange\n"
                                b"J\x00\x00\x80\x00\x85R\x85R."),
    "range(10**18)": b"\x80\x02cbuiltins\nrange\n\x8a\x08\x00\x00d\xa7\xb3\xb6\xe0\r\x85R.",
    "ndarray((2**27,))": b"\x80\x02cnumpy\nndarray\nJ\x00\x00\x00\x08\x85\x85R.",
    "_reconstruct(ndarray, (2**30,), b)": (b"\x80\x02cnumpy._core.multiarray\n_reconstruct\n"
                                           b"cnumpy\nndarray\nJ\x00\x00\x00@\x85C\x01b\x87R."),
}


@pytest.mark.parametrize("label", list(DECLARED))
def test_declared_sizes_are_capped(label: str) -> None:
    data = DECLARED[label]
    assert len(data) < 80
    with pytest.raises(safe_pickle.UnsafePickleError,
                       match=r"^x\.pkl: .* exceeds the cap of [\d,]+ \w+ \(max_(bytes|items)\)$"):
        safe_pickle.loads(data, "x.pkl")


@pytest.mark.parametrize("data", [b"Nr\x00\x00\x00\x40.",          # LONG_BINPUT 2**30
                                  b"\x80\x02Nr\xff\xff\xff\xff.",      # LONG_BINPUT 2**32 - 1
                                  b"Np1073741824\n."])                 # PUT 2**30 (text)
def test_a_memo_index_beyond_the_data_is_refused_before_loading(data: bytes) -> None:
    """The C unpickler would size its memo table by the index (16 GiB and more for these
    few bytes); the loader refuses it with one line instead."""
    with pytest.raises(safe_pickle.UnsafePickleError,
                       match=r"^f\.pkl: memo index [0-9,]+ at byte \d+ is beyond the data"):
        safe_pickle.loads(data, "f.pkl")
    # memo indices a pickler writes load as before, at every protocol
    value = {"a": [1, 2, "x"], "b": ("y", [3.5])}
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        assert safe_pickle.loads(pickle.dumps(value, proto), "f.pkl") == value


def test_caps_count_in_total_and_can_be_set() -> None:
    one = pickle.dumps(bytearray(40), 2)
    declared = b"\x80\x02cbuiltins\nbytearray\nM\xe8\x03\x85R."   # bytearray(1000)
    assert safe_pickle.loads(declared, max_bytes=1000) == bytearray(1000)
    with pytest.raises(safe_pickle.UnsafePickleError, match="cap of 999 bytes"):
        safe_pickle.loads(declared, max_bytes=999)
    many = b"\x80\x02(" + b"cbuiltins\nbytearray\nK\x28\x85R" * 3 + b"l."
    assert safe_pickle.loads(many, max_total=120) == [bytearray(40)] * 3
    with pytest.raises(safe_pickle.UnsafePickleError, match=r"\(max_total\)"):
        safe_pickle.loads(many, "m.pkl", max_total=100)
    with pytest.raises(safe_pickle.UnsafePickleError, match=r"\(max_bytes\)"):
        safe_pickle.loads(b"\x80\x02cbuiltins\nbytearray\nK\x28\x85R.", max_bytes=39)
    assert safe_pickle.loads(one) == bytearray(40)


def test_plain_data_round_trips() -> None:
    value = {"box": np.arange(12, dtype=np.float32).reshape(3, 4), "cls": np.array(["a", "b"]),
             "ids": {1, 2}, "frozen": frozenset({"x"}), "r": range(3), "c": complex(1, 2),
             "by": defaultdict(set, {"k": {1}}), "obj": np.array([None, "a", 3], dtype=object),
             "raw": bytearray(b"ab"), "s": slice(1, 5), "n": np.int64(7)}
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        back = safe_pickle.loads(pickle.dumps(value, proto))
        assert back["by"].default_factory is set and back["by"] == value["by"]
        assert back["obj"].dtype == object and back["obj"].tolist() == [None, "a", 3]
        assert type(back["box"]) is np.ndarray and np.array_equal(back["box"], value["box"])
        for key in ("ids", "frozen", "r", "c", "raw", "s", "n"):
            assert back[key] == value[key] and type(back[key]) is type(value[key])


def test_object_array_state_is_checked_before_numpy_reads_it() -> None:
    # numpy fills an object array from a list without checking its length: before the
    # check, this pickle crashed the interpreter (SIGSEGV)
    good = pickle.dumps(np.array(["a", None, 3], dtype=object), 2)
    bad = good.replace(b"K\x03\x85", b"K\x05\x85")
    assert bad != good
    code = ("import sys; from rcrn import safe_pickle\n"
            "try:\n    safe_pickle.loads(sys.stdin.buffer.read(), 'o.pkl')\n"
            "except safe_pickle.UnsafePickleError as exc:\n    print(exc)\n")
    run = subprocess.run([sys.executable, "-c", code], input=bad, capture_output=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr.decode()
    assert "object array of shape (5,) stores 3 values, expected 5" in run.stdout.decode()
    structured = pickle.dumps(np.array([(1, "x")], dtype=[("a", "i4"), ("b", "O")]), 2)
    with pytest.raises(safe_pickle.UnsafePickleError, match="object dtypes are not admitted"):
        safe_pickle.loads(structured)


@FUZZ
@given(st.binary(max_size=200))
def test_fuzz_unpickler_random_bytes(data: bytes) -> None:
    try:
        safe_pickle.loads(data, "f.pkl")
    except safe_pickle.UnsafePickleError as exc:
        assert str(exc).startswith("f.pkl: ") and "\n" not in str(exc)


_PICKLES = [pickle.dumps(v, p) for p in (0, 2, 4, 5) for v in (
    {"a": np.arange(6).reshape(2, 3), "b": [1, 2.5, "x", None]},
    np.array([None, "a"], dtype=object), {frozenset({1}), 3}, bytearray(b"abc"),
    defaultdict(list, {"k": [range(4)]}))]


@FUZZ
@given(st.sampled_from(_PICKLES), st.integers(0, 10**6), st.integers(0, 255),
       st.booleans())
def test_fuzz_unpickler_truncated_and_flipped(data: bytes, at: int, byte: int,
                                              truncate: bool) -> None:
    at %= len(data)
    mutated = data[:at] if truncate else data[:at] + bytes([byte]) + data[at + 1:]
    try:
        safe_pickle.loads(mutated, "f.pkl")
    except safe_pickle.UnsafePickleError:
        pass


# ------------------------------------------------------------------ programs
@pytest.mark.parametrize("text, message", [
    ("( ( ) )", "empty form ()"),
    ("((local))", "a form starts with a name, not a form"),
    ("(select :gate (local))", "option :gate takes a name, not a form")])
def test_a_form_where_a_name_belongs_is_a_program_error(text: str, message: str) -> None:
    with pytest.raises(P.ProgramError, match=re.escape(message)):
        P.parse(text)


def test_deeply_nested_program_is_one_line_error() -> None:
    text = "(classify " * 3000 + "(local)" + ")" * 3000
    with pytest.raises(P.ProgramError, match=r"nested deeper than 100 levels "
                                             r"\(rcrn\.programs\.MAX_DEPTH\)"):
        P.parse(text)
    # as deep as allowed: an ordinary (type) error, not the depth limit
    depth = P.MAX_DEPTH - 1
    with pytest.raises(P.ProgramError, match="a program is"):
        P.parse("(classify " * depth + "(local)" + ")" * depth)


_PROGRAM_TOKENS = ["(", ")", "(", ")", "outputs", "match", "ground", "mismatch", "local",
                   "select", "5", "0", "propagate", "up", "down", "classify", "and", "compare",
                   ":gate", "full", "lang", "g1", "; c\n"]


@FUZZ
@given(st.lists(st.sampled_from(_PROGRAM_TOKENS), max_size=60))
def test_fuzz_program_text(tokens: list[str]) -> None:
    try:
        expr = P.parse(" ".join(tokens))
    except P.ProgramError as exc:
        assert "\n" not in str(exc)
        return
    assert P.parse(P.to_text(expr)) == expr


# ------------------------------------------------------------------ fuzzing the readers
_JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-10**30, 10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
    st.lists(st.one_of(st.integers(-5, 5), st.floats(), st.text(max_size=2)), max_size=5))
_PROB = st.one_of(st.floats(0, 1), st.just(float("nan")), st.just(float("inf")),
                  st.integers(-3, 3), st.just(10**400), st.just("0.9"), st.booleans(),
                  st.none())
_BOX = st.one_of(st.none(), st.lists(st.one_of(st.floats(-1e6, 1e6), st.integers(0, 50),
                                               st.just(float("nan")), st.text(max_size=1)),
                                     max_size=5), _JSON_VALUES)


def _valid_number(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def _expected(rec: dict) -> bool:
    """Whether a prediction record is scoreable, by the rules written out plainly."""
    if "id" not in rec or "match_prob" not in rec:
        return False
    if not isinstance(rec["id"], str) or not rec["id"]:
        return False
    p = rec["match_prob"]
    if not _valid_number(p) or not 0 <= p <= 1:
        return False
    box = rec.get("box")
    if box is not None:
        if not isinstance(box, list) or len(box) != 4 or not all(map(_valid_number, box)):
            return False
        if box[2] < box[0] or box[3] < box[1]:
            return False
    prop = rec.get("proposal", -1)
    if isinstance(prop, bool) or not isinstance(prop, int) or prop < -1:
        return False
    rel = rec.get("mismatched_relation")
    if rel is not None and (isinstance(rel, bool) or not isinstance(rel, int) or rel < 0):
        return False
    scores = rec.get("relation_scores", [])
    return isinstance(scores, list) and all(map(_valid_number, scores))


@st.composite
def _prediction_records(draw: Any) -> dict:
    rec: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        rec["id"] = draw(st.one_of(st.sampled_from(["a", "b", "c"]), _JSON_VALUES))
    if draw(st.integers(0, 9)):
        rec["match_prob"] = draw(_PROB)
    for key, strategy in (("box", _BOX), ("proposal", st.one_of(st.integers(-3, 9),
                                                                  _JSON_VALUES)),
                          ("mismatched_relation", st.one_of(st.none(), st.integers(-3, 9),
                                                            _JSON_VALUES)),
                          ("relation_scores", st.one_of(st.lists(st.floats(), max_size=3),
                                                        _JSON_VALUES))):
        if draw(st.booleans()):
            rec[key] = draw(strategy)
    return rec


@FUZZ
@given(st.lists(_prediction_records(), min_size=1, max_size=4))
def test_fuzz_prediction_records(tmp_path: Path, records: list[dict]) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    ok = [_expected(r) for r in records]
    ids = [r.get("id") for r in records]
    first_bad = next((i for i, good in enumerate(ok)
                      if not good or ids[i] in ids[:i]), None)
    try:
        preds = benchmarks.read_predictions(path)
    except DataError as exc:
        assert first_bad is not None, exc
        assert f"{path} line {first_bad + 1}:" in str(exc) and "\n" not in str(exc)
        return
    assert first_bad is None
    for rec, pred in zip(records, preds):
        assert pred.id == rec["id"] and pred.match_prob == float(rec["match_prob"])
        assert pred.box == (None if rec.get("box") is None else [float(v) for v in rec["box"]])
        assert pred.mismatched_relation == rec.get("mismatched_relation")
        assert preds.lines[pred.id] == records.index(rec) + 1


def _read_or_refused(path: Path, raw: bytes, read: Any) -> Any:
    """``read(path)`` of a file of ``raw`` bytes, or None when it is refused in one line
    that starts with the file's name."""
    path.write_bytes(raw)
    try:
        return read(path)
    except DataError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        return None


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_prediction_file_bytes(tmp_path: Path, raw: bytes) -> None:
    preds = _read_or_refused(tmp_path / "predictions.jsonl", raw, benchmarks.read_predictions)
    assert preds is None or all(isinstance(p, Prediction) and 0 <= p.match_prob <= 1 for p in preds)


@FUZZ
@given(cut=st.integers(0, 10**6), labels=st.lists(st.booleans(), min_size=3, max_size=3))
def test_fuzz_truncated_vsr_predictions_score_right_or_fail_cleanly(
        data: dict, tmp_path: Path, cut: int, labels: list[bool]) -> None:
    bench = data["vsr"]["bench"]
    text = "".join(json.dumps({"id": it.id, "match_prob": 0.8 if y else 0.2}) + "\n"
                   for it, y in zip(bench.items, labels))
    path = tmp_path / "p.jsonl"
    path.write_text(text[:cut % (len(text) + 1)], encoding="utf-8")
    try:
        metrics = bench.evaluate(benchmarks.read_predictions(path))
    except DataError as exc:
        assert "\n" not in str(exc)
        return
    assert metrics["accuracy"] == sum(int(y) == it.label
                                      for it, y in zip(bench.items, labels)) / 3


_VSR_FIELDS = {"image": st.one_of(st.just("000000000001.jpg"), _JSON_VALUES),
               "caption": st.one_of(st.just("The cat is on the bed."), _JSON_VALUES),
               "label": st.one_of(st.sampled_from([0, 1]), _JSON_VALUES),
               "relation": st.one_of(st.just("on"), _JSON_VALUES),
               "reference_frame": _JSON_VALUES, "annotator_id": _JSON_VALUES,
               "vote_true_validator_id": st.one_of(st.just("[1, 2]"), _JSON_VALUES),
               "subj": _JSON_VALUES}


@FUZZ
@given(st.lists(st.fixed_dictionaries({}, optional=_VSR_FIELDS), min_size=1, max_size=3),
       st.binary(max_size=40), st.lists(st.sampled_from([0, 1]), min_size=3, max_size=3))
def test_fuzz_vsr_records(tmp_path: Path, records: list[dict], junk: bytes,
                          preds: list[int]) -> None:
    path = tmp_path / "split.jsonl"
    body = "".join(json.dumps(r) + "\n" for r in records).encode()
    path.write_bytes(body + (junk if preds[0] else b""))
    try:
        items = vsr.read_records(path)
    except DataError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        return
    guess = (preds * 3)[:len(items)]
    metrics = vsr.score(items, guess)
    assert metrics["accuracy"] == sum(g == it.label for g, it in zip(guess, items)) / len(items)


_WHATSUP_RECORD = st.one_of(
    st.sampled_from(_controlled_a([("mug", "plate")])),
    st.fixed_dictionaries({}, optional={
        "image_path": st.one_of(st.sampled_from(["data/x/cup_on_box.jpeg", "cup_under_box",
                                                 "a_b"]), _JSON_VALUES),
        "caption_options": st.one_of(st.just(["A cup on a box", "A cup under a box"]),
                                     _JSON_VALUES)}),
    _JSON_VALUES)


@FUZZ
@given(st.lists(_WHATSUP_RECORD, max_size=6), st.floats(allow_nan=True, allow_infinity=True),
       st.integers(0, 3))
def test_fuzz_whatsup_records_and_scores(tmp_path: Path, records: list[Any], value: float,
                                         where: int) -> None:
    path = tmp_path / "controlled_images_dataset.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    try:
        items = whatsup.read_items(path, "controlled_a")
    except DataError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        return
    k = len(items[0].options)
    scores = np.tile(np.linspace(1.0, 0.0, k), (len(items), 1))
    scores[where % len(items), where % k] = value
    try:
        metrics = whatsup.score(items, scores)
    except DataError as exc:
        assert not np.isfinite(value) and "\n" not in str(exc)
        return
    right = [row[0] > max(row[1:]) for row in scores]
    assert metrics["correct"] == sum(right) and metrics["count"] == len(items)
    assert len({(it.group, it.slot) for it in items}) == len(items)


@FUZZ
@given(st.binary(max_size=120))
def test_fuzz_whatsup_score_file(tmp_path: Path, raw: bytes) -> None:
    matrix = _read_or_refused(tmp_path / "scores.txt", raw, whatsup.read_scores)
    assert matrix is None or matrix.ndim == 2 and np.isfinite(matrix).all()


_CELL = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10**6),
                  st.just(1e308))


@FUZZ
@given(st.lists(st.lists(_CELL, min_size=3, max_size=3), min_size=3, max_size=3))
def test_fuzz_viphy_probabilities(data: dict, rows: list[list[float]]) -> None:
    bench = data["viphy"]["bench"]
    matrix = np.asarray(rows, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        sums = matrix.sum(axis=1)
    try:
        metrics = bench.score(matrix)
    except DataError as exc:
        assert "\n" not in str(exc)
        assert (not np.isfinite(matrix).all() or (matrix < 0).any() or (sums <= 0).any()
                or not np.isfinite(sums).all())
        return
    probs = matrix / matrix.sum(axis=1, keepdims=True)
    gold = [set(it.gold) for it in bench.items]
    expect = np.mean([bench.classes[int(np.argmax(p))] in g for p, g in zip(probs, gold)])
    assert metrics["r_acc"] == pytest.approx(expect)
    assert 0.0 <= metrics["f1"] <= 1.0 and 0.0 <= metrics["confidence"] <= 1.0 + 1e-9


@FUZZ
@given(st.lists(st.tuples(_PROB, _BOX, st.one_of(st.none(), st.integers(-2, 3))),
                min_size=3, max_size=3))
def test_fuzz_gitm_metrics_predictions(fields: list[tuple]) -> None:
    items = [{"id": "p", "match": 1, "referent_box": [0, 0, 10, 10], "length": 3,
              "num_relations": 2},
             {"id": "n", "match": 0, "mismatched_relation": 1, "length": 5, "num_relations": 2},
             {"id": "m", "match": 0, "mismatched_relation": 0, "length": 20, "num_relations": 1}]
    preds = [Prediction(id=it["id"], match_prob=prob, box=box, mismatched_relation=rel)
             for it, (prob, box, rel) in zip(items, fields)]
    valid = [_expected({"id": p.id, "match_prob": p.match_prob, "box": p.box,
                        "mismatched_relation": p.mismatched_relation}) for p in preds]
    in_range = [p.mismatched_relation is None or p.mismatched_relation < it["num_relations"]
                for p, it in zip(preds, items)]
    try:
        m = gitm_metrics(items, preds, threshold=10)
    except DataError as exc:
        assert not all(valid) or not all(in_range), exc
        assert "\n" not in str(exc)
        return
    assert all(valid) and all(in_range)
    said = [p.match_prob > 0.5 for p in preds]
    assert m["full"]["match"] == pytest.approx(
        (said[0] + (not said[1]) + (not said[2])) / 3)
    assert m["full"]["mrr_oracle"] == pytest.approx(
        ((preds[1].mismatched_relation == 1) + (preds[2].mismatched_relation == 0)) / 2)


@FUZZ
@given(st.integers(0, 10**6), st.sampled_from(["scenes", "annotations"]),
       st.one_of(st.binary(max_size=30), _JSON_VALUES.map(lambda v: json.dumps(v).encode())))
def test_fuzz_synthetic_files(data: dict, tmp_path: Path, at: int, which: str,
                              junk: bytes) -> None:
    root = tmp_path / "synthetic"
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    for name in ("scenes.jsonl", "annotations/test.jsonl"):
        shutil.copy(data["synthetic"]["root"] / name, root / name)
    path = root / ("scenes.jsonl" if which == "scenes" else "annotations/test.jsonl")
    raw = path.read_bytes()
    at %= len(raw)
    path.write_bytes(raw[:at] + junk + raw[at:])
    try:
        scenes = load_scenes(root)
        records = load_records(root, "test", scenes)
    except DataError as exc:
        assert "\n" not in str(exc)
        # a scene id changed by the junk is found where an annotation names it
        renamed = which == "scenes" and str(exc).startswith(
            str(root / "annotations" / "test.jsonl")) and "(not in scenes.jsonl)" in str(exc)
        assert str(exc).startswith(str(path)) or renamed, str(exc)
        return
    assert all(rec["scene_id"] in scenes for rec, _ in records)


@FUZZ
@given(raw=st.binary(max_size=200))
def test_fuzz_score_command_never_raises(data: dict, tmp_path: Path, raw: bytes,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "any_predictions.jsonl"
    path.write_bytes(b"{" + raw)
    d = data["gitm_mr"]
    rc = main(["score", "--benchmark", "gitm_mr", "--root", str(d["root"]), "--split",
               d["split"], "--predictions", str(path)])
    out, err = capsys.readouterr()
    if rc == 0:
        assert json.loads(out)["benchmark"] == "gitm_mr"
    else:
        assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err


def test_gitm_mr_evaluate_api_refuses_bad_predictions(data: dict) -> None:
    bench: GITMMRBenchmark = data["gitm_mr"]["bench"]
    preds = [prediction_from_record(r, "x") for r in data["gitm_mr"]["records"]]
    preds[0].match_prob = float("nan")
    with pytest.raises(DataError, match=rf"prediction {preds[0].id!r}: 'match_prob'"):
        bench.evaluate(preds)


def test_a_scene_size_too_large_for_an_integer_is_a_data_error(data: dict, tmp_path: Path) -> None:
    # found by the fuzz test above: "width": 1e+400 reads as infinity, which int() refuses
    # with an OverflowError
    root = tmp_path / "synthetic"
    root.mkdir()
    lines = (data["synthetic"]["root"] / "scenes.jsonl").read_text().splitlines()
    lines[1] = re.sub(r'"width": ?\d+', '"width": 1e+400', lines[1], count=1)
    assert "1e+400" in lines[1]
    (root / "scenes.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"scenes.jsonl: line 2: malformed scene"):
        load_scenes(root)
