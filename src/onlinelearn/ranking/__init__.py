"""Label ranking (thesis ch. 8): :class:`LabelRanker`, :class:`ClassDependentPA` and metrics."""

from .label_ranker import LabelRanker

__all__ = ["LabelRanker"]
