"""Attachment in long, multi-clause captions (``rule``): whom a late participle, a clause
after ``and`` or a copula after a list describes."""

from __future__ import annotations

import pytest

import parsers


@pytest.fixture(scope="module")
def rule():
    return parsers.load("rule")


def _triples(graph):
    ents = graph.entities
    return {(ents[r.subject].head, r.text, ents[r.object].head) for r in graph.relations}


@pytest.mark.parametrize("text, wanted, unwanted", [
    # an -ing participle after a verb's object describes the verb's subject
    ("a girl sitting on a bench reading a book",
     {("girl", "sitting on", "bench"), ("girl", "reading", "book")},
     {("bench", "reading", "book")}),
    ("a boy riding a bike wearing a helmet",
     {("boy", "riding", "bike"), ("boy", "wearing", "helmet")},
     {("bike", "wearing", "helmet")}),
    # after a preposition's object any verb does, as before
    ("a woman next to a car holding a phone",
     {("woman", "next to", "car"), ("woman", "holding", "phone")}, set()),
])
def test_late_participles_describe_the_clause_subject(rule, text, wanted, unwanted):
    got = _triples(rule.parse(text))
    assert wanted <= got
    assert not unwanted & got
