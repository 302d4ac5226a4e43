"""COPA's closed-form step (``onlinelearn._core.copa``) against independent solutions of (18).

Problem (18) of Ralaivola (NIPS 2012), for W^t with columns summing to 0 and an example (x, y):
min_W 1/2 ||W - W^t||_F^2 + C/2 sum_{q != y} [<w_q, x> + 1/(Q-1)]_+^2  s.t.  W 1 = 0.
The kernel returns ``alpha`` with W^{t+1} = W^t + x alpha^T.  The references live in
``reference_copa.py``: an exact active-set enumeration in W-space (with the actual x, dense or
CSR), a generic L-BFGS-B minimisation, and the first-order optimality residual of F.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference_copa as ref
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from onlinelearn._core.copa import copa_losses, copa_step

EPS = np.finfo(np.float64).eps


def run(scores, y, sqnorm, C, fn=copa_step):
    Q = len(scores)
    alpha = np.full(Q, np.nan)
    work_idx = np.full(Q, -7, dtype=np.int64)
    work_val = np.full(Q, np.nan)
    n_act = fn(
        np.ascontiguousarray(scores, dtype=np.float64), y, sqnorm, C, alpha, work_idx, work_val
    )
    return n_act, alpha, work_val, work_idx


def make_instance(rng, Q, d, C, sparse=False, ties=False, scale=None):
    """W^t (d x Q, columns summing to 0), x (dense (d,) or CSR (1, d)), y."""
    scale = 10 ** rng.uniform(-2, 1) if scale is None else scale
    Wt = rng.normal(size=(d, Q)) * scale
    y = int(rng.integers(Q))
    if ties and Q >= 3:  # some rivals share a column, hence a score (kept by the centring)
        rivals = [q for q in range(Q) if q != y]
        k = int(rng.integers(2, len(rivals) + 1))
        group = rng.choice(rivals, size=k, replace=False)
        Wt[:, group] = Wt[:, [group[0]]]
    Wt -= Wt.mean(axis=1, keepdims=True)
    x = rng.normal(size=d) * 10 ** rng.uniform(-1, 1)
    if sparse:
        x[rng.random(d) < 0.5] = 0.0
        x = sp.csr_matrix(x[None, :])
    return Wt, x, y, C


def kernel_update(Wt, x, y, C, fn=copa_step):
    s = ref.scores_of(Wt, x)
    r = ref.sqnorm_of(x)
    n_act, alpha, dual, idx = run(s, y, r, C, fn)
    V = np.outer(ref._dense(x), alpha)  # W^{t+1} - W^t = x alpha^T
    return n_act, alpha, dual, idx, V


def random_cases(seed, n):
    rng = np.random.default_rng(seed)
    special = [1e-8, 1e8, np.inf, 1.0]
    for i in range(n):
        Q = 2 + i % 9  # Q = 2..10 in turn
        d = int(rng.integers(1, 6))
        C = special[i % 4] if i % 3 == 0 else float(10 ** rng.uniform(-8, 8))
        yield make_instance(rng, Q, d, C, sparse=bool(i % 2), ties=i % 5 == 0)


# --------------------------------------------------------------------------------------------
# exact W-space solution


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_exact_active_set_solver(seed):
    worst = 0.0
    n_active_rounds = 0
    for Wt, x, y, C in random_cases(seed, 135):
        n_act, alpha, dual, idx, V = kernel_update(Wt, x, y, C)
        V_ref, xi_ref, A_ref = ref.solve_enumeration(Wt, x, y, C)
        if n_act == 0:
            assert np.all(alpha == 0.0)
            assert np.abs(V_ref).max() <= 1e-14 * (1.0 + np.abs(Wt).max())
            assert np.all(xi_ref <= 1e-14 * (1.0 + np.abs(xi_ref).max()))
            continue
        n_active_rounds += 1
        err = np.linalg.norm(V - V_ref) / np.linalg.norm(V_ref)
        worst = max(worst, err)
        assert err <= 1e-10, (C, err)
        # the dual variables alpha*_q = xi_q = C [<w*_q, x> + Delta]_+
        np.testing.assert_allclose(dual, xi_ref, rtol=0, atol=1e-10 * np.abs(xi_ref).max())
        assert sorted(idx[:n_act]) == sorted(np.flatnonzero(dual > 0))
    assert n_active_rounds > 100  # the instances are not all passive
    assert worst <= 1e-10


def test_huge_and_tiny_C_against_exact_solver():
    rng = np.random.default_rng(7)
    for C in (1e-8, 1e-4, 1e4, 1e8, 1e12, np.inf):
        for Q in (2, 3, 5, 8):
            Wt, x, y, _ = make_instance(rng, Q, 4, C, sparse=Q % 2 == 1)
            n_act, alpha, dual, idx, V = kernel_update(Wt, x, y, C)
            V_ref, xi_ref, _ = ref.solve_enumeration(Wt, x, y, C)
            if n_act:
                assert np.linalg.norm(V - V_ref) <= 1e-10 * np.linalg.norm(V_ref)
            else:
                assert np.abs(V_ref).max() <= 1e-14 * (1.0 + np.abs(Wt).max())


def test_agrees_with_generic_lbfgs():
    """A generic solver (L-BFGS-B on the sum-to-zero parametrisation) for moderate C."""
    rng = np.random.default_rng(3)
    for i in range(60):
        Q = 2 + i % 9
        C = float(10 ** rng.uniform(-2, 2))
        Wt, x, y, C = make_instance(
            rng, Q, int(rng.integers(1, 6)), C, sparse=bool(i % 2), scale=1.0
        )
        n_act, alpha, dual, idx, V = kernel_update(Wt, x, y, C)
        V_gen = ref.solve_lbfgs(Wt, x, y, C)
        F_k = ref.objective(Wt, Wt + V, x, y, C)
        F_gen = ref.objective(Wt, Wt + V_gen, x, y, C)
        assert F_k <= F_gen * (1.0 + 1e-13) + 1e-300
        scale = max(np.linalg.norm(V_gen), np.linalg.norm(V), 1e-300)
        assert np.linalg.norm(V - V_gen) <= 1e-6 * scale + 1e-13


# --------------------------------------------------------------------------------------------
# first-order optimality (independent of any derivation: F is C^1 on the constraint set)


def kkt_residual(scores, y, sqnorm, C, alpha):
    """a + C[ell']_+ - mean(C[ell']_+) for the rivals, with ell' the losses after the update.

    On W 1 = 0 the gradient of F projected on the constraint, for W = W^t + x a^T, is
    x (a_q + C [ell'_q]_+ - mean), so this vector is zero exactly at the optimum.  Returned
    with the tolerance its floating-point evaluation allows (C times the rounding of ell').
    """
    Q = len(scores)
    ell_new = scores + 1.0 / (Q - 1) + sqnorm * alpha
    lam = C * np.maximum(ell_new, 0.0) if np.isfinite(C) else np.zeros(Q)
    lam[y] = 0.0
    res = alpha + lam - lam.mean()
    mag = np.abs(scores).max() + 1.0 / (Q - 1) + sqnorm * np.abs(alpha).max()
    tol = 1e-12 * (np.abs(alpha).max() + lam.max()) + 8 * EPS * (C if np.isfinite(C) else 0) * mag
    return res, tol, ell_new


@pytest.mark.parametrize("seed", [11, 12])
def test_kkt_conditions(seed):
    rng = np.random.default_rng(seed)
    for i in range(300):
        Q = int(rng.integers(2, 13))
        s = rng.normal(size=Q) * 10 ** rng.uniform(-2, 1)
        y = int(rng.integers(Q))
        r = float(10 ** rng.uniform(-3, 3))
        C = float(10 ** rng.uniform(-8, 8)) if i % 7 else np.inf
        n_act, alpha, dual, idx = run(s, y, r, C)
        res, tol, ell_new = kkt_residual(s, y, r, C, alpha)
        if np.isfinite(C):
            assert np.abs(res).max() <= tol, (C, np.abs(res).max(), tol)
        # hard constraints when C = inf (and approximately for any C): no rival loss is left
        # above its slack alpha*_q / C, active rivals sit exactly on it
        riv = np.arange(Q) != y
        slack = dual / C if np.isfinite(C) else np.zeros(Q)
        mag = np.abs(s).max() + 1.0 + r * np.abs(alpha).max()
        assert np.all(ell_new[riv] <= slack[riv] + 1e-13 * mag)
        act = dual > 0
        np.testing.assert_allclose(ell_new[act], slack[act], rtol=1e-12, atol=1e-13 * mag)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(2, 12).flatmap(
        lambda Q: st.tuples(
            st.lists(st.floats(-1e3, 1e3), min_size=Q, max_size=Q),
            st.integers(0, Q - 1),
        )
    ),
    st.floats(1e-6, 1e6),
    st.floats(1e-8, 1e8),
)
def test_kkt_property(sy, sqnorm, C):
    s, y = np.array(sy[0]), sy[1]
    n_act, alpha, dual, idx = run(s, y, sqnorm, C)
    res, tol, _ = kkt_residual(s, y, sqnorm, C, alpha)
    assert np.abs(res).max() <= tol
    assert n_act == np.count_nonzero(dual)


# --------------------------------------------------------------------------------------------
# structure of the solution


def test_sum_to_zero_and_structure():
    worst = 0.0
    for Wt, x, y, C in random_cases(21, 300):
        n_act, alpha, dual, idx, V = kernel_update(Wt, x, y, C)
        Q = Wt.shape[1]
        s = ref.scores_of(Wt, x)
        ell = s + 1.0 / (Q - 1)
        if n_act == 0:
            assert np.all(alpha == 0.0) and np.all(dual == 0.0)
            continue
        # sum alpha = 0 (so sum_q w_q stays 0): a few ulps of the entries
        rel = abs(alpha.sum()) / np.abs(alpha).sum()
        worst = max(worst, rel)
        assert rel <= 2 * Q * EPS
        W_new = Wt + V
        assert np.abs(W_new.sum(axis=1)).max() <= 4 * Q * EPS * (np.abs(W_new).max() + 1e-300)
        # dual: alpha*_y = 0, alpha* >= 0, alpha = s_alpha/Q - alpha*, monotone in ell (Remark 1)
        assert dual[y] == 0.0 and np.all(dual >= 0.0)
        np.testing.assert_allclose(
            alpha, dual.sum() / Q - dual, rtol=1e-14, atol=1e-15 * np.abs(alpha).max()
        )
        riv = [q for q in range(Q) if q != y]
        for p in riv:
            for q in riv:
                if ell[p] >= ell[q]:
                    assert dual[p] >= dual[q] * (1 - 1e-13)
        # the active rivals, listed first by increasing class index, are those with alpha* > 0
        act = idx[:n_act]
        assert np.all(np.diff(act) > 0)
        assert act.tolist() == np.flatnonzero(dual > 0).tolist()
        # the true class and the inactive rivals all move by s_alpha/Q > 0
        rest = [q for q in range(Q) if dual[q] == 0.0]
        assert np.all(alpha[rest] == alpha[y]) and alpha[y] > 0
    assert worst <= 2 * 10 * EPS


def random_round(rng, i, q_max):
    """Scores, true class, ||x||^2 and C of one random round (ties on every fourth)."""
    Q = int(rng.integers(2, q_max))
    s = rng.normal(size=Q) * 10 ** rng.uniform(-2, 1)
    if i % 4 == 0:  # ties
        s[rng.integers(Q, size=Q // 2 + 1)] = s[0]
    return s, int(rng.integers(Q)), float(10 ** rng.uniform(-3, 3)), float(10 ** rng.uniform(-8, 8))


def assert_full_scan(s, y, r, C, fn=copa_step, rel=1e-13):
    """``fn`` gives Theorem 1 with a full sort and the largest I of (23); returns I*."""
    n_act, alpha, dual, idx = run(s, y, r, C, fn=fn)
    dual_ref, coef_ref, I_ref = ref.closed_form(s, y, r, C)
    assert n_act == I_ref
    if I_ref:
        np.testing.assert_allclose(alpha, coef_ref, rtol=0, atol=rel * np.abs(coef_ref).max())
        np.testing.assert_allclose(dual, dual_ref, rtol=0, atol=rel * dual_ref.max())
        assert idx[:n_act].tolist() == np.flatnonzero(dual > 0).tolist()
    return n_act


def passes_needed(s, y, r, C):
    """The threshold passes of copa_step, uncapped, in numpy: how many it takes (the last one
    adds no rival)."""
    Q = len(s)
    ell = np.asarray(s, dtype=np.float64) + 1.0 / (Q - 1)
    inside = np.zeros(Q, bool)
    theta, count = 0.0, 0
    while True:
        count += 1
        new = (~inside) & (np.arange(Q) != y) & (ell + theta > 0)
        if not new.any():
            return count
        inside |= new
        theta = r * ell[inside].sum() / (Q / C + (Q - inside.sum()) * r)


def test_matches_readable_transcription_and_full_scan():
    """The threshold passes (and the heap after them) equal Theorem 1 with a full sort and the
    largest I of (23)."""
    rng = np.random.default_rng(9)
    for i in range(400):
        assert_full_scan(*random_round(rng, i, 16))


def test_py_func_agrees_with_compiled():
    for Wt, x, y, C in random_cases(4, 40):
        a = kernel_update(Wt, x, y, C)
        b = kernel_update(Wt, x, y, C, fn=copa_step.py_func)
        assert a[0] == b[0]
        np.testing.assert_allclose(a[1], b[1], rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(a[2], b[2], rtol=1e-14, atol=1e-300)


# --------------------------------------------------------------------------------------------
# edge cases


def test_x_zero_means_no_update():
    s = np.array([3.0, -1.0, 2.0, 0.5])
    for C in (1e-8, 1.0, 1e12, np.inf):
        n_act, alpha, dual, idx = run(s, 1, 0.0, C)
        assert n_act == 0 and np.all(alpha == 0.0) and np.all(dual == 0.0)
    # and the exact solver agrees, for a dense and a sparse zero x
    Wt = np.array([[1.0, -2.0, 1.0], [0.5, 0.5, -1.0]])
    for x in (np.zeros(2), sp.csr_matrix((1, 2))):
        n_act, alpha, dual, idx, V = kernel_update(Wt, x, 0, 10.0)
        V_ref, _, _ = ref.solve_enumeration(Wt, x, 0, 10.0)
        assert n_act == 0 and np.abs(V_ref).max() <= 1e-15


def test_passive_when_no_rival_loss():
    Q = 5
    s = np.array([4.0, -0.25, -0.3, -1.0, -0.26])  # every rival: s_q + 1/4 <= 0
    n_act, alpha, dual, idx = run(s, 0, 2.0, 1e8)
    assert n_act == 0 and np.all(alpha == 0.0)
    # at exactly zero loss too (the boundary of the hinge)
    s[1] = -1.0 / (Q - 1)
    assert run(s, 0, 2.0, 1e8)[0] == 0
    # a loss of 1e-12 is enough to move
    s[1] = -1.0 / (Q - 1) + 1e-12
    n_act, alpha, dual, idx = run(s, 0, 2.0, 1.0)
    assert n_act == 1 and dual[1] > 0


def test_binary_closed_form():
    """Q = 2: ell = s_r + 1, alpha* = ell / (1/C + r/2), w_y += alpha*/2 x, w_r -= alpha*/2 x."""
    for s_r, r, C in [(0.3, 2.0, 1.0), (-0.5, 0.1, 1e8), (2.0, 5.0, 1e-8), (0.0, 1.0, np.inf)]:
        s = np.array([-s_r, s_r])  # w_y = -w_r
        n_act, alpha, dual, idx = run(s, 0, r, C)
        a_star = (s_r + 1.0) / (1.0 / C + r / 2.0)
        assert n_act == 1
        np.testing.assert_allclose(dual, [0.0, a_star], rtol=1e-15)
        np.testing.assert_allclose(alpha, [a_star / 2.0, -a_star / 2.0], rtol=1e-15)


def test_all_tied_first_round_from_zero():
    """W^t = 0: every rival has ell = 1/(Q-1); all enter with the same alpha*."""
    for Q in range(2, 11):
        for r, C in [(1.0, 1.0), (3.0, 1e-8), (0.5, 1e12)]:
            n_act, alpha, dual, idx = run(np.zeros(Q), Q - 1, r, C)
            assert n_act == Q - 1
            # (21) with I = Q-1: s_alpha = Q Delta / (Q/C + r) = Q / (Q/C + r)
            s_alpha = Q / (Q / C + r)
            a = (1.0 / (Q - 1) + r * s_alpha / Q) / (1.0 / C + r)
            np.testing.assert_allclose(dual[:-1], a, rtol=1e-14)
            assert dual[-1] == 0.0


def test_tiny_C_is_first_order_and_huge_C_tends_to_hard_margin():
    rng = np.random.default_rng(2)
    for _ in range(50):
        Q = int(rng.integers(2, 9))
        s = rng.normal(size=Q)
        y = int(rng.integers(Q))
        r = float(rng.uniform(0.1, 10))
        ell = s + 1.0 / (Q - 1)
        ell[y] = 0.0
        # C -> 0: alpha* = C [ell]_+ + O(C^2)
        n_act, alpha, dual, idx = run(s, y, r, 1e-8)
        np.testing.assert_allclose(dual, 1e-8 * np.maximum(ell, 0), rtol=1e-6, atol=1e-24)
        # C -> inf: continuity towards C = inf
        d_inf = run(s, y, r, np.inf)[2]
        d_big = run(s, y, r, 1e12)[2]
        np.testing.assert_allclose(d_big, d_inf, rtol=1e-9, atol=1e-9 * d_inf.max())


def test_work_arrays_longer_than_Q_and_reused():
    s = np.array([0.2, -0.4, 0.1])
    alpha = np.full(6, 9.0)
    wi = np.full(6, 5, dtype=np.int64)
    wv = np.full(6, 9.0)
    n1 = copa_step(s, 1, 1.5, 2.0, alpha, wi, wv)
    a1 = alpha[:3].copy()
    n2 = copa_step(s, 1, 1.5, 2.0, alpha, wi, wv)
    assert n1 == n2 == 2
    np.testing.assert_array_equal(alpha[:3], a1)
    _, a_ref, _ = ref.closed_form(s, 1, 1.5, 2.0)
    np.testing.assert_allclose(a1, a_ref, rtol=1e-14)


def test_checks_detect_a_wrong_update():
    """The comparisons have teeth: a 1e-7 relative perturbation of alpha is rejected."""
    rng = np.random.default_rng(8)
    Wt, x, y, C = make_instance(rng, 5, 3, 1.0, scale=1.0)
    s = ref.scores_of(Wt, x)
    r = ref.sqnorm_of(x)
    n_act, alpha, dual, idx = run(s, y, r, C)
    assert n_act > 0
    bad = alpha.copy()
    bad[idx[0]] *= 1 + 1e-7
    bad[y] -= bad.sum()  # keep sum zero: only optimality is violated
    res, tol, _ = kkt_residual(s, y, r, C, bad)
    assert np.abs(res).max() > 100 * tol
    V_ref, _, _ = ref.solve_enumeration(Wt, x, y, C)
    V_bad = np.outer(ref._dense(x), bad)
    assert np.linalg.norm(V_bad - V_ref) > 1e-9 * np.linalg.norm(V_ref)


# --------------------------------------------------------------------------------------------
# per-class losses for the confusion risk


def test_copa_losses():
    rng = np.random.default_rng(4)
    for Q in range(2, 11):
        s = rng.normal(size=Q)
        y = int(rng.integers(Q))
        out = np.full(Q, np.nan)
        copa_losses(s, y, out)
        expect = np.maximum(s + 1.0 / (Q - 1), 0.0)  # plain hinge of eq. (16), not squared
        expect[y] = 0.0
        np.testing.assert_array_equal(out, expect)
    out = np.empty(2)
    copa_losses(np.array([0.5, -0.5]), 1, out)  # Q = 2: Delta = 1; the true class is 0
    np.testing.assert_array_equal(out, [1.5, 0.0])


@pytest.mark.parametrize("max_passes", [1, 2, 3])
def test_heap_after_the_passes_matches_full_scan(monkeypatch, max_passes):
    """When the threshold passes stop before the set stops growing, the heap scan takes over
    from where they stopped; with the cap lowered (the Python transcription reads the module's
    MAX_PASSES at call time) every instance goes through it, ties included, and still equals
    Theorem 1 with a full sort."""
    import onlinelearn._core.copa as copa_mod

    monkeypatch.setattr(copa_mod, "MAX_PASSES", max_passes)
    rng = np.random.default_rng(40 + max_passes)
    through_heap = 0
    for i in range(300):
        s, y, r, C = random_round(rng, i, 40)
        assert_full_scan(s, y, r, C, fn=copa_step.py_func)
        # a set that grew at the last allowed pass goes on in the heap
        through_heap += passes_needed(s, y, r, C) > max_passes
    assert through_heap >= 10  # the heap path was taken, not only the passes


def test_many_classes_every_pass_adds_one():
    """A round whose active set grows by one rival per pass (the worst case of the passes:
    the heap takes over after MAX_PASSES), against the full-sort transcription."""
    from onlinelearn._core.copa import MAX_PASSES

    Q, y, r, C = 10, 0, 1.0, 1e6
    # ell of rival n+1 between -theta(prefix n) and -theta(prefix n-1), a tenth of the way
    # from the latter: it enters with the theta of the prefix of n rivals, not before (theta
    # grows along the prefix; the smallest gap is 1e-6 of theta, far above rounding)
    delta = 1.0 / (Q - 1)
    ell = np.zeros(Q)
    ell[1] = 1.0
    S, n, theta_prev = 1.0, 1, 0.0
    for q in range(2, Q):
        theta = r * S / (Q / C + (Q - n) * r)
        assert theta > theta_prev
        ell[q] = -theta_prev - 0.1 * (theta - theta_prev)
        S += ell[q]
        n += 1
        theta_prev = theta
    scores = ell - delta

    assert passes_needed(scores, y, r, C) == Q  # one rival per pass, then one adding none
    assert Q - 1 > MAX_PASSES  # the passes alone cannot find it
    assert assert_full_scan(scores, y, r, C, rel=1e-12) == Q - 1
