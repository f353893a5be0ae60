"""The package layers, read from the import statements of every module (AST, nothing run).

* The core (``rcrn`` outside the application layer ``rcrn.cli``) is benchmark-agnostic: it
  imports no adapter package (``parsers``, ``detectors``, ``benchmarks``).
* The adapters may use the core but not the application layer, which uses them all.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ("parsers", "detectors", "benchmarks")
APPLICATION = "rcrn.cli"


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str, module: str, package: bool = False) -> list[tuple[int, str]]:
    """``(line, imported module)`` of every import statement, relative ones resolved
    (``package``: ``module`` is a package's ``__init__``, so ``.`` is the module itself)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                here = parts if package else parts[:-1]
                anchor = here[:len(here) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
    return sorted(found)


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def violations(module: str, found: list[tuple[int, str]]) -> list[str]:
    bad = []
    core = _within(module, "rcrn") and not _within(module, APPLICATION)
    adapter = any(_within(module, a) for a in ADAPTERS)
    for line, name in found:
        if core and any(_within(name, a) for a in ADAPTERS):
            bad.append(f"{module}:{line} (core) imports the adapter {name}")
        if adapter and _within(name, APPLICATION):
            bad.append(f"{module}:{line} (adapter) imports the application layer {name}")
    return bad


def test_the_scanner_finds_each_kind_of_import() -> None:
    source = ("import benchmarks.vsr\nfrom detectors import store\n"
              "def f():\n    from parsers.rule import RuleParser\n"
              "from . import x\nfrom ..cli import main\n")
    assert imports(source, "rcrn.engine.trainer") == [
        (1, "benchmarks.vsr"), (2, "detectors"), (4, "parsers.rule"), (5, "rcrn.engine"),
        (6, "rcrn.cli")]
    assert len(violations("rcrn.engine.trainer", imports(source, "rcrn.engine.trainer"))) == 3
    assert violations("rcrn.cli.commands", imports(source, "rcrn.cli.commands")) == []
    # in a package's __init__, "." is the package itself
    assert imports("from . import x\nfrom .. import y\n", "rcrn.cli", package=True) == [
        (1, "rcrn.cli"), (2, "rcrn")]
    assert violations("benchmarks.vsr", [(3, "rcrn.cli.commands")]) == [
        "benchmarks.vsr:3 (adapter) imports the application layer rcrn.cli.commands"]
    assert violations("benchmarks.vsr", [(3, "rcrn.engine.schema")]) == []


def test_the_core_imports_no_adapter_and_no_adapter_imports_the_application_layer() -> None:
    bad, seen = [], 0
    for package in ("rcrn", *ADAPTERS):
        for path in sorted((ROOT / package).rglob("*.py")):
            module = _module(path)
            source = path.read_text(encoding="utf-8")
            bad += violations(module, imports(source, module, path.name == "__init__.py"))
            seen += 1
    assert seen > 100, seen
    assert not bad, "\n".join(bad)
