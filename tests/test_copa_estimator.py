"""The COPA estimator (``onlinelearn.COPA``) against direct calls of its closed-form step.

W denotes the (R, Q) matrix of the model, R = n_features (+1 with the intercept row), read as
``[coef_.T; intercept_]``; one round of COPA is W <- W + x alpha^T with ``alpha`` from
:func:`onlinelearn._core.copa.copa_step` (paper eq. (24)).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn._core.copa import copa_step
from onlinelearn.linear.copa import COPA
from onlinelearn.linear.passive_aggressive import PassiveAggressiveClassifier


def weights(clf):
    W = clf.coef_.T
    if clf.fit_intercept:
        W = np.vstack([W, clf.intercept_[None, :]])
    return W


def augment(x, fit_intercept):
    return np.append(x, 1.0) if fit_intercept else np.asarray(x, dtype=float)


def manual_round(W, x, y_code, C):
    """W + x alpha^T with alpha from a direct call of the kernel."""
    Q = W.shape[1]
    alpha = np.zeros(Q)
    work_idx = np.zeros(Q, dtype=np.int64)
    work_val = np.zeros(Q)
    scores = np.ascontiguousarray(x @ W)
    copa_step(scores, int(y_code), float(x @ x), float(C), alpha, work_idx, work_val)
    return W + np.outer(x, alpha)


def stream(n, d, Q, seed, sparse=False):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(Q, d)) * 1.5
    y = rng.integers(Q, size=n)
    X = centres[y] + rng.normal(size=(n, d))
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    return X, y


# ---------------------------------------------------------------- sum-to-zero constraint
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("average", [False, True])
def test_columns_sum_to_zero_over_long_stream(sparse, average):
    X, y = stream(5000, 8, 5, seed=1, sparse=sparse)
    clf = COPA(C=1.0, average=average)
    for start in range(0, 5000, 500):
        clf.partial_fit(X[start : start + 500], y[start : start + 500])
    assert clf.coef_.shape == (5, 8)
    assert clf.n_updates_ > 100
    assert np.abs(clf.coef_.sum(axis=0)).max() < 1e-12
    assert abs(clf.intercept_.sum()) < 1e-12
    clf.fit(X, y)
    assert np.abs(clf.coef_.sum(axis=0)).max() < 1e-12
    assert abs(clf.intercept_.sum()) < 1e-12


def test_two_classes_keep_two_columns():
    X, y = stream(200, 4, 2, seed=2)
    clf = COPA(n_epochs=2, random_state=0, average=False).fit(X, y)
    assert clf.coef_.shape == (2, 4)
    assert np.abs(clf.coef_.sum(axis=0)).max() < 1e-12
    s = X @ clf.coef_.T + clf.intercept_
    np.testing.assert_allclose(clf.decision_function(X), s[:, 1] - s[:, 0], atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(s, axis=1)])


# ---------------------------------------------------------------- one round = the kernel
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("sparse", [False, True])
def test_each_round_is_the_closed_form_step(fit_intercept, sparse):
    X, y = stream(300, 6, 4, seed=3, sparse=sparse)
    Xd = X.toarray() if sparse else X
    sw = np.random.default_rng(0).uniform(0.2, 3.0, size=300)
    C = 0.7
    clf = COPA(C=C, fit_intercept=fit_intercept, average=False)
    clf.partial_fit(X[:20], y[:20], classes=np.arange(4))
    W = weights(clf)
    for i in range(20, 300):
        x = augment(Xd[i], fit_intercept)
        expected = manual_round(W, x, y[i], C * sw[i])
        clf.partial_fit(X[i : i + 1], y[i : i + 1], sample_weight=sw[i : i + 1])
        W = weights(clf)
        np.testing.assert_allclose(W, expected, rtol=1e-12, atol=1e-12)


def test_fit_is_algorithm_1():
    X, y = stream(150, 5, 3, seed=4)
    C = 2.0
    clf = COPA(C=C, n_epochs=3, shuffle=False, average=False).fit(X, y)
    W = np.zeros((6, 3))
    for _ in range(3):
        for i in range(150):
            W = manual_round(W, augment(X[i], True), y[i], C)
    np.testing.assert_allclose(weights(clf), W, rtol=1e-11, atol=1e-12)
    assert clf.t_ == 450


# ---------------------------------------------------------------- averaging
@pytest.mark.parametrize("sparse", [False, True])
def test_average_is_mean_of_iterates(sparse):
    X, y = stream(400, 5, 4, seed=5, sparse=sparse)
    twin = COPA(C=0.5, average=False)
    avg = COPA(C=0.5, average=True, average_power=0.0)
    iterates = []
    for i in range(400):
        twin.partial_fit(X[i : i + 1], y[i : i + 1], classes=np.arange(4))
        iterates.append(weights(twin))
    avg.partial_fit(X, y, classes=np.arange(4))
    np.testing.assert_allclose(weights(avg), np.mean(iterates, axis=0), rtol=1e-10, atol=1e-12)
    # the default weighs round t by t^2
    t2 = np.arange(1, 401, dtype=np.float64) ** 2
    np.testing.assert_allclose(weights(COPA(C=0.5).partial_fit(X, y, classes=np.arange(4))),
                               np.average(iterates, axis=0, weights=t2), rtol=1e-10,
                               atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(
        weights(twin), weights(COPA(C=0.5, average=False).partial_fit(X, y)), atol=1e-12
    )


# ---------------------------------------------------------------- class_weight='confusion'
def test_confusion_weight_running_counts_in_partial_fit():
    X, y = stream(300, 4, 3, seed=6)
    y = np.where(np.random.default_rng(1).random(300) < 0.7, 0, y)  # unbalanced
    C = 50.0
    clf = COPA(C=C, class_weight="confusion", average=False)
    clf.partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    clf.partial_fit(X[100:], y[100:])
    W = np.zeros((5, 3))
    counts = np.zeros(3)
    for i in range(300):
        counts[y[i]] += 1
        W = manual_round(W, augment(X[i], True), y[i], C / counts[y[i]] ** 2)
    np.testing.assert_allclose(weights(clf), W, rtol=1e-11, atol=1e-12)
    np.testing.assert_array_equal(clf.class_counts_, np.bincount(y, minlength=3))


def test_confusion_weight_exact_counts_in_fit():
    X, y = stream(200, 4, 3, seed=7)
    y = np.where(np.random.default_rng(2).random(200) < 0.6, 1, y)
    C = 30.0
    sw = np.random.default_rng(3).uniform(0.5, 2.0, size=200)
    clf = COPA(C=C, class_weight="confusion", n_epochs=2, shuffle=False, average=False)
    clf.fit(X, y, sample_weight=sw)
    T = np.bincount(y, minlength=3).astype(float)
    W = np.zeros((5, 3))
    for _ in range(2):
        for i in range(200):
            W = manual_round(W, augment(X[i], True), y[i], C * sw[i] / T[y[i]] ** 2)
    np.testing.assert_allclose(weights(clf), W, rtol=1e-11, atol=1e-12)


def test_confusion_weight_with_announced_unseen_class():
    X, y = stream(100, 3, 2, seed=8)
    clf = COPA(class_weight="confusion", average=False).partial_fit(X, y, classes=[0, 1, 5])
    assert list(clf.classes_) == [0, 1, 5]
    assert np.all(np.isfinite(clf.coef_))
    assert np.abs(clf.coef_.sum(axis=0)).max() < 1e-12


def test_confusion_mode_is_copa_only():
    X, y = stream(30, 3, 3, seed=9)
    with pytest.raises(ValueError):
        PassiveAggressiveClassifier(class_weight="confusion").fit(X, y)
    with pytest.raises(ValueError):
        COPA(class_weight="nonsense", average=False).fit(X, y)
    with pytest.raises(ValueError):
        COPA(C=0.0, average=False).fit(X, y)
    COPA(class_weight="balanced", average=False).fit(X, y)
    COPA(class_weight={0: 2.0}, average=False).fit(X, y)


# ---------------------------------------------------------------- growing label sets
def test_new_label_adds_a_zero_column_then_learns_with_Q_plus_one():
    X, y = stream(200, 4, 3, seed=10)
    first = y != 2
    X1, y1 = X[first], y[first]
    X2, y2 = X[~first], y[~first]
    C = 1.0
    clf = COPA(C=C, average=False).partial_fit(X1, y1)
    assert clf.coef_.shape == (2, 4)
    W = np.hstack([weights(clf), np.zeros((5, 1))])
    clf.partial_fit(X2[:1], y2[:1])
    assert list(clf.classes_) == [0, 1, 2]
    np.testing.assert_allclose(
        weights(clf), manual_round(W, augment(X2[0], True), 2, C), rtol=1e-12, atol=1e-12
    )
    clf.partial_fit(X, y)
    assert np.abs(clf.coef_.sum(axis=0)).max() < 1e-12
    assert abs(clf.intercept_.sum()) < 1e-12


def test_string_labels_inserted_in_sorted_position():
    X, y = stream(60, 3, 3, seed=11)
    names = np.array(["b", "d", "c"])[y]
    clf = COPA(average=False).partial_fit(X[names != "c"], names[names != "c"])
    before = weights(clf)
    grown = np.zeros((4, 4))
    grown[:, [1, 3]] = before
    i = int(np.flatnonzero(names == "b")[0])
    clf.partial_fit(X[i : i + 1], names[i : i + 1], classes=["a", "c"])
    assert list(clf.classes_) == ["a", "b", "c", "d"]
    expected = manual_round(grown, augment(X[i], True), 1, 1.0)
    np.testing.assert_allclose(weights(clf), expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- robustness
def _state(clf):
    meta, arrays = clf._get_state()
    return meta, {k: v.copy() for k, v in arrays.items()}


@pytest.mark.parametrize(
    "bad",
    [
        lambda X, y: (np.full_like(X[:5], np.nan), y[:5], None),
        lambda X, y: (X[:5, :2], y[:5], None),
        lambda X, y: (X[:5], y[:4], None),
        lambda X, y: (X[:5], y[:5], np.ones(3)),
        lambda X, y: (X[:5], y[:5], -np.ones(5)),
    ],
)
def test_bad_input_leaves_model_unchanged(bad):
    X, y = stream(100, 4, 3, seed=12)
    clf = COPA(average=True, class_weight="confusion").partial_fit(X, y)
    meta, arrays = _state(clf)
    coef = clf.coef_.copy()
    Xb, yb, sw = bad(X, y)
    with pytest.raises(ValueError):
        clf.partial_fit(Xb, np.append(yb, 7)[: len(yb)], sample_weight=sw)
    meta2, arrays2 = _state(clf)
    assert meta == meta2
    for k in arrays:
        np.testing.assert_array_equal(arrays[k], arrays2[k])
    np.testing.assert_array_equal(clf.coef_, coef)


# ---------------------------------------------------------------- scikit-learn conventions
# Checks that fail for every learner of the package (the same failures with
# PassiveAggressiveClassifier): they concern the base class or online learning itself, not COPA.
BASE_LEVEL_FAILURES = {
    # a weight w is one step of cost w C, not w repeated steps (true of any online learner)
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
    # class weights scale the step cost; the check expects a near-hard reweighting
    "check_class_weight_classifiers",
}


def test_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(COPA(n_epochs=2, average=False), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed <= BASE_LEVEL_FAILURES, failed - BASE_LEVEL_FAILURES


# ---------------------------------------------------------------- online confusion losses
@pytest.mark.parametrize("sparse", [False, True])
def test_partial_fit_confusion_losses_and_weights(sparse):
    from onlinelearn.metrics import online_confusion_risk

    X, y = stream(200, 4, 3, seed=13, sparse=sparse)
    Xd = X.toarray() if sparse else X
    a = COPA(C=0.5, average=True, class_weight="confusion")
    b = COPA(C=0.5, average=True, class_weight="confusion")
    a.partial_fit(X[:50], y[:50])
    b.partial_fit(X[:50], y[:50])
    twin = COPA(C=0.5, class_weight="confusion", average=False).partial_fit(X[:50], y[:50])
    losses = a.partial_fit_confusion(X[50:], y[50:])
    b.partial_fit(X[50:], y[50:])
    np.testing.assert_array_equal(weights(a), weights(b))
    np.testing.assert_array_equal(a.class_counts_, b.class_counts_)
    expected = np.zeros((150, 3))
    for t, i in enumerate(range(50, 200)):
        s = augment(Xd[i], True) @ weights(twin)
        expected[t] = np.maximum(s + 0.5, 0.0)
        expected[t, y[i]] = 0.0
        twin.partial_fit(X[i : i + 1], y[i : i + 1])
    np.testing.assert_allclose(losses, expected, rtol=1e-12, atol=1e-12)
    risk = online_confusion_risk(y[50:], losses, a.classes_)
    assert risk.shape == (3, 3) and np.all(np.diag(risk) == 0)


def test_partial_fit_confusion_from_scratch_and_bad_input():
    X, y = stream(40, 3, 3, seed=14)
    clf = COPA(average=False)
    losses = clf.partial_fit_confusion(X, y)
    assert losses.shape == (40, 3)
    np.testing.assert_allclose(losses[0][np.arange(3) != y[0]], 0.5)
    meta, arrays = _state(clf)
    with pytest.raises(ValueError):
        clf.partial_fit_confusion(np.full((2, 3), np.nan), y[:2])
    meta2, arrays2 = _state(clf)
    assert meta == meta2
    for k in arrays:
        np.testing.assert_array_equal(arrays[k], arrays2[k])
