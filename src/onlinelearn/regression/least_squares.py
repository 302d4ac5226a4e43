"""Online least squares: the squared-loss proximal (PA / normalised LMS) step, and RLS."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .._core import regression as CR
from ..framework.links import Euclidean
from ..framework.losses import Squared
from ..framework.steps import Aggressive
from ..shell import validation as V
from ..shell.params import POSITIVE, Param, parameters
from ..shell.regression import REGRESSION, OnlineLinearRegressor, _full


@parameters(
    "* solver C alpha average n_epochs shuffle random_state fit_intercept intercept_scaling "
    "constraint radius",
    REGRESSION, n_epochs=1, solver=Param("rls", StrOptions({"proximal", "rls"})),
    alpha=Param(1.0, POSITIVE),
)  # fmt: skip
class OnlineLeastSquares(OnlineLinearRegressor):
    """Online least squares with the squared loss 1/2 (<w, x> - y)^2 (thesis Sec. 5.3.1).

    ``solver='proximal'`` -- the aggressive dual step for the squared loss (thesis Sec. 5.2,
    eq. 3.12 with g_t(w) = 1/2 (<w, x_t> - y_t)^2 and c = 1/C), i.e. the problem::

        w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C/2 (<w, x_t> - y_t)^2

    solved by w_{t+1} = w_t + tau (y_t - <w_t, x_t>) x_t, tau = C / (1 + C ||x_t||^2): the
    normalised LMS (Widrow-Hoff) step, O(nnz) per row.  C = inf interpolates the example.

    ``solver='rls'`` -- recursive least squares: after every round the exact ridge solution::

        w_{t+1} = argmin_w alpha/2 ||w||^2 + 1/2 sum_{i<=t} s_i (<w, x_i> - y_i)^2

    kept by Sherman-Morrison updates of P = (alpha I + sum_i s_i x_i x_i^T)^{-1}: O(R^2) time and
    memory per row (R = n_features + 1 with the intercept), for small and medium d only.

    Kept dual (``dual_objective_``).  The proximal step is the exact maximiser of the dual of
    the rounds so far along the round's variable, with alpha_t = C_t (y_t - <w_t, x_t>) /
    (1 + C_t ||x_t||^2) and C_t = C s_i::

        P(w) = 1/2 ||w||^2 + sum_t C_t / 2 (y_t - <w, x_t>)^2
        D(alpha) = sum_t (alpha_t y_t - alpha_t^2 / (2 C_t)) - 1/2 ||sum_t alpha_t x_t||^2

    a round adding alpha r_t - alpha^2 / (2 C_t) - 1/2 alpha^2 ||x_t||^2 (r_t = y_t - <w_t,
    x_t>); D <= P(w) for every w.  RLS keeps none (NaN): it is follow-the-leader, not a dual
    step, and its weights are the exact minimiser of its own ridge problem after every row, so
    the dual optimum equals P(w_t) and the certificate would have no gap to report.  NaN also
    with a ``constraint`` (the projection is not a step of this dual).

    Where
        s_i = ``sample_weight`` (multiplies C for the proximal step); ||x||^2 and x include the
        intercept feature (value ``intercept_scaling``), which RLS regularises like the others.

    Parameters
    ----------
    solver : {'proximal', 'rls'}, default='rls'
    C : float, default=1.0
        Step parameter of the proximal solver.
    alpha : float, default=1.0
        Ridge strength of RLS (scikit-learn's ``Ridge(alpha)``).
    average : bool, default=False
        Proximal solver: predict with the mean of the iterates.
    n_epochs : int, default=1
        Passes of ``fit``; RLS after one pass is the ridge solution, more passes count rows again.
    shuffle, random_state, fit_intercept, intercept_scaling, constraint, radius
        As in :class:`onlinelearn.PassiveAggressiveRegressor` (a constraint needs the proximal
        solver: RLS keeps the exact ridge solution, which a projection would break).

    Attributes
    ----------
    coef_, intercept_, n_features_in_, t_, n_updates_
        As in :class:`onlinelearn.PassiveAggressiveRegressor`.
    dual_objective_ : float
        D above after the last round (proximal solver without a constraint; NaN otherwise).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.metrics import r2_score
    >>> from onlinelearn import OnlineLeastSquares
    >>> X, y = load_diabetes(return_X_y=True)
    >>> rls = OnlineLeastSquares(solver="rls", alpha=0.01)
    >>> online = rls.partial_fit_predict(X, y)
    >>> print(f"online R^2 {r2_score(y, online):.2f}, final R^2 {rls.score(X, y):.2f}")
    online R^2 0.45, final R^2 0.52
    """

    @property
    def _uses_P(self):
        return self.solver == "rls"

    def _average(self):
        return bool(self.average) and self.solver == "proximal"

    def _alpha(self):
        return float(self.alpha)

    def _check_params(self):
        if self.constraint is not None and self.solver == "rls":
            raise ValueError(
                f"constraint={self.constraint!r} needs solver='proximal': RLS keeps the exact "
                "ridge solution after every row, which a projection would break."
            )

    def _run_pass(self, X, y, sw, order, pred):
        if self.solver == "rls":
            if isinstance(X, np.ndarray):
                if not np.isfinite(X).all():  # the RLS kernel does not look
                    return CR.NONFINITE_INPUT
                X = V.CSRBatch(X)
            sw, order = _full(sw, order, X.n_rows)
            ok = CR.rls_pass(
                X.data, X.indices, X.indptr, y, sw, order, self._w, self._P,
                self._st, self._b(), pred, np.empty(self._w.shape[0]),
            )  # fmt: skip
            return CR.OK if ok else CR.NONFINITE_WEIGHTS
        return super()._run_pass(X, y, sw, order, pred)

    def _configuration(self):
        """The proximal solver's configuration (RLS, the exact ridge solution after every row,
        is follow-the-leader, not a single dual step: its own pass above)."""
        return Euclidean(), Squared(), Aggressive(self.C)
