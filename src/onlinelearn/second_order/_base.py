"""The second-order estimator layer: a learner-state object beside a thin estimator.

:class:`SecondOrderState` owns the arrays of a second-order learner (weights with one column per
class, a covariance or inverse-correlation matrix, counters) and the three things every
learner does with them: copy for a transaction, add class columns when a new label arrives, and
describe itself for model files.  :class:`SecondOrderClassifier` owns the scikit-learn plumbing
(validation before any change, label sets, ``fit`` / ``partial_fit`` / ``partial_fit_predict`` /
``predict`` / ``decision_function``, model files); a learner supplies its arrays and its pass.
"""

from __future__ import annotations

import copy

import numpy as np
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core import second_order as SO
from ..shell import validation as V
from ..shell.meta import (
    ScoresClassifier,
    check_shape,
    counter,
    decision_values,
    estimator_from_meta,
    state_meta,
    with_methods,
)
from ..shell.online import Call, OnlineMixin, ProgressiveMixin, refuse_sample_weight
from ..shell.params import POSITIVE, SHARED, Param, constraints_of
from ..shell.readout import WeightsReadoutMixin
from ..shell.snapshot import restore_attrs, save_attrs
from ..shell.state_columns import spread_columns
from . import _events

#: the declarations of the second-order learners' parameters (:mod:`onlinelearn.shell.params`):
#: one pass in the given order by default, the matrix kept full or diagonal, its initial scale
SECOND_ORDER = {
    **SHARED,
    "n_epochs": SHARED["n_epochs"](1),
    "shuffle": SHARED["shuffle"](False),
    "covariance": Param("full", StrOptions({"full", "diagonal"})),
    "a": Param(1.0, POSITIVE),
}


class SecondOrderState:
    """Arrays and counters of one second-order learner.

    ``arrays``: name -> ndarray; those named in ``columns`` have one column per class (or one
    column for a binary learner that keeps a single weight vector), the others (covariance,
    A, A^{-1}) do not depend on the labels.  ``st``: the counters of :mod:`_core.second_order`.
    """

    __slots__ = ("arrays", "columns", "st")

    def __init__(self, arrays, columns, st=None):
        self.arrays = dict(arrays)
        self.columns = tuple(columns)
        self.st = np.zeros(SO.N_ST) if st is None else st

    def copy(self):
        return SecondOrderState(
            {k: v.copy() for k, v in self.arrays.items()}, self.columns, self.st.copy()
        )

    def n_cols(self):
        return self.arrays[self.columns[0]].shape[1]

    def grow(self, pos, n_new, binary_to_multi=False):
        """Put the existing columns at positions ``pos`` of ``n_new`` columns (zeros elsewhere).

        ``binary_to_multi``: the single column w (class 1 against class 0) becomes the columns
        (-w/2, w/2) at pos[0], pos[1]: the same decisions and margins f_1 - f_0 = <w, x>."""
        for name in self.columns:
            self.arrays[name] = spread_columns(self.arrays[name], pos, n_new, binary_to_multi)


@with_methods(ProgressiveMixin, WeightsReadoutMixin)
class SecondOrderClassifier(ScoresClassifier):
    """Base class of the second-order learners. Not for direct use.

    Subclasses implement ``_new_state(n_rows, n_cols)``, ``_pass(batch, y_codes, pred)`` (one
    compiled call over the batch) and ``_weights()`` (the (R, n_cols) matrix of scores), and set
    ``_binary_single_column`` (one weight vector for two classes)."""

    _binary_single_column = False

    _parameter_constraints: dict = constraints_of({
        n: SECOND_ORDER[n]
        for n in ("covariance", "fit_intercept", "n_epochs", "shuffle", "random_state")
    })  # fmt: skip

    # ------------------------------------------------------------------ one event at a time
    #: the event road (second_order._events): ``partial_fit`` on one row of a known label
    #: (shell.online), the River adapter's rows (onlinelearn.river), River's methods
    _event_road = _events
    _event_partial_fit = _events.partial_fit_row
    learn_one = _events.learn_one
    predict_one = _events.predict_one
    predict_proba_one = _events.predict_proba_one

    def __setattr__(self, name, value):
        if name in _events.param_names(type(self)):
            self.__dict__.pop("_event", None)  # built again with the new value
        super().__setattr__(name, value)

    # ------------------------------------------------------------------ hooks
    def _check_params(self):
        """Rules spanning parameters (after the declarative constraints)."""

    def _before_pass(self, batch, first):
        """Checks that need the data (e.g. b against ||x||^2); must not change the model
        except attributes listed in ``_extra_state`` (restored on failure)."""

    _extra_state: tuple = ()

    # ------------------------------------------------------------------ helpers
    @property
    def _bias(self):
        return 1.0 if self.fit_intercept else 0.0

    def _n_cols_for(self, K):
        return 1 if (self._binary_single_column and K <= 2) else K

    def _row_buffers(self, batch):
        """(jj, xx): room for the longest row of the batch plus the bias feature."""
        if batch.indices.shape[0] == batch.data.shape[0]:
            n = int(np.diff(batch.indptr).max(initial=0))
        else:
            n = batch.n_cols
        return np.empty(n + 1, dtype=np.int64), np.empty(n + 1)

    def _grow(self, new_classes):
        old = self.classes_
        if len(new_classes) == len(old):
            return
        pos = np.searchsorted(new_classes, old)
        n_old = self._state.n_cols()
        n_new = self._n_cols_for(len(new_classes))
        if n_new != n_old or n_new > 1:
            to_multi = n_old == 1 and n_new > 1 and self._binary_single_column
            if to_multi and len(old) == 2:
                self._state.grow(pos, n_new, binary_to_multi=True)
            elif to_multi:
                # one class seen so far: its single column is still zero
                self._state.grow(pos[:0], n_new)
            else:
                self._state.grow(pos, n_new)
        self.classes_ = new_classes

    # ------------------------------------------------------------------ training
    def _snapshot(self):
        """What a call may change: the small state (copied), ``_state`` by reference (a call
        copies it before its pass changes it)."""
        snap = save_attrs(self, self._snapshot_names(), copy.deepcopy)
        snap.update(save_attrs(self, ("_state",)))
        return snap

    def _snapshot_names(self):
        return ("classes_", "n_features_in_", "feature_names_in_", *self._extra_state)

    def _restore(self, snap):
        restore_attrs(self, (*self._snapshot_names(), "_state"), snap)

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap):
        """The family's set-up of a call (:mod:`onlinelearn.shell.online`); the progressive
        predictions are the labels predicted before each row's update (no per-example weights
        here)."""
        refuse_sample_weight(self, sample_weight)
        snap_state = snap.get("_state")
        self._validate_params()
        self._check_params()
        X, y = V.check_X_y(self, X, y, reset=first)
        new_classes = V.grown_labels(None if first else self.classes_, y, classes)
        batch = V.CSRBatch(X)
        if not first:
            R = self.n_features_in_ + (1 if self.fit_intercept else 0)
            rows = next(iter(snap_state.arrays.values())).shape[0]
            if rows != R:
                raise ValueError(
                    f"fit_intercept changed since the model was fitted (the state has {rows} "
                    f"rows, {R} expected); call fit to start afresh"
                )
        self._before_pass(batch, first)
        if first:
            R = batch.n_cols + (1 if self.fit_intercept else 0)
            self._state = self._new_state(R, self._n_cols_for(len(new_classes)))
            self.classes_ = new_classes
        else:
            self._state = snap_state.copy()
            self._grow(new_classes)
        y_codes = np.searchsorted(self.classes_, y).astype(np.int64)
        return Call(n=batch.n_rows, batch=batch, y_codes=y_codes,
                    pred=np.zeros(batch.n_rows, dtype=np.int64))  # fmt: skip

    def _epoch(self, call, order):
        """One pass (:meth:`_run`) over ``order`` (None: the rows in their order)."""
        batch, pred = call.batch, call.pred
        if order is not None:
            sub = V.CSRBatch(_rows_of(batch, order))
            p = np.zeros(batch.n_rows, dtype=np.int64)
            self._run(sub, call.y_codes[order], p)
            pred[order] = p
        else:
            self._run(batch, call.y_codes, pred)

    def _finish(self, call):
        self._check_finite()
        return self.classes_[call.pred]

    def _run(self, batch, y_codes, pred):
        if len(self.classes_) < 2:
            # one class: nothing to learn, every prediction is that class
            st = self._state.st
            st[SO.N_SEEN] += batch.n_rows
            st[SO.N_QUERIES] += batch.n_rows
            pred[:] = 0
            return
        self._pass(batch, y_codes, pred)

    def _check_finite(self):
        for name, arr in self._state.arrays.items():
            if not np.isfinite(arr).all():
                raise FloatingPointError(
                    f"{type(self).__name__}: the state {name!r} became infinite or NaN; the "
                    "model was left as it was before this call. Scale the features (e.g. to "
                    "unit norm) or use covariance='diagonal'."
                )

    def fit(self, X, y):
        """Learn from scratch: ``n_epochs`` online passes over (X, y) (shuffled under
        ``random_state`` when ``shuffle``).  The shell's ``fit`` without ``sample_weight``,
        which this family does not take (scikit-learn's checks read the signature)."""
        return OnlineMixin.fit(self, X, y)

    #: (its ``fit`` is the shell's, which calibrates inside its call: no wrapping)
    _calls_calibrate = True

    # ------------------------------------------------------------------ read-out
    def decision_function(self, X):
        """Scores <w_k, x> + b_k, shape (n, n_classes); for two classes one score, shape (n,):
        positive means ``classes_[1]`` (f_1 - f_0 when each class has its column)."""
        return decision_values(self._scores(X), len(self.classes_))

    def _weights_matrix(self):
        check_is_fitted(self, "classes_")
        return self._weights()

    def _intercept_value(self):
        return self._bias

    def _stats(self):
        check_is_fitted(self, "classes_")
        return self._state.st

    t_ = counter(SO.N_SEEN, "Rounds processed (all epochs and calls).")
    n_updates_ = counter(SO.N_UPDATES, "Rounds on which the state changed.")
    n_mistakes_ = counter(
        SO.N_MISTAKES,
        "Online mistakes: rounds whose prediction, made before the update, was wrong (counted "
        "on every round, asked or not).",
    )

    # ------------------------------------------------------------------ merging
    def _flush_frame(self):
        """Called by :func:`onlinelearn.merge_models`, which averages weight vectors: refuse."""
        raise ValueError(
            f"merge_models does not apply to {type(self).__name__}: averaging the weights of "
            "second-order learners trained on shards discards their matrices (A^{-1} or "
            "Sigma), and summing those is not a run of the algorithm; train one model on the "
            "concatenated stream instead"
        )

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        """(meta, arrays) describing the fitted model completely (docs/CONTRACT.md)."""
        check_is_fitted(self, "classes_")
        meta = state_meta(self, columns=list(self._state.columns), **self._extra_meta())
        arrays = {"classes_": np.asarray(self.classes_), "st": self._state.st}
        arrays.update({f"state_{k}": v for k, v in self._state.arrays.items()})
        return meta, arrays

    def _extra_meta(self):
        return {}

    def _set_extra_meta(self, meta):
        """Restore what :meth:`_extra_meta` saved."""

    @classmethod
    def _from_state(cls, meta, arrays):
        """Rebuild a fitted estimator from :meth:`_get_state` output."""
        est = estimator_from_meta(cls, meta, arrays)
        st = np.ascontiguousarray(arrays["st"], dtype=np.float64)
        check_shape("st", st, (SO.N_ST,))
        state_arrays = {
            k[len("state_") :]: np.ascontiguousarray(v, dtype=np.float64)
            for k, v in arrays.items()
            if k.startswith("state_")
        }
        est._set_extra_meta(meta)
        R = est.n_features_in_ + (1 if est.fit_intercept else 0)
        ref = est._new_state(R, est._n_cols_for(len(est.classes_)))
        bad = set(state_arrays) != set(ref.arrays)
        bad = bad or any(state_arrays[k].shape != v.shape for k, v in ref.arrays.items())
        if bad:
            raise ValueError(
                f"model state of {cls.__name__} is inconsistent with {len(est.classes_)} "
                f"classes and {est.n_features_in_} features"
            )
        est._state = SecondOrderState(state_arrays, ref.columns, st)
        return est


def _rows_of(batch, order):
    """The CSR matrix of the batch's rows in ``order`` (for shuffled epochs of ``fit``)."""
    import scipy.sparse as sp

    if batch.indices.shape[0] != batch.data.shape[0]:
        return batch.data.reshape(batch.n_rows, batch.n_cols)[order]
    m = sp.csr_matrix((batch.data, batch.indices, batch.indptr), shape=(batch.n_rows, batch.n_cols))
    return m[order]


def max_row_sqnorm(batch, bias):
    """max_i ||x_i||^2 over the batch, the bias feature included."""
    sq = np.asarray(batch.data, dtype=np.float64) ** 2
    if batch.indices.shape[0] != batch.data.shape[0]:
        norms = sq.reshape(batch.n_rows, batch.n_cols).sum(axis=1)
    else:
        rows = np.repeat(np.arange(batch.n_rows), np.diff(batch.indptr))
        norms = np.bincount(rows, weights=sq, minlength=batch.n_rows)
    top = float(norms.max()) if norms.size else 0.0
    return top + bias * bias
