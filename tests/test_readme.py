"""The README's Python examples run as written, in order, as one session (a later
example may use what an earlier one made)."""

from __future__ import annotations

import re
from pathlib import Path

import torch

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_python_examples():
    assert BLOCKS


def test_readme_python_examples_run(capsys):
    torch.manual_seed(0)
    namespace: dict = {}
    for index, block in enumerate(BLOCKS, 1):
        exec(compile(block, f"README.md python example {index}", "exec"), namespace)
        assert capsys.readouterr().out.strip(), index  # each prints what it computed
