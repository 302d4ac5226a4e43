"""``fit``, ``partial_fit`` and ``partial_fit_predict`` of every online estimator, written once.

A family (linear, second-order, kernel online, regression, label ranking, dual ascent, Pegasos)
supplies one method::

    _learn(X, y, classes, sample_weight, *, fit_mode, **options) -> predictions

which validates the call, runs its compiled pass(es) inside the transaction (a rejected call
leaves the model as it was) and returns, for each row, what the learner predicted before it
learned from that row (progressive validation), or None where the family has no such
prediction.  ``fit_mode``: learn from scratch for ``n_epochs`` passes (``fit``), else one pass
over the batch in its order (``partial_fit``).  Everything a caller sees of the three methods is
here.  A classifier's probability calibration (:mod:`.proba`) runs around the family's call:
scores before it, the calibration updated only after it succeeded.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.metaestimators import available_if

from .proba import calibrating

__all__ = ["OnlineMixin", "ProgressiveMixin", "refuse_classes", "refuse_sample_weight"]


class OnlineMixin:
    """``fit`` and ``partial_fit`` on top of the family's ``_learn`` (module docstring)."""

    #: its fit/partial_fit run the calibration (shell.proba) themselves: no wrapping
    _calls_calibrate = True

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
