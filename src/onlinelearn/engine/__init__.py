"""The learner of the framework: ``OnlineLearner(link, loss, step)`` over every family.

It stands above the families it runs (the linear passes of :mod:`onlinelearn.shell`, the dual
ascent family, the label-ranking family, the regressors) and the axes they share
(:mod:`onlinelearn.framework`); ``onlinelearn.framework.OnlineLearner`` is the same class.
"""

from .learner import OnlineLearner, OnlineRegressor

__all__ = ["OnlineLearner", "OnlineRegressor"]
