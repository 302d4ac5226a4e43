"""Estimator plumbing shared by the online regressors: validation, transaction, read-out."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state, column_or_1d
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .. import _validation as V
from .._core import regression as CR
from .._estimator import state_meta

__all__ = ["OnlineLinearRegressor", "check_target"]


def check_target(y, n_rows):
    """A 1-D finite float64 target of length ``n_rows``; raises ValueError with the reason."""
    if y is None:
        raise ValueError(
            "This regressor requires y to be passed, but the target y is None: give one "
            "numeric target per row of X."
        )
    arr = np.asarray(y)
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


def _check_X(estimator, X, *, reset):
    """:func:`onlinelearn._validation.check_X`, with a shortcut for the first call on a plain
    float C-contiguous ndarray (no feature names to record): shape, finiteness, n_features_in_."""
    if (
        reset
        and type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype in (np.float64, np.float32)
        and X.flags.c_contiguous
        and X.shape[0] >= 1
        and X.shape[1] >= 1
        and np.isfinite(X.sum())  # finite sum: every entry finite (else the full check)
    ):
        estimator.n_features_in_ = X.shape[1]
        estimator.__dict__.pop("feature_names_in_", None)
        return X
    return V.check_X(estimator, X, reset=reset)


class OnlineLinearRegressor(RegressorMixin, BaseEstimator):
    """Base of the online linear regressors. Not for direct use.

    Subclasses implement :meth:`_run_pass` (one compiled call) and may set ``_uses_P``."""

    _uses_P = False
    _parameter_constraints: dict = {
        "n_epochs": [Interval(numbers.Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def _sgd_pass(self, batch, y, sw, order, pred, loss_code, C, eps):
        """The first-order pass: the dense kernel for a dense batch, the CSR one otherwise."""
        b = self._b()
        avg = self._average()
        if batch.indices.shape[0] != batch.data.shape[0]:  # dense, more than one row
            X2 = batch.data.reshape(batch.n_rows, batch.n_cols)
            return CR.regression_pass_dense(
                X2, y, sw, order, self._w, self._U, self._st, loss_code, C, eps, b, avg, pred
            )
        return CR.regression_pass(
            batch.data, batch.indices, batch.indptr, y, sw, order, self._w, self._U, self._st,
            loss_code, C, eps, b, avg, pred,
        )  # fmt: skip

    def _average(self):
        return bool(getattr(self, "average", False))

    def _alpha(self):
        return 1.0

    def _b(self):
        return float(self.intercept_scaling) if self.fit_intercept else 0.0

    def _init_state(self, n_features):
        R = n_features + (1 if self.fit_intercept else 0)
        self._w, self._U, self._P, self._st = CR.empty_state(
            R, self._average(), self._uses_P, self._alpha()
        )

    def _arrays(self):
        return ("_w", "_U", "_P", "_st")

    def _snapshot(self):
        snap = {a: self.__dict__[a].copy() for a in self._arrays() if a in self.__dict__}
        for a in ("n_features_in_", "feature_names_in_"):
            if a in self.__dict__:
                snap[a] = self.__dict__[a]
        return snap

    def _restore(self, snap):
        for a in (*self._arrays(), "n_features_in_", "feature_names_in_"):
            if a in snap:
                self.__dict__[a] = snap[a]
            else:
                self.__dict__.pop(a, None)

    def _validate_params_once(self):
        """Parameter checks, skipped while the parameters are the very objects last checked:
        a stream of ``partial_fit`` calls pays for them once."""
        key = tuple(getattr(self, n) for n in self._get_param_names())
        last = self.__dict__.get("_validated_params")
        if last is not None and all(a is b for a, b in zip(last, key, strict=True)):
            return
        self._validate_params()
        self._validated_params = key

    def _fit_batch(self, X, y, sample_weight, *, fit_mode):
        first = fit_mode or not hasattr(self, "_w")
        snap = self._snapshot()
        try:
            self._validate_params_once()
            X = _check_X(self, X, reset=first)
            y = check_target(y, X.shape[0])
            if sample_weight is None:
                sw = np.ones(X.shape[0])
            else:
                sw = V.check_sample_weight(sample_weight, X.shape[0])
            batch = V.CSRBatch(X)
            if first:
                self._init_state(batch.n_cols)
            n = batch.n_rows
            pred = np.zeros(n)
            epochs = self.n_epochs if fit_mode else 1
            rng = check_random_state(self.random_state)
            for _ in range(epochs):
                if fit_mode and self.shuffle:
                    order = rng.permutation(n).astype(np.int64)
                else:
                    order = np.arange(n, dtype=np.int64)
                if not self._run_pass(batch, y, sw, order, pred):
                    raise FloatingPointError(
                        f"{type(self).__name__}: a weight became infinite or NaN. The model was "
                        "left as it was before this call. Scale the features and the target, "
                        "or lower C."
                    )
        except BaseException:
            self._restore(snap)
            raise
        return pred

    # ------------------------------------------------------------------ public API
    def fit(self, X, y, sample_weight=None):
        """Learn from scratch: ``n_epochs`` online passes (shuffled when ``shuffle``)."""
        self._fit_batch(X, y, sample_weight, fit_mode=True)
        return self

    def partial_fit(self, X, y, sample_weight=None):
        """One online pass over the batch in the order given (one compiled call)."""
        self._fit_batch(X, y, sample_weight, fit_mode=False)
        return self

    def partial_fit_predict(self, X, y, sample_weight=None):
        """Progressive validation: the prediction for each row made *before* learning from it,
        and one online pass over the rows (as :meth:`partial_fit`)."""
        return self._fit_batch(X, y, sample_weight, fit_mode=False)

    def _weights(self):
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

    @property
    def t_(self):
        """Examples processed (all epochs and calls)."""
        check_is_fitted(self, "_w")
        return int(self._st[CR.T])

    @property
    def n_updates_(self):
        """Rounds on which the weights changed."""
        check_is_fitted(self, "_w")
        return int(self._st[CR.N_UPDATES])

    def predict(self, X):
        """<w, x> + b for each row."""
        check_is_fitted(self, "_w")
        X = V.check_X(self, X, reset=False)
        out = np.asarray(X @ self.coef_).reshape(-1)
        return out + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        """(meta, arrays) describing the fitted model (docs/CONTRACT.md)."""
        check_is_fitted(self, "_w")
        meta = state_meta(self)
        arrays = {"w": self._w, "U": self._U, "P": self._P, "st": self._st}
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = cls(**meta["params"])
        est.n_features_in_ = int(meta["n_features_in_"])
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
