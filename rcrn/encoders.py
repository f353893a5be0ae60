"""Candidate representation (paper 4.1.2 and appendix A.1).

* Words: learned embeddings, a GloVe-format vocabulary + matrix pair, or the
  static word vectors of any local ``transformers`` encoder directory.
* Phrases: a BiLSTM with three self-attention heads (app, pos, spo) giving the
  entity appearance feature ``e_i``, location feature ``l^e_i``, phrase state
  ``h^e_i`` and, over the subject-predicate-object words, ``r^e_ij``.
* Regions: the region feature ``o_i`` plus the 5-d location
  ``[x, y, w, h, wh]`` (normalised); pair geometry ``s_ij`` of appendix A.1.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rcrn.batching import Vocab, normalize_token

__all__ = ["WordEmbedding", "PhraseEncoder", "location_feature", "spatial_pair",
           "load_glove", "transformer_word_vectors"]


def location_feature(boxes: torch.Tensor) -> torch.Tensor:
    """``[x, y, w, h, w*h]`` of normalised xyxy boxes ``[..., 4]`` (top-left corner).

    The release counts a box's pixels inclusively (``w = x2 - x1 + 1``): give it boxes
    whose far corner is moved by one pixel (``RCRN`` does so with ``boxes="inclusive"``).
    """
    x1, y1, x2, y2 = boxes.unbind(-1)
    w, h = x2 - x1, y2 - y1
    return torch.stack([x1, y1, w, h, w * h], dim=-1)


def spatial_pair(sub: torch.Tensor, obj: torch.Tensor, eps: float = 1e-3) -> torch.Tensor:
    r"""Relative geometry ``s_ij`` of appendix A.1 between subject and object boxes.

    ``s_ij = [(x_j - xc_i)/w_i, (y_j - yc_i)/h_i, (x_j + w_j - xc_i)/w_i,
    (y_j + h_j - yc_i)/h_i, w_j h_j / (w_i h_i)]`` for normalised xyxy boxes
    broadcastable to a common shape ``[..., 4]``; returns ``[..., 5]``.
    """
    sx1, sy1, sx2, sy2 = sub.unbind(-1)
    ox1, oy1, ox2, oy2 = obj.unbind(-1)
    sw, sh = (sx2 - sx1).clamp(min=eps), (sy2 - sy1).clamp(min=eps)
    xc, yc = (sx1 + sx2) * 0.5, (sy1 + sy2) * 0.5
    return torch.stack([(ox1 - xc) / sw, (oy1 - yc) / sh, (ox2 - xc) / sw, (oy2 - yc) / sh,
                        (ox2 - ox1) * (oy2 - oy1) / (sw * sh)], dim=-1)


def load_glove(vocab_path: str | Path, matrix_path: str | Path,
               vocab: Vocab) -> torch.Tensor:
    """Rows of a GloVe-format pair (one word per line + ``.npy`` matrix) for ``vocab``.

    Words of ``vocab`` absent from the file get small random vectors; ``<pad>``
    gets zeros.
    """
    words = Path(vocab_path).read_text(encoding="utf-8").splitlines()
    matrix = np.load(matrix_path, allow_pickle=False)
    if matrix.ndim != 2 or len(matrix) != len(words):
        raise ValueError(f"{matrix_path}: matrix of shape {matrix.shape} does not match "
                         f"the {len(words)} words of {vocab_path}")
    index = {normalize_token(w): i for i, w in enumerate(words)}
    gen = torch.Generator().manual_seed(0)
    out = torch.randn(len(vocab), matrix.shape[1], generator=gen) * 0.1
    for i, w in enumerate(vocab.itos):
        if w in index:
            out[i] = torch.from_numpy(np.asarray(matrix[index[w]], dtype=np.float32))
    out[0] = 0.0
    return out


def transformer_word_vectors(model_dir: str | Path, vocab: Vocab,
                             batch_size: int = 256) -> torch.Tensor:
    """Static word vectors from a local ``transformers`` encoder directory.

    Each vocabulary word is encoded alone and its sub-word outputs are
    mean-pooled.  Nothing is downloaded: ``model_dir`` must hold the model.

    Raises:
        FileNotFoundError: when ``model_dir`` is not a folder holding a ``config.json``.
    """
    if not (Path(model_dir) / "config.json").is_file():
        raise FileNotFoundError(f"{model_dir}: not a local transformers model folder (no "
                                "config.json); nothing is downloaded")
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise ImportError("word features from a transformers encoder need the "
                          "'transformers' package: pip install 'rcrn[transformers]'") from exc
    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    rows = []
    with torch.no_grad():
        for start in range(0, len(vocab), batch_size):
            words = vocab.itos[start:start + batch_size]
            enc = tok(words, return_tensors="pt", padding=True, add_special_tokens=False)
            hidden = model(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).float()
            rows.append((hidden * m).sum(1) / m.sum(1).clamp(min=1.0))
    out = torch.cat(rows)
    out[0] = 0.0
    return out


class WordEmbedding(nn.Module):
    """Word ids to vectors: learned, or initialised from pretrained rows (optionally frozen)."""

    def __init__(self, num_words: int, dim: int, pretrained: torch.Tensor | None = None,
                 freeze: bool = False) -> None:
        super().__init__()
        if pretrained is not None:
            num_words, dim = pretrained.shape
        self.embedding = nn.Embedding(num_words, dim, padding_idx=0)
        self.pretrained = pretrained
        self.embedding.weight.requires_grad_(not freeze)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.pretrained is not None:
            with torch.no_grad():
                self.embedding.weight.copy_(self.pretrained)
        else:
            nn.init.normal_(self.embedding.weight, std=0.1)
            with torch.no_grad():
                self.embedding.weight[0].zero_()

    @property
    def dim(self) -> int:
        return self.embedding.embedding_dim

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embedding(ids)


class PhraseEncoder(nn.Module):
    r"""BiLSTM + self-attention heads over the words of each phrase.

    For a phrase of words ``w_t`` with BiLSTM states ``h_t``, head ``M`` gives
    ``a^M = softmax_t(W_M^T [w_t, h_t])`` and the feature
    ``sum_t a^M_t [w_t, h_t]`` projected to ``out_dim`` (``attention="projected"``).
    With ``attention="release"`` (the release's, after SGMN) the score reads the LSTM
    states only, ``a^M = softmax_t(W_M^T h_t)``, and the feature is the attended word
    vectors ``sum_t a^M_t w_t`` as they are (``out_dim`` is then the word size).  The
    phrase state is the concatenation of the last forward and the first backward LSTM
    state.

    Shapes: ``tokens [P, L]``, ``lengths [P]`` -> ``state [P, 2H]`` and one
    ``[P, out_dim]`` tensor per head.
    """

    ATTENTION = ("projected", "release")

    def __init__(self, word_dim: int, hidden: int, out_dim: int,
                 heads: tuple[str, ...] = ("app", "pos", "spo"),
                 attention: str = "projected") -> None:
        super().__init__()
        if attention not in self.ATTENTION:
            raise ValueError(f"phrase attention must be one of {self.ATTENTION}, got "
                             f"{attention!r}")
        self.lstm = nn.LSTM(word_dim, hidden, batch_first=True, bidirectional=True)
        self.attention = attention
        self.heads = tuple(heads)
        if attention == "release":
            out_dim = word_dim
            self.attn = nn.ModuleDict({h: nn.Linear(2 * hidden, 1) for h in heads})
            self.proj = None
        else:
            feat = word_dim + 2 * hidden
            self.attn = nn.ModuleDict({h: nn.Linear(feat, 1) for h in heads})
            self.proj = nn.ModuleDict({h: nn.Linear(feat, out_dim) for h in heads})
        self.hidden, self.out_dim = hidden, out_dim

    @property
    def state_dim(self) -> int:
        return 2 * self.hidden

    def forward(self, words: torch.Tensor, lengths: torch.Tensor,
                heads: tuple[str, ...] | None = None
                ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """``(state [P, 2 * hidden], {head: [P, out_dim]})`` of phrases ``words [P, L, D]``
        with ``lengths [P]``, for the attention heads named in ``heads`` (all by default)."""
        heads = self.heads if heads is None else heads
        if words.shape[0] == 0:
            empty = words.new_zeros(0, self.state_dim)
            return empty, {h: words.new_zeros(0, self.out_dim) for h in heads}
        packed = pack_padded_sequence(words, lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)
        out, (h_n, _) = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=words.shape[1])
        state = torch.cat([h_n[0], h_n[1]], dim=-1)
        release = self.attention == "release"
        feats = out if release else torch.cat([words, out], dim=-1)
        lengths = lengths.to(words.device)
        valid = torch.arange(words.shape[1], device=words.device)[None] < lengths[:, None]
        result = {}
        for h in heads:
            score = self.attn[h](feats).squeeze(-1).masked_fill(~valid, float("-inf"))
            weights = torch.softmax(score, dim=-1).unsqueeze(-1)
            if release:
                result[h] = (weights * words).sum(1)
            else:
                result[h] = self.proj[h]((weights * feats).sum(1))
        return state, result
