"""Compiled alignment oracle of thesis ch. 9: features psi_1..psi_7 and the DP of Fig. 9.1.

Input: frames x_0..x_{T-1} (T x d), events e_1..e_K (type codes), a frame-confidence table
G (T x n_types; G[s, e] = g_e(x_s), the confidence that frame s belongs to an event of type e),
and per type the mean mu_e and standard deviation sigma_e of its duration (in frames).
A timing y = (y_1 < ... < y_K) gives the start frame of each event; y_{K+1} = T; every duration
y_{i+1} - y_i lies in [1, L] and y_1 < L (the first event starts within L frames).

phi(x, e, y) = sum_i psi(x, e, y_{i-1}, y_i, y_{i+1})  (eq. 9.3) with, for t'' = y_{i-1},
t' = y_i, t = y_{i+1} (frame indices clipped to [0, T-1]):

    psi_j  = ||x_{t'-j} - x_{t'+j-1}||,  j = 1..4        (eq. 9.4: distance across the boundary)
    psi_5  = sum_{s=t'}^{t-1} G[s, e_i]                   (eq. 9.5: frame confidence)
    psi_6  = log N(t - t'; mu_{e_i}, sigma_{e_i})         (eq. 9.6: duration)
    psi_7  = -(r_i - r_{i-1})^2, r_i = (t - t') / mu_{e_i} (speaking-rate change; 0 for i = 1)

(the thesis's psi_j compares x_{y_i - j} with x_{y_i + j}; with 0-based start frames the frame
x_{t'} is the first of the event, so the pair is (t' - j, t' + j - 1): j frames on each side.)
The cost is rho(y, y') = scale |{i : |y_i - y'_i| > eps}| / K (eq. 9.1 times ``scale``); it adds
per event, so the loss-augmented argmax is the same DP with that term.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit

N_FEATURES = 7


@njit
def _clip(s, T):
    if s < 0:
        return 0
    if s > T - 1:
        return T - 1
    return s


@njit
def psi(X, Gcum, ev, mu, sigma, i, tpp, tp, t, out):
    """psi(x, e, t'', t', t) for event i (0-based) into out[0:7]; tpp < 0 means no previous."""
    T = X.shape[0]
    d = X.shape[1]
    for j in range(1, 5):
        a = _clip(tp - j, T)
        b = _clip(tp + j - 1, T)
        s = 0.0
        for k in range(d):
            diff = X[a, k] - X[b, k]
            s += diff * diff
        out[j - 1] = math.sqrt(s)
    e = ev[i]
    out[4] = Gcum[t, e] - Gcum[tp, e]
    dur = t - tp
    sd = sigma[e]
    out[5] = -0.5 * ((dur - mu[e]) / sd) ** 2 - math.log(sd * math.sqrt(2.0 * math.pi))
    if tpp >= 0:
        r = dur / mu[e]
        r_prev = (tp - tpp) / mu[ev[i - 1]]
        out[6] = -((r - r_prev) ** 2)
    else:
        out[6] = 0.0


@njit
def _score(w, X, Gcum, ev, mu, sigma, i, tpp, tp, t, buf):
    psi(X, Gcum, ev, mu, sigma, i, tpp, tp, t, buf)
    s = 0.0
    for k in range(N_FEATURES):
        s += w[k] * buf[k]
    return s


@njit
def feature_vector(X, Gcum, ev, mu, sigma, y, out):
    """phi(x, e, y) = sum_i psi(..., y_{i-1}, y_i, y_{i+1}) into out[0:7]."""
    K = ev.shape[0]
    T = X.shape[0]
    buf = np.empty(N_FEATURES)
    for k in range(N_FEATURES):
        out[k] = 0.0
    for i in range(K):
        tpp = y[i - 1] if i > 0 else -1
        t = y[i + 1] if i + 1 < K else T
        psi(X, Gcum, ev, mu, sigma, i, tpp, y[i], t, buf)
        for k in range(N_FEATURES):
            out[k] += buf[k]


@njit
def align(w, X, Gcum, ev, mu, sigma, L, truth, eps, scale, out):
    """argmax_y <w, phi(x, e, y)> (+ rho(truth, y) when scale > 0) by the DP of Fig. 9.1.

    D[i, t', dur] = best score of events 1..i with y_i = t' and y_{i+1} = t' + dur:
    D[i, t', dur] = max_{dur'} D[i-1, t' - dur', dur'] + <w, psi(t' - dur', t', t' + dur)>.
    O(K T L^2) time.  Writes the timing to ``out`` and returns its score, or -inf when no
    timing satisfies the constraints (K events cannot fit in T frames)."""
    K = ev.shape[0]
    T = X.shape[0]
    buf = np.empty(N_FEATURES)
    D = np.full((K, T, L + 1), -np.inf)
    back = np.zeros((K, T, L + 1), dtype=np.int64)
    for i in range(K):
        for tp in range(T):
            extra = 0.0
            if scale > 0.0 and abs(tp - truth[i]) > eps:
                extra = scale / K
            for dur in range(1, L + 1):
                t = tp + dur
                if t > T or (i == K - 1 and t != T) or (i < K - 1 and t >= T):
                    continue
                if i == 0:
                    if tp >= L:
                        continue
                    D[0, tp, dur] = _score(w, X, Gcum, ev, mu, sigma, 0, -1, tp, t, buf) + extra
                    continue
                best = -np.inf
                arg = 0
                for dp in range(1, L + 1):
                    tpp = tp - dp
                    if tpp < 0:
                        break
                    prev = D[i - 1, tpp, dp]
                    if prev == -np.inf:
                        continue
                    s = prev + _score(w, X, Gcum, ev, mu, sigma, i, tpp, tp, t, buf)
                    if s > best:
                        best = s
                        arg = dp
                if best > -np.inf:
                    D[i, tp, dur] = best + extra
                    back[i, tp, dur] = arg
    best = -np.inf
    arg_tp = -1
    for dur in range(1, L + 1):
        tp = T - dur
        if tp >= 0 and D[K - 1, tp, dur] > best:
            best = D[K - 1, tp, dur]
            arg_tp = tp
    if arg_tp < 0:
        return -np.inf
    tp = arg_tp
    dur = T - tp
    for i in range(K - 1, -1, -1):
        out[i] = tp
        if i > 0:
            dp = back[i, tp, dur]
            dur = dp
            tp = tp - dp
    return best
