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
:mod:`onlinelearn.shell.events`; the second-order ones, :mod:`onlinelearn.second_order._events`;
the kernel online learners, :mod:`onlinelearn.kernel_methods._events`) gets the row's entries
(values and columns) and learns them
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

import numpy as np

from .shell import events
from .shell.dict_rows import DictRows

try:
    from river import base as river_base

    _CLASSIFIER, _REGRESSOR = river_base.MiniBatchClassifier, river_base.MiniBatchRegressor
except ImportError:  # pragma: no cover - the optional dependency is missing
    river_base = None
    _CLASSIFIER = _REGRESSOR = object

_MISSING = "onlinelearn.river needs River: pip install 'onlinelearn[river]' (or pip install river)"

__all__ = ["RiverClassifier", "RiverRegressor"]

class _Adapter:
    def __init__(self, estimator, n_features=1024, hashing=False):
        if river_base is None:
            raise ImportError(_MISSING)
        self.estimator = estimator
        self.n_features = n_features
        self.hashing = hashing
        self._rows = DictRows(n_features, hashing)

    @property
    def feature_names_(self):
        """The feature names in the order of their columns (``hashing=False``)."""
        return list(self._rows.index)

    def _fitted(self):
        return hasattr(self.estimator, "n_features_in_")

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_calls", None)  # (the road's functions are not picklable; made again)
        return state

    def _calls_of(self):
        """(learner, its road's ``learn_entries``, ``predict_entries``,
        ``predict_proba_entries``) once the learner is fitted and has an event road, else None;
        kept while the adapter's learner is that one (the per-event calls then take the road
        straight away)."""
        calls = self.__dict__.get("_calls")
        est = self.estimator
        if calls is not None and calls[0] is est:
            return calls
        if not (self._fitted() and self._events()):
            return None
        road = self._road()
        calls = self._calls = (est, road.learn_entries, road.predict_entries,
                               road.predict_proba_entries)  # fmt: skip
        return calls

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
        """True when the learner has a compiled one-event road (``_event_partial_fit``:
        :mod:`onlinelearn.shell.events` for the linear classifiers,
        :mod:`onlinelearn.second_order._events` for AROW, SCW, WeightedMinMax,
        :mod:`onlinelearn.kernel_methods._events` for the kernel online learners); its rows are
        then its own CSR rows of the dict's entries."""
        return getattr(self.estimator, "_event_partial_fit", None) is not None

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

    def learn_many(self, X, y, w=None):
        """``learn_one`` over the rows of a pandas DataFrame, in order: the same model and the
        same probabilities as the loop, in as few ``partial_fit`` calls as that allows.  A batch
        meets its labels at the start (a label new to the learner joins before the batch's
        first row learns), one row at a time does not, so the rows are cut before each row
        that brings a new label and each piece is one call (its new label joins just before
        its first row, as in the loop), when the learner's probability calibration does not
        depend on how the rows were batched (its pass scores every row: the Euclidean linear
        learners; or probabilities of its own loss); the other learners take every row
        alone."""
        y = np.asarray(y)
        est, rows = self.estimator, self._rows
        n_names = len(rows.index)
        try:
            M = rows.frame(X, True)
            sw = None if w is None else np.broadcast_to(
                np.asarray(w, dtype=np.float64).reshape(-1), y.shape).copy()  # fmt: skip
            cuts = self._cuts(y)
            for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                kw = {} if sw is None else {"sample_weight": sw[a:b]}
                est.partial_fit(M[a:b], y[a:b], **kw)
        except BaseException:
            rows.forget(n_names)
            raise

    def _cuts(self, y):
        """The bounds of the pieces of ``y`` that one ``partial_fit`` call each learns as the
        rows one at a time would (see :meth:`learn_many`): 0, every row bringing a new label,
        len(y); every row when the learner's calibration depends on the batching."""
        est = self.estimator
        batched = getattr(est, "_native_proba", lambda: False)() or getattr(
            est, "_pass_scores_rows", lambda: False)()  # fmt: skip
        if not batched:
            return list(range(len(y) + 1))
        known = {_plain(c) for c in est.classes_} if self._fitted() else set()
        cuts = [0]
        for i, lab in enumerate(y.tolist()):
            if lab not in known:
                known.add(lab)
                if i > 0:
                    cuts.append(i)
        return cuts + [len(y)] if len(y) else cuts

    def learn_one(self, x, y, w=None):
        """``partial_fit`` on the row ``x`` (a dict) with label ``y`` (weight ``w``)."""
        calls = self.__dict__.get("_calls")
        if w is None and calls is not None and calls[0] is self.estimator:
            # (_learn_row's event road, in fewer steps)
            rows = self._rows
            n_names = len(rows.index)
            try:
                data, idx = rows.entries(x, True)
                if not calls[1](calls[0], data, idx, y):
                    calls[0].partial_fit(rows.csr(data, idx), np.array([y]))
            except BaseException:
                rows.forget(n_names)
                raise
            return
        self._learn_row(x, y, w)
        self._calls_of()

    def predict_proba_one(self, x, **kwargs):
        """{label: probability} from the learner's ``predict_proba``; {} before learning."""
        calls = self._calls_of()
        if calls is not None:
            return calls[3](calls[0], *self._rows.entries(x, False))
        if not self._fitted():
            return {}
        P = self._one(self.estimator.predict_proba, x)
        return {_plain(c): float(p) for c, p in zip(self.estimator.classes_, P, strict=True)}

    def predict_one(self, x, **kwargs):
        """The learner's ``predict``; None before learning."""
        calls = self.__dict__.get("_calls")
        if calls is None or calls[0] is not self.estimator:
            calls = self._calls_of()
            if calls is None:
                if not self._fitted():
                    return None
                return _plain(self._one(self.estimator.predict, x))
        return calls[2](calls[0], *self._rows.entries(x, False))

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
