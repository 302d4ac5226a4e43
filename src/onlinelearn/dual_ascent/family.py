"""The dual ascent family: the learners whose rounds raise the dual over several variables.

A configuration of the framework (link, loss, step) whose step keeps past rounds' dual
variables (:class:`~onlinelearn.framework.LastK`, :class:`~onlinelearn.framework.RowAction`,
:class:`~onlinelearn.framework.FTRL`, :class:`~onlinelearn.framework.SelfTuned`,
:class:`~onlinelearn.framework.StronglyConvex`, :class:`~onlinelearn.framework.LipschitzTuned`)
with the hinge loss, or :class:`~onlinelearn.framework.LossTuned` with the squared hinge, runs here:
:class:`DualAscentFamily` is everything such an estimator does (state, the compiled passes of
:mod:`onlinelearn._core.dual_window` and :mod:`onlinelearn._core.dual_tuned`, read-out, model
files), driven by the estimator's ``_configuration()`` and its five common parameters
(``n_epochs``, ``shuffle``, ``random_state``, ``fit_intercept``, ``intercept_scaling``), and
its ``class_weight`` where it has one (a multiplier of each example's cap, as
``sample_weight``).
:class:`onlinelearn.DualAscentClassifier` is its preset; :class:`onlinelearn.OnlineLearner`
routes to it when its step is one of these (:mod:`onlinelearn.engine._route`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from .._core import dual_ascent as DA
from .._core import links as L
from ..framework.links import Entropy, Euclidean, PNorm
from ..framework.losses import Hinge, SquaredHinge
from ..framework.steps import (
    FTRL,
    LastK,
    LipschitzTuned,
    LossTuned,
    RowAction,
    SelfTuned,
    StronglyConvex,
)
from ..shell import validation as V
from ..shell.meta import (
    ScoresClassifier,
    counter,
    estimator_from_meta,
    state_meta,
    with_methods,
)
from ..shell.online import Call, ProgressiveMixin
from ..shell.params import validate_once
from ..shell.readout import WeightsReadoutMixin
from ..shell.snapshot import restore_attrs, save_attrs
from ..shell.weights import ExampleWeightsMixin
from ._grow import grow_labels

__all__ = ["STEPS", "DualAscentFamily", "Plan", "check_dual_ascent_configuration", "plan_of"]

#: the steps of the family and the codes of the compiled passes
STEPS = {LastK: DA.LASTK, RowAction: DA.ROWACTION, FTRL: DA.FTRL, SelfTuned: DA.SELFTUNED,
         StronglyConvex: DA.STRONGLY, LipschitzTuned: DA.LIPSCHITZ,
         LossTuned: DA.LOSSTUNED}  # fmt: skip
_WINDOW = (LastK, RowAction, FTRL)
_VARIANTS = {"PA": DA.PA, "PA-I": DA.PA1, "PA-II": DA.PA2}
_RULES = {"optimal": DA.OPTIMAL, "subgradient": DA.SUBGRADIENT}
#: what a call may change (the arrays in ``_state`` are copied by a snapshot)
_STATE = ("classes_", "n_features_in_", "feature_names_in_", "class_counts_", "_state")
_DEFAULT_ETA = Entropy().eta


def check_dual_ascent_configuration(link, loss, step):
    """Raise a ValueError when (link, loss, step) is not a configuration of this family (or
    asks for something it cannot honour); None when it is."""
    if type(step) not in STEPS:
        raise ValueError(f"{step!r} is not a step of the dual ascent family")
    if isinstance(step, LossTuned):
        if type(loss) is not SquaredHinge:
            raise ValueError(
                "LossTuned (thesis Theorem 2: c_t from the observed losses) needs a "
                "self-bounded loss: pass SquaredHinge(margin); the hinge loss is not "
                f"self-bounded and has no guarantee with this rule; got {loss!r}"
            )
    elif type(loss) is not Hinge:
        raise ValueError(
            f"the dual ascent steps ({type(step).__name__}) run the hinge loss Hinge(margin) "
            f"(LossTuned: SquaredHinge(margin)); got {loss!r}"
        )
    if not isinstance(link, (Euclidean, Entropy, PNorm)):
        raise ValueError(f"unknown link {link!r}")
    if isinstance(link, Entropy) and (
        not link.balanced or link.self_tuned or link.eta != _DEFAULT_ETA
    ):
        raise ValueError(
            "the dual ascent steps use the balanced relative entropy with their own c "
            f"(1/C or c_t): pass Entropy() with its defaults, got {link!r}"
        )
    window = isinstance(step, _WINDOW)
    if window and not isinstance(link, Euclidean):
        if isinstance(step, FTRL) or (isinstance(step, LastK) and step.k > 1):
            raise ValueError(
                f"{type(step).__name__} with k > 1 is implemented for link='euclidean' "
                "(Euclidean()) only; use RowAction(k) (step='row-action', any k) with the "
                "entropy or p-norm link."
            )
        if step.variant != "PA-I":
            raise ValueError(f"link={link!r} takes the box constraint of variant='PA-I' only.")
    if not window and step.update == "subgradient" and step.k > 1:
        raise ValueError(
            "update='subgradient' takes one fixed step per round (Fig. 4.1); the row-action "
            "window (k > 1) of the growing-c steps needs update='optimal'."
        )
    if window and step.variant == "PA" and not (not isinstance(step, FTRL) and step.k == 1):
        raise ValueError(
            "variant='PA' (no slack) needs a single dual variable per round (k=1): with "
            "several, the hard-margin problem is unbounded as soon as two of them conflict. "
            "Use variant='PA-I' or 'PA-II'."
        )


@dataclass(frozen=True)
class Plan:
    """What the compiled passes and the read-out read, from one configuration."""

    step: object
    window: bool  # the SVM-form window kernel (Euclidean steps at a fixed c)
    fixed_c: bool  # a window step (c = 1/C), on any link
    k: int
    link: int
    p: float | None
    margin: float
    squared: bool = False  # the squared hinge (LossTuned)

    @property
    def step_code(self):
        return STEPS[type(self.step)]


def plan_of(link, loss, step) -> Plan:
    fixed_c = isinstance(step, _WINDOW)
    return Plan(
        step=step,
        window=fixed_c and isinstance(link, Euclidean),
        fixed_c=fixed_c,
        k=int(getattr(step, "k", 1)),
        link=L.EUCLID if isinstance(link, Euclidean) else (
            L.ENTROPY if isinstance(link, Entropy) else L.PNORM),
        p=link.p if isinstance(link, PNorm) else None,
        margin=float(loss.margin),
        squared=isinstance(loss, SquaredHinge),
    )  # fmt: skip


@with_methods(ProgressiveMixin, WeightsReadoutMixin, ExampleWeightsMixin)
class DualAscentFamily(ScoresClassifier):
    """Everything an estimator of the dual ascent family does, from its ``_configuration()``
    (see the module docstring; the math is :class:`onlinelearn.DualAscentClassifier`'s)."""

    def _plan(self) -> Plan:
        """The plan of the configuration, built again only when a parameter changed (a stream
        of small batches builds it once)."""

        def build():
            self.__dict__["_plan_cache"] = plan_of(*self._configuration())

        validate_once(self, build, attr="_plan_params")
        return self.__dict__["_plan_cache"]

    def _class_weight_mode(self):
        return getattr(self, "class_weight", None)

    def _p_value(self, plan=None):
        plan = self._plan() if plan is None else plan
        if plan.p is not None:
            return float(plan.p)
        return max(2.0, 2.0 * np.log(max(self._state["V"].size, 2)))

    # ------------------------------------------------------------------ state
    def _init_state(self, classes, n_features, plan):
        self.classes_ = classes
        self.class_counts_ = np.zeros(len(classes), dtype=np.int64)
        R = n_features + (1 if self.fit_intercept else 0)
        K = 1 if len(classes) <= 2 else len(classes)
        self._state = {
            "theta" if plan.window else "V": np.zeros((R, K)),
            "Sd": np.zeros(0),
            "Sx": np.zeros(0, dtype=np.int64),
            "Sp": np.zeros(1, dtype=np.int64),
            "Sf": np.zeros((0, DA.N_SF)),
            "Si": np.zeros((0, DA.N_SI), dtype=np.int64),
            "dual": np.zeros(0),
            "st": np.zeros(DA.N_ST),
        }

    def _reserve(self, batch, n_rounds, plan):
        """Grow the store and the dual history so that ``n_rounds`` rows of ``batch`` fit."""
        S = self._state
        st = S["st"]
        T_ = int(st[DA.T])
        if S["dual"].shape[0] < T_ + n_rounds:
            new = np.zeros(max(2 * S["dual"].shape[0], T_ + n_rounds))
            new[:T_] = S["dual"][:T_]
            S["dual"] = new
        if not plan.window and plan.k == 1:
            return
        row_nnz = np.diff(batch.indptr)
        max_row = int(row_nnz.max()) if row_nnz.size else 0
        nst = int(st[DA.N_STORED])
        used = int(st[DA.STORE_NNZ])
        if isinstance(plan.step, FTRL):
            rows = nst + n_rounds
            nnz = used + int(row_nnz.sum()) * max(1, n_rounds // max(batch.n_rows, 1))
        else:
            rows = plan.k
            old_max = int(np.diff(S["Sp"][: nst + 1]).max()) if nst else 0
            nnz = plan.k * max(max_row, old_max)
        if S["Sf"].shape[0] < rows:
            for name, width in (("Sf", DA.N_SF), ("Si", DA.N_SI)):
                arr = np.zeros((rows, width), dtype=S[name].dtype)
                arr[:nst] = S[name][:nst]
                S[name] = arr
            Sp = np.zeros(rows + 1, dtype=np.int64)
            Sp[: nst + 1] = S["Sp"][: nst + 1]
            S["Sp"] = Sp
        if S["Sd"].shape[0] < nnz:
            for name in ("Sd", "Sx"):
                arr = np.zeros(max(nnz, 2 * S[name].shape[0]), dtype=S[name].dtype)
                arr[:used] = S[name][:used]
                S[name] = arr

    def _snapshot(self):
        snap = save_attrs(self, _STATE[:-1])
        snap.update(save_attrs(self, ("_state",), lambda S: {k: v.copy() for k, v in S.items()}))
        return snap

    def _restore(self, snap):
        restore_attrs(self, _STATE, snap)

    # ------------------------------------------------------------------ learning
    def _run(self, batch, y_codes, sw, order, pred, plan):
        S = self._state
        K = len(self.classes_)
        if K < 2:
            S["st"][DA.T] += len(order)
            pred[order] = 0
            return True
        step = plan.step
        scores = np.zeros(S["theta" if plan.window else "V"].shape[1])
        if plan.window:
            return DA.window_pass(
                batch.data, batch.indices, batch.indptr, y_codes, sw, order, S["theta"],
                S["Sd"], S["Sx"], S["Sp"], S["Sf"], S["Si"], S["dual"], S["st"],
                plan.step_code, plan.k, _VARIANTS[step.variant], float(step.C),
                plan.margin, self._intercept_value(), float(getattr(step, "tol", 1e-7)),
                int(getattr(step, "max_sweeps", 200)), pred, scores,
            )  # fmt: skip
        nst = int(S["st"][DA.N_STORED])
        nn = int(np.diff(batch.indptr).max()) if batch.n_rows else 0
        if nst:
            nn = max(nn, int(np.diff(S["Sp"][: nst + 1]).max()))
        n_buf = 2 * (nn + 1)
        return DA.tuned_pass(
            batch.data, batch.indices, batch.indptr, y_codes, sw, order, S["V"], S["st"],
            S["dual"], S["Sd"], S["Sx"], S["Sp"], S["Sf"], S["Si"], plan.k,
            DA.FIXEDC if plan.fixed_c else plan.step_code,
            DA.OPTIMAL if plan.fixed_c else _RULES[step.update], plan.link, plan.margin,
            1.0 / float(step.C) if plan.fixed_c else self._u_arg(step),
            self._sigma_arg(step), self._p_value(plan), self._intercept_value(),
            pred, scores, np.zeros(n_buf, dtype=np.int64), np.zeros(n_buf, dtype=np.int64),
            np.zeros(n_buf), plan.squared,
        )  # fmt: skip

    def _started(self):
        return "_state" in self.__dict__

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap):
        """The family's set-up of a call (:mod:`onlinelearn.shell.online`; each row of each
        pass is a round; the first call's labels or ``classes`` start the label set, later
        labels join it: :func:`onlinelearn.dual_ascent._grow.grow_labels`)."""
        self._check_params()
        plan = self._plan()
        X, y, sw = V.check_batch(self, X, y, sample_weight, reset=first)
        batch = V.CSRBatch(X)
        if classes is not None:
            classes = V.check_classes(classes, y)
        if first:
            self._init_state(V.grown_labels(None, y, classes), batch.n_cols, plan)
        else:
            if ("theta" in self._state) != plan.window:
                raise ValueError(
                    "the step's family changed since the model was fitted (a window step "
                    "on the Euclidean link keeps w, the others v): call fit to start afresh."
                )
            grow_labels(self, V.grown_labels(self.classes_, y, classes), plan)
        y_codes = np.searchsorted(self.classes_, y).astype(np.int64)
        n = batch.n_rows
        counts = np.bincount(y_codes, minlength=len(self.classes_)) if fit_mode else None
        sw = self._example_weights(y_codes, sw, counts)
        if fit_mode:
            self.class_counts_ = counts.astype(np.int64)
        else:
            self._count_classes(y_codes)
        self._reserve(batch, n * (self.n_epochs if fit_mode else 1), plan)
        missed = 0.0 if first else float(self._state["st"][DA.N_UNCONVERGED])
        return Call(n=n, batch=batch, y_codes=y_codes, sw=sw, plan=plan, missed=missed,
                    pred=np.zeros(n, dtype=np.int64))  # fmt: skip

    def _epoch(self, call, order):
        """One compiled pass (:meth:`_run`) over ``order`` (None: the rows in their order)."""
        if order is None:
            order = np.arange(call.n, dtype=np.int64)
        if not self._run(call.batch, call.y_codes, call.sw, order, call.pred, call.plan):
            raise FloatingPointError(
                f"{type(self).__name__}: a weight became infinite or NaN; the model was "
                "left as it was before this call. Scale the features or lower C."
            )

    def _finish(self, call):
        call.missed = float(self._state["st"][DA.N_UNCONVERGED]) - call.missed
        return self.classes_[call.pred]

    def _after(self, call, fit_mode):
        # (no super(): the family's methods also run on OnlineLearner, which routes to them)
        if call.missed > 0:
            self._warn_unconverged(int(call.missed), call.plan)

    def _warn_unconverged(self, missed, plan):
        """One ``ConvergenceWarning`` for the rounds of this call whose coordinate ascent (the
        window steps with k > 2, FTRL) stopped at ``max_sweeps`` before ``tol``."""
        step = plan.step
        warnings.warn(
            f"{type(self).__name__}: the coordinate ascent of {missed} round(s) of this call "
            f"stopped at max_sweeps={step.max_sweeps} sweeps before reaching tol={step.tol}, "
            "so their steps are not the optimum of their window problem (n_unconverged_ counts "
            "them over all calls); raise max_sweeps, or raise tol to accept a looser step.",
            ConvergenceWarning,
            stacklevel=4,
        )

    @staticmethod
    def _u_arg(step):
        """The kernel's ``U``: U of the growing-c steps; beta1 of LossTuned."""
        if isinstance(step, LossTuned):
            return float(step.beta1)
        return float(getattr(step, "U", 1.0))

    @staticmethod
    def _sigma_arg(step):
        """The kernel's ``sigma``: sigma of StronglyConvex; L of LipschitzTuned (0: observed);
        beta2 of LossTuned."""
        if isinstance(step, LipschitzTuned):
            return 0.0 if step.L is None else float(step.L)
        if isinstance(step, LossTuned):
            return float(step.beta2)
        return float(getattr(step, "sigma", 1.0))

    # ------------------------------------------------------------------ read-out
    def _c_next(self, plan):
        st = self._state["st"]
        step = plan.step
        if plan.fixed_c:
            return 1.0 / float(step.C)
        if isinstance(step, StronglyConvex):
            return float(step.sigma) * (st[DA.T] + 1.0)
        if isinstance(step, LossTuned):
            return float(step.beta2 * np.sqrt(step.beta1 + st[DA.CUM_LOSS]))
        if isinstance(step, LipschitzTuned):
            if step.L is not None:
                lt = float(step.L)
            else:
                kap = 1.0
                if self._state["V"].shape[1] > 1 and plan.link == L.EUCLID:
                    kap = np.sqrt(2.0)
                elif self._state["V"].shape[1] > 1 and plan.link == L.PNORM:
                    kap = 2.0 ** (1.0 / self._p_value(plan))
                lt = 0.5 * (kap * st[DA.X_T]) ** 2
            return float(np.sqrt((st[DA.T] + 1.0) * lt / step.U))
        return float(st[DA.X_T] * np.sqrt((st[DA.N_MISTAKES] + 1.0) / step.U))

    def _weights_matrix(self):
        check_is_fitted(self, "_state")
        if "theta" in self._state:
            return self._state["theta"]
        plan = self._plan()
        Vm = self._state["V"]
        c = self._c_next(plan)
        if c <= 0.0:
            return np.zeros_like(Vm)
        if plan.link == L.EUCLID:
            return Vm / c
        if plan.link == L.ENTROPY:
            th = Vm / c
            m = np.abs(th).max()
            ep, em = np.exp(th - m), np.exp(-th - m)
            return (ep - em) / (ep.sum() + em.sum())
        p = self._p_value(plan)
        nrm = np.linalg.norm(Vm.ravel(), ord=p)
        if nrm == 0.0:
            return np.zeros_like(Vm)
        th = Vm / nrm
        return np.sign(th) * np.abs(th) ** (p - 1.0) * nrm / ((p - 1.0) * c)

    coef_ = property(
        WeightsReadoutMixin.coef_.fget,
        doc="""Weights (1, n_features) for two classes, (n_classes, n_features) otherwise.

        Growing-c steps: w = grad f*(v / c) with the c of the next round as far as it is known
        (self-tuned: from the rows and mistakes so far; strongly convex: sigma (t + 1)).""",
    )
    intercept_ = WeightsReadoutMixin.intercept_

    def _intercept_value(self):
        return WeightsReadoutMixin._intercept_value(self)

    def _stats(self):
        check_is_fitted(self, "_state")
        return self._state["st"]

    t_ = counter(DA.T, "Rounds processed (all epochs and calls).")
    n_updates_ = counter(DA.N_UPDATES, "Rounds on which the dual (and so the weights) changed.")
    n_mistakes_ = counter(
        DA.N_MISTAKES, "Online mistakes (prediction before the update was wrong)."
    )
    n_unconverged_ = counter(
        DA.N_UNCONVERGED, "Rounds whose coordinate ascent hit ``max_sweeps`` before ``tol``."
    )

    @property
    def dual_objective_(self):
        """D of the run after the last round (thesis eq. 5.12; the window steps report it in
        the units of tau = alpha / c, i.e. C times the thesis's D)."""
        return float(self._stats()[DA.DUAL])

    @property
    def dual_coef_(self):
        """Dual variable of every round so far (tau_i, or alpha_i for the growing-c steps)."""
        return self._state["dual"][: self.t_].copy()

    def decision_function(self, X):
        """Scores <w_k, x> + b_k: (n,) for two classes (positive: ``classes_[1]``), else (n, K)."""
        scores = self._scores(X)
        if len(self.classes_) <= 2:
            return scores[:, 0]
        return scores

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        """(meta, arrays) describing the fitted model (docs/CONTRACT.md)."""
        check_is_fitted(self, "_state")
        arrays = {"classes_": np.asarray(self.classes_), "class_counts": self.class_counts_}
        arrays.update({"s_" + k: v for k, v in self._state.items()})
        return state_meta(self), arrays

    @classmethod
    def _from_state(cls, meta, arrays, decode=None):
        est = estimator_from_meta(cls, meta) if decode is None else estimator_from_meta(
            cls, meta, decode=decode)  # fmt: skip
        est._init_state(np.asarray(arrays["classes_"]), est.n_features_in_, est._plan())
        for k, ref in est._state.items():
            a = np.ascontiguousarray(arrays["s_" + k], dtype=ref.dtype)
            if a.ndim != ref.ndim or (k in ("theta", "V", "st") and a.shape != ref.shape):
                raise ValueError(f"model state is inconsistent: {k} has shape {a.shape}")
            est._state[k] = a
        counts = np.asarray(arrays["class_counts"], dtype=np.int64)
        if counts.shape != est.class_counts_.shape or (counts < 0).any():
            raise ValueError("model state is inconsistent: class_counts")
        est.class_counts_ = counts
        return est
