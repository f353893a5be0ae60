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

Training speed (``bench_training``, ``rcrn bench training``): samples/s of the
whole training step (forward, ``rcrn_loss``, backward, gradient clipping, Adam
step) and its peak memory, against batch size, proposals per image, tree size,
dimension set, device and ``--amp bf16``; ``training_markdown`` turns the rows
into scaling tables.

Data pipeline (``bench_pipeline``, ``rcrn bench pipeline``): writes a temporary
feature store, reads + collates batches through
``detectors.dataset.StoreProblemDataset`` with 0, 1, 2 DataLoader workers and
compares the time per batch with the model's training step at the same size.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rcrn.batching import Vocab, collate
from rcrn.losses import loss_terms, rcrn_loss
from rcrn.models.rcrn import RCRN, RCRNConfig
from rcrn.testing import random_problem, reference_forward

__all__ = ["bench_propagation", "bench_training", "bench_pipeline", "training_markdown",
           "pipeline_markdown", "measure_training_step", "write_random_store", "matmul_flops",
           "PeakMemory"]

DIMS = {"synthetic": RCRNConfig(), "paper": RCRNConfig.paper(),
        "official": RCRNConfig.official()}


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


# ------------------------------------------------------------------ memory
def _proc_status_kib(name: str) -> int | None:
    """A ``/proc/self/status`` field in KiB (Linux), or None."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _reset_rss_peak() -> bool:
    """Reset the process's resident-set high-water mark (Linux >= 4.0: clear_refs 5)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _malloc_trim() -> None:
    """Return freed heap pages to the OS (glibc), so earlier rows do not inflate the RSS."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class PeakMemory:
    """Peak memory of the work done inside ``with PeakMemory(device) as m:``.

    * CUDA: ``torch.cuda.max_memory_allocated`` after ``reset_peak_memory_stats``:
      the largest total of live tensor bytes on the device (allocator cache and
      CUDA context excluded).  ``base`` is ``memory_allocated`` on entry.
    * CPU: the peak resident set size of the whole process (``VmHWM`` of
      ``/proc/self/status``, reset on entry through ``/proc/self/clear_refs``),
      after ``gc.collect`` and glibc ``malloc_trim`` on entry; ``base`` is the
      resident set on entry.  It counts everything resident: the interpreter,
      libraries, allocator slack and the OS's view of touched pages, so it is an
      upper bound on the tensors' working set; ``extra`` (peak - base) is what the
      work added.  Where the peak cannot be reset it falls back to ``ru_maxrss``,
      the lifetime peak of the process (``measure`` says which).

    After the block, :meth:`result` gives ``peak_memory_mb``, ``base_memory_mb``,
    ``peak_extra_mb`` and ``memory_measure``.
    """

    def __init__(self, device: str | torch.device) -> None:
        self.device = torch.device(device)
        self.base = self.peak = 0
        self.measure = ""

    def __enter__(self) -> PeakMemory:
        import gc

        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self.base = torch.cuda.memory_allocated(self.device)
            self.measure = "cuda_max_memory_allocated"
            return self
        _malloc_trim()
        rss = _proc_status_kib("VmRSS")
        if rss is not None and _reset_rss_peak():
            self.base = rss * 1024
            self.measure = "cpu_process_rss_peak"
        else:
            self.base = (rss or 0) * 1024
            self.measure = "cpu_process_lifetime_maxrss"
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.peak = torch.cuda.max_memory_allocated(self.device)
            return
        hwm = _proc_status_kib("VmHWM") if self.measure == "cpu_process_rss_peak" else None
        if hwm is None:
            try:
                import resource

                hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
            except ImportError:
                hwm = 0
        self.peak = hwm * 1024

    def result(self) -> dict[str, Any]:
        mb = 1024 * 1024
        return {"peak_memory_mb": round(self.peak / mb, 1),
                "base_memory_mb": round(self.base / mb, 1),
                "peak_extra_mb": round(max(0, self.peak - self.base) / mb, 1),
                "memory_measure": self.measure}


# ---------------------------------------------------------------- training
AMP_DTYPES = {"none": None, "bf16": torch.bfloat16}


class _TrainStep:
    """One training step as ``Trainer.fit`` takes it: its ``TrainStep`` (forward under
    autocast with ``amp``, ``rcrn_loss`` in float32), backward, clip, the trainer's Adam."""

    def __init__(self, model: RCRN, batch: Any, device: torch.device, amp: str = "none",
                 lr: float = 1e-3, clip: float = 10.0) -> None:
        from rcrn.engine import schema
        from rcrn.engine.distributed import TrainStep
        from rcrn.engine.trainer import make_optimizer
        from rcrn.losses import LossConfig

        if amp not in AMP_DTYPES:
            raise ValueError(f"amp must be one of {sorted(AMP_DTYPES)}, got {amp!r}")
        self.model, self.batch = model, batch
        loss_cfg = LossConfig()
        self.step = TrainStep(model, partial(loss_terms, cfg=loss_cfg), loss_cfg,
                              AMP_DTYPES[amp])
        self.optimizer = make_optimizer(model, schema.section({"train": {"lr": lr}}, "train"))
        self.clip = clip
        self.notes: list[str] = []
        if AMP_DTYPES[amp] is not None and any(isinstance(m, torch.nn.RNNBase)
                                               for m in model.modules()):
            self.notes.append("LSTMs in float32 (oneDNN has no bf16 packed LSTM)")
        self.loss = float("nan")

    def __call__(self) -> None:
        from rcrn.engine.distributed import apply_gradients

        loss, _ = self.step(self.batch)
        apply_gradients(self.model, self.optimizer, loss, self.clip)
        self.loss = loss.detach()


def _time_steps(fn: Any, device: torch.device, min_time: float, min_iters: int,
                max_iters: int) -> list[float]:
    """Seconds of every timed call (device synchronised around each)."""
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < max_iters and (len(times) < min_iters
                                      or time.perf_counter() - start < min_time):
        _sync(device)
        t = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - t)
    return times


def _problems(cfg: RCRNConfig, B: int, N: int, V: int, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    return [random_problem(rng, V, N, cfg.vis_dim, shape="mixed", item_id=str(i))
            for i in range(B)]


def measure_training_step(model: RCRN, batch: Any, device: torch.device, amp: str = "none",
                          min_time: float = 2.0, min_iters: int = 2, max_iters: int = 50,
                          warmup: int = 1) -> dict[str, Any]:
    """Time the training step of ``model`` on ``batch`` (already on ``device``).

    ``warmup`` untimed steps (they allocate Adam's state), then steps until
    ``min_time`` seconds and ``min_iters`` steps (at most ``max_iters``).  Memory
    is measured over warm-up and timed steps (:class:`PeakMemory`); its base holds
    the model and the batch.
    """
    step = _TrainStep(model, batch, device, amp)
    with PeakMemory(device) as mem:
        for _ in range(warmup):
            step()
        times = _time_steps(step, device, min_time, min_iters, max_iters)
    B = batch.num_graphs
    median = float(np.median(times))
    row = {"step_ms": round(1000 * median, 2),
           "step_ms_mean": round(1000 * float(np.mean(times)), 2),
           "samples_per_s": round(B / median, 2), "steps_timed": len(times),
           **mem.result(), "loss": round(float(step.loss), 4)}
    if step.notes:
        row["notes"] = "; ".join(step.notes)
    return row


def _training_row(dim: str, B: int, N: int, V: int, amp: str, min_time: float,
                  max_iters: int, seed: int, dev: torch.device,
                  peak: float | None = None) -> dict[str, Any]:
    cfg = DIMS[dim]
    row: dict[str, Any] = {"bench": "training", "dims": dim, "device": str(dev), "amp": amp,
                           "batch": B, "proposals": N, "nodes": V, "k": cfg.k,
                           "threads": torch.get_num_threads()}
    problems = _problems(cfg, B, N, V, seed)
    vocab = Vocab.build(problems)
    torch.manual_seed(seed)
    model = RCRN(RCRNConfig(**cfg.to_dict()), len(vocab)).to(dev)
    batch = collate(problems, vocab).to(dev)
    del problems
    row["params"] = sum(p.numel() for p in model.parameters())
    try:
        row.update(measure_training_step(model, batch, dev, amp, min_time=min_time,
                                         max_iters=max_iters))
        if peak and amp == "none":
            flops = _flops(model, batch)   # forward + loss + backward
            row["flops_per_step"] = flops
            row["achieved_flops_per_s"] = flops / (row["step_ms"] / 1000)
            row["fraction_of_matmul_peak"] = row["achieved_flops_per_s"] / peak
    except (RuntimeError, ValueError, TypeError) as exc:  # e.g. an op without bf16 kernel
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    finally:
        del model, batch
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    return row


QUICK_TRAINING = dict(dims=["synthetic"], batches=[16], proposals=[36], nodes=[2, 4],
                      min_time=0.3, max_iters=5)


def bench_training(quick: bool = False, dims: list[str] | None = None,
                   batches: list[int] | None = None, proposals: list[int] | None = None,
                   nodes: list[int] | None = None, device: str | list[str] = "cpu",
                   amp: list[str] | str | None = None, min_time: float = 2.0,
                   max_iters: int = 30, seed: int = 0) -> Iterator[dict[str, Any]]:
    """Yield one JSON-ready row per configuration of the training step.

    Every row: ``dims``, ``device``, ``amp``, ``batch``, ``proposals``, ``nodes``
    (entities per tree; random trees of ``rcrn.testing.random_problem``),
    ``samples_per_s`` (expressions per second, from the median step), ``step_ms``
    (median), ``step_ms_mean``, ``steps_timed``, the :class:`PeakMemory` fields,
    ``params`` and the last ``loss``, and without autocast ``flops_per_step``,
    ``achieved_flops_per_s`` and ``fraction_of_matmul_peak`` (against the first row
    of every device: the FLOP/s of a 2048 x 2048 float32 matmul); a row whose step
    failed holds ``error`` instead of the timings.

    Dimension sets (``dims``): ``synthetic``, ``paper`` (the paper's sizes, the
    toolkit's layers) and ``official`` (``RCRNConfig.official()``).
    Defaults: synthetic and paper dimensions, batches 16 and 64, proposals 36, 100
    and 126, trees of 2, 4, 8 and 16 nodes, no autocast; ``quick`` runs a small
    synthetic grid for a smoke test.  ``device`` is one device, a list, or a
    comma-separated string (``"cpu,cuda"``).
    """
    devices = [torch.device(d) for d in (device.split(",") if isinstance(device, str)
                                         else device)]
    for dev in devices:
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("device cuda requested but torch.cuda.is_available() is False")
    if quick:
        q = QUICK_TRAINING
        dims, batches = dims or q["dims"], batches or q["batches"]
        proposals, nodes = proposals or q["proposals"], nodes or q["nodes"]
        min_time, max_iters = min(min_time, q["min_time"]), min(max_iters, q["max_iters"])
    amps = [amp] if isinstance(amp, str) else list(amp or ["none"])
    for a in amps:
        if a not in AMP_DTYPES:
            raise ValueError(f"amp must be one of {sorted(AMP_DTYPES)}, got {a!r}")
    for dim in dims or ["synthetic", "paper"]:
        if dim not in DIMS:
            raise ValueError(f"unknown dimension set {dim!r}; choose from {sorted(DIMS)}")
    for dev in devices:
        peak = matmul_flops(device=dev)
        yield {"bench": "training", "matmul_2048_flops_per_s": peak,
               "threads": torch.get_num_threads(), "device": str(dev)}
        for dim in dims or ["synthetic", "paper"]:
            for a in amps:
                for B in batches or [16, 64]:
                    for N in proposals or [36, 100, 126]:
                        for V in nodes or [2, 4, 8, 16]:
                            yield _training_row(dim, B, N, V, a, min_time, max_iters, seed,
                                                dev, peak)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


MEMORY_NOTES = {
    "cuda_max_memory_allocated": "peak of live tensor bytes on the GPU "
                                 "(torch.cuda.max_memory_allocated; allocator cache and "
                                 "CUDA context not counted)",
    "cpu_process_rss_peak": "peak resident set of the whole process during the steps "
                            "(VmHWM, reset before them); 'extra' is that peak minus the "
                            "resident set before the first step (model and batch "
                            "already resident), so it counts gradients, Adam state, "
                            "activations and allocator slack",
    "cpu_process_lifetime_maxrss": "lifetime peak resident set of the process (ru_maxrss; "
                                   "it could not be reset, so it is an upper bound)",
}


def training_markdown(rows: list[dict[str, Any]], title: str = "Training speed") -> str:
    """Scaling tables of ``bench_training`` rows: samples/s and peak memory per
    (dimension set, device, amp), batch x proposals down, tree size across."""
    rows = [r for r in rows if r.get("bench", "training") == "training" and "batch" in r]
    lines = [f"# {title}", "",
             "One training step = forward + `rcrn_loss` + backward + gradient clipping + "
             "Adam step, on a pre-collated batch already on the device. samples/s = "
             "expressions (graphs) per second from the median step time; tree size = "
             "entities per expression.", ""]
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["dims"], r["device"], r["amp"]), []).append(r)
    measures = set()
    for (dim, device, amp), group in groups.items():
        nodes = sorted({r["nodes"] for r in group})
        keys = sorted({(r["batch"], r["proposals"]) for r in group})
        cell = {(r["batch"], r["proposals"], r["nodes"]): r for r in group}
        threads = sorted({str(r.get("threads")) for r in group})
        lines += [f"## dims={dim}, device={device}, amp={amp} (torch threads: "
                  f"{', '.join(threads)})", ""]
        for label, key, digits in (("samples/s", "samples_per_s", 1),
                                   ("step time, ms (median)", "step_ms", 1),
                                   ("peak memory, MB", "peak_memory_mb", 0),
                                   ("peak extra memory over model + batch, MB",
                                    "peak_extra_mb", 0)):
            body = []
            for B, N in keys:
                vals = []
                for V in nodes:
                    r = cell.get((B, N, V))
                    vals.append("error" if r is not None and "error" in r
                                else _fmt(None if r is None else r.get(key), digits))
                body.append([str(B), str(N), *vals])
            lines += [f"**{label}**", "",
                      *_table(["batch", "proposals", *[f"{V} nodes" for V in nodes]], body),
                      ""]
        measures |= {r.get("memory_measure") for r in group if r.get("memory_measure")}
        errors = [r for r in group if "error" in r]
        for r in errors:
            lines.append(f"- error at batch {r['batch']}, proposals {r['proposals']}, "
                         f"nodes {r['nodes']}: {r['error']}")
        notes = sorted({r["notes"] for r in group if r.get("notes")})
        lines += [f"- note: {n}" for n in notes]
        if errors or notes:
            lines.append("")
    for m in sorted(measures):
        lines.append(f"Memory ({m}): {MEMORY_NOTES.get(m, m)}.")
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------- pipeline
def write_random_store(path: str | Path, images: int, proposals: int, feature_dim: int,
                       float16: bool = True, seed: int = 0,
                       image_size: tuple[int, int] = (640, 480)) -> dict[str, np.ndarray]:
    """A feature store of ``images`` images with random boxes and normal features.

    Returns the boxes of every image id (to pick referent boxes from).
    """
    from detectors.store import StoreWriter
    from rcrn.structures import Proposals

    rng = np.random.default_rng(seed)
    W, H = image_size
    writer = StoreWriter(path, float16=float16, source={"format": "random", "seed": seed},
                         overwrite=True)
    boxes_of: dict[str, np.ndarray] = {}
    try:
        for i in range(images):
            xy = rng.uniform(0, 0.8, size=(proposals, 2)) * [W, H]
            wh = rng.uniform(0.05, 0.2, size=(proposals, 2)) * [W, H]
            boxes = np.concatenate([xy, xy + wh], axis=1).astype(np.float32)
            feats = rng.standard_normal((proposals, feature_dim), dtype=np.float32)
            image_id = f"img{i:06d}"
            writer.add(Proposals(boxes, image_size, features=feats, image_id=image_id))
            boxes_of[image_id] = boxes
        writer.close()
    except BaseException:
        writer.abort()
        raise
    return boxes_of


def _store_dataset(store: Path, boxes_of: dict[str, np.ndarray], cfg: RCRNConfig, items: int,
                   nodes: int, seed: int) -> Any:
    from detectors.dataset import StoreProblemDataset

    rng = np.random.default_rng(seed + 1)
    ids = sorted(boxes_of)
    graphs, image_ids, refs, matches = [], [], [], []
    for i in range(items):
        graphs.append(random_problem(rng, nodes, 0, 1, item_id=str(i)).graph)
        image_id = ids[int(rng.integers(len(ids)))]
        image_ids.append(image_id)
        refs.append(boxes_of[image_id][int(rng.integers(len(boxes_of[image_id])))])
        matches.append(int(rng.integers(2)))
    return StoreProblemDataset.from_graphs(store, graphs, image_ids, matches=matches,
                                           referent_boxes=refs)


def _time_loader(dataset: Any, vocab: Vocab, batch: int, workers: int, batches: int,
                 seed: int) -> dict[str, Any]:
    """Per-batch seconds of read + collate through a DataLoader with ``workers``.

    An untimed first epoch starts the (persistent) workers; the second epoch is
    timed from ``iter(loader)`` to its last batch, so every batch's reading,
    collation and transfer to the main process is inside the timing.
    """
    from rcrn.engine.trainer import make_loader

    loader = make_loader(dataset, vocab, batch, shuffle=True, num_workers=workers, seed=seed)
    t = time.perf_counter()
    count = 0
    for _ in loader:  # warm-up epoch: worker start, page cache
        count += 1
    startup = time.perf_counter() - t
    t = time.perf_counter()
    count = 0
    for _ in loader:
        count += 1
    seconds = (time.perf_counter() - t) / max(1, count)
    del loader
    return {"ms_per_batch": round(1000 * seconds, 2), "batches_per_s": round(1 / seconds, 2),
            "samples_per_s": round(batch / seconds, 1), "batches_timed": count,
            "first_epoch_s": round(startup, 3)}


def _read_collate_split(dataset: Any, vocab: Vocab, batch: int, repeat: int) -> dict[str, Any]:
    """In-process read and collate times of one batch (median of ``repeat``)."""
    reads, collates = [], []
    for r in range(repeat):
        idx = [(r * batch + j) % len(dataset) for j in range(batch)]
        t = time.perf_counter()
        problems = [dataset[i] for i in idx]
        t1 = time.perf_counter()
        collate(problems, vocab)
        t2 = time.perf_counter()
        reads.append(t1 - t)
        collates.append(t2 - t1)
    return {"read_ms": round(1000 * float(np.median(reads)), 2),
            "collate_ms": round(1000 * float(np.median(collates)), 2)}


QUICK_PIPELINE = dict(dims=["synthetic"], batch=8, proposals=20, nodes=3, workers=[0, 1],
                      batches=3, min_time=0.2)


def bench_pipeline(quick: bool = False, dims: list[str] | None = None, batch: int = 64,
                   proposals: int = 100, nodes: int = 4, workers: list[int] | None = None,
                   batches: int = 8, images: int | None = None, float16: bool = True,
                   device: str = "cpu", min_time: float = 2.0, seed: int = 0,
                   tmp_dir: str | Path | None = None) -> Iterator[dict[str, Any]]:
    """Data pipeline against model step: yield pipeline, step and comparison rows.

    For every dimension set (paper: 2048-d regions; synthetic: 64-d) a temporary
    store of ``images`` images (default ``batch``) with ``proposals`` boxes each is
    written (float16 features, or float32 with ``float16=False``; read back as
    float32), ``batches * batch`` expressions of ``nodes`` entities are grounded in
    random images of it, and:

    * ``bench: pipeline`` rows: ms per batch of read + collate through a DataLoader
      with each worker count (``detectors.dataset.StoreProblemDataset``), plus the
      in-process split into read and collate for 0 workers;
    * a ``bench: step`` row: the training step (see ``bench_training``) on a batch
      of the same size collated from the store;
    * a ``bench: pipeline_vs_step`` row: step ms / pipeline ms for every worker
      count (> 1: the pipeline is faster than the step).

    The store has just been written, so its pages are in the OS cache (warm reads).
    """
    import shutil
    import tempfile

    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda requested but torch.cuda.is_available() is False")
    if quick:
        q = QUICK_PIPELINE
        dims = dims or q["dims"]
        batch, proposals, nodes = q["batch"], q["proposals"], q["nodes"]
        workers, batches = workers or q["workers"], q["batches"]
        min_time = min(min_time, q["min_time"])
    workers = [0, 1, 2] if workers is None else list(workers)
    images = images or batch
    for dim in dims or ["paper", "synthetic"]:
        if dim not in DIMS:
            raise ValueError(f"unknown dimension set {dim!r}; choose from {sorted(DIMS)}")
        cfg = DIMS[dim]
        base = Path(tempfile.mkdtemp(prefix="rcrn-pipeline-", dir=tmp_dir))
        try:
            store = base / "store"
            t = time.perf_counter()
            boxes_of = write_random_store(store, images, proposals, cfg.vis_dim, float16, seed)
            write_s = time.perf_counter() - t
            dataset = _store_dataset(store, boxes_of, cfg, batches * batch, nodes, seed)
            vocab = Vocab.build(dataset.items)  # items have .graph, as problems do
            common = {"dims": dim, "feature_dim": cfg.vis_dim,
                      "store_dtype": "float16" if float16 else "float32",
                      "batch": batch, "proposals": proposals, "nodes": nodes,
                      "images": images, "threads": torch.get_num_threads()}
            pipe: dict[int, float] = {}
            split = _read_collate_split(dataset, vocab, batch, repeat=3)
            for w in workers:
                row = {"bench": "pipeline", **common, "workers": w,
                       **_time_loader(dataset, vocab, batch, w, batches, seed)}
                if w == 0:
                    row.update(split)
                    row["store_write_s"] = round(write_s, 2)
                    row["store_mb"] = round(dataset.store.nbytes() / 2 ** 20, 1)
                pipe[w] = row["ms_per_batch"]
                yield row
            problems = [dataset[i] for i in range(batch)]
            torch.manual_seed(seed)
            model = RCRN(RCRNConfig(**cfg.to_dict()), len(vocab)).to(dev)
            step_batch = collate(problems, vocab).to(dev)
            del problems
            step = {"bench": "step", **common, "device": str(dev),
                    **measure_training_step(model, step_batch, dev, min_time=min_time,
                                            max_iters=20)}
            del model, step_batch
            yield step
            yield {"bench": "pipeline_vs_step", **common, "device": str(dev),
                   "step_ms": step["step_ms"],
                   **{f"pipeline_ms_{w}_workers": ms for w, ms in pipe.items()},
                   **{f"step_over_pipeline_{w}_workers": round(step["step_ms"] / ms, 2)
                      for w, ms in pipe.items()},
                   "pipeline_faster": {str(w): ms < step["step_ms"] for w, ms in pipe.items()}}
        finally:
            shutil.rmtree(base, ignore_errors=True)


def pipeline_markdown(rows: list[dict[str, Any]], title: str = "Data pipeline") -> str:
    """A Markdown table of ``bench_pipeline`` rows: read + collate per batch against
    the training step."""
    lines = [f"# {title}", "",
             "Read + collate of one batch from a feature store through "
             "`StoreProblemDataset` and a DataLoader (warm page cache), against one "
             "training step of the model on a batch of the same size.", ""]
    body = []
    for r in rows:
        if r.get("bench") != "pipeline_vs_step":
            continue
        ws = sorted(int(k.split("_")[2]) for k in r if k.startswith("pipeline_ms_"))
        for w in ws:
            body.append([r["dims"], f"{r['feature_dim']} ({r['store_dtype']})",
                         str(r["batch"]), str(r["proposals"]), str(r["nodes"]), str(w),
                         _fmt(r[f"pipeline_ms_{w}_workers"]), _fmt(r["step_ms"]),
                         _fmt(r[f"step_over_pipeline_{w}_workers"], 2), r["device"]])
    lines += _table(["dims", "features", "batch", "proposals", "nodes", "workers",
                     "read+collate ms/batch", "step ms", "step / pipeline", "step device"],
                    body)
    splits = [r for r in rows if r.get("bench") == "pipeline" and "read_ms" in r]
    if splits:
        lines += ["", "In-process split of one batch (0 workers, median of 3):", ""]
        lines += _table(["dims", "read ms", "collate ms", "store MB"],
                        [[r["dims"], _fmt(r["read_ms"]), _fmt(r["collate_ms"]),
                          _fmt(r.get("store_mb"))] for r in splits])
    return "\n".join(lines).rstrip() + "\n"
