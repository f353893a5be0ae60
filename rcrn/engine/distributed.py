"""Multi-process training under ``torchrun`` and the Trainer's precision / compile options.

``torchrun --nproc_per_node N -m rcrn train ...`` starts N processes with ``WORLD_SIZE``,
``RANK`` and ``LOCAL_RANK`` set; :func:`init` turns that into a process group (gloo on
CPU, NCCL on CUDA) and gives each process its device.  ``train.batch_size`` stays the
*global* batch: every process builds the same list of batches from the same seed and
takes its slice of each one (:func:`shard`), and :func:`global_batch_loss` rescales the
loss so that DistributedDataParallel's gradient average equals the gradient of the
loss of the whole global batch (see its docstring).

Without ``WORLD_SIZE`` > 1 nothing here changes a single-process run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from rcrn.engine.config import ConfigError

__all__ = ["DistInfo", "env_world", "init", "teardown", "is_initialized", "rank", "world_size",
           "is_main", "barrier", "main_first", "shard", "shard_batches", "ShardedBatches",
           "global_batch_loss", "all_reduce_sum", "sum_over_ranks",
           "wrap_model", "TrainStep", "apply_gradients", "training_step", "amp_dtype",
           "autocast", "keep_rnns_in_float32", "cast_output", "compile_backend"]


# ------------------------------------------------------------------ process group
@dataclass(frozen=True)
class DistInfo:
    """Where this process stands: ``rank`` of ``world_size``, its ``device``."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def env_world() -> tuple[int, int, int]:
    """``(rank, world_size, local_rank)`` from the torchrun variables (``(0, 1, 0)`` without)."""
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    rnk = int(os.environ.get("RANK", "0") or 0)
    local = int(os.environ.get("LOCAL_RANK", str(rnk)) or 0)
    return rnk, world, local


def _resolve(device: str | torch.device) -> torch.device:
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def init(device: str | torch.device = "cpu", backend: str | None = None) -> DistInfo:
    """Join the torchrun process group when ``WORLD_SIZE`` > 1 (idempotent).

    Args:
        device: the configured device (``cpu``, ``cuda``, ``auto``...); under torchrun
            a CUDA device becomes ``cuda:LOCAL_RANK``.
        backend: process-group backend; default ``nccl`` for CUDA, ``gloo`` otherwise.

    Returns:
        This process's :class:`DistInfo`; ``world_size`` 1 (and no process group)
        outside torchrun or with a single process.
    """
    dev = _resolve(device)
    rnk, world, local = env_world()
    if world <= 1 and not is_initialized():
        return DistInfo(device=dev)
    if dev.type == "cuda":
        dev = torch.device("cuda", local)
        torch.cuda.set_device(dev)
    if not is_initialized():
        name = backend or ("nccl" if dev.type == "cuda" else "gloo")
        dist.init_process_group(backend=name, rank=rnk, world_size=world)
    return DistInfo(dist.get_rank(), dist.get_world_size(), local, dev)


def teardown() -> None:
    """Leave the process group (no-op when there is none)."""
    if is_initialized():
        dist.destroy_process_group()


def is_initialized() -> bool:
    return dist.is_available() and dist.is_initialized()


def rank() -> int:
    return dist.get_rank() if is_initialized() else 0


def world_size() -> int:
    return dist.get_world_size() if is_initialized() else 1


def is_main() -> bool:
    """True on rank 0 (and in a single process)."""
    return rank() == 0


def barrier() -> None:
    if is_initialized() and world_size() > 1:
        dist.barrier()


@contextlib.contextmanager
def main_first() -> Iterator[None]:
    """Run the block on rank 0 first, then on the others (e.g. generating a dataset once)."""
    if not is_main():
        barrier()
    try:
        yield
    finally:
        if is_main():
            barrier()


# ------------------------------------------------------------------ sharding
def shard(items: Sequence[Any], rank: int, world_size: int) -> list[Any]:
    """The ``rank``-th of ``world_size`` contiguous, nearly equal slices of ``items``.

    The first ``len(items) % world_size`` ranks get one item more; concatenating the
    slices in rank order gives ``items`` back.
    """
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is not in [0, {world_size})")
    base, extra = divmod(len(items), world_size)
    start = rank * base + min(rank, extra)
    return list(items[start:start + base + (rank < extra)])


def shard_batches(batches: Sequence[Sequence[int]], rank: int, world_size: int
                  ) -> list[list[int]]:
    """Every global batch's slice for ``rank``.

    A batch with fewer items than ``world_size`` (only the last batch of an epoch
    can be that small) is dropped on every rank: each process needs at least one
    item per step.
    """
    return [shard(b, rank, world_size) for b in batches if len(b) >= world_size]


class ShardedBatches:
    """A batch sampler giving this rank's slice of every batch of ``batches``.

    ``batches`` is any iterable of index lists (a ``BatchSampler`` or a list); it is
    re-iterated on every epoch, so a seeded sampler gives the same global batches on
    every rank.
    """

    def __init__(self, batches: Any, rank: int, world_size: int) -> None:
        self.batches, self.rank, self.world_size = batches, rank, world_size

    def __iter__(self) -> Iterator[list[int]]:
        for b in self.batches:
            if len(b) >= self.world_size:
                yield shard(b, self.rank, self.world_size)

    def __len__(self) -> int:
        if isinstance(self.batches, Sequence):
            return sum(1 for b in self.batches if len(b) >= self.world_size)
        # a BatchSampler (drop_last=False): only its last batch can be short; counting
        # without iterating leaves a seeded sampler's generator untouched
        n, size = len(self.batches.sampler), self.batches.batch_size
        short = 0 < n % size < self.world_size and not self.batches.drop_last
        return len(self.batches) - int(short)


# ------------------------------------------------------------------ the loss
def all_reduce_sum(values: torch.Tensor) -> torch.Tensor:
    """The sum of ``values`` over the ranks (``values`` itself in a single process).

    ``values`` must be on the device of the backend (CUDA for NCCL).
    """
    if world_size() == 1:
        return values
    values = values.clone()
    dist.all_reduce(values, op=dist.ReduceOp.SUM)
    return values


def global_batch_loss(terms: dict[str, tuple[torch.Tensor, torch.Tensor]],
                      weights: dict[str, float]
                      ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The loss to back-propagate on this rank, and this rank's share of each logged term.

    Every term comes as ``(sum, count)`` over this rank's items (``rcrn.losses.loss_terms``);
    the global batch's term is ``sum_r S_r / C`` with ``C`` the count summed over the ranks
    (all-reduced), and the loss ``sum_t weight_t * term_t``.  DDP averages gradients over
    the ``W`` ranks, so each rank back-propagates ``W * sum_t weight_t * S_r / C``: the
    average of these gradients is exactly the gradient of the global batch's loss,
    however the items are split between the ranks.

    Args:
        terms: ``{term: (sum, count)}`` of this rank's slice.
        weights: the weight of every term (``LossConfig.weights()``).

    Returns:
        ``(loss to backward, shares)``: ``shares[k]`` (detached) summed over the ranks is
        the global batch's value of term ``k`` and of ``loss``.  In a single process the
        shares are the terms' means and the loss their weighted sum.
    """
    names = list(terms)
    counts = torch.stack([terms[k][1].detach() for k in names]).double()
    total = all_reduce_sum(counts).clamp(min=1)
    shares = {k: terms[k][0] / total[i].to(terms[k][0].dtype) for i, k in enumerate(names)}
    loss = sum(weights[k] * shares[k] for k in names)
    return loss * world_size(), {"loss": loss.detach(),
                                 **{k: v.detach() for k, v in shares.items()}}


def sum_over_ranks(values: dict[str, float]) -> dict[str, float]:
    """Each value summed over the ranks (unchanged in a single process); every rank
    must call it at the same point."""
    if world_size() == 1 or not values:
        return values
    keys = sorted(values)
    device = torch.device("cuda", torch.cuda.current_device()) \
        if dist.get_backend() == "nccl" else torch.device("cpu")
    total = all_reduce_sum(torch.tensor([values[k] for k in keys], dtype=torch.float64,
                                        device=device))
    summed = dict(zip(keys, total.tolist()))
    return {k: float(summed[k]) for k in values}


def wrap_model(model: nn.Module, info: DistInfo, find_unused_parameters: bool = True
               ) -> nn.Module:
    """``model`` in DistributedDataParallel when distributed, else ``model`` itself.

    ``find_unused_parameters`` defaults to True: a rank whose slice has no regressed or
    no positive item leaves some parameters out of its loss for that step (wrap a
    :class:`TrainStep`, whose output is the loss, so that DDP sees this).
    """
    if not info.distributed:
        return model
    from torch.nn.parallel import DistributedDataParallel

    ids = [info.device.index] if info.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=ids,
                                   find_unused_parameters=find_unused_parameters)


class TrainStep(nn.Module):
    """A model and its loss in one forward: ``batch -> (loss to backward, logged terms)``.

    This is what DDP wraps and ``torch.compile`` compiles.  DDP finds the parameters a
    step used by walking back from the forward's outputs; returning the loss rather
    than the model output keeps it from waiting for the gradients of parameters that
    fed an output the loss did not use on this rank (e.g. the box regression when no
    item of the rank's slice is regressed).

    Args:
        model: the model (its parameters are the step's).
        loss_fn: ``(model output, batch) -> {term: (sum, count)}``
            (``rcrn.losses.loss_terms``).
        loss_cfg: the ``LossConfig`` (its ``weights()``, read at every step, weigh the
            terms in :func:`global_batch_loss`).
        amp: autocast dtype of the forward, or None; the loss then runs in the
            parameters' precision on outputs cast back to it.
    """

    def __init__(self, model: nn.Module, loss_fn: Callable[[Any, Any], dict[str, torch.Tensor]],
                 loss_cfg: Any, amp: torch.dtype | None = None) -> None:
        super().__init__()
        self.model = model
        self.loss_fn, self.loss_cfg, self.amp = loss_fn, loss_cfg, amp
        if amp is not None:
            keep_rnns_in_float32(model)

    def forward(self, batch: Any) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        param = next(self.model.parameters())
        with autocast(param.device, self.amp):
            out = self.model(batch)
        if self.amp is not None:
            out = cast_output(out, param.dtype)
        return global_batch_loss(self.loss_fn(out, batch), self.loss_cfg.weights())


def apply_gradients(model: nn.Module, optimizer: torch.optim.Optimizer, loss: torch.Tensor,
                    clip: float, lr: float | None = None) -> None:
    """The update half of a training step: back-propagate ``loss`` (of a
    :class:`TrainStep`), clip the gradient norm of ``model`` at ``clip``, set every
    parameter group's learning rate to ``lr`` times its ``scale`` (when ``lr`` is given),
    and take the optimizer's step."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    if lr is not None:
        for group in optimizer.param_groups:
            group["lr"] = lr * group.get("scale", 1.0)
    optimizer.step()


def training_step(model: nn.Module, loss_fn: Callable[[Any, Any], dict[str, torch.Tensor]],
                  loss_cfg: Any, info: DistInfo, train: Mapping[str, Any]) -> nn.Module:
    """The Trainer's :class:`TrainStep` with the ``train`` options applied.

    ``train`` is the filled section (``rcrn.engine.schema.section``): ``train.amp``
    (autocast dtype), DDP when distributed (``train.find_unused_parameters``), then
    ``torch.compile`` when ``train.compile`` is set.  ``model`` itself stays unwrapped
    (checkpoints, evaluation).
    """
    step: nn.Module = TrainStep(model, loss_fn, loss_cfg, amp_dtype(train["amp"]))
    step = wrap_model(step, info, bool(train["find_unused_parameters"]))
    backend = compile_backend(train["compile"])
    if backend:
        step = torch.compile(step, backend=backend)
    return step


# ------------------------------------------------------------------ precision, compile
_AMP = {"bf16": torch.bfloat16, "bfloat16": torch.bfloat16}


def amp_dtype(value: Any) -> torch.dtype | None:
    """``train.amp``: off (None, false, "off", "none") or ``bf16``."""
    if value in (None, False, "", "off", "none", "false", "fp32", "float32"):
        return None
    if str(value).lower() in _AMP:
        return _AMP[str(value).lower()]
    raise ConfigError(f"train.amp must be off or bf16, got {value!r} (float16 would need "
                     "loss scaling, which the trainer does not do)")


def autocast(device: torch.device, dtype: torch.dtype | None) -> contextlib.AbstractContextManager:
    """``torch.autocast`` on ``device`` with ``dtype``, or nothing when ``dtype`` is None."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def keep_rnns_in_float32(model: nn.Module) -> None:
    """Run every recurrent layer of ``model`` with autocast off (idempotent).

    oneDNN has no bfloat16 LSTM for packed sequences on many CPUs, and the recurrent
    state is where low precision hurts most; the layers' inputs are already float32
    (embeddings are not autocast), so they simply run in full precision.
    """
    for module in model.modules():
        if isinstance(module, nn.RNNBase) and not getattr(module, "_rcrn_fp32", False):
            module.register_forward_pre_hook(_autocast_off)
            module.register_forward_hook(_autocast_restore)
            module._rcrn_fp32 = True


_AUTOCAST_STACK: list[tuple[bool, bool]] = []


def _autocast_enabled(device_type: str) -> bool:
    try:
        return torch.is_autocast_enabled(device_type)
    except TypeError:  # torch < 2.4
        return (torch.is_autocast_cpu_enabled() if device_type == "cpu"
                else torch.is_autocast_enabled())


def _set_autocast(device_type: str, enabled: bool) -> None:
    try:
        torch.set_autocast_enabled(device_type, enabled)
    except TypeError:  # torch < 2.4
        if device_type == "cpu":
            torch.set_autocast_cpu_enabled(enabled)
        else:
            torch.set_autocast_enabled(enabled)


def _autocast_off(module: nn.Module, args: Any) -> None:
    _AUTOCAST_STACK.append((_autocast_enabled("cpu"), _autocast_enabled("cuda")))
    _set_autocast("cpu", False)
    _set_autocast("cuda", False)


def _autocast_restore(module: nn.Module, args: Any, output: Any) -> None:
    cpu, cuda = _AUTOCAST_STACK.pop()
    _set_autocast("cpu", cpu)
    _set_autocast("cuda", cuda)


def cast_output(out: Any, dtype: torch.dtype) -> Any:
    """A copy of a ``ModelOutput`` whose floating tensors are ``dtype`` (the loss runs in
    full precision after an autocast forward; BCE is not autocast-safe on CUDA)."""
    changes = {}
    for f in dataclasses.fields(out):
        v = getattr(out, f.name)
        if isinstance(v, torch.Tensor) and v.is_floating_point() and v.dtype != dtype:
            changes[f.name] = v.to(dtype)
    return dataclasses.replace(out, **changes) if changes else out


def compile_backend(value: Any) -> str | None:
    """``train.compile``: false/None (off), true (``inductor``) or a backend name."""
    if value in (None, False, "", "off", "false", "none"):
        return None
    if value is True or str(value).lower() == "true":
        return "inductor"
    return str(value)
