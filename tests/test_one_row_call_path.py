"""A one-row ``partial_fit`` reaches the compiled step through at most 5 files of the package.

Counted with ``sys.setprofile``: the distinct files of ``onlinelearn`` whose functions are
entered during one ``partial_fit`` call of one dense row, on a fitted model (the compiled
step's own file counts too: numba reports the call of a compiled function to a profiler as
the call of its Python function)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import onlinelearn

MAX_FILES = 5


def _files_entered(call) -> list[str]:
    root = str(Path(onlinelearn.__file__).parent) + "/"
    files: list[str] = []

    def profile(frame, event, arg):
        name = frame.f_code.co_filename
        if event == "call" and name.startswith(root) and name[len(root) :] not in files:
            files.append(name[len(root) :])

    before = sys.getprofile()
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(before)
    return files


@pytest.mark.parametrize("name", ["PassiveAggressiveClassifier", "Perceptron", "COPA"])
def test_one_dense_row_partial_fit_enters_few_files(name):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 9))
    y = np.arange(30) % 3
    est = getattr(onlinelearn, name)().fit(X, y)
    row, label = X[4:5].copy(), y[4:5].copy()
    est.partial_fit(row, label)  # compiled and warm
    t = est.t_
    files = _files_entered(lambda: est.partial_fit(row, label))
    assert est.t_ == t + 1  # the row was learned
    assert files  # the profile saw the call
    assert len(files) <= MAX_FILES, files
