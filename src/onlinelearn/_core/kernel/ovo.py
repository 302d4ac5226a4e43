"""One-vs-one kernel SVM: the binary problems of every pair of classes, solved by greedy dual
coordinate ascent over a kernel cache of *class segments* shared by all the pairs.

What
    Rows are sorted by class (class c occupies rows [cs_c, cs_{c+1})).  The problem of the pair
    (a, b), a < b, is the binary dual of :mod:`.svc` over the rows of a and b only, with
    y = +1 for class a and -1 for class b::

        max_alpha  sum_i alpha_i - 1/2 alpha' Q alpha,   0 <= alpha_i <= U_i
        Q_ij = y_i y_j (k(x_i, x_j) + b^2),   i, j in rows(a) u rows(b)

    Its local coordinates are q = 0 .. n_a + n_b - 1: q < n_a is row cs_a + q, the others row
    cs_b + q - n_a.  A step on coordinate q needs the kernel values of its row against the
    *active* rows of a and of b: the segments (row, a) and (row, b).  Steps move two
    coordinates at once, exactly (:func:`two_coordinate_step`; :func:`pair_greedy` says how
    the two are chosen).

Segment cache
    A segment (i, c) = Kb(x_i, x_j) for the rows j of class c, kept in an LRU of ``slots``
    segments.  Row i of class a appears in the K - 1 pairs of a, so its segment (i, a) is
    computed once for all of them (libsvm's one-vs-one builds a fresh cache per pair and
    computes it again in each).  A segment is computed only when some active row lies in
    that class; on dense rows with one RBF / linear / polynomial leaf it is one BLAS
    matrix-vector product over the class block.
"""

from __future__ import annotations

import math

import numpy as np

from ..config import njit
from .gram import LINEAR, POLY, RBF, _ipow, finite, pair_value, row_bounds
from .svc import (
    CLOCK,
    HITS,
    MISSES,
    NONFINITE,
    OK,
    _gap_terms,
    activate_all,
    coordinate_step,
    gap_rule,
    lru_slot,
    shrink,
)


@njit
def _claim_slot(i, c, cache, seg_slot, slot_key, stamp, cstate):
    """The least recently used slot (a free one first), now holding the segment (i, c)."""
    K = seg_slot.shape[1]
    n_slots = cache.shape[0]
    s = cstate[MISSES]  # slots are claimed in order until the cache is full
    if s >= n_slots or slot_key[s] >= 0:
        s = lru_slot(slot_key, stamp, n_slots)
    old = slot_key[s]
    if old >= 0:
        seg_slot[old // K, old % K] = -1
    slot_key[s] = i * K + c
    seg_slot[i, c] = s
    stamp[s] = cstate[CLOCK]
    cstate[MISSES] += 1
    return s


@njit
def _blas_leaf(dense, ops, ranges, n_cols):
    """The kernel is one linear / RBF / polynomial leaf over all columns of dense rows: its
    values follow from inner products, which BLAS computes."""
    code = ops[0, 0]
    return (dense and ops.shape[0] == 1 and (code == LINEAR or code == RBF or code == POLY)
            and ranges[0, 0] == 0 and ranges[0, 1] == n_cols)  # fmt: skip


@njit
def _leaf_value(code, dt, sqi, sqj, par, b):
    """k from the inner product dt (and the squared norms, for RBF) of one pair of rows."""
    if code == LINEAR:
        return dt
    if code == RBF:
        sq = sqi + sqj - 2.0 * dt
        return math.exp(-par[b] * (sq if sq > 0.0 else 0.0))
    return _ipow(par[b] * dt + par[b + 1], int(par[b + 2]))


@njit
def _release_if_nonfinite(i, c, s, col, seg_slot, slot_key):
    for q in range(col.shape[0]):
        if not finite(col[q]):
            slot_key[s] = -1
            seg_slot[i, c] = -1
            return NONFINITE
    return OK


@njit
def get_segment(i, c, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges, b2,
                pre, cstart, cache, seg_slot, slot_key, stamp, cstate, stack):  # fmt: skip
    """Kb(x_i, x_j) for the rows j of class c (a view of length n_c) and a status."""
    s0 = cstart[c]
    s1 = cstart[c + 1]
    nc = s1 - s0
    if pre.shape[1] == n:
        return pre[i, s0:s1], OK
    cstate[CLOCK] += 1
    s = seg_slot[i, c]
    if s >= 0:
        stamp[s] = cstate[CLOCK]
        cstate[HITS] += 1
        return cache[s, :nc], OK
    s = _claim_slot(i, c, cache, seg_slot, slot_key, stamp, cstate)
    col = cache[s, :nc]
    if _blas_leaf(dense, ops, ranges, n_cols):
        # the segment's inner products in one BLAS matrix-vector product
        M = data.reshape((n, n_cols))
        dots = np.dot(M[s0:s1], M[i])
        code = ops[0, 0]
        for q in range(nc):
            col[q] = _leaf_value(code, np.float64(dots[q]), norms[i, 0], norms[s0 + q, 0],
                                 par, ops[0, 2]) + b2  # fmt: skip
        if code == RBF and s0 <= i < s1:
            col[i - s0] = 1.0 + b2
    else:
        a0, a1 = row_bounds(indptr, i, n_cols, dense)
        for q in range(nc):
            j = s0 + q
            b0, b1 = row_bounds(indptr, j, n_cols, dense)
            col[q] = pair_value(ops, par, ranges, data, indices, a0, a1, dense, norms[i],
                                data, indices, b0, b1, dense, norms[j], stack) + b2  # fmt: skip
    return col, _release_if_nonfinite(i, c, s, col, seg_slot, slot_key)


@njit
def _count_below(act, m, na):
    """How many of the active coordinates ``act[:m]`` (sorted) are of class a (below n_a)."""
    k = 0
    while k < m and act[k] < na:
        k += 1
    return k


@njit
def _row_segments(q, a, b, na, need_a, need_b, data, indices, indptr, n_cols, dense, norms, n,
                  ops, par, ranges, b2, pre, cstart, cache, seg_slot, slot_key, stamp, cstate,
                  stack):  # fmt: skip
    """The segments (gi, a) and (gi, b) of the row gi of local coordinate q (the rows of class
    a, q < n_a, then those of class b), each only if needed (else an empty view), and a status
    (OK / NONFINITE)."""
    gi = cstart[a] + q if q < na else cstart[b] + q - na
    sa = cache[0, :0]
    sb = cache[0, :0]
    if need_a:
        sa, st = get_segment(gi, a, data, indices, indptr, n_cols, dense, norms, n, ops, par,
                             ranges, b2, pre, cstart, cache, seg_slot, slot_key, stamp, cstate,
                             stack)  # fmt: skip
        if st != OK:
            return sa, sb, st
    if need_b:
        sb, st = get_segment(gi, b, data, indices, indptr, n_cols, dense, norms, n, ops, par,
                             ranges, b2, pre, cstart, cache, seg_slot, slot_key, stamp, cstate,
                             stack)  # fmt: skip
    else:
        st = OK
    return sa, sb, st


@njit
def _violation(a, g, u):
    """How far coordinate (a, g) is from optimality: |projected gradient|."""
    if g < 0.0:
        return -g if a < u else 0.0
    return g if a > 0.0 else 0.0


@njit
def _q2(s, t, gi, gj, qii, qjj, qij):
    return gi * s + gj * t + 0.5 * (qii * s * s + 2.0 * qij * s * t + qjj * t * t)


@njit
def two_coordinate_step(ai, aj, gi, gj, qii, qjj, qij, ui, uj):
    """The exact minimiser (x_i, x_j) over [0, u_i] x [0, u_j] of the dual (minimisation form)
    moved along coordinates i and j only::

        F(x_i, x_j) = F(a) + g_i s + g_j t + 1/2 (q_ii s^2 + 2 q_ij s t + q_jj t^2),
        s = x_i - a_i,  t = x_j - a_j

    (g the gradient at a, q the 2x2 block of Q, positive semi-definite).  A convex quadratic
    on a box: its minimiser is the unconstrained one when that lies in the box, else on one
    of the four edges, where it is the clipped 1-D step (:func:`coordinate_step`).  The 1-D
    steps from a are candidates too, so the step never gains less than the one-coordinate
    step on i (ties keep it)."""
    bx = coordinate_step(ai, gi, qii, ui)
    by = aj
    bv = _q2(bx - ai, 0.0, gi, gj, qii, qjj, qij)
    y1 = coordinate_step(aj, gj, qjj, uj)
    v = _q2(0.0, y1 - aj, gi, gj, qii, qjj, qij)
    if v < bv:
        bx, by, bv = ai, y1, v
    det = qii * qjj - qij * qij
    if det > 1e-12 * qii * qjj and det > 0.0:
        s = (qij * gj - qjj * gi) / det
        t = (qij * gi - qii * gj) / det
        x = ai + s
        z = aj + t
        if 0.0 <= x <= ui and 0.0 <= z <= uj:
            v = _q2(s, t, gi, gj, qii, qjj, qij)
            if v < bv:
                bx, by, bv = x, z, v
    for e in range(2):
        x = 0.0 if e == 0 else ui
        z = coordinate_step(aj, gj + qij * (x - ai), qjj, uj)
        v = _q2(x - ai, z - aj, gi, gj, qii, qjj, qij)
        if v < bv:
            bx, by, bv = x, z, v
        z = 0.0 if e == 0 else uj
        x = coordinate_step(ai, gi + qij * (z - aj), qii, ui)
        v = _q2(x - ai, z - aj, gi, gj, qii, qjj, qij)
        if v < bv:
            bx, by, bv = x, z, v
    return bx, by


@njit
def _partner(i, y, G, alpha, U, Qd, act, m, na, sa, sb, cached_only, ga, gb, need_a, need_b,
             seg_slot, a, b):  # fmt: skip
    """The second coordinate j for a two-coordinate step with i: the active j that can move
    whose unconstrained 2-D step gains most, (q_jj g_i^2 - 2 q_ij g_i g_j + q_ii g_j^2) /
    (2 det), from the column of i; -1 if none (nearly parallel pairs are skipped).  With
    ``cached_only``, only rows whose needed segments are in the cache (global row of local j:
    ``ga + j`` in class a, ``gb + j - na`` in class b) are candidates: a partner then costs no
    kernel evaluation."""
    qii = Qd[i]
    gi = G[i]
    best_num = 0.0
    best_det = 1.0
    jb = -1
    for q in range(m):
        j = act[q]
        gj = G[j]
        if j == i or _violation(alpha[j], gj, U[j]) <= 0.0:
            continue
        if cached_only:
            r = ga + j if j < na else gb + j - na
            if (need_a and seg_slot[r, a] < 0) or (need_b and seg_slot[r, b] < 0):
                continue
        kij = sa[j] if j < na else sb[j - na]
        qij = y[i] * y[j] * kij
        qjj = Qd[j]
        det = qii * qjj - qij * qij
        if det <= 1e-10 * qii * qjj:
            continue
        num = qjj * gi * gi - 2.0 * qij * gi * gj + qii * gj * gj
        if num * best_det > best_num * det:  # num / det > best_num / best_det
            best_num = num
            best_det = det
            jb = j
    return jb


@njit
def _pair_update2(di, sai, sbi, dj, saj, sbj, y, G, alpha, U, act, m, na):
    """G_k += y_k (di Kb_ik + dj Kb_jk) over the active local coordinates k (the columns of
    i and j: ``sai``, ``saj`` over class a, ``sbi``, ``sbj`` over class b; di, dj the y-signed
    changes), and in the same pass the most violating active coordinate (the next greedy
    choice; -1 if none)."""
    best = 0.0
    i = -1
    for q in range(m):
        j = act[q]
        if j < na:
            g = G[j] + y[j] * (di * sai[j] + dj * saj[j])
        else:
            g = G[j] + y[j] * (di * sbi[j - na] + dj * sbj[j - na])
        G[j] = g
        v = _violation(alpha[j], g, U[j])
        if v > best:
            best = v
            i = j
    return i


@njit
def _most_violating(alpha, G, U, act, m):
    best = 0.0
    i = -1
    for q in range(m):
        j = act[q]
        v = _violation(alpha[j], G[j], U[j])
        if v > best:
            best = v
            i = j
    return i


@njit
def _pair_reconstruct(a, b, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges, b2,
                      pre, cstart, cache, seg_slot, slot_key, stamp, cstate, y, alpha, G, act,
                      m, stack):  # fmt: skip
    """G_j = -1 + y_j sum_i alpha_i y_i Kb_ij for the local coordinates not in ``act[:m]``."""
    nl = alpha.shape[0]
    na = cstart[a + 1] - cstart[a]
    inact = np.ones(nl, dtype=np.bool_)
    for q in range(m):
        inact[act[q]] = False
    any_a = False
    any_b = False
    for j in range(nl):
        if inact[j]:
            G[j] = -1.0
            if j < na:
                any_a = True
            else:
                any_b = True
    for q in range(nl):
        if alpha[q] == 0.0:
            continue
        d = alpha[q] * y[q]
        sa, sb, st = _row_segments(q, a, b, na, any_a, any_b, data, indices, indptr, n_cols,
                                   dense, norms, n, ops, par, ranges, b2, pre, cstart, cache,
                                   seg_slot, slot_key, stamp, cstate, stack)  # fmt: skip
        if st != OK:
            return st
        if any_a:
            for j in range(na):
                if inact[j]:
                    G[j] += d * y[j] * sa[j]
        if any_b:
            for j in range(na, nl):
                if inact[j]:
                    G[j] += d * y[j] * sb[j - na]
    return OK


@njit
def pair_greedy(a, b, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges, b2, pre,
                cstart, cache, seg_slot, slot_key, stamp, cstate, y, U, Qd, alpha, G, max_steps,
                check_every, tol, shrinking):  # fmt: skip
    """Greedy coordinate ascent on the problem of the pair (a, b) in its local coordinates
    (``y``, ``U``, ``Qd``, ``alpha``, ``G`` of length n_a + n_b).  A step moves two
    coordinates exactly (:func:`two_coordinate_step`, as SMO moves two): i, the one that
    violates optimality most, and j, its partner of largest 2-D gain (:func:`_partner`);
    moving pairs follows the stiff direction of the b^2 (all-ones) part of Q that single
    coordinates zig-zag along (about ten times fewer steps on pendigits).  The same
    shrinking and exact stopping rule as :func:`.svc.svc_greedy`: every ``check_every``
    steps the bound coordinates whose gradient pushes outwards by more than the largest
    violation leave the active set; when the gap meets ``tol`` (relative) the gradient of
    the others is rebuilt from the support vectors and the exact gap decides.  Returns
    (steps, converged, status), G exact for every coordinate on return."""
    nl = alpha.shape[0]
    na = cstart[a + 1] - cstart[a]
    stack = np.zeros(ops.shape[0] + 1)
    act = np.arange(nl)
    m = nl
    m_a = na  # active coordinates of class a (act is kept sorted: they come first)
    # partners among rows with cached segments only (2x fewer kernel segments on pendigits)
    cached_only = pre.shape[1] != n
    stale = True  # i must be found by a scan (not known from the last update)
    i = -1
    for step in range(max_steps + 1):
        if step % check_every == 0 or step == max_steps:
            stale = True
            P_, D_, gap = _gap_terms(alpha, G, U)
            if gap <= tol * P_ or step == max_steps:
                if m < nl:
                    st = _pair_reconstruct(a, b, data, indices, indptr, n_cols, dense, norms, n,
                                           ops, par, ranges, b2, pre, cstart, cache, seg_slot,
                                           slot_key, stamp, cstate, y, alpha, G, act, m,
                                           stack)  # fmt: skip
                    if st != OK:
                        return step, False, st
                    m = activate_all(act)
                    m_a = na
                    P_, D_, gap = _gap_terms(alpha, G, U)
                if gap <= tol * P_ or step == max_steps:
                    return step, gap <= tol * P_, OK
            elif shrinking:
                m = shrink(alpha, G, U, act, m)
                m_a = _count_below(act, m, na)
        if stale:
            i = _most_violating(alpha, G, U, act, m)
        stale = True
        if i < 0 or coordinate_step(alpha[i], G[i], Qd[i], U[i]) == alpha[i]:
            if m == nl:
                return step, gap_rule(alpha, G, U, tol), OK
            st = _pair_reconstruct(a, b, data, indices, indptr, n_cols, dense, norms, n, ops,
                                   par, ranges, b2, pre, cstart, cache, seg_slot, slot_key,
                                   stamp, cstate, y, alpha, G, act, m, stack)  # fmt: skip
            if st != OK:
                return step, False, st
            m = activate_all(act)
            m_a = na
            continue
        t = coordinate_step(alpha[i], G[i], Qd[i], U[i])
        sa, sb, st = _row_segments(i, a, b, na, m_a > 0, m > m_a, data, indices, indptr, n_cols,
                                   dense, norms, n, ops, par, ranges, b2, pre, cstart, cache,
                                   seg_slot, slot_key, stamp, cstate, stack)  # fmt: skip
        if st != OK:
            return step, False, st
        j = _partner(i, y, G, alpha, U, Qd, act, m, na, sa, sb, cached_only, cstart[a],
                     cstart[b], m_a > 0, m > m_a, seg_slot, a, b)  # fmt: skip
        if j < 0:
            d = (t - alpha[i]) * y[i]
            alpha[i] = t
            i = _pair_update2(d, sa, sb, 0.0, sa, sb, y, G, alpha, U, act, m, na)
            stale = False
            continue
        kij = sa[j] if j < na else sb[j - na]
        xi, xj = two_coordinate_step(alpha[i], alpha[j], G[i], G[j], Qd[i], Qd[j],
                                     y[i] * y[j] * kij, U[i], U[j])  # fmt: skip
        saj, sbj, st = _row_segments(j, a, b, na, m_a > 0, m > m_a, data, indices, indptr,
                                     n_cols, dense, norms, n, ops, par, ranges, b2, pre, cstart,
                                     cache, seg_slot, slot_key, stamp, cstate, stack)  # fmt: skip
        if st != OK:
            return step, False, st
        di = (xi - alpha[i]) * y[i]
        dj = (xj - alpha[j]) * y[j]
        alpha[i] = xi
        alpha[j] = xj
        i = _pair_update2(di, sa, sb, dj, saj, sbj, y, G, alpha, U, act, m, na)
        stale = False
    return max_steps, False, OK
