"""Row operations on CSR rows (dense rows are CSR rows whose ``indices`` = arange(d) is shared).

Weights are stored as ``theta[j, k]``: feature j, class column k (C-contiguous), so one
nonzero feature touches one contiguous row of K weights.  When the model fits an intercept,
row ``d`` of ``theta`` is the bias, seen as an extra feature whose value is ``b`` (the
intercept scaling, 1 by default).
"""

from __future__ import annotations

import numpy as np

from .config import njit


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


@njit(inline="always")
def copy_row(data, indices, indptr, i, b, d, jj, xx, n):
    """Copy row i into ``jj[n:]``, ``xx[n:]`` (feature indices, values), the intercept feature
    (index d, value b) appended when b != 0; returns the position after the last entry."""
    start = indptr[i]
    off = row_offset(data, indices, start)
    for p in range(start, indptr[i + 1]):
        jj[n] = indices[p - off]
        xx[n] = data[p]
        n += 1
    if b != 0.0:
        jj[n] = d
        xx[n] = b
        n += 1
    return n


@njit(inline="always")
def row_dot_map(data, indices, indptr, i, theta, b, d, term, targs, out):
    """out[k] = sum_q x_q term(theta[j_q, k], k, targs) (+ b term(theta[d, k], k, targs) for
    the intercept feature) for every column k: the scores <w_k, x_i> of weights
    w_jk = term(theta_jk) that a coordinate-wise link maps from theta.

    ``term`` is a compiled function (its extra arguments in ``targs``), inlined into the
    caller's copy of this loop."""
    K = out.shape[0]
    for k in range(K):
        out[k] = 0.0
    start = indptr[i]
    off = row_offset(data, indices, start)
    for p in range(start, indptr[i + 1]):
        j = indices[p - off]
        v = data[p]
        for k in range(K):
            out[k] += v * term(theta[j, k], k, targs)
    if b != 0.0:
        for k in range(K):
            out[k] += b * term(theta[d, k], k, targs)


@njit(inline="always")
def _identity(t, k, targs):
    return t


@njit
def row_dot_euclid(data, indices, indptr, i, theta, b, d, out):
    """out[k] = <theta[:, k], x_i> for every column k (Euclidean link: w = theta)."""
    row_dot_map(data, indices, indptr, i, theta, b, d, _identity, (), out)


@njit(inline="always")
def four_nonzeros(data, indices, off, q):
    """(j0, j1, j2, j3, v0, v1, v2, v3): the feature indices and the values (in double
    precision) of the nonzeros q..q+3 of a row, ``q`` and ``off`` unsigned.  Unsigned
    positions and indices: numba then omits its test for negative (from-the-end) indices on
    every access, which it cannot drop for an index loaded from ``indices`` (mnist PA-I:
    0.80x the time of the signed loops)."""
    u1, u2, u3 = np.uint64(1), np.uint64(2), np.uint64(3)
    return (
        np.uint64(indices[q - off]),
        np.uint64(indices[q + u1 - off]),
        np.uint64(indices[q + u2 - off]),
        np.uint64(indices[q + u3 - off]),
        np.float64(data[q]),
        np.float64(data[q + u1]),
        np.float64(data[q + u2]),
        np.float64(data[q + u3]),
    )


@njit
def row_scores_sqnorm(data, indices, off, start, stop, theta, scores):
    """scores[k] = sum_q x_q theta[j_q, k] over the nonzeros q of one row (float64 sums);
    returns ||x||^2 (no intercept feature: the caller adds b theta[d] and b^2).

    Four nonzeros per step, their products summed before they reach ``scores``: a one-nonzero
    step makes each nonzero wait for the previous one's read-modify-write of ``scores`` (an
    add and a store-to-load forward, the same K scores every time), and that chain, not
    memory, bounded the sweep (mnist float32 weights: 0.46 -> 0.35 ns per nonzero x class,
    news20 0.54 -> 0.37).  The sums are the same up to the order of the additions."""
    K = scores.shape[0]
    for k in range(K):
        scores[k] = 0.0
    sq = 0.0
    # unsigned positions and feature indices (see four_nonzeros)
    q, stop, off = np.uint64(start), np.uint64(stop), np.uint64(off)
    u1, u3, u4 = np.uint64(1), np.uint64(3), np.uint64(4)
    while q + u3 < stop:
        j0, j1, j2, j3, v0, v1, v2, v3 = four_nonzeros(data, indices, off, q)
        sq += (v0 * v0 + v1 * v1) + (v2 * v2 + v3 * v3)
        for k in range(K):
            scores[k] += (v0 * theta[j0, k] + v1 * theta[j1, k]) + (
                v2 * theta[j2, k] + v3 * theta[j3, k]
            )
        q += u4
    while q < stop:
        j0 = np.uint64(indices[q - off])
        v0 = np.float64(data[q])
        sq += v0 * v0
        for k in range(K):
            scores[k] += v0 * theta[j0, k]
        q += u1
    return sq


@njit
def row_averaged_scores(data, indices, off, start, stop, theta, U, S, out):
    """out[k] = sum_q x_q (S theta[j_q, k] - U[j_q, k]) over the nonzeros q of one row (float64):
    T times the averaged weights' scores (``S theta - U`` is the sum of the hypotheses, see
    :mod:`.euclid_pass`); no intercept feature (the caller adds it).

    Four nonzeros per step as :func:`row_scores_sqnorm`, for the same reason: one nonzero per
    step chains every nonzero on the read-modify-write of the same K sums."""
    K = out.shape[0]
    for k in range(K):
        out[k] = 0.0
    # unsigned positions and feature indices (see four_nonzeros)
    q, stop, off = np.uint64(start), np.uint64(stop), np.uint64(off)
    u1, u3, u4 = np.uint64(1), np.uint64(3), np.uint64(4)
    while q + u3 < stop:
        j0, j1, j2, j3, v0, v1, v2, v3 = four_nonzeros(data, indices, off, q)
        for k in range(K):
            out[k] += (v0 * (S * theta[j0, k] - U[j0, k]) + v1 * (S * theta[j1, k] - U[j1, k])) + (
                v2 * (S * theta[j2, k] - U[j2, k]) + v3 * (S * theta[j3, k] - U[j3, k])
            )
        q += u4
    while q < stop:
        j0 = np.uint64(indices[q - off])
        v0 = np.float64(data[q])
        for k in range(K):
            out[k] += v0 * (S * theta[j0, k] - U[j0, k])
        q += u1
