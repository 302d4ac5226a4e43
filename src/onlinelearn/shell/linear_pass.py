"""The pass of the linear learners: one compiled call over a batch and the checks after it
(non-finite weights and read-out, the aggressive steps' sizes, the entropy link's exact
aggregate and re-centred shift), the dual objective it keeps, and the calibration's held-out
scores made in it.  :class:`LinearPass` holds these methods for
:class:`~onlinelearn.shell.base.OnlineLinearClassifier`, which takes them as its own.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core import links as L
from .._core import steps as S
from .._core.checks import all_finite, rows_finite
from .._core.euclid_pass import (
    NONFINITE_X,
    advance_weight_sum,
    euclid_pass,
    padded_work_state,
)
from .._core.online_loop import (
    NONFINITE,
    empty_scratch,
    online_pass,
    recompute_aggregate,
    reframe,
)
from .._core.state import (
    AGGREGATE,
    DUAL,
    EXP_SHIFT,
    N_ROUNDS,
    N_UPDATES,
    S_SUM,
    link_of,
    params_of,
    set_call_flags,
)
from . import validation as V

__all__ = ["LinearPass"]


def _exp_shift(theta, balanced):
    """The exp shift m of the entropy link: the largest exponent any weight has.

    Balanced weights use exp(theta) and exp(-theta), so m = max |theta|; unbalanced ones only
    exp(theta), so m = max theta. Shifting unbalanced weights by max |theta| lets Z underflow
    to 0 once every theta is far below zero, and the weights then read out as 0/0.
    """
    if theta.size == 0:
        return 0.0
    return float(np.abs(theta).max()) if balanced else float(theta.max())


def _state_finite(M, rows):
    """True when the rows ``rows`` (None: all) of a state array are finite: one compiled
    reduction, not ``np.isfinite(M[rows]).all()``, which copies the rows and writes a boolean
    array (news20's theta and U after a fit: 1.2 ms per epoch)."""
    if rows is None:
        return bool(all_finite(M.reshape(-1)))
    return bool(rows_finite(M, np.asarray(rows, dtype=np.int64)))


class LinearPass:
    """The pass of :class:`~onlinelearn.shell.base.OnlineLinearClassifier` (taken by it as its
    own methods, not a base): the compiled pass of a call and the checks after it, the kept
    dual objective, and the calibration's scores made in the pass."""

    # ------------------------------------------------------------------ the kept dual
    def _dual_margin(self):
        """gamma of the hinge whose dual ``st[DUAL]`` keeps: the loss's margin; 1 when it is 0
        (the conservative step's Hinge(0): thesis Sec. 5.1.1 sets gamma = 1 for the
        Perceptron).  A subclass may choose another (Winnow: its ``margin``)."""
        gamma = float(getattr(self._config()[1], "margin", 0.0))
        return gamma if gamma > 0.0 else 1.0

    def _keeps_dual(self, kernel):
        """True when the pass ``kernel`` keeps the dual objective (the ``dual`` flag of
        ``ip``): the hinge loss with the conservative step or PA / PA-I / PA-II, on the
        Euclidean, entropy (fixed eta) or p-norm link, with the library's own passes (no
        constraint, no other loss, not COPA, not self-tuned Winnow)."""
        link, loss, step = self._config()
        return (
            kernel in (euclid_pass, online_pass)
            and loss.closed_form_step == "hinge"
            and link.code in (L.EUCLID, L.ENTROPY, L.PNORM)
            and self._step_code() in (S.CONSERVATIVE, S.PA, S.PA1, S.PA2)
        )

    @property
    def dual_objective_(self):
        """The dual objective of the run so far, kept as the sum of the rounds' increments.

        With tau_t >= 0 the step of round t (the coefficient of its update theta += tau_t u_t,
        u_t = y_t x_t, or x_t on the column of y_t and -x_t on the rival's), theta = sum_t
        tau_t u_t and gamma the hinge's margin (:meth:`_dual_margin`)::

            D = sum_t (gamma tau_t - [PA-II] tau_t^2 / (4 C_t)) - f*(theta)

        (thesis eq. 5.12 divided by c: alpha_t = c tau_t, C = 1/c), with f* the link's
        conjugate: 1/2 ||theta||^2 (Euclidean), log((1/n) sum_j exp(+-theta_j)) (entropy on
        the n = 2 R K doubled weights when balanced, R K otherwise), ||theta||_p^2 / (2(p-1))
        (p-norm).  It is the dual of::

            P(w) = f(w) + sum_t C_t [gamma - margin_t(w)]_+     (PA-II: the squared hinge)

        over every round so far (all epochs), with C_t = C s_t (PA-I, PA-II), eta s_t (the
        conservative step: tau_t = eta s_t on a mistake) and +inf (PA), s_t the example's
        weight (class weight x sample weight), margin_t the binary or max-rival multiclass
        margin and f the link's complexity function (the intercept is the weight of a
        regularised feature of constant value b = ``intercept_scaling``).  So
        D <= P(w) for every w (weak duality): P(w_avg) - D bounds how far any hypothesis is
        from the optimum of P.  When a binary model meets a third label its columns become
        (-w/2, w/2) and D halves (the same variables, tau_t / 2, on the multiclass hinge).
        NaN when the configuration keeps none (COPA, a constraint, another loss, self-tuned
        Winnow, label growth on a non-Euclidean link) and for models read from files
        written before this attribute."""
        if "classes_" not in self.__dict__:  # (scikit-learn's check: ~2 us a call)
            check_is_fitted(self, "classes_")
        return float(self._st[DUAL])

    # ------------------------------------------------------------------ core call
    @property
    def _held_out_in_pass(self):
        """A first partial_fit scores the calibration's held-out rows inside its pass
        (shell.proba.HeldOut): the Euclidean pass, which writes each such row's
        decision_function just before it learns the row (``hold_out`` of
        :func:`~onlinelearn._core.euclid_pass.euclid_pass`)."""
        return self._finite_in_pass()

    def _held_out_view(self, scores, m):
        """The in-pass held-out scores (m, K) as ``decision_function`` gives them: (m,) for
        one score per row, zeros for one class; None when a score overflowed (the call is
        then not used for the calibration: probabilities never make a call fail that learns
        without them, as the scores of the model before a call, which decision_function
        refuses, never did)."""
        if scores is None or len(self.classes_) == 1:
            return np.zeros(m)
        if not np.isfinite(scores).all():
            return None
        return scores[:, 0] if self._binary_mode() else scores

    def _run(self, batch, y_codes, weights, order, pred_out, loss_out, rows=None,
             predict_average=False, hold=None):  # fmt: skip
        """One compiled pass; ``rows``: the only rows of theta it can change (None: any),
        where the state is checked for overflow afterwards; ``predict_average``: ``pred_out``
        holds the averaged weights' predictions (Euclidean pass only); ``hold``: (first, m),
        the Euclidean pass scores the rows ``order[first:first + m]`` before learning each
        (the calibration's held-out rows), returned as (m, K) float64 (None: one class)."""
        ip, fp = self._codes(self._n_weights())
        set_call_flags(ip, predict_average=predict_average)
        par = params_of(ip, fp)
        power = par.avg_power
        if power != 0.0 and self._st[S_SUM] < self._st[N_ROUNDS]:
            # (read-out divides by max(S, T): a uniform mixture has S < T, a weighted state S >= T)
            raise ValueError(
                f"{type(self).__name__}: average_power={power!r} cannot continue this model: "
                "its average does not weigh every round so far (a uniform mixture made by "
                "merge_models or a parameter-mixing epoch with average_power=0, or a model that "
                "learned with average=False). Continue it with average_power=0.0, or merge "
                "models trained with average_power > 0."
            )
        if len(self.classes_) < 2:
            # one class: nothing to learn; every prediction is that class (scores: 0)
            pred_out[order] = 0
            loss_out[order] = 0.0
            t0 = self._st[N_ROUNDS]
            self._st[N_ROUNDS] += len(order)
            if self.average and power != 0.0:
                # the weights t^eta of these rounds, as the Euclidean pass adds them
                self._st[S_SUM] = advance_weight_sum(self._st[S_SUM], t0, len(order), power)
            elif self.average:
                self._st[S_SUM] += len(order) * L.scale(par.link, self._st[AGGREGATE], par.p)
            return None
        updates_before = self._st[N_UPDATES]
        K = self._theta.shape[1]
        scratch = empty_scratch(K)
        kernel = self._pass_kernel(ip)
        keep_dual = self._keeps_dual(kernel)
        set_call_flags(ip, dual=keep_dual)
        theta, A = self._theta, self._A
        work = None
        if kernel is euclid_pass:
            work = padded_work_state(theta, A, self.average, batch.data.shape[0])
            if work is not None:
                theta, A = work
                Kp = theta.shape[1]
                scratch = (np.zeros(Kp), np.zeros(Kp), *scratch[2:])
        args = (batch.data, batch.indices, batch.indptr, y_codes, weights, order,
                theta, A, self._lastS, self._st, ip, fp, pred_out, loss_out, *scratch)  # fmt: skip
        held = None
        if hold is None:
            status = kernel(*args)
        else:
            assert kernel is euclid_pass, "held-out scores are the Euclidean pass's"
            held = np.zeros((hold[1], theta.shape[1]))
            status = kernel(*args, np.int64(hold[0]), held)
            held = held[:, :K]
        if work is not None:  # back into the state before anything looks at it
            self._theta[...] = theta[:, :K]
            if self.average:
                self._A[...] = A[:, :K]
        if status == NONFINITE_X:
            V.raise_nonfinite_x(self, batch.data)
        if status == NONFINITE or not (
            _state_finite(self._theta, rows)
            and np.isfinite(self._st[:DUAL]).all()
            and (not self.average or _state_finite(self._A, rows))
        ):
            raise FloatingPointError(
                f"{type(self).__name__}: a weight became infinite or NaN during the pass. "
                "The model was left as it was before this call. Scale the features (e.g. "
                "to unit norm), lower C or eta, or use the Euclidean learners."
            )
        V.check_aggressive_steps(self, batch, loss_out, weights, order, updates_before)
        if not keep_dual:
            self._st[DUAL] = np.nan  # this pass's rounds are not in any kept dual
        if self._link == L.ENTROPY:
            # exact aggregate once per pass (the running sum drifts), re-centred shift
            mx = _exp_shift(self._theta, par.balanced)
            if abs(mx - self._st[EXP_SHIFT]) > 30.0:
                reframe(self._theta, self._A, self._lastS, self._st, par.link, par.p,
                        par.balanced, par.average, mx)  # fmt: skip
            else:
                recompute_aggregate(self._theta, self._st, par.link, par.p, par.balanced)
        elif self._link == L.PNORM:
            recompute_aggregate(self._theta, self._st, par.link, par.p, par.balanced)
        V.check_readout(self, rows)  # the weights that predict, not only the state
        return held

    def _pass_kernel(self, ip):
        """The compiled pass of a call (a hook: projected updates substitute their own)."""
        return euclid_pass if link_of(ip) == L.EUCLID else online_pass

    def _finite_in_pass(self):
        """True when the compiled pass checks the feature values' finiteness itself (the
        Euclidean pass: :data:`~onlinelearn._core.euclid_pass.NONFINITE_X`), so that the
        validation skips its own sweep over X; a subclass with its own pass keeps the sweep."""
        # (the projected updates of linear/_constraint.py override this for their own kernel)
        return (
            self._link == L.EUCLID
            and type(self)._pass_kernel is LinearPass._pass_kernel
        )
