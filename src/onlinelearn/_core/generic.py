"""Generic compiled steps and passes for any convex loss given by its value and derivative.

The aggressive step (Euclidean link).  With the margin z_t(w) (classification: y <w, x>, or
<w_y, x> - <w_r, x> for the max-loss rival r) the update w' = w_t + tau u moves along
u = y x (binary) or (x on column y, -x on column r), so that z_t(w') = z0 + tau q with
q = kappa ||x||^2 (kappa = 1 binary, 2 for two columns).  The problem of the round::

    tau* = argmin_tau  1/2 tau^2 ||u||^2 + C l(z0 + tau q)          (PA-I)
           argmin_tau  1/2 tau^2 ||u||^2 + C l(z0 + tau q)^2        (PA-II)

is the 1-D dual of ``w' = argmin_w 1/2 ||w - w_t||^2 + C l(z_t(w))`` restricted to the new dual
variable alpha = tau (thesis eq. 5.14 with f = 1/2 ||.||^2).  Its optimality condition is the
root of the nondecreasing function::

    g(tau) = tau + C dl(z0 + tau q),    dl = l'  (PA-I)  or  2 l l'  (PA-II)

(l convex makes dl nondecreasing; at a kink any subgradient).  g(0) = C dl(z0) and
g(tau1) has the other sign at tau1 = -C dl(z0), so [0, tau1] brackets the root, which
:func:`onlinelearn._core.steps.root_tau` finds: one probe at the zero of the loss's tangent,
then regula falsi with the Illinois modification, forced to bisect whenever a step fails to
halve the bracket, until the bracket is 1e-15 relative or a few ulps wide (at most about
2 x 1100 evaluations, in practice 2-60).  For the hinge g jumps at the kink and the root is the
jump: tau* = min(C, [gamma - z0]_+ / q), PA-I's closed form (eq. 7.11).  The entropy and
p-norm links solve the same condition with their nonlinear margin z(tau) in their own pass
(:func:`onlinelearn._core.steps.aggressive_link_step`).

For a residual loss l(r), r = <w, x> - y, the same solve runs with z0 = r0 and u = x
(w' = w_t + tau x moves the residual by tau ||x||^2).

The conservative step: on a mistake (z0 <= 0; a residual loss: l(r0) > 0) tau = -eta l'(z0),
a subgradient step (thesis eq. 5.13; the Perceptron for the hinge).

The passes keep the state layout of :mod:`onlinelearn._core.euclid_pass` (classification) and
:mod:`onlinelearn._core.regression` (regression), so the shells' read-out, averaging, model
files and checks apply unchanged.  The loss functions arrive as first-class compiled functions
(``numba.cfunc`` of signature float64(float64)), so each pass is compiled once for every loss
and cached on disk.
"""

from __future__ import annotations

import numpy as np

from .config import njit
from .euclid_pass import move_entry, move_two, round_weight
from .fp import finite
from .margins import predict_margin_loss
from .prefetch import PREFETCH_MIN_ENTRIES, prefetch_entries, prefetch_rows
from .sparse import row_offset, row_scores_sqnorm
from .state import N_MISTAKES, N_ROUNDS, N_UPDATES, S_SUM, pass_params
from .steps import CONSERVATIVE, PA2, root_tau

OK = 0
NONFINITE = 1


@njit
def aggressive_tau(value, deriv, z0, q, cap, squared):
    """The root tau* of g(tau) = tau + cap dl(z0 + tau q) (module docstring); 0 when q or cap
    is 0; NaN/inf when the loss's derivative is not finite."""
    if q <= 0.0 or cap <= 0.0:
        return 0.0
    return root_tau(value, deriv, z0, q, cap, squared, None)


@njit
def margin_step(value, deriv, step, z0, q, C, eta, weight, residual):
    """tau of one round (0: no update) for the step code ``step`` (CONSERVATIVE, PA1, PA2);
    z0 is the margin, or the residual <w, x> - y (``residual``: the conservative step then
    updates when the loss is positive, not on a margin mistake)."""
    if weight <= 0.0:
        return 0.0
    if step == CONSERVATIVE:
        if residual:
            if value(z0) <= 0.0:
                return 0.0
        elif z0 > 0.0:
            return 0.0
        return -eta * weight * deriv(z0)
    return aggressive_tau(value, deriv, z0, q, C * weight, step == PA2)


@njit
def margin_pass(
    data, indices, indptr, y, weight, order, theta, U, st, ip, fp, pred_out, loss_out, scores,
    value, deriv,
):  # fmt: skip
    """One pass of a margin-loss learner on the Euclidean link over the rows ``order``.

    State as :func:`onlinelearn._core.euclid_pass.euclid_pass` (theta (R, K), U the averaging
    sum, st the named scalars; one column for a binary learner).  ``loss_out[i]`` is l(z0) of
    row i before its update.  Returns :data:`NONFINITE` when a step is not finite."""
    _, step, average, _, _, _, C, _, eta, _, b, _, _, _, power = pass_params(ip, fp)
    R, K = theta.shape
    d = R - 1 if b != 0.0 else R
    binary = K == 1
    kappa = 1.0 if binary else 2.0
    pf_theta = theta.size >= PREFETCH_MIN_ENTRIES
    n = order.shape[0]
    for ii in range(n):
        i = order[ii]
        yi = y[i]
        start = indptr[i]
        stop = indptr[i + 1]
        off = row_offset(data, indices, start)
        S_avg = st[S_SUM]
        # the memory requests of the closed-form pass (onlinelearn._core.euclid_pass): the
        # entries of the row after next in a shuffled order, the weights of the next row
        if ii + 2 < n and order[ii + 2] != order[ii + 1] + 1:
            prefetch_entries(data, indices, indptr, order[ii + 2])
        if pf_theta and ii + 1 < n:
            prefetch_rows(data, indices, indptr, order[ii + 1], theta)
        if off == 0:  # CSR: a literal offset lets the inlined sweep index directly
            sq = b * b + row_scores_sqnorm(data, indices, 0, start, stop, theta, scores)
        else:
            sq = b * b + row_scores_sqnorm(data, indices, off, start, stop, theta, scores)
        if b != 0.0:
            for k in range(K):
                scores[k] += b * theta[d, k]
        pred, rival, ysign, z0, _ = predict_margin_loss(scores, yi, binary, 0.0)
        if pred != yi:
            st[N_MISTAKES] += 1.0
        pred_out[i] = pred
        loss_out[i] = value(z0)
        tau = margin_step(value, deriv, step, z0, kappa * sq, C, eta, weight[i], False)
        if tau != 0.0:
            if not finite(tau):
                return NONFINITE
            S = st[S_SUM]
            ky = 0 if binary else yi
            if binary:
                tau *= ysign
            if off == 0:
                move_two(data, indices, 0, start, stop, theta, U, ky, rival, tau, S, average,
                         binary)  # fmt: skip
            else:
                move_two(data, indices, off, start, stop, theta, U, ky, rival, tau, S, average,
                         binary)  # fmt: skip
            if b != 0.0:
                move_entry(theta, U, d, ky, tau * b, S, average)
                if not binary:
                    move_entry(theta, U, d, rival, -tau * b, S, average)
            st[N_UPDATES] += 1.0
        st[N_ROUNDS] += 1.0
        if average:
            # the weight t^eta of this round (1 for the uniform average; euclid_pass's rule)
            st[S_SUM] = S_avg + round_weight(st[N_ROUNDS], power)
    return OK


@njit
def residual_pass(
    data, indices, indptr, y, weight, order, w, U, st, step, C, eta, b, average, pred_out,
    value, deriv,
):  # fmt: skip
    """One pass of a residual-loss regressor (state as :mod:`onlinelearn._core.regression`:
    w (R,), U, st = [T, N_UPDATES]; U += T Delta_t with T counted after the round).
    ``pred_out[i]`` = <w, x_i> before the update.  Returns :data:`NONFINITE` when a step or a
    weight is not finite."""
    R = w.shape[0]
    d = R - 1 if b != 0.0 else R
    for ii in range(order.shape[0]):
        i = order[ii]
        start = indptr[i]
        stop = indptr[i + 1]
        off = row_offset(data, indices, start)
        yhat = 0.0
        sq = b * b
        for p in range(start, stop):
            v = np.float64(data[p])
            yhat += v * w[indices[p - off]]
            sq += v * v
        if b != 0.0:
            yhat += b * w[d]
        pred_out[i] = yhat
        st[0] += 1.0
        tau = margin_step(value, deriv, step, yhat - y[i], sq, C, eta, weight[i], True)
        if tau != 0.0:
            if not finite(tau):
                return NONFINITE
            T = st[0]
            for p in range(start, stop):
                j = indices[p - off]
                w[j] += tau * data[p]
                if average:
                    U[j] += T * tau * data[p]
            if b != 0.0:
                w[d] += tau * b
                if average:
                    U[d] += T * tau * b
            st[1] += 1.0
    for j in range(R):
        if not finite(w[j]):
            return NONFINITE
    return OK
