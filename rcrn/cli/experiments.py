"""``rcrn lengthgen``: the length-generalisation / data-efficiency experiment runner."""

from __future__ import annotations

import argparse
import sys

from rcrn.errors import CommandError

__all__ = ["register", "add_arguments", "main"]

DESCRIPTION = """\
Trains every (model, subset, seed) of an experiment config on the synthetic
benchmark, evaluates each on the whole test split (GITM-MR Match / Grounding /
MRR in-distribution, out-of-distribution and full, and per word-length and
relation-count bucket), and writes OUT/runs/<model>/<subset>/seed<k>/result.json,
OUT/results.csv, OUT/summary.md (mean ± std over seeds, grounding with the match
decision set aside, the verdict on the claim and every model's ID - OOD drop with
95% intervals over seeds) and
OUT/accuracy_vs_{length,relations,train_size}.png.  Runs whose result.json was
made with the same config are not repeated and an interrupted run continues from
its last checkpoint, so an interrupted experiment resumes where it stopped.
Before training, the time of the runs and of the full grid is estimated from a
short probe of every model and printed (and given in summary.md).

key=value overrides: keys starting with an experiment key (models., subsets.,
seeds, keep_checkpoints, buckets., claim., pretrain.) change the experiment
config; any other key (train.steps=100, data.root=...) is applied to every run's
training config and under every pre-training stage's entry (a stage's own
settings win: pretrain.ce_short.train.steps=5000 sets its steps)."""

EPILOG = """\
Examples:
  rcrn lengthgen --out runs/lengthgen                     # the packaged lengthgen.yaml
  rcrn lengthgen --quick                                  # its reduced grid
  rcrn lengthgen --config my.yaml --out runs/lg --models rcrn --seeds 0
  rcrn lengthgen --out runs/lg --dry-run                  # what is done / still to train
  rcrn lengthgen --out runs/lengthgen --jobs 2            # two runs at a time
  rcrn lengthgen --out runs/lg train.steps=200 keep_checkpoints=false"""


def _default_config() -> str:
    from rcrn.cli.lengthgen import default_experiment_path

    return str(default_experiment_path())


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", default=None,
                   help="experiment YAML (default: the packaged lengthgen.yaml)")
    p.add_argument("--out", default=None,
                   help="output folder (default runs/lengthgen, runs/lengthgen-quick with "
                        "--quick)")
    p.add_argument("--quick", action="store_true",
                   help="run the config's reduced 'quick' grid (the packaged one: under 15 "
                        "minutes on a 2-core CPU)")
    p.add_argument("--models", nargs="+", metavar="NAME", help="only these model entries")
    p.add_argument("--subsets", nargs="+", metavar="NAME", help="only these subsets")
    p.add_argument("--seeds", nargs="+", metavar="SEED",
                   help="only these seeds (may name seeds the config does not list)")
    p.add_argument("--rerun-changed", action="store_true",
                   help="retrain runs whose result.json was made with another config "
                        "(default: refuse)")
    p.add_argument("--dry-run", action="store_true",
                   help="list the runs and whether each is done, to train or changed")
    p.add_argument("--aggregate-only", action="store_true",
                   help="train nothing; rebuild results.csv, summary.md and the plots")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="train N runs (and pre-training stages) at a time, each in a process "
                        "of its own with cpu_count // N threads; a run waits for the stage and "
                        "the run it starts from (default: 1, one after the other in this "
                        "process, with progress bars)")
    p.add_argument("--quiet", action="store_true", help="no training progress bars")
    p.add_argument("overrides", nargs="*", help="key=value overrides")


def _split(values: list[str] | None, overrides: list[str]) -> list[str] | None:
    """Items with '=' that argparse gave to a list option are overrides."""
    if values is None:
        return None
    kept = [v for v in values if "=" not in v]
    overrides.extend(v for v in values if "=" in v)
    return kept or None


def _lengthgen(args: argparse.Namespace) -> int:
    from rcrn.cli.lengthgen import run_experiment

    overrides = list(args.overrides)
    models = _split(args.models, overrides)
    subsets = _split(args.subsets, overrides)
    seed_names = _split(args.seeds, overrides)
    seeds = None
    if seed_names:
        try:
            seeds = [int(s) for s in seed_names]
        except ValueError as exc:
            raise CommandError(f"--seeds takes integers, got {seed_names}") from exc
    out = args.out or ("runs/lengthgen-quick" if args.quick else "runs/lengthgen")
    report = run_experiment(args.config or _default_config(), out, overrides=overrides,
                            models=models, subsets=subsets, seeds=seeds,
                            rerun_changed=args.rerun_changed, progress=not args.quiet,
                            dry_run=args.dry_run, aggregate_only=args.aggregate_only,
                            quick=args.quick, jobs=args.jobs)
    if args.dry_run:
        return 0
    print()
    print(report.summary)
    print("outputs: " + ", ".join(str(p) for p in report.files.values()))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lengthgen", help="length-generalisation experiments",
                       description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=_lengthgen)


def main(argv: list[str] | None = None, prog: str = "length_generalization.py") -> int:
    """The same command as a stand-alone program (``scripts/length_generalization.py``)."""
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION,
                                     epilog=EPILOG.replace("rcrn lengthgen", prog),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return _lengthgen(args)
    except CommandError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
