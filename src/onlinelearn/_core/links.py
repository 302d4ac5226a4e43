"""Complexity functions f and their links w = grad f*(theta)  (thesis Sec. 5.1, Fig. 5.1).

Every link here has the form ``w_jk = s(theta) * phi(theta_jk)``: a coordinate-wise map phi
times one global scale s.  That shape is what makes lazy averaging O(nnz) per update for all of
them (see :mod:`.online_loop`).

=========  ===========================  ===================================  =====================
code       f(w)                         phi(v)                               s(theta)
=========  ===========================  ===================================  =====================
EUCLID     1/2 ||w||_2^2                v                                    1
ENTROPY    sum_i w_i log(n w_i) on the  exp(v - m); balanced:                1 / Z
           simplex (relative entropy)   exp(v - m) - exp(-v - m)
PNORM      1/(2(q-1)) ||w||_q^2         sign(v) |v|^(p-1)                    1 / ((p-1)
                                                                             ||theta||_p^(p-2))
SELFTUNED  as ENTROPY, c_t tuned        exp(v/c_t - m_t)  (Fig. 5.2)         1 (unnormalised)
=========  ===========================  ===================================  =====================

``Z = sum_i exp(theta_i - m)`` over all weights (both signs when balanced), ``m`` a shift that
keeps ``exp`` finite and cancels in ``w`` (eq. 5.6: grad f* is the softmax).  *Balanced* Winnow runs
the entropy link on the doubled instance ``[x, -x]`` (Littlestone's balanced Winnow / EG+-), so
that weights of both signs can be represented; with ``balanced=False`` weights stay positive as in
eq. (5.4).  For p = 2 the p-norm link is the identity (the Perceptron).
"""

from __future__ import annotations

import math

from .config import njit

EUCLID = 0
ENTROPY = 1
PNORM = 2
SELFTUNED = 3


@njit
def phi(link, v, m, p, balanced):
    """Coordinate-wise part of the link (see the module table)."""
    if link == EUCLID:
        return v
    if link == ENTROPY or link == SELFTUNED:
        if balanced:
            return math.exp(v - m) - math.exp(-v - m)
        return math.exp(v - m)
    # PNORM
    if v == 0.0:
        return 0.0
    a = abs(v) ** (p - 1.0)
    return a if v > 0.0 else -a


@njit(inline="always")
def link_term(t, k, targs):
    """phi(link, t / c_t, m, p, balanced) with ``targs`` = (link, c_t, m, p, balanced): the
    weight of one coordinate t = theta_jk, as :func:`.sparse.row_dot_map` takes it (c_t = 1
    but for the self-tuned link)."""
    link, c_t, m, p, balanced = targs
    return phi(link, t / c_t, m, p, balanced)


@njit
def agg_term(link, v, m, p, balanced):
    """Contribution of one weight to the aggregate that defines s: Z (entropy) or |v|^p."""
    if link == ENTROPY:
        if balanced:
            return math.exp(v - m) + math.exp(-v - m)
        return math.exp(v - m)
    if link == PNORM:
        return abs(v) ** p
    return 0.0


@njit
def scale(link, agg, p):
    """The global scale s(theta) from the aggregate."""
    if link == ENTROPY:
        return 1.0 / agg if agg > 0.0 else 0.0
    if link == PNORM:
        if agg <= 0.0:
            return 0.0
        return 1.0 / ((p - 1.0) * agg ** ((p - 2.0) / p))
    return 1.0
