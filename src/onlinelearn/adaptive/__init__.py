"""Scale-free linear learners: per-coordinate adaptive rates (AdaGrad's diagonal in
FTRL-Proximal form) and Vowpal Wabbit's normalized adaptive update (NAG).

* :class:`AdaGradClassifier`, :class:`AdaGradRegressor`: FTRL-Proximal (McMahan et al. 2013,
  Algorithm 1) with rates alpha / (beta + sqrt(sum of squared gradients)), l1 and l2;
* :class:`NormalizedClassifier`, :class:`NormalizedRegressor`: NAG (Ross, Mineiro, Langford
  2013, Algorithm 2), invariant to the scale of each feature.
"""

from .classifier import AdaGradClassifier, NormalizedClassifier
from .regressor import AdaGradRegressor, NormalizedRegressor

__all__ = ["AdaGradClassifier", "AdaGradRegressor", "NormalizedClassifier", "NormalizedRegressor"]
