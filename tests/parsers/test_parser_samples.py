"""The ``rule`` parser recovers the gold triple of every real VSR and What'sUp sample caption."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers.evaluate import (
    evaluate_parser,
    predicted_triple,
    read_vsr_captions,
    read_whatsup_captions,
)
from parsers.rule import RuleParser

SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "samples"
needs_samples = pytest.mark.skipif(not SAMPLES.is_dir(), reason="shared samples not present")


def _vsr():
    return read_vsr_captions(SAMPLES / "vsr")


def _whatsup():
    return read_whatsup_captions(SAMPLES / "whatsup")


@needs_samples
def test_every_vsr_caption_gives_the_gold_triple():
    gold = _vsr()
    assert len(gold) == 80
    parser = RuleParser()
    for t in gold:
        g = parser.parse(t.text)
        assert g.num_relations == 1, t.text
        assert predicted_triple(g) == (t.subject.lower(), t.relation, t.object.lower()), t.source


@needs_samples
def test_every_whatsup_option_gives_the_gold_triple():
    gold = _whatsup()
    assert len(gold) == 96  # 24 records x 4 options
    parser = RuleParser()
    for t in gold:
        g = parser.parse(t.text)
        assert g.num_relations == 1, t.text
        assert predicted_triple(g) == (t.subject.lower(), t.relation, t.object.lower()), t.source


@needs_samples
def test_vsr_relations_of_the_category_file_are_known():
    parser = RuleParser()
    text = (SAMPLES / "vsr" / "rel_meta_category_dict.txt").read_text(encoding="utf-8")
    relations = {r.strip() for line in text.splitlines() if ":" in line
                 for r in line.split(":", 1)[1].split(",") if r.strip()}
    assert len(relations) >= 66
    for rel in sorted(relations):
        g = parser.parse(f"The cat is {rel} the dog.")
        assert [r.text for r in g.relations] == [rel]


@needs_samples
def test_scores_on_samples_are_perfect():
    report = evaluate_parser(RuleParser(), _vsr() + _whatsup())
    assert report["triple_accuracy"] == 1.0
    assert report["entity_accuracy"] == 1.0
    assert report["relation_accuracy"] == 1.0
    assert report["errors"] == []
    assert report["sentences_per_second"] > 0
