"""The primal and dual objectives of one binary DCD problem, evaluated for the duality gap.

P(w) = 1/2 ||w||^2 + sum_i C_i loss_i(w) and D(alpha) = sum_i alpha_i - 1/2 ||w(alpha)||^2
(- the L2 term of the squared hinge); :func:`binary_objectives` sweeps every nonzero,
:func:`binary_objectives_screened` only the rows whose cached margins cannot decide their loss
(see :mod:`.dcd_binary`, which calls them at each evaluation).
"""

from __future__ import annotations

import numpy as np

from ..config import njit
from .dcd_common import node_axpy, node_dot, row_dot

#: relative slack on a cached margin for rounding (an example this close to 1 is recomputed)
MARGIN_SAFETY = 1e-9

@njit
def binary_objectives(data, indices, indptr, b, ycodes, pos, Ci, l2, alpha_k, w):
    """(primal, dual) of one binary problem (class ``pos`` against the rest) at (w, alpha_k),
    by a pass over every example; ``w`` is taken as given (it equals w(alpha_k) up to
    rounding)."""
    n = indptr.shape[0] - 1
    R = w.shape[0]
    d = R - 1 if b != 0.0 else R
    wsq = 0.0
    for j in range(R):
        wsq += w[j] * w[j]
    loss = 0.0
    asum = 0.0
    a2 = 0.0
    for i in range(n):
        c = Ci[i]
        if c <= 0.0:
            continue
        z = row_dot(data, indices, indptr, i, w, b, d)
        xi = 1.0 - z if ycodes[i] == pos else 1.0 + z
        if xi > 0.0:
            loss += c * (xi * xi if l2 else xi)
        a = alpha_k[i]
        asum += a
        if l2:
            a2 += a * a / (4.0 * c)
    return 0.5 * wsq + loss, asum - 0.5 * wsq - a2


#: the per-example record of one binary problem: alpha_i, y_i, Qbar_ii, C_i
S_ALPHA, S_Y, S_QD, S_C = range(4)


@njit
def binary_objectives_screened(
    nodes, ptr, l2, base, xn, st, w, wd, marg, mchain, wsnap, chain, vC, csum, atc, full
):  # fmt: skip
    """(P(w), D(alpha), work) of one binary problem, ``wd`` = w(alpha) (``w`` may be another
    point, e.g. an average of earlier w(alpha)), reading only the rows whose
    loss the cached margins ``marg`` do not settle (all of them when ``full``).
    ``st[i]`` = (alpha_i, y_i, Qbar_ii, C_i), ``xn[i]`` = (||x_i||_2, ||x_i||_1);
    ``marg[i]`` was computed when the chain of displacements between evaluations had the
    lengths ``mchain[i]`` (2-norm, max-norm); the chain has the lengths ``chain`` at the
    weights ``wsnap`` of the last evaluation (both are brought to ``w``).
    ``vC``, ``csum[0]`` (L1): sum of C_i y_i x_i and of C_i over the examples with
    ``atc[i]``; brought up to date here (an example whose alpha_i reached or left C_i since
    the last evaluation is added or removed: one row read per net change, however often
    alpha_i went to C_i and back in between).
    Equals :func:`binary_objectives` up to rounding."""
    R = w.shape[0]
    wsq = 0.0
    wdsq = 0.0
    dist = 0.0
    dmax = 0.0
    for j in range(R):
        wsq += w[j] * w[j]
        wdsq += wd[j] * wd[j]
        dw = abs(w[j] - wsnap[j])
        dist += dw * dw
        if dw > dmax:
            dmax = dw
        wsnap[j] = w[j]
    chain[0] += np.sqrt(dist)
    chain[1] += dmax
    c2 = chain[0]
    ci = chain[1]
    loss = 0.0
    asum = 0.0
    a2 = 0.0
    work = 0
    for s in range(base.shape[0]):
        i = base[s]
        a = st[i, S_ALPHA]
        c = st[i, S_C]
        asum += a
        m = marg[i]
        slack = min(xn[i, 0] * (c2 - mchain[i, 0]), xn[i, 1] * (ci - mchain[i, 1]))
        slack += MARGIN_SAFETY * (1.0 + abs(m))
        if l2:
            a2 += a * a / (4.0 * c)
        # L1 at alpha_i = C_i: counted as C_i (1 - m_i) above, C_i (m_i - 1) is added where
        # the margin exceeds 1; otherwise the loss is zero where the margin exceeds 1
        at_c = not l2 and a == c
        if at_c != atc[i]:
            f = c if at_c else -c
            node_axpy(nodes, ptr, i, f * st[i, S_Y], vC)
            csum[0] += f
            atc[i] = at_c
            work += ptr[i + 1] - ptr[i]
        if not full and (m + slack <= 1.0 if at_c else m - slack >= 1.0):
            continue
        m = st[i, S_Y] * node_dot(nodes, ptr, i, w)
        work += ptr[i + 1] - ptr[i]
        marg[i] = m
        mchain[i, 0] = c2
        mchain[i, 1] = ci
        if at_c:
            if m > 1.0:
                loss += c * (m - 1.0)
        elif m < 1.0:
            loss += c * ((1.0 - m) * (1.0 - m) if l2 else 1.0 - m)
    if not l2:
        # L1: sum over alpha_i = C_i of C_i (1 - m_i) = sum C_i - <w, v>
        lin = 0.0
        for j in range(R):
            lin += w[j] * vC[j]
        loss += csum[0] - lin
    return 0.5 * wsq + loss, asum - 0.5 * wdsq - a2, work + base.shape[0] + R


