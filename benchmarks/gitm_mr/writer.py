"""Writing the GITM-MR release layout (read back by :class:`GITMMRBenchmark`).

Conventions of the written files (the official release leaves some of them open):

* positive ids are the source ids; a negative's id is ``<positive id>_neg``;
* ``bbox`` is ``[x, y, w, h]`` with ``w = x2 - x1`` (continuous pixel coordinates);
* ``foil_pos`` indexes the negative parse's ``spo_phrase`` list (one phrase per
  relation, in the graph's relation order) and ``foil_indices`` is the word range
  ``[start, end)`` of ``foil_phrase`` in the negative expression; ``target_phrase``
  is the phrase it replaced;
* ``counter_type`` is ``"rel"``;
* ``small/train_small_sent_ids_{16,11}.json`` list the paired train positives of at
  most 16 / 11 words;
* the vocabulary ``word_embedding/vocabulary_<n>.txt`` holds ``<pad>`` (line 0),
  ``<unk>`` and every lowercase word of the graphs; no embedding matrix is written;
* ``vinvl_objects/gt_objects_0.h5`` holds every image's features in dataset
  ``features`` ``[images, max boxes, dim]`` (gzip), row ``idx`` of ``rois_info.pkl``;
* ``manifest.json`` (written last) lists every file written (``"written"``).  The
  writer writes only into a new or empty folder or one holding nothing but its own
  earlier output (which it replaces, file by file as listed); a folder with anything
  else, such as the official release, is refused (see :mod:`benchmarks.outputs`).
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.gitm_mr.layout import (
    LENGTH_SUBSETS,
    counter_path,
    expression_path,
    parse_path,
    small_path,
    word_count,
)
from benchmarks.outputs import check_output, finish_output, prepare_output
from rcrn.structures import LanguageGraph, Proposals

__all__ = ["Pair", "write_release", "write_vinvl_objects", "build_vocabulary",
           "check_release_folder", "WRITER"]

#: Names the layout writer in messages and in its list of files being written.
WRITER = "GITM-MR layout writer"


def _is_ours(manifest: Any) -> bool:
    return isinstance(manifest, dict) and manifest.get("layout") == "gitm-mr"


def check_release_folder(out: str | Path, overwrite: bool = True) -> None:
    """Whether :func:`write_release` may write into ``out`` (changes nothing).

    Raises:
        benchmarks.outputs.ForeignFilesError: ``out`` holds anything the writer did not
            write (e.g. the official release).
        FileExistsError: ``out`` holds an earlier output and ``overwrite`` is False.
    """
    check_output(out, WRITER, _is_ours, overwrite)


@dataclass
class Pair:
    """A positive expression and (optionally) its mismatched counterpart.

    Attributes:
        pos_id: sentence id of the positive.
        image_id: the image.
        bbox: referent box ``[x, y, w, h]`` px.
        expression: the positive text.
        graph: the positive's language graph.
        neg_expression: the negative text (None: unpaired positive).
        neg_graph: the negative's language graph.
        foil_pos: index of the replaced relation in ``neg_graph.relations``.
        foil_indices: word range ``[start, end)`` of ``foil_phrase`` in the negative.
        foil_phrase: the substitute phrase.
        target_phrase: the phrase it replaced.
    """

    pos_id: str
    image_id: str
    bbox: list[float]
    expression: str
    graph: LanguageGraph
    neg_expression: str | None = None
    neg_graph: LanguageGraph | None = None
    foil_pos: int | None = None
    foil_indices: list[int] | None = None
    foil_phrase: str | None = None
    target_phrase: str | None = None

    @property
    def neg_id(self) -> str:
        return f"{self.pos_id}_neg"


def build_vocabulary(graphs: Iterable[LanguageGraph]) -> list[str]:
    """``<pad>``, ``<unk>`` and the sorted lowercase words of ``graphs``."""
    words: set[str] = set()
    for g in graphs:
        words.update(t.lower() for t in g.tokens)
        for e in g.entities:
            words.update(w.lower() for w in e.text.split())
        for r in g.relations:
            words.update(w.lower() for w in r.text.split())
    words -= {"<pad>", "<unk>"}
    return ["<pad>", "<unk>"] + sorted(words)


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n",
                    encoding="utf-8")


def write_vinvl_objects(out: Path, proposals: Mapping[str, Proposals],
                        feature_dim: int | None = None) -> dict[str, Any]:
    """Write ``vinvl_objects/rois_info.pkl`` and ``gt_objects_0.h5``.

    Args:
        out: the ``vinvl_objects`` folder.
        proposals: ``image_id -> Proposals``; missing features are written as zeros.
        feature_dim: width of the written features (default: that of the proposals,
            else 2048); narrower features are zero-padded, wider ones rejected.

    Returns:
        ``{"images", "max_boxes", "feature_dim"}``.
    """
    import h5py

    out.mkdir(parents=True, exist_ok=True)
    ids = list(proposals)
    dims = {p.feature_dim for p in proposals.values() if p.features is not None}
    dim = int(feature_dim) if feature_dim is not None else (max(dims) if dims else 2048)
    if dims and max(dims) > dim:
        raise ValueError(f"proposal features of width {max(dims)} do not fit feature_dim {dim}")
    max_boxes = max([len(p) for p in proposals.values()] + [1])
    info: dict[str, Any] = {}
    with h5py.File(out / "gt_objects_0.h5", "w") as h5:
        ds = h5.create_dataset("features", shape=(len(ids), max_boxes, dim), dtype="float32",
                               compression="gzip", chunks=(1, max_boxes, dim))
        for row, image_id in enumerate(ids):
            p = proposals[image_id]
            feats = np.zeros((max_boxes, dim), dtype=np.float32)
            if p.features is not None and len(p):
                feats[:len(p), :p.feature_dim] = p.features
            ds[row] = feats
            info[str(image_id)] = {
                "size": tuple(int(v) for v in p.image_size), "num_objs": len(p),
                "box": p.boxes.astype(np.float32), "file": 0, "idx": row,
                "cls": list(p.labels) if p.labels is not None else None,
            }
    (out / "rois_info.pkl").write_bytes(pickle.dumps(info, protocol=4))
    return {"images": len(ids), "max_boxes": max_boxes, "feature_dim": dim}


def write_release(out: str | Path, splits: Mapping[str, Sequence[Pair]], *,
                  proposals: Mapping[str, Proposals] | None = None,
                  feature_dim: int | None = None,
                  manifest: Mapping[str, Any] | None = None,
                  overwrite: bool = True) -> dict[str, Any]:
    """Write pairs in the GITM-MR release layout under ``out``.

    Args:
        out: the output folder (created).
        splits: ``split -> pairs``; unpaired positives go to the positives file only.
        proposals: optional ``image_id -> Proposals`` written to ``vinvl_objects/``.
        feature_dim: see :func:`write_vinvl_objects`.
        manifest: extra fields of ``manifest.json`` (written last).
        overwrite: replace an earlier output of this writer in ``out`` (the files its
            manifest lists); a folder holding anything else is refused either way.

    Returns:
        The manifest written to ``out/manifest.json``.

    Raises:
        benchmarks.outputs.ForeignFilesError: ``out`` holds files the writer did not
            write (nothing is changed).
        FileExistsError: an earlier output is there and ``overwrite`` is False.
        KeyError: ``proposals`` lacks an image of the pairs.
    """
    from parsers.readers import write_gitm_parses

    root = Path(out)
    graphs = [p.graph for pairs in splits.values() for p in pairs]
    graphs += [p.neg_graph for pairs in splits.values() for p in pairs if p.neg_graph]
    vocab = build_vocabulary(graphs)
    used = {p.image_id for pairs in splits.values() for p in pairs}
    if proposals is not None:
        missing = sorted(used - set(proposals))
        if missing:
            raise KeyError(f"no proposals for {len(missing)} image(s), e.g. {missing[:3]}")
    plan = [f"word_embedding/vocabulary_{len(vocab)}.txt"]
    for split in splits:
        plan += [expression_path(root, split, False), expression_path(root, split, True),
                 counter_path(root, split), parse_path(root, split, False),
                 parse_path(root, split, True)]
        if split == "train":
            plan += [small_path(root, split, n) for n in LENGTH_SUBSETS]
    if proposals is not None:
        plan += [root / "vinvl_objects" / "gt_objects_0.h5",
                 root / "vinvl_objects" / "rois_info.pkl"]
    plan = [p if isinstance(p, str) else Path(p).relative_to(root).as_posix() for p in plan]
    prepare_output(root, plan, WRITER, _is_ours, overwrite)
    vocab_file = root / "word_embedding" / f"vocabulary_{len(vocab)}.txt"
    vocab_file.parent.mkdir(parents=True, exist_ok=True)
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    counts: dict[str, dict[str, int]] = {}
    for split, pairs in splits.items():
        pos_records: dict[str, Any] = {}
        neg_records: dict[str, Any] = {}
        counter: dict[str, Any] = {}
        pos_graphs: dict[str, LanguageGraph] = {}
        neg_graphs: dict[str, LanguageGraph] = {}
        for p in pairs:
            pos_records[p.pos_id] = {"image_id": p.image_id, "bbox": [float(v) for v in p.bbox],
                                     "expression": p.expression,
                                     "num_nodes": p.graph.num_entities}
            pos_graphs[p.pos_id] = p.graph
            if p.neg_expression is None or p.neg_graph is None:
                continue
            neg_records[p.neg_id] = {
                "image_id": p.image_id, "bbox": [float(v) for v in p.bbox],
                "expression": p.neg_expression, "num_nodes": p.neg_graph.num_entities,
                "foil_pos": p.foil_pos, "foil_indices": p.foil_indices,
                "foil_phrase": p.foil_phrase, "target_phrase": p.target_phrase,
            }
            neg_graphs[p.neg_id] = p.neg_graph
            counter[p.pos_id] = {"sentid": p.neg_id, "counter_type": "rel"}
        _write_json(expression_path(root, split, False), pos_records)
        _write_json(expression_path(root, split, True), neg_records)
        cpath = counter_path(root, split)
        cpath.parent.mkdir(parents=True, exist_ok=True)
        cpath.write_bytes(pickle.dumps(counter, protocol=4))
        parse_path(root, split, False).parent.mkdir(parents=True, exist_ok=True)
        write_gitm_parses(pos_graphs, parse_path(root, split, False), vocab)
        write_gitm_parses(neg_graphs, parse_path(root, split, True), vocab)
        counts[split] = {"positives": len(pos_records), "negatives": len(neg_records),
                         "pairs": len(counter)}
        if split == "train":
            for n in LENGTH_SUBSETS:
                ids = [sid for sid in counter if word_count(pos_records[sid]["expression"]) <= n]
                _write_json(small_path(root, split, n), {"pos": ids})
                counts[split][f"train_len{n}_pairs"] = len(ids)
    result: dict[str, Any] = {"layout": "gitm-mr", "counts": counts,
                              "vocabulary": str(vocab_file.relative_to(root)),
                              "vocabulary_size": len(vocab)}
    if proposals is not None:
        result["vinvl_objects"] = write_vinvl_objects(
            root / "vinvl_objects", {i: proposals[i] for i in sorted(used)}, feature_dim)
    result.update(dict(manifest or {}))
    return finish_output(root, result, plan)
