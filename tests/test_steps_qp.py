"""Each analytic step equals an independent numerical solution of its own one-round problem.

The problems (Crammer et al. 2006; thesis eq. 7.9-7.11), over the full weight matrix W::

    PA     min 1/2 ||W - W_t||^2                 s.t. margin(W) >= gamma
    PA-I   min 1/2 ||W - W_t||^2 + C xi          s.t. margin(W) >= gamma - xi, xi >= 0
    PA-II  min 1/2 ||W - W_t||^2 + C xi^2        s.t. margin(W) >= gamma - xi

with margin(w) = y <w, x> (binary) or <w_y, x> - <w_r, x> (multiclass, r the max-score rival of
W_t).  scipy's SLSQP solves them in W-space (it knows nothing of the closed form); one
partial_fit call on a single row must land on the same W.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, minimize_scalar

from onlinelearn import PassiveAggressiveClassifier


def _solve(W0, x, y, r, variant, C, gamma):
    R, K = W0.shape
    binary = K == 1

    def margin(w):
        W = w[: R * K].reshape(R, K)
        if binary:
            return (1.0 if y == 1 else -1.0) * (x @ W[:, 0])
        return x @ W[:, y] - x @ W[:, r]

    n = R * K
    w0 = np.concatenate([W0.ravel(), [0.0]])
    if variant == "PA":
        fun = lambda w: 0.5 * np.sum((w[:n] - w0[:n]) ** 2)  # noqa: E731
        cons = [{"type": "ineq", "fun": lambda w: margin(w) - gamma}]
        bounds = [(None, None)] * n + [(0.0, 0.0)]
    elif variant == "PA-I":
        fun = lambda w: 0.5 * np.sum((w[:n] - w0[:n]) ** 2) + C * w[n]  # noqa: E731
        cons = [{"type": "ineq", "fun": lambda w: margin(w) - gamma + w[n]}]
        bounds = [(None, None)] * n + [(0.0, None)]
    else:
        fun = lambda w: 0.5 * np.sum((w[:n] - w0[:n]) ** 2) + C * w[n] ** 2  # noqa: E731
        cons = [{"type": "ineq", "fun": lambda w: margin(w) - gamma + w[n]}]
        bounds = [(None, None)] * n + [(None, None)]
    res = minimize(fun, w0, method="SLSQP", constraints=cons, bounds=bounds,
                   options={"ftol": 1e-15, "maxiter": 500})  # fmt: skip
    return res.x[:n].reshape(R, K)


def _instances(n_inst, seed, c_range=(-4, 4)):
    rng = np.random.default_rng(seed)
    for t in range(n_inst):
        K = [1, 3, 5][t % 3]
        d = int(rng.integers(1, 6))
        x = rng.normal(size=d) * (rng.random(d) < 0.7)
        if t % 17 == 0:
            x[:] = 0.0  # zero vector: only the intercept can move
        C = float(10.0 ** rng.uniform(*c_range))
        gamma = float(rng.choice([1.0, 0.3, 2.0]))
        W0 = rng.normal(size=(d + 1, K)) * rng.choice([0.0, 0.1, 1.0])
        y = int(rng.integers(0, 2 if K == 1 else K))
        yield K, x, y, C, gamma, W0


@pytest.mark.parametrize("variant", ["PA", "PA-I", "PA-II"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_closed_form_equals_numerical_solution(variant, layout):
    """Primal W-space solve (SLSQP is reliable for moderate C; the dual test covers all C)."""
    n_checked = 0
    for K, x, y, C, gamma, W0 in _instances(
        120, seed=zlib.crc32(variant.encode()), c_range=(-2, 2)
    ):
        d = x.shape[0]
        est = PassiveAggressiveClassifier(variant=variant, C=C, margin=gamma)
        classes = np.arange(2 if K == 1 else K)
        # install W0 as the current state through the public path: a fitted twin, then set theta
        est.partial_fit(np.zeros((1, d)), [classes[0]], classes=classes)
        est._theta[:] = W0
        est._st[:] = 0.0
        xb = sp.csr_matrix(x[None, :]) if layout == "csr" else x[None, :]
        xe = np.append(x, 1.0)  # the intercept feature
        scores = xe @ W0
        if K == 1:
            r = -1
        else:
            rivals = [k for k in range(K) if k != y]
            r = rivals[int(np.argmax(scores[rivals]))]
        est.partial_fit(xb, [classes[y]])
        W_ref = _solve(W0, xe, y, r, variant, C, gamma)
        scale = max(1.0, np.abs(W0).max(), np.abs(W_ref).max())
        np.testing.assert_allclose(est._theta, W_ref, atol=2e-6 * scale, rtol=0)
        n_checked += 1
    assert n_checked == 120


def test_step_sizes_binary_closed_form():
    """tau of eq. (7.11): min{C, loss/||x||^2} -- checked on the PA-I edge cases directly."""
    x = np.array([[3.0, 4.0]])  # ||x||^2 = 25, +1 intercept = 26
    for C, expect in [(1e-9, 1e-9), (1e9, 1.0 / 26.0)]:
        est = PassiveAggressiveClassifier(variant="PA-I", C=C)
        est.partial_fit(x, [1], classes=[0, 1])  # loss 1 at w = 0
        np.testing.assert_allclose(est.coef_[0], expect * x[0], rtol=1e-12)
        np.testing.assert_allclose(est.intercept_[0], expect, rtol=1e-12)


def _one_round(est_kwargs, K, x, y, W0, layout="dense"):
    d = x.shape[0]
    est = PassiveAggressiveClassifier(**est_kwargs)
    classes = np.arange(2 if K == 1 else K)
    est.partial_fit(np.zeros((1, d)), [classes[0]], classes=classes)
    est._theta[:] = W0
    xb = sp.csr_matrix(x[None, :]) if layout == "csr" else x[None, :]
    est.partial_fit(xb, [classes[y]])
    return est._theta


@pytest.mark.parametrize("variant", ["PA", "PA-I", "PA-II"])
def test_closed_form_equals_numerical_dual_solution(variant):
    """The dual of the round problem (thesis eq. 7.9 with f = 1/2||.||^2) is a concave problem
    in one variable tau: max_tau tau*l0 - tau^2 kappa ||x||^2 / 2 (- tau^2 / (4C) for PA-II),
    tau in [0, C] (PA-I) or [0, inf).  Solved by bounded scalar search, tiny to huge C."""
    n_checked = 0
    for K, x, y, C, gamma, W0 in _instances(300, seed=zlib.crc32(b"dual" + variant.encode())):
        xe = np.append(x, 1.0)
        sq = xe @ xe * (1.0 if K == 1 else 2.0)
        sc = xe @ W0
        if K == 1:
            ys = 1.0 if y == 1 else -1.0
            m = ys * sc[0]
        else:
            rivals = [k for k in range(K) if k != y]
            r = rivals[int(np.argmax(sc[rivals]))]
            m = sc[y] - sc[r]
        l0 = max(0.0, gamma - m)
        extra = 1.0 / (4.0 * C) if variant == "PA-II" else 0.0
        hi = C if variant == "PA-I" else 10.0 * (l0 / sq + 1.0)

        def neg_dual(tau, l0=l0, sq=sq, extra=extra):
            return -(tau * l0 - tau * tau * (sq / 2.0 + extra))

        res = minimize_scalar(neg_dual, bounds=(0.0, hi), method="bounded",
                              options={"xatol": 1e-13 * max(hi, 1e-300)})  # fmt: skip
        tau = res.x if l0 > 0 else 0.0
        if neg_dual(0.0) <= neg_dual(tau):
            tau = 0.0
        if neg_dual(hi) < neg_dual(tau):
            tau = hi
        W_ref = W0.copy()
        if K == 1:
            W_ref[:, 0] += tau * ys * xe
        else:
            W_ref[:, y] += tau * xe
            W_ref[:, r] -= tau * xe
        W = _one_round(dict(variant=variant, C=C, margin=gamma), K, x, y, W0)
        np.testing.assert_allclose(W, W_ref, atol=1e-7 * max(1.0, np.abs(W_ref).max()), rtol=0)
        n_checked += 1
    assert n_checked == 300
