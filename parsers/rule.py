"""``rule``: a deterministic, spatial-aware parser in pure Python (the default backend).

It needs no model file and parses several thousand sentences a second on one
core.  Two passes over the tokens:

1. **chunking** – the text is cut into noun phrases, relation phrases, copulas,
   relative pronouns, conjunctions and punctuation.  Relation phrases are found
   as the longest match in a token trie of the relation vocabulary
   (:mod:`parsers.lexicon`), so ``"at the left side of"`` or ``"has as a part"``
   are one unit; a verb directly followed by a preposition joins it
   (``"standing in front of"``).  Multi-word nouns of the lexicon
   (``"hair drier"``, ``"teddy bear"``) never split.
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
     the noun phrase after the copula as its subject, and that phrase is the root.

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
from parsers.lexicon import (
    ADVERBS,
    ATTRIBUTE_WORDS,
    AUXILIARIES,
    COMPARISON_TRIE,
    COMPOUND_NOUNS,
    COMPOUND_TRIE,
    CONJUNCTIONS,
    COPULAS,
    DETERMINERS,
    LIGHT_VERBS,
    LOCATIVE_FILLERS,
    NEGATIONS,
    PARTICIPLE_NOUNS,
    PARTITIVE_NOUNS,
    POSTURE_VERB_FORMS,
    PREPOSITION_PHRASES,
    RELATION_TRIE,
    RELATIVE_PRONOUNS,
    VERB_FORMS,
    WEAK_VERB_FORMS,
    Trie,
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


class _Chunk:
    __slots__ = ("kind", "start", "end", "head", "modifiers", "attr_only", "verb", "neg_start")

    def __init__(self, kind: int, start: int, end: int) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.head = ""
        self.modifiers: list[str] = []
        self.attr_only = False
        self.verb = False
        self.neg_start = start


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
                    nxt in DETERMINERS or nxt in _OBJECT_PRONOUNS
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
                if w == "of" and lw[i - 1] in PARTITIVE_NOUNS and i - 1 == np_det_end \
                        and i + 1 < n and lw[i + 1][:1].isalnum():
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
            # relation phrases (not right after a bare determiner: "the on switch")
            if not (in_np and not np_content) and (w in rel_first or w in VERB_FORMS):
                end, is_verb = self._relation_end(lw, i, not in_np and pk in (COP, PRON))
                if end > i:
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
        chunk = _Chunk(NP, start, end)
        det_end = min(max(det_end, start), end)
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
        chunk.attr_only = det_end == start and all(
            lw[k] in ATTRIBUTE_WORDS or lw[k] in ADVERBS or lw[k] in ("and", "or")
            for k in range(start, end))
        chunks.append(chunk)

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
        prev = -1
        warn = builder.warnings.append
        nchunks = len(chunks)

        def next_kind(ci: int) -> int:
            return chunks[ci + 1].kind if ci + 1 < nchunks else -1

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
                e = builder.add_entity(c.start, c.end, c.head, c.modifiers)
                if pending is not None:
                    subj, ps, pe = pending[0], pending[1], pending[2]
                    if subj < 0:
                        fronted = [e, ps, pe]
                    else:
                        builder.add_relation(subj, e, ps, pe)
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
                        builder.add_relation(last_rel[0], e, last_rel[2], last_rel[3])
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
                else:
                    subj = last_np
                if pending is not None and pending[3]:
                    pending = None  # "is" followed by a relation: the copula is not a relation
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
        if pending is not None and not pending[3]:
            warn(f"relation {' '.join(tokens[pending[1]:pending[2]])!r} (tokens {pending[1]}-"
                 f"{pending[2]}) has no object; dropped")
        if fronted is not None and not fronted_resolved:
            warn(f"relation {' '.join(tokens[fronted[1]:fronted[2]])!r} opens the text but no "
                 f"subject follows; dropped")
        return root if root >= 0 else 0
