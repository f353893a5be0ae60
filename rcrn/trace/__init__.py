"""Belief-propagation traces of RCRN: record, save, draw.

Record the intermediate beliefs of the model's single forward pass and turn
them into one ``Trace`` per item::

    import rcrn.trace

    with rcrn.trace.record(model) as rec:
        out = model(batch)
    traces = rec.traces(batch, problems)
    traces[0].save("item.json")
    rcrn.trace.render_png(traces[0], "item.png")
    rcrn.trace.render_html(traces, "batch.html")

or in one call, ``rcrn.trace.write_trace(model, vocab, problems, out_dir)``
(JSON, PNG and HTML per item).  The command line is ``rcrn trace``.
"""

from rcrn.trace.data import BeliefTrace, ConfidenceTrace, EdgeInfo, RelationTrace, Trace
from rcrn.trace.recorder import TraceRecorder, record
from rcrn.trace.render_html import render_html
from rcrn.trace.render_png import render_png
from rcrn.trace.writer import trace_problems, write_trace

__all__ = ["record", "TraceRecorder", "Trace", "BeliefTrace", "ConfidenceTrace", "EdgeInfo",
           "RelationTrace", "render_png", "render_html", "trace_problems", "write_trace"]
