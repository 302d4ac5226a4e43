"""Label ranking (thesis ch. 8): :class:`LabelRanker`, :class:`ClassDependentPA` and metrics;
instance ranking (Sec. 5.3.4): :class:`InstanceRanker`."""

from .class_dependent import ClassDependentPA, one_vs_rest_features
from .instance_ranker import InstanceRanker
from .label_ranker import LabelRanker

__all__ = ["InstanceRanker", "LabelRanker", "ClassDependentPA", "one_vs_rest_features"]
