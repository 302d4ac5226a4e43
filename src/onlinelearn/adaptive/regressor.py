"""Scale-free linear regressors: :class:`AdaGradRegressor` (FTRL-Proximal with AdaGrad's
per-coordinate rates) and :class:`NormalizedRegressor` (NAG)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import StrOptions

from .._core import adaptive as AD
from ..shell import validation as V
from ..shell.meta import estimator_from_meta, with_methods, with_tags
from ..shell.online import Call, ProgressiveMixin, refuse_classes
from ..shell.params import NON_NEGATIVE, SHARED, Param, parameters, validate_once
from ..shell.regression import check_target
from ._base import AdaptiveState
from ._event import EventMixin
from .classifier import ADAPTIVE

__all__ = ["AdaGradRegressor", "NormalizedRegressor"]

_LOSSES = {"squared": AD.SQUARED, "absolute": AD.ABSOLUTE,
           "epsilon_insensitive": AD.EPS_INSENSITIVE}  # fmt: skip

REGRESSION = {
    **ADAPTIVE,
    "loss": Param("squared", StrOptions(set(_LOSSES))),
    "epsilon": Param(0.1, NON_NEGATIVE),
}


@with_methods(EventMixin, AdaptiveState, ProgressiveMixin)
class _AdaptiveRegressor(RegressorMixin, BaseEstimator):
    """The regressors' side of the family: targets and the call's hooks."""

    def __sklearn_tags__(self):
        return with_tags(self, super().__sklearn_tags__())

    def _loss_code(self):
        return _LOSSES[self.loss]

    def _started(self):
        return "_A" in self.__dict__

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap):
        """The set-up of a call (:mod:`onlinelearn.shell.online`)."""
        refuse_classes(self, classes)
        validate_once(self, self._validate_params)  # a stream of calls checks them once
        X = V.check_X(self, X, reset=first)
        n = X.shape[0]
        y = check_target(y, n)
        sw = V.check_sample_weight(sample_weight, n)
        batch = V.CSRBatch(X)
        if first:
            self._new_state(batch.n_cols, 1)
        return Call(n=n, batch=batch, target=y, weights=sw, pred=None)

    def _epoch(self, call, order):
        """One compiled pass over the rows in ``order`` (None: in their order)."""
        if order is None:
            order = np.arange(call.n, dtype=np.int64)
        call.pred = self._run(call.batch, call.target, call.weights, order)

    def _finish(self, call):
        return call.pred

    @property
    def coef_(self):
        """Weights, shape (n_features,)."""
        return np.array(self._weights_matrix()[: self.n_features_in_, 0])

    @property
    def intercept_(self):
        """Bias: ``intercept_scaling`` times the weight of the constant feature (0.0 without)."""
        W = self._weights_matrix()
        return (
            float(self._intercept_value() * W[self.n_features_in_, 0])
            if self.fit_intercept
            else 0.0
        )

    def predict(self, X):
        """<w, x> + b for each row."""
        return self._raw_scores(X)[:, 0]

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta)
        est._set_state_arrays(arrays, 1)
        return est


_COMMON = "n_epochs fit_intercept intercept_scaling shuffle random_state"


@parameters(f"loss * epsilon eta beta l1 l2 {_COMMON}", SHARED, REGRESSION)
class AdaGradRegressor(_AdaptiveRegressor):
    """Linear regression by FTRL-Proximal with AdaGrad's per-coordinate learning rates.

    The step of :class:`~onlinelearn.AdaGradClassifier` (McMahan et al. 2013, Algorithm 1)
    on the residual losses of p = <w, x> + b: squared 1/2 (p - y)^2, absolute |p - y| and
    epsilon-insensitive [|p - y| - epsilon]_+::

        w_i = 0 if |z_i| <= l1, else -(z_i - sign(z_i) l1) / ((beta + sqrt(n_i))/alpha + l2)

    Parameters
    ----------
    loss : {'squared', 'absolute', 'epsilon_insensitive'}, default='squared'
    epsilon : float, default=0.1
        The width of the insensitive zone (``loss='epsilon_insensitive'``).
    eta, beta, l1, l2 : float, default=0.5, 1.0, 0.0, 0.0
        Rates alpha / (beta + sqrt(n_i)) with alpha = ``eta``, and FTRL-Proximal's
        regularisation.
    n_epochs, fit_intercept, intercept_scaling, shuffle, random_state
        As for the other online learners.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinelearn import AdaGradRegressor
    >>> X = np.random.default_rng(0).normal(size=(500, 3))
    >>> reg = AdaGradRegressor(n_epochs=20, random_state=0).fit(X, X @ [1.0, -2.0, 0.5] + 3)
    >>> np.round(reg.coef_, 1).tolist(), round(reg.intercept_, 1)
    ([1.0, -2.0, 0.5], 3.0)
    """

    _step = AD.FTRL


@parameters(f"loss * epsilon eta importance_invariant {_COMMON}", SHARED, REGRESSION)
class NormalizedRegressor(_AdaptiveRegressor):
    """Linear regression by the normalized adaptive gradient update (NAG; Ross, Mineiro,
    Langford 2013, Algorithm 2): the step of :class:`~onlinelearn.NormalizedClassifier` on
    the residual losses of :class:`AdaGradRegressor`, invariant to the scale of each feature.
    ``importance_invariant=True`` (squared loss only): Karampatziakis & Langford 2011's update,
    w_i <- w_i - r_i x_i (p - y) (1 - e^{-q c}) / q with the rates r_i frozen and
    q = sum_i r_i x_i^2, the limit of infinitely many small steps (it never overshoots y).

    Parameters
    ----------
    loss : {'squared', 'absolute', 'epsilon_insensitive'}, default='squared'
    epsilon : float, default=0.1
    eta : float, default=0.5
    importance_invariant : bool, default=False
    n_epochs, fit_intercept, intercept_scaling, shuffle, random_state

    Examples
    --------
    >>> import numpy as np
    >>> from onlinelearn import NormalizedRegressor
    >>> X = np.random.default_rng(0).normal(size=(500, 3)) * [1.0, 1e3, 1e-3]
    >>> reg = NormalizedRegressor(n_epochs=20, random_state=0).fit(X, X @ [1.0, -2e-3, 500])
    >>> round(reg.score(X, X @ [1.0, -2e-3, 500]), 2)  # features in units 1e6 apart
    1.0
    """

    _step = AD.NAG
