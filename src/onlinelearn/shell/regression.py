"""Estimator plumbing shared by the online regressors: validation, transaction, read-out."""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import column_or_1d
from sklearn.utils.validation import check_is_fitted

from .._core import projected_pass as PP
from .._core import regression as CR
from .._core.generic import residual_pass as generic_residual_pass
from . import validation as V
from .meta import counter, estimator_from_meta, state_meta, with_methods, with_tags
from .online import Call, ProgressiveMixin, refuse_classes
from .params import (
    CONSTRAINT,
    POSITIVE_OR_INF,
    SHARED,
    Param,
    constraints_of,
    param_names,
    validate_once,
)
from .snapshot import copy_array, restore_attrs, save_attrs

__all__ = ["REGRESSION", "OnlineLinearRegressor", "check_target"]


_CONSTRAINTS = {"l1": PP.L1_BALL, "simplex": PP.SIMPLEX}

#: the declarations of the regressors' parameters (:mod:`onlinelearn.shell.params`): the shared
#: ones, the projected updates, and a ``C`` that may be infinite (PA: no slack)
REGRESSION = {
    **SHARED,
    **CONSTRAINT,
    "C": Param(1.0, POSITIVE_OR_INF),
}


def _closed_form_code(loss, step):
    """The closed-form pass code (:mod:`onlinelearn._core.regression`) of a configuration, or
    None: eps-insensitive with PA / PA-I (``EPS_PA1``; PA is C = inf) or PA-II (``EPS_PA2``),
    squared with the aggressive step (``SQUARED``, the prox step)."""
    if loss.closed_form_step != "regression" or not hasattr(step, "variant"):
        return None
    if hasattr(loss, "eps"):
        return CR.EPS_PA2 if step.variant == "PA-II" else CR.EPS_PA1
    return CR.SQUARED if step.variant == "PA-I" else None


def _full(sw, order, n):
    """The explicit weight vector and row order for kernels that do not take empty ones."""
    if sw.shape[0] == 0:
        sw = np.ones(n)
    if order.shape[0] == 0:
        order = np.arange(n, dtype=np.int64)
    return sw, order


def check_target(y, n_rows):
    """A 1-D finite float64 target of length ``n_rows``; raises ValueError with the reason."""
    if y is None:
        raise ValueError(
            "This regressor requires y to be passed, but the target y is None: give one "
            "numeric target per row of X."
        )
    arr = V.check_real(y, "y")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = column_or_1d(arr, warn=True)
    if arr.ndim != 1:
        raise ValueError(f"y must be 1-D (one target per row); got shape {arr.shape}.")
    try:
        arr = np.ascontiguousarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("y must be numeric: regression targets are real numbers.") from None
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(
            f"y contains NaN or infinity (first at row {bad}); every row needs a finite target. "
            "The model was left as it was."
        )
    if arr.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {arr.shape[0]} targets; they must agree.")
    return np.ascontiguousarray(arr)


_FEATURES = ("n_features_in_", "feature_names_in_")
_NO_WEIGHTS = np.empty(0)  # the compiled pass reads an empty vector as unit weights
_IN_ORDER = np.empty(0, dtype=np.int64)  # ... and an empty order as the rows in their order


def _unchecked_dense(estimator, X, *, reset):
    """X itself when it is what the dense kernel reads (a float32/64 C-contiguous 2-D ndarray,
    non-empty, with the fitted feature count and no feature names in play), else None.
    Finiteness is not checked here: the dense pass sees a NaN or infinite entry in the same
    sweep that reads the row and stops (the caller then runs the full check for the message
    and restores its snapshot), which saves a pass over X per call."""
    if not (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype in (np.float64, np.float32)
        and X.flags.c_contiguous
        and X.shape[0] >= 1
        and X.shape[1] >= 1
    ):
        return None
    if reset:
        estimator.n_features_in_ = X.shape[1]
        estimator.__dict__.pop("feature_names_in_", None)
    elif (
        getattr(estimator, "feature_names_in_", None) is not None
        or getattr(estimator, "n_features_in_", None) != X.shape[1]
    ):
        return None
    return X


@with_methods(ProgressiveMixin)
class OnlineLinearRegressor(RegressorMixin, BaseEstimator):
    """Base of the online linear regressors. Not for direct use.

    Subclasses implement :meth:`_run_pass` (one compiled call) and may set ``_uses_P``."""

    _uses_P = False
    _parameter_constraints: dict = constraints_of({
        n: REGRESSION[n]
        for n in ("n_epochs", "shuffle", "random_state", "fit_intercept", "intercept_scaling")
    })  # fmt: skip

    def __sklearn_tags__(self):
        return with_tags(self, super().__sklearn_tags__())

    def _sgd_pass(self, X, y, sw, order, pred, loss_code, C, eps):
        """The first-order pass: the dense kernel for an ndarray X, the CSR one for a
        :class:`~onlinelearn.shell.validation.CSRBatch`.  Returns a ``CR`` status code."""
        b = self._b()
        avg = self._average()
        code = self._constraint_code()
        if isinstance(X, np.ndarray):
            if code == PP.NO_CONSTRAINT:
                return CR.regression_pass_dense(
                    X, y, sw, order, self._w, self._U, self._st, loss_code, C, eps, b, avg, pred
                )
            if not np.isfinite(X).all():  # the CSR kernel does not look
                return CR.NONFINITE_INPUT
            X = V.CSRBatch(X)
        sw, order = _full(sw, order, X.n_rows)
        z = float(self.radius) if code != PP.NO_CONSTRAINT else 1.0
        ok = CR.regression_pass(
            X.data, X.indices, X.indptr, y, sw, order, self._w, self._U, self._st,
            loss_code, C, eps, b, avg, pred, code, z, np.empty(2 * self._w.shape[0]),
        )  # fmt: skip
        return CR.OK if ok else CR.NONFINITE_WEIGHTS

    def _check_params(self):
        """Rules spanning two parameters (a hook)."""

    def _configuration(self):
        """``(link, loss, step)``: the regressor as objects of :mod:`onlinelearn.framework`,
        built from its parameters."""
        raise NotImplementedError

    def _run_pass(self, X, y, sw, order, pred):
        """One pass of the configuration: the closed-form pass of the eps-insensitive loss
        (PA, PA-I, PA-II) and of the squared loss's prox step, else the generic pass, whose
        aggressive step solves the round's 1-D dual numerically (:mod:`onlinelearn.framework`).
        Returns a ``CR`` status code."""
        _, loss, step = self._configuration()
        code = _closed_form_code(loss, step)
        if code is not None:
            eps = float(getattr(loss, "eps", 0.0))
            C = math.inf if step.variant == "PA" else float(step.C)
            return self._sgd_pass(X, y, sw, order, pred, code, C, eps)
        if self._constraint_code() != PP.NO_CONSTRAINT:
            raise ValueError(
                f"a constraint needs a closed-form step; {loss!r} with {step!r} has none"
            )
        if isinstance(X, np.ndarray):
            if not np.isfinite(X).all():
                return CR.NONFINITE_INPUT
            X = V.CSRBatch(X)
        sw, order = _full(sw, order, X.n_rows)
        value, deriv = loss.first_class()
        p = step.params()
        status = generic_residual_pass(
            X.data, X.indices, X.indptr, y, sw, order, self._w, self._U, self._st, step.code,
            float(p.get("C", 1.0)), float(p.get("eta", 1.0)), self._b(), self._average(), pred,
            value, deriv,
        )  # fmt: skip
        return CR.OK if status == 0 else CR.NONFINITE_WEIGHTS

    def _keeps_dual(self):
        """True when the pass keeps the dual objective in ``st[DUAL]``: the closed-form passes
        (eps-insensitive PA / PA-I / PA-II, the squared loss's prox step) without a
        constraint.  Not RLS (``_uses_P``), the generic pass or a projection."""
        _, loss, step = self._configuration()
        return (
            not self._uses_P
            and self._constraint_code() == PP.NO_CONSTRAINT
            and _closed_form_code(loss, step) is not None
        )

    def _average(self):
        return bool(getattr(self, "average", False))

    def _alpha(self):
        return 1.0

    def _b(self):
        return float(self.intercept_scaling) if self.fit_intercept else 0.0

    def _constraint_code(self):
        c = getattr(self, "constraint", None)
        return PP.NO_CONSTRAINT if c is None else _CONSTRAINTS[c]

    def _init_state(self, n_features):
        R = n_features + (1 if self.fit_intercept else 0)
        self._w, self._U, self._P, self._st = CR.empty_state(
            R, self._average(), self._uses_P, self._alpha()
        )
        code = self._constraint_code()
        if code != PP.NO_CONSTRAINT:
            # start inside the set (the projection of 0); U = w_1 keeps the mean of the
            # iterates ((T + 1) w_{T+1} - U) / T exact from a nonzero start
            PP.project_column(self._w.reshape(R, 1), 0, code, float(self.radius), np.empty(R))
            if self._average():
                self._U[:] = self._w

    def _arrays(self):
        return ("_w", "_U", "_P", "_st")

    def _snapshot(self):
        snap = save_attrs(self, self._arrays(), copy_array)
        snap.update(save_attrs(self, _FEATURES))
        return snap

    def _restore(self, snap):
        restore_attrs(self, (*self._arrays(), *_FEATURES), snap)

    def _validate_params_once(self):
        """Parameter checks, skipped for values already found valid: by identity for this
        object (a stream of ``partial_fit`` calls; ``validate_once``), and by (type, value)
        across the class (a fresh estimator per ``fit`` with the usual parameters pays nothing
        either)."""
        validate_once(self, self._validate_params_by_class)

    def _validate_params_by_class(self):
        cls = type(self)
        key = tuple((type(v), v) for v in (getattr(self, n) for n in param_names(cls)))
        seen = cls.__dict__.get("_valid_param_keys")
        try:
            known = seen is not None and key in seen
        except TypeError:  # an unhashable parameter value: no class-wide memory
            key, known = None, False
        if not known:
            self._validate_params()
            if key is not None:
                if seen is None or len(seen) > 256:
                    seen = cls._valid_param_keys = set()
                seen.add(key)

    def _started(self):
        return "_w" in self.__dict__

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap):
        """The regressors' set-up of a call (:mod:`onlinelearn.shell.online`); the
        progressive predictions are <w, x> of each row before its update."""
        refuse_classes(self, classes)
        self._validate_params_once()
        self._check_params()
        Xd = _unchecked_dense(self, X, reset=first)
        if Xd is None:
            Xc = V.check_X(self, X, reset=first)
            Xd = np.ascontiguousarray(Xc) if isinstance(Xc, np.ndarray) else V.CSRBatch(Xc)
        n, n_cols = (Xd.n_rows, Xd.n_cols) if isinstance(Xd, V.CSRBatch) else Xd.shape
        y = check_target(y, n)
        if sample_weight is None:
            sw = _NO_WEIGHTS
        else:
            sw = V.check_sample_weight(sample_weight, n)
        if first:
            self._init_state(n_cols)
        # every row of pred is written once per pass
        return Call(n=n, X=X, Xd=Xd, y=y, sw=sw, first=first, pred=np.empty(n))

    def _epoch(self, call, order):
        """One compiled pass (:meth:`_run_pass`) over ``order`` (None: the rows in order)."""
        status = self._run_pass(call.Xd, call.y, call.sw, _IN_ORDER if order is None else order,
                                call.pred)  # fmt: skip
        if status == CR.NONFINITE_INPUT:
            V.check_X(self, call.X, reset=call.first)  # raises with the usual message
            raise ValueError("Input X contains NaN or infinity.")
        if status != CR.OK:
            raise FloatingPointError(
                f"{type(self).__name__}: a weight became infinite or NaN. The model was "
                "left as it was before this call. Scale the features and the target, "
                "or lower C."
            )

    def _finish(self, call):
        if not self._keeps_dual():
            self._st[CR.DUAL] = np.nan  # these rounds are not in any kept dual
        return call.pred

    def _weights(self):
        if "_w" not in self.__dict__:  # (scikit-learn's check: ~2 us a call)
            check_is_fitted(self, "_w")
        if self._average() and self._st[CR.T] > 0:
            T_ = self._st[CR.T]
            return ((T_ + 1.0) * self._w - self._U) / T_
        return self._w

    @property
    def coef_(self):
        """Weights, shape (n_features,) (the mean of the iterates when ``average``)."""
        return np.array(self._weights()[: self.n_features_in_])

    @property
    def intercept_(self):
        """Bias: ``intercept_scaling`` times the weight of the constant feature (0.0 without)."""
        w = self._weights()
        return float(self._b() * w[self.n_features_in_]) if self.fit_intercept else 0.0

    def _stats(self):
        if "_w" not in self.__dict__:  # (scikit-learn's check: ~2 us a call)
            check_is_fitted(self, "_w")
        return self._st

    t_ = counter(CR.T, "Examples processed (all epochs and calls).")
    n_updates_ = counter(CR.N_UPDATES, "Rounds on which the weights changed.")

    @property
    def dual_objective_(self):
        """The dual objective of the run so far, kept as the sum of the rounds' increments.

        With alpha_t the signed step of round t (w_{t+1} = w_t + alpha_t x_t, so w = sum_t
        alpha_t x_t), C_t = C times the row's ``sample_weight`` and eps = ``epsilon``::

            D = sum_t (alpha_t y_t - eps |alpha_t| - q_t) - 1/2 ||sum_t alpha_t x_t||^2,
            q_t = 0 (PA, PA-I), alpha_t^2 / (4 C_t) (PA-II), alpha_t^2 / (2 C_t) (squared)

        the dual of the batch problem over every round so far (all epochs and calls)::

            P(w) = 1/2 ||w||^2 + sum_t C_t [|y_t - <w, x_t>| - eps]_+    (PA-I; PA: C_t = inf)
                   (PA-II: the square of [.]_+; squared loss: C_t / 2 (y_t - <w, x_t>)^2)

        One round adds tau ell_t - 1/2 tau^2 ||x_t||^2 [- PA-II: tau^2 / (4 C_t)] with
        tau = |alpha_t| and ell_t = |y_t - <w_t, x_t>| - eps (Crammer et al. 2006, Sec. 5: the
        classifiers' increment with gamma - margin replaced by the loss).  x_t includes the
        intercept feature of value ``intercept_scaling`` (a regularised weight like the others).
        So D <= P(w) for every w (weak duality), the averaged weights included.  NaN when the
        configuration keeps none (a constraint, RLS, a loss without a closed-form step)."""
        return float(self._stats()[CR.DUAL])

    def predict(self, X):
        """<w, x> + b for each row."""
        if "_w" not in self.__dict__:  # (scikit-learn's check: ~2 us a call)
            check_is_fitted(self, "_w")
        X = V.check_X(self, X, reset=False)
        out = np.asarray(X @ self.coef_).reshape(-1)
        return out + self.intercept_

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        """(meta, arrays) describing the fitted model (docs/CONTRACT.md)."""
        if "_w" not in self.__dict__:  # (scikit-learn's check: ~2 us a call)
            check_is_fitted(self, "_w")
        return state_meta(self), {"w": self._w, "U": self._U, "P": self._P, "st": self._st}

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta)
        est._init_state(est.n_features_in_)
        for name in ("w", "U", "P", "st"):
            a = np.ascontiguousarray(arrays[name], dtype=np.float64)
            if a.shape != getattr(est, "_" + name).shape:
                raise ValueError(
                    f"model state is inconsistent: {name} has shape {a.shape}, expected "
                    f"{getattr(est, '_' + name).shape}"
                )
            setattr(est, "_" + name, a)
        return est
