"""The official preset and the converter of the release's checkpoints.

The release's layout below is written out from its module definitions (the RCRN head
of SHTUPLUS/GITM-MR with its default sizes), not derived from the converter's table.
"""

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rcrn.batching import Vocab, collate
from rcrn.engine.config import load_config
from rcrn.engine.trainer import load_checkpoint
from rcrn.models.rcrn import RCRN, RCRNConfig
from rcrn.models.release import (
    HEAD_PREFIX,
    ReleaseCheckpointError,
    convert_checkpoint,
    convert_state_dict,
    release_key_shapes,
)
from rcrn.testing import random_problem

H, J, S, C = 512, 1024, 256, 64     # LSTM, joint, vector-similarity and classifier sizes


def _bn_seq(out, prefix, i, o):
    out[f"{prefix}.0.weight"], out[f"{prefix}.0.bias"] = (o, i), (o,)
    out[f"{prefix}.4.weight"], out[f"{prefix}.4.bias"] = (o, o), (o,)
    for n in (1, 5):
        for p in ("weight", "bias", "running_mean", "running_var"):
            out[f"{prefix}.{n}.{p}"] = (o,)
        out[f"{prefix}.{n}.num_batches_tracked"] = ()


def release_layout(vocab_rows, word, vis):
    """Name -> shape of every tensor of the release's RCRN head (GloVe/LSTM path)."""
    out = {"rnn_encoder.embedding.weight": (vocab_rows, word)}
    for r in ("", "_reverse"):
        out[f"rnn_encoder.rnn.weight_ih_l0{r}"] = (4 * H, word)
        out[f"rnn_encoder.rnn.weight_hh_l0{r}"] = (4 * H, H)
        out[f"rnn_encoder.rnn.bias_ih_l0{r}"] = (4 * H,)
        out[f"rnn_encoder.rnn.bias_hh_l0{r}"] = (4 * H,)
    for g in "sm":
        out[f"weight_module_init_{g}.0.weight"] = (4, 2 * H + 10)
        out[f"weight_module_init_{g}.0.bias"] = (4,)
    for e in ("node", "relation", "location"):
        out[f"{e}_input_encoder.fc.weight"], out[f"{e}_input_encoder.fc.bias"] = (1, 2 * H), (1,)
    for module, vin in (("node_module", vis), ("location_module", J)):
        _bn_seq(out, f"{module}.matching.vis_emb_fc", vin, J)
        _bn_seq(out, f"{module}.matching.lang_emb_fc", word, J)
        out[f"{module}.matching.sim_tranloc_w.weight"] = (S, J)
        out[f"{module}.matching.sim_tranloc_w.bias"] = (S,)
        out[f"{module}.matching.sim_eval_w.weight"] = (1, S)
        out[f"{module}.matching.sim_eval_w.bias"] = (1,)
    out["node_module.feat_normalizer.weight"] = (1, vis)
    out["location_module.lfeat_normalizer.weight"] = (1, 5)
    out["location_module.fc.weight"], out["location_module.fc.bias"] = (J, 5), (J,)
    r = "relation_module"
    out[f"{r}.vis_feat_normalizer.weight"], out[f"{r}.lfeat_normalizer.weight"] = (1, vis), (1, 64)
    out[f"{r}.fc.weight"], out[f"{r}.fc.bias"] = (J, vis + 64), (J,)
    out[f"{r}.vis_fc.weight"], out[f"{r}.vis_fc.bias"] = (vis, 2 * vis), (vis,)
    out[f"{r}.spatial_fc.weight"], out[f"{r}.spatial_fc.bias"] = (64, 5), (64,)
    _bn_seq(out, f"{r}.matching.vis_emb_fc", J, J)
    _bn_seq(out, f"{r}.matching.lang_emb_fc", word, J)
    out["match_scorer.pad_value"] = ()
    out["match_scorer.belief_fc.0.weight"], out["match_scorer.belief_fc.0.bias"] = (C, 5), (C,)
    for p in ("weight", "bias", "running_mean", "running_var"):
        out[f"match_scorer.belief_fc.1.{p}"] = (C,)
    out["match_scorer.belief_fc.1.num_batches_tracked"] = ()
    out["match_scorer.match_fc.0.weight"], out["match_scorer.match_fc.0.bias"] = (1, C), (1,)
    out["criterion.scale_fun.scale"] = ()
    g = "regression_head"
    out[f"{g}.feat_normalizer.weight"] = (1, vis)
    _bn_seq(out, f"{g}.vis_emb_fc", vis, J)
    _bn_seq(out, f"{g}.lang_emb_fc", word, J)
    out[f"{g}.box_regre.weight"], out[f"{g}.box_regre.bias"] = (4, 2 * J + 5), (4,)
    return out


def release_state(vocab_rows=40, word=8, vis=16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    state = {}
    for k, shape in release_layout(vocab_rows, word, vis).items():
        if k.endswith("num_batches_tracked"):
            state[HEAD_PREFIX + k] = torch.tensor(7)
        elif k.endswith("running_var"):
            state[HEAD_PREFIX + k] = torch.rand(shape, generator=gen) + 0.5
        else:
            state[HEAD_PREFIX + k] = torch.randn(shape, generator=gen)
    return {"model": state, "iteration": 80000}


def test_release_layout_is_what_the_converter_expects():
    state = release_state()
    shapes = release_key_shapes(state)
    layout = release_layout(40, 8, 16)
    assert set(shapes) == set(layout)
    assert all(tuple(shapes[k]) == tuple(v) for k, v in layout.items())


def test_converted_weights_land_where_the_release_uses_them(tmp_path):
    words = ["<pad>"] + [f"w{i}" for i in range(30)] + ["<unk>"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    state = release_state(vocab_rows=36)
    torch.save(state, tmp_path / "model_final.pth")
    convert_checkpoint(tmp_path / "model_final.pth", tmp_path / "vocab.txt", tmp_path / "ours.pt")
    model, vocab, config, _ = load_checkpoint(tmp_path / "ours.pt")
    assert config["model"]["layers"] == "release" and vocab.unk_id == 31
    assert config["data"]["benchmark"] == "gitm_mr" and "region_encoder" not in config
    rel = {k[len(HEAD_PREFIX):]: v for k, v in state["model"].items()}
    sd = model.state_dict()
    assert torch.equal(sd["words.embedding.weight"], rel["rnn_encoder.embedding.weight"][:32])
    s, m = rel["weight_module_init_s.0.weight"], rel["weight_module_init_m.0.weight"]
    assert torch.equal(sd["gates.local_full.gate.linear.weight"], s[:2])
    assert torch.equal(sd["gates.ground_up.gate.linear.weight"], s[2:3])
    assert torch.equal(sd["gates.match_up.gate.linear.weight"], m[2:3])
    assert torch.equal(sd["gates.match_down.gate.linear.weight"], m[3:4])
    assert torch.equal(sd["rel_sim.W_e.weight"], rel["relation_module.vis_fc.weight"])
    assert torch.equal(sd["classify.bn.running_var"], rel["match_scorer.belief_fc.1.running_var"])
    assert torch.equal(sd["ground_scale"], rel["criterion.scale_fun.scale"])
    # every release value is used once, except the embedding rows past the vocabulary
    # and the gate outputs the release never reads (row 3 of _s, rows 0-1 of _m)
    ours = sum(v.numel() for v in sd.values())
    theirs = sum(v.numel() for v in rel.values())
    unused = 4 * 8 + 3 * (2 * H + 10 + 1)
    assert ours == theirs - unused


def test_converter_names_the_bad_key():
    state = release_state()
    bad = dict(state["model"])
    bad[HEAD_PREFIX + "relation_module.fc.weight"] = torch.zeros(3, 3)
    with pytest.raises(ReleaseCheckpointError, match="relation_module.fc.weight has shape"):
        convert_state_dict(bad, 30)
    missing = {k: v for k, v in state["model"].items() if "match_fc" not in k}
    with pytest.raises(ReleaseCheckpointError, match="missing key refdet_head.match_scorer"):
        convert_state_dict(missing, 30)
    extra = dict(state["model"], **{HEAD_PREFIX + "dual_head.weight": torch.zeros(2)})
    with pytest.raises(ReleaseCheckpointError, match="unknown key refdet_head.dual_head"):
        convert_state_dict(extra, 30)
    with pytest.raises(ReleaseCheckpointError, match="vocabulary has 99 words"):
        convert_state_dict(state, 99)
    vlp = dict(state["model"], **{"uniter.embeddings.word_embeddings.weight": torch.zeros(2)})
    with pytest.raises(ReleaseCheckpointError, match="unknown key uniter.embeddings.word_emb"):
        convert_state_dict(vlp, 30)


def test_convert_checkpoint_command(tmp_path, capsys):
    from rcrn.cli import main

    (tmp_path / "vocab.txt").write_text("<pad>\n<unk>\na\n", encoding="utf-8")
    assert main(["convert-checkpoint", "--from", "gitm-mr", str(tmp_path / "none.pth"),
                 "--vocab", str(tmp_path / "vocab.txt"), "--out", str(tmp_path / "o.pt")]) == 2
    assert "none.pth: no such checkpoint file" in capsys.readouterr().err
    (tmp_path / "junk.pth").write_bytes(b"not a checkpoint")
    assert main(["convert-checkpoint", "--from", "gitm-mr", str(tmp_path / "junk.pth"),
                 "--vocab", str(tmp_path / "vocab.txt"), "--out", str(tmp_path / "o.pt")]) == 2
    assert "junk.pth: not a readable torch checkpoint" in capsys.readouterr().err


def test_official_yaml_is_the_python_preset():
    from importlib import resources

    path = resources.files("rcrn") / "configs" / "official.yaml"
    section = dict(load_config(path)["model"])
    section.pop("program")
    assert RCRNConfig(**section) == RCRNConfig.official()


def test_official_preset_refuses_toolkit_switches():
    with pytest.raises(ValueError, match="relation_align applies to layers 'plain'"):
        RCRN(RCRNConfig.official(relation_align=2.0), 10)
    with pytest.raises(ValueError, match="model.context must be one of"):
        RCRN(RCRNConfig.official(context="nearest"), 10)
    with pytest.raises(ValueError, match="grounding_scale must be a positive number or"):
        RCRN(RCRNConfig.official(grounding_scale="fixed"), 10)


def small_official(**kw):
    return RCRNConfig.official(word_dim=6, lstm_hidden=5, joint=8, hidden=8, sim_dim=4,
                               vis_dim=7, spatial_dim=3, pair_dim=7, classify_hidden=6, **kw)


@pytest.mark.parametrize("phrase_grad", [False, True])
def test_official_preset_trains_and_its_gates_see_no_phrase_gradient(phrase_grad):
    from rcrn.losses import LossConfig, rcrn_loss

    rng = np.random.default_rng(0)
    probs = [random_problem(rng, int(rng.integers(2, 5)), int(rng.integers(3, 9)), 7)
             for _ in range(6)]
    vocab = Vocab.build(probs)
    torch.manual_seed(0)
    model = RCRN(small_official(gate_phrase_grad=phrase_grad), len(vocab))
    batch = collate(probs, vocab)
    betas = []
    model.add_recorder(lambda key, v: betas.append(v) if key == "beta:local_full" else None)
    out = model(batch)
    assert out.match_logit is not None
    assert torch.allclose(out.match_prob, torch.sigmoid(out.match_logit))
    # no gradient from any β into the LSTM unless the toolkit's switch lets it through
    (grad,) = torch.autograd.grad(betas[0].sum(), model.phrases.lstm.weight_hh_l0,
                                  allow_unused=True, retain_graph=True)
    reached = grad is not None and bool(torch.count_nonzero(grad))
    assert reached == phrase_grad
    loss = rcrn_loss(out, batch, LossConfig(reg="release"))
    loss["loss"].backward()
    assert model.ground_scale.grad is not None and model.ground_scale.grad != 0


def test_table3_rows_are_named_programs_and_top_down_compare_has_its_sign():
    from rcrn import programs as P

    for row in P.TABLE3.values():
        if "program" in row:
            P.parse(P.to_text(P.ABLATIONS[row["program"]]))
    td = P.ABLATIONS["no_bi_mp"]
    parts = dict(td[1:])
    # matching reads the top-down pass only
    assert [P.direction(c) for c in parts["match"][1:]] == ["down"]
    rng = np.random.default_rng(1)
    probs = [random_problem(rng, 3, 6, 7, shape="chain") for _ in range(3)]
    vocab = Vocab.build(probs)
    model = RCRN(small_official(program=P.to_text(td)), len(vocab)).eval()
    batch = collate(probs, vocab)
    out = model(batch)
    conf = out.values[P.to_text(parts["match"][1])]
    parent, child = batch.edge_index
    # a top-down pass: the child receives the relation's message, so child - parent
    assert torch.allclose(out.edge_scores, conf[child] - conf[parent])


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(raw=st.one_of(st.binary(max_size=60), st.lists(st.sampled_from(
    ["<pad>", "<unk>", "cup", " table ", "", "\t", "cup", "\u00e9", "\r"]), max_size=6).map(
        lambda w: "\n".join(w).encode())))
def test_fuzz_release_vocabulary_files(tmp_path_factory, raw):
    """Any vocabulary file: a one-line error naming the file, or the release mapper's
    reading of it (stripped lines, ``<pad>`` first, ``<unk>`` listed, last line wins)."""
    path = tmp_path_factory.mktemp("vocab") / "vocabulary.txt"
    path.write_bytes(raw)
    try:
        vocab = Vocab.from_file(path)
    except ValueError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc), exc
        return
    text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # text mode
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    words = [line.strip() for line in lines]
    assert vocab.itos == words and words[0] == "<pad>" and "<unk>" in words
    assert all(vocab.itos[vocab.stoi[w]] == w and vocab.stoi[w] == len(words) - 1 -
               words[::-1].index(w) for w in words)
