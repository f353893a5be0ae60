"""What'sUp (Controlled_Images A/B, COCO-spatial, GQA-spatial) with the official scoring.

Every item is one image with caption options that differ only in the preposition; the
gold caption is ALWAYS option 0.  Splits and their files under the data root:

=================  ====================================  ===========================
split              file                                  images
=================  ====================================  ===========================
``controlled_a``   ``controlled_images_dataset.json``    ``image_path`` as written
``controlled_b``   ``controlled_clevr_dataset.json``     ``image_path`` as written
``coco_one``       ``coco_qa_one_obj.json``              ``val2017/{id:012d}.jpg``
``coco_two``       ``coco_qa_two_obj.json``              ``val2017/{id:012d}.jpg``
``gqa_one``        ``vg_qa_one_obj.json``                ``vg_images/{id}.jpg``
``gqa_two``        ``vg_qa_two_obj.json``                ``vg_images/{id}.jpg``
=================  ====================================  ===========================

Controlled files are JSON arrays of ``{"image_path", "caption_options"}``; the QA files
are JSON arrays of ``[image_id, correct_caption, wrong_caption]``.

Metrics (:func:`score`): individual accuracy -- the gold option must score strictly
highest; ties are counted WRONG by default and reported as ``ties`` (``ties_correct=True``
reproduces the official code, whose ``argmax`` takes the first maximum and so counts ties
at option 0 as right); accuracy per preposition (from the file name for Controlled A/B,
from the gold caption for COCO/GQA as the official code derives it); for Controlled A/B,
pair accuracy (pairs of opposing prepositions of one (subject, object) group both right,
over N/2) and set accuracy (all four of a group right, over N/4).  The paper's tables
macro-average {A, B}, {COCO one, two} and {GQA one, two}: see :func:`macro_average`.

Known upstream problem: in Controlled_Images_A the images ``pillow_left_of_chair`` and
``pillow_right_of_chair`` are swapped (each file shows the other relation).  The official
numbers are computed with the files as released, which is the default here;
``fix_pillow_swap=True`` makes each of these two records point at the other file, so a
model sees the image its captions describe.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import ProposalSource, get_proposals, predictions_by_id
from benchmarks.base import (
    DataError,
    check_relation_index,
    prediction_where,
    read_json,
    read_number_rows,
    real_matrix,
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
    "SPLIT_FILES",
    "PAIRS",
    "MACRO_GROUPS",
    "WhatsUpItem",
    "WhatsUpBenchmark",
    "read_items",
    "read_scores",
    "correctness",
    "score",
    "macro_average",
    "caption_graph",
]

SPLIT_FILES: dict[str, str] = {
    "controlled_a": "controlled_images_dataset.json",
    "controlled_b": "controlled_clevr_dataset.json",
    "coco_one": "coco_qa_one_obj.json",
    "coco_two": "coco_qa_two_obj.json",
    "gqa_one": "vg_qa_one_obj.json",
    "gqa_two": "vg_qa_two_obj.json",
}
_ALIASES: dict[str, str] = {
    "a": "controlled_a", "b": "controlled_b",
    "controlled_images_a": "controlled_a", "controlled_images_b": "controlled_b",
    "controlled_images": "controlled_a", "controlled_clevr": "controlled_b",
    "coco_qa_one_obj": "coco_one", "coco_qa_two_obj": "coco_two",
    "vg_qa_one_obj": "gqa_one", "vg_qa_two_obj": "gqa_two",
    "vg_one": "gqa_one", "vg_two": "gqa_two",
}
#: Opposing slot pairs of the pair accuracy.
PAIRS: dict[str, tuple[tuple[str, str], ...]] = {
    "controlled_a": (("left", "right"), ("on", "under")),
    "controlled_b": (("left", "right"), ("in-front", "behind")),
}
#: The four slots (``name.split('_')[1]``) of a Controlled group.
SLOTS: dict[str, frozenset[str]] = {k: frozenset(s for p in v for s in p)
                                    for k, v in PAIRS.items()}
#: The pairs of splits the paper macro-averages.
MACRO_GROUPS: dict[str, tuple[str, str]] = {
    "controlled": ("controlled_a", "controlled_b"),
    "coco": ("coco_one", "coco_two"),
    "gqa": ("gqa_one", "gqa_two"),
}
#: The two Controlled_Images_A images released swapped.
PILLOW_SWAP = ("pillow_left_of_chair", "pillow_right_of_chair")

_ARTICLES = frozenset({"a", "an", "the"})
#: Words that open a preposition phrase in the QA captions.
_REL_START = frozenset({
    "to", "on", "in", "at", "under", "above", "below", "behind", "beneath", "over", "near",
    "next", "beside", "left", "right", "inside", "outside", "underneath", "atop", "by",
})


def canonical_split(split: str) -> str:
    """The canonical split name (``controlled_a`` ... ``gqa_two``) of a name or alias.

    Raises:
        DataError: an unknown name.
    """
    key = re.sub(r"[\s\-/]+", "_", split.strip().lower())
    key = _ALIASES.get(key, key)
    if key not in SPLIT_FILES:
        raise DataError(f"What'sUp: unknown split {split!r}; use one of "
                        f"{', '.join(SPLIT_FILES)} or a .json path")
    return key


@dataclass
class WhatsUpItem:
    """One What'sUp image with its caption options (gold = option 0).

    Attributes:
        index: position in the file (0-based).
        split: canonical split name.
        image: the image to load, relative to the data root (for Controlled files as
            written in ``image_path``, e.g. ``data/controlled_images/x.jpeg``).
        options: the caption options; option 0 is the gold caption.
        preposition: the per-preposition key (``left_of``, ``on``, ``in-front_of`` ...
            for Controlled; ``left``, ``above``, ``top`` ... for COCO/GQA).
        name: Controlled only: the file name stem as released, e.g. ``mug_left_of_knife``.
        group: Controlled only: ``(name.split('_')[0], name.split('_')[-1])``.
        slot: Controlled only: ``name.split('_')[1]`` (``left``, ``on``, ``in-front``...).
        subject: Controlled only: the subject noun (hyphens read as spaces).
        object: Controlled only: the object noun.
        image_id: COCO/GQA only: the image id as released.
        id: identifier prefix of the item's problems, ``whatsup:<split>:<index>``.
    """

    index: int
    split: str
    image: str
    options: list[str]
    preposition: str
    name: str | None = None
    group: tuple[str, str] | None = None
    slot: str | None = None
    subject: str | None = None
    object: str | None = None
    image_id: int | str | None = None
    id: str = ""

    def option_id(self, option: int) -> str:
        """The problem id of caption option ``option``."""
        return f"{self.id}:{option}"

    def graph(self, option: int = 0) -> LanguageGraph:
        """The language graph of caption option ``option`` (see :func:`caption_graph`)."""
        nouns = (self.subject, self.object) if self.subject and self.object else None
        return caption_graph(self.options[option], nouns=nouns,
                             image_relative=self.split in ("coco_one", "gqa_one"))

    def image_file(self, root: str | Path) -> Path:
        """The image's path under ``root`` (also tried without a leading ``data/``)."""
        root = Path(root)
        path = root / self.image
        if not path.exists() and self.image.startswith("data/"):
            path = root / self.image[len("data/"):]
        return path


# ---------------------------------------------------------------- captions
def _words(caption: str) -> tuple[list[str], bool]:
    body = caption.strip()
    period = body.endswith(".")
    if period:
        body = body[:-1].rstrip()
    return body.split(), period


def _phrase(words: list[str], start: int, end: int) -> str:
    out = list(words[start:end])
    if out and out[0].lower() in _ARTICLES:
        out[0] = out[0].lower()
    return " ".join(out)


def caption_graph(caption: str, nouns: tuple[str, str] | None = None,
                  image_relative: bool = False) -> LanguageGraph:
    """The language graph of a What'sUp caption ``A <subj> <rel> a <obj>``.

    Subject (root) and object entities are joined by one relation.  With ``nouns``
    (the Controlled file name's subject and object) the phrases are located exactly;
    otherwise the relation starts at the first preposition word after the subject noun
    and the object at the last article.  One-object captions (``image_relative``, e.g.
    ``A dog on the left``) give a one-entity graph: the phrase locates the entity in the
    image, not relative to another entity, so it is no graph edge.

    Tokens are the caption's words as written (a final period split off); entity texts
    are their words with a lower-case article (``"a beer bottle"``).

    Raises:
        ValueError: the caption does not follow the template.
    """
    words, period = _words(caption)
    tokens = words + (["."] if period else [])
    if len(words) < 2 or words[0].lower() not in ("a", "an", "the"):
        raise ValueError(f"caption {caption!r} does not start with an article")
    lower = [w.lower() for w in words]
    rel_start = obj_start = -1
    if nouns is not None:
        subj, obj = nouns[0].lower().split(), nouns[1].lower().split()
        if (lower[1:1 + len(subj)] == subj and len(words) >= len(subj) + len(obj) + 3
                and lower[-len(obj):] == obj and lower[-len(obj) - 1] in _ARTICLES):
            rel_start, obj_start = 1 + len(subj), len(words) - len(obj) - 1
    if rel_start < 0:
        rel_start = next((i for i in range(2, len(words)) if lower[i] in _REL_START), -1)
        if rel_start < 0:
            raise ValueError(f"caption {caption!r}: no preposition after the subject")
        if image_relative:
            entity = Entity(text=_phrase(words, 0, rel_start), span=(0, rel_start))
            return LanguageGraph(tokens=tokens, entities=[entity], relations=[], root=0,
                                 text=caption.strip())
        obj_start = max((j for j in range(rel_start + 1, len(words) - 1)
                         if lower[j] in _ARTICLES), default=-1)
    if obj_start <= rel_start:
        raise ValueError(f"caption {caption!r} does not follow 'A <subj> <rel> a <obj>'")
    entities = [Entity(text=_phrase(words, 0, rel_start), span=(0, rel_start)),
                Entity(text=_phrase(words, obj_start, len(words)),
                       span=(obj_start, len(words)))]
    relation = Relation(subject=0, object=1, text=" ".join(words[rel_start:obj_start]),
                        span=(rel_start, obj_start))
    return LanguageGraph(tokens=tokens, entities=entities, relations=[relation], root=0,
                         text=caption.strip())


def _qa_preposition(split: str, gold: str) -> str:
    """The per-preposition key of a COCO/GQA item, derived as the official code does."""
    words, _ = _words(gold)
    text = " ".join(words).lower()
    if split.endswith("_one"):
        return words[-1].lower() if words else ""
    if "left of" in text:
        return "left"
    if "right of" in text:
        return "right"
    if split == "coco_two":
        return "above" if "above" in text else "below"
    if "front of" in text:
        return "front"
    return "behind" if "behind" in text else "top"


# ---------------------------------------------------------------- reading
def _controlled(record: Any, where: str, index: int, split: str) -> WhatsUpItem:
    if not isinstance(record, dict):
        raise DataError(f"{where}: expected an object with image_path and caption_options")
    for key in ("image_path", "caption_options"):
        if key not in record:
            raise DataError(f"{where}: field {key!r} missing")
    path = record["image_path"]
    options = record["caption_options"]
    if not isinstance(path, str) or not path.strip():
        raise DataError(f"{where}: field 'image_path' must be a non-empty string")
    if (not isinstance(options, list) or len(options) < 2
            or not all(isinstance(o, str) and o.strip() for o in options)):
        raise DataError(f"{where}: field 'caption_options' must list at least 2 captions")
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    name = base.rsplit(".", 1)[0] if "." in base else base
    parts = name.split("_")
    if len(parts) < 3:
        raise DataError(f"{where}: image name {base!r} is not <subject>_<preposition>_<object>")
    slot = parts[1]
    if slot not in SLOTS[split]:
        raise DataError(f"{where}: image {base!r} has preposition {slot!r}, not one of "
                        f"{sorted(SLOTS[split])} of {split}")
    return WhatsUpItem(index=index, split=split, image=path, options=list(options),
                       preposition="_".join(parts[1:-1]), name=name,
                       group=(parts[0], parts[-1]), slot=slot,
                       subject=parts[0].replace("-", " "), object=parts[-1].replace("-", " "),
                       id=f"whatsup:{split}:{index}")


def _qa(record: Any, where: str, index: int, split: str) -> WhatsUpItem:
    if not isinstance(record, list) or len(record) < 3:
        raise DataError(f"{where}: expected [image_id, correct_caption, wrong_caption]")
    image_id, options = record[0], record[1:]
    if isinstance(image_id, bool) or not isinstance(image_id, (int, str)) or image_id == "":
        raise DataError(f"{where}: image id must be an integer or a string, got {image_id!r}")
    if not all(isinstance(o, str) and o.strip() for o in options):
        raise DataError(f"{where}: captions must be non-empty strings")
    if split.startswith("coco"):
        try:
            image = f"val2017/{int(image_id):012d}.jpg"
        except ValueError as exc:
            raise DataError(f"{where}: COCO image id {image_id!r} is not a number") from exc
    else:
        image = f"vg_images/{image_id}.jpg"
    return WhatsUpItem(index=index, split=split, image=image, options=list(options),
                       preposition=_qa_preposition(split, options[0]), image_id=image_id,
                       id=f"whatsup:{split}:{index}")


def read_items(path: str | Path, split: str) -> list[WhatsUpItem]:
    """Read a What'sUp annotation file.

    Args:
        path: the JSON file.
        split: its canonical split name (decides the record format).

    Raises:
        DataError: naming the file and record of a malformed entry, an empty file,
            records with differing numbers of caption options, or (Controlled A/B) two
            records of one (subject, object) group and preposition slot, naming both.
    """
    path = Path(path)
    split = canonical_split(split)
    data = read_json(path)
    if not isinstance(data, list) or not data:
        raise DataError(f"{path}: expected a non-empty JSON array of records")
    parse = _controlled if split.startswith("controlled") else _qa
    items = [parse(rec, f"{path} record {i}", i, split) for i, rec in enumerate(data)]
    if split in PAIRS:  # a repeated (subject, object, slot) would overwrite a pair/set slot
        seen: dict[tuple[tuple[str, str] | None, str | None], WhatsUpItem] = {}
        for it in items:
            key = (it.group, it.slot)
            if key in seen:
                first = seen[key]
                raise DataError(f"{path} record {it.index}: repeats record {first.index} "
                                f"(group {'/'.join(it.group or ())}, slot {it.slot!r}: "
                                f"{first.image!r} and {it.image!r})")
            seen[key] = it
    counts = {len(it.options) for it in items}
    if len(counts) > 1:
        first = next(it for it in items if len(it.options) != len(items[0].options))
        raise DataError(f"{path} record {first.index}: {len(first.options)} caption options, "
                        f"record 0 has {len(items[0].options)}")
    return items


def read_scores(path: str | Path, n_items: int | None = None,
                n_options: int | None = None) -> np.ndarray:
    """Read a model's option scores: ``[items, options]``.

    A ``.npy`` file holds the matrix (``[items, 1, options]`` as the official code saves
    is accepted too); any other file holds one line per item with that item's option
    scores separated by commas or spaces.

    Raises:
        DataError: naming the file (and line) of a malformed value, or the counts when the
            number of items or options differs from ``n_items`` / ``n_options``.
    """
    path = Path(path)
    if path.suffix == ".npy":
        try:
            matrix = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: not a readable .npy array ({exc})") from exc
        if matrix.ndim == 3 and matrix.shape[1] == 1:
            matrix = matrix[:, 0, :]
        if matrix.ndim != 2:
            raise DataError(f"{path}: expected a [items, options] matrix, got shape "
                            f"{list(matrix.shape)}")
        if matrix.dtype.kind not in "biuf":
            raise DataError(f"{path}: scores must be real numbers, got {matrix.dtype} values")
        try:
            matrix = matrix.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError(f"{path}: scores are not numbers ({matrix.dtype})") from exc
    else:
        matrix = read_number_rows(path, n_options, "scores",
                                  "not a text file of scores (use .npy for arrays)")
    if n_items is not None and len(matrix) != n_items:
        raise DataError(f"{path}: {len(matrix)} score rows for {n_items} items")
    if n_options is not None and matrix.shape[1] != n_options:
        raise DataError(f"{path}: {matrix.shape[1]} scores per item, expected {n_options}")
    bad = np.flatnonzero(~np.isfinite(matrix).all(axis=1))
    if len(bad):
        raise DataError(f"{path}: row {bad[0] + 1} holds NaN or infinite scores")
    return matrix


# ---------------------------------------------------------------- scoring
def correctness(scores: np.ndarray, ties_correct: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per-item correctness of option scores (gold = option 0).

    Args:
        scores: ``[items, options]``.
        ties_correct: count a gold option tied for the maximum as right (the official
            ``argmax``-first behaviour) instead of wrong.

    Returns:
        ``(correct, tied)`` boolean arrays; ``tied`` marks items whose gold option shares
        the maximum with another option.
    """
    scores = np.asarray(scores, dtype=np.float64)
    top = scores.max(axis=1)
    at_top = scores[:, 0] == top
    tied = at_top & ((scores == top[:, None]).sum(axis=1) > 1)
    correct = at_top if ties_correct else at_top & ~tied
    return correct, tied


def _rate(correct: int, count: float) -> float:
    return float(correct / count) if count else 0.0


def score(items: Sequence[WhatsUpItem], scores: Any, *,
          ties_correct: bool = False) -> dict[str, Any]:
    """Official What'sUp metrics of option scores.

    Args:
        items: the items of one split, in file order.
        scores: ``[items, options]`` (higher = better match); ``[items, 1, options]`` too.
        ties_correct: count ties at the gold option as right (official ``argmax``
            behaviour); by default they count as wrong.

    Returns:
        ``accuracy``, ``correct``, ``count``, ``ties``, ``ties_correct``,
        ``per_preposition`` (name -> ``{"accuracy", "count"}``) and, for Controlled A/B,
        ``pair_accuracy`` / ``pairs_correct`` and ``set_accuracy`` / ``sets_correct``;
        ``flags`` lists the known swapped pillow/chair records when the split holds them.
        Rates are fractions.

    Raises:
        DataError: the shape does not match the items, or scores are not finite.
    """
    matrix = real_matrix(scores, "scores", "[items, options]")
    if matrix.ndim == 3 and matrix.shape[1] == 1:
        matrix = matrix[:, 0, :]
    n = len(items)
    if matrix.ndim != 2 or len(matrix) != n:
        raise DataError(f"scores of shape {list(matrix.shape)} for {n} items")
    if n and matrix.shape[1] != len(items[0].options):
        raise DataError(f"{matrix.shape[1]} scores per item for {len(items[0].options)} options")
    if not np.isfinite(matrix).all():
        row = int(np.flatnonzero(~np.isfinite(matrix).all(axis=1))[0])
        raise DataError(f"scores of item {row} hold NaN or infinite values")
    correct, tied = correctness(matrix, ties_correct)
    per_prep: dict[str, list[int]] = {}
    for it, ok in zip(items, correct):
        tally = per_prep.setdefault(it.preposition, [0, 0])
        tally[0] += int(ok)
        tally[1] += 1
    out: dict[str, Any] = {
        "accuracy": _rate(int(correct.sum()), n),
        "correct": int(correct.sum()),
        "count": n,
        "ties": int(tied.sum()),
        "ties_correct": bool(ties_correct),
        "per_preposition": {p: {"accuracy": _rate(c, k), "count": k}
                            for p, (c, k) in sorted(per_prep.items())},
    }
    flagged = sorted(it.name for it in items if it.name in PILLOW_SWAP)
    if flagged:
        out["flags"] = [f"{name}: upstream image shows the other relation (pillow left/right "
                        f"of chair swapped); scored as released" for name in flagged]
    split = items[0].split if n else ""
    if split in PAIRS:
        groups: dict[tuple[str, str], dict[str, bool]] = {}
        for it, ok in zip(items, correct):
            if it.group is None or it.slot is None:
                raise DataError(f"item {it.index} of {split} has no (subject, object) group")
            groups.setdefault(it.group, {})[it.slot] = bool(ok)
        pairs = sum(int(g.get(a, False) and g.get(b, False))
                    for g in groups.values() for a, b in PAIRS[split])
        sets = sum(int(all(g.get(s, False) for s in SLOTS[split])) for g in groups.values())
        out.update({"pair_accuracy": _rate(pairs, n / 2), "pairs_correct": pairs,
                    "set_accuracy": _rate(sets, n / 4), "sets_correct": sets})
    return out


def macro_average(results: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Macro-averages the paper reports: {A, B}, {COCO one, two}, {GQA one, two}.

    Args:
        results: split name (or alias) -> the metrics :func:`score` returned.

    Returns:
        ``controlled`` / ``coco`` / ``gqa`` -> the mean of ``accuracy`` (and, for
        Controlled, of ``pair_accuracy`` and ``set_accuracy``) over both members, for
        each group whose two members are both given.
    """
    named = {canonical_split(k): v for k, v in results.items()}
    out: dict[str, dict[str, Any]] = {}
    for group, members in MACRO_GROUPS.items():
        if not all(m in named for m in members):
            continue
        entry: dict[str, Any] = {"splits": list(members)}
        for key in ("accuracy", "pair_accuracy", "set_accuracy"):
            if all(key in named[m] for m in members):
                entry[key] = float(np.mean([named[m][key] for m in members]))
        out[group] = entry
    return out


# ---------------------------------------------------------------- the adapter
def _infer_split(path: Path) -> str | None:
    name = path.name.lower()
    for needle, split in (("controlled_clevr", "controlled_b"),
                          ("controlled_images_b", "controlled_b"),
                          ("controlled_images", "controlled_a"),
                          ("coco_qa_one", "coco_one"), ("coco_qa_two", "coco_two"),
                          ("vg_qa_one", "gqa_one"), ("vg_qa_two", "gqa_two")):
        if needle in name:
            return split
    return None


class WhatsUpBenchmark:
    """One What'sUp split: items, problems (one per caption option) and official scoring.

    Args:
        root: the data directory, or an annotation file.
        split: ``controlled_a``, ``controlled_b``, ``coco_one``, ``coco_two``, ``gqa_one``,
            ``gqa_two`` (official names such as ``Controlled_Images_A`` work too); may be
            omitted when ``root`` is a file with a recognisable name.
        proposals: source of region proposals per image (``item.image``), for problems.
        ties_correct: score ties at the gold option as right (official behaviour).
        fix_pillow_swap: point the two swapped pillow records of Controlled A at the
            image that shows their gold caption (off by default = official).

    Raises:
        DataError: missing or malformed data, or an unknown split.
    """

    name = "whatsup"

    def __init__(self, root: str | Path, split: str | None = None, *,
                 proposals: ProposalSource | None = None, ties_correct: bool = False,
                 fix_pillow_swap: bool = False) -> None:
        base = resolve_root(root, "What'sUp")
        if base.is_file():
            self.path = base
            inferred = split if split is not None else _infer_split(base)
            if inferred is None:
                raise DataError(f"What'sUp: cannot tell the split of {base.name}; pass split=")
            self.split = canonical_split(inferred)
            self.root = base.parent
        else:
            if split is None:
                raise DataError(f"What'sUp: pass a split ({', '.join(SPLIT_FILES)})")
            if split.endswith(".json"):
                self.path = base / split if (base / split).is_file() else Path(split)
                inferred = _infer_split(self.path)
                if inferred is None:
                    raise DataError(f"What'sUp: cannot tell the split of {self.path.name}")
                self.split = canonical_split(inferred)
            else:
                self.split = canonical_split(split)
                candidates = [base / SPLIT_FILES[self.split],
                              base / "data" / SPLIT_FILES[self.split]]
                found = [c for c in candidates if c.is_file()]
                if not found:
                    raise DataError(f"What'sUp: split {self.split} not found; looked for "
                                    f"{', '.join(str(c) for c in candidates)}")
                self.path = found[0]
            self.root = base
        self.items: list[WhatsUpItem] = read_items(self.path, self.split)
        self.proposals = proposals
        self.ties_correct = ties_correct
        self.pillow_swapped = False
        if fix_pillow_swap:
            found_items = {it.name: it for it in self.items if it.name in PILLOW_SWAP}
            if len(found_items) == 2:
                left, right = (found_items[n] for n in PILLOW_SWAP)
                left.image, right.image = right.image, left.image
                self.pillow_swapped = True

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[WhatsUpItem]:
        return iter(self.items)

    @property
    def num_options(self) -> int:
        """Caption options per item (4 for Controlled, 2 for COCO/GQA)."""
        return len(self.items[0].options)

    def problem(self, index: int, option: int, proposals: Proposals | None = None
                ) -> GroundingProblem:
        """Caption option ``option`` of item ``index`` (match = 1 only for option 0), with
        ``proposals`` or those of the benchmark's proposal source."""
        it = self.items[index]
        try:
            graph = it.graph(option)
        except ValueError as exc:
            raise DataError(f"{self.path} record {index} option {option}: {exc}") from exc
        meta = {"benchmark": "whatsup", "split": self.split, "item": index, "option": option,
                "image": it.image, "preposition": it.preposition, "caption": it.options[option]}
        if not graph.relations:
            start = graph.entities[0].span[1]
            meta["image_relation"] = " ".join(t for t in graph.tokens[start:] if t != ".")
        if proposals is None:
            proposals = get_proposals(self.proposals, it.image, "whatsup")
        return GroundingProblem(graph=graph, proposals=proposals, match=int(option == 0),
                                id=it.option_id(option), meta=meta)

    def problems(self) -> Iterator[GroundingProblem]:
        """Every caption option of every item, item-major (needs a proposal source)."""
        for i, it in enumerate(self.items):
            for k in range(len(it.options)):
                yield self.problem(i, k)

    def score(self, scores: Any) -> dict[str, Any]:
        """Official metrics of an ``[items, options]`` score matrix (see :func:`score`)."""
        return score(self.items, scores, ties_correct=self.ties_correct)

    def evaluate(self, predictions: Sequence[Prediction]) -> dict[str, Any]:
        """Official metrics of model predictions, one per caption option, matched by id.

        Each option's ``match_prob`` is its score; the gold option must score highest.
        """
        ids = [it.option_id(k) for it in self.items for k in range(len(it.options))]
        ordered = predictions_by_id(predictions, ids, f"whatsup {self.split}")
        # one relation per caption, none in the one-object splits ("A dog on the left")
        n_relations = 0 if self.split in ("coco_one", "gqa_one") else 1
        for p in ordered:
            check_relation_index(p, n_relations, prediction_where(predictions, p.id))
        matrix = np.asarray([p.match_prob for p in ordered], dtype=np.float64)
        return self.score(matrix.reshape(len(self.items), self.num_options))

    def score_file(self, path: str | Path) -> dict[str, Any]:
        """Official metrics of a score file (see :func:`read_scores`)."""
        return self.score(read_scores(path, len(self.items), self.num_options))
