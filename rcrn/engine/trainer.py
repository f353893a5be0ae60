"""Training loop, predictions and checkpoints for RCRN on any list of problems."""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler, SequentialSampler

from rcrn.batching import GroundingBatch, Vocab, collate
from rcrn.engine import distributed
from rcrn.losses import LossConfig, model_loss
from rcrn.models.rcrn import RCRN, RCRNConfig
from rcrn.structures import GroundingProblem, Prediction

__all__ = ["PixelRegions", "build_model", "ProblemDataset", "make_loader", "predict",
           "Trainer", "save_checkpoint", "load_checkpoint", "seed_everything"]


def resolve_device(name: str) -> torch.device:
    """``"auto"`` is CUDA when available, else CPU; anything else is passed to torch."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class PixelRegions(nn.Module):
    """Region features from pixels: ``(images [U,3,H,W], image_index [B], boxes_px [B,N,4])
    -> [B,N,D]``; each distinct image goes through the encoder once.

    Wraps a per-box encoder taking ``[K, 5]`` rois (``detectors.RegionCNN``).
    """

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, images: torch.Tensor, image_index: torch.Tensor,
                boxes_px: torch.Tensor) -> torch.Tensor:
        B, N, _ = boxes_px.shape
        index = image_index.to(boxes_px.dtype)
        rois = torch.cat([index.repeat_interleave(N)[:, None], boxes_px.reshape(B * N, 4)], 1)
        return self.encoder(images, rois).reshape(B, N, -1)


def word_vectors(config: dict[str, Any], vocab: Vocab) -> torch.Tensor | None:
    """Pretrained word vectors named by the ``words`` section, or None for learned ones.

    ``words: {glove: [VOCAB_TXT, MATRIX_NPY]}`` reads a GloVe-format pair;
    ``words: {transformers: MODEL_DIR}`` encodes every word with a local encoder.
    """
    from rcrn.encoders import load_glove, transformer_word_vectors

    words = config.get("words") or {}
    if words.get("glove"):
        vocab_path, matrix_path = words["glove"]
        return load_glove(vocab_path, matrix_path, vocab)
    if words.get("transformers"):
        return transformer_word_vectors(words["transformers"], vocab)
    return None


#: settings of the ``region_encoder`` section (``detectors.RegionCNN`` arguments)
REGION_ENCODER_KEYS = ("channels", "pool_size", "strides", "max_pool")


def _region_encoder(config: dict[str, Any], vis_dim: int) -> nn.Module | None:
    enc = config.get("region_encoder")
    if not enc:
        return None
    from detectors.region_cnn import RegionCNN
    from rcrn.engine.config import ConfigError

    unknown = sorted(set(enc) - set(REGION_ENCODER_KEYS))
    if unknown:
        raise ConfigError(f"region_encoder section: unknown setting(s) {unknown}; known: "
                          f"{list(REGION_ENCODER_KEYS)}")

    return PixelRegions(RegionCNN(out_dim=vis_dim,
                                  channels=tuple(enc.get("channels", (16, 32, 32))),
                                  pool_size=int(enc.get("pool_size", 4)),
                                  strides=tuple(enc.get("strides", (1, 2, 2))),
                                  max_pool=bool(enc.get("max_pool", False))))


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
            ``model.vl_init``); a checkpoint being restored carries them in its
            weights, so it passes False.
    """
    from rcrn.engine.config import ConfigError
    from rcrn.models.cross_encoder import CrossEncoder, CrossEncoderConfig
    from rcrn.programs import ABLATIONS
    from rcrn.programs import to_text as program_text

    section = dict(config.get("model") or {})
    arch = section.pop("arch", "rcrn")
    if arch not in ARCHS:
        raise ConfigError(f"model.arch: unknown model type {arch!r}; choose from {list(ARCHS)}")
    config_cls = RCRNConfig if arch == "rcrn" else CrossEncoderConfig
    known = set(config_cls.__dataclass_fields__) - {"arch"}
    unknown = sorted(set(section) - known)
    if unknown:
        raise ConfigError(f"model section: unknown setting(s) {unknown} for arch {arch!r}; "
                          f"known: {sorted(known)}")
    if arch == "rcrn" and section.get("program") in ABLATIONS:
        section["program"] = program_text(ABLATIONS[section["program"]])
    model_cfg = config_cls(**section)
    if arch == "rcrn":
        from rcrn.programs import ProgramError, parse

        try:
            parse(model_cfg.program)
        except ProgramError as exc:
            raise ConfigError(f"model.program: {exc}") from exc
    vectors = word_vectors(config, vocab) if pretrained_words else None
    freeze = bool((config.get("words") or {}).get("freeze", False))
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
        if model_cfg.vl_init and model.vl is None:
            raise ConfigError("model.vl_init names a checkpoint but model.vl_layers is 0")
        if pretrained_words and model_cfg.vl_init:
            from rcrn.models.vl import load_vl_weights

            try:
                load_vl_weights(model.vl, model_cfg.vl_init, vocab)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"model.vl_init: {exc}") from exc
    else:
        model = CrossEncoder(model_cfg, len(vocab), word_vectors=vectors, freeze_words=freeze,
                             region_encoder=region)
    if (not pretrained_words and (config.get("words") or {}).get("freeze")
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
    """Problems for a DataLoader; images are read from ``meta['image_path']`` on access."""

    def __init__(self, problems: Sequence[GroundingProblem], with_images: bool = False) -> None:
        self.problems = list(problems)
        self.with_images = with_images

    def __len__(self) -> int:
        return len(self.problems)

    def __getitem__(self, i: int) -> GroundingProblem:
        p = self.problems[i]
        if self.with_images and "image" not in p.meta:
            from PIL import Image

            path = p.meta.get("image_path")
            if not path:
                raise ValueError(f"problem {p.id!r}: no meta['image_path'] to read pixels from")
            with Image.open(path) as im:
                image = np.asarray(im.convert("RGB"))
            p = GroundingProblem(p.graph, p.proposals, p.match, p.referent_box,
                                 p.mismatched_relation, p.id, dict(p.meta, image=image))
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


def make_loader(problems: Sequence[GroundingProblem], vocab: Vocab, batch_size: int,
                shuffle: bool, with_images: bool, num_workers: int = 0, seed: int = 0,
                group_by: str | None = None, rank: int = 0, world_size: int = 1,
                pin_memory: bool = False) -> DataLoader:
    """A DataLoader whose workers read and collate (the schedule is built in the workers).

    Args:
        group_by: a ``meta`` key (e.g. ``"image_path"``); when shuffling, items with
            the same value are batched together (see ``grouped_batches``).
        rank, world_size: with ``world_size`` > 1, ``batch_size`` is the global batch:
            every rank builds the same batches from ``seed`` and loads its slice of
            each (``distributed.shard_batches``; a last batch smaller than
            ``world_size`` is dropped).
        pin_memory: pin batches in page-locked memory (for CUDA copies).
    """
    dataset = ProblemDataset(problems, with_images)
    collate_fn = _Collate(vocab, with_images)
    common = dict(num_workers=num_workers, persistent_workers=num_workers > 0,
                  collate_fn=collate_fn, pin_memory=pin_memory)
    if shuffle and group_by:
        keys = [p.meta.get(group_by, p.id) for p in problems]
        batches = grouped_batches(keys, batch_size, seed)
        if world_size > 1:
            batches = distributed.shard_batches(batches, rank, world_size)
        return DataLoader(dataset, batch_sampler=batches, **common)
    gen = torch.Generator().manual_seed(seed)
    if world_size > 1:
        # the batches of the single-process loader below (the DataLoader draws from
        # ``gen`` in the same order), each rank loading its slice
        sampler = (RandomSampler(dataset, generator=gen) if shuffle
                   else SequentialSampler(dataset))
        batches = distributed.ShardedBatches(BatchSampler(sampler, batch_size, False), rank,
                                             world_size)
        return DataLoader(dataset, batch_sampler=batches, generator=gen, **common)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, generator=gen, **common)


class _Collate:
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
        preds.extend(predictions_from_output(out, batch))
    model.train(was_training)
    return preds


def predictions_from_output(out: Any, batch: GroundingBatch) -> list[Prediction]:
    """Split a batched ``ModelOutput`` into one ``Prediction`` per item."""
    preds = []
    scores = out.edge_scores.detach().cpu() if out.edge_scores is not None else None
    for g, item in enumerate(batch.ids):
        rel_scores: list[float] = []
        if scores is not None:
            edges = (batch.edge_batch == g).nonzero().flatten().cpu()
            order = batch.edge_relation[edges].cpu()
            rel = torch.zeros(len(edges))
            rel[order] = scores[edges].float()
            rel_scores = rel.tolist()
        mm = int(out.mismatch_index[g]) if out.mismatch_index is not None else -1
        preds.append(Prediction(
            id=item,
            match_prob=float(out.match_prob[g]) if out.match_prob is not None else 1.0,
            box=(out.box[g].detach().cpu().tolist()
                 if out.box is not None and int(out.ground_index[g]) >= 0 else None),
            proposal=int(out.ground_index[g]) if out.ground_index is not None else -1,
            mismatched_relation=mm if mm >= 0 else None, relation_scores=rel_scores))
    return preds


def save_checkpoint(path: str | Path, model: RCRN, vocab: Vocab, config: dict[str, Any],
                    optimizer: torch.optim.Optimizer | None = None, step: int = 0) -> None:
    state = {"model": model.state_dict(), "vocab": vocab.to_list(), "config": config,
             "step": step}
    if optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    tmp = Path(str(path) + ".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu"
                    ) -> tuple[RCRN, Vocab, dict[str, Any], dict[str, Any]]:
    """Model, vocabulary, config and the raw state of a checkpoint (weights only, no pickle)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    state = torch.load(path, map_location=map_location, weights_only=True)
    vocab = Vocab.from_list(state["vocab"])
    config = dict(state["config"])
    if "words" in config and config["words"]:
        # restored vectors come from the weights; keep the word size they were trained with
        key = next(k for k in ("words.embedding.weight", "encoder.words.embedding.weight")
                   if k in state["model"])
        config["model"] = dict(config.get("model", {}),
                               word_dim=int(state["model"][key].shape[1]))
    model = build_model(config, vocab, pretrained_words=False)
    model.load_state_dict(state["model"])
    return model, vocab, state["config"], state


def learning_rate(train_cfg: dict[str, Any]) -> Callable[[int], float]:
    """The learning rate of step ``t`` (counted from 0) under ``train.lr`` / ``train.lr_decay``."""
    base = float(train_cfg.get("lr", 5e-4))
    decay = train_cfg.get("lr_decay", "none") or "none"
    steps = max(1, int(train_cfg.get("steps", 1000)))
    if decay == "none":
        return lambda t: base
    if decay == "cosine":
        return lambda t: base * 0.5 * (1.0 + math.cos(math.pi * min(t, steps) / steps))
    raise ValueError(f"train.lr_decay must be 'none' or 'cosine', got {decay!r}")


class Trainer:
    """Trains RCRN with Adam on a list of problems; logs, evaluates and checkpoints.

    Writes into ``out_dir``: ``config.yaml`` (resolved), ``metrics.jsonl`` (one
    JSON object per log or evaluation), ``last.pt`` (resumable checkpoint) and
    TensorBoard logs under ``tb/`` when tensorboard is installed.

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
        self.train_cfg = dict(config.get("train", {}))
        self.problems = list(train)
        if not self.problems:
            raise ValueError("no training problems")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.evaluate_fn = evaluate
        self.vocab = vocab or Vocab.build(self.problems)
        seed_everything(int(config.get("seed", 0)))
        self.dist = distributed.init(resolve_device(self.train_cfg.get("device", "cpu")),
                                     self.train_cfg.get("backend"))
        self.device = self.dist.device
        distributed.amp_dtype(self.train_cfg.get("amp"))  # bad values fail here, not in fit
        distributed.compile_backend(self.train_cfg.get("compile"))
        self.lr_at = learning_rate(self.train_cfg)  # a bad train.lr_decay fails here
        self.model = build_model(config, self.vocab).to(self.device)
        self.loss_cfg = LossConfig(**config.get("loss", {}))
        self.optimizer = torch.optim.Adam(self.model.parameters(),
                                          lr=float(self.train_cfg.get("lr", 5e-4)))
        self.step = 0
        self.with_images = self.model.region_encoder is not None

    def resume(self, path: str | Path | None = None) -> bool:
        """Load ``last.pt`` (or ``path``) if present; returns whether it did."""
        path = Path(path) if path else self.out_dir / "last.pt"
        if not path.exists():
            return False
        state = torch.load(path, map_location=self.device, weights_only=True)
        if state["vocab"] != self.vocab.to_list():
            self.vocab = Vocab.from_list(state["vocab"])
            self.model = build_model(self.config, self.vocab).to(self.device)
            self.optimizer = torch.optim.Adam(self.model.parameters(),
                                              lr=float(self.train_cfg.get("lr", 5e-4)))
        self.model.load_state_dict(state["model"])
        if "optimizer" in state:
            self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])
        return True

    def _log(self, record: dict[str, Any]) -> None:
        with open(self.out_dir / "metrics.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        if self._tb is not None:
            for k, v in record.items():
                if isinstance(v, (int, float)) and k != "step":
                    self._tb.add_scalar(k, v, record["step"])

    def fit(self, progress: bool = True) -> dict[str, Any]:
        """Train for ``train.steps`` steps; returns the last evaluation (or last losses)."""
        from tqdm import tqdm

        from rcrn.engine.config import save_config

        main = self.dist.is_main
        self._tb = None
        if main:
            save_config(self.config, self.out_dir / "config.yaml")
            try:
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(str(self.out_dir / "tb"))
            except ImportError:
                pass
        cfg = self.train_cfg
        steps = int(cfg.get("steps", 1000))
        batch_size = int(cfg.get("batch_size", 64))
        log_every = int(cfg.get("log_every", 50))
        eval_every = int(cfg.get("eval_every", 0))
        clip = float(cfg.get("grad_clip", 10.0))
        warmup = int(cfg.get("match_warmup", 0))
        mu = self.loss_cfg.mu
        self.model.train()
        train_step = distributed.training_step(self.model, model_loss(self.model, self.loss_cfg),
                                               self.loss_cfg, self.dist, cfg)
        last_eval: dict[str, Any] = {}
        running: dict[str, float] = {}
        t0 = time.time()
        if min(batch_size, len(self.problems)) < self.dist.world_size:
            raise ValueError(f"train.batch_size ({batch_size}) and the number of problems "
                             f"({len(self.problems)}) must be at least the number of "
                             f"processes ({self.dist.world_size})")
        bar = tqdm(total=steps, initial=self.step, desc="train",
                   disable=not progress or not main)
        epoch = self.step * batch_size // max(1, len(self.problems))
        while self.step < steps:
            loader = make_loader(self.problems, self.vocab, batch_size, True, self.with_images,
                                 int(cfg.get("num_workers", 0)),
                                 seed=int(self.config.get("seed", 0)) + epoch,
                                 group_by=cfg.get("group_by"), rank=self.dist.rank,
                                 world_size=self.dist.world_size,
                                 pin_memory=self.device.type == "cuda")
            for batch in loader:
                if self.step >= steps:
                    break
                batch = batch.to(self.device, non_blocking=True)
                self.loss_cfg.mu = 0.0 if self.step < warmup else mu
                # forward and loss; when distributed, the loss whose DDP-averaged gradient
                # is the global batch's, and this rank's share of the logged terms
                loss, losses = train_step(batch)
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), clip)
                for group in self.optimizer.param_groups:
                    group["lr"] = self.lr_at(self.step)
                self.optimizer.step()
                self.step += 1
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
            epoch += 1
        self.loss_cfg.mu = mu
        bar.close()
        if main:
            save_checkpoint(self.out_dir / "last.pt", self.model, self.vocab, self.config,
                            self.optimizer, self.step)
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
