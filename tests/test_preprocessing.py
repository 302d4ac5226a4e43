"""OnlineStandardScaler: running means and variances against numpy's over all rows and
against scikit-learn's StandardScaler.partial_fit, batches against rows (Welford against Chan's
merge) within a rounding tolerance derived from the computation, CSR scaled without centering
(zeros counted, sparsity kept), dict rows with River's conventions, the scikit-learn contract,
pipelines in front of our learners, and bad input refused with the scaler unchanged."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from onlinelearn.preprocessing import OnlineStandardScaler

U = np.finfo(np.float64).eps / 2  # unit roundoff


def _tol(X):
    """Rounding bounds of a running mean and variance over the n rows of X: every one of the
    n updates (Welford's or a merge) rounds a handful of operations on numbers no larger than
    max|x| (the mean) or max|x|**2 (the squared deviations, the merge's correction), each with
    relative error U, and the errors add: |error| <= c n U max|x| (mean), c n U max|x|**2
    (variance), with c = 8 covering the operations of one update."""
    A = abs(X).max(axis=0).toarray().ravel() if sp.issparse(X) else np.abs(X).max(axis=0)
    n = X.shape[0]
    return 8 * n * U * A + 1e-300, 8 * n * U * A**2 + 1e-300


def _data(seed, n=400, d=6, sparse=False):
    """Columns of very different offsets and scales, one constant column, a few zeros."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-3, 3, d) + 10.0 ** rng.uniform(-2, 4, d)
    X[rng.random((n, d)) < 0.3] = 0.0
    X[:, 0] = 3.5
    return sp.csr_matrix(X) if sparse else X


def _splits(seed, n):
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, n), rng.integers(1, 12), replace=False))
    return np.split(np.arange(n), cuts)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_batches_give_numpys_mean_and_variance(seed, sparse):
    X = _data(seed, sparse=sparse)
    D = X.toarray() if sparse else X
    s = OnlineStandardScaler()
    for rows in _splits(seed, X.shape[0]):
        s.partial_fit(X[rows])
    tol_mean, tol_var = _tol(X)
    assert s.n_samples_seen_ == X.shape[0]
    assert np.all(np.abs(s.mean_ - D.mean(0)) <= tol_mean)
    assert np.all(np.abs(s.var_ - D.var(0)) <= tol_var)
    np.testing.assert_array_equal(s.scale_, np.where(D.var(0) > 0, np.sqrt(s.var_), 1.0))
    assert s.scale_[0] == 1.0 and s.var_[0] == 0.0  # the constant column: scale 1
    whole = OnlineStandardScaler().fit(X)
    assert np.all(np.abs(whole.mean_ - s.mean_) <= tol_mean)
    assert np.all(np.abs(whole.var_ - s.var_) <= tol_var)


@pytest.mark.parametrize("seed", range(8))
def test_batches_equal_rows_one_by_one(seed):
    """Chan's merge of batches against Welford's row updates (learn_one on the same rows, and
    partial_fit one row at a time), within the rounding bound."""
    X = _data(seed, n=300)
    batched = OnlineStandardScaler()
    for rows in _splits(seed + 100, X.shape[0]):
        batched.partial_fit(X[rows])
    by_row, dict_rows = OnlineStandardScaler(), OnlineStandardScaler()
    for x in X:
        by_row.partial_fit(x[None, :])
        dict_rows.learn_one(dict(enumerate(x)))
    tol_mean, tol_var = _tol(X)
    for other_mean, other_var in (
        (by_row.mean_, by_row.var_),
        (np.array([dict_rows.means_[j] for j in range(X.shape[1])]),
         np.array([dict_rows.m2_[j] / dict_rows.counts_[j] for j in range(X.shape[1])])),
    ):  # fmt: skip
        assert np.all(np.abs(batched.mean_ - other_mean) <= tol_mean)
        assert np.all(np.abs(batched.var_ - other_var) <= tol_var)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_as_scikit_learns_standard_scaler_partial_fit(seed, sparse):
    X = _data(seed, sparse=sparse)
    ours, theirs = OnlineStandardScaler(), StandardScaler(with_mean=not sparse)
    for rows in _splits(seed, X.shape[0]):
        ours.partial_fit(X[rows])
        theirs.partial_fit(X[rows])
    tol_mean, tol_var = _tol(X)
    assert ours.n_samples_seen_ == theirs.n_samples_seen_
    assert np.all(np.abs(ours.var_ - theirs.var_) <= 2 * tol_var)
    if not sparse:
        assert np.all(np.abs(ours.mean_ - theirs.mean_) <= 2 * tol_mean)
    T, R = ours.transform(X), theirs.transform(X)
    assert sp.issparse(T) == sparse
    T, R = (T.toarray(), R.toarray()) if sparse else (T, R)
    np.testing.assert_allclose(T, R, rtol=1e-9, atol=1e-9)


def test_csr_is_scaled_without_centering_and_keeps_its_sparsity():
    X = _data(1, sparse=True)
    s = OnlineStandardScaler().fit(X)
    T = s.transform(X)
    assert sp.isspmatrix_csr(T) or sp.issparse(T)
    np.testing.assert_array_equal(T.indices, X.indices)
    np.testing.assert_array_equal(T.indptr, X.indptr)
    np.testing.assert_allclose(T.toarray(), X.toarray() / s.scale_, rtol=1e-15)
    np.testing.assert_allclose(s.inverse_transform(T).toarray(), X.toarray(), rtol=1e-14)
    dense = OnlineStandardScaler().fit(X.toarray())  # zeros count: the same statistics
    np.testing.assert_allclose(dense.var_, s.var_, rtol=1e-12)


def test_dense_transform_and_its_inverse():
    X = _data(2)
    s = OnlineStandardScaler().fit(X)
    T = s.transform(X)
    np.testing.assert_allclose(T.mean(0), 0.0, atol=1e-9)
    np.testing.assert_allclose(T[:, 1:].std(0), 1.0, rtol=1e-9)
    np.testing.assert_array_equal(T[:, 0], 0.0)  # constant: centered, divided by 1
    np.testing.assert_allclose(s.inverse_transform(T), X, rtol=1e-12, atol=1e-9)
    raw = OnlineStandardScaler(with_mean=False, with_std=False).fit(X)
    np.testing.assert_array_equal(raw.transform(X), X)
    np.testing.assert_allclose(
        OnlineStandardScaler(with_mean=False).fit(X).transform(X), X / s.scale_, rtol=1e-15
    )


def test_dict_rows_start_a_feature_when_it_first_appears():
    """Features of their own counts (River's convention): a feature's statistics are those of
    the rows it appears in; a feature never learned passes unchanged."""
    rng = np.random.default_rng(0)
    rows, seen = [], {"a": [], "b": [], "c": []}
    s = OnlineStandardScaler()
    for t in range(500):
        row = {"a": rng.normal(5, 2)}
        if t >= 100:
            row["b"] = rng.normal(-1, 0.5)
        if t % 3 == 0:
            row["c"] = float(rng.integers(0, 4))
        rows.append(row)
        for k, v in row.items():
            seen[k].append(v)
        s.learn_one(row)
    for k, vals in seen.items():
        vals = np.array(vals)
        assert s.counts_[k] == len(vals)
        assert abs(s.means_[k] - vals.mean()) <= 8 * len(vals) * U * np.abs(vals).max()
        assert abs(s.m2_[k] / len(vals) - vals.var()) <= 8 * len(vals) * U * vals.max() ** 2
    out = s.transform_one({"a": 5.0, "b": -1.0, "z": 7.0})
    assert out["a"] == pytest.approx((5.0 - np.mean(seen["a"])) / np.std(seen["a"]), rel=1e-9)
    assert out["b"] == pytest.approx((-1.0 - np.mean(seen["b"])) / np.std(seen["b"]), rel=1e-9)
    assert out["z"] == 7.0
    const = OnlineStandardScaler()
    for _ in range(3):
        const.learn_one({"k": 2.0})
    assert const.transform_one({"k": 5.0}) == {"k": 3.0}  # zero variance: scale 1


def test_dict_rows_as_rivers_standard_scaler():
    river_pre = pytest.importorskip("river.preprocessing")
    rng = np.random.default_rng(3)
    ours, theirs = OnlineStandardScaler(), river_pre.StandardScaler()
    for t in range(300):
        row = {"x": rng.normal(3, 4), "y": rng.uniform(0, 10)}
        if t > 50:
            row["z"] = rng.normal()
        ours.learn_one(row)
        theirs.learn_one(row)
        a, b = ours.transform_one(row), theirs.transform_one(row)
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] == pytest.approx(b[k], rel=1e-9, abs=1e-12)


def test_scikit_learn_estimator_checks():
    check_estimator(OnlineStandardScaler())
    check_estimator(OnlineStandardScaler(with_mean=False))


def _learners():
    from onlinelearn import (
        AROW,
        PassiveAggressiveClassifier,
        PassiveAggressiveRegressor,
        Perceptron,
    )

    return [PassiveAggressiveClassifier(random_state=0), Perceptron(random_state=0),
            AROW(random_state=0), PassiveAggressiveRegressor(random_state=0)]  # fmt: skip


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("learner", _learners(), ids=lambda e: type(e).__name__)
def test_in_a_pipeline_in_front_of_our_learners(learner, sparse):
    """The pipeline learns what the learner learns on the scaled rows."""
    from sklearn.base import clone, is_regressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5)) * np.array([1e3, 1.0, 1e-2, 50.0, 1.0]) + 7.0
    y = X @ np.array([1e-3, 1.0, 100.0, 0.02, -1.0]) + 0.1 * rng.normal(size=300) > 7.0
    y = y.astype(float) if is_regressor(learner) else y.astype(int)
    X = sp.csr_matrix(X) if sparse else X
    pipe = make_pipeline(OnlineStandardScaler(), clone(learner)).fit(X, y)
    alone = clone(learner).fit(OnlineStandardScaler().fit(X).transform(X), y)
    np.testing.assert_array_equal(pipe.predict(X), alone.predict(
        OnlineStandardScaler().fit(X).transform(X)))  # fmt: skip
    if not is_regressor(learner) and not sparse:
        assert pipe.score(X, y) > 0.8


BAD_ARRAYS = [
    np.array([[1.0, np.nan, 2.0]]),
    np.array([[1.0, np.inf, 2.0]]),
    np.zeros((2, 4)),
    np.zeros((0, 3)),
    sp.csr_matrix(np.array([[0.0, -np.inf, 1.0]])),
    np.zeros(3),
]


@pytest.mark.parametrize("bad", BAD_ARRAYS, ids=range(len(BAD_ARRAYS)))
def test_bad_arrays_raise_and_leave_the_scaler_unchanged(bad):
    s = OnlineStandardScaler().partial_fit(_data(0, n=20, d=3))
    before = pickle.dumps(s)
    with pytest.raises(ValueError):
        s.partial_fit(bad)
    assert pickle.dumps(s) == before
    with pytest.raises(ValueError):
        s.transform(bad)
    assert pickle.dumps(s) == before
    fresh = OnlineStandardScaler()
    with pytest.raises(ValueError):
        fresh.partial_fit(bad if bad.shape != (2, 4) else bad[:, :0])
    assert fresh.__dict__ == OnlineStandardScaler().__dict__


@pytest.mark.parametrize("bad", [{"a": np.nan}, {"a": 1.0, "b": np.inf}, {"a": "x"}, [1.0]])
def test_bad_dict_rows_raise_and_leave_the_scaler_unchanged(bad):
    s = OnlineStandardScaler()
    s.learn_one({"a": 1.0, "b": 2.0})
    before = pickle.dumps(s)
    with pytest.raises(ValueError):
        s.learn_one(bad)
    with pytest.raises(ValueError):
        s.transform_one(bad)
    assert pickle.dumps(s) == before


def test_one_scaler_serves_one_interface():
    s = OnlineStandardScaler()
    s.learn_one({"a": 1.0})
    with pytest.raises(ValueError, match="dict rows"):
        s.partial_fit(np.ones((2, 1)))
    a = OnlineStandardScaler().fit(np.ones((2, 1)))
    with pytest.raises(ValueError, match="arrays"):
        a.learn_one({"a": 1.0})
    with pytest.raises(ValueError, match="arrays"):
        a.transform_one({"a": 1.0})
    s.fit(np.ones((2, 1)))  # fit starts over
    assert s.n_samples_seen_ == 2 and not hasattr(s, "counts_")


def test_pickles_and_the_docstring_example_runs():
    import doctest

    import onlinelearn.preprocessing

    s = OnlineStandardScaler().partial_fit(_data(4))
    t = pickle.loads(pickle.dumps(s))
    X = _data(5)
    np.testing.assert_array_equal(s.partial_fit(X).transform(X), t.partial_fit(X).transform(X))
    result = doctest.testmod(onlinelearn.preprocessing, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
