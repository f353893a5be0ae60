"""Speed of a parser backend on VSR captions and on paragraphs, printed as JSON.

Usage::

    python scripts/bench_parser.py [--parser rule] [--root PATH] [--sentences 20000]
                                   [--paragraphs 500] [--paragraph-sentences 20]

``--root`` is a VSR jsonl file or a folder of them (default: the shared VSR
samples next to the repository, ``../shared/samples/vsr``); the captions are
repeated until about ``--sentences`` sentences and parsed with ``parse_many``
on one core.  Without any VSR file, template captions built from the relation
lexicon are used instead.  Paragraphs join ``--paragraph-sentences`` consecutive
captions (about 140 words of VSR captions) and are parsed in scene mode (``parse_many(...,
mode="scene")``); ``--paragraphs 0`` skips them.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import parsers  # noqa: E402
from parsers.evaluate import read_vsr_captions  # noqa: E402
from parsers.lexicon import VSR_RELATIONS  # noqa: E402
from rcrn.errors import RcrnError  # noqa: E402

DEFAULT_ROOT = REPO / ".." / "shared" / "samples" / "vsr"


def captions(root: Path | None) -> tuple[list[str], str]:
    path = root or DEFAULT_ROOT
    if path.exists():
        try:
            return [t.text for t in read_vsr_captions(path)], str(path.resolve())
        except RcrnError as exc:
            raise SystemExit(f"bench_parser: {exc}") from exc
    if root is not None:
        raise SystemExit(f"bench_parser: {root} does not exist")
    nouns = ["cat", "dog", "teddy bear", "laptop", "hair drier", "bench"]
    texts = [f"The {nouns[i % 6]} is {rel} the {nouns[(i + 1) % 6]}."
             for i, rel in enumerate(VSR_RELATIONS)]
    return texts, "template captions from the VSR relation list"


def paragraph_speed(parser, texts: list[str], count: int, size: int) -> dict:
    """Scene-mode speed on ``count`` paragraphs of ``size`` consecutive captions each."""
    sentences = [t if t.rstrip().endswith((".", "!", "?")) else t.rstrip() + "."
                 for t in texts]
    paragraphs = [" ".join(sentences[(k * size + j) % len(sentences)] for j in range(size))
                  for k in range(count)]
    parser.parse_many(paragraphs[:10], mode="scene")  # warm-up
    t0 = time.perf_counter()
    scenes = parser.parse_many(paragraphs, mode="scene")
    seconds = time.perf_counter() - t0
    return {
        "paragraphs": count, "words_per_paragraph": round(
            sum(len(p.split()) for p in paragraphs) / count, 1),
        "paragraph_seconds": round(seconds, 4),
        "paragraphs_per_second": round(count / seconds, 1),
        "relations_per_paragraph": round(sum(len(g.relations) for g in scenes) / count, 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parser", default="rule")
    ap.add_argument("--root", type=Path, default=None, help="VSR jsonl file or folder")
    ap.add_argument("--sentences", type=int, default=20000)
    ap.add_argument("--paragraphs", type=int, default=500,
                    help="paragraphs to parse in scene mode (0: none)")
    ap.add_argument("--paragraph-sentences", type=int, default=20,
                    help="captions joined into one paragraph")
    args = ap.parse_args(argv)
    if args.paragraph_sentences < 1:
        raise SystemExit("bench_parser: --paragraph-sentences must be at least 1")
    texts, source = captions(args.root)
    if not texts:
        raise SystemExit("bench_parser: no caption to parse")
    reps = max(1, round(args.sentences / len(texts)))
    batch = texts * reps
    parser = parsers.load(args.parser)
    parser.parse_many(texts)  # warm-up
    t0 = time.perf_counter()
    graphs = parser.parse_many(batch)
    seconds = time.perf_counter() - t0
    report = {
        "parser": args.parser, "source": source, "unique_captions": len(texts),
        "sentences": len(batch), "seconds": round(seconds, 4),
        "sentences_per_second": round(len(batch) / seconds, 1),
        "relations_per_sentence": round(sum(g.num_relations for g in graphs) / len(graphs), 3),
    }
    if args.paragraphs > 0:
        report.update(paragraph_speed(parser, texts, args.paragraphs, args.paragraph_sentences))
    report["python"] = platform.python_version()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
