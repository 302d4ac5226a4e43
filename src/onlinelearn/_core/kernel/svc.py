"""Kernel SVM by dual coordinate ascent: the course's coordinate step in the RKHS, a kernel-column
cache, shrinking, and the duality gap as the stopping rule.

What
    Binary (and each one-vs-rest problem p, solved side by side): the dual of the SVM with
    hinge loss and cost C (no equality constraint: the bias is the weight of a constant feature
    of value b, i.e. the kernel is k + b^2, as LIBLINEAR does)::

        max_alpha  D(alpha) = sum_i alpha_i - 1/2 alpha' Q alpha,   0 <= alpha_i <= U_i
        Q_ij = y_i y_j (k(x_i, x_j) + b^2),   U_i = C x sample_weight_i x class_weight_{y_i}

    The course's form (problem set 7, "SVM using coordinate descent": max alpha'1 -
    1/(2 lambda) alpha'Q alpha, alpha in [0, 1]^N) is the same problem with C = 1/lambda and
    alpha = alpha_course / lambda.  Coordinate step (its closed form, clipped)::

        G_i = (Q alpha)_i - 1,   alpha_i <- min(max(alpha_i - G_i / Q_ii, 0), U_i)

    (Q_ii = 0: alpha_i <- U_i if G_i < 0, 0 if G_i > 0).  The gradient G is kept for *every*
    coordinate: a step of size delta on i adds delta y_i y_j Kb_ji to G_j, one kernel column.
    Hence the primal-dual pair is exact at every epoch end::

        f(x) = sum_i alpha_i y_i (k(x_i, x) + b^2),   y_i f(x_i) = G_i + 1
        P(f) = 1/2 ||f||^2 + sum_i U_i [1 - y_i f(x_i)]_+
        gap  = P - D = sum_i ( alpha_i G_i + U_i [-G_i]_+ )  >= 0  (each term is >= 0)
        D    = 1/2 sum_i alpha_i (1 - G_i)

    Shrinking: an epoch visits only the coordinates that the step could move: not those at
    alpha_i = 0 with G_i > 0 nor at alpha_i = U_i with G_i < 0 (their gap term is 0); the set is
    rebuilt from the exact G after every epoch, so nothing is ever lost.

Crammer-Singer (``cs_*``) is in :mod:`.svc_cs`, on the same cache and steps.

Kernel-column cache: LRU over ``slots`` columns of Kb = K + b^2 (each of length n); a miss fills
    the column from the cached columns' symmetric entries where it can and evaluates the kernel
    program elsewhere.  Columns are shared by all the one-vs-rest problems.
"""

from __future__ import annotations

import math

import numpy as np

from ..config import njit
from ..status import NONFINITE, OK
from .gram import LINEAR, POLY, RBF, _ipow, finite, pair_value, row_bounds

#: ``cache_state`` slots
CLOCK = 0
HITS = 1
MISSES = 2


@njit
def coordinate_step(a, g, q, u):
    """The exact maximiser over t in [0, u] of D(alpha + (t - a) e_i) = const - g (t - a)
    - q/2 (t - a)^2 (g the gradient of the minimisation form at a, q = Q_ii >= 0)."""
    if q > 0.0:
        t = a - g / q
        if t < 0.0:
            return 0.0
        if t > u:
            return u
        return t
    if g < 0.0:
        return u
    if g > 0.0:
        return 0.0
    return a


@njit
def lru_slot(owner, stamp, n_slots):
    """The slot of the cache to fill: the first free one (``owner`` < 0), else the least
    recently used (smallest ``stamp``; the first of equal ones)."""
    s = 0
    best = stamp[0]
    for t in range(n_slots):
        if owner[t] < 0:
            s = t
            break
        if stamp[t] < best:
            best = stamp[t]
            s = t
    return s


@njit
def _fill_column(i, col, s, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges,
                 b2, cache, row_slot, a0, a1, stack):  # fmt: skip
    """Column i by the kernel program, reusing symmetric entries of cached columns."""
    for j in range(n):
        t = row_slot[j]
        if t >= 0 and t != s:
            col[j] = cache[t, i]  # symmetric entry of a cached column
            continue
        b0, b1 = row_bounds(indptr, j, n_cols, dense)
        col[j] = pair_value(ops, par, ranges, data, indices, a0, a1, dense, norms[i],
                            data, indices, b0, b1, dense, norms[j], stack) + b2  # fmt: skip


@njit
def get_column(i, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges, b2,
               pre, cache, slot_row, row_slot, stamp, cstate, stack):  # fmt: skip
    """Column i of Kb = K + b^2 (length n): a row of ``pre`` (precomputed Gram, already with
    b^2) when it has n columns, else the LRU cache (filled on a miss).  Returns the column
    and a status (OK / NONFINITE)."""
    if pre.shape[1] == n:
        return pre[i], OK
    cstate[CLOCK] += 1
    s = row_slot[i]
    if s >= 0:
        stamp[s] = cstate[CLOCK]
        cstate[HITS] += 1
        return cache[s], OK
    cstate[MISSES] += 1
    s = lru_slot(slot_row, stamp, cache.shape[0])
    if slot_row[s] >= 0:
        row_slot[slot_row[s]] = -1
    slot_row[s] = i
    row_slot[i] = s
    stamp[s] = cstate[CLOCK]
    col = cache[s]
    a0, a1 = row_bounds(indptr, i, n_cols, dense)
    code = ops[0, 0]
    if dense and ops.shape[0] == 1 and (code == LINEAR or code == RBF or code == POLY) \
            and ranges[0, 0] == 0 and ranges[0, 1] == n_cols:  # fmt: skip
        # one leaf on dense rows: all inner products of the column in one BLAS call
        M = data.reshape((n, n_cols))
        dots = np.dot(M, M[i])
        b = ops[0, 2]
        for j in range(n):
            dt = np.float64(dots[j])
            if code == LINEAR:
                v = dt
            elif code == RBF:
                sq = norms[i, 0] + norms[j, 0] - 2.0 * dt
                v = math.exp(-par[b] * (sq if sq > 0.0 else 0.0))
            else:
                v = _ipow(par[b] * dt + par[b + 1], int(par[b + 2]))
            col[j] = v + b2
        if code == RBF:
            col[i] = 1.0 + b2
    else:
        _fill_column(i, col, s, data, indices, indptr, n_cols, dense, norms, n, ops, par,
                     ranges, b2, cache, row_slot, a0, a1, stack)  # fmt: skip
    for j in range(n):
        if not finite(col[j]):
            slot_row[s] = -1
            row_slot[i] = -1
            return col, NONFINITE
    return col, OK


@njit
def kernel_diag(data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges, b2, pre, out):
    """out[i] = Kb_ii."""
    stack = np.zeros(ops.shape[0] + 1)
    for i in range(n):
        if pre.shape[1] == n:
            out[i] = pre[i, i]
            continue
        a0, a1 = row_bounds(indptr, i, n_cols, dense)
        out[i] = pair_value(ops, par, ranges, data, indices, a0, a1, dense, norms[i],
                            data, indices, a0, a1, dense, norms[i], stack) + b2  # fmt: skip


@njit
def svc_init(data, indices, indptr, n_cols, dense, norms, ops, par, ranges, b2, pre, cache,
             slot_row, row_slot, stamp, cstate, Y, alpha, G, cs, ycode):  # fmt: skip
    """G from alpha (warm start): binary/OvR G_ip = -1 + sum_j alpha_jp y_jp y_ip Kb_ij;
    Crammer-Singer G_im = f_m(x_i) + e_im.  Returns OK / NONFINITE."""
    n, P = alpha.shape
    stack = np.zeros(ops.shape[0] + 1)
    for i in range(n):
        for p in range(P):
            if cs:
                G[i, p] = 0.0 if p == ycode[i] else 1.0
            else:
                G[i, p] = -1.0
    for j in range(n):
        nz = False
        for p in range(P):
            if alpha[j, p] != 0.0:
                nz = True
        if not nz:
            continue
        col, st = get_column(j, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges,
                             b2, pre, cache, slot_row, row_slot, stamp, cstate, stack)  # fmt: skip
        if st != OK:
            return st
        for i in range(n):
            for p in range(P):
                if cs:
                    G[i, p] += alpha[j, p] * col[i]
                else:
                    G[i, p] += alpha[j, p] * Y[j, p] * Y[i, p] * col[i]
    return OK


@njit
def svc_epoch(data, indices, indptr, n_cols, dense, norms, ops, par, ranges, b2, pre, cache,
              slot_row, row_slot, stamp, cstate, Y, U, Qd, alpha, G, done, active, n_active,
              perm_keys):  # fmt: skip
    """One epoch of coordinate steps over ``active[:n_active]`` in the order of ``perm_keys``
    (binary / one-vs-rest problems not ``done``, side by side: one column per moved
    coordinate serves every problem).  Returns OK / NONFINITE."""
    n, P = alpha.shape
    stack = np.zeros(ops.shape[0] + 1)
    delta = np.zeros(P)
    moving = np.zeros(P, dtype=np.int64)
    order = np.argsort(perm_keys[:n_active])
    for idx in range(n_active):
        i = active[order[idx]]
        nm = 0
        for p in range(P):
            if done[p]:
                continue
            a = alpha[i, p]
            t = coordinate_step(a, G[i, p], Qd[i], U[i, p])
            if t != a:
                delta[p] = t - a
                moving[nm] = p
                nm += 1
        if nm == 0:
            continue
        col, st = get_column(i, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges,
                             b2, pre, cache, slot_row, row_slot, stamp, cstate, stack)  # fmt: skip
        if st != OK:
            return st
        for q in range(nm):
            p = moving[q]
            alpha[i, p] += delta[p]
            delta[p] *= Y[i, p]
        for j in range(n):
            c = col[j]
            for q in range(nm):
                p = moving[q]
                G[j, p] += delta[p] * Y[j, p] * c
    return OK


@njit
def svc_objectives(alpha, G, U, out):
    """out[p] = (primal, dual, gap) of problem p from the exact gradient (module docstring)."""
    n, P = alpha.shape
    for p in range(P):
        gap = 0.0
        dual = 0.0
        for i in range(n):
            a = alpha[i, p]
            g = G[i, p]
            gap += a * g + (U[i, p] * (-g) if g < 0.0 else 0.0)
            dual += 0.5 * a * (1.0 - g)
        out[p, 0] = dual + gap
        out[p, 1] = dual
        out[p, 2] = gap


@njit
def svc_active(alpha, G, U, done, active):
    """Shrinking: the coordinates some running problem could move; returns their count."""
    n, P = alpha.shape
    m = 0
    for i in range(n):
        keep = False
        for p in range(P):
            if done[p]:
                continue
            a = alpha[i, p]
            g = G[i, p]
            if not ((a <= 0.0 and g > 0.0) or (a >= U[i, p] and g < 0.0)):
                keep = True
                break
        if keep:
            active[m] = i
            m += 1
    return m


@njit
def _gap_terms(alpha, G, U):
    n = alpha.shape[0]
    gap = 0.0
    dual = 0.0
    for i in range(n):
        a = alpha[i]
        g = G[i]
        gap += a * g + (U[i] * (-g) if g < 0.0 else 0.0)
        dual += 0.5 * a * (1.0 - g)
    return dual + gap, dual, gap


@njit
def gap_rule(alpha, G, U, tol):
    """The stopping rule on the exact gradient: gap <= tol * primal (module docstring)."""
    P_, D_, gap = _gap_terms(alpha, G, U)
    return gap <= tol * P_


@njit
def _reconstruct(data, indices, indptr, n_cols, dense, norms, ops, par, ranges, b2, pre, cache,
                 slot_row, row_slot, stamp, cstate, Y, alpha, G, act, m, stack):  # fmt: skip
    """Recompute G_j = -1 + y_j sum_i alpha_i y_i Kb_ij for the rows not in ``act[:m]``."""
    n = alpha.shape[0]
    inact = np.ones(n, dtype=np.bool_)
    for q in range(m):
        inact[act[q]] = False
    for j in range(n):
        if inact[j]:
            G[j] = -1.0
    for i in range(n):
        if alpha[i] == 0.0:
            continue
        col, st = get_column(i, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges,
                             b2, pre, cache, slot_row, row_slot, stamp, cstate, stack)  # fmt: skip
        if st != OK:
            return st
        ai = alpha[i] * Y[i]
        for j in range(n):
            if inact[j]:
                G[j] += ai * Y[j] * col[j]
    return OK


@njit
def activate_all(act):
    """act = 0 .. n-1: every coordinate in the active set again (after the gradient of the
    shrunk ones was rebuilt); returns n."""
    n = act.shape[0]
    for q in range(n):
        act[q] = q
    return n


@njit
def shrink(alpha, G, U, act, m):
    """Drop from ``act[:m]`` (order kept) the coordinates at a bound whose gradient pushes
    outwards by more than the largest violation of the active set; returns the new count."""
    vmax = 0.0
    for q in range(m):
        j = act[q]
        g = G[j]
        if (g < 0.0 and alpha[j] < U[j]) and -g > vmax:
            vmax = -g
        elif (g > 0.0 and alpha[j] > 0.0) and g > vmax:
            vmax = g
    k = 0
    for q in range(m):
        j = act[q]
        g = G[j]
        out = (alpha[j] <= 0.0 and g > vmax) or (alpha[j] >= U[j] and -g > vmax)
        if not out:
            act[k] = j
            k += 1
    return k


@njit
def svc_greedy(data, indices, indptr, n_cols, dense, norms, ops, par, ranges, b2, pre, cache,
               slot_row, row_slot, stamp, cstate, Y, U, Qd, alpha, G, max_steps, check_every,
               tol, shrinking):  # fmt: skip
    """Coordinate ascent on one binary problem (1-D ``Y``, ``U``, ``alpha``, ``G``) with the
    greedy (Gauss-Southwell) choice of coordinate: the i whose projected gradient violates
    optimality most (the same exact step as :func:`svc_epoch`).

    Shrinking (as in SMO solvers): every ``check_every`` steps, coordinates at a bound whose
    gradient pushes outwards by more than the largest current violation leave the active set;
    steps, scans and gradient updates then touch the active set only.  When the gap over the
    active set meets the rule, the gradient of the others is recomputed from the support vectors
    (their kernel columns) and the exact gap over all coordinates decides.  Stops after
    ``max_steps`` steps or on the exact rule; returns (steps, converged, status), with G exact
    for every coordinate on return."""
    n = alpha.shape[0]
    stack = np.zeros(ops.shape[0] + 1)
    act = np.arange(n)
    m = n
    for step in range(max_steps + 1):
        if step % check_every == 0 or step == max_steps:
            P_, D_, gap = _gap_terms(alpha, G, U)  # over all; shrunk terms use a stale G
            if gap <= tol * P_ or step == max_steps:
                if m < n:
                    st = _reconstruct(data, indices, indptr, n_cols, dense, norms, ops, par,
                                      ranges, b2, pre, cache, slot_row, row_slot, stamp, cstate,
                                      Y, alpha, G, act, m, stack)  # fmt: skip
                    if st != OK:
                        return step, False, st
                    m = activate_all(act)
                    P_, D_, gap = _gap_terms(alpha, G, U)
                if gap <= tol * P_ or step == max_steps:
                    return step, gap <= tol * P_, OK
            elif shrinking:
                m = shrink(alpha, G, U, act, m)
        best = 0.0
        i = -1
        for q in range(m):
            j = act[q]
            g = G[j]
            v = 0.0
            if g < 0.0:
                if alpha[j] < U[j]:
                    v = -g
            elif alpha[j] > 0.0:
                v = g
            if v > best:
                best = v
                i = j
        if i < 0 or coordinate_step(alpha[i], G[i], Qd[i], U[i]) == alpha[i]:
            # nothing moves on the active set: force the exact check at the next step
            if m == n:
                return step, gap_rule(alpha, G, U, tol), OK
            st = _reconstruct(data, indices, indptr, n_cols, dense, norms, ops, par, ranges, b2,
                              pre, cache, slot_row, row_slot, stamp, cstate, Y, alpha, G, act, m,
                              stack)  # fmt: skip
            if st != OK:
                return step, False, st
            m = activate_all(act)
            continue
        a = alpha[i]
        t = coordinate_step(a, G[i], Qd[i], U[i])
        col, st = get_column(i, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges,
                             b2, pre, cache, slot_row, row_slot, stamp, cstate, stack)  # fmt: skip
        if st != OK:
            return step, False, st
        alpha[i] = t
        d = (t - a) * Y[i]
        for q in range(m):
            j = act[q]
            G[j] += d * Y[j] * col[j]
    return max_steps, False, OK
