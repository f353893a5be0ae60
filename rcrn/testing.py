"""A plain per-tree, per-node reference implementation of RCRN.

It runs the same parameters as ``rcrn.models.RCRN`` one item at a time,
walking each tree recursively, scoring every (box, box) pair through the full
pair feature ``r^o = [W_l s, W_e [o_k, o_l]]`` (no per-box fusion), with its
own top-K and F_norm.  The test suite uses it as the oracle for the batched
model and ``scripts/bench_propagation.py`` as the baseline it is measured
against.  It covers the RCRN program and its Table 3 ablations (gate modes,
no top-down pass).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from rcrn.batching import Vocab
from rcrn.boxes import decode_deltas
from rcrn.encoders import location_feature
from rcrn.models.rcrn import RCRN
from rcrn.structures import GroundingProblem

__all__ = ["reference_forward"]


def _norm(x: torch.Tensor, signed: bool = False) -> torch.Tensor:
    peak = x.abs().max() if x.numel() else x.new_zeros(())
    if peak > 1:
        x = x / peak
    return (x + 1) / 2 if signed else x


def _top(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    values, index = torch.sort(x, descending=True)
    return values[:k], index[:k]


def _padded(values: torch.Tensor, k: int) -> torch.Tensor:
    return torch.cat([values[:k], values.new_zeros(max(0, k - len(values)))])


def _select_k(expr: Any) -> int:
    """K of the program's (select K X) (the matching branch's pruning)."""
    if isinstance(expr, tuple):
        if expr[:1] == ("select",):
            return int(expr[1])
        for e in expr[1:]:
            k = _select_k(e)
            if k:
                return k
    return 0


def _gate_mode(model: RCRN, name: str) -> Any:
    return model.gates[name].gate


def reference_forward(model: RCRN, problems: Sequence[GroundingProblem],
                      vocab: Vocab) -> list[dict[str, Any]]:
    """Run ``model``'s parameters on each problem alone with plain loops.

    Returns, per problem: ``match_prob``, ``ground_belief`` ``[n]``,
    ``ground_index``, ``box``, ``edge_scores`` (by relation index),
    ``mismatch_index``, and per node ``local``, ``ground_up``, ``match_up``,
    ``match_down`` beliefs, ``p_up``, ``p_down``.
    """
    return [_one(model, p, vocab) for p in problems]


def _encode(model: RCRN, words: list[str], vocab: Vocab) -> tuple[torch.Tensor, dict]:
    ids = torch.tensor([vocab.encode(words) or [0]])
    device = next(model.parameters()).device
    ids = ids.to(device)
    state, heads = model.phrases(model.words(ids), torch.tensor([ids.shape[1]]))
    return state[0], {k: v[0] for k, v in heads.items()}


def _one(model: RCRN, problem: GroundingProblem, vocab: Vocab) -> dict[str, Any]:
    cfg = model.config
    K = cfg.k
    gates = set(model.gates.keys())
    local_name = next(n for n in gates if n.startswith("local_"))
    top_down = "match_down" in gates
    param = next(model.parameters())
    graph = problem.graph
    n = len(problem.proposals)
    W, H = problem.proposals.image_size
    boxes_px = torch.as_tensor(problem.proposals.boxes, dtype=param.dtype, device=param.device)
    boxes = boxes_px / torch.tensor([W, H, W, H], dtype=param.dtype, device=param.device)
    feats = torch.as_tensor(problem.proposals.features, dtype=param.dtype, device=param.device)
    loc = location_feature(boxes)

    # phrases
    h, app, pos = [], [], []
    for i in range(graph.num_entities):
        state, heads = _encode(model, graph.entity_tokens(i), vocab)
        h.append(state)
        app.append(heads["app"])
        pos.append(heads["pos"])
    rel = [_encode(model, graph.spo_tokens(k), vocab)[1]["spo"]
           for k in range(graph.num_relations)]

    # local correspondences: Sim + GateSum
    b_loc, ctx = [], []
    for i in range(graph.num_entities):
        x, y = model.app_sim.transform(app[i], feats)
        b_app = torch.stack([model.app_sim.score(x, y[j]) for j in range(n)]) if n else y[:0, 0]
        x, y = model.pos_sim.transform(pos[i], loc)
        b_pos = torch.stack([model.pos_sim.score(x, y[j]) for j in range(n)]) if n else y[:0, 0]
        c = torch.cat([_padded(_top(b_app.detach(), K)[0], K),
                       _padded(_top(b_pos.detach(), K)[0], K)])
        beta = _gate_mode(model, local_name)(h[i][None], c[None])[0]
        b_loc.append(_norm(beta[0] * b_app + beta[1] * b_pos, signed=True))
        ctx.append(c)

    children: dict[int, list[tuple[int, int]]] = {i: [] for i in range(graph.num_entities)}
    for parent, child, k in graph.tree_edges():
        children[parent].append((child, k))

    def relation(k: int, row_boxes: list[int], col_boxes: list[int], row_is_subject: bool
                 ) -> torch.Tensor:
        txt = model.rel_sim.text_transform(rel[k])
        A = torch.zeros(len(row_boxes), len(col_boxes), dtype=param.dtype, device=param.device)
        for a, r in enumerate(row_boxes):
            for b, c in enumerate(col_boxes):
                s, o = (r, c) if row_is_subject else (c, r)
                pair = model.rel_sim.pair_feature(feats[s], feats[o],
                                                  model.rel_sim.geometry(boxes[s], boxes[o]))
                A[a, b] = F.relu(torch.dot(model.rel_sim.visual_transform(pair), txt))
        return A

    def sent(val: torch.Tensor) -> torch.Tensor:
        """What a context node sends: its top-K beliefs, over their largest with
        message_norm="max"."""
        if cfg.message_norm == "max" and len(val):
            return val / val.max().clamp(min=1e-12)
        return val

    def update(name: str, i: int, local: torch.Tensor, log_agg: torch.Tensor) -> torch.Tensor:
        beta = _gate_mode(model, name)(h[i][None], ctx[i][None])[0, 0]
        return _norm(local * torch.exp(beta * log_agg))

    def up(name: str, i: int, slots: dict[int, list[int]], local: dict[int, torch.Tensor],
           out: dict[int, torch.Tensor]) -> torch.Tensor:
        if not children[i]:
            out[i] = local[i]
            return out[i]
        msgs = []
        for c, k in children[i]:
            bc = up(name, c, slots, local, out)
            val, idx = _top(bc, K)
            A = relation(k, slots[i], [slots[c][j] for j in idx.tolist()],
                         graph.relations[k].subject == i)
            msgs.append(torch.log(A @ sent(val) + cfg.eps))
        stacked = torch.stack(msgs)
        reduce = cfg.message_reduce.get(name, "sum")
        log_agg = (stacked.amin(0) if reduce == "min" else
                   stacked.mean(0) if reduce == "mean" else stacked.sum(0))
        out[i] = update(name, i, local[i], log_agg)
        return out[i]

    def down(name: str, i: int, slots: dict[int, list[int]], local: dict[int, torch.Tensor],
             out: dict[int, torch.Tensor]) -> None:
        if i == graph.root:
            out[i] = local[i]
        for c, k in children[i]:
            val, idx = _top(out[i], K)
            A = relation(k, slots[c], [slots[i][j] for j in idx.tolist()],
                         graph.relations[k].subject == c)
            out[c] = update(name, c, local[c], torch.log(A @ sent(val) + cfg.eps))
            down(name, c, slots, local, out)

    nodes = range(graph.num_entities)
    all_slots = {i: list(range(n)) for i in nodes}
    g_up: dict[int, torch.Tensor] = {}
    up("ground_up", graph.root, all_slots, dict(enumerate(b_loc)), g_up)

    m_slots, m_local = {}, {}
    for i in nodes:
        val, idx = _top(b_loc[i], _select_k(model.program))
        m_slots[i], m_local[i] = idx.tolist(), val
    m_up: dict[int, torch.Tensor] = {}
    up("match_up", graph.root, m_slots, m_local, m_up)
    m_down: dict[int, torch.Tensor] = {}
    if top_down:
        down("match_down", graph.root, m_slots, m_local, m_down)

    def classify(b: torch.Tensor) -> torch.Tensor:
        top = _padded(torch.sort(b, descending=True)[0], K)
        if model.config.classify_log:
            top = torch.log(top + model.config.eps)
        return torch.sigmoid(model.classify.mlp(top))[0]

    p_up = [classify(m_up[i]) for i in nodes]
    p_down = [classify(m_down[i]) for i in nodes] if top_down else p_up
    if dict(model.program[1:])["match"][0] == "and_edges":
        edges = list(graph.tree_edges())
        match = (min(max(p_up[a], p_down[b]) for a, b, _ in edges) if edges
                 else min(p_up[graph.root], p_down[graph.root]))
    else:
        match = min(min(a, b) for a, b in zip(p_up, p_down))
    scores = torch.zeros(graph.num_relations, dtype=param.dtype, device=param.device)
    for parent, child, k in graph.tree_edges():
        d = p_up[parent] - p_up[child]
        if top_down:
            d = d + (p_down[child] - p_down[parent])
        scores[k] = d
    root = g_up[graph.root]
    g_idx = int(root.argmax()) if n else -1
    box = None
    if n:
        proposal = boxes_px[g_idx]
        if model.regress is not None:
            glob = (torch.stack(rel).mean(0) if rel
                    else feats.new_zeros(model.config.joint))
            deltas = model.regress(torch.cat([feats[g_idx], loc[g_idx], glob]))
            box = decode_deltas(proposal, deltas)
        else:
            box = proposal
    return {
        "match_prob": match, "ground_belief": root, "ground_index": g_idx, "box": box,
        "edge_scores": scores,
        "mismatch_index": int(scores.argmin()) if graph.num_relations else -1,
        "local": b_loc, "ground_up": [g_up[i] for i in nodes],
        "match_up": [m_up[i] for i in nodes],
        "match_down": [m_down[i] for i in nodes] if top_down else [],
        "match_slots": [m_slots[i] for i in nodes], "p_up": p_up, "p_down": p_down,
    }


_WORDS = ["cup", "plate", "table", "man", "hat", "dog", "car", "tree", "lamp", "chair"]
_RELS = ["left of", "on", "near", "under", "behind", "holding", "next to", "above"]


def random_problem(rng: Any, nodes: int, proposals: int, feature_dim: int,
                   shape: str = "mixed", item_id: str = "", flip_prob: float = 0.3,
                   image_size: tuple[int, int] = (640, 480)) -> GroundingProblem:
    """A random tree of ``nodes`` entities against ``proposals`` random boxes.

    Args:
        rng: a ``numpy.random.Generator``.
        shape: ``chain`` (a path from the root), ``star`` (every node a child of
            the root) or ``mixed`` (each node attaches to a random earlier one).
        flip_prob: probability that a relation points from child to parent
            (the parent is then the relation's object).
    """
    import numpy as np

    from rcrn.structures import Entity, LanguageGraph, Proposals, Relation

    tokens: list[str] = []
    entities, relations = [], []

    def add(words: list[str]) -> tuple[int, int]:
        start = len(tokens)
        tokens.extend(words)
        return start, len(tokens)

    for i in range(nodes):
        noun = _WORDS[int(rng.integers(len(_WORDS)))]
        entities.append(Entity(text=f"the {noun}", span=add(["the", noun]), head=noun))
        if i == 0:
            continue
        parent = {"chain": i - 1, "star": 0}.get(shape, int(rng.integers(i)))
        words = _RELS[int(rng.integers(len(_RELS)))].split()
        span = add(words)
        s, o = (i, parent) if rng.random() < flip_prob else (parent, i)
        relations.append(Relation(subject=s, object=o, text=" ".join(words), span=span))
    graph = LanguageGraph(tokens=tokens, entities=entities, relations=relations, root=0)
    W, H = image_size
    xy = rng.uniform(0, 0.8, size=(proposals, 2)) * [W, H]
    wh = rng.uniform(0.05, 0.2, size=(proposals, 2)) * [W, H]
    boxes = np.concatenate([xy, xy + wh], axis=1)
    feats = rng.normal(size=(proposals, feature_dim)).astype(np.float32)
    ref = boxes[int(rng.integers(proposals))] if proposals else None
    return GroundingProblem(graph, Proposals(boxes, image_size, features=feats),
                            match=int(rng.integers(2)), referent_box=ref, id=item_id)


def learnable_problems(count: int, seed: int = 0, proposals: int = 8, feature_dim: int = 16,
                       noise: float = 0.3) -> list[GroundingProblem]:
    """Small problems a model can learn: each box shows one noun class in its features.

    The referent is the only box of its noun; its relation partner is a box of
    the object noun.  Half the problems are mismatched: the object noun is absent
    from the image.  Used by tests of the training loop.
    """
    import numpy as np

    from rcrn.structures import LanguageGraph, Proposals

    rng = np.random.default_rng(seed)
    classes = np.random.default_rng(1234).normal(size=(len(_WORDS), feature_dim))
    out = []
    for i in range(count):
        subj, obj = rng.choice(len(_WORDS), size=2, replace=False)
        others = [c for c in range(len(_WORDS)) if c not in (subj, obj)]
        match = int(rng.random() < 0.5)
        labels = [subj] + ([obj] if match else []) + list(
            rng.choice(others, size=proposals - 1 - match))
        order = rng.permutation(proposals)
        labels = [labels[j] for j in order]
        feats = classes[labels] + noise * rng.normal(size=(proposals, feature_dim))
        xy = rng.uniform(0, 80, size=(proposals, 2))
        boxes = np.concatenate([xy, xy + rng.uniform(5, 20, size=(proposals, 2))], axis=1)
        rel = _RELS[int(rng.integers(len(_RELS)))]
        text = f"the {_WORDS[subj]} {rel} the {_WORDS[obj]}"
        graph = LanguageGraph.from_triples(text, [(f"the {_WORDS[subj]}", rel,
                                                   f"the {_WORDS[obj]}")])
        target = labels.index(subj)
        out.append(GroundingProblem(graph, Proposals(boxes, (100, 100), features=feats),
                                    match=match, referent_box=boxes[target], id=f"l{i}",
                                    mismatched_relation=None if match else 0))
    return out
