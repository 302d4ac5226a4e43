"""The margin along a dual step on the entropy and p-norm links, in O(nnz) an evaluation.

A round moves theta to theta + tau u on the weights its row touches (u = y x on the one column
of a binary learner; x on column y and -x on the rival column r).  The margin after the step,
margin(tau) = <grad f*(theta + tau u), u>, needs only the touched weights and the aggregate of
the others (Z of the entropy link in the frame of the exp shift m, or sum |theta|^p of the
p-norm link): :func:`gather_touched` lists the touched weights, :func:`link_margin` gives the
margin and its derivative, :func:`log_aggregate` the aggregate at the step, and
:func:`exact_untouched_aggregate` sums the untouched aggregate afresh when the running total
minus the touched terms has lost its digits.  The steps that solve for tau are in
:mod:`.steps` (the hinge's Newton solve, any loss's root of its optimality condition).
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .links import ENTROPY, agg_term, phi
from .sparse import row_offset
from .state import EXP_SHIFT


@njit
def gather_touched(data, indices, indptr, i, theta, kp, kn, ysign, b, d, jj, kk, uu, tt):
    """List the weights row i moves: (row jj, column kk, direction uu, current theta tt).

    Column ``kp`` moves along ysign * x, column ``kn`` (if >= 0) along -x; the intercept row
    ``d`` has the feature value ``b``.  Returns the number of entries written."""
    n = 0
    start = indptr[i]
    stop = indptr[i + 1]
    off = row_offset(data, indices, start)
    for q in range(start, stop + (1 if b != 0.0 else 0)):
        if q < stop:
            j = indices[q - off]
            x = np.float64(data[q])
        else:  # the intercept feature
            j = d
            x = b
        n = _list_entry(jj, kk, uu, tt, n, j, kp, ysign * x, theta)
        if kn >= 0:
            n = _list_entry(jj, kk, uu, tt, n, j, kn, -x, theta)
    return n


@njit
def _list_entry(jj, kk, uu, tt, n, j, k, u, theta):
    jj[n] = j
    kk[n] = k
    uu[n] = u
    tt[n] = theta[j, k]
    return n + 1


@njit
def exact_untouched_aggregate(link, data, indices, indptr, i, theta, st, kp, kn, b, d, p, bal):
    """Aggregate (Z in the frame of st[EXP_SHIFT], or sum |theta|^p) over the weights row i leaves
    alone, summed afresh: one sweep over theta, the row's sorted indices merged in."""
    m = st[EXP_SHIFT]
    R, K = theta.shape
    start = indptr[i]
    end = indptr[i + 1]
    off = row_offset(data, indices, start)
    q = start
    acc = 0.0
    for j in range(R):
        while q < end and indices[q - off] < j:
            q += 1
        row_touched = (q < end and indices[q - off] == j) or (b != 0.0 and j == d)
        for k in range(K):
            if row_touched and (k == kp or k == kn):
                continue
            acc += agg_term(link, theta[j, k], m, p, bal)
    return acc


@njit(inline="always")
def _entropy_frame(uu, tt, n, tau, rest, m, balanced):
    """(ml, Z0) at theta + tau u on the entropy link: the local exp shift ml, the largest of
    m + log(rest) and the moved weights' exponents (|v| balanced), so that the largest term
    is exp(0); and the untouched aggregate ``rest`` (frame m) moved to the frame ml."""
    ml = -math.inf
    if rest > 0.0:
        ml = m + math.log(rest)
    for e in range(n):
        v = tt[e] + tau * uu[e]
        a = abs(v) if balanced else v
        if a > ml:
            ml = a
    return ml, rest * math.exp(m - ml) if rest > 0.0 else 0.0


@njit(inline="always")
def _pnorm_frame(uu, tt, n, tau, rest, p):
    """(r1, sig) at theta + tau u on the p-norm link: r1 = rest^(1/p), the p-norm of the
    untouched weights, and sig the largest of r1 and the moved |theta_e + tau u_e| (the
    weights are divided by sig before their p-th powers are summed)."""
    r1 = rest ** (1.0 / p) if rest > 0.0 else 0.0
    sig = r1
    for e in range(n):
        a = abs(tt[e] + tau * uu[e])
        if a > sig:
            sig = a
    return r1, sig


@njit
def log_aggregate(link, uu, tt, n, tau, rest, m, p, balanced):
    """log of the aggregate (Z in the frame m, or sum |theta|^p) at theta + tau u."""
    if link == ENTROPY:
        ml, Z = _entropy_frame(uu, tt, n, tau, rest, m, balanced)
        for e in range(n):
            Z += agg_term(ENTROPY, tt[e] + tau * uu[e], ml, p, balanced)
        return math.log(Z) + ml - m
    r1, sig = _pnorm_frame(uu, tt, n, tau, rest, p)
    if sig == 0.0:
        return -math.inf
    F = (r1 / sig) ** p if rest > 0.0 else 0.0
    for e in range(n):
        F += abs((tt[e] + tau * uu[e]) / sig) ** p
    return math.log(F) + p * math.log(sig)


@njit
def link_margin(link, uu, tt, n, tau, rest, m, p, balanced):
    """(margin, d margin / d tau) at theta + tau u, for the entropy or p-norm link.

    ``rest`` is the aggregate of the untouched weights (in the frame m for the entropy link).
    Entropy: margin = N / Z with N = sum_e u_e phi(v_e), Z = rest + sum_e a(v_e); since
    phi' = a and a' = phi, the derivative is sum_e u_e^2 a(v_e) / Z - margin^2.  The exp shift is
    moved locally so that the largest term is exp(0).  p-norm: with F = sum |v|^p and
    N = sum_e u_e sign(v_e) |v_e|^(p-1), margin = N / ((p-1) F^((p-2)/p)) and the derivative is
    ((p-1) sum_e u_e^2 |v_e|^(p-2) - (p-2) N^2 / F) / ((p-1) F^((p-2)/p)); the weights are
    divided by their largest magnitude first (the margin is 1-homogeneous, its derivative
    0-homogeneous)."""
    if link == ENTROPY:
        ml, Z = _entropy_frame(uu, tt, n, tau, rest, m, balanced)
        N = 0.0
        D = 0.0
        for e in range(n):
            v = tt[e] + tau * uu[e]
            a = agg_term(ENTROPY, v, ml, p, balanced)
            Z += a
            N += uu[e] * phi(ENTROPY, v, ml, p, balanced)
            D += uu[e] * uu[e] * a
        mg = N / Z
        return mg, D / Z - mg * mg
    # PNORM
    r1, sig = _pnorm_frame(uu, tt, n, tau, rest, p)
    if sig == 0.0:
        return 0.0, math.nan
    F = (r1 / sig) ** p if rest > 0.0 else 0.0
    N = 0.0
    D = 0.0
    for e in range(n):
        v = (tt[e] + tau * uu[e]) / sig
        av = abs(v)
        t2 = av ** (p - 2.0)
        t1 = t2 * av
        F += t1 * av
        N += uu[e] * (t1 if v >= 0.0 else -t1)
        D += uu[e] * uu[e] * t2
    s = F ** (-(p - 2.0) / p) / (p - 1.0)
    return sig * N * s, ((p - 1.0) * D - (p - 2.0) * N * N / F) * s
