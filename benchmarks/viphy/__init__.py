"""ViPhy: "visible" physical commonsense -- spatial, size and colour knowledge of objects.

A text-only knowledge-probing benchmark (no images at test time):

* ``spatial``: for an ordered object pair in a scene type, is the first object typically
  above, below or at the same level as the second (1-2 gold labels);
* ``size``: is the first object bigger or smaller than the second (one label); the
  ``size_sub`` (objects replaced by subtypes) and ``size_trans`` (transitively linked
  pairs) test sets score the same way;
* ``color``: the typical colours of an object among 11 basic colours (1 or more labels).

Modules:

* :mod:`benchmarks.viphy.data` -- the released files as :class:`ViPhyItem` lists, prompts
  and candidate-statement graphs;
* :mod:`benchmarks.viphy.metrics` -- R-Acc, True Confidence, macro-F1 with the official
  "typical" thresholding;
* :mod:`benchmarks.viphy.benchmark` -- :class:`ViPhyBenchmark` (the adapter of
  ``rcrn score --benchmark viphy``);
* :mod:`benchmarks.viphy.probe` -- the linear probe on a frozen encoder, and a
  frequency prior;
* :mod:`benchmarks.viphy.extract` -- the extraction pipeline from annotated scenes
  (spatial relations by depth partitions, size clusters by Jenks natural breaks; boxes
  or polygons);
* :mod:`benchmarks.viphy.kg` -- a size scorer inferring unseen pairs through transitive
  paths over the train relations;
* :mod:`benchmarks.viphy.scene_scorer` -- a scorer from relations mined in a folder of
  annotated scenes;
* :mod:`benchmarks.viphy.cli` -- ``rcrn viphy evaluate`` / ``rcrn viphy train``.
"""

from __future__ import annotations

from benchmarks.viphy.benchmark import ViPhyBenchmark, read_probabilities, score_items
from benchmarks.viphy.data import (
    CLASSES,
    COLORS,
    SPLITS,
    TASKS,
    ViPhyItem,
    base_task,
    candidate_graph,
    canonical_task,
    read_items,
)
from benchmarks.viphy.metrics import macro_f1, score_matrix, typical_set

__all__ = [
    "ViPhyBenchmark",
    "ViPhyItem",
    "CLASSES",
    "COLORS",
    "SPLITS",
    "TASKS",
    "base_task",
    "canonical_task",
    "candidate_graph",
    "read_items",
    "read_probabilities",
    "score_items",
    "score_matrix",
    "macro_f1",
    "typical_set",
]
