"""Every reader round-trips fixture files written in the upstream layout; bad input fails
clearly, naming the file and the row."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

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

import detectors
from detectors import DetectorDataError, ImageNotFoundError, ProposalSource
from rcrn.structures import Proposals


@pytest.fixture(scope="module")
def images() -> list[dict]:
    rng = np.random.default_rng(0)
    return [random_image(rng, "img_a", 5), random_image(rng, "img_b", 0, size=(300, 500)),
            random_image(rng, "img_c", 126, size=(1024, 768))]


def _same(props: Proposals, img: dict, features: bool = True, atol: float = 1e-6) -> None:
    assert props.image_id == img["id"]
    assert props.image_size == tuple(img["size"])
    assert len(props) == len(img["boxes"])
    np.testing.assert_allclose(props.boxes, img["boxes"], atol=1e-3)
    if features:
        assert props.features is not None
        assert props.features.shape == (len(img["boxes"]), 2048)
        np.testing.assert_allclose(props.features.astype(np.float32), img["features"], atol=atol)


# ------------------------------------------------------------------------------ VinVL
@pytest.mark.parametrize("lineidx", [True, False])
def test_vinvl_round_trip(tmp_path: Path, images: list[dict], lineidx: bool) -> None:
    path = tmp_path / "predictions.tsv"
    write_lines(path, [vinvl_line(img) for img in images], lineidx)
    src = detectors.load("vinvl", path)
    assert isinstance(src, ProposalSource)
    assert (src.index.lineidx_path is not None) == lineidx
    assert src.image_ids() == ["img_a", "img_b", "img_c"] and len(src) == 3
    for img in reversed(images):  # random access, out of file order
        props = src[img["id"]]
        _same(props, img, features=len(img["boxes"]) > 0)
        assert props.labels == img["labels"]
        np.testing.assert_allclose(props.scores, img["scores"], rtol=1e-6)
    assert src["img_b"].features.shape == (0, 2048)  # 0-box image keeps the feature size
    assert [p.image_id for p in src] == src.image_ids()


def test_vinvl_sizes_from_hw_tsv(tmp_path: Path, images: list[dict]) -> None:
    path = tmp_path / "predictions.tsv"
    write_lines(path, [vinvl_line(img, with_size=False) for img in images], False)
    hw = tmp_path / "hw.tsv"
    hw.write_text("".join(f"{img['id']}\t{json.dumps([{'height': img['size'][1], 'width': img['size'][0]}])}\n"  # noqa: E501
                          for img in images))
    src = detectors.load("vinvl", path, sizes=hw)
    assert src["img_c"].image_size == (1024, 768)
    with pytest.raises(DetectorDataError, match=r"predictions.tsv row 1 .*image size"):
        detectors.load("vinvl", path)["img_a"]


def test_absent_image_id(tmp_path: Path, images: list[dict]) -> None:
    path = tmp_path / "predictions.tsv"
    write_lines(path, [vinvl_line(images[0])], True)
    src = detectors.load("vinvl", path)
    with pytest.raises(ImageNotFoundError) as info:
        src["nope"]
    assert isinstance(info.value, KeyError) and isinstance(info.value, DetectorDataError)
    assert "predictions.tsv" in str(info.value) and "'nope'" in str(info.value)
    assert "nope" not in src and "img_a" in src
    assert src.get("nope") is None


def test_truncated_tsv_row(tmp_path: Path, images: list[dict]) -> None:
    path = tmp_path / "predictions.tsv"
    good, cut = vinvl_line(images[0]), vinvl_line(images[2])
    write_lines(path, [good, cut[: len(cut) // 2]], False)
    src = detectors.load("vinvl", path)
    assert len(src["img_a"]) == 5  # the rest of the file stays readable
    with pytest.raises(DetectorDataError, match=r"predictions.tsv row 2 \(image 'img_c'.*JSON"):
        src["img_c"]


def test_stale_lineidx(tmp_path: Path, images: list[dict]) -> None:
    path = tmp_path / "predictions.tsv"
    write_lines(path, [vinvl_line(img) for img in images[:2]], False)
    path.with_suffix(".lineidx").write_text("0\n7\n")
    with pytest.raises(DetectorDataError, match=r"predictions.lineidx line 2.*stale"):
        detectors.load("vinvl", path)


def test_nan_features_name_the_row(tmp_path: Path, images: list[dict]) -> None:
    bad = dict(images[0], features=images[0]["features"].copy())
    bad["features"][2, 7] = np.nan
    path = tmp_path / "predictions.tsv"
    write_lines(path, [vinvl_line(images[2]), vinvl_line(bad)], True)
    with pytest.raises(DetectorDataError, match=r"predictions.tsv row 2 .*img_a.*NaN"):
        detectors.load("vinvl", path)["img_a"]


def test_duplicate_ids_are_refused(tmp_path: Path, images: list[dict]) -> None:
    path = tmp_path / "predictions.tsv"
    write_lines(path, [vinvl_line(images[0]), vinvl_line(images[0])], False)
    with pytest.raises(DetectorDataError, match="appears twice, on lines 1 and 2"):
        detectors.load("vinvl", path)


# ------------------------------------------------------------------------------ Oscar
@pytest.mark.parametrize("layout", ["json", "columns"])
@pytest.mark.parametrize("dtype", ["<f4", "<f2"])
def test_oscar_2054_round_trip(tmp_path: Path, images: list[dict], layout: str,
                               dtype: str) -> None:
    path = tmp_path / "features.tsv"
    write_lines(path, [oscar_line(img, layout, dtype) for img in images], False)
    sizes = {img["id"]: list(img["size"]) for img in images}
    half = {"dtype": "float16"} if dtype == "<f2" else {}
    src = detectors.load("oscar", path, sizes=sizes, **half)
    atol = 1e-6 if dtype == "<f4" else 2e-3 * 4
    for img in images:
        props = src[img["id"]]
        assert props.features.dtype == np.dtype(dtype).newbyteorder("=")
        assert props.features.shape == (len(img["boxes"]), 2048)
        np.testing.assert_allclose(props.features.astype(np.float32), img["features"],
                                   atol=atol, rtol=1e-3)
        # boxes come back from the 6 normalised values (float16 costs some precision)
        np.testing.assert_allclose(props.boxes, img["boxes"], atol=0.6 if dtype == "<f2" else 1e-3)
    kept = detectors.load("oscar", path, sizes=sizes, keep_box_values=True, **half)
    assert kept["img_a"].feature_dim == 2054


def test_oscar_2048_needs_labels(tmp_path: Path, images: list[dict]) -> None:
    path = tmp_path / "features.tsv"
    write_lines(path, [oscar_line(img, "columns", with_box=False) for img in images], False)
    with pytest.raises(DetectorDataError, match=r"features.tsv row 1 .*carry no boxes"):
        detectors.load("oscar", path)["img_a"]
    labels = tmp_path / "predictions.tsv"
    write_lines(labels, [vinvl_line(img) for img in images], False)
    src = detectors.load("oscar", path, labels=labels)
    for img in images:
        _same(src[img["id"]], img)
        assert src[img["id"]].labels == img["labels"]


def test_oscar_wrong_byte_length(tmp_path: Path, images: list[dict]) -> None:
    img = images[0]
    feats = np.concatenate([img["features"], np.zeros((5, 6), np.float32)], axis=1)
    short = f"{img['id']}\t5\t{b64(feats[:4])}"  # says 5 boxes, holds 4
    path = tmp_path / "features.tsv"
    write_lines(path, [short], False)
    with pytest.raises(DetectorDataError, match=r"features.tsv row 1 .*holds 32864 bytes for 5 "
                                                r"boxes, expected 41080 or 40960") as err:
        detectors.load("oscar", path, sizes={"img_a": [640, 480]})["img_a"]
    assert "2054/2048-d float32" in str(err.value)


def test_oscar_not_base64(tmp_path: Path) -> None:
    path = tmp_path / "features.tsv"
    path.write_text("k1\t1\t@@not base64@@\n")
    with pytest.raises(DetectorDataError, match=r"features.tsv row 1 .*not valid base64"):
        detectors.load("oscar", path, sizes={"k1": [10, 10]})["k1"]


# ------------------------------------------------------------------------------ UNITER
def test_uniter_npz(tmp_path: Path, images: list[dict]) -> None:
    folder = tmp_path / "npz"
    folder.mkdir()
    for img in images:
        write_uniter(folder / f"{img['id']}.npz", img)
    sizes = {img["id"]: img["size"] for img in images}
    vocab = ["dog", "cat", "cup", "table", "person"]
    src = detectors.load("uniter", folder, sizes=sizes, conf_th=0.5, vocab=vocab)
    big = images[2]
    expect = min(100, max(10, int((big["scores"] > 0.5).sum())))
    props = src["img_c"]
    assert len(props) == expect and props.features.shape == (expect, 2048)
    np.testing.assert_allclose(props.boxes, big["boxes"][:expect], atol=1.0)  # float16 norm_bb
    np.testing.assert_allclose(props.features, big["features"][:expect], atol=5e-3, rtol=1e-3)
    assert props.labels == big["labels"][:expect]
    assert len(src["img_a"]) == 5  # fewer stored boxes than min_bb
    assert len(src["img_b"]) == 0
    fixed = detectors.load("uniter", folder, sizes=sizes, num_bb=36)
    assert len(fixed["img_c"]) == 36
    with pytest.raises(DetectorDataError, match=r"img_a.npz.*image size"):
        detectors.load("uniter", folder)["img_a"]


def test_uniter_num_boxes_rule() -> None:
    conf = np.linspace(1, 0, 150)
    assert detectors.uniter_num_boxes(conf, 0.2, 10, 100) == 100
    assert detectors.uniter_num_boxes(conf, 0.99, 10, 100) == 10
    assert detectors.uniter_num_boxes(conf, 0.5, 10, 100) == int((conf > 0.5).sum())
    assert detectors.uniter_num_boxes(conf[:4], 0.9, 10, 100) == 4


# ------------------------------------------------------------------------------ bottom-up
def test_bottomup_lxmert_layout(tmp_path: Path, images: list[dict]) -> None:
    path = tmp_path / "train_obj36.tsv"
    write_lines(path, [bottomup_line(img, old=False) for img in images], False)
    vocab = tmp_path / "objects_vocab.txt"
    vocab.write_text("dog\ncat,kitty\ncup\ntable\nperson\n")
    src = detectors.load("bottomup", path, vocab=vocab)
    for img in images:
        props = src[img["id"]]
        _same(props, img, features=len(img["boxes"]) > 0)
        assert props.labels == img["labels"]
        np.testing.assert_array_equal(props.scores, img["scores"])
    assert src["img_c"].image_size == (1024, 768)  # img_h before img_w in the columns
    assert detectors.load("bottomup", path)["img_a"].labels == ["0", "1", "2", "3", "4"]


def test_bottomup_old_layout_width_first(tmp_path: Path, images: list[dict]) -> None:
    path = tmp_path / "old.tsv"
    write_lines(path, [bottomup_line(img, old=True) for img in images], True)
    src = detectors.load("bottomup", path)
    for img in images:
        _same(src[img["id"]], img, features=len(img["boxes"]) > 0)
        assert src[img["id"]].scores is None
    assert src["img_b"].image_size == (300, 500)  # image_w before image_h in the columns


def test_bottomup_bad_rows(tmp_path: Path, images: list[dict]) -> None:
    cols = bottomup_line(images[0], old=False).split("\t")
    wrong_boxes = ["img_x"] + cols[1:8] + [b64(images[0]["boxes"][:3])] + cols[9:]
    path = tmp_path / "bad.tsv"
    write_lines(path, [bottomup_line(images[2], old=False), "\t".join(cols[:7]),
                       "\t".join(wrong_boxes)], False)
    src = detectors.load("bottomup", path)
    assert len(src["img_c"]) == 126  # good rows stay readable
    with pytest.raises(DetectorDataError, match=r"bad.tsv row 2 .*10 or 6 tab-separated"):
        src["img_a"]
    with pytest.raises(DetectorDataError, match=r"bad.tsv row 3 .*'boxes' holds 12 float32"):
        src["img_x"]


# ------------------------------------------------------------------------------ GITM-MR
def test_gitm_mr_objects(tmp_path: Path, images: list[dict]) -> None:
    imgs = [dict(img, id=str(1000 + k)) for k, img in enumerate(images)]
    root = tmp_path / "vinvl_objects"
    write_gitm_mr(root, imgs)
    src = detectors.load("gitm-mr", root)
    assert src.image_ids() == ["1000", "1001", "1002"]
    for img in imgs:
        props = src[int(img["id"])]  # numeric ids work too
        _same(props, img)
        assert props.labels == img["labels"]
    assert src["1002"].features.shape == (126, 2048)
    assert src["1001"].features.shape == (0, 2048)


def test_gitm_mr_refuses_code_in_pickle(tmp_path: Path, images: list[dict]) -> None:
    root = tmp_path / "vinvl_objects"
    root.mkdir()
    with open(root / "rois_info.pkl", "wb") as f:
        pickle.dump({1: {"size": (10, 10), "hook": os.system}}, f)
    with pytest.raises(DetectorDataError, match=r"rois_info.pkl: refusing to unpickle .*system"):
        detectors.load("gitm-mr", root)


def test_gitm_mr_bad_record(tmp_path: Path, images: list[dict]) -> None:
    imgs = [dict(images[0], id="7")]
    root = tmp_path / "vinvl_objects"
    write_gitm_mr(root, imgs)
    info = pickle.loads((root / "rois_info.pkl").read_bytes())
    info[7]["num_objs"] = 200
    info[7]["box"] = np.zeros((200, 4), np.float32)
    info[7]["cls"] = ["dog"] * 200
    (root / "rois_info.pkl").write_bytes(pickle.dumps(info))
    with pytest.raises(DetectorDataError, match=r"rois_info.pkl record '7'.*200 objects"):
        detectors.load("gitm-mr", root)["7"]


# ------------------------------------------------------------------------------ SGMN
def test_sgmn_objects(tmp_path: Path, images: list[dict]) -> None:
    root = tmp_path / "gt_objects"
    write_sgmn(root, images)
    src = detectors.load("sgmn", root)
    for img in images:
        _same(src[img["id"]], img)
    assert src["img_b"].features.shape == (0, 2048)
    with pytest.raises(ImageNotFoundError, match="gt_objects_info.json"):
        src["img_zzz"]


def test_h5_missing_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                            images: list[dict]) -> None:
    import builtins

    root = tmp_path / "gt_objects"
    write_sgmn(root, images[:1])
    real_import = builtins.__import__

    def no_h5py(name: str, *args: object, **kwargs: object) -> object:
        if name == "h5py":
            raise ImportError("no h5py")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_h5py)
    with pytest.raises(detectors.MissingDependencyError, match=r"pip install rcrn\[h5\]"):
        detectors.load("sgmn", root)


# ------------------------------------------------------------------------------ COCO, GQA
def test_coco_ground_truth(tmp_path: Path) -> None:
    data = {
        "images": [{"id": 451431, "file_name": "000000451431.jpg", "width": 640, "height": 480},
                   {"id": 7, "file_name": "000000000007.jpg", "width": 100, "height": 50}],
        "annotations": [
            {"id": 1, "image_id": 451431, "bbox": [10, 20, 30, 40], "category_id": 18,
             "area": 1200, "iscrowd": 0},
            {"id": 2, "image_id": 451431, "bbox": [0, 0, 640, 480], "category_id": 1,
             "area": 1, "iscrowd": 1},
            {"id": 3, "image_id": 451431, "bbox": [100.5, 50, 20, 10], "category_id": 1,
             "area": 200, "iscrowd": 0}],
        "categories": [{"id": 1, "name": "person"}, {"id": 18, "name": "dog"}],
    }
    path = tmp_path / "instances_val2017.json"
    path.write_text(json.dumps(data))
    src = detectors.load("coco", path)
    props = src["000000451431.jpg"]
    assert props.image_id == "451431" and props.image_size == (640, 480)
    np.testing.assert_allclose(props.boxes, [[10, 20, 40, 60], [100.5, 50, 120.5, 60]])
    assert props.labels == ["dog", "person"] and props.features is None
    assert len(src[7]) == 0
    assert len(detectors.load("coco", path, include_crowd=True)[451431]) == 3
    assert detectors.load("coco", path, categories=["dog"])[451431].labels == ["dog"]
    with pytest.raises(DetectorDataError, match="unknown categories"):
        detectors.load("coco", path, categories="unicorn")
    data["annotations"][0]["bbox"] = [1, 2, -3, 4]
    path.write_text(json.dumps(data))
    with pytest.raises(DetectorDataError, match=r"instances_val2017.json annotations\[0\]"):
        detectors.load("coco", path)


def test_gqa_ground_truth(tmp_path: Path) -> None:
    data = {"2370799": {"width": 500, "height": 333, "objects": {
        "1": {"name": "man", "x": 10, "y": 20, "w": 30, "h": 40, "attributes": [],
              "relations": [{"name": "to the left of", "object": "2"}]},
        "2": {"name": "horse", "x": 100, "y": 50, "w": 200, "h": 150, "attributes": ["brown"],
              "relations": []}}},
        "n1": {"width": 10, "height": 10, "objects": {}}}
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(json.dumps(data))
    src = detectors.load("gqa", path)
    props = src["2370799"]
    np.testing.assert_allclose(props.boxes, [[10, 20, 40, 60], [100, 50, 300, 200]])
    assert props.labels == ["man", "horse"] and props.image_size == (500, 333)
    assert src.object_ids("2370799") == ["1", "2"]
    assert len(src["n1"]) == 0
    assert detectors.load("gqa", path, categories="horse")[2370799].labels == ["horse"]
    data["2370799"]["objects"]["2"]["w"] = "wide"
    path.write_text(json.dumps(data))
    with pytest.raises(DetectorDataError, match=r"val_sceneGraphs.json image '2370799' object '2'"):
        detectors.load("gqa", path)


def test_unknown_format() -> None:
    with pytest.raises(KeyError, match="known: .*vinvl"):
        detectors.load("yolo9000", "x")
