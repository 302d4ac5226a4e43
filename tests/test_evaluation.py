"""Tests of progressive validation and the online-to-batch conversions (thesis App. B.3.3)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.linear_model import Perceptron as SkPerceptron

from onlinelearn import PassiveAggressiveClassifier, Perceptron
from onlinelearn.evaluation import (
    ProgressiveValidationResult,
    ValidationConversionResult,
    online_to_batch_average,
    online_to_batch_last,
    online_to_batch_validation,
    progressive_validation,
)

ESTIMATORS = {
    # the last iterate predicts (average=False): per-row predict equals the progressive one
    "perceptron": lambda **kw: Perceptron(**{"average": False, **kw}),
    "pa-i": lambda **kw: PassiveAggressiveClassifier(
        variant="PA-I", C=0.5, **{"average": False, **kw}
    ),
    "pa-ii": lambda **kw: PassiveAggressiveClassifier(
        variant="PA-II", C=0.1, **{"average": False, **kw}
    ),
}


@pytest.fixture(params=sorted(ESTIMATORS))
def make(request):
    return ESTIMATORS[request.param]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=150,
        n_features=8,
        n_informative=5,
        n_classes=3,
        n_clusters_per_class=1,
        class_sep=1.5,
        random_state=0,
    )
    return X, y


@pytest.fixture(scope="module")
def binary_data():
    X, y = make_classification(n_samples=120, n_features=6, flip_y=0.1, random_state=1)
    return X, np.where(y == 1, "spam", "ham")


def manual_progressive(estimator, X, y, classes):
    """Reference loop: predict with the current model, then one partial_fit on the row.

    Row 0 meets an estimator that is not fitted yet (no ``predict``): its entry is None."""
    preds = []
    for i in range(len(y)):
        preds.append(estimator.predict(X[i : i + 1])[0] if hasattr(estimator, "classes_") else None)
        estimator.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
    return np.asarray(preds, dtype=object)


# --------------------------------------------------------------------------- progressive validation
@pytest.mark.parametrize("dataset", ["data", "binary_data"])
@pytest.mark.parametrize("sparse", [False, True])
def test_progressive_equals_per_row_predict_then_partial_fit(make, dataset, sparse, request):
    X, y = request.getfixturevalue(dataset)
    if sparse:
        X = sp.csr_matrix(X)
    est = make()
    res = progressive_validation(est, X, y)
    ref_est = make()
    ref = manual_progressive(ref_est, X, y, np.unique(y))
    assert isinstance(res, ProgressiveValidationResult)
    assert res.predictions[0] in np.unique(y)
    np.testing.assert_array_equal(res.predictions[1:], ref[1:].astype(y.dtype))
    np.testing.assert_array_equal(res.mistakes, res.predictions != y)
    # trained in place, to the same state as the loop
    np.testing.assert_allclose(est.coef_, ref_est.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.intercept_, ref_est.intercept_, rtol=1e-12, atol=1e-12)
    assert est.t_ == len(y)
    assert res.n_mistakes == est.n_mistakes_  # the estimator's own count of online mistakes


def test_cumulative_curve(data):
    X, y = data
    res = progressive_validation(Perceptron(), X, y)
    mistakes = res.predictions != y
    expected = np.cumsum(mistakes) / np.arange(1, len(y) + 1)
    np.testing.assert_allclose(res.cumulative_mistake_rate, expected)
    assert res.n_mistakes == mistakes.sum()
    assert 0 < res.n_mistakes < len(y)
    assert res.mistake_rate == pytest.approx(mistakes.mean())
    assert res.cumulative_mistake_rate[-1] == pytest.approx(res.mistake_rate)
    assert res.n_samples == len(y)


@pytest.mark.parametrize("chunk_size", [1, 7, 100, 150, 1000])
def test_chunk_size_does_not_change_result(make, data, chunk_size):
    X, y = data
    whole_est = make()
    whole = progressive_validation(whole_est, X, y)
    est = make()
    chunked = progressive_validation(est, X, y, chunk_size=chunk_size)
    np.testing.assert_array_equal(chunked.predictions, whole.predictions)
    np.testing.assert_allclose(est.coef_, whole_est.coef_)


def test_classes_announced_when_first_chunk_misses_some(data):
    X, y = data
    order = np.argsort(y, kind="stable")  # first chunk holds class 0 only
    res = progressive_validation(Perceptron(), X[order], y[order], chunk_size=10)
    assert res.predictions.shape == (len(y),)
    est = Perceptron()
    res2 = progressive_validation(est, X[order], y[order], classes=[0, 1, 2, 3], chunk_size=10)
    np.testing.assert_array_equal(est.classes_, [0, 1, 2, 3])
    assert res2.predictions.shape == (len(y),)


def test_sample_weight_forwarded_per_chunk(data):
    X, y = data
    w = np.random.default_rng(0).uniform(0.1, 3.0, size=len(y))
    a, b = Perceptron(), Perceptron()
    res_a = progressive_validation(a, X, y, sample_weight=w)
    res_b = progressive_validation(b, X, y, sample_weight=w, chunk_size=13)
    np.testing.assert_array_equal(res_a.predictions, res_b.predictions)
    np.testing.assert_allclose(a.coef_, b.coef_)
    unweighted = Perceptron()
    progressive_validation(unweighted, X, y)
    assert not np.allclose(a.coef_, unweighted.coef_)


def test_warm_started_estimator_continues(data):
    X, y = data
    est = Perceptron(average=False)
    est.partial_fit(X[:60], y[:60], classes=np.unique(y))
    res = progressive_validation(est, X[60:], y[60:])
    ref_est = Perceptron(average=False)
    ref_est.partial_fit(X[:60], y[:60], classes=np.unique(y))
    ref = manual_progressive(ref_est, X[60:], y[60:], None)
    np.testing.assert_array_equal(res.predictions, ref)


def test_curve_sampling(data):
    X, y = data
    res = progressive_validation(Perceptron(), X, y)
    n = len(y)
    t, r = res.curve(points=None)
    np.testing.assert_array_equal(t, np.arange(1, n + 1))
    np.testing.assert_allclose(r, res.cumulative_mistake_rate)
    for scale in ("log", "linear"):
        t, r = res.curve(points=20, scale=scale)
        assert t[0] == 1 and t[-1] == n
        assert len(t) <= 20 and np.all(np.diff(t) > 0)
        np.testing.assert_allclose(r, res.cumulative_mistake_rate[t - 1])
    t_log, _ = res.curve(points=20, scale="log")
    t_lin, _ = res.curve(points=20, scale="linear")
    assert np.median(t_log) < np.median(t_lin)  # log spacing is dense at the start
    with pytest.raises(ValueError, match="scale"):
        res.curve(points=10, scale="cubic")
    with pytest.raises(ValueError, match="points"):
        res.curve(points=1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y": np.zeros(5)}, "different numbers of rows"),
        ({"X": np.zeros((0, 3)), "y": np.zeros(0)}, "empty|0 sample"),
        ({"y": np.zeros((10, 2))}, "one-dimensional"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"chunk_size": 2.5}, "chunk_size"),
        ({"sample_weight": np.ones(3)}, "sample_weight"),
        ({"classes": [0]}, "not in classes"),
    ],
)
def test_progressive_input_validation(kwargs, match):
    args = {"X": np.zeros((10, 3)), "y": np.r_[np.zeros(5), np.ones(5)]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        progressive_validation(Perceptron(), **args)


# --------------------------------------------------------------------------- Last
def _params_and_unfitted(est):
    return est.get_params(), hasattr(est, "classes_")


def test_last_without_random_stopping_is_single_pass(make, data):
    X, y = data
    est = make()
    before = _params_and_unfitted(est)
    out = online_to_batch_last(est, X, y, random_stopping=False)
    ref = make().partial_fit(X, y, classes=np.unique(y))
    np.testing.assert_allclose(out.coef_, ref.coef_)
    np.testing.assert_allclose(out.intercept_, ref.intercept_)
    assert out.t_ == len(y)  # one pass, not fit's n_epochs
    assert out is not est
    assert _params_and_unfitted(est) == before  # input untouched


def test_last_with_random_stopping_trains_on_a_random_prefix(make, data):
    X, y = data
    n = len(y)
    r = int(np.random.RandomState(3).randint(1, n + 1))
    assert r < n  # the seed must exercise a strict prefix
    out = online_to_batch_last(make(), X, y, random_state=3)
    assert out.t_ == r
    ref = make().partial_fit(X[:r], y[:r], classes=np.unique(y))
    np.testing.assert_allclose(out.coef_, ref.coef_)
    np.testing.assert_array_equal(out.classes_, np.unique(y))  # announced even if absent
    again = online_to_batch_last(make(), X, y, random_state=3)
    np.testing.assert_allclose(again.coef_, out.coef_)


# --------------------------------------------------------------------------- Averaging
@pytest.mark.parametrize("dataset", ["data", "binary_data"])
def test_average_is_mean_of_online_hypotheses(make, dataset, request):
    X, y = request.getfixturevalue(dataset)
    est = make()
    out = online_to_batch_average(est, X, y)
    assert out.get_params()["average"] is True
    assert est.get_params()["average"] is False and not hasattr(est, "classes_")
    assert out.t_ == len(y)
    # h_bar = (1/T) sum_t h_t, h_t the hypothesis after round t (the estimators' convention)
    loop = make()
    coefs, intercepts = [], []
    for i in range(len(y)):
        loop.partial_fit(X[i : i + 1], y[i : i + 1], classes=np.unique(y))
        coefs.append(loop.coef_.copy())
        intercepts.append(loop.intercept_.copy())
    np.testing.assert_allclose(out.coef_, np.mean(coefs, axis=0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(out.intercept_, np.mean(intercepts, axis=0), rtol=1e-9, atol=1e-12)
    assert not np.allclose(out.coef_, loop.coef_)  # differs from the last hypothesis


def test_average_requires_average_parameter(data):
    X, y = data
    with pytest.raises(ValueError, match="average"):
        online_to_batch_average(SkPerceptron(), X, y)


# --------------------------------------------------------------------------- Validation
def _split(data):
    X, y = data
    return X[:120], y[:120], X[120:], y[120:]


def test_validation_returns_best_candidate(make, data):
    X, y, X_val, y_val = _split(data)
    res = online_to_batch_validation(make(), X, y, X_val, y_val, n_blocks=6, random_state=0)
    assert isinstance(res, ValidationConversionResult)
    assert len(res.candidates) == 6
    errors = np.array([np.mean(c.predict(X_val) != y_val) for c in res.candidates])
    np.testing.assert_allclose(res.validation_errors, errors)
    assert np.ptp(errors) > 0  # the choice matters on this data
    assert res.best_index == int(np.argmin(errors))
    assert res.estimator is res.candidates[res.best_index]
    assert res.validation_errors[res.best_index] == errors.min()
    assert res[0] is res.estimator


def test_validation_candidates_are_reset_per_block_with_random_stops(make, data):
    X, y, X_val, y_val = _split(data)
    res = online_to_batch_validation(make(), X, y, X_val, y_val, n_blocks=4, random_state=5)
    rng = np.random.RandomState(5)
    for i, (cand, r) in enumerate(zip(res.candidates, res.n_examples, strict=True)):
        start = 30 * i
        assert r == rng.randint(1, 31)
        assert cand.t_ == r
        ref = make().partial_fit(X[start : start + r], y[start : start + r], np.unique(y))
        np.testing.assert_allclose(cand.coef_, ref.coef_)
        np.testing.assert_array_equal(cand.classes_, np.unique(y))


def test_validation_reproducible_under_random_state(data):
    X, y, X_val, y_val = _split(data)
    est = Perceptron()
    before = _params_and_unfitted(est)
    a = online_to_batch_validation(est, X, y, X_val, y_val, n_blocks=5, random_state=11)
    b = online_to_batch_validation(est, X, y, X_val, y_val, n_blocks=5, random_state=11)
    np.testing.assert_array_equal(a.n_examples, b.n_examples)
    np.testing.assert_array_equal(a.validation_errors, b.validation_errors)
    np.testing.assert_allclose(a.estimator.coef_, b.estimator.coef_)
    c = online_to_batch_validation(est, X, y, X_val, y_val, n_blocks=5, random_state=12)
    assert not np.array_equal(a.n_examples, c.n_examples)
    assert _params_and_unfitted(est) == before


def test_validation_uneven_blocks_and_checks(data):
    X, y, X_val, y_val = _split(data)
    res = online_to_batch_validation(Perceptron(), X, y, X_val, y_val, n_blocks=7, random_state=0)
    sizes = [len(b) for b in np.array_split(np.arange(len(y)), 7)]
    assert np.all(res.n_examples >= 1) and np.all(res.n_examples <= sizes)
    for bad in (0, len(y) + 1, 2.5):
        with pytest.raises(ValueError, match="n_blocks"):
            online_to_batch_validation(Perceptron(), X, y, X_val, y_val, n_blocks=bad)
    with pytest.raises(ValueError, match="y_val"):
        online_to_batch_validation(Perceptron(), X, y, X_val, y_val[:-1])
