"""Trace problems with a model and write JSON, PNG and HTML for every item."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import torch

from rcrn.batching import GroundingBatch, Vocab, collate
from rcrn.models.rcrn import RCRN
from rcrn.structures import GroundingProblem
from rcrn.trace.data import Trace
from rcrn.trace.recorder import record

__all__ = ["trace_problems", "write_trace", "cast_batch", "safe_name"]


def cast_batch(batch: GroundingBatch, dtype: torch.dtype) -> GroundingBatch:
    """Cast the floating-point tensors of ``batch`` to ``dtype`` in place (returns it)."""
    for f in fields(batch):
        v = getattr(batch, f.name)
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            setattr(batch, f.name, v.to(dtype))
    return batch


def safe_name(item_id: str) -> str:
    """A file name stem for an item id (letters, digits, ``-_.`` kept)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", str(item_id)).strip("._")
    return name or "item"


def trace_problems(model: RCRN, vocab: Vocab,
                   problems: GroundingProblem | Sequence[GroundingProblem],
                   batch_size: int = 32, with_images: bool | None = None) -> list[Trace]:
    """Run ``model`` once per batch of ``problems`` and return one ``Trace`` per problem.

    Args:
        model: the model (left in its training mode on return; evaluated in eval mode).
        vocab: the model's vocabulary.
        problems: one problem or several.
        batch_size: problems per forward pass.
        with_images: read pixels for a pixel region encoder (default: when the
            model has one); images come from ``meta['image_path']``.
    """
    from rcrn.engine.trainer import ProblemDataset

    items = [problems] if isinstance(problems, GroundingProblem) else list(problems)
    if with_images is None:
        with_images = model.region_encoder is not None
    param = next(model.parameters())
    was_training = model.training
    model.eval()
    traces: list[Trace] = []
    try:
        for start in range(0, len(items), batch_size):
            chunk = items[start:start + batch_size]
            loaded = ProblemDataset(chunk, with_images)
            chunk = [loaded[i] for i in range(len(chunk))]
            batch = cast_batch(collate(chunk, vocab, with_images=with_images).to(param.device),
                               param.dtype)
            with torch.no_grad(), record(model) as rec:
                model(batch)
            traces.extend(rec.traces(batch, chunk, vocab))
    finally:
        model.train(was_training)
    return traces


def write_trace(model: RCRN, vocab: Vocab,
                problems: GroundingProblem | Sequence[GroundingProblem],
                out_dir: str | Path, png: bool = True, html: bool = True,
                batch_html: bool = True) -> list[Path]:
    """Trace ``problems`` and write ``<id>.json``, ``<id>.png`` and ``<id>.html`` per item.

    With several problems and ``batch_html``, ``traces.html`` shows them all
    in one page.

    Args:
        model: the model.
        vocab: its vocabulary.
        problems: one problem or several.
        out_dir: the folder to write into (created).
        png: write the PNG pictures.
        html: write the per-item HTML pages.
        batch_html: write ``traces.html`` when there are several items.

    Returns:
        Every file written, in order.
    """
    from rcrn.trace.render_html import render_html
    from rcrn.trace.render_png import render_png

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    traces = trace_problems(model, vocab, problems)
    written: list[Path] = []
    used: dict[str, int] = {}
    for t in traces:
        stem = safe_name(t.id)
        if stem in used:
            used[stem] += 1
            stem = f"{stem}_{used[stem]}"
        else:
            used[stem] = 0
        written.append(t.save(out / f"{stem}.json"))
        if png:
            written.append(render_png(t, out / f"{stem}.png"))
        if html:
            written.append(render_html(t, out / f"{stem}.html"))
    if batch_html and len(traces) > 1:
        written.append(render_html(traces, out / "traces.html"))
    return written
