"""Label ranking by dual ascent: loss (8.1) x complexity (8.2)/(8.3) x update I/II/III (ch. 8).

Numba only.  State: ``theta`` (R, K), column r the dual sum of label r, and ``lZ`` (K,).
The weights are w_r = grad f*(theta_r):

* EUCLID, f(w) = 1/2 ||w||^2 (8.2):       w_r = theta_r,  f*(theta) = 1/2 ||theta||^2;
* ENTROPY, f(w) = log n + sum_j w_j log w_j on the simplex (8.3):
  w_rj = exp(theta_rj - lZ_r),  lZ_r = log sum_j exp(theta_rj),  f*(theta) = lZ - log n.

Round t (x = x_t, Y = Y_t, sigma_r = +1 for r in Y and -1 otherwise, s_r = <w_r, x>) adds
sigma_r tau_r x to theta_r, with tau >= 0 found by one of three dual ascent steps.  The one-round
dual problem (thesis eq. (7.8)/(7.18) with tau = alpha / c and C = 1/c) is::

    max_tau  gamma sum_{r in Y} tau_r - sum_r [ f*(theta_r + sigma_r tau_r x) - f*(theta_r) ]
    s.t.     tau >= 0,  sum_{r in Y} tau_r = sum_{s not in Y} tau_s <= C                   (P)

* UPD_I (conservative, (8.4)): on a mistake (min_{Y} s_r <= max_{not Y} s_s), tau = C on the
  most violating pair r0 = argmin_{r in Y} s_r, s0 = argmax_{s not in Y} s_s, 0 elsewhere;
* UPD_II (aggressive, scaled): tau = t (e_r0 + e_s0) with t the maximiser of (P) on that line,
  t in [0, C]: Euclidean t = min{C, loss / (2 ||x||^2)}, entropy by a safeguarded Newton search;
* UPD_III (optimal): the maximiser of (P).  Euclidean: exact in O(k log k) (Fig. 7.4, here as a
  walk over the merged knots of two piecewise-linear thresholds); entropy: the primal-dual
  interior point method of Sec. 7.3.2 with the 2 x 2 reduced Newton system, its step certified
  by a dual bound to STEP_RTOL and replaced by a safeguarded exact method where it is not
  (:mod:`.ranking_exact`); ``st[N_INEXACT]`` counts the rounds that miss STEP_RTOL anyway.

UPD_II and UPD_III act whenever the loss [gamma - (min_Y s_r - max_{not Y} s_s)]_+ is positive;
UPD_I only on mistakes.  A row with no relevant or no irrelevant label has no pair: no loss, no
mistake, no update.  ``C`` is multiplied by the row's sample weight.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .fp import finite
from .max_hinge import max_hinge_dual, max_hinge_pass  # noqa: F401 (re-export)
from .projections import entropic_floor, project_l1_rows
from .ranking_entropy import (  # noqa: F401 (re-export)
    IPM_MAX_ITER,
    IPM_SIGMA_INFEASIBLE,
    IPM_SIGMA_MIN,
    IPM_TOL,
    ent_F,
    ent_G,
    ip_rank,
    pair_line_search,
)
from .ranking_exact import STEP_ROUNDING, STEP_RTOL, entropy_step_III  # noqa: F401 (re-export)
from .ranking_state import (  # noqa: F401 (re-export)
    ENTROPY,
    EUCLID,
    FLOOR,
    GAIN,
    L1_BALL,
    N_EXACT,
    N_INEXACT,
    N_MISTAKES,
    N_ST,
    N_UPDATES,
    NO_CONSTRAINT,
    NONFINITE,
    OK,
    SOLVER_CALLS,
    SOLVER_ITER_MAX,
    SOLVER_ITER_SUM,
    T_SEEN,
    UPD_I,
    UPD_II,
    UPD_III,
)
from .sparse import row_dot_euclid, row_dot_map, row_offset


# ---------------------------------------------------------------------------------- Euclidean III
@njit
def exact_euclid_z(mu, nu, cap):
    """Solve min_{z in [0, cap]} g(z; mu) + g(z; nu) (thesis eq. (7.20)-(7.23), Lemma 10).

    g(z; mu) = min {1/2 ||a - mu||^2 : a >= 0, sum a = z} has derivative -theta_mu(z), where
    theta_mu(z) = (S_i - z) / i on the knot interval [z_i, z_{i+1}], z_i = S_i - i mu_(i) and S_i
    the sum of the i largest entries.  The walk visits the merged knots of mu and nu in increasing
    order and stops in the interval where theta_mu + theta_nu crosses zero (the stationary point
    O(z) = (j S_i + i T_j) / (i + j) of Fig. 7.4), or at 0 or cap.

    Returns (z, theta_mu, theta_nu); the solution is a_r = [mu_r - theta_mu]_+,
    b_s = [nu_s - theta_nu]_+ (a = 0 when z = 0)."""
    p = mu.shape[0]
    q = nu.shape[0]
    ms = np.sort(mu)[::-1]
    ns = np.sort(nu)[::-1]
    i = 1
    j = 1
    S = ms[0]
    T = ns[0]
    lo = 0.0
    while True:
        # absorb every knot <= lo (ties)
        while i < p and S - i * ms[i] <= lo:
            S += ms[i]
            i += 1
        while j < q and T - j * ns[j] <= lo:
            T += ns[j]
            j += 1
        hi = cap
        if i < p:
            k = S - i * ms[i]
            if k < hi:
                hi = k
        if j < q:
            k = T - j * ns[j]
            if k < hi:
                hi = k
        zs = (j * S + i * T) / (i + j)
        if zs <= lo:
            z = lo
            break
        if zs <= hi:
            z = zs
            break
        if hi >= cap:
            z = cap
            break
        lo = hi
    return z, (S - z) / i, (T - z) / j


# ---------------------------------------------------------------------------------- one pass
@njit
def sum_relevant(tau, Y):
    s = 0.0
    for k in range(tau.shape[0]):
        if Y[k]:
            s += tau[k]
    return s


@njit
def _exact_lse(theta, r):
    R = theta.shape[0]
    mx = -np.inf
    for j in range(R):
        if theta[j, r] > mx:
            mx = theta[j, r]
    s = 0.0
    for j in range(R):
        s += math.exp(theta[j, r] - mx)
    return mx + math.log(s)


@njit(inline="always")
def _entropy_weight(t, k, lZ):
    """w_kj = exp(theta_kj - lZ_k), t = theta_kj (the entropy link of label k)."""
    return math.exp(t - lZ[k])


@njit
def row_scores(data, indices, indptr, i, theta, lZ, complexity, b, out):
    """s_r = <w_r, x_i> (+ b w_r[bias]) for every label r."""
    R = theta.shape[0]
    d = R - 1 if b != 0.0 else R
    if complexity == EUCLID:
        row_dot_euclid(data, indices, indptr, i, theta, b, d, out)
    else:
        row_dot_map(data, indices, indptr, i, theta, b, d, _entropy_weight, lZ, out)


@njit
def rank_pass(
    data, indices, indptr, Y, weight, order, theta, lZ, st,
    complexity, update, C, gamma, b, mistakes_out, loss_out,
    scores, tau, mu, nu, amass, wv, xv, work, mark, constraint, zc, colbuf, colout, colptr,
):  # fmt: skip
    """One online pass over the rows ``order``: predict (scores), count the mistake, update.

    ``Y`` (n, K) int8 indicator rows; ``weight`` per-row multiplier of C; ``b`` the intercept
    feature's value (0: none); ``constraint`` / ``zc``: NO_CONSTRAINT, L1_BALL with radius zc or
    FLOOR with floor zc, applied to every weight vector an update changed (``colbuf``, ``colout``
    (R,) scratch, ``colptr`` = [0, R]).  ``mistakes_out[i]`` = 1 if round i was a ranking mistake,
    ``loss_out[i]`` its loss (8.1) before the update.  Returns OK or NONFINITE."""
    R, K = theta.shape
    d = R - 1 if b != 0.0 else R
    for ii in range(order.shape[0]):
        i = order[ii]
        st[T_SEEN] += 1.0
        Yi = Y[i]
        p = 0
        for k in range(K):
            if Yi[k]:
                p += 1
        row_scores(data, indices, indptr, i, theta, lZ, complexity, b, scores)
        if p == 0 or p == K:
            mistakes_out[i] = 0
            loss_out[i] = 0.0
            continue
        r0 = -1
        s0 = -1
        for k in range(K):
            if Yi[k]:
                if r0 < 0 or scores[k] < scores[r0]:
                    r0 = k
            else:
                if s0 < 0 or scores[k] > scores[s0]:
                    s0 = k
        margin = scores[r0] - scores[s0]
        mistake = margin <= 0.0
        loss = gamma - margin
        loss = loss if loss > 0.0 else 0.0
        mistakes_out[i] = 1 if mistake else 0
        loss_out[i] = loss
        if mistake:
            st[N_MISTAKES] += 1.0
        cap = C * weight[i]
        if cap <= 0.0 or loss <= 0.0 or (update == UPD_I and not mistake):
            continue
        start = indptr[i]
        end = indptr[i + 1]
        off = row_offset(data, indices, start)
        sq = b * b
        for pp in range(start, end):
            sq += data[pp] * data[pp]
        if sq <= 0.0:
            continue  # x = 0: no update can change a score
        for k in range(K):
            tau[k] = 0.0
        if complexity == EUCLID:
            if update == UPD_I:
                tau[r0] = cap
                tau[s0] = cap
            elif update == UPD_II:
                t = loss / (2.0 * sq)
                t = t if t < cap else cap
                tau[r0] = t
                tau[s0] = t
            else:
                npp = 0
                nq = 0
                for k in range(K):
                    if Yi[k]:
                        mu[npp] = (0.5 * gamma - scores[k]) / sq
                        npp += 1
                    else:
                        nu[nq] = (0.5 * gamma + scores[k]) / sq
                        nq += 1
                z, thm, thn = exact_euclid_z(mu[:npp], nu[:nq], cap)
                if z > 0.0:
                    for k in range(K):
                        if Yi[k]:
                            a = (0.5 * gamma - scores[k]) / sq - thm
                        else:
                            a = (0.5 * gamma + scores[k]) / sq - thn
                        tau[k] = a if a > 0.0 else 0.0
            gain = 0.0
            for k in range(K):
                if Yi[k]:
                    gain += tau[k]
            if gain <= 0.0:
                continue
            for pp in range(start, end):
                j = indices[pp - off]
                xv_ = data[pp]
                for k in range(K):
                    if tau[k] != 0.0:
                        theta[j, k] += (tau[k] if Yi[k] else -tau[k]) * xv_
            if b != 0.0:
                for k in range(K):
                    if tau[k] != 0.0:
                        theta[d, k] += (tau[k] if Yi[k] else -tau[k]) * b
            if constraint == L1_BALL:
                for k in range(K):
                    if tau[k] != 0.0:
                        for j in range(R):
                            colbuf[j] = theta[j, k]
                        project_l1_rows(colbuf, colptr, zc, colout)
                        for j in range(R):
                            theta[j, k] = colout[j]
            st[GAIN] += gamma * gain
            st[N_UPDATES] += 1.0
            continue
        # ---- entropy: F_r(t) = lse(theta_r + t x) - lse(theta_r) on this row
        m = end - start + (1 if b != 0.0 else 0)
        v = b if b != 0.0 else (data[start] if end > start else 0.0)
        single = True
        for pp in range(start, end):
            if data[pp] != v:
                single = False
                break
        if single:
            for k in range(K):
                amass[0, k] = scores[k] / v if v != 0.0 else 0.0
        else:
            for pp in range(start, end):
                j = indices[pp - off]
                xv[pp - start] = data[pp]
                for k in range(K):
                    wv[k, pp - start] = math.exp(theta[j, k] - lZ[k])
            if b != 0.0:
                xv[m - 1] = b
                for k in range(K):
                    wv[k, m - 1] = math.exp(theta[d, k] - lZ[k])
            for k in range(K):
                a = 0.0
                for pp in range(m):
                    a += wv[k, pp]
                amass[0, k] = a
        # the mass off the row: 1 - a, or summed exactly when that difference is unreliable
        for k in range(K):
            amass[1, k] = 1.0 - amass[0, k]
        if m >= R:
            for k in range(K):
                amass[1, k] = 0.0
        else:
            exact = False
            for k in range(K):
                if amass[1, k] < 1e-6:
                    exact = True
            if exact:
                for pp in range(start, end):
                    mark[indices[pp - off]] = 1
                if b != 0.0:
                    mark[d] = 1
                for k in range(K):
                    if amass[1, k] < 1e-6:
                        rest = 0.0
                        for j in range(R):
                            if mark[j] == 0:
                                rest += math.exp(theta[j, k] - lZ[k])
                        amass[1, k] = rest
                for pp in range(start, end):
                    mark[indices[pp - off]] = 0
                if b != 0.0:
                    mark[d] = 0
        if update == UPD_I:
            tau[r0] = cap
            tau[s0] = cap
        elif update == UPD_II:
            t = pair_line_search(r0, s0, cap, gamma, single, v, amass, wv, xv, m)
            tau[r0] = t
            tau[s0] = t
        else:
            # the interior point step if its dual bound certifies it, else the exact method's
            its, fell_back, missed = entropy_step_III(
                Yi, cap, gamma, single, v, amass, wv, xv, m, tau, work
            )
            st[N_EXACT] += fell_back
            st[N_INEXACT] += missed
            st[SOLVER_CALLS] += 1.0
            st[SOLVER_ITER_SUM] += its
            if its > st[SOLVER_ITER_MAX]:
                st[SOLVER_ITER_MAX] = its
        # the increase of the dual; an inexact step that would not increase it is dropped
        gain = 0.0
        incr = 0.0
        for k in range(K):
            if tau[k] > 0.0:
                sg = 1.0 if Yi[k] else -1.0
                F, g, c = ent_F(sg * tau[k], k, single, v, amass, wv, xv, m)
                mu[k] = F
                incr -= F
                if Yi[k]:
                    gain += tau[k]
        incr += gamma * gain
        if gain <= 0.0 or (update != UPD_I and incr < 0.0):
            continue
        for pp in range(start, end):
            j = indices[pp - off]
            xv_ = data[pp]
            for k in range(K):
                if tau[k] > 0.0:
                    theta[j, k] += (tau[k] if Yi[k] else -tau[k]) * xv_
        if b != 0.0:
            for k in range(K):
                if tau[k] > 0.0:
                    theta[d, k] += (tau[k] if Yi[k] else -tau[k]) * b
        for k in range(K):
            if tau[k] > 0.0:
                nz = mu[k]
                if not finite(nz) or nz < -30.0:
                    lZ[k] = _exact_lse(theta, k)  # mass left the row's coordinates: recompute
                else:
                    lZ[k] += nz
        if constraint == FLOOR:
            for k in range(K):
                if tau[k] > 0.0:
                    for j in range(R):
                        colbuf[j] = math.exp(theta[j, k] - lZ[k])
                    entropic_floor(colbuf, zc, colout)
                    for j in range(R):
                        theta[j, k] = math.log(colout[j])
                    lZ[k] = _exact_lse(theta, k)
        st[GAIN] += gamma * gain
        st[N_UPDATES] += 1.0
    for k in range(K):
        if not finite(lZ[k]):
            return NONFINITE
    return OK


@njit
def exact_normalizers(theta, lZ):
    """lZ_r = log sum_j exp(theta_jr), exactly (once per pass: the running update drifts)."""
    for r in range(theta.shape[1]):
        lZ[r] = _exact_lse(theta, r)
