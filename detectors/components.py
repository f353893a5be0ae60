"""A live detector for synthetic scenes: connected components on a uniform background.

The background colour is the most common colour of the image border.  Every
other pixel belongs to a region; regions are 4- or 8-connected runs of pixels
of one colour (or, with ``split_colours=False``, of any non-background colour).
Labelling works on horizontal runs of equal pixels joined by a union-find, in
numpy plus a short Python loop over run pairs: a 128 x 128 scene takes about a
millisecond.

To imitate a real detector the output can be perturbed reproducibly (seeded by
``seed`` and the image id): box jitter, missed objects and spurious boxes.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import BaseSource, make_proposals, register
from detectors.errors import DetectorDataError
from detectors.readers._common import require_file
from rcrn.structures import Proposals

__all__ = ["ComponentsDetector", "ImageFolderDetections", "label_components", "find_components",
           "as_rgb_array", "border_background", "DESCRIPTOR_NAMES"]

#: Names of the values of the optional hand-made region descriptor (``describe=True``).
DESCRIPTOR_NAMES = ("red", "green", "blue", "x1", "y1", "x2", "y2", "width", "height", "fill")

_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm"}


def as_rgb_array(image: Any) -> np.ndarray:
    """An image (PIL image, ``[H, W]`` or ``[H, W, 3|4]`` array) as ``uint8 [H, W, 3]``."""
    if hasattr(image, "convert") and hasattr(image, "size"):
        image = np.asarray(image.convert("RGB"))
    arr = np.asarray(image)
    if arr.ndim == 2:
        arr = np.repeat(arr[:, :, None], 3, axis=2)
    if arr.ndim != 3 or arr.shape[2] not in (3, 4) or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise DetectorDataError(f"expected an image [H, W, 3], got shape {list(arr.shape)}")
    arr = arr[:, :, :3]
    if arr.dtype != np.uint8:
        if arr.dtype.kind == "f" and arr.size and float(np.nanmax(arr)) <= 1.0:
            arr = arr * 255.0
        arr = np.clip(np.nan_to_num(arr), 0, 255).round().astype(np.uint8)
    return np.ascontiguousarray(arr)


def _codes(rgb: np.ndarray) -> np.ndarray:
    rgb = rgb.astype(np.int32)
    return (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]


def border_background(rgb: np.ndarray) -> tuple[int, int, int]:
    """The most common colour of the image border (ties: the smallest colour code)."""
    codes = _codes(rgb)
    border = np.concatenate([codes[0], codes[-1], codes[:, 0], codes[:, -1]])
    values, counts = np.unique(border, return_counts=True)
    code = int(values[counts.argmax()])
    return (code >> 16) & 255, (code >> 8) & 255, code & 255


class _Runs:
    """Horizontal runs of equal values, excluding the background value."""

    def __init__(self, values: np.ndarray, background: int) -> None:
        h, w = values.shape
        change = np.ones((h, w), dtype=bool)
        change[:, 1:] = values[:, 1:] != values[:, :-1]
        run_of_pixel = np.cumsum(change.reshape(-1)).reshape(h, w) - 1
        rows, starts = np.nonzero(change)
        ends = np.empty_like(starts)
        ends[:-1] = starts[1:]
        ends[-1] = w
        ends[:-1][rows[1:] != rows[:-1]] = w
        vals = values[rows, starts]
        self.foreground = vals != background
        self.rows, self.starts, self.ends, self.values = rows, starts, ends, vals
        self.of_pixel = run_of_pixel

    def links(self, values: np.ndarray, background: int, connectivity: int) -> np.ndarray:
        """Pairs of run indices that touch in consecutive rows with equal values."""
        pairs = []
        up, down = values[:-1], values[1:]
        rid_up, rid_down = self.of_pixel[:-1], self.of_pixel[1:]
        same = (up == down) & (up != background)
        pairs.append(np.stack([rid_up[same], rid_down[same]], axis=1))
        if connectivity == 8:
            diag = (up[:, :-1] == down[:, 1:]) & (up[:, :-1] != background)
            pairs.append(np.stack([rid_up[:, :-1][diag], rid_down[:, 1:][diag]], axis=1))
            anti = (up[:, 1:] == down[:, :-1]) & (up[:, 1:] != background)
            pairs.append(np.stack([rid_up[:, 1:][anti], rid_down[:, :-1][anti]], axis=1))
        allpairs = np.concatenate(pairs, axis=0)
        if len(allpairs) == 0:
            return allpairs.reshape(0, 2)
        return np.unique(allpairs, axis=0)


def _union_find(n: int, pairs: np.ndarray) -> np.ndarray:
    parent = list(range(n))

    def find(i: int) -> int:
        root = i
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:
            parent[i], i = root, parent[i]
        return root

    for a, b in pairs.tolist():
        ra, rb = find(a), find(b)
        if ra != rb:
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb
    return np.asarray([find(i) for i in range(n)], dtype=np.int64)


def _components(values: np.ndarray, background: int,
                connectivity: int) -> tuple[_Runs, np.ndarray, np.ndarray]:
    if connectivity not in (4, 8):
        raise ValueError(f"connectivity must be 4 or 8, got {connectivity}")
    runs = _Runs(values, background)
    root = _union_find(len(runs.rows), runs.links(values, background, connectivity))
    fg_roots = np.unique(root[runs.foreground])  # sorted = raster order of first pixel
    comp = np.full(len(root), -1, dtype=np.int64)
    comp[runs.foreground] = np.searchsorted(fg_roots, root[runs.foreground])
    return runs, comp, fg_roots


def label_components(image: Any, connectivity: int = 4, background: Any = None,
                     split_colours: bool = True, tolerance: int = 0) -> tuple[np.ndarray, int]:
    """Label map of the connected regions of an image.

    Args:
        image: a PIL image, an RGB array ``[H, W, 3]`` or a 2-d array (any values;
            with a 2-d boolean mask, ``False`` is the background).
        connectivity: 4 or 8.
        background: the background value (an RGB triple for images); default: the most
            common border colour (``False`` for boolean masks).
        split_colours: regions are single-coloured (else any non-background pixels).
        tolerance: pixels within this per-channel distance of the background are background.

    Returns:
        ``(labels [H, W] int32, count)``; 0 is background, regions are ``1..count`` in
        raster order of their first pixel.
    """
    values, bg = _values(image, background, split_colours, tolerance)
    runs, comp, roots = _components(values, bg, connectivity)
    labels = (comp + 1)[runs.of_pixel].astype(np.int32)
    return labels, len(roots)


def _values(image: Any, background: Any, split_colours: bool,
            tolerance: int) -> tuple[np.ndarray, int]:
    arr = np.asarray(image) if not hasattr(image, "convert") else None
    if arr is not None and arr.ndim == 2 and arr.dtype == bool:
        return arr.astype(np.int32), 0 if background is None else int(bool(background))
    rgb = as_rgb_array(image)
    bg_rgb = border_background(rgb) if background is None else tuple(int(v) for v in background)
    if len(bg_rgb) != 3:
        raise ValueError(f"background must be an RGB triple, got {background!r}")
    values = _codes(rgb)
    bg = (bg_rgb[0] << 16) | (bg_rgb[1] << 8) | bg_rgb[2]
    if tolerance > 0:
        near = (np.abs(rgb.astype(np.int32) - np.asarray(bg_rgb)) <= tolerance).all(axis=2)
        values = np.where(near, bg, values)
    if not split_colours:
        values = (values != bg).astype(np.int32)
        bg = 0
    return values, bg


def find_components(image: Any, connectivity: int = 4, background: Any = None,
                    split_colours: bool = True, tolerance: int = 0,
                    min_area: int = 1) -> dict[str, np.ndarray]:
    """Boxes of the connected regions of an image.

    Boxes follow the continuous convention: a region covering pixel columns
    ``c0..c1`` gets ``x1 = c0, x2 = c1 + 1``.

    Returns:
        dict with ``boxes`` ``[k, 4]`` float32, ``areas`` ``[k]`` (pixels), ``values``
        ``[k]`` (the colour code ``r << 16 | g << 8 | b`` of each region, or 1 with
        ``split_colours=False``), in raster order of each region's first pixel.
    """
    values, bg = _values(image, background, split_colours, tolerance)
    runs, comp, roots = _components(values, bg, connectivity)
    k = len(roots)
    fg = comp >= 0
    c, rows = comp[fg], runs.rows[fg]
    starts, ends = runs.starts[fg], runs.ends[fg]
    x1 = np.full(k, np.iinfo(np.int64).max)
    y1 = np.full(k, np.iinfo(np.int64).max)
    x2 = np.full(k, -1)
    y2 = np.full(k, -1)
    area = np.zeros(k, dtype=np.int64)
    np.minimum.at(x1, c, starts)
    np.minimum.at(y1, c, rows)
    np.maximum.at(x2, c, ends)
    np.maximum.at(y2, c, rows + 1)
    np.add.at(area, c, ends - starts)
    vals = np.zeros(k, dtype=np.int64)
    vals[c] = runs.values[fg]
    boxes = np.stack([x1, y1, x2, y2], axis=1).astype(np.float32).reshape(-1, 4)
    keep = area >= min_area
    return {"boxes": boxes[keep], "areas": area[keep], "values": vals[keep]}


class ComponentsDetector:
    """Detect the coloured shapes of a scene with a uniform background.

    Args:
        connectivity: 4 or 8.
        background: an RGB triple; default: the most common border colour.
        split_colours: one region per connected single-colour area (touching shapes of
            different colours stay apart); ``False`` joins any touching foreground.
        tolerance: per-channel distance within which a pixel counts as background.
        min_area: drop regions with fewer pixels.
        describe: attach a 10-d hand-made descriptor per box as features (mean colour
            in [0, 1], normalised box, normalised width and height, fill ratio; see
            :data:`DESCRIPTOR_NAMES`).
        jitter: standard deviation of box-corner noise, as a fraction of box size.
        miss_rate: probability of dropping each detected box.
        spurious: number of random boxes added per image.
        seed: seed of the perturbations (combined with the image id).

    Labels are the region colours as ``#rrggbb`` (``"spurious"`` for added boxes);
    scores are the fill ratio of each box (1 for rectangles, ~0.79 for discs) and
    a low random value for spurious boxes.
    """

    def __init__(self, connectivity: int = 4, background: Any = None, split_colours: bool = True,
                 tolerance: int = 0, min_area: int = 1, describe: bool = False,
                 jitter: float = 0.0, miss_rate: float = 0.0, spurious: int = 0,
                 seed: int = 0) -> None:
        if connectivity not in (4, 8):
            raise ValueError(f"connectivity must be 4 or 8, got {connectivity}")
        if not 0.0 <= miss_rate <= 1.0:
            raise ValueError(f"miss_rate must be in [0, 1], got {miss_rate}")
        if jitter < 0 or spurious < 0:
            raise ValueError("jitter and spurious must be >= 0")
        self.connectivity = connectivity
        self.background = background
        self.split_colours = split_colours
        self.tolerance = int(tolerance)
        self.min_area = int(min_area)
        self.describe = bool(describe)
        self.jitter = float(jitter)
        self.miss_rate = float(miss_rate)
        self.spurious = int(spurious)
        self.seed = int(seed)

    def __repr__(self) -> str:
        return (f"ComponentsDetector(connectivity={self.connectivity}, "
                f"split_colours={self.split_colours}, min_area={self.min_area}, "
                f"jitter={self.jitter}, miss_rate={self.miss_rate}, spurious={self.spurious}, "
                f"seed={self.seed})")

    def __call__(self, image: Any, image_id: str = "") -> Proposals:
        """Proposals of one image (a PIL image or an RGB array)."""
        rgb = as_rgb_array(image)
        h, w = rgb.shape[:2]
        found = find_components(rgb, self.connectivity, self.background, self.split_colours,
                                self.tolerance, self.min_area)
        boxes, areas, values = found["boxes"], found["areas"], found["values"]
        box_area = np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1)
        scores = (areas / box_area).astype(np.float32)
        if self.split_colours:
            labels = [f"#{int(v):06x}" for v in values]
        else:
            labels = ["object"] * len(boxes)
        if self.jitter or self.miss_rate or self.spurious:
            rng = np.random.default_rng([self.seed, zlib.crc32(str(image_id).encode())])
            boxes, scores, labels = self._perturb(rng, boxes, scores, labels, (w, h))
        features = self._describe(rgb, boxes) if self.describe else None
        return make_proposals(f"components detector, image {image_id!r}", boxes=boxes,
                              image_size=(w, h), scores=scores, labels=labels,
                              features=features, image_id=str(image_id))

    detect = __call__

    def _perturb(self, rng: np.random.Generator, boxes: np.ndarray, scores: np.ndarray,
                 labels: list[str], size: tuple[int, int]
                 ) -> tuple[np.ndarray, np.ndarray, list[str]]:
        w, h = size
        keep = rng.random(len(boxes)) >= self.miss_rate
        boxes, scores = boxes[keep], scores[keep]
        labels = [lab for lab, k in zip(labels, keep) if k]
        if self.jitter and len(boxes):
            wh = np.concatenate([boxes[:, 2:] - boxes[:, :2]] * 2, axis=1)
            boxes = boxes + rng.normal(0.0, self.jitter, boxes.shape) * wh
        if self.spurious:
            sw = rng.uniform(0.05, 0.5, self.spurious) * w
            sh = rng.uniform(0.05, 0.5, self.spurious) * h
            x = rng.uniform(0, 1, self.spurious) * (w - sw)
            y = rng.uniform(0, 1, self.spurious) * (h - sh)
            extra = np.stack([x, y, x + sw, y + sh], axis=1)
            boxes = np.concatenate([boxes, extra], axis=0)
            scores = np.concatenate([scores, rng.uniform(0.05, 0.5, self.spurious)])
            labels = labels + ["spurious"] * self.spurious
        boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
        boxes[:, 0::2] = boxes[:, 0::2].clip(0, w)
        boxes[:, 1::2] = boxes[:, 1::2].clip(0, h)
        x = np.sort(boxes[:, 0::2], axis=1)
        y = np.sort(boxes[:, 1::2], axis=1)
        boxes = np.stack([x[:, 0], y[:, 0], x[:, 1], y[:, 1]], axis=1)
        return boxes, scores.astype(np.float32), labels

    def _describe(self, rgb: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        h, w = rgb.shape[:2]
        bg = np.asarray(border_background(rgb) if self.background is None else self.background)
        out = np.zeros((len(boxes), len(DESCRIPTOR_NAMES)), dtype=np.float32)
        for i, (x1, y1, x2, y2) in enumerate(boxes):
            c0, r0 = int(np.floor(x1)), int(np.floor(y1))
            c1, r1 = max(int(np.ceil(x2)), c0 + 1), max(int(np.ceil(y2)), r0 + 1)
            crop = rgb[r0:r1, c0:c1].reshape(-1, 3)
            fg = crop[(np.abs(crop.astype(np.int32) - bg) > self.tolerance).any(axis=1)]
            if len(fg):
                out[i, :3] = fg.mean(axis=0) / 255.0
            out[i, 3:7] = [x1 / w, y1 / h, x2 / w, y2 / h]
            out[i, 7:9] = [(x2 - x1) / w, (y2 - y1) / h]
            out[i, 9] = len(fg) / max(len(crop), 1)
        return out


class ImageFolderSource(BaseSource):
    """A live detector (``rgb array -> Proposals``) run over the images of a folder.

    Image ids are the file stems.

    Args:
        path: the image folder.
        detector: called as ``detector(rgb, image_id=...)``.
    """

    def __init__(self, path: str | Path, detector: Any) -> None:
        root = require_file(path, "image folder")
        if not root.is_dir():
            raise DetectorDataError(f"{root}: expected a folder of images")
        self.location = str(root)
        self.files = {p.stem: p for p in sorted(root.iterdir())
                      if p.suffix.lower() in _IMAGE_SUFFIXES}
        self.detector = detector

    def image_ids(self) -> list[str]:
        return list(self.files)

    def _id_set(self) -> dict[str, Path]:
        return self.files

    def _get(self, image_id: str) -> Proposals:
        from PIL import Image, UnidentifiedImageError

        path = self.files[image_id]
        try:
            with Image.open(path) as im:
                rgb = as_rgb_array(im)
        except (OSError, UnidentifiedImageError) as exc:
            raise DetectorDataError(f"{path}: not a readable image ({exc})") from None
        return self.detector(rgb, image_id=image_id)


@register("components", "connected components of the images of a folder (synthetic scenes)")
class ImageFolderDetections(ImageFolderSource):
    """Run :class:`ComponentsDetector` over the images of a folder (ids = file stems).

    Args:
        path: the image folder.
        **options: options of :class:`ComponentsDetector`.
    """

    name = "components"

    def __init__(self, path: str | Path, **options: Any) -> None:
        super().__init__(path, ComponentsDetector(**options))
