"""Readers (and a writer) for the language scene graphs that datasets ship.

GITM-MR ``parse/{split}_graphs.pkl``
    ``{sent_id: {entity_phrase_list, spo_phrase, adj_matrix, parent_matrix, referent}}``
    where phrases are lists (or arrays) of word ids into
    ``word_embedding/vocabulary_72700.txt`` (line index = word id; id 0 is the
    padding ``<pad>`` and is skipped), ``adj_matrix[s, o]`` is the index of the
    relation phrase whose subject is entity ``s`` and object ``o`` (-1: none),
    and ``referent`` is the root entity.  The pickle is read with the restricted
    unpickler :func:`rcrn.safe_pickle.load`.  Relations are listed by that spo
    index, as the release indexes them (Compare, ``foil_pos``): relation ``j`` of
    the graph is ``spo_phrase[j]`` when ``adj_matrix`` uses every phrase once.

SGMN / Ref-Reasoning ``{split}_sg_seqs.json`` (with ``{split}_sgs.json``)
    ``seq_sg`` lists the graph's elements: ``type 'S'`` a lone entity (``seq``:
    its phrase as split ids), ``type 'SPO'`` a triple (``seq``: subject split,
    relation split(s), object split).  ``com_seq`` lists the elements with no
    out-going edge; the subject of the last of them is the referent.  The words
    of a split come from ``words_info`` of the matching ``_sgs.json`` record
    (``[weight, dependency type, split id, word]`` per word, in sentence order),
    and ``co_index`` maps a pronoun's split to its antecedent's.

Token convention of the reconstructed graphs
    *GITM-MR*: the parse holds no sentence, so the tokens are the words of every
    entity phrase, in entity order, followed by the words of every relation
    phrase, in relation-phrase order; each entity and relation spans its own
    words.  When a relation phrase starts with its subject's words and ends with
    its object's words (a full subject-predicate-object phrase), only the words
    in between are the relation.  With ``expressions`` given, the graph's
    ``text`` is the original expression.
    *SGMN*: the tokens are the sentence's words from ``words_info``; a phrase
    spans from its first to its last word.  Without the ``_sgs.json`` file, each
    split becomes one placeholder token ``#<split id>``, in the order the
    elements first use them (subject, object, then relation splits).

Graphs that are not trees raise :class:`ReaderError` (naming file and record)
unless ``strict=False``, which repairs them with
:class:`~parsers.base.GraphBuilder` and reports what it changed in the optional
``warnings`` list.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parsers.base import GraphBuilder
from rcrn import safe_pickle
from rcrn.errors import RcrnError
from rcrn.structures import Entity, LanguageGraph, Relation, StructureError

__all__ = [
    "ReaderError",
    "read_vocabulary",
    "read_gitm_parses",
    "gitm_record",
    "write_gitm_parses",
    "read_sgmn_graphs",
]


class ReaderError(RcrnError, ValueError):
    """A graph file is malformed; the message names the file and the record."""


# ------------------------------------------------------------------ GITM-MR
def read_vocabulary(path: str | Path) -> list[str]:
    """Read a vocabulary file: one word a line, the line index is the word id.

    The release's rule, shared with :meth:`rcrn.batching.Vocab.from_file`: lines are
    stripped (UTF-8), line 0 must be ``<pad>`` and ``<unk>`` must be listed.
    """
    from rcrn.batching import Vocab  # here, so that importing parsers needs no torch

    try:
        return Vocab.from_file(path).to_list()
    except OSError as exc:
        raise ReaderError(f"{path}: cannot read the vocabulary ({exc})") from exc
    except ValueError as exc:
        raise ReaderError(str(exc)) from exc


def _ids(value: Any, where: str) -> list[int]:
    try:
        arr = np.asarray(value).reshape(-1)
        return [int(x) for x in arr]
    except (TypeError, ValueError) as exc:
        raise ReaderError(f"{where}: expected a list of word ids ({exc})") from exc


def _gitm_graph(sent_id: str, rec: Any, vocab: Sequence[str], where: str, text: str,
                strict: bool, warnings: list[str] | None) -> LanguageGraph:
    if not isinstance(rec, Mapping):
        raise ReaderError(f"{where}: record {sent_id!r} is not a dict")
    for key in ("entity_phrase_list", "spo_phrase", "adj_matrix", "referent"):
        if key not in rec:
            raise ReaderError(f"{where}: record {sent_id!r} has no {key!r}")
    here = f"{where}: record {sent_id!r}"

    def words(ids: list[int], what: str) -> list[str]:
        out = []
        for i in ids:
            if i == 0:
                continue  # padding
            if not 0 <= i < len(vocab):
                raise ReaderError(f"{here}: {what} holds word id {i}, outside the vocabulary "
                                  f"of {len(vocab)} words")
            out.append(vocab[i])
        return out

    ent_words = [words(_ids(p, f"{here} entity {k}"), f"entity {k}")
                 for k, p in enumerate(rec["entity_phrase_list"])]
    spo_words = [words(_ids(p, f"{here} relation phrase {k}"), f"relation phrase {k}")
                 for k, p in enumerate(rec["spo_phrase"])]
    n = len(ent_words)
    if n == 0:
        raise ReaderError(f"{here}: no entity phrase")
    try:
        adj = np.asarray(rec["adj_matrix"], dtype=np.int64)
    except (TypeError, ValueError) as exc:
        raise ReaderError(f"{here}: adj_matrix is not an integer matrix ({exc})") from exc
    if adj.shape != (n, n):
        raise ReaderError(f"{here}: adj_matrix has shape {list(adj.shape)}, expected [{n}, {n}]")
    try:
        referent = int(np.asarray(rec["referent"]).reshape(-1)[0])
    except (TypeError, ValueError, IndexError) as exc:
        raise ReaderError(f"{here}: referent is not an entity index ({exc})") from exc
    if not 0 <= referent < n:
        raise ReaderError(f"{here}: referent {referent} is not an entity index (have {n})")

    edges: list[tuple[int, int, int]] = []
    used: set[tuple[int, int, int]] = set()
    for s in range(n):
        for o in range(n):
            k = int(adj[s, o])
            if k < 0:
                continue
            if k >= len(spo_words):
                raise ReaderError(f"{here}: adj_matrix[{s}, {o}] = {k} but there are only "
                                  f"{len(spo_words)} relation phrases")
            if (o, s, k) in used:
                continue  # the same phrase stored in both directions
            used.add((s, o, k))
            edges.append((s, o, k))
    # relation j is the phrase of the j-th spo index (as the release indexes relations
    # and foil_pos); the sort is stable, so a phrase stored twice keeps row-major order
    edges.sort(key=lambda e: e[2])

    tokens: list[str] = []
    entities = []
    for k, ws in enumerate(ent_words):
        start = len(tokens)
        tokens.extend(ws)
        phrase = " ".join(ws)
        entities.append(Entity(text=phrase, span=(start, len(tokens)),
                               head=ws[-1] if ws else f"entity{k}"))
    rel_spans: dict[int, tuple[int, int]] = {}
    for s, o, k in edges:
        if k in rel_spans:
            continue
        ws = spo_words[k]
        sw, ow = ent_words[s], ent_words[o]
        if sw and ow and len(ws) > len(sw) + len(ow) and ws[:len(sw)] == sw \
                and ws[len(ws) - len(ow):] == ow:
            ws = ws[len(sw):len(ws) - len(ow)]
        start = len(tokens)
        tokens.extend(ws)
        rel_spans[k] = (start, len(tokens))
    relations = [Relation(subject=s, object=o, text=" ".join(tokens[slice(*rel_spans[k])]),
                          span=rel_spans[k]) for s, o, k in edges]
    return _finish(tokens, entities, relations, referent, text or " ".join(tokens), here,
                   strict, warnings)


def _finish(tokens: list[str], entities: list[Entity], relations: list[Relation], root: int,
            text: str, here: str, strict: bool,
            warnings: list[str] | None) -> LanguageGraph:
    try:
        return LanguageGraph(tokens=tokens, entities=entities, relations=relations, root=root,
                             text=text)
    except StructureError as exc:
        if strict:
            raise ReaderError(f"{here}: {exc}") from exc
    builder = GraphBuilder(tokens, text)
    for e in entities:
        builder.add_entity(e.span[0], e.span[1], e.head, e.modifiers, text=e.text)
    for r in relations:
        builder.add_relation(r.subject, r.object, r.span[0], r.span[1], text=r.text)
    graph = builder.build(root)
    if warnings is not None:
        warnings.extend(f"{here}: {w}" for w in builder.warnings)
    return graph


def read_gitm_parses(path: str | Path, vocabulary: str | Path | Sequence[str],
                     expressions: Mapping[str, Any] | str | Path | None = None,
                     strict: bool = True,
                     warnings: list[str] | None = None) -> dict[str, LanguageGraph]:
    """Read a GITM-MR parse pickle into ``{sent_id: LanguageGraph}``.

    Args:
        path: ``parse/{split}_graphs.pkl`` or ``{split}_foil_rel_graphs.pkl``.
        vocabulary: the vocabulary file, or its words (index = word id).
        expressions: optional ``{sent_id: {"expression": str, ...}}`` (or the path
            of an ``expression/*.json`` file) giving each graph its original text.
        strict: raise on graphs that are not trees (else repair them).
        warnings: a list that receives repair notes when ``strict`` is False.

    Raises:
        ReaderError: naming the file and the record for anything malformed.
    """
    path = Path(path)
    vocab = read_vocabulary(vocabulary) if isinstance(vocabulary, (str, Path)) \
        else list(vocabulary)
    try:
        data = safe_pickle.load(path)
    except OSError as exc:
        raise ReaderError(f"{path}: cannot read ({exc})") from exc
    except safe_pickle.UnsafePickleError as exc:
        raise ReaderError(str(exc)) from exc
    if not isinstance(data, Mapping):
        raise ReaderError(f"{path}: expected a dict of records, got {type(data).__name__}")
    texts = _expressions(expressions)
    out = {}
    for sent_id, rec in data.items():
        sid = str(sent_id)
        text = texts.get(sid, "")
        out[sid] = _gitm_graph(sid, rec, vocab, str(path), text, strict, warnings)
    return out


def _expressions(expressions: Mapping[str, Any] | str | Path | None) -> dict[str, str]:
    if expressions is None:
        return {}
    if isinstance(expressions, (str, Path)):
        p = Path(expressions)
        try:
            expressions = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ReaderError(f"{p}: cannot read the expressions ({exc})") from exc
        if not isinstance(expressions, Mapping):
            raise ReaderError(f"{p}: expected a dict of expressions")
    out = {}
    for k, v in expressions.items():
        out[str(k)] = str(v.get("expression", "")) if isinstance(v, Mapping) else str(v)
    return out


def gitm_record(graph: LanguageGraph, word_ids: Mapping[str, int]) -> dict[str, Any]:
    """The GITM-MR parse record of ``graph`` (words are looked up lowercase).

    Unknown words map to ``<unk>``; without ``<unk>`` in ``word_ids`` they raise.
    ``parent_matrix[p, c]`` is 1 for every tree edge from parent ``p`` to child ``c``.
    """
    unk = word_ids.get("<unk>")

    def ids(words: list[str]) -> list[int]:
        out = []
        for w in words:
            i = word_ids.get(w.lower(), word_ids.get(w, unk))
            if i is None:
                raise ReaderError(f"word {w!r} is not in the vocabulary (which has no <unk>)")
            out.append(int(i))
        return out

    n = graph.num_entities
    adj = np.full((n, n), -1, dtype=np.int64)
    parent = np.zeros((n, n), dtype=np.int64)
    spo = []
    for k, r in enumerate(graph.relations):
        words = graph.tokens[r.span[0]:r.span[1]] or r.text.split()
        spo.append(ids(words))
        adj[r.subject, r.object] = k
    for p, c, _ in graph.tree_edges():
        parent[p, c] = 1
    return {"entity_phrase_list": [ids(graph.entity_tokens(i)) for i in range(n)],
            "spo_phrase": spo, "adj_matrix": adj, "parent_matrix": parent,
            "referent": graph.root}


def write_gitm_parses(graphs: Mapping[str, LanguageGraph], path: str | Path,
                      vocabulary: str | Path | Sequence[str]) -> None:
    """Write ``{sent_id: graph}`` as a GITM-MR parse pickle (see :func:`gitm_record`)."""
    vocab = read_vocabulary(vocabulary) if isinstance(vocabulary, (str, Path)) \
        else list(vocabulary)
    word_ids = {w: i for i, w in enumerate(vocab)}  # a repeated word keeps its last id
    records = {sid: gitm_record(g, word_ids) for sid, g in graphs.items()}
    Path(path).write_bytes(pickle.dumps(records, protocol=4))


# --------------------------------------------------------------------- SGMN
def _load_json(path: str | Path, what: str) -> Any:
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ReaderError(f"{p}: cannot read the {what} ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise ReaderError(f"{p}: line {exc.lineno}: not valid JSON ({exc.msg})") from exc


def _sgmn_graph(sent_id: str, rec: Any, sg: Any, here: str, strict: bool,
                warnings: list[str] | None) -> LanguageGraph:
    if not isinstance(rec, Mapping) or not isinstance(rec.get("seq_sg"), list):
        raise ReaderError(f"{here}: record {sent_id!r} has no 'seq_sg' list")
    here = f"{here}: record {sent_id!r}"
    co_index: dict[str, Any] = {}
    split_words: dict[int, list[int]] = {}
    if sg is not None:
        if not isinstance(sg, Mapping) or not isinstance(sg.get("words_info"), list):
            raise ReaderError(f"{here}: the scene-graph record has no 'words_info' list")
        tokens = []
        for w, info in enumerate(sg["words_info"]):
            if not isinstance(info, (list, tuple)) or len(info) < 4:
                raise ReaderError(f"{here}: words_info[{w}] is not [weight, type, split, word]")
            tokens.append(str(info[3]))
            try:
                split_words.setdefault(int(info[2]), []).append(w)
            except (TypeError, ValueError):
                raise ReaderError(f"{here}: words_info[{w}] has a non-integer split id "
                                  f"{info[2]!r}") from None
        co_index = {str(k): v for k, v in (sg.get("co_index") or {}).items()}
    else:
        tokens = []

    def canon(split: Any) -> int:
        try:
            s = int(split)
        except (TypeError, ValueError):
            raise ReaderError(f"{here}: split id {split!r} is not an integer") from None
        seen = set()
        while str(s) in co_index and s not in seen:
            seen.add(s)
            s = int(co_index[str(s)])
        return s

    def span_of(splits: list[int]) -> tuple[int, int]:
        if sg is None:
            idx = []
            for s in splits:
                name = f"#{s}"
                if name not in tokens:
                    tokens.append(name)
                idx.append(tokens.index(name))
        else:
            idx = [w for s in splits for w in split_words.get(s, [])]
            if not idx:
                raise ReaderError(f"{here}: split(s) {splits} have no words in words_info")
        return min(idx), max(idx) + 1

    ent_index: dict[int, int] = {}
    entities: list[Entity] = []
    elements: list[tuple[int, int, tuple[int, int]] | tuple[int]] = []

    def entity(split: int, raw: int) -> int:
        if split not in ent_index:
            a, b = span_of([split] if sg is None or split in split_words else [raw])
            phrase = " ".join(tokens[a:b])
            head = phrase.split()[-1] if phrase else f"#{split}"
            if sg is not None:
                heads = [tokens[w] for w in split_words.get(split, [])
                         if str(sg["words_info"][w][1]) == "head"]
                head = " ".join(heads) or head
            ent_index[split] = len(entities)
            entities.append(Entity(text=phrase, span=(a, b), head=head))
        return ent_index[split]

    for k, el in enumerate(rec["seq_sg"]):
        if not isinstance(el, Mapping) or not isinstance(el.get("seq"), list):
            raise ReaderError(f"{here}: seq_sg[{k}] has no 'seq' list")
        seq = el["seq"]
        kind = el.get("type", "SPO" if len(seq) >= 3 else "S")
        if kind == "SPO":
            if len(seq) < 3:
                raise ReaderError(f"{here}: seq_sg[{k}] is an SPO element with {len(seq)} splits "
                                  f"(needs subject, relation and object)")
            s = entity(canon(seq[0]), int(seq[0]))
            o = entity(canon(seq[-1]), int(seq[-1]))
            elements.append((s, o, span_of([int(x) for x in seq[1:-1]])))
        elif kind == "S":
            if not seq:
                raise ReaderError(f"{here}: seq_sg[{k}] is an empty 'S' element")
            elements.append((entity(canon(seq[0]), int(seq[0])),))
        else:
            raise ReaderError(f"{here}: seq_sg[{k}] has unknown type {kind!r}")
    if not entities:
        raise ReaderError(f"{here}: no entity in seq_sg")
    relations = []
    seen_pairs = set()
    for el in elements:
        if len(el) == 3:
            s, o, span = el  # type: ignore[misc]
            if s == o or frozenset((s, o)) in seen_pairs:
                if strict:
                    raise ReaderError(f"{here}: a repeated or self relation between entities "
                                      f"{s} and {o}")
                continue
            seen_pairs.add(frozenset((s, o)))
            relations.append(Relation(subject=s, object=o, text=" ".join(tokens[span[0]:span[1]]),
                                      span=span))
    com = rec.get("com_seq") or [len(elements) - 1]
    try:
        last = max(int(c) for c in com)
        root = elements[last][0]
    except (TypeError, ValueError, IndexError):
        raise ReaderError(f"{here}: com_seq {com!r} does not index seq_sg") from None
    text = " ".join(tokens)
    return _finish(tokens, entities, relations, root, text, here, strict, warnings)


def read_sgmn_graphs(sg_seqs: str | Path, sgs: str | Path | None = None, strict: bool = True,
                     warnings: list[str] | None = None) -> dict[str, LanguageGraph]:
    """Read SGMN ``{split}_sg_seqs.json`` (+ ``{split}_sgs.json``) into ``{sent_id: graph}``.

    Args:
        sg_seqs: the ``_sg_seqs.json`` file.
        sgs: the matching ``_sgs.json`` file with the words; without it, splits
            become placeholder tokens (see the module docstring).
        strict: raise on graphs that are not trees (else repair them).
        warnings: a list that receives repair notes when ``strict`` is False.

    Raises:
        ReaderError: naming the file and the record for anything malformed.
    """
    data = _load_json(sg_seqs, "scene-graph sequences")
    if not isinstance(data, Mapping):
        raise ReaderError(f"{sg_seqs}: expected a dict of records")
    words = _load_json(sgs, "scene graphs") if sgs is not None else None
    if words is not None and not isinstance(words, Mapping):
        raise ReaderError(f"{sgs}: expected a dict of records")
    out = {}
    for sent_id, rec in data.items():
        sid = str(sent_id)
        sg = None
        if words is not None:
            if sid not in words:
                raise ReaderError(f"{sgs}: no record {sid!r} (present in {sg_seqs})")
            sg = words[sid]
        out[sid] = _sgmn_graph(sid, rec, sg, str(sg_seqs), strict, warnings)
    return out
