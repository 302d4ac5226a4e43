"""Tests of onlinelearn.datasets: the shipped DNA data and the shared benchmark loaders."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data

from onlinelearn import datasets
from onlinelearn.datasets import (
    DATA_ENV_VAR,
    load_dna,
    load_pmlb,
    load_shared,
    shared_data_dir,
    shared_data_path,
)


@pytest.mark.parametrize(("split", "n"), [("train", 2000), ("test", 1186)])
def test_load_dna_shapes_and_labels(split, n):
    X, y = load_dna(split)
    assert sp.isspmatrix_csr(X)
    assert X.shape == (n, 180)
    assert X.dtype == np.float64
    assert y.dtype.kind == "i"
    assert set(np.unique(y)) == {1, 2, 3}
    assert set(np.unique(X.data)) == {1.0}  # binary features
    assert np.all(np.diff(X.indptr) > 0)


def test_load_dna_content_and_class_balance():
    X, y = load_dna("train")
    # first line of dna.scale: "3 2:1 7:1 12:1 ..."
    assert y[0] == 3
    assert X[0].indices[:3].tolist() == [1, 6, 11]
    # class counts of the LIBSVM dna training file
    assert np.bincount(y).tolist() == [0, 464, 485, 1051]


def test_load_dna_bad_split():
    with pytest.raises(ValueError, match="split"):
        load_dna("validation")


def test_shared_data_dir_env_var(monkeypatch, tmp_path):
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    assert shared_data_dir() == tmp_path
    with pytest.raises(FileNotFoundError, match=DATA_ENV_VAR):
        load_shared("a9a")
    with pytest.raises(FileNotFoundError, match="a9a"):
        shared_data_path("a9a", "test")


def test_shared_data_dir_without_env_var_finds_checkout_sibling(monkeypatch, tmp_path):
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    found = shared_data_dir()
    if found is not None:
        assert found.name == "data" and found.parent.name == "shared"
        assert found.is_dir()
    # an installed (non-checkout) package has no sibling folder
    monkeypatch.setattr(datasets, "__file__", str(tmp_path / "site" / "onlinelearn" / "x.py"))
    assert shared_data_dir() is None
    with pytest.raises(FileNotFoundError, match=DATA_ENV_VAR):
        load_shared("dna")


def test_fake_shared_folder(monkeypatch, tmp_path):
    (tmp_path / "a9a").mkdir()
    with gzip.open(tmp_path / "a9a" / "a9a.t.bz2", "wb") as f:  # content sniffed, not the name
        f.write(b"-1 3:1 122:1\n+1 1:1\n")
    (tmp_path / "pmlb" / "toy").mkdir(parents=True)
    with gzip.open(tmp_path / "pmlb" / "toy" / "toy.tsv.gz", "wt") as f:
        f.write("a\ttarget\tb\n1.5\t2\t3\n4\t0\t6.25\n")
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path))
    X, y = load_shared("a9a", "test")
    assert X.shape == (2, 123)  # the known dimension, not the highest index present
    assert y.tolist() == [-1, 1]
    X, y, names = load_pmlb("toy", return_feature_names=True)
    np.testing.assert_array_equal(X, [[1.5, 3.0], [4.0, 6.25]])
    assert y.tolist() == [2, 0] and y.dtype == np.int64
    assert names == ["a", "b"]
    assert datasets.pmlb_names() == ["toy"]


def test_unknown_names_and_splits():
    with pytest.raises(ValueError, match="unknown shared data set"):
        load_shared("nope")
    with pytest.raises(ValueError, match="no test split"):
        load_shared("w8a", "test")
    with pytest.raises(ValueError, match="split"):
        load_shared("a9a", "dev")


# -- the real shared data (skipped when absent, a failure under CI=true) -----------------------

SHARED_EXPECTED = [
    ("dna", "train", (2000, 180), {1, 2, 3}),
    ("dna", "test", (1186, 180), {1, 2, 3}),
    ("pendigits", "train", (7494, 16), set(range(1, 11))),
    ("pendigits", "test", (3498, 16), set(range(1, 11))),
    ("a9a", "train", (32561, 123), {-1, 1}),
    ("a9a", "test", (16281, 123), {-1, 1}),
    ("a8a", "train", (22696, 123), {-1, 1}),
    ("w8a", "train", (49749, 300), {-1, 1}),
    ("news20", "test", (7532, 56438), set(range(1, 21))),
    ("mnist", "test", (10000, 784), set(range(10))),
]


@pytest.mark.parametrize(("name", "split", "shape", "labels"), SHARED_EXPECTED)
def test_shared_svmlight_sets(name, split, shape, labels):
    require_shared_data(name, split)
    X, y = load_shared(name, split)
    assert X.shape == shape
    assert set(np.unique(y).tolist()) == labels
    assert np.all(np.isfinite(X.data))


def test_shared_dna_equals_shipped_dna():
    require_shared_data("dna")
    X1, y1 = load_shared("dna")
    X2, y2 = load_dna()
    assert (X1 != X2).nnz == 0
    np.testing.assert_array_equal(y1, y2)


def test_shared_a9a_class_balance():
    require_shared_data("a9a")
    _, y = load_shared("a9a")
    assert (np.sum(y == -1), np.sum(y == 1)) == (24720, 7841)


@pytest.mark.parametrize(
    ("name", "shape", "n_classes"),
    [("vowel", (990, 13), 11), ("segmentation", (2310, 19), 7), ("waveform_40", (5000, 40), 3)],
)
def test_shared_pmlb_sets(name, shape, n_classes):
    require_shared_data(f"pmlb/{name}")
    X, y = load_pmlb(name)
    assert X.shape == shape
    assert X.dtype == np.float64
    assert len(np.unique(y)) == n_classes
