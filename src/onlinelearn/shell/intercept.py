"""The value b of the intercept feature read from the data: the sum of squares of the nonzero
values of a batch (:func:`_nonzero_sumsq`, the same for a dense array and the CSR data of the
same rows) and the power of ten of a typical value (:func:`typical_value_scaling`: PA, Winnow
and the p-norm Perceptron's ``intercept_scaling='auto'``; the Perceptron's stream rule reads
the same sums).  The intercept is b times the weight of the constant feature: an update moves
it as much as a feature of value b."""

from __future__ import annotations

import numpy as np

from .._core.config import njit

__all__ = ["typical_value_scaling"]


#: partial sums of :func:`_nonzero_sumsq` (independent add chains: the sum is not one long
#: chain of dependent additions, which ran at one add per 4 cycles)
_SUMSQ_LANES = 8


@njit
def _nonzero_sumsq(data):
    """(sum of v^2, count of v != 0) over ``data`` in its order: the i-th nonzero value goes
    to partial sum i mod 8 and the partial sums are added in a fixed order, so a dense array
    and the CSR data of the same rows (the same nonzeros in the same order) give bit-identical
    sums; the zeros are skipped."""
    acc = np.zeros(_SUMSQ_LANES)
    count = 0
    n = data.shape[0]
    q = 0
    # runs of 8 nonzeros (CSR data is all nonzeros but for explicit zeros): no branch per lane
    while q + _SUMSQ_LANES <= n:
        full = True
        for i in range(_SUMSQ_LANES):
            if data[q + i] == 0:
                full = False
        if full and count % _SUMSQ_LANES == 0:
            for i in range(_SUMSQ_LANES):
                v = np.float64(data[q + i])
                acc[i] += v * v
            count += _SUMSQ_LANES
            q += _SUMSQ_LANES
        else:
            v = np.float64(data[q])
            if v != 0.0:
                acc[count % _SUMSQ_LANES] += v * v
                count += 1
            q += 1
    while q < n:
        v = np.float64(data[q])
        if v != 0.0:
            acc[count % _SUMSQ_LANES] += v * v
            count += 1
        q += 1
    total = 0.0
    for i in range(_SUMSQ_LANES):
        total += acc[i]
    return total, count


def typical_value_scaling(batch):
    """b of ``intercept_scaling='auto'``: 10^round(log10 r), at most 1, where r is the root
    mean square of the nonzero values of ``batch`` (dense or CSR, read in row-major order);
    1.0 when there is none, a value is NaN, or the sum of squares overflows or underflows.

    Why: the bias is the weight of one more feature of value b, and an update moves it as
    much as a feature of that value.  On unit-norm text rows (TF-IDF, hashed counts) a
    typical nonzero value is about 0.08 and b = 1 makes the bias feature as large as the
    whole row: one pass of PA on 20 newsgroups loses 1-9 points (docs/defaults.md).  With b
    of the size of a typical value (0.1 there) the bias learns at a feature's pace, as
    scikit-learn's SGD damps its intercept on sparse input (``SPARSE_INTERCEPT_DECAY``).
    Binary, standardised or unscaled features (r >= 10^-0.5) keep b = 1.  Rounding to a power
    of ten makes b the same for any batch of the same data but the smallest (one row of text
    may still give 0.01 or 1)."""
    sumsq, count = _nonzero_sumsq(batch.data)
    if count == 0 or not (0.0 < sumsq < np.inf):
        return 1.0  # no nonzero value, a NaN (refused by the pass), squares out of range
    exponent = np.floor(0.5 * np.log10(sumsq / count) + 0.5)
    b = float(10.0 ** min(exponent, 0.0))
    return b if np.isfinite(b) and b > 0.0 else 1.0
