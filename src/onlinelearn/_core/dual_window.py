"""The window kernel of :mod:`.dual_ascent`: fixed c = 1/C, the SVM-form dual over a store of
past examples (last-k, row-action and FTRL steps; see that module's docstring for the math)."""

from __future__ import annotations

import math

from .config import njit
from .dual_common import (
    CAP,
    DELTA,
    DUAL,
    FTRL,
    ID,
    LASTK,
    N_MISTAKES,
    N_SF,
    N_SI,
    N_STORED,
    N_UNCONVERGED,
    N_UPDATES,
    PA1,
    PA2,
    RC,
    ROWACTION,
    SGN,
    STORE_NNZ,
    TAU,
    YC,
    Q,
    T,
    scores_and_rival,
)
from .fp import finite
from .sparse import row_dot_euclid, row_offset, row_sqnorm


# ====================================================================== window kernel
@njit
def qp2_box(h0, h1, q00, q01, q11, cap0, cap1):
    """argmax_{0 <= t_j <= cap_j} h.t - 1/2 t'Qt for a 2x2 PSD Q with q00, q11 > 0.

    The interior stationary point when Q is nonsingular and it lies in the box; otherwise the
    best of the four edge solutions (each a clipped 1-D optimum), which contain a maximiser.
    ``cap`` may be inf when the diagonal is positive definite (PA-II)."""
    det = q00 * q11 - q01 * q01
    if det > 1e-13 * q00 * q11:
        t0 = (q11 * h0 - q01 * h1) / det
        t1 = (q00 * h1 - q01 * h0) / det
        if 0.0 <= t0 <= cap0 and 0.0 <= t1 <= cap1:
            return t0, t1
    best = -math.inf
    b0 = 0.0
    b1 = 0.0
    for e in range(4):
        if e < 2:  # t0 fixed at 0 or cap0
            a = 0.0 if e == 0 else cap0
            if not finite(a):
                continue
            c = min(max((h1 - q01 * a) / q11, 0.0), cap1)
            t0, t1 = a, c
        else:
            a = 0.0 if e == 2 else cap1
            if not finite(a):
                continue
            c = min(max((h0 - q01 * a) / q00, 0.0), cap0)
            t0, t1 = c, a
        val = h0 * t0 + h1 * t1 - 0.5 * (q00 * t0 * t0 + 2.0 * q01 * t0 * t1 + q11 * t1 * t1)
        if val > best:
            best = val
            b0 = t0
            b1 = t1
    return b0, b1


@njit
def _stored_margin(Sd, Sx, Sp, Sf, Si, n, theta, b, d):
    """<w, u_n> for stored example n."""
    yk = Si[n, YC]
    rk = Si[n, RC]
    s = 0.0
    for p in range(Sp[n], Sp[n + 1]):
        j = Sx[p]
        if rk < 0:
            s += Sd[p] * theta[j, 0]
        else:
            s += Sd[p] * (theta[j, yk] - theta[j, rk])
    if b != 0.0:
        if rk < 0:
            s += b * theta[d, 0]
        else:
            s += b * (theta[d, yk] - theta[d, rk])
    return Sf[n, SGN] * s


@njit
def _stored_axpy(Sd, Sx, Sp, Sf, Si, n, a, theta, b, d):
    """w += a u_n."""
    yk = Si[n, YC]
    rk = Si[n, RC]
    a = a * Sf[n, SGN]
    for p in range(Sp[n], Sp[n + 1]):
        j = Sx[p]
        if rk < 0:
            theta[j, 0] += a * Sd[p]
        else:
            theta[j, yk] += a * Sd[p]
            theta[j, rk] -= a * Sd[p]
    if b != 0.0:
        if rk < 0:
            theta[d, 0] += a * b
        else:
            theta[d, yk] += a * b
            theta[d, rk] -= a * b


@njit
def _stored_inner(Sd, Sx, Sp, Sf, Si, m, n, b):
    """<u_m, u_n> (sorted sparse rows merged)."""
    pm = Sp[m]
    pn = Sp[n]
    em = Sp[m + 1]
    en = Sp[n + 1]
    s = b * b
    while pm < em and pn < en:
        if Sx[pm] == Sx[pn]:
            s += Sd[pm] * Sd[pn]
            pm += 1
            pn += 1
        elif Sx[pm] < Sx[pn]:
            pm += 1
        else:
            pn += 1
    ym = Si[m, YC]
    rm = Si[m, RC]
    yn = Si[n, YC]
    rn = Si[n, RC]
    if rm < 0:
        coef = 1.0
    else:
        coef = (
            (1.0 if ym == yn else 0.0)
            - (1.0 if ym == rn else 0.0)
            - (1.0 if rm == yn else 0.0)
            + (1.0 if rm == rn else 0.0)
        )
    return coef * Sf[m, SGN] * Sf[n, SGN] * s


@njit
def _move(Sd, Sx, Sp, Sf, Si, n, new, g, theta, tau_all, st, b, d):
    """Set tau_n = new (g its gradient before the move); book the exact gain of D."""
    delta = new - Sf[n, TAU]
    if delta == 0.0:
        return
    _stored_axpy(Sd, Sx, Sp, Sf, Si, n, delta, theta, b, d)
    st[DUAL] += delta * (g - 0.5 * (Sf[n, Q] + Sf[n, DELTA]) * delta)
    Sf[n, TAU] = new
    tau_all[Si[n, ID]] = new


@njit
def coordinate_step(Sd, Sx, Sp, Sf, Si, n, theta, tau_all, st, gamma, b, d):
    """The optimal single-variable step on stored example n; returns its projected gradient
    before the step (0 at the optimum of that coordinate)."""
    tau = Sf[n, TAU]
    cap = Sf[n, CAP]
    g = gamma - _stored_margin(Sd, Sx, Sp, Sf, Si, n, theta, b, d) - Sf[n, DELTA] * tau
    pg = g
    if tau <= 0.0 and g < 0.0:
        pg = 0.0
    elif tau >= cap and g > 0.0:
        pg = 0.0
    if pg == 0.0:
        return 0.0
    new = tau + g / (Sf[n, Q] + Sf[n, DELTA])
    new = min(max(new, 0.0), cap)
    _move(Sd, Sx, Sp, Sf, Si, n, new, g, theta, tau_all, st, b, d)
    return abs(pg)


@njit
def store_push(data, indices, indptr, i, Sd, Sx, Sp, Sf, Si, st, window, sgn, q, cap, dlt, yi,
               r, tid):  # fmt: skip
    """Append row i to the store (dropping the oldest example when ``window`` >= 0 are held);
    returns the number stored."""
    nst = int(st[N_STORED])
    if window >= 0 and nst >= window:
        shift = Sp[1]
        for p in range(shift, Sp[nst]):
            Sd[p - shift] = Sd[p]
            Sx[p - shift] = Sx[p]
        for m in range(1, nst):
            Sp[m] = Sp[m + 1] - shift
            for c in range(N_SF):
                Sf[m - 1, c] = Sf[m, c]
            for c in range(N_SI):
                Si[m - 1, c] = Si[m, c]
        nst -= 1
    pos = Sp[nst]
    start = indptr[i]
    off = row_offset(data, indices, start)
    for p in range(start, indptr[i + 1]):
        Sd[pos] = data[p]
        Sx[pos] = indices[p - off]
        pos += 1
    Sp[nst + 1] = pos
    Sf[nst, SGN] = sgn
    Sf[nst, TAU] = 0.0
    Sf[nst, Q] = q
    Sf[nst, CAP] = cap
    Sf[nst, DELTA] = dlt
    Si[nst, YC] = yi
    Si[nst, RC] = r
    Si[nst, ID] = tid
    nst += 1
    st[N_STORED] = nst
    st[STORE_NNZ] = pos
    return nst


@njit
def window_pass(
    data, indices, indptr, y, weight, order, theta, Sd, Sx, Sp, Sf, Si, tau_all, st,
    step, k, variant, C, gamma, b, tol, max_sweeps, pred_out, scores,
):  # fmt: skip
    """One pass of the several-variable dual ascent over the rows ``order`` (module docstring).

    ``k``: window length (``LASTK``, ``ROWACTION``; ignored by ``FTRL``, whose store keeps every
    example).  Returns False when a weight became non-finite."""
    R, K = theta.shape
    d = R - 1 if b != 0.0 else R
    binary = K == 1
    kappa = 1.0 if binary else 2.0
    for ii in range(order.shape[0]):
        i = order[ii]
        tid = int(st[T])
        st[T] += 1.0
        # ---- scores of w_t, prediction, rival, loss
        row_dot_euclid(data, indices, indptr, i, theta, b, d, scores)
        yi = y[i]
        pred, r, sgn, mg, loss = scores_and_rival(scores, yi, binary, gamma)
        pred_out[i] = pred
        if pred != yi:
            st[N_MISTAKES] += 1.0
        wgt = weight[i]
        tau_all[tid] = 0.0
        if wgt <= 0.0:
            continue
        cap = math.inf if variant != PA1 else C * wgt
        dlt = 0.5 / (C * wgt) if variant == PA2 else 0.0
        q = kappa * row_sqnorm(data, indptr, i, b)
        if q <= 0.0:
            # a zero row cannot move w: its variable takes its own optimum (PA: none, left 0)
            tz = 0.0
            if variant == PA1:
                tz = cap if gamma > 0.0 else 0.0
            elif variant == PA2:
                tz = gamma / dlt
            tau_all[tid] = tz
            st[DUAL] += gamma * tz - 0.5 * dlt * tz * tz
            continue
        # ---- store the example (drop the oldest when the window is full)
        nst = store_push(data, indices, indptr, i, Sd, Sx, Sp, Sf, Si, st,
                         k if step != FTRL else -1, sgn, q, cap, dlt, yi, r, tid)  # fmt: skip
        dual_before = st[DUAL]
        cur = nst - 1
        # ---- raise the dual over I_t
        if step == LASTK and nst == 2:
            prv = 0
            g0 = gamma - _stored_margin(Sd, Sx, Sp, Sf, Si, prv, theta, b, d)
            g0 -= Sf[prv, DELTA] * Sf[prv, TAU]
            g1 = gamma - mg  # tau_t = 0: the margin of w_t
            q00 = Sf[prv, Q] + Sf[prv, DELTA]
            q11 = q + dlt
            q01 = _stored_inner(Sd, Sx, Sp, Sf, Si, prv, cur, b)
            # linear term of the QP in (tau_prev, tau_t) around the current point
            h0 = g0 + q00 * Sf[prv, TAU]
            h1 = g1 + q01 * Sf[prv, TAU]
            t0, t1 = qp2_box(h0, h1, q00, q01, q11, Sf[prv, CAP], cap)
            d0 = t0 - Sf[prv, TAU]
            gain = g0 * d0 + g1 * t1 - 0.5 * (q00 * d0 * d0 + 2.0 * q01 * d0 * t1 + q11 * t1 * t1)
            if d0 != 0.0:
                _stored_axpy(Sd, Sx, Sp, Sf, Si, prv, d0, theta, b, d)
                Sf[prv, TAU] = t0
                tau_all[Si[prv, ID]] = t0
            if t1 != 0.0:
                _stored_axpy(Sd, Sx, Sp, Sf, Si, cur, t1, theta, b, d)
                Sf[cur, TAU] = t1
                tau_all[tid] = t1
            if gain > 0.0:
                st[DUAL] += gain
        elif step == ROWACTION or (step == LASTK and nst == 1):
            for m in range(nst - 1, -1, -1):
                coordinate_step(Sd, Sx, Sp, Sf, Si, m, theta, tau_all, st, gamma, b, d)
        else:  # LASTK with k > 2, FTRL: coordinate ascent to tolerance, newest first
            converged = False
            for _ in range(max_sweeps):
                worst = 0.0
                for m in range(nst - 1, -1, -1):
                    pg = coordinate_step(Sd, Sx, Sp, Sf, Si, m, theta, tau_all, st, gamma, b, d)
                    if pg > worst:
                        worst = pg
                if worst <= tol:
                    converged = True
                    break
            if not converged:
                st[N_UNCONVERGED] += 1.0
        if st[DUAL] != dual_before:
            st[N_UPDATES] += 1.0
    for j in range(R):
        for kk in range(K):
            if not finite(theta[j, kk]):
                return False
    return True
