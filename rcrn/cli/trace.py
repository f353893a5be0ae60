"""``rcrn trace``: belief-propagation traces of chosen items (JSON, PNG, HTML)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rcrn.errors import CommandError

__all__ = ["register"]


def _items(text: str) -> list[str]:
    ids = [x.strip() for x in text.split(",") if x.strip()]
    if not ids:
        raise argparse.ArgumentTypeError("give at least one item id, e.g. --items ID1,ID2")
    return ids


def _trace(args: argparse.Namespace) -> int:
    from rcrn.cli.commands import synthetic_benchmark
    from rcrn.engine.trainer import load_checkpoint
    from rcrn.trace.writer import write_trace

    if args.benchmark != "synthetic":
        raise CommandError(f"tracing items of {args.benchmark!r} needs their proposals and "
                           "features; trace them from Python with rcrn.trace.write_trace")
    try:
        model, vocab, config, _ = load_checkpoint(args.checkpoint)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    if args.root:
        config.setdefault("data", {})["root"] = args.root
    bench = synthetic_benchmark(config, args.split, progress=False)
    wanted = list(dict.fromkeys(args.items))
    found = {}
    known = []
    for p in bench.problems():
        if len(known) < 5:
            known.append(p.id)
        if p.id in wanted:
            found[p.id] = p
            if len(found) == len(wanted):
                break
    missing = [i for i in wanted if i not in found]
    if missing:
        raise CommandError(f"no item {', '.join(map(repr, missing))} in the {args.split!r} split "
                           f"(ids look like {', '.join(known)})")
    paths = write_trace(model, vocab, [found[i] for i in wanted], Path(args.out),
                        png=not args.no_png, html=not args.no_html)
    for path in paths:
        print(path)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``rcrn trace`` to the command line."""
    p = sub.add_parser(
        "trace", help="belief-propagation traces of chosen items (JSON, PNG, HTML)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Runs a checkpoint once over the chosen items and writes, per item, the "
                    "trace as JSON (local, bottom-up and top-down beliefs, gate values, Select "
                    "top-K, relation-alignment scores, confidences, Compare scores, "
                    "predictions), a PNG picture and a self-contained HTML page; with several "
                    "items also traces.html showing them all.",
        epilog="Example: rcrn trace --checkpoint runs/demo/last.pt --benchmark synthetic "
               "--split test --items ID1,ID2 --out runs/demo/traces")
    p.add_argument("--checkpoint", required=True, help="a checkpoint written by rcrn train")
    p.add_argument("--benchmark", default="synthetic", help="benchmark of the items")
    p.add_argument("--split", default="test", help="split holding the items")
    p.add_argument("--items", required=True, type=_items, help="comma-separated item ids")
    p.add_argument("--out", default="runs/traces", help="output folder")
    p.add_argument("--root", help="dataset root (default: the one in the checkpoint's config)")
    p.add_argument("--no-png", action="store_true", help="skip the PNG pictures")
    p.add_argument("--no-html", action="store_true", help="skip the HTML pages")
    p.set_defaults(func=_trace)
