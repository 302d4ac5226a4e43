"""What the scale-free learners share: their state (A, B, S, st of
:mod:`onlinelearn._core.adaptive`), the call's hooks for :class:`~onlinelearn.shell.online.
OnlineMixin`, the weights read out of the state, and model files.

A learner of this family sets ``_step`` (``FTRL`` or ``NAG``) and ``_loss_code()``; its
parameters give the rates through ``_rates()`` -> (alpha or eta, beta, l1, l2).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core import adaptive as AD
from ..shell import validation as V
from ..shell.meta import check_shape, float_arrays, state_meta
from ..shell.snapshot import copy_state

__all__ = ["AdaptiveState"]


class AdaptiveState:
    """State, pass and read-out of one scale-free learner (taken by the estimators with
    :func:`~onlinelearn.shell.meta.with_methods`)."""

    def _rates(self):
        """(alpha, beta, l1, l2) of FTRL-Proximal (alpha = ``eta``); (eta, 0, 0, 0) for NAG."""
        if self._step == AD.FTRL:
            return float(self.eta), float(self.beta), float(self.l1), float(self.l2)
        return float(self.eta), 0.0, 0.0, 0.0

    def _intercept_value(self):
        return float(self.intercept_scaling) if self.fit_intercept else 0.0

    def _new_state(self, d, K):
        R = d + (1 if self.fit_intercept else 0)
        self._A = np.zeros((R, K))
        self._B = np.zeros((R, K))
        self._S = np.zeros(R)
        self._st = np.zeros(AD.N_ST)
        # FTRL-Proximal's regret-bound sums g_{1:t} and sum_s sigma_s w_s^2 (NAG: none)
        shape = (R, K) if self._step == AD.FTRL else (0, 0)
        self._G1, self._Q = np.zeros(shape), np.zeros(shape)

    def _snapshot(self):
        """Every attribute, arrays copied (``copy_state``); the calibration by reference: the
        shell updates it only after a call has succeeded."""
        return {k: v if k == "calibration_" else copy_state(v)
                for k, v in self.__dict__.items()}  # fmt: skip

    def _restore(self, snap):
        self.__dict__.clear()
        self.__dict__.update(snap)

    def _run(self, batch, target, weights, order):
        """One compiled pass over the rows ``order``; returns the progressive predictions.
        Refuses (FloatingPointError) a pass that made a weight infinite or NaN (the call's
        snapshot then puts the model back)."""
        # the pass writes the state in place: work on copies, so the snapshot stays intact
        names = ("_A", "_B", "_S", "_st", "_G1", "_Q")
        for name in names:
            setattr(self, name, getattr(self, name).copy())
        K = self._A.shape[1]
        invariant = bool(getattr(self, "importance_invariant", False))
        if invariant and self._loss_code() not in (AD.HINGE, AD.SQUARED):
            raise ValueError(
                f"{type(self).__name__}: importance_invariant=True has a closed form for the "
                "binary hinge and the squared loss only; set importance_invariant=False"
            )
        pred = np.empty(len(order))
        alpha, beta, l1, l2 = self._rates()
        loss = AD.adaptive_pass(
            batch.data, batch.indices, batch.indptr, target, weights, order, self._A, self._B,
            self._S, self._st, self._step, self._loss_code(), alpha, beta, l1, l2,
            float(getattr(self, "epsilon", 0.0)), self._intercept_value(), pred, np.zeros(K),
            np.zeros(K), invariant, *((self._G1, self._Q) if self._step == AD.FTRL else ()),
        )  # fmt: skip
        if not (np.isfinite(self._A).all() and np.isfinite(self._B).all() and np.isfinite(loss)):
            raise FloatingPointError(
                f"{type(self).__name__}: a weight became infinite or NaN; the model was left as "
                "it was. Lower the learning rate or scale the target."
            )
        return pred

    def _weights_matrix(self):
        """(R, K) weights: NAG keeps them; FTRL-Proximal's are the closed form of (z, n)."""
        if "_A" not in self.__dict__:
            check_is_fitted(self, "_A")
        if self._step == AD.NAG:
            return self._A
        alpha, beta, l1, l2 = self._rates()
        Z, N = self._A, self._B
        mag = np.maximum(np.abs(Z) - l1, 0.0)
        # |z| <= l1 gives 0, also where the denominator is 0 (beta = l2 = 0, never touched)
        den = (beta + np.sqrt(N)) / alpha + l2
        out = np.zeros_like(Z)
        np.divide(-np.sign(Z) * mag, den, out=out, where=mag > 0.0)
        return out

    def _raw_scores(self, X):
        X = V.check_X(self, X, reset=False)
        W = self._weights_matrix()
        d = self.n_features_in_
        scores = np.asarray(X @ W[:d])
        if self.fit_intercept:
            scores = scores + self._intercept_value() * W[d]
        return scores

    @property
    def t_(self):
        """Rounds learned (NAG: the sum of the importances), all epochs and calls."""
        return (
            float(self._stats()[AD.ST_T]) if self._step == AD.NAG else int(self._stats()[AD.ST_T])
        )

    @property
    def n_updates_(self):
        """Rounds with a nonzero loss gradient (the weights changed)."""
        return int(self._stats()[AD.ST_UPD])

    def _stats(self):
        if "_st" not in self.__dict__:
            check_is_fitted(self, "_st")
        return self._st

    @property
    def scale_(self):
        """NAG's per-feature scales s_i = max |x_i| seen (the constant feature last)."""
        self._stats()
        return np.array(self._S)

    @property
    def sum_sq_grad_(self):
        """Per-coordinate sums of squared gradients (n of FTRL-Proximal, G of NAG), (R, K)."""
        self._stats()
        return np.array(self._B)

    # ------------------------------------------------------------------ model files
    def _state_arrays(self):
        return {"A": self._A, "B": self._B, "S": self._S, "st": self._st, "G1": self._G1,
                "Q": self._Q}  # fmt: skip

    def _get_state(self):
        meta = state_meta(self)
        arrays = self._state_arrays()
        if "classes_" in self.__dict__:
            arrays = {"classes_": np.asarray(self.classes_),
                      "class_counts": self.class_counts_, **arrays}  # fmt: skip
        return meta, arrays

    def _set_state_arrays(self, arrays, K):
        self._A, self._B, self._S, self._st, self._G1, self._Q = float_arrays(
            arrays, "A", "B", "S", "st", "G1", "Q"
        )
        R = self.n_features_in_ + (1 if self.fit_intercept else 0)
        check_shape("A", self._A, (R, K))
        shape = (R, K) if self._step == AD.FTRL else (0, 0)
        check_shape("G1", self._G1, shape)
        check_shape("Q", self._Q, shape)
        check_shape("B", self._B, (R, K))
        check_shape("S", self._S, (R,))
        check_shape("st", self._st, (AD.N_ST,))
        if (self._B < 0).any() or (self._S < 0).any():
            raise ValueError("model state is inconsistent: negative sums of squares or scales")
