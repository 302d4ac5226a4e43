"""Online regressors: each step equals an independent solution of its own problem.

* eps-insensitive PA / PA-I / PA-II (Crammer et al. 2006, Sec. 5): one partial_fit row from a
  random w_t lands on the minimiser of the round's problem, found by scipy's SLSQP in w-space;
* squared-loss proximal step: the minimiser of 1/2||w - w_t||^2 + C/2 (<w,x> - y)^2 (L-BFGS);
* RLS after one pass = the weighted ridge solution of numpy's linear solver;
* scikit-learn's own PassiveAggressiveRegressor (no intercept, no shuffle) gives the same weights;
* bad input (NaN targets, shapes, empty batch) raises and changes nothing; model files round-trip.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.linear_model import PassiveAggressiveRegressor as SkPAR  # deprecated in 1.8
from sklearn.utils.estimator_checks import parametrize_with_checks

from onlinelearn import OnlineLeastSquares, PassiveAggressiveRegressor
from onlinelearn.model_io import load_model, save_model
from onlinelearn.regression import cumulative_online_loss, epsilon_insensitive_loss

_LOSS = {"PA-I": "epsilon_insensitive", "PA-II": "squared_epsilon_insensitive"}


def _pa_qp(w0, x, y, variant, C, eps):
    """min 1/2||w - w0||^2 + C xi (PA-I) / C xi^2 (PA-II) s.t. |<w,x> - y| <= eps + xi."""
    n = w0.shape[0]
    z0 = np.concatenate([w0, [max(abs(w0 @ x - y) - eps, 0.0)]])
    if variant == "PA":
        fun = lambda z: 0.5 * np.sum((z[:n] - w0) ** 2)  # noqa: E731
        bounds = [(None, None)] * n + [(0.0, 0.0)]
    elif variant == "PA-I":
        fun = lambda z: 0.5 * np.sum((z[:n] - w0) ** 2) + C * z[n]  # noqa: E731
        bounds = [(None, None)] * n + [(0.0, None)]
    else:
        fun = lambda z: 0.5 * np.sum((z[:n] - w0) ** 2) + C * z[n] ** 2  # noqa: E731
        bounds = [(None, None)] * n + [(None, None)]
    cons = [
        {"type": "ineq", "fun": lambda z: eps + z[n] - (z[:n] @ x - y)},
        {"type": "ineq", "fun": lambda z: eps + z[n] + (z[:n] @ x - y)},
    ]
    # the objective scaled by 1/max(1, C): the same minimiser, a problem SLSQP can take with C = 1e8
    s = 1.0 / max(1.0, C) if variant != "PA" else 1.0
    res = minimize(lambda z: s * fun(z), z0, method="SLSQP", bounds=bounds, constraints=cons,
                   options={"ftol": 1e-16, "maxiter": 1000})  # fmt: skip
    return res.x[:n], fun(res.x)


def _one_row(est, w0, x, y):
    """partial_fit one row (no intercept) starting from the weights w0."""
    est.partial_fit(np.zeros((1, w0.shape[0])), [0.0])
    est._w[:] = w0
    est.partial_fit(x[None, :], [y])
    return est._w.copy()


def _instances(n, seed):
    rng = np.random.default_rng(seed)
    for t in range(n):
        d = int(rng.integers(1, 6))
        x = rng.normal(size=d) * (rng.random(d) < 0.8)
        if t % 17 == 0:
            x[:] = 0.0  # zero row
        w0 = rng.normal(size=d)
        y = float(w0 @ x + rng.normal() * 3.0)
        eps = [0.0, 0.1, 1.0, 5.0][t % 4]
        C = float(10.0 ** rng.uniform(-4, 4)) if t % 5 else [1e-8, 1e8][t % 2]
        yield w0, x, y, eps, C


@pytest.mark.parametrize("variant", ["PA", "PA-I", "PA-II"])
def test_eps_insensitive_step_solves_its_problem(variant):
    for w0, x, y, eps, C in _instances(120, zlib.crc32(variant.encode())):
        C_est = float("inf") if variant == "PA" else C
        loss = _LOSS.get(variant, "epsilon_insensitive")
        est = PassiveAggressiveRegressor(C=C_est, epsilon=eps, loss=loss, fit_intercept=False)
        w = _one_row(est, w0, x, y)
        if not np.any(x):
            np.testing.assert_array_equal(w, w0)  # a zero row cannot change the prediction
            continue
        w_ref, f_ref = _pa_qp(w0, x, y, variant, C, eps)
        # compare objective values (the solver's accuracy) and the points
        xi = max(abs(w @ x - y) - eps, 0.0)
        f = 0.5 * np.sum((w - w0) ** 2) + {"PA": 0.0, "PA-I": C * xi, "PA-II": C * xi * xi}[variant]
        scale = 1.0 + abs(f_ref)
        assert f <= f_ref + 1e-6 * scale
        np.testing.assert_allclose(w, w_ref, atol=1e-4 * (1 + np.abs(w0).max()), rtol=1e-4)
        if variant == "PA":
            assert abs(w @ x - y) <= eps + 1e-9 * (1 + abs(y))


def test_squared_proximal_step_solves_its_problem():
    for w0, x, y, _, C in _instances(150, 7):
        est = OnlineLeastSquares(solver="proximal", C=C, fit_intercept=False)
        w = _one_row(est, w0, x, y)

        def obj(v, w0=w0, x=x, y=y, C=C):
            r = v @ x - y
            return 0.5 * np.sum((v - w0) ** 2) + 0.5 * C * r * r, (v - w0) + C * r * x

        res = minimize(obj, w0, jac=True, method="L-BFGS-B", options={"gtol": 1e-12})
        assert obj(w)[0] <= res.fun + 1e-9 * (1 + abs(res.fun))
        np.testing.assert_allclose(w, res.x, atol=1e-5 * (1 + np.abs(w0).max()))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_rls_is_the_ridge_solution(fit_intercept):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 5))
    X[rng.random(X.shape) < 0.3] = 0.0
    y = X @ rng.normal(size=5) + 2.0 + 0.1 * rng.normal(size=60)
    sw = rng.uniform(0.0, 3.0, size=60)
    alpha = 0.7
    for Xin in (X, sp.csr_matrix(X), X.astype(np.float32)):
        est = OnlineLeastSquares(solver="rls", alpha=alpha, fit_intercept=fit_intercept)
        est.partial_fit(Xin[:25], y[:25], sample_weight=sw[:25])
        est.partial_fit(Xin[25:], y[25:], sample_weight=sw[25:])
        Xa = np.asarray(Xin.todense() if sp.issparse(Xin) else Xin, dtype=np.float64)
        if fit_intercept:
            Xa = np.hstack([Xa, np.ones((60, 1))])
        w = np.linalg.solve(
            alpha * np.eye(Xa.shape[1]) + Xa.T @ (sw[:, None] * Xa), Xa.T @ (sw * y)
        )
        tol = 1e-5 if Xin.dtype == np.float32 else 1e-9
        np.testing.assert_allclose(est.coef_, w[:5], rtol=tol, atol=tol)
        assert est.intercept_ == pytest.approx(w[5] if fit_intercept else 0.0, abs=tol)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("loss", ["epsilon_insensitive", "squared_epsilon_insensitive"])
def test_same_weights_as_scikit_learn(loss):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 8))
    y = X @ rng.normal(size=8) + 0.3 * rng.normal(size=200)
    ours = PassiveAggressiveRegressor(C=0.5, epsilon=0.2, loss=loss, fit_intercept=False)
    ours.partial_fit(X, y)
    sk = SkPAR(C=0.5, epsilon=0.2, loss=loss, fit_intercept=False, shuffle=False)
    sk.partial_fit(X, y)
    np.testing.assert_allclose(ours.coef_, sk.coef_, rtol=1e-10, atol=1e-12)


def test_average_is_mean_of_iterates_and_layouts_agree():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 6)) * (rng.random((80, 6)) < 0.5)
    y = X @ rng.normal(size=6) + 1.0
    est = PassiveAggressiveRegressor(C=0.3, epsilon=0.1, average=True)
    est.partial_fit(X[:30], y[:30])
    est.partial_fit(X[30:], y[30:])
    # reference: plain Python PA-I with the intercept as a constant feature
    Xa = np.hstack([X, np.ones((80, 1))])
    w = np.zeros(7)
    iterates = []
    for x, t in zip(Xa, y, strict=True):
        r = t - w @ x
        ell = max(abs(r) - 0.1, 0.0)
        w = w + np.sign(r) * min(0.3, ell / (x @ x)) * x
        iterates.append(w.copy())
    mean = np.mean(iterates, axis=0)
    np.testing.assert_allclose(est.coef_, mean[:6], rtol=1e-10, atol=1e-12)
    assert est.intercept_ == pytest.approx(mean[6], rel=1e-10, abs=1e-12)
    for Xin in (sp.csr_matrix(X), X.astype(np.float32), sp.csr_matrix(X.astype(np.float32))):
        other = PassiveAggressiveRegressor(C=0.3, epsilon=0.1, average=True).partial_fit(Xin, y)
        tol = 1e-4 if Xin.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(other.coef_, mean[:6], rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "make", [lambda: PassiveAggressiveRegressor(), lambda: OnlineLeastSquares()]
)
def test_bad_input_changes_nothing(make):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 3))
    y = rng.normal(size=20)
    est = make().partial_fit(X, y)
    before = {k: v.copy() for k, v in est._get_state()[1].items()}
    y_nan = y.copy()
    y_nan[7] = np.nan
    bad = [
        (X, y_nan, "NaN"),
        (X, np.where(np.arange(20) == 3, np.inf, y), "NaN or infinity"),
        (X, y[:5], "rows"),
        (X[:, :2], y, "features"),
        (X[:0], y[:0], "sample"),
        (X, np.array(["a"] * 20), "numeric"),
        (X, np.c_[y, y], "1-D"),
    ]
    for Xb, yb, msg in bad:
        with pytest.raises(ValueError, match=msg):
            est.partial_fit(Xb, yb)
        for k, v in est._get_state()[1].items():
            np.testing.assert_array_equal(v, before[k])
    with pytest.raises(ValueError, match="NaN"):
        make().fit(X, y_nan)


def test_metrics_and_model_file(tmp_path):
    assert epsilon_insensitive_loss([0.0, 3.0], [1.0, 3.0], epsilon=0.5) == pytest.approx(0.25)
    assert epsilon_insensitive_loss([0.0], [2.0], epsilon=0.5, squared=True) == pytest.approx(2.25)
    np.testing.assert_allclose(
        cumulative_online_loss([0.0, 0.0], [1.0, -3.0], loss="epsilon_insensitive", epsilon=1.0),
        [0.0, 2.0],
    )
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 4))
    y = X.sum(axis=1)
    for est in (PassiveAggressiveRegressor(average=True), OnlineLeastSquares(alpha=0.1)):
        est.fit(X, y)
        save_model(est, tmp_path / "m.npz")
        back = load_model(tmp_path / "m.npz")
        assert type(back) is type(est)
        np.testing.assert_array_equal(back.predict(X), est.predict(X))
        back.partial_fit(X, y)
        est.partial_fit(X, y)
        np.testing.assert_array_equal(back.predict(X), est.predict(X))


_ONLINE_WEIGHTS = (
    "sample_weight multiplies C, the price of one round's slack: an online learner that sees "
    "a row twice takes two steps, which is not one step with twice the price"
)


def _expected_failures(est):
    if getattr(est, "solver", None) == "rls":
        return {}  # RLS is exact weighted ridge: repeating a row is the same as weight 2
    return {
        "check_sample_weight_equivalence_on_dense_data": _ONLINE_WEIGHTS,
        "check_sample_weight_equivalence_on_sparse_data": _ONLINE_WEIGHTS,
    }


@parametrize_with_checks(
    [
        PassiveAggressiveRegressor(random_state=0, n_epochs=20),
        OnlineLeastSquares(),
        OnlineLeastSquares(solver="proximal", n_epochs=20, random_state=0),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "make",
    [
        lambda: PassiveAggressiveRegressor(average=True),
        lambda: PassiveAggressiveRegressor(loss="squared_epsilon_insensitive"),
        lambda: OnlineLeastSquares(solver="proximal"),
        lambda: OnlineLeastSquares(),
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_X_found_by_the_pass_changes_nothing(make, dtype, bad):
    """The dense pass checks X as it reads it: a bad entry in a late row, after many updates of
    this very call, still raises the usual ValueError and leaves the model as it was."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 5)).astype(dtype)
    y = rng.normal(size=40)
    est = make().partial_fit(X, y)
    before = {k: v.copy() for k, v in est._get_state()[1].items()}
    Xb = X.copy()
    Xb[33, 2] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.partial_fit(Xb, y)
    for k, v in est._get_state()[1].items():
        np.testing.assert_array_equal(v, before[k])
    fresh = make()
    with pytest.raises(ValueError, match="NaN|infinity"):
        fresh.fit(Xb, y)
    assert not hasattr(fresh, "_w") and not hasattr(fresh, "n_features_in_")


def test_dense_pass_equals_csr_pass_with_huge_finite_rows():
    """A finite row whose squared norm overflows is not bad input: the dense pass (which only
    looks at a row when ||x||^2 is not finite) treats it as the CSR pass does."""
    rng = np.random.default_rng(6)
    for n_feat in (3, 13, 40):  # both sides of the unrolled dot product
        X = rng.normal(size=(60, n_feat))
        X[10] *= 1e160
        y = rng.normal(size=60)
        for make in (
            lambda: PassiveAggressiveRegressor(C=0.5, shuffle=False, n_epochs=2),
            lambda: PassiveAggressiveRegressor(
                loss="squared_epsilon_insensitive", average=True, random_state=1
            ),
            lambda: OnlineLeastSquares(solver="proximal", C=0.1, random_state=0, n_epochs=3),
        ):
            for sw in (None, rng.uniform(0.5, 2.0, size=60)):
                dense = make().fit(X, y, sample_weight=sw)
                csr = make().fit(sp.csr_matrix(X), y, sample_weight=sw)
                np.testing.assert_allclose(dense._w, csr._w, rtol=1e-12, atol=1e-12)
                assert dense.t_ == csr.t_ and dense.n_updates_ == csr.n_updates_
                assert np.isfinite(dense._w).all()


def test_parameter_checks_still_run_for_fresh_values():
    """Valid parameters are remembered per class; a new invalid value is still refused."""
    X = np.ones((3, 2))
    y = np.zeros(3)
    PassiveAggressiveRegressor(C=0.3).fit(X, y)
    for bad in (dict(C=-0.3), dict(epsilon=-1.0), dict(n_epochs=0), dict(loss="hinge")):
        with pytest.raises(ValueError):
            PassiveAggressiveRegressor(**bad).fit(X, y)
    with pytest.raises(ValueError):
        PassiveAggressiveRegressor(C="0.3").fit(X, y)
