"""The forms the compiled core reads: a batch as three CSR arrays (:class:`CSRBatch`) and labels
as int64 codes into the sorted classes (:func:`unique_labels`, :func:`label_codes`).

The estimators reach these through :mod:`onlinelearn.shell.validation`, which checks the input
first (the sparse structure, finiteness, the label kinds) and re-exports them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["CSRBatch", "label_codes", "unique_labels"]


class CSRBatch:
    """A batch in the form the core reads: ``data`` (float32/64), ``indices`` (int32),
    ``indptr`` (int64).  Dense C-contiguous X is wrapped without a copy (indices = arange(d))."""

    __slots__ = ("data", "indices", "indptr", "n_rows", "n_cols")

    def __init__(self, X):
        if sp.issparse(X):
            X = X.tocsr()
            if not X.has_canonical_format:
                X = X.copy()
                X.sum_duplicates()
            # entries past indptr[-1] are unused storage (scipy allows them): never read them
            nnz = int(X.indptr[-1])
            self.data = np.ascontiguousarray(X.data[:nnz])
            idx = X.indices[:nnz]
            self.indices = np.ascontiguousarray(idx, dtype=np.int32)
            self.indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        else:
            X = np.ascontiguousarray(X)
            n, d = X.shape
            self.data = X.reshape(-1)
            self.indices = np.arange(d, dtype=np.int32)
            self.indptr = np.arange(0, n * d + 1, d if d > 0 else 1, dtype=np.int64)[: n + 1]
            if d == 0:
                self.indptr = np.zeros(n + 1, dtype=np.int64)
        self.n_rows, self.n_cols = X.shape


#: Integer labels whose range (max - min) is at most this, or at most twice their count, are
#: mapped through a table of marks (:func:`unique_labels`, :func:`label_codes`), not sorted.
_TABLE_RANGE = 1 << 16


def _int_range(y):
    """(lo, hi) of a non-empty 1-D array of integer labels when a table over [lo, hi] is small
    (see :data:`_TABLE_RANGE`), else None (any other dtype, or a wide range)."""
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.size and y.dtype.kind in "iu"):
        return None
    if y.dtype.itemsize == 8 and y.dtype.kind == "u":
        return None  # uint64 may not fit int64
    lo, hi = int(y.min()), int(y.max())
    if hi - lo > max(_TABLE_RANGE, 2 * y.size):
        return None
    return lo, hi


def unique_labels(y):
    """``np.unique(y)``: the sorted distinct labels, through a table of marks for integer labels
    of a small range (mnist, 60 000 labels: 1.1 -> 0.2 ms), else by numpy's sort."""
    rng = _int_range(y)
    if rng is None:
        return np.unique(y)
    from .._core.checks import int_label_table

    return int_label_table(y.astype(np.int64, copy=False), *rng).astype(y.dtype)


def label_codes(classes, y):
    """The int64 position of each label of ``y`` in the sorted ``classes``; a ValueError names
    the first label that is not a class (``np.searchsorted`` would silently give a neighbour's
    position).  Integer labels of a small range go through a table (mnist: 1.0 -> 0.1 ms)."""
    y = np.asarray(y)
    rng = _int_range(y) if np.asarray(classes).dtype.kind in "iu" else None
    if rng is not None:
        from .._core.checks import int_label_codes

        codes = np.empty(y.shape[0], dtype=np.int64)
        cls = np.asarray(classes).astype(np.int64)
        bad = int_label_codes(y.astype(np.int64, copy=False), cls, *rng, codes)
    else:
        cls = np.asarray(classes)
        codes = np.searchsorted(cls, y).astype(np.int64)
        if cls.size:
            miss = cls[np.minimum(codes, cls.size - 1)] != y
        else:
            miss = np.ones(y.shape[0], dtype=bool)
        bad = int(np.flatnonzero(miss)[0]) if miss.any() else -1
    if bad >= 0:
        raise ValueError(
            f"label {y[bad].item()!r} (row {bad}) is not one of the classes "
            f"{np.asarray(classes)[:10].tolist()}."
        )
    return codes
