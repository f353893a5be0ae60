#!/usr/bin/env python
"""Length-generalisation / data-efficiency experiments: the same as ``rcrn lengthgen``.

    OMP_NUM_THREADS=1 python scripts/length_generalization.py --out runs/lengthgen
    python scripts/length_generalization.py --config my.yaml --models rcrn --seeds 0 1
"""

from __future__ import annotations

import sys

from rcrn.cli.experiments import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
