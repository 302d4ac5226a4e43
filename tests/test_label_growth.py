"""Labels that arrive after the first call: DualAscentClassifier and ClassDependentPA.

What the learners solve after growth (docstrings of ``onlinelearn.dual_ascent._grow`` and
``ClassDependentPA``): a round's rival is the highest-scoring label known at that round; a
two-class model (one vector w) becomes the columns (-w/2, w/2) and its past dual variables
halve.  Checked here against solutions of that problem computed independently:

* window steps: after every row, the kept D equals D recomputed from ``dual_coef_``, the rows
  and the rounds' label pairs (recorded here from the scores before each row), W = sum tau u,
  weak duality D <= P(W) and D <= P(0), D never decreasing except when two labels become three;
* growing-c steps: the kept D_t equals D_t recomputed from the state; on the Euclidean link
  also v = sum alpha u and D_t <= P_t(w); the two-to-three conversion is exact;
* last-k with k = 1 is PassiveAggressiveClassifier, labels growing in both (another code path);
* ClassDependentPA's rounds equal a generic QP (SLSQP) whose rivals are the known labels;
* announcing a label with ``classes=`` on a later call equals meeting it in a row's label only
  up to that row: both join before the row learns;
* bad input (a label of another type, a custom feature map meeting a new label) changes nothing.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from onlinelearn import ClassDependentPA, DualAscentClassifier, PassiveAggressiveClassifier
from onlinelearn._core import dual_ascent as DA
from onlinelearn.dual_ascent._grow import grow_labels

_LINK = {"euclidean": 0, "entropy": 1, "pnorm": 2}


def _stream(seed, n=40, d=5, labels=(0, 1, 2, 3), first=(0, 1), late=10):
    """Rows whose first ``late`` labels are drawn from ``first`` only, then from ``labels``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    y = rng.choice(np.asarray(labels), size=n)
    y[:late] = rng.choice(np.asarray(first), size=late)
    return X, y


#: (labels of the first rows, all labels): 2 -> 4 (one vector to columns), 3 -> 5 with new
#: labels in between the known ones (renumbering), 1 -> 3 (nothing learned, then columns),
#: 1 -> 2 (stays one vector)
SCENARIOS = [((0, 1), (0, 1, 2, 3)), ((1, 3, 5), (0, 1, 2, 3, 5)), ((2,), (0, 1, 2)),
             ((4,), (4, 7))]  # fmt: skip


def _state_matrix(clf):
    S = clf._state
    return S["theta"] if "theta" in S else S["V"]


def _run_recording(clf, X, y, sw, b):
    """partial_fit row by row (labels growing); returns the rounds' label pairs (y_t, r_t)
    (None: one known label, no round), the kept D after each row and whether the row turned
    two labels into more."""
    pairs, duals, splits = [], [], []
    for t in range(len(y)):
        known = list(clf.classes_) if hasattr(clf, "classes_") else []
        now = sorted(set(known) | {y[t]})
        split = len(known) == 2 and len(now) > 2
        if len(now) < 2:
            pairs.append(None)
        elif len(now) == 2:
            pairs.append((y[t], now[1 - now.index(y[t])]))
        else:
            s = np.zeros(len(now))
            if known:
                M = _state_matrix(clf)
                xa = np.append(X[t], b) if b else X[t]
                f = xa @ M
                idx = [now.index(c) for c in known]
                if M.shape[1] == 1:  # two known labels: scores -f/2, f/2
                    s[idx] = (-0.5 * f[0], 0.5 * f[0]) if len(known) == 2 else 0.0
                else:
                    s[idx] = f
            s[now.index(y[t])] = -np.inf
            pairs.append((y[t], now[int(np.argmax(s))]))
        clf.partial_fit(X[t : t + 1], y[t : t + 1], sample_weight=sw[t : t + 1])
        duals.append(clf.dual_objective_)
        splits.append(split)
    return pairs, np.array(duals), np.array(splits)


def _us(clf, Xa, pairs):
    """u_t of every round in the model's final layout (rows of U: (R, n_cols) each)."""
    cls = list(clf.classes_)
    n_cols = _state_matrix(clf).shape[1]
    U = np.zeros((len(pairs), Xa.shape[1], n_cols))
    for t, pr in enumerate(pairs):
        if pr is None:
            continue
        yl, rl = pr
        if n_cols == 1:
            U[t, :, 0] = Xa[t] * (1.0 if cls.index(yl) == 1 else -1.0)
        else:
            U[t, :, cls.index(yl)] += Xa[t]
            U[t, :, cls.index(rl)] -= Xa[t]
    return U


WINDOW = [("last-k", 1, "PA-I"), ("last-k", 2, "PA-I"), ("last-k", 2, "PA-II"),
          ("last-k", 4, "PA-I"), ("row-action", 3, "PA-II"), ("ftrl", 1, "PA-I")]  # fmt: skip


@pytest.mark.parametrize("step,k,variant", WINDOW)
@pytest.mark.parametrize("first,labels", SCENARIOS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_window_dual_after_growth_is_the_dual_of_the_pairs(step, k, variant, first, labels,
                                                           fit_intercept):  # fmt: skip
    X, y = _stream(len(labels) * 10 + k, labels=labels, first=first)
    X[12] = 0.0  # a zero row
    sw = np.random.default_rng(k).uniform(0.3, 2.0, size=len(y))
    C, gamma = 0.4, 1.0
    clf = DualAscentClassifier(step=step, k=k, variant=variant, C=C, margin=gamma,
                               fit_intercept=fit_intercept, max_sweeps=5000, tol=1e-10)  # fmt: skip
    b = 1.0 if fit_intercept else 0.0
    pairs, duals, splits = _run_recording(clf, X, y, sw, b)
    Xa = np.hstack([X, np.ones((len(y), 1))]) if b else X
    U = _us(clf, Xa, pairs)
    tau = clf.dual_coef_
    W = np.einsum("t,trk->rk", tau, U)
    W_est = _state_matrix(clf)
    np.testing.assert_allclose(W_est, W, atol=1e-10 * (1.0 + np.abs(W).max()))
    D = gamma * tau.sum() - 0.5 * np.sum(W * W)
    if variant == "PA-II":
        D -= np.sum(tau**2 / (4.0 * C * sw))
    assert clf.dual_objective_ == pytest.approx(D, rel=1e-9, abs=1e-11)
    # weak duality at the learner's weights and at 0 (any W bounds D)
    z = np.einsum("trk,rk->t", U, W_est)
    active = np.array([p is not None for p in pairs])
    slack = np.maximum(gamma - z, 0.0) * active
    P = 0.5 * np.sum(W_est**2) + C * np.sum(sw * (slack**2 if variant == "PA-II" else slack))
    assert clf.dual_objective_ <= P + 1e-9 * (1.0 + abs(P))
    P0 = C * np.sum(sw * active) * (gamma**2 if variant == "PA-II" else gamma)
    assert clf.dual_objective_ <= P0 + 1e-9 * P0
    # D never decreases, except where two labels became more (D is then the new problem's)
    steps = np.diff(np.concatenate([[0.0], duals]))
    assert np.all(steps[~splits] >= -1e-10 * (1.0 + np.abs(duals[~splits])))
    assert list(clf.classes_) == sorted(set(y))


@pytest.mark.parametrize("step", ["last-k", "ftrl"])
def test_two_labels_to_three_halves_the_dual_variables(step):
    X, y = _stream(5, labels=(0, 1), first=(0, 1))
    clf = DualAscentClassifier(step=step, k=2, variant="PA-II", C=0.7, max_sweeps=5000)
    clf.partial_fit(X, y)
    w = clf._state["theta"][:, 0].copy()
    tau = clf.dual_coef_
    D = clf.dual_objective_
    snap = {k: v.copy() for k, v in clf._state.items()}
    grow_labels(clf, np.array([0, 1, 2]), clf._plan())
    theta = clf._state["theta"]
    np.testing.assert_array_equal(theta, np.column_stack([-0.5 * w, 0.5 * w, 0 * w]))
    np.testing.assert_array_equal(clf.dual_coef_, 0.5 * tau)
    n = int(snap["st"][DA.N_STORED])
    np.testing.assert_array_equal(clf._state["Sf"][:n, DA.Q], 2.0 * snap["Sf"][:n, DA.Q])
    # D' = gamma sum tau' - 1/2 ||W||^2 - sum tau'^2 / (4 C s): Q = sum tau^2 / (4 C) from D
    quad = tau.sum() - 0.5 * w @ w - D
    want = 0.5 * tau.sum() - 0.5 * np.sum(theta**2) - 0.25 * quad
    assert clf.dual_objective_ == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert clf.dual_objective_ == pytest.approx(
        0.5 * tau.sum() - 0.5 * np.sum(theta**2) - np.sum((0.5 * tau) ** 2 / (4 * 0.7)),
        rel=1e-9)  # fmt: skip
    # the decisions and the margins of the known labels are kept
    S = X @ theta[:-1] + theta[-1]
    np.testing.assert_allclose(S[:, 1] - S[:, 0], X @ w[:-1] + w[-1], rtol=1e-12, atol=1e-14)


GROWING_C = [("self-tuned", "euclidean"), ("strongly-convex", "euclidean"),
             ("self-tuned", "entropy"), ("strongly-convex", "pnorm"), ("row-action", "entropy"),
             ("row-action", "pnorm")]  # fmt: skip


@pytest.mark.parametrize("step,link", GROWING_C)
@pytest.mark.parametrize("first,labels", SCENARIOS)
@pytest.mark.parametrize("k", [1, 3])
def test_growing_c_dual_after_growth(step, link, first, labels, k):
    X, y = _stream(7 + k, labels=labels, first=first)
    sw = np.ones(len(y))
    gamma = 0.5
    clf = DualAscentClassifier(step=step, link=link, k=k, U=0.5, sigma=0.2, margin=gamma,
                               C=0.5)  # fmt: skip
    pairs, duals, splits = _run_recording(clf, X, y, sw, 1.0)
    st = clf._state["st"]  # the final state, recomputed
    ref = DA.tuned_dual(_LINK[link], clf._state["V"], st[DA.C_T], clf._p_value(), gamma,
                        clf.dual_coef_.sum())  # fmt: skip
    assert clf.dual_objective_ == pytest.approx(ref, rel=1e-9, abs=1e-12)
    if link == "euclidean" and k == 1:
        Xa = np.hstack([X, np.ones((len(y), 1))])
        U = _us(clf, Xa, pairs)
        alpha = clf.dual_coef_
        V = np.einsum("t,trk->rk", alpha, U)
        np.testing.assert_allclose(clf._state["V"], V, atol=1e-10 * (1 + np.abs(V).max()))
        c = float(st[DA.C_T])
        w = V / c
        z = np.einsum("trk,rk->t", U, w)
        active = np.array([p is not None for p in pairs])
        P = 0.5 * c * np.sum(w * w) + np.sum(np.maximum(gamma - z, 0.0) * active)
        assert clf.dual_objective_ <= P + 1e-9 * (1 + abs(P))
    if step == "row-action":  # a fixed c: D never decreases but where two labels became more
        steps = np.diff(np.concatenate([[0.0], duals]))
        assert np.all(steps[~splits] >= -1e-10 * (1.0 + np.abs(duals[~splits])))


@pytest.mark.parametrize("link", ["euclidean", "entropy", "pnorm"])
@pytest.mark.parametrize("known", [(0, 1), (0, 2, 4)])
def test_growing_c_growth_is_exact(link, known):
    """The state after growth, before any further round: two labels -> (-v/2, v/2) and
    alpha / 2; K >= 3 -> the columns renumbered; D_t recomputed at the last c_t (the entropy
    link's N and the default p change with the number of weights)."""
    X, y = _stream(11, labels=known, first=known)
    clf = DualAscentClassifier(step="self-tuned", link=link, k=2).partial_fit(X, y)
    v = clf._state["V"].copy()
    alpha = clf.dual_coef_
    new = np.array(sorted(set(known) | {3}))
    grow_labels(clf, new, clf._plan())
    V = clf._state["V"]
    if len(known) == 2:
        np.testing.assert_array_equal(V, np.column_stack([-0.5 * v[:, 0], 0.5 * v[:, 0],
                                                          0 * v[:, 0]]))  # fmt: skip
        alpha = 0.5 * alpha
    else:
        np.testing.assert_array_equal(V[:, [0, 1, 3]], v)
        np.testing.assert_array_equal(V[:, 2], 0.0)
    np.testing.assert_array_equal(clf.dual_coef_, alpha)
    np.testing.assert_array_equal(clf.classes_, new)
    st = clf._state["st"]
    assert st[DA.SUM_ALPHA] == pytest.approx(alpha.sum(), rel=1e-12)
    assert st[DA.VSQ] == pytest.approx(np.sum(V * V), rel=1e-12)
    p = clf._p_value()
    if link == "pnorm":
        assert p == pytest.approx(max(2.0, 2.0 * np.log(V.size)))
    ref = DA.tuned_dual(_LINK[link], V, st[DA.C_T], p, 1.0, alpha.sum())
    assert clf.dual_objective_ == pytest.approx(ref, rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("variant", ["PA", "PA-I", "PA-II"])
@pytest.mark.parametrize("first,labels", SCENARIOS)
def test_k1_is_passive_aggressive_with_growing_labels(variant, first, labels):
    X, y = _stream(3, labels=labels, first=first)
    sw = np.random.default_rng(1).uniform(0.2, 2.0, size=len(y))
    da = DualAscentClassifier(variant=variant, C=0.3)
    pa = PassiveAggressiveClassifier(variant=variant, C=0.3, average=False)
    for t in range(len(y)):
        kw = {} if variant == "PA" else {"sample_weight": sw[t : t + 1]}
        p1 = da.partial_fit_predict(X[t : t + 1], y[t : t + 1], **kw)
        p2 = pa.partial_fit_predict(X[t : t + 1], y[t : t + 1], **kw)
        np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(da.classes_, pa.classes_)
    np.testing.assert_allclose(da.coef_, pa.coef_, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(da.intercept_, pa.intercept_, rtol=1e-12, atol=1e-13)
    assert da.n_mistakes_ == pa.n_mistakes_


@pytest.mark.parametrize("make", [lambda: DualAscentClassifier(step="last-k", k=3),
                                  lambda: DualAscentClassifier(step="self-tuned", link="entropy"),
                                  lambda: ClassDependentPA(n_epochs=1)])  # fmt: skip
def test_announced_label_equals_met_label(make):
    """classes= on a later call adds the label before the call's rows, as a row's label does
    before that row learns: the same model, bit for bit."""
    X, y = _stream(2, labels=(0, 1, 2, 3), first=(0, 1), late=15)
    t0 = int(np.argmax(y == 3))
    a, b = make(), make()
    a.partial_fit(X[:10], y[:10])
    b.partial_fit(X[:10], y[:10])
    for t in range(10, len(y)):
        a.partial_fit(X[t : t + 1], y[t : t + 1])
        kw = {"classes": [3, 0]} if t == t0 else {}
        b.partial_fit(X[t : t + 1], y[t : t + 1], **kw)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.classes_, b.classes_)


@pytest.mark.parametrize("make", [lambda: DualAscentClassifier(step="ftrl", max_sweeps=5000),
                                  lambda: ClassDependentPA(n_epochs=1)])  # fmt: skip
def test_bad_labels_change_nothing(make):
    X, y = _stream(4, labels=(0, 1, 2))
    clf = make().partial_fit(X, y)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(clf).items()
              if k in ("coef_", "classes_", "_st", "class_counts_")}  # fmt: skip
    state = {k: v.copy() for k, v in getattr(clf, "_state", {}).items()}
    with pytest.raises(ValueError, match="cannot join|type"):
        clf.partial_fit(X[:3], np.array(["a", "b", "c"]))
    with pytest.raises(ValueError, match="NaN"):
        Xn = X[:3].copy()
        Xn[1, 0] = np.nan
        clf.partial_fit(Xn, np.array([0, 5, 1]))  # a new label and a bad row: no growth
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(clf, k), v)
    for k, v in state.items():
        np.testing.assert_array_equal(clf._state[k], v)


def test_custom_feature_map_refuses_new_labels():
    X, y = _stream(6, labels=(0, 1, 2), late=0)
    P = np.random.default_rng(0).normal(size=(3, 4))
    clf = ClassDependentPA(feature_map=lambda X, r, k: np.tile(P[r], (X.shape[0], 1)) * X[:, :1])
    clf.partial_fit(X, y)
    coef = clf.coef_.copy()
    with pytest.raises(ValueError, match="custom feature_map"):
        clf.partial_fit(X[:2], np.array([0, 9]))
    np.testing.assert_array_equal(clf.coef_, coef)
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])


def _qp_step(w0, A, C, gamma):
    """argmin_w 1/2 ||w - w0||^2 + C max_r [gamma - <w, a_r>]_+ (SLSQP in (w, xi))."""
    D = w0.size
    cons = [{"type": "ineq", "fun": lambda z, a=a: z[D] - gamma + a @ z[:D],
             "jac": lambda z, a=a: np.concatenate([a, [1.0]])} for a in A]  # fmt: skip
    z0 = np.concatenate([w0, [max(0.0, gamma - (A @ w0).min())]])
    res = minimize(lambda z: 0.5 * np.sum((z[:D] - w0) ** 2) + C * z[D], z0,
                   jac=lambda z: np.concatenate([z[:D] - w0, [C]]), method="SLSQP",
                   constraints=cons, bounds=[(None, None)] * D + [(0, None)],
                   options={"ftol": 1e-15, "maxiter": 1000})  # fmt: skip
    return res.x[:D]


@pytest.mark.parametrize("seed", range(6))
def test_class_dependent_rounds_are_qps_over_the_known_labels(seed):
    rng = np.random.default_rng(seed)
    labels = tuple(sorted(rng.choice(10, size=int(rng.integers(3, 6)), replace=False)))
    first = labels[: int(rng.integers(1, 3))]
    X, y = _stream(seed, n=25, d=3, labels=labels, first=first, late=6)
    C, gamma = float(10 ** rng.uniform(-1, 1)), 1.0
    clf = ClassDependentPA(C=C, margin=gamma, n_epochs=1, step_tol=1e-14)
    Wref = np.zeros((len(labels), X.shape[1]))  # blocks in the final label order
    known = set()
    for t in range(len(y)):
        known |= {y[t]}
        kn = sorted(known)
        if len(kn) >= 2:
            yi = labels.index(y[t])
            A = []
            for r in kn:
                if r == y[t]:
                    continue
                a = np.zeros_like(Wref)
                a[yi], a[labels.index(r)] = X[t], -X[t]
                A.append(a.ravel())
            Wref = _qp_step(Wref.ravel(), np.array(A), C, gamma).reshape(Wref.shape)
        clf.partial_fit(X[t : t + 1], y[t : t + 1])
        got = np.zeros_like(Wref)
        got[[labels.index(c) for c in clf.classes_]] = clf.coef_.reshape(len(clf.classes_), -1)
        np.testing.assert_allclose(got, Wref, atol=1e-5 * (1.0 + np.abs(Wref).max()))
    np.testing.assert_array_equal(clf.classes_, labels)
