"""The tuned kernel of :mod:`.dual_ascent`: a growing c_t (self-tuned, strongly convex, fixed c on
the entropy and p-norm links; see that module's docstring for the math).

With ``squared`` the round's loss is the squared hinge g_t(w) = s_t [gamma - <w, u_t>]_+^2,
whose conjugate gives the dual D_t = sum_i (gamma alpha_i - alpha_i^2 / (4 s_i))
- c_t f*(v / c_t), alpha_i >= 0 with no upper cap (s_i the example's weight); the step on
alpha_t is the root of gamma - alpha / (2 s) - <grad f*((v + alpha u) / c), u> (closed form on
the Euclidean link, a bisection on the bracket [0, 2 s g] otherwise: :func:`sq_step`).  The
round's step and the conjugates it reads are in :mod:`.dual_tuned_step`; this module walks the
rows, gathers each update and applies it."""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .dual_common import (
    C_T,
    CAP,
    CUM_LOSS,
    DUAL,
    FIXEDC,
    ID,
    LIPSCHITZ,
    LOSSTUNED,
    N_MISTAKES,
    N_UPDATES,
    QUAD,
    RC,
    SGN,
    STRONGLY,
    SUBGRADIENT,
    SUM_ALPHA,
    TAU,
    VSQ,
    X_T,
    YC,
    T,
    scores_and_rival,
)
from .dual_tuned_step import _fstar, entropy_frame, pnorm_of, sq_step, tuned_step
from .dual_window import store_push
from .fp import finite
from .links import ENTROPY, EUCLID, PNORM
from .sparse import row_offset, row_sqnorm


# ====================================================================== tuned kernel
@njit
def _emit(jj, kk, uu, n, j, x, yk, rk, sgn):
    """List feature j (value x) of u: sgn x in column 0 (one weight vector), or x in column yk
    and -x in column rk; returns the new count."""
    if rk < 0:
        jj[n] = j
        kk[n] = 0
        uu[n] = sgn * x
        return n + 1
    jj[n] = j
    kk[n] = yk
    uu[n] = x
    jj[n + 1] = j
    kk[n + 1] = rk
    uu[n + 1] = -x
    return n + 2


@njit(inline="always")
def _gather_span(vals, idx, off, start, stop, yk, rk, sgn, b, d, jj, kk, uu):
    """The entries of u (row jj, column kk, value uu) for the nonzeros ``vals[start:stop]``
    (feature ``idx[q - off]``) and the intercept feature (d, b); returns their number."""
    n = 0
    for q in range(start, stop + (1 if b != 0.0 else 0)):
        if q < stop:
            j = idx[q - off]
            x = np.float64(vals[q])
        else:
            j = d
            x = b
        n = _emit(jj, kk, uu, n, j, x, yk, rk, sgn)
    return n


@njit
def _gather(data, indices, indptr, i, yk, rk, sgn, b, d, jj, kk, uu):
    """The entries of u (row jj, column kk, value uu); returns their number."""
    start = indptr[i]
    off = row_offset(data, indices, start)
    return _gather_span(data, indices, off, start, indptr[i + 1], yk, rk, sgn, b, d, jj, kk, uu)


@njit
def _gather_stored(Sd, Sx, Sp, Sf, Si, m, b, d, jj, kk, uu):
    """The entries of u_m of stored example m (as :func:`_gather`)."""
    return _gather_span(Sd, Sx, 0, Sp[m], Sp[m + 1], Si[m, YC], Si[m, RC], Sf[m, SGN], b, d,
                        jj, kk, uu)  # fmt: skip


@njit
def _tuned_apply(V, st, jj, kk, uu, n, delta):
    """v += delta u, with the running sum of alpha and ||v||^2."""
    vu = 0.0
    uu2 = 0.0
    for e in range(n):
        vu += V[jj[e], kk[e]] * uu[e]
        uu2 += uu[e] * uu[e]
        V[jj[e], kk[e]] += delta * uu[e]
    st[VSQ] += 2.0 * delta * vu + delta * delta * uu2
    st[SUM_ALPHA] += delta


@njit
def tuned_pass(
    data, indices, indptr, y, weight, order, V, st, dual_all, Sd, Sx, Sp, Sf, Si, window, step,
    rule, link, gamma, U, sigma, p, b, pred_out, scores, jj, kk, uu, squared=False,
):  # fmt: skip
    """One pass of the growing-c dual ascent (module docstring, part 2).

    ``V`` (R, K): v = sum_i alpha_i u_i; ``dual_all[t]`` receives alpha of round t.  With
    ``window`` > 1 the last ``window`` examples are stored and, after the step on alpha_t, each
    earlier one gets the optimal single-variable step at the same c_t (row action).
    ``squared``: the squared hinge (module docstring) in place of the hinge.  Step LOSSTUNED
    reads ``U`` as beta1 and ``sigma`` as beta2.  Returns False when a value became
    non-finite."""
    R, K = V.shape
    d = R - 1 if b != 0.0 else R
    binary = K == 1
    logn2 = math.log(2.0 * R * K)
    for ii in range(order.shape[0]):
        i = order[ii]
        tid = int(st[T])
        st[T] += 1.0
        # ---- c_t
        start = indptr[i]
        stop = indptr[i + 1]
        if link == EUCLID:
            xn = math.sqrt(row_sqnorm(data, indptr, i, b))
        elif link == ENTROPY:
            xn = abs(b)
            for q in range(start, stop):
                if abs(data[q]) > xn:
                    xn = abs(data[q])
        else:  # f is strongly convex w.r.t. ||.||_q, q = p/(p-1); the dual norm is ||.||_p
            xn = abs(b) ** p
            for q in range(start, stop):
                xn += abs(data[q]) ** p
            xn = xn ** (1.0 / p)
        if xn > st[X_T]:
            st[X_T] = xn
        if step == STRONGLY:
            c = sigma * st[T]
        elif step == FIXEDC:
            c = U  # the caller passes c = 1/C here
        elif step == LIPSCHITZ:
            # Cor. 2 (sigma = L > 0, given) or Cor. 3 (sigma = 0: L_t = ||u_t||_*^2 / 2 from the
            # largest row so far, u_t = x_t, or x_t and -x_t in two columns for K classes)
            if sigma > 0.0:
                lt = sigma
            else:
                kap = 1.0
                if not binary and link == EUCLID:
                    kap = math.sqrt(2.0)
                elif not binary and link == PNORM:
                    kap = 2.0 ** (1.0 / p)
                lt = 0.5 * (kap * st[X_T]) ** 2
            c = math.sqrt(st[T] * lt / U)
        elif step == LOSSTUNED:
            # Theorem 2: c_t = beta2 sqrt(beta1 + sum_{i<t} g_i(w_i)), the online losses so far
            c = sigma * math.sqrt(U + st[CUM_LOSS])
        else:
            c = st[X_T] * math.sqrt((st[N_MISTAKES] + 1.0) / U)
        if c <= 0.0:
            c = 0.0
        # ---- scores of w_t = grad f*(V / c): exact aggregate of the untouched coordinates
        yi = y[i]
        for kk_ in range(K):
            scores[kk_] = 0.0
        n = _gather(data, indices, indptr, i, 0, -1, 1.0, b, d, jj, kk, uu)  # x itself
        if c > 0.0:
            # scores s_k = <w_k, x>: w = grad f*(V / c) needs the global aggregate
            if link == ENTROPY:
                m_all, z = entropy_frame(V, c)
                for e in range(n):
                    for k2 in range(K):
                        v = V[jj[e], k2] / c
                        scores[k2] += uu[e] * (math.exp(v - m_all) - math.exp(-v - m_all)) / z
            elif link == PNORM:
                nrm = pnorm_of(V, p)
                if nrm > 0.0:
                    den = (p - 1.0) * nrm ** (p - 2.0) * c
                    for e in range(n):
                        for k2 in range(K):
                            v = V[jj[e], k2]
                            av = abs(v) ** (p - 1.0)
                            scores[k2] += uu[e] * (av if v >= 0.0 else -av) / den
            else:
                for e in range(n):
                    for k2 in range(K):
                        scores[k2] += uu[e] * V[jj[e], k2] / c
        pred, r, sgn, mg, loss = scores_and_rival(scores, yi, binary, gamma)
        pred_out[i] = pred
        mistake = pred != yi
        alpha = 0.0
        cap = weight[i]
        if cap > 0.0:
            n = _gather(data, indices, indptr, i, yi, r, sgn, b, d, jj, kk, uu)
            moves = False
            for e in range(n):
                if uu[e] != 0.0:
                    moves = True
            if squared:
                st[CUM_LOSS] += cap * loss * loss
                if not moves or c <= 0.0:
                    alpha = 2.0 * cap * max(gamma, 0.0)  # u = 0: max gamma a - a^2 / (4 s)
                elif rule == SUBGRADIENT or loss <= 0.0:
                    alpha = 2.0 * cap * loss  # -g'_t(w_t) = 2 s [gamma - z]_+ u
                else:
                    alpha = sq_step(link, V, jj, kk, uu, n, c, p, gamma, 0.0, cap, 0.0)
                st[QUAD] += alpha * alpha / (4.0 * cap)
            elif not moves or c <= 0.0:
                alpha = cap if gamma > 0.0 else 0.0  # u = 0: D = gamma alpha + const
            elif rule == SUBGRADIENT:
                alpha = cap if loss > 0.0 else 0.0
            elif loss <= 0.0:
                alpha = 0.0
            else:
                alpha = tuned_step(link, V, jj, kk, uu, n, c, p, gamma, 0.0, cap)
            if alpha != 0.0:
                _tuned_apply(V, st, jj, kk, uu, n, alpha)
                st[N_UPDATES] += 1.0
            if window > 1:
                # row-action (Sec. 5.2.2): single-variable steps on the previous examples
                nst = store_push(data, indices, indptr, i, Sd, Sx, Sp, Sf, Si, st, window, sgn,
                                 0.0, cap, 0.0, yi, r, tid)  # fmt: skip
                Sf[nst - 1, TAU] = alpha
                if c > 0.0:
                    for m in range(nst - 2, -1, -1):
                        n = _gather_stored(Sd, Sx, Sp, Sf, Si, m, b, d, jj, kk, uu)
                        a_m = Sf[m, TAU]
                        if squared:
                            s_m = Sf[m, CAP]
                            delta = sq_step(link, V, jj, kk, uu, n, c, p, gamma, a_m, s_m, -a_m)
                            st[QUAD] += delta * (2.0 * a_m + delta) / (4.0 * s_m)
                        else:
                            delta = tuned_step(link, V, jj, kk, uu, n, c, p, gamma, -a_m,
                                               Sf[m, CAP] - a_m)  # fmt: skip
                        if delta != 0.0:
                            _tuned_apply(V, st, jj, kk, uu, n, delta)
                            Sf[m, TAU] = a_m + delta
                            dual_all[Si[m, ID]] = a_m + delta
        dual_all[tid] = alpha
        if mistake:
            st[N_MISTAKES] += 1.0
        st[C_T] = c
        # D_t at the new alpha
        if c <= 0.0:
            st[DUAL] = gamma * st[SUM_ALPHA] - st[QUAD]
        elif link == EUCLID:
            st[DUAL] = gamma * st[SUM_ALPHA] - st[QUAD] - 0.5 * st[VSQ] / c
        else:
            st[DUAL] = gamma * st[SUM_ALPHA] - st[QUAD] - _fstar(link, V, c, p, logn2)
    for j in range(R):
        for kk_ in range(K):
            if not finite(V[j, kk_]):
                return False
    return True
