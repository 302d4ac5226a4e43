"""The framework's three axes as public objects, and the learner they make.

A learner is three choices (thesis Ch. 5; DESIGN.md): a link (complexity function f), a loss,
and a dual ascent step::

    from onlinelearn.framework import OnlineLearner, Euclidean, Hinge, Aggressive
    OnlineLearner(link=Euclidean(), loss=Hinge(margin=1.0), step=Aggressive(C=1.0))  # PA-I

A loss of one's own is two numba-compiled scalar functions (:class:`CustomLoss`).

The learners themselves live above the families they run (:mod:`onlinelearn.engine`); they are
handed on here as ``OnlineLearner`` and ``OnlineRegressor`` on first access (this module imports
nothing above the axes).
"""

from .links import Entropy, Euclidean, Link, PNorm
from .losses import (
    Confusion,
    CustomLoss,
    EpsInsensitive,
    Hinge,
    Logistic,
    Loss,
    RankingHinge,
    Squared,
    SquaredHinge,
)
from .steps import (
    FTRL,
    Aggressive,
    Conservative,
    LastK,
    LipschitzTuned,
    LossTuned,
    RoundOptimal,
    RowAction,
    SelfTuned,
    Step,
    StronglyConvex,
)

__all__ = [
    "FTRL",
    "Aggressive",
    "Confusion",
    "Conservative",
    "CustomLoss",
    "Entropy",
    "EpsInsensitive",
    "Euclidean",
    "Hinge",
    "LastK",
    "Link",
    "LipschitzTuned",
    "Logistic",
    "Loss",
    "LossTuned",
    "OnlineLearner",
    "OnlineRegressor",
    "PNorm",
    "RankingHinge",
    "RoundOptimal",
    "RowAction",
    "SelfTuned",
    "Squared",
    "SquaredHinge",
    "Step",
    "StronglyConvex",
]


def __getattr__(name: str):
    # the learners live above the axes (onlinelearn.engine) and are handed on here lazily, so
    # that this module imports nothing above itself at import time (PEP 562)
    if name in ("OnlineLearner", "OnlineRegressor"):
        from .. import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
