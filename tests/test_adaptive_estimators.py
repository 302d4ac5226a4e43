"""The scale-free estimators' contract: scikit-learn's checks, bad input leaves the model as it
was, model files, one event at a time, dense and CSR, growing labels, probabilities."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import check_estimator
from test_estimators import BAD_INPUTS

from onlinelearn import (
    AdaGradClassifier,
    AdaGradRegressor,
    NormalizedClassifier,
    NormalizedRegressor,
)
from onlinelearn.model_io import load_model, save_model

CLASSIFIERS = [
    AdaGradClassifier(random_state=0),
    AdaGradClassifier(loss="logistic", l1=0.01, l2=0.1, random_state=0),
    NormalizedClassifier(random_state=0),
    NormalizedClassifier(loss="logistic", random_state=0),
]
REGRESSORS = [
    AdaGradRegressor(random_state=0),
    AdaGradRegressor(loss="epsilon_insensitive", l1=0.01, random_state=0),
    NormalizedRegressor(random_state=0),
    NormalizedRegressor(loss="absolute", random_state=0),
]

EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": (
        "an online step scaled by w is not w repeated steps (the rates move on in between); "
        "scikit-learn's SGD learners fail it for the same reason"
    ),
    "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
    "check_class_weight_classifiers": (
        "expects class weights 1000:0.0001 to reach the weighted optimum on very noisy blobs; "
        "the last iterate of an online learner does not minimise a weighted loss"
    ),
}


@pytest.mark.parametrize("est", CLASSIFIERS + REGRESSORS, ids=repr)
def test_sklearn_check_estimator(est):
    check_estimator(est, expected_failed_checks=EXPECTED_FAILURES)


def _blobs(n=200, d=5, K=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(K, d)) * 2
    y = rng.integers(0, K, n)
    return centers[y] + rng.normal(size=(n, d)), y


def _regression(n=200, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)


def _same_state(before, after):
    assert set(before) == set(after)
    for k, v in before.items():
        if isinstance(v, np.ndarray):
            assert np.array_equal(v, after[k]), k
        else:
            assert v == after[k] or v is after[k], k


@pytest.mark.parametrize("est", CLASSIFIERS, ids=repr)
@pytest.mark.parametrize("name,corrupt,msg", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_leaves_the_classifier_unchanged(est, name, corrupt, msg):
    X, y = _blobs()
    clf = copy.deepcopy(est).fit(X, y)
    before = copy.deepcopy(clf.__dict__)
    Xb, yb = corrupt(X.copy(), y.copy())
    with pytest.raises(ValueError, match=msg):
        clf.partial_fit(Xb, yb)
    _same_state(before, clf.__dict__)


REGRESSION_BAD = [b for b in BAD_INPUTS if b[0] in ("nan", "inf", "features", "empty", "lengths")]
REGRESSION_BAD.append(("nan target", lambda X, y: (X, np.where(np.arange(len(y)) == 2, np.nan, y)),
                       "NaN"))  # fmt: skip


@pytest.mark.parametrize("est", REGRESSORS, ids=repr)
@pytest.mark.parametrize("name,corrupt,msg", REGRESSION_BAD, ids=[b[0] for b in REGRESSION_BAD])
def test_bad_input_leaves_the_regressor_unchanged(est, name, corrupt, msg):
    X, y = _regression()
    reg = copy.deepcopy(est).fit(X, y)
    before = copy.deepcopy(reg.__dict__)
    Xb, yb = corrupt(X.copy(), y.copy())
    with pytest.raises(ValueError, match=msg):
        reg.partial_fit(Xb, yb)
    _same_state(before, reg.__dict__)


@pytest.mark.parametrize("cls", [AdaGradRegressor, NormalizedRegressor])
def test_overflowing_step_is_refused_and_restores_the_model(cls):
    X, y = _regression()
    reg = cls().fit(X, y)
    before = copy.deepcopy(reg.__dict__)
    with pytest.raises(FloatingPointError, match="left as it was"):
        reg.partial_fit(np.full((1, 5), 1e200), [1e300])
    _same_state(before, reg.__dict__)
    with pytest.raises(ValueError, match="classes"):
        reg.partial_fit(X, y, classes=[0, 1])
    _same_state(before, reg.__dict__)


def test_bad_parameters_are_refused():
    X, y = _blobs()
    for est, match in [
        (AdaGradClassifier(eta=0.0), "eta"),
        (AdaGradClassifier(l1=-1.0), "l1"),
        (AdaGradClassifier(loss="log"), "loss"),
        (NormalizedClassifier(eta=-1.0), "eta"),
        (AdaGradRegressor(loss="hinge"), "loss"),
        (NormalizedRegressor(epsilon=-0.1), "epsilon"),
    ]:
        with pytest.raises(ValueError, match=match):
            est.fit(X, y)


@pytest.mark.parametrize("est", CLASSIFIERS + REGRESSORS, ids=repr)
def test_model_file_round_trip(est, tmp_path):
    X, y = _blobs() if hasattr(est, "class_weight") else _regression()
    a = copy.deepcopy(est).fit(X[:150], y[:150])
    save_model(a, tmp_path / "m.npz")
    b = load_model(tmp_path / "m.npz")
    assert type(b) is type(a) and b.get_params() == a.get_params()
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    a.partial_fit(X[150:], y[150:])
    b.partial_fit(X[150:], y[150:])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.parametrize("est", CLASSIFIERS + REGRESSORS, ids=repr)
def test_dense_csr_and_one_event_learn_the_same(est):
    """Dense and CSR batches, and dict rows one at a time, learn the same weights.  The
    progressive predictions are the step's own: NAG's are made after the rescaling of a
    feature whose scale grows (Algorithm 2, lines 4-9), ``predict_one``'s before it, so the
    two agree on every row that brings no new scale."""
    X, y = _blobs() if hasattr(est, "class_weight") else _regression()
    X[X < -1] = 0.0
    a = copy.deepcopy(est).partial_fit(X, y)
    b = copy.deepcopy(est).partial_fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-14)
    c, d = copy.deepcopy(est), copy.deepcopy(est)
    first = {"classes": np.unique(y)} if hasattr(est, "class_weight") else {}
    c.partial_fit(X[:1], y[:1], **first)
    d.partial_fit(X[:1], y[:1], **first)
    seen = []
    for i in range(1, len(y)):
        row = {j: v for j, v in enumerate(X[i]) if v != 0.0}
        seen.append(c.predict_one(row))
        c.learn_one(row, y[i])
    progressive = d.partial_fit_predict(X[1:], y[1:])
    np.testing.assert_allclose(c.coef_, d.coef_, rtol=1e-12, atol=1e-14)
    same = np.isclose(np.asarray(seen, dtype=float), progressive.astype(float), rtol=1e-12,
                      atol=1e-14)  # fmt: skip
    new_scale = (np.abs(X[1:]) > np.maximum.accumulate(np.abs(X), axis=0)[:-1]).any(axis=1)
    if isinstance(est, NormalizedClassifier | NormalizedRegressor):
        assert same[~new_scale].all()
    else:
        assert same.all()


@pytest.mark.parametrize("cls", [AdaGradClassifier, NormalizedClassifier])
def test_binary_model_grows_to_multiclass_with_the_same_decisions(cls):
    X, y = _blobs(K=3)
    two = y < 2
    clf = cls().partial_fit(X[two], y[two])
    before = clf.predict(X)
    grown = copy.deepcopy(clf)
    grown._grow(np.array([0, 1, 2]))
    np.testing.assert_array_equal(grown.predict(X), before)
    clf.partial_fit(X[~two], y[~two])
    assert list(clf.classes_) == [0, 1, 2] and clf.coef_.shape == (3, 5)


@pytest.mark.parametrize("cls", [AdaGradClassifier, NormalizedClassifier])
@pytest.mark.parametrize("K", [2, 3])
def test_logistic_probabilities_are_the_losss(cls, K):
    X, y = _blobs(K=K)
    clf = cls(loss="logistic", random_state=0).fit(X, y)
    s = clf.decision_function(X)
    P = clf.predict_proba(X)
    if K == 2:
        ref = np.column_stack([1 / (1 + np.exp(s)), 1 / (1 + np.exp(-s))])
    else:
        e = np.exp(s - s.max(axis=1, keepdims=True))
        ref = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(P, ref, rtol=1e-9, atol=1e-12)
    assert clf.score(X, y) > 0.9


def test_l1_gives_exact_zeros():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 20))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    clf = AdaGradClassifier(loss="logistic", l1=20.0, random_state=0).fit(X, y)
    assert (clf.coef_ == 0).sum() >= 15 and clf.coef_[0, 0] > 0 > clf.coef_[0, 1]
    assert clf.score(X, y) > 0.9


def test_untouched_weights_read_as_zero_without_beta():
    """beta = l2 = 0: a weight no gradient touched has 0 / 0 in the closed form; it is 0."""
    X, y = _blobs()
    X[:, 3] = 0.0
    clf = AdaGradClassifier(beta=0.0, random_state=0).fit(X, y)
    assert np.isfinite(clf.coef_).all() and (clf.coef_[:, 3] == 0).all()
    progressive = AdaGradClassifier(beta=0.0).partial_fit_predict(X, y)
    assert np.mean(progressive == y) > 0.8


@pytest.mark.parametrize(
    "est",
    [AdaGradClassifier(loss="logistic"), NormalizedClassifier(loss="logistic"),
     AdaGradRegressor(l1=0.01), NormalizedRegressor(importance_invariant=True)],
    ids=repr,
)  # fmt: skip
def test_one_event_road_refuses_bad_rows_and_keeps_the_model(est):
    """The compiled one-event road: a NaN value, an unknown column, an overflowing step all
    raise and leave the model as it was; an unseen label takes the general path and grows."""
    is_clf = hasattr(est, "class_weight")
    X, y = _blobs(K=2) if is_clf else _regression()
    m = copy.deepcopy(est).partial_fit(X, y)
    before = copy.deepcopy(m.__dict__)
    bad = [({0: np.nan, 1: 1.0}, y[0], ValueError), ({0: 1.0, 9: 1.0}, y[0], ValueError)]
    if not is_clf:
        bad.append(({0: 1e200, 1: 1e200}, 1e300, FloatingPointError))
    for row, target, err in bad:
        with pytest.raises(err):
            m.learn_one(row, target)
        _same_state(before, m.__dict__)
    # the same row learned through the road and through partial_fit: the same model
    row = {j: float(v) for j, v in enumerate(X[0])}
    a, b = copy.deepcopy(m), copy.deepcopy(m)
    a.learn_one(row, y[0])
    b.partial_fit(X[:1], y[:1])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.predict_one(row) == b.predict(X[:1])[0]
    if is_clf:
        a.learn_one(row, 7)
        assert list(a.classes_) == [0, 1, 7]
