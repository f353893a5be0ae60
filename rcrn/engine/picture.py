"""A picture of one prediction: the image with boxes, and the parsed language graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rcrn.structures import GroundingProblem, Prediction
from rcrn.trace.layout import tree_layout

__all__ = ["draw_prediction"]


def draw_prediction(problem: GroundingProblem, pred: Prediction, path: str | Path) -> Path:
    """Draw the image (from ``meta['image_path']`` or a blank canvas) with the proposals,
    the referent box (green, dashed) and the predicted box (red), and the language
    graph beside it with the blamed relation highlighted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    W, H = problem.proposals.image_size
    fig, (ax, gx) = plt.subplots(1, 2, figsize=(10, 4.6), gridspec_kw={"width_ratios": [1, 1.2]})
    image = None
    if problem.meta.get("image_path") and Path(problem.meta["image_path"]).exists():
        from PIL import Image

        with Image.open(problem.meta["image_path"]) as im:
            image = np.asarray(im.convert("RGB"))
    ax.imshow(image if image is not None else np.full((H, W, 3), 255, np.uint8))
    for b in problem.proposals.boxes:
        ax.add_patch(Rectangle((b[0], b[1]), b[2] - b[0], b[3] - b[1], fill=False,
                               ec="0.6", lw=0.6))
    if problem.referent_box is not None:
        b = problem.referent_box
        ax.add_patch(Rectangle((b[0], b[1]), b[2] - b[0], b[3] - b[1], fill=False, ec="lime",
                               lw=2, ls="--", label="referent"))
    if pred.box is not None:
        b = pred.box
        ax.add_patch(Rectangle((b[0], b[1]), b[2] - b[0], b[3] - b[1], fill=False, ec="red",
                               lw=2, label="predicted"))
    ax.set_title(f"P(match) = {pred.match_prob:.2f}  (label {problem.match})", fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    ax.axis("off")

    graph = problem.graph
    # the trace pictures' layout: the root on top, each relation halfway along its edge
    pos, rel_pos = tree_layout(graph.num_entities, graph.root, graph.tree_edges())
    for k, r in enumerate(graph.relations):
        (x0, y0), (x1, y1) = pos[r.subject], pos[r.object]
        blamed = pred.mismatched_relation == k and pred.match_prob < 0.5
        gx.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops=dict(arrowstyle="->", color="red" if blamed else "0.3"))
        score = (f"\nd={pred.relation_scores[k]:+.2f}" if k < len(pred.relation_scores)
                 else "")
        gx.text(*rel_pos[k], r.text + score, ha="center", va="center",
                fontsize=8, bbox=dict(boxstyle="square", fc="mistyrose" if blamed else "white",
                                      ec="red" if blamed else "0.5"))
    for i, e in enumerate(graph.entities):
        gx.text(*pos[i], e.text, ha="center", va="center", fontsize=9,
                bbox=dict(boxstyle="round", fc="lightyellow" if i == graph.root else "white",
                          ec="0.2"))
    gx.set_xlim(0, 1)
    gx.set_ylim(0, 1)
    gx.axis("off")
    gx.set_title(graph.text, fontsize=8, wrap=True)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
