"""``stanza``: dependency rules over locally installed Stanza English models.

Stanza produces Universal Dependencies; the extraction rules are those of
:mod:`parsers.depgraph`.  Nothing is downloaded: the models must already be in
the Stanza resources folder (``dir=...``, ``$STANZA_RESOURCES_DIR`` or
``~/stanza_resources``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from parsers.base import (
    BackendUnavailable,
    BaseParser,
    ParseError,
    ParseResult,
    has_words,
    tokenize,
)
from parsers.depgraph import DepToken, graph_from_dependencies

__all__ = ["StanzaParser", "install_hint", "tokens_from_stanza"]


def install_hint(resources_dir: str | Path | None = None) -> str:
    """How to install the Stanza package and its English models (offline use afterwards)."""
    where = f" into {resources_dir}" if resources_dir else ""
    return ("install the package with pip install rcrn[stanza], then download the English "
            f"models once{where} on a machine with network access: python -c \"import stanza; "
            "stanza.download('en'" + (f", model_dir='{resources_dir}'" if resources_dir else "")
            + ")\" (or copy a stanza_resources folder and pass dir=PATH or set "
            "STANZA_RESOURCES_DIR)")


def tokens_from_stanza(doc: Any) -> list[DepToken]:
    """Flatten a Stanza document's sentences into :class:`DepToken` (heads made global)."""
    out: list[DepToken] = []
    for sent in doc.sentences:
        offset = len(out)
        for w in sent.words:
            head = int(w.head) - 1 + offset if int(w.head) > 0 else offset + int(w.id) - 1
            out.append(DepToken(text=w.text, lemma=w.lemma or w.text, pos=w.upos or "X",
                                dep=w.deprel or "dep", head=head))
    return out


class StanzaParser(BaseParser):
    """Dependency-rule parser over a Stanza English pipeline.

    Args:
        dir: Stanza resources folder (default: ``$STANZA_RESOURCES_DIR`` or
            ``~/stanza_resources``).
        lang: language code of the models (default ``en``).
        use_gpu: let Stanza use a GPU if it has one.
    """

    name = "stanza"

    def __init__(self, dir: str | None = None, lang: str = "en", use_gpu: bool = False) -> None:
        super().__init__()
        resources = dir or os.environ.get("STANZA_RESOURCES_DIR") or str(
            Path.home() / "stanza_resources")
        try:
            import stanza
        except ImportError as exc:
            raise BackendUnavailable(
                "the 'stanza' parser needs the stanza package, which is not installed: "
                + install_hint(resources)) from exc
        if not (Path(resources) / lang).is_dir():
            raise BackendUnavailable(
                f"no Stanza models for {lang!r} under {resources}: " + install_hint(resources))
        try:
            self.nlp = stanza.Pipeline(lang=lang, dir=resources,
                                       processors="tokenize,pos,lemma,depparse",
                                       download_method=None, use_gpu=use_gpu, verbose=False)
        except Exception as exc:  # stanza raises several types for missing or broken models
            raise BackendUnavailable(
                f"Stanza could not load its {lang!r} models from {resources} ({exc}): "
                + install_hint(resources)) from exc

    def analyse(self, text: str) -> ParseResult:
        if not isinstance(text, str) or not has_words(tokenize(text)):
            raise ParseError(f"nothing to parse in {str(text)[:60]!r}: the text holds no word")
        tokens = tokens_from_stanza(self.nlp(text))
        if not tokens:
            raise ParseError(f"nothing to parse in {text[:60]!r}: the text holds no word")
        return graph_from_dependencies(tokens, text)
