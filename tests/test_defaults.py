"""Defaults (docs/defaults.md): averaging on by default, old model states keep their values, and
the choice of weights for the progressive predictions of partial_fit_predict."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron, Winnow
from onlinelearn.base import estimator_from_state

EUCLID = [Perceptron, PassiveAggressiveClassifier, COPA]


def _data(n=300, d=12, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d, K))
    y = np.argmax(X @ W + 0.8 * rng.normal(size=(n, K)), axis=1)
    return X, y


@pytest.mark.parametrize("cls", EUCLID)
def test_the_default_predictor_is_the_average(cls):
    assert cls().average is True
    X, y = _data()
    a = cls(random_state=0).fit(X, y)
    b = cls(random_state=0, average=True).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("cls", EUCLID)
def test_a_state_saved_with_the_old_default_keeps_it(cls):
    X, y = _data(seed=1)
    old = cls(average=False, random_state=0).fit(X, y)
    meta, arrays = old._get_state()
    assert meta["params"]["average"] is False  # a model file stores its parameters
    back = estimator_from_state(meta, arrays)
    assert back.average is False
    np.testing.assert_array_equal(back.coef_, old.coef_)


@pytest.mark.parametrize("cls", EUCLID)
@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("K", [2, 4])
def test_predict_with_average_is_predict_row_by_row(cls, layout, K):
    X, y = _data(n=150, K=K, seed=K)
    Xin = sp.csr_matrix(X) if layout == "csr" else X
    online = cls().partial_fit_predict(Xin[:20], y[:20], classes=np.arange(K),
                                       predict_with="average")  # fmt: skip
    twin = cls().partial_fit(Xin[:20], y[:20], classes=np.arange(K))
    est = cls()
    est.partial_fit(Xin[:20], y[:20], classes=np.arange(K))
    got = est.partial_fit_predict(Xin[20:], y[20:], predict_with="average")
    want = []
    for i in range(20, 150):
        want.append(twin.predict(Xin[i : i + 1])[0])
        twin.partial_fit(Xin[i : i + 1], y[i : i + 1])
    np.testing.assert_array_equal(got, want)
    # learning is the same as with the current iterate's predictions
    ref = cls()
    ref.partial_fit(Xin[:20], y[:20], classes=np.arange(K))
    current = ref.partial_fit_predict(Xin[20:], y[20:])
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert est.n_mistakes_ == ref.n_mistakes_
    assert np.mean(current != got) > 0  # the two read-outs do differ on this stream
    assert len(online) == 20


def test_predict_with_is_checked():
    X, y = _data(n=30)
    with pytest.raises(ValueError, match="predict_with must be"):
        Perceptron().partial_fit_predict(X, y, predict_with="best")
    with pytest.raises(ValueError, match="needs average=True"):
        Perceptron(average=False).partial_fit_predict(X, y, predict_with="average")
    clf = Winnow(average=True)
    with pytest.raises(ValueError, match="Euclidean learners"):
        clf.partial_fit_predict(X, y, predict_with="average")
    assert not hasattr(clf, "classes_")  # rejected before any change
