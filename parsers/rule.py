"""``rule``: a deterministic, spatial-aware parser in pure Python (the default backend).

It needs no model file and parses several thousand sentences a second on one
core.  Two passes over the tokens:

1. **chunking** – the text is cut into noun phrases, relation phrases, copulas,
   relative pronouns, conjunctions and punctuation.  Relation phrases are found
   as the longest match in a token trie of the relation vocabulary
   (:mod:`parsers.lexicon`), so ``"at the left side of"`` or ``"has as a part"``
   are one unit; a verb directly followed by a preposition joins it
   (``"standing in front of"``).  Multi-word nouns of the lexicon
   (``"hair drier"``, ``"teddy bear"``) never split.  A participle the lexicon
   lacks that ends a noun phrase (``a man in a cap laughing``) is left out of
   it; a plural noun that is also a verb form opening the text (``leaves on the
   path``) is a noun; a third-person transitive verb between two nouns is a verb
   without a determiner after it (``the man wears long pants``).
2. **attachment** – every relation gets a subject and an object:

   * ``NP REL NP`` – the relation links the two phrases; a further preposition
     attaches to the nearest noun phrase (chains: ``the cup left of the plate on
     the table``); a participle after the object of a preposition attaches to
     the subject of that preposition (``the man next to the car wearing a hat``);
   * copula – ``The cat is under the laptop`` relates the clause subject;
     the copula and words such as ``located`` are not part of the relation; a
     bare word the lexicon lacks between a copula and an article (``The couch is
     congruent the cat``) is taken as the relation, with a warning;
   * relative clauses – ``that / which / who (is|are)`` make the preceding noun
     phrase the subject; object relatives (``the dog that the man is holding``)
     are turned around;
   * coordination – ``and`` followed by a relation, optionally after ``that`` /
     ``which`` and ``is`` / ``has`` (``and that is above``), attaches to the subject
     of the nearest open clause, i.e. the parent of the noun phrase just before it
     (``the cup that is on the plate that is near the fork and left of the knife``:
     the plate is left of the knife); ``and`` followed by a noun phrase shares the
     previous relation (``left of the plate and the bowl``), or starts a new clause
     linked to the root by an ``and`` relation when a copula follows;
   * comparisons – ``has`` / ``with`` before an attribute comparison (``that has the
     same colour as``, ``with the same shape as``) introduce the clause like a
     copula and stay outside the relation phrase;
   * a sentence-initial relation (``To the left of the plate is a cup``) takes
     the noun phrase after the copula as its subject, and that phrase is the root;
   * annotation conventions of Visual Genome scene graphs
     (:mod:`parsers.conventions`): ``X of Y`` relates Y to X (``the tail of the
     dog``: dog *has* tail; ``a mug of tea``: tea *in* mug, and a following
     preposition relates the mug), clothing after ``in`` (some after ``with``)
     is worn, a passive with ``by`` is turned active, ``full of`` is ``has`` and
     ``laying on`` is ``lying on``; such a relation's phrase is not the text of
     its tokens, so its span is empty, at the place of the words it stands for.
     Clothing after ``in`` that follows a noun that cannot wear it belongs to
     the clause's subject (``a man on a bench in a red cap``), and a relation
     after worn clothing describes the wearer (``a man wearing a cap holding a
     kite``); after a verb's object, ``with`` and ``at`` describe the verb's
     subject;
   * inside a noun phrase, a possessor (``the dog 's tail``, ``the dog's tail``)
     or a whole before a part noun (``the truck doors``) is an entity of its own
     with a ``has`` relation (empty span) to the phrase's head, which stays the
     entity the phrase stands for; a noun of quantity or depiction before ``of``
     (``two piles of leaves``, ``a photo of a dog``) leaves the head to the noun
     after ``of``, and a place noun after a relation joins it (``along the side
     of``);
   * ``X has Y on it`` and ``X with Y on it`` relate Y to X (``the wall has a clock
     on it``: clock *on* wall); ``it`` is no entity of its own.

Otherwise the first noun phrase is the referent and the root.

The result is always a valid tree.  What the parser could not account for is
reported as warnings (``RuleParser.analyse(text).warnings`` or
``parser.last_warnings`` after ``parse``): relations without an object are
dropped, noun phrases no relation reaches are attached to the closest earlier
entity with an empty relation (empty text and an empty span at the phrase), and
a verb the lexicon does not know may be guessed from its ending.  Text without
any word (empty, spaces, punctuation only) raises :class:`~parsers.base.ParseError`;
text with words but no noun phrase becomes a single entity covering all tokens.
"""

from __future__ import annotations

from collections.abc import Iterable

from parsers.base import (
    BaseParser,
    GraphBuilder,
    ParseError,
    ParseResult,
    has_words,
    single_entity_graph,
    tokenize,
)
from parsers.conventions import HAS, WEAR, is_possessive, possessor, relation_convention
from parsers.lexicon import (
    ADVERBS,
    ATTRIBUTE_WORDS,
    AUXILIARIES,
    CLOTHING_NOUNS,
    COMPARISON_TRIE,
    COMPOUND_NOUNS,
    COMPOUND_TRIE,
    CONJUNCTIONS,
    CONTAINER_NOUNS,
    COPULAS,
    DETERMINERS,
    HOLDER_NOUNS,
    LIGHT_VERBS,
    LOCATIVE_FILLERS,
    NEGATIONS,
    PART_NOUNS,
    PARTICIPLE_NOUNS,
    PARTITIVE_NOUNS,
    POSTURE_VERB_FORMS,
    PREPOSITION_PHRASES,
    REGION_NOUNS,
    RELATION_TRIE,
    RELATIVE_PRONOUNS,
    SURFACE_NOUNS,
    VERB_FORMS,
    WEAK_VERB_FORMS,
    WEARER_NOUNS,
    Trie,
    lexicon_form,
)

__all__ = ["RuleParser"]

# chunk kinds
NP, REL, COP, PRON, CONJ, SOFT, HARD, THERE = range(8)

_HARD_PUNCT = frozenset({".", "!", "?"})
_NEG_COPULAS = frozenset({"isn't", "aren't", "wasn't", "weren't", "isn’t", "aren’t"})
_PICTURE_NOUNS = frozenset({"photo", "picture", "image", "photograph", "view", "closeup",
                            "close-up", "shot", "snapshot"})
_OBJECT_PRONOUNS = frozenset({"him", "her", "it", "them", "me", "us", "you", "one"})
_VERB_ENDINGS = ("s", "ed", "ing")
#: third-person forms of transitive verbs; between two nouns they are the verb (``the man
#: wears long pants``) even without a determiner after them
_TRANSITIVE_S = frozenset({"wears", "holds", "carries", "eats", "rides", "drinks", "uses",
                           "watches", "pulls", "pushes", "throws", "catches", "kicks", "hits",
                           "swings", "feeds", "pets", "chases", "follows", "hugs", "kisses",
                           "bites", "licks", "sniffs", "brushes", "washes", "crosses"})
_WEAR_FORMS = frozenset({"wearing", "wears", "wear", "wore", "dressed"})
_HOLDERS = CONTAINER_NOUNS | SURFACE_NOUNS | HOLDER_NOUNS
_COUNT_WORDS = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                          "ten", "many", "several", "few", "most", "some", "all", "both",
                          "each", "none", "any"})
#: endings of adjectives; a word with one of them does not name a whole before a part noun
_ADJECTIVE_ENDINGS = ("ed", "ing", "ly", "ful", "ous", "ish", "less", "able", "ible", "ive")
_Y_NOUNS = frozenset({"baby", "boy", "toy", "body", "lady", "pony", "puppy", "kitty", "teddy",
                      "city", "bay", "trolley", "jockey", "monkey", "turkey", "donkey", "key",
                      "subway", "railway", "highway", "doggy", "guy", "family", "factory",
                      "bakery", "library", "gallery", "balcony", "chimney", "lorry", "ferry"})


class _Chunk:
    __slots__ = ("kind", "start", "end", "head", "modifiers", "attr_only", "verb", "neg_start",
                 "owner")

    def __init__(self, kind: int, start: int, end: int) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.head = ""
        self.modifiers: list[str] = []
        self.attr_only = False
        self.verb = False
        self.neg_start = start
        # a possessor or whole named inside a noun phrase ("the man 's hat", "the clock
        # hands"): (start, end, head, modifiers, position of the "has" relation)
        self.owner: tuple[int, int, str, list[str], int] | None = None


class RuleParser(BaseParser):
    """Deterministic rule-based parser; see the module docstring for the grammar.

    Args:
        extra_relations: more relation phrases to recognise (multi-word allowed).
        extra_compounds: more multi-word nouns to keep whole.
    """

    name = "rule"

    def __init__(self, extra_relations: Iterable[str] = (),
                 extra_compounds: Iterable[str] = ()) -> None:
        super().__init__()
        extra_relations = list(extra_relations)
        extra_compounds = list(extra_compounds)
        self._rel_trie = (Trie(list(PREPOSITION_PHRASES) + extra_relations)
                          if extra_relations else RELATION_TRIE)
        self._compound_trie = (Trie(COMPOUND_NOUNS + extra_compounds)
                               if extra_compounds else COMPOUND_TRIE)

    # ------------------------------------------------------------------ api
    def analyse(self, text: str) -> ParseResult:
        if not isinstance(text, str):
            raise ParseError(f"expected a string to parse, got {type(text).__name__}")
        tokens = tokenize(text)
        if not has_words(tokens):
            raise ParseError(f"nothing to parse in {text[:60]!r}: the text holds no word")
        lw = [t.lower() for t in tokens]
        warnings: list[str] = []
        chunks = self._chunk(tokens, lw, warnings)
        if not any(c.kind == NP for c in chunks):
            warnings.append("no noun phrase found; the whole text is one entity")
            return ParseResult(single_entity_graph(tokens, text), warnings)
        builder = GraphBuilder(tokens, text)
        builder.warnings = warnings
        root = self._attach(chunks, tokens, builder)
        graph = builder.build(root)
        return ParseResult(graph, builder.warnings)

    # ------------------------------------------------------------- chunking
    def _relation_end(self, lw: list[str], i: int, predicate: bool) -> tuple[int, bool]:
        """End of the relation phrase starting at ``i`` (``i`` if none) and whether it is a verb.

        ``predicate`` tells that a verb is expected here (after a copula or a relative
        pronoun); elsewhere a verb form that is also a common noun (``faces``,
        ``cover``) counts as a verb only before a determiner or a preposition.
        """
        end = self._rel_trie.longest(lw, i)
        w = lw[i]
        if w in VERB_FORMS:
            n = len(lw)
            nxt = lw[i + 1] if i + 1 < n else ""
            if not predicate and w in WEAK_VERB_FORMS:
                possessed = i > 0 and lw[i - 1].endswith(("'s", "’s", "s'"))
                ok = not possessed and (
                    nxt in DETERMINERS or nxt in _OBJECT_PRONOUNS or nxt in _COUNT_WORDS
                    or nxt.isdigit() or nxt in PARTITIVE_NOUNS
                    or (w == "have" and i > 0 and lw[i - 1].endswith("s"))
                    or (w in _TRANSITIVE_S and i > 0 and lw[i - 1].isalpha()
                        and lw[i - 1] not in DETERMINERS and nxt.isalpha()
                        and self._rel_trie.longest(lw, i + 1) == i + 1)
                    or (w in POSTURE_VERB_FORMS and self._rel_trie.longest(lw, i + 1) > i + 1))
            else:
                ok = True
            if ok:
                k = i + 1
                while k < n and lw[k] in ADVERBS and self._rel_trie.longest(lw, k) == k:
                    k += 1
                prep_end = self._rel_trie.longest(lw, k) if k < n else k
                verb_end = prep_end if prep_end > k else i + 1
                if verb_end > end:
                    return verb_end, True
            return end, end > i
        return end, False

    def _starts_relation(self, lw: list[str], i: int) -> bool:
        n = len(lw)
        while i < n and (lw[i] in ADVERBS or lw[i] in LOCATIVE_FILLERS) \
                and self._rel_trie.longest(lw, i) == i:
            i += 1
        if i >= n:
            return False
        return self._rel_trie.longest(lw, i) > i or lw[i] in VERB_FORMS

    def _relation_follows(self, lw: list[str], i: int) -> bool:
        """Whether a relation phrase and its object start at ``i`` (``and near the box``),
        which tells a coordinated clause from coordinated attributes (``black and white``)."""
        end = self._rel_trie.longest(lw, i)
        return end > i and end < len(lw) and (lw[end] in DETERMINERS
                                              or lw[end] in _OBJECT_PRONOUNS)

    def _opens_clause(self, lw: list[str], i: int) -> bool:
        """Whether the words at ``i`` can follow a relative pronoun (``and that is``)."""
        if i >= len(lw):
            return False
        w = lw[i]
        return (w in COPULAS or w in _NEG_COPULAS or w in AUXILIARIES or w in LIGHT_VERBS
                or (w in VERB_FORMS and w not in WEAK_VERB_FORMS))

    def _chunk(self, tokens: list[str], lw: list[str], warnings: list[str]) -> list[_Chunk]:
        chunks: list[_Chunk] = []
        n = len(tokens)
        np_start = -1          # start of the open noun phrase, -1 if none
        np_det_end = -1        # end of its determiners
        np_content = False     # whether it holds a content word yet
        neg_at = -1            # index of a negation right before the next relation
        compound = self._compound_trie
        compound_first = compound.root
        rel_first = self._rel_trie.root

        def close_np(end: int) -> None:
            nonlocal np_start, np_content
            if np_start < 0:
                return
            # determiners only ("this", "that"): they are words, keep them as a phrase
            self._emit_np(chunks, tokens, lw, np_start, np_det_end if np_content else end, end,
                          warnings)
            np_start = -1
            np_content = False

        def prev_kind() -> int:
            return chunks[-1].kind if chunks else -1

        i = 0
        while i < n:
            w = lw[i]
            first = w[:1]
            if not (first.isalnum() or first == "_"):
                if w in ("'s", "’s") and np_start >= 0 and np_content and i + 1 < n \
                        and lw[i + 1][:1].isalnum() and not self._starts_relation(lw, i + 1):
                    i += 1  # a detached possessive stays in its noun phrase: the man 's hat
                    continue
                close_np(i)
                if w in _HARD_PUNCT:
                    chunks.append(_Chunk(HARD, i, i + 1))
                elif w == "&":
                    chunks.append(_Chunk(CONJ, i, i + 1))
                else:
                    chunks.append(_Chunk(SOFT, i, i + 1))
                neg_at = -1
                i += 1
                continue
            in_np = np_start >= 0
            # "a photo of" at the start of a sentence is not part of the description
            if not in_np and w in ("a", "an", "the") and i + 2 < n \
                    and lw[i + 1] in _PICTURE_NOUNS and lw[i + 2] in ("of", "showing", "with") \
                    and prev_kind() in (-1, HARD):
                i += 3
                continue
            # "there is / there are" opening a clause
            if not in_np and w == "there" and i + 1 < n and lw[i + 1] in COPULAS:
                chunks.append(_Chunk(THERE, i, i + 2))
                i += 2
                continue
            # partitive "a pair of scissors" and attribute coordination "black and white"
            if in_np and np_content:
                if w == "of" and i + 1 < n and lw[i + 1][:1].isalnum() \
                        and self._partitive(lw, np_det_end, i):
                    i += 1
                    continue
                if w in ("and", "or") and lw[i - 1] in ATTRIBUTE_WORDS and i + 1 < n \
                        and lw[i + 1] in ATTRIBUTE_WORDS and i + 2 < n \
                        and lw[i + 2] not in CONJUNCTIONS \
                        and not self._relation_follows(lw, i + 1):
                    i += 1
                    continue
            # multi-word nouns stay whole
            c_end = compound.longest(lw, i) if w in compound_first else i
            if c_end > i + 1:
                if not in_np:
                    np_start, np_det_end = i, i
                np_content = True
                i = c_end
                continue
            pk = prev_kind()
            # adverbs before a relation, and fillers after a copula, are not part of it
            if (w in ADVERBS or (w in LOCATIVE_FILLERS and pk == COP and not in_np)) \
                    and not (in_np and not np_content) \
                    and self._rel_trie.longest(lw, i) == i and self._starts_relation(lw, i + 1):
                close_np(i)
                i += 1
                continue
            # a light verb before an attribute comparison ("that has the same colour as",
            # "with the same shape as") introduces the clause, like a copula
            if w in LIGHT_VERBS and neg_at < 0 and not (in_np and not np_content):
                c_end = COMPARISON_TRIE.longest(lw, i + 1)
                if c_end > i + 1 and self._rel_trie.longest(lw, i + 1) == c_end:
                    close_np(i)
                    i += 1
                    continue
            # relation phrases (not right after a bare determiner: "the on switch"); a plural
            # noun that is also a verb form opening the text is a noun ("leaves on a branch")
            if not (in_np and not np_content) and (w in rel_first or w in VERB_FORMS) \
                    and not (not in_np and pk in (-1, HARD) and w in WEAK_VERB_FORMS
                             and w.endswith("s") and w not in rel_first):
                end, is_verb = self._relation_end(lw, i, not in_np and pk in (COP, PRON))
                if end > i:
                    end = self._region_end(lw, end)
                    close_np(i)
                    chunk = _Chunk(REL, i, end)
                    chunk.verb = is_verb
                    chunk.neg_start = neg_at if neg_at >= 0 else i
                    chunks.append(chunk)
                    neg_at = -1
                    i = end
                    continue
            if (w in COPULAS or w in _NEG_COPULAS
                    or (w in AUXILIARIES and i + 1 < n
                        and (lw[i + 1] in COPULAS or lw[i + 1] in NEGATIONS
                             or lw[i + 1] in VERB_FORMS))
                    or (w in ("has", "have", "had") and i + 1 < n and lw[i + 1] == "been")) \
                    and not (in_np and not np_content):
                if w == "'s" and in_np and np_content and not self._starts_relation(lw, i + 1):
                    np_content = True  # a detached possessive: the man 's hat
                    i += 1
                    continue
                close_np(i)
                if chunks and chunks[-1].kind == COP and chunks[-1].end == i:
                    chunks[-1].end = i + 1
                else:
                    chunks.append(_Chunk(COP, i, i + 1))
                neg_at = i if w in _NEG_COPULAS else -1
                i += 1
                continue
            if w in NEGATIONS:
                close_np(i)
                neg_at = i if neg_at < 0 else neg_at
                i += 1
                continue
            if w in RELATIVE_PRONOUNS and (w != "that" or (in_np and np_content)
                                            or prev_kind() == NP
                                            or (prev_kind() == CONJ and not in_np
                                                and self._opens_clause(lw, i + 1))):
                close_np(i)
                chunks.append(_Chunk(PRON, i, i + 1))
                i += 1
                continue
            if w in CONJUNCTIONS:
                close_np(i)
                chunks.append(_Chunk(CONJ, i, i + 1))
                i += 1
                continue
            if w == "as" and lw[i + 1:i + 3] == ["well", "as"]:
                close_np(i)
                chunks.append(_Chunk(CONJ, i, i + 3))
                i += 3
                continue
            if w in DETERMINERS or w == "that":
                if in_np and np_content and lw[i - 1] == "of":
                    i += 1  # a partitive phrase goes on: "two of the buildings"
                    continue
                if in_np and np_content:
                    self._maybe_peel_verb(chunks, tokens, lw, np_start, np_det_end, i, warnings)
                    np_start = -1
                if np_start < 0:
                    np_start, np_det_end, np_content = i, i + 1, False
                else:
                    np_det_end = i + 1
                i += 1
                continue
            # an unknown participle before a preposition ("a man sliding on snow", "a plane
            # is going down the runway") is a verb joined to that preposition
            if ((in_np and np_content) or (not in_np and pk in (COP, PRON))) \
                    and self._is_participle(lw, i):
                end = self._rel_trie.longest(lw, i + 1)
                if end > i + 1 and end < n and lw[end][:1].isalnum():
                    close_np(i)
                    chunk = _Chunk(REL, i, end)
                    chunk.verb = True
                    chunk.neg_start = neg_at if neg_at >= 0 else i
                    chunks.append(chunk)
                    neg_at = -1
                    warnings.append(f"guessed that {tokens[i]!r} (token {i}) is a verb")
                    i = end
                    continue
            # a content word
            if np_start < 0:
                np_start, np_det_end = i, i
            np_content = True
            i += 1
        close_np(n)
        return chunks

    @staticmethod
    def _describes_subject(word: str, verb: bool, after_clothing: bool,
                           after_verb: int) -> bool:
        """Whether a relation starting with ``word`` after the object of another relation
        describes that relation's subject: after worn clothing, anything but ``with`` and
        ``on`` (``a man wearing a cap holding a kite``); after a verb's object, ``with`` and
        ``at`` (``a boy hitting a ball with a bat``)."""
        if after_clothing:
            return word not in ("with", "on")
        return bool(after_verb) and not verb and word in ("with", "at")

    @staticmethod
    def _worn_by_subject(chunks: list[_Chunk], ci: int, tokens: list[str], head: str) -> bool:
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
        return not lexicon_form(word, WEARER_NOUNS) and not lexicon_form(word, CLOTHING_NOUNS)

    @staticmethod
    def _holds_contents(head: str) -> bool:
        """Whether ``head`` is a container, plate or holder (``a mug of tea``)."""
        word = head.split()[-1] if head else ""
        return lexicon_form(word, _HOLDERS)

    @staticmethod
    def _has_on_it(chunks: list[_Chunk], ci: int, tokens: list[str]) -> bool:
        """Whether the relation chunk ``ci`` is ``has`` or ``with`` in ``X has Y PREP it``
        (``the wall has a clock on it``, ``a wall with a clock on it``), where ``it`` is X and
        the relation is between Y and X."""
        c = chunks[ci]
        if c.end - c.start != 1 \
                or tokens[c.start].lower() not in ("has", "have", "had", "with") \
                or ci + 3 >= len(chunks):
            return False
        y, rel, it = chunks[ci + 1], chunks[ci + 2], chunks[ci + 3]
        return (y.kind == NP and rel.kind == REL and it.kind == NP and it.end - it.start == 1
                and tokens[it.start].lower() in ("it", "them")
                and (ci + 4 == len(chunks) or chunks[ci + 4].kind in (HARD, SOFT, CONJ)))

    @staticmethod
    def _partitive(lw: list[str], det_end: int, i: int) -> bool:
        """Whether the ``of`` at ``i`` follows a noun of quantity or of depiction that leaves
        the head to the noun after ``of`` (``a pair of scissors``, ``two large piles of
        leaves``, ``two of the buildings``, ``a picture of a cat``)."""
        prev = lw[i - 1]
        if prev in _COUNT_WORDS or prev.isdigit():
            return i - 1 == det_end and i + 1 < len(lw) and lw[i + 1] in DETERMINERS
        if prev not in PARTITIVE_NOUNS:
            return False
        return all(lw[k] in ATTRIBUTE_WORDS or lw[k] in ADVERBS or lw[k].isdigit()
                   for k in range(det_end, i - 1))

    @staticmethod
    def _region_end(lw: list[str], end: int) -> int:
        """End of a relation phrase ending at ``end``, extended over a place noun and ``of``
        (``along`` + ``the side of``, ``climbing`` + ``the edge of``)."""
        n = len(lw)
        j = end + 1 if end < n and lw[end] in ("the", "a", "an") else end
        if j + 2 < n and lw[j] in REGION_NOUNS and lw[j + 1] == "of" and lw[end - 1] != "of" \
                and lw[j + 2][:1].isalnum():
            return j + 2
        return end

    @staticmethod
    def _is_participle(lw: list[str], i: int) -> bool:
        """Whether ``lw[i]`` looks like a participle the lexicon does not know."""
        w = lw[i]
        if w in PARTICIPLE_NOUNS or w in ATTRIBUTE_WORDS or not w.isalpha():
            return False
        if w.endswith("ing"):
            stem = w[:-3]
        elif w.endswith("ed"):
            stem = w[:-2]
        else:
            return False
        return len(stem) >= 3 and any(ch in "aeiouy" for ch in stem)

    def _maybe_peel_verb(self, chunks: list[_Chunk], tokens: list[str], lw: list[str],
                         start: int, det_end: int, end: int, warnings: list[str]) -> None:
        """Close the noun phrase ``start:end``; a last word that looks like an unknown verb
        (``the man juggles the balls``) becomes a relation, with a warning."""
        last = lw[end - 1]
        # a bare word between a copula and an article ("is congruent the cat") can only
        # be a relation the lexicon lacks (an adjective used as a preposition)
        if (end - start == 1 and det_end == start and chunks and chunks[-1].kind == COP
                and chunks[-1].end == start and end < len(lw) and lw[end] in ("the", "a", "an")
                and last not in ATTRIBUTE_WORDS and last not in ADVERBS):
            chunks.append(_Chunk(REL, start, end))
            warnings.append(f"guessed that {tokens[start]!r} (token {start}) is a relation "
                            f"between two noun phrases")
            return
        content = lw[det_end:end - 1]
        if (len(content) >= 1 and last.endswith(_VERB_ENDINGS) and last not in ATTRIBUTE_WORDS
                and any(w not in ATTRIBUTE_WORDS for w in content)
                and self._compound_trie.longest(lw, end - 2) != end):
            self._emit_np(chunks, tokens, lw, start, det_end, end - 1, warnings)
            chunk = _Chunk(REL, end - 1, end)
            chunk.verb = True
            chunks.append(chunk)
            warnings.append(f"guessed that {tokens[end - 1]!r} (token {end - 1}) is a verb "
                            f"relating two noun phrases")
            return
        self._emit_np(chunks, tokens, lw, start, det_end, end, warnings)

    def _emit_np(self, chunks: list[_Chunk], tokens: list[str], lw: list[str], start: int,
                 det_end: int, end: int, warnings: list[str]) -> None:
        if end <= start:
            return
        det_end = min(max(det_end, start), end)
        # a participle the lexicon does not know ending the phrase is an intransitive verb
        # (``a man in a black shirt laughing``), not its head
        while end - 1 > det_end and lw[end - 1].endswith("ing") \
                and self._is_participle(lw, end - 1) and lw[end - 2] not in ATTRIBUTE_WORDS \
                and self._compound_trie.longest(lw, end - 2) != end:
            end -= 1
        chunk = _Chunk(NP, start, end)
        if det_end == end:  # determiners only ("this", "that"): the last one is the head
            chunk.head = tokens[end - 1]
            chunks.append(chunk)
            return
        # head: a multi-word noun of the lexicon ending the phrase, else the last word;
        # in a partitive phrase ("a pair of scissors") the noun after "of"
        head_start = end - 1
        for k in range(det_end, end - 1):
            if self._compound_trie.longest(lw, k) == end:
                head_start = k
                break
        chunk.head = " ".join(tokens[head_start:end])
        chunk.modifiers = [tokens[k] for k in range(det_end, head_start)
                           if lw[k] not in ("of", "and", "or")]
        self._split_owner(chunk, tokens, lw, det_end, head_start)
        chunk.attr_only = det_end == start and all(
            lw[k] in ATTRIBUTE_WORDS or lw[k] in ADVERBS or lw[k] in ("and", "or")
            for k in range(start, end))
        chunks.append(chunk)

    @staticmethod
    def _split_owner(chunk: _Chunk, tokens: list[str], lw: list[str], det_end: int,
                     head_start: int) -> None:
        """Move a possessor (``the man 's hat``, ``the girl's dress``) or a whole before a
        part noun (``the clock hands``) out of the noun phrase ``chunk`` into its owner."""
        start, end = chunk.start, chunk.end
        for k in range(head_start - 1, start - 1, -1):
            if lw[k] == "of" or not is_possessive(lw[k]):
                continue
            if lw[k] in ("'s", "’s"):
                if k - 1 < max(det_end, start) or not lw[k - 1][:1].isalnum():
                    return
                owner_end, owner_head = k, tokens[k - 1]
                owner_first = k - 1
            else:
                owner_end, owner_head = k + 1, possessor(tokens[k])
                owner_first = k
            mods = [tokens[j] for j in range(det_end, owner_first) if lw[j] not in ("and", "or")]
            chunk.owner = (start, owner_end, owner_head, mods, k + 1)
            chunk.start = k + 1
            chunk.modifiers = [tokens[j] for j in range(k + 1, head_start)
                               if lw[j] not in ("of", "and", "or")]
            chunk.attr_only = False
            return
        k = head_start - 1
        if head_start != end - 1 or k < det_end or not lexicon_form(lw[end - 1], PART_NOUNS) \
                or "of" in lw[start:end]:
            return
        w = lw[k]
        if (not w.isalpha() or w in ATTRIBUTE_WORDS or w in ADVERBS or w in DETERMINERS
                or w in PART_NOUNS or w in _COUNT_WORDS
                or (w.endswith(_ADJECTIVE_ENDINGS) and w not in PARTICIPLE_NOUNS)
                or (w.endswith("y") and w not in _Y_NOUNS)):
            return
        mods = [tokens[j] for j in range(det_end, k) if lw[j] not in ("of", "and", "or")]
        chunk.owner = (start, k + 1, tokens[k], mods, k + 1)
        chunk.start = k + 1
        chunk.modifiers = []
        chunk.attr_only = False

    # ----------------------------------------------------------- attachment
    def _attach(self, chunks: list[_Chunk], tokens: list[str], builder: GraphBuilder) -> int:
        root = -1
        last_np = -1            # most recent entity
        clause_subj = -1        # subject of the current clause
        ctx_subj = -1           # subject named by a relative pronoun
        antecedent = -1         # noun phrase a relative pronoun refers to
        waiting = -1            # subject of an object relative clause awaiting its verb
        pending: list[int] | None = None   # [subject, start, end, is_copula, is_verb]
        last_rel: list[int] | None = None  # [subject, object, start, end, is_verb]
        described = -1          # entity the last relation describes (its subject, or the
        #                         antecedent of an object relative clause)
        fronted: list[int] | None = None   # [object, start, end] of a sentence-initial relation
        fronted_resolved = False
        conj_np, conj_span = -1, (0, 0)
        # coordinated subjects ("a dog and a cat on a couch"): the later conjunct -> the
        # earlier ones, which share its relations; an "and" relation only if none follows
        partners: dict[int, list[int]] = {}
        shared: set[int] = set()
        has_it = -1             # subject of "X has Y on it", which "it" stands for
        worn = [-1]             # object of the last relation if it is worn clothing
        prev = -1
        warn = builder.warnings.append
        nchunks = len(chunks)

        def next_kind(ci: int) -> int:
            return chunks[ci + 1].kind if ci + 1 < nchunks else -1

        def relate(subj: int, obj: int, start: int, end: int) -> None:
            # the annotation conventions of parsers.conventions (X of Y -> Y has X, ...)
            words = [t.lower() for t in tokens[start:end]]
            conv = relation_convention(words, builder.entities[subj].head,
                                       builder.entities[obj].head)
            worn[0] = obj if (conv is not None and conv[0] == WEAR) or (
                words and words[0] in _WEAR_FORMS) else -1
            if conv is None:
                builder.add_relation(subj, obj, start, end)
            else:
                text, swap = conv
                if swap:
                    subj, obj = obj, subj
                builder.add_relation(subj, obj, start, start, text=text)

        for ci, c in enumerate(chunks):
            kind = c.kind
            if kind == NP:
                if pending is not None and pending[3] and c.attr_only and pending[0] >= 0:
                    builder.entities[pending[0]].modifiers.extend(
                        tokens[k] for k in range(c.start, c.end)
                        if tokens[k].lower() not in ("and", "or"))
                    pending = None
                    prev = NP
                    continue
                if has_it >= 0 and pending is not None and not pending[3] and pending[0] >= 0 \
                        and c.end - c.start == 1 and tokens[c.start].lower() in ("it", "them"):
                    relate(pending[0], has_it, pending[1], pending[2])
                    last_rel = [pending[0], has_it, pending[1], pending[2], pending[4]]
                    pending = None
                    has_it = -1
                    prev = NP
                    continue
                e = builder.add_entity(c.start, c.end, c.head, c.modifiers)
                if c.owner is not None:
                    os_, oe, ohead, omods, at = c.owner
                    owner = builder.add_entity(os_, oe, ohead, omods)
                    builder.add_relation(owner, e, at, at, text=HAS)
                if pending is not None:
                    subj, ps, pe = pending[0], pending[1], pending[2]
                    if subj < 0:
                        fronted = [e, ps, pe]
                    elif pending[3]:
                        builder.add_relation(subj, e, ps, pe)
                    else:
                        for other in partners.get(subj, ()):
                            relate(other, e, ps, pe)
                            shared.add(other)
                        relate(subj, e, ps, pe)
                    if subj >= 0:
                        last_rel = [subj, e, ps, pe, pending[4]]
                        described = subj
                    pending = None
                elif prev == CONJ and conj_np >= 0:
                    nk = next_kind(ci)
                    if nk == COP:
                        builder.add_relation(root if root >= 0 else 0, e, *conj_span)
                        clause_subj = e
                        ctx_subj = -1
                    elif last_rel is not None and last_rel[1] == conj_np:
                        relate(last_rel[0], e, last_rel[2], last_rel[3])
                    elif last_rel is None and nk == REL:
                        partners[e] = [*partners.pop(conj_np, ()), conj_np]
                    else:
                        builder.add_relation(conj_np, e, *conj_span)
                elif prev == PRON and antecedent >= 0:
                    waiting = e
                elif fronted is not None and not fronted_resolved and prev in (COP, SOFT, THERE):
                    builder.add_relation(e, fronted[0], fronted[1], fronted[2])
                    fronted_resolved = True
                    root = e
                    clause_subj = e
                elif root < 0:
                    root = e
                    clause_subj = e
                elif prev in (HARD, THERE) or (prev == -1):
                    clause_subj = e
                if root < 0 and fronted is None:
                    root = e
                if clause_subj < 0:
                    clause_subj = e
                last_np = e
                prev = NP
            elif kind == REL:
                start = c.neg_start
                if waiting >= 0:
                    builder.add_relation(waiting, antecedent, start, c.end)
                    last_rel = [waiting, antecedent, start, c.end, int(c.verb)]
                    described = antecedent
                    waiting = -1
                    antecedent = -1
                    ctx_subj = -1
                    prev = REL
                    pending = None
                    continue
                if pending is not None and not pending[3]:
                    pending[2] = c.end  # "next to and to the left of": one relation phrase
                    prev = REL
                    continue
                if prev == PRON or (prev == COP and ctx_subj >= 0):
                    subj = ctx_subj
                elif prev == COP:
                    subj = clause_subj if clause_subj >= 0 else last_np
                elif prev in (CONJ, SOFT):
                    subj = last_rel[0] if last_rel is not None else last_np
                elif prev == NP and c.verb and last_rel is not None and last_rel[1] == last_np \
                        and not last_rel[4]:
                    subj = last_rel[0]  # participle after a prepositional object
                elif prev == NP and last_rel is not None and last_rel[1] == last_np \
                        and last_rel[3] - last_rel[2] == 1 \
                        and tokens[last_rel[2]].lower() == "of":
                    # "a mug of tea on the desk", "a ball of yarn on a table": the head
                    # (the mug, the ball) carries the relation, as it is the root
                    subj = last_rel[0]
                elif prev == NP and last_rel is not None and last_rel[1] == last_np \
                        and self._describes_subject(tokens[c.start].lower(), c.verb,
                                                    worn[0] == last_np, last_rel[4]):
                    subj = last_rel[0]  # "a man in a cap holding a kite": the man holds it
                else:
                    subj = last_np
                if pending is not None and pending[3]:
                    pending = None  # "is" followed by a relation: the copula is not a relation
                if prev == NP and last_rel is not None and last_rel[1] == subj \
                        and self._worn_by_subject(chunks, ci, tokens, builder.entities[subj].head):
                    subj = last_rel[0]  # "a man on a bench in a red hat": the man wears it
                if subj >= 0 and self._has_on_it(chunks, ci, tokens):
                    # "the rock has moss on it": moss on the rock, no "has" relation
                    has_it = subj
                    pending = None
                    ctx_subj = -1
                    prev = REL
                    continue
                pending = [subj, start, c.end, 0, int(c.verb)]
                ctx_subj = -1
                prev = REL
            elif kind == COP:
                if prev == PRON:
                    pass  # keeps the relative-clause subject
                elif waiting >= 0:
                    pass
                elif prev == CONJ and last_np >= 0:
                    # "... and is left of": the clause goes on describing the open subject
                    ctx_subj = last_rel[0] if last_rel is not None else last_np
                else:
                    ctx_subj = -1
                nk = next_kind(ci)
                if nk == NP and waiting < 0 and not (fronted is not None and not fronted_resolved):
                    subj = ctx_subj if ctx_subj >= 0 else (clause_subj if clause_subj >= 0
                                                           else last_np)
                    if subj >= 0:
                        pending = [subj, c.start, c.end, 1, 0]
                prev = COP
            elif kind == PRON:
                if prev == CONJ and described >= 0:
                    # "... and that is left of": a second relative clause of the entity
                    # the last clause describes
                    antecedent = described
                else:
                    antecedent = last_np
                ctx_subj = antecedent
                prev = PRON
            elif kind == CONJ:
                conj_np = last_np
                conj_span = (c.start, c.end)
                prev = CONJ
            elif kind == SOFT:
                prev = SOFT if prev != CONJ else CONJ
            elif kind == HARD:
                if pending is not None:
                    warn(f"relation {' '.join(tokens[pending[1]:pending[2]])!r} has no object; "
                         f"dropped")
                    pending = None
                ctx_subj = -1
                waiting = -1
                clause_subj = -1
                prev = HARD
            elif kind == THERE:
                clause_subj = -1
                prev = THERE
        for later, earlier in partners.items():  # no relation followed: linked by "and"
            for other in earlier:
                if other not in shared:
                    builder.add_relation(other, later, *conj_span)
        if pending is not None and not pending[3]:
            warn(f"relation {' '.join(tokens[pending[1]:pending[2]])!r} (tokens {pending[1]}-"
                 f"{pending[2]}) has no object; dropped")
        if fronted is not None and not fronted_resolved:
            warn(f"relation {' '.join(tokens[fronted[1]:fronted[2]])!r} opens the text but no "
                 f"subject follows; dropped")
        return root if root >= 0 else 0
