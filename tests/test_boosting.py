"""PrimalDualBoost: the stump against brute force, each dual step against a numerical maximiser
of the dual (eq. 6.2-6.3), the exp(-2 gamma^2 T) bound and a dual that never decreases, the
comparison with scikit-learn's AdaBoost (SAMME = discrete AdaBoost on two classes), bad input,
model files and scikit-learn's estimator checks."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import check_estimator

from onlinelearn import PrimalDualBoost
from onlinelearn._core import boosting as B
from onlinelearn.boosting import WeakLearnerError
from onlinelearn.datasets import load_dna
from onlinelearn.model_io import load_model, save_model


def _dna_binary(split="train", pair=(1, 2)):
    X, y = load_dna(split)
    keep = np.isin(y, pair)
    return X[keep], y[keep]


def _random_problem(rng, m=40, d=4, sparse=False, discrete=False):
    X = rng.normal(size=(m, d))
    if discrete:
        X = np.round(X)
    if sparse:
        X = X * (rng.random((m, d)) < 0.5)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=m) > 0, 1, -1)
    return (sp.csr_matrix(X) if sparse else X), y


# ---------------------------------------------------------------- the weak learner
def _stump_scores(X, w, ypm, crit):
    """Brute force: the criterion of every (feature, threshold) split, thresholds between all
    distinct values of the dense matrix, plus the constant stump."""
    X = np.asarray(X.todense()) if sp.issparse(X) else X
    P, N = w[ypm > 0].sum(), w[ypm < 0].sum()

    def score(left):
        lp, ln = w[left & (ypm > 0)].sum(), w[left & (ypm < 0)].sum()
        rp, rn = P - lp, N - ln
        if crit == B.EDGE:
            return abs((rp - rn) - (lp - ln))
        s = 0.0
        if lp + ln > 0:
            s -= 2 * lp * ln / (lp + ln)
        if rp + rn > 0:
            s -= 2 * rp * rn / (rp + rn)
        return s

    best = score(np.zeros(len(w), bool))
    for j in range(X.shape[1]):
        u = np.unique(X[:, j])
        for a, b in zip(u[:-1], u[1:], strict=True):
            best = max(best, score(X[:, j] <= 0.5 * (a + b)))
    return best


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("crit", [B.EDGE, B.GINI])
def test_stump_is_the_best_split(sparse, crit):
    rng = np.random.default_rng(7 + sparse + 2 * crit)
    for trial in range(25):
        X, y = _random_problem(rng, m=int(rng.integers(5, 30)), d=3, sparse=sparse,
                               discrete=trial % 2 == 0)  # fmt: skip
        ypm = y.astype(float)
        w = rng.random(len(y))
        w /= w.sum()
        wy = w * ypm
        h = np.empty(len(y))
        if sparse:
            Xc = X.tocsc()
            Xc.eliminate_zeros()
            ip = Xc.indptr.astype(np.int64)
            ix = Xc.indices.astype(np.int64)
            rows, vals = B.presort_csc(ip, ix, Xc.data)
            j, thr, left, right = B.best_stump_csc(ip, rows, vals, wy, crit)
            B.stump_outputs_csc(ip, ix, Xc.data, j, thr, left, right, h)
        else:
            order, vals = B.presort_dense(np.ascontiguousarray(X.T))
            j, thr, left, right = B.best_stump_dense(order, vals, wy, crit)
            B.stump_outputs_dense(X, j, thr, left, right, h)
        # the outputs are those of the returned stump, and its criterion is the best one
        Xd = np.asarray(X.todense()) if sparse else X
        np.testing.assert_array_equal(h, np.where(Xd[:, j] > thr, right, left))
        goes_left = Xd[:, j] <= thr
        lp, ln = w[goes_left & (ypm > 0)].sum(), w[goes_left & (ypm < 0)].sum()
        P, N = w[ypm > 0].sum(), w[ypm < 0].sum()
        if crit == B.EDGE:
            got = float(np.dot(w, ypm * h))
            assert got == pytest.approx(_stump_scores(X, w, ypm, crit), abs=1e-12)
        else:
            rp, rn = P - lp, N - ln
            got = -sum(2 * a * b / (a + b) for a, b in ((lp, ln), (rp, rn)) if a + b > 0)
            assert got == pytest.approx(_stump_scores(X, w, ypm, crit), abs=1e-12)
            # each side votes its weighted majority
            assert right == (1.0 if rp > rn else -1.0) or rp == rn


# ---------------------------------------------------------------- the dual steps
def _replay(clf, X, y):
    """Recompute w_t and v_t of every round from the fitted stumps (independent of the fit)."""
    ypm = np.where(y == clf.classes_[1], 1.0, -1.0)
    Xd = np.asarray(X.todense()) if sp.issparse(X) else X
    feat, thr, left, right = clf.stumps_
    f = np.zeros(len(y))
    for t in range(clf.n_rounds_):
        h = np.where(Xd[:, feat[t]] > thr[t], right[t], left[t])
        a = -ypm * f
        w = np.exp(a - a.max())
        w /= w.sum()
        yield t, w, ypm * h
        f += clf.alphas_[t] * h


def _dual_gain(alpha, w, v):
    """Increase of D / c when alpha is added: -log sum_i w_i exp(-alpha v_i)."""
    return -math.log(float(np.dot(w, np.exp(-alpha * v))))


@pytest.mark.parametrize("C", [None, 0.3])
def test_aggressive_alpha_is_the_dual_maximiser(C):
    """alpha_t of AdaBoost (eq. 6.6) / its cap (eq. 6.5) = argmax over alpha in [0, 1/c] of the
    dual increase, found by a bounded scalar search that knows nothing of the closed form."""
    X, y = _dna_binary()
    clf = PrimalDualBoost(25, C=C).fit(X, y)
    for t, w, v in _replay(clf, X, y):
        hi = 20.0 if C is None else C
        res = minimize_scalar(lambda a: -_dual_gain(a, w, v), bounds=(0.0, hi),  # noqa: B023
                              method="bounded", options={"xatol": 1e-10})  # fmt: skip
        assert clf.alphas_[t] == pytest.approx(res.x, abs=1e-6)
        eps = w[v < 0].sum()
        assert clf.edges_[t] == pytest.approx(0.5 - eps, abs=1e-12)
        closed = 0.5 * math.log((1 - eps) / eps)
        assert clf.alphas_[t] == pytest.approx(closed if C is None else min(C, closed), rel=1e-12)


def test_gentle_and_conservative_steps():
    X, y = _dna_binary()
    g = PrimalDualBoost(15, step="gentle").fit(X, y)
    for t, w, v in _replay(g, X, y):
        assert g.alphas_[t] == pytest.approx(float(np.dot(w, v)), rel=1e-12)
    c = PrimalDualBoost(15, step="conservative", gamma=0.05).fit(X, y)
    np.testing.assert_allclose(c.alphas_, 0.1)


def _runs():
    rng = np.random.default_rng(0)
    for k in range(6):
        X, y = _random_problem(rng, m=200, d=6, sparse=k % 2 == 1)
        yield X, y
    for pair in ((1, 2), (1, 3), (2, 3)):
        yield _dna_binary(pair=pair)


@pytest.mark.parametrize("step", ["aggressive", "gentle", "conservative"])
@pytest.mark.parametrize("criterion", ["edge", "gini"])
def test_bound_and_monotone_dual_on_every_run(step, criterion):
    """0-1 error <= mean exp-loss <= exp(-2 sum gamma_t^2) <= exp(-2 gamma^2 T), gamma = min_t
    gamma_t, after every round (aggressive, gentle); the conservative step with its assumed gamma
    satisfies exp(-2 gamma^2 T).  The dual D/c = -log(mean exp-loss) never decreases."""
    for X, y in _runs():
        clf = PrimalDualBoost(40, step=step, criterion=criterion, gamma=0.02)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # conservative: may stop early
            clf.fit(X, y)
        T = np.arange(1, clf.n_rounds_ + 1)
        assert np.all(clf.train_errors_ <= clf.exp_losses_ + 1e-12)
        if step == "conservative":
            assert np.all(clf.edges_ >= 0.02)
            assert np.all(clf.exp_losses_ <= np.exp(-2 * 0.02**2 * T) + 1e-12)
        else:
            assert np.all(clf.exp_losses_ <= np.exp(-2 * np.cumsum(clf.edges_**2)) + 1e-12)
            gmin = np.minimum.accumulate(clf.edges_)
            np.testing.assert_allclose(clf.bounds_, np.exp(-2 * gmin**2 * T))
            assert np.all(clf.train_errors_ <= clf.bounds_)
        assert np.all(np.diff(np.concatenate([[0.0], clf.dual_])) >= -1e-12)
        # training error recomputed from the ensemble (train_errors_ counts ties y f = 0 as
        # errors, as the bound does; predict sends f = 0 to classes_[0])
        f = clf.decision_function(X)
        ypm = np.where(y == clf.classes_[1], 1, -1)
        # (rounding may move an exact tie of equal alphas by 1e-17 either way)
        err = clf.train_errors_[-1]
        assert np.mean(ypm * f < -1e-9) - 1e-12 <= err <= np.mean(ypm * f <= 1e-9) + 1e-12


def _phi(g, a):
    """max_{0 <= b <= a} (2 b g - b^2 / 2), by a grid (independent of the closed form)."""
    b = np.linspace(0.0, min(a, 1.0), 200001)  # (the maximiser min(a, 2 g) is <= 1)
    return float(np.max(2 * b * g - b * b / 2))


@pytest.mark.parametrize("pair", [(1, 2), (1, 3), (2, 3)])
def test_what_a_round_gains_when_the_cap_binds(pair):
    """Round by round on dna: with the cap C the dual D/c rises by exactly
    -log(w+ e^-alpha + w- e^alpha) >= max_{0 <= a <= C} (2 a gamma_t - a^2 / 2), which is below
    2 gamma_t^2 when C < 2 gamma_t (the claim of 2 gamma_t^2 fails there); bounds_ built on it
    bounds the exp-loss and the training error after every round.  The conservative step
    (alpha = 2 gamma) gains >= the same with a = 2 gamma."""
    X, y = _dna_binary(pair=pair)
    runs = [(dict(C=C), C) for C in (0.05, 0.2, 0.5, None)]
    runs.append((dict(step="conservative", gamma=0.03), 0.06))
    old_claim_failed = 0
    for kw, a in runs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # conservative: may stop early
            clf = PrimalDualBoost(40, **kw).fit(X, y)
        a = math.inf if a is None else a
        gain = np.diff(np.concatenate([[0.0], clf.dual_]))
        g, al = clf.edges_, clf.alphas_
        exact = -np.log((0.5 + g) * np.exp(-al) + (0.5 - g) * np.exp(al))
        np.testing.assert_allclose(gain, exact, rtol=1e-9, atol=1e-12)
        for t in range(clf.n_rounds_):
            assert gain[t] >= 2 * al[t] * g[t] - al[t] ** 2 / 2 - 1e-12
            assert gain[t] >= _phi(g[t], a) - 1e-9
            old_claim_failed += gain[t] < 2 * g[t] ** 2 - 1e-12
            if 2 * g[t] <= a:
                assert gain[t] >= 2 * g[t] ** 2 - 1e-12
        T = np.arange(1, clf.n_rounds_ + 1)
        gmin = np.minimum.accumulate(g)
        np.testing.assert_allclose(
            clf.bounds_, np.exp(-T * np.array([_phi(v, a) for v in gmin])), rtol=1e-6
        )
        assert np.all(clf.exp_losses_ <= clf.bounds_ * (1 + 1e-9))
        assert np.all(clf.train_errors_ <= clf.bounds_)
    assert old_claim_failed >= 40  # C = 0.05 binds below 2 gamma_t in every round


def test_conservative_stops_when_the_edge_assumption_fails():
    X, y = _dna_binary()
    with pytest.warns(UserWarning, match="below gamma"):
        clf = PrimalDualBoost(200, step="conservative", gamma=0.2).fit(X, y)
    assert clf.n_rounds_ < 200 and np.all(clf.edges_ >= 0.2)


# ---------------------------------------------------------------- against scikit-learn
@pytest.mark.parametrize("pair", [(1, 2), (1, 3), (2, 3)])
def test_matches_sklearn_adaboost_with_stumps(pair):
    """scikit-learn's AdaBoost is SAMME; on two classes its weights are 2 alpha_t of discrete
    AdaBoost.  With the Gini stump (scikit-learn's depth-1 tree) the ensembles coincide; with
    the thesis's largest-edge stump the test accuracy stays within 0.005 on these pairs."""
    X, y = _dna_binary("train", pair)
    Xt, yt = _dna_binary("test", pair)
    T = 30
    sk = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=T, random_state=0)
    sk.fit(X, y)
    ours = PrimalDualBoost(T, criterion="gini").fit(X, y)
    n = min(ours.n_rounds_, len(sk.estimator_weights_))
    np.testing.assert_allclose(2 * ours.alphas_[:n], sk.estimator_weights_[:n], rtol=1e-8)
    assert abs(ours.score(Xt, yt) - sk.score(Xt, yt)) <= 0.005
    edge = PrimalDualBoost(T).fit(X, y)
    assert edge.score(Xt, yt) >= sk.score(Xt, yt) - 0.02  # measured: see docs/boosting.md


def test_sklearn_weak_learner():
    X, y = _dna_binary()
    a = PrimalDualBoost(10, weak_learner=DecisionTreeClassifier(max_depth=1)).fit(X, y)
    b = PrimalDualBoost(10, criterion="gini").fit(X, y)
    np.testing.assert_allclose(a.alphas_, b.alphas_, rtol=1e-8)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    with pytest.raises(ValueError, match="model file"):
        a._get_state()


# ---------------------------------------------------------------- bad input
class _Contrarian(ClassifierMixin, BaseEstimator):
    """A 'weak learner' that is always wrong: weighted error 1."""

    def fit(self, X, y, sample_weight=None):
        self.y_ = np.asarray(y)
        return self

    def predict(self, X):
        return -self.y_[: X.shape[0]]


def test_weak_learner_without_edge_stops_and_changes_nothing():
    X, y = _dna_binary()
    clf = PrimalDualBoost(5).fit(X, y)
    before = (clf.alphas_.copy(), clf.stumps_)
    clf.set_params(weak_learner=_Contrarian())
    with pytest.raises(WeakLearnerError, match=">= 1/2"):
        clf.fit(X, y)
    np.testing.assert_array_equal(clf.alphas_, before[0])
    assert clf.stumps_ is before[1]


def test_bad_input():
    X, y = _dna_binary()
    with pytest.raises(ValueError, match="Only binary"):
        PrimalDualBoost(3).fit(*load_dna("train"))
    with pytest.raises(ValueError):
        PrimalDualBoost(3).fit(X, y[:-1])
    with pytest.raises(ValueError, match="sample_weight"):
        PrimalDualBoost(3).fit(X, y, sample_weight=-np.ones(len(y)))
    clf = PrimalDualBoost(3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :10])


def test_perfect_hypothesis_stops():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    clf = PrimalDualBoost(10).fit(X, y)
    assert clf.n_rounds_ == 1 and clf.train_errors_[-1] == 0.0
    np.testing.assert_array_equal(clf.predict(X), y)


def test_sample_weight_equals_repetition():
    rng = np.random.default_rng(1)
    X, y = _random_problem(rng, m=60, d=3, discrete=True)
    reps = rng.integers(1, 4, size=60)
    a = PrimalDualBoost(8).fit(X, y, sample_weight=reps)
    b = PrimalDualBoost(8).fit(np.repeat(X, reps, axis=0), np.repeat(y, reps))
    np.testing.assert_allclose(a.alphas_, b.alphas_, rtol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
def test_model_file_round_trip(tmp_path, sparse):
    X, y = _dna_binary()
    X = X if sparse else X.toarray()
    clf = PrimalDualBoost(12).fit(X, y)
    save_model(clf, tmp_path / "boost.npz")
    new = load_model(tmp_path / "boost.npz")
    np.testing.assert_array_equal(new.decision_function(X), clf.decision_function(X))
    np.testing.assert_array_equal(new.edges_, clf.edges_)


def test_dense_and_sparse_agree():
    X, y = _dna_binary()
    a = PrimalDualBoost(10).fit(X, y)
    b = PrimalDualBoost(10).fit(X.toarray(), y)
    np.testing.assert_allclose(a.alphas_, b.alphas_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X.toarray()))


def test_sklearn_estimator_checks():
    """check_estimator on the booster.  It is a binary classifier (tag multi_class=False, so
    the multiclass checks are skipped by scikit-learn itself).  ``predict`` passes the
    sample-weight equivalence checks; ``predict_proba`` cannot: its calibration learns from a
    held-out part of the rows (onlinelearn.shell.proba), and a repeated row can fall on both
    sides of that split where a weighted row falls on one."""
    reason = "the calibration's held-out split sees a repeated row twice, a weighted row once"
    check_estimator(PrimalDualBoost(n_estimators=5), expected_failed_checks={
        "check_sample_weight_equivalence_on_dense_data": reason,
        "check_sample_weight_equivalence_on_sparse_data": reason,
    })  # fmt: skip
