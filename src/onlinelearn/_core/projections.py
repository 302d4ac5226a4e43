"""Projections onto the simplex, the l1 ball and the floored simplex (thesis Sec. 7.1).

Numba only.  Each kernel works on one vector given as its explicit entries ``v`` plus a count
``n0`` of implicit zeros (a CSR row: ``v`` = the stored values, ``n0`` = n - nnz; a dense row:
``n0`` = 0), so that a sparse row is projected in O(nnz log nnz) without densifying it.

Euclidean projection onto the scaled simplex, Fig. 7.1 / eq. (7.1)-(7.3)::

    alpha = argmin_a 1/2 ||a - mu||^2   s.t.  sum_i a_i = z,  a_i >= 0
    alpha_i = [mu_i - theta]_+,   theta = (sum_{i <= rho} mu_(i) - z) / rho,
    rho = max{ j : mu_(j) - (sum_{r <= j} mu_(r) - z) / j > 0 }

where mu_(1) >= mu_(2) >= ... is mu sorted decreasingly.  The implicit zeros form one block of
equal values between the positive and the negative entries: the condition above holds for every
index of that block or for none of them.

Entropic projection with a floor, Fig. 7.3 / eq. (7.6)-(7.7)::

    w = argmin_w sum_j w_j log(w_j / u_j)   s.t.  sum_j w_j = 1,  w_j >= eps
    w_j = eps for the l* smallest u_j,   w_j = u_j / Z otherwise,
    Z = (sum_{j > l*} u_(j)) / (1 - l* eps)

with u_(1) <= u_(2) <= ... sorted increasingly and l* the smallest l for which u_(l+1) / Z_l > eps.
"""

from __future__ import annotations

import numpy as np

from .config import njit


@njit
def simplex_theta(v, n0, z):
    """The threshold theta of the projection of (v, n0 zeros) onto {a >= 0, sum a = z}, z > 0.

    The projection is a_i = max(v_i - theta, 0) (and max(-theta, 0) for the implicit zeros).
    O(m log m) for m = len(v)."""
    m = v.shape[0]
    s = np.sort(v.astype(np.float64))[::-1]
    csum = 0.0
    rho = 0
    theta_best = 0.0
    j = 0  # entries taken so far (zeros included)
    zeros_done = n0 == 0
    i = 0
    while i < m or not zeros_done:
        if not zeros_done and (i >= m or s[i] <= 0.0):
            # the block of n0 implicit zeros: value 0; the condition is (csum - z) / j' < 0
            jj = j + n0
            if csum - z < 0.0:
                rho = jj
                theta_best = (csum - z) / jj
            j = jj
            zeros_done = True
            continue
        j += 1
        csum += s[i]
        t = (csum - z) / j
        if s[i] - t > 0.0:
            rho = j
            theta_best = t
        i += 1
    if rho == 0:
        # cannot happen for z > 0 (the largest entry always qualifies); keep a safe value
        return s[0] - z if m > 0 else -z / max(n0, 1)
    return theta_best


@njit
def project_simplex_rows(data, indptr, n_cols, z, out_data, out_theta):
    """Row-wise projection onto {a >= 0, sum a = z} of the CSR matrix (data, indptr) with
    ``n_cols`` columns: stored entries -> ``out_data`` (same pattern), row thresholds ->
    ``out_theta`` (an implicit zero becomes max(-theta, 0))."""
    n = indptr.shape[0] - 1
    for i in range(n):
        a, b = indptr[i], indptr[i + 1]
        th = simplex_theta(data[a:b], n_cols - (b - a), z)
        out_theta[i] = th
        for p in range(a, b):
            u = data[p] - th
            out_data[p] = u if u > 0.0 else 0.0


@njit
def project_l1_rows(data, indptr, z, out_data):
    """Row-wise projection onto the l1 ball {||a||_1 <= z} (Fig. 7.2): rows already inside are
    kept; otherwise a_i = sign(v_i) [|v_i| - theta]_+ with theta from the simplex of |v|.  The
    zeros stay zero (theta >= 0 there), so the sparsity pattern is kept."""
    n = indptr.shape[0] - 1
    for i in range(n):
        a, b = indptr[i], indptr[i + 1]
        l1 = 0.0
        for p in range(a, b):
            l1 += abs(data[p])
        if l1 <= z:
            for p in range(a, b):
                out_data[p] = data[p]
            continue
        absv = np.empty(b - a)
        for p in range(a, b):
            absv[p - a] = abs(data[p])
        th = simplex_theta(absv, 0, z)
        for p in range(a, b):
            u = abs(data[p]) - th
            u = u if u > 0.0 else 0.0
            out_data[p] = u if data[p] >= 0.0 else -u


@njit
def entropic_floor(u, eps, out):
    """Entropic projection of u >= 0 onto {w : sum w = 1, w >= eps} (Fig. 7.3), n eps <= 1.

    Entries u_j = 0 get the floor eps (the limit u_j -> 0+).  O(n log n)."""
    n = u.shape[0]
    order = np.argsort(u)
    tail = 0.0  # sum_{j > l} u_(j), the entries not (yet) floored
    for j in range(n):
        tail += u[j]
    l_star = n
    for ll in range(n):
        Z = tail / (1.0 - ll * eps)
        if Z > 0.0 and u[order[ll]] / Z > eps:
            l_star = ll
            break
        tail -= u[order[ll]]
    if l_star == n:
        # u = 0 (or n eps = 1): every entry tied, the uniform vector
        for j in range(n):
            out[j] = 1.0 / n
        return
    Z = 0.0
    for k in range(l_star, n):
        Z += u[order[k]]
    Z /= 1.0 - l_star * eps
    for k in range(n):
        j = order[k]
        out[j] = eps if k < l_star else u[j] / Z
