"""Building GITM-MR-style mismatched expressions from Ref-Reasoning.

For every Ref-Reasoning expression (``{split}_expressions.json``) with a graph --
the SGMN parse ``{split}_sg_seqs.json`` + ``{split}_sgs.json`` when both are
there, else a parser of :mod:`parsers` (the ``rule`` backend by default) -- the
generator looks for *sites*: relation phrases of the graph that contain a
relation of the substitution table (paper Table 4,
:data:`~benchmarks.gitm_mr.substitutions.SUBSTITUTIONS`, longest phrase first).
One site is rewritten with one of its table candidates; nothing else of the text
or the graph changes, so every negative differs from its positive in exactly one
relation phrase.

Choosing the substitution (per split, expressions visited in a seeded random order):

* **balance** -- the relation-phrase distribution of the mismatched expressions is
  kept close to the matched one.  A running table holds, per phrase, how many
  more times it occurs in the negatives so far than in their positives; each
  candidate gets the weight ``exp(-balance * change / 2)`` where ``change`` (-2, 0
  or +2) is how much it moves the table's L1 norm, and candidates are drawn
  without replacement by weight (``balance = 0``: uniform).  Then up to a share
  ``reject`` of the pairs is rejected, each time a pair whose substitution type
  most over-uses its replacement and under-uses its original.  The total variation
  distance between the two distributions is reported for the result and for a
  uniform draw with the same data.
* **plausibility** -- with a masked language model (``mlm`` / ``scorer``), a
  candidate whose pseudo-perplexity differs from the original's by more than the
  factor ``max_ppl_ratio`` is rejected and the next one drawn; an expression left
  without any acceptable candidate is dropped (only positives that have a
  negative are kept, as in GITM-MR).  Without a model the filter is skipped and
  the manifest says so.
* **bias check** -- ``candidates`` datasets are drawn with different seeds; a
  text-only classifier (:func:`~benchmarks.gitm_mr.bias.bias_classifier`) is
  trained on each, and the one with the lowest held-out accuracy is written.

Test mismatches are not human-filtered (the release's test set was); the
manifest notes it.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.base import DataError
from benchmarks.gitm_mr.bias import bias_classifier, relation_distributions, total_variation
from benchmarks.gitm_mr.layout import SPLITS, read_expressions
from benchmarks.gitm_mr.mlm import close_perplexity
from benchmarks.gitm_mr.substitutions import SUBSTITUTIONS, find_table_phrase
from benchmarks.gitm_mr.writer import Pair, write_release
from rcrn.structures import Entity, LanguageGraph, Proposals, Relation

__all__ = ["GenerateConfig", "Site", "find_sites", "substitute", "read_refreasoning",
           "generate_from_refreasoning", "MLM_SKIPPED"]

#: What the manifest says when no masked language model was given.
MLM_SKIPPED = ("skipped: no masked language model given (--mlm); mismatches were not "
               "filtered by pseudo-perplexity")

Scorer = Callable[[Sequence[str]], Sequence[float]]


@dataclass
class GenerateConfig:
    """Settings of :func:`generate_from_refreasoning`.

    Attributes:
        seed: master seed.
        splits: splits to build (those whose expression file exists).
        balance: strength of the distribution balancing (0 = uniform draws).
        reject: largest share of drawn pairs dropped to bring the distributions closer.
        max_ppl_ratio: largest accepted pseudo-perplexity ratio (either way).
        candidates: candidate datasets drawn; the least biased is written.
        limit: at most this many expressions per split (None = all).
        holdout: share of pairs held out by the bias classifier.
        feature_dim: width of written region features (None: as given).
    """

    seed: int = 0
    splits: tuple[str, ...] = SPLITS
    balance: float = 4.0
    reject: float = 0.1
    max_ppl_ratio: float = 2.0
    candidates: int = 1
    limit: int | None = None
    holdout: float = 0.2
    feature_dim: int | None = None

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad setting."""
        unknown = [s for s in self.splits if s not in SPLITS]
        if unknown or not self.splits:
            raise ValueError(f"splits must be among {list(SPLITS)}, got {list(self.splits)}")
        if self.balance < 0:
            raise ValueError(f"balance must be >= 0, got {self.balance}")
        if not 0 <= self.reject < 1:
            raise ValueError(f"reject must be in [0, 1), got {self.reject}")
        if self.max_ppl_ratio < 1:
            raise ValueError(f"max_ppl_ratio must be >= 1, got {self.max_ppl_ratio}")
        if self.candidates < 1:
            raise ValueError(f"candidates must be >= 1, got {self.candidates}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"limit must be >= 1, got {self.limit}")
        if not 0 < self.holdout < 1:
            raise ValueError(f"holdout must be in (0, 1), got {self.holdout}")


@dataclass(frozen=True)
class Site:
    """A place where a table relation can be replaced.

    Attributes:
        relation: index of the relation in the graph.
        start: first token of the table phrase in ``graph.tokens``.
        end: one past its last token.
        phrase: the table relation (lowercase).
        char_start: its first character in the expression.
        char_end: one past its last character.
    """

    relation: int
    start: int
    end: int
    phrase: str
    char_start: int
    char_end: int


def _token_offsets(text: str, tokens: Sequence[str]) -> list[tuple[int, int] | None]:
    low = text.lower()
    out: list[tuple[int, int] | None] = []
    pos = 0
    for tok in tokens:
        at = low.find(tok.lower(), pos) if tok else -1
        if at < 0:
            out.append(None)
            continue
        out.append((at, at + len(tok)))
        pos = at + len(tok)
    return out


def find_sites(expression: str, graph: LanguageGraph) -> list[Site]:
    """Every relation of ``graph`` holding a table relation that can be rewritten in the text.

    A site needs its words found in ``expression`` (case-insensitive, in order) and
    no entity or other relation overlapping it.
    """
    offsets = _token_offsets(expression, graph.tokens)
    sites = []
    for j, r in enumerate(graph.relations):
        words = graph.tokens[r.span[0]:r.span[1]]
        hit = find_table_phrase(words)
        if hit is None:
            continue
        phrase, a, b = hit
        t0, t1 = r.span[0] + a, r.span[0] + b
        chars = offsets[t0:t1]
        if any(c is None for c in chars):
            continue
        others = [e.span for e in graph.entities] + [
            o.span for k, o in enumerate(graph.relations) if k != j]
        if any(s < t1 and t0 < e for s, e in others):
            continue
        c0, c1 = chars[0][0], chars[-1][1]  # type: ignore[index]
        if expression[c0:c1].lower().split() != phrase.split():
            continue
        sites.append(Site(j, t0, t1, phrase, c0, c1))
    return sites


def substitute(expression: str, graph: LanguageGraph, site: Site, replacement: str
               ) -> tuple[str, LanguageGraph, list[int]]:
    """Replace ``site`` by ``replacement`` in the text and the graph.

    Returns:
        ``(negative text, negative graph, foil_indices)`` where ``foil_indices`` is the
        word range ``[start, end)`` of the replacement in the negative text.
    """
    sub = replacement
    if expression[site.char_start:site.char_start + 1].isupper():
        sub = sub[:1].upper() + sub[1:]
    text = expression[:site.char_start] + sub + expression[site.char_end:]
    sub_words = sub.split()
    t0, t1 = site.start, site.end
    delta = len(sub_words) - (t1 - t0)
    tokens = list(graph.tokens[:t0]) + sub_words + list(graph.tokens[t1:])

    def shift(span: tuple[int, int]) -> tuple[int, int]:
        a, b = span
        if b <= t0:
            return a, b
        if a >= t1:
            return a + delta, b + delta
        return a, b + delta

    entities = [Entity(text=e.text, span=shift(e.span), head=e.head, modifiers=list(e.modifiers))
                for e in graph.entities]
    relations = []
    for k, r in enumerate(graph.relations):
        span = shift(r.span)
        rel_text = " ".join(tokens[span[0]:span[1]]) if k == site.relation else r.text
        relations.append(Relation(subject=r.subject, object=r.object, text=rel_text, span=span))
    neg = LanguageGraph(tokens=tokens, entities=entities, relations=relations, root=graph.root,
                        text=text)
    before = len(expression[:site.char_start].split())
    if site.char_start > 0 and not expression[site.char_start - 1].isspace():
        before -= 1  # the phrase starts inside a whitespace word
    return text, neg, [before, before + len(sub_words)]


def find_file(folder: Path, name: str) -> Path | None:
    """``folder/name``, else the first file of that name below ``folder`` (or None)."""
    direct = folder / name
    if direct.is_file():
        return direct
    found = sorted(folder.rglob(name))
    return found[0] if found else None


SplitData = tuple[dict[str, dict[str, Any]], dict[str, LanguageGraph], dict[str, Any]]


def read_refreasoning(folder: str | Path, split: str, parse: Callable[[str], LanguageGraph],
                      limit: int | None = None) -> SplitData:
    """Read one split of Ref-Reasoning: expressions and a graph per expression.

    Returns:
        ``(expressions, graphs, info)``; ``info`` says where the graphs came from.

    Raises:
        DataError: the expression file is missing or malformed, or the SGMN files are.
    """
    from parsers.readers import ReaderError, read_sgmn_graphs

    root = Path(folder)
    path = find_file(root, f"{split}_expressions.json")
    if path is None:
        raise DataError(f"{root}: no {split}_expressions.json")
    expressions = read_expressions(path, negative=False)
    if limit is not None:
        expressions = dict(list(expressions.items())[:limit])
    info: dict[str, Any] = {"expressions_file": str(path), "expressions": len(expressions)}
    sgmn: dict[str, LanguageGraph] = {}
    seqs, sgs = find_file(root, f"{split}_sg_seqs.json"), find_file(root, f"{split}_sgs.json")
    if seqs is not None and sgs is not None:
        warnings: list[str] = []
        try:
            sgmn = read_sgmn_graphs(seqs, sgs, strict=False, warnings=warnings)
        except ReaderError as exc:
            raise DataError(str(exc)) from exc
        info.update(sg_seqs=str(seqs), sgs=str(sgs), sgmn_repairs=len(warnings))
    elif seqs is not None:
        info["note"] = (f"{seqs.name} found without {split}_sgs.json (the words): "
                        f"expressions were parsed instead")
    graphs: dict[str, LanguageGraph] = {}
    from_sgmn = from_parser = 0
    for sid, rec in expressions.items():
        graph = sgmn.get(sid)
        if graph is not None and all(o is not None for o in
                                     _token_offsets(rec["expression"], graph.tokens)):
            from_sgmn += 1
        else:
            graph = parse(rec["expression"])
            from_parser += 1
        graphs[sid] = graph
    info.update(graphs_from_sgmn=from_sgmn, graphs_from_parser=from_parser)
    return expressions, graphs, info


@dataclass
class _Choice:
    site: Site
    replacement: str
    text: str
    graph: LanguageGraph
    foil_indices: list[int]


@dataclass
class _SplitDraw:
    choices: dict[str, _Choice] = field(default_factory=dict)
    uniform_texts: list[tuple[str, str]] = field(default_factory=list)
    rejected_candidates: int = 0
    dropped_by_mlm: int = 0
    rejected_for_balance: int = 0


def _cost(diff: Counter[str], phrase: str, replacement: str) -> int:
    return (abs(diff[replacement] + 1) - abs(diff[replacement])
            + abs(diff[phrase] - 1) - abs(diff[phrase]))


def _draw_split(expressions: Mapping[str, dict[str, Any]], graphs: Mapping[str, LanguageGraph],
                sites: Mapping[str, list[Site]], rng: random.Random, balance: float,
                ppl: Callable[[str], float] | None, max_ratio: float,
                reject: float) -> _SplitDraw:
    draw = _SplitDraw()
    diff: Counter[str] = Counter()
    order = [sid for sid in expressions if sites[sid]]
    rng.shuffle(order)
    for sid in order:
        text, graph = expressions[sid]["expression"], graphs[sid]
        cands = [(s, r) for s in sites[sid] for r in SUBSTITUTIONS[s.phrase]]
        base = cands[rng.randrange(len(cands))]
        draw.uniform_texts.append((text, substitute(text, graph, base[0], base[1])[0]))
        keyed = []
        for site, rep in cands:
            weight = math.exp(-balance * _cost(diff, site.phrase, rep) / 2.0)
            keyed.append((rng.random() ** (1.0 / weight), site, rep))
        keyed.sort(key=lambda t: -t[0])
        original = ppl(text) if ppl is not None else None
        for _, site, rep in keyed:
            neg_text, neg_graph, foil = substitute(text, graph, site, rep)
            if ppl is not None and not close_perplexity(original, ppl(neg_text), max_ratio):
                draw.rejected_candidates += 1
                continue
            draw.choices[sid] = _Choice(site, rep, neg_text, neg_graph, foil)
            diff[rep] += 1
            diff[site.phrase] -= 1
            break
        else:
            draw.dropped_by_mlm += 1
    _reject_for_balance(draw, diff, rng, int(reject * len(draw.choices)))
    return draw


def _reject_for_balance(draw: _SplitDraw, diff: Counter[str], rng: random.Random,
                        budget: int) -> None:
    """Drop up to ``budget`` pairs whose removal brings the two distributions closer.

    Dropping a pair whose substitution ``t -> f`` over-represents ``f`` and
    under-represents ``t`` in the negatives lowers the L1 imbalance by 2; the type
    with the largest combined excess goes first, a random pair of it each time.
    """
    by_type: dict[tuple[str, str], list[str]] = {}
    for sid, ch in draw.choices.items():
        by_type.setdefault((ch.site.phrase, ch.replacement), []).append(sid)
    for key in by_type:
        by_type[key].sort()
    while draw.rejected_for_balance < budget:
        useful = [(diff[f] - diff[t], key) for key in sorted(by_type)
                  for t, f in [key] if by_type[key] and diff[f] > 0 and diff[t] < 0]
        if not useful:
            break
        _, (t, f) = max(useful)
        sids = by_type[(t, f)]
        sid = sids.pop(rng.randrange(len(sids)))
        del draw.choices[sid]
        diff[f] -= 1
        diff[t] += 1
        draw.rejected_for_balance += 1


def generate_from_refreasoning(refreasoning: str | Path, out: str | Path,
                               config: GenerateConfig | None = None, *,
                               parser: Callable[[str], LanguageGraph] | Any | None = None,
                               mlm: str | Path | None = None, scorer: Scorer | None = None,
                               proposals: Any = None) -> dict[str, Any]:
    """Build mismatched expressions from Ref-Reasoning and write the GITM-MR layout.

    Args:
        refreasoning: folder holding ``{split}_expressions.json`` (and optionally
            ``{split}_sg_seqs.json`` + ``{split}_sgs.json``), searched recursively.
        out: output folder of the release layout.
        config: generator settings.
        parser: ``text -> LanguageGraph`` (or an object with ``parse``) for expressions
            without an SGMN graph; default ``parsers.load("rule")``.
        mlm: a local masked language model folder for the pseudo-perplexity filter.
        scorer: a callable ``texts -> pseudo-perplexities`` used instead of ``mlm``.
        proposals: optional proposal source (mapping / detectors source /
            ``image_id -> Proposals`` callable) written to ``vinvl_objects/``.

    Returns:
        The manifest (also written to ``out/manifest.json``), with a ``report`` of
        counts, relation distance, perplexity filter and bias classifier figures.

    Raises:
        DataError: malformed inputs (naming file and record).
        benchmarks.gitm_mr.mlm.MLMUnavailable: ``mlm`` given but unusable.
        ValueError: bad settings.
    """
    config = config or GenerateConfig()
    config.validate()
    if scorer is None and mlm is not None:
        from benchmarks.gitm_mr.mlm import PseudoPerplexity

        scorer = PseudoPerplexity(mlm)
    if parser is None:
        import parsers

        parser = parsers.load("rule")
    parse = parser.parse if callable(getattr(parser, "parse", None)) else parser
    root = Path(refreasoning)
    if not root.is_dir():
        raise DataError(f"{root}: Ref-Reasoning folder not found")
    data: dict[str, SplitData] = {}
    for split in config.splits:
        if find_file(root, f"{split}_expressions.json") is not None:
            data[split] = read_refreasoning(root, split, parse, config.limit)
    if not data:
        raise DataError(f"{root}: no {{split}}_expressions.json for splits "
                        f"{list(config.splits)}")
    sites = {split: {sid: find_sites(rec["expression"], graphs[sid])
                     for sid, rec in exprs.items()} for split, (exprs, graphs, _) in data.items()}
    cache: dict[str, float] = {}

    def ppl(text: str) -> float:
        if text not in cache:
            cache[text] = float(scorer([text])[0])  # type: ignore[misc]
        return cache[text]

    draws: list[dict[str, _SplitDraw]] = []
    bias_runs: list[dict[str, Any]] = []
    for c in range(config.candidates):
        per_split = {}
        for split, (exprs, graphs, _) in data.items():
            rng = random.Random(f"gitm-mr-generate:{config.seed}:{c}:{split}")
            per_split[split] = _draw_split(exprs, graphs, sites[split], rng, config.balance,
                                           ppl if scorer is not None else None,
                                           config.max_ppl_ratio, config.reject)
        pooled = [(data[s][0][sid]["expression"], ch.text)
                  for s, d in per_split.items() for sid, ch in d.choices.items()]
        run = bias_classifier(pooled, seed=config.seed, holdout=config.holdout)
        run["candidate"] = c
        bias_runs.append(run)
        draws.append(per_split)
    accs = [r["heldout_accuracy"] if r["heldout_accuracy"] is not None else 1.0
            for r in bias_runs]
    best = min(range(len(draws)), key=lambda i: (accs[i], i))
    chosen = draws[best]

    splits_out: dict[str, list[Pair]] = {}
    report: dict[str, Any] = {"splits": {}}
    for split, (exprs, graphs, info) in data.items():
        d = chosen[split]
        pairs = []
        for sid, rec in exprs.items():  # file order
            ch = d.choices.get(sid)
            if ch is None:
                continue
            pairs.append(Pair(pos_id=sid, image_id=rec["image_id"], bbox=rec["bbox"],
                              expression=rec["expression"], graph=graphs[sid],
                              neg_expression=ch.text, neg_graph=ch.graph,
                              foil_pos=ch.site.relation, foil_indices=ch.foil_indices,
                              foil_phrase=ch.replacement, target_phrase=ch.site.phrase))
        splits_out[split] = pairs
        pos_c, neg_c = relation_distributions([p.expression for p in pairs],
                                              [str(p.neg_expression) for p in pairs])
        upos, uneg = relation_distributions([a for a, _ in d.uniform_texts],
                                            [b for _, b in d.uniform_texts])
        entry: dict[str, Any] = {
            **info,
            "with_sites": sum(1 for v in sites[split].values() if v),
            "without_sites": sum(1 for v in sites[split].values() if not v),
            "pairs": len(pairs),
            "rejected_for_balance": d.rejected_for_balance,
            "relation_tv": total_variation(pos_c, neg_c),
            "relation_tv_uniform": total_variation(upos, uneg),
            "relation_counts_matched": pos_c, "relation_counts_mismatched": neg_c,
            "substitutions": dict(Counter(f"{p.target_phrase} -> {p.foil_phrase}"
                                          for p in pairs).most_common()),
        }
        if scorer is not None:
            kept = [(ppl(p.expression), ppl(str(p.neg_expression))) for p in pairs]
            entry.update(rejected_candidates=d.rejected_candidates,
                         dropped_by_mlm=d.dropped_by_mlm,
                         mean_ppl_matched=_mean([a for a, _ in kept]),
                         mean_ppl_mismatched=_mean([b for _, b in kept]))
        report["splits"][split] = entry
    report["bias_classifier"] = {"chosen_candidate": best, "runs": bias_runs,
                                 "heldout_accuracy": bias_runs[best]["heldout_accuracy"]}
    report["pseudo_perplexity"] = (
        MLM_SKIPPED if scorer is None else
        {"model": str(mlm) if mlm is not None else "custom scorer",
         "max_ratio": config.max_ppl_ratio})
    manifest = {
        "source": "Ref-Reasoning", "source_root": str(root), "config": asdict(config),
        "substitution_table": {k: list(v) for k, v in SUBSTITUTIONS.items()},
        "report": report,
        "notes": ["test mismatches are not human-filtered",
                  "no word embedding matrix is written (vocabulary only)"],
    }
    props = _collect_proposals(proposals, splits_out) if proposals is not None else None
    return write_release(out, splits_out, proposals=props, feature_dim=config.feature_dim,
                         manifest=manifest)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _collect_proposals(source: Any, splits: Mapping[str, Sequence[Pair]]) -> dict[str, Proposals]:
    out: dict[str, Proposals] = {}
    for pairs in splits.values():
        for p in pairs:
            if p.image_id in out:
                continue
            try:
                props = source(p.image_id) if callable(source) and not hasattr(
                    source, "__getitem__") else source[p.image_id]
            except KeyError as exc:
                raise DataError(f"the proposal source has no image {p.image_id!r} "
                                f"(expression {p.pos_id!r})") from exc
            if not isinstance(props, Proposals):
                raise DataError(f"the proposal source returned {type(props).__name__} for "
                                f"image {p.image_id!r}, not Proposals")
            out[p.image_id] = props
    return out
