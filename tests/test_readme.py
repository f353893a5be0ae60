"""The README's and the docs pages' Python examples run as written, and their links resolve.

The README's examples run in order as one session (a later example may use what an
earlier one made). Each page under docs/ runs in its own namespace, after the README's
examples: its examples continue the README's tour (they say so where they use it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
MAX_README_LINES = 130

_PYTHON = re.compile(r"```python\n(.*?)```", re.S)
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def python_blocks(page: Path) -> list[str]:
    return _PYTHON.findall(page.read_text(encoding="utf-8"))


def run_blocks(page: Path, namespace: dict, capsys: pytest.CaptureFixture) -> None:
    for index, block in enumerate(python_blocks(page), 1):
        name = f"{page.relative_to(ROOT)} python example {index}"
        exec(compile(block, name, "exec"), namespace)
        assert capsys.readouterr().out.strip(), name  # each prints what it computed


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m) for m in re.findall(r"^#{1,6} +(.+?) *#*$", text, re.M)}


def relative_links(page: Path) -> list[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans hold no links
    links = [a or b for a, b in _LINK.findall(text)]
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


def test_the_readme_has_python_examples():
    assert python_blocks(README)


def test_readme_python_examples_run(capsys):
    torch.manual_seed(0)
    run_blocks(README, {}, capsys)


@pytest.mark.parametrize("page", [p for p in DOCS if python_blocks(p)], ids=lambda p: p.name)
def test_docs_python_examples_run(page, capsys):
    torch.manual_seed(0)
    namespace: dict = {}
    run_blocks(README, namespace, capsys)  # the tour the pages continue
    run_blocks(page, namespace, capsys)


def test_the_docs_pages_exist():
    assert DOCS


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_existing_files(page):
    broken = []
    for link in relative_links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no file {target}")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{link}: no heading #{anchor} in {target.relative_to(ROOT)}")
    assert not broken, broken


def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, len(lines)
