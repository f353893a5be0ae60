"""The built-in synthetic benchmark written in the GITM-MR release layout.

Each synthetic pair (a positive and its mismatch) becomes a GITM-MR pair: the
gold graphs become the parses, the scene's object boxes the ``vinvl_objects``
proposals and the referent box the ``bbox``.  Region features are simple: the
6-value box geometry (:func:`rcrn.boxes.box_features6`) followed by the mean and
the standard deviation of the box's RGB pixels (in [0, 1]), zero-padded to
``feature_dim``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.base import DataError, confined_path
from benchmarks.gitm_mr.bias import bias_classifier, total_variation
from benchmarks.gitm_mr.writer import Pair, write_release
from rcrn.boxes import box_features6, xyxy_to_xywh
from rcrn.structures import LanguageGraph, Proposals

__all__ = ["convert_synthetic", "simple_features"]


def simple_features(pixels: np.ndarray | None, boxes: np.ndarray, image_size: tuple[int, int],
                    dim: int) -> np.ndarray:
    """``[n, dim]`` features: box geometry, mean and std RGB of the box, zero padding."""
    n = len(boxes)
    out = np.zeros((n, dim), dtype=np.float32)
    geo = box_features6(boxes, image_size)
    width = min(dim, 6)
    out[:, :width] = geo[:, :width]
    if pixels is None or dim <= 6:
        return out
    for i, (x1, y1, x2, y2) in enumerate(np.asarray(boxes)):
        crop = pixels[int(y1):max(int(np.ceil(y2)), int(y1) + 1),
                      int(x1):max(int(np.ceil(x2)), int(x1) + 1)].reshape(-1, 3) / 255.0
        stats = np.concatenate([crop.mean(0), crop.std(0)]) if len(crop) else np.zeros(6)
        take = min(dim - 6, 6)
        out[i, 6:6 + take] = stats[:take]
    return out


def convert_synthetic(source: str | Path, out: str | Path, feature_dim: int = 2048,
                      seed: int = 0) -> dict[str, Any]:
    """Write a dataset made by ``rcrn synthetic generate`` in the GITM-MR layout.

    Args:
        source: the synthetic dataset root (with ``manifest.json``).
        out: the output folder.
        feature_dim: width of the written region features.
        seed: seed of the bias classifier's data split.

    Returns:
        The manifest written to ``out/manifest.json``.

    Raises:
        DataError: the synthetic dataset is missing or malformed.
    """
    from PIL import Image

    from benchmarks.synthetic.benchmark import load_manifest, load_records, load_scenes
    from benchmarks.synthetic.splits import SPLITS

    src = Path(source)
    manifest = load_manifest(src)
    scenes = load_scenes(src)
    splits: dict[str, list[Pair]] = {}
    for split in SPLITS:
        records = load_records(src, split, scenes)
        by_id = {rec["id"]: (rec, graph) for rec, graph in records}
        pairs: list[Pair] = []
        for rec, graph in records:
            if rec["match"] != 1:
                continue
            box = np.asarray(rec["target_box"], dtype=np.float64)
            pair = Pair(pos_id=str(rec["id"]), image_id=str(rec["scene_id"]),
                        bbox=[float(v) for v in np.asarray(xyxy_to_xywh(box))],
                        expression=rec["text"], graph=graph)
            neg_id = rec.get("counter_id")
            if neg_id is not None:
                if neg_id not in by_id:
                    raise DataError(f"{src / 'annotations' / (split + '.jsonl')}: record "
                                    f"{rec['id']!r}: its mismatch {neg_id!r} is missing")
                neg, neg_graph = by_id[neg_id]
                _set_negative(pair, neg, neg_graph)
            pairs.append(pair)
        splits[split] = pairs
    proposals: dict[str, Proposals] = {}
    for scene_id, scene in scenes.items():
        boxes = np.array([o.box for o in scene["objects"]], dtype=np.float32)
        size = (scene["width"], scene["height"])
        path = confined_path(src, scene["image"])  # load_scenes refused paths out of src
        try:
            with Image.open(path) as img:
                pixels = np.asarray(img.convert("RGB"))
        except OSError:
            pixels = None
        labels = [f"{o.color} {o.shape}" for o in scene["objects"]]
        proposals[scene_id] = Proposals(boxes=boxes, image_size=size, labels=labels,
                                        features=simple_features(pixels, boxes, size,
                                                                 feature_dim),
                                        image_id=scene_id)
    report = _report(splits, seed)
    extra = {"source": "rcrn synthetic benchmark", "source_root": str(src),
             "source_generator_version": manifest.get("generator_version"),
             "features": f"box geometry (6), mean and std RGB (6), zero-padded to {feature_dim}",
             "report": report,
             "notes": ["no word embedding matrix is written (vocabulary only)",
                       "substitutions follow the synthetic benchmark's own table"]}
    return write_release(out, splits, proposals=proposals, feature_dim=feature_dim,
                         manifest=extra)


def _set_negative(pair: Pair, neg: dict[str, Any], graph: LanguageGraph) -> None:
    k = int(neg["mismatched_relation"])
    span = neg.get("phrase_span") or list(graph.relations[k].span)
    pair.neg_expression = neg["text"]
    pair.neg_graph = graph
    pair.foil_pos = k
    pair.foil_indices = [int(span[0]), int(span[1])]
    pair.foil_phrase = neg.get("replacement_phrase") or graph.relations[k].text
    pair.target_phrase = neg.get("original_phrase")


def _report(splits: dict[str, list[Pair]], seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split, pairs in splits.items():
        paired = [p for p in pairs if p.neg_expression and p.neg_graph]
        done = [(p.expression, str(p.neg_expression)) for p in paired]
        pos: Counter[str] = Counter(r.text for p in paired for r in p.graph.relations)
        neg: Counter[str] = Counter(r.text for p in paired
                                    for r in p.neg_graph.relations)  # type: ignore[union-attr]
        out[split] = {"pairs": len(done), "relation_tv": total_variation(dict(pos), dict(neg)),
                      "relation_tv_over": "relation phrases of the gold graphs",
                      "bias_classifier": bias_classifier(done, seed=seed)}
    return out
