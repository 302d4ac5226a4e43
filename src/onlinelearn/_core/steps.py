"""Dual ascent steps for the hinge loss g_t(w) = [gamma - margin_t(w)]_+ (thesis Sec. 5.2, 7.2).

With the Euclidean complexity f = 1/2||w||^2 the aggressive step, eq. (3.12) / (5.14), has the
closed form of eq. (7.11)::

    alpha_t = min{ 1, c [gamma - margin_t(w_t)]_+ / ||x_t||^2 },
    w_{t+1} = w_t + (alpha_t / c) y_t x_t

i.e. with C = 1/c the step size tau = alpha_t / c = min{C, loss / ||x||^2}: PA-I of
Crammer et al. (2006).  PA is C = inf, PA-II adds 1/(2C) to the denominator (Crammer et al.
2006, eq. 7-8 -- the squared-slack problem).  For K classes with the max-loss rival r the example
enters the two columns y (+x) and r (-x), so ||x||^2 is counted twice: kappa = 2 (kappa = 1 for the
binary learner with one weight vector).

The conservative step (eq. 5.13, the Perceptron) sets alpha_t = 1 on a mistake only.
``weight`` (sample weight x class weight) multiplies the step of the Perceptron and PA, and the
cap C of PA-I and PA-II (the cost of that example in the problem the step solves).

Aggressive steps for the other links (:func:`link_hinge_step`).  In the parametrisation of
:mod:`.online_loop` (w = grad f*(theta), tau = alpha / c, C = 1/c), the one-round dual problem
of eq. (7.9) reads::

    PA-I:  tau* = argmax_{0 <= tau <= C}  gamma tau - f*(theta + tau u)
    PA:    the same with C = inf
    PA-II: tau* = argmax_{tau >= 0}       gamma tau - f*(theta + tau u) - tau^2 / (4C)

with u = y x on the one column of a binary learner, or x on column y and -x on the rival
column r (K classes).  The derivative of the objective is gamma - margin(tau) (- tau / (2C)),
where margin(tau) = <grad f*(theta + tau u), u> is nondecreasing (f* is convex, its derivative
along u is u' H u >= 0), so tau* is the root of that derivative clipped to the domain: 0 when
margin(0) >= gamma, C when margin(C) < gamma (PA-I).  For the Euclidean link this is eq. (7.11);
for the entropy link and x in {-1, 0, 1}^n it is the closed form (7.13)-(7.14).  Here the root
is found numerically by Newton's method kept inside a shrinking bracket (bisection when a Newton
step leaves it or does not shrink it fast enough).  One evaluation of margin(tau) and its
derivative costs O(nnz(x)) given the aggregate of the untouched weights (Z or sum |theta|^p):
:mod:`.link_margin`.

On the entropy link the margin is bounded: margin < M = max_e u_e over all weights (max_e |u_e|
balanced), approached only as tau -> inf; PA (no cap) with gamma >= M has no finite step and
returns inf (the pass reports it as a non-finite update).  On the p-norm link margin(tau) grows
like tau ||u||_p^2 / (p - 1), so every step is finite.
"""

from __future__ import annotations

import math

from .config import njit
from .fp import finite
from .link_margin import (
    exact_untouched_aggregate,
    gather_touched,
    link_margin,
    log_aggregate,
)
from .links import ENTROPY, agg_term
from .state import (
    AGGREGATE,
    EXP_SHIFT,
)

CONSERVATIVE = 0
PA = 1
PA1 = 2
PA2 = 3
COPA = 4


@njit
def hinge_step(step, loss, margin, kappa_sqnorm, C, weight):
    """Step size tau >= 0 for one round (0 means no update).

    Parameters: ``step`` code; ``loss`` = [gamma - margin]_+; ``margin`` = y <w, x> (binary)
    or s_y - s_r (multiclass); ``kappa_sqnorm`` = kappa ||x||^2; ``C`` cap; ``weight`` >= 0.
    """
    if weight <= 0.0:
        return 0.0
    if step == CONSERVATIVE:
        return weight if margin <= 0.0 else 0.0
    if loss <= 0.0 or kappa_sqnorm <= 0.0:
        return 0.0
    if step == PA:
        return weight * loss / kappa_sqnorm
    if step == PA1:
        t = loss / kappa_sqnorm
        cw = C * weight
        return t if t < cw else cw
    # PA2
    return loss / (kappa_sqnorm + 0.5 / (C * weight))


@njit(inline="always")
def max_loss_alpha(alpha, K, tau, binary, ysign, yi, rival):
    """alpha[k] = the coefficient of x in column k's update by the step tau: y tau on the one
    column of a binary learner; tau on column y and -tau on the max-loss rival column r of K
    columns (0 on the others)."""
    for k in range(K):
        alpha[k] = 0.0
    if binary:
        alpha[0] = tau * ysign
    else:
        alpha[yi] = tau
        alpha[rival] = -tau


#: Bounds on the root finder of :func:`link_hinge_step` (Newton iterations, bracket doublings).
_MAXIT = 200
_MAXDOUBLE = 2200
#: Relative tolerance on tau.
_XTOL = 1e-15
#: Sum the aggregate of the untouched weights afresh when both it (as the running total minus
#: the touched terms) and the aggregate at the step fall below this fraction of the total.
_EXACT_REST = 1e-3


@njit
def link_hinge_step(step, link, uu, tt, n, rest, m, gamma, loss, C, weight, p, balanced, untouched):
    """Step tau >= 0 of PA, PA-I or PA-II on the entropy or p-norm link (module docstring).

    ``uu``, ``tt``: directions and current values of the n touched weights; ``rest``: aggregate of
    the others (``untouched``: whether there are any); ``loss`` = [gamma - margin(0)]_+ as the
    pass computed it.  As in :func:`hinge_step`, ``weight`` multiplies the step of PA and the cap
    C of PA-I and PA-II.  Returns inf when PA has no finite step."""
    if weight <= 0.0 or loss <= 0.0:
        return 0.0
    moves = False
    for e in range(n):
        if uu[e] != 0.0:
            moves = True
    if not moves:
        return 0.0  # the margin cannot change
    inv2c = 0.0
    hi = math.inf
    if step == PA1:
        hi = C * weight
    elif step == PA2:
        inv2c = 0.5 / (C * weight)
        hi = loss / inv2c  # gamma - margin(tau) - tau/(2C) <= loss - tau/(2C)
    if hi == math.inf and link == ENTROPY:
        sup = 0.0 if untouched else -math.inf
        for e in range(n):
            u = abs(uu[e]) if balanced else uu[e]
            if u > sup:
                sup = u
        if gamma >= sup:
            return math.inf
    if hi < math.inf:
        mg, dm = link_margin(link, uu, tt, n, hi, rest, m, p, balanced)
        if gamma - mg - hi * inv2c >= 0.0:
            return hi  # PA-I: the cap binds (PA-II: only by rounding)
    # bracket [lo, hi], g(lo) > 0 >= g(hi), hi <= 16 lo: steps of 16 from Newton's step at 0
    mg0, dm0 = link_margin(link, uu, tt, n, 0.0, rest, m, p, balanced)
    slope = dm0 + inv2c
    t = loss / slope if slope > 0.0 else math.nan
    if not (t > 0.0 and t < hi):
        t = 0.5 * hi if hi < math.inf else 1.0
    t0 = t
    lo = 0.0
    for _ in range(_MAXDOUBLE):
        mg, dm = link_margin(link, uu, tt, n, t, rest, m, p, balanced)
        g = gamma - mg - t * inv2c
        if g == 0.0:
            return weight * t if step == PA else t
        if g > 0.0:
            lo = t
            if hi < math.inf:
                if 16.0 * t >= hi:
                    break
            t *= 16.0
            if not finite(t):
                return math.inf
        else:
            hi = t
            if lo > 0.0:
                break
            t *= 0.0625
    t = t0 if lo <= t0 <= hi else 0.5 * (lo + hi)
    dx_old = hi - lo
    dx = dx_old
    for _ in range(_MAXIT):
        mg, dm = link_margin(link, uu, tt, n, t, rest, m, p, balanced)
        g = gamma - mg - t * inv2c
        dg = -(dm + inv2c)
        if g > 0.0:
            lo = t
        elif g < 0.0:
            hi = t
        else:
            break
        tn = math.nan
        if dg < 0.0 and finite(dg):
            tn = t - g / dg
        # Newton if it stays in the bracket and at least halves the step before last
        if lo <= tn <= hi and abs(2.0 * g) <= abs(dx_old * dg):
            dx_old = dx
            dx = tn - t
        else:
            dx_old = dx
            tn = 0.5 * (lo + hi)
            dx = tn - t
        if abs(tn - t) <= _XTOL * abs(tn) or hi - lo <= _XTOL * hi:
            t = tn
            break
        t = tn
    if step == PA:
        return weight * t
    return t


@njit
def aggressive_link_step(
    step, link, data, indices, indptr, i, theta, st, kp, kn, ysign, b, d, gamma, loss, C,
    weight, p, balanced, jj, kk, uu, tt,
):  # fmt: skip
    """tau of PA / PA-I / PA-II for row i on the entropy or p-norm link (theta unchanged).

    ``kp``, ``kn``, ``ysign``: as in :func:`gather_touched`; ``st`` the pass scalars
    (st[EXP_SHIFT] the exp shift, st[AGGREGATE] the aggregate); ``jj``, ``kk``, ``uu``, ``tt``
    scratch of length at least 2 (nnz(x_i) + 1)."""
    if weight <= 0.0 or loss <= 0.0:
        return 0.0
    n = gather_touched(data, indices, indptr, i, theta, kp, kn, ysign, b, d, jj, kk, uu, tt)
    R, K = theta.shape
    n_rows = indptr[i + 1] - indptr[i] + (1 if b != 0.0 else 0)
    untouched = n_rows * (1 if kn < 0 else 2) < R * K
    # aggregate of the untouched weights: the running total minus the touched terms.  Its
    # rounding error is ~ eps * total, harmless unless the aggregate along the step is much
    # smaller than the total; then it is summed afresh (O(R K)) and the step solved again.
    m = st[EXP_SHIFT]
    total = st[AGGREGATE]
    s = 0.0
    for e in range(n):
        s += agg_term(link, tt[e], m, p, balanced)
    rest = total - s
    if rest < 0.0:
        rest = 0.0
    tau = link_hinge_step(step, link, uu, tt, n, rest, m, gamma, loss, C, weight, p, balanced,
                          untouched)  # fmt: skip
    if rest >= _EXACT_REST * total or not (tau > 0.0 and finite(tau)):
        return tau
    t_end = tau / weight if step == PA else tau
    log_end = log_aggregate(link, uu, tt, n, t_end, rest, m, p, balanced)
    if log_end >= math.log(_EXACT_REST * total):
        return tau
    rest = exact_untouched_aggregate(link, data, indices, indptr, i, theta, st, kp, kn, b, d,
                                     p, balanced)  # fmt: skip
    return link_hinge_step(step, link, uu, tt, n, rest, m, gamma, loss, C, weight, p, balanced,
                           untouched)  # fmt: skip
