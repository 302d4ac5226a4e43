"""Dual coordinate ascent for linear SVMs, one compiled call per fit.

Binary and one-vs-rest (Hsieh, Chang, Lin, Keerthi, Sundararajan, ICML 2008, Algorithm 3)
-----------------------------------------------------------------------------------------
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
projected gradients (Hsieh et al. 2008, Sec. 3.2).  After each epoch the primal and the dual
objective are evaluated over all examples (shrunk or not) and the solver stops when the duality
gap P - D <= tol * P; the gap certifies the primal sub-optimality whatever shrinking did.

Crammer-Singer multiclass (Keerthi, Sundararajan, Chang, Hsieh, Lin, KDD 2008; LIBLINEAR -s 4)
---------------------------------------------------------------------------------------------
::

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

The arrays ``alpha`` hold the dual variables in LIBLINEAR's scale (box [0, C_i]); ``W`` is
rewritten from ``alpha`` at the start of a call (so a warm start is exact).
``hist`` receives one row per epoch (row 0: the starting point): epoch, primal, dual, gap,
elapsed seconds, number of active variables.
"""

from __future__ import annotations

import time

import numpy as np
from numba import objmode

from ..._config import njit
from ..sparse import row_dot_euclid, row_offset, row_sqnorm

#: columns of the history array
H_EPOCH, H_PRIMAL, H_DUAL, H_GAP, H_TIME, H_ACTIVE = range(6)
N_HIST = 6


@njit(nogil=False)
def now():
    """Wall clock (seconds) from inside compiled code."""
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(inline="always")
def rand_below(state, n):
    """A pseudo-random integer in [0, n) from the xorshift64* generator whose state is
    ``state[0]`` (uint64, never 0); the modulo bias is below n / 2**64."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return np.int64((x * np.uint64(2685821657736338717)) >> np.uint64(11)) % n


@njit
def rng_state(seed):
    """A non-zero xorshift64* state from an integer seed (splitmix64 of the seed)."""
    z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    if z == np.uint64(0):
        z = np.uint64(1)
    st = np.empty(1, dtype=np.uint64)
    st[0] = z
    return st


@njit(inline="always")
def row_dot(data, indices, indptr, i, w, b, d):
    """<w, x_i> (+ b w[d] for the intercept feature)."""
    start = indptr[i]
    off = row_offset(data, indices, start)
    s = 0.0
    for p in range(start, indptr[i + 1]):
        s += data[p] * w[indices[p - off]]
    if b != 0.0:
        s += b * w[d]
    return s


@njit(inline="always")
def row_axpy(data, indices, indptr, i, a, w, b, d):
    """w += a x_i (and w[d] += a b)."""
    start = indptr[i]
    off = row_offset(data, indices, start)
    for p in range(start, indptr[i + 1]):
        w[indices[p - off]] += a * data[p]
    if b != 0.0:
        w[d] += a * b


# ---------------------------------------------------------------------------- binary / OvR
@njit
def binary_objectives(data, indices, indptr, b, ycodes, pos, Ci, l2, alpha_k, w):
    """(primal, dual) of one binary problem (class ``pos`` against the rest) at (w, alpha_k);
    ``w`` is taken as given (it equals w(alpha_k) up to rounding)."""
    n = indptr.shape[0] - 1
    R = w.shape[0]
    d = R - 1 if b != 0.0 else R
    wsq = 0.0
    for j in range(R):
        wsq += w[j] * w[j]
    bw = b * w[d] if b != 0.0 else 0.0
    dense = indices.shape[0] != data.shape[0]
    loss = 0.0
    asum = 0.0
    a2 = 0.0
    for i in range(n):
        c = Ci[i]
        if c <= 0.0:
            continue
        start = indptr[i]
        off = start if dense else 0
        z = bw
        for p in range(start, indptr[i + 1]):
            z += data[p] * w[indices[p - off]]
        xi = 1.0 - z if ycodes[i] == pos else 1.0 + z
        if xi > 0.0:
            loss += c * (xi * xi if l2 else xi)
        a = alpha_k[i]
        asum += a
        if l2:
            a2 += a * a / (4.0 * c)
    return 0.5 * wsq + loss, asum - 0.5 * wsq - a2


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


@njit(nogil=False)
def ovr_dcd(
    data,
    indices,
    indptr,
    b,
    ycodes,
    pos,
    Ci,
    l2,
    alpha,
    W,
    tol,
    max_iter,
    shrinking,
    seed,
    check_every,
    hist,
):
    """Solve the K binary problems "class pos[k] against the rest" (K = 1: binary) by dual
    coordinate ascent, interleaved epoch by epoch.

    The objectives (a pass over every example) are evaluated every ``check_every`` epochs, or,
    with ``check_every`` = 0, once the coordinate steps since the last evaluation have read as
    many nonzeros as an evaluation does, and whenever an epoch that shrank nothing looks
    optimal (its projected gradients span at most eps_pg: LIBLINEAR's stopping rule); always
    after the last epoch.  Each evaluation writes a row of ``hist`` holding the sums over the
    K problems (the one-vs-rest objective is their sum).

    Stops when every problem has reached its own relative gap, or when the summed objective
    has (the one-vs-rest objective's gap); returns (epochs run, rows of ``hist`` written,
    number of problems that reached the gap, K when the sum did).
    """
    t0 = now()
    n = indptr.shape[0] - 1
    K, R = W.shape
    d = R - 1 if b != 0.0 else R
    rng = rng_state(seed)

    QD = np.zeros(n)
    U = np.zeros(n)
    Dii = np.zeros(n)
    m = 0
    for i in range(n):
        if Ci[i] > 0.0:
            m += 1
    base = np.empty(m, dtype=np.int64)
    m = 0
    nnz_all = 0
    for i in range(n):
        c = Ci[i]
        if c > 0.0:
            base[m] = i
            m += 1
            nnz_all += indptr[i + 1] - indptr[i] + 1
            if l2:
                Dii[i] = 0.5 / c
                U[i] = np.inf
            else:
                U[i] = c
            QD[i] = row_sqnorm(data, indptr, i, b) + Dii[i]

    # w(alpha): exact start from the given dual point
    for k in range(K):
        for j in range(R):
            W[k, j] = 0.0
        for s in range(m):
            i = base[s]
            a = alpha[k, i]
            if a != 0.0:
                y = 1.0 if ycodes[i] == pos[k] else -1.0
                row_axpy(data, indices, indptr, i, a * y, W[k], b, d)

    index = np.empty((K, m), dtype=np.int64)
    for k in range(K):
        index[k, :] = base
    active = np.full(K, m, dtype=np.int64)
    pgmax_old = np.full(K, np.inf)
    pgmin_old = np.full(K, -np.inf)
    eps_pg = np.full(K, 0.1)
    pg_conv = np.zeros(K, dtype=np.bool_)
    done = np.zeros(K, dtype=np.bool_)
    prim = np.zeros(K)
    dual = np.zeros(K)
    n_done = 0
    for k in range(K):
        p, q = binary_objectives(data, indices, indptr, b, ycodes, pos[k], Ci, l2, alpha[k], W[k])
        prim[k] = p
        dual[k] = q
        if p - q <= tol * p:
            done[k] = True
            n_done += 1
    row = 0
    hist[row, H_EPOCH] = 0.0
    hist[row, H_PRIMAL] = prim.sum()
    hist[row, H_DUAL] = dual.sum()
    hist[row, H_GAP] = prim.sum() - dual.sum()
    hist[row, H_TIME] = now() - t0
    hist[row, H_ACTIVE] = active.sum()

    work = 0
    epoch = 0
    while epoch < max_iter and n_done < K:
        epoch += 1
        any_pg = False
        for k in range(K):
            if done[k]:
                continue
            wk = W[k]
            ak = alpha[k]
            idx = index[k]
            pk = pos[k]
            act = active[k]
            for s in range(act):
                j = s + rand_below(rng, act - s)
                t = idx[s]
                idx[s] = idx[j]
                idx[j] = t
            pgmax_new = -np.inf
            pgmin_new = np.inf
            s = 0
            while s < act:
                i = idx[s]
                y = 1.0 if ycodes[i] == pk else -1.0
                a = ak[i]
                G = y * row_dot(data, indices, indptr, i, wk, b, d) - 1.0 + Dii[i] * a
                work += indptr[i + 1] - indptr[i] + 1
                Ui = U[i]
                PG = 0.0
                if a == 0.0:
                    if shrinking and G > pgmax_old[k]:
                        act -= 1
                        idx[s] = idx[act]
                        idx[act] = i
                        continue
                    elif G < 0.0:
                        PG = G
                elif a == Ui:
                    if shrinking and G < pgmin_old[k]:
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
                    an = binary_cd_step(a, G, QD[i], Ui)
                    if an != a:
                        ak[i] = an
                        row_axpy(data, indices, indptr, i, (an - a) * y, wk, b, d)
                        work += indptr[i + 1] - indptr[i] + 1
                s += 1
            active[k] = act
            pg_conv[k] = pgmax_new - pgmin_new <= eps_pg[k]
            if pg_conv[k]:
                # optimal to eps_pg with nothing shrunk: where LIBLINEAR stops, worth a check
                # (with a shrunk active set LIBLINEAR re-opens it: done below, no evaluation)
                if act == m:
                    any_pg = True
            else:
                pgmax_old[k] = pgmax_new if pgmax_new > 0.0 else np.inf
                pgmin_old[k] = pgmin_new if pgmin_new < 0.0 else -np.inf

        cost = nnz_all * (K - n_done)
        if check_every > 0:
            check = epoch % check_every == 0
        else:
            check = any_pg or work >= cost
        if epoch == max_iter:
            check = True
        for k in range(K):
            if done[k] or not pg_conv[k]:
                continue
            if check:
                continue  # decided after the evaluation below
            # (fixed schedule, no evaluation this epoch) unshrink as LIBLINEAR would
            if active[k] < m:
                active[k] = m
            else:
                eps_pg[k] *= 0.1
            pgmax_old[k] = np.inf
            pgmin_old[k] = -np.inf
        if not check:
            continue
        work = 0
        for k in range(K):
            if done[k]:
                continue
            p, q = binary_objectives(
                data, indices, indptr, b, ycodes, pos[k], Ci, l2, alpha[k], W[k]
            )
            prim[k] = p
            dual[k] = q
            if p - q <= tol * p:
                done[k] = True
                n_done += 1
            elif pg_conv[k]:
                # the active set is optimal to eps_pg but the gap is not reached: unshrink,
                # or (already on every example) ask for more before the next unshrinking
                if active[k] < m:
                    active[k] = m
                else:
                    eps_pg[k] *= 0.1
                pgmax_old[k] = np.inf
                pgmin_old[k] = -np.inf
        row += 1
        hist[row, H_EPOCH] = epoch
        hist[row, H_PRIMAL] = prim.sum()
        hist[row, H_DUAL] = dual.sum()
        hist[row, H_GAP] = prim.sum() - dual.sum()
        hist[row, H_TIME] = now() - t0
        hist[row, H_ACTIVE] = active.sum()
        if prim.sum() - dual.sum() <= tol * prim.sum():
            # the one-vs-rest objective (the sum) has reached the gap
            n_done = K
    return epoch, row + 1, n_done


# ---------------------------------------------------------------------------- Crammer-Singer
@njit
def cs_objectives(data, indices, indptr, b, ycodes, Ci, alpha, W):
    """(primal, dual) of the Crammer-Singer problem at (W, alpha)."""
    n = indptr.shape[0] - 1
    R, K = W.shape
    d = R - 1 if b != 0.0 else R
    wsq = 0.0
    for j in range(R):
        for m in range(K):
            wsq += W[j, m] * W[j, m]
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


@njit(nogil=False)
def cs_dcd(
    data, indices, indptr, b, ycodes, Ci, alpha, W, tol, max_iter, shrinking, seed, check_every,
    hist,
):  # fmt: skip
    """Crammer-Singer multiclass SVM by the sequential dual method.  ``alpha`` (n, K),
    ``W`` (R, K).  ``check_every`` as in :func:`ovr_dcd` (with 0, the objectives are also
    evaluated when the largest violation of an epoch falls below the unshrinking threshold).
    Returns (epochs run, rows of ``hist`` written, 1 if the gap was reached)."""
    t0 = now()
    n = indptr.shape[0] - 1
    R, K = W.shape
    d = R - 1 if b != 0.0 else R
    rng = rng_state(seed)

    QD = np.zeros(n)
    m_ex = 0
    for i in range(n):
        if Ci[i] > 0.0:
            m_ex += 1
    index = np.empty(m_ex, dtype=np.int64)
    m_ex = 0
    nnz_all = 0
    for i in range(n):
        if Ci[i] > 0.0:
            index[m_ex] = i
            m_ex += 1
            QD[i] = row_sqnorm(data, indptr, i, b)
            nnz_all += (indptr[i + 1] - indptr[i] + 1) * K
    for j in range(R):
        for m in range(K):
            W[j, m] = 0.0
    for s in range(m_ex):
        i = index[s]
        start = indptr[i]
        off = row_offset(data, indices, start)
        for p in range(start, indptr[i + 1]):
            j = indices[p - off]
            v = data[p]
            for m in range(K):
                W[j, m] += alpha[i, m] * v
        if b != 0.0:
            for m in range(K):
                W[d, m] += alpha[i, m] * b

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
    d_ind = np.empty(K, dtype=np.int64)
    d_val = np.empty(K)
    eps_shrink = 1.0
    start_from_all = True

    p0, q0 = cs_objectives(data, indices, indptr, b, ycodes, Ci, alpha, W)
    row = 0
    hist[row, H_EPOCH] = 0.0
    hist[row, H_PRIMAL] = p0
    hist[row, H_DUAL] = q0
    hist[row, H_GAP] = p0 - q0
    hist[row, H_TIME] = now() - t0
    hist[row, H_ACTIVE] = active_size_i.sum()
    reached = 1 if p0 - q0 <= tol * p0 else 0

    work = 0
    epoch = 0
    while epoch < max_iter and reached == 0:
        epoch += 1
        stopping = -np.inf
        for s in range(active):
            j = s + rand_below(rng, active - s)
            t = index[s]
            index[s] = index[j]
            index[j] = t
        s = 0
        while s < active:
            i = index[s]
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
            start = indptr[i]
            off = row_offset(data, indices, start)
            work += (indptr[i + 1] - start + 1) * na
            for p in range(start, indptr[i + 1]):
                j = indices[p - off]
                v = data[p]
                for q in range(na):
                    G[q] += W[j, aidx[q]] * v
            if b != 0.0:
                for q in range(na):
                    G[q] += W[d, aidx[q]] * b
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
            nz = 0
            for q in range(na):
                dv = anew[q] - ai[aidx[q]]
                ai[aidx[q]] = anew[q]
                if abs(dv) >= 1e-12:
                    d_ind[nz] = aidx[q]
                    d_val[nz] = dv
                    nz += 1
            work += (indptr[i + 1] - start + 1) * nz
            for p in range(start, indptr[i + 1]):
                j = indices[p - off]
                v = data[p]
                for q in range(nz):
                    W[j, d_ind[q]] += d_val[q] * v
            if b != 0.0:
                for q in range(nz):
                    W[d, d_ind[q]] += d_val[q] * b
            s += 1

        unshrink = stopping < eps_shrink
        if check_every > 0:
            check = epoch % check_every == 0
        else:
            # LIBLINEAR stops when an epoch that started from every variable looks optimal
            check = (unshrink and start_from_all) or work >= nnz_all
        if epoch == max_iter:
            check = True
        if check:
            work = 0
            pk, qk = cs_objectives(data, indices, indptr, b, ycodes, Ci, alpha, W)
            row += 1
            hist[row, H_EPOCH] = epoch
            hist[row, H_PRIMAL] = pk
            hist[row, H_DUAL] = qk
            hist[row, H_GAP] = pk - qk
            hist[row, H_TIME] = now() - t0
            n_act = 0
            for s2 in range(active):
                n_act += active_size_i[index[s2]]
            hist[row, H_ACTIVE] = n_act
            if pk - qk <= tol * pk:
                reached = 1
                break
        if unshrink:
            # the active variables are optimal to eps_shrink: unshrink and ask for more
            active = m_ex
            for i in range(n):
                active_size_i[i] = K
            eps_shrink *= 0.5
            start_from_all = True
        else:
            start_from_all = False
    return epoch, row + 1, reached
