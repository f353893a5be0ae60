"""An independent per-tree, per-node reference implementation of RCRN, and test data.

:func:`reference_forward` is the oracle of the batched model
(``tests/rcrn/models/test_propagation.py``) and the baseline ``rcrn bench propagation``
measures it against.  It shares no code with the model: it reads every parameter by
name from ``model.state_dict()`` and computes every primitive from its equation (the
docstrings of ``rcrn.models.rcrn``, ``rcrn.nn`` and ``rcrn.encoders`` state them), one
problem at a time, walking each tree with plain Python loops over nodes and edges
(tensors run over one node's boxes only).  In particular it writes out

* the word embedding look-up, the BiLSTM step equations (gates ``i, f, g, o`` from
  ``weight_ih / weight_hh / bias_ih / bias_hh``) and both phrase attentions
  (``"projected"``: scores and pooled features from ``[w_t, h_t]``, then a Linear;
  ``"release"``: scores from ``h_t``, attended word vectors);
* Entity Sim of both layer families (``"plain"``: Linear-ReLU-Linear transforms;
  ``"release"``: NormalizeScale, the location branch's Linear, BatchNorm MLPs in
  evaluation form, the vector similarity's ``l2norm``);
* Relation Sim in its per-pair form: every (subject, object) pair's features are
  concatenated and go through ``W_e`` (and, with the release's layers,
  NormalizeScale, ``W_f``), with the pair geometry ``s`` (and ``relation_diff``); the
  model's per-box fusion is therefore checked too;
* the location feature (``boxes="inclusive"``: sizes ``x2 - x1 + 1`` pixels), GateSum
  with its signed F_norm (and the release's padding: the divisor is at least
  ``sum β`` while an image has fewer boxes than ``release_slots``; ``belief_floor``),
  the β gates of every mode, Select, Aggregate (``eps``; ``message_reduce``;
  ``message_norm="max"``: the values a sender sends over the largest of them; context
  boxes by the sender's ``"local"`` or ``"propagated"`` belief, values propagated),
  GateProd, Classify (``classify_log``; the release's BatchNorm readout and learned
  pad value; the ``1e-6`` floor of the nodes a propagation updated when
  ``release_slots > 0``), And, Compare, Locate, and both box-regression
  heads with the delta decoding (``rcrn.boxes``' Faster R-CNN form).

It evaluates any program of ``rcrn.programs`` (the gate names come from the program)
by walking its expression tree per problem; Compare scores a confidence of a top-down
pass child - parent.  The model is taken in evaluation form: Dropout is the identity
and BatchNorm uses its running statistics (the toolkit's layers have neither by
default, so the benchmark's training-mode models give the same result).  The outputs
are differentiable in the parameters (``state_dict(keep_vars=True)``).  Not covered:
vision-language layers (``vl``) and pixel region encoders.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from rcrn import programs as P
from rcrn.batching import Vocab
from rcrn.structures import GroundingProblem

__all__ = ["reference_forward", "random_problem", "learnable_problems"]

#: BatchNorm's epsilon (PyTorch's default, which every BatchNorm1d of the model keeps)
_BN_EPS = 1e-5
#: largest scaled log-size delta of the box decoding (``rcrn.boxes.DELTA_CLAMP``)
_DELTA_CLAMP = math.log(1000.0 / 16)
#: the floor Classify reads an updated node's beliefs with under ``release_slots``
_CLASSIFY_FLOOR = 1e-6


def reference_forward(model: torch.nn.Module, problems: Sequence[GroundingProblem],
                      vocab: Vocab) -> list[dict[str, Any]]:
    """Run ``model``'s parameters on each problem alone, with plain loops.

    Returns, per problem, a dict with

    * ``match_prob`` (a 0-d tensor, ``None`` without a match readout) and
      ``match_logit`` (with ``confidences="logits"``, else ``None``);
    * ``ground_belief`` ``[n]`` (the root's belief of the ground readout, by proposal),
      ``ground_index`` (-1 without proposals), ``box`` ``[4]`` pixels and ``deltas``
      ``[4]`` (``None`` without proposals; zero deltas without regression);
    * ``edge_scores`` ``[num_relations]`` by relation index and ``mismatch_index``
      (-1 without relations; both ``None`` without a mismatch readout);
    * ``values``: every evaluated sub-expression by its text
      (``rcrn.programs.to_text``): a belief is ``{"slots": [per node list of
      proposal indices], "values": [per node tensor], "updated": [per node bool]}``,
      a confidence a ``[num_entities]`` tensor (logits with ``confidences="logits"``),
      an And a 0-d tensor, a Compare a ``[num_relations]`` tensor;
    * for the RCRN program family: ``local`` (per node ``[n]``), ``ground_up`` (per
      node beliefs of the ground readout), ``match_up`` / ``match_down`` (per node
      beliefs of the propagations of those names, ``[]`` when absent),
      ``match_slots`` (per node proposal indices of the first ``select``), ``p_up`` /
      ``p_down`` (per node probabilities of the readout's first / second Classify;
      ``p_down`` is ``p_up`` with a single one).
    """
    cfg = model.config
    if getattr(cfg, "vl", None) and cfg.vl_settings() is not None:
        raise NotImplementedError("reference_forward does not cover vision-language layers")
    if getattr(cfg, "front", "words") != "words":
        raise NotImplementedError("reference_forward does not cover the UNITER front end "
                                  "(tests/rcrn/models/test_uniter.py checks it against "
                                  "BERT's own code)")
    if getattr(model, "region_encoder", None) is not None:
        raise NotImplementedError("reference_forward reads the problems' region features; "
                                  "it does not cover pixel region encoders")
    oracle = _Oracle(model.state_dict(keep_vars=True), cfg)
    return [oracle.run(p, vocab) for p in problems]


# ------------------------------------------------------------------------- helpers
def _unit(x: torch.Tensor) -> torch.Tensor:
    """``x / max(||x||, 1e-12)`` over the last axis."""
    return x / x.norm(dim=-1, keepdim=True).clamp(min=1e-12)


def _l2norm(x: torch.Tensor) -> torch.Tensor:
    """``x / (sqrt(sum x^2 + 1e-8) + 1e-8)`` (SGRAF's ``l2norm``)."""
    return x / (((x * x).sum(-1, keepdim=True) + 1e-8).sqrt() + 1e-8)


def _order(values: torch.Tensor) -> list[int]:
    """Positions of ``values`` from the largest to the smallest."""
    vals = values.tolist()
    return sorted(range(len(vals)), key=lambda j: -vals[j])


def _first_max(values: torch.Tensor) -> int:
    vals = values.tolist()
    best = 0
    for j, v in enumerate(vals):
        if v > vals[best]:
            best = j
    return best


def _first_min(values: torch.Tensor) -> int:
    vals = values.tolist()
    best = 0
    for j, v in enumerate(vals):
        if v < vals[best]:
            best = j
    return best


@dataclass
class _Belief:
    """Per node: the proposal indices of its valid slots, their values, and whether a
    propagation updated it."""

    slots: list[list[int]]
    values: list[torch.Tensor]
    updated: list[bool]


class _Oracle:
    def __init__(self, sd: Mapping[str, torch.Tensor], cfg: Any) -> None:
        self.sd, self.cfg = sd, cfg
        self.program = P.resolve(cfg.program, cfg.k)
        self.release = cfg.layers == "release"
        emb = sd["words.embedding.weight"]
        self.dtype, self.device = emb.dtype, emb.device

    # ------------------------------------------------------------ layers by name
    def p(self, name: str) -> torch.Tensor:
        return self.sd[name]

    def linear(self, name: str, x: torch.Tensor) -> torch.Tensor:
        return x @ self.p(f"{name}.weight").t() + self.p(f"{name}.bias")

    def mlp(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """Linear -> ReLU -> Linear (``fc1``, ``fc2``)."""
        return self.linear(f"{name}.fc2", torch.relu(self.linear(f"{name}.fc1", x)))

    def batch_norm(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """BatchNorm in evaluation form, from the running statistics."""
        mean, var = self.p(f"{name}.running_mean"), self.p(f"{name}.running_var")
        return ((x - mean) / torch.sqrt(var + _BN_EPS) * self.p(f"{name}.weight")
                + self.p(f"{name}.bias"))

    def bn_mlp(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """Linear -> BatchNorm -> ReLU -> (Dropout) -> Linear -> BatchNorm."""
        h = torch.relu(self.batch_norm(f"{name}.bn1", self.linear(f"{name}.fc1", x)))
        return self.batch_norm(f"{name}.bn2", self.linear(f"{name}.fc2", h))

    def transform(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """The feature transformation of the configured layers."""
        return self.bn_mlp(name, x) if self.release else self.mlp(name, x)

    def normalize_scale(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """``w ⊙ x / ||x||``."""
        return _unit(x) * self.p(f"{name}.weight")[0]

    # --------------------------------------------------------------------- text
    def lstm_direction(self, x: list[torch.Tensor], suffix: str, reverse: bool
                       ) -> list[torch.Tensor]:
        w_ih, w_hh = self.p(f"phrases.lstm.weight_ih_l0{suffix}"), \
            self.p(f"phrases.lstm.weight_hh_l0{suffix}")
        b_ih, b_hh = self.p(f"phrases.lstm.bias_ih_l0{suffix}"), \
            self.p(f"phrases.lstm.bias_hh_l0{suffix}")
        hidden = w_hh.shape[1]
        h = x[0].new_zeros(hidden)
        c = x[0].new_zeros(hidden)
        out: list[torch.Tensor] = [h] * len(x)
        steps = range(len(x) - 1, -1, -1) if reverse else range(len(x))
        for t in steps:
            z = w_ih @ x[t] + b_ih + w_hh @ h + b_hh
            i = torch.sigmoid(z[:hidden])
            f = torch.sigmoid(z[hidden:2 * hidden])
            g = torch.tanh(z[2 * hidden:3 * hidden])
            o = torch.sigmoid(z[3 * hidden:])
            c = f * c + i * g
            h = o * torch.tanh(c)
            out[t] = h
        return out

    def phrase(self, words: list[str], vocab: Vocab, heads: tuple[str, ...]
               ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Phrase state ``[h_fwd(last), h_bwd(first)]`` and the features of ``heads``."""
        ids = vocab.encode(words) or [0]
        table = self.p("words.embedding.weight")
        w = [table[i] for i in ids]
        fwd = self.lstm_direction(w, "", reverse=False)
        bwd = self.lstm_direction(w, "_reverse", reverse=True)
        state = torch.cat([fwd[-1], bwd[0]])
        h_t = [torch.cat([a, b]) for a, b in zip(fwd, bwd)]
        release = self.cfg.phrase_attention == "release"
        feats = h_t if release else [torch.cat([a, b]) for a, b in zip(w, h_t)]
        out = {}
        for head in heads:
            scores = torch.stack([self.linear(f"phrases.attn.{head}", f)[0] for f in feats])
            a = torch.softmax(scores, dim=0)
            if release:
                out[head] = sum(a[t] * w[t] for t in range(len(w)))
            else:
                pooled = sum(a[t] * feats[t] for t in range(len(feats)))
                out[head] = self.linear(f"phrases.proj.{head}", pooled)
        return state, out

    # ---------------------------------------------------------------------- Sim
    def entity_sim(self, name: str, text: torch.Tensor, vis: torch.Tensor,
                   location: bool) -> torch.Tensor:
        """Entity Sim of one phrase against the boxes ``vis [n, D]`` -> ``[n]``."""
        if self.release:
            v = self.normalize_scale(f"{name}.norm", vis)
            if location:
                v = self.linear(f"{name}.pre", v)
        else:
            v = vis
        x = _unit(self.transform(f"{name}.text_trf", text))
        y = _unit(self.transform(f"{name}.vis_trf", v))
        u = self.linear(f"{name}.vec", (x[None, :] - y) ** 2)
        if self.release:
            u = _l2norm(u)
        return torch.tanh(self.linear(f"{name}.w_eval", torch.relu(u)))[:, 0]

    @staticmethod
    def geometry(sub: torch.Tensor, obj: torch.Tensor) -> torch.Tensor:
        """``s`` of appendix A.1 for subject / object boxes ``[P, 4]`` (normalised xyxy):
        the object's corners relative to the subject's centre in units of its size,
        and the ratio of their areas."""
        sw = (sub[:, 2] - sub[:, 0]).clamp(min=1e-3)
        sh = (sub[:, 3] - sub[:, 1]).clamp(min=1e-3)
        xc = sub[:, 0] + 0.5 * (sub[:, 2] - sub[:, 0])
        yc = sub[:, 1] + 0.5 * (sub[:, 3] - sub[:, 1])
        ow, oh = obj[:, 2] - obj[:, 0], obj[:, 3] - obj[:, 1]
        return torch.stack([(obj[:, 0] - xc) / sw, (obj[:, 1] - yc) / sh,
                            (obj[:, 0] + ow - xc) / sw, (obj[:, 1] + oh - yc) / sh,
                            ow * oh / (sw * sh)], dim=-1)

    def relation_sim(self, txt: torch.Tensor, feats: torch.Tensor, boxes: torch.Tensor,
                     subjects: list[int], objects: list[int]) -> torch.Tensor:
        """``[A]_p = ReLU(<F_v(r^o_p), txt>)`` of the pairs ``(subjects[p], objects[p])``,
        every pair's feature built from the concatenation ``[o_sub, o_obj]``."""
        cfg = self.cfg
        o_sub, o_obj = feats[subjects], feats[objects]
        b_sub, b_obj = boxes[subjects], boxes[objects]
        s = self.geometry(b_sub, b_obj)
        pair = torch.cat([o_sub, o_obj], dim=-1)
        if self.release:
            appearance = self.normalize_scale("rel_sim.vis_norm",
                                              self.linear("rel_sim.W_e", pair))
            spatial = self.normalize_scale("rel_sim.spatial_norm", self.linear("rel_sim.W_l", s))
            r_o = self.linear("rel_sim.W_f", torch.cat([appearance, spatial], dim=-1))
            vis = _unit(self.bn_mlp("rel_sim.vis_trf", r_o))
        else:
            parts = [self.linear("rel_sim.W_l", s), self.linear("rel_sim.W_e", pair)]
            if cfg.relation_diff:
                parts.append((o_sub - o_obj).abs())
            r_o = torch.cat(parts, dim=-1)
            hidden = torch.relu(self.linear("rel_sim.vis_fc1", r_o))
            vis = _unit(self.linear("rel_sim.vis_fc2", hidden))
        return torch.relu(vis @ txt)

    # -------------------------------------------------------------------- gates
    def gate(self, name: str, mode: str, h: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        """β = sigmoid(W [h, c] + b) (``full``), of ``h`` (``lang``), of ``c`` (``ctx``),
        or sigmoid of a learned constant (``const``)."""
        prefix = f"gates.{name}.gate"
        if mode == "const":
            return torch.sigmoid(self.p(f"{prefix}.bias"))
        x = {"full": lambda: torch.cat([h, ctx]), "lang": lambda: h, "ctx": lambda: ctx}[mode]()
        return torch.sigmoid(self.linear(f"{prefix}.linear", x))

    # ------------------------------------------------------------------ problem
    def run(self, problem: GroundingProblem, vocab: Vocab) -> dict[str, Any]:
        return _Tree(self, problem, vocab).outputs()


class _Tree:
    """One problem: its encoded phrases and regions, and the program evaluated on it."""

    def __init__(self, oracle: _Oracle, problem: GroundingProblem, vocab: Vocab) -> None:
        self.o, self.cfg = oracle, oracle.cfg
        cfg, dt, dev = oracle.cfg, oracle.dtype, oracle.device
        graph = self.graph = problem.graph
        props = problem.proposals
        self.n = n = len(props)
        W, H = props.image_size
        # the batch's boxes: float32 pixels, normalised in float32 (as ``collate``)
        px = torch.as_tensor(props.boxes, dtype=torch.float32).reshape(-1, 4)
        norm = px / torch.tensor([W, H, W, H], dtype=torch.float32)
        self.boxes_px = px.to(dt).to(dev)
        boxes = norm.to(dt).to(dev)
        if cfg.boxes == "inclusive":
            # sizes x2 - x1 + 1 pixels: the far corner one pixel further
            one = torch.tensor([0.0, 0.0, 1.0 / max(W, 1.0), 1.0 / max(H, 1.0)],
                               dtype=torch.float32).to(dt).to(dev)
            boxes = boxes + one
        self.boxes = boxes
        x1, y1, x2, y2 = boxes.unbind(-1)
        self.location = torch.stack([x1, y1, x2 - x1, y2 - y1, (x2 - x1) * (y2 - y1)], -1)
        if props.features is not None and n:
            self.feats = torch.as_tensor(props.features, dtype=torch.float32).to(dt).to(dev)
        else:
            dim = oracle.p("app_sim.vis_trf.fc1.weight").shape[1] if not oracle.release else \
                oracle.p("app_sim.norm.weight").shape[1]
            self.feats = torch.zeros(n, dim, dtype=dt, device=dev)

        V = graph.num_entities
        self.h, self.app, self.pos = [], [], []
        for i in range(V):
            state, heads = oracle.phrase(graph.entity_tokens(i), vocab, ("app", "pos"))
            self.h.append(state)
            self.app.append(heads["app"])
            self.pos.append(heads["pos"])
        self.rel = [oracle.phrase(graph.spo_tokens(k), vocab, ("spo",))[1]["spo"]
                    for k in range(graph.num_relations)]
        self.rel_txt = [_unit(oracle.transform("rel_sim.text_trf", r)) for r in self.rel]
        self.children: dict[int, list[tuple[int, int]]] = {i: [] for i in range(V)}
        self.edges = graph.tree_edges()
        for parent, child, k in self.edges:
            self.children[parent].append((child, k))

        # local correspondences and every gate's belief context
        K = cfg.k
        pad = -1.0 if cfg.release_slots else 0.0
        self.b_app, self.b_pos, self.ctx = [], [], []
        for i in range(V):
            if n:
                b_app = oracle.entity_sim("app_sim", self.app[i], self.feats, location=False)
                b_pos = oracle.entity_sim("pos_sim", self.pos[i], self.location, location=True)
            else:
                b_app = b_pos = self.feats.new_zeros(0)
            self.b_app.append(b_app)
            self.b_pos.append(b_pos)
            self.ctx.append(torch.cat([self.top_padded(b_app, K, pad),
                                       self.top_padded(b_pos, K, pad)]))
        self.cache: dict[tuple, Any] = {}

    @staticmethod
    def top_padded(values: torch.Tensor, k: int, pad: float) -> torch.Tensor:
        top = [values[j] for j in _order(values)[:k]]
        top += [values.new_tensor(pad)] * (k - len(top))
        return torch.stack(top)

    # ----------------------------------------------------------------- primitives
    def local(self, mode: str) -> _Belief:
        """GateSum: ``F_norm(β_0 b_app + β_1 b_pos)``, signed, ``+ belief_floor``."""
        cfg = self.cfg
        padded = bool(cfg.release_slots) and self.n < cfg.release_slots
        values = []
        for i in range(self.graph.num_entities):
            beta = self.o.gate(f"local_{mode}", mode, self.h[i], self.ctx[i])
            total = beta[0] * self.b_app[i] + beta[1] * self.b_pos[i]
            peak = total.new_tensor(1.0)
            if self.n:
                peak = torch.maximum(peak, total.abs().max())
            if padded:
                # the padding slots' -β_0 - β_1 bound the divisor from below
                peak = torch.maximum(peak, beta[0] + beta[1])
            values.append((total / peak + 1.0) * 0.5 + cfg.belief_floor)
        V = self.graph.num_entities
        return _Belief([list(range(self.n)) for _ in range(V)], values, [False] * V)

    def select(self, k: int, x: _Belief) -> _Belief:
        slots, values = [], []
        for s, v in zip(x.slots, x.values):
            keep = _order(v)[:k]
            slots.append([s[j] for j in keep])
            values.append(torch.stack([v[j] for j in keep]) if keep else v[:0])
        return _Belief(slots, values, list(x.updated))

    def propagate(self, direction: str, x: _Belief, name: str, mode: str) -> _Belief:
        """Bottom-up (children before parents) or top-down (parents before children)
        message passing: ``b_i <- F_norm(b_i * exp(β reduce_j log(A_ij b^sel_j + eps)))``."""
        cfg, o = self.cfg, self.o
        reduce = cfg.message_reduce.get(name, "sum")
        current = list(x.values)
        updated = list(x.updated)
        relations = self.graph.relations

        def message(src: int, tgt: int, k: int) -> torch.Tensor:
            basis = x.values[src] if cfg.context == "local" else current[src]
            chosen = _order(basis)[:cfg.k]
            cols = [x.slots[src][j] for j in chosen]
            sent = (torch.stack([current[src][j] for j in chosen]) if chosen
                    else current[src][:0])
            if cfg.message_norm == "max" and chosen:
                sent = sent / sent.max().clamp(min=1e-12)
            rows = x.slots[tgt]
            tgt_is_subject = relations[k].subject == tgt
            subjects, objects = [], []
            for r in rows:
                for c in cols:
                    s, ob = (r, c) if tgt_is_subject else (c, r)
                    subjects.append(s)
                    objects.append(ob)
            A = o.relation_sim(self.rel_txt[k], self.feats, self.boxes, subjects, objects)
            A = A.reshape(len(rows), len(cols))
            return torch.log(A @ sent + cfg.eps)

        def update(node: int, logs: list[torch.Tensor]) -> None:
            stacked = torch.stack(logs)
            agg = stacked.sum(0) if reduce == "sum" else stacked.min(0).values
            beta = o.gate(name, mode, self.h[node], self.ctx[node])[0]
            b = x.values[node] * torch.exp(beta * agg)
            peak = b.abs().max().clamp(min=1.0) if len(b) else b.new_tensor(1.0)
            current[node] = b / peak
            updated[node] = True

        def up(i: int) -> None:
            for c, _ in self.children[i]:
                up(c)
            if self.children[i]:
                update(i, [message(c, i, k) for c, k in self.children[i]])

        def down(i: int) -> None:
            for c, k in self.children[i]:
                update(c, [message(i, c, k)])
                down(c)

        (up if direction == "up" else down)(self.graph.root)
        return _Belief(list(x.slots), current, updated)

    def classify(self, x: _Belief) -> torch.Tensor:
        """MLP over the sorted top-K beliefs of every node (its logit or probability)."""
        cfg, o = self.cfg, self.o
        K = cfg.k
        out = []
        for i, v in enumerate(x.values):
            top = [v[j] for j in _order(v)[:K]]
            if cfg.release_slots and x.updated[i]:
                top = [t.clamp(min=_CLASSIFY_FLOOR) for t in top]
            valid = len(top)
            top += [v.new_zeros(())] * (K - valid)
            f = torch.stack(top) if top else v.new_zeros(0)
            if cfg.classify_log:
                f = torch.log(f + cfg.eps)
            if self.o.release:
                if valid < K:
                    f = torch.cat([f[:valid], o.p("classify.pad_value").expand(K - valid)])
                hid = torch.relu(o.batch_norm("classify.bn", o.linear("classify.fc1", f)))
                logit = o.linear("classify.fc2", hid)[0]
            else:
                logit = o.mlp("classify.mlp", f)[0]
            out.append(logit if cfg.confidences == "logits" else torch.sigmoid(logit))
        return torch.stack(out)

    def and_(self, confs: list[torch.Tensor]) -> torch.Tensor:
        best = confs[0][0]
        for c in confs:
            for i in range(len(c)):
                best = torch.minimum(best, c[i])
        return best

    @staticmethod
    def top_down(conf: tuple) -> bool:
        """Whether a confidence reads a top-down propagation (through any ``select``)."""
        e = conf[1] if conf[0] == "classify" else conf
        while isinstance(e, tuple) and e[0] == "select":
            e = e[2]
        return isinstance(e, tuple) and e[0] == "propagate" and e[1] == "down"

    def compare(self, exprs: tuple) -> torch.Tensor:
        """``d_k = sum_t s_t (p^t_parent - p^t_child)`` over the relations, ``s_t = +1``
        for a confidence of a bottom-up pass, ``-1`` for one of a top-down pass (the
        child receives its message): Eq. 8 for ``(compare P_up P_down)``."""
        confs = [(self.eval(e), -1.0 if self.top_down(e) else 1.0) for e in exprs]
        scores = [confs[0][0].new_zeros(())] * self.graph.num_relations
        for parent, child, k in self.edges:
            d = 0.0
            for p, sign in confs:
                d = d + sign * (p[parent] - p[child])
            scores[k] = d
        return torch.stack(scores) if scores else confs[0][0].new_zeros(0)

    # -------------------------------------------------------------------- program
    def eval(self, expr: tuple) -> Any:
        if expr in self.cache:
            return self.cache[expr]
        head = expr[0]
        if head == "local":
            value = self.local(expr[1][1])
        elif head == "select":
            value = self.select(expr[1], self.eval(expr[2]))
        elif head == "propagate":
            value = self.propagate(expr[1], self.eval(expr[2]), expr[3], expr[4][1])
        elif head == "classify":
            value = self.classify(self.eval(expr[1]))
        elif head == "and":
            value = self.and_([self.eval(e) for e in expr[1:]])
        elif head == "compare":
            value = self.compare(expr[1:])
        else:
            raise P.ProgramError(f"cannot evaluate {P.to_text(expr)}")
        self.cache[expr] = value
        return value

    def regress(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The regressed box of proposal ``index`` and its deltas."""
        o, cfg = self.o, self.cfg
        proposal = self.boxes_px[index]
        if not cfg.regression:
            return proposal, proposal.new_zeros(4)
        region, location = self.feats[index], self.location[index]
        if o.release:
            phrase = sum(self.app) / len(self.app)          # the mean entity phrase
            v = _unit(o.bn_mlp("regress.vis_trf", o.normalize_scale("regress.norm", region)))
            t = _unit(o.bn_mlp("regress.text_trf", phrase))
            deltas = o.linear("regress.out", torch.cat([v, location, t]))
        else:
            glob = (sum(self.rel) / len(self.rel) if self.rel
                    else region.new_zeros(o.p("rel_sim.text_trf.fc1.weight").shape[1]))
            deltas = o.mlp("regress", torch.cat([region, location, glob]))
        # Faster R-CNN decoding: centre offsets in units of the size, log-size offsets
        w, h = proposal[2] - proposal[0], proposal[3] - proposal[1]
        cx, cy = proposal[0] + 0.5 * w, proposal[1] + 0.5 * h
        cx, cy = cx + deltas[0] * w, cy + deltas[1] * h
        w = w * torch.exp(deltas[2].clamp(max=_DELTA_CLAMP))
        h = h * torch.exp(deltas[3].clamp(max=_DELTA_CLAMP))
        return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h]), deltas

    def outputs(self) -> dict[str, Any]:
        cfg, graph, n = self.cfg, self.graph, self.n
        parts = dict(self.o.program[1:])
        res: dict[str, Any] = {"match_prob": None, "match_logit": None, "ground_belief": None,
                               "ground_index": -1, "box": None, "deltas": None,
                               "edge_scores": None, "mismatch_index": None}
        if "ground" in parts:
            belief = self.eval(parts["ground"])
            root = belief.values[graph.root]
            slots = belief.slots[graph.root]
            if slots == list(range(n)):
                res["ground_belief"] = root
            else:   # a pruned belief: by proposal, 0 outside its slots
                index = torch.tensor(slots, dtype=torch.long, device=root.device)
                res["ground_belief"] = root.new_zeros(n).index_put((index,), root)
            if slots:
                res["ground_index"] = slots[_first_max(root)]
                res["box"], res["deltas"] = self.regress(res["ground_index"])
        if "match" in parts:
            value = self.eval(parts["match"])
            if cfg.confidences == "logits":
                res["match_logit"], res["match_prob"] = value, torch.sigmoid(value)
            else:
                res["match_prob"] = value
        if "mismatch" in parts:
            scores = self.eval(parts["mismatch"])
            res["edge_scores"] = scores
            res["mismatch_index"] = _first_min(scores) if graph.num_relations else -1
        res["values"] = values = {}
        for expr, v in self.cache.items():
            values[P.to_text(expr)] = ({"slots": v.slots, "values": v.values,
                                        "updated": v.updated} if isinstance(v, _Belief) else v)
        res.update(self._family(parts))
        return res

    def _family(self, parts: dict[str, tuple]) -> dict[str, Any]:
        """The per-node views of the RCRN program family (the earlier format)."""
        out: dict[str, Any] = {"local": [], "ground_up": [], "match_up": [], "match_down": [],
                               "match_slots": [], "p_up": [], "p_down": []}
        for expr, v in self.cache.items():
            if expr[0] == "local" and not out["local"]:
                out["local"] = list(v.values)
            if expr[0] == "select" and not out["match_slots"]:
                out["match_slots"] = [list(s) for s in v.slots]
            if expr[0] == "propagate" and expr[3] in ("match_up", "match_down"):
                out[expr[3]] = list(v.values)
        if "ground" in parts:
            out["ground_up"] = list(self.cache[parts["ground"]].values)
        readout = parts.get("mismatch") or parts.get("match")
        if readout is not None:
            confs = [self.cache[e] for e in readout[1:] if e[0] == "classify"]
            if confs:
                probs = [torch.sigmoid(c) if self.cfg.confidences == "logits" else c
                         for c in confs]
                out["p_up"] = list(probs[0])
                out["p_down"] = list(probs[1] if len(probs) > 1 else probs[0])
        return out


_WORDS = ["cup", "plate", "table", "man", "hat", "dog", "car", "tree", "lamp", "chair"]
_RELS = ["left of", "on", "near", "under", "behind", "holding", "next to", "above"]


def random_problem(rng: Any, nodes: int, proposals: int, feature_dim: int,
                   shape: str = "mixed", item_id: str = "", flip_prob: float = 0.3,
                   image_size: tuple[int, int] = (640, 480)) -> GroundingProblem:
    """A random tree of ``nodes`` entities against ``proposals`` random boxes.

    Args:
        rng: a ``numpy.random.Generator``.
        shape: ``chain`` (a path from the root), ``star`` (every node a child of
            the root) or ``mixed`` (each node attaches to a random earlier one).
        flip_prob: probability that a relation points from child to parent
            (the parent is then the relation's object).
    """
    import numpy as np

    from rcrn.structures import Entity, LanguageGraph, Proposals, Relation

    tokens: list[str] = []
    entities, relations = [], []

    def add(words: list[str]) -> tuple[int, int]:
        start = len(tokens)
        tokens.extend(words)
        return start, len(tokens)

    for i in range(nodes):
        noun = _WORDS[int(rng.integers(len(_WORDS)))]
        entities.append(Entity(text=f"the {noun}", span=add(["the", noun]), head=noun))
        if i == 0:
            continue
        parent = {"chain": i - 1, "star": 0}.get(shape, int(rng.integers(i)))
        words = _RELS[int(rng.integers(len(_RELS)))].split()
        span = add(words)
        s, o = (i, parent) if rng.random() < flip_prob else (parent, i)
        relations.append(Relation(subject=s, object=o, text=" ".join(words), span=span))
    graph = LanguageGraph(tokens=tokens, entities=entities, relations=relations, root=0)
    W, H = image_size
    xy = rng.uniform(0, 0.8, size=(proposals, 2)) * [W, H]
    wh = rng.uniform(0.05, 0.2, size=(proposals, 2)) * [W, H]
    boxes = np.concatenate([xy, xy + wh], axis=1)
    feats = rng.normal(size=(proposals, feature_dim)).astype(np.float32)
    ref = boxes[int(rng.integers(proposals))] if proposals else None
    return GroundingProblem(graph, Proposals(boxes, image_size, features=feats),
                            match=int(rng.integers(2)), referent_box=ref, id=item_id)


def learnable_problems(count: int, seed: int = 0, proposals: int = 8, feature_dim: int = 16,
                       noise: float = 0.3) -> list[GroundingProblem]:
    """Small problems a model can learn: each box shows one noun class in its features.

    The referent is the only box of its noun; its relation partner is a box of
    the object noun.  Half the problems are mismatched: the object noun is absent
    from the image.  Used by tests of the training loop.
    """
    import numpy as np

    from rcrn.structures import LanguageGraph, Proposals

    rng = np.random.default_rng(seed)
    classes = np.random.default_rng(1234).normal(size=(len(_WORDS), feature_dim))
    out = []
    for i in range(count):
        subj, obj = rng.choice(len(_WORDS), size=2, replace=False)
        others = [c for c in range(len(_WORDS)) if c not in (subj, obj)]
        match = int(rng.random() < 0.5)
        labels = [subj] + ([obj] if match else []) + list(
            rng.choice(others, size=proposals - 1 - match))
        order = rng.permutation(proposals)
        labels = [labels[j] for j in order]
        feats = classes[labels] + noise * rng.normal(size=(proposals, feature_dim))
        xy = rng.uniform(0, 80, size=(proposals, 2))
        boxes = np.concatenate([xy, xy + rng.uniform(5, 20, size=(proposals, 2))], axis=1)
        rel = _RELS[int(rng.integers(len(_RELS)))]
        text = f"the {_WORDS[subj]} {rel} the {_WORDS[obj]}"
        graph = LanguageGraph.from_triples(text, [(f"the {_WORDS[subj]}", rel,
                                                   f"the {_WORDS[obj]}")])
        target = labels.index(subj)
        out.append(GroundingProblem(graph, Proposals(boxes, (100, 100), features=feats),
                                    match=match, referent_box=boxes[target], id=f"l{i}",
                                    mismatched_relation=None if match else 0))
    return out
