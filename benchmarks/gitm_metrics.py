"""GITM-MR metrics: Match%, Grounding% and MRR%, with their "oracle" variants.

The definitions follow the GITM-MR benchmark (paper section 5.1).  Two rule sets
are available; ``rules="official"`` (the default) computes what the official
evaluation of the public release computes (SHTUPLUS/GITM-MR,
``detectron2/evaluation/refdet_evaluation.py`` with ``compute_IoU`` of
``detectron2/utils/refdet_basics.py``); ``rules="toolkit"`` keeps this package's
earlier rules.  The result names the rule set in its ``"rules"`` field.

* **Match** -- accuracy of the match label over every pair; a prediction says
  "matched" when ``match_prob > 0.5`` (official: the match logit ``> 0``;
  toolkit: ``match_prob >= 0.5``).
* **Grounding** -- over the *matched* (positive) items: the item is predicted as
  matched AND the predicted box has IoU ``> 0.5`` with the referent box, the IoU
  taken with the inclusive-pixel convention (``w = x2 - x1 + 1``); the
  denominator is every positive (a positive without a referent box counts as an
  error).  Toolkit: IoU ``>= 0.5`` with ``w = x2 - x1``, and positives without a
  referent box are left out of the denominator.
* **MRR** (mismatched relation reasoning) -- over the *mismatched* (negative)
  items: the item is predicted as mismatched AND the predicted relation index is
  the mismatched relation (both rule sets).
* **Oracle** variants drop the match-prediction requirement: grounding only needs
  the box, MRR only needs the relation.

Every metric is reported on the full set and, given a length per item and a
threshold, on the in-distribution (``length <= threshold``) and
out-of-distribution (``length > threshold``) parts, as in the Train-Len16 /
Train-Len11 settings.  The length is the caller's: the official rule is each
item's own expression length ``len(expression.split())`` (a negative its own,
substituted, expression), as :meth:`benchmarks.gitm_mr.GITMMRBenchmark.evaluate`
passes it (its problems carry it as ``meta["tokens"]``; ``meta["length"]`` is the
toolkit length, the pair's positive word count).  Rates are fractions in ``[0, 1]``
(``None`` when a part holds no item of the kind); counts come with them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.base import DataError, check_prediction, check_relation_index, prediction_where
from rcrn.boxes import box_iou
from rcrn.structures import Prediction

__all__ = [
    "BUCKETS",
    "METRICS",
    "RULES",
    "GitmTarget",
    "as_target",
    "check_rules",
    "gitm_metrics",
    "format_table",
]

#: Parts of the evaluation set, in table order.
BUCKETS = ("full", "in_distribution", "out_of_distribution")

#: Rate names of one bucket, in table order.
METRICS = ("match", "grounding", "mrr", "grounding_oracle", "mrr_oracle")

#: Rule sets: the release's official evaluation (the default) and this package's earlier one.
RULES = ("official", "toolkit")

_RULE_TITLES = {"official": "official (SHTUPLUS/GITM-MR refdet_evaluation.py)",
                "toolkit": "toolkit (match_prob >= 0.5, IoU >= threshold with w = x2 - x1, "
                           "grounding over positives with a box)"}

_BUCKET_TITLES = {"full": "Full", "in_distribution": "In-distribution",
                  "out_of_distribution": "Out-of-distribution"}
_METRIC_TITLES = {"match": "Match%", "grounding": "Grounding%", "mrr": "MRR%",
                  "grounding_oracle": "Grounding% (oracle)", "mrr_oracle": "MRR% (oracle)"}


@dataclass(frozen=True)
class GitmTarget:
    """The ground truth of one item, as the metrics need it.

    Attributes:
        id: identifier matched against ``Prediction.id``.
        match: 1 for a matched (positive) pair, 0 for a mismatched one.
        referent_box: referent box (xyxy px) of a positive, else None.
        mismatched_relation: index of the mismatched relation of a negative, else None.
        length: the value compared with the threshold (words or relations), if known.
        proposal_boxes: boxes ``[n, 4]`` a ``Prediction.proposal`` index refers to, if any.
        num_relations: relations of the item's graph (the range of a predicted
            ``mismatched_relation``), if known.
    """

    id: str
    match: int
    referent_box: np.ndarray | None = None
    mismatched_relation: int | None = None
    length: float | None = None
    proposal_boxes: np.ndarray | None = None
    num_relations: int | None = None


def _get(item: Any, key: str, default: Any = None) -> Any:
    if isinstance(item, Mapping):
        return item.get(key, default)
    return getattr(item, key, default)


def as_target(item: Any, length_fn: Callable[[Any], float | None] | None = None) -> GitmTarget:
    """Turn a ``GroundingProblem``-like object or a dict into a :class:`GitmTarget`.

    Args:
        item: an object with attributes (or a dict with keys) ``id``, ``match``,
            ``referent_box``, ``mismatched_relation`` and optionally ``length``,
            ``proposals`` (a ``Proposals``) or ``proposal_boxes``, and
            ``num_relations`` (else the relations of ``graph``, when it has one).
            For an object without ``length``, ``meta['length']`` and then
            ``meta['words']`` are used.
        length_fn: overrides how the length is read: ``length_fn(item)``.

    Returns:
        The target.

    Raises:
        DataError: (a ``ValueError``) when the item has no 0/1 match label.
    """
    ident = str(_get(item, "id", ""))
    match = _get(item, "match")
    if match not in (0, 1, True, False):
        raise DataError(f"item {ident!r}: match must be 0 or 1, got {match!r}")
    if length_fn is not None:
        length = length_fn(item)
    else:
        length = _get(item, "length")
        meta = _get(item, "meta") or {}
        if length is None and isinstance(meta, Mapping):
            length = meta.get("length", meta.get("words"))
    box = _get(item, "referent_box")
    boxes = _get(item, "proposal_boxes")
    proposals = _get(item, "proposals")
    if boxes is None and proposals is not None:
        boxes = _get(proposals, "boxes")
    rel = _get(item, "mismatched_relation")
    n_rel = _get(item, "num_relations")
    if n_rel is None and _get(item, "graph") is not None:
        n_rel = len(_get(_get(item, "graph"), "relations", ()) or ())
    return GitmTarget(
        id=ident, match=int(match),
        referent_box=None if box is None else np.asarray(box, dtype=np.float64).reshape(4),
        mismatched_relation=None if rel is None else int(rel),
        length=None if length is None else float(length),
        proposal_boxes=(None if boxes is None
                        else np.asarray(boxes, dtype=np.float64).reshape(-1, 4)),
        num_relations=None if n_rel is None else int(n_rel),
    )


def check_rules(rules: str) -> str:
    """Return ``rules`` if it names a rule set of :data:`RULES`.

    Raises:
        ValueError: for another value.
    """
    if rules not in RULES:
        raise ValueError(f"unknown GITM-MR metric rules {rules!r}; choose from {list(RULES)}")
    return rules


def _predicted_box(target: GitmTarget, pred: Prediction) -> np.ndarray | None:
    if pred.box is not None:
        return np.asarray(pred.box, dtype=np.float64).reshape(4)
    boxes = target.proposal_boxes
    if boxes is not None and 0 <= pred.proposal < len(boxes):
        return boxes[pred.proposal]
    return None


def _rate(hits: int, total: int) -> float | None:
    return hits / total if total else None


def _bucket(outcomes: list[dict[str, bool]], rules: str) -> dict[str, Any]:
    pos = [o for o in outcomes if o["positive"]]
    neg = [o for o in outcomes if not o["positive"]]
    grounded = pos if rules == "official" else [o for o in pos if o["has_box"]]
    return {
        "match": _rate(sum(o["match"] for o in outcomes), len(outcomes)),
        "grounding": _rate(sum(o["grounding"] for o in grounded), len(grounded)),
        "mrr": _rate(sum(o["mrr"] for o in neg), len(neg)),
        "grounding_oracle": _rate(sum(o["grounding_oracle"] for o in grounded), len(grounded)),
        "mrr_oracle": _rate(sum(o["mrr_oracle"] for o in neg), len(neg)),
        "n": len(outcomes),
        "n_matched": len(pos),
        "n_mismatched": len(neg),
    }


def gitm_metrics(
    items: Iterable[Any],
    predictions: Sequence[Prediction],
    *,
    length_fn: Callable[[Any], float | None] | None = None,
    threshold: float | None = None,
    iou_threshold: float = 0.5,
    allow_missing: bool = False,
    rules: str = "official",
) -> dict[str, Any]:
    """Compute the GITM-MR metrics of ``predictions`` against ``items``.

    Args:
        items: ``GroundingProblem``-like objects or dicts (see :func:`as_target`).
        predictions: one ``Prediction`` per item, matched by id (order does not matter).
        length_fn: how to read an item's length; see :func:`as_target`.
        threshold: items with ``length <= threshold`` are in-distribution, longer ones
            out-of-distribution; ``None`` reports the full set only.
        iou_threshold: IoU a correct box must exceed (official, ``>``) or reach
            (toolkit, ``>=``); 0.5 in the benchmark.
        allow_missing: count items without a prediction as wrong instead of raising.
        rules: ``"official"`` (the release's evaluation) or ``"toolkit"``; see the
            module docstring.

    Returns:
        ``{"full": bucket, "in_distribution": bucket, "out_of_distribution": bucket,
        "threshold", "iou_threshold", "n_missing", "rules"}`` where a bucket maps each
        name of :data:`METRICS` to a fraction in ``[0, 1]`` (``None`` for an empty
        denominator) and holds the counts ``n``, ``n_matched`` and ``n_mismatched``.
        Positives without a referent box count as grounding errors (official) or are
        left out of the grounding denominators (toolkit); negatives without a known
        mismatched relation count as MRR errors.

    Raises:
        DataError: (a ``ValueError``) on duplicate ids, on a missing prediction (unless
            ``allow_missing``), on an item without a length when a threshold is given, on
            a prediction the metrics cannot read: ``match_prob`` not a finite number in
            [0, 1], a malformed box, a ``mismatched_relation`` out of the item's
            relations, a ``proposal`` index out of its proposals (see
            :func:`benchmarks.base.check_prediction`); messages name the file and line
            of predictions read by :func:`benchmarks.read_predictions`.
        ValueError: on unknown rules.
    """
    check_rules(rules)
    official = rules == "official"
    source = getattr(predictions, "path", "")
    by_id: dict[str, Prediction] = {}
    for pred in predictions:
        if pred.id in by_id:
            raise DataError(f"{source + ': ' if source else ''}two predictions for item "
                            f"{pred.id!r}")
        check_prediction(pred, prediction_where(predictions, pred.id))
        by_id[pred.id] = pred
    targets = [as_target(item, length_fn) for item in items]
    seen: set[str] = set()
    missing: list[str] = []
    outcomes: list[tuple[GitmTarget, dict[str, bool]]] = []
    for t in targets:
        if t.id in seen:
            raise DataError(f"item id {t.id!r} occurs twice")
        seen.add(t.id)
        if threshold is not None and t.length is None:
            raise DataError(f"item {t.id!r} has no length to compare with threshold {threshold}")
        pred = by_id.get(t.id)
        has_box = t.match == 1 and t.referent_box is not None
        if pred is None:
            missing.append(t.id)
            outcomes.append((t, {"positive": t.match == 1, "has_box": has_box, "match": False,
                                 "grounding": False, "grounding_oracle": False,
                                 "mrr": False, "mrr_oracle": False}))
            continue
        where = prediction_where(predictions, pred.id)
        check_relation_index(pred, t.num_relations, where)
        if (pred.box is None and pred.proposal >= 0 and t.proposal_boxes is not None
                and pred.proposal >= len(t.proposal_boxes)):
            raise DataError(f"{where}: 'proposal' {pred.proposal} is out of range (the "
                            f"item's image has {len(t.proposal_boxes)} proposal(s))")
        prob = float(pred.match_prob)
        said_match = prob > 0.5 if official else prob >= 0.5
        box_ok = False
        if has_box:
            box = _predicted_box(t, pred)
            if box is not None:
                iou = float(box_iou(box, t.referent_box, inclusive=official)[0, 0])
                box_ok = iou > iou_threshold if official else iou >= iou_threshold
        rel_ok = (t.match == 0 and t.mismatched_relation is not None
                  and pred.mismatched_relation is not None
                  and int(pred.mismatched_relation) == t.mismatched_relation)
        outcomes.append((t, {
            "positive": t.match == 1,
            "has_box": has_box,
            "match": said_match == (t.match == 1),
            "grounding": box_ok and said_match,
            "grounding_oracle": box_ok,
            "mrr": rel_ok and not said_match,
            "mrr_oracle": rel_ok,
        }))
    if missing and not allow_missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        raise DataError(f"{source + ': ' if source else ''}{len(missing)} item(s) have no "
                        f"prediction, e.g. {shown}")
    result: dict[str, Any] = {"full": _bucket([o for _, o in outcomes], rules)}
    if threshold is not None:
        result["in_distribution"] = _bucket(
            [o for t, o in outcomes if t.length <= threshold], rules)
        result["out_of_distribution"] = _bucket(
            [o for t, o in outcomes if t.length > threshold], rules)
    result["threshold"] = threshold
    result["iou_threshold"] = iou_threshold
    result["n_missing"] = len(missing)
    result["rules"] = rules
    return result


def format_table(metrics: Mapping[str, Any], title: str | None = None,
                 oracle: bool = True) -> str:
    """Render the output of :func:`gitm_metrics` as a Markdown table (percentages).

    Args:
        metrics: the dict returned by :func:`gitm_metrics`.
        title: an optional heading line placed above the table.
        oracle: include the oracle columns.

    Returns:
        The Markdown text, ending with a newline; a ``Rules: ...`` line follows the
        table when ``metrics`` names its rule set.
    """
    names = METRICS if oracle else METRICS[:3]
    header = ["Part", "N"] + [_METRIC_TITLES[m] for m in names]
    lines = []
    if title:
        lines += [f"### {title}", ""]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    threshold = metrics.get("threshold")
    for bucket in BUCKETS:
        if bucket not in metrics:
            continue
        row = metrics[bucket]
        label = _BUCKET_TITLES[bucket]
        if threshold is not None and bucket != "full":
            sign = "<=" if bucket == "in_distribution" else ">"
            label += f" ({sign} {threshold:g})"
        cells = [label, str(row["n"])]
        for m in names:
            value = row[m]
            cells.append("–" if value is None else f"{100.0 * value:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    rules = metrics.get("rules")
    if rules is not None:
        lines += ["", f"Rules: {_RULE_TITLES.get(rules, rules)}"]
    return "\n".join(lines) + "\n"
