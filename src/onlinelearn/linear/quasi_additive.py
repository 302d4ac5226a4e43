"""Quasi-additive learners (thesis Sec. 5.1, Fig. 5.1): Winnow / EG and the p-norm Perceptron.

They differ from the Perceptron and PA in the link w = grad f*(theta) that maps the additive
dual sum theta to the weights.  Each offers the conservative step theta <- theta + eta y x on
mistakes (eq. 5.13) and the aggressive steps PA, PA-I and PA-II, which solve the one-round dual
problem of eq. (7.9) for that link (see :mod:`onlinelearn._core.steps`).
"""

from __future__ import annotations

import numbers

from sklearn.utils._param_validation import Interval, StrOptions

from ..framework.links import Entropy, PNorm
from ..framework.losses import Hinge
from ..framework.steps import Aggressive, Conservative
from ..shell.base import LINEAR, OnlineLinearClassifier
from ..shell.intercept import typical_value_scaling
from ..shell.params import POSITIVE, Param, parameters

#: the declarations of the quasi-additive learners: the link's parameters and the step
QUASI_ADDITIVE = {
    **LINEAR,
    "eta": Param(0.1, POSITIVE),
    "balanced": Param(True, "boolean"),
    "self_tuned": Param(False, "boolean"),
    "p": Param(None, Interval(numbers.Real, 2, None, closed="left"), None),
    "step": Param("conservative", StrOptions({"conservative", "PA", "PA-I", "PA-II"})),
}
#: their signatures: the link's parameters, these, then the common ones
_STEP_AND_COMMON = (
    "n_epochs shuffle average random_state fit_intercept intercept_scaling class_weight step C "
    "margin dtype"
)


class _TypicalValueIntercept:
    """``intercept_scaling='auto'`` of the quasi-additive learners: b = the power of ten
    nearest the rms of the first batch's nonzero values, at most 1
    (:func:`~onlinelearn.shell.intercept.typical_value_scaling`), read from the values and not
    from their storage (it was 0.1 for any CSR and 1 for any dense first batch)."""

    def _auto_intercept_scaling(self, batch, fit_mode=True):
        return typical_value_scaling(batch)


def _loss_and_step(est):
    """The hinge and the step of a quasi-additive learner: on mistakes (margin 0, Fig. 5.1) or
    aggressive with cap ``C`` and margin ``margin`` (eq. 7.9)."""
    if est.step == "conservative":
        return Hinge(0.0), Conservative()
    return Hinge(est.margin), Aggressive(est.C, est.step)


#: The aggressive steps shared by the links of this module (pasted into both docstrings).
_AGGRESSIVE_STEPS = """\
    Aggressive steps (``step`` = 'PA', 'PA-I', 'PA-II'): the dual of the round's problem, thesis
    eq. (7.9), in the variable tau = alpha / c with C = 1/c::

        PA-I:  tau = argmax_{0 <= tau <= C} gamma tau - f*(theta + tau u)
        PA:    the same without the cap (C = inf)
        PA-II: tau = argmax_{tau >= 0}      gamma tau - f*(theta + tau u) - tau^2 / (4C)
        theta <- theta + tau u

    u = y x (binary) or x on the column of y and -x on the column of the rival r of maximal score
    (K classes); gamma = ``margin``.  The objective's derivative is gamma - margin(w(tau))
    (- tau/(2C)), nonincreasing in tau, so tau is its root clipped to the domain: the smallest
    step that lifts the margin of the round to gamma (PA), capped at C (PA-I), or traded off
    against its square (PA-II).  With the Euclidean link these are Crammer et al. (2006); here
    the root is found numerically (safeguarded Newton, relative accuracy ~1e-15) in O(nnz(x))
    per evaluation.  ``sample_weight`` x class weight multiplies tau (PA) or C (PA-I, PA-II).
"""


def _with_steps(cls):
    cls.__doc__ = cls.__doc__.replace("    @AGGRESSIVE_STEPS@\n", _AGGRESSIVE_STEPS)
    return cls


@_with_steps
@parameters("* eta balanced self_tuned " + _STEP_AND_COMMON, QUASI_ADDITIVE, margin=0.1)
class Winnow(_TypicalValueIntercept, OnlineLinearClassifier):
    """Winnow / normalised Exponentiated Gradient: entropy link x hinge x conservative step.

    What
        The quasi-additive algorithm of Fig. 5.1 with the link of eq. (5.4), i.e. the
        multiplicative update w_i <- w_i beta^{y x_i}, beta = exp(eta) (eq. 5.5), analysed with
        the relative entropy on the probability simplex (Sec. 5.1.2); or the self-tuned variant
        of Fig. 5.2 (Sec. 5.1.3), which needs no learning rate.

    Problem solved by a round: the conservative dual step (eq. 5.13) with::

        f(w) = sum_i w_i log(w_i / (1/n))  on  S = {w >= 0, sum_i w_i = 1}
        f*(theta) = log sum_j exp(theta_j) - log n
        w = grad f*(theta) = exp(theta) / sum_j exp(theta_j)   (eq. 5.6, softmax)
        on a mistake: theta_y += eta x, theta_r -= eta x  (binary: theta += eta y x)

    or one of the aggressive steps below.  For x in {-1, 0, 1}^n the entropy case of PA-I is
    the closed form of eqs. (7.12)-(7.14): with theta_+, theta_-, theta_0 the sums of exp(theta_j)
    over the weights whose u_j is 1, -1, 0, beta = exp(tau) is the largest root of
    (1 - gamma) theta_+ beta^2 - gamma theta_0 beta - (1 + gamma) theta_- = 0.

    @AGGRESSIVE_STEPS@
    On the simplex the margin is bounded by M = max_e |u_e| (balanced; max_e u_e and 0 otherwise)
    and reaches it only as tau -> inf: ``margin`` should lie well below ||x||_inf.  With PA and
    ``margin`` >= M on some round there is no finite step: fit raises FloatingPointError and
    leaves the model as it was (PA-I and PA-II always have a finite step).

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
        every weight on each mistake, so there is no O(nnz) lazy average; conservative step only.
    n_epochs, shuffle, average, random_state, fit_intercept, intercept_scaling, class_weight,
    dtype
        As in :class:`onlinelearn.Perceptron` (``class_weight`` multiplies eta), but
        ``intercept_scaling`` is a number (default 1.0) or ``'auto'``, as in
        :class:`onlinelearn.PassiveAggressiveClassifier` (b from the values of the first
        batch: 0.1 on unit-norm text, 1 on binary or unscaled features).
    step : {'conservative', 'PA', 'PA-I', 'PA-II'}, default='conservative'
        The dual step: on mistakes with rate ``eta`` (Fig. 5.1), or aggressive (above; no
        learning rate, ``eta`` is ignored).
    C : float, default=1.0
        Cap on tau (PA-I) or slack cost (PA-II); ignored by the other steps.
    margin : float, default=0.1
        gamma of the hinge loss of the aggressive steps (the weights lie on the simplex, so
        the margin is at most ||x||_inf); the conservative step does not read it, but its
        kept dual objective ``dual_objective_`` is that of the hinge at this gamma.

    Attributes
    ----------
    dual_objective_ : float
        D = gamma sum_t tau_t - f*(theta) (tau_t = eta on the conservative step, gamma =
        ``margin``), the dual of f(w) + sum_t C_t [gamma - margin_t(w)]_+ with C_t = eta (or
        the aggressive step's C), kept as the sum of the rounds' increments (docs/bounds.md);
        NaN for the self-tuned variant.

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

    def _configuration(self):
        link = Entropy(eta=self.eta, balanced=self.balanced, self_tuned=self.self_tuned)
        return (link, *_loss_and_step(self))

    def _dual_margin(self):
        """gamma of the kept dual (``dual_objective_``): ``margin`` for every step, the
        conservative one included (thesis eq. 5.7 holds for every gamma > 0; the weights lie
        on the simplex, so a gamma above ||x||_inf would make the dual a poor certificate)."""
        return float(self.margin)

    def _check_params(self):
        if self.self_tuned and self.average:
            raise ValueError(
                "Winnow(self_tuned=True) cannot be averaged: its learning rate c_t changes "
                "every weight at each mistake. Use average=False or a fixed eta."
            )
        if self.self_tuned and self.step != "conservative":
            raise ValueError(
                f"Winnow(self_tuned=True) has only the conservative step, got step={self.step!r}. "
                "Use self_tuned=False for the aggressive steps (they need no learning rate)."
            )


@_with_steps
@parameters("* p " + _STEP_AND_COMMON, QUASI_ADDITIVE)
class PNormPerceptron(_TypicalValueIntercept, OnlineLinearClassifier):
    """p-norm Perceptron (Grove, Littlestone & Schuurmans 2001; Gentile 2003).

    What
        The quasi-additive algorithm of Fig. 5.1 with the p-norm link of eq. (5.9), analysed in
        thesis Sec. 5.1.4: a bridge between the Perceptron (p = 2) and Winnow (p large).

    Problem solved by a round: the conservative dual step (eq. 5.13) with::

        f(w) = 1/(2(q-1)) ||w||_q^2,  1/p + 1/q = 1,  p >= 2
        f*(theta) = ||theta||_p^2 / (2(p-1))
        w = grad f*(theta) = sign(theta_i) |theta_i|^{p-1} / ((p-1) ||theta||_p^{p-2})
        on a mistake: theta_y += x, theta_r -= x  (binary: theta += y x)

    or one of the aggressive steps below (for p = 2 they are PA, PA-I, PA-II exactly).

    @AGGRESSIVE_STEPS@
    The margin is 1-homogeneous in theta and grows without bound along u, so every step is
    finite; as for PA, the predictions of PA (C = inf) do not depend on the scale of ``margin``.

    Where
        The norm runs over all weights ((d+1) x K for K classes).  The learning rate does not
        change any prediction (Sec. 5.1.4), so there is none.  Mistake bound: Corollary 7.

    Parameters
    ----------
    p : float >= 2 or None, default=None
        The norm; None uses p = max(2, 2 ln n), n the number of weights, the choice that makes
        the bound of Corollary 7 close to Winnow's for sparse targets (Gentile 2003).
    n_epochs, shuffle, average, random_state, fit_intercept, intercept_scaling, class_weight,
    dtype
        As in :class:`onlinelearn.Perceptron`, but ``intercept_scaling`` is a number (default
        1.0) or ``'auto'``, as in :class:`onlinelearn.PassiveAggressiveClassifier`.
    step : {'conservative', 'PA', 'PA-I', 'PA-II'}, default='conservative'
        The dual step: on mistakes (Fig. 5.1), or aggressive (above).
    C : float, default=1.0
        Cap on tau (PA-I) or slack cost (PA-II); ignored by the other steps.
    margin : float, default=1.0
        gamma of the hinge loss of the aggressive steps; the conservative step does not read
        it, but its kept dual objective ``dual_objective_`` is that of the hinge at this gamma.

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

    def _effective_p(self, n_weights):
        return PNorm(self.p).effective_p(n_weights)

    def _configuration(self):
        return (PNorm(self.p), *_loss_and_step(self))

    _dual_margin = Winnow._dual_margin
