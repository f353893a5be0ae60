"""Pseudo-perplexity of sentences under a local masked language model.

The pseudo-log-likelihood of a sentence masks each of its tokens in turn and
sums the model's log-probability of the original token; the pseudo-perplexity
is ``exp(-mean)`` of those log-probabilities.  The model is read from a local
folder with ``transformers`` (imported only here, when a model is asked for);
nothing is downloaded.

Where no pretrained masked LM (the paper uses BERT) is at hand,
:func:`train_masked_lm` trains a small BERT-style one from scratch on the
expressions themselves (a whole-word vocabulary, 15% masking) and saves it as
such a folder: a domain model of the corpus's own phrasing, which judges how
usual a substituted phrase is in that context.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rcrn.errors import RcrnError

__all__ = ["MLMUnavailable", "PseudoPerplexity", "close_perplexity", "MLMTrainConfig",
           "train_masked_lm"]

_WORD = re.compile(r"\w+|[^\w\s]")
_SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class MLMUnavailable(RcrnError, RuntimeError):
    """The masked language model cannot be used (missing package or model folder)."""


class PseudoPerplexity:
    """Callable ``texts -> pseudo-perplexities`` backed by a local masked LM.

    Args:
        path: a local model folder readable by ``transformers.AutoModelForMaskedLM``
            (e.g. a saved ``bert-base-uncased``).
        batch_size: masked copies scored per forward pass.
        max_length: longest tokenisation scored (longer text is truncated).

    Raises:
        MLMUnavailable: the folder does not exist, ``transformers`` is not installed,
            or the folder holds no loadable masked language model.
    """

    def __init__(self, path: str | Path, batch_size: int = 64, max_length: int = 128) -> None:
        self.path = Path(path).expanduser()
        if not self.path.exists():
            raise MLMUnavailable(f"--mlm {self.path}: no such model folder; give a local "
                                 f"masked language model, or leave --mlm out to skip the "
                                 f"pseudo-perplexity filter")
        transformers = _transformers(f"--mlm {self.path}: the pseudo-perplexity filter",
                                     "or leave --mlm out to skip the filter")
        import torch

        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                str(self.path), local_files_only=True)
            self.model = transformers.AutoModelForMaskedLM.from_pretrained(
                str(self.path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise MLMUnavailable(f"--mlm {self.path}: not a loadable masked language model "
                                 f"({exc})") from exc
        self.model.eval()
        self._torch = torch
        self.batch_size = int(batch_size)
        self.max_length = int(max_length)

    def score(self, text: str) -> float:
        """Pseudo-perplexity of one text."""
        torch = self._torch
        enc = self.tokenizer(text, truncation=True, max_length=self.max_length,
                             return_special_tokens_mask=True)
        ids = list(enc["input_ids"])
        positions = [i for i, s in enumerate(enc["special_tokens_mask"]) if not s]
        if not positions:
            return 1.0
        mask_id = self.tokenizer.mask_token_id
        total = 0.0
        with torch.no_grad():
            for at in range(0, len(positions), self.batch_size):
                chunk = positions[at:at + self.batch_size]
                batch = torch.tensor([ids] * len(chunk))
                for row, pos in enumerate(chunk):
                    batch[row, pos] = mask_id
                logits = self.model(input_ids=batch).logits
                logp = torch.log_softmax(logits, dim=-1)
                for row, pos in enumerate(chunk):
                    total += float(logp[row, pos, ids[pos]])
        return math.exp(-total / len(positions))

    def __call__(self, texts: Sequence[str]) -> list[float]:
        return [self.score(t) for t in texts]


def _transformers(what: str, alternative: str) -> Any:
    try:
        import transformers
    except ImportError as exc:
        raise MLMUnavailable(f"{what} needs the 'transformers' package ({exc}); install it "
                             f"(pip install transformers) {alternative}") from exc
    return transformers


def close_perplexity(original: float, candidate: float, max_ratio: float) -> bool:
    """Whether two perplexities are within a factor ``max_ratio`` of each other."""
    if original <= 0 or candidate <= 0:
        return False
    return abs(math.log(candidate / original)) <= math.log(max_ratio)


@dataclass
class MLMTrainConfig:
    """Size and schedule of :func:`train_masked_lm` (the defaults train in minutes on a CPU)."""

    hidden: int = 128
    layers: int = 2
    heads: int = 4
    ff: int = 256
    max_length: int = 64
    min_count: int = 1
    steps: int = 2000
    batch_size: int = 64
    lr: float = 5e-4
    mask_prob: float = 0.15
    seed: int = 0


def words_of(text: str) -> list[str]:
    """The lower-cased words and punctuation marks the trained vocabulary is made of."""
    return _WORD.findall(text.lower())


def train_masked_lm(texts: Sequence[str], out: str | Path,
                    config: MLMTrainConfig | None = None,
                    progress: bool = False) -> dict[str, Any]:
    """Train a small BERT masked LM on ``texts`` and save it (with its tokenizer) in ``out``.

    The vocabulary is every word seen ``config.min_count`` times or more plus
    BERT's special tokens, so words tokenise to themselves.  Each step masks
    ``mask_prob`` of the words of a batch (80% ``[MASK]``, 10% a random word, 10%
    kept, as BERT does) and minimises the cross-entropy of the masked positions.
    The folder loads with :class:`PseudoPerplexity` (``rcrn gitm-mr generate --mlm``).

    Returns:
        a summary (texts, vocabulary size, parameters, first and last loss, seconds,
        the config), also written to ``out/training.json``.

    Raises:
        MLMUnavailable: ``transformers`` is not installed.
        ValueError: no text to train on.
    """
    import json
    import time

    import torch

    transformers = _transformers("training a masked language model", "")
    cfg = config or MLMTrainConfig()
    sentences = [w for w in (words_of(t) for t in texts) if w]
    if not sentences:
        raise ValueError("no text to train a masked language model on")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    counts = Counter(w for s in sentences for w in s)
    vocab = list(_SPECIAL) + sorted(w for w, c in counts.items()
                                    if c >= cfg.min_count and w not in _SPECIAL)
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    # the vocabulary file is the first argument in transformers 4 (vocab_file) and 5 (vocab)
    tokenizer = transformers.BertTokenizer(str(out / "vocab.txt"), do_lower_case=True)
    index = {w: i for i, w in enumerate(vocab)}
    unk, cls, sep, pad, mask_id = (index[t] for t in ("[UNK]", "[CLS]", "[SEP]", "[PAD]",
                                                      "[MASK]"))
    length = cfg.max_length
    rows = torch.full((len(sentences), length), pad, dtype=torch.long)
    for r, s in enumerate(sentences):
        ids = [cls] + [index.get(w, unk) for w in s[:length - 2]] + [sep]
        rows[r, :len(ids)] = torch.tensor(ids)
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    model = transformers.BertForMaskedLM(transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=cfg.hidden, num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads, intermediate_size=cfg.ff,
        max_position_embeddings=length, pad_token_id=pad))
    optim = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda step: min(1.0, (step + 1) / max(1, cfg.steps // 10))
        * max(0.0, 1.0 - step / cfg.steps))
    words_mask = (rows != pad) & (rows != cls) & (rows != sep)
    lengths = (rows != pad).sum(1)
    first = last = float("nan")
    start = time.perf_counter()
    model.train()
    steps = range(cfg.steps)
    if progress:
        from tqdm import tqdm

        steps = tqdm(steps, desc="masked LM", unit="step")
    for _ in steps:
        pick = torch.randint(len(sentences), (min(cfg.batch_size, len(sentences)),),
                             generator=gen)
        width = int(lengths[pick].max())  # no step pays for padding beyond its longest row
        ids, can = rows[pick, :width].clone(), words_mask[pick, :width]
        chosen = (torch.rand(ids.shape, generator=gen) < cfg.mask_prob) & can
        if not chosen.any():  # nothing to predict in this (tiny) batch
            continue
        labels = torch.where(chosen, ids, torch.full_like(ids, -100))
        roll = torch.rand(ids.shape, generator=gen)
        ids[chosen & (roll < 0.8)] = mask_id
        swap = chosen & (roll >= 0.8) & (roll < 0.9)
        ids[swap] = torch.randint(len(_SPECIAL), len(vocab), (int(swap.sum()),),
                                  generator=gen)
        loss = model(input_ids=ids, attention_mask=(ids != pad).long(), labels=labels).loss
        optim.zero_grad()
        loss.backward()
        optim.step()
        sched.step()
        last = loss.item()
        if math.isnan(first):
            first = last
        if progress:
            steps.set_postfix(loss=f"{last:.3f}")
    model.eval()
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    summary = {"texts": len(sentences), "vocabulary": len(vocab),
               "parameters": sum(p.numel() for p in model.parameters()),
               "first_loss": first, "last_loss": last,
               "seconds": round(time.perf_counter() - start, 1), "config": asdict(cfg)}
    (out / "training.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary
