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

Any other convex margin loss l (given as first-class functions ``value``, ``deriv``; the loss
of :class:`onlinelearn.framework.CustomLoss`), :func:`root_tau`.  The round's problem
``w' = argmin_w B_f(w, w_t) + C l(z_t(w))`` (PA-I; PA-II: ``C l^2``) is, over the new dual
variable, ``max_tau -f*(theta + tau u) - C l*(-tau / C)``, whose optimality condition is the
root of the nondecreasing::

    g(tau) = tau + C dl(margin(tau)),    dl = l'  (PA-I)  or  2 l l'  (PA-II)

(for the hinge, gamma - margin(tau) - tau / (2C) = 0 of PA-II above, or the jump of g at
margin = gamma of PA-I).  g(0) = C dl(z0) and g has the other sign at tau1 = -C dl(z0), so
[0, tau1] brackets the root.  margin(tau) is z0 + tau ||u||^2 on the Euclidean link and
:func:`.link_margin.link_margin` on the others.  The solve: one probe at the zero of the loss's
tangent at z0, z0 - l(z0) / l'(z0) (for a piecewise-linear loss, its kink: the tau that reaches
it is found as the hinge's PA-I step above, Newton's method on the margin, so that the bracket
is then a few ulps wide), then regula falsi with the Illinois modification, forced to bisect
whenever a step fails to halve the bracket, until the bracket is 1e-15 relative or two adjacent
doubles.  The weights' scale (Z, ||theta||_p, the exp shift m) enters only through the margin,
as for the hinge; ``Entropy(eta)``'s eta, like the hinge's, scales the conservative step only.
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
#: COPA with the plain (not squared) confusion hinge: :func:`.copa.copa_hinge_step`
COPA_HINGE = 5


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


# ---------------------------------------------------------------- any loss: root of g(tau)
#: the most evaluations of :func:`root_tau` (bisection alone needs at most ~1100 from any
#: bracket of doubles; forced bisection at least every other step)
MAX_EVALS = 2400
EPS = 2.220446049250313e-16


@njit
def dual_derivative(value, deriv, z, squared):
    """dl(z): l'(z) (PA-I), or 2 l(z) l'(z) when ``squared`` (PA-II)."""
    d = deriv(z)
    if squared:
        d = 2.0 * value(z) * d
    return d


@njit
def _margin_at(tau, z0, q, lk):
    """z(tau), the margin after the step tau: z0 + tau q on the Euclidean link (``lk`` None),
    else :func:`.link_margin.link_margin` of the touched weights,
    lk = (link, uu, tt, n, rest, m, p, balanced)."""
    if lk is None:
        return z0 + tau * q
    link, uu, tt, n, rest, m, p, balanced = lk
    return link_margin(link, uu, tt, n, tau, rest, m, p, balanced)[0]


@njit
def _reach(z0, delta, hi, q, lk):
    """The tau where z(tau) = z0 + delta (the probe of :func:`root_tau` at the zero of the
    loss's tangent): delta / q on the Euclidean link; on the others PA-I's hinge step with the
    margin z0 + delta and the cap hi (in (0, hi], Newton's method), NaN (no probe) unless
    delta > 0 and hi > 0."""
    if lk is None:
        return delta / q
    if not (delta > 0.0 and hi > 0.0):
        return math.nan
    link, uu, tt, n, rest, m, p, balanced = lk
    return link_hinge_step(PA1, link, uu, tt, n, rest, m, z0 + delta, delta, hi, 1.0, p,
                           balanced, True)  # fmt: skip


@njit
def root_tau(value, deriv, z0, q, cap, squared, lk):
    """The root tau* of g(tau) = tau + cap dl(z(tau)) (the second part of the module
    docstring), z(tau) as :func:`_margin_at` (``q``, ``lk``); z0 = z(0) as the pass computed it.
    Returns 0 when dl(z0) = 0, NaN/inf when the loss's derivative is not finite."""
    t1 = -cap * dual_derivative(value, deriv, z0, squared)
    if t1 == 0.0 or not finite(t1):
        return t1
    lo = 0.0
    hi = t1
    if t1 < 0.0:
        lo = t1
        hi = 0.0
    glo = lo + cap * dual_derivative(value, deriv, _margin_at(lo, z0, q, lk), squared)
    ghi = hi + cap * dual_derivative(value, deriv, _margin_at(hi, z0, q, lk), squared)
    if glo >= 0.0:
        return lo
    if ghi <= 0.0:
        return hi
    # one candidate before the iterations: the zero of the loss's tangent at z0,
    # z = z0 - l(z0) / l'(z0) (PA-I: where a piecewise-linear loss reaches its kink, the root of
    # the hinge), probed at c and at c shifted by a few ulps towards the other end; for the
    # hinge the bracket is then a few ulps wide in 3 evaluations; otherwise it only shrinks
    lz = value(z0)
    dz = deriv(z0)
    if not squared and dz != 0.0 and lz > 0.0:
        c = _reach(z0, -lz / dz, hi, q, lk)
        for _ in range(2):
            if not (lo < c < hi):
                break
            gc = c + cap * dual_derivative(value, deriv, _margin_at(c, z0, q, lk), squared)
            if gc < 0.0:
                lo = c
                glo = gc
                c = c + 4.0 * EPS * abs(c)
            elif gc > 0.0:
                hi = c
                ghi = gc
                c = c - 4.0 * EPS * abs(c)
            else:
                return c
            if hi - lo <= 1e-15 * max(abs(lo), abs(hi)):
                return 0.5 * (lo + hi)
    side = 0
    bisect = False
    for _ in range(MAX_EVALS):
        width = hi - lo
        c = 0.5 * (lo + hi)
        if not bisect:
            rf = (lo * ghi - hi * glo) / (ghi - glo)
            if lo < rf < hi:
                c = rf
        if not (lo < c < hi):
            break  # the bracket is two adjacent doubles
        gc = c + cap * dual_derivative(value, deriv, _margin_at(c, z0, q, lk), squared)
        if gc < 0.0:
            lo = c
            glo = gc
            if side == -1:
                ghi *= 0.5
            side = -1
        elif gc > 0.0:
            hi = c
            ghi = gc
            if side == 1:
                glo *= 0.5
            side = 1
        else:
            return c
        bisect = hi - lo > 0.5 * width
        if hi - lo <= 1e-15 * max(abs(lo), abs(hi)):
            break
    return 0.5 * (lo + hi)


@njit
def link_tau(step, link, uu, tt, n, rest, m, gamma, loss, C, weight, p, balanced, untouched,
             value, deriv):  # fmt: skip
    """The step on the touched weights: the hinge's (:func:`link_hinge_step`) when ``value``
    is None, else the root of g(tau) = tau + C weight dl(margin(tau)) for the loss given by its
    first-class functions ``value`` and ``deriv`` (:func:`root_tau`; ``gamma`` is then the
    margin z0 before the step, ``loss`` is not read)."""
    if value is None:
        return link_hinge_step(step, link, uu, tt, n, rest, m, gamma, loss, C, weight, p,
                               balanced, untouched)  # fmt: skip
    for e in range(n):
        if uu[e] != 0.0:
            return root_tau(value, deriv, gamma, 1.0, C * weight, step == PA2,
                            (link, uu, tt, n, rest, m, p, balanced))  # fmt: skip
    return 0.0  # the margin cannot change


@njit
def aggressive_link_step(
    step, link, data, indices, indptr, i, theta, st, kp, kn, ysign, b, d, gamma, loss, C,
    weight, p, balanced, jj, kk, uu, tt, value=None, deriv=None,
):  # fmt: skip
    """tau of PA / PA-I / PA-II for row i on the entropy or p-norm link (theta unchanged).

    ``kp``, ``kn``, ``ysign``: as in :func:`gather_touched`; ``st`` the pass scalars
    (st[EXP_SHIFT] the exp shift, st[AGGREGATE] the aggregate); ``jj``, ``kk``, ``uu``, ``tt``
    scratch of length at least 2 (nnz(x_i) + 1).  With a loss's first-class functions
    ``value`` and ``deriv``, PA-I / PA-II for that loss (:func:`link_tau`: ``gamma`` is then
    the margin before the step, ``loss`` is not read)."""
    if weight <= 0.0:
        return 0.0
    if value is None:
        if loss <= 0.0:
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
    tau = link_tau(step, link, uu, tt, n, rest, m, gamma, loss, C, weight, p, balanced,
                   untouched, value, deriv)  # fmt: skip
    if rest >= _EXACT_REST * total or not (tau != 0.0 and finite(tau)):
        return tau
    t_end = tau / weight if step == PA else tau
    log_end = log_aggregate(link, uu, tt, n, t_end, rest, m, p, balanced)
    if log_end >= math.log(_EXACT_REST * total):
        return tau
    rest = exact_untouched_aggregate(link, data, indices, indptr, i, theta, st, kp, kn, b, d,
                                     p, balanced)  # fmt: skip
    return link_tau(step, link, uu, tt, n, rest, m, gamma, loss, C, weight, p, balanced,
                    untouched, value, deriv)  # fmt: skip
