"""What a fitted linear learner says: the hypothesis read out of its state (averaged when
``average``), ``coef_``, ``intercept_``, the counters, ``decision_function`` and ``predict``.

A mixin of :class:`onlinelearn.shell.base.OnlineLinearClassifier`, which keeps the learning; it
relies on the base's ``_codes``, ``_n_weights``, ``_u_layout``, ``_intercept_value`` and
``_binary_mode``.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core import links as L
from .._core.euclid_pass import averaged_from_u
from .._core.online_loop import averaged_weights, current_weights
from .._core.state import N_MISTAKES, N_ROUNDS, N_UPDATES
from . import validation as V
from .meta import labels_from_scores


class LinearReadoutMixin:
    """Read-out of the weights and the predictions (see the module docstring)."""

    def _weights_matrix(self):
        """(R, K) matrix of the hypothesis used by predict: averaged when ``average``.

        Read out on demand and never stored (predict leaves the estimator as it was, and
        learning pays nothing for it); the Euclidean link's current hypothesis is theta itself,
        returned without a copy: callers must not write into it."""
        check_is_fitted(self, "classes_")
        if self._link == L.EUCLID and not self.average:
            return self._theta
        ip, fp = self._codes(self._n_weights())
        out = np.empty_like(self._theta)
        if self._u_layout():
            averaged_from_u(self._theta, self._A, self._st, out)
        elif self.average:
            averaged_weights(self._theta, self._A, self._lastS, self._st, ip, fp, out)
        else:
            current_weights(self._theta, self._st, ip, fp, out)
        return out

    @property
    def coef_(self):
        """Weights, shape (1, n_features) for a binary learner, (n_classes, n_features)
        otherwise (w = grad f*(theta); the average of the iterates when ``average``)."""
        W = self._weights_matrix()
        return np.array(W[: self.n_features_in_].T, order="C")  # a copy, never a view

    @property
    def intercept_(self):
        """Bias of each column: ``intercept_scaling`` times the weight of the constant
        feature (0 when ``fit_intercept=False``)."""
        W = self._weights_matrix()
        if self.fit_intercept:
            return self._intercept_value() * W[self.n_features_in_]
        return np.zeros(W.shape[1])

    @property
    def n_updates_(self):
        """Rounds on which the weights changed (all epochs and calls)."""
        check_is_fitted(self, "classes_")
        return int(self._st[N_UPDATES])

    @property
    def n_mistakes_(self):
        """Online mistakes: rounds whose prediction, made before the update, was wrong."""
        check_is_fitted(self, "classes_")
        return int(self._st[N_MISTAKES])

    @property
    def t_(self):
        """Examples processed (all epochs and calls)."""
        check_is_fitted(self, "classes_")
        return int(self._st[N_ROUNDS])

    def decision_function(self, X):
        """Scores <w_k, x> + b_k: shape (n,) for a binary learner (positive means
        ``classes_[1]``), (n, n_classes) otherwise."""
        check_is_fitted(self, "classes_")
        X = V.check_X(self, X, reset=False)
        W = self._weights_matrix()
        d = self.n_features_in_
        scores = X @ W[:d]
        scores = np.asarray(scores)
        if self.fit_intercept:
            scores = scores + self._intercept_value() * W[d]
        V.check_scores(scores)
        if len(self.classes_) == 1:
            return np.zeros(X.shape[0])
        if self._binary_mode():
            return scores[:, 0]
        return scores

    def predict(self, X):
        """Predicted labels: sign for a binary learner, argmax (first maximum) otherwise."""
        scores = self.decision_function(X)  # checks that the model is fitted
        return labels_from_scores(self.classes_, scores)
