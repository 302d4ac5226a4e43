"""Second-order learners: the compiled rounds against direct recomputations from the published
equations, the note's claims (update sets, bounds), selective sampling, bad input, model files,
and the scikit-learn estimator checks."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from reference_second_order import SQRT_HALF, cw_reference, cw_step_reference, minmax_reference
from sklearn.utils.estimator_checks import parametrize_with_checks

from onlinelearn import AROW, SCW, WeightedMinMax
from onlinelearn._core import second_order as SO
from onlinelearn.model_io import load_model, save_model
from onlinelearn.second_order.bounds import (
    augmented_rows,
    bound_terms,
    fit_comparator,
    svm_direction,
)


def _stream(n=200, d=5, K=3, seed=0, noise=1.0, norm=1.0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(K, d)) * 2
    y = rng.integers(0, K, n)
    X = centers[y] + noise * rng.normal(size=(n, d))
    X = norm * X / np.linalg.norm(X, axis=1, keepdims=True)
    return X, y


def _relerr(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


# ---------------------------------------------------------------- weighted min-max: exact rounds
@pytest.mark.parametrize("margin", ["fixed", "adaptive"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("seed,fmt", [(0, "dense64"), (1, "csr32"), (2, "dense32")])
def test_minmax_rounds_equal_direct_recomputation(margin, fit_intercept, seed, fmt):
    X, y = _stream(seed=seed, noise=1.5)
    b = 3.0
    est = WeightedMinMax(margin=margin, b=b, fit_intercept=fit_intercept)
    if fmt != "dense64":
        X = X.astype(np.float32)
    tr = est.partial_fit_trace(sp.csr_matrix(X) if fmt == "csr32" else X, y)
    X = X.astype(np.float64)
    Xa = augmented_rows(X, fit_intercept)
    ref = minmax_reference(Xa, y, 3, b, margin == "adaptive")
    np.testing.assert_array_equal(np.searchsorted(est.classes_, tr["pred"]), ref["pred"])
    np.testing.assert_array_equal(tr["update"], ref["update"])
    np.testing.assert_array_equal(tr["rival"], ref["rival"])
    np.testing.assert_allclose(tr["a"], ref["a"], rtol=1e-12)
    np.testing.assert_allclose(tr["delta"], ref["delta"], rtol=1e-9, atol=1e-12)
    Ainv = np.linalg.inv(ref["A"])
    assert _relerr(est.A_inv_, Ainv) < 1e-11
    W = np.vstack([est.coef_.T, est.intercept_[None, :]]) if fit_intercept else est.coef_.T
    assert _relerr(W, Ainv @ ref["B"]) < 1e-10
    # predictions are the direct formula argmax B' A^{-1} x
    Xt, _ = _stream(n=50, seed=seed + 10)
    direct = np.argmax(augmented_rows(Xt, fit_intercept) @ (Ainv @ ref["B"]), axis=1)
    np.testing.assert_array_equal(est.predict(Xt), est.classes_[direct])
    assert est.n_updates_ == int((ref["update"] > 0).sum())
    assert est.n_mistakes_ == int((ref["pred"] != y).sum())


@pytest.mark.parametrize("margin", ["fixed", "adaptive"])
def test_minmax_diagonal_equals_direct_recomputation(margin):
    X, y = _stream(n=150, d=6, seed=4, noise=1.5)
    b, K = 2.0, 3
    est = WeightedMinMax(margin=margin, b=b, covariance="diagonal", fit_intercept=False)
    tr = est.partial_fit_trace(sp.csr_matrix(X), y)
    A = np.full(6, b)
    B = np.zeros((6, K))
    for t in range(len(y)):
        x = X[t]
        f = (B / A[:, None]).T @ x
        others = [k for k in range(K) if k != y[t]]
        r = others[int(np.argmax(f[others]))]
        delta = (f[y[t]] - f[r]) * SQRT_HALF
        a = 1 / (1 - (x * x / A).sum())
        flag = 1 if delta <= 0 else (2 if margin == "adaptive" and delta <= (a - 1) / 2 else 0)
        assert tr["update"][t] == flag and tr["rival"][t] == r
        if flag:
            A = A + a * x * x
            B[:, y[t]] += a * x * SQRT_HALF
            B[:, r] -= a * x * SQRT_HALF
    np.testing.assert_allclose(est.A_inv_, 1 / A, rtol=1e-13)
    np.testing.assert_allclose(est.coef_.T, B / A[:, None], rtol=1e-10, atol=1e-14)


def test_minmax_long_stream_inverse_stays_exact():
    """Sherman-Morrison over thousands of updates (with the periodic re-inversion) equals the
    inverse of A = b I + sum a_t x_t x_t' built directly from the recorded a_t."""
    X, y = _stream(n=4000, d=12, K=4, seed=7, noise=3.0)
    est = WeightedMinMax(margin="adaptive", b=1.5, fit_intercept=False)
    tr = {k: [] for k in ("update", "a")}
    for chunk in np.array_split(np.arange(len(y)), 7):
        t = est.partial_fit_trace(X[chunk], y[chunk], classes=np.arange(4))
        tr["update"].append(t["update"])
        tr["a"].append(t["a"])
    upd = np.concatenate(tr["update"]) > 0
    a = np.concatenate(tr["a"])[upd]
    assert upd.sum() > 1000  # re-inversions (every 512 updates) happened
    A = 1.5 * np.eye(12) + (X[upd] * a[:, None]).T @ X[upd]
    assert _relerr(est.A_inv_, np.linalg.inv(A)) < 1e-9
    assert _relerr(est._state.arrays["A"], A) < 1e-12


def test_refresh_inverse_kernel():
    rng = np.random.default_rng(0)
    G = rng.normal(size=(8, 8))
    A = G @ G.T + 8 * np.eye(8)
    B = rng.normal(size=(8, 3))
    P, W = np.zeros((8, 8)), np.zeros((8, 3))
    SO.refresh_inverse(A, B, P, W)
    assert _relerr(P, np.linalg.inv(A)) < 1e-13
    assert _relerr(W, np.linalg.solve(A, B)) < 1e-12


def test_forster_identity_of_the_proof():
    """The per-round equality of the note's proof: on an update round, with f_t = B' A_{t-1}^{-1}
    x and l_t = ||y_t - f_t||^2, l_t + inf G_{t-1} - inf G_t = a^2 x' A_t^{-1} x - a + 1 where
    inf G = sum a_s ||y_s||^2 - tr(B' A^{-1} B)."""
    X, y = _stream(n=80, seed=3, noise=2.0)
    ref = minmax_reference(X, y, 3, 2.0, adaptive=True)
    A, B, sum_a = 2.0 * np.eye(5), np.zeros((5, 3)), 0.0
    checked = 0
    for t in range(len(y)):
        if not ref["update"][t]:
            continue
        x, a, r = X[t], ref["a"][t], ref["rival"][t]
        yt = np.zeros(3)
        yt[y[t]], yt[r] = SQRT_HALF, -SQRT_HALF
        f = B.T @ np.linalg.solve(A, x)
        G_before = sum_a - np.trace(B.T @ np.linalg.solve(A, B))
        A, B, sum_a = A + a * np.outer(x, x), B + a * np.outer(x, yt), sum_a + a
        G_after = sum_a - np.trace(B.T @ np.linalg.solve(A, B))
        lhs = np.sum((yt - f) ** 2) + G_before - G_after
        rhs = a * a * x @ np.linalg.solve(A, x) - a + 1
        assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-12)
        # and sigma_t = (a_t - 1) / 2 (our closed form)
        assert 0.5 * a * a * x @ np.linalg.solve(A, x) == pytest.approx((a - 1) / 2, rel=1e-9)
        checked += 1
    assert checked > 10


# ---------------------------------------------------------------- the note's claims
@pytest.mark.parametrize("seed", range(4))
def test_update_sets_are_what_the_note_says(seed):
    """Fixed margin: updates exactly on Delta <= 0, which contains every mistake.  Adaptive:
    updates exactly on M u D (Delta <= 0, or 0 < Delta <= sigma); both runs are identical up
    to the first D round, where only the adaptive one updates (its update set is a superset of
    the fixed one's there, and no claim is made after)."""
    X, y = _stream(n=300, seed=seed, noise=2.0)
    fx = WeightedMinMax(margin="fixed", b=2.5).partial_fit_trace(X, y)
    ad = WeightedMinMax(margin="adaptive", b=2.5).partial_fit_trace(X, y)
    for tr, adaptive in ((fx, False), (ad, True)):
        sigma = 0.5 * (tr["a"] - 1)
        expect = np.where(tr["delta"] <= 0, 1, np.where(adaptive & (tr["delta"] <= sigma), 2, 0))
        np.testing.assert_array_equal(tr["update"], expect)
        assert np.all(tr["update"][tr["pred"] != y] == 1)
    first_d = int(np.argmax(ad["update"] == 2))
    assert ad["update"][first_d] == 2
    np.testing.assert_array_equal(fx["update"][:first_d], ad["update"][:first_d])
    np.testing.assert_array_equal(fx["pred"][: first_d + 1], ad["pred"][: first_d + 1])
    assert fx["update"][first_d] == 0


@pytest.mark.parametrize("margin", ["fixed", "adaptive"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("norm", [0.5, 1.0])
def test_bounds_hold_for_several_comparators(margin, seed, norm):
    X, y = _stream(n=250, seed=seed, noise=2.5, norm=norm)
    b = 2.5
    est = WeightedMinMax(margin=margin, b=b)
    tr = est.partial_fit_trace(X, y)
    Xa = augmented_rows(X, True)
    adaptive = margin == "adaptive"
    U0 = svm_direction(Xa, y, 3)
    rng = np.random.default_rng(seed)
    comps = [np.zeros((6, 3)), U0, rng.normal(size=(6, 3))]
    for U in comps:
        chk = bound_terms(Xa, y, tr, b, U, adaptive)
        assert chk.mistakes <= chk.M
        assert chk.rhs >= chk.M
        assert chk.rhs_exact_sigma >= chk.M
        assert chk.rhs_exact_sigma <= chk.rhs + 1e-9  # sum sigma <= c log|A/b|
    fit = fit_comparator(Xa, y, tr, b, U0, adaptive)
    assert fit.rhs <= bound_terms(Xa, y, tr, b, np.zeros((6, 3)), adaptive).rhs + 1e-9
    assert fit.rhs >= fit.M >= fit.mistakes
    # the terms from their definitions
    upd = tr["update"] > 0
    A = b * np.eye(6) + (Xa[upd] * tr["a"][upd, None]).T @ Xa[upd]
    assert fit.logdet == pytest.approx(np.log(np.linalg.det(A / b)), rel=1e-9)
    assert fit.sum_sigma == pytest.approx(0.5 * (tr["a"][upd] - 1).sum(), rel=1e-12)


# ---------------------------------------------------------------- selective sampling
def test_queries_reduce_labels_and_follow_the_seeded_rule():
    X, y = _stream(n=400, seed=5, noise=1.0)
    full = WeightedMinMax(margin="adaptive", b=2.5).fit(X, y)
    q = WeightedMinMax(margin="adaptive", b=2.5, query="margin", c=0.05, random_state=3)
    tr = q.partial_fit_trace(X, y)
    assert full.n_queries_ == 400
    assert 0 < q.n_queries_ < 400
    assert q.n_mistakes_ == int((tr["pred"] != y).sum())
    u = np.random.default_rng(3).random(400)
    ref = minmax_reference(augmented_rows(X, True), y, 3, 2.5, True, u=u, c=0.05)
    np.testing.assert_array_equal(tr["update"], ref["update"])
    asked = u < 0.05 / (0.05 + np.abs(ref["delta"]))
    assert q.n_queries_ == int(asked.sum())
    assert np.all(tr["update"][~asked] == 0)
    more = WeightedMinMax(margin="adaptive", b=2.5, query="margin", c=5.0, random_state=3)
    more.fit(X, y)
    assert more.n_queries_ > q.n_queries_


# ---------------------------------------------------------------- AROW / SCW
CW = [
    ("AROW", lambda **k: AROW(r=0.7, **k), {"r": 0.7}),
    ("SCW-I", lambda **k: SCW(C=0.8, eta=0.8, **k), {"C": 0.8, "eta": 0.8}),
    ("SCW-II", lambda **k: SCW(variant="SCW-II", C=0.5, eta=0.7, **k), {"C": 0.5, "eta": 0.7}),
]


@pytest.mark.parametrize("name,make,kw", CW, ids=[c[0] for c in CW])
@pytest.mark.parametrize("K", [2, 4])
@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize("fmt", ["dense64", "csr32"])
def test_cw_equals_published_equations(name, make, kw, K, diagonal, fmt):
    X, y = _stream(n=120, d=5, K=K, seed=K, noise=1.5)
    X = 1.7 * X
    cov = "diagonal" if diagonal else "full"
    est = make(covariance=cov, fit_intercept=False, a=1.3)
    Xin = sp.csr_matrix(X.astype(np.float32)) if fmt == "csr32" else X
    pred = est.partial_fit_predict(Xin, y)
    Xr = X.astype(np.float32).astype(np.float64) if fmt == "csr32" else X
    ref_pred, W, S = cw_reference(Xr, y, K, name, diagonal=diagonal, a0=1.3, **kw)
    np.testing.assert_array_equal(pred, ref_pred)
    np.testing.assert_allclose(est.coef_.T, W, rtol=1e-9, atol=1e-12)
    cov_ = np.diag(est.covariance_) if diagonal else est.covariance_
    np.testing.assert_allclose(cov_, S, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "variant,code", [("AROW", SO.AROW), ("SCW-I", SO.SCW1), ("SCW-II", SO.SCW2)]
)
def test_cw_step_edge_values(variant, code):
    rng = np.random.default_rng(1)
    for _ in range(300):
        m = float(rng.choice([-1e6, -3.0, -1e-9, 0.0, 1e-9, 0.5, 0.99, 2.0, 1e6]))
        v = float(10.0 ** rng.uniform(-10, 8))
        C = float(10.0 ** rng.uniform(-6, 6))
        eta = float(rng.uniform(0.55, 0.999))
        r = float(10.0 ** rng.uniform(-6, 6))
        from scipy.stats import norm

        got = SO.cw_step(code, m, v, r, C, float(norm.ppf(eta)))
        ref = cw_step_reference(variant, m, v, r=r, C=C, eta=eta)
        np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-300)
        assert got[1] * v < 1.0 + 1e-12  # Sigma stays positive definite along x


def test_arow_binary_to_multiclass_keeps_decisions():
    X, y = _stream(n=100, K=2, seed=2)
    est = AROW().partial_fit(X, y)
    before = est.predict(X)
    est.partial_fit(X[:1], np.array([7]))
    assert est.coef_.shape == (3, 5)
    X2, _ = _stream(n=100, K=2, seed=9)
    # scores of classes 0 and 1 are -w/2, +w/2 (class 7 starts at 0 but may win after 1 update)
    s = est.decision_function(X)
    assert s.shape == (100, 3)
    assert np.all((s[:, 1] > s[:, 0]) == (before == 1))


# ---------------------------------------------------------------- bad input, state, files
def test_b_too_small_is_refused_and_changes_nothing():
    X, y = _stream(n=50, seed=0)
    est = WeightedMinMax(b=2.5).fit(X, y)
    snap = {k: v.copy() for k, v in est._state.arrays.items()}
    t = est.t_
    with pytest.raises(ValueError, match="b = 2.5"):
        est.partial_fit(3 * X, y)
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.partial_fit(np.full((2, 5), np.nan), y[:2])
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:, :3], y)
    with pytest.raises(ValueError):
        est.partial_fit(X[:0], y[:0])
    with pytest.raises(ValueError, match="b > max"):
        WeightedMinMax(b=0.5, fit_intercept=False).fit(X, y)
    assert est.t_ == t
    for k, v in snap.items():
        np.testing.assert_array_equal(est._state.arrays[k], v)
    auto = WeightedMinMax().fit(X, y)
    assert auto.b_ == pytest.approx(2 * 2.0)  # unit rows + constant feature: ||x||^2 = 2


def test_failed_update_restores_new_labels_too():
    X, y = _stream(n=50, seed=0)
    est = AROW().fit(X, y)
    coef = est.coef_.copy()
    with pytest.raises(ValueError):
        est.partial_fit(np.vstack([X[:2], [[np.inf] * 5]]), [0, 9, 1])
    assert list(est.classes_) == [0, 1, 2]
    np.testing.assert_array_equal(est.coef_, coef)


@pytest.mark.parametrize(
    "make",
    [
        lambda: WeightedMinMax(margin="adaptive", query="margin", c=0.5, random_state=1),
        lambda: WeightedMinMax(covariance="diagonal"),
        lambda: AROW(covariance="diagonal"),
        lambda: SCW(variant="SCW-II"),
    ],
)
def test_model_file_round_trip(make, tmp_path):
    X, y = _stream(n=120, seed=1)
    a, b = make(), make()
    a.partial_fit(X[:60], y[:60])
    save_model(a, tmp_path / "m.npz")
    c = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(c.predict(X), a.predict(X))
    # the loaded model continues exactly like the original (queries included)
    pa = a.partial_fit_predict(X[60:], y[60:])
    pc = c.partial_fit_predict(X[60:], y[60:])
    np.testing.assert_array_equal(pa, pc)
    np.testing.assert_allclose(c.coef_, a.coef_, rtol=1e-12)
    assert (c.t_, c.n_updates_, c.n_mistakes_) == (a.t_, a.n_updates_, a.n_mistakes_)
    b.partial_fit(X, y)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9, atol=1e-12)


def test_dense_and_sparse_agree():
    X, y = _stream(n=150, d=8, seed=6)
    X[np.abs(X) < 0.3] = 0.0
    for make in (lambda: WeightedMinMax(margin="adaptive"), lambda: SCW()):
        a = make().partial_fit_predict(X, y)
        b = make().partial_fit_predict(sp.csr_matrix(X), y)
        np.testing.assert_array_equal(a, b)


def test_one_class_and_merge_refusal():
    X, y = _stream(n=20, seed=0)
    est = WeightedMinMax().partial_fit(X, np.zeros(20, dtype=int))
    assert est.n_updates_ == 0 and np.all(est.predict(X) == 0)
    from onlinelearn import merge_models

    for m in (est, AROW().fit(X, y)):
        with pytest.raises(ValueError, match="merge_models does not apply"):
            merge_models([m, m])


#: no check is expected to fail
EXPECTED_FAILED: dict = {}


@parametrize_with_checks(
    [
        WeightedMinMax(),
        WeightedMinMax(margin="adaptive", covariance="diagonal", query="margin", c=10.0),
        AROW(),
        SCW(variant="SCW-II", covariance="diagonal"),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED,
)
def test_sklearn_compatible(estimator, check):
    name = getattr(check, "func", check).__name__
    if name == "check_array_api_input":
        # scikit-learn skips this one without SCIPY_ARRAY_API; what it would test does not
        # apply: the compiled core reads NumPy arrays only, and the estimators say so
        assert not estimator.__sklearn_tags__().array_api_support
        return
    check(estimator)


@pytest.mark.parametrize("sparse", [False, True])
def test_fit_shuffled_epochs_equal_passes_over_the_permuted_rows(sparse):
    X, y = _stream(n=90, seed=8)
    Xin = sp.csr_matrix(X) if sparse else X
    est = SCW(n_epochs=2, shuffle=True, random_state=5).fit(Xin, y)
    ref = SCW()
    rng = np.random.RandomState(5)
    for _ in range(2):
        o = rng.permutation(90)
        ref.partial_fit(X[o], y[o])
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12)
    assert est.t_ == 180 and est.n_mistakes_ == ref.n_mistakes_


@pytest.mark.parametrize("make", [lambda: WeightedMinMax(b=4.0), lambda: AROW()])
def test_changed_fit_intercept_or_covariance_is_refused(make):
    X, y = _stream(n=40, seed=1)
    est = make().fit(X, y)
    coef = est.coef_.copy()
    est.set_params(fit_intercept=False)
    with pytest.raises(ValueError, match="fit_intercept changed"):
        est.partial_fit(X, y)
    est.set_params(fit_intercept=True, covariance="diagonal")
    with pytest.raises(ValueError, match="covariance changed"):
        est.partial_fit(X, y)
    np.testing.assert_array_equal(est.coef_, coef)
