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

State scalars ``st``: ``T`` rounds seen, ``N_UPDATES`` rounds whose weights changed, ``DUAL``
the dual objective D kept as the sum of the rounds' increments (:func:`dual_increment`; the
closed-form passes add it, the shell sets NaN after a pass whose configuration keeps none).

The kept dual.  With alpha_t = ``step`` of round t (the signed step: w_{t+1} = w_t + alpha_t x_t,
so w = sum_t alpha_t x_t from w = 0) and C_t = C times the row's weight, the batch problem over
every round so far (all epochs and calls) and its dual are::

    P(w) = 1/2 ||w||^2 + sum_t C_t [|y_t - <w, x_t>| - eps]_+          (PA-I; PA: C_t = inf,
                                                                         i.e. hard constraints)
    P(w) = 1/2 ||w||^2 + sum_t C_t [|y_t - <w, x_t>| - eps]_+^2        (PA-II)
    P(w) = 1/2 ||w||^2 + sum_t C_t / 2 (y_t - <w, x_t>)^2              (squared, proximal)

    D(alpha) = sum_t (alpha_t y_t - eps |alpha_t| - q(alpha_t)) - 1/2 ||sum_t alpha_t x_t||^2,
    q = 0 (PA, PA-I; |alpha_t| <= C_t), alpha^2 / (4 C_t) (PA-II), alpha^2 / (2 C_t) (squared)

so the round's increment D(.., alpha_t) - D(.., 0) is, with r = y_t - <w_t, x_t>::

    alpha r - eps |alpha| - q(alpha) - 1/2 alpha^2 ||x_t||^2
    (eps-insensitive: = tau ell_t - 1/2 tau^2 ||x_t||^2 [- tau^2 / (4 C_t)], tau = |alpha|,
     ell_t = |r| - eps, the form of the classifiers' ``state.dual_increment``)

and D <= P(w) for every w (weak duality).  x and ||x||^2 include the intercept feature ``b``,
a regularised weight like the others.  Averaging changes nothing in D.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .fp import finite
from .projected_pass import NO_CONSTRAINT, project_column
from .sparse import row_dot_euclid, row_offset, row_sqnorm

EPS_PA1 = 0
EPS_PA2 = 1
SQUARED = 2

T = 0
N_UPDATES = 1
DUAL = 2
N_ST = 3


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
        if not finite(w[j]):
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


@njit(inline="always")
def dual_increment(loss_code, step, resid, sqnorm, C, eps, weight):
    """The rise of the kept dual D when round t takes alpha_t = ``step`` (module docstring):
    alpha r - eps |alpha| - q(alpha) - 1/2 alpha^2 ||x||^2, ``resid`` = r = y_t - <w_t, x_t>,
    q = alpha^2 / (4 C_t) (PA-II), alpha^2 / (2 C_t) (squared), 0 (PA-I, PA), C_t = C weight.
    Only called with step != 0 (so weight > 0)."""
    inc = step * resid - 0.5 * step * step * sqnorm
    if loss_code == SQUARED:
        return inc - 0.5 * step * step / (C * weight)  # 0 when C = inf
    inc -= eps * abs(step)
    if loss_code == EPS_PA2:
        inc -= 0.25 * step * step / (C * weight)
    return inc


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
    data, indices, indptr, y, weight, order, w, U, st, loss_code, C, eps, b, average, pred_out,
    constraint, z, buf,
):  # fmt: skip
    """One pass over the rows ``order``; ``pred_out[i]`` = <w, x_i> before the update of row i.

    ``constraint`` (a :mod:`.projected_pass` code; NO_CONSTRAINT: none): after every update
    w is projected onto the l1 ball or the simplex of radius ``z`` (the projected update;
    ``buf``: float64 scratch of length 2 R).  With ``average`` the projection's move counts in
    the round's change Delta_t.

    Returns False when a weight became non-finite (the caller restores its snapshot)."""
    R = w.shape[0]
    d = R - 1 if b != 0.0 else R
    for ii in range(order.shape[0]):
        i = order[ii]
        yhat = row_dot(data, indices, indptr, i, w, b, d)
        pred_out[i] = yhat
        st[T] += 1.0
        resid = y[i] - yhat
        sq = row_sqnorm(data, indptr, i, b)
        step = regression_step(loss_code, resid, sq, C, eps, weight[i])
        if step != 0.0:
            if not finite(step):
                return False
            # (with a constraint the shell replaces D by NaN after the pass)
            st[DUAL] += dual_increment(loss_code, step, resid, sq, C, eps, weight[i])
            if constraint != NO_CONSTRAINT and average:
                for j in range(R):
                    buf[R + j] = w[j]
            _axpy(data, indices, indptr, i, step, w, b, d)
            if constraint != NO_CONSTRAINT:
                project_column(w.reshape((R, 1)), 0, constraint, z, buf[:R])
                if average:
                    for j in range(R):
                        U[j] += st[T] * (w[j] - buf[R + j])
            elif average:
                _axpy(data, indices, indptr, i, step * st[T], U, b, d)
            st[N_UPDATES] += 1.0
    return all_finite(w)


OK = 0
NONFINITE_WEIGHTS = 1
NONFINITE_INPUT = 2

#: Below this many features the dense pass sums in four interleaved accumulators: a loop the
#: compiler vectorises 16 wide never runs for 13 features, and one serial chain of 13
#: multiply-adds is the latency of the whole round (adult, sleep: 1.35 -> 0.87 ms per epoch).
_UNROLL_BELOW = 32


@njit(inline="always")
def dense_dot_sqnorm(X, i, w, n_feat):
    """(<w[:n_feat], X[i]>, ||X[i]||^2) in one sweep of the row."""
    if n_feat >= _UNROLL_BELOW:
        s = 0.0
        q = 0.0
        for j in range(n_feat):
            v = np.float64(X[i, j])
            s += v * w[j]
            q += v * v
        return s, q
    n4 = n_feat - n_feat % 4
    s0 = s1 = s2 = s3 = 0.0
    q0 = q1 = q2 = q3 = 0.0
    for j in range(0, n4, 4):
        v0 = np.float64(X[i, j])
        v1 = np.float64(X[i, j + 1])
        v2 = np.float64(X[i, j + 2])
        v3 = np.float64(X[i, j + 3])
        s0 += v0 * w[j]
        s1 += v1 * w[j + 1]
        s2 += v2 * w[j + 2]
        s3 += v3 * w[j + 3]
        q0 += v0 * v0
        q1 += v1 * v1
        q2 += v2 * v2
        q3 += v3 * v3
    for j in range(n4, n_feat):
        v = np.float64(X[i, j])
        s0 += v * w[j]
        q0 += v * v
    return (s0 + s1) + (s2 + s3), (q0 + q1) + (q2 + q3)


@njit
def dense_row_finite(X, i):
    """True when every entry of row i is finite."""
    for j in range(X.shape[1]):
        if not finite(X[i, j]):
            return False
    return True


@njit
def regression_pass_dense(X, y, weight, order, w, U, st, loss_code, C, eps, b, average, pred_out):
    """:func:`regression_pass` for a dense C-contiguous X (n, d): contiguous rows, no index
    gather, so that the dot products and updates vectorise.

    ``order`` of length 0 means the rows in their order, ``weight`` of length 0 unit weights
    (no index array or vector of ones to build per call).  X is not checked beforehand: a NaN
    or infinite entry makes ||x_i||^2 non-finite, and only then is the row looked at (a finite
    row whose squared norm overflows goes on as before).  Returns ``OK``, ``NONFINITE_WEIGHTS``
    or ``NONFINITE_INPUT`` (the caller restores its snapshot in both failure cases)."""
    # one inlined copy of the pass per loss, so that the step's branches on the loss fold away
    # (adult: 1.26 -> 0.98 ms per epoch)
    if loss_code == EPS_PA1:
        return _dense_pass(X, y, weight, order, w, U, st, EPS_PA1, C, eps, b, average, pred_out)
    if loss_code == EPS_PA2:
        return _dense_pass(X, y, weight, order, w, U, st, EPS_PA2, C, eps, b, average, pred_out)
    return _dense_pass(X, y, weight, order, w, U, st, SQUARED, C, eps, b, average, pred_out)


@njit(inline="always")
def _dense_pass(X, y, weight, order, w, U, st, loss_code, C, eps, b, average, pred_out):
    """The body of :func:`regression_pass_dense` (``loss_code`` a constant at each call)."""
    R = w.shape[0]
    n_feat = X.shape[1]
    d = R - 1 if b != 0.0 else R
    n = order.shape[0] if order.shape[0] > 0 else X.shape[0]
    unit = weight.shape[0] == 0
    bb = b * b
    t = st[T]  # local counters: stores into st would alias w for the compiler
    n_upd = st[N_UPDATES]
    dual = st[DUAL]
    status = OK
    for ii in range(n):
        i = order[ii] if order.shape[0] > 0 else ii
        yhat, sq = dense_dot_sqnorm(X, i, w, n_feat)
        sq += bb
        if not sq < math.inf and not dense_row_finite(X, i):
            status = NONFINITE_INPUT
            break
        if b != 0.0:
            yhat += b * w[d]
        pred_out[i] = yhat
        t += 1.0
        resid = y[i] - yhat
        wi = 1.0 if unit else weight[i]
        step = regression_step(loss_code, resid, sq, C, eps, wi)
        if step != 0.0:
            if not finite(step):
                status = NONFINITE_WEIGHTS
                break
            dual += dual_increment(loss_code, step, resid, sq, C, eps, wi)
            for j in range(n_feat):
                w[j] += step * X[i, j]
            if b != 0.0:
                w[d] += step * b
            if average:
                a = step * t
                for j in range(n_feat):
                    U[j] += a * X[i, j]
                if b != 0.0:
                    U[d] += a * b
            n_upd += 1.0
    st[T] = t
    st[N_UPDATES] = n_upd
    st[DUAL] = dual
    if status == OK and not all_finite(w):
        status = NONFINITE_WEIGHTS
    return status


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
        # Px = P x (P symmetric: combine the columns of the row's nonzeros, the rows of P')
        row_dot_euclid(data, indices, indptr, i, P.T, b, d, Px)
        xPx = row_dot(data, indices, indptr, i, Px, b, d)
        denom = 1.0 + s * xPx
        if not (denom > 0.0 and finite(denom)):
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
    return w, U, P, np.zeros(N_ST)  # D = 0: the dual at alpha = 0
