"""Reductions over a whole dense weight matrix (row by row, in storage order)."""

from __future__ import annotations

from .config import njit


@njit
def sum_squares(V):
    """||V||_F^2 = sum_jk V_jk^2, summed row by row."""
    R, K = V.shape
    s = 0.0
    for j in range(R):
        for k in range(K):
            s += V[j, k] * V[j, k]
    return s
