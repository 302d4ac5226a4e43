"""Projected updates of LabelRanker: each update followed by the Sec. 7.1 projection of every
weight vector it changed, checked against the public projections applied by hand."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from onlinelearn import LabelRanker
from onlinelearn.projections import project_entropic, project_l1_ball


def toy(n=60, d=12, K=5, seed=1):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.3).astype(float)
    Y = ((X[:, :K] + (rng.random((n, K)) < 0.1)) > 0).astype(int)
    return X, Y


@pytest.mark.parametrize("update", ["I", "II", "III"])
def test_l1_constraint_is_step_then_projection(update):
    X, Y = toy()
    z = 0.4
    con = LabelRanker(update=update, constraint="l1", radius=z)
    con.partial_fit(X[:1], Y[:1])
    for i in range(1, X.shape[0]):
        free = copy.deepcopy(con).set_params(constraint=None)
        free.partial_fit(X[i : i + 1], Y[i : i + 1])
        expect = free._theta.copy()
        changed = np.flatnonzero(np.any(free._theta != con._theta, axis=0))
        for k in changed:
            expect[:, k] = project_l1_ball(expect[:, k], z)
        con.partial_fit(X[i : i + 1], Y[i : i + 1])
        assert np.allclose(con._theta, expect, atol=1e-12)
        assert np.abs(con._theta).sum(axis=0).max() <= z + 1e-12


@pytest.mark.parametrize("update", ["I", "II", "III"])
def test_floor_constraint_is_step_then_entropic_projection(update):
    X, Y = toy()
    eps = 0.02
    con = LabelRanker(update=update, complexity="entropy", C=1.0, constraint="floor", floor=eps)
    con.partial_fit(X[:1], Y[:1])
    for i in range(1, X.shape[0]):
        free = copy.deepcopy(con).set_params(constraint=None)
        free.partial_fit(X[i : i + 1], Y[i : i + 1])
        W_free = np.exp(free._theta - free._lZ)
        W_before = np.exp(con._theta - con._lZ)
        expect = W_free.copy()
        for k in np.flatnonzero(np.any(np.abs(W_free - W_before) > 0, axis=0)):
            expect[:, k] = project_entropic(W_free[:, k], eps)
        con.partial_fit(X[i : i + 1], Y[i : i + 1])
        W = np.exp(con._theta - con._lZ)
        assert np.allclose(W, expect, atol=1e-10)
        assert W.min() >= eps * (1 - 1e-9)


def test_constraint_validation():
    X, Y = toy()
    with pytest.raises(ValueError, match="euclidean"):
        LabelRanker(complexity="entropy", constraint="l1").fit(X, Y)
    with pytest.raises(ValueError, match="entropy"):
        LabelRanker(constraint="floor").fit(X, Y)
    with pytest.raises(ValueError, match="too large"):
        LabelRanker(complexity="entropy", constraint="floor", floor=0.2).fit(X, Y)
    assert np.isnan(LabelRanker(constraint="l1").fit(X, Y).dual_objective_)
