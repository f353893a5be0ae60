"""Speed benchmark of propagation: batched RCRN against the per-tree reference.

Every row is forward + backward on random trees (``rcrn.testing.random_problem``)
and reports samples/s of

* ``batched``: the model as shipped (per-box fused relation projections);
* ``unfused``: the same batched model but projecting every (box, context box)
  pair through ``W_e [o_k, o_l]`` — the arithmetic of the official release;
* ``reference``: the plain per-tree, per-node implementation (``rcrn.testing``),

plus the FLOPs of one batched step (``torch.utils.flop_counter``) and the
achieved FLOP/s, and the FLOP/s of a large float32 matrix multiply on the same
machine for scale.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from rcrn.batching import Vocab, collate
from rcrn.losses import rcrn_loss
from rcrn.models.rcrn import RCRN, RCRNConfig
from rcrn.testing import random_problem, reference_forward

__all__ = ["bench_propagation", "matmul_flops"]

DIMS = {"synthetic": RCRNConfig(), "paper": RCRNConfig.paper()}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def matmul_flops(n: int = 2048, repeat: int = 5, device: str | torch.device = "cpu") -> float:
    """FLOP/s of an ``n x n`` float32 matrix multiply on ``device`` (best of ``repeat``)."""
    device = torch.device(device)
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    a @ b
    best = float("inf")
    for _ in range(repeat):
        _sync(device)
        t = time.perf_counter()
        a @ b
        _sync(device)
        best = min(best, time.perf_counter() - t)
    return 2 * n ** 3 / best


def _time(fn: Any, min_time: float, max_iters: int, device: torch.device) -> float:
    fn()  # warm-up
    _sync(device)
    n, start = 0, time.perf_counter()
    while n < max_iters and (n == 0 or time.perf_counter() - start < min_time):
        fn()
        n += 1
    _sync(device)
    return (time.perf_counter() - start) / n


def _step(model: RCRN, batch: Any) -> None:
    model.zero_grad(set_to_none=True)
    out = model(batch)
    rcrn_loss(out, batch)["loss"].backward()


def _flops(model: RCRN, batch: Any) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        _step(model, batch)
    return int(counter.get_total_flops())


def bench_propagation(quick: bool = False, dims: list[str] | None = None,
                      batches: list[int] | None = None, proposals: list[int] | None = None,
                      nodes: list[int] | None = None, reference: bool = True,
                      unfused: bool = True, min_time: float = 2.0, reference_items: int = 2,
                      seed: int = 0, device: str = "cpu") -> Iterator[dict[str, Any]]:
    """Yield one JSON-ready row per configuration (and a first row with matmul FLOP/s)."""
    dev = torch.device(device)
    if quick:
        dims, batches, proposals, nodes, min_time = ["synthetic"], [16], [36], [2, 4], 0.5
    dims = dims or ["synthetic", "paper"]
    peak = matmul_flops(device=dev)
    yield {"matmul_2048_flops_per_s": peak, "threads": torch.get_num_threads(),
           "device": str(dev)}
    for dim in dims:
        if dim not in DIMS:
            raise ValueError(f"unknown dimension set {dim!r}; choose from {sorted(DIMS)}")
        for B in batches or [16, 64]:
            for N in proposals or [36, 100]:
                for V in nodes or [2, 4, 8, 16]:
                    yield _row(dim, B, N, V, reference, unfused, min_time, reference_items,
                               seed, peak, dev)


def _row(dim: str, B: int, N: int, V: int, reference: bool, unfused: bool, min_time: float,
         reference_items: int, seed: int, peak: float, dev: torch.device) -> dict[str, Any]:
    cfg = DIMS[dim]
    rng = np.random.default_rng(seed)
    problems = [random_problem(rng, V, N, cfg.vis_dim, shape="mixed", item_id=str(i))
                for i in range(B)]
    vocab = Vocab.build(problems)
    torch.manual_seed(seed)
    model = RCRN(cfg, len(vocab)).to(dev)
    batch = collate(problems, vocab).to(dev)
    row: dict[str, Any] = {"dims": dim, "batch": B, "proposals": N, "nodes": V,
                           "k": cfg.k, "device": str(dev)}
    seconds = _time(lambda: _step(model, batch), min_time, 50, dev)
    row["batched_samples_per_s"] = B / seconds
    flops = _flops(model, batch)
    row["flops_per_step"] = flops
    row["achieved_flops_per_s"] = flops / seconds
    row["fraction_of_matmul_peak"] = flops / seconds / peak
    if unfused:
        model.config.fused_pairs = False
        seconds_unfused = _time(lambda: _step(model, batch), min_time / 2, 10, dev)
        model.config.fused_pairs = True
        row["unfused_samples_per_s"] = B / seconds_unfused
        row["speedup_vs_unfused"] = seconds_unfused / seconds
    if reference:
        items = problems[:reference_items]

        def ref_step() -> None:
            model.zero_grad(set_to_none=True)
            outs = reference_forward(model, items, vocab)
            loss = sum(o["match_prob"] + o["ground_belief"].sum() for o in outs)
            loss.backward()

        t = _time(ref_step, 0.0, 1, dev)
        row["reference_samples_per_s"] = len(items) / t
        row["speedup_vs_reference"] = row["batched_samples_per_s"] / row[
            "reference_samples_per_s"]
    return row
