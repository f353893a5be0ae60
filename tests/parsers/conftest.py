"""Fixtures shared by the parser tests."""

from __future__ import annotations

import importlib.util

import pytest

import parsers
from parsers.base import BackendUnavailable


@pytest.fixture(scope="session")
def spacy_parser():
    """The ``spacy`` backend with the installed pipeline (skips without one)."""
    if importlib.util.find_spec("spacy") is None:
        pytest.skip("spaCy is not installed")
    try:
        return parsers.load("spacy")
    except BackendUnavailable as exc:
        pytest.skip(f"no spaCy pipeline: {exc}")


@pytest.fixture(scope="session")
def rule():
    """The ``rule`` backend."""
    return parsers.load("rule")


def _head_triples(graph):
    ents = graph.entities
    return {(ents[r.subject].head, r.text, ents[r.object].head) for r in graph.relations}


@pytest.fixture(scope="session")
def triples_of():
    """``(subject head, relation text, object head)`` of every relation of a graph."""
    return _head_triples
