"""LabelRanker's default C holds on real data: ``C='auto'`` (0.01 for 'euclidean', 0.003 for
'entropy', chosen by ``benchmarks/ranking_defaults.py`` on the nine labelled shared sets,
docs/ranking.md) is within ``TOL`` of the best C of a grid, for update III with both
complexities, on subsamples of two of those sets (the Enron messages, multi-label; the Cora
citation graph's bag of words, single-label); saved models keep the C they were fitted with.

The loss is the online ranking loss of one pass in a fixed random order, scored in batches of 64
rows by the model before each batch, as in the benchmark.  ``TOL`` = 0.02: the benchmark's worst
gap of the Euclidean default over the sets and both metrics is 0.017 (0.0001 and 0.0025 on these
two sets), the entropy's 0.054 (on the dense sets; 0.0001 and 0.0004 here).
"""

from __future__ import annotations

import bz2
import lzma

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from onlinelearn import LabelRanker
from onlinelearn.ranking import metrics as M

TOL = 0.02
GRID = (1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0)


def online_ranking_loss(X, Y, **params):
    est = LabelRanker(update="III", **params)
    K = Y.shape[1]
    total = 0.0
    for i in range(0, X.shape[0], 64):
        Xb, Yb = X[i : i + 64], Y[i : i + 64]
        S = est.decision_function(Xb) if i else np.zeros((Xb.shape[0], K))
        total += M.label_ranking_loss(Yb, S) * Xb.shape[0]
        est.partial_fit(Xb, Yb, classes=np.arange(K))
    return total / X.shape[0]


def _enron():
    from _data import require_shared_file

    from onlinelearn.experiments.message_folders import load_enron_stream

    path = require_shared_file("enron_multilabel/enron.train.svm.bz2")
    X, Y = load_enron_stream(path.parents[1])
    order = np.random.default_rng(0).permutation(1123)[:600]  # training file rows only
    return X[order], Y[order]


def _cora():
    from _data import require_shared_file

    with bz2.open(require_shared_file("cora/cora.features.svm.bz2"), "rb") as f:
        X, y = load_svmlight_file(f, n_features=1433)
    with lzma.open(require_shared_file("cora/cora.split.xz"), "rt") as f:
        rows = (ln.split() for ln in f if not ln.startswith("#"))
        test = {int(v) for p in rows if p and p[0] == "test" for v in p[1:]}
    keep = np.array([i for i in range(X.shape[0]) if y[i] >= 0 and i not in test])
    keep = keep[np.random.default_rng(0).permutation(keep.size)]
    Y = (y[keep, None] == np.arange(7)[None, :]).astype(np.int8)
    return sp.csr_matrix(X)[keep], Y


@pytest.mark.parametrize("data", [_enron, _cora], ids=["enron", "cora"])
@pytest.mark.parametrize("complexity", ["euclidean", "entropy"])
def test_the_default_C_is_within_tol_of_the_best_of_the_grid(data, complexity):
    X, Y = data()
    losses = {C: online_ranking_loss(X, Y, complexity=complexity, C=C) for C in GRID}
    default = online_ranking_loss(X, Y, complexity=complexity)
    best = min(losses.values())
    assert default <= best + TOL, (default, losses)
    if complexity == "euclidean":  # 'auto' is the former default, the same model
        assert default == losses[0.01]
    else:
        assert default == losses[3e-3]


def test_a_saved_model_keeps_its_C(tmp_path):
    """A model fitted with the entropy's former default C = 0.01 (what ``LabelRanker(
    complexity='entropy')`` meant before C='auto') loads with C = 0.01 and predicts as it did;
    a model saved with C='auto' keeps 'auto'."""
    from onlinelearn.model_io import load_model, save_model

    X, Y = _enron()
    old = LabelRanker(complexity="entropy", C=0.01).fit(X[:300], Y[:300])
    new = LabelRanker(complexity="entropy").fit(X[:300], Y[:300])
    assert not np.array_equal(old.decision_function(X[300:]), new.decision_function(X[300:]))
    for est, C in ((old, 0.01), (new, "auto")):
        save_model(est, tmp_path / "m.npz")
        again = load_model(tmp_path / "m.npz")
        assert again.C == C
        np.testing.assert_array_equal(
            again.decision_function(X[300:]), est.decision_function(X[300:])
        )
        again.partial_fit(X[300:310], Y[300:310])
        est.partial_fit(X[300:310], Y[300:310])
        np.testing.assert_array_equal(again.coef_, est.coef_)
