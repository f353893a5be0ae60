"""UNITER's first layers as RCRN's vision-language front end (the paper's full model).

The GITM-MR paper's RCRN (Table 2 "RCRN", Table 3 last row) reads its words and
regions through the first 6 layers of UNITER-base (Chen et al., 2020): BERT word
pieces of the whole expression and the detector's 2048-d region features with 7-d
box positions go through one post-norm transformer; the region outputs replace the
region features and the word outputs (the mean of each word's pieces) replace the
word vectors that the phrase encoder reads.  Everything after that is RCRN-T.

* :class:`WordPieces` tokenises as BERT does (clean-up, CJK spacing, punctuation
  split, optional lower-casing with accents stripped, greedy longest-match word
  pieces) from a local ``vocab.txt``; nothing is downloaded.
* :class:`UniterSettings` holds the sizes (UNITER-base by default) and the local
  paths of the tokenizer folder and of the weights.
* :class:`UniterEncoder` is the network; it keeps its word-piece vocabulary in its
  state_dict (buffers ``piece_bytes`` and ``piece_lower``), so a trained checkpoint
  needs no tokenizer folder.
* :func:`uniter_name_map` and :func:`load_uniter_weights` read UNITER's checkpoints
  (``uniter-base.pt``: keys ``uniter.embeddings.*``, ``uniter.img_embeddings.*``,
  ``uniter.encoder.layer.N.*``) by their key names; layers past the front end's and
  the pre-training heads are skipped and counted, anything else unknown is an error.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from rcrn.errors import RcrnError

__all__ = ["WordPieces", "UniterSettings", "UniterEncoder", "UniterWeightsError",
           "uniter_name_map", "load_uniter_weights", "box_positions"]


class UniterWeightsError(RcrnError, ValueError):
    """UNITER weights or a tokenizer folder that cannot be used; names the key or file."""


# ----------------------------------------------------------------- word pieces
def _is_control(ch: str) -> bool:
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def _is_space(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    # every non-alphanumeric ASCII sign counts, as in BERT (e.g. "^", "$", "`")
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F
            or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


class WordPieces:
    """BERT's tokenizer over a local word-piece vocabulary (``vocab.txt``).

    Args:
        pieces: the vocabulary, one piece per id (``[PAD]``, ``[UNK]``, ``[CLS]``,
            ``[SEP]`` must be among them).
        lower_case: lower-case and strip accents first (uncased models); BERT-base-
            cased, UNITER's tokenizer, keeps case.

    ``encode(words)`` returns the piece ids of each word: what BERT's tokenizer gives
    for ``" ".join(words)``, split by word.  Words are cached.
    """

    MAX_CHARS = 100     # a longer word is one [UNK], as in BERT

    def __init__(self, pieces: Sequence[str], lower_case: bool = False) -> None:
        self.pieces = list(pieces)
        self.index = {p: i for i, p in enumerate(self.pieces)}
        missing = [t for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]") if t not in self.index]
        if missing:
            raise UniterWeightsError(f"word-piece vocabulary lacks {missing[0]}")
        self.lower_case = bool(lower_case)
        self.pad_id, self.unk_id = self.index["[PAD]"], self.index["[UNK]"]
        self.cls_id, self.sep_id = self.index["[CLS]"], self.index["[SEP]"]
        self._cache: dict[str, list[int]] = {}

    @classmethod
    def from_folder(cls, folder: str | Path) -> WordPieces:
        """Read ``folder/vocab.txt`` (one piece a line) and, when present,
        ``do_lower_case`` from ``folder/tokenizer_config.json`` (default: cased).

        Raises:
            UniterWeightsError: naming the file, when it is missing or unreadable.
        """
        folder = Path(folder)
        vocab = folder / "vocab.txt"
        if not vocab.is_file():
            raise UniterWeightsError(f"{vocab}: no word-piece vocabulary (a local BERT "
                                     "tokenizer folder holds vocab.txt; nothing is downloaded)")
        try:
            pieces = vocab.read_text(encoding="utf-8").split("\n")
        except UnicodeDecodeError as exc:
            raise UniterWeightsError(f"{vocab}: not UTF-8 ({exc.reason} at byte "
                                     f"{exc.start})") from None
        if pieces and pieces[-1] == "":
            pieces.pop()
        pieces = [p.rstrip("\r") for p in pieces]
        lower = False
        conf = folder / "tokenizer_config.json"
        if conf.is_file():
            try:
                lower = json.loads(conf.read_text(encoding="utf-8")).get("do_lower_case",
                                                                         False)
            except (ValueError, AttributeError, RecursionError) as exc:
                raise UniterWeightsError(f"{conf}: not a JSON object ({exc})") from None
            if not isinstance(lower, bool):
                raise UniterWeightsError(f"{conf}: do_lower_case must be true or false, got "
                                         f"{lower!r}")
        try:
            return cls(pieces, lower)
        except UniterWeightsError as exc:
            raise UniterWeightsError(f"{vocab}: {exc}") from None

    def __len__(self) -> int:
        return len(self.pieces)

    def _basic(self, text: str) -> list[str]:
        chars = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or _is_control(ch):
                continue
            if _is_space(ch):
                chars.append(" ")
            elif _is_cjk(cp):
                chars.append(f" {ch} ")
            else:
                chars.append(ch)
        out: list[str] = []
        for token in "".join(chars).split():
            if self.lower_case:
                token = "".join(c for c in unicodedata.normalize("NFD", token.lower())
                                if unicodedata.category(c) != "Mn")
            current = ""
            for ch in token:
                if _is_punctuation(ch):
                    if current:
                        out.append(current)
                    out.append(ch)
                    current = ""
                else:
                    current += ch
            if current:
                out.append(current)
        return out

    def _pieces(self, token: str) -> list[int]:
        if len(token) > self.MAX_CHARS:
            return [self.unk_id]
        ids, start = [], 0
        while start < len(token):
            end = len(token)
            while end > start:
                piece = token[start:end] if start == 0 else "##" + token[start:end]
                if piece in self.index:
                    ids.append(self.index[piece])
                    break
                end -= 1
            else:
                return [self.unk_id]
            start = end
        return ids

    def word(self, word: str) -> list[int]:
        """The piece ids of one word (possibly several tokens after punctuation split)."""
        ids = self._cache.get(word)
        if ids is None:
            ids = [i for t in self._basic(word) for i in self._pieces(t)]
            self._cache[word] = ids
        return ids

    def encode(self, words: Sequence[str]) -> list[list[int]]:
        return [self.word(w) for w in words]


# -------------------------------------------------------------------- settings
@dataclass
class UniterSettings:
    """Sizes and local files of the UNITER front end (``model.uniter`` in a config).

    The sizes default to UNITER-base's (``uniter-base.json``) with its first 6 layers,
    as the release reads them.  ``tokenizer`` is a local folder holding BERT-base-
    cased's ``vocab.txt``; ``weights`` an optional local UNITER checkpoint
    (``uniter-base.pt``) to start from.
    """

    layers: int = 6
    hidden: int = 768
    heads: int = 12
    intermediate: int = 3072
    vocab_size: int = 28996
    max_positions: int = 512
    img_dim: int = 2048
    dropout: float = 0.1
    tokenizer: str | None = None
    weights: str | None = None

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None) -> UniterSettings:
        """Settings from ``model.uniter``; raises ``ValueError`` naming a bad key."""
        section = dict(section or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(section) - known)
        if unknown:
            raise ValueError(f"model.uniter.{unknown[0]}: unknown setting; known: "
                             f"{sorted(known)}")
        out = cls(**section)
        for f in fields(cls):
            v = getattr(out, f.name)
            if f.name in ("tokenizer", "weights"):
                if v is not None and not isinstance(v, str):
                    raise ValueError(f"model.uniter.{f.name} must be a path, got {v!r}")
            elif f.name == "dropout":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1:
                    raise ValueError(f"model.uniter.dropout must be in [0, 1), got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"model.uniter.{f.name} must be a positive integer, got "
                                 f"{v!r}")
        if out.hidden % out.heads:
            raise ValueError(f"model.uniter.hidden ({out.hidden}) must be divisible by "
                             f"model.uniter.heads ({out.heads})")
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------- network
def box_positions(boxes: torch.Tensor, image_size: torch.Tensor) -> torch.Tensor:
    """UNITER's 7-d box position as the release computes it: ``[x1/W, y1/H, x2/W, y2/H,
    w/W, h/H, wh/WH]`` with the sizes counted inclusively (``w = x2 - x1 + 1``).

    Shapes: ``boxes [B, N, 4]`` normalised (exclusive, xyxy), ``image_size [B, 2]``
    -> ``[B, N, 7]``.
    """
    one = (1.0 / image_size.clamp(min=1.0))[:, None, :]                  # [B, 1, 2]
    wh = boxes[..., 2:] - boxes[..., :2] + one
    return torch.cat([boxes, wh, wh[..., :1] * wh[..., 1:]], dim=-1)


class _Block(nn.Module):
    """One post-norm transformer layer (BERT's): self-attention, then a GELU MLP."""

    def __init__(self, dim: int, heads: int, ff: int, dropout: float) -> None:
        super().__init__()
        self.heads, self.p = heads, dropout
        self.qkv = nn.Linear(dim, 3 * dim)
        self.attn_out = nn.Linear(dim, dim)
        self.attn_norm = nn.LayerNorm(dim, eps=1e-12)
        self.ff_in = nn.Linear(dim, ff)
        self.ff_out = nn.Linear(ff, dim)
        self.ff_norm = nn.LayerNorm(dim, eps=1e-12)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        B, L, D = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :],
                                           dropout_p=self.p if self.training else 0.0)
        x = self.attn_norm(x + self.drop(self.attn_out(a.transpose(1, 2).reshape(B, L, D))))
        return self.ff_norm(x + self.drop(self.ff_out(F.gelu(self.ff_in(x)))))


class UniterEncoder(nn.Module):
    """Word pieces of every expression and its regions through UNITER's layers.

    Text: ``[CLS]`` + the pieces of every word + ``[SEP]``, with word, position (from
    0) and type-0 embeddings, layer-normalised.  Regions: ``LN(W_v o) + LN(W_p p)``
    of the region feature ``o`` and the 7-d box position ``p`` (:func:`box_positions`),
    plus the type-1 embedding, layer-normalised.  Both go through the layers together,
    every padded slot masked out of the attention.

    ``forward(texts, regions, positions, box_mask)`` takes the words of each
    expression (``list[list[str]]``), ``regions [B, N, img_dim]``, ``positions
    [B, N, 7]`` and ``box_mask [B, N]``, and returns ``(words [B, Lt, hidden],
    regions [B, N, hidden])``: each word the mean of its pieces' outputs (zeros for
    a word without pieces and for padding), padded slots zero.
    """

    def __init__(self, settings: UniterSettings, pieces: WordPieces | None = None) -> None:
        super().__init__()
        s = self.settings = settings
        if pieces is not None and len(pieces) > s.vocab_size:
            raise UniterWeightsError(f"the word-piece vocabulary has {len(pieces)} pieces, "
                                     f"more than model.uniter.vocab_size ({s.vocab_size})")
        H = s.hidden
        self.word_embed = nn.Embedding(s.vocab_size, H, padding_idx=0)
        self.pos_embed = nn.Embedding(s.max_positions, H)
        self.type_embed = nn.Embedding(2, H)
        self.text_norm = nn.LayerNorm(H, eps=1e-12)
        self.region_proj = nn.Linear(s.img_dim, H)
        self.region_norm = nn.LayerNorm(H, eps=1e-12)
        self.box_proj = nn.Linear(7, H)
        self.box_norm = nn.LayerNorm(H, eps=1e-12)
        self.image_norm = nn.LayerNorm(H, eps=1e-12)
        self.drop = nn.Dropout(s.dropout)
        self.blocks = nn.ModuleList(_Block(H, s.heads, s.intermediate, s.dropout)
                                    for _ in range(s.layers))
        self._store_pieces(pieces)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """BERT's initialisation: normal(0, 0.02) weights, zero biases, unit norms."""
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)
            if isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    # The word-piece vocabulary travels with the weights, as two buffers: its pieces
    # (UTF-8, one a line) and whether it lower-cases.
    def _store_pieces(self, pieces: WordPieces | None) -> None:
        self.pieces = pieces
        data = ("\n".join(pieces.pieces).encode("utf-8") if pieces is not None else b"")
        self.register_buffer("piece_bytes", torch.frombuffer(bytearray(data), dtype=torch.uint8)
                             if data else torch.zeros(0, dtype=torch.uint8))
        self.register_buffer("piece_lower", torch.tensor(bool(pieces and pieces.lower_case)))

    def adopt_pieces(self, state: Mapping[str, Any], prefix: str = "") -> None:
        """Take the word-piece vocabulary of a state_dict (its ``piece_*`` buffers under
        ``prefix``), so that its weights then load whatever vocabulary this had."""
        stored = state.get(prefix + "piece_bytes")
        if not isinstance(stored, torch.Tensor):
            return
        if stored.shape != self.piece_bytes.shape:
            self.piece_bytes = torch.zeros_like(stored, device=self.piece_bytes.device)
        if stored.numel():
            pieces = bytes(stored.cpu().tolist()).decode("utf-8").split("\n")
            lower = state.get(prefix + "piece_lower")
            self.pieces = WordPieces(pieces, bool(lower) if lower is not None else False)

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              *args: Any, **kwargs: Any) -> None:
        self.adopt_pieces(state_dict, prefix)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def tokenize(self, texts: Sequence[Sequence[str]], ids: Sequence[str] | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(pieces [B, Lp], piece_word [B, Lp], lengths [B])``: piece ids with
        ``[CLS]``/``[SEP]``, the word each piece belongs to (-1 for the specials and
        padding) and the piece count of each expression.

        Raises:
            ValueError: an expression with more pieces than ``max_positions`` (named
                by ``ids``), or no word-piece vocabulary.
        """
        if self.pieces is None:
            raise ValueError("the UNITER front end has no word-piece vocabulary (build it "
                             "with model.uniter.tokenizer, or load a checkpoint)")
        rows, owners = [], []
        for b, words in enumerate(texts):
            seq, own = [self.pieces.cls_id], [-1]
            for w, ps in enumerate(self.pieces.encode(words)):
                seq += ps
                own += [w] * len(ps)
            seq.append(self.pieces.sep_id)
            own.append(-1)
            if len(seq) > self.settings.max_positions:
                name = ids[b] if ids is not None else b
                raise ValueError(f"expression {name}: {len(seq)} word pieces, more than "
                                 f"model.uniter.max_positions ({self.settings.max_positions})")
            rows.append(seq)
            owners.append(own)
        L = max(len(r) for r in rows)
        pieces = torch.full((len(rows), L), self.pieces.pad_id, dtype=torch.long)
        owner = torch.full((len(rows), L), -1, dtype=torch.long)
        for b, (r, o) in enumerate(zip(rows, owners)):
            pieces[b, :len(r)] = torch.tensor(r)
            owner[b, :len(o)] = torch.tensor(o)
        return pieces, owner, torch.tensor([len(r) for r in rows])

    def forward(self, texts: Sequence[Sequence[str]], regions: torch.Tensor,
                positions: torch.Tensor, box_mask: torch.Tensor,
                ids: Sequence[str] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        dev = regions.device
        pieces, owner, lengths = (t.to(dev) for t in self.tokenize(texts, ids))
        B, Lp = pieces.shape
        pos = torch.arange(Lp, device=dev)
        text = self.word_embed(pieces) + self.pos_embed(pos)[None] + self.type_embed.weight[0]
        text = self.drop(self.text_norm(text))
        image = (self.region_norm(self.region_proj(regions))
                 + self.box_norm(self.box_proj(positions)) + self.type_embed.weight[1])
        image = self.drop(self.image_norm(image))
        x = torch.cat([text, image], dim=1)
        keep = torch.cat([pos[None] < lengths[:, None], box_mask], dim=1)
        for block in self.blocks:
            x = block(x, keep)
        txt, img = x[:, :Lp], x[:, Lp:] * box_mask[..., None]
        # each word: the mean of its pieces
        Lt = max(1, max(len(t) for t in texts))
        slot = torch.where(owner >= 0, owner, Lt)                             # [B, Lp]
        sums = txt.new_zeros(B, Lt + 1, txt.shape[-1]).scatter_add_(
            1, slot[..., None].expand_as(txt), txt)
        counts = txt.new_zeros(B, Lt + 1).scatter_add_(1, slot, torch.ones_like(slot,
                                                                                 dtype=txt.dtype))
        words = sums[:, :Lt] / counts[:, :Lt, None].clamp(min=1.0)
        return words, img


# -------------------------------------------------------------------- weights
_LN = (("weight", "weight"), ("bias", "bias"))


def uniter_name_map(layers: int) -> dict[str, str]:
    """Our parameter name -> UNITER's key (without its ``uniter.`` prefix), for a front
    end of ``layers`` layers; the fused attention projection ``qkv`` maps to the three
    keys ``query|key|value`` joined by ``|``."""
    m = {"word_embed.weight": "embeddings.word_embeddings.weight",
         "pos_embed.weight": "embeddings.position_embeddings.weight",
         "type_embed.weight": "embeddings.token_type_embeddings.weight"}
    pairs = [("text_norm", "embeddings.LayerNorm"),
             ("region_proj", "img_embeddings.img_linear"),
             ("region_norm", "img_embeddings.img_layer_norm"),
             ("box_proj", "img_embeddings.pos_linear"),
             ("box_norm", "img_embeddings.pos_layer_norm"),
             ("image_norm", "img_embeddings.LayerNorm")]
    for i in range(layers):
        t = f"encoder.layer.{i}"
        pairs += [(f"blocks.{i}.attn_out", f"{t}.attention.output.dense"),
                  (f"blocks.{i}.attn_norm", f"{t}.attention.output.LayerNorm"),
                  (f"blocks.{i}.ff_in", f"{t}.intermediate.dense"),
                  (f"blocks.{i}.ff_out", f"{t}.output.dense"),
                  (f"blocks.{i}.ff_norm", f"{t}.output.LayerNorm")]
        for p in ("weight", "bias"):
            m[f"blocks.{i}.qkv.{p}"] = "|".join(f"{t}.attention.self.{n}.{p}"
                                                for n in ("query", "key", "value"))
    for ours, theirs in pairs:
        for a, b in _LN:
            m[f"{ours}.{a}"] = f"{theirs}.{b}"
    return m


#: UNITER keys the front end does not read: pre-training only (masked-region
#: embedding, pooler) — skipped when loading.
_UNUSED = ("img_embeddings.mask_embedding.", "pooler.")


def _uniter_keys(state: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    out = {}
    for k, v in state.items():
        if not k.startswith(prefix):
            continue
        k = k[len(prefix):]
        # some converted BERT checkpoints name LayerNorm parameters gamma / beta
        if k.endswith(".gamma"):
            k = k[:-len("gamma")] + "weight"
        elif k.endswith(".beta"):
            k = k[:-len("beta")] + "bias"
        out[k] = v
    return out


def convert_uniter_state(state: Mapping[str, Any], settings: UniterSettings,
                         prefix: str = "uniter.", where: str = "checkpoint"
                         ) -> tuple[dict[str, torch.Tensor], list[str]]:
    """Our front end's parameters (not its word-piece buffers) from UNITER's keys.

    ``state`` holds UNITER's tensors under ``prefix`` (``uniter.`` in ``uniter-base.pt``,
    ``uniter.uniter.`` in a release checkpoint).  Returns the tensors and the UNITER
    keys skipped: layers past ``settings.layers`` and the pre-training-only ones.

    Raises:
        UniterWeightsError: a missing, unknown or mis-shaped key, named.
    """
    theirs = _uniter_keys(state, prefix)
    if not theirs:
        raise UniterWeightsError(f"{where}: no key starts with {prefix!r} (not a UNITER "
                                 "checkpoint?)")
    with torch.device("meta"):
        ours = {k: v for k, v in UniterEncoder(settings).state_dict().items()
                if not k.startswith("piece_")}
    out: dict[str, torch.Tensor] = {}
    used: set[str] = set()
    for mine, keys in uniter_name_map(settings.layers).items():
        parts = []
        for key in keys.split("|"):
            if key not in theirs:
                raise UniterWeightsError(f"{where}: missing key {prefix}{key}")
            v = theirs[key]
            if not isinstance(v, torch.Tensor):
                raise UniterWeightsError(f"{where}: key {prefix}{key} is not a tensor")
            parts.append(v)
            used.add(key)
        value = torch.cat(parts) if len(parts) > 1 else parts[0]
        if tuple(value.shape) != tuple(ours[mine].shape):
            raise UniterWeightsError(
                f"{where}: key {prefix}{keys.split('|')[0]} has shape "
                f"{tuple(parts[0].shape)}, expected "
                f"{(ours[mine].shape[0] // len(parts),) + tuple(ours[mine].shape[1:])} "
                "(check model.uniter's sizes)")
        out[mine] = value.detach().clone().float()
    skipped = []
    for key in sorted(set(theirs) - used):
        layer = key.split(".")[2] if key.startswith("encoder.layer.") else None
        if (layer is not None and layer.isdigit() and int(layer) >= settings.layers) or \
                key.startswith(_UNUSED):
            skipped.append(prefix + key)
        else:
            raise UniterWeightsError(f"{where}: unknown key {prefix}{key}")
    return out, skipped


def load_uniter_weights(encoder: UniterEncoder, path: str | Path) -> list[str]:
    """Load a local UNITER checkpoint (``uniter-base.pt``: UNITER's state_dict, its
    tensors under ``uniter.``; pre-training heads outside that prefix are ignored)
    into ``encoder``; returns the UNITER keys skipped.

    Raises:
        UniterWeightsError: naming the file or key.
    """
    path = Path(path)
    if not path.is_file():
        raise UniterWeightsError(f"{path}: no such UNITER checkpoint (nothing is downloaded)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a file that is not a checkpoint
        raise UniterWeightsError(f"{path}: not a readable torch checkpoint "
                                 f"({type(exc).__name__})") from None
    if isinstance(state, Mapping) and isinstance(state.get("model"), Mapping):
        state = state["model"]
    if not isinstance(state, Mapping):
        raise UniterWeightsError(f"{path}: not a state_dict")
    prefix = "uniter." if any(k.startswith("uniter.") for k in state) else ""
    weights, skipped = convert_uniter_state(state, encoder.settings, prefix, str(path))
    missing, unexpected = encoder.load_state_dict(weights, strict=False)
    assert not unexpected and set(missing) <= {"piece_bytes", "piece_lower"}, missing
    return skipped
