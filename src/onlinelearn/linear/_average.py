"""``average_power`` of the Euclidean linear learners: the polynomially weighted average.

With ``average=True`` the learner predicts with a weighted average of its iterates::

    w_avg = sum_{t=1}^{T} c_t w_t / sum_{t=1}^{T} c_t,    c_t = t^eta,  eta = ``average_power``

where w_t is the hypothesis after round t and t counts every round of every epoch and call
(``fit``'s epochs continue the count, ``partial_fit`` calls too).  eta = 0 is the uniform
average of the online-to-batch conversion (thesis App. B.3); eta > 0 is the polynomial-decay
averaging of Shamir & Zhang (ICML 2013, "Stochastic gradient descent for non-smooth
optimization: convergence results and optimal averaging schemes", Sec. 4: weights ~ t^eta,
which keeps the optimal O(1/T) rate of the suffix average while being computable on the fly);
eta = 1 is the weighting of Lacoste-Julien, Schmidt & Bach (2012, "A simpler approach to
obtaining an O(1/t) convergence rate for the projected stochastic subgradient method").  It is
kept lazily at the cost of the uniform one (:mod:`onlinelearn._core.euclid_pass`: the sum S of
the weights so far replaces the round count).
"""

from __future__ import annotations

import numbers

from sklearn.utils._param_validation import Interval

from ..shell.params import Param

__all__ = ["AVERAGE_POWER", "DEFAULT_AVERAGE_POWER"]

#: the default of ``average_power`` (docs/defaults.md: one pass and ``fit`` on the shared sets)
DEFAULT_AVERAGE_POWER = 2.0
#: the largest ``average_power``: the sum of the weights S <= T^(eta+1) stays below 10^132
#: for any stream of fewer than 10^12 rounds (float64 holds 10^308)
MAX_AVERAGE_POWER = 10.0
AVERAGE_POWER = Param(
    DEFAULT_AVERAGE_POWER, Interval(numbers.Real, 0, MAX_AVERAGE_POWER, closed="both")
)
