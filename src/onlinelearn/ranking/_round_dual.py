"""Exact dual solvers of one round of :class:`onlinelearn.ranking.InstanceRanker` (thesis
Sec. 5.3.4), called by the compiled pass (:mod:`onlinelearn.ranking._instance_core`, where the
round, its pairs p = (i, j) with a_p = x_i - x_j, b_p = y_i - y_j and its loss g are set out).

``OPTIMAL`` (eq. 3.12 / 7.8): w' = argmin_w 1/2 ||w - w_t||^2 + C g(w), by its dual

    max_alpha  D(alpha) = sum_p alpha_p c_p - 1/2 ||sum_p alpha_p a_p||^2,   c_p = b_p - <w_t, a_p>
    s.t.       MAX: alpha >= 0, sum_p alpha_p <= C        AVG: 0 <= alpha_p <= C / |E|

and w' = w_t + sum_p alpha_p a_p = w_t + sum_i tau_i x_i, tau_i = sum_{p = (i, .)} alpha_p -
sum_{p = (., i)} alpha_p.  Solved by accelerated projected gradient (FISTA with gradient restart)
in the pair space, G alpha computed as (K tau)_i - (K tau)_j from the query's row Gram K
(O(|E| + k^2) per product, no |E| x |E| matrix), the projection onto the capped simplex by
Sec. 7.1, stopped when the duality gap P - D, P(alpha) = 1/2 ||sum alpha a||^2 + C g(w_t + sum
alpha a), is at most tol (1 + |D|) (``N_INEXACT`` counts rounds stopped at ``max_iter``).

The exact 'max' step read from the KKT system (:func:`polish_max`) is a least-squares solution
whose variables may fall outside the round's dual set; :func:`_dual_feasible` accepts them up to
a rounding of ``_FEAS_TOL`` C (the pass keeps its dual objective only over feasible steps).
"""

from __future__ import annotations

import math

import numpy as np

from .._core.config import njit
from .._core.max_hinge import _project_capped_simplex, max_abs_row_sum

MAX = 0
AVG = 1

#: the rounding accepted in a step's dual variables, relative to C (module docstring)
_FEAS_TOL = 1e-12


@njit
def _flow(P, pi, pj, alpha, tau):
    for i in range(tau.shape[0]):
        tau[i] = 0.0
    for p in range(P):
        tau[pi[p]] += alpha[p]
        tau[pj[p]] -= alpha[p]


@njit
def _gmul(P, pi, pj, K, alpha, tau, Kt, out):
    """out = G alpha (G_pq = <a_p, a_q>); returns tau' K tau = alpha' G alpha."""
    _flow(P, pi, pj, alpha, tau)
    k = tau.shape[0]
    q = 0.0
    for i in range(k):
        s = 0.0
        for j in range(k):
            s += K[i, j] * tau[j]
        Kt[i] = s
        q += tau[i] * s
    for p in range(P):
        out[p] = Kt[pi[p]] - Kt[pj[p]]
    return q


@njit
def _project(loss, P, v, cap, out):
    if loss == MAX:
        _project_capped_simplex(v[:P], cap, out[:P])
    else:
        box = cap / P
        for p in range(P):
            out[p] = min(max(v[p], 0.0), box)


@njit
def _largest_loss(P, c, Ga):
    """max(0, max_p c_p - (G alpha)_p): the largest margin loss of the pairs."""
    m = 0.0
    for p in range(P):
        r = c[p] - Ga[p]
        if r > m:
            m = r
    return m


@njit
def _after_loss(loss, P, c, Ga, C):
    """C g(w_t + sum alpha a) from the margins c - G alpha."""
    if loss == MAX:
        return C * _largest_loss(P, c, Ga)
    s = 0.0
    for p in range(P):
        r = c[p] - Ga[p]
        if r > 0.0:
            s += r
    return C * s / P


@njit
def round_dual(loss, P, pi, pj, K, c, C, tol, max_iter, alpha, work):
    """The maximiser alpha of the round's dual (module docstring); returns (iterations, gap,
    D).  ``work`` (6, max(P, k)) scratch."""
    k = K.shape[0]
    yv = work[0]
    Ga = work[1]
    prev = work[2]
    trial = work[3]
    tau = work[4, :k]
    Kt = work[5, :k]
    for p in range(P):
        alpha[p] = 0.0
    # Lipschitz constant of the gradient: ||G|| = ||A||^2 <= lambda_max(L_E) lambda_max(K),
    # L_E the Laplacian of the pair graph (<= max over pairs of d_i + d_j, Anderson-Morley),
    # lambda_max(K) <= its largest absolute row sum
    deg = np.zeros(k)
    for p in range(P):
        deg[pi[p]] += 1.0
        deg[pj[p]] += 1.0
    lap = 0.0
    for p in range(P):
        d = deg[pi[p]] + deg[pj[p]]
        if d > lap:
            lap = d
    Lc = lap * max_abs_row_sum(K, k)
    if Lc > 0.0:
        # the bound can exceed ||G|| by a factor k: estimate ||G|| by power iteration and keep
        # it only as a start (the iterations below double it whenever a step shows more
        # curvature than it allows, so every step is a valid projected gradient step)
        for p in range(P):
            yv[p] = 1.0 + (p % 7) * 0.1
        est = 0.0
        for _ in range(30):
            nrm = 0.0
            for p in range(P):
                nrm += yv[p] * yv[p]
            nrm = math.sqrt(nrm)
            if nrm == 0.0:
                break
            for p in range(P):
                yv[p] /= nrm
            _gmul(P, pi, pj, K, yv, tau, Kt, Ga)
            est = 0.0
            for p in range(P):
                est += yv[p] * Ga[p]
                yv[p] = Ga[p]
        if est > 0.0:
            Lc = min(Lc, 1.05 * est)
    if Lc <= 0.0:
        # every a_p = 0: D is linear in alpha
        if loss == MAX:
            best = -1
            for p in range(P):
                if c[p] > 0.0 and (best < 0 or c[p] > c[best]):
                    best = p
            if best >= 0:
                alpha[best] = C
        else:
            for p in range(P):
                alpha[p] = C / P if c[p] > 0.0 else 0.0
        q = _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
        D = 0.0
        for p in range(P):
            D += alpha[p] * c[p]
        return 0, 0.0, D - 0.5 * q
    step = 1.0 / Lc
    for p in range(P):
        yv[p] = 0.0
        prev[p] = 0.0
    t = 1.0
    gap = math.inf
    D = 0.0
    it = 0
    while it < max_iter:
        it += 1
        _gmul(P, pi, pj, K, yv, tau, Kt, Ga)
        for p in range(P):
            trial[p] = yv[p] + step * (c[p] - Ga[p])
        _project(loss, P, trial, C, alpha)
        # curvature along the step: d' G d <= Lc ||d||^2 is what a step of 1/Lc needs
        dd = 0.0
        for p in range(P):
            trial[p] = alpha[p] - yv[p]
            dd += trial[p] * trial[p]
        if dd > 0.0:
            dGd = _gmul(P, pi, pj, K, trial, tau, Kt, work[3])
            if dGd > Lc * dd * (1.0 + 1e-12):
                Lc = 2.0 * dGd / dd
                step = 1.0 / Lc
                continue
        # gradient restart: the step from prev to alpha goes against the ascent direction
        dot = 0.0
        for p in range(P):
            dot += (c[p] - Ga[p]) * (alpha[p] - prev[p])
        if dot < 0.0:
            t = 1.0
            for p in range(P):
                yv[p] = prev[p]
            continue
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        mom = (t - 1.0) / t_new
        for p in range(P):
            yv[p] = alpha[p] + mom * (alpha[p] - prev[p])
            prev[p] = alpha[p]
        t = t_new
        if it % 5 == 0 or it == max_iter:
            q = _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
            D = -0.5 * q
            for p in range(P):
                D += alpha[p] * c[p]
            gap = 0.5 * q + _after_loss(loss, P, c, Ga, C) - D
            if gap <= tol * (1.0 + abs(D)):
                break
    for p in range(P):
        alpha[p] = prev[p]
    q = _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
    D = -0.5 * q
    for p in range(P):
        D += alpha[p] * c[p]
    gap = 0.5 * q + _after_loss(loss, P, c, Ga, C) - D
    return it, gap, D


@njit
def polish_max(P, pi, pj, K, c, C, alpha, D, gap, beta):
    """The exact primal step of ``MAX`` on the face the dual iterate ``alpha`` points to.

    The primal's objective at Delta = sum alpha a is nonsmooth, so its gap to D(alpha) shrinks
    only as the square root of the dual's: a gap of 1e-10 is out of reach of any first-order
    method.  The optimum satisfies, on its support S (the pairs of largest margin loss xi), the
    KKT system  G_SS beta + xi 1 = c_S,  sum_S beta = C  (xi > 0; xi = 0: G_SS beta = c_S);
    solved by least squares (G_SS may be singular: the pairs are dependent, a_ij + a_jl = a_il),
    Delta = sum_S beta a is unique on the face.  Kept in ``beta`` when its primal value is below
    that of ``alpha``; the certified gap is then P(beta) - D(alpha).  Returns the gap."""
    k = K.shape[0]
    tau = np.zeros(k)
    Kt = np.zeros(k)
    Ga = np.zeros(P)
    q = _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
    rmax = _largest_loss(P, c, Ga)
    best_p = 0.5 * q + C * rmax
    for p in range(P):
        beta[p] = alpha[p]
    eps = 1e-6 * (1.0 + abs(rmax))
    for _rep in range(2):
        m = 0
        for p in range(P):
            if c[p] - Ga[p] >= rmax - eps and (alpha[p] > 0.0 or rmax > eps):
                m += 1
        if m == 0:
            return gap
        if m > 400:  # a dense least-squares solve of that size costs more than it can save
            return gap
        idx = np.empty(m, dtype=np.int64)
        m = 0
        for p in range(P):
            if c[p] - Ga[p] >= rmax - eps and (alpha[p] > 0.0 or rmax > eps):
                idx[m] = p
                m += 1
        capped = rmax > eps
        nv = m + 1 if capped else m
        M = np.zeros((nv, nv))
        rhs = np.zeros(nv)
        for u in range(m):
            a_i = pi[idx[u]]
            a_j = pj[idx[u]]
            for v in range(m):
                b_i = pi[idx[v]]
                b_j = pj[idx[v]]
                M[u, v] = K[a_i, b_i] - K[a_i, b_j] - K[a_j, b_i] + K[a_j, b_j]
            rhs[u] = c[idx[u]]
            if capped:
                M[u, m] = 1.0
                M[m, u] = 1.0
        if capped:
            rhs[m] = C
        sol = np.linalg.lstsq(M, rhs)[0]
        trial = np.zeros(P)
        for u in range(m):
            trial[idx[u]] = sol[u]
        q2 = _gmul(P, pi, pj, K, trial, tau, Kt, Ga)
        r2 = _largest_loss(P, c, Ga)
        val = 0.5 * q2 + C * r2
        if val < best_p:
            best_p = val
            for p in range(P):
                beta[p] = trial[p]
        eps *= 100.0
        _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
    return best_p - D


@njit
def _dual_feasible(loss, P, alpha, C):
    """alpha in the round's dual set, up to a rounding of ``_FEAS_TOL`` C."""
    tot = 0.0
    for p in range(P):
        if alpha[p] < -_FEAS_TOL * C:
            return False
        if loss == AVG and alpha[p] > C / P * (1.0 + _FEAS_TOL):
            return False
        tot += alpha[p]
    return loss == AVG or tot <= C * (1.0 + _FEAS_TOL)
