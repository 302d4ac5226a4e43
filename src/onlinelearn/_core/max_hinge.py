"""The max-of-hinge update of thesis Sec. 7.4 (multiclass with class-dependent features
phi(x, r)), split from :mod:`.ranking`."""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .projections import simplex_theta
from .ranking_state import N_MISTAKES, N_UPDATES, OK, SOLVER_ITER_MAX, T_SEEN


# ---------------------------------------------------------------------------------- max-of-hinge
@njit
def max_abs_row_sum(G, k):
    """max_i sum_j |G_ij| over the leading k x k block of G: the infinity norm, a bound on the
    largest eigenvalue of a symmetric G (the step size of a projected gradient)."""
    out = 0.0
    for i in range(k):
        s = 0.0
        for j in range(k):
            s += abs(G[i, j])
        if s > out:
            out = s
    return out


@njit
def _project_capped_simplex(v, cap, out):
    """Euclidean projection of v onto {a >= 0, sum a <= cap} (Sec. 7.1: clip, or Fig. 7.1)."""
    k = v.shape[0]
    s = 0.0
    for r in range(k):
        out[r] = v[r] if v[r] > 0.0 else 0.0
        s += out[r]
    if s <= cap:
        return
    th = simplex_theta(v, 0, cap)
    for r in range(k):
        u = v[r] - th
        out[r] = u if u > 0.0 else 0.0


@njit
def max_hinge_dual(G, c, cap, tol, max_iter, alpha, work):
    """The aggressive step for the max-of-hinge loss (thesis Sec. 7.4, eq. (7.34)), Euclidean f::

        max_alpha  c . alpha - 1/2 alpha' G alpha   s.t.  alpha >= 0,  sum alpha <= cap

    with G_ij = <a_i, a_j> and c_i = b_i - <w_t, a_i>; the primal step is w = w_t + sum alpha_i a_i.
    Accelerated projected gradient (FISTA), the projection by Sec. 7.1 (the route the thesis names
    beside Fig. 7.5), stopped when the duality gap
    P - D = alpha' G alpha - c . alpha + cap [max_i (c - G alpha)_i]_+ is at most tol (1 + |D|).
    ``work`` (4, k) scratch.  Returns the number of iterations."""
    k = c.shape[0]
    Lc = max_abs_row_sum(G, k)
    for i in range(k):
        alpha[i] = 0.0
    if Lc <= 0.0:
        # G = 0: the objective is linear; put the cap on the best positive c
        best = -1
        for i in range(k):
            if c[i] > 0.0 and (best < 0 or c[i] > c[best]):
                best = i
        if best >= 0:
            alpha[best] = cap
        return 0
    yk = work[0]
    prev = work[1]
    grad = work[2]
    Ga = work[3]
    for i in range(k):
        yk[i] = 0.0
        prev[i] = 0.0
    tk = 1.0
    it = 0
    while it < max_iter:
        it += 1
        for i in range(k):
            g = -c[i]
            for j in range(k):
                g += G[i, j] * yk[j]
            grad[i] = yk[i] - g / Lc
        for i in range(k):
            prev[i] = alpha[i]
        _project_capped_simplex(grad, cap, alpha)
        # duality gap at alpha
        quad = 0.0
        lin = 0.0
        worst = 0.0
        for i in range(k):
            s = 0.0
            for j in range(k):
                s += G[i, j] * alpha[j]
            Ga[i] = s
            quad += alpha[i] * s
            lin += c[i] * alpha[i]
            v = c[i] - s
            if v > worst:
                worst = v
        D = lin - 0.5 * quad
        gap = quad - lin + cap * worst
        if gap <= tol * (1.0 + abs(D)):
            break
        tn = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * tk * tk))
        for i in range(k):
            yk[i] = alpha[i] + (tk - 1.0) / tn * (alpha[i] - prev[i])
        tk = tn
    return it


@njit
def max_hinge_pass(Phi, y, weight, order, w, st, C, gamma, tol, max_iter, pred_out, G, c, alpha,
                   work, A):  # fmt: skip
    """One online pass of the max-of-hinge learner over dense joint features ``Phi`` (n, K, D):
    score s_r = <w, Phi[i, r]>, predict argmax, then the step of :func:`max_hinge_dual` with
    a_r = Phi[i, y] - Phi[i, r] and b_r = gamma for the rivals r != y (K - 1 of them)."""
    n, K, D = Phi.shape
    for ii in range(order.shape[0]):
        i = order[ii]
        st[T_SEEN] += 1.0
        yi = y[i]
        best = 0
        bs = -np.inf
        sy = 0.0
        for r in range(K):
            s = 0.0
            for j in range(D):
                s += w[j] * Phi[i, r, j]
            if s > bs:
                bs = s
                best = r
            if r == yi:
                sy = s
            c[r] = s  # scores, for now
        pred_out[i] = best
        mistake = False
        for r in range(K):
            if r != yi and c[r] >= sy:
                mistake = True
        if mistake:
            st[N_MISTAKES] += 1.0
        cap = C * weight[i]
        if K < 2 or cap <= 0.0:
            continue
        # rivals r != y: a_r = Phi_y - Phi_r, c_r = gamma - (s_y - s_r)
        q = 0
        anyloss = False
        for r in range(K):
            if r == yi:
                continue
            for j in range(D):
                A[q, j] = Phi[i, yi, j] - Phi[i, r, j]
            c[q] = gamma - (sy - c[r])
            if c[q] > 0.0:
                anyloss = True
            q += 1
        if not anyloss:
            continue
        for a in range(q):
            for b in range(a, q):
                s = 0.0
                for j in range(D):
                    s += A[a, j] * A[b, j]
                G[a, b] = s
                G[b, a] = s
        its = max_hinge_dual(G[:q, :q], c[:q], cap, tol, max_iter, alpha[:q], work[:, :q])
        if its > st[SOLVER_ITER_MAX]:
            st[SOLVER_ITER_MAX] = its
        moved = False
        for a in range(q):
            if alpha[a] > 0.0:
                moved = True
                for j in range(D):
                    w[j] += alpha[a] * A[a, j]
        if moved:
            st[N_UPDATES] += 1.0
    return OK
