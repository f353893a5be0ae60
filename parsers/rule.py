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
   it; an attribute participle (``standing``, ``smiling``) is a verb before a
   preposition or an object (``is smiling at a man``) and otherwise an attribute of the
   noun before it (``two women sitting together``); a base-form verb after two
   coordinated noun phrases that open a sentence is their verb (``A black dog and a
   white dog play``: no entity ``play``); a plural noun that is also a verb form
   opening the text (``leaves on the path``) is a noun; a third-person transitive verb
   between two nouns is a verb without a determiner after it (``the man wears long
   pants``); a verb form right after a noun and before a preposition (adverbs between)
   is that noun's verb when the two agree: a base form after a plural (``four zebras
   stand together in``), an ``-s`` form after ``a`` (``a goat grazes near``), any past
   form (``three birds huddled together in``); after a copula, a participle is a verb
   before adverbs and a preposition (``are posing together in``), as is a noun in
   ``-ing`` before a preposition (``is landing next to``); ``looking`` after an
   adjective and a past participle after an attribute word stay modifiers of the noun
   right after them (``a cozy looking room``, ``a white decorated room``); a contracted
   negation (``doesn't``, ``can't``) joins the verb after it; a participle followed by a
   particle and its object is a verb with the particle (``setting down a plate``,
   ``throwing away a cup``), and an attribute participle before adverbs and a
   preposition is a verb (``two cats sitting apart on a bed``); adverbs and a verb form
   right after a determiner modify the noun after them (``a well used skateboard``,
   ``the newly fallen snow``).  A word the lexicon
   lacks is classed by the WordNet word-class table of :mod:`parsers.word_classes`:
   its verbs are relations (``a baby is dropping some poles``, ``... and ignores her
   phone``), where a verb can be (not inside a noun phrase: ``a red hooded jacket``);
   its adverbs (``together``, ``apart``) and conjunctions (``because``) are no entities.
2. **attachment** – every relation gets a subject and an object:

   * ``NP REL NP`` – the relation links the two phrases; a further preposition
     attaches to the nearest noun phrase (chains: ``the cup left of the plate on
     the table``); a participle after the object of a preposition attaches to
     the subject of that preposition (``the man next to the car wearing a hat``),
     and an ``-ing`` participle after the object of a verb to the verb's subject
     (``a man sitting in the audience wearing a hat``);
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
     the plate is left of the knife); a verb or copula after ``and`` (or a comma) describes the
     subject of the sentence's last verb or of a relation after a copula, else the
     clause's subject (``a woman is wearing a scarf with stripes and is holding a cup``:
     the woman holds it); ``and`` followed by a noun phrase shares the
     previous relation (``left of the plate and the bowl``), or starts a new clause
     linked to the root by an ``and`` relation when a copula follows (unless it goes on
     with the objects of ``with`` or a participle of the clause's subject: ``a cup
     with a lid and a straw is on the table``); the commas of a
     list that ``and`` ends join its items the same way (``a dog, a cat and a bird on
     a couch``: all three are on the couch; ``with cups, plates and bowls``); a
     conjunction that opens a clause (``while``, ``because``) ends a verb still without
     an object, a noun phrase after it is its clause's subject (``a dog waits while the
     man eats``), and an ``-ing`` word right after one of time is a verb whatever its
     word class (``while texting on her phone``);
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
     after ``of``, unless the text goes on about the picture itself (``a photo of a dog
     on the fridge``, ``... taped to the door``, ``... is on the wall``), and a place
     noun after a relation joins it (``along the side of``); a place noun after a
     preposition with no whole after it (``the man on the right``, ``in the middle``) is
     a position: no entity, no relation;
   * ``X has Y on it`` and ``X with Y on it`` relate Y to X (``the wall has a clock
     on it``: clock *on* wall); ``it`` is no entity of its own, and a relation right
     after it describes X (``a cup with a lid on it sits on a table``);
   * a pronoun object (``it``, ``them``, ``her``, ``himself`` ...) stands for the nearest
     earlier entity that agrees with it (``a cat looking at a mouse and chasing it``:
     the cat chases the mouse); where the tree already joins the two, the pronoun
     stays an entity whose head is its antecedent's head;
   * a pronoun opening a clause (``A man holds a cup. He is standing on a rug``, ``...
     and it is red``) stands for the subject of the open or previous clause if it agrees
     (:mod:`parsers.coreference`), else for the nearest agreeing entity; it is no entity
     of its own, and a verb is expected after it (``They smile at a dog``).  Without an
     agreeing entity (``A man sits. It is sunny.``) it stays an entity.

Long, multi-clause captions follow the annotation habits of FACTUAL's scene graphs
(``docs/parsers.md``, "Long captions"): a possessed part belongs to its owner (``with her
leg up``: the woman has the leg); subjects coordinated before a copula share its clause;
an object relative clause may lack ``that`` (``the hat the man is wearing``); a place of the
whole scene after another relation's object describes that relation's subject (``flying a
kite on the beach``); a place opening a caption before ``of`` leaves the head to the whole
(``the back of a man wearing a cap``); ``X haired`` gives X a hair; a label noun keeps the
head before its name (``the number 3``); entity heads are named as FACTUAL names them
(``guy``: ``person``, ``cell phone``: ``cellphone``); and in captions of nine words or more
``with`` before a person's part is ``has``, ``in`` before a coat or a dress ``wearing``.

Otherwise the first noun phrase is the referent and the root.

The result is always a valid tree.  What the parser could not account for is
reported as warnings (``RuleParser.analyse(text).warnings`` or
``parser.last_warnings`` after ``parse``): relations without an object are
dropped, noun phrases no relation reaches are attached to the closest earlier
entity with an empty relation (empty text and an empty span at the phrase), and
a verb neither the lexicon nor the word-class table knows may be guessed from its
ending.  Text without
any word (empty, spaces, punctuation only) raises :class:`~parsers.base.ParseError`;
text with words but no noun phrase becomes a single entity covering all tokens.

The rules are named functions applied in order: the chunking rules are
:data:`parsers.rule_chunking.CHUNK_RULES` (``determiner``, ``compound_noun``,
``relation_phrase``, ...), the attachment rules :data:`parsers.rule_attachment.ATTACH_RULES`
per chunk kind, with :data:`~parsers.rule_attachment.NP_LINK_RULES` (how a noun phrase
links: ``object_of_relation``, ``coordinated_object``, ...) and
:data:`~parsers.rule_attachment.SUBJECT_RULES` (whom a relation describes:
``subject_of_relative_clause``, ``subject_of_head_before_of``, ...).  A new construction
is one function added to the right list.
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
    COMPOUND_NOUNS,
    COMPOUND_TRIE,
    PREPOSITION_PHRASES,
    RELATION_TRIE,
    Trie,
)
from parsers.rule_attachment import Attacher
from parsers.rule_chunking import NP, Chunk, Chunker

__all__ = ["RuleParser"]


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

    def _chunk(self, tokens: list[str], lw: list[str], warnings: list[str]) -> list[Chunk]:
        """First pass: the chunks of the text (:data:`parsers.rule_chunking.CHUNK_RULES`)."""
        return Chunker(tokens, lw, warnings, self._rel_trie, self._compound_trie).run()

    @staticmethod
    def _attach(chunks: list[Chunk], tokens: list[str], builder: GraphBuilder) -> int:
        """Second pass: entities and relations into ``builder``
        (:data:`parsers.rule_attachment.ATTACH_RULES`); the root entity."""
        return Attacher(chunks, tokens, builder).run()
