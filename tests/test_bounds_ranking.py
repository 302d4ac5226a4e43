"""bounds.report for LabelRanker: thesis Lemma 1 with Lemma 18 (Sec. 8.3), module
:mod:`onlinelearn.bounds.ranking`; every term recomputed here from the definitions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from _data import require_shared_file

from onlinelearn import LabelRanker, bounds


def _pair_hinge(s, y, gamma):
    """(8.1) by enumerating the pairs r in Y, s not in Y."""
    rel = [r for r in range(len(y)) if y[r]]
    irr = [r for r in range(len(y)) if not y[r]]
    return max((max(0.0, gamma - (s[r] - s[q])) for r, q in itertools.product(rel, irr)),
               default=0.0)  # fmt: skip


def _independent(est_params, X, Y, U):
    """The run row by row and the terms of the bound, from coef_ / intercept_ and loops."""
    est = LabelRanker(**est_params)
    n, K = Y.shape
    gamma = est.margin
    entropy = est.complexity == "entropy"
    C = est._configuration()[2]
    C = C.eta if est.update == "I" else C.C
    b = est.intercept_scaling if est.fit_intercept else 0.0
    Xa = np.hstack([X, np.full((n, 1), b)]) if b else X
    loss, mis = np.zeros(n), np.zeros(n, dtype=bool)
    for t in range(n):
        if t:
            s = X[t] @ est.coef_.T + est.intercept_
        else:
            s = np.zeros(K)
        loss[t] = _pair_hinge(s, Y[t], gamma)
        mis[t] = est.partial_fit_mistakes(X[t : t + 1], Y[t : t + 1],
                                          classes=np.arange(K))[0]  # fmt: skip
    S = mis if est.update == "I" else loss > 0
    xn = np.abs(Xa).max(axis=1) if entropy else np.sqrt((Xa * Xa).sum(axis=1))
    gU = np.array([_pair_hinge(Xa[t] @ U, Y[t], gamma) for t in range(n)])
    if entropy:
        fU = sum(math.log(U.shape[0]) + sum(u * math.log(u) for u in U[:, r] if u > 0)
                 for r in range(K))  # fmt: skip
    else:
        fU = 0.5 * float((U**2).sum())
    bound = np.cumsum(S * gU) + fU / C + C * np.cumsum(S * xn**2)
    return np.cumsum(S * loss), bound, int(mis.sum()), est, fU, C, gU


def _random_stream(rng, n=50, d=4, K=4):
    X = rng.normal(size=(n, d)) if rng.random() < 0.5 else rng.random((n, d))
    Y = (rng.random((n, K)) < 0.4).astype(np.int64)
    Y[0] = 0  # a row with no pair
    Y[1] = 1  # and one with every label relevant
    return X, Y


@pytest.mark.parametrize("complexity", ["euclidean", "entropy"])
@pytest.mark.parametrize("update", ["I", "II", "III"])
def test_random_streams_every_prefix_and_terms(update, complexity):
    rng = np.random.default_rng(["I", "II", "III"].index(update) + 10 * len(complexity))
    for trial in range(3):
        X, Y = _random_stream(rng)
        params = dict(update=update, complexity=complexity, C=float(rng.choice([0.05, 0.5, 3])),
                      margin=float(rng.choice([0.5, 1.0])))  # fmt: skip
        R, K = X.shape[1] + 1, Y.shape[1]
        if trial == 2:  # a given comparator: the bound holds for every U
            U = rng.dirichlet(np.ones(R), size=K).T if complexity == "entropy" \
                else rng.normal(size=(R, K))  # fmt: skip
        else:
            U = None
        r = bounds.report(LabelRanker(**params), X, Y, comparator=U, show=False)
        obs, bound, mis, est, fU, C, gU = _independent(params, X, Y, r["comparator"])
        np.testing.assert_allclose(r["curve_observed"], obs, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(r["curve_bound"], bound, rtol=1e-9, atol=1e-9)
        sf = r["curve_mistake_bound_scale_free"]
        best = bound[-1] / est.margin if sf is None else min(bound[-1] / est.margin, sf[-1])
        assert r["mistakes"] == mis and r["mistake_bound"] == pytest.approx(best)
        assert np.all(r["curve_observed"] <= r["curve_bound"] + 1e-9)
        assert est.margin * mis <= r["curve_observed"][-1] + 1e-9
        assert np.all(r["curve_mistakes"] <= r["curve_mistake_bound"] + 1e-9)
        assert (sf is not None) == (update == "I" and complexity == "euclidean")
        if sf is not None:  # Cor. 5's form: L' + a sqrt(L') + a^2, over all rounds
            U, g = r["comparator"], est.margin
            Xa = np.hstack([X, np.ones((len(X), 1))])
            Lp = np.cumsum(np.array([_pair_hinge(Xa[t] @ U, Y[t], g) for t in range(len(X))]))
            if U is not None and trial == 2:
                a = np.sqrt(2) * np.maximum.accumulate(np.linalg.norm(Xa, axis=1)) \
                    * np.linalg.norm(U) / g  # fmt: skip
                np.testing.assert_allclose(sf, Lp / g + a * np.sqrt(Lp / g) + a * a, rtol=1e-9)
            assert np.all(r["curve_mistakes"] <= sf + 1e-9)
        # the two sides of Lemma 1 and weak duality, at every prefix and at the end
        assert np.all(r["curve_dual_lower"] <= r["curve_dual"] + 1e-9)
        assert np.all(r["curve_dual"] <= r["curve_primal_comparator"] + 1e-9)
        assert r["dual_objective"] == pytest.approx(est.dual_objective_, rel=1e-9, abs=1e-12)
        assert r["dual_objective"] <= r["primal_averaged"] + 1e-9 and r["gap"] >= -1e-9
        assert r["primal_comparator"] == pytest.approx(fU + C * gU.sum(), rel=1e-9)


def test_enron_slice_bound_and_duality():
    from onlinelearn.experiments import label_ranking as LR

    root = require_shared_file("enron_multilabel/enron.train.svm.bz2").parent.parent
    X, Y = LR.load_stream(root, "enron", 200)
    X = X.toarray()
    for params in (dict(update="III"), dict(update="II", complexity="entropy")):
        r = bounds.report(LabelRanker(**params), X, Y, show=False)
        obs, bound, mis, est, *_ = _independent(params, X, Y, r["comparator"])
        np.testing.assert_allclose(r["curve_observed"], obs, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(r["curve_bound"], bound, rtol=1e-9, atol=1e-9)
        assert np.all(r["curve_observed"] <= r["curve_bound"])
        assert r["dual_objective"] <= r["primal_averaged"]
        assert r["dual_objective"] <= r["primal_comparator"]


def test_refusals():
    rng = np.random.default_rng(0)
    X, Y = _random_stream(rng, n=10)
    with pytest.raises(NotImplementedError, match="projected update"):
        bounds.report(LabelRanker(constraint="l1"), X, Y, show=False)
    with pytest.raises(ValueError, match="at least two labels"):
        bounds.report(LabelRanker(), X, np.zeros(10, dtype=int), show=False)
    with pytest.raises(ValueError, match="comparator of shape"):
        bounds.report(LabelRanker(), X, Y, comparator=np.zeros((2, 2)), show=False)
    with pytest.raises(ValueError, match="simplex"):
        bounds.report(LabelRanker(complexity="entropy"), X, Y,
                      comparator=np.ones((X.shape[1] + 1, Y.shape[1])), show=False)  # fmt: skip
    with pytest.raises(ValueError, match="COPA only"):
        bounds.report(LabelRanker(), X, Y, X_test=X, y_test=Y, show=False)


# ---------------------------------------------------------------------- InstanceRanker
def _instance_terms(X, y, qid, u, kind, C, w_run):
    """L_S of the run's losses and the bound, by enumerating each query's pairs."""
    out_g, out_x = [], []
    for q in np.unique(qid):
        idx = np.flatnonzero(qid == q)
        pairs = [(i, j) for i in idx for j in idx if y[i] > y[j]]
        if not pairs:
            out_g.append(0.0)
            out_x.append(0.0)
            continue
        ls = [max(0.0, (y[i] - y[j]) - (X[i] - X[j]) @ u) for i, j in pairs]
        out_g.append(max(ls) if kind == "max" else sum(ls) / len(ls))
        out_x.append(max(float((X[i] - X[j]) @ (X[i] - X[j])) for i, j in pairs))
    return np.array(out_g), np.array(out_x)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("update", ["optimal", "subgradient"])
def test_instance_ranker_bound(kind, update):
    from onlinelearn.bounds.ranking import instance_ranking_report
    from onlinelearn.ranking.instance_ranker import InstanceRanker

    rng = np.random.default_rng(["max", "avg"].index(kind) + 2 * len(update))
    for trial in range(3):
        X = rng.normal(size=(60, 4))
        qid = np.repeat(np.arange(20), 3)
        y = rng.integers(0, 3, 60).astype(float)
        y[:3] = 1.0  # a query without pairs
        C = float(rng.choice([0.1, 1.0, 5.0]))
        u0 = rng.normal(size=4) if trial == 2 else None
        est = InstanceRanker(loss=kind, update=update, C=C)
        r = instance_ranking_report(est, X, y, qid, comparator=u0, show=False)
        run = r["estimator"]
        assert r["observed"] == pytest.approx(run.cumulative_loss_, rel=1e-9)
        gu, xs = _instance_terms(X, y, qid, r["comparator"], kind, C, run.coef_)
        # the rounds S: the run's own losses, from a second run query by query
        again = InstanceRanker(loss=kind, update=update, C=C)
        lw = []
        for q in range(20):
            sl = slice(3 * q, 3 * q + 3)
            w = again.coef_ if q else np.zeros(4)
            lw.append(_instance_terms(X[sl], y[sl], qid[sl], w, kind, C, None)[0][0])
            again.partial_fit(X[sl], y[sl])
        S = np.array(lw) > 0
        bound = np.cumsum(S * gu) + 0.5 * r["comparator"] @ r["comparator"] / C \
            + 0.5 * C * np.cumsum(S * xs)  # fmt: skip
        np.testing.assert_allclose(r["curve_observed"], np.cumsum(S * np.array(lw)), rtol=1e-9,
                                   atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(r["curve_bound"], bound, rtol=1e-9)
        assert np.all(r["curve_observed"] <= r["curve_bound"] + 1e-9)
        assert np.all(r["curve_dual_lower"] <= r["curve_dual"] + 1e-9)
        assert np.all(r["curve_dual"] <= r["curve_primal_comparator"] + 1e-9)
        assert r["dual_objective"] <= r["primal_averaged"] + 1e-9


def test_instance_ranker_refusals():
    from onlinelearn.bounds.ranking import instance_ranking_report
    from onlinelearn.ranking.instance_ranker import InstanceRanker

    X, y = np.ones((6, 2)), np.arange(6.0)
    with pytest.raises(NotImplementedError, match="instance_ranking_report"):
        bounds.report(InstanceRanker(), X, y, show=False)
    with pytest.raises(ValueError, match="needs qid"):
        instance_ranking_report(InstanceRanker(), X, y, show=False)
    with pytest.raises(ValueError, match="comparator of shape"):
        instance_ranking_report(InstanceRanker(), X, y, np.zeros(6), comparator=np.ones(3),
                                show=False)  # fmt: skip
