"""A self-contained interactive HTML page of one or several traces.

The page needs no network: the image is inlined as base64 PNG data, the
numbers as JSON and the behaviour as a small inline script.  It offers a
control to step through the propagation stages (local, bottom-up, top-down),
shows a phrase's top-K boxes when the mouse is over the phrase (in the graph
or in the table; a click pins it), and a table of the numbers.

The address may choose the item and stage to show, in its fragment or query,
both counted from 1 as the page shows them: ``page.html#stage=2`` opens the
second stage, ``page.html#item=3&stage=4`` the fourth stage of the third item
(a link to one view, and a way to screenshot a stage without a browser driver).
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rcrn.trace.data import Trace
from rcrn.trace.layout import belief_colour, box_labels, graph_layout, load_image

__all__ = ["render_html", "page_data"]


def _image_data(trace: Trace, max_side: int) -> str:
    from PIL import Image

    pixels, _ = load_image(trace, max_side=max_side)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(255 * c):02x}" for c in rgb)


# the box labels' font size, as a fraction of the picture's longer side
_LABEL_FONT = 6 / 220


def page_data(trace: Trace, top: int = 5, max_side: int = 640) -> dict[str, Any]:
    """What the page's script needs for one trace (JSON-compatible)."""
    nodes, rels = graph_layout(trace)
    W, H = trace.image_size
    font = _LABEL_FONT * max(W, H)
    stages = []
    for s in trace.stages():
        conf = next((c for c in trace.confidences if c.source == s.key), None)
        tops = [s.top(v, top) for v in range(trace.num_nodes)]
        stages.append({
            "label": s.label, "key": s.key, "kind": s.kind, "direction": s.direction,
            "branches": s.branches, "beta_names": s.beta_names, "beta": s.beta,
            "top": [[[p, v] for p, v in pairs] for pairs in tops],
            "labels": [box_labels(trace.boxes, pairs, (0, 0, W, H), font) for pairs in tops],
            "conf": None if conf is None else conf.values,
            "conf_label": None if conf is None else conf.label,
            "relations": [{"relation": r.relation, "target": r.target, "context": r.context,
                           "max": max((max(row) for row in r.scores if row), default=None),
                           "mean": (sum(sum(row) for row in r.scores)
                                    / max(1, sum(len(row) for row in r.scores)))}
                          for r in s.relations],
        })
    return {
        "id": trace.id, "text": trace.graph.get("text", ""), "size": list(trace.image_size),
        "image": _image_data(trace, max_side), "boxes": trace.boxes,
        "nodes": [{"text": e["text"], "x": nodes[i][0], "y": nodes[i][1]}
                  for i, e in enumerate(trace.graph["entities"])],
        "relations": [{"text": r["text"], "subject": r["subject"], "object": r["object"],
                       "x": rels.get(k, (0.5, 0.5))[0], "y": rels.get(k, (0.5, 0.5))[1]}
                      for k, r in enumerate(trace.graph.get("relations", []))],
        "root": trace.root, "stages": stages, "match_prob": trace.match_prob,
        "ground_index": trace.ground_index, "box": trace.box, "edge_scores": trace.edge_scores,
        "mismatch_index": trace.mismatch_index, "truth": trace.truth,
        "colours": [_hex(belief_colour(i / 20)) for i in range(21)], "label_font": font,
    }


def render_html(traces: Trace | Sequence[Trace], path: str | Path, title: str | None = None,
                top: int = 5, max_side: int = 640) -> Path:
    """Write one self-contained HTML file showing ``traces`` (one item or a batch).

    Args:
        traces: one trace or several (the page then has an item selector).
        path: the HTML file to write.
        title: page title (default: the item id, or the number of items).
        top: boxes shown per phrase and stage.
        max_side: the inlined image is shrunk to this longer side.

    Returns:
        The path written.
    """
    items = [traces] if isinstance(traces, Trace) else list(traces)
    if not items:
        raise ValueError("render_html needs at least one trace")
    data = [page_data(t, top, max_side) for t in items]
    if title is None:
        title = (f"RCRN trace: {items[0].id}" if len(items) == 1
                 else f"RCRN traces: {len(items)} items")
    payload = json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e")
    page = (_PAGE.replace("__TITLE__", html.escape(title))
            .replace("__STYLE__", _STYLE).replace("__DATA__", payload)
            .replace("__SCRIPT__", _SCRIPT))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>__TITLE__</title>
<style>__STYLE__</style>
</head>
<body>
<header>
  <h1 id="title">__TITLE__</h1>
  <div id="itembar"><label for="item">item</label> <select id="item"></select></div>
  <p id="text"></p>
  <p id="summary"></p>
</header>
<div id="controls">
  <button id="prev" type="button" title="previous stage (left arrow)">&#9664;</button>
  <input id="stage" type="range" min="0" max="0" step="1" value="0" aria-label="stage">
  <button id="next" type="button" title="next stage (right arrow)">&#9654;</button>
  <span id="stagename"></span>
  <span id="stagelist"></span>
</div>
<main>
  <section id="picture">
    <svg id="canvas" preserveAspectRatio="xMidYMid meet"></svg>
    <div id="legend"></div>
    <p class="hint">Hover a phrase (graph or table) to see its boxes; click to pin it.</p>
  </section>
  <section id="graphbox">
    <svg id="graph" viewBox="0 0 1000 640" preserveAspectRatio="xMidYMid meet"></svg>
  </section>
</main>
<section id="numbers">
  <h2>Phrases</h2>
  <table id="nodetable"></table>
  <h2>Relations</h2>
  <table id="reltable"></table>
</section>
<script type="application/json" id="trace-data">__DATA__</script>
<script>__SCRIPT__</script>
</body>
</html>
"""

_STYLE = """
body { font-family: sans-serif; margin: 12px 18px; color: #222; }
h1 { font-size: 17px; margin: 4px 0; } h2 { font-size: 14px; margin: 14px 0 4px; }
#text { font-size: 15px; margin: 4px 0; } #summary { font-size: 13px; color: #444; margin: 2px 0; }
#controls { margin: 8px 0; display: flex; align-items: center; gap: 8px; flex-wrap: wrap; }
#stage { width: 220px; } #stagename { font-weight: bold; min-width: 190px; }
#stagelist span { padding: 2px 6px; margin: 0 2px; border-radius: 3px; background: #eee;
  cursor: pointer; font-size: 12px; }
#stagelist span.on { background: #8b0026; color: white; }
main { display: flex; gap: 16px; flex-wrap: wrap; }
#picture { flex: 1 1 420px; max-width: 680px; } #graphbox { flex: 1 1 420px; max-width: 720px; }
#canvas { width: 100%; border: 1px solid #ccc; background: #f6f6f6; }
#graph { width: 100%; border: 1px solid #eee; }
.hint { font-size: 12px; color: #666; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border: 1px solid #ddd; padding: 3px 6px; vertical-align: top; }
th { background: #f3f3f3; } td.cur, th.cur { background: #fff4dc; }
tr.hl td { outline: 1px solid #8b0026; }
.ent { cursor: pointer; } .ent ellipse { fill: white; stroke: #333; stroke-width: 1.5; }
.ent.root ellipse { fill: #ffffe0; } .ent.hl ellipse { stroke: #8b0026; stroke-width: 4; }
.rel rect { fill: white; stroke: #777; } .rel.blamed rect { fill: #ffe4e1; stroke: red;
  stroke-width: 3; } .rel.lowest rect { stroke: darkorange; stroke-width: 2.5; }
.edge { stroke: #666; stroke-width: 1.5; fill: none; } .edge.blamed { stroke: red; }
.small { font-size: 11px; color: #555; }
#legend { display: flex; align-items: center; gap: 4px; font-size: 11px; margin-top: 4px; }
#legend span.sw { display: inline-block; width: 12px; height: 10px; }
"""

_SCRIPT = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("trace-data").textContent);
  var state = { item: 0, stage: 0, hover: null, pinned: null };
  function $(id) { return document.getElementById(id); }
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;");
  }
  function fmt(x, d) { return (x === null || x === undefined) ? "-" : Number(x).toFixed(d); }
  function colour(t, v) {
    var i = Math.max(0, Math.min(t.colours.length - 1, Math.round(v * (t.colours.length - 1))));
    return t.colours[i];
  }
  function cur() { return DATA[state.item]; }
  function focus() {
    if (state.hover !== null) return state.hover;
    if (state.pinned !== null) return state.pinned;
    return cur().root;
  }

  function drawCanvas() {
    var t = cur(), st = t.stages[state.stage], W = t.size[0], H = t.size[1], v = focus();
    var lw = Math.max(W, H) / 220, out = [];
    out.push('<image href="' + t.image + '" x="0" y="0" width="' + W + '" height="' + H +
             '" preserveAspectRatio="none"></image>');
    if (st) {
      var top = st.top[v], labels = st.labels[v], f = t.label_font;
      top.slice().reverse().forEach(function (pv, r) {
        var b = t.boxes[pv[0]], rank = top.length - 1 - r, c = colour(t, pv[1]);
        out.push('<rect class="box" data-proposal="' + pv[0] + '" x="' + b[0] + '" y="' + b[1] +
                 '" width="' + (b[2] - b[0]) + '" height="' + (b[3] - b[1]) +
                 '" fill="' + c + '" fill-opacity="0.12" stroke="' + c + '" stroke-width="' +
                 (rank === 0 ? 2.6 * lw : 1.4 * lw) + '"><title>proposal ' + pv[0] +
                 ': belief ' + fmt(pv[1], 3) + '</title></rect>');
      });
      labels.forEach(function (q, rank) {
        out.push('<g class="boxlabel" data-proposal="' + q.proposal + '"><rect x="' + q.x +
                 '" y="' + q.y + '" width="' + q.w + '" height="' + q.h + '" fill="white" ' +
                 'fill-opacity="0.92" stroke="' + colour(t, top[rank][1]) + '" stroke-width="' +
                 (0.5 * lw) + '"></rect><text x="' + (q.x + 0.1 * f) + '" y="' +
                 (q.y + 1.0 * f) + '" font-size="' + f + '" font-family="monospace" ' +
                 'fill="#111">' + esc(q.text) + '</text></g>');
      });
      if (v === t.root && st.kind === "propagate" && st.branches.indexOf("ground") >= 0) {
        var ref = t.truth.referent_box;
        if (ref) out.push('<rect x="' + ref[0] + '" y="' + ref[1] + '" width="' +
          (ref[2] - ref[0]) + '" height="' + (ref[3] - ref[1]) +
          '" fill="none" stroke="limegreen" stroke-dasharray="' + (4 * lw) + '" stroke-width="' +
          (1.5 * lw) + '"><title>referent (label)</title></rect>');
        if (t.box) out.push('<rect x="' + t.box[0] + '" y="' + t.box[1] + '" width="' +
          (t.box[2] - t.box[0]) + '" height="' + (t.box[3] - t.box[1]) +
          '" fill="none" stroke="deepskyblue" stroke-dasharray="' + (2 * lw) +
          '" stroke-width="' + (1.5 * lw) + '"><title>predicted box</title></rect>');
      }
    }
    var svg = $("canvas");
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.innerHTML = out.join("");
  }

  function drawGraph() {
    var t = cur(), st = t.stages[state.stage], v = focus(), out = [];
    var X = function (x) { return 40 + x * 920; }, Y = function (y) { return 20 + (1 - y) * 600; };
    var predictedMismatch = t.match_prob !== null && t.match_prob < 0.5;
    t.relations.forEach(function (r, k) {
      var s = t.nodes[r.subject], o = t.nodes[r.object];
      var cls = k === t.mismatch_index ? (predictedMismatch ? " blamed" : "") : "";
      out.push('<path class="edge' + cls + '" d="M' + X(s.x) + ' ' + Y(s.y) + ' L' + X(r.x) +
               ' ' + Y(r.y) + ' L' + X(o.x) + ' ' + Y(o.y) + '"></path>');
    });
    t.relations.forEach(function (r, k) {
      var hot = k === t.mismatch_index;
      var cls = hot ? (predictedMismatch ? " blamed" : " lowest") : "";
      var d = t.edge_scores ? t.edge_scores[k] : null, x = X(r.x), y = Y(r.y);
      var rel = st ? st.relations.filter(function (q) { return q.relation === k; })[0] : null;
      out.push('<g class="rel' + cls + '"><rect x="' + (x - 85) + '" y="' + (y - 24) +
               '" width="170" height="48"></rect><text x="' + x + '" y="' + (y - 6) +
               '" text-anchor="middle" font-size="15">' + esc(r.text) + '</text>' +
               '<text x="' + x + '" y="' + (y + 14) + '" text-anchor="middle" font-size="13">' +
               'd=' + fmt(d, 3) + (rel ? '  maxA=' + fmt(rel.max, 2) : '') +
               (hot ? (predictedMismatch ? ' blamed' : ' lowest') : '') + '</text></g>');
    });
    t.nodes.forEach(function (n, i) {
      var cls = "ent" + (i === t.root ? " root" : "") + (i === v ? " hl" : "");
      var x = X(n.x), y = Y(n.y), conf = st && st.conf ? st.conf[i] : null;
      var beta = st && st.beta[i] ? st.beta[i].map(function (b, j) {
        return "\u03b2" + (st.beta_names[j] === "rel" ? "" : "_" + st.beta_names[j]) + "=" +
          fmt(b, 2); }).join(" ") : "";
      out.push('<g class="' + cls + '" data-node="' + i + '"><ellipse cx="' + x + '" cy="' + y +
               '" rx="105" ry="38"></ellipse><text x="' + x + '" y="' + (y - 10) +
               '" text-anchor="middle" font-size="16">' + esc(n.text) + '</text>' +
               '<text x="' + x + '" y="' + (y + 8) + '" text-anchor="middle" font-size="12">' +
               (conf !== null ? esc(st.conf_label.split(" ")[0]) + "=" + fmt(conf, 3) : "") +
               '</text><text x="' + x + '" y="' + (y + 24) +
               '" text-anchor="middle" font-size="12">' + beta + '</text></g>');
    });
    $("graph").innerHTML = out.join("");
    Array.prototype.forEach.call(document.querySelectorAll("#graph .ent"), function (g) {
      bindHover(g, Number(g.getAttribute("data-node")));
    });
  }

  function drawTables() {
    var t = cur(), rows = [], head = "<tr><th>phrase</th>";
    t.stages.forEach(function (s, j) {
      head += '<th class="' + (j === state.stage ? "cur" : "") + '">' + esc(s.label) +
        '<br><span class="small">top-' + (s.top[0] ? s.top[0].length : 0) +
        ' proposal:belief, \u03b2</span></th>';
    });
    t.stages.forEach(function (s) {
      if (s.conf) head += "<th>" + esc(s.conf_label) + "</th>";
    });
    rows.push(head + "</tr>");
    t.nodes.forEach(function (n, i) {
      var r = '<tr data-node="' + i + '" class="' + (i === focus() ? "hl" : "") + '"><td>' +
        esc(n.text) + (i === t.root ? " <b>(referent)</b>" : "") + "</td>";
      t.stages.forEach(function (s, j) {
        var cells = s.top[i].map(function (pv) { return pv[0] + ":" + fmt(pv[1], 3); });
        var beta = s.beta[i] ? s.beta[i].map(function (b, q) {
          return s.beta_names[q] + "=" + fmt(b, 3); }).join(" ") : "";
        r += '<td class="' + (j === state.stage ? "cur" : "") + '">' + cells.join(" ") +
          (beta ? '<br><span class="small">\u03b2 ' + beta + "</span>" : "") + "</td>";
      });
      t.stages.forEach(function (s) { if (s.conf) r += "<td>" + fmt(s.conf[i], 4) + "</td>"; });
      rows.push(r + "</tr>");
    });
    $("nodetable").innerHTML = rows.join("");
    Array.prototype.forEach.call(document.querySelectorAll("#nodetable tr[data-node]"),
      function (tr) { bindHover(tr, Number(tr.getAttribute("data-node"))); });
    var rel = ["<tr><th>relation</th><th>subject</th><th>object</th><th>d (Compare)</th>"];
    t.stages.forEach(function (s) {
      if (s.kind === "propagate") rel[0] += "<th>" + esc(s.label) + "<br><span class=\"small\">" +
        "max / mean A</span></th>";
    });
    rel[0] += "</tr>";
    t.relations.forEach(function (r, k) {
      var row = "<tr><td>" + esc(r.text) + (k === t.mismatch_index ? " <b>(blamed)</b>" : "") +
        "</td><td>" + esc(t.nodes[r.subject].text) + "</td><td>" + esc(t.nodes[r.object].text) +
        "</td><td>" + fmt(t.edge_scores ? t.edge_scores[k] : null, 4) + "</td>";
      t.stages.forEach(function (s) {
        if (s.kind !== "propagate") return;
        var q = s.relations.filter(function (x) { return x.relation === k; })[0];
        row += "<td>" + (q ? fmt(q.max, 3) + " / " + fmt(q.mean, 3) : "-") + "</td>";
      });
      rel.push(row + "</tr>");
    });
    $("reltable").innerHTML = rel.join("");
  }

  function bindHover(el, node) {
    el.addEventListener("mouseenter", function () { state.hover = node; redraw(); });
    el.addEventListener("mouseleave", function () { state.hover = null; redraw(); });
    el.addEventListener("click", function () {
      state.pinned = state.pinned === node ? null : node; redraw();
    });
  }

  function drawHeader() {
    var t = cur(), st = t.stages[state.stage];
    $("text").textContent = t.text;
    var parts = [];
    if (t.match_prob !== null) parts.push("P(match) = " + fmt(t.match_prob, 4));
    if (t.truth.match !== undefined) parts.push("label " + t.truth.match);
    if (t.ground_index >= 0) parts.push("grounded to proposal " + t.ground_index);
    if (t.mismatch_index >= 0) parts.push("blamed relation: \u201c" +
      t.relations[t.mismatch_index].text + "\u201d");
    $("summary").textContent = parts.join(" \u00b7 ");
    $("stage").max = Math.max(0, t.stages.length - 1);
    $("stage").value = state.stage;
    $("stagename").textContent = st ? (state.stage + 1) + "/" + t.stages.length + ": " +
      st.label + " \u2014 " + t.nodes[focus()].text : "no stages";
    $("stagelist").innerHTML = t.stages.map(function (s, j) {
      return '<span data-stage="' + j + '" class="' + (j === state.stage ? "on" : "") + '">' +
        esc(s.label) + "</span>";
    }).join("");
    Array.prototype.forEach.call(document.querySelectorAll("#stagelist span"), function (s) {
      s.addEventListener("click", function () { setStage(Number(s.getAttribute("data-stage"))); });
    });
    $("legend").innerHTML = "belief 0 " + cur().colours.map(function (c) {
      return '<span class="sw" style="background:' + c + '"></span>'; }).join("") + " 1";
  }

  function redraw() { drawHeader(); drawCanvas(); drawGraph(); drawTables(); }
  function setStage(j) {
    var n = cur().stages.length;
    state.stage = Math.max(0, Math.min(n - 1, j));
    redraw();
  }

  $("stage").addEventListener("input", function () { setStage(Number($("stage").value)); });
  $("prev").addEventListener("click", function () { setStage(state.stage - 1); });
  $("next").addEventListener("click", function () { setStage(state.stage + 1); });
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowLeft") setStage(state.stage - 1);
    if (e.key === "ArrowRight") setStage(state.stage + 1);
  });
  var sel = $("item");
  sel.innerHTML = DATA.map(function (t, i) {
    return '<option value="' + i + '">' + esc(t.id) + " \u2014 " + esc(t.text) + "</option>";
  }).join("");
  sel.addEventListener("change", function () {
    state.item = Number(sel.value); state.pinned = null; state.hover = null;
    setStage(Math.min(state.stage, cur().stages.length - 1));
  });
  if (DATA.length < 2) $("itembar").style.display = "none";

  // "#stage=2", "?stage=2" or "#item=3&stage=4": the view to open, counted from 1
  function fromAddress() {
    if (typeof location === "undefined") return;
    var want = {};
    [location.search, location.hash].forEach(function (part) {
      String(part || "").replace(/^[?#]/, "").split("&").forEach(function (kv) {
        var m = /^(item|stage)=(\d+)$/.exec(kv);
        if (m) want[m[1]] = Number(m[2]) - 1;
      });
    });
    if (want.item !== undefined) {
      state.item = Math.max(0, Math.min(DATA.length - 1, want.item));
      state.pinned = null; state.hover = null;
      sel.value = String(state.item);
    }
    setStage(want.stage !== undefined ? want.stage : state.stage);
  }
  if (typeof window !== "undefined" && window.addEventListener) {
    window.addEventListener("hashchange", fromAddress);
  }
  redraw();
  fromAddress();
})();
"""
