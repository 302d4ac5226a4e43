"""Kernel SVM, Crammer-Singer: the multiclass dual solved example by example (the sequential
dual method), over the kernel-column cache of :mod:`.svc`.

    Crammer-Singer (``cs_*``): one dual vector alpha_i in R^K per example (Keerthi et al. 2008,
    the sequential dual method of LIBLINEAR -s 4, kernelised)::

        min_alpha 1/2 sum_m ||f_m||^2 + sum_i sum_m e_im alpha_im
        s.t. alpha_im <= U_i [m = y_i],  sum_m alpha_im = 0,   f_m = sum_i alpha_im Kb(x_i, .)

    with e_im = 1 - [m = y_i]; the sub-problem of example i (A = Kb_ii, B_m = G_im - A alpha_im,
    G_im = f_m(x_i) + e_im) is solved exactly by :func:`cs_subproblem`.  Gap::

        gap = sum_i ( sum_m alpha_im G_im + U_i max_m (G_im - G_iy_i) )
"""

from __future__ import annotations

import math

import numpy as np

from ..config import njit
from .svc import OK, get_column


@njit
def cs_subproblem(A, B, y, u, out):
    """Crammer-Singer sub-problem of one example, exactly::

        min_a  A/2 sum_m a_m^2 + sum_m B_m a_m   s.t.  a_m <= u [m = y],  sum_m a_m = 0

    KKT: a_m = min(u [m = y], (beta - B_m) / A) with beta the root of the increasing,
    piecewise-linear h(beta) = sum_m min(A u [m = y], beta - B_m).  With D_m = B_m + A u [m = y]
    sorted decreasingly, on the piece where the r largest D are "free",
    r beta = sum_{free} B_m - [y not free] A u; the valid r is the first whose beta lies in
    [D_(r+1), D_(r)].  A <= 0 or u <= 0: a = 0 (out is written, the count of moved entries
    is not returned)."""
    K = B.shape[0]
    if not (A > 0.0) or not (u > 0.0):
        for m in range(K):
            out[m] = 0.0
        return
    D = np.empty(K)
    for m in range(K):
        D[m] = B[m] + (A * u if m == y else 0.0)
    order = np.argsort(-D)
    sumB = 0.0
    y_free = False
    beta = 0.0
    for r in range(1, K + 1):
        m = order[r - 1]
        sumB += B[m]
        if m == y:
            y_free = True
        beta = (sumB - (0.0 if y_free else A * u)) / r
        upper = D[order[r - 1]]
        lower = D[order[r]] if r < K else -math.inf
        if lower <= beta <= upper:
            break
    for m in range(K):
        t = (beta - B[m]) / A
        cap = u if m == y else 0.0
        out[m] = t if t < cap else cap


@njit
def _cs_step(i, A, G, alpha, ycode, U, B, new, delta):
    """The exact sub-problem of example i (A = Kb_ii): ``new`` its solution, ``delta`` the
    change; returns whether anything moves."""
    K = alpha.shape[1]
    for m in range(K):
        B[m] = G[i, m] - A * alpha[i, m]
    cs_subproblem(A, B, ycode[i], U[i, 0], new)
    moved = False
    for m in range(K):
        delta[m] = new[m] - alpha[i, m]
        if delta[m] != 0.0:
            moved = True
    return moved


@njit(inline="always")
def _cs_move(i, alpha, G, new, delta, col):
    """alpha_i <- new and G_jm += delta_m Kb_ij for every example j (``col`` = column i of
    Kb): the step of example i and its change of the gradient."""
    n, K = alpha.shape
    for m in range(K):
        alpha[i, m] = new[m]
    for j in range(n):
        c = col[j]
        for m in range(K):
            G[j, m] += delta[m] * c


@njit
def cs_epoch(data, indices, indptr, n_cols, dense, norms, ops, par, ranges, b2, pre, cache,
             slot_row, row_slot, stamp, cstate, ycode, U, Qd, alpha, G, active, n_active,
             perm_keys):  # fmt: skip
    """One epoch of the Crammer-Singer sequential dual method over ``active[:n_active]``."""
    n, K = alpha.shape
    stack = np.zeros(ops.shape[0] + 1)
    B = np.zeros(K)
    new = np.zeros(K)
    delta = np.zeros(K)
    order = np.argsort(perm_keys[:n_active])
    for idx in range(n_active):
        i = active[order[idx]]
        A = Qd[i]
        if not (A > 0.0):
            continue
        if not _cs_step(i, A, G, alpha, ycode, U, B, new, delta):
            continue
        col, st = get_column(i, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges,
                             b2, pre, cache, slot_row, row_slot, stamp, cstate, stack)  # fmt: skip
        if st != OK:
            return st
        _cs_move(i, alpha, G, new, delta, col)
    return OK


@njit
def cs_objectives(alpha, G, U, ycode, out):
    """out[0] = (primal, dual, gap) of the Crammer-Singer problem (module docstring)."""
    n, K = alpha.shape
    gap = 0.0
    lin = 0.0
    wsq = 0.0
    for i in range(n):
        y = ycode[i]
        mx = 0.0
        for m in range(K):
            g = G[i, m]
            e = 0.0 if m == y else 1.0
            gap += alpha[i, m] * g
            wsq += alpha[i, m] * (g - e)
            lin += alpha[i, m] * e
            if g - G[i, y] > mx:
                mx = g - G[i, y]
        gap += U[i, 0] * mx
    dual = -(0.5 * wsq + lin)
    out[0, 0] = dual + gap
    out[0, 1] = dual
    out[0, 2] = gap


@njit
def cs_active(alpha, G, ycode, active):
    """Shrinking for Crammer-Singer: skip examples with alpha_i = 0 whose true class already
    beats every other gradient (the sub-problem keeps them at 0)."""
    n, K = alpha.shape
    m = 0
    for i in range(n):
        y = ycode[i]
        zero = True
        for k in range(K):
            if alpha[i, k] != 0.0:
                zero = False
        keep = True
        if zero:
            keep = False
            for k in range(K):
                if k != y and G[i, k] >= G[i, y]:
                    keep = True
        if keep:
            active[m] = i
            m += 1
    return m


@njit
def _cs_gap(alpha, G, U, ycode):
    out = np.zeros((1, 3))
    cs_objectives(alpha, G, U, ycode, out)
    return out[0, 0], out[0, 2]


@njit
def cs_greedy(data, indices, indptr, n_cols, dense, norms, ops, par, ranges, b2, pre, cache,
              slot_row, row_slot, stamp, cstate, ycode, U, Qd, alpha, G, max_steps, check_every,
              tol):  # fmt: skip
    """Crammer-Singer with the greedy choice of example: the i with the largest KKT violation
    max_m G_im - min_{m: alpha_im < C_im} G_im; its sub-problem is solved exactly
    (:func:`cs_subproblem`).  Returns (steps, converged, status)."""
    n, K = alpha.shape
    stack = np.zeros(ops.shape[0] + 1)
    B = np.zeros(K)
    new = np.zeros(K)
    delta = np.zeros(K)
    for step in range(max_steps):
        if step % check_every == 0:
            P_, gap = _cs_gap(alpha, G, U, ycode)
            if gap <= tol * P_:
                return step, True, OK
        best = 0.0
        i = -1
        for j in range(n):
            if not (Qd[j] > 0.0):
                continue
            y = ycode[j]
            mx = -math.inf
            mn = math.inf
            for m in range(K):
                g = G[j, m]
                if g > mx:
                    mx = g
                cap = U[j, 0] if m == y else 0.0
                if alpha[j, m] < cap and g < mn:
                    mn = g
            v = mx - mn
            if v > best:
                best = v
                i = j
        if i < 0:
            return step, True, OK
        A = Qd[i]
        if not _cs_step(i, A, G, alpha, ycode, U, B, new, delta):
            return step, True, OK
        col, st = get_column(i, data, indices, indptr, n_cols, dense, norms, n, ops, par, ranges,
                             b2, pre, cache, slot_row, row_slot, stamp, cstate, stack)  # fmt: skip
        if st != OK:
            return step, False, st
        _cs_move(i, alpha, G, new, delta, col)
    P_, gap = _cs_gap(alpha, G, U, ycode)
    return max_steps, gap <= tol * P_, OK
