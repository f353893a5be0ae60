"""Readers for detector outputs and region features that users already have."""

from detectors.readers.groundtruth import CocoBoxes, GqaSceneGraphs
from detectors.readers.h5 import GitmMrObjects, SgmnObjects
from detectors.readers.npz import UniterNpz, uniter_num_boxes
from detectors.readers.tsv import BottomUpTsv, OscarFeatures, VinVLPredictions

__all__ = ["VinVLPredictions", "OscarFeatures", "BottomUpTsv", "UniterNpz", "uniter_num_boxes",
           "GitmMrObjects", "SgmnObjects", "CocoBoxes", "GqaSceneGraphs"]
