"""The ``Trace`` of one item: every intermediate quantity of one RCRN forward pass.

A trace holds plain Python numbers only (lists of floats and ints), so it
round-trips through JSON exactly (``to_dict`` / ``from_dict``, ``save`` /
``load``).  Node indices are entity indices of the item's language graph,
relation indices index its ``relations`` and proposal indices index its own
proposals (never the padded, batch-global slots of the model).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["RelationTrace", "BeliefTrace", "ConfidenceTrace", "EdgeInfo", "Trace", "TRACE_FORMAT"]

TRACE_FORMAT = 1
"""Version of the JSON layout written by ``Trace.to_dict``."""


@dataclass
class RelationTrace:
    """Relation-alignment scores of one edge in one propagation pass.

    Attributes:
        relation: index of the relation in the graph's ``relations``.
        level: depth of the edge's child node (the pass handles levels in order).
        target: node receiving the message (the parent bottom-up, the child top-down).
        context: node sending the message.
        rows: proposals of the target node's slots.
        cols: proposals of the context node's selected top-K slots.
        scores: ``[len(rows)][len(cols)]`` relation-alignment scores ``A``.
    """

    relation: int
    level: int
    target: int
    context: int
    rows: list[int]
    cols: list[int]
    scores: list[list[float]]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RelationTrace:
        return cls(relation=int(d["relation"]), level=int(d["level"]), target=int(d["target"]),
                   context=int(d["context"]), rows=[int(x) for x in d["rows"]],
                   cols=[int(x) for x in d["cols"]],
                   scores=[[float(x) for x in row] for row in d["scores"]])


@dataclass
class BeliefTrace:
    """Beliefs of every node at one stage of the program.

    Attributes:
        key: the program sub-expression that produced the belief, e.g.
            ``"(propagate up (select 5 (local)) match_up)"``.
        kind: ``local``, ``select`` or ``propagate``.
        label: a short human-readable name, e.g. ``"bottom-up (match_up)"``.
        direction: ``up`` or ``down`` for a propagation, else None.
        gate: name of the gated module (``local_full``, ``match_up``, ...), if any.
        branches: the program outputs (``ground``, ``match``, ``mismatch``) using it.
        proposals: per node, the proposal of every valid slot.
        values: per node, the belief in those slots.
        top_proposals: per node, the proposals of the Select top-K of this belief.
        top_values: per node, the beliefs of the top-K, in decreasing order.
        beta: per node, the gate values of this stage: ``[β_app, β_pos]`` of GateSum for
            a local belief, ``[β]`` of GateProd for a node a propagation updated, None
            for a node it left unchanged (and for a select).
        beta_names: names of the entries of ``beta``.
        relations: relation-alignment scores of every edge the propagation used.
    """

    key: str
    kind: str
    label: str
    direction: str | None
    gate: str | None
    branches: list[str]
    proposals: list[list[int]]
    values: list[list[float]]
    top_proposals: list[list[int]]
    top_values: list[list[float]]
    beta: list[list[float] | None]
    beta_names: list[str] = field(default_factory=list)
    relations: list[RelationTrace] = field(default_factory=list)

    def node_belief(self, node: int) -> dict[int, float]:
        """``{proposal: belief}`` of one node."""
        return dict(zip(self.proposals[node], self.values[node]))

    def top(self, node: int, k: int | None = None) -> list[tuple[int, float]]:
        """The ``k`` (default: all recorded) best ``(proposal, belief)`` of one node."""
        pairs = list(zip(self.top_proposals[node], self.top_values[node]))
        return pairs if k is None else pairs[:k]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BeliefTrace:
        return cls(
            key=d["key"], kind=d["kind"], label=d["label"], direction=d.get("direction"),
            gate=d.get("gate"), branches=list(d.get("branches", [])),
            proposals=[[int(x) for x in row] for row in d["proposals"]],
            values=[[float(x) for x in row] for row in d["values"]],
            top_proposals=[[int(x) for x in row] for row in d["top_proposals"]],
            top_values=[[float(x) for x in row] for row in d["top_values"]],
            beta=[None if b is None else [float(x) for x in b] for b in d["beta"]],
            beta_names=list(d.get("beta_names", [])),
            relations=[RelationTrace.from_dict(r) for r in d.get("relations", [])])


@dataclass
class ConfidenceTrace:
    """Classify's confidence of every node on one belief (``p^bp`` or ``p^td``).

    Attributes:
        key: the ``(classify X)`` expression.
        label: ``p_bu`` (bottom-up) or ``p_td`` (top-down) plus the gate name.
        direction: direction of the classified propagation (None for another belief).
        source: key of the classified belief.
        values: per node confidence in (0, 1).
    """

    key: str
    label: str
    direction: str | None
    source: str
    values: list[float]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ConfidenceTrace:
        return cls(key=d["key"], label=d["label"], direction=d.get("direction"),
                   source=d["source"], values=[float(x) for x in d["values"]])


@dataclass
class EdgeInfo:
    """One tree edge of the item's graph as the model saw it.

    Attributes:
        relation: relation index in the graph's ``relations``.
        parent: parent node (towards the root).
        child: child node.
        depth: depth of the child (its propagation level).
        parent_is_subject: whether the parent is the relation's subject.
    """

    relation: int
    parent: int
    child: int
    depth: int
    parent_is_subject: bool

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EdgeInfo:
        return cls(relation=int(d["relation"]), parent=int(d["parent"]), child=int(d["child"]),
                   depth=int(d["depth"]), parent_is_subject=bool(d["parent_is_subject"]))


@dataclass
class Trace:
    """Everything one forward pass computed for one item.

    Attributes:
        id: the item's identifier.
        graph: the item's language graph (``LanguageGraph.to_dict()`` layout).
        image_size: ``(width, height)`` in pixels.
        boxes: ``[n][4]`` proposal boxes in pixels (xyxy).
        image_path: the image file, when the item names one.
        program: the program text the model evaluated.
        k: the model's top-K.
        edges: the tree edges (parent, child, relation, depth).
        beliefs: every belief stage, in evaluation order.
        confidences: every Classify output, in evaluation order.
        match_prob: P(match) (None when the program has no match output).
        ground_belief: the root's bottom-up belief over all ``n`` proposals (grounding).
        ground_index: the chosen proposal (-1 when none).
        box: the predicted referent box in pixels (after regression).
        edge_scores: Compare score ``d`` of every relation, by relation index.
        mismatch_index: the blamed relation (-1 when the graph has none).
        truth: the item's labels when known: ``match``, ``referent_box``,
            ``mismatched_relation``, ``target_index``.
        meta: free-form extra information (JSON-compatible).
    """

    id: str
    graph: dict[str, Any]
    image_size: tuple[int, int]
    boxes: list[list[float]]
    image_path: str | None
    program: str
    k: int
    edges: list[EdgeInfo]
    beliefs: list[BeliefTrace]
    confidences: list[ConfidenceTrace]
    match_prob: float | None = None
    ground_belief: list[float] | None = None
    ground_index: int = -1
    box: list[float] | None = None
    edge_scores: list[float] | None = None
    mismatch_index: int = -1
    truth: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------ queries
    @property
    def num_nodes(self) -> int:
        return len(self.graph["entities"])

    @property
    def num_proposals(self) -> int:
        return len(self.boxes)

    @property
    def root(self) -> int:
        return int(self.graph.get("root", 0))

    def node_names(self) -> list[str]:
        """The text of every entity phrase."""
        return [e["text"] for e in self.graph["entities"]]

    def relation_names(self) -> list[str]:
        """The text of every relation phrase."""
        return [r["text"] for r in self.graph.get("relations", [])]

    def belief(self, key: str) -> BeliefTrace:
        """The belief stage with expression ``key`` or label ``key``.

        Raises:
            KeyError: naming the known stages.
        """
        for b in self.beliefs:
            if key in (b.key, b.label):
                return b
        raise KeyError(f"no belief stage {key!r}; have {[b.label for b in self.beliefs]}")

    def find_belief(self, kind: str | None = None, direction: str | None = None,
                    branch: str | None = None) -> BeliefTrace | None:
        """The first belief stage of the given kind, direction and output branch."""
        for b in self.beliefs:
            if ((kind is None or b.kind == kind) and (direction is None or b.direction == direction)
                    and (branch is None or branch in b.branches)):
                return b
        return None

    def stages(self) -> list[BeliefTrace]:
        """The stages to step through: the local belief, then every propagation.

        Order: local, bottom-up passes, top-down passes (evaluation order within each).
        """
        local = [b for b in self.beliefs if b.kind == "local"][:1]
        ups = [b for b in self.beliefs if b.kind == "propagate" and b.direction == "up"]
        downs = [b for b in self.beliefs if b.kind == "propagate" and b.direction == "down"]
        return local + ups + downs

    def confidence(self, direction: str) -> ConfidenceTrace | None:
        """The confidence of the ``up`` (p^bp) or ``down`` (p^td) pass, if recorded."""
        return next((c for c in self.confidences if c.direction == direction), None)

    def relation_score(self, relation: int) -> float | None:
        """Compare score ``d`` of one relation."""
        if self.edge_scores is None or relation >= len(self.edge_scores):
            return None
        return self.edge_scores[relation]

    # --------------------------------------------------------------- json
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["image_size"] = list(self.image_size)
        d["format"] = TRACE_FORMAT
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trace:
        version = int(d.get("format", TRACE_FORMAT))
        if version > TRACE_FORMAT:
            raise ValueError(f"trace {d.get('id')!r} has format {version}; this version of "
                             f"rcrn reads format {TRACE_FORMAT} or older")
        size = d["image_size"]
        return cls(
            id=str(d["id"]), graph=dict(d["graph"]), image_size=(int(size[0]), int(size[1])),
            boxes=[[float(x) for x in b] for b in d["boxes"]], image_path=d.get("image_path"),
            program=d["program"], k=int(d["k"]),
            edges=[EdgeInfo.from_dict(e) for e in d.get("edges", [])],
            beliefs=[BeliefTrace.from_dict(b) for b in d.get("beliefs", [])],
            confidences=[ConfidenceTrace.from_dict(c) for c in d.get("confidences", [])],
            match_prob=None if d.get("match_prob") is None else float(d["match_prob"]),
            ground_belief=(None if d.get("ground_belief") is None
                           else [float(x) for x in d["ground_belief"]]),
            ground_index=int(d.get("ground_index", -1)),
            box=None if d.get("box") is None else [float(x) for x in d["box"]],
            edge_scores=(None if d.get("edge_scores") is None
                         else [float(x) for x in d["edge_scores"]]),
            mismatch_index=int(d.get("mismatch_index", -1)),
            truth=dict(d.get("truth", {})), meta=dict(d.get("meta", {})))

    def save(self, path: str | Path) -> Path:
        """Write the trace as JSON; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict()), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Trace:
        """Read a trace written by ``save``."""
        with open(path, encoding="utf-8") as f:
            return cls.from_dict(json.load(f))
