"""Pegasos: primal estimated sub-gradient steps on the strongly convex SVM objective.

Shalev-Shwartz, Singer, Srebro (ICML 2007), Fig. 1; the thesis's Fig. 4.1 with
f(w) = 1/2 ||w||^2 and sigma = lambda (steps 1 / (sigma t), logarithmic regret).  Objective::

    F(w) = lambda/2 ||w||^2 + 1/N sum_i c_i loss_i(w)

    binary:     loss_i = [1 - y_i <w, x_i>]_+
    multiclass: loss_i = [1 - <w_{y_i}, x_i> + max_{r != y_i} <w_r, x_i>]_+
                (the multiclass hinge with the max-loss rival: the Crammer-Singer loss)

Step t on a mini-batch A_t of k rows, with eta_t = 1 / (lambda (t + t0)) (t0 = 0: Pegasos)::

    w <- (1 - eta_t lambda) w + eta_t/k sum_{i in A_t, loss_i(w_t) > 0} c_i g_i
         g_i = y_i x_i (binary);  +x_i on column y_i and -x_i on column r_i (multiclass)
    w <- min(1, (1/sqrt(lambda)) / ||w||) w          (optional projection)

The weights are kept as w = s V (a scalar times a matrix) so that the shrinking factor costs
O(1) and a step costs O(nnz(A_t)); ||V||^2 is tracked for the projection.  The average of the
iterates is kept as S = P + beta V (S += w costs O(1) as beta += s; a sparse change of V is
compensated in P), as in averaged SGD.

State ``st``: [t, s, ||V||^2, beta, n_avg, avg_start].
"""

from __future__ import annotations

import numpy as np

from ..config import njit
from ..dense import sum_squares

ST_T, ST_S, ST_VSQ, ST_BETA, ST_NAVG, ST_AVG_START = range(6)
N_ST = 6


@njit
def _fold_scale(V, P, st):
    """V <- s V, s <- 1 (same w); the running sum S = P + beta V is moved into P first."""
    s = st[ST_S]
    beta = st[ST_BETA]
    R, K = V.shape
    vsq = 0.0
    for j in range(R):
        for k in range(K):
            if beta != 0.0:
                P[j, k] += beta * V[j, k]
            V[j, k] *= s
            vsq += V[j, k] * V[j, k]
    st[ST_VSQ] = vsq
    st[ST_BETA] = 0.0
    st[ST_S] = 1.0


@njit
def pegasos_pass(
    data, indices, indptr, ycodes, weight, order, V, P, st, lam, t0, b, batch_size, project,
    average, scores, rival, coef,
):  # fmt: skip
    """Steps over the rows ``order`` in mini-batches of ``batch_size`` (the last may be
    shorter).  ``V``, ``P`` (R, Kc): Kc = 1 for a binary model (classes 0 / 1 -> y = -1 / +1),
    Kc = K for the multiclass one.  ``scores`` (batch_size, Kc), ``rival`` (batch_size,),
    ``coef`` (batch_size,) are scratch.  Returns the number of steps whose batch had a loss."""
    R, Kc = V.shape
    d = R - 1 if b != 0.0 else R
    binary = Kc == 1
    dense = indices.shape[0] != data.shape[0]
    radius2 = 1.0 / lam
    n = order.shape[0]
    n_upd = 0
    q0 = 0
    while q0 < n:
        q1 = min(q0 + batch_size, n)
        kb = q1 - q0
        st[ST_T] += 1.0
        tt = st[ST_T] + t0
        eta = 1.0 / (lam * tt)
        s = st[ST_S]
        # scores <v_k, x_i> of the batch at w_t (before any change)
        any_loss = False
        for q in range(kb):
            i = order[q0 + q]
            start = indptr[i]
            off = start if dense else 0
            for k in range(Kc):
                scores[q, k] = 0.0
            for p in range(start, indptr[i + 1]):
                j = indices[p - off]
                v = data[p]
                for k in range(Kc):
                    scores[q, k] += v * V[j, k]
            if b != 0.0:
                for k in range(Kc):
                    scores[q, k] += b * V[d, k]
            coef[q] = 0.0
            c = weight[i]
            if c <= 0.0:
                continue
            yi = ycodes[i]
            if binary:
                y = 1.0 if yi == 1 else -1.0
                if 1.0 - y * s * scores[q, 0] > 0.0:
                    coef[q] = c * y
                    any_loss = True
            else:
                r = -1
                best = -np.inf
                for k in range(Kc):
                    if k != yi and scores[q, k] > best:
                        best = scores[q, k]
                        r = k
                if r >= 0 and 1.0 - s * (scores[q, yi] - best) > 0.0:
                    coef[q] = c
                    rival[q] = r
                    any_loss = True
        # shrink: w <- (1 - 1/tt) w
        shrink = 1.0 - 1.0 / tt
        if shrink <= 0.0:
            # first step of Pegasos (t0 = 0): w becomes 0; S keeps its value
            if average:
                for j in range(R):
                    for k in range(Kc):
                        P[j, k] += st[ST_BETA] * V[j, k]
                st[ST_BETA] = 0.0
            for j in range(R):
                for k in range(Kc):
                    V[j, k] = 0.0
            st[ST_S] = 1.0
            st[ST_VSQ] = 0.0
        else:
            st[ST_S] = s * shrink
        s = st[ST_S]
        if any_loss:
            n_upd += 1
            beta = st[ST_BETA]
            for q in range(kb):
                if coef[q] == 0.0:
                    continue
                i = order[q0 + q]
                a = eta * coef[q] / (kb * s)  # change of V
                start = indptr[i]
                off = start if dense else 0
                # ||V + a G||^2 needs <V, G> at the current V (earlier rows of the batch
                # may have changed it) and ||G||^2
                vx0 = 0.0
                vx1 = 0.0
                xsq = b * b
                yi = ycodes[i]
                r = 0 if binary else rival[q]
                c0 = 0 if binary else yi
                for p in range(start, indptr[i + 1]):
                    j = indices[p - off]
                    v = data[p]
                    xsq += v * v
                    vx0 += v * V[j, c0]
                    if not binary:
                        vx1 += v * V[j, r]
                if b != 0.0:
                    vx0 += b * V[d, c0]
                    if not binary:
                        vx1 += b * V[d, r]
                if binary:
                    st[ST_VSQ] += 2.0 * a * vx0 + a * a * xsq
                else:
                    st[ST_VSQ] += 2.0 * a * (vx0 - vx1) + 2.0 * a * a * xsq
                for p in range(start, indptr[i + 1]):
                    j = indices[p - off]
                    v = data[p]
                    V[j, c0] += a * v
                    if not binary:
                        V[j, r] -= a * v
                    if average and beta != 0.0:
                        P[j, c0] -= beta * a * v
                        if not binary:
                            P[j, r] += beta * a * v
                if b != 0.0:
                    V[d, c0] += a * b
                    if not binary:
                        V[d, r] -= a * b
                    if average and beta != 0.0:
                        P[d, c0] -= beta * a * b
                        if not binary:
                            P[d, r] += beta * a * b
            if st[ST_VSQ] < 0.0:
                st[ST_VSQ] = 0.0
        if project:
            wsq = s * s * st[ST_VSQ]
            if wsq > radius2:
                st[ST_S] = s * np.sqrt(radius2 / wsq)
        if average and st[ST_T] >= st[ST_AVG_START]:
            st[ST_BETA] += st[ST_S]
            st[ST_NAVG] += 1.0
        if st[ST_S] < 1e-9:
            _fold_scale(V, P, st)
        q0 = q1
    return n_upd


@njit
def exact_vsq(V, st):
    """Recompute ||V||^2 exactly (the running value drifts by rounding)."""
    st[ST_VSQ] = sum_squares(V)
