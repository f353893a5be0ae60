"""Command-line tools of the benchmark adapters: ``rcrn score`` and ``rcrn benchmarks``."""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path
from typing import Any

import yaml

import benchmarks
from rcrn.errors import CommandError, RcrnError

SCORE_EPILOG = """\
Prediction files:
  vsr      the official preds.txt: one 0/1 per line, in jsonl order
  whatsup  one line per item with its option scores (commas or spaces), or a .npy
           matrix [items, options]; option 0 is always the gold caption
  any      JSON lines of rcrn Prediction objects ({"id": ..., "match_prob": ...}): one
           per problem; match_prob a number in [0, 1], box null or [x1, y1, x2, y2],
           mismatched_relation null or a relation index of the item's graph

Examples:
  rcrn score --benchmark vsr --root data/vsr --split random/test --predictions preds.txt
  rcrn score --benchmark whatsup --root data/whatsup --split controlled_a \\
      --predictions scores.npy --json
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``score`` and ``benchmarks`` to the ``rcrn`` command line."""
    p = subparsers.add_parser(
        "score", help="score predictions of any model with a benchmark's official metrics",
        description="Score a prediction file against one benchmark split and print the "
                    "official metrics (a table, or one JSON object with --json; rates are "
                    "fractions in JSON and percentages in the table).",
        epilog=SCORE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--benchmark", required=True, metavar="NAME",
                   help="benchmark name (see `rcrn benchmarks`)")
    p.add_argument("--root", required=True, metavar="DIR", help="local data directory or file")
    p.add_argument("--split", default=None, metavar="S",
                   help="split, e.g. random/test (vsr) or controlled_a (whatsup)")
    p.add_argument("--predictions", required=True, metavar="FILE", help="prediction file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--categories", default=None, metavar="FILE",
                   help="vsr: relation category file (default: rel_meta_category_dict.txt "
                        "under --root when present)")
    p.add_argument("--ties", choices=["wrong", "official"], default="wrong",
                   help="whatsup: ties at the gold option count as wrong (default) or as the "
                        "official argmax counts them (right)")
    p.add_argument("--ties-correct", action="store_true",
                   help="whatsup: count ties at the gold option as right (official argmax); "
                        "by default they count as wrong and are reported")
    p.add_argument("--task", default=None, metavar="T",
                   help="viphy: spatial, size, size_sub, size_trans or color")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="any other adapter option (value read as YAML); repeatable")
    p.set_defaults(func=score_command)

    q = subparsers.add_parser("benchmarks", help="list the registered benchmarks",
                              description="List the registered benchmark adapters.",
                              epilog="Example: rcrn benchmarks")
    q.set_defaults(func=list_command)


def _options(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.categories is not None:
        options["categories"] = args.categories
    if args.ties_correct or getattr(args, "ties", "wrong") == "official":
        options["ties_correct"] = True
    if getattr(args, "task", None) is not None:
        options["task"] = args.task
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"--option {item!r}: expected KEY=VALUE")
        try:
            options[key.strip().replace("-", "_")] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise CommandError(f"--option {item!r}: value is not valid YAML") from exc
    params = inspect.signature(cls).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        for key in options:
            if key not in params:
                flag = "--" + key.replace("_", "-")
                raise CommandError(f"{flag} does not apply to benchmark {args.benchmark!r}")
    return options


def _is_prediction_jsonl(path: Path) -> bool:
    if path.suffix == ".npy":
        return False
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip()
    return head.startswith(b"{")


def score_command(args: argparse.Namespace) -> int:
    """Handler of ``rcrn score``."""
    try:
        cls = benchmarks.adapter_class(args.benchmark)
        options = _options(args, cls)
        try:
            bench = benchmarks.load(args.benchmark, args.root, args.split, **options)
        except RcrnError:
            raise
        except (ValueError, TypeError) as exc:  # an unknown split, subset or option value
            raise CommandError(f"benchmark {args.benchmark!r}: {exc}") from exc
        path = Path(args.predictions)
        if path.is_dir():
            raise CommandError(f"predictions file {path} is a directory, not a file")
        if not path.is_file():
            raise CommandError(f"predictions file {path} does not exist")
        if _is_prediction_jsonl(path):
            metrics = bench.evaluate(benchmarks.read_predictions(path))
        elif hasattr(bench, "score_file"):
            metrics = bench.score_file(path)
        else:
            raise CommandError(f"benchmark {args.benchmark!r} reads predictions as JSON lines "
                               f"of Prediction objects; {path} is not one")
    except RcrnError:
        raise
    except OSError as exc:
        raise CommandError(f"{exc.filename or args.predictions}: {exc.strerror}") from exc
    header = {"benchmark": args.benchmark, "split": getattr(bench, "split", args.split),
              "predictions": str(path)}
    if args.json:
        print(json.dumps({**header, **metrics}))
    else:
        print(f"{header['benchmark']} {header['split']}  ({len(bench)} items; "
              f"predictions {path.name}; rates in %)")
        print(format_table(metrics))
    return 0


def list_command(args: argparse.Namespace) -> int:
    """Handler of ``rcrn benchmarks``."""
    installed = set(benchmarks.available(installed_only=True))
    for name in benchmarks.available():
        print(f"{name:<12} {'installed' if name in installed else 'not installed'}")
    return 0


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{100 * value:.2f}"
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def format_table(metrics: dict[str, Any]) -> str:
    """Render a metrics dict as plain-text tables (floats as percentages).

    Scalars form the first table; a dict of dicts (e.g. ``per_relation``) becomes its own
    table with one row per key and one column per inner field.
    """
    scalars = [(k, v) for k, v in metrics.items() if not isinstance(v, dict)]
    blocks: list[str] = []
    if scalars:
        width = max(len(k) for k, _ in scalars)
        blocks.append("\n".join(f"{k:<{width}}  {_cell(v):>8}" for k, v in scalars))
    for key, value in metrics.items():
        if not isinstance(value, dict):
            continue
        if not value:
            blocks.append(f"{key}: (none)")
            continue
        rows = [(str(k), v if isinstance(v, dict) else {"value": v}) for k, v in value.items()]
        columns: list[str] = []
        for _, inner in rows:
            columns += [c for c in inner if c not in columns]
        width = max(len(key), *(len(name) for name, _ in rows))
        lines = [f"{key:<{width}}  " + "  ".join(f"{c:>8}" for c in columns)]
        for name, inner in rows:
            lines.append(f"{name:<{width}}  "
                         + "  ".join(f"{_cell(inner.get(c)):>8}" for c in columns))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
