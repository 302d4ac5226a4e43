"""onlinelearn.bounds.report for COPA (Theorem 2 of the COPA paper), the p-norm Perceptron
(thesis Cor. 7), PA (Crammer et al. 2006 Thm. 2, separable case) and PA-II (Thm. 5).

* COPA: the report's pieces against ``metrics.averaged_confusion_bound`` (another code path:
  it reads ``coef_`` after every row and sums the iterates itself), and observed <= bound at
  every checkpoint of the stream, on random streams and on the shared sets (held-out rows);
* the mistake bounds: observed <= bound at every prefix on the shared sets and on random
  streams; the bound recomputed here from its formula for the comparator at scale 1 is never
  below the report's (the report minimises over scales of u); PA's separable case finite on a
  separable stream, +inf (the theorem does not apply) on a stream with a contradiction.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data

from onlinelearn import COPA, PassiveAggressiveClassifier, PNormPerceptron, bounds
from onlinelearn.datasets import load_shared
from onlinelearn.metrics import averaged_confusion_bound


def _stream(seed, n=150, d=5, K=3, noise=1.0, sparse=False):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(K, d)) * 2.0
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    X = centres[y] + noise * rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.2] = 0.0
    return (sp.csr_matrix(X) if sparse else X), y


COPAS = [
    lambda: COPA(C=1.0),
    lambda: COPA(C=0.1, loss="hinge", fit_intercept=False),
    lambda: COPA(C=1e4, class_weight="confusion", intercept_scaling=2.0),
    lambda: COPA(C=0.5, average=False),  # report averages anyway: the theorem's h_bar
]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("case", range(len(COPAS)))
def test_copa_report_equals_averaged_confusion_bound(case, sparse):
    for seed in range(2):
        K = 2 + (seed + case) % 3
        X, y = _stream(seed, K=K, sparse=sparse)
        Xt, yt = _stream(seed, n=90, K=K, sparse=sparse)  # same centres, other draws
        Xt, yt = Xt[40:], yt[40:]
        r = bounds.report(COPAS[case](), X, y, X_test=Xt, y_test=yt, show=False)
        ref = averaged_confusion_bound(COPAS[case](), X, y, Xt, yt, delta=0.05)
        for key in ("observed", "bound", "empirical_norm", "deviation", "M", "observed_01",
                    "loss_max"):  # fmt: skip
            assert r[key] == pytest.approx(getattr(ref, key), rel=1e-9, abs=1e-12), key
        assert r["rounds"] == ref.n_rounds == len(y)
        assert r["curve_rounds"][-1] == len(y)
        assert "held-out" in r["observed_on"]
        assert np.isnan(r["dual_objective"]) and np.isnan(r["gap"])
        # in-sample (no held-out rows): the same as averaged_confusion_bound on (X, y) twice
        r2 = bounds.report(COPAS[case](), X, y, show=False)
        ref2 = averaged_confusion_bound(COPAS[case](), X, y, X, y, delta=0.05)
        assert r2["observed"] == pytest.approx(ref2.observed, rel=1e-9)
        assert r2["bound"] == pytest.approx(ref2.bound, rel=1e-9)
        assert "in-sample" in r2["observed_on"]


def _copa_message(name, r):
    return (
        f"{name}, {type(r['estimator']).__name__}: observed {r['observed']:.4g} > bound "
        f"{r['bound']:.4g} at some checkpoint ({r['theorem']}; observed on {r['observed_on']}). "
        "If test_copa_report_equals_averaged_confusion_bound passes, the pieces are computed "
        "as the statement reads, and the violation is either the 1 - delta event of the theorem "
        "or our reading of it (h_bar over all rounds against rows of C_hat averaged over each "
        "class's rounds, see docs/copa.md); else a bug in the code"
    )


@pytest.mark.parametrize("seed", range(4))
def test_copa_observed_within_the_bound_on_random_streams(seed):
    K = 2 + seed
    X, y = _stream(100 + seed, n=240, K=K, noise=[0.5, 1.5, 3.0, 1.0][seed], sparse=seed % 2)
    Xt, yt = _stream(100 + seed, n=400, K=K, noise=[0.5, 1.5, 3.0, 1.0][seed])
    Xt, yt = Xt[240:], yt[240:]
    for make in COPAS[:3]:
        r = bounds.report(make(), X, y, X_test=Xt, y_test=yt, show=False)
        assert np.all(r["curve_observed"] <= r["curve_bound"]), _copa_message("random", r)
        assert r["loss_max"] <= r["M"]
        assert r["observed_01"] <= (K - 1) * r["observed"] * (1 + 1e-12)


SETS = ["dna", "pendigits", "a9a", "w8a", "mnist", "news20"]


@functools.lru_cache(maxsize=2)
def _load(name):
    """The test split (the smaller file; the training one for the sets that have none)."""
    split = "train" if name in ("a8a", "w8a") else "test"
    require_shared_data(name, split)
    X, y = load_shared(name, split)
    return X, np.asarray(y)


def _split(name, n_stream, n_test):
    """n_stream rows of the set as the stream and n_test other rows as the held-out sample,
    drawn with a fixed seed (the files are sorted by label in places)."""
    X, y = _load(name)
    perm = np.random.default_rng(0).permutation(X.shape[0])
    rows, test_rows = perm[:n_stream], perm[n_stream : n_stream + n_test]
    return X[rows], y[rows], X[test_rows], y[test_rows]


@pytest.mark.parametrize("name", SETS)
def test_copa_observed_within_the_bound_on_the_shared_sets(name):
    X, y, Xt, yt = _split(name, 500, 500)
    r = bounds.report(COPA(C=0.1), X, y, X_test=Xt, y_test=yt, show=False)
    assert np.all(r["curve_observed"] <= r["curve_bound"]), _copa_message(name, r)
    assert r["loss_max"] <= r["M"], "M must bound every loss met: a bug in the code"


def _mistake_message(name, est, r):
    return (
        f"{name}, {type(est).__name__} {est.get_params().get('variant', '')}: observed "
        f"{r['observed']} > bound {r['bound']:.6g} at some prefix ({r['theorem']}). The "
        "comparator and the sums are computed independently of the learner, so this is a bug "
        "in our reading of the theorem if the learner's updates match their reference "
        "(tests/test_bounds.py::test_kept_dual_equals_dual_recomputed_from_tau, "
        "tests of the p-norm step), else a bug in the code"
    )


LEARNERS = [
    lambda: PNormPerceptron(),
    lambda: PNormPerceptron(p=3.0, fit_intercept=False),
    lambda: PassiveAggressiveClassifier(variant="PA"),
    lambda: PassiveAggressiveClassifier(variant="PA-II", C=0.1),
    lambda: PassiveAggressiveClassifier(variant="PA-II", C=0.05, margin=0.5,
                                        fit_intercept=False),  # fmt: skip
]


@pytest.mark.parametrize("name", SETS)
def test_mistakes_never_exceed_the_bound_on_the_shared_sets(name):
    X, y, _, _ = _split(name, 800, 0)
    for make in LEARNERS:
        est = make()
        r = bounds.report(est, X, y, show=False)
        assert np.all(r["curve_observed"] <= r["curve_bound"] + 1e-9), _mistake_message(
            name, est, r
        )
        if np.isfinite(r["gap"]):  # PA: +inf primal unless the averaged weights separate
            assert r["gap"] >= -1e-9 * max(1.0, abs(r["primal_averaged"])), (
                f"{name}: weak duality fails for {est}: a bug in the kept dual or the primal"
            )


def _margins(Xa, W, y, K):
    S = Xa @ W
    if K == 2:
        return np.where(y == 1, 1.0, -1.0) * S[:, 0]
    S2 = S.copy()
    S2[np.arange(len(y)), y] = -np.inf
    return S[np.arange(len(y)), y] - S2.max(1)


@pytest.mark.parametrize("K", [2, 4])
@pytest.mark.parametrize("sparse", [False, True])
def test_mistake_bounds_against_their_formulas(K, sparse):
    """The formula evaluated here for a fixed comparator (scale 1 is on the report's grid, so
    the report's bound is at most this) and observed <= bound on random streams."""
    for seed in range(3):
        X, y = _stream(seed, n=200, d=6, K=K, noise=2.0, sparse=sparse)
        Xd = np.asarray(X.todense()) if sparse else X
        Xa = np.hstack([Xd, np.ones((len(y), 1))])  # intercept_scaling = 1 below
        kappa = 1.0 if K == 2 else 2.0
        U = np.random.default_rng(seed).normal(size=(Xa.shape[1], 1 if K == 2 else K))
        m = _margins(Xa, U, y, K)
        # p-norm (Cor. 7), p = 3
        p, q = 3.0, 1.5
        r = bounds.report(PNormPerceptron(p=p, intercept_scaling=1.0), X, y, comparator=U,
                          show=False)  # fmt: skip
        L = np.maximum(1 - m, 0).sum()
        Xp = kappa ** (1 / p) * np.max(np.sum(np.abs(Xa) ** p, axis=1) ** (1 / p))
        uq = np.sum(np.abs(U) ** q) ** (1 / q)
        ref = L + Xp * uq * np.sqrt((p - 1) * L) + (p - 1) * Xp**2 * uq**2
        assert r["bound"] <= ref * (1 + 1e-9)
        assert np.all(r["curve_observed"] <= r["curve_bound"])
        # PA-II (Thm. 5), margin 0.5: PA-II(gamma, C) = gamma PA-II(1, C)
        C = 0.2
        r = bounds.report(PassiveAggressiveClassifier(variant="PA-II", C=C, margin=0.5,
                                                      intercept_scaling=1.0),
                          X, y, comparator=0.5 * U, show=False)  # fmt: skip
        R2 = kappa * np.max(np.sum(Xa * Xa, axis=1))
        ref = (R2 + 1 / (2 * C)) * (np.sum(U * U) + 2 * C * np.sum(np.maximum(1 - m, 0) ** 2))
        assert r["bound"] <= ref * (1 + 1e-9)
        assert np.all(r["curve_observed"] <= r["curve_bound"])


@pytest.mark.parametrize("K", [2, 3])
def test_pa_separable_case(K):
    rng = np.random.default_rng(K)
    d = 5
    Wt = rng.normal(size=(d, K))
    X = rng.normal(size=(400, d))
    S = X @ Wt
    y = S.argmax(1) if K > 2 else (S[:, 0] > 0).astype(int)
    m = _margins(X, Wt if K > 2 else Wt[:, :1], y, K)
    keep = m > 0.3  # a margin on every round: separable
    X, y = X[keep], y[keep]
    for margin in (1.0, 0.2):
        est = PassiveAggressiveClassifier(variant="PA", margin=margin, fit_intercept=False)
        r = bounds.report(est, X, y, show=False)
        assert np.isfinite(r["bound"])
        assert np.all(r["curve_observed"] <= r["curve_bound"]), _mistake_message("sep", est, r)
        # the comparator of the bound separates at margin gamma (the primal is finite there)
        U = r["comparator"]
        assert np.min(_margins(X, U, y, K)) >= margin * (1 - 1e-9)
        assert np.isfinite(r["primal_comparator"])  # 1/2 ||U||^2: no hinge left
        assert r["bound"] == pytest.approx(
            np.max(np.sum(X * X, 1)) * (1 if K == 2 else 2) * np.sum(U * U) / margin**2,
            rel=1e-9,
        )
        # the separable bound from a given separator: R^2 ||u||^2 / min margin^2
        Wc = Wt if K > 2 else Wt[:, :1]
        r2 = bounds.report(est, X, y, comparator=Wc, show=False)
        mm = np.min(_margins(X, Wc, y, K))
        ref = np.max(np.sum(X * X, 1)) * (1 if K == 2 else 2) * np.sum(Wc * Wc) / mm**2
        assert r2["bound"] <= ref * (1 + 1e-9)
    # a contradiction (the same point with two labels): no separator, the theorem is silent
    X2 = np.vstack([X, X[:1]])
    y2 = np.append(y, (y[0] + 1) % K)
    r = bounds.report(PassiveAggressiveClassifier(variant="PA"), X2, y2, show=False)
    assert r["bound"] == np.inf and "does not apply" in r["theorem"]


def test_report_arguments(tmp_path):
    X, y = _stream(0)
    with pytest.raises(ValueError, match="COPA only"):
        bounds.report(PNormPerceptron(), X, y, X_test=X, y_test=y)
    with pytest.raises(ValueError, match="both"):
        bounds.report(COPA(), X, y, X_test=X)
    with pytest.raises(ValueError, match="delta"):
        bounds.report(COPA(), X, y, delta=0.0)
    with pytest.raises(NotImplementedError, match="Corollary 7"):
        bounds.report(PNormPerceptron(step="PA-I"), X, y)
    with pytest.raises(NotImplementedError, match="margin > 0"):  # PA(0) never moves
        bounds.report(PassiveAggressiveClassifier(margin=0.0), X, y)
    r = bounds.report(COPA(), X, y, M=100.0, show=False)
    assert r["M"] == 100.0 and r["M_given"]
    pytest.importorskip("matplotlib")
    assert bounds.plot(r, tmp_path / "copa.png").stat().st_size > 1000
