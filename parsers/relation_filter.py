"""Which of a parser's relations a corpus's annotators write, learned with their context.

An :class:`~parsers.style.AnnotationStyle`'s rules decide by the relation and its two heads
alone, counted over a training corpus.  Whether annotators write a relation also depends
on where it stands: a ``with`` two clauses away from its subject, the third relation of
one subject or a relation across a comma in a long caption is wrong far more often than
the same relation in a short caption.  A :class:`RelationFilter` is a logistic regression
over sparse features of each relation of a parse (:func:`relation_features`): the
relation key, alone and with each head; the words and the number of words between the
subject and the relation phrase and between the phrase and the object; the words before
the phrase and after the object; how many relations share its subject or object; whether
its subject is the first thing named; whether the phrase is written in the text (``has``
for ``with`` is not); and the caption's length.  It is fitted on the captions of a
training corpus (each relation of the styled parse labelled by whether its triple is in
the caption's human graph), and its threshold is the one that gives the best triple F1
on two-fold cross-fitted probabilities of the same captions.

A style with a filter drops the relations whose probability is below the threshold instead
of applying its drop rules.  ``rcrn parse-style TRAIN.csv --filter`` fits one (with
``--filter-also OTHER.csv`` its weights also learn from another corpus's parses, labelled
by that corpus's graphs: a small corpus borrows what a large one shows the parser gets
wrong); it is stored in the style's JSON file (the weights of the features seen, rounded).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from parsers.evaluate import Triple, head_key, names_absence, relation_key, score_sets
from parsers.scene import SceneGraph

__all__ = ["Caption", "RelationFilter", "THRESHOLDS", "relation_features", "scored_relations"]

#: the thresholds a filter's fit chooses from (probability that a relation is written)
THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(1, 13))

#: words between a subject and its relation phrase that tell a clause or a list apart
_BETWEEN = frozenset({",", "and", "which", "that", "who", "with", "while", "of", "in",
                      "on", "is", "are", "."})


def _bucket(n: int) -> str:
    if n < 0:
        return "neg"
    return str(n) if n < 4 else "4-6" if n < 7 else "7-10" if n < 11 else "11+"


def _span(graph: Any, index: int, before: int | None = None,
          after: int | None = None) -> tuple[int, int]:
    """The token span of entity ``index``: a language graph's entity has one; of a scene
    entity's mentions the last that ends by ``before`` (the subject of a relation) or the
    first that starts from ``after`` (its object), else its first."""
    entity = graph.entities[index]
    if not isinstance(graph, SceneGraph):
        return entity.span
    mentions = entity.mentions
    if before is not None:
        return next((m for m in reversed(mentions) if m[1] <= before), mentions[0])
    return next((m for m in mentions if after is not None and m[0] >= after), mentions[0])


def relation_features(graph: Any, rel: Any, heads: Sequence[str]) -> list[str]:
    """The features of relation ``rel`` of ``graph`` (a language or scene graph whose
    entities' head keys are ``heads``) that a :class:`RelationFilter` weighs."""
    tokens = graph.tokens
    r, s, o = relation_key(rel.text), heads[rel.subject], heads[rel.object]
    start, end = rel.span
    subject = _span(graph, rel.subject, before=start)
    obj = _span(graph, rel.object, after=end)
    lo, hi = sorted((subject[1], start))
    between = tokens[lo:hi]
    after_object = tokens[obj[1]] if obj[1] < len(tokens) else "$"
    gap, length, written = _bucket(start - subject[1]), _bucket(len(tokens) // 3), start < end
    shared_subject = _bucket(sum(1 for x in graph.relations if x.subject == rel.subject))
    shared_object = _bucket(sum(1 for x in graph.relations if x.object == rel.object))
    entity = graph.entities[rel.subject]
    modified = bool(getattr(entity, "attributes", None) or getattr(entity, "modifiers", None))
    features = [
        "bias", f"r={r}", f"r,o={r},{o}", f"r,s={r},{s}", f"s,r,o={s},{r},{o}", f"s={s}",
        f"o={o}", f"first={rel.subject == 0}", f"object first={rel.object == 0}",
        f"gap={gap}", f"r,gap={r},{gap}", f"object gap={_bucket(obj[0] - end)}",
        f"written={written}", f"between={_bucket(len(between))}",
        f"before={tokens[start - 1] if start > 0 else '^'}", f"after={after_object}",
        f"r,after={r},{after_object}", f"opens={tokens[0] if tokens else ''}",
        f"length={length}", f"relations={_bucket(len(graph.relations))}",
        f"subject relations={shared_subject}", f"r,subject relations={r},{shared_subject}",
        f"object relations={shared_object}", f"subject first={subject[0] < start}",
        f"subject modified={modified}", f"r,length={r},{length}",
        f"gap,length={gap},{length}", f"written,length={written},{length}",
    ]
    features += sorted(f"between {w}" for w in set(between) & _BETWEEN)
    return features


def scored_relations(graph: Any) -> list[tuple[int, Triple, list[str]]]:
    """``(index, triple, features)`` of every relation of ``graph`` that has a triple
    (:func:`parsers.evaluate.predicted_triples` leaves the others out: they are kept
    whatever a filter says)."""
    heads = [head_key(e.head or e.text) for e in graph.entities]
    out = []
    for i, rel in enumerate(graph.relations):
        r = relation_key(rel.text)
        s, o = heads[rel.subject], heads[rel.object]
        if r and s and o and not names_absence(rel.text, graph.entities[rel.object].text):
            out.append((i, (s, r, o), relation_features(graph, rel, heads)))
    return out


@dataclass
class Caption:
    """One training caption for a filter: each relation's triple and features, and the
    triples of its human graph."""

    relations: list[tuple[Triple, list[str]]]
    gold: frozenset[Triple]


@dataclass
class RelationFilter:
    """A logistic regression that keeps a relation when the probability it gives the
    relation's features (:func:`relation_features`) reaches ``threshold``.

    Attributes:
        weights: the weight of each feature (features not listed weigh 0).
        threshold: the probability from which a relation is kept.
    """

    weights: dict[str, float] = field(default_factory=dict)
    threshold: float = 0.5

    def probability(self, features: Sequence[str]) -> float:
        z = sum(self.weights.get(f, 0.0) for f in features)
        return 1.0 / (1.0 + math.exp(-max(min(z, 60.0), -60.0)))

    def keeps(self, features: Sequence[str]) -> bool:
        return self.probability(features) >= self.threshold

    # ---------------------------------------------------------------- fitting
    @classmethod
    def fit(cls, captions: Sequence[Caption], threshold: float | None = None,
            epochs: int = 6, seed: int = 0, also: Sequence[Caption] = ()) -> RelationFilter:
        """The filter of ``captions``: weights fitted on all of them, and ``threshold`` or
        by default the threshold of :data:`THRESHOLDS` with the best triple F1 over them
        when each half's probabilities come from weights fitted on the other half.

        ``also``: captions of another corpus that every fit learns from as well (what a
        parser gets wrong is much the same across corpora; the threshold is still chosen
        on ``captions`` alone)."""
        weights = _fit_weights([*captions, *also], epochs, seed)
        if threshold is not None:
            return cls(weights, threshold)
        order = torch.randperm(len(captions), generator=torch.Generator().manual_seed(seed))
        halves = ([captions[i] for i in order[0::2]], [captions[i] for i in order[1::2]])
        held_out: list[Caption] = []
        scored: list[float] = []
        for train, held in ((halves[0], halves[1]), (halves[1], halves[0])):
            half = cls(_fit_weights([*train, *also], epochs, seed))
            held_out += held
            scored += [half.probability(f) for c in held for _, f in c.relations]
        return cls(weights, max(THRESHOLDS, key=lambda t: (_f1(held_out, scored, t), -t)))

    # ------------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "weights": dict(sorted(self.weights.items()))}

    @classmethod
    def from_dict(cls, d: Any, where: str, error: type[Exception]) -> RelationFilter:
        """The filter of a :meth:`to_dict` dict; ``error`` (one line naming ``where``) when
        it is not one."""
        if not isinstance(d, dict):
            raise error(f"{where}: expected an object with 'threshold' and 'weights'")
        threshold = d.get("threshold")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) \
                or not 0 < threshold < 1:
            raise error(f"{where}.threshold: expected a number between 0 and 1, got "
                        f"{threshold!r:.40}")
        weights = d.get("weights")
        if not isinstance(weights, dict):
            raise error(f"{where}.weights: expected an object of feature weights")
        for name, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w):
                raise error(f"{where}.weights[{name!r:.60}]: expected a finite number, got "
                            f"{w!r:.40}")
        return cls({str(k): float(w) for k, w in weights.items()}, float(threshold))


def _fit_weights(captions: Sequence[Caption], epochs: int, seed: int) -> dict[str, float]:
    """Logistic-regression weights of the captions' relations (Adagrad on the log loss,
    batches of 256, the order shuffled by ``seed``), rounded to 4 decimals, those that
    round to 0 left out."""
    rows = [(f, float(t in c.gold)) for c in captions for t, f in c.relations]
    if not rows:
        return {}
    vocab: dict[str, int] = {}
    ids = [torch.tensor([vocab.setdefault(x, len(vocab)) for x in f]) for f, _ in rows]
    labels = torch.tensor([y for _, y in rows])
    table = torch.nn.EmbeddingBag(len(vocab), 1, mode="sum")
    torch.nn.init.zeros_(table.weight)
    optimiser = torch.optim.Adagrad(table.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        order = torch.randperm(len(rows), generator=generator).tolist()
        for b in range(0, len(order), 256):
            batch = order[b:b + 256]
            flat = torch.cat([ids[i] for i in batch])
            offsets = torch.tensor([0] + [len(ids[i]) for i in batch[:-1]]).cumsum(0)
            z = table(flat, offsets).squeeze(1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(z, labels[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    w = table.weight.detach().squeeze(1).tolist()
    return {x: round(w[i], 4) for x, i in vocab.items() if round(w[i], 4) != 0}


def _f1(captions: Sequence[Caption], probabilities: Sequence[float], threshold: float) -> float:
    """Micro triple F1 of ``captions`` keeping the relations whose probability (in the
    order of the captions' relations) reaches ``threshold``."""
    it = iter(probabilities)
    kept = [{t for t, _ in c.relations if next(it) >= threshold} for c in captions]
    return score_sets(kept, [c.gold for c in captions])["f1"]
