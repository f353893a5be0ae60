"""GITM-MR parse pickles and SGMN scene-graph sequences: fixtures written here, read back."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest

from parsers.readers import (
    ReaderError,
    gitm_record,
    read_gitm_parses,
    read_sgmn_graphs,
    read_vocabulary,
    write_gitm_parses,
)
from parsers.rule import RuleParser

VOCAB = ["<pad>", "<unk>", "the", "cup", "to", "left", "of", "plate", "that", "is", "on",
         "table", "man", "wearing", "a", "red", "hat", "holding", "umbrella"]


def triples(g):
    return sorted((g.entities[r.subject].text, r.text, g.entities[r.object].text)
                  for r in g.relations)


@pytest.fixture()
def vocab_file(tmp_path):
    path = tmp_path / "vocabulary_72700.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return path


def ids(words):
    return [VOCAB.index(w) for w in words.split()]


def test_read_vocabulary(vocab_file):
    assert read_vocabulary(vocab_file) == VOCAB


def test_read_vocabulary_follows_the_release_rule_as_vocab_does(tmp_path):
    from rcrn.batching import Vocab

    path = tmp_path / "vocabulary_72700.txt"
    # trailing spaces stripped, <unk> in the middle, "cup" twice (its last line is its id)
    path.write_text("<pad>\ncup \nplate\n<unk>\ncup\n", encoding="utf-8")
    assert read_vocabulary(path) == ["<pad>", "cup", "plate", "<unk>", "cup"]
    assert read_vocabulary(path) == Vocab.from_file(path).to_list()
    records = {"1": {"entity_phrase_list": [[1], [2, 0]], "spo_phrase": [[4, 3]],
                     "adj_matrix": [[-1, 0], [-1, -1]], "referent": 0}}
    parses = tmp_path / "graphs.pkl"
    parses.write_bytes(pickle.dumps(records))
    g = read_gitm_parses(parses, path)["1"]
    assert g.tokens == ["cup", "plate", "cup", "<unk>"]  # a word id is a line
    g = RuleParser().parse("the cup on the table")
    write_gitm_parses({"2": g}, tmp_path / "out.pkl", path)
    rec = pickle.loads((tmp_path / "out.pkl").read_bytes())["2"]
    assert rec["entity_phrase_list"] == [[3, 4], [3, 3]]  # the last "cup"; unknown -> <unk>
    for lines, message in ((["<pad>", "cup"], r"no_unk\.txt: no '<unk>'"),
                           (["cup", "<pad>", "<unk>"],
                            r"no_pad\.txt: line 0 must be '<pad>', found 'cup'")):
        bad = tmp_path / ("no_unk.txt" if "<unk>" not in lines else "no_pad.txt")
        bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(ReaderError, match=message):
            read_vocabulary(bad)
        with pytest.raises(ReaderError, match=message):
            read_gitm_parses(parses, bad)
    with pytest.raises(ReaderError, match=r"missing\.txt: cannot read the vocabulary"):
        read_vocabulary(tmp_path / "missing.txt")


def test_gitm_round_trip_of_parsed_graphs(tmp_path, vocab_file):
    parser = RuleParser()
    graphs = {"101": parser.parse("the cup to the left of the plate that is on the table"),
              "102": parser.parse("the man wearing a red hat holding a umbrella")}
    path = tmp_path / "val_graphs.pkl"
    write_gitm_parses(graphs, path, vocab_file)
    back = read_gitm_parses(path, vocab_file)
    assert set(back) == {"101", "102"}
    for sid, g in graphs.items():
        b = back[sid]
        assert [e.text for e in b.entities] == [e.text for e in g.entities]
        assert triples(b) == triples(g)
        assert b.root == g.root
        assert b.tree_edges() == g.tree_edges()
        # tokens: entity words first, then relation words, each phrase spanning its own words
        n_ent_words = sum(len(e.text.split()) for e in g.entities)
        assert b.entities[-1].span[1] == n_ent_words
        assert all(r.span[0] >= n_ent_words for r in b.relations)
        for r in b.relations:
            assert b.span_text(r.span) == r.text


def test_gitm_record_fields(vocab_file):
    g = RuleParser().parse("the cup to the left of the plate that is on the table")
    rec = gitm_record(g, {w: i for i, w in enumerate(VOCAB)})
    assert rec["entity_phrase_list"] == [ids("the cup"), ids("the plate"), ids("the table")]
    assert rec["spo_phrase"] == [ids("to the left of"), ids("on")]
    assert rec["adj_matrix"].tolist() == [[-1, 0, -1], [-1, -1, 1], [-1, -1, -1]]
    assert rec["parent_matrix"][0, 1] == 1 and rec["parent_matrix"][1, 2] == 1
    assert rec["referent"] == 0


def test_gitm_pickle_written_by_hand_with_numpy_and_padding(tmp_path, vocab_file):
    records = {
        7: {"entity_phrase_list": [np.array(ids("the man") + [0, 0]), np.array(ids("a hat"))],
            # a full subject-predicate-object phrase: only the middle is the relation
            "spo_phrase": [np.array(ids("the man wearing a hat"))],
            "adj_matrix": np.array([[-1, 0], [-1, -1]]),
            "parent_matrix": np.array([[0, 1], [0, 0]]),
            "referent": np.int64(0)},
    }
    path = tmp_path / "test_graphs.pkl"
    path.write_bytes(pickle.dumps(records))
    exprs = tmp_path / "test_expressions.json"
    exprs.write_text(json.dumps({"7": {"expression": "the man wearing a hat", "image_id": 1}}))
    g = read_gitm_parses(path, VOCAB, expressions=exprs)["7"]
    assert g.text == "the man wearing a hat"
    assert g.tokens == ["the", "man", "a", "hat", "wearing"]
    assert triples(g) == [("the man", "wearing", "a hat")]
    assert g.relations[0].span == (4, 5)


def test_gitm_relations_follow_their_spo_index(tmp_path):
    # spo 0 joins plate -> table, spo 1 cup -> plate: a row-major scan of adj_matrix
    # meets phrase 1 first, but relation j is spo_phrase[j], as the release indexes
    # relations (and foil_pos)
    records = {"5": {"entity_phrase_list": [ids("the cup"), ids("the plate"), ids("the table")],
                     "spo_phrase": [ids("on"), ids("to the left of")],
                     "adj_matrix": np.array([[-1, 1, -1], [-1, -1, 0], [-1, -1, -1]]),
                     "parent_matrix": np.zeros((3, 3), dtype=int), "referent": 0}}
    path = tmp_path / "val_foil_rel_graphs.pkl"
    path.write_bytes(pickle.dumps(records))
    g = read_gitm_parses(path, VOCAB)["5"]
    assert [(r.subject, r.object, r.text) for r in g.relations] == [
        (1, 2, "on"), (0, 1, "to the left of")]
    # relation words follow in relation order after the entity words
    assert g.tokens[6:] == ["on", "to", "the", "left", "of"]
    assert all(g.span_text(r.span) == r.text for r in g.relations)
    # written back, every relation keeps its index as its spo index
    write_gitm_parses({"5": g}, tmp_path / "again.pkl", VOCAB)
    again = pickle.loads((tmp_path / "again.pkl").read_bytes())["5"]
    assert again["adj_matrix"].tolist() == records["5"]["adj_matrix"].tolist()
    assert again["spo_phrase"] == records["5"]["spo_phrase"]


def test_gitm_errors_name_file_and_record(tmp_path):
    path = tmp_path / "bad.pkl"
    path.write_bytes(pickle.dumps({"9": {"entity_phrase_list": [[3], [99]], "spo_phrase": [[10]],
                                         "adj_matrix": [[-1, 0], [-1, -1]], "referent": 0}}))
    with pytest.raises(ReaderError, match=r"bad\.pkl: record '9'.*word id 99"):
        read_gitm_parses(path, VOCAB)
    path.write_bytes(pickle.dumps({"9": {"entity_phrase_list": [[3]], "spo_phrase": []}}))
    with pytest.raises(ReaderError, match=r"record '9' has no 'adj_matrix'"):
        read_gitm_parses(path, VOCAB)
    path.write_bytes(pickle.dumps({"9": {"entity_phrase_list": [[3], [7]], "spo_phrase": [[10]],
                                         "adj_matrix": [[-1, 3], [-1, -1]], "referent": 0}}))
    with pytest.raises(ReaderError, match=r"adj_matrix\[0, 1\] = 3"):
        read_gitm_parses(path, VOCAB)


def test_gitm_pickle_with_code_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo unsafe",))

    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"1": Evil()}))
    with pytest.raises(ReaderError, match=r"evil\.pkl.*refusing to unpickle"):
        read_gitm_parses(path, VOCAB)


def test_gitm_non_tree_strict_and_repaired(tmp_path):
    rec = {"1": {"entity_phrase_list": [ids("the cup"), ids("the plate"), ids("the table")],
                 "spo_phrase": [ids("on")], "adj_matrix": [[-1, 0, -1], [-1, -1, -1],
                                                           [-1, -1, -1]],
                 "parent_matrix": [[0] * 3] * 3, "referent": 0}}
    path = tmp_path / "graphs.pkl"
    path.write_bytes(pickle.dumps(rec))
    with pytest.raises(ReaderError, match=r"record '1': not a tree"):
        read_gitm_parses(path, VOCAB)
    notes: list[str] = []
    g = read_gitm_parses(path, VOCAB, strict=False, warnings=notes)["1"]
    assert g.num_relations == 2
    assert any("the table" in n for n in notes)


SG_SEQS = {
    "55": {"seq_sg": [{"seq": [0, 1, 2], "seq_rel": [], "type": "SPO"},
                      {"seq": [2, 3, 4], "seq_rel": [[1, 0, "SUBANDOBJ"]], "type": "SPO"}],
           "com_seq": [0], "num_seq": 2, "split_to_seq": {"0": 0, "1": 0, "2": 1, "3": 1,
                                                          "4": 1}},
    "56": {"seq_sg": [{"seq": [0], "seq_rel": [], "type": "S"}], "com_seq": [0], "num_seq": 1,
           "split_to_seq": {"0": 0}},
}
WORDS_55 = ["the", "cup", "to", "the", "left", "of", "the", "plate", "that", "is", "on", "the",
            "table"]
SPLITS_55 = [0, 0, 1, 1, 1, 1, 2, 2, 5, 5, 3, 4, 4]
SGS = {
    "55": {"words_info": [[1, "head" if w in ("cup", "plate", "table") else "det", s, w]
                          for w, s in zip(WORDS_55, SPLITS_55)], "co_index": {}},
    "56": {"words_info": [[0, "det", 0, "a"], [1, "amod", 0, "red"], [1, "head", 0, "ball"]],
           "co_index": {}},
}


def test_sgmn_sequences_with_words(tmp_path):
    seqs, sgs = tmp_path / "val_sg_seqs.json", tmp_path / "val_sgs.json"
    seqs.write_text(json.dumps(SG_SEQS))
    sgs.write_text(json.dumps(SGS))
    graphs = read_sgmn_graphs(seqs, sgs)
    g = graphs["55"]
    assert g.tokens == WORDS_55
    assert [e.text for e in g.entities] == ["the cup", "the plate", "the table"]
    assert [e.head for e in g.entities] == ["cup", "plate", "table"]
    assert triples(g) == [("the cup", "to the left of", "the plate"),
                          ("the plate", "on", "the table")]
    assert g.entities[g.root].text == "the cup"
    single = graphs["56"]
    assert single.num_entities == 1 and single.entities[0].text == "a red ball"


def test_sgmn_sequences_without_words(tmp_path):
    seqs = tmp_path / "val_sg_seqs.json"
    seqs.write_text(json.dumps(SG_SEQS))
    g = read_sgmn_graphs(seqs)["55"]
    assert g.num_entities == 3 and g.num_relations == 2
    assert g.tokens == ["#0", "#2", "#1", "#4", "#3"]
    assert triples(g) == [("#0", "#1", "#2"), ("#2", "#3", "#4")]


def test_sgmn_coreference_merges_entities(tmp_path):
    seqs = {"1": {"seq_sg": [{"seq": [0, 1, 2], "type": "SPO", "seq_rel": []},
                             {"seq": [3, 4, 5], "type": "SPO", "seq_rel": []}],
                  "com_seq": [1], "num_seq": 2, "split_to_seq": {}}}
    words = ["the", "man", "with", "a", "hat", "he", "holds", "a", "cup"]
    splits = [0, 0, 1, 2, 2, 3, 4, 5, 5]
    sgs = {"1": {"words_info": [[1, "x", s, w] for w, s in zip(words, splits)],
                 "co_index": {"3": 0}}}
    (tmp_path / "s.json").write_text(json.dumps(seqs))
    (tmp_path / "w.json").write_text(json.dumps(sgs))
    g = read_sgmn_graphs(tmp_path / "s.json", tmp_path / "w.json")["1"]
    assert [e.text for e in g.entities] == ["the man", "a hat", "a cup"]
    assert triples(g) == [("the man", "holds", "a cup"), ("the man", "with", "a hat")]


def test_sgmn_errors(tmp_path):
    bad = tmp_path / "bad_sg_seqs.json"
    bad.write_text('{"1": {"seq_sg": [\n{"seq": [0, 1], "type": "SPO"}]}}')
    with pytest.raises(ReaderError, match=r"bad_sg_seqs\.json: record '1': seq_sg\[0\] is an SPO"):
        read_sgmn_graphs(bad)
    bad.write_text('{"1": \n{"seq_sg": [}')
    with pytest.raises(ReaderError, match=r"bad_sg_seqs\.json: line 2: not valid JSON"):
        read_sgmn_graphs(bad)
    bad.write_text(json.dumps({"1": {"nothing": 1}}))
    with pytest.raises(ReaderError, match=r"record '1' has no 'seq_sg'"):
        read_sgmn_graphs(bad)
    seqs = tmp_path / "s.json"
    seqs.write_text(json.dumps(SG_SEQS))
    sgs = tmp_path / "w.json"
    sgs.write_text(json.dumps({"55": SGS["55"]}))
    with pytest.raises(ReaderError, match=r"w\.json: no record '56'"):
        read_sgmn_graphs(seqs, sgs)
