"""River's protocol (onlinelearn.river): progressive_val_score gives our own one-row-at-a-time
score, pipelines run our learners, dict rows map to columns (named or hashed), a rejected row
changes nothing, and the mini-batch methods agree with the one-row ones."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

river = pytest.importorskip("river")
pd = pytest.importorskip("pandas")

from river import compose, datasets, evaluate, metrics, preprocessing  # noqa: E402
from sklearn.utils import murmurhash3_32  # noqa: E402

import onlinelearn  # noqa: E402
from onlinelearn import (  # noqa: E402
    AROW,
    PassiveAggressiveClassifier,
    PassiveAggressiveRegressor,
    Perceptron,
)
from onlinelearn.river import RiverClassifier, RiverRegressor  # noqa: E402

N = 400  # rows of the streams (the adapters pay a partial_fit per row)


def _phishing(n=N):
    return list(itertools.islice(datasets.Phishing(), n))


def _our_loop(est, rows, names, scaler=None):
    """Our own progressive validation: predict each row, then partial_fit on it."""
    correct, seen = 0, 0
    for x, y in rows:
        if scaler is not None:
            x = scaler.transform_one(x)
        v = np.array([[float(x.get(k, 0.0)) for k in names]])
        if hasattr(est, "classes_"):
            correct += est.predict(v)[0] == y
            seen += 1
        est.partial_fit(v, [y])
    return correct / seen


@pytest.mark.parametrize("make", [lambda: PassiveAggressiveClassifier(),
                                  lambda: Perceptron(average=False)])  # fmt: skip
def test_progressive_val_score_is_our_own_progressive_accuracy(make):
    rows = _phishing()
    got = evaluate.progressive_val_score(rows, RiverClassifier(make()), metrics.Accuracy())
    names = list(dict.fromkeys(k for x, _ in rows for k in x))  # order of arrival
    ours = _our_loop(make(), rows, names)
    assert got.get() == pytest.approx(ours, abs=1e-12)
    assert 0.6 < ours < 1.0


def test_the_documented_pipeline_score():
    """The example of onlinelearn.river's docstring, with its printed score."""
    model = preprocessing.StandardScaler() | RiverClassifier(PassiveAggressiveClassifier())
    score = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    assert f"{score}" == "Accuracy: 89.43%"


def test_pipelines_and_probabilities():
    rows = _phishing(300)
    model = compose.Pipeline(preprocessing.StandardScaler(), RiverClassifier(AROW()))
    assert model.predict_proba_one(rows[0][0]) == {}
    assert model.predict_one(rows[0][0]) is None
    ll = metrics.LogLoss()
    for x, y in rows:
        p = model.predict_proba_one(x)
        if p:
            assert set(p) <= {True, False} and sum(p.values()) == pytest.approx(1.0)
            assert model.predict_one(x) == max(p, key=p.get)
            ll.update(y, p)
        model.learn_one(x, y)
    assert ll.get() < np.log(2)


def test_named_columns_grow_and_a_row_that_does_not_fit_changes_nothing():
    clf = RiverClassifier(PassiveAggressiveClassifier(), n_features=3)
    clf.learn_one({"a": 1.0, "b": 2.0}, "x")
    clf.learn_one({"b": 1.0, "color": "red"}, "y")
    assert clf.feature_names_ == ["a", "b", "color=red"]
    coef = clf.estimator.coef_.copy()
    with pytest.raises(ValueError, match="n_features=3"):
        clf.learn_one({"a": 1.0, "new": 1.0}, "x")
    assert clf.feature_names_ == ["a", "b", "color=red"]
    np.testing.assert_array_equal(clf.estimator.coef_, coef)
    # a row the learner rejects (a non-finite value) adds no name either
    clf2 = RiverClassifier(PassiveAggressiveClassifier(), n_features=5)
    clf2.learn_one({"a": 1.0}, "x")
    with pytest.raises(ValueError):
        clf2.learn_one({"b": float("nan")}, "y")
    assert clf2.feature_names_ == ["a"]
    # unknown names at prediction time are features never learned from (weight 0)
    assert clf.predict_one({"zzz": 5.0, "a": 1.0}) in ("x", "y")


def test_hashing_puts_names_where_feature_hasher_does():
    clf = RiverClassifier(PassiveAggressiveClassifier(fit_intercept=False), n_features=2**12,
                          hashing=True)  # fmt: skip
    X = clf._rows.matrix([{"word": 2.0, "city": "paris"}], grow=True)
    cols = [murmurhash3_32(k, seed=0, positive=True) % 2**12 for k in ("word", "city=paris")]
    want = np.zeros(2**12)
    np.add.at(want, cols, [2.0, 1.0])
    np.testing.assert_array_equal(X[0], want)
    wide = RiverClassifier(PassiveAggressiveClassifier(), n_features=2**18, hashing=True)
    Xs = wide._rows.matrix([{"word": 2.0}], grow=True)
    assert Xs.shape == (1, 2**18) and Xs.nnz == 1  # wide spaces are CSR rows


def test_learn_many_is_learn_one_row_after_row():
    rows = _phishing(200)
    frame = pd.DataFrame([x for x, _ in rows])
    ys = pd.Series([y for _, y in rows])
    # (both start with a batch holding both labels: a one-class model learns nothing, so a
    # stream whose first rows share a label learns from them only when they come as a batch)
    k = 20
    assert ys[:k].nunique() == 2
    one = RiverClassifier(PassiveAggressiveClassifier())
    one.learn_many(frame[:k], ys[:k])
    for x, y in rows[k:]:
        one.learn_one(x, y)
    many = RiverClassifier(PassiveAggressiveClassifier())
    many.learn_many(frame[:k], ys[:k])
    many.learn_many(frame[k:], ys[k:])
    np.testing.assert_allclose(many.estimator.coef_, one.estimator.coef_, rtol=1e-12)
    pm = many.predict_proba_many(frame)
    assert list(pm.columns) == [False, True]
    np.testing.assert_array_equal(many.predict_many(frame).to_numpy(),
                                  pm.to_numpy().argmax(axis=1).astype(bool))  # fmt: skip


@pytest.mark.parametrize("make", [lambda: onlinelearn.PassiveAggressiveClassifier(),
                                  lambda: onlinelearn.DualAscentClassifier(step="last-k", k=2),
                                  lambda: onlinelearn.ClassDependentPA(n_epochs=1)])  # fmt: skip
def test_learn_many_with_labels_arriving_mid_batch_is_learn_one(make):
    """A label that first appears inside a batch joins where learn_one meets it, not at the
    batch's start (where it would be a rival of the rows before it): the same model."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = np.array(["a"] * 5 + list(rng.choice(["a", "b"], 15)) + list(rng.choice(list("abcd"), 40)))
    frame = pd.DataFrame(X, columns=list("wxyz"))
    one, many = RiverClassifier(make(), n_features=8), RiverClassifier(make(), n_features=8)
    for i in range(len(y)):
        one.learn_one(dict(frame.iloc[i]), y[i])
    many.learn_many(frame[:30], pd.Series(y[:30]))
    many.learn_many(frame[30:], pd.Series(y[30:]))
    np.testing.assert_array_equal(many.estimator.classes_, one.estimator.classes_)
    np.testing.assert_allclose(many.estimator.coef_, one.estimator.coef_, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(many.predict_proba_many(frame).to_numpy(),
                               one.predict_proba_many(frame).to_numpy(), atol=1e-12)  # fmt: skip


def test_regressor_progressive_mae_is_our_own():
    rng = np.random.default_rng(0)
    w = rng.normal(size=4)
    rows = [({f"f{j}": float(v) for j, v in enumerate(x)}, float(x @ w))
            for x in rng.normal(size=(300, 4))]  # fmt: skip
    got = evaluate.progressive_val_score(rows, RiverRegressor(PassiveAggressiveRegressor()),
                                         metrics.MAE())  # fmt: skip
    est, err = PassiveAggressiveRegressor(), []
    for x, y in rows:
        v = np.array([[x[f"f{j}"] for j in range(4)]])
        err.append(abs((est.predict(v)[0] if hasattr(est, "coef_") else 0.0) - y))
        est.partial_fit(v, [y])
    assert got.get() == pytest.approx(np.mean(err), rel=1e-12)


def test_clone_gives_an_unfitted_learner():
    clf = RiverClassifier(PassiveAggressiveClassifier(C=0.5), n_features=16)
    clf.learn_one({"a": 1.0}, 1)
    twin = clf.clone()
    assert twin.estimator.C == 0.5 and not hasattr(twin.estimator, "coef_")
    assert twin.n_features == 16 and twin.feature_names_ == []


@pytest.mark.parametrize("hashing", [False, True])
@pytest.mark.parametrize("width", [16, 5000])
def test_a_frame_gives_the_matrix_of_its_dict_rows(hashing, width):
    """learn_many's block copy of the numeric columns (NaN: missing) and the dict rows of the
    others give the matrix learn_one builds, dense or CSR."""
    frame = pd.DataFrame([{"a": 1.5, "c": "x"}, {"a": np.nan, "b": 2, "c": "y"}])
    rows = [{"a": 1.5, "c": "x"}, {"b": 2, "c": "y"}]
    one = RiverClassifier(PassiveAggressiveClassifier(), n_features=width, hashing=hashing)
    many = RiverClassifier(PassiveAggressiveClassifier(), n_features=width, hashing=hashing)
    A = many._rows.frame(frame, grow=True)
    B = one._rows.matrix(rows, grow=True)
    dense = lambda M: M.toarray() if hasattr(M, "toarray") else M  # noqa: E731
    A, B = dense(A), dense(B)
    if hashing:  # a name's column is its hash
        np.testing.assert_array_equal(A, B)
    else:  # the same values under the same names (numeric columns are named first)
        assert sorted(many.feature_names_) == sorted(one.feature_names_)
        for M, ad in ((A, many), (B, one)):
            got = [{k: M[i, j] for k, j in ad._rows.index.items() if M[i, j]} for i in range(2)]
            assert got == [{"a": 1.5, "c=x": 1.0}, {"b": 2.0, "c=y": 1.0}]


#: every online classifier and regressor of the library through River's protocol (a width
#: for the second-order and kernel learners, whose covariance is W x W, and for
#: ClassDependentPA, whose joint features are K x W); River's checks grow labels one row at a
#: time, which the dual learners (ClassDependentPA, DualAscentClassifier) take too
RIVER_LEARNERS = {
    "PassiveAggressiveClassifier": lambda: RiverClassifier(
        onlinelearn.PassiveAggressiveClassifier()
    ),
    "Perceptron": lambda: RiverClassifier(onlinelearn.Perceptron()),
    "COPA": lambda: RiverClassifier(onlinelearn.COPA()),
    "Winnow": lambda: RiverClassifier(onlinelearn.Winnow(), n_features=64),
    "PNormPerceptron": lambda: RiverClassifier(onlinelearn.PNormPerceptron(), n_features=64),
    "AROW": lambda: RiverClassifier(onlinelearn.AROW(), n_features=64),
    "SCW": lambda: RiverClassifier(onlinelearn.SCW(), n_features=64),
    "KernelPerceptron": lambda: RiverClassifier(
        onlinelearn.KernelPerceptron(budget=100), n_features=64
    ),
    "KernelPassiveAggressive": lambda: RiverClassifier(
        onlinelearn.KernelPassiveAggressive(), n_features=64
    ),
    "PassiveAggressiveRegressor": lambda: RiverRegressor(onlinelearn.PassiveAggressiveRegressor()),
    "OnlineLearner": lambda: RiverClassifier(onlinelearn.OnlineLearner()),
    "Pegasos": lambda: RiverClassifier(onlinelearn.Pegasos()),
    "KernelCOPA": lambda: RiverClassifier(onlinelearn.KernelCOPA(), n_features=64),
    # b must exceed every row's ||x||^2 (the weight 1 / (1 - x' A^-1 x)); a stream's scale is
    # not known in advance and River's checks reach ||x||^2 ~ 2e6, so b is given
    "WeightedMinMax": lambda: RiverClassifier(onlinelearn.WeightedMinMax(b=1e8), n_features=64),
    "OnlineRegressor": lambda: RiverRegressor(onlinelearn.OnlineRegressor()),
    "OnlineLeastSquares": lambda: RiverRegressor(onlinelearn.OnlineLeastSquares(), n_features=64),
    "ClassDependentPA": lambda: RiverClassifier(
        onlinelearn.ClassDependentPA(n_epochs=1), n_features=64
    ),
    "DualAscentClassifier": lambda: RiverClassifier(onlinelearn.DualAscentClassifier()),
    "DualAscentClassifier-last-3": lambda: RiverClassifier(
        onlinelearn.DualAscentClassifier(step="last-k", k=3)
    ),
    "DualAscentClassifier-entropy": lambda: RiverClassifier(
        onlinelearn.DualAscentClassifier(step="self-tuned", link="entropy", k=2)
    ),
    "AdaGradClassifier": lambda: RiverClassifier(onlinelearn.AdaGradClassifier()),
    "NormalizedClassifier": lambda: RiverClassifier(
        onlinelearn.NormalizedClassifier(loss="logistic")
    ),
    "AdaGradRegressor": lambda: RiverRegressor(onlinelearn.AdaGradRegressor()),
    "NormalizedRegressor": lambda: RiverRegressor(onlinelearn.NormalizedRegressor()),
    "DriftFollowingClassifier": lambda: RiverClassifier(
        onlinelearn.drift.DriftFollowingClassifier(onlinelearn.PassiveAggressiveClassifier())
    ),
    "DriftFollowingRegressor": lambda: RiverRegressor(
        onlinelearn.drift.DriftFollowingRegressor(onlinelearn.PassiveAggressiveRegressor())
    ),
}


@pytest.mark.parametrize("name", list(RIVER_LEARNERS))
def test_rivers_own_checks_pass_in_full(name):
    """River's estimator checks (``river.checks.yield_checks``), every one of them, learn_many
    against learn_one included."""
    from river import checks

    model = RIVER_LEARNERS[name]()
    failed, n = [], 0
    for check in checks.yield_checks(model):
        n += 1
        try:
            check(model.clone())
        except Exception as e:  # noqa: BLE001 - collected, reported together
            failed.append(f"{check.__name__}: {e!r}"[:300])
    assert n >= 27
    assert not failed, "\n".join(failed)
