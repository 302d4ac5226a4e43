"""onlinelearn.bounds.report for SequenceTagger(update='self-tuned'): thesis Theorem 7.

Every term is recomputed here: the online predictions (the tagger's own predict before each
round, average=False), their Hamming cost, X = max ||phi(x, y) - phi(x, y')|| over the
predictions made, Loss(u) by enumerating every labelling of the (short) sequences, the curve
L + X sqrt(8 U L) + 8 X^2 U, ||u|| <= sqrt(2U); observed <= bound at every prefix."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn import bounds
from onlinelearn.structured import SequenceTagger


def _phi(x, y, K):
    W = np.zeros((x.shape[1], K))
    Tr = np.zeros((K + 1, K))
    prev = K
    for i, k in enumerate(y):
        W[:, k] += x[i]
        Tr[prev, k] += 1.0
        prev = k
    return np.concatenate([W.ravel(), Tr.ravel()])


def _stream(seed, n_seq=40, d=4, K=3):
    rng = np.random.default_rng(seed)
    Wt = rng.normal(size=(d, K))
    Xs, ys = [], []
    for _ in range(n_seq):
        x = rng.normal(size=(int(rng.integers(1, 5)), d))
        y = np.argmax(x @ Wt + rng.normal(scale=0.7, size=(x.shape[0], K)), axis=1)
        Xs.append(sp.csr_matrix(x) if seed % 2 else x)
        ys.append(np.array(list("abcd"))[y])
    return Xs, ys


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("U", [0.5, 4.0])
def test_theorem_7(seed, U):
    Xs, ys = _stream(seed)
    r = bounds.report(SequenceTagger(update="self-tuned", U=U), Xs, ys, show=False)
    classes = np.unique(np.concatenate(ys))
    K = len(classes)
    dense = [x.toarray() if sp.issparse(x) else x for x in Xs]
    codes = [np.searchsorted(classes, y) for y in ys]
    e = SequenceTagger(update="self-tuned", U=U, average=False)
    cost, X = [], []
    xmax = 0.0
    for t in range(len(ys)):
        if t:
            pred = np.searchsorted(classes, e.predict([Xs[t]])[0])
            rho = int(np.sum(pred != codes[t]))
            if rho:
                a = _phi(dense[t], codes[t], K) - _phi(dense[t], pred, K)
                xmax = max(xmax, float(np.linalg.norm(a)))
            cost.append(rho)
        else:  # theta_1 = 0: every labelling ties; round 1's cost and ||a_1|| are the run's
            cost.append(int(r["curve_observed"][0]))
            assert 0 <= cost[0] <= len(ys[0])
        e.partial_fit([Xs[t]], [ys[t]], classes=classes)
        if t == 0:
            from onlinelearn._core.structured import X_MAX

            xmax = float(e._st[X_MAX])
        X.append(xmax)
    np.testing.assert_array_equal(r["curve_observed"], np.cumsum(cost))
    assert r["observed"] == sum(cost)
    Wu, Tru = r["comparator"]
    u = np.concatenate([Wu.ravel(), Tru.ravel()])
    assert np.linalg.norm(u) <= np.sqrt(2 * U) * (1 + 1e-12)
    L = []
    for x, y in zip(dense, codes, strict=True):
        best = 0.0
        py = _phi(x, y, K)
        for yp in itertools.product(range(K), repeat=len(y)):
            rho = float(np.sum(np.array(yp) != y))
            best = max(best, rho - u @ (py - _phi(x, np.array(yp), K)))
        L.append(best)
    L = np.cumsum(L)
    assert r["loss_comparator"] == pytest.approx(L[-1], rel=1e-9, abs=1e-9)
    Xr = r["X"]
    assert Xr == pytest.approx(X[-1], rel=1e-12)
    curve = L + Xr * np.sqrt(8 * U * L) + 8 * Xr * Xr * U
    assert r["bound"] == pytest.approx(curve[-1], rel=1e-9)
    assert (r["curve_observed"] <= r["curve_bound"] + 1e-9).all()
    assert r["observed"] > 0


@pytest.mark.parametrize("update", ["PA", "perceptron"])
def test_refused(update):
    Xs, ys = _stream(0, n_seq=5)
    with pytest.raises(NotImplementedError, match="self-tuned"):
        bounds.report(SequenceTagger(update=update), Xs, ys, show=False)


def test_bound_bites_on_a_separable_stream():
    """Tags readable from the token (one-hot plus small noise), U = 8: the bound ends below the
    number of tokens, so observed <= bound is not implied by the cost's trivial maximum."""
    rng = np.random.default_rng(0)
    Xs, ys = [], []
    for _ in range(600):
        y = rng.integers(0, 3, 3)
        Xs.append(np.eye(3)[y] + 0.05 * rng.normal(size=(3, 3)))
        ys.append(y)
    r = bounds.report(SequenceTagger(update="self-tuned", U=8.0), Xs, ys, show=False)
    assert (r["curve_observed"] <= r["curve_bound"] + 1e-9).all()
    assert r["bound"] < sum(len(y) for y in ys)
