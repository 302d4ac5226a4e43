"""One compiled pass over a batch: scores -> loss -> dual step -> update -> lazy average.

The learner state is a handful of arrays owned by the Python estimator:

``theta`` (R, K) float64
    the dual-sum ``theta = -(1/c) sum_i lambda_i`` (thesis eq. 3.x, Fig. 5.1); the weights are
    ``w = grad f*(theta)`` with the link of :mod:`.links`.  R = d (+1 with an intercept: row d is
    the bias, a feature of constant value ``b``).  K = 1 for a binary learner (one vector,
    y in {-1, +1}), K = n_classes otherwise.
``A``, ``lastS`` (R, K) float64
    lazy averaging.  With ``w_t = s_t phi(theta_t)`` and ``S_t = sum_{r<=t} s_r``, the sum of the
    hypotheses after each round is ``sum_t w_{t+1, jk} = A_jk + phi(theta_jk) (S_T - lastS_jk)``:
    when entry jk is touched, its past contribution ``phi(old) (S - lastS_jk)`` is folded into
    ``A_jk`` and ``lastS_jk = S``.  That costs O(1) per touched entry instead of O(R K) per
    round (the timestamp form of the usual ``W - U/t`` trick; it also covers the normalised links,
    whose scale s changes every update).
``st`` float64[N_ST]
    scalars, slots named in :mod:`.state`: N_ROUNDS (T), S_SUM (S), N_UPDATES, N_MISTAKES,
    EXP_SHIFT (m), AGGREGATE (Z or sum |theta|^p), X_MAX (X_t) and M_COUNT (M_t) of self-tuned
    Winnow, THETA_MAX (max |theta_jk| seen).

Parameters ``ip`` (integers: link, step, average, balanced) and ``fp`` (floats: C, gamma, eta,
p, b the intercept value (0 = none), log_n): read by :func:`.state.pass_params`, see
:mod:`.state`.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .copa import copa_update, is_copa
from .fp import finite
from .generic import margin_step
from .links import ENTROPY, EUCLID, PNORM, SELFTUNED, agg_term, link_term, phi, scale
from .margins import predict_margin_loss
from .prefetch import PREFETCH_MIN_ENTRIES, prefetch_rows
from .sparse import row_absmax, row_dot_euclid, row_dot_map, row_offset, row_sqnorm
from .state import (
    AGGREGATE,
    DUAL,
    DUAL_QUAD,
    EXP_SHIFT,
    M_COUNT,
    N_MISTAKES,
    N_ROUNDS,
    N_UPDATES,
    S_SUM,
    THETA_MAX,
    X_MAX,
    dual_increment,
    pass_params,
)
from .status import NONFINITE, OK
from .steps import CONSERVATIVE, aggressive_link_step, hinge_step, max_loss_alpha

#: Re-centre the exp shift m when max|theta| exceeds m by this much (exp(60) ~ 1e26: safe).
_REFRAME_GAP = 60.0
#: ... and when Z falls below exp(-60), i.e. max|theta| < m - 60.
_Z_FLOOR = math.exp(-60.0)
#: Recompute the running aggregate exactly when one round shrinks it by more than this factor.
_CANCEL = 1e-6
#: Restart the cumulative scale S when it exceeds the current increment by this factor.
_REBASE = 1e4


@njit
def _signed_max(link, balanced):
    """Whether the exp shift follows max theta rather than max |theta|.

    Unbalanced entropy weights are exp(theta - m) / Z: only the largest theta matters for
    overflow and for Z >= exp(max theta - m). Shifting by max |theta| instead lets Z underflow
    to 0 when every theta is far below zero (the weights then read out as 0/0).
    """
    return link == ENTROPY and not balanced


@njit
def fstar_of_state(link, agg, m, p):
    """f*(theta) up to the constant -log n of the entropy link (it cancels in differences),
    from the running aggregate: log Z + m (entropy: Z = sum exp(+-theta - m)), or
    (sum |theta|^p)^(2/p) / (2 (p - 1)) (p-norm)."""
    if link == ENTROPY:
        return math.log(agg) + m
    return agg ** (2.0 / p) / (2.0 * (p - 1.0))


@njit
def recompute_aggregate(theta, st, link, p, balanced):
    """Exact aggregate (Z or sum |theta|^p) from scratch; removes drift of the running sum."""
    if link != ENTROPY and link != PNORM:
        st[AGGREGATE] = 0.0
        return
    m = st[EXP_SHIFT]
    acc = 0.0
    signed = _signed_max(link, balanced)
    mx = -math.inf if signed else 0.0
    R, K = theta.shape
    for j in range(R):
        for k in range(K):
            v = theta[j, k]
            acc += agg_term(link, v, m, p, balanced)
            a = v if signed else abs(v)
            if a > mx:
                mx = a
    st[AGGREGATE] = acc
    st[THETA_MAX] = mx if R * K > 0 else 0.0


@njit
def flush_all(theta, A, lastS, st, link, p, balanced):
    """Fold every entry's pending contribution into A (before the frame of phi changes)."""
    S = st[S_SUM]
    m = st[EXP_SHIFT]
    R, K = theta.shape
    for j in range(R):
        for k in range(K):
            gap = S - lastS[j, k]
            if gap != 0.0:  # entries touched this round may lie outside the old frame
                A[j, k] += phi(link, theta[j, k], m, p, balanced) * gap
            lastS[j, k] = S


@njit
def rebase(theta, A, lastS, st, link, p, balanced):
    """Fold all pending contributions into A and restart S (and every lastS) at 0."""
    flush_all(theta, A, lastS, st, link, p, balanced)
    st[S_SUM] = 0.0
    R, K = theta.shape
    for j in range(R):
        for k in range(K):
            lastS[j, k] = 0.0


@njit
def reframe(theta, A, lastS, st, link, p, balanced, average, new_m):
    """Change the exp shift m (entropy link); the product s * phi is unchanged by it."""
    if average:
        rebase(theta, A, lastS, st, link, p, balanced)
    st[EXP_SHIFT] = new_m
    recompute_aggregate(theta, st, link, p, balanced)


@njit
def _touch(theta, A, lastS, st, j, k, dv, link, p, balanced, average):
    """theta[j, k] += dv with averaging and aggregate bookkeeping; False if non-finite."""
    old = theta[j, k]
    m = st[EXP_SHIFT]
    if average:
        A[j, k] += phi(link, old, m, p, balanced) * (st[S_SUM] - lastS[j, k])
        lastS[j, k] = st[S_SUM]
    new = old + dv
    if not finite(new):
        return False
    theta[j, k] = new
    new = theta[j, k]  # float32 weights: the value stored, not the double it was rounded from
    if link == ENTROPY or link == PNORM:
        st[AGGREGATE] += agg_term(link, new, m, p, balanced) - agg_term(link, old, m, p, balanced)
    if link != EUCLID:
        a = new if _signed_max(link, balanced) else abs(new)
        if a > st[THETA_MAX]:
            st[THETA_MAX] = a
    return True


@njit
def _update_column(data, indices, indptr, i, theta, A, lastS, st, k, cf, b, d, link, p, bal, avg):
    start = indptr[i]
    off = row_offset(data, indices, start)
    for q in range(start, indptr[i + 1]):
        if not _touch(theta, A, lastS, st, indices[q - off], k, cf * data[q], link, p, bal, avg):
            return False
    if b != 0.0:
        if not _touch(theta, A, lastS, st, d, k, cf * b, link, p, bal, avg):
            return False
    return True


@njit
def online_pass(
    data, indices, indptr, y, weight, order, theta, A, lastS, st, ip, fp, pred_out, loss_out,
    scores, alpha, work_idx, work_val, value=None, deriv=None,
):  # fmt: skip
    """Run the learner once over the rows ``order`` of a CSR batch. Returns OK or NONFINITE.

    Per round t (row i): scores s_k = <w_k, x>; the prediction (sign, or argmax with the first
    maximum); the margin (y s for one vector; s_y - max_{k != y} s_k for K classes, the max-loss
    rival r); the hinge loss [gamma - margin]_+; the dual step of :mod:`.steps` (COPA's closed
    form; for PA / PA-I / PA-II on the entropy and p-norm links the root-finding step
    :func:`.steps.link_hinge_step`; an infinite step is reported as NONFINITE); the update
    theta_y += tau x, theta_r -= tau x (binary: theta += tau y x).
    ``pred_out[i]`` receives the prediction made *before* the update (progressive validation) and
    ``loss_out[i]`` the loss suffered.

    ``value``, ``deriv``: another margin loss l, as first-class compiled functions (the pass is
    then compiled once for every such loss).  The loss suffered is l(margin); the conservative
    step is tau = -l'(margin) on a mistake (times eta), the aggressive step PA-I / PA-II the root
    of tau + C dl(margin(tau)) (:func:`.steps.link_tau`); the rest of the round is the hinge's.
    """
    (link, step, average, balanced, _, dual, C, gamma, eta, p, b, log_n, gamma_d, quad_d,
     _) = pass_params(ip, fp)  # fmt: skip
    # the dual objective D = sum_t gamma tau_t [- tau_t^2 / (4 C_t)] - f*(theta) of the hinge
    # steps at a fixed link (st[DUAL], one increment per update; not COPA, another loss or
    # self-tuned Winnow, whose c_t changes)
    # (the estimator never asks it of COPA)
    keep_dual = (dual and value is None
                 and (link == EUCLID or link == ENTROPY or link == PNORM))  # fmt: skip
    R, K = theta.shape
    d = R - 1 if b != 0.0 else R
    binary = K == 1 and not is_copa(step)
    # scratch of the root-finding aggressive step: the entries one row moves
    root_step = (link == ENTROPY or link == PNORM) and step != CONSERVATIVE and not is_copa(step)
    nbuf = 0
    if root_step:
        for ii in range(order.shape[0]):
            i = order[ii]
            nn = indptr[i + 1] - indptr[i]
            if nn > nbuf:
                nbuf = nn
        nbuf = 2 * (nbuf + 1)
    buf_j = np.empty(nbuf, dtype=np.int64)
    buf_k = np.empty(nbuf, dtype=np.int64)
    buf_u = np.empty(nbuf)
    buf_t = np.empty(nbuf)

    pf_theta = theta.size >= PREFETCH_MIN_ENTRIES
    for ii in range(order.shape[0]):
        i = order[ii]
        yi = y[i]
        wgt = weight[i]
        if pf_theta and ii + 1 < order.shape[0]:
            # the next row's weights while this one is scored and updated (as euclid_pass)
            prefetch_rows(data, indices, indptr, order[ii + 1], theta)

        # ---- scores s_k = <w_k, x>
        if link == EUCLID:
            row_dot_euclid(data, indices, indptr, i, theta, b, d, scores)
            s_cur = 1.0
        else:
            c_t = 1.0
            m = st[EXP_SHIFT]
            if link == SELFTUNED:
                xm = row_absmax(data, indptr, i, b)
                if xm > st[X_MAX]:
                    st[X_MAX] = xm
                c_t = st[X_MAX] * math.sqrt((st[M_COUNT] + 1.0) / log_n)
                if c_t <= 0.0:
                    c_t = 1.0
                m = st[THETA_MAX] / c_t
            row_dot_map(data, indices, indptr, i, theta, b, d, link_term,
                        (link, c_t, m, p, balanced), scores)  # fmt: skip
            s_cur = scale(link, st[AGGREGATE], p)
            for k in range(K):
                scores[k] *= s_cur

        # ---- prediction, margin, loss
        pred, rival, ysign, margin, loss = predict_margin_loss(scores, yi, binary, gamma)
        z_or_gamma = gamma  # what the link step reads: the hinge's margin, or l's z0
        if value is not None:
            loss = value(margin)
            z_or_gamma = margin
        pred_out[i] = pred
        if pred != yi:
            st[N_MISTAKES] += 1.0
        loss_out[i] = loss

        # ---- dual step and update
        agg_before = st[AGGREGATE]
        m_before = st[EXP_SHIFT]
        # alpha[k]: the coefficient of x in column k's update (COPA's closed form, or +-tau)
        if is_copa(step):
            sq = row_sqnorm(data, indptr, i, b)
            updated = copa_update(step, scores, yi, sq, C * wgt, alpha, work_idx, work_val) > 0
        else:
            if root_step:
                tau = aggressive_link_step(
                    step, link, data, indices, indptr, i, theta, st,
                    0 if binary else yi, -1 if binary else rival, ysign, b, d, z_or_gamma, loss,
                    C, wgt, p, balanced, buf_j, buf_k, buf_u, buf_t, value, deriv,
                )  # fmt: skip
                if not finite(tau):
                    return NONFINITE
            else:
                if step == CONSERVATIVE:
                    ksq = 0.0
                else:
                    ksq = row_sqnorm(data, indptr, i, b) * (1.0 if binary else 2.0)
                if value is None:
                    tau = hinge_step(step, loss, margin, ksq, C, wgt)
                else:  # (conservative: times eta below)
                    tau = margin_step(value, deriv, step, margin, ksq, C, 1.0, wgt, False)
            updated = tau > 0.0
            if value is not None:
                updated = tau != 0.0  # l' may have either sign
            if updated:
                if step == CONSERVATIVE:
                    tau *= eta
                max_loss_alpha(alpha, K, tau, binary, ysign, yi, rival)
                if keep_dual and link == EUCLID:
                    ksq_d = row_sqnorm(data, indptr, i, b) * (1.0 if binary else 2.0)
                    st[DUAL] += dual_increment(tau, gamma_d, margin, ksq_d, quad_d, C * wgt)
                elif keep_dual:
                    # the increment gamma tau - (f*(theta + tau u) - f*(theta)) [- PA-II's
                    # term]: f* before the update here, after it (and any re-centring) below
                    st[DUAL] += dual_increment(tau, gamma_d, 0.0, 0.0, quad_d, C * wgt)
                    st[DUAL] += fstar_of_state(link, agg_before, m_before, p)
                if keep_dual and quad_d != 0.0:
                    st[DUAL_QUAD] += quad_d * tau * tau / (C * wgt)
        if updated:
            for k in range(K):
                if alpha[k] != 0.0:
                    if not _update_column(data, indices, indptr, i, theta, A, lastS, st, k,
                                          alpha[k], b, d, link, p, balanced, average):  # fmt: skip
                        return NONFINITE
            st[N_UPDATES] += 1.0
            if (link == ENTROPY or link == PNORM) and st[AGGREGATE] < _CANCEL * agg_before:
                # the running sum lost most of its mass in one round: it may carry the
                # rounding error of the large terms it subtracted; recompute it exactly
                recompute_aggregate(theta, st, link, p, balanced)
            if link == SELFTUNED:
                st[M_COUNT] += 1.0
            elif link == ENTROPY:
                if (
                    st[THETA_MAX] > st[EXP_SHIFT] + _REFRAME_GAP
                    or st[AGGREGATE] < _Z_FLOOR
                    or not finite(st[AGGREGATE])
                ):
                    # a weight grew past the shift m (exp would overflow), or every weight fell
                    # far below it (Z >= exp(max|theta| - m) underflows): re-centre m on the
                    # true maximum |theta|
                    recompute_aggregate(theta, st, link, p, balanced)
                    reframe(theta, A, lastS, st, link, p, balanced, average, st[THETA_MAX])
            if keep_dual and link != EUCLID:
                st[DUAL] -= fstar_of_state(link, st[AGGREGATE], st[EXP_SHIFT], p)
        st[N_ROUNDS] += 1.0
        if average:
            s_now = scale(link, st[AGGREGATE], p)
            if link != EUCLID and st[S_SUM] > _REBASE * s_now:
                # S dwarfs this increment: S + s and later differences S - lastS would lose
                # its digits; fold what is pending into A and restart S at 0 first
                rebase(theta, A, lastS, st, link, p, balanced)
            st[S_SUM] += s_now
    return OK


@njit
def current_weights(theta, st, ip, fp, out):
    """out = w = grad f*(theta) (the hypothesis now)."""
    link, _, _, balanced, _, _, _, _, _, p, _, log_n, _, _, _ = pass_params(ip, fp)
    R, K = theta.shape
    c_t = 1.0
    m = st[EXP_SHIFT]
    if link == SELFTUNED:
        c_t = st[X_MAX] * math.sqrt((st[M_COUNT] + 1.0) / log_n)
        if c_t <= 0.0:
            c_t = 1.0
        m = st[THETA_MAX] / c_t
    s = scale(link, st[AGGREGATE], p)
    for j in range(R):
        for k in range(K):
            out[j, k] = s * phi(link, theta[j, k] / c_t, m, p, balanced)


@njit
def averaged_weights(theta, A, lastS, st, ip, fp, out):
    """out = (1/T) sum_{t=1..T} w_{t+1}: the average of the hypotheses after each round."""
    link, _, _, balanced, _, _, _, _, _, p, _, _, _, _, _ = pass_params(ip, fp)
    T = st[N_ROUNDS]
    S = st[S_SUM]
    m = st[EXP_SHIFT]
    R, K = theta.shape
    if T <= 0.0:
        for j in range(R):
            for k in range(K):
                out[j, k] = 0.0
        return
    for j in range(R):
        for k in range(K):
            out[j, k] = (A[j, k] + phi(link, theta[j, k], m, p, balanced) * (S - lastS[j, k])) / T


def empty_scratch(K):
    """Per-call scratch arrays of the pass (scores, alpha, work_idx, work_val)."""
    return (np.zeros(K), np.zeros(K), np.zeros(K, dtype=np.int64), np.zeros(K))
