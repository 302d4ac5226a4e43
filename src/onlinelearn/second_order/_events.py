"""One event at a time for the second-order learners (AROW, SCW, WeightedMinMax):
``learn_one``, ``predict_one``, ``predict_proba_one`` and ``partial_fit`` on one row, straight
to the compiled step.

The same road as the linear classifiers' (:mod:`onlinelearn.shell.events`, whose row and label
helpers this module uses): an :class:`Event` keeps what cannot change between two events (the
label-to-code dict, the step's parameters, the scratch) and the learner's state arrays by
reference; it is built on the first event after anything changed (a parameter set, the state
replaced by ``fit`` or by a ``partial_fit`` that took the general path, a new label, a model
file) and checked by identity on every event.  One event is then one compiled call,
:mod:`onlinelearn._core.second_order_row`: the family's batch pass on the one-row batch inside
a compiled transaction (a rejected row leaves the state bit for bit as it was), followed by the
probability calibration's bookkeeping, the steps ``partial_fit`` takes in the same order; so the
model is bit for bit the one ``partial_fit`` gives on the same one-row batches (a 1-D row: the
(1, d) array; a dict or sparse row: the canonical CSR row of its entries).

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
import scipy.sparse as sp

from .._core import second_order_row as SR
from .._core.second_order_row import OK
from ..shell.event_rows import (
    _csr,
    _entries,
    _label,
    _label_array,
    _matrix,
    _proba,
    _proba_dict,
)
from ..shell.events import _add_one, _label_code
from ..shell.online import OnlineMixin
from ..shell.proba import _ACTIVE, _OFF

__all__ = [
    "Event",
    "event",
    "learn_entries",
    "learn_one",
    "partial_fit_row",
    "predict_entries",
    "predict_one",
    "predict_proba_entries",
    "predict_proba_one",
]


class Event:
    """What one event of a fitted second-order learner needs (module docstring)."""

    __slots__ = (
        "state", "W", "arrays", "step", "classes", "plain", "codes", "n_features",
        "names", "dense_idx", "b", "kind", "n_columns", "binary", "n_weights", "ib", "fb",
        "saved", "out", "trace", "query", "last",
    )  # fmt: skip


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
    if (
        isinstance(est, _ConfidenceWeighted)
        and cls._pass is _ConfidenceWeighted._pass
        and cls._before_pass is _ConfidenceWeighted._before_pass
        and cls._weights is _ConfidenceWeighted._weights
    ):
        return "cw"
    if (
        isinstance(est, WeightedMinMax)
        and cls._pass is WeightedMinMax._pass
        and cls._before_pass is WeightedMinMax._before_pass
        and cls._weights is WeightedMinMax._weights
    ):
        return "mm"
    return None


def _build(est):
    """The :class:`Event` of ``est``, or None when its events take the general path."""
    d = est.__dict__
    classes = d.get("classes_")
    state = d.get("_state")
    if classes is None or len(classes) < 2 or state is None or "n_features_in_" not in d:
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
    ev = Event()
    ev.last = None  # (shell.events._entries: the last dict row's entries)
    ev.state, ev.W, ev.classes = state, W, classes
    K = W.shape[1]
    ev.ib, ev.fb = SR.scratch(K, R, n)
    ev.b = float(est._bias)
    ev.fb[SR.F_BIAS] = ev.b
    ev.query = False
    ev.trace = False
    if family == "cw":
        ev.arrays = (W, arrays["S"], state.st)
        ev.step = "cw_full_row" if full else "cw_diag_row"
        ev.ib[SR.I_PARAM] = int(est._variant)
        ev.fb[SR.F_R], ev.fb[SR.F_C], ev.fb[SR.F_PHI] = params
        room = 4 * (R + K) if full else R * (K + 1)
    else:
        from .minmax import REFRESH_EVERY

        ev.arrays = (arrays["P"], arrays["A"], arrays["B"], W, state.st)
        ev.step = "mm_full_row" if full else "mm_diag_row"
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
    ev.plain = [c.item() if isinstance(c, np.generic) else c for c in classes]
    codes = {}
    for k, c in enumerate(ev.plain):
        codes.setdefault(c, k)
    ev.codes = codes
    ev.n_features = n
    names = d.get("feature_names_in_")
    ev.names = None if names is None else {str(v): j for j, v in enumerate(names)}
    ev.dense_idx = np.arange(n, dtype=np.int32)
    ev.kind = est._proba_kind()
    ev.n_columns = 1 if ev.kind == "binary" else len(classes)
    ev.binary = K == 1
    ev.n_weights = n * (1 if ev.kind == "binary" else len(classes))
    d["_event"] = ev
    return ev


def event(est):
    """The current :class:`Event` of ``est`` (built when needed), or None."""
    d = est.__dict__
    ev = d.get("_event")
    if ev is not None and d.get("_state") is ev.state and d.get("classes_") is ev.classes:
        return ev
    d.pop("_event", None)
    return _build(est)


@functools.cache
def param_names(cls):
    """The parameters of ``cls`` (setting one drops the kept event state)."""
    return frozenset(cls._get_param_names())


# ---------------------------------------------------------------------------- learning
_I_SCORE, _I_Y = SR.I_SCORE, SR.I_Y


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
    status = getattr(SR, ev.step)(data, idx, *ev.arrays, ev.ib, ev.fb, ev.saved)
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
        status = getattr(SR, ev.step)(data, idx, *ev.arrays, ev.ib, ev.fb, ev.saved)
    while status == SR.NEED_ROOM:
        ev.saved = np.zeros(int(ev.ib[SR.I_NEED]))
        status = getattr(SR, ev.step)(data, idx, *ev.arrays, ev.ib, ev.fb, ev.saved)
    return status


def _learn(est, ev, data, idx, code, dense):
    """The compiled step on one row and the bookkeeping after it; False when the general path
    must take the row (nothing was changed)."""
    if _ACTIVE.get():
        return False  # inside another learning call: the general path decides who calibrates
    d = est.__dict__
    cal = None
    scored = False
    if not _OFF.get():
        cal = d.get("calibration_")
        if cal is None or cal.kind != ev.kind or cal.n_columns != ev.n_columns:
            return False  # the general path starts or reshapes the calibration
        scored = cal.wants(1, ev.n_weights)
    score = None
    if scored and dense:
        score = _dense_decision(ev, data)
    ib = ev.ib
    ib[_I_SCORE] = 1 if scored and not dense else 0
    ib[_I_Y] = code
    rng = None
    if ev.query:
        rng = d["_rng"]
        before = rng.bit_generator.state
        ev.fb[SR.F_U] = rng.random(1)[0]  # the general path's u = rng.random(n)
    status = getattr(SR, ev.step)(data, idx, *ev.arrays, ib, ev.fb, ev.saved)
    if status != OK:
        status = _again(ev, data, idx, status)
    if status != OK:
        if rng is not None:
            rng.bit_generator.state = before
        if status == SR.BAD_INDEX:
            raise ValueError(f"a feature index is out of range [0, {ev.n_features})")
        return False  # non-finite values, an overflow...: the general path raises its error
    if ev.trace:
        d["_trace"] = _trace(ev)
    if cal is not None:
        if scored:
            if score is None:
                score = _decision(ev, ev.fb[SR.hold_slice(ev.W.shape[1])])
            _add_one(cal, score, code)
            if cal.due():
                cal.refit()
        cal.offered += 1
    return True


def learn_one(est, x, y):
    """Learn one row ``x`` with label ``y``; River's ``learn_one`` (rows as
    :mod:`onlinelearn.shell.events` takes them)."""
    ev = event(est)
    if ev is not None:
        code = _label_code(ev, y)
        if code is not None:
            data, idx = _entries(ev, x, True)
            if _learn(est, ev, data, idx, code, idx is ev.dense_idx):
                return
    est.partial_fit(_matrix(est, x), _label_array(est, y))


def learn_entries(est, data, idx, y):
    """The event road for a row given as float64 values and int32 columns (the River adapter's
    rows, whose reference is their CSR row); False when the general path must take it
    (nothing was changed)."""
    ev = event(est)
    if ev is None:
        return False
    code = _label_code(ev, y)
    if code is None:
        return False
    return _learn(est, ev, data, idx, code, False)


def partial_fit_row(est, X, y):
    """``partial_fit(X, y)`` of a one-row float64 batch (a C-contiguous (1, d) array or a
    canonical CSR row) of a known label, on the event road; False when the general path must
    take it (nothing was changed)."""
    if type(X) is np.ndarray:
        if X.ndim != 2 or X.shape[0] != 1 or X.dtype != np.float64 or not X.flags.c_contiguous:
            return False
    elif not (
        isinstance(X, sp.csr_matrix | sp.csr_array)
        and X.shape[0] == 1
        and X.dtype == np.float64
        and X.has_canonical_format
    ):
        return False
    if type(y) is np.ndarray:
        if y.shape != (1,):
            return False
        lab = y[0]
    elif type(y) is list and len(y) == 1:
        lab = y[0]
    else:
        return False
    ev = event(est)
    if ev is None or ev.names is not None or X.shape[1] != ev.n_features:
        return False
    if isinstance(lab, np.generic):
        lab = lab.item()
    code = _label_code(ev, lab)
    if code is None or ev.classes[code] != lab:
        return False
    if type(X) is np.ndarray:
        return _learn(est, ev, X[0], ev.dense_idx, code, True)
    nnz = int(X.indptr[1])
    data = X.data[:nnz]
    idx = X.indices[:nnz]
    if idx.dtype != np.int32 or not (data.flags.c_contiguous and idx.flags.c_contiguous):
        data = np.ascontiguousarray(data)
        idx = np.ascontiguousarray(idx, dtype=np.int32)
    return _learn(est, ev, data, idx, code, False)


# ---------------------------------------------------------------------------- prediction
_row_scores = SR.row_scores


def _scores(ev, data, idx):
    """The row's scores (``decision_function``'s, bit for bit for a CSR row), or None when
    one is not finite (the caller asks the general path)."""
    status = _row_scores(data, idx, ev.W, ev.ib, ev.fb, ev.out)
    if status == OK:
        return ev.out
    if status == SR.UNSORTED:  # the canonical row's order
        order = np.argsort(idx, kind="stable")
        data, idx = np.ascontiguousarray(data[order]), np.ascontiguousarray(idx[order])
        status = _row_scores(data, idx, ev.W, ev.ib, ev.fb, ev.out)
    if status in (OK, SR.UNSORTED):
        return ev.out
    if status == SR.NONFINITE_X:
        raise ValueError("Input X contains NaN or infinity.")
    if status == SR.BAD_INDEX:
        raise ValueError(f"a feature index is out of range [0, {ev.n_features})")
    return None


def _general(est, data, idx, method):
    return method(_csr(est.n_features_in_, data, idx))[0]


def predict_one(est, x):
    """The label ``predict`` gives the row ``x``; None before the model learned from a first
    call (River's convention)."""
    ev = event(est)
    if ev is not None:
        data, idx = _entries(ev, x, False)
        s = _scores(ev, data, idx)
        if s is not None:
            return _label(ev, s)
    if "classes_" not in est.__dict__:
        return None
    lab = est.predict(_matrix(est, x))[0]
    return lab.item() if isinstance(lab, np.generic) else lab


def predict_entries(est, data, idx):
    """:func:`predict_one` of a row given as float64 values and int32 columns."""
    ev = event(est)
    s = None if ev is None else _scores(ev, data, idx)
    if s is None:
        lab = _general(est, data, idx, est.predict)
        return lab.item() if isinstance(lab, np.generic) else lab
    return _label(ev, s)


def predict_proba_one(est, x):
    """{label: probability} as ``predict_proba`` gives the row ``x``; {} before learning."""
    ev = event(est)
    if ev is not None:
        s = _scores(ev, *_entries(ev, x, False))
        if s is not None:
            return _proba(est, ev, s)
    if "classes_" not in est.__dict__:
        return {}
    return _proba_dict(est, est.predict_proba(_matrix(est, x))[0])


def predict_proba_entries(est, data, idx):
    """:func:`predict_proba_one` of a row given as float64 values and int32 columns."""
    ev = event(est)
    s = None if ev is None else _scores(ev, data, idx)
    if s is None:
        return _proba_dict(est, _general(est, data, idx, est.predict_proba))
    return _proba(est, ev, s)
