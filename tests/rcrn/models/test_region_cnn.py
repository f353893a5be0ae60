"""RoI pooling and the trainable region encoder."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch

from detectors.detectron2_backend import require_detectron2
from detectors.errors import MissingDependencyError
from rcrn.models.region_cnn import PixelRegions, RegionCNN, boxes_to_rois, roi_align
from rcrn.structures import Proposals


@pytest.fixture(autouse=True)
def _one_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread, and do not fight other processes for cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_roi_align_reads_the_right_pixels() -> None:
    fmap = torch.arange(2 * 64, dtype=torch.float64).reshape(2, 1, 8, 8)
    rois = torch.tensor([[0, 2, 2, 4, 4], [1, 0, 0, 8, 8], [0, 4, 0, 8, 2]], dtype=torch.float64)
    out = roi_align(fmap, rois, output_size=2, sampling_ratio=1)
    assert out.shape == (3, 1, 2, 2)
    assert out[0, 0].tolist() == [[18.0, 19.0], [26.0, 27.0]]  # pixel centres, bins of 1 px
    assert torch.allclose(out[1].mean(), fmap[1].mean())
    assert out[2, 0].tolist() == [[4.5, 6.5], [12.5, 14.5]]
    # spatial scale: the same box in a 2x larger input lands on the same pixels
    half = roi_align(fmap, rois[:1] * torch.tensor([1, 2, 2, 2, 2.0], dtype=torch.float64), 2,
                     spatial_scale=0.5, sampling_ratio=1)
    assert torch.equal(half, out[:1])
    assert roi_align(fmap, torch.zeros(0, 5, dtype=torch.float64)).shape == (0, 1, 4, 4)


def test_region_cnn_shapes_and_gradients() -> None:
    torch.manual_seed(0)
    model = RegionCNN(out_dim=48)
    images = torch.rand(3, 3, 64, 80, requires_grad=True)
    boxes = [np.array([[0, 0, 10, 10], [5, 5, 60, 40]], np.float32), np.zeros((0, 4)),
             Proposals(boxes=[[1, 2, 3, 4], [10, 10, 70, 60], [0, 0, 80, 64]],
                       image_size=(80, 64))]
    feats = model(images, boxes)
    assert feats.shape == (5, 48)
    loss = feats.pow(2).sum()
    loss.backward()
    assert images.grad is not None and images.grad[0].abs().sum() > 0
    assert images.grad[1].abs().sum() == 0  # no boxes on image 1
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    assert model.backbone[0].weight.grad.abs().sum() > 0
    # the rois form gives the same answer, and the box order is the batch order
    rois = boxes_to_rois(boxes)
    assert torch.allclose(model(images, rois), feats)
    assert torch.allclose(model(images[2:], [boxes[2]]), feats[2:], atol=1e-5)
    assert model(images, [np.zeros((0, 4))] * 3).shape == (0, 48)
    assert "out_dim=48" in repr(model)


def test_pixel_regions_pool_each_box_set_once() -> None:
    """Items sharing an image and its boxes (one scene's expressions) are pooled once;
    the features and the gradients are those of pooling every item on its own."""
    torch.manual_seed(0)
    encoder = RegionCNN(out_dim=16)
    seen: list[int] = []
    encoder.head.register_forward_hook(lambda m, i, o: seen.append(o.shape[0]))
    images = torch.rand(2, 3, 48, 48)
    shared = torch.tensor([[0, 0, 20, 20], [10, 10, 40, 30]], dtype=torch.float32)
    other = torch.tensor([[5, 5, 30, 30], [0, 0, 0, 0]], dtype=torch.float32)
    image_index = torch.tensor([0, 0, 1, 0, 1])  # items 0, 1, 3 share image 0 and its boxes
    boxes = torch.stack([shared, shared, shared, other, other])
    feats = PixelRegions(encoder)(images, image_index, boxes)
    assert seen == [4 * 2]  # four distinct (image, boxes) sets of two boxes, not five
    weights = torch.rand_like(feats)
    (feats * weights).sum().backward()
    grad = encoder.head[1].weight.grad.clone()
    encoder.zero_grad()
    rois = torch.cat([image_index.float().repeat_interleave(2)[:, None], boxes.reshape(10, 4)], 1)
    alone = encoder(images, rois).reshape(5, 2, 16)
    assert torch.allclose(feats, alone, atol=1e-6)
    assert not torch.allclose(feats[2], feats[0])  # same boxes, another image
    assert not torch.allclose(feats[3], feats[0])  # same image, other boxes
    (alone * weights).sum().backward()
    assert torch.allclose(grad, encoder.head[1].weight.grad, atol=1e-5)


def test_region_cnn_trains() -> None:
    torch.manual_seed(0)
    model = RegionCNN(out_dim=16, channels=(8, 8, 8))
    classifier = torch.nn.Linear(16, 2)
    images = torch.zeros(1, 3, 32, 32)
    images[0, 0, :, :16] = 1.0  # red left half
    images[0, 2, :, 16:] = 1.0  # blue right half
    boxes = [torch.tensor([[0.0, 0, 16, 32], [16, 0, 32, 32]])]
    target = torch.tensor([0, 1])
    opt = torch.optim.Adam([*model.parameters(), *classifier.parameters()], lr=1e-2)
    losses = []
    for _ in range(12):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(classifier(model(images, boxes)), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.05 < losses[0]


def test_describe_and_uint8_input() -> None:
    model = RegionCNN(out_dim=8)
    image = (np.random.default_rng(0).random((20, 30, 3)) * 255).astype(np.uint8)
    props = Proposals(boxes=[[0, 0, 10, 10]], image_size=(30, 20), image_id="i")
    out = model.describe(image, props)
    assert out.features.shape == (1, 8) and out.image_id == "i"
    with pytest.raises(ValueError, match=r"\[B, 3, H, W\]"):
        model(torch.zeros(3, 20, 30), [props])


def test_detectron2_missing_message() -> None:
    try:
        import detectron2  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("detectron2 is installed here")
    with pytest.raises(MissingDependencyError, match="detectron2 is not installed.*not on PyPI"):
        require_detectron2()
    import detectors

    with pytest.raises(MissingDependencyError, match="install it from source"):
        detectors.load("detectron2", ".", config_file="c.yaml", weights="w.pkl")
    with pytest.raises(MissingDependencyError, match="detectron2 is not installed"):
        detectors.Detectron2Detector("c.yaml", "w.pkl")
