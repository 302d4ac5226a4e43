"""One event at a time for the kernel online learners (KernelPerceptron, KernelPassiveAggressive,
KernelCOPA): ``learn_one``, ``predict_one``, ``predict_proba_one`` and ``partial_fit`` on one
row, straight to the compiled step.

The skeleton of :mod:`onlinelearn.shell.events` (the same rows, labels, River conventions and
errors), filled in by :class:`KernelEvent` on the kernel learners' state: the event keeps what
cannot change between two events (the step's codes, the buffers, and the table of addresses
through which the compiled functions reach the support set: :mod:`onlinelearn._core.table`),
built on the first event after anything changed and dropped whenever a parameter or a state
array is set (``KernelOnlineClassifier.__setattr__``, ``_restore``; it is never pickled or
copied); when a row needs room (``_ensure_capacity``) its table is made again on the new
arrays.  One event is one compiled call, :func:`~onlinelearn._core.kernel.one_row.learn_row`:
the pass of ``partial_fit`` on a one-row batch inside a compiled transaction, then the class
count and the probability calibration's bookkeeping, the same steps in the same order as
``partial_fit``; so the model is bit for bit the one ``partial_fit`` gives on the same one-row
batches (a 1-D row: the (1, d) array; a dict or sparse row: the CSR row of its entries).

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
from ..shell import events as E
from ..shell.online import OnlineMixin

__all__ = [
    "KernelEvent", "event", "learn_entries", "learn_one", "partial_fit_row", "predict_entries",
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
#: then the class counts and the calibration's counters (one_row.COUNTS, one_row.CAL_N)
_COUNTERS = (("class_counts_", _I64, 1), ("_n", _I64, 1))


class KernelEvent(E.Event):
    """What one event of a fitted kernel online learner needs (module docstring)."""

    __slots__ = ("tab", "arrays", "ib", "fb", "kv", "cu", "rest", "out", "st", "coef", "pool_d",
                 "b2", "K", "counts", "cal")  # fmt: skip

    state_key = "_coef"

    @classmethod
    def build(cls, est, d, classes):
        from ._online_base import _RULES, KernelOnlineClassifier

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
        ev = cls()
        ev.ib = np.zeros(n_ib, dtype=np.int64)
        ev.fb = np.zeros(n_fb)
        ev.ib[: len(ints)] = [int(v) for v in ints]
        ev.ib[R.I_CAL_REFIT], ev.ib[R.I_CAL_STRIDE] = _wants_one(nf * (1 if kind == "binary"
                                                                       else len(classes)))
        ev.fb[: len(floats)] = floats
        ev.kv = ev.cu = ev.tab = ev.cal = None
        ev.counts = d.get("class_counts_")
        ev.out = ev.fb[R.F_K + 4 * K : R.F_K + 5 * K]
        ev.rest = [np.zeros(nf), np.zeros(nf, dtype=np.int32), np.zeros(nf),
                   np.zeros(nf, dtype=np.int32), np.zeros(slots_f), np.zeros(slots_i, np.int64),
                   np.zeros(saved_f), np.zeros(saved_i, np.int32), np.zeros((1, L)),
                   np.zeros(2 * nf)]  # fmt: skip
        if not _attach(est, ev, ev.counts, None):
            return None
        ev.b2 = float(est._b2)
        ev.K = K
        # the road learns only what partial_fit would learn with its own arguments alone
        cls_ = type(est)
        learns = (
            est.class_weight is None
            and cls_.partial_fit is OnlineMixin.partial_fit
            and cls_._learn is KernelOnlineClassifier._learn
            and cls_._run is KernelOnlineClassifier._run
            and cls_._ensure_capacity is KernelOnlineClassifier._ensure_capacity
        )
        # (one_row: a dense row has no indices)
        return ev.start(est, classes, kind, est._binary(), np.zeros(0, dtype=np.int32), learns)

    def current(self, d):
        """(Setting a state array drops the event; the identities checked here guard the arrays
        the table points into against a write of the estimator's ``__dict__`` that bypassed
        that.)"""
        return self.st is d.get("_st") and self.coef is d.get("_coef") and self.pool_d is d.get(
            "_pool_d")  # fmt: skip

    def step(self, est, data, idx, code, cal):
        """The compiled step on one row with the class count and the calibration's counter (in
        the same compiled call), then the score of a row the calibration asked for."""
        counts = est.__dict__.get("class_counts_")
        if (counts is not self.counts or cal is not self.cal) and not _attach(est, self, counts,
                                                                            cal):  # fmt: skip
            return False
        status = R.learn_row(data, idx, code, self.tab)
        if status == R.NEED_ROOM:
            _, status = _with_room(est, self, data, idx, code)
        if status != R.OK:
            if status == R.BAD_INDEX:
                raise self.out_of_range()
            return False  # non-finite values, an overflow, a repeated index: the general path
        if self.ib[R.I_SCORED]:
            E.offer(cal, _score_before(self), code)
        return True

    def label(self, est, data, idx):
        k = R.row_label(data, idx, self.tab)
        if k >= 0:
            return self.plain[k]
        return E.Event.label(self, est, data, idx)  # (raises: the reason; or MISS)

    def scores(self, est, data, idx):
        """The row's K scores (``FB``'s out block), or None when the general path must read
        it."""
        status = R.row_scores(data, idx, self.tab)
        if status == R.OK:
            return self.out
        if status == R.NONFINITE_X:
            raise E.nonfinite_x()
        if status == R.BAD_INDEX:
            raise self.out_of_range()
        if status == R.DUPLICATE:
            return None
        raise FloatingPointError(
            f"the kernel {est._kernel!r} gave NaN or infinity on these inputs")


#: the calibration's counters when none is fed
_NO_CAL = np.zeros(0, dtype=np.int64)


def _wants_one(n_weights):
    """``Calibration.wants(1, n_weights)`` as (REFIT, stride) for the compiled step: a row is
    scored while the window holds fewer than REFIT rows, then when the rows offered cross a
    multiple of the stride."""
    from ..shell.calibration import MAX_STRIDE, PER_CALL, REFIT, STRIDE_WEIGHTS, THIN

    refit = REFIT if PER_CALL > 1 else np.iinfo(np.int64).max  # (a one-row call >= PER_CALL)
    return refit, max(min(MAX_STRIDE, n_weights // STRIDE_WEIGHTS), THIN)


def _attach(est, ev, counts=None, cal=None, again=False):
    """The table of ``ev`` on the estimator's arrays as they are now, the class counts
    ``counts`` and the calibration ``cal`` (None: none fed; ``again``: those of the last
    table), the buffers of the support set's capacity grown with it (the kernel values kept:
    ``_ensure_capacity`` moves no vector); False when an array is not one the table can
    take."""
    d = est.__dict__
    if again:
        counts, cal = ev.counts, ev.cal
    state = [d.get(name) for name, _, _ in _ARRAYS]
    cal_n = _NO_CAL if cal is None else cal._n
    for a, (_, dtype, ndim) in zip(state + [counts, cal_n], _ARRAYS + _COUNTERS, strict=True):
        if type(a) is not np.ndarray or a.dtype != dtype or a.ndim != ndim:
            return False
    cap, K = state[R.COEF].shape
    if ev.kv is None or ev.kv.shape[0] < cap + 1:
        kv = np.zeros(cap + 1)
        if ev.kv is not None:
            kv[: ev.kv.shape[0]] = ev.kv
        ev.kv, ev.cu = kv, np.zeros((cap, K))
    prog = d["_prog"]
    arrays = (state + [prog.ops, prog.par, prog.ranges, ev.ib, ev.fb, ev.kv, ev.cu] + ev.rest
              + [counts, cal_n])  # fmt: skip
    try:
        ev.tab = R.table(arrays, None if ev.tab is None else (ev.arrays, ev.tab))
    except ValueError:
        return False  # a read-only or non-contiguous array: the general path
    ev.arrays = arrays
    ev.counts, ev.cal = counts, cal
    ev.st, ev.coef, ev.pool_d = d["_st"], state[R.COEF], d["_pool_d"]
    return True


# ---------------------------------------------------------------------------- learning
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
        if _attach(est, ev, again=True):
            status = R.learn_row(data, idx, code, ev.tab)
    finally:
        if status != R.OK:
            d.update(refs)
            for a, v in values.items():
                refs[a][...] = v
        if _attach(est, ev, again=True):
            d["_event"] = ev
    return ev, status


def _score_before(ev):
    """The calibration's score of the row: ``decision_function`` of the model before the step
    on the row (``KernelOnlineClassifier._raw_scores``: K(x, SV) @ coef + b^2 sum(coef), the
    same numpy calls on the kernel values and coefficients the step left), as
    ``ProbabilityMixin._calibrate_after`` keeps it; None when it is not finite (left out)."""
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
            return None
        return s0 if ev.K == 1 else s1 - s0
    return raw if np.isfinite(raw).all() else None


(event, learn_one, learn_entries, partial_fit_row, predict_one, predict_entries,
 predict_proba_one, predict_proba_entries) = E.road(KernelEvent)  # fmt: skip
