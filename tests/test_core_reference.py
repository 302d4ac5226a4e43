"""The compiled pass equals the plain NumPy reference (tests/reference.py) on every link and
step, binary and multiclass, dense and CSR, float32 and float64, averaged or not."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from reference import reference_pass

from onlinelearn import PassiveAggressiveClassifier, Perceptron, PNormPerceptron, Winnow


def _data(rng, n, d, K, density=0.4):
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    y = rng.integers(0, max(K, 2), size=n)
    # one zero row only: two rows with the same x would make the PA steps' margin exactly
    # gamma on the second (an arbitrary tie between loss 0 and loss ~1e-16)
    empty = ~X.any(axis=1)
    X[empty, 0] = 1.0 + rng.random(int(empty.sum()))
    X[3] = 0.0  # a zero row
    return X, y


CASES = [
    (Perceptron, {}, dict(link="euclid", step="perceptron")),
    (PassiveAggressiveClassifier, dict(variant="PA"), dict(link="euclid", step="PA", gamma=1.0)),
    (
        PassiveAggressiveClassifier,
        dict(variant="PA-I", C=0.05, margin=0.5),
        dict(link="euclid", step="PA-I", C=0.05, gamma=0.5),
    ),
    (
        PassiveAggressiveClassifier,
        dict(variant="PA-II", C=0.3),
        dict(link="euclid", step="PA-II", C=0.3, gamma=1.0),
    ),
    (Winnow, dict(eta=0.7), dict(link="entropy", step="perceptron", eta=0.7)),
    (
        Winnow,
        dict(eta=0.3, balanced=False),
        dict(link="entropy", step="perceptron", eta=0.3, balanced=False),
    ),
    (PNormPerceptron, dict(p=3.5), dict(link="pnorm", step="perceptron", p=3.5)),
    # the aggressive steps of the entropy and p-norm links (root of the dual's derivative)
    (
        Winnow,
        dict(step="PA", margin=0.2),
        dict(link="entropy", step="PA", gamma=0.2),
    ),
    (
        Winnow,
        dict(step="PA-I", C=0.5, margin=0.3, balanced=False),
        dict(link="entropy", step="PA-I", C=0.5, gamma=0.3, balanced=False),
    ),
    (
        Winnow,
        dict(step="PA-II", C=2.0, margin=0.5),
        dict(link="entropy", step="PA-II", C=2.0, gamma=0.5),
    ),
    (PNormPerceptron, dict(p=3.0, step="PA"), dict(link="pnorm", step="PA", p=3.0, gamma=1.0)),
    (
        PNormPerceptron,
        dict(p=2.5, step="PA-I", C=0.1, margin=0.5),
        dict(link="pnorm", step="PA-I", p=2.5, C=0.1, gamma=0.5),
    ),
    (
        PNormPerceptron,
        dict(p=5.0, step="PA-II", C=0.3),
        dict(link="pnorm", step="PA-II", p=5.0, C=0.3, gamma=1.0),
    ),
]


@pytest.mark.parametrize("est_cls,params,ref", CASES)
@pytest.mark.parametrize("K", [1, 4])
@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize(
    "dtype,wdtype",
    [(np.float64, None), (np.float32, "float64"), (np.float32, None)],
)
@pytest.mark.parametrize("average", [False, True])
def test_pass_matches_reference(est_cls, params, ref, K, layout, dtype, wdtype, average):
    """float64 weights match the reference to 1e-9; float32 weights (float32 X, no ``dtype``)
    match a reference that rounds every updated weight to float32, to float32 precision."""
    rng = np.random.default_rng(zlib.crc32(repr((K, layout, str(dtype), average)).encode()))
    n, d = 60, 7
    X, y = _data(rng, n, d, K)
    X = X.astype(dtype)
    Xin = sp.csr_matrix(X) if layout == "csr" else X
    est = est_cls(average=average, dtype=wdtype, **params)
    preds = est.partial_fit_predict(Xin, y)
    w32 = dtype == np.float32 and wdtype is None
    assert est._theta.dtype == (np.float32 if w32 else np.float64)
    # (Perceptron and PA average with weights t^average_power, 2 by default)
    theta, avg, ref_preds, n_upd = reference_pass(X.astype(np.float64), y, K=1 if K == 1 else K,
                                                  wdtype=np.float32 if w32 else np.float64,
                                                  average_power=getattr(est, "average_power", 0),
                                                  **ref)  # fmt: skip
    W = avg if average else _link(theta, ref)
    rtol = 2e-6 if w32 else 1e-9
    np.testing.assert_array_equal(preds, est.classes_[ref_preds])
    assert est.n_updates_ == n_upd
    assert est.t_ == n
    if K == 1:
        np.testing.assert_allclose(est.coef_[0], W[:d, 0], rtol=rtol, atol=1e-12)
        np.testing.assert_allclose(est.intercept_[0], W[d, 0], rtol=rtol, atol=1e-12)
    else:
        np.testing.assert_allclose(est.coef_, W[:d].T, rtol=rtol, atol=1e-12)
        np.testing.assert_allclose(est.intercept_, W[d], rtol=rtol, atol=1e-12)


def _link(theta, ref):
    from reference import link_weights

    return link_weights(theta, ref["link"], ref.get("p", 2.0), ref.get("balanced", True))


def test_selftuned_winnow_matches_reference():
    rng = np.random.default_rng(5)
    for K in (1, 3):
        X, y = _data(rng, 80, 6, K)
        est = Winnow(self_tuned=True)
        preds = est.partial_fit_predict(sp.csr_matrix(X), y)
        theta, _, ref_preds, n_upd = reference_pass(X, y, K=K, link="selftuned")
        np.testing.assert_array_equal(preds, est.classes_[ref_preds])
        assert est.n_updates_ == n_upd


def test_multiple_calls_equal_one_call():
    """partial_fit over chunks equals one pass over the whole stream (state carries over)."""
    rng = np.random.default_rng(1)
    X, y = _data(rng, 90, 5, 3)
    for make in (
        lambda: PassiveAggressiveClassifier(average=True),
        lambda: Winnow(eta=0.4, average=True),
        lambda: PNormPerceptron(p=4, average=True),
        lambda: Winnow(step="PA-II", C=3.0, margin=0.4, average=True),
        lambda: PNormPerceptron(p=3, step="PA", average=True),
    ):
        a, b = make(), make()
        pa = a.partial_fit_predict(X, y, classes=[0, 1, 2])
        pb = np.concatenate([b.partial_fit_predict(X[s : s + 7], y[s : s + 7], classes=[0, 1, 2])
                             for s in range(0, 90, 7)])  # fmt: skip
        np.testing.assert_array_equal(pa, pb)
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-13)


def test_entropy_link_stays_finite_on_long_runs():
    """theta grows far beyond exp's range; the shift m keeps the weights finite and exact."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 4)) * 200
    y = rng.integers(0, 2, 400)
    est = Winnow(eta=5.0, average=True)
    est.partial_fit(X, y)
    assert np.abs(est._theta).max() > 800  # exp(800) overflows float64
    assert np.all(np.isfinite(est.coef_))
    theta, avg, _, _ = reference_pass(X, y, K=1, link="entropy", eta=5.0)
    np.testing.assert_allclose(est._theta, theta, rtol=1e-9)
    np.testing.assert_allclose(est.coef_[0], avg[:4, 0], rtol=1e-7, atol=1e-10)


def test_predict_margin_loss_first_maxima_with_ties():
    """The one-loop argmax of the compiled core against numpy on scores full of ties: the
    prediction is the first maximum, the rival the first maximum among the other classes,
    the margin s_y - s_r and the loss [gamma - margin]_+."""
    from onlinelearn._core.margins import predict_margin_loss

    rng = np.random.default_rng(7)
    for _ in range(3000):
        K = int(rng.integers(2, 9))
        s = rng.integers(-2, 3, size=K).astype(np.float64)  # few values: many ties
        y = int(rng.integers(0, K))
        gamma = float(rng.choice([0.0, 1.0, 2.5]))
        pred, rival, ysign, margin, loss = predict_margin_loss(s, y, False, gamma)
        others = np.delete(np.arange(K), y)
        want_rival = int(others[np.argmax(s[others])])
        assert pred == int(np.argmax(s))
        assert rival == want_rival and ysign == 1.0
        assert margin == s[y] - s[want_rival]
        assert loss == max(0.0, gamma - (s[y] - s[want_rival]))
    # one vector (binary): the sign decides, the rival stays -1
    for s0, y in ((0.5, 1), (0.5, 0), (-0.25, 1), (0.0, 0)):
        pred, rival, ysign, margin, loss = predict_margin_loss(np.array([s0]), y, True, 1.0)
        assert (pred, rival) == (int(s0 > 0.0), -1)
        assert ysign == (1.0 if y == 1 else -1.0) and margin == ysign * s0
        assert loss == max(0.0, 1.0 - margin)
