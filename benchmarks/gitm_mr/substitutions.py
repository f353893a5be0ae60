"""The relation substitution table of GITM-MR (paper appendix C, Table 4), as data.

Each of the 27 selected relation phrases maps to the phrases that may replace it
when a mismatched expression is built.  Matching is on lowercase whitespace
words; when several table phrases occur inside one relation phrase the longest
wins (``"standing in front of"`` before ``"in front of"``, ``"riding on"``
before ``"riding"``).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SUBSTITUTIONS", "RELATION_VOCABULARY", "find_table_phrase", "count_phrases",
           "candidates"]

#: Relation phrase -> its substitution candidates (paper Table 4, in table order).
SUBSTITUTIONS: dict[str, tuple[str, ...]] = {
    "to the left of": ("to the right of", "in front of", "behind"),
    "to the right of": ("to the left of", "in front of", "behind"),
    "wearing": ("holding", "carrying", "looking at"),
    "in front of": ("behind", "to the right of", "to the left of"),
    "behind": ("in front of", "to the right of", "to the left of"),
    "holding": ("looking at", "behind"),
    "on top of": ("on the side of", "near", "next to"),
    "above": ("near", "next to", "behind", "in front of"),
    "below": ("near", "next to", "in front of", "behind"),
    "sitting on": ("near", "next to", "behind", "in front of", "to the left of",
                   "to the right of"),
    "next to": ("in front of", "behind"),
    "carrying": ("looking at", "behind"),
    "inside": ("near", "next to", "behind", "in front of", "to the left of", "to the right of"),
    "under": ("above", "on top of", "next to", "in front of", "behind"),
    "standing on": ("walking on",),
    "walking on": ("standing on",),
    "eating": ("holding", "looking at", "behind"),
    "standing in": ("walking in",),
    "playing with": ("standing by", "behind"),
    "walking in": ("standing in",),
    "riding": ("behind", "in front of", "to the left of", "to the right of"),
    "riding on": ("behind", "in front of", "to the left of", "to the right of"),
    "playing": ("standing by", "behind"),
    "walking down": ("standing on",),
    "throwing": ("holding", "behind"),
    "standing behind": ("standing in front of",),
    "standing in front of": ("standing behind",),
}

#: Every phrase of the table (relations and substitutes): the support of the
#: relation distributions compared between matched and mismatched expressions.
RELATION_VOCABULARY: tuple[str, ...] = tuple(sorted(
    set(SUBSTITUTIONS) | {c for cands in SUBSTITUTIONS.values() for c in cands}))

_BY_LENGTH: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    sorted(((k, tuple(k.split())) for k in SUBSTITUTIONS), key=lambda kv: -len(kv[1])))
_VOCAB_BY_LENGTH: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    sorted(((k, tuple(k.split())) for k in RELATION_VOCABULARY), key=lambda kv: -len(kv[1])))


def find_table_phrase(words: Sequence[str], vocabulary: bool = False
                      ) -> tuple[str, int, int] | None:
    """The longest table phrase occurring in ``words`` (compared lowercase).

    Args:
        words: the words of a relation phrase (or of any text).
        vocabulary: search every phrase of :data:`RELATION_VOCABULARY` instead of only
            the relations that have substitutes.

    Returns:
        ``(phrase, start, end)`` with the word range ``[start, end)``, the leftmost
        occurrence of the longest phrase, or None.
    """
    low = [w.lower() for w in words]
    for phrase, parts in (_VOCAB_BY_LENGTH if vocabulary else _BY_LENGTH):
        n = len(parts)
        for start in range(len(low) - n + 1):
            if tuple(low[start:start + n]) == parts:
                return phrase, start, start + n
    return None


def count_phrases(words: Sequence[str]) -> dict[str, int]:
    """Occurrences of every :data:`RELATION_VOCABULARY` phrase in ``words``.

    Longer phrases are matched first and their words are not reused, so
    ``"standing in front of"`` counts once (not also as ``"in front of"``).
    """
    low = [w.lower() for w in words]
    used = [False] * len(low)
    counts: dict[str, int] = {}
    for phrase, parts in _VOCAB_BY_LENGTH:
        n = len(parts)
        start = 0
        while start + n <= len(low):
            if tuple(low[start:start + n]) == parts and not any(used[start:start + n]):
                counts[phrase] = counts.get(phrase, 0) + 1
                for i in range(start, start + n):
                    used[i] = True
                start += n
            else:
                start += 1
    return counts


def candidates(phrase: str) -> tuple[str, ...]:
    """Substitution candidates of a table relation (empty for other phrases)."""
    return SUBSTITUTIONS.get(phrase.lower().strip(), ())
