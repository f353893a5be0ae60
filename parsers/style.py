"""Annotation style: how the annotators of a scene-graph corpus write relations and
attributes, learned.

Human scene graphs write relations in a vocabulary of their own.  FACTUAL's annotators
write ``under`` for ``beneath`` and ``below``, ``on middle of`` for ``in the middle of``,
``at left of`` for ``to the left of``, ``( hand , hold , cup )`` the other way round
from ``a cup held in a hand``, and leave out what a caption says its subject is doing when
it names nothing done to (``taking``, ``doing``).  Nor do they write every modifier as an
attribute: not the noun of a compound (``baseball`` in ``a baseball player``, ``tennis``,
``street``), nor a quantity (``many``, ``several``, ``a lot of``).  A parser that keeps the
words of the text (and must, for template captions whose relation is the text's phrase)
loses those triples however well it attaches.

An :class:`AnnotationStyle` learns such conventions from a training corpus: it parses
every caption and compares each predicted relation triple ``(subject head, relation,
object head)`` and attribute ``(entity head, attribute)`` (the keys of
:mod:`parsers.evaluate`) with the caption's human graph.  A triple is labelled *keep* (it
is in the gold), *relabel* (the gold relates the same two heads with another relation),
*flip* (the gold relates them the other way round) or *drop* (neither); an attribute
*keep* or *drop*.  The labels are counted under keys of decreasing detail: ``(relation,
subject, object)``, ``(relation, object)``, ``(relation, subject)`` and ``(relation)`` for
a triple, ``(attribute, head)`` and ``(attribute)`` for an attribute.  A key seen at least
``min_count`` times decides by its most frequent label when that label holds at least
``share`` of them (a tie goes to *keep*).  Applying the style, each relation and attribute
takes the decision of its most detailed key that has one; a relabelled relation gets the
phrase the annotators wrote most often for the new key.

A style may also carry a learned :class:`~parsers.relation_filter.RelationFilter`, which
weighs each relation's context as well and decides the drops instead of the drop rules.

:class:`StyledParser` wraps any parser with a style.  A dropped relation leaves a scene
graph; a language graph must stay a tree, so there the relation keeps its link between
the two entities with an empty phrase (as the parser writes a link it cannot name, and as
:func:`parsers.evaluate.predicted_triples` leaves out).  A style is
a JSON file (:meth:`AnnotationStyle.save`, :meth:`AnnotationStyle.load`); ``rcrn
parse-style`` fits one from a FACTUAL-format CSV, and ``--style FILE`` applies it in
``rcrn parse`` and ``rcrn parse-eval``.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from parsers.base import BaseParser, ParseError, ParseResult
from parsers.evaluate import (
    FactualItem,
    attribute_key,
    head_key,
    names_absence,
    parse_all,
    predicted_attributes,
    predicted_triples,
    relation_key,
)
from parsers.relation_filter import Caption, RelationFilter, scored_relations
from parsers.scene import SceneGraph
from rcrn.errors import RcrnError
from rcrn.structures import LanguageGraph

__all__ = ["StyleError", "Decision", "AnnotationStyle", "StyledParser", "ACTIONS", "FORMAT"]

FORMAT = "rcrn-annotation-style"
ACTIONS = ("keep", "relabel", "flip", "drop")
"""What a style does to a relation."""

#: the keys a decision is looked up under, most detailed first
_LEVELS = (("subject", "object"), ("object",), ("subject",), ())

Key = tuple[str, str, str]
"""``(relation, subject head, object head)``, ``""`` where the level leaves it out; an
attribute's keys are ``(attribute, head, "")`` and ``(attribute, "", "")``."""


class StyleError(RcrnError, ValueError):
    """A style file that cannot be read (the message names the file and the rule)."""


@dataclass(frozen=True)
class Decision:
    """What a style does to a relation: an action of :data:`ACTIONS` and, for relabel and
    flip, the relation key written instead."""

    action: str
    relation: str = ""


def _keys(s: str, r: str, o: str) -> list[Key]:
    """The keys of a triple, most detailed first, each once (an attribute's triple has no
    object, so its levels with and without the object are one key)."""
    return list(dict.fromkeys((r, s if "subject" in level else "", o if "object" in level
                               else "") for level in _LEVELS))


def _label(triple: tuple[str, str, str], gold: frozenset | set) -> Decision:
    s, r, o = triple
    if triple in gold:
        return Decision("keep")
    same = sorted(g[1] for g in gold if g[0] == s and g[2] == o)
    if same:
        return Decision("relabel", same[0])
    swapped = sorted(g[1] for g in gold if g[0] == o and g[2] == s)
    if swapped:
        return Decision("flip", swapped[0])
    return Decision("drop")


@dataclass
class AnnotationStyle:
    """Relation and attribute conventions learned from a corpus (see the module
    docstring).

    Attributes:
        relations: the decision of every relation key that has one (``keep`` decisions only
            where they stop a less detailed key's change).
        attributes: the same for attribute keys (``keep`` or ``drop``).
        phrases: the phrase written for each relation key a rule relabels or flips to.
        min_count, share: the thresholds the rules were fitted with.
        source: what the style was fitted on (free text, for the reader).
        filter: where the style has one, the learned filter
            (:class:`parsers.relation_filter.RelationFilter`) that decides which relations
            are dropped instead of the drop rules.
    """

    relations: dict[Key, Decision] = field(default_factory=dict)
    attributes: dict[Key, Decision] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)
    min_count: int = 3
    share: float = 0.5
    source: str = ""
    filter: RelationFilter | None = None

    # ---------------------------------------------------------------- fitting
    @classmethod
    def fit(cls, parser: Any, items: Sequence[FactualItem], mode: str = "referring",
            min_count: int = 3, share: float = 0.5, source: str = "",
            learn_filter: bool = False, filter_threshold: float | None = None,
            filter_also: Sequence[FactualItem] = ()) -> AnnotationStyle:
        """Learn the style of ``items`` (captions with human scene graphs) for ``parser``'s
        graphs in ``mode``, with a :class:`~parsers.relation_filter.RelationFilter`
        fitted on the relations of the styled graphs when ``learn_filter`` (keeping a
        relation from probability ``filter_threshold``; by default the threshold
        :meth:`~parsers.relation_filter.RelationFilter.fit` chooses), and also on the
        relations of ``filter_also``'s graphs as the parser writes them (captions of
        another corpus, labelled by their own human graphs: more examples of what the
        parser gets wrong; nothing else of the style is learned from them).  Captions the
        parser rejects are skipped."""
        if filter_also and not learn_filter:
            raise ValueError("filter_also is for the relation filter: give learn_filter")
        if min_count < 1 or not 0 < share <= 1:
            raise ValueError(f"min_count must be >= 1 and share in (0, 1], got "
                             f"{min_count} and {share}")
        counts: dict[Key, Counter[Decision]] = defaultdict(Counter)
        attribute_counts: dict[Key, Counter[Decision]] = defaultdict(Counter)
        written: dict[str, Counter[str]] = defaultdict(Counter)
        parsed = []
        for item in items:
            for key, phrase in item.phrases:
                written[key][phrase] += 1
            try:
                graph = parser.parse(item.text, mode=mode)
            except ParseError:
                continue
            if learn_filter:
                parsed.append((graph, item.triples))
            for triple in predicted_triples(graph):
                decision = _label(triple, item.triples)
                for key in _keys(*triple):
                    counts[key][decision] += 1
            for head, attribute in predicted_attributes(graph):
                decision = Decision("keep" if (head, attribute) in item.attributes
                                    else "drop")
                for key in _keys(head, attribute, ""):
                    attribute_counts[key][decision] += 1
        style = cls(min_count=min_count, share=share, source=source)
        style.relations = style._decide(counts)
        style.attributes = style._decide(attribute_counts)
        targets = {d.relation for d in style.relations.values() if d.relation}
        style.phrases = {k: _most_common(written[k]) if written[k] else k
                         for k in sorted(targets)}
        if learn_filter:
            def caption(graph: LanguageGraph | SceneGraph, gold: frozenset) -> Caption:
                return Caption([(t, f) for _, t, f in scored_relations(graph)], gold)

            graphs, _ = parse_all(parser, [item.text for item in filter_also], mode)
            also = [caption(g, item.triples) for g, item in zip(graphs, filter_also)
                    if g is not None]
            style.filter = RelationFilter.fit(
                [caption(style._apply(g, drops=False), gold) for g, gold in parsed],
                threshold=filter_threshold, also=also)
        return style

    def _decide(self, counts: dict[Key, Counter[Decision]]) -> dict[Key, Decision]:
        """The rules of ``counts``: the decision of every key seen ``min_count`` times."""
        rules: dict[Key, Decision] = {}
        for key, c in counts.items():
            total = sum(c.values())
            if total < self.min_count:
                continue
            best, n = max(c.items(), key=lambda kv: (kv[1], kv[0].action == "keep",
                                                     kv[0].action, kv[0].relation))
            change = best.action != "keep" and n >= self.share * total
            rules[key] = best if change else Decision("keep")
        return _pruned(rules)

    # --------------------------------------------------------------- applying
    def decision(self, subject: str, relation: str, obj: str) -> Decision:
        """What the style does to the triple of keys ``(subject, relation, obj)``."""
        return _look_up(self.relations, _keys(subject, relation, obj))

    def attribute_decision(self, head: str, attribute: str) -> Decision:
        """What the style does to the attribute of keys ``(head, attribute)``: keep or
        drop."""
        return _look_up(self.attributes, _keys(head, attribute, ""))

    def apply(self, graph: LanguageGraph | SceneGraph) -> LanguageGraph | SceneGraph:
        """A copy of ``graph`` with its relations and attributes written in this style.

        A dropped relation (by the drop rules, or by :attr:`filter` where the style has
        one) leaves a scene graph; in a language graph it stays the tree's link between
        its two entities with an empty phrase, as the parser writes a link it cannot
        name, so the graph stays a tree."""
        return self._apply(graph, drops=True)

    def _apply(self, graph: LanguageGraph | SceneGraph,
               drops: bool) -> LanguageGraph | SceneGraph:
        scene = isinstance(graph, SceneGraph)
        heads = [head_key(e.head or e.text) for e in graph.entities]
        entities = [self._entity(e, h, scene) for e, h in zip(graph.entities, heads)]
        relations = []          # (relation, whether the style changed it, whether it drops)
        for rel in graph.relations:
            r = relation_key(rel.text)
            d = Decision("keep")
            if r and not names_absence(rel.text, graph.entities[rel.object].text):
                d = self.decision(heads[rel.subject], r, heads[rel.object])
            if d.action in ("relabel", "flip"):
                subj, obj = (rel.object, rel.subject) if d.action == "flip" else \
                    (rel.subject, rel.object)
                rel = replace(rel, subject=subj, object=obj,
                              text=self.phrases.get(d.relation, d.relation))
            relations.append((rel, d.relation != "", drops and d.action == "drop"))
        if drops and self.filter is not None:        # the filter decides instead
            styled = replace(graph, relations=[r for r, _, _ in relations])
            dropped = {i for i, _, features in scored_relations(styled)
                       if not self.filter.keeps(features)}
            relations = [(rel, changed, i in dropped)
                         for i, (rel, changed, _) in enumerate(relations)]
        if not scene:
            return LanguageGraph(graph.tokens, entities,
                                 [replace(r, text="", span=(r.span[0], r.span[0])) if drop
                                  else r for r, _, drop in relations],
                                 graph.root, graph.text)

        def key(r: Any) -> tuple[int, str, int]:
            return r.subject, relation_key(r.text), r.object

        relations = [(r, changed) for r, changed, drop in relations if not drop]
        # a scene graph may relate two things twice, but not by the same relation
        seen = {key(r) for r, changed in relations if not changed}
        out = []
        for rel, changed in relations:
            if changed:
                if key(rel) in seen:
                    continue
                seen.add(key(rel))
            out.append(rel)
        return replace(graph, entities=entities, relations=out)

    def _entity(self, entity: Any, head: str, scene: bool) -> Any:
        """``entity`` without the attributes (a scene entity's) or modifiers (a language
        graph's) the style drops."""
        name = "attributes" if scene else "modifiers"
        words = getattr(entity, name)
        keys = [attribute_key(w) for w in words]
        kept = [w for w, a in zip(words, keys) if not head or not a
                or self.attribute_decision(head, a).action != "drop"]
        return entity if len(kept) == len(words) else replace(entity, **{name: kept})

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        rules = []
        for (r, s, o), d in sorted(self.relations.items()):
            rule: dict[str, Any] = {"relation": r}
            if s:
                rule["subject"] = s
            if o:
                rule["object"] = o
            rule["action"] = d.action
            if d.relation:
                rule["to"] = d.relation
            rules.append(rule)
        attributes = [{"attribute": a, **({"head": h} if h else {}), "action": d.action}
                      for (a, h, _), d in sorted(self.attributes.items())]
        return {"format": FORMAT, "version": 1, "source": self.source,
                "min_count": self.min_count, "share": self.share,
                "phrases": dict(sorted(self.phrases.items())), "relations": rules,
                "attributes": attributes,
                **({"filter": self.filter.to_dict()} if self.filter else {})}

    @classmethod
    def from_dict(cls, d: Any, where: str = "style") -> AnnotationStyle:
        """The style of a :meth:`to_dict` dict.

        Raises:
            StyleError: one line naming ``where`` and the field or rule at fault.
        """
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise StyleError(f"{where}: not an annotation style (expected 'format': "
                             f"{FORMAT!r})")
        if d.get("version") != 1:
            raise StyleError(f"{where}: unsupported version {d.get('version')!r} (this "
                             f"toolkit reads version 1)")
        phrases = d.get("phrases", {})
        if not isinstance(phrases, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in phrases.items()):
            raise StyleError(f"{where}.phrases: expected an object of strings")
        rules = {}
        for k, rule in enumerate(_records(d, "relations", where)):
            at = f"{where}.relations[{k}]"
            r, s, o, to = (_text(rule, name, at) for name in ("relation", "subject", "object",
                                                              "to"))
            action = rule.get("action")
            if not r:
                raise StyleError(f"{at}.relation: missing")
            if action not in ACTIONS:
                raise StyleError(f"{at}.action: expected one of {', '.join(ACTIONS)}, got "
                                 f"{action!r:.40}")
            if (action in ("relabel", "flip")) != bool(to):
                raise StyleError(f"{at}.to: {'needed' if to == '' else 'not expected'} "
                                 f"with action {action!r}")
            rules[(r, s, o)] = Decision(action, to)
        attributes = {}
        for k, rule in enumerate(_records(d, "attributes", where)):
            at = f"{where}.attributes[{k}]"
            a, h = _text(rule, "attribute", at), _text(rule, "head", at)
            action = rule.get("action")
            if not a:
                raise StyleError(f"{at}.attribute: missing")
            if action not in ("keep", "drop"):
                raise StyleError(f"{at}.action: expected keep or drop, got {action!r:.40}")
            attributes[(a, h, "")] = Decision(action)
        try:
            min_count, share = int(d.get("min_count", 3)), float(d.get("share", 0.5))
        except (TypeError, ValueError) as exc:
            raise StyleError(f"{where}: min_count and share must be numbers") from exc
        learned = d.get("filter")
        return cls(rules, attributes, dict(phrases), min_count, share,
                   str(d.get("source", "")),
                   None if learned is None else
                   RelationFilter.from_dict(learned, f"{where}.filter", StyleError))

    def save(self, path: str | Path) -> Path:
        """Write the style as JSON (atomically: a reader sees the old file or the new)."""
        from rcrn.engine.trainer import atomic_write

        path = Path(path)
        text = json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n"
        atomic_write(path, lambda f: f.write(text.encode("utf-8")))
        return path

    @classmethod
    def load(cls, path: str | Path) -> AnnotationStyle:
        """Read a style file.

        Raises:
            StyleError: the file is missing, not JSON or not a style (naming it).
        """
        path = Path(path)
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise StyleError(f"{path}: cannot read ({exc.strerror or exc})") from exc
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StyleError(f"{path}: not a JSON file ({exc})") from exc
        return cls.from_dict(d, str(path))

    def summary(self) -> dict[str, Counter[str]]:
        """How many rules of each action the style has, for relations and attributes."""
        return {"relations": Counter(d.action for d in self.relations.values()),
                "attributes": Counter(d.action for d in self.attributes.values())}


def _pruned(rules: dict[Key, Decision]) -> dict[Key, Decision]:
    """``rules`` less the keys whose removal changes no lookup of
    :meth:`AnnotationStyle.decision`: a key goes when every triple that reaches it would
    get the same decision from the keys after it.  The least detailed keys go first, so
    each step keeps every lookup as it was."""
    rules = dict(rules)
    keep = Decision("keep")

    def general(r: str) -> Decision:
        return rules.get((r, "", ""), keep)

    by_subject: dict[str, set[Decision]] = defaultdict(set)
    for key in [k for k in rules if not k[1] and not k[2]]:
        if rules[key] == keep:
            del rules[key]
    for key in [k for k in rules if k[1] and not k[2]]:
        if rules[key] == general(key[0]):
            del rules[key]
        else:
            by_subject[key[0]].add(rules[key])
    for key in [k for k in rules if not k[1] and k[2]]:
        if rules[key] == general(key[0]) and by_subject[key[0]] <= {rules[key]}:
            del rules[key]
    for key in [k for k in rules if k[1] and k[2]]:
        r, s, o = key
        after = rules.get((r, "", o)) or rules.get((r, s, "")) or general(r)
        if rules[key] == after:
            del rules[key]
    return rules


def _records(d: dict[str, Any], name: str, where: str) -> list[dict[str, Any]]:
    """The list of objects ``d[name]`` of a style file (none when absent)."""
    records = d.get(name, [])
    if not isinstance(records, list):
        raise StyleError(f"{where}.{name}: expected a list")
    for k, record in enumerate(records):
        if not isinstance(record, dict):
            raise StyleError(f"{where}.{name}[{k}]: expected an object, got "
                             f"{type(record).__name__}")
    return records


def _text(record: dict[str, Any], name: str, where: str) -> str:
    value = record.get(name, "")
    if not isinstance(value, str):
        raise StyleError(f"{where}.{name}: expected a string, got {value!r:.40}")
    return value


def _look_up(rules: dict[Key, Decision], keys: list[Key]) -> Decision:
    for key in keys:
        if key in rules:
            return rules[key]
    return Decision("keep")


def _most_common(c: Counter[str]) -> str:
    return max(c.items(), key=lambda kv: (kv[1], -len(kv[0]), kv[0]))[0]


class StyledParser(BaseParser):
    """A parser whose graphs are written in a :class:`AnnotationStyle`."""

    def __init__(self, parser: Any, style: AnnotationStyle) -> None:
        super().__init__()
        self.parser, self.style = parser, style
        self.name = f"{getattr(parser, 'name', 'parser')}+style"

    def analyse(self, text: str) -> ParseResult:
        result = self.parser.analyse(text)
        return ParseResult(self.style.apply(result.graph), list(result.warnings))

    def analyse_scene(self, text: str) -> ParseResult:
        result = self.parser.analyse_scene(text)
        return ParseResult(self.style.apply(result.graph), list(result.warnings))
