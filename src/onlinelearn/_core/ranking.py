"""Label ranking by dual ascent: loss (8.1) x complexity (8.2)/(8.3) x update I/II/III (ch. 8).

Numba only.  State: ``theta`` (R, K), column r the dual sum of label r, and ``lZ`` (K,).
The weights are w_r = grad f*(theta_r):

* EUCLID, f(w) = 1/2 ||w||^2 (8.2):       w_r = theta_r,  f*(theta) = 1/2 ||theta||^2;
* ENTROPY, f(w) = log n + sum_j w_j log w_j on the simplex (8.3):
  w_rj = exp(theta_rj - lZ_r),  lZ_r = log sum_j exp(theta_rj),  f*(theta) = lZ - log n.

Round t (x = x_t, Y = Y_t, sigma_r = +1 for r in Y and -1 otherwise, s_r = <w_r, x>) adds
sigma_r tau_r x to theta_r, with tau >= 0 found by one of three dual ascent steps.  The one-round
dual problem (thesis eq. (7.8)/(7.18) with tau = alpha / c and C = 1/c) is::

    max_tau  gamma sum_{r in Y} tau_r - sum_r [ f*(theta_r + sigma_r tau_r x) - f*(theta_r) ]
    s.t.     tau >= 0,  sum_{r in Y} tau_r = sum_{s not in Y} tau_s <= C                   (P)

* UPD_I (conservative, (8.4)): on a mistake (min_{Y} s_r <= max_{not Y} s_s), tau = C on the
  most violating pair r0 = argmin_{r in Y} s_r, s0 = argmax_{s not in Y} s_s, 0 elsewhere;
* UPD_II (aggressive, scaled): tau = t (e_r0 + e_s0) with t the maximiser of (P) on that line,
  t in [0, C]: Euclidean t = min{C, loss / (2 ||x||^2)}, entropy by a safeguarded Newton search;
* UPD_III (optimal): the maximiser of (P).  Euclidean: exact in O(k log k) (Fig. 7.4, here as a
  walk over the merged knots of two piecewise-linear thresholds); entropy: the primal-dual
  interior point method of Sec. 7.3.2 with the 2 x 2 reduced Newton system.

UPD_II and UPD_III act whenever the loss [gamma - (min_Y s_r - max_{not Y} s_s)]_+ is positive;
UPD_I only on mistakes.  A row with no relevant or no irrelevant label has no pair: no loss, no
mistake, no update.  ``C`` is multiplied by the row's sample weight.
"""

from __future__ import annotations

import math

import numpy as np

from .._config import njit
from .projections import entropic_floor, project_l1_rows, simplex_theta
from .sparse import row_dot_euclid, row_offset

EUCLID = 0
ENTROPY = 1

UPD_I = 0
UPD_II = 1
UPD_III = 2

#: slots of the statistics vector ``st``
T_SEEN = 0
N_UPDATES = 1
N_MISTAKES = 2
GAIN = 3  # gamma * sum of tau over the relevant labels, all rounds: D = GAIN - sum_r f*(theta_r)
IP_ITER_MAX = 4
IP_ITER_SUM = 5
IP_CALLS = 6
N_ST = 7

#: constraints on every weight vector, applied after each update (a projected update)
NO_CONSTRAINT = 0
L1_BALL = 1  # Euclidean: w_r <- the Euclidean projection onto {||w||_1 <= z}   (Fig. 7.2)
FLOOR = 2  # entropy: w_r <- the entropic projection onto {w in simplex, w >= eps} (Fig. 7.3)

#: status codes of a pass
OK = 0
NONFINITE = 1

#: the interior point method: iteration cap, stopping tolerance on the duality gap eta.  The
#: method runs without fastmath: reassociated sums let the primal residual drift and stall it.
IP_MAX_ITER = 50
IP_TOL = 1e-11
#: Centring of the predictor-corrector: sigma = (mu_aff / mu)^3 clipped below at IP_SIGMA_MIN,
#: and at IP_SIGMA_INFEASIBLE while the dual residual exceeds the duality measure (otherwise
#: the complementarity runs ahead of feasibility and the next affine steps stall).
IP_SIGMA_MIN = 0.01
IP_SIGMA_INFEASIBLE = 0.1


# ---------------------------------------------------------------------------------- Euclidean III
@njit
def exact_euclid_z(mu, nu, cap):
    """Solve min_{z in [0, cap]} g(z; mu) + g(z; nu) (thesis eq. (7.20)-(7.23), Lemma 10).

    g(z; mu) = min {1/2 ||a - mu||^2 : a >= 0, sum a = z} has derivative -theta_mu(z), where
    theta_mu(z) = (S_i - z) / i on the knot interval [z_i, z_{i+1}], z_i = S_i - i mu_(i) and S_i
    the sum of the i largest entries.  The walk visits the merged knots of mu and nu in increasing
    order and stops in the interval where theta_mu + theta_nu crosses zero (the stationary point
    O(z) = (j S_i + i T_j) / (i + j) of Fig. 7.4), or at 0 or cap.

    Returns (z, theta_mu, theta_nu); the solution is a_r = [mu_r - theta_mu]_+,
    b_s = [nu_s - theta_nu]_+ (a = 0 when z = 0)."""
    p = mu.shape[0]
    q = nu.shape[0]
    ms = np.sort(mu)[::-1]
    ns = np.sort(nu)[::-1]
    i = 1
    j = 1
    S = ms[0]
    T = ns[0]
    lo = 0.0
    while True:
        # absorb every knot <= lo (ties)
        while i < p and S - i * ms[i] <= lo:
            S += ms[i]
            i += 1
        while j < q and T - j * ns[j] <= lo:
            T += ns[j]
            j += 1
        hi = cap
        if i < p:
            k = S - i * ms[i]
            if k < hi:
                hi = k
        if j < q:
            k = T - j * ns[j]
            if k < hi:
                hi = k
        zs = (j * S + i * T) / (i + j)
        if zs <= lo:
            z = lo
            break
        if zs <= hi:
            z = zs
            break
        if hi >= cap:
            z = cap
            break
        lo = hi
    return z, (S - z) / i, (T - z) / j


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
            qq = a / den if den > 0.0 else 1.0
        else:
            e = math.exp(u)
            den = rest + a * e
            qq = a * e / den if den > 0.0 else 1.0
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
    iterations."""
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
    while it < IP_MAX_ITER:
        eta = 0.0
        for r in range(d):
            eta += lam[r] * al[r]
        # dual residual at the current point (fp, fpp filled by _ip_residual)
        rd = 0.0
        for r in range(d):
            a1 = (1.0 if Y[r] else -1.0) if r < K else 0.0
            a2 = 1.0 if (r == K or Y[r]) else 0.0
            e = abs(fp[r] - lam[r] + nu1 * a1 + nu2 * a2)
            if e > rd:
                rd = e
        if eta <= IP_TOL * (1.0 + cap) and rd <= 10.0 * IP_TOL * (1.0 + cap):
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
        sigma = min(1.0, max(IP_SIGMA_MIN, ratio * ratio * ratio))
        if rd > eta:
            sigma = max(sigma, IP_SIGMA_INFEASIBLE)
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
            for r in range(d):
                tal[r] = al[r] + s * dal[r]
                tlam[r] = lam[r] + s * dlam[r]
            positive = True
            for r in range(d):
                if tal[r] <= 0.0 or tlam[r] <= 0.0:
                    positive = False
            if positive:
                rn = _ip_residual(
                    Y, cap, gamma, single, v, amass, wv, xv, m, tal, tlam,
                    nu1 + s * dn1, nu2 + s * dn2, mu, tfp, tfpp,
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
        # backtracking on the residual norm (trial point in tal, tlam)
        for _ in range(0 if accepted else 60):
            for r in range(d):
                tal[r] = al[r] + s * dal[r]
                tlam[r] = lam[r] + s * dlam[r]
            ok = True
            for r in range(d):
                if tal[r] <= 0.0 or tlam[r] <= 0.0:
                    ok = False
                    break
            if ok:
                # the residual at the trial point (its f', f'' kept in tfp, tfpp)
                rn = _ip_residual(
                    Y, cap, gamma, single, v, amass, wv, xv, m, tal, tlam,
                    nu1 + s * dn1, nu2 + s * dn2, mu, tfp, tfpp,
                )  # fmt: skip
                if rn <= (1.0 - 0.01 * s) * rnorm or s < 1e-10:
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
    return it


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
        a1 = (1.0 if Y[r] else -1.0) if r < K else 0.0
        a2 = 1.0 if (r == K or Y[r]) else 0.0
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
        a1 = (1.0 if Y[r] else -1.0) if r < K else 0.0
        a2 = 1.0 if (r == K or Y[r]) else 0.0
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
        a1 = (1.0 if Y[r] else -1.0) if r < K else 0.0
        a2 = 1.0 if (r == K or Y[r]) else 0.0
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
        a1 = (1.0 if Y[r] else -1.0) if r < K else 0.0
        a2 = 1.0 if (r == K or Y[r]) else 0.0
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
        a1 = (1.0 if Y[r] else -1.0) if r < K else 0.0
        a2 = 1.0 if (r == K or Y[r]) else 0.0
        e = fp[r] - lam[r] + nu1 * a1 + nu2 * a2
        cc = lam[r] * al[r] - mu
        tot += e * e + cc * cc
        rp1 += a1 * al[r]
        rp2 += a2 * al[r]
    return math.sqrt(tot + rp1 * rp1 + rp2 * rp2)


# ---------------------------------------------------------------------------------- one pass
@njit
def sum_relevant(tau, Y):
    s = 0.0
    for k in range(tau.shape[0]):
        if Y[k]:
            s += tau[k]
    return s


@njit
def _exact_lse(theta, r):
    R = theta.shape[0]
    mx = -np.inf
    for j in range(R):
        if theta[j, r] > mx:
            mx = theta[j, r]
    s = 0.0
    for j in range(R):
        s += math.exp(theta[j, r] - mx)
    return mx + math.log(s)


@njit
def row_scores(data, indices, indptr, i, theta, lZ, complexity, b, out):
    """s_r = <w_r, x_i> (+ b w_r[bias]) for every label r."""
    R, K = theta.shape
    d = R - 1 if b != 0.0 else R
    if complexity == EUCLID:
        row_dot_euclid(data, indices, indptr, i, theta, b, d, out)
        return
    for k in range(K):
        out[k] = 0.0
    start = indptr[i]
    off = row_offset(data, indices, start)
    for p in range(start, indptr[i + 1]):
        j = indices[p - off]
        xv = data[p]
        for k in range(K):
            out[k] += xv * math.exp(theta[j, k] - lZ[k])
    if b != 0.0:
        for k in range(K):
            out[k] += b * math.exp(theta[d, k] - lZ[k])


@njit
def rank_pass(
    data, indices, indptr, Y, weight, order, theta, lZ, st,
    complexity, update, C, gamma, b, mistakes_out, loss_out,
    scores, tau, mu, nu, amass, wv, xv, work, mark, constraint, zc, colbuf, colout, colptr,
):  # fmt: skip
    """One online pass over the rows ``order``: predict (scores), count the mistake, update.

    ``Y`` (n, K) int8 indicator rows; ``weight`` per-row multiplier of C; ``b`` the intercept
    feature's value (0: none); ``constraint`` / ``zc``: NO_CONSTRAINT, L1_BALL with radius zc or
    FLOOR with floor zc, applied to every weight vector an update changed (``colbuf``, ``colout``
    (R,) scratch, ``colptr`` = [0, R]).  ``mistakes_out[i]`` = 1 if round i was a ranking mistake,
    ``loss_out[i]`` its loss (8.1) before the update.  Returns OK or NONFINITE."""
    R, K = theta.shape
    d = R - 1 if b != 0.0 else R
    for ii in range(order.shape[0]):
        i = order[ii]
        st[T_SEEN] += 1.0
        Yi = Y[i]
        p = 0
        for k in range(K):
            if Yi[k]:
                p += 1
        row_scores(data, indices, indptr, i, theta, lZ, complexity, b, scores)
        if p == 0 or p == K:
            mistakes_out[i] = 0
            loss_out[i] = 0.0
            continue
        r0 = -1
        s0 = -1
        for k in range(K):
            if Yi[k]:
                if r0 < 0 or scores[k] < scores[r0]:
                    r0 = k
            else:
                if s0 < 0 or scores[k] > scores[s0]:
                    s0 = k
        margin = scores[r0] - scores[s0]
        mistake = margin <= 0.0
        loss = gamma - margin
        loss = loss if loss > 0.0 else 0.0
        mistakes_out[i] = 1 if mistake else 0
        loss_out[i] = loss
        if mistake:
            st[N_MISTAKES] += 1.0
        cap = C * weight[i]
        if cap <= 0.0 or loss <= 0.0 or (update == UPD_I and not mistake):
            continue
        start = indptr[i]
        end = indptr[i + 1]
        off = row_offset(data, indices, start)
        sq = b * b
        for pp in range(start, end):
            sq += data[pp] * data[pp]
        if sq <= 0.0:
            continue  # x = 0: no update can change a score
        for k in range(K):
            tau[k] = 0.0
        if complexity == EUCLID:
            if update == UPD_I:
                tau[r0] = cap
                tau[s0] = cap
            elif update == UPD_II:
                t = loss / (2.0 * sq)
                t = t if t < cap else cap
                tau[r0] = t
                tau[s0] = t
            else:
                npp = 0
                nq = 0
                for k in range(K):
                    if Yi[k]:
                        mu[npp] = (0.5 * gamma - scores[k]) / sq
                        npp += 1
                    else:
                        nu[nq] = (0.5 * gamma + scores[k]) / sq
                        nq += 1
                z, thm, thn = exact_euclid_z(mu[:npp], nu[:nq], cap)
                if z > 0.0:
                    for k in range(K):
                        if Yi[k]:
                            a = (0.5 * gamma - scores[k]) / sq - thm
                        else:
                            a = (0.5 * gamma + scores[k]) / sq - thn
                        tau[k] = a if a > 0.0 else 0.0
            gain = 0.0
            for k in range(K):
                if Yi[k]:
                    gain += tau[k]
            if gain <= 0.0:
                continue
            for pp in range(start, end):
                j = indices[pp - off]
                xv_ = data[pp]
                for k in range(K):
                    if tau[k] != 0.0:
                        theta[j, k] += (tau[k] if Yi[k] else -tau[k]) * xv_
            if b != 0.0:
                for k in range(K):
                    if tau[k] != 0.0:
                        theta[d, k] += (tau[k] if Yi[k] else -tau[k]) * b
            if constraint == L1_BALL:
                for k in range(K):
                    if tau[k] != 0.0:
                        for j in range(R):
                            colbuf[j] = theta[j, k]
                        project_l1_rows(colbuf, colptr, zc, colout)
                        for j in range(R):
                            theta[j, k] = colout[j]
            st[GAIN] += gamma * gain
            st[N_UPDATES] += 1.0
            continue
        # ---- entropy: F_r(t) = lse(theta_r + t x) - lse(theta_r) on this row
        m = end - start + (1 if b != 0.0 else 0)
        v = b if b != 0.0 else (data[start] if end > start else 0.0)
        single = True
        for pp in range(start, end):
            if data[pp] != v:
                single = False
                break
        if single:
            for k in range(K):
                amass[0, k] = scores[k] / v if v != 0.0 else 0.0
        else:
            for pp in range(start, end):
                j = indices[pp - off]
                xv[pp - start] = data[pp]
                for k in range(K):
                    wv[k, pp - start] = math.exp(theta[j, k] - lZ[k])
            if b != 0.0:
                xv[m - 1] = b
                for k in range(K):
                    wv[k, m - 1] = math.exp(theta[d, k] - lZ[k])
            for k in range(K):
                a = 0.0
                for pp in range(m):
                    a += wv[k, pp]
                amass[0, k] = a
        # the mass off the row: 1 - a, or summed exactly when that difference is unreliable
        for k in range(K):
            amass[1, k] = 1.0 - amass[0, k]
        if m >= R:
            for k in range(K):
                amass[1, k] = 0.0
        else:
            exact = False
            for k in range(K):
                if amass[1, k] < 1e-6:
                    exact = True
            if exact:
                for pp in range(start, end):
                    mark[indices[pp - off]] = 1
                if b != 0.0:
                    mark[d] = 1
                for k in range(K):
                    if amass[1, k] < 1e-6:
                        rest = 0.0
                        for j in range(R):
                            if mark[j] == 0:
                                rest += math.exp(theta[j, k] - lZ[k])
                        amass[1, k] = rest
                for pp in range(start, end):
                    mark[indices[pp - off]] = 0
                if b != 0.0:
                    mark[d] = 0
        if update == UPD_I:
            tau[r0] = cap
            tau[s0] = cap
        elif update == UPD_II:
            t = pair_line_search(r0, s0, cap, gamma, single, v, amass, wv, xv, m)
            tau[r0] = t
            tau[s0] = t
        else:
            its = ip_rank(Yi, cap, gamma, single, v, amass, wv, xv, m, tau, work)
            if its >= IP_MAX_ITER:
                # not converged (has not happened on our tests): keep the better of its point
                # and the optimal step on the most violating pair (update II)
                t = pair_line_search(r0, s0, cap, gamma, single, v, amass, wv, xv, m)
                ip_val = gamma * sum_relevant(tau, Yi)
                pair_val = gamma * t
                for k in range(K):
                    if tau[k] > 0.0:
                        ip_val -= ent_F(tau[k] if Yi[k] else -tau[k], k, single, v, amass, wv,
                                        xv, m)[0]  # fmt: skip
                pair_val -= ent_F(t, r0, single, v, amass, wv, xv, m)[0]
                pair_val -= ent_F(-t, s0, single, v, amass, wv, xv, m)[0]
                if pair_val > ip_val:
                    for k in range(K):
                        tau[k] = 0.0
                    tau[r0] = t
                    tau[s0] = t
            st[IP_CALLS] += 1.0
            st[IP_ITER_SUM] += its
            if its > st[IP_ITER_MAX]:
                st[IP_ITER_MAX] = its
        # the increase of the dual; an inexact step that would not increase it is dropped
        gain = 0.0
        incr = 0.0
        for k in range(K):
            if tau[k] > 0.0:
                sg = 1.0 if Yi[k] else -1.0
                F, g, c = ent_F(sg * tau[k], k, single, v, amass, wv, xv, m)
                mu[k] = F
                incr -= F
                if Yi[k]:
                    gain += tau[k]
        incr += gamma * gain
        if gain <= 0.0 or (update != UPD_I and incr < 0.0):
            continue
        for pp in range(start, end):
            j = indices[pp - off]
            xv_ = data[pp]
            for k in range(K):
                if tau[k] > 0.0:
                    theta[j, k] += (tau[k] if Yi[k] else -tau[k]) * xv_
        if b != 0.0:
            for k in range(K):
                if tau[k] > 0.0:
                    theta[d, k] += (tau[k] if Yi[k] else -tau[k]) * b
        for k in range(K):
            if tau[k] > 0.0:
                nz = mu[k]
                if not math.isfinite(nz) or nz < -30.0:
                    lZ[k] = _exact_lse(theta, k)  # mass left the row's coordinates: recompute
                else:
                    lZ[k] += nz
        if constraint == FLOOR:
            for k in range(K):
                if tau[k] > 0.0:
                    for j in range(R):
                        colbuf[j] = math.exp(theta[j, k] - lZ[k])
                    entropic_floor(colbuf, zc, colout)
                    for j in range(R):
                        theta[j, k] = math.log(colout[j])
                    lZ[k] = _exact_lse(theta, k)
        st[GAIN] += gamma * gain
        st[N_UPDATES] += 1.0
    for k in range(K):
        if not math.isfinite(lZ[k]):
            return NONFINITE
    return OK


@njit
def exact_normalizers(theta, lZ):
    """lZ_r = log sum_j exp(theta_jr), exactly (once per pass: the running update drifts)."""
    for r in range(theta.shape[1]):
        lZ[r] = _exact_lse(theta, r)


# ---------------------------------------------------------------------------------- max-of-hinge
@njit
def _project_capped_simplex(v, cap, out):
    """Euclidean projection of v onto {a >= 0, sum a <= cap} (Sec. 7.1: clip, or Fig. 7.1)."""
    k = v.shape[0]
    s = 0.0
    for r in range(k):
        out[r] = v[r] if v[r] > 0.0 else 0.0
        s += out[r]
    if s <= cap:
        return
    th = simplex_theta(v, 0, cap)
    for r in range(k):
        u = v[r] - th
        out[r] = u if u > 0.0 else 0.0


@njit
def max_hinge_dual(G, c, cap, tol, max_iter, alpha, work):
    """The aggressive step for the max-of-hinge loss (thesis Sec. 7.4, eq. (7.34)), Euclidean f::

        max_alpha  c . alpha - 1/2 alpha' G alpha   s.t.  alpha >= 0,  sum alpha <= cap

    with G_ij = <a_i, a_j> and c_i = b_i - <w_t, a_i>; the primal step is w = w_t + sum alpha_i a_i.
    Accelerated projected gradient (FISTA), the projection by Sec. 7.1 (the route the thesis names
    beside Fig. 7.5), stopped when the duality gap
    P - D = alpha' G alpha - c . alpha + cap [max_i (c - G alpha)_i]_+ is at most tol (1 + |D|).
    ``work`` (4, k) scratch.  Returns the number of iterations."""
    k = c.shape[0]
    Lc = 0.0
    for i in range(k):
        s = 0.0
        for j in range(k):
            s += abs(G[i, j])
        if s > Lc:
            Lc = s
    for i in range(k):
        alpha[i] = 0.0
    if Lc <= 0.0:
        # G = 0: the objective is linear; put the cap on the best positive c
        best = -1
        for i in range(k):
            if c[i] > 0.0 and (best < 0 or c[i] > c[best]):
                best = i
        if best >= 0:
            alpha[best] = cap
        return 0
    yk = work[0]
    prev = work[1]
    grad = work[2]
    Ga = work[3]
    for i in range(k):
        yk[i] = 0.0
        prev[i] = 0.0
    tk = 1.0
    it = 0
    while it < max_iter:
        it += 1
        for i in range(k):
            g = -c[i]
            for j in range(k):
                g += G[i, j] * yk[j]
            grad[i] = yk[i] - g / Lc
        for i in range(k):
            prev[i] = alpha[i]
        _project_capped_simplex(grad, cap, alpha)
        # duality gap at alpha
        quad = 0.0
        lin = 0.0
        worst = 0.0
        for i in range(k):
            s = 0.0
            for j in range(k):
                s += G[i, j] * alpha[j]
            Ga[i] = s
            quad += alpha[i] * s
            lin += c[i] * alpha[i]
            v = c[i] - s
            if v > worst:
                worst = v
        D = lin - 0.5 * quad
        gap = quad - lin + cap * worst
        if gap <= tol * (1.0 + abs(D)):
            break
        tn = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * tk * tk))
        for i in range(k):
            yk[i] = alpha[i] + (tk - 1.0) / tn * (alpha[i] - prev[i])
        tk = tn
    return it


@njit
def max_hinge_pass(Phi, y, weight, order, w, st, C, gamma, tol, max_iter, pred_out, G, c, alpha,
                   work, A):  # fmt: skip
    """One online pass of the max-of-hinge learner over dense joint features ``Phi`` (n, K, D):
    score s_r = <w, Phi[i, r]>, predict argmax, then the step of :func:`max_hinge_dual` with
    a_r = Phi[i, y] - Phi[i, r] and b_r = gamma for the rivals r != y (K - 1 of them)."""
    n, K, D = Phi.shape
    for ii in range(order.shape[0]):
        i = order[ii]
        st[T_SEEN] += 1.0
        yi = y[i]
        best = 0
        bs = -np.inf
        sy = 0.0
        for r in range(K):
            s = 0.0
            for j in range(D):
                s += w[j] * Phi[i, r, j]
            if s > bs:
                bs = s
                best = r
            if r == yi:
                sy = s
            c[r] = s  # scores, for now
        pred_out[i] = best
        mistake = False
        for r in range(K):
            if r != yi and c[r] >= sy:
                mistake = True
        if mistake:
            st[N_MISTAKES] += 1.0
        cap = C * weight[i]
        if K < 2 or cap <= 0.0:
            continue
        # rivals r != y: a_r = Phi_y - Phi_r, c_r = gamma - (s_y - s_r)
        q = 0
        anyloss = False
        for r in range(K):
            if r == yi:
                continue
            for j in range(D):
                A[q, j] = Phi[i, yi, j] - Phi[i, r, j]
            c[q] = gamma - (sy - c[r])
            if c[q] > 0.0:
                anyloss = True
            q += 1
        if not anyloss:
            continue
        for a in range(q):
            for b in range(a, q):
                s = 0.0
                for j in range(D):
                    s += A[a, j] * A[b, j]
                G[a, b] = s
                G[b, a] = s
        its = max_hinge_dual(G[:q, :q], c[:q], cap, tol, max_iter, alpha[:q], work[:, :q])
        if its > st[IP_ITER_MAX]:
            st[IP_ITER_MAX] = its
        moved = False
        for a in range(q):
            if alpha[a] > 0.0:
                moved = True
                for j in range(D):
                    w[j] += alpha[a] * A[a, j]
        if moved:
            st[N_UPDATES] += 1.0
    return OK
