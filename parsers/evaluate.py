"""Scoring parsers: template captions (VSR, What'sUp) and FACTUAL scene graphs.

**Template captions.**

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

**FACTUAL scene graphs** (:func:`read_factual`, :func:`evaluate_factual`): a CSV with a
``caption`` column and a ``scene_graph`` column written as ``( s , r , o ) , ( e ) , ...``
(the layout of the FACTUAL splits of Visual Genome region captions).  Both sides are
reduced to keys made of the same small rule lemmatiser (:func:`lemma`):

* a relation triple is ``(subject head, relation, object head)``: a head is the last word
  of the entity phrase (the parser's ``head`` when set), the relation is lemmatised
  without articles, copulas and negations (:func:`relation_key`: ``is sitting on`` and
  ``sit on`` agree); gold triples whose relation is only a copula (``( lawn , is , green
  )``) are attributes, and predicted relations that are empty, a copula or a conjunction
  are not counted;
* an attribute is ``(entity head, attribute)``: gold copula triples against the
  modifiers of the predicted entities, scored separately (:func:`attribute_key`: words
  lemmatised, a number word by its digits, a final ``of`` dropped: ``two`` and ``2``,
  ``group of`` and ``group`` agree);
* ``( e )`` names an entity without relation; it is not scored.

Scores are micro precision, recall and F1 over the sets of each caption, and the rate of
captions whose relation set is exactly right.  ``evaluate_factual(..., mode="scene")``
scores the parser's scene mode instead (:mod:`parsers.scene`: the captions of a
paragraph file, each several sentences, with mentions merged across sentences); a scene
graph's keys are those of its FACTUAL layout (:meth:`~parsers.scene.SceneGraph.to_factual`
read back by :func:`parse_scene_graph`).

**Minimal caption pairs** (:func:`read_pairs`, :func:`evaluate_pairs`): a caption and a copy
of it with one relation replaced (``A cat sits on a chair`` / ``A cat sits beside a
chair``, the layout of SugarCrepe's ``replace_rel.json``).  A pair *aligns* when both graphs
have the same entity heads in the same order, the same relations between the same subject
and object indices, and exactly one relation phrase that differs, one that covers words where the
captions differ (:func:`align_pair`; a phrase shared by coordinated subjects or objects,
``a man and a woman under an umbrella``, is one phrase in several relations).  Mismatch
localisation between two such graphs (which relation was replaced) is only defined for
aligned pairs.  Not every published pair edits one relation only (``in the backseat`` /
``outside the car`` replaces an entity too); :func:`one_relation_edit` tells, from the
words alone, the pairs that do, and the report gives both rates.
"""

from __future__ import annotations

import csv
import difflib
import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parsers.base import ParseError, tokenize
from parsers.lexicon import ADVERBS, COPULAS, DETERMINERS, VERB_FORMS
from parsers.scene import SceneEntity, SceneGraph
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
    "FactualItem",
    "lemma",
    "head_key",
    "relation_key",
    "attribute_key",
    "parse_scene_graph",
    "read_factual",
    "predicted_triples",
    "predicted_attributes",
    "score_sets",
    "evaluate_factual",
    "CaptionPair",
    "PAIR_KINDS",
    "read_pairs",
    "one_relation_edit",
    "align_pair",
    "evaluate_pairs",
]

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


def _without_article(phrase: str) -> str:
    words = phrase.split()
    return " ".join(words[1:] if words and words[0].lower() in ("a", "an", "the") else words)


def read_vsr_captions(root: str | Path) -> list[GoldTriple]:
    """Gold triples of every caption of a VSR jsonl file or of every jsonl under a folder,
    read by the VSR adapter (``benchmarks.vsr.read_records``: its template, its errors)."""
    from benchmarks.vsr import read_records

    return [GoldTriple(item.caption, item.subject, item.relation, item.object,
                       f"{path}:{item.line}")
            for path in _files(Path(root), "*.jsonl", "VSR") for item in read_records(path)]


def read_whatsup_captions(root: str | Path) -> list[GoldTriple]:
    """Gold triples of all caption options of What'sUp Controlled_Images JSON files, read
    and split into subject, relation and object by the What'sUp adapter
    (``benchmarks.whatsup``: the file name gives the split).

    ``root`` is one JSON file or a folder, of which the ``controlled*.json`` files are read.
    """
    from benchmarks.whatsup import WhatsUpBenchmark

    root = Path(root)
    files = _files(root, "controlled*.json", "What'sUp") if root.is_dir() else _files(
        root, "*.json", "What'sUp")
    items = []
    for path in files:
        for item in WhatsUpBenchmark(path).items:
            for k, caption in enumerate(item.options):
                where = f"{path}#{item.index}.{k}"
                try:
                    graph = item.graph(k)
                except ValueError as exc:
                    raise DataError(f"{where}: {exc}") from exc
                if len(graph.relations) != 1:
                    raise DataError(f"{where}: caption {caption!r} names no relation between "
                                    "two objects")
                rel = graph.relations[0]
                items.append(GoldTriple(caption,
                                        _without_article(graph.entities[rel.subject].text),
                                        rel.text.lower(),
                                        _without_article(graph.entities[rel.object].text),
                                        where))
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


def parse_all(parser: Any, texts: Sequence[str],
              mode: str = "referring") -> tuple[list[Any], int]:
    """Graphs of ``texts`` (None where the parser raises ``ParseError``) and the failure count.

    The batched ``parse_many`` is tried first; when it rejects a text, the texts are
    parsed one by one so one bad caption does not lose the others.  ``mode="scene"``
    parses each text into a :class:`~parsers.scene.SceneGraph`.
    """
    options = {} if mode == "referring" else {"mode": mode}
    try:
        return list(parser.parse_many(texts, **options)), 0
    except ParseError:
        graphs: list[Any] = []
        failures = 0
        for text in texts:
            try:
                graphs.append(parser.parse(text, **options))
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


# ------------------------------------------------------------ FACTUAL scene graphs
Triple = tuple[str, str, str]
Attribute = tuple[str, str]

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
    "stuck": "stick", "going": "go", "using": "use", "used": "use", "dying": "die",
    "tying": "tie", "taken": "take", "took": "take", "hidden": "hide", "hid": "hide",
    "flown": "fly", "given": "give", "gave": "give", "fallen": "fall", "fell": "fall",
    "driven": "drive", "drove": "drive", "frozen": "freeze", "bitten": "bite",
    "broken": "break", "broke": "break", "spoken": "speak", "chosen": "choose",
    "gone": "go", "went": "go", "done": "do", "did": "do", "swum": "swim", "swam": "swim",
    "leant": "lean", "sold": "sell", "told": "tell", "bought": "buy", "brought": "bring",
    "kept": "keep",
}
#: Stems whose final ``l`` British spelling doubles before ``-ed`` / ``-ing``
#: (``travelled``, ``labelling``); other double-``l`` stems keep both (``filled``).
_BRITISH_LL = frozenset({"travel", "label", "cancel", "level", "signal", "model", "tunnel",
                         "channel", "fuel", "pedal", "panel", "shovel", "total", "marvel",
                         "jewel", "dial", "spiral", "quarrel", "snorkel"})
_KEEP = frozenset({"across", "glass", "grass", "dress", "bus", "gas", "this", "his", "its",
                   "us", "as", "cross", "class", "bass", "chess", "moss", "press", "boss",
                   "less", "plus", "thus", "yes", "lens", "bed", "red", "shed", "sled",
                   "thing", "ring", "king", "wing", "string", "spring", "sing", "ceiling",
                   "nothing", "something"})
_VOWELS = frozenset("aeiouy")
_COPULA_LEMMAS = frozenset({"be", "do", "get"})
_ARTICLES = frozenset({"a", "an", "the"})
_CONJUNCTION_WORDS = frozenset({"and", "or", "but", ",", "&"})
_GROUP_RE = re.compile(r"\(([^()]*)\)")


@dataclass(frozen=True)
class FactualItem:
    """A caption and the keys of its human scene graph.

    Attributes:
        text: the caption.
        triples: relation triples ``(subject head, relation, object head)``.
        attributes: ``(entity head, attribute)`` pairs.
        source: ``file:line``.
        phrases: ``(relation key, relation phrase as written)`` of the scene graph's
            relations (``("under", "under")``, ``("sit on", "sitting on")``).
    """

    text: str
    triples: frozenset[Triple]
    attributes: frozenset[Attribute]
    source: str
    phrases: frozenset[tuple[str, str]] = frozenset()


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
    if stem.endswith("ll") and stem[:-1] in _BRITISH_LL:
        return stem[:-1]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS \
            and stem[-1] not in "lszf":
        return stem[:-1]
    return stem


def head_key(phrase: str) -> str:
    """Lemma of the last word of an entity phrase."""
    words = phrase.split()
    return lemma(words[-1]) if words else ""


def relation_key(phrase: str) -> str:
    """Lemmatised relation phrase without articles, copulas and negations; empty for
    attributes (``is``) and for conjunctions (``and``)."""
    out = []
    for word in phrase.split():
        w = word.lower()
        if w in _ARTICLES or w in _CONJUNCTION_WORDS or w in ("'s", "’s", "not", "n't"):
            continue
        lw = lemma(w)
        if lw in _COPULA_LEMMAS or not lw:
            continue
        out.append(lw)
    return " ".join(out)


#: number words and the digits FACTUAL's annotators write for them (``( surfers , is , 2 )``
#: for ``two surfers``: 2,238 digit counts in its length/train and dev splits, no word)
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def attribute_key(phrase: str) -> str:
    """Matching form of an attribute phrase: its words lemmatised, joined by spaces; a
    number word is its digits (``two`` and ``2`` match), and a final ``of`` goes (FACTUAL
    writes ``( people , is , group of )`` for ``a group of people``)."""
    words = phrase.split()
    if len(words) > 1 and words[-1].lower() == "of":
        words = words[:-1]
    return " ".join(k for k in (_NUMBER_WORDS.get(w.lower(), lemma(w)) for w in words) if k)


def _groups(scene_graph: str, where: str) -> list[tuple[str, str, str]]:
    """The ``(subject, relation, object)`` phrases of a scene graph's groups of three or
    more elements, as written (``( e )`` groups name entities and are skipped).

    Raises:
        DataError: as :func:`parse_scene_graph`.
    """
    rest = _GROUP_RE.sub(" ", scene_graph).replace(",", " ").strip()
    if rest:
        raise DataError(f"{where}: scene graph has {rest[:40]!r} outside '( s , r , o )' "
                        f"groups")
    groups = []
    for body in _GROUP_RE.findall(scene_graph):
        parts = [p.strip() for p in body.split(",")]
        if len(parts) == 1 and parts[0]:
            continue
        if len(parts) < 3 or not all(parts):
            raise DataError(f"{where}: scene graph group ({body.strip()}) is neither "
                            f"'( s , r , o )' nor '( e )'")
        groups.append((parts[0], " ".join(parts[1:-1]), parts[-1]))
    return groups


def _keys(groups: Iterable[tuple[str, str, str]]) -> tuple[set[Triple], set[Attribute]]:
    triples: set[Triple] = set()
    attributes: set[Attribute] = set()
    for subj, rel, obj in groups:
        s, o, r = head_key(subj), head_key(obj), relation_key(rel)
        if not r:
            a = attribute_key(obj)
            if s and a:
                attributes.add((s, a))
        elif s and o:
            triples.add((s, r, o))
    return triples, attributes


def parse_scene_graph(scene_graph: str,
                      where: str = "scene graph") -> tuple[set[Triple], set[Attribute]]:
    """Relation triples and attributes of a ``( s , r , o ) , ( e ) , ...`` scene graph.

    A group of one element names an entity (not scored); a group of three whose relation
    is only a copula is an attribute; more than three elements join the middle ones into
    the relation.

    Raises:
        DataError: text outside the groups, unbalanced parentheses or a group of two
            elements or of empty ones; the message starts with ``where``.
    """
    return _keys(_groups(scene_graph, where))


def read_factual(path: str | Path, limit: int | None = None) -> list[FactualItem]:
    """Captions and scene-graph keys of every row of a FACTUAL-format CSV (the first
    ``limit`` rows when given).

    Raises:
        DataError: the file is missing or unreadable, lacks the ``caption`` or
            ``scene_graph`` column, or a row is malformed (the message names
            ``file:line``).
    """
    path = Path(path)
    items: list[FactualItem] = []
    try:
        fh = open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    with fh:
        reader = csv.DictReader(fh)
        try:
            fields = reader.fieldnames or []
            if "caption" not in fields or "scene_graph" not in fields:
                raise DataError(f"{path}:1: needs the columns 'caption' and 'scene_graph' "
                                f"(found {', '.join(fields) or 'none'})")
            for row in reader:
                where = f"{path}:{reader.line_num}"
                caption, graph = row.get("caption"), row.get("scene_graph")
                if caption is None or graph is None:
                    raise DataError(f"{where}: row has fewer fields than the header")
                groups = _groups(graph, where)
                triples, attributes = _keys(groups)
                phrases = {(relation_key(r), " ".join(r.split())) for _, r, _ in groups}
                items.append(FactualItem(caption, frozenset(triples), frozenset(attributes),
                                         where, frozenset(p for p in phrases if p[0])))
                if limit is not None and len(items) >= limit:
                    break
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}: not UTF-8 text ({exc.reason})") from exc
        except csv.Error as exc:
            raise DataError(f"{path}:{reader.line_num}: not valid CSV ({exc})") from exc
    return items


#: keys of the relations that ``no`` before their object negates
_WITH_KEYS = frozenset(relation_key(w) for w in ("with", "has", "have", "had"))


def names_absence(relation: str, obj: str) -> bool:
    """Whether a relation phrase and its object's phrase say the object is not there
    (``without a lid``, ``with no leaves``, ``has no handle``).  The parser keeps such a
    relation (``the bowl without a lid`` says something about the bowl, and a minimal
    pair ``with`` / ``without`` differs in that relation only); a FACTUAL scene graph
    lists what the picture shows, so :func:`predicted_triples` leaves it out."""
    key = relation_key(relation)
    return key == "without" or (key in _WITH_KEYS and obj.lower().split()[:1] == ["no"])


def predicted_triples(graph: LanguageGraph | SceneGraph) -> set[Triple]:
    """Relation triples of a parser's graph or scene graph (relations without a relation key
    and relations to something absent, :func:`names_absence`, left out)."""
    out: set[Triple] = set()
    for rel in graph.relations:
        r = relation_key(rel.text)
        subj, obj = graph.entities[rel.subject], graph.entities[rel.object]
        if not r or names_absence(rel.text, obj.text):
            continue
        s = head_key(subj.head or subj.text)
        o = head_key(obj.head or obj.text)
        if s and o:
            out.add((s, r, o))
    return out


def predicted_attributes(graph: LanguageGraph | SceneGraph) -> set[Attribute]:
    """``(entity head, modifier)`` pairs of a parser's graph (a scene graph's entities:
    their attributes)."""
    out: set[Attribute] = set()
    for e in graph.entities:
        h = head_key(e.head or e.text)
        for m in (e.attributes if isinstance(e, SceneEntity) else e.modifiers):
            a = attribute_key(m)
            if h and a:
                out.add((h, a))
    return out


#: why a gold triple is missed: its subject and object are related by another relation
#: of the parse, related the other way round, both entities of the parse but not related,
#: or one of them no entity of the parse
MISSED_KINDS = ("other relation", "reversed", "unrelated", "entity missing")

#: why a predicted triple is wrong: its two heads are related in the human graph (by
#: another relation or the other way round), or not
WRONG_KINDS = ("pair related otherwise", "pair not related")


def triple_errors(graph: LanguageGraph | SceneGraph | None, gold: set[Triple],
                  predicted: set[Triple]) -> Counter[str]:
    """The missed gold triples by :data:`MISSED_KINDS` (``"missed: KIND"``) and the wrong
    predicted triples by :data:`WRONG_KINDS` (``"wrong: KIND"``) of one caption whose
    parse is ``graph`` (``None``: rejected) with triples ``predicted``."""
    pairs = {(s, o) for s, _, o in predicted}
    heads = {head_key(e.head or e.text) for e in graph.entities} if graph is not None \
        else set()
    out: Counter[str] = Counter()
    for s, _, o in gold - predicted:
        kind = ("other relation" if (s, o) in pairs else "reversed" if (o, s) in pairs
                else "unrelated" if s in heads and o in heads else "entity missing")
        out[f"missed: {kind}"] += 1
    related = {frozenset((s, o)) for s, _, o in gold}
    for s, _, o in predicted - gold:
        related_otherwise = frozenset((s, o)) in related
        out[f"wrong: {WRONG_KINDS[0] if related_otherwise else WRONG_KINDS[1]}"] += 1
    return out


def score_sets(predicted: Iterable[set | frozenset],
               gold: Iterable[set | frozenset]) -> dict[str, Any]:
    """Micro precision, recall and F1 of per-caption sets and the rate of exact sets.

    Returns:
        ``captions``, ``gold``, ``predicted``, ``true_positives``, ``precision``,
        ``recall``, ``f1`` and ``exact_set_rate``.
    """
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
    return {"captions": n, "gold": n_gold, "predicted": n_pred, "true_positives": tp,
            "precision": precision, "recall": recall, "f1": f1,
            "exact_set_rate": exact / n if n else 0.0}


def evaluate_factual(parser: Any, items: Sequence[FactualItem], max_errors: int = 0,
                     mode: str = "referring") -> dict[str, Any]:
    """Parse every caption of ``items`` with ``parser`` and score relations and attributes.

    ``mode="scene"`` parses each caption into a scene graph (``parse(text, mode="scene")``:
    for captions of several sentences, mentions merged across them) and scores that.
    Captions the parser rejects with :class:`~parsers.base.ParseError` count as empty
    graphs (``parse_failures`` counts them).

    Returns:
        ``mode``, the relation scores of :func:`score_sets` (``captions``, ``gold_triples``,
        ``predicted_triples``, ``true_positives``, ``precision``, ``recall``, ``f1``,
        ``exact_set_rate``), ``missed`` and ``wrong`` (the missed gold triples and the wrong
        predicted ones by kind, :func:`triple_errors`), ``attributes`` (the scores for
        attributes), ``parse_failures``,
        ``seconds``, ``sentences_per_second`` and, with ``max_errors``, ``errors``: up to
        that many captions whose relation set is wrong, with gold and predicted triples.
    """
    texts = [it.text for it in items]
    t0 = time.perf_counter()
    graphs, failures = parse_all(parser, texts, mode)
    elapsed = time.perf_counter() - t0
    preds = [predicted_triples(g) if g is not None else set() for g in graphs]
    pred_attrs = [predicted_attributes(g) if g is not None else set() for g in graphs]
    rel = score_sets(preds, [it.triples for it in items])
    errors_by_kind: Counter[str] = Counter()
    for g, it, p in zip(graphs, items, preds):
        errors_by_kind += triple_errors(g, it.triples, p)
    out: dict[str, Any] = {
        "mode": mode, "captions": rel["captions"], "gold_triples": rel["gold"],
        "predicted_triples": rel["predicted"], "true_positives": rel["true_positives"],
        "precision": rel["precision"], "recall": rel["recall"], "f1": rel["f1"],
        "exact_set_rate": rel["exact_set_rate"],
        "missed": {k: errors_by_kind[f"missed: {k}"] for k in MISSED_KINDS},
        "wrong": {k: errors_by_kind[f"wrong: {k}"] for k in WRONG_KINDS},
        "attributes": score_sets(pred_attrs, [it.attributes for it in items]),
        "parse_failures": failures, "seconds": elapsed,
        "sentences_per_second": len(texts) / elapsed if elapsed > 0 else float("inf"),
    }
    if max_errors:
        errors = []
        for it, p in zip(items, preds):
            if len(errors) >= max_errors:
                break
            if p != it.triples:
                errors.append({"source": it.source, "text": it.text,
                               "gold": sorted(map(list, it.triples)),
                               "predicted": sorted(map(list, p))})
        out["errors"] = errors
    return out


# ------------------------------------------------------------ minimal caption pairs
PAIR_KINDS = ("aligned", "entity_count", "heads", "structure", "no_relation_differs",
              "several_relations_differ", "other_relation", "parse_failure")
"""The outcomes of :func:`align_pair`, in the order the checks run."""

_PUNCT_RE = re.compile(r"^[^\w]+$")


@dataclass(frozen=True)
class CaptionPair:
    """A caption and its copy with one relation replaced.

    Attributes:
        caption: the original caption.
        negative: the edited copy (SugarCrepe's ``negative_caption``).
        source: ``file:line`` (JSONL) or ``file#id`` (JSON).
    """

    caption: str
    negative: str
    source: str


def _pair_record(record: Any, where: str) -> CaptionPair:
    if not isinstance(record, dict):
        raise DataError(f"{where}: a pair must be an object with 'caption' and "
                        f"'negative_caption', got {type(record).__name__}")
    texts = []
    for key in ("caption", "negative_caption"):
        value = record.get(key)
        if not isinstance(value, str) or not value.strip():
            raise DataError(f"{where}: needs a non-empty string field {key!r}"
                            + (f" (got {value!r})" if key in record else ""))
        texts.append(value.strip())
    return CaptionPair(texts[0], texts[1], where)


def read_pairs(path: str | Path, limit: int | None = None) -> list[CaptionPair]:
    """Minimal caption pairs of a JSON or JSONL file (the first ``limit`` when given).

    Each record is an object with the string fields ``caption`` and ``negative_caption``
    (others are ignored).  A ``.jsonl`` file holds one record per line (blank lines
    skipped); any other file is one JSON document: a list of records, or an object whose
    values are records (keyed by id, the layout of SugarCrepe's ``replace_rel.json``).

    Raises:
        DataError: the file is missing, unreadable or not JSON, or a record is malformed;
            the message names ``file:line`` (JSONL), ``file#id`` or ``file#index`` (JSON).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    items: list[CaptionPair] = []
    if path.suffix.lower() == ".jsonl":
        for number, line in enumerate(text.splitlines(), 1):
            if limit is not None and len(items) >= limit:
                break
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{where}: not valid JSON ({exc.msg})") from exc
            items.append(_pair_record(record, where))
        return items
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    if isinstance(doc, dict):
        records = [(f"{path}#{key}", rec) for key, rec in doc.items()]
    elif isinstance(doc, list):
        records = [(f"{path}#{k}", rec) for k, rec in enumerate(doc)]
    else:
        raise DataError(f"{path}: expected a list of pairs or an object of pairs keyed by "
                        f"id, got {type(doc).__name__}")
    for where, record in records[:limit]:
        items.append(_pair_record(record, where))
    return items


def _changed_stretches(a: Sequence[str],
                       b: Sequence[str]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Token ranges ``((a_start, a_end), (b_start, b_end))`` where two token lists differ,
    compared lowercase without punctuation tokens; an insertion has an empty range."""
    ia = [i for i, t in enumerate(a) if not _PUNCT_RE.match(t)]
    ib = [i for i, t in enumerate(b) if not _PUNCT_RE.match(t)]
    wa = [a[i].lower() for i in ia]
    wb = [b[i].lower() for i in ib]

    def where(index: list[int], n: int, i: int, j: int) -> tuple[int, int]:
        if i < j:
            return index[i], index[j - 1] + 1
        at = index[i] if i < len(index) else n
        return at, at

    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, wa, wb,
                                                      autojunk=False).get_opcodes():
        if op != "equal":
            out.append((where(ia, len(a), i1, i2), where(ib, len(b), j1, j2)))
    return out


#: prepositions, particles and adverbs a relation phrase may consist of
_RELATION_PARTICLES = frozenset("""
    about above across after against ahead along alongside amid amidst among amongst apart
    around as aside at atop away before behind below beneath beside besides between beyond by
    close closely down during far for from in inside into near nearby next of off on onto
    opposite out outside over past round through throughout to together toward towards
    under underneath up upon via while with within without
    """.split())
#: place nouns of multi-word prepositions (``in front of``, ``at the edge of``)
_PLACE_NOUNS = frozenset("back bottom center centre edge end front left middle rear right "
                         "side top".split())
_AUXILIARY_WORDS = frozenset("""
    a an the is are was were be been being am has have had having do does did can could will
    would may might not n't no isn't aren't wasn't weren't doesn't don't didn't hasn't haven't
    """.split())


def _relation_word(words: Sequence[str], i: int) -> bool:
    from parsers.word_classes import VERB, WEAK, is_adverb, verb_class

    w = words[i]
    if w in _RELATION_PARTICLES or w in _AUXILIARY_WORDS or w in COPULAS or w in ADVERBS:
        return True
    if w in _PLACE_NOUNS:
        return i + 1 < len(words) and words[i + 1] == "of"
    return w in VERB_FORMS or verb_class(w) in (VERB, WEAK) or is_adverb(w)


def one_relation_edit(caption: str, negative: str) -> bool:
    """Whether two captions differ in one stretch of relation words only.

    Compared lowercase without punctuation, the captions must differ in exactly one
    stretch of consecutive words, and every word of it, on either side, must be a verb form
    (:mod:`parsers.lexicon` or the WordNet word-class table, :mod:`parsers.word_classes`:
    classes ``V`` and ``W``), a preposition, particle or adverb, an article, copula,
    auxiliary or negation, or a place noun followed by ``of`` (``in front of``).  A pair
    that changes, adds or removes a noun (``in the backseat`` / ``outside the car``) or
    changes words in two places is not a one-relation edit.
    """
    a = [t.lower() for t in tokenize(caption) if not _PUNCT_RE.match(t)]
    b = [t.lower() for t in tokenize(negative) if not _PUNCT_RE.match(t)]
    stretches = _changed_stretches(a, b)
    if len(stretches) != 1:
        return False
    (a0, a1), (b0, b1) = stretches[0]
    return all(_relation_word(a, i) for i in range(a0, a1)) and \
        all(_relation_word(b, i) for i in range(b0, b1))


def _words_of(graph: LanguageGraph, span: tuple[int, int]) -> tuple[int, int]:
    """The token range a relation stands for: its span, or for an empty span (a phrase
    written by an annotation convention, ``laying on`` as ``lying on``) the words from
    its place up to the next entity (at least one word)."""
    if span[0] < span[1]:
        return span
    end = min((e.span[0] for e in graph.entities if e.span[0] > span[0]),
              default=len(graph.tokens))
    return span[0], max(end, span[0] + 1)


def _touches(span: tuple[int, int], stretch: tuple[int, int]) -> bool:
    if stretch[0] == stretch[1]:
        return span[0] <= stretch[0] <= span[1]
    return stretch[0] < span[1] and span[0] < stretch[1]


def _entity_head(entity: Any) -> str:
    return (entity.head or entity.text).lower()


def align_pair(first: LanguageGraph | None, second: LanguageGraph | None) -> tuple[str, int | None]:
    """Whether the graphs of a minimal pair align, and which relation differs.

    The checks, in order (the first that fails names the outcome, one of
    :data:`PAIR_KINDS`): both graphs exist (``parse_failure``); the same number of
    entities (``entity_count``); the same head nouns in the same order, lowercase
    (``heads``); the same relations as ``(subject, object)`` index pairs in the same order
    (``structure``); relation phrases compared lowercase, exactly one phrase differs: the
    differing relations share one token span in each caption, as the copies of a phrase
    over coordinated subjects or objects do (``no_relation_differs``,
    ``several_relations_differ``); a stretch of words where the captions differ overlaps
    that span in both captions (``other_relation``; an empty span, that of a phrase
    written by an annotation convention, stands for the words from its place up to the
    next entity).

    Returns:
        the outcome and, for ``aligned``, the index of the (first) differing relation, else
        None.
    """
    if first is None or second is None:
        return "parse_failure", None
    if len(first.entities) != len(second.entities):
        return "entity_count", None
    if [_entity_head(e) for e in first.entities] != [_entity_head(e) for e in second.entities]:
        return "heads", None
    if [(r.subject, r.object) for r in first.relations] != \
            [(r.subject, r.object) for r in second.relations]:
        return "structure", None
    differ = [k for k, (r, q) in enumerate(zip(first.relations, second.relations))
              if " ".join(r.text.lower().split()) != " ".join(q.text.lower().split())]
    if not differ:
        return "no_relation_differs", None
    k = differ[0]
    r, q = first.relations[k].span, second.relations[k].span
    if any(first.relations[j].span != r or second.relations[j].span != q
           for j in differ[1:]):
        return "several_relations_differ", None
    r, q = _words_of(first, r), _words_of(second, q)
    if any(_touches(r, sa) and _touches(q, sb)
           for sa, sb in _changed_stretches(first.tokens, second.tokens)):
        return "aligned", k
    return "other_relation", None


def _triples(graph: LanguageGraph | None) -> list[list[str]]:
    if graph is None:
        return []
    return [[graph.entities[r.subject].text, r.text, graph.entities[r.object].text]
            for r in graph.relations]


def evaluate_pairs(parser: Any, items: Sequence[CaptionPair],
                   max_errors: int = 0) -> dict[str, Any]:
    """Parse both captions of every pair with ``parser`` and count the pairs that align
    (:func:`align_pair`).

    Captions the parser rejects with :class:`~parsers.base.ParseError` make their pair a
    ``parse_failure``.

    Returns:
        ``pairs``, ``aligned``, ``aligned_rate``, ``outcomes`` (the count of every kind of
        :data:`PAIR_KINDS`), ``one_relation_edits`` (``pairs``, ``aligned``,
        ``aligned_rate`` and ``outcomes`` of the pairs :func:`one_relation_edit` accepts),
        ``parse_failures`` (captions), ``seconds``,
        ``sentences_per_second`` and, with ``max_errors``, ``errors``: up to that many pairs
        that do not align, with their outcome, whether they are one-relation edits and
        the triples of both graphs.
    """
    texts = [t for it in items for t in (it.caption, it.negative)]
    t0 = time.perf_counter()
    graphs, failures = parse_all(parser, texts)
    elapsed = time.perf_counter() - t0
    outcomes = dict.fromkeys(PAIR_KINDS, 0)
    edit_outcomes = dict.fromkeys(PAIR_KINDS, 0)
    errors = []
    for n, it in enumerate(items):
        first, second = graphs[2 * n], graphs[2 * n + 1]
        kind, _ = align_pair(first, second)
        edit = one_relation_edit(it.caption, it.negative)
        outcomes[kind] += 1
        if edit:
            edit_outcomes[kind] += 1
        if kind != "aligned" and len(errors) < max_errors:
            errors.append({"source": it.source, "kind": kind, "one_relation_edit": edit,
                           "caption": it.caption, "negative_caption": it.negative,
                           "caption_triples": _triples(first),
                           "negative_triples": _triples(second)})
    n = len(items)
    n_edit = sum(edit_outcomes.values())
    out: dict[str, Any] = {
        "pairs": n, "aligned": outcomes["aligned"],
        "aligned_rate": outcomes["aligned"] / n if n else 0.0, "outcomes": outcomes,
        "one_relation_edits": {
            "pairs": n_edit, "aligned": edit_outcomes["aligned"],
            "aligned_rate": edit_outcomes["aligned"] / n_edit if n_edit else 0.0,
            "outcomes": edit_outcomes},
        "parse_failures": failures, "seconds": elapsed,
        "sentences_per_second": len(texts) / elapsed if elapsed > 0 else float("inf"),
    }
    if max_errors:
        out["errors"] = errors
    return out
