"""The step of one round of the tuned kernel (:mod:`.dual_tuned`): the scaled conjugate
c f*(V / c) of the Euclidean, entropy and p-norm links, the margin <grad f*((V + a u) / c), u>
along an update u, and the maximisers of the round's dual in its variable a (closed forms on
the Euclidean link and, for the hinge, on the entropy link; bisections otherwise), with the
value D_t of the dual recomputed for checks."""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .dense import sum_squares
from .links import ENTROPY, EUCLID


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
