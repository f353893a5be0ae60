"""``rcrn parse``, ``rcrn parse-eval`` and ``rcrn parse-style``: language graphs from the
command line.

``parse --scene`` parses each text as a whole description into a scene graph.
``parse-eval`` scores a parser on VSR or What'sUp template captions (``--benchmark``,
``--root``) or, with ``--format factual FILE``, on the human scene graphs of a
FACTUAL-format CSV (:func:`parsers.evaluate.evaluate_factual`; ``--scene``: the
parser's scene mode, for captions of several sentences), or with ``--format pairs FILE``
on minimal caption pairs (:func:`parsers.evaluate.evaluate_pairs`: how many pairs parse to
graphs that differ in exactly the edited relation).  ``parse-style`` learns an annotation
style (:class:`parsers.style.AnnotationStyle`) from a FACTUAL-format CSV; ``--style FILE``
writes the graphs of ``parse`` and ``parse-eval`` in it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import parsers
from parsers.base import ParseError
from parsers.evaluate import (
    PAIR_KINDS,
    evaluate_factual,
    evaluate_pairs,
    evaluate_parser,
    read_captions,
    read_factual,
    read_pairs,
)
from parsers.scene import SceneGraph
from parsers.style import ACTIONS, AnnotationStyle, StyledParser
from rcrn.errors import CommandError
from rcrn.structures import LanguageGraph

__all__ = ["register", "cmd_parse", "cmd_parse_eval", "cmd_parse_style", "format_graph",
           "format_scene"]


def _options(pairs: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"--option expects KEY=VALUE, got {pair!r}")
        out[key.replace("-", "_")] = value
    return out


def _load(args: argparse.Namespace) -> Any:
    """The parser of ``--parser`` and ``--option``, in the style of ``--style`` if given."""
    parser = parsers.load(args.parser, **_options(args.option))
    style = getattr(args, "style", None)
    return StyledParser(parser, AnnotationStyle.load(style)) if style else parser


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  " + "  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return lines


def format_graph(graph: LanguageGraph, warnings: list[str] | None = None) -> str:
    """A readable table of a graph: entities, relations with subject and object, root."""
    lines = [f"text: {graph.text}", "entities:"]
    rows = []
    for i, e in enumerate(graph.entities):
        mark = "*" if i == graph.root else ""
        rows.append([f"{i}{mark}", e.text, e.head, ", ".join(e.modifiers),
                     f"{e.span[0]}-{e.span[1]}"])
    lines += _table(["#", "phrase", "head", "modifiers", "tokens"], rows)
    lines.append("relations:")
    if graph.relations:
        rows = []
        for k, r in enumerate(graph.relations):
            rows.append([str(k), f"{r.subject} {graph.entities[r.subject].text}", r.text,
                         f"{r.object} {graph.entities[r.object].text}",
                         f"{r.span[0]}-{r.span[1]}"])
        lines += _table(["#", "subject", "relation", "object", "tokens"], rows)
    else:
        lines.append("  (none)")
    lines.append(f"root: {graph.root} ({graph.entities[graph.root].text})")
    for w in warnings or []:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def format_scene(graph: SceneGraph, warnings: list[str] | None = None) -> str:
    """A readable table of a scene graph: entities with their mentions, relations, and the
    graph in the FACTUAL layout."""
    lines = [f"text: {graph.text}", "entities:"]
    rows = [[str(i), e.head, ", ".join(e.attributes),
             "; ".join(" ".join(graph.tokens[s:t]) for s, t in e.mentions)]
            for i, e in enumerate(graph.entities)]
    lines += _table(["#", "head", "attributes", "mentions"], rows)
    lines.append("relations:")
    if graph.relations:
        rows = [[str(k), f"{r.subject} {graph.entities[r.subject].head}", r.text,
                 f"{r.object} {graph.entities[r.object].head}"]
                for k, r in enumerate(graph.relations)]
        lines += _table(["#", "subject", "relation", "object"], rows)
    else:
        lines.append("  (none)")
    lines.append(f"factual: {graph.to_factual() or '(none)'}")
    for w in warnings or []:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def cmd_parse(args: argparse.Namespace) -> int:
    """Parse the given texts and print them as tables or JSON."""
    if args.list_parsers:
        rows = [[b["name"], "yes" if b["installed"] else "no",
                 b["description"] if b["installed"] else b["install"]]
                for b in parsers.available()]
        print("\n".join(_table(["parser", "installed", "notes"], rows)))
        return 0
    if not args.text:
        raise CommandError("give at least one TEXT to parse (or --list-parsers)")
    parser = _load(args)
    scene = getattr(args, "scene", False)
    analyse = parser.analyse_scene if scene else parser.analyse
    results = []
    for k, text in enumerate(args.text):
        try:
            results.append(analyse(text))
        except ParseError as exc:
            where = f"text {k + 1}" if len(args.text) > 1 else "text"
            raise CommandError(f"{where}: {exc}") from exc
    if args.json:
        docs = [dict(r.graph.to_dict(), warnings=list(r.warnings)) for r in results]
        print(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2, ensure_ascii=False))
    else:
        show = format_scene if scene else format_graph
        print("\n\n".join(show(r.graph, r.warnings) for r in results))
    return 0


def _input_file(args: argparse.Namespace, fmt: str, what: str) -> str:
    """The input of a file-based ``--format`` (given as FILE or as ``--root``), with the
    flags that do not go with it refused and ``--limit`` checked."""
    if args.benchmark:
        raise CommandError(f"--benchmark is for template captions; --format {fmt} reads "
                           f"{what}")
    if args.file and args.root and args.file != args.root:
        raise CommandError(f"give {what} once: as FILE or as --root")
    path = args.file or args.root
    if not path:
        raise CommandError(f"--format {fmt} needs {what}: rcrn parse-eval --format {fmt} "
                           "FILE")
    if args.limit is not None and args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    return path


def _cmd_parse_eval_factual(args: argparse.Namespace) -> int:
    """Score a parser on the scene graphs of a FACTUAL-format CSV."""
    path = _input_file(args, "factual", "the scene-graph CSV")
    items = read_factual(path, args.limit)
    if not items:
        raise CommandError(f"{path}: no caption row")
    parser = _load(args)
    mode = "scene" if getattr(args, "scene", False) else "referring"
    style = getattr(args, "style", None)
    report = evaluate_factual(parser, items, max(args.errors, 0), mode)
    report = {"format": "factual", "file": str(path), "parser": args.parser,
              "options": _options(args.option), "style": style, **report}
    att = report["attributes"]
    rows = [["format", "factual"], ["parser", args.parser], ["mode", mode],
            *([["style", style]] if style else []),
            ["captions", str(report["captions"])],
            ["gold / predicted triples",
             f"{report['gold_triples']} / {report['predicted_triples']}"],
            ["triple precision", f"{100 * report['precision']:.2f}%"],
            ["triple recall", f"{100 * report['recall']:.2f}%"],
            ["triple F1", f"{100 * report['f1']:.2f}%"],
            ["exact relation sets", f"{100 * report['exact_set_rate']:.2f}%"],
            *[[f"missed: {kind}", str(n)] for kind, n in report["missed"].items()],
            *[[f"wrong: {kind}", str(n)] for kind, n in report["wrong"].items()],
            ["attribute precision", f"{100 * att['precision']:.2f}%"],
            ["attribute recall", f"{100 * att['recall']:.2f}%"],
            ["attribute F1", f"{100 * att['f1']:.2f}%"],
            ["parse failures", str(report["parse_failures"])],
            ["sentences/s", f"{report['sentences_per_second']:.0f}"]]
    mistakes = [(e, "; ".join(" | ".join(t) for t in e["gold"]) or "(none)",
                 "; ".join(" | ".join(t) for t in e["predicted"]) or "(none)")
                for e in report.get("errors") or []]
    return _print_report(report, rows, mistakes, args.json)


def _cmd_parse_eval_pairs(args: argparse.Namespace) -> int:
    """Score a parser on minimal caption pairs: the rate of pairs whose graphs align."""
    if args.scene:
        raise CommandError("--scene scores scene graphs: use it with --format factual FILE")
    path = _input_file(args, "pairs", "the file of caption pairs")
    if args.errors < 0:
        raise CommandError(f"--errors must be at least 0, got {args.errors}")
    items = read_pairs(path, args.limit)
    if not items:
        raise CommandError(f"{path}: no caption pair")
    parser = _load(args)
    report = evaluate_pairs(parser, items, max_errors=args.errors)
    report = {"format": "pairs", "file": str(path), "parser": args.parser, **report}
    edits = report["one_relation_edits"]
    rows = [["file", str(path)], ["parser", args.parser], ["pairs", str(report["pairs"])],
            ["aligned", f"{100 * report['aligned_rate']:.2f}% ({report['aligned']})"],
            ["one-relation edits", str(edits["pairs"])],
            ["  aligned", f"{100 * edits['aligned_rate']:.2f}% ({edits['aligned']})"]]
    rows += [[f"{kind.replace('_', ' ')}", f"{report['outcomes'][kind]} "
              f"({edits['outcomes'][kind]} one-relation edits)"]
             for kind in PAIR_KINDS if kind != "aligned"]
    rows += [["parse failures", str(report["parse_failures"])],
             ["sentences/s", f"{report['sentences_per_second']:.0f}"]]
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    lines = _table(["metric", "value"], rows)
    if report.get("errors"):
        lines.append("first pairs that do not align (caption triples / negative triples):")
        for e in report["errors"]:
            lines.append(f"  {e['source']}: {e['kind']}"
                         f"{' (one-relation edit)' if e['one_relation_edit'] else ''}")
            for key, text in (("caption_triples", e["caption"]),
                              ("negative_triples", e["negative_caption"])):
                triples = "; ".join(" | ".join(t) for t in e[key]) or "(none)"
                lines.append(f"    {text!r}: {triples}")
    print("\n".join(lines))
    return 0


def _print_report(report: dict[str, Any], rows: list[list[str]],
                  mistakes: list[tuple[dict[str, Any], str, str]], as_json: bool) -> int:
    """``parse-eval``'s output: the report as JSON, or its table of ``rows`` and the
    ``(error, gold, predicted)`` mistakes."""
    if as_json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    lines = _table(["metric", "value"], rows)
    if mistakes:
        lines.append("first mistakes (gold -> predicted):")
        lines += [f"  {e['source']}: {e['text']!r}: {gold} -> {pred}"
                  for e, gold, pred in mistakes]
    print("\n".join(lines))
    return 0


def cmd_parse_eval(args: argparse.Namespace) -> int:
    """Score a parser on the template captions of VSR or What'sUp, or with ``--format
    factual`` on a FACTUAL-format scene-graph CSV, or with ``--format pairs`` on minimal
    caption pairs."""
    if getattr(args, "format", "template") == "factual":
        return _cmd_parse_eval_factual(args)
    if getattr(args, "format", "template") == "pairs":
        return _cmd_parse_eval_pairs(args)
    if getattr(args, "scene", False):
        raise CommandError("--scene scores scene graphs: use it with --format factual FILE")
    if getattr(args, "file", None):
        raise CommandError(f"unexpected FILE {args.file!r}: template captions are read "
                           f"from --root (FILE is for --format factual or pairs)")
    if not args.benchmark or not args.root:
        raise CommandError("template captions need --benchmark vsr|whatsup and --root "
                           "DIR_OR_FILE (or --format factual FILE)")
    gold = read_captions(args.benchmark, args.root)
    if not gold:
        raise CommandError(f"no caption found under {args.root}")
    parser = _load(args)
    report = evaluate_parser(parser, gold)
    report = {"benchmark": args.benchmark, "root": str(args.root), "parser": args.parser,
              **report}
    rows = [["benchmark", args.benchmark], ["parser", args.parser],
            ["sentences", str(report["sentences"])],
            ["entity accuracy", f"{100 * report['entity_accuracy']:.2f}%"],
            ["relation accuracy", f"{100 * report['relation_accuracy']:.2f}%"],
            ["exact triple accuracy", f"{100 * report['triple_accuracy']:.2f}%"],
            ["parse failures", str(report["parse_failures"])],
            ["sentences/s", f"{report['sentences_per_second']:.0f}"]]
    mistakes = [(e, " | ".join(e["gold"]), " | ".join(e["predicted"]))
                for e in report["errors"][:10]]
    return _print_report(report, rows, mistakes, args.json)


def cmd_parse_style(args: argparse.Namespace) -> int:
    """Learn an annotation style from a FACTUAL-format CSV and write it as JSON."""
    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise CommandError(f"{out} exists; pass --overwrite to replace it")
    if args.limit is not None and args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    if args.threshold is not None and not (args.filter and 0 < args.threshold < 1):
        raise CommandError("--threshold needs --filter and a value between 0 and 1, got "
                           f"{args.threshold}")
    if args.filter_also and not args.filter:
        raise CommandError("--filter-also needs --filter")
    items = read_factual(args.file, args.limit)
    if not items:
        raise CommandError(f"{args.file}: no caption row")
    also = [item for path in args.filter_also for item in read_factual(path)]
    parser = parsers.load(args.parser, **_options(args.option))
    mode = "scene" if args.scene else "referring"
    try:
        style = AnnotationStyle.fit(parser, items, mode, args.min_count, args.share,
                                  source=f"{args.file} ({len(items)} captions, parser "
                                         f"{args.parser}, {mode} mode)",
                                  learn_filter=args.filter, filter_threshold=args.threshold,
                                  filter_also=also)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    out.parent.mkdir(parents=True, exist_ok=True)
    style.save(out)
    counts = style.summary()
    relations = ", ".join(f"{counts['relations'][a]} {a}" for a in ACTIONS)
    attributes = ", ".join(f"{counts['attributes'][a]} {a}" for a in ("keep", "drop"))
    learned = "" if style.filter is None else (
        f", and a relation filter (threshold {style.filter.threshold}, "
        f"{len(style.filter.weights)} feature weights"
        + (f", also fitted on {len(also)} captions of {', '.join(args.filter_also)}"
           if also else "") + ") that decides the drops")
    print(f"wrote {out}: learned from {len(items)} captions, {len(style.relations)} relation "
          f"rules ({relations}) and {len(style.attributes)} attribute rules ({attributes})"
          f"{learned}; use it with\n  rcrn parse-eval --format factual FILE --style {out}")
    return 0


def register(subparsers: Any) -> None:
    """Add ``parse``, ``parse-eval`` and ``parse-style`` to the ``rcrn`` command line."""
    names = ", ".join(b["name"] for b in parsers.available())
    p = subparsers.add_parser(
        "parse", help="parse text into a language scene graph",
        description="Parse each TEXT into a language scene graph (a tree of entity phrases "
                    "and relation phrases rooted at the referent) and print it as a table, "
                    "or with --json as LanguageGraph dicts (one object for one text, an "
                    "array for several; each with its 'warnings').",
        epilog='Examples: rcrn parse "the cup to the left of the plate that is on the table"\n'
               '          rcrn parse --scene "A dog sits on a couch. The dog is brown."',
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("text", nargs="*", metavar="TEXT", help="text to parse")
    p.add_argument("--parser", default=parsers.DEFAULT_PARSER,
                   help=f"parser backend ({names}; default: %(default)s)")
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="backend option, e.g. model=en_core_web_sm (repeatable)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--style", metavar="FILE",
                   help="write relations and attributes in the style of FILE (from rcrn "
                        "parse-style)")
    p.add_argument("--scene", action="store_true",
                   help="parse each TEXT as a whole description (several sentences, one "
                        "scene) into a scene graph: mentions merged across sentences, no "
                        "tree and no referent; --json prints SceneGraph dicts")
    p.add_argument("--list-parsers", action="store_true",
                   help="list the parser backends and whether they are installed")
    p.set_defaults(func=cmd_parse)

    e = subparsers.add_parser(
        "parse-eval",
        help="score a parser on template captions, FACTUAL scene graphs or caption pairs",
        description="Parse every caption of a VSR jsonl file (or folder of split files) or "
                    "of What'sUp Controlled_Images JSON (all caption options) and score the "
                    "graphs against the (subject, relation, object) triple of the caption "
                    "template: entity, relation and exact-triple accuracy, and speed.  With "
                    "--format factual, parse the captions of a scene-graph CSV (columns "
                    "'caption' and 'scene_graph' as '( s , r , o ) , ...') and score "
                    "relation triples (subject head, lemmatised relation, object head) and "
                    "attributes separately: micro precision/recall/F1, exact relation "
                    "sets, and why each missed or wrong triple is so (its pair related by "
                    "another relation, reversed, unrelated or an entity missing; a wrong "
                    "pair related otherwise or not).  With --format pairs, parse both "
                    "captions of every minimal pair "
                    "of a JSON or JSONL file (fields 'caption' and 'negative_caption', one "
                    "relation replaced) and count the pairs whose graphs align: the same "
                    "entity heads and relation structure, and exactly the edited relation "
                    "phrase different.",
        epilog="Examples: rcrn parse-eval --benchmark vsr --root data/vsr/splits/random\n"
               "          rcrn parse-eval --format factual data/factual/random/dev.csv\n"
               "          rcrn parse-eval --format factual paragraphs.csv --scene\n"
               "          rcrn parse-eval --format pairs replace_rel.json --errors 20",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("file", nargs="?", metavar="FILE",
                   help="with --format factual: the scene-graph CSV; with --format pairs: "
                        "the JSON or JSONL file of caption pairs")
    e.add_argument("--format", default="template", choices=["template", "factual", "pairs"],
                   help="template captions (--benchmark, --root), a FACTUAL scene-graph "
                        "CSV or minimal caption pairs (default: %(default)s)")
    e.add_argument("--benchmark", choices=["vsr", "whatsup"],
                   help="the template-caption benchmark (needed without --format factual)")
    e.add_argument("--root", metavar="DIR_OR_FILE",
                   help="a jsonl/JSON file or a folder holding them (template captions)")
    e.add_argument("--limit", type=int, default=None, metavar="N",
                   help="with --format factual or pairs: score only the first N rows or "
                        "pairs")
    e.add_argument("--scene", action="store_true",
                   help="with --format factual: score the parser's scene mode (each caption "
                        "one scene graph, mentions merged across its sentences), for "
                        "captions of several sentences")
    e.add_argument("--errors", type=int, default=10, metavar="K",
                   help="with --format factual: list up to K captions whose relation set "
                        "is wrong; with --format pairs: up to K pairs that do not align "
                        "(default: %(default)s)")
    e.add_argument("--parser", default=parsers.DEFAULT_PARSER,
                   help=f"parser backend ({names}; default: %(default)s)")
    e.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="backend option (repeatable)")
    e.add_argument("--style", metavar="FILE",
                   help="score the parser's graphs written in the annotation style of FILE "
                        "(from rcrn parse-style)")
    e.add_argument("--json", action="store_true", help="print the report as JSON")
    e.set_defaults(func=cmd_parse_eval)

    f = subparsers.add_parser(
        "parse-style",
        help="learn how a scene-graph corpus writes relations and attributes",
        description="Parse every caption of a FACTUAL-format CSV (columns 'caption' and "
                    "'scene_graph'), compare each predicted relation triple with the "
                    "caption's human graph, and learn when the annotators write another "
                    "relation for the same two things (beneath -> under), write it the "
                    "other way round, or leave it out; the same for each predicted "
                    "attribute (kept or left out: 'baseball' in 'a baseball player', "
                    "'many').  With --filter it also learns which relations the "
                    "annotators leave out from each relation's context (the words around "
                    "it, how far its subject is, the caption's length), and that filter "
                    "decides the drops.  The rules are written to --out as "
                    "JSON; --style FILE applies them in rcrn parse and rcrn parse-eval.  "
                    "Fit on a training split and score on another: a style fitted on the "
                    "captions it is scored on measures memory, not the parser.",
        epilog="Example: rcrn parse-style data/factual/length/train.csv --out factual.json\n"
               "         rcrn parse-eval --format factual data/factual/length/test.csv "
               "--style factual.json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    f.add_argument("file", metavar="FILE", help="the scene-graph CSV to learn from")
    f.add_argument("--out", required=True, metavar="STYLE",
                   help="where to write the style (JSON)")
    f.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    f.add_argument("--scene", action="store_true",
                   help="learn from the parser's scene graphs (for captions of several "
                        "sentences) instead of its referring-mode graphs")
    f.add_argument("--min-count", type=int, default=3, metavar="N",
                   help="a key decides only when seen N times (default: %(default)s)")
    f.add_argument("--share", type=float, default=0.5, metavar="P",
                   help="a change needs at least this share of its key's triples or "
                        "attributes (default: %(default)s)")
    f.add_argument("--filter", action="store_true",
                   help="also learn a relation filter (parsers.relation_filter): a "
                        "logistic regression over each relation's context that decides "
                        "which relations are dropped, instead of the drop rules")
    f.add_argument("--threshold", type=float, default=None, metavar="P",
                   help="with --filter: keep a relation from this probability (default: "
                        "the threshold with the best cross-fitted triple F1 on FILE)")
    f.add_argument("--filter-also", action="append", default=[], metavar="CSV",
                   help="with --filter: the filter also learns from the relations of this "
                        "scene-graph CSV's captions as the parser writes them, each labelled "
                        "by its own human graph (another corpus: more examples of what the "
                        "parser gets wrong; repeatable; the threshold is still chosen on "
                        "FILE)")
    f.add_argument("--limit", type=int, default=None, metavar="N",
                   help="learn from the first N rows only")
    f.add_argument("--parser", default=parsers.DEFAULT_PARSER,
                   help=f"parser backend ({names}; default: %(default)s)")
    f.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="backend option (repeatable)")
    f.set_defaults(func=cmd_parse_style)
