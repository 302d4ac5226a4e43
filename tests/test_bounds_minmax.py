"""onlinelearn.bounds.report for WeightedMinMax: the note's Lemma 1 / Theorem 1 (difference
labels) and their one-hot form (docs/graph.md), on cora, citeseer and random streams.

Each run is replayed here from its trace (update rounds, a_t) as the ridge regression of the
note, with the encoding's label vectors, so that a violated bound says where it breaks:

1. the replayed f_t give the learner's Delta_t: otherwise the code is wrong (its rounds are not
   the note's);
2. phi_t = 1 - f_t . y_t + ||f_t||^2 / 2 >= 3/4 on the updates with Delta_t <= 0 and >= 1/2 on
   the correct ones (one-hot), or 1 - f_t . y_t >= 1 and >= 1 - sigma_t (difference): otherwise
   our derivation is wrong;
3. sum_Z (phi_t - sigma_t) <= sum_Z a_t (1 - y_t . U' x_t) + 1/2 tr(U' A_Z U) at the report's
   U (the proof's summed identity): otherwise the identity or our reading of it is wrong;
4. then mistakes <= bound at every prefix.
"""

from __future__ import annotations

import numpy as np
import pytest
from _data import require_shared_file

from onlinelearn import WeightedMinMax, bounds
from onlinelearn.second_order.bounds import augmented_rows

SQRT_HALF = np.sqrt(0.5)
ENCODINGS = ["difference", "one-hot"]
MARGINS = ["fixed", "adaptive"]


def _replay_checks(Xa, yc, K, b, r, encoding, where):
    """Steps 1-3 of the module docstring for the run of report ``r``."""
    tr = r["trace"]
    R = Xa.shape[1]
    A, B = b * np.eye(R), np.zeros((R, K))
    phi, sig, lin_y = [], [], []
    for t in range(len(yc)):
        x = Xa[t]
        f = B.T @ np.linalg.solve(A, x)
        others = np.delete(np.arange(K), yc[t])
        rv = others[np.argmax(f[others])]
        delta = (f[yc[t]] - f[rv]) * SQRT_HALF
        assert delta == pytest.approx(tr["delta"][t], rel=1e-7, abs=1e-9), (
            f"{where}: round {t}: the note's ridge gives Delta = {delta:.10g}, the learner "
            f"{tr['delta'][t]:.10g}: a bug in the code (WeightedMinMax), not in the bound"
        )
        if not tr["update"][t]:
            continue
        yt = np.zeros(K)
        if encoding == "one-hot":
            yt[yc[t]] = 1.0
        else:
            yt[yc[t]], yt[rv] = SQRT_HALF, -SQRT_HALF
        a = tr["a"][t]
        s = 0.5 * (a - 1.0)
        p = 1.0 - f @ yt + (0.5 * f @ f if encoding == "one-hot" else 0.0)
        if encoding == "one-hot":
            lo = 0.75 if tr["update"][t] == 1 else 0.5
        else:
            lo = 1.0 if tr["update"][t] == 1 else 1.0 - s
        assert p >= lo - 1e-9, (
            f"{where}: round {t} (update kind {tr['update'][t]}): phi_t = {p:.6g} < {lo:.6g}: "
            "our derivation of the per-round lower bound is wrong (docs/graph.md)"
        )
        phi.append(p)
        sig.append(s)
        lin_y.append((a, x, yt))
        A, B = A + a * np.outer(x, x), B + a * np.outer(x, yt)
    U = r["comparator"]
    lhs = float(np.sum(phi) - np.sum(sig))
    rhs = sum(a * (1.0 - yt @ (U.T @ x)) for a, x, yt in lin_y) + 0.5 * np.trace(U.T @ A @ U)
    assert lhs <= rhs + 1e-7 * max(1.0, abs(rhs)), (
        f"{where}: sum_Z (phi_t - sigma_t) = {lhs:.8g} > {rhs:.8g}: the proof's summed identity "
        "fails at the report's U (the code's a_t or our reading of the identity)"
    )


def _run(X, y, encoding, margin, where, b="auto"):
    est = WeightedMinMax(margin=margin, label_encoding=encoding, b=b)
    r = bounds.report(est, X, y, show=False)
    fitted = r["estimator"]
    classes = fitted.classes_
    yc = np.searchsorted(classes, y)
    Xa = augmented_rows(X, True)
    _replay_checks(Xa, yc, len(classes), float(fitted.b_), r, encoding, where)
    obs, bnd = r["curve_observed"], r["curve_bound"]
    bad = np.flatnonzero(obs > bnd + 1e-9)
    assert bad.size == 0, (
        f"{where}: {r['theorem']} violated at round {bad[0] + 1}: {obs[bad[0]]:.0f} mistakes "
        f"> bound {bnd[bad[0]]:.6g}; the replay checks passed, so the step from the summed "
        "identity to the bound (the log-det step or the constants) is wrong"
    )
    assert r["observed"] <= r["M"] <= r["bound"]
    assert r["bound_exact_sigma"] <= r["bound"] + 1e-9  # sum sigma_t <= c log|A_Z / b|
    assert r["bound"] == pytest.approx(bnd[-1], rel=1e-9)
    return r


def _graph(name, n=500):
    require_shared_file(f"{name}/{name}.edges.xz")
    from onlinelearn.experiments.graph_nodes import node_features
    from onlinelearn.graph import load_citeseer, load_cora

    g = {"cora": load_cora, "citeseer": load_citeseer}[name]()
    nodes = g.labelled()
    X = node_features(g, 16)[nodes]
    y = np.asarray(g.labels)[nodes]
    rows = np.random.default_rng(0).permutation(len(y))[:n]
    return X[rows], y[rows]


@pytest.mark.parametrize("name", ["cora", "citeseer"])
@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("margin", MARGINS)
def test_bound_holds_on_graphs(name, encoding, margin):
    X, y = _graph(name)
    r = _run(X, y, encoding, margin, f"{name}/{encoding}/{margin}")
    assert r["quantity"] == "mistakes"
    assert ("one-hot" in r["theorem"]) == (encoding == "one-hot")


@pytest.mark.parametrize("seed", range(3))
def test_bound_holds_on_random_streams(seed):
    rng = np.random.default_rng(seed)
    K = 2 + seed
    n, d = 150, 5
    centers = rng.normal(size=(K, d)) * 1.5
    y = rng.integers(0, K, n)
    X = centers[y] + 2.0 * rng.normal(size=(n, d))
    X = X / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.3, 1.0, size=(n, 1))
    for encoding in ENCODINGS:
        for margin in MARGINS:
            for b in ("auto", 2.05):  # b close to max ||x||^2 = 2: large a_t
                _run(X, y, encoding, margin, f"seed {seed}/{encoding}/{margin}/b={b}", b=b)


def test_given_comparator_and_refusals():
    X, y = _graph("cora", 200)
    U = np.zeros((X.shape[1] + 1, len(np.unique(y))))
    for enc in ENCODINGS:
        r = bounds.report(WeightedMinMax(label_encoding=enc), X, y, comparator=U, show=False)
        assert r["observed"] <= r["bound"]
    with pytest.raises(NotImplementedError, match="full matrix"):
        bounds.report(WeightedMinMax(covariance="diagonal"), X, y, show=False)
    with pytest.raises(NotImplementedError, match="selective"):
        bounds.report(WeightedMinMax(query="margin"), X, y, show=False)
    with pytest.raises(ValueError, match="COPA only"):
        bounds.report(WeightedMinMax(), X, y, X_test=X, y_test=y, show=False)
