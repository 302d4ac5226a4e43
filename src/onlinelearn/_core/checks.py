"""Compiled checks of a compressed sparse structure (CSR or CSC), one sweep per batch.

A scipy sparse matrix whose ``indptr`` or ``indices`` were edited after construction is never
re-checked by scipy, and the compiled passes (ours, scipy's products) trust both: an index outside
``[0, n_minor)`` reads or writes out of bounds.  :func:`sparse_structure_error` finds the first
defect in one pass over ``indptr`` and the used part of ``indices`` (4 or 8 bytes per nonzero, no
allocation), so the Python layer can refuse the batch before anything reads it.
"""

from __future__ import annotations

import math

import numpy as np

from .._config import njit

OK = 0
#: indptr[0] != 0
BAD_START = 1
#: indptr decreases between ``position`` and ``position + 1``
DECREASING = 2
#: indptr[-1] is larger than the number of stored indices or values
BAD_END = 3
#: indices[position] lies outside [0, n_minor)
OUT_OF_RANGE = 4


@njit
def sparse_structure_error(indptr, indices, n_values, n_minor):
    """First defect of a compressed sparse structure: ``(code, position)``, ``(OK, -1)`` if none.

    ``indptr`` has ``n_major + 1`` entries (checked by the caller); ``n_values`` is the length of
    the data array.  Codes: :data:`BAD_START`, :data:`DECREASING` (position = the major index
    i with indptr[i] > indptr[i+1]), :data:`BAD_END`, :data:`OUT_OF_RANGE` (position = the
    offset q into ``indices``)."""
    n_major = indptr.shape[0] - 1
    if indptr[0] != 0:
        return BAD_START, 0
    for i in range(n_major):
        if indptr[i + 1] < indptr[i]:
            return DECREASING, i
    end = indptr[n_major]
    if end > indices.shape[0] or end > n_values:
        return BAD_END, n_major
    for q in range(end):
        j = indices[q]
        if j < 0 or j >= n_minor:
            return OUT_OF_RANGE, q
    return OK, -1


@njit
def first_overflowing_row(data, indptr, rows, b2):
    """First row among ``rows`` whose squared norm ``sum_q data[q]^2 + b2`` is not finite
    (float64 accumulation, float32 input included), or -1."""
    for ii in range(rows.shape[0]):
        i = rows[ii]
        sq = b2
        for q in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[q])
            sq += v * v
        if not math.isfinite(sq):
            return i
    return -1
