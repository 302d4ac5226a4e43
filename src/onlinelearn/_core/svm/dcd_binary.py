"""Binary and one-vs-rest linear SVMs by dual coordinate ascent (Hsieh, Chang, Lin, Keerthi,
Sundararajan, ICML 2008, Algorithm 3; LIBLINEAR ``-s 3`` / ``-s 1``).

For one binary problem with labels y_i in {-1, +1} and per-example costs C_i > 0::

    primal  P(w)     = 1/2 ||w||^2 + sum_i C_i xi_i(w),   xi_i = [1 - y_i <w, x_i>]_+    (L1)
                                                          xi_i = [1 - y_i <w, x_i>]_+^2  (L2)
    dual    D(alpha) = sum_i alpha_i - 1/2 ||w(alpha)||^2 - sum_i alpha_i^2 D_ii / 2
            w(alpha) = sum_i alpha_i y_i x_i,   0 <= alpha_i <= U_i
            L1: U_i = C_i, D_ii = 0;   L2: U_i = inf, D_ii = 1 / (2 C_i)

The coordinate step maximises D exactly along alpha_i: with the gradient
G = y_i <w, x_i> - 1 + D_ii alpha_i and the curvature Qbar_ii = ||x_i||^2 + D_ii,
alpha_i <- min(max(alpha_i - G / Qbar_ii, 0), U_i) (the clipped Newton step of a 1-D concave
quadratic), and w <- w + (alpha_i^new - alpha_i) y_i x_i keeps w = w(alpha) at O(nnz(x_i)).
Every epoch visits the active examples in a fresh random order; shrinking drops an example
at a bound whose projected gradient points out of the box by more than last epoch's extreme
projected gradients (Hsieh et al. 2008, Sec. 3.2).

The stopping rule is the duality gap P - D <= tol * P over all examples (shrunk or not),
evaluated exactly but without a pass over every nonzero (:func:`binary_objectives_screened`):
each example keeps its margin m_i = y_i <w, x_i> from the last evaluation that computed it,
and the solver keeps the weights of the last evaluation and the lengths of the chain of
displacements between evaluations, sum_e ||w_e - w_{e-1}|| in the 2-norm and in the max-norm;
since |m_i(now) - m_i(then)| <= min(||x_i||_2 ||w_now - w_then||_2,
||x_i||_1 ||w_now - w_then||_inf) <= the same with the chain lengths since then,
an example whose cached margin is farther than that from 1 is known to have a zero loss
(margin above 1), or (L1, alpha_i = C_i, margin below 1) a loss C_i (1 - m_i) that is linear
in w and summed through v = sum_{alpha_i = C_i} C_i y_i x_i, brought up to date at each
evaluation (the examples whose alpha_i reached or left C_i since the last one are added or
removed: one row read per net change instead of one per step that moved alpha_i to or from
C_i).  Only the remaining examples are read.  The dual is D(alpha) with w(alpha) summed
afresh from alpha at each evaluation (:func:`binary_weights`), not from the w that the steps
update, whose rounding errors add up: the rows with a nonzero alpha are read once more per
evaluation (1-6% more nonzeros read in a fit at tol = 1e-3: a9a, w8a, news20, pendigits).
"""

from __future__ import annotations

import numpy as np

from ..config import njit
from .dcd_common import (
    ST_STEP_NNZ,
    ST_UNSHRINK,
    count_evaluation,
    count_solve,
    evaluation_due,
    node_axpy,
    node_dot,
    node_sqnorm,
    now,
    rng_state,
    rows_with_cost,
    shuffle_prefix,
    write_row,
)
from .dcd_objectives import S_ALPHA, S_C, S_QD, S_Y, binary_objectives_screened

#: the primal point evaluated is an exponential average of w(alpha) at the epoch ends over
#: about the epochs in which the gap shrinks by AVG_SHRINK (its rate measured between the last
#: two evaluations of the problem), at most AVG_SPAN epochs; none (w(alpha) itself) when that
#: is under AVG_MIN_SPAN epochs or before P(w(alpha)) was seen to go up between two
#: evaluations (where it falls smoothly the average only lags).  On the hinge loss
#: P(w(alpha)) jumps up and down from epoch to epoch near the optimum (a9a: by 2x), P of the
#: average does not: a9a and w8a reach LIBLINEAR's gap in 13-20% fewer epochs
AVG_SHRINK = 0.05
AVG_SPAN = 9.0
AVG_MIN_SPAN = 2.0

#: the first spread of projected gradients at which an epoch over every example counts as
#: optimal (LIBLINEAR's eps; divided by 10 each time it is reached above the gap).  LIBLINEAR
#: stops there (default 0.1); here the gap decides, and each level reached costs full epochs
#: (unshrinking), so the start is one level finer: news20 one-vs-rest to LIBLINEAR's gap at
#: eps 0.01 read 10% fewer nonzeros, at eps 0.1 2% fewer; a9a, w8a the same or fewer
EPS_PG0 = 0.01

#: one-vs-rest (K > 1 problems, ``check_every`` = 0): each problem runs up to BLOCK epochs in
#: a row before the next one (it stops its block early once an epoch over every example
#: looks optimal: then it is evaluated).  Epoch by epoch, the K problems' weights, records
#: and active rows evict each other from the caches (news20: 20 x (450 KB of w + 360 KB of
#: records)) and every epoch ends in an evaluation check; in blocks, a problem's steps read
#: 1.4-1.5 ns per nonzero as a single binary problem does instead of 2.2, and fewer
#: evaluations run (news20 to LIBLINEAR's gap at eps 0.01, interleaved: 0.78-0.82x the time)
BLOCK = 8


@njit(inline="always")
def binary_cd_step(alpha_i, G, Qbar, U):
    """The clipped closed-form maximiser of the dual along one coordinate:
    argmax_{0 <= a <= U} of  -(Qbar/2) (a - alpha_i)^2 - G (a - alpha_i)."""
    if Qbar > 0.0:
        a = alpha_i - G / Qbar
        if a < 0.0:
            a = 0.0
        if a > U:
            a = U
        return a
    # a zero row without intercept (L1): the objective is linear in a with slope -G
    if G < 0.0:
        return U
    if G > 0.0:
        return 0.0
    return alpha_i


@njit
def binary_weights(nodes, ptr, base, sk, wk):
    """wk = w(alpha) = sum_i alpha_i y_i x_i over the rows ``base``, summed from scratch
    (``sk[i]`` the record of example i); returns the nonzeros read."""
    for j in range(wk.shape[0]):
        wk[j] = 0.0
    work = 0
    for s in range(base.shape[0]):
        i = base[s]
        a = sk[i, S_ALPHA]
        if a != 0.0:
            node_axpy(nodes, ptr, i, a * sk[i, S_Y], wk)
            work += ptr[i + 1] - ptr[i]
    return work


@njit(nogil=False, fastmath=False)
def binary_epoch(nodes, ptr, idx, act, sk, wk, l2, shrinking, pgmax_old, pgmin_old):
    """One epoch of dual coordinate ascent on one binary problem over its active examples
    ``idx[:act]`` (in that order), with LIBLINEAR's shrinking: an example at a bound whose
    gradient points outwards beyond last epoch's projected-gradient range (``pgmax_old``,
    ``pgmin_old``) leaves the active set.  Updates ``sk``'s alpha column and ``wk`` in place;
    returns (active count, largest and smallest projected gradient, nonzeros read, steps)."""
    pgmax_new = -np.inf
    pgmin_new = np.inf
    work = 0
    n_steps = 0
    s = 0
    while s < act:
        i = idx[s]
        a = sk[i, S_ALPHA]
        y = sk[i, S_Y]
        c = sk[i, S_C]
        if l2:
            Ui = np.inf
            G = y * node_dot(nodes, ptr, i, wk) - 1.0 + a * (0.5 / c)
        else:
            Ui = c
            G = y * node_dot(nodes, ptr, i, wk) - 1.0
        nnz_i = ptr[i + 1] - ptr[i]
        work += nnz_i
        n_steps += 1
        PG = 0.0
        if a == 0.0:
            if shrinking and G > pgmax_old:
                act -= 1
                idx[s] = idx[act]
                idx[act] = i
                continue
            elif G < 0.0:
                PG = G
        elif a == Ui:
            if shrinking and G < pgmin_old:
                act -= 1
                idx[s] = idx[act]
                idx[act] = i
                continue
            elif G > 0.0:
                PG = G
        else:
            PG = G
        if PG > pgmax_new:
            pgmax_new = PG
        if PG < pgmin_new:
            pgmin_new = PG
        if abs(PG) > 1e-12:
            an = binary_cd_step(a, G, sk[i, S_QD], Ui)
            if an != a:
                sk[i, S_ALPHA] = an
                node_axpy(nodes, ptr, i, (an - a) * y, wk)
                work += nnz_i
        s += 1
    return act, pgmax_new, pgmin_new, work, n_steps


@njit(nogil=False, fastmath=False)
def ovr_dcd(
    nodes, ptr, ycodes, pos, Ci, l2, alpha, W, tol, max_iter, shrinking, seed, check_every, hist,
    stats, avg_span,
):  # fmt: skip
    """Solve the K binary problems "class pos[k] against the rest" (K = 1: binary) by dual
    coordinate ascent, interleaved in rounds (each open problem runs up to :data:`BLOCK`
    epochs in a row with the automatic schedule, one epoch with ``check_every`` > 0). Rows
    are packed (:func:`.pack_rows`, the intercept feature included); ``alpha`` (K, n) is the
    dual start and the result; ``W`` (K, R) receives, for each problem, the weights of
    smallest primal value among its evaluations (the pocket: P(w_best) - D(alpha) is the gap
    certified, a primal and a dual value at one pair (w_best, alpha), and it decreases,
    whereas P(w(alpha)) oscillates from epoch to epoch on the hinge loss).  The primal point
    evaluated is w(alpha), or, once the gap falls slowly, an exponential average of w(alpha)
    over the epoch ends spanning up to ``avg_span`` epochs (see :data:`AVG_SPAN`; 0: always
    w(alpha)); an average of w(alpha_e) is w of the average of the alpha_e, a feasible dual
    point, so the model stays w(alpha-bar) = sum_i alpha-bar_i y_i x_i.

    The objectives are evaluated every ``check_every`` epochs, or, with ``check_every`` = 0,
    after a round when :func:`.evaluation_due` says so (the work since the last evaluation,
    the epochs since, the rate of the gap), and whenever an epoch that shrank nothing looks
    optimal (its projected gradients span at most eps_pg: LIBLINEAR's stopping rule); always
    after the last epoch.  Each evaluation writes a row of ``hist`` holding the sums over
    the K problems (the one-vs-rest objective is their sum).

    Stops when every problem has reached its own relative gap, or when the summed objective
    has (the one-vs-rest objective's gap); returns (epochs run, rows of ``hist`` written,
    number of problems that reached the gap, K when the sum did).  ``stats`` receives the
    counts of :data:`.dcd_common.STATS_FIELDS`.
    """
    t0 = now()
    n = ptr.shape[0] - 1
    K, R = W.shape
    rng = rng_state(seed)

    xn = np.zeros((n, 2))
    base = rows_with_cost(Ci)
    m = base.shape[0]
    # one record per example and problem, read together at each step
    st = np.zeros((K, n, 4))
    for s in range(m):
        i = base[s]
        c = Ci[i]
        xx = node_sqnorm(nodes, ptr, i)
        xn[i, 0] = np.sqrt(xx)
        for p in range(ptr[i], ptr[i + 1]):
            xn[i, 1] += abs(nodes[p].v)
        for k in range(K):
            st[k, i, S_ALPHA] = alpha[k, i]
            st[k, i, S_Y] = 1.0 if ycodes[i] == pos[k] else -1.0
            st[k, i, S_QD] = xx + 0.5 / c if l2 else xx
            st[k, i, S_C] = c

    # w(alpha): exact start from the given dual point; v = sum_{alpha_i = C_i} C_i y_i x_i
    # over the examples marked in atc, brought up to date by each evaluation
    vC = np.zeros((K, R))
    csum = np.zeros((K, 1))
    atc = np.zeros((K, n), dtype=np.bool_)
    for k in range(K):
        binary_weights(nodes, ptr, base, st[k], W[k])

    marg = np.zeros((K, n))
    mchain = np.zeros((K, n, 2))
    wsnap = np.zeros((K, R))
    chain = np.zeros((K, 2))
    index = np.empty((K, m), dtype=np.int64)
    for k in range(K):
        index[k, :] = base
    active = np.full(K, m, dtype=np.int64)
    pgmax_old = np.full(K, np.inf)
    pgmin_old = np.full(K, -np.inf)
    eps_pg = np.full(K, EPS_PG0)
    pg_conv = np.zeros(K, dtype=np.bool_)
    done = np.zeros(K, dtype=np.bool_)
    prim = np.zeros(K)  # smallest primal value of each problem so far, at Wbest[k]
    dual = np.zeros(K)
    Wbest = np.empty((K, R))
    # the primal point evaluated: w(alpha), or (beta > 0) the average Wavg <- beta Wavg +
    # (1 - beta) w(alpha) over the epoch ends, with beta from the rate of the gap
    Wavg = np.empty((K, R))
    beta = np.zeros(K)
    gprev = np.full(K, np.inf)
    osc = np.zeros(K, dtype=np.bool_)
    eprev = np.zeros(K)
    n_done = 0
    ecost = 0
    cold = True
    for k in range(K):
        for s in range(m):
            if st[k, base[s], S_ALPHA] != 0.0:
                cold = False
    csum_all = 0.0
    for s in range(m):
        csum_all += Ci[base[s]]
    for k in range(K):
        if cold:
            # w = 0: every margin is 0 (the cached zeros are exact), every loss is C_i
            # (the next evaluation reads every row: schedule it as after a full pass)
            p, q, ek = csum_all, 0.0, m + ptr[n]
        else:
            te = now()
            p, q, ek = binary_objectives_screened(
                nodes, ptr, l2, base, xn, st[k], W[k], W[k], marg[k], mchain[k], wsnap[k],
                chain[k], vC[k], csum[k], atc[k], True,
            )  # fmt: skip
            count_evaluation(stats, ek, te)
        ecost += ek
        prim[k] = p
        dual[k] = q
        Wbest[k, :] = W[k]
        gprev[k] = p - q
        if p - q <= tol * p:
            done[k] = True
            n_done += 1
    row = 0
    write_row(hist, row, 0.0, prim.sum(), dual.sum(), now() - t0, active.sum())

    work = 0
    n_steps = 0
    epoch = 0
    last = 0
    while epoch < max_iter and n_done < K:
        # one round: each open problem runs up to ``block`` epochs in a row (see BLOCK)
        block = min(BLOCK if K > 1 and check_every == 0 else 1, max_iter - epoch)
        epoch += block
        for k in range(K):
            if done[k]:
                continue
            wk = W[k]
            sk = st[k]
            idx = index[k]
            for rep in range(block):
                shuffle_prefix(idx, active[k], rng)
                act, pgmax_new, pgmin_new, work_e, steps_e = binary_epoch(
                    nodes, ptr, idx, active[k], sk, wk, l2, shrinking, pgmax_old[k], pgmin_old[k]
                )
                work += work_e
                n_steps += steps_e
                active[k] = act
                bk = beta[k]
                if bk > 0.0:
                    ak = Wavg[k]
                    for j in range(R):
                        ak[j] = bk * ak[j] + (1.0 - bk) * wk[j]
                pg_conv[k] = pgmax_new - pgmin_new <= eps_pg[k]
                if not pg_conv[k]:
                    pgmax_old[k] = pgmax_new if pgmax_new > 0.0 else np.inf
                    pgmin_old[k] = pgmin_new if pgmin_new < 0.0 else -np.inf
                if pg_conv[k]:
                    if active[k] < m and rep + 1 < block:
                        # the active set is optimal to eps_pg: unshrink and go on, as
                        # LIBLINEAR does, within the block
                        stats[ST_UNSHRINK] += 1
                        active[k] = m
                        pgmax_old[k] = np.inf
                        pgmin_old[k] = -np.inf
                        pg_conv[k] = False
                        continue
                    break

        if check_every > 0:
            check_all = epoch % check_every == 0
        else:
            P = prim.sum()
            check_all = evaluation_due(hist, row, epoch, last, work, ecost, tol, P - dual.sum(), P)
        if epoch == max_iter:
            check_all = True
        # evaluate every problem (check_all), or (check_every = 0) the problems whose epoch
        # shrank nothing and looks optimal: where LIBLINEAR stops that problem
        n_eval = 0
        n_open = K - n_done
        ecost_new = 0
        evald = np.zeros(K, dtype=np.bool_)
        for sweep in range(2):
            for k in range(K):
                if done[k] or evald[k]:
                    continue
                at_stop = pg_conv[k] and active[k] == m and check_every == 0
                if check_all or at_stop or sweep == 1:
                    te = now()
                    # w = w(alpha) summed afresh, so that the dual is D(alpha) of the alpha
                    # returned (the steps' updates of w round, and their errors add up)
                    wwork = binary_weights(nodes, ptr, base, st[k], W[k])
                    wp = Wavg[k] if beta[k] > 0.0 else W[k]
                    p, q, ek = binary_objectives_screened(
                        nodes, ptr, l2, base, xn, st[k], wp, W[k], marg[k], mchain[k],
                        wsnap[k], chain[k], vC[k], csum[k], atc[k], False,
                    )  # fmt: skip
                    ek += wwork
                    count_evaluation(stats, ek, te)
                    ecost_new += ek
                    n_eval += 1
                    evald[k] = True
                    if p < prim[k]:
                        prim[k] = p
                        Wbest[k, :] = wp
                    elif beta[k] == 0.0:
                        osc[k] = True  # P(w(alpha)) went up since an earlier evaluation
                    p = prim[k]
                    dual[k] = q
                    # average over the epochs in which the gap shrinks by at most
                    # AVG_SHRINK (none while it falls fast: the average would lag)
                    g = p - q
                    rate = np.log(gprev[k] / g) / (epoch - eprev[k]) if 0.0 < g else 0.0
                    span = avg_span
                    if rate * avg_span > AVG_SHRINK:
                        span = AVG_SHRINK / rate
                    bk = span / (1.0 + span) if osc[k] and span >= AVG_MIN_SPAN else 0.0
                    if bk > 0.0 and beta[k] == 0.0:
                        Wavg[k, :] = W[k]
                    beta[k] = bk
                    gprev[k] = g
                    eprev[k] = epoch
                    if p - q <= tol * p:
                        done[k] = True
                        n_done += 1
                        continue
                if pg_conv[k] and sweep == 0:
                    stats[ST_UNSHRINK] += 1
                    # the active set is optimal to eps_pg (and the gap is not reached):
                    # unshrink as LIBLINEAR would, or (already on every example) ask for
                    # more before the next unshrinking
                    if active[k] < m:
                        active[k] = m
                    else:
                        eps_pg[k] *= 0.1
                    pgmax_old[k] = np.inf
                    pgmin_old[k] = -np.inf
            # some problems were evaluated: when the sums (the others' values are from their
            # last evaluation) are within twice tol, evaluate the others too (the summed
            # objective may have reached the gap)
            if n_eval == 0 or n_eval == n_open:
                break
            if prim.sum() - dual.sum() > 2.0 * tol * prim.sum():
                break
        if n_eval < n_open:
            continue  # (problems that finished are frozen: their values stay exact)
        # every open problem was evaluated at this epoch: the sums are those of the iterate
        stats[ST_STEP_NNZ] += work
        work = 0
        ecost = ecost_new
        last = epoch
        row += 1
        write_row(hist, row, epoch, prim.sum(), dual.sum(), now() - t0, active.sum())
        if prim.sum() - dual.sum() <= tol * prim.sum():
            # the one-vs-rest objective (the sum) has reached the gap
            n_done = K
    for k in range(K):
        for i in range(n):
            alpha[k, i] = st[k, i, S_ALPHA]
        W[k, :] = Wbest[k]
    count_solve(stats, work, n_steps, t0)
    return epoch, row + 1, n_done
