"""``average_power``: the averaged hypothesis sum_t t^eta w_t / sum_t t^eta of the Euclidean
linear learners (Perceptron, PA, COPA), kept lazily by the one-array state U of the Euclidean
pass with S = the sum of the weights so far.

The reference is independent of that state: the same learner with ``average=False`` is run one
row at a time (``partial_fit`` of a single row), its iterate w_t = (coef_, intercept_) is read
after every row, and the weighted mean is formed in numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron, merge_models
from onlinelearn.shell.linear_state import estimator_from_state

PA = PassiveAggressiveClassifier
POWERS = [0.0, 0.5, 1.0, 2.0, 3.0]
LEARNERS = {
    "PA": (PA, dict(variant="PA", tol=None)),
    "PA-I": (PA, dict(variant="PA-I", C=0.3, tol=None)),
    "PA-II": (PA, dict(variant="PA-II", C=0.3, tol=None)),
    "Perceptron": (Perceptron, dict(tol=None)),
    "COPA": (COPA, dict(C=0.5)),
}


def _data(n=40, d=6, k=3, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.4] = 0.0  # sparse-looking rows, some entries stored as CSR
    y = np.argmax(X[:, :k] + 0.8 * rng.normal(size=(n, k)), axis=1) if k > 2 else (
        (X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(int)
    )
    return X.astype(dtype), y


def _make(name, **kw):
    cls, base = LEARNERS[name]
    return cls(**{**base, "intercept_scaling": 0.7, **kw})


def _iterate(est):
    """The (K, d + 1) hypothesis (coef_ | intercept_) in float64."""
    return np.hstack([est.coef_, est.intercept_[:, None]]).astype(np.float64)


def _layout(W, classes, final):
    """An iterate of a model with labels ``classes`` in the column layout of ``final``: a
    binary vector w (classes[1] against classes[0]) is the columns (-w/2, w/2)."""
    if len(classes) == len(final) or len(classes) < 2:
        if len(classes) < 2:
            return np.zeros((len(final) if len(final) > 2 else 1, W.shape[1]))
        return W
    out = np.zeros((len(final), W.shape[1]))
    pos = np.searchsorted(final, classes)
    if W.shape[0] == 1:
        out[pos[0]], out[pos[1]] = -0.5 * W[0], 0.5 * W[0]
    else:
        out[pos] = W
    return out


def _reference(name, X, y, orders, eta, classes=None, **kw):
    """sum_t t^eta w_t / sum_t t^eta over the rounds of ``orders`` (a list of index arrays,
    one per epoch), w_t the iterate of the last-iterate learner after round t, made by
    single-row ``partial_fit`` calls; also the averages before each round."""
    est = _make(name, average=False, **kw)
    iterates, labels = [], []
    for order in orders:
        for i in order:
            est.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
            iterates.append(_iterate(est) if len(est.classes_) > 1 else None)
            labels.append(est.classes_)
    final = est.classes_
    ws = [
        np.zeros_like(_iterate(est)) if w is None else _layout(w, c, final)
        for w, c in zip(iterates, labels, strict=True)
    ]
    ws = np.array(ws)
    c = np.arange(1, len(ws) + 1, dtype=np.float64) ** eta
    avg = np.tensordot(c, ws, 1) / c.sum()
    csum = np.cumsum(c)
    before = [None] + [
        np.tensordot(c[:t], ws[:t], 1) / csum[t - 1] for t in range(1, len(ws))
    ]
    return avg, before


def _close(got, ref, rtol=1e-12):
    scale = max(np.abs(ref).max(), 1e-300)
    assert np.abs(got - ref).max() <= rtol * scale, np.abs(got - ref).max() / scale


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("eta", POWERS)
def test_one_pass_is_the_weighted_mean_of_the_iterates(name, eta):
    X, y = _data(k=3, seed=1)
    ref, _ = _reference(name, X, y, [np.arange(len(y))], eta, classes=[0, 1, 2])
    for Xin in (X, sp.csr_matrix(X)):
        est = _make(name, average_power=eta).partial_fit(Xin, y, classes=[0, 1, 2])
        _close(_iterate(est), ref)


@pytest.mark.parametrize("name", ["PA-I", "Perceptron", "PA-II"])
@pytest.mark.parametrize("eta", [0.5, 2.0, 3.0])
def test_binary_dense_csr_float32(name, eta):
    X, y = _data(k=2, seed=2)
    ref, _ = _reference(name, X, y, [np.arange(len(y))], eta, classes=[0, 1])
    est = _make(name, average_power=eta).partial_fit(sp.csr_matrix(X), y, classes=[0, 1])
    assert est.coef_.shape[0] == 1
    _close(_iterate(est), ref)
    # float32 weights: the same identity on the stored (rounded) iterates
    X32 = X.astype(np.float32)
    ref32, _ = _reference(name, X32, y, [np.arange(len(y))], eta, classes=[0, 1])
    est32 = _make(name, average_power=eta).partial_fit(X32, y, classes=[0, 1])
    assert est32._theta.dtype == np.float32
    _close(_iterate(est32), ref32, rtol=1e-6)  # coef_ is read out in float32


@pytest.mark.parametrize("name", ["PA-I", "Perceptron", "COPA"])
@pytest.mark.parametrize("eta", [0.0, 1.0, 2.0])
def test_fit_epochs_continue_the_round_count(name, eta):
    X, y = _data(n=30, k=3, seed=3)
    rng = np.random.RandomState(5)
    orders = [rng.permutation(len(y)) for _ in range(3)]
    ref, _ = _reference(name, X, y, orders, eta, classes=[0, 1, 2])
    est = _make(name, average_power=eta, n_epochs=3, shuffle=True, random_state=5).fit(X, y)
    assert est.t_ == 90
    _close(_iterate(est), ref)


@pytest.mark.parametrize("name", list(LEARNERS))
def test_chunks_equal_one_call_bit_for_bit(name):
    X, y = _data(n=50, k=3, seed=4)
    one = _make(name, average_power=2.0).partial_fit(X, y, classes=[0, 1, 2])
    parts = _make(name, average_power=2.0)
    for a, b in ((0, 1), (1, 17), (17, 18), (18, 50)):
        parts.partial_fit(sp.csr_matrix(X[a:b]), y[a:b], classes=[0, 1, 2])
    np.testing.assert_array_equal(parts._st, one._st)
    np.testing.assert_array_equal(parts._A, one._A)
    np.testing.assert_array_equal(parts.coef_, one.coef_)
    np.testing.assert_array_equal(parts.intercept_, one.intercept_)


@pytest.mark.parametrize("name", ["PA-I", "Perceptron"])
def test_labels_growing_and_one_class_rounds(name):
    """Rounds with one known label (nothing learned, but counted and weighted), then a binary
    model, then a third label: the average is still that of every round's hypothesis."""
    X, y = _data(n=45, k=3, seed=6)
    y = y.copy()
    y[:4] = 0
    y[4:20] = np.where(y[4:20] == 2, 1, y[4:20])  # two labels until row 20
    y[4], y[20] = 1, 2  # each label arrives with the first row of a call (as row by row)
    order = np.arange(len(y))
    for eta in (1.0, 3.0):
        ref, _ = _reference(name, X, y, [order], eta)
        est = _make(name, average_power=eta)
        for a, b in ((0, 4), (4, 20), (20, 45)):
            est.partial_fit(X[a:b], y[a:b])
        assert list(est.classes_) == [0, 1, 2]
        _close(_iterate(est), ref)


@pytest.mark.parametrize("name", ["PA-I", "Perceptron", "COPA"])
def test_predict_with_average_uses_the_weighted_average_before_each_row(name):
    X, y = _data(n=40, k=3, seed=7)
    eta = 2.0
    _, before = _reference(name, X, y, [np.arange(len(y))], eta, classes=[0, 1, 2])
    est = _make(name, average_power=eta)
    pred = est.partial_fit_predict(X, y, classes=[0, 1, 2], predict_with="average")
    checked = 0
    for t in range(1, len(y)):
        scores = before[t][:, :-1] @ X[t] + before[t][:, -1]
        top = np.sort(scores)[-2:]
        if top[1] - top[0] > 1e-9 * max(1.0, abs(top[1])):  # no tie
            assert pred[t] == np.argmax(scores)
            checked += 1
    assert checked > 30


def test_projected_updates_keep_the_weighted_average():
    X, y = _data(n=40, k=3, seed=8)
    for eta in (1.0, 2.0):
        ref, _ = _reference("PA-I", X, y, [np.arange(len(y))], eta, classes=[0, 1, 2],
                            constraint="l1", radius=2.0)  # fmt: skip
        est = _make("PA-I", average_power=eta, constraint="l1", radius=2.0)
        est.partial_fit(X, y, classes=[0, 1, 2])
        _close(_iterate(est), ref)


@pytest.mark.parametrize("name", list(LEARNERS))
def test_power_zero_is_the_uniform_average(name):
    """eta = 0 (int or float) is the uniform average."""
    X, y = _data(n=40, k=3, seed=9)
    a = _make(name, average_power=0.0).partial_fit(X[:20], y[:20], classes=[0, 1, 2])
    b = _make(name, average_power=0).partial_fit(X[:20], y[:20], classes=[0, 1, 2])
    for m in (a, b):
        m.partial_fit(X[20:], y[20:])
    np.testing.assert_array_equal(b._st, a._st)
    np.testing.assert_array_equal(b.coef_, a.coef_)
    assert a._st[1] == a._st[0]  # S = T: the uniform weights
    ref, _ = _reference(name, X, y, [np.arange(40)], 0.0, classes=[0, 1, 2])
    _close(_iterate(a), ref)


@pytest.mark.parametrize("power", [0.0, 0.5, 2.0])
def test_a_model_file_keeps_its_average_power(power):
    est = PA(average_power=power).fit(*_data(k=3))
    assert estimator_from_state(*est._get_state()).average_power == power


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf, "2", None, 10.5])
@pytest.mark.parametrize("cls", [Perceptron, PA, COPA])
def test_bad_values_are_refused_and_change_nothing(cls, bad):
    X, y = _data(k=3)
    with pytest.raises(ValueError, match="average_power"):
        cls(average_power=bad).fit(X, y)
    est = cls(average_power=1.0).partial_fit(X[:20], y[:20], classes=[0, 1, 2])
    st, coef = est._st.copy(), est.coef_
    est.set_params(average_power=bad)
    with pytest.raises(ValueError, match="average_power"):
        est.partial_fit(X[20:], y[20:])
    np.testing.assert_array_equal(est._st, st)
    np.testing.assert_array_equal(est.coef_, coef)


def test_merge_keeps_the_weighted_average_and_goes_on_as_one_stream():
    X, y = _data(n=60, k=3, seed=10)
    eta = 2.0
    shards = [_make("PA-I", average_power=eta).partial_fit(X[a:a + 20], y[a:a + 20],
                                                           classes=[0, 1, 2])
              for a in (0, 20)]  # fmt: skip
    u = np.array([s.n_updates_ for s in shards], dtype=float)
    merged = merge_models(shards)
    mixed = sum(ui / u.sum() * _iterate(s) for ui, s in zip(u, shards, strict=True))
    _close(_iterate(merged), mixed)
    # 20 more rounds: (N(40) avg + sum_{t=41}^{60} t^eta w_t) / N(60)
    w = merged._weights_matrix().copy()
    cont = merge_models(shards).set_params(average=False)
    cont._A = np.zeros((1, 1))
    ws = []
    for i in range(40, 60):
        cont.partial_fit(X[i : i + 1], y[i : i + 1])
        ws.append(_iterate(cont))
    merged.partial_fit(X[40:], y[40:])
    t = np.arange(1, 61, dtype=np.float64) ** eta
    d = merged.n_features_in_
    avg0 = np.hstack([w[:d].T, 0.7 * w[d][:, None]])
    expected = (t[:40].sum() * avg0 + np.tensordot(t[40:], np.array(ws), 1)) / t.sum()
    _close(_iterate(merged), expected, rtol=1e-10)


def test_a_uniform_mixture_cannot_go_on_weighted():
    X, y = _data(n=40, k=3, seed=11)
    shards = [_make("Perceptron", average_power=0.0).partial_fit(X[a:a + 20], y[a:a + 20],
                                                                 classes=[0, 1, 2])
              for a in (0, 20)]  # fmt: skip
    merged = merge_models(shards)
    coef = merged.coef_
    merged.set_params(average_power=2.0)
    with pytest.raises(ValueError, match="average_power=0.0"):
        merged.partial_fit(X[:5], y[:5])
    np.testing.assert_array_equal(merged.set_params(average_power=0.0).coef_, coef)
    merged.partial_fit(X[:5], y[:5])  # the uniform average goes on


def test_parameter_mixing_keeps_the_weighted_average():
    from onlinelearn.distributed import mix_in_process

    X, y = _data(n=60, k=3, seed=12)
    shards = [(X[:30], y[:30]), (X[30:], y[30:])]
    est = _make("Perceptron", average_power=2.0)
    first = mix_in_process(est, shards, n_epochs=1)
    models = [__import__("copy").deepcopy(first).partial_fit(Xs, ys) for Xs, ys in shards]
    k = np.array([m.n_updates_ - first.n_updates_ for m in models], dtype=float)
    expected = sum(ki / k.sum() * _iterate(m) for ki, m in zip(k, models, strict=True))
    second = mix_in_process(est, shards, n_epochs=2)
    assert second.t_ == 120
    _close(_iterate(second), expected, rtol=1e-10)
    assert second._st[1] >= second._st[0]  # S >= T: read out by the sum of the weights


def test_online_learner_keeps_it_on_the_euclidean_link_and_refuses_it_elsewhere():
    """OnlineLearner's generic pass (any margin loss, Euclidean link) keeps the same weighted
    average; the entropy and p-norm links refuse eta > 0 (they average uniformly)."""
    from onlinelearn import OnlineLearner
    from onlinelearn.framework import Aggressive, Entropy, Logistic, PNorm

    X, y = _data(n=40, k=3, seed=13)
    est = OnlineLearner(loss=Logistic(), step=Aggressive(0.5), average_power=2.0,
                        intercept_scaling=0.7)  # fmt: skip
    est.partial_fit(X, y, classes=[0, 1, 2])
    last = OnlineLearner(loss=Logistic(), step=Aggressive(0.5), average=False,
                         intercept_scaling=0.7)  # fmt: skip
    ws = []
    for i in range(len(y)):
        last.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1, 2])
        ws.append(_iterate(last))
    t2 = np.arange(1, len(y) + 1, dtype=np.float64) ** 2
    _close(_iterate(est), np.average(np.array(ws), axis=0, weights=t2))
    for link in (Entropy(), PNorm()):
        with pytest.raises(ValueError, match="average_power=2.0 .*Euclidean link"):
            OnlineLearner(link=link, average_power=2.0).fit(X, y)
        OnlineLearner(link=link, average_power=2.0, average=False, tol=None, n_epochs=1).fit(X, y)


def test_the_largest_power_is_exact_and_finite():
    """eta = 10 (the bound): S = sum t^10 stays finite and the average is still the weighted
    mean (it leans almost entirely on the last rounds)."""
    X, y = _data(n=40, k=3, seed=14)
    ref, _ = _reference("PA-I", X, y, [np.arange(len(y))], 10.0, classes=[0, 1, 2])
    est = _make("PA-I", average_power=10).partial_fit(X, y, classes=[0, 1, 2])
    assert np.isfinite(est._st[:-1]).all()
    assert est._st[1] == pytest.approx(np.sum(np.arange(1.0, 41.0) ** 10), rel=1e-12)  # S
    _close(_iterate(est), ref)
