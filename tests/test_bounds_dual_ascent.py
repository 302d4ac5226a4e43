"""onlinelearn.bounds.report for DualAscentClassifier (window steps 'last-k', 'row-action',
'ftrl'; PA-I and PA-II): the thesis's Sec. 5.2.2 argument (a round that raises the dual at
least as much as the single-variable step keeps that step's mistake bound) with Crammer et
al. 2006 Thm. 4 / Thm. 5.

Checked here, every term recomputed in NumPy from the learner's public attributes:
  * the premise itself, round by round (partial_fit row by row): the learner's dual increase
    (consecutive ``dual_objective_``) >= the increase of the single-variable step from the same
    weights, found by scipy's bounded scalar maximisation of D(W + tau u_t) - D(W);
  * ``dual_objective_`` = gamma sum(tau) - 1/2 ||W||^2 [- sum tau^2 / (4C)] (the stated units);
  * observed <= bound at every prefix, with R, ||u||, the comparator's hinge and the curve
    written out here; weak duality D <= P(W) and D <= P(u*);
  * the configurations without a theorem are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data
from scipy.optimize import minimize_scalar

from onlinelearn import DualAscentClassifier, bounds
from onlinelearn.datasets import load_shared

CONFIGS = [
    dict(step="last-k", k=1),
    dict(step="last-k", k=2),
    dict(step="last-k", k=4),
    dict(step="row-action", k=3),
    dict(step="ftrl", max_sweeps=30),
    dict(step="last-k", k=2, variant="PA-II"),
    dict(step="row-action", k=3, variant="PA-II"),
]


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def _aug(X, est):
    X = _dense(X)
    if not est.fit_intercept:
        return X
    return np.hstack([X, np.full((X.shape[0], 1), float(est.intercept_scaling))])


def _W(est):
    W = np.asarray(est.coef_, dtype=np.float64).T
    if est.fit_intercept:
        W = np.vstack([W, np.asarray(est.intercept_)[None, :] / float(est.intercept_scaling)])
    return W


def _u(xa, yc, W):
    """u_t of the learner (y x, or x on y's column and -x on the top rival's) and its loss."""
    U = np.zeros_like(W)
    if W.shape[1] == 1:
        s = 1.0 if yc == 1 else -1.0
        U[:, 0] = s * xa
        return U
    sc = xa @ W
    sc[yc] = -np.inf
    U[:, yc] = xa
    U[:, int(np.argmax(sc))] = -xa
    return U


def _margins(Xa, W, yc):
    S = Xa @ W
    if W.shape[1] == 1:
        return np.where(yc == 1, 1.0, -1.0) * S[:, 0]
    n = len(yc)
    sy = S[np.arange(n), yc].copy()
    S[np.arange(n), yc] = -np.inf
    return sy - S.max(axis=1)


def _primal(W, Xa, yc, C, gamma, variant):
    h = np.maximum(gamma - _margins(Xa, W, yc), 0.0)
    return 0.5 * np.sum(W * W) + C * np.sum(h * h if variant == "PA-II" else h)


def _check_premise(est, X, y):
    """Row by row: the learner's increase >= the single-variable step's, by scipy."""
    classes = np.unique(y)
    yc = np.searchsorted(classes, y)
    C, g = float(est.C), float(est.margin)
    pa2 = est.variant == "PA-II"
    Xa = _aug(X, est)
    W = np.zeros((Xa.shape[1], 1 if len(classes) == 2 else len(classes)))
    D0, worst, n_pos = 0.0, np.inf, 0
    inc_lib, single_lib = bounds.dual_ascent.premise(est, X, y)
    e = DualAscentClassifier(**est.get_params())
    with _quiet():
        for t in range(len(y)):
            U = _u(Xa[t], yc[t], W)

            def gain(tau, U=U, W=W):
                return g * tau - 0.5 * np.sum((W + tau * U) ** 2) + 0.5 * np.sum(W * W) - (
                    tau * tau / (4 * C) if pa2 else 0.0)  # fmt: skip

            hi = C if not pa2 else 10.0 * (g + 1.0) * (1.0 + 2 * C)
            res = minimize_scalar(lambda s: -gain(s), bounds=(0.0, hi), method="bounded",
                                  options={"xatol": 1e-12})  # fmt: skip
            single = max(-res.fun, gain(0.0), gain(hi))
            e.partial_fit(X[t : t + 1], y[t : t + 1], classes=classes)
            D1 = e.dual_objective_
            inc = D1 - D0
            assert inc >= single - 1e-9 * (1 + abs(D1)), (t, inc, single)
            assert inc_lib[t] == pytest.approx(inc, abs=1e-12)
            assert single_lib[t] == pytest.approx(single, rel=1e-6, abs=1e-9)
            worst = min(worst, inc - single)
            n_pos += single > 1e-12
            D0, W = D1, _W(e)
    assert n_pos > 0  # the stream had rounds with a positive step: the check bit somewhere
    return worst


class _quiet:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *a):
        self._w.__exit__(*a)


def _check_report(est, X, y):
    r = bounds.report(est, X, y, show=False)
    fitted = r["estimator"]
    classes = np.unique(y)
    yc = np.searchsorted(classes, y)
    C, g, variant = float(est.C), float(est.margin), est.variant
    Xa = _aug(X, est)
    W = _W(fitted)
    binary = W.shape[1] == 1
    # the dual in the stated units
    tau = fitted.dual_coef_
    D = g * tau.sum() - 0.5 * np.sum(W * W) - (tau @ tau / (4 * C) if variant == "PA-II" else 0)
    assert r["dual_objective"] == pytest.approx(D, rel=1e-9, abs=1e-9)
    # observed, the bound curve from its terms, at every prefix
    pred = DualAscentClassifier(**est.get_params()).partial_fit_predict(X, y, classes=classes)
    mis = np.cumsum(pred != y)
    np.testing.assert_array_equal(r["curve_observed"], mis)
    assert r["observed"] == mis[-1]
    U = r["comparator"]
    kappa = 1.0 if binary else 2.0
    R2 = np.maximum.accumulate(kappa * np.sum(Xa * Xa, axis=1))
    v2 = np.sum(U * U) / g**2
    h = np.maximum(1.0 - _margins(Xa, U, yc) / g, 0.0)
    if variant == "PA-I":
        curve = np.maximum(R2, g / C) * (v2 + 2 * (C / g) * np.cumsum(h))
    else:
        curve = (R2 + 0.5 / C) * (v2 + 2 * C * np.cumsum(h * h))
    np.testing.assert_allclose(r["curve_bound"], curve, rtol=1e-9)
    assert (mis <= curve + 1e-9).all()
    # weak duality: D <= P(W) and D <= P(u*) (the comparator as given: the batch optimum)
    P_w = _primal(W, Xa, yc, C, g, variant)
    assert r["primal_averaged"] == pytest.approx(P_w, rel=1e-9)
    assert r["gap"] == pytest.approx(P_w - D, rel=1e-7, abs=1e-9)
    assert D <= P_w + 1e-9
    assert D <= r["primal_comparator"] + 1e-9
    assert D <= _primal(U, Xa, yc, C, g, variant) + 1e-9  # and at the rescaled comparator
    return r


def _dna(n, binary):
    require_shared_data("dna")
    X, y = load_shared("dna")
    X, y = X[:n], np.asarray(y[:n])
    if binary:
        y = (y == np.unique(y)[0]).astype(int)
    return X, y


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_dna_report(cfg, binary):
    X, y = _dna(200, binary)
    est = DualAscentClassifier(C=0.05, **cfg)
    with _quiet():
        r = _check_report(est, X, y)
    assert r["observed"] > 0
    assert "Sec. 5.2.2" in r["theorem"]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_dna_premise(cfg, binary):
    X, y = _dna(60, binary)
    _check_premise(DualAscentClassifier(C=0.05, **cfg), X, y)


@pytest.mark.parametrize("seed", range(4))
def test_random_streams(seed):
    """Random streams, dense and CSR, 2 or 4 classes, margins != 1, intercept scalings."""
    rng = np.random.default_rng(seed)
    n, d = 50, 6
    K = 2 if seed % 2 else 4
    Wt = rng.normal(size=(d, K))
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 3.0, size=d)
    X[rng.random(size=X.shape) < 0.3] = 0.0
    y = np.argmax(X @ Wt + rng.normal(scale=1.0, size=(n, K)), axis=1)
    if seed >= 2:
        X = sp.csr_matrix(X)
    cfg = CONFIGS[seed % len(CONFIGS)] if seed < 2 else CONFIGS[(seed * 3) % len(CONFIGS)]
    for variant in ("PA-I", "PA-II"):
        if variant == "PA-II" and cfg["step"] == "ftrl":
            continue
        kw = dict(cfg, variant=variant)
        est = DualAscentClassifier(C=float(rng.uniform(0.05, 2.0)),
                                   margin=float(rng.uniform(0.3, 2.0)),
                                   intercept_scaling=float(rng.uniform(0.5, 2.0)),
                                   fit_intercept=bool(seed != 1), **kw)  # fmt: skip
        with _quiet():
            _check_report(est, X, y)
        _check_premise(est, X[:30], y[:30])


@pytest.mark.parametrize(
    "kw, what",
    [
        (dict(step="self-tuned"), "grows c"),
        (dict(step="strongly-convex"), "grows c"),
        (dict(step="row-action", k=2, link="entropy"), "euclidean"),
        (dict(step="last-k", k=1, variant="PA"), "PassiveAggressiveClassifier"),
    ],
)
def test_refusals(kw, what):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), rng.integers(0, 2, 20)
    est = DualAscentClassifier(**kw)
    with pytest.raises(NotImplementedError, match=what):
        bounds.report(est, X, y, show=False)
    with pytest.raises(NotImplementedError, match=what):
        bounds.dual_ascent.premise(est, X, y)
    assert not hasattr(est, "coef_")  # the estimator passed in is not fitted by a refusal


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("cfg", [CONFIGS[1], CONFIGS[4], CONFIGS[6]])
def test_bound_bites_on_a_separable_stream(cfg, K):
    """A stream separable with a margin: the bound ends below the number of rounds, so that
    observed <= bound is not implied by observed <= t."""
    rng = np.random.default_rng(0)
    Wt = 2.0 * rng.normal(size=(3, K))
    X = rng.normal(size=(800, 3))
    S = np.sort(X @ Wt, axis=1)
    keep = S[:, -1] - S[:, -2] > 1.0
    X, y = X[keep][:400], np.argmax(X[keep][:400] @ Wt, axis=1)
    with _quiet():
        r = _check_report(DualAscentClassifier(C=10.0, **cfg), X, y)
    assert r["bound"] < r["rounds"]
