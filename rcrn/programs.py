"""Reasoning programs: RCRN and its variants as compositions of primitives.

A program is an expression tree over a batch.  Build one in Python::

    from rcrn import programs as P
    m = P.select(5, P.local())
    up, down = P.classify(P.propagate("up", m, "match_up")), \\
        P.classify(P.propagate("down", m, "match_down"))
    prog = P.outputs(ground=P.propagate("up", P.local(), "ground_up"),
                     match=P.and_(up, down), mismatch=P.compare(up, down))

or from text (an s-expression, e.g. held in a YAML config)::

    (outputs
      (ground (propagate up (local) ground_up))
      (match (and (classify (propagate up (select 5 (local)) match_up))
                  (classify (propagate down (select 5 (local)) match_down))))
      (mismatch (compare (classify (propagate up (select 5 (local)) match_up))
                         (classify (propagate down (select 5 (local)) match_down)))))

Forms:
    ``(local [:gate MODE])``                 Sim (appearance, location) + GateSum -> belief
    ``(select K X)``                         Select: prune a belief to its sorted top-K regions
    ``(propagate up|down X NAME [:gate MODE])``  bi-directional message passing with the
                                             GateProd named NAME (own β^rel parameters)
    ``(classify X)``                         Classify -> confidence of every node
    ``(and P ...)``                          And -> match probability of every graph
    ``(or M ...)``                           the largest of several match readouts
    ``(compare P ...)``                      Compare along every edge (Eq. 8): a
                                             confidence of a bottom-up pass scores
                                             parent - child, one of a top-down pass
                                             child - parent; the scores add up
    ``(outputs (ground X) (match P) (mismatch D))``  the readout (any subset)

Gate modes: ``full`` (paper), ``lang`` (no context in β), ``ctx`` (no language
in β), ``const`` (constant β).  Identical sub-expressions are evaluated once
per forward pass, so writing the same branch twice costs nothing.

:data:`FORMS` is the registry of the forms: their arguments and what they yield.
Parsing, checking and :func:`walk` read it; the model evaluates a form with the
function registered for its name (``rcrn.models.rcrn.EVALUATE``).  A new form is
one entry here and one evaluation function there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rcrn.errors import RcrnError

__all__ = ["Expr", "Form", "FORMS", "ATOMS", "parse", "to_text", "walk", "validate",
           "local", "select", "propagate", "classify", "and_", "or_", "compare", "outputs",
           "RCRN_PROGRAM", "ABLATIONS", "TABLE3", "ProgramError", "with_k", "resolve",
           "direction", "gate_specs"]

Expr = tuple | str | int


class ProgramError(RcrnError, ValueError):
    """A malformed program; the message quotes the offending form."""


# --------------------------------------------------------------- the forms
#: what an argument of a form may be besides an expression: a count, a direction, a name
ATOMS = {"int": "an integer >= 1", "direction": "up or down", "name": "a name"}


@dataclass(frozen=True)
class Form:
    """One form of the language: its arguments and what it yields.

    Attributes:
        args: the kind of each positional argument, in order: an expression's kind
            (``"belief"``, ``"conf"``, ``"match"``, ``"edges"``) or an atom of
            :data:`ATOMS`.
        kind: what the form yields.
        more: how many further arguments of the last kind it takes (-1: any number).
        gated: it takes the ``:gate MODE`` option (stored as its last element).
        usage: the form as the error messages show it.
    """

    args: tuple[str, ...]
    kind: str
    usage: str
    more: int = 0
    gated: bool = False

    def arity(self) -> str:
        n = len(self.args)
        return (f"{n}" if not self.more else f"{n} or more" if self.more < 0
                else f"{n} to {n + self.more}")


FORMS: dict[str, Form] = {
    "local": Form((), "belief", "(local [:gate MODE])", gated=True),
    "select": Form(("int", "belief"), "belief", "(select K X)"),
    "propagate": Form(("direction", "belief", "name"), "belief",
                      "(propagate up|down X NAME [:gate MODE])", gated=True),
    "classify": Form(("belief",), "conf", "(classify X)"),
    "and": Form(("conf",), "match", "(and P ...)", more=-1),
    "or": Form(("match",), "match", "(or M ...)", more=-1),
    "compare": Form(("conf",), "edges", "(compare P [P])", more=1),
}
"""The registry of the forms a program is built from (see the module docstring)."""


# ---------------------------------------------------------------- builders
def local(gate: str = "full") -> tuple:
    return ("local", ("gate", gate))


def select(k: int, x: tuple) -> tuple:
    return ("select", int(k), x)


def propagate(direction: str, x: tuple, name: str, gate: str = "full") -> tuple:
    return ("propagate", direction, x, name, ("gate", gate))


def classify(x: tuple) -> tuple:
    return ("classify", x)


def and_(*ps: tuple) -> tuple:
    return ("and",) + tuple(ps)


def or_(*ms: tuple) -> tuple:
    return ("or",) + tuple(ms)


def compare(*ps: tuple) -> tuple:
    return ("compare",) + tuple(ps)


def outputs(ground: tuple | None = None, match: tuple | None = None,
            mismatch: tuple | None = None) -> tuple:
    parts = [(k, v) for k, v in (("ground", ground), ("match", match),
                                 ("mismatch", mismatch)) if v is not None]
    return ("outputs",) + tuple(parts)


# ------------------------------------------------------------------- text
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


#: Deepest nesting of forms :func:`parse` reads (the paper's programs nest about 8 deep).
MAX_DEPTH = 100


def parse(text: str) -> tuple:
    """Parse an s-expression program into its expression tree (normalised form).

    Raises:
        ProgramError: a malformed program, or one nested deeper than :data:`MAX_DEPTH`.
    """
    tokens = _TOKEN.findall(_strip_comments(text))
    if not tokens:
        raise ProgramError("empty program")
    pos = 0

    def read(depth: int = 1) -> Any:
        nonlocal pos
        if pos >= len(tokens):
            raise ProgramError("unexpected end of program: a ')' is missing")
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            if depth > MAX_DEPTH:
                raise ProgramError(f"program nested deeper than {MAX_DEPTH} levels "
                                   f"(rcrn.programs.MAX_DEPTH) at token {pos}")
            items = []
            while pos < len(tokens) and tokens[pos] != ")":
                items.append(read(depth + 1))
            if pos >= len(tokens):
                raise ProgramError("unexpected end of program: a ')' is missing")
            pos += 1
            return items
        if tok == ")":
            raise ProgramError(f"unexpected ')' at token {pos}")
        return int(tok) if tok.isdigit() else tok

    tree = read()
    if pos != len(tokens):
        raise ProgramError(f"text after the end of the program: {' '.join(tokens[pos:])!r}")
    expr = _normalise(tree)
    validate(expr)
    return expr


def _strip_comments(text: str) -> str:
    return "\n".join(line.split(";")[0] for line in text.splitlines())


def _normalise(tree: Any) -> Any:
    if not isinstance(tree, list):
        return tree
    if not tree:
        raise ProgramError("empty form ()")
    head, args = tree[0], tree[1:]
    if not isinstance(head, str):
        raise ProgramError(f"a form starts with a name, not a form: ({to_text(_normalise(head))}"
                           " ...)")
    options: dict[str, str] = {}
    plain = []
    i = 0
    while i < len(args):
        a = args[i]
        if isinstance(a, str) and a.startswith(":"):
            if i + 1 >= len(args):
                raise ProgramError(f"({head} ...): option {a} has no value")
            if not isinstance(args[i + 1], str):
                raise ProgramError(f"({head} ...): option {a} takes a name, not a form")
            options[a[1:]] = args[i + 1]
            i += 2
        else:
            plain.append(_normalise(a))
            i += 1
    if head in ("ground", "match", "mismatch"):
        if options or len(plain) != 1:
            raise ProgramError(f"({head} X) takes one expression and no options")
        return (head, plain[0])
    form = FORMS.get(head)
    if form is None:
        if options:
            raise ProgramError(f"({head} ...) takes no options, got {sorted(options)}")
        return (head,) + tuple(plain)
    extra = sorted(set(options) - ({"gate"} if form.gated else set()))
    if extra:
        raise ProgramError(f"{form.usage} does not take options {extra}")
    if not len(form.args) <= len(plain) <= (len(form.args) + form.more if form.more >= 0
                                            else len(plain)):
        raise ProgramError(f"{form.usage} takes {form.arity()} argument(s), got "
                           f"{len(plain)}: ({head} ...)")
    gate = (("gate", options.get("gate", "full")),) if form.gated else ()
    return (head,) + tuple(plain) + gate


def to_text(expr: Any) -> str:
    """The s-expression text of an expression tree (``parse(to_text(e)) == e``)."""
    if not isinstance(expr, tuple):
        return str(expr)
    if expr[0] == "gate" and len(expr) == 2:
        return f":gate {expr[1]}"
    if expr[0] in ("local", "propagate") and expr[-1] == ("gate", "full"):
        expr = expr[:-1]
    return "(" + " ".join(to_text(e) for e in expr) + ")"


# -------------------------------------------------------------- checking
def walk(expr: Any) -> Iterator[tuple]:
    """Every evaluable sub-expression of ``expr`` (a program or a form), parents before
    their arguments, in the order written; shared sub-expressions once per use."""
    if isinstance(expr, tuple) and expr:
        if expr[0] in FORMS:
            yield expr
        for x in expr[1:]:
            yield from walk(x)


def _kind(expr: Any) -> str:
    if not isinstance(expr, tuple) or not expr or expr[0] not in FORMS:
        raise ProgramError(f"not an expression: {to_text(expr)}")
    return FORMS[expr[0]].kind


def validate(expr: tuple) -> None:
    """Check the types of a program; raises ProgramError naming the bad form."""
    from rcrn.nn.gate import GATE_MODES

    if not isinstance(expr, tuple) or expr[:1] != ("outputs",):
        raise ProgramError("a program is (outputs (ground X) (match P) (mismatch D))")
    want = {"ground": "belief", "match": "match", "mismatch": "edges"}
    seen = set()
    for part in expr[1:]:
        if not (isinstance(part, tuple) and len(part) == 2 and part[0] in want):
            raise ProgramError(f"(outputs ...) holds (ground X), (match P) or (mismatch D), "
                               f"got {to_text(part)}")
        if part[0] in seen:
            raise ProgramError(f"output {part[0]} given twice")
        seen.add(part[0])
        if _check(part[1]) != want[part[0]]:
            raise ProgramError(f"({part[0]} ...) needs a {want[part[0]]}, "
                               f"got {to_text(part[1])}")

    for e in walk(expr):
        if FORMS[e[0]].gated and e[-1][1] not in GATE_MODES:
            raise ProgramError(f"gate mode {e[-1][1]!r} is not one of {GATE_MODES}")
    gate_specs(expr)


def _check(expr: Any) -> str:
    kind = _kind(expr)
    form = FORMS[expr[0]]
    args = expr[1:-1] if form.gated else expr[1:]
    for i, arg in enumerate(args):
        want = form.args[min(i, len(form.args) - 1)]
        if want == "int":
            ok = isinstance(arg, int) and arg >= 1
        elif want == "direction":
            ok = arg in ("up", "down")
        elif want == "name":
            ok = isinstance(arg, str)
        else:
            _expect(arg, want, expr)
            continue
        if not ok:
            raise ProgramError(f"{form.usage}: argument {i + 1} ({want}) must be "
                               f"{ATOMS[want]}, got {to_text(arg)!r} in {to_text(expr)}")
    return kind


def _expect(arg: Any, kind: str, parent: tuple) -> None:
    if _check(arg) != kind:
        raise ProgramError(f"{to_text(parent)}: expected a {kind}, got {to_text(arg)}")


def gate_specs(expr: Any) -> dict[str, tuple[str, str]]:
    """``{module name: (kind, gate mode)}`` of every gated module the program uses."""
    specs: dict[str, tuple[str, str]] = {}
    for e in walk(expr):
        if e[0] == "local":
            specs[f"local_{e[1][1]}"] = ("gatesum", e[1][1])
        elif e[0] == "propagate":
            name, mode = e[3], e[4][1]
            if name in specs and specs[name] != ("gateprod", mode):
                raise ProgramError(f"gate {name!r} used with two gate modes")
            specs[name] = ("gateprod", mode)
    return specs


def direction(conf: Any) -> str:
    """``"down"`` for a confidence read from a top-down propagation, else ``"up"``:
    Compare scores such a confidence child - parent (the child receives the message)."""
    e = conf[1] if isinstance(conf, tuple) and conf[:1] == ("classify",) else conf
    while isinstance(e, tuple) and e[:1] == ("select",):
        e = e[2]
    return "down" if isinstance(e, tuple) and e[:2] == ("propagate", "down") else "up"


def _rcrn(gate: str = "full", top_down: bool = True, bottom_up: bool = True) -> tuple:
    m = select(5, local(gate))
    confs = []
    if bottom_up:
        confs.append(classify(propagate("up", m, "match_up", gate)))
    if top_down:
        confs.append(classify(propagate("down", m, "match_down", gate)))
    return outputs(ground=propagate("up", local(gate), "ground_up", gate),
                   match=and_(*confs),
                   mismatch=compare(*confs))


RCRN_PROGRAM: tuple = _rcrn()
"""The full model of the paper."""

ABLATIONS: dict[str, tuple] = {
    "rcrn": RCRN_PROGRAM,
    "no_bi_mp": _rcrn(bottom_up=False),
    "const_beta": _rcrn(gate="const"),
    "no_context_in_beta": _rcrn(gate="lang"),
    "no_top_down": _rcrn(top_down=False),
    "no_language_in_beta": _rcrn(gate="ctx"),
}
"""Named programs: the paper's Table 3 ablations (see ``TABLE3``) and the toolkit's
own: ``no_top_down`` (matching from the bottom-up pass alone) and
``no_language_in_beta`` (β from the belief context alone)."""

TABLE3: dict[str, dict[str, Any]] = {
    "vlp_without_mp": {"arch": "cross_encoder", "vlp": True,
                       "row": "- / - / - / VLP (w/o MP): UNITER's 6 layers and its heads "
                              "(model.arch: cross_encoder, not a program)"},
    "const_beta": {"program": "const_beta", "vlp": True,
                   "row": "- / - / Bi-MP / VLP: constant β"},
    "lang_beta": {"program": "no_context_in_beta", "vlp": True,
                  "row": "Langβ / - / Bi-MP / VLP: β from the phrase state alone"},
    "no_bi_mp": {"program": "no_bi_mp", "vlp": True,
                 "row": "Langβ / Ctxβ / - / VLP: matching from one propagation, root to "
                        "leaves (the top-down pass)"},
    "rcrn_t": {"program": "rcrn", "vlp": False,
               "row": "Langβ / Ctxβ / Bi-MP / -: RCRN-T (rcrn/configs/official.yaml)"},
    "rcrn": {"program": "rcrn", "vlp": True,
             "row": "Langβ / Ctxβ / Bi-MP / VLP: the full model"},
}
"""The rows of the paper's Table 3 (Langβ / Ctxβ / Bi-MP / VLP): the program each runs
and whether it needs the vision-language front end (``vlp``: the paper's 6 UNITER
layers, ``model.front: uniter``; ``vl: {layers: 6}`` trains such layers from scratch)."""


def with_k(expr: tuple, k: int) -> tuple:
    """``expr`` with every ``(select K X)`` selecting the top ``k``."""
    if not isinstance(expr, tuple):
        return expr
    if expr[:1] == ("select",):
        return select(k, with_k(expr[2], k))
    return tuple(with_k(x, k) for x in expr)


def resolve(program: str, k: int) -> tuple:
    """The program a model runs: a name of :data:`ABLATIONS` built with the model's K, or
    a program text whose every ``(select K ...)`` is ``k`` (one K serves Select and the
    slots Classify reads, ``model.k``).

    Raises:
        ProgramError: a malformed program, or one that selects another K than ``k``.
    """
    if program in ABLATIONS:
        return with_k(ABLATIONS[program], k)
    expr = parse(program)
    ks = {e[1] for e in walk(expr) if e[0] == "select"}
    if ks - {k}:
        raise ProgramError(f"the program selects the top {min(ks - {k})} regions but model.k "
                           f"is {k}: one K serves Select and Classify; write (select {k} ...) "
                           f"or set model.k={min(ks - {k})}")
    return expr
