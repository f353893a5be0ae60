"""Boxes and pooled region features from a user's detectron2 model (optional dependency).

detectron2 is not on PyPI; install it from source (see its installation guide).
Weights are read from a local file only: ``.pkl`` model-zoo files through
:mod:`rcrn.safe_pickle` (plain data only), ``.pth`` / ``.pt`` checkpoints with
``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from detectors.base import register
from detectors.components import ImageFolderSource, as_rgb_array
from detectors.errors import DetectorDataError, MissingDependencyError
from detectors.readers._common import require_file
from rcrn import safe_pickle
from rcrn.structures import Proposals

__all__ = ["Detectron2Detector", "Detectron2Folder", "require_detectron2"]

INSTALL_HINT = ("detectron2 is not installed. It is not on PyPI: install it from source, e.g. "
                "`pip install 'git+https://github.com/facebookresearch/detectron2.git'` on a "
                "machine with network access (see detectron2's INSTALL.md), then pass a local "
                "config file and weights file.")


def require_detectron2() -> Any:
    """Import detectron2 or raise :class:`MissingDependencyError` saying how to install it."""
    try:
        import detectron2  # noqa: F401
        from detectron2 import config, modeling  # noqa: F401
    except ImportError:
        raise MissingDependencyError(INSTALL_HINT) from None
    return detectron2


def _load_weights(path: Path) -> dict[str, Any]:
    """A detectron2 checkpoint dict read without running arbitrary pickled code."""
    if path.suffix == ".pkl":
        try:
            data = safe_pickle.load(path)
        except safe_pickle.UnsafePickleError as exc:
            raise DetectorDataError(str(exc)) from None
        if isinstance(data, dict) and "model" in data:
            out = dict(data)
        else:
            blobs = data.get("blobs", data) if isinstance(data, dict) else None
            if not isinstance(blobs, dict):
                raise DetectorDataError(f"{path}: not a detectron2 / Caffe2 weights file")
            out = {"model": {k: v for k, v in blobs.items() if not k.endswith("_momentum")},
                   "__author__": "Caffe2"}
        out["matching_heuristics"] = True
        return out
    import torch

    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several kinds for unreadable or unsafe files
        raise DetectorDataError(f"{path}: cannot read the weights with weights_only=True "
                                f"({exc})") from None
    if not isinstance(loaded, dict):
        raise DetectorDataError(f"{path}: expected a state dict")
    return loaded if "model" in loaded else {"model": loaded}


class Detectron2Detector:
    """Run a detectron2 detector and pool box-head features for its boxes.

    Args:
        config_file: a local detectron2 YAML config.
        weights: a local weights file (``.pkl`` or ``.pth``).
        device: ``"cpu"`` or a CUDA device string.
        score_thresh: minimum detection score.
        max_boxes: keep at most this many boxes per image (highest scores).
        opts: extra ``KEY VALUE`` config overrides.

    Calling it on an RGB image returns :class:`Proposals` with the box-head
    features (e.g. 1024-d for R50-FPN) of every kept box.
    """

    def __init__(self, config_file: str | Path, weights: str | Path, device: str = "cpu",
                 score_thresh: float = 0.2, max_boxes: int = 100,
                 opts: list[str] | None = None) -> None:
        require_detectron2()
        import torch
        from detectron2.checkpoint import DetectionCheckpointer
        from detectron2.config import get_cfg
        from detectron2.modeling import build_model

        config_file = require_file(config_file, "detectron2 config file")
        weights = require_file(weights, "detectron2 weights file")
        cfg = get_cfg()
        cfg.merge_from_file(str(config_file))
        cfg.merge_from_list(list(opts or []))
        cfg.MODEL.DEVICE = device
        cfg.MODEL.WEIGHTS = ""
        if hasattr(cfg.MODEL, "ROI_HEADS"):
            cfg.MODEL.ROI_HEADS.SCORE_THRESH_TEST = float(score_thresh)
        cfg.TEST.DETECTIONS_PER_IMAGE = int(max_boxes)
        cfg.freeze()
        self.cfg = cfg
        self.model = build_model(cfg).eval()
        checkpoint = _load_weights(weights)
        checkpointer = DetectionCheckpointer(self.model)
        incompatible = checkpointer._load_model(checkpoint)
        if incompatible is not None and getattr(incompatible, "missing_keys", None):
            checkpointer._log_incompatible_keys(incompatible)
        self.input_format = cfg.INPUT.FORMAT
        self.min_size, self.max_size = cfg.INPUT.MIN_SIZE_TEST, cfg.INPUT.MAX_SIZE_TEST
        self._torch = torch

    def __call__(self, image: Any, image_id: str = "") -> Proposals:
        """Boxes, classes, scores and pooled features of one RGB image."""
        from detectron2.data import MetadataCatalog
        from detectron2.data import transforms as T
        from detectron2.modeling.postprocessing import detector_postprocess

        torch = self._torch
        rgb = as_rgb_array(image)
        h, w = rgb.shape[:2]
        arr = rgb[:, :, ::-1] if self.input_format == "BGR" else rgb
        resized = T.ResizeShortestEdge([self.min_size] * 2, self.max_size).get_transform(arr) \
            .apply_image(arr)
        tensor = torch.as_tensor(np.ascontiguousarray(resized).transpose(2, 0, 1)).float()
        model = self.model
        with torch.no_grad():
            batch = model.preprocess_image([{"image": tensor, "height": h, "width": w}])
            feats = model.backbone(batch.tensor)
            proposals, _ = model.proposal_generator(batch, feats, None)
            instances, _ = model.roi_heads(batch, feats, proposals, None)
            inst = instances[0]
            in_features = [feats[f] for f in model.roi_heads.box_in_features]
            pooled = model.roi_heads.box_pooler(in_features, [inst.pred_boxes])
            region = model.roi_heads.box_head(pooled)
            region = region.flatten(1).cpu().numpy().astype(np.float32)
            final = detector_postprocess(inst, h, w)
        names = MetadataCatalog.get(self.cfg.DATASETS.TEST[0]).get("thing_classes", None) \
            if self.cfg.DATASETS.TEST else None
        classes = final.pred_classes.cpu().numpy()
        labels = [names[c] if names and c < len(names) else str(int(c)) for c in classes]
        boxes = final.pred_boxes.tensor.cpu().numpy()
        return Proposals(boxes=boxes, image_size=(w, h),
                         scores=final.scores.cpu().numpy(), labels=labels, features=region,
                         image_id=str(image_id))


@register("detectron2", "a local detectron2 model over a folder of images (needs detectron2)")
class Detectron2Folder(ImageFolderSource):
    """Run :class:`Detectron2Detector` over the images of a folder (ids = file stems).

    Args:
        path: the image folder.
        config_file: the detectron2 config.
        weights: the weights file.
        **options: further options of :class:`Detectron2Detector`.
    """

    name = "detectron2"

    def __init__(self, path: str | Path, config_file: str | Path | None = None,
                 weights: str | Path | None = None, **options: Any) -> None:
        require_detectron2()
        if config_file is None or weights is None:
            raise DetectorDataError("the detectron2 source needs config_file=... and "
                                    "weights=... (local files)")
        super().__init__(path, Detectron2Detector(config_file, weights, **options))
