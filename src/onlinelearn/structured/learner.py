"""OnlineStructuredLearner: the structured-output learner of thesis Sec. 5.3.3 for any oracle."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ..shell.params import POSITIVE_OR_INF, REQUIRED, SHARED, Param, parameters
from ..shell.snapshot import copy_array, restore_attrs, save_attrs

#: the declarations of the structured learners' parameters (:mod:`onlinelearn.shell.params`):
#: the dual step (its cost and its loss) and the passes
STRUCTURED = {
    **SHARED,
    "update": Param("PA", StrOptions({"perceptron", "PA", "self-tuned"})),
    "loss": Param("max", StrOptions({"max", "prediction"})),
    "C": Param(1.0, POSITIVE_OR_INF),
    "average": SHARED["average"](True),
}
#: their parameters after those of the task
COMMON = "update loss C U average n_epochs shuffle random_state"


@parameters(
    "feature_map argmax cost loss_augmented_argmax * " + COMMON, STRUCTURED,
    feature_map=Param(REQUIRED, callable), argmax=Param(REQUIRED, callable),
    cost=Param(REQUIRED, callable), loss_augmented_argmax=Param(None, callable, None),
)  # fmt: skip
class OnlineStructuredLearner(BaseEstimator):
    """Online learning of w . phi(x, y) with user-supplied feature map, cost and argmax oracles.

    Problem solved by a round (thesis Sec. 5.3.3, Euclidean f(w) = ||w||^2 / 2)::

        'PA', loss='max':         w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C xi
                                  s.t. <w, phi(x, y) - phi(x, y_hat)> >= rho(y, y_hat) - xi,
                                  xi >= 0, y_hat = argmax_y' rho(y, y') + <w_t, phi(x, y')>
                                  (the maximal loss 5.22 and its argmax 5.23)
        'PA', loss='prediction':  the same with y_hat = argmax_y' <w_t, phi(x, y')>  (eq. 5.24)
        'perceptron':             w_{t+1} = w_t + a if y_hat != y (conservative; Collins)
        'self-tuned':             Fig. 5.4: if rho(y, y_hat) > 0: M += 1, X = max(X, ||a||),
                                  c = X sqrt(M / (2U)),
                                  theta += min(1, [c rho - <theta, a>]_+ / ||a||^2) a

    Solution of the PA round: ``tau = min(C, [rho - <w_t, a>]_+ / ||a||^2)``, ``w += tau a``.

    Exact and approximate: each round's step is that closed form (exact: one dual variable);
    nothing is solved iteratively here.  The argmaxes are the oracles': a round is as exact as
    the ``argmax`` and ``loss_augmented_argmax`` given.

    Where
        a = phi(x, y) - phi(x, y_hat); rho >= 0 the cost with rho(y, y) = 0 (range {0} u [1, inf)
        for 'self-tuned', as Fig. 5.4 assumes); theta the scaled dual sum (w = theta / c_t,
        same argmax).

    The oracles are Python callables, so a round runs in Python (with compiled oracles, such as
    :class:`onlinelearn.structured.Aligner`'s dynamic program, the cost is in the oracle).  For
    first-order chains use the fully compiled :class:`SequenceTagger`.

    Parameters
    ----------
    feature_map : callable (x, y) -> 1-D array (or 1 x d sparse row)
        phi(x, y), of the same dimension d for every (x, y).
    argmax : callable (w, x) -> y
        argmax_y <w, phi(x, y)>.
    cost : callable (y, y') -> float
        rho(y, y') >= 0.
    loss_augmented_argmax : callable (w, x, y) -> y', optional
        argmax_y' rho(y, y') + <w, phi(x, y')>; needed by update='PA' with loss='max'.
    update : {'perceptron', 'PA', 'self-tuned'}, default='PA'
    loss : {'max', 'prediction'}, default='max'
    C : float, default=1.0
        Cap on the PA step (inf: pure PA).
    U : float, default=1.0
        Fig. 5.4's bound on f(u).
    average : bool, default=True
        Predict with the mean of the hypotheses after each round ("Average" online-to-batch
        conversion, thesis App. B.3); False: the last hypothesis ("Last", used in ch. 9).
    n_epochs, shuffle, random_state
        Passes of ``fit`` over the examples, shuffled with the seed.

    Attributes
    ----------
    coef_ : ndarray (d,) the weights used for prediction; n_updates_, n_mistakes_, t_.

    Examples
    --------
    Multiclass classification as the smallest structured problem, phi(x, y) = e_y (x) x:

    >>> import numpy as np
    >>> from onlinelearn.structured import OnlineStructuredLearner
    >>> phi = lambda x, y: np.kron(np.eye(3)[y], x)
    >>> argmax = lambda w, x: int(np.argmax(w.reshape(3, -1) @ x))
    >>> aug = lambda w, x, y: int(np.argmax(w.reshape(3, -1) @ x + (np.arange(3) != y)))
    >>> X = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([-1.0, -1.0])]
    >>> learner = OnlineStructuredLearner(phi, argmax, lambda y, z: float(y != z), aug)
    >>> learner.fit(X, [0, 1, 2]).predict(X)
    [0, 1, 2]
    """

    # ------------------------------------------------------------------ helpers
    def _phi(self, x, y, d=None):
        v = self.feature_map(x, y)
        v = np.asarray(v.todense()).ravel() if sp.issparse(v) else np.asarray(v, float).ravel()
        if d is not None and v.shape[0] != d:
            raise ValueError(f"feature_map returned {v.shape[0]} values, expected {d}")
        if not np.all(np.isfinite(v)):
            raise ValueError("feature_map returned NaN or infinity")
        return v

    def _check(self, X, Y):
        self._validate_params()
        if self.update == "PA" and self.loss == "max" and self.loss_augmented_argmax is None:
            raise ValueError("update='PA' with loss='max' needs loss_augmented_argmax")
        X, Y = list(X), list(Y)
        if len(X) != len(Y):
            raise ValueError(f"{len(X)} inputs but {len(Y)} outputs")
        if not X:
            raise ValueError("no examples")
        return X, Y

    def _round(self, x, y):
        """One round; returns the step tau (0: passive).  Raises before any change on bad
        oracle output."""
        w = self._w
        d = w.shape[0]
        self._t += 1
        pred = self.argmax(w, x)
        rho_pred = float(self.cost(y, pred))
        if rho_pred > 0:
            self._n_mistakes += 1
        if self.update == "PA" and self.loss == "max":
            yhat = self.loss_augmented_argmax(w, x, y)
            rho = float(self.cost(y, yhat))
        else:
            yhat, rho = pred, rho_pred
        if not (rho >= 0 and math.isfinite(rho)):
            raise ValueError(f"cost returned {rho}; it must be finite and >= 0")
        if rho == 0:
            return 0.0
        a = self._phi(x, y, d) - self._phi(x, yhat, d)
        sq = float(a @ a)
        if sq == 0.0:
            return 0.0
        if self.update == "perceptron":
            tau = 1.0
        elif self.update == "self-tuned":
            self._M += 1
            self._X = max(self._X, math.sqrt(sq))
            c = self._X * math.sqrt(self._M / (2.0 * self.U))
            tau = min(1.0, max(0.0, c * rho - float(w @ a)) / sq)
        else:
            tau = min(float(self.C), max(0.0, rho - float(w @ a)) / sq)
        if tau > 0:
            self._n_updates += 1
            self._tau_rho += tau * rho
            w += tau * a
            if self.average:
                self._u += (self._t - 1) * tau * a
        return tau

    def _init(self, X, Y):
        d = self._phi(X[0], Y[0]).shape[0]
        self._w = np.zeros(d)
        self._u = np.zeros(d)
        self._t = self._n_updates = self._n_mistakes = self._M = 0
        self._X = self._tau_rho = 0.0
        self.n_features_in_ = d

    _STATE = ("_w", "_u", "_t", "_n_updates", "_n_mistakes", "_M", "_X", "_tau_rho",
              "n_features_in_")  # fmt: skip

    def _run(self, X, Y, order):
        snap = save_attrs(self, self._STATE, copy_array)
        try:
            for i in order:
                self._round(X[i], Y[i])
            if not np.all(np.isfinite(self._w)):
                raise FloatingPointError("non-finite weights; the model was restored")
        except BaseException:
            restore_attrs(self, self._STATE, snap)
            raise

    def fit(self, X, Y):
        """``n_epochs`` online passes from scratch over the examples (x_i, y_i); when a round
        fails (an oracle's error, a non-finite step) the model is left as it was."""
        X, Y = self._check(X, Y)
        rng = check_random_state(self.random_state)
        order = np.arange(len(X))

        def epochs():
            self._init(X, Y)
            for _ in range(self.n_epochs):
                if self.shuffle:
                    rng.shuffle(order)
                self._run(X, Y, order)

        self._transaction(epochs)
        return self

    def partial_fit(self, X, Y):
        """One online pass over the examples in their order (none of it kept if it fails)."""
        X, Y = self._check(X, Y)

        def one_pass():
            if not hasattr(self, "_w"):
                self._init(X, Y)
            self._run(X, Y, range(len(X)))

        self._transaction(one_pass)
        return self

    def _transaction(self, body):
        """Run ``body``; if it raises, put the learned state back as it was before."""
        snap = save_attrs(self, self._STATE, copy_array)
        try:
            body()
        except BaseException:
            restore_attrs(self, self._STATE, snap)
            raise

    @property
    def coef_(self):
        check_is_fitted(self, "_w")
        if self.average and self._t > 0:
            return self._w - self._u / self._t
        return self._w

    @property
    def dual_objective_(self):
        """sum_s tau_s rho_s - ||w||^2 / 2 (current weights): the dual objective at the steps
        taken (never decreases under update='PA'; a lower bound of the primal)."""
        check_is_fitted(self, "_w")
        return self._tau_rho - 0.5 * float(self._w @ self._w)

    n_updates_ = property(lambda self: self._n_updates)
    n_mistakes_ = property(lambda self: self._n_mistakes)
    t_ = property(lambda self: self._t)

    def predict(self, X):
        """argmax_y <w, phi(x, y)> for each input (a list)."""
        w = self.coef_
        return [self.argmax(w, x) for x in X]

    def mean_cost(self, X, Y):
        """Mean rho(y, h(x)) over the examples (lower is better)."""
        X, Y = list(X), list(Y)
        return float(np.mean([self.cost(y, p) for y, p in zip(Y, self.predict(X), strict=True)]))

    def score(self, X, Y):
        """Fraction of examples predicted with zero cost."""
        X, Y = list(X), list(Y)
        return float(
            np.mean([self.cost(y, p) == 0 for y, p in zip(Y, self.predict(X), strict=True)])
        )
