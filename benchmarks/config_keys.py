"""The ``data`` section of a training config for every benchmark ``rcrn train`` runs.

Importing :mod:`benchmarks` registers these tables with the config schema
(:func:`rcrn.engine.schema.register_data`): ``data.benchmark`` chooses a table, and its keys
are checked by their rules before anything runs.
"""

from __future__ import annotations

from typing import Any

from benchmarks.synthetic.generator import GeneratorConfig
from rcrn.engine.schema import (
    UINT32,
    Bool,
    Choice,
    Custom,
    Int,
    Setting,
    Text,
    register_data,
)

__all__ = ["TABLES"]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _image_size(v: Any) -> Any:
    if _is_int(v) and v >= 16:
        return v
    if isinstance(v, list) and len(v) == 2 and all(_is_int(x) and x >= 16 for x in v):
        return v
    raise ValueError("")


def _proposals(v: Any) -> Any:
    if isinstance(v, str) and v.strip():
        return v
    if isinstance(v, dict) and isinstance(v.get("format"), str) and v["format"]:
        return v
    raise ValueError("")


def _parser_names() -> tuple[str, ...]:
    import parsers

    return tuple(b["name"] for b in parsers.available())


def _parser(null: bool, default: str | None = None) -> Setting:
    return Choice("the text parser (rcrn parse --list-parsers lists them)", _parser_names,
                  null=null, default=default)


def _synthetic_subsets() -> tuple[str, ...]:
    from benchmarks.synthetic.splits import TRAIN_SUBSETS

    return tuple(TRAIN_SUBSETS)


def _gitm_subset(v: Any) -> Any:
    from benchmarks.gitm_mr import canonical_subset

    if not isinstance(v, str):
        raise ValueError("")
    try:
        canonical_subset(v)
    except ValueError:
        raise ValueError("") from None
    return v


def _run(split: str | None) -> dict[str, Setting]:
    """The keys of VSR and What'sUp (rcrn.cli.benchmark_runs); ``split``: the default
    training split."""
    return {
        "split": Text("the training split (e.g. random/train, controlled_a)", null=True,
                      what="a split name", default=split),
        "eval_split": Text("the split evaluated at the end of training", null=True,
                           what="a split name"),
        "proposals": Custom("region proposals", "a COCO instances_*.json path or "
                            "{format: NAME, path: P, ...}", _proposals, null=True),
        "image_size": Custom("side (or [width, height]) images are resized to (null: "
                             "rcrn.cli.benchmark_runs.DEFAULT_IMAGE_SIZE)",
                             "an integer >= 16 or [width, height] of integers >= 16",
                             _image_size, null=True),
        "concept_filter": Bool("keep the boxes of the caption's concepts (null: for "
                               "ground-truth boxes)", null=True),
    }


#: ``data`` keys by benchmark (besides ``benchmark`` and ``root``), with their defaults.
TABLES: dict[str, dict[str, Setting]] = {
    "synthetic": {
        "root": Text("the dataset folder (generated when absent)", what="a folder path",
                     default="data/synthetic"),
        "scenes": Int("scenes generated when the data root is absent", lo=1, default=500),
        "seed": Int("the generator's seed (null: the run's seed)", lo=0, hi=UINT32,
                    null=True),
        "per_scene": Int("expression pairs generated per scene", lo=1,
                         default=GeneratorConfig.per_scene),
        "train_subset": Choice("train on a subset (Train-LenX), null: every pair",
                               _synthetic_subsets, null=True),
        "length": Choice("in- / out-of-distribution by", ("words", "relations"),
                         default="words"),
        "parser": _parser(null=False, default="rule"),
        "detector": Choice("boxes from pixels (components), null: the ground-truth boxes",
                           ("components",), null=True, default="components"),
    },
    "gitm_mr": {
        "train_subset": Custom("train subset", "len16, len11 or uniform (or an alias such "
                               "as Train-Len16)", _gitm_subset, null=True),
        "eval_split": Choice("the split evaluated at the end of training (null: none)",
                             ("train", "val", "test"), null=True, default="val"),
        "parser": _parser(null=True),
        "proposals": Text("another vinvl_objects folder (null: root/vinvl_objects)",
                          null=True, what="a folder path"),
        "threshold": Int("in / out-of-distribution word threshold (null: 16, 11 for "
                         "len11)", lo=1, null=True),
        "rules": Choice("the metrics' rules", ("official", "toolkit"), default="official"),
    },
    "vsr": _run("random/train"),
    "whatsup": _run(None),
}

for _name, _table in TABLES.items():
    register_data(_name, _table)
