"""The fifth round of rules, for paragraph descriptions in scene mode (``rule``): see
docs/parsers.md, "A fifth round"."""

from __future__ import annotations

import pytest

# the fixture ``rule`` is that of conftest.py


def _scene(rule, text):
    graph = rule.parse(text, mode="scene")
    heads = [e.head.lower() for e in graph.entities]
    triples = {(heads[r.subject], r.text.lower(), heads[r.object]) for r in graph.relations}
    attributes = {(heads[i], a.lower()) for i, e in enumerate(graph.entities)
                  for a in e.attributes}
    return heads, triples, attributes


@pytest.mark.parametrize("text, state", [
    ("A red kite is caught in mid-air. The boy holds the string.", "mid-air"),
    ("The ball, bright and round, is frozen mid-flight by the photo.", "mid-flight"),
    ("A parrot hovers in midair beside the feeder.", "midair"),
])
def test_airborne_state_is_an_attribute(rule, text, state):
    heads, triples, attributes = _scene(rule, text)
    assert state not in heads
    assert not any(state in (s, o) for s, _, o in triples)
    subject = {"mid-air": "kite", "mid-flight": "ball", "midair": "parrot"}[state]
    assert (subject, state) in attributes


def test_flight_after_in_is_no_thing(rule):
    heads, triples, _ = _scene(rule, "A heron in flight hovers over the pond.")
    assert "flight" not in heads
    assert ("heron", "hovers over", "pond") in triples
    heads, _, _ = _scene(rule, "A flight of stone steps leads up to the chapel.")
    assert any(h in ("flight", "steps") for h in heads)


@pytest.mark.parametrize("text, wanted, role", [
    ("A tall lamp stands guard next to the sofa.", ("lamp", "next to", "sofa"), "guard"),
    ("An old oak stands as a silent witness near the barn.", ("oak", "near", "barn"),
     "witness"),
    ("The poplars are covered in frost, standing as quiet onlookers to the parade.", None,
     "onlookers"),
])
def test_role_after_posture_is_no_thing(rule, text, wanted, role):
    heads, triples, _ = _scene(rule, text)
    assert role not in heads
    assert "as" not in heads
    if wanted is not None:
        assert wanted in triples


def test_posture_with_a_place_keeps_its_relation(rule):
    _, triples, _ = _scene(rule, "A guard stands by the gate. A cat sits on the mat.")
    assert {("guard", "stands by", "gate"), ("cat", "sits on", "mat")} <= triples


@pytest.mark.parametrize("text, wanted", [
    ("A van waits by the curb. Its rusty bumper leans against the streetlight.",
     ("bumper", "leans against", "streetlight")),
    ("A horse grazes in the paddock, its chestnut mane blends with the hay.",
     ("mane", "blends with", "hay")),
    ("The lighthouse rises proudly above the cliffs.", ("lighthouse", "rises above", "cliffs")),
])
def test_verb_in_s_after_possessive_or_before_manner_adverb(rule, text, wanted):
    heads, triples, _ = _scene(rule, text)
    assert wanted in triples


@pytest.mark.parametrize("text, phrase", [
    # a compound noun after a possessive in an object stays one noun phrase
    ("Two girls holding up their cell phones.", "their cell phones"),
    # and `the` before a compound without an adverb of manner keeps it
    ("The bus stops near the school are crowded.", "The bus stops"),
])
def test_compound_in_s_stays_a_noun(rule, text, phrase):
    graph = rule.parse(text)
    assert phrase in {e.text for e in graph.entities}


def test_what_is_named_with_no_is_not_there(rule):
    heads, triples, _ = _scene(
        rule, "A kettle sits on the stove. There are no cups on the counter, and no other "
              "dishes in the sink.")
    assert "cups" not in heads and "dishes" not in heads
    assert ("kettle", "sits on", "stove") in triples
    heads, _, _ = _scene(rule, "No one is near the well. A bucket hangs from the rope.")
    assert "bucket" in heads


@pytest.mark.parametrize("text", [
    "A goat rests on the hay, and a lamb sleeps beside the fence.",
    "A goat rests on the hay while a lamb sleeps beside the fence.",
    "Nobody is on the porch, but a lamb sleeps beside the fence.",
])
def test_noun_phrase_before_its_own_verb_opens_a_clause(rule, triples_of, text):
    got = triples_of(rule.parse(text))
    assert ("lamb", "sleeps beside", "fence") in got
    # only the link of the two clauses reaches the lamb, no relation of the first one
    assert not any(o == "lamb" and r not in ("and", "while", "but", "") for _, r, o in got)


@pytest.mark.parametrize("text, wanted", [
    ("The van's bumper leans against the post.", ("bumper", "leans against", "post")),
    ("The tower's spire rises above the roofs.", ("spire", "rises above", "roofs")),
])
def test_verb_in_s_after_a_possessors_noun(rule, text, wanted):
    _, triples, _ = _scene(rule, text)
    assert wanted in triples


def test_side_of_the_picture_is_a_region(rule):
    heads, triples, _ = _scene(rule, "A heron looks toward the left side of the photo.")
    assert "side" not in heads
    heads, triples, _ = _scene(rule, "A sticker is on the side of the van.")
    assert "van" in heads and any(o == "van" for _, _, o in triples)


@pytest.mark.parametrize("text, wanted", [
    ("The clown is wearing a baggy coat along with a tiny hat.", ("clown", "wearing", "hat")),
    ("A man wears a linen shirt paired with grey shorts.", ("man", "wears", "shorts")),
    ("The carts are decorated with bells, along with paper flags.",
     ("flags", "decorate", "carts")),
])
def test_along_with_adds_a_conjunct(rule, text, wanted):
    _, triples, _ = _scene(rule, text)
    assert wanted in triples
    assert not any(r in ("along with", "paired with") for _, r, _ in triples)


def test_along_with_after_nothing_relates_nothing(rule):
    _, triples, _ = _scene(rule, "A tall haystack can be seen, along with two barns.")
    assert not any(o == "barns" for _, _, o in triples)


@pytest.mark.parametrize("text, wanted", [
    ("Clad in a yellow raincoat, the fisherman stands on the pier.",
     ("fisherman", "wearing", "raincoat")),
    ("Dressed in a red tracksuit, the runner is crouched at the line.",
     ("runner", "wearing", "tracksuit")),
])
def test_fronted_participle_follows_the_conventions(rule, text, wanted):
    _, triples, _ = _scene(rule, text)
    assert wanted in triples


def test_verb_in_s_after_a_plural_object_of_with(rule):
    _, triples, _ = _scene(rule, "A cart with wooden crates leans against the wall.")
    assert ("cart", "leans against", "wall") in triples
    assert not any("leans" in (s, o) for s, _, o in triples)


def test_verb_in_s_after_the_before_as(rule):
    heads, triples, _ = _scene(rule, "The old mill stands as a landmark near the river.")
    assert "stands" not in heads and "landmark" not in heads
    assert ("mill", "near", "river") in triples


@pytest.mark.parametrize("text", [
    "A toddler grins straight at the camera.",
    "The pony trots away from the camera.",
    "An old sailor faces the camera.",
])
def test_the_camera_looked_at_is_the_viewer(rule, text):
    _, triples, _ = _scene(rule, text)
    assert not any(o == "camera" for _, _, o in triples)


def test_a_camera_in_the_picture_stays(rule):
    _, triples, _ = _scene(rule, "A reporter stands in front of the camera. The camera rests "
                                 "on a tripod.")
    assert ("reporter", "stands in front of", "camera") in triples
    assert ("camera", "rests on", "tripod") in triples


def test_moving_air_is_no_thing(rule):
    heads, triples, _ = _scene(rule, "A red kite flutters in the wind. Reeds sway in the "
                                     "breeze beside the pond.")
    assert "wind" not in heads and "breeze" not in heads
    assert "kite" in heads and "reeds" in heads


def test_the_writer_is_no_thing(rule):
    heads, triples, _ = _scene(rule, "A canoe rests on the bank. I see no paddle in it.")
    assert "i" not in heads and "I" not in heads
    assert ("canoe", "rests on", "bank") in triples


def test_hind_is_an_attribute(rule):
    heads, triples, _ = _scene(rule, "A goat stands on its hind legs.")
    assert "hind" not in heads
    assert ("goat", "has", "legs") in triples


def test_the_angle_and_the_world_are_no_things(rule):
    heads, triples, _ = _scene(rule, "The photo is taken from a low angle, looking up at a "
                                     "lighthouse. Its windows reflect the world outside.")
    assert "angle" not in heads and "world" not in heads
    assert "lighthouse" in heads


@pytest.mark.parametrize("text, wanted", [
    ("On the left side of the lane, there are hedges and birches.",
     {("hedges", "at the left of", "lane"), ("birches", "at the left of", "lane")}),
    ("Next to the stove, a kettle and a teapot wait.",
     {("kettle", "next to", "stove"), ("teapot", "next to", "stove")}),
])
def test_fronted_side_phrase_places_every_subject(rule, text, wanted):
    _, triples, _ = _scene(rule, text)
    assert wanted <= triples


@pytest.mark.parametrize("text, wanted", [
    ("A brass bell gleams under the lamp.", ("bell", "under", "lamp")),
    ("Slender reeds sway gently beside the pond.", ("reeds", "beside", "pond")),
    ("A wet pebble glistens on the shore.", ("pebble", "on", "shore")),
])
def test_shimmering_keeps_the_preposition(rule, text, wanted):
    _, triples, _ = _scene(rule, text)
    assert wanted in triples


def test_standing_out_against_is_standing_against(rule):
    _, triples, _ = _scene(rule, "A yellow door stands out against the brick wall.")
    assert ("door", "stands against", "wall") in triples


def test_standing_out_with_is_having(rule):
    _, triples, _ = _scene(rule, "A small chapel stands out with its blue dome.")
    assert ("chapel", "has", "dome") in triples
    _, triples, _ = _scene(rule, "A drummer stands out with a purple jacket.")
    assert ("drummer", "wearing", "jacket") in triples


def test_what_dots_a_place_is_in_it(rule):
    _, triples, _ = _scene(rule, "A few sailboats are dotting the water.")
    assert ("sailboats", "in", "water") in triples
