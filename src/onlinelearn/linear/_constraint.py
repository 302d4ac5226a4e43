"""``constraint`` / ``radius`` on the Euclidean linear learners: projected updates (Sec. 7.1).

With ``constraint=None`` (the default) the mixin steps aside and the learner runs its own pass
unchanged.  Otherwise every round is the learner's step followed by the Euclidean projection
of each weight vector the step changed onto the set (:mod:`onlinelearn._core.projected_pass`):

* ``'l1'``: the l1 ball {w : ||w||_1 <= radius} (Fig. 7.2); sparse weights;
* ``'simplex'``: the scaled simplex {w : w >= 0, sum_j w_j = radius} (Fig. 7.1).

A weight vector is a whole column of the model, the intercept weight included.  The set holds
for every column at all times: a fresh model starts from the projection of zero (zero for the
l1 ball, the uniform vector radius / R for the simplex), and columns created when a new class
arrives are projected as well.  The entropic projection of Fig. 7.3 (``floor``) needs
weights on the simplex by construction (the entropy link): it is offered by
:class:`onlinelearn.LabelRanker` (``complexity='entropy', constraint='floor'``), not here.
"""

from __future__ import annotations

import numpy as np

from .._core import links as L
from .._core import projected_pass as PP
from .._core.state import params_of

__all__ = ["ProjectedUpdatesMixin"]

#: the two parameters are declared in :data:`onlinelearn.shell.params.CONSTRAINT`
_CODES = {"l1": PP.L1_BALL, "simplex": PP.SIMPLEX}


class ProjectedUpdatesMixin:
    """Put before :class:`onlinelearn.base.OnlineLinearClassifier` in the bases of a Euclidean
    learner whose ``__init__`` takes ``constraint`` and ``radius``."""

    def _constraint_code(self):
        c = getattr(self, "constraint", None)
        return PP.NO_CONSTRAINT if c is None else _CODES[c]

    def _finite_in_pass(self):
        """Without a constraint the pass is the base's Euclidean pass, which checks the feature
        values itself; the projected pass does not (the validation then sweeps X)."""
        return (
            self._link == L.EUCLID
            and self._constraint_code() == PP.NO_CONSTRAINT
            and type(self)._pass_kernel is ProjectedUpdatesMixin._pass_kernel
        )

    def _pass_kernel(self, ip):
        code = self._constraint_code()
        if code == PP.NO_CONSTRAINT:
            return super()._pass_kernel(ip)
        z = float(self.radius)
        buf = np.empty(max(self._theta.shape))

        def kernel(data, indices, indptr, y, weight, order, theta, A, lastS, st, ip, fp,
                   pred_out, loss_out, scores, alpha, work_idx, work_val):  # fmt: skip
            return PP.projected_pass(
                data, indices, indptr, y, weight, order, theta, A, lastS, st, ip, fp,
                pred_out, loss_out, scores, code, z, buf,
            )  # fmt: skip

        return kernel

    def _touched_rows(self, batch):
        # a projection moves every weight of a column: snapshot everything
        if self._constraint_code() != PP.NO_CONSTRAINT:
            return None
        return super()._touched_rows(batch)

    def _project_all(self):
        code = self._constraint_code()
        if code != PP.NO_CONSTRAINT:
            average = params_of(*self._codes(self._n_weights())).average
            PP.project_all_columns(
                self._theta, self._A, self._lastS, self._st, average, code,
                float(self.radius),
            )  # fmt: skip

    def _init_state(self, classes, n_features, dtype=np.float64):
        super()._init_state(classes, n_features, dtype)
        self._project_all()

    def _grow(self, new_classes):
        n_before = len(self.classes_)
        super()._grow(new_classes)
        if len(self.classes_) != n_before:
            self._project_all()
