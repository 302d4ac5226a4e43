"""`reproduce graph-nodes` on any graph: the text-file loader (string node ids, labels,
dense / svmlight-style features), its errors with line numbers, the CLI options, the generic
path against the built-in one on the same graph, and the note's remark Z <= M as reported."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_file

from onlinelearn.cli import main
from onlinelearn.experiments.graph_nodes import run_graph_nodes
from onlinelearn.graph import GraphData, GraphFileError, load_graph_files


def _planted(n=120, K=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    p = np.where(y[:, None] == y[None, :], 0.15, 0.01)
    A = np.triu(rng.random((n, n)) < p, 1).astype(float)
    A[np.arange(n - 1), np.arange(1, n)] = 1.0  # a path through all nodes: no isolated node
    A = sp.csr_matrix(A + A.T)
    F = np.eye(K)[y] + 0.5 * rng.random((n, K))
    return GraphData(A, y, sp.csr_matrix(F), "planted")


def _write(g, folder, ids, *, sparse_features=True, shuffle_lines=None):
    """Write g as an edge list, a labels file and a features file, node i named ids[i]."""
    W = sp.triu(g.adjacency).tocoo()
    lines = [f"{ids[u]} {ids[v]}" for u, v in zip(W.row, W.col, strict=True)]
    if shuffle_lines is not None:
        lines = [lines[i] for i in np.random.default_rng(shuffle_lines).permutation(len(lines))]
    (folder / "g.edges").write_text("# edges\n" + "\n".join(lines) + "\n")
    lab = [f"{ids[i]}\tclass-{c}" for i, c in enumerate(g.labels) if c >= 0]
    (folder / "g.labels").write_text("\n".join(lab) + "\n")
    F = g.features.tocsr()
    rows = []
    for i in range(F.shape[0]):
        s, e = F.indptr[i], F.indptr[i + 1]
        if sparse_features:
            pairs = zip(F.indices[s:e], F.data[s:e], strict=True)
            vals = " ".join(f"{j}:{float(v)!r}" for j, v in pairs)
        else:
            vals = " ".join(repr(float(v)) for v in F[i].toarray().ravel())
        rows.append(f"{ids[i]} {vals}")
    (folder / "g.feats").write_text("\n".join(rows) + "\n")
    return folder / "g.edges", folder / "g.labels", folder / "g.feats"


# ---------------------------------------------------------------- the loader
def test_loader_string_ids_weights_labels_and_features(tmp_path):
    (tmp_path / "e").write_text("# c\nb a\na,c,2.5\nc c\n\nd b  # tail\n")
    (tmp_path / "l").write_text("a x\nd y\nc x\n")
    (tmp_path / "f").write_text("a 1 0 2\nb 0 0 0\nd 3 1 4\n")
    g = load_graph_files(tmp_path / "e", tmp_path / "l", tmp_path / "f")
    assert list(g.node_ids) == ["a", "b", "c", "d"] and g.name == "e"
    A = g.adjacency.toarray()
    assert A[0, 1] == A[1, 0] == 1 and A[0, 2] == A[2, 0] == 2.5 and A[2, 2] == 0
    assert A[1, 3] == 1 and A.sum() == 2 * (1 + 2.5 + 1)
    assert list(g.label_names) == ["x", "y"]
    np.testing.assert_array_equal(g.labels, [0, -1, 0, 1])
    expect = [[1, 0, 2], [0, 0, 0], [0, 0, 0], [3, 1, 4]]
    np.testing.assert_array_equal(g.features.toarray(), expect)
    (tmp_path / "fs").write_text("c 0:1.5 4:2\nb 1:-1\n")
    gs = load_graph_files(tmp_path / "e", tmp_path / "l", tmp_path / "fs")
    assert gs.features.shape == (4, 5) and gs.features[2, 4] == 2 and gs.features[1, 1] == -1


def test_integer_ids_are_numbered_numerically_whatever_the_line_order(tmp_path):
    (tmp_path / "e").write_text("10 2\n2 1\n1 10\n")
    (tmp_path / "l").write_text("10 b\n1 a\n")
    g = load_graph_files(tmp_path / "e", tmp_path / "l")
    assert list(g.node_ids) == ["1", "2", "10"]
    np.testing.assert_array_equal(g.labels, [0, -1, 1])


BAD = [
    ("edges", "a b\nc\n", "e:2: expected 'u v'"),
    ("edges", "a b\nc d e f\n", "e:2: expected 'u v'"),
    ("edges", "a b\nc d heavy\n", "e:2: the weight 'heavy'"),
    ("edges", "a b\nc d -1\n", "e:2: weights must be finite"),
    ("edges", "# nothing\n", "no edges"),
    ("labels", "a x\nzz y\n", "l:2: unknown node 'zz'"),
    ("labels", "a x\n\nb y\na y\n", "l:4: node 'a' given twice \\(line 1\\)"),
    ("labels", "a x y\n", "l:1: expected 'node label'"),
    ("features", "a 1 2\nq 3 4\n", "f:2: unknown node 'q'"),
    ("features", "a 1 2\nb 3\n", "f:2: 1 values, the first line had 2"),
    ("features", "a 1 2\nb 0:3\n", "f:2: mixes dense values"),
    ("features", "a 1 x\n", "f:1: not a feature value"),
    ("features", "a 1 inf\n", "f:1: not a feature value"),
    ("features", "a -1:2\n", "f:1: not a feature value"),
]


@pytest.mark.parametrize("which,text,match", BAD)
def test_malformed_files_name_file_and_line(tmp_path, which, text, match):
    files = {"edges": "a b\nb c\nc d\n", "labels": "a x\nb y\n", "features": "a 1 2\n"}
    files[which] = text
    for name, key in (("e", "edges"), ("l", "labels"), ("f", "features")):
        (tmp_path / name).write_text(files[key])
    with pytest.raises(GraphFileError, match=match):
        load_graph_files(tmp_path / "e", tmp_path / "l", tmp_path / "f")
    # the CLI turns it into a clear error (exit code 2 and the same message), no traceback
    argv = ["reproduce", "graph-nodes", "--edges", str(tmp_path / "e"), "--labels"]
    argv += [str(tmp_path / "l"), "--features", str(tmp_path / "f"), "-q"]
    assert main(argv) != 0


def test_cli_option_errors(tmp_path, capsys):
    e, lab, f = _write(_planted(n=30), tmp_path, [f"v{i}" for i in range(30)])
    for argv, match in [
        (["--edges", str(e)], "--edges and --labels go together"),
        (["--features", str(f)], "--features needs --edges"),
        (["--edges", str(e), "--labels", str(lab), "--datasets", "cora"], "not both"),
        (["--edges", str(e), "--labels", str(lab), "--k", "200", "--quick"], "non-trivial"),
        (["--edges", str(tmp_path / "missing"), "--labels", str(lab)], "missing"),
    ]:
        assert main(["reproduce", "graph-nodes", *argv, "-q"]) != 0
        assert match in capsys.readouterr().err


# ---------------------------------------------------------------- the generic path
def test_generic_path_equals_built_in_path_on_the_same_graph(tmp_path):
    """The planted graph given as files (string ids, lines shuffled) runs exactly like the
    in-memory graph: the same mistakes and updates on every order, both encodings."""
    g = _planted()
    ids = [f"node{i:04d}" for i in range(g.n_nodes)]
    e, lab, f = _write(g, tmp_path, ids, shuffle_lines=3)
    gf = load_graph_files(e, lab, f, name="planted")
    kw = dict(n_orders=2, k=8, query_c=(0.2,), random_state=1, learners="minmax",
              label_encoding=("difference", "one-hot"))  # fmt: skip
    ref = run_graph_nodes(["planted"], graphs={"planted": g}, **kw)
    got = run_graph_nodes(["planted"], graphs={"planted": gf}, **kw)
    assert len(ref.settings) == len(got.settings) == 4  # graph / +features x 2 encodings
    for a, b in zip(ref.settings, got.settings, strict=True):
        assert (a.label_encoding, a.dim) == (b.label_encoding, b.dim)
        assert set(a.curves) == set(b.curves)
        for nm in a.curves:
            np.testing.assert_array_equal(a.curves[nm].mistakes, b.curves[nm].mistakes)
            np.testing.assert_array_equal(a.curves[nm].updates, b.curves[nm].updates)
        assert a.z_vs_m == b.z_vs_m


def test_generic_path_on_cora_equals_built_in(tmp_path):
    """cora written out as an edge list (string ids), labels and svmlight-style features, read
    back by the generic loader: the same min-max mistakes as the built-in loader."""
    require_shared_file("cora/cora.edges.xz")
    from onlinelearn.graph import load_cora

    g = load_cora()
    e, lab, f = _write(g, tmp_path, [f"paper{i:05d}" for i in range(g.n_nodes)])
    gf = load_graph_files(e, lab, f, name="cora")
    assert gf.n_nodes == g.n_nodes and (gf.adjacency != g.adjacency).nnz == 0
    assert (gf.features != g.features).nnz == 0
    kw = dict(n_orders=1, k=16, query_c=(), learners="minmax", words=False,
              label_encoding=("difference", "one-hot"))  # fmt: skip
    ref = run_graph_nodes(["cora"], graphs={"cora": g}, **kw)
    got = run_graph_nodes(["cora"], graphs={"cora": gf}, **kw)
    for a, b in zip(ref.settings, got.settings, strict=True):
        for nm in ("minmax fixed", "minmax adaptive"):
            np.testing.assert_array_equal(a.curves[nm].mistakes, b.curves[nm].mistakes)
            assert a.curves[nm].mistakes[0] > 100  # a real run


def test_z_vs_m_is_the_updates_of_the_two_learners_per_order():
    g = _planted(n=150, seed=2)
    res = run_graph_nodes(
        ["planted"], graphs={"planted": g}, n_orders=3, k=8, query_c=(), words=False,
        learners="minmax", label_encoding=("difference", "one-hot"),
    )  # fmt: skip
    for s in res.settings:
        z = [zz for _, zz, _ in s.z_vs_m]
        m = [mm for _, _, mm in s.z_vs_m]
        np.testing.assert_array_equal(z, s.curves["minmax adaptive"].updates)
        np.testing.assert_array_equal(m, s.curves["minmax fixed"].updates)
        # the fixed learner updates on its mistakes and ties only
        assert np.all(s.curves["minmax fixed"].updates >= s.curves["minmax fixed"].mistakes)
        ok, n = s.z_le_m()
        assert n == 3 and ok == sum(a <= b for a, b in zip(z, m, strict=True))
        assert f"Z <= M on {ok} of 3 orders" in res.format_z_vs_m()
    assert res.z_le_m_everywhere() == all(s.z_le_m()[0] == 3 for s in res.settings)
    assert "one-hot" in res.format_encodings() and "not claimed" not in res.format_claims()


def test_graph_nodes_reports_the_one_hot_bound_per_run():
    """With one-hot labels (full A) every order gets the one-hot bound (4/3 factor) of its own
    run, as the difference encoding gets Lemma 1 / Theorem 1: the mistakes it certifies are the
    run's, the right-hand side is at least them, and it is not the difference bound."""
    g = _planted(n=150, seed=2)
    res = run_graph_nodes(
        ["planted"], graphs={"planted": g}, n_orders=3, k=8, query_c=(), words=False,
        learners="minmax", label_encoding=("difference", "one-hot"),
    )  # fmt: skip
    by_enc = {s.label_encoding: s for s in res.settings}
    assert set(by_enc) == {"difference", "one-hot"}
    for enc, s in by_enc.items():
        assert s.covariance == "full"
        assert sorted((m, o) for m, o, _ in s.bounds) == sorted(
            (m, o) for m in ("fixed", "adaptive") for o in range(3)
        ), f"{enc}: one bound per margin and order"
        for margin, o, b in s.bounds:
            mis = s.curves[f"minmax {margin}"].mistakes[o]
            assert b.mistakes == mis, f"{enc} {margin} order {o}: bound's mistakes != run's"
            assert b.rhs >= b.mistakes, f"{enc} {margin} order {o}: bound violated"
    # the one-hot right-hand side is the 4/3 form, not the difference one, on the same order
    for margin, o, b in by_enc["one-hot"].bounds:
        other = [d for m, oo, d in by_enc["difference"].bounds if (m, oo) == (margin, o)][0]
        assert b.rhs != other.rhs
        # its terms recombine into the 4/3 form (bound_terms' one-hot branch)
        D_term = 2.0 / 3.0 * b.D if margin == "adaptive" else 0.0
        want = 4.0 / 3.0 * (b.hinge + b.trace_term + b.c * b.logdet) - D_term
        np.testing.assert_allclose(b.rhs, want, rtol=1e-12)
    claims = res.format_claims()
    one_hot_row = [ln for ln in claims.splitlines() if "| one-hot |" in ln]
    assert one_hot_row and "not claimed" not in one_hot_row[0] and " / " in one_hot_row[0]


def test_cli_generic_graph_with_the_paper_protocol(tmp_path, capsys):
    g = _planted(n=90, seed=4)
    e, lab, f = _write(g, tmp_path, [f"v{i}" for i in range(90)], sparse_features=False)
    argv = ["reproduce", "graph-nodes", "--edges", str(e), "--labels", str(lab)]
    argv += ["--features", str(f), "--orders", "2", "--k", "6", "--protocol", "paper", "-q"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "90 nodes" in out and "3 classes" in out
    assert "label encoding one-hot" in out and "protocol 'paper'" in out
    assert "Z <= M on every run:" in out and "Z - M per order" in out
    assert "PA-I" not in out  # the note's two learners only
    assert "The note reports no figures" in out
