"""Any margin loss on the entropy and p-norm links: each aggressive step against independent
solves of its round's problem written here with scipy, a user's hinge against the library's
hinge passes (Winnow, PNormPerceptron) on real data, and a user's logistic loss checked round
by round on real data.

The round's problem is ``min_w B_f(w, w_t) + C L(z(w))`` (L = l for PA-I, l^2 for PA-II), f the
link's complexity function, z(w) = <w, U> the margin (U = y x in the one column, or x / -x in
the columns y / r).  Its solution is w(tau) = grad f*(theta + tau U) for the tau that minimises
``P(tau) = tau z(tau) - f*(theta + tau U) + f*(theta) + C L(z(tau))`` (B_f along that path,
written with f*), i.e. the root of tau + C L'(z(tau)).  Here f* and grad f* are written out in
NumPy; the references are brentq on that root, scipy's bounded minimiser of P, and L-BFGS on
the primal over all w (a softmax parametrisation of the simplex, or all of R^n for p-norms).
"""

from __future__ import annotations

import math
import zlib

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from reference import link_weights as grad_fstar
from scipy.optimize import brentq, minimize, minimize_scalar
from scipy.special import expit, logsumexp

from onlinelearn import OnlineLearner, PNormPerceptron, Winnow
from onlinelearn._core import links as L
from onlinelearn._core import state as ST
from onlinelearn._core import steps as S
from onlinelearn._core.online_loop import recompute_aggregate
from onlinelearn.datasets import load_dna
from onlinelearn.framework import (
    Aggressive,
    Conservative,
    CustomLoss,
    Entropy,
    Hinge,
    Logistic,
    PNorm,
    SquaredHinge,
)
from onlinelearn.framework.losses import loss_cfuncs
from onlinelearn.model_io import load_model, save_model

EPS = np.finfo(float).eps


# ---------------------------------------------------------------- a user's losses
@numba.njit
def hinge1(z):
    return max(0.0, 1.0 - z)


@numba.njit
def hinge1_d(z):
    return -1.0 if z < 1.0 else 0.0


@numba.njit
def hinge01(z):  # Winnow's margin 0.1: the entropy link's margins are below 1 on 0/1 data
    return max(0.0, 0.1 - z)


@numba.njit
def hinge01_d(z):
    return -1.0 if z < 0.1 else 0.0


@numba.njit
def smooth_hinge(z):
    return 0.0 if z >= 1.0 else (0.5 - z if z <= 0.0 else 0.5 * (1.0 - z) ** 2)


@numba.njit
def smooth_hinge_d(z):
    return 0.0 if z >= 1.0 else (-1.0 if z <= 0.0 else z - 1.0)


@numba.njit
def kink0(z):  # the perceptron's loss, its kink at 0 (subgradient -1 there)
    return max(0.0, -z)


@numba.njit
def kink0_d(z):
    return -1.0 if z <= 0.0 else 0.0


@numba.njit
def flat(z):  # zero loss, zero derivative: no step may move
    return 0.0


@numba.njit
def user_logistic(z):
    return math.log1p(math.exp(-z)) if z > 0.0 else -z + math.log1p(math.exp(z))


@numba.njit
def user_logistic_d(z):
    return -1.0 / (1.0 + math.exp(z))


USER_HINGE = CustomLoss(hinge1, hinge1_d)
USER_HINGE01 = CustomLoss(hinge01, hinge01_d)
USER_LOGISTIC = CustomLoss(user_logistic, user_logistic_d)
LOSSES = {
    "logistic": Logistic(),
    "squared-hinge": SquaredHinge(),
    "squared-hinge-0.3": SquaredHinge(0.3),
    "user-smooth-hinge": CustomLoss(smooth_hinge, smooth_hinge_d),
    "user-hinge-0.1": USER_HINGE01,
    "user-kink-0": CustomLoss(kink0, kink0_d),
    "user-flat": CustomLoss(flat, flat),
}
LINKS = {  # (link, p, balanced)
    "entropy": ("entropy", 2.0, True),
    "entropy-unbalanced": ("entropy", 2.0, False),
    "pnorm-2.5": ("pnorm", 2.5, True),
    "pnorm-4": ("pnorm", 4.0, True),
}


# ---------------------------------------------------------------- f* (grad f*: reference.py)
def fstar(theta, link, p, balanced):
    if link == "entropy":
        return float(logsumexp(np.concatenate([theta.ravel(), -theta.ravel()]) if balanced
                               else theta.ravel()))  # fmt: skip
    return float(np.sum(np.abs(theta) ** p) ** (2.0 / p) / (2.0 * (p - 1.0)))


class Round:
    """One round: theta, the direction U, the loss L (l or l^2) with cap C weight."""

    def __init__(self, theta, U, loss, cap, squared, link, p, balanced):
        self.theta, self.U, self.cap, self.squared = theta, U, cap, squared
        self.link, self.p, self.balanced, self.loss = link, p, balanced, loss

    def z(self, t):
        return float(np.sum(grad_fstar(self.theta + t * self.U, self.link, self.p,
                                       self.balanced) * self.U))  # fmt: skip

    def L(self, z):
        v = self.loss.value(z)
        return v * v if self.squared else v

    def dL(self, z):
        d = self.loss.derivative(z)
        return 2.0 * self.loss.value(z) * d if self.squared else d

    def g(self, t):
        return t + self.cap * self.dL(self.z(t))

    def P(self, t):
        """B_f(w(t), w_t) + C L(z(t)) along w(t) = grad f*(theta + t U)."""
        f0 = fstar(self.theta, self.link, self.p, self.balanced)
        ft = fstar(self.theta + t * self.U, self.link, self.p, self.balanced)
        z = self.z(t)
        return t * z - ft + f0 + self.cap * self.L(z)

    def bracket(self):
        t1 = -self.cap * self.dL(self.z(0.0))
        return tuple(sorted((0.0, t1)))

    def root(self):
        """brentq on tau + C L'(z(tau)) (converges to the jump for a kinked loss)."""
        lo, hi = self.bracket()
        if lo == hi or not np.any(self.U) or self.cap == 0.0:
            return 0.0
        if self.g(lo) >= 0.0:
            return lo
        if self.g(hi) <= 0.0:
            return hi
        return brentq(self.g, lo, hi, xtol=1e-300, rtol=4 * EPS, maxiter=2000)


def compiled_tau(theta, x, b, y, K, loss, C, weight, variant, link, p, balanced, z0):
    """The library's step (theta unchanged): aggressive_link_step with the loss's cfuncs, or
    the library's hinge step when ``loss`` is a :class:`Hinge`."""
    code = L.ENTROPY if link == "entropy" else L.PNORM
    st = np.zeros(ST.N_ST)
    if code == L.ENTROPY:
        st[ST.EXP_SHIFT] = np.abs(theta).max() if balanced else theta.max()
    recompute_aggregate(theta, st, code, p, balanced)
    row = sp.csr_matrix(x[None, :])
    data, indices, indptr = row.data, row.indices.astype(np.int32), row.indptr.astype(np.int64)
    nb = 2 * (x.size + 1)
    bufs = (np.empty(nb, np.int64), np.empty(nb, np.int64), np.empty(nb), np.empty(nb))
    fns = () if isinstance(loss, Hinge) else loss_cfuncs(loss)
    gamma = loss.margin if isinstance(loss, Hinge) else z0  # the hinge's margin, or l's z0
    kp, kn, ysign = (0, -1, 1.0 if y == 1 else -1.0) if K == 1 else (y[0], y[1], 1.0)
    step = S.PA2 if variant == "PA-II" else S.PA1
    before = theta.copy()
    tau = S.aggressive_link_step(step, code, data, indices, indptr, 0, theta, st, kp, kn, ysign,
                                 b, x.size, gamma, max(0.0, gamma - z0), C, weight, p, balanced,
                                 *bufs, *fns)  # fmt: skip
    np.testing.assert_array_equal(theta, before)
    return tau


def direction(theta, x, b, y, K, link, p, balanced):
    """(U, (kp, kn) or y) of the round, as the pass takes it (rival: the largest other score)."""
    xf = np.append(x, b) if b else x.copy()
    W = grad_fstar(theta, link, p, balanced)
    s = xf @ W
    U = np.zeros_like(theta)
    if K == 1:
        U[:, 0] = (1.0 if y == 1 else -1.0) * xf
        return U, y
    r = max((k for k in range(K) if k != y), key=lambda k: s[k])
    U[:, y], U[:, r] = xf, -xf
    return U, (y, r)


def _instances(seed, n):
    rng = np.random.default_rng(seed)
    for t in range(n):
        K = (1, 3)[t % 2]
        d = int(rng.integers(2, 9))
        b = 1.0 if rng.random() < 0.7 else 0.0
        scale = (0.3, 1.0, 4.0, 30.0)[int(rng.integers(4))]
        theta = scale * rng.normal(size=(d + (b != 0), K)) * (rng.random((d + (b != 0), K)) < 0.7)
        x = rng.normal(size=d) * (rng.random(d) < 0.7)
        C = float(10 ** rng.uniform(-4, 4))
        weight = 1.0 if rng.random() < 0.7 else float(rng.uniform(0.2, 3.0))
        yield theta, x, b, int(rng.integers(2 if K == 1 else K)), K, C, weight
    # edge cases: zero x (with and without the intercept), tiny and huge C, a large state
    d = 4
    yield np.ones((d + 1, 3)), np.zeros(d), 1.0, 0, 3, 1.0, 1.0
    yield np.ones((d, 1)), np.zeros(d), 0.0, 1, 1, 1.0, 1.0
    for C in (1e-8, 1e8):
        yield rng.normal(size=(d + 1, 1)), rng.normal(size=d), 1.0, 0, 1, C, 1.0
        yield rng.normal(size=(d + 1, 3)), rng.normal(size=d), 1.0, 2, 3, C, 1.0
    yield 40.0 * rng.normal(size=(d + 1, 3)), rng.normal(size=d), 1.0, 1, 3, 2.0, 1.0


def _check_round(name, link_name, variant, theta, x, b, y, K, C, weight):
    loss = LOSSES[name]
    link, p, bal = LINKS[link_name]
    if link == "pnorm" and not np.any(theta):
        theta = theta + 0.1  # grad f* is not differentiable at 0 (the pass starts there too)
    U, yy = direction(theta, x, b, y, K, link, p, bal)
    rnd = Round(theta, U, loss, C * weight, variant == "PA-II", link, p, bal)
    z0 = rnd.z(0.0)
    tau = compiled_tau(theta.copy(), x, b, yy, K, loss, C, weight, variant, link, p, bal, z0)
    assert math.isfinite(tau)
    ref = rnd.root()
    lo, hi = rnd.bracket()
    if not np.any(U) or lo == hi:
        assert tau == 0.0
        return "zero"
    # (1) the root, to 1e-9; at a jump of g, to the conditioning of z there
    h = 1e-6 * max(abs(ref), hi - lo)
    slope = abs(rnd.z(ref + h) - rnd.z(ref - h)) / (2 * h)
    cond = 8 * EPS * max(1.0, abs(z0)) / slope if slope > 0 else 0.0
    assert tau == pytest.approx(ref, rel=1e-9, abs=cond + 1e-300), (name, link_name, tau, ref)
    # (2) the primal objective along w(tau) is not above scipy's bounded minimiser's
    res = minimize_scalar(rnd.P, bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-14 * max(abs(lo), abs(hi))})  # fmt: skip
    scale = abs(rnd.P(0.0)) + abs(res.fun) + 1e-300
    noise = 64 * EPS * (abs(fstar(theta + tau * U, link, p, bal)) + abs(tau * z0) + rnd.cap)
    assert rnd.P(tau) <= res.fun + 1e-12 * scale + noise, (name, link_name, tau, res.x)
    return "interior" if lo < tau < hi else "end"


@pytest.mark.parametrize("variant", ["PA-I", "PA-II"])
@pytest.mark.parametrize("link_name", list(LINKS))
@pytest.mark.parametrize("name", list(LOSSES))
def test_each_step_solves_the_round(name, link_name, variant):
    """Random rounds (binary and multiclass, with and without intercept) and edge cases: the
    step is brentq's root of the optimality condition (1e-9) and minimises the primal along
    the dual path no worse than scipy's bounded minimiser."""
    seed = zlib.crc32(f"{name}/{link_name}/{variant}".encode())
    kinds = [_check_round(name, link_name, variant, *inst) for inst in _instances(seed, 40)]
    if name == "user-flat":
        assert set(kinds) == {"zero"}
    elif name in ("logistic", "user-smooth-hinge"):
        assert "interior" in kinds


@pytest.mark.parametrize("link_name", list(LINKS))
def test_a_point_on_the_kink(link_name):
    """theta = 0 and K classes: every score is equal, the margin is exactly 0, the kink of the
    perceptron's loss (subgradient -1 there): the root is the jump at tau = 0+ (to the
    rounding of the margin, ~eps, over its slope, ~1)."""
    link, p, bal = LINKS[link_name]
    theta = np.zeros((5, 3)) if link == "entropy" else np.full((5, 3), 0.5)
    x = np.array([1.0, -0.5, 0.0, 2.0])
    tau = compiled_tau(theta.copy(), x, 1.0, (0, 1), 3, LOSSES["user-kink-0"], 2.0, 1.0, "PA-I",
                       link, p, bal, 0.0)  # fmt: skip
    assert 0.0 <= tau <= 1e-14
    # a subgradient 0 at the kink: no step
    tau = compiled_tau(theta.copy(), x, 1.0, (0, 1), 3, SquaredHinge(0.0), 2.0, 1.0, "PA-I",
                       link, p, bal, 0.0)  # fmt: skip
    assert tau == 0.0


def _primal_lbfgs(rnd):
    """min_w B_f(w, w_t) + C L(<w, U>) over all w by L-BFGS: w = softmax(a) over the (doubled)
    simplex for the entropy link (B_f = KL), w in R^n for the p-norm link."""
    link, p, bal, U, th = rnd.link, rnd.p, rnd.balanced, rnd.U.ravel(), rnd.theta.ravel()
    if link == "entropy":
        th, Ut = (np.concatenate([th, -th]), np.concatenate([U, -U])) if bal else (th, U)
        logv0 = th - logsumexp(th)

        def fun(a):
            lv = a - logsumexp(a)
            v = np.exp(lv)
            z = v @ Ut
            gw = lv - logv0 + rnd.cap * rnd.dL(z) * Ut
            return v @ (lv - logv0) + rnd.cap * rnd.L(z), v * (gw - v @ gw)

        start = th.copy()
    else:
        q = p / (p - 1.0)  # f(w) = ||w||_q^2 / (2 (q - 1)); grad f(w_t) = theta
        start = w0 = grad_fstar(rnd.theta, link, p, bal).ravel()
        f0 = np.sum(np.abs(w0) ** q) ** (2.0 / q) / (2.0 * (q - 1.0))

        def fun(w):
            nrm, z = np.sum(np.abs(w) ** q) ** (1.0 / q), w @ U
            val = nrm**2 / (2.0 * (q - 1.0)) - f0 - th @ (w - w0) + rnd.cap * rnd.L(z)
            gf = np.sign(w) * np.abs(w) ** (q - 1.0) * nrm ** (2.0 - q) / (q - 1.0)
            return val, gf - th + rnd.cap * rnd.dL(z) * U

    res = minimize(fun, start, jac=True, method="L-BFGS-B",
                   options={"ftol": 1e-15, "gtol": 1e-13, "maxiter": 5000})  # fmt: skip
    return res.fun


@pytest.mark.parametrize("link_name", list(LINKS))
@pytest.mark.parametrize("name", ["logistic", "squared-hinge"])
def test_the_step_is_the_primal_minimum(name, link_name):
    """On the primal over all w (not only along the dual path): L-BFGS finds no point below
    the step's objective (1e-9 relative), and reaches it to 1e-6."""
    link, p, bal = LINKS[link_name]
    rng = np.random.default_rng(11)
    for t in range(12):
        K = (1, 3)[t % 2]
        theta = rng.normal(size=(4, K))
        x = rng.normal(size=3)
        y = int(rng.integers(2 if K == 1 else K))
        C = float(10 ** rng.uniform(-2, 1))
        U, yy = direction(theta, x, 1.0, y, K, link, p, bal)
        rnd = Round(theta, U, LOSSES[name], C, False, link, p, bal)
        tau = compiled_tau(theta.copy(), x, 1.0, yy, K, rnd.loss, C, 1.0, "PA-I", link, p, bal,
                           rnd.z(0.0))  # fmt: skip
        ours, best = rnd.P(tau), _primal_lbfgs(rnd)
        noise = 64 * EPS * (1.0 + abs(fstar(theta, link, p, bal)))  # B_f's cancellation
        assert ours <= best + 1e-9 * abs(best) + noise, (t, ours, best)
        assert best <= ours + 1e-6 * abs(ours) + noise, (t, ours, best)


@pytest.mark.parametrize("link_name", list(LINKS))
@pytest.mark.parametrize("variant", ["PA-I", "PA-II"])
def test_user_hinge_step_is_the_hinge_step(link_name, variant):
    """The generic solve of a user's hinge gives the library's hinge step (Newton on the
    margin), 1e-9, on the random rounds."""
    link, p, bal = LINKS[link_name]
    for theta, x, b, y, K, C, weight in _instances(5, 60):
        if link == "pnorm" and not np.any(theta):
            theta = theta + 0.1
        U, yy = direction(theta, x, b, y, K, link, p, bal)
        z0 = float(np.sum(grad_fstar(theta, link, p, bal) * U))
        args = (C, weight, variant, link, p, bal, z0)
        ours = compiled_tau(theta.copy(), x, b, yy, K, USER_HINGE01, *args)
        hinge = compiled_tau(theta.copy(), x, b, yy, K, Hinge(0.1), *args)
        assert ours == pytest.approx(hinge, rel=1e-9, abs=1e-15), (ours, hinge)


# ---------------------------------------------------------------- real data
def _dna(n=600, binary=False, sparse=False):
    X, y = load_dna("train")
    X, y = X[:n], y[:n]
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    if binary:  # two of the three classes
        keep = y != y.max()
        X, y = X[keep], y[keep]
    return (sp.csr_matrix(X) if sparse else np.ascontiguousarray(X)), y


#: (user's hinge, the same learner with the library's hinge): Winnow and PNormPerceptron
_HINGE_PAIRS = {
    "winnow-PA-I": (Entropy(eta=0.5), USER_HINGE01, Aggressive(0.05),
                    lambda: Winnow(eta=0.5, margin=0.1, step="PA-I", C=0.05)),
    "winnow-PA-I-margin-1": (Entropy(eta=0.5), USER_HINGE, Aggressive(0.05),
                             lambda: Winnow(eta=0.5, margin=1.0, step="PA-I", C=0.05)),
    "winnow-unbalanced-PA-II": (Entropy(balanced=False), USER_HINGE01, Aggressive(2.0, "PA-II"),
                                lambda: Winnow(balanced=False, step="PA-II", C=2.0)),
    "winnow-conservative": (Entropy(eta=0.3), USER_HINGE01, Conservative(),
                            lambda: Winnow(eta=0.3)),
    "pnorm-2.5-PA-I": (PNorm(2.5), USER_HINGE, Aggressive(0.1),
                       lambda: PNormPerceptron(p=2.5, step="PA-I", C=0.1)),
    "pnorm-4-PA-II": (PNorm(4.0), USER_HINGE, Aggressive(0.5, "PA-II"),
                      lambda: PNormPerceptron(p=4.0, step="PA-II", C=0.5)),
    "pnorm-auto-conservative": (PNorm(), USER_HINGE, Conservative(),
                                lambda: PNormPerceptron()),
}  # fmt: skip


@pytest.mark.parametrize("pair", list(_HINGE_PAIRS))
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("binary", [True, False], ids=["binary", "multiclass"])
def test_user_hinge_reproduces_the_link_presets(pair, average, sparse, binary):
    """A user's hinge on Entropy / PNorm learns the weights and the progressive predictions
    of Winnow / PNormPerceptron (the library's hinge passes), to 1e-9."""
    link, loss, step, make_preset = _HINGE_PAIRS[pair]
    X, y = _dna(600, binary, sparse)
    kw = dict(n_epochs=3, average=average, random_state=2)
    ours = OnlineLearner(link, loss, step, tol=None, **kw)
    ref = make_preset().set_params(**kw)
    pred_ours = ours.partial_fit_predict(X[:300], y[:300])
    pred_ref = ref.partial_fit_predict(X[:300], y[:300])
    np.testing.assert_array_equal(pred_ours, pred_ref)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    ours.fit(X, y)
    ref.fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-9, atol=1e-12)
    assert (ours.n_updates_, ours.n_mistakes_) == (ref.n_updates_, ref.n_mistakes_)


def test_user_hinge_on_self_tuned_winnow():
    """The conservative step of any loss also runs on Entropy(self_tuned=True)."""
    X, y = _dna(600)
    ours = OnlineLearner(Entropy(self_tuned=True), USER_HINGE01, Conservative(), n_epochs=2,
                         tol=None, average=False, random_state=0).fit(X, y)  # fmt: skip
    ref = Winnow(self_tuned=True, n_epochs=2, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9, atol=1e-12)


def _entropy_round_ref(theta, xf, K, cls, C):
    """(tau, U) of the user's logistic PA-I step from theta (balanced entropy), brentq on
    tau + C l'(z(tau)) with z from the weights written out above."""
    W = grad_fstar(theta, "entropy", 2.0, True)
    s = xf @ W
    U = np.zeros_like(theta)
    if K == 1:
        U[:, 0] = (1.0 if cls == 1 else -1.0) * xf
    else:
        r = max((k for k in range(K) if k != cls), key=lambda k: s[k])
        U[:, cls], U[:, r] = xf, -xf

    def g(t):
        z = np.sum(grad_fstar(theta + t * U, "entropy", 2.0, True) * U)
        return t - C * expit(-z)

    hi = C * expit(-np.sum(W * U))
    return brentq(g, 0.0, hi, xtol=1e-300, rtol=4 * EPS, maxiter=500), U


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "multiclass"])
@pytest.mark.parametrize("C", [0.05, 1.0, 50.0])
def test_user_logistic_on_entropy_each_round(binary, C):
    """A user's logistic loss, aggressive step, balanced entropy link, with intercept: each of
    hundreds of rounds of real data moves theta by the step solved independently from the
    state before it (1e-9), and the weights are grad f* of the new state."""
    X, y = _dna(300, binary)
    clf = OnlineLearner(Entropy(), USER_LOGISTIC, Aggressive(C), average=False)
    clf.partial_fit(X[:1], y[:1], classes=np.unique(y))
    K = clf._theta.shape[1]
    for i in range(1, X.shape[0]):
        theta = clf._theta.copy()
        xf = np.append(X[i], 1.0)
        cls = int(np.searchsorted(clf.classes_, y[i]))
        tau, U = _entropy_round_ref(theta, xf, K, cls, C)
        clf.partial_fit(X[i : i + 1], y[i : i + 1])
        moved = clf._theta - theta
        got = float(np.sum(moved * U) / np.sum(U * U))
        assert got == pytest.approx(tau, rel=1e-9, abs=16 * EPS * np.abs(theta).max()), i
        W = grad_fstar(theta + tau * U, "entropy", 2.0, True)
        np.testing.assert_allclose(clf.coef_, W[:-1].T if K > 1 else W[:-1, 0][None, :],
                                   rtol=1e-9, atol=1e-15)  # fmt: skip


def test_losses_on_the_links_fit_and_save(tmp_path):
    """Built-in losses on the links are ordinary learners: they fit, predict better than
    chance, and go to model files and back."""
    X, y = _dna(600)
    for link, C in ((Entropy(eta=0.5), 0.01), (PNorm(3.0), 0.1)):
        for loss, step in ((Logistic(), Aggressive(C)), (SquaredHinge(0.1), Conservative(0.01))):
            est = OnlineLearner(link, loss, step, n_epochs=3, random_state=0).fit(X, y)
            assert est.score(X, y) > 0.6
            save_model(est, tmp_path / "m.npz")
            back = load_model(tmp_path / "m.npz")
            np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


def test_what_stays_refused():
    X, y = _dna(50)
    for kw, match in (
        (dict(link=Entropy(self_tuned=True), loss=Logistic(), average=False), "conservative"),
        (dict(link=PNorm(3.0), loss=Logistic(), step=Aggressive(1.0, "PA")), "PA-I"),
        (dict(link=Entropy(), loss=Logistic(), step=Aggressive(math.inf)), "finite C"),
    ):
        with pytest.raises(ValueError, match=match):
            OnlineLearner(**kw).fit(X, y)
