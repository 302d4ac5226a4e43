"""A small sparse problem whose weight matrix is too wide for the core's L2: the prefetches of
the passes switch on for it (``K * (d + 1) >= PREFETCH_MIN_ENTRIES``)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from onlinelearn._core.prefetch import PREFETCH_MIN_ENTRIES


def wide_sparse_problem(rng, n, K, per_row):
    """(X, y): n CSR rows of ``per_row`` nonzeros drawn from a pool of 200 shared features (so
    rows interact) among ``PREFETCH_MIN_ENTRIES // K + 11`` columns, labels in 0..K-1."""
    d = PREFETCH_MIN_ENTRIES // K + 11
    pool = rng.choice(d, size=200, replace=False)
    cols = np.concatenate(
        [np.sort(rng.choice(pool, size=per_row, replace=False)) for _ in range(n)]
    )
    rows = np.repeat(np.arange(n), per_row)
    X = sp.csr_matrix((rng.random(cols.size), (rows, cols)), shape=(n, d))
    return X, rng.integers(0, K, size=n)
