"""Second-order online learners: the weighted min-max forecaster, AROW and SCW.

They keep a matrix besides the weights (A^{-1} or the covariance Sigma), in a
:class:`~onlinelearn.second_order._base.SecondOrderState` beside a thin estimator.
"""

from .confidence_weighted import AROW, SCW
from .minmax import WeightedMinMax

__all__ = ["WeightedMinMax", "AROW", "SCW"]
