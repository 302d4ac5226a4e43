"""Test helper for the shared benchmark data (see ``onlinelearn.datasets.shared_data_dir``).

``require_shared_data(name)`` skips the calling test when the data is missing, except under
continuous integration (environment variable ``CI=true``), where missing data is a failure.
"""

from __future__ import annotations

import os

import pytest

from onlinelearn.datasets import SHARED_SETS, shared_data_path


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_shared_data(name: str, split: str = "train"):
    """Return the path of a shared data file, or skip (fail on CI) if it is missing.

    ``name`` is a key of ``SHARED_SETS`` or ``'pmlb/<set>'``.
    """
    if not name.startswith("pmlb/") and name not in SHARED_SETS:
        raise ValueError(f"unknown shared data set {name!r}")  # a bug in the test itself
    try:
        return shared_data_path(name, split)
    except FileNotFoundError as exc:
        reason = f"shared data {name!r} ({split}) not available: {exc}"
        if _on_ci():
            pytest.fail(f"{reason} [CI=true: missing shared data is an error]")
        pytest.skip(reason)


def require_shared_file(relpath: str):
    """Path of ``relpath`` under the shared data folder (e.g. ``'cora/cora.edges.xz'``), or skip
    (fail on CI) when it is missing. For data sets that ``SHARED_SETS`` does not name."""
    from onlinelearn.datasets import shared_data_dir

    root = shared_data_dir()
    path = None if root is None else root / relpath
    exc_text = "no shared data folder found" if root is None else f"{path} does not exist"
    if path is None or not path.exists():
        reason = f"shared data file {relpath!r} not available: {exc_text}"
        if _on_ci():
            pytest.fail(f"{reason} [CI=true: missing shared data is an error]")
        pytest.skip(reason)
    return path


def texture_regression(n):
    """The first n rows of PMLB texture as a regression set: the standardised features but
    A1, and A1 standardised as the target (the regression tests' real data)."""
    import gzip

    import numpy as np

    path = require_shared_data("pmlb/texture")
    with gzip.open(path, "rt") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        table = np.loadtxt(fh, delimiter="\t", dtype=np.float64)[:n]
    y = table[:, header.index("A1")]
    X = table[:, [j for j, h in enumerate(header) if h not in ("A1", "target")]]
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    return np.ascontiguousarray(X), (y - y.mean()) / y.std()
