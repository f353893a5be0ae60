"""``rcrn features`` sub-commands: convert detector outputs into a feature store, inspect one."""

from __future__ import annotations

import argparse
import inspect
import json
from typing import Any

from rcrn.errors import CommandError, RcrnError

__all__ = ["register"]

_CONVERT_EPILOG = """examples:
  rcrn features convert --from vinvl predictions.tsv --out stores/vinvl --float16
  rcrn features convert --from oscar features.tsv --out stores/oscar --opt sizes=hw.tsv
  rcrn features convert --from oscar features.tsv --out stores/oscar --opt sizes=hw.tsv \\
      --opt dtype=float16        # a release whose feature bytes are float16
  rcrn features convert --from uniter npz_dir/ --out stores/uniter --opt sizes=images/ \\
      --opt num_bb=36
  rcrn features convert --from gitm-mr data/vinvl_objects --out stores/gitm --float16
  rcrn features convert --from coco instances_val2017.json --out stores/coco \\
      --opt categories=person,dog
"""


def _option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        parsed: Any = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key.strip().replace("-", "_"), parsed


def register(subparsers: Any) -> None:
    """Add ``rcrn features`` (convert, info, formats) to the CLI."""
    parser = subparsers.add_parser(
        "features", help="convert region proposals and features into a fast feature store",
        description="Read detector outputs (VinVL, Oscar, UNITER, bottom-up TSV, GITM-MR, "
                    "SGMN, COCO, GQA, ...) and write or inspect a feature store.",
        epilog="example: rcrn features convert --from vinvl predictions.tsv --out store",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="features_command", metavar="ACTION")

    conv = sub.add_parser("convert", help="write a feature store from any proposal source",
                          description="Convert the output of a detector into a feature store "
                                      "with O(1) random access per image.",
                          epilog=_CONVERT_EPILOG,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    conv.add_argument("--from", dest="source_format", required=True, metavar="FORMAT",
                      help="source format (see `rcrn features formats`)")
    conv.add_argument("input", help="the source file or folder")
    conv.add_argument("--out", required=True, help="the store folder to create")
    conv.add_argument("--float16", action="store_true", help="store features as float16")
    conv.add_argument("--opt", action="append", type=_option, default=[], metavar="KEY=VALUE",
                      help="an option of the source reader (JSON values allowed); repeatable")
    conv.add_argument("--overwrite", action="store_true", help="replace an existing store")
    conv.add_argument("--limit", type=int, default=None, help="convert only the first N images")
    conv.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    conv.set_defaults(func=_convert)

    info = sub.add_parser("info", help="print a store's source, feature size and counts",
                          epilog="example: rcrn features info stores/vinvl")
    info.add_argument("store", help="the store folder")
    info.add_argument("--json", action="store_true", help="print the metadata as JSON")
    info.set_defaults(func=_info)

    formats = sub.add_parser("formats", help="list the source formats",
                             epilog="example: rcrn features formats")
    formats.set_defaults(func=_formats)
    parser.set_defaults(func=lambda args: _help(parser))


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 1


def _open_source(name: str, path: str, options: dict[str, Any]) -> Any:
    import detectors

    try:
        return detectors.load(name, path, **options)
    except RcrnError:  # bad data, a missing package: as they are
        raise
    except KeyError as exc:
        raise CommandError(exc.args[0] if exc.args else str(exc)) from None
    except TypeError as exc:
        factory = detectors.base._REGISTRY.get(name.lower().replace("_", "-"))
        accepted = ""
        if factory is not None:
            params = [p for p in inspect.signature(factory).parameters if p not in ("self", "path")]
            accepted = f"; {name} accepts: {', '.join(params)}"
        raise CommandError(f"bad option for {name}: {exc}{accepted}") from None
    except OSError as exc:
        raise CommandError(_os_message(exc, path)) from None


def _os_message(exc: OSError, path: str) -> str:
    return f"{exc.filename or path}: {exc.strerror or exc}"


def _convert(args: argparse.Namespace) -> int:
    from detectors.store import convert

    if args.limit is not None and args.limit < 1:
        raise CommandError(f"--limit must be at least 1, got {args.limit}")
    options = dict(args.opt)
    source = _open_source(args.source_format, args.input, options)
    info = {"format": args.source_format, "location": args.input, "options": options}
    try:
        meta = convert(source, args.out, float16=args.float16, progress=not args.no_progress,
                       overwrite=args.overwrite, source_info=info, limit=args.limit)
    except OSError as exc:
        raise CommandError(_os_message(exc, args.out)) from None
    print(f"wrote {args.out}: {meta['num_images']} images, {meta['num_boxes']} boxes, "
          f"features {meta['feature_dim']}-d {meta['dtype']}")
    return 0


def _info(args: argparse.Namespace) -> int:
    from detectors.store import FeatureStore

    store = FeatureStore(args.store)
    meta = dict(store.meta)
    meta["bytes"] = store.nbytes()
    if args.json:
        print(json.dumps(meta, indent=1))
        return 0
    src = meta.get("source", {})
    lines = [
        f"store:        {args.store}",
        f"source:       {src.get('format', '?')} {src.get('location', '')}".rstrip(),
        f"options:      {json.dumps(src.get('options', {}))}",
        f"feature dim:  {meta['feature_dim']}" + ("" if meta["has_features"] else " (no features)"),
        f"dtype:        {meta['dtype']}",
        f"images:       {meta['num_images']}",
        f"boxes:        {meta['num_boxes']}",
        f"scores:       {'yes' if meta['has_scores'] else 'no'}",
        f"labels:       {len(meta.get('labels', []))} names" if meta["has_labels"] else
        "labels:       no",
        f"size:         {meta['bytes'] / 2**20:.1f} MiB",
        f"created:      {meta.get('created', '?')}",
    ]
    print("\n".join(lines))
    return 0


def _formats(args: argparse.Namespace) -> int:
    import detectors

    for name, text in detectors.available().items():
        print(f"{name:12s} {text}")
    return 0
