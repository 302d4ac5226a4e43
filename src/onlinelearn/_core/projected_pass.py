"""Projected updates of the Euclidean-link learners (thesis Sec. 7.1 used as a constraint).

A round is the learner's own step (Perceptron, PA, PA-I, PA-II; the same scores, margin, loss
and tau as :func:`.euclid_pass.euclid_pass`) followed by the Euclidean projection of every
weight vector the step changed (the column y_t and the rival column for K classes, the one
vector w for a binary learner) back onto the feasible set::

    w_k <- argmin_{u in S} ||u - w_k||^2

    S = {u : ||u||_1 <= z}                       L1_BALL   (Fig. 7.2)
    S = {u : u >= 0, sum_j u_j = z}              SIMPLEX   (Fig. 7.1, eq. 7.1-7.3)

where w_k is the whole column of ``theta`` (the intercept weight included when there is one)
and z is the radius.  Projecting after a step of the unconstrained problem is the projected
(sub)gradient / projected dual step; it keeps w in S after every round.  The projection
moves every weight of the column, so a round costs O(nnz(x) K + R log R) (the sort of Fig.
7.1/7.2) instead of O(nnz(x) K).

Averaging: the one-array scheme of the Euclidean pass (U in the slot of ``A``, ``S`` = the
round count, or the sum of the rounds' weights t^eta of the weighted average; average =
(S theta - U) / max(S, T)): the step and the projection after it are one move delta of the
column on its round, and U += S delta over the column.
"""

from __future__ import annotations

import numpy as np

from .config import njit
from .euclid_pass import round_weight
from .margins import predict_margin_loss
from .projections import simplex_theta
from .sparse import row_offset
from .state import N_MISTAKES, N_ROUNDS, N_UPDATES, S_SUM, pass_params
from .status import OK
from .steps import CONSERVATIVE, hinge_step

NO_CONSTRAINT = 0
L1_BALL = 1
SIMPLEX = 2


@njit
def project_column(theta, k, code, z, buf):
    """Column k of ``theta`` replaced by its projection onto the set ``code`` of radius z.

    ``buf``: float64 scratch of length >= R.  Returns True when the column changed."""
    R = theta.shape[0]
    if code == L1_BALL:
        l1 = 0.0
        for j in range(R):
            l1 += abs(np.float64(theta[j, k]))
        if l1 <= z:
            return False
        for j in range(R):
            buf[j] = abs(np.float64(theta[j, k]))
        th = simplex_theta(buf[:R], 0, z)
        for j in range(R):
            v = np.float64(theta[j, k])
            u = abs(v) - th
            u = u if u > 0.0 else 0.0
            theta[j, k] = u if v >= 0.0 else -u
        return True
    for j in range(R):
        buf[j] = theta[j, k]
    th = simplex_theta(buf[:R], 0, z)
    for j in range(R):
        u = buf[j] - th
        theta[j, k] = u if u > 0.0 else 0.0
    return True


@njit
def save_column(theta, k, old):
    """old[:R] = column k of ``theta`` (the stored values, before the column moves)."""
    for j in range(theta.shape[0]):
        old[j] = theta[j, k]


@njit
def average_moved_column(theta, U, k, S, old):
    """The one-array average of :mod:`.euclid_pass`: U_jk += S delta_jk for every entry of
    column k that moved by delta_jk (stored new minus stored old) on a round of count S."""
    for j in range(theta.shape[0]):
        U[j, k] += S * (np.float64(theta[j, k]) - old[j])


@njit
def project_all_columns(theta, A, lastS, st, average, code, z):
    """Every column onto the set (a model whose columns were made some other way).  ``A``
    holds the one-array average U of :mod:`.euclid_pass` (``lastS`` is its placeholder)."""
    R = theta.shape[0]
    buf = np.empty(R)
    old = np.empty(R)
    for k in range(theta.shape[1]):
        if average:
            save_column(theta, k, old)
        project_column(theta, k, code, z, buf)
        if average:
            average_moved_column(theta, A, k, st[S_SUM], old)


@njit
def projected_pass(
    data, indices, indptr, y, weight, order, theta, A, lastS, st, ip, fp, pred_out, loss_out,
    scores, code, z, buf,
):  # fmt: skip
    """One pass of a Euclidean learner with projected updates over the rows ``order``.

    Arguments as :func:`.euclid_pass.euclid_pass` (COPA excluded; ``A`` holds its one-array
    average U, ``lastS`` is unused), plus the constraint ``code``, its radius ``z`` and a
    float64 scratch ``buf`` of length max(R, K).  A step and the projection after it are one
    move of the column on its round, averaged as U += S delta."""
    (_, step, average, _, predict_average, _, C, gamma, eta, _, b, _, _, _,
     power) = pass_params(ip, fp)  # fmt: skip
    R, K = theta.shape
    d = R - 1 if b != 0.0 else R
    binary = K == 1
    kappa = 1.0 if binary else 2.0
    old_y = np.empty(R)
    old_r = np.empty(R)
    for ii in range(order.shape[0]):
        i = order[ii]
        yi = y[i]
        start = indptr[i]
        stop = indptr[i + 1]
        off = row_offset(data, indices, start)
        S = st[S_SUM]
        # scores, ||x||^2; with predict_average also T * (averaged scores) in buf[:K]
        sq = b * b
        for k in range(K):
            scores[k] = 0.0
            buf[k] = 0.0
        for q in range(start, stop + (1 if b != 0.0 else 0)):
            if q < stop:
                j = indices[q - off]
                v = np.float64(data[q])
                sq += v * v
            else:
                j = d
                v = b
            for k in range(K):
                scores[k] += v * theta[j, k]
                if predict_average:
                    buf[k] += v * (S * theta[j, k] - A[j, k])
        pred, rival, ysign, margin, loss = predict_margin_loss(scores, yi, binary, gamma)
        if pred != yi:
            st[N_MISTAKES] += 1.0
        if predict_average and st[N_ROUNDS] > 0.0:
            pred = predict_margin_loss(buf[:K], yi, binary, gamma)[0]
        pred_out[i] = pred
        loss_out[i] = loss
        ksq = 0.0 if step == CONSERVATIVE else kappa * sq
        tau = hinge_step(step, loss, margin, ksq, C, weight[i])
        if tau > 0.0 and step == CONSERVATIVE:
            tau *= eta
        if tau > 0.0:
            ky = 0 if binary else yi
            if average:
                save_column(theta, ky, old_y)
                if not binary:
                    save_column(theta, rival, old_r)
            if binary:
                tau *= ysign
            for q in range(start, stop + (1 if b != 0.0 else 0)):
                if q < stop:
                    j = indices[q - off]
                    v = tau * data[q]
                else:
                    j = d
                    v = tau * b
                theta[j, ky] += v
                if not binary:
                    theta[j, rival] -= v
            project_column(theta, ky, code, z, buf)
            if not binary:
                project_column(theta, rival, code, z, buf)
            if average:
                average_moved_column(theta, A, ky, S, old_y)
                if not binary:
                    average_moved_column(theta, A, rival, S, old_r)
            st[N_UPDATES] += 1.0
        st[N_ROUNDS] += 1.0
        if average:
            st[S_SUM] = S + round_weight(st[N_ROUNDS], power)
    return OK
