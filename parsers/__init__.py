"""Language scene graphs from text: parser backends, readers of shipped parses, scoring.

Every backend turns a text into an :class:`rcrn.structures.LanguageGraph` (a tree
of entity phrases joined by relation phrases, rooted at the referent)::

    import parsers
    parser = parsers.load("rule")              # the default: pure Python, no model
    graph = parser.parse("the cup to the left of the plate that is on the table")
    result = parser.analyse("...")             # graph plus warnings

Backends (``parsers.available()`` tells which are installed):

* ``rule`` – deterministic, spatial-aware rules; no dependency (the default);
* ``spacy`` – dependency rules over any installed spaCy pipeline (``model=...``);
* ``sng`` – SceneGraphParser's output converted to a tree;
* ``stanza`` – dependency rules over locally installed Stanza English models.

A whole description of a scene in several sentences parses to a
:class:`SceneGraph` instead (``parser.parse(text, mode="scene")`` or
``parser.parse_scene(text)``): no tree and no referent; its entities are merged across
sentences by coreference (``A dog sits on a couch. The dog is brown.``: one dog), its
relations and attributes come from every sentence (:mod:`parsers.scene`,
:mod:`parsers.coreference`).  Every backend has this mode.

``parse`` raises :class:`ParseError` for text without any word; otherwise every
backend returns a valid tree and reports what it had to guess in
``ParseResult.warnings`` / ``parser.last_warnings``.  Loading a backend whose
package or model is missing raises :class:`BackendUnavailable`, whose message
says what to install.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from parsers.base import (
    BackendUnavailable,
    BaseParser,
    GraphBuilder,
    ParseError,
    Parser,
    ParseResult,
    split_sentences,
    tokenize,
)
from parsers.scene import SceneEntity, SceneGraph, SceneRelation
from rcrn.errors import RcrnError

__all__ = [
    "BackendUnavailable",
    "BaseParser",
    "GraphBuilder",
    "ParseError",
    "ParseResult",
    "Parser",
    "SceneEntity",
    "SceneGraph",
    "SceneRelation",
    "UnknownParser",
    "available",
    "load",
    "register",
    "split_sentences",
    "tokenize",
    "DEFAULT_PARSER",
]

DEFAULT_PARSER = "rule"


class UnknownParser(RcrnError, ValueError):
    """No backend is registered under the requested name."""


@dataclass(frozen=True)
class _Backend:
    name: str
    factory: str | Callable[..., Any]
    requires: tuple[str, ...]
    install: str
    description: str


_REGISTRY: dict[str, _Backend] = {}


def register(name: str, factory: str | Callable[..., Any], requires: tuple[str, ...] = (),
             install: str = "", description: str = "") -> None:
    """Register a parser backend.

    Args:
        name: the name ``load`` accepts.
        factory: a callable taking the options as keyword arguments, or
            ``"module:Class"`` imported only when the backend is loaded.
        requires: importable module names the backend needs.
        install: how to install what it needs (shown when something is missing).
        description: one line for ``available()``.
    """
    _REGISTRY[name] = _Backend(name, factory, tuple(requires), install, description)


register("rule", "parsers.rule:RuleParser", (), "nothing to install",
         "deterministic spatial-aware rules, pure Python (default)")
register("spacy", "parsers.spacy_backend:SpacyParser", ("spacy",), "pip install rcrn[spacy]",
         "dependency rules over an installed spaCy pipeline (option model=NAME)")
register("sng", "parsers.sng:SngParser", ("sng_parser", "spacy"), "pip install rcrn[sng]",
         "SceneGraphParser output converted to a tree (option model=NAME)")
register("stanza", "parsers.stanza_backend:StanzaParser", ("stanza",),
         "pip install rcrn[stanza]",
         "dependency rules over locally installed Stanza English models (option dir=PATH)")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def available() -> list[dict[str, Any]]:
    """Every registered backend with whether its packages are installed.

    Returns:
        One dict per backend: ``name``, ``installed`` (bool), ``missing`` (module
        names not found), ``install`` (how to get them) and ``description``.
        A backend may still need a model at load time (spaCy pipeline, Stanza
        resources); ``load`` says so when it is missing.
    """
    out = []
    for b in _REGISTRY.values():
        missing = [m for m in b.requires if not _installed(m)]
        out.append({"name": b.name, "installed": not missing, "missing": missing,
                    "install": b.install, "description": b.description})
    return out


def load(name: str = DEFAULT_PARSER, **options: Any) -> Any:
    """Instantiate the backend ``name`` with ``options``.

    Raises:
        UnknownParser: no backend of that name.
        BackendUnavailable: its package or model is not installed (the message
            says how to install it).
    """
    if name not in _REGISTRY:
        raise UnknownParser(f"unknown parser {name!r}; choose one of "
                            f"{', '.join(sorted(_REGISTRY))}")
    backend = _REGISTRY[name]
    factory = backend.factory
    if isinstance(factory, str):
        module_name, _, attr = factory.partition(":")
        factory = getattr(importlib.import_module(module_name), attr)
    try:
        inspect.signature(factory).bind(**options)
    except TypeError as exc:
        raise UnknownParser(f"parser {name!r} does not accept the options {sorted(options)} "
                            f"({exc})") from exc
    return factory(**options)
