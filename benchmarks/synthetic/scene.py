"""Scene vocabulary and layout sampling for the synthetic benchmark.

A scene is 3-10 flat shapes on a uniform background.  Every object has a shape,
a colour and a size class; objects never touch (a gap of at least
:attr:`Geometry.min_gap` pixels separates their boxes), so a connected-components
pass over the non-background pixels finds each object exactly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SHAPES",
    "COLORS",
    "SIZES",
    "BACKGROUND",
    "Geometry",
    "SceneObject",
    "Placement",
    "sample_layout",
]

#: Shape names; each is also the head noun of its entity phrases.
SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "diamond", "cross")

#: Colour names and their RGB values, well apart from each other and from the background.
COLORS: dict[str, tuple[int, int, int]] = {
    "red": (215, 35, 35),
    "green": (35, 155, 55),
    "blue": (35, 80, 215),
    "yellow": (240, 205, 25),
    "purple": (135, 55, 185),
    "orange": (245, 125, 20),
    "cyan": (25, 190, 205),
}

#: Size classes and their side length as a fraction of the image side.
SIZES: dict[str, float] = {"small": 0.09, "large": 0.17}

#: Uniform background colour (light grey).
BACKGROUND: tuple[int, int, int] = (232, 232, 232)


@dataclass(frozen=True)
class Geometry:
    """Pixel thresholds of one image size (all derived from the image side).

    Attributes:
        size: image side in pixels (images are square).
        sides: side length of each size class in pixels.
        min_gap: minimum gap between the boxes of two objects.
        margin: no-man's land of the directional relations (left / right / above / below).
        near_true: box distance up to which "near" holds.
        near_false: box distance from which "near" does not hold.
        far_false: box distance up to which "far from" does not hold.
        far_true: box distance from which "far from" holds.
        next_true: horizontal gap up to which two side-by-side objects are "next to" each other.
        next_false: horizontal gap from which they are not.
    """

    size: int
    sides: dict[str, int]
    min_gap: int
    margin: float
    near_true: float
    near_false: float
    far_false: float
    far_true: float
    next_true: float
    next_false: float

    @classmethod
    def for_size(cls, size: int) -> Geometry:
        """Thresholds for square images of side ``size`` (at least 64 pixels)."""
        if size < 64:
            raise ValueError(f"image size must be at least 64 pixels, got {size}")
        s = float(size)
        return cls(
            size=int(size),
            sides={name: int(round(frac * s)) for name, frac in SIZES.items()},
            min_gap=max(3, int(round(0.025 * s))),
            margin=max(3.0, round(0.03 * s)),
            near_true=round(0.12 * s),
            near_false=round(0.18 * s),
            far_false=round(0.28 * s),
            far_true=round(0.35 * s),
            next_true=round(0.08 * s),
            next_false=round(0.14 * s),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"size": self.size, "sides": dict(self.sides), "min_gap": self.min_gap,
                "margin": self.margin, "near_true": self.near_true,
                "near_false": self.near_false, "far_false": self.far_false,
                "far_true": self.far_true, "next_true": self.next_true,
                "next_false": self.next_false}


@dataclass
class SceneObject:
    """One rendered object.

    Attributes:
        shape: a name of :data:`SHAPES`.
        color: a name of :data:`COLORS`.
        size: a name of :data:`SIZES`.
        box: tight box of its pixels, ``x1, y1, x2, y2`` (continuous coordinates:
            a pixel column ``c`` spans ``[c, c + 1)``).
    """

    shape: str
    color: str
    size: str
    box: tuple[float, float, float, float]

    @property
    def center(self) -> tuple[float, float]:
        x1, y1, x2, y2 = self.box
        return (x1 + x2) / 2.0, (y1 + y2) / 2.0

    def describe(self) -> str:
        """``"small red circle"``."""
        return f"{self.size} {self.color} {self.shape}"

    def to_dict(self) -> dict[str, Any]:
        return {"shape": self.shape, "color": self.color, "size": self.size,
                "box": [float(v) for v in self.box]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SceneObject:
        """Read an object written by :meth:`to_dict`.

        Raises:
            ValueError: on an unknown attribute value or a malformed box.
        """
        shape, color, size = d["shape"], d["color"], d["size"]
        if shape not in SHAPES or color not in COLORS or size not in SIZES:
            raise ValueError(f"unknown object attributes {shape!r} / {color!r} / {size!r}")
        box = [float(v) for v in d["box"]]
        if len(box) != 4 or box[2] <= box[0] or box[3] <= box[1]:
            raise ValueError(f"malformed object box {d['box']!r}")
        return cls(shape=shape, color=color, size=size, box=(box[0], box[1], box[2], box[3]))


@dataclass(frozen=True)
class Placement:
    """Where an object is drawn before rasterisation: its square cell ``[x, x + side)``."""

    shape: str
    color: str
    size: str
    x: int
    y: int
    side: int


def _clear(x: int, y: int, side: int, placed: list[Placement], gap: int) -> bool:
    for p in placed:
        if (x < p.x + p.side + gap and p.x < x + side + gap
                and y < p.y + p.side + gap and p.y < y + side + gap):
            return False
    return True


def sample_layout(rng: random.Random, geometry: Geometry, min_objects: int = 3,
                  max_objects: int = 10, adjacent_rate: float = 0.35) -> list[Placement]:
    """Sample attributes and non-touching positions of the objects of one scene.

    Args:
        rng: the scene's random generator.
        geometry: pixel thresholds of the image size.
        min_objects: fewest objects of a scene.
        max_objects: most objects of a scene.
        adjacent_rate: chance to place a new object side by side with an earlier one
            (so that "next to" and "near" occur often enough).

    Returns:
        The placements; at least ``min_objects`` of them.
    """
    if not 1 <= min_objects <= max_objects:
        raise ValueError(f"need 1 <= min_objects <= max_objects, got {min_objects}, {max_objects}")
    size = geometry.size
    border = 2
    while True:
        wanted = rng.randint(min_objects, max_objects)
        placed: list[Placement] = []
        for _ in range(wanted):
            shape = rng.choice(SHAPES)
            color = rng.choice(list(COLORS))
            size_name = rng.choice(list(SIZES))
            side = geometry.sides[size_name]
            for _attempt in range(60):
                if placed and rng.random() < adjacent_rate:
                    anchor = rng.choice(placed)
                    gap = rng.randint(geometry.min_gap, int(geometry.next_true))
                    x = (anchor.x + anchor.side + gap if rng.random() < 0.5
                         else anchor.x - gap - side)
                    low = anchor.y + anchor.side // 2 - side
                    high = anchor.y + anchor.side // 2
                    y = rng.randint(min(low, high), max(low, high))
                else:
                    x = rng.randint(border, size - border - side)
                    y = rng.randint(border, size - border - side)
                if (border <= x <= size - border - side and border <= y <= size - border - side
                        and _clear(x, y, side, placed, geometry.min_gap)):
                    placed.append(Placement(shape, color, size_name, x, y, side))
                    break
        if len(placed) >= min_objects:
            return placed
