"""Dependency-based graph extraction shared by the ``spacy`` and ``stanza`` backends.

A dependency parse is given as a list of :class:`DepToken` (text, lemma,
universal POS tag, dependency label, head index).  Both label schemes are
understood: spaCy's English (ClearNLP: ``prep``/``pobj``/``dobj``/``relcl``)
and Universal Dependencies (``case``/``obl``/``nmod``/``obj``/``acl:relcl``).

1. **Relation phrases** are the longest matches of the relation lexicon
   (:mod:`parsers.lexicon`) – so ``"to the left of"`` or ``"has as a part"``
   stay one unit whatever the parser thinks of ``left`` – plus prepositions and
   verbs with an object that the lexicon does not know.  A single-word lexicon
   match counts only when tagged as a preposition, verb, adverb or adjective.
2. **Entities** are nouns and pronouns outside relation phrases, with their
   determiners, adjectives and compounds to the left; a multi-word noun of the
   lexicon is one head.
3. **Object** of a relation: the entity its preposition governs (``pobj``) or
   that governs its case marker (UD), else the next entity to the right.
   **Subject**: a nominal subject of the relation's words, else the first
   entity found climbing the dependency tree from the relation (through
   copulas, relative clauses – whose relative pronoun stands for the noun the
   clause attaches to – participles and coordination).
4. The annotation conventions of :mod:`parsers.conventions` rewrite a relation
   (``the tail of the dog``: dog *has* tail, with an empty span); a possessor
   (``the dog 's tail``) or a whole before a part noun (``the truck doors``) is an
   entity of its own joined to the phrase's head by ``has``, and a noun of
   quantity or depiction before ``of`` (``a pile of rocks``) leaves the head to
   the noun after ``of``.
5. The **root** is the subject of the sentence's main predicate, else the entity
   holding the root token, else the first entity.  The pieces are assembled
   with :class:`~parsers.base.GraphBuilder`, so the result is always a tree.
"""

from __future__ import annotations

from dataclasses import dataclass

from parsers.base import GraphBuilder, ParseResult, single_entity_graph
from parsers.conventions import HAS, is_possessive, possessor, relation_convention
from parsers.lexicon import (
    ATTRIBUTE_WORDS,
    COMPOUND_TRIE,
    DETERMINERS,
    PART_NOUNS,
    PARTITIVE_NOUNS,
    RELATION_TRIE,
    VERB_FORMS,
    Trie,
    lexicon_form,
)

__all__ = ["DepToken", "graph_from_dependencies"]

_SUBJ = frozenset({"nsubj", "nsubjpass", "nsubj:pass", "csubj", "nsubj:outer"})
_OBJ = frozenset({"pobj", "dobj", "obj", "attr", "dative", "oprd", "iobj"})
_CASE = frozenset({"case", "mark"})
_CLIMB_THROUGH = frozenset({"relcl", "acl", "acl:relcl", "advcl", "xcomp", "ccomp", "conj",
                            "prep", "agent", "pcomp", "advmod", "obl", "nmod", "appos"})
_NOMINAL = frozenset({"NOUN", "PROPN", "PRON", "NUM"})
_RELATION_POS = frozenset({"ADP", "VERB", "ADV", "ADJ", "SCONJ", "PART", "AUX"})
_NP_POS = frozenset({"DET", "ADJ", "NUM", "NOUN", "PROPN", "PART", "ADV", "X", "SYM"})
_NON_ENTITY_WORDS = frozenset({"that", "which", "who", "whom", "whose", "what", "there",
                               "where", "here"})
_NON_ENTITY_DEPS = frozenset({"expl", "det", "predet"})
_ARTICLES = frozenset({"a", "an", "the"})


@dataclass
class DepToken:
    """One token of a dependency parse.

    Attributes:
        text: the token as written.
        lemma: its lemma.
        pos: universal part-of-speech tag (``NOUN``, ``ADP``, ...).
        dep: dependency label (either scheme; ``ROOT``/``root`` for the root).
        head: index of the head token in the same list (the token itself, or -1,
            for a root).
    """

    text: str
    lemma: str
    pos: str
    dep: str
    head: int


def _is_root(tokens: list[DepToken], i: int) -> bool:
    h = tokens[i].head
    return h == i or h < 0 or h >= len(tokens) or tokens[i].dep.lower() == "root"


def _partitive_of(tokens: list[DepToken], lw: list[str]) -> set[int]:
    """Indices of the ``of`` after a noun of quantity or depiction (``a pile of rocks``,
    ``a photo of a dog``): the phrase names the noun after ``of``."""
    out = set()
    for j in range(1, len(lw) - 1):
        if lw[j] == "of" and lw[j - 1] in PARTITIVE_NOUNS and tokens[j - 1].pos == "NOUN" \
                and lw[j + 1][:1].isalnum():
            out.add(j)
    return out


def _opening_noun(tokens: list[DepToken], lw: list[str], i: int) -> bool:
    """Whether token ``i`` opens a caption fragment as a noun the tagger took for a verb
    (``rug on the floor``): the first word, tagged a verb but no verb form of the lexicon
    and no participle."""
    return (i == 0 and len(tokens) > 1 and tokens[0].pos in ("VERB", "AUX")
            and lw[0] not in VERB_FORMS and lw[0].isalpha()
            and not lw[0].endswith(("ing", "ed")) and tokens[1].pos in ("ADP", "CCONJ"))


def _relation_spans(tokens: list[DepToken], lw: list[str], trie: Trie,
                    skip: set[int] = frozenset()) -> list[tuple[int, int]]:
    n = len(tokens)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < n:
        if i in skip or i + 1 in skip or _opening_noun(tokens, lw, i):
            i += 1
            continue
        t = tokens[i]
        end = trie.longest(lw, i)
        if end == i + 1 and t.pos not in _RELATION_POS:
            end = i  # a one-word match tagged as a noun or determiner is not a relation
        is_verb = t.pos == "VERB" or (t.pos == "AUX" and lw[i] in VERB_FORMS)
        if i > 0 and lw[i - 1] in _ARTICLES:
            is_verb = False  # "a can": a noun the tagger took for a verb
            end = i if end == i + 1 else end
        if is_verb and t.lemma.lower() != "be":
            k = i + 1
            prep_end = trie.longest(lw, k) if k < n else k
            if prep_end > k:
                verb_end = prep_end
            else:
                while k < n and tokens[k].dep in ("prt", "compound:prt"):
                    k += 1
                verb_end = k
            end = max(end, verb_end)
        elif end == i and t.pos == "ADP":
            end = i + 1
        if end > i:
            spans.append((i, end))
            i = end
        else:
            i += 1
    return spans


def _entities(tokens: list[DepToken], lw: list[str], in_rel: list[bool],
              partitive: set[int] = frozenset()) -> list[tuple[int, int, int]]:
    """``(start, head_start, end)`` of every entity phrase, left to right; a partitive
    phrase (``a pile of rocks``) is one entity headed by the noun after ``of``."""
    n = len(tokens)
    heads = []
    i = 0
    while i < n:
        if in_rel[i]:
            i += 1
            continue
        c_end = COMPOUND_TRIE.longest(lw, i)
        if c_end > i + 1 and not any(in_rel[i:c_end]):
            # the compound is one head unless a later noun it modifies follows
            heads.append((i, c_end))
            i = c_end
            continue
        t = tokens[i]
        if i + 1 in partitive:
            i += 1
            continue
        if (t.pos in _NOMINAL or _opening_noun(tokens, lw, i)
                or (t.dep in _SUBJ and t.pos in ("ADJ", "X"))
                or (i > 0 and lw[i - 1] in _ARTICLES and t.pos in ("AUX", "VERB")
                    and (i + 1 == n or tokens[i + 1].pos not in _NOMINAL))) \
                and lw[i] not in _NON_ENTITY_WORDS \
                and t.dep not in _NON_ENTITY_DEPS:
            # a noun that is a compound/modifier of the next noun is part of that phrase
            h = t.head
            if t.dep in ("compound", "amod", "nmod:poss", "poss", "nummod", "flat") \
                    and i < h < n and not in_rel[h] and all(
                        not in_rel[k] for k in range(i, h + 1)):
                i += 1
                continue
            if t.pos == "NUM" and i + 1 < n and tokens[i + 1].pos in _NOMINAL:
                i += 1
                continue
            heads.append((i, i + 1))
        i += 1
    out = []
    taken = [False] * n
    for hs, he in heads:
        for k in range(hs, he):
            taken[k] = True
    for hs, he in heads:
        start = hs
        # extend left over determiners, adjectives, numbers and noun modifiers of this phrase
        while start > 0:
            j = start - 1
            tj = tokens[j]
            if j in partitive:
                start = j
                continue
            if lw[j] in ("and", "or") and j > 0 and tokens[j - 1].pos == "ADJ" \
                    and tokens[start].pos == "ADJ" and not in_rel[j - 1] and not taken[j - 1]:
                start = j - 1
                continue
            if in_rel[j] or taken[j] or lw[j] in _NON_ENTITY_WORDS - {"that"} \
                    or (tj.pos not in _NP_POS and lw[j] not in DETERMINERS
                        and not lw[j].endswith("'s")) \
                    or (tj.pos == "ADV" and tj.head not in range(j, he)):
                break
            if tj.pos == "PART" and not lw[j].endswith("s") and lw[j] not in ("'s", "’s"):
                break
            start = j
        # "that" on the left is a determiner only when it depends on this phrase
        while start < hs and lw[start] == "that" and tokens[start].dep not in ("det",):
            start += 1
        for k in range(start, he):
            taken[k] = True
        out.append((start, hs, he))
    return out


def _owner(tokens: list[DepToken], lw: list[str], start: int, hs: int,
           he: int) -> tuple[int, str, int, int] | None:
    """A possessor (``the man 's hat``) or a whole before a part noun (``the clock hands``)
    inside the entity phrase ``start:he`` with head ``hs:he``.

    Returns ``(owner end, owner head, end of the owner's modifiers, start of the owned
    phrase)`` or None.
    """
    for k in range(hs - 1, start - 1, -1):
        if not is_possessive(lw[k]):
            continue
        if lw[k] in ("'s", "’s"):
            if k - 1 < start or tokens[k - 1].pos not in ("NOUN", "PROPN"):
                return None
            return k, tokens[k - 1].text, k - 1, k + 1
        if tokens[k].pos not in ("NOUN", "PROPN"):
            return None
        return k + 1, possessor(tokens[k].text), k, k + 1
    k = hs - 1
    if he - hs != 1 or k < start or not lexicon_form(lw[hs], PART_NOUNS):
        return None
    t = tokens[k]
    if t.pos not in ("NOUN", "PROPN") or t.dep not in ("compound", "nmod") or t.head != hs \
            or lw[k] in ATTRIBUTE_WORDS or lw[k] in PART_NOUNS or not lw[k].isalpha():
        return None
    return k + 1, t.text, k, k + 1


def graph_from_dependencies(tokens: list[DepToken], text: str,
                            trie: Trie = RELATION_TRIE) -> ParseResult:
    """Build a tree-shaped language graph from a dependency parse (see the module docstring).

    Args:
        tokens: the parse, one :class:`DepToken` per token.
        text: the original text.
        trie: the relation lexicon.

    Returns:
        the graph (always a valid tree) and the warnings of the extraction.
    """
    words = [t.text for t in tokens]
    n = len(tokens)
    if n == 0:
        raise ValueError("no tokens to build a graph from")
    lw = [w.lower() for w in words]
    partitive = _partitive_of(tokens, lw)
    spans = _relation_spans(tokens, lw, trie, partitive)
    in_rel = [False] * n
    rel_of_token = [-1] * n
    for k, (s, e) in enumerate(spans):
        for j in range(s, e):
            in_rel[j] = True
            rel_of_token[j] = k
    ents = _entities(tokens, lw, in_rel, partitive)
    if not ents:
        return ParseResult(single_entity_graph(words, text),
                           ["no noun phrase found; the whole text is one entity"])
    builder = GraphBuilder(words, text)
    ent_of_token = [-1] * n
    owners: list[tuple[int, int, int]] = []   # (owner entity, owned entity, position)

    def modifiers(a: int, b: int) -> list[str]:
        return [words[k] for k in range(a, b)
                if lw[k] not in DETERMINERS and lw[k] not in ("and", "or")
                and tokens[k].pos not in ("DET", "PART", "CCONJ")]

    for start, hs, he in ents:
        owner = _owner(tokens, lw, start, hs, he)
        if owner is None:
            e = builder.add_entity(start, he, head=" ".join(words[hs:he]),
                                   modifiers=modifiers(start, hs))
            for k in range(start, he):
                ent_of_token[k] = e
            continue
        o_end, o_head, o_mod_end, own_start = owner
        e = builder.add_entity(own_start, he, head=" ".join(words[hs:he]),
                               modifiers=modifiers(own_start, hs))
        o = builder.add_entity(start, o_end, head=o_head, modifiers=modifiers(start, o_mod_end))
        for k in range(start, he):
            ent_of_token[k] = o if k < own_start else e
        owners.append((o, e, own_start))
    for o, e, at in owners:
        builder.add_relation(o, e, at, at, text=HAS)

    def entity_at(i: int) -> int:
        return ent_of_token[i] if 0 <= i < n else -1

    def head_entity_token(e: int) -> int:
        s, t = builder.entities[e].span
        return t - 1

    relation_subjects: list[int] = [-1] * len(spans)

    def climb(i: int, obj: int, steps: int = 12) -> int:
        seen = set()
        while 0 <= i < n and steps > 0 and i not in seen:
            seen.add(i)
            steps -= 1
            e = entity_at(i)
            if e >= 0 and e != obj:
                return e
            subj_deps = _SUBJ | {"attr"} if tokens[i].lemma.lower() == "be" else _SUBJ
            for j in range(n):
                if tokens[j].head == i and j != i and tokens[j].dep in subj_deps:
                    if lw[j] in _NON_ENTITY_WORDS:
                        break  # relative pronoun: the clause's noun is further up
                    ej = entity_at(j)
                    if ej >= 0 and ej != obj:
                        return ej
            k = rel_of_token[i]
            if k >= 0 and relation_subjects[k] >= 0 and relation_subjects[k] != obj:
                return relation_subjects[k]
            if _is_root(tokens, i):
                return -1
            i = tokens[i].head
        return -1

    warnings = builder.warnings
    for k, (s, e) in enumerate(spans):
        span_set = range(s, e)
        # object
        obj = -1
        for j in range(n):
            if j in span_set or tokens[j].head not in span_set or tokens[j].dep not in _OBJ:
                continue
            if j >= e:
                obj = entity_at(j)
                if obj >= 0:
                    break
            elif lw[j] in _NON_ENTITY_WORDS and tokens[s].dep in ("relcl", "acl:relcl"):
                obj = entity_at(tokens[s].head)  # "the dog that the man is holding"
                if obj >= 0:
                    break
        if obj < 0:
            for j in span_set:
                if tokens[j].dep in _CASE and tokens[j].head >= e:
                    obj = entity_at(tokens[j].head)
                    if obj >= 0:
                        break
        if obj < 0:
            nxt = spans[k + 1][0] if k + 1 < len(spans) else n
            obj = next((x for x in range(len(builder.entities))
                        if e <= builder.entities[x].span[0] < nxt), -1)
        if obj < 0:
            warnings.append(f"relation {' '.join(words[s:e])!r} (tokens {s}-{e}) has no object; "
                            f"dropped")
            continue
        # subject: a nominal subject of the relation words or of the object's head
        subj = -1
        for j in range(n):
            hj = tokens[j].head
            if tokens[j].dep in _SUBJ and j != hj and (hj in span_set
                                                        or hj == head_entity_token(obj)):
                if lw[j] in _NON_ENTITY_WORDS:
                    continue
                ej = entity_at(j)
                if ej >= 0 and ej != obj:
                    subj = ej
                    break
        if subj < 0:
            inside = set(span_set) | set(range(*builder.entities[obj].span))
            starts = [tokens[j].head for j in span_set
                      if not _is_root(tokens, j) and tokens[j].head not in inside]
            oh = head_entity_token(obj)
            if not _is_root(tokens, oh) and tokens[oh].head not in inside:
                starts.append(tokens[oh].head)
            for st in starts:
                subj = climb(st, obj)
                if subj >= 0:
                    break
        if subj < 0:
            subj = next((x for x in range(len(builder.entities) - 1, -1, -1)
                         if builder.entities[x].span[1] <= s and x != obj), -1)
        if subj < 0:
            warnings.append(f"no subject found for relation {' '.join(words[s:e])!r} "
                            f"(tokens {s}-{e}); dropped")
            continue
        relation_subjects[k] = subj
        conv = relation_convention(lw[s:e], builder.entities[subj].head,
                                   builder.entities[obj].head)
        if conv is None:
            builder.add_relation(subj, obj, s, e)
        else:
            # an annotation convention (parsers.conventions): the phrase is not the text
            # of the tokens, so the relation gets an empty span where they start
            phrase, swap = conv
            if swap:
                builder.add_relation(obj, subj, s, s, text=phrase)
            else:
                builder.add_relation(subj, obj, s, s, text=phrase)

    # root: subject of the main predicate, else the entity holding the root token
    root = 0
    main = next((i for i in range(n) if _is_root(tokens, i)), -1)
    if main >= 0:
        subj_deps = _SUBJ | {"attr"} if tokens[main].lemma.lower() == "be" else _SUBJ
        subj_tok = next((j for j in range(n) if tokens[j].head == main and j != main
                         and tokens[j].dep in subj_deps and entity_at(j) >= 0), -1)
        if subj_tok >= 0:
            root = entity_at(subj_tok)
        elif entity_at(main) >= 0:
            root = entity_at(main)
    return ParseResult(builder.build(root), builder.warnings)
