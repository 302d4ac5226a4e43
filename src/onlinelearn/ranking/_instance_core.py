"""Compiled pass of :class:`onlinelearn.ranking.InstanceRanker` (thesis Sec. 5.3.4).

A round is a query: rows x_1..x_k of X (CSR) with targets y_1..y_k.  Its pairs are
E = {(i, j) : y_i > y_j}, pair p = (i, j) has a_p = x_i - x_j, b_p = y_i - y_j, and the pair
hinge loss l_p(w) = [b_p - <w, a_p>]_+.  The round's loss g(w) is ``MAX`` (5.26) max_p l_p(w) or
``AVG`` (5.25) (1/|E|) sum_p l_p(w).  Euclidean f = 1/2 ||w||^2, a fixed c = 1/C.

``OPTIMAL`` (eq. 3.12 / 7.8): w' = argmin_w 1/2 ||w - w_t||^2 + C g(w), by its dual

    max_alpha  D(alpha) = sum_p alpha_p c_p - 1/2 ||sum_p alpha_p a_p||^2,   c_p = b_p - <w_t, a_p>
    s.t.       MAX: alpha >= 0, sum_p alpha_p <= C        AVG: 0 <= alpha_p <= C / |E|

and w' = w_t + sum_p alpha_p a_p = w_t + sum_i tau_i x_i, tau_i = sum_{p = (i, .)} alpha_p -
sum_{p = (., i)} alpha_p.  Solved by accelerated projected gradient (FISTA with gradient restart)
in the pair space, G alpha computed as (K tau)_i - (K tau)_j from the query's row Gram K
(O(|E| + k^2) per product, no |E| x |E| matrix), the projection onto the capped simplex by
Sec. 7.1, stopped when the duality gap P - D, P(alpha) = 1/2 ||sum alpha a||^2 + C g(w_t + sum
alpha a), is at most tol (1 + |D|) (``N_INEXACT`` counts rounds stopped at ``max_iter``).

``SUBGRADIENT`` (Fig. 3.1 with the smallest update satisfying (3.9)): when g(w_t) > 0,
w' = w_t - C lambda', lambda' the subgradient: MAX, -a_p of the most violated pair (the first
maximiser); AVG, -(1/|E|) sum_{p : l_p > 0} a_p.

Dual (``st[DUAL]``).  Over the rounds t and their pairs p, with variables alpha_tp in the round's
feasible set (MAX: alpha_t >= 0, sum_p alpha_tp <= C; AVG: 0 <= alpha_tp <= C / |E_t|), the
dual of P(w) = 1/2 ||w||^2 + C sum_t g_t(w) is

    D(alpha) = sum_t sum_p alpha_tp b_tp - 1/2 ||sum_t sum_p alpha_tp a_tp||^2,

and a round that moves w by Delta = sum_p alpha_p a_p raises it by sum_p alpha_p c_p -
1/2 ||Delta||^2 (c_p = b_p - <w_t, a_p>): the pass adds that, so st[DUAL] = st[GAIN] -
1/2 ||w||^2 while every step's variables are feasible.  The subgradient step's are (alpha = C on
one pair; C / |E| on the pairs with a loss), and so are the projected-gradient iterates; the
exact 'max' step read from the KKT system (:func:`polish_max`) is a least-squares solution
whose variables may fall outside the set (a negative alpha_p, or a sum above C): such a round
is no dual point, and the kept dual becomes NaN for good (a rounding of 1e-12 C is accepted).
"""

from __future__ import annotations

import math

import numpy as np

from .._core.config import njit
from .._core.fp import finite
from .._core.max_hinge import _project_capped_simplex

MAX = 0
AVG = 1
OPTIMAL = 0
SUBGRADIENT = 1

# statistics vector slots
T_SEEN = 0  # queries processed
N_MISTAKES = 1  # queries whose ranking put some pair in the wrong order (ties count)
N_UPDATES = 2
GAIN = 3  # sum over rounds of sum_p alpha_p b_p
CUM_LOSS = 4  # sum over rounds of g_t(w_t)
ITER_MAX = 5
N_INEXACT = 6
N_PAIRS = 7
DUAL = 8  # the kept dual objective (module docstring); NaN once unknown
N_ST = 9
#: the length of ``st`` before the kept dual objective
N_ST_V1 = 8

#: the rounding accepted in a step's dual variables, relative to C (module docstring)
_FEAS_TOL = 1e-12


@njit
def _flow(P, pi, pj, alpha, tau):
    for i in range(tau.shape[0]):
        tau[i] = 0.0
    for p in range(P):
        tau[pi[p]] += alpha[p]
        tau[pj[p]] -= alpha[p]


@njit
def _gmul(P, pi, pj, K, alpha, tau, Kt, out):
    """out = G alpha (G_pq = <a_p, a_q>); returns tau' K tau = alpha' G alpha."""
    _flow(P, pi, pj, alpha, tau)
    k = tau.shape[0]
    q = 0.0
    for i in range(k):
        s = 0.0
        for j in range(k):
            s += K[i, j] * tau[j]
        Kt[i] = s
        q += tau[i] * s
    for p in range(P):
        out[p] = Kt[pi[p]] - Kt[pj[p]]
    return q


@njit
def _project(loss, P, v, cap, out):
    if loss == MAX:
        _project_capped_simplex(v[:P], cap, out[:P])
    else:
        box = cap / P
        for p in range(P):
            out[p] = min(max(v[p], 0.0), box)


@njit
def _after_loss(loss, P, c, Ga, C):
    """C g(w_t + sum alpha a) from the margins c - G alpha."""
    if loss == MAX:
        m = 0.0
        for p in range(P):
            r = c[p] - Ga[p]
            if r > m:
                m = r
        return C * m
    s = 0.0
    for p in range(P):
        r = c[p] - Ga[p]
        if r > 0.0:
            s += r
    return C * s / P


@njit
def round_dual(loss, P, pi, pj, K, c, C, tol, max_iter, alpha, work):
    """The maximiser alpha of the round's dual (module docstring); returns (iterations, gap,
    D).  ``work`` (6, max(P, k)) scratch."""
    k = K.shape[0]
    yv = work[0]
    Ga = work[1]
    prev = work[2]
    trial = work[3]
    tau = work[4, :k]
    Kt = work[5, :k]
    for p in range(P):
        alpha[p] = 0.0
    # Lipschitz constant of the gradient: ||G|| = ||A||^2 <= lambda_max(L_E) lambda_max(K),
    # L_E the Laplacian of the pair graph (<= max over pairs of d_i + d_j, Anderson-Morley),
    # lambda_max(K) <= its largest absolute row sum
    deg = np.zeros(k)
    for p in range(P):
        deg[pi[p]] += 1.0
        deg[pj[p]] += 1.0
    lap = 0.0
    for p in range(P):
        d = deg[pi[p]] + deg[pj[p]]
        if d > lap:
            lap = d
    kmax = 0.0
    for i in range(k):
        s = 0.0
        for j in range(k):
            s += abs(K[i, j])
        if s > kmax:
            kmax = s
    Lc = lap * kmax
    if Lc > 0.0:
        # the bound can exceed ||G|| by a factor k: estimate ||G|| by power iteration and keep
        # it only as a start (the iterations below double it whenever a step shows more
        # curvature than it allows, so every step is a valid projected gradient step)
        for p in range(P):
            yv[p] = 1.0 + (p % 7) * 0.1
        est = 0.0
        for _ in range(30):
            nrm = 0.0
            for p in range(P):
                nrm += yv[p] * yv[p]
            nrm = math.sqrt(nrm)
            if nrm == 0.0:
                break
            for p in range(P):
                yv[p] /= nrm
            _gmul(P, pi, pj, K, yv, tau, Kt, Ga)
            est = 0.0
            for p in range(P):
                est += yv[p] * Ga[p]
                yv[p] = Ga[p]
        if est > 0.0:
            Lc = min(Lc, 1.05 * est)
    if Lc <= 0.0:
        # every a_p = 0: D is linear in alpha
        if loss == MAX:
            best = -1
            for p in range(P):
                if c[p] > 0.0 and (best < 0 or c[p] > c[best]):
                    best = p
            if best >= 0:
                alpha[best] = C
        else:
            for p in range(P):
                alpha[p] = C / P if c[p] > 0.0 else 0.0
        q = _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
        D = 0.0
        for p in range(P):
            D += alpha[p] * c[p]
        return 0, 0.0, D - 0.5 * q
    step = 1.0 / Lc
    for p in range(P):
        yv[p] = 0.0
        prev[p] = 0.0
    t = 1.0
    gap = math.inf
    D = 0.0
    it = 0
    while it < max_iter:
        it += 1
        _gmul(P, pi, pj, K, yv, tau, Kt, Ga)
        for p in range(P):
            trial[p] = yv[p] + step * (c[p] - Ga[p])
        _project(loss, P, trial, C, alpha)
        # curvature along the step: d' G d <= Lc ||d||^2 is what a step of 1/Lc needs
        dd = 0.0
        for p in range(P):
            trial[p] = alpha[p] - yv[p]
            dd += trial[p] * trial[p]
        if dd > 0.0:
            dGd = _gmul(P, pi, pj, K, trial, tau, Kt, work[3])
            if dGd > Lc * dd * (1.0 + 1e-12):
                Lc = 2.0 * dGd / dd
                step = 1.0 / Lc
                continue
        # gradient restart: the step from prev to alpha goes against the ascent direction
        dot = 0.0
        for p in range(P):
            dot += (c[p] - Ga[p]) * (alpha[p] - prev[p])
        if dot < 0.0:
            t = 1.0
            for p in range(P):
                yv[p] = prev[p]
            continue
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        mom = (t - 1.0) / t_new
        for p in range(P):
            yv[p] = alpha[p] + mom * (alpha[p] - prev[p])
            prev[p] = alpha[p]
        t = t_new
        if it % 5 == 0 or it == max_iter:
            q = _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
            D = -0.5 * q
            for p in range(P):
                D += alpha[p] * c[p]
            gap = 0.5 * q + _after_loss(loss, P, c, Ga, C) - D
            if gap <= tol * (1.0 + abs(D)):
                break
    for p in range(P):
        alpha[p] = prev[p]
    q = _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
    D = -0.5 * q
    for p in range(P):
        D += alpha[p] * c[p]
    gap = 0.5 * q + _after_loss(loss, P, c, Ga, C) - D
    return it, gap, D


@njit
def polish_max(P, pi, pj, K, c, C, alpha, D, gap, beta):
    """The exact primal step of ``MAX`` on the face the dual iterate ``alpha`` points to.

    The primal's objective at Delta = sum alpha a is nonsmooth, so its gap to D(alpha) shrinks
    only as the square root of the dual's: a gap of 1e-10 is out of reach of any first-order
    method.  The optimum satisfies, on its support S (the pairs of largest margin loss xi), the
    KKT system  G_SS beta + xi 1 = c_S,  sum_S beta = C  (xi > 0; xi = 0: G_SS beta = c_S);
    solved by least squares (G_SS may be singular: the pairs are dependent, a_ij + a_jl = a_il),
    Delta = sum_S beta a is unique on the face.  Kept in ``beta`` when its primal value is below
    that of ``alpha``; the certified gap is then P(beta) - D(alpha).  Returns the gap."""
    k = K.shape[0]
    tau = np.zeros(k)
    Kt = np.zeros(k)
    Ga = np.zeros(P)
    q = _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
    rmax = 0.0
    for p in range(P):
        r = c[p] - Ga[p]
        if r > rmax:
            rmax = r
    best_p = 0.5 * q + C * rmax
    for p in range(P):
        beta[p] = alpha[p]
    eps = 1e-6 * (1.0 + abs(rmax))
    for _rep in range(2):
        m = 0
        for p in range(P):
            if c[p] - Ga[p] >= rmax - eps and (alpha[p] > 0.0 or rmax > eps):
                m += 1
        if m == 0:
            return gap
        if m > 400:  # a dense least-squares solve of that size costs more than it can save
            return gap
        idx = np.empty(m, dtype=np.int64)
        m = 0
        for p in range(P):
            if c[p] - Ga[p] >= rmax - eps and (alpha[p] > 0.0 or rmax > eps):
                idx[m] = p
                m += 1
        capped = rmax > eps
        nv = m + 1 if capped else m
        M = np.zeros((nv, nv))
        rhs = np.zeros(nv)
        for u in range(m):
            a_i = pi[idx[u]]
            a_j = pj[idx[u]]
            for v in range(m):
                b_i = pi[idx[v]]
                b_j = pj[idx[v]]
                M[u, v] = K[a_i, b_i] - K[a_i, b_j] - K[a_j, b_i] + K[a_j, b_j]
            rhs[u] = c[idx[u]]
            if capped:
                M[u, m] = 1.0
                M[m, u] = 1.0
        if capped:
            rhs[m] = C
        sol = np.linalg.lstsq(M, rhs)[0]
        trial = np.zeros(P)
        for u in range(m):
            trial[idx[u]] = sol[u]
        q2 = _gmul(P, pi, pj, K, trial, tau, Kt, Ga)
        r2 = 0.0
        for p in range(P):
            r = c[p] - Ga[p]
            if r > r2:
                r2 = r
        val = 0.5 * q2 + C * r2
        if val < best_p:
            best_p = val
            for p in range(P):
                beta[p] = trial[p]
        eps *= 100.0
        _gmul(P, pi, pj, K, alpha, tau, Kt, Ga)
    return best_p - D


@njit
def _dual_feasible(loss, P, alpha, C):
    """alpha in the round's dual set, up to a rounding of ``_FEAS_TOL`` C."""
    tot = 0.0
    for p in range(P):
        if alpha[p] < -_FEAS_TOL * C:
            return False
        if loss == AVG and alpha[p] > C / P * (1.0 + _FEAS_TOL):
            return False
        tot += alpha[p]
    return loss == AVG or tot <= C * (1.0 + _FEAS_TOL)


@njit
def _nnls(M, r, out):
    """Lawson-Hanson: out = argmin_{x >= 0} ||M x - r||_2 (active set; at most 3 m inner
    steps, m the columns).  Returns the residual norm."""
    n, m = M.shape
    passive = np.zeros(m, dtype=np.bool_)
    x = np.zeros(m)
    z = np.zeros(m)
    steps = 0
    while steps < 3 * m + 3:
        res = r - M @ x
        g = M.T @ res
        j = -1
        best = 1e-13 * (1.0 + np.abs(r).max())
        for q in range(m):
            if not passive[q] and g[q] > best:
                best = g[q]
                j = q
        if j < 0:
            break
        passive[j] = True
        while steps < 3 * m + 3:
            steps += 1
            cnt = 0
            for q in range(m):
                if passive[q]:
                    cnt += 1
            idx = np.empty(cnt, dtype=np.int64)
            cnt = 0
            for q in range(m):
                if passive[q]:
                    idx[cnt] = q
                    cnt += 1
            sub = np.empty((n, cnt))
            for u in range(cnt):
                sub[:, u] = M[:, idx[u]]
            zs = np.linalg.lstsq(sub, r)[0]
            for q in range(m):
                z[q] = 0.0
            ok = True
            for u in range(cnt):
                z[idx[u]] = zs[u]
                if zs[u] <= 0.0:
                    ok = False
            if ok:
                for q in range(m):
                    x[q] = z[q]
                break
            step = 1.0
            for u in range(cnt):
                q = idx[u]
                if z[q] <= 0.0 and x[q] - z[q] > 0.0:
                    v = x[q] / (x[q] - z[q])
                    if v < step:
                        step = v
            for q in range(m):
                x[q] += step * (z[q] - x[q])
                if passive[q] and x[q] <= 1e-15 * (1.0 + abs(z[q])):
                    passive[q] = False
                    x[q] = 0.0
    for q in range(m):
        out[q] = max(x[q], 0.0)
    return np.sqrt(np.sum((M @ out - r) ** 2))


@njit
def nonnegative_max_step(P, pi, pj, K, c, C, beta, out):
    """A representation of the 'max' step with the variables of a dual point.

    :func:`polish_max` solves its KKT system by least squares: the step Delta = sum beta a is
    right, but beta may have negative entries (the pairs of a query are dependent,
    a_ij + a_jl = a_il, so the face's system has many solutions).  The dual problem's optimum
    alpha* >= 0, sum alpha* = C when a loss remains, gives the same step.  So: out =
    argmin_{x >= 0} ||sum_p (x_p - beta_p) a_p||^2 [+ (sum x - C)^2] over the pairs of the face,
    by NNLS,
    with sum_p x_p a_p = sum_i (F x)_i x_i (F the rows-by-pairs incidence matrix) and the
    norm read from the query's row Gram K = R' R.  Returns the residual (``out`` is then used
    only if the caller certifies its primal value)."""
    k = K.shape[0]
    tau = np.zeros(k)
    Kt = np.zeros(k)
    Ga = np.zeros(P)
    _gmul(P, pi, pj, K, beta, tau, Kt, Ga)
    rmax = -math.inf
    for p in range(P):
        if c[p] - Ga[p] > rmax:
            rmax = c[p] - Ga[p]
    eps = 1e-9 * (1.0 + abs(rmax))
    m = 0
    for p in range(P):
        if c[p] - Ga[p] >= rmax - eps:
            m += 1
    idx = np.empty(m, dtype=np.int64)
    m = 0
    for p in range(P):
        if c[p] - Ga[p] >= rmax - eps:
            idx[m] = p
            m += 1
    # ||A_S x - Delta||^2 = ||R F (x - beta)||^2 with K = R' R (R = sqrt(e) V' from K's
    # eigenvectors: rows that are dependent, or repeated, are handled alike)
    e, V = np.linalg.eigh(K)
    F = np.zeros((k, m))
    for u in range(m):
        F[pi[idx[u]], u] = 1.0
        F[pj[idx[u]], u] = -1.0
    M = np.zeros((k + 1, m))
    r = np.zeros(k + 1)
    for i in range(k):
        sc = math.sqrt(max(e[i], 0.0))
        for u in range(m):
            acc = 0.0
            for j in range(k):
                acc += V[j, i] * F[j, u]
            M[i, u] = sc * acc
        acc = 0.0
        for j in range(k):
            acc += V[j, i] * tau[j]
        r[i] = sc * acc
    # a loss xi = rmax > 0 remains: the KKT system asks sum x = C (the dual's value is then
    # xi C + 1/2 ||Delta||^2, the round's optimum); with xi = 0 the value is 1/2 ||Delta||^2
    # whatever the sum, which needs only sum x <= C: first without the row of the sum, then,
    # if that representation sums above C, with it (the caller checks the result)
    x = np.zeros(m)
    res = 0.0
    for attempt in range(2):
        if rmax > eps or attempt == 1:
            for u in range(m):
                M[k, u] = 1.0
            r[k] = C
        res = _nnls(M, r, x)
        if rmax > eps or np.sum(x) <= C * (1.0 + _FEAS_TOL):
            break
    for p in range(P):
        out[p] = 0.0
    for u in range(m):
        out[idx[u]] = x[u]
    return res


@njit
def instance_pass(data, indices, indptr, y, qptr, order, w, st, loss, update, C, tol, max_iter,
                  mistakes_out, losses_out):  # fmt: skip
    """One pass over the queries ``order`` (query q = rows qptr[q]:qptr[q+1]); ``w`` is updated
    in place.  Returns False when a weight became non-finite."""
    n_features = w.shape[0]
    buf = np.zeros(n_features)
    for qq in range(order.shape[0]):
        q = order[qq]
        a = qptr[q]
        b = qptr[q + 1]
        k = b - a
        st[T_SEEN] += 1.0
        # scores
        s = np.zeros(k)
        for i in range(k):
            acc = 0.0
            for e in range(indptr[a + i], indptr[a + i + 1]):
                acc += data[e] * w[indices[e]]
            s[i] = acc
        P = 0
        for i in range(k):
            for j in range(k):
                if y[a + i] > y[a + j]:
                    P += 1
        if P == 0:
            mistakes_out[q] = 0
            losses_out[q] = 0.0
            continue
        pi = np.empty(P, dtype=np.int64)
        pj = np.empty(P, dtype=np.int64)
        c = np.empty(P)
        p = 0
        wrong = False
        for i in range(k):
            for j in range(k):
                if y[a + i] > y[a + j]:
                    pi[p] = i
                    pj[p] = j
                    c[p] = (y[a + i] - y[a + j]) - (s[i] - s[j])
                    if s[i] <= s[j]:
                        wrong = True
                    p += 1
        st[N_PAIRS] += P
        if loss == MAX:
            g = 0.0
            for p in range(P):
                if c[p] > g:
                    g = c[p]
        else:
            g = 0.0
            for p in range(P):
                if c[p] > 0.0:
                    g += c[p]
            g /= P
        mistakes_out[q] = 1 if wrong else 0
        losses_out[q] = g
        st[CUM_LOSS] += g
        if wrong:
            st[N_MISTAKES] += 1.0
        if g <= 0.0:
            continue
        alpha = np.zeros(P)
        if update == SUBGRADIENT:
            if loss == MAX:
                best = 0
                for p in range(P):
                    if c[p] > c[best]:
                        best = p
                alpha[best] = C
            else:
                for p in range(P):
                    if c[p] > 0.0:
                        alpha[p] = C / P
        else:
            K = np.zeros((k, k))
            for i in range(k):
                for e in range(indptr[a + i], indptr[a + i + 1]):
                    buf[indices[e]] += data[e]
                for j in range(i, k):
                    acc = 0.0
                    for e in range(indptr[a + j], indptr[a + j + 1]):
                        acc += data[e] * buf[indices[e]]
                    K[i, j] = acc
                    K[j, i] = acc
                for e in range(indptr[a + i], indptr[a + i + 1]):
                    buf[indices[e]] = 0.0
            work = np.zeros((6, max(P, k)))
            # a short first-order run, the exact step on its face; the long run if that fails
            it, gap, D = round_dual(loss, P, pi, pj, K, c, C, tol, min(max_iter, 400), alpha,
                                    work)  # fmt: skip
            if loss == MAX and not (gap <= tol * (1.0 + abs(D))):
                beta = np.zeros(P)
                gap2 = polish_max(P, pi, pj, K, c, C, alpha, D, gap, beta)
                if not (gap2 <= tol * (1.0 + abs(D))) and max_iter > 400:
                    it, gap, D = round_dual(loss, P, pi, pj, K, c, C, tol, max_iter, alpha,
                                            work)  # fmt: skip
                    gap2 = polish_max(P, pi, pj, K, c, C, alpha, D, gap, beta)
                if gap2 < gap:
                    gap = gap2
                    for p in range(P):
                        alpha[p] = beta[p]
                    if not _dual_feasible(loss, P, alpha, C):
                        # the same step from variables >= 0, kept when it certifies as well
                        alt = np.zeros(P)
                        nonnegative_max_step(P, pi, pj, K, c, C, alpha, alt)
                        q2 = _gmul(P, pi, pj, K, alt, work[4, :k], work[5, :k], work[1])
                        gap3 = 0.5 * q2 + _after_loss(loss, P, c, work[1], C) - D
                        if _dual_feasible(loss, P, alt, C) and gap3 <= max(
                            gap, tol * (1.0 + abs(D))
                        ):
                            gap = gap3
                            for p in range(P):
                                alpha[p] = alt[p]
            elif not (gap <= tol * (1.0 + abs(D))) and max_iter > 400:
                it, gap, D = round_dual(loss, P, pi, pj, K, c, C, tol, max_iter, alpha, work)
            if it > st[ITER_MAX]:
                st[ITER_MAX] = it
            if not (gap <= tol * (1.0 + abs(D))):
                st[N_INEXACT] += 1.0
        tau = np.zeros(k)
        moved = False
        lin = 0.0  # sum_p alpha_p c_p
        feasible = _dual_feasible(loss, P, alpha, C)
        for p in range(P):
            if alpha[p] != 0.0:
                moved = True
                tau[pi[p]] += alpha[p]
                tau[pj[p]] -= alpha[p]
                st[GAIN] += alpha[p] * (y[a + pi[p]] - y[a + pj[p]])
                lin += alpha[p] * c[p]
        if moved:
            st[N_UPDATES] += 1.0
            # ||Delta||^2 = ||sum_i tau_i x_i||^2, summed in buf (rows may share features)
            for i in range(k):
                if tau[i] != 0.0:
                    for e in range(indptr[a + i], indptr[a + i + 1]):
                        buf[indices[e]] += tau[i] * data[e]
            dsq = 0.0
            for i in range(k):
                if tau[i] != 0.0:
                    for e in range(indptr[a + i], indptr[a + i + 1]):
                        v = buf[indices[e]]
                        dsq += v * v
                        buf[indices[e]] = 0.0
            st[DUAL] = st[DUAL] + lin - 0.5 * dsq if feasible else math.nan
            for i in range(k):
                if tau[i] != 0.0:
                    for e in range(indptr[a + i], indptr[a + i + 1]):
                        w[indices[e]] += tau[i] * data[e]
    for j in range(n_features):
        if not finite(w[j]):
            return False
    return True
