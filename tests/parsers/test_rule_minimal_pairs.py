"""Rules of the ``rule`` parser that keep the two captions of a minimal pair (one relation
replaced) aligned: the same entities, the same structure, only the edited relation
different.  Captions written here."""

from __future__ import annotations

import pytest

from parsers.evaluate import align_pair

# the fixtures ``rule`` and ``triples_of`` are those of conftest.py


@pytest.mark.parametrize("text, triple", [
    # a base form after a plural noun, before a preposition (adverbs between allowed)
    ("Four horses stand quietly in a barn.", ("horses", "stand quietly in", "barn")),
    ("Several kids play on a slide.", ("kids", "play on", "slide")),
    ("some children race around a yard", ("children", "race around", "yard")),
    ("two boys skate down a ramp", ("boys", "skate down", "ramp")),
    # a form in -s after a phrase opened by "a"
    ("A goat grazes near a fence.", ("goat", "grazes near", "fence")),
    ("a truck stops at a light", ("truck", "stops at", "light")),
    # a past form, adverbs and particles between it and the preposition
    ("Two ducks paddled slowly across a pond.", ("ducks", "paddled slowly across", "pond")),
    ("Two cats nap together on a sofa.", ("cats", "nap together on", "sofa")),
    # a base form after two coordinated phrases
    ("A pony and a goat wander through a field.", ("goat", "wander through", "field")),
])
def test_verb_after_its_subject(rule, triples_of, text, triple):
    graph = rule.parse(text)
    assert triple in triples_of(graph)
    assert len(graph.entities) == 2 + ("and" in text.split())


@pytest.mark.parametrize("text, head", [
    # a noun of the other number after a noun stays in its phrase
    ("the bus stops near a school", "stops"),
    # the words a label names are its modifiers; the label stays the head
    ("a logo and the words air force on a plane", "words"),
])
def test_noun_after_noun_stays(rule, text, head):
    assert head in [e.head for e in rule.parse(text).entities]


@pytest.mark.parametrize("caption, negative", [
    ("Four horses stand quietly in a barn.", "Four horses run wildly around a barn."),
    ("A goat grazes near a fence.", "A goat jumps over a fence."),
    ("Three birds perched together on a wire.", "Three birds huddled together under a wire."),
])
def test_minimal_pairs_align(rule, caption, negative):
    assert align_pair(rule.parse(caption), rule.parse(negative))[0] == "aligned"


@pytest.mark.parametrize("text, triple", [
    # a contracted negation joins the verb after it, not the noun before it
    ("The shed doesn't have a door.", ("shed", "doesn't have", "door")),
    ("A cat can't reach the shelf.", ("cat", "can't reach", "shelf")),
    # after a copula: a participle before adverbs and a preposition, a noun in -ing
    # before a preposition
    ("Two kids are chatting happily on a bench.", ("kids", "chatting happily on", "bench")),
    ("A plane is landing near a hangar.", ("plane", "landing near", "hangar")),
    # a relation right after "X with Y on it" describes X
    ("A desk with a lamp on it stands near a window.", ("desk", "stands near", "window")),
    ("A desk with a lamp on it stands near a window.", ("lamp", "on", "desk")),
])
def test_relation_phrases_of_edited_captions(rule, triples_of, text, triple):
    assert triple in triples_of(rule.parse(text))


@pytest.mark.parametrize("text, entity", [
    ("A funny looking hat on a shelf.", "A funny looking hat"),
    ("A green decorated box on a table.", "A green decorated box"),
])
def test_participle_inside_noun_phrase_is_a_modifier(rule, text, entity):
    graph = rule.parse(text)
    assert graph.entities[0].text == entity and len(graph.entities) == 2


def test_looking_before_a_preposition_stays_a_verb(rule, triples_of):
    assert ("dog", "looking at", "cat") in triples_of(rule.parse("a black dog looking at a cat"))


@pytest.mark.parametrize("caption, negative", [
    ("A plane is landing near a hangar.", "A plane is parked near a hangar."),
    ("The shed has a door.", "The shed doesn't have a door."),
    ("A desk with a lamp on it stands near a window.",
     "A desk with a lamp on it is far from a window."),
    ("A funny looking hat on a shelf.", "A funny looking hat under a shelf."),
])
def test_more_minimal_pairs_align(rule, caption, negative):
    assert align_pair(rule.parse(caption), rule.parse(negative))[0] == "aligned"


@pytest.mark.parametrize("text, triple", [
    # a participle with a particle before the particle's object
    ("A woman setting down a plate.", ("woman", "setting down", "plate")),
    ("A boy throwing away a cup.", ("boy", "throwing away", "cup")),
    ("A man holding a rake and putting away a hose.", ("man", "putting away", "hose")),
    # an attribute participle before adverbs and a preposition is the verb
    ("Two cats sitting apart on a bed.", ("cats", "sitting apart on", "bed")),
])
def test_participles_with_particles_and_adverbs(rule, triples_of, text, triple):
    assert triple in triples_of(rule.parse(text))


def test_attribute_participle_without_preposition_stays_an_attribute(rule):
    graph = rule.parse("two women sitting together")
    assert len(graph.entities) == 1 and "sitting" in graph.entities[0].modifiers


@pytest.mark.parametrize("caption, negative", [
    ("A woman holding a plate.", "A woman setting down a plate."),
    ("Two cats sleeping together on a bed.", "Two cats sitting apart on a bed."),
])
def test_particle_and_adverb_pairs_align(rule, caption, negative):
    assert align_pair(rule.parse(caption), rule.parse(negative))[0] == "aligned"


@pytest.mark.parametrize("text, entity", [
    # an adverb and a verb form right after a determiner modify the noun after them
    ("a well used skateboard on a rack", "a well used skateboard"),
    ("a very well trained dog on a mat", "a very well trained dog"),
    ("a dog runs through the newly fallen snow", "the newly fallen snow"),
])
def test_adverb_and_participle_after_a_determiner_stay_in_the_phrase(rule, text, entity):
    graph = rule.parse(text)
    assert entity in [e.text for e in graph.entities] and len(graph.entities) == 2
