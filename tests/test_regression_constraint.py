"""Projected updates of the online regressors (``constraint`` / ``radius``): each update is the
regressor's own step followed by the Sec. 7.1 projection of w, checked against the public
projections applied by hand; the mean of the projected iterates; model files; bad parameters."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn import OnlineLeastSquares, PassiveAggressiveRegressor
from onlinelearn.model_io import load_model, save_model
from onlinelearn.projections import project_l1_ball, project_simplex

PROJECT = {"l1": project_l1_ball, "simplex": project_simplex}
MAKERS = {
    "PA-I": lambda **kw: PassiveAggressiveRegressor(C=0.5, epsilon=0.05, **kw),
    "PA-II": lambda **kw: PassiveAggressiveRegressor(loss="squared_epsilon_insensitive", **kw),
    "PA": lambda **kw: PassiveAggressiveRegressor(C=float("inf"), **kw),
    "proximal": lambda **kw: OnlineLeastSquares(solver="proximal", C=0.3, **kw),
}


def data(n=40, d=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    X[4] = 0.0
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("learner", list(MAKERS))
@pytest.mark.parametrize("constraint", ["l1", "simplex"])
@pytest.mark.parametrize("sparse, fit_intercept", [(False, True), (True, False)])
def test_step_then_projection(learner, constraint, sparse, fit_intercept):
    X, y = data(n=25, seed=len(learner))
    Xb = sp.csr_matrix(X) if sparse else X
    z = 0.8
    con = MAKERS[learner](constraint=constraint, radius=z, fit_intercept=fit_intercept)
    con.partial_fit(Xb[:1], y[:1])
    moved = 0
    for i in range(1, X.shape[0]):
        free = copy.deepcopy(con).set_params(constraint=None)
        free.partial_fit(Xb[i : i + 1], y[i : i + 1])
        expect = free._w.copy()
        if np.any(expect != con._w):
            expect = PROJECT[constraint](expect, z)
            moved += 1
        con.partial_fit(Xb[i : i + 1], y[i : i + 1])
        np.testing.assert_allclose(con._w, expect, atol=1e-12, rtol=0)
        if constraint == "l1":
            assert np.abs(con._w).sum() <= z * (1 + 1e-12)
        else:
            assert con._w.min() >= 0.0 and con._w.sum() == pytest.approx(z, rel=1e-12)
    assert moved > 5


@pytest.mark.parametrize("constraint", ["l1", "simplex"])
def test_mean_of_projected_iterates_and_model_file(constraint, tmp_path):
    X, y = data(n=30, seed=3)
    avg = PassiveAggressiveRegressor(constraint=constraint, radius=1.2, average=True, C=0.5)
    last = PassiveAggressiveRegressor(constraint=constraint, radius=1.2, C=0.5)
    iterates = []
    for i in range(X.shape[0]):
        avg.partial_fit(X[i : i + 1], y[i : i + 1])
        last.partial_fit(X[i : i + 1], y[i : i + 1])
        iterates.append(last._w.copy())
    np.testing.assert_allclose(avg._weights(), np.mean(iterates, axis=0), atol=1e-12)
    avg.fit(sp.csr_matrix(X.astype(np.float32)), y)  # fit: shuffled epochs, float32 CSR
    save_model(avg, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.predict(X), avg.predict(X))
    back.partial_fit(X, y)
    avg.partial_fit(X, y)
    np.testing.assert_array_equal(back._w, avg._w)


def test_bad_parameters_and_input():
    X, y = data()
    with pytest.raises(ValueError, match="proximal"):
        OnlineLeastSquares(solver="rls", constraint="l1").fit(X, y)
    for params in ({"constraint": "floor"}, {"radius": 0.0}):
        with pytest.raises(ValueError):
            PassiveAggressiveRegressor(**params).fit(X, y)
    est = PassiveAggressiveRegressor(constraint="l1").partial_fit(X, y)
    before = est._w.copy()
    bad = X.copy()
    bad[20, 3] = np.inf
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.partial_fit(bad, y)
    np.testing.assert_array_equal(est._w, before)
    # None: the plain pass, bit for bit
    a = PassiveAggressiveRegressor(random_state=0).fit(X, y)
    b = PassiveAggressiveRegressor(random_state=0, constraint=None, radius=7.0).fit(X, y)
    np.testing.assert_array_equal(a._w, b._w)
