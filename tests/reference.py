"""Plain NumPy references of the compiled kernels (readable, slow, independent).

Each function recomputes everything from its definition at every round: weights from the link
applied to theta over *all* entries, the average as an explicit running sum of the full weight
matrix after every round.  Nothing here shares code with ``onlinelearn._core``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq


def link_weights(theta, link, p=2.0, balanced=True, c=1.0):
    """w = grad f*(theta) for the whole matrix (thesis eqs. 5.4-5.9)."""
    if link == "euclid":
        return theta.copy()
    if link == "entropy":
        t = theta / c
        m = 0.0
        if t.size:  # the largest exponent (unbalanced: of exp(t) only) becomes exp(0)
            m = np.abs(t).max() if balanced else t.max()
        if balanced:
            num = np.exp(t - m) - np.exp(-t - m)
            Z = (np.exp(t - m) + np.exp(-t - m)).sum()
        else:
            num = np.exp(t - m)
            Z = num.sum()
        return num / Z
    if link == "selftuned":
        t = theta / c
        m = np.abs(t).max()
        if balanced:
            return np.exp(t - m) - np.exp(-t - m)
        return np.exp(t - m)
    if link == "pnorm":
        nrm = (np.abs(theta) ** p).sum() ** (1.0 / p)
        if nrm == 0:
            return np.zeros_like(theta)
        return np.sign(theta) * np.abs(theta) ** (p - 1) / ((p - 1) * nrm ** (p - 2))
    raise ValueError(link)


def link_margin(theta, U, tau, link, p=2.0, balanced=True):
    """<grad f*(theta + tau U), U>: the margin of the round after a step tau along U."""
    return float(np.sum(link_weights(theta + tau * U, link, p, balanced) * U))


def reference_link_step(theta, U, gamma, step, C, weight, link, p=2.0, balanced=True):
    """tau of PA / PA-I / PA-II for any link: the root in tau of the derivative of the dual
    objective of eq. (7.9), gamma - margin(tau) (- tau / (2 C weight) for PA-II), clipped to
    [0, C weight] (PA-I), found by scipy's brentq on the full weight matrix.  ``U`` is the
    direction of the step (y x in the one column, or x / -x in the columns y / r)."""
    if weight <= 0 or not np.any(U):
        return 0.0
    inv2c = 0.5 / (C * weight) if step == "PA-II" else 0.0

    def g(t):
        return gamma - link_margin(theta, U, t, link, p, balanced) - t * inv2c

    if g(0.0) <= 0:
        return 0.0
    if step == "PA-I":
        hi = C * weight
        if g(hi) >= 0:
            return hi
    elif step == "PA-II":
        hi = 2.0 * C * weight * g(0.0)
        if g(hi) >= 0:
            return hi
    else:
        hi = 1.0
        while g(hi) > 0:
            hi *= 2.0
            if hi > 1e300:
                raise FloatingPointError("PA: the margin is not attainable")
    tau = brentq(g, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return weight * tau if step == "PA" else tau


def reference_pass(
    X, y, *, K, link="euclid", step="perceptron", C=1.0, gamma=0.0, eta=1.0, p=2.0,
    balanced=True, intercept=True, weights=None, theta=None, order=None, wdtype=np.float64,
    average_power=0.0,
):  # fmt: skip
    """One online pass; returns (theta, average of w after each round, preds, n_updates).

    The average weighs round t (1-based) by t^average_power (0: the uniform mean).

    K = 1: binary with y in {0, 1} (0 means -1); K >= 2: multiclass, y in 0..K-1.
    ``wdtype``: the dtype theta is stored in; with float32 every updated entry is rounded to
    float32 after the update (computed in float64), everything else stays float64.
    """
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    n, d = X.shape
    if intercept:
        X = np.hstack([X, np.ones((n, 1))])
    R = X.shape[1]
    theta = np.zeros((R, K)) if theta is None else theta.copy()
    weights = np.ones(n) if weights is None else weights
    order = np.arange(n) if order is None else order
    total = np.zeros((R, K))
    weight_sum = 0.0
    preds = np.zeros(n, dtype=int)
    n_upd = 0
    Xmax = 0.0
    M = 0
    n_w = R * K * (2 if (balanced and link in ("entropy", "selftuned")) else 1)
    for t, i in enumerate(order, start=1):
        x = X[i]
        c = 1.0
        if link == "selftuned":
            Xmax = max(Xmax, np.abs(x).max())
            c = Xmax * math.sqrt((M + 1) / math.log(max(n_w, 2))) or 1.0
        W = link_weights(theta, link, p, balanced, c)
        s = x @ W
        yi = y[i]
        if K == 1:
            ys = 1.0 if yi == 1 else -1.0
            preds[i] = 1 if s[0] > 0 else 0
            margin = ys * s[0]
        else:
            preds[i] = int(np.argmax(s))
            rivals = [k for k in range(K) if k != yi]
            r = rivals[int(np.argmax(s[rivals]))]
            margin = s[yi] - s[r]
        loss = max(0.0, gamma - margin)
        kappa = 1.0 if K == 1 else 2.0
        sq = kappa * (x @ x)
        wgt = weights[i]
        tau = 0.0
        if step == "perceptron":
            tau = wgt * eta if margin <= 0 else 0.0
        elif loss > 0 and sq > 0 and wgt > 0 and link in ("entropy", "pnorm"):
            U = np.zeros_like(theta)
            if K == 1:
                U[:, 0] = ys * x
            else:
                U[:, yi] = x
                U[:, r] = -x
            tau = reference_link_step(theta, U, gamma, step, C, wgt, link, p, balanced)
        elif loss > 0 and sq > 0 and wgt > 0:
            if step == "PA":
                tau = wgt * loss / sq
            elif step == "PA-I":
                tau = min(C * wgt, loss / sq)
            elif step == "PA-II":
                tau = loss / (sq + 1.0 / (2.0 * C * wgt))
        if tau > 0:
            n_upd += 1
            M += 1
            if K == 1:
                theta[:, 0] += tau * ys * x
            else:
                theta[:, yi] += tau * x
                theta[:, r] -= tau * x
            theta = theta.astype(wdtype).astype(np.float64)
        ct = float(t) ** average_power
        weight_sum += ct
        if link == "selftuned":
            total += 0.0
        else:
            total += ct * link_weights(theta, link, p, balanced, c)
    avg = total / weight_sum if len(order) else total
    return theta, avg, preds, n_upd
