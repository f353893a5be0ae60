"""``rcrn gitm-mr``: build a GITM-MR-layout dataset and inspect one."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.base import text_lines
from benchmarks.gitm_mr.layout import SPLITS, expression_path
from benchmarks.gitm_mr.mlm import MLMTrainConfig
from rcrn.errors import CommandError, RcrnError

__all__ = ["register"]

_GENERATE_EXAMPLES = """\
examples:
  rcrn gitm-mr generate --refreasoning data/ref-reasoning --out data/gitm-mr-gen --seed 0
  rcrn gitm-mr generate --refreasoning data/ref-reasoning --out data/gitm-mr-gen \\
      --mlm models/bert-base-uncased --candidates 3
  rcrn gitm-mr generate --from-synthetic data/synthetic --out data/synthetic-gitm
"""

_MLM_EXAMPLES = """\
examples:
  rcrn gitm-mr train-mlm --refreasoning data/ref-reasoning --out models/refreasoning-mlm
  rcrn gitm-mr generate --refreasoning data/ref-reasoning --out data/gitm-mr-gen \\
      --mlm models/refreasoning-mlm
"""

_STATS_EXAMPLE = """\
example:
  rcrn gitm-mr stats --root data/gitm-mr
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``gitm-mr`` with its ``generate`` and ``stats`` sub-commands."""
    parser = subparsers.add_parser(
        "gitm-mr", help="build / inspect datasets in the GITM-MR release layout",
        description="Build GITM-MR-style data (from Ref-Reasoning or the synthetic "
                    "benchmark) in the official release layout, or inspect a release.")
    sub = parser.add_subparsers(dest="gitm_mr_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: _help(parser))

    gen = sub.add_parser(
        "generate", help="write mismatched expressions in the release layout",
        description="Replace one relation phrase of each Ref-Reasoning expression with a "
                    "candidate of the paper's substitution table (keeping the relation "
                    "distribution of mismatches close to the matched one, optionally "
                    "filtering by pseudo-perplexity), check the remaining linguistic bias "
                    "with a text-only classifier, and write expression/, counter/, parse/, "
                    "small/, word_embedding/ and optionally vinvl_objects/.",
        epilog=_GENERATE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = gen.add_mutually_exclusive_group(required=True)
    src.add_argument("--refreasoning", metavar="DIR",
                     help="folder with {split}_expressions.json (+ {split}_sg_seqs.json and "
                          "{split}_sgs.json when available)")
    src.add_argument("--from-synthetic", metavar="DIR",
                     help="a dataset written by `rcrn synthetic generate`")
    gen.add_argument("--out", required=True, metavar="DIR", help="output folder")
    gen.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    gen.add_argument("--splits", nargs="+", default=list(SPLITS), choices=list(SPLITS),
                     help="splits to build (default: all present)")
    gen.add_argument("--balance", type=float, default=4.0,
                     help="strength of relation-distribution balancing, 0 = uniform draws "
                          "(default 4)")
    gen.add_argument("--reject", type=float, default=0.1,
                     help="largest share of pairs rejected to bring the relation distributions "
                          "closer (default 0.1)")
    gen.add_argument("--candidates", type=int, default=1,
                     help="candidate datasets; the one the bias classifier finds hardest is "
                          "written (default 1)")
    gen.add_argument("--limit", type=int, default=None, metavar="N",
                     help="use at most N expressions per split")
    gen.add_argument("--mlm", default=None, metavar="PATH",
                     help="local masked language model folder (needs transformers) for the "
                          "pseudo-perplexity filter; without it the filter is skipped")
    gen.add_argument("--max-ppl-ratio", type=float, default=2.0,
                     help="largest accepted pseudo-perplexity ratio, either way (default 2)")
    gen.add_argument("--parser", default="rule", metavar="NAME",
                     help="parser backend for expressions without an SGMN graph "
                          "(default rule)")
    gen.add_argument("--proposals", default=None, metavar="PATH",
                     help="detector output to write as vinvl_objects/ (Ref-Reasoning only)")
    gen.add_argument("--proposals-format", default="gitm-mr", metavar="NAME",
                     help="detectors format of --proposals (default gitm-mr; e.g. sgmn, "
                          "vinvl, store)")
    gen.add_argument("--feature-dim", type=int, default=None, metavar="D",
                     help="width of written region features (default: as given; 2048 for "
                          "--from-synthetic)")
    gen.add_argument("--overwrite", action="store_true",
                     help="replace an earlier output in --out: only the files its "
                          "manifest.json lists (a folder holding anything else is refused)")
    gen.add_argument("--json", action="store_true", help="print the manifest as JSON")
    gen.set_defaults(func=_generate)

    mlm = sub.add_parser(
        "train-mlm", help="train a small masked LM for the pseudo-perplexity filter",
        description="Train a small BERT-style masked language model from scratch on "
                    "expressions (a whole-word vocabulary, 15% masking) and save it as a "
                    "transformers folder that `rcrn gitm-mr generate --mlm` reads; for when "
                    "no pretrained masked LM is available locally. Needs transformers.",
        epilog=_MLM_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    corpus = mlm.add_mutually_exclusive_group(required=True)
    corpus.add_argument("--refreasoning", metavar="DIR",
                        help="folder with {split}_expressions.json")
    corpus.add_argument("--text", metavar="FILE", help="a text file, one expression a line")
    mlm.add_argument("--split", default="train", choices=list(SPLITS),
                     help="--refreasoning split to train on (default train)")
    mlm.add_argument("--out", required=True, metavar="DIR", help="model folder to write")
    defaults = MLMTrainConfig()
    for name, kind, what in (("steps", int, "optimiser steps"),
                             ("batch-size", int, "expressions per step"),
                             ("hidden", int, "width"), ("layers", int, "transformer layers"),
                             ("heads", int, "attention heads"),
                             ("min-count", int, "fewest occurrences of a vocabulary word"),
                             ("lr", float, "peak learning rate"), ("seed", int, "random seed")):
        default = getattr(defaults, name.replace("-", "_"))
        mlm.add_argument(f"--{name}", type=kind, default=default,
                         help=f"{what} (default {default})")
    mlm.add_argument("--overwrite", action="store_true",
                     help="replace a model this command wrote in --out before")
    mlm.add_argument("--json", action="store_true", help="print the summary as JSON")
    mlm.set_defaults(func=_train_mlm)

    stats = sub.add_parser("stats", help="count the pairs of a release",
                           description="Load every split of a release and print its counts.",
                           epilog=_STATS_EXAMPLE,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    stats.add_argument("--root", required=True, metavar="DIR", help="release folder")
    stats.set_defaults(func=_stats)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 1


def _generate(args: argparse.Namespace) -> int:
    from benchmarks.gitm_mr.generator import GenerateConfig, generate_from_refreasoning
    from benchmarks.gitm_mr.synthetic import convert_synthetic
    from benchmarks.gitm_mr.writer import check_release_folder

    out = Path(args.out)
    try:  # before any work: a folder of other files (e.g. the release itself) is refused
        check_release_folder(out, overwrite=args.overwrite)
    except RcrnError:  # a folder of other files: as it is
        raise
    except FileExistsError as exc:
        raise CommandError(f"{out / 'manifest.json'} exists; use --overwrite to write there "
                           "(it replaces the files that manifest lists)") from exc
    start = time.perf_counter()
    try:
        if args.from_synthetic:
            if args.mlm or args.proposals:
                raise CommandError("--mlm and --proposals apply to --refreasoning only")
            manifest = convert_synthetic(args.from_synthetic, out,
                                         feature_dim=args.feature_dim or 2048, seed=args.seed)
        else:
            import parsers

            config = GenerateConfig(seed=args.seed, splits=tuple(args.splits),
                                    balance=args.balance, reject=args.reject,
                                    max_ppl_ratio=args.max_ppl_ratio,
                                    candidates=args.candidates, limit=args.limit,
                                    feature_dim=args.feature_dim)
            proposals = None
            if args.proposals:
                import detectors

                proposals = detectors.load(args.proposals_format, args.proposals)
            manifest = generate_from_refreasoning(
                args.refreasoning, out, config, parser=parsers.load(args.parser),
                mlm=args.mlm, proposals=proposals)
    except RcrnError:
        raise
    except FileExistsError as exc:  # the folder changed while the data was made
        raise CommandError(str(exc)) from exc
    except (ValueError, KeyError) as exc:
        raise CommandError(str(exc)) from exc
    if args.json:
        print(json.dumps(manifest, default=str))
        return 0
    print(f"wrote {out} in {time.perf_counter() - start:.1f} s")
    _print_report(manifest)
    return 0


def _train_mlm(args: argparse.Namespace) -> int:
    from benchmarks.gitm_mr.mlm import MLMUnavailable, train_masked_lm

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CommandError(f"--out {out}: is a file, not a folder")
    if out.is_dir() and any(out.iterdir()):  # never write over files of another program
        if not (out / "training.json").is_file():
            raise CommandError(f"--out {out}: the folder holds files this command did not "
                               "write; choose a new or empty folder")
        if not args.overwrite:
            raise CommandError(f"--out {out}: holds a model trained before; give "
                               "--overwrite to replace it")
    if args.refreasoning:
        from benchmarks.gitm_mr.generator import find_file, read_expressions

        path = find_file(Path(args.refreasoning), f"{args.split}_expressions.json")
        if path is None:
            raise CommandError(f"{args.refreasoning}: no {args.split}_expressions.json")
        texts = [r["expression"] for r in read_expressions(path, negative=False).values()]
    else:
        path = Path(args.text)
        if not path.is_file():
            raise CommandError(f"--text {path}: no such file")
        texts = [line.rstrip("\r\n") for _, line in text_lines(path)]
    config = MLMTrainConfig(steps=args.steps, batch_size=args.batch_size, hidden=args.hidden,
                            layers=args.layers, heads=args.heads, ff=2 * args.hidden,
                            min_count=args.min_count, lr=args.lr, seed=args.seed)
    try:
        summary = train_masked_lm(texts, args.out, config, progress=not args.json)
    except (MLMUnavailable, ValueError) as exc:
        raise CommandError(f"{path}: {exc}") from exc
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"wrote {args.out}: {summary['texts']} expressions, vocabulary "
          f"{summary['vocabulary']}, {summary['parameters']:,} parameters, loss "
          f"{summary['first_loss']:.3f} -> {summary['last_loss']:.3f} in "
          f"{summary['seconds']} s")
    return 0


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _print_report(manifest: dict[str, Any]) -> None:
    report = manifest.get("report", {})
    for split, counts in manifest.get("counts", {}).items():
        line = f"  {split:5s}: {counts['pairs']} pairs"
        entry = report.get("splits", report).get(split, {})
        if "relation_tv" in entry:
            line += f"; relation distance (TV) {entry['relation_tv']:.4f}"
        if "relation_tv_uniform" in entry:
            line += f" (uniform draws: {entry['relation_tv_uniform']:.4f})"
        if "bias_classifier" in entry:
            line += f"; text-only classifier {_fmt(entry['bias_classifier']['heldout_accuracy'])}"
        print(line)
    if "bias_classifier" in report:
        print(f"  text-only classifier, held-out accuracy: "
              f"{_fmt(report['bias_classifier']['heldout_accuracy'])} (0.5 = no bias)")
    ppl = report.get("pseudo_perplexity")
    if ppl is not None:
        print(f"  pseudo-perplexity filter: {ppl if isinstance(ppl, str) else json.dumps(ppl)}")


def _stats(args: argparse.Namespace) -> int:
    from benchmarks.gitm_mr.benchmark import GITMMRBenchmark

    root = Path(args.root)
    found = False
    for split in SPLITS:
        if not expression_path(root, split, False).is_file():
            continue
        found = True
        bench = GITMMRBenchmark(root, split)
        pairs = sum(1 for it in bench.items if it["match"] == 0)
        ood = {n: sum(1 for it in bench.items if it["match"] == 1 and it["length"] > n)
               for n in (16, 11)}
        print(f"{split}: {len(bench)} expressions, {pairs} pairs; positives longer than "
              f"16 words: {ood[16]}, than 11: {ood[11]}")
    if not found:
        raise CommandError(f"{root}: no expression/{{split}}_expressions_ori_rel.json")
    return 0
