"""The dual ascent axis (thesis Sec. 3.5, 4, 5.2): several dual variables per round, self-tuned
and strongly convex c_t, with the dual objective of each run."""

from .classifier import DualAscentClassifier

__all__ = ["DualAscentClassifier"]
