"""The thesis's bounds as certificates: observed against bound on a stream, and the duality gap.

:func:`report` runs a learner over a stream (X, y) in the given order (one
``partial_fit_predict`` call on a fresh clone) and returns, beside the quantity a theorem
bounds (mistakes), the bound that theorem gives for a comparator u, the dual objective the
learner kept (``dual_objective_``), the primal value of its averaged predictor on the same
regularised problem and their gap ``primal - dual >= 0`` (weak duality: an anytime
certificate of how far the averaged predictor is from the batch optimum of that problem).

Bounds (u any comparator; L(u) = sum of the comparator's hinge losses; every right-hand side
grows with L and X, so sums over more rounds, or a larger X, give valid bounds too)::

    Perceptron  thesis Cor. 5:     |M| <= L + X ||u|| sqrt(L) + X^2 ||u||^2,
                L = sum_{t in M} [1 - margin_t(u)]_+,  X = max_{t in M} ||u_t||_2
    PA-I        Crammer et al. 2006, Thm. 4 (thesis Sec. 5.2, eq. 5.14):
                #mistakes <= max(R^2, 1/C) (||u||^2 + 2 C sum_t [1 - margin_t(u)]_+),
                R = max_t ||u_t||_2 (margin gamma != 1: PA-I(gamma, C) = gamma PA-I(1, C/gamma))
    Winnow      thesis eq. (5.7) at the fixed c = 1/eta (Sec. 5.1.2):
                gamma |M| <= log(n) / eta + eta X^2 |M| / 2 + sum_{t in M} [gamma - margin_t(u)]_+
                for u on the simplex of the n (doubled, when balanced) weights, X = max ||u_t||_inf
    p-norm      thesis Cor. 7 (Sec. 5.1.4), q = p / (p - 1), norms over all the weights:
    Perceptron  |M| <= L + X ||u||_q sqrt((p-1) L) + (p-1) X^2 ||u||_q^2,  X = max ||u_t||_p
    PA          Crammer et al. 2006, Thm. 2 (separable case): if margin_t(u) >= 1 on every
                round, sum_t loss_t^2 <= R^2 ||u||^2, hence #mistakes <= R^2 ||u||^2
                (a mistake has loss >= 1; PA(gamma) = gamma PA(1), so the margin-1 reading holds)
    PA-II       Crammer et al. 2006, Thm. 5: sum_t loss_t^2 <= (R^2 + 1/(2C)) (||u||^2
                + 2 C sum_t [1 - margin_t(u)]_+^2), hence #mistakes <= the same
                (PA-II(gamma, C) = gamma PA-II(1, C): C is not rescaled, unlike PA-I)
    COPA        Ralaivola 2012, Theorem 2, eq. (15): with probability 1 - delta,
                ||C_l(h_bar)|| <= ||C_hat_{l,y}(h, X)|| + M sqrt(2Q sum_p 1/T_p log(Q/delta)),
                h_bar = (1/T) sum_{t<T} h_t, the losses of eq. (16); see :func:`report`
    LipschitzTuned, LossTuned (OnlineLearner steps)  thesis Cor. 2/3 and Theorem 2 (Sec. 3.5):
                the cumulative (squared) hinge loss <= G(u) + the regret bound, see
                :mod:`onlinelearn.bounds.tuned`
    WeightedMinMax  the min-max note's Lemma 1 / Theorem 1 (difference labels), and their
                one-hot form (docs/graph.md), see :mod:`onlinelearn.bounds.minmax`
    PassiveAggressiveRegressor  Crammer et al. 2006, Sec. 5 (Thms. 2-5 with the eps-insensitive
                loss l_t): sum_t l_t^2 (PA, PA-II) or sum_t min(l_t, l_t^2) (PA-I) of the
                online predictions, see :mod:`onlinelearn.bounds.regression`

:func:`online_to_batch` (thesis App. B.3, i.i.d. rows): the risk of the hypothesis an
online-to-batch conversion of :mod:`onlinelearn.evaluation` returns ('average': Theorem 13 on a
scaled hinge; 'last': Lemma 23 / Corollary 8; 'validation': Theorem 12 and a validation step),
bounded from the run's online loss, beside its loss on held-out rows; see
:mod:`onlinelearn.bounds.batch`.  :data:`COVERED` names the learners :func:`report` covers.

Here u_t is the round's direction: y_t x_t (one weight vector) or x_t on the column of y_t and
-x_t on the max-score rival's (K columns, so ||u_t||_2 = sqrt(2) ||x_t||), x_t including the
intercept feature of value b.  M is the set of rounds on which the learner's margin was <= 0
(its updates for the conservative steps): the prediction mistakes and the ties, so the
prediction mistakes reported as ``observed`` are at most |M|.  The sums and maxima are taken
over all rounds, not over M only: the right-hand sides grow with them, so the bound stays
valid, and it says something.  With sums over M alone, u = 0 gives |M| <= |M| and the best
scale of u tends to 0: the bound then sits on the observed curve and certifies nothing.

Comparator: by default the batch optimum of the same regularised problem, solved by our dual
coordinate ascent (:class:`onlinelearn.DualCoordinateSVC`: binary hinge, or Crammer-Singer,
which is the max-rival multiclass hinge), then rescaled by the factor that minimises the bound
(the bounds hold for every u, so the minimum over a grid of scales is a bound).  For Winnow the
comparator must lie on the simplex: the SVM optimum's direction, normalised to ||u||_1 = 1 and
scaled into the l1 ball, with gamma chosen on a grid.  For PA (hard margin) the comparator
must separate the stream: the candidates are the hard-margin batch optimum (C = 1e4) and the
learner's own last and averaged weights, each rescaled to a smallest margin of 1; if none has
a positive margin on every round the theorem does not apply and the bound is +inf.
"""

from __future__ import annotations

from .batch import ensemble_bound, format_online_to_batch, online_to_batch

# private names kept importable from here (benchmarks/bench_dual.py reads _LEARNERS)
from .cli import _LEARNERS, COVERED, main  # noqa: F401
from .copa import _copa_report  # noqa: F401
from .curves import _SCALES, _best_scale  # noqa: F401
from .mistakes import report
from .primal import batch_optimum, entropy_complexity, primal_objective
from .table import format_table, plot

__all__ = [
    "batch_optimum",
    "ensemble_bound",
    "entropy_complexity",
    "format_online_to_batch",
    "format_table",
    "plot",
    "online_to_batch",
    "primal_objective",
    "report",
]
