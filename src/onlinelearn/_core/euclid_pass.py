"""The pass of :mod:`.online_loop` specialised to the Euclidean link (w = theta).

Same arguments, same state, same results as :func:`.online_loop.online_pass` for ``link = EUCLID``
(the generic pass stays the reference and is tested against this one), but written for speed:

* the scores and ``||x||^2`` are read in one sweep over the row, four nonzeros per step
  (:func:`.sparse.row_scores_sqnorm`);
* an update walks the row once and changes every moving column in that sweep (two columns y and
  r for the max-loss step, all Q columns for COPA), so one nonzero touches one contiguous row of
  ``theta``;
* with w = theta the scale is s = 1, so averaging needs no link, no aggregate, no rebase and no
  timestamps: it keeps one float64 array ``U`` (in the slot of ``A``; ``lastS`` is unused) with
  ``U_jk += S delta_jk`` when theta_jk moves by delta_jk on the round whose count before it is S.
  Then the sum of the hypotheses after each round is ``sum_{r<S} theta^(r) = S theta - U`` (the
  classic ``W - U/t`` trick: sum_r sum_{s<=r} delta_s = sum_s (S - s) delta_s), so an update
  touches two arrays, not three, and the ``A``/``lastS`` state of the generic pass converts as
  ``U = lastS * theta - A`` (:mod:`.euclid_readout`); delta is the change of the stored
  weight (float32 weights: the rounded one), so the identity is exact up to float64 sums;
* the same state keeps a polynomially weighted average (``avg_power`` = eta > 0): round
  t (t = 1, 2, ... counts every round of every epoch and call) weighs c_t = t^eta, S is the
  sum of the weights of the rounds before this one, ``S <- S + c_t`` after it, and the read-out
  divides by S instead of T (:mod:`.euclid_readout`).  With theta^(r) = sum_{s<=r} delta_s
  and S_r = c_1 + ... + c_r::

      sum_{r<=T} c_r theta^(r) = sum_s delta_s (S_T - S_{s-1}) = S_T theta - sum_s S_{s-1} delta_s

  so U += S delta (S read before the round, as for eta = 0) is unchanged.  This is the
  polynomial-decay averaging of Shamir & Zhang (ICML 2013, "Stochastic gradient descent for
  non-smooth optimization: convergence results and optimal averaging schemes", weights
  ~ t^eta); eta = 1 is the weighting of Lacoste-Julien, Schmidt & Bach (2012).  It leans on
  the late iterates, which the one-pass average of the early ones drags back (news20, one
  pass of PA-I: docs/defaults.md).  Range: S <= T^(eta+1) and U ~ S |theta| stay far inside
  float64 for eta <= 10 (the parameter's bound) and T < 10^12 rounds (S < 10^132); the sums
  are float64, so the weights of a stream beyond 2^53 / T^eta are rounded (each round's
  weight is the difference of the rounded S's, used alike by U and by the read-out: still
  an exact weighted average of the iterates);
* with averaging and a U too large for the core's caches, the U entries an update will write are
  prefetched (:mod:`.prefetch`): the line of class y before the score sweep and the rival's
  after it, so the misses overlap with the sweep (news20, float32, PA-I: the averaged kernel
  went from about 2.2x to 1.6x the last iterate's time); COPA, which moves every column, asks
  for the whole U row of the nonzero eight places ahead in its update loop;
* on CSR input the row offset is 0, and the pass calls its row loops with a literal 0 so
  that the inlined loops index directly (mnist, last iterate: 51.6 -> 44.3 ms per epoch);
* the caller may hand it theta, U, scores and alpha padded with zero columns up to a multiple
  of four (:func:`padded_work_state`): the class count is ``len(work_idx)``, the stored width
  ``theta.shape[1]``, and the padding columns never move;
* when theta itself outgrows the core's caches (news20: 4.5 MB of float32), the lines of
  the next row's weights are requested before this row is swept (:func:`.prefetch.prefetch_rows`):
  the sweep then finds them in cache instead of waiting on each miss in turn;
* when the rows are visited in a shuffled order (``fit``'s default), the values and indices
  of the row after next are requested too (:func:`.prefetch.prefetch_entries`): the hardware
  prefetcher follows a sequential walk, not a permutation.  Two rows ahead, not one, so that
  the request for the next row's weights reads indices already in cache (shuffled PA-I,
  against one row ahead: news20 0.92-0.96x, mnist 0.94-0.98x);
* the dual objective of the run is kept in ``st[DUAL]`` (the ``dual`` flag of ``ip``, not
  COPA): each update adds its increment :func:`.state.dual_increment`, from the margin and
  ``||x||^2`` the round has already computed;
* no per-entry finiteness test: the estimator checks the state after the pass and restores its
  snapshot if anything overflowed;
* the finiteness of the feature values is checked here, not before the pass, when the caller
  leaves it to the pass (``fit``/``partial_fit`` of the estimators: a separate sweep over X
  cost 3.3 ms of a 65 ms mnist epoch): ``||x||^2`` reads every value of the row, so a NaN or
  inf value makes it non-finite, and only then is the row scanned; the pass returns
  :data:`NONFINITE_X` before that row changes anything.
"""

from __future__ import annotations

import numpy as np

from .config import njit
from .copa import copa_update, is_copa
from .fp import finite
from .margins import predict_margin_loss
from .prefetch import (
    PREFETCH_MIN_ENTRIES,
    prefetch_column,
    prefetch_entries,
    prefetch_matrix_row,
    prefetch_rows,
)
from .sparse import row_averaged_scores, row_offset, row_scores_sqnorm
from .state import (
    DUAL,
    DUAL_QUAD,
    N_MISTAKES,
    N_ROUNDS,
    N_UPDATES,
    S_SUM,
    dual_increment,
    pass_params,
)
from .steps import CONSERVATIVE, hinge_step

OK = 0
#: a feature value of the row ``order[i]`` was NaN or infinite: the pass stopped before it
#: changed anything for that row (earlier rows were learned: the caller restores its snapshot)
NONFINITE_X = 2
#: COPA's update requests the U row of the nonzero this many places ahead (a burst over the
#: whole row before the sweep measured 25% slower on news20: it fills the miss queues at once).
PF_AHEAD = 8


@njit
def row_values_finite(data, start, stop):
    """True when data[start:stop] holds no NaN or infinity (a finite row whose ||x||^2
    overflowed, e.g. values of 1e200, is finite)."""
    for q in range(start, stop):
        if not finite(data[q]):
            return False
    return True


@njit(inline="always")
def round_weight(t, power):
    """c_t = t^eta, the weight of round t (1-based, counted over every epoch and call) in the
    polynomially weighted average; exactly 1 for eta = 0 (the uniform average)."""
    if power == 0.0:
        return 1.0
    return t**power


@njit
def advance_weight_sum(S, t0, n, power):
    """S plus the weights of the n rounds t0 + 1 .. t0 + n, added one at a time as the passes
    add them (a run of rounds that learn nothing gives the S of those rounds made one by one)."""
    for i in range(n):
        S = S + round_weight(t0 + np.float64(i + 1), power)
    return S


@njit
def power_weight_sum(T, power):
    """sum_{t=1}^{T} t^eta: the S of a stream of T rounds (O(T), a few ns a round)."""
    return advance_weight_sum(0.0, 0.0, np.int64(T), power)


@njit
def move_entry(theta, U, j, k, v, S, average):
    """theta[j, k] += v, and with averaging U[j, k] += S delta, delta the change of the stored
    weight (the rounded one for float32 weights)."""
    if average:
        old = np.float64(theta[j, k])
        theta[j, k] += v
        U[j, k] += S * (np.float64(theta[j, k]) - old)
    else:
        theta[j, k] += v


@njit
def move_two(data, indices, off, start, stop, theta, U, ky, rival, tau, S, average, binary):
    """The max-loss step over the nonzeros of one row (the intercept feature is the caller's):
    theta[j, ky] += tau x_j and, with K columns, theta[j, rival] -= tau x_j, U as
    :func:`move_entry`.  One loop per case, so that no test runs per nonzero; the caller passes
    a literal 0 for ``off`` on CSR input (the inlined loop then indexes directly)."""
    # unsigned positions and feature indices: no wraparound of negative indices per access
    a = np.uint64(start)
    e = np.uint64(stop)
    o = np.uint64(off)
    if average:
        for q in range(a, e):
            j = np.uint64(indices[q - o])
            v = tau * data[q]
            old = np.float64(theta[j, ky])
            theta[j, ky] += v
            U[j, ky] += S * (np.float64(theta[j, ky]) - old)
            if not binary:
                old = np.float64(theta[j, rival])
                theta[j, rival] -= v
                U[j, rival] += S * (np.float64(theta[j, rival]) - old)
    elif binary:
        for q in range(a, e):
            theta[np.uint64(indices[q - o]), ky] += tau * data[q]
    else:
        for q in range(a, e):
            j = np.uint64(indices[q - o])
            v = tau * data[q]
            theta[j, ky] += v
            theta[j, rival] -= v


@njit
def euclid_pass(
    data,
    indices,
    indptr,
    y,
    weight,
    order,
    theta,
    U,
    lastS,
    st,
    ip,
    fp,
    pred_out,
    loss_out,
    scores,
    alpha,
    work_idx,
    work_val,
    hold_from=-1,
    hold_out=None,
):
    """One pass of the Euclidean-link learner over the rows ``order`` (see module docstring).

    ``hold_out`` (optional, float64 (m, Kw)): the probability calibration's scores of the
    last m rows of a ``partial_fit`` or of a one-epoch ``fit``
    (:class:`onlinelearn.shell.proba.HeldOut`).  For the rows
    ``order[ii]``, ``ii >= hold_from``, row ``ii - hold_from`` receives the scores that
    ``decision_function`` would give the row just before the row is learned: the averaged
    weights' (S theta - U) / max(S, T) x with averaging (0 before any round), theta x
    without; the intercept included.  Progressive validation of the predictor itself, read
    while the row and its weights are in cache (the U lines of those rows are requested one
    row ahead, as theta's)."""
    # (keep_dual: the estimator never asks it of COPA)
    (_, step, average, _, predict_average, keep_dual, C, gamma, eta, _, b, _, gamma_d, quad_d,
     power) = pass_params(ip, fp)  # fmt: skip
    R = theta.shape[0]
    # theta, U, scores and alpha may carry zero columns beyond the K classes
    # (:func:`padded_work_state`): K is the class count, Kw the stored width
    K = work_idx.shape[0]
    Kw = theta.shape[1]
    d = R - 1 if b != 0.0 else R
    binary = K == 1 and not is_copa(step)
    kappa = 1.0 if binary else 2.0
    pf_on = average and U.size >= PREFETCH_MIN_ENTRIES
    pf_theta = theta.size >= PREFETCH_MIN_ENTRIES
    pf_row = pf_on and is_copa(step)
    # (``is None`` tested directly where the array is used: numba prunes those branches)
    holding = False
    if hold_out is not None:
        holding = hold_from >= 0

    for ii in range(order.shape[0]):
        i = order[ii]
        yi = y[i]
        wgt = weight[i]
        start = indptr[i]
        stop = indptr[i + 1]
        off = row_offset(data, indices, start)

        if ii + 2 < order.shape[0]:
            i_after = order[ii + 2]
            if i_after != order[ii + 1] + 1:
                # a shuffled order: the values and indices of the row after next are not
                # where the hardware prefetcher looks (fit's default shuffle); two rows ahead,
                # so that the next row's weights below are requested from indices in cache
                prefetch_entries(data, indices, indptr, i_after)
        if ii + 1 < order.shape[0]:
            i_next = order[ii + 1]
            if pf_theta:
                # the next row's weights, while this row is swept and updated (news20,
                # float32: the averaged pass 41 -> 31 ms, the last iterate 22 -> 17)
                prefetch_rows(data, indices, indptr, i_next, theta)
            if pf_on and (predict_average or (holding and ii + 1 >= hold_from)):
                # the averaged scores of the next row read its U rows too
                prefetch_rows(data, indices, indptr, i_next, U)
        # ---- scores s_k = <theta_k, x> and ||x||^2 in one sweep
        if pf_on and not pf_row:
            kp = 0 if binary else yi
            prefetch_column(indices, off, start, stop, U, kp)
        if off == 0:
            # CSR: the offset is a constant here, so the inlined sweep indexes directly
            # (mnist: 13% of the last iterate's pass)
            sq = b * b + row_scores_sqnorm(data, indices, 0, start, stop, theta, scores)
        else:
            sq = b * b + row_scores_sqnorm(data, indices, off, start, stop, theta, scores)
        if sq * 0.0 != 0.0 and not row_values_finite(data, start, stop):
            # ||x||^2 reads every value: a NaN or inf one makes it non-finite (so does an
            # overflow of finite values, which goes on as before: see the module docstring).
            # Written as sq * 0 != 0 (one multiply, no branch on the usual path):
            # ``not math.isfinite(sq)`` compiled here never fired on a NaN sq (see .fp)
            return NONFINITE_X
        if b != 0.0:
            for k in range(K):
                scores[k] += b * theta[d, k]

        # ---- prediction, margin, loss
        pred, rival, ysign, margin, loss = predict_margin_loss(scores[:K], yi, binary, gamma)
        if pred != yi:
            st[N_MISTAKES] += 1.0  # the learner's own mistakes: those of the current iterate
        hold_row = ii - hold_from if holding else -1
        if predict_average or (hold_row >= 0 and average):
            # the prediction of the averaged weights (what predict() would say now):
            # T * avg w_jk = S theta_jk - U_jk; the positive factor 1/T is left out (it
            # changes no argmax or sign); work_val is free until the step
            S_now = st[S_SUM]
            if st[N_ROUNDS] > 0.0:
                # four nonzeros per step, as the score sweep
                if off == 0:
                    row_averaged_scores(data, indices, 0, start, stop, theta, U, S_now, work_val)
                else:
                    row_averaged_scores(data, indices, off, start, stop, theta, U, S_now, work_val)
                if b != 0.0:
                    for k in range(K):
                        work_val[k] += b * (S_now * theta[d, k] - U[d, k])
            else:
                for k in range(K):
                    work_val[k] = 0.0
            if predict_average:
                pred = predict_margin_loss(work_val, yi, binary, gamma)[0]
            if hold_out is not None:
                if hold_row >= 0:
                    T_now = st[N_ROUNDS]
                    N_now = S_now if S_now > T_now else T_now
                    for k in range(K):
                        hold_out[hold_row, k] = work_val[k] / N_now if T_now > 0.0 else 0.0
        elif hold_row >= 0:
            if hold_out is not None:
                for k in range(K):
                    hold_out[hold_row, k] = scores[k]
        pred_out[i] = pred
        loss_out[i] = loss

        # ---- dual step
        S = st[S_SUM]
        n_act = 0
        tau = 0.0
        if is_copa(step):
            n_active = copa_update(step, scores[:K], yi, sq, C * wgt, alpha, work_idx, work_val)
            if n_active > 0:
                st[N_UPDATES] += 1.0
                n_act = K
        else:
            ksq = 0.0 if step == CONSERVATIVE else kappa * sq
            tau = hinge_step(step, loss, margin, ksq, C, wgt)
            if tau > 0.0 and step == CONSERVATIVE:
                tau *= eta
            if tau > 0.0 and keep_dual:
                # the rise of the dual by this round's variable (a few flops per update)
                st[DUAL] += dual_increment(tau, gamma_d, margin, kappa * sq, quad_d, C * wgt)
                if quad_d != 0.0:
                    st[DUAL_QUAD] += quad_d * tau * tau / (C * wgt)

        # ---- update: one sweep over the row, every moving column of theta at once
        if n_act > 0:
            if pf_row:
                for q in range(start, min(stop, start + PF_AHEAD)):
                    prefetch_matrix_row(U, np.intp(indices[q - off]))
            # (24) moves every column (the inactive ones by s_alpha/Q): a dense sweep over the
            # K weights of each touched row (alpha_k = 0 adds exactly 0)
            for q in range(start, stop + (1 if b != 0.0 else 0)):
                if q < stop:
                    j = np.uint64(indices[q - off])
                    v = data[q]
                else:
                    j = np.uint64(d)
                    v = b
                if pf_row and q + PF_AHEAD < stop:
                    prefetch_matrix_row(U, np.intp(indices[q + PF_AHEAD - off]))
                # Kw: alpha is zero on the padding columns, which so stay zero
                if average:
                    for k in range(Kw):
                        old = np.float64(theta[j, k])
                        theta[j, k] += alpha[k] * v
                        U[j, k] += S * (np.float64(theta[j, k]) - old)
                else:
                    for k in range(Kw):
                        theta[j, k] += alpha[k] * v
        elif tau > 0.0:
            ky = 0 if binary else yi
            if binary:
                tau *= ysign
            elif pf_on:
                prefetch_column(indices, off, start, stop, U, rival)
            if off == 0:
                move_two(
                    data, indices, 0, start, stop, theta, U, ky, rival, tau, S, average, binary
                )
            else:
                move_two(
                    data, indices, off, start, stop, theta, U, ky, rival, tau, S, average, binary
                )
            if b != 0.0:
                move_entry(theta, U, d, ky, tau * b, S, average)
                if not binary:
                    move_entry(theta, U, d, rival, -tau * b, S, average)
            st[N_UPDATES] += 1.0
        st[N_ROUNDS] += 1.0
        if average:
            st[S_SUM] = S + round_weight(st[N_ROUNDS], power)
    return OK


#: the class count is padded to a multiple of this for the pass (float64 scores: four per AVX2
#: vector), see :func:`padded_work_state`
PAD_COLUMNS = 4
#: pad only when copying the state in and out costs at most 1/PAD_MIN_RATIO of the pass's
#: nonzero x class products
PAD_MIN_RATIO = 64


def padded_work_state(theta, U, average, nnz):
    """Work copies of ``theta`` and ``U`` with zero columns up to a multiple of
    :data:`PAD_COLUMNS`, or None when the pass should run on the state itself.

    The score sweep's inner loop over the K classes then has a trip count that the vectorised
    body covers with no scalar remainder: mnist (K = 10 -> 12), 0.36 -> 0.30 ns per nonzero
    x class, although it reads 20% more weights.  The zero columns never move (the pass
    updates columns < K only, ``K = len(work_idx)``; COPA's K-wide update adds alpha_k = 0
    to them) and each class's sums are the same operations in the same order, so the weights
    are bit for bit those of the unpadded pass.  Padded only when K >= 2 is not a multiple
    already and the copies are small against the batch (``R * K_pad * PAD_MIN_RATIO <=
    nnz * K``: mnist's whole training set, not a 10-row ``partial_fit``)."""
    R, K = theta.shape
    Kp = -(-K // PAD_COLUMNS) * PAD_COLUMNS
    if K < 2 or Kp == K or R * Kp * PAD_MIN_RATIO > nnz * K:
        return None
    th = np.zeros((R, Kp), dtype=theta.dtype)
    th[:, :K] = theta
    if average:
        Uw = np.zeros((R, Kp), dtype=U.dtype)
        Uw[:, :K] = U
    else:
        Uw = U  # the pass does not read it
    return th, Uw
