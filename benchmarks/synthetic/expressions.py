"""Referring expressions of synthetic scenes: sampling, wording and execution.

An :class:`Expression` is a tree of entity descriptors (the root is the
referent) joined by relations.  It is worded in plain English with a small,
regular grammar and executed on a scene with set semantics.

Grammar (what a rule-based parser has to handle)::

    entity    := "the" [size] [color] (shape | "object") clause*
    clause    := connector relation entity
    connector := "that is" | "which is" | "that has" | "which has" | "with" | ""   (first clause)
               | "and" ["that" | "which"] ["is" | "has"] ["with"]              (later clauses)
    relation  := "to the left of" | "to the right of" | "above" | "below" | "near"
               | "far from" | "next to" | "bigger than" | "smaller than"
               | "the same color as" | "the same shape as"

Attachment is deterministic: a clause that does not start with "and" attaches
to the entity just before it (a chain: "the circle above the square left of the
cross" -- the square is left of the cross); a clause that starts with "and"
attaches to the parent of the entity just before it (a branch: "the circle
above the square and left of the cross" -- the circle is left of the cross).
This works because every entity has at most one child that has children of its
own, and that child is worded last.

The noun "object" stands for an entity whose shape is not given; the generator
uses it for the subject of "the same shape as".
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from benchmarks.synthetic.relations import FAMILY, PHRASE_TO_RELATION, PHRASES, SceneRelations
from benchmarks.synthetic.scene import COLORS, SHAPES, SIZES
from rcrn.structures import Entity, LanguageGraph, Relation

__all__ = [
    "GENERIC_NOUN",
    "CONNECTOR_WORDS",
    "STYLES",
    "Descriptor",
    "Edge",
    "Expression",
    "Realisation",
    "Query",
    "execute",
    "query_from_graph",
    "execute_graph",
    "sample_expression",
]

#: Head noun of an entity whose shape is not mentioned.
GENERIC_NOUN = "object"

#: Words that introduce clauses; never part of an entity or relation span.
CONNECTOR_WORDS: tuple[str, ...] = ("that", "which", "is", "has", "with", "and")

#: Clause styles of an entity: relative clauses with "that" / "which", or reduced relatives.
STYLES: tuple[str, ...] = ("that", "which", "reduced")

_ATTRIBUTES = ("size", "color", "shape")


@dataclass
class Descriptor:
    """The attributes an entity phrase mentions (None = not mentioned)."""

    shape: str | None = None
    color: str | None = None
    size: str | None = None

    def words(self) -> list[str]:
        """``["the", size?, color?, shape-or-"object"]``."""
        out = ["the"]
        if self.size:
            out.append(self.size)
        if self.color:
            out.append(self.color)
        out.append(self.shape or GENERIC_NOUN)
        return out

    def modifiers(self) -> list[str]:
        return [w for w in (self.size, self.color) if w]

    def mask(self, relations: SceneRelations) -> int:
        """Bit mask of the scene objects that have every mentioned attribute."""
        m = relations.all
        for name in _ATTRIBUTES:
            value = getattr(self, name)
            if value is not None:
                m &= relations.attribute.get((name, value), 0)
        return m


@dataclass
class Edge:
    """A relation from entity ``parent`` (its subject) to entity ``child`` (its object).

    Attributes:
        parent: node index of the described entity.
        child: node index of the related entity.
        relation: relation key (see ``relations.RELATIONS``).
        repeat: for a clause after "and", whether "that is" / "which is" is repeated.
    """

    parent: int
    child: int
    relation: str
    repeat: bool = False


@dataclass
class Realisation:
    """The wording of an expression.

    Attributes:
        graph: the gold language graph (entities and relations in text order).
        entity_nodes: node index of every graph entity.
        relation_edges: edge index of every graph relation.
    """

    graph: LanguageGraph
    entity_nodes: list[int]
    relation_edges: list[int]


@dataclass
class Expression:
    """A referring expression as a tree of descriptors.

    Attributes:
        nodes: the descriptor of every entity; node 0 is the referent.
        edges: parent-to-child relations.
        styles: the clause style of every node (one of :data:`STYLES`).
        objects: the scene object each node was drawn from (for generated expressions).
    """

    nodes: list[Descriptor]
    edges: list[Edge] = field(default_factory=list)
    styles: list[str] = field(default_factory=list)
    objects: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.styles:
            self.styles = ["that"] * len(self.nodes)

    def children(self, node: int) -> list[int]:
        """Edge indices of the clauses of ``node`` in wording order (leaf children first)."""
        return self._clause_order().get(node, [])

    def _clause_order(self) -> dict[int, list[int]]:
        inner = {e.parent for e in self.edges}
        order: dict[int, list[int]] = {}
        for k, e in enumerate(self.edges):
            if e.child not in inner:
                order.setdefault(e.parent, []).append(k)
        for k, e in enumerate(self.edges):
            if e.child in inner:
                order.setdefault(e.parent, []).append(k)
        return order

    def with_relation(self, edge: int, relation: str) -> Expression:
        """A copy with the relation of ``edge`` replaced."""
        edges = list(self.edges)
        edges[edge] = replace(edges[edge], relation=relation)
        return Expression(nodes=[replace(n) for n in self.nodes], edges=edges,
                          styles=list(self.styles), objects=list(self.objects))

    def realise(self) -> Realisation:
        """Word the expression and build its gold :class:`LanguageGraph`."""
        tokens: list[str] = []
        entities: list[Entity] = []
        relations: list[list] = []  # [subject, object, text, span], object filled in later
        entity_nodes: list[int] = []
        relation_edges: list[int] = []
        clauses = self._clause_order()

        def emit(node: int) -> int:
            d = self.nodes[node]
            words = d.words()
            start = len(tokens)
            tokens.extend(words)
            index = len(entities)
            entities.append(Entity(text=" ".join(words), span=(start, len(tokens)),
                                   head=words[-1], modifiers=words[1:-1]))
            entity_nodes.append(node)
            style = self.styles[node]
            previous_family = None
            for position, k in enumerate(clauses.get(node, ())):
                edge = self.edges[k]
                family = FAMILY[edge.relation]
                tokens.extend(_connector(style, family, position, edge.repeat, previous_family))
                previous_family = family
                phrase = PHRASES[edge.relation]
                start = len(tokens)
                tokens.extend(phrase.split())
                slot = [index, -1, phrase, (start, len(tokens))]
                relations.append(slot)
                relation_edges.append(k)
                slot[1] = emit(edge.child)
            return index

        emit(0)
        graph = LanguageGraph(
            tokens=tokens, entities=entities,
            relations=[Relation(subject=s, object=o, text=t, span=sp)
                       for s, o, t, sp in relations],
            root=0, text=" ".join(tokens))
        return Realisation(graph=graph, entity_nodes=entity_nodes, relation_edges=relation_edges)

    def query(self) -> Query:
        """The executable form of the expression."""
        return Query(descriptors=list(self.nodes),
                     edges=[(e.parent, e.child, e.relation, False) for e in self.edges], root=0)


def _connector(style: str, family: str, position: int, repeat: bool,
               previous_family: str | None) -> list[str]:
    verb = "is" if family == "is" else "has"
    if position == 0:
        if style == "reduced":
            return [] if family == "is" else ["with"]
        return [style, verb]
    if style == "reduced":
        return ["and"] if family == "is" else ["and", "with"]
    if repeat:
        return ["and", style, verb]
    return ["and"] if family == previous_family else ["and", verb]


@dataclass
class Query:
    """An executable tree: descriptors and ``(parent, child, relation, inverse)`` edges.

    ``inverse`` is False when the parent is the relation's subject (``parent REL
    child``) and True when the child is (``child REL parent``).
    """

    descriptors: list[Descriptor]
    edges: list[tuple[int, int, str, bool]]
    root: int = 0


def execute(query: Query | Expression, relations: SceneRelations, lenient: bool = False) -> int:
    """Objects the expression can refer to, as a bit mask (bit ``i`` = object ``i``).

    Set semantics: an entity denotes the objects that have its attributes and,
    for every clause, stand in the clause's relation to at least one other
    object the child entity denotes.

    Args:
        query: the expression (or its :class:`Query`).
        relations: the scene's relation tables.
        lenient: count ambiguous relations as holding (used to prove uniqueness
            of positives and falsity of mismatches); otherwise only sure ones hold.

    Returns:
        The bit mask of the referent entity's denotation.
    """
    if isinstance(query, Expression):
        query = query.query()
    children: dict[int, list[tuple[int, str, bool]]] = {}
    for parent, child, key, inverse in query.edges:
        children.setdefault(parent, []).append((child, key, inverse))

    def denote(node: int) -> int:
        mask = query.descriptors[node].mask(relations)
        for child, key, inverse in children.get(node, ()):
            if not mask:
                return 0
            target = denote(child)
            table = relations.table(key, lenient, inverse)
            kept = 0
            rest = mask
            while rest:
                low = rest & -rest
                if table[low.bit_length() - 1] & target:
                    kept |= low
                rest ^= low
            mask = kept
        return mask

    return denote(query.root)


def _relation_key(text: str, where: str) -> str:
    words = text.lower().split()
    while words and words[0] in CONNECTOR_WORDS:
        words = words[1:]
    phrase = " ".join(words)
    for candidate in (phrase, "the " + phrase):
        if candidate in PHRASE_TO_RELATION:
            return PHRASE_TO_RELATION[candidate]
    raise ValueError(f"{where}: unknown relation phrase {text!r}")


def query_from_graph(graph: LanguageGraph) -> Query:
    """Read an executable :class:`Query` from a language graph in the synthetic vocabulary.

    Entity words are read from the entity span (falling back to its text);
    relation phrases may keep leading connector words ("that is above").

    Raises:
        ValueError: naming the entity or relation whose words are not in the vocabulary.
    """
    descriptors = []
    for i in range(graph.num_entities):
        d = Descriptor()
        for word in graph.entity_tokens(i):
            w = word.lower()
            if w in SHAPES:
                d.shape = w
            elif w in COLORS:
                d.color = w
            elif w in SIZES:
                d.size = w
            elif w not in ("the", "a", "an", GENERIC_NOUN):
                raise ValueError(f"entity {i} {graph.entities[i].text!r}: unknown word {word!r}")
        descriptors.append(d)
    edges = []
    for parent, child, k in graph.tree_edges():
        r = graph.relations[k]
        key = _relation_key(r.text, f"relation {k}")
        edges.append((parent, child, key, r.subject != parent))
    return Query(descriptors=descriptors, edges=edges, root=graph.root)


def execute_graph(graph: LanguageGraph, relations: SceneRelations, lenient: bool = False
                  ) -> list[int]:
    """Indices of the scene objects a language graph refers to (see :func:`execute`)."""
    mask = execute(query_from_graph(graph), relations, lenient)
    return [i for i in range(len(relations.objects)) if mask >> i & 1]


def _popcount(mask: int) -> int:
    return bin(mask).count("1")


def _grow_tree(rng: random.Random, relations: SceneRelations, target: int, n_relations: int,
               max_fanout: int) -> tuple[list[int], list[Edge]] | None:
    objects = [target]
    parents = [-1]
    edges: list[Edge] = []
    fanout = [0]
    used = 1 << target
    for _ in range(n_relations):

        def eligible(u: int) -> bool:
            if fanout[u] >= max_fanout:
                return False
            if u == 0 or fanout[u] > 0:
                return True
            # u becomes inner: its parent may have no other inner child.
            p = parents[u]
            return not any(e.parent == p and e.child != u and fanout[e.child] > 0 for e in edges)

        nodes = [u for u in range(len(objects)) if eligible(u)]
        if nodes and rng.random() < 0.5 and nodes[-1] == len(objects) - 1:
            order = [nodes[-1]] + rng.sample(nodes[:-1], len(nodes) - 1)
        else:
            order = rng.sample(nodes, len(nodes))
        placed = False
        for u in order:
            src = objects[u]
            options = [k for k in PHRASES if relations.sure[k][src] & ~used]
            if not options:
                continue
            taken = {e.relation for e in edges if e.parent == u}
            options = [k for k in options if k not in taken] or options
            key = rng.choice(options)
            free = relations.sure[key][src] & ~used
            bits = [i for i in range(len(relations.objects)) if free >> i & 1]
            obj = rng.choice(bits)
            edges.append(Edge(parent=u, child=len(objects), relation=key,
                              repeat=rng.random() < 0.4))
            objects.append(obj)
            parents.append(u)
            fanout.append(0)
            fanout[u] += 1
            used |= 1 << obj
            placed = True
            break
        if not placed:
            return None
    return objects, edges


def sample_expression(rng: random.Random, relations: SceneRelations, target: int,
                      n_relations: int, max_fanout: int = 3, color_rate: float = 0.35,
                      size_rate: float = 0.2) -> Expression | None:
    """Sample an expression with ``n_relations`` relations that refers to ``target`` only.

    Relations are drawn among those that surely hold between distinct objects;
    entities mention their shape (except the subject of "the same shape as",
    which is an "object") and, at random, colour and size; further attributes
    are added greedily until executing the expression with ambiguous relations
    counted as holding finds exactly the target.  A related entity worded
    exactly like its parent ("the triangle above the triangle") then gets a
    colour or size that tells the two apart, when they differ in one.

    Args:
        rng: random generator.
        relations: the scene's relation tables.
        target: index of the referent object.
        n_relations: number of relations (0 allowed).
        max_fanout: most clauses of one entity.
        color_rate: chance that an entity mentions its colour without need.
        size_rate: chance that an entity mentions its size without need.

    Returns:
        The expression, or None when this attempt found no unique one.
    """
    grown = _grow_tree(rng, relations, target, n_relations, max_fanout)
    if grown is None:
        return None
    objects, edges = grown
    scene = relations.objects
    no_shape = {e.parent for e in edges if e.relation == "same_shape"}
    no_color = {e.child for e in edges if e.relation == "same_color"}
    nodes = []
    for i, obj in enumerate(objects):
        o = scene[obj]
        d = Descriptor(shape=None if i in no_shape and rng.random() < 0.8 else o.shape)
        if i not in no_color and rng.random() < color_rate:
            d.color = o.color
        if rng.random() < size_rate:
            d.size = o.size
        nodes.append(d)
    styles = [rng.choice(STYLES) for _ in objects]
    expr = Expression(nodes=nodes, edges=edges, styles=styles, objects=objects)
    goal = 1 << target
    found = execute(expr, relations, lenient=True)
    while found != goal:
        best: list[tuple[int, str]] = []
        best_count = _popcount(found)
        for i, obj in enumerate(objects):
            for name in _ATTRIBUTES:
                if getattr(nodes[i], name) is not None or (name == "color" and i in no_color):
                    continue
                setattr(nodes[i], name, getattr(scene[obj], name))
                count = _popcount(execute(expr, relations, lenient=True))
                setattr(nodes[i], name, None)
                if count < best_count:
                    best, best_count = [(i, name)], count
                elif count == best_count and best:
                    best.append((i, name))
        if not best:
            return None
        i, name = rng.choice(best)
        setattr(nodes[i], name, getattr(scene[objects[i]], name))
        found = execute(expr, relations, lenient=True)
    # "the triangle above the triangle" reads badly: tell such neighbours apart when possible
    for e in edges:
        parent, child = nodes[e.parent], nodes[e.child]
        if parent.words() != child.words():
            continue
        a, b = scene[objects[e.parent]], scene[objects[e.child]]
        for name in ("color", "size"):
            if (name == "color" and e.child in no_color) or getattr(a, name) == getattr(b, name):
                continue
            setattr(child, name, getattr(b, name))
            break
    if execute(expr, relations, lenient=False) != goal:
        return None
    return expr

