"""Export language graphs and batches to other graph libraries: networkx and DGL.

The names follow ``GroundingBatch.to_pyg``: edges point from parent to child of
the tree rooted at the referent (``edge_index`` order), a node's tree depth is
``depth`` and an edge's index into its graph's relations is ``relation``.

* :func:`to_networkx` gives one ``networkx.DiGraph`` per expression, from a
  ``LanguageGraph``, a ``GroundingProblem`` or a ``GroundingBatch`` (all graphs or
  one), with phrase text, depth and root flag on the nodes, relation text and
  direction on the edges, targets and optionally the proposals on the graph.
* :func:`to_dgl` gives one batched ``dgl.graph`` of a ``GroundingBatch`` (or a
  single ``LanguageGraph``) with node and edge data, and ``dgl.unbatch`` splits it
  into expressions.  DGL is optional and its wheels stop at torch 2.2; without
  it :class:`DGLUnavailableError` (an ``ImportError``) is raised.

Text recovered from a batch comes from its word ids, so it is in the vocabulary's
normalised (lower-case) form and unknown words read ``<unk>``; pass the batch's
``vocab`` to get it (without one, nodes and edges carry the word ids only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from rcrn.batching import (
    GroundingBatch,
    Vocab,
    _pad,  # the padding collate uses
)
from rcrn.errors import RcrnError
from rcrn.structures import GroundingProblem, LanguageGraph

__all__ = ["to_networkx", "to_dgl", "DGLUnavailableError"]


class DGLUnavailableError(RcrnError, ImportError):
    """DGL cannot be imported (not installed, or built for another torch)."""


# ------------------------------------------------------------------ networkx
def _nx() -> Any:
    try:
        import networkx as nx
    except ImportError as exc:  # pragma: no cover - networkx ships with torch_geometric
        raise ImportError("to_networkx needs networkx: pip install networkx") from exc
    return nx


def _language_graph(graph: LanguageGraph) -> Any:
    nx = _nx()
    G = nx.DiGraph(text=graph.text, root=graph.root, tokens=list(graph.tokens))
    depth = graph.depths()
    for i, e in enumerate(graph.entities):
        G.add_node(i, text=e.text, words=graph.entity_tokens(i), head=e.head,
                   modifiers=list(e.modifiers), span=tuple(e.span), depth=depth[i],
                   is_root=i == graph.root)
    for parent, child, k in graph.tree_edges():
        r = graph.relations[k]
        G.add_edge(parent, child, relation=k, text=r.text, span=tuple(r.span),
                   subject=r.subject, object=r.object, parent_is_subject=r.subject == parent,
                   spo_text=" ".join(graph.spo_tokens(k)))
    return G


def _problem_graph(problem: GroundingProblem, proposals: bool, features: bool) -> Any:
    G = _language_graph(problem.graph)
    G.graph.update(id=problem.id, match=problem.match,
                   mismatch=problem.mismatched_relation,
                   target_index=problem.target_index if problem.referent_box is not None
                   else None,
                   referent_box=None if problem.referent_box is None
                   else np.asarray(problem.referent_box, dtype=np.float32))
    if proposals:
        props = problem.proposals
        G.graph.update(boxes=np.asarray(props.boxes, dtype=np.float32),
                       image_size=tuple(props.image_size), image_id=props.image_id,
                       scores=None if props.scores is None else np.asarray(props.scores),
                       labels=None if props.labels is None else list(props.labels))
        if features:
            G.graph["features"] = (None if props.features is None
                                   else np.asarray(props.features))
    return G


def _words(ids: torch.Tensor, length: int, vocab: Vocab | None) -> str | None:
    if vocab is None:
        return None
    return " ".join(vocab.itos[int(i)] if 0 <= int(i) < len(vocab) else "<unk>"
                    for i in ids[:length].tolist() if int(i) != 0)


def _batch_graph(batch: GroundingBatch, g: int, vocab: Vocab | None, proposals: bool,
                 features: bool) -> Any:
    nx = _nx()
    if not 0 <= g < batch.num_graphs:
        raise IndexError(f"graph {g} of a batch of {batch.num_graphs}")
    cpu = batch if batch.node_batch.device.type == "cpu" else batch.to("cpu")
    nodes = (cpu.node_batch == g).nonzero().flatten()
    edges = (cpu.edge_batch == g).nonzero().flatten()
    offset = int(nodes[0]) if len(nodes) else 0
    root = int(cpu.root[g]) - offset
    ent_text = {}
    G = nx.DiGraph(id=cpu.ids[g], root=root)
    text_tokens = getattr(cpu, "text_tokens", None)
    text_lengths = getattr(cpu, "text_lengths", None)
    if text_tokens is not None and text_lengths is not None:
        G.graph["token_ids"] = text_tokens[g, :int(text_lengths[g])].tolist()
        if vocab is not None:
            G.graph["text"] = _words(text_tokens[g], int(text_lengths[g]), vocab)
    for v in nodes.tolist():
        length = int(cpu.ent_lengths[v])
        attrs = {"token_ids": cpu.ent_tokens[v, :length].tolist(),
                 "depth": int(cpu.node_depth[v]), "is_root": v - offset == root,
                 "global_index": v}
        if vocab is not None:
            attrs["text"] = ent_text[v] = _words(cpu.ent_tokens[v], length, vocab)
        G.add_node(v - offset, **attrs)
    edge_span = getattr(cpu, "edge_span", None)
    for e in edges.tolist():
        parent, child = (int(x) for x in cpu.edge_index[:, e])
        parent_is_subject = bool(cpu.edge_parent_is_subject[e])
        subject, obj = (parent, child) if parent_is_subject else (child, parent)
        length = int(cpu.spo_lengths[e])
        spo_ids = cpu.spo_tokens[e, :length].tolist()
        attrs = {"relation": int(cpu.edge_relation[e]), "subject": subject - offset,
                 "object": obj - offset, "parent_is_subject": parent_is_subject,
                 "spo_token_ids": spo_ids, "global_index": e}
        # the relation phrase: its span in the expression when the batch has one, else
        # the spo words between the subject's and the object's phrase
        if edge_span is not None and text_tokens is not None:
            start, end = (int(x) for x in edge_span[e])
            rel_ids = text_tokens[g, start:end].tolist()
        else:
            ns, no = int(cpu.ent_lengths[subject]), int(cpu.ent_lengths[obj])
            rel_ids = spo_ids[ns:max(ns, len(spo_ids) - no)]
        attrs["token_ids"] = rel_ids
        if vocab is not None:
            attrs["text"] = _words(torch.tensor(rel_ids, dtype=torch.long), len(rel_ids),
                                   vocab)
            attrs["spo_text"] = _words(cpu.spo_tokens[e], length, vocab)
        G.add_edge(parent - offset, child - offset, **attrs)
    match, target, mismatch = (float(cpu.match[g]), int(cpu.target_index[g]),
                               int(cpu.mismatch[g]))
    G.graph.update(match=None if match < 0 else int(match),
                   target_index=None if target < 0 else target,
                   mismatch=None if mismatch < 0 else mismatch,
                   referent_box=(cpu.referent_box[g].numpy().copy()
                                 if int(cpu.target_index[g]) >= 0 else None))
    if proposals:
        mask = cpu.box_mask[g]
        W, H = (int(x) for x in cpu.image_size[g].tolist())
        G.graph.update(boxes=cpu.boxes_px[g][mask].numpy().copy(), image_size=(W, H))
        if features:
            G.graph["features"] = cpu.box_feats[g][mask].numpy().copy()
    return G


def to_networkx(obj: GroundingBatch | GroundingProblem | LanguageGraph
                | Sequence[GroundingProblem | LanguageGraph],
                index: int | None = None, vocab: Vocab | None = None,
                proposals: bool = False, features: bool = False) -> Any:
    """``networkx.DiGraph`` of an expression: nodes are entities, edges parent -> child.

    Args:
        obj: a ``GroundingBatch``, a ``GroundingProblem``, a ``LanguageGraph``, or a
            list of problems / graphs.
        index: for a batch or a list, the one graph to convert; ``None`` converts
            every graph and returns a list.
        vocab: the batch's vocabulary, to turn word ids back into text (batches only).
        proposals: put the proposals on the graph (``G.graph["boxes"]`` ``[n, 4]``
            pixels xyxy, ``image_size``; problems also ``image_id``, ``scores``,
            ``labels``).
        features: with ``proposals``, also ``G.graph["features"]`` ``[n, D]``.

    Node attributes: ``text`` (phrase; batches: only with ``vocab``), ``depth``,
    ``is_root``; graphs also ``words``, ``head``, ``modifiers``, ``span``; batches
    ``token_ids`` and ``global_index`` (the node's index in the batch).

    Edge attributes (``parent -> child``): ``relation`` (index in the graph's
    relations), ``text`` (the relation phrase), ``spo_text``, ``subject`` and
    ``object`` (node ids), ``parent_is_subject``; batches also ``token_ids``,
    ``spo_token_ids`` and ``global_index``.

    Graph attributes: ``root``, ``text`` (when known), ``id``, ``match``,
    ``target_index``, ``mismatch`` and ``referent_box`` (None when unknown).

    Returns:
        One DiGraph, or a list of them (a batch or list with ``index=None``).
    """
    if isinstance(obj, GroundingBatch):
        if index is None:
            return [_batch_graph(obj, g, vocab, proposals, features)
                    for g in range(obj.num_graphs)]
        return _batch_graph(obj, index, vocab, proposals, features)
    if isinstance(obj, (GroundingProblem, LanguageGraph)):
        if index not in (None, 0):
            raise IndexError(f"a single {type(obj).__name__} has only graph 0, not {index}")
        if isinstance(obj, GroundingProblem):
            return _problem_graph(obj, proposals, features)
        if proposals:
            raise ValueError("a LanguageGraph has no proposals; pass the GroundingProblem")
        return _language_graph(obj)
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        if index is not None:
            return to_networkx(obj[index], None, vocab, proposals, features)
        return [to_networkx(x, None, vocab, proposals, features) for x in obj]
    raise TypeError(f"to_networkx converts a GroundingBatch, GroundingProblem or "
                    f"LanguageGraph, not {type(obj).__name__}")


# ----------------------------------------------------------------------- DGL
def _import_dgl() -> Any:
    try:
        import dgl
    except ImportError as exc:
        raise DGLUnavailableError(
            f"to_dgl needs DGL, which cannot be imported here ({exc}). DGL is not a "
            f"dependency of rcrn: its wheels stop at torch 2.2 and this environment has "
            f"torch {torch.__version__}. Install DGL in an environment with a torch it "
            f"supports, or use GroundingBatch.to_pyg() or rcrn.interop.to_networkx()."
        ) from exc
    except OSError as exc:  # installed, but its native libraries do not load
        raise DGLUnavailableError(
            f"DGL is installed but cannot be loaded ({exc}); its wheels stop at torch 2.2 "
            f"and this environment has torch {torch.__version__}. Use "
            f"GroundingBatch.to_pyg() or rcrn.interop.to_networkx() instead.") from exc
    return dgl


def _graph_arrays(graph: LanguageGraph, vocab: Vocab | None) -> dict[str, Any]:
    """The batch-style tensors of one language graph (for ``to_dgl``)."""
    depth = graph.depths()
    edges = graph.tree_edges()
    out = {
        "num_graphs": 1, "num_nodes": graph.num_entities,
        "edge_index": torch.tensor([[p for p, _, _ in edges], [c for _, c, _ in edges]],
                                   dtype=torch.long).reshape(2, -1),
        "node_batch": torch.zeros(graph.num_entities, dtype=torch.long),
        "edge_batch": torch.zeros(len(edges), dtype=torch.long),
        "node_depth": torch.tensor(depth, dtype=torch.long),
        "root": torch.tensor([graph.root], dtype=torch.long),
        "edge_relation": torch.tensor([k for _, _, k in edges], dtype=torch.long),
        "edge_parent_is_subject": torch.tensor(
            [graph.relations[k].subject == p for p, _, k in edges], dtype=torch.bool),
    }
    if vocab is not None:
        out["ent_tokens"], out["ent_lengths"] = _pad(
            [vocab.encode(graph.entity_tokens(i)) for i in range(graph.num_entities)])
        if edges:
            out["spo_tokens"], out["spo_lengths"] = _pad(
                [vocab.encode(graph.spo_tokens(k)) for _, _, k in edges])
    return out


def to_dgl(obj: GroundingBatch | LanguageGraph, vocab: Vocab | None = None) -> Any:
    """A ``dgl.graph`` of a batch (all its expressions, batched) or of one language graph.

    Edges run parent -> child (``edge_index``); ``set_batch_num_nodes`` /
    ``set_batch_num_edges`` record the expressions, so ``dgl.unbatch`` splits them.

    Node data: ``depth``, ``is_root``, ``batch`` (the node's expression) and, from a
    batch or with ``vocab``, ``tokens`` ``[V, L]`` (word ids, 0-padded) and ``lengths``.
    Edge data: ``relation``, ``parent_is_subject``, ``batch`` and, as for nodes,
    ``tokens`` / ``lengths`` of the subject-predicate-object phrase.

    Args:
        obj: a ``GroundingBatch`` or a ``LanguageGraph``.
        vocab: for a ``LanguageGraph``, encodes its words into ``tokens``.

    Raises:
        DGLUnavailableError: ``dgl`` cannot be imported (an ``ImportError``).
    """
    if isinstance(obj, GroundingBatch):
        arrays = {name: getattr(obj, name) for name in (
            "edge_index", "node_batch", "edge_batch", "node_depth", "root", "edge_relation",
            "edge_parent_is_subject", "ent_tokens", "ent_lengths", "spo_tokens",
            "spo_lengths")}
        arrays.update(num_graphs=obj.num_graphs, num_nodes=obj.num_nodes)
    elif isinstance(obj, LanguageGraph):
        arrays = _graph_arrays(obj, vocab)
    else:
        raise TypeError(f"to_dgl converts a GroundingBatch or a LanguageGraph, not "
                        f"{type(obj).__name__}")
    dgl = _import_dgl()
    ei = arrays["edge_index"]
    V, B = int(arrays["num_nodes"]), int(arrays["num_graphs"])
    device = ei.device
    g = dgl.graph((ei[0], ei[1]), num_nodes=V, idtype=torch.int64, device=device)
    is_root = torch.zeros(V, dtype=torch.bool, device=device)
    is_root[arrays["root"]] = True
    g.ndata["depth"] = arrays["node_depth"]
    g.ndata["is_root"] = is_root
    g.ndata["batch"] = arrays["node_batch"]
    g.edata["relation"] = arrays["edge_relation"]
    g.edata["parent_is_subject"] = arrays["edge_parent_is_subject"]
    g.edata["batch"] = arrays["edge_batch"]
    if arrays.get("ent_tokens") is not None:
        g.ndata["tokens"] = arrays["ent_tokens"]
        g.ndata["lengths"] = arrays["ent_lengths"]
    if arrays.get("spo_tokens") is not None and ei.shape[1]:
        g.edata["tokens"] = arrays["spo_tokens"]
        g.edata["lengths"] = arrays["spo_lengths"]
    g.set_batch_num_nodes(torch.bincount(arrays["node_batch"], minlength=B))
    g.set_batch_num_edges(torch.bincount(arrays["edge_batch"], minlength=B))
    return g
