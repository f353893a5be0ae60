"""Training loop, predictions and checkpoints for RCRN on any list of problems."""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler

from rcrn.batching import GroundingBatch, Vocab, collate
from rcrn.engine import distributed, schema
from rcrn.errors import CommandError
from rcrn.losses import LossConfig, loss_terms
from rcrn.models.rcrn import RCRN, RCRNConfig
from rcrn.structures import GroundingProblem, Prediction

__all__ = ["build_model", "ProblemDataset", "make_loader", "predict", "write_predictions",
           "Trainer", "save_checkpoint", "load_checkpoint", "read_checkpoint",
           "CheckpointError", "seed_everything", "rng_states", "set_rng_states",
           "state_digest", "RESUME_MAY_CHANGE"]

#: Settings a resumed run may change: the schedule's length and when it saves.
RESUME_MAY_CHANGE = ("train.steps", "train.checkpoint_every")
#: Temporary files the trainer writes before moving them into place (a killed run can
#: leave them; the next run removes them).
TMP_FILES = ("last.pt.tmp", "config.yaml.tmp", "metrics.jsonl.tmp")


class CheckpointError(CommandError, ValueError):
    """A checkpoint that cannot be read, restored or resumed from; the message names the
    file (the CLI reports it on one line, exit code 2)."""


def resolve_device(name: str) -> torch.device:
    """``"auto"`` is CUDA when available, else CPU; anything else is passed to torch."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def rng_states() -> dict[str, Any]:
    """The states of the global random generators (Python, NumPy, torch CPU and CUDA), in
    types a ``weights_only`` checkpoint holds."""
    version, internal, gauss = random.getstate()
    np_state = np.random.get_state(legacy=False)
    states: dict[str, Any] = {
        "python": [version, list(internal), gauss],
        "numpy": {"bit_generator": np_state["bit_generator"],
                  "key": torch.from_numpy(np_state["state"]["key"].astype(np.int64)),
                  "pos": int(np_state["state"]["pos"]),
                  "has_gauss": int(np_state["has_gauss"]), "gauss": float(np_state["gauss"])},
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: dict[str, Any]) -> None:
    """Restore what :func:`rng_states` returned."""
    version, internal, gauss = states["python"]
    random.setstate((int(version), tuple(int(v) for v in internal), gauss))
    n = states["numpy"]
    np.random.set_state({"bit_generator": n["bit_generator"],
                         "state": {"key": n["key"].numpy().astype(np.uint32),
                                   "pos": int(n["pos"])},
                         "has_gauss": int(n["has_gauss"]), "gauss": float(n["gauss"])})
    torch.set_rng_state(states["torch"].cpu())
    if states.get("cuda") is not None and torch.cuda.is_available() \
            and len(states["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([s.cpu() for s in states["cuda"]])


def word_vectors(config: dict[str, Any], vocab: Vocab) -> torch.Tensor | None:
    """Pretrained word vectors named by the ``words`` section, or None for learned ones.

    ``words: {glove: [VOCAB_TXT, MATRIX_NPY]}`` reads a GloVe-format pair;
    ``words: {transformers: MODEL_DIR}`` encodes every word with a local encoder.
    """
    from rcrn.encoders import load_glove, transformer_word_vectors

    words = schema.section(config, "words")
    if words.glove:
        vocab_path, matrix_path = words.glove
        return load_glove(vocab_path, matrix_path, vocab)
    if words.transformers:
        return transformer_word_vectors(words.transformers, vocab)
    return None


def _check_feature_width(problems: list[Any], model: nn.Module) -> None:
    """Refuse, naming the setting, training items whose region features the model
    cannot read (no features at all, or another width than it was built for)."""
    from rcrn.engine.config import ConfigError

    uniter = getattr(model, "uniter", None)
    key, want = (("model.uniter.img_dim", uniter.settings.img_dim) if uniter is not None
                 else ("model.vis_dim", model.config.vis_dim))
    have = next((p.proposals.feature_dim for p in problems if len(p.proposals.boxes)), want)
    if have == 0:
        raise ConfigError("the training items carry no region features (their regions "
                          "are read from the images): add a region_encoder section, as "
                          "rcrn/configs/synthetic.yaml does, or give proposals with features")
    if have != want:
        raise ConfigError(f"the training items' region features are {have}-d but {key} is "
                          f"{want}; set {key}={have}")


def _region_encoder(config: dict[str, Any], vis_dim: int) -> nn.Module | None:
    if not config.get("region_encoder"):
        return None
    from rcrn.models.region_cnn import PixelRegions, RegionCNN

    enc = schema.section(config, "region_encoder")
    return PixelRegions(RegionCNN(out_dim=vis_dim, channels=tuple(enc.channels),
                                  pool_size=enc.pool_size, strides=tuple(enc.strides)))


#: Model types a config's ``model.arch`` selects.
ARCHS = ("rcrn", "cross_encoder")


def build_model(config: dict[str, Any], vocab: Vocab, pretrained_words: bool = True
                ) -> nn.Module:
    """The model of the ``model`` section, with the ``words`` and ``region_encoder`` sections.

    ``model.arch`` selects the type: ``rcrn`` (default; the other fields are
    ``RCRNConfig``'s) or ``cross_encoder`` (``CrossEncoderConfig``'s, the
    non-modular baseline).  An RCRN ``model.program`` is a program text or the name
    of one of ``rcrn.programs.ABLATIONS`` (the paper's Table 3 ablations).

    Args:
        pretrained_words: read the pretrained weights the config names (word vectors,
            ``model.vl.init``); a checkpoint being restored carries them in its
            weights, so it passes False.
    """
    from rcrn.engine.config import ConfigError
    from rcrn.models.cross_encoder import CrossEncoder, CrossEncoderConfig
    given = dict(config.get("model") or {})
    arch = given.pop("arch", "rcrn")
    if arch not in ARCHS:
        raise ConfigError(f"model.arch: unknown model type {arch!r}; choose from {list(ARCHS)}")
    config_cls = RCRNConfig if arch == "rcrn" else CrossEncoderConfig
    known = set(config_cls.__dataclass_fields__) - {"arch"}
    unknown = sorted(set(given) - known)
    if unknown:
        raise ConfigError(f"model section: unknown setting(s) {unknown} for arch {arch!r}; "
                          f"known: {sorted(known)}")
    model_cfg = config_cls(**given)
    if arch == "rcrn":
        from rcrn.programs import ProgramError, resolve

        try:
            resolve(model_cfg.program, model_cfg.k)
        except ProgramError as exc:
            raise ConfigError(f"model.program: {exc}") from exc
    vectors = word_vectors(config, vocab) if pretrained_words else None
    freeze = schema.section(config, "words").freeze
    if vectors is not None and vectors.shape[1] != model_cfg.word_dim:
        model_cfg.word_dim = int(vectors.shape[1])
    pieces = None
    if arch == "rcrn" and model_cfg.front == "uniter":
        region = _region_encoder(config, _uniter_settings(model_cfg).img_dim)
        pieces = _word_pieces(model_cfg) if pretrained_words else None
    else:
        region = _region_encoder(config, model_cfg.vis_dim)
    if arch == "rcrn":
        model: nn.Module = RCRN(model_cfg, len(vocab), word_vectors=vectors,
                                freeze_words=freeze, region_encoder=region,
                                word_pieces=pieces)
        if pretrained_words and model.uniter is not None and model.uniter.settings.weights:
            from rcrn.models.uniter import UniterWeightsError, load_uniter_weights

            try:
                load_uniter_weights(model.uniter, model.uniter.settings.weights)
            except UniterWeightsError as exc:
                raise ConfigError(f"model.uniter.weights: {exc}") from exc
        init = (model_cfg.vl or {}).get("init")
        if init and model.vl is None:
            raise ConfigError("model.vl.init names a checkpoint but model.vl.layers is 0")
        if pretrained_words and init:
            from rcrn.models.vl import load_vl_weights

            try:
                load_vl_weights(model.vl, init, vocab)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"model.vl.init: {exc}") from exc
    else:
        model = CrossEncoder(model_cfg, len(vocab), word_vectors=vectors, freeze_words=freeze,
                             region_encoder=region)
    init = schema.section(config, "train").init
    if pretrained_words and init:
        try:
            init_weights(model, init, vocab)
        except CheckpointError as exc:
            raise ConfigError(f"train.init: {exc}") from exc
    if (not pretrained_words and freeze
            and getattr(model, "words", None) is not None):
        model.words.embedding.weight.requires_grad_(False)
        if getattr(model, "vl", None) is not None:
            model.vl.words.embedding.weight.requires_grad_(False)
    return model


def _uniter_settings(model_cfg: Any) -> Any:
    from rcrn.engine.config import ConfigError
    from rcrn.models.uniter import UniterSettings

    try:
        return UniterSettings.from_dict(model_cfg.uniter)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _word_pieces(model_cfg: Any) -> Any:
    """The word-piece tokenizer of ``model.uniter.tokenizer`` (a local folder)."""
    from rcrn.engine.config import ConfigError
    from rcrn.models.uniter import UniterWeightsError, WordPieces

    folder = _uniter_settings(model_cfg).tokenizer
    if not folder:
        raise ConfigError("model.uniter.tokenizer: front 'uniter' needs a local BERT "
                          "tokenizer folder (holding vocab.txt); nothing is downloaded")
    try:
        return WordPieces.from_folder(folder)
    except UniterWeightsError as exc:
        raise ConfigError(f"model.uniter.tokenizer: {exc}") from exc


class ProblemDataset(Dataset):
    """Problems for a DataLoader; images are read from ``meta['image_path']`` on access.

    The last ``cache_images`` decoded images are kept (read-only), so the expressions of
    one image, which ``group_by`` batches together, decode it once.
    """

    def __init__(self, problems: Sequence[GroundingProblem], with_images: bool = False,
                 cache_images: int = 64) -> None:
        self.problems = list(problems)
        self.with_images = with_images
        self.cache_images = cache_images
        self._images: OrderedDict[str, np.ndarray] = OrderedDict()

    def __len__(self) -> int:
        return len(self.problems)

    def _image(self, path: str) -> np.ndarray:
        image = self._images.get(path)
        if image is not None:
            self._images.move_to_end(path)
            return image
        from PIL import Image

        with Image.open(path) as im:
            image = np.asarray(im.convert("RGB"))
        image.setflags(write=False)
        if self.cache_images > 0:
            self._images[path] = image
            if len(self._images) > self.cache_images:
                self._images.popitem(last=False)
        return image

    def __getitem__(self, i: int) -> GroundingProblem:
        p = self.problems[i]
        if self.with_images and "image" not in p.meta:
            path = p.meta.get("image_path")
            if not path:
                raise ValueError(f"problem {p.id!r}: no meta['image_path'] to read pixels from")
            p = GroundingProblem(p.graph, p.proposals, p.match, p.referent_box,
                                 p.mismatched_relation, p.id,
                                 dict(p.meta, image=self._image(str(path))))
        return p


def grouped_batches(keys: Sequence[Any], batch_size: int, seed: int) -> list[list[int]]:
    """Batches that keep items of one group (e.g. one image) together, groups shuffled.

    Items of a group are consecutive in the visiting order, so a batch holds few
    distinct images and a pixel encoder runs once per image; a group may straddle
    two batches.
    """
    groups: dict[Any, list[int]] = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    order = list(groups.values())
    random.Random(seed).shuffle(order)
    flat = [i for g in order for i in g]
    return [flat[i:i + batch_size] for i in range(0, len(flat), batch_size)]


class _SkipBatches:
    """A batch sampler without the first ``skip`` batches of ``batches`` (which are drawn,
    so a seeded sampler's generator advances as it would have)."""

    def __init__(self, batches: Any, skip: int) -> None:
        self.batches, self.skip = batches, skip

    def __iter__(self) -> Any:
        it = iter(self.batches)
        for _ in range(self.skip):
            if next(it, None) is None:
                return
        yield from it

    def __len__(self) -> int:
        return max(0, len(self.batches) - self.skip)


def make_loader(problems: Sequence[GroundingProblem] | Dataset, vocab: Vocab,
                batch_size: int, shuffle: bool, with_images: bool = False,
                num_workers: int = 0, seed: int = 0, group_by: str | None = None,
                rank: int = 0, world_size: int = 1, pin_memory: bool = False,
                skip: int = 0) -> DataLoader:
    """A DataLoader whose workers read and collate (the schedule is built in the workers).

    Args:
        problems: the problems, or a dataset of them (e.g. ``detectors.dataset``'s
            ``StoreProblemDataset``, whose items are read from a feature store).
        group_by: a ``meta`` key (e.g. ``"image_path"``); when shuffling, items with
            the same value are batched together (see ``grouped_batches``).
        rank, world_size: with ``world_size`` > 1, ``batch_size`` is the global batch:
            every rank builds the same batches from ``seed`` and loads its slice of
            each (``distributed.shard_batches``; a last batch smaller than
            ``world_size`` is dropped).
        pin_memory: pin batches in page-locked memory (for CUDA copies).
        skip: leave out the first ``skip`` batches (the rest are those of the loader
            without ``skip``: a resumed epoch).
    """
    dataset = (problems if isinstance(problems, Dataset)
               else ProblemDataset(problems, with_images))
    collate_fn = _Collate(vocab, with_images)
    common = dict(num_workers=num_workers, persistent_workers=num_workers > 0,
                  collate_fn=collate_fn, pin_memory=pin_memory)
    if shuffle and group_by:
        if isinstance(problems, Dataset):
            raise ValueError("group_by reads the problems' meta: pass the problems")
        keys = [p.meta.get(group_by, p.id) for p in problems]
        batches = grouped_batches(keys, batch_size, seed)
        if world_size > 1:
            batches = distributed.shard_batches(batches, rank, world_size)
        return DataLoader(dataset, batch_sampler=batches[skip:], **common)
    gen = torch.Generator().manual_seed(seed)
    if world_size > 1 or skip:
        # the batches of the single-process loader below (the DataLoader draws from
        # ``gen`` in the same order), each rank loading its slice
        sampler = (RandomSampler(dataset, generator=gen) if shuffle
                   else SequentialSampler(dataset))
        batches: Any = BatchSampler(sampler, batch_size, False)
        if world_size > 1:
            batches = distributed.ShardedBatches(batches, rank, world_size)
        if skip:
            batches = _SkipBatches(batches, skip)
        return DataLoader(dataset, batch_sampler=batches, generator=gen, **common)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, generator=gen, **common)


class _Collate:
    """A picklable ``collate_fn``: problems to a ``GroundingBatch`` (run in the workers)."""

    def __init__(self, vocab: Vocab, with_images: bool) -> None:
        self.vocab, self.with_images = vocab, with_images

    def __call__(self, problems: list[GroundingProblem]) -> GroundingBatch:
        return collate(problems, self.vocab, with_images=self.with_images)


def _device_of(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


@torch.no_grad()
def predict(model: RCRN, problems: Sequence[GroundingProblem], vocab: Vocab,
            batch_size: int = 64, with_images: bool = False, num_workers: int = 0,
            progress: bool = False) -> list[Prediction]:
    """Predictions for every problem, in order."""
    from tqdm import tqdm

    was_training = model.training
    model.eval()
    device = _device_of(model)
    preds: list[Prediction] = []
    loader = make_loader(problems, vocab, batch_size, False, with_images, num_workers)
    for batch in tqdm(loader, desc="predict", disable=not progress, leave=False):
        batch = batch.to(device)
        out = model(batch)
        preds.extend(out.to_predictions(batch))
    model.train(was_training)
    return preds


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | Path, write: Callable[[Any], None]) -> None:
    """Write ``path`` through ``write(binary file)`` into ``PATH.tmp``, fsync it, move it
    into place with ``os.replace`` and fsync the folder: a reader (or a run killed at any
    point) sees the old file or the new one, never a part."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def write_predictions(path: str | Path, predictions: Sequence[Prediction]) -> Path:
    """Write ``predictions.jsonl``: one ``Prediction.to_dict()`` JSON record a line, in
    order, atomically (:func:`atomic_write`); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(p.to_dict()) + "\n" for p in predictions)
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))
    return path


def save_checkpoint(path: str | Path, model: RCRN, vocab: Vocab, config: dict[str, Any],
                    optimizer: torch.optim.Optimizer | None = None, step: int = 0,
                    training: dict[str, Any] | None = None) -> None:
    """Write a checkpoint atomically (see :func:`atomic_write`).

    Args:
        training: the state a run resumes from (``Trainer`` writes it: random
            generators, data-order position, running losses).
    """
    state: dict[str, Any] = {"model": model.state_dict(), "vocab": vocab.to_list(),
                             "config": config, "step": step}
    if optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    if training is not None:
        state["training"] = training
    state["digest"] = state_digest(state)
    atomic_write(path, lambda f: torch.save(state, f))


#: the entries of a checkpoint of ``rcrn train``
CHECKPOINT_KEYS = ("model", "vocab", "config", "step", "optimizer", "training", "digest")


def state_digest(state: dict[str, Any]) -> str:
    """SHA-256 of a checkpoint's content, its ``digest`` entry aside: every tensor's dtype,
    shape and bytes and every other value, mappings in key order.  A bit changed anywhere
    in the file changes it (or makes the file unreadable)."""
    h = hashlib.sha256()

    def walk(x: Any) -> None:
        if isinstance(x, torch.Tensor):
            t = x.detach().to("cpu").contiguous()
            h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().data)
        elif isinstance(x, dict):
            h.update(f"D{len(x)}".encode())
            for k in sorted(x, key=repr):
                walk(k)
                walk(x[k])
        elif isinstance(x, (list, tuple)):
            h.update(f"{type(x).__name__[0]}{len(x)}".encode())
            for v in x:
                walk(v)
        else:
            h.update(f"{type(x).__name__}:{x!r};".encode())

    walk({k: v for k, v in state.items() if k != "digest"})
    return h.hexdigest()


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + " ..."


def read_checkpoint(path: str | Path, map_location: str | torch.device = "cpu"
                    ) -> dict[str, Any]:
    """The raw state of a checkpoint of ``rcrn train`` (``torch.load(weights_only=True)``).

    Raises:
        CheckpointError: naming the file when it is missing, a folder, empty, truncated,
            corrupt (its content does not match its digest), or not a checkpoint of this
            toolkit.
    """
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if path.is_dir():
        raise CheckpointError(f"checkpoint {path} is a folder, not a checkpoint file "
                              "(e.g. give RUN/last.pt)")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CheckpointError(f"checkpoint {path}: cannot be read ({_one_line(exc)})") from exc
    if size == 0:
        raise CheckpointError(f"checkpoint {path} is empty (0 bytes)")
    try:
        with warnings.catch_warnings():  # (torch warns about pickle protocols it reads)
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # torch reports truncation and corruption with many types
        text = str(exc)
        if "WeightsUnpickler error:" in text:  # the reason, without torch's advice
            text = text.split("WeightsUnpickler error:", 1)[1].split("Check the documentation")[0]
            reason = f"not a weights-only checkpoint: {' '.join(text.split())[:160]}"
        else:
            reason = f"{type(exc).__name__}: {_one_line(exc, 160)}"
        raise CheckpointError(f"checkpoint {path} cannot be read: truncated, corrupt or not "
                              f"a torch checkpoint ({reason})") from exc
    if not isinstance(state, dict):
        raise CheckpointError(f"checkpoint {path} holds a {type(state).__name__}, not the "
                              "mapping rcrn train writes")
    missing = [k for k in ("model", "vocab", "config") if k not in state]
    if missing:
        raise CheckpointError(f"checkpoint {path} is not a checkpoint of rcrn train: no "
                              f"{', '.join(repr(k) for k in missing)} entry")
    unknown = sorted(str(k) for k in state if k not in CHECKPOINT_KEYS)
    if unknown:
        raise CheckpointError(f"checkpoint {path}: unknown entries {unknown} (a checkpoint "
                              f"of rcrn train holds {', '.join(CHECKPOINT_KEYS)})")
    if "digest" in state and state["digest"] != state_digest(state):
        raise CheckpointError(f"checkpoint {path} is corrupt: its content does not match "
                              "the digest written with it (a damaged copy?)")
    if not isinstance(state["model"], dict) or not all(
            isinstance(v, torch.Tensor) for v in state["model"].values()):
        raise CheckpointError(f"checkpoint {path}: 'model' is not a mapping of tensors")
    if not isinstance(state["config"], dict):
        raise CheckpointError(f"checkpoint {path}: 'config' is not a mapping")
    if not isinstance(state["vocab"], list) or not all(isinstance(w, str)
                                                       for w in state["vocab"]):
        raise CheckpointError(f"checkpoint {path}: 'vocab' is not a list of words")
    if not isinstance(state.get("step", 0), int):
        raise CheckpointError(f"checkpoint {path}: 'step' is not an integer")
    return state


def _load_weights(path: Path, model: nn.Module, weights: dict[str, torch.Tensor],
                  what: str) -> None:
    """``model.load_state_dict(weights)``, a mismatch reported on one line."""
    mine = model.state_dict()
    missing = [k for k in mine if k not in weights]
    unexpected = [k for k in weights if k not in mine]
    shapes = [f"{k} {tuple(weights[k].shape)} (the model has {tuple(v.shape)})"
              for k, v in mine.items() if k in weights and weights[k].shape != v.shape]
    problems = []
    if missing:
        problems.append(f"{len(missing)} weight(s) missing, e.g. {missing[0]}")
    if unexpected:
        problems.append(f"{len(unexpected)} unknown weight(s), e.g. {unexpected[0]}")
    if shapes:
        problems.append(f"{len(shapes)} of another shape, e.g. {shapes[0]}")
    if problems:
        raise CheckpointError(f"checkpoint {path}: its weights do not fit {what}: "
                              f"{'; '.join(problems)}")
    try:
        model.load_state_dict(weights)
    except (RuntimeError, ValueError, TypeError) as exc:
        raise CheckpointError(f"checkpoint {path}: its weights do not fit {what} "
                              f"({_one_line(exc)})") from exc


def init_weights(model: nn.Module, path: str | Path, vocab: Vocab) -> None:
    """Start ``model`` from the weights of the ``rcrn train`` checkpoint ``path``
    (``train.init``).  Every weight must fit; the rows of each word-embedding table are
    copied by word, so the checkpoint's vocabulary may differ from ``vocab`` (words it
    lacks keep their rows).

    Raises:
        CheckpointError: naming the file when it cannot be read or its weights do not fit.
    """
    from rcrn.models.vl import word_rows_by_word

    state = read_checkpoint(path)
    mine = model.state_dict()
    weights = dict(state["model"])
    for key, rows in weights.items():
        if (key.endswith("words.embedding.weight") and key in mine
                and rows.shape[1:] == mine[key].shape[1:]):
            weights[key] = word_rows_by_word(rows, state["vocab"], mine[key], vocab)
    _load_weights(Path(path), model, weights, "the model")


#: ``model`` settings removed after they were measured not to help (docs/ablations.md),
#: with the value that computed what the model computes without them: a checkpoint
#: saved with that value still loads, one saved with another is refused.
REMOVED_MODEL_SETTINGS = {"relation_gaps": False}
#: flat ``model`` settings of the vision-language layers, now the ``model.vl`` section
MOVED_TO_VL = {"vl_layers": "layers", "vl_dim": "dim", "vl_heads": "heads", "vl_ff": "ff",
               "vl_dropout": "dropout", "vl_init": "init"}


def _model_of(path: Path, config: dict[str, Any], vocab: Vocab, pretrained_words: bool
              ) -> nn.Module:
    from rcrn.engine.config import ConfigError

    model = dict(config.get("model") or {})
    for key, neutral in REMOVED_MODEL_SETTINGS.items():
        if key in model and model.pop(key) != neutral:
            raise CheckpointError(f"checkpoint {path}: its model was trained with "
                                  f"model.{key}, a setting this version removed (see "
                                  f"docs/ablations.md); it cannot rebuild that model")
    reduce = model.get("message_reduce") or {}
    if isinstance(reduce, dict) and "mean" in reduce.values():
        raise CheckpointError(f"checkpoint {path}: its model was trained with "
                              f"model.message_reduce 'mean', which this version removed "
                              f"(see docs/ablations.md); it cannot rebuild that model")
    moved = {new: model.pop(old) for old, new in MOVED_TO_VL.items() if old in model}
    if moved.get("layers"):
        model["vl"] = moved
    config = dict(config, model=model)
    try:
        return build_model(config, vocab, pretrained_words=pretrained_words)
    except (ConfigError, TypeError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {path}: its config does not build a model "
                              f"({_one_line(exc)})") from exc


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu"
                    ) -> tuple[RCRN, Vocab, dict[str, Any], dict[str, Any]]:
    """Model, vocabulary, config and the raw state of a checkpoint (weights only, no pickle).

    Raises:
        CheckpointError: naming the file when it cannot be read (see
            :func:`read_checkpoint`) or its weights do not fit the model of its config.
    """
    path = Path(path)
    state = read_checkpoint(path, map_location)
    try:
        vocab = Vocab.from_list(state["vocab"])
    except (ValueError, TypeError, KeyError) as exc:
        raise CheckpointError(f"checkpoint {path}: bad vocabulary ({_one_line(exc)})") from exc
    config = dict(state["config"])
    if "words" in config and config["words"]:
        # restored vectors come from the weights; keep the word size they were trained with
        key = next((k for k in ("words.embedding.weight", "encoder.words.embedding.weight")
                    if k in state["model"]), None)
        if key is None or state["model"][key].dim() != 2:
            raise CheckpointError(f"checkpoint {path}: no word embedding weights for its "
                                  "'words' section")
        config["model"] = dict(config.get("model", {}),
                               word_dim=int(state["model"][key].shape[1]))
    model = _model_of(path, config, vocab, pretrained_words=False)
    if getattr(model, "uniter", None) is not None:   # its word pieces come with the weights
        model.uniter.adopt_pieces(state["model"], "uniter.")
    _load_weights(path, model, state["model"], "the model of its own config")
    return model, vocab, state["config"], state


def config_differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two configs (sections compared key by key)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(old) + [k for k in new if k not in old]:
            key = f"{prefix}{k}"
            if k not in old or k not in new:
                out.append(key)
            else:
                out.extend(config_differences(old[k], new[k], key + "."))
        return out
    if isinstance(old, (list, tuple)) and isinstance(new, (list, tuple)):
        same = len(old) == len(new) and not any(config_differences(a, b)
                                                for a, b in zip(old, new))
        return [] if same else [prefix.rstrip(".")]
    same = type(old) is type(new) and old == new or (
        isinstance(old, (int, float)) and isinstance(new, (int, float))
        and not isinstance(old, bool) and not isinstance(new, bool) and old == new)
    return [] if same else [prefix.rstrip(".")]


def _flat(config: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(config, dict):
        return {prefix.rstrip("."): config}
    out: dict[str, Any] = {}
    for k, v in config.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


def problems_digest(problems: Sequence[GroundingProblem]) -> str:
    """A digest of the problem ids in order (what the data order is drawn over)."""
    h = hashlib.sha256()
    for p in problems:
        h.update(str(p.id).encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()


def parameter_groups(model: nn.Module, train: schema.Section) -> list[dict[str, Any]]:
    """Adam's parameter groups: the front end's (the UNITER encoder, or RCRN-VL's
    vision-language layers) at ``train.front_lr`` (the release's ``SOLVER.UNITER_LR``) when
    set, everything else at ``train.lr``.  Each group's ``scale`` is its rate over
    ``train.lr``; the schedule multiplies it."""
    lr, front_lr = float(train.lr), train.front_lr
    encoder = getattr(model, "uniter", None)
    if encoder is None:
        encoder = getattr(model, "vl", None)
    if front_lr is None or encoder is None:
        return [{"params": list(model.parameters()), "lr": lr, "scale": 1.0}]
    front = {id(p) for p in encoder.parameters()}
    return [{"params": [p for p in model.parameters() if id(p) in front],
             "lr": float(front_lr), "scale": float(front_lr) / lr},
            {"params": [p for p in model.parameters() if id(p) not in front],
             "lr": lr, "scale": 1.0}]


def make_optimizer(model: nn.Module, train: schema.Section) -> torch.optim.Optimizer:
    """Adam over :func:`parameter_groups`, fused (one kernel for every parameter, about
    5x faster than the per-parameter loop on a CPU) when every parameter is a float
    tensor on the CPU or a CUDA device."""
    fused = all(p.is_floating_point() and p.device.type in ("cpu", "cuda")
                for p in model.parameters())
    return torch.optim.Adam(parameter_groups(model, train), fused=fused or None)


def learning_rate(train: schema.Section) -> Callable[[int], float]:
    """The learning rate of step ``t`` (counted from 0) under ``train.lr`` / ``train.lr_decay``."""
    base, steps = float(train.lr), train.steps
    if train.lr_decay == "cosine":
        return lambda t: base * 0.5 * (1.0 + math.cos(math.pi * min(t, steps) / steps))
    return lambda t: base  # none (or null)


class Trainer:
    """Trains RCRN with Adam on a list of problems; logs, evaluates and checkpoints.

    Writes into ``out_dir``: ``config.yaml`` (resolved), ``metrics.jsonl`` (one
    JSON object per log or evaluation), ``last.pt`` (resumable checkpoint) and
    TensorBoard logs under ``tb/`` when tensorboard is installed.

    ``last.pt`` is written every ``train.checkpoint_every`` steps (default 200, about a
    minute of a demo-size run on a 2-core CPU; 0: only at the end) and after the last
    step, each time atomically (``*.tmp``, fsync, ``os.replace``).  It holds the model,
    the optimizer, the step (the learning-rate schedule and ``match_warmup`` are
    functions of it), the states of the Python, NumPy and torch generators, the
    data-order position (epoch and batch: an epoch's order is drawn from ``seed +
    epoch``) and the running log sums, so :meth:`resume` then :meth:`fit` continue the
    run exactly: a run killed at any point and resumed ends with the same weights as one
    never stopped (bit for bit on CPU with the same thread count).  A fresh :meth:`fit`
    (step 0, nothing resumed) starts ``metrics.jsonl`` anew and removes an earlier
    ``last.pt``; a resumed one cuts the log back to the lines written when its
    checkpoint was.

    Under ``torchrun`` (``WORLD_SIZE`` > 1) it joins the process group (``train.backend``,
    default gloo on CPU, NCCL on CUDA), trains the model in DistributedDataParallel with
    ``train.batch_size`` as the global batch split across the ranks, and only rank 0
    logs, checkpoints and evaluates (see ``rcrn.engine.distributed``).  ``train.amp: bf16``
    runs the forward under autocast, ``train.compile: true`` (or a backend name)
    compiles the model.  ``train.lr_decay: cosine`` lowers the learning rate from
    ``train.lr`` to 0 along a half cosine over ``train.steps`` (``none``, the default,
    keeps it constant); the rate is a function of the step, so ``--resume`` continues it.
    ``train.match_warmup: N`` trains grounding alone (match weight 0) for the first ``N``
    steps (the paper's appendix D.1.1; the release's ``AUTO_WEIGHT``).

    Args:
        config: the resolved config (sections ``model``, ``region_encoder``, ``loss``,
            ``train``).
        train: training problems.
        out_dir: where everything is written.
        evaluate: optional ``fn(model, vocab) -> dict`` of metrics, called every
            ``train.eval_every`` steps and at the end.
        vocab: vocabulary; built from ``train`` when not given.
    """

    def __init__(self, config: dict[str, Any], train: Sequence[GroundingProblem],
                 out_dir: str | Path,
                 evaluate: Callable[[RCRN, Vocab], dict[str, Any]] | None = None,
                 vocab: Vocab | None = None) -> None:
        self.config = config
        self.train = schema.section(config, "train")
        self.problems = list(train)
        if not self.problems:
            raise ValueError("no training problems")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.evaluate_fn = evaluate
        self.vocab = vocab or Vocab.build(self.problems)
        seed_everything(schema.seed(config))
        self.dist = distributed.init(resolve_device(self.train.device), self.train.backend)
        self.device = self.dist.device
        self.lr_at = learning_rate(self.train)
        self.model = build_model(config, self.vocab).to(self.device)
        self.loss_cfg = LossConfig(**schema.section(config, "loss"))
        self.optimizer = make_optimizer(self.model, self.train)
        self.step = 0
        self.with_images = self.model.region_encoder is not None
        if not self.with_images:
            _check_feature_width(self.problems, self.model)
        self.checkpoint_every = self.train.checkpoint_every
        self._digest = problems_digest(self.problems)
        self._resumed: dict[str, Any] | None = None  # the training state resumed from
        self._metrics_lines = 0

    @property
    def steps(self) -> int:
        """The number of optimisation steps of the run (``train.steps``)."""
        return self.train.steps

    def resume(self, path: str | Path | None = None) -> bool:
        """Restore the run of ``last.pt`` (or ``path``) if present; returns whether it did.

        Raises:
            CheckpointError: naming the file when it cannot be read, holds no training
                state, was written with another config (anything but
                ``RESUME_MAY_CHANGE``; the message names the keys), other training
                problems or another number of processes, or is past ``train.steps``.
        """
        path = Path(path) if path else self.out_dir / "last.pt"
        if not path.exists():
            return False
        state = read_checkpoint(path, self.device)
        training = state.get("training")
        if not isinstance(training, dict) or "position" not in training:
            raise CheckpointError(f"checkpoint {path} holds no training state (it was not "
                                  "written by a training run of this version), so the run "
                                  "cannot be resumed exactly; start a new run instead")
        differ = [k for k in config_differences(state["config"], self.config)
                  if k not in RESUME_MAY_CHANGE]
        if differ:
            old, new = _flat(state["config"]), _flat(self.config)
            said = "; ".join(f"{k}: {old.get(k, '(unset)')!r} in the checkpoint, "
                             f"{new.get(k, '(unset)')!r} now" for k in differ[:6])
            more = f" (and {len(differ) - 6} more)" if len(differ) > 6 else ""
            raise CheckpointError(f"checkpoint {path}: the config differs in {len(differ)} "
                                  f"key(s): {said}{more}; a resumed run may change only "
                                  f"{', '.join(RESUME_MAY_CHANGE)}")
        step, steps = int(state["step"]), self.steps
        if step > steps:
            raise CheckpointError(f"checkpoint {path} is at step {step}, past train.steps="
                                  f"{steps}; resume with train.steps >= {step}")
        if int(training.get("world_size", 1)) != self.dist.world_size:
            raise CheckpointError(f"checkpoint {path} was written by a run of "
                                  f"{training.get('world_size')} process(es); resume it with "
                                  f"as many (this run has {self.dist.world_size})")
        if (training.get("problems") != len(self.problems)
                or training.get("problems_digest") != self._digest):
            raise CheckpointError(f"checkpoint {path} was trained on other problems "
                                  f"({training.get('problems')} then, {len(self.problems)} "
                                  "now, or in another order): the data changed")
        if state["vocab"] != self.vocab.to_list():
            self.vocab = Vocab.from_list(state["vocab"])
            self.model = _model_of(path, self.config, self.vocab, True).to(self.device)
            self.optimizer = make_optimizer(self.model, self.train)
        _load_weights(path, self.model, state["model"], "the model of this config")
        if "optimizer" not in state:
            raise CheckpointError(f"checkpoint {path} holds no optimizer state")
        try:
            self.optimizer.load_state_dict(state["optimizer"])
        except (ValueError, KeyError, TypeError, RuntimeError) as exc:
            raise CheckpointError(f"checkpoint {path}: its optimizer state does not fit "
                                  f"({_one_line(exc)})") from exc
        self.step = step
        self._resumed = dict(training, config=state["config"])
        return True

    def _log(self, record: dict[str, Any]) -> None:
        with open(self.out_dir / "metrics.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        self._metrics_lines += 1
        if self._tb is not None:
            for k, v in record.items():
                if isinstance(v, (int, float)) and k != "step":
                    self._tb.add_scalar(k, v, record["step"])

    def _prepare_out(self) -> None:
        """Rank 0: remove leftover temporary files, then start the log anew (a fresh run),
        cut it back to the checkpoint's lines (a resumed run) or count it."""
        for name in TMP_FILES:
            (self.out_dir / name).unlink(missing_ok=True)
        log = self.out_dir / "metrics.jsonl"
        if self._resumed is not None:
            keep = int(self._resumed.get("metrics_lines", 0))
            lines = log.read_bytes().split(b"\n") if log.exists() else []
            complete = lines[:-1]  # the part after the last newline is an unfinished line
            kept = complete[:keep]
            if len(kept) != len(complete) or lines[-1:] not in ([b""], []):
                atomic_write(log, lambda f: f.write(b"".join(x + b"\n" for x in kept)))
            self._metrics_lines = len(kept)
            config = self._resumed["config"]
            # config.yaml is that of the checkpoint until the next checkpoint is written
            self._write_config(config)
        elif self.step == 0:  # a new run: no log or checkpoint of an earlier one stays
            log.unlink(missing_ok=True)
            (self.out_dir / "last.pt").unlink(missing_ok=True)
            self._metrics_lines = 0
            self._write_config(self.config)
        else:  # a second fit of this trainer continues its log
            self._metrics_lines = (len(log.read_bytes().splitlines()) if log.exists() else 0)
            self._write_config(self.config)

    def _write_config(self, config: dict[str, Any]) -> None:
        import yaml

        text = yaml.safe_dump(config, sort_keys=False).encode("utf-8")
        path = self.out_dir / "config.yaml"
        if not path.exists() or path.read_bytes() != text:
            atomic_write(path, lambda f: f.write(text))

    def _checkpoint(self, position: tuple[int, int], running: dict[str, float],
                    elapsed: float) -> None:
        """Rank 0 writes ``last.pt`` (and ``config.yaml`` when it changed)."""
        training = {
            "version": 1, "position": [int(position[0]), int(position[1])],
            "rng": rng_states(), "running": {k: float(v) for k, v in running.items()},
            "elapsed": float(elapsed), "metrics_lines": self._metrics_lines,
            "world_size": self.dist.world_size, "problems": len(self.problems),
            "problems_digest": self._digest,
        }
        save_checkpoint(self.out_dir / "last.pt", self.model, self.vocab, self.config,
                        self.optimizer, self.step, training=training)
        self._write_config(self.config)

    def fit(self, progress: bool = True) -> dict[str, Any]:
        """Train until step ``train.steps``; returns the last evaluation (or {}).

        Continues from the step :meth:`resume` restored; see the class for what is
        written.
        """
        from tqdm import tqdm

        main = self.dist.is_main
        self._tb = None
        resumed = self._resumed
        if main:
            self._prepare_out()
            try:
                from torch.utils.tensorboard import SummaryWriter

                # a resumed run drops the events logged after its checkpoint, as it
                # cuts metrics.jsonl back
                self._tb = SummaryWriter(str(self.out_dir / "tb"),
                                         purge_step=self.step + 1 if resumed else None)
            except ImportError:
                pass
        cfg, steps = self.train, self.steps
        batch_size, log_every, eval_every = cfg.batch_size, cfg.log_every, cfg.eval_every
        clip, warmup = float(cfg.grad_clip), cfg.match_warmup
        mu = self.loss_cfg.mu
        self.model.train()
        train_step = distributed.training_step(self.model,
                                               partial(loss_terms, cfg=self.loss_cfg),
                                               self.loss_cfg, self.dist, cfg)
        last_eval: dict[str, Any] = {}
        running: dict[str, float] = {}
        t0 = time.time()
        if min(batch_size, len(self.problems)) < self.dist.world_size:
            raise ValueError(f"train.batch_size ({batch_size}) and the number of problems "
                             f"({len(self.problems)}) must be at least the number of "
                             f"processes ({self.dist.world_size})")
        # the data order: epoch e visits the batches drawn from seed + e; a resumed run
        # starts at the checkpoint's epoch and batch, with the generators as they were then
        epoch, done_in_epoch = 0, 0
        restore: dict[str, Any] | None = None
        if resumed is not None:
            epoch, done_in_epoch = (int(v) for v in resumed["position"])
            restore = resumed["rng"]
            if main:
                running = {k: float(v) for k, v in resumed.get("running", {}).items()}
            else:  # rank 0 holds the ranks' sums (see _checkpoint's caller)
                running = {k: 0.0 for k in resumed.get("running", {})}
            t0 -= float(resumed.get("elapsed", 0.0))
            self._resumed = None
        bar = tqdm(total=steps, initial=self.step, desc="train",
                   disable=not progress or not main)
        position = (epoch, done_in_epoch)
        run_seed = schema.seed(self.config)
        while self.step < steps:
            loader = make_loader(self.problems, self.vocab, batch_size, True, self.with_images,
                                 cfg.num_workers, seed=run_seed + epoch,
                                 group_by=cfg.group_by, rank=self.dist.rank,
                                 world_size=self.dist.world_size,
                                 pin_memory=self.device.type == "cuda", skip=done_in_epoch)
            batches = iter(loader)  # (may draw from torch's generator: before the restore)
            if restore is not None:
                set_rng_states(restore)
                restore = None
            for batch in batches:
                if self.step >= steps:
                    break
                batch = batch.to(self.device, non_blocking=True)
                self.loss_cfg.mu = 0.0 if self.step < warmup else mu
                # forward and loss; when distributed, the loss whose DDP-averaged gradient
                # is the global batch's, and this rank's share of the logged terms
                loss, losses = train_step(batch)
                distributed.apply_gradients(self.model, self.optimizer, loss, clip,
                                            self.lr_at(self.step))
                self.step += 1
                done_in_epoch += 1
                position = (epoch, done_in_epoch)
                for k, v in losses.items():
                    running[k] = running.get(k, 0.0) + float(v.detach())
                bar.update(1)
                if self.step % log_every == 0 or self.step == steps:
                    running = distributed.sum_over_ranks(running)
                    n = log_every if self.step % log_every == 0 else self.step % log_every
                    record = {"step": self.step, **{k: v / n for k, v in running.items()},
                              "time": round(time.time() - t0, 2)}
                    running = {}
                    if not math.isfinite(record["loss"]):
                        raise FloatingPointError(f"loss is {record['loss']} at step {self.step}")
                    bar.set_postfix(loss=f"{record['loss']:.3f}")
                    if main:
                        self._log(record)
                if eval_every and self.evaluate_fn and self.step % eval_every == 0 \
                        and self.step != steps and main:
                    last_eval = self._evaluate()
                if self.checkpoint_every and self.step % self.checkpoint_every == 0 \
                        and self.step != steps:
                    # the running sums of all ranks, held by rank 0, go into the checkpoint
                    running = distributed.sum_over_ranks(running)
                    if main:
                        self._checkpoint(position, running, time.time() - t0)
                    else:
                        running = {k: 0.0 for k in running}
            epoch += 1
            done_in_epoch = 0
        if restore is not None:  # resumed at the end: nothing left to train
            set_rng_states(restore)
        self.loss_cfg.mu = mu
        bar.close()
        running = distributed.sum_over_ranks(running)  # (empty after the last log)
        if main:
            self._checkpoint(position, running, time.time() - t0)
        distributed.barrier()  # every rank can resume from last.pt from here on
        if self.evaluate_fn and main:
            last_eval = self._evaluate()
        if self._tb is not None:
            self._tb.close()
        return last_eval

    def _evaluate(self) -> dict[str, Any]:
        metrics = self.evaluate_fn(self.model, self.vocab)
        self._log({"step": self.step, "eval": metrics})
        self.model.train()
        return metrics
