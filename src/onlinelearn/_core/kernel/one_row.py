"""One event of the kernel online learners: :func:`.online.kernel_pass` on one row, as one
transaction in compiled code.

The batch pass is the learner's step; this module does not compute a second one.  It calls the
pass's own compiled function on a one-row batch, with what the estimator's ``partial_fit`` does
around the pass in Python (``KernelOnlineClassifier._learn`` and ``_run``):

* before anything changes, the row is checked (every feature index in [0, n_features), every
  value finite: :data:`BAD_INDEX`, :data:`NONFINITE_X`) and written into a buffer, a sparse row
  as its nonzero entries sorted by index (the canonical CSR row ``partial_fit`` reads, whose
  explicit zeros change no kernel value and are not stored; a repeated index is
  :data:`DUPLICATE`, left to the general path, which sums the entries);
* the room the row needs is checked as ``_ensure_capacity`` would find it; when that method
  would grow the slots or compact the pool, nothing is changed and :data:`NEED_ROOM` asks the
  caller to run it (the same method, so the same arrays) and to call again;
* the row's kernel values with the support vectors and itself, ``kv``, are computed ahead
  (:func:`.online.row_values`: the kernel program's calls of the pass, or the leaf of a
  one-leaf kernel called directly, the same values) or found in the event's cache:
  :func:`row_scores` (``predict_one``) of the same row against the same support set leaves
  them there, so that a ``predict_one`` then ``learn_one`` of a row evaluates the kernel once;
  the pass reads them (its ``kv``) instead of computing them again;
* what the step can write is copied: the slot of the new vector and, with a full budget, the
  slot of the vector it removes (the last slot moves there), the pool entries past the used
  ones, the counters;
* after the pass, the estimator's checks: the pass's status and every coefficient finite; a
  failure puts the copies back (the state is then bit for bit what it was) and returns
  :data:`REFUSED`, and the caller lets the general path say why; else the pass's rows are
  forgotten (``sv_src = -1``) and the kept dual is dropped for COPA, as ``_run`` does.

With the ``scored`` flag, the coefficients of the averaged hypothesis before the step are left
in the buffer ``CU`` (the steps of ``_coef_in_use``, without fastmath, so bit for bit
numpy's): with ``kv`` they give the caller the score ``decision_function`` gives the row
before the call, which the probability calibration keeps.

The arrays (the estimator's state, the kernel program, the event's buffers) reach the compiled
functions as one table of addresses (:mod:`onlinelearn._core.table`): a call then unboxes four
arguments instead of thirty (numba's dispatch costs about 0.1 us an array).  The caller
(:mod:`onlinelearn.kernel_methods._events`) keeps the arrays referenced beside the table and
makes it again whenever any of them is replaced.
"""

from __future__ import annotations

import math

import numpy as np

from ..calibration import CAL_COUNT, CAL_OFFERED
from ..config import njit
from ..fp import finite
from ..row_status import (
    BAD_INDEX,
    DUPLICATE,
    NEED_ROOM,
    NONFINITE_SCORE,
    NONFINITE_X,
    OK,
    REFUSED,
)
from ..table import F1, F2, I1, I2, I32, table
from ..table import array_of as _at
from .gram import row_bounds, row_leaf_sqnorms
from .online import (
    BIRTHS,
    DUAL,
    N_REMOVED,
    N_ST,
    N_SV,
    POOL_USED,
    S_CLOCK,
    T,
    _victim,
    kernel_pass,
    row_values,
)

__all__ = [
    "BAD_INDEX", "DUPLICATE", "NEED_ROOM", "NONFINITE_X", "OK", "REFUSED", "learn_row",
    "row_label", "row_scores", "table",
]  # fmt: skip

# ---------------------------------------------------------------------------- the table
# the estimator's arrays, then the kernel program's
(POOL_D, POOL_I, SV_LO, SV_HI, SV_NORM, SV_KXX, COEF, AVG, LAST, BORN, LABEL, SV_SRC, ST,
 OPS, PAR, RANGES) = range(16)  # fmt: skip
# the event's buffers: ints, floats, kernel values (cap + 1), coefficients in use (cap, K), the
# row (n_features), the row of ``kv`` (n_features), the copies (two slots, then the counters
# and the pool entries: :func:`saved_shapes`), the row's norms (1, n_leaves), the zeros of
# row_values (2 n_features); then the estimator's class counts and the calibration's counters
# (``Calibration._n``; empty without a calibration fed)
(IB, FB, KV, CU, ROW_D, ROW_I, KEY_D, KEY_I, SLOTS_F, SLOTS_I, SAVED_F, SAVED_I, NORMS,
 ZEROS, COUNTS, CAL_N) = range(16, 32)  # fmt: skip
N_TAB = 32

#: ``IB``: the step's codes, n_features, the scored flag (out: the calibration asked for the
#: row's score), the support vectors before the step and the row's nonzeros (out), the cache
#: of ``kv`` (valid, its row's length, dense), the calibration's rule for one row
#: (``Calibration.wants``: every row while it holds fewer than REFIT rows, then the row that
#: crosses a multiple of the stride), then the pass's one-row arrays: y, order, pred,
#: slot_of_row, indptr (2), work_idx (K)
(I_STEP, I_BINARY, I_AVERAGE, I_BUDGET, I_RULE, I_KEEP_DUAL, I_NF, I_SCORED, I_N_OLD, I_NNZ,
 I_KEY, I_KEY_NNZ, I_KEY_DENSE, I_CAL_REFIT, I_CAL_STRIDE, I_Y, I_ORDER, I_PRED, I_SLOT,
 I_INDPTR) = range(20)  # fmt: skip
I_WORK = I_INDPTR + 2
#: ``FB``: C, gamma, b^2, the kept dual's margin, the support set of ``kv`` (births, removals,
#: size), the pass's weight and loss, then scores, alpha, work_val, avg_scores, out, sums (K
#: each) and the program's stack (n_ops + 1)
(F_C, F_GAMMA, F_B2, F_GAMMA_D, F_KEY_BIRTHS, F_KEY_REMOVED, F_KEY_NSV, F_WEIGHT,
 F_LOSS) = range(9)  # fmt: skip
F_K = 9  # the first of the K-long blocks
N_K_BLOCKS = 6


def buffer_sizes(K, n_ops, n_features):
    """Lengths of ``IB`` and ``FB`` for K score columns, a program of n_ops codes and rows of
    n_features columns."""
    return I_WORK + K, F_K + N_K_BLOCKS * K + n_ops + 1


def saved_shapes(K, n_leaves, n_features):
    """Shapes of ``SLOTS_F``, ``SLOTS_I`` (two slots), ``SAVED_F`` (the counters and the pool
    entries' values) and ``SAVED_I`` (their columns)."""
    return (2, n_leaves + 2 * K + 3), (2, 4), (N_ST + n_features,), (n_features,)


# ---------------------------------------------------------------------------- the row
@njit
def _is_dense(data, indices):
    """A dense row is its n_features values with an empty ``indices``; a sparse row has as many
    indices as values (an empty sparse row: none of either)."""
    return indices.shape[0] != data.shape[0]


@njit
def _take_row(data, indices, nf, row_d, row_i):
    """Check the row and copy it into (row_d, row_i): a dense row (:func:`_is_dense`) is its nf
    values, a sparse one its nonzero entries sorted by index (an explicit zero changes no kernel
    value, no norm, and the pass stores no zero: leaving it out saves the merges a step).
    Returns (status, entries copied, nonzeros)."""
    dense = _is_dense(data, indices)
    n = data.shape[0]
    nz = 0
    if dense and n != nf:
        return BAD_INDEX, 0, 0  # (the callers check the width first)
    if n > nf:
        return DUPLICATE, 0, 0  # more entries than columns: an index repeats (or is bad)
    if dense:
        for q in range(n):
            v = data[q]
            if not finite(v):
                return NONFINITE_X, 0, 0
            row_d[q] = v
            if v != 0.0:
                nz += 1
        return OK, n, nz
    ordered = True
    for q in range(n):
        j = indices[q]
        if j < 0 or j >= nf:
            return BAD_INDEX, 0, 0
        v = data[q]
        if not finite(v):
            return NONFINITE_X, 0, 0
        if q > 0 and j <= indices[q - 1]:
            ordered = False
        if v != 0.0:
            row_d[nz] = v
            row_i[nz] = j
            nz += 1
    if not ordered:  # again in the order of the indices; a repeated one is DUPLICATE
        order = np.argsort(indices)
        nz = 0
        for t in range(n):
            q = order[t]
            j = indices[q]
            if t > 0 and j == indices[order[t - 1]]:
                return DUPLICATE, 0, 0
            v = data[q]
            if v != 0.0:
                row_d[nz] = v
                row_i[nz] = j
                nz += 1
    return OK, nz, nz


@njit
def _values(tab, row_d, row_i, n, dense, st, ib, fb):
    """The kernel values ``KV`` of the row (n stored values) with the support vectors and
    itself, and its norms ``NORMS``: computed, or kept from the last call on the same row and
    the same support set (module docstring)."""
    kv = _at(tab, KV, F1)
    norms = _at(tab, NORMS, F2)
    indptr = _at(tab, IB, I1)[I_INDPTR : I_INDPTR + 2]
    indptr[0] = 0
    indptr[1] = n
    nf = ib[I_NF]
    key_d = _at(tab, KEY_D, F1)
    key_i = _at(tab, KEY_I, I32)
    known = (ib[I_KEY] == 1 and ib[I_KEY_NNZ] == n and ib[I_KEY_DENSE] == int(dense)
             and fb[F_KEY_BIRTHS] == st[BIRTHS] and fb[F_KEY_REMOVED] == st[N_REMOVED]
             and fb[F_KEY_NSV] == st[N_SV])  # fmt: skip
    if known:
        for q in range(n):
            if key_d[q] != row_d[q] or (not dense and key_i[q] != row_i[q]):
                known = False
                break
    if known:
        return
    ranges = _at(tab, RANGES, I2)
    row_leaf_sqnorms(row_d, row_i, indptr, 1, nf, dense, ranges, norms)
    a0, a1 = row_bounds(indptr, 0, nf, dense)
    K = _at(tab, COEF, F2).shape[1]
    stack = fb[F_K + N_K_BLOCKS * K :]
    row_values(_at(tab, OPS, I2), _at(tab, PAR, F1), ranges, row_d, row_i, a0, a1, dense,
               norms[0], _at(tab, POOL_D, F1), _at(tab, POOL_I, I32), _at(tab, SV_LO, I1),
               _at(tab, SV_HI, I1), _at(tab, SV_NORM, F2), int(st[N_SV]), stack,
               _at(tab, ZEROS, F1), kv)  # fmt: skip
    for q in range(n):
        key_d[q] = row_d[q]
        key_i[q] = row_i[q] if not dense else 0
    ib[I_KEY] = 1
    ib[I_KEY_NNZ] = n
    ib[I_KEY_DENSE] = int(dense)
    fb[F_KEY_BIRTHS] = st[BIRTHS]
    fb[F_KEY_REMOVED] = st[N_REMOVED]
    fb[F_KEY_NSV] = st[N_SV]


@njit(fastmath=False)
def _coef_in_use(coef, A, last, st, n, average, out):
    """``KernelOnlineClassifier._coef_in_use``'s (n, K) coefficients in ``out``, in numpy's
    steps: (A + c (S - last)) / T, rounded after each operation (no fastmath: no contraction
    into a fused multiply-add, no reciprocal)."""
    K = coef.shape[1]
    T_ = st[T]
    S = st[S_CLOCK]
    for s in range(n):
        d = S - last[s]
        for k in range(K):
            if not average:
                out[s, k] = coef[s, k]
            elif T_ <= 0.0:
                out[s, k] = 0.0
            else:
                out[s, k] = (A[s, k] + coef[s, k] * d) / T_


@njit
def row_scores(data, indices, tab):
    """The K scores of the averaged hypothesis (``decision_function``'s, summed in another
    order) for the row (``data``, ``indices``; a dense row: its n_features values and an
    empty ``indices``, :func:`_is_dense`) in ``FB``'s ``out`` block.  Returns OK, BAD_INDEX,
    NONFINITE_X, DUPLICATE or NONFINITE_SCORE; changes nothing but the event's buffers."""
    ib = _at(tab, IB, I1)
    fb = _at(tab, FB, F1)
    st = _at(tab, ST, F1)
    row_d = _at(tab, ROW_D, F1)
    row_i = _at(tab, ROW_I, I32)
    status, n, nz = _take_row(data, indices, ib[I_NF], row_d, row_i)
    if status != OK:
        return status
    dense = _is_dense(data, indices)
    _values(tab, row_d, row_i, n, dense, st, ib, fb)
    kv = _at(tab, KV, F1)
    coef = _at(tab, COEF, F2)
    A = _at(tab, AVG, F2)
    last = _at(tab, LAST, F1)
    K = coef.shape[1]
    out = fb[F_K + 4 * K : F_K + 5 * K]
    tot = fb[F_K + 5 * K : F_K + 6 * K]
    average = ib[I_AVERAGE] != 0
    T_ = st[T]
    S = st[S_CLOCK]
    for k in range(K):
        out[k] = 0.0
        tot[k] = 0.0
    if not average or T_ > 0.0:
        for s in range(int(st[N_SV])):
            d = S - last[s]
            for k in range(K):
                c = (A[s, k] + coef[s, k] * d) / T_ if average else coef[s, k]
                out[k] += kv[s] * c
                tot[k] += c
    b2 = fb[F_B2]
    for k in range(K):
        out[k] += b2 * tot[k]
        if not finite(out[k]):
            return NONFINITE_SCORE
    return OK


@njit
def row_label(data, indices, tab):
    """:func:`row_scores`, then the code of the label ``predict`` gives the row: 1 when the one
    score of a binary learner is > 0, else the first of the largest scores (the shell's
    ``_label``); -1 when :func:`row_scores` does not return OK (the caller asks it why)."""
    if row_scores(data, indices, tab) != OK:
        return -1
    K = _at(tab, COEF, F2).shape[1]
    out = _at(tab, FB, F1)[F_K + 4 * K : F_K + 5 * K]
    if _at(tab, IB, I1)[I_BINARY] != 0:
        return 1 if out[0] > 0.0 else 0
    best = 0
    for k in range(1, K):
        if out[k] > out[best]:
            best = k
    return best


# ---------------------------------------------------------------------------- learning
@njit
def _copy_slot(dst, to, src, frm):
    """Slot ``src`` of the slot arrays ``frm`` into slot ``dst`` of ``to`` (each a tuple
    sv_lo, sv_hi, label, sv_src, sv_norm, sv_kxx, coef, A, last, born): the copies of
    :func:`learn_row` into its records, and back."""
    to[0][dst] = frm[0][src]
    to[1][dst] = frm[1][src]
    to[2][dst] = frm[2][src]
    to[3][dst] = frm[3][src]
    to[4][dst, :] = frm[4][src, :]
    to[5][dst] = frm[5][src]
    to[6][dst, :] = frm[6][src, :]
    to[7][dst, :] = frm[7][src, :]
    to[8][dst] = frm[8][src]
    to[9][dst] = frm[9][src]


@njit
def learn_row(data, indices, code, tab):
    """Learn the row (``data``, ``indices``; a dense row: its n_features values and an empty
    ``indices``, :func:`_is_dense`) of label code ``code`` as :func:`.online.kernel_pass` does
    on that one-row batch, as a transaction (module docstring).  After a learned row, what
    ``partial_fit`` does next: the class count and, with a calibration, the row counted as
    offered, unless the calibration asked for its score (``IB[I_SCORED]``: the caller then
    adds the score and counts the row).  Returns OK, NONFINITE_X, BAD_INDEX, DUPLICATE,
    NEED_ROOM or REFUSED."""
    ib = _at(tab, IB, I1)
    fb = _at(tab, FB, F1)
    st = _at(tab, ST, F1)
    row_d = _at(tab, ROW_D, F1)
    row_i = _at(tab, ROW_I, I32)
    nf = ib[I_NF]
    status, n_row, nz = _take_row(data, indices, nf, row_d, row_i)
    if status != OK:
        return status
    dense = _is_dense(data, indices)
    pool_d, pool_i = _at(tab, POOL_D, F1), _at(tab, POOL_I, I32)
    sv_lo, sv_hi = _at(tab, SV_LO, I1), _at(tab, SV_HI, I1)
    sv_norm, sv_kxx = _at(tab, SV_NORM, F2), _at(tab, SV_KXX, F1)
    coef, A = _at(tab, COEF, F2), _at(tab, AVG, F2)
    last, born = _at(tab, LAST, F1), _at(tab, BORN, F1)
    label, sv_src = _at(tab, LABEL, I1), _at(tab, SV_SRC, I1)
    # ---- room, as _ensure_capacity(1, nz) would find it
    n = int(st[N_SV])
    budget = ib[I_BUDGET]
    need = n + 1 if budget == 0 else min(budget, n + 1)
    used = int(st[POOL_USED])
    live = 0
    for s in range(n):
        live += sv_hi[s] - sv_lo[s]
    if need > coef.shape[0] or used + nz > pool_d.shape[0] or used > 2 * live + 1024:
        ib[I_NNZ] = nz
        return NEED_ROOM
    # ---- the kernel values, and the coefficients in use before the step (scored rows)
    cal_n = _at(tab, CAL_N, I1)
    scored = False
    if cal_n.shape[0] != 0:
        offered, stride = cal_n[CAL_OFFERED], ib[I_CAL_STRIDE]
        scored = cal_n[CAL_COUNT] < ib[I_CAL_REFIT] or (offered + 1) // stride != offered // stride
    ib[I_SCORED] = scored
    _values(tab, row_d, row_i, n_row, dense, st, ib, fb)
    ib[I_N_OLD] = n
    average = ib[I_AVERAGE] != 0
    if ib[I_SCORED] != 0:
        _coef_in_use(coef, A, last, st, n, average, _at(tab, CU, F2))
    # ---- the copies: the slot of the new vector, the one a full budget empties, the pool
    # entries past the used ones, the counters
    rule = ib[I_RULE]
    full = budget > 0 and n >= budget
    s_new = n - 1 if full else n
    victim = _victim(rule, coef, born, n) if full else s_new
    L = sv_norm.shape[1]
    K = coef.shape[1]
    rf = _at(tab, SLOTS_F, F2)  # two records of a slot: sv_norm, coef, A, sv_kxx, last, born
    ri = _at(tab, SLOTS_I, I2)  # sv_lo, sv_hi, label, sv_src
    slots = (sv_lo, sv_hi, label, sv_src, sv_norm, sv_kxx, coef, A, last, born)
    records = (ri[:, 0], ri[:, 1], ri[:, 2], ri[:, 3], rf[:, :L], rf[:, L + 2 * K],
               rf[:, L : L + K], rf[:, L + K : L + 2 * K], rf[:, L + 2 * K + 1],
               rf[:, L + 2 * K + 2])  # fmt: skip
    _copy_slot(0, records, victim, slots)
    _copy_slot(1, records, s_new, slots)
    sf = _at(tab, SAVED_F, F1)  # the counters, then the pool entries past the used ones
    si = _at(tab, SAVED_I, I32)
    for q in range(N_ST):
        sf[q] = st[q]
    for q in range(nz):
        sf[N_ST + q] = pool_d[used + q]
        si[q] = pool_i[used + q]
    # ---- the pass on the one-row batch, its scratch at zero as _run's
    y = ib[I_Y : I_Y + 1]
    order = ib[I_ORDER : I_ORDER + 1]
    pred = ib[I_PRED : I_PRED + 1]
    slot = ib[I_SLOT : I_SLOT + 1]
    indptr = ib[I_INDPTR : I_INDPTR + 2]
    work_idx = ib[I_WORK : I_WORK + K]
    weight = fb[F_WEIGHT : F_WEIGHT + 1]
    loss = fb[F_LOSS : F_LOSS + 1]
    scores = fb[F_K : F_K + K]
    alpha = fb[F_K + K : F_K + 2 * K]
    work_val = fb[F_K + 2 * K : F_K + 3 * K]
    avg = fb[F_K + 3 * K : F_K + 4 * K]
    stack = fb[F_K + N_K_BLOCKS * K :]
    y[0] = code
    order[0] = 0
    pred[0] = 0
    slot[0] = -1
    weight[0] = 1.0
    loss[0] = 0.0
    for k in range(K):
        work_idx[k] = 0
        scores[k] = 0.0
        alpha[k] = 0.0
        work_val[k] = 0.0
        avg[k] = 0.0
    for q in range(stack.shape[0]):
        stack[q] = 0.0
    keep_dual = ib[I_KEEP_DUAL] != 0
    status = kernel_pass(
        row_d, row_i, indptr, nf, dense, _at(tab, NORMS, F2), y, weight, order,
        _at(tab, OPS, I2), _at(tab, PAR, F1), _at(tab, RANGES, I2), fb[F_B2],
        ib[I_STEP], fb[F_C], fb[F_GAMMA], ib[I_BINARY] != 0, average, budget, rule,
        pool_d, pool_i, sv_lo, sv_hi, sv_norm, sv_kxx, coef, A, last, born, label, sv_src,
        slot, st, pred, loss, scores, alpha, work_idx, work_val, stack,
        False, avg, keep_dual, fb[F_GAMMA_D], _at(tab, KV, F1),
    )  # fmt: skip
    n_after = int(st[N_SV])
    ok = status == OK
    if ok:  # _run's check: every coefficient finite
        for s in range(n_after):
            for k in range(K):
                if not finite(coef[s, k]):
                    ok = False
    if not ok:
        _copy_slot(s_new, slots, 1, records)  # (the last first: victim may be s_new)
        _copy_slot(victim, slots, 0, records)
        for q in range(N_ST):
            st[q] = sf[q]
        for q in range(nz):
            pool_d[used + q] = sf[N_ST + q]
            pool_i[used + q] = si[q]
        return REFUSED
    if not keep_dual:
        st[DUAL] = math.nan  # this round is not in any kept dual
    for s in range(n_after):
        sv_src[s] = -1  # the batch's rows are not rows of the next call
    _at(tab, COUNTS, I1)[code] += 1
    if cal_n.shape[0] != 0 and not scored:
        cal_n[CAL_OFFERED] += 1
    return OK
