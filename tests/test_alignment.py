"""Alignment (thesis ch. 9): the compiled feature map against a plain NumPy psi, the dynamic
program of Fig. 9.1 (plain and loss-augmented) against enumeration of every admissible timing,
learning on the generated task, and bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from onlinelearn._core import alignment as A
from onlinelearn.structured import Aligner, make_alignment
from onlinelearn.structured.alignment import _check_input


def psi_ref(X, G, ev, mu, sigma, i, tpp, tp, t):
    T = X.shape[0]
    c = lambda s: min(max(s, 0), T - 1)  # noqa: E731
    out = [float(np.linalg.norm(X[c(tp - j)] - X[c(tp + j - 1)])) for j in range(1, 5)]
    out.append(float(G[tp:t, ev[i]].sum()))
    dur, m, s = t - tp, mu[ev[i]], sigma[ev[i]]
    out.append(-0.5 * ((dur - m) / s) ** 2 - math.log(s * math.sqrt(2 * math.pi)))
    out.append(0.0 if tpp < 0 else -(((t - tp) / m - (tp - tpp) / mu[ev[i - 1]]) ** 2))
    return np.array(out)


def phi_ref(X, G, ev, mu, sigma, y):
    K, T = len(ev), X.shape[0]
    return sum(
        psi_ref(X, G, ev, mu, sigma, i, y[i - 1] if i else -1, y[i], y[i + 1] if i + 1 < K else T)
        for i in range(K)
    )


def admissible(T, K, L):
    """Every timing 0 <= y_1 < L, 1 <= y_(i+1) - y_i <= L, y_(K+1) = T."""
    for y in itertools.combinations(range(T), K):
        dur = np.diff(np.append(y, T))
        if y[0] < L and dur.min() >= 1 and dur.max() <= L:
            yield np.array(y)


def _instance(rng):
    T = int(rng.integers(3, 10))
    K = int(rng.integers(1, 4))
    L = int(rng.integers(2, 5))
    X = rng.normal(size=(T, 2))
    G = rng.normal(size=(T, 3))
    ev = rng.integers(0, 3, size=K)
    mu = rng.uniform(1, 4, size=3)
    sigma = rng.uniform(0.5, 2, size=3)
    return T, K, L, X, G, ev, mu, sigma


def test_feature_map_equals_numpy_psi():
    rng = np.random.default_rng(0)
    for _ in range(30):
        T, K, L, X, G, ev, mu, sigma = _instance(rng)
        _, _, Gcum = _check_input((X, ev, G))
        for y in itertools.islice(admissible(T, K, L), 5):
            out = np.empty(7)
            A.feature_vector(X, Gcum, ev, mu, sigma, y, out)
            np.testing.assert_allclose(out, phi_ref(X, G, ev, mu, sigma, y), atol=1e-12)


def _total(y, w, X, G, ev, mu, sigma, truth, eps, scale):
    """<w, phi(y)> + rho(truth, y) (scale = 0: no cost term)."""
    return w @ phi_ref(X, G, ev, mu, sigma, y) + scale * np.mean(np.abs(y - truth) > eps)


@pytest.mark.parametrize("augmented", [False, True])
def test_dp_equals_brute_force(augmented):
    rng = np.random.default_rng(1 + augmented)
    n_checked = 0
    for _ in range(60):
        T, K, L, X, G, ev, mu, sigma = _instance(rng)
        w = rng.normal(size=7)
        cands = list(admissible(T, K, L))
        _, _, Gcum = _check_input((X, ev, G))
        truth = cands[rng.integers(len(cands))] if cands else np.zeros(K, np.int64)
        eps, scale = int(rng.integers(0, 2)), 10.0 if augmented else 0.0
        out = np.empty(K, dtype=np.int64)
        got = A.align(w, X, Gcum, ev, mu, sigma, L, truth, eps, scale, out)
        if not cands:
            assert got == -np.inf
            continue

        args = (w, X, G, ev, mu, sigma, truth, eps, scale)
        best = max(_total(y, *args) for y in cands)
        assert got == pytest.approx(best, abs=1e-9)
        assert _total(out, *args) == pytest.approx(best, abs=1e-9)  # the timing attains it
        n_checked += 1
    assert n_checked >= 30


def test_learning_on_the_generated_task():
    """Not the thesis's data: the documented generator of make_alignment.  The learnt
    combination beats every single feature (measured: see docs/structured.md)."""
    Xtr, ytr = make_alignment(60, random_state=0)
    Xte, yte = make_alignment(40, random_state=1)
    al = Aligner(update="self-tuned", average=True, n_epochs=1, random_state=0).fit(Xtr, ytr)
    learnt = al.mean_cost(Xte, yte)
    single = []
    for k in range(7):
        w = np.zeros(7)
        w[k] = 1.0
        single.append(np.mean([al.cost(y, al.argmax(w, x)) for x, y in zip(Xte, yte, strict=True)]))
    assert learnt < 0.5 * min(single), (learnt, single)
    assert al.score(Xte, yte) > 0.85


def test_bad_input():
    X, Y = make_alignment(5, random_state=0)
    al = Aligner(random_state=0).fit(X, Y)
    w, mu = al.coef_.copy(), al.mu_.copy()
    bad = [Y[0] + 100] + Y[1:]
    with pytest.raises(ValueError, match="outside"):  # a start beyond the frames
        al.fit(X, bad)
    frames, ev, G = X[0]
    with pytest.raises(ValueError, match="cannot fit"):
        al.predict([(frames[:2], ev, G[:2])])
    with pytest.raises(ValueError, match="one row per frame"):
        al.predict([(frames, ev, G[:-1])])
    with pytest.raises(ValueError, match="event codes"):
        al.predict([(frames, ev + 100, G)])
    with pytest.raises(ValueError, match="starts for"):
        al.fit(X, [Y[0][:-1]] + Y[1:])
    np.testing.assert_array_equal(al.coef_, w)
    np.testing.assert_array_equal(al.mu_, mu)
    assert al.n_types_ == 6
