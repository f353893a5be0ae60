"""The built-in synthetic GITM-MR-style benchmark of rendered scenes.

Seeded scenes of flat shapes, referring expressions that each identify exactly
one object (checked by executing them on the scene's relation graph), their
gold language graphs, and mismatched counterparts with one relation phrase
replaced (kept only when surely false).  See :mod:`benchmarks.synthetic.generator`
for the files and record format and :class:`SyntheticBenchmark` for loading.
"""

from benchmarks.synthetic.benchmark import SyntheticBenchmark, ensure_dataset, load_manifest
from benchmarks.synthetic.generator import (
    GENERATOR_VERSION,
    GeneratorConfig,
    generate_dataset,
    generate_scene,
)

__all__ = [
    "SyntheticBenchmark",
    "ensure_dataset",
    "load_manifest",
    "GENERATOR_VERSION",
    "GeneratorConfig",
    "generate_dataset",
    "generate_scene",
]
