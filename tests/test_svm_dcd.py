"""Dual coordinate ascent against independent solutions of its own problems.

* one coordinate step = the exact 1-D maximisation of the dual (brute force on a grid and
  scipy's bounded scalar solver), box edges included; the Crammer-Singer sub-problem = a
  generic QP (SLSQP);
* the duality gap of every evaluation is >= 0 and the last one is <= tol;
* on small problems the solution equals a generic QP / L-BFGS solve of the same dual and
  of the same primal to 1e-6 (binary hinge, squared hinge, Crammer-Singer, one-vs-rest);
* the screened evaluation of the gap (cached margins, displacement bound) equals a full pass
  over every row, while skipping rows; packed rows reproduce X; the shuffle is uniform;
* test accuracy within 0.002 of LIBLINEAR on a9a.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data
from scipy.optimize import LinearConstraint, minimize, minimize_scalar
from sklearn.exceptions import ConvergenceWarning

from onlinelearn import DualCoordinateSVC
from onlinelearn._core.svm.dcd import (
    H_TIME,
    N_HIST,
    STATS_FIELDS,
    binary_cd_step,
    binary_objectives,
    binary_objectives_screened,
    cs_subproblem,
    ovr_dcd,
    pack_rows,
)
from onlinelearn._core.svm.dcd_common import (
    evaluation_due,
    node_dtype,
    rand_below,
    rng_state,
    shuffle_prefix,
)
from onlinelearn.shell.validation import CSRBatch


def _problem(n=30, d=4, seed=0, K=2, sep=1.0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(K, d)) * sep
    y = rng.integers(0, K, n)
    X = centers[y] + rng.normal(size=(n, d))
    return X, y


def _augment(X, b):
    return np.hstack([X, np.full((X.shape[0], 1), b)]) if b else X


# ------------------------------------------------------------------ one coordinate step
def _dual(alpha, Q, Dii):
    return alpha.sum() - 0.5 * alpha @ Q @ alpha - 0.5 * (Dii * alpha * alpha).sum()


@pytest.mark.parametrize("l2", [False, True])
def test_coordinate_step_is_the_exact_1d_maximiser(l2):
    """alpha_i <- clip(alpha_i - G/Qbar_ii, 0, U_i) with G computed from w(alpha), against a
    brute-force grid and scipy's bounded scalar solver on the dual itself (built from Q, not
    from w), for random points, costs from tiny to huge, zero rows and both box edges."""
    rng = np.random.default_rng(1)
    edges = {"lower": 0, "upper": 0, "interior": 0}
    for trial in range(100):
        n, d = 8, 3
        X = rng.normal(size=(n, d)) * rng.choice([0.1, 1.0, 5.0])
        if trial % 10 == 0:
            X[0] = 0.0  # a zero row (with an intercept feature its norm is b^2)
        b = [0.0, 1.0, 0.3][trial % 3]
        Xa = _augment(X, b)
        y = rng.choice([-1.0, 1.0], n)
        C = rng.choice([1e-3, 0.1, 1.0, 10.0, 1e4], n)
        U = np.full(n, np.inf) if l2 else C
        Dii = 0.5 / C if l2 else np.zeros(n)
        Q = (y[:, None] * Xa) @ (y[:, None] * Xa).T
        alpha = rng.uniform(0, 1, n) * np.where(np.isfinite(U), U, 3.0)
        alpha[rng.random(n) < 0.3] = 0.0
        if not l2:
            top = rng.random(n) < 0.2
            alpha[top] = U[top]
        i = 0 if trial % 10 == 0 else int(rng.integers(n))
        w = (alpha * y) @ Xa
        G = y[i] * (w @ Xa[i]) - 1.0 + Dii[i] * alpha[i]
        Qbar = Xa[i] @ Xa[i] + Dii[i]
        if Qbar == 0.0 and not l2:
            a_new = binary_cd_step(alpha[i], G, Qbar, U[i])
            assert a_new == U[i]  # the dual is increasing in alpha_i: the upper edge
            edges["upper"] += 1
            continue
        a_new = binary_cd_step(alpha[i], G, Qbar, U[i])

        def f(a, i=i, alpha=alpha, Q=Q, Dii=Dii):
            z = alpha.copy()
            z[i] = a
            return _dual(z, Q, Dii)

        hi = U[i] if np.isfinite(U[i]) else max(10.0, 4 * abs(a_new) + 10.0)
        grid = np.linspace(0.0, hi, 20001)
        Z = np.repeat(alpha[None, :], grid.size, axis=0)
        Z[:, i] = grid
        vals = Z.sum(1) - 0.5 * np.einsum("gi,ij,gj->g", Z, Q, Z) - 0.5 * (Dii * Z * Z).sum(1)
        best = grid[np.argmax(vals)]
        assert abs(a_new - best) <= 1.5 * hi / 20000
        assert f(a_new) >= vals.max() - 1e-9 * (1 + abs(vals.max()))
        res = minimize_scalar(lambda a: -f(a), bounds=(0.0, hi), method="bounded",
                              options={"xatol": 1e-12 * max(hi, 1.0)})  # fmt: skip
        assert f(a_new) >= -res.fun - 1e-9 * (1 + abs(res.fun))
        assert 0.0 <= a_new <= U[i]
        if a_new == 0.0:
            edges["lower"] += 1
        elif a_new == U[i]:
            edges["upper"] += 1
        else:
            edges["interior"] += 1
    assert edges["lower"] > 5 and edges["interior"] > 5
    if not l2:
        assert edges["upper"] > 5


def test_crammer_singer_subproblem_equals_a_generic_qp():
    """min 1/2 A ||a||^2 + B'a  s.t.  a_m <= C [m = y], sum_m a_m = 0  (and with the true
    class shrunk at its bound C: sum over the others = -C), against SLSQP."""
    rng = np.random.default_rng(2)
    for trial in range(120):
        K = int(rng.integers(2, 7))
        A = float(rng.choice([0.01, 1.0, 30.0]))
        C = float(rng.choice([1e-3, 0.5, 1.0, 100.0]))
        B = rng.normal(size=K) * rng.choice([0.1, 1.0, 10.0])
        y_shrunk = trial % 4 == 0
        yi = K if y_shrunk else int(rng.integers(K))  # yi >= n_act: the true class is fixed
        out = np.zeros(K)
        cs_subproblem(A, B.copy(), yi, C, K, out, np.zeros(K))
        ub = np.array([C if m == yi else 0.0 for m in range(K)])
        total = -C if y_shrunk else 0.0

        def obj(a, A=A, B=B):
            return 0.5 * A * a @ a + B @ a

        # 1) a generic QP solver
        res = minimize(
            obj,
            np.full(K, total / K) if not y_shrunk else np.full(K, -C / K),
            jac=lambda a, A=A, B=B: A * a + B,
            bounds=[(None, u) for u in ub],
            constraints=[{"type": "eq", "fun": lambda a, t=total: a.sum() - t,
                          "jac": lambda a: np.ones_like(a)}],
            method="SLSQP",
            options={"ftol": 1e-13, "maxiter": 500},
        )  # fmt: skip
        # 2) bisection on the multiplier beta of sum_m a_m = total, a_m = min(ub_m, (beta-B_m)/A)
        lo, hi = -1e6, 1e6
        for _ in range(200):
            beta = 0.5 * (lo + hi)
            if np.minimum(ub, (beta - B) / A).sum() > total:
                hi = beta
            else:
                lo = beta
        a_bis = np.minimum(ub, (0.5 * (lo + hi) - B) / A)
        scale = max(1.0, C, np.abs(B).max() / A)
        assert np.all(out <= ub + 1e-12)
        assert abs(out.sum() - total) <= 1e-9 * scale
        np.testing.assert_allclose(out, a_bis, atol=1e-7 * scale)
        feasible = np.all(res.x <= ub + 1e-9) and abs(res.x.sum() - total) < 1e-8 * scale
        assert feasible
        assert obj(out) <= obj(res.x) + 1e-9 * scale * scale * max(A, 1.0)
        np.testing.assert_allclose(out, res.x, atol=1e-5 * scale)


# ------------------------------------------------------------------ packed rows, shuffle
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("b", [0.0, 1.0, 0.3])
def test_packed_rows_reproduce_the_matrix(dtype, sparse, b):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(7, 5)).astype(dtype)
    X[X < 0.3] = 0.0
    X[2] = 0.0  # an empty row
    batch = CSRBatch(sp.csr_matrix(X) if sparse else X)
    nodes, ptr = pack_rows(batch.data, batch.indices, batch.indptr, b, 5)
    # float32 stays float32 unless the intercept value is not a float32 number (0.3)
    assert nodes["v"].dtype == (np.float64 if b == 0.3 else dtype)
    dense = np.zeros((7, 6))
    for i in range(7):
        for node in nodes[ptr[i] : ptr[i + 1]]:
            dense[i, node["j"]] += node["v"]
    np.testing.assert_array_equal(dense, _augment(X.astype(np.float64), b) if b else
                                  np.hstack([X, np.zeros((7, 1))]))  # fmt: skip
    nnz_row = 5 if not sparse else np.count_nonzero(X, axis=1)
    np.testing.assert_array_equal(np.diff(ptr), nnz_row + (1 if b else 0))


@pytest.mark.parametrize("sparse", [False, True])
def test_float64_values_that_are_float32_numbers_pack_as_float32(sparse):
    """float64 values that are float32 numbers (binary, small integers, halves) are packed
    as float32 records, the same numbers in half the memory: the coordinate steps then give
    the same alpha and weights, bit for bit, as with the float64 records of the same rows
    (the objectives agree to rounding: the evaluation's sums may be ordered differently).
    A value or an intercept value that is not a float32 number keeps float64."""
    rng = np.random.default_rng(8)
    n, d = 80, 6
    X = rng.choice([0.0, 0.0, 1.0, 2.0, 0.5, -3.0], size=(n, d))
    y = rng.integers(0, 3, n).astype(np.int64)

    def pack(X, b):
        batch = CSRBatch(sp.csr_matrix(X) if sparse else X)
        return pack_rows(batch.data, batch.indices, batch.indptr, b, d)

    assert pack(X, 0.1)[0]["v"].dtype == np.float64  # b = 0.1 is not a float32 number
    X01 = X.copy()
    X01[5, 2] = 0.1
    assert pack(X01, 1.0)[0]["v"].dtype == np.float64
    nodes, ptr = pack(X, 1.0)
    assert nodes["v"].dtype == np.float32
    nodes64 = np.empty(nodes.shape[0], dtype=node_dtype(np.float64))
    nodes64["j"], nodes64["v"] = nodes["j"], nodes["v"]
    for l2 in (False, True):
        out = []
        for nd in (nodes, nodes64):
            alpha, W = np.zeros((3, n)), np.zeros((3, d + 1))
            hist, stats = np.zeros((61, N_HIST)), np.zeros(len(STATS_FIELDS))
            res = ovr_dcd(nd, ptr, y, np.arange(3, dtype=np.int64), np.full(n, 2.0), l2,
                          alpha, W, 0.0, 60, True, 3, 1, hist, stats, 0.0)  # fmt: skip
            out.append((res, alpha, W, stats[:2], hist[: res[1]]))
        for a, b in zip(out[0][:4], out[1][:4], strict=True):
            np.testing.assert_array_equal(a, b)
        keep = [c for c in range(N_HIST) if c != H_TIME]
        scale = np.abs(out[0][4][:, 1]).max()  # the objectives' size (for the gap column)
        np.testing.assert_allclose(
            out[0][4][:, keep], out[1][4][:, keep], rtol=1e-12, atol=1e-12 * scale
        )


def test_shuffle_is_uniform():
    """Every permutation of 4 items equally often (chi-square, 24 cells) and rand_below(n)
    uniform on [0, n) for an n that is not a power of two."""
    from itertools import permutations

    from scipy.stats import chisquare

    state = rng_state(7)
    perms = {p: 0 for p in permutations(range(4))}
    idx = np.arange(4, dtype=np.int64)
    for _ in range(24000):
        idx[:] = np.arange(4)
        shuffle_prefix(idx, 4, state)
        perms[tuple(idx)] += 1
    assert chisquare(list(perms.values())).pvalue > 1e-4
    draws = np.array([rand_below(state, 7) for _ in range(14000)])
    assert draws.min() == 0 and draws.max() == 6
    assert chisquare(np.bincount(draws, minlength=7)).pvalue > 1e-4


# ------------------------------------------------------------------ evaluation schedule
def test_evaluation_schedule():
    """The gap is evaluated once the steps cost 2 + 2 ln(gap / tol P) evaluations, once the
    epochs since the last one reach max(10, epoch / 4) (20 before the first one), or once
    they reach what the rate of the last two evaluations needs to bring the gap to tol."""
    hist = np.zeros((3, 6))
    tol, P = 1e-3, 100.0
    hist[0, [0, 1, 3]] = 0, P, P  # a cold start: the gap is P
    # before the first evaluation: the work rule (rho = 2 + 2 ln 1000 = 15.8) or epoch 20
    due0 = [evaluation_due(hist, 0, e, 0, 10 * e, 10, tol, P, P) for e in range(1, 25)]
    assert due0.index(True) + 1 == 16
    due0 = [evaluation_due(hist, 0, e, 0, 0, 10, tol, P, P) for e in range(1, 25)]
    assert due0.index(True) + 1 == 20
    # two evaluations: gap 1 at epoch 10, 0.2 at epoch 20 (ln 5 per 10 epochs); tol P = 0.1
    hist[0, [0, 1, 3]] = 10, P, 1.0
    hist[1, [0, 1, 3]] = 20, P, 0.2
    need = np.log(0.2 / (tol * P)) / (np.log(5.0) / 10)  # 4.3 epochs
    due = [evaluation_due(hist, 1, e, 20, 0, 10**9, tol, 0.2, P) for e in range(21, 60)]
    assert due.index(True) + 21 == 20 + int(np.ceil(need)) == 25
    # the gap went up: no rate, the epochs since the last (a quarter of all, at least 10)
    hist[1, 3] = 2.0
    due = [evaluation_due(hist, 1, e, 20, 0, 10**9, tol, 2.0, P) for e in range(21, 60)]
    assert due.index(True) + 21 == 30
    # at tol: due at once once work was done (rho = 2)
    assert evaluation_due(hist, 1, 21, 20, 20, 10, tol, 0.1, P)
    assert not evaluation_due(hist, 1, 21, 20, 19, 10, tol, 0.1, P)


# ------------------------------------------------------------------ screened gap
def _screen_point(alpha, ys, Ci, Xa):
    """The solver's state at alpha: records (alpha, y, -, C) and w(alpha)."""
    n = len(alpha)
    st = np.zeros((n, 4))
    st[:, 0], st[:, 1], st[:, 3] = alpha, ys, Ci
    return st, (alpha * ys) @ Xa


def _random_alpha(rng, Ci, l2):
    """A random dual point with many coordinates at 0 and (L1) at C_i."""
    n = len(Ci)
    if l2:
        a = rng.exponential(size=n) * (rng.random(n) < 0.5)
    else:
        a = Ci * rng.choice([0.0, 1.0, 0.5], n, p=[0.5, 0.3, 0.2])
        a = np.where(a == 0.5 * Ci, Ci * rng.random(n), a)
    return np.where(Ci > 0, a, 0.0)


@pytest.mark.parametrize("l2", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_screened_objectives_equal_a_full_pass(l2, sparse):
    """The evaluation that skips rows whose loss the cached margins settle (zero loss, or the
    L1 loss of a row at alpha_i = C_i summed through v = sum C_i y_i x_i, which each
    evaluation brings up to date) gives the objectives of a full pass over every row, after
    small and large moves of w(alpha), with zero rows, zero costs, float32 input and both
    intercepts; and small moves do skip rows."""
    rng = np.random.default_rng(5 + l2 + 2 * sparse)
    skipped = 0
    for trial in range(40):
        n, d = 60, 6
        X = rng.normal(size=(n, d)) * rng.choice([0.2, 1.0, 3.0])
        X[rng.random((n, d)) < 0.4] = 0.0
        X[:3] = 0.0
        X = X.astype(np.float32 if trial % 3 == 0 else np.float64)
        b = [1.0, 0.0][trial % 2]
        ycodes = rng.integers(0, 2, n).astype(np.int64)
        ys = np.where(ycodes == 1, 1.0, -1.0)
        Ci = rng.choice([0.01, 1.0, 10.0], n) * (rng.random(n) > 0.05)
        batch = CSRBatch(sp.csr_matrix(X) if sparse else X)
        nodes, ptr = pack_rows(batch.data, batch.indices, batch.indptr, b, d)
        Xa = _augment(X.astype(np.float64), b) if b else np.hstack([X, np.zeros((n, 1))])
        base = np.nonzero(Ci > 0)[0].astype(np.int64)
        xn = np.column_stack([np.sqrt((Xa * Xa).sum(axis=1)), np.abs(Xa).sum(axis=1)])

        alpha = _random_alpha(rng, Ci, l2)
        marg, mchain, wsnap = np.zeros(n), np.zeros((n, 2)), np.zeros(d + 1)
        chain = np.zeros(2)
        # v = sum C_i y_i x_i over the rows marked at C_i: kept across evaluations and
        # brought up to date by each (rows that reached or left C_i in between)
        vC, csum, atc = np.zeros(d + 1), np.zeros(1), np.zeros(n, bool)
        for step in range(4):
            st, w = _screen_point(alpha, ys, Ci, Xa)
            full = step == 0
            p, q, work = binary_objectives_screened(
                nodes, ptr, l2, base, xn, st, w, w, marg, mchain, wsnap, chain, vC, csum, atc, full
            )
            at_c = (alpha == Ci) & (Ci > 0) & (not l2)
            np.testing.assert_array_equal(atc[base], at_c[base])
            np.testing.assert_allclose(vC, (Ci * ys * at_c) @ Xa, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(csum[0], Ci[at_c].sum(), rtol=1e-12)
            p_ref, q_ref = binary_objectives(
                batch.data, batch.indices, batch.indptr, b, ycodes, 1, Ci, l2, alpha, w[: d + 1]
                if b else w[:d], )  # fmt: skip
            np.testing.assert_allclose([p, q], [p_ref, q_ref], rtol=1e-10, atol=1e-12)
            if not full:
                skipped += work < len(base) + ptr[-1]
            # the next point: a small move of a few coordinates, or a new random point
            if step == 1:
                alpha = _random_alpha(rng, Ci, l2)
            else:
                j = rng.choice(base, 3)
                alpha = alpha.copy()
                alpha[j] = (
                    np.clip(alpha[j] + 1e-3 * rng.normal(size=3), 0, Ci[j])
                    if not l2
                    else np.maximum(alpha[j] + 1e-3 * rng.normal(size=3), 0)
                )
    assert skipped > 20


# ------------------------------------------------------------------ gap
@pytest.mark.parametrize(
    "kw",
    [
        dict(loss="hinge"),
        dict(loss="squared_hinge"),
        dict(multi_class="crammer_singer"),
        dict(loss="hinge", shrinking=False),
        dict(multi_class="crammer_singer", shrinking=False),
    ],
)
@pytest.mark.parametrize("K", [2, 4])
def test_gap_nonnegative_and_below_tol(kw, K):
    X, y = _problem(n=150, d=8, K=K, seed=K)
    for tol, check in [(1e-2, "auto"), (1e-4, 1)]:
        clf = DualCoordinateSVC(C=0.5, tol=tol, check_every=check, max_iter=5000, random_state=0,
                                **kw)  # fmt: skip
        clf.fit(X, y)
        h = clf.history_
        assert clf.converged_
        assert np.all(h["gap"] >= -1e-10 * np.abs(h["primal"]))
        np.testing.assert_allclose(h["gap"], h["primal"] - h["dual"])
        assert h["gap"][-1] <= tol * h["primal"][-1]
        assert h["epoch"][-1] == clf.n_iter_
        # the dual only goes up (exact coordinate steps)
        assert np.all(np.diff(h["dual"]) >= -1e-9 * np.abs(h["dual"][1:]))
        if check == 1:
            assert list(h["epoch"]) == list(range(clf.n_iter_ + 1))
        # primal of the returned weights = the last history entry
        if not (kw.get("multi_class") == "crammer_singer" and K == 2):
            np.testing.assert_allclose(clf.primal_objective(X, y), h["primal"][-1], rtol=1e-9)


# ------------------------------------------------------------------ generic solvers
def _binary_dual_qp(Xa, ys, C, l2):
    n = len(ys)
    Q = (ys[:, None] * Xa) @ (ys[:, None] * Xa).T
    Dii = np.full(n, 0.5 / C) if l2 else np.zeros(n)
    H = Q + np.diag(Dii)
    res = minimize(
        lambda a: 0.5 * a @ H @ a - a.sum(),
        np.zeros(n),
        jac=lambda a: H @ a - 1.0,
        bounds=[(0.0, None if l2 else C)] * n,
        method="L-BFGS-B",
        options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 20000, "maxcor": 50},
    )
    a = res.x
    return a, (a * ys) @ Xa, -res.fun


def _qp(H, c, A, lb, ub):
    """min 1/2 z'Hz + c'z  s.t.  lb <= A z <= ub, by scipy's interior-point trust-constr."""
    res = minimize(
        lambda z: 0.5 * z @ H @ z + c @ z,
        np.zeros(len(c)),
        jac=lambda z: H @ z + c,
        hess=lambda z: H,
        constraints=[LinearConstraint(A, lb, ub)],
        method="trust-constr",
        options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000, "barrier_tol": 1e-12},
    )
    return res.x, res.fun


def _binary_primal(Xa, ys, C, l2):
    n, R = Xa.shape
    if l2:  # smooth (C^1): L-BFGS on w

        def f(w):
            xi = np.maximum(0.0, 1.0 - ys * (Xa @ w))
            g = w - 2 * C * (xi * ys) @ Xa
            return 0.5 * w @ w + C * (xi**2).sum(), g

        res = minimize(f, np.zeros(R), jac=True, method="L-BFGS-B",
                       options={"ftol": 1e-16, "gtol": 1e-11, "maxiter": 20000})  # fmt: skip
        return res.x, res.fun
    # hinge: the QP over (w, xi): min 1/2 ||w||^2 + C sum xi, xi >= 1 - y <w, x>, xi >= 0
    H = np.diag(np.concatenate([np.ones(R), np.zeros(n)]))
    c = np.concatenate([np.zeros(R), np.full(n, C)])
    A = np.vstack(
        [np.hstack([ys[:, None] * Xa, np.eye(n)]), np.hstack([np.zeros((n, R)), np.eye(n)])]
    )
    lb = np.concatenate([np.ones(n), np.zeros(n)])
    z, _ = _qp(H, c, A, lb, np.inf)
    w = z[:R]
    # polish the interior point (accurate to ~1e-6) by its KKT system: margin-violating rows
    # carry the full cost C, rows on the margin carry beta in [0, C] with y <w, x> = 1 exactly
    m = ys * (Xa @ w)
    F = np.abs(m - 1.0) < 1e-4
    w0 = C * (ys[m < 1.0 - 1e-4, None] * Xa[m < 1.0 - 1e-4]).sum(axis=0)
    YF = ys[F, None] * Xa[F]
    beta = np.linalg.lstsq(YF @ YF.T, 1.0 - YF @ w0, rcond=None)[0]
    assert np.all(beta >= -1e-8) and np.all(beta <= C + 1e-8)
    w = w0 + beta @ YF
    val = 0.5 * w @ w + C * np.maximum(0.0, 1.0 - ys * (Xa @ w)).sum()
    return w, val


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("seed", [0, 2])
def test_binary_matches_generic_dual_and_primal_solvers(loss, seed):
    X, y = _problem(n=40, d=4, seed=seed, sep=0.7)
    C = [0.3, 1.0, 5.0][seed]
    b = 1.0
    l2 = loss == "squared_hinge"
    clf = DualCoordinateSVC(C=C, loss=loss, tol=1e-12, max_iter=100000, random_state=seed)
    clf.fit(X, y)
    w = np.append(clf.coef_[0], clf.intercept_[0] / b)
    ys = np.where(y == clf.classes_[1], 1.0, -1.0)
    Xa = _augment(X, b)
    a_qp, w_dual, D_qp = _binary_dual_qp(Xa, ys, C, l2)
    w_primal, P_qp = _binary_primal(Xa, ys, C, l2)
    P, D = clf.history_["primal"][-1], clf.history_["dual"][-1]
    np.testing.assert_allclose(P, P_qp, rtol=1e-6)
    np.testing.assert_allclose(D, D_qp, rtol=1e-6)
    np.testing.assert_allclose(w, w_dual, atol=1e-6 * max(1, np.abs(w).max()))
    np.testing.assert_allclose(w, w_primal, atol=1e-6 * max(1, np.abs(w).max()))
    assert P <= P_qp * (1 + 1e-9)
    # the dual variables themselves (unique here: the QP is non-degenerate)
    np.testing.assert_allclose(clf.alpha_[0], a_qp, atol=1e-5 * max(1.0, C))


def test_course_parametrisation_lambda_is_one_over_C():
    """lam = 1/C: same w, alpha_course = lam alpha_liblinear in [0, 1], objectives x lam."""
    X, y = _problem(n=60, d=5, seed=3)
    a = DualCoordinateSVC(C=4.0, tol=1e-10, random_state=0).fit(X, y)
    b = DualCoordinateSVC(lam=0.25, tol=1e-10, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-9)
    np.testing.assert_allclose(b.alpha_, 0.25 * a.alpha_, atol=1e-12)
    assert b.alpha_.max() <= 1.0 + 1e-12 and b.alpha_.min() >= 0.0
    np.testing.assert_allclose(b.history_["primal"], 0.25 * a.history_["primal"])
    # the course's primal: sum hinge + lam/2 ||w||^2 (w includes the bias weight)
    ys = np.where(y == b.classes_[1], 1.0, -1.0)
    wa = np.append(b.coef_[0], b.intercept_[0])
    Pc = np.maximum(0, 1 - ys * (_augment(X, 1.0) @ wa)).sum() + 0.125 * wa @ wa
    np.testing.assert_allclose(b.history_["primal"][-1], Pc, rtol=1e-9)
    # w = 1/lam sum alpha_i y_i x_i
    np.testing.assert_allclose(wa, (b.alpha_[0] * ys) @ _augment(X, 1.0) / 0.25, atol=1e-9)


def _cs_primal_qp(Xa, codes, C, K):
    """min 1/2 ||W||^2 + C sum xi  s.t.  xi_i >= e_i^m + <w_m - w_{y_i}, x_i> for all m
    (m = y_i gives xi_i >= 0), over (W, xi)."""
    n, R = Xa.shape
    nw = R * K
    rows, lbs = [], []
    for i in range(n):
        for m in range(K):
            r = np.zeros(nw + n)
            r[nw + i] = 1.0
            r[m * R : (m + 1) * R] -= Xa[i]
            r[codes[i] * R : (codes[i] + 1) * R] += Xa[i]
            rows.append(r)
            lbs.append(0.0 if m == codes[i] else 1.0)
    H = np.diag(np.concatenate([np.ones(nw), np.zeros(n)]))
    c = np.concatenate([np.zeros(nw), np.full(n, C)])
    z, val = _qp(H, c, np.array(rows), np.array(lbs), np.inf)
    return z[:nw].reshape(K, R), val


def _cs_dual_qp(Xa, codes, C, K):
    """max sum_i alpha_i^{y_i} - 1/2 sum_m ||sum_i alpha_i^m x_i||^2 over the CS polytope
    (alpha_i^m <= C [m = y_i], sum_m alpha_i^m = 0); variables alpha[i, m] row-major."""
    n, R = Xa.shape
    Y = (np.arange(K)[None, :] == codes[:, None]).astype(float)
    H = np.kron(Xa @ Xa.T, np.eye(K))
    A = np.vstack([np.eye(n * K), np.kron(np.eye(n), np.ones((1, K)))])
    lb = np.concatenate([np.full(n * K, -np.inf), np.zeros(n)])
    ub = np.concatenate([(Y * C).ravel(), np.zeros(n)])
    a, val = _qp(H, -Y.ravel(), A, lb, ub)
    Am = a.reshape(n, K)
    return Am, Am.T @ Xa, -val


@pytest.mark.parametrize("seed", [0, 1])
def test_crammer_singer_matches_generic_dual_and_primal_solvers(seed):
    K = 3
    X, y = _problem(n=18, d=3, K=K, seed=seed, sep=0.8)
    C = [0.5, 1.0][seed]
    clf = DualCoordinateSVC(C=C, multi_class="crammer_singer", tol=1e-10, max_iter=200000,
                            random_state=seed).fit(X, y)  # fmt: skip
    codes = np.searchsorted(clf.classes_, y)
    Xa = _augment(X, 1.0)
    W = np.hstack([clf.coef_, clf.intercept_[:, None]])
    A_qp, W_dual, D_qp = _cs_dual_qp(Xa, codes, C, K)
    W_primal, P_qp = _cs_primal_qp(Xa, codes, C, K)
    P, D = clf.history_["primal"][-1], clf.history_["dual"][-1]
    np.testing.assert_allclose(P, P_qp, rtol=1e-6)
    np.testing.assert_allclose(D, D_qp, rtol=1e-6)
    # scipy's interior point (trust-constr) is accurate to a few 1e-6 in W here; ours is
    # certified by its own gap (||W - W*||^2 <= 2 (P - D)) and is never worse than it
    atol = 1e-5 * max(1, np.abs(W).max())
    np.testing.assert_allclose(W, W_dual, atol=atol)
    np.testing.assert_allclose(W, W_primal, atol=atol)
    assert P <= P_qp * (1 + 1e-9)
    # the dual point is feasible: alpha_i^m <= C [m = y_i], sum_m alpha_i^m = 0
    a = clf.alpha_.T
    assert np.all(a <= (codes[:, None] == np.arange(K)) * C + 1e-12)
    np.testing.assert_allclose(a.sum(axis=1), 0.0, atol=1e-12)


def test_one_vs_rest_is_k_independent_binary_problems():
    """Each row of an OvR model = the binary solve of 'class k against the rest'."""
    X, y = _problem(n=120, d=5, K=3, seed=4)
    ovr = DualCoordinateSVC(C=0.7, tol=1e-11, random_state=0).fit(X, y)
    for k, c in enumerate(ovr.classes_):
        yb = np.where(y == c, 1, 0)
        bin_ = DualCoordinateSVC(C=0.7, tol=1e-11, random_state=0).fit(X, yb)
        np.testing.assert_allclose(ovr.coef_[k], bin_.coef_[0], atol=1e-7)
        np.testing.assert_allclose(ovr.intercept_[k], bin_.intercept_[0], atol=1e-7)


def test_sample_weight_and_class_weight_scale_the_cost():
    """C_i = C sw_i cw_{y_i}: weights 2 == C x 2; a class weight == the sample weights of its
    class; sample weight 0 == the row removed; integer weights == repeated rows (a batch
    solver's optimum, unlike an online learner's)."""
    X, y = _problem(n=80, d=4, seed=5)
    kw = dict(tol=1e-12, random_state=0)
    a = DualCoordinateSVC(C=0.5, **kw).fit(X, y, sample_weight=np.full(80, 2.0))
    b = DualCoordinateSVC(C=1.0, **kw).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-8)
    c = DualCoordinateSVC(C=1.0, class_weight={1: 3.0}, **kw).fit(X, y)
    d = DualCoordinateSVC(C=1.0, **kw).fit(X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(c.coef_, d.coef_, atol=1e-8)
    sw = np.ones(80)
    sw[:10] = 0.0
    e = DualCoordinateSVC(C=1.0, **kw).fit(X, y, sample_weight=sw)
    f = DualCoordinateSVC(C=1.0, **kw).fit(X[10:], y[10:])
    np.testing.assert_allclose(e.coef_, f.coef_, atol=1e-8)
    rep = np.repeat(np.arange(80), np.where(np.arange(80) < 20, 2, 1))
    g = DualCoordinateSVC(C=1.0, **kw).fit(X, y, sample_weight=np.where(np.arange(80) < 20, 2, 1))
    h = DualCoordinateSVC(C=1.0, **kw).fit(X[rep], y[rep])
    np.testing.assert_allclose(g.coef_, h.coef_, atol=1e-7)


def test_warm_start_continues_from_the_dual_point():
    """A warm start resumes from the previous dual point (made feasible when C shrinks) and
    ends at the cold solution: both are certified by their gaps, and strong convexity gives
    ||w - w*||^2 <= 2 (P - D) for each, so they are within 2 sqrt(2 gap) of each other."""
    X, y = _problem(n=200, d=6, K=3, seed=6)
    tol = 1e-10
    for kw in [dict(), dict(multi_class="crammer_singer"), dict(loss="squared_hinge")]:
        kw.update(max_iter=100000, random_state=0)
        cold = DualCoordinateSVC(C=1.0, tol=tol, **kw).fit(X, y)
        warm = DualCoordinateSVC(C=1.0, tol=1e-2, warm_start=True, **kw).fit(X, y)
        first = warm.history_["dual"][-1]
        warm.set_params(tol=tol)
        warm.fit(X, y)
        np.testing.assert_allclose(warm.history_["dual"][0], first, rtol=1e-9)
        assert warm.history_["dual"][0] > cold.history_["dual"][0]
        bound = 2 * np.sqrt(2 * tol * cold.history_["primal"][-1]) + 1e-9
        assert np.sqrt(((warm.coef_ - cold.coef_) ** 2).sum()) <= bound
        warm.set_params(C=0.1)
        warm.fit(X, y)
        assert warm.converged_
        ref = DualCoordinateSVC(C=0.1, tol=tol, **kw).fit(X, y)
        bound = 2 * np.sqrt(2 * tol * ref.history_["primal"][-1]) + 1e-9
        assert np.sqrt(((warm.coef_ - ref.coef_) ** 2).sum()) <= bound


def test_dense_csr_float32_give_the_same_model():
    X, y = _problem(n=150, d=6, K=3, seed=7)
    for kw in [dict(), dict(multi_class="crammer_singer")]:
        a = DualCoordinateSVC(random_state=3, **kw).fit(X, y)
        b = DualCoordinateSVC(random_state=3, **kw).fit(sp.csr_matrix(X), y)
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)
        assert a.n_iter_ == b.n_iter_
        c = DualCoordinateSVC(random_state=3, tol=1e-6, **kw).fit(X.astype(np.float32), y)
        e = DualCoordinateSVC(random_state=3, tol=1e-6, **kw).fit(
            X.astype(np.float32).astype(np.float64), y
        )
        np.testing.assert_allclose(c.coef_, e.coef_, rtol=1e-9, atol=1e-12)


def test_zero_rows_huge_and_tiny_C():
    """Zero rows (alpha = C_i: their loss is 1 whatever w), tiny C (converges at once), huge C
    (dual CD is slow there, as LIBLINEAR: the run stops at max_iter with a warning, finite,
    its gap still >= 0 and its dual still increasing)."""
    X, y = _problem(n=50, d=3, seed=8)
    X[:5] = 0.0
    for kw in [dict(fit_intercept=False), dict(), dict(multi_class="crammer_singer")]:
        for C in [1e-6, 1.0]:
            clf = DualCoordinateSVC(C=C, tol=1e-6, max_iter=20000, random_state=0, **kw)
            clf.fit(X, y)
            assert clf.converged_ and np.all(np.isfinite(clf.coef_))
            assert clf.history_["gap"][-1] <= 1e-6 * clf.history_["primal"][-1]
        if "multi_class" not in kw:
            # zero rows without intercept sit at their upper bound C
            if not kw.get("fit_intercept", True):
                np.testing.assert_allclose(clf.alpha_[0, :5], 1.0)
        clf = DualCoordinateSVC(C=1e6, tol=1e-6, max_iter=300, check_every=1, random_state=0, **kw)
        with pytest.warns(ConvergenceWarning, match="did not reach"):
            clf.fit(X, y)
        h = clf.history_
        assert not clf.converged_ and np.all(np.isfinite(clf.coef_))
        assert np.all(h["gap"] >= -1e-10 * h["primal"])
        assert np.all(np.diff(h["dual"]) >= -1e-9 * np.abs(h["dual"][1:]))


def test_accuracy_within_0_002_of_liblinear_on_a9a():
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    from onlinelearn.datasets import load_shared

    require_shared_data("a9a")
    require_shared_data("a9a", "test")
    X, y = load_shared("a9a")
    Xt, yt = load_shared("a9a", "test")
    prob = liblinear.problem(y, X)
    prob.set_bias(1)
    for s, loss in ((3, "hinge"), (1, "squared_hinge")):
        m = liblinear.train(prob, liblinear.parameter(f"-s {s} -c 1 -e 0.01 -B 1 -q"))
        _, (acc_ll, _, _), _ = liblinear.predict(yt, Xt, m, "-q")
        ours = DualCoordinateSVC(C=1.0, loss=loss, random_state=0).fit(X, y)
        assert abs(ours.score(Xt, yt) - acc_ll / 100) <= 0.002


# ------------------------------------------------------------------ the pocket
def _primal_at_alpha(alpha, X, y, C, kw):
    """(P(w(alpha)), w(alpha)) computed here from the dual variables of a fit: the binary
    losses (hinge / squared hinge) or the Crammer-Singer loss, bias as a feature of value 1."""
    Xa = _augment(X, 1.0)
    if kw.get("multi_class") == "crammer_singer":
        W = alpha @ Xa  # (K, R): w_m = sum_i alpha_i^m x_i
        S = Xa @ W.T
        M = 1.0 + S - S[np.arange(len(y)), y][:, None]
        M[np.arange(len(y)), y] = 0.0
        return 0.5 * (W * W).sum() + C * M.max(axis=1).sum(), W
    ys = np.where(y == 1, 1.0, -1.0)
    w = (alpha[0] * ys) @ Xa
    xi = np.maximum(0.0, 1.0 - ys * (Xa @ w))
    loss = xi**2 if kw.get("loss") == "squared_hinge" else xi
    return 0.5 * w @ w + C * loss.sum(), w[None, :]


@pytest.mark.parametrize(
    "kw, K",
    [
        (dict(loss="hinge"), 2),
        (dict(loss="squared_hinge"), 2),
        (dict(multi_class="crammer_singer"), 3),
    ],
)
def test_pocket_returns_the_best_evaluated_primal_point(kw, K):
    """The gap certified is P(w_best) - D(alpha) with w_best the weights of smallest primal
    value among the evaluations: with an evaluation per epoch, the primal column of
    ``history_`` after e epochs is min over e' <= e of P(w(alpha_e')) (computed here from
    the alpha of a fit stopped after e' epochs) and the model returned is that w(alpha_e');
    the primal column never goes up, the gap neither; and the pocket does keep an older
    point on this problem (P(w(alpha)) is not monotone)."""
    X, y = _problem(n=120, d=5, K=K, seed=11, sep=0.7)
    C, E = 10.0, 25
    P_at = [float(C * len(y))]  # alpha = 0: w = 0, every loss is 1
    W_at = [None]
    kept_older = 0
    for e in range(1, E + 1):
        clf = DualCoordinateSVC(C=C, tol=0.0, max_iter=e, check_every=1, random_state=0, **kw)
        clf._avg_span = 0.0  # the pocket alone: every primal point evaluated is w(alpha_e)
        with pytest.warns(ConvergenceWarning):
            clf.fit(X, y)
        P, W = _primal_at_alpha(clf.alpha_, X, y, C, kw)
        P_at.append(P)
        W_at.append(W)
        best = int(np.argmin(P_at))
        h = clf.history_
        np.testing.assert_allclose(h["primal"], np.minimum.accumulate(P_at), rtol=1e-9)
        assert np.all(np.diff(h["gap"]) <= 1e-9 * h["primal"][1:])
        coef = np.hstack([clf.coef_, clf.intercept_[:, None]])
        if best == 0:
            np.testing.assert_array_equal(coef, 0.0)
        elif K == 2:
            np.testing.assert_allclose(coef, W_at[best], atol=1e-9)
        else:
            np.testing.assert_allclose(coef, W_at[best][:, : X.shape[1] + 1], atol=1e-9)
        kept_older += best < e
    assert kept_older > 0


def test_averaged_primal_point_is_w_of_a_feasible_alpha():
    """Once P(w(alpha)) has gone up between evaluations and the gap falls slowly, the primal
    point evaluated is an average of the w(alpha_e) at the epoch ends: the model returned is
    a convex combination of them (w of an averaged, feasible alpha; found here by
    non-negative least squares), not one of them, and its primal value and the dual value of
    alpha_ (both computed here) are the last history entry."""
    from scipy.optimize import nnls

    X, y = _problem(n=120, d=5, K=2, seed=11, sep=0.7)
    C, E, kw = 10.0, 60, dict(loss="hinge")
    Ws = [np.zeros(X.shape[1] + 1)]
    for e in range(1, E + 1):
        clf = DualCoordinateSVC(C=C, tol=0.0, max_iter=e, check_every=1, random_state=0, **kw)
        with pytest.warns(ConvergenceWarning):
            clf.fit(X, y)
        Ws.append(_primal_at_alpha(clf.alpha_, X, y, C, kw)[1][0])
    coef = np.append(clf.coef_[0], clf.intercept_[0])
    A = np.vstack([np.array(Ws).T, np.ones(len(Ws))])
    lam, res = nnls(A, np.append(coef, 1.0))
    assert res < 1e-8 * max(1.0, np.abs(coef).max())
    assert min(np.abs(coef - w).max() for w in Ws) > 1e-6  # an average, not one iterate
    h = clf.history_
    Xa = _augment(X, 1.0)
    ys = np.where(y == 1, 1.0, -1.0)
    P = 0.5 * coef @ coef + C * np.maximum(0.0, 1.0 - ys * (Xa @ coef)).sum()
    wa = Ws[-1]
    D = clf.alpha_[0].sum() - 0.5 * wa @ wa
    np.testing.assert_allclose([h["primal"][-1], h["dual"][-1]], [P, D], rtol=1e-10)


def test_crammer_singer_weight_prefetch_changes_no_value(monkeypatch):
    """With W larger than the core's L2 the Crammer-Singer solver requests the next example's
    rows of W while it solves the current one; the same solver compiled without the hints
    gives the same alpha and W bit for bit."""
    from _wide import wide_sparse_problem

    from onlinelearn._core.prefetch import PREFETCH_MIN_ENTRIES, without_prefetch
    from onlinelearn._core.svm import dcd, dcd_cs

    no_hints = without_prefetch(dcd_cs.cs_dcd)
    X, y = wide_sparse_problem(np.random.default_rng(23), n=60, K=3, per_row=10)
    kw = {"C": 1.0, "multi_class": "crammer_singer", "tol": 1e-4, "random_state": 0}
    with_hints = DualCoordinateSVC(**kw).fit(X, y)
    assert with_hints.coef_.size >= PREFETCH_MIN_ENTRIES
    monkeypatch.setattr(dcd, "cs_dcd", no_hints)
    without = DualCoordinateSVC(**kw).fit(X, y)
    np.testing.assert_array_equal(with_hints.coef_, without.coef_)
    np.testing.assert_array_equal(with_hints.alpha_, without.alpha_)
    assert np.abs(with_hints.alpha_).sum() > 0


@pytest.mark.parametrize("max_iter", [1, 3, 8, 9, 20])
def test_one_vs_rest_rounds_of_epochs_stop_at_max_iter(max_iter):
    """One-vs-rest with the automatic schedule runs each problem up to BLOCK epochs in a row
    (dcd_binary.BLOCK); the epoch count still stops exactly at max_iter, the history's epochs
    increase and end there, and the gap of the last row is that of the returned model."""
    from onlinelearn._core.svm import dcd_binary

    assert dcd_binary.BLOCK > 1  # the rounds are what this test is about
    X, y = _problem(n=200, d=10, K=4, seed=3, sep=0.5)
    clf = DualCoordinateSVC(C=10.0, tol=0.0, max_iter=max_iter, random_state=0)
    with pytest.warns(ConvergenceWarning):
        clf.fit(X, y)
    h = clf.history_
    assert clf.n_iter_ == max_iter
    assert h["epoch"][-1] == max_iter and np.all(np.diff(h["epoch"]) > 0)
    np.testing.assert_allclose(clf.primal_objective(X, y), h["primal"][-1], rtol=1e-9)


def test_one_vs_rest_rounds_reach_the_same_optimum_as_single_epochs():
    """The rounds of BLOCK epochs change the order of the work, not the problem: the model at
    a tight gap equals the one of a solve that evaluates after every epoch."""
    X, y = _problem(n=150, d=6, K=3, seed=5)
    a = DualCoordinateSVC(C=1.0, tol=1e-10, max_iter=100000, random_state=0).fit(X, y)
    b = DualCoordinateSVC(C=1.0, tol=1e-10, max_iter=100000, check_every=1, random_state=0)
    b.fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-6)
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-6)
