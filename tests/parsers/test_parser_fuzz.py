"""The ``rule`` parser never crashes or hangs: a valid tree or a clear ParseError."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers.base import ParseError
from parsers.lexicon import GITM_MR_RELATIONS, SYNTHETIC_RELATIONS, VSR_RELATIONS
from parsers.rule import RuleParser
from rcrn.structures import LanguageGraph

PARSER = RuleParser()

WORDS = (["the", "a", "an", "that", "which", "who", "is", "are", "and", "or", "not", "there",
          "cat", "dog", "red", "big", "hair", "drier", "teddy", "bear", "man", "table", "can",
          "'s", "pair", "of", "right", "directly", "located", "face", "faces", ",", ".", "?",
          "juggles", "wearing", "standing", "it", "them", "both", "all", "isn't"]
         + VSR_RELATIONS + GITM_MR_RELATIONS + SYNTHETIC_RELATIONS)


def check(text: str) -> None:
    try:
        result = PARSER.analyse(text)
    except ParseError as exc:
        assert "no word" in str(exc)
        assert not any(ch.isalnum() or ch == "_" for ch in text)
        return
    g = result.graph
    LanguageGraph.from_dict(g.to_dict())  # still a valid tree after a round trip
    assert 0 <= g.root < g.num_entities
    assert g.num_relations == g.num_entities - 1
    for e in g.entities:
        assert e.span[1] > e.span[0]
        assert g.span_text(e.span) == e.text
    for r in g.relations:
        assert r.span[1] <= len(g.tokens)
        if r.span[1] > r.span[0]:
            assert g.span_text(r.span) == r.text
    assert all(isinstance(w, str) for w in result.warnings)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_arbitrary_unicode(text):
    check(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS), max_size=40))
def test_word_salad_from_the_vocabulary(words):
    check(" ".join(words))


@pytest.mark.parametrize("text", ["", " ", "\n\t", "!!!", ".,;:?!()[]{}\"'", "— – …", "\u200b"])
def test_no_words(text):
    with pytest.raises(ParseError):
        PARSER.parse(text)


def test_ten_thousand_words_parse_quickly():
    sentence = "the small cat that is to the left of the red box and near a teddy bear , "
    words = (sentence * 1000).split()[:10000]
    text = " ".join(words)
    t0 = time.perf_counter()
    g = PARSER.parse(text)
    assert time.perf_counter() - t0 < 10.0
    assert g.num_entities > 1000
    check(text)
