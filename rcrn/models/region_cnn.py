"""Region features from pixels: a small CNN with RoI pooling, trained with the model (its
weights are part of the model's state_dict).

RoI pooling is done with :func:`torch.nn.functional.grid_sample` (bilinear
sampling of ``output_size x output_size`` bins, ``sampling_ratio^2`` points per
bin, averaged), i.e. RoIAlign without torchvision.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from rcrn.structures import Proposals

__all__ = ["roi_align", "boxes_to_rois", "RegionCNN", "PixelRegions"]


def boxes_to_rois(boxes: Sequence[Tensor | np.ndarray] | Tensor,
                  device: torch.device | None = None) -> Tensor:
    """Boxes of a batch as one ``[K, 5]`` tensor of ``(image index, x1, y1, x2, y2)``.

    Args:
        boxes: a list with one ``[n_i, 4]`` array/tensor per image (or Proposals),
            or an already built ``[K, 5]`` tensor (returned as is).
        device: the device of the result.
    """
    if isinstance(boxes, Tensor):
        if boxes.ndim != 2 or boxes.shape[1] != 5:
            raise ValueError(f"rois must be [K, 5] (image index, x1, y1, x2, y2), got "
                             f"{list(boxes.shape)}")
        return boxes if device is None else boxes.to(device)
    parts = []
    for i, b in enumerate(boxes):
        if isinstance(b, Proposals):
            b = b.boxes
        t = torch.as_tensor(np.asarray(b, dtype=np.float32) if not isinstance(b, Tensor) else b,
                            dtype=torch.float32, device=device).reshape(-1, 4)
        parts.append(torch.cat([torch.full((len(t), 1), float(i), device=t.device), t], dim=1))
    if not parts:
        return torch.zeros(0, 5, device=device)
    return torch.cat(parts, dim=0)


def roi_align(features: Tensor, rois: Tensor, output_size: int = 4, spatial_scale: float = 1.0,
              sampling_ratio: int = 2) -> Tensor:
    """Pool a feature map over boxes (RoIAlign with pixel-centre alignment).

    A box covers continuous coordinates ``[x1, x2) x [y1, y2)`` of the input image;
    it is scaled by ``spatial_scale`` onto the feature map, split into
    ``output_size^2`` bins, each the mean of ``sampling_ratio^2`` bilinear samples.
    Samples outside the map read zeros.

    Args:
        features: ``[B, C, H, W]``.
        rois: ``[K, 5]`` rows ``(image index, x1, y1, x2, y2)`` in input pixels.
        output_size: bins per side ``S``.
        spatial_scale: feature-map size / input size (e.g. 1/4 for stride 4).
        sampling_ratio: samples per bin side.

    Returns:
        ``[K, C, S, S]``, differentiable w.r.t. ``features``.
    """
    b, c, h, w = features.shape
    k = rois.shape[0]
    s, r = int(output_size), int(sampling_ratio)
    p = s * r
    if k == 0:
        return features.new_zeros(0, c, s, s)
    rois = rois.to(features.dtype)
    idx = rois[:, 0].long()
    if (idx < 0).any() or (idx >= b).any():
        raise ValueError(f"roi image indices must lie in [0, {b})")
    x1, y1, x2, y2 = (rois[:, j] * spatial_scale for j in range(1, 5))
    steps = (torch.arange(p, device=features.device, dtype=features.dtype) + 0.5) / p
    xs = x1[:, None] + (x2 - x1)[:, None] * steps[None, :]  # [K, P]
    ys = y1[:, None] + (y2 - y1)[:, None] * steps[None, :]
    gx = 2.0 * xs / w - 1.0
    gy = 2.0 * ys / h - 1.0
    grid = torch.stack([gx[:, None, :].expand(k, p, p), gy[:, :, None].expand(k, p, p)], dim=-1)
    # group the rois by image: one grid_sample call over the batch, padded to the largest group
    counts = torch.bincount(idx, minlength=b)
    m = int(counts.max())
    order = torch.argsort(idx, stable=True)
    starts = torch.cumsum(counts, 0) - counts
    slot = torch.empty_like(idx)
    slot[order] = torch.arange(k, device=idx.device) - starts[idx[order]]
    padded = grid.new_full((b, m, p, p, 2), -2.0)
    padded[idx, slot] = grid
    sampled = F.grid_sample(features, padded.reshape(b, m * p, p, 2), mode="bilinear",
                            padding_mode="zeros", align_corners=False)  # [B, C, m*P, P]
    sampled = sampled.reshape(b, c, m, p, p).permute(0, 2, 1, 3, 4)[idx, slot]  # [K, C, P, P]
    return F.avg_pool2d(sampled, kernel_size=r) if r > 1 else sampled


class RegionCNN(nn.Module):
    """A small convolutional encoder giving one feature vector per box.

    ``images [B, 3, H, W]`` go through three 3x3 conv layers (strides ``strides``,
    default 1, 2, 2, so the map is 1/4 of the input), boxes are pooled with :func:`roi_align` into
    ``pool_size^2`` bins, and an MLP maps the pooled ``C * S * S`` values to
    ``out_dim``.  Everything is differentiable, so it trains with the model.

    Args:
        out_dim: size ``d`` of the region features.
        channels: channels of the three conv layers.
        pool_size: bins per side of the RoI pooling.
        sampling_ratio: bilinear samples per bin side.
        strides: strides of the three conv layers; ``(2, 2, 1)`` gives the same 1/4 map
            for about half the arithmetic.
    """

    def __init__(self, out_dim: int = 256, channels: tuple[int, int, int] = (16, 32, 32),
                 pool_size: int = 4, sampling_ratio: int = 2,
                 strides: tuple[int, int, int] = (1, 2, 2)) -> None:
        super().__init__()
        c1, c2, c3 = channels
        s1, s2, s3 = (int(s) for s in strides)
        self.stride = s1 * s2 * s3
        self.out_dim = int(out_dim)
        self.pool_size = int(pool_size)
        self.sampling_ratio = int(sampling_ratio)
        self.backbone = nn.Sequential(
            nn.Conv2d(3, c1, 3, stride=s1, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(c1, c2, 3, stride=s2, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(c2, c3, 3, stride=s3, padding=1), nn.ReLU(inplace=True),
        )
        self.head = nn.Sequential(
            nn.Flatten(), nn.Linear(c3 * self.pool_size ** 2, 2 * self.out_dim),
            nn.ReLU(inplace=True), nn.Linear(2 * self.out_dim, self.out_dim),
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Kaiming-uniform conv and linear weights, zero biases."""
        for module in self.modules():
            if isinstance(module, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_uniform_(module.weight, nonlinearity="relu")
                nn.init.zeros_(module.bias)

    def extra_repr(self) -> str:
        return (f"out_dim={self.out_dim}, pool_size={self.pool_size}, "
                f"sampling_ratio={self.sampling_ratio}, stride={self.stride}")

    def forward(self, images: Tensor,
                boxes: Sequence[Tensor | np.ndarray | Proposals] | Tensor) -> Tensor:
        """Per-box features.

        Args:
            images: ``[B, 3, H, W]``; uint8 images are scaled to [0, 1].
            boxes: one ``[n_i, 4]`` xyxy pixel box set (or Proposals) per image, or
                ``[K, 5]`` rois ``(image index, x1, y1, x2, y2)``.

        Returns:
            ``[K, out_dim]`` with ``K = sum(n_i)``, boxes in batch order.
        """
        if images.ndim != 4 or images.shape[1] != 3:
            raise ValueError(f"images must be [B, 3, H, W], got {list(images.shape)}")
        if not images.is_floating_point():
            images = images.float() / 255.0
        rois = boxes_to_rois(boxes, device=images.device)
        fmap = self.backbone(images)
        scale = fmap.shape[-1] / images.shape[-1]
        pooled = roi_align(fmap, rois, self.pool_size, scale, self.sampling_ratio)
        if pooled.shape[0] == 0:
            return fmap.new_zeros(0, self.out_dim)
        return self.head(pooled)

    @torch.no_grad()
    def describe(self, image: np.ndarray | Tensor, proposals: Proposals) -> Proposals:
        """A copy of ``proposals`` with features computed from ``image`` ``[H, W, 3]``."""
        arr = torch.as_tensor(np.asarray(image)).permute(2, 0, 1)[None]
        param = next(self.parameters())
        feats = self(arr.to(param.device), [proposals.boxes]).cpu().numpy()
        return Proposals(boxes=proposals.boxes, image_size=proposals.image_size,
                         scores=proposals.scores, labels=proposals.labels, features=feats,
                         image_id=proposals.image_id)


class PixelRegions(nn.Module):
    """Region features from pixels: ``(images [U,3,H,W], image_index [B], boxes_px [B,N,4])
    -> [B,N,D]``; each distinct image goes through the encoder once.

    Wraps a per-box encoder taking ``[K, 5]`` rois (:class:`RegionCNN`).  Items that
    share an image and its boxes (the expressions of one scene, which training batches
    together) are pooled once: a batch of 64 items holds about 12 distinct box sets on
    the synthetic benchmark, so RoI pooling and the head run on a fifth of the boxes.
    """

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, images: torch.Tensor, image_index: torch.Tensor,
                boxes_px: torch.Tensor) -> torch.Tensor:
        B, N, _ = boxes_px.shape
        index = image_index.to(boxes_px.dtype)
        items = torch.cat([index[:, None], boxes_px.reshape(B, N * 4)], 1)
        distinct, inverse = torch.unique(items, dim=0, return_inverse=True)
        U = distinct.shape[0]
        rois = torch.cat([distinct[:, :1].repeat_interleave(N, 0),
                          distinct[:, 1:].reshape(U * N, 4)], 1)
        return self.encoder(images, rois).reshape(U, N, -1)[inverse]
