"""Dual ascent with several dual variables per round, and with a growing c_t (thesis ch. 3-5).

Two kernels, one per parametrisation of the dual of the hinge loss g_i(w) = [gamma - <w, u_i>]_+
(u_i = y_i x_i for one weight vector; x_i in column y_i and -x_i in the rival column r_i, the
max-score rival at round i, for K classes).

1. :func:`window_pass` -- fixed c = 1/C, the SVM-form dual (thesis eq. 5.12 with tau = alpha/c)::

       D(tau) = gamma sum_i tau_i - 1/2 ||w||^2 - sum_i delta_i tau_i^2 / 2,
       w = sum_i tau_i u_i,   0 <= tau_i <= cap_i

   with cap_i = C s_i, delta_i = 0 (PA-I), cap_i = inf, delta_i = 1/(2 C s_i) (PA-II, the dual
   of the squared slack), s_i the example's weight.  Round t appends example t to the store and
   raises D over a set I_t of dual variables (eq. 5.18), all others fixed:

   ``LASTK``     I_t = the last k examples, solved exactly: k = 1 is eq. (7.11) (PA);
                 k = 2 the closed form of :func:`qp2_box`; k > 2 cyclic coordinate ascent to a
                 projected-gradient tolerance (exact to ``tol``);
   ``ROWACTION`` k single-variable closed-form steps, i_1 = t then t-1, ..., t-k+1 (Sec. 5.2.2);
   ``FTRL``      I_t = [t]: coordinate ascent over every stored example, warm-started from the
                 previous round, to tolerance (regularised follow-the-leader; O(t nnz) per sweep).

   A coordinate step on variable i with gradient g_i = gamma - <w, u_i> - delta_i tau_i and
   curvature q_i = ||u_i||^2 + delta_i moves tau_i to clip(tau_i + g_i / q_i, 0, cap_i) and
   raises D by exactly Delta (g_i - q_i Delta / 2) >= 0 (accumulated in ``st[DUAL]``).

2. :func:`tuned_pass` -- a growing c_t (thesis Fig. 3.2 / 5.3, Fig. 4.1), alpha_i in [0, 1]::

       D_t(alpha) = gamma sum_i alpha_i - c_t f*(v / c_t),   v = sum_i alpha_i u_i,
       w_t = grad f*(v / c_t)

   ``FIXEDC``: c = 1/C for every round (the row-action step of the window family on the
   entropy and p-norm links; alpha in [0, s] is tau = alpha / c in [0, C s] of PA-I).
   ``SELFTUNED``: c_t = X_t sqrt((|M_{t-1}| + 1) / U) (eq. 5.17; X_t the largest dual norm of a
   row so far, M the mistakes); ``STRONGLY``: c_t = sigma t, which is Fig. 4.1 for the
   regularised loss sigma f(w) + g_t(w) (theta_{t+1} = (1 - 1/t) theta_t - eta_t lambda_t with
   eta_t = 1 / (sigma t) unrolls to v / (sigma t)).  The step on alpha_t in [0, s_t] (s_t the
   example's weight, 1 in the thesis) is the optimal one (eq. 5.15, ``OPTIMAL``) or the
   subgradient alpha_t = s_t 1[loss > 0] (``SUBGRADIENT``: with c_t = sigma t from the first
   round, Fig. 4.1 with eta_t = 1 / (sigma (t + 1)), its rounds counted from a round 0 at w = 0).
   With a window k > 1 the previous k - 1 stored examples then get the optimal single-variable
   step at the same c_t (row action, Sec. 5.2.2), alpha_i kept in [0, s_i].
   Links (:mod:`.links` codes): Euclidean f* = 1/2||.||^2, closed form (7.11); relative entropy
   on the doubled vector [v, -v] of 2N coordinates (balanced, f* = log sum exp - log 2N), closed
   form (7.16) when the row is in {-1, 0, 1}, bisection otherwise; p-norm f* = ||.||_p^2/(2(p-1)),
   bisection.  c_t f*(theta/c_t) does not increase with c_t (f >= 0), so D_t never decreases
   with the optimal step (Lemma 2).

Store of past examples (both kernels): ``Sd``/``Sx`` (values, feature indices) and ``Sp``
(row pointers) hold the rows; ``Sf[n, (SGN, TAU, Q, CAP, DELTA)]`` and ``Si[n, (Y, R, ID)]`` the
per-example numbers (R = -1 for one weight vector; ID the round, index into ``tau_all``).
"""

from __future__ import annotations

import math

import numpy as np

from .._config import njit
from .links import ENTROPY, EUCLID, PNORM
from .sparse import row_offset, row_sqnorm

# ---- step codes
LASTK = 0
ROWACTION = 1
FTRL = 2
SELFTUNED = 3
STRONGLY = 4
FIXEDC = 5  # tuned kernel at a fixed c = 1/C: row action on the entropy and p-norm links

# ---- variants (window kernel)
PA = 0
PA1 = 1
PA2 = 2

# ---- alpha rule (tuned kernel)
OPTIMAL = 0
SUBGRADIENT = 1

# ---- st slots
T = 0  # rounds seen
N_UPDATES = 1
N_MISTAKES = 2
DUAL = 3  # the dual objective D of the run so far
N_STORED = 4  # window kernel: examples in the store
STORE_NNZ = 5
N_UNCONVERGED = 6  # rounds whose inner solver stopped at max_sweeps
C_T = 7  # tuned kernel: c of the last round
X_T = 8  # tuned kernel: largest dual norm of a row so far
SUM_ALPHA = 9  # tuned kernel: sum_i alpha_i
VSQ = 10  # tuned kernel, Euclidean link: ||v||^2
N_ST = 11

# ---- store columns
SGN = 0
TAU = 1
Q = 2
CAP = 3
DELTA = 4
N_SF = 5
YC = 0
RC = 1
ID = 2
N_SI = 3


@njit
def scores_and_rival(scores, yi, binary, gamma):
    """(prediction, rival, sign, margin, loss) from the scores of one row."""
    if binary:
        sgn = 1.0 if yi == 1 else -1.0
        pred = 1 if scores[0] > 0.0 else 0
        mg = sgn * scores[0]
        return pred, -1, sgn, mg, max(gamma - mg, 0.0)
    K = scores.shape[0]
    pred = 0
    for k in range(1, K):
        if scores[k] > scores[pred]:
            pred = k
    r = -1
    for k in range(K):
        if k != yi and (r < 0 or scores[k] > scores[r]):
            r = k
    mg = scores[yi] - scores[r]
    return pred, r, 1.0, mg, max(gamma - mg, 0.0)


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
            if not math.isfinite(a):
                continue
            c = min(max((h1 - q01 * a) / q11, 0.0), cap1)
            t0, t1 = a, c
        else:
            a = 0.0 if e == 2 else cap1
            if not math.isfinite(a):
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
        for kk in range(K):
            scores[kk] = 0.0
        start = indptr[i]
        off = row_offset(data, indices, start)
        for p in range(start, indptr[i + 1]):
            j = indices[p - off]
            for kk in range(K):
                scores[kk] += data[p] * theta[j, kk]
        if b != 0.0:
            for kk in range(K):
                scores[kk] += b * theta[d, kk]
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
            if not math.isfinite(theta[j, kk]):
                return False
    return True


# ====================================================================== tuned kernel
@njit
def entropy_frame(V, c):
    """(m, Z): m = max |V| / c and Z = sum over [V, -V] / c of exp(. - m)."""
    R, K = V.shape
    m = 0.0
    for j in range(R):
        for k in range(K):
            a = abs(V[j, k]) / c
            if a > m:
                m = a
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
    sig = 0.0
    for j in range(R):
        for k in range(K):
            a = abs(V[j, k])
            if a > sig:
                sig = a
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
    R, K = V.shape
    if link == EUCLID:
        s = 0.0
        for j in range(R):
            for k in range(K):
                s += V[j, k] * V[j, k]
        return 0.5 * s / c
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


@njit
def _gather(data, indices, indptr, i, yk, rk, sgn, b, d, jj, kk, uu):
    """The entries of u (row jj, column kk, value uu); returns their number."""
    n = 0
    start = indptr[i]
    off = row_offset(data, indices, start)
    stop = indptr[i + 1]
    for q in range(start, stop + (1 if b != 0.0 else 0)):
        if q < stop:
            j = indices[q - off]
            x = np.float64(data[q])
        else:
            j = d
            x = b
        n = _emit(jj, kk, uu, n, j, x, yk, rk, sgn)
    return n


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
    n = 0
    yk = Si[m, YC]
    rk = Si[m, RC]
    sgn = Sf[m, SGN]
    stop = Sp[m + 1]
    for q in range(Sp[m], stop + (1 if b != 0.0 else 0)):
        if q < stop:
            j = Sx[q]
            x = Sd[q]
        else:
            j = d
            x = b
        n = _emit(jj, kk, uu, n, j, x, yk, rk, sgn)
    return n


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
def tuned_step(link, V, jj, kk, uu, n, c, p, gamma, lo, hi):
    """argmax_{lo <= a <= hi} gamma a - c f*((V + a u) / c), lo <= 0 <= hi: eq. (7.11) for the
    Euclidean link, (7.16) for the entropy link and u in {-1, 0, 1}, a bisection otherwise."""
    R, K = V.shape
    if link == EUCLID:
        vu = 0.0
        uu2 = 0.0
        for e in range(n):
            vu += V[jj[e], kk[e]] * uu[e]
            uu2 += uu[e] * uu[e]
        if uu2 <= 0.0:
            return hi if gamma > 0.0 else 0.0
        return min(max((c * gamma - vu) / uu2, lo), hi)
    # the aggregate of the coordinates u leaves alone
    m_rest = 0.0
    if link == ENTROPY:
        m_rest, z = entropy_frame(V, c)
        for e in range(n):
            v = V[jj[e], kk[e]] / c
            z -= math.exp(v - m_rest) + math.exp(-v - m_rest)
        rest = max(z, 0.0)
    else:
        s = 0.0
        for j in range(R):
            for k2 in range(K):
                s += abs(V[j, k2]) ** p
        for e in range(n):
            s -= abs(V[jj[e], kk[e]]) ** p
        rest = max(s, 0.0)
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
    rule, link, gamma, U, sigma, p, b, pred_out, scores, jj, kk, uu,
):  # fmt: skip
    """One pass of the growing-c dual ascent (module docstring, part 2).

    ``V`` (R, K): v = sum_i alpha_i u_i; ``dual_all[t]`` receives alpha of round t.  With
    ``window`` > 1 the last ``window`` examples are stored and, after the step on alpha_t, each
    earlier one gets the optimal single-variable step at the same c_t (row action).  Returns
    False when a value became non-finite."""
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
            if not moves or c <= 0.0:
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
            st[DUAL] = gamma * st[SUM_ALPHA]
        elif link == EUCLID:
            st[DUAL] = gamma * st[SUM_ALPHA] - 0.5 * st[VSQ] / c
        else:
            st[DUAL] = gamma * st[SUM_ALPHA] - _fstar(link, V, c, p, logn2)
    for j in range(R):
        for kk_ in range(K):
            if not math.isfinite(V[j, kk_]):
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


def tuned_dual(link, V, c, p, gamma, sum_alpha):
    """D_t = gamma sum alpha - c f*(V / c), computed afresh (for checks)."""
    if c <= 0.0:
        return gamma * sum_alpha
    return gamma * sum_alpha - _fstar(link, V, c, p, float(np.log(2.0 * V.size)))
