"""The scale-free steps against independent solutions: FTRL-Proximal's per-coordinate closed
form against scipy minimising the FTRL-Proximal objective over the recorded history (McMahan
et al. 2013, Algorithm 1), NAG against a short NumPy transcription of Ross, Mineiro, Langford
2013, Algorithm 2, and NAG's defining property, invariance to the scale of a feature."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq

from onlinelearn import NormalizedClassifier, NormalizedRegressor, PassiveAggressiveClassifier
from onlinelearn._core import adaptive as AD
from onlinelearn.shell.encoding import CSRBatch

LOSSES = [AD.HINGE, AD.LOGISTIC, AD.MC_HINGE, AD.SOFTMAX, AD.SQUARED, AD.ABSOLUTE,
          AD.EPS_INSENSITIVE]  # fmt: skip
EPS = 0.3


def _dloss(loss, p, y):
    """dl/dp (K,) of the losses, written out from their definitions."""
    g = np.zeros_like(p)
    if loss in (AD.HINGE, AD.LOGISTIC):
        s = 1.0 if y == 1 else -1.0
        if loss == AD.HINGE:
            g[0] = -s if s * p[0] < 1 else 0.0
        else:
            g[0] = -s / (1.0 + np.exp(s * p[0]))
    elif loss == AD.MC_HINGE:
        y = int(y)
        others = np.where(np.arange(len(p)) == y, -np.inf, p)
        r = int(np.argmax(others))
        if 1 - p[y] + p[r] > 0:
            g[y], g[r] = -1.0, 1.0
    elif loss == AD.SOFTMAX:
        e = np.exp(p - p.max())
        g = e / e.sum()
        g[int(y)] -= 1.0
    else:
        r = p[0] - y
        if loss == AD.SQUARED:
            g[0] = r
        elif loss == AD.ABSOLUTE:
            g[0] = np.sign(r)
        else:
            g[0] = np.sign(r) if abs(r) > EPS else 0.0
    return g


def _problem(loss, rng, n, d, scale):
    K = 3 if loss in (AD.MC_HINGE, AD.SOFTMAX) else 1
    X = rng.normal(size=(n, d)) * scale
    X[rng.random((n, d)) < 0.3] = 0.0  # zeros: coordinates a round does not touch
    X[n // 2] = 0.0  # a zero row
    if loss in (AD.HINGE, AD.LOGISTIC):
        y = rng.integers(0, 2, n).astype(float)
    elif K == 3:
        y = rng.integers(0, 3, n).astype(float)
    else:
        y = X @ rng.normal(size=d) / scale + rng.normal(size=n)
    return X, y, K


def _argmin_ftrl(gs, ws, sigmas, alpha, beta, l1, l2):
    """argmin_w sum_s g_s w + 1/2 sum_s sigma_s (w - w_s)^2 + beta/(2 alpha) w^2 + l1 |w|
    + l2/2 w^2: the convex objective's optimality condition solved by scipy (brentq on its
    derivative on each side of the kink at 0, where the subdifferential is an interval)."""
    gs, ws, sigmas = map(np.asarray, (gs, ws, sigmas))

    def smooth_derivative(w):
        return gs.sum() + (sigmas * (w - ws)).sum() + (beta / alpha + l2) * w

    curv = sigmas.sum() + beta / alpha + l2
    if curv == 0.0:
        return 0.0  # (only with no gradient at all: the objective is 0)
    left, right = smooth_derivative(0.0) - l1, smooth_derivative(0.0) + l1
    if left <= 0.0 <= right:
        return 0.0
    side = 1.0 if left > 0.0 else -1.0  # the derivative at 0 points away from the minimiser
    side = -side
    sign_term = side * l1
    hi = 1.0
    while (smooth_derivative(side * hi) + sign_term) * side < 0.0:
        hi *= 2.0
    lo_w, hi_w = sorted((0.0, side * hi))
    return brentq(lambda w: smooth_derivative(w) + sign_term, lo_w, hi_w, xtol=1e-300,
                  rtol=4 * np.finfo(float).eps, maxiter=2000)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("seed", range(4))
def test_ftrl_proximal_weights_solve_the_ftrl_objective(loss, seed):
    """Round by round, every weight of the compiled pass is scipy's minimiser of the
    FTRL-Proximal objective of its coordinate, over the gradients and iterates so far."""
    rng = np.random.default_rng(seed)
    alpha = float(10 ** rng.uniform(-2, 1))
    beta = [0.0, 1.0, float(10 ** rng.uniform(-3, 2))][seed % 3]
    l1 = 0.0 if seed % 2 == 0 else float(10 ** rng.uniform(-3, -0.5))
    l2 = 0.0 if seed < 2 else float(10 ** rng.uniform(-3, 0))
    X, y, K = _problem(loss, rng, 25, 4, 10 ** rng.uniform(-2, 2))
    b = 1.0 if seed % 2 else 0.0
    R = X.shape[1] + (1 if b else 0)
    Z, Nn, S, st = np.zeros((R, K)), np.zeros((R, K)), np.zeros(R), np.zeros(AD.N_ST)
    hist_g = [[[] for _ in range(K)] for _ in range(R)]
    hist_w = [[[] for _ in range(K)] for _ in range(R)]
    hist_s = [[[] for _ in range(K)] for _ in range(R)]
    W = np.zeros((R, K))
    for t in range(len(y)):
        xt = np.append(X[t], b) if b else X[t]
        g = np.outer(xt, _dloss(loss, W.T @ xt, y[t]))  # the round's gradient at w_t
        batch = CSRBatch(X[t : t + 1])
        AD.adaptive_pass(batch.data, batch.indices, batch.indptr, y[t : t + 1], np.ones(1),
                         np.zeros(1, dtype=np.int64), Z, Nn, S, st, AD.FTRL, loss, alpha, beta,
                         l1, l2, EPS, b, np.empty(1), np.zeros(K), np.zeros(K))  # fmt: skip
        out = np.empty((R, K))
        AD.ftrl_weights(Z, Nn, alpha, beta, l1, l2, out)
        for j in range(R):
            for k in range(K):
                n_before = sum(v * v for v in hist_g[j][k])
                hist_g[j][k].append(g[j, k])
                hist_w[j][k].append(W[j, k])
                hist_s[j][k].append((np.sqrt(n_before + g[j, k] ** 2) - np.sqrt(n_before)) / alpha)
                ref = _argmin_ftrl(hist_g[j][k], hist_w[j][k], hist_s[j][k], alpha, beta, l1, l2)
                assert out[j, k] == pytest.approx(ref, rel=1e-9, abs=1e-300), (
                    t, j, k)
        W = out


def test_ftrl_closed_form_edge_cases():
    assert AD.ftrl_weight(0.0, 0.0, 1.0, 0.0, 0.0, 0.0) == 0.0  # a coordinate never touched
    assert AD.ftrl_weight(0.5, 4.0, 1.0, 1.0, 0.5, 0.0) == 0.0  # |z| = l1: zero
    assert AD.ftrl_weight(-2.0, 4.0, 1.0, 0.0, 0.0, 0.0) == pytest.approx(1.0)
    for z, n, a, bt, l1, l2 in [(1e200, 1e300, 1e-8, 0.0, 0.0, 0.0), (1e-200, 1e-300, 1e8, 1.0,
                                0.0, 1e6), (-3.0, 0.0, 1.0, 1e-12, 1.0, 0.0)]:  # fmt: skip
        w = AD.ftrl_weight(z, n, a, bt, l1, l2)
        ref = _argmin_ftrl([z], [0.0], [np.sqrt(n) / a], a, bt, l1, l2)
        assert np.isfinite(w) and w == pytest.approx(ref, rel=1e-6, abs=1e-300)


def nag_reference(X, y, loss, eta, b, K, c=None):
    """Ross, Mineiro, Langford 2013, Algorithm 2 (NAG), row by row in NumPy; the constant
    feature of value b is the last column.  Returns the predictions and the final W."""
    if b:
        X = np.hstack([X, np.full((len(X), 1), b)])
    n, d = X.shape
    c = np.ones(n) if c is None else c
    W, s, G, N, t = np.zeros((d, K)), np.zeros(d), np.zeros((d, K)), 0.0, 0.0
    preds = []
    for r in range(n):
        x = X[r]
        grow = np.abs(x) > s
        W[grow & (s > 0)] *= (s / np.where(grow, np.abs(x), 1.0))[grow & (s > 0), None]
        s[grow] = np.abs(x[grow])
        p = W.T @ x
        preds.append(p.copy())
        nz = x != 0
        N += c[r] * ((x[nz] / s[nz]) ** 2).sum()
        t += c[r]
        g = c[r] * np.outer(x, _dloss(loss, p, y[r]))
        G += g * g
        upd = g != 0
        W[upd] -= eta * np.sqrt(t / N) * g[upd] / (s[:, None] * np.sqrt(G))[upd]
    return np.array(preds), W


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("form", ["dense", "csr", "float32"])
def test_nag_matches_the_papers_algorithm(loss, seed, form):
    rng = np.random.default_rng(seed)
    X, y, K = _problem(loss, rng, 60, 5, 1.0)
    X *= 10.0 ** rng.uniform(-4, 4, size=5)  # features in very different units
    X[5:, 2] *= 7.0  # a scale that grows after the first rows (the weights are rescaled)
    if form == "float32":
        X = X.astype(np.float32).astype(np.float64)
    eta = float(10 ** rng.uniform(-2, 0.5))
    b = [0.0, 1.0, 3.0][seed]
    c = rng.uniform(0.2, 2.0, len(y)) if seed == 2 else np.ones(len(y))
    P_ref, W_ref = nag_reference(X, y, loss, eta, b, K, c)
    Xin = sp.csr_matrix(X) if form == "csr" else (X.astype(np.float32) if form == "float32"
                                                  else X)  # fmt: skip
    batch = CSRBatch(Xin)
    R = X.shape[1] + (1 if b else 0)
    A, B, S, st = np.zeros((R, K)), np.zeros((R, K)), np.zeros(R), np.zeros(AD.N_ST)
    for i in range(len(y)):  # one row at a time: the predictions before each update
        p_seen = A.T @ (np.append(X[i], b) if b else X[i])
        scale_grows = np.abs(np.append(X[i], b) if b else X[i]) > S
        if not scale_grows.any():
            np.testing.assert_allclose(p_seen, P_ref[i], rtol=1e-9, atol=1e-12)
        AD.adaptive_pass(batch.data, batch.indices, batch.indptr, y, c, np.array([i]), A, B, S,
                         st, AD.NAG, loss, eta, 0.0, 0.0, 0.0, EPS, b, np.empty(1), np.zeros(K),
                         np.zeros(K))  # fmt: skip
    np.testing.assert_allclose(A, W_ref, rtol=1e-9, atol=1e-12 * np.abs(W_ref).max())
    # the whole stream as one compiled call learns the same
    A2, B2, S2, st2 = np.zeros((R, K)), np.zeros((R, K)), np.zeros(R), np.zeros(AD.N_ST)
    AD.adaptive_pass(batch.data, batch.indices, batch.indptr, y, c, np.arange(len(y)), A2, B2,
                     S2, st2, AD.NAG, loss, eta, 0.0, 0.0, 0.0, EPS, b, np.empty(len(y)),
                     np.zeros(K), np.zeros(K))  # fmt: skip
    np.testing.assert_array_equal(A, A2)


def _share_changed(make, X, y, j, c):
    Xc = X.copy()
    Xc[:, j] *= c
    a = make().partial_fit_predict(X, y)
    b = make().partial_fit_predict(Xc, y)
    return float(np.mean(a != b))


@pytest.mark.parametrize("c", [1e3, 1e-3, 37.0])
def test_normalized_is_scale_invariant_unlike_pa(c):
    """Multiplying a feature column by c changes no prediction of NAG (its weight is divided
    by c, which every update keeps), while it changes PA-I's."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    y = (X @ rng.normal(size=6) + 0.5 * rng.normal(size=400) > 0).astype(int)
    y3 = np.digitize(X @ rng.normal(size=6), [-0.5, 0.5])
    for labels in (y, y3):
        for loss in ("hinge", "logistic"):
            make = lambda loss=loss: NormalizedClassifier(loss=loss)  # noqa: E731
            assert _share_changed(make, X, labels, 2, c) == 0
        pa = _share_changed(lambda: PassiveAggressiveClassifier(average=False), X, labels, 2, c)
        assert pa > 0.01
    # the scores themselves: equal up to rounding
    Xc = X.copy()
    Xc[:, 2] *= c
    f = NormalizedClassifier(random_state=0).fit(X, y3).decision_function(X)
    g = NormalizedClassifier(random_state=0).fit(Xc, y3).decision_function(Xc)
    np.testing.assert_allclose(f, g, rtol=1e-9, atol=1e-12)
    reg_a = NormalizedRegressor().partial_fit_predict(X, X @ np.arange(6.0))
    reg_b = NormalizedRegressor().partial_fit_predict(Xc, X @ np.arange(6.0))
    np.testing.assert_allclose(reg_a, reg_b, rtol=1e-9, atol=1e-9)


def _ode_scale(loss, p, y, q, h):
    """int_0^h l'(p(u)) du along dp/du = -q l'(p(u)), by scipy's ODE solver (stopped at the
    hinge's margin, where l' becomes 0)."""
    from scipy.integrate import solve_ivp

    yy = 1.0 if y == 1.0 else -1.0

    def deriv(pp):
        if loss == AD.SQUARED:
            return pp - y
        return -yy if 1.0 - yy * pp > 0.0 else 0.0

    def rhs(u, z):
        g = deriv(z[0])
        return [-q * g, g]

    def at_margin(u, z):
        return 1.0 - yy * z[0]

    at_margin.terminal = True
    events = at_margin if loss == AD.HINGE and 1 - yy * p > 0 else None
    sol = solve_ivp(rhs, (0.0, h), [p, 0.0], rtol=1e-11, atol=1e-14, events=events)
    return sol.y[1, -1]


@pytest.mark.parametrize("loss", [AD.SQUARED, AD.HINGE])
def test_invariant_scale_solves_the_importance_ode(loss):
    """s(h) = int_0^h l'(p(u)) du along dp/du = -q l'(p) (Karampatziakis & Langford 2011), by
    scipy's ODE solver, on random instances with tiny and huge q and h."""
    rng = np.random.default_rng(1)
    for _ in range(40):
        q, h = 10 ** rng.uniform(-6, 3), 10 ** rng.uniform(-3, 1.5)
        y = float(rng.integers(0, 2)) if loss == AD.HINGE else rng.normal()
        p = rng.normal() * 2
        got = AD.invariant_scale(loss, p, y, q, h)
        assert got == pytest.approx(_ode_scale(loss, p, y, q, h), rel=1e-7, abs=1e-12)


def nag_invariant_reference(X, y, loss, eta, b, c):
    """NAG with the importance-invariant update, row by row (one column; the constant feature
    last): G += c (l' x)^2, rates frozen, w -= r x s(c) with s from the closed forms."""
    X = np.hstack([X, np.full((len(X), 1), b)]) if b else X
    n, d = X.shape
    w, s, G, N, t = np.zeros(d), np.zeros(d), np.zeros(d), 0.0, 0.0
    for r in range(n):
        x = X[r]
        grow = np.abs(x) > s
        old = s.copy()
        s[grow] = np.abs(x[grow])
        w[grow & (old > 0)] *= old[grow & (old > 0)] / s[grow & (old > 0)]
        p = w @ x
        nz = x != 0
        N += c[r] * ((x[nz] / s[nz]) ** 2).sum()
        t += c[r]
        g0 = _dloss(loss, np.array([p]), y[r])[0]
        if g0 == 0.0 or not nz.any():
            continue
        G[nz] += c[r] * (g0 * x[nz]) ** 2
        rates = np.zeros(d)
        rates[nz] = eta * np.sqrt(t / N) / (s[nz] * np.sqrt(G[nz]))
        q = (rates * x * x).sum()
        if loss == AD.SQUARED:
            sh = (p - y[r]) * (1 - np.exp(-q * c[r])) / q
        else:
            yy = 1.0 if y[r] == 1 else -1.0
            sh = -yy * min(c[r], (1 - yy * p) / q)
        w -= rates * x * sh
    return w


@pytest.mark.parametrize("loss", [AD.SQUARED, AD.HINGE])
@pytest.mark.parametrize("seed", range(3))
def test_nag_invariant_update_matches_a_reference(loss, seed):
    rng = np.random.default_rng(seed)
    X, y, K = _problem(loss, rng, 80, 4, 1.0)
    X *= 10.0 ** rng.uniform(-3, 3, size=4)
    c = rng.uniform(0.1, 5.0, len(y))
    b = [0.0, 1.0, 2.0][seed]
    ref = nag_invariant_reference(X, y, loss, 0.7, b, c)
    batch = CSRBatch(sp.csr_matrix(X) if seed == 1 else X)
    R = X.shape[1] + (1 if b else 0)
    A, B, S, st = np.zeros((R, 1)), np.zeros((R, 1)), np.zeros(R), np.zeros(AD.N_ST)
    AD.adaptive_pass(batch.data, batch.indices, batch.indptr, y, c, np.arange(len(y)), A, B, S,
                     st, AD.NAG, loss, 0.7, 0.0, 0.0, 0.0, EPS, b, np.empty(len(y)), np.zeros(1),
                     np.zeros(1), True)  # fmt: skip
    np.testing.assert_allclose(A[:, 0], ref, rtol=1e-9, atol=1e-12 * np.abs(ref).max())


def test_invariant_update_never_overshoots_and_is_refused_without_a_closed_form():
    """One row of huge importance: the squared loss moves the prediction to y at most, the
    hinge to the margin at most (plain gradient steps overshoot)."""
    X = np.array([[1.0, 2.0]])
    reg = NormalizedRegressor(importance_invariant=True, fit_intercept=False)
    reg.partial_fit(X, [3.0], sample_weight=[1e6])
    assert reg.predict(X)[0] == pytest.approx(3.0, rel=1e-9)
    clf = NormalizedClassifier(importance_invariant=True, fit_intercept=False)
    clf.partial_fit(np.vstack([X, -X]), [1, 0], sample_weight=[1e6, 1e6])
    assert clf.decision_function(X)[0] == pytest.approx(1.0, rel=1e-9)
    X3, y3 = np.eye(3), [0, 1, 2]
    for est in (NormalizedClassifier(importance_invariant=True, loss="logistic"),
                NormalizedRegressor(importance_invariant=True, loss="absolute")):
        with pytest.raises(ValueError, match="importance_invariant"):
            est.fit(X3[:2], y3[:2])
    clf = NormalizedClassifier(importance_invariant=True).fit(X3[:2], y3[:2])
    with pytest.raises(ValueError, match="importance_invariant"):
        clf.partial_fit(X3, y3)
    assert list(clf.classes_) == [0, 1]
