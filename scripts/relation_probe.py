"""Can the cross-encoder's transformer learn a spatial relation from an unlimited stream?

A probe of the baseline of ``rcrn lengthgen`` on a task much simpler than the synthetic
benchmark: every item is a fresh draw of ``--objects`` regions (one of each of
``--objects`` classes: a random class vector plus noise, a random box) and a three-word
text ``A REL B`` naming two of the classes.  The model is the toolkit's
``rcrn.models.vl.VLEncoder`` (``[CLS]`` + words + regions, the packaged cross-encoder's
sizes by default) with a linear head on ``[CLS]``, as the cross-encoder reads its match,
trained from scratch with Adam on binary cross-entropy.  Tasks:

* ``subject_x``: is A's centre left of x = 0.45?  (one object to find, then its place)
* ``left_of``: is A's centre left of B's?  (two objects to find and compare; REL is fixed)
* ``relation``: does ``A REL B`` hold, REL one of left of / right of / above / below, the
  negatives being true statements with the relation swapped for its opposite, as the
  benchmark's mismatches are made.

``--align W`` adds a supervised word-region alignment after the first layer (cross-entropy
of each object word's dot products with the regions, at weight W).  ``--locate W`` adds
a term that teaches ``[CLS]`` where A is: an MLP on ``[CLS]`` regresses A's box, L1
summed over its four coordinates, at weight W.  ``--read referent`` puts the match head
on A's own region output instead of ``[CLS]``; ``--read relation`` on the output of the
word REL, as the cross-encoder's MIL read-out scores words; ``--read marked`` keeps the
head on ``[CLS]`` and marks A in the input instead (a learned vector, drawn at the scale of
the regions' common part, added to A's features), as a verifier given a candidate
referent would see it.  ``--locate``, ``--read referent`` and ``--read marked`` are ways
to break the symmetry between A and B that keeps the ``[CLS]`` read-out of ``left_of`` and
``relation`` at chance (the mark breaks it for ``left_of`` only); at REL the two objects
differ only by their words' positions (docs/lengthgen.md).

Prints one JSON line per evaluation (validation accuracy on a fixed set of 2,000 items)
and a final line with the best accuracy and the final model's accuracy by the gap the
label turns on (how far apart the compared centres are), which tells a comparison that
has not been learned (chance in every bin) from an imprecise one (errors at small gaps)::

    python scripts/relation_probe.py --task left_of --steps 3000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import torch
from torch import nn

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from rcrn.models.vl import VLConfig, VLEncoder  # noqa: E402
from rcrn.nn import MLP  # noqa: E402

TASKS = ("subject_x", "left_of", "relation")
RELATIONS = ("left of", "right of", "above", "below")   # opposites differ in the last bit
# bins of the gap the label turns on (the compared centres' distance along the axis, in
# image widths / heights; for subject_x A's distance from x = 0.45)
GAP_BINS = ((0.0, 0.05), (0.05, 0.15), (0.15, 0.3), (0.3, 1.0))


class Stream:
    """Draws probe items: regions, boxes, token ids, labels and the named regions' places.

    Token ids: 0 padding, ``1..C`` class words, ``C+1..C+4`` the relations.
    """

    def __init__(self, task: str, objects: int, feature_dim: int, seed: int) -> None:
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
        if objects < 2:
            raise ValueError(f"--objects must be at least 2, got {objects}")
        self.task, self.objects = task, objects
        g = torch.Generator().manual_seed(seed)
        self.common = 3 * torch.randn(feature_dim, generator=g)   # regions look alike
        self.classes = torch.randn(objects, feature_dim, generator=g)
        self.vocab_size = objects + 1 + len(RELATIONS)

    def draw(self, n: int, g: torch.Generator) -> dict[str, torch.Tensor]:
        C = self.objects
        ar = torch.arange(n)
        cls = torch.stack([torch.randperm(C, generator=g) for _ in range(n)])  # region r: class
        feats = self.common + self.classes[cls] + 0.3 * torch.randn(n, C, self.common.numel(),
                                                                    generator=g)
        corner = 0.8 * torch.rand(n, C, 2, generator=g)
        size = 0.05 + 0.1 * torch.rand(n, C, 2, generator=g)
        boxes = torch.cat([corner, corner + size], dim=-1)
        centre = corner + size / 2
        a, b = ar.new_zeros(n), ar.new_ones(n)                   # regions 0 and 1 are named
        if self.task == "subject_x":
            label, rel = centre[ar, a, 0] < 0.45, a
            gap = (centre[ar, a, 0] - 0.45).abs()
        elif self.task == "left_of":
            label, rel = centre[ar, a, 0] < centre[ar, b, 0], a
            gap = (centre[ar, a, 0] - centre[ar, b, 0]).abs()
        else:
            axis = torch.randint(0, 2, (n,), generator=g)
            before = centre[ar, a, axis] < centre[ar, b, axis]   # left of / above (y down)
            truth = 2 * axis + (~before).long()
            label = torch.rand(n, generator=g) < 0.5
            rel = torch.where(label, truth, truth ^ 1)
            gap = (centre[ar, a, axis] - centre[ar, b, axis]).abs()
        tokens = torch.stack([1 + cls[:, 0], C + 1 + rel, 1 + cls[:, 1]], dim=1)
        return {"feats": feats, "boxes": boxes, "tokens": tokens, "label": label.float(),
                "a": a, "b": b, "gap": gap}


class Probe(nn.Module):
    """The toolkit's VLEncoder with a linear match head on ``[CLS]`` (or on A's region
    output, ``read="referent"``, or on the relation word's output, ``read="relation"``;
    ``read="marked"`` reads ``[CLS]`` with a learned mark added to A's features)."""

    def __init__(self, vocab_size: int, feature_dim: int, config: VLConfig,
                 read: str = "cls") -> None:
        super().__init__()
        self.read = read
        self.encoder = VLEncoder(vocab_size, 64, feature_dim, config)
        self.head = nn.Linear(config.dim, 1)
        self.locate = MLP(config.dim, config.dim, 4)
        # drawn, not zero: a zero mark leaves A and B alike at the start (measured: chance)
        self.mark = nn.Parameter(3 * torch.randn(feature_dim)) if read == "marked" else None

    @staticmethod
    def batch(item: dict[str, torch.Tensor]) -> SimpleNamespace:
        n, length = item["tokens"].shape
        return SimpleNamespace(text_tokens=item["tokens"], text_lengths=torch.full((n,), length),
                               boxes=item["boxes"],
                               box_mask=torch.ones(item["boxes"].shape[:2], dtype=torch.bool))

    def forward(self, item: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """The match logit (from ``[CLS]``, A's output or REL's) and A's box read from
        ``[CLS]``."""
        feats = item["feats"]
        if self.mark is not None:
            is_a = nn.functional.one_hot(item["a"], feats.shape[1]).to(feats.dtype)
            feats = feats + is_a[..., None] * self.mark
        cls, words, regions = self.encoder(self.batch(item), feats)
        if self.read in ("cls", "marked"):
            pooled = cls
        elif self.read == "relation":
            pooled = words[:, 1]                                 # tokens: A REL B
        else:
            pooled = regions[torch.arange(len(cls)), item["a"]]
        return self.head(pooled).squeeze(-1), torch.sigmoid(self.locate(cls))

    @staticmethod
    def locate_loss(box: torch.Tensor, item: dict[str, torch.Tensor]) -> torch.Tensor:
        """L1 distance to A's box, summed over its coordinates, averaged over the items."""
        target = item["boxes"][torch.arange(len(box)), item["a"]]
        return nn.functional.l1_loss(box, target, reduction="sum") / len(box)

    def alignment_loss(self, item: dict[str, torch.Tensor]) -> torch.Tensor:
        """Cross-entropy of the two object words' dot products with the regions, read
        after the first layer, against the regions they name."""
        _, words, regions = self.encoder(self.batch(item), item["feats"], layers=1)
        scores = torch.einsum("bld,bnd->bln", words, regions) / words.shape[-1] ** 0.5
        return (nn.functional.cross_entropy(scores[:, 0], item["a"])
                + nn.functional.cross_entropy(scores[:, 2], item["b"]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", choices=TASKS, default="left_of")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--objects", type=int, default=6, help="regions (and classes) per item")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ff", type=int, default=128)
    ap.add_argument("--align", type=float, default=0.0,
                    help="weight of the supervised word-region alignment (0: none)")
    ap.add_argument("--locate", type=float, default=0.0,
                    help="weight of the [CLS] regression of A's box (0: none)")
    ap.add_argument("--read", choices=("cls", "referent", "relation", "marked"),
                    default="cls",
                    help="what the match head reads: [CLS], A's region output, the "
                         "relation word's output, or [CLS] with A marked in the input")
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.layers < 1 or args.steps < 1 or args.eval_every < 1:
        ap.error("--layers, --steps and --eval-every must be at least 1")

    torch.manual_seed(args.seed)
    feature_dim = 64
    stream = Stream(args.task, args.objects, feature_dim, args.seed)
    model = Probe(stream.vocab_size, feature_dim,
                  VLConfig(args.dim, args.layers, args.heads, args.ff, 0.0), args.read)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    train_g = torch.Generator().manual_seed(args.seed + 1)
    val = stream.draw(2000, torch.Generator().manual_seed(10_000 + args.seed))
    best, start = 0.0, time.perf_counter()
    for step in range(1, args.steps + 1):
        item = stream.draw(args.batch_size, train_g)
        logit, box = model(item)
        loss = nn.functional.binary_cross_entropy_with_logits(logit, item["label"])
        align = model.alignment_loss(item) if args.align else None
        locate = model.locate_loss(box, item) if args.locate else None
        total = loss
        for weight, term in ((args.align, align), (args.locate, locate)):
            if term is not None:
                total = total + weight * term
        opt.zero_grad()
        total.backward()
        opt.step()
        if step % args.eval_every == 0 or step == args.steps:
            with torch.no_grad():
                acc = float(((model(val)[0] > 0).float() == val["label"]).float().mean())
            best = max(best, acc)
            row = {"step": step, "loss": round(loss.item(), 4), "val_accuracy": round(acc, 4)}
            for name, term in (("align_loss", align), ("locate_loss", locate)):
                if term is not None:
                    row[name] = round(term.item(), 4)
            print(json.dumps(row), flush=True)
    with torch.no_grad():
        right = (model(val)[0] > 0).float() == val["label"]
    by_gap = {}
    for low, high in GAP_BINS:
        inside = (val["gap"] >= low) & (val["gap"] < high)
        by_gap[f"{low}-{high}"] = round(float(right[inside].float().mean()), 4) \
            if inside.any() else None
    print(json.dumps({"task": args.task, "steps": args.steps, "layers": args.layers,
                      "dim": args.dim, "align": args.align, "locate": args.locate,
                      "read": args.read, "seed": args.seed,
                      "chance": round(float(max(val["label"].mean(), 1 - val["label"].mean())), 4),
                      "best_val_accuracy": round(best, 4), "final_accuracy_by_gap": by_gap,
                      "seconds": round(time.perf_counter() - start, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
