"""Pseudo-perplexity of sentences under a local masked language model.

The pseudo-log-likelihood of a sentence masks each of its tokens in turn and
sums the model's log-probability of the original token; the pseudo-perplexity
is ``exp(-mean)`` of those log-probabilities.  The model is read from a local
folder with ``transformers`` (imported only here, when a model is asked for);
nothing is downloaded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MLMUnavailable", "PseudoPerplexity", "close_perplexity"]


class MLMUnavailable(RuntimeError):
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
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise MLMUnavailable(
                f"--mlm {self.path}: the pseudo-perplexity filter needs the 'transformers' "
                f"package ({exc}); install it (pip install transformers) or leave --mlm out "
                f"to skip the filter") from exc
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


def close_perplexity(original: float, candidate: float, max_ratio: float) -> bool:
    """Whether two perplexities are within a factor ``max_ratio`` of each other."""
    if original <= 0 or candidate <= 0:
        return False
    return abs(math.log(candidate / original)) <= math.log(max_ratio)
