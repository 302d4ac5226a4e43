"""Passive-Aggressive regression with the eps-insensitive loss (PA, PA-I, PA-II)."""

from __future__ import annotations

from sklearn.utils._param_validation import StrOptions

from ..framework.links import Euclidean
from ..framework.losses import EpsInsensitive
from ..framework.steps import Aggressive
from ..shell.params import NON_NEGATIVE, Param, parameters
from ..shell.regression import REGRESSION, OnlineLinearRegressor


@parameters(
    "* C epsilon loss average n_epochs shuffle random_state fit_intercept intercept_scaling "
    "constraint radius",
    REGRESSION, epsilon=Param(0.1, NON_NEGATIVE),
    loss=Param("epsilon_insensitive",
               StrOptions({"epsilon_insensitive", "squared_epsilon_insensitive"})),
)  # fmt: skip
class PassiveAggressiveRegressor(OnlineLinearRegressor):
    """Passive-Aggressive regression, PA / PA-I / PA-II (Crammer et al. 2006, Sec. 5).

    Problem solved by a round (thesis Sec. 5.3.1, the aggressive step of Sec. 5.2 for the
    eps-insensitive loss)::

        PA-I  (loss='epsilon_insensitive'):
            w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C xi     s.t. |<w, x_t> - y_t| <= eps + xi,
                                                                 xi >= 0
        PA-II (loss='squared_epsilon_insensitive'):
            w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C xi^2   s.t. |<w, x_t> - y_t| <= eps + xi
        PA:   PA-I with C = inf (the constraint holds exactly after the step)

    Solution: w_{t+1} = w_t + sign(y_t - <w_t, x_t>) tau_t x_t with::

        ell = [|<w_t, x_t> - y_t| - eps]_+
        PA-I: tau = min(C, ell / ||x_t||^2)      PA-II: tau = ell / (||x_t||^2 + 1/(2C))

    Where
        eps = ``epsilon``, the width of the insensitive tube; C the aggressiveness (cap on tau,
        or the price of the squared slack); ||x||^2 includes the intercept feature (value
        ``intercept_scaling``) when ``fit_intercept`` (scikit-learn leaves it out); a row with
        ||x|| = 0 changes nothing; ``sample_weight`` multiplies C.

    Kept dual (``dual_objective_``; Crammer et al. 2006, Sec. 5 with the eps-insensitive loss in
    place of the hinge).  With alpha_t = sign(y_t - <w_t, x_t>) tau_t the signed step of round
    t (so w = sum_t alpha_t x_t) and C_t = C s_t (s_t = ``sample_weight``; PA: C_t = inf), the
    rounds so far (all epochs: a row seen twice is two rounds) are the batch problem::

        P(w) = 1/2 ||w||^2 + sum_t C_t [|y_t - <w, x_t>| - eps]_+        (PA-II: [.]_+^2)
        D(alpha) = sum_t (alpha_t y_t - eps |alpha_t| [- PA-II: alpha_t^2 / (4 C_t)])
                   - 1/2 ||sum_t alpha_t x_t||^2

    and a round adds tau ell_t - 1/2 tau^2 ||x_t||^2 [- tau^2 / (4 C_t)], ell_t = |y_t - <w_t,
    x_t>| - eps, to D (the classifiers' increment with gamma - margin replaced by the loss),
    kept in the compiled pass at a few flops per update.  D <= P(w) for every w (weak
    duality): P(w_avg) - D bounds how far the (averaged) weights are from the optimum of P.
    The intercept enters as the regularised weight of the constant feature.  NaN with a
    ``constraint`` (the projection is not a step of this dual).

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness; ``C=float('inf')`` with ``loss='epsilon_insensitive'`` is PA.
    epsilon : float, default=0.1
        No loss while the prediction is within epsilon of the target.
    loss : {'epsilon_insensitive', 'squared_epsilon_insensitive'}, default='epsilon_insensitive'
        PA-I or PA-II (scikit-learn's names).
    average : bool, default=False
        Predict with the mean of the iterates w_2 .. w_{T+1} (kept at O(nnz) per update).
    n_epochs : int, default=5
        Passes of ``fit`` (scikit-learn's ``max_iter``, without a stopping tolerance).
    shuffle, random_state
        Shuffle the rows before each pass of ``fit`` (same seed, same weights).
    fit_intercept, intercept_scaling
        Learn a bias as the weight of a constant feature of value ``intercept_scaling``.
    constraint : {None, 'l1', 'simplex'}, default=None
        Projected updates (thesis Sec. 7.1): after every update w (the intercept weight
        included) is projected onto the l1 ball {||w||_1 <= ``radius``} (Fig. 7.2) or the
        simplex {w >= 0, sum w = ``radius``} (Fig. 7.1); a fresh model starts at the projection
        of 0.  O(R log R) per update, through the CSR pass.  None: the plain learner.
    radius : float > 0, default=1.0
        z of the constraint set.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_features_in_, t_ (rows seen), n_updates_ (rows that changed the weights)
    dual_objective_ : float
        D above after the last round (NaN with a constraint).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.metrics import mean_absolute_error
    >>> from onlinelearn import PassiveAggressiveRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = PassiveAggressiveRegressor(C=100.0, epsilon=1.0, average=True)
    >>> online = reg.partial_fit_predict(X, y)        # predictions made before each update
    >>> print(f"online MAE {mean_absolute_error(y, online):.1f}")
    online MAE 65.3
    >>> print(f"R^2 after one pass {reg.score(X, y):.2f}")
    R^2 after one pass 0.35
    """

    def _configuration(self):
        variant = "PA-I" if self.loss == "epsilon_insensitive" else "PA-II"
        return Euclidean(), EpsInsensitive(self.epsilon), Aggressive(self.C, variant)
