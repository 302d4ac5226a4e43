"""Theorem 2 of the COPA paper computed (``onlinelearn.metrics.averaged_confusion_bound``).

Eq. (15): with probability 1 - delta, ||C_l(h_bar)|| <= ||C_hat_{l,y}(h, X)|| + M sqrt(2Q
sum_p 1/T_p log(Q/delta)) for convex losses in [0, M] and h_bar the average of h_0..h_{T-1}.
The pieces are checked against other code paths (COPA's own per-round losses and its averaged
weights), then the inequality on random streams and on the toy of Sec. 4.
"""

from __future__ import annotations

import numpy as np
import pytest

from onlinelearn.experiments.copa_toy import make_toy_sample
from onlinelearn.linear.copa import COPA
from onlinelearn.metrics import (
    averaged_confusion_bound,
    confusion_risk_bound,
    hinge_confusion_losses,
    online_confusion_risk,
    operator_norm,
)


def _stream(rng, T, Q, d, noise):
    centres = rng.normal(size=(Q, d)) * 2.0
    prior = rng.dirichlet(np.ones(Q) * 2.0)
    y = rng.choice(Q, size=T, p=prior)
    y[:Q] = np.arange(Q)  # every class present
    X = centres[y] + noise * rng.normal(size=(T, d))
    return X, y


def test_pieces_against_copas_own_losses_and_average():
    rng = np.random.default_rng(0)
    X, y = _stream(rng, 300, 4, 3, 1.5)
    Xs, ys = _stream(np.random.default_rng(1), 200, 4, 3, 1.5)
    est = COPA(C=0.5, loss="hinge")
    res = averaged_confusion_bound(est, X, y, Xs, ys, delta=0.1)
    assert not hasattr(est, "coef_")  # the estimator given is not fitted

    # C_hat from COPA's own record of the losses of h_{t-1} (a separate code path)
    twin = COPA(C=0.5, loss="hinge", average=False)
    losses = twin.partial_fit_confusion(X, y, classes=np.arange(4))
    C_hat = online_confusion_risk(y, losses, np.arange(4))
    ref = confusion_risk_bound(C_hat, np.bincount(y), M=res.M, delta=0.1)
    assert res.empirical_norm == pytest.approx(ref.empirical_norm, rel=1e-12)
    assert res.deviation == pytest.approx(ref.deviation, rel=1e-12)
    assert res.bound == pytest.approx(ref.bound, rel=1e-12)

    # h_bar = (1/T) sum_{t<T} W_t = (Algorithm 1's average of W_1..W_T) - W_T / T
    last = COPA(C=0.5, loss="hinge", average=False, shuffle=False, n_epochs=1).fit(X, y)
    avg1 = COPA(C=0.5, loss="hinge", average=True, average_power=0.0, shuffle=False,
                n_epochs=1).fit(X, y)  # fmt: skip
    W_bar = avg1.coef_ - last.coef_ / len(y)
    c_bar = avg1.intercept_ - last.intercept_ / len(y)
    S = Xs @ W_bar.T + c_bar
    observed = operator_norm(online_confusion_risk(ys, hinge_confusion_losses(S, ys), np.arange(4)))
    assert res.observed == pytest.approx(observed, rel=1e-9)
    assert res.loss_max <= res.M
    assert res.n_rounds == 300


@pytest.mark.parametrize("seed", range(6))
def test_observed_within_the_bound_on_random_streams(seed):
    rng = np.random.default_rng(100 + seed)
    Q = 2 + seed % 4
    d = 2 + seed % 3
    X, y = _stream(rng, 240, Q, d, noise=[0.5, 1.5, 3.0][seed % 3])
    Xs, ys = _stream(np.random.default_rng(200 + seed), 200, Q, d, noise=[0.5, 1.5, 3.0][seed % 3])
    for est in (
        COPA(C=1.0),
        COPA(C=0.1, loss="hinge", fit_intercept=False),
        COPA(C=1e4, class_weight="confusion", fit_intercept=seed % 2 == 0),
    ):
        res = averaged_confusion_bound(est, X, y, Xs, ys, delta=0.05)
        assert res.observed <= res.bound, (est, res)
        assert res.loss_max <= res.M
        # Lemma 1 scaled: COPA's columns sum to zero, so a confusion costs >= 1/(Q-1)
        assert res.observed_01 <= (Q - 1) * res.observed * (1 + 1e-12)


def test_observed_within_the_bound_on_the_toy():
    rng = np.random.default_rng(3)
    X, y = make_toy_sample(1200, rng)
    h = 600
    for est in (
        COPA(C=2.4e5, class_weight="confusion", fit_intercept=False),
        COPA(C=10.0),
        COPA(C=1.0, loss="hinge"),
    ):
        res = averaged_confusion_bound(est, X[:h], y[:h], X[h:], y[h:], delta=0.05)
        assert res.observed <= res.bound
        assert res.observed_01 <= 2 * res.observed * (1 + 1e-12)


def test_bad_arguments():
    rng = np.random.default_rng(4)
    X, y = _stream(rng, 30, 3, 2, 1.0)
    with pytest.raises(ValueError, match="delta"):
        averaged_confusion_bound(COPA(), X, y, X, y, delta=0.0)
    with pytest.raises(ValueError, match="two classes"):
        averaged_confusion_bound(COPA(), X, np.zeros(30), X, np.zeros(30))
    with pytest.raises(ValueError, match="scores"):
        hinge_confusion_losses(np.zeros((3, 1)), np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="y_codes"):
        hinge_confusion_losses(np.zeros((3, 3)), np.array([0, 1, 3]))
