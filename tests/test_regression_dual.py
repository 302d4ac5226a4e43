"""The dual objective the regressors keep in their compiled pass (``dual_objective_``).

With alpha_t the signed step of round t (w_{t+1} = w_t + alpha_t x_t), C_t = C s_t::

    D(alpha) = sum_t (alpha_t y_t - eps |alpha_t| - q_t) - 1/2 ||sum_t alpha_t x_t||^2
    q_t = 0 (PA, PA-I), alpha_t^2 / (4 C_t) (PA-II), alpha_t^2 / (2 C_t) (squared prox step)

the dual of P(w) = 1/2 ||w||^2 + sum_t C_t l_t(w) over every round seen (x_t with the intercept
feature b).  The tests recompute D from the alphas of an independent numpy implementation of
the updates (not from increments) and check weak duality D <= P(w) at the iterates and at
their mean after every round.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import texture_regression

from onlinelearn import OnlineLeastSquares, PassiveAggressiveRegressor
from onlinelearn.framework import EpsInsensitive, OnlineRegressor, Squared
from onlinelearn.framework.steps import Aggressive
from onlinelearn.model_io import load_model, save_model

VARIANTS = ("PA", "PA-I", "PA-II", "squared")


def _make(variant, C, eps, fit_intercept, **kw):
    kw = {"fit_intercept": fit_intercept, "shuffle": False, **kw}
    if variant == "squared":
        return OnlineLeastSquares(solver="proximal", C=C, **kw)
    loss = "squared_epsilon_insensitive" if variant == "PA-II" else "epsilon_insensitive"
    C = np.inf if variant == "PA" else C
    return PassiveAggressiveRegressor(C=C, epsilon=eps, loss=loss, **kw)


def _reference(Xa, y, sw, variant, C, eps, rows):
    """Plain numpy PA / PA-I / PA-II / prox step over ``rows`` of the augmented rows ``Xa``:
    the signed steps alpha_t and the weights after each round."""
    w = np.zeros(Xa.shape[1])
    alphas, ws = [], []
    for i in rows:
        x = Xa[i]
        r = y[i] - x @ w
        q = x @ x
        c = np.inf if variant == "PA" else C * sw[i]
        a = 0.0
        if sw[i] > 0 and q > 0:
            if variant == "squared":
                a = r / q if np.isinf(c) else c * r / (1.0 + c * q)
            else:
                ell = abs(r) - eps
                if ell > 0:
                    tau = min(c, ell / q) if variant != "PA-II" else ell / (q + 0.5 / c)
                    a = np.sign(r) * tau
        w = w + a * x
        alphas.append(a)
        ws.append(w.copy())
    return np.array(alphas), np.array(ws)


def _dual(Xa, y, sw, variant, C, eps, rows, alphas):
    """D recomputed from the alphas (a sum over rounds: a row seen twice counts twice)."""
    rows = np.asarray(rows)
    v = alphas @ Xa[rows]
    cw = np.full(len(rows), np.inf) if variant == "PA" else C * sw[rows]
    with np.errstate(divide="ignore", invalid="ignore"):
        quad = np.where(alphas != 0, alphas**2 / cw, 0.0)
    lin = alphas @ y[rows] - (0.0 if variant == "squared" else eps) * np.abs(alphas).sum()
    if variant == "PA-II":
        lin -= 0.25 * quad.sum()
    elif variant == "squared":
        lin -= 0.5 * quad.sum()
    return lin - 0.5 * v @ v


def _primal(Xa, y, sw, variant, C, eps, rows, w):
    rows = np.asarray(rows)
    r = y[rows] - Xa[rows] @ w
    cw = C * sw[rows]
    if variant == "squared":
        loss = 0.5 * cw * r * r
    else:
        ell = np.maximum(np.abs(r) - eps, 0.0)
        if variant == "PA":
            return 0.5 * w @ w if np.all(ell <= 1e-9 * (1 + np.abs(y[rows]))) else np.inf
        loss = cw * (ell * ell if variant == "PA-II" else ell)
    return 0.5 * w @ w + loss.sum()


def _below(D, P):
    """D <= P up to rounding (after a round of PA with eps = 0, D = P(w) exactly)."""
    return D <= P + 1e-12 * (1.0 + abs(P))


def _augment(X, fit_intercept, b=1.0):
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    return np.hstack([X, np.full((len(X), 1), b)]) if fit_intercept else X


def _data(seed, n=40, d=5, sparse=False, offset=None):
    """Rows with zeros (row 3 all zero), targets, weights in [0, 2) (row 5: 0).  ``offset``:
    y = <w, x> + offset exactly (a feasible point of PA's hard constraints), else noisy."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    X[3] = 0.0
    w = rng.normal(size=d)
    y = X @ w + (rng.normal(scale=0.5, size=n) if offset is None else offset)
    sw = rng.uniform(0.0, 2.0, size=n)
    sw[5] = 0.0
    return (sp.csr_matrix(X) if sparse else X), y, sw, w


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.1])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_kept_dual_equals_recomputed_dual_and_bounds_the_primal(variant, sparse, eps,
                                                               fit_intercept):  # fmt: skip
    """partial_fit one row at a time and in chunks, with sample weights: after every round D
    equals D(alpha) of the reference run and D <= P(w_t), P(w_avg)."""
    C = 0.7
    offset = (0.5 if fit_intercept else 0.0) if variant == "PA" else None
    X, y, sw, w_true = _data(1 + sparse, sparse=sparse, offset=offset)
    n = X.shape[0]
    Xa = _augment(X, fit_intercept)
    rows = list(range(n)) * 2  # two passes of partial_fit: every round counts
    alphas, ws = _reference(Xa, y, sw, variant, C, eps, rows)
    est = _make(variant, C, eps, fit_intercept, average=True)
    for t, i in enumerate(rows):
        if sw[i] == 0.0:  # (a call whose weights are all 0 is refused): joined to the next
            continue
        idx = [rows[t - 1], i] if t > 0 and sw[rows[t - 1]] == 0.0 else [i]
        est.partial_fit(X[idx], y[idx], sample_weight=sw[idx])
        D = _dual(Xa, y, sw, variant, C, eps, rows[: t + 1], alphas[: t + 1])
        np.testing.assert_allclose(est._w, ws[t], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(est.dual_objective_, D, rtol=1e-10, atol=1e-12)
        w_avg = np.append(est.coef_, est.intercept_) if fit_intercept else est.coef_
        for w in (ws[t], w_avg):
            P = _primal(Xa, y, sw, variant, C, eps, rows[: t + 1], w)
            assert _below(est.dual_objective_, P)
    if variant == "PA":  # P(w*) = 1/2 ||w*||^2 at the feasible w* that made y
        w_star = np.append(w_true, offset) if fit_intercept else w_true
        assert est.dual_objective_ > 0.0
        assert _below(est.dual_objective_, 0.5 * w_star @ w_star)
        assert _primal(Xa, y, sw, variant, C, eps, rows, w_star) == 0.5 * w_star @ w_star
    # the same rows in chunks of 7 give the same D
    chunked = _make(variant, C, eps, fit_intercept)
    for s in range(0, len(rows), 7):
        idx = np.array(rows[s : s + 7])
        chunked.partial_fit(X[idx], y[idx], sample_weight=sw[idx])
    np.testing.assert_allclose(chunked.dual_objective_, est.dual_objective_, rtol=1e-10)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("sparse", [False, True])
def test_fit_epochs_keep_the_dual_of_all_rounds(variant, sparse):
    """fit with n_epochs = 3 (no shuffle): D is the dual of the problem with every row three
    times; a second fit starts again from D = 0; float32 input gives the same D."""
    C, eps = 2.0, 0.1
    X, y, sw, _ = _data(7, n=60, sparse=sparse)
    Xa = _augment(X, True, b=0.5)
    rows = list(range(60)) * 3
    alphas, ws = _reference(Xa, y, sw, variant, C, eps, rows)
    D = _dual(Xa, y, sw, variant, C, eps, rows, alphas)
    est = _make(variant, C, eps, True, intercept_scaling=0.5, n_epochs=3)
    for _ in range(2):
        est.fit(X, y, sample_weight=sw)
        np.testing.assert_allclose(est._w, ws[-1], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(est.dual_objective_, D, rtol=1e-10)
    w = ws[-1]
    assert _below(D, _primal(Xa, y, sw, variant, C, eps, rows, w))
    X32 = X.astype(np.float32)
    e32 = _make(variant, C, eps, True, intercept_scaling=0.5, n_epochs=3).fit(X32, y)
    Xa32 = _augment(X32, True, b=0.5)
    ones = np.ones(60)
    a32, _ = _reference(Xa32, y, ones, variant, C, eps, rows)
    np.testing.assert_allclose(
        e32.dual_objective_, _dual(Xa32, y, ones, variant, C, eps, rows, a32), rtol=1e-10
    )


def _texture(n=1500):
    return texture_regression(n)


@pytest.mark.parametrize("variant", ["PA-I", "PA-II", "squared"])
def test_real_set_dual_and_weak_duality(variant):
    """PMLB texture (regress A1 from the other 39 features), two epochs: the kept D equals
    D(alpha) of the reference run, lies below P at the last and at the averaged weights, and
    is positive (the gap P(w_avg) - D is finite and reported by the assertion message)."""
    X, y = _texture()
    C, eps = 0.1, 0.1
    n = len(y)
    ones = np.ones(n)
    rows = list(range(n)) * 2
    Xa = _augment(X, True)
    alphas, ws = _reference(Xa, y, ones, variant, C, eps, rows)
    D = _dual(Xa, y, ones, variant, C, eps, rows, alphas)
    est = _make(variant, C, eps, True, n_epochs=2, average=True).fit(X, y)
    np.testing.assert_allclose(est.dual_objective_, D, rtol=1e-10)
    w_avg = np.append(est.coef_, est.intercept_)
    for w in (ws[-1], w_avg):
        P = _primal(Xa, y, ones, variant, C, eps, rows, w)
        assert 0.0 < est.dual_objective_ <= P, (est.dual_objective_, P)


@pytest.mark.parametrize(
    "make",
    [
        lambda: OnlineLeastSquares(),  # RLS: follow-the-leader, no dual steps
        lambda: PassiveAggressiveRegressor(constraint="l1", radius=2.0),
        lambda: OnlineLeastSquares(solver="proximal", constraint="simplex"),
        lambda: OnlineRegressor(loss=Squared(), step="conservative"),  # the generic pass
    ],
)
def test_configurations_without_a_kept_dual_give_nan(make):
    X, y, _, _ = _data(3)
    est = make().fit(X, y)
    assert np.isnan(est.dual_objective_)
    est.partial_fit(X, y)
    assert np.isnan(est.dual_objective_)


def test_engine_regressor_keeps_the_same_dual():
    """OnlineRegressor on the closed-form configurations runs the same pass: the same D."""
    X, y, sw, _ = _data(11)
    for loss, step, est in (
        (EpsInsensitive(0.1), Aggressive(0.5, "PA-II"),
         PassiveAggressiveRegressor(C=0.5, loss="squared_epsilon_insensitive", shuffle=False)),
        (Squared(), Aggressive(0.5), OnlineLeastSquares(solver="proximal", C=0.5, shuffle=False)),
    ):  # fmt: skip
        eng = OnlineRegressor(loss=loss, step=step, shuffle=False, n_epochs=3)
        eng.fit(X, y, sample_weight=sw)
        est.set_params(n_epochs=3).fit(X, y, sample_weight=sw)
        assert np.isfinite(eng.dual_objective_)
        assert eng.dual_objective_ == est.dual_objective_


def test_switching_to_a_constraint_loses_the_dual():
    X, y, _, _ = _data(5)
    est = PassiveAggressiveRegressor().partial_fit(X, y)
    assert np.isfinite(est.dual_objective_)
    est.set_params(constraint="l1").partial_fit(X, y)
    est.set_params(constraint=None).partial_fit(X, y)
    assert np.isnan(est.dual_objective_)


@pytest.mark.parametrize("variant", VARIANTS)
def test_rejected_call_leaves_the_dual_unchanged(variant):
    X, y, _, _ = _data(9)
    est = _make(variant, 1.0, 0.1, True).partial_fit(X, y)
    before = est.dual_objective_
    Xbad = X.copy()
    Xbad[30, 2] = np.nan  # found by the pass after 30 updates
    with pytest.raises(ValueError):
        est.partial_fit(Xbad, y)
    with pytest.raises(ValueError):
        est.partial_fit(X, np.where(np.arange(len(y)) == 20, np.inf, y))
    assert est.dual_objective_ == before
    if variant == "PA-I":
        return  # tau <= C: no overflowing step
    # a row of norm 1e-150 and a target of 1e10 at C = 1e300: tau = inf, the call is undone
    est = _make(variant, 1e300, 0.0, False).partial_fit(X, y)
    before = est.dual_objective_
    Xbig = X.copy()
    Xbig[20] = 0.0
    Xbig[20, 0] = 1e-150
    with pytest.raises(FloatingPointError):
        est.partial_fit(Xbig, np.where(np.arange(len(y)) == 20, 1e10, y))
    assert est.dual_objective_ == before


def test_model_file_round_trip_keeps_the_dual(tmp_path):
    X, y, sw, _ = _data(13)
    est = PassiveAggressiveRegressor(loss="squared_epsilon_insensitive").fit(X, y, sample_weight=sw)
    save_model(est, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.dual_objective_ == est.dual_objective_
    back.partial_fit(X, y)
    est.partial_fit(X, y)
    assert back.dual_objective_ == est.dual_objective_
