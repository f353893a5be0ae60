#!/usr/bin/env python
"""Overhead of trace recording: time per batch with and without ``rcrn.trace.record``.

Measures forward only (eval, no grad) and forward + backward (train), each
with the recorder off and on, interleaved and repeated, and reports the
median time per batch and the % extra.  The recorder only keeps references
during the forward pass; building the ``Trace``s afterwards (``rec.traces``)
is timed separately.  Example::

    OMP_NUM_THREADS=1 python scripts/bench_trace.py --quick
    python scripts/bench_trace.py --batch 64 --proposals 36 --nodes 2 8 --repeat 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import torch

from rcrn.batching import Vocab, collate
from rcrn.losses import rcrn_loss
from rcrn.models.rcrn import RCRN, RCRNConfig
from rcrn.testing import random_problem
from rcrn.trace import record


def _timed(fn: Callable[[], None], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def bench(batch_size: int, proposals: int, nodes: tuple[int, int], repeat: int,
          seed: int = 0) -> dict[str, float]:
    """Median seconds per batch of every variant and the % extra of recording."""
    cfg = RCRNConfig()
    rng = np.random.default_rng(seed)
    problems = [random_problem(rng, int(rng.integers(nodes[0], nodes[1] + 1)), proposals,
                               cfg.vis_dim, item_id=f"b{i}") for i in range(batch_size)]
    vocab = Vocab.build(problems)
    torch.manual_seed(seed)
    model = RCRN(cfg, len(vocab))
    batch = collate(problems, vocab)

    def forward() -> None:
        with torch.no_grad():
            model(batch)

    def forward_rec() -> None:
        with torch.no_grad(), record(model):
            model(batch)

    def step() -> None:
        model.zero_grad(set_to_none=True)
        rcrn_loss(model(batch), batch)["loss"].backward()

    def step_rec() -> None:
        model.zero_grad(set_to_none=True)
        with record(model):
            out = model(batch)
        rcrn_loss(out, batch)["loss"].backward()

    with torch.no_grad(), record(model) as rec:
        model(batch)

    def extract() -> None:
        rec.traces(batch, problems)

    variants = {"forward": forward, "forward_record": forward_rec, "train_step": step,
                "train_step_record": step_rec, "traces": extract}
    times: dict[str, list[float]] = {k: [] for k in variants}
    model.eval()
    forward(), forward_rec(), extract()                          # warm-up
    for _ in range(repeat):                                      # interleaved: fair to both
        for name in ("forward", "forward_record", "traces"):
            times[name] += _timed(variants[name], 1)
    model.train()
    step(), step_rec()
    for _ in range(repeat):
        for name in ("train_step", "train_step_record"):
            times[name] += _timed(variants[name], 1)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "batch": batch_size, "proposals": proposals, "nodes": list(nodes),
        "forward_s": round(med["forward"], 5), "forward_record_s": round(med["forward_record"], 5),
        "forward_overhead_pct": round(100 * (med["forward_record"] / med["forward"] - 1), 2),
        "train_step_s": round(med["train_step"], 5),
        "train_step_record_s": round(med["train_step_record"], 5),
        "train_overhead_pct": round(100 * (med["train_step_record"] / med["train_step"] - 1), 2),
        "traces_s": round(med["traces"], 5),
        "forward_plus_traces_overhead_pct": round(
            100 * ((med["forward_record"] + med["traces"]) / med["forward"] - 1), 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, nargs="*", default=[16, 64])
    parser.add_argument("--proposals", type=int, default=36)
    parser.add_argument("--nodes", type=int, nargs=2, default=[2, 8], metavar=("MIN", "MAX"))
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="one small configuration")
    args = parser.parse_args(argv)
    batches, repeat = ([16], 5) if args.quick else (args.batch, args.repeat)
    worst = 0.0
    for b in batches:
        row = bench(b, args.proposals, tuple(args.nodes), repeat)
        worst = max(worst, row["forward_overhead_pct"], row["train_overhead_pct"])
        print(json.dumps(row), flush=True)
    print(f"recording overhead: {worst:.1f}% at most (goal < 20%)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
