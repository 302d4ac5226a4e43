"""Boosting as primal-dual online convex programming (thesis ch. 6)."""

from .booster import PrimalDualBoost, WeakLearnerError

__all__ = ["PrimalDualBoost", "WeakLearnerError"]
