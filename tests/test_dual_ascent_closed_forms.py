"""Each closed form of the dual ascent family equals an independent solution of its own problem.

* :func:`qp2_box` -- the 2-variable box QP of eq. (5.18) with k = 2 -- against scipy's bounded
  L-BFGS-B and SLSQP on random instances with collinear, identical and opposite rows, ties,
  tiny / huge / infinite caps;
* :func:`entropy_closed_form` -- eq. (7.16) -- against a bounded scalar solve of (7.13);
* along a run of DualAscentClassifier: every round's new dual variables solve the window QP
  (k = 1 is eq. 7.11, k = 2 the closed form, k = 4 and FTRL the coordinate ascent), solved here
  by SLSQP from the weights before the round, and the growing-c step solves its 1-D problem.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from onlinelearn import DualAscentClassifier
from onlinelearn._core import dual_ascent as DA


def _qp_value(h, Q, t):
    return h @ t - 0.5 * t @ Q @ t


def _qp_reference(h, Q, caps):
    """max h.t - 1/2 t'Qt over the box, by two generic solvers (the better one kept)."""
    bounds = [(0.0, None if not np.isfinite(c) else c) for c in caps]
    fun = lambda t: -_qp_value(h, Q, t)  # noqa: E731
    jac = lambda t: -(h - Q @ t)  # noqa: E731
    best = None
    for x0, method in ((np.zeros(len(h)), "L-BFGS-B"), (np.minimum(caps, 1.0), "SLSQP")):
        opts = {"ftol": 1e-15, "maxiter": 2000}
        if method == "L-BFGS-B":
            opts["gtol"] = 1e-13
        r = minimize(fun, x0, jac=jac, method=method, bounds=bounds, options=opts)
        t = np.clip(r.x, 0.0, np.where(np.isfinite(caps), caps, np.inf))
        if best is None or _qp_value(h, Q, t) > _qp_value(h, Q, best):
            best = t
    return best


def _qp2_instances(n, seed):
    rng = np.random.default_rng(seed)
    for t in range(n):
        d = int(rng.integers(1, 5))
        ua = rng.normal(size=d)
        kind = t % 6
        if kind == 0:
            ub = ua.copy()  # identical rows (a tie: a line of maximisers)
        elif kind == 1:
            ub = -ua * rng.uniform(0.5, 2.0)  # opposite rows
        elif kind == 2:
            ub = ua * rng.uniform(0.1, 3.0)  # collinear
        else:
            ub = rng.normal(size=d)
        dlt = (0.0, 0.0) if t % 3 else tuple(rng.uniform(0.01, 2.0, size=2))
        Q = np.array([[ua @ ua + dlt[0], ua @ ub], [ua @ ub, ub @ ub + dlt[1]]])
        h = rng.normal(size=2) * 3.0
        cap_choices = [1e-6, 1e-3, 0.5, 2.0, 1e6]
        caps = [cap_choices[int(rng.integers(5))], cap_choices[int(rng.integers(5))]]
        if dlt[0] > 0 and t % 2:
            caps = [np.inf, np.inf]  # PA-II: no cap, positive definite
        yield h, Q, np.array(caps, dtype=float)


def test_qp2_box_is_the_optimum():
    n_unique = 0
    for h, Q, caps in _qp2_instances(300, 11):
        t = np.array(DA.qp2_box(h[0], h[1], Q[0, 0], Q[0, 1], Q[1, 1], caps[0], caps[1]))
        assert np.all(t >= 0.0) and np.all(t <= caps)
        ref = _qp_reference(h, Q, caps)
        scale = 1.0 + abs(_qp_value(h, Q, ref))
        # never worse than the generic solvers, and they never find better
        assert _qp_value(h, Q, t) >= _qp_value(h, Q, ref) - 1e-9 * scale
        det = Q[0, 0] * Q[1, 1] - Q[0, 1] ** 2
        if det > 1e-6 * Q[0, 0] * Q[1, 1]:  # unique maximiser: the points agree too
            n_unique += 1
            np.testing.assert_allclose(t, ref, atol=1e-5 * (1.0 + np.abs(ref).max()))
    assert n_unique > 100


def test_qp2_box_edge_cases():
    # zero linear term: the origin
    assert DA.qp2_box(0.0, 0.0, 1.0, 0.5, 1.0, 1.0, 1.0) == (0.0, 0.0)
    # tiny caps bind
    t = DA.qp2_box(5.0, 5.0, 1.0, 0.0, 1.0, 1e-12, 1e-12)
    assert t == (1e-12, 1e-12)
    # identical rows, equal gradients: any split of the total 1 is optimal; the value is 1/2
    t0, t1 = DA.qp2_box(1.0, 1.0, 1.0, 1.0, 1.0, 10.0, 10.0)
    assert t0 + t1 == pytest.approx(1.0) and min(t0, t1) >= 0.0


def _entropy_objective(a, Ap, Am, A0, gamma, c):
    return gamma * a - c * np.log(Ap * np.exp(a / c) + Am * np.exp(-a / c) + A0)


def test_entropy_closed_form_7_16():
    rng = np.random.default_rng(5)
    cases = []
    for t in range(400):
        Ap, Am, A0 = np.exp(rng.normal(size=3) * 2.0)
        if t % 10 == 0:
            A0 = 0.0
        if t % 13 == 0:
            Am = 0.0
        if t % 17 == 0:
            Ap = 0.0
        gamma = [0.0, 0.3, 0.9, 1.0, 1.5, float(rng.uniform(0, 1))][t % 6]
        c = float(10.0 ** rng.uniform(-2, 2))
        cases.append((Ap, Am, A0, gamma, c))
    for Ap, Am, A0, gamma, c in cases:
        if Ap + Am + A0 == 0.0:
            continue
        a = DA.entropy_closed_form(Ap, Am, A0, gamma, c, 0.0, 1.0)
        assert 0.0 <= a <= 1.0
        res = minimize_scalar(
            lambda x, Ap=Ap, Am=Am, A0=A0, g=gamma, c=c: -_entropy_objective(x, Ap, Am, A0, g, c),
            bounds=(0.0, 1.0),
            method="bounded",
            options={"xatol": 1e-12},
        )
        best = max(-res.fun, _entropy_objective(0.0, Ap, Am, A0, gamma, c),
                   _entropy_objective(1.0, Ap, Am, A0, gamma, c))  # fmt: skip
        val = _entropy_objective(a, Ap, Am, A0, gamma, c)
        assert val >= best - 1e-9 * (1.0 + abs(best))


# ---------------------------------------------------------------- along a run
def _u(x, yc, r, sgn, K):
    """u as an (R, K) matrix (x includes the intercept feature)."""
    U = np.zeros((x.shape[0], K))
    if K == 1:
        U[:, 0] = sgn * x
    else:
        U[:, yc] += x
        U[:, r] -= x
    return U


def _data(seed, n, d, K):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    W = rng.normal(size=(d, max(K, 2)))
    y = np.argmax(X @ W + 0.8 * rng.normal(size=(n, max(K, 2))), axis=1) % max(K, 2)
    return X, y


@pytest.mark.parametrize(
    "step,k,variant,K,C",
    [
        ("last-k", 1, "PA-I", 1, 0.7),
        ("last-k", 2, "PA-I", 1, 0.7),
        ("last-k", 2, "PA-I", 1, 1e-6),
        ("last-k", 2, "PA-I", 3, 1e6),
        ("last-k", 2, "PA-II", 3, 0.7),
        ("last-k", 2, "PA-I", 3, 0.7),
        ("last-k", 4, "PA-I", 1, 0.7),
        ("ftrl", 1, "PA-II", 1, 0.7),
        ("ftrl", 1, "PA-I", 3, 0.7),
    ],
)
def test_each_round_solves_its_window_problem(step, k, variant, K, C):
    """The new dual variables of round t maximise D over I_t, the others fixed (SLSQP)."""
    X, y = _data(k + K, 16 if step == "ftrl" else 24, 4, K)
    gamma = 1.0
    clf = DualAscentClassifier(step=step, k=k, variant=variant, C=C, margin=gamma, tol=1e-11,
                               max_sweeps=5000)  # fmt: skip
    classes = np.arange(max(K, 2))
    Xa = np.hstack([X, np.ones((X.shape[0], 1))])
    us = []
    for t in range(X.shape[0]):
        W = np.vstack([clf.coef_.T, clf.intercept_]) if t else np.zeros((5, K))
        tau_before = clf.dual_coef_ if t else np.zeros(0)
        scores = Xa[t] @ W
        if K == 1:
            sgn, r = (1.0 if y[t] == 1 else -1.0), -1
        else:
            sgn = 1.0
            s = scores.copy()
            s[y[t]] = -np.inf
            r = int(np.argmax(s))
        us.append(_u(Xa[t], y[t], r, sgn, K))
        clf.partial_fit(X[t : t + 1], y[t : t + 1], classes=classes)
        tau = clf.dual_coef_
        I = list(range(max(0, t - k + 1), t + 1)) if step == "last-k" else list(range(t + 1))
        # the problem of round t in the variables I, from the weights before the round
        W_rest = W - sum(tau_before[i] * us[i] for i in I if i < t)
        G = np.array([[np.sum(us[i] * us[j]) for j in I] for i in I])
        dl = 0.5 / C if variant == "PA-II" else 0.0
        Q = G + dl * np.eye(len(I))
        h = np.array([gamma - np.sum(W_rest * us[i]) for i in I])
        caps = np.full(len(I), np.inf if variant == "PA-II" else C)
        ref = _qp_reference(h, Q, caps)
        got = tau[I]
        scale = 1.0 + abs(_qp_value(h, Q, ref))
        assert _qp_value(h, Q, got) >= _qp_value(h, Q, ref) - 1e-7 * scale
        # the weights are the sum of tau_i u_i over all rounds
        W_now = np.vstack([clf.coef_.T, clf.intercept_])
        np.testing.assert_allclose(W_now, sum(tau[i] * us[i] for i in range(t + 1)), atol=1e-10)


@pytest.mark.parametrize(
    "step,link",
    [(s, lk) for s in ("self-tuned", "strongly-convex") for lk in ("euclidean", "entropy", "pnorm")]
    + [("row-action", "entropy"), ("row-action", "pnorm")],
)
def test_growing_c_step_solves_its_one_variable_problem(link, step):
    """alpha_t = argmax_{[0,1]} gamma a - c_t f*((v + a u)/c_t), from the state before."""
    rng = np.random.default_rng(2)
    n, d = 30, 5
    if link == "entropy" and step != "strongly-convex":
        X = rng.integers(-1, 2, size=(n, d)).astype(float)  # {-1,0,1}: the closed form 7.16
    else:
        X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) > 0).astype(int)
    clf = DualAscentClassifier(step=step, link=link, p=3.0, U=2.0, sigma=0.5, margin=0.5, C=0.3)
    p = 3.0
    Xa = np.hstack([X, np.ones((n, 1))])

    def cfstar(v, c):
        if link == "euclidean":
            return 0.5 * v @ v / c
        if link == "entropy":
            th = np.concatenate([v, -v]) / c
            m = th.max()
            return c * (np.log(np.exp(th - m).sum()) + m - np.log(th.size))
        return np.linalg.norm(v, ord=p) ** 2 / (2.0 * (p - 1.0) * c)

    for t in range(n):
        v = clf._state["V"][:, 0].copy() if t else np.zeros(d + 1)
        clf.partial_fit(X[t : t + 1], y[t : t + 1], classes=[0, 1])
        c = clf._state["st"][DA.C_T]
        u = (1.0 if y[t] == 1 else -1.0) * Xa[t]
        a = clf.dual_coef_[t]
        obj = lambda x, v=v, u=u, c=c: 0.5 * x - cfstar(v + x * u, c)  # noqa: E731
        res = minimize_scalar(lambda x, f=obj: -f(x), bounds=(0.0, 1.0), method="bounded",
                              options={"xatol": 1e-12})  # fmt: skip
        best = max(-res.fun, obj(0.0), obj(1.0))
        assert obj(a) >= best - 1e-9 * (1.0 + abs(best))
