"""The read-out of the Euclidean pass's averaging state (:mod:`.euclid_pass`: w = theta, U the
sum the averaged weights are read from): the averaged weights, their finiteness test without
writing them, and U from the generic pass's timestamps."""

from __future__ import annotations

import numpy as np

from .config import njit
from .fp import finite
from .state import N_ROUNDS, S_SUM


@njit
def u_from_timestamps(theta, A, lastS, U):
    """U = lastS * theta - A: the averaging state of this pass from the generic pass's (both give
    the sum of the hypotheses S theta - U = A + theta (S - lastS), for any S)."""
    R, K = theta.shape
    for j in range(R):
        for k in range(K):
            U[j, k] = lastS[j, k] * np.float64(theta[j, k]) - A[j, k]


@njit
def averaged_from_u(theta, U, st, out):
    """out = (S theta - U) / N, the average of the hypotheses after each of the T rounds
    (0 before any round), N = max(S, T) the sum of the rounds' weights.

    Uniform average: S = T (N = T), or S < T after :func:`onlinelearn.merge_models`, whose
    mixture is held as S = 0, U = -T avg, with the rounds after it adding 1 to both.  Weighted
    average (round t weighs t^eta >= 1): N = S >= T.  So the same read-out serves both, and a
    uniform model is read exactly as before the weighted one existed."""
    T = st[N_ROUNDS]
    S = st[S_SUM]
    N = S if S > T else T
    R, K = theta.shape
    for j in range(R):
        for k in range(K):
            out[j, k] = (S * np.float64(theta[j, k]) - U[j, k]) / N if T > 0.0 else 0.0


@njit
def averaged_finite(theta, U, st, rows, b):
    """True when every averaged read-out weight (S theta_jk - U_jk) / max(S, T) of the rows
    ``rows`` (every row when ``rows`` is empty) is finite, and so is b times the weights of
    the last of those rows (the intercept row when b != 0): the test of
    :func:`averaged_from_u` followed by ``isfinite`` on its output, without writing the
    (R, K) matrix (a first ``partial_fit`` over news20 read and wrote 9 MB for it).

    With N = max(S, T) >= 1 (T counts rounds; a NaN S gives N = T), x / N is finite exactly
    when x = S theta_jk - U_jk is (|x / N| <= |x|; x / inf = 0), so the sweep sums x * 0 (0
    for a finite x, NaN otherwise: :func:`.checks.all_finite`) without a division or an exit
    per entry, and divides only for the intercept row's b w."""
    T = st[N_ROUNDS]
    if T <= 0.0:
        return True  # the average is 0
    S = st[S_SUM]
    N = S if S > T else T
    K = theta.shape[1]
    n = rows.shape[0] if rows.shape[0] > 0 else theta.shape[0]
    if not (N >= 1.0):
        return _averaged_finite_divided(theta, U, S, N, rows, 0, n, b)
    acc = 0.0
    for r in range(n):
        j = rows[r] if rows.shape[0] > 0 else r
        for k in range(K):
            acc += (S * np.float64(theta[j, k]) - U[j, k]) * 0.0
    if acc != 0.0:
        return False
    if b != 0.0 and n > 0:  # the intercept row's b w, as the entry-by-entry test computes it
        return _averaged_finite_divided(theta, U, S, N, rows, n - 1, n, b)
    return True


@njit
def _averaged_finite_divided(theta, U, S, N, rows, r0, n, b):
    """:func:`averaged_finite` entry by entry over the rows r0 .. n - 1 of the selection, each
    weight divided by N, and b times the weights of row n - 1: the intercept row's test, and
    the whole test when N < 1 (never from a count of rounds, kept so that it holds for any
    state)."""
    K = theta.shape[1]
    for r in range(r0, n):
        j = rows[r] if rows.shape[0] > 0 else r
        last = r == n - 1 and b != 0.0
        for k in range(K):
            v = (S * np.float64(theta[j, k]) - U[j, k]) / N
            if not finite(v):
                return False
            if last and not finite(b * v):
                return False
    return True
