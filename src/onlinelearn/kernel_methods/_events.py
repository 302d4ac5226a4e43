"""One event at a time for the kernel online learners (KernelPerceptron, KernelPassiveAggressive,
KernelCOPA): ``learn_one``, ``predict_one``, ``predict_proba_one`` and ``partial_fit`` on one
row, straight to the compiled step.

The road of the linear classifiers (:mod:`onlinelearn.shell.events`: the same rows, labels,
River conventions and errors, whose helpers this module uses), on the kernel learners' state:
:class:`Event` keeps what cannot change between two events (the step's codes, the label-to-code
dict, the buffers, and the table of addresses through which the compiled functions reach the
support set: :mod:`onlinelearn._core.table`), built on the first event after anything changed
and dropped whenever a parameter or a state array is set (``KernelOnlineClassifier.__setattr__``,
``_restore``; it is never pickled or copied); when a row needs room (``_ensure_capacity``) its
table is made again on the new arrays.  One event is one compiled
call, :func:`~onlinelearn._core.kernel.one_row.learn_row`: the pass of ``partial_fit`` on a
one-row batch inside a compiled transaction, then the class count and the probability
calibration's bookkeeping, the same steps in the same order as ``partial_fit``; so the model is
bit for bit the one ``partial_fit`` gives on the same one-row batches (a 1-D row: the (1, d)
array; a dict or sparse row: the CSR row of its entries).

The calibration scores a row (``calibration_.wants``: every row at first, then about one in 8)
with ``decision_function`` of the model before the call; here the compiled step leaves that
model's coefficients and the row's kernel values, and the same numpy product as
``decision_function``'s gives the same score.  ``predict_one`` reads the kernel values of the
row once and leaves them to a ``learn_one`` of the same row (River's test-then-train).

What the road does not cover goes through ``partial_fit`` unchanged: an unfitted model, one
class so far, a new label, ``class_weight``, a sample weight, a kernel on feature subsets
(``on_features``), a sparse row that repeats an index, a budget lowered since the last call,
and every error (the general path raises the error it always raised, after the compiled
transaction put the state back).
"""

from __future__ import annotations

import math

import numpy as np

from .._core.kernel import one_row as R
from ..shell import event_rows as ER
from ..shell import events as E
from ..shell.online import OnlineMixin
from ..shell.proba import _ACTIVE, _OFF

__all__ = [
    "Event", "event", "learn_entries", "learn_one", "partial_fit_row", "predict_entries",
    "predict_one", "predict_proba_entries", "predict_proba_one",
]  # fmt: skip

_F64, _I64, _I32 = np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.int32)
#: the estimator's arrays in the order of the table (one_row.POOL_D .. one_row.ST): dtype, ndim
_ARRAYS = (
    ("_pool_d", _F64, 1), ("_pool_i", _I32, 1), ("_sv_lo", _I64, 1), ("_sv_hi", _I64, 1),
    ("_sv_norm", _F64, 2), ("_sv_kxx", _F64, 1), ("_coef", _F64, 2), ("_A", _F64, 2),
    ("_last", _F64, 1), ("_born", _F64, 1), ("_label", _I64, 1), ("_sv_src", _I64, 1),
    ("_st", _F64, 1),
)  # fmt: skip


class Event:
    """What one event of a fitted kernel online learner needs (module docstring)."""

    __slots__ = (
        "tab", "arrays", "ib", "fb", "kv", "cu", "rest", "out", "st", "coef", "pool_d", "classes",
        "plain", "codes", "n_features", "names", "dense_idx", "binary", "kind", "n_columns",
        "n_weights", "learns", "b2", "K", "last",
    )  # fmt: skip

    def __reduce__(self):
        return _dropped, ()  # its table holds addresses: a copy of an estimator builds its own


def _dropped():
    return None


def _build(est):
    """The :class:`Event` of ``est``, or None when its events take the general path."""
    from ._online_base import _RULES, KernelOnlineClassifier

    d = est.__dict__
    classes = d.get("classes_")
    if classes is None or len(classes) < 2 or "_coef" not in d:
        return None
    try:
        est._validate()
        prog = d["_prog"]
        if prog.subsets or est._kernel != prog.kernel:
            return None
        budget = est.budget
        if budget is not None and est._n_sv > budget:
            return None  # lowered since the last call: the general path removes vectors first
        step, C, gamma = est._step()
        ints = (step, est._binary(), est.average, 0 if budget is None else budget,
                _RULES[est.removal], est._keeps_dual(), est.n_features_in_)  # fmt: skip
        floats = (C, gamma, est._b2, est._dual_margin())
        kind = est._proba_kind()
        K = d["_coef"].shape[1]
        L = d["_sv_norm"].shape[1]
    except Exception:  # noqa: BLE001 - the general path reports it
        return None
    nf = int(est.n_features_in_)
    n_ib, n_fb = R.buffer_sizes(K, prog.ops.shape[0], nf)
    slots_f, slots_i, saved_f, saved_i = R.saved_shapes(K, L, nf)
    ev = Event()
    ev.last = None  # (shell.events._entries: the last dict row's entries)
    ev.ib = np.zeros(n_ib, dtype=np.int64)
    ev.fb = np.zeros(n_fb)
    ev.ib[: len(ints)] = [int(v) for v in ints]
    ev.fb[: len(floats)] = floats
    ev.kv = ev.cu = ev.tab = None
    ev.out = ev.fb[R.F_K + 4 * K : R.F_K + 5 * K]
    ev.rest = [np.zeros(nf), np.zeros(nf, dtype=np.int32), np.zeros(nf),
               np.zeros(nf, dtype=np.int32), np.zeros(slots_f), np.zeros(slots_i, np.int64),
               np.zeros(saved_f), np.zeros(saved_i, np.int32), np.zeros((1, L)),
               np.zeros(2 * nf)]  # fmt: skip
    if not _attach(est, ev):
        return None
    ev.classes = classes
    ev.plain = [c.item() if isinstance(c, np.generic) else c for c in classes]
    codes = {}
    for k, c in enumerate(ev.plain):
        codes.setdefault(c, k)
    ev.codes = codes
    ev.n_features = nf
    names = d.get("feature_names_in_")
    ev.names = None if names is None else {str(n): j for j, n in enumerate(names)}
    ev.dense_idx = np.zeros(0, dtype=np.int32)  # (one_row: a dense row has no indices)
    ev.binary = bool(est._binary())
    ev.kind = kind
    ev.n_columns = 1 if kind == "binary" else len(classes)
    ev.n_weights = nf * ev.n_columns  # (what proba._scores_before strides by)
    ev.b2 = float(est._b2)
    ev.K = K
    # the road learns only what partial_fit would learn with its own arguments alone
    cls = type(est)
    ev.learns = (
        est.class_weight is None
        and cls.partial_fit is OnlineMixin.partial_fit
        and cls._learn is KernelOnlineClassifier._learn
        and cls._run is KernelOnlineClassifier._run
        and cls._ensure_capacity is KernelOnlineClassifier._ensure_capacity
    )
    d["_event"] = ev
    return ev


def _attach(est, ev):
    """The table of ``ev`` on the estimator's arrays as they are now, the buffers of the
    support set's capacity grown with it (the kernel values kept: ``_ensure_capacity``
    moves no vector); False when an array is not one the table can take."""
    d = est.__dict__
    state = [d.get(name) for name, _, _ in _ARRAYS]
    for a, (_, dtype, ndim) in zip(state, _ARRAYS, strict=True):
        if type(a) is not np.ndarray or a.dtype != dtype or a.ndim != ndim:
            return False
    cap, K = state[R.COEF].shape
    if ev.kv is None or ev.kv.shape[0] < cap + 1:
        kv = np.zeros(cap + 1)
        if ev.kv is not None:
            kv[: ev.kv.shape[0]] = ev.kv
        ev.kv, ev.cu = kv, np.zeros((cap, K))
    prog = d["_prog"]
    arrays = state + [prog.ops, prog.par, prog.ranges, ev.ib, ev.fb, ev.kv, ev.cu] + ev.rest
    try:
        ev.tab = R.table(arrays, None if ev.tab is None else (ev.arrays, ev.tab))
    except ValueError:
        return False  # a read-only or non-contiguous array: the general path
    ev.arrays = arrays
    ev.st, ev.coef, ev.pool_d = d["_st"], state[R.COEF], d["_pool_d"]
    return True


def event(est):
    """The current :class:`Event` of ``est`` (built when needed), or None.  (Setting a state
    array drops it; the identities checked here guard the arrays the table points into
    against a write of the estimator's ``__dict__`` that bypassed that.)"""
    d = est.__dict__
    ev = d.get("_event")
    if ev is None or not (ev.st is d.get("_st") and ev.coef is d.get("_coef")
                          and ev.pool_d is d.get("_pool_d")):  # fmt: skip
        d.pop("_event", None)
        ev = _build(est)
    return ev


# ---------------------------------------------------------------------------- learning
def _learn(est, ev, data, idx, code):
    """The compiled step on one row and the bookkeeping after it; False when the general path
    must take the row (nothing was changed)."""
    if _ACTIVE.get():
        return False  # inside another learning call: the general path decides who calibrates
    cal = None
    scored = False
    if not _OFF.get():
        cal = est.__dict__.get("calibration_")
        if cal is None or cal.kind != ev.kind or cal.n_columns != ev.n_columns:
            return False  # the general path starts or reshapes the calibration
        scored = cal.wants(1, ev.n_weights)
    ev.ib[R.I_SCORED] = scored
    status = R.learn_row(data, idx, code, ev.tab)
    if status == R.NEED_ROOM:
        ev, status = _with_room(est, ev, data, idx, code)
    if status != R.OK:
        if status == R.BAD_INDEX:
            raise ValueError(f"a feature index is out of range [0, {ev.n_features})")
        return False  # non-finite values, an overflow, a repeated index: the general path
    est.__dict__["class_counts_"][code] += 1
    if cal is not None:
        if scored:
            _score_before(cal, ev, code)
        cal.offered += 1
    return True


def _with_room(est, ev, data, idx, code):
    """``_ensure_capacity`` as ``partial_fit`` runs it for the row, then the step again; when
    the step is refused, the arrays are put back as they were (the general path then raises
    in its own transaction).  Returns (the event, the step's status)."""
    from ._online_base import _STATE

    d = est.__dict__
    refs = {a: d[a] for a in _STATE if a in d}
    # (a compaction rewrites these in place, when the slots did not grow)
    values = {a: d[a].copy() for a in ("_sv_lo", "_sv_hi", "_st")}
    status = R.NEED_ROOM
    try:
        est._ensure_capacity(1, int(ev.ib[R.I_NNZ]))  # (drops the event: its arrays change)
        if _attach(est, ev):
            status = R.learn_row(data, idx, code, ev.tab)
    finally:
        if status != R.OK:
            d.update(refs)
            for a, v in values.items():
                refs[a][...] = v
        if _attach(est, ev):
            d["_event"] = ev
    return ev, status


def _score_before(cal, ev, code):
    """The calibration's row: ``decision_function`` of the model before the step on the row
    (``KernelOnlineClassifier._raw_scores``: K(x, SV) @ coef + b^2 sum(coef), the same numpy
    calls on the kernel values and coefficients the step left), kept as ``partial_fit`` keeps
    it (``ProbabilityMixin._calibrate_after``); a score that is not finite is left out."""
    n = int(ev.ib[R.I_N_OLD])
    if n:
        cu = ev.cu[:n]
        raw = (ev.kv[:n].reshape(1, n) @ cu + ev.b2 * cu.sum(axis=0))[0]
    else:
        raw = np.zeros(ev.K)
    if ev.K <= 2:  # (decision_values: the one score, or f_1 - f_0)
        s0 = float(raw[0])
        s1 = float(raw[-1])
        if not (math.isfinite(s0) and math.isfinite(s1)):
            return
        score = s0 if ev.K == 1 else s1 - s0
    else:
        if not np.isfinite(raw).all():
            return
        score = raw
    E._add_one(cal, score, code)
    if cal.due():
        cal.refit()


def learn_one(est, x, y):
    """Learn one row ``x`` with label ``y`` (module docstring); River's ``learn_one``."""
    E.learn_one(est, x, y, event, _learn)


def learn_entries(est, data, idx, y):
    """The event road for a row given as float64 values and int32 columns (the River adapter's
    rows); False when the general path must take it (nothing was changed)."""
    return E.learn_entries(est, data, idx, y, event, _learn)


def partial_fit_row(est, X, y):
    """``partial_fit(X, y)`` of a one-row float64 batch (a C-contiguous (1, d) array or a
    canonical CSR row) of a known label, on the event road; False when the general path must
    take it (nothing was changed)."""
    return E.partial_fit_row(est, X, y, event, _learn)


# ---------------------------------------------------------------------------- prediction
def _scores(est, ev, data, idx):
    """The row's K scores (``FB``'s out block), or None when the general path must read it."""
    status = R.row_scores(data, idx, ev.tab)
    if status == R.OK:
        return ev.out
    if status == R.NONFINITE_X:
        raise ValueError("Input X contains NaN or infinity.")
    if status == R.BAD_INDEX:
        raise ValueError(f"a feature index is out of range [0, {ev.n_features})")
    if status == R.DUPLICATE:
        return None
    raise FloatingPointError(f"the kernel {est._kernel!r} gave NaN or infinity on these inputs")


def _general_predict(est, X):
    lab = est.predict(X)[0]
    return lab.item() if isinstance(lab, np.generic) else lab


def predict_one(est, x):
    """The label ``predict`` gives the row ``x``; None before the model learned two labels
    from a first call (River's convention)."""
    ev = event(est)
    if ev is not None:
        s = _scores(est, ev, *ER._entries(ev, x, False))
        if s is not None:
            return ER._label(ev, s)
    elif "classes_" not in est.__dict__:
        return None
    return _general_predict(est, ER._matrix(est, x))


def predict_entries(est, data, idx):
    """:func:`predict_one` of a row given as float64 values and int32 columns (the River
    adapter's rows)."""
    ev = event(est)
    if ev is not None:
        s = _scores(est, ev, data, idx)
        if s is not None:
            return ER._label(ev, s)
    return _general_predict(est, ER._csr(est.n_features_in_, data, idx))


def predict_proba_one(est, x):
    """{label: probability} as ``predict_proba`` gives the row ``x``; {} before learning."""
    ev = event(est)
    if ev is not None:
        s = _scores(est, ev, *ER._entries(ev, x, False))
        if s is not None:
            return ER._proba(est, ev, s)
    elif "classes_" not in est.__dict__:
        return {}
    return ER._proba_dict(est, est.predict_proba(ER._matrix(est, x))[0])


def predict_proba_entries(est, data, idx):
    """:func:`predict_proba_one` of a row given as float64 values and int32 columns."""
    ev = event(est)
    if ev is not None:
        s = _scores(est, ev, data, idx)
        if s is not None:
            return ER._proba(est, ev, s)
    return ER._proba_dict(est, est.predict_proba(ER._csr(est.n_features_in_, data, idx))[0])
