"""The GITM-MR adapter: the official release layout as ``GroundingProblem``s.

Items come in pairs: a positive (matched) expression followed by its negative
(one relation phrase replaced), paired through ``counter/{split}_id2id_foil_rel.pkl``.
Problem ids are ``"pos/<sent_id>"`` and ``"neg/<sent_id>"`` so the two files'
sentence ids can never collide.

Graphs
    By default the shipped parses ``parse/{split}_graphs.pkl`` (positives) and
    ``parse/{split}_foil_rel_graphs.pkl`` (negatives), read with
    :func:`parsers.readers.read_gitm_parses` and the vocabulary under
    ``word_embedding/``; or any ``parser`` (``text -> LanguageGraph``, or an object
    with ``parse``) applied to the expressions.

Mismatched relation
    ``foil_pos`` indexes the negative parse's relation phrases (``spo_phrase``), the
    spo index stored in ``adj_matrix``.  The reader lists a shipped parse's relations
    by that index (:func:`relation_order`), as the release does, so the mismatched
    relation is ``foil_pos`` itself (its rank among the spo indices the parse uses,
    should ``adj_matrix`` skip a phrase); a ``foil_pos`` the parse has no relation
    for raises :class:`~benchmarks.base.DataError` naming the record.  Without
    ``foil_pos`` (or when a parse repaired with ``strict_parses=False`` moved the
    relation) the only relation whose words contain ``foil_phrase`` is taken.
    With a ``parser``, ``foil_indices`` (word indices in the negative expression,
    ``[start, end)``; an inclusive end is recognised when the words then equal
    ``foil_phrase``) are aligned by character offsets with the parsed tokens and the
    relation of largest overlap is taken; failing that, the phrase rule above.
    A negative whose relation cannot be found has ``mismatched_relation=None`` and
    ``meta["mismatch_unmapped"]=True`` (scored as an MRR error).

Boxes
    ``bbox`` is ``[x, y, w, h]`` in pixels and becomes ``x1, y1, x1 + w, y1 + h``
    (``inclusive_boxes=True``: the Ref-Reasoning convention ``x1 + w - 1``).
    ``meta["gt_idx"]`` is the proposal of maximum IoU with it (ties: the first).

Lengths
    ``rules="official"`` (the default, as the release's ``refdet_evaluation.py``):
    an item's length is its OWN expression's ``len(expression.split())``
    (:func:`benchmarks.gitm_mr.layout.token_count`; punctuation tokens count), so a
    negative whose substitution changes the word count may change bucket.
    ``rules="toolkit"``: the word count of the pair's positive expression
    (:func:`benchmarks.gitm_mr.layout.word_count`, punctuation-only tokens skipped), so
    both halves of a pair fall in the same bucket.  ``length <= threshold`` is
    in-distribution, ``> threshold`` out-of-distribution; the threshold is that of the
    Train-Len subset (16, or 11 for ``len11``) unless given.  ``length`` (in
    ``items`` and ``meta``) is always the toolkit length and ``tokens`` the official
    one; ``meta["in_distribution"]`` and :meth:`GITMMRBenchmark.evaluate` use the
    length of the rules.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import ProposalSourceError, get_proposals
from benchmarks.base import DataError, resolve_root
from benchmarks.gitm_metrics import check_rules, gitm_metrics
from benchmarks.gitm_mr.layout import (
    SPLITS,
    counter_path,
    expression_path,
    parse_path,
    read_counter,
    read_expressions,
    read_pickle,
    read_small,
    small_path,
    token_count,
    vocabulary_path,
    word_count,
)
from rcrn.boxes import box_iou
from rcrn.structures import GroundingProblem, LanguageGraph, Prediction, Proposals

__all__ = ["GITMMRBenchmark", "SUBSETS", "canonical_subset", "relation_order"]

#: Train subsets: Train-Len16, Train-Len11 and a uniform (seeded) fraction.
SUBSETS: tuple[str, ...] = ("len16", "len11", "uniform")

_SUBSET_ALIASES = {"len16": "len16", "trainlen16": "len16", "16": "len16",
                   "len11": "len11", "trainlen11": "len11", "11": "len11",
                   "uniform": "uniform", "5pct": "uniform", "5%": "uniform",
                   "uniform5": "uniform", "random": "uniform"}

Parser = Callable[[str], LanguageGraph]


def canonical_subset(subset: str | None) -> str | None:
    """``"Train-Len16"``, ``"len16"``, ``"16"`` -> ``"len16"``; ``"5pct"`` -> ``"uniform"``.

    Raises:
        ValueError: for an unknown name.
    """
    if subset is None:
        return None
    key = re.sub(r"[\s_\-]", "", str(subset).lower())
    if key not in _SUBSET_ALIASES:
        raise ValueError(f"unknown subset {subset!r}; choose from Train-Len16 ('len16'), "
                         f"Train-Len11 ('len11'), 'uniform' (a seeded 5% sample) or None")
    return _SUBSET_ALIASES[key]


def relation_order(record: Mapping[str, Any]) -> list[int]:
    """Relation-phrase index (``spo_phrase``) of every relation the parse reader builds.

    Follows :func:`parsers.readers.read_gitm_parses`: every non-negative entry of
    ``adj_matrix`` (an entry already seen at the transposed position counting
    once), in ascending spo index, so ``[0, 1, ..., n - 1]`` for a parse that uses
    each phrase once.
    """
    adj = np.asarray(record.get("adj_matrix", []), dtype=np.int64)
    if adj.ndim != 2:
        return []
    order: list[int] = []
    used: set[tuple[int, int, int]] = set()
    for s in range(adj.shape[0]):
        for o in range(adj.shape[1]):
            k = int(adj[s, o])
            if k < 0 or (o, s, k) in used:
                continue
            used.add((s, o, k))
            order.append(k)
    return sorted(order)


def _contains(words: Sequence[str], phrase: Sequence[str]) -> bool:
    n = len(phrase)
    return n > 0 and any(list(words[i:i + n]) == list(phrase) for i in range(len(words) - n + 1))


def _by_phrase(graph: LanguageGraph, phrase: str | None) -> int | None:
    if not phrase:
        return None
    target = phrase.lower().split()
    hits = [j for j, r in enumerate(graph.relations)
            if _contains([w.lower() for w in r.text.split()], target)]
    return hits[0] if len(hits) == 1 else None


def _word_offsets(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def _token_offsets(text: str, tokens: Sequence[str]) -> list[tuple[int, int] | None]:
    low = text.lower()
    out: list[tuple[int, int] | None] = []
    pos = 0
    for tok in tokens:
        at = low.find(tok.lower(), pos)
        if at < 0 or not tok:
            out.append(None)
            continue
        out.append((at, at + len(tok)))
        pos = at + len(tok)
    return out


def foil_word_span(expression: str, rec: Mapping[str, Any]) -> tuple[int, int] | None:
    """Word range ``[start, end)`` of the replaced phrase in a negative expression.

    ``foil_indices`` is read as ``[start, end)``, or as an inclusive ``[start, end]``
    when only that reading gives ``foil_phrase``; without indices (or when neither
    reading matches) the occurrence of ``foil_phrase`` nearest ``start`` is used.
    """
    words = [w.lower() for w in expression.split()]
    phrase = (rec.get("foil_phrase") or "").lower().split()
    ind = rec.get("foil_indices")
    if ind is not None:
        start, end = int(ind[0]), int(ind[1])
        if not phrase:
            return (start, max(end, start + 1)) if start < len(words) else None
        for stop in (end, end + 1):
            if words[start:stop] == phrase:
                return start, stop
    if not phrase:
        return None
    hits = [i for i in range(len(words) - len(phrase) + 1) if words[i:i + len(phrase)] == phrase]
    if not hits:
        return None
    anchor = int(ind[0]) if ind is not None else 0
    best = min(hits, key=lambda i: abs(i - anchor))
    return best, best + len(phrase)


def _by_span(graph: LanguageGraph, expression: str, span: tuple[int, int]) -> int | None:
    words = _word_offsets(expression)
    if span[1] > len(words) or span[0] >= span[1]:
        return None
    c0, c1 = words[span[0]][0], words[span[1] - 1][1]
    offs = _token_offsets(expression, graph.tokens)
    best, best_overlap = None, 0
    for j, r in enumerate(graph.relations):
        chars = [offs[t] for t in range(r.span[0], r.span[1]) if offs[t] is not None]
        if not chars:
            continue
        overlap = min(c1, max(e for _, e in chars)) - max(c0, min(s for s, _ in chars))
        if overlap > best_overlap:
            best, best_overlap = j, overlap
    return best


class GITMMRBenchmark:
    """One split of a GITM-MR release (or of a layout written by ``rcrn gitm-mr generate``).

    Args:
        root: the release folder (holding ``expression/``, ``counter/``, ``parse/``, ...).
        split: ``"train"``, ``"val"`` or ``"test"``.
        subset: None (every pair), ``"len16"`` / ``"len11"`` (Train-Len16 / Train-Len11
            from ``small/{split}_small_sent_ids_{16,11}.json``; outside ``train`` a
            missing file falls back to the word-length rule, see ``subset_source``) or
            ``"uniform"`` (a seeded uniform sample of ``subset_fraction`` of the pairs).
        parser: ``text -> LanguageGraph`` (or an object with ``parse``) used instead of
            the shipped parses.
        proposals: region proposals: None (``root/vinvl_objects`` when present), a path
            to a ``vinvl_objects`` folder (read with ``detectors.load("gitm-mr", ...)``),
            or any proposal source (a detectors source, a mapping or a callable
            ``image_id -> Proposals``).
        threshold: in/out-of-distribution word threshold for :meth:`evaluate`
            (default 11 for ``len11``, else 16).
        rules: ``"official"`` (default: lengths, referent box and metrics as the
            release's ``refdet_evaluation.py``) or ``"toolkit"`` (this package's
            earlier rules); see :mod:`benchmarks.gitm_metrics` and "Lengths" above.
        subset_seed: seed of the ``uniform`` subset.
        subset_fraction: share of pairs in the ``uniform`` subset (0.05 in the paper).
        include_unpaired: also yield positives that have no negative.
        inclusive_boxes: read ``bbox`` with the inclusive-pixel convention.
        strict_parses: raise on shipped graphs that are not trees (else repair them).

    Raises:
        DataError: missing or malformed files (naming the file and record).
        ValueError: unknown split or subset.
    """

    name = "gitm_mr"

    def __init__(self, root: str | Path, split: str = "test", subset: str | None = None,
                 parser: Parser | Any | None = None, proposals: Any = None, *,
                 threshold: int | None = None, subset_seed: int = 0,
                 subset_fraction: float = 0.05, include_unpaired: bool = False,
                 inclusive_boxes: bool = False, strict_parses: bool = True,
                 rules: str = "official") -> None:
        self.rules = check_rules(rules)
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; choose from {list(SPLITS)}")
        if not 0 < subset_fraction <= 1:
            raise ValueError(f"subset_fraction must be in (0, 1], got {subset_fraction}")
        self.root = resolve_root(root, "GITM-MR")
        self.split = split
        self.subset = canonical_subset(subset)
        self.parser = parser
        self.inclusive_boxes = bool(inclusive_boxes)
        self.strict_parses = bool(strict_parses)
        self.threshold = int(threshold) if threshold is not None else (
            11 if self.subset == "len11" else 16)
        self.subset_source = "all"
        self._proposals_arg = proposals
        self._source: Any = None
        self._source_ready = False
        self._graphs: dict[str, LanguageGraph] | None = None
        self._raw_neg: dict[str, Any] = {}
        self._mapped: dict[str, tuple[int | None, str]] = {}
        self._boxes: dict[str, np.ndarray] = {}
        self.parse_warnings: list[str] = []
        self.subset_seed = int(subset_seed)
        self.subset_fraction = float(subset_fraction)
        self.items = self._load_items(include_unpaired)

    # ------------------------------------------------------------------ items
    def _load_items(self, include_unpaired: bool) -> list[dict[str, Any]]:
        pos_file = expression_path(self.root, self.split, False)
        neg_file = expression_path(self.root, self.split, True)
        cnt_file = counter_path(self.root, self.split)
        positives = read_expressions(pos_file, negative=False)
        negatives = read_expressions(neg_file, negative=True)
        counter = read_counter(cnt_file)
        for pos, (neg, _) in counter.items():
            if pos not in positives:
                raise DataError(f"{cnt_file}: record {pos!r}: positive not in {pos_file.name}")
            if neg not in negatives:
                raise DataError(f"{cnt_file}: record {pos!r}: negative {neg!r} not in "
                                f"{neg_file.name}")
            if negatives[neg]["image_id"] != positives[pos]["image_id"]:
                raise DataError(f"{cnt_file}: record {pos!r}: positive image "
                                f"{positives[pos]['image_id']!r} but negative {neg!r} image "
                                f"{negatives[neg]['image_id']!r}")
        order = [s for s in positives if include_unpaired or s in counter]
        chosen = self._subset_ids(order, positives)
        items: list[dict[str, Any]] = []
        for sid in order:
            if chosen is not None and sid not in chosen:
                continue
            rec = positives[sid]
            length = word_count(rec["expression"])
            neg_id = counter[sid][0] if sid in counter else None
            items.append(self._item(rec, sid, 1, length, f"{pos_file.name} record {sid!r}",
                                    pair=sid, counter=neg_id))
            if neg_id is not None:
                items.append(self._item(negatives[neg_id], neg_id, 0, length,
                                        f"{neg_file.name} record {neg_id!r}", pair=sid,
                                        counter=sid, counter_type=counter[sid][1]))
        return items

    def _subset_ids(self, order: list[str], positives: dict[str, dict[str, Any]]
                    ) -> set[str] | None:
        if self.subset is None:
            return None
        if self.subset == "uniform":
            self.subset_source = "uniform sample"
            k = max(1, int(round(len(order) * self.subset_fraction))) if order else 0
            rng = random.Random(f"gitm-mr-uniform:{self.subset_seed}")
            return set(rng.sample(order, k))
        n = int(self.subset[3:])
        path = small_path(self.root, self.split, n)
        if path.is_file():
            ids = read_small(path)
            unknown = [s for s in ids if s not in positives]
            if unknown:
                raise DataError(f"{path}: {len(unknown)} sentence id(s) are not positives of "
                                f"split {self.split!r} (first: {unknown[:3]})")
            self.subset_source = str(path.relative_to(self.root))
            return set(ids)
        if self.split == "train":
            raise DataError(f"{path}: Train-Len{n} subset file not found")
        self.subset_source = f"word length <= {n}"
        return {s for s in order if word_count(positives[s]["expression"]) <= n}

    def _item(self, rec: dict[str, Any], sid: str, match: int, length: int, where: str, *,
              pair: str, counter: str | None, counter_type: str | None = None
              ) -> dict[str, Any]:
        x, y, w, h = rec["bbox"]
        one = 1.0 if self.inclusive_boxes else 0.0  # as rcrn.boxes.xywh_to_xyxy, per record
        box = np.array([x, y, x + w - one, y + h - one], dtype=np.float64)
        item = {
            "id": f"{'pos' if match else 'neg'}/{sid}", "sent_id": sid, "match": match,
            "image_id": rec["image_id"], "bbox": rec["bbox"], "box": box,
            "expression": rec["expression"], "words": word_count(rec["expression"]),
            "tokens": token_count(rec["expression"]), "length": length, "pair_id": pair,
            "counter_id": counter, "where": where,
        }
        if rec.get("num_nodes") is not None:
            item["num_nodes"] = rec["num_nodes"]
        if match == 0:
            item.update(counter_type=counter_type, foil_pos=rec.get("foil_pos"),
                        foil_indices=rec.get("foil_indices"),
                        foil_phrase=rec.get("foil_phrase"),
                        target_phrase=rec.get("target_phrase"))
        return item

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return (f"GITMMRBenchmark(root={str(self.root)!r}, split={self.split!r}, "
                f"subset={self.subset!r}, items={len(self)})")

    def _length(self, it: dict[str, Any], rules: str | None = None) -> int:
        """The item's length under ``rules`` (default: the adapter's); see "Lengths"."""
        return it["tokens"] if (rules or self.rules) == "official" else it["length"]

    @property
    def ids(self) -> list[str]:
        return [it["id"] for it in self.items]

    # ----------------------------------------------------------------- graphs
    def _parse_fn(self) -> Callable[[str], Any]:
        parse = getattr(self.parser, "parse", None)
        return parse if callable(parse) else self.parser

    def _load_graphs(self) -> dict[str, LanguageGraph]:
        if self._graphs is not None:
            return self._graphs
        graphs: dict[str, LanguageGraph] = {}
        if self.parser is not None:
            parse = self._parse_fn()
            for it in self.items:
                graph = parse(it["expression"])
                if not isinstance(graph, LanguageGraph):
                    raise TypeError(f"the parser returned {type(graph).__name__} for "
                                    f"{it['where']}, not LanguageGraph")
                graphs[it["id"]] = graph
            self._graphs = graphs
            return graphs
        from parsers.readers import ReaderError, read_gitm_parses

        vocab = vocabulary_path(self.root)
        pos_parse = parse_path(self.root, self.split, False)
        neg_parse = parse_path(self.root, self.split, True)
        if vocab is None:
            raise DataError(f"{self.root / 'word_embedding'}: no vocabulary file "
                            f"(vocabulary_72700.txt) to read the shipped parses; pass "
                            f"parser= to parse the expressions instead")
        for path in (pos_parse, neg_parse):
            if not path.is_file():
                raise DataError(f"{path}: parse file not found; pass parser= (e.g. "
                                f"parsers.load('rule')) to parse the expressions instead")
        texts = {it["sent_id"]: it["expression"] for it in self.items}
        try:
            pos = read_gitm_parses(pos_parse, vocab, texts, self.strict_parses,
                                   self.parse_warnings)
            neg = read_gitm_parses(neg_parse, vocab, texts, self.strict_parses,
                                   self.parse_warnings)
        except ReaderError as exc:
            raise DataError(str(exc)) from exc
        raw = read_pickle(neg_parse, "negative parses")
        self._raw_neg = {str(k): v for k, v in raw.items()} if isinstance(raw, Mapping) else {}
        for it in self.items:
            table, path = (pos, pos_parse) if it["match"] else (neg, neg_parse)
            if it["sent_id"] not in table:
                raise DataError(f"{path}: no graph for record {it['sent_id']!r} "
                                f"({it['where']})")
            graphs[it["id"]] = table[it["sent_id"]]
        self._graphs = graphs
        return graphs

    def graph(self, item_id: str) -> LanguageGraph:
        """The language graph of an item (shipped parse or the parser's)."""
        return self._load_graphs()[item_id]

    def _mismatch(self, it: dict[str, Any]) -> tuple[int | None, str]:
        """``(relation index, how)``; how is ``foil_pos``, ``span``, ``phrase`` or ``unmapped``."""
        if it["id"] in self._mapped:
            return self._mapped[it["id"]]
        graph = self.graph(it["id"])
        result: tuple[int | None, str] = (None, "unmapped")
        phrase = it.get("foil_phrase")
        k = it.get("foil_pos")
        if self.parser is None and k is not None:
            # relations are listed by spo index: relation foil_pos is the replaced phrase
            raw = self._raw_neg.get(it["sent_id"], {})
            order = relation_order(raw)
            if k not in order or order.index(k) >= graph.num_relations:
                raise DataError(f"{it['where']}: foil_pos {k} is not the spo index of a "
                                f"relation of its parse (spo indices {order})")
            j = order.index(k)
            r = graph.relations[j]
            if int(np.asarray(raw["adj_matrix"])[r.subject, r.object]) == k:
                result = (j, "foil_pos")  # else a repaired parse moved it: phrase rule
        elif self.parser is not None:
            span = foil_word_span(it["expression"], it)
            j = _by_span(graph, it["expression"], span) if span is not None else None
            if j is not None:
                result = (j, "span")
        if result[0] is None:
            j = _by_phrase(graph, phrase)
            if j is not None:
                result = (j, "phrase")
        self._mapped[it["id"]] = result
        return result

    # -------------------------------------------------------------- proposals
    def _proposal_source(self) -> Any:
        if self._source_ready:
            return self._source
        arg = self._proposals_arg
        if arg is None:
            folder = self.root / "vinvl_objects"
            arg = folder if (folder / "rois_info.pkl").is_file() else None
        if isinstance(arg, (str, Path)):
            import detectors

            try:
                arg = detectors.load("gitm-mr", Path(arg))
            except detectors.DetectorDataError as exc:
                raise DataError(str(exc)) from exc
        self._source, self._source_ready = arg, True
        return arg

    def proposals_of(self, image_id: str) -> Proposals:
        """Proposals of one image from the proposal source.

        Raises:
            ProposalSourceError: no source, or no entry for the image.
            DataError: the source's files are malformed.
        """
        import detectors

        source = self._proposal_source()
        try:
            if source is None or isinstance(source, Mapping) or callable(source):
                props = get_proposals(source, image_id, f"GITM-MR {self.split}")
            else:
                try:
                    props = source[image_id]
                except KeyError as exc:
                    raise ProposalSourceError(f"GITM-MR {self.split}: no proposals for image "
                                              f"{image_id!r} ({exc})") from exc
        except detectors.DetectorDataError as exc:
            raise DataError(str(exc)) from exc
        if not isinstance(props, Proposals):
            raise ProposalSourceError(f"GITM-MR {self.split}: the proposal source returned "
                                      f"{type(props).__name__} for image {image_id!r}")
        self._boxes[image_id] = props.boxes.copy()
        return props

    # --------------------------------------------------------------- protocol
    def problems(self) -> Iterator[GroundingProblem]:
        """The items as ``GroundingProblem``s: each positive followed by its negative.

        ``meta`` holds ``sent_id``, ``image_id``, ``split``, ``expression``, ``words``,
        ``tokens`` (the item's own token count, the official length), ``length`` (the
        pair's positive word count, the toolkit length), ``in_distribution`` (by the
        length of the adapter's ``rules``), ``pair_id``,
        ``counter_id``, ``bbox_xywh``, ``gt_idx`` and ``gt_iou`` (proposal of maximum IoU
        with the referent box and that IoU), and for a negative ``counter_type``,
        ``foil_pos``, ``foil_indices``, ``foil_phrase``, ``target_phrase``,
        ``mismatch_from`` (``foil_pos``, ``span`` or ``phrase``) and, when the relation
        could not be found, ``mismatch_unmapped``.
        """
        cached_id, cached = None, None
        for it in self.items:
            if it["image_id"] != cached_id:
                cached_id, cached = it["image_id"], self.proposals_of(it["image_id"])
            proposals = cached
            graph = self.graph(it["id"])
            ious = box_iou(it["box"], proposals.boxes)[0] if len(proposals) else np.zeros(0)
            gt_idx = int(ious.argmax()) if len(ious) else -1
            meta: dict[str, Any] = {
                "sent_id": it["sent_id"], "image_id": it["image_id"], "split": self.split,
                "expression": it["expression"], "words": it["words"], "tokens": it["tokens"],
                "length": it["length"],
                "in_distribution": self._length(it) <= self.threshold, "pair_id": it["pair_id"],
                "counter_id": it["counter_id"], "bbox_xywh": list(it["bbox"]),
                "gt_idx": gt_idx, "gt_iou": float(ious[gt_idx]) if gt_idx >= 0 else 0.0,
            }
            if "num_nodes" in it:
                meta["num_nodes"] = it["num_nodes"]
            mismatched = None
            if it["match"] == 0:
                mismatched, how = self._mismatch(it)
                meta.update({k: it.get(k) for k in ("counter_type", "foil_pos", "foil_indices",
                                                     "foil_phrase", "target_phrase")})
                meta["mismatch_from"] = how
                if mismatched is None:
                    meta["mismatch_unmapped"] = True
            yield GroundingProblem(
                graph=graph, proposals=proposals, match=it["match"],
                referent_box=it["box"] if it["match"] == 1 else None,
                mismatched_relation=mismatched, id=it["id"], meta=meta)

    def evaluate(self, predictions: Sequence[Prediction], rules: str | None = None
                 ) -> dict[str, Any]:
        """GITM-MR metrics (:func:`benchmarks.gitm_metrics.gitm_metrics`) of ``predictions``.

        Buckets: full, in-distribution (``length <= threshold``) and
        out-of-distribution.  A positive's prediction without ``box`` is scored through
        its ``proposal`` index into the image's proposals (from the proposal source;
        without one it counts as a grounding error).  Under ``rules="official"`` the
        referent box is the release's ``gt_xyxy``, ``[x, y, x + w - 1, y + h - 1]``
        (whatever ``inclusive_boxes``), scored with the inclusive-pixel IoU.

        Args:
            predictions: one ``Prediction`` per item.
            rules: ``"official"`` or ``"toolkit"``; default: the adapter's ``rules``.

        Returns:
            The metrics dict (with ``rules``) plus ``benchmark``, ``split``, ``subset``
            and ``threshold``.

        Raises:
            DataError: a missing or repeated prediction, or one the metrics cannot read
                (a ``mismatched_relation`` that is no relation of the item's graph, a
                ``proposal`` out of its image's proposals, ...), naming the file and line
                of predictions read by :func:`benchmarks.read_predictions`.
        """
        rules = check_rules(rules or self.rules)
        by_id = {p.id: p for p in predictions}
        targets = []
        for it in self.items:
            boxes = None
            pred = by_id.get(it["id"])
            if it["match"] == 1 and pred is not None and pred.box is None and pred.proposal >= 0:
                boxes = self._boxes.get(it["image_id"])
                if boxes is None and self._proposal_source() is not None:
                    boxes = self.proposals_of(it["image_id"]).boxes
            box = None
            if it["match"] == 1:
                x, y, w, h = it["bbox"]
                box = (np.array([x, y, x + w - 1.0, y + h - 1.0], dtype=np.float64)
                       if rules == "official" else it["box"])
            targets.append({
                "id": it["id"], "match": it["match"], "referent_box": box,
                "mismatched_relation": self._mismatch(it)[0] if it["match"] == 0 else None,
                "length": self._length(it, rules), "proposal_boxes": boxes,
                "num_relations": self.graph(it["id"]).num_relations,
            })
        try:
            result = gitm_metrics(targets, predictions, threshold=self.threshold, rules=rules)
        except ValueError as exc:
            raise DataError(f"GITM-MR {self.split}: {exc}") from exc
        result.update(benchmark=self.name, split=self.split, subset=self.subset)
        return result
