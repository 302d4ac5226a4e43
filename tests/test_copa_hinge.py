"""COPA with the plain confusion hinge (``COPA(loss='hinge')``) against independent solutions.

The problem of a round, for W^t (d x Q, columns summing to 0) and an example (x, y)::

    min_W  F(W) = 1/2 ||W - W^t||_F^2 + C sum_{q != y} [<w_q, x> + 1/(Q-1)]_+   s.t.  W 1 = 0

The kernel :func:`onlinelearn._core.copa.copa_hinge_step` returns ``alpha`` with
W^{t+1} = W^t + x alpha^T.  References here, none of which uses the kernel's walk:

* :func:`solve_enumeration` -- exact, in W-space: F is strongly convex; each rival is below its
  kink (subgradient 0), at it (<w_q, x> + Delta = 0, subgradient g_q in [0, C]) or above
  (subgradient C).  For each of the 3^(Q-1) assignments the KKT conditions are a linear system
  in V = W - W^t, the kink subgradients and the multiplier of W 1 = 0; the solution that is
  consistent (the states hold) is the minimiser.
* :func:`solve_slsqp` -- scipy's SLSQP on the primal QP with slacks, in W-space.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from onlinelearn._core.copa import copa_hinge_step, copa_step
from onlinelearn.linear.copa import COPA


def _dense(x):
    return np.asarray(x.toarray()).ravel() if sp.issparse(x) else np.asarray(x, float).ravel()


def run(scores, y, sqnorm, C, fn=copa_hinge_step):
    Q = len(scores)
    alpha = np.full(Q, np.nan)
    work_idx = np.full(Q, -7, dtype=np.int64)
    work_val = np.full(Q, np.nan)
    n = fn(np.ascontiguousarray(scores, dtype=np.float64), y, sqnorm, C, alpha, work_idx, work_val)
    return n, alpha, work_val, work_idx


def objective(Wt, W, x, y, C):
    Q = Wt.shape[1]
    ell = W.T @ _dense(x) + 1.0 / (Q - 1)
    ell[y] = 0.0
    return 0.5 * np.sum((W - Wt) ** 2) + C * np.sum(np.maximum(ell, 0.0))


def solve_enumeration(Wt, x, y, C):
    """Exact minimiser of F (Q <= 6): returns (V, g), g the subgradients (0 for y)."""
    xd = _dense(x)
    d, Q = Wt.shape
    if not np.any(xd):
        return np.zeros((d, Q)), np.zeros(Q)
    rivals = [q for q in range(Q) if q != y]
    c = Wt.T @ xd + 1.0 / (Q - 1)
    nv, nr = d * Q, Q - 1
    n = nv + nr + d
    states = (0, 1) if np.isinf(C) else (0, 1, 2)  # below, at the kink, above
    best = None
    scale_c = 1.0 + np.abs(c).max()
    for combo in itertools.product(states, repeat=nr):
        M = np.zeros((n, n))
        R = np.zeros(n)
        for q in range(Q):
            M[q * d : (q + 1) * d, q * d : (q + 1) * d] = np.eye(d)  # v_q
            M[q * d : (q + 1) * d, nv + nr :] = -np.eye(d)  # - lambda
            M[nv + nr :, q * d : (q + 1) * d] = np.eye(d)  # sum_q v_q = 0
        for k, q in enumerate(rivals):
            M[q * d : (q + 1) * d, nv + k] = xd  # + g_q x
            row = nv + k
            if combo[k] == 1:  # <v_q, x> = -c_q
                M[row, q * d : (q + 1) * d] = xd
                R[row] = -c[q]
            else:  # g_q = 0 or C; moved to the right-hand side
                M[row, nv + k] = 1.0
                R[row] = 0.0 if combo[k] == 0 else C
        try:
            Z = np.linalg.solve(M, R)
        except np.linalg.LinAlgError:
            continue
        V = Z[:nv].reshape(Q, d).T
        g = Z[nv : nv + nr]
        ell = np.array([c[q] + V[:, q] @ xd for q in rivals])
        tol = 1e-9 * scale_c
        ok = True
        for k in range(nr):
            if combo[k] == 0:
                ok &= ell[k] <= tol
            elif combo[k] == 2:
                ok &= ell[k] >= -tol
            else:
                gt = 1e-9 * (1.0 + (C if np.isfinite(C) else abs(g[k])))
                ok &= (-gt <= g[k]) and (np.isinf(C) or g[k] <= C + gt)
        if not ok:
            continue
        f = objective(Wt, Wt + V, x, y, C if np.isfinite(C) else 0.0)
        if best is None or f < best[0]:
            gg = np.zeros(Q)
            gg[rivals] = g
            best = (f, V, gg)
    assert best is not None, "no consistent state assignment (reference failure)"
    return best[1], best[2]


def solve_slsqp(Wt, x, y, C):
    """SLSQP on min 1/2 ||V||^2 + C sum xi, xi >= 0, xi_q >= c_q + <v_q, x>, V 1 = 0."""
    xd = _dense(x)
    d, Q = Wt.shape
    rivals = [q for q in range(Q) if q != y]
    c = Wt.T @ xd + 1.0 / (Q - 1)
    nv = d * Q

    def split(z):
        return z[:nv].reshape(d, Q), z[nv:]

    def f(z):
        V, xi = split(z)
        return 0.5 * np.sum(V * V) + C * xi.sum()

    def fg(z):
        V, xi = split(z)
        return np.concatenate([V.ravel(), np.full(len(rivals), C)])

    cons = [
        {"type": "eq", "fun": lambda z: split(z)[0].sum(axis=1)},
        {"type": "ineq", "fun": lambda z: split(z)[1]},
        {
            "type": "ineq",
            "fun": lambda z: split(z)[1] - (c[rivals] + split(z)[0][:, rivals].T @ xd),
        },
    ]
    z0 = np.concatenate([np.zeros(nv), np.maximum(c[rivals], 0.0)])
    res = scipy.optimize.minimize(
        f, z0, jac=fg, constraints=cons, method="SLSQP", options={"ftol": 1e-15, "maxiter": 1000}
    )
    return split(res.x)[0]


def make_instance(rng, Q, d, C, sparse=False, ties=False, zero_x=False):
    Wt = rng.normal(size=(d, Q)) * 10 ** rng.uniform(-2, 1)
    y = int(rng.integers(Q))
    if ties and Q >= 3:
        rivals = [q for q in range(Q) if q != y]
        group = rng.choice(rivals, size=int(rng.integers(2, len(rivals) + 1)), replace=False)
        Wt[:, group] = Wt[:, [group[0]]]
    Wt -= Wt.mean(axis=1, keepdims=True)
    x = np.zeros(d) if zero_x else rng.normal(size=d) * 10 ** rng.uniform(-1, 1)
    if sparse:
        x[rng.random(d) < 0.5] = 0.0
        x = sp.csr_matrix(x[None, :])
    return Wt, x, y, C


def kernel_update(Wt, x, y, C):
    xd = _dense(x)
    n, alpha, dual, idx = run(Wt.T @ xd, y, float(xd @ xd), C)
    return n, alpha, dual, idx, np.outer(xd, alpha)


def cases(seed, n):
    rng = np.random.default_rng(seed)
    special = [1e-10, 1e-3, 1e3, 1e10, np.inf]
    for i in range(n):
        Q = 2 + i % 5  # 2..6
        C = special[i % 5] if i % 2 == 0 else float(10 ** rng.uniform(-4, 4))
        yield make_instance(
            rng, Q, int(rng.integers(1, 5)), C, sparse=i % 3 == 1, ties=i % 4 == 0,
            zero_x=i % 37 == 5,
        )  # fmt: skip


# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_exact_enumeration(seed):
    n_active = 0
    for Wt, x, y, C in cases(seed, 150):
        n, alpha, dual, idx, V = kernel_update(Wt, x, y, C)
        V_ref, g_ref = solve_enumeration(Wt, x, y, C)
        scale = max(np.linalg.norm(V_ref), 1e-300)
        assert np.linalg.norm(V - V_ref) <= 1e-10 * scale + 1e-14 * (1 + np.abs(Wt).max())
        if n == 0:
            assert np.all(alpha == 0.0) and np.all(dual == 0.0)
            continue
        n_active += 1
        # the dual variables are the subgradients of the hinge at the optimum
        gmax = max(np.abs(g_ref).max(), 1e-300)
        np.testing.assert_allclose(dual, g_ref, rtol=0, atol=1e-9 * gmax)
        assert sorted(idx[:n]) == list(np.flatnonzero(dual > 0))
        assert np.all(dual >= 0.0) and np.all(dual <= C)
    assert n_active > 100  # most instances are not passive


def test_agrees_with_slsqp():
    rng = np.random.default_rng(5)
    for i in range(40):
        Q = 2 + i % 5
        C = float(10 ** rng.uniform(-1, 1))
        Wt, x, y, C = make_instance(rng, Q, int(rng.integers(1, 4)), C, sparse=bool(i % 2))
        _, _, _, _, V = kernel_update(Wt, x, y, C)
        V_gen = solve_slsqp(Wt, x, y, C)
        F_k = objective(Wt, Wt + V, x, y, C)
        F_g = objective(Wt, Wt + V_gen, x, y, C)
        assert F_k <= F_g + 1e-10 * (1 + abs(F_g))
        assert np.linalg.norm(V - V_gen) <= 1e-5 * max(np.linalg.norm(V), 1e-3)


def kkt(scores, y, r, C, alpha, dual):
    """Violation of the box KKT conditions, in units of the loss scale: with
    ell'_q = s_q + Delta + r alpha_q (the loss argument after the update), dual = 0 needs
    ell' <= 0, dual = C needs ell' >= 0, 0 < dual < C needs ell' = 0; and alpha = mean - dual."""
    Q = len(scores)
    ell = scores + 1.0 / (Q - 1) + r * alpha
    mag = np.abs(scores).max() + 1.0 + r * np.abs(alpha).max()
    tol = 1e-12 * mag
    bad = 0.0
    for q in range(Q):
        if q == y:
            assert dual[q] == 0.0
            continue
        if dual[q] == 0.0:
            bad = max(bad, ell[q] - tol)
        elif dual[q] == C:
            bad = max(bad, -ell[q] - tol)
        else:
            assert 0.0 < dual[q] < C
            bad = max(bad, abs(ell[q]) - tol)
    np.testing.assert_allclose(alpha, dual.mean() - dual, rtol=0, atol=1e-14 * (1 + dual.max()))
    return bad


@settings(max_examples=300, deadline=None)
@given(
    st.integers(2, 12).flatmap(
        lambda Q: st.tuples(
            st.lists(st.floats(-1e3, 1e3), min_size=Q, max_size=Q), st.integers(0, Q - 1)
        )
    ),
    st.floats(1e-6, 1e6),
    st.one_of(st.floats(1e-10, 1e10), st.just(np.inf)),
)
def test_kkt_property(sy, sqnorm, C):
    s, y = np.array(sy[0]), sy[1]
    n, alpha, dual, idx = run(s, y, sqnorm, C)
    assert kkt(s, y, sqnorm, C, alpha, dual) <= 0.0
    assert n == np.count_nonzero(dual)
    assert abs(alpha.sum()) <= 1e-13 * (1 + np.abs(alpha).max() * len(s))


def test_infinite_C_is_the_squared_steps_hard_margin():
    rng = np.random.default_rng(2)
    for _ in range(200):
        Q = int(rng.integers(2, 12))
        s, y, r = rng.normal(size=Q) * 3, int(rng.integers(Q)), float(10 ** rng.uniform(-2, 2))
        _, a_h, d_h, _ = run(s, y, r, np.inf)
        _, a_s, d_s, _ = run(s, y, r, np.inf, fn=copa_step)
        np.testing.assert_allclose(a_h, a_s, rtol=1e-12, atol=1e-13 * np.abs(a_s).max())


def test_degenerate_inputs_are_passive():
    s = np.array([0.3, -0.2, 0.5])
    for r, C in [(0.0, 1.0), (np.inf, 1.0), (np.nan, 1.0), (1.0, 0.0), (1.0, np.nan)]:
        n, alpha, dual, _ = run(s, 0, r, C)
        assert n == 0 and np.all(alpha == 0.0) and np.all(dual == 0.0)
    n, alpha, _, _ = run(np.array([0.0]), 0, 1.0, 1.0)  # one class
    assert n == 0 and alpha[0] == 0.0
    n, alpha, _, _ = run(np.array([5.0, -3.0, -2.0]), 0, 1.0, 1.0)  # no rival loss
    assert n == 0 and np.all(alpha == 0.0)


def test_tiny_C_saturates_every_lossy_rival():
    """C -> 0: every rival with a positive loss takes alpha*_q = C (PA-I's capped step)."""
    s = np.array([0.4, 0.2, -5.0, 0.1])
    n, alpha, dual, _ = run(s, 3, 2.0, 1e-12)
    np.testing.assert_array_equal(dual, [1e-12, 1e-12, 0.0, 0.0])
    assert n == 2


# -------------------------------------------------------------------------------- estimator


def _data(rng, n=120, d=5, Q=4):
    X = rng.normal(size=(n, d))
    y = np.argmax(X[:, :Q] + 0.5 * rng.normal(size=(n, Q)), axis=1)
    return X, y


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_each_round_is_the_hinge_step(fit_intercept, sparse):
    rng = np.random.default_rng(4)
    X, y = _data(rng, n=60)
    clf = COPA(loss="hinge", C=0.3, average=False, fit_intercept=fit_intercept)
    clf.partial_fit(sp.csr_matrix(X[:1]) if sparse else X[:1], y[:1], classes=np.arange(4))
    W = np.zeros((X.shape[1] + fit_intercept, 4))
    x0 = np.append(X[0], 1.0) if fit_intercept else X[0]
    n, alpha, _, _ = run(x0 @ W, int(y[0]), float(x0 @ x0), 0.3)
    W = W + np.outer(x0, alpha)
    for i in range(1, len(y)):
        clf.partial_fit(sp.csr_matrix(X[i : i + 1]) if sparse else X[i : i + 1], y[i : i + 1])
        xi = np.append(X[i], 1.0) if fit_intercept else X[i]
        n, alpha, _, _ = run(xi @ W, int(y[i]), float(xi @ xi), 0.3)
        W = W + np.outer(xi, alpha)
    got = clf.coef_.T
    if fit_intercept:
        got = np.vstack([got, clf.intercept_[None, :]])
    np.testing.assert_allclose(got, W, rtol=1e-12, atol=1e-12)
    assert np.abs(clf.coef_.sum(axis=0)).max() < 1e-12


def test_default_is_the_squared_loss_bit_for_bit():
    """Fitting with today's default (and with loss='squared') gives the weights COPA gave
    before ``loss`` existed (recorded in ``tests/data/copa_before_loss_expected.npz``)."""
    from pathlib import Path

    data = Path(__file__).resolve().parent / "data"
    ref = np.load(data / "copa_before_loss_expected.npz")
    # (the recorded average is the uniform one: average_power=0)
    for est in (COPA(C=0.5, random_state=0, average_power=0.0),
                COPA(C=0.5, loss="squared", random_state=0, average_power=0.0)):  # fmt: skip
        est.fit(ref["X"], ref["y"])
        np.testing.assert_array_equal(est.coef_, ref["coef"])
        np.testing.assert_array_equal(est.intercept_, ref["intercept"])
    hinge = COPA(C=0.5, loss="hinge", random_state=0, average_power=0.0).fit(ref["X"], ref["y"])
    assert not np.array_equal(hinge.coef_, ref["coef"])  # the parameter reaches the pass


def test_model_file_keeps_the_loss(tmp_path):
    from onlinelearn.model_io import load_model, save_model

    rng = np.random.default_rng(6)
    X, y = _data(rng)
    est = COPA(loss="hinge", C=0.2, random_state=1).fit(X, y)
    save_model(est, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.loss == "hinge"
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    # continued learning goes on with the hinge step, as the original would
    est.partial_fit(X[:10], y[:10])
    back.partial_fit(X[:10], y[:10])
    np.testing.assert_array_equal(back.coef_, est.coef_)


def test_bad_loss_is_refused_and_model_unchanged():
    rng = np.random.default_rng(8)
    X, y = _data(rng)
    est = COPA(loss="hinge").partial_fit(X, y)
    before = (est.coef_.copy(), est.intercept_.copy(), est.t_)
    est.set_params(loss="absolute")
    with pytest.raises(ValueError, match="loss"):
        est.partial_fit(X, y)
    np.testing.assert_array_equal(est.coef_, before[0])
    np.testing.assert_array_equal(est.intercept_, before[1])
    assert est.t_ == before[2]


def test_check_estimator_hinge():
    from sklearn.utils.estimator_checks import check_estimator
    from test_copa_estimator import BASE_LEVEL_FAILURES  # the squared COPA's known exceptions

    results = check_estimator(COPA(loss="hinge", n_epochs=2, average=False), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed <= BASE_LEVEL_FAILURES, failed - BASE_LEVEL_FAILURES


@pytest.mark.parametrize(
    "K,layout,average,b,warm",
    [(5, "csr", 1, 1.0, True), (3, "dense", 0, 0.0, False), (2, "dense", 1, 0.3, True),
     (5, "dense", 1, 0.0, False)],
)  # fmt: skip
def test_fast_pass_equals_generic_pass_for_the_hinge(K, layout, average, b, warm):
    """The Euclidean fast pass and the generic online pass run the same hinge rounds."""
    from test_euclid_pass import test_fast_pass_equals_generic_pass as fast_vs_generic

    from onlinelearn._core import steps as S

    fast_vs_generic(S.COPA_HINGE, K, layout, np.float64, average, b, warm)


def test_nonfinite_scores_end_the_round():
    """A NaN score never enters (as in the squared step); an infinite one saturates at C (the
    hinge caps the step) and, with C = inf, gives a non-finite step; the round ends."""
    s = np.array([np.nan, 0.5, -1.0, 0.2])
    n, alpha, dual, _ = run(s, 2, 1.5, 0.7)
    ref = run(np.array([-1e300, 0.5, -1.0, 0.2]), 2, 1.5, 0.7)
    np.testing.assert_array_equal(alpha, ref[1])
    assert n == ref[0] == 2 and dual[0] == 0.0
    n, alpha, dual, _ = run(np.array([np.inf, 0.5, -1.0]), 2, 1.5, 0.7)
    np.testing.assert_array_equal(dual, [0.7, 0.7, 0.0])  # both rivals in loss saturate
    n, alpha, _, _ = run(np.array([np.inf, 0.5, -1.0]), 2, 1.5, np.inf)
    assert n >= 1 and not np.all(np.isfinite(alpha))
