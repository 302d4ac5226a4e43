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
    "load_graph_files",
    "GraphFileError",
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
    node_ids : (n,) the node ids of the files (str), or None for 0..n-1
    label_names : (n_classes,) the class names of the labels file (str), or None: the class
        ids are their positions
    """

    adjacency: sp.csr_matrix
    labels: np.ndarray | sp.csr_matrix
    features: sp.csr_matrix | None
    name: str
    node_ids: np.ndarray | None = None
    label_names: np.ndarray | None = None

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


class GraphFileError(ValueError):
    """A malformed graph file; the message names the file and the line."""


def _data_lines(path):
    """(line number, fields) of the lines that hold data: '#' starts a comment, fields are
    separated by white space or commas."""
    with _open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if line:
                yield lineno, line.replace(",", " ").split()


def _node_order(ids):
    """The ids sorted: numerically when every id is an integer, else as strings."""
    try:
        keys = [int(i) for i in ids]
    except ValueError:
        return sorted(ids)
    return [i for _, i in sorted(zip(keys, ids, strict=True))]


def load_graph_files(edges, labels, features=None, *, name=None):
    """A labelled graph from text files whose node ids are arbitrary strings.

    ``edges``: one edge per line, ``u v`` or ``u v weight`` (weight a finite number >= 0,
    default 1), fields separated by white space or a comma; the graph is made undirected
    (W = max(W, W')), self-loops are dropped, '#' starts a comment.  The nodes are the ids of
    this file, numbered in sorted order (numerically when every id is an integer, else as
    strings), so a graph's run does not depend on the order of its lines.
    ``labels``: one node per line, ``node label`` (a label is any string: the classes are the
    distinct labels, sorted as the ids are); nodes without a line are unlabelled.
    ``features`` (optional): one node per line, the node id and then either its values
    ``v1 v2 ... vd`` (dense; every line the same d) or ``index:value`` pairs (sparse, as in
    svmlight with the node id in place of the target; indices >= 0, d = the largest + 1); a
    node without a line gets a zero row.
    Files may be plain, .xz, .bz2 or .gz.  A malformed line, a node of the labels or features
    file that is not in the edge list, or a node given twice raises :class:`GraphFileError`
    (a ValueError) naming the file and the line.
    """
    ids, rows, cols, w = {}, [], [], []
    seen = []
    for lineno, parts in _data_lines(edges):
        if len(parts) not in (2, 3):
            raise GraphFileError(
                f"{edges}:{lineno}: expected 'u v' or 'u v weight', got {len(parts)} fields"
            )
        wt = 1.0
        if len(parts) == 3:
            try:
                wt = float(parts[2])
            except ValueError:
                raise GraphFileError(
                    f"{edges}:{lineno}: the weight {parts[2]!r} is not a number"
                ) from None
            if not (np.isfinite(wt) and wt >= 0):
                raise GraphFileError(f"{edges}:{lineno}: weights must be finite and >= 0")
        seen.append((parts[0], parts[1], wt))
    if not seen:
        raise GraphFileError(f"{edges}: no edges")
    for u, v, _ in seen:
        ids.setdefault(u, None)
        ids.setdefault(v, None)
    order = _node_order(list(ids))
    index = {nid: i for i, nid in enumerate(order)}
    n = len(order)
    for u, v, wt in seen:
        if u != v:
            rows.append(index[u])
            cols.append(index[v])
            w.append(wt)
    W = sp.coo_matrix((w, (rows, cols)), shape=(n, n)).tocsr()
    W = W.maximum(W.T).tocsr()
    W.sort_indices()

    def node_of(path, lineno, nid, done):
        if nid not in index:
            raise GraphFileError(
                f"{path}:{lineno}: unknown node {nid!r} (not in the edge list {edges})"
            )
        i = index[nid]
        if i in done:
            raise GraphFileError(f"{path}:{lineno}: node {nid!r} given twice (line {done[i]})")
        done[i] = lineno
        return i

    lab_of, done = {}, {}
    for lineno, parts in _data_lines(labels):
        if len(parts) != 2:
            raise GraphFileError(
                f"{labels}:{lineno}: expected 'node label', got {len(parts)} fields"
            )
        lab_of[node_of(labels, lineno, parts[0], done)] = parts[1]
    if not lab_of:
        raise GraphFileError(f"{labels}: no labels")
    names = _node_order(sorted(set(lab_of.values())))
    code = {lab: k for k, lab in enumerate(names)}
    y = np.full(n, -1, dtype=np.int64)
    for i, lab in lab_of.items():
        y[i] = code[lab]
    F = None if features is None else _read_node_features(features, node_of, n)
    return GraphData(
        W, y, F, name or Path(edges).name.split(".")[0], np.array(order, dtype=object),
        np.array(names, dtype=object),
    )  # fmt: skip


def _finite(tok):
    v = float(tok)
    if not np.isfinite(v):
        raise ValueError(f"{tok!r} is not finite")
    return v


def _read_node_features(path, node_of, n):
    rows, cols, vals, done = [], [], [], {}
    dense_d = None
    sparse = None
    for lineno, parts in _data_lines(path):
        if len(parts) < 2:
            raise GraphFileError(f"{path}:{lineno}: expected a node id and its features")
        i = node_of(path, lineno, parts[0], done)
        is_sparse = ":" in parts[1]
        if sparse is None:
            sparse = is_sparse
        elif sparse != is_sparse:
            raise GraphFileError(
                f"{path}:{lineno}: mixes dense values and index:value pairs (the first line "
                f"was {'sparse' if sparse else 'dense'})"
            )
        try:
            if sparse:
                for tok in parts[1:]:
                    j, v = tok.split(":")
                    j = int(j)
                    if j < 0:
                        raise ValueError(f"negative index {j}")
                    rows.append(i)
                    cols.append(j)
                    vals.append(_finite(v))
            else:
                if dense_d is None:
                    dense_d = len(parts) - 1
                elif len(parts) - 1 != dense_d:
                    raise GraphFileError(
                        f"{path}:{lineno}: {len(parts) - 1} values, the first line had {dense_d}"
                    )
                vals.extend(_finite(v) for v in parts[1:])
                rows.extend([i] * dense_d)
                cols.extend(range(dense_d))
        except ValueError as exc:
            if isinstance(exc, GraphFileError):
                raise
            raise GraphFileError(f"{path}:{lineno}: not a feature value ({exc})") from None
    if not done:
        raise GraphFileError(f"{path}: no feature lines")
    vals = np.asarray(vals, dtype=np.float64)
    d = dense_d if not sparse else max(cols) + 1
    X = sp.coo_matrix((vals, (rows, cols)), shape=(n, d)).tocsr()
    X.sum_duplicates()
    X.sort_indices()
    return X


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
