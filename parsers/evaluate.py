"""Scoring parsers against the (subject, relation, object) triples of template captions.

VSR captions follow ``The SUBJ (is )?REL the OBJ.`` with ``REL`` the record's
``relation`` field; What'sUp captions follow ``A SUBJ REL a OBJ`` with ``REL``
one of its prepositions.  Both give a gold triple per caption, so a parser's
graph can be scored without annotation:

* the predicted subject is the root entity; the predicted relation and object
  come from the root's first relation (the first relation of the graph when
  none leaves the root);
* phrases are compared lowercase, without leading articles/determiners or
  trailing punctuation;
* *entity accuracy* averages subject and object correctness, *relation
  accuracy* counts the relation phrase, *triple accuracy* needs all three.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parsers.base import ParseError
from parsers.lexicon import DETERMINERS
from rcrn.errors import RcrnError
from rcrn.structures import LanguageGraph

__all__ = [
    "DataError",
    "GoldTriple",
    "read_vsr_captions",
    "read_whatsup_captions",
    "read_captions",
    "predicted_triple",
    "score_triples",
    "evaluate_parser",
    "parse_all",
    "WHATSUP_PREPOSITIONS",
]

WHATSUP_PREPOSITIONS = ("to the left of", "to the right of", "in front of", "behind", "on",
                        "under", "left of", "right of", "above", "below")
_WHATSUP_RE = re.compile(
    r"^\s*an?\s+(.+?)\s+(" + "|".join(re.escape(p) for p in WHATSUP_PREPOSITIONS)
    + r")\s+an?\s+(.+?)\s*\.?\s*$", re.IGNORECASE)


class DataError(RcrnError, ValueError):
    """A benchmark file is missing or malformed; the message names the file and line/record."""


@dataclass(frozen=True)
class GoldTriple:
    """A caption and the triple its template states.

    Attributes:
        text: the caption.
        subject: the subject phrase (without article).
        relation: the relation phrase.
        object: the object phrase (without article).
        source: ``file:line`` (VSR) or ``file#record.option`` (What'sUp).
    """

    text: str
    subject: str
    relation: str
    object: str
    source: str


def _files(root: Path, pattern: str, what: str) -> list[Path]:
    if not root.exists():
        raise DataError(f"{what}: {root} does not exist")
    if root.is_file():
        return [root]
    files = sorted(p for p in root.rglob(pattern) if p.is_file())
    if not files:
        raise DataError(f"{what}: no {pattern} file under {root}")
    return files


def read_vsr_captions(root: str | Path) -> list[GoldTriple]:
    """Gold triples of every caption of a VSR jsonl file or of every jsonl under a folder."""
    items = []
    for path in _files(Path(root), "*.jsonl", "VSR"):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"{path}: cannot read ({exc})") from exc
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{where}: not valid JSON ({exc.msg})") from exc
            if not isinstance(rec, dict) or not isinstance(rec.get("caption"), str) \
                    or not isinstance(rec.get("relation"), str):
                raise DataError(f"{where}: a VSR record needs string fields 'caption' and "
                                f"'relation'")
            caption, rel = rec["caption"], rec["relation"]
            m = re.match(r"^\s*the\s+(.+?)\s+(?:is\s+)?" + re.escape(rel)
                         + r"\s+the\s+(.+?)\s*\.?\s*$", caption, re.IGNORECASE)
            if not m:
                raise DataError(f"{where}: caption {caption!r} does not follow the template "
                                f"'The SUBJ (is) {rel} the OBJ.'")
            items.append(GoldTriple(caption, m.group(1), rel, m.group(2), where))
    return items


def read_whatsup_captions(root: str | Path) -> list[GoldTriple]:
    """Gold triples of all caption options of What'sUp Controlled_Images JSON files.

    ``root`` is one JSON file (an array of ``{image_path, caption_options}``) or a
    folder, of which the ``controlled*.json`` files are read.
    """
    root = Path(root)
    files = _files(root, "controlled*.json", "What'sUp") if root.is_dir() else _files(
        root, "*.json", "What'sUp")
    items = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(f"{path}: cannot read ({exc})") from exc
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from exc
        if not isinstance(data, list):
            raise DataError(f"{path}: expected a JSON array of {{image_path, caption_options}}")
        for r, rec in enumerate(data):
            where = f"{path}#{r}"
            if not isinstance(rec, dict) or not isinstance(rec.get("caption_options"), list):
                raise DataError(f"{where}: record has no 'caption_options' list")
            for k, caption in enumerate(rec["caption_options"]):
                if not isinstance(caption, str):
                    raise DataError(f"{where}.{k}: caption option is not a string")
                m = _WHATSUP_RE.match(caption)
                if not m:
                    raise DataError(f"{where}.{k}: caption {caption!r} does not follow the "
                                    f"template 'A SUBJ REL a OBJ'")
                items.append(GoldTriple(caption, m.group(1), m.group(2).lower(), m.group(3),
                                        f"{where}.{k}"))
    return items


def read_captions(benchmark: str, root: str | Path) -> list[GoldTriple]:
    """Gold triples of ``benchmark`` (``vsr`` or ``whatsup``) under ``root``."""
    if benchmark == "vsr":
        return read_vsr_captions(root)
    if benchmark == "whatsup":
        return read_whatsup_captions(root)
    raise DataError(f"unknown benchmark {benchmark!r}; choose vsr or whatsup")


def _norm(phrase: str) -> str:
    words = phrase.lower().replace("’", "'").split()
    while words and words[-1] in (".", ",", "!", "?"):
        words.pop()
    while words and words[0] in DETERMINERS:
        words = words[1:]
    return " ".join(words).strip(" .,!?")


def predicted_triple(graph: LanguageGraph) -> tuple[str, str, str]:
    """``(subject, relation, object)`` a graph states about its root, normalised."""
    root = graph.root
    rel = next((r for r in graph.relations if r.subject == root), None)
    if rel is None:
        rel = next((r for r in graph.relations if r.object == root), None)
    if rel is None and graph.relations:
        rel = graph.relations[0]
    if rel is None:
        return _norm(graph.entities[root].text), "", ""
    return (_norm(graph.entities[rel.subject].text), _norm(rel.text),
            _norm(graph.entities[rel.object].text))


def score_triples(graphs: Sequence[LanguageGraph | None],
                  gold: Sequence[GoldTriple]) -> dict[str, Any]:
    """Entity, relation and exact-triple accuracy of ``graphs`` against ``gold``.

    A ``None`` graph (the parser failed on that caption) counts as wrong.

    Returns:
        ``sentences``, ``entity_accuracy``, ``relation_accuracy``, ``triple_accuracy``
        (rates in [0, 1]), ``per_relation`` (triple accuracy by gold relation) and
        ``errors`` (up to 20 mistaken captions with what was predicted).
    """
    if len(graphs) != len(gold):
        raise ValueError(f"{len(graphs)} graphs for {len(gold)} gold triples")
    n = len(gold)
    ent = rel = tri = 0.0
    per: dict[str, list[int]] = {}
    errors = []
    for g, t in zip(graphs, gold):
        want = (_norm(t.subject), _norm(t.relation), _norm(t.object))
        got = predicted_triple(g) if g is not None else ("", "", "")
        s_ok, r_ok, o_ok = (got[0] == want[0], got[1] == want[1], got[2] == want[2])
        ent += (s_ok + o_ok) / 2
        rel += r_ok
        ok = s_ok and r_ok and o_ok
        tri += ok
        per.setdefault(t.relation, [0, 0])
        per[t.relation][0] += int(ok)
        per[t.relation][1] += 1
        if not ok and len(errors) < 20:
            errors.append({"source": t.source, "text": t.text, "gold": list(want),
                           "predicted": list(got)})
    d = max(n, 1)
    return {"sentences": n, "entity_accuracy": ent / d, "relation_accuracy": rel / d,
            "triple_accuracy": tri / d,
            "per_relation": {k: v[0] / v[1] for k, v in sorted(per.items())},
            "errors": errors}


def parse_all(parser: Any, texts: Sequence[str]) -> tuple[list[LanguageGraph | None], int]:
    """Graphs of ``texts`` (None where the parser raises ``ParseError``) and the failure count.

    The batched ``parse_many`` is tried first; when it rejects a text, the texts are
    parsed one by one so one bad caption does not lose the others.
    """
    try:
        return list(parser.parse_many(texts)), 0
    except ParseError:
        graphs: list[LanguageGraph | None] = []
        failures = 0
        for text in texts:
            try:
                graphs.append(parser.parse(text))
            except ParseError:
                graphs.append(None)
                failures += 1
        return graphs, failures


def evaluate_parser(parser: Any, gold: Sequence[GoldTriple]) -> dict[str, Any]:
    """Parse every caption of ``gold`` with ``parser`` and score it; adds ``sentences_per_second``.

    Captions the parser rejects with :class:`~parsers.base.ParseError` count as wrong
    (``parse_failures`` counts them).
    """
    texts = [t.text for t in gold]
    t0 = time.perf_counter()
    graphs, failures = parse_all(parser, texts)
    elapsed = time.perf_counter() - t0
    out = score_triples(graphs, gold)
    out["parse_failures"] = failures
    out["seconds"] = elapsed
    out["sentences_per_second"] = len(texts) / elapsed if elapsed > 0 else float("inf")
    return out
