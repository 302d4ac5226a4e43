"""``fit``, ``partial_fit`` and ``partial_fit_predict`` of every online estimator, and the one
transaction behind them (:meth:`OnlineMixin._learn`), written once.

A call is::

    snapshot -> begin (validate at the boundary, grow the label set, set up the state)
             -> the passes (fit: n_epochs of them, shuffled under random_state when shuffle,
                until the family says stop; partial_fit: one, in the given order)
             -> finish (outputs checked, counts, the predictions read out)
    (any error: the snapshot is restored, so a failed call changes nothing)
             -> after (what follows a successful call: warnings, n_iter_)

A family supplies the hooks, not a transaction of its own:

* ``_snapshot()`` / ``_restore(snap)``: what a call may change, and putting it back;
* ``_started()``: True when the model has a state to continue (default: it has ``classes_``);
* ``_begin(X, y, classes, sample_weight, *, first, fit_mode, snap, **options) -> call``:
  validation and state set-up; ``call`` is a :class:`~types.SimpleNamespace` holding at least
  ``n``, the rounds of one pass (the permutations of ``fit`` are of ``range(n)``);
* ``_epoch(call, order) -> stop``: one pass, ``order`` an int64 permutation or None (the rows in
  their order); a true value stops ``fit`` before ``n_epochs``;
* ``_finish(call) -> predictions`` and ``_after(call, fit_mode)`` (default: nothing).

The predictions are, for each row, what the learner predicted before it learned from that row
(progressive validation), or None where the family has no such prediction.  A classifier's
probability calibration (:mod:`.proba`) runs around the call: scores before it, the
calibration updated only after it succeeded.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if

from .proba import calibrating
from .snapshot import restoring

__all__ = [
    "Call", "OnlineMixin", "ProgressiveMixin", "refuse_classes", "refuse_sample_weight",
]  # fmt: skip

#: what a family's ``_begin`` returns: a namespace with at least ``n`` (module docstring)
Call = SimpleNamespace


class OnlineMixin:
    """``fit`` and ``partial_fit`` on top of the one transaction :meth:`_learn` (module
    docstring); a family's base takes these methods as its own
    (:func:`~onlinelearn.shell.meta.with_methods`)."""

    #: its fit/partial_fit run the calibration (shell.proba) themselves: no wrapping
    _calls_calibrate = True

    def _started(self):
        """True when there is a model to continue (a ``partial_fit`` after a first call)."""
        return "classes_" in self.__dict__

    def _after(self, call, fit_mode):
        """What follows a successful call (a hook; nothing by default)."""

    def _learn(self, X, y, classes=None, sample_weight=None, *, fit_mode, **options):
        """The transaction of every call (module docstring): the family's ``_begin``, its
        passes and its ``_finish`` inside a snapshot restored on any error; returns the
        progressive predictions.  ``fit_mode``: learn from scratch for ``n_epochs`` passes
        (``fit``), else one pass over the batch in its order (``partial_fit``); ``options``
        go to ``_begin`` (e.g. ``predict_with``)."""
        first = fit_mode or not self._started()
        snap = self._snapshot()
        with restoring(self, snap):
            call = self._begin(X, y, classes, sample_weight, first=first, fit_mode=fit_mode,
                               snap=snap, **options)  # fmt: skip
            call.epochs = 1
            if fit_mode:
                rng = check_random_state(self.random_state)
                for epoch in range(1, self.n_epochs + 1):
                    call.epochs = epoch
                    order = rng.permutation(call.n).astype(np.int64) if self.shuffle else None
                    if self._epoch(call, order):
                        break
            else:
                self._epoch(call, None)
            out = self._finish(call)
        self._after(call, fit_mode)
        return out

    def fit(self, X, y, sample_weight=None, classes=None):
        """Learn from scratch: ``n_epochs`` online passes over (X, y), shuffled under
        ``random_state`` when ``shuffle`` (same seed, same model, bit for bit).  ``classes``
        (classifiers) fixes or announces the labels in advance."""
        with calibrating(self, "fit", X, y, sample_weight, classes):
            self._learn(X, y, classes, sample_weight, fit_mode=True)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One online pass over the batch, in the order given (one compiled call).

        Classifiers: labels never seen before join ``classes_`` where the family grows its
        label set (else the first call fixes it); ``classes`` may announce labels in advance
        but is never required.  A family with a one-event road (``_event_partial_fit``: the
        linear classifiers, :mod:`onlinelearn.shell.events`) takes one row of a known label
        there: the same model, one compiled call."""
        if classes is None and sample_weight is None:
            road = getattr(self, "_event_partial_fit", None)
            if road is not None and road(X, y):
                return self
        with calibrating(self, "partial", X, y, sample_weight, classes):
            self._learn(X, y, classes, sample_weight, fit_mode=False)
        return self


    # -- one event at a time (River's names); a family with a compiled one-event road
    # (the linear classifiers: onlinelearn.shell.events) defines its own
    def learn_one(self, x, y):
        """Learn one row ``x`` with target ``y``: ``partial_fit`` of that row.  ``x``: a dict
        {column index: value} (or {feature name: value} on a model fitted with names), a 1-D
        array of the model's width, or a one-row sparse matrix."""
        from .events import one_row_matrix

        self.partial_fit(one_row_matrix(self, x), np.array([y]))

    def predict_one(self, x):
        """``predict`` of one row ``x`` (as :meth:`learn_one` takes it); before any learning,
        None for a classifier and 0.0 for a regressor (River's conventions)."""
        from .events import one_row_matrix

        if not _fitted(self):
            return None if _is_classifier(self) else 0.0
        out = self.predict(one_row_matrix(self, x))[0]
        return out.item() if isinstance(out, np.generic) else out

    @available_if(lambda est: hasattr(est, "predict_proba"))
    def predict_proba_one(self, x):
        """{label: probability} from ``predict_proba`` of one row ``x``; {} before learning."""
        from .events import one_row_matrix

        if not _fitted(self):
            return {}
        P = self.predict_proba(one_row_matrix(self, x))[0]
        return {(c.item() if isinstance(c, np.generic) else c): float(p)
                for c, p in zip(self.classes_, P, strict=True)}  # fmt: skip


def _fitted(est):
    return "n_features_in_" in est.__dict__


def _is_classifier(est):
    from sklearn.base import is_classifier

    return is_classifier(est)


class ProgressiveMixin(OnlineMixin):
    """:class:`OnlineMixin` and ``partial_fit_predict`` (progressive validation)."""

    def partial_fit_predict(self, X, y, classes=None, sample_weight=None, **options):
        """Progressive validation (test-then-train): return, for each row, what the learner
        predicted *before* it saw that row's target, and learn from the rows (as
        :meth:`partial_fit`, in one compiled call).

        The prediction is the learner's own, the current iterate's, also when it averages
        (its mistakes are ``n_mistakes_``, the ones the mistake bounds are about); the linear
        and kernel learners take ``predict_with='average'`` (with ``average=True``) to predict
        each row with the averaged hypothesis in force before it, i.e. what ``predict`` would
        return row by row; learning is the same either way."""
        with calibrating(self, "partial", X, y, sample_weight, classes):
            return self._learn(X, y, classes, sample_weight, fit_mode=False, **options)


def refuse_classes(est, classes) -> None:
    """A regressor has no label set: refuse ``classes`` with a clear message."""
    if classes is not None:
        raise ValueError(
            f"{type(est).__name__} is a regressor: it has no classes (got classes={classes!r})"
        )


def refuse_sample_weight(est, sample_weight) -> None:
    """Refuse ``sample_weight`` in a family that has no per-example weights."""
    if sample_weight is not None:
        raise ValueError(
            f"{type(est).__name__} does not take sample_weight: its update has no per-example "
            "price (repeat or subsample the rows instead)"
        )


def check_predict_with(est, predict_with, offered=True) -> bool:
    """Validate ``predict_with`` of ``partial_fit_predict``; True for ``'average'``."""
    if predict_with not in ("current", "average"):
        raise ValueError(f"predict_with must be 'current' or 'average', got {predict_with!r}")
    if predict_with == "current":
        return False
    if not est.average:
        raise ValueError(
            "predict_with='average' needs average=True (there is no average to predict with)"
        )
    if not offered:
        raise ValueError(
            f"predict_with='average' is offered by the Euclidean learners (Perceptron, "
            f"PassiveAggressiveClassifier, COPA), not by {type(est).__name__}"
        )
    return True
