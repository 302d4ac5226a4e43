"""The registry of learners: every public estimator with its task, under a command-line name.

Importing this module imports nothing but the standard library (the classes are named, not
imported), so that ``onlinelearn --help`` can list the learners without loading scikit-learn,
scipy or numba.  :func:`learner_class` imports a learner's class when it is needed.

Tasks
    ``classification``  one label per row (binary or multiclass; ``binary_only`` learners need
                        exactly two labels)
    ``regression``      one real target per row
    ``ranking``         a set of relevant labels per row (multi-label svmlight: ``1,3 idx:val``)

Learners that do not read rows of features are not on the command line: ``SequenceTagger``
(sentences; ``onlinelearn reproduce pos-tagging``), ``onlinelearn.graph.GraphPerceptron``
(nodes of a graph; ``onlinelearn reproduce graph-nodes``) and the structured learners of
``onlinelearn.structured``; see :data:`PYTHON_ONLY`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

__all__ = [
    "ALIASES",
    "LEARNERS",
    "PYTHON_ONLY",
    "TASKS",
    "LearnerSpec",
    "get",
    "learner_class",
    "names",
    "spec_of_estimator",
]

TASKS = ("classification", "regression", "ranking")


@dataclass(frozen=True)
class LearnerSpec:
    """One learner of the command line.

    ``online``: the class has ``partial_fit`` (trained in one streaming pass per epoch and
    resumable); otherwise it is a batch learner (``fit`` on the whole file).  ``params``: the
    parameters this name fixes (e.g. ``pa1`` is ``PassiveAggressiveClassifier(variant='PA-I')``).
    ``takes_C``: whether ``-C`` applies (None: whenever the class has a ``C`` parameter).
    ``needs_classes``: the learner cannot add labels after its first call (the command line
    then reads the labels of the data first, to pass them as ``classes=``).
    """

    name: str
    class_name: str
    module: str
    task: str
    summary: str
    online: bool = True
    params: dict = field(default_factory=dict)
    binary_only: bool = False
    takes_C: bool | None = None
    needs_classes: bool = False


def _learners(module: str, task: str, *rows) -> list[LearnerSpec]:
    """The learners of one ``module`` and ``task``: a row is ``(name, class_name, summary)``,
    or ``(name, class_name, summary, {field: value})`` for the other fields of
    :class:`LearnerSpec`."""
    return [
        LearnerSpec(name, class_name, module, task, summary, **dict(*more))
        for name, class_name, summary, *more in rows
    ]


_SPECS = [
    # -- classification, linear, first order
    *_learners("onlinelearn.linear", "classification",
        ("perceptron", "Perceptron", "classic multiclass Perceptron (updates on mistakes)"),
        ("passive-aggressive", "PassiveAggressiveClassifier",
         "Passive-Aggressive (variant PA / PA-I / PA-II, cap -C)"),
        ("pa", "PassiveAggressiveClassifier", "Passive-Aggressive, hard margin",
         {"params": {"variant": "PA"}, "takes_C": False}),
        ("pa1", "PassiveAggressiveClassifier", "PA-I with cap -C",
         {"params": {"variant": "PA-I"}}),
        ("pa2", "PassiveAggressiveClassifier", "PA-II with cap -C",
         {"params": {"variant": "PA-II"}}),
        ("winnow", "Winnow", "balanced Winnow (multiplicative)"),
        ("pnorm", "PNormPerceptron", "p-norm Perceptron"),
        ("copa", "COPA",
         "COPA, confusion-matrix oriented PA with -C (prints its confusion risk bound)")),
    *_learners("onlinelearn.engine", "classification",
        ("online-learner", "OnlineLearner",
         "the framework's learner: --param link=, loss=, step= (e.g. loss=logistic)")),
    *_learners("onlinelearn.dual_ascent", "classification",
        ("dual-ascent", "DualAscentClassifier",
         "dual ascent: --param step=last-k|row-action|ftrl|...")),
    *_learners("onlinelearn.ranking", "classification",
        ("class-dependent-pa", "ClassDependentPA",
         "multiclass PA with class-dependent features, max-of-hinge", {"needs_classes": True})),
    # -- classification, second order
    *_learners("onlinelearn.second_order", "classification",
        ("arow", "AROW", "AROW, adaptive regularization of weights (second order)"),
        ("scw", "SCW", "soft confidence-weighted learning (second order)"),
        ("weighted-minmax", "WeightedMinMax", "weighted min-max (second order)")),
    # -- classification, SVM
    *_learners("onlinelearn.svm", "classification",
        ("pegasos", "Pegasos", "Pegasos, stochastic sub-gradient SVM"),
        ("dual-cd-svc", "DualCoordinateSVC", "linear SVM by dual coordinate descent (batch)",
         {"online": False})),
    # -- classification, kernels
    *_learners("onlinelearn.kernel_methods", "classification",
        ("kernel-perceptron", "KernelPerceptron",
         "kernel Perceptron (--param kernel=..., budget=...)"),
        ("kernel-pa", "KernelPassiveAggressive", "kernel Passive-Aggressive"),
        ("kernel-copa", "KernelCOPA", "kernel COPA"),
        ("kernel-svc", "KernelSVC", "kernel SVM by SMO (batch)", {"online": False})),
    # -- classification, boosting
    *_learners("onlinelearn.boosting", "classification",
        ("primal-dual-boost", "PrimalDualBoost",
         "primal-dual boosting of stumps (batch, two labels)",
         {"online": False, "binary_only": True})),
    # -- regression
    *_learners("onlinelearn.regression", "regression",
        ("pa-regressor", "PassiveAggressiveRegressor",
         "Passive-Aggressive regression (epsilon-insensitive)"),
        ("least-squares", "OnlineLeastSquares", "online (recursive / regularized) least squares")),
    *_learners("onlinelearn.engine", "regression",
        ("online-regressor", "OnlineRegressor",
         "the framework's regressor: --param link=, loss=, step=")),
    # -- label ranking
    *_learners("onlinelearn.ranking", "ranking",
        ("label-ranker", "LabelRanker",
         "label ranking of multi-label rows (updates I / II / III)")),
]  # fmt: skip

# -- scale-free learners (per-coordinate adaptive and normalized steps)
_SPECS += [
    *_learners("onlinelearn.adaptive", "classification",
        ("adagrad", "AdaGradClassifier",
         "FTRL-Proximal with AdaGrad's per-coordinate rates (--param loss=logistic, l1=)"),
        ("normalized", "NormalizedClassifier",
         "normalized adaptive update (VW's defaults), invariant to feature scales")),
    *_learners("onlinelearn.adaptive", "regression",
        ("adagrad-regressor", "AdaGradRegressor",
         "FTRL-Proximal with AdaGrad's per-coordinate rates (squared, absolute, eps)"),
        ("normalized-regressor", "NormalizedRegressor",
         "normalized adaptive update, invariant to feature scales")),
]  # fmt: skip

#: command-line name -> :class:`LearnerSpec`, in the order of ``--help``
LEARNERS: dict[str, LearnerSpec] = {s.name: s for s in _SPECS}

#: short names kept from the first command line: each is a learner of its own above
ALIASES = ("copa", "pa", "pa1", "pa2", "perceptron", "pnorm", "winnow")

#: public estimators that are not on the command line, and why
PYTHON_ONLY: dict[str, str] = {
    "SequenceTagger": "learns from sentences (token sequences), not rows of features; see "
    "onlinelearn reproduce pos-tagging",
    "GraphPerceptron": "learns the labels of the nodes of a graph, not rows of features; see "
    "onlinelearn reproduce graph-nodes",
    "OnlineStructuredLearner": "structured outputs through user-supplied feature map, cost and "
    "argmax functions (Python callables)",
    "Aligner": "aligns event sequences to signals (structured outputs), not rows of features",
}


def names() -> list[str]:
    """Every command-line name, in the order of ``--help``."""
    return list(LEARNERS)


def get(name: str) -> LearnerSpec:
    """The learner called ``name``; a KeyError says which names exist."""
    try:
        return LEARNERS[name]
    except KeyError:
        raise KeyError(f"unknown learner {name!r}; known: {', '.join(LEARNERS)}") from None


def learner_class(spec: LearnerSpec):
    """Import and return the class of ``spec``."""
    return getattr(importlib.import_module(spec.module), spec.class_name)


def spec_of_estimator(est) -> LearnerSpec | None:
    """The first learner of the registry whose class is that of ``est`` (None if none)."""
    name = type(est).__name__
    for spec in _SPECS:
        if spec.class_name == name:
            return spec
    return None
