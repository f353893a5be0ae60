"""The settings a training config may hold: every section and key, its type, range and use.

A command that reads a config (``rcrn train``, ``rcrn demo``, ``rcrn lengthgen``) checks
it once with :func:`check_config` before anything runs.  An unknown section or key, a
value of the wrong type and a value out of range are each a one-line
:class:`~rcrn.engine.config.ConfigError` naming the key, the value and what is allowed
(and, for an unknown key, the nearest known one).  Nothing is converted silently: an
integer setting refuses ``1.5`` (and ``2.0``), a number refuses ``"abc"``; the one
conversion is a number written as ``1e-3``, which YAML reads as text, and which a number
setting reads as the number it spells.

The sections (:data:`SECTIONS`):

* ``seed``: the run's seed; ``train``, ``eval``, ``loss``, ``words`` and
  ``region_encoder``: the tables below;
* ``data``: a table per benchmark (:data:`DATA`, registered by the ``benchmarks``
  package), chosen by ``data.benchmark``.  Keys
  of another benchmark's table are checked by its rules and left unused (a config
  written for the synthetic benchmark may be trained with ``--benchmark gitm_mr``);
* ``model``: the fields of ``RCRNConfig`` (``model.arch: rcrn``, the default) or of
  ``CrossEncoderConfig`` (``model.arch: cross_encoder``), typed by their annotations,
  with the ranges of :data:`MODEL_RANGES`; the choices and the rules that tie fields
  together are ``RCRNConfig.validate``'s.

Every setting carries its default, written once in these tables (the ``data`` keys in
each benchmark's table; ``loss`` and ``region_encoder`` take ``LossConfig``'s and
``RegionCNN``'s): the code reads a section with :func:`section`, which fills the keys a
config leaves out, instead of ``.get(key, default)``.
``rcrn.engine.schema.describe()`` lists every key with its type, default and use.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import inspect
import math
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rcrn.engine.config import ConfigError
from rcrn.losses import LossConfig
from rcrn.models.region_cnn import RegionCNN

__all__ = ["Setting", "SECTIONS", "DATA", "MODEL_RANGES", "register_data", "check_config",
           "describe", "Section", "section", "seed", "Int", "Float", "Bool", "Text", "Choice",
           "Custom", "UINT32"]

UINT32 = 2 ** 32 - 1
#: a number YAML 1.1 reads as text (no dot before the exponent: ``1e-3``, ``5E4``)
_NUMBER_TEXT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ------------------------------------------------------------------ settings
@dataclass(frozen=True)
class Setting:
    """One key: what it holds (``allowed``, used in messages), its use, and its check.

    ``check(value)`` returns the value to keep (the same, except for a number written
    as text) or raises ``ValueError`` whose text says why; the message then names the
    key, the value and what is allowed.  ``allowed`` is a text, or a function giving
    it when the names are known only at run time (the parsers installed).
    """

    allowed_text: str | Callable[[], str]
    doc: str
    check: Callable[[Any], Any]
    default: Any = None

    @property
    def allowed(self) -> str:
        text = self.allowed_text
        return text if isinstance(text, str) else text()

    def __call__(self, path: str, value: Any) -> Any:
        try:
            return self.check(value)
        except ConfigError:
            raise
        except ValueError as exc:
            why = f" ({_one_line(exc)})" if str(exc) else ""
            raise ConfigError(f"{path} must be {self.allowed}, got {_show(value)}{why}"
                              ) from None


def _setting(allowed: str | Callable[[], str], doc: str, check: Callable[[Any], Any],
             null: bool, default: Any = None) -> Setting:
    if null:
        inner = check
        check = lambda v: None if v is None else inner(v)  # noqa: E731
        allowed = (f"{allowed} or null" if isinstance(allowed, str)
                   else (lambda a=allowed: f"{a()} or null"))
    return Setting(allowed, doc, check, default)


def _range_text(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    def num(x: float) -> str:
        return str(x) if _is_int(x) else f"{x:g}"

    parts = []
    if lo is not None:
        parts.append(f"{'>' if lo_open else '>='} {num(lo)}")
    if hi is not None:
        parts.append(f"{'<' if hi_open else '<='} {num(hi)}")
    return " and ".join(parts)


def _in_range(value: float, lo: float | None, hi: float | None, lo_open: bool,
              hi_open: bool) -> None:
    if lo is not None and (value < lo or (lo_open and value == lo)):
        raise ValueError("")
    if hi is not None and (value > hi or (hi_open and value == hi)):
        raise ValueError("")


def Int(doc: str, lo: int | None = None, hi: int | None = None, null: bool = False,
        default: Any = None) -> Setting:
    """An integer (not a bool, not ``2.0``) in ``[lo, hi]``."""
    bounds = _range_text(lo, hi, False, False)
    allowed = f"an integer {bounds}" if bounds else "an integer"

    def check(v: Any) -> Any:
        if not _is_int(v):
            if _is_number(v) and not isinstance(v, int):
                raise ValueError("a whole number is needed; it is not rounded")
            raise ValueError("")
        _in_range(v, lo, hi, False, False)
        return v

    return _setting(allowed, doc, check, null, default)


def _number(v: Any) -> float:
    if isinstance(v, str) and _NUMBER_TEXT.match(v.strip()):
        v = float(v)
    if not _is_number(v):
        raise ValueError("")
    if not math.isfinite(v):
        raise ValueError("")
    return v


def Float(doc: str, lo: float | None = None, hi: float | None = None, lo_open: bool = False,
          hi_open: bool = False, null: bool = False, default: Any = None) -> Setting:
    """A finite number (an integer is one too) in the range given."""
    bounds = _range_text(lo, hi, lo_open, hi_open)
    allowed = f"a number {bounds}" if bounds else "a finite number"

    def check(v: Any) -> Any:
        v = _number(v)
        _in_range(v, lo, hi, lo_open, hi_open)
        return v

    return _setting(allowed, doc, check, null, default)


def Bool(doc: str, null: bool = False, default: Any = None) -> Setting:
    def check(v: Any) -> Any:
        if not isinstance(v, bool):
            raise ValueError("")
        return v

    return _setting("true or false", doc, check, null, default)


def Text(doc: str, null: bool = False, what: str = "a non-empty text", default: Any = None
         ) -> Setting:
    def check(v: Any) -> Any:
        if not isinstance(v, str) or not v.strip():
            raise ValueError("")
        return v

    return _setting(what, doc, check, null, default)


def Choice(doc: str, choices: tuple[str, ...] | Callable[[], tuple[str, ...]],
           null: bool = False, canonical: Callable[[str], str] | None = None,
           default: Any = None) -> Setting:
    """One of ``choices`` (a tuple, or a function giving it when the check runs)."""
    names = choices if callable(choices) else (lambda: choices)

    def check(v: Any) -> Any:
        key = canonical(v) if canonical and isinstance(v, str) else v
        if not isinstance(v, str) or key not in names():
            raise ValueError("")
        return v

    return _setting(lambda: f"one of {list(names())}", doc, check, null, default)


def Custom(doc: str, allowed: str, check: Callable[[Any], Any], null: bool = False,
           default: Any = None) -> Setting:
    return _setting(allowed, doc, check, null, default)


def _int_list(n: int, lo: int) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if not isinstance(v, list) or len(v) != n or not all(_is_int(x) and x >= lo
                                                            for x in v):
            raise ValueError("")
        return v

    return check


# ------------------------------------------------------------------ special values
def _device(v: Any) -> Any:
    import torch

    if not isinstance(v, str):
        raise ValueError("")
    if v == "auto":
        return v
    try:
        dev = torch.device(v)
    except (RuntimeError, ValueError):
        raise ValueError("") from None
    if dev.type == "cpu":
        return v
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("CUDA is not available on this machine; use cpu, or auto to "
                             "take a GPU when there is one")
        count = torch.cuda.device_count()
        if dev.index is not None and dev.index >= count:
            raise ValueError(f"this machine has {count} CUDA device(s)")
        return v
    if dev.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ValueError("MPS is not available on this machine")
        return v
    raise ValueError("")


def _amp(v: Any) -> Any:
    from rcrn.engine.distributed import amp_dtype

    amp_dtype(v)  # its ConfigError names the setting and the choices
    return v


def _compile(v: Any) -> Any:
    if v is None or isinstance(v, bool):
        return v
    if not isinstance(v, str) or not v.strip():
        raise ValueError("")
    if v.lower() in ("", "off", "false", "none", "true"):
        return v
    try:
        from torch._dynamo import list_backends
    except ImportError:  # no torch.compile in this torch: the trainer's error decides
        return v
    names = set(list_backends(exclude_tags=())) | {"inductor", "eager", "aot_eager"}
    if v not in names:
        shown = sorted(n for n in names if "TESTING" not in n and "minifier" not in n)
        raise ValueError(f"known backends: {', '.join(shown)}")
    return v


def _glove(v: Any) -> Any:
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) and x for x in v):
        return v
    raise ValueError("")


# ------------------------------------------------------------------ the tables
TRAIN: dict[str, Setting] = {
    "steps": Int("optimisation steps of the run", lo=1, default=1000),
    "batch_size": Int("problems per step (the global batch under torchrun)", lo=1,
                      default=64),
    "lr": Float("Adam's learning rate", lo=0, lo_open=True, default=5e-4),
    "front_lr": Float("learning rate of the front end's parameters (the UNITER encoder, "
                      "the release's SOLVER.UNITER_LR, or RCRN-VL's vision-language "
                      "layers; null: train.lr)", lo=0, lo_open=True, null=True),
    "lr_decay": Choice("learning-rate schedule over train.steps", ("none", "cosine"),
                       null=True, default="none"),
    "log_every": Int("steps between lines of metrics.jsonl", lo=1, default=50),
    "eval_every": Int("steps between evaluations during training (0: only at the end)",
                      lo=0, default=0),
    "checkpoint_every": Int("steps between checkpoints written during training (0: only "
                            "at the end)", lo=0, default=200),
    "grad_clip": Float("gradient-norm clipping", lo=0, lo_open=True, default=10.0),
    "init": Text("a checkpoint of rcrn train whose weights start the model (fine-tuning: "
                 "every weight must fit; word rows are copied by word; the optimizer starts "
                 "afresh); null: random initialisation", null=True,
                 what="a checkpoint path"),
    "match_warmup": Int("first steps trained on grounding alone (match weight 0)", lo=0,
                        default=0),
    "num_workers": Int("DataLoader worker processes", lo=0, default=0),
    "group_by": Text("a problem meta key whose items are batched together (e.g. "
                     "image_path)", null=True, what="a meta key (e.g. image_path)"),
    "device": Custom("where to train", "cpu, cuda, cuda:N, mps or auto (available here)",
                     _device, default="cpu"),
    "backend": Choice("torch.distributed backend under torchrun (default gloo on CPU, "
                      "nccl on CUDA)", ("gloo", "nccl", "mpi", "ucc"), null=True),
    "amp": Custom("autocast dtype of the forward", "off (or null) or bf16", _amp),
    "compile": Custom("torch.compile the training step", "true, false (or null) or a "
                      "torch.compile backend name", _compile),
    "find_unused_parameters": Bool("DistributedDataParallel's find_unused_parameters",
                                   default=True),
}

EVAL: dict[str, Setting] = {
    "batch_size": Int("problems per batch when predicting", lo=1, default=128),
}


def _defaults(cls: Any) -> dict[str, Any]:
    """The defaults of a dataclass's fields, or of a class's ``__init__`` arguments,
    as a config holds them (lists for tuples)."""
    if dataclasses.is_dataclass(cls):
        found = {f.name: f.default for f in dataclasses.fields(cls)}
    else:
        found = {name: p.default for name, p in inspect.signature(cls).parameters.items()}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in found.items()}


_LOSS = _defaults(LossConfig)
LOSS: dict[str, Setting] = {
    "mu": Float("weight of the match term", lo=0, default=_LOSS["mu"]),
    "omega": Float("weight of the box-regression term", lo=0, default=_LOSS["omega"]),
    "iou_threshold": Float("IoU a chosen proposal needs for the regression term", lo=0,
                           hi=1, default=_LOSS["iou_threshold"]),
    "reg": Choice("the regression term's rule", ("toolkit", "release"), default=_LOSS["reg"]),
    "pair": Float("weight of the pair-ranking term (0: off)", lo=0, default=_LOSS["pair"]),
    "pair_margin": Float("margin of the pair-ranking term, in log belief", lo=0,
                         default=_LOSS["pair_margin"]),
    "blame": Float("weight of the relation-blame term (0: off)", lo=0, default=_LOSS["blame"]),
    "align": Float("weight of the entity-alignment term of the cross-encoder's verifier "
                   "(0: off)", lo=0, default=_LOSS["align"]),
}

WORDS: dict[str, Setting] = {
    "glove": Custom("pretrained word vectors in GloVe format", "[VOCAB_TXT, MATRIX_NPY]",
                    _glove, null=True),
    "transformers": Text("a local transformers model folder whose encoder gives the word "
                         "vectors", null=True, what="a folder path"),
    "freeze": Bool("keep pretrained word vectors fixed", default=False),
}

_REGION = _defaults(RegionCNN)
REGION_ENCODER: dict[str, Setting] = {
    "channels": Custom("channels of the region CNN's three conv layers",
                       "a list of 3 integers >= 1", _int_list(3, 1),
                       default=_REGION["channels"]),
    "pool_size": Int("RoI pooling bins per side", lo=1, default=_REGION["pool_size"]),
    "strides": Custom("strides of the three conv layers", "a list of 3 integers >= 1",
                      _int_list(3, 1), default=_REGION["strides"]),
}

#: ``data`` keys by benchmark (besides ``benchmark`` and ``root``): every benchmark that
#: ``rcrn train`` runs from a config registers its table with :func:`register_data` (the
#: ``benchmarks`` package does, on import).
DATA: dict[str, dict[str, Setting]] = {}


def register_data(benchmark: str, table: dict[str, Setting]) -> None:
    """Make ``benchmark`` a value of ``data.benchmark`` whose own keys are ``table``."""
    DATA[benchmark] = dict(table)


def _benchmarks() -> tuple[str, ...]:
    return tuple(DATA)


_COMMON: dict[str, Setting] = {
    "benchmark": Choice("the benchmark trained on", _benchmarks,
                        canonical=lambda s: s.replace("-", "_"), default="synthetic"),
    "root": Text("the dataset folder", null=True, what="a folder path"),
}

_SEED = Int("the run's seed", lo=0, hi=UINT32, default=0)

#: Top-level keys: the seed and the sections (``model`` and ``data`` are described above).
SECTIONS: dict[str, Any] = {
    "seed": _SEED,
    "data": DATA,
    "model": "RCRNConfig / CrossEncoderConfig fields",
    "region_encoder": REGION_ENCODER,
    "loss": LOSS,
    "train": TRAIN,
    "eval": EVAL,
    "words": WORDS,
}
#: Sections that may be null or empty (none: no pixel encoder, learned word vectors).
_NULLABLE = ("region_encoder", "words")

#: Ranges of ``model`` fields that ``RCRNConfig.validate`` leaves to the schema.
MODEL_RANGES: dict[str, dict[str, Setting]] = {
    "rcrn": {
        **{name: Int(f"model width: {name}", lo=1)
           for name in ("word_dim", "lstm_hidden", "joint", "hidden", "sim_dim", "vis_dim",
                        "spatial_dim", "pair_dim", "classify_hidden")},
        "k": Int("context regions per node (Select's top-K)", lo=1),
        "eps": Float("floor of the log messages", lo=0, lo_open=True),
        "belief_floor": Float("added to every local belief", lo=0),
        "release_slots": Int("region slots of the release's padding (0: none)", lo=0),
        **{name: Float(f"dropout probability: {name}", lo=0, hi=1, hi_open=True)
           for name in ("dropout", "word_dropout")},
    },
    "cross_encoder": {
        **{name: Int(f"model width: {name}", lo=1)
           for name in ("word_dim", "vis_dim", "dim", "layers", "heads", "ff")},
        "dropout": Float("dropout probability", lo=0, hi=1, hi_open=True),
    },
}


# ------------------------------------------------------------------ checking
def _unknown(path: str, key: Any, value: Any, known: list[str],
             elsewhere: Mapping[str, list[str]] | None = None,
             listed: list[str] | None = None, benchmark: str = "") -> ConfigError:
    """The error of an unknown key: its value, the nearest of ``known`` (or the section
    of ``elsewhere`` that has it) and the keys ``listed`` (default ``known``)."""
    where = f"{path}.{key}" if path else str(key)
    names = [str(k) for k in known]
    near = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
    hint = f" did you mean {path + '.' if path else ''}{near[0]}?" if near else ""
    if not near and elsewhere:
        other = [s for s, keys in elsewhere.items() if key in keys]
        if other:
            hint = f" did you mean {other[0]}.{key}?"
    if path == "data" and listed is not None:
        path = f"data (benchmark {benchmark})"
    what = f"{path} takes" if path else "a config has"
    listed = [str(k) for k in (listed if listed is not None else known)]
    return ConfigError(f"{where}: unknown key (value {_show(value)});{hint} {what}: "
                       f"{', '.join(sorted(listed))}")


def _check_table(path: str, section: dict[str, Any], table: Mapping[str, Setting],
                 elsewhere: Mapping[str, list[str]] | None = None) -> None:
    for key, value in list(section.items()):
        if key not in table:
            raise _unknown(path, key, value, list(table), elsewhere)
        section[key] = table[key](f"{path}.{key}", value)


def _section(config: dict[str, Any], name: str) -> dict[str, Any] | None:
    value = config[name]
    if value is None and name in _NULLABLE:
        return None
    if not isinstance(value, dict):
        allowed = "a mapping of settings" + (" or null" if name in _NULLABLE else "")
        raise ConfigError(f"{name} must be {allowed}, got {_show(value)}")
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{name}: keys are names, got {_show(bad[0])}")
    return value


def _data_table(data: Mapping[str, Any]) -> tuple[str, dict[str, Setting]]:
    """The benchmark ``data`` names and its keys (a benchmark's own ``root`` replaces the
    common one, to give it a default)."""
    bench = _COMMON["benchmark"]("data.benchmark", data.get("benchmark",
                                                            _COMMON["benchmark"].default))
    bench = bench.replace("-", "_")
    return bench, {**_COMMON, **DATA[bench]}


def _check_data(data: dict[str, Any]) -> None:
    bench, own = _data_table(data)
    for key, value in list(data.items()):
        path = f"data.{key}"
        if key in own:
            data[key] = own[key](path, value)
        else:
            others = [b for b in DATA if key in DATA[b]]
            if not others:
                known = set(_COMMON) | {k for b in DATA for k in DATA[b]}
                raise _unknown("data", key, value, sorted(known), listed=list(own),
                               benchmark=bench)
            # another benchmark's setting: unused here, but it must be a valid one
            errors = []
            for other in others:
                try:
                    data[key] = DATA[other][key](path, value)
                    break
                except ConfigError as exc:
                    errors.append(exc)
            else:
                raise errors[0]


def _model_fields(arch: str) -> dict[str, type]:
    from rcrn.models.cross_encoder import CrossEncoderConfig
    from rcrn.models.rcrn import RCRNConfig

    cls = RCRNConfig if arch == "rcrn" else CrossEncoderConfig
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.name != "arch"}


def _typed(annotation: Any, name: str) -> Setting:
    """A check from a dataclass field's annotation."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    null = type(None) in args
    if null:
        rest = [a for a in args if a is not type(None)]
        annotation = rest[0] if len(rest) == 1 else Any
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is bool:
        return Bool(name, null=null)
    if annotation is int:
        return Int(name, null=null)
    if annotation is float:
        return Float(name, null=null)
    if annotation is str:
        return Text(name, null=null, what="a text")
    if origin is dict:
        values = args[1] if len(args) == 2 else Any

        def check(v: Any) -> Any:
            if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
                raise ValueError("")
            if values is str and not all(isinstance(x, str) for x in v.values()):
                raise ValueError("")
            return v
        what = "a mapping of names to names" if values is str else "a mapping of settings"
        return Custom(name, what, check, null)
    return Custom(name, "any value", lambda v: v)


def _check_model(model: dict[str, Any]) -> None:
    from rcrn.engine.trainer import ARCHS

    arch = model.get("arch", "rcrn")
    if arch not in ARCHS:
        raise ConfigError(f"model.arch must be one of {list(ARCHS)}, got {_show(arch)}")
    fields = _model_fields(arch)
    ranges = MODEL_RANGES[arch]
    for key, value in list(model.items()):
        if key == "arch":
            continue
        if key not in fields:
            other = "cross_encoder" if arch == "rcrn" else "rcrn"
            err = str(_unknown("model", key, value, [*fields, "arch"]))
            if key in _model_fields(other):
                err = err.replace(");", f"; a setting of model.arch {other});", 1)
            raise ConfigError(err.replace(": unknown key", f": unknown key for model.arch "
                                                           f"{arch}", 1))
        if key == "grounding_scale":
            continue  # a number or 'learned': RCRNConfig.validate says so
        check = ranges.get(key) or _typed(fields[key], key)
        model[key] = check(f"model.{key}", value)
    if arch == "rcrn":
        _check_rcrn(model)
    elif model.get("dim", 128) % model.get("heads", 4):
        raise ConfigError(f"model.dim must be divisible by model.heads, got dim "
                          f"{model.get('dim', 128)} and heads {model.get('heads', 4)}")


def _check_rcrn(model: dict[str, Any]) -> None:
    from rcrn import programs as P
    from rcrn.models.rcrn import RCRNConfig
    from rcrn.nn.aggregate import Aggregate

    cfg = RCRNConfig(**model)
    try:
        cfg.validate()
    except (ValueError, TypeError) as exc:
        raise ConfigError(_one_line(exc)) from None
    try:
        program = P.resolve(cfg.program, cfg.k)
    except P.ProgramError as exc:
        raise ConfigError(f"model.program must be a program text or one of "
                          f"{sorted(P.ABLATIONS)}: {_one_line(exc)}") from None
    reduce = cfg.message_reduce
    bad = {k: v for k, v in reduce.items() if v not in Aggregate.REDUCE}
    if bad:
        key = next(iter(bad))
        raise ConfigError(f"model.message_reduce.{key} must be one of {list(Aggregate.REDUCE)}, "
                          f"got {_show(bad[key])}")
    names = sorted(n for n, (kind, _) in P.gate_specs(program).items()
                   if kind == "gateprod")
    for key in reduce:
        if key not in names:
            raise _unknown("model.message_reduce", key, reduce[key], names)


def check_config(config: Any) -> dict[str, Any]:
    """Check a resolved training config against the schema; returns it.

    Numbers written as text (``1e-3``) are replaced by the number in ``config``;
    nothing else changes.

    Raises:
        ConfigError: one line naming the first key that cannot be used, its value and
            what is allowed.
    """
    if not isinstance(config, dict):
        raise ConfigError(f"a config is a mapping of sections, got {_show(config)}")
    sections = {name: list(table) for name, table in SECTIONS.items()
                if isinstance(table, dict) and name != "data"}
    sections["model"] = list(_model_fields("rcrn"))
    for key in list(config):
        if key not in SECTIONS:
            raise _unknown("", key, config[key], list(SECTIONS), sections)
    if "seed" in config:
        config["seed"] = _SEED("seed", config["seed"])
    for name, table in (("train", TRAIN), ("eval", EVAL), ("loss", LOSS), ("words", WORDS),
                        ("region_encoder", REGION_ENCODER)):
        if name in config:
            section = _section(config, name)
            if section is not None:
                others = {s: k for s, k in sections.items() if s != name}
                _check_table(name, section, table, others)
    if "data" in config:
        _check_data(_section(config, "data"))
    if "model" in config:
        _check_model(_section(config, "model"))
    return config


class Section(Mapping[str, Any]):
    """A config section as the code reads it: every key of its table, the value the
    config gives (checked) or the table's default.  Read-only; a key reads as an
    attribute too (``train.steps``).  :func:`section` makes one."""

    __slots__ = ("_name", "_values")

    def __init__(self, name: str, values: dict[str, Any]) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", values)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __getattr__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(f"{self._name} has no setting {key!r}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{self._name} settings are read-only")

    def __iter__(self) -> Any:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"Section({self._name}: {inner})"


#: The sections :func:`section` reads (``model`` is read by ``RCRNConfig`` /
#: ``CrossEncoderConfig``, whose fields carry its defaults).
_TABLES = {"train": TRAIN, "eval": EVAL, "loss": LOSS, "words": WORDS,
           "region_encoder": REGION_ENCODER}


def section(config: Mapping[str, Any], name: str) -> Section:
    """Section ``name`` of ``config`` with every key filled: the config's values, checked
    as :func:`check_config` checks them, and the defaults of the keys it leaves out.

    The defaults are written once, in the tables of this module (the ``data`` keys in
    each benchmark's table; the ``loss`` and ``region_encoder`` defaults are those of
    ``LossConfig`` and ``RegionCNN``).  A null or absent section reads as all
    defaults (whether a ``region_encoder`` is wanted is the caller's question).

    Raises:
        ConfigError: naming the first key that is unknown or cannot be used.
    """
    if name not in _TABLES and name != "data":
        raise KeyError(f"no config section {name!r}; sections: {[*_TABLES, 'data']}")
    given = config.get(name) if isinstance(config, Mapping) else None
    given = {} if given is None else given
    if not isinstance(given, Mapping):
        raise ConfigError(f"{name} must be a mapping of settings, got {_show(given)}")
    given = dict(given)
    if name == "data":
        _check_data(given)
        table = _data_table(given)[1]
    else:
        table = _TABLES[name]
        _check_table(name, given, table)
    return Section(name, {key: given[key] if key in given else copy.copy(setting.default)
                          for key, setting in table.items()})


def seed(config: Mapping[str, Any]) -> int:
    """The run's seed (``seed``; default 0)."""
    return _SEED("seed", config.get("seed", _SEED.default))


def describe() -> str:
    """Every key of every section with what it takes, its default and what it does,
    one a line."""
    def line(key: str, s: Setting) -> str:
        default = "" if s.default is None else f" (default {s.default!r})"
        return f"{key}: {s.allowed}{default} -- {s.doc}"

    lines = [line("seed", _SEED)]
    for name, table in _TABLES.items():
        for key, s in table.items():
            lines.append(line(f"{name}.{key}", s))
    for key, s in _COMMON.items():
        lines.append(line(f"data.{key}", s))
    if not DATA:
        lines.append("data.*: no benchmark registered its keys (import benchmarks)")
    for bench, table in DATA.items():
        for key, s in table.items():
            lines.append(line(f"data.{key} ({bench})", s))
    for arch in ("rcrn", "cross_encoder"):
        for key, annotation in _model_fields(arch).items():
            s = MODEL_RANGES[arch].get(key) or _typed(annotation, key)
            lines.append(f"model.{key} (arch {arch}): {s.allowed}")
    return "\n".join(lines)
