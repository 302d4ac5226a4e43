"""The graph Perceptron: a multiclass kernel Perceptron on a precomputed node kernel."""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError

from .._core.precomputed_perceptron import kernel_perceptron_pass
from ..shell import validation as V
from .features import laplacian_pinv


class GraphPerceptron:
    """Multiclass kernel Perceptron whose examples are the nodes of one graph.

    Problem: online prediction of node labels, the hypothesis in the RKHS of a node kernel K
    (an (n, n) positive semi-definite matrix), f_k(i) = sum_{s in S} alpha_{s,k} K[s, i],
    y_hat = argmax_k f_k(i) (first maximum).  A mistake at node i adds i to the support set S
    with alpha_{i, y} = +1 and alpha_{i, y_hat} = -1 (the max-score multiclass Perceptron of
    Crammer & Singer 2003 in the dual).  With K = L^+ + c 11' (L the combinatorial Laplacian)
    this is the graph Perceptron of Herbster & Pontil (NIPS 2006); :meth:`from_adjacency`
    builds that kernel (c = ``constant``), exactly and densely (see
    :func:`onlinelearn.graph.laplacian_pinv`: per connected component, O(n^2) memory).

    Cost per round O(|S| K).  Not a scikit-learn estimator: X is a vector of node ids.

    Parameters
    ----------
    kernel : (n, n) array
        The node kernel (used as given, C-contiguous float64).

    Attributes
    ----------
    classes_, n_mistakes_, t_, support_ (node ids), dual_coef_ (|S|, n_classes).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from onlinelearn.graph import GraphPerceptron
    >>> path = sp.diags([np.ones(5), np.ones(5)], [1, -1], shape=(6, 6))   # 0-1-2-3-4-5
    >>> gp = GraphPerceptron.from_adjacency(path)
    >>> gp.partial_fit_predict([0, 5, 1, 4, 2, 3], [0, 1, 0, 1, 0, 1]).tolist()
    [0, 0, 1, 1, 0, 1]
    >>> gp.n_mistakes_
    2
    """

    def __init__(self, kernel):
        K = np.ascontiguousarray(kernel, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"kernel must be a square matrix, got shape {K.shape}")
        if not np.isfinite(K).all():
            raise ValueError("kernel has NaN or infinite entries")
        self.kernel = K

    @classmethod
    def from_adjacency(cls, adjacency, constant=1.0):
        """The graph Perceptron of Herbster & Pontil: K = L^+ + ``constant`` (all pairs)."""
        return cls(laplacian_pinv(adjacency) + float(constant))

    def partial_fit_predict(self, nodes, y):
        """Predict each node's label before learning it, in the order given; return the
        predictions (labels).  New labels extend ``classes_`` (sorted)."""
        nodes = self._nodes(nodes)
        y = V.check_y(y)
        if y.shape != nodes.shape:
            raise ValueError(f"{nodes.shape[0]} nodes but {y.shape[0]} labels; one label a node")
        if nodes.size == 0:
            raise ValueError("empty batch")
        known = getattr(self, "classes_", np.array([], dtype=y.dtype))
        classes = V.merge_labels(getattr(self, "classes_", None), y)
        sv = getattr(self, "_sv", np.zeros(0, dtype=np.int64))
        alpha = getattr(self, "_alpha", np.zeros((0, len(known))))
        n_sv = getattr(self, "_n_sv", 0)
        # room for every node of this batch in the support set; columns for new labels
        grown = np.zeros((n_sv + nodes.size, len(classes)))
        grown[:n_sv][:, np.searchsorted(classes, known)] = alpha[:n_sv]
        sv_new = np.zeros(n_sv + nodes.size, dtype=np.int64)
        sv_new[:n_sv] = sv[:n_sv]
        codes = np.searchsorted(classes, y).astype(np.int64)
        pred = np.zeros(nodes.size, dtype=np.int64)
        n_sv = kernel_perceptron_pass(
            self.kernel, nodes.astype(np.int64), codes, len(classes), grown, sv_new, n_sv, pred
        )
        self.classes_ = classes
        self._sv, self._alpha, self._n_sv = sv_new[:n_sv], grown[:n_sv], n_sv
        self.n_mistakes_ = getattr(self, "n_mistakes_", 0) + int((pred != codes).sum())
        self.t_ = getattr(self, "t_", 0) + nodes.size
        return classes[pred]

    def decision_function(self, nodes):
        """Scores f_k(i) of the nodes, shape (len(nodes), n_classes)."""
        if not hasattr(self, "classes_"):
            raise NotFittedError(
                "This GraphPerceptron has learned nothing yet: call partial_fit_predict first."
            )
        nodes = self._nodes(nodes)
        return self.kernel[self._sv][:, nodes].T @ self._alpha

    def _nodes(self, nodes):
        """Node ids as int64 positions in [0, n): numpy would count a negative id from the end
        and cut a fractional one."""
        return V.check_positions(nodes, self.kernel.shape[0], "node ids")

    def predict(self, nodes):
        scores = self.decision_function(nodes)  # checks that the model has learned
        return self.classes_[np.argmax(scores, axis=1)]

    @property
    def support_(self):
        return self._sv.copy()

    @property
    def dual_coef_(self):
        return self._alpha.copy()
