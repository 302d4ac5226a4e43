"""Graph data sets of the shared folder (Planetoid cora / citeseer / pubmed, BlogCatalog) and a
generic edge-list + labels loader.

Files are read from the shared data folder (:func:`onlinelearn.datasets.shared_data_dir`, or the
environment variable ``ONLINELEARN_DATA``); nothing is downloaded.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = [
    "GraphData",
    "load_edge_list",
    "load_planetoid",
    "load_cora",
    "load_citeseer",
    "load_pubmed",
    "load_blogcatalog",
]


@dataclass
class GraphData:
    """A graph with node labels.

    adjacency : (n, n) symmetric CSR matrix, float64 weights (1 per undirected edge)
    labels : (n,) int64 class ids, -1 for a node without label; or, for a multi-label graph,
        an (n, n_labels) CSR 0/1 indicator matrix
    features : (n, d) CSR node features, or None
    name : str
    """

    adjacency: sp.csr_matrix
    labels: np.ndarray | sp.csr_matrix
    features: sp.csr_matrix | None
    name: str

    @property
    def n_nodes(self) -> int:
        return self.adjacency.shape[0]

    def labelled(self) -> np.ndarray:
        """Ids of the nodes with a (single) label."""
        if sp.issparse(self.labels):
            return np.flatnonzero(np.diff(self.labels.indptr) > 0)
        return np.flatnonzero(self.labels >= 0)


def _open_text(path):
    path = Path(path)
    opener = {".xz": lzma.open, ".bz2": bz2.open, ".gz": gzip.open}.get(path.suffix, open)
    return opener(path, "rt")


def _read_pairs(path, what):
    rows = []
    with _open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.replace(",", " ").split()
            if len(parts) < 2:
                raise ValueError(f"{path}:{lineno}: expected two fields in the {what} file")
            rows.append(parts)
    return rows


def load_edge_list(edges, labels=None, *, n_nodes=None, multilabel=False, name="graph"):
    """A graph from an edge-list file and an optional labels file (plain, .xz, .bz2 or .gz).

    ``edges``: one edge per line, ``u v`` or ``u v weight`` (0-based node ids; '#' starts a
    comment); the graph is made undirected (W = max(W, W')); self-loops are dropped.
    ``labels``: one node per line, ``node label`` (an int, -1 = no label) or, with
    ``multilabel``, ``node l1,l2,...``.  ``n_nodes``: the number of nodes (default: the
    largest id seen + 1); a node id outside [0, n_nodes) or a negative weight raises
    ValueError.
    """
    pairs = _read_pairs(edges, "edges")
    try:
        uv = np.array([[int(p[0]), int(p[1])] for p in pairs], dtype=np.int64).reshape(-1, 2)
        w = np.array([float(p[2]) if len(p) > 2 else 1.0 for p in pairs])
    except ValueError as exc:
        raise ValueError(f"{edges}: node ids must be integers ({exc})") from None
    lab_rows = _read_pairs(labels, "labels") if labels is not None else []
    lab_ids = np.array([int(r[0]) for r in lab_rows], dtype=np.int64)
    top = max(int(uv.max(initial=-1)), int(lab_ids.max(initial=-1))) + 1
    n = top if n_nodes is None else int(n_nodes)
    if uv.size and (uv.min() < 0 or uv.max() >= n):
        raise ValueError(f"{edges}: a node id is out of range [0, {n})")
    if lab_ids.size and (lab_ids.min() < 0 or lab_ids.max() >= n):
        raise ValueError(f"{labels}: a node id is out of range [0, {n})")
    if (w < 0).any() or not np.isfinite(w).all():
        raise ValueError(f"{edges}: edge weights must be finite and >= 0")
    keep = uv[:, 0] != uv[:, 1]
    W = sp.coo_matrix((w[keep], (uv[keep, 0], uv[keep, 1])), shape=(n, n)).tocsr()
    W = W.maximum(W.T).tocsr()
    W.sort_indices()
    if multilabel:
        rows, cols = [], []
        for node, r in zip(lab_ids, lab_rows, strict=True):
            for tok in r[1:]:
                if tok:
                    rows.append(node)
                    cols.append(int(tok))
        n_lab = max(cols, default=-1) + 1
        y = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n_lab))
        y.data[:] = 1.0
    else:
        y = np.full(n, -1, dtype=np.int64)
        if lab_rows:
            y[lab_ids] = [int(r[1]) for r in lab_rows]
    return GraphData(W, y, None, name)


def _folder(name):
    from ..datasets import DATA_ENV_VAR, shared_data_dir

    root = shared_data_dir()
    path = None if root is None else root / name
    if path is None or not path.is_dir():
        where = f"looked in {root}" if root is not None else "no shared data folder found"
        raise FileNotFoundError(
            f"graph data set {name!r} is not available ({where}); set {DATA_ENV_VAR} to the "
            "folder holding the shared data"
        )
    return path


def load_planetoid(name, *, features=True):
    """cora, citeseer or pubmed in the node numbering of the GCN loader (Kipf & Welling).

    Returns a :class:`GraphData`: adjacency (5278 / 4552 / 44324 undirected edges), labels
    (-1: citeseer's 15 test-range nodes without label or features), and the bag-of-words
    features of cora and citeseer (``features=True``).  Pubmed is graph-only: its word
    features are incomplete in the shared data (``ind.pubmed.allx`` is missing).
    """
    if name not in ("cora", "citeseer", "pubmed"):
        raise ValueError(f"unknown Planetoid graph {name!r}: cora, citeseer or pubmed")
    folder = _folder(name)
    g = load_edge_list(folder / f"{name}.edges.xz", folder / f"{name}.labels.xz", name=name)
    if features and name != "pubmed":
        from ..io import load_svmlight

        X, _ = load_svmlight(folder / f"{name}.features.svm.bz2")
        if X.shape[0] != g.n_nodes:
            raise ValueError(f"{name}: {X.shape[0]} feature rows for {g.n_nodes} nodes")
        g.features = X.tocsr()
    return g


def load_cora(*, features=True):
    """Cora: 2708 nodes, 5278 edges, 7 classes, 1433 binary word features."""
    return load_planetoid("cora", features=features)


def load_citeseer(*, features=True):
    """Citeseer: 3327 nodes (3312 labelled), 4552 edges, 6 classes, 3703 word features."""
    return load_planetoid("citeseer", features=features)


def load_pubmed():
    """Pubmed, graph only: 19717 nodes (all labelled), 44324 edges, 3 classes."""
    return load_planetoid("pubmed", features=False)


def load_blogcatalog():
    """BlogCatalog (Tang & Liu 2009): 10312 nodes, 333983 edges, 39 labels, multi-label
    (``labels`` is a (10312, 39) CSR indicator matrix)."""
    folder = _folder("blogcatalog")
    return load_edge_list(
        folder / "blogcatalog.edges.xz",
        folder / "blogcatalog.labels.xz",
        n_nodes=10312,
        multilabel=True,
        name="blogcatalog",
    )
