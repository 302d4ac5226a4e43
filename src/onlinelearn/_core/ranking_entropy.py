"""Label ranking with the relative entropy: the update II line search and the primal-dual
interior point method of update III (thesis Sec. 7.3.2), split from :mod:`.ranking`.

F_r(t) = log sum_j w_rj e^{t x_j} is the change of f*(theta_r) = log sum exp(theta_r) along
x; the one-round problem, its constraints and the method are in :func:`ip_rank`'s docstring.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit

#: the interior point method: iteration cap, stopping tolerance on the duality gap eta.  The
#: method runs without fastmath: reassociated sums let the primal residual drift and stall it.
IPM_MAX_ITER = 50
IPM_TOL = 1e-11
#: Centring of the predictor-corrector: sigma = (mu_aff / mu)^3 clipped below at IPM_SIGMA_MIN,
#: and at IPM_SIGMA_INFEASIBLE while the dual residual exceeds the duality measure (otherwise
#: the complementarity runs ahead of feasibility and the next affine steps stall).
IPM_SIGMA_MIN = 0.01
IPM_SIGMA_INFEASIBLE = 0.1


# ---------------------------------------------------------------------------------- entropy pieces
@njit(fastmath=False)
def ent_F_single(t, a, rest, v):
    """F(t) = lse(theta + t x) - lse(theta) = log(rest + a e^{t v}) and its first two
    derivatives, when every active coordinate of x has the value v; a = the mass of w on the
    active coordinates, rest = the mass elsewhere (a + rest = 1)."""
    # log(rest + a e^u) as a log-sum-exp of two terms shifted by the larger (no underflow)
    la = math.log(a) if a > 0.0 else -np.inf
    lr = math.log(rest) if rest > 0.0 else -np.inf
    u = t * v + la
    M = u if u > lr else lr
    if M == -np.inf:
        return 0.0, 0.0, 0.0
    e1 = math.exp(u - M)
    den = e1 + math.exp(lr - M)
    F = M + math.log(den)
    qq = e1 / den
    return F, v * qq, v * v * qq * (1.0 - qq)


@njit(fastmath=False)
def ent_F_general(t, wv, xv, m, rest):
    """As :func:`ent_F_single` for general x: ``wv[:m]`` the weights of the active coordinates,
    ``xv[:m]`` their values, ``rest`` the mass elsewhere; a log-sum-exp shifted by its largest
    term.  O(m)."""
    M = math.log(rest) if rest > 0.0 else -np.inf
    for k in range(m):
        if wv[k] > 0.0:
            u = math.log(wv[k]) + t * xv[k]
            if u > M:
                M = u
    den = rest * math.exp(-M) if rest > 0.0 else 0.0
    if M < -700.0 and rest > 0.0:
        den = math.exp(math.log(rest) - M)  # e^{-M} overflows (the mass off the row < 1e-304)
    s1 = 0.0
    s2 = 0.0
    for k in range(m):
        if wv[k] > 0.0:
            e = math.exp(math.log(wv[k]) + t * xv[k] - M)
            den += e
            s1 += xv[k] * e
            s2 += xv[k] * xv[k] * e
    if den <= 0.0:
        return -np.inf, 0.0, 0.0
    g = s1 / den
    return M + math.log(den), g, s2 / den - g * g


@njit(fastmath=False)
def ent_F(t, r, single, v, amass, wv, xv, m):
    """F_r(t), F_r'(t), F_r''(t) for label r (``amass[0, r]`` = a, ``amass[1, r]`` = rest)."""
    if single:
        return ent_F_single(t, amass[0, r], amass[1, r], v)
    return ent_F_general(t, wv[r], xv, m, amass[1, r])


@njit(fastmath=False)
def ent_G(t, r, single, v, amass, wv, xv, m):
    """F_r'(t), F_r''(t) only (no logarithm): what the Newton and interior point steps need."""
    if single:
        a = amass[0, r]
        rest = amass[1, r]
        u = t * v
        if u > 0.0:
            den = a + rest * math.exp(-u)
            qq = a / den if den > 0.0 else (1.0 if a > 0.0 else 0.0)
        else:
            e = math.exp(u)
            den = rest + a * e
            qq = a * e / den if den > 0.0 else (1.0 if a > 0.0 else 0.0)
        return v * qq, v * v * qq * (1.0 - qq)
    F, g, c = ent_F_general(t, wv[r], xv, m, amass[1, r])
    return g, c


@njit(fastmath=False)
def pair_line_search(r0, s0, cap, gamma, single, v, amass, wv, xv, m):
    """Update II on the entropy: argmax_{t in [0, cap]} gamma t - F_r0(t) - F_s0(-t).

    The derivative h(t) = gamma - F_r0'(t) + F_s0'(-t) is nonincreasing; its root is found by
    Newton steps kept inside a shrinking bracket (bisection otherwise)."""
    g1, c1 = ent_G(0.0, r0, single, v, amass, wv, xv, m)
    g2, c2 = ent_G(0.0, s0, single, v, amass, wv, xv, m)
    h = gamma - g1 + g2
    if h <= 0.0:
        return 0.0
    g1, c1 = ent_G(cap, r0, single, v, amass, wv, xv, m)
    g2, c2 = ent_G(-cap, s0, single, v, amass, wv, xv, m)
    if gamma - g1 + g2 >= 0.0:
        return cap
    lo = 0.0
    hi = cap
    t = 0.5 * cap
    for _ in range(200):
        g1, c1 = ent_G(t, r0, single, v, amass, wv, xv, m)
        g2, c2 = ent_G(-t, s0, single, v, amass, wv, xv, m)
        h = gamma - g1 + g2
        if h > 0.0:
            lo = t
        else:
            hi = t
        if hi - lo <= 1e-15 * (1.0 + hi):
            break
        dh = -(c1 + c2)
        tn = t - h / dh if dh < 0.0 else -1.0
        if tn <= lo or tn >= hi:
            tn = 0.5 * (lo + hi)
        t = tn
    return t


@njit(inline="always")
def _constraint_column(Y, r, K):
    """(a1, a2): column r of the 2 x (K + 1) equality constraints A of the interior-point
    solve, a1 = +-1 by the sign of label r (0 for the slack r = K), a2 = 1 on the relevant
    labels and the slack, 0 elsewhere."""
    if r < K:
        return (1.0 if Y[r] else -1.0), (1.0 if Y[r] else 0.0)
    return 0.0, 1.0


@njit(fastmath=False)
def ip_rank(Y, cap, gamma, single, v, amass, wv, xv, m, tau, work):
    """Update III on the entropy: the primal-dual interior point method of thesis Sec. 7.3.2.

    Problem (7.24) with d = K + 1 variables (tau_1..tau_K and a slack s for the cap)::

        min  sum_r f_r(tau_r)   s.t.  A alpha = (0, cap),  tau_r >= 0,  s >= 0
        f_r(tau) = F_r(sigma_r tau) - gamma [r in Y]   (f = 0 for the slack)
        A = [ sigma_1 .. sigma_K   0 ]     (sum_Y tau = sum_notY tau)
            [ [1 in Y] .. [K in Y] 1 ]     (sum_Y tau + s = cap)

    Each iteration linearises the stationarity conditions (7.30), eliminates Delta lambda
    (7.31), solves the 2 x 2 system for Delta nu and reads Delta alpha off (7.32): O(K) per
    solve.  Where the thesis aims every step at eta = sum_r lambda_r alpha_r -> 0.1 eta (7.29),
    this is Mehrotra's predictor-corrector (Nocedal & Wright, Alg. 14.3): an affine step (target
    0) sets the centring sigma = (mu_aff / mu)^3 (clipped to [0.01, 1], and >= 0.1 while the
    dual residual exceeds eta) and the corrected step (target sigma mu - Delta alpha_aff
    Delta lambda_aff) is taken whole when it lowers the residual norm; otherwise the plain
    Newton step to sigma mu with backtracking on the residual norm (Boyd & Vandenberghe, pp.
    612-613), which keeps alpha and lambda strictly positive.  The start: alpha splits cap/2
    evenly on each side, nu is the least-squares fit of the stationarity conditions and lambda
    their residual shifted positive.  Up to 13 iterations per round on the Enron stream and
    12 on the tests' random rounds (was 18-20 with sigma = 0.1 fixed).

    ``tau`` (K,) receives the solution; ``work`` (10, K + 1) is scratch.  Returns the number of
    iterations and the final multipliers (nu_1, nu_2) of the two equality constraints, from
    which :func:`.ranking_exact.entropy_step_III` certifies the step."""
    K = Y.shape[0]
    d = K + 1
    al = work[0]
    lam = work[1]
    fp = work[2]
    fpp = work[3]
    dal = work[4]
    dlam = work[5]
    tal = work[6]
    tlam = work[7]
    tfp = work[8]
    tfpp = work[9]
    p = 0
    for r in range(K):
        if Y[r]:
            p += 1
    q = K - p
    z0 = 0.5 * cap
    for r in range(K):
        al[r] = z0 / p if Y[r] else z0 / q
    al[K] = cap - z0
    for r in range(d):
        lam[r] = cap / (d * al[r])
    nu1 = 0.0
    nu2 = 0.0
    it = 0
    _ip_residual(Y, cap, gamma, single, v, amass, wv, xv, m, al, lam, nu1, nu2, 0.0, fp, fpp)
    # start: nu fitted to the stationarity conditions, lam = the fitted residual made positive
    nu1, nu2 = _ip_start_duals(Y, al, lam, fp)
    _ip_residual(Y, cap, gamma, single, v, amass, wv, xv, m, al, lam, nu1, nu2, 0.0, fp, fpp)
    while it < IPM_MAX_ITER:
        eta = 0.0
        for r in range(d):
            eta += lam[r] * al[r]
        # dual residual at the current point (fp, fpp filled by _ip_residual)
        rd = 0.0
        for r in range(d):
            a1, a2 = _constraint_column(Y, r, K)
            e = abs(fp[r] - lam[r] + nu1 * a1 + nu2 * a2)
            if e > rd:
                rd = e
        if eta <= IPM_TOL * (1.0 + cap) and rd <= 10.0 * IPM_TOL * (1.0 + cap):
            break
        it += 1
        mu_avg = eta / d
        # Mehrotra predictor-corrector: the affine direction (complementarity target 0) ...
        tgt = tfp  # scratch until the backtracking below refills it
        for r in range(d):
            tgt[r] = 0.0
        dn1, dn2 = _ip_direction(Y, cap, al, lam, nu1, nu2, fp, fpp, tgt, dal, dlam)
        if dn1 != dn1:  # singular reduced system
            break
        s_aff = _ip_max_step(al, lam, dal, dlam)
        mu_aff = 0.0
        for r in range(d):
            mu_aff += (al[r] + s_aff * dal[r]) * (lam[r] + s_aff * dlam[r])
        mu_aff /= d
        # ... tells how far the centring may go (sigma = (mu_aff / mu)^3), and its second-order
        # term corrects the complementarity of the combined step
        ratio = mu_aff / mu_avg if mu_avg > 0.0 else 0.0
        sigma = min(1.0, max(IPM_SIGMA_MIN, ratio * ratio * ratio))
        if rd > eta:
            sigma = max(sigma, IPM_SIGMA_INFEASIBLE)
        mu = sigma * mu_avg
        rnorm = _residual_norm(Y, cap, al, lam, nu1, nu2, mu, fp)
        # the corrected step, taken whole (to 0.995 of the boundary) if it lowers the residual;
        # otherwise the plain Newton step to mu with backtracking (the method of Sec. 7.3.2)
        accepted = False
        for r in range(d):
            tgt[r] = mu - dal[r] * dlam[r]
        dn1, dn2 = _ip_direction(Y, cap, al, lam, nu1, nu2, fp, fpp, tgt, dal, dlam)
        if dn1 == dn1:
            smax = _ip_max_step(al, lam, dal, dlam)
            s = 0.995 * smax if smax < 1.0 else 1.0
            rn = _ip_trial(
                Y, cap, gamma, single, v, amass, wv, xv, m, al, lam, nu1, nu2, mu,
                dal, dlam, dn1, dn2, s, tal, tlam, tfp, tfpp,
            )  # fmt: skip
            accepted = rn <= (1.0 - 0.01 * s) * rnorm
        if not accepted:
            for r in range(d):
                tgt[r] = mu
            dn1, dn2 = _ip_direction(Y, cap, al, lam, nu1, nu2, fp, fpp, tgt, dal, dlam)
            if dn1 != dn1:
                break
            smax = _ip_max_step(al, lam, dal, dlam)
            s = 0.995 * smax if smax < 1.0 else 1.0
            # backtracking on the residual norm
            for _ in range(60):
                rn = _ip_trial(
                    Y, cap, gamma, single, v, amass, wv, xv, m, al, lam, nu1, nu2, mu,
                    dal, dlam, dn1, dn2, s, tal, tlam, tfp, tfpp,
                )  # fmt: skip
                if rn <= (1.0 - 0.01 * s) * rnorm or (rn < math.inf and s < 1e-10):
                    accepted = True
                    break
                s *= 0.5
        if not accepted:
            break
        for r in range(d):
            al[r] = tal[r]
            lam[r] = tlam[r]
            fp[r] = tfp[r]
            fpp[r] = tfpp[r]
        nu1 += s * dn1
        nu2 += s * dn2
    for r in range(K):
        tau[r] = al[r] if al[r] > 0.0 else 0.0
    # exact feasibility: rescale the side with the larger sum down to the other
    sy = 0.0
    sn = 0.0
    for r in range(K):
        if Y[r]:
            sy += tau[r]
        else:
            sn += tau[r]
    zt = min(sy, sn, cap)
    for r in range(K):
        if Y[r]:
            tau[r] = tau[r] * zt / sy if sy > 0.0 else 0.0
        else:
            tau[r] = tau[r] * zt / sn if sn > 0.0 else 0.0
    return it, nu1, nu2


@njit(fastmath=False)
def _ip_start_duals(Y, al, lam, fp):
    """nu minimising ||f' + A^T nu||^2 and lam = its residual made positive."""
    K = Y.shape[0]
    d = K + 1
    m11 = 0.0
    m12 = 0.0
    m22 = 0.0
    b1 = 0.0
    b2 = 0.0
    for r in range(d):
        a1, a2 = _constraint_column(Y, r, K)
        m11 += a1 * a1
        m12 += a1 * a2
        m22 += a2 * a2
        b1 -= a1 * fp[r]
        b2 -= a2 * fp[r]
    det = m11 * m22 - m12 * m12
    nu1 = (m22 * b1 - m12 * b2) / det
    nu2 = (m11 * b2 - m12 * b1) / det
    lo = 0.0
    scale = 0.0
    for r in range(d):
        a1, a2 = _constraint_column(Y, r, K)
        lam[r] = fp[r] + nu1 * a1 + nu2 * a2
        if lam[r] < lo:
            lo = lam[r]
        scale += abs(lam[r])
    shift = -1.5 * lo + 1e-3 * (1.0 + scale / d)
    for r in range(d):
        lam[r] += shift
    return nu1, nu2


@njit(fastmath=False)
def _ip_direction(Y, cap, al, lam, nu1, nu2, fp, fpp, tgt, dal, dlam):
    """Newton direction of the KKT system for the complementarity targets ``tgt``::

        f'' dal - dlam + A^T dnu = -(f' - lam + A^T nu)
        lam dal + al dlam        = tgt - lam al
        A dal                    = -(A al - (0, cap))

    dlam eliminated (7.31), the 2 x 2 system in dnu solved (7.32), dal read off: O(K).  Fills
    ``dal``, ``dlam``; returns (dnu_1, dnu_2), NaN when the reduced system is singular."""
    K = Y.shape[0]
    d = K + 1
    m11 = 0.0
    m12 = 0.0
    m22 = 0.0
    b1 = 0.0
    b2 = -cap
    for r in range(d):
        a1, a2 = _constraint_column(Y, r, K)
        zr = fpp[r] + lam[r] / al[r]
        ur = -fp[r] + tgt[r] / al[r] - nu1 * a1 - nu2 * a2
        m11 += a1 * a1 / zr
        m12 += a1 * a2 / zr
        m22 += a2 * a2 / zr
        b1 += a1 * ur / zr + a1 * al[r]
        b2 += a2 * ur / zr + a2 * al[r]
    det = m11 * m22 - m12 * m12
    if det == 0.0:
        return np.nan, np.nan
    dn1 = (m22 * b1 - m12 * b2) / det
    dn2 = (m11 * b2 - m12 * b1) / det
    for r in range(d):
        a1, a2 = _constraint_column(Y, r, K)
        zr = fpp[r] + lam[r] / al[r]
        ur = -fp[r] + tgt[r] / al[r] - nu1 * a1 - nu2 * a2
        dal[r] = (ur - a1 * dn1 - a2 * dn2) / zr
        dlam[r] = (tgt[r] - lam[r] * dal[r]) / al[r] - lam[r]
    return dn1, dn2


@njit(fastmath=False)
def _ip_max_step(al, lam, dal, dlam):
    """The largest s <= 1 keeping al + s dal >= 0 and lam + s dlam >= 0."""
    smax = 1.0
    for r in range(al.shape[0]):
        if dal[r] < 0.0 and -al[r] / dal[r] < smax:
            smax = -al[r] / dal[r]
        if dlam[r] < 0.0 and -lam[r] / dlam[r] < smax:
            smax = -lam[r] / dlam[r]
    return smax


@njit(fastmath=False)
def _ip_trial(
    Y, cap, gamma, single, v, amass, wv, xv, m, al, lam, nu1, nu2, mu, dal, dlam, dn1, dn2, s,
    tal, tlam, tfp, tfpp,
):  # fmt: skip
    """The trial point (al, lam) + s (dal, dlam) into (tal, tlam) and its residual norm (its
    f', f'' kept in tfp, tfpp); infinity when it leaves alpha > 0, lambda > 0."""
    for r in range(al.shape[0]):
        tal[r] = al[r] + s * dal[r]
        tlam[r] = lam[r] + s * dlam[r]
        if tal[r] <= 0.0 or tlam[r] <= 0.0:
            return math.inf
    return _ip_residual(
        Y, cap, gamma, single, v, amass, wv, xv, m, tal, tlam, nu1 + s * dn1, nu2 + s * dn2, mu,
        tfp, tfpp,
    )  # fmt: skip


@njit(fastmath=False)
def _ip_residual(Y, cap, gamma, single, v, amass, wv, xv, m, al, lam, nu1, nu2, mu, fp, fpp):
    """Fill f'(alpha), f''(alpha) and return the 2-norm of the (dual, centrality, primal)
    residuals (centrality against mu)."""
    K = Y.shape[0]
    d = K + 1
    tot = 0.0
    rp1 = 0.0
    rp2 = -cap
    for r in range(d):
        if r < K:
            sg = 1.0 if Y[r] else -1.0
            g, c = ent_G(sg * al[r], r, single, v, amass, wv, xv, m)
            fp[r] = sg * g - (gamma if Y[r] else 0.0)
            fpp[r] = c
            a1 = sg
            a2 = 1.0 if Y[r] else 0.0
        else:
            fp[r] = 0.0
            fpp[r] = 0.0
            a1 = 0.0
            a2 = 1.0
        e = fp[r] - lam[r] + nu1 * a1 + nu2 * a2
        cc = lam[r] * al[r] - mu
        tot += e * e + cc * cc
        rp1 += a1 * al[r]
        rp2 += a2 * al[r]
    return math.sqrt(tot + rp1 * rp1 + rp2 * rp2)


@njit(fastmath=False)
def _residual_norm(Y, cap, al, lam, nu1, nu2, mu, fp):
    """2-norm of the (dual, centrality, primal) residuals from stored f'(alpha) = ``fp``."""
    K = Y.shape[0]
    tot = 0.0
    rp1 = 0.0
    rp2 = -cap
    for r in range(K + 1):
        a1, a2 = _constraint_column(Y, r, K)
        e = fp[r] - lam[r] + nu1 * a1 + nu2 * a2
        cc = lam[r] * al[r] - mu
        tot += e * e + cc * cc
        rp1 += a1 * al[r]
        rp2 += a2 * al[r]
    return math.sqrt(tot + rp1 * rp1 + rp2 * rp2)
