"""The parser protocol, its result type, errors and the tree builder every backend shares."""

from __future__ import annotations

import abc
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from parsers.coreference import merge_sentences
from parsers.scene import SceneGraph
from rcrn.errors import RcrnError
from rcrn.structures import Entity, LanguageGraph, Relation, StructureError

__all__ = [
    "ParseError",
    "BackendUnavailable",
    "ParseResult",
    "Parser",
    "BaseParser",
    "GraphBuilder",
    "split_sentences",
    "tokenize",
]


class ParseError(RcrnError, ValueError):
    """The text holds nothing to parse (it is empty or only punctuation and spaces)."""


class BackendUnavailable(RcrnError, RuntimeError):
    """A parser backend's optional dependency (package or model) is not installed.

    The message names what is missing and how to install it.
    """


@dataclass
class ParseResult:
    """A parsed text: the graph and what the parser could not account for.

    Attributes:
        graph: the language scene graph (always a valid tree); from ``analyse_scene``
            a :class:`~parsers.scene.SceneGraph`.
        warnings: human-readable notes on parts of the text the parser had to guess
            or drop; empty when the whole text was understood.
    """

    graph: LanguageGraph | SceneGraph
    warnings: list[str] = field(default_factory=list)


@runtime_checkable
class Parser(Protocol):
    """What every parser backend offers."""

    name: str

    def parse(self, text: str, mode: str = "referring") -> LanguageGraph | SceneGraph:
        """Parse one text: a referring expression into a tree-shaped language graph
        (``mode="referring"``, the default), a whole description into a scene graph
        (``mode="scene"``).

        Raises:
            ParseError: when the text holds no word at all.
        """

    def parse_many(self, texts: Sequence[str],
                   mode: str = "referring") -> list[LanguageGraph | SceneGraph]:
        """Parse several texts; same contract as ``parse``."""

    def analyse(self, text: str) -> ParseResult:
        """Parse one text and return the graph together with the parser's warnings."""


class BaseParser(abc.ABC):
    """Shared ``parse`` / ``parse_many`` on top of a backend's ``analyse``.

    ``last_warnings`` holds the warnings of the most recent ``parse`` call (for
    ``parse_many``: the warnings of every text, prefixed with its position).
    """

    name = "base"

    def __init__(self) -> None:
        self.last_warnings: list[str] = []

    @abc.abstractmethod
    def analyse(self, text: str) -> ParseResult:
        """Parse one text into a graph and warnings (each backend implements this)."""

    def analyse_scene(self, text: str) -> ParseResult:
        """Parse a whole description into a :class:`~parsers.scene.SceneGraph` and warnings.

        Each sentence (of the text without markdown emphasis, :func:`without_markup`) is
        parsed on its own (``analyse``, with ``it's`` written ``it is``:
        :func:`expand_contractions`); their graphs are merged by
        coreference (:func:`parsers.coreference.merge_sentences`).  The warnings are those
        of the sentences, prefixed with the sentence's number, less those about empty
        relations that only connect a tree.

        Raises:
            ParseError: when the text holds no word at all.
        """
        if not isinstance(text, str):
            raise ParseError(f"expected a string to parse, got {type(text).__name__}")
        sentences = split_sentences(without_markup(text))
        if not sentences:
            raise ParseError(f"nothing to parse in {text[:60]!r}: the text holds no word")
        graphs = []
        warnings: list[str] = []
        for k, sentence in enumerate(sentences):
            result = self.analyse(expand_contractions(sentence))
            graphs.append(result.graph)
            warnings.extend(f"sentence {k + 1}: {w}" for w in result.warnings
                            if not w.startswith(UNLINKED_WARNING))
        return ParseResult(merge_sentences(text, graphs), warnings)

    def _analyse_in(self, mode: str) -> Callable[[str], ParseResult]:
        if mode == "referring":
            return self.analyse
        if mode == "scene":
            return self.analyse_scene
        raise ValueError(f"mode must be 'referring' or 'scene', got {mode!r}")

    def parse(self, text: str, mode: str = "referring") -> LanguageGraph | SceneGraph:
        result = self._analyse_in(mode)(text)
        self.last_warnings = list(result.warnings)
        return result.graph

    def parse_scene(self, text: str) -> SceneGraph:
        """``parse(text, mode="scene")``: the scene graph of a whole description."""
        graph = self.parse(text, mode="scene")
        assert isinstance(graph, SceneGraph)
        return graph

    def parse_many(self, texts: Sequence[str],
                   mode: str = "referring") -> list[LanguageGraph | SceneGraph]:
        analyse = self._analyse_in(mode)
        graphs = []
        warnings: list[str] = []
        for i, text in enumerate(texts):
            result = analyse(text)
            graphs.append(result.graph)
            warnings.extend(f"text {i}: {w}" for w in result.warnings)
        self.last_warnings = warnings
        return graphs


# ------------------------------------------------------------------ tokeniser
_TOKEN_RE = re.compile(r"\w+(?:['’\-]\w+)*|n't|'s|’s|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into words and punctuation marks, keeping the original spelling.

    Words keep inner hyphens and apostrophes (``left-hand``, ``man's``); every
    other non-space, non-word character is a token of its own.
    """
    return _TOKEN_RE.findall(text)


_SENTENCE_END = frozenset({".", "!", "?"})


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, each ending after its ``.`` ``!`` or ``?`` (a run of them
    stays with its sentence); pieces without a word are left out."""
    out = []
    start = None
    matches = list(_TOKEN_RE.finditer(text))
    for k, m in enumerate(matches):
        if start is None:
            start = m.start()
        if m.group() in _SENTENCE_END and (k + 1 == len(matches)
                                           or matches[k + 1].group() not in _SENTENCE_END):
            out.append(text[start:m.end()])
            start = None
    if start is not None:
        out.append(text[start:])
    return [s for s in out if has_words(tokenize(s))]


_MARKUP_RE = re.compile(r"\*\*|__|(?<!\w)\*(?=\w)|(?<=\w)\*(?!\w)")


def without_markup(text: str) -> str:
    """``text`` without markdown emphasis (``a **bed** with a *blue* quilt`` -> ``a bed with
    a blue quilt``), as generated descriptions often carry."""
    return _MARKUP_RE.sub("", text)


_CONTRACTION_RE = re.compile(r"\b(it|he|she|that|there|here|what|who)['’]s\b"
                             r"|\b(they|we|you)['’]re\b", re.IGNORECASE)


def expand_contractions(text: str) -> str:
    """``text`` with a pronoun and its copula written out (``it's`` -> ``it is``, ``they're``
    -> ``they are``), as scene mode parses each sentence of a paragraph."""
    return _CONTRACTION_RE.sub(lambda m: f"{m.group(1)} is" if m.group(1)
                               else f"{m.group(2)} are", text)


def has_words(tokens: Iterable[str]) -> bool:
    return any(ch.isalnum() or ch == "_" for t in tokens for ch in t)


# -------------------------------------------------------------- tree builder
#: how the warning about an entity joined to the tree by an empty relation starts
UNLINKED_WARNING = "no relation links"


class GraphBuilder:
    """Collects entities and relations and always yields a valid tree.

    A relation that would close a cycle or repeat an edge is refused (with a
    warning); entities left unconnected at the end are attached to the nearest
    preceding connected entity with an empty relation (with a warning).
    """

    def __init__(self, tokens: list[str], text: str) -> None:
        self.tokens = tokens
        self.text = text
        self.entities: list[Entity] = []
        self.relations: list[Relation] = []
        self.warnings: list[str] = []
        self._parent: list[int] = []

    # union-find over entities
    def _find(self, i: int) -> int:
        parent = self._parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def add_entity(self, start: int, end: int, head: str = "",
                   modifiers: Sequence[str] = (), text: str | None = None) -> int:
        phrase = " ".join(self.tokens[start:end]) if text is None else text
        self.entities.append(Entity(text=phrase, span=(start, end), head=head or phrase,
                                    modifiers=list(modifiers)))
        self._parent.append(len(self._parent))
        return len(self.entities) - 1

    def connected(self, a: int, b: int) -> bool:
        return self._find(a) == self._find(b)

    def add_relation(self, subject: int, obj: int, start: int, end: int,
                     text: str | None = None) -> bool:
        """Add ``subject -> obj``; returns False (and warns) if it would break the tree."""
        phrase = " ".join(self.tokens[start:end]) if text is None else text
        if subject == obj or self._find(subject) == self._find(obj):
            self.warnings.append(
                f"dropped relation {phrase!r} between {self.entities[subject].text!r} and "
                f"{self.entities[obj].text!r}: it would make the graph cyclic")
            return False
        self.relations.append(Relation(subject=subject, object=obj, text=phrase,
                                       span=(start, end)))
        self._parent[self._find(subject)] = self._find(obj)
        return True

    def build(self, root: int = 0) -> LanguageGraph:
        """Connect what is left unconnected to the root's tree and build the graph."""
        if not self.entities:
            raise ParseError("no entity to build a graph from")
        root = root if 0 <= root < len(self.entities) else 0
        for i in range(len(self.entities)):
            if self._find(i) == self._find(root):
                continue
            # attach the component of i to the closest earlier entity of the root's tree
            anchor = next((j for j in range(i - 1, -1, -1) if self.connected(j, root)), root)
            at = self.entities[i].span[0]
            self.warnings.append(
                f"{UNLINKED_WARNING} {self.entities[i].text!r} (tokens {self.entities[i].span[0]}"
                f"-{self.entities[i].span[1]}) to the rest; attached to "
                f"{self.entities[anchor].text!r} with an empty relation")
            self.add_relation(anchor, i, at, at, text="")
        try:
            return LanguageGraph(tokens=self.tokens, entities=self.entities,
                                 relations=self.relations, root=root, text=self.text)
        except StructureError as exc:  # defensive: the builder keeps a tree by construction
            self.warnings.append(f"graph rebuilt as a single entity: {exc}")
            return single_entity_graph(self.tokens, self.text)


def single_entity_graph(tokens: list[str], text: str) -> LanguageGraph:
    """The whole text as one entity (the fallback for text without a noun phrase)."""
    words = [t for t in tokens if t[:1].isalnum()]
    head = words[-1] if words else (tokens[-1] if tokens else text)
    return LanguageGraph(tokens=tokens,
                         entities=[Entity(text=" ".join(tokens), span=(0, len(tokens)),
                                          head=head)],
                         relations=[], root=0, text=text)
