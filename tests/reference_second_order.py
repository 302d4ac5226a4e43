"""Plain NumPy versions of the second-order rounds, written from the published equations (no
Sherman-Morrison, no kept W: direct inverses and direct formulas), for the tests."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

SQRT_HALF = np.sqrt(0.5)


def minmax_reference(X, y, K, b, adaptive, u=None, c=1.0, encoding="difference"):
    """Weighted min-max on the rows of X (already with any constant feature), labels 0..K-1.

    A = b I + sum a x x', B = sum a x y_t', f = B' A^{-1} x computed with np.linalg.inv; the
    label vector y_t is (e_y - e_r) / sqrt 2 or, with ``encoding='one-hot'``, e_y; the update
    rule uses Delta = (f_y - f_r) / sqrt 2 in both."""
    n, R = X.shape
    A = b * np.eye(R)
    B = np.zeros((R, K))
    out = {k: [] for k in ("pred", "update", "a", "rival", "delta")}
    for t in range(n):
        x = X[t]
        Ainv = np.linalg.inv(A)
        f = B.T @ Ainv @ x
        pred = int(np.argmax(f))
        others = [k for k in range(K) if k != y[t]]
        r = others[int(np.argmax(f[others]))]
        yt = np.zeros(K)
        yt[y[t]], yt[r] = SQRT_HALF, -SQRT_HALF
        delta = f @ yt
        if encoding == "one-hot":
            yt = np.zeros(K)
            yt[y[t]] = 1.0
        m = x @ Ainv @ x
        a = 1.0 / (1.0 - m)
        A_next = A + a * np.outer(x, x)
        sigma = 0.5 * a * a * x @ np.linalg.inv(A_next) @ x
        flag = 1 if delta <= 0 else (2 if adaptive and delta - sigma <= 0 else 0)
        if u is not None and not u[t] < c / (c + abs(delta)):
            flag = 0
        if flag:
            A = A_next
            B = B + a * np.outer(x, yt)
        for key, val in zip(out, (pred, flag, a, r, delta), strict=True):
            out[key].append(val)
    res = {k: np.array(v) for k, v in out.items()}
    res["A"], res["B"] = A, B
    return res


def cw_step_reference(variant, m, v, r=1.0, C=1.0, eta=0.9):
    """(alpha, beta) from the published equations: AROW (Crammer et al. 2009, Fig. 1) and
    SCW-I / SCW-II (Wang, Zhao & Hoi 2012, Sec. 3), 0 when there is no loss."""
    if variant == "AROW":
        if 1 - m <= 0:
            return 0.0, 0.0
        beta = 1 / (v + r)
        return (1 - m) * beta, beta
    phi = norm.ppf(eta)
    if phi * np.sqrt(v) - m <= 0:
        return 0.0, 0.0
    psi, zeta = 1 + phi**2 / 2, 1 + phi**2
    if variant == "SCW-I":
        alpha = min(
            C, max(0.0, (-m * psi + np.sqrt(m**2 * phi**4 / 4 + v * phi**2 * zeta)) / (v * zeta))
        )
    else:
        n = v + 1 / (2 * C)
        gamma = phi * np.sqrt(phi**2 * m**2 * v**2 + 4 * n * v * (n + v * phi**2))
        alpha = max(0.0, (-(2 * m * n + phi**2 * m * v) + gamma) / (2 * (n**2 + n * v * phi**2)))
    if alpha <= 0:
        return 0.0, 0.0
    u = 0.25 * (-alpha * v * phi + np.sqrt(alpha**2 * v**2 * phi**2 + 4 * v)) ** 2
    beta = alpha * phi / (np.sqrt(u) + v * alpha * phi)
    return alpha, beta


def cw_reference(X, y, K, variant, diagonal=False, a0=1.0, **kw):
    """AROW / SCW over the rows: one vector (K == 2, labels -> -1/+1) or K columns with the
    max-score rival, z-variance 2 x' Sigma x and the shared covariance (the class docstring)."""
    n, R = X.shape
    ncol = 1 if K == 2 else K
    W = np.zeros((R, ncol))
    S = a0 * np.eye(R)
    preds = []
    for t in range(n):
        x = X[t]
        f = W.T @ x
        Sx = S @ x
        if ncol == 1:
            preds.append(int(f[0] > 0))
            ys = 1.0 if y[t] == 1 else -1.0
            m, v = ys * f[0], x @ Sx
        else:
            preds.append(int(np.argmax(f)))
            others = [k for k in range(K) if k != y[t]]
            r = others[int(np.argmax(f[others]))]
            m, v = f[y[t]] - f[r], 2 * x @ Sx
        if v <= 0:
            continue
        alpha, beta = cw_step_reference(variant, m, v, **kw)
        if alpha == 0 and beta == 0:
            continue
        if ncol == 1:
            W[:, 0] += alpha * ys * Sx
        else:
            W[:, y[t]] += alpha * Sx
            W[:, r] -= alpha * Sx
        if diagonal:
            S = S - np.diag(beta * Sx * Sx)
        else:
            S = S - beta * np.outer(Sx, Sx)
    return np.array(preds), W, S
