"""Compiled pass of :class:`onlinelearn.ranking.InstanceRanker` (thesis Sec. 5.3.4).

A round is a query: rows x_1..x_k of X (CSR) with targets y_1..y_k.  Its pairs are
E = {(i, j) : y_i > y_j}, pair p = (i, j) has a_p = x_i - x_j, b_p = y_i - y_j, and the pair
hinge loss l_p(w) = [b_p - <w, a_p>]_+.  The round's loss g(w) is ``MAX`` (5.26) max_p l_p(w) or
``AVG`` (5.25) (1/|E|) sum_p l_p(w).  Euclidean f = 1/2 ||w||^2, a fixed c = 1/C.

``OPTIMAL`` (eq. 3.12 / 7.8): w' = argmin_w 1/2 ||w - w_t||^2 + C g(w), by its dual in the pair
space (:mod:`onlinelearn.ranking._round_dual`, ``N_INEXACT`` counts rounds stopped at
``max_iter``).

``SUBGRADIENT`` (Fig. 3.1 with the smallest update satisfying (3.9)): when g(w_t) > 0,
w' = w_t - C lambda', lambda' the subgradient: MAX, -a_p of the most violated pair (the first
maximiser); AVG, -(1/|E|) sum_{p : l_p > 0} a_p.

Dual (``st[DUAL]``).  Over the rounds t and their pairs p, with variables alpha_tp in the round's
feasible set (MAX: alpha_t >= 0, sum_p alpha_tp <= C; AVG: 0 <= alpha_tp <= C / |E_t|), the
dual of P(w) = 1/2 ||w||^2 + C sum_t g_t(w) is

    D(alpha) = sum_t sum_p alpha_tp b_tp - 1/2 ||sum_t sum_p alpha_tp a_tp||^2,

and a round that moves w by Delta = sum_p alpha_p a_p raises it by sum_p alpha_p c_p -
1/2 ||Delta||^2 (c_p = b_p - <w_t, a_p>): the pass adds that, so st[DUAL] = st[GAIN] -
1/2 ||w||^2 while every step's variables are feasible.  The subgradient step's are (alpha = C on
one pair; C / |E| on the pairs with a loss), and so are the projected-gradient iterates; the
exact 'max' step read from the KKT system (:func:`polish_max`) is a least-squares solution
whose variables may fall outside the set (a negative alpha_p, or a sum above C): such a round
is no dual point, and the kept dual becomes NaN for good (a rounding of 1e-12 C is accepted).
"""

from __future__ import annotations

import math

import numpy as np

from .._core.config import njit
from .._core.fp import finite
from ._max_step import nonnegative_max_step
from ._round_dual import AVG as AVG
from ._round_dual import MAX, _after_loss, _dual_feasible, _gmul, polish_max, round_dual

OPTIMAL = 0
SUBGRADIENT = 1

# statistics vector slots
T_SEEN = 0  # queries processed
N_MISTAKES = 1  # queries whose ranking put some pair in the wrong order (ties count)
N_UPDATES = 2
GAIN = 3  # sum over rounds of sum_p alpha_p b_p
CUM_LOSS = 4  # sum over rounds of g_t(w_t)
ITER_MAX = 5
N_INEXACT = 6
N_PAIRS = 7
DUAL = 8  # the kept dual objective (module docstring); NaN once unknown
N_ST = 9


@njit
def instance_pass(data, indices, indptr, y, qptr, order, w, st, loss, update, C, tol, max_iter,
                  mistakes_out, losses_out):  # fmt: skip
    """One pass over the queries ``order`` (query q = rows qptr[q]:qptr[q+1]); ``w`` is updated
    in place.  Returns False when a weight became non-finite."""
    n_features = w.shape[0]
    buf = np.zeros(n_features)
    for qq in range(order.shape[0]):
        q = order[qq]
        a = qptr[q]
        b = qptr[q + 1]
        k = b - a
        st[T_SEEN] += 1.0
        # scores
        s = np.zeros(k)
        for i in range(k):
            acc = 0.0
            for e in range(indptr[a + i], indptr[a + i + 1]):
                acc += data[e] * w[indices[e]]
            s[i] = acc
        P = 0
        for i in range(k):
            for j in range(k):
                if y[a + i] > y[a + j]:
                    P += 1
        if P == 0:
            mistakes_out[q] = 0
            losses_out[q] = 0.0
            continue
        pi = np.empty(P, dtype=np.int64)
        pj = np.empty(P, dtype=np.int64)
        c = np.empty(P)
        p = 0
        wrong = False
        for i in range(k):
            for j in range(k):
                if y[a + i] > y[a + j]:
                    pi[p] = i
                    pj[p] = j
                    c[p] = (y[a + i] - y[a + j]) - (s[i] - s[j])
                    if s[i] <= s[j]:
                        wrong = True
                    p += 1
        st[N_PAIRS] += P
        if loss == MAX:
            g = 0.0
            for p in range(P):
                if c[p] > g:
                    g = c[p]
        else:
            g = 0.0
            for p in range(P):
                if c[p] > 0.0:
                    g += c[p]
            g /= P
        mistakes_out[q] = 1 if wrong else 0
        losses_out[q] = g
        st[CUM_LOSS] += g
        if wrong:
            st[N_MISTAKES] += 1.0
        if g <= 0.0:
            continue
        alpha = np.zeros(P)
        if update == SUBGRADIENT:
            if loss == MAX:
                best = 0
                for p in range(P):
                    if c[p] > c[best]:
                        best = p
                alpha[best] = C
            else:
                for p in range(P):
                    if c[p] > 0.0:
                        alpha[p] = C / P
        else:
            K = np.zeros((k, k))
            for i in range(k):
                for e in range(indptr[a + i], indptr[a + i + 1]):
                    buf[indices[e]] += data[e]
                for j in range(i, k):
                    acc = 0.0
                    for e in range(indptr[a + j], indptr[a + j + 1]):
                        acc += data[e] * buf[indices[e]]
                    K[i, j] = acc
                    K[j, i] = acc
                for e in range(indptr[a + i], indptr[a + i + 1]):
                    buf[indices[e]] = 0.0
            work = np.zeros((6, max(P, k)))
            # a short first-order run, the exact step on its face; the long run if that fails
            it, gap, D = round_dual(loss, P, pi, pj, K, c, C, tol, min(max_iter, 400), alpha,
                                    work)  # fmt: skip
            if loss == MAX and not (gap <= tol * (1.0 + abs(D))):
                beta = np.zeros(P)
                gap2 = polish_max(P, pi, pj, K, c, C, alpha, D, gap, beta)
                if not (gap2 <= tol * (1.0 + abs(D))) and max_iter > 400:
                    it, gap, D = round_dual(loss, P, pi, pj, K, c, C, tol, max_iter, alpha,
                                            work)  # fmt: skip
                    gap2 = polish_max(P, pi, pj, K, c, C, alpha, D, gap, beta)
                if gap2 < gap:
                    gap = gap2
                    for p in range(P):
                        alpha[p] = beta[p]
                    if not _dual_feasible(loss, P, alpha, C):
                        # the same step from variables >= 0, kept when it certifies as well
                        alt = np.zeros(P)
                        nonnegative_max_step(P, pi, pj, K, c, C, alpha, alt)
                        q2 = _gmul(P, pi, pj, K, alt, work[4, :k], work[5, :k], work[1])
                        gap3 = 0.5 * q2 + _after_loss(loss, P, c, work[1], C) - D
                        if _dual_feasible(loss, P, alt, C) and gap3 <= max(
                            gap, tol * (1.0 + abs(D))
                        ):
                            gap = gap3
                            for p in range(P):
                                alpha[p] = alt[p]
            elif not (gap <= tol * (1.0 + abs(D))) and max_iter > 400:
                it, gap, D = round_dual(loss, P, pi, pj, K, c, C, tol, max_iter, alpha, work)
            if it > st[ITER_MAX]:
                st[ITER_MAX] = it
            if not (gap <= tol * (1.0 + abs(D))):
                st[N_INEXACT] += 1.0
        tau = np.zeros(k)
        moved = False
        lin = 0.0  # sum_p alpha_p c_p
        feasible = _dual_feasible(loss, P, alpha, C)
        for p in range(P):
            if alpha[p] != 0.0:
                moved = True
                tau[pi[p]] += alpha[p]
                tau[pj[p]] -= alpha[p]
                st[GAIN] += alpha[p] * (y[a + pi[p]] - y[a + pj[p]])
                lin += alpha[p] * c[p]
        if moved:
            st[N_UPDATES] += 1.0
            # ||Delta||^2 = ||sum_i tau_i x_i||^2, summed in buf (rows may share features)
            for i in range(k):
                if tau[i] != 0.0:
                    for e in range(indptr[a + i], indptr[a + i + 1]):
                        buf[indices[e]] += tau[i] * data[e]
            dsq = 0.0
            for i in range(k):
                if tau[i] != 0.0:
                    for e in range(indptr[a + i], indptr[a + i + 1]):
                        v = buf[indices[e]]
                        dsq += v * v
                        buf[indices[e]] = 0.0
            st[DUAL] = st[DUAL] + lin - 0.5 * dsq if feasible else math.nan
            for i in range(k):
                if tau[i] != 0.0:
                    for e in range(indptr[a + i], indptr[a + i + 1]):
                        w[indices[e]] += tau[i] * data[e]
    for j in range(n_features):
        if not finite(w[j]):
            return False
    return True
