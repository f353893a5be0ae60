"""Drawing synthetic scenes with PIL.

Shapes are drawn without anti-aliasing into an RGB image and, with the same
calls, into a label map (object ``i`` has label ``i + 1``).  Boxes are read back
from the label map, so they are the tight boxes of the pixels a detector sees.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

from benchmarks.synthetic.scene import BACKGROUND, COLORS, Placement, SceneObject

__all__ = ["draw_shape", "render_scene"]


def draw_shape(draw: ImageDraw.ImageDraw, shape: str, x: int, y: int, side: int,
               fill: int | tuple[int, int, int]) -> None:
    """Draw a filled ``shape`` inside the square cell of columns/rows ``[x, x + side)``.

    Args:
        draw: the drawing context.
        shape: one of ``circle``, ``square``, ``triangle``, ``diamond``, ``cross``.
        x: left column of the cell.
        y: top row of the cell.
        side: side of the cell in pixels.
        fill: colour (RGB tuple) or label value.

    Raises:
        ValueError: for an unknown shape.
    """
    x1, y1 = x + side - 1, y + side - 1
    cx, cy = (x + x1) / 2.0, (y + y1) / 2.0
    if shape == "circle":
        draw.ellipse([x, y, x1, y1], fill=fill)
    elif shape == "square":
        draw.rectangle([x, y, x1, y1], fill=fill)
    elif shape == "triangle":
        draw.polygon([(x, y1), (x1, y1), (cx, y)], fill=fill)
    elif shape == "diamond":
        draw.polygon([(cx, y), (x1, cy), (cx, y1), (x, cy)], fill=fill)
    elif shape == "cross":
        arm = max(1.0, side / 6.0)
        draw.rectangle([x, round(cy - arm), x1, round(cy + arm)], fill=fill)
        draw.rectangle([round(cx - arm), y, round(cx + arm), y1], fill=fill)
    else:
        raise ValueError(f"unknown shape {shape!r}")


def render_scene(placements: Sequence[Placement], size: int
                 ) -> tuple[Image.Image, list[SceneObject]]:
    """Render placements into an RGB image and measure the tight box of every object.

    Args:
        placements: the objects to draw, in order.
        size: image side in pixels.

    Returns:
        ``(image, objects)``: the ``size x size`` RGB image and one
        :class:`SceneObject` per placement, in the same order.
    """
    image = Image.new("RGB", (size, size), BACKGROUND)
    labels = Image.new("L", (size, size), 0)
    draw_rgb = ImageDraw.Draw(image)
    draw_label = ImageDraw.Draw(labels)
    for i, p in enumerate(placements):
        draw_shape(draw_rgb, p.shape, p.x, p.y, p.side, COLORS[p.color])
        draw_shape(draw_label, p.shape, p.x, p.y, p.side, i + 1)
    label_map = np.asarray(labels)
    objects = []
    for i, p in enumerate(placements):
        # Each object stays inside its cell, so only the cell needs looking at.
        cell = label_map[p.y:p.y + p.side, p.x:p.x + p.side] == i + 1
        rows = np.flatnonzero(cell.any(axis=1))
        cols = np.flatnonzero(cell.any(axis=0))
        box = (float(p.x + cols[0]), float(p.y + rows[0]),
               float(p.x + cols[-1] + 1), float(p.y + rows[-1] + 1))
        objects.append(SceneObject(shape=p.shape, color=p.color, size=p.size, box=box))
    return image, objects
