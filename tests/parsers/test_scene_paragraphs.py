"""Scene mode on paragraph descriptions of a picture: what a scene graph keeps and drops.

The captions here are written for these tests, in the style of long, detailed
descriptions of a photograph.
"""

from __future__ import annotations

import pytest

import parsers
from parsers.noun_classes import DEPICTION_NOUNS, VISIBLE_NOUNS, is_abstract, noun_base


@pytest.fixture(scope="module")
def rule():
    return parsers.load("rule")


def _heads(g) -> list[str]:
    return [e.head.lower() for e in g.entities]


@pytest.mark.parametrize("word", ["image", "scene", "moment", "sense", "beauty", "depth",
                                  "tranquility", "atmosphere", "touches", "colors"])
def test_nouns_that_name_no_visible_thing_are_abstract(word):
    assert is_abstract(word)


@pytest.mark.parametrize("word", ["dog", "bench", "person", "people", "eyes", "hands",
                                  "wall", "sky", "water", "trees", "sign", "shadow",
                                  "background", "glasses", "florp"])
def test_things_are_not_abstract(word):
    assert not is_abstract(word)


def test_the_closed_lists_do_not_overlap_and_plurals_find_their_singular():
    assert not DEPICTION_NOUNS & VISIBLE_NOUNS
    assert noun_base("beauties", {"beauty"}) == "beauty"
    assert noun_base("boxes", {"box"}) == "box"
    assert noun_base("glass", {"glas"}) == "glass"


def test_scene_mode_drops_the_picture_and_abstract_nouns_with_their_relations(rule):
    g = rule.parse("The image captures a quiet moment in a park. A brown dog sits on a "
                   "wooden bench, adding a sense of calm to the scene.", mode="scene")
    heads = _heads(g)
    assert "image" not in heads and "moment" not in heads and "sense" not in heads
    assert ("dog", "sits on", "bench") in {(g.entities[r.subject].head.lower(), r.text,
                                            g.entities[r.object].head.lower())
                                           for r in g.relations}
    assert {"dog", "bench"} <= set(heads)


def test_a_pronoun_does_not_stand_for_an_abstract_noun(rule):
    g = rule.parse("A lamp stands in the corner. The scene is calm. It has a long cord.",
                   mode="scene")
    triples = {(g.entities[r.subject].head.lower(), r.text, g.entities[r.object].head.lower())
               for r in g.relations}
    assert ("lamp", "has", "cord") in triples


def test_referring_mode_keeps_every_noun(rule):
    g = rule.parse("a dog looking at the scene")
    assert "scene" in [e.head.lower() for e in g.entities]
