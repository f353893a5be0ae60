"""The ``rule`` parser recovers the gold graph of generated synthetic expressions.

The synthetic grammar (``benchmarks/synthetic/expressions.py``) chains a clause
without "and" to the entity just before it and attaches a clause starting with
"and" to the subject of the nearest open clause; "has" and "with" before
"the same color as" introduce the clause and are not part of the relation.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.synthetic import GeneratorConfig, generate_dataset
from parsers.rule import RuleParser
from rcrn.structures import LanguageGraph


@pytest.fixture(scope="module")
def rule() -> RuleParser:
    return RuleParser()


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> list[dict]:
    root = tmp_path_factory.mktemp("synthetic")
    generate_dataset(root, GeneratorConfig(scenes=60, seed=3), progress=False)
    out = []
    for path in sorted(Path(root, "annotations").glob("*.jsonl")):
        with open(path, encoding="utf-8") as f:
            out.extend(json.loads(line) for line in f if line.strip())
    return out


def structure(g: LanguageGraph) -> tuple:
    """Entity spans, (subject span, object span, text, span) of every relation, root span."""
    spans = [tuple(e.span) for e in g.entities]
    relations = sorted((spans[r.subject], spans[r.object], r.text, tuple(r.span))
                       for r in g.relations)
    return sorted(spans), relations, spans[g.root]


def triples(g: LanguageGraph) -> list[tuple[str, str, str]]:
    return [(g.entities[r.subject].text, r.text, g.entities[r.object].text) for r in g.relations]


def test_generated_expressions_parse_to_their_gold_structure(rule, records):
    assert len(records) > 300
    assert any(" and " in r["text"] for r in records)
    assert any(" has " in r["text"] for r in records)
    failures = []
    for rec in records:
        gold = LanguageGraph.from_dict(rec["graph"])
        parsed = rule.parse(rec["text"])
        if parsed.tokens != gold.tokens or structure(parsed) != structure(gold):
            failures.append(f"{rec['text']!r}: gold {triples(gold)} parsed {triples(parsed)}")
    assert not failures, f"{len(failures)}/{len(records)} wrong:\n" + "\n".join(failures[:20])


def test_generated_entities_keep_head_and_modifiers(rule, records):
    for rec in records:
        gold = LanguageGraph.from_dict(rec["graph"])
        result = rule.analyse(rec["text"])
        assert result.warnings == [], rec["text"]
        got = [(e.text, e.head, e.modifiers) for e in result.graph.entities]
        assert got == [(e.text, e.head, e.modifiers) for e in gold.entities], rec["text"]


@pytest.mark.parametrize("connector", ["", "that is ", "which is ", "is "])
def test_and_clause_continues_the_relative_clause_subject(rule, connector):
    g = rule.parse(f"the circle that is to the left of the square and {connector}"
                   "above the triangle")
    assert triples(g) == [("the circle", "to the left of", "the square"),
                          ("the circle", "above", "the triangle")]
    assert g.root == 0


@pytest.mark.parametrize("connector", ["", "that is ", "which is ", "is "])
def test_and_clause_attaches_to_the_nearest_open_clause(rule, connector):
    g = rule.parse("the circle that is near the square that is below the cross and "
                   f"{connector}above the triangle")
    assert triples(g) == [("the circle", "near", "the square"),
                          ("the square", "below", "the cross"),
                          ("the square", "above", "the triangle")]


def test_and_clause_after_a_reduced_relative(rule):
    g = rule.parse("the blue circle far from the red square and near the cross")
    assert [e.text for e in g.entities] == ["the blue circle", "the red square", "the cross"]
    assert triples(g) == [("the blue circle", "far from", "the red square"),
                          ("the blue circle", "near", "the cross")]


def test_coordinated_objects_share_the_relation(rule):
    g = rule.parse("the circle to the left of the square and the triangle")
    assert triples(g) == [("the circle", "to the left of", "the square"),
                          ("the circle", "to the left of", "the triangle")]


@pytest.mark.parametrize("connector", ["that has", "which has", "with", "has"])
def test_light_verb_stays_out_of_a_comparison(rule, connector):
    text = f"the object {connector} the same color as the red cross"
    if connector == "has":
        text = "the object that is near the square and has the same color as the red cross"
    g = rule.parse(text)
    r = g.relations[-1]
    assert r.text == "the same color as"
    assert g.span_text(r.span) == "the same color as"
    assert g.entities[r.subject].text == "the object"


def test_light_verbs_elsewhere_stay_relations(rule):
    assert triples(rule.parse("the man with the hat")) == [("the man", "with", "the hat")]
    assert triples(rule.parse("the man who has a dog")) == [("the man", "has", "a dog")]


def test_second_relative_clause_of_an_object_relative(rule):
    g = rule.parse("the dog that the man is holding and that is near the car")
    assert triples(g) == [("the man", "holding", "the dog"), ("the dog", "near", "the car")]


def test_attribute_coordination_is_not_a_clause(rule):
    g = rule.parse("the square and near the circle")
    assert triples(g) == [("the square", "near", "the circle")]
    g = rule.parse("a black and white cat on the mat")
    assert triples(g) == [("a black and white cat", "on", "the mat")]
