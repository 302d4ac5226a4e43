"""OnlineStructuredLearner: equal to the compiled SequenceTagger when given the chain feature map
and brute-force oracles (every update), its aggressive step equal to a generic QP solve of the
one-round problem for a non-decomposable cost, and bad oracle output refused with the model
unchanged."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from test_structured_tagger import phi

from onlinelearn.structured import OnlineStructuredLearner, SequenceTagger

K, D = 3, 4


def chain_phi(X, y):
    """The SequenceTagger's joint feature map, flattened as [W (D, K), Tr (K + 1, K)]."""
    return phi(X, y, K)


def hamming(y, z):
    return float(np.sum(np.asarray(y) != np.asarray(z)))


def brute(w, X, y=None, cost=hamming):
    best, arg = -np.inf, None
    for cand in itertools.product(range(K), repeat=X.shape[0]):
        s = w @ chain_phi(X, cand) + (0.0 if y is None else cost(y, cand))
        if s > best:
            best, arg = s, np.array(cand)
    return arg


def _data(seed, n=10):
    rng = np.random.default_rng(seed)
    Xs = [rng.normal(size=(int(rng.integers(1, 5)), D)) for _ in range(n)]
    Xs = [np.where(rng.random(X.shape) < 0.6, X, 0.0) for X in Xs]
    Ys = [rng.integers(0, K, size=X.shape[0]) for X in Xs]
    return Xs, Ys


@pytest.mark.parametrize(
    "update,loss",
    [("perceptron", "max"), ("PA", "max"), ("PA", "prediction"), ("self-tuned", "max")],
)
@pytest.mark.parametrize("average", [False, True])
def test_generic_learner_equals_the_compiled_tagger(update, loss, average):
    Xs, Ys = _data(3)
    gen = OnlineStructuredLearner(
        chain_phi, brute, hamming, lambda w, x, y: brute(w, x, y),
        update=update, loss=loss, C=0.7, U=3.0, average=average,
    )  # fmt: skip
    tag = SequenceTagger(update, loss=loss, C=0.7, U=3.0, average=average)
    for lo in (0, 5):
        gen.partial_fit(Xs[lo : lo + 5], Ys[lo : lo + 5])
        tag.partial_fit([sp.csr_matrix(X) for X in Xs[lo : lo + 5]], Ys[lo : lo + 5],
                        classes=np.arange(K))  # fmt: skip
    want = np.concatenate([tag.coef_.ravel(), tag.transitions_.ravel()])
    np.testing.assert_allclose(gen.coef_, want, atol=1e-10)
    assert gen.n_updates_ == tag.n_updates_ and gen.n_mistakes_ == tag.n_mistakes_
    assert gen.dual_objective_ == pytest.approx(tag.dual_objective_, abs=1e-9)


def _qp(w0, a, rho, C):
    n = w0.size
    res = minimize(
        lambda z: 0.5 * np.sum((z[:n] - w0) ** 2) + C * z[n],
        np.concatenate([w0, [0.0]]),
        jac=lambda z: np.concatenate([z[:n] - w0, [C]]),
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda z: z[:n] @ a - rho + z[n],
                      "jac": lambda z: np.concatenate([a, [1.0]])}],
        bounds=[(None, None)] * n + [(0.0, None)],
        options={"ftol": 1e-14, "maxiter": 1000},
    )  # fmt: skip
    return res.x[:n]


def _edit_like(y, z):
    """A cost that does not decompose over positions: 2 if any tag differs, plus the count."""
    diff = hamming(y, z)
    return 0.0 if diff == 0 else 2.0 + diff


@pytest.mark.parametrize("loss", ["max", "prediction"])
def test_aggressive_step_equals_qp_for_any_cost(loss):
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(15):
        X = rng.normal(size=(3, D))
        y = rng.integers(0, K, size=3)
        learner = OnlineStructuredLearner(
            chain_phi, brute, _edit_like, lambda w, x, yy: brute(w, x, yy, _edit_like),
            update="PA", loss=loss, C=0.4, average=False,
        )  # fmt: skip
        learner.partial_fit([X], [y])
        w0 = rng.normal(scale=0.5, size=learner.coef_.size)
        learner._w[:] = w0
        yhat = brute(w0, X, y, _edit_like) if loss == "max" else brute(w0, X)
        rho = _edit_like(y, yhat)
        a = chain_phi(X, y) - chain_phi(X, yhat)
        learner.partial_fit([X], [y])
        if rho == 0 or w0 @ a >= rho:
            np.testing.assert_allclose(learner.coef_, w0)
            continue
        np.testing.assert_allclose(learner.coef_, _qp(w0, a, rho, 0.4), atol=2e-6)
        checked += 1
    assert checked >= 8


def test_bad_oracles_and_input_change_nothing():
    Xs, Ys = _data(1)
    gen = OnlineStructuredLearner(chain_phi, brute, hamming, lambda w, x, y: brute(w, x, y))
    gen.partial_fit(Xs, Ys)
    before = (gen._w.copy(), gen._u.copy(), gen.t_)

    def same():
        np.testing.assert_array_equal(gen._w, before[0])
        np.testing.assert_array_equal(gen._u, before[1])
        assert gen.t_ == before[2]

    with pytest.raises(ValueError, match="inputs but"):
        gen.partial_fit(Xs, Ys[:-1])
    same()
    gen.set_params(feature_map=lambda X, y: chain_phi(X, y)[:-1])
    with pytest.raises(ValueError, match="expected"):
        gen.partial_fit(Xs, Ys)
    same()
    gen.set_params(feature_map=chain_phi, cost=lambda y, z: -1.0)
    with pytest.raises(ValueError, match="cost returned"):
        gen.partial_fit(Xs, Ys)
    same()
    with pytest.raises(ValueError, match="loss_augmented_argmax"):
        OnlineStructuredLearner(chain_phi, brute, hamming).fit(Xs, Ys)


def test_online_to_batch_conversions():
    from onlinelearn.structured import structured_average, structured_last, structured_validation

    Xs, Ys = _data(4, n=12)
    seqs = [sp.csr_matrix(X) for X in Xs]
    base = SequenceTagger("PA", average=False)
    last = structured_last(base, seqs, Ys, random_stopping=False, classes=np.arange(K))
    ref = SequenceTagger("PA", average=False).partial_fit(seqs, Ys, classes=np.arange(K))
    np.testing.assert_array_equal(last.coef_, ref.coef_)
    r = structured_last(base, seqs, Ys, random_state=0, classes=np.arange(K))
    assert 1 <= r.t_ <= 12 and base.get_params()["average"] is False
    avg = structured_average(base, seqs, Ys, classes=np.arange(K))
    ref = SequenceTagger("PA", average=True).partial_fit(seqs, Ys, classes=np.arange(K))
    np.testing.assert_array_equal(avg.coef_, ref.coef_)
    res = structured_validation(base, seqs, Ys, seqs, Ys, n_blocks=3, random_state=0,
                                classes=np.arange(K))  # fmt: skip
    assert res.estimator is res.candidates[res.best_index]
    assert res.validation_scores[res.best_index] == res.validation_scores.max()
    assert sum(c.t_ for c in res.candidates) <= 12
    gen = OnlineStructuredLearner(chain_phi, brute, hamming, lambda w, x, y: brute(w, x, y))
    assert structured_average(gen, Xs[:4], Ys[:4]).t_ == 4
