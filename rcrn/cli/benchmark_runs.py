"""RCRN on VSR and What'sUp: problems from local images and proposals, training, evaluation.

A run needs the benchmark's annotation files under a data root, the images the records
name (read under the same root) and a source of region proposals, given as ``proposals``:

* a path to a COCO ``instances_*.json``: the ground-truth boxes of each image, kept to
  the categories named by the caption's subject and object when the image has boxes of
  both (all boxes otherwise);
* a mapping ``{format: NAME, path: P, ...options}`` naming any :mod:`detectors` source
  (``vinvl``, ``uniter``, ``store``, ...), or ``NAME:P`` on the command line.

With a ``region_encoder`` section in the config, region features come from pixels (images
are resized to ``data.image_size`` and the boxes with them, so every batch stacks images of
one size); without one, the source must carry region features.

Image paths: a VSR record names a COCO file, looked up under ``root/images``,
``root/train2017``, ``root/val2017`` and ``root``; a What'sUp record's ``image_path`` is
relative to ``root``.  A path that leads out of ``root`` (``..`` or absolute) is refused.

VSR items are binary match problems (no referent box, so only the match loss trains).
What'sUp items give one problem per caption option; an item's choice is the option with
the highest match probability, scored by the adapter's official metrics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.base import DataError, find_image
from rcrn.structures import GroundingProblem, Prediction, Proposals

__all__ = ["BENCHMARKS", "VSR_IMAGE_FOLDERS", "ImageFile", "BenchmarkRun", "parse_proposals",
           "open_proposals", "image_path", "load_run", "write_predictions"]

#: Benchmarks this module runs.
BENCHMARKS = ("vsr", "whatsup")
#: Folders (under the data root) searched for VSR's COCO image file names, in order.
VSR_IMAGE_FOLDERS = ("images", "train2017", "val2017", "")
#: Proposal formats holding ground-truth boxes: filtered to the caption's concepts.
GROUND_TRUTH_FORMATS = frozenset({"coco", "gqa"})
DEFAULT_IMAGE_SIZE = 256


class ImageFile:
    """An image read from disk on access, resized to ``size`` ``(width, height)``.

    Stands in for ``meta["image"]`` of a problem: ``np.asarray(image_file)`` gives the
    ``[H, W, 3]`` uint8 pixels, so a batch stacks the images of one size without holding
    a split's images in memory.
    """

    def __init__(self, path: str | Path, size: tuple[int, int]) -> None:
        self.path = str(path)
        self.size = (int(size[0]), int(size[1]))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        from PIL import Image

        with Image.open(self.path) as im:
            rgb = im.convert("RGB")
            if rgb.size != self.size:
                rgb = rgb.resize(self.size, Image.BILINEAR)
            array = np.asarray(rgb, dtype=np.uint8)
        return array if dtype is None else array.astype(dtype)

    def __repr__(self) -> str:
        return f"ImageFile({self.path!r}, size={self.size})"


# ---------------------------------------------------------------- proposals
def parse_proposals(text: str) -> Any:
    """A command-line proposal spec: ``NAME:PATH`` for a :mod:`detectors` format, else a
    COCO ``instances_*.json`` path."""
    import detectors

    name, sep, path = text.partition(":")
    if sep and name.lower().replace("_", "-") in detectors.available():
        return {"format": name, "path": path}
    return text


def _spec_path(value: Any, root: Path, what: str) -> Path:
    if not isinstance(value, (str, Path)) or not str(value).strip():
        raise DataError(f"{what}: 'path' must be a file or folder path, got {value!r}")
    path = Path(value).expanduser()
    if not path.is_absolute() and not path.exists() and (root / path).exists():
        path = root / path
    return path


def open_proposals(spec: Any, root: str | Path) -> tuple[Any, bool]:
    """Open the proposal source of ``spec``; returns ``(source, ground_truth)``.

    Args:
        spec: a COCO ``instances_*.json`` path, or ``{format, path, ...options}``.
        root: the data root; relative paths not found as given are tried under it.

    Raises:
        DataError: a malformed spec, an unknown format or an unreadable source.
    """
    import detectors
    from detectors.errors import DetectorDataError

    root = Path(root)
    if spec is None or spec == "":
        raise DataError("no proposals: set data.proposals (a COCO instances_*.json path or "
                        "{format: NAME, path: P}) or pass --proposals")
    if isinstance(spec, (str, Path)):
        name, args, options = "coco", [_spec_path(spec, root, "proposals")], {}
    elif isinstance(spec, Mapping):
        options = dict(spec)
        name = options.pop("format", None)
        if not isinstance(name, str) or not name:
            raise DataError(f"proposals {dict(spec)}: 'format' must name a detectors source "
                            f"({', '.join(detectors.available())})")
        args = [_spec_path(options.pop("path"), root, f"proposals ({name})")] \
            if "path" in options else []
    else:
        raise DataError(f"proposals must be a path or a mapping with 'format', got {spec!r}")
    try:
        source = detectors.load(name, *args, **options)
    except KeyError as exc:
        raise DataError(str(exc.args[0]) if exc.args else str(exc)) from exc
    except (DetectorDataError, OSError, TypeError) as exc:
        raise DataError(f"proposals ({name}): {exc}") from exc
    return source, name.lower().replace("_", "-") in GROUND_TRUTH_FORMATS


def _lookup(source: Any, image: str) -> Proposals:
    """Proposals of ``image`` tried as written, by base name, stem and numeric id."""
    base = image.replace("\\", "/").rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0]
    keys = [image, base, stem]
    if stem.isdigit():
        keys.append(str(int(stem)))
    for key in dict.fromkeys(keys):
        if key in source:
            props = source[key]
            if not isinstance(props, Proposals):
                raise DataError(f"the proposal source gave {type(props).__name__} for image "
                                f"{image!r}, not Proposals")
            return props
    where = getattr(source, "location", "") or type(source).__name__
    raise DataError(f"no proposals for image {image!r} in {where}")


def _concept_boxes(props: Proposals, concepts: Sequence[str]) -> Proposals:
    """The boxes labelled with one of ``concepts`` when every concept has one, else all."""
    if props.labels is None or not concepts:
        return props
    wanted = {c.strip().lower() for c in concepts if c}
    labels = [label.strip().lower() for label in props.labels]
    if not wanted <= set(labels):
        return props
    keep = [i for i, label in enumerate(labels) if label in wanted]
    return Proposals(boxes=props.boxes[keep], image_size=props.image_size,
                     scores=None if props.scores is None else props.scores[keep],
                     labels=[props.labels[i] for i in keep],
                     features=None if props.features is None else props.features[keep],
                     image_id=props.image_id)


def _resized(props: Proposals, size: tuple[int, int]) -> Proposals:
    w, h = props.image_size
    scale = np.asarray([size[0] / w, size[1] / h, size[0] / w, size[1] / h], dtype=np.float32)
    return Proposals(boxes=props.boxes * scale, image_size=size, scores=props.scores,
                     labels=props.labels, features=props.features, image_id=props.image_id)


# ---------------------------------------------------------------- images
def image_path(root: str | Path, name: str, folders: Sequence[str] = ("",)) -> Path:
    """The file of image ``name`` under one of ``folders`` of ``root``.

    The path is checked without following links (an image folder may be a link to a
    shared copy): after normalising ``..``, it must stay inside ``root``
    (:func:`benchmarks.base.find_image`, which every benchmark's image paths go through).

    Raises:
        DataError: the path leads out of ``root`` (relative with ``..`` or absolute), or
            no folder holds the file.
    """
    return find_image(root, name, folders)


def _check_image(path: Path) -> None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path):
            pass
    except (OSError, UnidentifiedImageError) as exc:
        raise DataError(f"image {path} cannot be read ({exc})") from exc


# ---------------------------------------------------------------- runs
def _image_size(data: Mapping[str, Any]) -> tuple[int, int]:
    value = data.get("image_size", DEFAULT_IMAGE_SIZE)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value, value]
    try:
        w, h = (int(v) for v in value)
    except (TypeError, ValueError):
        raise DataError(f"data.image_size must be a side or [width, height], "
                        f"got {value!r}") from None
    if w < 16 or h < 16:
        raise DataError(f"data.image_size {value!r}: sides must be at least 16 pixels")
    return w, h


@dataclass
class BenchmarkRun:
    """One split of VSR or What'sUp with its problems ready for the model.

    Attributes:
        bench: the adapter (``VSRBenchmark`` or ``WhatsUpBenchmark``).
        problems: the problems in adapter order (What'sUp: item-major, every option).
    """

    bench: Any
    problems: list[GroundingProblem]

    def evaluate(self, predictions: Sequence[Prediction]) -> dict[str, Any]:
        """The adapter's official metrics of ``predictions``."""
        return self.bench.evaluate(predictions)


def _items(bench: Any) -> list[tuple[int, str, str, list[str]]]:
    """``(index, where, image name, concepts)`` of every item of the split."""
    out = []
    for i, it in enumerate(bench.items):
        if bench.name == "vsr":
            out.append((i, f"{bench.path} line {it.line}", it.image, [it.subject, it.object]))
        else:
            concepts = [c for c in (it.subject, it.object) if c]
            out.append((i, f"{bench.path} record {it.index}", it.image, concepts))
    return out


def load_run(benchmark: str, root: str | Path, split: str, proposals: Any, *,
             pixels: bool, image_size: tuple[int, int] | int | None = None,
             concept_filter: bool | None = None) -> BenchmarkRun:
    """Problems of one VSR or What'sUp split, with proposals and (when needed) images.

    Args:
        benchmark: ``"vsr"`` or ``"whatsup"``.
        root: the data root (annotations and images).
        split: the adapter's split (``random/train``, ``controlled_a``, ...).
        proposals: the proposal spec (see :func:`open_proposals`).
        pixels: the model computes region features from pixels: attach the images.
        image_size: the side or ``(width, height)`` images and boxes are resized to.
        concept_filter: keep the boxes of the caption's concepts (default: for
            ground-truth sources).

    Raises:
        DataError: naming the file and record of missing or malformed data (a missing
            image, a path out of ``root``, an image without proposals, ...).
    """
    import benchmarks

    if benchmark not in BENCHMARKS:
        raise DataError(f"unknown benchmark {benchmark!r}; this runs {', '.join(BENCHMARKS)}")
    root = Path(root).expanduser()
    bench = benchmarks.load(benchmark, root, split)
    if root.is_file():
        root = root.parent
    source, ground_truth = open_proposals(proposals, root)
    size = _image_size({"image_size": image_size if image_size is not None
                        else DEFAULT_IMAGE_SIZE})
    use_filter = ground_truth if concept_filter is None else bool(concept_filter)
    folders = VSR_IMAGE_FOLDERS if benchmark == "vsr" else ("",)
    checked: dict[Path, None] = {}
    problems: list[GroundingProblem] = []
    for index, where, image, concepts in _items(bench):
        try:
            path = image_path(root, image, folders) if pixels else None
            props = _lookup(source, image)
            if use_filter:
                props = _concept_boxes(props, concepts)
            if not len(props):
                raise DataError(f"image {image!r} has no proposals")
            meta: dict[str, Any] = {}
            if path is not None:
                if path not in checked:
                    _check_image(path)
                    checked[path] = None
                props = _resized(props, size)
                meta = {"image_path": str(path), "image": ImageFile(path, size)}
            elif props.features is None:
                raise DataError(f"the proposals of image {image!r} carry no region features; "
                                f"add a region_encoder section to compute them from pixels")
            if benchmark == "whatsup":
                options = range(len(bench.items[index].options))
                item_problems = [bench.problem(index, k, props) for k in options]
            else:
                item_problems = [bench.problem(index, props)]
        except DataError as exc:
            raise DataError(f"{where}: {exc}") from exc
        except (benchmarks.ProposalSourceError, KeyError, ValueError) as exc:
            raise DataError(f"{where}: {exc}") from exc
        problems += [replace(p, meta={**p.meta, **meta}) for p in item_problems]
    return BenchmarkRun(bench, problems)


def write_predictions(run: BenchmarkRun, predictions: Sequence[Prediction],
                      out: str | Path) -> list[Path]:
    """Write ``predictions.jsonl`` and the official prediction file of the benchmark.

    VSR: ``preds.txt`` (one 0/1 per line in jsonl order); What'sUp: ``scores.txt`` (one
    line per item with its options' match probabilities, as ``rcrn score`` reads it).
    Returns the paths written.
    """
    from benchmarks import predictions_by_id
    from benchmarks.vsr import write_preds
    from rcrn.engine.trainer import write_predictions

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ordered = predictions_by_id(predictions, [p.id for p in run.problems],
                                f"{run.bench.name} {run.bench.split}")
    jsonl = write_predictions(out / "predictions.jsonl", ordered)
    if run.bench.name == "vsr":
        official = out / "preds.txt"
        write_preds(official, [p.match for p in ordered])
    else:
        k = run.bench.num_options
        official = out / "scores.txt"
        rows = [ordered[i:i + k] for i in range(0, len(ordered), k)]
        official.write_text("".join(", ".join(f"{p.match_prob:.6f}" for p in row) + "\n"
                                    for row in rows), encoding="utf-8")
    return [jsonl, official]
