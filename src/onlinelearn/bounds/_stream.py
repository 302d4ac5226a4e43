"""The stream as the bounds read it: the augmented rows, their norms, the margins of a
comparator, and a fitted learner's weights over the augmented features."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _augmented(X, b):
    """X with the intercept column of value b (CSR or dense, float64)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if b:
            X = sp.hstack([X, sp.csr_matrix(np.full((X.shape[0], 1), b))], format="csr")
        return X
    X = np.asarray(X, dtype=np.float64)
    return np.hstack([X, np.full((X.shape[0], 1), b)]) if b else X


def _row_norms(Xa, order):
    if sp.issparse(Xa):
        if order == 2:
            return np.sqrt(np.asarray(Xa.multiply(Xa).sum(axis=1)).ravel())
        return np.asarray(abs(Xa).max(axis=1).todense()).ravel()
    return np.linalg.norm(Xa, ord=order, axis=1)


def _margins(Xa, W, yc, binary):
    """margin_t(W): y <w, x> (W of one column, y in {-1, +1} from the codes), or
    s_y - max_{r != y} s_r."""
    S = np.asarray(Xa @ W)
    if binary:
        return np.where(yc == 1, 1.0, -1.0) * S[:, 0]
    n = S.shape[0]
    sy = S[np.arange(n), yc]
    S2 = S.copy()
    S2[np.arange(n), yc] = -np.inf
    return sy - S2.max(axis=1)


def _weights(est):
    """(W over the augmented features (R, K), b): coef_ and intercept_ / b (the averaged
    predictor when the learner averages)."""
    b = float(est._intercept_value())
    W = np.asarray(est.coef_, dtype=np.float64).T.copy()
    if b:
        W = np.vstack([W, np.asarray(est.intercept_, dtype=np.float64)[None, :] / b])
    return W, b
