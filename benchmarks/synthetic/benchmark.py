"""The synthetic benchmark adapter: generated scenes as ``GroundingProblem``s."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from benchmarks.base import DataError, confined_path, resolve_root, text_lines
from benchmarks.gitm_metrics import gitm_metrics
from benchmarks.synthetic.generator import (
    DATASET_NAME,
    GENERATOR_VERSION,
    GeneratorConfig,
    generate_dataset,
)
from benchmarks.synthetic.scene import SceneObject
from benchmarks.synthetic.splits import SPLITS, TRAIN_SUBSETS, in_subset, length_of
from rcrn.structures import (
    GroundingProblem,
    LanguageGraph,
    Prediction,
    Proposals,
    StructureError,
)

__all__ = ["SyntheticBenchmark", "load_manifest", "load_scenes", "load_records",
           "ensure_dataset"]

Parser = Callable[[str], LanguageGraph]
Detector = Callable[[np.ndarray], Proposals]

_RECORD_FIELDS = ("id", "pair_id", "scene_id", "split", "text", "graph", "match", "target",
                  "target_box", "mismatched_relation", "words", "pair_words", "relations")


def load_manifest(root: str | Path) -> dict[str, Any]:
    """Read and check ``root/manifest.json``.

    Raises:
        DataError: when it is missing, unreadable, not a synthetic dataset, or from
            another major generator version.
    """
    path = Path(root) / "manifest.json"
    if not path.exists():
        raise DataError(f"{path}: no manifest; generate the data with "
                        f"'rcrn synthetic generate --out {root}'")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: cannot read the manifest: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("name") != DATASET_NAME:
        raise DataError(f"{path}: not a manifest of the synthetic benchmark")
    version = str(manifest.get("generator_version", ""))
    if version.split(".")[0] != GENERATOR_VERSION.split(".")[0]:
        raise DataError(f"{path}: generator version {version!r} is not compatible with "
                        f"{GENERATOR_VERSION!r}; regenerate the data")
    thresholds = manifest.get("thresholds", {})
    if not all(isinstance(thresholds.get(k), int) for k in ("max_words", "max_relations")):
        raise DataError(f"{path}: thresholds must hold integer max_words and max_relations")
    return manifest


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.exists():
        raise DataError(f"{path}: file not found")
    for number, line in text_lines(path, "jsonl"):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: line {number}: invalid JSON ({exc.msg})") from exc
        except RecursionError:
            raise DataError(f"{path}: line {number}: invalid JSON (nested too deeply)") from None
        if not isinstance(value, dict):
            raise DataError(f"{path}: line {number}: expected a JSON object")
        yield number, value


def load_scenes(root: str | Path, split: str | None = None) -> dict[str, dict[str, Any]]:
    """Scenes of ``root/scenes.jsonl`` (of one split, or all), with parsed objects.

    Returns:
        ``{scene_id: {"image", "width", "height", "split", "objects": [SceneObject]}}``.

    Raises:
        DataError: naming the file and line of a malformed scene, or of an image path
            that leads out of ``root`` (``..`` or absolute).
    """
    path = Path(root) / "scenes.jsonl"
    scenes: dict[str, dict[str, Any]] = {}
    for number, rec in _jsonl(path):
        if split is not None and rec.get("split") != split:
            continue
        try:
            scene = {"image": str(rec["image"]), "width": int(rec["width"]),
                     "height": int(rec["height"]), "split": str(rec["split"]),
                     "objects": [SceneObject.from_dict(o) for o in rec["objects"]]}
            scene_id = str(rec["id"])
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise DataError(f"{path}: line {number}: malformed scene: {exc!r}") from exc
        try:
            confined_path(root, scene["image"])
        except DataError as exc:
            raise DataError(f"{path}: line {number}: scene {scene_id!r}: {exc}") from None
        if not scene["objects"]:
            raise DataError(f"{path}: line {number}: scene {scene_id!r} has no objects")
        if scene_id in scenes:
            raise DataError(f"{path}: line {number}: scene {scene_id!r} occurs twice")
        scenes[scene_id] = scene
    return scenes


def _check_record(rec: dict[str, Any], scenes: dict[str, dict[str, Any]]) -> LanguageGraph:
    missing = [k for k in _RECORD_FIELDS if k not in rec]
    if missing:
        raise ValueError(f"missing field(s) {missing}")
    if rec["scene_id"] not in scenes:
        raise ValueError(f"unknown scene {rec['scene_id']!r} (not in scenes.jsonl)")
    if rec["match"] not in (0, 1):
        raise ValueError(f"match must be 0 or 1, got {rec['match']!r}")
    graph = LanguageGraph.from_dict(rec["graph"])
    box = rec["target_box"]
    if not isinstance(box, list) or len(box) != 4:
        raise ValueError(f"target_box must hold 4 numbers, got {box!r}")
    n_objects = len(scenes[rec["scene_id"]]["objects"])
    if not 0 <= int(rec["target"]) < n_objects:
        raise ValueError(f"target {rec['target']} is not an object of the scene")
    k = rec["mismatched_relation"]
    if rec["match"] == 0:
        if not isinstance(k, int) or not 0 <= k < graph.num_relations:
            raise ValueError(f"a mismatch needs a relation index, got {k!r}")
    elif k is not None:
        raise ValueError("a positive has no mismatched relation")
    for key in ("words", "pair_words", "relations"):
        if not isinstance(rec[key], int) or rec[key] < 0:
            raise ValueError(f"{key} must be a non-negative integer, got {rec[key]!r}")
    return graph


def load_records(root: str | Path, split: str, scenes: dict[str, dict[str, Any]]
                 ) -> list[tuple[dict[str, Any], LanguageGraph]]:
    """Expression records of ``root/annotations/<split>.jsonl`` with their gold graphs.

    Raises:
        DataError: naming the file and line of a malformed record.
    """
    path = Path(root) / "annotations" / f"{split}.jsonl"
    out = []
    seen: set[str] = set()
    for number, rec in _jsonl(path):
        try:
            graph = _check_record(rec, scenes)
        except (KeyError, TypeError, ValueError, OverflowError, StructureError) as exc:
            ident = rec.get("id", "?")
            raise DataError(f"{path}: line {number}: record {ident!r}: {exc}") from exc
        if rec["id"] in seen:
            raise DataError(f"{path}: line {number}: record id {rec['id']!r} occurs twice")
        seen.add(rec["id"])
        out.append((rec, graph))
    return out


def _map_relation(rec: dict[str, Any], gold: LanguageGraph, parsed: LanguageGraph) -> int | None:
    """Index in ``parsed`` of the mismatched relation of ``gold`` (None if not found)."""
    k = rec["mismatched_relation"]
    if k is None:
        return None
    if parsed is gold:
        return k
    target = gold.relations[k]
    if parsed.tokens == gold.tokens:
        best, best_overlap = None, 0
        for j, r in enumerate(parsed.relations):
            overlap = min(r.span[1], target.span[1]) - max(r.span[0], target.span[0])
            if overlap > best_overlap:
                best, best_overlap = j, overlap
        if best is not None:
            return best
    same = [j for j, r in enumerate(parsed.relations) if target.text in r.text]
    return same[0] if len(same) == 1 else None


class SyntheticBenchmark:
    """A split of a generated synthetic dataset as GITM-MR grounding problems.

    Args:
        root: dataset root written by ``generate_dataset`` / ``rcrn synthetic generate``.
        split: ``"train"``, ``"val"`` or ``"test"``.
        train_subset: None (every record), ``"len_words"`` (pairs whose positive has at
            most ``max_words`` words, like Train-Len16), ``"len_rels"`` (pairs with
            at most ``max_relations`` relations) or ``"len_short"`` (both); applies to
            any split.
        parser: ``text -> LanguageGraph``; by default the gold graphs are used.  With a
            parser, the mismatched relation is mapped onto the parsed graph by token
            span (or by phrase); when that fails it is None and
            ``meta["mismatch_unmapped"]`` is True.
        detector: ``image array [H, W, 3] uint8 -> Proposals``; by default the
            ground-truth object boxes, without features.
        length: what ``evaluate`` buckets by: ``"words"`` (the pair's positive) or
            ``"relations"``.
        max_words: overrides the manifest's word threshold.
        max_relations: overrides the manifest's relation threshold.

    Raises:
        DataError: for a missing or malformed dataset (naming file and line).
        ValueError: for an unknown split, subset or length.
    """

    name = "synthetic"

    def __init__(self, root: str | Path, split: str = "test", train_subset: str | None = None,
                 parser: Parser | None = None, detector: Detector | None = None, *,
                 length: str = "words", max_words: int | None = None,
                 max_relations: int | None = None) -> None:
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; choose from {list(SPLITS)}")
        if train_subset is not None and train_subset not in TRAIN_SUBSETS:
            raise ValueError(f"unknown train subset {train_subset!r}; choose from "
                             f"{sorted(TRAIN_SUBSETS)} or None")
        if length not in ("words", "relations"):
            raise ValueError(f"length must be 'words' or 'relations', got {length!r}")
        self.root = resolve_root(root, "synthetic benchmark")
        self.split = split
        self.train_subset = train_subset
        self.parser = parser
        self.detector = detector
        self.length = length
        self.manifest = load_manifest(self.root)
        self.thresholds = dict(self.manifest["thresholds"])
        if max_words is not None:
            self.thresholds["max_words"] = int(max_words)
        if max_relations is not None:
            self.thresholds["max_relations"] = int(max_relations)
        self.scenes = load_scenes(self.root, split)
        self._records = [(rec, graph) for rec, graph in load_records(self.root, split, self.scenes)
                         if in_subset(rec, train_subset, self.thresholds)]
        self._mapped: dict[str, int | None] = {}
        self._boxes: dict[str, np.ndarray] = {}
        self._relations: dict[str, int] = {}  # relations of each problem's graph

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return (f"SyntheticBenchmark(root={str(self.root)!r}, split={self.split!r}, "
                f"train_subset={self.train_subset!r}, items={len(self)})")

    @property
    def records(self) -> list[dict[str, Any]]:
        """The raw expression records of the split (after the subset filter)."""
        return [rec for rec, _ in self._records]

    @property
    def threshold(self) -> int:
        """The in-distribution threshold of the chosen length."""
        return self.thresholds["max_words" if self.length == "words" else "max_relations"]

    def image_path(self, scene_id: str) -> Path:
        return self.root / self.scenes[scene_id]["image"]

    def _gt_proposals(self, scene_id: str) -> Proposals:
        scene = self.scenes[scene_id]
        boxes = np.array([o.box for o in scene["objects"]], dtype=np.float32)
        return Proposals(boxes=boxes, image_size=(scene["width"], scene["height"]),
                         image_id=scene_id)

    def _detect(self, scene_id: str) -> Proposals:
        path = self.image_path(scene_id)
        try:
            with Image.open(path) as img:
                pixels = np.asarray(img.convert("RGB"))
        except OSError as exc:
            raise DataError(f"{path}: cannot read the image of scene {scene_id!r}: {exc}") from exc
        proposals = self.detector(pixels)
        if not isinstance(proposals, Proposals):
            raise TypeError(f"the detector returned {type(proposals).__name__}, not Proposals")
        if not proposals.image_id:
            proposals.image_id = scene_id
        return proposals

    def _graph(self, rec: dict[str, Any], gold: LanguageGraph) -> LanguageGraph:
        if self.parser is None:
            return gold
        graph = self.parser(rec["text"])
        if not isinstance(graph, LanguageGraph):
            raise TypeError(f"the parser returned {type(graph).__name__} for record "
                            f"{rec['id']!r}, not LanguageGraph")
        return graph

    def problems(self) -> Iterator[GroundingProblem]:
        """The records as ``GroundingProblem``s, in file order (a positive, then its mismatch).

        ``meta`` holds ``words``, ``pair_words``, ``relations``, ``length`` (by the
        chosen length), ``in_distribution``, ``split``, ``scene_id``, ``pair_id``,
        ``counter_id``, ``image_path``, ``target`` (object index), ``entity_objects``,
        for a matched expression whose parse names the gold graph's entities in its order
        ``entity_boxes`` (the box of each entity's object: word-region supervision,
        ``GroundingBatch.entity_target``), and for a mismatch ``original_phrase``,
        ``replacement_phrase`` and ``phrase_span``.
        """
        cached_scene, cached = None, None
        for rec, gold in self._records:
            scene_id = rec["scene_id"]
            if self.detector is None:
                proposals = self._gt_proposals(scene_id)
            else:
                if scene_id != cached_scene:
                    cached_scene, cached = scene_id, self._detect(scene_id)
                    self._boxes[scene_id] = cached.boxes.copy()
                proposals = cached
            graph = self._graph(rec, gold)
            mismatched = _map_relation(rec, gold, graph)
            self._mapped[rec["id"]] = mismatched
            self._relations[rec["id"]] = graph.num_relations
            length = length_of(rec, self.length)
            meta = {
                "words": rec["words"], "pair_words": rec["pair_words"],
                "relations": rec["relations"], "length": length,
                "in_distribution": length <= self.threshold, "split": rec["split"],
                "scene_id": scene_id, "pair_id": rec["pair_id"],
                "counter_id": rec.get("counter_id"),
                "image_path": str(self.image_path(scene_id)), "target": rec["target"],
                "entity_objects": rec.get("entity_objects"),
            }
            objects = meta["entity_objects"]
            if objects and [e.head for e in graph.entities] == [e.head for e in gold.entities]:
                scene = self.scenes[scene_id]["objects"]
                meta["entity_boxes"] = [list(map(float, scene[k].box)) for k in objects]
            if rec["match"] == 0:
                meta.update(original_phrase=rec.get("original_phrase"),
                            replacement_phrase=rec.get("replacement_phrase"),
                            phrase_span=rec.get("phrase_span"))
                if mismatched is None:
                    meta["mismatch_unmapped"] = True
            yield GroundingProblem(
                graph=graph, proposals=proposals, match=rec["match"],
                referent_box=rec["target_box"] if rec["match"] == 1 else None,
                mismatched_relation=mismatched, id=rec["id"], meta=meta)

    def evaluate(self, predictions: Sequence[Prediction]) -> dict[str, Any]:
        """GITM-MR metrics of ``predictions`` (one per item, matched by id).

        Buckets: full, in-distribution (``length <= threshold``) and
        out-of-distribution.  A prediction without a box is scored through its
        ``proposal`` index into the proposals of its image (the ground-truth boxes, or
        the detector's boxes seen by :meth:`problems`).

        Returns:
            The dict of :func:`benchmarks.gitm_metrics.gitm_metrics` plus ``benchmark``,
            ``split``, ``train_subset`` and ``length``.
        """
        items = []
        for rec, gold in self._records:
            if rec["id"] in self._mapped:
                mismatched = self._mapped[rec["id"]]
            else:
                mismatched = _map_relation(rec, gold, self._graph(rec, gold)) \
                    if rec["match"] == 0 else None
            scene_id = rec["scene_id"]
            if self.detector is None:
                boxes = self._gt_proposals(scene_id).boxes
            else:
                boxes = self._boxes.get(scene_id)
            items.append({
                "id": rec["id"], "match": rec["match"],
                "referent_box": rec["target_box"] if rec["match"] == 1 else None,
                "mismatched_relation": mismatched, "length": length_of(rec, self.length),
                "proposal_boxes": boxes,
                "num_relations": self._relations.get(
                    rec["id"], gold.num_relations if self.parser is None else None),
            })
        # the release's rules (+1-pixel IoU) are GITM-MR's; these scenes' boxes are
        # exclusive pixel rectangles, and every item's length is its own already
        result = gitm_metrics(items, predictions, threshold=self.threshold, rules="toolkit")
        result.update(benchmark=self.name, split=self.split, train_subset=self.train_subset,
                      length=self.length)
        return result


def ensure_dataset(root: str | Path, scenes: int = 200, seed: int = 0, size: int = 128,
                   per_scene: int = 4, progress: bool = True) -> Path:
    """Generate a synthetic dataset under ``root`` unless a complete one is there.

    A dataset is complete when its manifest (written last) exists.  An older
    dataset of an incompatible generator version, or an interrupted generation, is
    regenerated (only the files its manifest or the generator's list names are
    replaced); an existing dataset is kept as it is even when its settings differ from
    the arguments, with a warning that names them (remove the folder, or pick another
    root, to generate the requested one).  A folder holding anything the generator did
    not write is never written into.

    Returns:
        The dataset root.

    Raises:
        DataError: when ``root`` holds a manifest of something else, or files the
            generator did not write (naming one), or the settings are bad.
    """
    path = Path(root)
    manifest = path / "manifest.json"
    if manifest.exists():
        try:
            found = load_manifest(path).get("config", {})
            wanted = {"scenes": scenes, "seed": seed, "size": size, "per_scene": per_scene}
            differ = {k: (found.get(k), v) for k, v in wanted.items() if found.get(k) != v}
            if differ:
                said = ", ".join(f"{k} {have} (asked {want})" for k, (have, want) in differ.items())
                warnings.warn(f"{manifest}: using the existing dataset, which has {said}; "
                              f"remove {path} or choose another root to generate the one asked "
                              f"for", stacklevel=2)
            return path
        except DataError:
            try:
                name = json.loads(manifest.read_text(encoding="utf-8")).get("name")
            except (OSError, json.JSONDecodeError, AttributeError):
                name = None
            if name != DATASET_NAME:
                raise
    config = GeneratorConfig(scenes=scenes, seed=seed, size=size, per_scene=per_scene)
    try:
        generate_dataset(path, config, progress=progress, overwrite=True)
    except FileExistsError as exc:
        raise DataError(f"no synthetic dataset is generated there: {exc}") from exc
    except ValueError as exc:
        raise DataError(f"{path}: cannot generate the synthetic dataset: {exc}") from exc
    return path
