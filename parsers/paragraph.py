"""How scene graphs of paragraph descriptions write what a paragraph says.

Scene mode (:func:`parsers.coreference.merge_sentences`) applies these to each sentence
while it merges the mentions of a paragraph.  Paragraph descriptions of a picture say
more often than region captions how a thing looks through what it has (``the bus
features a white bumper``, ``a tower with a red roof``, ``a cat lies on a rug, its head on
its paws``) and how it is decorated (``a cake adorned with frosting``); their scene
graphs write these as follows:

* ``with``, ``features``, ``boasts``, ``sports`` between two things is ``has`` (``a tower
  with a red roof``: ``( tower , has , roof )``), except where the region-caption
  conventions already name clothing as worn;
* the passive of a verb of decorating or covering turns around (:data:`DECORATING_VERBS`:
  ``a wall adorned with tiles``: ``( tiles , adorn , wall )``), as does any passive with
  ``by`` (``a house framed by trees``: ``( trees , frame , house )``);
* a possessive determiner before a thing (``its head``, ``their peaks``, ``his shirt``)
  gives the thing to its owner, ``has`` (``wearing`` for clothing of a person): the
  subject of the sentence when it agrees with the determiner (``A cat lies down, its head
  on its paws``: the cat has both), else the nearest agreeing thing named before it in the
  sentence, else the subject of the previous sentence.  A verb the sentence's parse
  relates to it across a comma (``is lying down , its head``) is that ``has`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from parsers.lexicon import CLOTHING_NOUNS, lexicon_form

__all__ = ["DECORATING_VERBS", "HAVE_WORDS", "paragraph_relation", "possessed_by"]

#: relation words that say a thing has another
HAVE_WORDS = frozenset({"with", "features", "featuring", "feature", "boasts", "boasting",
                        "sports", "sporting"})

#: past participles of verbs of decorating and covering, and their lemma: ``X adorned with
#: Y`` is ``( Y , adorn , X )``
DECORATING_VERBS: dict[str, str] = {
    "adorned": "adorn", "decorated": "decorate", "covered": "cover", "lined": "line",
    "surrounded": "surround", "framed": "frame", "flanked": "flank", "bordered": "border",
    "dotted": "dot", "studded": "stud", "trimmed": "trim", "topped": "top",
    "embellished": "embellish", "accented": "accent", "draped": "drape",
    "encircled": "encircle", "edged": "edge", "crowned": "crown", "ringed": "ring",
}

_COPULA_WORDS = frozenset({"is", "are", "was", "were", "be", "been", "being", "also"})
_HAS = "has"
_WEAR = "wearing"


def paragraph_relation(words: Sequence[str], subject: str,
                       obj: str) -> tuple[str, bool] | None:
    """The phrase a paragraph's scene graph writes for the relation ``words`` (lowercase
    tokens) from ``subject`` to ``obj`` (head nouns), and whether the two swap; ``None``
    where it stays as the sentence's parse wrote it."""
    core = [w for w in words if w not in _COPULA_WORDS]
    if not core:
        return None
    if len(core) == 1 and core[0] in HAVE_WORDS:
        if core[0] == "with" and lexicon_form(_last(obj), CLOTHING_NOUNS):
            return None
        return _HAS, False
    if len(core) == 2 and core[1] in ("with", "in", "by") and core[0] in DECORATING_VERBS:
        return DECORATING_VERBS[core[0]], True
    if len(core) == 2 and core[1] == "by" and core[0].endswith("ed") and len(core[0]) > 4:
        return core[0], True
    return None


def _last(head: str) -> str:
    words = head.lower().split()
    return words[-1] if words else ""


def possessed_by(determiner: str, at: int, root: int, starts: dict[int, int],
                 agrees: Callable[[str, int], bool], previous: int) -> int:
    """The owner of a thing named after the possessive ``determiner`` at token ``at``.

    Args:
        determiner: the pronoun the determiner agrees like (``it`` for ``its``).
        at: token position of the thing's mention in its sentence.
        root: the sentence's subject (an index among ``starts``), -1 if none.
        starts: the sentence's entities (indices) and where each mention starts.
        agrees: whether an entity agrees with the determiner and names a visible thing.
        previous: the subject of the previous sentence, -1 if none.

    Returns:
        the owner's index, -1 if none agrees.
    """
    if root in starts and starts[root] < at and agrees(determiner, root):
        return root
    before = sorted((s, i) for i, s in starts.items() if s < at)
    for _, i in reversed(before):
        if agrees(determiner, i):
            return i
    if previous >= 0 and agrees(determiner, previous):
        return previous
    return -1
