"""Compiled core of the first-order chain tagger: Viterbi, loss-augmented Viterbi, one pass.

Joint feature map of a tag sequence y = (y_1..y_n) for token rows x_1..x_n (thesis eq. 5.21)::

    phi(x, y) = sum_i x_i (x) e_{y_i}  +  sum_i e_{y_{i-1}} (x) e_{y_i}        (y_0 = BOS)

so ``<w, phi(x, y)> = sum_i E[i, y_i] + sum_i Tr[y_{i-1}, y_i]`` with the emission scores
``E[i, k] = <x_i, W[:, k]>``.  ``W`` is (d, K), ``Tr`` is (K + 1, K) whose row K holds the
transitions out of BOS.  The Hamming cost rho(y, y') = #{i : y_i != y'_i} decomposes over
positions, so the loss-augmented argmax of eq. (5.23) is Viterbi on ``E + rho``.

Dual steps (``update`` codes), with a = phi(x, y) - phi(x, y_hat) and ell = rho - <w, a>:

``PERCEPTRON``  Collins' structured Perceptron (conservative): y_hat = argmax, tau = 1 if
                y_hat != y.
``PA_MAX``      aggressive on the maximal loss (5.22): y_hat = loss-augmented argmax (5.23),
                tau = min(C, ell / ||a||^2).
``PA_PRED``     aggressive on the prediction-based loss (5.24): y_hat = argmax,
                tau = min(C, [ell]_+ / ||a||^2).
``SELF_TUNED``  thesis Fig. 5.4 on theta (the scaled dual sum): y_hat = argmax, if rho > 0:
                M += 1, X = max(X, ||a||), c = X sqrt(M / (2U)),
                alpha = min(1, [c rho - <theta, a>]_+ / ||a||^2), theta += alpha a.

Averaging keeps U_W, U_Tr = sum_s (s - 1) delta_s, so that the mean of the hypotheses after each
of the T rounds is ``W - U_W / T`` (O(changed entries) per update).
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit
from .fp import finite

PERCEPTRON = 0
PA_MAX = 1
PA_PRED = 2
SELF_TUNED = 3

OK = 0
NONFINITE = 1

#: named slots of the state vector ``st``
T_SEEN = 0  # sequences seen (rounds)
N_UPDATES = 1  # rounds with a non-zero step
N_MISTAKES = 2  # sequences whose online prediction had a wrong tag
N_TOKEN_ERRORS = 3  # wrong tags of the online predictions
X_MAX = 4  # self-tuned X_t = max ||a_s||
M_SELF = 5  # self-tuned M_t = rounds with rho > 0
TAU_RHO = 6  # sum_s tau_s rho_s: the linear part of the dual objective (PA steps)
N_ST = 7


@njit
def emission_scores(indptr, indices, data, lo, hi, W, E):
    """E[i - lo, k] = <x_i, W[:, k]> for rows lo..hi-1 of a CSR matrix."""
    K = W.shape[1]
    for i in range(lo, hi):
        r = i - lo
        for k in range(K):
            E[r, k] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            v = data[p]
            for k in range(K):
                E[r, k] += v * W[j, k]


@njit
def viterbi(E, n, Tr, delta, back, path):
    """argmax_y sum_i E[i, y_i] + Tr[y_{i-1}, y_i] over tag sequences of length n (y_0 = BOS).

    ``delta``/``back`` are (>= n, K) scratch; the best path is written to ``path[:n]`` and its
    score returned.  Ties go to the smallest tag code."""
    K = E.shape[1]
    for k in range(K):
        delta[0, k] = E[0, k] + Tr[K, k]
        back[0, k] = -1
    for i in range(1, n):
        for k in range(K):
            best = -np.inf
            arg = 0
            for j in range(K):
                s = delta[i - 1, j] + Tr[j, k]
                if s > best:
                    best = s
                    arg = j
            delta[i, k] = best + E[i, k]
            back[i, k] = arg
    best = -np.inf
    arg = 0
    for k in range(K):
        if delta[n - 1, k] > best:
            best = delta[n - 1, k]
            arg = k
    path[n - 1] = arg
    for i in range(n - 1, 0, -1):
        path[i - 1] = back[i, path[i]]
    return best


@njit
def path_score(E, n, Tr, path, off):
    """<w, phi(x, y)> for the tags ``path[off:off + n]``."""
    K = E.shape[1]
    s = 0.0
    prev = K
    for i in range(n):
        k = path[off + i]
        s += E[i, k] + Tr[prev, k]
        prev = k
    return s


@njit
def add_hamming(E, n, y, off, scale):
    """E[i, k] += scale * [k != y_i]: the loss-augmented scores (scale = +1 adds, -1 removes)."""
    K = E.shape[1]
    for i in range(n):
        for k in range(K):
            if k != y[off + i]:
                E[i, k] += scale


@njit
def diff_sqnorm(indptr, indices, data, lo, n, y, off, yhat, K, keys, vals, tr_scratch):
    """||phi(x, y) - phi(x, y_hat)||^2, summing coefficients that hit the same (feature, tag).

    Emission entries of the differing positions are sorted by key j * K + k and summed;
    the transition part goes through the dense (K + 1) * K scratch (left zeroed)."""
    m = 0
    for i in range(n):
        a = y[off + i]
        b = yhat[i]
        if a == b:
            continue
        for p in range(indptr[lo + i], indptr[lo + i + 1]):
            j = np.int64(indices[p])
            keys[m] = j * K + a
            vals[m] = data[p]
            m += 1
            keys[m] = j * K + b
            vals[m] = -data[p]
            m += 1
    total = 0.0
    if m > 0:
        order = np.argsort(keys[:m])
        acc = vals[order[0]]
        for q in range(1, m):
            if keys[order[q]] == keys[order[q - 1]]:
                acc += vals[order[q]]
            else:
                total += acc * acc
                acc = vals[order[q]]
        total += acc * acc
    pa = K
    pb = K
    for i in range(n):
        a = y[off + i]
        b = yhat[i]
        tr_scratch[pa * K + a] += 1.0
        tr_scratch[pb * K + b] -= 1.0
        pa = a
        pb = b
    pa = K
    pb = K
    for i in range(n):
        a = y[off + i]
        b = yhat[i]
        for key in (pa * K + a, pb * K + b):
            v = tr_scratch[key]
            total += v * v
            tr_scratch[key] = 0.0
        pa = a
        pb = b
    return total


@njit
def apply_step(indptr, indices, data, lo, n, y, off, yhat, K, W, Tr, tau):
    """w += tau (phi(x, y) - phi(x, y_hat)), only on the positions and transitions that differ."""
    pa = K
    pb = K
    for i in range(n):
        a = y[off + i]
        b = yhat[i]
        if a != b:
            for p in range(indptr[lo + i], indptr[lo + i + 1]):
                j = indices[p]
                v = tau * data[p]
                W[j, a] += v
                W[j, b] -= v
        if a != b or pa != pb:
            Tr[pa, a] += tau
            Tr[pb, b] -= tau
        pa = a
        pb = b


@njit
def tagger_step(
    indptr, indices, data, lo, n, y, off, W, Tr, UW, UTr, st, update, C, U, average,
    E, delta, back, yhat, keys, vals, tr_scratch,
):  # fmt: skip
    """One round on sequence rows lo..lo+n-1 with tags y[off:off+n]; returns tau (0: passive)."""
    K = W.shape[1]
    emission_scores(indptr, indices, data, lo, lo + n, W, E)
    viterbi(E, n, Tr, delta, back, yhat)
    rho = 0.0
    for i in range(n):
        if yhat[i] != y[off + i]:
            rho += 1.0
    st[T_SEEN] += 1.0
    if rho > 0.0:
        st[N_MISTAKES] += 1.0
        st[N_TOKEN_ERRORS] += rho
    if update == PA_MAX:
        add_hamming(E, n, y, off, 1.0)
        viterbi(E, n, Tr, delta, back, yhat)
        add_hamming(E, n, y, off, -1.0)
        rho = 0.0
        for i in range(n):
            if yhat[i] != y[off + i]:
                rho += 1.0
    if rho == 0.0:
        return 0.0
    if update == PERCEPTRON:
        tau = 1.0
    else:
        sq = diff_sqnorm(indptr, indices, data, lo, n, y, off, yhat, K, keys, vals, tr_scratch)
        if sq <= 0.0:
            return 0.0
        margin = path_score(E, n, Tr, y, off) - path_score(E, n, Tr, yhat, 0)
        if update == SELF_TUNED:
            st[M_SELF] += 1.0
            norm = math.sqrt(sq)
            if norm > st[X_MAX]:
                st[X_MAX] = norm
            c = st[X_MAX] * math.sqrt(st[M_SELF] / (2.0 * U))
            tau = min(1.0, max(0.0, c * rho - margin) / sq)
        else:
            tau = min(C, max(0.0, rho - margin) / sq)
    if tau <= 0.0:
        return 0.0
    st[N_UPDATES] += 1.0
    st[TAU_RHO] += tau * rho
    apply_step(indptr, indices, data, lo, n, y, off, yhat, K, W, Tr, tau)
    if average:
        apply_step(indptr, indices, data, lo, n, y, off, yhat, K, UW, UTr, tau * (st[T_SEEN] - 1))
    return tau


@njit
def tagger_pass(
    indptr, indices, data, starts, y, order, W, Tr, UW, UTr, st, update, C, U, average, max_len,
    max_nnz,
):  # fmt: skip
    """One online pass over the sequences in ``order`` (sequence s = rows starts[s]..starts[s+1]).

    Returns OK, or NONFINITE (with the state left for the caller to restore) when a weight of
    the touched rows is not finite."""
    K = W.shape[1]
    E = np.empty((max_len, K))
    delta = np.empty((max_len, K))
    back = np.empty((max_len, K), dtype=np.int64)
    yhat = np.empty(max_len, dtype=np.int64)
    keys = np.empty(2 * max_nnz + 1, dtype=np.int64)
    vals = np.empty(2 * max_nnz + 1)
    tr_scratch = np.zeros((K + 1) * K)
    for q in range(order.shape[0]):
        s = order[q]
        lo = starts[s]
        n = starts[s + 1] - lo
        tau = tagger_step(
            indptr, indices, data, lo, n, y, lo, W, Tr, UW, UTr, st, update, C, U, average,
            E, delta, back, yhat, keys, vals, tr_scratch,
        )  # fmt: skip
        if not finite(tau):
            return NONFINITE
    for a in range(Tr.shape[0]):
        for b in range(K):
            if not finite(Tr[a, b]):
                return NONFINITE
    return OK


@njit
def tagger_predict(indptr, indices, data, starts, W, Tr, max_len, out):
    """Viterbi tags of every sequence, concatenated into ``out``."""
    K = W.shape[1]
    E = np.empty((max_len, K))
    delta = np.empty((max_len, K))
    back = np.empty((max_len, K), dtype=np.int64)
    yhat = np.empty(max_len, dtype=np.int64)
    for s in range(starts.shape[0] - 1):
        lo = starts[s]
        n = starts[s + 1] - lo
        emission_scores(indptr, indices, data, lo, lo + n, W, E)
        viterbi(E, n, Tr, delta, back, yhat)
        for i in range(n):
            out[lo + i] = yhat[i]


@njit
def check_finite_rows(W, indices):
    """True when every weight row touched by ``indices`` is finite."""
    K = W.shape[1]
    for p in range(indices.shape[0]):
        j = indices[p]
        for k in range(K):
            if not finite(W[j, k]):
                return False
    return True
