"""Nouns that name no visible thing: what a scene graph of a described picture leaves out.

A paragraph describing a picture names the things in it (``a dog``, ``the bench``) and
much that is not a thing in it: qualities (``beauty``, ``depth``), feelings and ideas
(``tranquility``, ``a sense of calm``), events and times (``a moment``, ``the day``) and
the picture itself (``the image captures ...``, ``the viewer``).  Scene mode
(:func:`parsers.base.BaseParser.analyse_scene`) drops the entities whose head is such a
noun, with their relations and attributes, and no pronoun stands for them.

:func:`is_abstract` reads the table :mod:`parsers.noun_class_table`, made from WordNet
3.0 by :func:`build_table` (Debian's ``wordnet-base`` installs the database at
``/usr/share/wordnet``)::

    python -m parsers.noun_classes /usr/share/wordnet > parsers/noun_class_table.py

A noun lemma is abstract when the sense-tagged counts of WordNet (SemCor,
``cntlist.rev``) of its senses filed under abstract supersenses (``noun.act``,
``noun.attribute``, ``noun.cognition``, ``noun.communication``, ``noun.event``,
``noun.feeling``, ``noun.motive``, ``noun.possession``, ``noun.process``,
``noun.quantity``, ``noun.relation``, ``noun.state``, ``noun.time``) are at least those of
its senses filed under concrete ones (artifacts, animals, people, plants, bodies, food,
objects, substances, places, groups, shapes, phenomena); the top-level senses
(``noun.Tops``: ``person``, ``object``) count for neither.  Four closed lists correct the
counts for pictures: :data:`DEPICTION_NOUNS`, the picture and its viewer,
:data:`REGION_NOUNS`, regions of the picture (``the foreground``, ``the left``), and
:data:`FELT_NOUNS`, moving air (``the breeze``, ``the wind``), are abstract
(``image`` is mostly a mental image in WordNet, ``photo`` an artifact); :data:`VISIBLE_NOUNS`,
writing and marks one can see, the planes of a picture and visible effects of light and
water, are not (``sign`` and ``shadow`` are mostly a communication and a state there).
The words a parse may wrongly take for a head are no things either: words WordNet tags
more than twice as often as adjectives or adverbs as as nouns (``tall``, ``blue``; the
table's ``MODIFIER_WORDS``, less the parts of the lexicon such as ``back``), forms that are
only verbs (``seen``) and the closed class :data:`FUNCTION_WORDS` (``as``, ``itself``).
Relations named by a verb tagged mostly in senses of thinking, saying or feeling
(:func:`is_unseen_verb`: ``the sky suggests good weather``) are left out as well.
"""

from __future__ import annotations

import sys
from pathlib import Path

from parsers.word_classes import VERB, is_adverb, verb_class, wrap_words

__all__ = ["DEPICTION_NOUNS", "FELT_NOUNS", "FUNCTION_WORDS", "REGION_NOUNS", "VISIBLE_NOUNS",
           "is_abstract", "is_modifier", "is_unseen_verb", "noun_base", "build_table"]

#: the picture itself, whoever looks at it or wrote it and the angle it is seen from (``taken
#: from a low angle``): never an entity of the scene
DEPICTION_NOUNS: frozenset[str] = frozenset({
    "image", "photo", "photograph", "snapshot", "shot", "scene", "viewer", "onlooker",
    "composition", "frame", "you", "we", "us", "i", "me", "angle", "vantage",
})

#: regions of the picture (``in the foreground``, ``on the left``, ``in the distance``,
#: ``against the backdrop``) and the world around it (``reflecting the world outside``):
#: where a thing is, not a thing.  ``background`` is not one of
#: them: scene graphs of paragraphs place things in it (``( trees , in , background )``)
REGION_NOUNS: frozenset[str] = frozenset({
    "foreground", "forefront", "left", "right", "center", "centre", "middle", "distance",
    "midst", "backdrop", "surroundings", "setting", "corner", "world",
})

#: moving air one feels but does not see (``leaves rustling in the breeze``, ``a flag in
#: the wind``, ``birds gliding through the air``): no thing of the picture
FELT_NOUNS: frozenset[str] = frozenset({"breeze", "wind", "gust", "draft", "draught", "air"})

#: things one sees although WordNet files their commonest senses as abstract
VISIBLE_NOUNS: frozenset[str] = frozenset({
    # writing, marks, pictures and printed things
    "sign", "text", "word", "letter", "number", "logo", "label", "name", "writing",
    "marking", "pattern", "design", "stripe", "symbol", "message", "tag", "poster",
    "painting", "drawing", "print", "display", "menu", "note", "ticket", "book",
    "newspaper", "magazine", "paper", "tv", "television",
    # the plane behind, where paragraph scene graphs place things
    "background",
    # visible effects of light and water, outlines
    "shadow", "reflection", "silhouette", "wave", "ripple", "figure", "smile", "fire",
    # things and places filed under an act, a state or a quantity
    "racket", "racquet", "lift", "tie", "sail", "item", "peak", "cable", "intersection",
    "memorabilia", "arrangement", "pillar", "mask", "arrow", "signal", "accent",
    "lot",
})

#: WordNet's lexicographer files of verbs of thinking, saying and feeling (``verb.cognition``,
#: ``verb.communication``, ``verb.emotion``): what they relate is not seen
UNSEEN_VERB_FILES: frozenset[int] = frozenset({31, 32, 37})

#: WordNet's lexicographer files (``cntlist.rev`` sense keys ``lemma%1:NN:...``) of
#: abstract nouns, and the top-level one that counts for neither side
ABSTRACT_FILES: frozenset[int] = frozenset({4, 7, 9, 10, 11, 12, 16, 21, 22, 23, 24, 26, 28})
TOPS_FILE = 3

#: words that are no noun (pronouns, quantifiers, prepositions) a parse may take for a head
FUNCTION_WORDS: frozenset[str] = frozenset({
    "a", "an", "the", "as", "all", "both", "each", "either", "neither", "some", "many",
    "several", "few", "much", "more", "most", "other", "others", "another", "such", "this",
    "that", "these", "those", "what", "which", "who", "whom", "whose", "itself", "himself",
    "herself", "themselves", "there", "here", "despite", "while", "whilst", "overall", "be",
    "it's", "there's", "he's", "she's", "that's", "they're", "we're", "you're",
})

_table: frozenset[str] | None = None
_modifiers: frozenset[str] = frozenset()
_known: frozenset[str] = frozenset()
_plurals: dict[str, str] = {}
_parts: frozenset[str] = frozenset()
_unseen_forms: frozenset[str] = frozenset()


def _load() -> frozenset[str]:
    global _table, _modifiers, _known, _plurals, _parts, _unseen_forms
    if _table is None:
        from parsers.lexicon import OWNED_PART_NOUNS
        from parsers.noun_class_table import (
            ABSTRACT_NOUNS,
            IRREGULAR_PLURALS,
            MODIFIER_WORDS,
            UNSEEN_VERBS,
        )
        from parsers.word_classes import inflections

        _unseen_forms = frozenset(f for v in UNSEEN_VERBS.split()
                                  for f in (v, *inflections(v)))

        _plurals = dict(p.split(":") for p in IRREGULAR_PLURALS.split())
        _table = frozenset(ABSTRACT_NOUNS.split())
        _parts = OWNED_PART_NOUNS
        _modifiers = frozenset(MODIFIER_WORDS.split()) - OWNED_PART_NOUNS
        _known = _table | _modifiers | DEPICTION_NOUNS | REGION_NOUNS | VISIBLE_NOUNS \
            | FELT_NOUNS
    return _table


def noun_base(word: str, known: frozenset[str] | set[str]) -> str:
    """The singular of a lowercase ``word`` among ``known`` by the regular plural endings
    (``ideas`` -> ``idea``, ``beauties`` -> ``beauty``, ``boxes`` -> ``box``, ``leaves`` ->
    ``leaf``; ``cones`` is no ``con``), else ``word``."""
    if not word.endswith("s") or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        stems = [word[:-3] + "y"]
    elif word.endswith("ves"):
        stems = [word[:-3] + "f", word[:-3] + "fe", word[:-1]]
    elif word.endswith(("ses", "xes", "zes", "ches", "shes")):
        stems = [word[:-2], word[:-1]]
    else:
        stems = [word[:-1]]
    return next((stem for stem in stems if stem in known), word)


def is_unseen_verb(word: str) -> bool:
    """Whether ``word`` is a form of a verb of thinking, saying or feeling (``suggests``,
    ``indicating``, ``evokes``; the table's ``UNSEEN_VERBS``): a relation it names is not
    one a picture shows."""
    _load()
    return word.lower() in _unseen_forms


def is_modifier(word: str) -> bool:
    """Whether ``word`` is used mostly as an adjective or an adverb (``tall``, ``upright``),
    not as a noun (the table's ``MODIFIER_WORDS``, less the parts of the lexicon)."""
    _load()
    w = word.lower().rsplit(None, 1)[-1] if word.strip() else ""
    return w in _modifiers


def is_abstract(word: str) -> bool:
    """Whether the head ``word`` names no visible thing of a picture (see the module
    docstring), or is no noun: a form that is only a verb (``seen`` in ``a cat can be
    seen``), a word used mostly as an adjective or an adverb (``tall`` in ``stands tall``,
    ``blue``, ``together``; not a part, ``back``) or a function word (``as``, ``itself``);
    an unknown word is a thing."""
    w = word.lower().rsplit(None, 1)[-1] if word.strip() else ""
    if not w:
        return False
    table = _load()
    if w in FUNCTION_WORDS:
        return True
    base = _plurals.get(w) or noun_base(w, _known)
    if base in VISIBLE_NOUNS:
        return False
    return base in DEPICTION_NOUNS or base in REGION_NOUNS or base in FELT_NOUNS \
        or base in table \
        or w in _modifiers or verb_class(w) == VERB or (is_adverb(w) and w not in _parts)


# ------------------------------------------------------------------ table builder
def build_table(wordnet_dir: str | Path) -> str:
    """The source of :mod:`parsers.noun_class_table` from a WordNet 3.0 database folder."""
    path = Path(wordnet_dir) / "cntlist.rev"
    if not path.exists():
        raise SystemExit(f"noun_classes: {path} does not exist (a WordNet 3.0 database "
                         "folder has it)")
    abstract: dict[str, int] = {}
    concrete: dict[str, int] = {}
    modifier: dict[str, int] = {}
    tops: dict[str, int] = {}
    unseen_verbs: dict[str, int] = {}
    seen_verbs: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) != 3 or "%" not in fields[0]:
            continue
        lemma, _, rest = fields[0].partition("%")
        kind, lexfile = rest.split(":")[:2]
        if kind not in ("1", "2", "3", "4", "5") or not lemma.isalpha() or not lemma.islower():
            continue
        count, lex = int(fields[2]), int(lexfile)
        if kind == "2":
            verbs = unseen_verbs if lex in UNSEEN_VERB_FILES else seen_verbs
            verbs[lemma] = verbs.get(lemma, 0) + count
            continue
        if kind != "1":
            modifier[lemma] = modifier.get(lemma, 0) + count
            continue
        if lex in ABSTRACT_FILES:
            abstract[lemma] = abstract.get(lemma, 0) + count
        elif lex != TOPS_FILE:
            concrete[lemma] = concrete.get(lemma, 0) + count
        else:
            tops[lemma] = tops.get(lemma, 0) + count
    lemmas = set(abstract) | set(concrete)
    # a plural listed as a lemma of its own (``hands``: workers) gives way to its singular
    words = sorted(w for w, n in abstract.items() if n > 0 and n >= concrete.get(w, 0)
                   and noun_base(w, lemmas - {w}) == w)
    nouns = {w: abstract.get(w, 0) + concrete.get(w, 0) for w in lemmas}
    nouns.update({w: nouns.get(w, 0) + n for w, n in tops.items()})
    modifiers = sorted(w for w, n in modifier.items()
                       if n >= 3 and n > 2 * nouns.get(w, 0) and w not in words)
    body = wrap_words(words)
    adjectives = wrap_words(modifiers)
    # irregular plurals whose regular stem would read as an abstract noun (leaves: leave)
    known = set(words) | set(modifiers)
    irregular = []
    exc = Path(wordnet_dir) / "noun.exc"
    if exc.exists():
        for line in exc.read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if len(fields) >= 2 and fields[0].isalpha() and fields[1].isalpha() \
                    and fields[1] not in known and noun_base(fields[0], known) != fields[0]:
                irregular.append(f"{fields[0]}:{fields[1]}")
    plurals = wrap_words(sorted(irregular))
    unseen = wrap_words(sorted(w for w, n in unseen_verbs.items()
                           if n > 0 and 2 * n >= n + seen_verbs.get(w, 0)))
    return f'''"""Abstract nouns from WordNet 3.0 for :mod:`parsers.noun_classes` (generated by
``python -m parsers.noun_classes WORDNET_DIR``; do not edit by hand).

``ABSTRACT_NOUNS``: the noun lemmas whose sense-tagged counts under abstract supersenses
are at least those under concrete ones; ``MODIFIER_WORDS``: the other words tagged more
than twice as often as adjectives or adverbs as as nouns; ``IRREGULAR_PLURALS``:
``plural:singular`` from ``noun.exc`` where the regular stem would be taken for one of
those (``leaves:leaf``); ``UNSEEN_VERBS``: the verb lemmas tagged at least as often in
senses of thinking, saying or feeling as in all others (``suggest``, ``indicate``); all
separated by white space.

{_NOTICE}"""

ABSTRACT_NOUNS = """
{body}
"""

MODIFIER_WORDS = """
{adjectives}
"""

IRREGULAR_PLURALS = """
{plurals}
"""

UNSEEN_VERBS = """
{unseen}
"""
'''


def _notice() -> str:
    from parsers import word_class_table

    doc = word_class_table.__doc__ or ""
    start = doc.find("WordNet 3.0 Copyright")
    return doc[start:].strip() + "\n" if start >= 0 else ""


_NOTICE = ""


def main(argv: list[str] | None = None) -> int:
    global _NOTICE
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m parsers.noun_classes WORDNET_DIR > parsers/noun_class_table.py",
              file=sys.stderr)
        return 2
    _NOTICE = _notice()
    sys.stdout.write(build_table(args[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
