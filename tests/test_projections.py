"""The projections of thesis Sec. 7.1 equal a generic numerical solution of their own problem.

Reference: scipy's SLSQP on the stated problem (it knows nothing of the sort-and-threshold
solutions), plus the KKT conditions checked directly; hundreds of random instances with ties,
n = 1, zeros, sparse rows whose zeros enter the support; idempotence; bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from onlinelearn.projections import project_entropic, project_l1_ball, project_simplex


def _slsqp(fun, jac, x0, cons, bounds=None):
    res = minimize(
        fun, x0, jac=jac, method="SLSQP", constraints=cons, bounds=bounds,
        options={"ftol": 1e-14, "maxiter": 1000},
    )  # fmt: skip
    return res.x


def _instances(n_inst, seed):
    rng = np.random.default_rng(seed)
    for t in range(n_inst):
        n = int(rng.integers(1, 9))
        v = rng.normal(size=n) * rng.choice([0.1, 1.0, 5.0])
        if t % 5 == 0:
            v = np.round(v)  # ties and exact zeros
        if t % 7 == 0:
            v[rng.random(n) < 0.5] = 0.0
        z = float(rng.choice([0.3, 1.0, 2.5]))
        yield v, z


def test_simplex_equals_slsqp_and_kkt():
    for v, z in _instances(300, 1):
        a = project_simplex(v, z)
        ref = _slsqp(
            lambda x, v=v: 0.5 * np.sum((x - v) ** 2),
            lambda x, v=v: x - v,
            np.full(v.size, z / v.size),
            [{"type": "eq", "fun": lambda x, z=z: x.sum() - z, "jac": lambda x: np.ones_like(x)}],
            bounds=[(0, None)] * v.size,
        )
        assert np.allclose(a, ref, atol=1e-6), (v, z, a, ref)
        # KKT: a >= 0, sum a = z, a_i = v_i - theta on the support, v_i <= theta off it
        assert a.min() >= 0 and abs(a.sum() - z) < 1e-12
        sup = a > 0
        theta = (v[sup] - a[sup]).mean()
        assert np.allclose(v[sup] - a[sup], theta, atol=1e-12)
        assert np.all(v[~sup] <= theta + 1e-12)


def test_l1_ball_equals_slsqp():
    for v, z in _instances(300, 2):
        a = project_l1_ball(v, z)
        n = v.size
        # split a = p - q with p, q >= 0: a smooth QP for SLSQP
        ref = _slsqp(
            lambda y, v=v, n=n: 0.5 * np.sum((y[:n] - y[n:] - v) ** 2),
            lambda y, v=v, n=n: np.concatenate([y[:n] - y[n:] - v, -(y[:n] - y[n:] - v)]),
            np.zeros(2 * n),
            [{"type": "ineq", "fun": lambda y, z=z: z - y.sum(), "jac": lambda y: -1.0 + 0 * y}],
            bounds=[(0, None)] * (2 * n),
        )
        assert np.allclose(a, ref[:n] - ref[n:], atol=1e-6), (v, z, a)
        assert np.abs(a).sum() <= z + 1e-12
        if np.abs(v).sum() <= z:
            assert np.array_equal(a, v)
        assert np.all(a * v >= 0)  # Lemma 8: signs kept


def test_entropic_equals_slsqp_and_kkt():
    rng = np.random.default_rng(3)
    for t in range(250):
        n = int(rng.integers(1, 8))
        u = rng.random(n) ** 3 * rng.choice([1.0, 100.0])
        if t % 6 == 0:
            u[rng.integers(n)] = u[0]  # ties
        eps = float(rng.uniform(0, 1.0 / n)) if t % 4 else 0.0
        if t % 9 == 0:
            eps = 1.0 / n  # the whole simplex collapses to the uniform vector
        w = project_entropic(u, eps)
        assert abs(w.sum() - 1) < 1e-12 and w.min() >= eps - 1e-15
        if eps * n < 1 - 1e-9:
            ref = _slsqp(
                lambda x, u=u: np.sum(x * np.log(x / u)),
                lambda x, u=u: np.log(x / u) + 1,
                np.full(n, 1.0 / n),
                [{"type": "eq", "fun": lambda x: x.sum() - 1, "jac": lambda x: np.ones_like(x)}],
                bounds=[(max(eps, 1e-12), 1.0)] * n,
            )
            assert np.allclose(w, ref, atol=2e-6), (u, eps, w, ref)
        # KKT (7.7): w_j = u_j / Z above the floor with one Z; floored entries have u_j / Z <= eps
        free = w > eps + 1e-13
        if free.any():
            Z = u[free][0] / w[free][0]
            assert np.allclose(u[free] / Z, w[free], rtol=1e-10)
            assert np.all(u[~free] / Z <= eps * (1 + 1e-9) + 1e-15)


def test_edge_cases():
    assert np.array_equal(project_simplex(np.array([-3.0]), 2.0), [2.0])
    assert np.allclose(project_simplex(np.zeros(4)), 0.25)
    assert np.allclose(project_simplex(np.ones(3) * 7), 1 / 3)  # ties
    assert np.array_equal(project_l1_ball(np.zeros(3)), np.zeros(3))
    assert np.allclose(project_entropic(np.zeros(4), 0.1), 0.25)
    assert np.allclose(project_entropic(np.array([0.0, 1.0, 1.0]), 0.0), [0, 0.5, 0.5])
    # all but one relevant: one large entry, the floor binds the rest
    w = project_entropic(np.array([1e-9, 1e-9, 1.0]), 0.2)
    assert np.allclose(w, [0.2, 0.2, 0.6])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sparse_rows_equal_dense_rows(dtype):
    rng = np.random.default_rng(4)
    A = rng.normal(size=(40, 7)) * (rng.random((40, 7)) < 0.4)
    A[::5] *= 0.05  # rows whose positive part is below z: their zeros enter the support
    A[3] = 0.0
    S = sp.csr_matrix(A.astype(dtype))
    for z in (0.5, 1.0, 3.0):
        assert np.allclose(project_simplex(S, z).toarray(), project_simplex(A.astype(dtype), z))
        l1s = project_l1_ball(S, z)
        assert sp.issparse(l1s)
        assert np.allclose(l1s.toarray(), project_l1_ball(A.astype(dtype), z))
    U = np.abs(A)
    assert np.allclose(project_entropic(sp.csr_matrix(U), 0.05), project_entropic(U, 0.05))
    # row by row equals one vector at a time
    assert np.allclose(project_simplex(A), np.vstack([project_simplex(r) for r in A]))


def test_idempotent():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(50, 6))
    for f, arg in ((project_simplex, 1.5), (project_l1_ball, 1.5)):
        P = f(A, arg)
        assert np.allclose(f(P, arg), P, atol=1e-13)
    P = project_entropic(np.abs(A), 0.1)
    assert np.allclose(project_entropic(P, 0.1), P, atol=1e-13)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="z must be"):
        project_simplex([1.0, 2.0], z=0.0)
    with pytest.raises(ValueError, match="NaN"):
        project_l1_ball([1.0, np.nan])
    with pytest.raises(ValueError, match="empty"):
        project_simplex(np.zeros(0))
    with pytest.raises(ValueError, match="non-negative"):
        project_entropic([1.0, -0.1])
    with pytest.raises(ValueError, match="eps must be"):
        project_entropic([1.0, 2.0], eps=0.6)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        project_simplex(np.zeros((2, 2, 2)))
