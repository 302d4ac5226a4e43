"""Confusion-based metrics of Ralaivola (NIPS 2012), "Confusion-Based Online Learning and a
Passive-Aggressive Scheme" (the COPA paper).

Symbols follow the paper:

* ``Q`` classes; for a label sequence ``y = (y_1, ..., y_T)``, ``T_p`` is the number of rounds
  with ``y_t = p``;
* the confusion matrix ``C(h)`` with ``C[p, q] = P(h(X) = q | Y = p)`` (eq. 4), whose diagonal
  the paper zeroes "by abuse of notation";
* the operator norm ``||M|| = max_{v != 0} ||M v||_2 / ||v||_2``, the largest singular value
  (eq. 5);
* the misclassification rate ``R(h) = ||pi C(h)||_1`` for the class priors ``pi`` (eq. 6);
* the empirical online confusion risk ``C_hat`` of Definition 4 (eq. 11) and the high-probability
  bounds of Theorems 1 and 2 (eqs. 12, 13, 15).

Everything here is plain NumPy. Balanced accuracy is ``sklearn.metrics.balanced_accuracy_score``.
"""

from __future__ import annotations

from ._bounds import (
    AveragedConfusionBound,
    ConfusionRiskBound,
    averaged_confusion_bound,
    confusion_risk_bound,
    hinge_confusion_losses,
    online_confusion_risk,
)
from ._confusion import (
    confusion_matrix_conditional,
    confusion_operator_norm,
    misclassification_rate_from_confusion,
    operator_norm,
)

__all__ = [
    "AveragedConfusionBound",
    "ConfusionRiskBound",
    "averaged_confusion_bound",
    "confusion_matrix_conditional",
    "confusion_operator_norm",
    "confusion_risk_bound",
    "hinge_confusion_losses",
    "misclassification_rate_from_confusion",
    "online_confusion_risk",
    "operator_norm",
]
