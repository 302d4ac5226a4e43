"""The aggressive steps (PA, PA-I, PA-II) of the entropy and p-norm links solve their one-round
dual problem, thesis eq. (7.9) in the variable tau = alpha / c::

    PA-I   max_{0 <= tau <= C}  gamma tau - f*(theta + tau U)
    PA     the same with C = inf
    PA-II  max_{tau >= 0}       gamma tau - f*(theta + tau U) - tau^2 / (4C)

U = y x in the one column (binary) or x / -x in the columns y / r (r the max-score rival).
The compiled step is compared, on random instances, with three independent answers: scipy's
bounded scalar maximiser on that objective (f* in NumPy: logsumexp, or the p-norm formula), a
brentq root of its derivative on the full weight matrix (tests/reference.py), and for the
entropy link and x in {-1, 0, 1}^n the closed form of eqs. (7.13)-(7.14); and with the KKT
conditions of the problem.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import scipy.sparse as sp
from reference import link_margin, link_weights, reference_link_step
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp

from onlinelearn import PassiveAggressiveClassifier, PNormPerceptron, Winnow
from onlinelearn._core import links as L
from onlinelearn._core import state as ST
from onlinelearn._core import steps as S
from onlinelearn._core.online_loop import recompute_aggregate

STEP_CODE = {"PA": S.PA, "PA-I": S.PA1, "PA-II": S.PA2}
LINK_CODE = {"entropy": L.ENTROPY, "pnorm": L.PNORM}


def fstar(theta, link, p, balanced):
    """The conjugate f* of the link's complexity function (constants dropped)."""
    if link == "entropy":
        v = np.concatenate([theta.ravel(), -theta.ravel()]) if balanced else theta.ravel()
        return float(logsumexp(v))
    return float(np.sum(np.abs(theta) ** p) ** (2.0 / p) / (2.0 * (p - 1.0)))


def dual_objective(tau, theta, U, gamma, step, C, weight, link, p, balanced):
    val = gamma * tau - fstar(theta + tau * U, link, p, balanced)
    if step == "PA-II":
        val -= tau * tau / (4.0 * C * weight)
    return val


def _instance(rng, t):
    """A random round: state theta reached by a few updates, a row x, label, step, C, gamma."""
    link = ["entropy", "pnorm"][t % 2]
    K = [1, 3, 4, 5][(t // 2) % 4]
    step = ["PA", "PA-I", "PA-II"][(t // 8) % 3]
    balanced = bool(rng.random() < 0.7) if link == "entropy" else True
    p = float(rng.choice([2.0, 2.5, 3.0, 6.0, 12.0]))
    b = 1.0 if rng.random() < 0.8 else 0.0
    d = int(rng.integers(1, 9))
    R = d + (1 if b else 0)
    kind = rng.choice(["normal", "ternary", "zero", "large"], p=[0.55, 0.3, 0.05, 0.1])
    scale = 40.0 if kind == "large" else 1.0
    theta = np.zeros((R, K))
    for _ in range(int(rng.integers(0, 6))):
        k = int(rng.integers(K))
        v = rng.normal(size=R) * (rng.random(R) < 0.6)
        theta[:, k] += scale * rng.exponential() * v
    if kind == "ternary":
        x = rng.integers(-1, 2, size=d).astype(float)
    elif kind == "zero":
        x = np.zeros(d)
    else:
        x = rng.normal(size=d) * (rng.random(d) < 0.7)
    y = int(rng.integers(max(K, 2)))
    C = float(10 ** rng.uniform(-4, 4))
    weight = 1.0 if rng.random() < 0.8 else float(rng.uniform(0.1, 3.0))
    gamma = float(rng.uniform(0.0, 2.0)) if link == "pnorm" else float(rng.uniform(0.0, 1.2))
    return dict(link=link, K=K, step=step, balanced=balanced, p=p, b=b, d=d, theta=theta,
                x=x, y=y, C=C, weight=weight, gamma=gamma, dense=bool(rng.random() < 0.4),
                f32=bool(rng.random() < 0.3))  # fmt: skip


def _direction(inst):
    """(U, margin at theta, rival, ysign): the round as the pass sees it."""
    theta, x, y, K, b = inst["theta"], inst["x"], inst["y"], inst["K"], inst["b"]
    xf = np.append(x, b) if b else x.copy()
    W = link_weights(theta, inst["link"], inst["p"], inst["balanced"])
    s = xf @ W
    U = np.zeros_like(theta)
    if K == 1:
        ys = 1.0 if y == 1 else -1.0
        U[:, 0] = ys * xf
        return U, ys * s[0], -1, ys
    r = max((k for k in range(K) if k != y), key=lambda k: s[k])
    U[:, y] = xf
    U[:, r] = -xf
    return U, s[y] - s[r], r, 1.0


def compiled_step(inst, gamma, margin0, r, ysign):
    theta = inst["theta"].copy()
    link = LINK_CODE[inst["link"]]
    st = np.zeros(ST.N_ST)
    if link == L.ENTROPY:
        st[ST.EXP_SHIFT] = np.abs(theta).max() + inst.get("shift", 0.0)
    recompute_aggregate(theta, st, link, inst["p"], inst["balanced"])
    x = inst["x"].astype(np.float32 if inst["f32"] else np.float64)
    if inst["dense"]:
        data, indices = x.copy(), np.arange(x.size, dtype=np.int32)
        indptr = np.array([0, x.size], dtype=np.int64)
    else:
        row = sp.csr_matrix(x[None, :])
        data, indices = row.data, row.indices.astype(np.int32)
        indptr = row.indptr.astype(np.int64)
    nb = 2 * (x.size + 1)
    bufs = (np.empty(nb, np.int64), np.empty(nb, np.int64), np.empty(nb), np.empty(nb))
    loss = max(0.0, gamma - margin0)
    K = theta.shape[1]
    d = inst["d"]
    tau = S.aggressive_link_step(
        STEP_CODE[inst["step"]], link, data, indices, indptr, 0, theta, st,
        0 if K == 1 else inst["y"], -1 if K == 1 else r, ysign, inst["b"], d, gamma, loss,
        inst["C"], inst["weight"], inst["p"], inst["balanced"], *bufs,
    )  # fmt: skip
    np.testing.assert_array_equal(theta, inst["theta"])  # the step does not move theta
    return tau, loss


def _margin_sup(inst, U):
    """sup_tau margin(tau) on the entropy link: max over all (doubled) weights of u."""
    u = U.ravel()
    if inst["balanced"]:
        return np.abs(u).max()
    return u.max()


def _check(inst):
    if inst["f32"]:
        inst["x"] = inst["x"].astype(np.float32).astype(np.float64)
    U, m0, r, ysign = _direction(inst)
    gamma = inst["gamma"]
    link, p, bal = inst["link"], inst["p"], inst["balanced"]
    step, C, wgt = inst["step"], inst["C"], inst["weight"]
    theta = inst["theta"]
    attainable = link == "pnorm" or gamma < _margin_sup(inst, U) or not np.any(U)
    if step == "PA" and not attainable and gamma > m0:
        tau, _ = compiled_step(inst, gamma, m0, r, ysign)
        assert tau == math.inf
        return "unattainable"
    tau, loss = compiled_step(inst, gamma, m0, r, ysign)
    assert math.isfinite(tau) and tau >= 0.0
    # (1) brentq on the derivative, full weight matrix
    ref = reference_link_step(theta, U, gamma, step, C, wgt, link, p, bal) if loss > 0 else 0.0
    np.testing.assert_allclose(tau, ref, rtol=1e-9, atol=1e-14)
    if loss <= 0.0 or not np.any(U):
        assert tau == 0.0
        return "zero"
    # (2) KKT of the one-round problem (tau is a scaled multiplier for PA)
    t_root = tau / wgt if step == "PA" else tau
    mg = link_margin(theta, U, tau, link, p, bal)
    inv2c = 0.5 / (C * wgt) if step == "PA-II" else 0.0
    tol = 1e-9 * (1.0 + abs(gamma) + abs(m0))
    if step == "PA-I" and tau == C * wgt:
        assert mg <= gamma + tol
        kind = "cap"
    else:
        assert abs(gamma - link_margin(theta, U, t_root, link, p, bal) - t_root * inv2c) <= tol
        kind = "interior"
    # (3) scipy's bounded maximiser of the dual objective
    if step == "PA-I":
        hi = C * wgt
    elif step == "PA-II":
        hi = 2.0 * C * wgt * loss
    else:
        hi = 1.0
        while link_margin(theta, U, hi, link, p, bal) < gamma:
            hi *= 2.0
    args = (theta, U, gamma, step, C, 1.0 if step == "PA" else wgt, link, p, bal)
    res = minimize_scalar(lambda t: -dual_objective(t, *args), bounds=(0.0, hi),
                          method="bounded", options={"xatol": 1e-12 * hi})  # fmt: skip
    ours = dual_objective(t_root, *args)
    assert ours >= -res.fun - 1e-11 * (1.0 + abs(res.fun))
    assert abs(t_root - res.x) <= 1e-4 * (1.0 + t_root) + 1e-10 * hi
    # (4) closed form (7.13)-(7.14) for x in {-1, 0, 1}^n on the entropy link (PA, PA-I)
    if link == "entropy" and step != "PA-II" and np.all(np.isin(U, (-1.0, 0.0, 1.0))):
        th, u = theta.ravel(), U.ravel()
        if bal:
            th, u = np.concatenate([th, -th]), np.concatenate([u, -u])
        e = np.exp(th - th.max())
        P, M, O = e[u == 1].sum(), e[u == -1].sum(), e[u == 0].sum()
        cap = C * wgt if step == "PA-I" else math.inf
        if gamma >= 1.0 or P == 0.0:
            closed = cap  # no root: margin < 1 (and < 0 when P = 0) for every tau
        else:
            disc = (gamma * O) ** 2 + 4.0 * (1.0 - gamma**2) * P * M
            beta = (gamma * O + math.sqrt(disc)) / (2.0 * (1.0 - gamma) * P)
            closed = min(max(math.log(beta), 0.0), cap)
        np.testing.assert_allclose(t_root, closed, rtol=1e-9, atol=1e-13)
        kind += "+closed"
    return kind


def test_step_solves_the_one_round_dual():
    rng = np.random.default_rng(20240611)
    kinds = {}
    for t in range(600):
        inst = _instance(rng, t)
        if rng.random() < 0.1:  # the margin is already satisfied
            U, m0, _, _ = _direction(inst)
            inst["gamma"] = max(0.0, m0 - rng.uniform(0.0, 0.5))
        if inst["link"] == "entropy" and rng.random() < 0.3:
            inst["shift"] = float(rng.uniform(-25, 25))  # a stale exp shift, as between reframes
        kind = _check(inst)
        kinds[kind] = kinds.get(kind, 0) + 1
    # every branch of the problem was exercised
    assert kinds.get("zero", 0) >= 20
    assert kinds.get("unattainable", 0) >= 3
    assert sum(v for k, v in kinds.items() if k.startswith("cap")) >= 20
    assert sum(v for k, v in kinds.items() if k.startswith("interior")) >= 100
    assert sum(v for k, v in kinds.items() if k.endswith("closed")) >= 20


@pytest.mark.parametrize("make", [
    lambda: Winnow(step="PA-I", C=0.7, margin=0.3),
    lambda: Winnow(step="PA", margin=0.2, balanced=True, average=True),
    lambda: PNormPerceptron(p=4.0, step="PA-II", C=0.5),
])  # fmt: skip
def test_kkt_after_each_update_of_the_pass(make):
    """Through the estimator: after each updated round the new margin of that round is gamma
    (PA, PA-I below the cap, PA-II with tau / (2C) added), or tau hit the cap C."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 6)) * (rng.random((80, 6)) < 0.6)
    y = rng.integers(0, 3, 80)
    est = make()
    classes = np.unique(y)
    gamma = est.margin
    for i in range(len(y)):
        before = est._theta.copy() if hasattr(est, "_theta") else None
        est.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
        if before is None or np.array_equal(before, est._theta):
            continue
        dth = est._theta - before
        xf = np.append(X[i], 1.0)
        k = int(np.searchsorted(classes, y[i]))
        tau = np.abs(dth[:, k]).max() / np.abs(xf).max()
        W = link_weights(est._theta, "entropy" if isinstance(est, Winnow) else "pnorm",
                         getattr(est, "p", None) or 2.0, True)  # fmt: skip
        s = xf @ W
        r = int(np.flatnonzero(dth[:, np.arange(3) != k].any(axis=0))[0])
        r = r if r < k else r + 1
        mg = s[k] - s[r]
        if est.step == "PA-I" and abs(tau - est.C) <= 1e-12 * est.C:
            assert mg <= gamma + 1e-9
        else:
            extra = tau / (2 * est.C) if est.step == "PA-II" else 0.0
            assert abs(mg + extra - gamma) <= 1e-9


def test_pnorm_p2_is_passive_aggressive():
    """For p = 2 the p-norm link is the identity: the steps are Crammer et al.'s closed forms."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 5))
    for K in (2, 4):
        y = rng.integers(0, K, 120)
        for variant, C in (("PA", 1.0), ("PA-I", 0.05), ("PA-II", 0.3)):
            a = PNormPerceptron(p=2.0, step=variant, C=C, margin=0.8, shuffle=False).fit(X, y)
            b = PassiveAggressiveClassifier(variant=variant, C=C, margin=0.8, shuffle=False,
                                            average=False, n_epochs=5, tol=None)  # fmt: skip
            b.fit(X, y)
            np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-9, atol=1e-12)
            assert a.n_updates_ == b.n_updates_


def test_unattainable_margin_with_pa_raises_and_keeps_the_model():
    """On the simplex margin < ||x||_inf: PA with a larger gamma has no finite step."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(40, 4))
    y = (X[:, 0] > 0).astype(int)
    clf = Winnow(step="PA", margin=0.05, fit_intercept=False).fit(X, y)
    before = copy.deepcopy(clf.__dict__)
    clf.set_params(margin=1.5)
    with pytest.raises(FloatingPointError, match="left as it was"):
        clf.partial_fit(X, y)
    assert np.array_equal(clf._theta, before["_theta"])
    assert np.array_equal(clf._st, before["_st"])
    # PA-I and PA-II with the same margin have finite steps
    for step in ("PA-I", "PA-II"):
        est = Winnow(step=step, margin=1.5, C=10.0, fit_intercept=False).fit(X, y)
        assert np.all(np.isfinite(est.coef_))


def test_parameters_are_validated():
    X, y = np.eye(3), [0, 1, 1]
    with pytest.raises(ValueError, match="step"):
        Winnow(step="PA-III").fit(X, y)
    with pytest.raises(ValueError, match="C"):
        PNormPerceptron(step="PA-I", C=0.0).fit(X, y)
    with pytest.raises(ValueError, match="conservative"):
        Winnow(self_tuned=True, step="PA-I").fit(X, y)


def test_aggressive_winnow_learns_a_sparse_target():
    """A sparse disjunction-like target on {-1, 1}^n: the aggressive steps learn it online."""
    rng = np.random.default_rng(3)
    X = rng.choice([-1.0, 1.0], size=(3000, 50))
    y = (X[:, 2] + X[:, 7] + X[:, 11] > 0).astype(int)
    for step in ("PA", "PA-I", "PA-II"):
        clf = Winnow(step=step, margin=0.1, C=1.0)
        pred = clf.partial_fit_predict(X, y)
        assert (pred[1500:] != y[1500:]).mean() < 0.02, step


@pytest.mark.parametrize("link", ["entropy", "pnorm"])
@pytest.mark.parametrize("step", ["PA", "PA-I", "PA-II"])
def test_step_that_removes_the_dominant_weight(link, step):
    """The touched weight holds almost all of the aggregate and the step cancels it: the
    aggregate of the other weights must not be taken as a difference of large numbers."""
    rng = np.random.default_rng(11)
    for trial in range(20):
        d = 30
        theta = rng.normal(size=(d + 1, 1)) * 1.5
        big = 35.0 if link == "entropy" else 1e3
        theta[0, 0] = big * (1 + rng.random())
        x = np.zeros(d)
        x[0] = -1.0  # y = 1: u_0 = -1 pushes the dominant weight down
        x[1 + trial % 5] = rng.uniform(0.5, 1.0)
        inst = dict(link=link, K=1, step=step, balanced=True, p=6.0, b=1.0, d=d, theta=theta,
                    x=x, y=1, C=1e4, weight=1.0, gamma=0.3, dense=trial % 2 == 0,
                    f32=False)  # fmt: skip
        assert _check(inst) in ("interior", "interior+closed")
