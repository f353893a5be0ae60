"""Optional backends: spaCy (when installed), the SceneGraphParser conversion, Stanza messages."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import parsers
from parsers.base import BackendUnavailable, ParseError
from parsers.depgraph import DepToken, graph_from_dependencies
from parsers.sng import graph_from_sng

SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "samples"


def triples(g):
    return [(g.entities[r.subject].head, r.text, g.entities[r.object].head) for r in g.relations]


# ------------------------------------------------------------------- spaCy
def test_spacy_constructions(spacy_parser):
    g = spacy_parser.parse("the cup to the left of the plate that is on the table")
    assert triples(g) == [("cup", "to the left of", "plate"), ("plate", "on", "table")]
    g = spacy_parser.parse("the red circle that is to the left of the blue square and above "
                           "the small triangle")
    assert triples(g) == [("circle", "to the left of", "square"), ("circle", "above", "triangle")]
    assert g.entities[0].modifiers == ["red"]
    g = spacy_parser.parse("The teddy bear has as a part the cake.")
    assert triples(g) == [("teddy bear", "has as a part", "cake")]
    assert triples(spacy_parser.parse("the man wearing a hat")) == [("man", "wearing", "hat")]
    with pytest.raises(ParseError):
        spacy_parser.parse(" ... ")


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="shared samples not present")
def test_spacy_on_the_samples(spacy_parser):
    from parsers.evaluate import evaluate_parser, read_vsr_captions, read_whatsup_captions

    gold = read_vsr_captions(SAMPLES / "vsr") + read_whatsup_captions(SAMPLES / "whatsup")
    report = evaluate_parser(spacy_parser, gold)
    assert report["triple_accuracy"] >= 0.95, report["errors"]


def test_spacy_missing_model_message():
    if importlib.util.find_spec("spacy") is None:
        with pytest.raises(BackendUnavailable, match=r"pip install rcrn\[spacy\]"):
            parsers.load("spacy")
    else:
        with pytest.raises(BackendUnavailable, match="no spaCy pipeline could be loaded"):
            parsers.load("spacy", model="no_such_pipeline_xyz")


# --------------------------------------------------- dependency rules (UD)
def ud(rows):
    return [DepToken(text=t, lemma=t.lower(), pos=p, dep=d, head=h) for t, p, d, h in rows]


def test_universal_dependencies_copula():
    # The cat is under the laptop .   (UD: the laptop is the predicate)
    toks = ud([("The", "DET", "det", 1), ("cat", "NOUN", "nsubj", 5), ("is", "AUX", "cop", 5),
               ("under", "ADP", "case", 5), ("the", "DET", "det", 5), ("laptop", "NOUN", "root", 5),
               (".", "PUNCT", "punct", 5)])
    g = graph_from_dependencies(toks, "The cat is under the laptop.").graph
    assert triples(g) == [("cat", "under", "laptop")]
    assert g.entities[g.root].head == "cat"


def test_universal_dependencies_chain_and_relative_clause():
    # the cup to the left of the plate that is on the table
    toks = ud([("the", "DET", "det", 1), ("cup", "NOUN", "root", 1), ("to", "ADP", "case", 4),
               ("the", "DET", "det", 4), ("left", "NOUN", "nmod", 1), ("of", "ADP", "case", 7),
               ("the", "DET", "det", 7), ("plate", "NOUN", "nmod", 4),
               ("that", "PRON", "nsubj", 12), ("is", "AUX", "cop", 12), ("on", "ADP", "case", 12),
               ("the", "DET", "det", 12), ("table", "NOUN", "acl:relcl", 7)])
    g = graph_from_dependencies(toks, "the cup to the left of the plate that is on the table").graph
    assert triples(g) == [("cup", "to the left of", "plate"), ("plate", "on", "table")]
    assert g.root == 0


# -------------------------------------------------------- SceneGraphParser
def sng_entity(span, bounds, head, mods=()):
    return {"span": span, "lemma_span": span.lower(), "head": head, "lemma_head": head,
            "span_bounds": bounds, "type": "unknown",
            "modifiers": [{"dep": d, "span": s, "lemma_span": s} for d, s in mods]}


def test_sng_conversion_locates_relations():
    text = "A woman is playing the piano in the room."
    out = {"entities": [sng_entity("A woman", (0, 2), "woman", [("det", "A")]),
                        sng_entity("the piano", (4, 6), "piano", [("det", "the")]),
                        sng_entity("the room", (7, 9), "room", [("det", "the")])],
           "relations": [{"subject": 0, "object": 1, "relation": "playing",
                          "lemma_relation": "play"},
                         {"subject": 0, "object": 2, "relation": "in", "lemma_relation": "in"}]}
    res = graph_from_sng(text, out)
    g = res.graph
    assert triples(g) == [("woman", "playing", "piano"), ("woman", "in", "room")]
    assert [r.span for r in g.relations] == [(3, 4), (6, 7)]
    assert g.root == 0
    assert res.warnings == []


def test_sng_conversion_breaks_cycles_and_repairs():
    text = "the cup next to the plate near the bowl"
    out = {"entities": [sng_entity("the plate", (4, 6), "plate"),
                        sng_entity("the cup", (0, 2), "cup", [("amod", "big")]),
                        sng_entity("the bowl", (99, 100), "bowl")],  # bounds wrong: searched
           "relations": [{"subject": 1, "object": 0, "relation": "next to"},
                         {"subject": 0, "object": 1, "relation": "near"},  # a second edge
                         {"subject": 1, "object": 5, "relation": "on"}]}  # missing entity
    res = graph_from_sng(text, out)
    g = res.graph
    assert g.entities[g.root].head == "cup"  # the entity that comes first in the text
    assert g.entities[1].modifiers == ["big"]
    assert g.entities[2].span == (7, 9)
    assert ("cup", "next to", "plate") in triples(g)
    assert g.num_relations == 2  # the bowl is attached by an empty relation
    assert any("cyclic" in w for w in res.warnings)
    assert any("missing entity" in w for w in res.warnings)
    assert any("the bowl" in w for w in res.warnings)


def test_sng_conversion_relation_not_in_text():
    out = {"entities": [sng_entity("a man", (0, 2), "man"), sng_entity("a horse", (3, 5), "horse")],
           "relations": [{"subject": 0, "object": 1, "relation": "ride"}]}
    res = graph_from_sng("a man riding a horse", out)
    assert res.graph.relations[0].text == "ride"
    assert res.graph.relations[0].span == (3, 3)
    assert any("not found" in w for w in res.warnings)


def test_sng_conversion_rejects_other_formats():
    with pytest.raises(ParseError, match="not SceneGraphParser output"):
        graph_from_sng("a cat", {"entities": "cat"})
    with pytest.raises(ParseError, match="no entity"):
        graph_from_sng("a cat", {"entities": [], "relations": []})


def test_sng_missing_package_message():
    if importlib.util.find_spec("sng_parser") is not None:
        pytest.skip("SceneGraphParser is installed")
    with pytest.raises(BackendUnavailable, match=r"pip install rcrn\[sng\]"):
        parsers.load("sng")


# ------------------------------------------------------------------- Stanza
def test_stanza_message_says_how_to_install(tmp_path):
    with pytest.raises(BackendUnavailable) as info:
        parsers.load("stanza", dir=str(tmp_path / "stanza_resources"))
    msg = str(info.value)
    assert "stanza.download('en'" in msg
    assert str(tmp_path / "stanza_resources") in msg
    if importlib.util.find_spec("stanza") is None:
        assert "pip install rcrn[stanza]" in msg
    else:
        assert "no Stanza models" in msg
