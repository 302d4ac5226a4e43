"""Defaults (docs/defaults.md): averaging on by default, old model states keep their values, and
the choice of weights for the progressive predictions of partial_fit_predict."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron, Winnow
from onlinelearn._linear_state import estimator_from_state

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


# ---------------------------------------------------------------- intercept_scaling='auto'
def test_auto_intercept_of_the_perceptron_is_the_median_row_norm():
    X, y = _data(seed=2)
    X[5] = 0.0  # zero rows do not count
    norms = np.linalg.norm(X, axis=1)
    b = float(np.median(norms[norms > 0]))
    assert Perceptron().intercept_scaling == 1.0  # the default is unchanged
    auto = Perceptron(random_state=0, intercept_scaling="auto").fit(X, y)
    np.testing.assert_allclose(auto.intercept_scaling_, b, rtol=1e-12)
    explicit = Perceptron(random_state=0, intercept_scaling=auto.intercept_scaling_).fit(X, y)
    np.testing.assert_array_equal(auto.coef_, explicit.coef_)
    np.testing.assert_array_equal(auto.intercept_, explicit.intercept_)
    # the same rule on CSR input, float32 or not, and 1 when every row is zero
    csr = Perceptron(intercept_scaling="auto").fit(sp.csr_matrix(X.astype(np.float32)), y)
    np.testing.assert_allclose(csr.intercept_scaling_, b, rtol=1e-6)
    zero = Perceptron(intercept_scaling="auto").fit(np.zeros((4, 3)), [0, 1, 0, 1])
    assert zero.intercept_scaling_ == 1.0
    # squares overflow float64; the norm does not
    huge = Perceptron(intercept_scaling="auto").fit(X * 1e300, y)
    np.testing.assert_allclose(huge.intercept_scaling_, b * 1e300, rtol=1e-12)


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_auto_intercept_makes_the_perceptron_invariant_to_the_scale_of_x(layout):
    """X -> c X: the weights scale by c, the predictions stay (c a power of two: exact)."""
    X, y = _data(seed=3, K=4)
    y = y + 10
    conv = sp.csr_matrix if layout == "csr" else np.asarray
    a = Perceptron(random_state=1, intercept_scaling="auto").fit(conv(X), y)
    c = Perceptron(random_state=1, intercept_scaling="auto").fit(conv(8.0 * X), y)
    assert c.intercept_scaling_ == 8.0 * a.intercept_scaling_
    np.testing.assert_array_equal(c.coef_, 8.0 * a.coef_)
    np.testing.assert_array_equal(c.predict(conv(8.0 * X)), a.predict(conv(X)))
    # with a fixed b the bias does not follow the scale (this is what 'auto' changes)
    f1 = Perceptron(random_state=1, intercept_scaling=1.0).fit(conv(X), y)
    f8 = Perceptron(random_state=1, intercept_scaling=1.0).fit(conv(8.0 * X), y)
    assert not np.array_equal(f8.coef_, 8.0 * f1.coef_)


@pytest.mark.parametrize("cls", [PassiveAggressiveClassifier, COPA])
def test_auto_intercept_of_pa_is_a_tenth_on_sparse_input(cls):
    X, y = _data(seed=4)
    for Xin, b in [(X, 1.0), (sp.csr_matrix(X), 0.1)]:
        auto = cls(random_state=0, intercept_scaling="auto").fit(Xin, y)
        assert auto.intercept_scaling_ == b
        fixed = cls(random_state=0, intercept_scaling=b).fit(Xin, y)
        np.testing.assert_array_equal(auto.coef_, fixed.coef_)
        np.testing.assert_array_equal(auto.decision_function(Xin), fixed.decision_function(Xin))
    assert PassiveAggressiveClassifier().intercept_scaling == COPA().intercept_scaling == 1.0


def test_auto_intercept_is_fixed_by_the_first_batch_and_saved(tmp_path):
    from onlinelearn.model_io import load_model, save_model

    X, y = _data(seed=5)
    est = Perceptron(intercept_scaling="auto").partial_fit(X[:100], y[:100])
    b = est.intercept_scaling_
    est.partial_fit(10.0 * X[100:200], y[100:200])  # later batches do not change b
    assert est.intercept_scaling_ == b
    save_model(est, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.intercept_scaling == "auto" and back.intercept_scaling_ == b
    back.partial_fit(X[200:], y[200:])
    est.partial_fit(X[200:], y[200:])
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.intercept_, est.intercept_)
    meta, arrays = est._get_state()
    arrays = dict(arrays)
    del arrays["intercept_scaling_"]
    with pytest.raises(ValueError, match="without its value"):
        estimator_from_state(meta, arrays)
    # a failed first call leaves no trace of b
    fresh = Perceptron(intercept_scaling="auto")
    with pytest.raises(ValueError):
        fresh.partial_fit(X[:10], y[:9])
    assert not hasattr(fresh, "intercept_scaling_")


def test_merging_auto_intercepts_of_different_values_is_exact():
    from onlinelearn._linear_state import merge_models

    X, y = _data(seed=6)
    a = Perceptron(random_state=0, intercept_scaling="auto").fit(X[:150], y[:150])
    b = Perceptron(random_state=0, intercept_scaling="auto").fit(3.0 * X[150:], y[150:])
    assert a.intercept_scaling_ != b.intercept_scaling_
    m = merge_models([a, b])
    u = np.array([a.n_updates_, b.n_updates_], dtype=float) / (a.n_updates_ + b.n_updates_)
    want = u[0] * a.decision_function(X) + u[1] * b.decision_function(X)
    np.testing.assert_allclose(m.decision_function(X), want, rtol=1e-9, atol=1e-9)
    assert m.intercept_scaling_ == a.intercept_scaling_
