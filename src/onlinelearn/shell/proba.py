"""``predict_proba`` and ``predict_log_proba`` of every classifier, written once.

Two cases.

* **Native** (a learner whose ``loss`` is the logistic loss, e.g.
  ``OnlineLearner(loss=Logistic())``): the loss l(z) = log(1 + e^{-z}) is the negative
  log-likelihood of p(y | x) = sigma(z), so the probabilities are the ones it defines:
  p(classes_[1] | x) = sigma(s) for one score s, softmax(s_1..s_K) for K scores (for K = 2 the
  same numbers; for K > 2 the multinomial model whose max-rival form the loss bounds).

* **Calibrated** (every margin learner: hinge, squared hinge, COPA, kernel, second-order, SVM,
  boosting; the maps and their window: :mod:`.calibration`).  Margins are not probabilities;
  a calibration map is learned *online* from
  **progressive-validation scores**: the decision values of training rows computed by the model
  *before* it learned from them (held-out scores, the only honest ones for an online learner:
  after its update a passive-aggressive learner has margin >= 1 on the row it just saw).

  - ``partial_fit`` / ``partial_fit_predict``, a stream: a family whose pass scores rows
    (``_held_out_in_pass``: the Euclidean linear learners, :class:`HeldOut`) scores every row
    inside the pass by the model just before it learns the row (the last ``STREAM_ROWS`` of a
    call, the first call included: older rows cannot be in any window the call decides), and
    :meth:`Calibration.add_stream` adds them and decides the fits at the same rows as one
    row at a time would: the window and the map do not depend on how the stream was cut into
    calls (``learn_one`` row by row, ``learn_many``, ``partial_fit`` of any size).  The
    other families score the batch's last ``PER_CALL`` = 256 rows with the model before the
    call (one ``decision_function`` call): one row at a time, exactly the progressive score of
    each row; for a larger batch, the score of the model as it was before the batch (still
    held out).  To keep their cost small, once the window holds ``REFIT`` rows only the calls
    that cross a multiple of a stride of rows are scored: about one row in 8 of a stream of
    rows or small batches (one batch in 8), fewer for a wide model; batches of 256 rows or
    more always (``THIN``);
  - ``fit`` (and the other families' first ``partial_fit``: no model yet to score with): a copy
    of the learner learns from all but a held-out part of the rows (``fit``: a stratified
    random fifth, at most ``WINDOW`` rows, fixed seed; a first ``partial_fit``: the last fifth
    of the batch, in order) and scores the held-out part; the learner itself learns from every
    row as before.  A one-epoch ``fit`` of a family whose pass scores rows makes no copy: its
    one pass scores each row of the held-out part just before it learns it.

  The last ``WINDOW`` scored rows are kept (a window, because the scale of the scores drifts as
  the weights grow); the map is refitted on them, to convergence, whenever ``REFIT`` new rows
  arrived (1, 2, 4, ... at the start), and after every ``fit``; the fit runs when the map is
  first read (:class:`Calibration`).

  The maps, and why.  They must keep ``argmax predict_proba == predict`` (ties included),
  so a map is a strictly increasing function applied to every score alike, with no offset:

  - two classes, one score s: a **two-slope Platt scaling without intercept**,
    p(classes_[1] | s) = sigma(a_+ max(s, 0) + a_- min(s, 0)), a_+, a_- > 0.  Platt's sigmoid
    (Platt 1999) is the classic calibration of margins; its intercept would move the point
    p = 1/2 away from s = 0 (where ``predict`` changes its mind); two slopes keep that point and
    still let the side of each class be as confident as its rows were (with unequal classes
    the majority side's slope is the steeper).  The objective is separable: each slope solves a
    1-D problem over the rows on its side;
  - K > 2 scores: **temperature scaling** (Guo et al. 2017), p(k | s) = softmax(a s)_k,
    a > 0: one parameter, the argmax kept, the standard calibration of multiclass scores;
    a per-class offset or slope (a full multinomial-logistic map, or scikit-learn's one-vs-rest
    sigmoids) would change the argmax.

  Each map minimises the log loss over the window with **Platt's targets** in place of 0/1
  (the true class gets (N_y + 1) / (N_y + 2), the others share 1 / (N_y + 2), N_y the weight
  of class y in the window), which keeps a finite when the window is separated::

      binary:      min_{a >= a_min}  sum_{i on the side} w_i [log(1 + e^{a u_i}) - t_i a u_i]
      multiclass:  min_{a >= a_min}  sum_i w_i [logsumexp(a s_i) - a <t_i, s_i>]

  both convex in a (second derivatives sum_i w_i u_i^2 sigma'(a u_i) and
  sum_i w_i Var_{softmax(a s_i)}(s_i)), solved by Newton's method kept in a bracket to a
  relative 1e-12 (``tests/test_proba.py`` checks the minimiser against scipy's).
  w_i is ``sample_weight``; a_min = 1e-6 / max|s| keeps the map strictly increasing.

Multi-label targets (``LabelRanker`` on label sets) have no ``predict_proba`` (the method is
absent, as scikit-learn's ``available_if`` makes it).

Model files store the map and the window (``onlinelearn.model_io``), or nothing when the model
keeps none (native probabilities, one class, label sets).  A classifier without a map whose
``predict_proba`` needs one (e.g. after ``set_params`` left its native probabilities) raises
:class:`NotFittedError` until it learns from labelled rows again (``partial_fit``), which starts
the window.

A call that fails changes nothing: the scores are computed before the learner's call and the
window and map change only after it succeeded.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import warnings

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if

from .calibration import (  # noqa: F401 - THIN and the fits are read here by the tests
    PER_CALL,
    REFIT,
    STREAM_ROWS,
    THIN,
    WINDOW,
    Calibration,
    _agree,
    _as_kind,
    fit_binary_slopes,
    fit_temperature,
    log_proba_from_scores,
)

__all__ = [
    "REFIT",
    "WINDOW",
    "Calibration",
    "ProbabilityMixin",
    "fit_binary_slopes",
    "fit_temperature",
    "log_proba_from_scores",
]

#: the held-out share of ``fit`` and of a first ``partial_fit`` (at most ``WINDOW`` rows)
HOLDOUT = 0.2
#: the learner had no model before the call
_UNFITTED = "unfitted"
#: a later call whose last rows the learner's own pass scores (``_held_out_in_pass``)
_IN_PASS = "in pass"
#: calibration switched off (the learner copies that produce the held-out scores)
_OFF = contextvars.ContextVar("onlinelearn_calibration_off", default=False)
#: estimators inside a learning call (only the outermost call calibrates)
_ACTIVE = contextvars.ContextVar("onlinelearn_calibration_active", default=frozenset())


class HeldOut:
    """A request to the family's ``partial_fit`` (set while it runs): put in ``scores`` the
    decision values of the batch's last m rows, each given by the model just before it
    learns that row (progressive validation of the predictor, inside the one pass; the model
    is the one an uncalibrated call learns).  On a first call m is the held-out part
    (:meth:`_held_out_scores` is the route of the other families: a copy learns rows
    [0, n - m) and scores the rest, nearly two passes); on a later scored call, its last
    ``PER_CALL`` rows (the other families: the model before the call scores them)."""

    __slots__ = ("owner", "n", "m", "scores", "rows")

    def __init__(self, owner, n, m):
        self.owner, self.n, self.m, self.scores = owner, n, m, None
        self.rows = None  # the batch's rows that were scored, set by the pass's caller


_HOLD = contextvars.ContextVar("onlinelearn_hold_out", default=None)


def held_out_request(est, n):
    """The :class:`HeldOut` request for ``est``'s call over ``n`` rows, or None (a family
    whose pass scores rows declares ``_held_out_in_pass = True`` and asks here)."""
    req = _HOLD.get()
    if req is None or req.owner != id(est) or req.n != n:
        return None
    return req


def _held_out_size(n):
    """m, the held-out rows of a batch of n (0: too few rows to hold any out)."""
    m = min(WINDOW, int(n * HOLDOUT))
    return 0 if m < 1 or n - m < 2 else m


def _is_logistic(loss):
    if isinstance(loss, str):
        return loss == "logistic"
    return type(loss).__name__ == "Logistic" and type(loss).__module__.startswith("onlinelearn")


def _rows(X, idx):
    from sklearn.utils import _safe_indexing

    return _safe_indexing(X, idx)


def _n_rows(X):
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None else len(X)


def _labels_1d(y):
    """y as a 1-D array of labels, or None for multi-label targets."""
    if isinstance(y, list | tuple) and y and isinstance(y[0], list | tuple | set | frozenset):
        return None
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    return arr if arr.ndim == 1 else None


def _weights(sample_weight, n):
    if sample_weight is None:
        return np.ones(n)
    return np.broadcast_to(np.asarray(sample_weight, dtype=np.float64), (n,)).copy()


def _proba_available(est):
    return est.__dict__.get("_proba_multilabel") is None


class ProbabilityMixin:
    """``predict_proba`` / ``predict_log_proba`` (module docstring) and the calibration that
    every learning call of the shell updates (:meth:`_calibrating`)."""

    # -- which case
    def _native_proba(self):
        """True when the learner's loss is the logistic loss (probabilities it defines)."""
        return _is_logistic(self.__dict__.get("loss"))

    def _proba_kind(self):
        K = len(self.classes_)
        return "single" if K == 1 else ("binary" if K == 2 else "multiclass")

    # -- public
    @available_if(_proba_available)
    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`, computed without underflow (shape (n, n_classes))."""
        scores = self.decision_function(X)  # checks that the model is fitted
        kind = self._proba_kind()
        scores = _as_kind(scores, kind)
        return log_proba_from_scores(scores, kind, self._proba_params())

    @available_if(_proba_available)
    def predict_proba(self, X):
        """Class probabilities, shape (n, n_classes), columns in the order of ``classes_``.

        The logistic loss: the probabilities the loss defines (sigmoid / softmax of the
        scores).  Any other learner: its scores through the calibration map learned online
        from progressive-validation scores (two-slope Platt scaling for two classes,
        temperature scaling for more; see ``docs/probabilities.md``).  Rows sum to 1 and the
        first maximum of each row is :meth:`predict`'s label."""
        scores = self.decision_function(X)  # checks that the model is fitted
        kind = self._proba_kind()
        scores = _as_kind(scores, kind)
        P = np.exp(log_proba_from_scores(scores, kind, self._proba_params()))
        return _agree(P, scores, kind)

    def _proba_params(self):
        kind = self._proba_kind()
        if kind == "single" or self._native_proba():
            return np.ones(2 if kind == "binary" else 1)
        cal = self.__dict__.get("calibration_")
        if cal is None:
            raise NotFittedError(
                f"{type(self).__name__} has no probability calibration: it learned none with "
                "these parameters. Let it learn from a few labelled rows (partial_fit), which "
                "starts the calibration, or fit it again."
            )
        if cal.kind != kind:  # labels grew and no row was scored since: the map so far
            a = float(np.sqrt(np.prod(cal.params)))
            return np.array([a, a]) if kind == "binary" else np.array([a])
        return cal.params

    # -- the calibration, around every learning call
    @contextlib.contextmanager
    def _calibrating(self, mode, X, y, sample_weight=None, classes=None):
        """Around a learning call of the shell (``mode``: 'fit' or 'partial'): scores before
        it, the window and map updated after it succeeded (nothing if it fails)."""
        active = _ACTIVE.get()
        if _OFF.get() or id(self) in active or self._native_proba():
            yield
            return
        token = _ACTIVE.set(active | {id(self)})
        hold = req = None
        try:
            before = self._scores_before(mode, X)
            m = 0  # the last rows the learner's pass scores (HeldOut)
            if before is _IN_PASS or (before is _UNFITTED and self._pass_scores_rows()):
                # every row of a stream, as one at a time would score it (Calibration.add_stream)
                m = min(STREAM_ROWS, _n_rows(X))
            elif mode == "fit" and self._one_pass_fit():
                # a one-epoch fit (one pass over the rows in the fit's order): the held-out
                # part is the pass's last rows, scored in it (no copy)
                m = _held_out_size(_n_rows(X))
            if m:
                req = HeldOut(id(self), _n_rows(X), m)
                hold = _HOLD.set(req)
            yield
        finally:
            if hold is not None:
                _HOLD.reset(hold)
            _ACTIVE.reset(token)
        self._calibrate_after(mode, X, y, sample_weight, classes, before, req)

    def _one_pass_fit(self):
        """``fit`` makes one pass and the pass scores rows (a learner that reads ``n_epochs``
        and declares ``_held_out_in_pass``)."""
        return self._pass_scores_rows() and getattr(self, "n_epochs", 0) == 1

    def _pass_scores_rows(self):
        """The learner's pass scores the rows (``_held_out_in_pass``); False when its
        parameters cannot tell (an invalid one: the call's own validation says which)."""
        try:
            return bool(getattr(self, "_held_out_in_pass", False))
        except Exception:  # noqa: BLE001 - e.g. an unknown constraint, refused by the call
            return False

    def _scores_before(self, mode, X):
        """(classes, scores of the last rows) of the model before a partial_fit; None when
        there is no model yet (or the batch cannot be scored: the call will say why);
        ``_IN_PASS`` when the call is scored and the learner's pass scores it (each of the
        last rows by the model just before it, without reading out the averaged weights:
        news20 in calls of 1,000 rows, the O(d K) read-out cost 3 ms a call)."""
        if mode != "partial":
            return None
        if "classes_" not in self.__dict__:
            return _UNFITTED
        try:
            n = _n_rows(X)
            cal = self.__dict__.get("calibration_")
            in_pass = self._pass_scores_rows()
            if in_pass:
                return _IN_PASS  # every row (Calibration.add_stream): no thinning
            if cal is not None:
                width = 1 if cal.kind == "binary" else cal.n_columns
                # a pass that scores its rows reads no weights out: no stride for the width
                n_weights = 0 if in_pass else int(getattr(self, "n_features_in_", 0)) * width
                if not cal.wants(n, n_weights):
                    return None
            if in_pass:
                return _IN_PASS
            Xt = X if n <= PER_CALL else _rows(X, np.arange(n - PER_CALL, n))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scores = np.asarray(self.decision_function(Xt), dtype=np.float64)
        except Exception:  # noqa: BLE001 - the learner's own call reports the problem
            return None
        return np.asarray(self.classes_), scores

    def _calibrate_after(self, mode, X, y, sample_weight, classes, before, req=None):
        labels = _labels_1d(y)
        if labels is None:
            self.__dict__["_proba_multilabel"] = True
            self.__dict__.pop("calibration_", None)
            return
        self.__dict__.pop("_proba_multilabel", None)
        kind = self._proba_kind()
        if kind == "single":
            return
        n = len(labels)
        weights = _weights(sample_weight, n)
        if before is _IN_PASS:  # scored inside the call, over the classes after it
            scored = req is not None and req.scores is not None
            before = (np.asarray(self.classes_), req.scores) if scored else None
        cal = self.__dict__.get("calibration_")
        if (
            mode == "fit"
            or cal is None
            or cal.kind != kind
            or cal.n_columns != (1 if kind == "binary" else len(self.classes_))
        ):
            params = None
            if cal is not None and mode != "fit":  # labels grew: start from the map so far
                a = float(np.sqrt(np.prod(cal.params)))
                params = (a, a) if kind == "binary" else (a,)
            cal = Calibration(kind, 1 if kind == "binary" else len(self.classes_), params)
        if mode != "fit" and req is not None and req.rows is not None:
            # a learner whose pass scored the call's last rows, each by the model just before
            # it: the rows of a stream (a first call too), whatever the calls' sizes
            rows = None if req.scores is None else self._held_out_rows(
                np.asarray(self.classes_), req.scores, labels[req.rows], weights[req.rows]
            )  # fmt: skip  (scores None: a score overflowed)
            if rows is not None:
                cal.add_stream(*rows, skipped=n - len(req.rows))
        elif mode == "fit" or before is _UNFITTED:
            if req is not None and req.rows is not None:  # scored in the call's pass
                test = req.rows
                rows = None if req.scores is None else self._held_out_rows(
                    np.asarray(self.classes_), req.scores, labels[test], weights[test]
                )  # fmt: skip  (scores None: a score overflowed)
            else:
                rows = self._held_out_scores(mode, X, labels, weights, classes)
            if rows is not None:
                cal.add(*rows)
                cal.refit()
        elif before is not None:
            old_classes, scores = before
            if len(old_classes) == len(self.classes_):
                m = scores.shape[0]
                lab, wt = labels[n - m :], weights[n - m :]
                codes = np.searchsorted(old_classes, lab)
                codes = np.minimum(codes, len(old_classes) - 1)
                seen = old_classes[codes] == lab
                scores = _as_kind(scores, kind).reshape(m, cal.n_columns)
                cal.add(scores[seen], codes[seen], wt[seen])
                if cal.due():
                    cal.refit()
        cal.offered += n
        self.calibration_ = cal

    def _held_out_scores(self, mode, X, labels, weights, classes):
        """(scores, codes, weights) of held-out rows, scored by a copy of the learner that
        learned from the other rows (``fit``: a stratified random part; a first
        ``partial_fit``: the last rows of the batch, in order); None if too few rows."""
        from sklearn.base import clone

        n = len(labels)
        m = _held_out_size(n)
        if not m:
            return None
        if mode == "fit":
            rng = np.random.default_rng(0)
            _, codes_all = np.unique(labels, return_inverse=True)
            hold = []
            for c in range(codes_all.max() + 1):
                idx = np.flatnonzero(codes_all == c)
                k = int(round(len(idx) * m / n))
                if len(idx) >= 2 and k >= 1:
                    hold.append(rng.choice(idx, size=min(k, len(idx) - 1), replace=False))
            if not hold:
                return None
            test = np.sort(np.concatenate(hold))
            train = np.setdiff1d(np.arange(n), test)
        else:
            train, test = np.arange(n - m), np.arange(n - m, n)
        copy = clone(self)
        token = _OFF.set(True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kw = {} if np.all(weights == 1.0) else {"sample_weight": weights[train]}
                Xtr, ytr = _rows(X, train), labels[train]
                if mode == "fit":
                    if classes is not None:  # labels announced but maybe absent from y
                        kw["classes"] = classes
                    copy.fit(Xtr, ytr, **kw)
                else:
                    copy.partial_fit(Xtr, ytr, classes=classes, **kw)
                scores = np.asarray(copy.decision_function(_rows(X, test)), dtype=np.float64)
        except Exception:  # noqa: BLE001 - the copy may not learn from a part (one class...)
            return None
        finally:
            _OFF.reset(token)
        return self._held_out_rows(np.asarray(copy.classes_), scores, labels[test], weights[test])

    def _held_out_rows(self, cc, scores, lab, wt):
        """(scores, codes, weights) of the held-out rows whose label the scoring model knew;
        None when its label set ``cc`` is not the learner's."""
        if len(cc) != len(self.classes_) or not np.array_equal(cc, np.asarray(self.classes_)):
            return None
        codes = np.minimum(np.searchsorted(cc, lab), len(cc) - 1)
        seen = cc[codes] == lab
        kind = self._proba_kind()
        scores = _as_kind(scores, kind).reshape(len(lab), 1 if kind == "binary" else len(cc))
        return scores[seen], codes[seen], wt[seen]

    # -- model files (onlinelearn.model_io)
    def _calibration_state(self):
        cal = self.__dict__.get("calibration_")
        return None if cal is None else cal.to_state()

    def _set_calibration_state(self, meta, arrays):
        if meta is None:  # the model kept none (native probabilities, one class, label sets)
            self.__dict__.pop("calibration_", None)
            return
        self.calibration_ = Calibration.from_state(meta, arrays)

    # -- batch learners: their own fit, wrapped once per class
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        # the online shell (shell.online.OnlineMixin) calibrates inside its own calls
        if (
            fit is None
            or getattr(cls, "_calls_calibrate", False)
            or getattr(fit, "_calibrates", False)
        ):
            return

        @functools.wraps(fit)
        def calibrated_fit(self, X, y, *args, **kwargs):
            sw = kwargs.get("sample_weight", args[0] if args else None)
            with self._calibrating("fit", X, y, sw):
                fit(self, X, y, *args, **kwargs)
            return self

        calibrated_fit._calibrates = True
        cls.fit = calibrated_fit


def calibrating(est, mode, X, y, sample_weight=None, classes=None):
    """The calibration context of ``est`` (a no-op for estimators without probabilities)."""
    hook = getattr(est, "_calibrating", None)
    if hook is None:
        return contextlib.nullcontext()
    return hook(mode, X, y, sample_weight, classes)
