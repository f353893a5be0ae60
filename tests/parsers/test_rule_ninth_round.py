"""The ninth round of rules of the ``rule`` parser (docs/parsers.md, "A ninth round"):
parses that came out plainly wrong on text the rules were not written for. Captions
written here."""

from __future__ import annotations

import pytest

# the fixtures ``rule`` and ``triples_of`` are those of conftest.py


@pytest.mark.parametrize("text, present, absent", [
    # a conjunct with a place phrase of its own, after a place phrase, is another thing
    # placed: the partner of the last relation's subject, not one more object of it
    ("a plate on the table and a cup on the chair",
     {("plate", "on", "table"), ("cup", "on", "chair")}, {("plate", "on", "cup")}),
    ("a dog on the couch and a cat under the table",
     {("dog", "on", "couch"), ("cat", "under", "table")}, {("dog", "on", "cat")}),
    ("a man with a hat on his head and a bag over his shoulder",
     {("man", "with", "hat"), ("man", "with", "bag"), ("bag", "over", "shoulder")},
     {("hat", "on", "bag")}),
    # ... not after "with", where the conjuncts share the place phrase's subject
    ("a kitchen with a table and chairs in the middle",
     {("kitchen", "with", "table"), ("kitchen", "with", "chairs")}, set()),
    # ... nor after clothing
    ("a girl in a blue shirt and white shorts on the field",
     {("girl", "on", "field")}, {("shorts", "on", "field")}),
    # ... nor before a verb, whose subject is the clause's
    ("a man with dark hair and a blue jacket walks the sidewalk",
     {("man", "walks", "sidewalk")}, {("jacket", "walks", "sidewalk")}),
    # a comma list of attributes with participles stays one noun phrase
    ("a woman in a long , flowing , red dress", {("woman", "wearing", "dress")}, set()),
    # a conjunct without a phrase of its own still shares the relation
    ("a cup left of the plate and the bowl",
     {("cup", "left of", "plate"), ("cup", "left of", "bowl")}, set()),
])
def test_relations_of_a_caption(rule, triples_of, text, present, absent):
    triples = set(triples_of(rule.parse(text)))
    assert present <= triples
    assert not absent & triples


@pytest.mark.parametrize("text, heads, attributes", [
    # a participle after a comma of attribute words, before the noun, is one more of them
    ("A man stands amidst tall , swaying grass .", {"man", "grass"},
     {"grass": {"tall", "swaying"}}),
    ("a woman in a long , flowing dress", {"woman", "dress"},
     {"dress": {"long", "flowing"}}),
    # ... or anywhere in the list, and after a participle when an attribute word follows
    ("a woman in a long , flowing , red dress", {"woman", "dress"},
     {"dress": {"long", "flowing", "red"}}),
    ("a woman in a long flowing , red dress", {"woman", "dress"},
     {"dress": {"long", "flowing", "red"}}),
    ("a tall , swaying , green tree near a fence", {"tree", "fence"},
     {"tree": {"tall", "swaying", "green"}}),
    # ... but a noun in -ing before the comma stays the noun
    ("towers laced with blue piping , standing as sentinels", {"towers", "piping"},
     {"piping": {"blue"}}),
    # ... not after a copula, where it opens a clause
    ("the grass is tall , covering hills", {"grass", "hills"}, {}),
])
def test_participle_in_a_list_of_attributes(rule, text, heads, attributes):
    g = rule.parse(text)
    assert {e.head for e in g.entities} == heads
    for head, expected in attributes.items():
        entity = next(e for e in g.entities if e.head == head)
        assert expected <= set(entity.modifiers)


@pytest.mark.parametrize("text, present, absent", [
    # "top" after an attribute word is the garment: the phrase ends there
    ("a girl in a white top runs toward a red van",
     {("girl", "runs toward", "van")}, {("girl", "in", "runs")}),
    ("a woman in a dark top and white bottoms sitting on a beach",
     {("woman", "sitting on", "beach")}, set()),
    # ... and clothing: "in" it is worn
    ("young man in tank top on skateboard", {("man", "on", "skateboard")},
     {("top", "on", "skateboard")}),
    # ... not right after a determiner
    ("the top shelf holds books", {("shelf", "holds", "books")}, set()),
])
def test_top_as_a_garment(rule, triples_of, text, present, absent):
    triples = set(triples_of(rule.parse(text)))
    assert present <= triples
    assert not absent & triples


def test_top_and_bottoms_are_two_garments(rule):
    g = rule.parse("a woman in a dark top and white bottoms", mode="scene")
    assert {e.head for e in g.entities} == {"woman", "top", "bottoms"}


@pytest.mark.parametrize("text, modifiers", [
    # "rear" before a noun is its attribute, as "front" is, not a whole that has it
    ("the rear wheel of a bike", ["rear"]),
    ("the front wheel of a bike", ["front"]),
])
def test_side_word_before_a_noun_is_an_attribute(rule, text, modifiers):
    g = rule.parse(text)
    assert g.entities[0].modifiers == modifiers
    assert "rear" not in {e.head for e in g.entities}


def test_with_and_without_after_clothing_parse_alike(rule):
    """After worn clothing, ``without`` describes what ``with`` would: a minimal pair that
    replaces one by the other aligns."""
    from parsers.evaluate import align_pair
    first = rule.parse("a woman in a blue top with headphones and two cellphones")
    second = rule.parse("A woman in a blue top without headphones and two cellphones.")
    assert align_pair(first, second)[0] == "aligned"


@pytest.mark.parametrize("text, described, relations", [
    # words of quality right after a verb of posture or looking describe its subject: no
    # entity of them, and before a relation phrase the verb goes on to it without them
    ("a tower stands tall against the sky .", {"tower": {"tall"}},
     {("tower", "stands against", "sky")}),
    ("the chair sits empty near the door .", {"chair": {"empty"}},
     {("chair", "sits near", "door")}),
    ("the dog looks happy .", {"dog": {"happy"}}, set()),
    ("a giraffe looking right", {"giraffe": {"right"}}, set()),
    # a Ferris wheel is one thing, not a wheel that a Ferris has
    ("a Ferris wheel stands tall near the lake .", {"Ferris wheel": {"tall"}},
     {("Ferris wheel", "stands near", "lake")}),
    # ... right after it only, not after a comma
    ("a wooden structure stands , possibly serving as a shelter .", {"structure": {"wooden"}},
     None),
])
def test_quality_after_a_linking_verb(rule, triples_of, text, described, relations):
    g = rule.parse(text)
    assert set(described) <= {e.head for e in g.entities}
    for head, words in described.items():
        entity = next(e for e in g.entities if e.head == head)
        assert set(entity.modifiers) == words
    if relations is not None:
        assert set(triples_of(g)) == relations
