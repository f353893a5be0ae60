"""rcrn: graph-neural reasoning over language scene graphs and region proposals.

The core package knows nothing of any benchmark: see ``parsers``, ``detectors``
and ``benchmarks`` for the inputs, and ``rcrn.cli`` for the command line.
"""

__version__ = "0.1.0"
