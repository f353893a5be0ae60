"""``sng``: SceneGraphParser (``sng_parser``) output converted to a language graph.

SceneGraphParser returns ``{'entities': [...], 'relations': [...]}`` (see
``FORMATS.md``): entities carry a token range (``span_bounds``) into spaCy's
tokenisation, relations only entity indices and their words.
:func:`graph_from_sng` turns such a dict into a tree:

* tokens are spaCy's when the parser hands back its document, else the
  toolkit's tokenisation of the text; an entity's span is its ``span_bounds``
  when they agree with its words, else the first place its words occur;
* a relation is located as its words between (or, failing that, anywhere
  around) its subject and object; not found, it gets an empty span at the
  object with a warning;
* the root is the entity that starts first in the text; relations that would
  close a cycle or repeat an edge are dropped, and entities no relation reaches
  are attached to the closest earlier entity – each with a warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parsers.base import (
    BackendUnavailable,
    BaseParser,
    GraphBuilder,
    ParseError,
    ParseResult,
    has_words,
    single_entity_graph,
    tokenize,
)

__all__ = ["SngParser", "graph_from_sng"]


def _find(words: list[str], phrase: list[str], lo: int = 0, hi: int | None = None) -> int:
    hi = len(words) if hi is None else hi
    m = len(phrase)
    if m == 0:
        return -1
    for k in range(max(lo, 0), hi - m + 1):
        if words[k:k + m] == phrase:
            return k
    return -1


def graph_from_sng(text: str, sng: Mapping[str, Any],
                   tokens: Sequence[str] | None = None) -> ParseResult:
    """Convert SceneGraphParser output into a tree-shaped graph (see the module docstring).

    Args:
        text: the parsed text.
        sng: SceneGraphParser's output dict.
        tokens: the tokens its ``span_bounds`` refer to (spaCy's); default: the
            toolkit's tokenisation of ``text``.

    Raises:
        ParseError: the dict is not in SceneGraphParser's format, or the text holds no word.
    """
    tokens = list(tokens) if tokens is not None else tokenize(text)
    if not has_words(tokens):
        raise ParseError(f"nothing to parse in {text[:60]!r}: the text holds no word")
    if not isinstance(sng, Mapping) or not isinstance(sng.get("entities", []), list) \
            or not isinstance(sng.get("relations", []), list):
        raise ParseError("not SceneGraphParser output: expected a dict with lists "
                         "'entities' and 'relations'")
    lw = [t.lower() for t in tokens]
    builder = GraphBuilder(tokens, text)
    warn = builder.warnings.append
    index_map: dict[int, int] = {}
    placed = []
    for k, ent in enumerate(sng.get("entities", [])):
        if not isinstance(ent, Mapping):
            raise ParseError(f"SceneGraphParser entity {k} is not a dict")
        phrase = str(ent.get("span", "")).lower().split()
        head = str(ent.get("head", "") or (phrase[-1] if phrase else ""))
        bounds = ent.get("span_bounds")
        start = end = -1
        if isinstance(bounds, (list, tuple)) and len(bounds) == 2:
            b0, b1 = int(bounds[0]), int(bounds[1])
            if 0 <= b0 < b1 <= len(tokens) and (not phrase or lw[b0:b1] == phrase):
                start, end = b0, b1
        if start < 0 and phrase:
            at = _find(lw, phrase)
            if at >= 0:
                start, end = at, at + len(phrase)
        if start < 0 and head:
            at = _find(lw, head.lower().split())
            if at >= 0:
                start, end = at, at + len(head.split())
        if start < 0:
            warn(f"entity {k} {ent.get('span', '')!r} not found in the text; left out")
            continue
        mods = [str(m.get("span", "")) for m in ent.get("modifiers", [])
                if isinstance(m, Mapping) and m.get("dep") != "det" and m.get("span")]
        placed.append((start, end, head, mods, k))
    if not placed:
        raise ParseError(f"SceneGraphParser found no entity in {text[:60]!r}")
    for start, end, head, mods, k in placed:
        index_map[k] = builder.add_entity(start, end, head=head, modifiers=mods)
    for r, rel in enumerate(sng.get("relations", [])):
        if not isinstance(rel, Mapping):
            raise ParseError(f"SceneGraphParser relation {r} is not a dict")
        try:
            s_idx, o_idx = int(rel["subject"]), int(rel["object"])
        except (KeyError, TypeError, ValueError):
            raise ParseError(f"SceneGraphParser relation {r} lacks integer 'subject' and "
                             f"'object'") from None
        words = str(rel.get("relation", "")).lower().split()
        if s_idx not in index_map or o_idx not in index_map:
            warn(f"relation {r} {' '.join(words)!r} refers to a missing entity; dropped")
            continue
        s, o = index_map[s_idx], index_map[o_idx]
        if s == o:
            warn(f"relation {r} {' '.join(words)!r} relates an entity to itself; dropped")
            continue
        ss, os_ = builder.entities[s].span, builder.entities[o].span
        lo, hi = min(ss[1], os_[1]), max(ss[0], os_[0])
        at = _find(lw, words, lo, hi)
        if at < 0:
            at = _find(lw, words)
        if at < 0:
            warn(f"relation {r} {' '.join(words)!r} not found in the text; given an empty span")
            builder.add_relation(s, o, os_[0], os_[0], text=" ".join(words))
        else:
            builder.add_relation(s, o, at, at + len(words))
    root = min(range(len(builder.entities)), key=lambda i: builder.entities[i].span[0])
    return ParseResult(builder.build(root), builder.warnings)


class SngParser(BaseParser):
    """Runs SceneGraphParser and converts its output with :func:`graph_from_sng`.

    Args:
        model: the spaCy pipeline SceneGraphParser loads (default: its own default,
            ``en_core_web_sm``).
    """

    name = "sng"

    def __init__(self, model: str | None = None) -> None:
        super().__init__()
        try:
            import sng_parser
        except ImportError as exc:
            raise BackendUnavailable(
                "the 'sng' parser needs SceneGraphParser (import sng_parser) and spaCy, "
                "which are not installed: pip install rcrn[sng]  (then a spaCy pipeline, e.g. "
                "python -m spacy download en_core_web_sm)") from exc
        kwargs = {"model": model} if model else {}
        try:
            self._parser = sng_parser.Parser("spacy", **kwargs)
        except (ImportError, OSError) as exc:
            raise BackendUnavailable(
                f"SceneGraphParser could not load its spaCy pipeline "
                f"({model or 'en_core_web_sm'}): {exc}. Install one, e.g. python -m spacy "
                f"download en_core_web_sm, or pass model=NAME") from exc

    def analyse(self, text: str) -> ParseResult:
        if not isinstance(text, str) or not has_words(tokenize(text)):
            raise ParseError(f"nothing to parse in {str(text)[:60]!r}: the text holds no word")
        out = self._parser.parse(text, return_doc=True)
        if isinstance(out, tuple):
            sng, doc = out
            tokens = [t.text for t in doc]
        else:
            sng, tokens = out, None
        if not sng.get("entities"):
            tokens = tokens or tokenize(text)
            return ParseResult(single_entity_graph(list(tokens), text),
                               ["SceneGraphParser found no entity; the whole text is one "
                                "entity"])
        return graph_from_sng(text, sng, tokens)
