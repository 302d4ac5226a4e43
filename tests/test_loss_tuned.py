"""``LossTuned``: c_t = beta2 sqrt(beta1 + sum_{i<t} g_i(w_i)) with the squared hinge (thesis
Fig. 3.2 with Theorem 2 / Corollary 4), on the dual ascent family's tuned kernel.

* Each round's alpha_t against an independent solve of its own problem (scipy brentq on the
  derivative of the 1-D dual, with grad f* written here in numpy)::

      max_{alpha >= 0}  gamma alpha - alpha^2 / (4 s) - c_t f*((v + alpha u) / c_t)

  on the three links, two and three classes, random weights s, and the row-action revisit of
  the previous variable (k = 2: delta >= -alpha_m at the same c_t).
* c_t read back from the run's own online losses, the dual objective recomputed from the dual
  variables, and the subgradient rule alpha_t = 2 s [gamma - z_t]_+.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from sklearn.utils.estimator_checks import parametrize_with_checks

from onlinelearn._core import dual_ascent as DA
from onlinelearn.framework import (
    Entropy,
    Euclidean,
    Hinge,
    LipschitzTuned,
    LossTuned,
    OnlineLearner,
    PNorm,
    SquaredHinge,
)
from onlinelearn.model_io import load_model, save_model

P = 3.0
_LINKS = {"euclidean": Euclidean(), "entropy": Entropy(), "pnorm": PNorm(p=P)}


# ---------------------------------------------------------------- the link's conjugate, in numpy
def _fstar(theta, link):
    t = theta.ravel()
    if link == "euclidean":
        return 0.5 * t @ t
    if link == "entropy":
        m = np.abs(t).max()
        return m + np.log(np.exp(t - m).sum() + np.exp(-t - m).sum()) - np.log(2 * t.size)
    return np.linalg.norm(t, ord=P) ** 2 / (2 * (P - 1))


def _grad_fstar(theta, link):
    if link == "euclidean":
        return theta
    if link == "entropy":
        m = np.abs(theta).max()
        ep, em = np.exp(theta - m), np.exp(-theta - m)
        return (ep - em) / (ep.sum() + em.sum())
    nrm = np.linalg.norm(theta.ravel(), ord=P)
    if nrm == 0:
        return np.zeros_like(theta)
    return np.sign(theta) * np.abs(theta) ** (P - 1) / ((P - 1) * nrm ** (P - 2))


def _solve(V, u, c, gamma, s, a0, link):
    """argmax_{a >= 0} gamma a - a^2 / (4 s) - c f*((V + (a - a0) u) / c), by brentq on the
    derivative (V holds the variable at a0)."""

    def h(a):
        return gamma - a / (2 * s) - np.sum(_grad_fstar((V + (a - a0) * u) / c, link) * u)

    if h(0.0) <= 0:
        return 0.0
    hi = 1.0
    while h(hi) > 0:
        hi *= 2.0
    return brentq(h, 0.0, hi, xtol=1e-15, rtol=1e-13, maxiter=500)


def _u_of(x, yk, rk, K):
    u = np.zeros((x.size, K))
    if K == 1:
        u[:, 0] = (1.0 if yk == 1 else -1.0) * x
    else:
        u[:, yk], u[:, rk] = x, -x
    return u


def _stream(n_classes, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(45, 6)) * rng.uniform(0.2, 3.0, size=(45, 1))
    X[7] = 0.0  # u = 0: alpha = 2 s gamma
    X[20] *= 40.0  # a large row
    y = rng.integers(0, n_classes, size=45)
    w = rng.uniform(0.2, 3.0, size=45)
    w[11] = 1e-6  # a tiny weight: a tiny alpha (a single-row batch cannot weigh 0)
    return X, y, w


@pytest.mark.parametrize("link", sorted(_LINKS))
@pytest.mark.parametrize("n_classes", [2, 3])
# (the subgradient rule takes one fixed step per round: refused with k > 1)
@pytest.mark.parametrize(("k", "update"), [(1, "optimal"), (2, "optimal"), (1, "subgradient")])
def test_every_round_solves_its_problem(link, n_classes, k, update):
    X, y, sw = _stream(n_classes, seed=n_classes * 10 + k)
    gamma, beta1, beta2 = 0.8, 1.5, 0.3
    est = OnlineLearner(link=_LINKS[link], loss=SquaredHinge(gamma),
                        step=LossTuned(beta1, beta2, update, k), average=False, tol=None,
                        fit_intercept=False)  # fmt: skip
    K = 1 if n_classes == 2 else n_classes
    cum, quad, dual_prev = 0.0, 0.0, -np.inf
    us, caps = [], []
    for t in range(len(y)):
        V = est._state["V"].copy() if t else np.zeros((X.shape[1], K))
        c = beta2 * np.sqrt(beta1 + cum)  # Theorem 2's rule from this test's own losses
        scores = X[t] @ _grad_fstar(V / c, link)
        if K == 1:
            yk, rk = int(y[t]), -1
            z = (1.0 if yk == 1 else -1.0) * scores[0]
        else:
            yk = int(y[t])
            rk = int(np.argmax(np.where(np.arange(K) == yk, -np.inf, scores)))
            z = scores[yk] - scores[rk]
        loss = max(gamma - z, 0.0)
        u = _u_of(X[t], yk, rk, K)
        est.partial_fit(X[t:t + 1], y[t:t + 1], sample_weight=sw[t:t + 1],
                        classes=np.arange(n_classes))  # fmt: skip
        st = est._state["st"]
        assert st[DA.C_T] == pytest.approx(c, rel=1e-12), "c_t is not Theorem 2's rule"
        alpha = est.dual_coef_
        s = sw[t]
        if s == 0:
            want = 0.0
        elif update == "subgradient" or not u.any():
            want = 2 * s * loss
        else:
            want = _solve(V, u, c, gamma, s, 0.0, link)
        assert alpha[t] == pytest.approx(want, rel=1e-9, abs=1e-10), (t, alpha[t], want)
        cum += s * loss**2
        us.append(u)
        caps.append(s)
        if k == 2 and t and caps[t - 1] > 0:
            # the revisit of alpha_{t-1} at the same c_t: the optimum of its 1-D problem
            V_end = est._state["V"]
            a_m = alpha[t - 1]
            want_m = _solve(V_end, us[t - 1], c, gamma, caps[t - 1], a_m, link)
            assert a_m == pytest.approx(want_m, rel=1e-9, abs=1e-10), (t, a_m, want_m)
        # the dual objective, recomputed from the dual variables, never decreases
        a = alpha[: t + 1]
        pos = np.asarray(caps) > 0
        quad = np.sum(a[pos] ** 2 / (4 * np.asarray(caps)[pos]))
        v = sum(ai * ui for ai, ui in zip(a, us, strict=True))
        dual = gamma * a.sum() - quad - c * _fstar(v / c, link)
        assert np.allclose(est._state["V"], v, rtol=1e-10, atol=1e-10)
        assert est.dual_objective_ == pytest.approx(dual, rel=1e-9, abs=1e-9)
        assert st[DA.CUM_LOSS] == pytest.approx(cum, rel=1e-12)
        if update == "optimal":
            assert dual >= dual_prev - 1e-9 * max(1.0, abs(dual)), (t, dual, dual_prev)
        dual_prev = dual


def test_the_step_object_and_the_configurations_it_refuses(tmp_path):
    with pytest.raises(ValueError, match="beta1 must be a finite number >= 1"):
        LossTuned(beta1=0.5)
    with pytest.raises(ValueError, match="beta2 must be"):
        LossTuned(beta2=0.0)
    with pytest.raises(ValueError, match="update"):
        LossTuned(update="newton")
    step = LossTuned.corollary_4(L=2.0, U=3.0, beta1=4.0)
    assert step.beta1 == 4.0
    assert step.beta2 == pytest.approx(8**0.25 * np.sqrt(2.0 / 3.0), rel=1e-15)
    X, y, _ = _stream(2, seed=3)
    for loss, bad in ((Hinge(1.0), LossTuned()), (SquaredHinge(1.0), LipschitzTuned())):
        est = OnlineLearner(loss=loss, step=bad, average=False, tol=None)
        with pytest.raises(ValueError, match="SquaredHinge"):
            est.fit(X, y)
    est = OnlineLearner(link=Entropy(), loss=SquaredHinge(0.5), step=LossTuned(2.0, 0.7, k=3),
                        average=False, tol=None).fit(X, y)  # fmt: skip
    save_model(est, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.step == est.step and back.loss == est.loss
    assert np.array_equal(back.decision_function(X), est.decision_function(X))
    for k, v in est._state.items():
        assert np.array_equal(back._state[k], v), k
    # read-out: w = grad f*(v / c_{T+1}), c_{T+1} from every loss so far
    c_next = 0.7 * np.sqrt(2.0 + est._state["st"][DA.CUM_LOSS])
    w = _grad_fstar(est._state["V"] / c_next, "entropy")
    np.testing.assert_allclose(est.coef_, w[:-1].T, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("link", sorted(_LINKS))
def test_sparse_rows_and_bad_input(link):
    import scipy.sparse as sp

    X, y, sw = _stream(3, seed=5)
    X[np.abs(X) < 0.8] = 0.0
    make = lambda: OnlineLearner(link=_LINKS[link], loss=SquaredHinge(1.0),  # noqa: E731
                                 step=LossTuned(1.0, 0.5, k=2), average=False, tol=None,
                                 shuffle=False, n_epochs=2)  # fmt: skip
    dense = make().fit(X, y, sample_weight=sw)
    sparse = make().fit(sp.csr_matrix(X), y, sample_weight=sw)
    np.testing.assert_allclose(sparse._state["V"], dense._state["V"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(sparse.dual_coef_, dense.dual_coef_, rtol=1e-12, atol=1e-14)
    assert sparse.dual_objective_ == pytest.approx(dense.dual_objective_, rel=1e-12)
    before = {k: v.copy() for k, v in dense._state.items()}
    bad = X[:5].copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError):
        dense.partial_fit(bad, y[:5])
    with pytest.raises(ValueError):
        dense.partial_fit(X[:5], y[:5], sample_weight=-np.ones(5))
    for k, v in before.items():
        assert np.array_equal(dense._state[k], v), k


@parametrize_with_checks(
    [
        OnlineLearner(
            loss=SquaredHinge(1.0),
            step=LossTuned(1.0, 0.5),
            average=False,
            tol=None,
            random_state=0,
        ),
        OnlineLearner(
            link=Entropy(),
            loss=SquaredHinge(0.5),
            step=LossTuned(2.0, 1.0, k=2),
            average=False,
            tol=None,
            random_state=0,
        ),
    ],  # fmt: skip
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data": (
            "sample_weight multiplies the loss of its round: two rounds on a repeated row are "
            "not one round at twice the weight (c_t and the dual differ)"
        ),
        "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
    },
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
