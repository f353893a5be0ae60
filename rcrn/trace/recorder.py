"""Record a trace of RCRN's reasoning on its one forward pass.

Usage::

    with rcrn.trace.record(model) as rec:
        out = model(batch)
    traces = rec.traces(batch, problems)     # one Trace per item

During the forward pass the recorder only keeps references to what the model
emits (``RCRN.add_recorder``); detaching, copying to the CPU and splitting the
batch into items happen in ``traces``, after the pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from rcrn import programs as P
from rcrn.batching import GroundingBatch, Vocab
from rcrn.models.rcrn import RCRN, Belief
from rcrn.nn.functional import masked_topk
from rcrn.structures import GroundingProblem
from rcrn.trace.data import BeliefTrace, ConfidenceTrace, EdgeInfo, RelationTrace, Trace

__all__ = ["TraceRecorder", "record"]


def record(model: RCRN) -> TraceRecorder:
    """A context manager recording ``model``'s forward passes (see ``TraceRecorder``)."""
    return TraceRecorder(model)


@dataclass
class _Step:
    """One belief or confidence emitted by the program, with the events that preceded it."""

    key: str
    expr: tuple
    value: Any
    extra: list[tuple[str, Any]] = field(default_factory=list)


class TraceRecorder:
    """Collects what one forward pass of ``model`` emits and turns it into ``Trace``s.

    The recorder keeps the most recent forward pass only: the first event of a
    new pass drops the previous one.  Use it as a context manager (the hook is
    removed on exit) or call ``attach`` / ``detach``.

    Args:
        model: the RCRN model to listen to.
    """

    def __init__(self, model: RCRN) -> None:
        self.model = model
        self._events: list[tuple[str, Any]] = []
        self._complete = False
        self._remove: Any = None

    # ----------------------------------------------------------- hooking
    def attach(self) -> TraceRecorder:
        """Start listening to the model (idempotent)."""
        if self._remove is None:
            self._remove = self.model.add_recorder(self._on_event)
        return self

    def detach(self) -> None:
        """Stop listening; what was recorded stays available."""
        if self._remove is not None:
            self._remove()
            self._remove = None

    def __enter__(self) -> TraceRecorder:
        return self.attach()

    def __exit__(self, *exc: object) -> None:
        self.detach()

    def _on_event(self, key: str, value: Any) -> None:
        if self._complete:
            self._events = []
            self._complete = False
        self._events.append((key, value))
        if key == "output":
            self._complete = True

    def clear(self) -> None:
        """Drop what was recorded (frees the references to the forward's tensors)."""
        self._events = []
        self._complete = False

    @property
    def has_forward(self) -> bool:
        """Whether a complete forward pass has been recorded."""
        return self._complete

    # ----------------------------------------------------------- tracing
    def traces(self, batch: GroundingBatch,
               problems: Sequence[GroundingProblem] | None = None,
               vocab: Vocab | None = None) -> list[Trace]:
        """One ``Trace`` per item of the recorded forward pass over ``batch``.

        Args:
            batch: the batch the model was called on.
            problems: the items of the batch, in order; their graphs, labels and
                image paths go into the traces.  Without them the graph is rebuilt
                from the batch (phrases decoded with ``vocab`` when given).
            vocab: decodes the phrases when ``problems`` is not given.

        Raises:
            RuntimeError: when no complete forward pass was recorded.
            ValueError: when ``problems`` does not match the batch.
        """
        if not self._complete:
            raise RuntimeError("no complete forward pass recorded: call the model inside "
                               "`with record(model) as rec:` before rec.traces(batch)")
        if problems is not None:
            ids = [p.id for p in problems]
            if ids != list(batch.ids):
                raise ValueError(f"problems {ids[:5]}... do not match the batch {batch.ids[:5]}...")
        program = self.model.program
        exprs = _subexpressions(program)
        branches = _branches(program)
        out = self._events[-1][1]
        steps: list[_Step] = []
        pending: list[tuple[str, Any]] = []
        for key, value in self._events[:-1]:
            expr = exprs.get(key)
            if expr is None:
                pending.append((key, value))
                continue
            if expr[0] in ("local", "select", "propagate", "classify"):
                steps.append(_Step(key, expr, value, pending))
            pending = []
        k = int(self.model.config.k)
        cpu = _BatchView(batch)
        beliefs = [_BeliefBatch(s, k, branches.get(s.key, [])) for s in steps
                   if s.expr[0] != "classify"]
        confs = [(s, s.value.detach().cpu().tolist()) for s in steps if s.expr[0] == "classify"]
        outputs = _OutputBatch(out)
        return [self._item(g, cpu, beliefs, confs, outputs, problems, vocab)
                for g in range(batch.num_graphs)]

    def _item(self, g: int, batch: _BatchView, beliefs: list[_BeliefBatch],
              confs: list[tuple[_Step, list[float]]], out: _OutputBatch,
              problems: Sequence[GroundingProblem] | None, vocab: Vocab | None) -> Trace:
        nodes = batch.nodes[g]
        edges = batch.edges[g]
        first = nodes[0]
        n = batch.counts[g]
        base = g * batch.N
        problem = problems[g] if problems is not None else None
        graph = (problem.graph.to_dict() if problem is not None
                 else batch.graph_dict(g, vocab))
        meta = batch.meta[g] if g < len(batch.meta) else {}
        image_path = meta.get("image_path")
        if problem is not None and problem.meta.get("image_path"):
            image_path = problem.meta["image_path"]
        edge_info = [EdgeInfo(relation=batch.edge_relation[e], parent=batch.parent[e] - first,
                              child=batch.child[e] - first, depth=batch.depth[batch.child[e]],
                              parent_is_subject=batch.parent_is_subject[e]) for e in edges]
        belief_traces = [b.item(nodes, edges, first, base, n, batch) for b in beliefs]
        conf_traces = []
        for step, values in confs:
            source = step.expr[1]
            direction = source[1] if source[0] == "propagate" else None
            name = source[3] if source[0] == "propagate" else P.to_text(source)
            label = {"up": "p_bu", "down": "p_td"}.get(direction or "", "p") + f" ({name})"
            conf_traces.append(ConfidenceTrace(key=step.key, label=label, direction=direction,
                                               source=P.to_text(source),
                                               values=[values[v] for v in nodes]))
        truth: dict[str, Any] = {}
        if batch.match[g] >= 0:
            truth["match"] = int(batch.match[g])
        if batch.target[g] >= 0:
            truth["target_index"] = batch.target[g]
            truth["referent_box"] = batch.referent_box[g]
        if batch.mismatch[g] >= 0:
            truth["mismatched_relation"] = batch.mismatch[g]
        edge_scores = None
        if out.edge_scores is not None:
            edge_scores = [0.0] * len(edges)
            for e in edges:
                edge_scores[batch.edge_relation[e]] = out.edge_scores[e]
        return Trace(
            id=str(batch.ids[g]), graph=graph, image_size=batch.image_size[g],
            boxes=batch.boxes_px[g][:n], image_path=str(image_path) if image_path else None,
            program=P.to_text(self.model.program), k=int(self.model.config.k),
            edges=edge_info, beliefs=belief_traces, confidences=conf_traces,
            match_prob=None if out.match_prob is None else out.match_prob[g],
            ground_belief=None if out.ground_belief is None else out.ground_belief[g][:n],
            ground_index=-1 if out.ground_index is None else out.ground_index[g],
            box=None if out.box is None or n == 0 else out.box[g],
            edge_scores=edge_scores,
            mismatch_index=-1 if out.mismatch_index is None else out.mismatch_index[g],
            truth=truth)


# ---------------------------------------------------------------- helpers
def _subexpressions(program: tuple) -> dict[str, tuple]:
    """``{text: expression}`` of every evaluable sub-expression of a program."""
    found: dict[str, tuple] = {}
    for e in P.walk(program):
        found.setdefault(P.to_text(e), e)
    return found


def _branches(program: tuple) -> dict[str, list[str]]:
    """``{sub-expression text: [output names using it]}``."""
    used: dict[str, list[str]] = {}
    for name, branch in program[1:]:
        for e in P.walk(branch):
            names = used.setdefault(P.to_text(e), [])
            if name not in names:
                names.append(name)
    return used


def _cpu(x: torch.Tensor) -> torch.Tensor:
    return x.detach().cpu()


class _BatchView:
    """The batch's structure as CPU Python lists, split per item."""

    def __init__(self, batch: GroundingBatch) -> None:
        B, N = batch.box_mask.shape
        self.N = N
        self.ids = list(batch.ids)
        self.meta = list(batch.meta)
        node_batch = _cpu(batch.node_batch).tolist()
        edge_batch = _cpu(batch.edge_batch).tolist()
        self.nodes: list[list[int]] = [[] for _ in range(B)]
        for v, g in enumerate(node_batch):
            self.nodes[g].append(v)
        self.edges: list[list[int]] = [[] for _ in range(B)]
        for e, g in enumerate(edge_batch):
            self.edges[g].append(e)
        ei = _cpu(batch.edge_index).tolist()
        self.parent, self.child = ei[0], ei[1]
        self.depth = _cpu(batch.node_depth).tolist()
        self.edge_relation = _cpu(batch.edge_relation).tolist()
        self.parent_is_subject = [bool(x) for x in _cpu(batch.edge_parent_is_subject).tolist()]
        self.counts = _cpu(batch.box_mask.sum(1)).tolist()
        self.boxes_px = _cpu(batch.boxes_px).tolist()
        self.image_size = [(int(round(w)), int(round(h)))
                           for w, h in _cpu(batch.image_size).tolist()]
        self.match = _cpu(batch.match).tolist()
        self.target = _cpu(batch.target_index).tolist()
        self.referent_box = _cpu(batch.referent_box).tolist()
        self.mismatch = _cpu(batch.mismatch).tolist()
        self.ent_tokens = _cpu(batch.ent_tokens).tolist()
        self.ent_lengths = _cpu(batch.ent_lengths).tolist()
        self.spo_tokens = _cpu(batch.spo_tokens).tolist()
        self.spo_lengths = _cpu(batch.spo_lengths).tolist()

    def graph_dict(self, g: int, vocab: Vocab | None) -> dict[str, Any]:
        """A ``LanguageGraph`` dict rebuilt from the batch (phrases from the word ids)."""

        def words(ids: list[int], length: int) -> list[str]:
            ids = ids[:length]
            if vocab is None:
                return [f"#{i}" for i in ids]
            return [vocab.itos[i] if 0 <= i < len(vocab.itos) else "<unk>" for i in ids]

        tokens: list[str] = []
        entities = []
        first = self.nodes[g][0]
        for v in self.nodes[g]:
            w = words(self.ent_tokens[v], self.ent_lengths[v]) or ["?"]
            entities.append({"text": " ".join(w), "span": [len(tokens), len(tokens) + len(w)],
                             "head": w[-1], "modifiers": []})
            tokens.extend(w)
        relations: list[dict[str, Any] | None] = [None] * len(self.edges[g])
        for e in self.edges[g]:
            parent, child = self.parent[e] - first, self.child[e] - first
            spo = words(self.spo_tokens[e], self.spo_lengths[e])
            subj, obj = (parent, child) if self.parent_is_subject[e] else (child, parent)
            s_len = entities[subj]["span"][1] - entities[subj]["span"][0]
            o_len = entities[obj]["span"][1] - entities[obj]["span"][0]
            w = spo[s_len:len(spo) - o_len] or ["rel"]
            relations[self.edge_relation[e]] = {"subject": subj, "object": obj,
                                                "text": " ".join(w),
                                                "span": [len(tokens), len(tokens) + len(w)]}
            tokens.extend(w)
        roots = [v - first for v in self.nodes[g] if self.depth[v] == 0]
        return {"text": " ".join(tokens), "tokens": tokens, "entities": entities,
                "relations": relations, "root": roots[0] if roots else 0}


class _OutputBatch:
    """The ``ModelOutput`` on the CPU as Python lists."""

    def __init__(self, out: Any) -> None:
        def lst(x: torch.Tensor | None) -> list | None:
            return None if x is None else _cpu(x).tolist()

        self.match_prob = lst(out.match_prob)
        self.ground_belief = lst(out.ground_belief)
        self.ground_index = lst(out.ground_index)
        self.box = lst(out.box)
        self.edge_scores = lst(out.edge_scores)
        self.mismatch_index = lst(out.mismatch_index)


class _BeliefBatch:
    """One belief stage of the whole batch on the CPU, ready to split per item."""

    def __init__(self, step: _Step, k: int, branches: list[str]) -> None:
        expr = step.expr
        belief: Belief = step.value
        self.key = step.key
        self.kind = expr[0]
        self.branches = list(branches)
        self.direction = expr[1] if self.kind == "propagate" else None
        if self.kind == "local":
            self.gate: str | None = f"local_{expr[1][1]}"
            self.label = "local" if expr[1][1] == "full" else f"local ({expr[1][1]})"
        elif self.kind == "propagate":
            self.gate = expr[3]
            self.label = ("bottom-up" if self.direction == "up" else "top-down") + f" ({expr[3]})"
        else:
            self.gate = None
            self.label = f"select {expr[1]}"
        values, slots, mask = _cpu(belief.values), _cpu(belief.slots), _cpu(belief.mask)
        top_val, top_pos, top_mask = masked_topk(values, mask, k)
        top_slots = slots.gather(1, top_pos)
        self.values = values.tolist()
        self.slots = slots.tolist()
        self.mask = mask.tolist()
        self.top_values = top_val.tolist()
        self.top_slots = top_slots.tolist()
        self.top_mask = top_mask.tolist()
        self.beta: dict[int, list[float]] = {}
        self.beta_names: list[str] = []
        self.relations: dict[int, tuple[int, list[list[float]]]] = {}
        for key, value in step.extra:
            if key.startswith("beta:local_") and self.kind == "local":
                self.beta_names = ["app", "pos"]
                self.beta = dict(enumerate(_cpu(value).tolist()))
            elif key == f"beta:{self.gate}" and self.kind == "propagate":
                self.beta_names = ["rel"]
                for node_ids, beta in value:
                    for v, b in zip(_cpu(node_ids).tolist(), _cpu(beta).tolist()):
                        self.beta[v] = [b]
            elif key.startswith(f"relation:{self.gate}:") and self.kind == "propagate":
                level = int(key.rsplit(":", 1)[1])
                edge_ids, A = value
                for e, scores in zip(_cpu(edge_ids).tolist(), _cpu(A).tolist()):
                    self.relations[e] = (level, scores)

    def item(self, nodes: list[int], edges: list[int], first: int, base: int, n: int,
             batch: _BatchView) -> BeliefTrace:
        """The stage restricted to one item (node ids from 0, its own proposal indices)."""
        proposals, values, top_p, top_v, beta = [], [], [], [], []
        def local(slots: list, vals: list, mask: list) -> tuple[list[int], list[float]]:
            kept = [(_local_slot(s, base, n), x) for s, x, m in zip(slots, vals, mask) if m]
            return [s for s, _ in kept], [x for _, x in kept]

        for v in nodes:
            props, vals = local(self.slots[v], self.values[v], self.mask[v])
            proposals.append(props)
            values.append(vals)
            tp, tv = local(self.top_slots[v], self.top_values[v], self.top_mask[v])
            top_p.append(tp)
            top_v.append(tv)
            beta.append(self.beta.get(v))
        relations = []
        for e in sorted(edges, key=lambda e: (self.relations.get(e, (0,))[0], e)):
            if e not in self.relations:
                continue
            level, scores = self.relations[e]
            parent, child = batch.parent[e], batch.child[e]
            tgt, src = (parent, child) if self.direction == "up" else (child, parent)
            keep_rows = [i for i, m in enumerate(self.mask[tgt]) if m]
            keep_cols = [j for j, m in enumerate(self.top_mask[src]) if m]
            relations.append(RelationTrace(
                relation=batch.edge_relation[e], level=level, target=tgt - first,
                context=src - first,
                rows=[_local_slot(self.slots[tgt][i], base, n) for i in keep_rows],
                cols=[_local_slot(self.top_slots[src][j], base, n) for j in keep_cols],
                scores=[[scores[i][j] for j in keep_cols] for i in keep_rows]))
        return BeliefTrace(key=self.key, kind=self.kind, label=self.label,
                           direction=self.direction, gate=self.gate, branches=self.branches,
                           proposals=proposals, values=values, top_proposals=top_p,
                           top_values=top_v, beta=beta, beta_names=self.beta_names,
                           relations=relations)


def _local_slot(slot: int, base: int, n: int) -> int:
    p = slot - base
    if not 0 <= p < n:
        raise RuntimeError(f"slot {slot} is not a proposal of this item ({n} proposals "
                           f"from {base})")
    return p
