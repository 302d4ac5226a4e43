"""Update III on the entropy to a stated tolerance: a certificate for every step of the interior
point method (:func:`.ranking_entropy.ip_rank`) and a safeguarded exact method for the rounds
whose interior point step it does not certify.

The round (problem (P) of :mod:`.ranking`), with phi_r(tau) = gamma [r in Y] tau -
F_r(sigma_r tau)::

    max  P(tau) = sum_r phi_r(tau_r)   s.t.  tau >= 0,  sum_Y tau = sum_notY tau <= C

is separable with two coupling constraints.  With nu free for the equality and kappa >= 0 for
the cap, every label's part of the Lagrangian depends on one *price*: c_Y = gamma - nu - kappa
on the relevant side, c_N = nu on the other, and

    u_r(c) = argmax_{t in [0, C]} c t - F_r(sigma_r t)                            (one label)
    q(nu, kappa) = kappa C + sum_r max_{t in [0, C]} [c_r t - F_r(sigma_r t)]  >=  max P

(weak duality; the box [0, C] is implied by the constraints).  u_r is nondecreasing in c, so
are the side sums S_Y(c) = sum_Y u_r(c) and S_N(c) = sum_notY u_s(c), and the optimum is

* uncapped (kappa = 0): the root nu of S_N(nu) - S_Y(gamma - nu), nondecreasing in nu, in
  [-max_notY s, gamma - min_Y s] (s_r = F_r'(0), the scores; the bracket is the loss);
* capped, when that common sum exceeds C: S_N(c_N) = C and S_Y(c_Y) = C, two roots.

Each root is found by Newton's method on the price kept inside its bracket (bisection when a
Newton step leaves it), each u_r(c) by Newton's method on t kept inside [0, C], warm-started
from the previous price.  The step returned is the point between the bracket's two ends that
makes the sums equal (to C): exactly feasible even where a side sum jumps (a label whose F_r is
linear on the row), and as good as either end.  Its gap q - P is a certified bound on its
distance to the optimum; the step of the interior point method gets the same bound from its
own multipliers (nu_1, nu_2) = (nu, kappa).
"""

from __future__ import annotations

import math

from .config import njit
from .ranking_entropy import ent_F, ent_G, ip_rank

#: the tolerance of a step of update III on the entropy: P* - P(tau) <= STEP_RTOL |P(tau)|,
#: certified by a dual bound q; or, where P is so much smaller than its terms that double
#: precision cannot resolve it to that accuracy, q - P <= STEP_ROUNDING times the sum of the
#: magnitudes of the terms of q and P (near-flat rounds of large C: P ~ 1e-9 from terms ~ 20,
#: the derivatives F_r' within 1e-12 of their asymptote; measured gaps up to 3e-15 of them)
STEP_RTOL = 1e-9
STEP_ROUNDING = 1e-14
#: iteration caps of the one-label and the price searches (each a safeguarded Newton method)
ROOT_MAX_ITER = 200


@njit(fastmath=False)
def ent_dF(t, r, single, v, amass, wv, xv, m):
    """F_r(t) - F_r(0) to relative accuracy: log1p(sum_j w_j expm1(t x_j) / Z0), Z0 = the mass
    of w (1 up to rounding), while no t x_j exceeds 700 and the sum is above -Z0 / 2 (else
    F_r(t) - log Z0, of magnitude above log 2).  (F_r(t) alone
    carries an absolute error of the order of its terms, about 1e-16 K per round: 1e-10 of a
    round's objective at C = 1e-3.)"""
    if single:
        a = amass[0, r]
        z0 = a + amass[1, r]
        if z0 <= 0.0:
            return 0.0
        arg = a * math.expm1(t * v) / z0 if t * v <= 700.0 else math.inf
        if -0.5 <= arg < math.inf:
            return math.log1p(arg)
        return ent_F(t, r, single, v, amass, wv, xv, m)[0] - math.log(z0)
    w = wv[r]
    z0 = amass[1, r]
    s = 0.0
    big = False
    for k in range(m):
        if w[k] > 0.0:
            z0 += w[k]
            if t * xv[k] > 700.0:
                big = True
            else:
                s += w[k] * math.expm1(t * xv[k])
    if z0 <= 0.0:
        return 0.0
    if big or s / z0 < -0.5:
        return ent_F(t, r, single, v, amass, wv, xv, m)[0] - math.log(z0)
    return math.log1p(s / z0)


@njit(fastmath=False)
def price_step(c, r, sg, cap, single, v, amass, wv, xv, m, t0):
    """u = argmax_{t in [0, cap]} c t - F_r(sg t) (concave; its derivative c - sg F_r'(sg t) is
    nonincreasing), from ``t0``.  Returns (u, curvature, err): curvature = F_r''(sg u) when u
    is interior (the derivative of u in c is 1 / curvature), else 0; err >= the maximum minus
    the value at u (|derivative at u| times the width of the final bracket; u is the last
    point evaluated).  Where the derivative is 0 on a whole stretch (F_r' rounds to c there),
    u is near its lower end."""
    g, c2 = ent_G(0.0, r, single, v, amass, wv, xv, m)
    d = c - sg * g
    if d <= 0.0:
        return 0.0, 0.0, 0.0
    lo = 0.0
    hi = cap
    hi_checked = False
    t = t0 if 0.0 < t0 < cap else (d / c2 if c2 > 0.0 and d / c2 < cap else 0.5 * cap)
    for _ in range(ROOT_MAX_ITER):
        g, c2 = ent_G(sg * t, r, single, v, amass, wv, xv, m)
        d = c - sg * g
        if abs(d) <= 4e-16 * (abs(c) + abs(g)):
            break  # zero to working precision (c and F_r' agree to their last bits)
        if d > 0.0:
            lo = t
        else:
            hi = t
            hi_checked = True
        tn = t + d / c2 if c2 > 0.0 else math.inf
        if not (lo < tn < hi):
            if tn >= hi and not hi_checked:
                g, c2 = ent_G(sg * cap, r, single, v, amass, wv, xv, m)
                if c - sg * g >= 0.0:
                    return cap, 0.0, 0.0
                hi_checked = True
            tn = 0.5 * (lo + hi)
        if abs(tn - t) <= 1e-15 * tn or hi - lo <= 1e-15 * hi:
            break
        t = tn
    return t, c2, abs(d) * (hi - lo)


@njit(fastmath=False)
def side_sum(c, want, Y, cap, single, v, amass, wv, xv, m, u):
    """S(c) = sum of u_r(c) over the labels with Y[r] == want (into ``u``, warm-started from
    it) and its derivative in c (infinite where an interior u_r has zero curvature)."""
    sg = 1.0 if want else -1.0
    S = 0.0
    dS = 0.0
    for r in range(Y.shape[0]):
        if (Y[r] != 0) == want:
            t, c2, err = price_step(c, r, sg, cap, single, v, amass, wv, xv, m, u[r])
            u[r] = t
            S += t
            if 0.0 < t < cap:
                dS += 1.0 / c2 if c2 > 0.0 else math.inf
    return S, dS


@njit(fastmath=False)
def _g(kind, x, Y, cap, gamma, single, v, amass, wv, xv, m, u):
    """The nondecreasing function whose root is sought, its derivative and the scale of its
    terms: kind 0 the uncapped S_N(x) - S_Y(gamma - x); kind 1 S_N(x) - cap; kind 2
    S_Y(x) - cap."""
    if kind == 0:
        sn, dn = side_sum(x, False, Y, cap, single, v, amass, wv, xv, m, u)
        sy, dy = side_sum(gamma - x, True, Y, cap, single, v, amass, wv, xv, m, u)
        return sn - sy, dn + dy, sn + sy
    if kind == 1:
        sn, dn = side_sum(x, False, Y, cap, single, v, amass, wv, xv, m, u)
        return sn - cap, dn, sn + cap
    sy, dy = side_sum(x, True, Y, cap, single, v, amass, wv, xv, m, u)
    return sy - cap, dy, sy + cap


@njit(fastmath=False)
def _copy_side(kind, Y, src, dst):
    for r in range(Y.shape[0]):
        if kind == 0 or (kind == 1) == (Y[r] == 0):
            dst[r] = src[r]


@njit(fastmath=False)
def _end(kind, x, lower, Y, cap, gamma, single, v, amass, wv, xv, m, w):
    """g at an end of the first bracket and its u (into ``w``): kinds 1 and 2 know both ends
    (every label of the side at 0 at the lower end, at C at the upper one: the largest
    maximiser, where F_r' may round to the price before C); kind 0 evaluates."""
    if kind == 0:
        return _g(kind, x, Y, cap, gamma, single, v, amass, wv, xv, m, w)[0]
    total = -cap
    for r in range(Y.shape[0]):
        if (kind == 1) == (Y[r] == 0):
            w[r] = 0.0 if lower else cap
            total += w[r]
    return total


@njit(fastmath=False)
def price_root(kind, a, b, x0, Y, cap, gamma, single, v, amass, wv, xv, m, ua, ub, u):
    """The root of :func:`_g` ``kind`` in [a, b] (g(a) <= 0 <= g(b)) by Newton's method kept in
    the bracket, from ``x0`` (``u`` warm-starts the one-label steps).  Fills ``u`` (of the
    labels ``kind`` concerns) with u(x) where g(x) is 0 to working precision, else with the point
    between u(a) and u(b) of the final bracket at which g is 0 (g is linear along that
    segment: exactly feasible even where g jumps); returns the price for the dual bound."""
    have_a = False
    have_b = False
    ga = -math.inf
    gb = math.inf
    x = x0 if a < x0 < b else (a + 0.25 * (b - a) if x0 <= a else b - 0.25 * (b - a))
    floor = 1e-30 * (abs(a) + abs(b) + gamma)
    fallbacks = 0
    for _ in range(ROOT_MAX_ITER):
        gx, dg, total = _g(kind, x, Y, cap, gamma, single, v, amass, wv, xv, m, u)
        if abs(gx) <= 1e-15 * total:
            return x  # a root to the rounding of the sums
        if gx < 0.0:
            a = x
            ga = gx
            have_a = True
            _copy_side(kind, Y, u, ua)
        else:
            b = x
            gb = gx
            have_b = True
            _copy_side(kind, Y, u, ub)
        if b - a <= 4e-16 * (abs(a) + abs(b)) + floor:
            break
        xn = x - gx / dg if dg > 0.0 and dg < math.inf else math.nan
        if abs(xn - x) <= 4.5e-16 * abs(x):
            # the root is within a unit of rounding of x: the next price on its side closes
            # the bracket (never a far end: the segment to it would spread mass on labels
            # that have none at the optimum)
            xn = x + (4.5e-16 * abs(x) + floor) * (1.0 if gx < 0.0 else -1.0)
        if not (a < xn < b):
            # Newton left the bracket (a kink: a label reached 0 or C): the secant of the
            # bracket's ends (g is nearly piecewise linear), every third time its midpoint
            fallbacks += 1
            xn = 0.5 * (a + b)
            if have_a and have_b and fallbacks % 3 != 0:
                xs = (a * gb - b * ga) / (gb - ga)
                if a < xs < b:
                    xn = xs
        if xn == a or xn == b:
            break
        x = xn
    if not have_a:
        ga = _end(kind, a, True, Y, cap, gamma, single, v, amass, wv, xv, m, ua)
    if not have_b:
        gb = _end(kind, b, False, Y, cap, gamma, single, v, amass, wv, xv, m, ub)
    # the point of the segment [u(a), u(b)] where g = 0 (theta = 1: u(a))
    theta = 1.0 if gb <= ga else gb / (gb - ga)
    theta = min(1.0, max(0.0, theta))
    for r in range(Y.shape[0]):
        if kind == 0 or (kind == 1) == (Y[r] == 0):
            u[r] = theta * ua[r] + (1.0 - theta) * ub[r]
    return a if -ga <= gb else b


@njit(fastmath=False)
def primal_value(tau, Y, gamma, single, v, amass, wv, xv, m):
    """(P(tau), the sum of the absolute values of its terms)."""
    P = 0.0
    scale = 0.0
    for r in range(Y.shape[0]):
        if tau[r] > 0.0:
            sg = 1.0 if Y[r] else -1.0
            F = ent_dF(sg * tau[r], r, single, v, amass, wv, xv, m)
            gain = gamma * tau[r] if Y[r] else 0.0
            P += gain - F
            scale += gain + abs(F)
    return P, scale


@njit(fastmath=False)
def _closer(c, r, sg, cap, single, v, amass, wv, xv, m, t, err):
    """A one-label step ``t`` of :func:`price_step` whose bound ``err`` is loose (its final
    bracket still reaches an end of [0, C]): the derivative at t and at twice its Newton step
    beyond; where they differ in sign the maximiser lies between them, and the bound is the
    smaller |derivative| times that gap.  Returns (t, err)."""
    g, c2 = ent_G(sg * t, r, single, v, amass, wv, xv, m)
    d = c - sg * g
    if c2 <= 0.0 or d == 0.0:
        return t, err if d != 0.0 else 0.0
    t2 = min(cap, max(0.0, t + 2.0 * d / c2))
    g2, _ = ent_G(sg * t2, r, single, v, amass, wv, xv, m)
    d2 = c - sg * g2
    if (d > 0.0 and d2 > 0.0 and t2 < cap) or (d < 0.0 and d2 < 0.0 and t2 > 0.0):
        return t, err  # no sign change: keep the first bound
    if d > 0.0 and t2 >= cap and d2 >= 0.0:
        return cap, 0.0  # C maximises
    if d < 0.0 and t2 <= 0.0 and d2 <= 0.0:
        return 0.0, 0.0  # 0 maximises
    gap = abs(t2 - t)
    if abs(d2) < abs(d):
        return t2, abs(d2) * gap
    return t, abs(d) * gap


@njit(fastmath=False)
def dual_bound(cy, cn, Y, cap, gamma, single, v, amass, wv, xv, m, u, err_tol):
    """q(nu, kappa) >= max P at the prices c_Y = ``cy``, c_N = ``cn`` (kappa = gamma - cy - cn,
    clipped at 0 by lowering cy), and the sum of the absolute values of its terms; ``u``
    warm-starts the one-label steps and receives them.  A label's bound on its distance to its
    maximum above ``err_tol`` is tightened (:func:`_closer`)."""
    kappa = gamma - cy - cn
    if kappa < 0.0:
        kappa = 0.0
        cy = gamma - cn
    q = kappa * cap
    scale = q
    for r in range(Y.shape[0]):
        sg = 1.0 if Y[r] else -1.0
        c = cy if Y[r] else cn
        t, c2, err = price_step(c, r, sg, cap, single, v, amass, wv, xv, m, u[r])
        if err > err_tol:
            t, err = _closer(c, r, sg, cap, single, v, amass, wv, xv, m, t, err)
        u[r] = t
        if t > 0.0:
            F = ent_dF(sg * t, r, single, v, amass, wv, xv, m)
            q += c * t - F
            scale += abs(c * t) + abs(F)
        q += err
    return q, scale


@njit(fastmath=False)
def certified(P, p_scale, q, q_scale):
    """q - P <= STEP_RTOL |P|, or within the rounding of the terms of q and P."""
    return q - P <= STEP_RTOL * abs(P) + STEP_ROUNDING * (p_scale + q_scale)


@njit(fastmath=False)
def _err_tol(P, p_scale, K):
    """The part of the tolerance one label's bound may take (a hundredth, shared by K)."""
    return 0.01 * (STEP_RTOL * abs(P) + STEP_ROUNDING * p_scale) / K


@njit(fastmath=False)
def exact_rank(Y, cap, gamma, nu0, kappa0, single, v, amass, wv, xv, m, tau, ua, ub, u):
    """The safeguarded exact method (module docstring): the step into ``tau`` (exactly
    feasible); returns its prices (c_Y, c_N) (for :func:`dual_bound`).  ``nu0``, ``kappa0``
    (the interior point method's multipliers) and ``u`` (one value per label) warm-start the
    searches; kappa0 > 0 tries the capped case first, which is optimal when its
    kappa = gamma - c_Y - c_N is >= 0 (KKT)."""
    K = Y.shape[0]
    smin = math.inf
    smax = -math.inf
    for r in range(K):
        s, _ = ent_G(0.0, r, single, v, amass, wv, xv, m)
        if Y[r]:
            smin = min(smin, s)
        else:
            smax = max(smax, s)
    lo = -smax
    hi = gamma - smin
    capped = kappa0 > 0.0
    cn = cy = 0.0
    if not capped:
        nu = price_root(0, lo, hi, nu0, Y, cap, gamma, single, v, amass, wv, xv, m, ua, ub, u)
        z = 0.0
        for r in range(K):
            if Y[r]:
                z += u[r]
        capped = z > cap
        cy = gamma - nu
        cn = nu
    if capped:
        # each side sums to C at its own price; at the upper ends of the brackets every label
        # of the side is at C
        gy = smin
        gn = -smax
        for r in range(K):
            if Y[r]:
                gy = max(gy, ent_G(cap, r, single, v, amass, wv, xv, m)[0])
            else:
                gn = max(gn, -ent_G(-cap, r, single, v, amass, wv, xv, m)[0])
        cn = price_root(1, -smax, gn, nu0, Y, cap, gamma, single, v, amass, wv, xv, m, ua, ub, u)
        cy = price_root(2, smin, gy, gamma - nu0 - kappa0, Y, cap, gamma, single, v, amass, wv,
                        xv, m, ua, ub, u)  # fmt: skip
        if gamma - cy - cn < 0.0 and kappa0 > 0.0:
            for r in range(K):
                tau[r] = u[r]
            if _g(0, cn, Y, cap, gamma, single, v, amass, wv, xv, m, u)[0] <= 0.0:
                # S_Y(gamma - cn) >= C = S_Y(cy) with gamma - cn < cy: S_Y is flat at C in
                # between (every u_r is), so the capped step stands with kappa = 0
                cy = gamma - cn
                for r in range(K):
                    u[r] = tau[r]
            else:
                # the cap does not bind: the uncapped root, in the bracket the capped prices
                # leave (S_N(cn) = C > S_Y(gamma - cn), S_Y(cy) = C > S_N(gamma - cy))
                nu = price_root(0, max(lo, gamma - cy), min(hi, cn), nu0, Y, cap, gamma, single,
                                v, amass, wv, xv, m, ua, ub, u)  # fmt: skip
                cy = gamma - nu
                cn = nu
    for r in range(K):
        tau[r] = u[r]
    _feasible(Y, cap, tau)
    return cy, cn


@njit(fastmath=False)
def _feasible(Y, cap, tau):
    """Scale the side with the larger sum down to the other (and both to at most cap)."""
    sy = 0.0
    sn = 0.0
    for r in range(Y.shape[0]):
        if tau[r] < 0.0:
            tau[r] = 0.0
        if Y[r]:
            sy += tau[r]
        else:
            sn += tau[r]
    z = min(sy, sn, cap)
    for r in range(Y.shape[0]):
        if Y[r]:
            tau[r] = tau[r] * (z / sy) if sy > z else tau[r]
        else:
            tau[r] = tau[r] * (z / sn) if sn > z else tau[r]


@njit(fastmath=False)
def entropy_step_III(Y, cap, gamma, single, v, amass, wv, xv, m, tau, work):
    """Update III on the entropy: the interior point step when its dual bound certifies it to
    STEP_RTOL, else the better of it and the exact method's step.  Returns (interior point
    iterations, 1 if the exact method ran, 1 if even the better step misses the tolerance)."""
    K = Y.shape[0]
    its, nu1, nu2 = ip_rank(Y, cap, gamma, single, v, amass, wv, xv, m, tau, work)
    u = work[0]
    ua = work[1]
    ub = work[2]
    alt = work[3]
    P, p_scale = primal_value(tau, Y, gamma, single, v, amass, wv, xv, m)
    for r in range(K):
        u[r] = tau[r]
    kappa = nu2 if nu2 > 0.0 else 0.0
    q, q_scale = dual_bound(gamma - nu1 - kappa, nu1, Y, cap, gamma, single, v, amass, wv, xv,
                            m, u, _err_tol(P, p_scale, K))  # fmt: skip
    if certified(P, p_scale, q, q_scale):
        return its, 0, 0
    cy, cn = exact_rank(Y, cap, gamma, nu1, kappa, single, v, amass, wv, xv, m, alt, ua, ub, u)
    P2, p2_scale = primal_value(alt, Y, gamma, single, v, amass, wv, xv, m)
    for r in range(K):
        u[r] = alt[r]
    q2, q2_scale = dual_bound(cy, cn, Y, cap, gamma, single, v, amass, wv, xv, m, u,
                              _err_tol(P2, p2_scale, K))  # fmt: skip
    if q2 < q or not (q == q):
        q = q2
        q_scale = q2_scale
    if P2 > P or not (P == P):
        P = P2
        p_scale = p2_scale
        for r in range(K):
            tau[r] = alt[r]
    return its, 1, 0 if certified(P, p_scale, q, q_scale) else 1
