"""First-order linear learners: points of the three axes (link x loss x dual step).

| learner | link x loss x step |
|---|---|
| :class:`Perceptron` | Euclidean x hinge x conservative |
| :class:`PassiveAggressiveClassifier` | Euclidean x hinge x aggressive (PA, PA-I, PA-II) |
| :class:`Winnow` | relative entropy x hinge x conservative or aggressive |
| :class:`PNormPerceptron` | p-norm x hinge x conservative or aggressive |
| :class:`COPA` | Euclidean x squared confusion hinge x closed-form multi-variable |

All share the estimator plumbing of :mod:`onlinelearn.shell.base` and the compiled passes of
:mod:`onlinelearn._core`.
"""

from .copa import COPA
from .passive_aggressive import PassiveAggressiveClassifier
from .perceptron import Perceptron
from .quasi_additive import PNormPerceptron, Winnow

__all__ = ["COPA", "PNormPerceptron", "PassiveAggressiveClassifier", "Perceptron", "Winnow"]
