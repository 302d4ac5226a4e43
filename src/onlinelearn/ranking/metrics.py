"""Label-ranking metrics: ranking loss, one-error, coverage, average precision, ranking mistakes.

``Y`` is a label-indicator matrix (n, K) (dense or sparse, 0/1), ``S`` the scores (n, K) (e.g.
``LabelRanker.decision_function``); a higher score ranks a label higher.  Ties are pessimistic
throughout: a tie between a relevant and an irrelevant label counts against the ranking.

======================  ============================================================================
function                per row (then averaged over the rows)
======================  ============================================================================
label_ranking_loss      |{(r, s) : r in Y, s not in Y, S_r <= S_s}| / (|Y| (K - |Y|));
                        0 for a row with no relevant or no irrelevant label.  Equals
                        ``sklearn.metrics.label_ranking_loss``.
one_error               1 if a label of maximal score is irrelevant; 0 for a row with no relevant
                        label (nothing to rank).  Not in scikit-learn.
coverage_error          |{s : S_s >= min_{r in Y} S_r}| (how far down the ranking one must go to
                        cover every relevant label); 0 for a row with no relevant label.  Equals
                        ``sklearn.metrics.coverage_error`` (the thesis's / MULAN's coverage is
                        this minus 1).
average_precision       mean over r in Y of |{r' in Y : S_r' >= S_r}| / |{s : S_s >= S_r}|;
                        1 for a row with no relevant or no irrelevant label.  Equals
                        ``sklearn.metrics.label_ranking_average_precision_score``.
ranking_mistakes        1 if min_{r in Y} S_r <= max_{s not in Y} S_s (the online mistake of thesis
                        Sec. 8.2), 0 for a row without pairs; returned per row.
======================  ============================================================================
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "label_ranking_loss",
    "one_error",
    "coverage_error",
    "average_precision",
    "ranking_mistakes",
]


def _check(Y, S):
    Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    S = np.asarray(S, dtype=np.float64)
    if Y.ndim != 2 or S.shape != Y.shape:
        raise ValueError(
            f"Y and S must be 2-D of one shape (n_samples, n_labels); got {Y.shape} and {S.shape}."
        )
    if Y.size and not np.all((Y == 0) | (Y == 1)):
        raise ValueError("Y must be a label-indicator matrix of 0 and 1.")
    if not np.isfinite(S).all():
        raise ValueError("S contains NaN or infinity.")
    if Y.shape[0] == 0:
        raise ValueError("Y and S are empty: no row to score.")
    return Y.astype(bool), S


def _chunks(n, K):
    step = max(1, int(4e6 // max(K * K, 1)))
    for a in range(0, n, step):
        yield slice(a, min(n, a + step))


def _per_row_ranking_loss(Y, S):
    out = np.zeros(Y.shape[0])
    for sl in _chunks(*Y.shape):
        y, s = Y[sl], S[sl]
        # bad[i, r, s'] = r relevant, s' irrelevant, S_r <= S_s'
        bad = (s[:, :, None] <= s[:, None, :]) & y[:, :, None] & ~y[:, None, :]
        npos = y.sum(1)
        pairs = npos * (y.shape[1] - npos)
        cnt = bad.sum(axis=(1, 2))
        out[sl] = np.where(pairs > 0, cnt / np.maximum(pairs, 1), 0.0)
    return out


def label_ranking_loss(Y, S):
    """Mean fraction of wrongly ordered (relevant, irrelevant) pairs (see the module table)."""
    Y, S = _check(Y, S)
    return float(_per_row_ranking_loss(Y, S).mean())


def one_error(Y, S):
    """Fraction of rows whose top score is held by an irrelevant label (see the module table)."""
    Y, S = _check(Y, S)
    top = S == S.max(axis=1, keepdims=True)
    err = (top & ~Y).any(axis=1) & Y.any(axis=1)
    return float(err.mean())


def coverage_error(Y, S):
    """Mean number of labels scored at least as high as the lowest relevant one."""
    Y, S = _check(Y, S)
    lowest = np.where(Y, S, np.inf).min(axis=1, keepdims=True)
    cov = (S >= lowest).sum(axis=1)
    return float(np.where(Y.any(axis=1), cov, 0).mean())


def average_precision(Y, S):
    """Mean label-ranking average precision (see the module table)."""
    Y, S = _check(Y, S)
    out = np.ones(Y.shape[0])
    for sl in _chunks(*Y.shape):
        y, s = Y[sl], S[sl]
        above = s[:, None, :] >= s[:, :, None]  # above[i, r, s'] = S_s' >= S_r
        rank = above.sum(axis=2)
        L = (above & y[:, None, :]).sum(axis=2)
        npos = y.sum(1)
        prec = np.where(y, L / rank, 0.0).sum(axis=1) / np.maximum(npos, 1)
        degenerate = (npos == 0) | (npos == y.shape[1])
        out[sl] = np.where(degenerate, 1.0, prec)
    return float(out.mean())


def ranking_mistakes(Y, S):
    """Per row: 1 if some irrelevant label scores >= some relevant label (thesis Sec. 8.2)."""
    Y, S = _check(Y, S)
    low = np.where(Y, S, np.inf).min(axis=1)
    high = np.where(~Y, S, -np.inf).max(axis=1)
    has_pairs = Y.any(axis=1) & (~Y).any(axis=1)
    return (has_pairs & (low <= high)).astype(np.int64)
