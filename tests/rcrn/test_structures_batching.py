"""Structures (validation, JSON round-trip), collate (every index), programs (text form)."""

import json

import numpy as np
import pytest

from rcrn import programs as P
from rcrn.batching import Vocab, collate
from rcrn.structures import (
    Entity,
    GroundingProblem,
    LanguageGraph,
    Prediction,
    Proposals,
    Relation,
    StructureError,
)
from rcrn.testing import random_problem


def cup_graph():
    return LanguageGraph.from_triples(
        "the cup to the left of the plate that is on the table",
        [("the cup", "to the left of", "the plate"), ("the plate", "on", "the table")])


def test_graph_names_and_tree_helpers():
    g = cup_graph()
    assert [e.text for e in g.entities] == ["the cup", "the plate", "the table"]
    assert g.relations[0].text == "to the left of" and g.span_text(g.relations[0].span) == \
        "to the left of"
    assert g.entities[0].head == "cup" and g.root == 0
    assert g.depths() == [0, 1, 2] and g.parents() == [-1, 0, 1]
    assert g.spo_tokens(1) == ["the", "plate", "on", "the", "table"]


@pytest.mark.parametrize("relations,error", [
    ([], "need 1 relations"),
    ([Relation(0, 1, "on", (2, 3)), Relation(1, 0, "on", (2, 3))], "second edge"),
    ([Relation(0, 0, "on", (2, 3))], "self-loop"),
    ([Relation(0, 5, "on", (2, 3))], "out of range"),
])
def test_graph_validation_names_the_problem(relations, error):
    ents = [Entity("the cup", (0, 2)), Entity("the box", (3, 5))]
    with pytest.raises(StructureError, match=error):
        LanguageGraph(tokens="the cup on the box".split(), entities=ents, relations=relations)


def test_disconnected_graph_is_rejected():
    ents = [Entity(f"e{i}", (i, i + 1)) for i in range(4)]
    rels = [Relation(0, 1, "a", (0, 1)), Relation(2, 3, "b", (0, 1)),
            Relation(3, 2, "c", (0, 1))]
    with pytest.raises(StructureError):
        LanguageGraph(tokens=list("abcd"), entities=ents, relations=rels)


def test_json_round_trip_of_every_structure():
    rng = np.random.default_rng(0)
    p = random_problem(rng, 4, 6, 3, item_id="x")
    p.mismatched_relation = 2
    p.meta = {"split": "test"}
    q = GroundingProblem.from_dict(json.loads(json.dumps(p.to_dict())))
    assert q.graph == p.graph and q.id == "x" and q.mismatched_relation == 2
    assert np.allclose(q.proposals.boxes, p.proposals.boxes)
    assert np.allclose(q.proposals.features, p.proposals.features)
    assert q.target_index == p.target_index
    pred = Prediction("x", 0.7, [1, 2, 3, 4], 3, 1, [0.1, -0.2])
    assert Prediction.from_dict(json.loads(json.dumps(pred.to_dict()))) == pred
    assert pred.match == 1


def test_bad_proposals_are_clear_errors():
    with pytest.raises(StructureError, match="NaN"):
        Proposals([[0, 0, float("nan"), 1]], (10, 10), image_id="img7")
    with pytest.raises(StructureError, match="xyxy"):
        Proposals([[5, 0, 1, 1]], (10, 10))
    with pytest.raises(StructureError, match="features"):
        Proposals([[0, 0, 1, 1]], (10, 10), features=np.zeros((2, 3)))


def test_collate_indices_of_graphs_of_different_sizes():
    rng = np.random.default_rng(1)
    problems = [random_problem(rng, n, m, 5, shape=s, item_id=str(i))
                for i, (n, m, s) in enumerate([(1, 3, "chain"), (4, 7, "star"),
                                               (6, 2, "mixed"), (3, 5, "chain")])]
    vocab = Vocab.build(problems)
    b = collate(problems, vocab)
    assert b.num_graphs == 4 and b.num_nodes == 14 and b.num_edges == 10
    assert b.box_mask.sum(1).tolist() == [3, 7, 2, 5] and b.max_boxes == 7
    offset, eoff = 0, 0
    for g, p in enumerate(problems):
        n = p.graph.num_entities
        assert b.node_batch[offset:offset + n].tolist() == [g] * n
        assert int(b.root[g]) == offset + p.graph.root
        assert b.node_depth[offset:offset + n].tolist() == p.graph.depths()
        for parent, child, k in p.graph.tree_edges():
            e = eoff
            assert b.edge_index[:, e].tolist() == [offset + parent, offset + child]
            assert int(b.edge_relation[e]) == k and int(b.edge_batch[e]) == g
            assert bool(b.edge_parent_is_subject[e]) == (p.graph.relations[k].subject == parent)
            spo = vocab.encode(p.graph.spo_tokens(k))
            assert b.spo_tokens[e, :len(spo)].tolist() == spo
            eoff += 1
        for i in range(n):
            ids = vocab.encode(p.graph.entity_tokens(i))
            assert b.ent_tokens[offset + i, :len(ids)].tolist() == ids
        m = len(p.proposals)
        W, H = p.proposals.image_size
        assert np.allclose(b.boxes[g, :m].numpy() * [W, H, W, H], p.proposals.boxes, atol=1e-3)
        assert int(b.target_index[g]) == p.target_index
        offset += n
    # levels: every edge exactly once, grouped by the depth of its child
    seen = sorted(int(e) for lv in b.levels for e in lv)
    assert seen == list(range(b.num_edges))
    for d, lv in enumerate(b.levels, start=1):
        assert (b.node_depth[b.edge_index[1, lv]] == d).all()
        assert set(b.level_parents[d - 1].tolist()) == set(b.edge_index[0, lv].tolist())
    assert b.to_pyg().num_graphs == 4


def test_program_text_round_trip_and_errors():
    for prog in P.ABLATIONS.values():
        assert P.parse(P.to_text(prog)) == prog
    custom = P.parse("""(outputs ; grounding only, no matching branch
        (ground (propagate up (local :gate lang) g :gate lang)))""")
    assert P.gate_specs(custom) == {"g": ("gateprod", "lang"), "local_lang": ("gatesum", "lang")}
    for bad, msg in [("(outputs (match (local)))", "needs a match"),
                     ("(outputs (ground (propagate sideways (local) g)))", "direction"),
                     ("(outputs (ground (local :gate x)))", "gate mode"),
                     ("(outputs (ground (local))", "missing"),
                     ("(frobnicate)", "outputs")]:
        with pytest.raises(P.ProgramError, match=msg):
            P.parse(bad)


# ------------------------------------------------------------- vocabulary files
def write_vocab(tmp_path, lines, name="vocabulary_72700.txt"):
    path = tmp_path / name
    path.write_text("".join(f"{w}\n" for w in lines), encoding="utf-8")
    return path


def test_vocabulary_file_follows_the_release_word_mapper(tmp_path):
    # the release: [w.strip() for w in lines]; {word: line}; get(w.lower(), ['<unk>'])
    path = write_vocab(tmp_path, ["<pad>", "cup  ", "red", "\tplate", "<unk>", "cup", "Table"])
    vocab = Vocab.from_file(path)
    assert vocab.itos == ["<pad>", "cup", "red", "plate", "<unk>", "cup", "Table"]
    assert len(vocab) == 7  # a line is an id, repeated words included
    assert vocab.stoi["cup"] == 5  # a repeated word keeps its last line
    assert vocab.stoi["plate"] == 3  # surrounding white space is stripped
    assert vocab.unk_id == 4  # <unk> wherever it is listed
    # tokens are lowercased before look-up; listed words are kept as written, so a
    # capitalised entry is never reached
    assert vocab.encode(["CUP", "Red", "plate", "saucer", "Table", "table"]) == [5, 2, 3, 4, 4, 4]
    assert "Cup" in vocab and "saucer" not in vocab
    # a saved word list (checkpoints) reads back the same way
    again = Vocab.from_list(vocab.to_list())
    assert again.stoi == vocab.stoi and again.unk_id == 4


def test_vocabulary_file_errors_name_the_file(tmp_path):
    no_unk = write_vocab(tmp_path, ["<pad>", "cup", "plate"], "no_unk.txt")
    with pytest.raises(ValueError, match=r"no_unk\.txt: no '<unk>'"):
        Vocab.from_file(no_unk)
    no_pad = write_vocab(tmp_path, ["cup", "<pad>", "<unk>"], "no_pad.txt")
    with pytest.raises(ValueError, match=r"no_pad\.txt: line 0 must be '<pad>', found 'cup'"):
        Vocab.from_file(no_pad)
    empty = write_vocab(tmp_path, [], "empty.txt")
    with pytest.raises(ValueError, match=r"empty\.txt: line 0 must be '<pad>'"):
        Vocab.from_file(empty)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("<pad>\n<unk>\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin\.txt: the vocabulary is not UTF-8"):
        Vocab.from_file(latin)
    with pytest.raises(ValueError, match=r"word list: no '<unk>'"):
        Vocab.from_list(["<pad>", "cup"])


def test_built_vocabularies_keep_unk_at_one():
    vocab = Vocab(["Cup", "plate", "cup"])
    assert vocab.itos == ["<pad>", "<unk>", "cup", "plate"] and vocab.unk_id == 1
    assert vocab.encode(["the", "CUP"]) == [1, 2]
    built = Vocab.build([random_problem(np.random.default_rng(0), 3, 4, 8)])
    assert built.itos[:2] == ["<pad>", "<unk>"]
    assert Vocab.from_list(built.to_list()).stoi == built.stoi


def test_collate_targets_token_positions_and_padding_per_item():
    from dataclasses import replace

    rng = np.random.default_rng(3)
    problems = [random_problem(rng, n, m, 5, item_id=str(i))
                for i, (n, m) in enumerate([(2, 4), (3, 6), (1, 2), (4, 3)])]
    problems[1] = replace(problems[1], referent_box=np.array([900.0, 900, 950, 950]))
    problems[2] = replace(problems[2], referent_box=None, match=None)
    problems[3].proposals.boxes[1] = problems[3].proposals.boxes[2]   # a tie: first wins
    problems[3] = replace(problems[3], referent_box=problems[3].proposals.boxes[2].copy())
    vocab = Vocab.build(problems)
    b = collate(problems, vocab)
    assert b.target_index.tolist() == [problems[0].target_index, 0, -1, 1]
    assert b.match[2] == -1 and not b.referent_box[2].any()
    width = b.text_tokens.shape[1]
    v = 0
    for g, p in enumerate(problems):
        tokens = vocab.encode(p.graph.tokens)
        assert b.text_tokens[g].tolist() == tokens + [0] * (width - len(tokens))
        for i, e in enumerate(p.graph.entities):
            pos = b.ent_token_pos[v + i]
            want = [g * width + j for j in range(*e.span)]
            assert pos.tolist() == want + [-1] * (len(pos) - len(want))
            assert int(b.ent_lengths[v + i]) == max(len(p.graph.entity_tokens(i)), 1)
        v += p.graph.num_entities
        m = len(p.proposals)
        assert not b.boxes[g, m:].any() and not b.box_mask[g, m:].any()


def test_box_iou_of_a_batch_equals_one_image_at_a_time():
    from rcrn.boxes import box_iou

    rng = np.random.default_rng(0)
    a = np.tile(rng.uniform(0, 50, (3, 2, 2)), 2) + [0, 0, 10, 10]
    b = np.tile(rng.uniform(0, 50, (3, 5, 2)), 2) + [0, 0, 20, 5]
    batched = box_iou(a, b, inclusive=True)
    assert batched.shape == (3, 2, 5)
    for g in range(3):
        np.testing.assert_array_equal(batched[g], box_iou(a[g], b[g], inclusive=True))
    assert box_iou(a[0, 0], b[0]).shape == (1, 5)


def test_collate_holds_real_numbers_in_the_default_float_type():
    import torch

    rng = np.random.default_rng(4)
    problems = [random_problem(rng, 3, 4, 5, item_id=str(i)) for i in range(2)]
    vocab = Vocab.build(problems)
    single = collate(problems, vocab)
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        double = collate(problems, vocab)
    finally:
        torch.set_default_dtype(before)
    for name in ("box_feats", "boxes", "boxes_px", "image_size", "match", "referent_box"):
        a, b = getattr(single, name), getattr(double, name)
        assert a.dtype == torch.float32 and b.dtype == torch.float64, name
        assert torch.equal(a.double(), b), name
    assert double.target_index.dtype == torch.long and double.box_mask.dtype == torch.bool
