"""The ``rcrn`` command line.

Every package contributes its own sub-commands: a module listed in
``COMMAND_MODULES`` defines ``register(subparsers)``, which adds its commands
with ``set_defaults(func=handler)``; a handler takes the parsed arguments and
returns an exit code.  Modules are imported only to build the parser, so an
optional dependency missing for one command never breaks the others.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from rcrn.errors import CommandError, RcrnError

__all__ = ["main", "build_parser", "CommandError"]

COMMAND_MODULES = [
    "rcrn.cli.commands",
    "rcrn.cli.trace",
    "rcrn.cli.experiments",
    "parsers.cli",
    "detectors.cli",
    "benchmarks.cli",
    "benchmarks.synthetic.cli",
    "benchmarks.gitm_mr.cli",
    "benchmarks.viphy.cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rcrn",
        description="Relation-sensitive correspondence reasoning over language graphs and regions.",
        epilog="Example: rcrn demo --out runs/demo",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
                continue  # that package is not part of this installation
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except RcrnError as exc:  # what the user gave: one line, no traceback
        print(f"rcrn {args.command}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    from rcrn.cli import main as _main  # the installed module, not a second copy

    sys.exit(_main())
