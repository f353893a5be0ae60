"""Scene splits and length subsets of the synthetic benchmark.

Scenes (not expressions) are split into train / val / test, so no image is
shared between splits.  Every expression record carries its word count
(``words``), the word count of its pair's positive (``pair_words``, so both
halves of a pair fall in the same bucket) and its number of relations
(``relations``).  The Train-Len subsets of GITM-MR (Train-Len16 / Train-Len11)
have two counterparts here: ``len_words`` keeps pairs whose positive has at most
``max_words`` words and ``len_rels`` keeps pairs with at most ``max_relations``
relations; ``len_short`` keeps pairs short by both (what a model may see before
either Train-Len experiment, e.g. when pre-training).  Evaluation buckets the test
set with the same rule.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "SPLITS",
    "DEFAULT_FRACTIONS",
    "TRAIN_SUBSETS",
    "assign_splits",
    "length_of",
    "in_subset",
    "distribution",
]

SPLITS: tuple[str, ...] = ("train", "val", "test")

#: Share of the scenes in train / val / test.
DEFAULT_FRACTIONS: tuple[float, float, float] = (0.8, 0.1, 0.1)

#: Length subsets: name -> the (record field, manifest threshold name) limits it keeps.
TRAIN_SUBSETS: dict[str, tuple[tuple[str, str], ...]] = {
    "len_words": (("pair_words", "max_words"),),
    "len_rels": (("relations", "max_relations"),),
    "len_short": (("pair_words", "max_words"), ("relations", "max_relations")),
}


def assign_splits(n_scenes: int, seed: int,
                  fractions: Sequence[float] = DEFAULT_FRACTIONS) -> list[str]:
    """Split name of every scene index, from a seeded permutation.

    Val and test get ``round(fraction * n)`` scenes each (at least one when there
    are three scenes or more); train gets the rest.

    Raises:
        ValueError: for negative fractions or fractions not summing to 1.
    """
    if len(fractions) != 3 or min(fractions) < 0 or abs(sum(fractions) - 1.0) > 1e-6:
        raise ValueError(f"split fractions must be three non-negative numbers summing to 1, "
                         f"got {list(fractions)}")
    n_val = int(round(fractions[1] * n_scenes))
    n_test = int(round(fractions[2] * n_scenes))
    if n_scenes >= 3:
        n_val = max(n_val, 1) if fractions[1] > 0 else 0
        n_test = max(n_test, 1) if fractions[2] > 0 else 0
    n_val = min(n_val, n_scenes)
    n_test = min(n_test, n_scenes - n_val)
    order = list(range(n_scenes))
    random.Random(f"rcrn-synthetic-splits:{seed}").shuffle(order)
    names = ["train"] * n_scenes
    for i in order[:n_val]:
        names[i] = "val"
    for i in order[n_val:n_val + n_test]:
        names[i] = "test"
    return names


def length_of(record: Mapping[str, Any], key: str) -> int:
    """The length used for subsets and buckets: ``"words"`` (pair-level) or ``"relations"``.

    Raises:
        ValueError: for another key.
    """
    if key == "words":
        return int(record["pair_words"])
    if key == "relations":
        return int(record["relations"])
    raise ValueError(f"length must be 'words' or 'relations', got {key!r}")


def in_subset(record: Mapping[str, Any], subset: str | None,
              thresholds: Mapping[str, int]) -> bool:
    """Whether ``record`` belongs to the length subset ``subset`` (None = everything).

    Args:
        record: an expression record.
        subset: a name of :data:`TRAIN_SUBSETS` or None.
        thresholds: ``{"max_words": ..., "max_relations": ...}``.

    Raises:
        ValueError: for an unknown subset name.
    """
    if subset is None:
        return True
    if subset not in TRAIN_SUBSETS:
        raise ValueError(f"unknown train subset {subset!r}; choose from {sorted(TRAIN_SUBSETS)}")
    return all(int(record[field]) <= int(thresholds[limit])
               for field, limit in TRAIN_SUBSETS[subset])


def distribution(records: Iterable[Mapping[str, Any]], key: str) -> dict[int, int]:
    """Histogram ``{value: count}`` of an integer record field, sorted by value."""
    counts = Counter(int(r[key]) for r in records)
    return {k: counts[k] for k in sorted(counts)}
