"""Images to region proposals: readers of detector outputs, a feature store, live detectors.

Typical use::

    import detectors
    source = detectors.load("vinvl", "predictions.tsv")      # any registered format
    props = source["000000451431"]                           # rcrn.structures.Proposals
    detectors.convert(source, "stores/vinvl", float16=True)  # or: rcrn features convert
    store = detectors.open_store("stores/vinvl")             # O(1) random access
    props = store["000000451431"]

Formats: ``vinvl`` (predictions.tsv), ``oscar`` (features.tsv), ``uniter`` (.npz),
``bottomup`` (LXMERT / bottom-up TSV), ``gitm-mr`` (vinvl_objects), ``sgmn``
(gt_objects), ``coco`` and ``gqa`` (ground-truth boxes), ``store``, and the live
``components`` and ``detectron2`` detectors over image folders.
"""

from detectors.base import BaseSource, ProposalSource, available, load, make_proposals, register
from detectors.components import ComponentsDetector, find_components, label_components
from detectors.detectron2_backend import Detectron2Detector
from detectors.errors import DetectorDataError, ImageNotFoundError, MissingDependencyError
from detectors.readers import (
    BottomUpTsv,
    CocoBoxes,
    GitmMrObjects,
    GqaSceneGraphs,
    OscarFeatures,
    SgmnObjects,
    UniterNpz,
    VinVLPredictions,
    uniter_num_boxes,
)
from detectors.store import FeatureStore, StoreWriter, convert, open_store, store_info

__all__ = [
    "ProposalSource", "BaseSource", "register", "load", "available", "make_proposals",
    "DetectorDataError", "ImageNotFoundError", "MissingDependencyError",
    "VinVLPredictions", "OscarFeatures", "BottomUpTsv", "UniterNpz", "uniter_num_boxes",
    "GitmMrObjects", "SgmnObjects", "CocoBoxes", "GqaSceneGraphs",
    "FeatureStore", "StoreWriter", "open_store", "convert", "store_info",
    "ComponentsDetector", "find_components", "label_components",
    "Detectron2Detector",
]
