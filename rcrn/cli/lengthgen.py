"""Length-generalisation and data-efficiency experiments on the synthetic benchmark.

The paper's claim is that a modular reasoner trained on short expressions
generalises to long ones, and learns from little data, where cross-encoders do
not.  An *experiment config* names the models, the training subsets and the
seeds; every (model, subset, seed) is trained with :class:`rcrn.engine.trainer.Trainer`
and evaluated on the full test split, and the results are gathered into a CSV,
a Markdown summary (mean ± std over seeds) and plots::

    base: synthetic.yaml              # training config (relative to this file, else packaged)
    overrides: {train: {steps: 800}}  # merged over base for every run
    models:                           # name -> partial training config merged over base
      rcrn: {}
      no_top_down: {model: {program: "..."}}
      cross_encoder: {model: {arch: cross_encoder, mil: true}}
    subsets:                          # name -> how the training set is chosen
      len_words: {train_subset: len_words}   # short expressions by words (Train-Len)
      len_rels: {train_subset: len_rels}     # few relations
      uniform_10: {fraction: 0.10}           # a seeded 10% of the train pairs
    seeds: [0, 1, 2]
    keep_checkpoints: true            # false: delete each run's last.pt once evaluated
    buckets: {word_bin: 4}            # width of the word-length buckets (1: exact lengths)
    claim: {model: rcrn, baseline: cross_encoder}   # the pair compared in summary.md
    pretrain:                         # name -> partial training config of a first stage
      ce_short: {model: {arch: cross_encoder}, data: {train_subset: len_words},
                 train: {steps: 20000}}

A model entry with ``pretrained: NAME`` fine-tunes: each of its runs starts every
weight (``train.init``) from the ``pretrain`` stage ``NAME`` trained with the run's
seed, which is trained once per seed (its own data and subset, whatever the run's
subset) into ``pretrain/<name>/seed<k>/`` and shared by every model naming it.

A model entry whose ``model.arch`` differs from the base's (``"rcrn"`` when
unset) *replaces* the base's ``model`` section instead of merging into it, since
other model types have other fields.  Outputs under ``OUT``:

* ``runs/<model>/<subset>/seed<k>/``: the Trainer's files (``config.yaml``,
  ``metrics.jsonl``, ``last.pt``), ``predictions.jsonl`` (test split) and
  ``result.json`` (the run's config, training-set size, times, GITM-MR metrics
  in- / out-of-distribution / full, and per word-length and per relation-count
  buckets).  A run whose ``result.json`` was made with the same config is not
  repeated.
* ``pretrain/<name>/seed<k>/``: the Trainer's files of a pre-training stage and
  ``pretrain.json`` (its config, steps, training-set size and match-head start).
* ``results.csv`` (one row per run and bucket), ``summary.md``,
  ``accuracy_vs_length.png``, ``accuracy_vs_relations.png``,
  ``accuracy_vs_train_size.png`` and ``experiment.yaml`` (the resolved experiment).
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import json
import math
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

import benchmarks  # noqa: F401  (registers every benchmark's data keys with the config schema)
from rcrn.engine import schema
from rcrn.engine.config import (
    ConfigError,
    apply_overrides,
    check_config,
    load_config,
    merge,
    read_yaml,
)
from rcrn.errors import RcrnError

__all__ = [
    "Experiment",
    "ExperimentReport",
    "RunOutcome",
    "load_experiment",
    "run_config",
    "select_fraction",
    "evaluate_predictions",
    "bucket_metrics",
    "run_experiment",
    "aggregate",
    "default_experiment_path",
    "Claim",
    "ci95",
]

DEFAULT_EXPERIMENT = "lengthgen.yaml"
#: Top-level keys of an experiment config.
EXPERIMENT_KEYS = ("base", "overrides", "models", "subsets", "seeds", "keep_checkpoints",
                   "buckets", "claim", "quick", "pretrain")
#: Keys of the ``quick`` section: the reduced grid of ``rcrn lengthgen --quick``.
QUICK_KEYS = ("models", "subsets", "seeds", "overrides")
#: Training steps the time estimate measures per model (after one untimed step).
PROBE_STEPS = 3
#: Sections of a training config an entry may set besides the ones its base has.
TRAINING_SECTIONS = ("seed", "data", "model", "region_encoder", "loss", "train", "eval", "words")
SUBSET_KEYS = ("train_subset", "fraction", "length")
#: Parts of the test split, in table order.
PARTS = ("in_distribution", "out_of_distribution", "full")
PART_TITLES = {"in_distribution": "ID", "out_of_distribution": "OOD", "full": "Full"}
RATES = ("match", "grounding", "mrr", "grounding_oracle", "mrr_oracle")
RATE_TITLES = {"match": "Match", "grounding": "Grounding", "mrr": "MRR",
               "grounding_oracle": "Grounding (oracle)", "mrr_oracle": "MRR (oracle)"}
THRESHOLD_KEYS = {"words": "max_words", "relations": "max_relations"}
CSV_FIELDS = ("model", "subset", "seed", "train_subset", "fraction", "train_size", "train_pairs",
              "bucket_kind", "bucket", "lo", "hi", "in_distribution", "n", "n_matched",
              "n_mismatched") + RATES + ("steps", "match_start", "wall_time_s", "train_time_s",
                                         "eval_time_s")
#: The training match loss (binary cross-entropy; chance is log 2 = 0.693) below which a
#: run's match head counts as started (``match_start``).
MATCH_START_LOSS = 0.6
#: Files of a run directory that a retraining removes first (the Trainer appends to logs).
RUN_FILES = ("result.json", "predictions.jsonl", "metrics.jsonl", "config.yaml", "last.pt",
             "last.pt.tmp")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_FULL_TRAIN = ("all", "full", "none")


def default_experiment_path() -> Path:
    return Path(str(resources.files("rcrn") / "configs" / DEFAULT_EXPERIMENT))


# ------------------------------------------------------------------ config
@dataclass(frozen=True)
class Claim:
    """The paper's claim as the summary's verdict judges it (points, on the 0-100 scale).

    On every subset trained on short expressions (a ``train_subset``), the verdict says
    whether ``model``'s out-of-distribution drop (ID - OOD) is at most ``max_drop`` on
    Match and on Grounding, and whether its OOD figures are at least ``min_margin``
    above ``baseline``'s; each by the 95% confidence interval over seeds (the t
    interval of the mean, paired by seed for the margin).  The margin is judged only
    when the baseline learned: its in-distribution Match and Grounding are at least
    ``min_id``.
    """

    model: str = "rcrn"
    baseline: str = "cross_encoder"
    max_drop: float = 5.0
    min_margin: float = 10.0
    min_id: float = 85.0


@dataclass
class Experiment:
    """A resolved experiment config (see the module docstring for the YAML form).

    Attributes:
        base: the training config every run starts from (base file, ``overrides``
            section and command-line training overrides applied).
        models: name -> partial training config (``{}`` for the base as it is).
        subsets: name -> ``{"train_subset": str | None, "fraction": float | None,
            "length": "words" | "relations"}``; ``length`` splits the test set into
            in- and out-of-distribution.
        seeds: the seeds every (model, subset) is trained with.
        keep_checkpoints: keep each run's ``last.pt``.
        word_bin: width of the word-length buckets (aligned so that the word
            threshold is a bucket edge).
        claim: the claim the summary's verdict judges (:class:`Claim`).
        init_from: model -> the model whose run of the same subset and seed initialises
            its vision-language layers (``model.vl.init``; an entry's ``init_from``).
        bases: model -> its own training config, for an entry that names a ``base`` of
            its own (e.g. ``official.yaml``), with ``overrides`` and the command-line
            training overrides applied as to ``base``.
        pretrain: name -> partial training config of a pre-training stage (merged over
            ``base`` like a model entry; its ``data.train_subset`` chooses its data).
        pretrained: model -> the pretrain stage its runs start from (``train.init``;
            an entry's ``pretrained``).
        quick: the reduced grid of ``--quick`` (``models``, ``subsets``, ``seeds``,
            ``overrides``), or None.
        source: where the config came from.
    """

    base: dict[str, Any]
    models: dict[str, dict[str, Any]]
    subsets: dict[str, dict[str, Any]]
    seeds: list[int]
    keep_checkpoints: bool = True
    word_bin: int = 4
    claim: Claim = field(default_factory=lambda: Claim())
    init_from: dict[str, str] = field(default_factory=dict)
    bases: dict[str, dict[str, Any]] = field(default_factory=dict)
    pretrain: dict[str, dict[str, Any]] = field(default_factory=dict)
    pretrained: dict[str, str] = field(default_factory=dict)
    quick: dict[str, Any] | None = None
    source: str = "<dict>"

    def to_dict(self) -> dict[str, Any]:
        models = {m: {**e, **({"init_from": self.init_from[m]} if m in self.init_from
                              else {}),
                      **({"pretrained": self.pretrained[m]} if m in self.pretrained
                         else {})} for m, e in self.models.items()}
        return {"source": self.source, "base": self.base, "model_bases": self.bases,
                "models": models, "pretrain": self.pretrain,
                "subsets": self.subsets, "seeds": self.seeds,
                "keep_checkpoints": self.keep_checkpoints,
                "buckets": {"word_bin": self.word_bin}, "claim": asdict(self.claim),
                **({"quick": self.quick} if self.quick is not None else {})}

    def reduced(self) -> Experiment:
        """The ``quick`` grid: its models, subsets and seeds, its overrides merged over
        the base (``rcrn lengthgen --quick``)."""
        if self.quick is None:
            raise ConfigError(f"{self.source}: no 'quick' section, so --quick has no grid "
                              "to run")
        q = self.quick
        models = {m: self.models[m] for m in q.get("models", self.models)}
        base = merge(self.base, q.get("overrides") or {})
        check_config(copy.deepcopy(base))
        bases = {m: merge(b, q.get("overrides") or {}) for m, b in self.bases.items()
                 if m in models}
        for b in bases.values():
            check_config(copy.deepcopy(b))
        pretrained = {m: n for m, n in self.pretrained.items() if m in models}
        pretrain = {n: merge(self.pretrain[n], q.get("overrides") or {})
                    for n in dict.fromkeys(pretrained.values())}
        return dataclasses.replace(
            self, base=base, models=models, bases=bases, pretrain=pretrain,
            pretrained=pretrained,
            subsets={s: self.subsets[s] for s in q.get("subsets", self.subsets)},
            seeds=list(q.get("seeds", self.seeds)),
            init_from={m: src for m, src in self.init_from.items() if m in models},
            quick=None, source=f"{self.source} (quick)")


def _resolve_base(base: Any, where: Path, name: str) -> Path:
    if not isinstance(base, (str, Path)) or not str(base):
        raise ConfigError(f"{name}: 'base' must be the path of a training config, got {base!r}")
    path = Path(base)
    if not path.is_absolute():
        local = where / path
        packaged = Path(str(resources.files("rcrn") / "configs")) / path
        path = local if local.exists() or not packaged.exists() else packaged
    if not path.exists():
        raise ConfigError(f"{name}: base config {base!r} not found (looked in {where} and "
                          "among the packaged configs)")
    return path


def _check_sections(where: str, entry: dict[str, Any], base: dict[str, Any]) -> None:
    known = set(TRAINING_SECTIONS) | set(base)
    unknown = sorted(str(k) for k in entry if k not in known)
    if unknown:
        raise ConfigError(f"{where}: unknown training-config section(s) {unknown}; "
                          f"known: {sorted(known)}")
    for key in ("data", "model", "train", "loss", "eval"):
        if key in entry and entry[key] is not None and not isinstance(entry[key], dict):
            raise ConfigError(f"{where}.{key}: must be a mapping, got {entry[key]!r}")


def _check_name(kind: str, name: Any) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"{kind}: name {name!r} must be letters, digits, '_', '.', '+' or "
                          "'-' (it names a folder)")
    return name


def _subset_spec(name: str, spec: Any) -> dict[str, Any]:
    from benchmarks.synthetic.splits import TRAIN_SUBSETS

    where = f"subsets.{name}"
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: expected a mapping such as {{train_subset: len_words}} "
                          f"or {{fraction: 0.1}}, got {spec!r}")
    unknown = sorted(str(k) for k in spec if k not in SUBSET_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; known: {list(SUBSET_KEYS)}")
    subset = spec.get("train_subset")
    if isinstance(subset, str) and subset.lower() in _FULL_TRAIN:
        subset = None
    if subset is not None and subset not in TRAIN_SUBSETS:
        raise ConfigError(f"{where}.train_subset: {subset!r} is not one of "
                          f"{sorted(TRAIN_SUBSETS)} (or null for the whole train split)")
    fraction = spec.get("fraction")
    if fraction is not None:
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) \
                or not 0 < fraction <= 1:
            raise ConfigError(f"{where}.fraction: must be a number in (0, 1], got {fraction!r}")
        fraction = float(fraction)
    length = spec.get("length") or ("relations" if subset == "len_rels" else "words")
    if length not in THRESHOLD_KEYS:
        raise ConfigError(f"{where}.length: must be 'words' or 'relations', got {length!r}")
    return {"train_subset": subset, "fraction": fraction, "length": length}


def _split_overrides(overrides: Sequence[str]) -> tuple[list[str], list[str]]:
    """Command-line ``key=value`` items: (experiment-level ones, training-config ones)."""
    exp, train = [], []
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not key=value")
        head = item.split("=", 1)[0].strip().split(".")[0]
        (exp if head in EXPERIMENT_KEYS else train).append(item)
    return exp, train


def load_experiment(source: str | Path | dict[str, Any],
                    overrides: Sequence[str] = ()) -> Experiment:
    """Read and check an experiment config.

    Args:
        source: a YAML path or an already-parsed mapping (its ``base`` is then
            relative to the working directory, else a packaged config).
        overrides: ``key=value`` items.  Keys starting with an experiment key
            (``models.rcrn.train.lr=0.002``, ``keep_checkpoints=false``,
            ``subsets.uniform_10.fraction=0.2``) change the experiment config; any
            other (``train.steps=100``, ``data.root=...``) is a training-config
            override applied to every run (after the ``overrides`` section, before
            the model entries).

    Raises:
        ConfigError: naming the file and the key that cannot be used.
    """
    if isinstance(source, dict):
        data, where, name = copy.deepcopy(source), Path.cwd(), "experiment config"
    else:
        path = Path(source)
        data = read_yaml(path, "experiment config")
        where, name = path.parent, str(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{name}: an experiment config is a mapping at the top level")
    exp_over, train_over = _split_overrides(list(overrides))
    data = apply_overrides(data, exp_over)
    unknown = sorted(str(k) for k in data if k not in EXPERIMENT_KEYS)
    if unknown:
        raise ConfigError(f"{name}: unknown key(s) {unknown}; an experiment config has "
                          f"{list(EXPERIMENT_KEYS)} (training settings go under 'overrides' "
                          "or a model entry)")
    base_path = _resolve_base(data.get("base", "synthetic.yaml"), where, name)
    base_file = load_config(base_path)
    section = data.get("overrides") or {}
    if not isinstance(section, dict):
        raise ConfigError(f"{name}: 'overrides' must be a mapping of training-config "
                          f"sections, got {section!r}")
    _check_sections("overrides", section, base_file)
    base = apply_overrides(merge(base_file, section), train_over)
    _check_sections("command-line overrides", base, base_file)
    check_config(base)
    benchmark = schema.section(base, "data").benchmark
    if benchmark != "synthetic":
        raise ConfigError(f"{name}: length-generalisation experiments run on the synthetic "
                          f"benchmark, but data.benchmark is {benchmark!r}")

    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise ConfigError(f"{name}: 'models' must map at least one model name to a partial "
                          f"training config (e.g. models: {{rcrn: {{}}}}), got {models!r}")
    pretrain = data.get("pretrain") or {}
    if not isinstance(pretrain, dict):
        raise ConfigError(f"{name}: 'pretrain' must map stage names to partial training "
                          f"configs, got {pretrain!r}")
    for stage, entry in pretrain.items():
        _check_name("pretrain", stage)
        if not isinstance(entry, dict):
            raise ConfigError(f"pretrain.{stage}: must be a mapping (a partial training "
                              f"config), got {entry!r}")
        _check_sections(f"pretrain.{stage}", entry, base)
    pretrain = copy.deepcopy(pretrain)
    resolved_models: dict[str, dict[str, Any]] = {}
    init_from: dict[str, str] = {}
    pretrained: dict[str, str] = {}
    bases: dict[str, dict[str, Any]] = {}
    for model_name, entry in models.items():
        _check_name("models", model_name)
        entry = {} if entry is None else entry
        if not isinstance(entry, dict):
            raise ConfigError(f"models.{model_name}: must be a mapping (a partial training "
                              f"config), got {entry!r}")
        entry = dict(entry)
        own_base = entry.pop("base", None)
        if own_base is not None:
            own = load_config(_resolve_base(own_base, where, f"models.{model_name}.base"))
            bases[model_name] = apply_overrides(merge(own, section), train_over)
            check_config(bases[model_name])
        stage = entry.pop("pretrained", None)
        if stage is not None:
            if stage not in pretrain:
                raise ConfigError(f"models.{model_name}.pretrained: {stage!r} is not a stage "
                                  f"of the 'pretrain' section ({', '.join(pretrain) or 'none'})")
            pretrained[model_name] = stage
        source = entry.pop("init_from", None)
        if source is not None:
            if source not in models or source == model_name:
                raise ConfigError(f"models.{model_name}.init_from: {source!r} is not another "
                                  f"model of this experiment ({', '.join(map(str, models))})")
            init_from[model_name] = source
        _check_sections(f"models.{model_name}", entry, bases.get(model_name, base))
        resolved_models[model_name] = copy.deepcopy(entry)
    for model_name, source in init_from.items():
        if source in init_from:
            raise ConfigError(f"models.{model_name}.init_from: {source!r} is itself "
                              "initialised from another model; name a model trained from "
                              "scratch")

    subsets = data.get("subsets")
    if not isinstance(subsets, dict) or not subsets:
        raise ConfigError(f"{name}: 'subsets' must map at least one name to a subset "
                          f"(e.g. subsets: {{len_words: {{train_subset: len_words}}}}), "
                          f"got {subsets!r}")
    resolved_subsets = {_check_name("subsets", k): _subset_spec(k, v) for k, v in subsets.items()}

    seeds = data.get("seeds", [0])
    seeds = [seeds] if isinstance(seeds, int) and not isinstance(seeds, bool) else seeds
    if (not isinstance(seeds, list) or not seeds
            or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds)):
        raise ConfigError(f"{name}: 'seeds' must be a non-empty list of integers, got {seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"{name}: 'seeds' lists a seed twice: {seeds}")

    keep = data.get("keep_checkpoints", True)
    if not isinstance(keep, bool):
        raise ConfigError(f"{name}: 'keep_checkpoints' must be true or false, got {keep!r}")
    buckets = data.get("buckets") or {}
    if not isinstance(buckets, dict) or set(buckets) - {"word_bin"}:
        raise ConfigError(f"{name}: 'buckets' takes only word_bin (e.g. buckets: "
                          f"{{word_bin: 4}}), got {buckets!r}")
    word_bin = buckets.get("word_bin", 4)
    if isinstance(word_bin, bool) or not isinstance(word_bin, int) or word_bin < 1:
        raise ConfigError(f"{name}: buckets.word_bin must be an integer >= 1, got {word_bin!r}")
    exp = Experiment(base=base, models=resolved_models, subsets=resolved_subsets,
                     seeds=list(seeds), keep_checkpoints=keep, word_bin=word_bin,
                     claim=_claim(name, data.get("claim")), init_from=init_from, bases=bases,
                     pretrain=pretrain, pretrained=pretrained,
                     quick=_quick(name, data.get("quick"), resolved_models, resolved_subsets,
                                  base, init_from),
                     source=name)
    return exp


def _quick(name: str, quick: Any, models: dict[str, Any], subsets: dict[str, Any],
           base: dict[str, Any], init_from: dict[str, str]) -> dict[str, Any] | None:
    if quick is None:
        return None
    if not isinstance(quick, dict) or set(quick) - set(QUICK_KEYS):
        raise ConfigError(f"{name}: 'quick' takes {', '.join(QUICK_KEYS)} (the reduced grid "
                          f"of --quick), got {quick!r}")
    for kind, known in (("models", models), ("subsets", subsets)):
        chosen = quick.get(kind)
        if chosen is not None and (not isinstance(chosen, list) or not chosen
                                   or any(c not in known for c in chosen)):
            raise ConfigError(f"{name}: quick.{kind} must list some of {list(known)}, got "
                              f"{chosen!r}")
    chosen = quick.get("models") or list(models)
    for model in chosen:
        if model in init_from and init_from[model] not in chosen:
            raise ConfigError(f"{name}: quick.models lists {model} but not "
                              f"{init_from[model]}, whose runs initialise it")
    seeds = quick.get("seeds")
    if seeds is not None and (not isinstance(seeds, list) or not seeds or any(
            isinstance(k, bool) or not isinstance(k, int) for k in seeds)):
        raise ConfigError(f"{name}: quick.seeds must be a non-empty list of integers, got "
                          f"{seeds!r}")
    overrides = quick.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise ConfigError(f"{name}: quick.overrides must be a mapping of training-config "
                          f"sections, got {overrides!r}")
    _check_sections("quick.overrides", overrides, base)
    return copy.deepcopy(quick)


def _claim(name: str, claim: Any) -> Claim:
    claim = {} if claim is None else claim
    fields_ = {f.name: f.type for f in dataclasses.fields(Claim)}
    if not isinstance(claim, dict) or set(claim) - set(fields_):
        raise ConfigError(f"{name}: 'claim' takes {', '.join(fields_)} (e.g. claim: "
                          f"{{model: rcrn, baseline: cross_encoder, max_drop: 5}}), "
                          f"got {claim!r}")
    for key, value in claim.items():
        text = key in ("model", "baseline")
        ok = (isinstance(value, str) and bool(value) if text else
              isinstance(value, (int, float)) and not isinstance(value, bool)
              and math.isfinite(value) and value >= 0)
        if not ok:
            raise ConfigError(f"{name}: claim.{key} must be "
                              f"{'a model name' if text else 'a number of points >= 0'}, "
                              f"got {value!r}")
    return Claim(**claim)


def run_config(exp: Experiment, model: str, subset: str, seed: int) -> dict[str, Any]:
    """The training config of one run: base, model entry, subset and seed.

    The entry is merged over the base, except that an entry whose ``model.arch``
    differs from the base's (``"rcrn"`` when unset) replaces the ``model`` section.
    ``data.seed`` is pinned to the base's data seed, so the dataset (generated
    when absent) does not depend on the run's seed.
    """
    cfg = _entry_config(exp, exp.bases.get(model, exp.base), exp.models[model], seed)
    spec = exp.subsets[subset]
    cfg["data"]["train_subset"] = spec["train_subset"]
    cfg["data"]["length"] = spec["length"]
    return cfg


def pretrain_config(exp: Experiment, stage: str, seed: int) -> dict[str, Any]:
    """The training config of pre-training stage ``stage`` for ``seed``: its entry merged
    over the base as a model entry is; its own ``data`` (``train_subset`` included)."""
    return _entry_config(exp, exp.base, exp.pretrain[stage], seed)


def _entry_config(exp: Experiment, base: dict[str, Any], entry: dict[str, Any], seed: int
                  ) -> dict[str, Any]:
    """``entry`` merged over ``base`` (an entry of another ``model.arch`` replaces the
    ``model`` section), with the seed, ``data.seed`` pinned to the base's and no
    evaluation during training."""
    cfg = copy.deepcopy(base)
    base_arch = (cfg.get("model") or {}).get("arch", "rcrn")
    entry_model = entry.get("model")
    if isinstance(entry_model, dict) and entry_model.get("arch", base_arch) != base_arch:
        cfg = merge(cfg, {k: v for k, v in entry.items() if k != "model"})
        cfg["model"] = copy.deepcopy(entry_model)
    else:
        cfg = merge(cfg, entry)
    cfg.setdefault("data", {}).setdefault("seed", schema.seed(exp.base))
    cfg["seed"] = int(seed)
    cfg.setdefault("train", {})["eval_every"] = 0
    return cfg


def _run_key(cfg: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """What a run's result depends on (JSON-normalised, for comparing with result.json)."""
    return json.loads(json.dumps({"config": cfg, "subset": spec}, sort_keys=True, default=str))


def _key_of(exp: Experiment, model: str, subset: str, seed: int) -> dict[str, Any]:
    """The run key, with the key of the run that initialises it (``init_from``): a
    retrained source retrains the runs it initialises."""
    key = _run_key(run_config(exp, model, subset, seed), exp.subsets[subset])
    source = exp.init_from.get(model)
    if source is not None:
        key["init_from"] = {"model": source, "key": _key_of(exp, source, subset, seed)}
    stage = exp.pretrained.get(model)
    if stage is not None:
        key["pretrained"] = {"stage": stage, "key": _pretrain_key(exp, stage, seed)}
    return key


def _pretrain_key(exp: Experiment, stage: str, seed: int) -> dict[str, Any]:
    return _run_key(pretrain_config(exp, stage, seed), {})


#: Sections whose settings all have defaults: a run key compares them filled, so a setting
#: added with its default value (or written out at it) does not make earlier results stale.
_FILLED_SECTIONS = ("train", "eval", "loss")


def _same_run(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two run keys name the same run: equal, or equal once the sections of
    :data:`_FILLED_SECTIONS` are filled with their defaults (here and in ``init_from``)."""
    if old == new:
        return True

    def filled(key: Any) -> Any:
        if not isinstance(key, dict) or not isinstance(key.get("config"), dict):
            return key
        config = dict(key["config"])
        for name in _FILLED_SECTIONS:
            config[name] = dict(schema.section(config, name))
        out = {**key, "config": config}
        for source in ("init_from", "pretrained"):
            if isinstance(key.get(source), dict):
                out[source] = {**key[source], "key": filled(key[source].get("key"))}
        return json.loads(json.dumps(out, sort_keys=True, default=str))

    try:
        return filled(old) == filled(new)
    except ConfigError:         # a setting this version no longer knows
        return False


def _with_init(exp: Experiment, out: Path, cfg: dict[str, Any], model: str, subset: str,
               seed: int) -> dict[str, Any]:
    """``cfg`` with ``model.vl.init`` at the checkpoint of the run that initialises it,
    and ``train.init`` at that of its pre-training stage."""
    stage = exp.pretrained.get(model)
    if stage is not None:
        path = _pretrain_dir(out, stage, seed) / "last.pt"
        if not path.is_file():
            raise ConfigError(f"models.{model}.pretrained: {path} does not exist; pretrain "
                              f"{stage} / seed {seed} first")
        cfg.setdefault("train", {})["init"] = str(path)
    source = exp.init_from.get(model)
    if source is None:
        return cfg
    path = _run_dir(out, source, subset, seed) / "last.pt"
    if not path.is_file():
        raise ConfigError(f"models.{model}.init_from: {path} does not exist; train "
                          f"{source} / {subset} / seed {seed} first (its checkpoint is kept)")
    vl = cfg.setdefault("model", {}).setdefault("vl", {})
    vl["init"] = str(path)
    return cfg


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out or {prefix: {}}
    return {prefix: value}


def _diff(old: dict[str, Any], new: dict[str, Any], limit: int = 6) -> str:
    a, b = _flatten(old), _flatten(new)
    keys = sorted(k for k in set(a) | set(b) if a.get(k, "<unset>") != b.get(k, "<unset>"))
    shown = [f"{k}: {a.get(k, '<unset>')!r} -> {b.get(k, '<unset>')!r}" for k in keys[:limit]]
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return "; ".join(shown) + more


# -------------------------------------------------------------------- data
def _pair_of(problem: Any) -> str:
    meta = getattr(problem, "meta", None) or {}
    return str(meta.get("pair_id") or problem.id)


def select_fraction(problems: Sequence[Any], fraction: float, seed: int) -> list[Any]:
    """A seeded ``fraction`` of the pairs of ``problems`` (a positive and its mismatch
    stay together, selected by ``meta['pair_id']``), in their original order.

    The pairs are shuffled once per seed and a prefix is kept, so for one seed a
    smaller fraction is a subset of a larger one.
    """
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    pairs = sorted({_pair_of(p) for p in problems})
    random.Random(f"rcrn-lengthgen-fraction:{int(seed)}").shuffle(pairs)
    keep = set(pairs[:max(1, round(fraction * len(pairs)))])
    return [p for p in problems if _pair_of(p) in keep]


class _Data:
    """Train and test problems, parsed and detected once per data config."""

    def __init__(self, progress: bool, say: Callable[[str], None]) -> None:
        self.progress, self.say = progress, say
        self._train: dict[tuple[str, str | None], list[Any]] = {}
        self._test: dict[str, tuple[list[Any], dict[str, int]]] = {}

    @staticmethod
    def _key(cfg: dict[str, Any]) -> str:
        data = {k: v for k, v in schema.section(cfg, "data").items()
                if k not in ("train_subset", "length")}
        return json.dumps(data, sort_keys=True, default=str)

    def train(self, cfg: dict[str, Any], subset: str | None) -> list[Any]:
        from rcrn.cli.commands import synthetic_benchmark

        key = (self._key(cfg), subset)
        if key not in self._train:
            bench = synthetic_benchmark(cfg, "train", subset, progress=self.progress)
            self._train[key] = list(bench.problems())
        return self._train[key]

    def test(self, cfg: dict[str, Any]) -> tuple[list[Any], dict[str, int]]:
        from rcrn.cli.commands import synthetic_benchmark

        key = self._key(cfg)
        if key not in self._test:
            bench = synthetic_benchmark(cfg, "test", None, progress=self.progress)
            self._test[key] = (list(bench.problems()), dict(bench.thresholds))
            scenes = (bench.manifest.get("totals") or {}).get("scenes")
            wanted = (cfg.get("data") or {}).get("scenes")
            if wanted is not None and scenes is not None and int(wanted) != int(scenes):
                self.say(f"note: {bench.root} holds {scenes} scenes, data.scenes says "
                         f"{wanted}; the existing dataset is used (give another data.root "
                         "to generate one of that size)")
        return self._test[key]


# ----------------------------------------------------------------- metrics
def _length(problem: Any, kind: str) -> int:
    from benchmarks.synthetic.splits import length_of

    return length_of(problem.meta, kind)


def bucket_metrics(problems: Sequence[Any], predictions: Sequence[Any], kind: str, width: int,
                   threshold: int) -> list[dict[str, Any]]:
    """GITM-MR metrics of the items of each length bucket, shortest first.

    Args:
        kind: ``"words"`` (the pair's positive's word count) or ``"relations"``.
        width: bucket width; buckets are ``[threshold + 1 + i * width,
            threshold + (i + 1) * width]``, so the threshold is a bucket edge.
        threshold: the in-distribution limit of ``kind``.

    Returns:
        One dict per non-empty bucket: ``bucket`` (label), ``lo``, ``hi``,
        ``in_distribution`` (``hi <= threshold``) and the rates and counts of
        :func:`benchmarks.gitm_metrics.gitm_metrics`' full part.
    """
    from benchmarks.gitm_metrics import gitm_metrics

    groups: dict[int, list[Any]] = {}
    for p in problems:
        groups.setdefault((_length(p, kind) - threshold - 1) // width, []).append(p)
    out = []
    for b in sorted(groups):
        lo = max(threshold + 1 + b * width, 0)
        hi = threshold + (b + 1) * width
        part = gitm_metrics(groups[b], predictions, rules="toolkit")["full"]
        out.append({"bucket": str(lo) if lo == hi else f"{lo}-{hi}", "lo": lo, "hi": hi,
                    "in_distribution": hi <= threshold, **part})
    return out


def evaluate_predictions(problems: Sequence[Any], predictions: Sequence[Any],
                         thresholds: dict[str, int], length: str = "words",
                         word_bin: int = 4) -> dict[str, Any]:
    """Metrics of one run on the test split.

    Returns:
        ``{"length", "threshold", "parts": {in_distribution, out_of_distribution, full},
        "buckets": {"words": [...], "relations": [...]}}``; the parts split the
        items by ``length`` at its threshold (as ``SyntheticBenchmark.evaluate``
        does), the buckets are those of :func:`bucket_metrics` (relations: one per
        count).  When no prediction names a mismatched relation, the parts' ``mrr``
        and ``mrr_oracle`` are None (no readout) instead of 0.
    """
    from benchmarks.gitm_metrics import gitm_metrics

    threshold = int(thresholds[THRESHOLD_KEYS[length]])
    parts = gitm_metrics(problems, predictions, rules="toolkit",
                         length_fn=lambda p: _length(p, length),
                         threshold=threshold)
    if not any(p.mismatched_relation is not None for p in predictions):
        # a model with no mismatch readout (the cross-encoder without MIL): its MRR is
        # undefined, not 0, and the tables show it as such
        for k in PARTS:
            parts[k]["mrr"] = parts[k]["mrr_oracle"] = None
    return {
        "length": length, "threshold": threshold,
        "parts": {k: parts[k] for k in PARTS},
        "buckets": {
            "words": bucket_metrics(problems, predictions, "words", word_bin,
                                    int(thresholds["max_words"])),
            "relations": bucket_metrics(problems, predictions, "relations", 1,
                                        int(thresholds["max_relations"])),
        },
    }


# -------------------------------------------------------------------- runs
@dataclass
class RunOutcome:
    """One (model, subset, seed): ``status`` is ``"trained"``, ``"cached"`` (its
    result.json was reused), ``"rebucketed"`` (reused, buckets recomputed from its
    predictions) or, in a dry run, ``"to train"`` / ``"changed"``."""

    model: str
    subset: str
    seed: int
    status: str
    path: Path
    result: dict[str, Any] | None = None


@dataclass
class ExperimentReport:
    outcomes: list[RunOutcome]
    results: list[dict[str, Any]]
    summary: str
    files: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _run_dir(out: Path, model: str, subset: str, seed: int) -> Path:
    return out / "runs" / model / subset / f"seed{seed}"


def _pretrain_dir(out: Path, stage: str, seed: int) -> Path:
    return out / "pretrain" / stage / f"seed{seed}"


def _pretrain_state(exp: Experiment, out: Path, stage: str, seed: int
                    ) -> tuple[str, dict[str, Any] | None]:
    """``("done", pretrain.json)`` (made with this config, its checkpoint there),
    ``("changed", pretrain.json)`` (made with another config) or ``("new", None)``."""
    folder = _pretrain_dir(out, stage, seed)
    done = _read_json(folder / "pretrain.json")
    if done is None or not (folder / "last.pt").is_file():
        return "new", None
    same = _same_run(done.get("key"), _pretrain_key(exp, stage, seed))
    return ("done" if same else "changed"), done


def _train_stage(folder: Path, cfg: dict[str, Any], train: list[Any], progress: bool,
                 say: Callable[[str], None]) -> Any:
    """Train ``cfg`` into ``folder``; a run interrupted there (``last.pt`` without
    ``result.json`` or ``pretrain.json``) continues exactly when the checkpoint fits, else
    the folder's run files are cleared first.  Returns the trainer."""
    from rcrn.engine.trainer import CheckpointError, Trainer

    folder.mkdir(parents=True, exist_ok=True)
    interrupted = ((folder / "last.pt").is_file() and not (folder / "result.json").exists()
                   and not (folder / "pretrain.json").exists())
    trainer = Trainer(cfg, train, folder)
    resumed = False
    if interrupted:
        try:
            resumed = trainer.resume()
        except CheckpointError as exc:  # another config or data, or a damaged file
            say(f"  {exc}; training the run again")
    if resumed:
        say(f"  resumed at step {trainer.step} from {folder / 'last.pt'}")
    else:
        _clear_run(folder)
    trainer.fit(progress=progress)
    return trainer


def _pretrain(exp: Experiment, out: Path, stage: str, seed: int, data: _Data, progress: bool,
              say: Callable[[str], None]) -> None:
    """Train pre-training stage ``stage`` for ``seed`` unless it is done with this config;
    its ``last.pt`` is kept (the runs that name it start from it)."""
    if _pretrain_state(exp, out, stage, seed)[0] == "done":
        return
    t0 = time.time()
    folder = _pretrain_dir(out, stage, seed)
    cfg = pretrain_config(exp, stage, seed)
    (folder / "pretrain.json").unlink(missing_ok=True)
    train = data.train(cfg, schema.section(cfg, "data").train_subset)
    say(f"pretraining {stage} / seed {seed}: {len(train)} problems, "
        f"{schema.section(cfg, 'train').steps} steps")
    trainer = _train_stage(folder, cfg, train, progress, say)
    _write_json(folder / "pretrain.json", {
        "stage": stage, "seed": int(seed), "key": _pretrain_key(exp, stage, seed),
        "train_size": len(train), "steps": int(trainer.step),
        "match_start": match_start(folder / "metrics.jsonl"),
        "wall_time_s": round(time.time() - t0, 2),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S")})


def _read_result(path: Path) -> dict[str, Any] | None:
    result = _read_json(path)
    return result if result is not None and "key" in result else None


def _state(exp: Experiment, out: Path, model: str, subset: str, seed: int
           ) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """(``"new"`` | ``"cached"`` | ``"rebucket"`` | ``"changed"``, run key, old result)."""
    key = _key_of(exp, model, subset, seed)
    old = _read_result(_run_dir(out, model, subset, seed) / "result.json")
    if old is None:
        return "new", key, None
    if not _same_run(old["key"], key):
        return "changed", key, old
    if old.get("word_bin") != exp.word_bin:
        return "rebucket", key, old
    return "cached", key, old


def _stages(exp: Experiment, runs: Iterable[tuple[str, str, int]]) -> list[tuple[str, int]]:
    """The (pretrain stage, seed) pairs that ``runs`` start from, in order."""
    return list(dict.fromkeys((exp.pretrained[m], k) for m, _, k in runs
                              if m in exp.pretrained))


def _check_models(exp: Experiment, models: Iterable[str]) -> None:
    """Build every selected model (and the pre-training stage it starts from) once on a
    tiny vocabulary, so that a bad entry fails before hours of training (the message
    names the entry)."""
    from rcrn.batching import Vocab
    from rcrn.engine.trainer import build_model

    subset = next(iter(exp.subsets))
    entries = [(f"models.{m}", run_config(exp, m, subset, exp.seeds[0])) for m in models]
    entries += [(f"pretrain.{n}", pretrain_config(exp, n, exp.seeds[0]))
                for n, _ in _stages(exp, ((m, subset, exp.seeds[0]) for m in models))]
    for name, cfg in entries:
        try:
            check_config(cfg)
            build_model(cfg, Vocab(["the"]), pretrained_words=False)
        except ConfigError as exc:
            raise ConfigError(f"{name}: the model cannot be built: {exc}") from exc
        except Exception as exc:  # any failure is reported with the entry
            raise ConfigError(f"{name}: the model cannot be built: "
                              f"{type(exc).__name__}: {exc}") from exc


def match_start(metrics: Path, below: float = MATCH_START_LOSS) -> int | None:
    """The first logged training step of ``metrics`` (a Trainer's metrics.jsonl) whose
    match loss is below ``below``: when the match head started learning. None when it
    never fell below, or the log is missing or holds no match loss."""
    try:
        lines = metrics.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        value = record.get("match") if isinstance(record, dict) else None
        if isinstance(value, (int, float)) and value < below and "step" in record:
            return int(record["step"])
    return None


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=1), encoding="utf-8")
    tmp.replace(path)


def _clear_run(run_dir: Path) -> None:
    import shutil

    for name in RUN_FILES:
        (run_dir / name).unlink(missing_ok=True)
    if (run_dir / "tb").is_dir():
        shutil.rmtree(run_dir / "tb")


def _train_run(exp: Experiment, out: Path, model: str, subset: str, seed: int,
               key: dict[str, Any], data: _Data, progress: bool,
               say: Callable[[str], None]) -> dict[str, Any]:
    """Train, predict and score one run.  A run that was interrupted (its ``last.pt``
    written during training, no ``result.json``) continues from that checkpoint exactly
    when the checkpoint fits the run's config and data; otherwise the run starts again."""
    from rcrn.engine.trainer import predict, write_predictions

    t0 = time.time()
    run_dir = _run_dir(out, model, subset, seed)
    cfg = _with_init(exp, out, run_config(exp, model, subset, seed), model, subset, seed)
    spec = exp.subsets[subset]
    train = data.train(cfg, spec["train_subset"])
    if spec["fraction"] is not None:
        train = select_fraction(train, spec["fraction"], seed)
    test, thresholds = data.test(cfg)
    t1 = time.time()
    trainer = _train_stage(run_dir, cfg, train, progress, say)
    t2 = time.time()
    with_images = getattr(trainer, "with_images",
                          getattr(trainer.model, "region_encoder", None) is not None)
    preds = predict(trainer.model, test, trainer.vocab,
                    batch_size=schema.section(cfg, "eval").batch_size,
                    with_images=with_images)
    write_predictions(run_dir / "predictions.jsonl", preds)
    metrics = evaluate_predictions(test, preds, thresholds, spec["length"], exp.word_bin)
    t3 = time.time()
    import rcrn

    result = {
        "model": model, "subset": subset, "seed": int(seed), "key": key,
        "word_bin": exp.word_bin, "thresholds": thresholds,
        "train_subset": spec["train_subset"], "fraction": spec["fraction"],
        "train_size": len(train), "train_pairs": len({_pair_of(p) for p in train}),
        "test_size": len(test), "steps": int(trainer.step),
        "match_start": match_start(run_dir / "metrics.jsonl"),
        "wall_time_s": round(t3 - t0, 2), "data_time_s": round(t1 - t0, 2),
        "train_time_s": round(t2 - t1, 2), "eval_time_s": round(t3 - t2, 2),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"), "rcrn_version": rcrn.__version__,
        **metrics,
    }
    _write_json(run_dir / "result.json", result)
    if not exp.keep_checkpoints and model not in exp.init_from.values():
        (run_dir / "last.pt").unlink(missing_ok=True)
    return result


def _rebucket(exp: Experiment, out: Path, old: dict[str, Any], data: _Data) -> dict[str, Any]:
    """Recompute a reused run's buckets with the current ``word_bin`` from its predictions."""
    from rcrn.structures import Prediction

    run_dir = _run_dir(out, old["model"], old["subset"], old["seed"])
    cfg = run_config(exp, old["model"], old["subset"], old["seed"])
    lines = (run_dir / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    preds = [Prediction.from_dict(json.loads(x)) for x in lines if x.strip()]
    test, thresholds = data.test(cfg)
    result = dict(old, word_bin=exp.word_bin,
                  **evaluate_predictions(test, preds, thresholds,
                                         exp.subsets[old["subset"]]["length"], exp.word_bin))
    _write_json(run_dir / "result.json", result)
    return result


def _select(kind: str, wanted: Sequence[Any] | None, known: Sequence[Any]) -> list[Any]:
    if not wanted:
        return list(known)
    if kind == "seeds":
        return list(dict.fromkeys(int(s) for s in wanted))
    bad = [w for w in wanted if w not in known]
    if bad:
        raise ConfigError(f"unknown {kind} {bad} (--{kind}); the experiment config defines "
                          f"{list(known)}")
    return [k for k in known if k in wanted]   # the config's order


def _fmt_part(result: dict[str, Any], part: str) -> str:
    row = result["parts"][part]
    cells = []
    for rate in ("match", "grounding", "mrr"):
        v = row.get(rate)
        cells.append(f"{RATE_TITLES[rate]} {'–' if v is None else f'{100 * v:.1f}'}")
    return f"{PART_TITLES[part]} " + " / ".join(cells)


def _probe(cfg: dict[str, Any], train: list[Any], test: list[Any]) -> dict[str, float]:
    """Seconds per training step (``rcrn bench``'s step timer: the median of
    ``PROBE_STEPS`` on one batch, after an untimed one) and per test item (predicting up
    to 256) of one run's config."""
    from rcrn.cli.bench import measure_training_step
    from rcrn.engine.trainer import Trainer, make_loader, predict

    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(cfg, train, tmp)
        batch = next(iter(make_loader(train, trainer.vocab, trainer.train.batch_size, True,
                                      trainer.with_images, seed=0,
                                      group_by=trainer.train.group_by)))
        trainer.model.train()
        row = measure_training_step(trainer.model, batch.to(trainer.device), trainer.device,
                                    min_time=0.0, min_iters=PROBE_STEPS,
                                    max_iters=PROBE_STEPS, warmup=1)
        items = test[:256]
        t = time.perf_counter()
        predict(trainer.model, items, trainer.vocab,
                batch_size=schema.section(cfg, "eval").batch_size,
                with_images=trainer.with_images)
        per_item = (time.perf_counter() - t) / max(1, len(items))
    return {"step_s": row["step_ms"] / 1000, "item_s": per_item}


def estimate_time(exp: Experiment, plan: Sequence[tuple[str, str, int]],
                  full: tuple[Experiment, Sequence[tuple[str, str, int]]] | None,
                  data: _Data, say: Callable[[str], None],
                  pretrained: Iterable[tuple[str, int]] = (), jobs: int = 1) -> dict[str, Any]:
    """The wall time of ``plan`` and of the ``full`` grid (the config's every run, when
    ``plan`` is ``--quick``'s or what is left to train), one task after the other and
    ``jobs`` at a time (:func:`makespan`, a bound: it takes each worker to train as fast
    as the probe did alone, where workers sharing the cores slow each other).

    Each model's training step and prediction are probed on the first subset it trains
    on, and each pre-training stage's step on its data; a run's time is its steps times
    the step, plus the test split's prediction, plus the data reading once, and each
    (stage, seed) the runs start from adds its steps (in ``plan``, unless it is in
    ``pretrained``: done already)."""
    probes: dict[str, dict[str, float]] = {}
    test_size, data_s = 0, 0.0
    runs_of = [(exp, plan)] + ([full] if full is not None else [])
    for grid, runs in runs_of:
        for model in dict.fromkeys(m for m, _, _ in runs):
            if model in probes:
                continue
            subset = next(s for m, s, _ in runs if m == model)
            cfg = run_config(grid, model, subset, grid.seeds[0])
            spec = grid.subsets[subset]
            t = time.time()
            train = data.train(cfg, spec["train_subset"])
            if spec["fraction"] is not None:
                train = select_fraction(train, spec["fraction"], grid.seeds[0])
            test, _ = data.test(cfg)
            data_s += time.time() - t   # read once: the runs find it cached
            test_size = len(test)
            probes[model] = _probe(cfg, train, test)
        for stage, _ in _stages(grid, runs):
            if f"pretrain {stage}" in probes:
                continue
            cfg = pretrain_config(grid, stage, grid.seeds[0])
            t = time.time()
            train = data.train(cfg, schema.section(cfg, "data").train_subset)
            data_s += time.time() - t
            probes[f"pretrain {stage}"] = _probe(cfg, train, test)

    def times(grid: Experiment, runs: Sequence[tuple[str, str, int]],
              done: Iterable[tuple[str, int]] = ()) -> tuple[float, float]:
        """(one task after the other, ``jobs`` at a time) in seconds."""
        needs = _task_graph(grid, runs, done)
        seconds = {}
        for task in needs:
            if task[0] == "pretrain":
                steps = schema.section(pretrain_config(grid, task[1], task[2]), "train").steps
                seconds[task] = steps * probes[f"pretrain {task[1]}"]["step_s"]
            else:
                probe = probes[task[1]]
                steps = schema.section(run_config(grid, *task[1:]), "train").steps
                seconds[task] = steps * probe["step_s"] + test_size * probe["item_s"]
        return data_s + sum(seconds.values()), data_s + makespan(needs, seconds, jobs)

    def at_a_time(seconds: float) -> str:
        return f" ({jobs} at a time: at best {_duration(seconds)})" if jobs > 1 else ""

    one, parallel = times(exp, plan, pretrained)
    estimate = {"runs": len(plan), "seconds": round(one, 1), "jobs": jobs,
                "jobs_seconds": round(parallel, 1),
                "probe": {m: {k: round(v, 4) for k, v in p.items()} for m, p in probes.items()},
                "probe_steps": PROBE_STEPS}
    say(f"time estimate: {len(plan)} run(s), about {_duration(one)}{at_a_time(parallel)} "
        f"(per model, s/step: " + ", ".join(f"{m} {p['step_s']:.2f}" for m, p in
                                            probes.items()) + ")")
    if full is not None:
        grid, runs = full
        one, parallel = times(grid, runs)
        estimate["full_runs"] = len(runs)
        estimate["full_stages"] = len(_stages(grid, runs))
        estimate["full_seconds"] = round(one, 1)
        estimate["full_jobs_seconds"] = round(parallel, 1)
        say(f"the full grid: {len(runs)} run(s){_and_stages(estimate['full_stages'])}, about "
            f"{_duration(one)}{at_a_time(parallel)} (from the same probes)")
    return estimate


def _and_stages(count: int | None) -> str:
    return f" and {count} pre-training stage(s)" if count else ""


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def run_experiment(config: str | Path | dict[str, Any] | Experiment, out: str | Path,
                   overrides: Sequence[str] = (), models: Sequence[str] | None = None,
                   subsets: Sequence[str] | None = None, seeds: Sequence[int] | None = None,
                   rerun_changed: bool = False, progress: bool = True, dry_run: bool = False,
                   aggregate_only: bool = False, quick: bool = False, jobs: int = 1,
                   log: Callable[[str], None] | None = None) -> ExperimentReport:
    """Train and evaluate every selected (model, subset, seed), then aggregate.

    Args:
        config: an experiment config (path, mapping, or :class:`Experiment`).
        out: output folder.
        overrides: ``key=value`` items (see :func:`load_experiment`); not used when
            ``config`` is an :class:`Experiment` already.
        models / subsets / seeds: restrict the runs to these (default: all of the
            config); seeds may also name seeds the config does not list.
        rerun_changed: retrain runs whose ``result.json`` was made with another
            config (otherwise such runs are refused, before anything is trained).
        progress: show the training progress bars.
        dry_run: only report what would be trained.
        aggregate_only: train nothing; rebuild the CSV, summary and plots.
        quick: run the config's ``quick`` grid (:meth:`Experiment.reduced`) instead.
        jobs: train this many runs (and pre-training stages) at a time, each in a
            process of its own with ``cpu_count // jobs`` threads; a run starts once the
            stage and the run it starts from are trained (:func:`_train_in_parallel`).
        log: where progress lines go (default: print).

    Before training, the time of the runs to train and of the config's full grid is
    estimated by :func:`estimate_time`, printed and kept in ``OUT/time_estimate.json``
    for the summary.

    Returns:
        The outcomes of the selected runs, every result aggregated, and the summary.

    Raises:
        ConfigError: for a bad config, selection or model entry, and for changed
            runs without ``rerun_changed``.
    """
    say = log or (lambda s: print(s, flush=True))
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"jobs must be a whole number >= 1, got {jobs!r}")
    exp = config if isinstance(config, Experiment) else load_experiment(config, overrides)
    full = exp
    if quick:
        exp = exp.reduced()
    out = Path(out)
    # a model initialised from another trains after it
    order = sorted(exp.models, key=lambda m: m in exp.init_from)
    sel_models = _select("models", models, order)
    sel_subsets = _select("subsets", subsets, list(exp.subsets))
    sel_seeds = _select("seeds", seeds, exp.seeds)
    plan = [(m, s, k) for m in sel_models for s in sel_subsets for k in sel_seeds]
    states = {run: _state(exp, out, *run) for run in plan}
    changed = [run for run, (state, _, _) in states.items() if state == "changed"]
    outcomes: list[RunOutcome] = []
    if dry_run or aggregate_only:
        for run, (state, _, old) in states.items():
            status = {"new": "to train", "rebucket": "to rebucket"}.get(state, state)
            outcomes.append(RunOutcome(*run, status=status, path=_run_dir(out, *run),
                                       result=old if state == "cached" else None))
            if dry_run:
                extra = (f" ({_diff(old['key'], states[run][1])})"
                         if state == "changed" and old else "")
                say(f"{run[0]} / {run[1]} / seed {run[2]}: {status}{extra}")
        if dry_run:
            for stage, seed in _stages(exp, plan):
                state, _ = _pretrain_state(exp, out, stage, seed)
                say(f"pretrain {stage} / seed {seed}: "
                    + {"new": "to train", "changed": "made with another config"}.get(state,
                                                                                     state))
            return ExperimentReport(outcomes, [], "", {}, [])
    else:
        if changed and not rerun_changed:
            details = "\n".join(
                f"  {m} / {s} / seed {k} ({_run_dir(out, m, s, k) / 'result.json'}): "
                f"{_diff(states[(m, s, k)][2]['key'], states[(m, s, k)][1])}"
                for m, s, k in changed)
            raise ConfigError(f"{len(changed)} run(s) in {out} were made with another "
                              f"config:\n{details}\npass --rerun-changed to retrain them, "
                              "or choose another --out")
        to_train = [run for run in plan if states[run][0] in ("new", "changed")]
        if to_train:
            _check_models(exp, dict.fromkeys(m for m, _, _ in to_train))
        out.mkdir(parents=True, exist_ok=True)
        (out / "experiment.yaml").write_text(yaml.safe_dump(exp.to_dict(), sort_keys=False),
                                             encoding="utf-8")
        data = _Data(progress, say)
        if to_train:
            whole = [(m, s, k) for m in sorted(full.models, key=lambda m: m in full.init_from)
                     for s in full.subsets for k in full.seeds]
            done = [(n, k) for n, k in _stages(exp, to_train)
                    if _pretrain_state(exp, out, n, k)[0] == "done"]
            estimate = estimate_time(exp, to_train, (full, whole), data, say, done, jobs)
            _write_json(out / "time_estimate.json", estimate)
        queue: list[tuple[int, tuple[str, str, int]]] = []
        for i, run in enumerate(plan, 1):
            state, key, old = states[run]
            head = f"[{i}/{len(plan)}] {run[0]} / {run[1]} / seed {run[2]}"
            path = _run_dir(out, *run)
            if state == "cached":
                say(f"{head}: done before, skipped ({path / 'result.json'})")
                outcomes.append(RunOutcome(*run, status="cached", path=path, result=old))
                continue
            if state == "rebucket" and (path / "predictions.jsonl").exists():
                say(f"{head}: done before; recomputing its buckets (word_bin {exp.word_bin})")
                outcomes.append(RunOutcome(*run, status="rebucketed", path=path,
                                           result=_rebucket(exp, out, old, data)))
                continue
            if state == "changed":
                say(f"{head}: its config changed ({_diff(old['key'], key)}); retraining")
            queue.append((i, run))
        trained = (_train_in_parallel(exp, out, queue, states, len(plan), jobs, say)
                   if jobs > 1 and queue else
                   _train_in_turn(exp, out, queue, states, len(plan), data, progress, say))
        for i, run, result in trained:
            say(f"[{i}/{len(plan)}] {run[0]} / {run[1]} / seed {run[2]}: "
                f"{result['train_size']} training problems, {result['wall_time_s']:.0f} s; "
                + "; ".join(_fmt_part(result, p) for p in ("in_distribution",
                                                           "out_of_distribution")))
            outcomes.append(RunOutcome(*run, status="trained", path=_run_dir(out, *run),
                                       result=result))
        position = {run: i for i, run in enumerate(plan)}
        outcomes.sort(key=lambda o: position[(o.model, o.subset, o.seed)])
    report = aggregate(exp, out, extra_runs=plan)
    report.outcomes = outcomes
    return report


Run = tuple[str, str, int]
Task = tuple[Any, ...]
Queue = Sequence[tuple[int, Run]]
Trained = Iterable[tuple[int, Run, dict[str, Any]]]


def _train_in_turn(exp: Experiment, out: Path, queue: Queue, states: dict[Run, Any],
                   count: int, data: _Data, progress: bool,
                   say: Callable[[str], None]) -> Trained:
    """Train the runs of ``queue`` (plan position, run) one after the other in this
    process, each after the pre-training stage it starts from; yield each result."""
    for i, run in queue:
        if run[0] in exp.pretrained:
            _pretrain(exp, out, exp.pretrained[run[0]], run[2], data, progress, say)
        cfg = run_config(exp, *run)
        say(f"[{i}/{count}] {run[0]} / {run[1]} / seed {run[2]}: training "
            f"({schema.section(cfg, 'train').steps} steps)")
        yield i, run, _train_run(exp, out, *run, states[run][1], data, progress, say)


def _task_graph(exp: Experiment, runs: Sequence[Run],
                stages_done: Iterable[tuple[str, int]] = ()) -> dict[Task, set[Task]]:
    """The tasks that train ``runs``, in order, each with the tasks it waits for:
    ``("pretrain", stage, seed)`` for each pre-training stage they start from (less
    ``stages_done``), then ``("run", model, subset, seed)`` for each run, after its stage
    and, for a model initialised from another (``init_from``), after that model's run
    when it is among ``runs``."""
    needs: dict[Task, set[Task]] = {}
    done = set(stages_done)
    for stage, seed in _stages(exp, runs):
        if (stage, seed) not in done:
            needs[("pretrain", stage, seed)] = set()
    wanted = set(runs)
    for model, subset, seed in runs:
        deps = set()
        if model in exp.pretrained and ("pretrain", exp.pretrained[model], seed) in needs:
            deps.add(("pretrain", exp.pretrained[model], seed))
        source = exp.init_from.get(model)
        if source is not None and (source, subset, seed) in wanted:
            deps.add(("run", source, subset, seed))
        needs[("run", model, subset, seed)] = deps
    return needs


def makespan(needs: dict[Task, set[Task]], seconds: dict[Task, float], jobs: int) -> float:
    """The wall time of the tasks of ``needs`` (each taking ``seconds[task]``) when
    ``jobs`` of them run at a time and a task starts, in the order of ``needs``, as soon as
    a worker is free and the tasks it waits for are finished (how
    :func:`_train_in_parallel` schedules them)."""
    pending = dict(needs)
    running: list[tuple[float, Task]] = []
    finished: set[Task] = set()
    now = 0.0
    while pending or running:
        for task in [t for t, deps in pending.items() if deps <= finished]:
            if len(running) == jobs:
                break
            del pending[task]
            running.append((now + seconds[task], task))
        if not running:
            raise ValueError("makespan: tasks wait for tasks that are not given")
        running.sort(key=lambda x: x[0])
        now, task = running.pop(0)
        finished.add(task)
    return now


_worker_data: _Data | None = None


def _job(exp: Experiment, out: Path, task: Task, key: dict[str, Any] | None,
         threads: int) -> dict[str, Any] | None:
    """One task of :func:`_train_in_parallel`, in a worker process: ``("pretrain",
    stage, seed)`` or ``("run", model, subset, seed)``.  The worker keeps the problems it
    read for its next tasks."""
    import torch

    global _worker_data
    torch.set_num_threads(threads)
    name = " / ".join((*task[1:-1], f"seed {task[-1]}"))

    def say(line: str) -> None:
        print(f"  ({name}) {line.strip()}", flush=True)

    if _worker_data is None:
        _worker_data = _Data(False, say)
    _worker_data.say = say
    if task[0] == "pretrain":
        _pretrain(exp, out, task[1], task[2], _worker_data, False, say)
        return None
    return _train_run(exp, out, *task[1:], key, _worker_data, False, say)


def _train_in_parallel(exp: Experiment, out: Path, queue: Queue, states: dict[Run, Any],
                       count: int, jobs: int, say: Callable[[str], None]) -> Trained:
    """Train the runs of ``queue`` ``jobs`` at a time in worker processes (started
    afresh, ``cpu_count // jobs`` threads each) and yield each result as it finishes.

    The pre-training stages the runs start from are tasks of their own; a run is started
    once its stage and the run it is initialised from (``init_from``, when that run is in
    the queue) are trained.  When a task fails, nothing more is started, the running ones
    finish (their results are kept) and the failure is raised; an interrupted run resumes
    from its checkpoint next time, as in turn."""
    import multiprocessing
    import os
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    runs = [run for _, run in queue]
    position = {run: i for i, run in queue}
    needs = _task_graph(exp, runs, [(n, k) for n, k in _stages(exp, runs)
                                    if _pretrain_state(exp, out, n, k)[0] == "done"])
    threads = max(1, (os.cpu_count() or 1) // jobs)
    say(f"training {len(queue)} run(s) and {len(needs) - len(queue)} pre-training "
        f"stage(s), {jobs} at a time ({threads} thread(s) each)")
    finished: set[Task] = set()
    running: dict[Any, Task] = {}
    failure: tuple[Task, BaseException] | None = None
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(jobs, mp_context=context) as pool:
        while needs or running:
            ready = [t for t, deps in needs.items() if deps <= finished]
            while failure is None and ready and len(running) < jobs:
                task = ready.pop(0)
                del needs[task]
                key = states[task[1:]][1] if task[0] == "run" else None
                label = (f"[{position[task[1:]]}/{count}] {' / '.join(task[1:3])} / "
                         f"seed {task[3]}: training" if task[0] == "run" else
                         f"pretraining {task[1]} / seed {task[2]}")
                say(f"{label} (started)")
                running[pool.submit(_job, exp, out, task, key, threads)] = task
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                task = running.pop(future)
                try:
                    result = future.result()
                except BaseException as exc:  # re-raised once the running tasks end
                    failure = failure or (task, exc)
                    continue
                finished.add(task)
                if task[0] == "run":
                    yield position[task[1:]], task[1:], result
    if failure is not None:
        task, exc = failure
        if isinstance(exc, RcrnError):  # a config error names its setting: as in turn
            raise exc
        raise RuntimeError(f"lengthgen: {' / '.join(map(str, task[1:]))} failed in its "
                           f"worker: {type(exc).__name__}: {exc}") from exc
    if needs:  # a task whose dependency failed is never started
        raise RuntimeError("lengthgen: not trained: " + ", ".join(
            " / ".join(map(str, t[1:])) for t in needs))


# --------------------------------------------------------------- aggregate
def _collect(exp: Experiment, out: Path, extra_runs: Sequence[tuple[str, str, int]] = ()
             ) -> tuple[list[dict[str, Any]], list[str]]:
    grid = [(m, s, k) for m in exp.models for s in exp.subsets for k in exp.seeds]
    runs = list(dict.fromkeys(grid + [r for r in extra_runs
                                      if r[0] in exp.models and r[1] in exp.subsets]))
    results, notes = [], []
    missing = []
    for run in runs:
        state, _, old = _state(exp, out, *run)
        if state in ("cached", "rebucket"):
            if "match_start" not in old:    # a result written before the key existed
                old["match_start"] = match_start(_run_dir(out, *run) / "metrics.jsonl")
            results.append(old)
            if state == "rebucket":
                notes.append(f"{run[0]} / {run[1]} / seed {run[2]}: word buckets of width "
                             f"{old.get('word_bin')}, not {exp.word_bin}; a run without "
                             "--aggregate-only recomputes them")
        elif state == "changed":
            notes.append(f"{run[0]} / {run[1]} / seed {run[2]}: its result was made with "
                         "another config; left out")
        elif run in grid:
            missing.append(f"{run[0]}/{run[1]}/seed{run[2]}")
    if missing:
        notes.append(f"{len(missing)} run(s) of the config have no result yet: "
                     + ", ".join(missing[:8]) + (" ..." if len(missing) > 8 else ""))
    return results, notes


def _csv_rows(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        common = {"model": r["model"], "subset": r["subset"], "seed": r["seed"],
                  "train_subset": r.get("train_subset") or "",
                  "fraction": "" if r.get("fraction") is None else r["fraction"],
                  "train_size": r["train_size"], "train_pairs": r.get("train_pairs", ""),
                  "steps": r.get("steps", ""), "match_start": r.get("match_start"),
                  "wall_time_s": r.get("wall_time_s", ""),
                  "train_time_s": r.get("train_time_s", ""),
                  "eval_time_s": r.get("eval_time_s", "")}
        threshold = r["threshold"]
        for part in PARTS:
            lo, hi = {"in_distribution": (0, threshold),
                      "out_of_distribution": (threshold + 1, "")}.get(part, ("", ""))
            rows.append(dict(common, bucket_kind=f"part_by_{r['length']}", bucket=part,
                             lo=lo, hi=hi,
                             in_distribution={"full": ""}.get(part, part == "in_distribution"),
                             **{k: r["parts"][part].get(k) for k in
                                ("n", "n_matched", "n_mismatched") + RATES}))
        for kind in ("words", "relations"):
            for b in r["buckets"][kind]:
                rows.append(dict(common, bucket_kind=kind, bucket=b["bucket"], lo=b["lo"],
                                 hi=b["hi"], in_distribution=b["in_distribution"],
                                 **{k: b.get(k) for k in
                                    ("n", "n_matched", "n_mismatched") + RATES}))
    return rows


def _write_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(CSV_FIELDS))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in CSV_FIELDS})


def _stats(values: Iterable[float | None]) -> tuple[float | None, float | None, int]:
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not vals:
        return None, None, 0
    return statistics.fmean(vals), (statistics.stdev(vals) if len(vals) > 1 else 0.0), len(vals)


def _pm(values: Iterable[float | None], scale: float = 100.0, signed: bool = False) -> str:
    mean, std, n = _stats(values)
    if mean is None:
        return "–"
    text = f"{scale * mean:+.1f}" if signed else f"{scale * mean:.1f}"
    return f"{text} ± {scale * std:.1f}" if n > 1 else text


def _group(results: Sequence[dict[str, Any]], exp: Experiment
           ) -> list[tuple[str, str, list[dict[str, Any]]]]:
    out = []
    models = list(dict.fromkeys(list(exp.models) + [r["model"] for r in results]))
    subsets = list(dict.fromkeys(list(exp.subsets) + [r["subset"] for r in results]))
    for m in models:
        for s in subsets:
            rs = sorted((r for r in results if r["model"] == m and r["subset"] == s),
                        key=lambda r: r["seed"])
            if rs:
                out.append((m, s, rs))
    return out


def _part(r: dict[str, Any], part: str, rate: str) -> float | None:
    return r["parts"][part].get(rate)


def _describe_subset(spec: dict[str, Any]) -> str:
    bits = []
    if spec.get("train_subset"):
        bits.append(str(spec["train_subset"]))
    if spec.get("fraction") is not None:
        bits.append(f"{100 * spec['fraction']:g}% of pairs")
    return ", ".join(bits) or "whole train split"


#: Two-sided 95% quantiles of Student's t, t(0.975, df) for df = 1..30 (1.96 beyond).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
         2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074,
         2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def ci95(values: Iterable[float | None]) -> tuple[float, float, float] | None:
    """The mean of ``values`` and its 95% confidence interval ``(mean, lo, hi)`` (the
    t interval over the values, e.g. seeds); None with fewer than two values."""
    mean, std, n = _stats(values)
    if mean is None or n < 2 or std is None:
        return None
    half = (_T975[n - 2] if n - 1 <= len(_T975) else 1.96) * std / math.sqrt(n)
    return mean, mean - half, mean + half


def _ci_text(ci: tuple[float, float, float] | None, values: Sequence[float | None],
             signed: bool = False) -> str:
    if ci is None:
        return _pm(values, signed=signed) + " (one seed: no interval)"
    mean, lo, hi = (100 * v for v in ci)
    sign = "+" if signed else ""
    return f"{mean:{sign}.1f} [{lo:{sign}.1f}, {hi:{sign}.1f}]"


def _judge(ci: tuple[float, float, float] | None, bound: float, at_most: bool) -> str:
    """Whether a 95% interval (fractions) lies on the claimed side of ``bound`` (points)."""
    if ci is None:
        return "undecided (one seed)"
    lo, hi = 100 * ci[1], 100 * ci[2]
    holds, refuted = (hi <= bound, lo > bound) if at_most else (lo >= bound, hi < bound)
    return "holds" if holds else "refuted" if refuted else "undecided (the interval " \
        "contains the bound)"


def _drops(rs: Sequence[dict[str, Any]], rate: str) -> list[float | None]:
    return [None if _part(r, "in_distribution", rate) is None
            or _part(r, "out_of_distribution", rate) is None
            else _part(r, "in_distribution", rate) - _part(r, "out_of_distribution", rate)
            for r in rs]


def _paired(ra: Sequence[dict[str, Any]], rb: Sequence[dict[str, Any]], rate: str
            ) -> list[float | None]:
    """OOD ``rate`` of ``ra`` minus ``rb``'s, seed by seed (the seeds both have)."""
    seeds_b = {r["seed"]: r for r in rb}
    out: list[float | None] = []
    for x in ra:
        y = seeds_b.get(x["seed"])
        if y is None:
            continue
        a, b = _part(x, "out_of_distribution", rate), _part(y, "out_of_distribution", rate)
        out.append(None if a is None or b is None else a - b)
    return out


def _claim_lines(exp: Experiment, groups: list[tuple[str, str, list[dict[str, Any]]]]
                 ) -> list[str]:
    """The verdict on the claim (:class:`Claim`) for every length subset, then every
    model's OOD drop with its 95% interval."""
    claim = exp.claim
    a, b = claim.model, claim.baseline
    by = {(m, s): rs for m, s, rs in groups}
    lines = ["## Verdict", "",
             f"Claim: trained on short expressions, {a} loses at most {claim.max_drop:g} "
             f"points out of distribution (ID - OOD) on Match and on Grounding, and its "
             f"OOD figures are at least {claim.min_margin:g} points above {b}'s, which "
             f"must first reach {claim.min_id:g}% in distribution on both. Each figure: "
             "mean [95% confidence interval over seeds], points; the margin is paired by "
             "seed. *Holds* / *refuted*: the whole interval is on that side of the bound.",
             ""]
    judged = False
    for subset, spec in exp.subsets.items():
        ra, rb = by.get((a, subset)), by.get((b, subset))
        if not spec["train_subset"] or not ra:
            continue
        judged = True
        lines.append(f"`{subset}` (ID / OOD by {ra[0]['length']}, {len(ra)} seed(s)):")
        for rate in ("match", "grounding"):
            drops = _drops(ra, rate)
            ci = ci95(drops)
            lines.append(f"- {a} OOD drop, {RATE_TITLES[rate]}: {_ci_text(ci, drops)} "
                         f"(<= {claim.max_drop:g}): **{_judge(ci, claim.max_drop, True)}**")
        if not rb:
            lines.append(f"- {a} - {b}: not judged ({b} has no results on `{subset}`)")
            continue
        learned = {rate: _stats(_part(r, "in_distribution", rate) for r in rb)[0]
                   for rate in ("match", "grounding")}
        shown = ", ".join(f"{RATE_TITLES[k]} " + ("–" if v is None else f"{100 * v:.1f}")
                          for k, v in learned.items())
        if any(v is None or 100 * v < claim.min_id for v in learned.values()):
            lines.append(f"- {a} - {b}: not judged: {b} did not learn (ID {shown}; "
                         f"both must reach {claim.min_id:g})")
            continue
        lines.append(f"- {b} learned: ID {shown}")
        for rate in ("match", "grounding"):
            diffs = _paired(ra, rb, rate)
            ci = ci95(diffs)
            lines.append(f"- {a} - {b}, OOD {RATE_TITLES[rate]}: "
                         f"{_ci_text(ci, diffs, signed=True)} (>= {claim.min_margin:g}): "
                         f"**{_judge(ci, claim.min_margin, False)}**")
    if not judged:
        lines.append(f"- not judged: {a} has no results on a subset of short expressions")
    lines += ["", "OOD drop of every model (ID - OOD, points; mean [95% interval over "
              "seeds]):", ""]
    for m, s, rs in groups:
        cells = []
        for rate in ("match", "grounding", "mrr"):
            drops = _drops(rs, rate)
            cells.append(f"{RATE_TITLES[rate]} {_ci_text(ci95(drops), drops)}"
                         if any(d is not None for d in drops)
                         else f"{RATE_TITLES[rate]} – (no mismatch readout)")
        lines.append(f"- {m} / {s}: " + ", ".join(cells))
    return lines


def _bucket_table(kind: str, subset: str, groups: list[tuple[str, str, list[dict[str, Any]]]]
                  ) -> list[str]:
    rows = [(m, rs) for m, s, rs in groups if s == subset]
    if not rows:
        return []
    labels = list(dict.fromkeys(b["bucket"] for _, rs in rows for r in rs
                                for b in r["buckets"][kind]))
    threshold = rows[0][1][0]["thresholds"][THRESHOLD_KEYS[kind]]
    title = "word length" if kind == "words" else "number of relations"
    lines = [f"### `{subset}`: Match / Grounding % by {title} (in-distribution <= "
             f"{threshold}; mean over seeds)", "",
             "| Model | " + " | ".join(labels) + " |",
             "|---|" + "---:|" * len(labels)]
    for m, rs in rows:
        cells = []
        for label in labels:
            bs = [b for r in rs for b in r["buckets"][kind] if b["bucket"] == label]
            mm = _stats(b.get("match") for b in bs)[0]
            gg = _stats(b.get("grounding") for b in bs)[0]
            cells.append(("–" if mm is None else f"{100 * mm:.0f}") + " / "
                         + ("–" if gg is None else f"{100 * gg:.0f}"))
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    n = [b["n"] for b in rows[0][1][0]["buckets"][kind]]
    lines.append("| *items* | " + " | ".join(str(x) for x in n) + " |")
    return lines + [""]


def _oracle_table(groups: list[tuple[str, str, list[dict[str, Any]]]]) -> list[str]:
    """Grounding with the match decision set aside: GITM-MR's Grounding counts an item
    only when the model also judged it a match, so a model whose match head has not
    learned shows a low Grounding however well it finds the referent."""
    if not groups:
        return []
    lines = ["Grounding with the match decision set aside (*oracle*; mean ± std over "
             "seeds, %):", "",
             "| Model | Subset | " + " | ".join(PART_TITLES[p] for p in PARTS) + " |",
             "|---|---|" + "---:|" * len(PARTS)]
    for m, s, rs in groups:
        cells = [_pm(_part(r, p, "grounding_oracle") for r in rs) for p in PARTS]
        lines.append(f"| {m} | {s} | " + " | ".join(cells) + " |")
    return lines + [""]


def _start_table(groups: list[tuple[str, str, list[dict[str, Any]]]]) -> list[str]:
    """The step at which every run's match head started (``match_start``), by seed, and
    the spread of the seeds that started."""
    groups = [(m, s, rs) for m, s, rs in groups if any("match_start" in r for r in rs)]
    if not groups:
        return []
    lines = [f"Match head start: the first logged step with the training match loss below "
             f"{MATCH_START_LOSS} (*never*: not within the run's steps):", "",
             "| Model | Subset | Step by seed | Spread (steps) |", "|---|---|---|---:|"]
    for m, s, rs in groups:
        steps = [r.get("match_start") for r in rs]
        cells = " / ".join(f"{r['seed']}: {'never' if v is None else v}"
                           for r, v in zip(rs, steps))
        started = [v for v in steps if v is not None]
        spread = str(max(started) - min(started)) if len(started) > 1 else "–"
        if started and len(started) < len(steps):
            spread += f" ({len(steps) - len(started)} never)"
        lines.append(f"| {m} | {s} | {cells} | {spread} |")
    return lines + [""]


def _stage_table(stages: Sequence[dict[str, Any]]) -> list[str]:
    """One row per pre-training stage and seed (its ``pretrain.json``)."""
    if not stages:
        return []
    lines = ["Pre-training stages (the runs of the models naming them start from them):", "",
             "| Stage | Seed | Train size | Steps | Match head start | Time (s) |",
             "|---|---:|---:|---:|---:|---:|"]
    for st in stages:
        start = st.get("match_start")
        lines.append(f"| {st['stage']} | {st['seed']} | {st['train_size']} | {st['steps']} | "
                     f"{'never' if start is None else start} | {st['wall_time_s']:.0f} |")
    return lines + [""]


def format_summary(exp: Experiment, results: Sequence[dict[str, Any]],
                   notes: Sequence[str] = (), stages: Sequence[dict[str, Any]] = ()) -> str:
    """summary.md: the mean ± std table, the oracle grounding table, every seed's match
    head start (and every pre-training stage's), claim lines, bucket tables and notes."""
    groups = _group(results, exp)
    lines = ["# Length generalisation and data efficiency", "",
             f"Experiment: `{exp.source}`. Test split: the whole synthetic test split; "
             "ID / OOD split it by the length named in *ID by* at the dataset's threshold. "
             "Rates in %, mean ± std over seeds (sample std).", ""]
    header = ["Model", "Subset", "Seeds", "Train size", "ID by"]
    header += [f"{PART_TITLES[p]} {RATE_TITLES[r]}" for p in PARTS
               for r in ("match", "grounding", "mrr")]
    header += ["Time / run (s)"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|---|---|---:|---:|---|" + "---:|" * (len(header) - 5))
    for m, s, rs in groups:
        size = _stats(r["train_size"] for r in rs)[0]
        cells = [m, s, str(len(rs)), f"{size:.0f}",
                 f"{rs[0]['length']} <= {rs[0]['threshold']}"]
        cells += [_pm(_part(r, p, rate) for r in rs) for p in PARTS
                  for rate in ("match", "grounding", "mrr")]
        cells.append(_pm((r.get("wall_time_s") for r in rs), scale=1.0))
        lines.append("| " + " | ".join(cells) + " |")
    if not groups:
        lines.append("| *(no results yet)* |" + " |" * (len(header) - 1))
    lines += [""] + _oracle_table(groups) + _start_table(groups) + _stage_table(stages)
    lines += _claim_lines(exp, groups)
    lines += [""]
    length_subsets = [s for s, spec in exp.subsets.items() if spec["train_subset"]]
    for s in length_subsets or list(exp.subsets)[:1]:
        lines += _bucket_table("words", s, groups)
        lines += _bucket_table("relations", s, groups)
    subsets = ", ".join(f"`{s}` = {_describe_subset(spec)}" for s, spec in exp.subsets.items())
    lines += [f"Subsets: {subsets}.", ""]
    if notes:
        lines += ["Notes:", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


# ------------------------------------------------------------------- plots
_RATE_ERR = dict(capsize=3, marker="o", markersize=3, linewidth=1.2)


def _new_figure(rows: int, cols: int, width: float = 4.2, height: float = 3.0) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(width * cols, 6.5), height * rows))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    return fig, axes


def _plot_buckets(exp: Experiment, groups: list[tuple[str, str, list[dict[str, Any]]]],
                  kind: str, path: Path) -> str:
    from benchmarks.synthetic.splits import TRAIN_SUBSETS

    length_subsets = [s for s, spec in exp.subsets.items() if spec["train_subset"]]
    have = {s for _, s, _ in groups}
    chosen = [s for s in length_subsets if s in have]
    note = ""
    if not chosen:
        chosen = [s for s in exp.subsets if s in have]
        note = " (no length subset ran; all subsets shown)"
    if not chosen:
        path.unlink(missing_ok=True)
        return f"{path.name}: skipped (no results)"
    fig, axes = _new_figure(2, len(chosen))
    for col, subset in enumerate(chosen):
        threshold = None
        for model, s, rs in groups:
            if s != subset:
                continue
            labels = [b["bucket"] for b in rs[0]["buckets"][kind]]
            xs, ys, es = {}, {}, {}
            for label in labels:
                bs = [b for r in rs for b in r["buckets"][kind] if b["bucket"] == label]
                xs[label] = (bs[0]["lo"] + bs[0]["hi"]) / 2
                for rate in ("match", "grounding"):
                    mean, std, _ = _stats(b.get(rate) for b in bs)
                    ys.setdefault(rate, []).append(math.nan if mean is None else 100 * mean)
                    es.setdefault(rate, []).append(0.0 if std is None else 100 * std)
            threshold = rs[0]["thresholds"][THRESHOLD_KEYS[kind]]
            for row, rate in enumerate(("match", "grounding")):
                axes[row][col].errorbar(list(xs.values()), ys[rate], yerr=es[rate],
                                        label=model, **_RATE_ERR)
        trained_on = exp.subsets[subset]["train_subset"]
        shade = trained_on is not None and any(limit == THRESHOLD_KEYS[kind]
                                               for _, limit in TRAIN_SUBSETS[trained_on])
        for row, rate in enumerate(("match", "grounding")):
            ax = axes[row][col]
            if threshold is not None:
                ax.axvline(threshold + 0.5, color="grey", linestyle="--", linewidth=1)
                if shade:
                    ax.axvspan(threshold + 0.5, ax.get_xlim()[1], color="grey", alpha=0.08)
            ax.set_ylim(-2, 102)
            ax.set_ylabel(f"{RATE_TITLES[rate]} %")
            ax.set_xlabel("words (bucket centre)" if kind == "words" else "relations")
            ax.set_title(f"train: {subset}", fontsize=9)
            ax.grid(alpha=0.3)
        axes[0][col].legend(fontsize=7)
    fig.suptitle(f"Test accuracy vs {'expression length' if kind == 'words' else 'relations'}"
                 " (mean ± std over seeds)\ndashed: in-distribution threshold; shaded: "
                 "longer than any training expression",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return f"{path.name}: {', '.join(chosen)}{note}"


def _plot_train_size(exp: Experiment, groups: list[tuple[str, str, list[dict[str, Any]]]],
                     path: Path) -> str:
    fraction_groups = [(m, s, rs) for m, s, rs in groups
                       if exp.subsets.get(s, {}).get("fraction") is not None]
    if not fraction_groups:
        path.unlink(missing_ok=True)
        return f"{path.name}: skipped (no fraction subsets in the results)"
    rates = ("match", "grounding", "mrr")
    fig, axes = _new_figure(2, len(rates))
    lines: dict[tuple[str, Any], list[tuple[float, dict[str, list[Any]]]]] = {}
    for m, s, rs in fraction_groups:
        size = _stats(r["train_size"] for r in rs)[0]
        lines.setdefault((m, exp.subsets[s]["train_subset"]), []).append((size, rs))
    for (model, base), points in lines.items():
        points.sort(key=lambda p: p[0])
        label = model if base is None else f"{model} ({base})"
        for row, part in enumerate(("full", "out_of_distribution")):
            for col, rate in enumerate(rates):
                ys, es = [], []
                for _, rs in points:
                    mean, std, _ = _stats(_part(r, part, rate) for r in rs)
                    ys.append(math.nan if mean is None else 100 * mean)
                    es.append(0.0 if std is None else 100 * std)
                axes[row][col].errorbar([p[0] for p in points], ys, yerr=es, label=label,
                                        **_RATE_ERR)
    for m, s, rs in groups:  # the length subsets, as single reference points
        if exp.subsets.get(s, {}).get("fraction") is None:
            size = _stats(r["train_size"] for r in rs)[0]
            for row, part in enumerate(("full", "out_of_distribution")):
                for col, rate in enumerate(rates):
                    mean, std, _ = _stats(_part(r, part, rate) for r in rs)
                    if mean is not None:
                        axes[row][col].errorbar([size], [100 * mean], yerr=[100 * (std or 0)],
                                                marker="x", linestyle="none", capsize=3,
                                                label=f"{m} ({s})")
    largest = max(_stats(r["train_size"] for r in rs)[0] for _, _, rs in groups)
    for row, part in enumerate(("full", "out_of_distribution")):
        for col, rate in enumerate(rates):
            ax = axes[row][col]
            ax.set_xlim(0, 1.08 * largest)
            ax.set_ylim(-2, 102)
            ax.set_xlabel("training problems")
            ax.set_ylabel(f"{PART_TITLES[part]} {RATE_TITLES[rate]} %")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Test accuracy vs training-set size (mean ± std over seeds)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return f"{path.name}: " + ", ".join(dict.fromkeys(s for _, s, _ in fraction_groups))


def _time_notes(out: Path, results: Sequence[dict[str, Any]]) -> list[str]:
    """The measured time of the runs summarised, and the last estimate of the grid."""
    spent = sum(float(r.get("wall_time_s") or 0) for r in results)
    notes = [f"time: the {len(results)} run(s) summarised took {_duration(spent)} in all "
             "(the sum of their wall times)"] if results else []
    estimate = _read_json(out / "time_estimate.json")
    if estimate and "full_seconds" in estimate:
        jobs = estimate.get("jobs", 1)
        parallel = (f" one run at a time, at best {_duration(estimate['full_jobs_seconds'])} "
                    f"{jobs} at a time" if jobs > 1 and "full_jobs_seconds" in estimate else "")
        notes.append(f"time: the full grid ({estimate['full_runs']} runs"
                     f"{_and_stages(estimate.get('full_stages'))}) is estimated at "
                     f"{_duration(estimate['full_seconds'])}{parallel} on this machine "
                     f"(probe of {estimate['probe_steps']} training steps per model; "
                     "`time_estimate.json`)")
    elif estimate:
        notes.append(f"time: the last {estimate['runs']} run(s) trained were estimated at "
                     f"{_duration(estimate['seconds'])} before they started")
    return notes


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def aggregate(exp: Experiment, out: str | Path,
              extra_runs: Sequence[tuple[str, str, int]] = ()) -> ExperimentReport:
    """Gather every current result under ``out`` (all runs of the config, plus
    ``extra_runs``) into results.csv, summary.md and the plots."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results, notes = _collect(exp, out, extra_runs)
    notes = _time_notes(out, results) + notes
    files = {"csv": out / "results.csv", "summary": out / "summary.md",
             "length": out / "accuracy_vs_length.png",
             "relations": out / "accuracy_vs_relations.png",
             "train_size": out / "accuracy_vs_train_size.png"}
    _write_csv(_csv_rows(results), files["csv"])
    groups = _group(results, exp)
    plots = [_plot_buckets(exp, groups, "words", files["length"]),
             _plot_buckets(exp, groups, "relations", files["relations"]),
             _plot_train_size(exp, groups, files["train_size"])]
    runs = [(r["model"], r["subset"], r["seed"]) for r in results]
    stages = [record for state, record in (_pretrain_state(exp, out, n, k)
                                           for n, k in _stages(exp, runs))
              if state == "done" and record is not None]
    summary = format_summary(exp, results, notes + [f"plot {p}" for p in plots], stages)
    files["summary"].write_text(summary, encoding="utf-8")
    return ExperimentReport([], results, summary,
                            {k: v for k, v in files.items() if v.exists()}, notes)
