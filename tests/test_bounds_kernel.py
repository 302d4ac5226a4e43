"""onlinelearn.bounds.report for the kernel online learners (KernelPerceptron,
KernelPassiveAggressive PA / PA-I / PA-II): the linear theorems read in the RKHS of k + b^2.

Every term of the report is recomputed here in NumPy, from the kernels' formulas written out
below (not the library's kernel code): R = max_t sqrt(kappa (k(x_t, x_t) + b^2)), ||u||_H^2 =
A' (k(Z, Z) + b^2) A, the comparator's margins and hinge losses from the T x n_u kernel
values, the bound of each theorem from those terms, and P of the averaged hypothesis from its
support vectors and dual coefficients.  Then: observed <= bound at every prefix, weak duality
D <= P(f_avg) and D <= P(u), and the batch optimum u* below P(f_avg) (to its tolerance) where
they are the same problem.  With ``kernel='linear'`` the kernel report equals the linear one
for the same comparator.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data

from onlinelearn import (
    KernelCOPA,
    KernelPassiveAggressive,
    KernelPerceptron,
    PassiveAggressiveClassifier,
    Perceptron,
    bounds,
)
from onlinelearn.datasets import load_shared
from onlinelearn.kernels import RBF, Polynomial


# ------------------------------------------------------------------ NumPy kernels
def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def _np_kernel(spec):
    name, par = spec
    if name == "rbf":

        def k(A, B):
            A, B = _dense(A), _dense(B)
            d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
            return np.exp(-par["gamma"] * np.maximum(d2, 0.0))

        return k, RBF(gamma=par["gamma"])
    if name == "poly":

        def k(A, B):
            return (par["gamma"] * _dense(A) @ _dense(B).T + par["coef0"]) ** par["degree"]

        return k, Polynomial(degree=par["degree"], gamma=par["gamma"], coef0=par["coef0"])
    return (lambda A, B: _dense(A) @ _dense(B).T), "linear"


def _margins(S, yc, binary):
    n = S.shape[0]
    if binary:
        return np.where(yc == 1, 1.0, -1.0) * S[:, 0]
    sy = S[np.arange(n), yc]
    S2 = S.copy()
    S2[np.arange(n), yc] = -np.inf
    return sy - S2.max(axis=1)


def _kind(est):
    if isinstance(est, KernelPerceptron):
        return "perceptron"
    return {"PA": "pa0", "PA-I": "pa1", "PA-II": "pa2"}[est.variant]


def _check(r, X, y, k, where):
    """Every term of the report against NumPy, the bound against its formula, observed <=
    bound at every prefix, weak duality."""
    est = r["estimator"]
    kind = _kind(est)
    b2 = est.intercept_scaling ** 2 if est.fit_intercept else 0.0
    yc = np.searchsorted(est.classes_, np.asarray(y))
    binary = len(est.classes_) == 2
    kappa = 1.0 if binary else 2.0
    Xd = _dense(X)
    # R
    diag = np.array([k(Xd[i : i + 1], Xd[i : i + 1])[0, 0] for i in range(len(Xd))])
    R = np.sqrt(kappa * (diag + b2)).max()
    assert r["R"] == pytest.approx(R, rel=1e-10), where
    # ||u||_H and the comparator's hinge losses
    Z, A = r["comparator"]
    Z = _dense(Z)
    unorm = np.sqrt(max(np.einsum("sk,st,tk->", A, k(Z, Z) + b2, A), 0.0)) if len(Z) else 0.0
    assert r["comparator_norm"] == pytest.approx(unorm, rel=1e-9, abs=1e-12), where
    mu = _margins((k(Xd, Z) + b2) @ A, yc, binary) if len(Z) else np.zeros(len(y))
    g = 1.0 if kind == "perceptron" else est.margin
    hinge = np.maximum(g - mu, 0.0)
    np.testing.assert_allclose(r["comparator_hinge"], hinge, rtol=1e-9, atol=1e-9, err_msg=where)
    # the bound of the theorem from those terms
    C = getattr(est, "C", 1.0)
    L = hinge.sum()
    if kind == "perceptron":
        bound = L + R * unorm * np.sqrt(L) + R * R * unorm * unorm
    elif kind == "pa1":
        bound = max(R * R, g / C) * (unorm**2 + 2 * C * L) / g**2
    elif kind == "pa2":
        bound = (R * R + 0.5 / C) * (unorm**2 + 2 * C * np.sum(hinge * hinge)) / g**2
    else:
        bound = R * R * unorm**2 / g**2 if np.isfinite(r["bound"]) else np.inf
        if np.isfinite(bound):
            assert mu.min() >= g * (1 - 1e-9), f"{where}: PA's comparator does not separate"
    assert r["bound"] == pytest.approx(bound, rel=1e-8), where
    # observed: the current iterate's mistakes, at most the bound at every prefix
    obs, bnd = r["curve_observed"], r["curve_bound"]
    assert obs[-1] == r["observed"] and bnd[-1] == r["bound"]
    bad = np.flatnonzero(obs > bnd * (1 + 1e-12) + 1e-12)
    assert bad.size == 0, (
        f"{where}: {r['theorem']} violated at round {bad[0] + 1}: {obs[bad[0]]} mistakes > "
        f"bound {bnd[bad[0]]:.6g}.  The steps are checked against their problems in "
        "tests/test_kernel_online.py: if those pass, our reading of the theorem is wrong"
    )
    # P of the averaged hypothesis, from its support vectors and dual coefficients
    Zs, As = _dense(est.support_vectors_), est.dual_coef_.T
    norm2 = np.einsum("sk,st,tk->", As, k(Zs, Zs) + b2, As) if len(Zs) else 0.0
    ms = _margins((k(Xd, Zs) + b2) @ As, yc, binary) if len(Zs) else np.zeros(len(y))
    hs = np.maximum(est._dual_margin() - ms, 0.0)
    if kind == "pa2":
        P = 0.5 * norm2 + C * np.sum(hs * hs)
    elif kind == "pa0":
        P = 0.5 * norm2 if not (hs > 1e-9 * g).any() else np.inf
    else:
        P = 0.5 * norm2 + C * hs.sum()
    assert r["primal_averaged"] == pytest.approx(P, rel=1e-9), where
    # weak duality
    D = r["dual_objective"]
    assert np.isfinite(D), where
    tol = 1e-9 * (1 + abs(D))
    assert D <= r["primal_averaged"] + tol, f"{where}: D = {D:.8g} > P(f_avg)"
    assert D <= r["primal_comparator"] + tol, f"{where}: D = {D:.8g} > P(u)"
    assert r["gap"] == pytest.approx(r["primal_averaged"] - D)
    return unorm, hinge


def _learners(kspec):
    _, kern = _np_kernel(kspec)
    return {
        "perceptron": KernelPerceptron(kern),
        "pa": KernelPassiveAggressive(kern, variant="PA"),
        "pa1": KernelPassiveAggressive(kern, variant="PA-I", C=0.1),
        "pa1_margin": KernelPassiveAggressive(kern, variant="PA-I", C=1.0, margin=0.5,
                                              intercept_scaling=0.7),  # fmt: skip
        "pa2": KernelPassiveAggressive(kern, variant="PA-II", C=0.1, fit_intercept=False),
    }


def _shared(name, n, binary):
    require_shared_data(name)
    X, y = load_shared(name)
    rows = np.random.default_rng(0).permutation(X.shape[0])[:n]
    X, y = X[rows], np.asarray(y)[rows]
    if binary:
        y = np.where(y == y.max(), 1, -1)
    return X, y


_SHARED = {
    "a9a": ("a9a", 400, True, ("rbf", {"gamma": 0.05})),
    "a9a-poly": ("a9a", 400, True, ("poly", {"gamma": 0.05, "coef0": 1.0, "degree": 2})),
    "dna-binary": ("dna", 300, True, ("rbf", {"gamma": 0.02})),
    "dna-3": ("dna", 300, False, ("poly", {"gamma": 0.01, "coef0": 1.0, "degree": 2})),
}


@pytest.mark.parametrize("case", sorted(_SHARED))
def test_bound_holds_on_shared_sets(case):
    name, n, binary, kspec = _SHARED[case]
    X, y = _shared(name, n, binary)
    k, _ = _np_kernel(kspec)
    for lname, est in _learners(kspec).items():
        r = bounds.report(est, X, y, show=False)
        where = f"{case} {lname}"
        _check(r, X, y, k, where)
        if lname in ("perceptron", "pa1"):
            # the default comparator is the batch optimum of the same problem (relative gap
            # 1e-4): no hypothesis has a lower primal, the averaged one included
            assert r["primal_comparator"] <= r["primal_averaged"] * (1 + 1e-3), where
        if lname == "pa" and binary and kspec[0] == "rbf":
            # RBF Gram matrices of distinct rows are positive definite: some u separates
            assert np.isfinite(r["bound"]), where


def _stream(seed, K, n=150, d=5, noise=0.1, sparse=False):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(K, d)) * 1.5
    yc = rng.integers(K, size=n)
    X = centres[yc] + rng.normal(size=(n, d))
    flip = rng.random(n) < noise
    yc[flip] = rng.integers(K, size=int(flip.sum()))
    y = np.array([10, 20, 30, 40])[yc]
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("K", [2, 3])
def test_bound_holds_on_random_streams(seed, K):
    kernels = [("rbf", {"gamma": 0.3}), ("poly", {"gamma": 0.2, "coef0": 1.0, "degree": 3})]
    kspec = kernels[seed % 2]
    X, y = _stream(seed, K, sparse=seed == 2)
    k, _ = _np_kernel(kspec)
    for lname, est in _learners(kspec).items():
        _check(bounds.report(est, X, y, show=False), X, y, k, f"seed {seed} K {K} {lname}")


def test_given_comparator():
    """The bound for a given u, minimised over its scale: never above the formula at u; u = 0
    gives the bound of the zero comparator (PA-I: max(R^2, 1/C) 2 C T)."""
    X, y = _stream(5, 3)
    k, kern = _np_kernel(("rbf", {"gamma": 0.3}))
    rng = np.random.default_rng(1)
    Z, A = X[:7], rng.normal(size=(7, 3))
    est = KernelPassiveAggressive(kern, variant="PA-I", C=0.5)
    r = bounds.report(est, X, y, comparator=(Z, A), show=False)
    unorm, hinge = _check(r, X, y, k, "given u")
    b2 = 1.0
    yc = np.searchsorted(np.unique(y), y)
    mu = _margins((k(X, Z) + b2) @ A, yc, False)
    u2 = np.einsum("sk,st,tk->", A, k(Z, Z) + b2, A)
    R2 = r["R"] ** 2
    at_u = max(R2, 2.0) * (u2 + 2 * 0.5 * np.maximum(1 - mu, 0).sum())
    assert r["bound"] <= at_u * (1 + 1e-12)
    # the primal at the comparator as given (before the rescaling)
    assert r["primal_comparator"] == pytest.approx(0.5 * u2 + 0.5 * np.maximum(1 - mu, 0).sum())
    r0 = bounds.report(est, X, y, comparator=(np.zeros((0, 5)), np.zeros((0, 3))), show=False)
    assert r0["bound"] == pytest.approx(max(R2, 2.0) * 2 * 0.5 * len(y))
    assert r0["comparator_norm"] == 0.0


@pytest.mark.parametrize("K", [2, 3])
def test_linear_kernel_equals_the_linear_report(K):
    """kernel='linear' runs the linear learner (docs/bounds.md); for the same comparator (W
    over the augmented features, written as u = sum_i a_i (z_i, b) with z_i the unit vectors
    and a zero row) both reports give the same numbers."""
    X, y = _stream(7, K, d=4)
    b = 0.8
    for lin, ker in [
        (PassiveAggressiveClassifier(variant="PA-I", C=0.3, intercept_scaling=b,
                                     average_power=0.0),
         KernelPassiveAggressive("linear", variant="PA-I", C=0.3, intercept_scaling=b)),
        (PassiveAggressiveClassifier(variant="PA-II", C=0.3, intercept_scaling=b,
                                     average_power=0.0),
         KernelPassiveAggressive("linear", variant="PA-II", C=0.3, intercept_scaling=b)),
        (Perceptron(intercept_scaling=b, average_power=0.0),
         KernelPerceptron("linear", intercept_scaling=b)),
    ]:  # fmt: skip
        W = bounds.report(lin, X, y, show=False)["comparator"]  # (d + 1, K'): last row b's
        rl = bounds.report(lin, X, y, comparator=W, show=False)  # both rescale the same u
        d = X.shape[1]
        Z = np.vstack([np.eye(d), np.zeros((1, d))])
        A = np.vstack([W[:d], (W[d] / b - W[:d].sum(axis=0))[None, :]])
        rk = bounds.report(ker, X, y, comparator=(Z, A), show=False)
        where = f"{type(ker).__name__} K={K}"
        for key in ("observed", "bound", "dual_objective", "primal_averaged",
                    "primal_comparator"):
            assert rk[key] == pytest.approx(rl[key], rel=1e-7), f"{where}: {key}"
        _check(rk, X, y, _np_kernel(("linear", {}))[0], where)


def test_refusals():
    X, y = _stream(3, 2)
    with pytest.raises(NotImplementedError, match="KernelCOPA"):
        bounds.report(KernelCOPA("rbf"), X, y, show=False)
    with pytest.raises(NotImplementedError, match="margin > 0"):
        bounds.report(KernelPassiveAggressive("rbf", margin=0.0), X, y, show=False)
    with pytest.raises(ValueError, match="budget removed"):
        bounds.report(KernelPerceptron("rbf", budget=3), X, y, show=False)
    with pytest.raises(ValueError, match="unit example weights"):
        bounds.report(KernelPerceptron("rbf", class_weight="balanced"), X, y, show=False)
    with pytest.raises(ValueError, match="shape"):
        bounds.report(KernelPerceptron("rbf"), X, y, comparator=(X[:3], np.ones((3, 2))),
                      show=False)  # fmt: skip
    with pytest.raises(ValueError, match="COPA only"):
        bounds.report(KernelPerceptron("rbf"), X, y, X_test=X, y_test=y, show=False)
    # a budget never reached is the same run, and covered
    r = bounds.report(KernelPerceptron("rbf", budget=10_000), X, y, show=False)
    assert r["observed"] <= r["bound"]
