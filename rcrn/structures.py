"""Typed data structures shared by every package of the toolkit.

The one path data takes::

    text  --parsers-->   LanguageGraph
    image --detectors--> Proposals
    benchmark adapter -> GroundingProblem(graph, proposals, targets)
    model            -> Prediction

Every structure round-trips through plain JSON-compatible dicts (``to_dict`` /
``from_dict``).  Arrays are stored as ``numpy`` arrays in memory and as nested
lists in dicts.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rcrn.boxes import box_iou
from rcrn.errors import RcrnError

__all__ = [
    "StructureError",
    "Entity",
    "Relation",
    "LanguageGraph",
    "Proposals",
    "GroundingProblem",
    "Prediction",
]


class StructureError(RcrnError, ValueError):
    """Raised when a structure is malformed (not a tree, bad box array, ...)."""


def _span(value: Sequence[int], what: str) -> tuple[int, int]:
    if len(value) != 2:
        raise StructureError(f"{what}: a span is [start, end), got {value!r}")
    start, end = int(value[0]), int(value[1])
    if start < 0 or end < start:
        raise StructureError(f"{what}: span [{start}, {end}) is not a valid token range")
    return start, end


@dataclass
class Entity:
    """An entity phrase of a language scene graph (a node).

    Attributes:
        text: the whole phrase as written, e.g. ``"the red cup"``.
        span: token range ``[start, end)`` of the phrase in ``LanguageGraph.tokens``.
        head: the head noun, e.g. ``"cup"``.
        modifiers: attribute words, e.g. ``["red"]``.
    """

    text: str
    span: tuple[int, int]
    head: str = ""
    modifiers: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.span = _span(self.span, f"entity {self.text!r}")
        if not self.head:
            words = self.text.split()
            self.head = words[-1] if words else ""
        self.modifiers = list(self.modifiers)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "span": list(self.span), "head": self.head,
                "modifiers": list(self.modifiers)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Entity:
        return cls(text=d["text"], span=tuple(d["span"]), head=d.get("head", ""),
                   modifiers=list(d.get("modifiers", [])))


@dataclass
class Relation:
    """A relation phrase of a language scene graph (an edge).

    Attributes:
        subject: index of the subject entity.
        object: index of the object entity.
        text: the relation phrase, e.g. ``"to the left of"``.
        span: token range ``[start, end)`` of the relation phrase.
    """

    subject: int
    object: int
    text: str
    span: tuple[int, int]

    def __post_init__(self) -> None:
        self.subject = int(self.subject)
        self.object = int(self.object)
        self.span = _span(self.span, f"relation {self.text!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"subject": self.subject, "object": self.object, "text": self.text,
                "span": list(self.span)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Relation:
        return cls(subject=d["subject"], object=d["object"], text=d["text"],
                   span=tuple(d["span"]))


@dataclass
class LanguageGraph:
    """A language scene graph: entity phrases as nodes, relation phrases as edges.

    The graph is a tree (ignoring edge direction) rooted at ``root``, the referent.
    Relations keep their linguistic direction (``subject`` -> ``object``); the
    propagation direction (parent -> child) is derived from the root.

    Attributes:
        tokens: the tokenised text.
        entities: entity phrases (nodes).
        relations: relation phrases (edges).
        root: index of the referent entity.
        text: the original text, if known.
    """

    tokens: list[str]
    entities: list[Entity]
    relations: list[Relation] = field(default_factory=list)
    root: int = 0
    text: str = ""

    def __post_init__(self) -> None:
        self.tokens = list(self.tokens)
        self.root = int(self.root)
        if not self.text:
            self.text = " ".join(self.tokens)
        self.validate()

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Check that the graph is a tree rooted at ``root`` with in-range spans.

        Raises:
            StructureError: naming the offending entity or relation.
        """
        n = len(self.entities)
        if n == 0:
            raise StructureError("a language graph needs at least one entity")
        if not 0 <= self.root < n:
            raise StructureError(f"root {self.root} is not an entity index (have {n})")
        ntok = len(self.tokens)
        for i, e in enumerate(self.entities):
            if e.span[1] > ntok:
                raise StructureError(f"entity {i} {e.text!r}: span {e.span} exceeds {ntok} tokens")
        seen: set[frozenset[int]] = set()
        for k, r in enumerate(self.relations):
            if not (0 <= r.subject < n and 0 <= r.object < n):
                raise StructureError(f"relation {k} {r.text!r}: entity index out of range")
            if r.subject == r.object:
                raise StructureError(f"relation {k} {r.text!r}: a self-loop on entity {r.subject}")
            if r.span[1] > ntok:
                raise StructureError(
                    f"relation {k} {r.text!r}: span {r.span} exceeds {ntok} tokens")
            key = frozenset((r.subject, r.object))
            if key in seen:
                raise StructureError(f"relation {k} {r.text!r}: a second edge between "
                                     f"entities {r.subject} and {r.object}")
            seen.add(key)
        if len(self.relations) != n - 1:
            raise StructureError(f"not a tree: {n} entities need {n - 1} relations, "
                                 f"got {len(self.relations)}")
        reached = self._bfs()[0]
        if len(reached) != n:
            missing = sorted(set(range(n)) - set(reached))
            raise StructureError(f"not a tree: entities {missing} are not connected to the root")

    def _bfs(self) -> tuple[list[int], dict[int, tuple[int, int]]]:
        """Breadth-first order from the root and ``{child: (parent, relation index)}``."""
        adj: dict[int, list[tuple[int, int]]] = {i: [] for i in range(len(self.entities))}
        for k, r in enumerate(self.relations):
            adj[r.subject].append((r.object, k))
            adj[r.object].append((r.subject, k))
        order, parent = [self.root], {}
        queue, seen = deque([self.root]), {self.root}
        while queue:
            u = queue.popleft()
            for v, k in adj[u]:
                if v not in seen:
                    seen.add(v)
                    parent[v] = (u, k)
                    order.append(v)
                    queue.append(v)
        return order, parent

    # -------------------------------------------------------------- structure
    @property
    def num_entities(self) -> int:
        return len(self.entities)

    @property
    def num_relations(self) -> int:
        return len(self.relations)

    def parents(self) -> list[int]:
        """Parent entity of every entity in the tree rooted at ``root`` (-1 for the root)."""
        _, parent = self._bfs()
        return [parent[i][0] if i in parent else -1 for i in range(self.num_entities)]

    def depths(self) -> list[int]:
        """Depth of every entity (root = 0)."""
        order, parent = self._bfs()
        depth = [0] * self.num_entities
        for v in order[1:]:
            depth[v] = depth[parent[v][0]] + 1
        return depth

    def tree_edges(self) -> list[tuple[int, int, int]]:
        """``(parent, child, relation index)`` for every relation, in breadth-first order."""
        order, parent = self._bfs()
        return [(parent[v][0], v, parent[v][1]) for v in order[1:]]

    def span_text(self, span: tuple[int, int]) -> str:
        return " ".join(self.tokens[span[0]:span[1]])

    def spo_tokens(self, k: int) -> list[str]:
        """Words of the subject-predicate-object phrase of relation ``k``."""
        r = self.relations[k]
        s, o = self.entities[r.subject], self.entities[r.object]
        return (self.tokens[s.span[0]:s.span[1]] + self.tokens[r.span[0]:r.span[1]]
                + self.tokens[o.span[0]:o.span[1]])

    def entity_tokens(self, i: int) -> list[str]:
        e = self.entities[i]
        words = self.tokens[e.span[0]:e.span[1]]
        return words if words else e.text.split()

    # -------------------------------------------------------------- builders
    @classmethod
    def from_triples(cls, text: str, triples: Sequence[tuple[str, str, str]],
                     root: str | None = None) -> LanguageGraph:
        """Build a graph from ``(subject phrase, relation phrase, object phrase)`` triples.

        A convenience for tests and synthetic data: phrases are located in the
        whitespace tokenisation of ``text`` from left to right; equal phrases
        name the same entity.
        """
        tokens = text.split()
        cursor = 0

        def locate(phrase: str) -> tuple[int, int]:
            nonlocal cursor
            words = phrase.split()
            for start in list(range(cursor, len(tokens))) + list(range(0, cursor)):
                if tokens[start:start + len(words)] == words:
                    cursor = start + len(words)
                    return start, start + len(words)
            raise StructureError(f"phrase {phrase!r} not found in {text!r}")

        names: dict[str, int] = {}
        entities: list[Entity] = []
        relations: list[Relation] = []

        def entity(phrase: str) -> int:
            if phrase not in names:
                names[phrase] = len(entities)
                entities.append(Entity(text=phrase, span=locate(phrase)))
            return names[phrase]

        for subj, rel, obj in triples:
            s = entity(subj)
            span = locate(rel)
            o = entity(obj)
            relations.append(Relation(subject=s, object=o, text=rel, span=span))
        if not triples:
            entity(root or text)
        root_index = names[root] if root is not None else 0
        return cls(tokens=tokens, entities=entities, relations=relations, root=root_index,
                   text=text)

    # ------------------------------------------------------------------ json
    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tokens": list(self.tokens),
                "entities": [e.to_dict() for e in self.entities],
                "relations": [r.to_dict() for r in self.relations], "root": self.root}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LanguageGraph:
        return cls(tokens=d["tokens"], entities=[Entity.from_dict(e) for e in d["entities"]],
                   relations=[Relation.from_dict(r) for r in d.get("relations", [])],
                   root=d.get("root", 0), text=d.get("text", ""))


def _array(value: Any, dtype: Any, what: str, shape_tail: tuple[int, ...] = ()) -> np.ndarray:
    arr = np.asarray(value, dtype=dtype)
    if arr.size == 0 and shape_tail:
        arr = arr.reshape((0,) + shape_tail)
    if shape_tail and (arr.ndim != 1 + len(shape_tail) or arr.shape[1:] != shape_tail):
        raise StructureError(f"{what}: expected shape [n, {', '.join(map(str, shape_tail))}], "
                             f"got {list(arr.shape)}")
    return arr


@dataclass
class Proposals:
    """Region proposals of one image.

    Attributes:
        boxes: float array ``[n, 4]``, ``x1, y1, x2, y2`` in pixels.
        image_size: ``(width, height)`` in pixels.
        scores: optional detector confidences ``[n]``.
        labels: optional class names, one per box.
        features: optional region features ``[n, d]``.
        image_id: identifier of the image the boxes belong to.
    """

    boxes: np.ndarray
    image_size: tuple[int, int]
    scores: np.ndarray | None = None
    labels: list[str] | None = None
    features: np.ndarray | None = None
    image_id: str = ""

    def __post_init__(self) -> None:
        what = f"proposals of image {self.image_id!r}"
        self.boxes = _array(self.boxes, np.float32, what + " boxes", (4,))
        n = len(self.boxes)
        w, h = self.image_size
        self.image_size = (int(w), int(h))
        if self.image_size[0] <= 0 or self.image_size[1] <= 0:
            raise StructureError(f"{what}: image size must be positive, got {self.image_size}")
        if not np.isfinite(self.boxes).all():
            raise StructureError(f"{what}: boxes hold NaN or infinite values")
        if n and ((self.boxes[:, 2] < self.boxes[:, 0]).any() or
                  (self.boxes[:, 3] < self.boxes[:, 1]).any()):
            raise StructureError(f"{what}: boxes must be x1 <= x2, y1 <= y2 (xyxy)")
        if self.scores is not None:
            self.scores = _array(self.scores, np.float32, what + " scores")
            if self.scores.shape != (n,):
                raise StructureError(f"{what}: {n} boxes but scores of shape {self.scores.shape}")
        if self.labels is not None:
            self.labels = [str(x) for x in self.labels]
            if len(self.labels) != n:
                raise StructureError(f"{what}: {n} boxes but {len(self.labels)} labels")
        if self.features is not None:
            self.features = np.asarray(self.features)
            if self.features.dtype not in (np.float16, np.float32, np.float64):
                self.features = self.features.astype(np.float32)
            if self.features.ndim != 2 or len(self.features) != n:
                raise StructureError(f"{what}: {n} boxes but features of shape "
                                     f"{list(self.features.shape)}")
            if not np.isfinite(self.features).all():
                raise StructureError(f"{what}: features hold NaN or infinite values")

    def __len__(self) -> int:
        return len(self.boxes)

    @property
    def feature_dim(self) -> int:
        return 0 if self.features is None else int(self.features.shape[1])

    def to_dict(self) -> dict[str, Any]:
        return {
            "image_id": self.image_id, "image_size": list(self.image_size),
            "boxes": self.boxes.tolist(),
            "scores": None if self.scores is None else self.scores.tolist(),
            "labels": self.labels,
            "features": (None if self.features is None
                         else self.features.astype(np.float32).tolist()),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Proposals:
        feats = d.get("features")
        return cls(boxes=d["boxes"], image_size=tuple(d["image_size"]),
                   scores=d.get("scores"), labels=d.get("labels"),
                   features=None if feats is None else np.asarray(feats, dtype=np.float32),
                   image_id=d.get("image_id", ""))


@dataclass
class GroundingProblem:
    """One item to reason about: a language graph against the proposals of an image.

    Attributes:
        graph: the language scene graph of the expression.
        proposals: the candidate regions.
        match: 1 if the expression matches the image, 0 if not, None if unknown.
        referent_box: ground-truth box of the referent (xyxy px), if known.
        mismatched_relation: index into ``graph.relations`` of the mismatched
            relation for a negative pair, else None.
        id: identifier of the item.
        meta: free-form extra information (benchmark fields, lengths, ...).
    """

    graph: LanguageGraph
    proposals: Proposals
    match: int | None = None
    referent_box: np.ndarray | None = None
    mismatched_relation: int | None = None
    id: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.referent_box is not None:
            self.referent_box = _array(self.referent_box, np.float32,
                                       f"problem {self.id!r} referent_box").reshape(-1)
            if self.referent_box.shape != (4,):
                raise StructureError(f"problem {self.id!r}: referent_box must hold 4 numbers")
        if self.match is not None:
            self.match = int(self.match)
            if self.match not in (0, 1):
                raise StructureError(f"problem {self.id!r}: match must be 0 or 1")
        if self.mismatched_relation is not None:
            self.mismatched_relation = int(self.mismatched_relation)
            if not 0 <= self.mismatched_relation < self.graph.num_relations:
                raise StructureError(f"problem {self.id!r}: mismatched_relation "
                                     f"{self.mismatched_relation} is not a relation index")

    @property
    def target_index(self) -> int:
        """Proposal of maximum IoU with the referent box (-1 when unknown or no proposals)."""
        if self.referent_box is None or len(self.proposals) == 0:
            return -1
        return int(box_iou(self.referent_box, self.proposals.boxes)[0].argmax())

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "graph": self.graph.to_dict(), "proposals": self.proposals.to_dict(),
            "match": self.match,
            "referent_box": None if self.referent_box is None else self.referent_box.tolist(),
            "mismatched_relation": self.mismatched_relation, "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GroundingProblem:
        return cls(graph=LanguageGraph.from_dict(d["graph"]),
                   proposals=Proposals.from_dict(d["proposals"]), match=d.get("match"),
                   referent_box=d.get("referent_box"),
                   mismatched_relation=d.get("mismatched_relation"), id=d.get("id", ""),
                   meta=dict(d.get("meta", {})))


@dataclass
class Prediction:
    """A model's answer for one problem.

    Attributes:
        id: the problem's identifier.
        match_prob: predicted probability that the expression matches the image.
        box: predicted referent box (xyxy px), after box regression.
        proposal: index of the proposal chosen for the referent.
        mismatched_relation: index of the relation blamed for a mismatch
            (None for graphs without relations).
        relation_scores: the Compare score of every relation (lower = more suspect).
    """

    id: str
    match_prob: float
    box: list[float] | None = None
    proposal: int = -1
    mismatched_relation: int | None = None
    relation_scores: list[float] = field(default_factory=list)

    @property
    def match(self) -> int:
        return int(self.match_prob >= 0.5)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "match_prob": float(self.match_prob),
                "box": None if self.box is None else [float(x) for x in self.box],
                "proposal": int(self.proposal), "mismatched_relation": self.mismatched_relation,
                "relation_scores": [float(x) for x in self.relation_scores]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Prediction:
        return cls(id=d["id"], match_prob=float(d["match_prob"]), box=d.get("box"),
                   proposal=int(d.get("proposal", -1)),
                   mismatched_relation=d.get("mismatched_relation"),
                   relation_scores=list(d.get("relation_scores", [])))
