"""Minimal caption pairs: :func:`parsers.evaluate.read_pairs`, :func:`align_pair`,
:func:`one_relation_edit`, :func:`evaluate_pairs` and ``rcrn parse-eval --format pairs``,
on pairs written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import parsers
from parsers.evaluate import (
    PAIR_KINDS,
    DataError,
    align_pair,
    evaluate_pairs,
    one_relation_edit,
    read_pairs,
)
from rcrn.cli import main as run
from rcrn.structures import Entity, LanguageGraph, Relation


@pytest.fixture(scope="module")
def rule():
    return parsers.load("rule")


def _graph(tokens: str, entities: list[tuple[str, int, int]],
           relations: list[tuple[int, str, int, int, int]]) -> LanguageGraph:
    """A graph over ``tokens`` (space separated): entities ``(text, start, end)``, relations
    ``(subject, text, object, start, end)``."""
    return LanguageGraph(tokens.split(), [Entity(t, (s, e)) for t, s, e in entities],
                         [Relation(s, o, t, (a, b)) for s, t, o, a, b in relations])


CAT = "a cat sits on a chair"
CAT_BESIDE = "a cat sits beside a chair"


def _cat(tokens: str = CAT, rel: str = "sits on", span: tuple[int, int] = (2, 4),
         obj: str = "a chair") -> LanguageGraph:
    return _graph(tokens, [("a cat", 0, 2), (obj, 4, 6)], [(0, rel, 1, *span)])


# ------------------------------------------------------------------ align_pair
def test_pair_that_differs_in_the_edited_relation_aligns():
    assert align_pair(_cat(), _cat(CAT_BESIDE, "sits beside")) == ("aligned", 0)


def test_each_failure_kind():
    first = _cat()
    assert align_pair(first, None) == ("parse_failure", None)
    assert align_pair(None, first) == ("parse_failure", None)
    three = _graph("a cat sits on a chair near a lamp",
                   [("a cat", 0, 2), ("a chair", 4, 6), ("a lamp", 7, 9)],
                   [(0, "sits on", 1, 2, 4), (1, "near", 2, 6, 7)])
    assert align_pair(first, three) == ("entity_count", None)
    assert align_pair(first, _cat("a cat sits on a sofa", obj="a sofa")) == ("heads", None)
    flipped = _graph(CAT_BESIDE, [("a cat", 0, 2), ("a chair", 4, 6)],
                     [(1, "sits beside", 0, 2, 4)])
    assert align_pair(first, flipped) == ("structure", None)
    assert align_pair(first, _cat("a cat sits on a red chair", obj="a red chair")) == (
        "no_relation_differs", None)
    lamp = "a cat sits on a chair near a lamp"
    both = _graph("a cat sits by a chair under a lamp",
                  [("a cat", 0, 2), ("a chair", 4, 6), ("a lamp", 7, 9)],
                  [(0, "sits by", 1, 2, 4), (1, "under", 2, 6, 7)])
    one = _graph(lamp, [("a cat", 0, 2), ("a chair", 4, 6), ("a lamp", 7, 9)],
                 [(0, "sits on", 1, 2, 4), (1, "near", 2, 6, 7)])
    assert align_pair(one, both) == ("several_relations_differ", None)
    # the relation phrase differs, but the captions differ elsewhere
    elsewhere = _cat("the cat sits on a chair", rel="rests on")
    assert align_pair(first, elsewhere) == ("other_relation", None)


def test_heads_compare_lowercase_and_relations_ignore_case():
    upper = _cat("A CAT SITS BESIDE A CHAIR", "SITS BESIDE", obj="A CHAIR")
    assert align_pair(_cat(), upper)[0] == "aligned"


def test_a_phrase_shared_by_coordinated_subjects_is_one_relation():
    toks = "a man and a woman under an umbrella"
    ents = [("a man", 0, 2), ("a woman", 3, 5), ("an umbrella", 6, 8)]
    under = _graph(toks, ents, [(0, "under", 2, 5, 6), (1, "under", 2, 5, 6)])
    near = _graph(toks.replace("under", "near"), ents,
                  [(0, "near", 2, 5, 6), (1, "near", 2, 5, 6)])
    assert align_pair(under, near) == ("aligned", 0)


def test_an_empty_convention_span_stands_for_the_words_up_to_the_next_entity():
    # ``laying on`` is written ``lying on`` with an empty span at ``laying``
    laying = _cat("a cat laying on a chair", "lying on", (2, 2))
    assert align_pair(_cat(), laying) == ("aligned", 0)
    beside = _cat("a cat laying beside a chair", "lying beside", (2, 2))
    assert align_pair(laying, beside) == ("aligned", 0)
    assert align_pair(laying, _cat("the cat laying on a chair", "lying under", (2, 2))) == (
        "other_relation", None)


def test_inserted_words_touch_the_relation_they_join():
    near = _cat("a cat sits near a chair", "sits near")
    right = _cat("a cat sits right near a chair", "sits right near", (2, 5), "a chair")
    right.entities[1] = Entity("a chair", (5, 7))
    right = LanguageGraph(right.tokens, right.entities, right.relations)
    assert align_pair(near, right) == ("aligned", 0)


# ------------------------------------------------------------------ one_relation_edit
@pytest.mark.parametrize("caption, negative", [
    ("A cat sits on a chair.", "A cat sits beside a chair."),
    ("Two dogs sitting on top of a bench.", "Two dogs sitting next to a bench."),
    ("a boy is standing in a field", "A boy is lying down in a field."),
    ("A lamp with a shade.", "A lamp without a shade."),
    ("A kid stands near the door", "A kid stands at the edge of the door"),
])
def test_one_relation_edits(caption, negative):
    assert one_relation_edit(caption, negative)


@pytest.mark.parametrize("caption, negative", [
    ("A dog sleeps in the backseat.", "A dog sleeps outside the car."),  # a noun changes
    ("A cat on a mat by a door.", "A cat under a mat near a door."),  # two places
    ("A man riding a horse.", "A man riding a horse."),  # no edit
    ("A bird on a branch.", "A bird on the back branch."),  # place noun without "of"
])
def test_not_one_relation_edits(caption, negative):
    assert not one_relation_edit(caption, negative)


# ------------------------------------------------------------------ reading
def _write(tmp_path: Path, text: str, name: str = "pairs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


PAIRS = [
    {"caption": "A cat sits on a chair.", "negative_caption": "A cat sits beside a chair."},
    {"caption": "A dog runs across a field.", "negative_caption": "A dog walks across a field."},
    {"caption": "A man and a woman under an umbrella.",
     "negative_caption": "A man and a woman next to an umbrella."},
    {"caption": "A dog on a sofa.", "negative_caption": "A dog on a sofa near a lamp."},
]


def test_read_pairs_jsonl_and_json_layouts(tmp_path):
    lines = "\n".join(json.dumps(p) for p in PAIRS[:2]) + "\n\n"
    items = read_pairs(_write(tmp_path, lines))
    assert [it.caption for it in items] == [PAIRS[0]["caption"], PAIRS[1]["caption"]]
    assert items[1].negative == PAIRS[1]["negative_caption"]
    assert items[1].source.endswith("pairs.jsonl:2")
    keyed = _write(tmp_path, json.dumps({"17": PAIRS[0], "42": PAIRS[1]}), "pairs.json")
    items = read_pairs(keyed)
    assert [it.source.rsplit("#", 1)[1] for it in items] == ["17", "42"]
    listed = _write(tmp_path, json.dumps(PAIRS), "list.json")
    assert len(read_pairs(listed)) == 4 and len(read_pairs(listed, limit=3)) == 3


@pytest.mark.parametrize("name, text, where, what", [
    ("a.jsonl", json.dumps(PAIRS[0]) + "\n{oops\n", ":2:", "not valid JSON"),
    ("b.jsonl", '{"caption": "A cat."}\n', ":1:", "'negative_caption'"),
    ("c.jsonl", '{"caption": "", "negative_caption": "A cat."}\n', ":1:", "'caption'"),
    ("d.jsonl", '["A cat.", "A dog."]\n', ":1:", "must be an object"),
    ("e.json", json.dumps({"7": {"caption": 3, "negative_caption": "x"}}), "#7:",
     "'caption' (got 3)"),
    ("f.json", '"just a string"', ":", "expected a list of pairs"),
    ("g.json", '{"1": \n', ":2:", "not valid JSON"),
])
def test_malformed_pairs_give_one_line_naming_the_place(tmp_path, name, text, where, what):
    path = _write(tmp_path, text, name)
    with pytest.raises(DataError) as info:
        read_pairs(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}{where}") and what in msg and "\n" not in msg


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="cannot read"):
        read_pairs(tmp_path / "none.jsonl")


# ------------------------------------------------------------------ scoring
def test_evaluate_pairs_counts_outcomes(rule, tmp_path):
    items = read_pairs(_write(tmp_path, json.dumps(PAIRS), "p.json"))
    report = evaluate_pairs(rule, items, max_errors=5)
    assert report["pairs"] == 4 and report["aligned"] == 3
    assert report["aligned_rate"] == 0.75
    assert set(report["outcomes"]) == set(PAIR_KINDS)
    assert report["outcomes"]["entity_count"] == 1
    edits = report["one_relation_edits"]
    assert edits["pairs"] == 3 and edits["aligned_rate"] == 1.0
    (error,) = report["errors"]
    assert error["kind"] == "entity_count" and error["one_relation_edit"] is False
    assert error["negative_triples"][-1][2] == "a lamp"
    assert report["parse_failures"] == 0


def test_parse_failure_counts_the_pair(rule):
    from parsers.evaluate import CaptionPair

    report = evaluate_pairs(rule, [CaptionPair("A cat on a mat.", "...", "x:1")])
    assert report["outcomes"]["parse_failure"] == 1 and report["parse_failures"] == 1


# ------------------------------------------------------------------ command line
def test_parse_eval_format_pairs_table_and_json(tmp_path, capsys):
    path = _write(tmp_path, "\n".join(json.dumps(p) for p in PAIRS))
    assert run(["parse-eval", "--format", "pairs", str(path), "--errors", "1"]) == 0
    out = capsys.readouterr().out
    assert "aligned                   75.00% (3)" in out
    assert "one-relation edits        3" in out
    assert "entity count              1 (0 one-relation edits)" in out
    assert f"{path}:4: entity_count" in out and "a dog | on | a sofa" in out.lower()
    assert run(["parse-eval", "--format", "pairs", str(path), "--json", "--limit", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "pairs" and report["pairs"] == 2 and report["aligned"] == 2


def test_parse_eval_format_pairs_errors(tmp_path, capsys):
    assert run(["parse-eval", "--format", "pairs"]) == 2
    assert "needs the file of caption pairs" in capsys.readouterr().err
    bad = _write(tmp_path, json.dumps(PAIRS[0]) + "\nnot json\n", "bad.jsonl")
    assert run(["parse-eval", "--format", "pairs", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: not valid JSON" in err and len(err.strip().splitlines()) == 1
    assert run(["parse-eval", "--format", "pairs", str(bad), "--benchmark", "vsr"]) == 2
    assert "--benchmark is for template captions" in capsys.readouterr().err
    assert run(["parse-eval", "--format", "pairs", str(bad), "--limit", "0"]) == 2
    assert "--limit must be at least 1" in capsys.readouterr().err
    assert run(["parse-eval", "--format", "pairs", str(bad), "--scene"]) == 2
    assert "--scene" in capsys.readouterr().err
    empty = _write(tmp_path, "\n", "empty.jsonl")
    assert run(["parse-eval", "--format", "pairs", str(empty)]) == 2
    assert "no caption pair" in capsys.readouterr().err


@pytest.mark.parametrize("caption, negative", [
    # what "without" names stays an entity, so the pair differs in the relation alone
    ("a boy with a kite standing on a sidewalk", "a boy without a kite standing on a sidewalk"),
    ("a kitchen with a stove and a sink", "a kitchen without a stove and a sink"),
    # a late place phrase attaches whatever its preposition
    ("two women playing a game at a banquet hall",
     "two women playing a game behind a banquet hall"),
    ("a tree with red berries next to a gate", "a tree with red berries on top of a gate"),
    ("a child sleeping on a rug near a lamp", "a child sleeping on a rug under a lamp"),
    # a participle and a particle after a noun are a verb, not part of its name
    ("a room with a tree set up in front of a window",
     "a room with a tree moved away from a window"),
])
def test_rule_parser_aligns_minimal_pairs(rule, caption, negative):
    outcome, _ = align_pair(rule.parse(caption), rule.parse(negative))
    assert outcome == "aligned"
