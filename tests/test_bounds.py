"""dual_objective_ (the kept dual) and onlinelearn.bounds.

* the kept dual equals the dual recomputed from scratch from the dual variables tau_t of an
  independent NumPy run of the same learner (D = sum gamma tau - [PA-II] tau^2/(4C) - f*(theta),
  theta = sum tau_t u_t);
* weak duality at every round: D_t <= P_t(w) for the current and the averaged weights, P_t the
  primal over the rounds so far (evaluated here, not by the library);
* on the shared data sets the observed mistakes never exceed the bound of report().
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data
from scipy.special import logsumexp

from onlinelearn import PassiveAggressiveClassifier, Perceptron, PNormPerceptron, Winnow, bounds
from onlinelearn.datasets import load_shared


def _stream(seed, n=120, d=6, K=2, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 3, size=d)
    X[rng.random(X.shape) < 0.3] = 0.0
    y = (X @ rng.normal(size=(d, K))).argmax(1)
    flip = rng.random(n) < 0.1
    y[flip] = rng.integers(0, K, flip.sum())
    return (sp.csr_matrix(X) if sparse else X), y


def _reference_euclid(X, y, K, step, C, gamma, b, eta=1.0):
    """The Euclidean learners in NumPy: theta (R, K or 1), and the dual from the tau_t."""
    X = np.asarray(X.todense() if sp.issparse(X) else X)
    Xa = np.hstack([X, np.full((len(X), 1), b)]) if b else X
    binary = K == 2
    th = np.zeros((Xa.shape[1], 1 if binary else K))
    taus, pa2 = [], 0.0
    for x, yi in zip(Xa, y, strict=True):
        s = x @ th
        if binary:
            sg = 1.0 if yi == 1 else -1.0
            m = sg * s[0]
        else:
            s2 = s.copy()
            s2[yi] = -np.inf
            r = int(np.argmax(s2))
            m = s[yi] - s[r]
        loss = max(gamma - m, 0.0)
        ksq = (1.0 if binary else 2.0) * (x @ x)
        if step == "conservative":
            tau = eta if m <= 0 else 0.0
        elif loss <= 0 or ksq <= 0:
            tau = 0.0
        elif step == "PA":
            tau = loss / ksq
        elif step == "PA-I":
            tau = min(C, loss / ksq)
        else:
            tau = loss / (ksq + 0.5 / C)
            pa2 += tau * tau / (4 * C)
        if tau > 0:
            if binary:
                th[:, 0] += tau * sg * x
            else:
                th[:, yi] += tau * x
                th[:, r] -= tau * x
        taus.append(tau)
    return th, gamma * np.sum(taus) - pa2 - 0.5 * np.sum(th * th)


EUCLID = [
    (lambda: Perceptron(fit_intercept=False, average=True), "conservative", 1.0, 1.0),
    (lambda: Perceptron(intercept_scaling=1.0), "conservative", 1.0, 1.0),
    (lambda: PassiveAggressiveClassifier(variant="PA", fit_intercept=False), "PA", 1.0, 1.0),
    (lambda: PassiveAggressiveClassifier(variant="PA-I", C=0.05), "PA-I", 0.05, 1.0),
    (lambda: PassiveAggressiveClassifier(variant="PA-I", C=0.05, fit_intercept=False,
                                         margin=0.5), "PA-I", 0.05, 0.5),  # fmt: skip
    (lambda: PassiveAggressiveClassifier(variant="PA-II", C=0.3, intercept_scaling=2.0),
     "PA-II", 0.3, 1.0),  # fmt: skip
]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("K", [2, 4])
@pytest.mark.parametrize("case", range(len(EUCLID)))
def test_kept_dual_equals_dual_recomputed_from_tau(case, K, sparse):
    make, step, C, gamma = EUCLID[case]
    for seed in range(3):
        X, y = _stream(seed, K=K, sparse=sparse)
        est = make()
        est.partial_fit(X[:50], y[:50], classes=np.arange(K))
        est.partial_fit(X[50:], y[50:])
        b = est._intercept_value()
        th, D = _reference_euclid(X, y, K, step, C, gamma, b)
        np.testing.assert_allclose(est._theta, th, rtol=1e-10, atol=1e-12)
        assert est.dual_objective_ == pytest.approx(D, rel=1e-10, abs=1e-10)


def _winnow_reference_dual(est, X, y, gamma):
    """D = gamma sum tau - f*(theta) with f*(theta) = log((1/n) sum exp(+-theta)), tau_t = eta
    on each update, theta the learner's own sum (so this checks the kept increments against
    the closed form at the final theta)."""
    th = est._theta.astype(np.float64).ravel()
    n = est._n_weights()
    fstar = logsumexp(np.concatenate([th, -th])) - np.log(n)
    return gamma * est.eta * est.n_updates_ - fstar


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("K", [2, 3])
def test_winnow_and_pnorm_kept_dual(K, sparse):
    for seed in range(3):
        X, y = _stream(seed, K=K, sparse=sparse)
        X = X / 3.0
        est = Winnow(eta=0.3, margin=0.2)
        est.partial_fit(X, y, classes=np.arange(K))
        assert est.dual_objective_ == pytest.approx(
            _winnow_reference_dual(est, X, y, 0.2), rel=1e-9, abs=1e-9
        )
        pn = PNormPerceptron(p=3.0, margin=1.0)
        pn.partial_fit(X, y, classes=np.arange(K))
        th = pn._theta.ravel()
        fstar = np.sum(np.abs(th) ** 3.0) ** (2 / 3.0) / (2 * (3.0 - 1))
        assert pn.dual_objective_ == pytest.approx(pn.n_updates_ - fstar, rel=1e-9, abs=1e-9)


def _primal(W, Xa, y, binary, gamma, C, f):
    S = Xa @ W
    if binary:
        m = np.where(y == 1, 1.0, -1.0) * S[:, 0]
    else:
        S2 = S.copy()
        S2[np.arange(len(y)), y] = -np.inf
        m = S[np.arange(len(y)), y] - S2.max(1)
    return f(W) + C * np.maximum(gamma - m, 0).sum()


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize(
    "make,C,gamma",
    [
        (lambda: Perceptron(), 1.0, 1.0),
        (lambda: PassiveAggressiveClassifier(variant="PA-I", C=0.1), 0.1, 1.0),
        (lambda: PassiveAggressiveClassifier(variant="PA-I", C=0.1, fit_intercept=False),
         0.1, 1.0),  # fmt: skip
    ],
)
def test_weak_duality_every_round_euclid(make, C, gamma, K, sparse):
    X, y = _stream(7, n=80, K=K, sparse=sparse)
    est = make()
    Xd = np.asarray(X.todense()) if sparse else X
    Ds = []
    for t in range(len(y)):
        est.partial_fit(X[t : t + 1], y[t : t + 1], classes=np.arange(K))
        b = est._intercept_value()
        Xa = np.hstack([Xd[: t + 1], np.full((t + 1, 1), b)]) if b else Xd[: t + 1]
        D = est.dual_objective_
        Ds.append(D)
        binary = est._theta.shape[1] == 1
        for W in (est._theta.astype(float), est._weights_matrix()):
            P = _primal(W, Xa, y[: t + 1], binary, gamma, C, lambda W: 0.5 * np.sum(W * W))
            assert D <= P + 1e-9 * max(1.0, abs(P)), (t, D, P)
    if isinstance(est, PassiveAggressiveClassifier):
        assert np.all(np.diff(Ds) >= -1e-12)  # the aggressive step never lowers the dual


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("K", [2, 3])
def test_weak_duality_every_round_winnow(K, sparse):
    X, y = _stream(3, n=60, K=K)
    X = X / 3.0
    Xin = sp.csr_matrix(X) if sparse else X
    est = Winnow(eta=0.3, margin=0.2)
    for t in range(len(y)):
        est.partial_fit(Xin[t : t + 1], y[t : t + 1], classes=np.arange(K))
        Xa = np.hstack([X[: t + 1], np.ones((t + 1, 1))])
        th = est._theta.astype(float)
        n = est._n_weights()
        # the current iterate w = grad f*(theta): f(w) = <theta, w> - f*(theta) (Fenchel)
        z = np.concatenate([th.ravel(), -th.ravel()])
        fstar = logsumexp(z) - np.log(n)
        w2 = np.exp(z - logsumexp(z))
        f_cur = float(z @ w2) - fstar
        W = (w2[: th.size] - w2[th.size :]).reshape(th.shape)
        binary = th.shape[1] == 1
        P = _primal(W, Xa, y[: t + 1], binary, 0.2, 0.3, lambda W, f=f_cur: f)
        assert est.dual_objective_ <= P + 1e-9, (t, est.dual_objective_, P)
        # the library's entropy of an averaged predictor is >= the current one's lower bound
        Wa = est._weights_matrix()
        Pa = bounds.primal_objective(est, Wa, Xa, y[: t + 1], binary)
        assert est.dual_objective_ <= Pa + 1e-9


def test_entropy_complexity_against_direct_minimisation():
    """f(v) = sup_theta <theta, v> - f*(theta) (Fenchel biconjugate), solved by L-BFGS."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    for k in range(6):
        v = rng.normal(size=4)
        v *= (0.05 + 0.15 * k) / np.abs(v).sum()
        n = 8

        def neg(th, v=v, n=n):
            z = np.concatenate([th, -th])
            lse = logsumexp(z)
            w = np.exp(z - lse)
            return -(th @ v - (lse - np.log(n))), -(v - (w[:4] - w[4:]))

        res = minimize(neg, np.zeros(4), jac=True, method="L-BFGS-B",
                       options={"gtol": 1e-12, "ftol": 1e-15})  # fmt: skip
        assert bounds.entropy_complexity(v, n) == pytest.approx(-res.fun, rel=1e-7, abs=1e-10)
    assert bounds.entropy_complexity(np.array([0.7, -0.6]), 4) == np.inf


def test_model_file_keeps_the_dual(tmp_path):
    from onlinelearn.model_io import load_model, save_model

    X, y = _stream(4, K=3)
    for est in (PassiveAggressiveClassifier(variant="PA-II", C=0.5), Winnow(eta=0.2)):
        est.partial_fit(X[:60], y[:60], classes=[0, 1, 2])
        save_model(est, tmp_path / "m.olm")
        back = load_model(tmp_path / "m.olm")
        assert back.dual_objective_ == est.dual_objective_
        back.partial_fit(X[60:], y[60:])
        est.partial_fit(X[60:], y[60:])
        assert back.dual_objective_ == est.dual_objective_


def test_growth_binary_to_multiclass_halves_the_dual():
    """A third label: w -> (-w/2, w/2, 0), D -> D/2, then the new row's PA-I increment."""
    X, y = _stream(1, K=3)
    two = y < 2
    C = 0.1
    est = PassiveAggressiveClassifier(variant="PA-I", C=C)
    est.partial_fit(X[two], y[two])
    D = est.dual_objective_
    w = est._theta[:, 0].astype(float)
    x = np.append(X[~two][0], 1.0)  # the intercept feature, b = 1
    Th = np.stack([-w / 2, w / 2, np.zeros_like(w)], axis=1)
    s = x @ Th
    margin = s[2] - max(s[0], s[1])
    ksq = 2 * (x @ x)
    tau = min(C, max(1 - margin, 0) / ksq)
    est.partial_fit(X[~two][:1], y[~two][:1])  # the third label arrives
    inc = tau * (1 - margin) - 0.5 * tau * tau * ksq
    assert est.dual_objective_ == pytest.approx(D / 2 + inc, rel=1e-12, abs=1e-12)
    # and weak duality on the multiclass problem of all the rounds
    W = est._theta.astype(float)
    Xa = np.hstack([np.vstack([X[two], X[~two][:1]]), np.ones((two.sum() + 1, 1))])
    yy = np.concatenate([y[two], y[~two][:1]])
    P = _primal(W, Xa, yy, False, 1.0, C, lambda W: 0.5 * np.sum(W * W))
    assert est.dual_objective_ <= P + 1e-9


SETS = ["dna", "pendigits", "a9a", "w8a", "mnist", "news20"]
N_ROWS = 1500


def _subset(name):
    """N_ROWS rows of the test split (the smaller file; the training one for the sets that
    have none) drawn with a fixed seed: the files are sorted by label in places."""
    split = "train" if name in ("a8a", "w8a") else "test"
    require_shared_data(name, split)
    X, y = load_shared(name, split)
    rows = np.random.default_rng(0).permutation(X.shape[0])[:N_ROWS]
    return X[rows], np.asarray(y)[rows]


@pytest.mark.parametrize("name", SETS)
def test_observed_never_exceeds_the_bound(name):
    X, y = _subset(name)
    _check_bounds_on(name, X, y)


#: the classification sets of the shared folder's PMLB part (sleep included: 5 classes)
PMLB_SETS = ["adult", "connect_4", "krkopt", "mushroom", "optdigits", "segmentation", "shuttle",
             "sleep", "spambase", "texture", "vowel", "waveform_40"]  # fmt: skip


@pytest.mark.parametrize("name", ["a8a"] + [f"pmlb/{n}" for n in PMLB_SETS])
def test_observed_never_exceeds_the_bound_on_the_other_shared_sets(name):
    """The same on every other labelled set of the shared folder (600 rows, fixed seed; the
    PMLB features as they come, unscaled)."""
    if name == "a8a":
        X, y = _subset(name)
        X, y = X[:600], y[:600]
    else:
        from onlinelearn.datasets import load_pmlb

        require_shared_data(name)
        X, y = load_pmlb(name.split("/", 1)[1])
        rows = np.random.default_rng(0).permutation(X.shape[0])[:600]
        X, y = X[rows], np.asarray(y)[rows]
    _check_bounds_on(name, X, y)


def _check_bounds_on(name, X, y):
    for est in (Perceptron(), PassiveAggressiveClassifier(variant="PA-I", C=0.1),
                Winnow(eta=0.5)):  # fmt: skip
        r = bounds.report(est, X, y, show=False)
        assert np.all(r["curve_observed"] <= r["curve_bound"] + 1e-9), (
            f"{name}, {type(est).__name__}: observed {r['observed']} > bound {r['bound']}: "
            "the comparator and the sums are computed independently of the learner, so a "
            "violation at a prefix is a bug in our reading of the theorem "
            f"({r['theorem']}) if the learner's updates match its reference "
            "(test_kept_dual_equals_dual_recomputed_from_tau), else a bug in the code"
        )
        assert r["gap"] >= -1e-9 * max(1.0, abs(r["primal_averaged"])), (
            f"{name}, {type(est).__name__}: weak duality fails (dual {r['dual_objective']} > "
            f"primal {r['primal_averaged']}): a bug in the kept dual"
        )
        assert r["primal_comparator"] >= r["dual_objective"] - 1e-9 * abs(r["dual_objective"])


def test_report_mapping_plot_and_copa(tmp_path, capsys):
    from onlinelearn import COPA
    from onlinelearn.datasets import load_dna

    X, y = load_dna("train")
    X, y = X[:400], y[:400]
    r = bounds.report(Perceptron(), X, y, plot_to=None)
    for key in ("observed", "bound", "quantity", "theorem", "dual_objective",
                "primal_averaged", "gap"):  # fmt: skip
        assert key in r
    assert r["observed"] == int(r["estimator"].n_mistakes_)
    assert "Corollary 5" in capsys.readouterr().out
    c = bounds.report(COPA(), X, y)  # Theorem 2 of the COPA paper (tests/test_bounds_theorems.py)
    assert "Theorem 2" in c["theorem"] and c["observed"] <= c["bound"]
    assert "in-sample" in c["observed_on"]
    pytest.importorskip("matplotlib")
    path = bounds.plot(r, tmp_path / "b.png")
    assert path.stat().st_size > 1000


@pytest.mark.parametrize("K", [2, 3])
def test_online_learner_keeps_the_presets_dual_and_nan_where_none(K):
    from onlinelearn import COPA, OnlineLearner
    from onlinelearn.framework import Aggressive, Conservative, Euclidean, Hinge, SquaredHinge

    X, y = _stream(2, K=K)
    pairs = [
        (OnlineLearner(Euclidean(), Hinge(1.0), Aggressive(0.2, "PA-I")),
         PassiveAggressiveClassifier(variant="PA-I", C=0.2)),
        (OnlineLearner(Euclidean(), Hinge(0.0), Conservative()), Perceptron(intercept_scaling=1.0)),
    ]  # fmt: skip
    for ours, preset in pairs:
        ours.partial_fit(X, y, classes=np.arange(K))
        preset.partial_fit(X, y, classes=np.arange(K))
        assert np.isfinite(ours.dual_objective_)
        assert ours.dual_objective_ == preset.dual_objective_
    for est in (
        OnlineLearner(Euclidean(), SquaredHinge(), Aggressive(0.2, "PA-I")),  # another loss
        PassiveAggressiveClassifier(constraint="l1", radius=5.0),  # projected updates
        COPA(),
        Winnow(self_tuned=True, average=False),
    ):
        est.partial_fit(X, y, classes=np.arange(K))
        assert np.isnan(est.dual_objective_), type(est).__name__


def _reference_growth(Xa, y, step, C, gamma):
    """The binary learner until row 60 (label 2), then its columns (-w/2, w/2, 0) on the
    multiclass hinge; the dual of all the rounds from the variables: the binary rounds'
    tau_t halved (they are the multiclass variables that give the same theta)."""
    th, taus, K = np.zeros((Xa.shape[1], 1)), [], 2
    for t, (x, yi) in enumerate(zip(Xa, y, strict=True)):
        if t == 60:
            w = th[:, 0]
            th, K = np.stack([-w / 2, w / 2, np.zeros_like(w)], axis=1), 3
            taus = [t / 2 for t in taus]
        s = x @ th
        if K == 2:
            sg = 1.0 if yi == 1 else -1.0
            m, ksq = sg * s[0], x @ x
        else:
            s2 = s.copy()
            s2[yi] = -np.inf
            r = int(np.argmax(s2))
            m, ksq = s[yi] - s[r], 2.0 * (x @ x)
        loss = max(gamma - m, 0.0)
        tau = 0.0
        if loss > 0 and ksq > 0:
            tau = {"PA": loss / ksq, "PA-I": min(C, loss / ksq),
                   "PA-II": loss / (ksq + 0.5 / C)}[step]  # fmt: skip
        if tau > 0:
            if K == 2:
                th[:, 0] += tau * sg * x
            else:
                th[:, yi] += tau * x
                th[:, r] -= tau * x
        taus.append(tau)
    taus = np.array(taus)
    quad = np.sum(taus**2) / (4 * C) if step == "PA-II" else 0.0
    return th, gamma * taus.sum() - quad - 0.5 * np.sum(th * th)


@pytest.mark.parametrize("step", ["PA", "PA-I", "PA-II"])
@pytest.mark.parametrize("seed", range(4))
def test_growth_keeps_the_dual_of_the_halved_variables(step, seed):
    """A binary model meets a third label: the kept D equals the dual recomputed from the
    variables (D / 2 + Q / 4 for PA-II, whose terms tau^2 / (4 C) are quartered), and the
    model file keeps Q so that a growth after loading stays exact."""
    X, y = _stream(seed, n=150, K=3)
    first = int(np.flatnonzero(y == 2)[0])
    rest = np.flatnonzero(np.arange(len(y)) != first)
    order = np.r_[np.flatnonzero(y != 2)[:60], first, rest[60:]]
    X, y = X[order], y[order]
    C = 0.3
    est = PassiveAggressiveClassifier(variant=step, C=C, intercept_scaling=1.0)
    est.partial_fit(X[:30], y[:30])
    est.partial_fit(X[30:60], y[30:60])
    est.partial_fit(X[60:], y[60:])  # the labels grow as this call starts
    Xa = np.hstack([X, np.ones((len(X), 1))])
    th, D = _reference_growth(Xa, y, step, C, 1.0)
    np.testing.assert_allclose(est._theta, th, rtol=1e-10, atol=1e-12)
    assert est.dual_objective_ == pytest.approx(D, rel=1e-10, abs=1e-10)
