"""One event of the second-order learners (AROW, SCW, the weighted min-max forecaster): the
family's batch pass (:mod:`.second_order`) on a one-row batch, as one transaction in compiled
code.

As :mod:`.one_row` does for the Euclidean learners, this module does not compute a second
step: each function below calls the pass that ``partial_fit`` runs, on the row given as
(``data``, ``indices``), and wraps it with what the estimator does around the pass in Python
(:meth:`onlinelearn.second_order._base.SecondOrderClassifier._learn`):

* before anything changes, the row is checked: every index in [0, d) (:data:`BAD_INDEX`),
  every value finite (:data:`NONFINITE_X`), the indices strictly increasing, as in the
  canonical CSR row that ``partial_fit`` reads (:data:`UNSORTED`: the caller sorts them);
  the min-max learner's ||x||^2 < b (:data:`GENERAL` near or past the bound: the general path
  decides and says why);
* the entries the pass can write are copied into ``saved`` (:data:`NEED_ROOM` when it is too
  small: the caller enlarges it and calls again), the counters into the scratch;
* after the pass, the same check as the estimator's (every entry of the state arrays finite),
  on the entries it wrote (the rest was finite before: the caller checks the whole state once
  when it sets up its events); a failure puts the copies back and returns :data:`REFUSED`.

What the pass can write, hence what is copied (R = d + 1 rows with an intercept, n the row's
entries with the intercept's, K columns):

* AROW / SCW, full Sigma: the rows of W and of Sigma in the support of Sigma x, which lies in
  J = {s: Sigma[j, s] != 0 for a column j of the row}; of Sigma, the J x J block, or the rows
  J whole when |J| >= R / 8 (the pass then sweeps whole rows): O(|J|^2) or O(|J| R), O(R^2)
  at worst, when Sigma is dense.  A wide model learning sparse rows copies little;
* AROW / SCW, diagonal: the n rows of W and entries of Sigma;
* min-max, full A^{-1}: the pass rewrites A^{-1} and W whole (and, every max(512, 4 R)
  updates, recomputes them from A and B), so they are copied whole, O(R^2 + R K), with the
  n x n block of A and the n rows of B;
* min-max, diagonal: the n entries of A and A^{-1}, the n rows of B and W.

The scores that the probability calibration keeps for a row are the model's before the row
(``decision_function`` of the one-row batch, as ``partial_fit`` scores it):
:func:`exact_scores` computes them on request, in the order and roundings of scipy's CSR
product (compiled without fastmath).

Scratch (:func:`scratch`): ``ib`` (int64) and ``fb`` (float64) hold the one-row batch's small
arrays and the parameters of the step, at the ``I_*`` / ``F_*`` slots, then views taken
inside (fewer arguments to unbox per call).
"""

from __future__ import annotations

import numpy as np

from .config import njit
from .fp import finite
from .row_status import (
    BAD_INDEX,
    GENERAL,
    NEED_ROOM,
    NONFINITE_SCORE,
    NONFINITE_X,
    OK,
    REFUSED,
    UNSORTED,
)
from .second_order import (
    N_ST,
    NOT_PD,
    cw_pass_diag,
    cw_pass_full,
    minmax_pass_diag,
    minmax_pass_full,
)

__all__ = [
    "BAD_INDEX", "GENERAL", "NEED_ROOM", "NONFINITE_X", "OK", "REFUSED", "UNSORTED",
    "cw_row", "exact_scores", "mm_row", "row_scores", "scratch",
]  # fmt: skip

# (the statuses: :mod:`.row_status`; ``saved`` too small: NEED_ROOM, ``ib[I_NEED]`` entries
# are needed; the min-max bound: GENERAL)

# ib slots
I_PTR = 0  #: indptr of the one-row batch (2 slots)
I_Y = 2  #: the row's label code
I_PRED = 3  #: the pass's prediction (out)
I_SCORE = 4  #: 1: put the row's scores before it is learned in the hold slots of fb
I_D = 5  #: d, the number of features
I_PARAM = 6  #: AROW / SCW: the variant; min-max: the refresh period of A^{-1}
I_FLAGS = 7  #: min-max: 1 adaptive margin, 2 query, 4 one-hot labels
I_NEED = 8  #: the room ``saved`` needs (out, with NEED_ROOM)
I_UPD = 9  #: min-max: the round's update flag (out)
I_RIVAL = 10  #: min-max: the round's rival class (out)
I_HEAD = 16  #: then J (R slots), then jj (d + 2 slots)

# fb slots
F_BIAS = 0  #: the intercept feature's value (0: none)
F_R = 1  #: AROW: r; min-max: c (the query parameter)
F_C = 2  #: SCW: C; min-max: b (the bound on ||x||^2)
F_PHI = 3  #: SCW: phi
F_U = 4  #: min-max: the uniform draw of the query
F_A = 5  #: min-max: a_t (out)
F_DELTA = 6  #: min-max: Delta_t (out)
F_HEAD = 8  #: then hold (K), f (K), xx (d + 2), Sx (R), the counters' copy (N_ST)

#: relative margin kept from the min-max bound: closer, the general path decides
_BOUND_MARGIN = 1e-12


def scratch(K, R, d):
    """(ib, fb) for K weight columns, R state rows and d features (module docstring)."""
    ib = np.zeros(I_HEAD + R + d + 2, dtype=np.int64)
    fb = np.zeros(F_HEAD + 2 * K + d + 2 + R + N_ST)
    ib[I_D] = d
    return ib, fb


def hold_slice(K):
    """The slots of fb where the scores of a row before it is learned are put."""
    return slice(F_HEAD, F_HEAD + K)


@njit
def _check_row(data, indices, d):
    """OK, BAD_INDEX, NONFINITE_X or UNSORTED (the first problem met; indices first)."""
    prev = -1
    ordered = True
    for q in range(data.shape[0]):
        j = indices[q]
        if j < 0 or j >= d:
            return BAD_INDEX
        if not finite(data[q]):
            return NONFINITE_X
        if j <= prev:
            ordered = False
        prev = j
    return OK if ordered else UNSORTED


@njit(fastmath=False)
def exact_scores(data, indices, W, d, b, out):
    """out[k] = sum_q x_q W[j_q, k] (+ b W[d, k]): ``decision_function``'s scores of a CSR
    row, in scipy's order (each column summed from 0 over the entries in order) and numpy's
    intercept term added last; compiled without fastmath, so bit for bit the same."""
    K = W.shape[1]
    for k in range(K):
        s = 0.0
        for q in range(data.shape[0]):
            s += data[q] * W[indices[q], k]
        if b != 0.0:
            s = s + b * W[d, k]
        out[k] = s


@njit(fastmath=False)
def row_scores(data, indices, W, ib, fb, out):
    """The scores of one row for prediction (:func:`exact_scores`); OK, BAD_INDEX,
    NONFINITE_X, UNSORTED (scores computed in the given order) or NONFINITE_SCORE."""
    status = _check_row(data, indices, ib[I_D])
    if status != OK and status != UNSORTED:
        return status
    exact_scores(data, indices, W, ib[I_D], fb[F_BIAS], out)
    for k in range(out.shape[0]):
        if not finite(out[k]):
            return NONFINITE_SCORE
    return status


@njit
def _rows_finite(M, J, nJ, K):
    """The rows J[:nJ] of M finite (nJ < 0: the first -nJ rows)."""
    for a in range(abs(nJ)):
        s = J[a] if nJ > 0 else a
        for k in range(K):
            if not finite(M[s, k]):
                return False
    return True


@njit
def _copy(src, dst):
    for s in range(src.shape[0]):
        dst[s] = src[s]


@njit
def _views(ib, fb, K, R):
    d = ib[I_D]
    indptr = ib[I_PTR : I_PTR + 2]
    y = ib[I_Y : I_Y + 1]
    pred = ib[I_PRED : I_PRED + 1]
    J = ib[I_HEAD : I_HEAD + R]
    jj = ib[I_HEAD + R : I_HEAD + R + d + 2]
    o = F_HEAD
    hold = fb[o : o + K]
    f = fb[o + K : o + 2 * K]
    xx = fb[o + 2 * K : o + 2 * K + d + 2]
    o += 2 * K + d + 2
    Sx = fb[o : o + R]
    saved_st = fb[o + R : o + R + N_ST]
    return indptr, y, pred, J, jj, hold, f, xx, Sx, saved_st


@njit
def _open(data, indices, W, ib, fb, bound):
    """The checks before anything changes (the row's; with ``bound``, the min-max learner's
    ||x||^2 < b with a margin: module docstring), the one-row batch's arrays and, when asked,
    the row's scores before the step in ``hold``.  Returns (status: OK, NONFINITE_X, UNSORTED,
    BAD_INDEX or GENERAL; the views of :func:`_views`)."""
    R, K = W.shape
    views = _views(ib, fb, K, R)
    status = _check_row(data, indices, ib[I_D])
    if status != OK:
        return status, views
    ib[I_PTR] = 0
    ib[I_PTR + 1] = data.shape[0]
    ib[I_PRED] = 0
    if ib[I_SCORE] != 0:
        exact_scores(data, indices, W, ib[I_D], fb[F_BIAS], views[5])
    if bound:
        b = fb[F_BIAS]
        sq = b * b
        for q in range(data.shape[0]):
            sq += data[q] * data[q]
        if not sq < fb[F_C] * (1.0 - _BOUND_MARGIN):
            return GENERAL, views
    return OK, views


@njit
def _room(ib, need, saved):
    """True when ``saved`` holds ``need`` entries; else ``ib[I_NEED]`` = need."""
    if need > saved.shape[0]:
        ib[I_NEED] = need
        return False
    return True


@njit
def _keep(st, saved_st, ib, fb, saved, trace, back):
    """Copy the counters (and with ``trace``, the min-max trace slots: update, rival, a,
    delta, in ``saved[0:4]``) into their copies, or back."""
    keep = saved[0:4]
    if back:
        _copy(saved_st, st)
        if trace:
            ib[I_UPD], ib[I_RIVAL] = int(keep[0]), int(keep[1])
            fb[F_A], fb[F_DELTA] = keep[2], keep[3]
    else:
        _copy(st, saved_st)
        if trace:
            keep[0], keep[1] = ib[I_UPD], ib[I_RIVAL]
            keep[2], keep[3] = fb[F_A], fb[F_DELTA]


@njit
def cw_row(data, indices, W, S, st, ib, fb, saved):
    """One row of AROW / SCW: :func:`.second_order.cw_pass_full` (Sigma a matrix) or
    :func:`.second_order.cw_pass_diag` (Sigma its diagonal) on the one-row batch, as a
    transaction (module docstring).  Returns OK, NONFINITE_X, UNSORTED, BAD_INDEX, NEED_ROOM
    or REFUSED."""
    status, (indptr, y, pred, J, jj, hold, f, xx, Sx, saved_st) = _open(
        data, indices, W, ib, fb, False)  # fmt: skip
    if status != OK:
        return status
    R, K = W.shape
    d = ib[I_D]
    b = fb[F_BIAS]
    n = data.shape[0]
    if S.ndim == 1:
        nJ = _row_columns(indices, n, b, d, J)
        whole = False
        need = nJ * (K + 1)
    else:
        # J: the rows of Sigma that a column of the row (the intercept's included) reaches
        for s in range(R):
            Sx[s] = 0.0
        for q in range(n + (1 if b != 0.0 else 0)):
            j = indices[q] if q < n else d
            for s in range(R):
                if S[j, s] != 0.0:
                    Sx[s] = 1.0
        nJ = 0
        for s in range(R):
            if Sx[s] != 0.0:
                J[nJ] = s
                nJ += 1
        whole = 8 * nJ >= R  # the pass sweeps whole rows of Sigma (cw_pass_full)
        need = nJ * (R if whole else nJ) + nJ * K
    if not _room(ib, need, saved):
        return NEED_ROOM
    _cw_copies(W, S, J, nJ, whole, saved, False)
    _keep(st, saved_st, ib, fb, saved, False, False)
    if S.ndim == 2:
        cw_pass_full(data, indices, indptr, y, b, d, W, S, ib[I_PARAM], fb[F_R], fb[F_C],
                     fb[F_PHI], st, pred, jj, xx, Sx, f)  # fmt: skip
    else:
        cw_pass_diag(data, indices, indptr, y, b, d, W, S, ib[I_PARAM], fb[F_R], fb[F_C],
                     fb[F_PHI], st, pred, jj, xx, f)  # fmt: skip
    ok = _rows_finite(W, J, nJ, K)
    for a in range(nJ):
        if S.ndim == 1:
            ok = ok and finite(S[J[a]])
        else:
            for c in range(R if whole else nJ):
                ok = ok and finite(S[J[a], c if whole else J[c]])
    if ok:
        return OK
    _cw_copies(W, S, J, nJ, whole, saved, True)
    _keep(st, saved_st, ib, fb, saved, False, True)
    return REFUSED


@njit
def _cw_copies(W, S, J, nJ, whole, saved, back):
    """Copy the rows J of W and of Sigma (whole, or their entries in J; a diagonal Sigma: its
    entries J) into ``saved``, or back."""
    if S.ndim == 1:
        _diag_copies((S,), (W,), J, nJ, saved, 0, back)
        return
    R, K = W.shape
    p = 0
    for a in range(nJ):
        s = J[a]
        for k in range(K):
            p = _swap(W, s, k, saved, p, back)
        for c in range(R if whole else nJ):
            p = _swap(S, s, c if whole else J[c], saved, p, back)


@njit
def _swap(M, i, j, saved, p, back):
    """saved[p] = M[i, j] (M[i] for a vector), or back; returns p + 1."""
    if M.ndim == 1:
        if back:
            M[i] = saved[p]
        else:
            saved[p] = M[i]
    elif back:
        M[i, j] = saved[p]
    else:
        saved[p] = M[i, j]
    return p + 1


@njit
def _row_columns(indices, n, b, d, J):
    """J = the row's columns, then d for the intercept feature; returns their number."""
    for q in range(n):
        J[q] = indices[q]
    if b != 0.0:
        J[n] = d
        return n + 1
    return n


@njit
def mm_row(data, indices, P, A, B, W, st, ib, fb, saved):
    """One row of the weighted min-max learner: :func:`.second_order.minmax_pass_full` (A^{-1}
    a matrix) or :func:`.second_order.minmax_pass_diag` (a diagonal A: P its diagonal) on the
    one-row batch, as a transaction (module docstring).  The round's trace (update flag,
    rival, a_t, Delta_t) is left in the ``I_UPD``, ``I_RIVAL``, ``F_A``, ``F_DELTA`` slots
    (put back when refused)."""
    status, (indptr, y, pred, J, jj, hold, f, xx, Sx, saved_st) = _open(
        data, indices, W, ib, fb, True)  # fmt: skip
    if status != OK:
        return status
    R, K = W.shape
    b = fb[F_BIAS]
    n = _row_columns(indices, data.shape[0], b, ib[I_D], J)
    need = 4 + (R * R + R * K + n * n + n * K if P.ndim == 2 else n * (2 + 2 * K))
    if not _room(ib, need, saved):
        return NEED_ROOM
    _keep(st, saved_st, ib, fb, saved, True, False)
    _mm_copies(P, A, B, W, J, n, saved, False)
    flags = ib[I_FLAGS]
    args = (data, indices, indptr, y, fb[F_U : F_U + 1], b, ib[I_D], P, A, B, W,
            (flags & 1) != 0, (flags & 2) != 0, fb[F_R])  # fmt: skip
    outs = (pred, ib[I_UPD : I_UPD + 1], fb[F_A : F_A + 1], ib[I_RIVAL : I_RIVAL + 1],
            fb[F_DELTA : F_DELTA + 1], jj, xx)  # fmt: skip
    if P.ndim == 2:
        status = minmax_pass_full(*args, ib[I_PARAM], st, *outs, Sx, f, (flags & 4) != 0)
    else:
        status = minmax_pass_diag(*args, st, *outs, f, (flags & 4) != 0)
    ok = status != NOT_PD and _rows_finite(B, J, n, K)
    if P.ndim == 2:
        ok = ok and _rows_finite(W, J, -R, K) and _rows_finite(P, J, -R, R)
        for a in range(n):
            for c in range(n):
                ok = ok and finite(A[J[a], J[c]])
    else:
        ok = ok and _rows_finite(W, J, n, K)
        for a in range(n):
            ok = ok and finite(P[J[a]]) and finite(A[J[a]])
    if ok:
        return OK
    _keep(st, saved_st, ib, fb, saved, True, True)
    _mm_copies(P, A, B, W, J, n, saved, True)
    return REFUSED


@njit
def _mm_copies(P, A, B, W, J, n, saved, back):
    """Copy A^{-1} and W whole, the J x J block of A and the rows J of B into ``saved`` (a
    diagonal A: the entries J of P and A, the rows J of B and W), after the trace's 4 slots,
    or back."""
    if P.ndim == 1:
        _diag_copies((P, A), (B, W), J, n, saved, 4, back)
        return
    R, K = W.shape
    p = 4
    for s in range(R):
        for c in range(R):
            p = _swap(P, s, c, saved, p, back)
        for k in range(K):
            p = _swap(W, s, k, saved, p, back)
    for a in range(n):
        for c in range(n):
            p = _swap(A, J[a], J[c], saved, p, back)
        for k in range(K):
            p = _swap(B, J[a], k, saved, p, back)


@njit
def _diag_copies(vectors, matrices, J, n, saved, p, back):
    """Copy the entries J of the vectors and the rows J of the matrices into ``saved`` from
    position p, or back."""
    K = matrices[0].shape[1]
    for a in range(n):
        s = J[a]
        for M in vectors:
            p = _swap(M, s, 0, saved, p, back)
        for M in matrices:
            for k in range(K):
                p = _swap(M, s, k, saved, p, back)
