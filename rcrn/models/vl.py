"""A single-stream vision-language transformer over words and regions.

Both the non-modular cross-encoder baseline (``rcrn.models.cross_encoder``, in the
style of UNITER: ``[CLS]`` + words + regions through one transformer) and the RCRN
variant with vision-language layers (paper 4.1.2, Table 9: the first k layers feed
the candidate features) are built on :class:`VLEncoder`.

Positions are sinusoidal rather than learned, so an expression longer than any seen
in training gets well-defined position codes (learned ones would be untrained
rows there, which would make a length-generalisation comparison unfair).  Word
and region vectors are layer-normalised before the (learnably scaled, initially
0.1) position codes are added: otherwise the codes, of unit size, drown the
small initial word vectors and the attention learns word-region alignment very
slowly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn

from rcrn.batching import GroundingBatch, Vocab
from rcrn.encoders import WordEmbedding, location_feature

__all__ = ["VLConfig", "VLEncoder", "sinusoidal_positions", "load_vl_weights"]


@dataclass
class VLConfig:
    """Sizes of the transformer: width, layers, heads, feed-forward width, dropout; and
    ``init``, a local checkpoint whose vision-language layers initialise these
    (:func:`load_vl_weights`; RCRN's ``model.vl.init``)."""

    dim: int = 128
    layers: int = 4
    heads: int = 4
    ff: int = 256
    dropout: float = 0.1
    init: str | None = None

    @classmethod
    def from_dict(cls, section: dict[str, Any] | None, where: str = "model.vl") -> VLConfig:
        """The settings of a config section; raises ``ValueError`` naming a bad key."""
        section = dict(section or {})
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(section) - set(known))
        if unknown:
            raise ValueError(f"{where}.{unknown[0]}: unknown setting; known: {known}")
        out = cls(**section)
        for name in ("dim", "layers", "heads", "ff"):
            v = getattr(out, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name == "layers"
                                                                      else 1):
                raise ValueError(f"{where}.{name} must be an integer >= "
                                 f"{0 if name == 'layers' else 1}, got {v!r}")
        if isinstance(out.dropout, bool) or not isinstance(out.dropout, (int, float)) \
                or not 0 <= out.dropout < 1:
            raise ValueError(f"{where}.dropout must be in [0, 1), got {out.dropout!r}")
        if out.init is not None and not (isinstance(out.init, str) and out.init):
            raise ValueError(f"{where}.init must be a checkpoint path, got {out.init!r}")
        if out.dim % out.heads:
            raise ValueError(f"{where}.dim must be divisible by {where}.heads, got dim "
                             f"{out.dim} and heads {out.heads}")
        return out


def sinusoidal_positions(length: int, dim: int, device: torch.device | None = None
                         ) -> torch.Tensor:
    """``[length, dim]`` fixed sine/cosine position codes (Vaswani et al.)."""
    pos = torch.arange(length, dtype=torch.float32, device=device)[:, None]
    half = torch.arange(0, dim, 2, dtype=torch.float32, device=device)
    freq = torch.exp(-math.log(10000.0) * half / dim)
    out = torch.zeros(length, dim, device=device)
    out[:, 0::2] = torch.sin(pos * freq)
    out[:, 1::2] = torch.cos(pos * freq)[:, : dim // 2]
    return out


class VLEncoder(nn.Module):
    """``[CLS]`` + expression words + regions through pre-norm transformer layers.

    Args:
        vocab_size: number of words.
        word_dim: word embedding size (pretrained vectors set it).
        vis_dim: region feature size.
        config: transformer sizes.
        word_vectors: optional pretrained word vectors ``[vocab_size, word_dim]``.
        freeze_words: keep them fixed.

    ``forward(batch, regions, layers=None)`` returns ``(cls [B, D], words [B, Lt, D],
    regions [B, N, D])`` after the first ``layers`` layers (all by default).
    """

    def __init__(self, vocab_size: int, word_dim: int, vis_dim: int, config: VLConfig,
                 word_vectors: torch.Tensor | None = None, freeze_words: bool = False) -> None:
        super().__init__()
        if config.dim % config.heads:
            raise ValueError(f"transformer width {config.dim} is not divisible by "
                             f"{config.heads} heads")
        self.config = config
        d = config.dim
        self.words = WordEmbedding(vocab_size, word_dim, word_vectors, freeze_words)
        self.word_proj = nn.Linear(self.words.dim, d)
        self.word_norm = nn.LayerNorm(d)
        self.position_scale = nn.Parameter(torch.tensor(0.1))
        self.region_proj = nn.Linear(vis_dim, d)
        self.location_proj = nn.Linear(5, d)
        self.region_norm = nn.LayerNorm(d)
        self.types = nn.Embedding(3, d)              # 0 [CLS], 1 word, 2 region
        self.cls = nn.Parameter(torch.zeros(d))
        self.embed_norm = nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, config.heads, config.ff, config.dropout,
                                       batch_first=True, norm_first=True)
            for _ in range(config.layers))
        self.out_norm = nn.LayerNorm(d)

    @property
    def dim(self) -> int:
        return self.config.dim

    def forward(self, batch: GroundingBatch, regions: torch.Tensor, layers: int | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if batch.text_tokens is None:
            raise ValueError("the batch has no text_tokens; collate it with rcrn.batching.collate")
        tokens, lengths = batch.text_tokens, batch.text_lengths
        B, Lt = tokens.shape
        N = regions.shape[1]
        dev = tokens.device
        positions = sinusoidal_positions(Lt, self.dim, dev) * self.position_scale
        words = self.word_norm(self.word_proj(self.words(tokens))) + positions
        words = words + self.types.weight[1]
        boxes = self.region_proj(regions) + self.location_proj(location_feature(batch.boxes))
        boxes = self.region_norm(boxes) + self.types.weight[2]
        cls = (self.cls + self.types.weight[0]).expand(B, 1, -1)
        x = self.dropout(self.embed_norm(torch.cat([cls, words, boxes], dim=1)))
        word_mask = torch.arange(Lt, device=dev)[None] < lengths[:, None]
        keep = torch.cat([torch.ones(B, 1, dtype=torch.bool, device=dev), word_mask,
                          batch.box_mask], dim=1)
        pad = ~keep
        for layer in self.layers[:layers]:
            x = layer(x, src_key_padding_mask=pad)
        x = self.out_norm(x)
        return x[:, 0], x[:, 1:1 + Lt], x[:, 1 + Lt:1 + Lt + N]


def word_rows_by_word(rows: torch.Tensor, words: Sequence[str], table: torch.Tensor,
                      vocab: Vocab) -> torch.Tensor:
    """A copy of the embedding ``table`` (rows of ``vocab``) whose rows of the words in
    ``words`` (the vocabulary of ``rows``) are those of ``rows``; the other words keep
    their rows.  Both tables have the same width."""
    table = table.clone()
    for i, word in enumerate(words):
        if word in vocab and i < rows.shape[0]:
            table[vocab.stoi[word]] = rows[i]
    return table


def load_vl_weights(encoder: VLEncoder, path: str | Path, vocab: Vocab,
                    prefix: str = "encoder.") -> int:
    """Initialise ``encoder`` from a local checkpoint; returns the number of layers loaded.

    ``path`` is an ``rcrn train`` checkpoint of a model holding a ``VLEncoder`` under
    ``prefix`` (the cross-encoder baseline), or a plain state dict of a ``VLEncoder``.
    Layers beyond ``encoder``'s own are ignored; word rows are copied by word, so
    the checkpoint's vocabulary may differ from ``vocab`` (new words keep their
    random rows).

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        ValueError: when the checkpoint holds no encoder, or sizes differ (naming them).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"vision-language checkpoint {path} does not exist")
    state: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=True)
    weights = state.get("model", state)
    if any(k.startswith(prefix) for k in weights):
        weights = {k[len(prefix):]: v for k, v in weights.items() if k.startswith(prefix)}
    if "word_proj.weight" not in weights:
        raise ValueError(f"{path}: no vision-language encoder weights (expected keys "
                         f"'{prefix}word_proj.weight', ...)")
    own = encoder.state_dict()
    loaded: dict[str, torch.Tensor] = {}
    for key, value in weights.items():
        if key.startswith("layers.") and int(key.split(".")[1]) >= len(encoder.layers):
            continue
        if key == "words.embedding.weight":
            continue
        if key not in own:
            raise ValueError(f"{path}: unexpected encoder weight {key!r}")
        if own[key].shape != value.shape:
            raise ValueError(f"{path}: {key} has shape {tuple(value.shape)}, the model "
                             f"expects {tuple(own[key].shape)} (check the vl sizes)")
        loaded[key] = value
    rows = weights.get("words.embedding.weight")
    if rows is not None:
        table = own["words.embedding.weight"]
        if rows.shape[1] != table.shape[1]:
            raise ValueError(f"{path}: word vectors of size {rows.shape[1]}, the model "
                             f"expects {table.shape[1]}")
        words = state.get("vocab")
        if words is None:
            if rows.shape[0] != table.shape[0]:
                raise ValueError(f"{path}: {rows.shape[0]} word rows and no vocabulary "
                                 f"to map them onto {table.shape[0]} words")
            table = rows
        else:
            table = word_rows_by_word(rows, words, table, vocab)
        loaded["words.embedding.weight"] = table
    encoder.load_state_dict(loaded, strict=False)
    return len({k.split(".")[1] for k in loaded if k.startswith("layers.")})
