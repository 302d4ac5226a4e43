"""KernelSVC: the coordinate step and the Crammer-Singer sub-problem against generic solvers,
the whole solution against a generic QP of the dual, the duality gap, bad input, model files."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, minimize, minimize_scalar

from onlinelearn import KernelSVC
from onlinelearn import kernels as K
from onlinelearn._core.kernel.ovo import two_coordinate_step
from onlinelearn._core.kernel.svc import coordinate_step
from onlinelearn._core.kernel.svc_cs import cs_subproblem


def _problem(seed, n=25, d=4, K_=2):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(K_, d)) * 1.5
    y = rng.integers(0, K_, n)
    X = centers[y] + rng.normal(size=(n, d))
    return X, y


# ---------------------------------------------------------------------- the coordinate step
@pytest.mark.parametrize("seed", range(40))
def test_coordinate_step_is_the_exact_1d_maximiser(seed):
    rng = np.random.default_rng(seed)
    n = 8
    X = rng.normal(size=(n, 3))
    if seed % 5 == 0:
        X[0] = 0.0  # Q_00 = 0: a linear 1-D problem
    y = rng.choice([-1.0, 1.0], n)
    Q = (y[:, None] * y[None, :]) * (X @ X.T)
    U = np.full(n, [1e-3, 0.5, 1.0, 1e6][seed % 4])
    alpha = rng.uniform(0, 1, n) * U
    i = 0 if seed % 5 == 0 else int(rng.integers(n))

    def neg_dual(t):
        a = alpha.copy()
        a[i] = t
        return -(a.sum() - 0.5 * a @ Q @ a)

    G = Q @ alpha - 1.0
    t = coordinate_step(alpha[i], G[i], Q[i, i], U[i])
    assert 0.0 <= t <= U[i]
    grid = np.linspace(0.0, U[i], 20001)
    vals = np.array([neg_dual(g) for g in grid])
    res = minimize_scalar(neg_dual, bounds=(0.0, U[i]), method="bounded",
                          options={"xatol": 1e-12 * max(U[i], 1.0)})  # fmt: skip
    best = min(vals.min(), res.fun)
    assert neg_dual(t) <= best + 1e-9 * max(1.0, abs(best))


@pytest.mark.parametrize("seed", range(60))
def test_two_coordinate_step_is_the_exact_2d_box_minimiser(seed):
    """The one-vs-one solver's step on (i, j) against brute force on a grid and L-BFGS-B."""
    rng = np.random.default_rng(500 + seed)
    V = rng.normal(size=(2, int(rng.integers(1, 4))))
    if seed % 6 == 0:
        V[1] = V[0] * rng.choice([1.0, -1.0])  # singular block: parallel (or opposite) rows
    if seed % 10 == 1:
        V[0] = 0.0  # q_ii = 0
    Q = V @ V.T
    g = rng.normal(size=2) * rng.choice([0.01, 1.0, 10.0])
    u = rng.choice([1e-3, 0.5, 1.0, 1e4], size=2)
    a = rng.uniform(0, 1, 2) * u
    if seed % 4 == 0:
        a = np.where(rng.random(2) < 0.5, 0.0, u)  # at the bounds

    def F(x):
        d = np.asarray(x) - a
        return g @ d + 0.5 * d @ Q @ d

    xi, xj = two_coordinate_step(a[0], a[1], g[0], g[1], Q[0, 0], Q[1, 1], Q[0, 1], u[0], u[1])
    assert 0.0 <= xi <= u[0] and 0.0 <= xj <= u[1]
    G1, G2 = np.meshgrid(np.linspace(0, u[0], 401), np.linspace(0, u[1], 401))
    D1, D2 = G1 - a[0], G2 - a[1]
    grid = g[0] * D1 + g[1] * D2 + 0.5 * (Q[0, 0] * D1**2 + 2 * Q[0, 1] * D1 * D2 + Q[1, 1] * D2**2)
    res = minimize(F, a, jac=lambda x: g + Q @ (x - a), method="L-BFGS-B",
                   bounds=[(0, u[0]), (0, u[1])],
                   options={"ftol": 1e-16, "gtol": 1e-14})  # fmt: skip
    best = min(grid.min(), res.fun)
    scale = max(1.0, abs(best), float(np.abs(g) @ u))
    assert F((xi, xj)) <= best + 1e-9 * scale
    one = coordinate_step(a[0], g[0], Q[0, 0], u[0])
    assert F((xi, xj)) <= F((one, a[1])) + 1e-12 * scale  # never less than the 1-D step


@pytest.mark.parametrize("seed", range(40))
def test_crammer_singer_subproblem_is_exact(seed):
    rng = np.random.default_rng(100 + seed)
    Kc = int(rng.integers(2, 6))
    A = float(rng.uniform(0.05, 3.0))
    B = rng.normal(size=Kc) * rng.choice([0.1, 1.0, 10.0])
    y = int(rng.integers(Kc))
    u = float(rng.choice([1e-3, 0.3, 1.0, 100.0]))
    out = np.zeros(Kc)
    cs_subproblem(A, B, y, u, out)
    cap = np.where(np.arange(Kc) == y, u, 0.0)
    assert abs(out.sum()) <= 1e-10 * max(1.0, np.abs(out).max())
    assert np.all(out <= cap + 1e-12)

    def f(a):
        return 0.5 * A * a @ a + B @ a

    res = minimize(f, np.zeros(Kc), jac=lambda a: A * a + B, method="SLSQP",
                   bounds=[(None, c) for c in cap],
                   constraints=[{"type": "eq", "fun": lambda a: a.sum(),
                                 "jac": lambda a: np.ones_like(a)}],
                   options={"ftol": 1e-15, "maxiter": 500})  # fmt: skip
    assert f(out) <= res.fun + 1e-9 * max(1.0, abs(res.fun))
    # KKT: a_m = min(cap_m, (beta - B_m) / A) for one beta
    free = out < cap - 1e-12
    if free.any():
        beta = A * out[free] + B[free]
        assert np.ptp(beta) <= 1e-9 * max(1.0, np.abs(beta).max())


def test_crammer_singer_subproblem_degenerate():
    out = np.ones(3)
    cs_subproblem(0.0, np.array([1.0, -1.0, 0.0]), 0, 1.0, out)
    np.testing.assert_array_equal(out, 0.0)
    cs_subproblem(1.0, np.array([1.0, -1.0, 0.0]), 0, 0.0, out)
    np.testing.assert_array_equal(out, 0.0)


# ---------------------------------------------------------------------- whole solution vs QP
def _binary_qp(Kb, y, U):
    Q = (y[:, None] * y[None, :]) * Kb
    res = minimize(lambda a: 0.5 * a @ Q @ a - a.sum(), np.zeros(len(y)),
                   jac=lambda a: Q @ a - 1.0, method="L-BFGS-B", bounds=Bounds(0.0, U),
                   options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 20000})  # fmt: skip
    return res.x, -res.fun


KERNELS = [K.RBF(0.5), K.Linear(), K.Polynomial(2, 0.5, 1.0), K.Laplacian(0.3) + K.Cosine()]


@pytest.mark.parametrize("selection,shrinking", [("greedy", True), ("greedy", False),
                                                 ("random", True), ("random", False)])  # fmt: skip
@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_binary_matches_generic_qp(kernel, selection, shrinking):
    X, y01 = _problem(1)
    y = np.where(y01 == 1, 1.0, -1.0)
    C = 2.0
    sw = np.random.default_rng(0).uniform(0.2, 2.0, len(y))
    clf = KernelSVC(kernel, C=C, tol=1e-11, max_iter=20000, selection=selection,
                    shrinking=shrinking, random_state=0)  # fmt: skip
    clf.fit(X, y01, sample_weight=sw)
    Kb = kernel(X) + 1.0  # intercept_scaling 1: the constant feature
    alpha, dual = _binary_qp(Kb, y, C * sw)
    assert clf.history_[-1]["dual"] == pytest.approx(dual, rel=1e-6)
    f_qp = Kb @ (alpha * y)
    np.testing.assert_allclose(clf.decision_function(X), f_qp, atol=1e-5 * np.abs(f_qp).max())
    h = clf.history_
    assert all(e["gap"] >= -1e-9 * abs(e["primal"]) for e in h)
    assert h[-1]["gap"] <= clf.tol * h[-1]["primal"]
    assert all(abs(e["primal"] - e["dual"] - e["gap"]) <= 1e-8 * abs(e["primal"]) for e in h)


def test_sparse_precomputed_and_float32_agree():
    X, y = _problem(2, n=30)
    k = K.RBF(0.3)
    ref = KernelSVC(k, C=1.0, tol=1e-12, max_iter=5000).fit(X, y).decision_function(X)
    for Xin in (sp.csr_matrix(X), X.astype(np.float32), sp.csr_matrix(X, dtype=np.float32)):
        got = KernelSVC(k, C=1.0, tol=1e-12, max_iter=5000).fit(Xin, y).decision_function(Xin)
        np.testing.assert_allclose(got, ref, atol=1e-5)
    pre = KernelSVC("precomputed", C=1.0, tol=1e-12, max_iter=5000).fit(k(X), y)
    np.testing.assert_allclose(pre.decision_function(k(X)), ref, atol=1e-6)
    assert list(pre.support_) == list(KernelSVC(k, C=1.0, tol=1e-12, max_iter=5000)
                                      .fit(X, y).support_)  # fmt: skip


def _cs_qp(Kb, yc, U, Kc):
    n = len(yc)
    cap = np.zeros((n, Kc))
    cap[np.arange(n), yc] = U
    e = 1.0 - np.eye(Kc)[yc]

    def f(a):
        A = a.reshape(n, Kc)
        return 0.5 * np.sum(A * (Kb @ A)) + np.sum(e * A)

    def g(a):
        A = a.reshape(n, Kc)
        return (Kb @ A + e).ravel()

    cons = LinearConstraint(np.kron(np.eye(n), np.ones((1, Kc))), 0.0, 0.0)
    res = minimize(f, np.zeros(n * Kc), jac=g, method="SLSQP",
                   bounds=[(None, c) for c in cap.ravel()], constraints=[cons],
                   options={"ftol": 1e-15, "maxiter": 2000})  # fmt: skip
    A = _cs_polish(res.x.reshape(n, Kc), Kb, cap, e)
    return A, -(0.5 * np.sum(A * (Kb @ A)) + np.sum(e * A))


def _cs_polish(A0, Kb, cap, e):
    """SLSQP stops near 1e-5; the active set it found, solved exactly: the bounds it reaches
    are fixed and the free variables solve the KKT linear system of the equality-constrained
    QP (Hessian Kb x I, one sum-to-zero constraint per example)."""
    n, Kc = A0.shape
    fixed = (A0 >= cap - 1e-6).ravel()
    free = ~fixed
    H = np.kron(Kb, np.eye(Kc))
    E = np.kron(np.eye(n), np.ones((1, Kc)))
    a_fix = cap.ravel()[fixed]
    Hff = H[np.ix_(free, free)]
    rhs_top = -(e.ravel()[free] + H[np.ix_(free, fixed)] @ a_fix)
    rhs_bot = -(E[:, fixed] @ a_fix)
    Ef = E[:, free]
    KKT = np.block([[Hff, Ef.T], [Ef, np.zeros((n, n))]])
    sol = np.linalg.lstsq(KKT, np.r_[rhs_top, rhs_bot], rcond=None)[0]
    a = np.empty(n * Kc)
    a[fixed] = a_fix
    a[free] = sol[: free.sum()]
    assert np.all(a <= cap.ravel() + 1e-9)  # the active set was right: still feasible
    return a.reshape(n, Kc)


@pytest.mark.parametrize("selection", ["greedy", "random"])
@pytest.mark.parametrize("seed", [0, 1])
def test_crammer_singer_matches_generic_qp(selection, seed):
    X, y = _problem(10 + seed, n=18, K_=3)
    k = K.RBF(0.4)
    clf = KernelSVC(k, C=0.7, multi_class="crammer_singer", tol=1e-11, max_iter=20000,
                    selection=selection, random_state=0).fit(X, y)  # fmt: skip
    Kb = k(X) + 1.0
    A, dual = _cs_qp(Kb, y, np.full(len(y), 0.7), 3)
    assert clf.history_[-1]["dual"] == pytest.approx(dual, rel=1e-6)
    np.testing.assert_allclose(clf.decision_function(X), Kb @ A, atol=1e-6)
    assert clf.history_[-1]["gap"] <= clf.tol * clf.history_[-1]["primal"]
    assert all(e["gap"] >= -1e-9 * abs(e["primal"]) for e in clf.history_)


def test_one_vs_rest_is_one_binary_problem_per_class():
    X, y = _problem(3, n=40, K_=3)
    k = K.RBF(0.5)
    clf = KernelSVC(k, C=1.0, tol=1e-10, max_iter=5000, multi_class="ovr").fit(X, y)
    scores = clf.decision_function(X)
    for c in range(3):
        b = KernelSVC(k, C=1.0, tol=1e-10, max_iter=5000).fit(X, (y == c).astype(int))
        np.testing.assert_allclose(scores[:, c], b.decision_function(X), atol=1e-5)
    assert clf.n_support_.sum() == len(clf.support_)
    assert clf.dual_coef_.shape == (3, len(clf.support_))


def test_edge_cases_tiny_and_huge_C_zero_rows_one_class():
    X, y = _problem(4, n=20)
    X[:3] = 0.0
    for C in (1e-6, 1e4):
        clf = KernelSVC(K.Linear(), C=C, tol=1e-8, max_iter=100000, fit_intercept=False)
        clf.fit(X, y)
        assert clf.history_[-1]["gap"] <= 1e-8 * clf.history_[-1]["primal"]
    one = KernelSVC().fit(X, np.zeros(20, dtype=int))
    assert (one.predict(X) == 0).all()


# ---------------------------------------------------------------------- bad input
def _fitted():
    X, y = _problem(5, n=20)
    return KernelSVC(K.RBF(0.5), C=1.0).fit(X, y), X, y


def test_bad_precomputed_gram_is_refused_and_changes_nothing():
    X, y = _problem(6, n=10)
    Kmat = K.RBF(0.5)(X)
    clf = KernelSVC("precomputed").fit(Kmat, y)
    before = clf.decision_function(Kmat).copy()
    with pytest.raises(ValueError, match="square"):
        clf.fit(Kmat[:, :8], y)
    bad = Kmat.copy()
    bad[0, 1] += 0.1
    with pytest.raises(ValueError, match="symmetric"):
        clf.fit(bad, y)
    bad = Kmat.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN|infinity"):
        clf.fit(bad, y)
    with pytest.raises(ValueError, match="features|columns"):
        clf.predict(Kmat[:, :5])
    np.testing.assert_array_equal(clf.decision_function(Kmat), before)


def test_kernel_nan_is_a_clear_error_and_changes_nothing():
    clf, X, y = _fitted()
    before = clf.decision_function(X).copy()
    clf.set_params(kernel=K.exp(K.Linear() * 1e3))
    with pytest.raises(FloatingPointError, match="NaN or infinity"):
        clf.fit(X * 10, y)
    clf.set_params(kernel=K.RBF(0.5))
    np.testing.assert_array_equal(clf.decision_function(X), before)
    with pytest.raises(TypeError, match="arbitrary function"):
        KernelSVC(kernel=lambda a, b: a @ b.T).fit(X, y)


def test_model_file_round_trip(tmp_path):
    from onlinelearn.model_io import load_model, save_model

    X, y = _problem(7, n=30, K_=3)
    for clf, Xin in [
        (KernelSVC(K.on_features(K.RBF(0.5), [0, 1]) + 0.5 * K.Linear()), sp.csr_matrix(X)),
        (KernelSVC("rbf", multi_class="crammer_singer"), X),
        (KernelSVC("precomputed"), K.RBF(0.2)(X)),
    ]:
        clf.fit(Xin, y)
        save_model(clf, tmp_path / "m.npz")
        back = load_model(tmp_path / "m.npz")
        np.testing.assert_array_equal(back.decision_function(Xin), clf.decision_function(Xin))
        assert back.get_params()["kernel"] == clf.get_params()["kernel"]


@pytest.mark.parametrize("multi_class", ["ovo", "ovr"])
def test_sklearn_estimator_checks(multi_class):
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(KernelSVC(max_iter=200, multi_class=multi_class), expected_failed_checks={
        "check_sample_weight_equivalence_on_dense_data": (
            "stops on a relative duality gap of 1e-3: the two solutions agree to that gap, "
            "not to the 1e-7 the check asks"
        ),
        "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
    })  # fmt: skip


# ---------------------------------------------------------------------- real data
def test_accuracy_close_to_sklearn_svc_on_pendigits_subsample():
    from _data import require_shared_data
    from sklearn.svm import SVC

    from onlinelearn.datasets import load_shared

    require_shared_data("pendigits")
    X, y = load_shared("pendigits", "train")
    Xt, yt = load_shared("pendigits", "test")
    X, y, Xt, yt = X[:1500], y[:1500], Xt[:1500], yt[:1500]
    ours = KernelSVC(K.RBF(2.0), C=10.0, random_state=0).fit(X, y).score(Xt, yt)
    ref = SVC(kernel="rbf", gamma=2.0, C=10.0).fit(X, y).score(Xt, yt)
    assert ours >= ref - 0.005


def test_class_weight_is_sample_weight_per_class():
    X, y = _problem(8, n=40, K_=3)
    cw = {0: 2.0, 2: 0.5}
    a = KernelSVC(K.RBF(0.5), class_weight=cw, tol=1e-10, max_iter=5000).fit(X, y)
    sw = np.array([cw.get(c, 1.0) for c in y])
    b = KernelSVC(K.RBF(0.5), tol=1e-10, max_iter=5000).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-8)
    counts = np.bincount(y)
    bal = KernelSVC(K.RBF(0.5), class_weight="balanced", tol=1e-10, max_iter=5000).fit(X, y)
    swb = (len(y) / (3 * counts))[y]
    c = KernelSVC(K.RBF(0.5), tol=1e-10, max_iter=5000).fit(X, y, sample_weight=swb)
    np.testing.assert_allclose(bal.decision_function(X), c.decision_function(X), atol=1e-8)


# ---------------------------------------------------------------------- one-vs-one
OVO_CASES = [
    (K.RBF(0.5), "dense"),
    (K.Polynomial(2, 0.5, 1.0), "dense"),
    (K.Laplacian(0.3) + K.Cosine(), "csr"),
    (K.RBF(0.5), "precomputed"),
]


def _pairs(n_classes):
    return [(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)]


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("kernel,mode", OVO_CASES, ids=lambda v: repr(v))
def test_one_vs_one_pairs_match_generic_qp(kernel, mode, seed):
    """Each pair problem (a, b) is the binary dual over the rows of a and b, solved to the
    generic QP's optimum; the other rows get no coefficient."""
    X, y = _problem(20 + seed, n=32, K_=4)
    sw = np.random.default_rng(seed).uniform(0.2, 2.0, len(y))
    C = [0.5, 50.0][seed]
    Xin = {"dense": X, "csr": sp.csr_matrix(X), "precomputed": kernel(X)}[mode]
    est = KernelSVC("precomputed" if mode == "precomputed" else kernel, C=C, tol=1e-11,
                    max_iter=20000)  # fmt: skip
    clf = est.fit(Xin, y, sample_weight=sw)
    assert clf.history_[-1]["gap"] <= clf.tol * clf.history_[-1]["primal"]
    assert all(e["gap"] >= -1e-9 * abs(e["primal"]) for e in clf.history_)
    Kb = kernel(X) + 1.0
    coef = np.zeros((6, len(y)))
    coef[:, clf.support_] = clf.dual_coef_
    duals = 0.0
    votes = np.zeros((len(y), 4))
    for p, (a, b) in enumerate(_pairs(4)):
        rows = np.flatnonzero((y == a) | (y == b))
        yy = np.where(y[rows] == a, 1.0, -1.0)
        alpha, dual = _binary_qp(Kb[np.ix_(rows, rows)], yy, C * sw[rows])
        duals += dual
        f_qp = Kb[:, rows] @ (alpha * yy)
        f = Kb[:, clf.support_] @ clf.dual_coef_[p]
        np.testing.assert_allclose(f, f_qp, atol=1e-6 * max(1.0, np.abs(f_qp).max()))
        assert np.all(coef[p, (y != a) & (y != b)] == 0.0)
        assert np.all(coef[p, y == a] >= 0.0) and np.all(coef[p, y == b] <= 0.0)
        votes[:, a] += f_qp >= 0.0
        votes[:, b] += f_qp < 0.0
    assert clf.history_[-1]["dual"] == pytest.approx(duals, rel=1e-6)
    # predictions are the votes (where the QP's votes have one winner)
    scores = clf.decision_function(Xin)
    assert scores.shape == (len(y), 4)
    top = np.sort(votes, axis=1)
    clear = top[:, -1] > top[:, -2]
    assert clear.sum() >= len(y) // 2
    np.testing.assert_array_equal(clf.predict(Xin)[clear], votes.argmax(axis=1)[clear])
    np.testing.assert_array_equal(clf.predict(Xin), scores.argmax(axis=1))
    np.testing.assert_array_equal(np.floor(scores + 0.5), votes)


def test_one_vs_one_edge_cases():
    X, y = _problem(30, n=24, K_=3)
    X[:, :3] += 6.0 * np.eye(3)[y]  # separable pairs: huge C is a finite hard margin
    X[:3] = 0.0
    for C in (1e-6, 1e4):
        clf = KernelSVC(K.Linear(), C=C, tol=1e-8, max_iter=100000, fit_intercept=False)
        clf.fit(X, y)
        assert clf.history_[-1]["gap"] <= 1e-8 * clf.history_[-1]["primal"]
    # a class with a single row, string labels, and a tiny cache (two segments: LRU eviction)
    y2 = np.array(["a", "b", "c"])[y]
    y2[0] = "z"
    big = KernelSVC(K.RBF(0.5), C=3.0, tol=1e-10, max_iter=5000).fit(X, y2)
    small = KernelSVC(K.RBF(0.5), C=3.0, tol=1e-10, max_iter=5000, cache_size=1e-6).fit(X, y2)
    assert small.cache_misses_ > big.cache_misses_
    np.testing.assert_allclose(small.decision_function(X), big.decision_function(X), atol=1e-8)
    assert set(big.predict(X)) <= set(y2)


def test_one_vs_one_needs_greedy_and_bad_input_changes_nothing():
    X, y = _problem(31, n=30, K_=3)
    clf = KernelSVC(K.RBF(0.5)).fit(X, y)
    before = clf.decision_function(X).copy()
    with pytest.raises(ValueError, match="greedy"):
        clf.set_params(selection="random").fit(X, y)
    clf.set_params(selection="greedy", kernel=K.exp(K.Linear() * 1e3))
    with pytest.raises(FloatingPointError, match="NaN or infinity"):
        clf.fit(X * 10, y)
    np.testing.assert_array_equal(clf.decision_function(X), before)


def test_one_vs_one_model_file(tmp_path):
    from onlinelearn.model_io import load_model, save_model

    X, y = _problem(32, n=30, K_=4)
    clf = KernelSVC(K.RBF(0.5), multi_class="ovo").fit(sp.csr_matrix(X), y)
    save_model(clf, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))


def test_one_vs_one_accuracy_close_to_sklearn_svc_on_pendigits_subsample():
    from _data import require_shared_data
    from sklearn.svm import SVC

    from onlinelearn.datasets import load_shared

    require_shared_data("pendigits")
    X, y = load_shared("pendigits", "train")
    Xt, yt = load_shared("pendigits", "test")
    X, y, Xt, yt = X[:2000], y[:2000], Xt[:2000], yt[:2000]
    ours = KernelSVC(K.RBF(2.0), C=10.0).fit(X, y)
    ref = SVC(kernel="rbf", gamma=2.0, C=10.0).fit(X, y)
    assert ours.score(Xt, yt) >= ref.score(Xt, yt) - 0.005
    # the same decomposition as libsvm: mostly the same predictions
    assert np.mean(ours.predict(Xt) == ref.predict(Xt)) >= 0.98
