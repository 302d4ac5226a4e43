"""Regression metrics that scikit-learn lacks: the losses the online regressors minimise.

Use :mod:`sklearn.metrics` for the rest (``mean_squared_error``, ``mean_absolute_error``,
``r2_score``, ...); they take the same ``(y_true, y_pred)`` arguments.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_consistent_length

__all__ = ["epsilon_insensitive_loss", "cumulative_online_loss"]


def _pair(y_true, y_pred):
    y_true = np.asarray(y_true, dtype=np.float64).reshape(-1)
    y_pred = np.asarray(y_pred, dtype=np.float64).reshape(-1)
    check_consistent_length(y_true, y_pred)
    if not (np.isfinite(y_true).all() and np.isfinite(y_pred).all()):
        raise ValueError("y_true and y_pred must be finite.")
    return y_true, y_pred


def epsilon_insensitive_loss(y_true, y_pred, *, epsilon=0.1, squared=False, sample_weight=None):
    """Mean of [|y_pred - y_true| - epsilon]_+ (squared when ``squared``): the loss of
    :class:`onlinelearn.PassiveAggressiveRegressor` (Crammer et al. 2006, eq. 33).

    >>> epsilon_insensitive_loss([0.0, 1.0, 2.0], [0.05, 1.5, 0.0], epsilon=0.5)
    0.5
    """
    y_true, y_pred = _pair(y_true, y_pred)
    if epsilon < 0:
        raise ValueError("epsilon must be >= 0")
    ell = np.maximum(np.abs(y_pred - y_true) - epsilon, 0.0)
    if squared:
        ell = ell * ell
    return float(np.average(ell, weights=sample_weight))


def cumulative_online_loss(y_true, y_online, *, loss="squared", epsilon=0.0):
    """Running sum of the losses of progressive-validation predictions (``partial_fit_predict``
    output): the quantity the regret bounds of thesis Sec. 5.3.1 control.

    ``loss``: 'squared' (1/2 (yhat - y)^2) or 'epsilon_insensitive'.

    >>> cumulative_online_loss([1.0, 2.0], [0.0, 2.0]).tolist()
    [0.5, 0.5]
    """
    y_true, y_online = _pair(y_true, y_online)
    r = y_online - y_true
    if loss == "squared":
        ell = 0.5 * r * r
    elif loss == "epsilon_insensitive":
        ell = np.maximum(np.abs(r) - epsilon, 0.0)
    else:
        raise ValueError(f"unknown loss {loss!r}: 'squared' or 'epsilon_insensitive'")
    return np.cumsum(ell)
