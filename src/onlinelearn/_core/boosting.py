"""Compiled decision stumps for the primal-dual booster (thesis ch. 6).

A stump is ``h(x) = right if x_j > thr else left`` (left, right in {-1, +1}).  Given the primal
weights w (a distribution over the m examples), the weak learner returns the stump that is best
by one of two criteria, from the weights (lp, ln) of the positive / negative examples left of
each split and the totals (P, N):

``EDGE``  the largest edge <w, v> = sum_i w_i y_i h(x_i) = |(P - N) - 2 (lp - ln)| (left = -right):
          the thesis's weak learner (smallest weighted error eps = (1 - <w, v>) / 2);
``GINI``  the smallest weighted Gini impurity 2 lp ln / (lp + ln) + 2 rp rn / (rp + rn), each
          side predicting its weighted majority: scikit-learn's depth-1 tree.

One scan of each feature's sorted values.  The thesis's edge is gamma = 1/2 - eps.
Thresholds are midpoints between consecutive distinct values; the threshold -inf (no split) is
the constant stump.  Dense input: columns presorted once (``presort_dense``); sparse input (CSC):
the non-zeros of each column presorted, the implicit zeros forming one block between the
negative and the positive values.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit


@njit
def presort_dense(XT):
    """Per feature j: the row order sorting XT[j] and the sorted values (both (d, m))."""
    d, m = XT.shape
    order = np.empty((d, m), dtype=np.int64)
    vals = np.empty((d, m))
    for j in range(d):
        o = np.argsort(XT[j], kind="mergesort")
        for q in range(m):
            order[j, q] = o[q]
            vals[j, q] = XT[j, o[q]]
    return order, vals


@njit
def presort_csc(indptr, indices, data):
    """Row indices and values of each CSC column, sorted by value inside the column."""
    rows = np.empty(data.shape[0], dtype=np.int64)
    vals = np.empty(data.shape[0])
    for j in range(indptr.shape[0] - 1):
        lo, hi = indptr[j], indptr[j + 1]
        o = np.argsort(data[lo:hi], kind="mergesort")
        for q in range(hi - lo):
            rows[lo + q] = indices[lo + o[q]]
            vals[lo + q] = data[lo + o[q]]
    return rows, vals


EDGE = 0
GINI = 1


@njit
def _consider(best, crit, j, thr, lp, ln, P, N):
    """Score the split with left weights (lp, ln) of the positives / negatives out of (P, N) and
    keep the best in ``best`` = [score, j, thr, left value, right value]."""
    rp = P - lp
    rn = N - ln
    if crit == EDGE:
        e = (rp - rn) - (lp - ln)  # edge of h = +1 right, -1 left
        score = abs(e)
        right = 1.0 if e >= 0.0 else -1.0
        left = -right
    else:
        score = 0.0
        if lp + ln > 0.0:
            score -= 2.0 * lp * ln / (lp + ln)
        if rp + rn > 0.0:
            score -= 2.0 * rp * rn / (rp + rn)
        left = 1.0 if lp > ln else -1.0
        right = 1.0 if rp > rn else -1.0
    if score > best[0] + 1e-15:
        best[0] = score
        best[1] = j
        best[2] = thr
        best[3] = left
        best[4] = right


@njit
def _init_best(crit, P, N):
    best = np.array([-np.inf, 0.0, -np.inf, 1.0, 1.0])
    _consider(best, crit, 0, -np.inf, 0.0, 0.0, P, N)  # the constant stump
    return best


@njit
def _totals(wy):
    """(P, N): the weight of the positive and of the negative examples, from wy_i = w_i y_i."""
    P = 0.0
    N = 0.0
    for i in range(wy.shape[0]):
        if wy[i] > 0:
            P += wy[i]
        else:
            N -= wy[i]
    return P, N


@njit
def best_stump_dense(order, vals, wy, crit):
    """Best stump over presorted dense columns; returns (j, thr, left, right)."""
    d, m = vals.shape
    P, N = _totals(wy)
    best = _init_best(crit, P, N)
    for j in range(d):
        lp = 0.0
        ln = 0.0
        for q in range(m - 1):
            a = wy[order[j, q]]
            lp += max(a, 0.0)
            ln += max(-a, 0.0)
            v, nxt = vals[j, q], vals[j, q + 1]
            if nxt > v:
                _consider(best, crit, j, 0.5 * (v + nxt), lp, ln, P, N)
    return int(best[1]), best[2], best[3], best[4]


@njit
def best_stump_csc(indptr, rows, vals, wy, crit):
    """Best stump over CSC columns with presorted non-zeros; returns (j, thr, left, right).

    ``rows``/``vals`` are the row indices and values of each column sorted by value
    (:func:`presort_csc`).  Each non-zero is visited once: the negative values in ascending
    order (their left sums are known), the positive values in descending order (their right
    sums are known); the implicit zeros are the remainder, between the two."""
    d = indptr.shape[0] - 1
    m = wy.shape[0]
    P, N = _totals(wy)
    best = _init_best(crit, P, N)
    for j in range(d):
        lo, hi = indptr[j], indptr[j + 1]
        if hi == lo:
            continue
        has_zero = hi - lo < m
        # negatives, ascending: candidates between consecutive distinct values
        lp = 0.0
        ln = 0.0
        q = lo
        while q < hi and vals[q] < 0.0:
            a = wy[rows[q]]
            lp += max(a, 0.0)  # branch-free: the signs of y are random
            ln += max(-a, 0.0)
            v = vals[q]
            if q + 1 < hi:
                nxt = vals[q + 1]
                if nxt >= 0.0 and has_zero:
                    nxt = 0.0
                if nxt > v:
                    _consider(best, crit, j, 0.5 * (v + nxt), lp, ln, P, N)
            elif has_zero:
                _consider(best, crit, j, 0.5 * v, lp, ln, P, N)
            q += 1
        first_pos = q
        # positives, descending: right sums (rp, rn); left = totals - right
        rp = 0.0
        rn = 0.0
        for q in range(hi - 1, first_pos - 1, -1):
            a = wy[rows[q]]
            rp += max(a, 0.0)
            rn += max(-a, 0.0)
            v = vals[q]
            if q - 1 >= first_pos:
                prv = vals[q - 1]
            elif has_zero:
                prv = 0.0
            elif first_pos > lo:
                prv = vals[first_pos - 1]
            else:
                continue
            if prv < v:
                _consider(best, crit, j, 0.5 * (prv + v), P - rp, N - rn, P, N)
    return int(best[1]), best[2], best[3], best[4]


@njit
def stump_outputs_dense(X, j, thr, left, right, out):
    """out[i] = h(x_i) for the rows of a dense C- or F-ordered X."""
    for i in range(X.shape[0]):
        out[i] = right if X[i, j] > thr else left


@njit
def stump_outputs_csc(indptr, indices, data, j, thr, left, right, out):
    """out[i] = h(x_i) for CSC X (implicit zeros get the value at 0)."""
    zero_out = right if 0.0 > thr else left
    for i in range(out.shape[0]):
        out[i] = zero_out
    for p in range(indptr[j], indptr[j + 1]):
        out[indices[p]] = right if data[p] > thr else left


@njit
def ensemble_dense(X, feat, thr, left, right, alpha, out):
    """out[i] = sum_t alpha_t h_t(x_i) for dense X."""
    for i in range(X.shape[0]):
        s = 0.0
        for t in range(feat.shape[0]):
            s += alpha[t] * (right[t] if X[i, feat[t]] > thr[t] else left[t])
        out[i] = s


@njit
def ensemble_csr(indptr, indices, data, feat, thr, left, right, alpha, d, out):
    """out[i] = sum_t alpha_t h_t(x_i) for CSR X, with a dense row scratch of d values."""
    row = np.zeros(d)
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            row[indices[p]] = data[p]
        s = 0.0
        for t in range(feat.shape[0]):
            s += alpha[t] * (right[t] if row[feat[t]] > thr[t] else left[t])
        out[i] = s
        for p in range(indptr[i], indptr[i + 1]):
            row[indices[p]] = 0.0


@njit
def primal_weights(logw, ypm, f, w, wy):
    """w_i proportional to exp(logw_i - y_i f_i), normalised to a distribution (thesis Sec. 6.1:
    w_t = grad f*(theta_t) for the relative entropy)."""
    m = w.shape[0]
    mx = -np.inf
    for i in range(m):
        a = logw[i] - ypm[i] * f[i]
        w[i] = a
        if a > mx:
            mx = a
    tot = 0.0
    for i in range(m):
        w[i] = math.exp(w[i] - mx)
        tot += w[i]
    for i in range(m):
        w[i] /= tot
        wy[i] = w[i] * ypm[i]


@njit
def edge_and_error(w, ypm, h):
    """(<w, v>, weighted error eps) with v_i = y_i h_i."""
    e = 0.0
    err = 0.0
    for i in range(w.shape[0]):
        v = ypm[i] * h[i]
        e += w[i] * v
        if v < 0.0:
            err += w[i]
    return e, err


@njit
def take_step(f, h, alpha, ypm, logw):
    """f += alpha h; returns (training 0-1 error, log of the mean exp-loss), both weighted by
    the example weights exp(logw) (mean 1); a tie y f = 0 counts as an error."""
    m = f.shape[0]
    n_err = 0.0
    mx = -np.inf
    for i in range(m):
        f[i] += alpha * h[i]
        mg = ypm[i] * f[i]
        if mg <= 0.0:
            n_err += math.exp(logw[i])
        z = logw[i] - mg
        if z > mx:
            mx = z
    s = 0.0
    for i in range(m):
        s += math.exp(logw[i] - ypm[i] * f[i] - mx)
    return n_err / m, mx + math.log(s / m)
