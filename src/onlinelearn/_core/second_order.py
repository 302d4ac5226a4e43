"""Compiled passes of the second-order learners: weighted min-max, AROW, SCW.

Each kernel is one online pass over a batch (CSR rows; a dense batch is a CSR batch whose
``indices`` = arange(d) is shared by all rows).  When the model fits an intercept, row ``d`` of
every state array is the bias, seen as an extra feature of value ``bias``.

Paper symbols:

* weighted min-max (``minmax_pass_full`` / ``minmax_pass_diag``): ``P`` = A^{-1} (R x R, or
  its diagonal), ``A`` = b I + sum_s a_s x_s x_s', ``B`` = sum_s a_s x_s y_s' (R x K),
  ``W`` = A^{-1} B (the ridge weights, kept so that a prediction costs O(nnz K)), ``m`` =
  x' A^{-1} x, ``a`` = 1 / (1 - m), ``sigma`` = a^2 x' A_t^{-1} x / 2 = (a - 1) / 2,
  ``delta`` = (f_y - f_r) / sqrt 2 (= f . y_t for the label vector y_t = (e_y - e_r) / sqrt 2),
  and the label vector of the update y_t = (e_y - e_r) / sqrt 2 ('difference' encoding) or
  e_y (``onehot``, the 'one-hot' encoding; see ``second_order.minmax``).
* AROW / SCW (``cw_pass_full`` / ``cw_pass_diag``): ``W`` the means, ``S`` = Sigma, ``v`` =
  x' Sigma x (times 2 for the multiclass difference feature), ``m`` the margin, ``alpha``,
  ``beta`` the step sizes of the published updates, ``phi`` = Phi^{-1}(eta), ``r``, ``C``.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .margins import argmax_rival
from .sparse import copy_row

# slots of the counter vector ``st`` (float64, so that one array holds every scalar)
N_SEEN = 0  #: rounds processed
N_UPDATES = 1  #: rounds on which the state changed
N_MISTAKES = 2  #: rounds whose prediction (made before the update) was wrong
N_QUERIES = 3  #: rounds whose label was asked for (every round without selective sampling)
N_MARGIN_UPDATES = 4  #: updates on correct, low-confidence rounds (adaptive margin)
SINCE_REFRESH = 5  #: Sherman-Morrison updates since A^{-1} was last recomputed from A
N_ST = 6

# codes of the per-round update flag written to ``upd``
NO_UPDATE = 0
MISTAKE_UPDATE = 1  #: Delta <= 0 (set M of the note)
MARGIN_UPDATE = 2  #: 0 < Delta <= sigma (set D of the note, adaptive margin only)

# confidence-weighted variants
AROW = 0
SCW1 = 1
SCW2 = 2

OK = 0
NOT_PD = 1  #: x' A^{-1} x >= 1: a_t undefined (b too small)

_SQRT_HALF = math.sqrt(0.5)


@njit
def gather_row(data, indices, indptr, i, bias, d, jj, xx):
    """Copy row i into (jj, xx) (column ids, float64 values), the bias feature appended at
    column d when ``bias`` != 0; returns the number of entries."""
    return copy_row(data, indices, indptr, i, bias, d, jj, xx, 0)


@njit(inline="always")
def _combine_rows(W, jj, xx, n, f):
    """f[k] = sum_q x_q W[j_q, k] for every column k of W (rows of W read contiguously)."""
    K = W.shape[1]
    for k in range(K):
        f[k] = 0.0
    for q in range(n):
        j = jj[q]
        xq = xx[q]
        for k in range(K):
            f[k] += xq * W[j, k]


@njit
def scores(W, jj, xx, n, f):
    """f[k] = <W[:, k], x> for the gathered row."""
    _combine_rows(W, jj, xx, n, f)


@njit
def sym_matvec(M, jj, xx, n, out):
    """out = M x for a symmetric R x R matrix M (rows of M read contiguously: out = sum_q
    x_q M[j_q, :]); returns x' M x."""
    _combine_rows(M, jj, xx, n, out)
    quad = 0.0
    for q in range(n):
        quad += xx[q] * out[jj[q]]
    return quad


@njit
def diag_quad(P, jj, xx, n):
    """x' diag(P) x = sum_q x_q^2 P[j_q] for the gathered row."""
    m = 0.0
    for q in range(n):
        m += xx[q] * xx[q] * P[jj[q]]
    return m


@njit
def minmax_decide(f, K, y, m, adaptive, query, c, u):
    """The decisions of one min-max round from the scores f = W' x and m = x' A^{-1} x.

    Returns (pred, rival, delta, a, flag, asked): flag is MISTAKE_UPDATE when Delta <= 0,
    MARGIN_UPDATE when 0 < Delta <= sigma and ``adaptive``, else NO_UPDATE; with ``query``
    the label is asked with probability c / (c + |Delta|) (``u`` a uniform draw) and a round
    whose label was not asked never updates."""
    pred, r = argmax_rival(f, K, y)
    delta = (f[y] - f[r]) * _SQRT_HALF
    a = 1.0 / (1.0 - m)
    sigma = 0.5 * (a - 1.0)
    flag = NO_UPDATE
    if delta <= 0.0:
        flag = MISTAKE_UPDATE
    elif adaptive and delta - sigma <= 0.0:
        flag = MARGIN_UPDATE
    asked = True
    if query:
        asked = u < c / (c + abs(delta))
        if not asked:
            flag = NO_UPDATE
    return pred, r, delta, a, flag, asked


@njit
def _count(st, pred, y, flag, asked):
    st[N_SEEN] += 1.0
    if pred != y:
        st[N_MISTAKES] += 1.0
    if asked:
        st[N_QUERIES] += 1.0
    if flag != NO_UPDATE:
        st[N_UPDATES] += 1.0
        if flag == MARGIN_UPDATE:
            st[N_MARGIN_UPDATES] += 1.0


@njit
def minmax_round(
    W, jj, xx, n, f, K, y, m, adaptive, query, c, u, st, i,
    pred_out, upd_out, a_out, rival_out, delta_out,
):  # fmt: skip
    """Scores, decisions, counters and per-round outputs of round i (before any update);
    returns (flag, rival, a).  With fewer than two classes nothing is learned."""
    if K < 2:
        pred, r, delta, a, flag, asked = 0, -1, 0.0, 1.0, NO_UPDATE, not query
    else:
        scores(W, jj, xx, n, f)
        pred, r, delta, a, flag, asked = minmax_decide(f, K, y, m, adaptive, query, c, u)
    pred_out[i] = pred
    upd_out[i] = flag
    a_out[i] = a
    rival_out[i] = r
    delta_out[i] = delta
    _count(st, pred, y, flag, asked)
    return flag, r, a


@njit
def minmax_pass_full(
    data, indices, indptr, y, u, bias, d, P, A, B, W, adaptive, query, c, refresh, st,
    pred_out, upd_out, a_out, rival_out, delta_out, jj, xx, v, f, onehot,
):  # fmt: skip
    """One pass of the weighted min-max learner with the full matrix A^{-1}.

    Per round, with v = A^{-1} x and m = x' v (before the update)::

        f = W' x = B' A^{-1} x,   a = 1 / (1 - m)
        A   <- A + a x x'
        A^{-1} <- A^{-1} - v v'            (Sherman-Morrison: a / (1 + a m) = 1)
        B   <- B + a x y'
        W   <- W + v (y - f)'              (= new A^{-1} new B, as a (1 - m) = 1)

    with the label vector y = (e_y - e_r) / sqrt 2, or e_y when ``onehot``.

    Every ``refresh`` updates A^{-1} is recomputed from A (Cholesky) and W from B,
    which bounds the drift of the rank-one updates.  Returns OK or NOT_PD (x' A^{-1} x >= 1:
    the caller restores its snapshot)."""
    return _minmax_pass(
        data, indices, indptr, y, u, bias, d, P, A, B, W, adaptive, query, c, refresh, st,
        (pred_out, upd_out, a_out, rival_out, delta_out), jj, xx, v, f, onehot,
    )  # fmt: skip


@njit(inline="always")
def _add_label(M, j, yi, r, val, onehot):
    """M[j] += val y' for the label vector y of the round: e_y when ``onehot``, else
    (e_y - e_r) / sqrt 2 (the three updates of :func:`_minmax_pass`)."""
    if onehot:
        M[j, yi] += val
    else:
        M[j, yi] += val * _SQRT_HALF
        M[j, r] -= val * _SQRT_HALF


@njit
def _minmax_pass(
    data, indices, indptr, y, u, bias, d, P, A, B, W, adaptive, query, c, refresh, st, outs,
    jj, xx, v, f, onehot,
):  # fmt: skip
    """The pass of :func:`minmax_pass_full` (P = A^{-1} a matrix) or of
    :func:`minmax_pass_diag` (P its diagonal; ``refresh`` and ``v`` unused)."""
    R = P.shape[0]
    K = W.shape[1]
    for i in range(indptr.shape[0] - 1):
        n = gather_row(data, indices, indptr, i, bias, d, jj, xx)
        yi = y[i]
        m = sym_matvec(P, jj, xx, n, v) if P.ndim == 2 else diag_quad(P, jj, xx, n)
        if K >= 2 and not m < 1.0:
            return NOT_PD
        flag, r, a = minmax_round(W, jj, xx, n, f, K, yi, m, adaptive, query, c, u[i], st, i,
                                  *outs)  # fmt: skip
        if flag == NO_UPDATE:
            continue
        if P.ndim == 1:
            for q in range(n):
                j = jj[q]
                axq = a * xx[q]
                A[j] += axq * xx[q]
                P[j] = 1.0 / A[j]
                _add_label(B, j, yi, r, axq, onehot)
                for k in range(K):
                    W[j, k] = P[j] * B[j, k]
            continue
        dense = n == R  # then jj = 0..R-1 in order (sorted CSR indices, bias last)
        for p in range(n):
            jp = jj[p]
            axp = a * xx[p]
            if dense:
                for q in range(n):
                    A[jp, q] += axp * xx[q]
            else:
                for q in range(n):
                    A[jp, jj[q]] += axp * xx[q]
            _add_label(B, jp, yi, r, axp, onehot)
        for s in range(R):
            vs = v[s]
            for t in range(R):
                P[s, t] -= vs * v[t]
            for k in range(K):
                W[s, k] -= vs * f[k]
            _add_label(W, s, yi, r, vs, onehot)
        st[SINCE_REFRESH] += 1.0
        if refresh > 0 and st[SINCE_REFRESH] >= refresh:
            if refresh_inverse(A, B, P, W):
                st[SINCE_REFRESH] = 0.0
    return OK


@njit
def refresh_inverse(A, B, P, W):
    """P <- A^{-1}, W <- P B: the exact state, from the sums A and B.

    A = G G' (Cholesky), G^{-1} by forward substitution, A^{-1} = G^{-T} G^{-1}: about R^3
    flops in plain loops, on purpose without BLAS (whose threads, on a busy machine, made a
    100 x 100 inverse 50 times slower than the loops).  Returns False (and changes nothing)
    if A is not numerically positive definite."""
    R = A.shape[0]
    G = np.zeros((R, R))
    for j in range(R):
        s = A[j, j]
        for k in range(j):
            s -= G[j, k] * G[j, k]
        if not s > 0.0:
            return False
        gjj = math.sqrt(s)
        G[j, j] = gjj
        for i in range(j + 1, R):
            t = A[i, j]
            for k in range(j):
                t -= G[i, k] * G[j, k]
            G[i, j] = t / gjj
    H = np.zeros((R, R))  # H = G^{-1}, lower triangular
    for j in range(R):
        H[j, j] = 1.0 / G[j, j]
        for i in range(j + 1, R):
            t = 0.0
            for k in range(j, i):
                t -= G[i, k] * H[k, j]
            H[i, j] = t / G[i, i]
    for s_ in range(R):
        for t_ in range(s_ + 1):
            acc = 0.0
            for k in range(s_, R):
                acc += H[k, s_] * H[k, t_]
            P[s_, t_] = acc
            P[t_, s_] = acc
    K = B.shape[1]
    for s_ in range(R):
        for k in range(K):
            W[s_, k] = 0.0
        for t_ in range(R):
            pst = P[s_, t_]
            for k in range(K):
                W[s_, k] += pst * B[t_, k]
    return True


@njit
def minmax_pass_diag(
    data, indices, indptr, y, u, bias, d, P, A, B, W, adaptive, query, c, st,
    pred_out, upd_out, a_out, rival_out, delta_out, jj, xx, f, onehot,
):  # fmt: skip
    """One pass of the weighted min-max learner with a diagonal A (``covariance='diagonal'``).

    A = diag(b + sum_s a_s x_s^2) and P = 1 / A elementwise; m = sum_j x_j^2 P_j,
    a = 1 / (1 - m), A_j += a x_j^2, B_j += a x_j y' (y as in the full pass), W_j = P_j B_j on
    the touched rows only:
    O(nnz K) per round, exact (no drift)."""
    return _minmax_pass(
        data, indices, indptr, y, u, bias, d, P, A, B, W, adaptive, query, c, 0, st,
        (pred_out, upd_out, a_out, rival_out, delta_out), jj, xx, f, f, onehot,
    )  # fmt: skip


@njit
def cw_step(variant, m, v, r_param, C, phi):
    """(alpha, beta) of one AROW / SCW-I / SCW-II round for margin m and variance v > 0;
    (0, 0) when the round suffers no loss.

    AROW (Crammer, Kulesza & Dredze 2009, Fig. 1): loss 1 - m, beta = 1 / (v + r),
    alpha = loss beta.  SCW (Wang, Zhao & Hoi 2012, eqs. for SCW-I and SCW-II): loss
    phi sqrt(v) - m, psi = 1 + phi^2/2, zeta = 1 + phi^2,
    SCW-I  alpha = min(C, max(0, (-m psi + sqrt(m^2 phi^4 / 4 + v phi^2 zeta)) / (v zeta))),
    SCW-II alpha = max(0, (-(2 m n + phi^2 m v) + gamma) / (2 (n^2 + n v phi^2))),
           n = v + 1 / (2C), gamma = phi sqrt(phi^2 m^2 v^2 + 4 n v (n + v phi^2)),
    u = (-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v))^2 / 4, beta = alpha phi / (sqrt u +
    v alpha phi)."""
    if variant == AROW:
        loss = 1.0 - m
        if loss <= 0.0:
            return 0.0, 0.0
        beta = 1.0 / (v + r_param)
        return loss * beta, beta
    loss = phi * math.sqrt(v) - m
    if loss <= 0.0:
        return 0.0, 0.0
    phi2 = phi * phi
    if variant == SCW1:
        psi = 1.0 + 0.5 * phi2
        zeta = 1.0 + phi2
        alpha = (-m * psi + math.sqrt(m * m * phi2 * phi2 * 0.25 + v * phi2 * zeta)) / (v * zeta)
        alpha = min(C, max(0.0, alpha))
    else:
        nn = v + 1.0 / (2.0 * C)
        gamma = phi * math.sqrt(phi2 * m * m * v * v + 4.0 * nn * v * (nn + v * phi2))
        alpha = (-(2.0 * m * nn + phi2 * m * v) + gamma) / (2.0 * (nn * nn + nn * v * phi2))
        alpha = max(0.0, alpha)
    if alpha <= 0.0:
        return 0.0, 0.0
    avp = alpha * v * phi
    su = 0.5 * (-avp + math.sqrt(avp * avp + 4.0 * v))
    beta = alpha * phi / (su + avp)
    return alpha, beta


@njit
def _cw_margin(f, K, y):
    """(pred, rival, margin m, kappa): one weight vector (K == 1) has labels {0, 1} read as
    -1 / +1 and kappa = 1; K columns have the max-score rival and kappa = 2."""
    if K == 1:
        pred = 1 if f[0] > 0.0 else 0
        sgn = 1.0 if y == 1 else -1.0
        return pred, -1, sgn * f[0], 1.0
    pred, r = argmax_rival(f, K, y)
    return pred, r, f[y] - f[r], 2.0


@njit
def cw_predict(W, jj, xx, n, f, K, y, st, pred_out, i):
    """Scores, prediction and counters of round i; returns (rival, margin, kappa)."""
    scores(W, jj, xx, n, f)
    pred, r, m, kappa = _cw_margin(f, K, y)
    pred_out[i] = pred
    st[N_SEEN] += 1.0
    st[N_QUERIES] += 1.0
    if pred != y:
        st[N_MISTAKES] += 1.0
    return r, m, kappa


@njit
def cw_pass_full(
    data, indices, indptr, y, bias, d, W, S, variant, r_param, C, phi, st,
    pred_out, jj, xx, Sx, f,
):  # fmt: skip
    """One pass of AROW / SCW with a full covariance Sigma (R x R).

    Per round: Sx = Sigma x, v = kappa x' Sigma x, (alpha, beta) = cw_step(m, v);
    w += alpha y Sigma x (binary) or w_y += alpha Sigma x, w_r -= alpha Sigma x (K classes);
    Sigma <- Sigma - beta Sigma x x' Sigma.

    The update is applied to the rows in the support J of Sigma x (its nonzero entries), and
    to their entries in J unless J holds more than an eighth of the rows (then to the whole
    row: one contiguous sweep): elsewhere it adds or subtracts an exact zero, so the state is
    the same and a sparse row of a wide model costs O(nnz R + |J|^2 + |J| K), not O(R^2)
    (:func:`support`).  On a rejected round (a non-finite Sigma x or step) J holds a
    non-finite entry whose own terms are non-finite too, so the state's check still fails."""
    return _cw_pass(data, indices, indptr, y, bias, d, W, S, variant, r_param, C, phi, st,
                    pred_out, jj, xx, Sx, f)  # fmt: skip


@njit
def _cw_pass(data, indices, indptr, y, bias, d, W, S, variant, r_param, C, phi, st, pred_out,
             jj, xx, Sx, f):  # fmt: skip
    """The pass of :func:`cw_pass_full` (Sigma a matrix) or of :func:`cw_pass_diag` (Sigma its
    diagonal; ``Sx`` unused)."""
    R = S.shape[0]
    K = W.shape[1]
    J = np.empty(R if S.ndim == 2 else 0, dtype=np.int64)
    for i in range(indptr.shape[0] - 1):
        n = gather_row(data, indices, indptr, i, bias, d, jj, xx)
        yi = y[i]
        r, m, kappa = cw_predict(W, jj, xx, n, f, K, yi, st, pred_out, i)
        v = sym_matvec(S, jj, xx, n, Sx) if S.ndim == 2 else diag_quad(S, jj, xx, n)
        v *= kappa
        if not v > 0.0:
            continue
        alpha, beta = cw_step(variant, m, v, r_param, C, phi)
        if alpha == 0.0 and beta == 0.0:
            continue
        st[N_UPDATES] += 1.0
        if S.ndim == 1:
            for q in range(n):
                j = jj[q]
                sx = S[j] * xx[q]
                if K == 1:
                    W[j, 0] += (alpha if yi == 1 else -alpha) * sx
                else:
                    W[j, yi] += alpha * sx
                    W[j, r] -= alpha * sx
                S[j] -= beta * sx * sx
            continue
        nJ = support(Sx, J)
        for a in range(nJ):
            s = J[a]
            if K == 1:
                W[s, 0] += (alpha if yi == 1 else -alpha) * Sx[s]
            else:
                W[s, yi] += alpha * Sx[s]
                W[s, r] -= alpha * Sx[s]
            bs = beta * Sx[s]
            if 8 * nJ >= R:  # a contiguous sweep of the row is faster than the scattered one
                for t in range(R):
                    S[s, t] -= bs * Sx[t]
            else:
                for b in range(nJ):
                    t = J[b]
                    S[s, t] -= bs * Sx[t]
    return OK


@njit
def support(v, J):
    """Write the positions of the nonzero entries of v into J (in order); returns their
    number.  A NaN is nonzero."""
    n = 0
    for s in range(v.shape[0]):
        if v[s] != 0.0:
            J[n] = s
            n += 1
    return n


@njit
def cw_pass_diag(
    data, indices, indptr, y, bias, d, W, S, variant, r_param, C, phi, st, pred_out, jj, xx, f,
):  # fmt: skip
    """One pass of AROW / SCW with a diagonal covariance (vector S): the same round as
    :func:`cw_pass_full` with Sigma x = S * x and the diagonal of the covariance update,
    S_j <- S_j - beta (S_j x_j)^2 (stays positive: beta S_j x_j^2 < 1); O(nnz K) per round."""
    return _cw_pass(data, indices, indptr, y, bias, d, W, S, variant, r_param, C, phi, st,
                    pred_out, jj, xx, f, f)  # fmt: skip
