"""Structured output (thesis Sec. 5.3.3, ch. 9): sequence tagging, a generic structured learner,
alignment."""

from .alignment import Aligner, make_alignment
from .conversion import structured_average, structured_last, structured_validation
from .learner import OnlineStructuredLearner
from .tagger import SequenceTagger
from .text import read_conllu, token_features

__all__ = [
    "SequenceTagger",
    "OnlineStructuredLearner",
    "Aligner",
    "make_alignment",
    "read_conllu",
    "token_features",
    "structured_last",
    "structured_average",
    "structured_validation",
]
