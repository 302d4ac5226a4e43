"""The convergence stop of ``fit`` for the Perceptron and the Passive-Aggressive learners:
scikit-learn's rule on the online training loss, with ``n_epochs`` as the cap."""

from __future__ import annotations

import numpy as np

from .online import OnlineMixin
from .params import AT_LEAST_ONE, NON_NEGATIVE, Param

__all__ = ["STOP", "ConvergenceStopMixin", "LossStop"]

#: the declarations of the stop's two parameters (:func:`onlinelearn.shell.params.parameters`)
STOP = {
    "tol": Param(1e-3, NON_NEGATIVE, None),
    "n_iter_no_change": Param(5, AT_LEAST_ONE),
}


class LossStop:
    """Told the per-row losses of each epoch (each made by the weights before the row's
    update), says when to stop: after ``n_iter_no_change`` epochs in a row whose summed loss
    L_e fails to beat the best sum so far by ``tol`` per row (L_e > min_{e' < e} L_e' - tol n);
    ``tol=None`` never stops.  The losses are not multiplied by the example weights (a
    ``class_weight`` or ``sample_weight`` changes the steps, not what counts as progress).
    ``epochs`` counts the epochs it was told."""

    def __init__(self, tol, n_iter_no_change, n_rows):
        self.tol = tol
        self.n_iter_no_change = int(n_iter_no_change)
        self.n_rows = int(n_rows)
        self.best = np.inf
        self.no_improvement = 0
        self.epochs = 0

    def __call__(self, loss):
        self.epochs += 1
        if self.tol is None:
            return False
        total = float(np.sum(loss))
        if total > self.best - self.tol * self.n_rows:
            self.no_improvement += 1
        else:
            self.no_improvement = 0
        self.best = min(self.best, total)
        return self.no_improvement >= self.n_iter_no_change


class ConvergenceStopMixin:
    """Put before :class:`onlinelearn.base.OnlineLinearClassifier`: ``fit`` stops when the
    training loss stops improving (:class:`LossStop`: ``tol`` and ``n_iter_no_change``) or
    after ``n_epochs``; ``n_iter_`` is then the passes ``fit`` made, or 1 after
    ``partial_fit`` (the passes of that call, as scikit-learn's ``partial_fit`` reports)."""

    #: the one transaction of the shell (named here for the event road's check of what learns)
    _learn = OnlineMixin._learn

    def _epoch_stop_rule(self, n_rows):
        return LossStop(self.tol, self.n_iter_no_change, n_rows)

    def _after(self, call, fit_mode):
        super()._after(call, fit_mode)
        self.n_iter_ = call.epochs if fit_mode else 1
