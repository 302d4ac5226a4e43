"""The estimator contract: scikit-learn checks, growing label sets, bad input, determinism,
class and sample weights, averaging, merging, and the Perceptron mistake bound."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import check_estimator

from onlinelearn import (
    PassiveAggressiveClassifier,
    Perceptron,
    PNormPerceptron,
    Winnow,
    merge_models,
)

ESTIMATORS = [
    Perceptron(n_epochs=3),
    Perceptron(n_epochs=3, average=True),
    PassiveAggressiveClassifier(n_epochs=3),
    PassiveAggressiveClassifier(variant="PA-II", n_epochs=3, average=True),
    Winnow(n_epochs=3, eta=0.5),
    PNormPerceptron(n_epochs=3),
    Winnow(n_epochs=3, step="PA-I", margin=0.2),
    Winnow(n_epochs=3, step="PA", balanced=True, average=True),
    PNormPerceptron(n_epochs=3, step="PA-II", C=0.5, average=True),
]
MAKERS = [lambda e=e: copy.deepcopy(e) for e in ESTIMATORS]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: repr(e))
def test_sklearn_check_estimator(est):
    check_estimator(est, expected_failed_checks=EXPECTED_FAILED_CHECKS)


#: Checks that encode properties of batch loss minimisers, which online learners do not have.
EXPECTED_FAILED_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": (
        "an online step scaled by w is not w repeated steps (the order and the margin change "
        "in between); scikit-learn's own SGD learners fail it for the same reason"
    ),
    "check_sample_weight_equivalence_on_sparse_data": "as on dense data",
    "check_class_weight_classifiers": (
        "expects class weights 1000:0.0001 to make >87% of predictions class 0 on very noisy "
        "blobs; a mistake-driven learner's last hypothesis does not minimise a weighted loss"
    ),
}


def _blobs(n=300, d=6, K=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(K, d)) * 3
    y = rng.integers(0, K, n)
    X = centers[y] + rng.normal(size=(n, d))
    return X, y


@pytest.mark.parametrize("make", MAKERS)
def test_dense_and_csr_give_the_same_weights(make):
    X, y = _blobs()
    a = make().set_params(random_state=0).fit(X, y)
    b = make().set_params(random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make", MAKERS)
def test_float32_input(make):
    """float32 X with float64 weights (``dtype``) learns exactly what the same values as
    float64 X do: the input's precision never leaks into the sums."""
    X, y = _blobs()
    a = make().set_params(random_state=0, dtype="float64").fit(X.astype(np.float32), y)
    b = make().set_params(random_state=0).fit(X.astype(np.float32).astype(np.float64), y)
    assert a.coef_.dtype == np.float64
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    assert a.score(X, y) > 0.8


@pytest.mark.parametrize("make", MAKERS)
def test_same_seed_same_weights_bit_for_bit(make):
    X, y = _blobs()
    a = make().set_params(random_state=7).fit(X, y)
    b = make().set_params(random_state=7).fit(X, y)
    c = make().set_params(random_state=8).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)


@pytest.mark.parametrize("make", MAKERS)
def test_averaging_equals_explicit_average_of_iterates(make):
    X, y = _blobs(n=120)
    avg = make().set_params(average=True)
    plain = make().set_params(average=False)
    total = None
    classes = np.unique(y)
    eta = float(avg.get_params().get("average_power", 0.0))  # round t weighs t^eta
    for i in range(len(y)):
        avg.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
        plain.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
        W = (i + 1.0) ** eta * np.hstack([plain.coef_, plain.intercept_[:, None]])
        total = W if total is None else total + W
    W_avg = np.hstack([avg.coef_, avg.intercept_[:, None]])
    t_sum = np.sum(np.arange(1, len(y) + 1, dtype=np.float64) ** eta)
    np.testing.assert_allclose(W_avg, total / t_sum, rtol=1e-8, atol=1e-12)


def test_partial_fit_grows_label_set():
    X, y = _blobs(n=200, K=4)
    clf = PassiveAggressiveClassifier()
    m = y < 2
    clf.partial_fit(X[m][:1], y[m][:1])  # one class: predicts it
    assert list(clf.classes_) == [y[m][0]]
    assert np.all(clf.predict(X) == y[m][0])
    clf.partial_fit(X[m], y[m])  # binary
    assert clf.coef_.shape == (1, X.shape[1])
    before = clf.decision_function(X)
    clf.partial_fit(X[y == 3][:1], y[y == 3][:1])  # a third label: becomes multiclass
    assert list(clf.classes_) == [0, 1, 3]
    assert clf.coef_.shape == (3, X.shape[1])
    clf.partial_fit(X, y)  # a fourth
    assert list(clf.classes_) == [0, 1, 2, 3]
    assert clf.score(X, y) > 0.7
    assert before.shape == (X.shape[0],)


def test_binary_to_multiclass_keeps_decisions():
    X, y = _blobs(n=100, K=2)
    clf = Perceptron(average=False).partial_fit(X, y)
    pred = clf.predict(X)
    dec = clf.decision_function(X)
    clf.partial_fit(np.zeros((1, X.shape[1])), [7], classes=[0, 1, 7])
    # the zero row with label 7 updates columns 7 and the rival by the intercept only
    W = np.hstack([clf.coef_, clf.intercept_[:, None]])
    assert W.shape == (3, X.shape[1] + 1)
    np.testing.assert_allclose(W[1, :-1] - W[0, :-1], -2 * 0 + (W[1, :-1] - W[0, :-1]))
    np.testing.assert_allclose(clf.coef_[1] - clf.coef_[0], np.asarray(
        Perceptron(average=False).partial_fit(X, y).coef_[0]), rtol=1e-12)  # fmt: skip
    assert pred.shape == dec.shape


def test_string_labels():
    X, y = _blobs(n=150, K=3)
    names = np.array(["ham", "spam", "eggs"])[y]
    clf = PassiveAggressiveClassifier().fit(X, names)
    assert set(clf.predict(X)) <= set(names)
    with pytest.raises(ValueError, match="cannot join"):
        clf.partial_fit(X[:3], [1, 2, 3])


BAD_INPUTS = [
    ("nan", lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), y),
     "NaN"),
    ("inf", lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.inf, X), y),
     "infinity"),
    ("features", lambda X, y: (X[:, :-1], y), "features"),
    ("empty", lambda X, y: (X[:0], y[:0]), "0 sample"),
    ("1-D X", lambda X, y: (X[0], y[:1]), "2D"),
    ("lengths", lambda X, y: (X, y[:-1]), "rows"),
    ("nan label", lambda X, y: (X, np.where(np.arange(len(y)) == 2, np.nan, y.astype(float))),
     "NaN"),
    ("continuous y", lambda X, y: (X, y + 0.5), "label type"),
]  # fmt: skip


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("name,corrupt,msg", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_clear_error_and_model_unchanged(make, name, corrupt, msg):
    X, y = _blobs()
    clf = make().fit(X, y)
    state = copy.deepcopy(clf.__dict__)
    Xb, yb = corrupt(X.copy(), y.copy())
    with pytest.raises(ValueError, match=msg):
        clf.partial_fit(Xb, yb)
    for k, v in state.items():
        after = clf.__dict__[k]
        if isinstance(v, np.ndarray):
            assert np.array_equal(v, after), k
        else:
            assert v == after or v is after, k
    assert set(clf.__dict__) == set(state)


def test_nonfinite_step_restores_the_model():
    """PA's tau = loss / ||x||^2 overflows for a subnormal ||x||^2: error, model unchanged."""
    clf = PassiveAggressiveClassifier(variant="PA", fit_intercept=False)
    clf.fit(np.array([[1.0], [-1.0]]), [0, 1])
    before = copy.deepcopy(clf.__dict__)
    with pytest.raises(FloatingPointError, match="left as it was"):
        clf.partial_fit(np.array([[1e-160], [3e-160]]), [1, 0])
    assert np.array_equal(clf._theta, before["_theta"])
    assert np.array_equal(clf._st, before["_st"])


def test_class_weight_balanced_running_counts():
    """partial_fit's 'balanced' weight of the i-th row is n_i / (K n_{y,i}) (counts so far)."""
    X = np.eye(4)
    y = np.array([0, 0, 0, 1])
    clf = Perceptron(class_weight="balanced", fit_intercept=False)
    clf.partial_fit(X, y, classes=[0, 1])
    # row t weighs n_t / (K n_{y_t}(t)): 1/(2*1), 2/(2*2), 3/(2*3), 4/(2*1)
    ref = Perceptron(fit_intercept=False).partial_fit(
        X, y, classes=[0, 1], sample_weight=[0.5, 0.5, 0.5, 2.0]
    )
    np.testing.assert_allclose(clf.coef_, ref.coef_)
    assert np.allclose(clf.class_counts_, [3, 1])


def test_class_weight_dict_and_sample_weight_scale_the_step():
    X, y = _blobs(n=60, K=2)
    a = Perceptron(class_weight={1: 3.0}, shuffle=False).fit(X, y)
    b = Perceptron(shuffle=False).fit(X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(a.coef_, b.coef_)
    c = PassiveAggressiveClassifier(C=0.01, shuffle=False).fit(X, y, sample_weight=np.full(60, 2))
    d = PassiveAggressiveClassifier(C=0.02, shuffle=False).fit(X, y)
    np.testing.assert_allclose(c.coef_, d.coef_)


def test_merge_models_weighted_by_updates():
    X, y = _blobs(n=400, K=3)
    a = PassiveAggressiveClassifier().partial_fit(X[:200], y[:200])
    b = PassiveAggressiveClassifier().partial_fit(X[200:], y[200:])
    m = merge_models([a, b])
    ua, ub = a.n_updates_, b.n_updates_
    expect = (ua * a.coef_ + ub * b.coef_) / (ua + ub)
    np.testing.assert_allclose(m.coef_, expect, rtol=1e-12)
    assert m.n_updates_ == ua + ub and m.t_ == 400
    assert m.score(X, y) > 0.8
    # merging with an averaged model: the merged average is the weighted mean of averages
    a2 = Perceptron(average=True).partial_fit(X[:200], y[:200])
    b2 = Perceptron(average=True).partial_fit(X[200:], y[200:])
    m2 = merge_models([a2, b2])
    w = np.array([a2.n_updates_, b2.n_updates_], float)
    w /= w.sum()
    np.testing.assert_allclose(m2.coef_, w[0] * a2.coef_ + w[1] * b2.coef_, rtol=1e-12)
    with pytest.raises(ValueError, match="parameters"):
        merge_models([a, PassiveAggressiveClassifier(C=3).partial_fit(X, y)])


def test_perceptron_mistake_bound_corollary_5():
    """|M| <= L + X||u|| sqrt(L) + X^2 ||u||^2 with L = sum_{t in M} [1 - y<u,x>]_+."""
    rng = np.random.default_rng(3)
    for _trial in range(20):
        d = int(rng.integers(2, 30))
        u = rng.normal(size=d)
        X = rng.normal(size=(2000, d))
        marg = X @ u
        keep = np.abs(marg) > 0.2 * np.abs(marg).std()  # separable with a margin
        X, y = X[keep], (marg[keep] > 0).astype(int)
        clf = Perceptron(fit_intercept=False)
        pred = clf.partial_fit_predict(X, y)
        M = pred != y
        # the update rule also fires on a score of exactly 0: count those rounds too
        assert clf.n_updates_ >= M.sum()
        ys = np.where(y == 1, 1.0, -1.0)
        gamma = np.min(ys * (X @ u))
        u_s = u / gamma  # scaled so that y<u,x> >= 1 on every example: L = 0
        Xn = np.linalg.norm(X, axis=1).max()
        bound = Xn**2 * (u_s @ u_s)
        assert clf.n_updates_ <= bound + 1e-9
        assert clf.n_updates_ > 0


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("grow", [False, True])
def test_failed_sparse_update_restores_only_touched_rows_exactly(average, grow):
    """The transaction of a sparse Euclidean batch saves only the rows it can touch: after an
    overflow every array is back to its exact bytes, rows touched or not, new labels or not."""
    rng = np.random.default_rng(7)
    X = sp.random(50, 30, density=0.2, random_state=1, format="csr")
    y = rng.integers(0, 3, 50)
    clf = PassiveAggressiveClassifier(variant="PA", average=average, fit_intercept=False)
    clf.fit(X, y)
    before = copy.deepcopy(clf.__dict__)
    bad = sp.csr_matrix(([1e-160, 3e-160], ([0, 1], [4, 9])), shape=(2, 30))
    labels = [7, 0] if grow else [2, 0]  # 7: a new class
    with pytest.raises(FloatingPointError, match="left as it was"):
        clf.partial_fit(bad, labels)
    assert set(clf.__dict__) == set(before)
    for k, v in before.items():
        if isinstance(v, np.ndarray):
            assert v.dtype == clf.__dict__[k].dtype and np.array_equal(v, clf.__dict__[k]), k
        else:
            assert v == clf.__dict__[k], k
    # and the model still learns normally afterwards
    clf.partial_fit(X[:5], y[:5])
    assert clf.t_ == before["_st"][0] + 5


def test_coef_is_a_copy():
    clf = Perceptron().fit(np.eye(4), [0, 1, 0, 1])
    w = clf.coef_.copy()
    clf.coef_[:] = 123.0
    clf.intercept_[:] = 123.0
    np.testing.assert_array_equal(clf.coef_, w)
    assert not np.any(clf.intercept_ == 123.0)


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_stream_fast_checks_still_reject_bad_batches(layout):
    """Later partial_fit calls skip the general checks for ready-made batches; what they skip
    must still be rejected: non-finite values, a wrong feature count, continuous or NaN
    labels, an empty batch, and parameters changed to invalid values between calls."""
    rng = np.random.default_rng(3)
    wrap = sp.csr_matrix if layout == "csr" else np.ascontiguousarray
    X = rng.normal(size=(20, 4))
    y = rng.integers(0, 3, 20)
    clf = PassiveAggressiveClassifier(class_weight={0: 1.0})
    clf.partial_fit(wrap(X), y)
    clf.partial_fit(wrap(X), y)  # the fast path is taken here
    before = copy.deepcopy(clf._theta)
    for Xb, yb, match in [
        (np.where(np.eye(20, 4) > 0, np.nan, X), y, "NaN"),
        (np.where(np.eye(20, 4) > 0, np.inf, X), y, "infinity"),
        (X[:, :3], y, "features"),
        (X, y + 0.5, "continuous|Unknown label type"),
        (X, np.where(np.arange(20) == 4, np.nan, y.astype(float)), "NaN"),
        (X[:0], y[:0], "0 sample"),
    ]:
        with pytest.raises(ValueError, match=match):
            clf.partial_fit(wrap(Xb), yb)
        np.testing.assert_array_equal(clf._theta, before)
    clf.set_params(C=-1.0)
    with pytest.raises(ValueError, match="C"):
        clf.partial_fit(wrap(X), y)
    clf.set_params(C=1.0)
    clf.class_weight[0] = -5.0  # changed in place: the dict is compared by value
    with pytest.raises(ValueError, match="class_weight"):
        clf.partial_fit(wrap(X), y)
    np.testing.assert_array_equal(clf._theta, before)
