"""A non-modular cross-encoder baseline (UNITER-style) and its multiple-instance variant.

One transformer reads ``[CLS]``, the expression's words and the regions together
(``rcrn.models.vl.VLEncoder``); task heads follow the paper's appendix D.1:

* match: an FC layer and a sigmoid on the ``[CLS]`` output;
* grounding: an MLP on every region output plus an alignment score, the dot
  product of the region output with a linear map of the mean word output; a
  softmax over the regions (cross-entropy on the proposal of maximum IoU), and
  box regression offsets of the chosen region;
* with ``mil: true`` (the "UNITER+MIL" recipe of appendix D.1.2) match is read
  from the word outputs instead: every word gets a local matching score, the
  expression's score is the minimum over its words, a relation's score is the
  mean over the words of its phrase, and the relation with the lowest score is
  the mismatched one.  Without ``mil`` the model predicts no mismatched relation;
* with ``verifier: true`` the match is checked by a second transformer of the same size
  that is told the candidate referent: the region features go in again with a learned
  mark added to the candidate's (the grounding target while training, the grounded
  region otherwise) and, added to every region's, a projection of its place relative
  to the candidate (:func:`relative_places`).  The match is read at the candidate's
  output (with ``mil``: from the verifier's word outputs, as above), and with
  ``loss.align`` each entity phrase's words learn to pick its object's proposal among
  the verifier's region outputs (:meth:`CrossEncoder.entity_logits`).  Checking a
  relation between two grounded things is a comparison of their places; told which
  one is the candidate and where everything lies from it, "the candidate left of B"
  becomes a property of B's own input, which a transformer learns at once, where read
  from ``[CLS]`` the comparison stays at chance (docs/lengthgen.md).

The alignment score is not in the paper's head (its UNITER is pre-trained). Trained
from scratch, a region output learns which words it matches only once attention has
become selective, and attention becomes selective only when region outputs carry
that match: the MLP head alone stayed at chance-level grounding for 10,000 steps on
the synthetic benchmark. The dot product with the words gives the word-region match
a first-order gradient from the first step (docs/lengthgen.md, "The cross-encoder
baseline").

The model returns ``rcrn.models.ModelOutput``, so the trainer, ``predict``, the
metrics and the loss (``ground_logits``) treat it like RCRN.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from rcrn.batching import GroundingBatch
from rcrn.boxes import decode_deltas
from rcrn.models.output import ModelOutput
from rcrn.models.vl import VLConfig, VLEncoder
from rcrn.nn import MLP

__all__ = ["CrossEncoderConfig", "CrossEncoder", "relative_places"]


@dataclass
class CrossEncoderConfig:
    """Sizes and switches of the cross-encoder.

    ``arch`` is always ``"cross_encoder"`` (it selects this model in configs).
    """

    arch: str = "cross_encoder"
    word_dim: int = 64
    vis_dim: int = 64
    dim: int = 128
    layers: int = 4
    heads: int = 4
    ff: int = 256
    dropout: float = 0.1
    mil: bool = False
    regression: bool = True
    verifier: bool = False

    def vl(self) -> VLConfig:
        return VLConfig(self.dim, self.layers, self.heads, self.ff, self.dropout)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class CrossEncoder(nn.Module):
    """``[CLS]`` + words + regions through one transformer, with match / grounding /
    (MIL) mismatch heads.

    Args:
        config: sizes and switches.
        vocab_size: number of words.
        word_vectors: optional pretrained word vectors.
        freeze_words: keep them fixed.
        region_encoder: optional pixel encoder (as for RCRN); without it the batch's
            ``box_feats`` are the region features.
    """

    def __init__(self, config: CrossEncoderConfig, vocab_size: int,
                 word_vectors: torch.Tensor | None = None, freeze_words: bool = False,
                 region_encoder: nn.Module | None = None) -> None:
        super().__init__()
        self.config = config
        self.encoder = VLEncoder(vocab_size, config.word_dim, config.vis_dim, config.vl(),
                                 word_vectors, freeze_words)
        d = config.dim
        self.region_encoder = region_encoder
        self.match_head = nn.Linear(d, 1)
        self.ground_head = MLP(d, d, 1)
        self.align = nn.Linear(d, d)
        self.regress = MLP(d, d, 4) if config.regression else None
        if config.verifier:
            self.verifier = VLEncoder(vocab_size, config.word_dim, config.vis_dim,
                                      config.vl(), word_vectors, freeze_words)
            self.mark = nn.Parameter(torch.randn(config.vis_dim))
            self.places = MLP(PLACE_FEATURES, 64, config.vis_dim)
            # the size of the mark and places against the region features: three of their
            # standard deviations, taken from the first batch the model sees
            self.register_buffer("mark_scale", torch.zeros(()))

    @property
    def words(self) -> nn.Module:
        """The word embedding (the trainer freezes it like RCRN's)."""
        return self.encoder.words

    def region_features(self, batch: GroundingBatch) -> torch.Tensor:
        if self.region_encoder is not None and batch.images is not None:
            feats = self.region_encoder(batch.images, batch.image_index, batch.boxes_px)
            return feats * batch.box_mask[..., None]
        return batch.box_feats

    def alignment(self, words: torch.Tensor, regions: torch.Tensor, valid: torch.Tensor
                  ) -> torch.Tensor:
        """``[B, N]`` scores ``<region_i, W mean(words)> / sqrt(D)`` over each expression's
        own words (``valid [B, Lt]``: not padding)."""
        weight = valid.to(words.dtype)[..., None]
        text = (words * weight).sum(dim=1) / weight.sum(dim=1).clamp(min=1)
        return (regions * self.align(text)[:, None]).sum(dim=-1) / regions.shape[-1] ** 0.5

    def forward(self, batch: GroundingBatch) -> ModelOutput:
        feats = self.region_features(batch)
        cls, words, regions = self.encoder(batch, feats)
        B, N = batch.box_mask.shape
        Lt = words.shape[1]
        valid = torch.arange(Lt, device=words.device)[None] < batch.text_lengths[:, None]
        logits = (self.ground_head(regions).squeeze(-1) + self.alignment(words, regions, valid)
                  ).masked_fill(~batch.box_mask, float("-inf"))
        has_box = batch.box_mask.any(dim=1)
        index = logits.argmax(dim=1).masked_fill(~has_box, -1)
        ar = torch.arange(B, device=index.device)
        chosen = index.clamp(min=0)
        proposal = batch.boxes_px[ar, chosen]
        if self.regress is not None:
            deltas = self.regress(regions[ar, chosen])
            box = decode_deltas(proposal, deltas)
        else:
            deltas, box = proposal.new_zeros(B, 4), proposal
        out = ModelOutput(match_prob=None, ground_belief=torch.softmax(logits, dim=1),
                          ground_index=index, box=box, deltas=deltas, edge_scores=None,
                          mismatch_index=None, ground_logits=logits)
        readout = cls          # what the match is read from: [CLS], or the verifier's
        if self.config.verifier:
            candidate = chosen
            if self.training:   # the referent, where known, is what the verifier checks
                candidate = torch.where(batch.target_index >= 0, batch.target_index, chosen)
            _, words, checked = self.verify(batch, feats, candidate)
            readout = checked[ar, candidate]
            if self.training:   # a training signal only (loss.align)
                out.values["entity_logits"] = self.entity_logits(batch, words, checked)
        if not self.config.mil:
            out.match_prob = torch.sigmoid(self.match_head(readout).squeeze(-1))
            return out
        self._word_match(out, batch, words, valid)   # the verifier's words, with one
        return out

    def verify(self, batch: GroundingBatch, feats: torch.Tensor, candidate: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The verifier's outputs ``(cls, words, regions)`` with region ``candidate [B]``
        of each item marked and every region's place relative to it added."""
        if float(self.mark_scale) == 0:
            with torch.no_grad():
                real = feats[batch.box_mask]
                self.mark_scale.fill_(3 * float(real.std()) if real.numel() > 1 else 1.0)
        onehot = nn.functional.one_hot(candidate, feats.shape[1]).to(feats.dtype)
        places = self.places(relative_places(batch.boxes.to(feats.dtype), candidate))
        marked = feats + (onehot[..., None] * self.mark + places) * self.mark_scale
        return self.verifier(batch, marked)

    def entity_logits(self, batch: GroundingBatch, words: torch.Tensor,
                      regions: torch.Tensor) -> torch.Tensor:
        """``[V, N]`` scores of every node (entity phrase) against its image's regions: the
        mean of the phrase's word outputs dotted with each region output, scaled by
        ``1 / sqrt(D)`` (-inf for padding); computed while training, where ``loss.align``
        teaches them to pick the proposal of the entity's object
        (``GroundingBatch.entity_target``)."""
        B, Lt, D = words.shape
        pos = batch.ent_token_pos
        has = pos >= 0
        flat = words.reshape(B * Lt, D)[pos.clamp(min=0)] * has[..., None]
        phrase = flat.sum(dim=1) / has.sum(dim=1, keepdim=True).clamp(min=1)   # [V, D]
        node_regions = regions[batch.node_batch]                                # [V, N, D]
        scores = (node_regions * phrase[:, None]).sum(dim=-1) / D ** 0.5
        return scores.masked_fill(~batch.box_mask[batch.node_batch], float("-inf"))

    def _word_match(self, out: ModelOutput, batch: GroundingBatch, words: torch.Tensor,
                    valid: torch.Tensor) -> None:
        """The MIL read-out: match, word scores, relation scores and the mismatched
        relation from the word outputs ``words``."""
        B, Lt = valid.shape
        local = self.match_head(words).squeeze(-1)                      # [B, Lt]
        out.match_prob = torch.sigmoid(local.masked_fill(~valid, float("inf")).amin(dim=1))
        out.values["word_scores"] = local
        if batch.num_edges:
            start, end = batch.edge_span[:, 0], batch.edge_span[:, 1]
            pos = torch.arange(Lt, device=local.device)[None]
            inside = (pos >= start[:, None]) & (pos < end[:, None])     # [E, Lt]
            rows = local[batch.edge_batch]                              # [E, Lt]
            count = inside.sum(dim=1)
            scores = (rows * inside).sum(dim=1) / count.clamp(min=1)
            out.edge_scores = scores
            max_rel = int(batch.edge_relation.max()) + 1
            dense = scores.new_full((B, max_rel), float("inf"))
            dense[batch.edge_batch, batch.edge_relation] = scores
            out.mismatch_index = dense.argmin(dim=1).masked_fill(dense.isinf().all(dim=1), -1)
        else:
            out.mismatch_index = torch.full((B,), -1, dtype=torch.long, device=local.device)


#: the size of a region's place relative to a candidate (:func:`relative_places`)
PLACE_FEATURES = 7


def relative_places(boxes: torch.Tensor, candidate: torch.Tensor) -> torch.Tensor:
    """``[B, N, 7]`` places of the regions ``boxes [B, N, 4]`` (normalised xyxy) relative
    to region ``candidate [B]`` of each row: the offset of the centres in the candidate's
    width and height (clipped to 8, divided by 4), the log ratios of the widths and of the
    heights, the signs of the offset, and the L1 distance of the centres."""
    rows = torch.arange(len(candidate), device=boxes.device)
    centre = (boxes[..., :2] + boxes[..., 2:]) / 2
    size = (boxes[..., 2:] - boxes[..., :2]).clamp(min=1e-3)
    c0, s0 = centre[rows, candidate][:, None], size[rows, candidate][:, None]
    offset = ((centre - c0) / s0).clamp(-8, 8) / 4
    return torch.cat([offset, torch.log(size / s0), torch.sign(centre - c0),
                      (centre - c0).abs().sum(dim=-1, keepdim=True)], dim=-1)
