"""Deterministic generation of the synthetic GITM-MR-style benchmark.

``generate_dataset`` writes, under one root::

    images/<scene_id>.png         rendered scenes
    scenes.jsonl                  one scene per line: id, image, size, split, objects
    annotations/<split>.jsonl     one expression per line (a positive, then its mismatch)
    manifest.json                 counts, seed, thresholds, vocabulary, version, and the
                                  list of files written (written last)

While it runs, ``generating.json`` lists the files it is writing (and any it replaces), so
an interrupted generation is recognised as the generator's own output.  A folder holding
anything else is never written into: the generator replaces only files its manifest (or
that list) names.

Each scene draws from its own random generator seeded by ``(seed, scene index)``,
so the same seed gives the same records and the same image bytes.

An expression record holds:

``id``, ``pair_id``, ``counter_id``
    the record, its pair and the other half of the pair (None for a positive
    without relations, which has no mismatch).
``scene_id``, ``image``, ``split``
    the scene, its image path relative to the root, and its split.
``text``, ``graph``
    the expression and its gold ``LanguageGraph`` dict.
``match``
    1 for a positive, 0 for a mismatch.
``target``, ``target_box``
    index and box (xyxy px) of the referent of the positive of the pair
    (for a mismatch: of its positive's referent, which the mismatch does not describe).
``entity_objects``
    scene object of every graph entity (positives; None for mismatches).
``mismatched_relation``, ``original_phrase``, ``replacement_phrase``, ``phrase_span``,
``original_span``
    for a mismatch: the index of the replaced relation in ``graph.relations``, the
    phrases, and the token span of the phrase in the mismatch and in the positive.
``words``, ``pair_words``, ``relations``, ``in_dist_words``, ``in_dist_rels``
    word count, the positive's word count, number of relations, and whether the
    pair is within the manifest thresholds ``max_words`` / ``max_relations``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image
from tqdm import tqdm

from benchmarks.outputs import JOURNAL, ForeignFilesError, finish_output, prepare_output
from benchmarks.synthetic.expressions import CONNECTOR_WORDS, GENERIC_NOUN, sample_expression
from benchmarks.synthetic.mismatches import SUBSTITUTIONS, find_mismatch
from benchmarks.synthetic.relations import PHRASES, SceneRelations
from benchmarks.synthetic.rendering import render_scene
from benchmarks.synthetic.scene import COLORS, SHAPES, SIZES, Geometry, sample_layout
from benchmarks.synthetic.splits import DEFAULT_FRACTIONS, SPLITS, assign_splits, distribution

__all__ = [
    "DATASET_NAME",
    "GENERATOR_VERSION",
    "DEFAULT_RELATION_COUNTS",
    "GeneratorConfig",
    "SceneSample",
    "vocabulary",
    "generate_scene",
    "generate_dataset",
    "planned_files",
    "JOURNAL",
    "ForeignFilesError",
]

DATASET_NAME = "rcrn-synthetic"
GENERATOR_VERSION = "1.0"
#: Names the generator in messages and in its list of files being written.
WRITER = "synthetic generator"


def _is_ours(manifest: Any) -> bool:
    return isinstance(manifest, dict) and manifest.get("name") == DATASET_NAME

#: Relative frequency of each number of relations in sampled expressions.
DEFAULT_RELATION_COUNTS: dict[int, float] = {
    0: 0.02, 1: 0.16, 2: 0.20, 3: 0.20, 4: 0.16, 5: 0.12, 6: 0.08, 7: 0.06,
}


@dataclass
class GeneratorConfig:
    """Settings of a generated dataset.

    Attributes:
        scenes: number of scenes (images).
        seed: master seed.
        size: image side in pixels.
        per_scene: expressions (pairs) sampled per scene.
        min_objects: fewest objects per scene.
        max_objects: most objects per scene.
        max_words: in-distribution limit on the positive's word count (``len_words``).
        max_relations: in-distribution limit on the number of relations (``len_rels``).
        relation_counts: relative frequency of each number of relations.
        split_fractions: share of scenes in train / val / test.
    """

    scenes: int = 1000
    seed: int = 0
    size: int = 128
    per_scene: int = 4
    min_objects: int = 3
    max_objects: int = 10
    max_words: int = 16
    max_relations: int = 2
    relation_counts: dict[int, float] = field(
        default_factory=lambda: dict(DEFAULT_RELATION_COUNTS))
    split_fractions: tuple[float, float, float] = DEFAULT_FRACTIONS

    def validate(self) -> None:
        """Check the settings.

        Raises:
            ValueError: naming the first bad setting.
        """
        if self.scenes < 1:
            raise ValueError(f"scenes must be at least 1, got {self.scenes}")
        if self.per_scene < 1:
            raise ValueError(f"per_scene must be at least 1, got {self.per_scene}")
        if not 2 <= self.min_objects <= self.max_objects <= 16:
            raise ValueError("need 2 <= min_objects <= max_objects <= 16, got "
                             f"{self.min_objects} and {self.max_objects}")
        if self.max_words < 1 or self.max_relations < 0:
            raise ValueError("max_words must be >= 1 and max_relations >= 0")
        if (not self.relation_counts or min(self.relation_counts) < 0
                or min(self.relation_counts.values()) < 0
                or sum(self.relation_counts.values()) <= 0):
            raise ValueError(f"relation_counts must map relation numbers >= 0 to non-negative "
                             f"weights, got {self.relation_counts}")
        Geometry.for_size(self.size)
        assign_splits(3, self.seed, self.split_fractions)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["relation_counts"] = {str(k): v for k, v in sorted(self.relation_counts.items())}
        d["split_fractions"] = list(self.split_fractions)
        return d


@dataclass
class SceneSample:
    """One generated scene: its record, its expression records and its image."""

    scene: dict[str, Any]
    records: list[dict[str, Any]]
    image: Image.Image


def vocabulary() -> dict[str, Any]:
    """Every word and phrase the generator can produce."""
    words = {"the", GENERIC_NOUN, *SHAPES, *COLORS, *SIZES, *CONNECTOR_WORDS}
    for phrase in PHRASES.values():
        words.update(phrase.split())
    return {
        "shapes": list(SHAPES), "colors": {k: list(v) for k, v in COLORS.items()},
        "sizes": list(SIZES), "generic_noun": GENERIC_NOUN,
        "relations": dict(PHRASES), "connectors": list(CONNECTOR_WORDS),
        "substitutions": {k: list(v) for k, v in SUBSTITUTIONS.items()},
        "words": sorted(words),
    }


def _draw_count(rng: random.Random, counts: Mapping[int, float]) -> int:
    keys = sorted(counts)
    return rng.choices(keys, weights=[counts[k] for k in keys])[0]


def generate_scene(index: int, split: str, config: GeneratorConfig) -> SceneSample:
    """Generate scene ``index``: layout, image, relations and expression pairs.

    For each of ``config.per_scene`` slots a number of relations is drawn and
    expressions are sampled for varying targets until one refers uniquely to its
    target and has a surely false mismatch (three targets are tried per number of
    relations before the number is lowered).  Positives without relations have
    no mismatch and are kept alone.  Texts are not repeated within a scene.

    Args:
        index: scene index (with ``config.seed`` it fixes every random choice).
        split: the split the scene belongs to.
        config: generator settings.

    Returns:
        The scene sample.
    """
    rng = random.Random(f"rcrn-synthetic:{config.seed}:{index}")
    geometry = Geometry.for_size(config.size)
    placements = sample_layout(rng, geometry, config.min_objects, config.max_objects)
    image, objects = render_scene(placements, config.size)
    relations = SceneRelations(objects, geometry)
    scene_id = f"s{index:06d}"
    image_rel = f"images/{scene_id}.png"
    scene = {"id": scene_id, "image": image_rel, "width": config.size, "height": config.size,
             "split": split, "objects": [o.to_dict() for o in objects]}
    base = {"scene_id": scene_id, "image": image_rel, "split": split}
    records: list[dict[str, Any]] = []
    texts: set[str] = set()
    targets = list(range(len(objects)))
    rng.shuffle(targets)
    for slot in range(config.per_scene):
        # a tree over distinct objects has at most (objects - 1) relations
        n_rel = min(_draw_count(rng, config.relation_counts), len(objects) - 1)
        target = targets[slot % len(targets)]
        for attempt in range(4 * (n_rel + 1)):
            if attempt and attempt % 3 == 0 and n_rel > 0:
                n_rel -= 1
            expr = sample_expression(rng, relations, target, n_rel)
            if expr is not None:
                realised = expr.realise()
                graph = realised.graph
                if graph.text not in texts:
                    mismatch = find_mismatch(rng, expr, relations) if n_rel else None
                    if n_rel == 0 or mismatch is not None:
                        break
            target = rng.randrange(len(objects))
        else:
            continue
        texts.add(graph.text)
        pair_id = f"{scene_id}-{slot}"
        words = len(graph.tokens)
        common = {
            **base, "pair_id": pair_id, "target": target,
            "target_box": list(objects[target].box), "pair_words": words,
            "relations": graph.num_relations,
            "in_dist_words": words <= config.max_words,
            "in_dist_rels": graph.num_relations <= config.max_relations,
        }
        positive = {
            "id": f"{pair_id}-pos", **common, "counter_id": None, "match": 1,
            "text": graph.text, "words": words, "graph": graph.to_dict(),
            "entity_objects": [expr.objects[n] for n in realised.entity_nodes],
            "mismatched_relation": None, "original_phrase": None, "replacement_phrase": None,
            "phrase_span": None, "original_span": None,
        }
        records.append(positive)
        if mismatch is None:
            continue
        negative_graph = mismatch.expression.realise().graph
        k = realised.relation_edges.index(mismatch.edge)
        positive["counter_id"] = f"{pair_id}-neg"
        records.append({
            "id": f"{pair_id}-neg", **common, "counter_id": positive["id"], "match": 0,
            "text": negative_graph.text, "words": len(negative_graph.tokens),
            "graph": negative_graph.to_dict(), "entity_objects": None,
            "mismatched_relation": k, "original_phrase": mismatch.original_phrase,
            "replacement_phrase": mismatch.replacement_phrase,
            "phrase_span": list(negative_graph.relations[k].span),
            "original_span": list(graph.relations[k].span),
        })
    return SceneSample(scene=scene, records=records, image=image)


def planned_files(config: GeneratorConfig) -> list[str]:
    """The files (relative to the root, ``/``-separated) a dataset of ``config`` consists
    of, besides ``manifest.json``."""
    return (["scenes.jsonl"] + [f"annotations/{s}.jsonl" for s in SPLITS]
            + [f"images/s{i:06d}.png" for i in range(config.scenes)])


def generate_dataset(out: str | Path, config: GeneratorConfig, progress: bool = True,
                     overwrite: bool = False) -> dict[str, Any]:
    """Generate a whole dataset under ``out`` and return its manifest.

    Args:
        out: output root (created if needed): a new or empty folder, or one holding
            only an earlier output of this generator (complete: needs ``overwrite``; or
            interrupted).
        config: generator settings.
        progress: show a progress bar.
        overwrite: replace an existing dataset: the files its manifest lists, and only
            those.

    Returns:
        The manifest written to ``out/manifest.json``.

    Raises:
        FileExistsError: when ``out`` already holds a dataset and ``overwrite`` is False;
            ``ForeignFilesError`` (a FileExistsError) when it holds anything the
            generator did not write (whatever ``overwrite``).
        ValueError: for bad settings.
    """
    config.validate()
    root = Path(out)
    plan = planned_files(config)
    prepare_output(root, plan, WRITER, _is_ours, overwrite)
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    splits = assign_splits(config.scenes, config.seed, config.split_fractions)
    counts = {s: {"scenes": 0, "expressions": 0, "positives": 0, "negatives": 0, "pairs": 0}
              for s in SPLITS}
    lengths: dict[str, list[dict[str, int]]] = {s: [] for s in SPLITS}
    handles = {s: open(root / "annotations" / f"{s}.jsonl", "w", encoding="utf-8")
               for s in SPLITS}
    try:
        with open(root / "scenes.jsonl", "w", encoding="utf-8") as scenes_file:
            bar = tqdm(range(config.scenes), desc="synthetic scenes", unit="scene",
                       disable=not progress)
            for index in bar:
                sample = generate_scene(index, splits[index], config)
                split = splits[index]
                sample.image.save(root / sample.scene["image"], format="PNG", compress_level=6)
                scenes_file.write(json.dumps(sample.scene, separators=(",", ":")) + "\n")
                c = counts[split]
                c["scenes"] += 1
                for rec in sample.records:
                    handles[split].write(json.dumps(rec, separators=(",", ":")) + "\n")
                    c["expressions"] += 1
                    c["positives" if rec["match"] else "negatives"] += 1
                    if rec["match"] == 0:
                        c["pairs"] += 1
                    lengths[split].append({"words": rec["words"],
                                           "pair_words": rec["pair_words"],
                                           "relations": rec["relations"]})
    finally:
        for h in handles.values():
            h.close()
    manifest = {
        "name": DATASET_NAME,
        "generator_version": GENERATOR_VERSION,
        "seed": config.seed,
        "image_size": [config.size, config.size],
        "thresholds": {"max_words": config.max_words, "max_relations": config.max_relations},
        "counts": counts,
        "totals": {k: sum(c[k] for c in counts.values()) for k in counts["train"]},
        "distributions": {
            s: {"words": distribution(lengths[s], "words"),
                "pair_words": distribution(lengths[s], "pair_words"),
                "relations": distribution(lengths[s], "relations")}
            for s in SPLITS
        },
        "geometry": Geometry.for_size(config.size).to_dict(),
        "vocabulary": vocabulary(),
        "config": config.to_dict(),
        "files": {"scenes": "scenes.jsonl",
                  "annotations": {s: f"annotations/{s}.jsonl" for s in SPLITS},
                  "images": "images/"},
    }
    return finish_output(root, manifest, plan)
