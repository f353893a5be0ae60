"""Relation triples of a parser against human scene graphs of free-form captions, as JSON.

Usage::

    python scripts/eval_scene_graphs.py CSV [--parser rule] [--option KEY=VALUE]
        [--limit N] [--errors K]

The same as ``rcrn parse-eval --format factual CSV --json``: ``CSV`` has a ``caption``
and a ``scene_graph`` column (``( s , r , o ) , ...``, the layout of the FACTUAL
splits); the scoring is :func:`parsers.evaluate.evaluate_factual`, whose module
docstring says how triples and attributes are matched.  Exit status 2 on bad input,
with a one-line error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from parsers import cli  # noqa: E402
from rcrn.errors import RcrnError  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="scene-graph CSV with 'caption' and 'scene_graph' columns")
    ap.add_argument("--parser", default="rule", help="parser backend name (default: rule)")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="a parser option, e.g. model=en_core_web_sm (repeatable)")
    ap.add_argument("--limit", type=int, default=None, help="score only the first N captions")
    ap.add_argument("--errors", type=int, default=0, help="list up to K wrong captions")
    args = ap.parse_args(argv)
    ns = argparse.Namespace(format="factual", file=args.csv, root=None, benchmark=None,
                            parser=args.parser, option=args.option, limit=args.limit,
                            errors=args.errors, json=True)
    try:
        return cli.cmd_parse_eval(ns)
    except RcrnError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
