"""``rcrn synthetic``: generate and inspect the built-in synthetic benchmark."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchmarks.synthetic.benchmark import load_manifest
from benchmarks.synthetic.generator import GeneratorConfig, generate_dataset
from benchmarks.synthetic.splits import SPLITS
from rcrn.errors import CommandError, RcrnError

__all__ = ["register"]

_GENERATE_EXAMPLE = """\
example:
  rcrn synthetic generate --out data/synthetic --scenes 5000 --seed 0
  (5000 scenes x 4 expression pairs; writes images/, scenes.jsonl,
   annotations/{train,val,test}.jsonl and manifest.json)
"""

_STATS_EXAMPLE = """\
example:
  rcrn synthetic stats --root data/synthetic
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``synthetic`` command and its ``generate`` / ``stats`` sub-commands."""
    parser = subparsers.add_parser(
        "synthetic", help="generate / inspect the synthetic benchmark of rendered scenes",
        description="The built-in synthetic GITM-MR-style benchmark of rendered scenes.")
    sub = parser.add_subparsers(dest="synthetic_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: _missing_subcommand(parser))

    gen = sub.add_parser(
        "generate", help="generate scenes, expressions and mismatches",
        description="Generate a seeded synthetic dataset: rendered scenes, referring "
                    "expressions that each identify one object, gold language graphs, "
                    "and one mismatched counterpart per expression.",
        epilog=_GENERATE_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    gen.add_argument("--out", required=True, help="output directory")
    gen.add_argument("--scenes", type=int, default=1000, help="number of scenes (default 1000)")
    gen.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    gen.add_argument("--size", type=int, default=128, help="image side in pixels (default 128)")
    gen.add_argument("--per-scene", type=int, default=4,
                     help="expression pairs per scene (default 4)")
    gen.add_argument("--min-objects", type=int, default=3, help="fewest objects (default 3)")
    gen.add_argument("--max-objects", type=int, default=10, help="most objects (default 10)")
    gen.add_argument("--max-words", type=int, default=16,
                     help="in-distribution word limit, Train-Len subset 'len_words' (default 16)")
    gen.add_argument("--max-relations", type=int, default=2,
                     help="in-distribution relation limit, subset 'len_rels' (default 2)")
    gen.add_argument("--overwrite", action="store_true",
                     help="replace an existing dataset: only the files its manifest lists "
                          "(a folder holding anything else is refused)")
    gen.add_argument("--quiet", action="store_true", help="no progress bar")
    gen.set_defaults(func=_generate)

    stats = sub.add_parser(
        "stats", help="print counts and length distributions of a dataset",
        description="Print the counts and the word / relation distributions per split.",
        epilog=_STATS_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    stats.add_argument("--root", required=True, help="dataset directory")
    stats.set_defaults(func=_stats)


def _missing_subcommand(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 1


def _generate(args: argparse.Namespace) -> int:
    config = GeneratorConfig(
        scenes=args.scenes, seed=args.seed, size=args.size, per_scene=args.per_scene,
        min_objects=args.min_objects, max_objects=args.max_objects,
        max_words=args.max_words, max_relations=args.max_relations)
    start = time.perf_counter()
    try:
        manifest = generate_dataset(args.out, config, progress=not args.quiet,
                                    overwrite=args.overwrite)
    except RcrnError:  # e.g. a folder of other files: as it is
        raise
    except FileExistsError as exc:
        raise CommandError(f"{exc} (use --overwrite)") from exc
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    seconds = time.perf_counter() - start
    totals = manifest["totals"]
    print(f"wrote {totals['scenes']} scenes, {totals['pairs']} expression pairs "
          f"({totals['expressions']} expressions) to {args.out} in {seconds:.1f} s "
          f"({totals['pairs'] / max(seconds, 1e-9):.0f} pairs/s)")
    for split in SPLITS:
        c = manifest["counts"][split]
        print(f"  {split:5s}: {c['scenes']} scenes, {c['pairs']} pairs, "
              f"{c['positives']} positives, {c['negatives']} mismatches")
    return 0


def _histogram(counts: dict[str, int]) -> str:
    return " ".join(f"{k}:{v}" for k, v in counts.items())


def _stats(args: argparse.Namespace) -> int:
    root = Path(args.root)
    manifest = load_manifest(root)
    th = manifest["thresholds"]
    print(f"{manifest['name']} v{manifest['generator_version']}  seed {manifest['seed']}  "
          f"image {manifest['image_size'][0]}x{manifest['image_size'][1]}  "
          f"max_words {th['max_words']}  max_relations {th['max_relations']}")
    for split in SPLITS:
        c = manifest["counts"][split]
        dist = manifest["distributions"][split]
        n = max(c["expressions"], 1)
        in_words = sum(v for k, v in dist["pair_words"].items() if int(k) <= th["max_words"])
        in_rels = sum(v for k, v in dist["relations"].items() if int(k) <= th["max_relations"])
        print(f"{split}: {c['scenes']} scenes, {c['expressions']} expressions, "
              f"{c['pairs']} pairs; in-distribution {100 * in_words / n:.1f}% by words, "
              f"{100 * in_rels / n:.1f}% by relations")
        print(f"  relations: {_histogram(dist['relations'])}")
        print(f"  words:     {_histogram(dist['words'])}")
    return 0
