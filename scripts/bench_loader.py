"""Time per batch of the demo's training loader, printed as JSON.

Usage::

    python scripts/bench_loader.py [--data data/synthetic] [--batches 80] [--batch 64]

Reads the synthetic benchmark's training problems (short expressions, as ``rcrn demo``
trains on; generated first when ``--data`` holds none), then times ``--batches`` batches
of ``rcrn.engine.trainer.make_loader`` as the demo's training builds it: shuffled,
grouped by image, pixels read from the rendered images, collated in the main process
(``num_workers: 0``), on one thread.  The first batch is not timed.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from rcrn.batching import Vocab  # noqa: E402
from rcrn.cli.commands import synthetic_benchmark  # noqa: E402
from rcrn.engine.config import load_config  # noqa: E402
from rcrn.engine.trainer import make_loader  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="data/synthetic", help="synthetic benchmark folder")
    ap.add_argument("--batches", type=int, default=80, help="batches to time")
    ap.add_argument("--batch", type=int, default=64, help="problems per batch")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    config = load_config(REPO / "rcrn" / "configs" / "synthetic.yaml",
                         [f"data.root={args.data}"])
    problems = list(synthetic_benchmark(config, "train", config["data"]["train_subset"],
                                        progress=False).problems())
    loader = make_loader(problems, Vocab.build(problems), args.batch, True, with_images=True,
                         seed=0, group_by="image_path")
    batches = iter(loader)
    next(batches)
    start = time.perf_counter()
    timed = sum(1 for _, _ in zip(range(args.batches), batches))
    seconds = time.perf_counter() - start
    print(json.dumps({"bench": "loader", "problems": len(problems), "batch": args.batch,
                      "batches": timed, "ms_per_batch": round(seconds / timed * 1e3, 2),
                      "python": platform.python_version(), "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
