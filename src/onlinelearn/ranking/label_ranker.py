"""LabelRanker: online label ranking by dual ascent (thesis ch. 8, Secs. 7.2-7.3)."""

from __future__ import annotations

import numbers

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import ranking as RK
from ..framework.links import Entropy, Euclidean
from ..framework.losses import RankingHinge
from ..framework.steps import Aggressive, Conservative, RoundOptimal
from ..shell.params import POSITIVE, Param, parameters
from ._counters import RANKING
from .family import LabelRankingFamily, check_ranking_configuration

__all__ = ["LabelRanker"]

#: complexity -> the link (label ranking's entropy: one softmax per label, no learning rate)
_LINKS = {"euclidean": Euclidean(), "entropy": Entropy(eta=1.0, balanced=False)}
#: C='auto': the cap of the step per complexity, the C of the grid whose worst gap to the best
#: loss over the shared data sets is smallest (docs/ranking.md, benchmarks/ranking_defaults.py)
AUTO_C = {"euclidean": 0.01, "entropy": 0.003}
#: update -> the step, built from C
_STEPS = {
    "I": lambda C: Conservative(eta=C),
    "II": lambda C: Aggressive(C=C, variant="PA-I"),
    "III": lambda C: RoundOptimal(C=C),
}


@parameters(
    "update complexity C margin fit_intercept intercept_scaling n_epochs shuffle random_state "
    "constraint radius floor",
    RANKING, C=Param("auto", POSITIVE, StrOptions({"auto"})),
    update=Param("III", StrOptions(set(_STEPS))),
    complexity=Param("euclidean", StrOptions(set(_LINKS))),
    constraint=Param(None, StrOptions({"l1", "floor"}), None),
    floor=Param(1e-6, Interval(numbers.Real, 0, 1, closed="neither")),
)  # fmt: skip
class LabelRanker(LabelRankingFamily, ClassifierMixin, BaseEstimator):
    """Online label ranking: K weight vectors, the pair hinge loss (8.1), three dual ascent steps.

    Problem solved by a round (thesis eq. (3.12)/(7.8); the one-round dual of (7.18))::

        max_tau  gamma sum_{r in Y_t} tau_r - sum_{r=1}^{K} [f*(theta_r + sigma_r tau_r x_t)
                                                             - f*(theta_r)]
        s.t.     tau_r >= 0,   sum_{r in Y_t} tau_r = sum_{s not in Y_t} tau_s <= C

    the dual of the primal step ``min_W f(W) - <theta, W> + C max_{r in Y, s not in Y}
    [gamma - (<w_r, x_t> - <w_s, x_t>)]_+`` (loss (8.1)); then theta_r += sigma_r tau_r x_t.

    Where
        x_t, Y_t     the instance (with a constant feature ``intercept_scaling`` appended when
                     ``fit_intercept``) and its set of relevant labels; sigma_r = +1 for r in Y_t,
                     -1 otherwise; s_r = <w_r, x_t> is the score (``decision_function``)
        w_r          the weight vector of label r, w_r = grad f*(theta_r):
                     ``complexity='euclidean'``, f = 1/2 ||w||^2 (8.2): w_r = theta_r (additive);
                     ``'entropy'``, f = log n + sum_j w_j log w_j on the simplex (8.3):
                     w_r = softmax(theta_r) (multiplicative, EG), n = number of weights
        gamma        the margin (``margin``)
        C            1/c of the thesis: the cap of the dual step (``C`` x ``sample_weight``)
        tau          the dual step of the round (alpha / c in the thesis)

    The three updates (thesis Sec. 8.3.2; combined with the two complexities, the 6 algorithms of
    Table 8.1):

    * ``'I'``, conservative (8.4): on a mistake, tau = C on the most violating pair
      r0 = argmin_{r in Y} s_r, s0 = argmax_{s not in Y} s_s (the label-ranking Perceptron for
      the Euclidean complexity, EG for the entropy);
    * ``'II'``, aggressive: tau = t (e_r0 + e_s0), t the best step on that pair, t in [0, C]
      (Euclidean: t = min{C, loss / (2 ||x||^2)}, PA-I; entropy: a safeguarded Newton search);
    * ``'III'``, optimal: the maximiser of the problem above.  Euclidean: exact, the O(K log K)
      solution of Sec. 7.3.1 / Fig. 7.4.  Entropy: the primal-dual interior point method of
      Sec. 7.3.2 (it stops at a duality gap of 1e-11 (1 + C) or after 50 iterations;
      ``ip_iterations_max_`` reports the most used), whose step is kept when a dual bound built
      from its multipliers certifies it; otherwise a safeguarded exact method (monotone root
      finding on the two multipliers, Newton's method kept in a bracket) gives the step,
      certified by its own dual bound.  What is certified: the step's objective is within
      1e-9 (relative) of the round's optimum, or, in rounds whose objective is a difference of
      terms too close to resolve that finely (it is below about 1e-5 of them: nearly flat
      rounds at large C), within 1e-14 of the magnitude of those terms.  A round that misses
      this is counted in ``n_inexact_steps_`` and the call warns (``ConvergenceWarning``); none
      did in our tests (C from 1e-3 to 1e3, random rounds, Enron, pen digits).  The interior
      point step alone missed it at C >= 10 (capped) and at small C or margin (its gap test
      is absolute): with margin 1 it is kept on every Enron round at C = 0.01 and C = 1, on
      74 % of them at the entropy's default C = 0.003 (the exact method takes the others).

    Updates II and III act whenever the loss is positive, I only on mistakes.  A row with no
    relevant label or with every label relevant has no pair (r, s): it has no loss, is not a
    mistake and changes nothing (``n_mistakes_`` and the dual stay as they were).

    As a point of the framework (:mod:`onlinelearn.framework`), the learner is the
    configuration (link, loss, step) below, run by
    :class:`~onlinelearn.ranking.family.LabelRankingFamily`::

        link:  complexity='euclidean' -> Euclidean()
               complexity='entropy'   -> Entropy(eta=1.0, balanced=False)   (softmax per label)
        loss:  RankingHinge(margin)
        step:  update='I'   -> Conservative(eta=C)
               update='II'  -> Aggressive(C=C, variant='PA-I')
               update='III' -> RoundOptimal(C=C)

    A round is a *mistake* (thesis Sec. 8.2) when some irrelevant label scores at least as high
    as some relevant label: min_{r in Y} s_r <= max_{s not in Y} s_s (ties count as mistakes).

    Parameters
    ----------
    update : {'I', 'II', 'III'}, default='III'
        The dual ascent step (above).
    complexity : {'euclidean', 'entropy'}, default='euclidean'
        The complexity function f: squared norm (8.2) or relative entropy (8.3).
    C : float > 0 or 'auto', default='auto'
        The cap of the dual step (1/c of the thesis).  For 'euclidean' with update II or III only
        C / margin matters; for update I with 'euclidean' it only scales the weights.
        ``'auto'``: 0.01 for 'euclidean' (the former default, unchanged) and 0.003 for
        'entropy' (was 0.01), chosen on the nine labelled sets of the shared data (two
        multi-label, seven single-label; online and held-out ranking loss, margin 1): for update
        III each is the C whose worst gap to the best C of its complexity is smallest, 0.017
        (euclidean) and 0.054 (entropy; 0.071 at 0.01, the worst on the dense sets, where the
        entropy trails the squared norm at any C); on the text sets the entropy's gap is below
        0.002 online (docs/ranking.md).  Feature scale matters for 'euclidean': on unit-norm
        TF-IDF rows (20 newsgroups) C = 1 does better (0.053 against 0.059 online).
    margin : float > 0, default=1.0
        gamma of (8.1).  With 'entropy' the scores lie in [min_j x_j, max_j x_j] (w is on the
        simplex), so the margin is measured against the feature scale.
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` to every x (a bias per label); on Enron
        it lowers the online ranking loss for every C and both complexities (0.128 against
        0.140 at the default C).
    intercept_scaling : float > 0, default=1.0
        Value of that constant feature.
    n_epochs : int >= 1, default=5
        Passes over the data made by :meth:`fit` (``partial_fit`` makes one).
    shuffle : bool, default=True
        Visit the rows of each epoch of :meth:`fit` in a random order (``random_state``).
    random_state : int, RandomState or None, default=None
    constraint : {None, 'l1', 'floor'}, default=None
        A projected update: after every update, each weight vector the update changed is
        projected back onto a set (thesis Sec. 7.1).  ``'l1'`` (with 'euclidean'): the Euclidean
        projection onto the l1 ball {||w_r||_1 <= ``radius``} (Fig. 7.2; sparse weights).
        ``'floor'`` (with 'entropy'): the entropic projection onto {w_r in the simplex,
        w_rj >= ``floor``} (Fig. 7.3; no weight can vanish, so the learner can recover, as in
        shifting experts).  Each projection costs O(n log n) per changed vector.  With a
        constraint, ``dual_objective_`` is NaN (the greedy projected step is outside the
        framework's dual ascent).
    radius : float > 0, default=1.0
        z of the l1 ball (``constraint='l1'``).
    floor : float in (0, 1), default=1e-6
        eps of the floored simplex (``constraint='floor'``); eps n <= 1 is required.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The labels, in the order of the columns of Y and of ``decision_function``.
    coef_ : ndarray of shape (K, n_features)
        w_r (without the bias weight).  For 'entropy' the rows with the bias weight sum to 1.
    intercept_ : ndarray of shape (K,)
        ``intercept_scaling`` times the bias weight of each label (0 without intercept).
    n_updates_, n_mistakes_, t_ : int
        Rounds with an update, online mistakes (counted before each update), rows processed.
    dual_objective_ : float
        D = gamma sum_t sum_{r in Y_t} tau_{t,r} - sum_r (f*(theta_r) - f*(0)), the framework's
        dual objective (in units of c).  Updates II and III never decrease it; update I can (its
        step is not chosen by the dual).
    label_cardinality_ : float
        Mean number of relevant labels of the training rows (used by :meth:`predict`).
    ip_iterations_max_ : int
        Most interior-point iterations one round of update III with 'entropy' needed (0 else).
    n_inexact_steps_ : int
        Rounds of update III with 'entropy' whose step was not certified to the tolerance above
        (all epochs and calls); a call that adds to it issues one ``ConvergenceWarning``.

    Examples
    --------
    Progressive validation on the DNA data shipped with the package (one label per row):

    >>> from onlinelearn import LabelRanker
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> est = LabelRanker(update="III")
    >>> mistakes = est.partial_fit_mistakes(X, y)
    >>> print(f"online mistakes {mistakes.mean():.3f}")
    online mistakes 0.104
    >>> X_test, y_test = load_dna("test")
    >>> print(f"test accuracy {est.score(X_test, y_test):.3f}")
    test accuracy 0.924
    """

    # ------------------------------------------------------------------ the configuration
    def _configuration(self):
        """``(link, loss, step)`` of :mod:`onlinelearn.framework` (class docstring)."""
        try:
            C = AUTO_C[self.complexity] if isinstance(self.C, str) and self.C == "auto" else self.C
            return _LINKS[self.complexity], RankingHinge(self.margin), _STEPS[self.update](C)
        except (KeyError, TypeError, ValueError):
            self._validate_params()  # a bad parameter: its own check's message first
            raise

    def _check_params(self):
        """The declarative constraints, then the configuration's rules."""
        self._validate_params()
        check_ranking_configuration(*self._configuration())

    def _projection(self):
        """``constraint`` as the family's projection: (code, radius or floor)."""
        if self.constraint == "l1":
            return RK.L1_BALL, float(self.radius)
        if self.constraint == "floor":
            return RK.FLOOR, float(self.floor)
        return RK.NO_CONSTRAINT, 0.0
