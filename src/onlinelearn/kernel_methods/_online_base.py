"""The plumbing shared by the kernel online learners (:mod:`._online`): validation, label growth,
the support set and its budget, the averaged read-out and the snapshots of the shell's
transaction, in :class:`KernelOnlineClassifier` (with the kept dual and the model files of
:mod:`._online_state`); each learner only declares its step.  The compiled pass is
:func:`onlinelearn._core.kernel.online.kernel_pass`.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core.kernel import online as O
from ..kernels import Precomputed, as_kernel
from ..kernels._program import Program, Rows
from ..shell import validation as V
from ..shell.meta import (
    ScoresClassifier,
    counter,
    decision_values,
    with_methods,
)
from ..shell.online import Call, ProgressiveMixin, check_predict_with
from ..shell.params import SHARED, Param, constraints_of, param_names, validate_once
from ..shell.snapshot import restore_attrs, save_attrs
from ..shell.state_columns import GrowingLabelsMixin, spread_columns
from ..shell.weights import ExampleWeightsMixin
from . import _events
from ._online_state import KernelOnlineState, json_params, params_from_json

__all__ = [
    "KERNEL_ONLINE", "KernelOnlineClassifier", "json_params", "kernel_param", "params_from_json",
]  # fmt: skip

_RULES = {"oldest": O.REMOVE_OLDEST, "smallest": O.REMOVE_SMALLEST}
#: the pass computes every kernel value itself (``kernel_pass``'s ``kv``)
_NO_VALUES = np.zeros(0)

#: the declarations of the kernel learners' parameters (:mod:`onlinelearn.shell.params`): the
#: shared ones (averaged by default, as the linear twins), the kernel (checked when learning
#: starts: names and objects, no functions) and the budget of the online learners
KERNEL_ONLINE = {
    **SHARED,
    "average": SHARED["average"](True),
    "kernel": Param("rbf", "no_validation"),
    "budget": Param(None, Interval(numbers.Integral, 1, None, closed="left"), None),
    "removal": Param("oldest", StrOptions(set(_RULES))),
}
#: the parameters of every kernel online learner, after its step's
COMMON = (
    "budget removal n_epochs shuffle average random_state fit_intercept intercept_scaling "
    "class_weight"
)
_STATE = (
    "classes_", "n_features_in_", "feature_names_in_", "_prog", "_sparse_input", "_st",
    "_pool_d", "_pool_i", "_sv_lo", "_sv_hi", "_sv_norm", "_sv_kxx", "_coef", "_A", "_last",
    "_born", "_label", "_sv_src", "class_counts_", "_validated",
)  # fmt: skip
#: setting one of these (or a parameter) drops the kept event state (``_events``): the class
#: counts and the parameters found valid are not part of it
_EVENT_STATE = frozenset(_STATE) - {"class_counts_", "_validated"}
_SLOT_ARRAYS = ("_sv_lo", "_sv_hi", "_sv_norm", "_sv_kxx", "_coef", "_A", "_last", "_born",
                "_label", "_sv_src")  # fmt: skip


def _writable(a):
    """``a`` itself, or a copy when it is read-only (e.g. memory-mapped): the compiled core then
    sees one array type and is compiled once, and a pass may write into the state."""
    return a if a.flags.writeable else a.copy()


def kernel_param(kernel, what):
    """The estimator's kernel as a Kernel (names and objects accepted; functions refused)."""
    return as_kernel(kernel, f"{type(what).__name__}: kernel")


@with_methods(KernelOnlineState, ProgressiveMixin, GrowingLabelsMixin, ExampleWeightsMixin)
class KernelOnlineClassifier(ScoresClassifier):
    """Base of the kernel online learners. Not for direct use (see the subclasses).

    Class weights follow the linear learners' rules (:class:`ExampleWeightsMixin`): exact
    counts in fit, running counts (this row included) in partial_fit; 'balanced' = n /
    (n_classes n_c)."""

    _always_multiclass = False

    _parameter_constraints: dict = constraints_of(
        {n: KERNEL_ONLINE[n] for n in ("kernel " + COMMON).split()}
    )

    # ------------------------------------------------------------------ hooks
    def _step(self):
        """(step code, C, gamma) for the core."""
        raise NotImplementedError

    # ------------------------------------------------------------------ validation
    def _validate(self):
        """Parameter checks, once while the parameters stay the same (``validate_once``)."""
        validate_once(self, self._validate_all_params, "_validated")

    def _validate_all_params(self):
        self._validate_params()
        if isinstance(self.budget, (bool, np.bool_)):
            raise ValueError(f"budget must be an integer >= 1 or None, got {self.budget!r}")
        if isinstance(self.class_weight, dict):
            for lab, val in self.class_weight.items():
                if not (isinstance(val, numbers.Real) and np.isfinite(val) and val >= 0):
                    raise ValueError(f"class_weight[{lab!r}] = {val!r}: must be finite and >= 0")
        k = kernel_param(self.kernel, self)
        if isinstance(k, Precomputed):
            raise ValueError(
                f"{type(self).__name__} needs a kernel on vectors: a precomputed Gram matrix "
                "cannot hold the rows of a growing support set. Use KernelSVC for 'precomputed'."
            )

    @property
    def _kernel(self):
        return kernel_param(self.kernel, self)

    # ------------------------------------------------------------------ one event at a time
    #: ``partial_fit`` on one row of a known label: the event road (shell.online, ._events)
    _event_partial_fit = _events.partial_fit_row
    learn_one = _events.learn_one
    predict_one = _events.predict_one
    predict_proba_one = _events.predict_proba_one
    #: the River adapter's per-event calls on rows of entries (``onlinelearn.river``)
    _event_road = _events

    def __setattr__(self, name, value):
        if name in _EVENT_STATE or name in param_names(type(self)):
            self.__dict__.pop("_event", None)  # built again from the new value
        super().__setattr__(name, value)

    # ------------------------------------------------------------------ state
    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_event", None)  # addresses of this process (._events)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.pop("_event", None)
        # an estimator unpickled from read-only memory maps gets arrays it can write to
        for name, value in list(self.__dict__.items()):
            if isinstance(value, np.ndarray):
                self.__dict__[name] = _writable(value)
        prog = self.__dict__.get("_prog")
        if prog is not None:
            prog.ops, prog.par, prog.ranges = map(_writable, (prog.ops, prog.par, prog.ranges))

    def _rows(self, X):
        """X (validated) in the form of the compiled program, on writable arrays."""
        rows = self._prog.rows(X)
        rows.data, rows.indices, rows.indptr = map(_writable, (rows.data, rows.indices,
                                                               rows.indptr))  # fmt: skip
        return rows

    @property
    def _b2(self):
        return float(self.intercept_scaling) ** 2 if self.fit_intercept else 0.0

    def _binary(self):
        return self._coef.shape[1] == 1 and not self._always_multiclass

    def _init_state(self, classes, n_features, sparse):
        self.classes_ = classes
        self._prog = Program(self._kernel, n_features)
        self._sparse_input = bool(sparse)
        n_cols = 1 if (len(classes) <= 2 and not self._always_multiclass) else len(classes)
        L = self._prog.ranges.shape[0]
        self._pool_d = np.zeros(0)
        self._pool_i = np.zeros(0, dtype=np.int32)
        self._sv_lo = np.zeros(0, dtype=np.int64)
        self._sv_hi = np.zeros(0, dtype=np.int64)
        self._sv_norm = np.zeros((0, L))
        self._sv_kxx = np.zeros(0)
        self._coef = np.zeros((0, n_cols))
        self._A = np.zeros((0, n_cols))
        self._last = np.zeros(0)
        self._born = np.zeros(0)
        self._label = np.zeros(0, dtype=np.int64)
        self._sv_src = np.zeros(0, dtype=np.int64)
        self._st = np.zeros(O.N_ST)
        if not self._keeps_dual():
            self._st[O.DUAL] = np.nan
        self.class_counts_ = np.zeros(len(classes), dtype=np.int64)

    @property
    def _n_sv(self):
        return int(self._st[O.N_SV])

    def _compact(self):
        n = self._n_sv
        nnz = int((self._sv_hi[:n] - self._sv_lo[:n]).sum())
        d = np.empty(nnz)
        i = np.empty(nnz, dtype=np.int32)
        p = np.empty(n + 1, dtype=np.int64)
        O.compact_pool(self._pool_d, self._pool_i, self._sv_lo, self._sv_hi, n, d, i, p)
        return d, i, p

    def _ensure_capacity(self, n_rows, nnz):
        """Room for ``n_rows`` more slots (at most the budget) and ``nnz`` more pool entries.

        Both grow with room to spare, so that a stream of one-row calls that insert vectors
        reallocates rarely: the slots double (up to the budget), and the pool, when compacted,
        gets as much room again as its live entries (half as much with a budget, where a
        removal leaves its entries behind until the next compaction).  Before, with a budget,
        the slots grew by one and the pool was compacted at every call after an insertion."""
        n = self._n_sv
        need = n + n_rows if self.budget is None else min(self.budget, n + n_rows)
        cap = self._coef.shape[0]
        if need > cap:
            new_cap = max(need, 2 * cap)
            if self.budget is not None:
                new_cap = min(self.budget, new_cap)
            for a in _SLOT_ARRAYS:
                old = getattr(self, a)
                new = np.zeros((new_cap,) + old.shape[1:], dtype=old.dtype)
                new[:n] = old[:n]
                setattr(self, a, new)
        used = int(self._st[O.POOL_USED])
        live = int((self._sv_hi[:n] - self._sv_lo[:n]).sum())
        if used + nnz > self._pool_d.shape[0] or used > 2 * live + 1024:
            d, i, p = self._compact()
            size = live + nnz + ((live + nnz) if self.budget is None else (live + nnz) // 2)
            self._pool_d = np.zeros(size)
            self._pool_i = np.zeros(size, dtype=np.int32)
            self._pool_d[:live] = d
            self._pool_i[:live] = i
            self._sv_lo[:n] = p[:-1]
            self._sv_hi[:n] = p[1:]
            self._st[O.POOL_USED] = live

    def _flush(self):
        if self.average:
            O.flush_average(self._coef, self._A, self._last, self._st[O.S_CLOCK], self._n_sv)

    def _move_columns(self, pos, K_new):
        self._flush()
        n_old = len(self.classes_)
        if self._always_multiclass or K_new > 2:
            # a binary model's one column c (class 1 against class 0) -> (-c/2, c/2); one known
            # class of a binary model has no coefficients yet
            split = self._binary() and n_old == 2
            if split:
                # the same dual variables, halved (tau_t / 2), on the multiclass hinge:
                # sum gamma tau and ||f||^2 halve, the PA-II terms tau^2 / (4 C) quarter
                q = self._st[O.DUAL_QUAD]
                self._st[O.DUAL] = 0.5 * self._st[O.DUAL] + 0.25 * q
                self._st[O.DUAL_QUAD] = 0.25 * q
            keep = pos if n_old >= 2 or self._always_multiclass else pos[:0]
            self._coef = spread_columns(self._coef, keep, K_new, split)
            self._A = spread_columns(self._A, keep, K_new, split)
        self._label[: self._n_sv] = pos[self._label[: self._n_sv]]

    def _shrink(self):
        """A budget lowered since the last call: remove vectors by ``removal`` down to it."""
        O.shrink(int(self.budget), _RULES[self.removal], self._sv_lo, self._sv_hi, self._sv_norm,
                 self._sv_kxx, self._coef, self._A, self._last, self._born, self._label,
                 self._sv_src, np.zeros(0, dtype=np.int64), self._st)  # fmt: skip

    def _snapshot(self):
        return save_attrs(self, _STATE, copy.deepcopy)

    def _restore(self, snap):
        self.__dict__.pop("_event", None)
        restore_attrs(self, _STATE, snap)

    # ------------------------------------------------------------------ the pass
    def _run(self, rows, nnz, y_codes, weights, order, pred, loss, slot_of_row,
             predict_average=False):  # fmt: skip
        if len(self.classes_) < 2:
            pred[order] = 0
            loss[order] = 0.0
            self._st[O.T] += len(order)
            if self.average:
                self._st[O.S_CLOCK] += len(order)
            return
        self._ensure_capacity(rows.n_rows, nnz)
        step, C, gamma = self._step()
        keep_dual = self._keeps_dual()
        K = self._coef.shape[1]
        prog = self._prog
        status = O.kernel_pass(
            rows.data, rows.indices, rows.indptr, rows.n_cols, rows.dense, rows.norms,
            y_codes, weights, order, prog.ops, prog.par, prog.ranges, self._b2,
            step, C, gamma, self._binary(), bool(self.average),
            0 if self.budget is None else int(self.budget), _RULES[self.removal],
            self._pool_d, self._pool_i, self._sv_lo, self._sv_hi, self._sv_norm, self._sv_kxx,
            self._coef, self._A, self._last, self._born, self._label, self._sv_src,
            slot_of_row, self._st, pred, loss,
            np.zeros(K), np.zeros(K), np.zeros(K, dtype=np.int64), np.zeros(K),
            np.zeros(prog.ops.shape[0] + 1), bool(predict_average), np.zeros(K),
            keep_dual, self._dual_margin(), _NO_VALUES,
        )  # fmt: skip
        if status == O.FULL:  # pragma: no cover - capacity is reserved above
            raise RuntimeError("internal error: support set capacity exhausted")
        n = self._n_sv
        if status == O.NONFINITE or not np.isfinite(self._coef[:n]).all():
            raise FloatingPointError(
                f"{type(self).__name__}: the kernel {self._kernel!r} gave NaN or infinity (or a "
                "coefficient overflowed). The model was left as it was before this call. Scale "
                "the features or the kernel's parameters (e.g. a smaller gamma)."
            )
        if not keep_dual:
            self._st[O.DUAL] = np.nan  # this pass's rounds are not in any kept dual

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap,
               predict_with="current"):  # fmt: skip
        """The family's set-up of a call (:mod:`onlinelearn.shell.online`).

        ``predict_with`` (``partial_fit_predict``): ``'current'``, the current iterate f_t, the
        learner's own prediction (its mistakes are ``n_mistakes_``), also when
        ``average=True``; ``'average'`` (needs ``average=True``), the averaged hypothesis in
        force before each row, i.e. what :meth:`predict` would say row by row (the linear
        learners' option, with the same meaning); learning is the same either way."""
        predict_average = check_predict_with(self, predict_with)
        self._validate()
        X, y, sw = V.check_batch(self, X, y, sample_weight, reset=first)
        new_classes = V.grown_labels(None if first else self.classes_, y, classes)
        if first:
            self._init_state(new_classes, X.shape[1], sp.issparse(X))
        else:
            if self._kernel != self._prog.kernel:
                raise ValueError(
                    f"the kernel changed since the model was fitted ({self._prog.kernel!r} "
                    f"-> {self._kernel!r}); partial_fit continues one model: call fit to "
                    "start again with the new kernel."
                )
            self._grow(new_classes)
            if self.budget is not None and self._n_sv > self.budget:
                self._shrink()
        rows = self._rows(X)
        y_codes = np.searchsorted(self.classes_, y).astype(np.int64)
        n = rows.n_rows
        counts = np.bincount(y_codes, minlength=len(self.classes_)) if fit_mode else None
        return Call(
            n=n, rows=rows, nnz=int(np.count_nonzero(rows.data)), y_codes=y_codes,
            sw=self._example_weights(y_codes, sw, counts), predict_average=predict_average,
            pred=np.zeros(n, dtype=np.int64), loss=np.zeros(n),
            slot_of_row=np.full(n, -1, dtype=np.int64),
        )  # fmt: skip

    def _epoch(self, call, order):
        """One compiled pass (:meth:`_run`) over ``order`` (None: the rows in their order)."""
        if order is None:
            order = np.arange(call.n, dtype=np.int64)
        self._run(call.rows, call.nnz, call.y_codes, call.sw, order, call.pred, call.loss,
                  call.slot_of_row, call.predict_average)  # fmt: skip

    def _finish(self, call):
        self._sv_src[: self._n_sv] = -1  # rows of this batch are not rows of the next
        self._count_classes(call.y_codes)
        return self.classes_[call.pred]

    def _coef_in_use(self):
        """(n_sv, n_cols) coefficients of the hypothesis used by predict (averaged when
        ``average``: (1/T) sum over rounds of the coefficients after each round)."""
        n = self._n_sv
        if not self.average:
            return self._coef[:n]
        T = self._st[O.T]
        if T <= 0:
            return np.zeros_like(self._coef[:n])
        S = self._st[O.S_CLOCK]
        return (self._A[:n] + self._coef[:n] * (S - self._last[:n])[:, None]) / T

    def _sv_rows(self):
        d, i, p = self._compact()
        r = Rows()
        r.data, r.indices, r.indptr = d, i, p
        r.n_rows, r.n_cols, r.dense = self._n_sv, self._prog.n_cols, False
        r.norms = np.ascontiguousarray(self._sv_norm[: self._n_sv])
        return r

    def _raw_scores(self, X):
        check_is_fitted(self, "classes_")
        X = V.check_X(self, X, reset=False)
        rows = self._rows(X)
        coef = self._coef_in_use()
        if coef.shape[0] == 0:
            return np.zeros((rows.n_rows, coef.shape[1]))
        Kx = self._prog.block(rows, self._sv_rows())
        scores = Kx @ coef + self._b2 * coef.sum(axis=0)
        if not np.isfinite(scores).all():
            raise FloatingPointError(
                f"the kernel {self._kernel!r} gave NaN or infinity on these inputs"
            )
        return scores

    def decision_function(self, X):
        """f_k(x) = sum_s c_sk (k(x_s, x) + b^2): shape (n,) for a binary learner (positive
        means ``classes_[1]``), (n, n_classes) otherwise."""
        return decision_values(self._raw_scores(X), len(self.classes_))

    # ------------------------------------------------------------------ attributes
    @property
    def support_vectors_(self):
        """The support vectors, shape (n_SV, n_features): CSR when fitted on CSR input."""
        check_is_fitted(self, "classes_")
        d, i, p = self._compact()
        M = sp.csr_matrix((d, i, p), shape=(self._n_sv, self._prog.n_cols))
        M = M[:, : self.n_features_in_]
        return M.tocsr() if self._sparse_input else M.toarray()

    @property
    def dual_coef_(self):
        """Coefficients c_s of the support vectors, shape (n_columns, n_SV): one row for a
        binary learner, one per class otherwise (averaged when ``average``)."""
        check_is_fitted(self, "classes_")
        return np.array(self._coef_in_use().T, order="C")

    @property
    def intercept_(self):
        """b^2 sum_s c_s per column: the bias, the weight of the constant feature times b."""
        check_is_fitted(self, "classes_")
        return self._b2 * self._coef_in_use().sum(axis=0)

    @property
    def n_support_(self):
        """Number of support vectors of each class (by the label of the example)."""
        check_is_fitted(self, "classes_")
        return np.bincount(self._label[: self._n_sv], minlength=len(self.classes_))

    def _stats(self):
        check_is_fitted(self, "classes_")
        return self._st

    n_updates_ = counter(O.N_UPDATES)
    n_mistakes_ = counter(O.N_MISTAKES)
    t_ = counter(O.T)
    n_removed_ = counter(O.N_REMOVED, "Support vectors removed to respect the budget.")
