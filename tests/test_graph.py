"""onlinelearn.graph: spectral features against dense eigendecompositions, L^+ against
numpy's pseudo-inverse, disconnected graphs and isolated nodes, bad adjacencies, loaders, the
graph Perceptron against a direct kernel Perceptron, and the graph-nodes experiment."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_file

from onlinelearn.graph import (
    GraphData,
    GraphPerceptron,
    check_adjacency,
    laplacian_pinv,
    load_edge_list,
    spectral_features,
)


def _random_graph(n, p, seed, isolated=(), extra_components=0):
    """An Erdos-Renyi graph plus ``extra_components`` small paths and isolated nodes."""
    rng = np.random.default_rng(seed)
    W = (rng.random((n, n)) < p).astype(float) * rng.uniform(0.5, 2.0, (n, n))
    W = np.triu(W, 1)
    W = W + W.T
    blocks = [W]
    for c in range(extra_components):
        m = 3 + c
        P = np.diag(np.ones(m - 1), 1)
        blocks.append(P + P.T)
    blocks.extend(np.zeros((1, 1)) for _ in isolated)
    from scipy.linalg import block_diag

    return block_diag(*blocks)


def _dense_normalized(W):
    deg = W.sum(axis=1)
    inv = np.where(deg > 0, 1 / np.sqrt(np.where(deg > 0, deg, 1)), 0.0)
    S = inv[:, None] * W * inv[None, :]
    L = np.diag((deg > 0).astype(float)) - S
    return S, L, deg


def _trivial(W):
    """Orthonormal basis of the trivial eigenvectors D^{1/2} 1_c (one per component)."""
    from scipy.sparse.csgraph import connected_components

    n_c, lab = connected_components(sp.csr_matrix(W), directed=False)
    deg = W.sum(axis=1)
    P = np.zeros((W.shape[0], n_c))
    for c in range(n_c):
        v = np.where(lab == c, np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)
        P[:, c] = v / np.linalg.norm(v)
    return P


@pytest.mark.parametrize("n,seed", [(40, 0), (1300, 1)])
def test_laplacian_kind_spans_the_leading_nontrivial_eigenvectors(n, seed):
    """Both paths (dense for small graphs, shift-invert Lanczos above 1000 nodes): the columns
    are orthonormal eigenvectors of S with the k largest non-trivial eigenvalues."""
    W = _random_graph(n, 8.0 / n, seed, isolated=(1,), extra_components=2)
    S, _, _ = _dense_normalized(W)
    P = _trivial(W)
    k = 6
    F = spectral_features(sp.csr_matrix(W), k, kind="laplacian")
    assert F.shape == (W.shape[0], k)
    np.testing.assert_allclose(F.T @ F, np.eye(k), atol=1e-8)
    assert np.abs(P.T @ F).max() < 1e-8  # orthogonal to every component indicator
    Q = np.eye(W.shape[0]) - P @ P.T
    mu_all = np.sort(np.linalg.eigvalsh(Q @ S @ Q))[::-1]
    mu = np.einsum("ij,ij->j", F, S @ F)
    np.testing.assert_allclose(S @ F, F * mu, atol=1e-7)  # eigenvectors
    # the k largest of the deflated spectrum (the trivial ones became 0)
    np.testing.assert_allclose(np.sort(mu)[::-1], mu_all[:k], atol=1e-8)


def test_full_rank_pinv_and_lgc_features_reproduce_the_kernels():
    """With every non-trivial eigenvector (k = n - components), F F' is exactly L^+ of the
    normalised Laplacian ('pinv') and (I - alpha S)^{-1} minus its trivial part ('lgc')."""
    W = _random_graph(25, 0.25, 3, isolated=(1, 2), extra_components=1)
    n = W.shape[0]
    S, L, _ = _dense_normalized(W)
    P = _trivial(W)
    k = n - P.shape[1]
    F = spectral_features(W, k, kind="pinv")
    np.testing.assert_allclose(F @ F.T, np.linalg.pinv(L, rcond=1e-10), atol=1e-8)
    alpha = 0.9
    G = spectral_features(W, k, kind="lgc", alpha=alpha)
    Q = np.eye(n) - P @ P.T
    np.testing.assert_allclose(G @ G.T, Q @ np.linalg.inv(np.eye(n) - alpha * S) @ Q, atol=1e-8)
    # isolated nodes: zero rows
    assert np.all(F[-2:] == 0) and np.all(G[-2:] == 0)


def test_spectral_features_default_kind_and_determinism():
    W = sp.csr_matrix(_random_graph(60, 0.1, 5))
    a = spectral_features(W, 5)
    np.testing.assert_array_equal(a, spectral_features(W, 5, kind="pinv"))
    np.testing.assert_array_equal(a, spectral_features(W, 5))
    with pytest.raises(ValueError, match="kind"):
        spectral_features(W, 5, kind="heat")
    with pytest.raises(ValueError, match="non-trivial"):
        spectral_features(W, 60)
    with pytest.raises(ValueError, match="positive integer"):
        spectral_features(W, 0)


def test_laplacian_pinv_is_the_pseudo_inverse():
    W = _random_graph(30, 0.2, 2, isolated=(1,), extra_components=2)
    L = np.diag(W.sum(axis=1)) - W
    np.testing.assert_allclose(laplacian_pinv(sp.csr_matrix(W)), np.linalg.pinv(L), atol=1e-9)
    with pytest.raises(ValueError, match="max_nodes"):
        laplacian_pinv(W, max_nodes=10)


@pytest.mark.parametrize(
    "bad,match",
    [
        (np.ones((3, 4)), "square"),
        (np.array([[0, 1.0], [0, 0]]), "symmetric"),
        (np.array([[0, -1.0], [-1, 0]]), "negative"),
        (np.array([[0, np.nan], [np.nan, 0]]), "NaN"),
        (np.zeros((0, 0)), "no nodes"),
    ],
)
def test_bad_adjacency_is_refused_and_not_changed(bad, match):
    before = np.array(bad, copy=True)
    with pytest.raises(ValueError, match=match):
        check_adjacency(sp.csr_matrix(bad) if bad.size and bad.shape[0] == bad.shape[1] else bad)
    with pytest.raises(ValueError, match=match):
        spectral_features(bad, 1)
    np.testing.assert_array_equal(bad, before)


def test_graph_perceptron_equals_direct_kernel_perceptron():
    W = _random_graph(50, 0.1, 4, extra_components=1)
    n = W.shape[0]
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, n) * 10
    order = rng.permutation(n)
    gp = GraphPerceptron.from_adjacency(W)
    pred = np.concatenate([gp.partial_fit_predict(order[:20], y[order[:20]]),
                           gp.partial_fit_predict(order[20:], y[order[20:]])])  # fmt: skip
    K = np.linalg.pinv(np.diag(W.sum(axis=1)) - W) + 1.0
    classes = np.unique(y)
    alpha = np.zeros((n, 3))
    ref = []
    for i in order:
        f = alpha.T @ K[:, i]
        p = int(np.argmax(f))
        ref.append(classes[p])
        c = np.searchsorted(classes, y[i])
        if p != c:
            alpha[i, c] += 1
            alpha[i, p] -= 1
    np.testing.assert_array_equal(pred, ref)
    assert gp.n_mistakes_ == int((np.array(ref) != y[order]).sum())
    np.testing.assert_allclose(gp.decision_function(order), (alpha.T @ K[:, order]).T, atol=1e-9)
    with pytest.raises(ValueError, match="node ids"):
        gp.partial_fit_predict([n], [0])


def test_edge_list_loader(tmp_path):
    (tmp_path / "e.txt").write_text("# a comment\n0 1\n1 2 2.5\n2 2\n4 3\n")
    (tmp_path / "l.txt").write_text("0 1\n1 0\n3 1\n")
    g = load_edge_list(tmp_path / "e.txt", tmp_path / "l.txt", n_nodes=6)
    assert isinstance(g, GraphData) and g.n_nodes == 6
    A = g.adjacency.toarray()
    assert A[1, 2] == A[2, 1] == 2.5 and A[2, 2] == 0 and A[3, 4] == 1
    np.testing.assert_array_equal(g.labels, [1, 0, -1, 1, -1, -1])
    np.testing.assert_array_equal(g.labelled(), [0, 1, 3])
    (tmp_path / "m.txt").write_text("0 1,3\n2 0\n")
    gm = load_edge_list(tmp_path / "e.txt", tmp_path / "m.txt", multilabel=True)
    assert gm.labels.shape == (5, 4) and gm.labels[0, 3] == 1
    (tmp_path / "bad.txt").write_text("0 9\n")
    with pytest.raises(ValueError, match="out of range"):
        load_edge_list(tmp_path / "bad.txt", n_nodes=5)
    (tmp_path / "neg.txt").write_text("0 1 -1\n")
    with pytest.raises(ValueError, match=">= 0"):
        load_edge_list(tmp_path / "neg.txt")


def test_cora_loader():
    require_shared_file("cora/cora.edges.xz")
    from onlinelearn.graph import load_cora

    g = load_cora()
    assert g.n_nodes == 2708 and g.adjacency.nnz == 2 * 5278
    assert g.features.shape == (2708, 1433)
    assert set(np.unique(g.labels)) == set(range(7))


def test_citeseer_and_pubmed_loaders():
    require_shared_file("citeseer/citeseer.edges.xz")
    require_shared_file("pubmed/pubmed.edges.xz")
    from onlinelearn.graph import load_citeseer, load_pubmed

    c = load_citeseer(features=False)
    assert c.n_nodes == 3327 and len(c.labelled()) == 3312
    p = load_pubmed()
    assert p.n_nodes == 19717 and len(p.labelled()) == 19717 and p.features is None


def test_blogcatalog_loader():
    require_shared_file("blogcatalog/blogcatalog.edges.xz")
    from onlinelearn.graph import load_blogcatalog

    g = load_blogcatalog()
    assert g.adjacency.shape == (10312, 10312) and g.adjacency.nnz == 2 * 333983
    assert g.labels.shape == (10312, 39)
    assert int((np.diff(g.labels.indptr) > 1).sum()) == 2852


def test_graph_nodes_experiment_on_a_planted_partition():
    """The experiment end to end on a small planted-partition graph: every learner runs, the
    bounds hold on every run, the table and the claims table are produced."""
    from onlinelearn.experiments.graph_nodes import run_graph_nodes

    rng = np.random.default_rng(0)
    n, K = 150, 3
    y = rng.integers(0, K, n)
    p = np.where(y[:, None] == y[None, :], 0.12, 0.01)
    A = np.triu(rng.random((n, n)) < p, 1).astype(float)
    A = sp.csr_matrix(A + A.T)
    feats = sp.csr_matrix(np.eye(K)[y] + 0.5 * rng.random((n, K)))
    g = GraphData(A, y, feats, "planted")
    res = run_graph_nodes(
        ["planted"], n_orders=2, k=8, query_c=(0.1,), graphs={"planted": g}, random_state=1
    )
    assert [s.features for s in res.settings] == ["graph", "graph+words"]
    assert res.all_bounds_hold()
    s = res.settings[0]
    assert len(s.bounds) == 4  # fixed and adaptive, 2 orders
    assert {"minmax fixed", "minmax adaptive", "AROW", "SCW-I", "PA-I", "graph Perceptron"} <= set(
        s.curves
    )
    for c in s.curves.values():
        assert c.errors.shape == (2, len(s.checkpoints)) and np.all(c.errors <= 1)
    assert s.curves["minmax fixed, query c=0.1"].queries.mean() < 1.0
    assert "LabelSpreading" in res.format_table()
    assert "Theorem 1" in res.format_claims()


def test_reproduce_graph_nodes_is_registered(capsys):
    from onlinelearn.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "graph-nodes", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--quick" in out and "--query-c" in out and "Lemma 1" in out
    code = main(["reproduce", "graph-nodes", "--query-c", "0", "-q"])
    assert code != 0
    assert "--query-c" in capsys.readouterr().err
