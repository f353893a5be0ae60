#!/usr/bin/env python
"""Propagation speed benchmark; prints one JSON object per configuration.

Same as ``rcrn bench propagation``. Example::

    python scripts/bench_propagation.py --quick
    python scripts/bench_propagation.py --dims paper --batch 16 64 --proposals 36 100
"""

import sys

from rcrn.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "propagation", *sys.argv[1:]]))
