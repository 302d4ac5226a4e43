"""Label ranking (thesis ch. 8): :class:`LabelRanker`, :class:`ClassDependentPA` and metrics."""

from .class_dependent import ClassDependentPA, one_vs_rest_features
from .label_ranker import LabelRanker

__all__ = ["LabelRanker", "ClassDependentPA", "one_vs_rest_features"]
