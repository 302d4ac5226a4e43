"""One compiled pass of a kernel online learner (Perceptron, PA, PA-I, PA-II, COPA) over a batch.

What
    The learners of :mod:`.euclid_pass` in the dual: the hypothesis is
    f_k(x) = sum_s c_sk (k(x_s, x) + b^2) over a support set {x_s}, and every inner product
    <w, x> of the linear update is replaced by the kernel.  A round needs only the scores f_k(x_t)
    and kappa(x_t) = k(x_t, x_t) + b^2 (the squared norm of x_t in feature space, the intercept
    feature of value b included), so the steps are exactly those of the linear learners
    (:func:`..steps.hinge_step`, :func:`..copa.copa_step`, :func:`..margins.predict_margin_loss`)
    and an update adds its coefficients to the row of x_t in the support set:

        binary:      c_t += tau y_t           (one column)
        K classes:   c_{t,y} += tau, c_{t,r} -= tau   (r the max-loss rival)
        COPA:        c_{t,q} += alpha_q for every q   (update coefficients of (24))

Support set
    Slots 0 .. n_sv-1 are the support vectors; slot s holds a row of the pool
    (``pool_d[sv_lo[s]:sv_hi[s]]``, column indices in ``pool_i``), its per-leaf squared norms, its
    coefficients ``coef[s]`` and, for averaging, ``A[s]`` and ``last[s]`` (the lazy average:
    sum over rounds of c_s = A_s + c_s (S - last_s)).  ``slot_of_row[i]`` is the slot of batch row
    i (-1 if none), so several epochs over the same rows add to one slot per row.

Budget (``budget`` > 0: at most that many support vectors).  When a row must enter a full set,
    one support vector is removed first: ``REMOVE_OLDEST`` the one inserted first (the
    Forgetron's choice of whom to forget, without its shrinking of the others), or
    ``REMOVE_SMALLEST`` the one with the smallest ||c_s||_2.  The removed slot is filled with the
    last one (the set stays compact); its pool entries become garbage, compacted by the caller.
    The average leaves with the vector: the averaged hypothesis is
    (1/T) sum_t sum_{s in the set now} c_s^(t) (k(x_s, .) + b^2), c_s^(t) the coefficient of s
    after round t (0 before it entered), i.e. the average over all T rounds of the hypotheses
    restricted to the vectors still in the set (so it never holds more than ``budget`` vectors).
    :func:`shrink` applies the same rule when the budget was lowered between two calls.

Scalars ``st``: T rounds, S average clock, n_updates, n_mistakes, n_sv, pool_used, n_removed,
insertions (the birth counter for "oldest"), DUAL and DUAL_QUAD (the kept dual objective).

Dual (``keep_dual``: the hinge steps, not COPA)
    Each update adds to ``st[DUAL]`` the rise of the dual objective by its variable tau_t
    (:func:`..state.dual_increment`, the linear learners' increment) from the margin and
    kappa(x_t) the round has already computed, so that, with u_t = y_t k(x_t, .) (or
    k(x_t, .) on column y_t and -k(x_t, .) on the rival's) and the intercept feature b::

        st[DUAL] = sum_t (gamma tau_t - [PA-II] tau_t^2 / (4 C_t)) - 1/2 ||f||_H^2,
        ||f||_H^2 = sum_k sum_{s,s'} c_sk c_s'k (k(x_s, x_s') + b^2)

    ``st[DUAL_QUAD]`` keeps the sum of the PA-II terms tau_t^2 / (4 C_t) (the estimator needs it
    to halve the variables exactly when a binary model becomes multiclass).  A removal (budget)
    drops the coefficients of a support vector from f, so f is no longer sum_t tau_t u_t: the
    kept dual becomes NaN (NaN stays NaN) and is not kept again.
"""

from __future__ import annotations

import math

from ..config import njit
from ..copa import copa_step
from ..margins import predict_margin_loss
from ..state import dual_increment
from ..status import NONFINITE, OK
from ..steps import CONSERVATIVE, COPA, PA2, hinge_step, max_loss_alpha
from .gram import LAPLACE, RBF, finite, leaf_value, pair_value, row_bounds

T = 0
S_CLOCK = 1
N_UPDATES = 2
N_MISTAKES = 3
N_SV = 4
POOL_USED = 5
N_REMOVED = 6
BIRTHS = 7
DUAL = 8
DUAL_QUAD = 9
N_ST = 10

REMOVE_OLDEST = 0
REMOVE_SMALLEST = 1

#: no room left in the pool or the slots (the code after those of :mod:`..status`)
FULL = NONFINITE + 1


@njit
def _victim(rule, coef, born, n_sv):
    v = 0
    best = math.inf
    K = coef.shape[1]
    for s in range(n_sv):
        if rule == REMOVE_OLDEST:
            key = born[s]
        else:
            key = 0.0
            for k in range(K):
                key += coef[s, k] * coef[s, k]
        if key < best:
            best = key
            v = s
    return v


@njit
def _move_slot(dst, src, sv_lo, sv_hi, sv_norm, sv_kxx, coef, A, last, born, label, sv_src,
               slot_of_row):  # fmt: skip
    sv_lo[dst] = sv_lo[src]
    sv_hi[dst] = sv_hi[src]
    sv_kxx[dst] = sv_kxx[src]
    last[dst] = last[src]
    born[dst] = born[src]
    label[dst] = label[src]
    sv_src[dst] = sv_src[src]
    for q in range(sv_norm.shape[1]):
        sv_norm[dst, q] = sv_norm[src, q]
    for k in range(coef.shape[1]):
        coef[dst, k] = coef[src, k]
        A[dst, k] = A[src, k]
    if sv_src[dst] >= 0:
        slot_of_row[sv_src[dst]] = dst


@njit
def _remove_one(rule, n_sv, sv_lo, sv_hi, sv_norm, sv_kxx, coef, A, last, born, label, sv_src,
                slot_of_row):  # fmt: skip
    """Remove the support vector chosen by ``rule`` from slots 0 .. n_sv-1 (the last slot fills
    its place; its coefficients and average go with it)."""
    v = _victim(rule, coef, born, n_sv)
    if sv_src[v] >= 0:
        slot_of_row[sv_src[v]] = -1
    if v != n_sv - 1:
        _move_slot(v, n_sv - 1, sv_lo, sv_hi, sv_norm, sv_kxx, coef, A, last, born, label,
                   sv_src, slot_of_row)  # fmt: skip


@njit(fastmath={"contract"})
def _scattered_dist(xd, zd, zi, z0, z1, zbuf, lo, hi, l1):
    """:func:`.gram._dist` of a sparse row x and a sparse row z (entries z0..z1), from x
    scattered into ``xd`` (zeros elsewhere): z is scattered into ``zbuf`` (and zeroed again),
    then sum_j f(x_j - z_j) over every column j of [lo, hi) in order.  The merge of the two
    rows adds the same terms in the same order (each t^2 fused into the sum, s = fma(t, t, s),
    where the target has fused multiply-adds: the fastmath flag 'contract' here as there; no
    'reassoc', so the sum is not reordered), and the columns it skips add exact zeros.
    Without the merge's branches: 4x faster on short rows."""
    for q in range(z0, z1):
        zbuf[zi[q]] = zd[q]
    s = 0.0
    for j in range(lo, hi):
        t = xd[j] - zbuf[j]
        s += abs(t) if l1 else t * t
    for q in range(z0, z1):
        zbuf[zi[q]] = 0.0
    return s


@njit
def row_values(ops, par, ranges, data, indices, a0, a1, dense, norm, pool_d, pool_i, sv_lo,
               sv_hi, sv_norm, n_sv, stack, work, out):  # fmt: skip
    """out[s] = k(x_s, x) for the support vectors s < n_sv and out[n_sv] = k(x, x), for the row
    x = (data, indices, a0, a1, dense, norm): the kernel values :func:`kernel_pass` computes
    for a row (the same calls of the kernel program, x first), computed ahead (its ``kv``).

    A kernel of one leaf (rbf, linear, poly, ...) calls its leaf directly: the same value as
    the program's, without the program's loop and stack (5x faster per vector); an rbf or
    laplacian leaf on a sparse row (sorted, distinct indices) of a narrow space (at most 4x
    the row's entries, plus 32 columns) sums over the columns (:func:`_scattered_dist`).
    ``work``: zeros (left so), at least twice the columns when that can happen, else empty."""
    if ops.shape[0] != 1:
        for s in range(n_sv):
            out[s] = pair_value(ops, par, ranges, data, indices, a0, a1, dense, norm, pool_d,
                                pool_i, sv_lo[s], sv_hi[s], False, sv_norm[s], stack)  # fmt: skip
    else:
        code, a, b = ops[0, 0], ops[0, 1], ops[0, 2]
        lo, hi = ranges[a, 0], ranges[a, 1]
        if ((code == RBF or code == LAPLACE) and not dense and lo == 0
                and hi <= 4 * (a1 - a0) + 32 and work.shape[0] >= 2 * hi):  # fmt: skip
            xd = work[:hi]
            zbuf = work[hi : 2 * hi]
            for q in range(a0, a1):
                xd[indices[q]] = data[q]
            g = par[b]
            for s in range(n_sv):
                out[s] = math.exp(-g * _scattered_dist(xd, pool_d, pool_i, sv_lo[s], sv_hi[s],
                                                       zbuf, lo, hi, code == LAPLACE))  # fmt: skip
            for q in range(a0, a1):
                xd[indices[q]] = 0.0
        else:
            for s in range(n_sv):
                out[s] = leaf_value(code, a, b, par, ranges, data, indices, a0, a1, dense,
                                    norm, pool_d, pool_i, sv_lo[s], sv_hi[s], False,
                                    sv_norm[s])  # fmt: skip
    out[n_sv] = pair_value(ops, par, ranges, data, indices, a0, a1, dense, norm,
                           data, indices, a0, a1, dense, norm, stack)  # fmt: skip


@njit
def kernel_pass(
    data, indices, indptr, n_cols, dense, norms,
    y, weight, order,
    ops, par, ranges, b2,
    step, C, gamma, binary, average, budget, rule,
    pool_d, pool_i, sv_lo, sv_hi, sv_norm, sv_kxx, coef, A, last, born, label, sv_src,
    slot_of_row, st, pred_out, loss_out, scores, alpha, work_idx, work_val, stack,
    predict_average, avg_scores, keep_dual, gamma_d, kv,
):  # fmt: skip
    """One pass over the rows ``order`` of the batch (module docstring).  Returns OK, NONFINITE
    (a kernel value or a score is not finite: the state may be partly changed, the caller
    restores it) or FULL (no room left in the pool or the slots: a bug of the caller).

    ``predict_average`` (with ``average``): ``pred_out`` gets the prediction of the averaged
    hypothesis in force before each row (T times it: sum_s (A_s + c_s (S - last_s)) (k + b^2),
    the factor 1/T changes no sign or argmax), from the same kernel values; learning and
    ``n_mistakes`` (the current iterate's) are unchanged.

    ``keep_dual``: add each update's dual increment to ``st[DUAL]`` (module docstring), with
    ``gamma_d`` the margin of the hinge whose dual is kept (1 for the Perceptron's 0).

    ``kv``: empty, or (the one-event road, :mod:`.one_row`) the kernel values of the first row
    of ``order`` computed before the pass with :func:`row_values`, k(x_s, x) for the support
    vectors s < n_sv then k(x, x): the pass reads them instead of computing them again."""
    predict_average = predict_average and average
    K = coef.shape[1]
    kappa = 1.0 if binary else 2.0
    for ii in range(order.shape[0]):
        i = order[ii]
        yi = y[i]
        wgt = weight[i]
        a0, a1 = row_bounds(indptr, i, n_cols, dense)
        n_sv = int(st[N_SV])

        # ---- scores f_k(x_i) = sum_s c_sk (k(x_s, x_i) + b^2) and kappa(x_i)
        # (one call site of the kernel program for both: it is the bulk of the compiled code;
        # or the values computed ahead, kv)
        for k in range(K):
            scores[k] = 0.0
            avg_scores[k] = 0.0
        S_now = st[S_CLOCK]
        kxx = 0.0
        known = ii == 0 and kv.shape[0] > n_sv
        for s in range(n_sv + 1):
            if known:
                v = kv[s]
            else:
                if s < n_sv:  # support vector s
                    bd, bi, b0, b1 = pool_d, pool_i, sv_lo[s], sv_hi[s]
                    bdense, bnorm = False, sv_norm[s]
                else:  # x_i itself
                    bd, bi, b0, b1, bdense, bnorm = data, indices, a0, a1, dense, norms[i]
                v = pair_value(ops, par, ranges, data, indices, a0, a1, dense, norms[i],
                               bd, bi, b0, b1, bdense, bnorm, stack)  # fmt: skip
            if s == n_sv:
                kxx = v
            else:
                for k in range(K):
                    scores[k] += coef[s, k] * (v + b2)
                if predict_average:
                    for k in range(K):
                        avg_scores[k] += (A[s, k] + coef[s, k] * (S_now - last[s])) * (v + b2)
        sq = kxx + b2
        ok = finite(sq)
        for k in range(K):
            ok = ok and finite(scores[k])
        if not ok:
            return NONFINITE

        # ---- prediction, margin, loss (as the linear passes)
        pred, rival, ysign, margin, loss = predict_margin_loss(scores, yi, binary, gamma)
        if pred != yi:
            st[N_MISTAKES] += 1.0  # the learner's own mistakes: those of the current iterate
        if predict_average:
            for k in range(K):
                ok = ok and finite(avg_scores[k])
            if not ok:
                return NONFINITE
            pred_out[i] = predict_margin_loss(avg_scores, yi, binary, gamma)[0]
        else:
            pred_out[i] = pred
        loss_out[i] = loss

        # ---- dual step
        moved = False
        tau = 0.0
        if step == COPA:
            if copa_step(scores, yi, sq, C * wgt, alpha, work_idx, work_val) > 0:
                moved = True
        else:
            ksq = 0.0 if step == CONSERVATIVE else kappa * sq
            tau = hinge_step(step, loss, margin, ksq, C, wgt)
            if tau > 0.0:
                moved = True
                max_loss_alpha(alpha, K, tau, binary, ysign, yi, rival)
                if keep_dual:
                    # the rise of the dual by this round's variable (a few flops per update)
                    quad = 0.25 if step == PA2 else 0.0
                    st[DUAL] += dual_increment(tau, gamma_d, margin, kappa * sq, quad, C * wgt)
                    if quad != 0.0:
                        st[DUAL_QUAD] += quad * tau * tau / (C * wgt)

        S = st[S_CLOCK]
        if moved:
            s = slot_of_row[i]
            if s < 0:
                # ---- a new support vector (after a removal when the budget is full)
                if budget > 0 and n_sv >= budget:
                    _remove_one(rule, n_sv, sv_lo, sv_hi, sv_norm, sv_kxx, coef, A, last, born,
                                label, sv_src, slot_of_row)  # fmt: skip
                    n_sv -= 1
                    st[N_REMOVED] += 1.0
                    st[DUAL] = math.nan  # f lost a vector: no longer sum_t tau_t u_t
                if n_sv >= coef.shape[0]:
                    return FULL
                s = n_sv
                p = int(st[POOL_USED])
                sv_lo[s] = p
                if dense:
                    for j in range(n_cols):
                        xv = data[a0 + j]
                        if xv != 0.0:
                            if p >= pool_d.shape[0]:
                                return FULL
                            pool_d[p] = xv
                            pool_i[p] = j
                            p += 1
                else:  # (explicit zeros are left out, as for a dense row)
                    for q in range(a0, a1):
                        if data[q] != 0.0:
                            if p >= pool_d.shape[0]:
                                return FULL
                            pool_d[p] = data[q]
                            pool_i[p] = indices[q]
                            p += 1
                sv_hi[s] = p
                st[POOL_USED] = p
                for q in range(sv_norm.shape[1]):
                    sv_norm[s, q] = norms[i, q]
                sv_kxx[s] = kxx
                for k in range(K):
                    coef[s, k] = 0.0
                    A[s, k] = 0.0
                last[s] = S
                born[s] = st[BIRTHS]
                st[BIRTHS] += 1.0
                label[s] = yi
                sv_src[s] = i
                slot_of_row[i] = s
                n_sv += 1
                st[N_SV] = n_sv
            if average:
                for k in range(K):
                    A[s, k] += coef[s, k] * (S - last[s])
                last[s] = S
            for k in range(K):
                coef[s, k] += alpha[k]
            st[N_UPDATES] += 1.0
        st[T] += 1.0
        if average:
            st[S_CLOCK] = S + 1.0
    return OK


@njit
def shrink(budget, rule, sv_lo, sv_hi, sv_norm, sv_kxx, coef, A, last, born, label, sv_src,
           slot_of_row, st):  # fmt: skip
    """Remove support vectors by ``rule`` until at most ``budget`` remain (a budget lowered
    since the last pass); returns how many were removed."""
    n_sv = int(st[N_SV])
    removed = 0
    while n_sv > budget:
        _remove_one(rule, n_sv, sv_lo, sv_hi, sv_norm, sv_kxx, coef, A, last, born, label,
                    sv_src, slot_of_row)  # fmt: skip
        n_sv -= 1
        removed += 1
    st[N_SV] = n_sv
    st[N_REMOVED] += removed
    if removed > 0:
        st[DUAL] = math.nan
    return removed


@njit
def flush_average(coef, A, last, S, n_sv):
    """Fold every pending contribution into A (before the columns change)."""
    K = coef.shape[1]
    for s in range(n_sv):
        for k in range(K):
            A[s, k] += coef[s, k] * (S - last[s])
        last[s] = S


@njit
def compact_pool(pool_d, pool_i, sv_lo, sv_hi, n_sv, out_d, out_i, out_p):
    """Copy the live rows, slot by slot, into a CSR triple (out_p[s]..out_p[s+1] is slot s)."""
    p = 0
    out_p[0] = 0
    for s in range(n_sv):
        for q in range(sv_lo[s], sv_hi[s]):
            out_d[p] = pool_d[q]
            out_i[p] = pool_i[q]
            p += 1
        out_p[s + 1] = p
    return p
