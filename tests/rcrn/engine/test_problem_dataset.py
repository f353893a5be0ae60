"""ProblemDataset: pixels read from ``meta['image_path']``, each image decoded once while
it is among the last few read."""

import numpy as np
import pytest
from PIL import Image

from rcrn.batching import Vocab
from rcrn.engine.trainer import ProblemDataset, make_loader
from rcrn.testing import learnable_problems


def _with_images(tmp_path, count, per_image):
    problems = learnable_problems(count, seed=2)
    rng = np.random.default_rng(0)
    for i, p in enumerate(problems):
        path = tmp_path / f"img{i // per_image}.png"
        if not path.exists():
            Image.fromarray(rng.integers(0, 256, (100, 100, 3), dtype=np.uint8)).save(path)
        p.meta["image_path"] = str(path)
    return problems


def test_items_of_one_image_share_one_read_only_decode(tmp_path, monkeypatch):
    problems = _with_images(tmp_path, 12, per_image=4)
    opened = []
    real_open = Image.open
    monkeypatch.setattr(Image, "open", lambda path, *a: opened.append(path) or real_open(path))
    ds = ProblemDataset(problems, with_images=True)
    items = [ds[i] for i in range(12)]
    assert len(opened) == 3
    assert items[0].meta["image"] is items[3].meta["image"]
    with Image.open(problems[5].meta["image_path"]) as im:
        np.testing.assert_array_equal(items[5].meta["image"], np.asarray(im.convert("RGB")))
    with pytest.raises(ValueError):
        items[0].meta["image"][0, 0, 0] = 1
    assert "image" not in problems[0].meta


def test_the_cache_keeps_only_the_last_images_read(tmp_path, monkeypatch):
    problems = _with_images(tmp_path, 6, per_image=1)
    opened = []
    real_open = Image.open
    monkeypatch.setattr(Image, "open", lambda path, *a: opened.append(path) or real_open(path))
    ds = ProblemDataset(problems, with_images=True, cache_images=2)
    for i in (0, 1, 0, 2, 1, 0):          # 0 and 1 kept, 2 evicts 1, 1 evicts 0
        ds[i]
    assert [int(str(p)[-5]) for p in opened] == [0, 1, 2, 1, 0]
    assert len(ds._images) == 2
    off = ProblemDataset(problems, with_images=True, cache_images=0)
    off[0], off[0]
    assert len(opened) == 7 and not off._images


def test_a_batch_of_cached_images_stacks_each_distinct_image_once(tmp_path):
    problems = _with_images(tmp_path, 8, per_image=4)
    loader = make_loader(problems, Vocab.build(problems), 8, False, with_images=True)
    batch = next(iter(loader))
    assert batch.images.shape == (2, 3, 100, 100)
    assert batch.image_index.tolist() == [0] * 4 + [1] * 4
    with Image.open(problems[4].meta["image_path"]) as im:
        want = np.asarray(im.convert("RGB")).transpose(2, 0, 1) / 255.0
    np.testing.assert_allclose(batch.images[1].numpy(), want, rtol=0, atol=1e-6)
    batch.images.mul_(0)                  # the batch owns its pixels
    assert loader.dataset[4].meta["image"].any()
