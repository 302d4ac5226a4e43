"""Kernels and their algebra: Gram blocks against scikit-learn, PSD, feature maps, refusals."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import pairwise_kernels

from onlinelearn import kernels as K


def _data(rng, n, d, density=0.5):
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) > density] = 0.0
    return X


BASE = [
    (K.Linear(), "linear", {}),
    (K.RBF(0.3), "rbf", {"gamma": 0.3}),
    (K.RBF(), "rbf", {}),
    (K.Laplacian(0.2), "laplacian", {"gamma": 0.2}),
    (K.Polynomial(3, 0.5, 1.0), "poly", {"degree": 3, "gamma": 0.5, "coef0": 1.0}),
    (K.Polynomial(2), "poly", {"degree": 2, "coef0": 1.0}),
    (K.Cosine(), "cosine", {}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fmt", ["dense", "csr", "mixed"])
@pytest.mark.parametrize("k,metric,kw", BASE, ids=[repr(b[0]) for b in BASE])
def test_gram_matches_sklearn(k, metric, kw, fmt, dtype):
    rng = np.random.default_rng(0)
    X = _data(rng, 7, 5).astype(dtype)
    Y = _data(rng, 4, 5).astype(dtype)
    X[2] = 0.0  # a zero row (cosine: 0)
    ref = pairwise_kernels(X.astype(np.float64), Y.astype(np.float64), metric=metric, **kw)
    refXX = pairwise_kernels(X.astype(np.float64), metric=metric, **kw)
    A = X if fmt == "dense" else sp.csr_matrix(X)
    B = sp.csr_matrix(Y) if fmt == "csr" else Y
    tol = 1e-12 if dtype == np.float64 else 1e-12  # float32 values are widened exactly
    got = k(A, B)
    assert got.dtype == np.float64 and got.shape == (7, 4)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(k(A), refXX, rtol=tol, atol=tol)
    np.testing.assert_allclose(k.diag(A), np.diag(refXX), rtol=tol, atol=tol)


def _algebra_kernels():
    lin, rbf, poly = K.Linear(), K.RBF(0.4), K.Polynomial(2, 0.3, 1.0)
    lap, cos = K.Laplacian(0.3), K.Cosine()
    return [
        lin + rbf,
        lin * rbf,
        3.0 * poly,
        0.0 * lap + cos,
        K.polynomial_of(lin, [1.0, 0.5, 0.0, 0.25]),
        K.polynomial_of(rbf * cos, [0.0, 2.0, 1.0]),
        K.exp(0.2 * lin),
        K.exp(cos) * lap,
        K.on_features(rbf, [0, 2, 3]) + K.on_features(poly, [1, 4]),
        K.on_features(K.on_features(lin, [0, 1, 3]) * cos, [4, 3, 2, 0]),
        (lin + 1.0) ** 3,
        lin / 4.0 + K.Constant(0.5),
        (cos + poly) * (lin + lap) + 2 * K.exp(K.on_features(cos, [1, 2])),
    ]


@pytest.mark.parametrize("k", _algebra_kernels(), ids=repr)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_algebra_gives_psd_gram(k, seed):
    rng = np.random.default_rng(seed)
    X = _data(rng, 30, 5, density=0.7) * rng.uniform(0.2, 1.5)
    for A in (X, sp.csr_matrix(X)):
        Kmat = k(A)
        np.testing.assert_array_equal(Kmat, Kmat.T)
        ev = np.linalg.eigvalsh(Kmat)
        assert ev.min() >= -1e-8 * max(1.0, np.abs(ev).max())


def _direct(k, x, z):
    """k(x, z) from the definitions, one pair at a time (independent of the compiled program)."""
    if isinstance(k, K.Linear):
        return x @ z
    if isinstance(k, K.RBF):
        return np.exp(-k.gamma * np.sum((x - z) ** 2))
    if isinstance(k, K.Laplacian):
        return np.exp(-k.gamma * np.sum(np.abs(x - z)))
    if isinstance(k, K.Polynomial):
        return (k.gamma * (x @ z) + k.coef0) ** k.degree
    if isinstance(k, K.Cosine):
        n = np.linalg.norm(x) * np.linalg.norm(z)
        return x @ z / n if n > 0 else 0.0
    if isinstance(k, K.Constant):
        return k.c
    if isinstance(k, K.Sum):
        return _direct(k.k1, x, z) + _direct(k.k2, x, z)
    if isinstance(k, K.Product):
        return _direct(k.k1, x, z) * _direct(k.k2, x, z)
    if isinstance(k, K.Scaled):
        return k.c * _direct(k.k, x, z)
    if isinstance(k, K.PolynomialOf):
        u = _direct(k.k, x, z)
        return sum(c * u**i for i, c in enumerate(k.coef))
    if isinstance(k, K.Exp):
        return np.exp(_direct(k.k, x, z))
    if isinstance(k, K.OnFeatures):
        f = list(k.features)
        return _direct(k.k, x[f], z[f])
    raise AssertionError(k)


@pytest.mark.parametrize("k", _algebra_kernels(), ids=repr)
def test_algebra_values_match_definitions(k):
    rng = np.random.default_rng(3)
    X = _data(rng, 6, 5)
    Y = _data(rng, 5, 5)
    ref = np.array([[_direct(k, x, z) for z in Y] for x in X])
    np.testing.assert_allclose(k(X, Y), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k(sp.csr_matrix(X), Y), ref, rtol=1e-12, atol=1e-12)


FINITE = [
    K.Linear(),
    K.Cosine(),
    K.Polynomial(2, 0.5, 1.0),
    K.Polynomial(3, 1.0, 0.0),
    K.Polynomial(0),
    K.Linear() + K.Cosine(),
    K.Linear() * K.Polynomial(2, 1.0, 2.0),
    2.5 * K.Linear() + 0.7,
    K.polynomial_of(K.Linear() + K.Cosine(), [0.3, 1.0, 0.5]),
    K.on_features(K.Linear(), [0, 3]) * K.on_features(K.Cosine(), [1, 2, 4]),
    (K.Linear() + 1.0) ** 2,
]


@pytest.mark.parametrize("k", FINITE, ids=repr)
def test_feature_map_reproduces_kernel(k):
    rng = np.random.default_rng(4)
    X = _data(rng, 8, 5)
    X[1] = 0.0
    Y = _data(rng, 6, 5)
    phi = k.feature_map()
    F, H = phi.transform(X), phi.transform(Y)
    assert F.shape[1] == phi.n_output_features(5)
    np.testing.assert_allclose(F @ H.T, k(X, Y), rtol=1e-10, atol=1e-10)
    Fs, Hs = phi.transform(sp.csr_matrix(X)), phi.transform(sp.csr_matrix(Y, dtype=np.float32))
    assert sp.issparse(Fs)
    np.testing.assert_allclose((Fs @ Hs.T).toarray(), k(X, Y.astype(np.float32)), rtol=1e-6)


@pytest.mark.parametrize(
    "k", [K.RBF(1.0), K.Laplacian(), K.exp(K.Linear()), K.Linear() + K.RBF(), K.Precomputed()]
)
def test_no_finite_feature_map_is_a_clear_error(k):
    with pytest.raises(K.NoFiniteFeatureMap, match="feature map"):
        k.feature_map()


def test_feature_map_too_wide_is_refused():
    phi = K.Polynomial(4).feature_map()
    with pytest.raises(ValueError, match="max_features"):
        phi.transform(np.ones((2, 100)))


def test_invalid_constructions_are_refused():
    lin = K.Linear()
    with pytest.raises(TypeError, match="subtracted"):
        lin - K.RBF()
    with pytest.raises(TypeError, match="subtracted"):
        _ = -lin
    with pytest.raises(TypeError, match="subtracted"):
        1.0 - lin
    with pytest.raises(ValueError, match=">= 0"):
        -2.0 * lin
    with pytest.raises(ValueError, match=">= 0"):
        lin + (-1.0)
    with pytest.raises(ValueError, match=">= 0"):
        K.polynomial_of(lin, [1.0, -0.5])
    with pytest.raises(ValueError, match=">= 0"):
        K.Polynomial(2, coef0=-1.0)
    with pytest.raises(ValueError, match=">= 0"):
        K.RBF(gamma=-1.0)
    with pytest.raises(ValueError, match=">= 0"):
        float("nan") * lin
    with pytest.raises(ValueError, match="degree"):
        K.Polynomial(2.5)
    with pytest.raises(ValueError, match="integer"):
        lin**-1
    with pytest.raises(ValueError, match="> 0"):
        lin / 0.0
    with pytest.raises(TypeError, match="arbitrary function"):
        K.exp(lambda x, z: x @ z)
    with pytest.raises(TypeError, match="arbitrary function"):
        lin + (lambda x, z: 0.0)  # noqa: E731
    with pytest.raises(TypeError, match="Precomputed"):
        K.Precomputed() + lin
    with pytest.raises(ValueError, match="out of range"):
        K.on_features(lin, [7])(np.ones((2, 3)))
    with pytest.raises(ValueError, match="features"):
        K.on_features(lin, [])


def test_overflow_and_bad_input_are_clear_errors():
    X = np.full((2, 3), 30.0)
    with pytest.raises(FloatingPointError, match="NaN or infinity"):
        K.exp(K.Linear())(X)
    with pytest.raises(ValueError, match="NaN|infinity"):
        K.RBF()(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="features"):
        K.RBF()(np.ones((2, 3)), np.ones((2, 4)))


def test_description_round_trip_and_equality():
    import json

    for k in _algebra_kernels() + [K.Precomputed(), K.RBF()]:
        d = json.loads(json.dumps(k.to_dict()))
        k2 = K.from_dict(d)
        assert k2 == k and repr(k2) == repr(k)
    assert K.RBF(0.5) != K.RBF(0.25)


def test_usable_as_sklearn_kernel_callable():
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    X, y = make_classification(n_samples=80, n_features=6, random_state=0)
    k = K.RBF(0.2) + 0.5 * K.Linear()
    a = SVC(kernel=k, C=1.0).fit(X, y).decision_function(X)
    b = SVC(kernel="precomputed", C=1.0).fit(k(X), y).decision_function(k(X))
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8)
