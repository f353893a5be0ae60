"""Scene graphs of whole descriptions: what a parser's scene mode returns.

A referring expression parses to a :class:`rcrn.structures.LanguageGraph`, a tree rooted
at its referent.  A description of a scene in several sentences has no single referent
and its relations need not form a tree: ``parse(text, mode="scene")`` (or
``parse_scene``) returns a :class:`SceneGraph` instead, whose entities are the things
the text names, each mentioned once or more (``A dog sits on a couch . The dog is brown
.``: one dog, with the attribute ``brown``), and whose relations come from every sentence.

A scene graph round-trips through JSON-compatible dicts (:meth:`SceneGraph.to_dict`,
:meth:`SceneGraph.from_dict`; a malformed dict raises
:class:`~rcrn.structures.StructureError` naming the field) and is written in the
FACTUAL layout ``( s , r , o ) , ( e , is , a ) , ( e )`` by :meth:`SceneGraph.to_factual`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rcrn.structures import StructureError

__all__ = ["SceneEntity", "SceneRelation", "SceneGraph"]


def _field(d: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(d, dict):
        raise StructureError(f"{where}: expected an object, got {type(d).__name__}")
    if key not in d:
        raise StructureError(f"{where}.{key}: missing")
    value = d[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__
                                                                          for k in kind)
        raise StructureError(f"{where}.{key}: expected {names}, got {type(value).__name__} "
                             f"{value!r:.40}")
    return value


def _span(value: Any, where: str) -> tuple[int, int]:
    if not isinstance(value, (list, tuple)) or len(value) != 2 \
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value) \
            or value[0] < 0 or value[1] < value[0]:
        raise StructureError(f"{where}: expected a token range [start, end), got {value!r:.40}")
    return int(value[0]), int(value[1])


@dataclass
class SceneEntity:
    """A thing the text names, once or several times.

    Attributes:
        head: its head noun (``dog``).
        attributes: attribute words from every mention (``["brown", "small"]``).
        text: the phrase of its first mention (``A dog``).
        mentions: token ranges ``[start, end)`` of every mention in
            ``SceneGraph.tokens``, the first mention first.
    """

    head: str
    attributes: list[str] = field(default_factory=list)
    text: str = ""
    mentions: list[tuple[int, int]] = field(default_factory=list)

    @property
    def span(self) -> tuple[int, int]:
        """Token range of the first mention."""
        return self.mentions[0] if self.mentions else (0, 0)

    def to_dict(self) -> dict[str, Any]:
        return {"head": self.head, "attributes": list(self.attributes), "text": self.text,
                "mentions": [list(m) for m in self.mentions]}

    @classmethod
    def from_dict(cls, d: Any, where: str = "entity") -> SceneEntity:
        head = _field(d, "head", str, where)
        attributes = _field(d, "attributes", list, where) if "attributes" in d else []
        for k, a in enumerate(attributes):
            if not isinstance(a, str):
                raise StructureError(f"{where}.attributes[{k}]: expected str, got "
                                     f"{type(a).__name__}")
        text = _field(d, "text", str, where) if "text" in d else head
        mentions = _field(d, "mentions", list, where) if "mentions" in d else []
        return cls(head, list(attributes), text,
                   [_span(m, f"{where}.mentions[{k}]") for k, m in enumerate(mentions)])


@dataclass
class SceneRelation:
    """A relation between two entities of a scene graph.

    Attributes:
        subject: index of the subject entity.
        text: the relation phrase (``sits on``; ``has`` for a possessor).
        object: index of the object entity.
        span: token range of the relation phrase (empty where the phrase is not the text
            of its tokens, as for ``has``).
    """

    subject: int
    text: str
    object: int
    span: tuple[int, int] = (0, 0)

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "relation": self.text, "object": self.object,
                "span": list(self.span)}

    @classmethod
    def from_dict(cls, d: Any, where: str = "relation") -> SceneRelation:
        subject = _field(d, "subject", int, where)
        text = _field(d, "relation", str, where)
        obj = _field(d, "object", int, where)
        span = _span(d["span"], f"{where}.span") if "span" in d else (0, 0)
        return cls(subject, text, obj, span)


@dataclass
class SceneGraph:
    """The entities and relations a whole description states.

    Unlike a :class:`~rcrn.structures.LanguageGraph` it need not be a tree and has no
    root: entities may be unrelated, and two entities may have several relations.

    Attributes:
        text: the parsed text.
        tokens: its tokens (those of each sentence, one sentence after the other).
        entities: the entities, in the order of their first mention.
        relations: the relations of every sentence.
    """

    text: str
    tokens: list[str]
    entities: list[SceneEntity] = field(default_factory=list)
    relations: list[SceneRelation] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tokens = list(self.tokens)
        self.validate()

    def validate(self) -> None:
        """Check that relations name entities and that spans lie within the tokens.

        Raises:
            StructureError: naming the entity or relation at fault.
        """
        n, ntok = len(self.entities), len(self.tokens)
        for i, e in enumerate(self.entities):
            for m in e.mentions:
                if m[1] > ntok:
                    raise StructureError(f"entities[{i}].mentions: span {list(m)} exceeds "
                                         f"{ntok} tokens")
        for k, r in enumerate(self.relations):
            for name, index in (("subject", r.subject), ("object", r.object)):
                if not 0 <= index < n:
                    raise StructureError(f"relations[{k}].{name}: {index} is not an entity "
                                         f"index (have {n})")
            if r.span[1] > ntok:
                raise StructureError(f"relations[{k}].span: {list(r.span)} exceeds {ntok} "
                                     f"tokens")

    # ------------------------------------------------------------------ views
    def triples(self) -> list[tuple[str, str, str]]:
        """``(subject head, relation, object head)`` of every relation, in order."""
        ents = self.entities
        return [(ents[r.subject].head, r.text, ents[r.object].head) for r in self.relations]

    def to_factual(self) -> str:
        """The graph in the FACTUAL layout: ``( s , r , o )`` per relation, ``( e , is ,
        a )`` per attribute, ``( e )`` per entity with neither."""
        groups = [f"( {_clean(s)} , {_clean(r)} , {_clean(o)} )"
                  for s, r, o in self.triples() if _clean(r)]
        described = {k for r in self.relations for k in (r.subject, r.object)}
        for i, e in enumerate(self.entities):
            groups += [f"( {_clean(e.head)} , is , {_clean(a)} )" for a in e.attributes
                       if _clean(a)]
            if i not in described and not e.attributes and _clean(e.head):
                groups.append(f"( {_clean(e.head)} )")
        return " , ".join(groups)

    # ------------------------------------------------------------------ dicts
    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tokens": list(self.tokens),
                "entities": [e.to_dict() for e in self.entities],
                "relations": [r.to_dict() for r in self.relations]}

    @classmethod
    def from_dict(cls, d: Any) -> SceneGraph:
        """The scene graph of a :meth:`to_dict` dict.

        Raises:
            StructureError: one line naming the missing or malformed field
                (``scene graph.entities[2].head: expected str, got int 3``).
        """
        where = "scene graph"
        text = _field(d, "text", str, where)
        tokens = _field(d, "tokens", list, where)
        for k, t in enumerate(tokens):
            if not isinstance(t, str):
                raise StructureError(f"{where}.tokens[{k}]: expected str, got "
                                     f"{type(t).__name__}")
        entities = [SceneEntity.from_dict(e, f"{where}.entities[{k}]")
                    for k, e in enumerate(_field(d, "entities", list, where))]
        relations = [SceneRelation.from_dict(r, f"{where}.relations[{k}]")
                     for k, r in enumerate(_field(d, "relations", list, where))]
        try:
            return cls(text, tokens, entities, relations)
        except StructureError as exc:
            raise StructureError(f"{where}.{exc}") from exc


def _clean(phrase: str) -> str:
    """A phrase as one FACTUAL field: no commas or parentheses, single spaces."""
    return " ".join(phrase.replace(",", " ").replace("(", " ").replace(")", " ").split())

