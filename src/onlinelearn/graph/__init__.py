"""Online node classification on graphs: node features from the graph, data loaders, and the
graph Perceptron (a kernel Perceptron on the Laplacian pseudo-inverse)."""

from .datasets import (
    GraphData,
    load_blogcatalog,
    load_citeseer,
    load_cora,
    load_edge_list,
    load_planetoid,
    load_pubmed,
)
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
    "GraphData",
    "load_edge_list",
    "load_planetoid",
    "load_cora",
    "load_citeseer",
    "load_pubmed",
    "load_blogcatalog",
]
