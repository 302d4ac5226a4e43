"""onlinelearn: online learning of linear classifiers as incremental dual ascent.

Public re-exports only; see the modules for the mathematics.
"""

from .base import merge_models
from .passive_aggressive import PassiveAggressiveClassifier
from .perceptron import Perceptron
from .quasi_additive import PNormPerceptron, Winnow

__version__ = "0.1.0"

__all__ = [
    "Perceptron",
    "PassiveAggressiveClassifier",
    "Winnow",
    "PNormPerceptron",
    "merge_models",
    "__version__",
]
