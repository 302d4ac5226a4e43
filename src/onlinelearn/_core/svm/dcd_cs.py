"""Crammer-Singer multiclass SVM by dual coordinate ascent (Keerthi, Sundararajan, Chang, Hsieh,
Lin, KDD 2008; LIBLINEAR ``-s 4``)::

    primal  P(W) = 1/2 sum_m ||w_m||^2 + sum_i C_i max_m (e_i^m + <w_m, x_i> - <w_{y_i}, x_i>)
            e_i^m = 1 - [m = y_i]
    dual    D(alpha) = sum_i alpha_i^{y_i} - 1/2 sum_m ||w_m(alpha)||^2,
            w_m(alpha) = sum_i alpha_i^m x_i,
            alpha_i^m <= C_i [m = y_i],  sum_m alpha_i^m = 0

The sequential dual method optimises the K variables of one example at a time: the
sub-problem min 1/2 A_i ||a||^2 + B'a over the same constraints (A_i = ||x_i||^2,
B_m = G_m - A_i alpha_i^m, G_m = <w_m, x_i> + e_i^m) is solved exactly by sorting
(Keerthi et al. 2008, Sec. 3; LIBLINEAR's ``solve_sub_problem``); shrinking drops classes
m of an example at their bound whose gradient is below the smallest free gradient.

``alpha`` (n, K) holds the dual variables in LIBLINEAR's scale; ``W`` (R, K) is rewritten
from ``alpha`` (:func:`cs_weights`) at the start of a call (so a warm start is exact) and at
each evaluation of the gap, so that the dual recorded is D(alpha) of the alpha returned and
not that of a W whose updates' rounding errors have added up.  A coordinate step moves W by
every change of alpha (LIBLINEAR only by the changes of 1e-12 or more, which let W drift from
W(alpha) by the size of the gap at tight tolerances).  Summing W afresh reads the rows with a
nonzero alpha once per evaluation: 1-3% more nonzeros read in a fit at tol = 1e-3 (dna,
pendigits, news20, 10,000 mnist rows), 16% in one news20 fit of three, where the costlier
evaluations moved the schedule's checks and the stop came 9 epochs later.

The gap is evaluated exactly without reading every row (:func:`cs_objectives_screened`): the
loss of example i is C_i [1 - mu_i]_+ with the multiclass margin
mu_i = <w_{y_i}, x_i> - max_{m != y_i} <w_m, x_i>, and |mu_i(now) - mu_i(then)| <=
2 ||x_i|| max_m ||w_m(now) - w_m(then)||; an example whose cached margin exceeds 1 by more
than that bound (summed over the displacements between evaluations) has a zero loss and is
not read.
"""

from __future__ import annotations

import numpy as np

from ..config import njit
from ..dense import sum_squares
from ..prefetch import PREFETCH_MIN_ENTRIES, prefetch_matrix_row
from ..sparse import row_dot_euclid
from .dcd_common import (
    H_GAP,
    H_PRIMAL,
    ST_STEP_NNZ,
    ST_UNSHRINK,
    count_evaluation,
    count_solve,
    evaluation_due,
    node_sqnorm,
    now,
    rng_state,
    rows_with_cost,
    shuffle_prefix,
    write_row,
)

#: relative slack on a cached margin for rounding (an example this close to 1 is recomputed)
MARGIN_SAFETY = 1e-9


@njit
def cs_objectives(data, indices, indptr, b, ycodes, Ci, alpha, W):
    """(primal, dual) of the Crammer-Singer problem at (W, alpha)."""
    n = indptr.shape[0] - 1
    R, K = W.shape
    d = R - 1 if b != 0.0 else R
    wsq = sum_squares(W)
    sc = np.empty(K)
    loss = 0.0
    asum = 0.0
    for i in range(n):
        c = Ci[i]
        if c <= 0.0:
            continue
        row_dot_euclid(data, indices, indptr, i, W, b, d, sc)
        yi = ycodes[i]
        mx = 0.0
        for m in range(K):
            if m != yi:
                v = 1.0 + sc[m] - sc[yi]
                if v > mx:
                    mx = v
        loss += c * mx
        asum += alpha[i, yi]
    return 0.5 * wsq + loss, asum - 0.5 * wsq


@njit
def cs_objectives_screened(
    nodes, ptr, ycodes, Ci, base, xn, alpha, W, marg, mchain, Wsnap, chain, full, sc
):  # fmt: skip
    """(primal, dual, chain length now, work) of the Crammer-Singer problem at (W, alpha),
    reading only the rows whose cached margin ``marg[i]`` (computed when the chain of
    displacements 2 max_m ||w_m - w_m^snap|| between evaluations had length ``mchain[i]``)
    does not settle a zero loss (every row when ``full``).  ``Wsnap`` (the weights of the last
    evaluation, where the chain had length ``chain``) becomes ``W``.  Equals
    :func:`cs_objectives` up to rounding."""
    R, K = W.shape
    wsq = 0.0
    for m in range(K):
        sc[m] = 0.0
    for j in range(R):
        for m in range(K):
            v = W[j, m]
            wsq += v * v
            dv = v - Wsnap[j, m]
            sc[m] += dv * dv
            Wsnap[j, m] = v
    dmax = 0.0
    for m in range(K):
        if sc[m] > dmax:
            dmax = sc[m]
    path = chain + 2.0 * np.sqrt(dmax)
    loss = 0.0
    asum = 0.0
    work = 0
    for s in range(base.shape[0]):
        i = base[s]
        yi = ycodes[i]
        asum += alpha[i, yi]
        mu = marg[i]
        if not full and mu - xn[i] * (path - mchain[i]) - MARGIN_SAFETY * (1.0 + abs(mu)) >= 1.0:
            continue
        for m in range(K):
            sc[m] = 0.0
        for p in range(np.uint64(ptr[i]), np.uint64(ptr[i + 1])):
            j = np.uint32(nodes[p].j)
            v = nodes[p].v
            for m in range(K):
                sc[m] += v * W[j, m]
        work += (ptr[i + 1] - ptr[i]) * K
        mx = -np.inf
        for m in range(K):
            if m != yi and sc[m] > mx:
                mx = sc[m]
        mu = sc[yi] - mx
        marg[i] = mu
        mchain[i] = path
        if mu < 1.0:
            loss += Ci[i] * (1.0 - mu)
    return 0.5 * wsq + loss, asum - 0.5 * wsq, path, work + base.shape[0] + R * K


@njit
def cs_subproblem(A, B, yi, Cy, n_act, out, work):
    """Exact minimiser of 1/2 A ||a||^2 + B'a over a in R^n_act subject to a_m <= Cy [m = yi],
    sum_m a_m = -(fixed part) (Keerthi et al. 2008, Sec. 3; LIBLINEAR solve_sub_problem).
    ``yi`` >= n_act means the true class is shrunk (fixed at its bound Cy)."""
    for r in range(n_act):
        work[r] = B[r]
    if yi < n_act:
        work[yi] += A * Cy
    # sort work[:n_act] in decreasing order (n_act = number of classes: insertion sort)
    for r in range(1, n_act):
        v = work[r]
        q = r - 1
        while q >= 0 and work[q] < v:
            work[q + 1] = work[q]
            q -= 1
        work[q + 1] = v
    beta = work[0] - A * Cy
    r = 1
    while r < n_act and beta < r * work[r]:
        beta += work[r]
        r += 1
    beta /= r
    for q in range(n_act):
        v = (beta - B[q]) / A
        if q == yi:
            out[q] = v if v < Cy else Cy
        else:
            out[q] = v if v < 0.0 else 0.0


@njit
def cs_weights(nodes, ptr, base, alpha, W, d_ind, d_val):
    """W = W(alpha), w_m = sum_i alpha_i^m x_i over the rows ``base``, summed from scratch
    (``d_ind``, ``d_val``: work arrays of K entries); returns the nonzeros read (0: alpha = 0)."""
    R, K = W.shape
    for j in range(R):
        for m in range(K):
            W[j, m] = 0.0
    work = 0
    for s in range(base.shape[0]):
        i = base[s]
        nz = 0
        for m in range(K):
            if alpha[i, m] != 0.0:
                d_ind[nz] = m
                d_val[nz] = alpha[i, m]
                nz += 1
        if nz == 0:
            continue
        work += (ptr[i + 1] - ptr[i]) * nz
        for p in range(np.uint64(ptr[i]), np.uint64(ptr[i + 1])):
            j = np.uint32(nodes[p].j)
            v = nodes[p].v
            for q in range(nz):
                W[j, np.uint64(d_ind[q])] += d_val[q] * v
    return work


@njit
def prefetch_node_rows(nodes, ptr, i, W):
    """Request every line of the rows of W that packed row i reads (W C-contiguous (R, K))."""
    for p in range(ptr[i], ptr[i + 1]):
        prefetch_matrix_row(W, np.intp(nodes[p].j))


@njit(nogil=False)
def cs_dcd(
    nodes, ptr, ycodes, Ci, alpha, W, tol, max_iter, shrinking, seed, check_every, hist, stats
):  # fmt: skip
    """Crammer-Singer multiclass SVM by the sequential dual method.  Rows are packed
    (:func:`.pack_rows`, the intercept feature included); ``alpha`` (n, K), ``W`` (R, K)
    receives the weights of smallest primal value among the evaluations (the pocket, as in
    :func:`.dcd_binary.ovr_dcd`: the gap certified is P(W_best) - D(alpha)).
    ``check_every`` as in :func:`.dcd_binary.ovr_dcd` (with 0, the objectives are also
    evaluated when an epoch that started from every variable looks optimal); ``stats``
    receives the counts of :data:`.dcd_common.STATS_FIELDS`.  Returns (epochs run, rows of
    ``hist`` written, 1 if the gap was reached)."""
    t0 = now()
    n = ptr.shape[0] - 1
    R, K = W.shape
    pf_w = W.size >= PREFETCH_MIN_ENTRIES  # W outgrows the core's L2 (news20: 9 MB)
    rng = rng_state(seed)

    QD = np.zeros(n)
    xn = np.zeros(n)
    base = rows_with_cost(Ci)
    m_ex = base.shape[0]
    for s in range(m_ex):
        i = base[s]
        QD[i] = node_sqnorm(nodes, ptr, i)
        xn[i] = np.sqrt(QD[i])
    index = base.copy()
    d_ind = np.empty(K, dtype=np.int64)
    d_val = np.empty(K)
    cold = cs_weights(nodes, ptr, base, alpha, W, d_ind, d_val) == 0

    alpha_index = np.empty((n, K), dtype=np.int64)
    for i in range(n):
        for m in range(K):
            alpha_index[i, m] = m
    y_index = np.empty(n, dtype=np.int64)
    for i in range(n):
        y_index[i] = ycodes[i]
    active_size_i = np.full(n, K, dtype=np.int64)
    active = m_ex
    G = np.empty(K)
    B = np.empty(K)
    anew = np.empty(K)
    wbuf = np.empty(K)
    eps_shrink = 1.0
    start_from_all = True

    marg = np.zeros(n)
    mchain = np.zeros(n)
    Wsnap = np.zeros((R, K))
    sc = np.empty(K)
    if cold:
        # W = 0: every margin is 0 (the cached zeros are exact), every loss is C_i
        # (the next evaluation reads every row: schedule it as after a full pass)
        p0, q0, chain, ecost = 0.0, 0.0, 0.0, m_ex + ptr[n] * K
        for s in range(m_ex):
            p0 += Ci[base[s]]
    else:
        te = now()
        p0, q0, chain, ecost = cs_objectives_screened(
            nodes, ptr, ycodes, Ci, base, xn, alpha, W, marg, mchain, Wsnap, 0.0, True, sc
        )
        count_evaluation(stats, ecost, te)
    Wbest = W.copy()  # the weights of smallest primal value so far, p0
    row = 0
    write_row(hist, row, 0.0, p0, q0, now() - t0, active_size_i.sum())
    reached = 1 if p0 - q0 <= tol * p0 else 0

    work = 0
    n_steps = 0
    epoch = 0
    last = 0
    while epoch < max_iter and reached == 0:
        epoch += 1
        stopping = -np.inf
        shuffle_prefix(index, active, rng)
        s = 0
        while s < active:
            i = index[s]
            if pf_w and s + 1 < active:
                # the next example's rows of W, while this one is solved (news20, W of
                # 9 MB: an epoch's misses were waited on one by one; fit 0.80 -> 0.60 s)
                prefetch_node_rows(nodes, ptr, index[s + 1], W)
            Ai = QD[i]
            Cy = Ci[i]
            ai = alpha[i]
            aidx = alpha_index[i]
            if Ai <= 0.0:
                s += 1
                continue
            na = active_size_i[i]
            yix = y_index[i]
            for q in range(na):
                G[q] = 1.0
            if yix < na:
                G[yix] = 0.0
            start = ptr[i]
            end = ptr[i + 1]
            work += (end - start) * na
            n_steps += 1
            # unsigned positions and indices: no negative-index wraparound per access
            for p in range(np.uint64(start), np.uint64(end)):
                j = np.uint32(nodes[p].j)
                v = nodes[p].v
                for q in range(na):
                    G[q] += W[j, np.uint64(aidx[q])] * v
            minG = np.inf
            maxG = -np.inf
            for q in range(na):
                if ai[aidx[q]] < 0.0 and G[q] < minG:
                    minG = G[q]
                if G[q] > maxG:
                    maxG = G[q]
            if yix < na:
                if ai[ycodes[i]] < Cy and G[yix] < minG:
                    minG = G[yix]
            if shrinking:
                q = 0
                while q < na:
                    bound = Cy if q == yix else 0.0
                    if ai[aidx[q]] == bound and G[q] < minG:
                        # shrink class q of example i: swap it behind the active classes
                        na -= 1
                        while na > q:
                            bound2 = Cy if na == yix else 0.0
                            if not (ai[aidx[na]] == bound2 and G[na] < minG):
                                t = aidx[q]
                                aidx[q] = aidx[na]
                                aidx[na] = t
                                tg = G[q]
                                G[q] = G[na]
                                G[na] = tg
                                if yix == na:
                                    yix = q
                                elif yix == q:
                                    yix = na
                                break
                            na -= 1
                    q += 1
                active_size_i[i] = na
                y_index[i] = yix
                if na <= 1:
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
            if maxG - minG <= 1e-12:
                s += 1
                continue
            if maxG - minG > stopping:
                stopping = maxG - minG
            for q in range(na):
                B[q] = G[q] - Ai * ai[aidx[q]]
            cs_subproblem(Ai, B, yix, Cy, na, anew, wbuf)
            # w moves by every change of alpha (LIBLINEAR moves it only by the changes of
            # 1e-12 or more, so that w drifts from w(alpha) and the dual evaluated from w is
            # not D(alpha): dna, C = 0.1, 3000 epochs, by 4e-10 relative, the size of the gap)
            nz = 0
            for q in range(na):
                dv = anew[q] - ai[aidx[q]]
                ai[aidx[q]] = anew[q]
                if dv != 0.0:
                    d_ind[nz] = aidx[q]
                    d_val[nz] = dv
                    nz += 1
            work += (end - start) * nz
            for p in range(np.uint64(start), np.uint64(end)):
                j = np.uint32(nodes[p].j)
                v = nodes[p].v
                for q in range(nz):
                    W[j, np.uint64(d_ind[q])] += d_val[q] * v
            s += 1

        unshrink = stopping < eps_shrink
        if check_every > 0:
            check = epoch % check_every == 0
        else:
            # LIBLINEAR stops when an epoch that started from every variable looks optimal;
            # otherwise as in ovr_dcd
            check = (unshrink and start_from_all) or evaluation_due(
                hist, row, epoch, last, work, ecost, tol, hist[row, H_GAP], hist[row, H_PRIMAL]
            )
        if epoch == max_iter:
            check = True
        if check:
            stats[ST_STEP_NNZ] += work
            work = 0
            last = epoch
            te = now()
            # W = W(alpha) summed afresh, so that the dual is D(alpha) of the alpha returned
            # (the steps' updates of W round, and their errors add up) and the primal point
            # is W(alpha) itself
            wwork = cs_weights(nodes, ptr, base, alpha, W, d_ind, d_val)
            pk, qk, chain, ecost = cs_objectives_screened(
                nodes, ptr, ycodes, Ci, base, xn, alpha, W, marg, mchain, Wsnap, chain, False, sc
            )
            ecost += wwork
            count_evaluation(stats, ecost, te)
            if pk < p0:
                p0 = pk
                Wbest[:, :] = W
            pk = p0
            row += 1
            n_act = 0
            for s2 in range(active):
                n_act += active_size_i[index[s2]]
            write_row(hist, row, epoch, pk, qk, now() - t0, n_act)
            if pk - qk <= tol * pk:
                reached = 1
                break
        if unshrink:
            stats[ST_UNSHRINK] += 1
            # the active variables are optimal to eps_shrink: unshrink and ask for more
            active = m_ex
            for i in range(n):
                active_size_i[i] = K
            eps_shrink *= 0.5
            start_from_all = True
        else:
            start_from_all = False
    W[:, :] = Wbest
    count_solve(stats, work, n_steps, t0)
    return epoch, row + 1, reached
