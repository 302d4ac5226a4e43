"""onlinelearn: online learning of linear classifiers as incremental dual ascent.

Public re-exports only; see the modules for the mathematics.
"""

from . import framework, projections
from .boosting import PrimalDualBoost
from .dual_ascent import DualAscentClassifier
from .engine import OnlineLearner, OnlineRegressor
from .evaluation import (
    online_to_batch_average,
    online_to_batch_last,
    online_to_batch_validation,
    progressive_validation,
)
from .kernel_methods import KernelCOPA, KernelPassiveAggressive, KernelPerceptron, KernelSVC
from .linear import COPA, PassiveAggressiveClassifier, Perceptron, PNormPerceptron, Winnow
from .metrics import confusion_matrix_conditional, confusion_operator_norm, confusion_risk_bound
from .ranking import ClassDependentPA, LabelRanker
from .regression import OnlineLeastSquares, PassiveAggressiveRegressor
from .second_order import AROW, SCW, WeightedMinMax
from .shell.linear_state import merge_models
from .structured import SequenceTagger
from .svm import DualCoordinateSVC, Pegasos

__version__ = "0.1.0"

# the framework's learners, also under the framework's name (the axes' package imports nothing
# above itself: the learners stand above the families they run)
framework.OnlineLearner, framework.OnlineRegressor = OnlineLearner, OnlineRegressor

__all__ = [
    "OnlineLearner",
    "OnlineRegressor",
    "Perceptron",
    "PassiveAggressiveClassifier",
    "Winnow",
    "PNormPerceptron",
    "COPA",
    "SequenceTagger",
    "PrimalDualBoost",
    "LabelRanker",
    "ClassDependentPA",
    "projections",
    "WeightedMinMax",
    "AROW",
    "SCW",
    "PassiveAggressiveRegressor",
    "OnlineLeastSquares",
    "DualAscentClassifier",
    "DualCoordinateSVC",
    "Pegasos",
    "merge_models",
    "progressive_validation",
    "online_to_batch_last",
    "online_to_batch_average",
    "online_to_batch_validation",
    "confusion_matrix_conditional",
    "confusion_operator_norm",
    "confusion_risk_bound",
    "__version__",
    "KernelPerceptron",
    "KernelPassiveAggressive",
    "KernelCOPA",
    "KernelSVC",
]
