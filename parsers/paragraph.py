"""How scene graphs of paragraph descriptions write what a paragraph says.

Scene mode (:func:`parsers.coreference.merge_sentences`) applies these to each sentence
while it merges the mentions of a paragraph.  Paragraph descriptions of a picture say
more often than region captions how a thing looks through what it has (``the bus
features a white bumper``, ``a tower with a red roof``, ``a cat lies on a rug, its head on
its paws``) and how it is decorated (``a cake adorned with frosting``); their scene
graphs write these as follows:

* ``with``, ``features``, ``boasts``, ``sports`` between two things is ``has`` (``a tower
  with a red roof``: ``( tower , has , roof )``), clothing a person has is worn (``the
  man's red jacket``: ``( man , wearing , jacket )``), and what an enclosing place
  (:data:`ENCLOSING_PLACES`) is with or features is in it (``the background features a
  wall``: ``( wall , in , background )``);
* the passive of a verb of decorating or covering turns around (:data:`DECORATING_VERBS`:
  ``a wall adorned with tiles``: ``( tiles , adorn , wall )``; ``a sky filled with
  clouds``: ``( clouds , fill , sky )``), as does any passive with
  ``by`` (``a house framed by trees``: ``( trees , frame , house )``); clothing a person is
  adorned or draped in is worn (``( woman , wearing , dress )``);
* a relation of side is written ``at the left of`` or ``on the right side of`` (``to the
  left of``, ``on the left side of``; ``to the right of``), as FACTUAL's scene graphs write
  every one (referring expressions keep the caption's phrase, which benchmarks of spatial
  relations score);
* a relation that is only a preposition of purpose, role or source or a conjunction
  (:data:`NOT_SEEN_WORDS`: ``a barrier for pedestrians``, ``serving as a gateway``; and
  the links of coordinated things, :data:`JOINERS`: ``a man and his pet``) is left out,
  as is one named by a verb of thinking, saying or feeling (``the sky suggests good
  weather``: :func:`parsers.noun_classes.is_unseen_verb`), by a verb of what a part
  of the picture does for it (:data:`COMPOSITION_VERB_FORMS`: ``the lamp adds a pop of
  color``, ``the trees provide a backdrop``, ``casting a soft light``) or by a verb and
  ``as`` (``a lamp stands as a sentinel``);
* what a thing is dotted or strewn with is in it (:data:`SCATTERING_VERBS`: ``a sky dotted
  with clouds``: ``( clouds , in , sky )``), what it is equipped, fitted or laden with it
  has (:data:`HAVING_VERBS`: ``( bike , has , basket )``);
* adverbs of manner in a relation phrase are left out (``stands proudly on``: ``stands
  on``);
* a sentence in locative inversion (``Above the sink hangs a mirror``) relates the thing
  after its verb to the place, by the verb and the opening preposition (``( mirror , hangs
  above , sink )``);
* a place phrase opening a sentence before a comma (``In the background, a poster and a
  lamp hang on a wall``) places the sentence's subject, and the things coordinated with it
  (``( poster , in , background )``, ``( lamp , in , background )``), the first thing
  named after the comma; its relation is the opening preposition (``in``; ``in front
  of`` where the words up to the place are a preposition of several words), after a verb
  of standing or sitting right after persons or animals (:data:`POSITION_VERB_FORMS`:
  ``In the heart of a field, a man stands``: ``( man , stands in , field )``);
* a possessive determiner before a thing (``its head``, ``their peaks``, ``his shirt``)
  gives the thing to its owner, ``has`` (``wearing`` for clothing of a person): the
  subject of the sentence when it agrees with the determiner (``A cat lies down, its head
  on its paws``: the cat has both), else the nearest agreeing thing named before it in the
  sentence, else the subject of the previous sentence.  A verb the sentence's parse
  relates to it across a comma (``is lying down , its head``) is that ``has`` instead.
  What a thing is among or bound for, or how it is made (``its surroundings``, ``its
  companion``, ``its design``: :data:`parsers.coreference.UNOWNED_NOUNS`), it does not have.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from parsers.lexicon import (
    CLOTHING_NOUNS,
    PASSIVE_VERBS,
    WORN_WITH_NOUNS,
    lexicon_form,
    word_forms,
)
from parsers.noun_classes import is_unseen_verb
from parsers.word_classes import is_adverb

__all__ = ["DECORATING_VERBS", "HAVE_WORDS", "HAVING_VERBS", "SCATTERING_VERBS",
           "ENCLOSING_PLACES", "FRONTED_PREPOSITIONS", "JOINERS", "NOT_SEEN_WORDS",
           "POSITION_VERB_FORMS", "COMPOSITION_VERB_FORMS",
           "fronted_place", "inverted_place", "paragraph_relation", "possessed_by",
           "side_phrase"]

#: prepositions that open a sentence with the place of what it describes (``In the
#: background, ...``)
FRONTED_PREPOSITIONS = frozenset({
    "in", "on", "at", "near", "behind", "beside", "beneath", "below", "under", "above",
    "across", "along", "against", "among", "amidst", "amid", "beyond", "inside", "outside",
    "atop", "by", "within", "around", "over", "to", "next", "alongside", "underneath",
    "opposite",
})
#: words that join coordinated things (``a poster and a lamp``)
JOINERS = frozenset({"and", ",", "&"})

#: relation words that say a thing has another
HAVE_WORDS = frozenset({"with", "features", "featuring", "feature", "boasts", "boasting",
                        "sports", "sporting"})

#: past participles of verbs of decorating and covering, and their lemma: ``X adorned with
#: Y`` is ``( Y , adorn , X )`` (what flanks X is ``on both sides of`` it; the lexicon's
#: passive verbs give the lemma of those it knows)
DECORATING_VERBS: dict[str, str] = {
    w: PASSIVE_VERBS[w] for w in ("covered", "lined", "surrounded", "framed", "flanked",
                                  "bordered", "topped", "filled")
} | {
    "adorned": "adorn", "decorated": "decorate", "studded": "stud", "trimmed": "trim",
    "embellished": "embellish", "accented": "accent", "draped": "drape",
    "encircled": "encircle", "edged": "edge", "crowned": "crown", "ringed": "ring",
}

#: prepositions of purpose, role or source and conjunctions: alone they relate nothing one
#: sees (``a barrier for pedestrians``, ``serving as a gateway``, ``from head to toe``)
NOT_SEEN_WORDS = frozenset({"to", "for", "as", "from", "while", "whilst", "whereas",
                            "because", "although", "though", "than", "like", "if", "when"})

#: verbs of what a part of a picture does for it (``the lamp adds a pop of color``, ``the
#: trees provide a backdrop``, ``casting a soft light``): no relation one sees
COMPOSITION_VERB_FORMS = word_forms(
    ("add", ("", "s", "ed", "ing")), ("creat", ("e", "es", "ed", "ing")),
    ("provid", ("e", "es", "ed", "ing")), ("exud", ("e", "es", "ed", "ing")),
    ("cast", ("", "s", "ing")), ("highlight", ("", "s", "ed", "ing")),
    ("dominat", ("e", "es", "ed", "ing")), ("complement", ("", "s", "ed", "ing")),
    ("offer", ("", "s", "ed", "ing")), ("mirror", ("", "s", "ed", "ing")),
    ("includ", ("e", "es", "ed", "ing")))

#: verbs of giving back light or of stirring in place (``gleams under the light``, ``sway
#: gently under the sky``): how a thing looks where it is, so only the preposition relates
SHIMMER_VERB_FORMS = word_forms(
    ("gleam", ("", "s", "ed", "ing")), ("glisten", ("", "s", "ed", "ing")),
    ("shimmer", ("", "s", "ed", "ing")), ("sparkl", ("e", "es", "ed", "ing")),
    ("shin", ("e", "es", "ing")), ("shone", ("",)), ("glint", ("", "s", "ed", "ing")),
    ("glow", ("", "s", "ed", "ing")), ("bask", ("", "s", "ed", "ing")),
    ("rustl", ("e", "es", "ed", "ing")), ("flutter", ("", "s", "ed", "ing")),
    ("sway", ("", "s", "ed", "ing")))

_STAND_FORMS = frozenset({"stand", "stands", "standing", "stood"})
#: prepositions of place after ``stands out``
_OUT_PLACES = frozenset({"against", "among", "amidst", "amid", "in", "on"})

#: places that hold what they are ``with`` or ``feature``: ``the background features a
#: wall``, ``a sky with clouds``: ``( wall , in , background )``, ``( clouds , in , sky )``
ENCLOSING_PLACES = frozenset({
    "background", "sky", "room", "field", "forest", "woods", "park", "meadow", "pasture",
    "garden", "yard", "water", "sea", "ocean", "lake", "river", "pond", "city", "town",
    "village", "kitchen", "bathroom", "bedroom", "landscape",
})

#: participles of scattering: ``X dotted with Y`` is ``( Y , in , X )`` (``a sky dotted with
#: clouds``: the clouds are in the sky)
SCATTERING_VERBS = frozenset({"dotted", "speckled", "sprinkled", "strewn", "peppered",
                              "spotted", "littered"})

#: active forms of the verbs of scattering: ``X dotting Y`` is ``( X , in , Y )`` (``boats
#: dot the harbor``)
SCATTERING_ACTIVE_FORMS = word_forms(
    ("dot", ("", "s", "ting")), ("speckl", ("e", "es", "ing")), ("litter", ("", "s", "ing")),
    ("pepper", ("", "s", "ing")), ("stud", ("", "s", "ding")))

#: participles of being fitted or filled with something: ``X equipped with Y`` is ``( X ,
#: has , Y )``
HAVING_VERBS = frozenset({"equipped", "fitted", "teeming", "characterized", "characterised",
                          "complete", "loaded", "laden", "outfitted", "furnished"})

#: verbs of standing and sitting: where a person or an animal right before one is placed
#: by a place phrase opening the sentence, the verb joins the preposition (``In the heart of
#: a field, a man stands ...``: ``( man , stands in , field )``)
POSITION_VERB_FORMS = frozenset({"stands", "stand", "standing", "sits", "sit", "sitting"})

_COPULA_WORDS = frozenset({"is", "are", "was", "were", "be", "been", "being", "also"})
_HAS = "has"
_WEAR = "wearing"


#: how scene graphs write a relation of side (FACTUAL's training data writes no other)
_SIDE_PHRASES = {"left": ("at", "the", "left", "of"), "right": ("on", "the", "right", "side", "of")}


def side_phrase(words: Sequence[str]) -> tuple[str, ...] | None:
    """``words`` (lowercase) with ``to / on / at (the) left / right (side) of`` written as
    scene graphs write it (``to the left of`` -> ``at the left of``, ``to the right of`` ->
    ``on the right side of``); ``None`` where there is none or it is written so already."""
    for k, w in enumerate(words):
        if w not in ("to", "on", "at"):
            continue
        j = k + 1 + (k + 1 < len(words) and words[k + 1] == "the")
        if j >= len(words) or words[j] not in _SIDE_PHRASES:
            continue
        side = words[j]
        end = j + 1 + (j + 1 < len(words) and words[j + 1] == "side")
        if end >= len(words) or words[end] != "of":
            continue
        out = tuple(words[:k]) + _SIDE_PHRASES[side] + tuple(words[end + 1:])
        return None if out == tuple(words) else out
    return None


def paragraph_relation(words: Sequence[str], subject: str,
                       obj: str) -> tuple[str, bool] | None:
    """The phrase a paragraph's scene graph writes for the relation ``words`` (lowercase
    tokens) from ``subject`` to ``obj`` (head nouns), and whether the two swap; ``None``
    where it stays as the sentence's parse wrote it."""
    core = [w for w in words if w not in _COPULA_WORDS]
    s_place, o_place = _last(subject) == "background", _last(obj) == "background"
    if o_place != s_place:  # `stands in the background`, `the background reveals a hill`
        return "in", s_place
    side = side_phrase(core)
    if side is not None:
        return " ".join(side), False
    if len(core) == 1 and (core[0] in NOT_SEEN_WORDS or core[0] in JOINERS):
        return "", False  # "a man and his pet": coordinated, not related
    manner = [w for w in core if w.endswith("ly") and is_adverb(w)]
    if manner and len(manner) < len(core):
        core = [w for w in core if w not in manner]
        return paragraph_relation(core, subject, obj) or (" ".join(core), False)
    if not core:
        return None
    if len(core) == 1 and core[0] in HAVE_WORDS | {_HAS, "have"}:
        from parsers.conventions import OUTER_GARMENTS  # both import this module's importer
        from parsers.coreference import is_person

        clothing = lexicon_form(_last(obj), CLOTHING_NOUNS) or lexicon_form(
            _last(obj), OUTER_GARMENTS)
        if clothing and is_person(subject):
            return _WEAR, False
        if core[0] == "with" and clothing or core[0] in (_HAS, "have"):
            return None
        if lexicon_form(_last(subject), ENCLOSING_PLACES):
            return "in", True
        return _HAS, False
    if len(core) == 2 and core[1] == "with" and core[0] in SCATTERING_VERBS:
        return "in", True
    if len(core) == 1 and core[0] in SCATTERING_ACTIVE_FORMS:
        return "in", False  # `a few clouds dotting the sky`: the clouds are in it
    if len(core) == 2 and core[1] in ("with", "by") and core[0] in HAVING_VERBS:
        return _HAS, False
    if len(core) == 2 and core[1] in ("with", "in", "by") and core[0] in DECORATING_VERBS:
        from parsers.conventions import OUTER_GARMENTS  # both import this module's importer
        from parsers.coreference import is_person

        if core[1] != "by" and is_person(subject) and (lexicon_form(
                _last(obj), CLOTHING_NOUNS) or lexicon_form(_last(obj), OUTER_GARMENTS)
                or lexicon_form(_last(obj), WORN_WITH_NOUNS)):
            return _WEAR, False
        return DECORATING_VERBS[core[0]], True
    if len(core) > 2 and core[0] in _STAND_FORMS and core[1] == "out" \
            and (core[2] in _OUT_PLACES or core[2:] == ["with"]):
        # `stands out against the wall`: being seen is no relation, standing against it is;
        # `stands out with its red roof`: it has the roof
        rest = core[2:] if core[2] == "with" else [core[0], *core[2:]]
        return paragraph_relation(rest, subject, obj) or (" ".join(rest), False)
    if core[0] in SHIMMER_VERB_FORMS and len(core) > 1:
        rest = core[1:]
        return paragraph_relation(rest, subject, obj) or (" ".join(rest), False)
    if is_unseen_verb(core[0]) or core[0] in COMPOSITION_VERB_FORMS \
            or (len(core) == 2 and core[1] == "as"):
        return "", False
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


def fronted_place(tokens: Sequence[str], spans: Sequence[tuple[int, int]],
                  thing: Callable[[int], bool],
                  animate: Callable[[int], bool] | None = None
                  ) -> tuple[str, int, list[int]] | None:
    """The place phrase that opens a sentence (see the module docstring).

    Args:
        tokens: the sentence's tokens.
        spans: token ranges of its mentions, by entity index.
        thing: whether an entity names a visible thing.
        animate: whether an entity is a person or an animal (a verb of standing or sitting
            after such subjects joins the preposition); ``None``: never.

    Returns:
        ``(preposition, place, subjects)``: the relation phrase, the place entity and the
        entities it places; ``None`` where the sentence opens otherwise.
    """
    lw = [t.lower() for t in tokens]
    if not lw or lw[0] not in FRONTED_PREPOSITIONS or "," not in lw[:12]:
        return None
    comma = lw.index(",")
    before = [i for i, (a, b) in enumerate(spans) if b <= comma]
    if not before:
        return None
    place = max(before, key=lambda i: spans[i][0])
    if not thing(place):
        return None
    first = min(before, key=lambda i: spans[i][0])
    words = [w for w in lw[:spans[first][0]] if w not in ("a", "an", "the")]
    if any(not w.isalpha() for w in words) or (len(words) > 3 and side_phrase(words) is None):
        return None  # `On the left side of the road , ...` is as short as `Behind the shed`
    preposition = " ".join(words) if spans[first][0] < comma else lw[0]
    if first != place:
        preposition = lw[0]
    side = side_phrase(preposition.split())
    if side is not None:
        preposition = " ".join(side)
    after = sorted((i for i, (a, b) in enumerate(spans) if a > comma), key=lambda i: spans[i])
    subjects: list[int] = []
    for i in after:
        if not subjects:
            if thing(i):
                subjects.append(i)
            continue
        gap = lw[spans[subjects[-1]][1]:spans[i][0]]
        if gap and all(w in JOINERS for w in gap) and thing(i):
            subjects.append(i)
        else:
            break
    if not subjects:
        return None
    k = spans[subjects[-1]][1]
    if k < len(lw) and lw[k] in _COPULA_WORDS:
        k += 1
    if k < len(lw) and lw[k] in POSITION_VERB_FORMS and animate is not None \
            and all(animate(i) for i in subjects):
        preposition = f"{lw[k]} {preposition}"  # "In the background, a lamp stands": stands in
    return preposition, place, subjects


def inverted_place(tokens: Sequence[str], spans: Sequence[tuple[int, int]],
                   relations: Sequence[tuple[int, str, int, tuple[int, int]]]
                   ) -> tuple[int, str] | None:
    """A sentence in locative inversion (``Above the sink hangs a mirror``): the place
    phrase opens it and the verb follows the place, its subject after it.

    Args:
        tokens: the sentence's tokens.
        spans: token ranges of its mentions, by entity index.
        relations: ``(subject, phrase, object, span)`` of the sentence's parse.

    Returns:
        ``(k, phrase)``: the index among ``relations`` of the verb the parse gave the place
        as its subject, and the relation phrase from the verb's real subject to the place
        (``hangs above``); ``None`` where the sentence is not so.
    """
    lw = [t.lower() for t in tokens]
    if not lw or lw[0] not in FRONTED_PREPOSITIONS or not spans:
        return None
    place = min(range(len(spans)), key=lambda i: spans[i])
    opening = [w for w in lw[:spans[place][0]] if w not in ("a", "an", "the")]
    if not opening or len(opening) > 4 or not all(w.isalpha() for w in opening):
        return None
    for k, (subject, phrase, obj, span) in enumerate(relations):
        words = phrase.lower().split()
        if subject != place or span[0] != spans[place][1] or not words \
                or words[0] in FRONTED_PREPOSITIONS or words[0] in NOT_SEEN_WORDS \
                or words[0] in ("and", "of", "with", ",") or spans[obj][0] != span[1]:
            continue
        side = side_phrase(opening)
        return k, " ".join(words + list(side if side is not None else opening))
    return None
