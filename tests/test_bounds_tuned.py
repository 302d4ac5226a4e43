"""onlinelearn.bounds.report for the self-tuning steps (thesis Sec. 3.5): LipschitzTuned
(Corollaries 2 and 3) and LossTuned (Theorem 2), as bounds on the cumulative loss
sum_t g_t(w_t) <= G(u) + regret bound, at every prefix of the stream.

The reading of the theorems is the one of tests/test_self_tuned_bounds.py (see the docstring
of onlinelearn.bounds.tuned).  The observed losses are read from the run (w_t from the
learner's state before round t); for LossTuned the report checks their sum against the
learner's own, and here they are recomputed once more from the dual variables alone, so that
a violated bound points at the theorem's reading or the step, not at the read-out.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data

from onlinelearn import OnlineLearner, bounds
from onlinelearn.datasets import load_shared
from onlinelearn.framework import (
    Entropy,
    Euclidean,
    Hinge,
    LipschitzTuned,
    LossTuned,
    PNorm,
    SquaredHinge,
)

_LINKS = {"euclidean": (Euclidean(), 1.0), "entropy": (Entropy(), 0.05),
          "pnorm": (PNorm(p=4.0), 1.0)}  # fmt: skip


def _steps(gamma):
    return {
        "cor3": (LipschitzTuned(U=1.0), Hinge(gamma)),
        "cor2": (LipschitzTuned(U=0.5, L=200.0), Hinge(gamma)),
        "thm2": (LossTuned(beta1=1.0, beta2=2.0), SquaredHinge(gamma)),
    }


def _learner(link, step, fit_intercept=False):
    lk, gamma = _LINKS[link]
    st, loss = _steps(gamma)[step]
    return OnlineLearner(link=lk, loss=loss, step=st, average=False, tol=None,
                         fit_intercept=fit_intercept)  # fmt: skip


def _check(r, where):
    obs, bnd = r["curve_observed"], r["curve_bound"]
    bad = np.flatnonzero(obs > bnd * (1 + 1e-12) + 1e-12)
    assert bad.size == 0, (
        f"{where}: {r['theorem']} violated at round {bad[0] + 1}: cumulative loss "
        f"{obs[bad[0]]:.6g} > bound {bnd[bad[0]]:.6g} (f(u)={r['f_u']:.4g}, L={r['L']:.4g}, "
        f"G(u)={r['comparator_loss']:.4g}).  The observed losses were checked against the "
        "learner's (LossTuned) and against the dual variables (test_observed_is_the_run): "
        "a bug in the step's c_t or update, or in our reading of the theorem"
    )
    assert r["observed"] == pytest.approx(obs[-1]) and r["bound"] == pytest.approx(bnd[-1])
    assert np.isfinite(r["bound"])
    # weak duality for the problem of the last round: D_T <= c_T f(u) + G(u)
    assert r["dual_objective"] <= r["primal_comparator"] * (1 + 1e-9) + 1e-9, (
        f"{where}: D_T = {r['dual_objective']:.8g} > c_T f(u) + G(u) = "
        f"{r['primal_comparator']:.8g}: the kept dual is wrong (weak duality)"
    )


def _rows(name, n):
    require_shared_data(name)
    X, y = load_shared(name)
    rows = np.random.default_rng(0).permutation(X.shape[0])[:n]
    return X[rows], np.asarray(y)[rows]


@pytest.mark.parametrize("name,n", [("a9a", 400), ("dna", 300)])
@pytest.mark.parametrize("link", sorted(_LINKS))
@pytest.mark.parametrize("step", ["cor2", "cor3", "thm2"])
def test_bound_holds_on_shared_streams(name, n, link, step):
    X, y = _rows(name, n)
    r = bounds.report(_learner(link, step, fit_intercept=True), X, y, show=False)
    _check(r, f"{name}/{link}/{step}")
    assert r["quantity"] == ("cumulative squared hinge loss" if step == "thm2"
                             else "cumulative hinge loss")  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_bound_holds_on_random_streams(seed):
    rng = np.random.default_rng(seed)
    n, d = 120, 6
    K = 2 + seed % 3
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 3.0, size=(n, 1))
    W = rng.normal(size=(d, K))
    y = np.argmax(X @ W + rng.normal(scale=0.5, size=(n, K)), axis=1)
    if seed % 2:
        X = sp.csr_matrix(np.where(rng.random(X.shape) < 0.5, 0.0, X))
    for link in _LINKS:
        for step in ("cor2", "cor3", "thm2"):
            r = bounds.report(_learner(link, step, fit_intercept=bool(seed % 2)), X, y,
                              show=False)  # fmt: skip
            _check(r, f"seed {seed}/{link}/{step}")


def _replay(est, X, y, gamma, squared, rule):
    """sum_t g_t(w_t) from the dual variables alone: v = sum alpha_i y_i x_i, w_t = v / c_t
    (binary, Euclidean, no intercept, k = 1)."""
    alpha = est.dual_coef_
    s = np.where(y == est.classes_[1], 1.0, -1.0)
    v = np.zeros(X.shape[1])
    out = np.zeros(len(y))
    for t in range(len(y)):
        h = max(0.0, gamma - s[t] * (v @ X[t]) / rule(t, out[:t]))
        out[t] = h * h if squared else h
        v += alpha[t] * s[t] * X[t]
    assert np.allclose(v, est._state["V"].ravel(), rtol=1e-9, atol=1e-9)
    return out.sum()


def test_observed_is_the_run():
    X, y = _rows("a9a", 300)
    X = X.toarray()
    xn = np.maximum.accumulate(np.linalg.norm(X, axis=1))
    for step in ("cor3", "thm2"):
        r = bounds.report(_learner("euclidean", step), X, y, show=False)
        est = r["estimator"]
        if step == "cor3":
            got = _replay(est, X, y, 1.0, False, lambda t, p: np.sqrt((t + 1) * 0.5 * xn[t] ** 2))
        else:
            got = _replay(est, X, y, 1.0, True, lambda t, p: 2.0 * np.sqrt(1.0 + p.sum()))
        assert r["observed"] == pytest.approx(got, rel=1e-9), step


def test_given_comparator_and_premise_of_corollary_2():
    X, y = _rows("a9a", 200)
    lk, _ = _LINKS["euclidean"]
    # any u: the bound at the best scale of the given u (u = 0 included: G(0) = gamma T)
    for u in (np.zeros((X.shape[1], 1)), np.random.default_rng(1).normal(size=(X.shape[1], 1))):
        r = bounds.report(_learner("euclidean", "cor3"), X, y, comparator=u, show=False)
        _check(r, "given u")
    # L below max ||x_t||^2 / 2: the hinge is not sqrt(2L)-Lipschitz, Cor. 2 does not apply
    est = OnlineLearner(link=lk, loss=Hinge(1.0), step=LipschitzTuned(U=1.0, L=1e-3),
                        average=False, tol=None, fit_intercept=False)  # fmt: skip
    r = bounds.report(est, X, y, show=False)
    assert r["bound"] == np.inf and "premise fails" in r["theorem"]
    # an L that only row 60 breaks: finite before that row, +inf from it on
    rng = np.random.default_rng(5)
    Xr = rng.normal(size=(100, 4))
    Xr /= np.linalg.norm(Xr, axis=1, keepdims=True)
    Xr[60] *= 3.0
    yr = np.where(Xr[:, 0] + 0.3 * rng.normal(size=100) > 0, 1, -1)
    est = est.set_params(step=LipschitzTuned(U=1.0, L=2.0))  # rows: ||x||^2 / 2 = 0.5, and 4.5
    r = bounds.report(est, Xr, yr, show=False)
    assert np.isfinite(r["curve_bound"][:60]).all() and np.isinf(r["curve_bound"][60:]).all()
    assert (r["curve_observed"][:60] <= r["curve_bound"][:60]).all()


def test_refusals():
    X, y = _rows("a9a", 50)
    lk, _ = _LINKS["euclidean"]
    wrong = OnlineLearner(link=lk, loss=SquaredHinge(1.0), step=LipschitzTuned(), average=False,
                          tol=None)  # fmt: skip
    with pytest.raises(NotImplementedError, match="Hinge"):
        bounds.report(wrong, X, y, show=False)
    with pytest.raises(ValueError, match="COPA only"):
        bounds.report(_learner("euclidean", "cor3"), X, y, X_test=X, y_test=y, show=False)


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    X, y = _rows("a9a", 100)
    r = bounds.report(_learner("euclidean", "thm2"), X, y, show=False)
    assert bounds.plot(r, tmp_path / "t.png").stat().st_size > 0
