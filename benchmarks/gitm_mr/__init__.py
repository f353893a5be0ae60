"""GITM-MR: the release layout as graph-grounding problems, a generator, official metrics.

* :class:`GITMMRBenchmark` reads ``expression/``, ``counter/``, ``parse/``, ``small/``
  and ``vinvl_objects/`` of a release (splits ``train`` / ``val`` / ``test``;
  Train-Len16, Train-Len11 and a seeded uniform 5% train subset) and scores
  predictions with :mod:`benchmarks.gitm_metrics` (Match / Grounding / MRR and
  their oracle variants, in- and out-of-distribution by word length).
* :func:`generate_from_refreasoning` builds mismatched expressions from
  Ref-Reasoning with the paper's substitution table (:data:`SUBSTITUTIONS`) and
  writes the layout; :func:`convert_synthetic` writes the built-in synthetic
  benchmark in it.  Both back ``rcrn gitm-mr generate``.
"""

from benchmarks.gitm_mr.benchmark import SUBSETS, GITMMRBenchmark, canonical_subset
from benchmarks.gitm_mr.generator import GenerateConfig, generate_from_refreasoning
from benchmarks.gitm_mr.mlm import MLMUnavailable, PseudoPerplexity
from benchmarks.gitm_mr.substitutions import RELATION_VOCABULARY, SUBSTITUTIONS
from benchmarks.gitm_mr.synthetic import convert_synthetic
from benchmarks.gitm_mr.writer import Pair, write_release

__all__ = [
    "GITMMRBenchmark",
    "SUBSETS",
    "canonical_subset",
    "GenerateConfig",
    "generate_from_refreasoning",
    "convert_synthetic",
    "write_release",
    "Pair",
    "MLMUnavailable",
    "PseudoPerplexity",
    "SUBSTITUTIONS",
    "RELATION_VOCABULARY",
]
