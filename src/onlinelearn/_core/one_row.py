"""One event of the Euclidean learners: :func:`.euclid_pass.euclid_pass` on one row, as one
transaction in compiled code.

The batch pass is the learner's step; this module does not compute a second one.  It wraps
the pass's own compiled function, called on a one-row batch, with what the estimator's
``partial_fit`` does around the pass in Python (:meth:`OnlineLinearClassifier._run`):

* before anything changes, the row is checked: every feature index in [0, n_features) and
  every value finite (:data:`BAD_INDEX`, :data:`NONFINITE_X`);
* the rows of ``theta`` and ``U`` the row can move (its features and the intercept row) and the
  counters ``st`` are copied into ``saved`` / ``saved_st``;
* after the pass, the same checks as the estimator's: the moved weights, their averaged
  read-out and the counters finite, and an aggressive step that skipped a lossy row because
  its squared norm overflowed; any failure puts the copies back (the state is then bit for
  bit what it was) and returns :data:`REFUSED`, and the caller lets the general path say why.

So one event is one compiled call, and the weights are those of ``partial_fit`` on the same
one-row batch: the same function does the arithmetic.  The event's arrays but the weights
(whose dtype varies) reach :func:`learn_row` and :func:`row_scores` as one table of addresses
(:mod:`.table`, :func:`table_of`): a call unboxes three arrays instead of eleven (numba's
dispatch costs about 0.1 us an array).  The caller keeps the arrays referenced beside the table
and makes it again whenever one of them is replaced.
"""

from __future__ import annotations

import numpy as np

from .calibration import CAL_AT_FIT, CAL_COUNT, CAL_HEAD, CAL_OFFERED, CAL_REFIT, CAL_SINCE_FIT
from .config import njit
from .copa import is_copa
from .euclid_pass import euclid_pass
from .fp import finite
from .row_status import BAD_INDEX, DUE, NONFINITE_X, OK, REFUSED, UNSORTED
from .state import (
    DUAL,
    N_FP,
    N_IP,
    N_ROUNDS,
    N_UPDATES,
    S_SUM,
    pass_params,
)
from .steps import CONSERVATIVE
from .table import F1, F2, I1, table
from .table import array_of as _at

__all__ = [
    "BAD_INDEX",
    "DUE",
    "NONFINITE_X",
    "OK",
    "REFUSED",
    "UNSORTED",
    "buffers",
    "learn_one_row",
    "learn_row",
    "row_label",
    "row_scores",
    "scores_of_row",
    "table_of",
]

@njit
def _moved_finite(theta, U, indices, start, stop, d, has_b, average):
    """True when the rows of theta (and U with averaging) that the row can move are finite."""
    acc = 0.0
    K = theta.shape[1]
    for q in range(start, stop + (1 if has_b else 0)):
        j = indices[q] if q < stop else d
        for k in range(K):
            acc += np.float64(theta[j, k]) * 0
            if average:
                acc += U[j, k] * 0
    return acc == 0


@njit
def _readout_finite(theta, U, st, indices, start, stop, d, b, average):
    """The averaged read-out (S theta - U) / max(S, T) of the moved rows finite, and b times the
    intercept row's weights (the read-out's or theta's)."""
    K = theta.shape[1]
    has_b = b != 0.0
    if not average:
        if has_b:
            for k in range(K):
                if not finite(b * np.float64(theta[d, k])):
                    return False
        return True
    T = st[N_ROUNDS]
    if T <= 0.0:
        return True
    S = st[S_SUM]
    N = S if S > T else T
    for q in range(start, stop + (1 if has_b else 0)):
        j = indices[q] if q < stop else d
        for k in range(K):
            v = (S * np.float64(theta[j, k]) - U[j, k]) / N
            if not finite(v):
                return False
            if q == stop and not finite(b * v):
                return False
    return True


#: slots of the int64 buffer ``ib`` of :func:`learn_row` (after the pass's codes ``ip``)
_IB_N_FEATURES = N_IP
_IB_INDPTR = N_IP + 1  # (2)
_IB_Y = N_IP + 3
_IB_ORDER = N_IP + 4
_IB_PRED = N_IP + 5
_IB_WORK = N_IP + 6  # work_idx (K)


def buffers(ip, fp, K, n_st, n_features):
    """The two buffers of :func:`learn_row` and :func:`row_scores` for K weight columns,
    counters of length ``n_st`` and rows of at most ``n_features`` entries: ``ib`` (int64:
    the pass's codes ``ip``, the width, then the pass's indptr, y, order, pred, work_idx) and
    ``fb`` (float64: the pass's parameters ``fp``, then weight, loss, scores, alpha, work_val,
    a copy of ``st``, the scored row's decision values (K), the read-out scores (K), the
    copies of the moved rows of theta and U); and views of ``fb``: (hold (1, K), out (K,))."""
    ib = np.zeros(N_IP + 6 + K, dtype=np.int64)
    ib[:N_IP] = ip
    ib[_IB_N_FEATURES] = n_features
    fb = np.zeros(N_FP + 2 + 3 * K + n_st + 2 * K + 2 * (n_features + 1) * K)
    fb[:N_FP] = fp
    fb[N_FP] = 1.0  # the example's weight
    h = N_FP + 2 + 3 * K + n_st
    return ib, fb, fb[h : h + K].reshape(1, K), fb[h + K : h + 2 * K]


@njit
def _window_add(hold, K, code, cal_scores, cal_codes, cal_weights, cal_n):
    """The row's score (``hold``) into the calibration window as ``Calibration.add`` of one
    row of weight 1 (one score for two classes: the column, or s_1 - s_0 of two columns; K
    otherwise), unless a score is not finite (the row is then left out); True when a fit is
    due (``Calibration.due``)."""
    C = cal_scores.shape[1]
    if C == 1 and K == 1:
        if not finite(hold[0, 0]):
            return False
    else:
        for k in range(K):
            if not finite(hold[0, k]):
                return False
    h = cal_n[CAL_HEAD]
    if C == 1 and K == 1:
        cal_scores[h, 0] = hold[0, 0]
    elif C == 1:
        cal_scores[h, 0] = hold[0, 1] - hold[0, 0]
    else:
        for k in range(C):
            cal_scores[h, k] = hold[0, k]
    cal_codes[h] = code
    cal_weights[h] = 1.0
    W = cal_codes.shape[0]
    cal_n[CAL_HEAD] = (h + 1) % W
    cal_n[CAL_COUNT] = min(W, cal_n[CAL_COUNT] + 1)
    cal_n[CAL_SINCE_FIT] += 1
    since = cal_n[CAL_SINCE_FIT]
    return since > 0 and since >= min(CAL_REFIT, max(1, cal_n[CAL_AT_FIT]))


#: rows of the event's table of addresses (:mod:`.table`): the averaging sums U, the counters,
#: the two buffers of :func:`buffers`, the class counts, the calibration's window (empty arrays
#: without one)
T_U, T_ST, T_IB, T_FB, T_COUNTS, T_CAL_SCORES, T_CAL_CODES, T_CAL_WEIGHTS, T_CAL_N = range(9)


def table_of(U, st, ib, fb, counts, window, previous=None):
    """The arrays of :func:`learn_row` and :func:`row_scores` as (the list of arrays, their
    table); ``window``: the calibration's (scores, codes, weights, counters), or empty arrays;
    ``previous``: an earlier result, whose rows are taken again for the arrays still there."""
    arrays = [U, st, ib, fb, counts, *window]
    return arrays, table(arrays, previous)


@njit
def learn_row(data, indices, code, theta, tab):
    """:func:`learn_one_row` with the arrays of the table ``tab`` (:func:`table_of`; one
    argument to unbox instead of ten); the row is scored for the calibration when the table
    holds its window."""
    cal_n = _at(tab, T_CAL_N, I1)
    return learn_one_row(
        data, indices, code, 0 if cal_n.shape[0] else -1, theta, _at(tab, T_U, F2),
        _at(tab, T_ST, F1), _at(tab, T_IB, I1), _at(tab, T_FB, F1), _at(tab, T_COUNTS, I1),
        _at(tab, T_CAL_SCORES, F2), _at(tab, T_CAL_CODES, I1), _at(tab, T_CAL_WEIGHTS, F1),
        cal_n,
    )  # fmt: skip


@njit
def learn_one_row(data, indices, code, hold_from, theta, U, st, ib, fb, counts, cal_scores,
                  cal_codes, cal_weights, cal_n):  # fmt: skip
    """Learn the row (``data``, ``indices``; a dense row is its d values with ``indices`` =
    arange(d)) of label code ``code`` as :func:`.euclid_pass.euclid_pass` does on that one-row
    batch, as a transaction (module docstring).  The pass's codes, parameters and small
    arrays are views of the two buffers of :func:`buffers` (fewer arguments to unbox per
    call); the row's score before it is learned goes to the buffer's ``hold`` when
    ``hold_from`` is 0.  After a learned row, what ``partial_fit`` does next: the class count
    (``counts``, ``class_counts_``) and, when the row was scored and ``cal_n`` holds the
    calibration's counters, the row into its window (:func:`_window_add`).  Returns OK,
    DUE (OK, and the calibration's fit is due: the caller decides it), NONFINITE_X, BAD_INDEX
    or REFUSED."""
    n_features = ib[_IB_N_FEATURES]
    nnz = data.shape[0]
    for q in range(nnz):
        j = indices[q]
        if j < 0 or j >= n_features:
            return BAD_INDEX
        if not finite(data[q]):
            return NONFINITE_X
    for q in range(1, nnz):
        if indices[q] <= indices[q - 1]:
            return UNSORTED
    R, K = theta.shape
    n_st = st.shape[0]
    ip = ib[0:N_IP]
    indptr = ib[_IB_INDPTR : _IB_INDPTR + 2]
    y = ib[_IB_Y : _IB_Y + 1]
    order = ib[_IB_ORDER : _IB_ORDER + 1]
    pred_out = ib[_IB_PRED : _IB_PRED + 1]
    work_idx = ib[_IB_WORK : _IB_WORK + K]
    fp = fb[0:N_FP]
    o = N_FP
    weight = fb[o : o + 1]
    loss_out = fb[o + 1 : o + 2]
    scores = fb[o + 2 : o + 2 + K]
    alpha = fb[o + 2 + K : o + 2 + 2 * K]
    work_val = fb[o + 2 + 2 * K : o + 2 + 3 * K]
    o += 2 + 3 * K
    saved_st = fb[o : o + n_st]
    o += n_st
    hold = fb[o : o + K].reshape((1, K))
    o += 2 * K
    saved = fb[o : o + 2 * (n_features + 1) * K].reshape((2, n_features + 1, K))
    indptr[0] = 0
    indptr[1] = nnz
    y[0] = code
    order[0] = 0
    pred_out[0] = 0
    loss_out[0] = 0.0
    for k in range(K):  # the pass's scratch starts at zero, as partial_fit's
        work_idx[k] = 0
        scores[k] = 0.0
        alpha[k] = 0.0
        work_val[k] = 0.0
    _, step, average, _, _, keep_dual, _, _, _, _, b, _, _, _, _ = pass_params(ip, fp)
    has_b = b != 0.0
    d = R - 1
    stop = nnz
    for q in range(0, stop + (1 if has_b else 0)):
        j = indices[q] if q < stop else d
        for k in range(K):
            saved[0, q, k] = theta[j, k]
            if average:
                saved[1, q, k] = U[j, k]
    for s in range(n_st):
        saved_st[s] = st[s]
    updates_before = st[N_UPDATES]
    # (lastS: the Euclidean pass does not read it)
    status = euclid_pass(
        data, indices, indptr, y, weight, order, theta, U, U, st, ip, fp, pred_out,
        loss_out, scores, alpha, work_idx, work_val, hold_from, hold,
    )  # fmt: skip
    ok = status == OK and _moved_finite(theta, U, indices, 0, stop, d, has_b, average)
    if ok:
        for s in range(DUAL):
            if not finite(st[s]):
                ok = False
    if ok and step != CONSERVATIVE and weight[0] > 0.0:
        # an aggressive step that learned nothing from a lossy row: tau = loss / ||x||^2 with
        # an overflowing ||x||^2 (COPA: every weighted row; its loss is not in loss_out)
        if is_copa(step) or (st[N_UPDATES] == updates_before and loss_out[0] > 0.0):
            sq = b * b
            for q in range(stop):
                v = np.float64(data[q])
                sq += v * v
            if not finite(sq):
                ok = False
    if ok:
        ok = _readout_finite(theta, U, st, indices, 0, stop, d, b, average)
    if not ok:
        # put back in the reverse order of the copies (a repeated index gets its first copy)
        for q in range(stop + (0 if has_b else -1), -1, -1):
            j = indices[q] if q < stop else d
            for k in range(K):
                theta[j, k] = saved[0, q, k]
                if average:
                    U[j, k] = saved[1, q, k]
        for s in range(n_st):
            st[s] = saved_st[s]
        return REFUSED
    if not keep_dual:
        st[DUAL] = np.nan  # this round is not in any kept dual
    counts[code] += 1
    if cal_n.shape[0] == 0:
        return OK
    due = False
    if hold_from == 0:
        due = _window_add(hold, K, code, cal_scores, cal_codes, cal_weights, cal_n)
    cal_n[CAL_OFFERED] += 1
    return DUE if due else OK


@njit
def row_scores(data, indices, theta, tab):
    """:func:`scores_of_row` with the arrays of the table ``tab`` (:func:`table_of`)."""
    return scores_of_row(data, indices, theta, _at(tab, T_U, F2), _at(tab, T_ST, F1),
                         _at(tab, T_IB, I1), _at(tab, T_FB, F1))  # fmt: skip


@njit
def row_label(data, indices, theta, tab):
    """:func:`row_scores`, then the code of the label ``predict`` gives the row: 1 when the
    one score of a binary model (one weight column) is > 0, else the first of the largest
    scores (the shell's ``_label``); -1 when :func:`row_scores` fails (the caller asks it
    why)."""
    if not row_scores(data, indices, theta, tab):
        return -1
    fb = _at(tab, T_FB, F1)
    K = theta.shape[1]
    # the read-out scores: the K values before the copies of the moved rows (:func:`buffers`)
    end = fb.shape[0] - 2 * (_at(tab, T_IB, I1)[_IB_N_FEATURES] + 1) * K
    if K == 1:
        return 1 if fb[end - 1] > 0.0 else 0
    best = 0
    for k in range(1, K):
        if fb[end - K + k] > fb[end - K + best]:
            best = k
    return best


@njit
def scores_of_row(data, indices, theta, U, st, ib, fb):
    """The K scores of one row in the steps of ``decision_function`` (the read-out W, then
    x W + b W[d]): the averaged weights (S theta - U) / max(S, T) (0 before any round) with
    averaging, theta without, each read-out weight and the intercept's b W[d] rounded to the
    weights' dtype as the read-out matrix holds them.  Returns False when an index is out of
    range or a score is not finite (the caller says which)."""
    R, K = theta.shape
    _, _, average, _, _, _, _, _, _, _, b, _, _, _, _ = pass_params(ib, fb)
    d = R - 1
    n_features = ib[_IB_N_FEATURES]
    o = N_FP + 2 + 3 * K + st.shape[0] + K
    out = fb[o : o + K]  # (the buffers of :func:`buffers`: the read-out scores)
    held = np.empty(1, dtype=theta.dtype)  # rounds a value to the weights' dtype
    for k in range(K):
        out[k] = 0.0
    T = st[N_ROUNDS]
    S = st[S_SUM]
    N = S if S > T else T
    for q in range(data.shape[0]):
        j = indices[q]
        if j < 0 or j >= n_features:
            return False
        v = np.float64(data[q])
        for k in range(K):
            if average:
                held[0] = (S * np.float64(theta[j, k]) - U[j, k]) / N if T > 0.0 else 0.0
                w = np.float64(held[0])
            else:
                w = np.float64(theta[j, k])
            out[k] += v * w
    if b != 0.0:
        held[0] = b
        bw = np.float64(held[0])
        for k in range(K):
            if average:
                held[0] = (S * np.float64(theta[d, k]) - U[d, k]) / N if T > 0.0 else 0.0
            else:
                held[0] = theta[d, k]
            held[0] = bw * np.float64(held[0])
            out[k] += np.float64(held[0])
    for k in range(K):
        if not finite(out[k]):
            return False
    return True
