"""Explicit finite feature maps of the kernels that have one (the maps of the validity proofs)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .._core.kernel.feature_map import rowwise_kron_csr
from ..shell import validation as V
from . import _kernels as K
from ._input import check_input

#: refuse maps wider than this many columns unless ``max_features`` says otherwise
DEFAULT_MAX_FEATURES = 1_000_000


def _dim(k, d):
    """Width of phi for inputs of d columns."""
    if isinstance(k, K.Linear):
        return d
    if isinstance(k, K.Cosine):
        return d
    if isinstance(k, K.Constant):
        return 1
    if isinstance(k, K.Polynomial):
        return (d + 1) ** k.degree
    if isinstance(k, K.Sum):
        return _dim(k.k1, d) + _dim(k.k2, d)
    if isinstance(k, K.Product):
        return _dim(k.k1, d) * _dim(k.k2, d)
    if isinstance(k, K.Scaled):
        return _dim(k.k, d)
    if isinstance(k, K.PolynomialOf):
        m = _dim(k.k, d)
        return sum(m**i for i, c in enumerate(k.coef) if c > 0.0) or 1
    if isinstance(k, K.OnFeatures):
        return _dim(k.k, len(k.features))
    raise K.NoFiniteFeatureMap(f"{k!r} has no finite feature map")


def _kron(A, B):
    """Row-wise tensor product: row i is a_i (x) b_i."""
    if not sp.issparse(A) and not sp.issparse(B):
        n = A.shape[0]
        return (A[:, :, None] * B[:, None, :]).reshape(n, -1)
    A = sp.csr_matrix(A)
    B = sp.csr_matrix(B)
    A.sort_indices()
    B.sort_indices()
    la = np.diff(A.indptr)
    lb = np.diff(B.indptr)
    out_p = np.zeros(A.shape[0] + 1, dtype=np.int64)
    np.cumsum(la * lb, out=out_p[1:])
    nnz = int(out_p[-1])
    out_d = np.empty(nnz)
    out_i = np.empty(nnz, dtype=np.int64)
    rowwise_kron_csr(A.data, A.indices.astype(np.int64), A.indptr.astype(np.int64), B.data,
                     B.indices.astype(np.int64), B.indptr.astype(np.int64), B.shape[1],
                     out_d, out_i, out_p)  # fmt: skip
    return sp.csr_matrix((out_d, out_i, out_p), shape=(A.shape[0], A.shape[1] * B.shape[1]))


def _hstack(blocks, sparse):
    if sparse:
        return sp.hstack([sp.csr_matrix(b) for b in blocks], format="csr")
    return np.hstack([b.toarray() if sp.issparse(b) else b for b in blocks])


def _ones(n, c, sparse):
    col = np.full((n, 1), math.sqrt(c))
    return sp.csr_matrix(col) if sparse else col


def _power(P, p, n, sparse):
    out = _ones(n, 1.0, sparse)
    for _ in range(p):
        out = _kron(out, P)
    return out


def _map(k, X, sparse):
    n = X.shape[0]
    if isinstance(k, K.Linear):
        return X
    if isinstance(k, K.Cosine):
        if sparse:
            nrm = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
            inv = np.divide(1.0, nrm, out=np.zeros_like(nrm), where=nrm > 0)
            return sp.diags(inv) @ X
        nrm = np.sqrt((X * X).sum(axis=1))
        inv = np.divide(1.0, nrm, out=np.zeros_like(nrm), where=nrm > 0)
        return X * inv[:, None]
    if isinstance(k, K.Constant):
        return _ones(n, k.c, sparse)
    if isinstance(k, K.Polynomial):
        g = k.gamma if k.gamma is not None else 1.0 / max(X.shape[1], 1)
        base = _hstack([_ones(n, k.coef0, sparse), math.sqrt(g) * X], sparse)
        return _power(base, k.degree, n, sparse)
    if isinstance(k, K.Sum):
        return _hstack([_map(k.k1, X, sparse), _map(k.k2, X, sparse)], sparse)
    if isinstance(k, K.Product):
        return _kron(_map(k.k1, X, sparse), _map(k.k2, X, sparse))
    if isinstance(k, K.Scaled):
        return math.sqrt(k.c) * _map(k.k, X, sparse)
    if isinstance(k, K.PolynomialOf):
        P = _map(k.k, X, sparse)
        blocks = [math.sqrt(c) * _power(P, i, n, sparse) for i, c in enumerate(k.coef) if c > 0]
        return _hstack(blocks, sparse) if blocks else _ones(n, 0.0, sparse)
    if isinstance(k, K.OnFeatures):
        f = np.asarray(k.features)
        if f.max() >= X.shape[1]:
            raise ValueError(f"on_features: feature index {int(f.max())} out of range")
        return _map(k.k, X[:, f], sparse)
    raise K.NoFiniteFeatureMap(f"{k!r} has no finite feature map")


class FeatureMap:
    """phi of a kernel with a finite feature space: ``transform(X) @ transform(Y).T == k(X, Y)``.

    Built by :meth:`onlinelearn.kernels.Kernel.feature_map`.  Dense input gives a dense float64
    array, CSR input a CSR matrix.  The output width is ``n_output_features(n_features)``;
    a map wider than ``max_features`` columns is refused (a polynomial of high degree on many
    features).  ``fit`` does nothing, so the map can be a step of a scikit-learn Pipeline that
    feeds a linear learner."""

    def __init__(self, kernel, max_features=DEFAULT_MAX_FEATURES):
        kernel._check_finite_map()
        self.kernel = kernel
        self.max_features = max_features

    def n_output_features(self, n_features):
        return _dim(self.kernel, n_features)

    def fit(self, X=None, y=None):
        return self

    def transform(self, X):
        X = check_input(X)
        m = self.n_output_features(X.shape[1])
        if m > self.max_features:
            raise ValueError(
                f"the feature map of {self.kernel!r} has {m} columns on {X.shape[1]} features "
                f"(more than max_features={self.max_features}); use the kernel itself."
            )
        sparse = sp.issparse(X)
        X = X.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            out = _map(self.kernel, X, sparse)
        out = sp.csr_matrix(out) if sparse else np.asarray(out, dtype=np.float64)
        V.check_mapped(out, f"the feature map of {self.kernel!r}")
        return out

    def fit_transform(self, X, y=None):
        return self.transform(X)

    __call__ = transform

    def __repr__(self):
        return f"FeatureMap({self.kernel!r})"
