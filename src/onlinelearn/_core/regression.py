"""Online regression: PA with the eps-insensitive loss, the squared-loss proximal step, RLS.

Thesis Sec. 5.3.1; Crammer et al. (2006), Sec. 5.  The weights are one vector ``w`` of length
R = d (+1 with an intercept: entry d is the bias, the weight of a constant feature ``b``).

Per round t (row x_t, target y_t, prediction yhat = <w, x_t>):

eps-insensitive PA (``EPS_PA1`` / ``EPS_PA2``; PA is ``EPS_PA1`` with C = inf)::

    ell = [|yhat - y_t| - eps]_+
    PA-I:  tau = min(C, ell / ||x||^2)          min 1/2 ||w - w_t||^2 + C xi
    PA-II: tau = ell / (||x||^2 + 1/(2C))       min 1/2 ||w - w_t||^2 + C xi^2
                                                s.t. |<w, x_t> - y_t| <= eps + xi (xi >= 0)
    w_{t+1} = w_t + sign(y_t - yhat) tau x_t

squared loss, proximal step (``SQUARED``)::

    w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C/2 (<w, x_t> - y_t)^2
            = w_t - tau x_t,  tau = C (yhat - y_t) / (1 + C ||x||^2)

i.e. the aggressive dual step of Sec. 5.2 for g_t(w) = 1/2 (<w, x> - y)^2 with c = 1/C (the
normalised LMS step).  ``weight`` (sample weight) multiplies C.  ||x||^2 includes b^2.

Recursive least squares (:func:`rls_pass`) keeps P = (alpha I + sum_i s_i x_i x_i^T)^{-1} and
w = P sum_i s_i y_i x_i, the exact weighted ridge solution after every round (Sherman-Morrison:
O(R^2) per row).

Averaging: with U = sum_t t Delta_t (Delta_t the change of round t, t counted over the whole
life of the model), the mean of the iterates w_2 .. w_{T+1} is ((T + 1) w_{T+1} - U) / T.

State scalars ``st``: ``T`` rounds seen, ``N_UPDATES`` rounds whose weights changed.
"""

from __future__ import annotations

import math

import numpy as np

from .._config import njit
from .sparse import row_offset, row_sqnorm

EPS_PA1 = 0
EPS_PA2 = 1
SQUARED = 2

T = 0
N_UPDATES = 1
N_ST = 2


@njit
def row_dot(data, indices, indptr, i, w, b, d):
    """<w, x_i> (+ b w_d for the intercept feature)."""
    s = 0.0
    start = indptr[i]
    off = row_offset(data, indices, start)
    for p in range(start, indptr[i + 1]):
        s += data[p] * w[indices[p - off]]
    if b != 0.0:
        s += b * w[d]
    return s


@njit
def all_finite(w):
    """True when every entry of w is finite."""
    for j in range(w.shape[0]):
        if not math.isfinite(w[j]):
            return False
    return True


@njit
def regression_step(loss_code, resid, sqnorm, C, eps, weight):
    """Signed step: w_{t+1} = w_t + step * x_t.  ``resid`` = y_t - <w_t, x_t>."""
    if weight <= 0.0 or sqnorm <= 0.0:
        return 0.0
    cw = C * weight
    if loss_code == SQUARED:
        if cw == math.inf:
            return resid / sqnorm
        return cw * resid / (1.0 + cw * sqnorm)
    ell = abs(resid) - eps
    if ell <= 0.0:
        return 0.0
    if loss_code == EPS_PA1:
        tau = ell / sqnorm
        if cw < tau:
            tau = cw
    else:
        tau = ell / (sqnorm + 0.5 / cw)
    return tau if resid > 0.0 else -tau


@njit
def _axpy(data, indices, indptr, i, a, w, b, d):
    start = indptr[i]
    off = row_offset(data, indices, start)
    for p in range(start, indptr[i + 1]):
        w[indices[p - off]] += a * data[p]
    if b != 0.0:
        w[d] += a * b


@njit
def regression_pass(
    data, indices, indptr, y, weight, order, w, U, st, loss_code, C, eps, b, average, pred_out
):
    """One pass over the rows ``order``; ``pred_out[i]`` = <w, x_i> before the update of row i.

    Returns False when a weight became non-finite (the caller restores its snapshot)."""
    R = w.shape[0]
    d = R - 1 if b != 0.0 else R
    for ii in range(order.shape[0]):
        i = order[ii]
        yhat = row_dot(data, indices, indptr, i, w, b, d)
        pred_out[i] = yhat
        st[T] += 1.0
        step = regression_step(
            loss_code, y[i] - yhat, row_sqnorm(data, indptr, i, b), C, eps, weight[i]
        )
        if step != 0.0:
            if not math.isfinite(step):
                return False
            _axpy(data, indices, indptr, i, step, w, b, d)
            if average:
                _axpy(data, indices, indptr, i, step * st[T], U, b, d)
            st[N_UPDATES] += 1.0
    return all_finite(w)


@njit
def regression_pass_dense(X, y, weight, order, w, U, st, loss_code, C, eps, b, average, pred_out):
    """:func:`regression_pass` for a dense C-contiguous X (n, d): contiguous rows, no index
    gather, so that the dot products and updates vectorise."""
    R = w.shape[0]
    n_feat = X.shape[1]
    d = R - 1 if b != 0.0 else R
    for ii in range(order.shape[0]):
        i = order[ii]
        yhat = 0.0
        sq = b * b
        for j in range(n_feat):
            v = X[i, j]
            yhat += v * w[j]
            sq += v * v
        if b != 0.0:
            yhat += b * w[d]
        pred_out[i] = yhat
        st[T] += 1.0
        step = regression_step(loss_code, y[i] - yhat, sq, C, eps, weight[i])
        if step != 0.0:
            if not math.isfinite(step):
                return False
            for j in range(n_feat):
                w[j] += step * X[i, j]
            if b != 0.0:
                w[d] += step * b
            if average:
                a = step * st[T]
                for j in range(n_feat):
                    U[j] += a * X[i, j]
                if b != 0.0:
                    U[d] += a * b
            st[N_UPDATES] += 1.0
    return all_finite(w)


@njit
def rls_pass(data, indices, indptr, y, weight, order, w, P, st, b, pred_out, Px):
    """Recursive least squares over the rows ``order`` (``Px`` scratch of length R)."""
    R = w.shape[0]
    d = R - 1 if b != 0.0 else R
    for ii in range(order.shape[0]):
        i = order[ii]
        yhat = row_dot(data, indices, indptr, i, w, b, d)
        pred_out[i] = yhat
        st[T] += 1.0
        s = weight[i]
        if s <= 0.0:
            continue
        # Px = P x (P symmetric: combine the columns of the row's nonzeros)
        for r in range(R):
            Px[r] = 0.0
        start = indptr[i]
        off = row_offset(data, indices, start)
        for p in range(start, indptr[i + 1]):
            j = indices[p - off]
            v = data[p]
            for r in range(R):
                Px[r] += P[r, j] * v
        if b != 0.0:
            for r in range(R):
                Px[r] += P[r, d] * b
        xPx = 0.0
        for p in range(start, indptr[i + 1]):
            xPx += data[p] * Px[indices[p - off]]
        if b != 0.0:
            xPx += b * Px[d]
        denom = 1.0 + s * xPx
        if not (denom > 0.0 and math.isfinite(denom)):
            return False
        g = s * (y[i] - yhat) / denom
        for r in range(R):
            w[r] += g * Px[r]
        f = s / denom
        for r in range(R):
            a = f * Px[r]
            if a != 0.0:
                for q in range(R):
                    P[r, q] -= a * Px[q]
        st[N_UPDATES] += 1.0
    return all_finite(w)


def empty_state(n_rows, average, rls, alpha):
    """Fresh arrays (w, U, P, st) for R = ``n_rows`` weights."""
    w = np.zeros(n_rows)
    U = np.zeros(n_rows) if average else np.zeros(1)
    P = np.eye(n_rows) / alpha if rls else np.zeros((1, 1))
    return w, U, P, np.zeros(N_ST)
