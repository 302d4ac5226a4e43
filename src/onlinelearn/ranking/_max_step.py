"""The exact 'max' step of an :class:`onlinelearn.ranking.InstanceRanker` round written with
non-negative variables (Lawson-Hanson NNLS), for the pass's kept dual objective
(:mod:`onlinelearn.ranking._instance_core`, :mod:`onlinelearn.ranking._round_dual`).
"""

from __future__ import annotations

import math

import numpy as np

from .._core.config import njit
from ._round_dual import _FEAS_TOL, _gmul


@njit
def _nnls(M, r, out):
    """Lawson-Hanson: out = argmin_{x >= 0} ||M x - r||_2 (active set; at most 3 m inner
    steps, m the columns).  Returns the residual norm."""
    n, m = M.shape
    passive = np.zeros(m, dtype=np.bool_)
    x = np.zeros(m)
    z = np.zeros(m)
    steps = 0
    while steps < 3 * m + 3:
        res = r - M @ x
        g = M.T @ res
        j = -1
        best = 1e-13 * (1.0 + np.abs(r).max())
        for q in range(m):
            if not passive[q] and g[q] > best:
                best = g[q]
                j = q
        if j < 0:
            break
        passive[j] = True
        while steps < 3 * m + 3:
            steps += 1
            cnt = 0
            for q in range(m):
                if passive[q]:
                    cnt += 1
            idx = np.empty(cnt, dtype=np.int64)
            cnt = 0
            for q in range(m):
                if passive[q]:
                    idx[cnt] = q
                    cnt += 1
            sub = np.empty((n, cnt))
            for u in range(cnt):
                sub[:, u] = M[:, idx[u]]
            zs = np.linalg.lstsq(sub, r)[0]
            for q in range(m):
                z[q] = 0.0
            ok = True
            for u in range(cnt):
                z[idx[u]] = zs[u]
                if zs[u] <= 0.0:
                    ok = False
            if ok:
                for q in range(m):
                    x[q] = z[q]
                break
            step = 1.0
            for u in range(cnt):
                q = idx[u]
                if z[q] <= 0.0 and x[q] - z[q] > 0.0:
                    v = x[q] / (x[q] - z[q])
                    if v < step:
                        step = v
            for q in range(m):
                x[q] += step * (z[q] - x[q])
                if passive[q] and x[q] <= 1e-15 * (1.0 + abs(z[q])):
                    passive[q] = False
                    x[q] = 0.0
    for q in range(m):
        out[q] = max(x[q], 0.0)
    return np.sqrt(np.sum((M @ out - r) ** 2))


@njit
def nonnegative_max_step(P, pi, pj, K, c, C, beta, out):
    """A representation of the 'max' step with the variables of a dual point.

    :func:`polish_max` solves its KKT system by least squares: the step Delta = sum beta a is
    right, but beta may have negative entries (the pairs of a query are dependent,
    a_ij + a_jl = a_il, so the face's system has many solutions).  The dual problem's optimum
    alpha* >= 0, sum alpha* = C when a loss remains, gives the same step.  So: out =
    argmin_{x >= 0} ||sum_p (x_p - beta_p) a_p||^2 [+ (sum x - C)^2] over the pairs of the face,
    by NNLS,
    with sum_p x_p a_p = sum_i (F x)_i x_i (F the rows-by-pairs incidence matrix) and the
    norm read from the query's row Gram K = R' R.  Returns the residual (``out`` is then used
    only if the caller certifies its primal value)."""
    k = K.shape[0]
    tau = np.zeros(k)
    Kt = np.zeros(k)
    Ga = np.zeros(P)
    _gmul(P, pi, pj, K, beta, tau, Kt, Ga)
    rmax = -math.inf
    for p in range(P):
        if c[p] - Ga[p] > rmax:
            rmax = c[p] - Ga[p]
    eps = 1e-9 * (1.0 + abs(rmax))
    m = 0
    for p in range(P):
        if c[p] - Ga[p] >= rmax - eps:
            m += 1
    idx = np.empty(m, dtype=np.int64)
    m = 0
    for p in range(P):
        if c[p] - Ga[p] >= rmax - eps:
            idx[m] = p
            m += 1
    # ||A_S x - Delta||^2 = ||R F (x - beta)||^2 with K = R' R (R = sqrt(e) V' from K's
    # eigenvectors: rows that are dependent, or repeated, are handled alike)
    e, V = np.linalg.eigh(K)
    F = np.zeros((k, m))
    for u in range(m):
        F[pi[idx[u]], u] = 1.0
        F[pj[idx[u]], u] = -1.0
    M = np.zeros((k + 1, m))
    r = np.zeros(k + 1)
    for i in range(k):
        sc = math.sqrt(max(e[i], 0.0))
        for u in range(m):
            acc = 0.0
            for j in range(k):
                acc += V[j, i] * F[j, u]
            M[i, u] = sc * acc
        acc = 0.0
        for j in range(k):
            acc += V[j, i] * tau[j]
        r[i] = sc * acc
    # a loss xi = rmax > 0 remains: the KKT system asks sum x = C (the dual's value is then
    # xi C + 1/2 ||Delta||^2, the round's optimum); with xi = 0 the value is 1/2 ||Delta||^2
    # whatever the sum, which needs only sum x <= C: first without the row of the sum, then,
    # if that representation sums above C, with it (the caller checks the result)
    x = np.zeros(m)
    res = 0.0
    for attempt in range(2):
        if rmax > eps or attempt == 1:
            for u in range(m):
                M[k, u] = 1.0
            r[k] = C
        res = _nnls(M, r, x)
        if rmax > eps or np.sum(x) <= C * (1.0 + _FEAS_TOL):
            break
    for p in range(P):
        out[p] = 0.0
    for u in range(m):
        out[idx[u]] = x[u]
    return res
