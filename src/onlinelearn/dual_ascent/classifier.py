"""DualAscentClassifier: the dual ascent axis of the primal-dual framework, made selectable.

A preset: its parameters build one configuration of :mod:`onlinelearn.framework` (the link,
``Hinge(margin)`` and one of the steps ``LastK``, ``RowAction``, ``FTRL``, ``SelfTuned``,
``StronglyConvex``), which :class:`~onlinelearn.dual_ascent.family.DualAscentFamily` runs;
``OnlineLearner`` with the same objects is the same learner."""

from __future__ import annotations

import numbers

from sklearn.utils._param_validation import Interval, StrOptions

from ..framework.links import Entropy, Euclidean, PNorm
from ..framework.losses import Hinge
from ..framework.steps import FTRL, LastK, RowAction, SelfTuned, StronglyConvex
from ..shell.params import AT_LEAST_ONE, POSITIVE, SHARED, Param, parameters, validate_once
from .family import DualAscentFamily, check_dual_ascent_configuration

__all__ = ["DualAscentClassifier"]

_STEPS = ("last-k", "row-action", "ftrl", "self-tuned", "strongly-convex")
_LINKS = ("euclidean", "entropy", "pnorm")
_RULES = ("optimal", "subgradient")


@parameters(
    "* step k variant C margin link p U sigma update tol max_sweeps n_epochs shuffle "
    "random_state fit_intercept intercept_scaling",
    SHARED, step=Param("last-k", StrOptions(set(_STEPS))), k=Param(1, AT_LEAST_ONE),
    link=Param("euclidean", StrOptions(set(_LINKS))), sigma=Param(1.0, POSITIVE),
    p=Param(None, Interval(numbers.Real, 1, None, closed="neither"), None),
    update=Param("optimal", StrOptions(set(_RULES))), tol=Param(1e-7, POSITIVE),
    max_sweeps=Param(200, AT_LEAST_ONE),
)  # fmt: skip
class DualAscentClassifier(DualAscentFamily):
    """Online hinge-loss classifier whose round raises the dual by a chosen dual ascent step.

    Problem (thesis eq. 5.11-5.12, 5.18): after round t the learner holds one dual variable per
    past round and its weights are a function of them; a round increases the dual objective
    of the regularised hinge-loss problem over a chosen set of dual variables, all others kept.

    Window steps (``step`` in 'last-k', 'row-action', 'ftrl'; Euclidean complexity, c = 1/C)::

        max_{tau}  D(tau) = gamma sum_{i<=t} tau_i - 1/2 ||sum_i tau_i u_i||^2
                            - sum_i tau_i^2 / (4 C s_i)          [PA-II only]
        s.t.  0 <= tau_i <= C s_i (PA-I; no cap for PA-II),  tau_i fixed for i not in I_t
        w_{t+1} = sum_i tau_i u_i

    'last-k': I_t = the last k rounds, solved exactly (k = 1: eq. 7.11, identical to
    :class:`onlinelearn.PassiveAggressiveClassifier`; k = 2: the closed form of the 2-variable
    box QP; k > 2: coordinate ascent to the tolerance ``tol`` on the projected gradient).
    'row-action': k single-variable steps, on t first, then t-1, ..., t-k+1 (Sec. 5.2.2);
    also on the entropy and p-norm links (PA-I box, alpha = tau c in [0, s_i], the dual
    D = gamma sum alpha - c f*(v / c) at the fixed c = 1/C, each step the 1-D optimum).
    'ftrl': I_t = [t], regularised follow-the-leader, by coordinate ascent warm-started from the
    previous round; it stores every example and costs O(t nnz) per sweep, O(T^2 nnz) in all.

    Growing-c steps (``step`` in 'self-tuned', 'strongly-convex'; any ``link``)::

        max_{alpha_t in [0, 1]}  D_t(alpha) = gamma sum_{i<=t} alpha_i - c_t f*(v / c_t),
        v = sum_i alpha_i u_i,    w_t = grad f*(v / c_t)

    'self-tuned': c_t = X_t sqrt((|M_{t-1}| + 1) / U) (Fig. 3.2 with eq. 5.15-5.17: no horizon
    T needed); 'strongly-convex': c_t = sigma t (Fig. 4.1 for sigma f(w) + hinge: logarithmic
    regret).  ``update='optimal'`` takes the maximising alpha_t (eq. 7.11, 7.16 or a bisection);
    ``'subgradient'`` takes alpha_t = 1 when the loss is positive (Fig. 4.1 as printed).

    Where
        u_i = y_i x_i (two classes, one weight vector) or x_i in column y_i and -x_i in column
        r_i, the rival of highest score at round i (K classes; r_i is fixed when the example
        arrives, so that g_i is the hinge loss of the pair (y_i, r_i), which at w_i is the
        max-loss of the multiclass PA); x includes the intercept feature (value
        ``intercept_scaling``); gamma = ``margin``; s_i = ``sample_weight``; M the rounds with
        a prediction mistake; X_t the largest dual norm of a row so far (l2 for 'euclidean',
        l_inf for 'entropy', l_p for 'pnorm'); f the complexity of ``link``: 1/2||w||^2,
        relative entropy on the doubled simplex (balanced weights), or 1/(2(q-1))||w||_q^2.

    The dual objective of the run, ``dual_objective_``, never decreases (the framework's
    invariant; with ``update='subgradient'`` only the bound of Lemma 2 holds), except where a
    model of two labels meets a third (below).

    Labels that arrive after the first call (``partial_fit``, ``learn_one``) join ``classes_``
    with a zero column and no dual variable, a feasible point of the enlarged dual; r_i is the
    rival among the labels known at round i, so after growth the learner solves the K-class
    problem above over the pairs (y_i, r_i) of its rounds (not the run with every label
    declared by ``classes=`` from the start, where a declared label is a rival, score 0,
    before it arrives).  From K >= 3 labels the window D is unchanged (the growing-c D_t is
    recomputed at the last c_t: the entropy link's and the default p-norm's f* depend on the
    number of weights).  From two labels (one vector w) the weights become the columns
    (-w/2, w/2) (every margin kept), a past round i the pair (y_i, the other label) with dual
    variable tau_i / 2, and D the K-class dual at that point
    (:mod:`onlinelearn.dual_ascent._grow`).

    Parameters
    ----------
    step : {'last-k', 'row-action', 'ftrl', 'self-tuned', 'strongly-convex'}, default='last-k'
    k : int, default=1
        Dual variables per round of 'last-k' and 'row-action'; for the growing-c steps, k > 1
        adds a row-action sweep: after alpha_t, the optimal single-variable step on each of
        the k - 1 previous examples at the same c_t (Sec. 5.2.2, any link).
    variant : {'PA', 'PA-I', 'PA-II'}, default='PA-I'
        Window steps: the box (PA-I), the squared slack (PA-II), or no slack (PA, k = 1 only:
        the hard-margin window problem can be unbounded).
    C : float, default=1.0
        1/c of the window steps (cap on tau, or price of the squared slack).
    margin : float, default=1.0
        gamma, the margin of the hinge loss.
    link : {'euclidean', 'entropy', 'pnorm'}, default='euclidean'
        Growing-c steps only (the window steps are Euclidean).
    p : float or None, default=None
        p of the p-norm link (None: 2 ln(n_weights), at least 2).
    U : float, default=1.0
        'self-tuned': the bound on f(u) of the comparison vector in eq. (5.17).
    sigma : float, default=1.0
        'strongly-convex': the strong-convexity parameter (c_t = sigma t).
    update : {'optimal', 'subgradient'}, default='optimal'
        Growing-c steps: the maximising alpha_t, or Fig. 4.1's subgradient step.
    tol, max_sweeps : float, int
        Stopping rule of the coordinate ascent of 'last-k' (k > 2) and 'ftrl': a round stops
        when its projected gradient is below ``tol``, or after ``max_sweeps`` sweeps (then its
        step is not the window's optimum: counted in ``n_unconverged_``, with one
        ``ConvergenceWarning`` per call that had such rounds).  The other steps are exact.
    n_epochs, shuffle, random_state, fit_intercept, intercept_scaling
        As in :class:`onlinelearn.PassiveAggressiveClassifier`.

    Attributes
    ----------
    classes_, coef_, intercept_, n_features_in_, t_, n_updates_, n_mistakes_
    dual_objective_ : float
        D of the run after the last round.
    dual_coef_ : ndarray of shape (t_,)
        The dual variable of every round (tau_i, or alpha_i for the growing-c steps).
    n_unconverged_ : int
        Rounds whose coordinate ascent stopped at ``max_sweeps`` before ``tol`` (all epochs
        and calls; a call that adds to it issues a ``ConvergenceWarning``).

    Examples
    --------
    >>> from onlinelearn import DualAscentClassifier
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> for k in (1, 2):  # online mistake rate and dual objective: k = 2 raises D more
    ...     clf = DualAscentClassifier(step="last-k", k=k, C=0.01)
    ...     online = clf.partial_fit_predict(X[:500], y[:500])
    ...     print(k, f"{(online != y[:500]).mean():.3f}", f"{clf.dual_objective_:.4f}")
    1 0.190 1.3161
    2 0.186 1.3297
    """

    # ------------------------------------------------------------------ the configuration
    def _configuration(self):
        """(link, Hinge(margin), step) of :mod:`onlinelearn.framework`: this learner is
        ``OnlineLearner(link, Hinge(margin), step, average=False, tol=None)``."""
        link = {"euclidean": Euclidean, "entropy": Entropy}.get(self.link)
        link = link() if link is not None else PNorm(self.p)
        C, k, variant = self.C, self.k, self.variant
        step = {
            "last-k": lambda: LastK(k, C, variant, self.tol, self.max_sweeps),
            "row-action": lambda: RowAction(k, C, variant),
            "ftrl": lambda: FTRL(C, variant, self.tol, self.max_sweeps),
            "self-tuned": lambda: SelfTuned(self.U, self.update, k),
            "strongly-convex": lambda: StronglyConvex(self.sigma, self.update, k),
        }[self.step]()
        return link, Hinge(self.margin), step

    def _check_params(self):
        """Declarative constraints and the rules of the configuration; skipped while the
        parameters are the very objects last checked (a stream of small batches pays once)."""
        validate_once(self, self._validate_all_params)

    def _validate_all_params(self):
        self._validate_params()
        check_dual_ascent_configuration(*self._configuration())
