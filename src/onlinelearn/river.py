"""River's protocol for onlinelearn's learners: ``learn_one`` / ``predict_one`` on dict rows.

:class:`RiverClassifier` and :class:`RiverRegressor` wrap any onlinelearn classifier or
regressor (anything with ``partial_fit``) as a River estimator, so that
``river.evaluate.progressive_val_score``, ``river.compose`` pipelines
(``preprocessing.StandardScaler() | RiverClassifier(PassiveAggressiveClassifier())``) and River's
metrics run it.  Needs River (``pip install onlinelearn[river]``).

Dict rows become rows of a fixed number of columns, ``n_features`` (the wrapped learner's
``n_features_in_``):

* ``hashing=False`` (default): each feature name gets the next free column the first time it is
  seen (``feature_names_``, in order of arrival); a name beyond ``n_features`` raises a
  ``ValueError`` that says so (raise ``n_features`` or hash);
* ``hashing=True``: a name goes to column ``murmurhash3_32(name, seed=0) mod n_features``
  (scikit-learn's ``FeatureHasher`` hash, without its sign), so any number of names fits, with
  collisions.

A numeric value (int, float, bool) is the feature's value; a string value ``v`` of feature ``k``
is the indicator feature ``"k=v"`` with value 1 (River's and ``FeatureHasher``'s convention);
``None`` is a missing feature.  Rows are dense arrays when ``n_features <= 4096``, CSR
otherwise (so a wide hashed space costs the row's nonzeros, not its width).

``learn_one(x, y)`` is ``partial_fit`` on one row (the learner's label set grows as labels
arrive).  A learner with its own per-event methods (the linear classifiers,
:mod:`onlinelearn.shell.events`; the kernel online learners, whose class names its family's
module as ``_event_road``) gets the row's entries (values and columns) and learns them
in one compiled call: the same model, bit for bit, as ``partial_fit`` on the CSR row of those
entries, and the same errors.  Other learners get the row written into a kept dense buffer
(CSR when wide).  ``predict_one`` is ``predict``, ``predict_proba_one`` is ``predict_proba``
as a dict {label: probability} (``onlinelearn.shell.proba``: the learner's calibrated
probabilities); before the first ``learn_one`` they return None and ``{}`` as River's
learners do (a regressor: 0.0).  ``learn_many`` / ``predict_many`` /
``predict_proba_many`` take pandas DataFrames: one ``partial_fit`` over the batch (one
compiled pass), which is how a stream is fastest.

Example (``tests/test_river.py`` runs it and checks the score)::

    from river import datasets, evaluate, metrics, preprocessing
    from onlinelearn import PassiveAggressiveClassifier
    from onlinelearn.river import RiverClassifier

    model = preprocessing.StandardScaler() | RiverClassifier(PassiveAggressiveClassifier())
    evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    # Accuracy: 89.43%

Without River the module still imports (so that the documentation tools can read it), and
creating an adapter raises ImportError.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .shell import events

try:
    from river import base as river_base

    _CLASSIFIER, _REGRESSOR = river_base.MiniBatchClassifier, river_base.MiniBatchRegressor
except ImportError:  # pragma: no cover - the optional dependency is missing
    river_base = None
    _CLASSIFIER = _REGRESSOR = object

_MISSING = "onlinelearn.river needs River: pip install 'onlinelearn[river]' (or pip install river)"

__all__ = ["RiverClassifier", "RiverRegressor"]

#: rows narrower than this are dense arrays, wider ones CSR
_DENSE_MAX = 4096


class _DictRows:
    """Dict rows to the columns of the wrapped learner (module docstring)."""

    def __init__(self, n_features, hashing):
        if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral):
            raise TypeError(f"n_features must be an int, got {n_features!r}")
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        self.n_features = int(n_features)
        self.hashing = bool(hashing)
        self.index: dict = {}

    def _column(self, name, grow):
        if self.hashing:
            from sklearn.utils import murmurhash3_32

            return murmurhash3_32(str(name), seed=0, positive=True) % self.n_features
        j = self.index.get(name)
        if j is None:
            if not grow:
                return None  # a feature never learned from has weight 0
            if len(self.index) >= self.n_features:
                raise ValueError(
                    f"feature {name!r} is new and all n_features={self.n_features} columns "
                    "are taken; pass a larger n_features or hashing=True"
                )
            j = self.index[name] = len(self.index)
        return j

    def _pairs(self, x, grow):
        cols, vals = [], []
        for k, v in x.items():
            if v is None:
                continue
            if isinstance(v, str):
                k, v = f"{k}={v}", 1.0
            j = self._column(k, grow)
            if j is not None:
                cols.append(j)
                vals.append(float(v))
        return cols, vals

    def _check_new_names(self, rows):
        """Raise before anything changes if the new names of ``rows`` do not fit."""
        if self.hashing:
            return
        new = {(f"{k}={v}" if isinstance(v, str) else k) for x in rows for k, v in x.items()
               if v is not None} - self.index.keys()  # fmt: skip
        if len(self.index) + len(new) > self.n_features:
            raise ValueError(
                f"{len(new)} new features and {len(self.index)} known ones do not fit in "
                f"n_features={self.n_features} columns; pass a larger n_features or hashing=True"
            )

    def matrix(self, rows, grow):
        """The rows as one (n, n_features) array or CSR matrix."""
        if grow:
            self._check_new_names(rows)
        n = len(rows)
        if self.n_features <= _DENSE_MAX:
            X = np.zeros((n, self.n_features))
            for i, x in enumerate(rows):
                cols, vals = self._pairs(x, grow)
                if self.hashing:  # colliding names add up
                    np.add.at(X[i], cols, vals)
                else:
                    X[i, cols] = vals
            return X
        indptr, indices, data = [0], [], []
        for x in rows:
            cols, vals = self._pairs(x, grow)
            indices += cols
            data += vals
            indptr.append(len(indices))
        X = sp.csr_matrix(
            (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64), indptr),
            shape=(n, self.n_features),
        )
        X.sum_duplicates()
        return X

    def row(self, x, grow):
        """One dict row as a (1, n_features) matrix: the preallocated dense row ``self.buf``
        (the caller zeroes it again with :meth:`clear`), or a CSR row.  The one-row protocol's
        path: :meth:`matrix` without its lists of rows (same values, same columns)."""
        index, hashing = self.index, self.hashing
        cols, vals = [], []
        for k, v in x.items():
            if v is None:
                continue
            if isinstance(v, str):
                k, v = f"{k}={v}", 1.0
            if hashing:
                j = self._column(k, grow)
            else:
                j = index.get(k)
                if j is None:
                    if not grow:
                        continue  # a feature never learned from has weight 0
                    j = self._column(k, grow)
            cols.append(j)
            vals.append(float(v))
        if self.n_features > _DENSE_MAX:
            X = sp.csr_matrix((np.asarray(vals, dtype=np.float64),
                               np.asarray(cols, dtype=np.int64), [0, len(cols)]),
                              shape=(1, self.n_features))  # fmt: skip
            X.sum_duplicates()
            return X
        buf = self.__dict__.get("buf")
        if buf is None:
            buf = self.buf = np.zeros((1, self.n_features))
        b = buf[0]
        if hashing:  # colliding names add up (in the order of the row, as np.add.at)
            for j, v in zip(cols, vals, strict=True):
                b[j] += v
        else:
            for j, v in zip(cols, vals, strict=True):
                b[j] = v
        return buf

    def entries(self, x, grow):
        """One dict row as (float64 values, int32 columns) in the row's order, colliding hashed
        names added up in that order (the values :meth:`row` writes); names not known and not
        ``grow``: left out (weight 0).  The last row's entries are kept with a copy of it: a
        ``learn_one`` after a ``predict_one`` of an equal row (River's test-then-train) reuses
        them (the arrays are never written)."""
        last = self.__dict__.get("last")
        if last is not None and (last[3] or not grow) and last[0] == x:
            return last[1], last[2]
        index, hashing = self.index, self.hashing
        complete = True  # every name has its column
        if hashing:
            acc = {}
            for k, v in x.items():
                if v is None:
                    continue
                if isinstance(v, str):
                    k, v = f"{k}={v}", 1.0
                j = self._column(k, grow)
                acc[j] = acc.get(j, 0.0) + float(v)
            cols, vals = list(acc), list(acc.values())
        else:
            cols, vals = [], []
            for k, v in x.items():
                if v is None:
                    continue
                if isinstance(v, str):
                    k, v = f"{k}={v}", 1.0
                j = index.get(k)
                if j is None:
                    if not grow:
                        complete = False
                        continue  # a feature never learned from has weight 0
                    j = self._column(k, grow)
                cols.append(j)
                vals.append(v)
        try:
            data = np.array(vals, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"feature values must be numbers, got {x!r}") from None
        idx = np.array(cols, dtype=np.int32)
        self.last = (dict(x), data, idx, complete)
        return data, idx

    def csr(self, data, idx):
        """The (1, n_features) CSR row of :meth:`entries`."""
        return sp.csr_matrix((data, idx, np.array([0, idx.shape[0]])),
                             shape=(1, self.n_features))  # fmt: skip

    def clear(self):
        """Zero the dense row again after the call that read it."""
        if self.n_features <= _DENSE_MAX:
            self.buf.fill(0.0)

    def forget(self, n):
        """Drop the names given columns >= n (a rejected call adds none)."""
        self.__dict__.pop("last", None)
        if len(self.index) > n:
            self.index = {k: j for k, j in self.index.items() if j < n}

    def frame(self, X, grow):
        """A pandas DataFrame (columns: feature names; NaN: missing) as a matrix: numeric
        columns are copied as blocks, the others (strings) go through the dict rows."""
        num = X.select_dtypes(include=["number", "bool"])
        other = X.drop(columns=num.columns)
        other_rows = [{k: v for k, v in r.items() if not _missing(v)}
                      for r in other.to_dict(orient="records")] if other.shape[1] else None
        if grow and not self.hashing:
            new = [k for k in num.columns if k not in self.index]
            names = [{k: 1.0 for k in new}] + (other_rows or [])
            self._check_new_names(names)
        cols = [self._column(k, grow) for k in num.columns]
        keep = [i for i, j in enumerate(cols) if j is not None]
        cols = np.asarray([cols[i] for i in keep], dtype=np.int64)
        V = np.nan_to_num(num.to_numpy(dtype=np.float64)[:, keep], nan=0.0)
        n = len(X)
        if self.n_features <= _DENSE_MAX:
            M = np.zeros((n, self.n_features))
            if self.hashing:  # colliding names add up
                np.add.at(M.T, cols, V.T)
            else:
                M[:, cols] = V
            if other_rows is not None:
                M += self.matrix(other_rows, grow)
            return M
        r, c = np.nonzero(V)
        M = sp.csr_matrix((V[r, c], (r, cols[c])), shape=(n, self.n_features))
        if other_rows is not None:
            M = M + self.matrix(other_rows, grow)
        M.sum_duplicates()
        return M


def _missing(v):
    return v is None or (isinstance(v, float) and v != v)


class _Adapter:
    def __init__(self, estimator, n_features=1024, hashing=False):
        if river_base is None:
            raise ImportError(_MISSING)
        self.estimator = estimator
        self.n_features = n_features
        self.hashing = hashing
        self._rows = _DictRows(n_features, hashing)

    @property
    def feature_names_(self):
        """The feature names in the order of their columns (``hashing=False``)."""
        return list(self._rows.index)

    def _fitted(self):
        return hasattr(self.estimator, "n_features_in_")

    def _learn(self, rows, y, w, frame=False):
        """``partial_fit`` on ``rows`` (dicts, or a DataFrame when ``frame``); a rejected call
        leaves the adapter's feature names and the learner as they were."""
        n_names = len(self._rows.index)
        try:
            X = self._rows.frame(rows, True) if frame else self._rows.matrix(rows, True)
            if w is None:
                self.estimator.partial_fit(X, y)
            else:
                sw = np.asarray(w, dtype=np.float64).reshape(-1)
                self.estimator.partial_fit(X, y, sample_weight=sw)
        except BaseException:
            self._rows.forget(n_names)
            raise

    def _events(self):
        """True when the learner takes single events itself (:mod:`onlinelearn.shell.events`:
        the linear classifiers; ``onlinelearn.kernel_methods._events``: the kernel online
        learners); its rows are then its own CSR rows of the dict's entries."""
        return hasattr(self.estimator, "learn_one")

    def _road(self):
        """The module of the learner's per-event calls on entries (its family's
        ``_event_road``; the linear classifiers': :mod:`onlinelearn.shell.events`)."""
        return getattr(type(self.estimator), "_event_road", events)

    def _learn_row(self, x, y, w):
        """``partial_fit`` on one dict row: the learner's event road when it has one (the same
        model as ``partial_fit`` on the CSR row), else the row written into a kept buffer."""
        rows = self._rows
        n_names = len(rows.index)
        try:
            if self._events():
                data, idx = rows.entries(x, True)
                if w is None and self._road().learn_entries(self.estimator, data, idx, y):
                    return
                kw = {} if w is None else {"sample_weight": np.array([w], dtype=np.float64)}
                self.estimator.partial_fit(rows.csr(data, idx), np.array([y]), **kw)
                return
            X = rows.row(x, True)
            try:
                if w is None:
                    self.estimator.partial_fit(X, np.array([y]))
                else:
                    sw = np.asarray(w, dtype=np.float64).reshape(-1)
                    self.estimator.partial_fit(X, np.array([y]), sample_weight=sw)
            finally:
                rows.clear()
        except BaseException:
            rows.forget(n_names)
            raise

    def _one(self, method, x):
        """The learner's ``method`` (predict, predict_proba) on one dict row."""
        rows = self._rows
        X = rows.row(x, False)
        try:
            return method(X)[0]
        finally:
            rows.clear()

    def learn_many(self, X, y, w=None):
        """One ``partial_fit`` over a pandas DataFrame of rows and a Series of targets."""
        self._learn(X, np.asarray(y), w, frame=True)

    def clone(self, new_params=None, include_attributes=False):
        """A new adapter around an unfitted copy of the learner (``sklearn.base.clone``), with
        ``new_params`` replacing parameters; ``include_attributes`` is not supported (a learned
        state is copied with ``copy.deepcopy``)."""
        from sklearn.base import clone

        params = {"estimator": clone(self.estimator), "n_features": self.n_features,
                  "hashing": self.hashing, **(new_params or {})}  # fmt: skip
        return type(self)(**params)

    @classmethod
    def _unit_test_params(cls):
        if cls.__name__ == "RiverRegressor":
            from onlinelearn import PassiveAggressiveRegressor

            yield {"estimator": PassiveAggressiveRegressor()}
        else:
            from onlinelearn import PassiveAggressiveClassifier

            yield {"estimator": PassiveAggressiveClassifier()}


class RiverClassifier(_Adapter, _CLASSIFIER):
    """An onlinelearn classifier as a River classifier (module docstring).

    Parameters
    ----------
    estimator : onlinelearn classifier
        Any classifier with ``partial_fit`` (Perceptron, PassiveAggressiveClassifier, AROW,
        KernelPerceptron, OnlineLearner, ...), unfitted; the adapter trains it in place.
    n_features : int, default=1024
        The number of columns the dict rows map to (the learner's ``n_features_in_``).
    hashing : bool, default=False
        Hash feature names into the ``n_features`` columns instead of giving each new name
        the next column.
    """

    @property
    def _multiclass(self):
        return True

    def learn_one(self, x, y, w=None):
        """``partial_fit`` on the row ``x`` (a dict) with label ``y`` (weight ``w``)."""
        self._learn_row(x, y, w)

    def predict_proba_one(self, x, **kwargs):
        """{label: probability} from the learner's ``predict_proba``; {} before learning."""
        if not self._fitted():
            return {}
        if self._events():
            return self._road().predict_proba_entries(self.estimator,
                                                      *self._rows.entries(x, False))
        P = self._one(self.estimator.predict_proba, x)
        return {_plain(c): float(p) for c, p in zip(self.estimator.classes_, P, strict=True)}

    def predict_one(self, x, **kwargs):
        """The learner's ``predict``; None before learning."""
        if not self._fitted():
            return None
        if self._events():
            return self._road().predict_entries(self.estimator, *self._rows.entries(x, False))
        return _plain(self._one(self.estimator.predict, x))

    def predict_proba_many(self, X):
        import pandas as pd

        P = self.estimator.predict_proba(self._rows.frame(X, grow=False))
        return pd.DataFrame(P, index=X.index, columns=[_plain(c) for c in self.estimator.classes_])

    def predict_many(self, X):
        import pandas as pd

        return pd.Series(self.estimator.predict(self._rows.frame(X, grow=False)), index=X.index)


class RiverRegressor(_Adapter, _REGRESSOR):
    """An onlinelearn regressor as a River regressor (module docstring; parameters as
    :class:`RiverClassifier`'s)."""

    def learn_one(self, x, y, w=None):
        """``partial_fit`` on the row ``x`` (a dict) with target ``y`` (weight ``w``)."""
        self._learn_row(x, float(y), w)

    def predict_one(self, x, **kwargs):
        """The learner's ``predict``; 0.0 before learning."""
        if not self._fitted():
            return 0.0
        return float(self._one(self.estimator.predict, x))

    def predict_many(self, X):
        import pandas as pd

        if not self._fitted():
            return pd.Series(np.zeros(len(X)), index=X.index)
        return pd.Series(self.estimator.predict(self._rows.frame(X, grow=False)), index=X.index)


def _plain(v):
    """numpy scalars as Python ones (River's metrics compare labels with ==, dicts hash them)."""
    return v.item() if isinstance(v, np.generic) else v
