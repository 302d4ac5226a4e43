"""Row-wise tensor product of two CSR matrices (the feature map of a product of kernels)."""

from __future__ import annotations

import numpy as np

from ..config import njit


@njit
def rowwise_kron_csr(ad, ai, ap, bd, bi, bp, d2, out_d, out_i, out_p):
    """Row i of the output is a_i (x) b_i: entry (j1, j2) at column j1 * d2 + j2.

    ``out_p`` must hold the row pointers already (nnz(a_i) nnz(b_i) per row); columns come out
    sorted because j1 and j2 are visited in increasing order."""
    n = ap.shape[0] - 1
    for i in range(n):
        q = out_p[i]
        for p in range(ap[i], ap[i + 1]):
            va = np.float64(ad[p])
            base = np.int64(ai[p]) * d2
            for r in range(bp[i], bp[i + 1]):
                out_d[q] = va * np.float64(bd[r])
                out_i[q] = base + bi[r]
                q += 1
