"""Output folders that writers replace only where they wrote.

A writer (the synthetic generator, the GITM-MR layout writer) lists every file it writes
in its manifest (``"written"``, paths relative to the root, ``/``-separated).  Before it
writes, :func:`prepare_output` checks the folder: it must be missing, empty (folders
only), or hold nothing but that writer's earlier output, recognised by its manifest or
by the list an interrupted run left (``generating.json``, written before anything
else).  Anything else is refused with the path of one foreign file named, and nothing
is changed.  The earlier output is then removed file by file, as listed; the new
manifest is written last (:func:`finish_output`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rcrn.errors import RcrnError

__all__ = ["ForeignFilesError", "JOURNAL", "files_under", "check_output", "prepare_output",
           "finish_output", "write_json_atomic"]

#: The list of the files a writer is writing (removed when its manifest is written).
JOURNAL = "generating.json"
MANIFEST = "manifest.json"
_TMP = (MANIFEST + ".tmp", JOURNAL + ".tmp")


class ForeignFilesError(RcrnError, FileExistsError):
    """The output folder holds something its writer did not write (or is a file); nothing
    is written there, with or without ``overwrite``."""


def files_under(root: Path) -> list[str]:
    """Every entry under ``root`` that is not a folder (``/``-separated, sorted)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        for name in filenames:
            found.append((rel / name).as_posix())
        for name in dirnames:  # a link to a folder is not walked into: it is an entry
            if (Path(dirpath) / name).is_symlink():
                found.append((rel / name).as_posix())
    return sorted(found)


def write_json_atomic(path: Path, value: Any, indent: int | None = 2) -> None:
    """Write JSON through ``PATH.tmp``, fsync'd, moved into place with ``os.replace``."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=indent, default=str)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None


def _listed(doc: Any) -> set[str] | None:
    files = doc.get("written") if isinstance(doc, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return {f for f in files if f and not f.startswith("/") and ".." not in f.split("/")}


def own_files(root: Path, writer: str, is_ours: Callable[[Any], bool]
              ) -> tuple[set[str], str | None]:
    """The files under ``root`` that ``writer`` wrote (from its manifest and its journal),
    and why a manifest there names none (None when it does, or there is none)."""
    own: set[str] = set()
    why = None
    manifest = root / MANIFEST
    if manifest.exists():
        doc = _read_json(manifest)
        listed = _listed(doc)
        if not is_ours(doc):
            why = f"{manifest} is not a manifest of the {writer}"
        elif listed is None:
            why = (f"{manifest} lists no files it wrote (an older version's output), so "
                   "nothing in the folder is replaced")
        else:
            own |= listed | {MANIFEST}
    journal = root / JOURNAL
    if journal.exists():
        doc = _read_json(journal)
        listed = _listed(doc)
        if isinstance(doc, dict) and doc.get("writer") == writer and listed is not None:
            own |= listed | {JOURNAL}
    if own:
        own |= set(_TMP)
    return own, why


def check_output(root: str | Path, writer: str, is_ours: Callable[[Any], bool],
                 overwrite: bool) -> list[str]:
    """Whether ``writer`` may write into ``root`` (see :func:`prepare_output`); returns
    the files there (all the writer's).  Changes nothing.

    Raises:
        ForeignFilesError: ``root`` is a file, or holds anything the writer did not
            write.
        FileExistsError: ``root`` holds a complete earlier output and ``overwrite`` is
            False.
    """
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise ForeignFilesError(f"{root} is a file, not a folder")
    present = files_under(root) if root.is_dir() else []
    own, why = own_files(root, writer, is_ours)
    foreign = [f for f in present if f not in own]
    if foreign:
        reason = f"; {why}" if why else ""
        raise ForeignFilesError(
            f"{root} holds files the {writer} did not write, e.g. {root / foreign[0]} "
            f"({len(foreign)} in all){reason}: nothing was changed; write into an empty or "
            "new folder")
    manifest = root / MANIFEST
    if manifest.exists() and not overwrite:
        raise FileExistsError(f"{manifest} exists; pass overwrite=True to replace the output "
                              "it lists")
    return present


def prepare_output(root: str | Path, plan: Iterable[str], writer: str,
                   is_ours: Callable[[Any], bool], overwrite: bool) -> None:
    """Make ``root`` ready for a writer that will write ``plan`` (and ``manifest.json``).

    Args:
        root: the output folder (created).
        plan: the files the writer will write, relative to ``root``.
        writer: names the writer in messages and in the journal.
        is_ours: whether a parsed ``manifest.json`` is one of the writer's.
        overwrite: replace a complete earlier output; without it one is refused (an
            interrupted one is replaced either way).

    Raises:
        ForeignFilesError: ``root`` is a file, or holds anything the writer did not
            write (nothing is changed).
        FileExistsError: ``root`` holds a complete earlier output and ``overwrite`` is
            False.
    """
    root = Path(root)
    present = check_output(root, writer, is_ours, overwrite)
    manifest = root / MANIFEST
    root.mkdir(parents=True, exist_ok=True)
    # first the list of all this run may leave behind, then away with the earlier files
    leave = sorted((set(present) - {JOURNAL, *_TMP}) | set(plan))
    write_json_atomic(root / JOURNAL, {"writer": writer, "written": leave})
    manifest.unlink(missing_ok=True)
    for name in present:
        if name not in (JOURNAL, MANIFEST):
            (root / name).unlink(missing_ok=True)
    for name in sorted({str(Path(n).parent.as_posix()) for n in present}, key=len,
                       reverse=True):
        if name not in ("", "."):  # folders the earlier output left empty
            try:
                (root / name).rmdir()
            except OSError:
                pass


def finish_output(root: str | Path, manifest: dict[str, Any], plan: Iterable[str],
                  indent: int | None = 2) -> dict[str, Any]:
    """Write ``manifest`` (with ``"written": plan``) atomically, then drop the journal."""
    root = Path(root)
    manifest["written"] = sorted(plan)
    write_json_atomic(root / MANIFEST, manifest, indent=indent)
    (root / JOURNAL).unlink(missing_ok=True)
    return manifest
