"""One event at a time: ``learn_one``, ``predict_one`` and ``predict_proba_one`` of the linear
classifiers, and ``partial_fit`` on one row, straight to the compiled step.

A learner's state is its arrays (weights ``theta``, averaging sums ``U``, counters ``st``) and
the codes its pass reads (``ip``, ``fp``).  For an event, :class:`Event` keeps what cannot
change between two events (the codes, the label-to-code dict, the one-row buffers and the
scratch of the pass) and the learner's own arrays by reference; it is built on the first event
after anything changed (a parameter set, the arrays replaced by ``fit``, a new label, a model
file) and checked with a few identity tests on every event.  One event is then one compiled
call, :func:`onlinelearn._core.one_row.learn_row`: the pass of ``partial_fit`` on a one-row
batch inside a compiled transaction (a rejected row leaves the state bit for bit as it was),
followed by the class count and the probability calibration's bookkeeping, the same steps in
the same order as ``partial_fit``; so the model is bit for bit the one ``partial_fit`` gives on
the same one-row batches (a dense row: the (1, d) array; a dict or sparse row: the canonical CSR
row of its entries, columns sorted and repeated ones added up, as ``partial_fit`` takes it).

What the event road does not cover goes through ``partial_fit`` unchanged: an unfitted model,
one class so far, a new label, ``class_weight``, a sample weight, the learners whose pass is not
the Euclidean one (Winnow, the p-norm Perceptron, constrained updates), and every error (the
general path raises the error it always raised, after the compiled transaction put the state
back).

Rows (``x``): a dict {column index: value} or, on a model fitted with feature names, {name:
value} (a name the model does not know is refused by ``learn_one`` and has weight 0 for
``predict_one``); a 1-D array of the model's width; a one-row scipy sparse matrix.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._core.euclid_pass import euclid_pass
from .._core.one_row import BAD_INDEX, DUE, OK, UNSORTED, buffers, learn_row, row_scores
from .._core.state import IP_DUAL, IP_PREDICT_AVERAGE
from .event_rows import _csr, _entries, _label, _label_array, _matrix, _proba, _proba_dict
from .online import OnlineMixin
from .proba import _ACTIVE, _OFF
from .stop import ConvergenceStopMixin

one_row_matrix = _matrix

__all__ = [
    "Event",
    "event",
    "learn_entries",
    "learn_one",
    "one_row_matrix",
    "partial_fit_row",
    "predict_entries",
    "predict_one",
    "predict_proba_entries",
    "predict_proba_one",
]

class Event:
    """What one event of a fitted Euclidean learner needs (module docstring)."""

    __slots__ = (
        "theta", "A", "lastS", "st", "ip", "fp", "classes", "codes", "plain", "n_features",
        "names", "b", "average", "binary", "kind", "n_columns", "learns", "native", "stop",
        "dense_idx", "ib", "fb", "hold", "out", "last",
    )  # fmt: skip

    def current(self, est):
        d = est.__dict__
        return (
            d.get("_theta") is self.theta
            and d.get("_A") is self.A
            and d.get("_st") is self.st
            and d.get("classes_") is self.classes
        )


def _build(est):
    """The :class:`Event` of ``est``, or None when its events take the general path."""
    from .base import OnlineLinearClassifier

    d = est.__dict__
    classes = d.get("classes_")
    if classes is None or len(classes) < 2 or "_theta" not in d:
        return None
    family = getattr(est, "_family", None)
    if family is not None and family() is not None:
        return None  # OnlineLearner on another family's steps
    try:
        if not est._finite_in_pass() or est._pass_kernel(est._codes(1)[0]) is not euclid_pass:
            return None
        est._validate_params_once()
        est._check_average_state()
        if isinstance(est.intercept_scaling, str) and "intercept_scaling_" not in d:
            return None
        ip, fp = est._codes(est._n_weights())
    except Exception:  # noqa: BLE001 - the general path reports it
        return None
    ev = Event()
    ev.theta, ev.A, ev.lastS, ev.st = est._theta, est._A, est._lastS, est._st
    ip[IP_PREDICT_AVERAGE] = 0
    ip[IP_DUAL] = int(est._keeps_dual(euclid_pass))
    ev.ip, ev.fp = ip, fp
    ev.classes = classes
    ev.plain = [c.item() if isinstance(c, np.generic) else c for c in classes]
    codes = {}
    for k, c in enumerate(ev.plain):
        codes.setdefault(c, k)
    ev.codes = codes
    ev.n_features = int(est.n_features_in_)
    names = d.get("feature_names_in_")
    ev.names = None if names is None else {str(n): j for j, n in enumerate(names)}
    ev.b = float(est._intercept_value())
    ev.average = bool(est.average)
    ev.binary = bool(est._binary_mode())
    ev.kind = est._proba_kind()
    ev.n_columns = 1 if ev.kind == "binary" else len(classes)
    ev.native = bool(est._native_proba())
    ev.stop = isinstance(est, ConvergenceStopMixin)
    # the event road learns only what partial_fit would learn with its own arguments alone
    ev.learns = (
        est.class_weight is None
        and type(est).partial_fit is OnlineMixin.partial_fit
        and type(est)._learn in (OnlineLinearClassifier._learn, ConvergenceStopMixin._learn)
        and type(est)._run is OnlineLinearClassifier._run
    )
    K = est._theta.shape[1]
    n = ev.n_features
    ev.dense_idx = np.arange(n, dtype=np.int32)
    ev.ib, ev.fb, ev.hold, ev.out = buffers(ip, fp, K, est._st.shape[0], n)
    ev.last = None
    d["_event"] = ev
    return ev


def event(est):
    """The current :class:`Event` of ``est`` (built when needed), or None."""
    d = est.__dict__
    ev = d.get("_event")
    if (
        ev is not None
        and d.get("_theta") is ev.theta
        and d.get("_A") is ev.A
        and d.get("_st") is ev.st
        and d.get("classes_") is ev.classes
    ):
        return ev
    d.pop("_event", None)
    return _build(est)


def forget(est):
    """Drop the kept event state (a parameter changed)."""
    est.__dict__.pop("_event", None)




# ---------------------------------------------------------------------------- learning
def _label_code(ev, y):
    try:
        return ev.codes.get(y)
    except TypeError:  # unhashable: the general path says why
        return None


_NO_WINDOW = (np.zeros((0, 1)), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, np.int64))


def _learn(est, ev, data, idx, code):
    """The compiled step on one row and the bookkeeping after it (the class count and the
    calibration's window, in the same compiled call); False when the general path must take
    the row (nothing was changed)."""
    if _ACTIVE.get():
        return False  # inside another learning call: the general path decides who calibrates
    d = est.__dict__
    if ev.native or _OFF.get():
        cal, window = None, _NO_WINDOW
    else:
        cal = d.get("calibration_")
        if cal is None or cal.kind != ev.kind or cal.n_columns != ev.n_columns:
            return False  # the general path starts or reshapes the calibration
        window = (cal.scores, cal.codes, cal.weights, cal._n)
    status = learn_row(data, idx, code, 0 if cal is not None else -1, ev.theta, ev.A, ev.st,
                       ev.ib, ev.fb, d["class_counts_"], *window)  # fmt: skip
    if status == UNSORTED:  # the canonical CSR row that partial_fit learns: sorted, summed
        order = np.argsort(idx, kind="stable")
        idx, data = idx[order], data[order]
        if (idx[1:] == idx[:-1]).any():  # a repeated column: scipy adds them up
            r = sp.csr_matrix((data, idx, np.array([0, idx.shape[0]])), shape=(1, ev.n_features))
            r.sum_duplicates()
            data = np.ascontiguousarray(r.data, dtype=np.float64)
            idx = np.ascontiguousarray(r.indices, dtype=np.int32)
        status = learn_row(data, idx, code, 0 if cal is not None else -1, ev.theta, ev.A,
                           ev.st, ev.ib, ev.fb, d["class_counts_"], *window)  # fmt: skip
    if status == DUE:
        cal.refit()
    elif status != OK:
        if status == BAD_INDEX:
            raise ValueError(f"a feature index is out of range [0, {ev.n_features})")
        return False  # non-finite values, an overflow: the general path raises its error
    if ev.stop:
        d["n_iter_"] = 1
        d.pop("_stop_rule", None)
    return True


def _add_one(cal, score, code):
    """``cal.add`` of one row of weight 1 (the same slots and counters), in Python: the
    families whose one-row step does not write the window itself."""
    h = cal.head
    cal.scores[h] = score
    cal.codes[h] = code
    cal.weights[h] = 1.0
    cal.head = (h + 1) % cal.scores.shape[0]
    cal.count = min(cal.scores.shape[0], cal.count + 1)
    cal.since_fit += 1


def learn_one(est, x, y, event=event, learn=_learn):
    """Learn one row ``x`` with label ``y`` (module docstring); River's ``learn_one``.
    (``event``, ``learn``: the family's :func:`event` and :func:`_learn`; another family's
    road, e.g. ``onlinelearn.kernel_methods._events``, passes its own.)"""
    ev = event(est)
    if ev is not None and ev.learns:
        code = _label_code(ev, y)
        if code is not None:
            data, idx = _entries(ev, x, True)
            if learn(est, ev, data, idx, code):
                return
    est.partial_fit(_matrix(est, x), _label_array(est, y))


def learn_entries(est, data, idx, y, event=event, learn=_learn):
    """The event road for a row given as float64 values and int32 columns (the River adapter's
    rows); False when the general path must take it (nothing was changed)."""
    ev = event(est)
    if ev is None or not ev.learns:
        return False
    code = _label_code(ev, y)
    if code is None:
        return False
    return learn(est, ev, data, idx, code)


def partial_fit_row(est, X, y, event=event, learn=_learn):
    """``partial_fit(X, y)`` of a one-row float64 batch (a C-contiguous (1, d) array or a
    canonical CSR row) of a known label, on the event road; False when the general path must
    take it (nothing was changed)."""
    if type(X) is np.ndarray:
        if X.ndim != 2 or X.shape[0] != 1 or X.dtype != np.float64 or not X.flags.c_contiguous:
            return False
    elif not (isinstance(X, sp.csr_matrix | sp.csr_array) and X.shape[0] == 1
              and X.dtype == np.float64 and X.has_canonical_format):
        return False  # fmt: skip
    if type(y) is np.ndarray:
        if y.shape != (1,):
            return False
        lab = y[0]
    elif type(y) is list and len(y) == 1:
        lab = y[0]
    else:
        return False
    ev = event(est)
    if ev is None or not ev.learns or ev.names is not None or X.shape[1] != ev.n_features:
        return False
    if isinstance(lab, np.generic):
        lab = lab.item()
    code = _label_code(ev, lab)
    if code is None or ev.classes[code] != lab:
        return False
    if type(X) is np.ndarray:
        data, idx = X[0], ev.dense_idx
    else:
        nnz = int(X.indptr[1])
        data = X.data[:nnz]
        idx = X.indices[:nnz]
        if idx.dtype != np.int32 or not (data.flags.c_contiguous and idx.flags.c_contiguous):
            data = np.ascontiguousarray(data)
            idx = np.ascontiguousarray(idx, dtype=np.int32)
    return learn(est, ev, data, idx, code)


# ---------------------------------------------------------------------------- prediction
def _scores(ev, data, idx):
    ok = row_scores(data, idx, ev.theta, ev.A, ev.st, ev.ib, ev.fb)
    if not ok:
        if not np.isfinite(data).all():
            raise ValueError("Input X contains NaN or infinity.")
        if idx.shape[0] and not (0 <= int(idx.min()) and int(idx.max()) < ev.n_features):
            raise ValueError(f"a feature index is out of range [0, {ev.n_features})")
        raise ValueError(
            "the decision values of row 0 are not finite (an overflow of <w, x>: its feature "
            "values are too large for float64 with these weights); scale the features."
        )
    return ev.out


def predict_one(est, x):
    """The label ``predict`` gives the row ``x``; None before the model learned two labels
    from a first call (River's convention)."""
    ev = event(est)
    if ev is None:
        if "classes_" not in est.__dict__:
            return None
        lab = est.predict(_matrix(est, x))[0]
        return lab.item() if isinstance(lab, np.generic) else lab
    return _label(ev, _scores(ev, *_entries(ev, x, False)))


def predict_entries(est, data, idx):
    """:func:`predict_one` of a row given as float64 values and int32 columns (the River
    adapter's rows)."""
    ev = event(est)
    if ev is None:
        lab = est.predict(_csr(est.n_features_in_, data, idx))[0]
        return lab.item() if isinstance(lab, np.generic) else lab
    return _label(ev, _scores(ev, data, idx))


def predict_proba_one(est, x):
    """{label: probability} as ``predict_proba`` gives the row ``x``; {} before learning."""
    ev = event(est)
    if ev is None or ev.native:
        if "classes_" not in est.__dict__:
            return {}
        return _proba_dict(est, est.predict_proba(_matrix(est, x))[0])
    return _proba(est, ev, _scores(ev, *_entries(ev, x, False)))


def predict_proba_entries(est, data, idx):
    """:func:`predict_proba_one` of a row given as float64 values and int32 columns."""
    ev = event(est)
    if ev is None or ev.native:
        return _proba_dict(est, est.predict_proba(_csr(est.n_features_in_, data, idx))[0])
    return _proba(est, ev, _scores(ev, data, idx))


