"""What both ranking estimators share: the round counters they keep in their statistics vector
``_st``, and the declarations of their parameters."""

from __future__ import annotations

from sklearn.utils.validation import check_is_fitted

from .._core import ranking as RK
from ..shell.meta import counter
from ..shell.params import CONSTRAINT, POSITIVE, SHARED, Param

#: the declarations of the ranking estimators' parameters (:mod:`onlinelearn.shell.params`)
RANKING = {**SHARED, **CONSTRAINT, "margin": Param(1.0, POSITIVE)}


class RoundCounters:
    """``n_updates_``, ``n_mistakes_``, ``t_``, read from ``self._st`` (see ``_core.ranking``)."""

    def _stats(self):
        check_is_fitted(self, "classes_")
        return self._st

    n_updates_ = counter(
        RK.N_UPDATES, "Rounds on which the weights changed (all epochs and calls)."
    )
    n_mistakes_ = counter(
        RK.N_MISTAKES, "Online mistakes, counted before each update (all epochs and calls)."
    )
    t_ = counter(RK.T_SEEN, "Rows processed (all epochs and calls).")
