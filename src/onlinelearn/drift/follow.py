r"""A classifier that follows concept drift: any online classifier behind a drift detector on
its prequential 0/1 error.

Per event, :meth:`DriftFollowingClassifier.predict_one` is the current model's prediction.
:meth:`~DriftFollowingClassifier.learn_one` ``(x, y)``:

1. predicts ``x`` with the current model (before learning it) and feeds the detector the 0/1
   error :math:`[\hat y \ne y]` (nothing while the model cannot predict yet, as River does);
2. on an alarm (``drift_detected``; with ``rises_only``, one where the error rose), replaces
   the model as ``policy`` says:

   * ``'reset'``: a fresh clone of ``estimator`` (``sklearn.base.clone``: its parameters,
     nothing learned, its averaging restarted);
   * ``'background'`` (a detector with a warning zone: :class:`~onlinelearn.drift.DDM`,
     :class:`~onlinelearn.drift.EDDM`): from the first warning, a background clone learns every
     row; on the alarm it becomes the model if it made fewer prequential mistakes than the
     model on the rows since the warning, else the model continues; a warning that clears
     without an alarm drops the background; an alarm with no warning before it resets;

3. the (possibly new) model learns ``(x, y)``.

This is the drift-retraining scheme of Gama, Medas, Castillo and Rodrigues (2004, "Learning
with drift detection", SBIA 2004: learn a new model from the warning on, switch at the drift
level) as River's ``drift.DriftRetrainingClassifier`` implements it, with the comparison on the
rows since the warning, and the plain reset.  Labels grow as the wrapped model's do, and a
model started on a row (a reset, a background model) learns it with every label seen before
declared (``partial_fit(classes=)``): a reset forgets the concept, not the labels.

``partial_fit(X, y)`` (dense or CSR) is the event loop over the rows, in order: the same models
and detector, bit for bit, as ``learn_one`` on each row; ``predict(X)``, ``predict_proba(X)``,
``decision_function(X)`` are the current model's.  A row that is refused (NaN or infinite
values, a wrong width, a label the model refuses) raises ``ValueError`` and leaves the wrapper,
its models and its detector as they were; a batch is checked whole first, and any error in it
puts everything back.

Parameters
----------
estimator : online classifier
    The template (``learn_one`` / ``predict_one``, e.g. ``PassiveAggressiveClassifier``,
    ``Perceptron``, ``AROW``); it is cloned, never trained.
detector : drift detector or None, default None
    ``update(x)`` / ``drift_detected`` (and ``warning_detected`` for ``'background'``), e.g.
    :class:`~onlinelearn.drift.ADWIN`, :class:`~onlinelearn.drift.DDM`; a fresh one is made
    from its parameters.  None: ``ADWIN()`` for ``'reset'``, ``DDM()`` for ``'background'``.
policy : {'reset', 'background'}, default 'reset'
rises_only : bool, default True
    Follow only the alarms where the error rose: with a detector that reports the mean of its
    window after the cut (ADWIN's ``width`` and ``estimation``), an alarm whose recent window
    errs less than the values it dropped (a model still learning a stationary concept) is not
    followed.  Detectors that only watch rises (DDM, EDDM) are not affected.

Attributes
----------
model_ : the current model.
detector_ : the detector.
background_ : the background model while in a warning zone, else None.
n_drifts_ : int, alarms followed so far; ``drift_indices_``: their row indices (0-based, over
    all rows learned), int64.
n_replacements_ : int, alarms where the background won (``'background'``).
n_seen_ : int, rows learned.

Example::

    >>> import numpy as np
    >>> from onlinelearn import PassiveAggressiveClassifier
    >>> from onlinelearn.drift import DriftFollowingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 2))
    >>> y = np.r_[X[:2000, 0] > 0, X[2000:, 0] < 0]  # the concept flips at row 2000
    >>> model = DriftFollowingClassifier(PassiveAggressiveClassifier(average=False))
    >>> model.partial_fit(X, y).drift_indices_
    array([2016])
"""

from __future__ import annotations

import copy
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from .adwin import ADWIN
from .ddm import DDM
from .page_hinkley import PageHinkley

__all__ = ["DriftFollowingClassifier", "DriftFollowingRegressor"]

_POLICIES = ("reset", "background")


def _fresh_detector(det):
    """A new detector of ``det``'s class and parameters (its state is not copied)."""
    names = getattr(det, "_params", None)
    if names is None:
        if hasattr(det, "clone"):  # River's detectors
            return det.clone()
        return copy.deepcopy(det)
    return type(det)(**{k: getattr(det, k) for k in names})


def _save(det):
    """The detector's state: its attributes, arrays copied."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else copy.copy(v))
            for k, v in det.__dict__.items()}  # fmt: skip


def _check_row(x):
    """Refuse a row with a value that is not a finite number (before anything changes)."""
    if isinstance(x, dict):
        for k, v in x.items():
            if isinstance(v, numbers.Real) and not np.isfinite(v):
                raise ValueError(f"feature {k!r} of the row is {v!r}: values must be finite")
        return
    vals = x.data if sp.issparse(x) else x
    try:
        arr = np.asarray(vals, dtype=np.float64)
    except (TypeError, ValueError):
        return  # the model's own check says what is wrong
    if not np.isfinite(arr).all():
        raise ValueError("the row contains NaN or infinite values: values must be finite")


class _Following(BaseEstimator):
    """The event loop of both wrappers; a subclass gives the error (``_error``) and the
    default detector (``_default_detector``)."""

    def __init__(self, estimator=None, detector=None, policy="reset", rises_only=True):
        self.estimator = estimator
        self.detector = detector
        self.policy = policy
        self.rises_only = rises_only

    # ------------------------------------------------------------------ state
    def _start(self):
        if self.policy not in _POLICIES:
            raise ValueError(f"policy must be one of {_POLICIES}, got {self.policy!r}")
        if self.estimator is None or not hasattr(self.estimator, "learn_one"):
            raise ValueError("estimator must be an online estimator with learn_one/predict_one"
                             f", got {self.estimator!r}")  # fmt: skip
        det = self.detector
        det = _fresh_detector(self._default_detector() if det is None else det)
        if self.policy == "background" and not hasattr(det, "warning_detected"):
            raise ValueError(f"policy='background' needs a detector with a warning zone (DDM, "
                             f"EDDM); {type(det).__name__} has none")  # fmt: skip
        self.model_ = clone(self.estimator)
        self.detector_ = det
        self.background_ = None
        self._fg_errors = self._bg_errors = 0
        self._fed = [0, 0]  # values fed to the detector since its last alarm, and their sum
        self._drifts = []
        self.n_replacements_ = 0
        self.n_seen_ = 0

    def _started(self):
        return "model_" in self.__dict__

    @property
    def n_drifts_(self) -> int:
        check_is_fitted(self, "model_")
        return len(self._drifts)

    @property
    def drift_indices_(self) -> np.ndarray:
        check_is_fitted(self, "model_")
        return np.array(self._drifts, dtype=np.int64)

    @property
    def n_features_in_(self):
        return self.model_.n_features_in_

    # ------------------------------------------------------------------ one event
    def learn_one(self, x, y):
        """Feed the detector the current model's error on ``(x, y)``, follow an alarm
        (``policy``), then learn the row.  Returns None (River's convention)."""
        if not self._started():
            self._start()
        _check_row(x)
        self._learn_row(x, y)

    def _learn_row(self, x, y):
        fg, bg, det = self.model_, self.background_, self.detector_
        y_pred = fg.predict_one(x)  # refuses a bad row before anything changes
        saved = _save(det)
        state = (self._fg_errors, self._bg_errors, list(self._fed))
        try:
            drift = warn = False
            fresh = None  # a model started on this row: it learns the labels seen so far
            if y_pred is not None:
                err = self._error(y_pred, y)
                det.update(err)
                drift = bool(det.drift_detected)
                self._fed[0] += 1
                self._fed[1] += err
                if drift:
                    drift = self._rose(det)
                    self._fed = [0, 0]
                warn = self.policy == "background" and bool(det.warning_detected)
            new_fg, new_bg, won = fg, bg, False
            if drift:
                new_bg = None
                if self.policy == "background" and bg is not None:
                    b_pred = bg.predict_one(x)
                    won = self._bg_errors + self._error(b_pred, y) < self._fg_errors + err
                    new_fg = bg if won else fg
                else:
                    new_fg = fresh = clone(self.estimator)
            elif warn:
                if new_bg is None:
                    new_bg = fresh = clone(self.estimator)
                    self._fg_errors = self._bg_errors = 0
                b_pred = new_bg.predict_one(x)
                self._bg_errors += self._error(b_pred, y)
                self._fg_errors += err
            else:
                new_bg = None
            bg_snap = None
            if new_bg is not None:
                bg_snap = copy.deepcopy(new_bg) if new_bg is bg else None
                self._learn_by(new_bg, x, y, fg if new_bg is fresh else None)
            try:
                self._learn_by(new_fg, x, y, fg if new_fg is fresh else None)
            except BaseException:
                if bg_snap is not None:
                    self.background_ = bg_snap
                raise
        except BaseException:
            det.__dict__.update(saved)
            self._fg_errors, self._bg_errors, self._fed = state
            raise
        if drift:
            self._drifts.append(self.n_seen_)
            self.n_replacements_ += won
        self.model_, self.background_ = new_fg, new_bg
        self.n_seen_ += 1

    @staticmethod
    def _learn_by(model, x, y, known):
        """``model`` learns ``(x, y)``; ``known``: the model whose place a fresh ``model``
        takes (None: ``model`` is not fresh)."""
        model.learn_one(x, y)

    def _rose(self, det):
        """False when the alarm is on a fall of the error and ``rises_only``: the detector's
        window after the cut (``width`` values of mean ``estimation``, ADWIN's) against the
        values it dropped."""
        if not self.rises_only:
            return True
        width, mean = getattr(det, "width", None), getattr(det, "estimation", None)
        n, total = self._fed
        if width is None or mean is None or n <= width:
            return True
        return mean > (total - mean * width) / (n - width)

    def predict_one(self, x):
        """The current model's prediction of ``x`` (None before it learned anything)."""
        if not self._started():
            return None
        return self.model_.predict_one(x)

    # ------------------------------------------------------------------ batches
    def partial_fit(self, X, y, classes=None):
        """``learn_one`` on every row of ``X`` (dense or CSR) in order.  The batch is checked
        first; an error leaves everything as before the call."""
        if classes is not None:
            raise ValueError(f"{type(self).__name__} grows its labels as the model does: "
                             "classes is not taken")  # fmt: skip
        X, y = _check_batch(X, y)
        before = copy.deepcopy(self.__dict__)
        try:
            if not self._started():
                self._start()
            if sp.issparse(X):
                for i in range(X.shape[0]):
                    self._learn_row(X[i : i + 1], y[i])
            else:
                for i in range(X.shape[0]):
                    self._learn_row(X[i], y[i])
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        return self

    def fit(self, X, y):
        """Start afresh, then :meth:`partial_fit` (one pass, in order)."""
        X, y = _check_batch(X, y)
        before = dict(self.__dict__)
        for k in [k for k in self.__dict__ if k.endswith("_") or k.startswith("_")]:
            del self.__dict__[k]
        try:
            return self.partial_fit(X, y)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def predict(self, X):
        """The current model's predictions."""
        check_is_fitted(self, "model_")
        return self.model_.predict(X)



class DriftFollowingClassifier(ClassifierMixin, _Following):
    __doc__ = __doc__

    def _default_detector(self):
        return ADWIN() if self.policy == "reset" else DDM()

    @staticmethod
    def _error(y_pred, y):
        """The 0/1 error; a model that cannot predict yet errs."""
        return 1 if y_pred is None or y_pred != y else 0

    @property
    def classes_(self):
        return self.model_.classes_

    @staticmethod
    def _learn_by(model, x, y, known):
        """A fresh model learns its first row with the labels ``known`` has seen declared
        (``partial_fit(classes=)``), so that a reset forgets the concept, not the labels;
        otherwise ``learn_one``."""
        seen = getattr(known, "classes_", None)
        if seen is None or isinstance(x, dict):
            model.learn_one(x, y)
            return
        X = x if sp.issparse(x) else np.asarray(x).reshape(1, -1)
        labels = list(seen) + ([] if y in set(seen.tolist()) else [y])
        model.partial_fit(X, np.asarray([y]), classes=np.asarray(labels))

    def predict_proba_one(self, x):
        """The current model's {label: probability} for ``x`` ({} before it learned)."""
        if not self._started():
            return {}
        return self.model_.predict_proba_one(x)

    def predict_proba(self, X):
        """The current model's probabilities."""
        check_is_fitted(self, "model_")
        return self.model_.predict_proba(X)

    def decision_function(self, X):
        """The current model's decision values."""
        check_is_fitted(self, "model_")
        return self.model_.decision_function(X)


class DriftFollowingRegressor(RegressorMixin, _Following):
    r"""Any online regressor behind a drift detector on its prequential absolute error.

    The event loop of :class:`DriftFollowingClassifier` (same parameters, attributes and
    policies) with the absolute error :math:`|y - \hat y|` in place of the 0/1 error and, by
    default, :class:`~onlinelearn.drift.PageHinkley` with ``mode='up'`` (Page's test on a rise
    of the mean error; its ``delta`` and ``threshold`` are in the target's units: set them
    for the target's scale).  ``policy='background'`` needs a detector with a warning zone
    that takes real values; the background model wins when its absolute errors since the
    warning sum to less than the model's.  Before learning, ``predict_one`` is 0.0.

    Parameters
    ----------
    estimator : online regressor (``learn_one`` / ``predict_one``), e.g.
        ``PassiveAggressiveRegressor``.
    detector : drift detector or None, default None (``PageHinkley(mode='up')``)
    policy : {'reset', 'background'}, default 'reset'
    rises_only : bool, default True

    Example::

        >>> import numpy as np
        >>> from onlinelearn import PassiveAggressiveRegressor
        >>> from onlinelearn.drift import DriftFollowingRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(4000, 2))
        >>> y = np.r_[X[:2000, 0], -X[2000:, 0]]  # the target flips at row 2000
        >>> model = DriftFollowingRegressor(PassiveAggressiveRegressor(average=True))
        >>> model.partial_fit(X, y).drift_indices_
        array([2037])
    """

    def _default_detector(self):
        return PageHinkley(mode="up")

    @staticmethod
    def _error(y_pred, y):
        """The absolute error (a model that cannot predict yet predicts 0)."""
        return abs(float(y) - (0.0 if y_pred is None else float(y_pred)))

    def predict_one(self, x):
        """The current model's prediction of ``x`` (0.0 before it learned anything)."""
        if not self._started():
            return 0.0
        return self.model_.predict_one(x)


def _check_batch(X, y):
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if not np.isfinite(X.data).all():
            raise ValueError("X contains NaN or infinite values: values must be finite")
    else:
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
        if X.dtype.kind in "fc" and not np.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values: values must be finite")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}), "
                         f"got shape {y.shape}")  # fmt: skip
    if X.shape[0] == 0:
        raise ValueError("X has no rows: there is nothing to learn")
    y = [v.item() if isinstance(v, np.generic) else v for v in y]
    return X, y
