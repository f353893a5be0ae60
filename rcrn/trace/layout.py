"""Shared pieces of the trace renderers: graph layout, image loading, colours."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rcrn.trace.data import Trace

__all__ = ["tree_layout", "graph_layout", "load_image", "belief_colour", "node_order", "box_labels",
           "LABEL_CHAR", "LABEL_LINE"]

# a label is one line of monospace text: each character LABEL_CHAR font sizes wide, the line
# LABEL_LINE font sizes high (padding included)
LABEL_CHAR = 0.62
LABEL_LINE = 1.3


def tree_layout(num_nodes: int, root: int, edges: list[tuple[int, int, int]]
                ) -> tuple[dict[int, tuple[float, float]], dict[int, tuple[float, float]]]:
    """Positions of the entities and of the relation boxes of a tree in the unit square.

    The tree is drawn top-down from the root: leaves get evenly spaced x in
    depth-first order, a parent sits above the middle of its children, and
    each relation box sits halfway between its two entities.

    Args:
        num_nodes: the entities.
        root: the root entity.
        edges: ``(parent, child, relation index)`` of every tree edge.

    Returns:
        ``({node: (x, y)}, {relation: (x, y)})`` with y = 1 at the top.
    """
    children: dict[int, list[int]] = {i: [] for i in range(num_nodes)}
    for parent, child, _ in edges:
        children[parent].append(child)
    depth = {root: 0}
    leaves: list[int] = []

    def collect(v: int) -> None:
        if not children[v]:
            leaves.append(v)
        for c in children[v]:
            depth[c] = depth[v] + 1
            collect(c)

    collect(root)
    xs: dict[int, float] = {}
    for i, v in enumerate(leaves):
        xs[v] = (i + 0.5) / len(leaves)

    def place(v: int) -> float:
        if v not in xs:
            xs[v] = float(np.mean([place(c) for c in children[v]]))
        return xs[v]

    place(root)
    levels = max(depth.values()) + 1 if depth else 1
    nodes = {}
    for v in range(num_nodes):
        d = depth.get(v, 0)
        nodes[v] = (xs.get(v, 0.5), 1.0 - (d + 0.5) / levels)
    relations = {}
    for parent, child, relation in edges:
        (x0, y0), (x1, y1) = nodes[parent], nodes[child]
        relations[relation] = ((x0 + x1) / 2, (y0 + y1) / 2)
    return nodes, relations


def graph_layout(trace: Trace) -> tuple[dict[int, tuple[float, float]],
                                        dict[int, tuple[float, float]]]:
    """:func:`tree_layout` of a trace's graph."""
    return tree_layout(trace.num_nodes, trace.root,
                       [(e.parent, e.child, e.relation) for e in trace.edges])


def node_order(trace: Trace) -> list[int]:
    """Entities in breadth-first order from the root (the root first)."""
    children: dict[int, list[int]] = {i: [] for i in range(trace.num_nodes)}
    for e in trace.edges:
        children[e.parent].append(e.child)
    order, queue = [], [trace.root]
    while queue:
        v = queue.pop(0)
        order.append(v)
        queue.extend(children[v])
    order.extend(v for v in range(trace.num_nodes) if v not in order)
    return order


def load_image(trace: Trace, max_side: int | None = None) -> tuple[np.ndarray, bool]:
    """The item's image as ``[H, W, 3]`` uint8, or a blank canvas of the image size.

    Args:
        trace: the trace naming ``image_path`` and ``image_size``.
        max_side: shrink the picture so that its longer side is at most this.

    Returns:
        ``(pixels, found)``; ``found`` is False for the blank canvas.
    """
    from PIL import Image

    W, H = trace.image_size
    image = None
    if trace.image_path and Path(trace.image_path).is_file():
        try:
            with Image.open(trace.image_path) as im:
                image = im.convert("RGB")
                image.load()
        except OSError:
            image = None
    found = image is not None
    if image is None:
        image = Image.new("RGB", (max(1, W), max(1, H)), (246, 246, 246))
    if max_side and max(image.size) > max_side:
        scale = max_side / max(image.size)
        image = image.resize((max(1, round(image.size[0] * scale)),
                              max(1, round(image.size[1] * scale))), Image.BILINEAR)
    return np.asarray(image), found


def belief_colour(value: float) -> tuple[float, float, float]:
    """RGB in [0, 1] for a belief in [0, 1]: pale yellow (low) to dark red (high)."""
    stops = np.array([[1.00, 0.93, 0.55], [0.99, 0.62, 0.20], [0.89, 0.20, 0.11],
                      [0.55, 0.00, 0.15]])
    v = float(np.clip(value, 0.0, 1.0)) * (len(stops) - 1)
    i = min(int(v), len(stops) - 2)
    t = v - i
    r, g, b = (1 - t) * stops[i] + t * stops[i + 1]
    return float(r), float(g), float(b)


def box_labels(boxes: list[list[float]], pairs: list[tuple[int, float]],
               bounds: tuple[float, float, float, float], font: float) -> list[dict]:
    """Where to write the label of each drawn box: outside it and clear of the other labels.

    A box's label is its proposal index and belief, ``"5:0.83"``, the ``proposal:belief``
    form of the trace's tables, so the picture, the title and the tables name a box by the
    same number. Labels are placed best box first, each at the first of eight spots around
    its box (above, below, then beside it) that overlaps no label placed before it, nor
    its own box, nor, where it can, the other drawn boxes.

    Args:
        boxes: every proposal's ``[x0, y0, x1, y1]``, y downwards.
        pairs: the drawn ``(proposal, belief)`` pairs, best first.
        bounds: ``(x0, y0, x1, y1)`` that every label stays inside (the picture).
        font: the font size, in the units of ``boxes``.

    Returns:
        One ``{"proposal", "text", "x", "y", "w", "h"}`` per pair: the label's text and
        its rectangle (top-left corner and size).
    """
    bx0, by0, bx1, by1 = bounds
    gap = 0.2 * font
    drawn = [boxes[p] for p, _ in pairs]
    placed: list[tuple[float, float, float, float]] = []
    out = []
    for (p, v), box in zip(pairs, drawn):
        text = f"{p}:{v:.2f}"
        w, h = LABEL_CHAR * font * len(text) + gap, LABEL_LINE * font
        x0, y0, x1, y1 = box
        spots = [(x0, y0 - h - gap), (x1 - w, y0 - h - gap), (x0, y1 + gap), (x1 - w, y1 + gap),
                 (x0 - w - gap, y0), (x1 + gap, y0), (x0 - w - gap, y1 - h), (x1 + gap, y1 - h)]
        best, best_cost = None, float("inf")
        for x, y in spots:
            x = min(max(x, bx0), max(bx0, bx1 - w))
            y = min(max(y, by0), max(by0, by1 - h))
            rect = (x, y, x + w, y + h)
            cost = (100 * sum(_overlap(rect, q) for q in placed) + 10 * _overlap(rect, box)
                    + sum(_overlap(rect, b) for b in drawn if b is not box)) / (w * h)
            if cost < best_cost - 1e-9:
                best, best_cost = rect, cost
        assert best is not None
        placed.append(best)
        out.append({"proposal": p, "text": text, "x": best[0], "y": best[1], "w": w, "h": h})
    return out


def _overlap(a: tuple[float, ...] | list[float], b: tuple[float, ...] | list[float]) -> float:
    """The area two ``(x0, y0, x1, y1)`` rectangles share."""
    return (max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
            * max(0.0, min(a[3], b[3]) - max(a[1], b[1])))
