"""What a fitted learner whose hypothesis is one weight matrix says: ``coef_``, ``intercept_``
and the scores <w_k, x> + b w_k[d] (:class:`WeightsReadoutMixin`, shared by the linear,
second-order, dual ascent, label ranking and Pegasos learners); and for the linear learners the
hypothesis read out of their state (averaged when ``average``), the counters,
``decision_function`` and ``predict`` (:class:`LinearReadoutMixin`).

:class:`LinearReadoutMixin`'s methods are taken by
:class:`onlinelearn.shell.base.OnlineLinearClassifier` (:func:`.meta.with_methods`),
which keeps the learning; they rely on the base's ``_codes``, ``_n_weights``, ``_u_layout``,
``_intercept_value`` and ``_binary_mode``.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core import links as L
from .._core.euclid_readout import averaged_from_u
from .._core.online_loop import averaged_weights, current_weights
from .._core.state import N_MISTAKES, N_ROUNDS, N_UPDATES
from . import validation as V
from .meta import LabelsFromScoresMixin, counter

__all__ = ["LinearReadoutMixin", "WeightsReadoutMixin"]


class WeightsReadoutMixin:
    """``coef_``, ``intercept_`` and the scores of a learner whose hypothesis is one (R, K)
    matrix W, ``_weights_matrix()`` (which checks that the model is fitted): rows 0..d-1 weigh
    the features, row d the constant feature of value b = ``_intercept_value()`` when
    ``fit_intercept``."""

    def _intercept_value(self):
        """b: the value of the constant feature (0 without intercept)."""
        return float(self.intercept_scaling) if self.fit_intercept else 0.0

    @property
    def coef_(self):
        """Weights, shape (1, n_features) for one weight vector, (n_classes, n_features)
        otherwise (the hypothesis that predicts: the average of the iterates when the learner
        averages)."""
        W = self._weights_matrix()
        return np.array(W[: self.n_features_in_].T, order="C")  # a copy, never a view

    @property
    def intercept_(self):
        """Bias of each column: b times the weight of the constant feature (0 when
        ``fit_intercept=False``)."""
        W = self._weights_matrix()
        if self.fit_intercept:
            return self._intercept_value() * W[self.n_features_in_]
        return np.zeros(W.shape[1])

    def _scores(self, X):
        """The (n, K) scores <w_k, x> + b w_k[d] of the rows of X (checked, after the check
        that the model is fitted)."""
        if "classes_" not in self.__dict__:  # (scikit-learn's check: ~2 us a call)
            check_is_fitted(self, "classes_")
        X = V.check_X(self, X, reset=False)
        W = self._weights_matrix()
        d = self.n_features_in_
        scores = np.asarray(X @ W[:d])
        if self.fit_intercept:
            scores = scores + self._intercept_value() * W[d]
        return scores


class LinearReadoutMixin(LabelsFromScoresMixin, WeightsReadoutMixin):
    """Read-out of the weights and the predictions (see the module docstring)."""

    def _weights_matrix(self):
        """(R, K) matrix of the hypothesis used by predict: averaged when ``average``.

        Read out on demand and never stored (predict leaves the estimator as it was, and
        learning pays nothing for it); the Euclidean link's current hypothesis is theta itself,
        returned without a copy: callers must not write into it."""
        if "classes_" not in self.__dict__:  # (scikit-learn's check: ~2 us a call)
            check_is_fitted(self, "classes_")
        if self._link == L.EUCLID and not self.average:
            return self._theta
        self._check_average_state()
        out = np.empty_like(self._theta)
        if self._u_layout():  # the Euclidean average reads no codes (4 us a predict)
            averaged_from_u(self._theta, self._A, self._st, out)
            return out
        ip, fp = self._codes(self._n_weights())
        if self.average:
            averaged_weights(self._theta, self._A, self._lastS, self._st, ip, fp, out)
        else:
            current_weights(self._theta, self._st, ip, fp, out)
        return out

    def _stats(self):
        if "classes_" not in self.__dict__:  # (scikit-learn's check: ~2 us a call)
            check_is_fitted(self, "classes_")
        return self._st

    n_updates_ = counter(N_UPDATES, "Rounds on which the weights changed (all epochs and calls).")
    n_mistakes_ = counter(
        N_MISTAKES, "Online mistakes: rounds whose prediction, made before the update, was wrong."
    )
    t_ = counter(N_ROUNDS, "Examples processed (all epochs and calls).")

    def decision_function(self, X):
        """Scores <w_k, x> + b_k: shape (n,) for a binary learner (positive means
        ``classes_[1]``), (n, n_classes) otherwise."""
        scores = self._scores(X)
        V.check_scores(scores)
        if len(self.classes_) == 1:
            return np.zeros(scores.shape[0])
        if self._binary_mode():
            return scores[:, 0]
        return scores
