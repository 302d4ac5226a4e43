"""Online regression (thesis Sec. 5.3.1): PA with the eps-insensitive loss, online least squares."""

from .least_squares import OnlineLeastSquares
from .metrics import cumulative_online_loss, epsilon_insensitive_loss
from .passive_aggressive import PassiveAggressiveRegressor

__all__ = [
    "PassiveAggressiveRegressor",
    "OnlineLeastSquares",
    "epsilon_insensitive_loss",
    "cumulative_online_loss",
]
