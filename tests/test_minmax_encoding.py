"""WeightedMinMax's label encodings ('difference' and 'one-hot'): every round against an
independent solve of the problem the round solves,

    U_t = argmin_U  b ||U||_F^2 + sum_{s in Z, s <= t} a_s ||y_s - U' x_s||^2,

(scipy least squares on the stacked system [sqrt(a_s) x_s'; sqrt(b) I] U = [sqrt(a_s) y_s'; 0]),
with the decisions of each round (prediction, rival, a_t, update flag, query) recomputed from
U_{t-1}; on many random instances and edge cases (zero rows, duplicated rows, rows of norm
close to sqrt b, two classes, float32 / CSR input, several calls, selective sampling); plus
the diagonal covariance, model files (old files without the parameter load as 'difference')
and scikit-learn's checks for the one-hot encoding."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from reference_second_order import SQRT_HALF, minmax_reference
from sklearn.utils.estimator_checks import parametrize_with_checks

from onlinelearn import WeightedMinMax
from onlinelearn.model_io import load_model, save_model
from onlinelearn.second_order.bounds import augmented_rows

ENCODINGS = ["difference", "one-hot"]


def _label_vector(y, r, K, encoding):
    v = np.zeros(K)
    if encoding == "one-hot":
        v[y] = 1.0
    else:
        v[y], v[r] = SQRT_HALF, -SQRT_HALF
    return v


def _ridge(Xz, Yz, az, b):
    """argmin_U b ||U||^2 + sum a_s ||y_s - U' x_s||^2 by least squares (no normal equations)."""
    R, K = Xz.shape[1], Yz.shape[1]
    w = np.sqrt(az)[:, None]
    M = np.vstack([Xz * w, np.sqrt(b) * np.eye(R)])
    T = np.vstack([Yz * w, np.zeros((R, K))])
    return scipy.linalg.lstsq(M, T)[0]


def _check_rounds(Xa, y, K, b, tr, encoding, adaptive, u=None, c=1.0):
    """Replay the run from the independent solve: the decisions of every round and the final U."""
    n, R = Xa.shape
    Z, Ys, As = [], [], []
    for t in range(n):
        x = Xa[t]
        U = _ridge(Xa[Z], np.array(Ys).reshape(-1, K), np.array(As), b) if Z else np.zeros((R, K))
        f = U.T @ x
        A = b * np.eye(R) + (Xa[Z] * np.array(As)[:, None]).T @ Xa[Z] if Z else b * np.eye(R)
        m = x @ np.linalg.solve(A, x)
        a = 1.0 / (1.0 - m)
        others = [k for k in range(K) if k != y[t]]
        # the rival: a highest-scoring wrong class (ties, e.g. the exact zeros of classes not
        # seen yet, may be broken differently by the solver's last bits: then the run's own)
        r = int(tr["rival"][t])
        assert r != y[t] and f[r] == pytest.approx(f[others].max(), rel=1e-9, abs=1e-12), t
        delta = (f[y[t]] - f[r]) * SQRT_HALF
        sigma = 0.5 * a * a * x @ np.linalg.solve(A + a * np.outer(x, x), x)
        flag = 1 if delta <= 0 else (2 if adaptive and delta <= sigma else 0)
        if u is not None and not u[t] < c / (c + abs(delta)):
            flag = 0
        assert tr["update"][t] == flag, t
        assert tr["a"][t] == pytest.approx(a, rel=1e-10)
        assert tr["delta"][t] == pytest.approx(delta, rel=1e-8, abs=1e-10)
        assert f[tr["pred_code"][t]] == pytest.approx(f.max(), rel=1e-9, abs=1e-12)
        if flag:
            Z.append(t)
            Ys.append(_label_vector(y[t], r, K, encoding))
            As.append(a)
    return _ridge(Xa[Z], np.array(Ys).reshape(-1, K), np.array(As), b) if Z else np.zeros((R, K))


def _instance(kind, seed):
    """(X, y, K, b, fit_intercept) of a random instance of the given kind."""
    rng = np.random.default_rng(seed)
    K = 2 if kind == "two-classes" else int(rng.integers(3, 6))
    n, d = int(rng.integers(40, 90)), int(rng.integers(2, 7))
    centers = rng.normal(size=(K, d)) * 2
    y = rng.integers(0, K, n)
    X = centers[y] + rng.normal(scale=rng.uniform(0.5, 3.0), size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X *= rng.uniform(0.2, 2.0)
    fit_intercept = bool(rng.integers(2))
    if kind == "zero-rows":
        X[rng.random(n) < 0.3] = 0.0
        fit_intercept = False
    elif kind == "duplicates":
        idx = rng.integers(0, 6, n)
        X, y = X[idx], y[idx]
    r2 = float((X**2).sum(axis=1).max()) + (1.0 if fit_intercept else 0.0)
    if kind == "tight-b":  # ||x||^2 close to b: a_t large
        b = r2 * 1.02
    else:
        b = r2 * rng.uniform(1.2, 4.0) if r2 > 0 else 1.0
    return X, y, K, b, fit_intercept


KINDS = ["plain", "two-classes", "zero-rows", "duplicates", "tight-b"]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("margin", ["fixed", "adaptive"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(3))
def test_rounds_equal_independent_ridge_solve(encoding, margin, kind, seed):
    X, y, K, b, fit_intercept = _instance(kind, 100 * seed + KINDS.index(kind))
    fmt = ["dense64", "csr32", "dense32"][seed]
    if fmt != "dense64":
        X = X.astype(np.float32)
    est = WeightedMinMax(margin=margin, b=b, fit_intercept=fit_intercept, label_encoding=encoding)
    Xin = sp.csr_matrix(X) if fmt == "csr32" else X
    # several calls (the class set given up front)
    parts = np.array_split(np.arange(len(y)), 1 + seed)
    trs = [est.partial_fit_trace(Xin[p], y[p], classes=np.arange(K)) for p in parts]
    tr = {k: np.concatenate([t[k] for t in trs]) for k in ("update", "a", "rival", "delta")}
    tr["pred_code"] = np.searchsorted(est.classes_, np.concatenate([t["pred"] for t in trs]))
    Xa = augmented_rows(X.astype(np.float64), fit_intercept)
    U = _check_rounds(Xa, y, K, b, tr, encoding, margin == "adaptive")
    W = np.vstack([est.coef_.T, est.intercept_[None, :]]) if fit_intercept else est.coef_.T
    np.testing.assert_allclose(W, U, rtol=1e-9, atol=1e-11)
    # and the direct recomputation of the reference module agrees on every decision
    ref = minmax_reference(Xa, y, K, b, margin == "adaptive", encoding=encoding)
    np.testing.assert_array_equal(tr["update"], ref["update"])
    assert est.n_updates_ == int((ref["update"] > 0).sum())


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_queries_follow_the_seeded_rule_with_both_encodings(encoding):
    X, y, K, b, fit_intercept = _instance("plain", 7)
    est = WeightedMinMax(
        margin="adaptive", b=b, fit_intercept=fit_intercept, query="margin", c=0.2,
        random_state=4, label_encoding=encoding,
    )  # fmt: skip
    tr = est.partial_fit_trace(X, y, classes=np.arange(K))
    tr["pred_code"] = tr["pred"]
    u = np.random.default_rng(4).random(len(y))
    Xa = augmented_rows(X, fit_intercept)
    U = _check_rounds(Xa, y, K, b, tr, encoding, True, u=u, c=0.2)
    W = np.vstack([est.coef_.T, est.intercept_[None, :]]) if fit_intercept else est.coef_.T
    np.testing.assert_allclose(W, U, rtol=1e-9, atol=1e-11)
    assert 0 < est.n_queries_ < len(y)


@pytest.mark.parametrize("margin", ["fixed", "adaptive"])
def test_one_hot_diagonal_equals_direct_recomputation(margin):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(150, 6))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.integers(0, 4, 150)
    b, K = 2.0, 4
    est = WeightedMinMax(
        margin=margin, b=b, covariance="diagonal", fit_intercept=False, label_encoding="one-hot"
    )
    tr = est.partial_fit_trace(sp.csr_matrix(X), y)
    A = np.full(6, b)
    B = np.zeros((6, K))
    n_upd = 0
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
            n_upd += 1
            A = A + a * x * x
            B[:, y[t]] += a * x
    assert n_upd > 20
    np.testing.assert_allclose(est.A_inv_, 1 / A, rtol=1e-13)
    np.testing.assert_allclose(est.coef_.T, B / A[:, None], rtol=1e-10, atol=1e-14)


def test_default_is_difference_and_one_hot_differs():
    X, y, K, b, _ = _instance("plain", 3)
    runs = {}
    for kw in ({}, {"label_encoding": "difference"}, {"label_encoding": "one-hot"}):
        est = WeightedMinMax(margin="adaptive", b=b, **kw)
        runs[kw.get("label_encoding", "default")] = (est.partial_fit_predict(X, y), est.coef_)
    np.testing.assert_array_equal(runs["default"][1], runs["difference"][1])
    np.testing.assert_array_equal(runs["default"][0], runs["difference"][0])
    assert not np.allclose(runs["one-hot"][1], runs["difference"][1])


def test_one_hot_model_file(tmp_path):
    X, y, K, b, _ = _instance("plain", 5)
    h = len(y) // 2
    a = WeightedMinMax(margin="adaptive", b=b, label_encoding="one-hot").partial_fit(X[:h], y[:h])
    save_model(a, tmp_path / "m.npz")
    c = load_model(tmp_path / "m.npz")
    assert c.label_encoding == "one-hot"
    np.testing.assert_array_equal(
        c.partial_fit_predict(X[h:], y[h:]), a.partial_fit_predict(X[h:], y[h:])
    )
    np.testing.assert_array_equal(c.coef_, a.coef_)


def test_bad_encoding_is_refused_and_model_unchanged():
    X, y, K, b, _ = _instance("plain", 6)
    est = WeightedMinMax(b=b).fit(X, y)
    coef, t = est.coef_.copy(), est.t_
    est.set_params(label_encoding="onehot")
    with pytest.raises(ValueError, match="label_encoding"):
        est.partial_fit(X, y)
    np.testing.assert_array_equal(est.coef_, coef)
    assert est.t_ == t


@parametrize_with_checks([WeightedMinMax(label_encoding="one-hot")])
def test_sklearn_compatible_one_hot(estimator, check):
    if getattr(check, "func", check).__name__ == "check_array_api_input":
        assert not estimator.__sklearn_tags__().array_api_support
        return
    check(estimator)
