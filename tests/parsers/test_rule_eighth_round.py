"""The eighth round of rules of the ``rule`` parser (docs/parsers.md, "An eighth
round"): parses that came out plainly wrong on text the rules were not written for.
Captions written here."""

from __future__ import annotations

import pytest

from parsers.evaluate import align_pair

# the fixtures ``rule`` and ``triples_of`` are those of conftest.py


@pytest.mark.parametrize("text, triple", [
    # a noun of motion in -ing right after a noun, before a preposition, is its verb
    ("a small jet landing over the trees", ("jet", "landing over", "trees")),
    ("a zebra crossing in front of a bus", ("zebra", "crossing in front of", "bus")),
    ("a surfer heading into the waves", ("surfer", "heading into", "waves")),
    # ... and a noun elsewhere
    ("the landing gear under a plane", ("gear", "under", "plane")),
    # "lacking" and "missing" take an object after any noun
    ("a shelf lacking books", ("shelf", "lacking", "books")),
    ("a bike missing its front wheel", ("bike", "missing", "wheel")),
    ("the fence is missing boards", ("fence", "missing", "boards")),
    # "set" with a particle before a determiner is a verb of its own
    ("A boy set down a heavy box .", ("boy", "set down", "box")),
    # an adverb between a noun and a participle before its object is no part of either
    ("the player just hitting a ball", ("player", "hitting", "ball")),
    ("A girl just opened a gift .", ("girl", "opened", "gift")),
    # "aside from" is one relation phrase
    ("a cup aside from the plates", ("cup", "aside from", "plates")),
    # "line" is a verb after a plural subject before its object, a noun elsewhere
    ("Tall trees line the bank .", ("trees", "line", "bank")),
    ("the line on the road", ("line", "on", "road")),
    # a base form after two coordinated phrases, the second with attribute words
    ("a brown dog and a black dog add to the scene", ("dog", "add to", "scene")),
    ("a cat and a black dog sleep on a couch", ("dog", "sleep on", "couch")),
    # "set" right after a comma, before a preposition
    ("a chess board , set up on a table", ("board", "set up on", "table")),
    # "letting" without the rest of "letting go of" is still a verb
    ("A bus stopped , letting off passengers .", ("bus", "letting off", "passengers")),
])
def test_relation_of_a_caption(rule, triples_of, text, triple):
    assert triple in triples_of(rule.parse(text))


@pytest.mark.parametrize("text, heads", [
    # "missing" before a noun stays its attribute
    ("a cup with a missing handle", {"cup", "handle"}),
    # "far apart" and "close together" say how far: no entity
    ("two girls in uniforms standing far apart .", {"girls", "uniforms"}),
    ("three deer walking along close together", {"deer"}),
    # "before" and "after" an event date it, as "during" does; before a thing they place
    ("players on a field after a game .", {"players", "field"}),
    ("players on a field during a game .", {"players", "field"}),
    ("a dog running after a ball", {"dog", "ball"}),
    # an -ing form alone between a comma and the sentence's end is a verb without object
    ("a woman next to a chair , relaxing .", {"woman", "chair"}),
    ("a woman next to a chair , smiling", {"woman", "chair"}),
    # a noun in -ing there stays one
    ("a table with a cup , a lamp , and a painting .", {"table", "cup", "lamp", "painting"}),
])
def test_entities_of_a_caption(rule, text, heads):
    assert {e.head for e in rule.parse(text).entities} == heads


def test_far_apart_from_stays_a_relation(rule, triples_of):
    assert ("house", "far apart from", "others") \
        in triples_of(rule.parse("a house far apart from the others"))


@pytest.mark.parametrize("caption, negative", [
    ("A small plane taking off above a field .", "A small plane landing above a field ."),
    ("A shelf full of books .", "A shelf lacking books ."),
    ("A man holding up a bag .", "A man set down a bag ."),
    ("A batter in the middle of a swing .", "A batter just finishing a swing ."),
])
def test_minimal_pair_aligns(rule, caption, negative):
    outcome, _ = align_pair(rule.parse(caption), rule.parse(negative))
    assert outcome == "aligned"


@pytest.mark.parametrize("text, modifiers", [
    # a determiner after a partitive "of" describes nothing; the count does
    ("one of the dogs on a rock", ["one"]),
    ("two of his friends on a bench", ["two"]),
    # "colored" after a word is one attribute with it
    ("a dark colored shirt", ["dark colored"]),
    ("a small cream coloured jacket", ["small", "cream coloured"]),
    # not after an adverb; and an adverb of degree is no attribute
    ("a brightly colored kite", ["brightly", "colored"]),
    ("a very tall man", ["tall"]),
])
def test_attribute_words_of_a_noun_phrase(rule, text, modifiers):
    assert rule.parse(text).entities[0].modifiers == modifiers

