"""Storage only for the features seen: a linear learner over a wide, sparse index space (hashed
features, ``2**b`` columns) that keeps a weight row only for the columns that occurred.

:class:`SeenColumns` wraps an online linear classifier of the Euclidean link with its own
compiled pass (Perceptron, PassiveAggressiveClassifier, COPA and their averaged forms).  Each
column ``j`` of the input (``0 <= j < n_features``) met in a training row gets the compact index
``c(j) = 0, 1, 2, ...`` in the order the columns first appear (a compiled hash table,
:mod:`onlinelearn._core.column_map`, O(1) a nonzero); the wrapped learner sees the rows with
``j`` replaced by ``c(j)``, its width a capacity ``m >=`` the number of columns seen (twice
those of the first call, then doubled when a batch brings more), and the intercept's row after
them.

Why the results are the ones of the wide model, bit for bit: the Euclidean learners' arithmetic
is per coordinate (an update adds ``tau x_j`` to row j only, the averaging sums of row j follow
row j, the norms and scores are sums over a row's stored entries), and a row keeps its entries
in the order of the wide columns (duplicates summed and sorted by ``j`` first, as the wide model
reads them), only renamed, so every sum runs over the same terms in the same order.  A column
never seen in training has weight 0 in the wide model; prediction drops it (``x_j * 0`` adds
nothing to a score).

Cost: a call is O(its nonzeros x K) plus the wrapped learner's per-call work, which is in the
columns seen, never in ``n_features``; memory is the wrapped state of (columns seen) x K and the
table (16 bytes a slot, at most half full).  ``coef_`` is a ``scipy.sparse`` CSR matrix of shape
(n_rows, n_features) with an entry for each nonzero weight; a model file keeps the wrapped
learner's state for the columns seen and their wide indices (``columns``).
"""

from __future__ import annotations

import copy
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._core.column_map import EMPTY, build_table, map_columns

__all__ = ["SeenColumns"]

#: the smallest capacity (columns) of the wrapped learner: at least twice the columns of the first
#: call, then doubled as columns arrive
MIN_CAPACITY = 1024
#: the state arrays of a linear learner with one row per column (and the intercept's row last)
_ROW_ARRAYS = ("theta", "U", "A", "lastS")
_INNER = "estimator."


class _ColumnMap:
    """The wide -> compact map: the compiled table and ``cols`` (compact -> wide)."""

    def __init__(self, slots=16):
        self.n_seen = 0
        self.cols = np.empty(slots // 2, dtype=np.int64)
        self._table(slots)

    def _table(self, slots):
        self.keys = np.full(slots, EMPTY, dtype=np.int64)
        self.vals = np.zeros(slots, dtype=np.int64)
        self.shift = 64 - (slots.bit_length() - 1)
        if self.cols.shape[0] < slots // 2:
            cols = np.empty(slots // 2, dtype=np.int64)
            cols[: self.n_seen] = self.cols[: self.n_seen]
            self.cols = cols
        return build_table(self.cols, self.n_seen, self.keys, self.vals, self.shift)

    @property
    def columns(self):
        return self.cols[: self.n_seen]

    def lookup(self, indices, add):
        """Compact indices of ``indices`` (new ones added when ``add``, else -1)."""
        out = np.empty(indices.shape[0], dtype=np.int64)
        i = 0
        while True:
            i, n = map_columns(indices, self.keys, self.vals, self.cols, self.n_seen, add, out,
                               i, self.shift)  # fmt: skip
            self.n_seen = int(n)
            if i == indices.shape[0]:
                return out
            self._table(2 * self.keys.shape[0])

    def truncate(self, n):
        """Forget the columns added after the first ``n`` (a rejected call)."""
        if n != self.n_seen:
            self.n_seen = n
            self._table(self.keys.shape[0])

    @classmethod
    def of_columns(cls, cols, n_features):
        """The map of the wide indices ``cols`` (compact order); ValueError when they are not
        distinct integers in [0, n_features)."""
        cols = np.asarray(cols)
        if cols.ndim != 1 or cols.dtype.kind not in "iu":
            raise ValueError(
                f"the map of the columns seen is corrupted: expected a 1-D integer array, got "
                f"dtype {cols.dtype} and shape {cols.shape}"
            )
        if cols.size and (int(cols.min()) < 0 or int(cols.max()) >= n_features):
            raise ValueError(
                f"the map of the columns seen is corrupted: indices outside [0, {n_features})"
            )
        slots = 16
        while slots < 2 * cols.shape[0]:
            slots *= 2
        m = cls(slots)
        m.cols[: cols.shape[0]] = cols
        m.n_seen = cols.shape[0]
        first_repeat = m._table(slots)
        if first_repeat != m.n_seen:
            raise ValueError(
                f"the map of the columns seen is corrupted: column {int(cols[first_repeat])} "
                "appears twice"
            )
        return m


def _resized(meta, arrays, fit_intercept, width):
    """The linear state ``(meta, arrays)`` with ``width`` feature rows: rows kept or cut at the
    end of the features (cut rows must be zero: columns never seen), the intercept's row
    last, new rows zero."""
    old = int(meta["n_features_in_"])
    keep = min(old, width)
    arrays = dict(arrays)
    for name in _ROW_ARRAYS:
        a = arrays.get(name)
        if a is None or a.ndim != 2 or a.shape[0] != old + fit_intercept:
            continue  # (1, 1) placeholders of the layouts that do not keep it
        out = np.zeros((width + fit_intercept, a.shape[1]), dtype=a.dtype)
        out[:keep] = a[:keep]
        if fit_intercept:
            out[width] = a[old]
        arrays[name] = out
    return {**meta, "n_features_in_": int(width)}, arrays


class SeenColumns(ClassifierMixin, BaseEstimator):
    """An online linear classifier over ``n_features`` columns that stores weights only for the
    columns seen in training (module docstring: same results as ``estimator`` on the wide input,
    bit for bit).

    Parameters
    ----------
    estimator : online linear classifier
        Not fitted; cloned at the first fit.  A learner of the Euclidean link with the
        library's own pass: Perceptron, PassiveAggressiveClassifier, COPA (averaged or not).
    n_features : int
        The width of the input (e.g. ``2**b`` for hashed features).  The input is read as CSR
        (a dense array is converted: the wrapped learner sees sparse rows, and the results are
        those of the wide learner on the same CSR matrix).

    Attributes
    ----------
    estimator_ : the fitted clone of ``estimator`` on the compact columns
    columns_ : ndarray of int64, the wide index of each compact column, in order of appearance
    coef_ : scipy.sparse CSR matrix (n_rows, n_features), the nonzero weights
    """

    def __init__(self, estimator=None, n_features=2**18):
        self.estimator = estimator
        self.n_features = n_features

    @staticmethod
    def supports(estimator) -> bool:
        """True when ``estimator`` learns per coordinate (the Euclidean link with its own pass),
        so that storing only the columns seen changes no result."""
        from .shell.base import OnlineLinearClassifier

        return isinstance(estimator, OnlineLinearClassifier) and estimator._finite_in_pass()

    def _check_params(self):
        from .shell.validation import MAX_N_FEATURES

        n = self.n_features
        if (
            isinstance(n, bool)
            or not isinstance(n, numbers.Integral)
            or not (1 <= n <= MAX_N_FEATURES)
        ):
            raise ValueError(f"n_features must be an integer in [1, {MAX_N_FEATURES}], got {n!r}")
        if not self.supports(self.estimator):
            raise ValueError(
                "SeenColumns wraps a Euclidean online linear classifier with its own pass "
                f"(Perceptron, PassiveAggressiveClassifier, COPA), not {self.estimator!r}: "
                "other learners read every weight (aggregates, projections)"
            )

    # -- the compact rows ----------------------------------------------------------------------
    def _wide(self, X):
        """X as CSR, float32/64 (other dtypes as float64), ``n_features`` columns, duplicates
        summed and each row sorted by column (as the wrapped learner reads a wide matrix); the
        values are checked by the wrapped learner."""
        from .shell.validation import canonical, check_sparse_structure

        if sp.issparse(X):
            check_sparse_structure(X)
            X = X.tocsr()
        else:
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"X must be 2-D (rows of features), got shape {X.shape}")
            X = sp.csr_matrix(X)
        if X.dtype not in (np.float64, np.float32):
            X = X.astype(np.float64)
        if X.shape[0] < 1:
            raise ValueError("X has no rows: at least one is required")
        if X.shape[1] != self.n_features:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features} features as input."
            )
        return canonical(X)

    def _compact(self, X, width, compact):
        """The rows of the checked ``X`` on the compact columns ``compact`` (one per stored
        entry; -1: never seen, dropped), ``width`` columns, entries in X's order."""
        n_rows = X.shape[0]
        nnz = int(X.indptr[-1])
        data, indptr = X.data[X.indptr[0] : nnz], X.indptr - X.indptr[0]
        keep = compact >= 0
        if not keep.all():
            kept = np.concatenate([[0], np.cumsum(keep)])
            indptr, data, compact = kept[indptr], data[keep], compact[keep]
        idx_dtype = np.int32 if max(width, data.shape[0]) < 2**31 else np.int64
        Xc = sp.csr_matrix(
            (data, compact.astype(idx_dtype), indptr.astype(idx_dtype)), shape=(n_rows, width)
        )
        # no duplicates (the map is one to one); the entries keep the wide order within a row
        # on purpose (the same sums in the same order), which no pass relies on being sorted
        Xc.has_canonical_format = True
        return Xc

    def _mapped(self, X):
        """A checked wide X on the fitted compact columns (unseen ones dropped)."""
        check_is_fitted(self, "estimator_")
        X = self._wide(X)
        nnz = slice(int(X.indptr[0]), int(X.indptr[-1]))
        compact = self._map.lookup(X.indices[nnz], add=False)
        return self._compact(X, int(self.estimator_.n_features_in_), compact)

    # -- learning ------------------------------------------------------------------------------
    def _learn(self, method, X, y, **kw):
        """Map X (adding its new columns), widen the wrapped learner if they do not fit, then its
        ``method``; a rejected call forgets the new columns and keeps the learner as it was."""
        first = "estimator_" not in self.__dict__
        if first:
            self._check_params()
        X = self._wide(X)
        cmap = _ColumnMap() if first else self._map
        before = cmap.n_seen
        try:
            nnz = slice(int(X.indptr[0]), int(X.indptr[-1]))
            compact = cmap.lookup(X.indices[nnz], add=True)
            if first:
                inner = clone(self.estimator)
                width = min(max(MIN_CAPACITY, 2 * cmap.n_seen), int(self.n_features))
            else:
                inner = self.estimator_
                width = int(inner.n_features_in_)
                if cmap.n_seen > width:
                    width = min(max(cmap.n_seen, 2 * width), int(self.n_features))
                    inner = _widened(inner, width)  # a copy: the old one stays as it was
            out = getattr(inner, method)(self._compact(X, width, compact), y, **kw)
        except BaseException:
            cmap.truncate(before)
            raise
        self._map = cmap
        self.estimator_ = inner
        self.n_features_in_ = int(self.n_features)
        return out

    def fit(self, X, y, sample_weight=None, classes=None):
        """Learn from scratch (the wrapped learner's ``fit`` on the compact columns of X)."""
        self._check_params()
        X = self._wide(X)
        cmap = _ColumnMap()
        nnz = slice(int(X.indptr[0]), int(X.indptr[-1]))
        compact = cmap.lookup(X.indices[nnz], add=True)
        inner = clone(self.estimator)
        inner.fit(self._compact(X, max(1, cmap.n_seen), compact), y,
                  sample_weight=sample_weight, classes=classes)  # fmt: skip
        self._map, self.estimator_, self.n_features_in_ = cmap, inner, int(self.n_features)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One online pass over the batch (the wrapped learner's ``partial_fit``)."""
        self._learn("partial_fit", X, y, classes=classes, sample_weight=sample_weight)
        return self

    def partial_fit_predict(self, X, y, classes=None, sample_weight=None, **options):
        """Progressive validation: each row's prediction before it was learned, then learned
        (the wrapped learner's ``partial_fit_predict``)."""
        return self._learn("partial_fit_predict", X, y, classes=classes,
                           sample_weight=sample_weight, **options)  # fmt: skip

    # -- prediction ----------------------------------------------------------------------------
    def predict(self, X):
        """The wrapped learner's labels of the rows of X (columns never seen weigh 0)."""
        Xc = self._mapped(X)  # (checks that the model is fitted)
        return self.estimator_.predict(Xc)

    def decision_function(self, X):
        """The wrapped learner's scores of the rows of X."""
        Xc = self._mapped(X)  # (checks that the model is fitted)
        return self.estimator_.decision_function(Xc)

    @available_if(lambda self: hasattr(self.estimator, "predict_proba"))
    def predict_proba(self, X):
        """The wrapped learner's probabilities of the rows of X."""
        Xc = self._mapped(X)  # (checks that the model is fitted)
        return self.estimator_.predict_proba(Xc)

    @property
    def classes_(self):
        check_is_fitted(self, "estimator_")
        return self.estimator_.classes_

    @property
    def columns_(self):
        """The wide index of each compact column (a copy), in order of first appearance."""
        check_is_fitted(self, "estimator_")
        return self._map.columns.copy()

    @property
    def coef_(self):
        """Weights as a CSR matrix (n_rows, n_features): an entry per nonzero weight."""
        check_is_fitted(self, "estimator_")
        n = self._map.n_seen
        W = self.estimator_.coef_[:, :n]
        rows = np.repeat(np.arange(W.shape[0]), n)
        cols = np.tile(self._map.columns, W.shape[0])
        C = sp.csr_matrix((W.ravel(), (rows, cols)), shape=(W.shape[0], self.n_features))
        C.eliminate_zeros()
        return C

    @property
    def intercept_(self):
        check_is_fitted(self, "estimator_")
        return self.estimator_.intercept_

    # -- model files ---------------------------------------------------------------------------
    def _get_state(self):
        """``meta`` with the wrapped learner's meta (``"estimator"``); arrays ``columns`` and the
        wrapped learner's arrays (``estimator.<name>``), cut to the columns seen."""
        from .model_io import _state_of

        check_is_fitted(self, "estimator_")
        inner = self.estimator_
        meta, arrays = _state_of(inner)
        meta, arrays = _resized(meta, arrays, int(bool(inner.fit_intercept)),
                                max(1, self._map.n_seen))  # fmt: skip
        out = {_INNER + k: v for k, v in arrays.items()}
        out["columns"] = self._map.columns.copy()
        params = {"n_features": int(self.n_features)}
        return {"class": type(self).__name__, "params": params,
                "n_features_in_": int(self.n_features), "estimator": meta}, out  # fmt: skip

    @classmethod
    def _from_state(cls, meta, arrays):
        from .model_io import _estimator_of

        n = meta["params"]["n_features"]
        if meta.get("n_features_in_") != n:
            raise ValueError("model state is inconsistent: n_features_in_ != n_features")
        inner = _estimator_of(
            meta["estimator"],
            {k[len(_INNER) :]: v for k, v in arrays.items() if k.startswith(_INNER)},
        )
        est = cls(clone(inner), n)
        est._check_params()
        cmap = _ColumnMap.of_columns(arrays["columns"], n)
        if int(inner.n_features_in_) != max(1, cmap.n_seen):
            raise ValueError(
                f"the map of the columns seen is corrupted: {cmap.n_seen} columns for a learner "
                f"of {inner.n_features_in_}"
            )
        est._map, est.estimator_, est.n_features_in_ = cmap, inner, int(n)
        return est


def _widened(inner, width):
    """A copy of the fitted linear learner ``inner`` with ``width`` feature rows (new rows
    zero), through its model state (the same learner, bit for bit: ``--resume``'s contract),
    its probability calibration copied as it is (the file's form of it solves it first, which
    would change the solver's later warm starts)."""
    from .model_io import _estimator_of

    meta, arrays = inner._get_state()
    resized = _resized(meta, arrays, int(bool(inner.fit_intercept)), width)[1]
    # every array its own (the state shares the learner's arrays; the old learner is kept)
    arrays = {k: v if v is not arrays[k] else np.array(v, copy=True) for k, v in resized.items()}
    wider = _estimator_of({**meta, "n_features_in_": int(width)}, arrays)
    calibration = inner.__dict__.get("calibration_")
    if calibration is not None:
        wider.__dict__["calibration_"] = copy.deepcopy(calibration)
    return wider
