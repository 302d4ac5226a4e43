"""The compiled pass of the multiclass kernel Perceptron on a precomputed kernel matrix (the
graph Perceptron, :mod:`onlinelearn.graph.perceptron`)."""

from __future__ import annotations

import numpy as np

from .config import njit

__all__ = ["kernel_perceptron_pass"]


@njit
def kernel_perceptron_pass(Kmat, nodes, y, n_classes, alpha, sv, n_sv, pred_out):
    """One pass of the multiclass kernel Perceptron on a precomputed kernel matrix.

    The hypothesis is f_k(i) = sum_{s in support} alpha[s, k] K[sv[s], i]; on a mistake at node
    i (argmax f != y) the node joins the support set with alpha = +1 for y and -1 for the
    predicted class (Crammer & Singer's max-score Perceptron; the graph Perceptron of Herbster
    & Pontil when K = L^+ plus a constant).  Returns the new support size."""
    f = np.zeros(n_classes)
    for t in range(nodes.shape[0]):
        i = nodes[t]
        for k in range(n_classes):
            f[k] = 0.0
        for s in range(n_sv):
            kv = Kmat[sv[s], i]
            for k in range(n_classes):
                f[k] += alpha[s, k] * kv
        pred = 0
        for k in range(1, n_classes):
            if f[k] > f[pred]:
                pred = k
        pred_out[t] = pred
        if pred != y[t]:
            sv[n_sv] = i
            for k in range(n_classes):
                alpha[n_sv, k] = 0.0
            alpha[n_sv, y[t]] = 1.0
            alpha[n_sv, pred] = -1.0
            n_sv += 1
    return n_sv
