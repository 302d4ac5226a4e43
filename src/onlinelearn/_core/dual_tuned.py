"""The tuned kernel of :mod:`.dual_ascent`: a growing c_t (self-tuned, strongly convex, fixed c on
the entropy and p-norm links; see that module's docstring for the math).

With ``squared`` the round's loss is the squared hinge g_t(w) = s_t [gamma - <w, u_t>]_+^2,
whose conjugate gives the dual D_t = sum_i (gamma alpha_i - alpha_i^2 / (4 s_i))
- c_t f*(v / c_t), alpha_i >= 0 with no upper cap (s_i the example's weight); the step on
alpha_t is the root of gamma - alpha / (2 s) - <grad f*((v + alpha u) / c), u> (closed form on
the Euclidean link, a bisection on the bracket [0, 2 s g] otherwise: :func:`sq_step`)."""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .dense import sum_squares
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
from .dual_window import store_push
from .fp import finite
from .links import ENTROPY, EUCLID, PNORM
from .sparse import row_offset, row_sqnorm


# ====================================================================== tuned kernel
@njit
def _max_abs(V, c):
    """max |V_jk| / c over the entries (0 for an empty V); c = 1 divides nothing."""
    R, K = V.shape
    m = 0.0
    for j in range(R):
        for k in range(K):
            a = abs(V[j, k]) / c
            if a > m:
                m = a
    return m


@njit
def entropy_frame(V, c):
    """(m, Z): m = max |V| / c and Z = sum over [V, -V] / c of exp(. - m)."""
    R, K = V.shape
    m = _max_abs(V, c)
    z = 0.0
    for j in range(R):
        for k in range(K):
            v = V[j, k] / c
            z += math.exp(v - m) + math.exp(-v - m)
    return m, z


@njit
def pnorm_of(V, p):
    """||V||_p over all entries, scaled by the largest magnitude first."""
    R, K = V.shape
    sig = _max_abs(V, 1.0)
    if sig == 0.0:
        return 0.0
    s = 0.0
    for j in range(R):
        for k in range(K):
            s += (abs(V[j, k]) / sig) ** p
    return sig * s ** (1.0 / p)


@njit
def _fstar(link, V, c, p, logn2):
    """c f*(V / c) for the whole state (the link's conjugate; module docstring)."""
    if link == EUCLID:
        return 0.5 * sum_squares(V) / c
    if link == ENTROPY:
        m, z = entropy_frame(V, c)
        return c * (math.log(z) + m - logn2)
    nrm = pnorm_of(V, p)
    return nrm * nrm / (2.0 * (p - 1.0) * c)


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
def _margin_at(link, V, jj, kk, uu, n, a, c, p, rest, m_rest):
    """<grad f*((V + a u) / c), u> given the aggregate of the untouched coordinates.

    ``rest``: entropy: sum over untouched of exp(v/c - m_rest) + exp(-v/c - m_rest);
    p-norm: sum over untouched of |v|^p."""
    if link == EUCLID:
        s = 0.0
        for e in range(n):
            s += uu[e] * (V[jj[e], kk[e]] + a * uu[e])
        return s / c
    if link == ENTROPY:
        m = m_rest
        for e in range(n):
            v = abs(V[jj[e], kk[e]] + a * uu[e]) / c
            if v > m:
                m = v
        z = rest * math.exp(m_rest - m) if rest > 0.0 else 0.0
        num = 0.0
        for e in range(n):
            v = (V[jj[e], kk[e]] + a * uu[e]) / c
            ep = math.exp(v - m)
            em = math.exp(-v - m)
            z += ep + em
            num += uu[e] * (ep - em)
        return num / z
    # PNORM: grad f*(th)_j = sign |th_j|^(p-1) / ((p-1) ||th||_p^(p-2)), th = (V + a u) / c
    sp = rest
    for e in range(n):
        sp += abs(V[jj[e], kk[e]] + a * uu[e]) ** p
    if sp <= 0.0:
        return 0.0
    nrm = sp ** (1.0 / p)
    num = 0.0
    for e in range(n):
        v = V[jj[e], kk[e]] + a * uu[e]
        av = abs(v) ** (p - 1.0)
        num += uu[e] * (av if v >= 0.0 else -av)
    return num / ((p - 1.0) * nrm ** (p - 2.0) * c)


@njit
def entropy_closed_form(Ap, Am, A0, gamma, c, lo, hi):
    """Eq. (7.16): argmax_{lo <= a <= hi} gamma a - c log(Ap e^{a/c} + Am e^{-a/c} + A0).

    Ap / Am: the exp-weights of the coordinates that u moves up / down by 1, A0 of the rest
    (the thesis has [lo, hi] = [0, 1]; here hi is the example's weight, and lo < 0 when an
    earlier variable is revisited)."""
    if gamma >= 1.0 or Ap <= 0.0:
        # the margin stays below gamma (or the objective is flat): the upper end
        return hi if (Ap > 0.0 or Am > 0.0 or gamma > 0.0) else 0.0
    if Am <= 0.0 and A0 <= 0.0:
        # the margin is 1 > gamma whatever a: the objective decreases (gamma - 1 < 0)
        return lo
    disc = gamma * gamma * A0 * A0 + 4.0 * (1.0 - gamma * gamma) * Ap * Am
    beta = (gamma * A0 + math.sqrt(disc)) / (2.0 * (1.0 - gamma) * Ap)
    return min(max(c * math.log(beta), lo), hi)


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
def _untouched(link, V, jj, kk, n, c, p):
    """(rest, m_rest): the aggregate of the coordinates u leaves alone (:func:`_margin_at`)."""
    R, K = V.shape
    m_rest = 0.0
    if link == ENTROPY:
        m_rest, z = entropy_frame(V, c)
        for e in range(n):
            v = V[jj[e], kk[e]] / c
            z -= math.exp(v - m_rest) + math.exp(-v - m_rest)
        return max(z, 0.0), m_rest
    s = 0.0
    for j in range(R):
        for k2 in range(K):
            s += abs(V[j, k2]) ** p
    for e in range(n):
        s -= abs(V[jj[e], kk[e]]) ** p
    return max(s, 0.0), m_rest


@njit
def _dot_and_sqnorm(V, jj, kk, uu, n):
    """(<v, u>, ||u||^2) of the update u listed as n entries (jj, kk, uu) against V."""
    vu = 0.0
    uu2 = 0.0
    for e in range(n):
        vu += V[jj[e], kk[e]] * uu[e]
        uu2 += uu[e] * uu[e]
    return vu, uu2


@njit
def sq_step(link, V, jj, kk, uu, n, c, p, gamma, a, s, lo):
    """The squared hinge's step on one dual variable, now at a (weight s > 0, c > 0)::

        argmax_{delta >= lo}  gamma (a + delta) - (a + delta)^2 / (4 s) - c f*((V + delta u) / c)

    lo = -a (alpha >= 0).  The objective is concave; its derivative h(delta) = gamma
    - (a + delta) / (2 s) - m(delta), m(delta) = <grad f*((V + delta u) / c), u> nondecreasing.
    Euclidean: m(delta) = (<v, u> + delta ||u||^2) / c, so delta = (c gamma - <v, u>
    - c a / (2 s)) / (c / (2 s) + ||u||^2).  Otherwise a bisection of h: on [0, 2 s (gamma - m(0))
    - a] when h(0) > 0 (h is <= 0 at that end since m is nondecreasing), on [lo, 0] when
    h(0) < 0."""
    if link == EUCLID:
        vu, uu2 = _dot_and_sqnorm(V, jj, kk, uu, n)
        r = c / (2.0 * s)
        return max((c * gamma - vu - r * a) / (r + uu2), lo)
    rest, m_rest = _untouched(link, V, jj, kk, n, c, p)
    m0 = _margin_at(link, V, jj, kk, uu, n, 0.0, c, p, rest, m_rest)
    h0 = gamma - a / (2.0 * s) - m0
    if h0 == 0.0:
        return 0.0
    if h0 > 0.0:
        lo_b = 0.0
        hi_b = 2.0 * s * (gamma - m0) - a
    else:
        if gamma - (a + lo) / (2.0 * s) - _margin_at(link, V, jj, kk, uu, n, lo, c, p, rest,
                                                      m_rest) <= 0.0:  # fmt: skip
            return lo
        lo_b = lo
        hi_b = 0.0
    for _ in range(200):
        mid = 0.5 * (lo_b + hi_b)
        if mid <= lo_b or mid >= hi_b:
            break
        if gamma - (a + mid) / (2.0 * s) - _margin_at(link, V, jj, kk, uu, n, mid, c, p, rest,
                                                       m_rest) > 0.0:  # fmt: skip
            lo_b = mid
        else:
            hi_b = mid
    return 0.5 * (lo_b + hi_b)


@njit
def tuned_step(link, V, jj, kk, uu, n, c, p, gamma, lo, hi):
    """argmax_{lo <= a <= hi} gamma a - c f*((V + a u) / c), lo <= 0 <= hi: eq. (7.11) for the
    Euclidean link, (7.16) for the entropy link and u in {-1, 0, 1}, a bisection otherwise."""
    if link == EUCLID:
        vu, uu2 = _dot_and_sqnorm(V, jj, kk, uu, n)
        if uu2 <= 0.0:
            return hi if gamma > 0.0 else 0.0
        return min(max((c * gamma - vu) / uu2, lo), hi)
    rest, m_rest = _untouched(link, V, jj, kk, n, c, p)
    unit = link == ENTROPY
    for e in range(n):
        if uu[e] != 0.0 and abs(uu[e]) != 1.0:
            unit = False
    if unit:
        Ap = 0.0
        Am = 0.0
        for e in range(n):
            v = V[jj[e], kk[e]] / c
            if uu[e] > 0.0:
                Ap += math.exp(v - m_rest)
                Am += math.exp(-v - m_rest)
            elif uu[e] < 0.0:
                Am += math.exp(v - m_rest)
                Ap += math.exp(-v - m_rest)
            else:
                rest += math.exp(v - m_rest) + math.exp(-v - m_rest)
        return entropy_closed_form(Ap, Am, rest, gamma, c, lo, hi)
    return bisect_alpha(link, V, jj, kk, uu, n, c, p, rest, m_rest, gamma, lo, hi)


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


@njit
def bisect_alpha(link, V, jj, kk, uu, n, c, p, rest, m_rest, gamma, lo, hi):
    """argmax_{lo <= a <= hi} gamma a - c f*((V + a u)/c): the root of gamma - margin(a)
    (margin nondecreasing in a), clipped to [lo, hi], by bisection to machine precision."""
    if gamma - _margin_at(link, V, jj, kk, uu, n, lo, c, p, rest, m_rest) <= 0.0:
        return lo
    if gamma - _margin_at(link, V, jj, kk, uu, n, hi, c, p, rest, m_rest) >= 0.0:
        return hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if gamma - _margin_at(link, V, jj, kk, uu, n, mid, c, p, rest, m_rest) > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def tuned_dual(link, V, c, p, gamma, sum_alpha, quad=0.0):
    """D_t = gamma sum alpha - quad - c f*(V / c), computed afresh (for checks); quad =
    sum_i alpha_i^2 / (4 s_i) for the squared hinge, 0 for the hinge."""
    if c <= 0.0:
        return gamma * sum_alpha - quad
    return gamma * sum_alpha - quad - _fstar(link, V, c, p, float(np.log(2.0 * V.size)))
