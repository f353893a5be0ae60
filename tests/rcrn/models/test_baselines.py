"""The cross-encoder baselines (plain and MIL) and RCRN with vision-language layers."""

import json

import numpy as np
import pytest
import torch

from rcrn.batching import Vocab, collate
from rcrn.engine.config import ConfigError
from rcrn.engine.trainer import Trainer, build_model, load_checkpoint, predict, save_checkpoint
from rcrn.models import RCRN
from rcrn.models.cross_encoder import CrossEncoder, relative_places
from rcrn.testing import learnable_problems, random_problem

SMALL_CE = {"arch": "cross_encoder", "word_dim": 16, "vis_dim": 16, "dim": 32, "layers": 2,
            "heads": 4, "ff": 64, "dropout": 0.0}
SMALL_RCRN = dict(word_dim=16, lstm_hidden=16, joint=32, hidden=32, sim_dim=16, vis_dim=16,
                  spatial_dim=4, pair_dim=16, classify_hidden=16, grounding_scale=5.0)


def mixed_problems(seed=0, count=6):
    rng = np.random.default_rng(seed)
    return [random_problem(rng, nodes=int(rng.integers(1, 6)), proposals=int(rng.integers(2, 9)),
                           feature_dim=16, item_id=f"p{i}") for i in range(count)]


def test_collate_gives_expression_tokens_and_phrase_positions():
    problems = mixed_problems()
    vocab = Vocab.build(problems)
    b = collate(problems, vocab)
    assert b.text_tokens.shape[0] == len(problems)
    for g, p in enumerate(problems):
        assert b.text_tokens[g, :b.text_lengths[g]].tolist() == vocab.encode(p.graph.tokens)
    flat = b.text_tokens.reshape(-1)
    width = b.text_tokens.shape[1]
    for pos, tok in ((b.ent_token_pos, b.ent_tokens), (b.spo_token_pos, b.spo_tokens)):
        has = pos >= 0
        assert torch.equal(flat[pos[has]], tok[has])
    # a position points into the row of its own expression
    graph_of = b.node_batch[:, None].expand_as(b.ent_token_pos)
    has = b.ent_token_pos >= 0
    assert torch.equal(b.ent_token_pos[has] // width, graph_of[has])
    for e in range(b.num_edges):
        p = problems[int(b.edge_batch[e])]
        assert tuple(b.edge_span[e].tolist()) == p.graph.relations[int(b.edge_relation[e])].span


@pytest.mark.parametrize("model_cfg", [SMALL_CE, dict(SMALL_CE, mil=True),
                                       dict(SMALL_CE, verifier=True),
                                       dict(SMALL_CE, mil=True, verifier=True),
                                       dict(SMALL_RCRN, vl=dict(layers=2, dim=32, ff=64,
                                                                dropout=0.0))],
                         ids=["cross_encoder", "cross_encoder_mil", "verifier", "verifier_mil",
                              "rcrn_vl"])
def test_a_batch_gives_what_each_item_gives_alone(model_cfg):
    """Padding (words, proposals, relations) never leaks into another item's output."""
    torch.manual_seed(0)
    problems = mixed_problems(1, 7)
    vocab = Vocab.build(problems)
    model = build_model({"model": model_cfg}, vocab).double().eval()
    batch = collate(problems, vocab)
    batch.box_feats = batch.box_feats.double()
    batch.boxes = batch.boxes.double()
    batch.boxes_px = batch.boxes_px.double()
    with torch.no_grad():
        out = model(batch)
        for g, p in enumerate(problems):
            one = collate([p], vocab)
            one.box_feats, one.boxes, one.boxes_px = (one.box_feats.double(), one.boxes.double(),
                                                      one.boxes_px.double())
            alone = model(one)
            n = len(p.proposals)
            assert torch.allclose(out.match_prob[g], alone.match_prob[0], atol=1e-9)
            assert torch.allclose(out.ground_belief[g, :n], alone.ground_belief[0, :n], atol=1e-9)
            assert int(out.ground_index[g]) == int(alone.ground_index[0]) < n
            if out.mismatch_index is not None:
                assert int(out.mismatch_index[g]) == int(alone.mismatch_index[0])


def test_mil_blames_the_relation_with_the_lowest_mean_word_score():
    torch.manual_seed(1)
    problems = [p for p in mixed_problems(2, 8) if p.graph.num_relations >= 2]
    vocab = Vocab.build(problems)
    model = build_model({"model": dict(SMALL_CE, mil=True)}, vocab).eval()
    batch = collate(problems, vocab)
    with torch.no_grad():
        out = model(batch)
    words = out.values["word_scores"]
    for g, p in enumerate(problems):
        n = len(p.graph.tokens)
        assert np.isclose(float(out.match_prob[g]), float(torch.sigmoid(words[g, :n].min())),
                          atol=1e-6)
        means = [float(words[g, r.span[0]:r.span[1]].mean()) for r in p.graph.relations]
        assert int(out.mismatch_index[g]) == int(np.argmin(means))


def test_plain_cross_encoder_names_no_mismatched_relation():
    problems = mixed_problems(3, 4)
    vocab = Vocab.build(problems)
    model = build_model({"model": SMALL_CE}, vocab)
    assert isinstance(model, CrossEncoder)
    preds = predict(model, problems, vocab)
    assert all(p.mismatched_relation is None for p in preds)


@pytest.mark.parametrize("switches", [{}, {"verifier": True}], ids=["mil", "mil_verifier"])
def test_cross_encoder_learns_and_round_trips_through_a_checkpoint(tmp_path, switches):
    torch.set_num_threads(1)
    train, test = learnable_problems(512, seed=0), learnable_problems(128, seed=1)
    vocab = Vocab.build(train + test)
    config = {"seed": 0, "model": dict(SMALL_CE, mil=True, **switches),
              "train": {"steps": 400, "batch_size": 32, "lr": 0.003, "log_every": 100}}
    trainer = Trainer(config, train, tmp_path, vocab=vocab)
    trainer.fit(progress=False)
    logs = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert logs[-1]["grd"] < 0.3 * logs[0]["grd"] and logs[-1]["match"] < logs[0]["match"]
    preds = predict(trainer.model, test, vocab)
    grounding = np.mean([p.proposal == q.target_index for p, q in zip(preds, test)
                         if q.match == 1])
    assert grounding > 0.6, grounding                      # chance: 1 / 8
    model, vocab2, _, _ = load_checkpoint(tmp_path / "last.pt")
    again = predict(model, test[:16], vocab2)
    assert [p.proposal for p in again] == [p.proposal for p in preds[:16]]
    assert [p.mismatched_relation for p in again] == [p.mismatched_relation for p in preds[:16]]
    assert np.allclose([p.match_prob for p in again], [p.match_prob for p in preds[:16]],
                       atol=1e-6)


def test_the_alignment_score_starts_grounding_sooner(tmp_path, monkeypatch):
    """The word-region alignment term gives grounding a first-order signal from the start:
    after 300 steps the cross-encoder with it grounds far more test items than the same
    model, same seed, with the term switched off (the MLP head alone)."""
    torch.set_num_threads(1)
    train, test = learnable_problems(512, seed=0), learnable_problems(128, seed=1)
    vocab = Vocab.build(train + test)

    def grounding(folder):
        config = {"seed": 0, "model": dict(SMALL_CE, dropout=0.1),
                  "train": {"steps": 300, "batch_size": 32, "lr": 0.001, "log_every": 100}}
        trainer = Trainer(config, train, tmp_path / folder, vocab=vocab)
        trainer.fit(progress=False)
        preds = predict(trainer.model, test, vocab)
        return np.mean([p.proposal == q.target_index for p, q in zip(preds, test)
                        if q.match == 1])

    with_term = grounding("with")
    monkeypatch.setattr(CrossEncoder, "alignment",
                        lambda self, words, regions, valid: regions.new_zeros(regions.shape[:2]))
    without = grounding("without")
    assert with_term > without + 0.1, (with_term, without)


def test_relative_places_are_seen_from_the_candidate():
    boxes = torch.tensor([[[0.1, 0.1, 0.3, 0.3], [0.5, 0.1, 0.7, 0.5], [0.0, 0.6, 0.1, 0.7]]])
    places = relative_places(boxes, torch.tensor([0]))
    assert places.shape == (1, 3, 7)
    assert torch.equal(places[0, 0], torch.zeros(7))          # the candidate itself
    right_below = places[0, 1]                                  # centre (0.6, 0.3) vs (0.2, 0.2)
    assert torch.allclose(right_below[:2], torch.tensor([0.4 / 0.2, 0.1 / 0.2]) / 4, atol=1e-6)
    assert torch.allclose(right_below[2:4], torch.log(torch.tensor([1.0, 2.0])), atol=1e-6)
    assert right_below[4:6].tolist() == [1.0, 1.0]
    assert torch.isclose(right_below[6], torch.tensor(0.5))
    assert places[0, 2, 4:6].tolist() == [-1.0, 1.0]          # left of it and below
    # seen from the second region instead, the first lies left and above
    assert relative_places(boxes, torch.tensor([1]))[0, 0, 4:6].tolist() == [-1.0, -1.0]


def test_the_verifier_checks_the_grounded_region_from_where_it_lies():
    """In evaluation the verifier checks the region the model grounds; its match changes
    with which region that is, and with where the others lie from it."""
    torch.manual_seed(0)
    problems = mixed_problems(6, 3)
    vocab = Vocab.build(problems)
    model = build_model({"model": dict(SMALL_CE, verifier=True)}, vocab).eval()
    batch = collate(problems, vocab)
    with torch.no_grad():
        out = model(batch)
        feats = model.region_features(batch)
        chosen = out.ground_index.clamp(min=0)
        ar = torch.arange(len(chosen))
        _, _, regions = model.verify(batch, feats, chosen)
        assert torch.allclose(out.match_prob,
                              torch.sigmoid(model.match_head(regions[ar, chosen]).squeeze(-1)))
        other = (chosen + 1) % batch.box_mask.sum(dim=1)
        _, _, elsewhere = model.verify(batch, feats, other)
        assert not torch.allclose(regions[ar, chosen], elsewhere[ar, other])
        batch.boxes[0, :, [0, 2]] = 1 - batch.boxes[0, :, [2, 0]]   # mirror the first image
        mirrored = model(batch).match_prob
    assert mirrored[0] != out.match_prob[0] and torch.equal(mirrored[1:], out.match_prob[1:])
    assert float(model.mark_scale) > 0          # sized from the first batch, then kept


def test_collate_gives_the_proposal_of_each_entitys_object():
    problems = mixed_problems(7, 3)
    boxes = problems[0].proposals.boxes
    problems[0].meta["entity_boxes"] = [boxes[1].tolist()] + [
        [0.0, 0.0, 1.0, 1.0]] * (problems[0].graph.num_entities - 1)      # far from any
    problems[1].meta["entity_boxes"] = [boxes[0].tolist()]                 # wrong count
    vocab = Vocab.build(problems)
    b = collate(problems, vocab)
    first = b.entity_target[b.node_batch == 0]
    assert first[0] == 1 and (first[1:] == -1).all()
    assert (b.entity_target[b.node_batch > 0] == -1).all()


def _with_entity_boxes(problems):
    """``learnable_problems`` whose matched items give the box of each entity's object:
    the referent's, and the box showing the object's noun (its class vector, as
    ``learnable_problems`` draws them, lies nearest that box's features)."""
    from rcrn.testing import _WORDS

    classes = np.random.default_rng(1234).normal(size=(len(_WORDS), 16))
    for p in problems:
        if p.match == 1:
            noun = classes[_WORDS.index(p.graph.entities[1].head)]
            near = np.linalg.norm(p.proposals.features - noun, axis=1).argmin()
            p.meta["entity_boxes"] = [p.referent_box.tolist(), p.proposals.boxes[near].tolist()]
    return problems


def test_the_align_term_teaches_each_phrase_its_object(tmp_path):
    """With ``loss.align`` the verifier's entity phrases learn to pick their objects'
    proposals: the logged term falls well below its start."""
    from rcrn.losses import align_term

    torch.set_num_threads(1)
    train = _with_entity_boxes(learnable_problems(512, seed=0))
    vocab = Vocab.build(train)
    batch = collate(train[:8], vocab)
    assert (batch.entity_target >= 0).sum() == 2 * sum(p.match == 1 for p in train[:8])
    config = {"seed": 0, "model": dict(SMALL_CE, verifier=True), "loss": {"align": 1.0},
              "train": {"steps": 300, "batch_size": 32, "lr": 0.003, "log_every": 50}}
    trainer = Trainer(config, train, tmp_path / "align", vocab=vocab)
    trainer.fit(progress=False)
    logs = [json.loads(line) for line in (tmp_path / "align" / "metrics.jsonl").read_text()
            .splitlines()]
    assert logs[-1]["align"] < 0.3 * logs[0]["align"], (logs[0]["align"], logs[-1]["align"])
    total, count = align_term(trainer.model(batch), batch)
    assert count == (batch.entity_target >= 0).sum() and total > 0
    # without the verifier there are no entity scores, and the term is (0, 0)
    plain = build_model({"model": SMALL_CE}, vocab)
    assert [float(x) for x in align_term(plain(batch), batch)] == [0.0, 0.0]


def test_vision_language_layers_start_from_a_cross_encoder_checkpoint(tmp_path):
    problems = mixed_problems(4, 6)
    vocab = Vocab.build(problems)
    torch.manual_seed(0)
    ce = build_model({"model": dict(SMALL_CE, layers=3)}, vocab)
    path = tmp_path / "ce.pt"
    save_checkpoint(path, ce, vocab, {"model": dict(SMALL_CE, layers=3)})
    # another vocabulary: rows are mapped by word
    other = Vocab(["zebra"] + vocab.itos[2:][::-1])
    vl_cfg = dict(SMALL_RCRN, vl=dict(layers=2, dim=32, ff=64, init=str(path)))
    model = build_model({"model": vl_cfg}, other)
    assert isinstance(model, RCRN) and len(model.vl.layers) == 2
    for i in range(2):
        for (name, a), (_, b) in zip(model.vl.layers[i].state_dict().items(),
                                     ce.encoder.layers[i].state_dict().items()):
            assert torch.equal(a, b), name
    assert torch.equal(model.vl.word_proj.weight, ce.encoder.word_proj.weight)
    table, source = model.vl.words.embedding.weight, ce.encoder.words.embedding.weight
    for word in vocab.itos[2:]:
        assert torch.equal(table[other.stoi[word]], source[vocab.stoi[word]]), word
    # restoring a checkpoint does not need the initial weights any more
    save_checkpoint(tmp_path / "vl.pt", model, other, {"model": vl_cfg})
    path.unlink()
    restored, _, _, _ = load_checkpoint(tmp_path / "vl.pt")
    assert torch.equal(restored.vl.layers[1].linear1.weight, model.vl.layers[1].linear1.weight)


def test_train_init_starts_every_weight_from_a_checkpoint(tmp_path):
    """Fine-tuning (``train.init``): the whole model, the verifier's mark scale and both
    word tables (by word) come from the checkpoint; a model it does not fit is refused."""
    problems = mixed_problems(7, 6)
    vocab = Vocab.build(problems)
    cfg = {"model": dict(SMALL_CE, verifier=True)}
    torch.manual_seed(0)
    source = build_model(cfg, vocab)
    source.mark_scale.fill_(2.5)
    path = tmp_path / "pre.pt"
    save_checkpoint(path, source, vocab, cfg)
    other = Vocab(["zebra"] + vocab.itos[2:][::-1])
    torch.manual_seed(1)
    model = build_model(dict(cfg, train={"init": str(path)}), other)
    mine, theirs = model.state_dict(), source.state_dict()
    assert float(model.mark_scale) == 2.5
    for key, value in theirs.items():
        if key.endswith("words.embedding.weight"):
            for word in vocab.itos[2:]:
                assert torch.equal(mine[key][other.stoi[word]], value[vocab.stoi[word]]), key
            assert not torch.equal(mine[key][other.stoi["zebra"]], value[1]), key
        else:
            assert torch.equal(mine[key], value), key
    # a restored fine-tuned run does not read the initial checkpoint again
    save_checkpoint(tmp_path / "tuned.pt", model, other, dict(cfg, train={"init": str(path)}))
    path.unlink()
    restored, _, _, _ = load_checkpoint(tmp_path / "tuned.pt")
    assert torch.equal(restored.verifier.layers[0].linear1.weight,
                       model.verifier.layers[0].linear1.weight)
    with pytest.raises(ConfigError, match=r"train.init: checkpoint .*pre.pt does not exist"):
        build_model(dict(cfg, train={"init": str(path)}), other)
    save_checkpoint(path, source, vocab, cfg)
    with pytest.raises(ConfigError,
                       match=r"train.init: .*pre.pt: its weights do not fit the model: \d+ unk"):
        build_model({"model": SMALL_CE, "train": {"init": str(path)}}, vocab)


def test_a_table3_ablation_is_named_by_its_program_name():
    from rcrn.programs import ABLATIONS, to_text

    vocab = Vocab.build(mixed_problems(5, 2))
    model = build_model({"model": dict(SMALL_RCRN, program="no_top_down")}, vocab)
    assert to_text(model.program) == to_text(ABLATIONS["no_top_down"])
    assert to_text(model.program) != to_text(ABLATIONS["rcrn"])


def test_model_configs_are_checked():
    vocab = Vocab.build(mixed_problems(5, 2))
    with pytest.raises(ConfigError, match="arch"):
        build_model({"model": {"arch": "unknown"}}, vocab)
    with pytest.raises(ConfigError, match="joint"):
        build_model({"model": dict(SMALL_CE, joint=3)}, vocab)
    with pytest.raises(ConfigError, match="vl.layers is 0"):
        build_model({"model": {"vl": {"layers": 0, "init": "x.pt"}}}, vocab)
    with pytest.raises(ConfigError, match="does not exist"):
        build_model({"model": {"vl": {"layers": 1, "init": "missing.pt"}}}, vocab)
    with pytest.raises(ValueError, match="divisible"):
        build_model({"model": dict(SMALL_CE, dim=30)}, vocab)


def test_mismatched_sizes_in_a_vl_checkpoint_are_named(tmp_path):
    vocab = Vocab.build(mixed_problems(6, 2))
    ce = build_model({"model": SMALL_CE}, vocab)
    save_checkpoint(tmp_path / "ce.pt", ce, vocab, {"model": SMALL_CE})
    cfg = dict(SMALL_RCRN, vl=dict(layers=1, dim=64, init=str(tmp_path / "ce.pt")))
    with pytest.raises(ConfigError, match="shape"):
        build_model({"model": cfg}, vocab)


def test_front_lr_gives_rcrn_vl_its_vision_language_layers_own_learning_rate():
    from rcrn.engine.schema import section
    from rcrn.engine.trainer import parameter_groups

    vocab = Vocab.build(mixed_problems(5, 2))
    model = build_model({"model": dict(SMALL_RCRN, vl={"layers": 1, "dim": 16, "heads": 2,
                                                        "ff": 32})}, vocab)
    front, rest = parameter_groups(model, section({"train": {"lr": 1e-3, "front_lr": 1e-4}},
                                                  "train"))
    assert {id(p) for p in front["params"]} == {id(p) for p in model.vl.parameters()}
    assert front["lr"] == 1e-4 and front["scale"] == pytest.approx(0.1)
    # the projections RCRN reads the layers through are new: they train at train.lr
    assert {id(p) for p in model.vl_words.parameters()} <= {id(p) for p in rest["params"]}
    assert len(front["params"]) + len(rest["params"]) == len(list(model.parameters()))
    (only,) = parameter_groups(build_model({"model": SMALL_RCRN}, vocab),
                               section({"train": {"lr": 1e-3, "front_lr": 1e-4}}, "train"))
    assert only["lr"] == 1e-3          # a model without a front end has one group
