"""One event at a time for the second-order learners (AROW, SCW, WeightedMinMax):
``learn_one``, ``predict_one``, ``predict_proba_one`` and ``partial_fit`` on one row, straight
to the compiled step.

The skeleton of :mod:`onlinelearn.shell.events` (its rows, labels, River conventions and
errors), filled in by :class:`SecondOrderEvent`: the event keeps the learner's state arrays
(``_state``) by reference, the step's parameters and scratch; its step is
:mod:`onlinelearn._core.second_order_row`, the family's batch pass on the one-row batch inside a
compiled transaction, followed by the probability calibration's bookkeeping, the steps
``partial_fit`` takes in the same order; so the model is bit for bit the one ``partial_fit``
gives on the same one-row batches (a 1-D row: the (1, d) array; a dict or sparse row: the
canonical CSR row of its entries).

The calibration scores a row, when it asks for one (:meth:`Calibration.wants`), by the model
before the row, as ``partial_fit`` does (``decision_function`` of the one-row batch): for a CSR
row in the compiled call (:func:`onlinelearn._core.second_order_row.exact_scores`, scipy's
order), for a dense row with numpy's product, as ``decision_function`` computes it (BLAS: its
roundings are numpy's to choose).

What the road does not cover goes through ``partial_fit`` unchanged: an unfitted model, one
class so far, a new label, a subclass that changes the learning, every error (the general path
raises the error it always raised, after the compiled transaction put the state back), a row
with a repeated column, and the min-max learner's rows whose ||x||^2 is within rounding of b.

Costs: the full-covariance learners copy, before the step, what the step can write (AROW / SCW:
the rows of Sigma that the row's columns reach, O(|J|^2) to O(|J| R); the min-max learner:
A^{-1} and W whole, O(R^2), as its update rewrites them): small for a small model or sparse
rows of a wide one, about the cost of the update itself otherwise.
"""

from __future__ import annotations

import functools

import numpy as np

from .._core import second_order_row as SR
from .._core.second_order_row import OK
from ..shell import events as E
from ..shell.online import OnlineMixin

__all__ = [
    "SecondOrderEvent", "event", "learn_entries", "learn_one", "param_names", "partial_fit_row",
    "predict_entries", "predict_one", "predict_proba_entries", "predict_proba_one",
]  # fmt: skip


def _family(est):
    """'cw' or 'mm' when ``est`` learns with its family's own code, else None."""
    from ._base import SecondOrderClassifier
    from .confidence_weighted import _ConfidenceWeighted
    from .minmax import WeightedMinMax

    cls = type(est)
    shell = (
        cls.partial_fit is OnlineMixin.partial_fit
        and cls._learn is SecondOrderClassifier._learn
        and cls._epoch is SecondOrderClassifier._epoch
        and cls._run is SecondOrderClassifier._run
        and cls._check_finite is SecondOrderClassifier._check_finite
        and cls.decision_function is SecondOrderClassifier.decision_function
        and cls._scores is SecondOrderClassifier._scores
    )
    if not shell:
        return None
    for base, name in ((_ConfidenceWeighted, "cw"), (WeightedMinMax, "mm")):
        if isinstance(est, base) and all(
            getattr(cls, m) is getattr(base, m) for m in ("_pass", "_before_pass", "_weights")
        ):
            return name
    return None


class SecondOrderEvent(E.Event):
    """What one event of a fitted second-order learner needs (module docstring)."""

    __slots__ = ("state", "W", "arrays", "step_name", "b", "ib", "fb", "saved", "out", "trace",
                 "query")  # fmt: skip

    state_key = "_state"

    @classmethod
    def build(cls, est, d, classes):
        state = d["_state"]
        if "n_features_in_" not in d:
            return None
        family = _family(est)
        if family is None:
            return None
        arrays = state.arrays
        try:
            est._validate_params()
            est._check_params()
            n = int(est.n_features_in_)
            R = n + (1 if est.fit_intercept else 0)
            W = arrays["W"]
            full = est.covariance == "full"
            M = arrays["S" if family == "cw" else "P"]
            if (
                W.shape[0] != R
                or M.ndim != (2 if full else 1)
                or W.shape[1] != est._n_cols_for(len(classes))
            ):
                return None  # the general path says what changed
            # every entry finite: the compiled step then checks only the entries it wrote
            if not all(np.isfinite(a).all() for a in arrays.values()):
                return None
            if not np.isfinite(state.st).all():
                return None
            if family == "mm" and ("b_" not in d or "_rng" not in d):
                return None
            params = est._step_params() if family == "cw" else None
        except Exception:  # noqa: BLE001 - the general path reports it
            return None
        ev = cls()
        ev.state, ev.W = state, W
        K = W.shape[1]
        ev.ib, ev.fb = SR.scratch(K, R, n)
        ev.b = float(est._bias)
        ev.fb[SR.F_BIAS] = ev.b
        ev.query = False
        ev.trace = False
        if family == "cw":
            ev.arrays = (W, arrays["S"], state.st)
            ev.step_name = "cw_row"
            ev.ib[SR.I_PARAM] = int(est._variant)
            ev.fb[SR.F_R], ev.fb[SR.F_C], ev.fb[SR.F_PHI] = params
            room = 4 * (R + K) if full else R * (K + 1)
        else:
            from .minmax import REFRESH_EVERY

            ev.arrays = (arrays["P"], arrays["A"], arrays["B"], W, state.st)
            ev.step_name = "mm_row"
            ev.query = est.query == "margin"
            ev.ib[SR.I_PARAM] = max(REFRESH_EVERY, 4 * R)
            ev.ib[SR.I_FLAGS] = (
                (1 if est.margin == "adaptive" else 0)
                | (2 if ev.query else 0)
                | (4 if est.label_encoding == "one-hot" else 0)
            )
            ev.fb[SR.F_R] = float(est.c)
            ev.fb[SR.F_C] = float(est.b_)
            ev.trace = True
            room = 4 + (R * R + R * K + 4 * (R + K) if full else R * (2 + 2 * K))
        ev.saved = np.zeros(room)
        ev.out = np.zeros(K)
        ev.start(est, classes, est._proba_kind(), K == 1, np.arange(n, dtype=np.int32))
        return ev

    def current(self, d):
        return d.get("_state") is self.state and d.get("classes_") is self.classes

    def step(self, est, data, idx, code, cal):
        """The compiled transaction on the row, then the calibration's bookkeeping."""
        d = est.__dict__
        dense = idx is self.dense_idx
        scored = cal is not None and cal.wants(1, self.n_weights)
        score = _dense_decision(self, data) if scored and dense else None
        ib = self.ib
        ib[SR.I_SCORE] = 1 if scored and not dense else 0
        ib[SR.I_Y] = code
        rng = None
        if self.query:
            rng = d["_rng"]
            before = rng.bit_generator.state
            self.fb[SR.F_U] = rng.random(1)[0]  # the general path's u = rng.random(n)
        status = _step(self, data, idx)
        if status != OK:
            if rng is not None:
                rng.bit_generator.state = before
            if status == SR.BAD_INDEX:
                raise self.out_of_range()
            return False  # non-finite values, an overflow...: the general path raises its error
        if self.trace:
            d["_trace"] = _trace(self)
        if scored and score is None:
            score = _decision(self, self.fb[SR.hold_slice(self.W.shape[1])])
        E.offer(cal, score if scored else None, code)
        return True

    def scores(self, est, data, idx):
        """The row's scores (``decision_function``'s, bit for bit for a CSR row), or None when
        one is not finite (the caller asks the general path)."""
        status = SR.row_scores(data, idx, self.W, self.ib, self.fb, self.out)
        if status == SR.UNSORTED:  # the canonical row's order
            order = np.argsort(idx, kind="stable")
            data, idx = np.ascontiguousarray(data[order]), np.ascontiguousarray(idx[order])
            status = SR.row_scores(data, idx, self.W, self.ib, self.fb, self.out)
        if status in (OK, SR.UNSORTED):
            return self.out
        if status == SR.NONFINITE_X:
            raise E.nonfinite_x()
        if status == SR.BAD_INDEX:
            raise self.out_of_range()
        return None


@functools.cache
def param_names(cls):
    """The parameters of ``cls`` (setting one drops the kept event state)."""
    return frozenset(cls._get_param_names())


def _dense_decision(ev, x):
    """``decision_function`` of the (1, d) row ``x`` in its own steps (numpy's product)."""
    W = ev.W
    d = ev.n_features
    s = np.asarray(x.reshape(1, -1) @ W[:d])
    if ev.b != 0.0:
        s = s + ev.b * W[d]
    return _decision(ev, s[0])


def _decision(ev, s):
    """The decision value(s) of one row's scores ``s`` (``decision_values``)."""
    if ev.binary:
        return float(s[0])
    if s.shape[0] == 2:
        return float(s[1]) - float(s[0])
    return s


def _trace(ev):
    """The one-row arrays that the min-max learner's ``partial_fit`` keeps in ``_trace``."""
    ib, fb = ev.ib, ev.fb
    return {
        "update": ib[SR.I_UPD : SR.I_UPD + 1].copy(),
        "a": fb[SR.F_A : SR.F_A + 1].copy(),
        "rival": ib[SR.I_RIVAL : SR.I_RIVAL + 1].copy(),
        "delta": fb[SR.F_DELTA : SR.F_DELTA + 1].copy(),
    }


def _step(ev, data, idx):
    """The compiled transaction on the row (:func:`_again` when it asks for more room or
    sorted columns).  Returns its status (None: a repeated column, nothing was changed)."""
    status = getattr(SR, ev.step_name)(data, idx, *ev.arrays, ev.ib, ev.fb, ev.saved)
    return status if status == OK else _again(ev, data, idx, status)


def _again(ev, data, idx, status):
    """The compiled transaction again after a status that asks for it: sorted columns
    (UNSORTED), more room for the copies (NEED_ROOM); else ``status``."""
    if status == SR.UNSORTED:
        order = np.argsort(idx, kind="stable")
        idx = np.ascontiguousarray(idx[order], dtype=np.int32)
        if idx.shape[0] > 1 and not (idx[1:] > idx[:-1]).all():
            return None  # scipy sums a repeated column's entries in an order of its own
        data = np.ascontiguousarray(data[order])
        status = getattr(SR, ev.step_name)(data, idx, *ev.arrays, ev.ib, ev.fb, ev.saved)
    while status == SR.NEED_ROOM:
        ev.saved = np.zeros(int(ev.ib[SR.I_NEED]))
        status = getattr(SR, ev.step_name)(data, idx, *ev.arrays, ev.ib, ev.fb, ev.saved)
    return status


(event, learn_one, learn_entries, partial_fit_row, predict_one, predict_entries,
 predict_proba_one, predict_proba_entries) = E.road(SecondOrderEvent)  # fmt: skip
