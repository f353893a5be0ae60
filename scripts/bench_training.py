#!/usr/bin/env python
"""Training-speed and data-pipeline benchmarks; prints one JSON object per configuration.

Same as ``rcrn bench training`` (default) and ``rcrn bench pipeline`` (first
argument ``pipeline``). Examples::

    python scripts/bench_training.py --quick
    python scripts/bench_training.py --dims synthetic --batch 16 64 --proposals 36 100 126 \\
        --nodes 2 4 8 16 --markdown training.md
    python scripts/bench_training.py --device cuda --amp none bf16 --markdown training_cuda.md
    python scripts/bench_training.py pipeline --dims paper synthetic --markdown pipeline.md

Run ``rcrn bench --help`` for every option.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rcrn.cli import main  # noqa: E402

if __name__ == "__main__":
    argv = sys.argv[1:]
    what = "training"
    if argv and argv[0] in ("training", "pipeline"):
        what, argv = argv[0], argv[1:]
    sys.exit(main(["bench", what, *argv]))
