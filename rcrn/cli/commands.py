"""``rcrn train``, ``rcrn evaluate``, ``rcrn demo`` and ``rcrn bench``."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import benchmarks  # noqa: F401  (registers every benchmark's data keys with the config schema)
from rcrn.engine import schema
from rcrn.errors import CommandError

DEFAULT_CONFIG = "synthetic.yaml"
#: Packaged configs used when ``rcrn train --benchmark NAME`` is given no ``--config``.
BENCHMARK_CONFIGS = {"gitm_mr": "gitm_mr.yaml", "vsr": "vsr.yaml"}


def default_config_path(benchmark: str | None = None) -> Path:
    name = BENCHMARK_CONFIGS.get(benchmark or "", DEFAULT_CONFIG)
    return Path(str(resources.files("rcrn") / "configs" / name))


def benchmark_name(name: str | None) -> str | None:
    """``gitm-mr`` and ``gitm_mr`` name the same benchmark."""
    return None if name is None else name.replace("-", "_")


# ---------------------------------------------------------------- data
def synthetic_benchmark(config: dict[str, Any], split: str, subset: str | None = None,
                        progress: bool = True) -> Any:
    """The synthetic split of ``config['data']``, generated when absent, parsed and detected."""
    import parsers
    from benchmarks.synthetic import SyntheticBenchmark, ensure_dataset
    from detectors.components import ComponentsDetector

    data = schema.section(config, "data")
    root = ensure_dataset(data.root, scenes=data.scenes,
                          seed=schema.seed(config) if data.seed is None else data.seed,
                          per_scene=data.per_scene, progress=progress)
    parser = parsers.load(data.parser)
    detector = ComponentsDetector() if data.detector == "components" else None
    try:
        return SyntheticBenchmark(root, split, train_subset=subset, parser=parser.parse,
                                  detector=detector, length=data.length)
    except ValueError as exc:  # an unknown split, subset or length
        raise CommandError(f"synthetic {split}: {exc}") from exc


def gitm_benchmark(config: dict[str, Any], split: str, subset: str | None = None) -> Any:
    """The GITM-MR release split of ``config['data']`` (``root``, ``parser``, ``proposals``,
    ``threshold``, ``rules``: the metrics' rules, ``official`` or ``toolkit``); shipped
    parses and ``vinvl_objects/`` unless the config names others."""
    import parsers
    from benchmarks.base import DataError
    from benchmarks.gitm_mr import GITMMRBenchmark

    data = schema.section(config, "data")
    if not data.root:
        raise CommandError("gitm_mr: no data root; set data.root (or --root)")
    parser = parsers.load(data.parser) if data.parser else None
    try:
        return GITMMRBenchmark(data.root, split, subset=subset, parser=parser,
                               proposals=data.proposals, threshold=data.threshold,
                               rules=data.rules)
    except (DataError, ValueError) as exc:
        raise CommandError(f"gitm_mr {split}: {exc}") from exc


def evaluate_benchmark(model: Any, vocab: Any, bench: Any, batch_size: int,
                       progress: bool = False) -> tuple[dict[str, Any], list[Any], list[Any]]:
    from rcrn.engine.trainer import predict

    problems = list(bench.problems())
    preds = predict(model, problems, vocab, batch_size=batch_size,
                    with_images=model.region_encoder is not None, progress=progress)
    return bench.evaluate(preds), problems, preds


def _write_metrics(out: Path, metrics: dict[str, Any], title: str) -> str:
    from benchmarks.gitm_metrics import format_table

    table = format_table(metrics, title=title)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    (out / "metrics.md").write_text(table, encoding="utf-8")
    return table


def _benchmark_table(metrics: dict[str, Any], title: str, out: Path) -> str:
    from benchmarks.cli import format_table

    table = f"{title} (rates in %)\n\n{format_table(metrics)}\n"
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    (out / "metrics.md").write_text(table, encoding="utf-8")
    return table


def _load_run(benchmark: str, data: Mapping[str, Any], root: Any, split: Any,
              proposals: Any, pixels: bool) -> Any:
    from rcrn.cli.benchmark_runs import load_run

    if not root:
        raise CommandError(f"{benchmark}: no data root; set data.root (or --root)")
    if not split:
        raise CommandError(f"{benchmark}: no split; set data.split / data.eval_split "
                           f"(or --split)")
    return load_run(benchmark, root, str(split), proposals, pixels=pixels,
                    image_size=data.get("image_size"),
                    concept_filter=data.get("concept_filter"))


def _predict_run(model: Any, vocab: Any, run: Any, batch_size: int,
                 progress: bool = False) -> list[Any]:
    from rcrn.engine.trainer import predict

    try:
        return predict(model, run.problems, vocab, batch_size=batch_size,
                       with_images=model.region_encoder is not None, progress=progress)
    except OSError as exc:
        raise CommandError(f"{run.bench.name} {run.bench.split}: an image cannot be read "
                           f"({exc})") from exc


def check_run_folder(out: Path, resume: bool, overwrite: bool) -> None:
    """Where a training run may go: a new run into a missing or empty ``--out`` (or any
    with ``--overwrite``, whose run it replaces), ``--resume`` into one with ``last.pt``.

    Raises:
        CommandError: naming the folder otherwise.
    """
    if resume and overwrite:
        raise CommandError("--resume continues the run in --out and --overwrite starts it "
                           "again: give one of them")
    if out.exists() and not out.is_dir():
        raise CommandError(f"--out {out} is a file, not a folder")
    if resume:
        if not (out / "last.pt").exists():
            again = ("with --overwrite instead" if out.is_dir() and any(out.iterdir())
                     else "without --resume")
            raise CommandError(f"--resume: {out / 'last.pt'} does not exist, so there is "
                               f"nothing to resume (start the run {again})")
        return
    if overwrite or not out.is_dir():
        return
    entries = sorted(p.name for p in out.iterdir())
    if entries:
        shown = ", ".join(entries[:4]) + (f" and {len(entries) - 4} more"
                                          if len(entries) > 4 else "")
        raise CommandError(f"--out {out} is not empty ({shown}): --resume continues the run "
                           "there, --overwrite replaces it; or choose another --out")


def resume_run(trainer: Any, out: Path, resume: bool) -> None:
    """``--resume``: restore ``OUT/last.pt`` into ``trainer`` (an error when it is absent,
    unreadable or of another config; see ``Trainer.resume``)."""
    if not resume:
        return
    if not trainer.resume():
        raise CommandError(f"--resume: {out / 'last.pt'} does not exist, so there is "
                           "nothing to resume (start the run without --resume)")
    if trainer.dist.is_main:
        steps = trainer.steps
        print(f"resumed from {out / 'last.pt'} at step {trainer.step} of {steps}"
              + (" (training had finished; evaluating again)" if trainer.step >= steps
                 else ""))


def _train_benchmark(config: dict[str, Any], out: Path, resume: bool) -> int:
    """``rcrn train`` on VSR or What'sUp: the match objective (no referent boxes)."""
    from rcrn.cli.benchmark_runs import write_predictions
    from rcrn.engine.trainer import Trainer

    data = schema.section(config, "data")
    benchmark = benchmark_name(data.benchmark)
    pixels = bool(config.get("region_encoder"))
    train = _load_run(benchmark, data, data.root, data.split, data.proposals, pixels)
    val = None
    if data.eval_split:
        val = _load_run(benchmark, data, data.root, data.eval_split, data.proposals, pixels)
    eval_bs = schema.section(config, "eval").batch_size
    last: dict[str, Any] = {}

    def evaluate(model: Any, vocab: Any) -> dict[str, Any]:
        last["preds"] = _predict_run(model, vocab, val, eval_bs)
        return val.evaluate(last["preds"])

    trainer = Trainer(config, train.problems, out, evaluate=evaluate if val else None)
    main = trainer.dist.is_main
    resume_run(trainer, out, resume)
    try:
        metrics = trainer.fit()
    except OSError as exc:
        raise CommandError(f"{benchmark} {train.bench.split}: an image cannot be read "
                           f"({exc})") from exc
    if not main:  # rank 0 evaluates and reports
        return 0
    print(f"trained on {len(train.problems)} {benchmark} {train.bench.split} problems")
    if val is not None:
        written = write_predictions(val, last["preds"], out / "eval")
        print(_benchmark_table(metrics, f"RCRN on {benchmark} / {val.bench.split}", out))
        print(f"predictions: {', '.join(str(p) for p in written)}")
    print(f"checkpoint: {out / 'last.pt'}\nmetrics: {out / 'metrics.jsonl'}")
    return 0


def _evaluate_benchmark(args: argparse.Namespace, model: Any, vocab: Any,
                        config: dict[str, Any]) -> int:
    """``rcrn evaluate`` on VSR or What'sUp: official metrics of the match probabilities."""
    from rcrn.cli.benchmark_runs import parse_proposals, write_predictions

    data = schema.section(config, "data")
    same = data.benchmark == args.benchmark
    root = args.root or (data.get("root") if same else None)
    split = args.split or (data.get("eval_split") if same else None)
    proposals = (parse_proposals(args.proposals) if args.proposals
                 else data.get("proposals") if same else None)
    run = _load_run(args.benchmark, data, root, split, proposals,
                    model.region_encoder is not None)
    preds = _predict_run(model, vocab, run, schema.section(config, "eval").batch_size,
                         progress=True)
    try:
        metrics = run.evaluate(preds)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    name = str(run.bench.split).replace("/", "_").replace("\\", "_")
    out = Path(args.out) if args.out else Path(args.checkpoint).parent / f"eval_{name}"
    written = write_predictions(run, preds, out)
    table = _benchmark_table(metrics, f"RCRN on {args.benchmark} / {run.bench.split}", out)
    print(json.dumps(metrics) if args.json else table)
    if not args.json:
        print(f"predictions: {', '.join(str(p) for p in written)}\n"
              f"metrics: {out / 'metrics.json'}")
    return 0


# ------------------------------------------------------------- commands
def _train_gitm(config: dict[str, Any], out: Path, resume: bool) -> int:
    """``rcrn train --benchmark gitm_mr``: RCRN on a release layout's region features."""
    from rcrn.engine import distributed
    from rcrn.engine.trainer import Trainer

    data = schema.section(config, "data")
    if config.get("region_encoder"):
        raise CommandError("gitm_mr trains on the release's region features: remove the "
                           "region_encoder section (e.g. use rcrn/configs/gitm_mr.yaml)")
    bench = gitm_benchmark(config, "train", data.train_subset)
    train = list(bench.problems())
    if not train:
        raise CommandError(f"gitm_mr train ({bench.subset or 'all'}): no pairs")
    dim = next((p.proposals.feature_dim for p in train if p.proposals.feature_dim), 0)
    if not dim:
        raise CommandError(f"{bench.root} train: no proposal carries region features "
                           f"(vinvl_objects/ or data.proposals must give them)")
    model = config.setdefault("model", {})
    if model.get("front") == "uniter":   # the features are UNITER's input
        uniter = model.setdefault("uniter", {})
        if uniter.setdefault("img_dim", dim) != dim:
            raise CommandError(f"model.uniter.img_dim is {uniter['img_dim']} but the release's "
                               f"region features have {dim} values; set "
                               f"model.uniter.img_dim={dim}")
    elif model.setdefault("vis_dim", dim) != dim:
        raise CommandError(f"model.vis_dim is {model['vis_dim']} but the release's region "
                           f"features have {dim} values; set model.vis_dim={dim}")
    eval_split = data.eval_split
    val = gitm_benchmark(config, eval_split) if eval_split else None
    eval_bs = schema.section(config, "eval").batch_size
    trainer = Trainer(config, train, out, evaluate=None if val is None else
                      (lambda m, v: evaluate_benchmark(m, v, val, eval_bs)[0]))
    main = distributed.is_main()
    resume_run(trainer, out, resume)
    metrics = trainer.fit()
    if not main:
        return 0
    print(f"trained on {len(train)} gitm_mr train problems (subset: {bench.subset or 'all'})")
    if val is not None:
        print(_write_metrics(out, metrics, f"RCRN on gitm_mr / {eval_split}"))
    print(f"checkpoint: {out / 'last.pt'}\nmetrics: {out / 'metrics.jsonl'}")
    return 0


def _train_viphy(args: argparse.Namespace) -> int:
    """``rcrn train --benchmark viphy``: the linear probe of ``rcrn viphy train``."""
    from rcrn.cli import build_parser

    if not args.root or not args.task:
        raise CommandError("--benchmark viphy needs --root (the release's dataset directory) "
                           "and --task")
    out = Path(args.out)
    weights = out if out.suffix == ".pt" else out / f"{args.task}-probe.pt"
    argv = ["viphy", "train", "--root", args.root, "--task", args.task, "--out", str(weights),
            "--recipe", args.recipe]
    if args.encoder:
        argv += ["--encoder", args.encoder]
    viphy = build_parser().parse_args(argv)
    return viphy.func(viphy)


def _train(args: argparse.Namespace) -> int:
    from rcrn.engine import distributed
    from rcrn.engine.config import check_config, load_config
    from rcrn.engine.trainer import resolve_device

    args.benchmark = benchmark_name(args.benchmark)
    if args.benchmark == "viphy":
        return _train_viphy(args)
    if args.benchmark:
        args.overrides = [f"data.benchmark={args.benchmark}", *args.overrides]
    if args.root:
        args.overrides.insert(1 if args.benchmark else 0, f"data.root={args.root}")
    if args.train_split:
        args.overrides.insert(0, f"data.train_subset={args.train_split}")
    config = check_config(load_config(args.config or default_config_path(args.benchmark),
                                      args.overrides))
    train = schema.section(config, "train")
    # every rank looks at --out before any joins the process group (and rank 0 writes)
    check_run_folder(Path(args.out), args.resume, args.overwrite)
    # under torchrun: join the process group before the data is made (rank 0 first)
    distributed.init(resolve_device(train.device), train.backend)
    try:
        return _train_run(config, Path(args.out), args.resume)
    finally:
        distributed.teardown()


def _train_synthetic(config: dict[str, Any], out: Path, resume: bool) -> int:
    """``rcrn train`` on the synthetic benchmark (generated when absent), evaluated on val."""
    from rcrn.engine import distributed
    from rcrn.engine.trainer import Trainer

    main = distributed.is_main()
    with distributed.main_first():  # rank 0 generates the dataset when it is absent
        train = list(synthetic_benchmark(config, "train",
                                         schema.section(config, "data").train_subset,
                                         progress=main).problems())
        val = synthetic_benchmark(config, "val", progress=main)
    eval_bs = schema.section(config, "eval").batch_size
    trainer = Trainer(config, train, out,
                      evaluate=lambda m, v: evaluate_benchmark(m, v, val, eval_bs)[0])
    resume_run(trainer, out, resume)
    metrics = trainer.fit()
    if not main:  # rank 0 evaluates and reports
        return 0
    print(_write_metrics(out, metrics, "RCRN on synthetic / val"))
    print(f"checkpoint: {out / 'last.pt'}\nmetrics: {out / 'metrics.jsonl'}")
    return 0


#: How ``rcrn train`` trains on each benchmark of ``data.benchmark``:
#: ``fn(config, out, resume) -> exit code``.
TRAIN_RUNS = {"synthetic": _train_synthetic, "gitm_mr": _train_gitm,
              "vsr": _train_benchmark, "whatsup": _train_benchmark}


def _train_run(config: dict[str, Any], out: Path, resume: bool) -> int:
    benchmark = benchmark_name(schema.section(config, "data").benchmark)
    if benchmark not in TRAIN_RUNS:
        raise CommandError(f"rcrn train runs the {', '.join(TRAIN_RUNS)} benchmarks, not "
                           f"{benchmark!r}; train others from Python with "
                           "rcrn.engine.trainer.Trainer")
    return TRAIN_RUNS[benchmark](config, out, resume)


def _evaluate_viphy(args: argparse.Namespace) -> int:
    """``rcrn evaluate --benchmark viphy``: the ``rcrn viphy evaluate`` report."""
    from rcrn.cli import build_parser

    if not args.root or not args.task:
        raise CommandError("--benchmark viphy needs --root (the release's dataset directory) "
                           "and --task")
    argv = ["viphy", "evaluate", "--root", args.root, "--task", args.task,
            "--split", args.split or "test", "--scorer", args.scorer]
    if args.checkpoint:
        argv += ["--weights", args.checkpoint]
    if args.scenes:
        argv += ["--scenes", args.scenes]
    if args.encoder:
        argv += ["--encoder", args.encoder]
    if args.json:
        argv.append("--json")
    viphy = build_parser().parse_args(argv)
    return viphy.func(viphy)


def _evaluate(args: argparse.Namespace) -> int:
    from rcrn.engine.trainer import load_checkpoint

    args.benchmark = benchmark_name(args.benchmark)
    if args.benchmark == "viphy":
        return _evaluate_viphy(args)
    if not args.checkpoint:
        raise CommandError("--checkpoint is required (a checkpoint written by rcrn train)")
    try:
        model, vocab, config, _ = load_checkpoint(args.checkpoint)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from exc
    if args.benchmark not in EVALUATE_RUNS:
        raise CommandError(f"evaluating on {args.benchmark!r} needs its proposals and features; "
                           "use `rcrn score` with predictions from your model instead")
    return EVALUATE_RUNS[args.benchmark](args, model, vocab, config)


def _evaluate_grounding(args: argparse.Namespace, model: Any, vocab: Any,
                        config: dict[str, Any]) -> int:
    """``rcrn evaluate`` on the synthetic or GITM-MR benchmark: the grounding metrics."""
    from rcrn.engine.trainer import write_predictions

    data = config.setdefault("data", {})
    if args.root:
        data["root"] = args.root
    if args.proposals:
        if args.benchmark != "gitm_mr":
            raise CommandError("--proposals applies to the vsr, whatsup and gitm_mr "
                               "benchmarks")
        data["proposals"] = args.proposals
    args.split = args.split or "test"
    split_of = gitm_benchmark if args.benchmark == "gitm_mr" else synthetic_benchmark
    bench = split_of(config, args.split)
    metrics, _, preds = evaluate_benchmark(model, vocab, bench,
                                           schema.section(config, "eval").batch_size,
                                           progress=True)
    out = Path(args.out) if args.out else Path(args.checkpoint).parent / f"eval_{args.split}"
    write_predictions(out / "predictions.jsonl", preds)
    table = _write_metrics(out, metrics, f"RCRN on {args.benchmark} / {args.split}")
    print(json.dumps(metrics) if args.json else table)
    return 0


#: How ``rcrn evaluate`` scores a checkpoint on each ``--benchmark`` (ViPhy's probe is
#: evaluated by ``rcrn viphy evaluate``): ``fn(args, model, vocab, config) -> exit code``.
EVALUATE_RUNS = {"synthetic": _evaluate_grounding, "gitm_mr": _evaluate_grounding,
                 "vsr": _evaluate_benchmark, "whatsup": _evaluate_benchmark}


def _demo(args: argparse.Namespace) -> int:
    from rcrn.engine.config import check_config, load_config
    from rcrn.engine.trainer import Trainer

    t0 = time.time()
    overrides = list(args.overrides)
    if args.data:
        overrides.append(f"data.root={args.data}")
    config = check_config(load_config(args.config or default_config_path(), overrides))
    out = Path(args.out)
    check_run_folder(out, args.resume, args.overwrite)
    out.mkdir(parents=True, exist_ok=True)
    data = schema.section(config, "data")
    print(f"[1/4] data: {data.root} (generated if absent)")
    train = list(synthetic_benchmark(config, "train", data.train_subset).problems())
    test = synthetic_benchmark(config, "test")
    trainer = Trainer(config, train, out)
    print(f"[2/4] training on {len(train)} short-expression problems ({trainer.steps} steps)")
    resume_run(trainer, out, args.resume)
    trainer.fit()
    print(f"[3/4] evaluating on {len(test)} test problems")
    metrics, problems, preds = evaluate_benchmark(trainer.model, trainer.vocab, test,
                                                  schema.section(config, "eval").batch_size,
                                                  progress=True)
    table = _write_metrics(out, metrics, "RCRN on synthetic / test (trained on short expressions)")
    from rcrn.engine.picture import draw_prediction

    pick = next((i for i, p in enumerate(problems)
                 if p.match == 1 and p.graph.num_relations >= 2), 0)
    picture = out / "prediction.png"
    draw_prediction(problems[pick], preds[pick], picture)
    from rcrn.trace import write_trace

    write_trace(trainer.model, trainer.vocab, problems[pick], out / "trace")
    print("[4/4] done in %.1f min\n" % ((time.time() - t0) / 60))
    print(table)
    print(f"outputs in {out}:\n  metrics: {out / 'metrics.md'}, {out / 'metrics.json'}\n"
          f"  training log: {out / 'metrics.jsonl'}\n  checkpoint: {out / 'last.pt'}\n"
          f"  config: {out / 'config.yaml'}\n  picture: {picture}\n"
          f"  belief-propagation trace (JSON, PNG, HTML): {out / 'trace'}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from rcrn.cli import bench

    def emit(rows: Any) -> list[dict[str, Any]]:
        seen = []
        for row in rows:
            print(json.dumps(row), flush=True)
            seen.append(row)
        return seen

    def markdown(text: str) -> None:
        if args.markdown:
            path = Path(args.markdown)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"markdown: {path}", file=sys.stderr)

    if args.markdown:  # refused before the benchmark runs, not after
        if args.what == "propagation":
            raise CommandError("--markdown applies to the training and pipeline benchmarks")
        if Path(args.markdown).is_dir():
            raise CommandError(f"--markdown {args.markdown}: is a folder; give a file path")
    try:
        if args.what == "propagation":
            emit(bench.bench_propagation(
                quick=args.quick, dims=args.dims, batches=args.batch, proposals=args.proposals,
                nodes=args.nodes, reference=not args.no_reference, unfused=not args.no_unfused,
                min_time=2.0 if args.min_time is None else args.min_time, device=args.device))
        elif args.what == "training":
            rows = emit(bench.bench_training(
                quick=args.quick, dims=args.dims, batches=args.batch, proposals=args.proposals,
                nodes=args.nodes, device=args.device, amp=args.amp,
                min_time=2.0 if args.min_time is None else args.min_time,
                max_iters=args.max_iters))
            markdown(bench.training_markdown(rows))
        elif args.what == "pipeline":
            rows = emit(bench.bench_pipeline(
                quick=args.quick, dims=args.dims,
                batch=args.batch[0] if args.batch else 64,
                proposals=args.proposals[0] if args.proposals else 100,
                nodes=args.nodes[0] if args.nodes else 4, workers=args.workers,
                batches=args.batches, images=args.images,
                float16=args.store_dtype == "float16", device=args.device,
                min_time=2.0 if args.min_time is None else args.min_time))
            markdown(bench.pipeline_markdown(rows))
        else:
            raise CommandError(f"unknown benchmark {args.what!r}")
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    return 0


def _convert_checkpoint(args: argparse.Namespace) -> int:
    from rcrn.models.release import ReleaseCheckpointError, convert_checkpoint

    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise CommandError(f"{out} exists; pass --overwrite to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        config = convert_checkpoint(args.checkpoint, args.vocab, out, tokenizer=args.tokenizer)
    except (ReleaseCheckpointError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    except ValueError as exc:  # the vocabulary file (Vocab names it)
        raise CommandError(str(exc)) from exc
    model = config["model"]
    front = ", UNITER in front" if model.get("front") == "uniter" else ""
    print(f"wrote {out}: the official preset (regions {model['vis_dim']}-d, words "
          f"{model['word_dim']}-d{front}); evaluate with\n  rcrn evaluate --checkpoint {out} "
          "--benchmark gitm_mr --root DATA --split test")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    p = sub.add_parser("convert-checkpoint", formatter_class=fmt,
                       help="a checkpoint of the official GITM-MR release -> the official preset",
                       description="Reads a checkpoint of the official GITM-MR release "
                                   "(SHTUPLUS/GITM-MR: RCRN-T, GloVe words and a BiLSTM, or\n"
                                   "the full model with UNITER in front) and its word "
                                   "vocabulary file, and writes a\ncheckpoint of the official "
                                   "preset (rcrn/configs/official.yaml; with UNITER,\n"
                                   "RCRNConfig.official_uniter()) that rcrn evaluate and "
                                   "load_checkpoint read.\nA missing, unknown or mis-shaped "
                                   "key is an error naming the key.",
                       epilog="Example:\n  rcrn convert-checkpoint --from gitm-mr "
                              "ckpt/model_final.pth \\\n"
                              "      --vocab data/word_embedding/vocabulary_72700.txt "
                              "--out runs/release/last.pt")
    p.add_argument("checkpoint", help="the release's checkpoint (.pth)")
    p.add_argument("--from", dest="source", required=True, choices=["gitm-mr"],
                   help="where the checkpoint comes from")
    p.add_argument("--vocab", required=True,
                   help="the release's vocabulary file (one word a line, <pad> first)")
    p.add_argument("--tokenizer", metavar="DIR",
                   help="local BERT-base-cased tokenizer folder (vocab.txt); needed when the "
                        "checkpoint holds UNITER")
    p.add_argument("--out", required=True, help="the checkpoint to write")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.set_defaults(func=_convert_checkpoint)

    p = sub.add_parser("train", help="train RCRN from a config", formatter_class=fmt,
                       description="Train RCRN; writes config.yaml, metrics.jsonl, last.pt "
                                   "and TensorBoard logs into --out.\n"
                                   "last.pt is written every train.checkpoint_every steps "
                                   "(default 200) and at the end;\n--resume continues a "
                                   "killed run from it exactly.\n\n"
                                   "Under torchrun it trains on every process with "
                                   "DistributedDataParallel (gloo on CPU, NCCL on CUDA;\n"
                                   "train.backend overrides); train.batch_size is the global "
                                   "batch, split across the processes;\nrank 0 logs, "
                                   "checkpoints and evaluates.  train.amp=bf16 runs the forward "
                                   "under bfloat16\nautocast; train.compile=true (or a "
                                   "backend name, e.g. aot_eager) applies torch.compile.",
                       epilog="Examples:\n  rcrn train --config rcrn/configs/synthetic.yaml "
                              "--out runs/syn train.steps=500\n"
                              "  rcrn train --config rcrn/configs/synthetic.yaml "
                              "--out runs/syn --resume train.steps=500   # after a kill\n"
                              "  rcrn train --config rcrn/configs/vsr.yaml --out runs/vsr "
                              "data.root=data/vsr \\\n"
                              "      data.proposals=data/vsr/instances_train2017.json\n"
                              "  rcrn train --benchmark gitm_mr --root data/gitm-mr "
                              "--train-split len16 --out runs/gitm\n"
                              "  torchrun --nproc_per_node 2 -m rcrn train --out runs/ddp "
                              "train.batch_size=64   # 2 CPU processes\n"
                              "  torchrun --nproc_per_node 4 -m rcrn train --out runs/ddp "
                              "train.device=cuda train.amp=bf16")
    p.add_argument("--config", help="YAML config (default: the packaged synthetic.yaml, or "
                                     "gitm_mr.yaml / vsr.yaml for those --benchmark values)")
    p.add_argument("--out", default="runs/train", help="output folder")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in OUT from OUT/last.pt (written every "
                        "train.checkpoint_every steps and at the end) with the same config; "
                        "only train.steps and train.checkpoint_every may change")
    p.add_argument("--overwrite", action="store_true",
                   help="start a new run in an OUT that is not empty, replacing the run "
                        "there (a new run into a non-empty OUT is refused without it)")
    p.add_argument("--benchmark", help="synthetic, gitm_mr, vsr, whatsup (same as "
                                       "data.benchmark=...) or viphy (the linear probe of "
                                       "`rcrn viphy train`)")
    p.add_argument("--root", help="dataset root (same as data.root=...; viphy: the release's "
                                  "dataset directory)")
    p.add_argument("--train-split", metavar="SUBSET",
                   help="training subset (same as data.train_subset=...): len16, len11 or "
                        "uniform for gitm_mr, len_words or len_rels for synthetic")
    vp = p.add_argument_group("viphy", "the probe (`rcrn viphy train` has every option); "
                                       "it is saved as OUT/TASK-probe.pt, or OUT if it ends "
                                       "in .pt")
    vp.add_argument("--task", help="spatial, size, size_sub, size_trans or color")
    vp.add_argument("--encoder", help="frozen text encoder: hash or minilm")
    vp.add_argument("--recipe", default="paper", choices=["paper", "fast"],
                    help="training recipe (default: the paper's, Adam 1e-4, batch 8)")
    p.add_argument("overrides", nargs="*", help="key=value config overrides")
    p.set_defaults(func=_train)

    p = sub.add_parser("evaluate", help="evaluate a checkpoint", formatter_class=fmt,
                       description="Match / Grounding / MRR (in-, out-of-distribution, full, "
                                   "and oracle variants) as Markdown and JSON.",
                       epilog="Examples:\n  rcrn evaluate --checkpoint runs/demo/last.pt "
                              "--benchmark synthetic --split test\n"
                              "  rcrn evaluate --checkpoint runs/vsr/last.pt --benchmark vsr "
                              "--root data/vsr --split random/test \\\n"
                              "      --proposals data/vsr/instances_train2017.json\n"
                              "  rcrn evaluate --checkpoint runs/gitm/last.pt --benchmark gitm_mr "
                              "--split test\n"
                              "  rcrn evaluate --benchmark viphy --root data/viphy/dataset "
                              "--task spatial --scorer prior")
    p.add_argument("--checkpoint", help="a checkpoint of rcrn train (viphy: the probe "
                                        "weights of rcrn viphy train, for --scorer probe)")
    p.add_argument("--benchmark", default="synthetic",
                   help="synthetic, gitm_mr, vsr, whatsup or viphy")
    p.add_argument("--split", help="split to evaluate (default: test for synthetic and "
                                   "gitm_mr, the checkpoint's data.eval_split for vsr / "
                                   "whatsup)")
    p.add_argument("--root", help="dataset root (default: the one in the checkpoint's config)")
    p.add_argument("--proposals", help="vsr / whatsup: a COCO instances_*.json, or "
                                       "FORMAT:PATH of a detectors source; gitm_mr: a "
                                       "vinvl_objects folder (default: the checkpoint's "
                                       "data.proposals)")
    p.add_argument("--out", help="output folder (default: next to the checkpoint)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    vp = p.add_argument_group("viphy", "ViPhy scorers (the report of `rcrn viphy evaluate`, "
                                       "which has every option)")
    vp.add_argument("--task", help="spatial, size, size_sub, size_trans or color")
    vp.add_argument("--scorer", default="probe", help="probe, prior, kg or scenes")
    vp.add_argument("--scenes", metavar="DIR", help="annotated scenes for --scorer scenes")
    vp.add_argument("--encoder", help="probe text encoder: hash or minilm")
    p.set_defaults(func=_evaluate)

    p = sub.add_parser("demo", help="the main job: generate, train, evaluate, draw",
                       formatter_class=fmt,
                       description="Generates the synthetic benchmark if absent, trains the "
                                   "default config on short expressions, evaluates on the test "
                                   "split, draws one prediction and writes its trace.",
                       epilog="Example: rcrn demo --out runs/demo train.steps=300")
    p.add_argument("--out", default="runs/demo",
                   help="output folder (default runs/demo); one that is not empty needs "
                        "--resume or --overwrite")
    p.add_argument("--resume", action="store_true",
                   help="continue the demo's training in OUT from OUT/last.pt (same "
                        "config and overrides)")
    p.add_argument("--overwrite", action="store_true",
                   help="run the demo again in an OUT that holds an earlier run")
    p.add_argument("--data", help="dataset root (default: data/synthetic)")
    p.add_argument("--config", help="YAML config (default: the packaged synthetic.yaml)")
    p.add_argument("overrides", nargs="*", help="key=value config overrides")
    p.set_defaults(func=_demo)

    p = sub.add_parser("bench", help="speed benchmarks (JSON rows)", formatter_class=fmt,
                       description="Speed benchmarks, one JSON row per configuration on "
                                   "stdout.\n"
                                   "  propagation  forward+backward samples/s of the batched "
                                   "model against the per-tree reference\n"
                                   "  training     training-step samples/s and peak memory "
                                   "against batch, proposals, tree size, device, amp\n"
                                   "  pipeline     read + collate per batch from a feature "
                                   "store (0/1/2 workers) against the training step",
                       epilog="Examples:\n  rcrn bench propagation --quick\n"
                              "  rcrn bench training --dims synthetic --batch 16 64 "
                              "--proposals 36 100 126 --markdown training.md\n"
                              "  rcrn bench training --device cuda --amp none bf16\n"
                              "  rcrn bench pipeline --dims paper synthetic --markdown "
                              "pipeline.md")
    p.add_argument("what", choices=["propagation", "training", "pipeline"])
    p.add_argument("--quick", action="store_true", help="a small grid for a smoke run")
    p.add_argument("--dims", "--preset", nargs="*", default=None,
                   help="model presets: synthetic, paper (the paper's sizes), official "
                        "(RCRNConfig.official()) (default: synthetic and paper)")
    p.add_argument("--batch", nargs="*", type=int, default=None,
                   help="batch sizes (default 16 64; pipeline: the first, default 64)")
    p.add_argument("--proposals", nargs="*", type=int, default=None,
                   help="proposals per image (default: propagation 36 100, training 36 100 "
                        "126; pipeline: the first, default 100)")
    p.add_argument("--nodes", nargs="*", type=int, default=None,
                   help="entities per tree (default 2 4 8 16; pipeline: the first, default 4)")
    p.add_argument("--no-reference", action="store_true",
                   help="propagation: skip the per-tree reference")
    p.add_argument("--no-unfused", action="store_true",
                   help="propagation: skip the unfused pair projection (the official "
                        "arithmetic)")
    p.add_argument("--min-time", type=float, default=None,
                   help="seconds to time each row (default 2)")
    p.add_argument("--max-iters", type=int, default=30,
                   help="training: at most this many timed steps per row")
    p.add_argument("--device", default="cpu",
                   help="cpu, cuda, cuda:1, ...; training also takes a list: cpu,cuda")
    p.add_argument("--amp", nargs="*", default=["none"], choices=["none", "bf16"],
                   help="training: autocast dtypes to run (default: none)")
    p.add_argument("--markdown", metavar="PATH",
                   help="training / pipeline: also write Markdown tables to PATH")
    p.add_argument("--workers", nargs="*", type=int, default=None,
                   help="pipeline: DataLoader worker counts (default 0 1 2)")
    p.add_argument("--batches", type=int, default=8,
                   help="pipeline: batches per timed epoch (default 8)")
    p.add_argument("--images", type=int, default=None,
                   help="pipeline: images in the temporary store (default: the batch size)")
    p.add_argument("--store-dtype", choices=["float16", "float32"], default="float16",
                   help="pipeline: feature dtype of the temporary store (read as float32)")
    p.set_defaults(func=_bench)


if __name__ == "__main__":
    from rcrn.cli import main

    sys.exit(main(sys.argv[1:]))
