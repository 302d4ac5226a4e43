"""FTRL-Proximal's regret bound (McMahan 2017, Theorem 2; onlinelearn.bounds.adaptive): its
terms kept by the learner against the same terms summed over an explicit history, and the
realised regret against comparators (scipy's batch optimum of the same losses among them)
below it on random streams."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from test_adaptive_steps import EPS, _dloss

from onlinelearn import AdaGradClassifier, AdaGradRegressor
from onlinelearn.bounds.adaptive import losses, regret_bound, report

CASES = [
    (AdaGradClassifier, "hinge", 2), (AdaGradClassifier, "logistic", 2),
    (AdaGradClassifier, "hinge", 3), (AdaGradClassifier, "logistic", 3),
    (AdaGradRegressor, "squared", 1), (AdaGradRegressor, "absolute", 1),
    (AdaGradRegressor, "epsilon_insensitive", 1),
]  # fmt: skip


def _stream(K, n, d, rng, scale=1.0):
    X = rng.normal(size=(n, d)) * scale
    X[rng.random((n, d)) < 0.2] = 0.0
    if K == 1:
        return X, X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
    W = rng.normal(size=(d, K))
    return X, np.argmax(X @ W + 0.7 * rng.normal(size=(n, K)), axis=1)


def _params(rng, seed):
    return dict(
        eta=float(10 ** rng.uniform(-1.5, 0.5)),
        beta=[1.0, 0.0, float(10 ** rng.uniform(-2, 1))][seed % 3],
        l1=0.0 if seed % 2 == 0 else float(10 ** rng.uniform(-3, -1)),
        l2=0.0 if seed < 2 else float(10 ** rng.uniform(-3, 0)),
        fit_intercept=seed != 1,
    )


@pytest.mark.parametrize("cls,loss,K", CASES)
@pytest.mark.parametrize("seed", range(4))
def test_bound_terms_match_the_history(cls, loss, K, seed):
    """B(W) from the state equals the bound summed over the explicit history of iterates and
    gradients (the losses' derivatives written out in test_adaptive_steps)."""
    rng = np.random.default_rng(seed)
    X, y = _stream(K, 30, 3, rng)
    p = _params(rng, seed)
    est = cls(loss=loss, **p, **({"epsilon": EPS} if K == 1 else {}))
    kw = {"classes": np.unique(y)} if K > 1 else {}
    est.partial_fit(X[:1], y[:1], **kw)
    code = est._loss_code()
    b = est._intercept_value()
    hist = []
    W_t = np.zeros_like(est._A)
    for t in range(len(y)):
        if t:
            W_t = est._weights_matrix().copy()
            est.partial_fit(X[t : t + 1], y[t : t + 1])
        xt = np.append(X[t], b) if p["fit_intercept"] else X[t]
        target = np.searchsorted(np.unique(y), y[t]) if K > 1 else y[t]
        hist.append((W_t, np.outer(xt, _dloss(code, W_t.T @ xt, target))))
    a, beta, l1, l2 = p["eta"], p["beta"], p["l1"], p["l2"]
    Wc = rng.normal(size=W_t.shape)
    n = np.zeros_like(Wc)
    total = ((beta / (2 * a) + l2 / 2) * Wc**2 + l1 * np.abs(Wc)).sum()
    for W_s, g in hist:
        n_new = n + g * g
        sigma = (np.sqrt(n_new) - np.sqrt(n)) / a
        total += 0.5 * (sigma * (Wc - W_s) ** 2).sum()
        touched = g != 0  # (an untouched weight adds nothing: 0 / 0 when beta = l2 = 0)
        total += 0.5 * (g[touched] ** 2 / ((beta + np.sqrt(n_new[touched])) / a + l2)).sum()
        n = n_new
    assert regret_bound(est, Wc) == pytest.approx(total, rel=1e-9)


def _batch_optimum(est, X, y, c):
    R, K = est._A.shape

    def obj(w):
        return float((c * losses(est, X, y, w.reshape(R, K))).sum())

    best = minimize(obj, np.zeros(R * K), method="L-BFGS-B").x
    return best.reshape(R, K)


@pytest.mark.parametrize("cls,loss,K", CASES)
@pytest.mark.parametrize("seed", range(6))
def test_regret_stays_below_the_bound(cls, loss, K, seed):
    rng = np.random.default_rng(100 + seed)
    X, y = _stream(K, 200, 4, rng, scale=10 ** rng.uniform(-1, 1))
    c = rng.uniform(0.2, 3.0, len(y)) if seed % 3 == 2 else None
    est = cls(loss=loss, **_params(rng, seed))
    first = report(est, X, y, np.zeros((5 if seed != 1 else 4, max(1, K if K > 2 else 1))), c)
    run = first["estimator"]
    cw = np.ones(len(y)) if c is None else c
    for W in (_batch_optimum(run, X, y, cw), np.zeros_like(run._A),
              rng.normal(size=run._A.shape) * 3, run._weights_matrix()):
        out = report(est, X, y, W, c)
        assert out["observed"] <= out["bound"] * (1 + 1e-9) + 1e-9, (out["observed"], out["bound"])
    # the online loss is the learner's own: its predictions' losses summed
    assert first["online_loss"] > 0 and np.isfinite(first["bound"])


def test_bound_is_refused_for_nag_and_lost_when_labels_grow():
    from onlinelearn import NormalizedClassifier

    rng = np.random.default_rng(0)
    X, y = _stream(3, 60, 3, rng)
    with pytest.raises(ValueError, match="FTRL-Proximal"):
        regret_bound(NormalizedClassifier().fit(X, y), np.zeros((4, 3)))
    grown = AdaGradClassifier().partial_fit(X[y < 2], y[y < 2]).partial_fit(X, y)
    assert np.isnan(regret_bound(grown, np.zeros((4, 3))))
