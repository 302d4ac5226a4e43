"""dual_objective_ of the kernel online learners and of InstanceRanker (the kept dual).

* the kept dual equals the dual recomputed from scratch from the stored dual variables: the
  support vectors, their coefficients and the kernel (Gram computed here in NumPy), with
  sum_t tau_t = sum_s y_s c_s (binary) or sum_s c_{s, y_s} (multiclass);
* weak duality at every round: D_t <= P_t(f) for the current and the averaged hypothesis, P_t
  the primal over the rounds so far, evaluated here (kernel values in NumPy), not by the library;
* the same on a slice of a shared data set (dna);
* InstanceRanker: D = sum_t sum_p alpha_tp (y_i - y_j) - 1/2 ||w||^2 against an independent
  NumPy run of the subgradient update, and weak duality for its instance-ranking primal.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data

from onlinelearn import (
    KernelCOPA,
    KernelPassiveAggressive,
    KernelPerceptron,
    PassiveAggressiveClassifier,
    Perceptron,
)
from onlinelearn import kernels as K
from onlinelearn.ranking import InstanceRanker


def _stream(seed, n=90, d=5, Kc=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.3, 2.0, size=d)
    y = (X @ rng.normal(size=(d, Kc))).argmax(1)
    flip = rng.random(n) < 0.15
    y[flip] = rng.integers(0, Kc, flip.sum())
    return X, y


# the kernels (library objects) and the same functions written here in NumPy
def _rbf(A, B, g=0.3):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-g * np.maximum(d2, 0.0))


KERNELS = {
    "rbf": (K.RBF(gamma=0.3), _rbf),
    "poly": (K.Polynomial(degree=2, gamma=0.5, coef0=1.0), lambda A, B: (0.5 * A @ B.T + 1) ** 2),
    "laplacian": (K.Laplacian(gamma=0.2),
                  lambda A, B: np.exp(-0.2 * np.abs(A[:, None, :] - B[None]).sum(-1))),
    "linear": (K.Linear(), lambda A, B: A @ B.T),
}  # fmt: skip


def _dense(M):
    return np.asarray(M.todense()) if sp.issparse(M) else np.asarray(M)


def _parts(est, kfun):
    """(support vectors, current coefficients (n_sv, n_cols), label codes, b^2)."""
    n = est._n_sv
    return _dense(est.support_vectors_), est._coef[:n].copy(), est._label[:n].copy(), est._b2


def _recomputed_dual(est, kfun, gamma, quad_weights=None):
    """D from the stored variables: gamma sum_t tau_t - [PA-II] sum tau^2 / (4 C_t) -
    1/2 sum_k c_k' (G + b^2) c_k, where each support vector was updated once (``quad_weights``:
    C_t of each support vector's round, PA-II only)."""
    SV, c, lab, b2 = _parts(est, kfun)
    if len(lab) == 0:
        return 0.0
    G = kfun(SV, SV) + b2
    if c.shape[1] == 1:
        tau = np.where(lab == 1, 1.0, -1.0) * c[:, 0]
    else:
        tau = c[np.arange(len(lab)), lab]
    D = gamma * tau.sum() - 0.5 * np.einsum("sk,st,tk->", c, G, c)
    if quad_weights is not None:
        D -= np.sum(tau * tau / (4.0 * quad_weights(lab)))
    return D


CASES = [
    # (factory, gamma of the dual, C_t of a label for PA-II (None: no quadratic term))
    (lambda k: KernelPerceptron(k), 1.0, None),
    (lambda k: KernelPassiveAggressive(k, variant="PA", fit_intercept=False), 1.0, None),
    (lambda k: KernelPassiveAggressive(k, variant="PA-I", C=0.2, class_weight={0: 2.0}), 1.0,
     None),
    (lambda k: KernelPassiveAggressive(k, variant="PA-I", C=0.2, margin=0.5,
                                       intercept_scaling=2.0, average=False), 0.5, None),
    (lambda k: KernelPassiveAggressive(k, variant="PA-II", C=0.3, class_weight={1: 0.5}), 1.0,
     lambda lab: 0.3 * np.where(lab == 1, 0.5, 1.0)),
]  # fmt: skip


@pytest.mark.parametrize("kname", list(KERNELS))
@pytest.mark.parametrize("Kc", [2, 3])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_kept_dual_equals_dual_recomputed_from_the_support_set(case, Kc, kname):
    make, gamma, quad = CASES[case]
    kobj, kfun = KERNELS[kname]
    for seed in range(2):
        X, y = _stream(seed, Kc=Kc)
        est = make(kobj)
        # in chunks; the first chunk holds two labels only, so a 3-class model starts binary
        # and its columns are split when the third label arrives
        first = np.flatnonzero(y < 2)[:30]
        rest = np.setdiff1d(np.arange(len(y)), first)
        est.partial_fit(X[first], y[first])
        for part in np.array_split(rest, 3):
            est.partial_fit(X[part], y[part])
            D = _recomputed_dual(est, kfun, gamma, quad)
            assert np.isfinite(est.dual_objective_)
            assert est.dual_objective_ == pytest.approx(D, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("Kc", [2, 3])
def test_kept_dual_after_several_epochs_and_on_csr(Kc):
    """fit over several epochs: a row updated in several rounds adds its tau_t to one slot."""
    kobj, kfun = KERNELS["rbf"]
    X, y = _stream(5, Kc=Kc)
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    for est in (KernelPerceptron(kobj, n_epochs=3, random_state=0),
                KernelPassiveAggressive(kobj, C=0.5, n_epochs=3, random_state=1)):  # fmt: skip
        est.fit(Xs, y)
        assert est.n_updates_ > est._n_sv  # some rows did update twice
        D = _recomputed_dual(est, kfun, 1.0)
        assert est.dual_objective_ == pytest.approx(D, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("Kc", [2, 3])
def test_linear_kernel_keeps_the_linear_twins_dual(Kc):
    X, y = _stream(3, Kc=Kc)
    pairs = [
        (KernelPerceptron("linear", average=False), Perceptron(average=False)),
        (KernelPassiveAggressive("linear", variant="PA-II", C=0.4, margin=0.7),
         PassiveAggressiveClassifier(variant="PA-II", C=0.4, margin=0.7)),
        (KernelPassiveAggressive("linear", C=0.1, fit_intercept=False),
         PassiveAggressiveClassifier(C=0.1, fit_intercept=False)),
    ]  # fmt: skip
    for ker, lin in pairs:
        ker.partial_fit(X, y, classes=np.arange(Kc))
        lin.partial_fit(X, y, classes=np.arange(Kc))
        assert ker.dual_objective_ == pytest.approx(lin.dual_objective_, rel=1e-10)


def _primal(est, kfun, X, y, coef, gamma, Ct, squared=False):
    """P(f) = 1/2 ||f||_H^2 + sum_t C_t loss_t(f) for f = sum_s coef_s (k(x_s, .) + b^2)."""
    SV, _, _, b2 = _parts(est, kfun)
    if len(SV) == 0:
        S = np.zeros((len(y), coef.shape[1]))
        norm2 = 0.0
    else:
        S = (kfun(X, SV) + b2) @ coef
        norm2 = np.einsum("sk,st,tk->", coef, kfun(SV, SV) + b2, coef)
    if coef.shape[1] == 1:
        m = np.where(y == 1, 1.0, -1.0) * S[:, 0]
    else:
        S2 = S.copy()
        S2[np.arange(len(y)), y] = -np.inf
        m = S[np.arange(len(y)), y] - S2.max(1)
    h = np.maximum(gamma - m, 0.0)
    return 0.5 * norm2 + np.sum(Ct * (h * h if squared else h))


def _check_weak_duality_row_by_row(est, kfun, X, y, gamma, Ct, squared=False, classes=None):
    duals = []
    for t in range(len(y)):
        est.partial_fit(X[t : t + 1], y[t : t + 1], classes=classes)
        D = est.dual_objective_
        duals.append(D)
        for coef in (est._coef[: est._n_sv], est._coef_in_use()):
            P = _primal(est, kfun, X[: t + 1], y[: t + 1], coef, gamma, Ct[: t + 1], squared)
            assert D <= P + 1e-9 * max(1.0, abs(P)), (t, D, P)
    return np.array(duals)


@pytest.mark.parametrize("Kc", [2, 3])
@pytest.mark.parametrize("kname", ["rbf", "poly"])
def test_weak_duality_every_round(kname, Kc):
    kobj, kfun = KERNELS[kname]
    X, y = _stream(11, n=60, Kc=Kc)
    classes = np.arange(Kc)
    ones = np.ones(len(y))
    D = _check_weak_duality_row_by_row(KernelPerceptron(kobj), kfun, X, y, 1.0, ones,
                                       classes=classes)  # fmt: skip
    assert D[-1] != 0.0
    for variant, squared in (("PA-I", False), ("PA-II", True)):
        est = KernelPassiveAggressive(kobj, variant=variant, C=0.2, class_weight={0: 3.0})
        Ct = 0.2 * np.where(y == 0, 3.0, 1.0)
        D = _check_weak_duality_row_by_row(est, kfun, X, y, 1.0, Ct, squared, classes=classes)
        assert np.all(np.diff(D) >= -1e-12)  # the aggressive step never lowers the dual


def test_weak_duality_with_sample_weights_and_epochs():
    """C_t = C s_t (sample_weight); fit's epochs are rounds of the primal (each row n times)."""
    kobj, kfun = KERNELS["rbf"]
    X, y = _stream(13, n=50, Kc=3)
    sw = np.random.default_rng(0).uniform(0.0, 3.0, len(y))
    est = KernelPassiveAggressive(kobj, variant="PA-I", C=0.3)
    for t in range(len(y)):
        est.partial_fit(X[t : t + 1], y[t : t + 1], classes=np.arange(3),
                        sample_weight=sw[t : t + 1])  # fmt: skip
        for coef in (est._coef[: est._n_sv], est._coef_in_use()):
            P = _primal(est, kfun, X[: t + 1], y[: t + 1], coef, 1.0, 0.3 * sw[: t + 1])
            assert est.dual_objective_ <= P + 1e-9 * max(1.0, P), t
    for make in (lambda: KernelPassiveAggressive(kobj, C=0.3, n_epochs=4, random_state=0),
                 lambda: KernelPerceptron(kobj, n_epochs=4, random_state=0)):  # fmt: skip
        est = make().fit(X, y)
        C = 0.3 if isinstance(est, KernelPassiveAggressive) else 1.0
        for coef in (est._coef[: est._n_sv], est._coef_in_use()):
            P = _primal(est, kfun, X, y, coef, 1.0, np.full(len(y), 4 * C))
            assert est.dual_objective_ <= P + 1e-9 * max(1.0, P)


def test_weak_duality_on_dna():
    """A slice of the shared dna set (3 classes, 180 binary features), RBF, row by row."""
    from onlinelearn.datasets import load_dna

    require_shared_data("dna", "train")
    X_all, y_all = load_dna("train")
    X, y = _dense(X_all[:150]), np.asarray(y_all[:150])
    classes = np.unique(np.asarray(y_all))
    codes = np.searchsorted(classes, y)
    kobj, kfun = K.RBF(gamma=0.02), (lambda A, B: _rbf(A, B, 0.02))
    est = KernelPassiveAggressive(kobj, variant="PA-I", C=0.5)
    D = _check_weak_duality_row_by_row(est, kfun, X, codes, 1.0, np.full(len(y), 0.5),
                                       classes=np.arange(len(classes)))  # fmt: skip
    assert D[-1] > 0 and np.all(np.diff(D) >= -1e-12)
    assert est.dual_objective_ == pytest.approx(_recomputed_dual(est, kfun, 1.0), rel=1e-9)
    per = KernelPerceptron(kobj).partial_fit(X, codes, classes=np.arange(len(classes)))
    assert per.dual_objective_ == pytest.approx(_recomputed_dual(per, kfun, 1.0), rel=1e-9)


def test_nan_where_the_dual_is_not_kept():
    X, y = _stream(2, Kc=3)
    assert np.isnan(KernelCOPA("rbf").partial_fit(X, y).dual_objective_)
    # a budget never reached keeps the dual; the first removal makes it unknown for good
    roomy = KernelPassiveAggressive("rbf", budget=1000).partial_fit(X, y)
    assert roomy.n_removed_ == 0 and np.isfinite(roomy.dual_objective_)
    tight = KernelPassiveAggressive("rbf", budget=5).partial_fit(X[:40], y[:40])
    assert tight.n_removed_ > 0 and np.isnan(tight.dual_objective_)
    tight.set_params(budget=None).partial_fit(X[40:], y[40:])
    assert np.isnan(tight.dual_objective_)
    lowered = KernelPerceptron("rbf").partial_fit(X[:40], y[:40])
    assert np.isfinite(lowered.dual_objective_)
    lowered.set_params(budget=3).partial_fit(X[40:41], y[40:41])  # shrink() removes vectors
    assert np.isnan(lowered.dual_objective_)


def test_model_files_keep_the_dual(tmp_path):
    from onlinelearn.model_io import load_model, save_model

    X, y = _stream(4, Kc=3)
    est = KernelPassiveAggressive("rbf", variant="PA-II", C=0.5)
    est.partial_fit(X[:50], y[:50])
    save_model(est, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.dual_objective_ == est.dual_objective_
    back.partial_fit(X[50:], y[50:])
    est.partial_fit(X[50:], y[50:])
    assert back.dual_objective_ == est.dual_objective_


def test_bad_input_leaves_the_dual_as_it_was():
    X, y = _stream(6)
    est = KernelPassiveAggressive("rbf").partial_fit(X, y)
    D = est.dual_objective_
    Xbad = X[:3].copy()
    Xbad[1, 2] = np.nan
    with pytest.raises(ValueError):
        est.partial_fit(Xbad, y[:3])
    assert est.dual_objective_ == D


# ------------------------------------------------------------------------------ InstanceRanker
def _queries(seed, n_q=25, k=6, d=4, levels=4, dependent=False):
    """Queries of k rows; ``dependent``: rows in 2 dimensions with repeats and ties (the pairs'
    KKT systems are then singular), so the exact 'max' step needs its nonnegative form."""
    rng = np.random.default_rng(seed)
    dd = 2 if dependent else d
    X = rng.normal(size=(n_q * k, dd))
    if dependent:
        X[1::k] = X[0::k]  # a repeated row in every query
    y = np.clip(np.round(X @ rng.normal(size=dd) + 0.7 * rng.normal(size=len(X))), -2, levels)
    return X, y, np.repeat(np.arange(n_q), k)


def _rank_terms(w, X, y, qid, loss):
    """g_t(w) of each query (eq. 5.25 / 5.26)."""
    out = []
    for q in np.unique(qid):
        r = qid == q
        s, t = X[r] @ w, y[r]
        ls = [max(0.0, (t[i] - t[j]) - (s[i] - s[j]))
              for i in range(len(t)) for j in range(len(t)) if t[i] > t[j]]  # fmt: skip
        out.append(0.0 if not ls else (max(ls) if loss == "max" else float(np.mean(ls))))
    return np.array(out)


def _rank_primal(w, X, y, qid, loss, C):
    return 0.5 * w @ w + C * _rank_terms(w, X, y, qid, loss).sum()


def _rank_subgradient_reference(X, y, qid, loss, C):
    """The subgradient update in NumPy and the dual of its variables from scratch:
    D = sum_t sum_p alpha_tp (y_i - y_j) - 1/2 ||sum alpha_tp (x_i - x_j)||^2."""
    w = np.zeros(X.shape[1])
    gain = 0.0
    for q in np.unique(qid):
        r = np.flatnonzero(qid == q)
        pairs = [(i, j) for i in r for j in r if y[i] > y[j]]
        if not pairs:
            continue
        c = np.array([(y[i] - y[j]) - (X[i] - X[j]) @ w for i, j in pairs])
        if (c.max() if loss == "max" else np.maximum(c, 0).mean()) <= 0:
            continue
        alpha = np.zeros(len(pairs))
        if loss == "max":
            alpha[int(np.argmax(c))] = C
        else:
            alpha[c > 0] = C / len(pairs)
        for a_p, (i, j) in zip(alpha, pairs, strict=True):
            w += a_p * (X[i] - X[j])
            gain += a_p * (y[i] - y[j])
    return w, gain - 0.5 * w @ w


@pytest.mark.parametrize("loss", ["max", "avg"])
def test_instance_ranker_subgradient_dual_equals_the_reference(loss):
    for seed in range(3):
        X, y, qid = _queries(seed)
        est = InstanceRanker(loss=loss, update="subgradient", C=0.3)
        est.partial_fit(X[:60], y[:60], qid=qid[:60])
        est.partial_fit(sp.csr_matrix(X[60:]), y[60:], qid=qid[60:])
        w, D = _rank_subgradient_reference(X, y, qid, loss, 0.3)
        np.testing.assert_allclose(est.coef_, w, rtol=1e-12, atol=1e-12)
        assert est.dual_objective_ == pytest.approx(D, rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("dependent", [False, True])
@pytest.mark.parametrize("loss", ["max", "avg"])
def test_instance_ranker_weak_duality_every_round(loss, dependent):
    """Query by query: D_t <= P_t(w_t); the optimal step's rise is its round's optimum,
    1/2 ||w_{t+1} - w_t||^2 + C g_t(w_{t+1}) (strong duality of the round, certified to tol)."""
    X, y, qid = _queries(7, n_q=30, dependent=dependent)
    for update, C in (("optimal", 0.5), ("optimal", 5.0), ("subgradient", 0.5)):
        est = InstanceRanker(loss=loss, update=update, C=C)
        D_prev, w_prev = 0.0, np.zeros(X.shape[1])
        for q in range(30):
            r = qid == q
            est.partial_fit(X[r], y[r])
            D, w = est.dual_objective_, est.coef_.copy()
            seen = qid <= q
            P = _rank_primal(w, X[seen], y[seen], qid[seen], loss, C)
            assert np.isfinite(D) and D <= P + 1e-9 * max(1.0, abs(P)), (update, q, D, P)
            if update == "optimal":
                d = w - w_prev
                best = 0.5 * d @ d + C * _rank_terms(w, X[r], y[r], qid[r], loss)[0]
                assert D - D_prev == pytest.approx(best, rel=1e-7, abs=1e-8), (q, D - D_prev)
                assert D >= D_prev - 1e-12
            D_prev, w_prev = D, w
        assert D > 0 or update == "subgradient"


def test_exact_max_step_has_nonnegative_variables():
    """polish_max's least-squares variables can be negative; nonnegative_max_step gives the
    same step Delta from variables >= 0 with the same sum (<= C), on the rounds where it
    matters (about a quarter of the rounds that take the exact step)."""
    from onlinelearn.ranking import _round_dual as RD
    from onlinelearn.ranking._max_step import nonnegative_max_step

    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(400):
        k, d = int(rng.integers(3, 8)), int(rng.integers(2, 6))
        X = rng.normal(size=(k, d))
        y = np.round(X @ rng.normal(size=d) + rng.normal(size=k))
        pairs = [(i, j) for i in range(k) for j in range(k) if y[i] > y[j]]
        if not pairs:
            continue
        pi, pj = np.array(pairs).T.copy()
        P = len(pairs)
        c = (y[pi] - y[pj]) - (X[pi] - X[pj]) @ (0.5 * rng.normal(size=d))
        alpha, work = np.zeros(P), np.zeros((6, max(P, k)))
        Kg = X @ X.T
        _, gap, D = RD.round_dual(RD.MAX, P, pi, pj, Kg, c, 1.0, 1e-10, 400, alpha, work)
        beta = np.zeros(P)
        if RD.polish_max(P, pi, pj, Kg, c, 1.0, alpha, D, gap, beta) >= gap or beta.min() >= 0:
            continue
        A = X[pi] - X[pj]
        alt = np.zeros(P)
        nonnegative_max_step(P, pi, pj, Kg, c, 1.0, beta, alt)
        # sum C when the step leaves a loss (xi > 0), <= C when it removes every loss
        xi = (c - A @ (A.T @ beta)).max()
        assert alt.min() >= 0 and alt.sum() <= 1.0 + 1e-12
        if xi > 1e-6:
            assert alt.sum() == pytest.approx(1.0, rel=1e-12)
        np.testing.assert_allclose(alt @ A, beta @ A, rtol=1e-7, atol=1e-9)
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("loss", ["max", "avg"])
def test_instance_ranker_weak_duality_after_epochs(loss):
    """fit: every query once per epoch, so the primal counts each g_q n_epochs times."""
    X, y, qid = _queries(9)
    for update in ("optimal", "subgradient"):
        est = InstanceRanker(loss=loss, update=update, C=2.0, n_epochs=3, random_state=0)
        est.fit(X, y, qid=qid)
        w = est.coef_
        P = 0.5 * w @ w + 3 * 2.0 * _rank_terms(w, X, y, qid, loss).sum()
        assert np.isfinite(est.dual_objective_) and est.dual_objective_ <= P + 1e-9 * P


def test_instance_ranker_weak_duality_on_dna():
    """dna (shared): queries of 8 consecutive rows, the class code as the relevance."""
    from onlinelearn.datasets import load_dna

    require_shared_data("dna", "train")
    X, y = load_dna("train")
    X, y = _dense(X[:240]), np.searchsorted(np.unique(y), np.asarray(y[:240])).astype(float)
    qid = np.repeat(np.arange(30), 8)
    for loss in ("max", "avg"):
        est = InstanceRanker(loss=loss, C=0.1)
        for q in range(30):
            r = qid == q
            est.partial_fit(X[r], y[r])
            seen = qid <= q
            P = _rank_primal(est.coef_, X[seen], y[seen], qid[seen], loss, 0.1)
            assert np.isfinite(est.dual_objective_)
            assert est.dual_objective_ <= P + 1e-9 * max(1.0, P), (loss, q)
        # the kept sum against D = sum alpha b - 1/2 ||w||^2 of the kept gain
        w = est.coef_
        assert est.dual_objective_ == pytest.approx(est._st[3] - 0.5 * w @ w, rel=1e-9)
