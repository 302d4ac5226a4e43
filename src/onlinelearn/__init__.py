"""onlinelearn: online learning of linear classifiers as incremental dual ascent.

Public re-exports only; see the modules for the mathematics.  They are imported lazily (PEP 562,
on first attribute access), so that ``import onlinelearn`` and the command line's ``--help`` do
not pay for scikit-learn, scipy and numba until a learner is used; ``from onlinelearn import X``
works as before for every name of ``__all__``.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: public name -> the module (relative to this package) that defines it
_LAZY = {
    "framework": ".framework",
    "drift": ".drift",
    "preprocessing": ".preprocessing",
    "projections": ".projections",
    "PrimalDualBoost": ".boosting",
    "DualAscentClassifier": ".dual_ascent",
    "OnlineLearner": ".engine",
    "OnlineRegressor": ".engine",
    "online_to_batch_average": ".evaluation",
    "online_to_batch_last": ".evaluation",
    "online_to_batch_validation": ".evaluation",
    "progressive_validation": ".evaluation",
    "KernelCOPA": ".kernel_methods",
    "KernelPassiveAggressive": ".kernel_methods",
    "KernelPerceptron": ".kernel_methods",
    "KernelSVC": ".kernel_methods",
    "COPA": ".linear",
    "PassiveAggressiveClassifier": ".linear",
    "Perceptron": ".linear",
    "PNormPerceptron": ".linear",
    "Winnow": ".linear",
    "confusion_matrix_conditional": ".metrics",
    "confusion_operator_norm": ".metrics",
    "confusion_risk_bound": ".metrics",
    "ClassDependentPA": ".ranking",
    "LabelRanker": ".ranking",
    "OnlineLeastSquares": ".regression",
    "PassiveAggressiveRegressor": ".regression",
    "AROW": ".second_order",
    "SCW": ".second_order",
    "WeightedMinMax": ".second_order",
    "merge_models": ".shell.linear_state",
    "SequenceTagger": ".structured",
    "DualCoordinateSVC": ".svm",
    "Pegasos": ".svm",
    "AdaGradClassifier": ".adaptive",
    "AdaGradRegressor": ".adaptive",
    "NormalizedClassifier": ".adaptive",
    "NormalizedRegressor": ".adaptive",
}


def __getattr__(name: str):
    where = _LAZY.get(name)
    if where is None:
        # a subpackage used as an attribute (``onlinelearn.datasets``), as when this module
        # imported them all
        if not name.startswith("__"):
            try:
                return importlib.import_module(f".{name}", __name__)
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where, __name__)
    value = module if where.lstrip(".") == name else getattr(module, name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


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
    "AdaGradClassifier",
    "AdaGradRegressor",
    "NormalizedClassifier",
    "NormalizedRegressor",
    "drift",
    "preprocessing",
]
