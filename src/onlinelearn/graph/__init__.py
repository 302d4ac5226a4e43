"""Online node classification on graphs: node features from the graph, data loaders, and the
graph Perceptron (a kernel Perceptron on the Laplacian pseudo-inverse)."""

from . import datasets
from .datasets import *  # noqa: F403 - the loaders, whose names datasets.__all__ lists
from .features import (
    KINDS,
    check_adjacency,
    connected_components,
    laplacian_pinv,
    spectral_features,
)
from .perceptron import GraphPerceptron

__all__ = [
    "spectral_features",
    "laplacian_pinv",
    "check_adjacency",
    "connected_components",
    "KINDS",
    "GraphPerceptron",
    *datasets.__all__,
]
