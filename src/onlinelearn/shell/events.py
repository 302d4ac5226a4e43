"""One event at a time: ``learn_one``, ``predict_one``, ``predict_proba_one`` and ``partial_fit``
on one row, straight to a family's compiled one-row step; the skeleton every family's road
fills in, and the linear classifiers' road.

The skeleton.  A family's :class:`Event` subclass keeps what cannot change between two events
(the step's codes and parameters, the label-to-code dict, the buffers and scratch) and the
learner's state arrays by reference; it is built (``build``) on the first event after anything
changed (a parameter set, the state replaced by ``fit`` or by a call of the general path, a new
label, a model file) and checked (``current``: a few identity tests) on every event.  One learned
event (:func:`transaction`) is then one compiled call (``step``): the family's batch pass on the
one-row batch inside a compiled transaction (a rejected row leaves the state bit for bit as it
was), followed by what ``partial_fit`` does after its pass (the class count, the probability
calibration's window), in the same order; so the model is bit for bit the one ``partial_fit``
gives on the same one-row batches (a dense row: the (1, d) array; a dict or sparse row: the
canonical CSR row of its entries, columns sorted and repeated ones added up, as ``partial_fit``
takes it).  A prediction is one compiled call too (``scores``).  :func:`road` makes the
per-event functions of a family from its subclass.

What a road does not cover goes through ``partial_fit`` unchanged: an unfitted model, one class
so far, a new label, ``class_weight``, a sample weight, what the family names (here: the
learners whose pass is not the Euclidean one: Winnow, the p-norm Perceptron, constrained
updates), and every error (the general path raises the error it always raised, after the
compiled transaction put the state back).

Rows (``x``, :mod:`onlinelearn.shell.event_rows`): a dict {column index: value} or, on a model
fitted with feature names, {name: value} (a name the model does not know is refused by
``learn_one`` and has weight 0 for ``predict_one``); a 1-D array of the model's width; a
one-row scipy sparse matrix.

The linear road.  A learner's state is its arrays (weights ``theta``, averaging sums ``U``,
counters ``st``) and the codes its pass reads (``ip``, ``fp``); its step is
:func:`onlinelearn._core.one_row.learn_row`, which also counts the class and writes the
calibration's window.  The step's arrays (the weights aside) reach it as one table of addresses
(:func:`onlinelearn._core.one_row.table_of`), made again when the class counts or the
calibration are replaced (the general path replaces them; the event checks their identity).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import scipy.sparse as sp

from .._core.calibration import CAL_COUNT, CAL_HEAD, CAL_OFFERED, CAL_SINCE_FIT
from .._core.euclid_pass import euclid_pass
from .._core.one_row import (
    BAD_INDEX,
    DUE,
    OK,
    UNSORTED,
    buffers,
    learn_row,
    row_label,
    row_scores,
    table_of,
)
from .._core.state import set_call_flags
from .event_rows import _csr, _entries, _label, _label_array, _matrix, _proba, _proba_dict
from .online import OnlineMixin
from .proba import _ACTIVE, _OFF
from .stop import ConvergenceStopMixin

one_row_matrix = _matrix

__all__ = [
    "Event", "LinearEvent", "Road", "event", "learn_entries", "learn_one", "offer",
    "one_row_matrix", "partial_fit_row", "predict_entries", "predict_one",
    "predict_proba_entries", "predict_proba_one", "road", "transaction",
]  # fmt: skip


class Event:
    """What one event of a fitted learner needs, whatever its family (module docstring): the
    labels (``classes``, as Python values ``plain``, their codes), the rows (width, feature
    names, the dense row's columns, the last dict row's entries), the read-out (``kind``,
    ``n_columns``, ``binary``, ``native``).  A family's subclass adds its state and fills in
    :meth:`build`, :meth:`current`, :meth:`step` and :meth:`scores`."""

    __slots__ = (
        "classes", "plain", "codes", "n_features", "names", "dense_idx", "kind", "n_columns",
        "n_weights", "binary", "native", "learns", "last", "fed",
    )  # fmt: skip

    def start(self, est, classes, kind, binary, dense_idx, learns=True, native=False):
        """Fill in the family-independent part; returns the event."""
        self.classes = classes
        self.plain = [c.item() if isinstance(c, np.generic) else c for c in classes]
        codes = {}
        for k, c in enumerate(self.plain):
            codes.setdefault(c, k)
        self.codes = codes
        self.n_features = n = int(est.n_features_in_)
        names = est.__dict__.get("feature_names_in_")
        self.names = None if names is None else {str(v): j for j, v in enumerate(names)}
        self.dense_idx = dense_idx
        self.kind = kind
        self.n_columns = 1 if kind == "binary" else len(classes)
        self.n_weights = n * self.n_columns  # (what proba._scores_before strides by)
        self.binary = bool(binary)
        self.native = bool(native)
        self.learns = bool(learns)
        self.last = None
        self.fed = None  # the last calibration found to fit the read-out (transaction)
        return self

    #: the estimator attribute that holds the family's state (no event before it is there)
    state_key = None

    @classmethod
    def build(cls, est, d, classes):
        """The event state of ``est`` (its ``__dict__`` ``d``, which holds ``state_key`` and
        two labels or more, ``classes``), or None when its events take the general path."""
        raise NotImplementedError

    def current(self, d):
        """True while the estimator's ``__dict__`` ``d`` holds the state this event was built
        on."""
        raise NotImplementedError

    def step(self, est, data, idx, code, cal):
        """Learn the row (float64 values ``data``, int32 columns ``idx``) of label code
        ``code`` and do the bookkeeping after it (``cal``: the calibration to feed, or None);
        False when the general path must take the row (nothing was changed)."""
        raise NotImplementedError

    def scores(self, est, data, idx):
        """The row's scores in the steps of ``decision_function``, or None when the general
        path must read the row; raises for a row that cannot be the model's."""
        raise NotImplementedError

    def label(self, est, data, idx):
        """The label ``predict`` gives the row (:meth:`scores`, then the shell's ``_label``),
        or ``MISS`` when the general path must read the row."""
        s = self.scores(est, data, idx)
        return MISS if s is None else _label(self, s)

    def out_of_range(self):
        return ValueError(f"a feature index is out of range [0, {self.n_features})")

    def __reduce__(self):
        return _dropped, ()  # never copied: a copy of an estimator builds its own (a family's
        # table holds the addresses of this estimator's arrays)


def _dropped():
    return None


#: :meth:`Event.label`'s "no label here" (a label may be None)
MISS = object()


def nonfinite_x():
    return ValueError("Input X contains NaN or infinity.")


def transaction(est, ev, data, idx, code):
    """One learned event: ``ev.step`` with the calibration ``partial_fit`` would feed; False
    when the general path must take the row (nothing was changed)."""
    if _ACTIVE.get():
        return False  # inside another learning call: the general path decides who calibrates
    cal = None
    if not (ev.native or _OFF.get()):
        cal = est.__dict__.get("calibration_")
        if cal is not ev.fed:
            if cal is None or cal.kind != ev.kind or cal.n_columns != ev.n_columns:
                return False  # the general path starts or reshapes the calibration
            ev.fed = cal  # (a calibration's kind and width are fixed when it is made)
    return ev.step(est, data, idx, code, cal)


def offer(cal, score, code):
    """After a learned row, as ``partial_fit`` keeps it (``ProbabilityMixin._calibrate_after``):
    its score before the step (None: not scored, or not finite) into the calibration's window
    as ``Calibration.add`` of one row of weight 1, a fit when one is due, and the row counted
    as offered.  (The families whose compiled step does not write the window itself.)"""
    if cal is None:
        return
    n = cal._n  # (the counters behind the properties head, count, since_fit, offered)
    if score is not None:
        h = int(n[CAL_HEAD])
        cal.scores[h] = score
        cal.codes[h] = code
        cal.weights[h] = 1.0
        W = cal.scores.shape[0]
        n[CAL_HEAD] = (h + 1) % W
        n[CAL_COUNT] = min(W, int(n[CAL_COUNT]) + 1)
        n[CAL_SINCE_FIT] += 1
        if cal.due():
            cal.refit()
    n[CAL_OFFERED] += 1


def _label_code(ev, y):
    try:
        return ev.codes.get(y)
    except TypeError:  # unhashable: the general path says why
        return None


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


Road = namedtuple(
    "Road",
    "event learn_one learn_entries partial_fit_row predict_one predict_entries "
    "predict_proba_one predict_proba_entries",
)


def road(family):
    """The per-event functions of a family (its :class:`Event` subclass): a :class:`Road` of
    plain functions of the estimator, to be the family's module functions and its classes'
    methods."""
    build, key = family.build, family.state_key

    def event(est):
        """The current event state of ``est`` (built when needed), or None."""
        d = est.__dict__
        ev = d.get("_event")
        if ev is not None and ev.current(d):
            return ev
        d.pop("_event", None)
        classes = d.get("classes_")
        if classes is None or len(classes) < 2 or d.get(key) is None:
            return None
        ev = build(est, d, classes)
        if ev is not None:
            d["_event"] = ev
        return ev

    def learn_one(est, x, y):
        """Learn one row ``x`` with label ``y``; River's ``learn_one``."""
        d = est.__dict__
        ev = d.get("_event")
        if ev is None or not ev.current(d):
            ev = event(est)
        if ev is not None and ev.learns:
            try:
                code = ev.codes.get(y)
            except TypeError:  # unhashable: the general path says why
                code = None
            if code is not None:
                data, idx = _entries(ev, x, True)
                if transaction(est, ev, data, idx, code):
                    return
        est.partial_fit(_matrix(est, x), _label_array(est, y))

    def learn_entries(est, data, idx, y):
        """The event road for a row given as float64 values and int32 columns (the River
        adapter's rows, whose reference is their CSR row); False when the general path must
        take it (nothing was changed)."""
        d = est.__dict__
        ev = d.get("_event")
        if ev is None or not ev.current(d):
            ev = event(est)
        if ev is None or not ev.learns:
            return False
        try:
            code = ev.codes.get(y)
        except TypeError:  # unhashable: the general path says why
            return False
        return code is not None and transaction(est, ev, data, idx, code)

    def partial_fit_row(est, X, y):
        """``partial_fit(X, y)`` of a one-row float64 batch (a C-contiguous (1, d) array or a
        canonical CSR row) of a known label, on the event road; False when the general path
        must take it (nothing was changed)."""
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
        ev = est.__dict__.get("_event")
        if ev is None or not ev.current(est.__dict__):
            ev = event(est)
        if ev is None or not ev.learns or ev.names is not None or X.shape[1] != ev.n_features:
            return False
        lab = _plain(lab)
        code = _label_code(ev, lab)
        if code is None or ev.classes[code] != lab:
            return False
        if type(X) is np.ndarray:
            return transaction(est, ev, X[0], ev.dense_idx, code)
        nnz = int(X.indptr[1])
        data = X.data[:nnz]
        idx = X.indices[:nnz]
        if idx.dtype != np.int32 or not (data.flags.c_contiguous and idx.flags.c_contiguous):
            data = np.ascontiguousarray(data)
            idx = np.ascontiguousarray(idx, dtype=np.int32)
        return transaction(est, ev, data, idx, code)

    def predict_one(est, x):
        """The label ``predict`` gives the row ``x``; None before the model learned two labels
        from a first call (River's convention)."""
        d = est.__dict__
        ev = d.get("_event")
        if ev is None or not ev.current(d):
            ev = event(est)
        if ev is not None:
            data, idx = _entries(ev, x, False)
            lab = ev.label(est, data, idx)
            if lab is not MISS:
                return lab
        elif "classes_" not in d:
            return None
        return _plain(est.predict(_matrix(est, x))[0])

    def predict_entries(est, data, idx):
        """:func:`predict_one` of a row given as float64 values and int32 columns."""
        d = est.__dict__
        ev = d.get("_event")
        if ev is None or not ev.current(d):
            ev = event(est)
        if ev is not None:
            lab = ev.label(est, data, idx)
            if lab is not MISS:
                return lab
        return _plain(est.predict(_csr(est.n_features_in_, data, idx))[0])

    def predict_proba_one(est, x):
        """{label: probability} as ``predict_proba`` gives the row ``x``; {} before learning."""
        ev = est.__dict__.get("_event")
        if ev is None or not ev.current(est.__dict__):
            ev = event(est)
        if ev is not None and not ev.native:
            s = ev.scores(est, *_entries(ev, x, False))
            if s is not None:
                return _proba(est, ev, s)
        elif "classes_" not in est.__dict__:
            return {}
        return _proba_dict(est, est.predict_proba(_matrix(est, x))[0])

    def predict_proba_entries(est, data, idx):
        """:func:`predict_proba_one` of a row given as float64 values and int32 columns."""
        ev = est.__dict__.get("_event")
        if ev is None or not ev.current(est.__dict__):
            ev = event(est)
        if ev is not None and not ev.native:
            s = ev.scores(est, data, idx)
            if s is not None:
                return _proba(est, ev, s)
        return _proba_dict(est, est.predict_proba(_csr(est.n_features_in_, data, idx))[0])

    return Road(event, learn_one, learn_entries, partial_fit_row, predict_one, predict_entries,
                predict_proba_one, predict_proba_entries)  # fmt: skip


# ---------------------------------------------------------------------------- the linear road
_NO_WINDOW = (np.zeros((0, 1)), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, np.int64))
_F64, _I64 = np.dtype(np.float64), np.dtype(np.int64)
#: dtype and ndim of the arrays of the table (one_row.table_of): U, st, ib, fb, the class counts,
#: the calibration's scores, codes, weights and counters
_KINDS = ((_F64, 2), (_F64, 1), (_I64, 1), (_F64, 1), (_I64, 1), (_F64, 2), (_I64, 1),
          (_F64, 1), (_I64, 1))  # fmt: skip


#: the shell's transaction and the hooks it calls (OnlineMixin._learn)
_HOOKS = ("_learn", "_begin", "_epoch", "_finish", "_after")


def _library_hooks(cls):
    """True when the transaction and its hooks are the library's own: a user's subclass that
    overrides one of them learns through the general path, which calls it."""
    return all(getattr(cls, h).__module__.startswith("onlinelearn.") for h in _HOOKS)


class LinearEvent(Event):
    """What one event of a fitted Euclidean learner needs (module docstring)."""

    __slots__ = ("theta", "A", "lastS", "st", "ip", "fp", "b", "average", "stop", "ib", "fb",
                 "hold", "out", "tab", "arrays", "counts", "cal")  # fmt: skip

    state_key = "_theta"

    @classmethod
    def build(cls, est, d, classes):
        from .base import OnlineLinearClassifier

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
        ev = cls()
        ev.theta, ev.A, ev.lastS, ev.st = est._theta, est._A, est._lastS, est._st
        set_call_flags(ip, predict_average=False, dual=est._keeps_dual(euclid_pass))
        ev.ip, ev.fp = ip, fp
        ev.b = float(est._intercept_value())
        ev.average = bool(est.average)
        ev.stop = isinstance(est, ConvergenceStopMixin)
        n = int(est.n_features_in_)
        # the event road learns only what partial_fit would learn with its own arguments alone
        learns = (
            est.class_weight is None
            and type(est).partial_fit is OnlineMixin.partial_fit
            and type(est)._run is OnlineLinearClassifier._run
            and _library_hooks(type(est))
        )
        ev.start(est, classes, est._proba_kind(), est._binary_mode(),
                 np.arange(n, dtype=np.int32), learns, est._native_proba())  # fmt: skip
        ev.ib, ev.fb, ev.hold, ev.out = buffers(ip, fp, est._theta.shape[1], est._st.shape[0], n)
        ev.tab = ev.arrays = ev.cal = None
        return ev if ev.attach(d.get("class_counts_"), None) else None

    def attach(self, counts, cal):
        """The table of the step's arrays (``one_row.table_of``) on the class counts ``counts``
        and the calibration ``cal`` (None: none fed); False when an array is not one the table
        can take (the general path then)."""
        window = _NO_WINDOW if cal is None else (cal.scores, cal.codes, cal.weights, cal._n)
        arrays = [self.A, self.st, self.ib, self.fb, counts, *window]
        for a, (dtype, ndim) in zip(arrays, _KINDS, strict=True):
            if type(a) is not np.ndarray or a.dtype != dtype or a.ndim != ndim:
                return False
        try:
            arrays, self.tab = table_of(*arrays[:5], window, (self.arrays, self.tab)
                                        if self.tab is not None else None)  # fmt: skip
        except ValueError:
            return False
        self.arrays, self.counts, self.cal = arrays, counts, cal
        return True

    def current(self, d):
        return (
            d.get("_theta") is self.theta
            and d.get("_A") is self.A
            and d.get("_st") is self.st
            and d.get("classes_") is self.classes
        )

    def step(self, est, data, idx, code, cal):
        """The compiled step on one row with the class count and the calibration's window (in
        the same compiled call)."""
        d = est.__dict__
        if (d["class_counts_"] is not self.counts or cal is not self.cal) and not self.attach(
            d["class_counts_"], cal
        ):
            return False
        status = learn_row(data, idx, code, self.theta, self.tab)
        if status == UNSORTED:  # the canonical CSR row that partial_fit learns: sorted, summed
            order = np.argsort(idx, kind="stable")
            idx, data = idx[order], data[order]
            if (idx[1:] == idx[:-1]).any():  # a repeated column: scipy adds them up
                r = _csr(self.n_features, data, idx)
                r.sum_duplicates()
                data = np.ascontiguousarray(r.data, dtype=np.float64)
                idx = np.ascontiguousarray(r.indices, dtype=np.int32)
            status = learn_row(data, idx, code, self.theta, self.tab)
        if status == DUE:
            cal.refit()
        elif status != OK:
            if status == BAD_INDEX:
                raise self.out_of_range()
            return False  # non-finite values, an overflow: the general path raises its error
        if self.stop:
            d["n_iter_"] = 1
            d.pop("_stop_rule", None)
        return True

    def label(self, est, data, idx):
        k = row_label(data, idx, self.theta, self.tab)  # (one column: binary)
        if k >= 0:
            return self.plain[k]
        return _label(self, self.scores(est, data, idx))  # (raises: the reason)

    def scores(self, est, data, idx):
        if row_scores(data, idx, self.theta, self.tab):
            return self.out
        if not np.isfinite(data).all():
            raise nonfinite_x()
        if idx.shape[0] and not (0 <= int(idx.min()) and int(idx.max()) < self.n_features):
            raise self.out_of_range()
        raise ValueError(
            "the decision values of row 0 are not finite (an overflow of <w, x>: its feature "
            "values are too large for float64 with these weights); scale the features."
        )


(event, learn_one, learn_entries, partial_fit_row, predict_one, predict_entries,
 predict_proba_one, predict_proba_entries) = road(LinearEvent)  # fmt: skip
