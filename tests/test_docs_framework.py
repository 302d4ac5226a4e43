"""The code of docs/framework.md runs, and prints what the page says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "framework.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_page_has_its_examples():
    assert len(BLOCKS) == 3


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_docs_block_runs(i, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = BLOCKS[i]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"docs/framework.md block {i}", "exec"), {"__name__": "docs"})
    printed = out.getvalue()
    for line in code.splitlines():
        m = re.search(r'print\(f"test accuracy .*# ([0-9.]+)$', line)
        if m:
            assert f"test accuracy {m.group(1)}" in printed
    if "huber" in code:
        import numpy as np

        coef = [float(v) for v in re.findall(r"-?\d+\.\d*", printed)]
        assert len(coef) == 10
        np.testing.assert_allclose(coef, np.arange(10.0), atol=0.35)
