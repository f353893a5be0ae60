"""The second pass of the ``rule`` parser: attachment rules (see :mod:`parsers.rule`).

An :class:`Attacher` walks the chunks of :mod:`parsers.rule_chunking` once and gives every
relation a subject and an object.  For each chunk it tries the rules that
:data:`ATTACH_RULES` lists for the chunk's kind, in order, until one returns ``True``.
Three finer lists break the larger decisions into named rules as well:

* :data:`NP_LINK_RULES` – how a new entity links to the graph (object of the pending
  relation, coordinated phrase, subject of a clause, root ...);
* :data:`SUBJECT_RULES` – which entity a relation phrase describes;
* :func:`finish` – what is left open at the end of the text.

A new construction is one function added to the right list, before the rules it must
take precedence over.  After each chunk the walk records its kind as ``prev`` (a comma
right after a conjunction keeps the conjunction open: ``and , near the box``).  A comma
after a noun phrase may separate the items of a list (:func:`list_comma`); a pronoun
object stands for its antecedent (:func:`pronoun_object`).
"""

from __future__ import annotations

from collections.abc import Callable

from parsers.base import GraphBuilder
from parsers.conventions import HAS, OUTER_GARMENTS, WEAR, relation_convention
from parsers.coreference import (
    PERSONAL,
    POSSESSIVE_PRONOUNS,
    PRONOUNS,
    REFLEXIVE,
    SUBJECT_PRONOUNS,
    agrees,
    is_animal,
    is_person,
    is_plural,
)
from parsers.lexicon import (
    ADVERBS,
    ATTRIBUTE_WORDS,
    CANONICAL_HEADS,
    CLOTHING_NOUNS,
    CONTAINER_NOUNS,
    COPULAS,
    DISPLAY_VERB_FORMS,
    HOLDER_NOUNS,
    LIGHT_VERBS,
    LOCATIVE_FILLERS,
    OWNED_PART_NOUNS,
    PICTURE_NOUNS,
    POSITION_NOUNS,
    REGION_NOUNS,
    SIDED_PHRASES,
    SPATIAL_BENCHMARK_PREPOSITIONS,
    SURFACE_NOUNS,
    VERB_FORMS,
    WEARER_NOUNS,
    lexicon_form,
    word_forms,
)
from parsers.noun_classes import is_modifier
from parsers.rule_chunking import (
    CONJ,
    COP,
    HARD,
    HEIGHT_ADVERBS,
    NP,
    POSTURE_FORMS,
    PRON,
    REL,
    SOFT,
    THERE,
    WATCH_NOUNS,
    Chunk,
    table_verb_class,
)
from parsers.word_classes import (
    CONJUNCTION_WORDS,
    SUBORDINATORS,
    VERB,
    WEAK,
    is_adverb,
    verb_class,
)

__all__ = ["ATTACH_RULES", "NP_LINK_RULES", "SUBJECT_RULES", "AttachRule", "Attacher",
           "LinkRule", "SubjectRule", "finish"]

#: words that open the subject of a relative clause without ``that`` (``the hat the man is
#: wearing``)
_RELATIVE_SUBJECT_OPENERS = frozenset({"the", "a", "an", "this", "that", "his", "her",
                                       "their", "its", "he", "she", "they", "it", "someone"})
#: nouns X that a participle after ``X of Y`` still describes (parts, places, holders)
_WHOLE_KEEPING_NOUNS = (OWNED_PART_NOUNS, REGION_NOUNS, CONTAINER_NOUNS, SURFACE_NOUNS,
                        HOLDER_NOUNS)
#: words before ``haired`` that do not describe the hair
_HAIR_SKIP = frozenset({"a", "an", "the", "two", "three", "this", "that", "these", "those",
                        "and", "young", "old", "little", "small", "tall"})
_WEAR_FORMS = frozenset({"wearing", "wears", "wear", "wore", "dressed"})
#: words that may describe a position noun (``the far right``, ``the back left side``)
_POSITION_MODIFIERS = POSITION_NOUNS | {"far", "upper", "lower", "near", "other", "opposite"}


#: nouns of the picture as a whole (not of a picture in it: ``a poster``, ``a painting``)
_VIEW_NOUNS = frozenset({"shot", "shots", "snapshot", "scene", "view", "closeup",
                         "close-up", "panorama"})
#: verbs by which a picture shows what is in it
_SHOWING_VERBS = frozenset({"shows", "show", "showing", "depicts", "depicting", "features",
                            "featuring", "captures", "capturing"})


#: prepositions and particles that may end a verb's relation phrase (``attaches to``,
#: ``walk around``)
_RELATION_END_PREPOSITIONS = frozenset({"on", "in", "at", "to", "into", "onto", "by", "from",
                                       "over", "under", "near", "with", "of", "off",
                                       "inside", "above", "behind", "against", "around",
                                       "through", "across", "along", "up", "down", "out",
                                       "away", "about", "past"})
#: the viewer and the writer of a caption, who are not in the picture
_VIEWERS = frozenset({"you", "i", "me", "we", "us"})


def _last_word(head: str) -> str:
    return head.split()[-1].lower() if head else ""


class _Pending:
    """A relation (or copula) phrase waiting for its object."""

    __slots__ = ("subject", "start", "end", "copula", "verb")

    def __init__(self, subject: int, start: int, end: int, copula: bool, verb: bool) -> None:
        self.subject = subject  # -1: a sentence-initial relation, its subject follows
        self.start = start
        self.end = end
        self.copula = copula
        self.verb = verb


class _Relation:
    """The last relation made: its subject, object, span and whether it is a verb."""

    __slots__ = ("subject", "object", "start", "end", "verb")

    def __init__(self, subject: int, obj: int, start: int, end: int, verb: bool) -> None:
        self.subject = subject
        self.object = obj
        self.start = start
        self.end = end
        self.verb = verb


class Attacher:
    """The attachment state of one text, read and changed by the rules.

    Entities are indices into ``builder.entities``; -1 means none.
    """

    __slots__ = ("chunks", "tokens", "builder", "root", "last_np", "clause_subj", "ctx_subj",
                 "antecedent", "waiting", "pending", "last_rel", "described", "fronted",
                 "fronted_resolved", "conj_np", "conj_span", "conj_clause", "comma_np",
                 "partners", "shared", "has_it", "whole_of_it", "worn", "prev", "prev_subj",
                 "pred_subj", "up", "reduced", "has_items", "prep_relative", "pred_before",
                 "current", "pronoun_at", "coloured", "aside", "quality")

    def __init__(self, chunks: list[Chunk], tokens: list[str], builder: GraphBuilder) -> None:
        self.chunks = chunks
        self.tokens = tokens
        self.builder = builder
        self.root = -1
        self.last_np = -1          # most recent entity
        self.clause_subj = -1      # subject of the current clause
        self.ctx_subj = -1         # subject named by a relative pronoun
        self.antecedent = -1       # noun phrase a relative pronoun refers to
        self.waiting = -1          # subject of an object relative clause awaiting its verb
        self.pending: _Pending | None = None     # relation awaiting its object
        self.last_rel: _Relation | None = None   # the last relation made
        self.described = -1        # entity the last relation describes (its subject, or the
        #                            antecedent of an object relative clause)
        self.fronted: tuple[int, int, int] | None = None  # (object, start, end) of a
        #                                                   sentence-initial relation
        self.fronted_resolved = False
        self.conj_np = -1          # entity before the last conjunction
        self.conj_span = (0, 0)    # span of the last conjunction
        self.conj_clause = False   # whether it opens a clause (``while``, ``because``)
        self.comma_np = -1         # entity before the last comma that may start a list
        # coordinated subjects ("a dog and a cat on a couch"): the later conjunct -> the
        # earlier ones, which share its relations; an "and" relation only if none follows
        self.partners: dict[int, list[int]] = {}
        self.shared: set[int] = set()
        self.has_it = -1           # subject of "X has Y on it", which "it" stands for
        self.has_items: list[int] = []  # the entities Y of "X has Y and Z on it" so far
        self.whole_of_it = (-1, -1)  # (end of "it", X) of the last "X with Y on it"
        self.worn = -1             # object of the last relation if it is worn clothing
        self.prev = -1             # kind of the previous chunk
        self.prev_subj = -1        # subject of the clause before the last sentence end
        self.pred_subj = -1        # subject of the last verb, or of a relation after a
        #                            copula or a relative pronoun, in this sentence
        self.pred_before = -1      # pred_subj before the last relation phrase set it
        self.current = -1          # index of the chunk the rules look at
        self.pronoun_at = -1       # index of the last subject pronoun (pronoun_subject)
        self.coloured = (-1, -1)   # (chunk, entity) of the last colours after a verb
        self.aside = (-1, -1)      # (subject, chunk) of a participle opening ", doing ... ,"
        self.quality: set[int] = set()  # tokens of words of quality after a linking verb,
        #                                   left out of the relation they stand inside
        # a caption long enough for the conventions of long captions
        # (antecedent, subject) of an object relative clause without a pronoun ("the hat
        # the man is wearing"), waiting for a verb without an object
        self.reduced: tuple[int, int] | None = None
        self.up: dict[int, tuple[int, bool]] = {}  # object -> (subject, whether a verb) of
        #                                            the relation that made it an object
        # span of a preposition before "which" ("the tunnel in which the train is coming")
        self.prep_relative: tuple[int, int] | None = None

    def run(self) -> int:
        """Apply :data:`ATTACH_RULES` to every chunk, then :func:`finish`; the root."""
        for ci, c in enumerate(self.chunks):
            self.current = ci
            kind = c.kind
            for rule in ATTACH_RULES[kind]:
                if rule(self, c, ci):
                    break
            self.prev = CONJ if kind == SOFT and self.prev == CONJ else kind
        finish(self)
        return self.root if self.root >= 0 else 0

    def next_kind(self, ci: int) -> int:
        """Kind of the chunk after ``ci``, -1 if none."""
        return self.chunks[ci + 1].kind if ci + 1 < len(self.chunks) else -1

    def word(self, i: int) -> str:
        """Lowercase token ``i``."""
        return self.tokens[i].lower()

    def phrase(self, start: int, end: int) -> str:
        """The lowercase tokens ``start:end`` joined by spaces."""
        return " ".join(self.tokens[start:end]).lower()

    def listed_words(self, c: Chunk) -> list[str]:
        """The words of chunk ``c`` as written, without ``and`` / ``or`` (``green and
        yellow`` -> ``green``, ``yellow``)."""
        return [self.tokens[k] for k in range(c.start, c.end) if self.word(k) not in ("and", "or")]

    def warn(self, message: str) -> None:
        self.builder.warnings.append(message)

    def relate(self, subj: int, obj: int, start: int, end: int) -> None:
        """Add the relation ``start:end`` from ``subj`` to ``obj``, following the annotation
        conventions of :mod:`parsers.conventions` (X of Y -> Y has X, ...)."""
        builder = self.builder
        words = [t.lower() for t in self.tokens[start:end]]
        if words == ["for"] or (words and words[-1] == "like"):
            # a purpose or a recipient ("a fence for protection", "a bowl for the dog"), or
            # a likeness ("a cloud shaped like a heart"): FACTUAL's annotators name no
            # relation; the phrase stays linked, unnamed
            builder.add_relation(subj, obj, start, start, text="")
            self.worn = -1
            return
        if (words and words[0] in _SHOWING_VERBS
                and _last_word(builder.entities[subj].head) in _VIEW_NOUNS) \
                or builder.entities[subj].text.lower() in _VIEWERS \
                or builder.entities[obj].text.lower() in _VIEWERS:
            # "a panoramic shot depicts a crosswalk", "park view , featuring trees": the
            # picture itself shows what is in it, which relates to nothing by that; nor
            # does what the viewer or the writer sees ("you can see a mouth")
            builder.add_relation(subj, obj, start, start, text="")
            self.worn = -1
            return
        plain = None
        inside = [k for k in range(start + 1, end - 1)
                  if words[k - start] in HEIGHT_ADVERBS or k in self.quality]
        if inside:
            # "a flag hanging high on a pole": the chunker skipped "high"; "hanging on";
            # "a tower stands tall against the sky": "tall" describes it; "stands against"
            kept = [k for k in range(start, end) if k not in inside]
            words = [self.word(k) for k in kept]
            plain = " ".join(self.tokens[k] for k in kept)
        conv = relation_convention(words, builder.entities[subj].head,
                                   builder.entities[obj].head)
        self.worn = obj if (conv is not None and conv[0] == WEAR) or (
            words and words[0] in _WEAR_FORMS) else -1
        if conv is None and plain is not None:
            # the words of the relation are not its span's: an empty span, as for the
            # conventions' rewritings
            builder.add_relation(subj, obj, start, start, text=plain)
        elif conv is None:
            builder.add_relation(subj, obj, start, end)
        else:
            text, swap = conv
            if swap:
                subj, obj = obj, subj
            builder.add_relation(subj, obj, start, start, text=text)

    def relation_subject(self, c: Chunk, ci: int) -> int:
        """The subject of the relation chunk ``c``: the first of :data:`SUBJECT_RULES` that
        applies, then :func:`clothing_of_clause_subject`."""
        for rule in SUBJECT_RULES:
            subj = rule(self, c)
            if subj is not None:
                break
        else:  # pragma: no cover - nearest_noun_phrase always applies
            raise AssertionError("no subject rule applied")
        return clothing_of_clause_subject(self, ci, subj)


AttachRule = Callable[[Attacher, Chunk, int], bool]
LinkRule = Callable[[Attacher, int, int], bool]
SubjectRule = Callable[[Attacher, Chunk], "int | None"]


# ------------------------------------------------------------ tests on chunks
def _describes_subject(word: str, verb: bool, after_clothing: bool, after_verb: bool) -> bool:
    """Whether a relation starting with ``word`` after the object of another relation
    describes that relation's subject: after worn clothing, anything but ``with``,
    ``without`` and ``on`` (``a man wearing a cap holding a kite``; ``a shirt with
    sleeves`` / ``without sleeves`` parse alike); after a verb's object, ``with`` and
    ``without`` (``a boy hitting a ball with a bat``, ``... without a bat``: the two parse
    alike), not after the agent of a passive (``a square dominated by a tower with a
    clock``: the tower has it).  ``at`` there chains like the other places (``playing a
    game at a hall`` / ``behind a hall`` parse alike)."""
    if after_clothing:
        return word not in ("with", "without", "on")
    return bool(after_verb) and not verb and word in ("with", "without")


def _worn_by_subject(chunks: list[Chunk], ci: int, tokens: list[str], head: str) -> bool:
    """Whether the relation chunk ``ci`` is ``in`` before clothing while the noun before
    it (``head``) cannot wear it, so the clothing belongs to the clause's subject."""
    c = chunks[ci]
    if c.end - c.start != 1 or tokens[c.start].lower() != "in" or ci + 1 >= len(chunks):
        return False
    nxt = chunks[ci + 1]
    if nxt.kind != NP or not lexicon_form(nxt.head.split()[-1] if nxt.head else "",
                                          CLOTHING_NOUNS):
        return False
    word = head.split()[-1].lower() if head else ""
    return not lexicon_form(word, WEARER_NOUNS) and not lexicon_form(word, CLOTHING_NOUNS) \
        and not lexicon_form(word, _WEARING_GROUPS)


#: groups of people, who wear what they are in (``teams in blue uniforms``) but are no
#: person a pronoun stands for
_WEARING_GROUPS = frozenset({"team", "crowd", "group", "couple", "family", "band", "crew",
                             "squad", "troop", "choir", "class"})


def _has_on_it(chunks: list[Chunk], ci: int, tokens: list[str]) -> bool:
    """Whether the relation chunk ``ci`` is ``has`` or ``with`` in ``X has Y PREP it``
    (``the wall has a clock on it``, ``a wall with a clock on it``), where ``it`` is X and
    the relation is between Y and X."""
    c = chunks[ci]
    if " ".join(tokens[c.start:c.end]).lower() not in ("has", "have", "had", "with", "w /") \
            or ci + 3 >= len(chunks):
        return False
    # Y may be a list: "with cups , plates and bowls in it", "has a cup and a plate on it"
    k = ci + 1
    while k + 2 < len(chunks) and chunks[k].kind == NP \
            and chunks[k + 1].kind in (CONJ, SOFT) and chunks[k + 2].kind == NP and k - ci < 8:
        k += 2
    if k + 2 >= len(chunks):
        return False
    y, rel, it = chunks[k], chunks[k + 1], chunks[k + 2]
    return (y.kind == NP and rel.kind == REL and it.kind == NP and it.end - it.start == 1
            and tokens[it.start].lower() in ("it", "them")
            and (k + 3 == len(chunks) or chunks[k + 3].kind in (HARD, SOFT, CONJ, REL,
                                                                 COP)))


def _it_of(chunks: list[Chunk], ci: int, tokens: list[str]) -> bool:
    """Whether the pronoun that ends ``X has Y PREP it`` after the relation chunk ``ci`` is
    ``it`` (not ``them``)."""
    for k in range(ci + 1, min(len(chunks), ci + 12)):
        c = chunks[k]
        if c.kind == NP and c.end - c.start == 1 and tokens[c.start].lower() in ("it", "them"):
            return tokens[c.start].lower() == "it"
    return False


# ------------------------------------------------------- noun phrase chunks
def _state_ending_clause(a: Attacher, c: Chunk, ci: int) -> bool:
    """Whether the noun phrase ``c`` is one word ending its clause, after adverbs (``well
    lit``, ``all gathered``), that reads as a state, a past participle or a verb's ``-ing``
    form the lexicon does not know as a noun, or a word mostly used as an adjective (``the
    food is cooked .``, ``the bags are missing``)."""
    if c.owner is not None or a.next_kind(ci) not in (HARD, SOFT, CONJ, REL, -1) \
            or not all(a.word(k) in ADVERBS or is_adverb(a.word(k)) or a.word(k) == "well"
                       for k in range(c.start, c.end - 1)) \
            or (a.next_kind(ci) == REL and a.chunks[ci + 1].verb):
        return False
    w = a.word(c.end - 1)
    return w in LOCATIVE_FILLERS or w in ATTRIBUTE_WORDS or is_modifier(w) or (
        w.endswith(("ed", "en", "ing")) and verb_class(w) in (VERB, WEAK))


def attributes_after_copula(a: Attacher, c: Chunk, ci: int) -> bool:
    """Attribute words after a copula (``the cat is black``) are modifiers of the copula's
    subject (and of the subjects coordinated with it: ``the cat and the dog are black``),
    not an entity; so is a word of state ending the clause (``the food is cooked .``,
    :func:`_state_ending_clause`)."""
    p = a.pending
    if p is not None and p.copula and p.subject >= 0 and not c.attr_only \
            and _state_ending_clause(a, c, ci):
        if a.word(c.end - 1) not in LOCATIVE_FILLERS:  # "are seen here": no state
            a.builder.entities[p.subject].modifiers.append(a.tokens[c.end - 1])
        a.pending = None
        return True
    if p is not None and p.copula and c.attr_only and p.subject >= 0:
        words = a.listed_words(c)
        for subj in (p.subject, *a.partners.get(p.subject, ())):
            a.builder.entities[subj].modifiers.extend(words)
        a.pending = None
        return True
    return False


def it_of_has_on_it(a: Attacher, c: Chunk, ci: int) -> bool:
    """The ``it`` of ``X has Y on it`` (``the wall has a clock on it``) is X, no entity of
    its own: the pending relation (``on``) relates Y to X, and every other item of a list Y
    (``a plate with a fork and a knife on it``)."""
    p = a.pending
    if a.has_it >= 0 and p is not None and not p.copula and p.subject >= 0 \
            and c.end - c.start == 1 and a.word(c.start) in ("it", "them"):
        builder = a.builder
        for rel in builder.relations:
            # the other items of a list before the relation ("a cup and a plate on it"):
            # their "and" to the last item becomes the same relation to X
            if rel.subject in a.has_items and rel.subject != p.subject \
                    and rel.object in a.has_items and rel.text.lower() in ("and", ",", "&"):
                rel.object = a.has_it
                rel.text = " ".join(a.tokens[p.start:p.end])
                rel.span = (p.start, p.end)
        for other in a.partners.get(p.subject, ()):
            if not builder.connected(other, a.has_it):
                a.relate(other, a.has_it, p.start, p.end)
                a.shared.add(other)
        a.relate(p.subject, a.has_it, p.start, p.end)
        a.last_rel = _Relation(p.subject, a.has_it, p.start, p.end, p.verb)
        a.whole_of_it = (c.end, a.has_it)
        a.has_items = []
        a.pending = None
        a.has_it = -1
        return True
    return False


def antecedent(a: Attacher, pronoun: str, exclude: int, strict: bool = False) -> int:
    """The entity a pronoun stands for: the nearest earlier entity other than ``exclude``
    that agrees with it (:func:`parsers.coreference.agrees`: ``he`` / ``her`` a person or
    an animal, ``it`` not a person and singular, ``them`` plural or the last of coordinated
    subjects); unless ``strict``, ``it`` and ``them`` fall back to the nearest other entity.
    A reflexive (``themselves``) stands for ``exclude`` itself.  -1 if none."""
    if pronoun in REFLEXIVE:
        return exclude
    entities = a.builder.entities
    fallback = -1
    for k in range(len(entities) - 1, -1, -1):
        if k == exclude or entities[k].text.lower() in PRONOUNS:
            continue
        if agrees(pronoun, entities[k].head, k in a.partners):
            return k
        if fallback < 0 and not strict and pronoun not in PERSONAL:
            fallback = k
    return fallback


def position_without_whole(a: Attacher, c: Chunk, ci: int) -> bool:
    """A place noun after a preposition with no whole after it (``the man on the right``,
    ``a lamp in the far corner``... ``in the middle``, ``on top``, ``in the distance``)
    names a position, not a thing: no entity and no relation (the preposition is
    dropped), and a later relation chains to the phrase before it."""
    p = a.pending
    if p is None or p.copula or p.verb or p.subject < 0 or c.owner is not None \
            or c.head.lower() not in POSITION_NOUNS \
            or a.word(c.start) in POSSESSIVE_PRONOUNS \
            or not all(m.lower() in _POSITION_MODIFIERS for m in c.modifiers):
        return False
    if ci + 1 < len(a.chunks) and a.chunks[ci + 1].kind == REL \
            and a.word(a.chunks[ci + 1].start) == "of":
        return False
    _placed_on_whole(a, c)
    a.pending = None
    return True


#: places on a thing that, after the objects of ``with``, place them on the thing
_PLACES_ON_WHOLE = frozenset({"top", "front", "back", "side", "bottom", "inside", "outside",
                              "end"})


def _placed_on_whole(a: Attacher, c: Chunk) -> None:
    """``a pole with a lamp on top``, ``a shirt with a logo and a name on the front``: the
    place after the objects of ``with`` is a place on the phrase before ``with``, as FACTUAL
    writes it: ``( lamp , on top of , pole )`` instead of ``( pole , with , lamp )``."""
    p, r = a.pending, a.last_rel
    if p is None or r is None or r.object != p.subject or r.verb \
            or r.end - r.start != 1 or a.word(r.start) != "with" \
            or c.end - c.start > 3 or a.word(c.end - 1) not in _PLACES_ON_WHOLE:
        return
    words = [a.word(k) for k in range(p.start, p.end)] + [a.word(c.end - 1), "of"]
    if words[:2] == ["at", "top"] or words == ["at", "the", "top", "of"]:
        words = ["on", "top", "of"]
    text = " ".join(w for w in words if w not in ("the", "a", "an"))
    for rel in a.builder.relations:
        if rel.span == (r.start, r.end) and rel.subject == r.subject:
            rel.subject, rel.object = rel.object, rel.subject
            rel.text = text
            rel.span = (p.start, p.start)
    a.whole_of_it = (c.end, r.subject)  # "a horse with a man on top beside a road": X


#: colours, which alone after ``in`` describe rather than name a thing
_COLOUR_WORDS = frozenset({"red", "orange", "yellow", "green", "blue", "purple", "pink",
                           "brown", "black", "white", "gray", "grey", "silver", "gold",
                           "golden", "beige", "tan", "navy", "maroon", "teal", "violet",
                           "turquoise", "khaki", "dark", "light", "bright", "pale"})


def colour_after_verb(a: Attacher, c: Chunk, ci: int) -> bool:
    """``a fence painted white``, ``a bottle tinted blue``, ``words written in black``:
    colours alone after a verb (and ``in``) of a thing say how it looks: they describe the
    verb's subject (``( fence , is , white )``), as FACTUAL writes it, with no entity of
    the colour and no relation; so do colours coordinated with them (``painted green and
    yellow``)."""
    if not c.attr_only or c.owner is not None:
        return False
    words = a.listed_words(c)
    if not words or not all(w.lower() in _COLOUR_WORDS for w in words):
        return False
    at, subj = a.coloured
    if a.pending is None and at >= 0 and at == ci - 2 and a.chunks[ci - 1].kind in (CONJ, SOFT):
        # "painted green and yellow", "green , white and red": more colours of it
        a.builder.entities[subj].modifiers.extend(words)
        a.coloured = (ci, subj)
        return True
    p = a.pending
    if p is None or p.copula or not p.verb or p.subject < 0 \
            or not (p.end - p.start == 1 or (p.end - p.start == 2 and a.word(p.end - 1) == "in")) \
            or all(w.lower() in _SHADE_WORDS for w in words) \
            or a.word(p.start) in _WEAR_FORMS or a.word(p.start) in LIGHT_VERBS:
        return False  # "reflecting light", "wearing white", "has white"
    head = a.builder.entities[p.subject].head
    if is_person(head) or is_animal(head):
        return False  # "a man dressed in blue" keeps FACTUAL's ( man , in , blue )
    a.builder.entities[p.subject].modifiers.extend(words)
    a.coloured = (ci, p.subject)
    a.pending = None
    return True


#: colour words that are also nouns of light (``reflecting light``)
_SHADE_WORDS = frozenset({"light", "dark", "bright", "pale"})


def colour_after_in(a: Attacher, c: Chunk, ci: int) -> bool:
    """``the brand name in red``, ``a photo in black and white``: colours alone after ``in``
    describe a thing itself (``( name , is , red )``), as FACTUAL writes it: no entity of
    the colour and no relation.  After a person (``a man in blue``) they stay an entity:
    FACTUAL writes ``( man , in , blue )`` in short captions, ``( man , wear , clothes )``
    and ``( clothes , is , blue )`` in long ones."""
    p = a.pending
    if p is None or p.copula or p.subject < 0 or a.word(p.end - 1) != "in" \
            or not (p.end - p.start == 1 or a.word(p.start) in ("dressed", "clad")) \
            or not c.attr_only or c.owner is not None:
        return False
    words = a.listed_words(c)
    if not words or not all(w.lower() in _COLOUR_WORDS for w in words):
        return False
    builder = a.builder
    head = builder.entities[p.subject].head
    if is_person(head) or is_animal(head):
        return False
    builder.entities[p.subject].modifiers.extend(words)
    a.pending = None
    return True


#: nouns of a time of day or of the year (``at night``, ``on a sunny day``): when a thing is
#: seen, not a thing one sees
_TIME_NOUNS = frozenset({"day", "daytime", "night", "nighttime", "night-time", "morning",
                         "evening", "afternoon", "midday", "noon", "midnight", "dusk", "dawn",
                         "time", "moment", "season", "winter", "summer", "autumn", "weekend"})
#: prepositions that open a phrase of time
_TIME_PREPOSITIONS = frozenset({"at", "on", "in", "during", "before", "after"})
#: events that ``before`` and ``after`` date (``after a baseball game``); before anything
#: else they place or follow (``bushes before buildings``, ``a dog running after a ball``)
_EVENT_NOUNS = frozenset({"game", "games", "match", "race", "meal", "dinner", "lunch",
                          "breakfast", "practice", "storm", "rain", "snowfall", "party",
                          "ceremony", "show", "performance", "competition", "tournament",
                          "event", "contest", "class", "school", "work", "sunset", "sunrise",
                          "dark"})


def time_after_preposition(a: Attacher, c: Chunk, ci: int) -> bool:
    """``a clock tower at night``, ``a bus on the street on a snowy day``, ``two men eating
    at the same time``, ``skiers on a slope during a race``, ``players after a game``: a
    preposition before a time of day or of the year (``during`` before anything, ``before``
    and ``after`` before an event, :data:`_EVENT_NOUNS`) says when, not where: no entity
    and no relation, and a later relation chains to the phrase before it."""
    p = a.pending
    if p is None or p.copula or p.subject < 0 or c.owner is not None or not c.head:
        return False
    last = a.word(p.end - 1)
    if last not in _TIME_PREPOSITIONS or (p.verb and p.end - p.start < 2):
        return False
    head = c.head.split()[-1].lower()
    digits = head.rstrip("s")
    year = digits.isdigit() and len(digits) == 4 and 1000 <= int(digits) <= 2100 \
        and last in ("in", "during")
    if last in ("before", "after"):
        if head not in _EVENT_NOUNS and head not in _TIME_NOUNS:
            return False
    elif last != "during" and head not in _TIME_NOUNS and not year:
        return False  # "in 1990", "in the late 1800s": a year is a time as well
    if ci + 1 < len(a.chunks) and a.chunks[ci + 1].kind == REL \
            and a.word(a.chunks[ci + 1].start) == "of":
        return False  # "at the time of the race", "in the evening of a long day"
    a.pending = None
    return True


#: nouns of manner or heading (``in a strange way``, ``facing the same direction``)
_MANNER_NOUNS = frozenset({"way", "ways", "direction", "directions"})
#: words that, alone before a noun of manner, leave it one (``the other way``, ``in all
#: directions``); a noun before it makes a thing of it (``a door way``, ``a drive way``)
_MANNER_WORDS = frozenset({"the", "a", "an", "this", "that", "same", "other", "opposite",
                           "different", "such", "either", "each", "every", "all", "right",
                           "wrong", "normal", "usual", "one", "both", "various", "many",
                           "several", "two", "another", "certain", "similar", "odd",
                           "strange", "funny", "unusual", "any"})


def manner_of_relation(a: Attacher, c: Chunk, ci: int) -> bool:
    """``facing the other way``, ``looking in different directions``, ``made in such a way
    that ...``: ``way`` or ``direction`` with only words of manner before it says how, not
    what: no entity and no relation, and a later relation chains to the phrase before it.
    A noun before it makes it a thing (``a man in the door way``)."""
    p = a.pending
    if p is None or p.copula or p.subject < 0 or c.owner is not None \
            or c.head.lower() not in _MANNER_NOUNS or c.end - c.start < 2:
        return False
    if not all(a.word(k) in _MANNER_WORDS for k in range(c.start, c.end - 1)):
        return False
    if ci + 1 < len(a.chunks) and a.word(a.chunks[ci + 1].start) in ("of", "to", "as"):
        return False  # "the way to the beach", "the same direction as the runners"
    a.pending = None
    return True


def role_after_posture(a: Attacher, c: Chunk, ci: int) -> bool:
    """``a lamp stands guard by the door``, ``a pine stood sentinel on the ridge``, ``an oak
    standing as a silent witness to the years``: a watch kept, or what a standing or sitting
    thing stands as, is its role, no thing: no entity and no relation, and a later relation
    chains to the phrase before it."""
    p = a.pending
    if p is None or p.copula or p.subject < 0 or not p.verb or c.owner is not None \
            or not c.head:
        return False
    words = [a.word(k) for k in range(p.start, p.end)]
    if not words or words[0] not in POSTURE_FORMS:
        return False
    first = a.word(c.start)
    if len(words) == 1 and c.end - c.start == 1 and first == "as":
        p.end = c.end  # `stands as a silent sentinel`: `as` alone, its noun comes next
        return True
    # `standing as silent spectators`, `stands guard`
    as_role = words[1:] == ["as"] or (len(words) == 1 and first == "as")
    watch = len(words) == 1 and c.end - c.start == 1 and first in WATCH_NOUNS
    if not (as_role or watch):
        return False
    a.pending = None
    return True


#: verbs after which words of quality alone describe the subject (``stands tall``, ``sits
#: empty``, ``looks happy``, ``lies still``)
_LINKING_FORMS = POSTURE_FORMS | word_forms(
    ("look", ("", "s", "ing", "ed")), ("lie", ("", "s")), ("lying", ("",)), ("lay", ("",)))


def attribute_after_linking_verb(a: Attacher, c: Chunk, ci: int) -> bool:
    """``a tower stands tall``, ``the chair sits empty in the corner``, ``the dog looks
    happy``: words of quality alone right after a verb of posture or of looking describe
    its subject (``( tower , is , tall )``), as FACTUAL writes it: no entity and
    no relation; before a relation phrase the verb goes on to it, without them (``stands
    tall against the sky``: ``( tower , stands against , sky )``)."""
    p = a.pending
    if p is None or p.copula or p.subject < 0 or not p.verb or p.end - p.start != 1 \
            or a.word(p.start) not in _LINKING_FORMS or c.start != p.end \
            or not c.attr_only or c.owner is not None:
        return False
    words = a.listed_words(c)
    if not words or not all(w.lower() in ATTRIBUTE_WORDS or is_modifier(w.lower())
                            for w in words):
        return False
    a.builder.entities[p.subject].modifiers.extend(words)
    if a.next_kind(ci) == REL:
        a.quality.update(range(c.start, c.end))  # the verb waits, its phrase without them
    else:
        a.pending = None
    return True


def pronoun_object(a: Attacher, c: Chunk, ci: int) -> bool:
    """A pronoun object (``a hot dog on a plate with a fork next to it``, ``a woman with a
    phone at her ear``... ``held to her``) stands for its antecedent (:func:`antecedent`):
    the pending relation goes to that entity.  Where that would close a cycle (``a woman
    with a bag in front of her``) or the pronoun is reflexive (``people enjoying
    themselves``), the pronoun stays an entity of its own whose head is the
    antecedent's head."""
    p = a.pending
    if p is None or p.copula or p.subject < 0 or c.end - c.start != 1:
        return False
    word = a.word(c.start)
    if word not in PRONOUNS:
        return False
    target = antecedent(a, word, p.subject)
    if target < 0:
        return False
    builder = a.builder
    if target == p.subject or builder.connected(p.subject, target):
        e = builder.add_entity(c.start, c.end, builder.entities[target].head)
        object_of_relation(a, e, ci)
        a.last_np = e
        return True
    for other in a.partners.get(p.subject, ()):
        if not builder.connected(other, target):
            a.relate(other, target, p.start, p.end)
            a.shared.add(other)
    a.relate(p.subject, target, p.start, p.end)
    _resolve_pending(a, target)
    a.last_np = target
    return True


def pronoun_subject(a: Attacher, c: Chunk, ci: int) -> bool:
    """A pronoun opening a clause before its verb or copula (``A man holds a cup . He is
    standing on a rug``, ``... and it is red``) stands for an earlier entity that agrees
    with it: the subject of the open (or else the previous) clause if it agrees, else the
    nearest agreeing entity (:func:`antecedent`, without falling back to one of another
    person or number).  ``they`` stands for coordinated subjects together (``a man and a
    woman smiling as they walk``), else for a person the clause is about where nothing
    plural comes before it (``a person waving as they cross the street``).  It is no entity
    of its own: the clause describes that entity, and a relation right after it is no
    relation of an earlier object (:func:`_object_relation`)."""
    if a.pending is not None or c.end - c.start != 1 or a.prev not in (HARD, CONJ, SOFT) \
            or a.next_kind(ci) not in (COP, REL):
        return False
    word = a.word(c.start)
    if word not in SUBJECT_PRONOUNS:
        return False
    prior = a.clause_subj if a.clause_subj >= 0 else a.prev_subj
    if word == "they" and prior >= 0 and prior not in a.partners:
        # "a man and a woman holding hands as they walk": the coordinated subjects, which
        # the last of them stands for
        prior = next((last for last, earlier in a.partners.items() if prior in earlier), prior)
    if prior >= 0 and agrees(word, a.builder.entities[prior].head, prior in a.partners):
        target = prior
    else:
        target = antecedent(a, word, -1, strict=True)
        if target < 0 and word == "they" and prior >= 0 \
                and is_person(a.builder.entities[prior].head):
            target = prior  # "a person stepping out as they walk": one person
    if target < 0:
        return False
    a.clause_subj = target
    a.last_np = target
    a.ctx_subj = -1
    a.pronoun_at = ci
    return True


def noun_phrase(a: Attacher, c: Chunk, ci: int) -> bool:
    """Any other noun phrase is an entity, whose head is written as FACTUAL names it
    (:data:`~parsers.lexicon.CANONICAL_HEADS`: ``a guy`` has the head ``person``, ``a cell
    phone`` ``cellphone``); a possessor or whole inside it (``the dog 's
    tail``, ``the truck doors``) is another, with a ``has`` relation (empty span) to it.
    The first of :data:`NP_LINK_RULES` that applies links the entity; the first entity
    not after a sentence-initial relation is the root."""
    builder = a.builder
    head, modifiers = _canonical_head(c.head, c.modifiers)
    head = _stand_in_head(a, c, head)
    e = builder.add_entity(c.start, c.end, head, modifiers)
    if c.owner is not None:
        os_, oe, ohead, omods, at = c.owner
        owner = builder.add_entity(os_, oe, *_canonical_head(ohead, omods))
        builder.add_relation(owner, e, at, at, text=HAS)
    if c.quote is not None:  # "a `` stop '' sign": the words are on the sign
        qs, qe = c.quote
        words = builder.add_entity(qs, qe, "words", [" ".join(a.tokens[qs:qe])])
        builder.add_relation(words, e, c.start, c.start, text="on")
    _haired(a, c, e)
    _compound_participle(a, c, e)
    if a.has_it >= 0:
        a.has_items.append(e)
    _relative_without_pronoun(a, e, ci)
    for rule in NP_LINK_RULES:
        if rule(a, e, ci):
            break
    if c.end - c.start > 1 and a.word(c.start) in POSSESSIVE_PRONOUNS:
        owned_part(a, c, e)
    if a.root < 0 and a.fronted is None:
        a.root = e
    if a.clause_subj < 0:
        a.clause_subj = e
    a.last_np = e
    return True


#: nouns that stand for a noun named before them (``one in a red coat``, ``the others``)
_STAND_IN_NOUNS = frozenset({"one", "ones", "other", "others"})
#: words that may open such a noun phrase
_STAND_IN_OPENERS = frozenset({"the", "a", "an", "another", "each", "this", "that", "these",
                               "those", "one", "first", "second", "third", "last", "other"})


def _stand_in_head(a: Attacher, c: Chunk, head: str) -> str:
    """The head of a noun phrase that only stands for a noun named before it, as FACTUAL
    names such entities: ``each other`` / ``one another`` after a relation is its subject
    (``two boats next to each other``: boat next to boat); ``one``, ``the other``, ``the
    others`` the nearest earlier plural (``two men , one in a red coat``), else (not for
    ``others`` / ``ones``: no single thing stands for them) the nearest earlier entity
    (``the bowl next to the one with a lid``), where a relation or a relative clause
    describes it.  Other heads stay."""
    low = head.lower()
    if low not in _STAND_IN_NOUNS and low != "another" or c.owner is not None:
        return head
    words = [a.word(k) for k in range(c.start, c.end)]
    entities = a.builder.entities
    if words in (["each", "other"], ["one", "another"]):
        p = a.pending
        return entities[p.subject].head if p is not None and p.subject >= 0 else head
    ci = a.chunks.index(c)
    if low == "another" or a.next_kind(ci) not in (REL, PRON) \
            or not all(w in _STAND_IN_OPENERS or is_modifier(w) or w == low for w in words):
        return head  # only one that the text goes on to describe: "the one with a lid"
    fallback = ""
    for k in range(len(entities) - 1, -1, -1):
        other = entities[k].head
        if other.lower() in _STAND_IN_NOUNS or entities[k].text.lower() in PRONOUNS:
            continue
        if agrees("they", other):
            return other
        fallback = fallback or other
    if low in ("others", "ones"):
        return head
    return fallback or head


def _owner(a: Attacher, pronoun: str, e: int) -> int:
    """The entity a possessive determiner before the entity ``e`` stands for: for ``its``
    the nearest earlier animal, else the clause's subject if it agrees; for ``their`` the
    nearest earlier people or animals; otherwise (and for ``his`` / ``her``) the nearest
    earlier entity that agrees."""
    entities = a.builder.entities
    if pronoun == "it":
        for k in range(e - 1, -1, -1):
            if is_animal(entities[k].head) and entities[k].text.lower() not in PRONOUNS:
                return k
        s = a.clause_subj
        if 0 <= s < e and agrees(pronoun, entities[s].head, s in a.partners):
            return s
    if pronoun == "they":
        # a body part is a person's or an animal's (``goggles over their eyes``: not the
        # goggles' eyes)
        k = _nearest_living(a, pronoun, e)
        if k >= 0:
            return k
    k = antecedent(a, pronoun, e, strict=True)
    return k if k < e else -1


def _nearest_living(a: Attacher, pronoun: str, before: int) -> int:
    """The nearest entity before index ``before`` that is a person or an animal agreeing with
    ``pronoun`` (not a pronoun itself); -1 if none."""
    entities = a.builder.entities
    for k in range(before - 1, -1, -1):
        head = entities[k].head
        if entities[k].text.lower() not in PRONOUNS and (is_person(head) or is_animal(head)) \
                and agrees(pronoun, head, k in a.partners):
            return k
    return -1


def owned_part(a: Attacher, c: Chunk, e: int) -> None:
    """``a woman with her leg up``, ``glasses on his head``: a part after a possessive
    determiner (:data:`~parsers.lexicon.OWNED_PART_NOUNS`) belongs to the entity the
    determiner stands for (:func:`_owner`): ``( woman , has , leg )``.  A ``with``
    relation from the owner to the part becomes that ``has``; where the tree already
    joins owner and part otherwise, the determiner is an entity of its own whose head is
    the owner's head, with the ``has`` relation (as for a pronoun object)."""
    if not lexicon_form(c.head.split()[-1] if c.head else "", OWNED_PART_NOUNS):
        return
    owner = _owner(a, POSSESSIVE_PRONOUNS[a.word(c.start)], e)
    if owner < 0:
        return
    builder = a.builder
    rel = builder.relations[-1] if builder.relations else None
    if rel is not None and rel.object == e and rel.subject != owner \
            and rel.text.lower() == "with" and rel.span[1] - rel.span[0] == 1:
        # "a woman close to the camera with her mouth open": the woman's mouth
        rel.subject = owner
    if rel is not None and rel.object == e and rel.subject == owner \
            and rel.text.lower() in ("with", "and", ",", "&"):
        rel.text = HAS
        rel.span = (rel.span[0], rel.span[0])
    elif not builder.connected(owner, e):
        builder.add_relation(owner, e, c.start, c.start, text=HAS)
    elif not any(r.object == e and r.subject == owner for r in builder.relations):
        det = builder.add_entity(c.start, c.start + 1, builder.entities[owner].head)
        builder.add_relation(det, e, c.start, c.start, text=HAS)


# ---------------------------------------------------- linking a new entity
def _resolve_pending(a: Attacher, e: int) -> None:
    """The pending relation has found its object ``e``."""
    p = a.pending
    assert p is not None
    if p.subject >= 0:
        a.last_rel = _Relation(p.subject, e, p.start, p.end, p.verb)
        a.described = p.subject
        a.up[e] = (p.subject, p.verb)
    a.pending = None


def object_of_sentence_initial_relation(a: Attacher, e: int, ci: int) -> bool:
    """``To the left of the plate is a cup``: the plate is the object of the relation that
    opens the text; its subject comes later (:func:`subject_after_sentence_initial_relation`)."""
    p = a.pending
    if p is not None and p.subject < 0:
        a.fronted = (e, p.start, p.end)
        _resolve_pending(a, e)
        return True
    return False


def complement_of_copula(a: Attacher, e: int, ci: int) -> bool:
    """``the cat is a pet``: a noun phrase right after a copula is related to the clause's
    subject by the copula."""
    p = a.pending
    if p is not None and p.copula:
        a.builder.add_relation(p.subject, e, p.start, p.end)
        _resolve_pending(a, e)
        return True
    return False


def object_of_relation(a: Attacher, e: int, ci: int) -> bool:
    """``NP REL NP``: the entity is the object of the pending relation; coordinated
    subjects (``a dog and a cat on a couch``) share it."""
    p = a.pending
    if p is not None:
        if not (p.end - p.start == 1 and a.word(p.start) == "of"
                and relation_convention(("of",), a.builder.entities[p.subject].head,
                                        a.builder.entities[e].head) != (HAS, True)):
            # "X of Y" of a holder is inside one conjunct's phrase ("two cups and a vase of
            # flowers"); of parts it is not ("the tail and a leg of a cat")
            for other in a.partners.get(p.subject, ()):
                a.relate(other, e, p.start, p.end)
                a.shared.add(other)
        text = _companion_of_verb(a, e)
        if text:
            a.builder.add_relation(p.subject, e, p.start, p.start, text=text)
        else:
            a.relate(p.subject, e, p.start, p.end)
        _resolve_pending(a, e)
        return True
    return False


def _companion_of_verb(a: Attacher, e: int) -> str:
    """``a man playing frisbee with his dog``, ``lying on the sofa with a cat``: ``with``
    after a verb's object, before a person or an animal, names whom the verb's subject does
    it with, and FACTUAL writes the verb with it (``playing with``); else ``""``."""
    p, r = a.pending, a.last_rel
    if p is None or r is None or not r.verb or r.subject != p.subject \
            or p.end - p.start != 1 or a.word(p.start) != "with" or a.prev != REL \
            or r.object != a.last_np:
        return ""
    head = a.builder.entities[e].head
    if not (is_person(head) or is_animal(head)) or a.word(r.start) in _WEAR_FORMS \
            or a.word(r.start) in ("has", "have", "having", "had", "with"):
        return ""
    return f"{a.tokens[r.start]} with"


def _after_conjunction(a: Attacher) -> bool:
    """Whether the chunk follows a conjunction that joins things (``and``, ``or``, ``plus``),
    not one that opens a clause (``while``, ``because``: the next noun phrase is its
    subject, not the partner of the one before)."""
    return a.prev == CONJ and a.conj_np >= 0 and not a.conj_clause


def _after_list_comma(a: Attacher, ci: int) -> bool:
    """Whether the noun phrase ``ci`` follows a comma after another noun phrase and the list
    goes on after it (``a dog , a cat and a bird``, ``cups , plates and bowls``; after its
    ``of`` and the noun after that: ``a sandwich , a bowl of soup and crackers``)."""
    nxt = ci
    if a.next_kind(ci) == REL and a.word(a.chunks[ci + 1].start) == "of" \
            and a.chunks[ci + 1].end - a.chunks[ci + 1].start == 1 and a.next_kind(ci + 1) == NP:
        nxt = ci + 2  # "a sandwich , a bowl of soup , crackers": the list goes on
    if not (a.prev == SOFT and a.comma_np >= 0 and a.comma_np == a.conj_np
            and not (a.fronted is not None and not a.fronted_resolved)):
        return False
    if a.next_kind(nxt) in (CONJ, SOFT):
        return a.word(a.chunks[nxt + 1].start) != "as"
    # "a woman wears a pink scarf , a black jacket .": a list of what is worn may end
    # without "and"
    r = a.last_rel
    return (nxt == ci and a.next_kind(ci) in (HARD, -1) and r is not None
            and r.object == a.conj_np and a.worn == r.object)


def _object_of_modifier(a: Attacher) -> bool:
    """Whether the noun phrase before the last conjunction is the object of ``with`` or of
    a participle of the clause's subject, or clothing it is in (``a cup with a lid``, ``a
    woman wearing a shirt``, ``a man in shorts``; not after a copula: ``the cat is under
    the table``), so a noun phrase after the conjunction is another such object."""
    r = a.last_rel
    return (r is not None and r.object == a.conj_np and r.subject == a.clause_subj
            and (a.word(r.start).endswith(("ing", "ed")) if r.verb
                 else a.word(r.start) == "with" or r.object == a.worn)
            and not (r.start > 0 and a.word(r.start - 1) in COPULAS))


def _finite_verb_after(a: Attacher, ci: int) -> bool:
    """Whether the relation phrase after the singular noun phrase ``ci`` opens with a verb
    in ``-s`` that agrees with it (``... and a dog runs along the sand``): that phrase is
    the subject of a clause of its own, not one more object of the relation before."""
    if a.next_kind(ci) != REL:
        return False
    c, r = a.chunks[ci], a.chunks[ci + 1]
    head, verb = a.word(c.end - 1), a.word(r.start)
    if head.endswith("s") and not head.endswith("ss"):
        return False
    return verb.endswith("s") and not verb.endswith("ss") and len(verb) > 3 \
        and (verb in VERB_FORMS or table_verb_class(verb) in (VERB, WEAK))


def coordinated_clause(a: Attacher, e: int, ci: int) -> bool:
    """``... and a cup is on the table``: ``and`` and a noun phrase before a copula start a
    new clause, linked to the root by an ``and`` relation; not after the object of ``with``
    or of a participle of the clause's subject (``a cup with a lid and a straw is on the
    table``: the straw is another object, the cup is on the table)."""
    if _after_conjunction(a) and (a.next_kind(ci) == COP or _finite_verb_after(a, ci)) \
            and not _object_of_modifier(a) and not _subjects_so_far(a, ci):
        a.builder.add_relation(a.root if a.root >= 0 else 0, e, *a.conj_span)
        a.clause_subj = e
        a.ctx_subj = -1
        return True
    return False


def coordinated_object(a: Attacher, e: int, ci: int) -> bool:
    """``left of the plate and the bowl``, ``with cups , plates and bowls``: a noun phrase
    coordinated with the object of the last relation (by ``and`` or by a comma of a
    list) shares that relation, and is the object the next conjunct is coordinated
    with."""
    r = a.last_rel
    c = a.chunks[ci]
    if c.end - c.start == 1 and a.word(c.start) == "one" and a.next_kind(ci) == REL:
        return False  # "one in a red coat and one in a blue coat": a new item
    if (_after_conjunction(a) or _after_list_comma(a, ci)) and r is not None \
            and r.object == a.conj_np:
        if _own_place_follows(a, r, ci):
            # "a plate on the table and a cup on the chair", "a hat on his head and a bag
            # over his shoulder": a conjunct with a place phrase of its own is the partner
            # of the last relation's subject, not one more object of that relation
            return _shares_relation_of_subject(a, r, e)
        if r.end - r.start == 1 and a.word(r.start) == "of" \
                and _shares_relation_of_subject(a, r, e):
            # "with a sandwich , a bowl of soup , crackers": the list goes on with the
            # objects of the relation before "X of Y", not with Y
            return True
        a.relate(r.subject, e, r.start, r.end)
        a.last_rel = _Relation(r.subject, e, r.start, r.end, r.verb)
        a.up[e] = (r.subject, r.verb)
        return True
    return False


def _shares_relation_of_subject(a: Attacher, r: _Relation, e: int) -> bool:
    """Relate ``e`` as the relation that ends at the subject of ``r`` relates it (the
    entity is coordinated with that subject); False if no named relation ends there."""
    prior = next((x for x in reversed(a.builder.relations)
                  if x.object == r.subject and x.span[1] > x.span[0]), None)
    if prior is None:
        return False
    a.relate(prior.subject, e, *prior.span)
    a.last_rel = _Relation(prior.subject, e, prior.span[0], prior.span[1],
                           a.up.get(r.subject, (-1, False))[1])
    a.up[e] = (prior.subject, a.last_rel.verb)
    return True


#: phrases that place a thing: after one of them, a conjunct with a place phrase of its own
#: is another thing placed (:func:`_own_place_follows`)
_PLACE_PHRASES = frozenset(SPATIAL_BENCHMARK_PREPOSITIONS + SIDED_PHRASES + [
    "on", "in", "at", "under", "near", "behind", "above", "below", "beside", "over", "by",
    "inside", "beneath", "underneath", "atop", "next to", "on top of", "in front of",
    "close to", "against", "along", "across", "around"])


#: first words of relation phrases that place nothing
_NOT_PLACING = frozenset({"with", "without", "w", "of", "like", "for", "during", "than"})


def _own_place_follows(a: Attacher, r: _Relation, ci: int) -> bool:
    """Whether the noun phrase ``ci``, coordinated with the object of the place phrase
    ``r``, has a phrase of its own that places it (``a plate on the table and a cup on
    the chair``); not after other relations (``a kitchen with a table and chairs in the
    middle``, ``a man with dark hair and a blue jacket walks``) or clothing (``a girl in a
    blue shirt and white shorts on the field``)."""
    if r.verb or r.object == a.worn or a.next_kind(ci) != REL or a.next_kind(ci + 1) != NP:
        return False
    nxt = a.chunks[ci + 1]
    return not nxt.verb and a.phrase(r.start, r.end) in _PLACE_PHRASES \
        and a.word(nxt.start) not in _NOT_PLACING


def coordinated_subject(a: Attacher, e: int, ci: int) -> bool:
    """``a dog and a cat on a couch``, ``a dog , a cat and a bird on a couch``: before any
    relation, coordinated noun phrases before a relation (by ``and``, or by the commas
    of a list that ``and`` ends) are partners that share it (linked by ``and`` if no
    relation follows)."""
    if a.last_rel is None and ((_after_conjunction(a) and a.next_kind(ci) == REL)
                               or _after_list_comma(a, ci)):
        a.partners[e] = [*a.partners.pop(a.conj_np, ()), a.conj_np]
        return True
    if _subjects_so_far(a, ci) and a.next_kind(ci) == COP \
            and (_after_conjunction(a) or _after_list_comma(a, ci)):
        # "the pizza and the drink are on a mat": the copula's clause describes both
        a.partners[e] = [*a.partners.pop(a.conj_np, ()), a.conj_np]
        a.clause_subj = e
        return True
    return False


def _subjects_so_far(a: Attacher, ci: int) -> bool:
    """Whether the noun phrases before the last conjunction, right before the noun phrase
    ``ci``, are all subjects of the clause (``the pizza and the drink are``; not ``a man
    holds a cup and a dog is``, nor ``a man is tall and a woman is``)."""
    conj = a.conj_np
    return conj >= 0 and (conj == a.clause_subj or conj in a.partners) \
        and not (a.last_rel is not None and a.last_rel.object == conj) \
        and ci >= 2 and a.builder.entities[conj].span[1] == a.chunks[ci - 2].end


def subordinate_clause_subject(a: Attacher, e: int, ci: int) -> bool:
    """``grass in the outfield while the infield is dirt``: a noun phrase right after a
    conjunction that opens a clause (:data:`~parsers.word_classes.SUBORDINATORS`) is that
    clause's subject, linked to the root by an unnamed relation."""
    if a.prev == CONJ and a.conj_clause and a.conj_np >= 0:
        a.builder.add_relation(a.root if a.root >= 0 else 0, e, *a.conj_span)
        a.prev_subj, a.clause_subj, a.pred_subj, a.ctx_subj = a.clause_subj, e, -1, -1
        return True
    return False


def coordinated_noun_phrase(a: Attacher, e: int, ci: int) -> bool:
    """Any other coordinated noun phrase is linked to the one before ``and`` by an ``and``
    relation."""
    if _after_conjunction(a):
        a.builder.add_relation(a.conj_np, e, *a.conj_span)
        return True
    return False


def subject_of_object_relative(a: Attacher, e: int, ci: int) -> bool:
    """``the dog that the man is holding``: a noun phrase right after a relative pronoun is
    the subject of the clause's verb, whose object is the antecedent
    (:func:`verb_of_object_relative`)."""
    if a.prev == PRON and a.antecedent >= 0:
        a.waiting = e
        return True
    return False


def _canonical_head(head: str, modifiers: list[str]) -> tuple[str, list[str]]:
    """The head FACTUAL names (:data:`~parsers.lexicon.CANONICAL_HEADS`) and the modifiers
    left: a plural compound counts as well (``cell phones``: ``cellphones``, without the
    modifier ``cell``)."""
    low = head.lower()
    if low in CANONICAL_HEADS:
        return CANONICAL_HEADS[low], modifiers
    if modifiers and low.endswith("s"):
        pair = f"{modifiers[-1].lower()} {low[:-1]}"
        if pair in CANONICAL_HEADS:
            return CANONICAL_HEADS[pair] + "s", modifiers[:-1]
    return head, modifiers


#: adjectives made of a part and ``-ed`` (``long sleeved``, ``four legged``), and the part
#: (``collared``, ``hooded``, ``eyed`` name a kind more often than a part: not these)
_PART_ADJECTIVES = {"haired": "hair", "sleeved": "sleeve", "legged": "legs", "faced": "face",
                    "roofed": "roof", "bearded": "beard"}


def _haired(a: Attacher, c: Chunk, e: int) -> None:
    """``a blonde haired woman``, ``a red-haired boy``, ``a long sleeved shirt``, ``a white
    faced clock``: the part an adjective in ``-ed`` is made of (hair, sleeve, legs, face,
    roof ...; :data:`_PART_ADJECTIVES`) is an entity of its own that the phrase's head has
    (``( woman , has , hair )``), and the words before it describe the part, not the
    head."""
    tokens = a.tokens
    for k in range(c.start, c.end - 1):
        w = tokens[k].lower()
        suffix = w.rsplit("-", 1)[-1]
        part = _PART_ADJECTIVES.get(suffix)
        if part is None or (w != suffix and suffix != "haired"):
            continue  # "short-sleeved" is written as one attribute
        entity = a.builder.entities[e]
        words = [t for t in (tokens[j] for j in range(c.start, k))
                 if t.lower() not in _HAIR_SKIP]
        if w != suffix:
            words.append(tokens[k][:-len(suffix) - 1])
        first = k - len([j for j in range(c.start, k) if tokens[j].lower() not in _HAIR_SKIP])
        hair = a.builder.add_entity(max(first, c.start), k + 1, part, words)
        a.builder.add_relation(e, hair, k, k, text=HAS)
        drop = {*words, tokens[k]}
        entity.modifiers = [m for m in entity.modifiers if m not in drop]
        return


#: participles that, after a noun and a hyphen, say what that noun does to the phrase's
#: head (``a tree-lined road``: trees line the road), and the verb written for them
_COMPOUND_PARTICIPLES = {"lined": "line", "covered": "cover", "filled": "fill",
                         "topped": "top", "capped": "cap", "strewn": "strew",
                         "studded": "stud", "littered": "litter", "draped": "drape"}


def _compound_participle(a: Attacher, c: Chunk, e: int) -> None:
    """``a tree-lined road``, ``a snow-covered mountain``: a noun joined by a hyphen to a
    participle of :data:`_COMPOUND_PARTICIPLES` before the head is an entity of its own,
    which the participle's verb relates to the head (``( trees , line , road )``)."""
    tokens = a.tokens
    for k in range(c.start, c.end - 1):
        noun, _, participle = tokens[k].lower().partition("-")
        verb = _COMPOUND_PARTICIPLES.get(participle)
        if verb is None or not noun.isalpha() or noun in _HAIR_SKIP:
            continue
        entity = a.builder.entities[e]
        thing = a.builder.add_entity(k, k + 1, noun)
        a.builder.add_relation(thing, e, k, k, text=verb)
        entity.modifiers = [m for m in entity.modifiers if m.lower() != tokens[k].lower()]


def _relative_without_pronoun(a: Attacher, e: int, ci: int) -> None:
    """``the hat the man is wearing``: a noun phrase right after another one, opened by a
    determiner, may be the subject of an object relative clause without ``that``; its
    verb, if one without an object follows (:func:`verb_of_relative_without_pronoun`),
    relates it to the phrase before."""
    chunks = a.chunks
    if a.prev == NP and ci > 0 and chunks[ci - 1].kind == NP \
            and chunks[ci - 1].end == chunks[ci].start and a.last_np >= 0 \
            and a.word(chunks[ci].start) in _RELATIVE_SUBJECT_OPENERS:
        a.reduced = (a.last_np, e)


def subject_after_sentence_initial_relation(a: Attacher, e: int, ci: int) -> bool:
    """``To the left of the plate is a cup``: the noun phrase after the copula (or a comma,
    or ``there is``) is the subject of the sentence-initial relation, and the root."""
    f = a.fronted
    if f is not None and not a.fronted_resolved and a.prev in (COP, SOFT, THERE):
        a.relate(e, f[0], f[1], f[2])  # its conventions: `Clad in a coat , a man ...`: wearing
        a.fronted_resolved = True
        a.root = e
        a.clause_subj = e
        return True
    return False


def first_noun_phrase_is_root(a: Attacher, e: int, ci: int) -> bool:
    """The first noun phrase is the referent: the root, and the subject of its clause."""
    if a.root < 0:
        a.root = e
        a.clause_subj = e
        return True
    return False


def sentence_subject(a: Attacher, e: int, ci: int) -> bool:
    """A noun phrase opening a sentence (after ``.`` or ``there is``) is its clause's
    subject; it stays unlinked here."""
    if a.prev in (HARD, THERE) or a.prev == -1:
        a.clause_subj = e
        return True
    return False


# ----------------------------------------------------------- relation chunks
def preposition_before_which(a: Attacher, c: Chunk, ci: int) -> bool:
    """``the tunnel in which the train is coming``, ``the branch on which a bird sits``: a
    preposition right before ``which`` / ``whom`` is the relative clause's, not a relation
    of the noun phrase before it (:func:`verb_of_prepositional_relative`)."""
    if c.verb or ci + 1 >= len(a.chunks) or a.chunks[ci + 1].kind != PRON \
            or a.word(a.chunks[ci + 1].start) not in ("which", "whom") or a.last_np < 0 \
            or a.prev not in (NP, SOFT):
        return False
    a.prep_relative = (c.start, c.end)
    a.pending = None
    return True


def verb_of_prepositional_relative(a: Attacher, c: Chunk, ci: int) -> bool:
    """The verb of a relative clause after a preposition and ``which`` relates the clause's
    subject to the noun phrase before the preposition: with the preposition when the verb
    has none of its own (``the branch on which a bird sits``: ``( bird , sits on , branch
    )``; ``the road from which the truck is coming from``: ``coming from``); a verb with an
    object keeps it, and the preposition relates the two (``a lamp beneath which two men
    read a poster``: the men are beneath the lamp and read the poster)."""
    if a.prep_relative is None or a.waiting < 0 or a.antecedent < 0 or not c.verb:
        return False
    ps, pe = a.prep_relative
    subj, whole = a.waiting, a.antecedent
    a.prep_relative = None
    a.waiting = -1
    a.antecedent = -1
    a.ctx_subj = -1
    if a.next_kind(ci) == NP:
        a.relate(subj, whole, ps, pe)
        a.pending = _Pending(subj, c.neg_start, c.end, False, True)
        a.pred_subj = subj
        return True
    last = a.word(c.end - 1)
    if c.end - c.start > 1 and not last.endswith(("ing", "ed", "s")) \
            and last not in ("out", "up", "down", "off", "away", "back"):
        a.relate(subj, whole, c.neg_start, c.end)  # the verb has its own preposition
    else:
        text = " ".join(a.tokens[c.neg_start:c.end] + a.tokens[ps:pe])
        a.builder.add_relation(subj, whole, c.start, c.start, text=text)
    a.last_rel = _Relation(subj, whole, c.start, c.end, True)
    a.described = whole
    a.pending = None
    return True


def verb_of_object_relative(a: Attacher, c: Chunk, ci: int) -> bool:
    """``the dog that the man is holding``: the relation of an object relative clause goes
    from the clause's subject (the man) to the antecedent (the dog); a preposition with
    its object before the verb describes the subject (``the board that the boy in red
    shoes is standing on``)."""
    if a.waiting >= 0 and not (not c.verb and a.next_kind(ci) == NP):
        # a preposition with its object ("the boy in white sneakers") describes the
        # clause's subject; the clause's verb comes later
        start = c.neg_start
        place = _place_of_where(a, c, ci)
        if place:
            a.builder.add_relation(a.waiting, a.antecedent, start, start,
                                   text=" ".join([*a.tokens[start:c.end], place]))
        else:
            a.builder.add_relation(a.waiting, a.antecedent, start, c.end)
        a.last_rel = _Relation(a.waiting, a.antecedent, start, c.end, c.verb)
        a.described = a.antecedent
        a.waiting = -1
        a.antecedent = -1
        a.ctx_subj = -1
        a.pending = None
        return True
    return False


#: places one is in rather than on (``the cab where the driver sits``: ``sits in``)
_ENCLOSURES = frozenset({"room", "kitchen", "bathroom", "bedroom", "office", "car", "cab",
                         "truck", "bus", "train", "boat", "building", "house", "water",
                         "ocean", "sea", "lake", "pool", "river", "city", "town", "store",
                         "shop", "restaurant", "cage", "pen", "tent", "box", "park", "forest"})


def _place_of_where(a: Attacher, c: Chunk, ci: int) -> str:
    """The preposition a verb without an object takes in a clause opened by ``where`` (``the
    chair where the kid is sitting``: ``sitting on``; ``the cab where the driver sits``:
    ``sits in``), or "" when the clause is no such clause or the verb has its own."""
    if not c.verb or a.next_kind(ci) == NP or (
            c.end - c.start > 1 and a.word(c.end - 1) in _RELATION_END_PREPOSITIONS):
        return ""
    k = ci - 1
    while k >= 0 and a.chunks[k].kind != PRON:
        k -= 1
    if k < 0 or a.word(a.chunks[k].start) != "where":
        return ""
    head = _last_word(a.builder.entities[a.antecedent].head)
    return "in" if lexicon_form(head, _ENCLOSURES) or lexicon_form(head, CONTAINER_NOUNS) \
        else "on"


def verb_of_relative_without_pronoun(a: Attacher, c: Chunk, ci: int) -> bool:
    """``the brown hat the man standing in the street is wearing .``: a verb with no object
    after it (the text, the sentence or a clause ends, a conjunction or a copula follows:
    ``the table the vase stands on is wooden``) closes the relative clause
    :func:`_relative_without_pronoun` opened: it relates the clause's subject to the phrase
    before it."""
    r = a.reduced
    if r is None or not c.verb or a.next_kind(ci) in (NP, REL, PRON) \
            or a.prev not in (COP, NP):
        return False
    antecedent, subj = r
    a.reduced = None
    if a.builder.connected(subj, antecedent):
        return False
    start = c.neg_start
    a.relate(subj, antecedent, start, c.end)
    a.last_rel = _Relation(subj, antecedent, start, c.end, True)
    a.described = antecedent
    a.pred_subj = subj  # "... is wearing while riding a bike": the subject rides
    a.pending = None
    a.ctx_subj = -1
    return True


def worn_with_on(a: Attacher, c: Chunk, ci: int) -> bool:
    """``a man with a dark hat on``: ``on`` with no object after the object of ``with``
    makes that object worn (``( man , wearing , hat )``), by the clause's subject when the
    ``with`` followed a thing (``standing in the background with a hat on``); nothing is
    worn by a thing (``a cup with a lid on``).  A verb right after it describes the wearer
    (``a man with a hat on walking down the street``)."""
    r = a.last_rel
    if c.end - c.start != 1 or a.word(c.start) != "on" or a.prev != NP or r is None \
            or r.object != a.last_np or a.word(r.start) != "with" \
            or not (a.next_kind(ci) in (HARD, SOFT, CONJ, -1)
                    or (a.next_kind(ci) == REL and a.chunks[ci + 1].verb)):
        return False
    builder = a.builder
    rel = next((x for x in reversed(builder.relations)
                if x.object == r.object and x.subject == r.subject), None)
    if rel is None:
        return False
    wearer = rel.subject
    if not (is_person(builder.entities[wearer].head) or is_animal(builder.entities[wearer].head)):
        s = a.clause_subj
        if s < 0 or s == rel.object or not is_person(builder.entities[s].head):
            return False  # "a cup with a lid on": nothing is worn
        wearer = s
    rel.subject = wearer
    rel.text = WEAR
    rel.span = (rel.span[0], rel.span[0])
    a.pending = None
    a.whole_of_it = (c.end, wearer)  # "a man with a hat on walking ...": the man walks
    return True


def coordinated_relation_phrase(a: Attacher, c: Chunk, ci: int) -> bool:
    """``next to and to the left of``: a relation phrase right after another one (with no
    object between them) extends it into one relation phrase; a verb after ``and`` and
    another verb without an object replaces it (``a dog running and jumping over a log``:
    ``jumping over``), as does a verb after a comma (``a woman looking up , holding a
    cup``: ``holding``) and a participle right after another one (``a man standing
    wearing a hat``: ``wearing``).  After a copula the new phrase is a relation of its own
    (``a boy running is wearing a cap``: ``wearing``)."""
    p = a.pending
    if p is not None and not p.copula and a.prev != COP:
        if p.verb and c.verb and (a.prev in (CONJ, SOFT) or (
                a.prev == REL and p.end - p.start == 1 and a.word(p.start).endswith("ing")
                and a.word(c.start).endswith("ing"))):
            p.start = c.neg_start
        p.end = c.end
        return True
    return False


def has_y_on_it(a: Attacher, c: Chunk, ci: int) -> bool:
    """``the rock has moss on it``, ``a wall with a clock on it``: no ``has`` relation; the
    relation before ``it`` relates Y to X (:func:`it_of_has_on_it`)."""
    if c.neg_start != c.start or not _has_on_it(a.chunks, ci, a.tokens):
        return False  # "doesn't have a sink in it" keeps its negated "have"
    subj = a.relation_subject(c, ci)
    if subj < 0:
        return False
    last = a.last_np
    if subj != last and last >= 0 and is_person(a.builder.entities[subj].head) \
            and not is_person(a.builder.entities[last].head) and _it_of(a.chunks, ci, a.tokens):
        # "a man holding an umbrella with a logo on it": "it" is no person, so the thing
        subj = last
    a.has_it = subj
    a.has_items = []
    a.pending = None
    a.ctx_subj = -1
    return True


def relation_awaiting_object(a: Attacher, c: Chunk, ci: int) -> bool:
    """Any other relation phrase gets its subject (:data:`SUBJECT_RULES`) and waits for its
    object, the next noun phrase (:func:`object_of_relation`); a copula before it is no
    relation."""
    subj = a.relation_subject(c, ci)
    if c.verb and a.prev == SOFT and ci > 1 and a.chunks[ci - 2].kind == NP \
            and a.word(c.start).endswith(("ing", "ed")):
        a.aside = (subj, ci)  # "a bear , wearing an apron with a logo on it , ..."
    if c.verb or a.prev in (COP, PRON):
        a.pred_before = a.pred_subj
        a.pred_subj = subj
    a.pending = _Pending(subj, c.neg_start, c.end, False, c.verb)
    a.ctx_subj = -1
    return True


# ------------------------------------------------------ subjects of relations
def subject_of_relative_clause(a: Attacher, c: Chunk) -> int | None:
    """After a relative pronoun (``the cup that is on``): the entity it refers to."""
    if a.prev == PRON or (a.prev == COP and a.ctx_subj >= 0):
        return a.ctx_subj
    return None


def subject_of_copula(a: Attacher, c: Chunk) -> int | None:
    """After a copula (``The cat is under the laptop``): the clause's subject."""
    if a.prev == COP:
        return a.clause_subj if a.clause_subj >= 0 else a.last_np
    return None


def subject_after_aside(a: Attacher, c: Chunk) -> int | None:
    """``a teddy bear , wearing an apron with a logo on it , in front of a monitor``: a
    relation right after the comma that closes a participle clause set off by commas
    describes the phrase before the clause."""
    subj, at = a.aside
    if subj < 0 or a.prev != SOFT or a.current - 1 <= at \
            or any(a.chunks[k].kind in (HARD, CONJ, COP, PRON) for k in range(at, a.current)):
        return None
    a.aside = (-1, -1)
    return subj


def subject_of_coordinated_relation(a: Attacher, c: Chunk) -> int | None:
    """After ``and`` or a comma (``the cup on the plate and left of the knife``): the
    subject of the last relation."""
    if a.prev in (CONJ, SOFT):
        if c.verb and a.last_rel is not None and (a.pred_subj >= 0 or a.clause_subj >= 0):
            return a.pred_subj if a.pred_subj >= 0 else a.clause_subj
        return a.last_rel.subject if a.last_rel is not None else a.last_np
    return None


def _object_relation(a: Attacher) -> _Relation | None:
    """The last relation if the previous chunk is its object, else None (also when that
    chunk is a subject pronoun standing for the object: ``the face of a man as he catches a
    ball``: the man catches it)."""
    r = a.last_rel
    return r if a.prev == NP and r is not None and r.object == a.last_np \
        and a.pronoun_at != a.current - 1 else None


def participle_after_prepositional_object(a: Attacher, c: Chunk) -> int | None:
    """``the man next to the car wearing a hat``: a verb after the object of a preposition
    describes the subject of that preposition, unless that object is a person and the
    subject a thing (``a sign next to a man wearing a hat``: the man wears it); an ``-ing``
    participle after the object of a verb describes the verb's subject (``a man sitting in
    the audience wearing a hat``: the man wears the hat), unless that object is a person
    (``a girl talking to a man holding a cup``: the man holds it).  A past participle after
    ``X with Y`` describes Y (:func:`_participle_of_with_object`)."""
    r = _object_relation(a)
    if r is not None and c.verb and (not r.verb or a.word(c.start).endswith("ing")):
        entities = a.builder.entities
        if r.verb and is_person(entities[r.object].head):
            return None  # "listening to a man holding a cup": the man holds it
        if _describes_whole_after_of(a, r, c) or _participle_of_with_object(a, r, c) \
                or _thing_had_resting(a, r, c):
            return r.object
        top = _top_of_prepositions(a, r.subject)
        if is_person(entities[r.object].head) and not is_person(entities[top].head) \
                and not is_animal(entities[top].head):
            return None  # "a sign next to a man standing in a coat": a thing does not stand
        return top
    return None


#: ``-ing`` forms of where a thing rests (``lying on``, ``hanging from``)
_RESTING_FORMS = frozenset({"lying", "laying", "sitting", "resting", "hanging", "standing",
                            "leaning", "sticking"})


def _thing_had_resting(a: Attacher, r: _Relation, c: Chunk) -> bool:
    """Whether ``c`` says where the thing Y of ``X has Y`` rests (``the person has a bag
    lying on the table``: the bag lies there), Y no person or animal."""
    if not r.verb or a.word(r.start) not in ("has", "have", "had", "having") \
            or a.word(c.start) not in _RESTING_FORMS:
        return False
    head = a.builder.entities[r.object].head
    return not (is_person(head) or is_animal(head))


#: irregular past participles (the regular ones end in ``-ed`` or ``-en``)
_IRREGULAR_PARTICIPLES = frozenset({"stuck", "hung", "held", "built", "made", "laid", "set",
                                    "put", "cut", "spread", "left", "sewn", "shown", "worn",
                                    "drawn", "tied"})


def _participle_of_with_object(a: Attacher, r: _Relation, c: Chunk) -> bool:
    """Whether the past participle ``c`` right after ``X with Y`` (or ``without Y``) describes
    Y (``a van with a ladder strapped to its roof``: the ladder is strapped to it), as its
    passive subject;
    not when Y is a part of X or a place on it (``a car with a red top parked by a curb``:
    the car is parked)."""
    if r.end - r.start != 1 or a.word(r.start) not in ("with", "without"):
        return False
    w = a.word(c.start)
    if not (w.endswith(("ed", "en")) or w in _IRREGULAR_PARTICIPLES) \
            or a.next_kind(a.chunks.index(c)) != NP:
        return False  # "with the tower centrally located , the trees ...": no relation
    head = a.builder.entities[r.object].head
    word = head.split()[-1].lower() if head else ""
    return not (lexicon_form(word, OWNED_PART_NOUNS) or lexicon_form(word, REGION_NOUNS))


#: what a person or an animal does with the whole body: after a part of it and ``of``, the
#: whole does it (``the wrist of a man lying in the grass``)
_WHOLE_BODY_VERBS = frozenset({"wearing", "dressed", "walking", "running", "riding", "eating",
                               "drinking", "sitting", "standing", "lying", "laying",
                               "sleeping", "swimming", "skiing", "surfing", "skating",
                               "kneeling", "crouching"})


def _describes_whole_after_of(a: Attacher, r: _Relation, c: Chunk) -> bool:
    """Whether the ``-ing`` participle ``c`` right after ``X of Y`` describes Y: when X is
    neither a part, a place on a whole nor a holder (``the shadow of a man walking``), and
    when X is a part of a person or an animal Y and the verb one the whole body does
    (``the arm of a woman lying on a bench``, ``the legs of a man wearing jeans``; a hand
    still holds: ``the hand of a girl holding a cup``)."""
    if r.end - r.start != 1 or a.word(r.start) != "of":
        return False
    verb = a.word(c.start)
    head = a.builder.entities[r.subject].head
    word = head.split()[-1] if head else ""
    if verb in _WHOLE_BODY_VERBS and lexicon_form(word, OWNED_PART_NOUNS):
        whole = a.builder.entities[r.object].head
        if is_person(whole) or is_animal(whole):
            return True
    if not verb.endswith("ing"):
        return False
    if word.lower() in PICTURE_NOUNS and verb in DISPLAY_VERB_FORMS:
        return False  # "a painting of a horse hanging on the wall": the painting hangs
    return not any(lexicon_form(word, nouns) for nouns in _WHOLE_KEEPING_NOUNS)


def _top_of_prepositions(a: Attacher, e: int) -> int:
    """The entity at the top of a chain of prepositions that ends at ``e`` (``a man with
    glasses on his head``: from the glasses up to the man)."""
    seen = 0
    while e in a.up and seen < 8:
        subj, verb = a.up[e]
        if verb or subj < 0:
            break
        e = subj
        seen += 1
    return e


def subject_after_y_on_it(a: Attacher, c: Chunk) -> int | None:
    """``a cup with a lid on it sits on a table``: a relation right after ``X with Y on it``
    (or ``X has Y on it``) describes X, as it would after ``X with Y``."""
    end, whole = a.whole_of_it
    if whole >= 0 and a.prev in (NP, REL) and c.start == end:
        return whole
    return None


def subject_of_finite_verb(a: Attacher, c: Chunk) -> int | None:
    """``the plate in front of the woman smelling the cake has a biscuit on it``, ``the man
    next to the car holds a cup``: a verb in the third person after the object of another
    relation is the verb of the clause, and its subject the clause's subject."""
    r = _object_relation(a)
    w = a.word(c.start)
    if r is None or not c.verb or a.clause_subj < 0 or a.clause_subj == a.last_np \
            or not (w in ("has", "does") or (w.endswith("s") and not w.endswith("ss")
                                              and w[:-1].isalpha() and len(w) > 3)) \
            or is_person(w[:-1]) \
            or any(a.word(k) in CONJUNCTION_WORDS for k in range(r.start, c.start)):
        return None  # "a dog barking because a cat sits on the fence": the cat sits
    return a.clause_subj


def subject_of_purpose(a: Attacher, c: Chunk) -> int | None:
    """``a man climbing a ladder to reach the roof``: a verb after ``to`` that follows the
    object of another verb says what that verb's subject does it for: it describes that
    subject."""
    r = _object_relation(a)
    if r is not None and r.verb and c.verb and c.start > 0 and a.word(c.start - 1) == "to":
        return r.subject
    return None


def subject_after_quoted_words(a: Attacher, c: Chunk) -> int | None:
    """``a sign that reads `` stop '' on a pole``: after the quoted words a verb of saying
    named, a relation describes the thing they are written on."""
    r = _object_relation(a)
    if r is not None and r.verb and a.builder.entities[r.object].head == "words":
        return r.subject
    return None


def subject_after_likeness(a: Attacher, c: Chunk) -> int | None:
    """``a cloud shaped like a heart above a tower``: what a thing looks like is no thing
    of the scene; a relation after it describes the thing."""
    r = _object_relation(a)
    if r is not None and r.end > r.start and a.word(r.end - 1) == "like":
        return r.subject
    return None


def subject_of_head_before_of(a: Attacher, c: Chunk) -> int | None:
    """``a mug of tea on the desk``, ``a ball of yarn on a table``: after ``X of Y`` the
    head X (the root) carries the relation; ``with`` right after a part of a person or an
    animal describes the whole (``the head of a man with brown hair``: the man has it)."""
    r = _object_relation(a)
    if r is not None and r.end - r.start == 1 and a.word(r.start) == "of":
        entities = a.builder.entities
        whole, part = entities[r.object].head, entities[r.subject].head
        if c.end - c.start == 1 and a.word(c.start) == "with" \
                and entities[r.object].span[0] == a.chunks[a.current - 1].start \
                and (is_person(whole) or is_animal(whole)) \
                and lexicon_form(part.split()[-1] if part else "", OWNED_PART_NOUNS):
            return r.object  # "the head of a man with brown hair": the man has the hair
        return r.subject
    return None


#: prepositions of layering: after worn clothing, before clothing or a part of the body,
#: they place the clothing
_LAYERING = frozenset({"under", "over", "underneath", "beneath", "below", "above"})


def worn_over_worn(a: Attacher, c: Chunk) -> int | None:
    """``a man wearing a shirt under a jacket``, ``a skier wearing goggles over his eyes``: a
    preposition of layering right after worn clothing, before more clothing or a part of
    the body, places the clothing, not its wearer (``a man wearing a cap under a tree``
    stays the man's)."""
    r = _object_relation(a)
    if r is None or c.verb or a.worn != a.last_np or c.end - c.start != 1 \
            or a.word(c.start) not in _LAYERING:
        return None
    ci = a.chunks.index(c)
    nxt = a.chunks[ci + 1] if ci + 1 < len(a.chunks) else None
    if nxt is None or nxt.kind != NP or not nxt.head or (
            ci + 2 < len(a.chunks) and a.word(a.chunks[ci + 2].start) == "of"):
        return None  # "a guy in a coat under the nose of the plane": the guy
    word = nxt.head.split()[-1].lower()
    if word in ("one", "ones") or lexicon_form(word, CLOTHING_NOUNS) \
            or lexicon_form(word, OUTER_GARMENTS) or lexicon_form(word, OWNED_PART_NOUNS):
        return r.object
    return None


def subject_described_after_object(a: Attacher, c: Chunk) -> int | None:
    """``a man in a cap holding a kite``: after worn clothing anything but ``with`` / ``on``,
    and ``on`` a place (``a man in a hat on a horse``), and after a verb's object ``with``
    (``a boy hitting a ball with a bat``), describe the last relation's subject."""
    r = _object_relation(a)
    if r is not None and _describes_subject(a.word(c.start), c.verb, a.worn == a.last_np,
                                            r.verb and a.word(r.end - 1) != "by"):
        return r.subject  # not after the agent of a passive ("dominated by a tower with")
    if r is not None and a.worn == a.last_np and c.end - c.start == 1 \
            and a.word(c.start) == "on" and _on_a_place(a):
        return r.subject  # "a man in a hat on a horse": not the hat
    return None


def _on_a_place(a: Attacher) -> bool:
    """Whether the noun phrase after the current ``on`` names no part of the body, no
    clothing and no pronoun (``on his head``, ``on top``, ``on it`` keep the clothing)."""
    ci = a.current
    if ci + 1 >= len(a.chunks) or a.chunks[ci + 1].kind != NP:
        return False
    nxt = a.chunks[ci + 1]
    word = nxt.head.split()[-1].lower() if nxt.head else ""
    return bool(word) and word not in PRONOUNS and nxt.owner is None \
        and a.word(nxt.start) not in POSSESSIVE_PRONOUNS \
        and not lexicon_form(word, OWNED_PART_NOUNS) and not lexicon_form(word, CLOTHING_NOUNS)


_SCENE_PLACES = frozenset({"field", "park", "grass", "beach", "ocean", "sea", "lake", "pasture",
                           "meadow", "snow", "desert", "forest", "woods", "yard", "zoo", "lawn"})


#: things that stand in a scene place themselves (``sitting on a bench in the park``: the
#: bench is in the park)
_SCENE_FIXTURES = frozenset({"bench", "table", "chair", "couch", "sofa", "seat", "stool",
                             "blanket", "towel", "building", "house", "air", "sky", "rock"})


def subject_placed_in_scene(a: Attacher, c: Chunk) -> int | None:
    """``a boy flying a kite on the beach``: a preposition after the object of another
    relation whose own object is a place of the whole scene (a field, a beach, the snow)
    describes that relation's subject."""
    r = _object_relation(a)
    if r is None or c.verb or a.word(c.start) == "of" \
            or (r.end - r.start == 1 and a.word(r.start) == "of"):
        return None
    ci = a.chunks.index(c)
    nxt = a.chunks[ci + 1] if ci + 1 < len(a.chunks) else None
    if nxt is None or nxt.kind != NP or not nxt.head \
            or not lexicon_form(nxt.head.split()[-1], _SCENE_PLACES):
        return None
    near = a.builder.entities[r.object].head
    word = near.split()[-1].lower() if near else ""
    if is_person(near) or is_animal(near) or lexicon_form(word, _SCENE_PLACES) \
            or lexicon_form(word, _SCENE_FIXTURES):
        return None
    return r.subject


#: grounds that hold what is on or in them: a thing placed beside something else beside them
#: is the thing on them (``a cup on the ground near a tree``)
_GROUNDS = frozenset({"ground", "floor", "wall", "street", "road", "sidewalk", "pavement",
                      "air", "sky", "background", "ceiling"})
#: prepositions of relative place that, after such a ground, place the thing on it
_BESIDE_GROUND = frozenset({"near", "by", "beside", "next to", "above", "below",
                            "in front of", "close to", "nearby", "far from", "far away from",
                            "far apart from", "away from", "across from", "adjacent to",
                            "alongside", "to the left of", "to the right of"})


def subject_beside_on_ground(a: Attacher, c: Chunk) -> int | None:
    """``a string on the ground by the meter``, ``a mirror on the wall above the sink``: a
    preposition of relative place right after a ground (the floor, a wall, the street, the
    air) that a preposition placed a thing on or in places that thing: a ground is too
    large to be beside something."""
    r = _object_relation(a)
    if r is None or r.verb or c.verb or a.word(r.start) in ("of", "with") \
            or a.phrase(c.start, c.end) not in _BESIDE_GROUND:
        return None
    head = a.builder.entities[r.object].head
    if not head or not lexicon_form(head.split()[-1], _GROUNDS):
        return None
    return r.subject


#: shapes things stand or lie in (``in a row``, ``in a pile``): a relation after them is the
#: things'
_FORMATION_NOUNS = frozenset({"row", "rows", "line", "lines", "circle", "pile", "piles",
                              "stack", "stacks", "formation", "heap"})


def subject_after_formation(a: Attacher, c: Chunk) -> int | None:
    """``five windows in a row above a bridge``, ``trees in a line behind the house``: a
    relation right after ``in`` and the shape things are in describes the things, not the
    shape."""
    r = _object_relation(a)
    if r is None or r.end - r.start != 1 or a.word(r.start) != "in":
        return None
    head = a.builder.entities[r.object].head
    if not head or head.split()[-1].lower() not in _FORMATION_NOUNS:
        return None
    return r.subject


def subject_of_with_possessed(a: Attacher, c: Chunk) -> int | None:
    """``a group of people on a sidewalk with their phones``: ``with`` before a thing that a
    person's possessive determiner owns (``his``, ``her``, ``their``) describes that
    person, the nearest earlier person or animal that agrees with it, not the nearest
    noun phrase (unless that is clothing the person wears)."""
    ci = a.current
    if c.end - c.start != 1 or a.word(c.start) != "with" or a.next_kind(ci) != NP:
        return None
    pronoun = POSSESSIVE_PRONOUNS.get(a.word(a.chunks[ci + 1].start))
    if pronoun is None or pronoun == "it" or a.last_np == a.worn:
        return None  # "wearing a jersey with his name on the back": the jersey has it
    k = _nearest_living(a, pronoun, len(a.builder.entities))
    return k if k >= 0 and k != a.last_np else None


def nearest_noun_phrase(a: Attacher, c: Chunk) -> int | None:
    """Otherwise the nearest noun phrase before the relation (chains: ``the cup left of the
    plate on the table``)."""
    return a.last_np


def clothing_of_clause_subject(a: Attacher, ci: int, subj: int) -> int:
    """``a man on a bench in a red cap``: ``in`` before clothing that the object of the last
    relation cannot wear gives the clothing to that relation's subject."""
    r = a.last_rel
    if a.prev == NP and r is not None and r.object == subj \
            and _worn_by_subject(a.chunks, ci, a.tokens, a.builder.entities[subj].head):
        return r.subject
    return subj


# --------------------------------------------------------------- other chunks
def copula(a: Attacher, c: Chunk, ci: int) -> bool:
    """A copula keeps the subject of a relative clause (``that is``) or of an object
    relative; after ``and`` (``... and is left of``) it goes on describing the open subject,
    also after a verb left without an object that described another relation's object (``a
    man who has his arms crossed and is wearing a scarf``: the man wears it).
    Before a noun phrase it waits for it as a relation (:func:`complement_of_copula`)."""
    if a.prev == PRON or a.waiting >= 0:
        pass  # keeps the relative-clause subject
    elif a.prev == CONJ and a.last_np >= 0:
        p = a.pending
        if p is not None and p.verb and p.subject == a.pred_subj and a.pred_before >= 0:
            # "who has his hands folded and is wearing a tie": a verb left without an object
            # described the object of the clause's verb; the copula goes on with its subject
            a.pred_subj = a.pred_before
            a.pending = None
        a.ctx_subj = a.pred_subj if a.pred_subj >= 0 else (
            a.last_rel.subject if a.last_rel is not None else a.last_np)
    else:
        a.ctx_subj = -1
    if a.next_kind(ci) == NP and a.waiting < 0 \
            and not (a.fronted is not None and not a.fronted_resolved):
        subj = a.ctx_subj if a.ctx_subj >= 0 else (a.clause_subj if a.clause_subj >= 0
                                                   else a.last_np)
        if subj >= 0:
            a.pending = _Pending(subj, c.start, c.end, True, False)
    return True


def second_relative_clause(a: Attacher, c: Chunk, ci: int) -> bool:
    """``... and that is left of``: a relative pronoun after ``and`` opens a second relative
    clause of the entity the last clause describes."""
    if a.prev == CONJ and a.described >= 0:
        a.antecedent = a.described
        a.ctx_subj = a.antecedent
        return True
    return False


def relative_pronoun(a: Attacher, c: Chunk, ci: int) -> bool:
    """``that / which / who``: the clause describes the noun phrase before it; ``who`` the
    nearest person or animal before it (``a man with dark hair who is wearing a tie``),
    also the owner named inside that phrase (``the man's shirt who is holding a ball``)."""
    a.antecedent = a.last_np
    if a.word(c.start) in ("who", "whom") and a.last_np >= 0:
        entities = a.builder.entities
        if not (is_person(entities[a.last_np].head) or is_animal(entities[a.last_np].head)):
            # from the last entity made: the owner of the phrase comes after it ("the man's
            # shirt who is holding a ball": the man)
            for k in range(len(entities) - 1, -1, -1):
                if is_person(entities[k].head) or is_animal(entities[k].head):
                    a.antecedent = k
                    break
    elif a.last_np >= 0 and a.word(c.start) in ("that", "which") \
            and a.next_kind(ci) == COP and ci + 1 < len(a.chunks):
        a.antecedent = _agreeing_antecedent(a, a.word(a.chunks[ci + 1].start))
    a.ctx_subj = a.antecedent
    return True


def _agreeing_antecedent(a: Attacher, copula: str) -> int:
    """The noun phrase that ``that`` / ``which`` before the copula ``copula`` stands for: the
    one right before it, unless that one is singular and the copula plural (``wires on a
    table that are attached to a computer``: the wires), then the nearest plural one before
    it that the same chain of relations leads to."""
    e = a.last_np
    entities = a.builder.entities
    if copula not in ("are", "were") or is_plural(entities[e].head) or e in a.partners:
        return e
    k = e
    seen = 0
    while k in a.up and seen < 6:
        k, _ = a.up[k]
        if k < 0:
            break
        if is_plural(entities[k].head):
            return k
        seen += 1
    return e


#: conjunctions that join two things as such (their ``and`` relations keep the word)
_COORDINATORS = frozenset({"and", "or", "but", "&", "nor"})


def conjunction(a: Attacher, c: Chunk, ci: int) -> bool:
    """``and``: remember the entity before it and its span (for ``and`` relations).  Other
    conjunctions (``while``, ``as``, ``when``, ``plus``) join clauses or add a thing, no
    relation of the two things: their link has no phrase (``grass in the outfield while the
    infield is dirt``), and a verb still without an object before them has none (``a dog
    waits while the man eats``: the man is the next clause's subject)."""
    a.conj_np = a.last_np
    words = a.phrase(c.start, c.end)
    coordinator = words in _COORDINATORS
    a.conj_clause = words in SUBORDINATORS
    a.conj_span = (c.start, c.end) if coordinator else (c.start, c.start)
    p = a.pending
    if not coordinator and p is not None and p.verb and not p.copula:
        a.warn(f"relation {' '.join(a.tokens[p.start:p.end])!r} has no object; dropped")
        a.pending = None
    return True


def list_comma(a: Attacher, c: Chunk, ci: int) -> bool:
    """A comma right after a noun phrase that is not only attributes (``a dog , a cat and
    a bird``; not ``small , black wheels``) may separate the items of a list: the phrase
    is remembered like one before ``and`` (:func:`_after_list_comma`)."""
    if a.prev == NP and ci > 0 and a.chunks[ci - 1].kind == NP \
            and not a.chunks[ci - 1].attr_only:
        a.comma_np = a.conj_np = a.last_np
        a.conj_span = (c.start, c.end)
    else:
        a.comma_np = -1
    return True


def sentence_end(a: Attacher, c: Chunk, ci: int) -> bool:
    """``.`` ``!`` ``?`` end the sentence: a relation still without an object is dropped
    (with a warning), and the next noun phrase starts a new clause."""
    p = a.pending
    if p is not None:
        a.warn(f"relation {' '.join(a.tokens[p.start:p.end])!r} has no object; dropped")
        a.pending = None
    a.ctx_subj = -1
    a.waiting = -1
    a.pred_subj = -1
    a.reduced = None
    a.prep_relative = None
    if a.clause_subj >= 0:
        a.prev_subj = a.clause_subj
    a.clause_subj = -1
    return True


def there_is(a: Attacher, c: Chunk, ci: int) -> bool:
    """``there is``: the noun phrase after it starts a new clause."""
    a.clause_subj = -1
    return True


def finish(a: Attacher) -> None:
    """At the end of the text: coordinated subjects no relation followed are linked by
    ``and``; a relation without an object, or a sentence-initial relation without a
    subject, is dropped with a warning."""
    for later, earlier in a.partners.items():
        for other in earlier:
            if other not in a.shared:
                a.builder.add_relation(other, later, *a.conj_span)
    p = a.pending
    if p is not None and not p.copula:
        a.warn(f"relation {' '.join(a.tokens[p.start:p.end])!r} (tokens {p.start}-"
               f"{p.end}) has no object; dropped")
    f = a.fronted
    if f is not None and not a.fronted_resolved:
        a.warn(f"relation {' '.join(a.tokens[f[1]:f[2]])!r} opens the text but no "
               f"subject follows; dropped")


#: how a new entity links to the graph, tried in order by :func:`noun_phrase`
NP_LINK_RULES: list[LinkRule] = [
    object_of_sentence_initial_relation,
    complement_of_copula,
    object_of_relation,
    subordinate_clause_subject,
    coordinated_clause,
    coordinated_object,
    coordinated_subject,
    coordinated_noun_phrase,
    subject_of_object_relative,
    subject_after_sentence_initial_relation,
    first_noun_phrase_is_root,
    sentence_subject,
]

#: the subject of a relation phrase, tried in order by :meth:`Attacher.relation_subject`
SUBJECT_RULES: list[SubjectRule] = [
    subject_of_relative_clause,
    subject_of_copula,
    subject_after_aside,
    subject_of_coordinated_relation,
    participle_after_prepositional_object,
    subject_of_finite_verb,
    subject_after_y_on_it,
    subject_of_purpose,
    subject_after_quoted_words,
    subject_after_likeness,
    subject_of_head_before_of,
    worn_over_worn,
    subject_described_after_object,
    subject_placed_in_scene,
    subject_beside_on_ground,
    subject_after_formation,
    subject_of_with_possessed,
    nearest_noun_phrase,
]

#: the rules for each kind of chunk, tried in order until one applies
ATTACH_RULES: dict[int, list[AttachRule]] = {
    NP: [attributes_after_copula, it_of_has_on_it, position_without_whole, colour_after_verb,
         colour_after_in,
         time_after_preposition, manner_of_relation, role_after_posture,
         attribute_after_linking_verb,
         pronoun_object,
         pronoun_subject, noun_phrase],
    REL: [verb_of_prepositional_relative, verb_of_object_relative,
          verb_of_relative_without_pronoun, preposition_before_which, worn_with_on,
          coordinated_relation_phrase, has_y_on_it,
          relation_awaiting_object],
    COP: [copula],
    PRON: [second_relative_clause, relative_pronoun],
    CONJ: [conjunction],
    SOFT: [list_comma],
    HARD: [sentence_end],
    THERE: [there_is],
}
