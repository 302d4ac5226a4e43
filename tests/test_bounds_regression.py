"""bounds.report for PassiveAggressiveRegressor (Crammer et al. 2006, Sec. 5).

The online losses are recomputed by an independent numpy run of the PA step; the bound's terms
(R, ||u||, the comparator's losses) from the returned comparator; the comparator's solver is
checked against scipy's L-BFGS-B on the same dual; and the bound must hold at every prefix.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from _data import texture_regression
from scipy.optimize import minimize

from onlinelearn import OnlineLeastSquares, PassiveAggressiveRegressor
from onlinelearn.bounds import report
from onlinelearn.bounds.regression import TOL, regression_optimum, regression_report

VARIANTS = {
    "PA": dict(C=math.inf),
    "PA-I": dict(C=0.1),
    "PA-II": dict(C=0.1, loss="squared_epsilon_insensitive"),
}


def _make(variant, eps, **kw):
    return PassiveAggressiveRegressor(epsilon=eps, **VARIANTS[variant], **kw)


def _augment(X, b):
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    return np.hstack([X, np.full((X.shape[0], 1), b)]) if b else X


def _online_losses(Xa, y, variant, C, eps):
    """The PA / PA-I / PA-II run from w = 0 in numpy: the loss of each prediction before its
    update."""
    w = np.zeros(Xa.shape[1])
    out = np.empty(len(y))
    for t, (x, yt) in enumerate(zip(Xa, y, strict=True)):
        res = yt - w @ x
        loss = max(abs(res) - eps, 0.0)
        out[t] = loss
        q = x @ x
        if loss == 0.0 or q == 0.0:
            continue
        tau = {"PA": loss / q, "PA-I": min(C, loss / q), "PA-II": loss / (q + 0.5 / C)}[variant]
        w = w + np.sign(res) * tau * x
    return out


def _bound_curve(variant, loss, Xa, y, u, C, eps):
    """Observed and bound along the stream, from the formulas of docs/bounds.md."""
    r = np.sqrt(np.einsum("ij,ij->i", Xa, Xa))
    R2 = np.array([np.max(r[: t + 1] ** 2) for t in range(len(r))])
    lu = np.maximum(np.abs(y - Xa @ u) - eps, 0.0)
    u2 = float(u @ u)
    if variant == "PA-I":
        obs = np.cumsum([min(v, v * v) for v in loss])
        return obs, np.maximum(R2, 1 / C) * (u2 + 2 * C * np.cumsum(lu))
    obs = np.cumsum(loss**2)
    if variant == "PA-II":
        return obs, (R2 + 1 / (2 * C)) * (u2 + 2 * C * np.cumsum(lu**2))
    a = np.cumsum([(v / s) ** 2 if s > 0 else 0.0 for v, s in zip(lu, r, strict=True)])
    z = np.cumsum([v * v if s == 0 else 0.0 for v, s in zip(lu, r, strict=True)])
    return obs, R2 * (np.sqrt(a) + np.sqrt(a + u2)) ** 2 + z


def _primal(Xa, y, w, C, eps, squared):
    loss = np.maximum(np.abs(y - Xa @ w) - eps, 0.0)
    if math.isinf(C):
        return 0.5 * w @ w if (loss <= 1e-9 * max(1.0, np.abs(y).max())).all() else math.inf
    return 0.5 * w @ w + C * np.sum(loss**2 if squared else loss)


def _check(r, X, y, variant, eps, b):
    Xa = _augment(X, b)
    est = r["estimator"]
    C = float(est.C)
    loss = _online_losses(Xa, y, variant, C, eps)
    u = r["comparator"]
    obs, bound = _bound_curve(variant, loss, Xa, y, u, C, eps)
    assert r["variant"] == variant
    np.testing.assert_allclose(r["curve_observed"], obs, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(r["curve_bound"], bound, rtol=1e-9)
    assert (obs <= bound * (1 + 1e-12)).all(), np.max(obs - bound)
    assert (r["curve_observed"] <= r["curve_bound"]).all()
    assert r["observed"] == pytest.approx(obs[-1], rel=1e-9)
    assert r["bound"] == pytest.approx(bound[-1], rel=1e-9)
    # the bound's terms, recomputed
    assert r["R"] == pytest.approx(np.max(np.linalg.norm(Xa, axis=1)), rel=1e-12)
    assert r["comparator_norm"] == pytest.approx(np.linalg.norm(u), rel=1e-12)
    lu = np.maximum(np.abs(y - Xa @ u) - eps, 0.0)
    rn = np.linalg.norm(Xa, axis=1)
    terms = {"PA-I": lu.sum(), "PA-II": np.sum(lu**2),
             "PA": np.sum((lu[rn > 0] / rn[rn > 0]) ** 2)}  # fmt: skip
    assert r["comparator_loss"] == pytest.approx(terms[variant], rel=1e-9, abs=1e-12)
    # weak duality at the reported (averaged) predictor, and the gap
    w = np.append(est.coef_, est.intercept_ / b) if b else np.asarray(est.coef_)
    P = _primal(Xa, y, w, C, eps, variant != "PA-I")
    assert r["primal_averaged"] == pytest.approx(P, rel=1e-9)
    assert 0.0 < r["dual_objective"] <= P
    assert r["gap"] == pytest.approx(P - r["dual_objective"], rel=1e-9)
    assert r["gap"] >= 0.0
    assert est.n_updates_ == r["updates"] == int(np.sum((loss > 0) & (rn > 0)))


def _stream(seed, n=150, d=6, sparse=False, zero_rows=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 3.0, size=(n, 1))  # unequal norms
    if sparse:
        X[rng.random(X.shape) < 0.6] = 0.0
    if zero_rows:
        X[rng.choice(n, 8, replace=False)] = 0.0
    y = X @ rng.normal(size=d) + 0.5 * rng.standard_t(3, size=n) + 0.7
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("eps", [0.0, 0.1])
@pytest.mark.parametrize("seed", [0, 1])
def test_random_streams_observed_below_bound_at_every_prefix(variant, eps, seed):
    """Dense and CSR streams, with and without the intercept, rows of unequal norms, some rows
    x = 0 (no intercept): the report's curves equal the recomputed ones and observed <= bound
    at every prefix; D <= P(w_avg)."""
    for sparse, fit_intercept, zero_rows in ((False, True, False), (True, False, True)):
        X, y = _stream(seed, sparse=sparse, zero_rows=zero_rows)
        est = _make(variant, eps, average=True, fit_intercept=fit_intercept)
        r = report(est, X, y, show=False)
        _check(r, X, y, variant, eps, 1.0 if fit_intercept else 0.0)
        assert not hasattr(est, "coef_")  # the report runs a clone


def _texture(n=800):
    return texture_regression(n)


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_real_set_observed_below_bound(variant, eps):
    """PMLB texture (regress A1 from the other 39 features, 800 rows, as
    test_regression_dual.py): every prefix within the bound, weak duality, finite bound."""
    X, y = _texture()
    r = report(_make(variant, eps, average=True), X, y, show=False)
    _check(r, X, y, variant, eps, 1.0)
    assert np.isfinite(r["bound"]) and r["observed"] > 0.0
    assert r["comparator_gap"] <= TOL * max(1.0, abs(r["primal_comparator"])) or variant == "PA"


def test_pa2_at_infinite_C_is_pa():
    X, y = _stream(3)
    r = report(PassiveAggressiveRegressor(C=math.inf, loss="squared_epsilon_insensitive"), X, y,
               show=False)  # fmt: skip
    _check(r, X, y, "PA", 0.1, 1.0)


def _primal_slsqp(Xa, y, C, eps, squared):
    """min 1/2 ||w||^2 + C sum xi_t (squared: xi_t^2) s.t. xi_t >= |y_t - <w, x_t>| - eps,
    xi_t >= 0: the primal with slacks, a smooth constrained problem for scipy's SLSQP."""
    n, d = Xa.shape

    k = 1.0 / (1.0 + C)  # the objective scaled to O(1) for SLSQP's tolerance

    def f(z):
        w, xi = z[:d], z[d:]
        return k * (0.5 * w @ w + C * (xi @ xi if squared else xi.sum()))

    def grad(z):
        w, xi = z[:d], z[d:]
        return k * np.concatenate([w, C * (2 * xi if squared else np.ones(n))])

    # xi - (y - <w, x>) + eps >= 0, xi - (<w, x> - y) + eps >= 0, xi >= 0
    A = np.block([[Xa, np.eye(n)], [-Xa, np.eye(n)], [np.zeros((n, d)), np.eye(n)]])
    c = np.concatenate([eps - y, y + eps, np.zeros(n)])
    cons = {"type": "ineq", "fun": lambda z: A @ z + c, "jac": lambda z: A}
    z0 = np.concatenate([np.zeros(d), np.maximum(np.abs(y) - eps, 0.0)])  # w = 0, feasible
    res = minimize(f, z0, jac=grad, constraints=[cons], method="SLSQP",
                   options=dict(maxiter=2000, ftol=1e-10))  # fmt: skip
    assert res.success, res.message
    return res.fun / k


@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.1, 2.0])
@pytest.mark.parametrize("C", [0.01, 1.0, 10.0])
def test_comparator_solver_against_slsqp(squared, eps, C):
    """The default comparator (dual coordinate ascent) reaches the optimum value of the
    regularised problem found by scipy's SLSQP on the primal with slacks, on random instances
    (eps = 2: most rows inside the tube)."""
    rng = np.random.default_rng(int(10 * C) + int(10 * eps) + squared)
    Xa = _augment(rng.normal(size=(30, 4)), 1.0)
    y = Xa @ rng.normal(size=5) + rng.normal(size=30)
    w, P, D = regression_optimum(Xa, y, C=C, eps=eps, squared=squared)
    assert P == pytest.approx(_primal(Xa, y, w, C, eps, squared), rel=1e-12)
    assert D <= P + 1e-12 * max(1.0, P) and P - D <= TOL * max(1.0, abs(P))
    ref = _primal_slsqp(Xa, y, C, eps, squared)
    assert D <= ref + 1e-8 * max(1.0, ref)  # weak duality against the reference optimum
    assert P == pytest.approx(ref, rel=2 * TOL, abs=2e-6)


def test_given_comparator_is_rescaled_and_used():
    X, y = _stream(4)
    u = np.append(np.ones(X.shape[1]), 0.0)
    r = report(_make("PA-II", 0.1), X, y, comparator=u, show=False)
    np.testing.assert_allclose(r["comparator"], r["scale"] * u)
    _check(r, X, y, "PA-II", 0.1, 1.0)
    assert r["primal_comparator"] == pytest.approx(_primal(_augment(X, 1.0), y, u, 0.1, 0.1, True))


def test_refusals_are_clear_and_leave_the_estimator_alone():
    X, y = _stream(5, n=30)
    est = PassiveAggressiveRegressor(constraint="l1", radius=2.0)
    with pytest.raises(NotImplementedError, match="unprojected"):
        report(est, X, y, show=False)
    with pytest.raises(ValueError, match="sample weights"):
        regression_report(_make("PA-I", 0.1), X, y, sample_weight=np.ones(len(y)), show=False)
    with pytest.raises(ValueError, match="C > 0"):
        report(PassiveAggressiveRegressor(C=0.0), X, y, show=False)
    with pytest.raises(ValueError, match="COPA only"):
        report(_make("PA-I", 0.1), X, y, X_test=X, y_test=y, show=False)
    with pytest.raises(ValueError, match="entries"):
        report(_make("PA-I", 0.1), X, y, comparator=np.ones(3), show=False)
    with pytest.raises(NotImplementedError, match="no theorem for OnlineLeastSquares"):
        report(OnlineLeastSquares(), X, y, show=False)
    fitted = _make("PA-I", 0.1).partial_fit(X, y)
    before = (fitted.coef_.copy(), fitted.intercept_, fitted.dual_objective_, fitted.t_)
    report(fitted, X, y, show=False)
    after = (fitted.coef_, fitted.intercept_, fitted.dual_objective_, fitted.t_)
    np.testing.assert_array_equal(before[0], after[0])
    assert before[1:] == after[1:]
