"""Quasi-additive learners (thesis Sec. 5.1, Fig. 5.1): Winnow / EG and the p-norm Perceptron.

All share the conservative step theta <- theta + eta y x on mistakes; they differ in the link
w = grad f*(theta) that maps the additive dual sum theta to the weights.
"""

from __future__ import annotations

import math
import numbers

from sklearn.utils._param_validation import Interval

from ._core import links as L
from ._core import steps as S
from .base import OnlineLinearClassifier


class Winnow(OnlineLinearClassifier):
    """Winnow / normalised Exponentiated Gradient: entropy link x hinge x conservative step.

    What
        The quasi-additive algorithm of Fig. 5.1 with the link of eq. (5.4), i.e. the
        multiplicative update w_i <- w_i beta^{y x_i}, beta = exp(eta) (eq. 5.5), analysed with
        the relative entropy on the probability simplex (Sec. 5.1.2); or the self-tuned variant
        of Fig. 5.2 (Sec. 5.1.3), which needs no learning rate.

    Problem solved by a round: the conservative dual step (eq. 5.13) with::

        f(w) = sum_i w_i log(w_i / (1/n))  on  S = {w >= 0, sum_i w_i = 1}
        w = grad f*(theta) = exp(theta) / sum_j exp(theta_j)   (eq. 5.6, softmax)
        on a mistake: theta_y += eta x, theta_r -= eta x  (binary: theta += eta y x)

    Where
        n is the number of weights; ``balanced=True`` runs the algorithm on the doubled
        instance [x, -x] (balanced Winnow / EG+-), so w = (exp(theta) - exp(-theta)) / Z can
        take both signs; ``balanced=False`` keeps the positive weights of eq. (5.4).
        For K classes the link acts on all n = (d+1) K weights at once.
        Self-tuned (Fig. 5.2): c_t = X_t sqrt((M_t + 1) / log n), X_t = max_{s<=t} ||x_s||_inf,
        M_t the mistakes so far, w_{t,i} = exp(theta_{t,i} / c_t), theta += y x on mistakes.
        Mistake bound: eq. (5.8) (fixed eta), Corollary 6 (self-tuned).
        coef_ is w = grad f*(theta) (normalised over all weights; the self-tuned variant reports
        the unnormalised exp(theta / c_t) of Fig. 5.2 up to a common factor).
        Predictions are invariant to the normalisation (thesis Sec. 5.1.2).

    Parameters
    ----------
    eta : float, default=0.1
        Learning rate 1/c of Fig. 5.1 (beta = exp(eta)); ignored when ``self_tuned``.
    balanced : bool, default=True
        Weights of both signs (see above).
    self_tuned : bool, default=False
        Use the self-tuned Winnow of Fig. 5.2.  Not combinable with ``average``: c_t changes
        every weight on each mistake, so there is no O(nnz) lazy average.
    n_epochs, shuffle, average, random_state, fit_intercept, intercept_scaling, class_weight
        As in :class:`onlinelearn.Perceptron` (``class_weight`` multiplies eta).

    Examples
    --------
    >>> from onlinelearn import Winnow
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = Winnow(eta=0.5)
    >>> online = clf.partial_fit_predict(X, y)
    >>> print(f"online mistake rate {(online != y).mean():.3f}")
    online mistake rate 0.168
    """

    _link = L.ENTROPY
    _parameter_constraints = {
        **OnlineLinearClassifier._parameter_constraints,
        "eta": [Interval(numbers.Real, 0, None, closed="neither")],
        "balanced": ["boolean"],
        "self_tuned": ["boolean"],
    }

    def __init__(
        self,
        *,
        eta=0.1,
        balanced=True,
        self_tuned=False,
        n_epochs=5,
        shuffle=True,
        average=False,
        random_state=None,
        fit_intercept=True,
        intercept_scaling=1.0,
        class_weight=None,
    ):
        self.eta = eta
        self.balanced = balanced
        self.self_tuned = self_tuned
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.average = average
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight

    @property
    def _link(self):  # noqa: D401 - the link code depends on a parameter
        return L.SELFTUNED if self.self_tuned else L.ENTROPY

    def _check_params(self):
        if self.self_tuned and self.average:
            raise ValueError(
                "Winnow(self_tuned=True) cannot be averaged: its learning rate c_t changes "
                "every weight at each mistake. Use average=False or a fixed eta."
            )

    def _balanced_flag(self):
        return int(bool(self.balanced))

    def _step_code(self):
        return S.CONSERVATIVE

    def _float_params(self, n_weights):
        eta = 1.0 if self.self_tuned else float(self.eta)
        return {"eta": eta, "log_n": math.log(max(n_weights, 2))}


class PNormPerceptron(OnlineLinearClassifier):
    """p-norm Perceptron (Grove, Littlestone & Schuurmans 2001; Gentile 2003).

    What
        The quasi-additive algorithm of Fig. 5.1 with the p-norm link of eq. (5.9), analysed in
        thesis Sec. 5.1.4: a bridge between the Perceptron (p = 2) and Winnow (p large).

    Problem solved by a round: the conservative dual step (eq. 5.13) with::

        f(w) = 1/(2(q-1)) ||w||_q^2,  1/p + 1/q = 1,  p >= 2
        w = grad f*(theta) = sign(theta_i) |theta_i|^{p-1} / ((p-1) ||theta||_p^{p-2})
        on a mistake: theta_y += x, theta_r -= x  (binary: theta += y x)

    Where
        The norm runs over all weights ((d+1) x K for K classes).  The learning rate does not
        change any prediction (Sec. 5.1.4), so there is none.  Mistake bound: Corollary 7.

    Parameters
    ----------
    p : float >= 2 or None, default=None
        The norm; None uses p = max(2, 2 ln n), n the number of weights, the choice that makes
        the bound of Corollary 7 close to Winnow's for sparse targets (Gentile 2003).
    n_epochs, shuffle, average, random_state, fit_intercept, intercept_scaling, class_weight
        As in :class:`onlinelearn.Perceptron`.

    Examples
    --------
    >>> from onlinelearn import PNormPerceptron
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = PNormPerceptron()
    >>> online = clf.partial_fit_predict(X, y)
    >>> print(f"online mistake rate {(online != y).mean():.3f}")
    online mistake rate 0.223
    """

    _link = L.PNORM
    _parameter_constraints = {
        **OnlineLinearClassifier._parameter_constraints,
        "p": [Interval(numbers.Real, 2, None, closed="left"), None],
    }

    def __init__(
        self,
        *,
        p=None,
        n_epochs=5,
        shuffle=True,
        average=False,
        random_state=None,
        fit_intercept=True,
        intercept_scaling=1.0,
        class_weight=None,
    ):
        self.p = p
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.average = average
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight

    def _effective_p(self, n_weights):
        if self.p is not None:
            return float(self.p)
        return max(2.0, 2.0 * math.log(max(n_weights, 1)))

    def _float_params(self, n_weights):
        return {"p": self._effective_p(n_weights)}
