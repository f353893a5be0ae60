"""Weights of the official GITM-MR release (SHTUPLUS/GITM-MR) in the ``official`` preset.

The release saves detectron2-style checkpoints: a dict whose ``model`` entry is the
state_dict of its meta-architecture, with the RCRN head under ``refdet_head.``.  Its
word ids are the lines of its vocabulary file (``word_embedding/vocabulary_72700.txt``,
``<pad>`` first).  :func:`convert_state_dict` renames every tensor of the head
(RCRN-T: GloVe words and a BiLSTM) to the parameter of ``RCRN(RCRNConfig.official())``
that computes the same thing, and checks every shape; :func:`convert_checkpoint`
writes a checkpoint that ``load_checkpoint`` and ``rcrn evaluate`` read.

A checkpoint of the full model (the release's ``VIS_FEAT_TYPE: uniter``) also holds
UNITER under ``uniter.uniter.`` (its first layers, ``MODEL.REF.USE_LAYER``) and the
head's BiLSTM reads UNITER's 768-d word outputs instead of an embedding; it converts
into ``RCRNConfig.official_uniter()`` with its sizes read off the tensors (12
attention heads per 768 wide: BERT's 64 per head).  The heads of the release's
UNITER wrapper (``uniter.re_output``, ``uniter.ng_output_*``, ...) score only in its
own UNITER baseline, not in RCRN, and are skipped.  Its word pieces come from a local
BERT-base-cased tokenizer folder (the release reads ``bert-base-cased``).

Two tensors of the release hold four gates each (``weight_module_init_s`` and
``_m``: Linear(phrase state + 10 -> 4)).  The release uses outputs 0-2 of the first
(the two GateSum weights, then β of the grounding branch's propagation) and outputs
2-3 of the second (β of the match branch's bottom-up and top-down propagations);
its match branch starts from the grounding branch's local belief.  The rows it never
uses (3 of the first, 0-1 of the second) are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from rcrn.errors import RcrnError

__all__ = ["HEAD_PREFIX", "ReleaseCheckpointError", "convert_state_dict", "convert_checkpoint",
           "release_key_shapes", "official_config"]

#: Where the meta-architecture of the release keeps its RCRN head.
HEAD_PREFIX = "refdet_head."

_BN = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")
_LSTM = tuple(f"{w}_{k}_l0{r}" for r in ("", "_reverse") for w in ("weight", "bias")
              for k in ("ih", "hh"))


class ReleaseCheckpointError(RcrnError, ValueError):
    """A release checkpoint or vocabulary that cannot be converted; names the key or file."""


def _bnmlp(ours: str, theirs: str) -> dict[str, str]:
    """Our ``BNMLP`` against the release's ``nn.Sequential`` (0 Linear, 1 BN, 4 Linear, 5 BN)."""
    out = {}
    for mine, idx in (("fc1", 0), ("fc2", 4)):
        for p in ("weight", "bias"):
            out[f"{ours}.{mine}.{p}"] = f"{theirs}.{idx}.{p}"
    for mine, idx in (("bn1", 1), ("bn2", 5)):
        for p in _BN:
            out[f"{ours}.{mine}.{p}"] = f"{theirs}.{idx}.{p}"
    return out


def _linear(ours: str, theirs: str) -> dict[str, str]:
    return {f"{ours}.weight": f"{theirs}.weight", f"{ours}.bias": f"{theirs}.bias"}


def _name_map(regression: bool, uniter: bool = False) -> dict[str, str]:
    """Our parameter name -> the release head's, for everything but the gates (and
    UNITER, :func:`rcrn.models.uniter.uniter_name_map`)."""
    m = {} if uniter else {"words.embedding.weight": "rnn_encoder.embedding.weight"}
    m.update({f"phrases.lstm.{k}": f"rnn_encoder.rnn.{k}" for k in _LSTM})
    for head, enc in (("app", "node"), ("pos", "location"), ("spo", "relation")):
        m.update(_linear(f"phrases.attn.{head}", f"{enc}_input_encoder.fc"))
    for ours, theirs in (("app_sim", "node_module"), ("pos_sim", "location_module")):
        mt = f"{theirs}.matching"
        m.update(_bnmlp(f"{ours}.vis_trf", f"{mt}.vis_emb_fc"))
        m.update(_bnmlp(f"{ours}.text_trf", f"{mt}.lang_emb_fc"))
        m.update(_linear(f"{ours}.vec", f"{mt}.sim_tranloc_w"))
        m.update(_linear(f"{ours}.w_eval", f"{mt}.sim_eval_w"))
    m["app_sim.norm.weight"] = "node_module.feat_normalizer.weight"
    m["pos_sim.norm.weight"] = "location_module.lfeat_normalizer.weight"
    m.update(_linear("pos_sim.pre", "location_module.fc"))
    r = "relation_module"
    m.update(_linear("rel_sim.W_e", f"{r}.vis_fc"))
    m.update(_linear("rel_sim.W_l", f"{r}.spatial_fc"))
    m.update(_linear("rel_sim.W_f", f"{r}.fc"))
    m["rel_sim.vis_norm.weight"] = f"{r}.vis_feat_normalizer.weight"
    m["rel_sim.spatial_norm.weight"] = f"{r}.lfeat_normalizer.weight"
    m.update(_bnmlp("rel_sim.vis_trf", f"{r}.matching.vis_emb_fc"))
    m.update(_bnmlp("rel_sim.text_trf", f"{r}.matching.lang_emb_fc"))
    m.update(_linear("classify.fc1", "match_scorer.belief_fc.0"))
    m.update({f"classify.bn.{p}": f"match_scorer.belief_fc.1.{p}" for p in _BN})
    m.update(_linear("classify.fc2", "match_scorer.match_fc.0"))
    m["classify.pad_value"] = "match_scorer.pad_value"
    m["ground_scale"] = "criterion.scale_fun.scale"
    if regression:
        g = "regression_head"
        m["regress.norm.weight"] = f"{g}.feat_normalizer.weight"
        m.update(_bnmlp("regress.vis_trf", f"{g}.vis_emb_fc"))
        m.update(_bnmlp("regress.text_trf", f"{g}.lang_emb_fc"))
        m.update(_linear("regress.out", f"{g}.box_regre"))
    return m


#: Our gate -> (release tensor, rows of its 4 outputs).
_GATES = {"local_full": ("weight_module_init_s", slice(0, 2)),
          "ground_up": ("weight_module_init_s", slice(2, 3)),
          "match_up": ("weight_module_init_m", slice(2, 3)),
          "match_down": ("weight_module_init_m", slice(3, 4))}


#: The release's UNITER path: where the encoder sits, and its wrapper's own heads.
UNITER_PREFIX = "uniter.uniter."
_UNITER_HEADS = ("uniter.re_output.", "uniter.ng_output", "uniter.fc_att.", "uniter.cls.")


def official_config(vis_dim: int, word_dim: int, regression: bool = True,
                    uniter: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``model`` section of ``rcrn/configs/official.yaml`` for the given input sizes
    (with ``uniter`` settings: the full model, UNITER in front)."""
    from rcrn.engine.config import read_yaml

    path = Path(__file__).resolve().parent.parent / "configs" / "official.yaml"
    model = dict(read_yaml(path)["model"])
    model.update(vis_dim=int(vis_dim), pair_dim=int(vis_dim), word_dim=int(word_dim),
                 regression=bool(regression))
    if uniter is not None:
        model.update(front="uniter", uniter=dict(uniter))
    return model


def _uniter_settings(state: Mapping[str, Any], where: str) -> dict[str, Any] | None:
    """UNITER's sizes read off a release checkpoint's tensors (None without UNITER)."""
    enc = {k[len(UNITER_PREFIX):]: v for k, v in state.items() if k.startswith(UNITER_PREFIX)}
    if not enc:
        return None
    need = ("embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
            "img_embeddings.img_linear.weight", "encoder.layer.0.intermediate.dense.weight")
    for key in need:
        if key not in enc or not isinstance(enc[key], torch.Tensor) or enc[key].dim() != 2:
            raise ReleaseCheckpointError(f"{where}: missing key {UNITER_PREFIX}{key}")
    layers = {int(k.split(".")[2]) for k in enc
              if k.startswith("encoder.layer.") and k.split(".")[2].isdigit()}
    rows, hidden = enc[need[0]].shape
    return dict(layers=max(layers) + 1, hidden=int(hidden), heads=max(1, int(hidden) // 64),
                intermediate=int(enc[need[3]].shape[0]), vocab_size=int(rows),
                max_positions=int(enc[need[1]].shape[0]), img_dim=int(enc[need[2]].shape[1]))


def _head(state: Mapping[str, Any], where: str) -> dict[str, torch.Tensor]:
    if not isinstance(state, Mapping):
        raise ReleaseCheckpointError(f"{where}: not a state_dict (a {type(state).__name__})")
    if "model" in state and isinstance(state["model"], Mapping):
        state = state["model"]
    prefixed = any(k.startswith(HEAD_PREFIX) for k in state)
    head = {k[len(HEAD_PREFIX):] if prefixed else k: v for k, v in state.items()
            if (k.startswith(HEAD_PREFIX) if prefixed else not k.startswith("uniter."))}
    for k, v in head.items():
        if not isinstance(v, torch.Tensor):
            raise ReleaseCheckpointError(f"{where}: key {k!r} is not a tensor")
    return head


def release_key_shapes(state: Mapping[str, torch.Tensor]) -> dict[str, tuple[int, ...]]:
    """The shape of every release-head tensor that :func:`convert_state_dict` expects for
    the sizes found in ``state`` (region width, word width, vocabulary rows)."""
    from rcrn.models.rcrn import RCRN, RCRNConfig

    head = _head(state, "state_dict")
    model_dict = state.get("model", state) if isinstance(state, Mapping) else state
    uniter = _uniter_settings(model_dict, "state_dict")
    vis, word = _sizes(head, "state_dict", uniter is not None)
    cfg = RCRNConfig(**official_config(vis, word, "regression_head.box_regre.weight" in head,
                                       uniter))
    rows = 1 if uniter else int(head["rnn_encoder.embedding.weight"].shape[0])
    with torch.device("meta"):
        model = RCRN(cfg, rows)
    ours = model.state_dict()
    shapes = {theirs: tuple(ours[mine].shape)
              for mine, theirs in _name_map(cfg.regression, uniter is not None).items()}
    for gate, (theirs, _) in _GATES.items():
        w = ours[f"gates.{gate}.gate.linear.weight"]
        shapes[f"{theirs}.0.weight"] = (4, w.shape[1])
        shapes[f"{theirs}.0.bias"] = (4,)
    return shapes


def _sizes(head: Mapping[str, torch.Tensor], where: str, uniter: bool = False
           ) -> tuple[int, int]:
    """Region and word widths: the embedding's (RCRN-T), the BiLSTM's input (UNITER)."""
    words = "rnn_encoder.rnn.weight_ih_l0" if uniter else "rnn_encoder.embedding.weight"
    for key in ("node_module.feat_normalizer.weight", words):
        if key not in head:
            raise ReleaseCheckpointError(f"{where}: missing key {HEAD_PREFIX}{key} (not a "
                                         "checkpoint of the release's RCRN head?)")
    vis, emb = head["node_module.feat_normalizer.weight"], head[words]
    if vis.dim() != 2 or emb.dim() != 2:
        raise ReleaseCheckpointError(f"{where}: key {HEAD_PREFIX}node_module.feat_normalizer"
                                     f".weight or {words} is not 2-d")
    return int(vis.shape[1]), int(emb.shape[1])


def convert_state_dict(state: Mapping[str, Any], vocab_size: int, where: str = "checkpoint"
                       ) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Our ``state_dict`` and ``model`` config section from a release checkpoint.

    Args:
        state: the release's checkpoint (``{"model": state_dict}``), its meta-
            architecture's state_dict (keys under ``refdet_head.``) or the head's own.
        vocab_size: the words of the vocabulary file; the release's embedding must
            have at least as many rows (it has 72,704 for 72,700 words: the extra rows
            are never looked up and are dropped).
        where: how errors name the checkpoint.

    Raises:
        ReleaseCheckpointError: a missing, unknown or mis-shaped key (named), or a
            vocabulary larger than the embedding.
    """
    from rcrn.models.rcrn import RCRN, RCRNConfig
    from rcrn.models.uniter import UniterSettings, UniterWeightsError, convert_uniter_state

    head = _head(state, where)
    model_dict = state["model"] if isinstance(state.get("model"), Mapping) else state
    uniter = _uniter_settings(model_dict, where)
    vis, word = _sizes(head, where, uniter is not None)
    rows = vocab_size if uniter else int(head["rnn_encoder.embedding.weight"].shape[0])
    if vocab_size > rows:
        raise ReleaseCheckpointError(f"{where}: the vocabulary has {vocab_size} words but key "
                                     f"{HEAD_PREFIX}rnn_encoder.embedding.weight has {rows} "
                                     "rows: not this checkpoint's vocabulary")
    model_cfg = official_config(vis, word, "regression_head.box_regre.weight" in head, uniter)
    try:
        with torch.device("meta"):
            model = RCRN(RCRNConfig(**model_cfg), vocab_size)
    except ValueError as exc:   # sizes the official preset cannot take (named)
        raise ReleaseCheckpointError(f"{where}: {exc}") from None
    ours = model.state_dict()
    names = _name_map(model_cfg["regression"], uniter is not None)
    out: dict[str, torch.Tensor] = {}
    if uniter is not None:
        try:
            weights, _ = convert_uniter_state(model_dict, UniterSettings(**uniter),
                                              UNITER_PREFIX, where)
        except UniterWeightsError as exc:
            raise ReleaseCheckpointError(str(exc)) from None
        out.update({f"uniter.{k}": v for k, v in weights.items()})
        others = sorted(k for k in model_dict if k.startswith("uniter.")
                        and not k.startswith(UNITER_PREFIX) and not k.startswith(_UNITER_HEADS))
        if others:
            raise ReleaseCheckpointError(f"{where}: unknown key {others[0]}")
    else:
        stray = sorted(k for k in model_dict if k.startswith("uniter."))
        if stray:
            raise ReleaseCheckpointError(f"{where}: unknown key {stray[0]} (the release keeps "
                                         f"UNITER under {UNITER_PREFIX})")
    used = set()
    for mine, theirs in names.items():
        if theirs not in head:
            raise ReleaseCheckpointError(f"{where}: missing key {HEAD_PREFIX}{theirs}")
        value = head[theirs]
        if mine == "words.embedding.weight":
            value = value[:vocab_size]
        if tuple(value.shape) != tuple(ours[mine].shape):
            raise ReleaseCheckpointError(
                f"{where}: key {HEAD_PREFIX}{theirs} has shape {tuple(head[theirs].shape)}, "
                f"expected {tuple(ours[mine].shape)} (for {mine})")
        out[mine] = value.detach().clone().to(ours[mine].dtype)
        used.add(theirs)
    for gate, (theirs, sel) in _GATES.items():
        for p in ("weight", "bias"):
            key = f"{theirs}.0.{p}"
            if key not in head:
                raise ReleaseCheckpointError(f"{where}: missing key {HEAD_PREFIX}{key}")
            mine = f"gates.{gate}.gate.linear.{p}"
            want = (4,) + tuple(ours[mine].shape[1:])
            if tuple(head[key].shape) != want:
                raise ReleaseCheckpointError(f"{where}: key {HEAD_PREFIX}{key} has shape "
                                             f"{tuple(head[key].shape)}, expected {want}")
            out[mine] = head[key][sel].detach().clone().float()
            used.add(key)
    unknown = sorted(set(head) - used)
    if unknown:
        raise ReleaseCheckpointError(f"{where}: unknown key {HEAD_PREFIX}{unknown[0]}"
                                     + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1
                                        else ""))
    missing = sorted(k for k in set(ours) - set(out) if not k.startswith("uniter.piece_"))
    if missing:  # a parameter of ours the release does not have: a bug in the name map
        raise ReleaseCheckpointError(f"{where}: nothing in the release for {missing[0]}")
    return out, model_cfg


def convert_checkpoint(checkpoint: str | Path, vocab_file: str | Path, out: str | Path,
                       data: Mapping[str, Any] | None = None,
                       tokenizer: str | Path | None = None) -> dict[str, Any]:
    """Write ``out``: the release checkpoint in the official preset, with its vocabulary.

    ``data`` is the config's data section (default: ``gitm_mr.yaml``'s).  ``tokenizer``
    is the local BERT tokenizer folder a checkpoint with UNITER needs (its word pieces
    are then stored in ``out``).  Returns the config written.
    """
    from rcrn.batching import Vocab
    from rcrn.engine.config import read_yaml
    from rcrn.engine.trainer import build_model, save_checkpoint

    checkpoint, vocab_file = Path(checkpoint), Path(vocab_file)
    if not checkpoint.is_file():
        raise ReleaseCheckpointError(f"{checkpoint}: no such checkpoint file")
    if not vocab_file.is_file():
        raise ReleaseCheckpointError(f"{vocab_file}: no such vocabulary file")
    vocab = Vocab.from_file(vocab_file)
    try:
        state = torch.load(checkpoint, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a file that is not a checkpoint
        raise ReleaseCheckpointError(f"{checkpoint}: not a readable torch checkpoint "
                                     f"({type(exc).__name__}: {str(exc).splitlines()[0]})"
                                     ) from None
    weights, model_cfg = convert_state_dict(state, len(vocab.itos), str(checkpoint))
    if model_cfg.get("front") == "uniter":
        if tokenizer is None:
            raise ReleaseCheckpointError(f"{checkpoint}: holds UNITER (keys {UNITER_PREFIX}*): "
                                         "give its BERT tokenizer folder (--tokenizer DIR)")
        model_cfg["uniter"]["tokenizer"] = str(tokenizer)
    configs = Path(__file__).resolve().parent.parent / "configs"
    config = read_yaml(configs / "official.yaml")
    config["model"] = model_cfg
    config.pop("region_encoder", None)   # the release reads precomputed region features
    config["data"] = dict(data if data is not None else read_yaml(configs / "gitm_mr.yaml")["data"])
    model = build_model(config, vocab, pretrained_words=model_cfg.get("front") == "uniter")
    missing, unexpected = model.load_state_dict(weights, strict=False)
    assert not unexpected and all(k.startswith("uniter.piece_") for k in missing), missing
    save_checkpoint(out, model, vocab, config)
    return config
