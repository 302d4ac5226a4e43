"""Row operations on CSR rows (dense rows are CSR rows whose ``indices`` = arange(d) is shared).

Weights are stored as ``theta[j, k]``: feature j, class column k (C-contiguous), so one
nonzero feature touches one contiguous row of K weights.  When the model fits an intercept,
row ``d`` of ``theta`` is the bias, seen as an extra feature whose value is ``b`` (the
intercept scaling, 1 by default).
"""

from __future__ import annotations

import numpy as np

from .._config import njit


@njit
def row_offset(data, indices, start):
    """Offset between a position in ``data`` and in ``indices``: 0 for CSR; for a dense
    batch (``indices`` = arange(d) shared by all rows) the row start."""
    return start if indices.shape[0] != data.shape[0] else 0


@njit
def row_sqnorm(data, indptr, i, b):
    """||x_i||_2^2 (+ b^2 for the intercept feature)."""
    s = b * b
    for p in range(indptr[i], indptr[i + 1]):
        v = np.float64(data[p])  # float32 input: square in double precision
        s += v * v
    return s


@njit
def row_absmax(data, indptr, i, b):
    """||x_i||_inf, the intercept feature included."""
    s = abs(b)
    for p in range(indptr[i], indptr[i + 1]):
        v = abs(data[p])
        if v > s:
            s = v
    return s


@njit
def row_dot_euclid(data, indices, indptr, i, theta, b, d, out):
    """out[k] = <theta[:, k], x_i> for every column k (Euclidean link: w = theta)."""
    K = out.shape[0]
    for k in range(K):
        out[k] = 0.0
    start = indptr[i]
    off = row_offset(data, indices, start)
    for p in range(start, indptr[i + 1]):
        j = indices[p - off]
        v = data[p]
        for k in range(K):
            out[k] += v * theta[j, k]
    if b != 0.0:
        for k in range(K):
            out[k] += b * theta[d, k]
