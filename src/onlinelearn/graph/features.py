"""Node features from a graph: spectral embeddings and the Laplacian pseudo-inverse.

Conventions (for every function here):

* ``adjacency`` is a square, symmetric scipy sparse (or dense) matrix of non-negative finite
  edge weights W; self-loops are kept as given.  Anything else raises ValueError.
* D = diag(W 1) are the degrees, S = D^{-1/2} W D^{-1/2} the normalised adjacency and
  L = I - S the normalised Laplacian.  An isolated node (degree 0) has a zero row in S and,
  by our convention, a zero row in L: it is a connected component of its own.
* Disconnected graphs: S, L and every kernel below are block-diagonal over the connected
  components, so each eigenvector lives on one component.  Each component c has the trivial
  eigenvector D^{1/2} 1_c (eigenvalue 1 of S, 0 of L), which says only which component a node
  is in; it is projected out before the eigensolver (deflation), so the k features are the k
  leading *non-trivial* eigenvectors over all components together.  What the trivial vectors
  carried for a connected graph (a constant) is the learner's intercept.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from scipy.sparse.linalg import LinearOperator, eigsh, splu

__all__ = [
    "check_adjacency",
    "connected_components",
    "normalized_adjacency",
    "spectral_features",
    "laplacian_pinv",
    "KINDS",
]

#: kinds of :func:`spectral_features`
KINDS = ("pinv", "lgc", "laplacian")


def check_adjacency(adjacency, *, name="adjacency"):
    """The adjacency as a float64 CSR matrix with sorted indices, after checking that it is
    square, symmetric, finite and non-negative (ValueError otherwise; the input is not
    changed)."""
    if sp.issparse(adjacency):
        W = sp.csr_matrix(adjacency, dtype=np.float64, copy=True)
    else:
        arr = np.asarray(adjacency)
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
        W = sp.csr_matrix(arr.astype(np.float64))
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {W.shape}")
    if W.shape[0] == 0:
        raise ValueError(f"{name} has no nodes")
    W.sum_duplicates()
    W.sort_indices()
    if not np.isfinite(W.data).all():
        raise ValueError(f"{name} has NaN or infinite weights")
    if (W.data < 0).any():
        raise ValueError(
            f"{name} has negative weights ({int((W.data < 0).sum())} entries); edge weights "
            "must be >= 0 for the Laplacian to be positive semi-definite"
        )
    asym = abs(W - W.T)
    if asym.nnz and asym.max() > 1e-12 * max(1.0, float(np.abs(W.data).max())):
        raise ValueError(
            f"{name} is not symmetric (max |W - W'| = {asym.max():.3g}); pass an undirected "
            "graph, e.g. (W + W.T) / 2 or W.maximum(W.T)"
        )
    W.eliminate_zeros()
    return W


def connected_components(adjacency):
    """(n_components, labels): the connected components of the (checked) graph."""
    W = check_adjacency(adjacency)
    return csgraph.connected_components(W, directed=False)


def normalized_adjacency(W):
    """S = D^{-1/2} W D^{-1/2} (isolated nodes: zero rows) and the degrees d, for a checked W."""
    deg = np.asarray(W.sum(axis=1)).ravel()
    inv_sqrt = np.zeros_like(deg)
    pos = deg > 0
    inv_sqrt[pos] = 1.0 / np.sqrt(deg[pos])
    Dm = sp.diags(inv_sqrt)
    return (Dm @ W @ Dm).tocsr(), deg


def _trivial_basis(deg, labels, n_comp):
    """Per node: the entry of its component's unit trivial eigenvector D^{1/2} 1_c / norm
    (isolated nodes: 1, their own unit vector)."""
    root = np.sqrt(deg)
    root[deg == 0] = 1.0
    norms = np.sqrt(np.bincount(labels, weights=root**2, minlength=n_comp))
    return root / norms[labels]


def _leading_nontrivial(S, deg, k, random_state):
    """The k largest eigenpairs (mu, U) of S with the trivial eigenvectors projected out."""
    n = S.shape[0]
    n_comp, labels = csgraph.connected_components(S, directed=False)
    u = _trivial_basis(deg, labels, n_comp)
    # isolated nodes have S row 0 and no trivial eigenvector of S; deflating them maps their
    # unit vectors to eigenvalue 0 as well, which is what S gives them anyway

    def deflate(x):
        """x minus its projection on the trivial eigenvectors (one per component)."""
        x = np.asarray(x, dtype=np.float64).reshape(n, -1)
        proj = np.zeros((n_comp, x.shape[1]))
        np.add.at(proj, labels, u[:, None] * x)
        return x - u[:, None] * proj[labels]

    n_free = n - n_comp
    if k > n_free:
        raise ValueError(
            f"k = {k} features asked for, but the graph has only {n_free} non-trivial "
            f"eigenvectors ({n} nodes in {n_comp} connected components)"
        )
    if n <= 1000 or k >= n // 3:
        P = np.zeros((n, n_comp))
        P[np.arange(n), labels] = u
        Q = np.eye(n) - P @ P.T
        # the trivial directions are sent to -10, below every eigenvalue of S (>= -1)
        mu, U = np.linalg.eigh(Q @ S.toarray() @ Q - 10.0 * (P @ P.T))
        keep = np.argsort(-mu, kind="stable")[:k]
        return mu[keep], U[:, keep]
    # shift-invert: the smallest eigenvalues lambda of L = I - S are the largest of
    # (L + sigma I)^{-1}, well separated where those of S cluster near 1 (Lanczos on S itself
    # needs many restarts).  L + sigma I is positive definite; a symmetric fill-reducing order
    # keeps its LU factors small.
    sigma = 1e-3
    M = (sp.identity(n, format="csc") * (1.0 + sigma) - S).tocsc()
    lu = splu(M, permc_spec="MMD_AT_PLUS_A", options={"SymmetricMode": True})

    def inv_matvec(x):
        return lu.solve(np.ascontiguousarray(deflate(x)))

    op = LinearOperator((n, n), matvec=inv_matvec, matmat=inv_matvec, dtype=np.float64)
    rng = np.random.default_rng(random_state)
    v0 = deflate(rng.standard_normal(n))[:, 0]
    ncv = min(n, max(2 * k + 1, k + 40))
    theta, U = eigsh(op, k=k, which="LA", v0=v0, ncv=ncv, tol=1e-10)
    mu = 1.0 - (1.0 / theta - sigma)
    order = np.argsort(-mu, kind="stable")
    return mu[order], U[:, order]


def spectral_features(adjacency, k, kind="pinv", *, alpha=0.99, random_state=0, blas_threads=1):
    """Node features from the spectrum of the normalised graph: an (n_nodes, k) array.

    The k leading non-trivial eigenpairs (mu_j, u_j) of S = D^{-1/2} W D^{-1/2} (equivalently
    the k smallest non-zero eigenvalues lambda_j = 1 - mu_j of the normalised Laplacian L) give,
    column j of the result:

    ``kind='pinv'`` (default)
        u_j / sqrt(1 - mu_j): the rank-k part of L^+ (the graph Perceptron's kernel, Herbster
        & Pontil 2006, here of the normalised Laplacian); the constant they add is the
        learner's intercept.
    ``kind='lgc'``
        u_j / sqrt(1 - alpha mu_j): the rank-k part of the local-and-global-consistency kernel
        (I - alpha S)^{-1} (Zhou et al. 2004), i.e. <x_a, x_b> approximates that kernel.
    ``kind='laplacian'``
        u_j: the Laplacian eigenmap (Belkin & Niyogi 2003).

    'pinv' is the default because it was the most predictive of the three in our runs (online
    error of WeightedMinMax on unit-norm rows, k = 100, 3 node orders: cora 23.6% against 23.9%
    for 'lgc' and 24.6% for 'laplacian'; citeseer 48.7 / 49.9 / 50.7%; docs/graph.md).

    Disconnected graphs and isolated nodes: see the module docstring (the one trivial
    eigenvector per component is projected out; the columns are the leading non-trivial ones
    over all components together).

    Cost: one sparse LU of L + 1e-3 I (symmetric minimum-degree order; its fill decides the
    memory) and Lanczos (scipy ``eigsh``, ARPACK) in shift-invert mode on the deflated
    operator, about O(k) triangular solves per restart and O(n k) memory; graphs of at most
    1000 nodes (or k >= n/3) use a dense O(n^3) eigendecomposition instead.  Pubmed (19717
    nodes, 44324 edges), k = 100: seconds (measured in docs/graph.md).

    Parameters
    ----------
    adjacency : sparse or dense (n, n) symmetric non-negative matrix
    k : int, 1 <= k <= n - (number of components)
    kind : {'pinv', 'lgc', 'laplacian'}
    alpha : float in (0, 1), default=0.99
        The LGC kernel's alpha (``kind='lgc'`` only).
    random_state : int, default=0
        Seed of the eigensolver's start vector (results are deterministic for a given seed).
    blas_threads : int or None, default=1
        Size of the BLAS thread pool while the eigensolver runs (None: unchanged).  ARPACK's
        products with n x (2k) blocks gain little from threads, and on a busy 2-core machine
        the default pool made pubmed 9 times slower (93 s against 11 s).  (threadpoolctl,
        a dependency of scikit-learn.)

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from onlinelearn.graph import spectral_features
    >>> ring = sp.diags([np.ones(7), np.ones(7)], [1, -1], shape=(8, 8)).tolil()
    >>> ring[0, 7] = ring[7, 0] = 1
    >>> F = spectral_features(ring, 2, kind="laplacian")
    >>> F.shape, bool(np.allclose(F.T @ F, np.eye(2)))
    ((8, 2), True)
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    W = check_adjacency(adjacency)
    S, deg = normalized_adjacency(W)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=blas_threads, user_api="blas"):
        mu, U = _leading_nontrivial(S, deg, int(k), random_state)
    # a deterministic sign: the largest-magnitude entry of each column is positive
    idx = np.argmax(np.abs(U), axis=0)
    U = U * np.sign(U[idx, np.arange(U.shape[1])])
    if kind == "laplacian":
        return np.ascontiguousarray(U)
    if kind == "lgc":
        scale = 1.0 / np.sqrt(1.0 - alpha * mu)
    else:
        lam = np.maximum(1.0 - mu, 1e-12)
        scale = 1.0 / np.sqrt(lam)
    return np.ascontiguousarray(U * scale)


def laplacian_pinv(adjacency, *, max_nodes=12000):
    """The pseudo-inverse L^+ of the combinatorial Laplacian L = D - W, as a dense array.

    Computed per connected component c (L is block-diagonal): L_c^+ = (L_c + J_c / n_c)^{-1}
    - J_c / n_c with J_c the all-ones block (exact for a connected block; Cholesky, O(n_c^3)).
    Entries between components are 0; an isolated node gets 0.  Memory O(n^2): refused above
    ``max_nodes`` nodes (use :func:`spectral_features` with ``kind='pinv'``, a low-rank L^+).
    """
    W = check_adjacency(adjacency)
    n = W.shape[0]
    if n > max_nodes:
        raise ValueError(
            f"laplacian_pinv is dense: {n} nodes exceed max_nodes = {max_nodes}; use "
            "spectral_features(adjacency, k, kind='pinv') for a low-rank L^+"
        )
    n_comp, labels = csgraph.connected_components(W, directed=False)
    L = csgraph.laplacian(W).tocsr()
    out = np.zeros((n, n))
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(n_comp + 1))
    for c in range(n_comp):
        nodes = order[bounds[c] : bounds[c + 1]]
        m = nodes.size
        if m == 1:
            continue
        Lc = L[nodes][:, nodes].toarray() + 1.0 / m
        from scipy.linalg import cho_factor, cho_solve

        inv = cho_solve(cho_factor(Lc), np.eye(m)) - 1.0 / m
        out[np.ix_(nodes, nodes)] = 0.5 * (inv + inv.T)
    return out
