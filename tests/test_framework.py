"""The framework's public axes and OnlineLearner: the generic 1-D dual solve against scipy, a
user's loss against independent solves on real data, the closed-form passes against the generic
one, and every built-in configuration against its named preset, bit for bit."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq, minimize_scalar
from scipy.special import expit
from sklearn.utils.estimator_checks import check_estimator

from onlinelearn import (
    COPA,
    OnlineLearner,
    OnlineLeastSquares,
    OnlineRegressor,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
    PNormPerceptron,
    Winnow,
)
from onlinelearn._core import generic as G
from onlinelearn.datasets import load_dna
from onlinelearn.framework import (
    Aggressive,
    Confusion,
    Conservative,
    CustomLoss,
    Entropy,
    EpsInsensitive,
    Euclidean,
    Hinge,
    Logistic,
    PNorm,
    Squared,
    SquaredHinge,
)
from onlinelearn.framework.losses import loss_cfuncs
from onlinelearn.model_io import load_model, save_model


# ---------------------------------------------------------------- a user's losses
@numba.njit
def user_hinge(z):
    return max(0.0, 1.0 - z)


@numba.njit
def user_hinge_d(z):
    return -1.0 if z < 1.0 else 0.0


@numba.njit
def user_logistic(z):
    if z > 0.0:
        return math.log1p(math.exp(-z))
    return -z + math.log1p(math.exp(z))


@numba.njit
def user_logistic_d(z):
    return -1.0 / (1.0 + math.exp(z))


@numba.njit
def huber(r):
    a = abs(r)
    return 0.5 * r * r if a <= 1.0 else a - 0.5


@numba.njit
def huber_d(r):
    if r > 1.0:
        return 1.0
    if r < -1.0:
        return -1.0
    return r


@numba.njit
def flat(z):  # zero loss everywhere: no step may ever move
    return 0.0


@numba.njit
def flat_d(z):
    return 0.0


@numba.njit
def smooth_hinge(z):  # the example of docs/framework.md, "Adding a learner"
    if z >= 1.0:
        return 0.0
    if z <= 0.0:
        return 0.5 - z
    return 0.5 * (1.0 - z) ** 2


@numba.njit
def smooth_hinge_d(z):
    return 0.0 if z >= 1.0 else (-1.0 if z <= 0.0 else z - 1.0)


@numba.njit
def eps_ins(r):
    return max(0.0, abs(r) - 0.1)


@numba.njit
def eps_ins_d(r):
    return 1.0 if r > 0.1 else (-1.0 if r < -0.1 else 0.0)


@numba.njit
def half_square(r):
    return 0.5 * r * r


@numba.njit
def half_square_d(r):
    return r


USER_HINGE = CustomLoss(user_hinge, user_hinge_d)
USER_LOGISTIC = CustomLoss(user_logistic, user_logistic_d)
HUBER = CustomLoss(huber, huber_d, kind="residual")

LOSSES = {
    "hinge": Hinge(),
    "hinge-margin-0.3": Hinge(0.3),
    "squared-hinge": SquaredHinge(),
    "logistic": Logistic(),
    "user-logistic": USER_LOGISTIC,
    "user-hinge": USER_HINGE,
    "flat": CustomLoss(flat, flat_d),
    "smooth-hinge": CustomLoss(smooth_hinge, smooth_hinge_d),
}


def _reference_tau(loss, z0, q, cap, squared):
    """The 1-D problem of the round solved by scipy: argmin_tau q tau^2 / 2 + cap L(z0 + tau q),
    L = l (PA-I) or l^2 (PA-II), by bounded Brent on the objective, polished by brentq on the
    optimality condition where the loss is smooth there."""
    def L(z):
        v = loss.value(z)
        return v * v if squared else v

    def h(t):
        return 0.5 * q * t * t + cap * L(z0 + t * q)

    t1 = -cap * (2 * loss.value(z0) if squared else 1.0) * loss.derivative(z0)
    if q == 0.0 or cap == 0.0 or t1 == 0.0:
        return 0.0, h
    lo, hi = sorted((0.0, t1))
    res = minimize_scalar(h, bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-14 * max(1.0, abs(t1))})  # fmt: skip
    return res.x, h


def _random_instances(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        z0 = float(rng.normal() * 3)
        q = float(10 ** rng.uniform(-4, 3))
        cap = float(10 ** rng.uniform(-6, 6))
        yield z0, q, cap
    # edge cases: zero x, tiny and huge C, a point on the kink, far beyond the margin
    yield from [(0.0, 0.0, 1.0), (0.5, 1.0, 1e-12), (-2.0, 1.0, 1e12), (1.0, 2.0, 1.0),
                (50.0, 1.0, 1.0), (-50.0, 1e-3, 1e6), (0.999999, 1e-8, 1e8)]  # fmt: skip


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("squared", [False, True], ids=["PA-I", "PA-II"])
def test_aggressive_tau_solves_the_round(name, squared):
    """The generic step is the minimiser of the round's 1-D problem: its objective is never
    above scipy's (1e-12 relative), and for the hinge it is PA's closed form to 1e-12 (or to
    the conditioning of the kink)."""
    loss = LOSSES[name]
    value, deriv = loss_cfuncs(loss)
    for z0, q, cap in _random_instances(150, seed=len(name) + squared):
        tau = G.aggressive_tau(value, deriv, z0, q, cap, squared)
        ref, h = _reference_tau(loss, z0, q, cap, squared)
        assert np.isfinite(tau)
        scale = abs(h(0.0)) + abs(h(ref)) + 1e-300
        # h itself is evaluated through z = z0 + tau q, known to an ulp: its rounding noise is
        # about cap |L'(z0)| eps |z|, which dominates on the ill-conditioned edge instances
        dl = abs((2 * loss.value(z0) if squared else 1.0) * loss.derivative(z0))
        noise = 16 * np.finfo(float).eps * cap * dl * max(1.0, abs(z0))
        assert h(tau) <= h(ref) + 1e-12 * scale + noise, (name, z0, q, cap, tau, ref)
        if isinstance(loss, Hinge) or loss is USER_HINGE:
            gamma = loss.margin if isinstance(loss, Hinge) else 1.0
            ell = max(0.0, gamma - z0)
            if squared:
                exact = ell / (q + 0.5 / cap) if q > 0 else 0.0  # PA-II, eq. (7-8)
            else:
                exact = min(cap, ell / q) if q > 0 else 0.0  # PA-I, eq. (7.11)
            # the kink is located through z0 + tau q, which is known to an ulp of z: tau to
            # eps |z| / q (the instance (0.999999, 1e-8, 1e8) is conditioned at 1e-10)
            cond = 4 * np.finfo(float).eps * max(abs(z0), gamma) / q if q > 0 else 0.0
            assert tau == pytest.approx(exact, rel=1e-12, abs=cond + 1e-300), (z0, q, cap)
        if name == "flat":
            assert tau == 0.0


@pytest.mark.parametrize("name", ["logistic", "user-logistic", "squared-hinge"])
def test_aggressive_tau_is_the_root_of_the_optimality_condition(name):
    """For smooth losses: tau* is the root of tau + C l'(z0 + tau q) found by scipy's brentq
    from the same bracket, to 1e-12 relative."""
    loss = LOSSES[name]
    value, deriv = loss_cfuncs(loss)
    for z0, q, cap in _random_instances(200, seed=7):
        tau = G.aggressive_tau(value, deriv, z0, q, cap, False)
        t1 = -cap * loss.derivative(z0)
        if q == 0.0 or t1 == 0.0:
            assert tau == 0.0
            continue
        lo, hi = sorted((0.0, t1))
        g = lambda t: t + cap * loss.derivative(z0 + t * q)  # noqa: E731, B023
        if g(lo) >= 0 or g(hi) <= 0:
            continue  # the root is an end of the bracket (checked by the objective test)
        ref = brentq(g, lo, hi, xtol=1e-300, rtol=8.9e-16, maxiter=500)
        assert tau == pytest.approx(ref, rel=1e-12, abs=1e-300)


# ---------------------------------------------------------------- a user's loss on real data
def _dna(n=400, binary=False, sparse=False):
    X, y = load_dna("train")
    X, y = X[:n], y[:n]
    X = X.toarray() if sp.issparse(X) else X
    if binary:
        keep = y != y.max()
        X, y = X[keep], y[keep]
    return (sp.csr_matrix(X) if sparse else np.ascontiguousarray(X)), y


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "multiclass"])
@pytest.mark.parametrize("C", [0.05, 1.0, 100.0])
def test_user_logistic_matches_an_independent_solve_each_round(binary, C):
    """A user's logistic loss, aggressive step, Euclidean link, no intercept: every round's
    update equals the step solved independently by scipy from the weights before it (1e-9),
    over hundreds of rounds of real data."""
    X, y = _dna(300, binary)
    clf = OnlineLearner(loss=USER_LOGISTIC, step=Aggressive(C), fit_intercept=False,
                        average=False)  # fmt: skip
    clf.partial_fit(X[:1], y[:1], classes=np.unique(y))
    W = clf.coef_.copy()
    classes = clf.classes_
    for i in range(1, X.shape[0]):
        x = X[i]
        s = W @ x
        if W.shape[0] == 1:
            sign = 1.0 if y[i] == classes[1] else -1.0
            z0, q = sign * s[0], x @ x
        else:
            k = int(np.searchsorted(classes, y[i]))
            rivals = np.where(np.arange(len(s)) == k, -np.inf, s)
            r = int(np.argmax(rivals))
            z0, q = s[k] - s[r], 2 * (x @ x)
        g = lambda t: t - C * expit(-(z0 + t * q))  # noqa: E731, B023
        tau = brentq(g, 0.0, C, xtol=1e-300, rtol=8.9e-16, maxiter=500) if q > 0 else 0.0
        expect = W.copy()
        if W.shape[0] == 1:
            expect[0] += tau * sign * x
        else:
            expect[k] += tau * x
            expect[r] -= tau * x
        clf.partial_fit(X[i : i + 1], y[i : i + 1])
        W = clf.coef_.copy()
        np.testing.assert_allclose(W, expect, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "multiclass"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_user_hinge_reproduces_pa1(binary, sparse, average, dtype):
    """float32 input with float64 weights: a step equal to 1e-16 would round differently into
    float32 weights, and 1e-9 is a float64 promise."""
    X, y = _dna(600, binary, sparse)
    X = X.astype(dtype)
    common = dict(C=0.1, average=average, random_state=3, n_epochs=3, tol=None, dtype="float64")
    ours = OnlineLearner(loss=USER_HINGE, step=Aggressive(0.1), average_power=2.0, **{
        k: v for k, v in common.items() if k != "C"}).fit(X, y)  # fmt: skip
    ref = PassiveAggressiveClassifier(**common).fit(X, y)  # (average_power=2.0: the generic
    # pass keeps the same weighted average)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-9, atol=1e-9)
    assert ours.n_updates_ == ref.n_updates_ and ours.n_mistakes_ == ref.n_mistakes_
    # progressive validation and the user's conservative hinge (the Perceptron)
    a = OnlineLearner(loss=USER_HINGE, step=Conservative(), average=average, dtype="float64")
    b = Perceptron(average=average, average_power=0.0, intercept_scaling=1.0, dtype="float64")
    np.testing.assert_array_equal(a.partial_fit_predict(X, y), b.partial_fit_predict(X, y))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-12)


def test_squared_hinge_pa1_is_hinge_pa2():
    """PA-II's problem (C xi^2) is the aggressive step on the squared hinge with the same C."""
    X, y = _dna(500)
    for C in (0.01, 1.0, 50.0):
        a = OnlineLearner(loss=SquaredHinge(), step=Aggressive(C), random_state=0, n_epochs=2,
                          tol=None).fit(X, y)  # fmt: skip
        b = PassiveAggressiveClassifier(variant="PA-II", C=C, random_state=0, n_epochs=2,
                                        tol=None, average_power=0.0).fit(X, y)  # fmt: skip
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-10)


# ---------------------------------------------------------------- presets, bit for bit
# (OnlineLearner's default is the uniform average, the named learners' t^2: average_power=2)
_PRESETS = [
    (lambda: Perceptron(intercept_scaling=1.0),
     lambda: OnlineLearner(Euclidean(), Hinge(0.0), Conservative(), average_power=2.0)),
    (lambda: PassiveAggressiveClassifier(variant="PA", average=False),
     lambda: OnlineLearner(Euclidean(), Hinge(), Aggressive(1.0, "PA"), average=False)),
    (lambda: PassiveAggressiveClassifier(C=0.3),
     lambda: OnlineLearner(Euclidean(), Hinge(), Aggressive(0.3), average_power=2.0)),
    (lambda: PassiveAggressiveClassifier(variant="PA-II", C=0.2, margin=0.5, average_power=0.0),
     lambda: OnlineLearner(Euclidean(), Hinge(0.5), Aggressive(0.2, "PA-II"))),
    (lambda: PassiveAggressiveClassifier(variant="PA-II", C=0.2, margin=0.5, average_power=3.0),
     lambda: OnlineLearner(Euclidean(), Hinge(0.5), Aggressive(0.2, "PA-II"), average_power=3.0)),
    (lambda: Winnow(eta=0.5, n_epochs=3),
     lambda: OnlineLearner(Entropy(eta=0.5), Hinge(0.1), Conservative(), n_epochs=3, tol=None,
                           average=False)),
    (lambda: Winnow(step="PA-I", C=0.5, margin=0.2, n_epochs=3, average=True),
     lambda: OnlineLearner(Entropy(), Hinge(0.2), Aggressive(0.5), n_epochs=3, tol=None)),
    (lambda: PNormPerceptron(p=3.0, n_epochs=3),
     lambda: OnlineLearner(PNorm(3.0), Hinge(), Conservative(), n_epochs=3, tol=None,
                           average=False)),
    (lambda: PNormPerceptron(step="PA-II", C=0.5, n_epochs=3),
     lambda: OnlineLearner(PNorm(), Hinge(), Aggressive(0.5, "PA-II"), n_epochs=3, tol=None,
                           average=False)),
    (lambda: COPA(C=0.5, class_weight="confusion"),
     lambda: OnlineLearner(Euclidean(), Confusion(), Aggressive(0.5), n_epochs=5, tol=None,
                           class_weight="confusion", average_power=2.0)),
]  # fmt: skip


@pytest.mark.parametrize("pair", range(len(_PRESETS)))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("binary", [False, True], ids=["multiclass", "binary"])
def test_presets_are_framework_configurations(pair, sparse, dtype, binary):
    """Each named learner is a point of the framework: the same configuration built from the
    public objects learns the same weights and predictions, bit for bit."""
    make_preset, make_learner = _PRESETS[pair]
    X, y = _dna(500, binary, sparse)
    X = X.astype(dtype)
    a, b = make_preset().set_params(random_state=1), make_learner().set_params(random_state=1)
    np.testing.assert_array_equal(a.partial_fit_predict(X[:200], y[:200]),
                                  b.partial_fit_predict(X[:200], y[:200]))  # fmt: skip
    np.testing.assert_array_equal(a.coef_, b.coef_)
    a.fit(X, y)
    b.fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


# ---------------------------------------------------------------- regression
def _regression(n=400, seed=0):
    X = _dna(n)[0].astype(np.float64)
    rng = np.random.default_rng(seed)
    y = X @ rng.normal(size=X.shape[1]) * 0.3 + rng.normal(size=n) * 0.1
    return X, y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_regressor_generic_solve_matches_the_closed_forms(sparse):
    """The regressors are configurations of OnlineRegressor (the same closed-form pass, bit for
    bit), and the generic solve of the same losses, given as CustomLoss, agrees to 1e-9."""
    X, y = _regression()
    Xs = sp.csr_matrix(X) if sparse else X
    cases = [
        (EpsInsensitive(0.1), CustomLoss(eps_ins, eps_ins_d, kind="residual"),
         Aggressive(0.5), dict(average=False),
         PassiveAggressiveRegressor(C=0.5, epsilon=0.1)),
        (EpsInsensitive(0.1), CustomLoss(eps_ins, eps_ins_d, kind="residual"),
         Aggressive(0.5, "PA-II"), dict(average=True),
         PassiveAggressiveRegressor(C=0.5, epsilon=0.1, loss="squared_epsilon_insensitive",
                                    average=True)),
        (Squared(), CustomLoss(half_square, half_square_d, kind="residual"),
         Aggressive(0.2), dict(average=False, n_epochs=1),
         OnlineLeastSquares(solver="proximal", C=0.2)),
    ]  # fmt: skip
    for loss, user, step, kw, preset in cases:
        a = OnlineRegressor(loss=loss, step=step, random_state=0, **kw).fit(Xs, y)
        b = preset.set_params(random_state=0).fit(Xs, y)
        np.testing.assert_array_equal(a.coef_, b.coef_)
        np.testing.assert_array_equal(a.predict(Xs), b.predict(Xs))
        g = OnlineRegressor(loss=user, step=step, random_state=0, **kw).fit(Xs, y)
        np.testing.assert_allclose(g.coef_, b.coef_, rtol=1e-9, atol=1e-12)


def test_user_huber_regression_each_round():
    """A user's Huber loss: each round's step is the minimiser of its 1-D problem (scipy)."""
    X, y = _regression(250)
    reg = OnlineRegressor(loss=HUBER, step=Aggressive(2.0), fit_intercept=False)
    reg.partial_fit(X[:1], y[:1])
    w = reg.coef_.copy()
    for i in range(1, X.shape[0]):
        x = X[i]
        r0, q = w @ x - y[i], x @ x
        res = minimize_scalar(lambda t: 0.5 * q * t * t + 2.0 * huber(r0 + t * q),  # noqa: B023
                              bounds=sorted((0.0, -2.0 * huber_d(r0))), method="bounded",
                              options={"xatol": 1e-15})  # fmt: skip
        reg.partial_fit(X[i : i + 1], y[i : i + 1])
        np.testing.assert_allclose(reg.coef_, w + res.x * x, rtol=1e-7, atol=1e-9)
        w = reg.coef_.copy()
    assert reg.score(X, y) > 0.5


# ---------------------------------------------------------------- the estimator contract
@pytest.mark.parametrize("est", [
    OnlineLearner(n_epochs=3),
    OnlineLearner(loss=Logistic(), step=Aggressive(0.5), n_epochs=3),
    OnlineLearner(loss=USER_HINGE, step="conservative", n_epochs=3),
    OnlineRegressor(),
    OnlineRegressor(loss=HUBER, step=Aggressive(0.5, "PA-II"), average=True),
], ids=repr)  # fmt: skip
def test_sklearn_check_estimator(est):
    from tests.test_estimators import EXPECTED_FAILED_CHECKS

    check_estimator(est, expected_failed_checks=EXPECTED_FAILED_CHECKS)


def test_model_files(tmp_path):
    X, y = _dna(300)
    for est in (OnlineLearner(loss=Logistic(), step=Aggressive(0.1), n_epochs=2),
                OnlineLearner(Entropy(eta=0.3), Hinge(0.1), Conservative(), n_epochs=2,
                              average=False),
                OnlineLearner(loss=Confusion(), class_weight="confusion", n_epochs=2)):  # fmt: skip
        est.set_params(random_state=0).fit(X, y)
        save_model(est, tmp_path / "m.npz")
        back = load_model(tmp_path / "m.npz")
        assert back.get_params() == est.get_params()
        np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
        back.partial_fit(X[:50], y[:50])
        est.partial_fit(X[:50], y[:50])
        np.testing.assert_array_equal(back.coef_, est.coef_)
    Xr, yr = _regression(100)
    reg = OnlineRegressor(loss=EpsInsensitive(0.2), random_state=0).fit(Xr, yr)
    save_model(reg, tmp_path / "r.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "r.npz").predict(Xr), reg.predict(Xr))
    user = OnlineLearner(loss=USER_LOGISTIC).fit(X, y)
    with pytest.raises(TypeError, match="CustomLoss cannot be saved"):
        save_model(user, tmp_path / "u.npz")


def test_bad_input_changes_nothing():
    X, y = _dna(200)
    clf = OnlineLearner(loss=USER_LOGISTIC, step=Aggressive(1.0)).fit(X, y)
    before = (clf.coef_.copy(), clf.t_, clf.n_updates_)
    bad = X[:10].copy()
    bad[3, 5] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(bad, y[:10])
    assert np.array_equal(clf.coef_, before[0]) and (clf.t_, clf.n_updates_) == before[1:]


@pytest.mark.parametrize("kwargs, match", [
    (dict(link=Entropy(), loss=Confusion()), "Euclidean link"),
    (dict(loss=Logistic(), step=Aggressive(variant="PA")), "PA-I"),
    (dict(loss=Squared()), "OnlineRegressor"),
    (dict(loss=Confusion(), step=Conservative()), "COPA"),
    (dict(class_weight="confusion"), "Confusion"),
])  # fmt: skip
def test_invalid_configurations_are_refused(kwargs, match):
    X, y = _dna(50)
    with pytest.raises(ValueError, match=match):
        OnlineLearner(**kwargs).fit(X, y)


def test_objects_validate_themselves():
    with pytest.raises(ValueError, match="variant"):
        Aggressive(1.0, "PA-III")
    with pytest.raises(ValueError, match="C must be"):
        Aggressive(-1.0)
    with pytest.raises(ValueError, match="eta"):
        Conservative(0.0)
    with pytest.raises(ValueError, match="kind"):
        CustomLoss(user_hinge, user_hinge_d, kind="ranking")
    assert OnlineRegressor(loss=HUBER).loss == HUBER
