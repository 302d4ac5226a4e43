"""Structured output (thesis Sec. 5.3.3, ch. 9): sequence tagging, a generic structured learner,
alignment."""

from .tagger import SequenceTagger
from .text import read_conllu, token_features

__all__ = ["SequenceTagger", "read_conllu", "token_features"]
