"""Euclidean and entropic projections (thesis Sec. 7.1, Figs. 7.1-7.3).

=========================  ===================================================================
function                   problem solved (per vector; a 2-D input is projected row by row)
=========================  ===================================================================
:func:`project_simplex`    argmin_a 1/2 ||a - v||^2  s.t. sum_i a_i = z, a_i >= 0     (7.1)
:func:`project_l1_ball`    argmin_a 1/2 ||a - v||^2  s.t. ||a||_1 <= z                 (7.4)
:func:`project_entropic`   argmin_w sum_j w_j log(w_j / u_j)  s.t. sum_j w_j = 1,
                           w_j >= eps                                                 (7.6)
=========================  ===================================================================

Where v is the vector to project, z > 0 the radius, u >= 0 the vector whose relative entropy to
w is minimised, and eps in [0, 1/n] the floor (eps = 0: the plain entropic projection, which is
u / sum(u)).  All three cost O(n log n) (a sort); on a scipy CSR row they cost O(nnz log nnz):
the implicit zeros are handled as one block.

Input: a 1-D or 2-D array, or a scipy sparse matrix (projected row by row; float32 or float64).
Output: a float64 array of the same shape; for sparse input of :func:`project_l1_ball` a CSR
matrix with the same pattern (zeros stay zero), of :func:`project_simplex` a CSR matrix (a row
whose stored entries sum to less than z gets the positive value -theta on its implicit zeros,
which fills that row), of :func:`project_entropic` a dense array (every entry is >= eps).

The kernels are in :mod:`onlinelearn._core.projections`; :class:`onlinelearn.LabelRanker`
uses them as constraints on its weight vectors (``constraint='l1'`` / ``'floor'``).

Examples
--------
>>> import numpy as np
>>> from onlinelearn.projections import project_simplex, project_l1_ball, project_entropic
>>> project_simplex(np.array([0.5, 0.3, -0.2]))
array([0.6, 0.4, 0. ])
>>> project_l1_ball(np.array([2.0, -1.0, 0.0]), z=2.0)
array([ 1.5, -0.5,  0. ])
>>> np.round(project_entropic(np.array([0.01, 1.0, 3.0]), eps=0.1), 4)
array([0.1  , 0.225, 0.675])
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ._core import projections as _P

__all__ = ["project_simplex", "project_l1_ball", "project_entropic"]


def _as_rows(v, name):
    """(csr matrix, was_1d, was_sparse): v as a float64 CSR with canonical rows, checked finite."""
    if sp.issparse(v):
        X = sp.csr_matrix(v, dtype=np.float64)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        if not np.isfinite(X.data).all():
            raise ValueError(f"{name} contains NaN or infinity.")
        return X, False, True
    a = np.asarray(v, dtype=np.float64)
    if a.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D; got {a.ndim} dimensions.")
    if a.size == 0 or a.shape[-1] == 0:
        raise ValueError(f"{name} is empty: a projection needs at least one coordinate.")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinity.")
    return a, a.ndim == 1, False


def _check_radius(z):
    if not isinstance(z, numbers.Real) or not np.isfinite(z) or z <= 0:
        raise ValueError(f"z must be a finite number > 0; got {z!r}.")
    return float(z)


def _dense_rows(a):
    """A dense 2-D float64 array as the (data, indptr) of a CSR matrix without a copy."""
    A = np.ascontiguousarray(a.reshape(-1, a.shape[-1]))
    n, d = A.shape
    return A.reshape(-1), np.arange(0, n * d + 1, d, dtype=np.int64), A.shape


def _project_rows(X, one_d, sparse, project):
    """Run ``project(data, indptr, n_columns, out)``, a compiled row projection, on the rows of
    ``X`` as :func:`_as_rows` returns it: on every entry of a dense X (the result has v's shape),
    on the stored entries of a CSR X (the result is a CSR matrix with X's pattern)."""
    if not sparse:
        data, indptr, shape = _dense_rows(X)
        out = np.empty_like(data)
        project(data, indptr, shape[1], out)
        out = out.reshape(shape)
        return out[0] if one_d else out.reshape(X.shape)
    out = np.empty_like(X.data)
    project(X.data, X.indptr.astype(np.int64), X.shape[1], out)
    return sp.csr_matrix((out, X.indices.copy(), X.indptr.copy()), shape=X.shape)


def project_simplex(v, z=1.0):
    """Euclidean projection onto {a : a >= 0, sum a = z} (Fig. 7.1), row by row for 2-D input.

    Parameters
    ----------
    v : array-like of shape (n,) or (m, n), or sparse matrix (m, n)
    z : float > 0, default=1.0

    Returns
    -------
    ndarray of v's shape, or a CSR matrix for sparse v (see the module docstring).
    """
    z = _check_radius(z)
    X, one_d, sparse = _as_rows(v, "v")
    if sparse and X.shape[1] == 0:
        raise ValueError("v is empty: a projection needs at least one coordinate.")
    theta = np.empty(1 if one_d else X.shape[0])  # the threshold of each row

    def project(data, indptr, n_columns, out):
        _P.project_simplex_rows(data, indptr, n_columns, z, out, theta)

    res = _project_rows(X, one_d, sparse, project)
    if not sparse:
        return res
    fill = np.flatnonzero(theta < 0.0)
    if fill.size:
        # rows whose implicit zeros become -theta > 0 (their stored entries sum to less than z)
        rows, cols, vals = [], [], []
        for i in fill:
            free = np.setdiff1d(np.arange(X.shape[1]), X.indices[X.indptr[i] : X.indptr[i + 1]])
            rows.append(np.full(free.size, i))
            cols.append(free)
            vals.append(np.full(free.size, -theta[i]))
        zeros_part = sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=X.shape
        )
        res = (res + zeros_part).tocsr()
    res.eliminate_zeros()
    return res


def project_l1_ball(v, z=1.0):
    """Euclidean projection onto the l1 ball {a : ||a||_1 <= z} (Fig. 7.2), row by row.

    Parameters
    ----------
    v : array-like of shape (n,) or (m, n), or sparse matrix (m, n)
    z : float > 0, default=1.0

    Returns
    -------
    ndarray of v's shape, or a CSR matrix with v's sparsity pattern for sparse v.
    """
    z = _check_radius(z)
    X, one_d, sparse = _as_rows(v, "v")

    def project(data, indptr, n_columns, out):
        _P.project_l1_rows(data, indptr, z, out)

    res = _project_rows(X, one_d, sparse, project)
    if sparse:
        res.eliminate_zeros()
    return res


def project_entropic(u, eps=0.0):
    """Entropic projection of u >= 0 onto {w : sum w = 1, w >= eps} (Fig. 7.3), row by row.

    Parameters
    ----------
    u : array-like of shape (n,) or (m, n), or sparse matrix (m, n); entries >= 0, at least one
        positive per row unless every entry is tied (an all-zero row projects to 1/n).
    eps : float in [0, 1/n], default=0.0
        The floor; eps = 0 gives u / sum(u).  Zero entries of u get eps (the limit u_j -> 0+).

    Returns
    -------
    ndarray of shape (n,) or (m, n) (dense also for sparse u: every entry is >= eps).
    """
    X, one_d, sparse = _as_rows(u, "u")
    A = X.toarray() if sparse else X
    A = np.ascontiguousarray(A.reshape(-1, A.shape[-1]) if A.ndim == 2 else A.reshape(1, -1))
    n = A.shape[1]
    if n == 0:
        raise ValueError("u is empty: a projection needs at least one coordinate.")
    if not isinstance(eps, numbers.Real) or not np.isfinite(eps) or eps < 0 or eps * n > 1:
        raise ValueError(
            f"eps must be a number in [0, 1/n] = [0, {1.0 / n:.6g}] for n = {n} coordinates "
            f"(otherwise no vector of the simplex is >= eps); got {eps!r}."
        )
    if (A < 0).any():
        raise ValueError("u must be non-negative (a relative entropy needs u >= 0).")
    out = np.empty_like(A)
    for i in range(A.shape[0]):
        _P.entropic_floor(A[i], float(eps), out[i])
    return out[0] if one_d else out
