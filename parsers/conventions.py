"""Visual Genome annotation conventions for relation phrases.

Human scene graphs of region captions (Visual Genome, FACTUAL) do not copy the
preposition of the text in a few regular cases; a parser producing graphs for
such data maps the phrase the same way:

* **part of a whole** – ``the tail of the dog`` is annotated ``dog has tail``:
  ``X of Y`` becomes ``Y has X``; containers and flat holders name their content
  (``a glass of water``: ``water in glass``; ``a plate of food``: ``food on
  plate``), holders of :data:`~parsers.lexicon.HOLDER_NOUNS` keep the order
  (``a bowl of soup``: ``bowl has soup``, as does ``full of``: ``a shelf full of
  books``); a place on something is a part of it as well (``the side of the road``:
  ``road has side``, as FACTUAL's annotators write it); a picture names what it shows with
  ``depicts`` (``a painting of a horse on the wall``: ``painting depicts horse``);
* **clothing** – ``a man in a red shirt``, ``a man standing in a coat`` and ``a woman
  dressed in black`` are annotated ``wear`` (also after ``clad in``, ``donned in``,
  ``cloaked in``); ``with``
  marks clothing of
  :data:`~parsers.lexicon.WORN_WITH_NOUNS` as worn (``a boy with glasses``);
* **parts and outer garments** – ``with`` before a part of a person or an animal is
  ``has`` (``a brown dog with a black nose``: the dog has a nose), and ``in`` before a
  coat, a jacket or a dress is ``wearing`` (:data:`OUTER_GARMENTS`), in captions of any
  length;
* **passive voice** – ``a cart pulled by a horse`` is annotated ``horse pull
  cart``, and ``a street covered in snow`` ``snow cover street`` for the verbs of
  :data:`~parsers.lexicon.INSTRUMENT_PASSIVE_VERBS`;
* **lie / lay** – ``laying on`` (without an object of its own) is the posture
  ``lying on``, and ``seated`` is ``sitting``;
* **trying** – a verb of trying or being about to before ``to`` gives way to the verb
  after it (``a dog trying to catch a frisbee``: ``catch``);
* **particles of posture** – ``down`` / ``up`` after a verb of posture or holding is left
  out (``lying down on``: ``lying on``; ``looking up at``: ``looking at``; ``holding up``:
  ``holding``); verbs of motion keep it (``walking down``).

:func:`relation_convention` tells, for one relation, the phrase to write and
whether subject and object swap.  Possessives (``the dog 's tail``) and
part-whole compounds (``the clock hands``) are noun-phrase structure; the
backends split them into two entities joined by ``has``.
"""

from __future__ import annotations

from collections.abc import Sequence

from parsers.coreference import is_animal, is_person
from parsers.lexicon import (
    CLOTHING_NOUNS,
    CONTAINER_NOUNS,
    HOLDER_NOUNS,
    INSTRUMENT_PASSIVE_VERBS,
    OWNED_PART_NOUNS,
    PASSIVE_VERBS,
    PICTURE_NOUNS,
    SAYING_VERBS,
    SURFACE_NOUNS,
    WORN_WITH_NOUNS,
    lexicon_form,
    word_forms,
)

__all__ = ["DEPICT", "HAS", "OUTER_GARMENTS", "WEAR", "relation_convention", "is_possessive",
           "possessor"]

#: relation phrase of a part-whole or possession relation
HAS = "has"
#: relation phrase of worn clothing
WEAR = "wearing"
#: relation phrase of what a picture shows
DEPICT = "depicts"

_NOT_POSSESSIVE = frozenset({"it's", "that's", "there's", "what's", "he's", "she's", "who's",
                             "here's", "let's", "where's", "one's"})


def _last(head: str) -> str:
    words = head.lower().split()
    return words[-1] if words else ""


#: outer garments that ``in`` marks as worn, as it does the clothing of
#: :data:`~parsers.lexicon.CLOTHING_NOUNS` (``a man in a coat``: ``man wear coat``)
OUTER_GARMENTS = frozenset({"coat", "jacket", "dress", "sweater", "cardigan", "blazer",
                            "parka", "raincoat", "overcoat", "windbreaker", "poncho"})


#: verbs of posture and holding whose ``down`` / ``up`` the annotators leave out (``lying
#: down on`` is ``lying on``, ``holding up`` ``holding``: on FACTUAL's training data this
#: makes 86 triples right and 2 wrong); verbs of motion keep it (``walking down``), and
#: ``hanging down`` without a preposition keeps it
_PARTICLE_DROPPING_VERBS = word_forms(
    ("lie", ("", "s")), ("ly", ("ing",)), ("lay", ("", "s", "ing")),
    ("sit", ("", "s", "ting")), ("sat", ("",)), ("look", ("", "s", "ing", "ed")),
    ("hang", ("", "s", "ing")), ("hung", ("",)), ("hold", ("", "s", "ing")), ("held", ("",)))


#: prepositions FACTUAL's annotators write in a shorter synonym, also after a verb
#: (``sitting underneath``: ``sitting under``); on its training data ``underneath`` is
#: ``under`` 13 times of 13 where the two entities are related, ``inside of`` ``inside`` 11
#: of 12, ``in between`` ``between`` 7 of 8 and ``at the top of`` ``on top of`` 21 of 26;
#: ``along the side of`` ``alongside`` 11 of 16, ``at the end of`` ``in end of`` 18 of 23,
#: ``at the corner of`` ``in corner of`` 4 of 4 (``on the corner of`` 3 of 6), ``on the
#: other side of`` ``on side of`` 10 of 17, ``on the end of`` ``in end of`` 7 of 7, ``by the
#: side of`` and ``to the side of`` ``on side of`` 10 of 15, ``off of`` ``off`` 11 of 17, and
#: a particle before ``in`` is left out (``up in``, ``out in``: ``in``, 19 of 20).
#: (``beneath`` and ``below`` are VSR's relations and stay as written, as do ``at the edge
#: of``, ``at the back of`` and ``at the bottom of``, which VSR and the spatial benchmarks
#: name.)
_SYNONYM_ENDINGS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("underneath",), ("under",)),
    (("inside", "of"), ("inside",)),
    (("outside", "of"), ("outside",)),
    (("in", "between"), ("between",)),
    (("at", "the", "top", "of"), ("on", "top", "of")),
    (("at", "top", "of"), ("on", "top", "of")),
    (("along", "the", "side", "of"), ("alongside",)),
    (("along", "side", "of"), ("alongside",)),
    (("at", "the", "end", "of"), ("in", "end", "of")),
    (("at", "the", "corner", "of"), ("in", "corner", "of")),
    (("on", "the", "corner", "of"), ("in", "corner", "of")),
    (("on", "the", "other", "side", "of"), ("on", "side", "of")),
    (("on", "the", "end", "of"), ("in", "end", "of")),
    (("by", "the", "side", "of"), ("on", "side", "of")),
    (("to", "the", "side", "of"), ("on", "side", "of")),
    # the same without the article, as short captions write them
    (("at", "end", "of"), ("in", "end", "of")),
    (("at", "corner", "of"), ("in", "corner", "of")),
    (("on", "corner", "of"), ("in", "corner", "of")),
    (("on", "other", "side", "of"), ("on", "side", "of")),
    (("on", "end", "of"), ("in", "end", "of")),
    (("by", "side", "of"), ("on", "side", "of")),
    (("to", "side", "of"), ("on", "side", "of")),
    (("off", "of"), ("off",)),
    # the British spelling of "center" is written as FACTUAL writes it
    (("centre", "of"), ("center", "of")),
    # a comparative or superlative of nearness is the nearness it compares
    (("closer", "to"), ("close", "to")),
    (("closest", "to"), ("close", "to")),
    (("nearer", "to"), ("near",)),
    (("nearest", "to"), ("near",)),
    (("up", "in"), ("in",)),
    (("out", "in"), ("in",)),
)


#: participles of being inside something: ``a kitten sitting in a boot`` wears nothing
_INSIDE_VERBS = frozenset({"sitting", "lying", "laying", "sleeping", "hiding", "resting",
                           "curled", "napping", "peeking", "stuck", "stuffed", "packed"})


#: verbs of trying or being about to do something: FACTUAL writes the verb after their
#: ``to`` (``a dog trying to catch a frisbee``: ``catch``; on its training data 31 of 43
#: where the two entities are related, none kept the phrase)
_CONATIVE_VERBS = frozenset({"trying", "tries", "try", "tried", "attempting", "attempts",
                             "preparing", "prepares", "prepared", "going", "about", "ready",
                             "starting", "beginning", "getting"})

#: forms of ``don``: ``a player donning a cap`` wears it
_DON_FORMS = frozenset({"don", "dons", "donning", "donned"})

#: participles of dressing: ``a man dressed in black``, ``clad in a coat``: ``wearing``
_DRESS_VERBS = frozenset({"dressed", "clad", "donned", "cloaked", "attired", "garbed"})


def relation_convention(words: Sequence[str], subject: str,
                        obj: str) -> tuple[str, bool] | None:
    """The annotated form of the relation ``words`` between ``subject`` and ``obj``.

    Args:
        words: the relation phrase, lowercased tokens.
        subject: head noun of the subject entity.
        obj: head noun of the object entity.

    Returns:
        ``(phrase, swap)`` – the relation phrase to write and whether the object
        becomes the subject – or ``None`` when the phrase stays as written.
    """
    n = len(words)
    if n == 0:
        return None
    if list(words) == ["w", "/"]:  # the shorthand "w/" is "with"
        return relation_convention(["with"], subject, obj) or ("with", False)
    for ending, written in _SYNONYM_ENDINGS:
        k = len(ending)
        if tuple(words[-k:]) == ending:
            return " ".join((*words[:-k], *written)), False
    first = words[0]
    s, o = _last(subject), _last(obj)
    if n == 1:
        if first == "of":
            if s in PICTURE_NOUNS:
                return DEPICT, False  # "a painting of a horse on the wall"
            if lexicon_form(s, CONTAINER_NOUNS):
                return "in", True
            if lexicon_form(s, SURFACE_NOUNS):
                return "on", True
            if lexicon_form(s, HOLDER_NOUNS):
                return HAS, False
            return HAS, True
        if first == "in" and (lexicon_form(o, CLOTHING_NOUNS) or lexicon_form(o, OUTER_GARMENTS)) \
                and not lexicon_form(s, CLOTHING_NOUNS):
            return WEAR, False
        if first == "with" and lexicon_form(o, WORN_WITH_NOUNS) \
                and not lexicon_form(s, CLOTHING_NOUNS):
            return WEAR, False
        if first == "with" and lexicon_form(o, OWNED_PART_NOUNS) \
                and (is_person(s) or is_animal(s)):
            return HAS, False
        if first in SAYING_VERBS and o == "words":
            return "on", True  # "a sign that says `` stop ''": the words are on the sign
        if first in _DON_FORMS and (lexicon_form(o, CLOTHING_NOUNS) or lexicon_form(
                o, OUTER_GARMENTS) or lexicon_form(o, WORN_WITH_NOUNS)):
            return WEAR, False  # "a player donning a cap"
        return None
    last = words[-1]
    if first in _DRESS_VERBS and last in ("in", "as"):
        return WEAR, False
    if n == 2 and last == "in" and first.endswith("ing") and first not in _INSIDE_VERBS \
            and (lexicon_form(o, CLOTHING_NOUNS) or lexicon_form(o, OUTER_GARMENTS)) \
            and not lexicon_form(s, CLOTHING_NOUNS):
        return WEAR, False  # "a man standing in a red coat": he wears it
    if words == ["full", "of"]:
        return HAS, False
    if n == 2:
        verb = PASSIVE_VERBS.get(first)
        if verb is not None and (last == "by" or (last in ("in", "with")
                                                  and first in INSTRUMENT_PASSIVE_VERBS)):
            return verb, True
    if n >= 3 and words[1] == "to" and first in _CONATIVE_VERBS:
        return " ".join(words[2:]), False  # "trying to catch a ball": catch
    if n >= 3 and first in ("lined", "lining", "line", "lines") and words[1] == "up":
        return " ".join(words[2:]), False  # "cars lined up on the street": on
    if first == "seated":
        return " ".join(("sitting",) + tuple(words[1:])), False  # "seated at": sitting at
    if (n == 2 and last == "onto" or list(words[1:]) == ["on", "to"]) \
            and first.startswith(("hold", "held")):
        return first, False  # "holding onto a rail": holding (14 of 16 on FACTUAL's data)
    if words[1] in ("down", "up") and first in _PARTICLE_DROPPING_VERBS \
            and (n > 2 or first.startswith(("hold", "held"))):
        verb = "lying" if first == "laying" else first
        return " ".join((verb,) + tuple(words[2:])), False
    if first == "laying" and words[1] not in ("a", "an", "the"):
        return " ".join(("lying",) + tuple(words[1:])), False
    return None


def is_possessive(word: str) -> bool:
    """Whether the token ``word`` is a possessive noun (``man's``, ``girls'``) or ``'s``."""
    w = word.lower().replace("’", "'")
    if w == "'s":
        return True
    if w in _NOT_POSSESSIVE or len(w) < 3:
        return False
    return (w.endswith("'s") and w[:-2].isalpha()) or (w.endswith("s'") and w[:-1].isalpha())


def possessor(word: str) -> str:
    """The owner noun of a possessive token: ``man's`` -> ``man``, ``girls'`` -> ``girls``."""
    w = word.replace("’", "'")
    if w.endswith("'s"):
        return word[:-2]
    if w.endswith("'"):
        return word[:-1]
    return word
