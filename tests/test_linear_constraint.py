"""Projected updates of the Euclidean linear learners (``constraint`` / ``radius``): each update
is the learner's own step followed by the Sec. 7.1 projection of every weight vector it changed,
checked against the unconstrained learner and the public projections applied by hand."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import check_estimator

from onlinelearn import PassiveAggressiveClassifier, Perceptron
from onlinelearn._core.euclid_pass import euclid_pass
from onlinelearn.model_io import load_model, save_model
from onlinelearn.projections import project_l1_ball, project_simplex

PROJECT = {"l1": project_l1_ball, "simplex": project_simplex}
LEARNERS = {
    "Perceptron": lambda **kw: Perceptron(**kw),
    "PA": lambda **kw: PassiveAggressiveClassifier(variant="PA", **kw),
    "PA-I": lambda **kw: PassiveAggressiveClassifier(variant="PA-I", C=0.3, **kw),
    "PA-II": lambda **kw: PassiveAggressiveClassifier(variant="PA-II", C=0.3, **kw),
}


def toy(n=50, d=9, K=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(K, d))
    y = rng.integers(0, K, n)
    X = centers[y] + rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0  # sparse-ish rows, and a zero row
    X[7] = 0.0
    return X, y


def in_set(W, constraint, z, tol):
    """Every column of W inside the set."""
    if constraint == "l1":
        return np.abs(W).sum(axis=0).max() <= z * (1 + tol)
    return W.min() >= -tol * z and np.allclose(W.sum(axis=0), z, rtol=tol, atol=0)


@pytest.mark.parametrize("learner", list(LEARNERS))
@pytest.mark.parametrize("constraint", ["l1", "simplex"])
@pytest.mark.parametrize("K, sparse", [(2, False), (3, True), (3, False)])
def test_step_then_projection(learner, constraint, K, sparse):
    X, y = toy(n=30, K=K, seed=K)
    Xb = sp.csr_matrix(X) if sparse else X
    z = 0.7
    make = LEARNERS[learner]
    con = make(constraint=constraint, radius=z, average=True, shuffle=False)
    con.partial_fit(Xb[:1], y[:1], classes=np.arange(K))
    n_moved = 0
    for i in range(1, X.shape[0]):
        free = copy.deepcopy(con).set_params(constraint=None)
        free.partial_fit(Xb[i : i + 1], y[i : i + 1])
        expect = free._theta.copy()
        changed = np.flatnonzero(np.any(free._theta != con._theta, axis=0))
        for k in changed:
            expect[:, k] = PROJECT[constraint](expect[:, k], z)
        con.partial_fit(Xb[i : i + 1], y[i : i + 1])
        np.testing.assert_allclose(con._theta, expect, atol=1e-12, rtol=0)
        assert in_set(con._theta, constraint, z, 1e-12)
        n_moved += changed.size
    assert n_moved > 5  # the projection was exercised, not skipped


@pytest.mark.parametrize("constraint", ["l1", "simplex"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_constraint_holds_after_fit_and_growth(constraint, dtype):
    X, y = toy(n=120, K=4, seed=3)
    X = X.astype(dtype)
    z = 2.5
    for Xb in (X, sp.csr_matrix(X)):
        est = PassiveAggressiveClassifier(constraint=constraint, radius=z, random_state=0)
        est.fit(Xb, y)
        tol = 1e-12 if dtype == np.float64 else 1e-5
        assert in_set(est._theta.astype(np.float64), constraint, z, tol)
        # a model that starts binary and meets new classes: every column still in the set
        grow = Perceptron(constraint=constraint, radius=z, average=False)
        grow.partial_fit(Xb[y < 2], y[y < 2])
        grow.partial_fit(Xb, y)
        assert grow._theta.shape[1] == 4
        assert in_set(grow._theta.astype(np.float64), constraint, z, tol)


@pytest.mark.parametrize("constraint", ["l1", "simplex"])
def test_more_classes_than_weights_per_column(constraint):
    """K > R: the scratch of the pass is longer than a column; the projection reads R."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 1))
    y = rng.integers(0, 5, 60)
    con = PassiveAggressiveClassifier(constraint=constraint, radius=0.5, fit_intercept=False)
    con.partial_fit(X[:1], y[:1], classes=np.arange(5))
    for i in range(1, 60):
        free = copy.deepcopy(con).set_params(constraint=None)
        free.partial_fit(X[i : i + 1], y[i : i + 1])
        expect = free._theta.copy()
        for k in np.flatnonzero(np.any(free._theta != con._theta, axis=0)):
            expect[:, k] = PROJECT[constraint](expect[:, k], 0.5)
        con.partial_fit(X[i : i + 1], y[i : i + 1])
        np.testing.assert_allclose(con._theta, expect, atol=1e-12, rtol=0)


def test_fresh_model_starts_at_the_projection_of_zero():
    X, y = toy(K=2)
    est = Perceptron(constraint="simplex", radius=3.0)
    est.partial_fit(X[:1], y[:1], classes=[0, 1])  # one row: the state is the projected 0
    R = X.shape[1] + 1
    if est.n_updates_ == 0:
        np.testing.assert_allclose(est._theta[:, 0], np.full(R, 3.0 / R))
    l1 = Perceptron(constraint="l1").partial_fit(X[7:8], y[7:8], classes=[0, 1])
    assert l1.n_updates_ == 0 or np.abs(l1._theta).sum() <= 1.0 + 1e-12


@pytest.mark.parametrize("constraint", ["l1", "simplex"])
def test_average_is_the_mean_of_the_projected_iterates(constraint):
    X, y = toy(n=40, K=3, seed=5)
    avg = PassiveAggressiveClassifier(constraint=constraint, radius=1.5, average=True,
                                      average_power=0.0)  # fmt: skip
    weighted = PassiveAggressiveClassifier(constraint=constraint, radius=1.5)  # t^2 weights
    last = PassiveAggressiveClassifier(constraint=constraint, radius=1.5, average=False)
    iterates = []
    for i in range(X.shape[0]):
        avg.partial_fit(X[i : i + 1], y[i : i + 1], classes=np.arange(3))
        weighted.partial_fit(X[i : i + 1], y[i : i + 1], classes=np.arange(3))
        last.partial_fit(X[i : i + 1], y[i : i + 1], classes=np.arange(3))
        iterates.append(np.c_[last.coef_, last.intercept_])
    np.testing.assert_allclose(np.c_[avg.coef_, avg.intercept_], np.mean(iterates, axis=0),
                               atol=1e-12)  # fmt: skip
    t2 = np.arange(1, X.shape[0] + 1, dtype=np.float64) ** 2
    np.testing.assert_allclose(np.c_[weighted.coef_, weighted.intercept_],
                               np.average(iterates, axis=0, weights=t2), atol=1e-12)  # fmt: skip
    # progressive predictions of the averaged weights (predict_with='average')
    X2, y2 = toy(n=30, K=3, seed=6)
    ref = copy.deepcopy(avg)
    online = avg.partial_fit_predict(X2, y2, predict_with="average")
    for i in range(X2.shape[0]):
        assert online[i] == ref.predict(X2[i : i + 1])[0]
        ref.partial_fit(X2[i : i + 1], y2[i : i + 1])


def test_no_constraint_is_the_plain_pass():
    X, y = toy()
    plain = PassiveAggressiveClassifier(random_state=0).fit(X, y)
    ip, _ = plain._codes(plain._n_weights())
    assert plain._pass_kernel(ip) is euclid_pass
    named = PassiveAggressiveClassifier(random_state=0, constraint=None, radius=5.0).fit(X, y)
    np.testing.assert_array_equal(plain._theta, named._theta)


def test_model_file_and_bad_input(tmp_path):
    X, y = toy(K=3)
    est = PassiveAggressiveClassifier(constraint="l1", radius=0.8, random_state=0).fit(X, y)
    save_model(est, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.get_params() == est.get_params()
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    back.partial_fit(X[:10], y[:10])
    est.partial_fit(X[:10], y[:10])
    np.testing.assert_array_equal(back._theta, est._theta)
    before = est._theta.copy()
    bad = X[:5].copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        est.partial_fit(bad, y[:5])
    np.testing.assert_array_equal(est._theta, before)
    for params in ({"constraint": "floor"}, {"radius": 0.0}, {"radius": -1.0}):
        with pytest.raises(ValueError):
            Perceptron(**params).fit(X, y)


_EXPECTED = {
    "check_sample_weight_equivalence_on_dense_data": (
        "an online step scaled by w is not w repeated steps"
    ),
    "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
    "check_class_weight_classifiers": (
        "a mistake-driven learner's last hypothesis does not minimise a weighted loss"
    ),
}


@pytest.mark.parametrize(
    "est, extra",
    [
        (PassiveAggressiveClassifier(constraint="l1", radius=5.0, n_epochs=3), {}),
        (
            Perceptron(constraint="simplex", radius=5.0, n_epochs=3, average=False),
            {
                "check_classifiers_train": (
                    "nonnegative weights summing to 5 cannot separate the check's blobs, "
                    "whose classes differ by the sign of the features"
                )
            },
        ),
    ],
    ids=lambda e: repr(e) if e else "",
)
def test_sklearn_check_estimator(est, extra):
    check_estimator(est, expected_failed_checks={**_EXPECTED, **extra})
