"""The UNITER front end: BERT's word pieces, the transformer, UNITER's key names.

Independent references: ``transformers``' BERT tokenizer and ``BertModel`` (UNITER's
text side is BERT; its image embedder is written out below from UNITER's equations).
"""

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rcrn.batching import Vocab, collate
from rcrn.losses import LossConfig, rcrn_loss
from rcrn.models.rcrn import RCRNConfig
from rcrn.models.uniter import (
    UniterEncoder,
    UniterSettings,
    UniterWeightsError,
    WordPieces,
    box_positions,
    convert_uniter_state,
    load_uniter_weights,
)
from rcrn.testing import random_problem

transformers = pytest.importorskip("transformers")

PIECES = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
          + list("abcdeABCDE,.!?-'éÉü中") + ["##" + c for c in "abcdeé"]
          + ["ab", "abc", "Ab", "cab", "##ab", "##de", "##bc", "de", "é", "dé", "##dé"])


@pytest.fixture(scope="module")
def vocab_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("bert")
    (d / "vocab.txt").write_text("\n".join(PIECES) + "\n", encoding="utf-8")
    return d


TEXT = st.text(alphabet=list("abcdeABCDEéÉüxyz,.!?-' \t\n中文\x00\x07\u00a0\u2028\u0301"),
               max_size=40)


@pytest.mark.parametrize("lower", [False, True])
@settings(max_examples=150, deadline=None)
@given(text=TEXT)
def test_word_pieces_are_berts(vocab_dir, lower, text):
    ref = transformers.BertTokenizer(str(vocab_dir / "vocab.txt"), do_lower_case=lower)
    ours = WordPieces(PIECES, lower_case=lower)
    words = text.split(" ")
    got = [ours.cls_id] + [i for w in ours.encode(words) for i in w] + [ours.sep_id]
    assert got == ref(text)["input_ids"]


def test_word_pieces_read_a_tokenizer_folder(vocab_dir, tmp_path):
    wp = WordPieces.from_folder(vocab_dir)
    assert not wp.lower_case and wp.encode(["cabde", "Éx"]) == [
        [PIECES.index("cab"), PIECES.index("##de")], [PIECES.index("[UNK]")]]
    (tmp_path / "vocab.txt").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(UniterWeightsError, match=r"vocab.txt: word-piece vocabulary lacks"):
        WordPieces.from_folder(tmp_path)
    with pytest.raises(UniterWeightsError, match="nothing is downloaded"):
        WordPieces.from_folder(tmp_path / "absent")


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(vocab=st.one_of(st.binary(max_size=80), st.lists(st.sampled_from(
           ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##b", "", " ", "\r", "\u00e9"]),
           max_size=8).map(lambda w: "\n".join(w).encode())),
       conf=st.one_of(st.none(), st.binary(max_size=40), st.sampled_from(
           [b"{}", b"[]", b'{"do_lower_case": true}', b'{"do_lower_case": "false"}',
            b'{"do_lower_case": 1}', b"null", b"[" * 5000])))
def test_fuzz_tokenizer_folders(tmp_path_factory, vocab, conf):
    """Any vocab.txt and tokenizer_config.json: a one-line error naming the file, or
    the pieces of the file's lines and the case rule it states."""
    folder = tmp_path_factory.mktemp("tok")
    (folder / "vocab.txt").write_bytes(vocab)
    if conf is not None:
        (folder / "tokenizer_config.json").write_bytes(conf)
    try:
        wp = WordPieces.from_folder(folder)
    except UniterWeightsError as exc:
        assert str(folder) in str(exc) and "\n" not in str(exc), exc
        return
    lines = vocab.decode("utf-8").split("\n")
    assert wp.pieces == [x.rstrip("\r") for x in (lines[:-1] if lines[-1] == "" else lines)]
    assert wp.lower_case is (conf is not None and json.loads(conf).get("do_lower_case", False))


SMALL = dict(layers=2, hidden=16, heads=4, intermediate=24, vocab_size=len(PIECES) + 3,
             max_positions=40, img_dim=12, dropout=0.0)


def bert_reference(seed=0, layers=3):
    torch.manual_seed(seed)
    c = transformers.BertConfig(vocab_size=SMALL["vocab_size"], hidden_size=16,
                                num_hidden_layers=layers, num_attention_heads=4,
                                intermediate_size=24, max_position_embeddings=40,
                                hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                attn_implementation="eager")
    bert = transformers.BertModel(c, add_pooling_layer=False).eval()
    with torch.no_grad():   # non-trivial norms and biases
        for name, p in bert.named_parameters():
            if "LayerNorm" in name or name.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.2)
    return bert


def uniter_state(bert, img_dim=12, seed=1):
    """UNITER's checkpoint layout: BERT's keys under ``uniter.``, the image embedder,
    the pre-training heads (outside the prefix and the masked-region embedding)."""
    gen = torch.Generator().manual_seed(seed)
    state = {f"uniter.{k}": v.clone() for k, v in bert.state_dict().items()
             if not k.endswith("position_ids")}
    H = 16
    for name, shape in (("img_linear.weight", (H, img_dim)), ("img_linear.bias", (H,)),
                        ("pos_linear.weight", (H, 7)), ("pos_linear.bias", (H,)),
                        ("mask_embedding.weight", (2, img_dim))):
        state[f"uniter.img_embeddings.{name}"] = torch.randn(shape, generator=gen) * 0.3
    for ln in ("img_layer_norm", "pos_layer_norm", "LayerNorm"):
        state[f"uniter.img_embeddings.{ln}.weight"] = 1 + 0.2 * torch.randn(H, generator=gen)
        state[f"uniter.img_embeddings.{ln}.bias"] = 0.2 * torch.randn(H, generator=gen)
    state["uniter.pooler.dense.weight"] = torch.randn(H, H, generator=gen)
    state["uniter.pooler.dense.bias"] = torch.randn(H, generator=gen)
    state["cls.predictions.bias"] = torch.randn(SMALL["vocab_size"], generator=gen)
    state["itm_output.weight"] = torch.randn(2, H, generator=gen)
    return state


def test_uniter_checkpoint_loads_by_name_and_every_weight_lands(tmp_path):
    bert = bert_reference(layers=3)
    state = uniter_state(bert)
    torch.save(state, tmp_path / "uniter-base.pt")
    enc = UniterEncoder(UniterSettings(**SMALL), WordPieces(PIECES))
    skipped = load_uniter_weights(enc, tmp_path / "uniter-base.pt")
    # layer 2 of 3 is past the front end's 2 layers; pooler and mask embedding are
    # pre-training only; the heads outside "uniter." are not UNITER's encoder
    assert sorted(skipped) == sorted(
        [k for k in state if k.startswith("uniter.encoder.layer.2.")]
        + ["uniter.img_embeddings.mask_embedding.weight", "uniter.pooler.dense.bias",
           "uniter.pooler.dense.weight"])
    sd = enc.state_dict()
    q, k, v = (state[f"uniter.encoder.layer.1.attention.self.{n}.weight"]
               for n in ("query", "key", "value"))
    assert torch.equal(sd["blocks.1.qkv.weight"], torch.cat([q, k, v]))
    assert torch.equal(sd["region_proj.weight"], state["uniter.img_embeddings.img_linear.weight"])
    assert torch.equal(sd["image_norm.bias"], state["uniter.img_embeddings.LayerNorm.bias"])
    assert torch.equal(sd["blocks.0.ff_norm.weight"],
                       state["uniter.encoder.layer.0.output.LayerNorm.weight"])
    used = sum(v.numel() for k, v in state.items()
               if k.startswith("uniter.") and k not in skipped)
    assert used == sum(v.numel() for k, v in sd.items() if not k.startswith("piece_"))


def test_uniter_loader_names_the_bad_key():
    s = UniterSettings(**SMALL)
    state = uniter_state(bert_reference(layers=2))
    bad = dict(state)
    del bad["uniter.encoder.layer.1.intermediate.dense.bias"]
    with pytest.raises(UniterWeightsError, match=r"missing key uniter\.encoder\.layer\.1\."
                                                 r"intermediate\.dense\.bias"):
        convert_uniter_state(bad, s)
    bad = dict(state, **{"uniter.encoder.layer.0.attention.extra.weight": torch.zeros(1)})
    with pytest.raises(UniterWeightsError, match="unknown key uniter.encoder.layer.0.attention"):
        convert_uniter_state(bad, s)
    bad = dict(state)
    bad["uniter.img_embeddings.img_linear.weight"] = torch.zeros(16, 2048)
    with pytest.raises(UniterWeightsError, match=r"img_linear.weight has shape \(16, 2048\), "
                                                 r"expected \(16, 12\)"):
        convert_uniter_state(bad, s)
    # gamma / beta names of LayerNorm parameters are read as weight / bias
    renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma"): v for k, v in state.items()}
    assert convert_uniter_state(renamed, s)[0].keys() == convert_uniter_state(state, s)[0].keys()


def _ln(x, state, name):
    return F.layer_norm(x, x.shape[-1:], state[f"{name}.weight"], state[f"{name}.bias"], 1e-12)


def test_uniter_computes_what_bert_and_uniters_image_embedder_compute():
    torch.set_default_dtype(torch.float64)
    try:
        bert = bert_reference(layers=2).double()
        state = {k: v.double() for k, v in uniter_state(bert).items()}
        enc = UniterEncoder(UniterSettings(**SMALL), WordPieces(PIECES)).double().eval()
        enc.load_state_dict(convert_uniter_state(state, enc.settings)[0], strict=False)
        texts = [["abc", "de,", "cab"], ["Ab", "dé"], ["é"]]
        B, N = 3, 4
        gen = torch.Generator().manual_seed(3)
        regions = torch.randn(B, N, 12, generator=gen, dtype=torch.float64)
        xy = torch.rand(B, N, 2, generator=gen, dtype=torch.float64) * 0.5
        boxes = torch.cat([xy, xy + 0.1 + 0.3 * torch.rand(B, N, 2, generator=gen,
                                                           dtype=torch.float64)], -1)
        size = torch.tensor([[640.0, 480.0], [320.0, 200.0], [100.0, 80.0]])
        mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
        pos = box_positions(boxes, size)
        # the release's 7-d feature: corners over the image size, sizes counted inclusively
        w_px = (boxes[0, 0, 2] - boxes[0, 0, 0]) * 640 + 1
        assert torch.allclose(pos[0, 0, 4], w_px / 640)
        words, img = enc(texts, regions, pos, mask)
        pieces, owner, lengths = enc.tokenize(texts)
        for b in range(B):
            L, n = int(lengths[b]), int(mask[b].sum())
            ids = pieces[b:b + 1, :L]
            txt = bert.embeddings(input_ids=ids, token_type_ids=torch.zeros_like(ids))
            e = "uniter.img_embeddings"
            im = (_ln(F.linear(regions[b:b + 1, :n], state[f"{e}.img_linear.weight"],
                               state[f"{e}.img_linear.bias"]), state, f"{e}.img_layer_norm")
                  + _ln(F.linear(pos[b:b + 1, :n], state[f"{e}.pos_linear.weight"],
                                 state[f"{e}.pos_linear.bias"]), state, f"{e}.pos_layer_norm")
                  + state["uniter.embeddings.token_type_embeddings.weight"][1])
            im = _ln(im, state, f"{e}.LayerNorm")
            out = bert.encoder(torch.cat([txt, im], 1)).last_hidden_state[0]
            assert torch.allclose(img[b, :n], out[L:], atol=1e-10)
            assert not img[b, n:].any()
            for w in range(len(texts[b])):
                mine = owner[b, :L] == w
                assert torch.allclose(words[b, w], out[:L][mine].mean(0), atol=1e-10)
    finally:
        torch.set_default_dtype(torch.float32)


def tiny_uniter_config(**kw):
    return RCRNConfig.official_uniter(uniter=dict(SMALL, dropout=0.1), lstm_hidden=5, joint=8,
                                      hidden=8, sim_dim=4, spatial_dim=3, classify_hidden=6,
                                      **kw)


def test_rcrn_with_uniter_trains_and_its_checkpoint_needs_no_tokenizer(tmp_path, vocab_dir):
    from rcrn.engine.trainer import build_model, load_checkpoint, save_checkpoint

    rng = np.random.default_rng(0)
    probs = [random_problem(rng, int(rng.integers(2, 5)), int(rng.integers(3, 9)), 12)
             for _ in range(5)]
    vocab = Vocab.build(probs)
    cfg = tiny_uniter_config().to_dict()
    cfg["uniter"]["tokenizer"] = str(vocab_dir)
    config = {"model": cfg}
    torch.manual_seed(0)
    model = build_model(config, vocab)
    assert model.words is None and model.uniter.pieces is not None
    batch = collate(probs, vocab)
    out = model(batch)
    rcrn_loss(out, batch, LossConfig(reg="release"))["loss"].backward()
    # the gradient reaches UNITER's word pieces and its image embedder
    assert model.uniter.word_embed.weight.grad.abs().sum() > 0
    assert model.uniter.region_proj.weight.grad.abs().sum() > 0
    save_checkpoint(tmp_path / "m.pt", model, vocab, config)
    cfg["uniter"]["tokenizer"] = str(tmp_path / "gone")   # the folder is not read again
    again, _, _, _ = load_checkpoint(tmp_path / "m.pt")
    model.eval()
    again.eval()
    a, b = model(batch), again(batch)
    assert torch.equal(a.match_logit, b.match_logit)
    assert torch.equal(a.ground_belief, b.ground_belief)


def test_uniter_front_end_settings_are_checked(vocab_dir):
    from rcrn.engine.config import ConfigError
    from rcrn.engine.trainer import build_model

    with pytest.raises(ValueError, match=r"model.word_dim must be UNITER's width"):
        tiny_uniter_config(word_dim=300).validate()
    with pytest.raises(ValueError, match="model.uniter.layerz: unknown setting"):
        RCRNConfig.official_uniter(uniter={"layerz": 6})
    with pytest.raises(ValueError, match="model.uniter applies to front 'uniter' only"):
        RCRNConfig(uniter={"layers": 6}).validate()
    with pytest.raises(ConfigError, match="model.uniter.tokenizer: front 'uniter' needs"):
        build_model({"model": tiny_uniter_config().to_dict()}, Vocab(["a"]))
    cfg = tiny_uniter_config().to_dict()
    cfg["uniter"].update(tokenizer=str(vocab_dir), weights=str(vocab_dir / "none.pt"))
    with pytest.raises(ConfigError, match=r"model.uniter.weights: .*none.pt: no such UNITER"):
        build_model({"model": cfg}, Vocab(["a"]))


def test_release_checkpoint_with_uniter_converts(tmp_path, vocab_dir, capsys):
    from test_release import release_state

    from rcrn.cli import main
    from rcrn.engine.trainer import load_checkpoint

    state = release_state(vocab_rows=36, word=16, vis=16)
    head = state["model"]
    del head["refdet_head.rnn_encoder.embedding.weight"]     # the BiLSTM reads UNITER's words
    uniter = uniter_state(bert_reference(layers=2))
    head.update({"uniter." + k: v for k, v in uniter.items() if k.startswith("uniter.")})
    head["uniter.re_output.weight"] = torch.zeros(1, 16)     # the wrapper's own heads
    head["uniter.ng_output_global.weight"] = torch.zeros(2, 16)
    torch.save(state, tmp_path / "model_final.pth")
    words = ["<pad>"] + [f"w{i}" for i in range(30)] + ["<unk>"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    base = ["convert-checkpoint", "--from", "gitm-mr", str(tmp_path / "model_final.pth"),
            "--vocab", str(tmp_path / "vocab.txt"), "--out", str(tmp_path / "ours.pt")]
    assert main(base) == 2
    assert "give its BERT tokenizer folder (--tokenizer DIR)" in capsys.readouterr().err
    assert main(base + ["--tokenizer", str(vocab_dir)]) == 0
    assert "UNITER in front" in capsys.readouterr().out
    model, vocab, config, _ = load_checkpoint(tmp_path / "ours.pt")
    assert config["model"]["front"] == "uniter" and model.words is None
    assert config["model"]["uniter"]["layers"] == 2 and model.uniter.pieces.pieces == PIECES
    sd = model.state_dict()
    u = "uniter.uniter.encoder.layer.1.attention.self."
    assert torch.equal(sd["uniter.blocks.1.qkv.bias"],
                       torch.cat([head[u + n + ".bias"] for n in ("query", "key", "value")]))
    assert torch.equal(sd["phrases.lstm.weight_ih_l0"],
                       head["refdet_head.rnn_encoder.rnn.weight_ih_l0"])
    rng = np.random.default_rng(1)
    probs = [random_problem(rng, 3, 5, 12) for _ in range(3)]
    model.eval()
    out = model(collate(probs, vocab))
    assert torch.isfinite(out.match_logit).all()


def test_official_uniter_yaml_is_the_python_preset():
    from importlib import resources

    from rcrn.engine.config import load_config

    path = resources.files("rcrn") / "configs" / "official_uniter.yaml"
    config = load_config(path)
    section = dict(config["model"])
    section.pop("program")
    paths = {k: section["uniter"][k] for k in ("tokenizer", "weights")}
    assert RCRNConfig(**section) == RCRNConfig.official_uniter(uniter=paths)
    assert config["data"]["benchmark"] == "gitm_mr" and "region_encoder" not in config


def test_front_lr_gives_uniter_its_own_learning_rate(vocab_dir):
    from rcrn.engine.schema import section
    from rcrn.engine.trainer import build_model, parameter_groups

    cfg = tiny_uniter_config().to_dict()
    cfg["uniter"]["tokenizer"] = str(vocab_dir)
    model = build_model({"model": cfg}, Vocab(["a"]))
    front, rest = parameter_groups(model, section({"train": {"lr": 1e-3, "front_lr": 5e-5}},
                                                  "train"))
    assert {id(p) for p in front["params"]} == {id(p) for p in model.uniter.parameters()}
    assert front["lr"] == 5e-5 and front["scale"] == pytest.approx(0.05)
    assert rest["lr"] == 1e-3 and rest["scale"] == 1.0
    assert len(front["params"]) + len(rest["params"]) == len(list(model.parameters()))
    (only,) = parameter_groups(model, section({"train": {"lr": 1e-3}}, "train"))
    assert len(only["params"]) == len(list(model.parameters()))
