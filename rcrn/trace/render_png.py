"""A PNG picture of one trace (matplotlib, Agg backend).

Left: one row per phrase, one column per propagation stage (local, bottom-up,
top-down); every cell shows the image with the phrase's top-K boxes coloured
by belief, so the local and the propagated correspondence maps sit side by
side.  Right: the language graph with entities as ellipses, relations as
rectangles, the confidences of every node, the Compare score ``d`` of every
relation and the blamed relation highlighted.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from rcrn.trace.data import BeliefTrace, Trace
from rcrn.trace.layout import belief_colour, box_labels, graph_layout, load_image, node_order

__all__ = ["render_png"]

CELL_W = 2.1                             # inches: the width of one picture cell


def render_png(trace: Trace, path: str | Path, top: int = 5, max_nodes: int = 8,
               dpi: int = 90) -> Path:
    """Draw ``trace`` into a PNG file.

    Args:
        trace: the trace of one item.
        path: the PNG file to write.
        top: boxes drawn per phrase and stage.
        max_nodes: phrases drawn as rows (the root first, breadth-first); the
            graph always shows every phrase.
        dpi: resolution.

    Returns:
        The path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import LinearSegmentedColormap, Normalize

    stages = trace.stages()
    rows = node_order(trace)[:max_nodes]
    image, _ = load_image(trace, max_side=360)
    W, H = trace.image_size
    aspect = H / max(W, 1)
    ncols = max(1, len(stages))
    cell_w = CELL_W
    cell_h = cell_w * min(max(aspect, 0.5), 1.5)
    graph_w = 4.6
    board_w = ncols * cell_w * 1.08 + 1.1
    board_h = len(rows) * cell_h * 1.3 + 0.4
    fig_w = board_w + graph_w + 0.3
    headline = _headline(trace)
    head_h = 0.35 + 0.16 * (headline.count("\n") + 1)
    fig_h = max(board_h + 0.6 + head_h, 4.8)
    fig = plt.figure(figsize=(fig_w, fig_h))
    bottom, top_edge = 0.6 / fig_h, 1 - head_h / fig_h
    board = fig.add_axes((0.0, bottom, board_w / fig_w, top_edge - bottom))
    gx = fig.add_axes((board_w / fig_w, bottom, graph_w / fig_w, top_edge - bottom))
    # every cell of the board is one copy of the image, in image pixel units
    sx, sy = 1.0, min(max(aspect, 0.5), 1.5) / aspect
    cw, ch = W * sx, H * sy
    gap_x, gap_y = 0.08 * cw, 0.3 * ch
    names = trace.node_names()
    for r, node in enumerate(rows):
        y0 = r * (ch + gap_y)
        label = textwrap.fill(names[node], 16) + ("\n(referent)" if node == trace.root else "")
        board.text(-0.04 * cw, y0 + ch / 2, label, ha="right", va="center", fontsize=7.5)
        for c, stage in enumerate(stages):
            x0 = c * (cw + gap_x)
            _cell(board, trace, stage, node, image, top, x0, y0, sx, sy)
            if r == 0:
                board.text(x0 + cw / 2, y0 - 0.06 * ch, _stage_title(trace, stage),
                           ha="center", va="bottom", fontsize=8)
    if not stages:
        board.imshow(image, extent=(0, cw, ch, 0))
        board.text(cw / 2, -0.06 * ch, "no belief recorded", ha="center", fontsize=8)
    board.set_xlim(-0.55 * cw if ncols < 3 else -0.5 * cw, ncols * (cw + gap_x))
    board.set_ylim(max(1, len(rows)) * (ch + gap_y) - gap_y * 0.4, -0.3 * ch)
    board.set_aspect("equal", anchor="N")
    board.axis("off")
    up, down = trace.confidence("up"), trace.confidence("down")
    _graph(gx, trace, up.values if up else None, down.values if down else None)

    colours = [belief_colour(v) for v in np.linspace(0, 1, 9)]
    cmap = LinearSegmentedColormap.from_list("belief", colours)
    cax = fig.add_axes((0.08, 0.22 / fig_h, 0.25, 0.12 / fig_h))
    bar = fig.colorbar(ScalarMappable(Normalize(0, 1), cmap), cax=cax, orientation="horizontal")
    bar.ax.tick_params(labelsize=7)
    bar.ax.set_ylabel("belief", fontsize=7, rotation=0, ha="right", va="center")
    fig.suptitle(headline, fontsize=9, y=1 - 0.12 / fig_h, va="top")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _stage_title(trace: Trace, stage: BeliefTrace) -> str:
    branch = "grounding" if stage.branches == ["ground"] else (
        "matching" if "ground" not in stage.branches else "")
    title = stage.label
    if branch and stage.kind == "propagate":
        title = f"{stage.label.split(' (')[0]} · {branch}"
    return title


def _headline(trace: Trace) -> str:
    parts = [f"{trace.id}: {trace.graph.get('text', '')}"]
    numbers = []
    if trace.match_prob is not None:
        numbers.append(f"P(match) = {trace.match_prob:.3f}")
    if "match" in trace.truth:
        numbers.append(f"label {trace.truth['match']}")
    if trace.ground_index >= 0:
        numbers.append(f"grounded to proposal {trace.ground_index}")
    rels = trace.relation_names()
    if trace.mismatch_index >= 0 and trace.mismatch_index < len(rels):
        numbers.append(f"blamed relation: '{rels[trace.mismatch_index]}'")
    return textwrap.fill(parts[0], 130) + "\n" + ",  ".join(numbers)


def _rect(ax: Any, box: list[float], **kw: Any) -> None:
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((box[0], box[1]), box[2] - box[0], box[3] - box[1], fill=False, **kw))


def _cell(ax: Any, trace: Trace, stage: BeliefTrace, node: int, image: np.ndarray,
          top: int, x0: float, y0: float, sx: float, sy: float) -> None:
    """One stage of one phrase: the image at ``(x0, y0)`` scaled by ``(sx, sy)``."""
    from matplotlib.patches import Rectangle

    W, H = trace.image_size
    cw, ch = W * sx, H * sy
    ax.imshow(image, extent=(x0, x0 + cw, y0 + ch, y0), interpolation="bilinear")
    _rect(ax, [x0, y0, x0 + cw, y0 + ch], ec="0.6", lw=0.6)

    def place(b: list[float]) -> list[float]:
        return [x0 + b[0] * sx, y0 + b[1] * sy, x0 + b[2] * sx, y0 + b[3] * sy]

    pairs = stage.top(node, top)
    for rank, (p, v) in reversed(list(enumerate(pairs))):
        lw = 2.4 if rank == 0 else 1.3
        _rect(ax, place(trace.boxes[p]), ec="white", lw=lw + 1.4, alpha=0.8)
        _rect(ax, place(trace.boxes[p]), ec=belief_colour(v), lw=lw)
    # the cell is CELL_W inches wide: a 6-point font is this many cell units high
    font = 6 / 72 * cw / CELL_W
    moved = [place(b) for b in trace.boxes]
    for q, (_, v) in zip(box_labels(moved, pairs, (x0, y0, x0 + cw, y0 + ch), font), pairs):
        ax.add_patch(Rectangle((q["x"], q["y"]), q["w"], q["h"], fc="white", alpha=0.92,
                               ec=belief_colour(v), lw=0.5))
        ax.text(q["x"] + 0.1 * font, q["y"] + q["h"] / 2, q["text"], fontsize=6,
                family="monospace", color="#111", va="center", ha="left")
    if node == trace.root and stage.kind == "propagate" and "ground" in stage.branches:
        ref = trace.truth.get("referent_box")
        if ref is not None:
            _rect(ax, place(ref), ec="limegreen", lw=1.4, ls="--")
        if trace.box is not None:
            _rect(ax, place(trace.box), ec="deepskyblue", lw=1.4, ls=":")
    beta = stage.beta[node] if node < len(stage.beta) else None
    if beta is not None:
        text = "  ".join(f"β{'_' + n if n != 'rel' else ''}={b:.2f}"
                         for n, b in zip(stage.beta_names, beta))
        ax.text(x0 + cw / 2, y0 + ch * 1.03, text, ha="center", va="top", fontsize=6)


def _graph(ax: Any, trace: Trace, p_up: list[float] | None,
           p_down: list[float] | None) -> None:
    nodes, rel_pos = graph_layout(trace)
    names = trace.node_names()
    relations = trace.graph.get("relations", [])
    predicted_mismatch = trace.match_prob is not None and trace.match_prob < 0.5
    blamed = trace.mismatch_index
    for k, r in enumerate(relations):
        if k not in rel_pos:
            continue
        xs, ys = nodes[r["subject"]]
        xo, yo = nodes[r["object"]]
        xr, yr = rel_pos[k]
        hot = k == blamed
        colour = "red" if hot and predicted_mismatch else ("darkorange" if hot else "0.35")
        ax.annotate("", xy=(xr, yr), xytext=(xs, ys),
                    arrowprops=dict(arrowstyle="-", color=colour, lw=1.8 if hot else 1.0,
                                    shrinkA=14, shrinkB=8))
        ax.annotate("", xy=(xo, yo), xytext=(xr, yr),
                    arrowprops=dict(arrowstyle="-|>", color=colour, lw=1.8 if hot else 1.0,
                                    shrinkA=8, shrinkB=14))
        d = trace.relation_score(k)
        text = textwrap.fill(r["text"], 16) + ("" if d is None else f"\nd = {d:+.3f}")
        if hot:
            text += "\n(blamed)" if predicted_mismatch else "\n(lowest d)"
        ax.text(xr, yr, text, ha="center", va="center", fontsize=7,
                bbox=dict(boxstyle="square,pad=0.3",
                          fc="mistyrose" if hot and predicted_mismatch else "white",
                          ec=colour, lw=1.8 if hot else 0.8))
    for v, (x, y) in nodes.items():
        text = textwrap.fill(names[v], 16)
        conf = []
        if p_up is not None:
            conf.append(f"p↑ {p_up[v]:.2f}")
        if p_down is not None:
            conf.append(f"p↓ {p_down[v]:.2f}")
        if conf:
            text += "\n" + "  ".join(conf)
        ax.text(x, y, text, ha="center", va="center", fontsize=7.5,
                bbox=dict(boxstyle="ellipse,pad=0.25",
                          fc="lightyellow" if v == trace.root else "white", ec="0.2"))
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.02, 1.02)
    ax.axis("off")
    ax.set_title("language graph (p↑ bottom-up, p↓ top-down confidence; d = Compare)",
                 fontsize=7.5)
