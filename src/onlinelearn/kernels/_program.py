"""Flatten a kernel expression into the postfix program of :mod:`onlinelearn._core.kernel.gram`,
and prepare rows for it (validation, the extra columns of feature subsets, per-leaf norms)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._core.kernel import gram as G
from . import _kernels as K
from ._input import check_input


class Rows:
    """Rows in the form the compiled program reads.

    float32 input is widened to float64 here, once per call: kernel values are computed in
    double precision anyway, the copy costs O(1) per stored value against the O(n_SV) kernel
    evaluations per row, and the compiled core then has one signature instead of three
    (f64, f32, mixed), which halves its compilation time.

    ``data``, ``indices``, ``indptr``: CSR arrays (sorted indices) or, for dense input,
    the C-ordered values (``dense`` True, ``indices``/``indptr`` dummies); ``n_cols`` the width
    of the (augmented) rows; ``norms`` float64[n, n_leaves] = ||x||_S^2 per leaf."""

    __slots__ = ("data", "indices", "indptr", "n_rows", "n_cols", "dense", "norms")


class Program:
    """The compiled form of a kernel for inputs with ``n_features`` columns.

    Leaves on a feature subset S read extra columns appended to each row (X[:, S]); the ranges
    of those columns are in ``ranges``."""

    def __init__(self, kernel, n_features):
        if isinstance(kernel, K.Precomputed):
            raise TypeError("a Precomputed kernel has no program: its Gram matrix is the input")
        self.kernel = kernel
        self.n_features = int(n_features)
        self.subsets = []  # index arrays of the extra column blocks
        self._subset_keys = {}
        self.ops = []
        self.par = []
        self.leaf_ranges = []
        self._emit(kernel, None)
        self.ops = np.array(self.ops, dtype=np.int64).reshape(-1, 3)
        self.par = np.array(self.par + [0.0], dtype=np.float64)
        self.ranges = np.array(self.leaf_ranges, dtype=np.int64).reshape(-1, 2)
        if self.ranges.shape[0] == 0:
            self.ranges = np.zeros((1, 2), dtype=np.int64)
        self.n_cols = self.n_features + sum(len(s) for s in self.subsets)

    # ------------------------------------------------------------------ flattening
    def _range_of(self, subset):
        if subset is None:
            return (0, self.n_features)
        key = tuple(subset.tolist())
        if key not in self._subset_keys:
            lo = self.n_features + sum(len(s) for s in self.subsets)
            self.subsets.append(subset)
            self._subset_keys[key] = (lo, lo + len(subset))
        return self._subset_keys[key]

    def _leaf(self, code, subset, params):
        lo, hi = self._range_of(subset)
        leaf = len(self.leaf_ranges)
        self.leaf_ranges.append((lo, hi))
        b = len(self.par)
        self.par.extend(params)
        self.ops.append((code, leaf, b))

    def _gamma(self, gamma, subset):
        if gamma is not None:
            return gamma
        d = self.n_features if subset is None else len(subset)
        return 1.0 / max(d, 1)

    def _emit(self, k, subset):
        if isinstance(k, K.Linear):
            self._leaf(G.LINEAR, subset, [])
        elif isinstance(k, K.Polynomial):
            self._leaf(G.POLY, subset, [self._gamma(k.gamma, subset), k.coef0, float(k.degree)])
        elif isinstance(k, K.RBF):
            self._leaf(G.RBF, subset, [self._gamma(k.gamma, subset)])
        elif isinstance(k, K.Laplacian):
            self._leaf(G.LAPLACE, subset, [self._gamma(k.gamma, subset)])
        elif isinstance(k, K.Cosine):
            self._leaf(G.COSINE, subset, [])
        elif isinstance(k, K.Constant):
            self.ops.append((G.CONST, len(self.par), 0))
            self.par.append(k.c)
        elif isinstance(k, (K.Sum, K.Product)):
            self._emit(k.k1, subset)
            self._emit(k.k2, subset)
            self.ops.append((G.ADD if isinstance(k, K.Sum) else G.MUL, 0, 0))
        elif isinstance(k, K.Scaled):
            self._emit(k.k, subset)
            self.ops.append((G.SCALE, len(self.par), 0))
            self.par.append(k.c)
        elif isinstance(k, K.PolynomialOf):
            self._emit(k.k, subset)
            self.ops.append((G.POLYOF, len(self.par), len(k.coef)))
            self.par.extend(k.coef)
        elif isinstance(k, K.Exp):
            self._emit(k.k, subset)
            self.ops.append((G.EXP, 0, 0))
        elif isinstance(k, K.OnFeatures):
            f = np.asarray(k.features, dtype=np.int64)
            d = self.n_features if subset is None else len(subset)
            if f.max() >= d:
                raise ValueError(
                    f"on_features: feature index {int(f.max())} out of range for inputs with "
                    f"{d} features"
                )
            self._emit(k.k, f if subset is None else subset[f])
        else:
            raise TypeError(f"not a kernel of onlinelearn.kernels: {k!r}")

    # ------------------------------------------------------------------ rows
    def rows(self, X):
        """Rows of a validated X (2-D, finite, float32/64 dense C-ordered or CSR)."""
        if X.shape[1] != self.n_features:
            raise ValueError(
                f"X has {X.shape[1]} features, but the kernel was prepared for {self.n_features}"
            )
        if self.subsets:
            if sp.issparse(X):
                X = sp.hstack([X] + [X[:, s] for s in self.subsets], format="csr")
            else:
                X = np.hstack([X] + [X[:, s] for s in self.subsets])
        r = Rows()
        r.n_rows, r.n_cols = X.shape
        if sp.issparse(X):
            X = X.tocsr()
            if not X.has_canonical_format:
                X = X.copy()
                X.sum_duplicates()
            r.data = np.ascontiguousarray(X.data, dtype=np.float64)
            r.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
            r.indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
            r.dense = False
        else:
            r.data = np.ascontiguousarray(X, dtype=np.float64).reshape(-1)
            r.indices = np.zeros(1, dtype=np.int32)
            r.indptr = np.zeros(1, dtype=np.int64)
            r.dense = True
        r.norms = np.zeros((r.n_rows, self.ranges.shape[0]))
        G.row_leaf_sqnorms(r.data, r.indices, r.indptr, r.n_rows, r.n_cols, r.dense,
                           self.ranges, r.norms)  # fmt: skip
        return r

    def block(self, A, B=None):
        """Gram block k(A, B) (B None: k(A, A), exactly symmetric)."""
        if B is None:
            out = np.empty((A.n_rows, A.n_rows))
            G.gram_symmetric(self.ops, self.par, self.ranges, A.data, A.indices, A.indptr,
                             A.n_rows, A.dense, A.norms, A.n_cols, out)  # fmt: skip
            return out
        out = np.empty((A.n_rows, B.n_rows))
        if A.dense != B.dense and A.n_cols != B.n_cols:
            raise ValueError("rows prepared for different kernels")
        G.gram_block(self.ops, self.par, self.ranges, A.data, A.indices, A.indptr, A.n_rows,
                     A.dense, A.norms, B.data, B.indices, B.indptr, B.n_rows, B.dense, B.norms,
                     A.n_cols, out)  # fmt: skip
        return out


def check_gram_finite(Kmat, kernel):
    if not np.isfinite(Kmat).all():
        raise FloatingPointError(
            f"the kernel {kernel!r} returned NaN or infinity on these inputs (e.g. exp of a "
            "large value, or a high power); scale the features or the kernel's parameters."
        )
    return Kmat


def gram(kernel, X, Y=None):
    """k(X, Y) for a kernel of the algebra (see :class:`onlinelearn.kernels.Kernel`)."""
    X = check_input(X, "X")
    prog = Program(kernel, X.shape[1])
    A = prog.rows(X)
    if Y is None:
        return check_gram_finite(prog.block(A), kernel)
    Y = check_input(Y, "Y")
    if Y.shape[1] != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}")
    return check_gram_finite(prog.block(A, prog.rows(Y)), kernel)


def gram_diag(kernel, X):
    X = check_input(X, "X")
    prog = Program(kernel, X.shape[1])
    A = prog.rows(X)
    out = np.empty(A.n_rows)
    from .._core.kernel.gram import diag_values

    diag_values(prog.ops, prog.par, prog.ranges, A.data, A.indices, A.indptr, A.n_rows, A.dense,
                A.norms, A.n_cols, out)  # fmt: skip
    return check_gram_finite(out, kernel)
