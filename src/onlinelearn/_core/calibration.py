"""Compiled sums of the probability calibration's Newton iterations
(:mod:`onlinelearn.shell.calibration`): one sweep over the window per iteration, no
temporaries (the numpy form built five (n, K) arrays per iteration: 2.5 of the 8 ms that the
calibration added to a first ``partial_fit`` over news20; for the binary map, a dozen numpy
calls per iteration made the refit of a9a's window most of a 1,000-row call's overhead)."""

from __future__ import annotations

import numpy as np

from .config import njit

#: the counters of a calibration window (``onlinelearn.shell.calibration.Calibration._n``)
CAL_HEAD = 0
CAL_COUNT = 1
CAL_SINCE_FIT = 2
CAL_AT_FIT = 3
CAL_OFFERED = 4
CAL_N = 5
#: the map is refitted when this many new rows arrived (or as many as it had, at the start)
CAL_REFIT = 256


@njit
def temperature_grad_hess(a, S, D, w, ts):
    """(g, h): the first and second derivative in a of the weighted log loss of softmax(a s)
    against the targets t, sum_i w_i [log sum_k e^{a s_ik} - a <t_i, s_i>]:

        g = sum_i w_i (E_p[s_i] - <t_i, s_i>),   h = sum_i w_i Var_p[s_i],

    p_i = softmax(a s_i).  ``S`` (n, K) the scores, ``D`` = S minus each row's maximum (so
    e^{a D} <= 1 never overflows; the softmax and the variance do not change), ``ts`` the
    <t_i, s_i>; a variance that rounding made negative counts as 0."""
    n, K = S.shape
    g = 0.0
    h = 0.0
    for i in range(n):
        z = 0.0
        m1 = 0.0
        md = 0.0
        md2 = 0.0
        for k in range(K):
            dk = D[i, k]
            e = np.exp(a * dk)
            z += e
            m1 += e * S[i, k]
            md += e * dk
            md2 += e * dk * dk
        mean = m1 / z
        var = md2 / z - (md / z) ** 2
        g += w[i] * (mean - ts[i])
        if var > 0.0:
            h += w[i] * var
    return g, h


@njit
def slope_grad_hess(b, u, w, t):
    """(g, h): the first and second derivative in b of the weighted log loss of
    p_i = sigma(b u_i) against the targets t_i, sum_i w_i [log(1 + e^{b u_i}) - t_i b u_i]:

        g = sum_i w_i u_i (p_i - t_i),   h = sum_i w_i u_i^2 p_i (1 - p_i)

    (one side of the two-slope Platt map; sigma evaluated without overflow for any b u)."""
    g = 0.0
    h = 0.0
    for i in range(u.shape[0]):
        z = b * u[i]
        if z >= 0.0:
            e = np.exp(-z)
            p = 1.0 / (1.0 + e)
        else:
            e = np.exp(z)
            p = e / (1.0 + e)
        g += w[i] * u[i] * (p - t[i])
        h += w[i] * u[i] * u[i] * p * (1.0 - p)
    return g, h

