"""The feature store: round trips, random access from DataLoader workers, the CLI."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from det_fixtures import random_image, vinvl_line, write_lines
from torch.utils.data import DataLoader, Dataset

import detectors
from detectors import DetectorDataError, ImageNotFoundError
from rcrn.cli import main
from rcrn.structures import Proposals


@pytest.fixture(scope="module")
def source_tsv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    rng = np.random.default_rng(1)
    counts = [3, 0, 126, 17, 1, 40]
    images = [random_image(rng, f"im{k}", n, dim=2048, size=(200 + k, 100 + 2 * k))
              for k, n in enumerate(counts)]
    path = tmp_path_factory.mktemp("src") / "predictions.tsv"
    write_lines(path, [vinvl_line(img) for img in images], True)
    return path, images


@pytest.mark.parametrize("float16", [False, True])
def test_store_round_trip(tmp_path: Path, source_tsv: tuple[Path, list[dict]],
                          float16: bool) -> None:
    path, images = source_tsv
    src = detectors.load("vinvl", path)
    meta = detectors.convert(src, tmp_path / "store", float16=float16, progress=False)
    assert meta["num_images"] == 6 and meta["num_boxes"] == 187
    assert meta["feature_dim"] == 2048 and meta["dtype"] == ("float16" if float16 else "float32")
    assert meta["source"] == {"format": "vinvl", "location": str(path)}
    store = detectors.open_store(tmp_path / "store")
    as32 = detectors.open_store(tmp_path / "store", dtype=np.float32, validate=True)
    assert store.image_ids() == src.image_ids() and len(store) == 6
    stored = np.float16 if float16 else np.float32
    for img in reversed(images):
        a, b, c = src[img["id"]], store[img["id"]], as32[img["id"]]
        assert b.image_size == a.image_size and b.labels == a.labels
        np.testing.assert_array_equal(b.boxes, a.boxes)
        np.testing.assert_array_equal(b.scores, a.scores)
        assert b.features.dtype == stored and b.features.shape == (len(a), 2048)
        assert c.features.dtype == np.float32
        np.testing.assert_array_equal(b.features, a.features.astype(stored))
        np.testing.assert_array_equal(c.features, a.features.astype(stored).astype(np.float32))
    # size: features + 16 bytes of box + 8 of score/label per box + a small index
    feature_bytes = 187 * 2048 * (2 if float16 else 4)
    assert feature_bytes < store.nbytes() < feature_bytes * 1.05 + 4096
    with pytest.raises(ImageNotFoundError, match=r"store: no image with id 'missing'"):
        store["missing"]


def test_store_reads_agree_with_the_memory_map_and_name_short_reads(
        tmp_path: Path, source_tsv: tuple[Path, list[dict]]) -> None:
    """Every array comes through one positional read per image; the bytes are those of
    the files read as memory maps, and a file cut short after opening is named."""
    path, images = source_tsv
    detectors.convert(detectors.load("vinvl", path), tmp_path / "store", float16=True,
                      progress=False)
    fast = detectors.open_store(tmp_path / "store", dtype=np.float32)
    total = fast.meta["num_boxes"]
    mapped = np.memmap(tmp_path / "store" / "features.bin", dtype="<f2", mode="r",
                       shape=(total, 2048))
    boxes = np.memmap(tmp_path / "store" / "boxes.bin", dtype="<f4", mode="r", shape=(total, 4))

    def expect(image_id: str) -> tuple[np.ndarray, np.ndarray]:
        i = fast.image_ids().index(image_id)
        start, count = int(fast._offsets[i]), int(fast._counts[i])
        return (np.asarray(mapped[start:start + count], dtype=np.float32),
                np.asarray(boxes[start:start + count]))

    for img in images:
        props = fast[img["id"]]
        a = props.features
        assert a.dtype == np.float32 and a.flags.writeable and props.boxes.flags.writeable
        np.testing.assert_array_equal(a, expect(img["id"])[0])
        np.testing.assert_array_equal(props.boxes, expect(img["id"])[1])
    # a fresh store read by many threads at once: each opens it, none sees half a state
    from concurrent.futures import ThreadPoolExecutor

    for _ in range(5):
        shared = detectors.open_store(tmp_path / "store", dtype=np.float32)
        ids = [img["id"] for img in images] * 8
        with ThreadPoolExecutor(8) as pool:
            got = [p.features for p in pool.map(shared.__getitem__, ids)]
        for i, a in zip(ids, got):
            np.testing.assert_array_equal(a, expect(i)[0])
    features = tmp_path / "store" / "features.bin"
    with open(features, "r+b") as f:
        f.truncate(features.stat().st_size - 2048)
    with pytest.raises(DetectorDataError, match=r"features.bin: short read .*truncated or "
                                                r"replaced while the store was open"):
        fast["im5"]
    assert len(fast["im0"]) == 3  # what the file still holds reads as before
    with pytest.raises(DetectorDataError, match=r"features.bin: expected .* bytes"):
        detectors.open_store(tmp_path / "store")


def test_half_to_float_is_exact_for_every_finite_half() -> None:
    from detectors.store import _convert

    halves = np.arange(2**16, dtype=np.uint16).view("<f2")
    halves = halves[np.isfinite(halves)].reshape(-1, 2)
    got = _convert(halves, np.dtype(np.float32))
    np.testing.assert_array_equal(got.view(np.uint32), halves.astype(np.float32).view(np.uint32))


class _Items(Dataset):
    def __init__(self, store: detectors.FeatureStore) -> None:
        self.store = store
        self.ids = store.image_ids()

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> tuple[str, torch.Tensor]:
        props = self.store[self.ids[i]]
        return props.image_id, torch.from_numpy(props.features).double().sum(dim=0)


def test_store_in_dataloader_workers(tmp_path: Path, source_tsv: tuple[Path, list[dict]]) -> None:
    path, images = source_tsv
    detectors.convert(detectors.load("vinvl", path), tmp_path / "s", progress=False)
    store = detectors.open_store(tmp_path / "s")
    store["im2"]  # opened in the parent: the memmaps must not travel to the workers
    assert pickle.loads(pickle.dumps(store))["im2"].features.shape == (126, 2048)
    loader = DataLoader(_Items(store), batch_size=None, num_workers=2, shuffle=False)
    got = {image_id: total for image_id, total in loader}
    assert set(got) == {img["id"] for img in images}
    for img in images:
        np.testing.assert_allclose(got[img["id"]].numpy(), img["features"].sum(axis=0),
                                   rtol=1e-5, atol=1e-4)


def test_store_without_features_and_with_empty_images(tmp_path: Path) -> None:
    props = [Proposals(boxes=[[0, 0, 5, 5]], image_size=(10, 10), labels=["a"], image_id="x"),
             Proposals(boxes=np.zeros((0, 4)), image_size=(4, 3), labels=[], image_id="y")]
    meta = detectors.convert(props, tmp_path / "gt", progress=False,
                             source_info={"format": "list"})
    assert not meta["has_features"] and meta["feature_dim"] == 0 and not meta["has_scores"]
    store = detectors.open_store(tmp_path / "gt")
    assert store["x"].labels == ["a"] and store["x"].features is None
    assert len(store["y"]) == 0 and store["y"].image_size == (4, 3)
    with pytest.raises(DetectorDataError, match="holds no images; nothing to convert"):
        detectors.convert([], tmp_path / "empty", progress=False)
    assert not (tmp_path / "empty").exists()


def test_store_bad_input(tmp_path: Path, source_tsv: tuple[Path, list[dict]]) -> None:
    path, _ = source_tsv
    out = tmp_path / "store"
    detectors.convert(detectors.load("vinvl", path), out, progress=False)
    with pytest.raises(DetectorDataError, match="exists and is not empty"):
        detectors.convert(detectors.load("vinvl", path), out, progress=False)
    feats = out / "features.bin"
    feats.write_bytes(feats.read_bytes()[:-10])
    with pytest.raises(DetectorDataError, match=r"features.bin: expected .* bytes .*truncated"):
        detectors.open_store(out)
    (out / "meta.json").unlink()
    with pytest.raises(DetectorDataError, match="meta.json is missing"):
        detectors.open_store(out)
    # overflow in float16 names the source and the image; the partial store is removed
    big = [Proposals(boxes=[[0, 0, 1, 1]], image_size=(2, 2), features=[[1e6, 0.0]],
                     image_id="huge")]
    with pytest.raises(DetectorDataError, match=r"image 'huge': features overflow float16"):
        detectors.convert(big, tmp_path / "f16", float16=True, progress=False)
    assert not (tmp_path / "f16").exists()
    mixed = [Proposals(boxes=[[0, 0, 1, 1]], image_size=(2, 2), features=[[1.0, 2.0]],
                       image_id="a"),
             Proposals(boxes=[[0, 0, 1, 1]], image_size=(2, 2), features=[[1.0, 2.0, 3.0]],
                       image_id="b")]
    with pytest.raises(DetectorDataError, match=r"image 'b': 3-d features but earlier"):
        detectors.convert(mixed, tmp_path / "mixed", progress=False)


def test_cli_convert_and_info(tmp_path: Path, source_tsv: tuple[Path, list[dict]],
                              capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = source_tsv
    out = tmp_path / "cli_store"
    assert main(["features", "convert", "--from", "vinvl", str(path), "--out", str(out),
                 "--float16", "--no-progress"]) == 0
    assert "6 images, 187 boxes, features 2048-d float16" in capsys.readouterr().out
    assert main(["features", "info", str(out)]) == 0
    text = capsys.readouterr().out
    assert "source:       vinvl" in text and "feature dim:  2048" in text and "float16" in text
    assert main(["features", "info", str(out), "--json"]) == 0
    meta = json.loads(capsys.readouterr().out)
    assert meta["source"]["format"] == "vinvl" and meta["feature_dim"] == 2048
    # options reach the reader; a bad one is a user error with exit code 2
    assert main(["features", "convert", "--from", "vinvl", str(path), "--out",
                 str(tmp_path / "x"), "--opt", "colour=red", "--no-progress"]) == 2
    assert "accepts: sizes, lineidx" in capsys.readouterr().err
    assert main(["features", "info", str(tmp_path / "nowhere")]) == 2
    assert main(["features", "convert", "--from", "nosuch", str(path), "--out",
                 str(tmp_path / "y")]) == 2
    assert main(["features", "formats"]) == 0
    assert "gitm-mr" in capsys.readouterr().out


def test_store_is_a_source(tmp_path: Path, source_tsv: tuple[Path, list[dict]]) -> None:
    path, _ = source_tsv
    detectors.convert(detectors.load("vinvl", path), tmp_path / "s", progress=False, limit=2)
    store = detectors.load("store", tmp_path / "s")
    assert isinstance(store, detectors.ProposalSource)
    assert store.image_ids() == ["im0", "im1"] and store.feature_dim == 2048
    assert [p.image_id for p in store] == ["im0", "im1"]
