"""Kernel online learners: the Perceptron, PA (PA, PA-I, PA-II) and COPA in the dual.

Each learner declares its step; the plumbing they share (support set, budget, averaging,
transactions, model files) is :class:`._online_base.KernelOnlineClassifier`.
"""

from __future__ import annotations

from .._core import steps as S
from ..shell.meta import labels_from_scores
from ..shell.params import parameters
from ._online_base import (
    COMMON,
    KERNEL_ONLINE,
    KernelOnlineClassifier,
    json_params,
    kernel_param,
    params_from_json,
)

# the names the kernel SVM (and older imports) take from this module
__all__ = [
    "KernelOnlineClassifier", "KernelPerceptron", "KernelPassiveAggressive", "KernelCOPA",
    "json_params", "kernel_param", "labels_from_scores", "params_from_json",
]  # fmt: skip

_COMMON_DOC = """
    kernel : Kernel or str, default='rbf'
        A kernel of :mod:`onlinelearn.kernels` (any construction of its algebra) or one of
        'linear', 'rbf', 'poly', 'laplacian', 'cosine' (default parameters).  Arbitrary
        functions and 'precomputed' are refused.
    budget : int >= 1 or None, default=None
        Maximum number of support vectors; None keeps every example that caused an update.
    removal : {'oldest', 'smallest'}, default='oldest'
        Which support vector leaves a full set before a new one enters: the one inserted
        first ('oldest', the Forgetron's choice of whom to forget, without its shrinking of
        the others) or the one with the smallest coefficient norm ||c_s||_2 ('smallest').
    n_epochs : int, default=5
        Passes over the data made by :meth:`fit` (``partial_fit`` makes one).
    shuffle : bool, default=True
        Visit the rows of each epoch of :meth:`fit` in a random order from ``random_state``
        (the same orders as the linear learners with the same seed).
    average : bool, default=True
        Predict with the average of the hypotheses after every round, (1/T) sum_t f_t, as the
        linear twins do by default (``docs/defaults.md``).  Kept lazily per support vector
        (sum_t c_s^(t) = A_s + c_s (S - last_s)): O(n_columns) per update, nothing per round
        without one.  With a budget, a removed vector takes its share of the average with it:
        the average over all T rounds of the hypotheses restricted to the vectors still in the
        set.  ``partial_fit_predict`` predicts with the current iterate.  Model files keep the
        value they were saved with.
    random_state : int, RandomState or None, default=None
    fit_intercept : bool, default=True
        Learn a bias as the weight of a constant feature of value b = ``intercept_scaling``,
        i.e. run on the kernel k(x, z) + b^2 (the linear learners' convention).
    intercept_scaling : float > 0, default=1.0
    class_weight : dict, 'balanced' or None, default=None
        Multiplies the step (Perceptron, PA) or C (PA-I, PA-II, COPA) of each class's examples,
        with the linear learners' rules (exact counts in fit, running counts in partial_fit).

"""


#: the start of their examples: the data and the kernel
_EXAMPLE_DOC = """\
    Examples
    --------
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> from onlinelearn.kernels import RBF
"""


def _common_doc(cls):
    doc = cls.__doc__.replace("    {common}\n", _COMMON_DOC.lstrip("\n"))
    cls.__doc__ = doc.replace("    {example}\n", _EXAMPLE_DOC)
    return cls


@_common_doc
@parameters("kernel * " + COMMON, KERNEL_ONLINE)
class KernelPerceptron(KernelOnlineClassifier):
    """Kernel Perceptron: the conservative dual step in the RKHS of ``kernel``.

    What
        The Perceptron (thesis Fig. 5.1, eq. 5.13) with <w, x> replaced by a kernel: on a
        mistake the example enters the support set (binary: c_t = y_t; K classes:
        c_{t,y} = +1, c_{t,r} = -1 for the max-score rival r).  Thesis Sec. 3.3: the dual
        variables are the coefficients of the support vectors.

    Problem solved by a round (as :class:`onlinelearn.Perceptron`)::

        alpha_t = 1 if margin_t(f_t) <= 0 else 0,   f_{t+1} = f_t + alpha_t y_t k(x_t, .)

    Where
        f_k(x) = sum_s c_sk (k(x_s, x) + b^2), b = ``intercept_scaling`` (0 without intercept)
        margin_t = y_t f(x_t) (binary), f_y(x_t) - max_{r != y} f_r(x_t) (K classes)

    With ``kernel='linear'`` it makes the same predictions and mistakes as
    :class:`onlinelearn.Perceptron` with the same parameters (coef_ = sum_s c_s x_s).

    Parameters
    ----------
    {common}
    Attributes
    ----------
    classes_, support_vectors_, dual_coef_ (n_columns, n_SV), n_support_ (per class),
    intercept_, n_updates_, n_mistakes_, t_, n_removed_, dual_objective_ (the kept dual of
    the hinge at margin 1 with C_t = the example's weight: an anytime certificate, see
    :attr:`KernelOnlineClassifier.dual_objective_`)

    {example}
    >>> from onlinelearn import KernelPerceptron
    >>> clf = KernelPerceptron(RBF(gamma=0.02), budget=300, random_state=0, n_epochs=2)
    >>> clf = clf.fit(X[:600], y[:600])
    >>> print(int(clf.n_support_.sum()), f"{clf.score(*load_dna('test')):.3f}")
    277 0.901
    """

    def _step(self):
        return S.CONSERVATIVE, 1.0, 0.0


_VARIANTS = {"PA": S.PA, "PA-I": S.PA1, "PA-II": S.PA2}


@_common_doc
@parameters("kernel * variant C margin " + COMMON, KERNEL_ONLINE)
class KernelPassiveAggressive(KernelOnlineClassifier):
    """Kernel Passive-Aggressive (PA, PA-I, PA-II; Crammer et al. 2006, Sec. 3 and 7).

    What
        The aggressive dual step in the RKHS: the one new dual variable maximises the dual of
        the round, in closed form (thesis eq. 7.11), with ||x||^2 replaced by k(x, x) + b^2.

    Problem solved by a round (Crammer et al. 2006, eqs. 1, 5, 7)::

        PA:    f_{t+1} = argmin_f 1/2 ||f - f_t||_H^2            s.t. loss_t(f) = 0
        PA-I:  ... + C xi,   loss_t(f) <= xi, xi >= 0
        PA-II: ... + C xi^2, loss_t(f) <= xi

        tau = loss / (kappa K_tt) (PA), min(C, loss / (kappa K_tt)) (PA-I),
        loss / (kappa K_tt + 1/(2C)) (PA-II);  c_t += tau y_t (binary) or +tau on y, -tau on r

    Where
        loss_t = [margin - margin_t(f_t)]_+, K_tt = k(x_t, x_t) + b^2, kappa = 1 (binary) or 2
        (K classes, max-loss rival r), ``sample_weight`` multiplies C (PA-I, PA-II) or tau (PA)

    With ``kernel='linear'`` it reproduces :class:`onlinelearn.PassiveAggressiveClassifier`,
    ``dual_objective_`` included (the dual of 1/2 ||f||_H^2 + sum_t C_t loss_t(f), kept in
    the pass; :attr:`KernelOnlineClassifier.dual_objective_`).

    Parameters
    ----------
    variant : {'PA', 'PA-I', 'PA-II'}, default='PA-I'
    C : float > 0, default=1.0
    margin : float >= 0, default=1.0
    {common}
    {example}
    >>> from onlinelearn import KernelPassiveAggressive
    >>> clf = KernelPassiveAggressive(RBF(gamma=0.02), C=1.0, random_state=0, n_epochs=2)
    >>> print(f"{clf.fit(X[:600], y[:600]).score(*load_dna('test')):.3f}")
    0.909
    """

    def _step(self):
        return _VARIANTS[self.variant], float(self.C), float(self.margin)


@_common_doc
@parameters("kernel * C " + COMMON, KERNEL_ONLINE)
class KernelCOPA(KernelOnlineClassifier):
    """Kernel COPA: COPA's closed-form multi-variable step (Ralaivola 2012, Thm. 3), in an RKHS.

    What
        COPA's round needs only the scores s_q = f_q(x_t) and ||x_t||^2, here
        k(x_t, x_t) + b^2 (:func:`onlinelearn._core.copa.copa_step`); the update
        w_q += alpha_q x_t becomes c_{t,q} += alpha_q.  One column per class, also for two.

    Problem solved by a round (paper eq. (18))::

        min_f 1/2 sum_q ||f_q - f_q^t||_H^2 + C_t/2 sum_{q != y_t} [f_q(x_t) + 1/(Q-1)]_+^2
        s.t.  sum_q f_q = 0

    Where
        Q the number of classes, C_t = ``C`` x ``sample_weight``.

    With ``kernel='linear'`` it reproduces :class:`onlinelearn.COPA` (``class_weight=None``).
    ``dual_objective_`` is NaN, as COPA's.

    Parameters
    ----------
    C : float > 0, default=1.0
    {common}
    {example}
    >>> from onlinelearn import KernelCOPA
    >>> clf = KernelCOPA(RBF(gamma=0.02), C=1.0, random_state=0, n_epochs=2)
    >>> print(f"{clf.fit(X[:600], y[:600]).score(*load_dna('test')):.3f}")
    0.879
    """

    _always_multiclass = True

    def _step(self):
        return S.COPA, float(self.C), 0.0
