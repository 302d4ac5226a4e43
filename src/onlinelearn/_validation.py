"""Input checks shared by every estimator: X, y, sample weights, label sets.

Validation lives here, in Python; the compiled core receives only contiguous arrays, scalars and
int codes (DESIGN.md, style rule 2).  Every check runs *before* the model is touched, so a
rejected batch leaves the model exactly as it was.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils import column_or_1d
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data


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
            self.data = np.ascontiguousarray(X.data)
            idx = X.indices
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


_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def _ready(estimator, X):
    """True when X is already what the core reads and what scikit-learn would return unchanged
    for a fitted model: a float32/64 CSR matrix or C-contiguous ndarray, 2-D, non-empty, finite,
    with the fitted number of features, and no feature names in play.  Lets a stream of small
    batches skip the general checks (which cost ~0.5 ms a call); anything else takes them."""
    if getattr(estimator, "feature_names_in_", None) is not None:
        return False
    n_feat = getattr(estimator, "n_features_in_", None)
    if sp.issparse(X):
        if X.format != "csr" or X.dtype not in _FLOATS:
            return False
        values = X.data
    elif type(X) is np.ndarray:
        if X.dtype not in _FLOATS or not X.flags.c_contiguous:
            return False
        values = X
    else:
        return False
    return (
        X.ndim == 2 and X.shape[0] >= 1 and X.shape[1] == n_feat and bool(np.isfinite(values).all())
    )


def check_X(estimator, X, *, reset):
    """Validate X (2-D, finite, float32/64, dense or CSR); checks the feature count when
    ``reset`` is False.  Raises ValueError with the reason."""
    if not reset and _ready(estimator, X):
        return X
    return validate_data(
        estimator,
        X,
        reset=reset,
        accept_sparse="csr",
        dtype=[np.float64, np.float32],
        order="C",
        ensure_all_finite=True,
        ensure_min_samples=1,
    )


def check_X_y(estimator, X, y, *, reset):
    """Validate X as :func:`check_X` and y as a 1-D vector of class labels of the same length."""
    X = check_X(estimator, X, reset=reset)
    y = check_y(y)
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"X has {X.shape[0]} rows but y has {y.shape[0]} labels; they must be equal."
        )
    return X, y


def check_y(y):
    """A 1-D array of class labels: no NaN, not continuous, not multi-output."""
    if type(y) is np.ndarray and y.ndim == 1 and y.size:
        # the common cases, decided without the general machinery: integer or string labels
        # are class labels; floats are when finite and integral (else scikit-learn's
        # "continuous" target error below)
        if y.dtype.kind in "iuU":
            return y
        if y.dtype.kind == "f" and np.isfinite(y).all() and np.array_equal(y, np.floor(y)):
            return y
    if y is None:
        raise ValueError(
            "This estimator requires y to be passed, but the target y is None: "
            "give one class label per row of X."
        )
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] != 1:
        raise ValueError(
            f"y must be 1-D (one label per row); got an array of shape {arr.shape}. "
            "Multi-output classification is not supported."
        )
    arr = column_or_1d(arr, warn=True)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError("y contains NaN or infinity; every row needs a finite class label.")
    if arr.dtype.kind == "O":
        kinds = {type(v) for v in arr}
        if len(kinds) > 1 and not all(issubclass(k, (str, np.str_)) for k in kinds):
            raise ValueError(
                f"y mixes label types {sorted(k.__name__ for k in kinds)}; use one type."
            )
    check_classification_targets(arr)
    return arr


def check_sample_weight(sample_weight, n):
    """Non-negative finite per-row weights (1 when None)."""
    sw = _check_sample_weight(sample_weight, np.empty((n, 0)), dtype=np.float64)
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be non-negative.")
    return np.ascontiguousarray(sw, dtype=np.float64)


def merge_labels(known, new):
    """Sorted union of the known classes and the labels of a new batch.

    Raises ValueError when the label types cannot be compared (e.g. a model trained on integer
    labels receiving strings)."""
    new_u = np.unique(new)
    if known is None:
        return new_u
    try:
        if known.dtype.kind in "US" and new_u.dtype.kind not in "USO":
            raise TypeError
        if new_u.dtype.kind in "US" and known.dtype.kind not in "USO":
            raise TypeError
        merged = np.union1d(known, new_u)
    except TypeError:
        raise ValueError(
            f"labels of type {new_u.dtype} cannot join the model's classes of type "
            f"{known.dtype} (classes so far: {known[:10].tolist()})."
        ) from None
    return merged
