"""The first pass of the ``rule`` parser: chunking rules (see :mod:`parsers.rule`).

A :class:`Chunker` walks the tokens of one text.  At each token it tries the rules of
:data:`CHUNK_RULES` in order; the first that applies consumes one or more tokens (it
emits a chunk, extends the open noun phrase, or skips words) and returns ``True``.  The
last rule, :func:`content_word`, always applies, so every token is consumed.

Chunks are noun phrases (``NP``), relation phrases (``REL``), copulas (``COP``),
relative pronouns (``PRON``), conjunctions (``CONJ``), soft and hard punctuation
(``SOFT``, ``HARD``) and ``there is`` (``THERE``).  A noun phrase is open while its
words are read and emitted by :meth:`Chunker.close_np` when a rule ends it.

A new construction is one function ``rule(chunker) -> bool`` inserted into
:data:`CHUNK_RULES` before the rules it must take precedence over.  A rule may declare
with :func:`only_for` the only words it can apply at; the chunker then does not try it at
other words (a speed-up: most rules look at one small set of words).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from parsers import word_classes
from parsers.conventions import is_possessive, possessor
from parsers.coreference import SUBJECT_PRONOUNS
from parsers.lexicon import (
    ADVERBS,
    ATTRIBUTE_WORDS,
    AUXILIARIES,
    CLOTHING_NOUNS,
    COMPARISON_TRIE,
    CONJUNCTIONS,
    CONTAINER_NOUNS,
    COPULAS,
    DETERMINERS,
    DISPLAY_SURFACE_NOUNS,
    DISPLAY_VERB_FORMS,
    HOLDER_NOUNS,
    LIGHT_VERBS,
    LOCATIVE_FILLERS,
    NEGATIONS,
    OWNED_PART_NOUNS,
    PART_NOUNS,
    PARTICIPLE_NOUNS,
    PARTICLE_VERB_PHRASES,
    PARTITIVE_NOUNS,
    PICTURE_NOUNS,
    POSTURE_VERB_FORMS,
    REGION_NOUNS,
    RELATIVE_PRONOUNS,
    SAYING_VERBS,
    SURFACE_NOUNS,
    VERB_FORMS,
    WEAK_VERB_FORMS,
    WEARER_NOUNS,
    Trie,
    lexicon_form,
    word_forms,
)
from parsers.noun_classes import is_modifier
from parsers.word_classes import (
    CONJUNCTION_WORDS,
    NOUNISH,
    TEMPORAL_SUBORDINATORS,
    VERB,
    WEAK,
)

#: verbs of standing or keeping still, whose bare noun of a watch says what the subject
#: does there (``stands guard``), as does any noun after them and ``as`` (``stands as a
#: silent sentinel``): no relation
POSTURE_FORMS = word_forms(
    ("stand", ("", "s", "ing")), ("stood", ("",)), ("sit", ("", "s")), ("sitting", ("",)),
    ("sat", ("",)), ("keep", ("", "s", "ing")), ("kept", ("",)), ("remain", ("", "s", "ing")),
    ("remained", ("",)))
#: nouns of a watch kept (``stands guard``, ``keeps watch``, ``stood sentinel``)
WATCH_NOUNS = frozenset({"guard", "sentinel", "sentry", "watch", "vigil"})
#: possessive determiners, which open a noun phrase whose singular noun a verb in ``-s``
#: may follow (``its hood gleams``)
_POSSESSIVE_OPENERS = frozenset({"its", "his", "her", "their", "my", "our", "your"})

__all__ = ["CHUNK_RULES", "COP", "CONJ", "HARD", "NP", "PRON", "REL", "SOFT", "THERE",
           "Chunk", "ChunkRule", "Chunker"]

# chunk kinds
NP, REL, COP, PRON, CONJ, SOFT, HARD, THERE = range(8)

_HARD_PUNCT = frozenset({".", "!", "?"})
_NEG_COPULAS = frozenset({"isn't", "aren't", "wasn't", "weren't", "isn’t", "aren’t"})
#: auxiliaries contracted with ``not``; before a verb they negate it like ``does not``
_NEG_AUXILIARIES = frozenset(
    form for w in ("doesn't", "don't", "didn't", "can't", "won't", "couldn't", "wouldn't",
                   "shouldn't", "hasn't", "haven't", "hadn't", "cannot")
    for form in (w, w.replace("'", "’")))
_PICTURE_NOUNS = frozenset({"photo", "picture", "image", "photograph", "view", "closeup",
                            "close-up", "shot", "snapshot"})
_OBJECT_PRONOUNS = frozenset({"him", "her", "it", "them", "me", "us", "you", "one"})
_WEARING = frozenset({"wearing", "wears", "wear", "wore"})
_VERB_ENDINGS = ("s", "ed", "ing")
#: third-person forms of transitive verbs; between two nouns they are the verb (``the man
#: wears long pants``) even without a determiner after them
_TRANSITIVE_S = frozenset({"wears", "holds", "carries", "eats", "rides", "drinks", "uses",
                           "watches", "pulls", "pushes", "throws", "catches", "kicks", "hits",
                           "swings", "feeds", "pets", "chases", "follows", "hugs", "kisses",
                           "bites", "licks", "sniffs", "brushes", "washes", "crosses"})
_COUNT_WORDS = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                          "ten", "many", "several", "few", "most", "some", "all", "both",
                          "each", "none", "any"})
#: endings of words that describe a noun of quantity or depiction (``a hazy image``)
_DESCRIPTION_ENDINGS = ("ed", "ly", "ful", "ous", "ish", "less", "able", "ible", "ive", "al",
                        "ic", "y")
#: endings of adjectives; a word with one of them does not name a whole before a part noun
_ADJECTIVE_ENDINGS = ("ed", "ing", "ly", "ful", "ous", "ish", "less", "able", "ible", "ive")
#: words the lexicon classes itself; the word-class table (:mod:`parsers.word_classes`)
#: is asked only about other words
_LEXICON_WORDS = (ATTRIBUTE_WORDS | PARTICIPLE_NOUNS | CLOTHING_NOUNS | PART_NOUNS
                  | CONTAINER_NOUNS | SURFACE_NOUNS | HOLDER_NOUNS | REGION_NOUNS
                  | PARTITIVE_NOUNS | WEARER_NOUNS | DETERMINERS | COPULAS | AUXILIARIES
                  | RELATIVE_PRONOUNS | CONJUNCTIONS | NEGATIONS | ADVERBS | LOCATIVE_FILLERS
                  | LIGHT_VERBS | VERB_FORMS | _OBJECT_PRONOUNS | _COUNT_WORDS
                  | frozenset({"there", "here", "he", "she", "they", "we", "i", "who"}))
#: determiners of one thing; a verb form in ``-s`` after a noun they open is the verb
#: (``a sheep stands idly at``), not a plural head
#: words after which a clause has ended (a verb right before one has no object)
_CLAUSE_ENDS = frozenset({".", "!", "?", ",", ";", ":", "and", "while", "as"})
_SINGULAR_DETERMINERS = frozenset({"a", "an", "one", "each", "every", "another"})
#: plurals without ``-s``
_IRREGULAR_PLURALS = frozenset({"people", "men", "women", "children", "feet", "teeth", "geese",
                                "mice", "police", "cattle", "oxen", "folks", "sheep", "deer"})
_verb_class = word_classes.verb_class
_is_adverb = word_classes.is_adverb


#: verb forms of the lexicon that, ending a clause after a copula, name a state
_STATE_VERB_FORMS = frozenset({"missing"})
#: verbs that open a relation phrase of the lexicon (``let go of``): without the rest of that
#: phrase they are still verbs of the word-class table (``letting off passengers``)
_VERBS_OPENING_PHRASES = frozenset(p.split()[0] for p in PARTICLE_VERB_PHRASES)


def table_verb_class(w: str) -> int:
    """Verb class (:data:`~parsers.word_classes.VERB`, ``WEAK``, ``NOUNISH``; 0 if none) of
    a lowercase word the lexicon does not class itself."""
    return 0 if w in _LEXICON_WORDS else _verb_class(w)


def table_adverb(w: str) -> bool:
    """Whether a lowercase word the lexicon does not class itself is an adverb."""
    return w not in _LEXICON_WORDS and _is_adverb(w)


_Y_NOUNS = frozenset({"baby", "boy", "toy", "body", "lady", "pony", "puppy", "kitty", "teddy",
                      "city", "bay", "trolley", "jockey", "monkey", "turkey", "donkey", "key",
                      "subway", "railway", "highway", "doggy", "guy", "family", "factory",
                      "bakery", "library", "gallery", "balcony", "chimney", "lorry", "ferry"})


#: nouns in ``-al`` / ``-ic`` that may name a whole before a part noun (``the animal
#: head``); any other such word is an adjective or a material (``facial hair``, ``metal
#: door``, ``plastic handle``)
_AL_IC_WHOLES = frozenset({"animal", "hospital", "terminal", "arsenal", "cathedral",
                           "mall", "stall", "wall", "ball", "doll", "hall", "clinic", "attic"})


#: words that may stand between a preposition and a place noun before ``of`` (``on each
#: side of``, ``on the shady side of``): the place still joins the relation phrase
_REGION_QUANTIFIERS = frozenset({"each", "either", "both", "one", "two", "other", "opposite",
                                 "far", "near", "shady", "sunny", "upper", "lower", "very"})


#: nouns that a name, a number or quoted words may follow inside their noun phrase (``the
#: number 8169``, ``the words `` stop here ''``): the noun stays the head
LABEL_NOUNS = frozenset({"number", "numbers", "word", "words", "letter", "letters", "name",
                         "names", "text", "phrase", "logo", "brand", "sign", "label"})
_OPEN_QUOTES = frozenset({"``", "`", '"', "“", "'", "‘"})
_CLOSE_QUOTES = frozenset({"''", '"', "”", "'", "’"})


def _names_a_label(lw: list[str], k: int, end: int) -> bool:
    """Whether the words after the label noun ``lw[k]`` up to ``end`` are its name: quoted
    words, or (after a plural label) any words, or a token with a digit or a sign in it
    (``number 8169``, ``letters ec-flp``, ``words hotdog``)."""
    if k + 1 >= end or lw[k] not in LABEL_NOUNS:
        return False
    if lw[k + 1] in _OPEN_QUOTES:
        return True
    if lw[k] in ("numbers", "words", "letters", "names"):
        return True
    return all(not w.isalpha() for w in lw[k + 1:end])


#: places on a whole that, opening a caption before ``of``, leave the head to the whole
_OPENING_REGIONS = frozenset({"side", "sides", "top", "back", "front", "middle", "area",
                              "section", "part", "inside", "background", "corner", "end",
                              "rear", "surface", "center", "centre", "interior", "exterior",
                              "outside"})


#: verbs of trying or being about to, which before ``to`` await a verb
_TRYING_VERBS = frozenset({"going", "trying", "attempting", "preparing", "about", "wants",
                           "want", "waiting", "ready", "getting"})


class Chunk:
    """One chunk: its kind, its tokens ``start:end`` and, for a noun phrase, its head,
    modifiers and owner; for a relation, whether it is a verb and where a negation before
    it starts."""

    __slots__ = ("kind", "start", "end", "head", "modifiers", "attr_only", "verb", "neg_start",
                 "owner", "quote")

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
        # quoted words written on the phrase's thing ("a `` stop '' sign"): their span
        self.quote: tuple[int, int] | None = None


class Chunker:
    """The chunking state of one text and the word tests the rules share.

    ``i`` is the current token and ``w`` its lowercase form; ``np_start`` is the start of
    the open noun phrase (-1 if none), ``np_det_end`` the end of its determiners and
    ``np_content`` whether it holds a content word yet (a phrase of determiners only is
    *bare*: no relation starts right after ``the`` of ``the on switch``); ``neg_at`` is the
    index of a negation right before the next relation (-1 if none); ``pk`` is the kind of
    the last chunk emitted before token ``i`` (-1 if none).
    """

    __slots__ = ("tokens", "lw", "n", "warnings", "rel_trie", "compound_trie", "chunks", "i",
                 "w", "np_start", "np_det_end", "np_content", "neg_at", "pk", "quote")

    def __init__(self, tokens: list[str], lw: list[str], warnings: list[str],
                 rel_trie: Trie, compound_trie: Trie) -> None:
        self.tokens = tokens
        self.lw = lw
        self.n = len(tokens)
        self.warnings = warnings
        self.rel_trie = rel_trie
        self.compound_trie = compound_trie
        self.chunks: list[Chunk] = []
        self.i = 0
        self.w = ""
        self.np_start = -1
        self.np_det_end = -1
        self.np_content = False
        self.neg_at = -1
        self.pk = -1
        self.quote: tuple[int, int] | None = None  # quoted words that label the next noun

    def run(self) -> list[Chunk]:
        """Apply :data:`CHUNK_RULES` at every token; the chunks of the text."""
        lw, n, chunks = self.lw, self.n, self.chunks
        rules = [(rule, getattr(rule, "words", None)) for rule in CHUNK_RULES]
        while self.i < n:
            w = self.w = lw[self.i]
            self.pk = chunks[-1].kind if chunks else -1
            for rule, words in rules:
                if words is not None and w not in words:
                    continue
                if rule(self):
                    break
            else:  # pragma: no cover - content_word always applies
                raise AssertionError(f"no chunking rule consumed token {self.i}")
        self.close_np(n)
        return self.chunks

    # -------------------------------------------------------------- state
    def add(self, kind: int, end: int) -> None:
        """Emit a chunk of ``kind`` over tokens ``i:end`` and move past it."""
        self.chunks.append(Chunk(kind, self.i, end))
        self.i = end

    def add_relation(self, end: int, verb: bool) -> None:
        """Emit a relation over tokens ``i:end`` (with the negation before it) and move past
        it."""
        i = self.i
        chunk = Chunk(REL, i, end)
        chunk.verb = verb
        chunk.neg_start = self.neg_at if self.neg_at >= 0 else i
        self.chunks.append(chunk)
        self.neg_at = -1
        self.i = end

    def close_np(self, end: int) -> None:
        """Emit the open noun phrase, ending at ``end``, if there is one."""
        if self.np_start < 0:
            return
        # determiners only ("this", "that"): they are words, keep them as a phrase
        self.emit_np(self.np_start, self.np_det_end if self.np_content else end, end)
        self.np_start = -1
        self.np_content = False

    # --------------------------------------------------------- word tests
    def expects_predicate(self) -> bool:
        """Whether a verb is expected at the current token: no noun phrase is open and the
        last chunk is a copula, a relative pronoun or a subject pronoun (``he`` ``they``,
        :func:`subject_pronoun`)."""
        if self.np_start >= 0:
            return False
        pk = self.pk
        if pk == COP or pk == PRON or self.after_subordinator(self.i):
            return True
        if pk == REL:
            # "going to cut down a tree", "trying to pick up a box": a verb of trying and
            # "to" before a verb
            last = self.chunks[-1]
            return last.end - last.start == 2 and self.lw[last.end - 1] == "to" \
                and self.lw[last.start] in _TRYING_VERBS
        if pk != NP:
            return False
        last = self.chunks[-1]
        return last.end - last.start == 1 and self.lw[last.start] in SUBJECT_PRONOUNS

    def garment_top(self, k: int) -> bool:
        """Whether ``top`` at ``k``, an attribute word (``the top shelf``), is the garment:
        after another attribute word of its phrase (``a white top walks``, ``a dark top and
        white bottoms``)."""
        return self.lw[k] == "top" and k - 1 >= max(self.np_det_end, 0) \
            and self.lw[k - 1] in ATTRIBUTE_WORDS

    def perfect_participle(self, i: int) -> bool:
        """Whether the word at ``i``, after ``has`` / ``have`` / ``had``, is a past participle
        of a perfect tense (``the crowd has gathered``, ``a man has fallen off``): a past
        form before the end of the clause, a determiner or a preposition other than ``to``
        (not before a noun: ``a box has curved edges``)."""
        lw, n = self.lw, self.n
        w = lw[i]
        if not (w.endswith(("ed", "en")) and len(w) > 4 and (
                w in VERB_FORMS or table_verb_class(w))) or w in ATTRIBUTE_WORDS:
            return False
        k = i + 1
        return k >= n or lw[k] in _CLAUSE_ENDS or lw[k] in DETERMINERS \
            or (self.rel_trie.longest(lw, k) > k and lw[k] != "to")  # "have chosen to wear"

    def after_subordinator(self, i: int) -> bool:
        """Whether the word at ``i`` is an ``-ing`` form right after a conjunction of time
        (``while texting on her phone``, ``when building a house``): the verb of a clause
        whose subject is left out, whatever its word class."""
        chunks = self.chunks
        return (self.np_start < 0 and bool(chunks) and chunks[-1].kind == CONJ
                and chunks[-1].end == i and self.lw[i - 1] in TEMPORAL_SUBORDINATORS
                and len(self.lw[i]) > 5 and self.lw[i].endswith("ing"))

    def relation_end(self, i: int, predicate: bool) -> tuple[int, bool]:
        """End of the relation phrase starting at ``i`` (``i`` if none) and whether it is a verb.

        ``predicate`` tells that a verb is expected here (after a copula or a relative
        pronoun); elsewhere a verb form that is also a common noun (``faces``,
        ``cover``) counts as a verb only before a determiner or a preposition.  A word
        the lexicon lacks is a verb by its class in :mod:`parsers.word_classes`
        (:meth:`table_verb`).
        """
        lw = self.lw
        rel_trie = self.rel_trie
        end = rel_trie.longest(lw, i)
        w = lw[i]
        n = len(lw)
        if w in VERB_FORMS:
            nxt = lw[i + 1] if i + 1 < n else ""
            if w.endswith("ing") and i > 0 and lw[i - 1] in _WEARING and nxt.isalpha() \
                    and rel_trie.longest(lw, i + 1) == i + 1 and nxt not in DETERMINERS:
                return i, False  # "wearing swimming trunks": a kind of trunks
            if not predicate and self.plural_after_attributes(i):
                return end, False  # "dead leaves on the ground": the leaves are the head
            if not predicate and w in WEAK_VERB_FORMS:
                # after a possessive or "of" such a form is a noun ("a pair of shoes the
                # ..."), and so is one not in -ing right after a preposition ("a tree with
                # leaves near a house")
                possessed = i > 0 and (
                    lw[i - 1].endswith(("'s", "’s", "s'")) or lw[i - 1] == "of"
                    or (self.pk == REL and self.np_start < 0 and not self.chunks[-1].verb
                        and self.chunks[-1].end == i and not w.endswith("ing")))
                ok = not possessed and (
                    nxt in DETERMINERS or nxt in _OBJECT_PRONOUNS or nxt in _COUNT_WORDS
                    or nxt.isdigit() or nxt in PARTITIVE_NOUNS
                    or (w == "have" and i > 0 and lw[i - 1].endswith("s"))
                    or (w in _TRANSITIVE_S and i > 0 and lw[i - 1].isalpha()
                        and lw[i - 1] not in DETERMINERS and lw[i - 1] not in _COUNT_WORDS
                        and nxt.isalpha()
                        and rel_trie.longest(lw, i + 1) == i + 1)
                    or (w in POSTURE_VERB_FORMS and rel_trie.longest(lw, i + 1) > i + 1)
                    or self.verb_after_subject(i))
            elif (w in ATTRIBUTE_WORDS or w in _STATE_VERB_FORMS) and predicate:
                # a participle that is also an attribute (``is standing``, ``is smiling``)
                # is a verb only before a preposition or an object, or at the end of a
                # relative clause after a preposition (``the earth in which they are standing``);
                # a verb form of state before a bare noun as well (``the tree is missing
                # leaves``; ``the bags are missing .`` is a state)
                ok = rel_trie.longest(lw, i + 1) > i + 1 or nxt in DETERMINERS \
                    or nxt in _OBJECT_PRONOUNS or self.ends_object_relative(i) \
                    or (w in _STATE_VERB_FORMS and i + 1 < n and self.bare_noun_at(i + 1))
            else:
                ok = True
        elif end == i and (w not in rel_trie.root or w in _VERBS_OPENING_PHRASES):
            vc = table_verb_class(w) or (VERB if self.after_subordinator(i) else 0)
            if not vc and self.noun_form_people_do(i):
                vc = WEAK  # "a man writing on a board": people name no compound with it
            if not vc or not self.table_verb(i, vc, predicate):
                return end, False
            ok = True
        else:
            return end, False
        if ok:
            k = i + 1
            while k < n and (lw[k] in ADVERBS or table_adverb(lw[k])) \
                    and rel_trie.longest(lw, k) == k:
                k += 1
            prep_end = rel_trie.longest(lw, k) if k < n else k
            if prep_end > k and lw[k] in VERB_FORMS and lw[k].endswith("ing") \
                    and w.endswith("ing"):
                prep_end = k  # "standing wearing a hat": two verbs, the second with its object
            verb_end = prep_end if prep_end > k else i + 1
            if verb_end > end:
                return verb_end, True
        return end, end > i

    def ends_object_relative(self, i: int) -> bool:
        """Whether the participle at ``i`` follows a preposition, ``which``, a noun phrase
        and a copula and ends the clause (``the earth in which the players are standing
        .``): the clause's verb, with that preposition (:func:`~parsers.rule_attachment.
        preposition_before_which`)."""
        chunks, lw, n = self.chunks, self.lw, self.n
        if not lw[i].endswith("ing") or len(chunks) < 3 or chunks[-1].kind != COP \
                or chunks[-2].kind != NP or chunks[-3].kind != PRON:
            return False
        if lw[chunks[-3].start] not in ("which", "whom") or len(chunks) < 4 \
                or chunks[-4].kind != REL:
            return False
        return i + 1 >= n or lw[i + 1] in _CLAUSE_ENDS

    def plural_after_attributes(self, i: int) -> bool:
        """Whether the form in ``-s`` at ``i`` ends a noun phrase that holds only attribute
        words before it (``dead leaves``, ``light green leaves``): then it is the phrase's
        plural head, not a verb."""
        w = self.lw[i]
        if self.np_start < 0 or not self.np_content or i <= self.np_det_end \
                or not w.endswith("s") or w.endswith("ss"):
            return False
        return not self.garment_top(i - 1) and all(
            self.lw[k] in ATTRIBUTE_WORDS or is_modifier(self.lw[k]) or self.lw[k] in ("and", "or")
            for k in range(self.np_det_end, i))

    def verb_after_subject(self, i: int) -> bool:
        """Whether the verb form at ``i``, right after the noun of the open noun phrase and
        before a preposition, a determiner or the end of a clause (the text ends, or a
        punctuation mark, ``and``, ``while`` or ``as`` follows; adverbs between allowed:
        ``buildings rise .``, ``a dog sleeps peacefully ,``; not after coordinated phrases
        there: ``a jacket and a face mask``; an adjective may stand between: ``a tower stands
        tall against``; where agreement rules the phrase out, before a bare noun too: ``two
        dogs chase balls``), is the verb of that
        phrase: a past form (``three birds huddled together in``), a form in ``-s`` after a
        phrase opened by ``a`` / ``one`` (``a sheep stands idly at``), or a base form after
        a plural noun or after two coordinated phrases, the second of one noun (``four
        zebras stand together in``, ``a horse and a dog gallop through``).  Otherwise such
        a word stays in the phrase (``the bus stops near``)."""
        if self.np_start < 0 or not self.np_content:
            return False
        lw, n = self.lw, self.n
        prev = lw[i - 1]
        if i - 1 < self.np_det_end or not prev.isalpha() or prev in ATTRIBUTE_WORDS \
                or prev in ADVERBS or self.compound_trie.longest(lw, i - 1) > i:
            return False
        k = self.adverbs_end(i + 1)
        predicative = k < n and is_modifier(lw[k]) and lw[k] not in DETERMINERS and (
            k + 1 >= n or lw[k + 1] in _CLAUSE_ENDS or self.rel_trie.longest(lw, k + 1) > k + 1)
        if predicative:
            k += 1  # an adjective of the verb's subject: `a tower stands tall against`
        clause_end = k >= n or lw[k] in _CLAUSE_ENDS
        before_object = clause_end or self.rel_trie.longest(lw, k) > k or lw[k] in DETERMINERS \
            or (lw[i] in POSTURE_FORMS and lw[k] in WATCH_NOUNS)  # `a lamp stands guard`
        # where agreement rules the noun phrase out, a bare noun may follow as the object
        # (`two dogs chase balls`, `a boy flies kites`)
        bare_object = k < n and lw[k].isalpha() and lw[k] not in CONJUNCTION_WORDS \
            and prev not in VERB_FORMS and table_verb_class(prev) not in (VERB, WEAK)
        w = lw[i]
        if w.endswith("ing"):
            return False
        if w.endswith("ed"):
            return before_object
        if w.endswith("s") and not w.endswith("ss"):
            opener = lw[self.np_start]
            # after `the` only before an adjective, which cannot follow a head noun
            # (`the tower stands tall in`; `the bus stops near` stays a noun phrase)
            # after a possessive (or `X's`) before a singular noun that opens a clause
            # (`its hood gleams under`, `, its coat blends with`), and after `the` before an adverb
            # of manner (`the tower rises proudly above`) or `as` and a determiner (`the
            # deck serves as a`), as no compound noun is followed by either
            singular = not prev.endswith("s") or prev.endswith("ss")
            manner = (k > i + 1 and lw[k - 1].endswith("ly")) or (
                i + 2 < n and lw[i + 1] == "as" and lw[i + 2] in DETERMINERS)  # `serves as a`
            opens_clause = self.pk in (-1, SOFT, HARD, CONJ)
            if before_object and not clause_end and prev.endswith("s") \
                    and not prev.endswith(("ss", "us", "is")) and self.pk == REL \
                    and self.chunks and self.lw[self.chunks[-1].start] == "with":
                return True  # `a shelf with various items adds to`: no plural agrees
            if (before_object or bare_object) and singular and opens_clause \
                    and any(is_possessive(lw[k]) for k in range(self.np_start, i - 1)) \
                    and "of" not in lw[self.np_start:i]:
                return True  # `the dog's coat shines in`, `the cliff's edge drops .`
            return (before_object or bare_object) and (
                opener in _SINGULAR_DETERMINERS
                or (opener in _POSSESSIVE_OPENERS and singular and opens_clause)
                or ((predicative or manner) and opener in ("the", "this", "that"))) \
                and self.np_det_end - self.np_start == 1 and "of" not in lw[self.np_start:i]
        plural = prev in _IRREGULAR_PLURALS or (
            prev.endswith("s") and not prev.endswith(("ss", "us", "is")))
        if i - 1 == self.np_start and i >= 2 and lw[i - 2] in ("that", "which", "who"):
            plural = False  # `a sign that says tattoo`: `says` is the clause's verb
        coordinated = (self.pk == CONJ and i - 1 >= self.np_det_end and len(self.chunks) >= 2
                       and all(lw[k] in ATTRIBUTE_WORDS for k in range(self.np_det_end, i - 1))
                       and self.chunks[-2].kind == NP and self.lw[self.chunks[-1].start]
                       in ("and", "&"))
        return (plural and (before_object or bare_object)) or (
            coordinated and not clause_end and before_object)

    def table_verb(self, i: int, vc: int, predicate: bool) -> bool:
        """Whether the word at ``i``, of verb class ``vc`` in :mod:`parsers.word_classes`, is a
        verb here.  Where a verb is expected (``predicate``), one of any class before its
        object (a determiner, a pronoun, a number) or a preposition, and one that is only
        a verb (``is dropping``) anyway.  Elsewhere never right after a possessive (``the
        man's drops``), an attribute word or an adverb (``white shelves``, ``well
        manicured``), and at the start of a relation's object (``with yellowing leaves``)
        only before a determiner; otherwise one that is only a verb (``ignores``) is
        one, but a past participle (``hooded jacket``) only before its object or a
        preposition; one that is also a noun or an adjective (``drops``, ``stuffed``)
        before its object or, as a participle, before a preposition; one that is mostly
        a noun (``poles``) never."""
        lw, n = self.lw, self.n
        nxt = lw[i + 1] if i + 1 < n else ""
        objectish = (nxt in DETERMINERS or nxt in _OBJECT_PRONOUNS or nxt in _COUNT_WORDS
                     or nxt.isdigit() or nxt in PARTITIVE_NOUNS)
        prep = i + 1 < n and self.rel_trie.longest(lw, i + 1) > i + 1
        if predicate:
            # after a copula, adverbs may stand between a participle and its preposition
            # (``are posing together in``); an ``-ing`` form, and after a relative pronoun
            # a finite one, is the clause's verb before a bare noun too (``while dropping
            # pizza``, ``that lacks chicken``)
            return vc == VERB or objectish or prep or (
                lw[i].endswith(("ing", "ed")) and self.preposition_after_adverbs(i + 1)) or (
                vc == WEAK and (lw[i].endswith("ing") or (
                    self.pk == PRON and lw[i].endswith(("s", "ed"))))
                and i + 1 < n and (self.bare_noun_at(i + 1) or (
                    nxt in ATTRIBUTE_WORDS and i + 2 < n and self.bare_noun_at(i + 2))))
        prev = lw[i - 1] if i > 0 else ""
        if (prev in ADVERBS or table_adverb(prev)) and self.np_start < 0 and self.pk == NP \
                and ((prep and lw[i].endswith("ed"))
                     or (nxt in DETERMINERS and lw[i].endswith(("ed", "ing")))):
            # "flowers neatly arranged in a vase", "the batter just finishing a swing": the
            # adverb ended the phrase
            return True
        if prev.endswith(("'s", "’s", "s'")) or prev in ATTRIBUTE_WORDS or prev in ADVERBS \
                or prev == "of" or table_adverb(prev):
            return False
        if self.np_start < 0 and self.pk == REL:
            return objectish and vc != NOUNISH
        w = lw[i]
        if vc == VERB:
            return objectish or prep or not w.endswith("ed") or self.verb_after_subject(i)
        if vc == WEAK:
            return objectish or (prep and w.endswith(("ing", "ed"))) \
                or self.verb_after_subject(i) or self.person_doing(i)
        return False

    def person_doing(self, i: int, before_preposition: bool = False) -> bool:
        """Whether the ``-ing`` form at ``i``, right after the noun of the open phrase naming
        people (:data:`~parsers.lexicon.WEARER_NOUNS`, or their plural), is their verb before a
        bare object (``two men getting food at``, ``a man cooking pizza``), or with
        ``before_preposition`` also before a preposition (``a man writing on a board``):
        people name no compound with such a form."""
        lw = self.lw
        if self.np_start < 0 or not self.np_content or not lw[i].endswith("ing") \
                or i - 1 < self.np_det_end or i + 1 >= self.n:
            return False
        prev, nxt = lw[i - 1], lw[i + 1]
        if not lexicon_form(prev, WEARER_NOUNS) or nxt in _TRYING_VERBS:
            return False  # "getting ready to": see _before_ready
        if before_preposition and self.rel_trie.longest(lw, i + 1) > i + 1:
            return True
        # an attribute word only before a noun of its own (``selling hot dogs``)
        if nxt in ATTRIBUTE_WORDS:
            return i + 2 < self.n and self.bare_noun_at(i + 2)
        return self.bare_noun_at(i + 1)

    def noun_form_people_do(self, i: int) -> bool:
        """Whether the ``-ing`` form at ``i``, a verb of the word-class table that the
        lexicon knows otherwise (``writing``, ``painting``; not ``being``), is people's verb
        here (:meth:`person_doing`, also before a preposition)."""
        w = self.lw[i]
        return w not in COPULAS and bool(_verb_class(w)) and self.person_doing(i, True)

    def bare_noun_at(self, k: int) -> bool:
        """Whether the word at ``k`` may be a noun: a word, no conjunction, determiner,
        adjective or adverb (``getting ready``), and no relation phrase starts there."""
        w = self.lw[k]
        return w.isalpha() and w not in CONJUNCTION_WORDS and w not in DETERMINERS \
            and not is_modifier(w) and not table_adverb(w) \
            and self.rel_trie.longest(self.lw, k) == k

    def adverbs_end(self, i: int) -> int:
        """The index after the adverbs (of the lexicon or the word-class table) from ``i``
        on that start no relation phrase (``together``, ``idly``; not ``up``)."""
        lw, n = self.lw, self.n
        k = i
        while k < n and (lw[k] in ADVERBS or table_adverb(lw[k])) \
                and self.rel_trie.longest(lw, k) == k:
            k += 1
        return k

    def preposition_after_adverbs(self, i: int) -> bool:
        """Whether one or more adverbs at ``i`` are followed by a preposition and its object
        (``together in the``)."""
        lw, n = self.lw, self.n
        k = self.adverbs_end(i)
        if k == i or k >= n:
            return False
        end = self.rel_trie.longest(lw, k)
        return k < end < n and lw[end][:1].isalnum()

    def starts_relation(self, i: int) -> bool:
        """Whether a relation phrase (or a verb) starts at ``i``, after adverbs and locative
        fillers."""
        lw, n = self.lw, self.n
        while i < n and (lw[i] in ADVERBS or lw[i] in LOCATIVE_FILLERS) \
                and self.rel_trie.longest(lw, i) == i:
            i += 1
        if i >= n:
            return False
        return (self.rel_trie.longest(lw, i) > i or lw[i] in VERB_FORMS
                or table_verb_class(lw[i]) == VERB)

    def relation_follows(self, i: int) -> bool:
        """Whether a relation phrase and its object start at ``i`` (``and near the box``),
        which tells a coordinated clause from coordinated attributes (``black and white``)."""
        lw = self.lw
        end = self.rel_trie.longest(lw, i)
        return end > i and end < len(lw) and (lw[end] in DETERMINERS
                                              or lw[end] in _OBJECT_PRONOUNS)

    def opens_clause(self, i: int) -> bool:
        """Whether the words at ``i`` can follow a relative pronoun (``and that is``)."""
        if i >= self.n:
            return False
        w = self.lw[i]
        return (w in COPULAS or w in _NEG_COPULAS or w in _NEG_AUXILIARIES or w in AUXILIARIES
                or w in LIGHT_VERBS
                or (w in VERB_FORMS and w not in WEAK_VERB_FORMS)
                or table_verb_class(w) in (VERB, WEAK))

    def partitive(self, det_end: int, i: int) -> bool:
        """Whether the ``of`` at ``i`` follows a noun of quantity or of depiction that leaves
        the head to the noun after ``of`` (``a pair of scissors``, ``two large piles of
        leaves``, ``two of the buildings``, ``a picture of a cat``)."""
        lw = self.lw
        prev = lw[i - 1]
        if prev in _COUNT_WORDS or prev.isdigit():
            # "two of the buildings", "one of many arches", "one of three cats"
            return i - 1 == det_end and i + 1 < len(lw) and (
                lw[i + 1] in DETERMINERS or (lw[i + 1] in _COUNT_WORDS and lw[i + 1] != "one")
                or lw[i + 1].isdigit())
        if prev in _OPENING_REGIONS and self.pk in (-1, HARD):
            # "the back of a man wearing a cap" opens the caption: it is about the man
            return all(lw[k] in ATTRIBUTE_WORDS for k in range(det_end, i - 1))
        if prev in PICTURE_NOUNS and self.np_start > 0 \
                and lw[self.np_start - 1] in ("paints", "paint", "painting", "painted"):
            return True  # "the scene paints a vivid picture of city life": no picture
        if prev not in PARTITIVE_NOUNS or (prev in PICTURE_NOUNS and self.displayed(i + 1)):
            return False
        # words of a description before the noun (``an immense pile``, ``a black and white
        # photo``, ``a blurry image``), no noun of its own (``a bread slice of``)
        return all(lw[k] in ATTRIBUTE_WORDS or lw[k] in ADVERBS or lw[k].isdigit()
                   or lw[k] in ("and", "or") or is_modifier(lw[k])
                   or (lw[k].endswith(_DESCRIPTION_ENDINGS) and lw[k] not in PARTICIPLE_NOUNS)
                   for k in range(det_end, i - 1))

    def displayed(self, j: int) -> bool:
        """Whether the text goes on about a picture itself after the noun phrase at ``j``
        that names what it shows: a copula (``a picture of a bird is on the wall``), a verb
        of display (``a photo of a cat taped to the door``) or a preposition before a
        thing pictures are displayed on (``a drawing of a horse on the fridge``)."""
        lw, n = self.lw, self.n
        k = j
        while k < n and k - j < 6:
            w = lw[k]
            if w in RELATIVE_PRONOUNS:
                return False  # "a close up of donuts that are plain": the donuts are
            if w in COPULAS or w in DISPLAY_VERB_FORMS:
                return k > j
            if w in ("on", "in", "inside", "above", "over", "across"):
                m = k + 1
                while m < n and m - k < 4 and (lw[m] in DETERMINERS or lw[m] in ATTRIBUTE_WORDS):
                    m += 1
                return m < n and lw[m] in DISPLAY_SURFACE_NOUNS \
                    and not (m + 1 < n and lw[m + 1] == "of")
            if not w.isalpha() or w in ("of", "and", "or", "with") or w in VERB_FORMS \
                    or self.rel_trie.longest(lw, k) > k:
                return False
            k += 1
        return False

    def region_end(self, end: int) -> int:
        """End of a relation phrase ending at ``end``, extended over a place noun and ``of``
        (``along`` + ``the side of``, ``climbing`` + ``the edge of``, ``on`` + ``each side
        of``)."""
        lw, n = self.lw, self.n
        j = end + 1 if end < n and lw[end] in ("the", "a", "an") else end
        if j + 3 < n and lw[j] in _REGION_QUANTIFIERS and lw[j + 1] in REGION_NOUNS:
            j += 1  # "on each side of", "along both sides of", "on one end of"
        if j + 2 < n and lw[j] in REGION_NOUNS and lw[j + 1] == "of" and lw[end - 1] != "of" \
                and lw[j + 2][:1].isalnum():
            return j + 2
        return end

    def is_participle(self, i: int) -> bool:
        """Whether ``lw[i]`` looks like a participle the lexicon does not know."""
        w = self.lw[i]
        if w in PARTICIPLE_NOUNS or w in ATTRIBUTE_WORDS or not w.isalpha() \
                or table_verb_class(w) == NOUNISH:
            return False
        if w.endswith("ing"):
            stem = w[:-3]
        elif w.endswith("ed"):
            stem = w[:-2]
        else:
            return False
        return len(stem) >= 3 and any(ch in "aeiouy" for ch in stem)

    # ------------------------------------------------------- noun phrases
    def maybe_peel_verb(self, start: int, det_end: int, end: int) -> None:
        """Close the noun phrase ``start:end``; a last word that looks like an unknown verb
        (``the man juggles the balls``) becomes a relation, with a warning."""
        lw, chunks, tokens = self.lw, self.chunks, self.tokens
        last = lw[end - 1]
        # a bare word between a copula and an article ("is congruent the cat") can only
        # be a relation the lexicon lacks (an adjective used as a preposition)
        if (end - start == 1 and det_end == start and chunks and chunks[-1].kind == COP
                and chunks[-1].end == start and end < len(lw) and lw[end] in ("the", "a", "an")
                and last not in ATTRIBUTE_WORDS and last not in ADVERBS):
            chunks.append(Chunk(REL, start, end))
            self.warnings.append(f"guessed that {tokens[start]!r} (token {start}) is a "
                                 f"relation between two noun phrases")
            return
        content = lw[det_end:end - 1]
        if (len(content) >= 1 and last.endswith(_VERB_ENDINGS) and last not in ATTRIBUTE_WORDS
                and any(w not in ATTRIBUTE_WORDS for w in content) and content[-1] != "of"
                and self.compound_trie.longest(lw, end - 2) != end):
            self.emit_np(start, det_end, end - 1)
            chunk = Chunk(REL, end - 1, end)
            chunk.verb = True
            chunks.append(chunk)
            self.warnings.append(f"guessed that {tokens[end - 1]!r} (token {end - 1}) is a "
                                 f"verb relating two noun phrases")
            return
        self.emit_np(start, det_end, end)

    def emit_np(self, start: int, det_end: int, end: int) -> None:
        """Emit the noun phrase ``start:end`` whose determiners end at ``det_end``: its head,
        modifiers and owner."""
        if end <= start:
            return
        lw, tokens = self.lw, self.tokens
        det_end = min(max(det_end, start), end)
        # a participle the lexicon does not know ending the phrase is an intransitive verb
        # (``a man in a black shirt laughing``), not its head
        while end - 1 > det_end and lw[end - 1].endswith("ing") \
                and self.is_participle(end - 1) and lw[end - 2] not in ATTRIBUTE_WORDS \
                and self.compound_trie.longest(lw, end - 2) != end:
            end -= 1
        # an attribute or a past participle after a possessed part (``her mouth open``,
        # ``its eyes closed``, ``his hand extended``) describes the part, which stays the head
        posture = ""
        if end - 2 >= det_end and (lw[end - 1] in ATTRIBUTE_WORDS
                                   or lw[end - 1] in _PART_POSTURES
                                   or (lw[end - 1].endswith("ed") and len(lw[end - 1]) > 4)) \
                and lw[start] in ("his", "her", "its", "their", "my", "your") \
                and lexicon_form(lw[end - 2], OWNED_PART_NOUNS):
            end -= 1
            posture = tokens[end]
        if not posture and end - 1 > det_end and lw[end - 1] in ATTRIBUTE_WORDS \
                and lw[end - 1].endswith("ing") and lw[end - 2] not in ATTRIBUTE_WORDS:
            end -= 1
            posture = tokens[end]
        chunk = Chunk(NP, start, end)
        if self.quote is not None:
            chunk.quote, self.quote = self.quote, None
        if det_end == end:  # determiners only ("this", "that"): the last one is the head
            chunk.head = tokens[end - 1]
            self.chunks.append(chunk)
            return
        # head: a multi-word noun of the lexicon ending the phrase, else the last word;
        # in a partitive phrase ("a pair of scissors") the noun after "of"
        head_start = end - 1
        for k in range(det_end, end - 1):
            if self.compound_trie.longest(lw, k) == end:
                head_start = k
                break
        for k in range(det_end, end - 1):
            if _names_a_label(lw, k, end):
                # "the number 8169", "the words `` no parking ''": the label is the head,
                # its name a modifier
                chunk.head = tokens[k]
                chunk.modifiers = [tokens[j] for j in range(det_end, end)
                                   if j != k and lw[j] not in _OPEN_QUOTES
                                   and lw[j] not in _CLOSE_QUOTES]
                self.chunks.append(chunk)
                return
        chunk.head = " ".join(tokens[head_start:end])
        mods_start = det_end
        for k in range(det_end + 1, head_start):
            if lw[k] == "of" and lw[k - 1] in _OPENING_REGIONS:
                # "the white top of a red car": the car is red, not white
                mods_start = k + 1
                while mods_start < head_start and lw[mods_start] in DETERMINERS:
                    mods_start += 1
        quoted = range(*chunk.quote) if chunk.quote is not None else range(0)
        # a determiner after a partitive "of" describes nothing (`one of the dogs`)
        chunk.modifiers = [tokens[k] for k in range(mods_start, head_start)
                           if lw[k] not in ("of", "and", "or", ",") and k not in quoted
                           and (lw[k][:1].isalnum() or lw[k] not in _QUOTE_MARKS)
                           and not (k > 0 and lw[k - 1] == "of" and lw[k] in DETERMINERS)]
        chunk.modifiers = _attribute_words(chunk.modifiers)
        self.split_owner(chunk, det_end, head_start)
        if posture:
            chunk.modifiers.append(posture)
        chunk.attr_only = det_end == start and all(
            lw[k] in ATTRIBUTE_WORDS or lw[k] in ADVERBS or lw[k] in ("and", "or")
            for k in range(start, end))
        self.chunks.append(chunk)

    def split_owner(self, chunk: Chunk, det_end: int, head_start: int) -> None:
        """Move a possessor (``the man 's hat``, ``the girl's dress``) or a whole before a
        part noun (``the clock hands``) out of the noun phrase ``chunk`` into its owner."""
        lw, tokens = self.lw, self.tokens
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
                or w in PART_NOUNS or w in _COUNT_WORDS or is_modifier(w)
                or (w.endswith(_ADJECTIVE_ENDINGS) and w not in PARTICIPLE_NOUNS)
                or (w.endswith(("al", "ic")) and w not in _AL_IC_WHOLES)
                or (w.endswith("y") and w not in _Y_NOUNS)):
            return
        mods = [tokens[j] for j in range(det_end, k) if lw[j] not in ("of", "and", "or")]
        chunk.owner = (start, k + 1, tokens[k], mods, k + 1)
        chunk.start = k + 1
        chunk.modifiers = []
        chunk.attr_only = False


ChunkRule = Callable[[Chunker], bool]


def only_for(*words: Iterable[str]) -> Callable[[ChunkRule], ChunkRule]:
    """Declare the only (lowercase) words at which a chunking rule can apply: the chunker
    does not try it at other words.  A speed-up, not a condition: the rule tests its words
    itself, and one without this declaration is tried at every word."""
    allowed = frozenset().union(*words)

    def declare(rule: ChunkRule) -> ChunkRule:
        rule.words = allowed  # type: ignore[attr-defined]
        return rule
    return declare


# ------------------------------------------------------------------ rules
@only_for({"'s", "’s"})
def detached_possessive(s: Chunker) -> bool:
    """A detached ``'s`` after a noun, before a word that starts no relation, stays in the
    noun phrase (``the man 's hat``); :meth:`Chunker.split_owner` makes the man an owner."""
    i, lw = s.i, s.lw
    if s.w in ("'s", "’s") and s.np_start >= 0 and s.np_content and i + 1 < s.n \
            and lw[i + 1][:1].isalnum() and not s.starts_relation(i + 1):
        s.i += 1
        return True
    return False


@only_for(_OPEN_QUOTES)
def quoted_name(s: Chunker) -> bool:
    """Quoted words right after a label noun (``the sign `` stop ''``, ``the number ' 3 '``)
    name it: they stay in its noun phrase, up to the closing quote."""
    i, lw, n = s.i, s.lw, s.n
    if s.np_start < 0 or not s.np_content or s.w not in _OPEN_QUOTES \
            or lw[i - 1] not in LABEL_NOUNS:
        return False
    k = i
    while k < n and lw[k] in _OPEN_QUOTES:  # "`", "`" : one quote in two tokens
        k += 1
    opened = k
    for k in range(opened, min(n, opened + 8)):
        if lw[k] in _CLOSE_QUOTES and k > opened:
            while k < n and lw[k] in _CLOSE_QUOTES:
                k += 1
            s.i = k
            return True
        if lw[k] in _HARD_PUNCT:
            return False
    return False


_QUOTE_OPENERS = frozenset({"`", '"', "“"})
_QUOTE_CLOSERS = frozenset({"'", '"', "”"})
_QUOTE_MARKS = _QUOTE_OPENERS | _QUOTE_CLOSERS


@only_for(_QUOTE_OPENERS)
def quoted_words(s: Chunker) -> bool:
    """Quoted words not after a label noun are the words written on a thing, an entity
    FACTUAL names ``words``: right before a noun they label it (``a `` stop '' sign``, kept
    for that noun's phrase), elsewhere they are a noun phrase of their own (``a sign that
    says `` stop ''``); a verb of saying before them (``the building says``) ends the
    noun phrase before it."""
    i, lw, n = s.i, s.lw, s.n
    if s.w not in _QUOTE_OPENERS or (s.np_start < 0 and all(c.kind in (SOFT, HARD)
                                                             for c in s.chunks)):
        return False  # a quoted caption ("`` books on a shelf ''") is no quotation
    k = i
    while k < n and lw[k] in _QUOTE_OPENERS and k - i < 2:
        k += 1
    opened = k
    close = -1
    for j in range(opened + 1, min(n, opened + 16)):
        if lw[j] in _QUOTE_CLOSERS:
            close = j
            break
    if close < 0 or not any(w[:1].isalnum() for w in lw[opened:close]):
        return False
    end = close
    while end < n and lw[end] in _QUOTE_CLOSERS and end - close < 2:
        end += 1
    if s.np_start >= 0 and s.np_content and lw[i - 1] in SAYING_VERBS:
        if i - 1 > s.np_start:
            s.emit_np(s.np_start, s.np_det_end, i - 1)  # "the sign on the building says"
        s.np_start = -1
        s.np_content = False
        s.i = i - 1
        s.add_relation(i, True)
    nxt = lw[end] if end < n else ""
    if nxt.isalpha() and nxt not in DETERMINERS and nxt not in CONJUNCTION_WORDS \
            and s.rel_trie.longest(lw, end) == end and nxt not in VERB_FORMS \
            and nxt not in COPULAS and nxt not in RELATIVE_PRONOUNS:
        if s.np_content:
            s.close_np(i)  # an open phrase of determiners only goes on after the quote
        s.quote = (opened, close)
        s.i = end
        return True
    s.close_np(i)
    chunk = Chunk(NP, i, end)
    chunk.head = "words"
    chunk.modifiers = [" ".join(s.tokens[opened:close])]
    s.chunks.append(chunk)
    s.i = end
    return True


def punctuation(s: Chunker) -> bool:
    """A token that is no word ends the noun phrase: ``.`` ``!`` ``?`` end a sentence, ``&``
    is a conjunction, anything else (``,`` ``;`` ...) is soft punctuation."""
    w = s.w
    first = w[:1]
    if first.isalnum() or first == "_":
        return False
    s.close_np(s.i)
    kind = HARD if w in _HARD_PUNCT else CONJ if w == "&" else SOFT
    s.add(kind, s.i + 1)
    s.neg_at = -1
    return True


#: words that say how a picture was taken (``a side view of``, ``an aerial shot of``)
_VIEW_QUALIFIERS = frozenset({"aerial", "side", "top", "front", "rear", "back", "overhead",
                              "distant", "wide", "angled", "low", "high", "closer", "close"})


@only_for({"a", "an", "the"} | _PICTURE_NOUNS | _VIEW_QUALIFIERS | ATTRIBUTE_WORDS)
def picture_frame(s: Chunker) -> bool:
    """``a photo of`` (``showing``, ``with``; ``a close up of``, ``a black and white photo
    of``, ``aerial view of``) opening a sentence is not part of the description: skipped,
    unless the text goes on about the picture itself (``a photo of a cat taped to the
    door``: :meth:`Chunker.displayed`)."""
    i, lw, n = s.i, s.lw, s.n
    if s.np_start >= 0 or s.pk not in (-1, HARD):
        return False
    article = s.w in ("a", "an", "the")
    k = i + 1 if article else i
    while k < n and k - i < 5 and lw[k] not in _PICTURE_NOUNS \
            and lw[k:k + 2] != ["close", "up"] and (
                lw[k] in ATTRIBUTE_WORDS or lw[k] in _VIEW_QUALIFIERS
                or (article and _adjective_word(lw[k]))
                or (lw[k] in ("and", "&") and k > i + article)):
        k += 1
    if lw[k:k + 2] == ["close", "up"]:
        k += 2
    elif k < n and lw[k] in _PICTURE_NOUNS:
        k += 1
    else:
        return False
    if k < s.n and lw[k] in ("of", "showing", "with") \
            and not (lw[k] == "of" and s.displayed(k + 1)):
        s.i = k + 1
        return True
    return False


@only_for({"there"})
def there_is(s: Chunker) -> bool:
    """``there is`` / ``there are`` opening a clause is one chunk."""
    if s.np_start < 0 and s.w == "there" and s.i + 1 < s.n and s.lw[s.i + 1] in COPULAS:
        s.add(THERE, s.i + 2)
        return True
    return False


@only_for(SUBJECT_PRONOUNS)
def subject_pronoun(s: Chunker) -> bool:
    """A subject pronoun opening a clause (``. They smile at a dog``, ``and she is``) is a
    noun phrase of its own, and a verb is expected after it
    (:meth:`Chunker.expects_predicate`); so is one right after a noun (``the kite he
    flies``), which ends that noun's phrase."""
    if s.np_start >= 0 and s.np_content and s.i > s.np_start and s.w in SUBJECT_PRONOUNS \
            and s.i + 1 < s.n and s.lw[s.i + 1][:1].isalpha() \
            and s.lw[s.i - 1] not in DETERMINERS and s.lw[s.i - 1].isalpha() \
            and s.lw[s.i - 1] not in ADVERBS and not table_adverb(s.lw[s.i - 1]):
        # "the board it is lying on", "the kite he flies": the noun phrase ends before the
        # subject of an object relative clause without "that"
        s.close_np(s.i)
        s.np_start, s.np_det_end, s.np_content = s.i, s.i, True
        s.close_np(s.i + 1)
        s.i += 1
        return True
    if s.np_start < 0 and s.pk in (-1, HARD, SOFT, CONJ) and s.w in SUBJECT_PRONOUNS:
        s.np_start, s.np_det_end, s.np_content = s.i, s.i, True
        s.close_np(s.i + 1)
        s.i += 1
        return True
    return False


@only_for({"of"})
def partitive_of(s: Chunker) -> bool:
    """The ``of`` after a noun of quantity or depiction (``a pair of scissors``, ``two piles
    of leaves``, ``a photo of a dog``) stays in the noun phrase, whose head is after it."""
    i, lw = s.i, s.lw
    if s.np_start >= 0 and s.np_content and s.w == "of" and i + 1 < s.n \
            and lw[i + 1][:1].isalnum() and s.partitive(s.np_det_end, i):
        s.i += 1
        return True
    return False


#: attribute words that may be listed with commas inside a noun phrase (not numbers)
_LISTED_ATTRIBUTES = ATTRIBUTE_WORDS - _COUNT_WORDS


@only_for({","})
def attribute_list_comma(s: Chunker) -> bool:
    """A comma between attribute words that a noun ends (``a yellow , red , and blue
    logo``, ``a large white , blue and red jet``) stays in the noun phrase, with an ``and``
    / ``or`` right after it; the attributes describe that noun, and the comma separates
    no list of things.  Participles may be listed among them (``tall , swaying grass``,
    ``a long , flowing , red dress``; after one, ``a long flowing , red dress``, when an
    attribute word not in ``-ing`` follows the comma; not after a copula: ``the grass is
    tall , covering hills``); the chunker then goes on at the noun, so no listed
    participle is taken for a verb."""
    i, lw, n = s.i, s.lw, s.n
    if s.np_start < 0 or not s.np_content or s.w != ",":
        return False
    after_participle = lw[i - 1] not in _LISTED_ATTRIBUTES
    if after_participle and not (i - 2 >= s.np_det_end and lw[i - 2] in _LISTED_ATTRIBUTES
                                 and _listed_participle(s, i - 1)):
        return False
    j = i + 1
    last_attr, participle, attribute = -1, False, False
    while j < n and j - i < 12:
        if lw[j] in _LISTED_ATTRIBUTES:
            last_attr = j
            attribute = attribute or not lw[j].endswith("ing")
        elif _listed_participle(s, j) and j + 1 < n and (
                lw[j + 1] in _LISTED_ATTRIBUTES or lw[j + 1] in (",", "and", "or")
                or _could_be_noun(s, j + 1)):
            last_attr, participle = j, True
        elif lw[j] not in (",", "and", "or"):
            break
        j += 1
    if last_attr != j - 1 or j >= n or not _could_be_noun(s, j):
        return False
    if after_participle and not attribute:
        return False  # "blue piping , standing as sentinels": "piping" was the noun
    if participle:
        s.i = j  # a listed participle is no verb of its own: go on at the noun
    else:
        s.i += 2 if i + 1 < n and lw[i + 1] in ("and", "or") else 1
    return True


def _listed_participle(s: Chunker, j: int) -> bool:
    """Whether the word ``j`` may be a participle listed among attribute words: ``-ing``
    or ``-ed``, no start of a relation phrase, and not after a copula."""
    w = s.lw[j]
    return s.pk != COP and w.endswith(("ing", "ed")) and w.isalpha() \
        and s.rel_trie.longest(s.lw, j) == j


def _could_be_noun(s: Chunker, j: int) -> bool:
    """Whether the word ``j`` may be the noun that attributes before it describe: a word
    of letters that is no determiner, conjunction, verb, adverb or start of a relation."""
    w = s.lw[j]
    return w.isalpha() and w not in DETERMINERS and w not in CONJUNCTION_WORDS \
        and w not in VERB_FORMS and w not in ADVERBS and s.rel_trie.longest(s.lw, j) == j \
        and table_verb_class(w) != VERB


def _adjective_word(w: str) -> bool:
    """A word used mostly as an adjective (not an adverb: ``here``), or a hyphenated
    compound that ends in one or in a past participle (``well-lit``, ``well-decorated``)."""
    if is_modifier(w) and not table_adverb(w):
        return True
    last = w.rsplit("-", 1)[-1]
    return last != w and last.isalpha() and (
        last in ATTRIBUTE_WORDS or is_modifier(last) or last.endswith("ed"))


@only_for({"and", "or"})
def attribute_coordination(s: Chunker) -> bool:
    """``and`` / ``or`` between two attribute words (``a black and white cat``) stays in the
    noun phrase, unless a relation and its object follow; so it does between an adjective
    right after a determiner and another before a noun (``a well-lit and well-decorated
    room``, ``a tall and slender vase``; not ``they stand tall and proud``)."""
    i, lw, n = s.i, s.lw, s.n
    if not (s.np_start >= 0 and s.np_content and s.w in ("and", "or") and i + 2 < n):
        return False
    before, after, then = lw[i - 1], lw[i + 1], lw[i + 2]
    attributes = (before in ATTRIBUTE_WORDS and after in ATTRIBUTE_WORDS
                  and not s.garment_top(i - 1)) or (
        s.np_start < s.np_det_end == i - 1 and _adjective_word(before)
        and (after in ATTRIBUTE_WORDS or _adjective_word(after)) and then.isalpha()
        and after not in DETERMINERS and s.rel_trie.longest(lw, i + 1) == i + 1
        and s.rel_trie.longest(lw, i + 2) == i + 2)
    if attributes and then not in CONJUNCTIONS and not s.relation_follows(i + 1):
        s.i += 1
        return True
    return False


def compound_noun(s: Chunker) -> bool:
    """A multi-word noun of the lexicon (``hair drier``, ``teddy bear``) stays whole in a
    noun phrase."""
    i = s.i
    c_end = s.compound_trie.longest(s.lw, i) if s.w in s.compound_trie.root else i
    if c_end > i + 1:
        if s.np_start < 0:
            s.np_start, s.np_det_end = i, i
        s.np_content = True
        s.i = c_end
        return True
    return False


#: fillers that right after a noun, before a relation, are not part of it either (``a
#: door found in a kitchen``, ``a boat seen from the shore``); ``located`` and ``placed``
#: there are verbs FACTUAL keeps (``placed on``: 14 of 14 on its length training split)
_FILLERS_AFTER_NOUN = frozenset({"found", "seen", "shown", "pictured", "visible", "situated",
                                 "kept"})


#: adjectives of height that before a preposition say how high (``a kite high in the sky``,
#: ``flying low over the water``): adverbs there, no noun
HEIGHT_ADVERBS = frozenset({"high", "higher", "low", "lower", "deep", "deeper"})


@only_for(ADVERBS, LOCATIVE_FILLERS, _FILLERS_AFTER_NOUN, HEIGHT_ADVERBS)
def adverb_before_relation(s: Chunker) -> bool:
    """An adverb before a relation (``directly above``), and a filler after a copula (``is
    located on``) or right after a noun (``a door found in``), end the noun phrase and are
    not part of the relation: skipped.  So is an adjective of height right after a noun or
    a verb, before a preposition (``a kite high in the sky``, ``a flag hanging high on a
    pole``: the relation is ``hanging on``)."""
    w, i = s.w, s.i
    if (w in ADVERBS or (w in LOCATIVE_FILLERS and s.pk == COP and s.np_start < 0)
            or (w in _FILLERS_AFTER_NOUN and s.np_start >= 0 and s.np_content)
            or (w in HEIGHT_ADVERBS and s.rel_trie.longest(s.lw, i + 1) > i + 1
                and ((s.np_start >= 0 and i > s.np_det_end
                      and not s.lw[i - 1].endswith(("ed", "ing")))
                     or (s.np_start < 0 and s.pk == REL and s.chunks[-1].verb)))) \
            and (s.np_start < 0 or s.np_content) \
            and s.rel_trie.longest(s.lw, i) == i and (
                s.starts_relation(i + 1)
                # "a man just opened the door": a participle of the table before its object
                or (w in ADVERBS and s.np_start >= 0 and i + 2 < s.n
                    and s.lw[i + 1].endswith(("ed", "ing"))
                    and table_verb_class(s.lw[i + 1]) > 0 and s.lw[i + 2] in DETERMINERS)
                # "are seen cooking pizzas": after a copula the filler's verb may be any
                # -ing form of the word-class table
                or (s.pk == COP and s.np_start < 0 and w in LOCATIVE_FILLERS
                    and i + 1 < s.n and s.lw[i + 1].endswith("ing")
                    and table_verb_class(s.lw[i + 1]) > 0)):
        s.close_np(i)
        s.i += 1
        return True
    return False


def unknown_adverb(s: Chunker) -> bool:
    """An adverb the lexicon lacks (``together``, ``apart``, ``closely``;
    :func:`parsers.word_classes.is_adverb`) is not part of a noun phrase: unless a content
    word follows it inside the phrase (``a brightly coloured kite``; right after a
    determiner and adverbs also a verb form, ``a well used skateboard``, ``a very well
    trained dog``; not before another such adverb, ``sitting closely together``), it ends
    the open phrase and is skipped."""
    i, lw, n = s.i, s.lw, s.n
    if not table_adverb(s.w) or s.w in s.rel_trie.root:
        return False
    nxt = lw[i + 1] if i + 1 < n else ""
    if nxt[:1].isalnum() and nxt not in DETERMINERS and nxt not in COPULAS \
            and nxt not in CONJUNCTIONS and not table_adverb(nxt) and (
                (not s.starts_relation(i + 1)
                 and (s.np_start < 0 or not s.np_content or nxt in ATTRIBUTE_WORDS))
                or (s.np_start >= 0 and s.rel_trie.longest(lw, i + 1) == i + 1
                    and all(lw[k] in ADVERBS for k in range(s.np_det_end, i)))):
        return False
    s.close_np(i)
    s.i += 1
    return True


def participle_after_comma_ending_sentence(s: Chunker) -> bool:
    """An ``-ing`` form alone between a comma and the sentence's end (``a woman next to a
    chair , relaxing .``) is a verb without an object, which names no relation: skipped,
    not an entity.  A noun in ``-ing`` (``painting``, ``icing``) or a word mostly a noun
    stays one."""
    i, lw, n = s.i, s.lw, s.n
    w = s.w
    if s.np_start >= 0 or s.pk != SOFT or not w.endswith("ing") or w in PARTICIPLE_NOUNS \
            or (i + 1 < n and lw[i + 1] not in (".", "!", "?")):
        return False
    vc = _verb_class(w)
    if w not in VERB_FORMS and vc not in (VERB, WEAK):
        return False
    s.i += 1
    return True


@only_for({"one"})
def one_another(s: Chunker) -> bool:
    """``one another`` is one noun phrase, like ``each other`` (``pots near one another on
    a table``): not ``one`` and a phrase opened by ``another``."""
    i = s.i
    if s.w != "one" or s.np_start >= 0 or i + 1 >= s.n or s.lw[i + 1] != "another":
        return False
    s.np_start, s.np_det_end, s.np_content = i, i + 1, True
    s.close_np(i + 2)
    s.i = i + 2
    return True


@only_for({"each"})
def floating_each(s: Chunker) -> bool:
    """``each`` right after a noun phrase and before a relation (``a man and a woman each
    holding a glass``) says the relation holds for every one of them: no noun phrase,
    skipped."""
    if s.w == "each" and s.np_start >= 0 and s.np_content and s.starts_relation(s.i + 1) \
            and s.lw[s.i + 1] not in DETERMINERS:
        s.close_np(s.i)
        s.i += 1
        return True
    return False


@only_for({"to"})
def infinitive(s: Chunker) -> bool:
    """``to`` before a verb in its base form and a preposition or an object (``about to
    bite into a sandwich``, ``a ladder to reach the roof``) is no relation: the verb is;
    also before a base form that ends the clause (``sitting at a table to eat .``) and
    after ``about`` / ``ready`` / ``trying`` (``about to hit ball``, ``getting ready to
    bat``)."""
    i, lw, n = s.i, s.lw, s.n
    if s.w != "to" or i + 1 >= n:
        return False
    w = lw[i + 1]
    if w in DETERMINERS or w.endswith(("s", "ed", "ing")) or w in ATTRIBUTE_WORDS:
        return False
    if not (w in _BASE_VERBS or table_verb_class(w) in (VERB, WEAK)):
        # a noun of the lexicon that is also a verb, before its object (``reaches out to
        # drop a slice``)
        if not (_verb_class(w) in (VERB, WEAK) and i + 2 < n and lw[i + 2] in DETERMINERS
                and s.rel_trie.longest(lw, i + 1) == i + 1):
            return False
        end, verb = i + 2, True
    else:
        end, verb = s.relation_end(i + 1, True) if i + 2 < n else (i + 1, False)
    if end <= i + 1 or not verb:
        # "getting ready to snowboard .", "about to hit ball": after a verb of trying, or
        # at the end of a clause, the base form is still the verb
        nxt = lw[i + 2] if i + 2 < n else ""
        after_try = i > 0 and lw[i - 1] in ("about", "ready", "trying", "going", "want",
                                            "wants", "preparing", "attempting") \
            and not (i > 1 and lw[i - 2] in DETERMINERS)  # not "at the ready to help"
        if not ((not nxt[:1].isalnum() and (w in _BASE_VERBS or table_verb_class(w) == VERB))
                or after_try):
            return False
        end = i + 2
    s.close_np(_before_ready(s, i))
    s.i = i + 1
    s.add_relation(end, True)
    return True


def _before_ready(s: Chunker, i: int) -> int:
    """Where the noun phrase open before the ``to`` at ``i`` ends: before ``ready`` (and
    ``getting`` before it) that follow its noun (``a player getting ready to hit the
    ball``: the player hits it, ``ready`` is no noun), else at ``i``."""
    lw = s.lw
    if s.np_start < 0 or lw[i - 1] != "ready":
        return i
    k = i - 1
    if lw[k - 1] in ("getting", "get", "gets", "got", "all"):
        k -= 1
    return k if k > max(s.np_start, s.np_det_end) else i


_SEEMING_VERBS = frozenset({"appears", "appear", "looks", "look", "seems", "seem"})


@only_for({"what"})
def what_appears_to_be(s: Chunker) -> bool:
    """``in what appears to be a storage room``, ``on what looks like a screen``: after a
    relation, ``what`` and a verb of seeming (``appears to be``, ``looks like``, ``seems
    to be``) hedge the noun after them, which is the relation's object: skipped."""
    i, lw, n = s.i, s.lw, s.n
    if s.np_start >= 0 or s.pk != REL or i + 3 >= n or lw[i + 1] not in _SEEMING_VERBS:
        return False
    if lw[i + 2] == "like":
        s.i = i + 3
        return True
    if lw[i + 2] == "to" and lw[i + 3] == "be":
        s.i = i + 4
        return True
    return False


@only_for({"here", "there"})
def here_and_there(s: Chunker) -> bool:
    """``here`` / ``there`` after a noun (``piles of grass here and there``, ``a cup
    there``) say where it is, not what: no noun phrase, skipped (``there is`` opening a
    clause is :func:`there_is`)."""
    i, lw, n = s.i, s.lw, s.n
    if s.w not in ("here", "there") or (i + 1 < n and lw[i + 1] in COPULAS):
        return False
    after_noun = s.np_start >= 0 and s.np_content
    after_here = i >= 2 and lw[i - 2] == "here" and lw[i - 1] in ("and", "&", "or")
    if not (after_noun or after_here) \
            or (not after_noun and i + 1 < n and s.starts_relation(i + 1)):
        return False  # "dotted here and there with trees" keeps its words
    s.close_np(i)
    s.i += 1
    return True


_COLOUR_NOUNS = frozenset({"color", "colour", "colors", "colours", "coloring", "colouring"})


@only_for({"in", "all", "far", "close"})
def adverbial_idiom(s: Chunker) -> bool:
    """``in color`` after an adjective (``the jacket is grey in color``), ``all the way``
    after a noun before a relation (``a line all the way down the road``) and ``far apart``
    / ``close together`` that start no relation phrase (``girls standing far apart``, not
    ``far apart from``) say how or how far, not where: no noun phrase and no relation,
    skipped (the relation after them goes on from the phrase before them)."""
    i, lw, n = s.i, s.lw, s.n
    if lw[i:i + 2] in (["far", "apart"], ["close", "together"]) \
            and s.rel_trie.longest(lw, i) == i:
        s.close_np(i)
        s.i += 2
        return True
    if s.w == "in" and i > 0 and i + 1 < n and lw[i + 1] in _COLOUR_NOUNS \
            and (_adjective_like(lw[i - 1]) or lw[i - 1].endswith("ish")) \
            and not (i + 2 < n and lw[i + 2] in ("of", "with")):
        k = i
        while s.np_start >= 0 and k - 1 > s.np_det_end and (_adjective_like(lw[k - 1])
                                                              or lw[k - 1].endswith("ish")):
            k -= 1
        if s.np_start >= 0 and k < i and k - 1 >= s.np_det_end and s.np_content \
                and not _adjective_like(lw[k - 1]):
            # "a fence green in colour": the colour after the noun describes it
            s.close_np(k)
            s.chunks[-1].modifiers.extend(s.tokens[k:i])
        else:
            s.close_np(i)
        s.i += 2
        return True
    if s.w == "all" and lw[i + 1:i + 3] == ["the", "way"] and i + 3 < n \
            and (s.np_start >= 0 or s.pk == NP) and s.rel_trie.longest(lw, i + 3) > i + 3:
        s.close_np(i)
        s.i += 3
        return True
    return False


@only_for(LIGHT_VERBS)
def light_verb_before_comparison(s: Chunker) -> bool:
    """A light verb before an attribute comparison (``that has the same colour as``, ``with
    the same shape as``) introduces the clause, like a copula, and is skipped."""
    i = s.i
    if s.w in LIGHT_VERBS and s.neg_at < 0 and (s.np_start < 0 or s.np_content):
        c_end = COMPARISON_TRIE.longest(s.lw, i + 1)
        if c_end > i + 1 and s.rel_trie.longest(s.lw, i + 1) == c_end:
            s.close_np(i)
            s.i += 1
            return True
    return False


_ATTRIBUTE_PARTICIPLES = frozenset(w for w in ATTRIBUTE_WORDS if w.endswith("ing"))


@only_for(_ATTRIBUTE_PARTICIPLES)
def participle_after_noun(s: Chunker) -> bool:
    """An attribute participle (``standing``, ``smiling``) right after a noun and before no
    preposition or object, also after adverbs (``two women sitting together``, ``a man
    standing and holding a racket``; not ``two cats sitting apart on a bed``), ends the
    noun phrase, whose head it describes."""
    i, lw = s.i, s.lw
    if s.w not in _ATTRIBUTE_PARTICIPLES or s.np_start < 0 or not s.np_content \
            or lw[i - 1] in ATTRIBUTE_WORDS:
        return False
    nxt = lw[i + 1] if i + 1 < s.n else ""
    if s.rel_trie.longest(lw, i + 1) > i + 1 or nxt in DETERMINERS or nxt in _OBJECT_PRONOUNS \
            or s.preposition_after_adverbs(i + 1):
        return False
    s.i += 1
    s.close_np(s.i)
    return True


@only_for(_ATTRIBUTE_PARTICIPLES)
def participle_ending_where_clause(s: Chunker) -> bool:
    """An attribute participle right after the copula of a clause opened by ``where``, at
    the clause's end (``the chair where the kid is sitting``), is the clause's verb, not a
    state of its subject: the verb whose place ``where`` names (``sitting on`` the chair)."""
    i, lw = s.i, s.lw
    if s.w not in _ATTRIBUTE_PARTICIPLES or s.np_start >= 0 or s.pk != COP \
            or (i + 1 < s.n and lw[i + 1] not in _CLAUSE_ENDS):
        return False
    for c in reversed(s.chunks):
        if c.kind in (HARD, SOFT, CONJ):
            return False
        if c.kind == PRON:
            if lw[c.start] != "where":
                return False
            s.add_relation(i + 1, True)
            return True
    return False


def _adjective_like(w: str) -> bool:
    """Whether a lowercase word reads as an adjective: an attribute word of the lexicon or
    one with an adjective ending (``cozy``, ``eastern``, ``wooden``)."""
    return w in ATTRIBUTE_WORDS or (w.isalpha() and len(w) > 3 and (
        w.endswith(_ADJECTIVE_ENDINGS + ("ern", "en", "ic", "al"))
        or (w.endswith("y") and w not in _Y_NOUNS)))


#: particles that join the verb before them when its object follows (``throwing away a
#: cup``, ``setting down a plate``)
_PARTICLES = frozenset({"away", "back", "up", "down", "out", "off"})


def participle_with_particle(s: Chunker) -> bool:
    """A participle right after a noun, a copula or ``and`` followed by a particle and the
    particle's object (``a man throwing away a cup``, ``a woman setting down a plate``) is
    a verb with its particle, even when the participle is also a noun (``setting``)."""
    i, lw, n = s.i, s.lw, s.n
    w = s.w
    if i + 2 >= n or lw[i + 1] not in _PARTICLES or not w.endswith(("ing", "ed")) \
            or not ((s.np_start >= 0 and s.np_content) or s.expects_predicate()
                    or (s.np_start < 0 and s.pk in (CONJ, SOFT))):
        return False
    obj = lw[i + 2]
    if not (obj in DETERMINERS or obj in _OBJECT_PRONOUNS or obj in _COUNT_WORDS
            or obj.isdigit()):
        return False
    if not (w in VERB_FORMS or w in PARTICIPLE_NOUNS or table_verb_class(w)
            or s.is_participle(i)) or lw[i - 1] in ATTRIBUTE_WORDS:
        return False
    s.close_np(i)
    s.add_relation(i + 2, True)
    return True


#: particles that, after a past participle behind its noun, end the noun phrase (``a light
#: turned off``, ``a tree set up in front of a window``, ``suitcases grouped together``)
_TRAILING_PARTICLES = _PARTICLES | {"together", "apart"}
#: past participles without ``-ed`` that take such a particle
_IRREGULAR_PARTICIPLES = frozenset({"set", "laid", "put", "cut", "hung", "lit", "spread",
                                    "shut", "left", "held", "thrown", "broken", "torn",
                                    "blown", "spun", "split"})


@only_for(_TRAILING_PARTICLES)
def particle_ending_a_verb(s: Chunker) -> bool:
    """A particle or adverb that ends the clause right after a verb (``a guy walking away
    .``, ``two cats sitting together``) completes the verb, which then has no object: no
    entity ``away``."""
    i, lw = s.i, s.lw
    if s.np_start < 0 and s.pk == REL and s.chunks[-1].verb and s.chunks[-1].end == i \
            and s.w in _TRAILING_PARTICLES and (i + 1 >= s.n or lw[i + 1] in _CLAUSE_ENDS):
        s.chunks[-1].end = i + 1
        s.i += 1
        return True
    return False


def participle_and_particle_after_noun(s: Chunker) -> bool:
    """A past participle and a particle right after a noun, before a preposition or the end
    of the clause (``a street light turned off .``, ``a tree set up in front of the
    window``), is a verb of that noun, not part of its name: the noun phrase ends before
    it, and the two words start a relation (with the preposition after them).  Before an
    ``-ing`` verb, with or without the particle, they only say how the things are."""
    i, lw, n = s.i, s.lw, s.n
    if s.np_start < 0 or not s.np_content or i + 1 >= n or i - 1 < s.np_det_end:
        return False
    w = s.w
    if not (w in _IRREGULAR_PARTICIPLES or (w.endswith("ed") and (
            w in VERB_FORMS or table_verb_class(w) in (VERB, WEAK) or s.is_participle(i)))):
        return False
    after = i + 2 if lw[i + 1] in _TRAILING_PARTICLES else i + 1
    if after == i + 1 and lw[s.np_start] in _POSSESSIVE_OPENERS:
        return False  # "his hand extended trying to": the participle describes the part
    if after < n and lw[after].endswith("ing") and (
            lw[after] in VERB_FORMS or table_verb_class(lw[after]) in (VERB, WEAK)):
        # "suitcases grouped together waiting on a sidewalk", "people gathered taking
        # pictures": the verb after them has the object; the words before it only say
        # how the things are
        s.close_np(i)
        s.i = after
        return True
    if after == i + 1:
        return False
    prep_end = s.rel_trie.longest(lw, after) if after < n else after
    if after < n and lw[after].isalpha() and prep_end <= after:
        return False  # "a broken off branch": the noun after the particle is the head
    s.close_np(i)
    s.add_relation(max(prep_end, after), True)
    return True


#: adverbs of degree, which say how much of an attribute, not one of their own
_INTENSIFIERS = frozenset({"very", "really", "extremely", "quite", "rather", "fairly",
                           "incredibly", "super"})


def _attribute_words(modifiers: list[str]) -> list[str]:
    """The modifiers of a noun phrase as attributes: ``colored`` after a word describes with
    it (``a dark colored shirt``: one attribute ``dark colored``, as FACTUAL writes ``dark
    color`` in 61 captions of its length training and dev splits, against 49 with ``dark``
    alone), and an adverb of degree goes (``a very tall man``: ``tall``, as FACTUAL writes it
    in 33 captions there, against 4 with ``very tall``)."""
    out: list[str] = []
    for m in modifiers:
        if m.lower() in _INTENSIFIERS:
            continue
        prev = out[-1].lower() if out else ""
        if m.lower() in ("colored", "coloured") and prev and prev not in ADVERBS \
                and not table_adverb(prev):  # "a brightly colored kite": two words
            out[-1] = f"{out[-1]} {m}"
        else:
            out.append(m)
    return out


#: nouns that name a kind of set (``a tv set``, ``a chess set``)
_SET_NOUNS = frozenset({"tv", "television", "radio", "chess", "drum", "tea", "dining", "train",
                        "lego", "play", "toy", "tool", "film", "movie", "jet", "test"})


@only_for({"set"})
def set_after_noun(s: Chunker) -> bool:
    """``set`` right after a noun and before a preposition (``a clock set into the bricks``,
    ``a plate set on a table``, ``chairs set up in a kitchen``) is the participle placing
    that noun, not a noun of a set of things: the phrase ends before it, and it starts a
    relation with the preposition (and a particle between: ``set up in``); with a particle
    before a determiner it is the verb of its own (``a person set down a treat``).  So is
    ``set`` right after a comma (``a scene of comfort , set within a bedroom``)."""
    i, lw, n = s.i, s.lw, s.n
    after_comma = s.np_start < 0 and s.pk == SOFT  # ", set within a bedroom"
    if s.w != "set" or i + 1 >= n or (not after_comma and (
            s.np_start < 0 or not s.np_content or i - 1 < s.np_det_end
            or lw[i - 1] in _SET_NOUNS or lw[i - 1] in ATTRIBUTE_WORDS)):
        return False
    k = i + 2 if lw[i + 1] in _PARTICLES else i + 1
    end = s.rel_trie.longest(lw, k) if k < n else k
    if k == i + 2 and end == k and k < n and lw[k] in DETERMINERS:
        end = k  # "set down a treat": the particle ends the relation
    elif end <= k or end >= n or not lw[end][:1].isalnum() or lw[k] == "of":
        return False  # "a small set of skis": a set
    s.close_np(i)
    s.add_relation(end, True)
    return True


@only_for({"looking"}, {w for w in VERB_FORMS if w.endswith("ed")})
def participle_inside_noun_phrase(s: Chunker) -> bool:
    """Inside a noun phrase, ``looking`` after an adjective (``a cozy looking room``,
    ``several strange looking birds``) and a past participle of the lexicon after an
    attribute word (``a white decorated room``) describe the noun after them, which
    follows directly (no determiner, preposition or pronoun between): modifiers, not
    verbs."""
    if s.np_start < 0 or not s.np_content:
        return False
    w, i, lw, n = s.w, s.i, s.lw, s.n
    if w == "looking":
        if not _adjective_like(lw[i - 1]):
            return False
    elif not (w.endswith("ed") and w in VERB_FORMS and lw[i - 1] in ATTRIBUTE_WORDS):
        return False
    nxt = lw[i + 1] if i + 1 < n else ""
    if not nxt.isalpha() or nxt in DETERMINERS or nxt in _OBJECT_PRONOUNS \
            or nxt in _COUNT_WORDS or nxt in CONJUNCTIONS or nxt in COPULAS \
            or nxt in ADVERBS or nxt in RELATIVE_PRONOUNS or table_adverb(nxt) \
            or s.rel_trie.longest(lw, i + 1) > i + 1 or nxt in VERB_FORMS:
        return False
    s.i += 1
    return True


#: past participles without ``-ed`` / ``-en`` that join a particle before a noun (``lit up``)
_BARE_PARTICIPLES = frozenset({"lit", "cut", "torn", "worn", "burnt", "spun", "shut", "split",
                               "upside"})


@only_for({"up", "down", "off", "out"})
def particle_inside_noun_phrase(s: Chunker) -> bool:
    """Inside a noun phrase, a particle right after a past participle, before the noun the
    two describe (``a lit up screen``, ``a broken off branch``, ``crumbled up cheese``,
    ``an upside down bucket``), is a modifier with it, not a relation: the noun after it,
    which follows directly (no determiner, preposition or pronoun between), is the head."""
    if s.np_start < 0 or not s.np_content:
        return False
    i, lw, n = s.i, s.lw, s.n
    prev = lw[i - 1]
    if not (prev.endswith(("ed", "en")) or prev in _BARE_PARTICIPLES) or not prev.isalpha():
        return False
    nxt = lw[i + 1] if i + 1 < n else ""
    if not nxt.isalpha() or nxt in DETERMINERS or nxt in _OBJECT_PRONOUNS \
            or nxt in _COUNT_WORDS or nxt in CONJUNCTIONS or nxt in COPULAS \
            or nxt in ADVERBS or nxt in RELATIVE_PRONOUNS or table_adverb(nxt) \
            or s.rel_trie.longest(lw, i + 1) > i + 1 or nxt.endswith("ing"):
        return False
    s.i += 1
    return True


#: particles that, after a possessed part, say how it is held (``with his arms up``)
_PART_POSTURES = frozenset({"up", "down", "out", "back", "off"})


@only_for(_PART_POSTURES)
def posture_of_part(s: Chunker) -> bool:
    """A particle right after a possessed part of the body (``with its tongue out``, ``with
    his arms up``, ``with its head down``) says how the part is held: it stays in the noun
    phrase, as an attribute of the part (:meth:`Chunker.emit_np`), and is no relation;
    only before the end of the clause, a conjunction or a relation, not before an object
    (``his arms up the rope``) nor as the start of a longer preposition (``out of``)."""
    i, lw, n = s.i, s.lw, s.n
    if s.np_start < 0 or not s.np_content or lw[s.np_start] not in (
            "his", "her", "its", "their", "my", "your") \
            or i - 1 < s.np_det_end or not lexicon_form(lw[i - 1], OWNED_PART_NOUNS):
        return False
    nxt = lw[i + 1] if i + 1 < n else ""
    if nxt in DETERMINERS or nxt in _OBJECT_PRONOUNS or nxt in _COUNT_WORDS or nxt.isdigit():
        return False
    if nxt[:1].isalnum() and nxt not in CONJUNCTIONS and not s.starts_relation(i + 1):
        return False  # "with its wheels out ready for landing": the phrase goes on
    if s.rel_trie.longest(lw, i) > i + 1:
        return False  # "his hands out of his pockets": a preposition of its own
    s.i += 1
    return True


_BASE_VERBS = frozenset(w for w in VERB_FORMS if not w.endswith(("s", "ing", "ed")))


def _opens_with_place(chunks: list[Chunk], k: int) -> bool:
    """Whether the chunks of the sentence before the comma ``k`` are a place phrase: a
    preposition opening the sentence and its objects (``In the heart of a field ,``)."""
    start = k
    while start > 0 and chunks[start - 1].kind != HARD:
        start -= 1
    return start < k and chunks[start].kind == REL and not chunks[start].verb \
        and all(c.kind in (REL, NP) and not c.verb for c in chunks[start:k])


def verb_after_coordinated_subject(s: Chunker) -> bool:
    """A verb in its base form right after the noun of the second of two coordinated noun
    phrases that open a sentence (or follow a place phrase and a comma that open it), with
    no object after it (``A black dog and a white dog play``, ``a cat and a dog sleep
    together``), is their verb, not the head of the second phrase."""
    i, lw, n = s.i, s.lw, s.n
    w = s.w
    if s.np_start < 0 or not s.np_content or s.pk != CONJ or len(s.chunks) < 2 \
            or s.chunks[-2].kind != NP or w.endswith("s") \
            or not (w in _BASE_VERBS or table_verb_class(w) in (VERB, WEAK)):
        return False
    prev = lw[i - 1]
    if i - 1 < s.np_det_end or prev in ATTRIBUTE_WORDS or prev in DETERMINERS:
        return False
    chunks = s.chunks
    for k in range(len(chunks) - 1, -1, -1):  # subjects: no relation before them in the
        c = chunks[k]                          # sentence, or a place phrase and a comma
        if c.kind == HARD:
            break
        if c.kind == SOFT and _opens_with_place(chunks, k):
            break  # "In the heart of a field , a man and a woman stand"
        if c.kind not in (NP, CONJ, SOFT):
            return False
    nxt = lw[i + 1] if i + 1 < n else ""
    if nxt and nxt[:1].isalnum() and (s.rel_trie.longest(lw, i + 1) > i + 1 or (
            nxt not in CONJUNCTIONS and nxt not in ADVERBS and not table_adverb(nxt))):
        return False
    s.close_np(i)
    s.add_relation(i + 1, True)
    return True


def _plural_noun_opening_text(s: Chunker) -> bool:
    """Whether the word is a plural noun that is also a verb form and opens the text or a
    sentence (``leaves on the path``): a noun, not a relation."""
    w = s.w
    return (s.np_start < 0 and s.pk in (-1, HARD) and w in WEAK_VERB_FORMS
            and w.endswith("s") and w not in s.rel_trie.root)


def _after_determiner_and_adverbs(s: Chunker) -> bool:
    """Whether the word is a verb form right after a determiner and adverbs (``the newly
    fallen snow``, ``a well used skateboard``): a modifier of the noun phrase."""
    i, lw = s.i, s.lw
    return (s.np_start >= 0 and s.np_start < s.np_det_end < i and s.w not in s.rel_trie.root
            and all(lw[k] in ADVERBS or table_adverb(lw[k]) for k in range(s.np_det_end, i)))


def _noun_after_attributes(s: Chunker) -> bool:
    """Whether the word at ``i`` is a noun of quantity that ends a phrase of attribute words
    (``a broken piece of``, ``a small part of``), not a relation phrase (``piece of``)."""
    return s.w in PARTITIVE_NOUNS | {"part", "parts"} and s.np_start >= 0 and s.np_content \
        and s.i > s.np_det_end and all(s.lw[k] in ATTRIBUTE_WORDS
                                       for k in range(s.np_det_end, s.i))


def relation_phrase(s: Chunker) -> bool:
    """The longest relation phrase of the lexicon (``at the left side of``), or a verb with
    the preposition after it (``standing in front of``), extended over a place noun and
    ``of`` (``along the side of``); not right after a bare determiner (``the on switch``)."""
    w, i = s.w, s.i
    if (s.np_start < 0 or s.np_content) \
            and (w in s.rel_trie.root or w in VERB_FORMS or table_verb_class(w)
                 or s.after_subordinator(i)
                 or s.noun_form_people_do(i)) \
            and not _plural_noun_opening_text(s) and not _after_determiner_and_adverbs(s) \
            and not _noun_after_attributes(s) \
            and not (w in ("has", "have", "had") and i + 1 < s.n and s.perfect_participle(i + 1)):
        end, is_verb = s.relation_end(i, s.expects_predicate())
        if end > i:
            end = s.region_end(end)
            s.close_np(i)
            s.add_relation(end, is_verb)
            return True
    return False


@only_for(COPULAS, _NEG_COPULAS, AUXILIARIES, _NEG_AUXILIARIES, {"has", "have", "had"})
def copula(s: Chunker) -> bool:
    """A copula (``is``, ``isn't``), an auxiliary before a copula, a negation or a verb
    (``can be``, ``does not``, ``doesn't have``), ``has been`` or the ``has`` of a perfect
    tense (:meth:`Chunker.perfect_participle`: ``has fallen off``) is a copula chunk;
    adjacent ones merge, and so does a perfect's participle that ends its clause (``the
    crowd has gathered .``).  A contracted negation (``isn't``, ``doesn't``) joins the next
    relation."""
    w, i, lw = s.w, s.i, s.lw
    perfect = w in ("has", "have", "had") and i + 1 < s.n and s.perfect_participle(i + 1)
    if (w in COPULAS or w in _NEG_COPULAS
            or ((w in AUXILIARIES or w in _NEG_AUXILIARIES) and i + 1 < s.n
                and (lw[i + 1] in COPULAS or lw[i + 1] in NEGATIONS or lw[i + 1] in LIGHT_VERBS
                     or lw[i + 1] in VERB_FORMS or table_verb_class(lw[i + 1])))
            or (w in ("has", "have", "had") and i + 1 < s.n and lw[i + 1] == "been")
            or perfect) \
            and (s.np_start < 0 or s.np_content):
        s.close_np(i)
        chunks = s.chunks
        if chunks and chunks[-1].kind == COP and chunks[-1].end == i:
            chunks[-1].end = i + 1
        else:
            chunks.append(Chunk(COP, i, i + 1))
        s.neg_at = i if w in _NEG_COPULAS or w in _NEG_AUXILIARIES else -1
        s.i += 1
        if perfect and (i + 2 >= s.n or lw[i + 2] in _CLAUSE_ENDS):
            # "the crowd has gathered .": a verb without an object names no relation
            chunks[-1].end = i + 2
            s.i += 1
        return True
    return False


@only_for(NEGATIONS)
def negation(s: Chunker) -> bool:
    """A negation (``not``) ends the noun phrase and joins the next relation."""
    if s.w in NEGATIONS:
        s.close_np(s.i)
        if s.neg_at < 0:
            s.neg_at = s.i
        s.i += 1
        return True
    return False


@only_for(RELATIVE_PRONOUNS)
def relative_pronoun(s: Chunker) -> bool:
    """``which`` / ``who`` / ``that`` opening a relative clause; ``that`` only after a noun
    phrase or after a conjunction before a verb (``and that is``), else a determiner."""
    w = s.w
    if w in RELATIVE_PRONOUNS and (w != "that" or (s.np_start >= 0 and s.np_content)
                                   or s.pk == NP
                                   or (s.pk == CONJ and s.np_start < 0
                                       and s.opens_clause(s.i + 1))):
        s.close_np(s.i)
        s.add(PRON, s.i + 1)
        return True
    return False


@only_for(CONJUNCTIONS, CONJUNCTION_WORDS)
def conjunction(s: Chunker) -> bool:
    """A conjunction (``and``, ``or``, ``because``, ``when``; the lexicon's and those of
    :data:`parsers.word_classes.CONJUNCTION_WORDS`) is a chunk of its own."""
    if s.w in CONJUNCTIONS or s.w in CONJUNCTION_WORDS:
        s.close_np(s.i)
        s.add(CONJ, s.i + 1)
        return True
    return False


@only_for({"as"})
def as_well_as(s: Chunker) -> bool:
    """``as well as`` is a conjunction, and so is ``as`` before a subject pronoun (``a man
    smiling as he catches a ball``) or right after a verb and its particle (``people walk
    by as a man begs``); right after a verb alone it is the verb's preposition (``dressed
    as a clown``)."""
    if s.w == "as" and s.lw[s.i + 1:s.i + 3] == ["well", "as"]:
        s.close_np(s.i)
        s.add(CONJ, s.i + 3)
        return True
    if s.w == "as" and s.i + 1 < s.n and s.lw[s.i + 1] in SUBJECT_PRONOUNS:
        s.close_np(s.i)
        s.add(CONJ, s.i + 1)
        return True
    if s.w == "as" and s.i + 1 < s.n and s.lw[s.i + 1] in DETERMINERS and s.np_start < 0 \
            and s.pk == REL and s.chunks[-1].verb and s.chunks[-1].end == s.i:
        last = s.chunks[-1]
        if last.end - last.start > 1:
            # "people walk by as a man begs": after a verb and its particle, before a noun
            # phrase, "as" opens a clause
            s.add(CONJ, s.i + 1)
        else:  # "dressed as a clown": the verb's preposition
            last.end = s.i + 1
            s.i += 1
        return True
    return False


@only_for(DETERMINERS, {"that"})
def partitive_determiner(s: Chunker) -> bool:
    """A determiner after a partitive ``of`` goes on with the phrase (``two of the
    buildings``)."""
    if (s.w in DETERMINERS or s.w == "that") and s.np_start >= 0 and s.np_content \
            and s.lw[s.i - 1] == "of":
        s.i += 1
        return True
    return False


@only_for(DETERMINERS, {"that"})
def determiner(s: Chunker) -> bool:
    """A determiner opens a noun phrase (or extends the determiners of a bare one); after a
    content word it first closes the open phrase, whose last word may be an unknown verb
    (``the man juggles the balls``)."""
    i = s.i
    if s.w in DETERMINERS or s.w == "that":
        if s.np_start >= 0 and s.np_content:
            s.maybe_peel_verb(s.np_start, s.np_det_end, i)
            s.np_start = -1
        if s.np_start < 0:
            s.np_start, s.np_det_end, s.np_content = i, i + 1, False
        else:
            s.np_det_end = i + 1
        s.i += 1
        return True
    return False


#: nouns in ``-ing`` that name a motion: right after another noun, before a preposition,
#: they are its verb (``a plane landing on the runway``, ``a giraffe crossing in front of a
#: car``, ``a man heading into the water``; FACTUAL writes ``land on``, ``cross in front
#: of``, ``head into`` in all 10 such captions of its length training and dev splits)
_MOTION_ING_NOUNS = frozenset({"landing", "crossing", "heading"})


def unknown_participle_before_preposition(s: Chunker) -> bool:
    """A participle the lexicon lacks before a preposition (``a man sliding on snow``, ``a
    plane is going down the runway``) is a verb joined to that preposition, with a
    warning; so is a noun in ``-ing`` (``landing``, ``building``) right after a copula
    (``a jet is landing next to the trees``), and a noun of motion right after a noun
    (:data:`_MOTION_ING_NOUNS`)."""
    i, lw = s.i, s.lw
    predicate = s.expects_predicate()
    motion = s.w in _MOTION_ING_NOUNS and s.np_start >= 0 and s.np_content \
        and i - 1 >= s.np_det_end and lw[i - 1] not in ATTRIBUTE_WORDS
    if ((s.np_start >= 0 and s.np_content) or predicate) \
            and (s.is_participle(i) or motion
                 or (predicate and s.w in PARTICIPLE_NOUNS
                     and s.w.endswith("ing") and s.pk == COP)):
        end = s.rel_trie.longest(lw, i + 1)
        if end > i + 1 and end < s.n and lw[end][:1].isalnum():
            s.close_np(i)
            s.add_relation(end, True)
            s.warnings.append(f"guessed that {s.tokens[i]!r} (token {i}) is a verb")
            return True
    return False


@only_for({"one"})
def one_after_plural(s: Chunker) -> bool:
    """``one`` right after a plural noun, before a relation (``two men one in a red coat``,
    ``boxes one of which``), opens a noun phrase of its own: one of those things."""
    i, lw, n = s.i, s.lw, s.n
    if s.w != "one" or s.np_start < 0 or not s.np_content or i - 1 < s.np_det_end \
            or i + 1 >= n or s.rel_trie.longest(lw, i + 1) == i + 1:
        return False
    prev = lw[i - 1]
    plural = prev in _IRREGULAR_PLURALS or (
        prev.endswith("s") and not prev.endswith(("ss", "us", "is")))
    if prev in ATTRIBUTE_WORDS or not prev.isalpha() or not plural:
        return False
    s.close_np(i)
    s.np_start, s.np_det_end, s.np_content = i, i, True
    s.i += 1
    return True


def content_word(s: Chunker) -> bool:
    """Any other word is a content word of the open noun phrase (opening one if none is)."""
    if s.np_start < 0:
        s.np_start, s.np_det_end = s.i, s.i
    s.np_content = True
    s.i += 1
    return True


#: the chunking rules, in the order they are tried at each token
CHUNK_RULES: list[ChunkRule] = [
    detached_possessive,
    quoted_name,
    quoted_words,
    attribute_list_comma,
    punctuation,
    picture_frame,
    there_is,
    subject_pronoun,
    partitive_of,
    attribute_coordination,
    compound_noun,
    adverb_before_relation,
    unknown_adverb,
    here_and_there,
    what_appears_to_be,
    adverbial_idiom,
    participle_after_comma_ending_sentence,
    one_another,
    floating_each,
    infinitive,
    light_verb_before_comparison,
    participle_after_noun,
    participle_ending_where_clause,
    participle_with_particle,
    participle_and_particle_after_noun,
    set_after_noun,
    particle_ending_a_verb,
    participle_inside_noun_phrase,
    particle_inside_noun_phrase,
    posture_of_part,
    verb_after_coordinated_subject,
    relation_phrase,
    copula,
    negation,
    relative_pronoun,
    conjunction,
    as_well_as,
    partitive_determiner,
    determiner,
    unknown_participle_before_preposition,
    one_after_plural,
    content_word,
]
