"""The seventh round of rules of the ``rule`` parser (docs/parsers.md, "A seventh
round"): parses that came out plainly wrong on text the rules were not written for.
Captions written here."""

from __future__ import annotations

import pytest

# the fixtures ``rule`` and ``triples_of`` are those of conftest.py


@pytest.mark.parametrize("text, triple", [
    # a verb of placing after a copula stays in the relation, as FACTUAL writes it
    ("the plate was placed on the floor", ("plate", "placed on", "floor")),
    ("a box of tools that has been placed on a shelf", ("box", "placed on", "shelf")),
    ("a vase is put on a shelf", ("vase", "put on", "shelf")),
    # a filler of place still goes (``located``, ``seen``)
    ("the lamp is located next to the bed", ("lamp", "next to", "bed")),
])
def test_verb_of_placing_after_a_copula(rule, triples_of, text, triple):
    assert triple in triples_of(rule.parse(text))


@pytest.mark.parametrize("text, triple", [
    # a posture participle ends a clause opened by "where": its verb, placed there
    ("the chair where the kid is sitting", ("kid", "sitting on", "chair")),
    ("a bedroom where one person is also sitting .", ("person", "sitting in", "bedroom")),
    ("a bench where a man is standing , eating", ("man", "standing on", "bench")),
])
def test_posture_participle_ends_a_where_clause(rule, triples_of, text, triple):
    graph = rule.parse(text)
    assert triple in triples_of(graph)
    assert all(e.head not in ("sitting", "standing") for e in graph.entities)


def test_posture_participle_after_a_copula_elsewhere_stays_a_state(rule):
    graph = rule.parse("a man is sitting .")
    assert len(graph.entities) == 1 and "sitting" in graph.entities[0].modifiers
