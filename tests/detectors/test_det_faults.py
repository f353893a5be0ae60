"""Faults and fuzzing of the feature readers and the feature store.

Every input here is either read correctly or refused with a one-line
:class:`DetectorDataError` naming the file (and row or record); no other
exception, no signal.  Random bytes, truncation at every length class, wrong
dtypes, NaN / inf and huge declared sizes are tried on each reader and on the
store; the store truncated while open, and h5 files with damaged bytes, run in a
child process so that a signal shows as a failure instead of killing pytest.
"""

from __future__ import annotations

import base64
import io
import json
import math
import os
import pickle
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from det_fixtures import (
    b64,
    bottomup_line,
    oscar_line,
    random_image,
    vinvl_line,
    write_gitm_mr,
    write_lines,
    write_sgmn,
    write_uniter,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import detectors
from detectors import DetectorDataError
from rcrn.cli import main
from rcrn.structures import Proposals

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FEW = settings(FUZZ, max_examples=20)

# ------------------------------------------------------------------------------ helpers
def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text and "\n" not in text and "\r" not in text, repr(text)
    assert "Traceback" not in text
    return text


def _sane(props: Proposals, dims: tuple[int, ...] | None = None) -> None:
    """What every proposal a reader returns satisfies, whatever its input was."""
    assert isinstance(props, Proposals)
    n = len(props)
    assert props.boxes.dtype == np.float32 and props.boxes.shape == (n, 4)
    assert np.isfinite(props.boxes).all()
    assert (props.boxes[:, 2] >= props.boxes[:, 0]).all()
    assert props.image_size[0] > 0 and props.image_size[1] > 0
    if props.scores is not None:
        assert props.scores.shape == (n,) and np.isfinite(props.scores).all()
    if props.labels is not None:
        assert len(props.labels) == n
    if props.features is not None:
        assert props.features.dtype in (np.float16, np.float32, np.float64)
        assert props.features.ndim == 2 and len(props.features) == n
        assert np.isfinite(props.features).all()
        if dims is not None and n:
            assert props.features.shape[1] in dims


def outcome(make: Callable[[], Any], dims: tuple[int, ...] | None = None
            ) -> tuple[str, Any]:
    """Open a source and read every image by id and by iteration.

    Returns ``("ok", {id: Proposals})`` or ``("error", message)`` for a
    DetectorDataError; any other exception propagates (and fails the test).
    """
    try:
        src = make()
        got = {}
        for image_id in src.image_ids():
            props = src[image_id]
            _sane(props, dims)
            got[image_id] = props
        assert [p.image_id for p in src] == list(got)
    except DetectorDataError as exc:
        return "error", _one_line(exc)
    return "ok", got


def _same_image(props: Proposals, img: dict, features: bool = True,
                drop: int = 0) -> None:
    assert props.image_id == img["id"] and tuple(props.image_size) == tuple(img["size"])
    np.testing.assert_allclose(props.boxes, img["boxes"], atol=1e-3)
    if features and len(img["boxes"]):
        np.testing.assert_array_equal(props.features, img["features"][:, :img["features"].shape[1]
                                                                        - drop])


@pytest.fixture(scope="module")
def imgs() -> list[dict]:
    rng = np.random.default_rng(21)
    return [random_image(rng, f"im{k}", n, dim=2048, size=(320 + k, 240 + k))
            for k, n in enumerate([2, 0, 3, 1, 2])]


def _vinvl_row(image_id: str, boxes: np.ndarray, feats: list[bytes] | None,
               size: Any = (640, 480), conf: Any = 0.5) -> str:
    objects = []
    for j, box in enumerate(boxes):
        obj: dict[str, Any] = {"rect": [float(v) for v in box], "class": "dog", "conf": conf}
        if feats is not None:
            obj["feature"] = base64.b64encode(feats[j]).decode()
        objects.append(obj)
    return f"{image_id}\t" + json.dumps({"objects": objects, "image_w": size[0],
                                         "image_h": size[1]})


def _tmp() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="det_faults_")


# ================================================================ item: silent wrong features
@pytest.mark.parametrize("enc", ["<f2", "<f8"])
def test_vinvl_float16_or_float64_bytes_are_refused_not_read_as_other_widths(
        tmp_path: Path, imgs: list[dict], enc: str, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [_vinvl_row(img["id"], img["boxes"],
                       [np.asarray(f, enc).tobytes() for f in img["features"]])
            for img in imgs]
    path = tmp_path / "predictions.tsv"
    write_lines(path, rows, False)
    rc = main(["features", "convert", "--from", "vinvl", str(path), "--out",
               str(tmp_path / "store"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and not (tmp_path / "store").exists()
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    name = "float16" if enc == "<f2" else "float64"
    assert f"predictions.tsv row 1 (image 'im0') object 0: field 'feature' holds " \
           f"{2048 * int(enc[-1])} bytes for 1 box, expected 8192 or 8216" in err
    assert f"would be 2048-d {name}" in err
    if enc == "<f2":  # asked for, float16 bytes read exactly
        src = detectors.load("vinvl", path, dtype="float16")
        for img in imgs:
            props = src[img["id"]]
            assert props.feature_dim == 2048 and props.features.dtype == np.float16
            np.testing.assert_array_equal(props.features, img["features"].astype(np.float16))


def test_bottomup_float16_bytes_are_refused_unless_asked(tmp_path: Path,
                                                         imgs: list[dict]) -> None:
    rows = []
    for img in imgs:
        cols = bottomup_line(img, old=True).split("\t")
        cols[5] = b64(img["features"], "<f2")
        rows.append("\t".join(cols))
    path = tmp_path / "obj.tsv"
    write_lines(path, rows, False)
    with pytest.raises(DetectorDataError, match=r"obj.tsv row 1 \(image 'im0'\): field "
                                                r"'features' holds 8192 bytes for 2 boxes, "
                                                r"expected 16384 \(2048-d float32\); the bytes "
                                                r"would be 2048-d float16"):
        detectors.load("bottomup", path)["im0"]
    src = detectors.load("bottomup", path, dtype="float16")
    assert src["im2"].features.dtype == np.float16 and src["im1"].features.shape == (0, 2048)
    np.testing.assert_array_equal(src["im2"].features, imgs[2]["features"].astype(np.float16))


def test_oscar_float16_bytes_need_the_option(tmp_path: Path, imgs: list[dict]) -> None:
    path = tmp_path / "features.tsv"
    write_lines(path, [oscar_line(img, "columns", "<f2") for img in imgs], False)
    sizes = {img["id"]: list(img["size"]) for img in imgs}
    with pytest.raises(DetectorDataError, match=r"row 1 .*would be 2054-d float16: pass "
                                                r"dtype=float16"):
        detectors.load("oscar", path, sizes=sizes)["im0"]
    assert detectors.load("oscar", path, sizes=sizes, dtype="float16")["im0"].feature_dim == 2048


@pytest.mark.parametrize("missing", ["tail", "middle"])
def test_lineidx_that_leaves_rows_out_is_an_error(tmp_path: Path, imgs: list[dict],
                                                  missing: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "predictions.tsv"
    write_lines(path, [vinvl_line(img) for img in imgs], True)
    idx = path.with_suffix(".lineidx")
    offsets = idx.read_text().split()
    keep = offsets[:2] if missing == "tail" else offsets[:1] + offsets[2:]
    idx.write_text("".join(f"{o}\n" for o in keep))
    rc = main(["features", "convert", "--from", "vinvl", str(path), "--out",
               str(tmp_path / "store"), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and not (tmp_path / "store").exists()
    assert "predictions.lineidx" in err
    if missing == "tail":
        assert "lists 2 rows but" in err and "goes on after the last one" in err
    else:
        assert "between rows 1 and 2 of the index; the index does not cover the file" in err
    idx.unlink()  # without the index the file is scanned: all 5 images
    assert len(detectors.load("vinvl", path)) == 5


@pytest.mark.parametrize("case", ["vinvl", "oscar", "bottomup", "blank-lines", "uniter",
                                  "coco", "gqa", "sgmn", "gitm-mr", "list"])
def test_an_empty_source_is_an_error(tmp_path: Path, case: str) -> None:
    if case in ("vinvl", "oscar", "bottomup", "blank-lines"):
        path = tmp_path / "empty.tsv"
        path.write_bytes(b"\n \n\r\n" if case == "blank-lines" else b"")
        fmt = "vinvl" if case == "blank-lines" else case
        make = lambda: detectors.load(fmt, path)  # noqa: E731
        match = r"empty.tsv: holds no rows"
    elif case == "uniter":
        make = lambda: detectors.load("uniter", tmp_path)  # noqa: E731
        match = "holds no .npz files"
    elif case == "coco":
        path = tmp_path / "instances.json"
        path.write_text(json.dumps({"images": [], "annotations": [], "categories": []}))
        make = lambda: detectors.load("coco", path)  # noqa: E731
        match = "'images' is empty"
    elif case == "gqa":
        path = tmp_path / "sg.json"
        path.write_text("{}")
        make = lambda: detectors.load("gqa", path)  # noqa: E731
        match = "holds no scene graphs"
    elif case == "sgmn":
        (tmp_path / "gt_objects_info.json").write_text("{}")
        make = lambda: detectors.load("sgmn", tmp_path)  # noqa: E731
        match = "holds no images"
    elif case == "gitm-mr":
        (tmp_path / "rois_info.pkl").write_bytes(pickle.dumps({}))
        make = lambda: detectors.load("gitm-mr", tmp_path)  # noqa: E731
        match = "holds no images"
    else:
        make = lambda: detectors.convert([], tmp_path / "store", progress=False)  # noqa: E731
        match = "holds no images; nothing to convert"
    with pytest.raises(DetectorDataError, match=match):
        make()
    assert not (tmp_path / "store").exists()


def test_an_empty_tsv_is_refused_by_the_cli(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "predictions.tsv"
    path.write_bytes(b"")
    assert main(["features", "convert", "--from", "vinvl", str(path), "--out",
                 str(tmp_path / "store"), "--no-progress"]) == 2
    assert "predictions.tsv: holds no rows" in capsys.readouterr().err
    assert not (tmp_path / "store").exists()
    assert main(["features", "convert", "--from", "vinvl", str(path), "--out",
                 str(tmp_path / "store"), "--limit", "0"]) == 2
    assert "--limit must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("layout", ["columns", "json"])
def test_oscar_malformed_first_row_leaves_the_other_rows_readable(
        tmp_path: Path, imgs: list[dict], layout: str) -> None:
    lines = [oscar_line(img, layout) for img in imgs]
    bad = np.zeros(10, np.float32)
    lines[0] = (f"im0\t3\t{b64(bad)}" if layout == "columns" else
                f"im0\t{json.dumps({'num_boxes': 3, 'features': b64(bad)})}")
    path = tmp_path / "features.tsv"
    write_lines(path, lines, False)
    sizes = {img["id"]: list(img["size"]) for img in imgs}
    src = detectors.load("oscar", path, sizes=sizes)
    for img in imgs[1:]:
        props = src[img["id"]]
        _same_image(props, img, drop=0)
        assert props.features.shape == (len(img["boxes"]), 2048)
    with pytest.raises(DetectorDataError, match=r"features.tsv row 1 \(image 'im0'\): field "
                                                r"'features' holds 40 bytes for 3 boxes"):
        src["im0"]
    # converting stops at the bad row, naming it
    with pytest.raises(DetectorDataError, match=r"features.tsv row 1 \(image 'im0'\)"):
        detectors.convert(src, tmp_path / "store", progress=False)


# ================================================================ item: crashes and tracebacks
_DIR_CASES = ["vinvl", "oscar", "bottomup", "coco", "gqa", "uniter", "sgmn", "gitm-mr",
              "store", "sizes", "lineidx", "labels", "vocab"]


@pytest.mark.parametrize("case", _DIR_CASES)
def test_a_folder_given_as_a_file_is_a_one_line_error(tmp_path: Path, imgs: list[dict],
                                                      case: str,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    folder = tmp_path / "a_folder.tsv"
    folder.mkdir()
    good = tmp_path / "predictions.tsv"
    write_lines(good, [vinvl_line(img) for img in imgs], False)
    fmt, target, opts = case, folder, []
    if case in ("sgmn", "gitm-mr"):  # the index file inside the folder is itself a folder
        (folder / ("gt_objects_info.json" if case == "sgmn" else "rois_info.pkl")).mkdir()
    elif case == "uniter":
        (folder / "x.npz").mkdir()  # a folder named like a file is skipped: nothing left
    elif case == "sizes":
        fmt, target, opts = "oscar", good, ["--opt", f"sizes={folder / 'hw.tsv'}"]
        (folder / "hw.tsv").mkdir()
        good.write_text("".join(oscar_line(img, "columns") + "\n" for img in imgs))
    elif case == "lineidx":
        fmt, target, opts = "vinvl", good, ["--opt", f"lineidx={folder}"]
    elif case == "labels":
        fmt, target, opts = "oscar", good, ["--opt", f"labels={folder}"]
    elif case == "vocab":
        fmt, target, opts = "bottomup", good, ["--opt", f"vocab={folder}"]
    if case == "store":
        argv = ["features", "info", str(good)]
    else:
        argv = ["features", "convert", "--from", fmt, str(target), "--out",
                str(tmp_path / "out"), "--no-progress", *opts]
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "Errno" not in err
    assert "a_folder" in err or (case == "store" and "predictions.tsv" in err)


_TRUNCATE_SCRIPT = r"""
import json, os, sys
import numpy as np
import detectors
from detectors.store import FeatureStore

store_dir, name = sys.argv[1], sys.argv[2]
path = os.path.join(store_dir, name + ".bin")
original = open(path, "rb").read()
results = []
for frac in (0.0, 0.5, 0.999):
    with open(path, "wb") as f:
        f.write(original)
    store = FeatureStore(store_dir)
    before = {i: store[i] for i in store.image_ids()}  # opened and read
    cut = int(len(original) * frac)
    os.truncate(path, cut)
    row = {"cut": cut, "ok": [], "error": []}
    for i, image_id in enumerate(store.image_ids()):
        try:
            props = store[image_id]
        except detectors.DetectorDataError as exc:
            assert "\n" not in str(exc) and path in str(exc), str(exc)
            row["error"].append(image_id)
            continue
        same = np.array_equal(props.boxes, before[image_id].boxes) and (
            props.features is None or np.array_equal(props.features, before[image_id].features))
        assert same, image_id
        row["ok"].append(image_id)
    try:
        FeatureStore(store_dir)
        row["reopen"] = "opened"
    except detectors.DetectorDataError as exc:
        row["reopen"] = str(exc)
    results.append(row)
with open(path, "wb") as f:
    f.write(original)
print(json.dumps(results))
"""


@pytest.mark.parametrize("name", ["boxes", "labels", "scores", "features"])
def test_store_file_truncated_while_open_is_an_error_not_sigbus(
        tmp_path: Path, imgs: list[dict], name: str) -> None:
    src = tmp_path / "predictions.tsv"
    write_lines(src, [vinvl_line(img) for img in imgs], False)
    detectors.convert(detectors.load("vinvl", src), tmp_path / "store", progress=False)
    store = detectors.open_store(tmp_path / "store")
    ends = {image_id: int(store._offsets[i] + store._counts[i])
            for i, image_id in enumerate(store.image_ids())}
    per_box = {"boxes": 16, "labels": 4, "scores": 4, "features": 2048 * 4}[name]
    proc = subprocess.run([sys.executable, "-c", _TRUNCATE_SCRIPT, str(tmp_path / "store"),
                           name], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (f"child ended with {proc.returncode} "
                                  f"(a negative code is a signal): {proc.stderr[-2000:]}")
    for row in json.loads(proc.stdout):
        boxes_left = row["cut"] // per_box
        # exactly the images whose boxes lie past the cut are errors; the others read as before
        want_error = [i for i, end in ends.items() if end > boxes_left and
                      end > int(store._offsets[store._rows[i]])]
        assert row["error"] == want_error, row
        assert "expected" in row["reopen"] and f"{name}.bin" in row["reopen"]


# ================================================================ fuzz: TSV readers
def _tsv_files(kind: str, imgs: list[dict]) -> tuple[bytes, dict[str, Any]]:
    if kind == "vinvl":
        lines = [vinvl_line(img) for img in imgs]
        return "".join(x + "\n" for x in lines).encode(), {}
    if kind == "oscar":
        lines = [oscar_line(img, "json" if k % 2 else "columns") for k, img in enumerate(imgs)]
        return "".join(x + "\n" for x in lines).encode(), {
            "sizes": {img["id"]: list(img["size"]) for img in imgs}}
    lines = [bottomup_line(img, old=bool(k % 2)) for k, img in enumerate(imgs)]
    return "".join(x + "\n" for x in lines).encode(), {}


def _check_rows(kind: str, data: bytes, imgs: list[dict], result: tuple[str, Any]) -> None:
    """A successful read of a (damaged) TSV holds only images read exactly as written."""
    status, got = result
    if status == "error":
        return
    by_id = {img["id"]: img for img in imgs}
    for image_id, props in got.items():
        assert image_id in by_id
        img = by_id[image_id]
        assert props.image_size == tuple(img["size"])
        assert len(props) == len(img["boxes"])


def _line_offsets(data: bytes) -> list[int]:
    offsets, pos = [], 0
    for line in data.splitlines(keepends=True):
        if line.strip():
            offsets.append(pos)
        pos += len(line)
    return offsets


def _length_classes(data: bytes) -> list[int]:
    """Cut points of every class: empty, one byte, inside the first id, at and after its
    tab, inside a row, one byte before / at / after each line end, one short of the end."""
    cuts = {0, 1, len(data) - 1, len(data)}
    tab = data.index(b"\t")
    cuts |= {tab - 1, tab, tab + 1}
    for off in _line_offsets(data)[1:]:
        cuts |= {off - 2, off - 1, off, off + 1, (off + tab) // 2}
    cuts.add(len(data) // 2)
    return sorted(c for c in cuts if 0 <= c <= len(data))


@pytest.mark.parametrize("kind", ["vinvl", "oscar", "bottomup"])
@pytest.mark.parametrize("with_lineidx", [False, True])
def test_tsv_truncated_at_every_length_class(imgs: list[dict], kind: str,
                                             with_lineidx: bool) -> None:
    data, opts = _tsv_files(kind, imgs)
    offsets = _line_offsets(data)
    with _tmp() as tmp:
        path = Path(tmp) / "f.tsv"
        for cut in _length_classes(data):
            path.write_bytes(data[:cut])
            idx = path.with_suffix(".lineidx")
            if with_lineidx:
                idx.write_text("".join(f"{o}\n" for o in offsets))
            result = outcome(lambda: detectors.load(kind, path, **opts))
            _check_rows(kind, data, imgs, result)
            whole = [o for o in offsets[1:] if o <= cut] + ([cut] if cut == len(data) else [])
            complete_rows = len(whole)
            if result[0] == "ok":
                # a cut file reads fine only when it ends on a row end (or just before the
                # last newline), never with a row silently shortened
                assert len(result[1]) in (complete_rows, complete_rows + 1), (cut, result)
                for image_id, props in result[1].items():
                    img = next(i for i in imgs if i["id"] == image_id)
                    if len(img["boxes"]):
                        want = img["features"]
                        np.testing.assert_array_equal(
                            props.features.astype(np.float32), want)
            if with_lineidx and cut < len(data) - 1:
                assert result[0] == "error", cut  # the index no longer fits the file


_TOKENS = [b"\t", b"\n", b"\r\n", b"{", b"}", b"[", b"]", b'"', b":", b",", b"0", b"3", b"-1",
           b"1e999", b"NaN", b"Infinity", b"true", b"null", b"AAAA", b"AAA=", b"====",
           b'"objects"', b'"rect"', b'"feature"', b'"num_boxes"', b'"features"', b'"conf"',
           b'"image_w"', b"640", b"\xff\xfe", b"\x00", b"im0", b"99999999999999999999999"]


@st.composite
def tsv_junk(draw: Any) -> bytes:
    parts = draw(st.lists(st.one_of(st.sampled_from(_TOKENS), st.binary(max_size=12)),
                          max_size=60))
    return b"".join(parts)


@pytest.mark.parametrize("kind", ["vinvl", "oscar", "bottomup"])
@FUZZ
@given(data=tsv_junk())
def test_fuzz_tsv_random_bytes(kind: str, data: bytes) -> None:
    with _tmp() as tmp:
        path = Path(tmp) / "f.tsv"
        path.write_bytes(data)
        outcome(lambda: detectors.load(kind, path, sizes={"im0": [10, 10]}, dim=8)
                if kind != "bottomup" else detectors.load(kind, path, dim=8), dims=(8, 2))


@pytest.mark.parametrize("kind", ["vinvl", "oscar", "bottomup"])
@FUZZ
@given(pos=st.floats(0, 1, exclude_max=True), value=st.sampled_from(_TOKENS + [b"", b"x"]),
       replace=st.integers(0, 4))
def test_fuzz_tsv_damaged_rows(imgs: list[dict], kind: str, pos: float, value: bytes,
                               replace: int) -> None:
    data, opts = _tsv_files(kind, imgs[:3])
    at = int(pos * len(data))
    damaged = data[:at] + value + data[at + replace:]
    with _tmp() as tmp:
        path = Path(tmp) / "f.tsv"
        path.write_bytes(damaged)
        outcome(lambda: detectors.load(kind, path, **opts), dims=(2048,))


_ENCODINGS = ["<f2", "<f4", "<f8"]


@pytest.mark.parametrize("kind", ["vinvl", "oscar", "bottomup"])
@FEW
@given(enc=st.sampled_from(_ENCODINGS), dim=st.sampled_from([2048, 2054, 1024, 4096, 1027]),
       asked=st.sampled_from([None, "float16", "float32"]), n=st.integers(1, 2))
def test_fuzz_feature_dtypes_and_widths(kind: str, enc: str, dim: int, asked: str | None,
                                        n: int) -> None:
    """Bytes of any dtype and width: read exactly when they are what the reader was told
    (float32 by default), an error otherwise; never features of another width."""
    rng = np.random.default_rng(dim + n)
    feats = rng.normal(0, 1, (n, dim))
    if dim >= 2054:
        feats[:, -6:] = [0.1, 0.1, 0.5, 0.5, 0.4, 0.4]
    boxes = np.tile([[64, 48, 320, 240]], (n, 1)).astype(np.float32)
    raw = np.asarray(feats, enc)
    if kind == "vinvl":
        line = _vinvl_row("im0", boxes, [r.tobytes() for r in raw])
        accepted = (2048, 2054)
        opts: dict[str, Any] = {}
    elif kind == "oscar":
        line = f"im0\t{n}\t{base64.b64encode(raw.tobytes()).decode()}"
        accepted = (2054,)  # 2048-d Oscar features carry no boxes and need labels
        opts = {"sizes": {"im0": [640, 480]}}
    else:
        img = {"id": "im0", "size": (640, 480), "boxes": boxes, "features": feats}
        cols = bottomup_line(img, old=True).split("\t")
        cols[5] = base64.b64encode(raw.tobytes()).decode()
        line = "\t".join(cols)
        accepted = (2048,)
        opts = {}
    with _tmp() as tmp:
        path = Path(tmp) / "f.tsv"
        path.write_text(line + "\n")
        status, got = outcome(lambda: detectors.load(kind, path, dtype=asked, **opts))
    want_dtype = np.dtype("<f2" if asked == "float16" else "<f4")
    widths = (2048, 2054) if kind != "bottomup" else (2048,)
    if np.dtype(enc) == want_dtype and dim in accepted:
        assert status == "ok", got
        props = got["im0"]
        expect = raw if kind != "oscar" else raw[:, :-6]
        assert props.features.dtype == want_dtype.newbyteorder("=")
        np.testing.assert_array_equal(props.features, expect)
    elif dim * np.dtype(enc).itemsize not in [w * want_dtype.itemsize for w in widths]:
        assert status == "error", (enc, dim, asked)
    # else: the bytes have the length of an accepted width (1024-d float64 is as long as
    # 2048-d float32): no reader can tell them apart by length alone



_BAD_NUMBERS = [float("nan"), float("inf"), -float("inf"), 1e300, 10**30, -1, 0, 3.5, "7",
                True, None, [1], 2**63, -(2**63) - 1]


@FUZZ
@given(field=st.sampled_from(["rect", "conf", "image_w", "image_h", "feature_value"]),
       value=st.sampled_from(_BAD_NUMBERS))
def test_fuzz_vinvl_nonfinite_and_huge_values(imgs: list[dict], field: str, value: Any) -> None:
    img = imgs[0]
    objects = [{"rect": [float(v) for v in b], "class": "a", "conf": 0.5,
                "feature": b64(f)} for b, f in zip(img["boxes"], img["features"])]
    payload: dict[str, Any] = {"objects": objects, "image_w": 640, "image_h": 480}
    if field == "rect":
        objects[0]["rect"][2] = value
    elif field == "conf":
        objects[0]["conf"] = value
    elif field in ("image_w", "image_h"):
        payload[field] = value
    else:
        if not isinstance(value, float):
            return
        feats = img["features"].copy()
        with np.errstate(over="ignore"):
            feats[0, 5] = value
        objects[0]["feature"] = b64(feats[0])
    with _tmp() as tmp:
        path = Path(tmp) / "f.tsv"
        path.write_text(f"im0\t{json.dumps(payload)}\n")
        status, got = outcome(lambda: detectors.load("vinvl", path))
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if field == "rect":  # x2 of the first box: a finite float32 >= x1
        ok = number and math.isfinite(value) and float(img["boxes"][0, 0]) <= value < 3.4e38
    elif field == "conf":
        ok = number and math.isfinite(value) and abs(value) < 3.4e38
    elif field == "feature_value":
        ok = math.isfinite(value) and abs(value) < 3.4e38
    else:  # an image side: a whole number of pixels, 1 .. 2**31 - 1 (decimal text too)
        ok = _as_int(value) is not None and 0 < _as_int(value) < 2**31
    assert status == ("ok" if ok else "error"), (field, value, got)


def _as_int(value: Any) -> int | None:
    """``value`` when it states a whole number exactly, else None (the test's oracle)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        body = text[1:] if text[:1] in "+-" else text
        return int(text) if body.isascii() and body.isdigit() and len(body) <= 30 else None
    return None


@pytest.mark.parametrize("kind", ["oscar", "bottomup"])
@FUZZ
@given(count=st.sampled_from(["-1", "0", "1", "3.0", "10000000000000000000000", "1e3", "",
                              " 2", "٣", "true"]))
def test_fuzz_declared_box_counts(imgs: list[dict], kind: str, count: str) -> None:
    img = imgs[0]  # 2 boxes
    if kind == "oscar":
        cols = oscar_line(img, "columns").split("\t")
        cols[1] = count
        opts: dict[str, Any] = {"sizes": {"im0": [320, 240]}}
    else:
        cols = bottomup_line(img, old=True).split("\t")
        cols[3] = count
        opts = {}
    with _tmp() as tmp:
        path = Path(tmp) / "f.tsv"
        path.write_text("\t".join(cols) + "\n")
        status, got = outcome(lambda: detectors.load(kind, path, **opts))
    if count in (" 2",):
        assert status == "ok"
    else:
        assert status == "error", (count, got)


@FUZZ
@given(lines=st.lists(st.one_of(st.integers(-5, 3000), st.sampled_from(["x", "", " ", "1.5",
                                                                       "\xff", "99" * 15])),
                      max_size=8))
def test_fuzz_lineidx(imgs: list[dict], lines: list[Any]) -> None:
    """Any .lineidx opens only when it lists exactly the rows of the file."""
    data = "".join(vinvl_line(img) + "\n" for img in imgs[:3]).encode()
    true = _line_offsets(data)
    with _tmp() as tmp:
        path = Path(tmp) / "f.tsv"
        path.write_bytes(data)
        path.with_suffix(".lineidx").write_text("".join(f"{x}\n" for x in lines),
                                                encoding="utf-8", errors="surrogateescape")
        status, got = outcome(lambda: detectors.load("vinvl", path))
    listed = [int(x) for x in lines if isinstance(x, int) or str(x).strip().isdigit()]
    if status == "ok":
        assert listed == true and list(got) == ["im0", "im1", "im2"]
    elif all(isinstance(x, int) for x in lines):
        assert listed != true


# ================================================================ fuzz: npz (UNITER)
def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _uniter_arrays(img: dict) -> dict[str, np.ndarray]:
    with _tmp() as tmp:
        write_uniter(Path(tmp) / "a.npz", img)
        with np.load(Path(tmp) / "a.npz") as data:
            return {k: data[k] for k in data.files}


@FUZZ
@given(data=st.binary(max_size=300), keep_zip=st.booleans())
def test_fuzz_npz_random_bytes(imgs: list[dict], data: bytes, keep_zip: bool) -> None:
    with _tmp() as tmp:
        path = Path(tmp) / "im0.npz"
        if keep_zip:  # a valid archive whose members hold random bytes
            with zipfile.ZipFile(path, "w") as zf:
                for name in ("features", "norm_bb", "conf"):
                    zf.writestr(f"{name}.npy", b"\x93NUMPY\x01\x00" + data)
        else:
            path.write_bytes(data)
        outcome(lambda: detectors.load("uniter", path, sizes={"im0": [10, 10]}))


@FUZZ
@given(frac=st.floats(0, 1))
def test_fuzz_npz_truncated(imgs: list[dict], frac: float) -> None:
    data = _npz_bytes(_uniter_arrays(imgs[2]))
    cut = int(frac * len(data))
    with _tmp() as tmp:
        path = Path(tmp) / "im2.npz"
        path.write_bytes(data[:cut])
        status, got = outcome(lambda: detectors.load("uniter", path,
                                                     sizes={"im2": list(imgs[2]["size"])}))
    assert status == ("ok" if cut == len(data) else "error"), cut


_NP_DTYPES = ["<f2", "<f4", ">f4", "<f8", "<i4", "|u1", "|b1", "<c8", "<U3", "<M8[s]"]


@FUZZ
@given(key=st.sampled_from(["features", "norm_bb", "conf", "soft_labels", "image_w"]),
       dtype=st.sampled_from(_NP_DTYPES),
       shape=st.sampled_from([None, (), (0,), (3,), (3, 0), (3, 2), (3, 6), (2, 3, 1)]),
       poison=st.sampled_from([None, float("nan"), float("inf")]))
def test_fuzz_npz_wrong_dtypes_shapes_and_nonfinite(imgs: list[dict], key: str, dtype: str,
                                                   shape: Any, poison: float | None) -> None:
    arrays = _uniter_arrays(imgs[2])  # 3 boxes
    arrays["image_w"], arrays["image_h"] = np.array(640), np.array(480)
    base = arrays[key]
    if shape is None:
        shape = base.shape
    try:
        new = np.zeros(shape, dtype=dtype) if np.dtype(dtype).kind in "UM" else \
            np.resize(base, shape).astype(dtype)
    except (TypeError, ValueError):
        return
    if poison is not None and new.dtype.kind in "fc" and new.size:
        new.reshape(-1)[0] = poison
    arrays[key] = new
    with _tmp() as tmp:
        path = Path(tmp) / "im2.npz"
        path.write_bytes(_npz_bytes(arrays))
        outcome(lambda: detectors.load("uniter", path, vocab=["dog", "cat", "cup", "table",
                                                              "person"]))


def _zip_with_header(header: dict[str, Any], payload: bytes) -> bytes:
    text = repr(header).encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    npy = b"\x93NUMPY\x01\x00" + (len(text) + pad + 1).to_bytes(2, "little") + text + \
        b" " * pad + b"\n" + payload
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("features.npy", npy)
        zf.writestr("norm_bb.npy", npy)
        zf.writestr("conf.npy", npy)
    return buf.getvalue()


@FEW
@given(shape=st.sampled_from([(10**12, 2048), (2**40,), (10**6, 10**6), (3, 2**61), (0, 5)]),
       descr=st.sampled_from(["<f4", "<f2", "|O", "<V8"]))
def test_fuzz_npz_huge_declared_shapes_allocate_nothing(shape: tuple[int, ...],
                                                        descr: str) -> None:
    data = _zip_with_header({"descr": descr, "fortran_order": False, "shape": shape},
                            b"\x00" * 64)
    with _tmp() as tmp:
        path = Path(tmp) / "im0.npz"
        path.write_bytes(data)
        status, msg = outcome(lambda: detectors.load("uniter", path, sizes={"im0": [9, 9]}))
    assert status == "error"


# ================================================================ fuzz: h5 readers and records
_JSONISH = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                     st.sampled_from(["../x", "0/../0", "0", "1"]),
                     st.lists(st.integers(-3, 3), max_size=3))


@FUZZ
@given(field=st.sampled_from(["file", "idx", "objectsNum", "width", "height"]),
       value=_JSONISH)
def test_fuzz_sgmn_records(tmp_path_factory: pytest.TempPathFactory, imgs: list[dict],
                           field: str, value: Any) -> None:
    root = _sgmn_root(tmp_path_factory, imgs)
    info = json.loads((root / "gt_objects_info.json").read_text())
    rec = info["im2"]
    rec[field] = value
    with _tmp() as tmp:
        (Path(tmp) / "gt_objects_info.json").write_text(json.dumps(info))
        os.symlink(root / "gt_objects_0.h5", Path(tmp) / "gt_objects_0.h5")
        status, got = outcome(lambda: detectors.load("sgmn", Path(tmp)))
    as_int = _as_int(value)
    if field == "file":
        ok = type(value) in (int, str) and str(value) == "0"
    elif field == "idx":  # any of the 5 rows of the h5 file
        ok = as_int is not None and 0 <= as_int < len(imgs)
    elif field == "objectsNum":  # up to max_obj rows
        ok = as_int is not None and 0 <= as_int <= 4
    else:
        ok = as_int is not None and 0 < as_int < 2**31
    assert status == ("ok" if ok else "error"), (field, value, got)
    if status == "ok" and field == "file":
        _same_image(got["im2"], imgs[2])


_SGMN: dict[str, Path] = {}


def _sgmn_root(factory: pytest.TempPathFactory, imgs: list[dict]) -> Path:
    if "root" not in _SGMN or not _SGMN["root"].exists():
        root = factory.mktemp("sgmn")
        write_sgmn(root, imgs, max_obj=4)
        _SGMN["root"] = root
    return _SGMN["root"]


@FUZZ
@given(field=st.sampled_from(["num_objs", "idx", "size", "box", "cls", "file"]),
       value=_JSONISH)
def test_fuzz_gitm_mr_records(tmp_path_factory: pytest.TempPathFactory, imgs: list[dict],
                              field: str, value: Any) -> None:
    root = _gitm_root(tmp_path_factory, imgs)
    info = pickle.loads((root / "rois_info.pkl").read_bytes())
    info[1002][field] = value
    with _tmp() as tmp:
        (Path(tmp) / "rois_info.pkl").write_bytes(pickle.dumps(info))
        for h5 in root.glob("*.h5"):
            os.symlink(h5, Path(tmp) / h5.name)
        status, got = outcome(lambda: detectors.load("gitm-mr", Path(tmp)))
    as_int = _as_int(value)
    if field == "file":  # files 0, 1 and 2 exist (two images each)
        assert (status == "ok") == (type(value) in (int, str) and str(value) in "012"
                                    and str(value) != ""), (value, got)
    elif field == "idx":  # file 1 holds 2 rows
        assert (status == "ok") == (as_int is not None and 0 <= as_int < 2), (value, got)
    elif field == "num_objs":  # 3 boxes and classes are stored
        assert (status == "ok") == (as_int is not None and 0 <= as_int <= 3), (value, got)
    if status == "ok" and field in ("file", "idx", "num_objs") and value in (1, 0, 3):
        props = got["1002"]
        assert len(props) == (value if field == "num_objs" else 3)


_GITM: dict[str, Path] = {}


def _gitm_root(factory: pytest.TempPathFactory, imgs: list[dict]) -> Path:
    if "root" not in _GITM or not _GITM["root"].exists():
        root = factory.mktemp("gitm")
        write_gitm_mr(root, [dict(img, id=str(1000 + k)) for k, img in enumerate(imgs)],
                      max_obj=4)
        _GITM["root"] = root
    return _GITM["root"]


@FUZZ
@given(data=st.binary(max_size=200))
def test_fuzz_gitm_mr_pickle_bytes(data: bytes) -> None:
    with _tmp() as tmp:
        (Path(tmp) / "rois_info.pkl").write_bytes(data)
        outcome(lambda: detectors.load("gitm-mr", Path(tmp)))


_H5_SCRIPT = r"""
import json, sys
from pathlib import Path
import detectors
out = []
for folder in sys.argv[2:]:
    try:
        src = detectors.load(sys.argv[1], Path(folder))
        for i in src.image_ids():
            src[i]
        out.append("ok")
    except detectors.DetectorDataError as exc:
        assert "\n" not in str(exc)
        out.append("error")
print(json.dumps(out))
"""


@pytest.mark.parametrize("fmt", ["sgmn", "gitm-mr"])
def test_h5_damaged_bytes_in_a_child_process(tmp_path: Path, imgs: list[dict],
                                             fmt: str) -> None:
    """Truncated, zeroed and bit-flipped h5 files (a library crash would be a signal)."""
    src = tmp_path / "src"
    if fmt == "sgmn":
        write_sgmn(src, imgs, max_obj=4)
        h5 = src / "gt_objects_0.h5"
    else:
        write_gitm_mr(src, [dict(img, id=str(1000 + k)) for k, img in enumerate(imgs)],
                      per_file=8, max_obj=4)
        h5 = src / "gt_objects_0.h5"
    data = h5.read_bytes()
    rng = np.random.default_rng(7)
    variants = [data[:c] for c in (0, 8, 512, len(data) // 2, len(data) - 1)]
    for _ in range(12):
        flipped = bytearray(data)
        for pos in rng.integers(0, len(data), size=int(rng.integers(1, 16))):
            flipped[pos] ^= 1 << int(rng.integers(0, 8))
        variants.append(bytes(flipped))
    variants.append(bytes(rng.integers(0, 256, 2048, dtype=np.uint8)))
    for start in (0, 96, len(data) // 3):  # a zeroed block: superblock, headers, data
        zeroed = bytearray(data)
        zeroed[start:start + 512] = bytes(min(512, len(data) - start))
        variants.append(bytes(zeroed))
    folders = []
    for k, blob in enumerate(variants):
        folder = tmp_path / f"v{k}"
        folder.mkdir()
        for f in src.iterdir():
            if f.suffix != ".h5":
                (folder / f.name).write_bytes(f.read_bytes())
        (folder / h5.name).write_bytes(blob)
        folders.append(str(folder))
    proc = subprocess.run([sys.executable, "-c", _H5_SCRIPT, fmt, *folders],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    results = json.loads(proc.stdout)
    assert len(results) == len(variants)
    assert results[:5] == ["error"] * 5  # every truncation is refused


# ================================================================ fuzz: COCO, GQA, sizes
_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-(2**66), 2**66),
                               st.floats(), st.text(max_size=5)),
                     lambda c: st.one_of(st.lists(c, max_size=4),
                                         st.dictionaries(st.text(max_size=6), c, max_size=4)),
                     max_leaves=20)


@st.composite
def coco_like(draw: Any) -> Any:
    image = {"id": draw(st.one_of(st.just(1), _JSON)),
             "width": draw(st.one_of(st.just(64), _JSON)),
             "height": draw(st.one_of(st.just(48), _JSON)), "file_name": "a.jpg"}
    ann = {"id": 1, "image_id": draw(st.one_of(st.just(1), _JSON)),
           "bbox": draw(st.one_of(st.just([1, 2, 3, 4]), st.lists(st.floats(), max_size=5),
                                  _JSON)),
           "category_id": draw(st.one_of(st.just(1), _JSON)),
           "iscrowd": draw(st.one_of(st.just(0), _JSON))}
    data = {"images": [image], "annotations": [ann],
            "categories": [{"id": 1, "name": "dog"}]}
    for key in draw(st.lists(st.sampled_from(["images", "annotations", "categories"]),
                             max_size=1)):
        data[key] = draw(_JSON)
    return draw(st.one_of(st.just(data), _JSON)) if draw(st.booleans()) else data


def _load_json_source(kind: str, name: str, data: Any) -> None:
    """``detectors.load(kind, FILE)`` of ``data`` written as JSON: a result or a clean error."""
    with _tmp() as tmp:
        path = Path(tmp) / name
        path.write_text(json.dumps(data))
        outcome(lambda: detectors.load(kind, path))


@FUZZ
@given(data=coco_like())
def test_fuzz_coco(data: Any) -> None:
    _load_json_source("coco", "instances.json", data)


@FUZZ
@given(data=st.one_of(_JSON, st.dictionaries(st.text(max_size=3), st.fixed_dictionaries(
    {"width": _JSON, "height": st.just(10), "objects": st.dictionaries(
        st.text(max_size=2), st.fixed_dictionaries({"name": st.just("a"), "x": _JSON,
                                                   "y": st.just(1), "w": _JSON,
                                                   "h": st.just(2)}), max_size=2)}),
    max_size=2)))
def test_fuzz_gqa(data: Any) -> None:
    _load_json_source("gqa", "sg.json", data)


@FUZZ
@given(raw=st.one_of(tsv_junk(), st.builds(lambda v: f"im0\t{json.dumps(v)}\n".encode(), _JSON)),
       as_json=st.booleans())
def test_fuzz_image_size_files(imgs: list[dict], raw: bytes, as_json: bool) -> None:
    img = imgs[0]
    with _tmp() as tmp:
        tsv = Path(tmp) / "features.tsv"
        tsv.write_text(oscar_line(img, "columns") + "\n")
        sizes = Path(tmp) / ("sizes.json" if as_json else "hw.tsv")
        sizes.write_bytes(raw)
        outcome(lambda: detectors.load("oscar", tsv, sizes=sizes))


@pytest.mark.parametrize("text", [b"[" * 100000, b'{"a":' * 100000])
def test_deeply_nested_json_is_an_error(tmp_path: Path, text: bytes) -> None:
    for fmt, name in (("coco", "i.json"), ("gqa", "g.json")):
        path = tmp_path / name
        path.write_bytes(text)
        with pytest.raises(DetectorDataError, match="nests too deeply|not valid JSON"):
            detectors.load(fmt, path)
    path = tmp_path / "p.tsv"
    path.write_bytes(b"im0\t" + text + b"\n")
    with pytest.raises(DetectorDataError, match="nests too deeply|not valid JSON"):
        detectors.load("vinvl", path)["im0"]


# ================================================================ fuzz: the feature store
@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory, imgs: list[dict]) -> Path:
    root = tmp_path_factory.mktemp("store")
    src = root / "predictions.tsv"
    rows = []
    for img in imgs:  # small features keep the fuzzing fast
        small = dict(img, features=img["features"][:, :8])
        objects = [{"rect": [float(v) for v in b], "class": lab, "conf": float(s),
                    "feature": b64(f)} for b, lab, s, f in zip(small["boxes"], small["labels"],
                                                               small["scores"],
                                                               small["features"])]
        payload = {"objects": objects, "image_w": img["size"][0], "image_h": img["size"][1]}
        rows.append(f"{img['id']}\t{json.dumps(payload)}")
    write_lines(src, rows, False)
    detectors.convert(detectors.load("vinvl", src, dim=8), root / "store", progress=False)
    return root / "store"


def _store_copy(store_dir: Path, tmp: str) -> Path:
    out = Path(tmp) / "store"
    out.mkdir()
    for f in store_dir.iterdir():
        (out / f.name).write_bytes(f.read_bytes())
    return out


def _reads_like(got: dict[str, Proposals], store_dir: Path) -> None:
    ref = detectors.open_store(store_dir)
    for image_id, props in got.items():
        want = ref[image_id]
        np.testing.assert_array_equal(props.boxes, want.boxes)
        if props.features is not None:
            np.testing.assert_array_equal(props.features, want.features)


_META_KEYS = ["format", "version", "num_images", "num_boxes", "feature_dim", "dtype",
              "has_features", "has_scores", "has_labels", "labels", "source"]
_STORE_VALUES = st.one_of(_JSON, st.sampled_from([10**18, 2**63, -1, 0, 1, 7, 8, 9, 2.0,
                                                  "float16", "float64", True, False, []]))


@FUZZ
@given(key=st.sampled_from(_META_KEYS), value=_STORE_VALUES)
def test_fuzz_store_meta(store_dir: Path, key: str, value: Any) -> None:
    with _tmp() as tmp:
        out = _store_copy(store_dir, tmp)
        meta = json.loads((out / "meta.json").read_text())
        meta[key] = value
        (out / "meta.json").write_text(json.dumps(meta))
        status, got = outcome(lambda: detectors.open_store(out))
        if status == "ok":
            _reads_like(got, store_dir)


@FUZZ
@given(key=st.sampled_from(["image_ids", "offsets", "counts", "sizes"]),
       pos=st.integers(0, 4), value=_STORE_VALUES, whole=st.booleans())
def test_fuzz_store_index(store_dir: Path, key: str, pos: int, value: Any,
                          whole: bool) -> None:
    with _tmp() as tmp:
        out = _store_copy(store_dir, tmp)
        index = json.loads((out / "index.json").read_text())
        if whole:
            index[key] = value
        else:
            index[key][pos] = value
        (out / "index.json").write_text(json.dumps(index))
        status, got = outcome(lambda: detectors.open_store(out))
        if status == "ok":
            ref = json.loads((store_dir / "index.json").read_text())
            if key == "image_ids":  # renamed images still read their own rows
                assert len(got) == len(ref["image_ids"])
            else:
                _reads_like(got, store_dir)


@FUZZ
@given(name=st.sampled_from(["meta.json", "index.json", "features.bin", "boxes.bin",
                             "scores.bin", "labels.bin"]),
       frac=st.floats(0, 1, exclude_max=True))
def test_fuzz_store_truncated_before_opening(store_dir: Path, name: str, frac: float) -> None:
    with _tmp() as tmp:
        out = _store_copy(store_dir, tmp)
        data = (out / name).read_bytes()
        (out / name).write_bytes(data[:int(frac * len(data))])
        status, _ = outcome(lambda: detectors.open_store(out))
    assert status == "error"


@FUZZ
@given(name=st.sampled_from(["features.bin", "boxes.bin", "scores.bin", "labels.bin",
                             "meta.json", "index.json"]),
       pos=st.floats(0, 1, exclude_max=True), value=st.binary(min_size=1, max_size=8))
def test_fuzz_store_random_bytes(store_dir: Path, name: str, pos: float, value: bytes) -> None:
    """Same-size damage: meta and index are refused or read the same; damaged arrays give
    an error or proposals that pass every check (validate=True checks features too)."""
    with _tmp() as tmp:
        out = _store_copy(store_dir, tmp)
        data = bytearray((out / name).read_bytes())
        size = len(data)
        at = int(pos * size)
        data[at:at + len(value)] = value
        (out / name).write_bytes(bytes(data[:size]))
        outcome(lambda: detectors.open_store(out, validate=True), dims=(8,))


@pytest.mark.parametrize("text", [b"", b"\xff\xfe", b"[]", b"{}", b"[" * 50000, b"null"])
@pytest.mark.parametrize("name", ["meta.json", "index.json"])
def test_store_json_files_with_junk(store_dir: Path, name: str, text: bytes) -> None:
    with _tmp() as tmp:
        out = _store_copy(store_dir, tmp)
        (out / name).write_bytes(text)
        with pytest.raises(DetectorDataError, match=name.replace(".", r"\.")):
            detectors.open_store(out)


def test_store_label_index_out_of_range_is_an_error(store_dir: Path) -> None:
    with _tmp() as tmp:
        out = _store_copy(store_dir, tmp)
        labels = np.fromfile(out / "labels.bin", dtype="<i4")
        for bad in (-1, 10**6):
            labels[0] = bad
            labels.tofile(out / "labels.bin")
            with pytest.raises(DetectorDataError, match=rf"labels.bin: image 'im0' has label "
                                                        rf"index {bad}, outside"):
                detectors.open_store(out)["im0"]


def test_store_nan_boxes_are_an_error(store_dir: Path) -> None:
    with _tmp() as tmp:
        out = _store_copy(store_dir, tmp)
        boxes = np.fromfile(out / "boxes.bin", dtype="<f4")
        boxes[1] = np.nan
        boxes.tofile(out / "boxes.bin")
        with pytest.raises(DetectorDataError, match=r"store image 'im0': .*NaN"):
            detectors.open_store(out)["im0"]


@pytest.mark.parametrize("path", ["preadv", "pread", "seek"])
def test_store_reads_by_every_platform_path(store_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                            path: str) -> None:
    """preadv (Linux, BSD), pread (other POSIX) and seek + read under a lock read the same
    bytes, and each names a file cut short while the store is open."""
    import detectors.store as store_mod

    monkeypatch.setattr(store_mod, "_HAS_PREADV", path == "preadv")
    monkeypatch.setattr(store_mod, "_HAS_PREAD", path == "pread")
    ref = {p.image_id: p for p in detectors.open_store(store_dir)}
    with _tmp() as tmp:
        out = _store_copy(store_dir, tmp)
        store = detectors.open_store(out, dtype=np.float32)
        for image_id, want in ref.items():
            got = store[image_id]
            np.testing.assert_array_equal(got.boxes, want.boxes)
            np.testing.assert_array_equal(got.features, want.features.astype(np.float32))
            assert got.labels == want.labels
            np.testing.assert_array_equal(got.scores, want.scores)
        size = (out / "features.bin").stat().st_size
        os.truncate(out / "features.bin", size - 4)  # the last image loses part of a row
        with pytest.raises(DetectorDataError, match=r"features.bin: short read .* \(\d+ of "
                                                    r"\d+ bytes\)"):
            store["im4"]
        np.testing.assert_array_equal(store["im0"].boxes, ref["im0"].boxes)
