"""VSR (Visual Spatial Reasoning) as graph-grounding problems, with the official scoring.

Each VSR record pairs a COCO image with a templated caption ``The SUBJ is REL the OBJ.``
(no ``is`` before ``contains``, ``consists of`` and ``has as a part``) and a true/false
label.  The adapter reads the released jsonl splits (random and zero-shot; both record
variants), takes subject and object from the caption -- the zero-shot ``subj`` field is
truncated upstream in 301 rows (``orse``, ``lephant``, ...), so it is never used -- and
turns each record into a two-entity, one-relation :class:`~rcrn.structures.LanguageGraph`
whose root is the subject.

Metrics follow the official analysis scripts: micro accuracy, accuracy per relation and
accuracy per meta-category read from ``rel_meta_category_dict.txt`` (``among`` is listed
twice there and the last entry, Unallocated, wins; ``congruent`` has no category and is
left out of the category tallies).  Predictions in the official format (``preds.txt``, one
0/1 per line in jsonl order) are read by :func:`read_preds` and written by
:func:`write_preds`.

Released split sizes: random 7,680 / 1,097 / 2,195 and zero-shot 3,489 / 340 / 1,222
(train / dev / test); the paper's zero-shot table gives 4,713 / 231 / 616 -- report the
files you used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import ProposalSource, get_proposals, predictions_by_id
from benchmarks.base import (
    DataError,
    check_relation_index,
    json_lines,
    prediction_where,
    resolve_root,
)
from rcrn.structures import (
    Entity,
    GroundingProblem,
    LanguageGraph,
    Prediction,
    Proposals,
    Relation,
)

__all__ = [
    "SPLITS",
    "NO_COPULA",
    "VSRItem",
    "VSRBenchmark",
    "parse_caption",
    "caption_graph",
    "read_records",
    "read_categories",
    "read_preds",
    "write_preds",
    "score",
]

#: The released split files, as ``kind/part``.
SPLITS = tuple(f"{kind}/{part}" for kind in ("random", "zeroshot")
               for part in ("train", "dev", "test"))
#: Relations written without ``is`` in the caption template.
NO_COPULA = frozenset({"contains", "consists of", "has as a part"})
#: The official category file name, looked up under the data root.
CATEGORY_FILE = "rel_meta_category_dict.txt"
ALL_FILE = "all_vsr_validated_data.jsonl"


# ---------------------------------------------------------------- captions
def parse_caption(caption: str, relation: str) -> tuple[str, str, bool]:
    """Split a VSR caption into subject, object and whether ``is`` precedes the relation.

    Args:
        caption: e.g. ``"The cat is on top of the bed."``.
        relation: the record's relation, e.g. ``"on top of"``.

    Returns:
        ``(subject, object, has_copula)``, e.g. ``("cat", "bed", True)``.

    Raises:
        ValueError: the caption does not follow ``The SUBJ (is )?REL the OBJ.``.
    """
    body = caption.strip()
    if body.endswith("."):
        body = body[:-1].rstrip()
    words = body.split()
    rel = relation.split()
    if not rel:
        raise ValueError("empty relation")
    if len(words) < 5 or words[0].lower() != "the":
        raise ValueError(f"caption {caption!r} does not start with 'The SUBJ'")
    # The subject is the shortest prefix after 'The' followed by '(is) REL the OBJ'.
    for end in range(2, len(words)):
        k = end
        copula = words[k] == "is" and words[k + 1:k + 1 + len(rel)] == rel
        if copula:
            k += 1
        if words[k:k + len(rel)] != rel:
            continue
        k += len(rel)
        if k + 1 < len(words) and words[k].lower() == "the":
            return " ".join(words[1:end]), " ".join(words[k + 1:]), copula
    raise ValueError(f"caption {caption!r} does not follow 'The SUBJ (is) {relation} the OBJ.'")


def caption_graph(caption: str, relation: str) -> LanguageGraph:
    """The language graph of a VSR caption: subject (root) --relation--> object.

    Tokens are the caption's words as written, with the final period split off.  Entity
    texts are the noun phrases in lower-case-article form, ``"the cat"`` / ``"the bed"``;
    their spans cover the same words in the tokens (the subject's article is written
    ``The`` there).  The relation's span covers the relation words only (not ``is``).

    Raises:
        ValueError: the caption does not follow the template.
    """
    subject, obj, copula = parse_caption(caption, relation)
    body = caption.strip()
    period = body.endswith(".")
    if period:
        body = body[:-1].rstrip()
    tokens = body.split() + (["."] if period else [])
    n_subj, n_rel, n_obj = len(subject.split()), len(relation.split()), len(obj.split())
    subj_span = (0, 1 + n_subj)
    rel_start = subj_span[1] + (1 if copula else 0)
    rel_span = (rel_start, rel_start + n_rel)
    obj_span = (rel_span[1], rel_span[1] + 1 + n_obj)
    entities = [
        Entity(text=f"the {subject}", span=subj_span, head=subject.split()[-1]),
        Entity(text=f"the {obj}", span=obj_span, head=obj.split()[-1]),
    ]
    relations = [Relation(subject=0, object=1, text=relation, span=rel_span)]
    return LanguageGraph(tokens=tokens, entities=entities, relations=relations, root=0,
                         text=caption.strip())


# ---------------------------------------------------------------- records
@dataclass
class VSRItem:
    """One VSR record.

    Attributes:
        index: position in the split (0-based, jsonl order).
        line: line number in the file (1-based).
        image: COCO file name, e.g. ``"000000451431.jpg"``.
        caption: the caption as written.
        label: 1 if the caption is true of the image, else 0.
        relation: the spatial relation, one of 66.
        subject: the subject noun phrase taken from the caption (without ``The``).
        object: the object noun phrase taken from the caption (without ``the``).
        annotator_id: the caption writer, if recorded.
        vote_true_validator_id: validators who voted true.
        vote_false_validator_id: validators who voted false.
        reference_frame: random split only (codes 0/1/2 for left/right relations), else None.
        image_link: the upstream image URL (never fetched).
        upstream_subj: the zero-shot ``subj`` field as released (may be truncated).
        upstream_obj: the zero-shot ``obj`` field as released.
        id: problem identifier, ``vsr:<split>:<index>``.
    """

    index: int
    line: int
    image: str
    caption: str
    label: int
    relation: str
    subject: str
    object: str
    annotator_id: int | None = None
    vote_true_validator_id: list[int] = field(default_factory=list)
    vote_false_validator_id: list[int] = field(default_factory=list)
    reference_frame: float | None = None
    image_link: str = ""
    upstream_subj: str | None = None
    upstream_obj: str | None = None
    id: str = ""

    def graph(self) -> LanguageGraph:
        """The caption's language graph (subject root, one relation)."""
        return caption_graph(self.caption, self.relation)


def _validators(value: Any, where: str, name: str) -> list[int]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise DataError(f"{where}: field {name!r} is not a JSON list: {value!r}") from exc
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool)
                                              for v in value):
        raise DataError(f"{where}: field {name!r} must be a list of integer ids, got {value!r}")
    return list(value)


def _item(record: Any, where: str, index: int, line: int, split: str) -> VSRItem:
    if not isinstance(record, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(record).__name__}")
    for key in ("image", "caption", "label", "relation"):
        if key not in record:
            raise DataError(f"{where}: field {key!r} missing")
    for key in ("image", "caption", "relation"):
        if not isinstance(record[key], str) or not record[key].strip():
            raise DataError(f"{where}: field {key!r} must be a non-empty string")
    label = record["label"]
    if isinstance(label, bool) or label not in (0, 1):
        raise DataError(f"{where}: field 'label' must be 0 or 1, got {label!r}")
    relation = record["relation"].strip()
    try:
        subject, obj, _ = parse_caption(record["caption"], relation)
    except ValueError as exc:
        raise DataError(f"{where}: {exc}") from exc
    frame = record.get("reference_frame")
    if frame is not None and (isinstance(frame, bool) or not isinstance(frame, (int, float))):
        raise DataError(f"{where}: field 'reference_frame' must be a number or null")
    annotator = record.get("annotator_id")
    if annotator is not None and (isinstance(annotator, bool) or not isinstance(annotator, int)):
        raise DataError(f"{where}: field 'annotator_id' must be an integer")
    return VSRItem(
        index=index, line=line, image=record["image"], caption=record["caption"],
        label=int(label), relation=relation, subject=subject, object=obj,
        annotator_id=annotator,
        vote_true_validator_id=_validators(record.get("vote_true_validator_id", []), where,
                                           "vote_true_validator_id"),
        vote_false_validator_id=_validators(record.get("vote_false_validator_id", []), where,
                                            "vote_false_validator_id"),
        reference_frame=None if frame is None else float(frame),
        image_link=str(record.get("image_link", "")),
        upstream_subj=record.get("subj"), upstream_obj=record.get("obj"),
        id=f"vsr:{split}:{index}",
    )


def read_records(path: str | Path, split: str = "") -> list[VSRItem]:
    """Read a VSR jsonl file (split file or the raw validated file).

    Args:
        path: the jsonl file.
        split: split name used in the items' ids (defaults to the file stem).

    Raises:
        DataError: naming the file and line of a malformed record or of a non-UTF-8
            line, or an empty file.  (A record written twice is kept: each record is
            one item of the accuracy, and templated captions may well repeat.)
    """
    path = Path(path)
    split = split or path.stem
    items: list[VSRItem] = []
    for lineno, where, record in json_lines(path, "VSR jsonl"):
        items.append(_item(record, where, len(items), lineno, split))
    if not items:
        raise DataError(f"{path}: no records")
    return items


def read_categories(path: str | Path) -> dict[str, str]:
    """Read the official relation -> meta-category file.

    The format is one ``Category: rel, rel, ...`` per line.  A relation listed twice
    takes its LAST category (as the official scripts do: ``among`` ends up Unallocated).

    Raises:
        DataError: naming the file and line of a malformed line, or an empty file.
    """
    path = Path(path)
    mapping: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from exc
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        category, sep, rest = line.partition(":")
        if not sep or not category.strip():
            raise DataError(f"{path} line {lineno}: expected 'Category: rel, rel, ...'")
        for rel in rest.split(","):
            if rel.strip():
                mapping[rel.strip()] = category.strip()
    if not mapping:
        raise DataError(f"{path}: no categories")
    return mapping


# ---------------------------------------------------------------- predictions
def read_preds(path: str | Path, expected: int | None = None) -> list[int]:
    """Read official-format predictions: one ``0`` or ``1`` per line, in jsonl order.

    Args:
        path: the predictions file (``preds.txt``).
        expected: the number of items; checked when given.

    Raises:
        DataError: naming the file and line of a bad value, or the counts on a mismatch.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a text file of 0/1 lines") from exc
    while lines and not lines[-1].strip():
        lines.pop()
    preds: list[int] = []
    for lineno, line in enumerate(lines, 1):
        value = line.strip()
        if value not in ("0", "1"):
            raise DataError(f"{path} line {lineno}: expected 0 or 1, got {value!r}")
        preds.append(int(value))
    if expected is not None and len(preds) != expected:
        raise DataError(f"{path}: {len(preds)} prediction lines for {expected} items")
    return preds


def write_preds(path: str | Path, labels: Sequence[int]) -> None:
    """Write predictions in the official format (one ``0``/``1`` per line).

    Raises:
        ValueError: a label other than 0 or 1.
    """
    out = []
    for i, v in enumerate(labels):
        if isinstance(v, bool) or int(v) != v or int(v) not in (0, 1):
            raise ValueError(f"prediction {i}: expected 0 or 1, got {v!r}")
        out.append(f"{int(v)}\n")
    Path(path).write_text("".join(out), encoding="utf-8")


# ---------------------------------------------------------------- scoring
def _rate(correct: int, count: int) -> float:
    return correct / count if count else 0.0


def score(records: Sequence[VSRItem | Mapping[str, Any]], preds: Sequence[int],
          categories: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Official VSR metrics.

    Args:
        records: the items (or raw jsonl records with ``label`` and ``relation``), in order.
        preds: predicted labels (0/1), one per record.
        categories: relation -> meta-category (see :func:`read_categories`); relations
            without a category (``congruent``) are left out of ``per_category``.

    Returns:
        ``accuracy`` (micro), ``correct``, ``count``, ``per_relation`` and
        ``per_category`` (name -> ``{"accuracy", "count"}``) and ``uncategorized`` (the
        number of items left out of the category tallies).  Rates are fractions.

    Raises:
        DataError: the counts differ or a prediction is not 0/1.
    """
    if len(preds) != len(records):
        raise DataError(f"{len(preds)} predictions for {len(records)} items")
    rel_tally: dict[str, list[int]] = {}
    cat_tally: dict[str, list[int]] = {}
    correct = uncategorized = 0
    for i, (rec, pred) in enumerate(zip(records, preds)):
        if isinstance(pred, bool) or pred not in (0, 1):
            raise DataError(f"prediction {i}: expected 0 or 1, got {pred!r}")
        if isinstance(rec, VSRItem):
            label, relation = rec.label, rec.relation
        else:
            label, relation = int(rec["label"]), str(rec["relation"]).strip()
        hit = int(int(pred) == label)
        correct += hit
        tally = rel_tally.setdefault(relation, [0, 0])
        tally[0] += hit
        tally[1] += 1
        if categories is not None:
            category = categories.get(relation)
            if category is None:
                uncategorized += 1
                continue
            tally = cat_tally.setdefault(category, [0, 0])
            tally[0] += hit
            tally[1] += 1
    return {
        "accuracy": _rate(correct, len(records)),
        "correct": correct,
        "count": len(records),
        "per_relation": {r: {"accuracy": _rate(c, n), "count": n}
                         for r, (c, n) in sorted(rel_tally.items())},
        "per_category": {k: {"accuracy": _rate(c, n), "count": n}
                         for k, (c, n) in sorted(cat_tally.items())},
        "uncategorized": uncategorized if categories is not None else len(records),
    }


# ---------------------------------------------------------------- the adapter
def resolve_split(root: str | Path, split: str) -> Path:
    """The jsonl file of ``split`` under ``root``.

    Accepts ``root/splits/<kind>/<part>.jsonl``, ``root/data/splits/...`` and
    ``root/<kind>/<part>.jsonl`` for ``split = "<kind>/<part>"`` (``random`` or
    ``zeroshot``; ``_`` or ``-`` may replace ``/``), ``"all"`` for the raw validated
    file, a jsonl path relative to ``root`` or absolute, or ``root`` itself being a jsonl file.

    Raises:
        DataError: the root does not exist, the split is unknown or its file is missing.
    """
    base = resolve_root(root, "VSR")
    if base.is_file():
        return base
    if split.endswith(".jsonl"):
        for candidate in (base / split, Path(split).expanduser()):
            if candidate.is_file():
                return candidate
        raise DataError(f"VSR: split file {split} not found under {base}")
    if split == "all":
        candidates = [base / ALL_FILE, base / "data" / ALL_FILE]
    else:
        norm = re.sub(r"[_\-\\]", "/", split.strip().lower()).replace("zero/shot", "zeroshot")
        if norm not in SPLITS:
            raise DataError(f"VSR: unknown split {split!r}; use one of {', '.join(SPLITS)}, "
                            f"'all' or a .jsonl path")
        kind, part = norm.split("/")
        candidates = [base / "splits" / kind / f"{part}.jsonl",
                      base / "data" / "splits" / kind / f"{part}.jsonl",
                      base / kind / f"{part}.jsonl"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise DataError(f"VSR: split {split!r} not found; looked for "
                    f"{', '.join(str(c) for c in candidates)}")


class VSRBenchmark:
    """One VSR split as graph-grounding problems.

    Items and scoring need only the jsonl file; :meth:`problems` also needs region
    proposals, from ``proposals=`` (a callable ``image name -> Proposals`` or a mapping).

    Args:
        root: the data directory (or a jsonl file).
        split: ``random/test``, ``zeroshot/dev``, ... (see :func:`resolve_split`).
        proposals: source of region proposals per COCO image file name.
        categories: the category file (path) or a relation -> category mapping; defaults
            to ``rel_meta_category_dict.txt`` next to the data when present.

    Raises:
        DataError: missing or malformed data.
    """

    name = "vsr"

    def __init__(self, root: str | Path, split: str = "random/test", *,
                 proposals: ProposalSource | None = None,
                 categories: str | Path | Mapping[str, str] | None = None) -> None:
        self.path = resolve_split(root, split)
        base = Path(root).expanduser()
        self.root = base.parent if base.is_file() else base
        self.split = split if not base.is_file() else base.stem
        self.items: list[VSRItem] = read_records(self.path, self.split)
        self.proposals = proposals
        if categories is None:
            found = self.root / CATEGORY_FILE
            categories = found if found.is_file() else None
        if categories is None or isinstance(categories, Mapping):
            self.categories: dict[str, str] | None = (None if categories is None
                                                       else dict(categories))
        else:
            self.categories = read_categories(categories)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[VSRItem]:
        return iter(self.items)

    @property
    def labels(self) -> list[int]:
        """Gold labels in file order."""
        return [it.label for it in self.items]

    def problem(self, index: int, proposals: Proposals | None = None) -> GroundingProblem:
        """The ``index``-th item as a :class:`GroundingProblem`, with ``proposals`` or
        those of the benchmark's proposal source."""
        it = self.items[index]
        if proposals is None:
            proposals = get_proposals(self.proposals, it.image, "vsr")
        return GroundingProblem(
            graph=it.graph(), proposals=proposals,
            match=it.label, id=it.id,
            meta={"benchmark": "vsr", "split": self.split, "index": it.index,
                  "image": it.image, "relation": it.relation, "subject": it.subject,
                  "object": it.object,
                  "category": (self.categories or {}).get(it.relation)})

    def problems(self) -> Iterator[GroundingProblem]:
        """The items as problems, in file order (needs a proposal source)."""
        for i in range(len(self.items)):
            yield self.problem(i)

    def score(self, preds: Sequence[int]) -> dict[str, Any]:
        """Official metrics of predicted labels in file order (see :func:`score`)."""
        return score(self.items, preds, self.categories)

    def evaluate(self, predictions: Sequence[Prediction]) -> dict[str, Any]:
        """Official metrics of model predictions (matched by id; ``match_prob >= 0.5`` is true)."""
        ordered = predictions_by_id(predictions, (it.id for it in self.items),
                                    f"vsr {self.split}")
        for p in ordered:  # every VSR graph has one relation, the caption's
            check_relation_index(p, 1, prediction_where(predictions, p.id))
        return self.score([p.match for p in ordered])

    def score_file(self, path: str | Path) -> dict[str, Any]:
        """Official metrics of an official-format ``preds.txt``."""
        return self.score(read_preds(path, len(self.items)))
