"""The Perceptron's default b in a stream (``intercept_scaling='fit'`` when ``partial_fit`` starts
the model): 10^floor(log10 r), at least 1, r the rms of the first batch's nonzero values
(docs/defaults.md, "One pass over a stream")."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data

from onlinelearn import Perceptron
from onlinelearn.shell.linear_state import estimator_from_state


def _rule(X):
    """The stream b computed independently: the largest power of ten 10^k <= r, k >= 0, with
    r the rms of the nonzero values (exactly rounded sum); 1 when there is none."""
    v = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64).ravel()
    v = v[v != 0]
    if v.size == 0:
        return 1.0
    r = math.sqrt(math.fsum(v * v) / v.size)
    k = 0
    while 10.0 ** (k + 1) <= r:
        k += 1
    return float(10.0**k)


def _labels(X, K, rng):
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    return np.argmax(X[:, :K] + 0.5 * X.std() * rng.normal(size=(X.shape[0], K)), axis=1)


def _far_from_a_decade_boundary(X):
    v = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64).ravel()
    v = v[v != 0]
    if v.size == 0:
        return True
    lg = math.log10(math.sqrt(math.fsum(v * v) / v.size))
    return abs(lg - round(lg)) > 1e-6


@pytest.mark.parametrize("layout", ["dense", "csr", "float32"])
def test_the_stream_b_is_the_rule_of_the_first_batch(layout):
    rng = np.random.default_rng(11)
    checked = 0
    for trial in range(40):
        scale = 10.0 ** rng.uniform(-3, 6)
        n, d = int(rng.integers(1, 60)), int(rng.integers(1, 15))
        X = rng.normal(size=(n, d)) * scale * (rng.random((n, d)) < rng.uniform(0.1, 1))
        X = X.astype(np.float32) if layout == "float32" else X
        if not _far_from_a_decade_boundary(X):
            continue
        y = rng.integers(0, 3, size=n)
        Xin = sp.csr_matrix(X) if layout == "csr" else X
        est = Perceptron().partial_fit(Xin, y, classes=[0, 1, 2])
        b = _rule(X)
        assert est.intercept_scaling_ == b, (trial, scale)
        # the same model as that number given, bit for bit; a later call keeps b
        same = Perceptron(intercept_scaling=b).partial_fit(Xin, y, classes=[0, 1, 2])
        np.testing.assert_array_equal(est.coef_, same.coef_)
        np.testing.assert_array_equal(est.intercept_, same.intercept_)
        est.partial_fit(Xin[:3] * 1e4, y[:3])
        assert est.intercept_scaling_ == b
        checked += 1
    assert checked >= 30


def test_the_stream_b_edge_cases():
    y = np.array([0, 1, 0, 1])
    for X, b in [
        (np.zeros((4, 3)), 1.0),  # no nonzero value
        (np.full((4, 3), 0.3), 1.0),  # r < 1: at least 1
        (np.full((4, 3), 9.99), 1.0),  # below 10: rounded down
        (np.full((4, 3), 10.0), 10.0),  # exactly a power of ten
        (np.full((4, 3), 100.0), 100.0),
        (np.array([[3e4, 0, 0], [0, 0, 0], [0, 4e4, 0], [0, 0, 0]]), 1e4),  # zeros not counted
    ]:
        assert Perceptron().partial_fit(X, y).intercept_scaling_ == b
        assert _rule(X) == b
    # fit keeps the median row norm; 'auto' too, in a stream as well
    X = np.full((4, 3), 100.0)
    assert Perceptron().fit(X, y).intercept_scaling_ == pytest.approx(100.0 * math.sqrt(3))
    auto = Perceptron(intercept_scaling="auto").partial_fit(X, y)
    assert auto.intercept_scaling_ == pytest.approx(100.0 * math.sqrt(3))


@pytest.mark.parametrize("K", [2, 4])
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_a_stream_is_invariant_to_a_power_of_ten_rescaling_of_x(K, layout):
    """X -> c X with c = 10^j: b -> c b, every weight -> c w, the bias weight too; so the
    progressive predictions and the predictions stay, exactly (integer features: every sum
    is exact)."""
    rng = np.random.default_rng(K)
    X = rng.integers(-6, 7, size=(300, 8)).astype(np.float64)  # r about 3.7: b = 1
    y = np.argmax(X[:, :K] + 2.0 * rng.normal(size=(300, K)), axis=1)
    conv = sp.csr_matrix if layout == "csr" else np.asarray
    base = Perceptron(average=False)
    p0 = base.partial_fit_predict(conv(X), y)
    avg = Perceptron().partial_fit(conv(X), y)
    assert base.intercept_scaling_ == 1.0 == _rule(X)
    for c in (10.0, 1000.0):
        est = Perceptron(average=False)
        pc = est.partial_fit_predict(conv(c * X), y)
        assert est.intercept_scaling_ == c
        np.testing.assert_array_equal(pc, p0)
        np.testing.assert_array_equal(est.coef_, c * base.coef_)
        np.testing.assert_array_equal(est.intercept_, c * c * base.intercept_)
        assert est.n_mistakes_ == base.n_mistakes_
        avg_c = Perceptron().partial_fit(conv(c * X), y)
        np.testing.assert_array_equal(avg_c.predict(conv(c * X)), avg.predict(conv(X)))
        np.testing.assert_allclose(avg_c.coef_, c * avg.coef_, rtol=1e-12, atol=0)
        # with b fixed at 1 the bias does not follow the scale, and the stream changes
        fixed = Perceptron(average=False, intercept_scaling=1.0)
        assert not np.array_equal(fixed.partial_fit_predict(conv(c * X), y), p0)


def test_chunking_a_stream_gives_the_same_b_and_model():
    from onlinelearn.evaluation import progressive_validation

    rng = np.random.default_rng(9)
    X = 50.0 * rng.normal(size=(201, 12))  # r about 50: b = 10 for any chunk of it
    y = _labels(X, 3, rng)
    runs = []
    for chunk in (None, 1, 7, 50):
        est = Perceptron()
        kw = {} if chunk is None else {"chunk_size": chunk}
        runs.append((est, progressive_validation(est, X, y, **kw)))
        assert est.intercept_scaling_ == 10.0 == _rule(X) == _rule(X[: chunk or len(X)])
    for est, res in runs[1:]:
        np.testing.assert_array_equal(res.predictions, runs[0][1].predictions)
        np.testing.assert_array_equal(est.coef_, runs[0][0].coef_)
        np.testing.assert_array_equal(est.intercept_, runs[0][0].intercept_)


def test_a_stream_model_stored_with_b_one_keeps_it(tmp_path):
    """A model file of a stream begun before this rule stores b = 1 (``intercept_scaling_``):
    it predicts and learns on as before, bit for bit."""
    from onlinelearn.model_io import load_model, save_model

    rng = np.random.default_rng(4)
    X = 300.0 * rng.normal(size=(120, 5))
    y = _labels(X, 2, rng)
    old = Perceptron(intercept_scaling=1.0).partial_fit(X[:60], y[:60])
    meta, arrays = old._get_state()
    meta["params"]["intercept_scaling"] = "fit"  # what the former default wrote
    arrays = {**arrays, "intercept_scaling_": np.array([1.0])}
    back = estimator_from_state(meta, arrays)
    save_model(back, tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.intercept_scaling == "fit" and back.intercept_scaling_ == 1.0
    np.testing.assert_array_equal(back.decision_function(X), old.decision_function(X))
    back.partial_fit(X[60:], y[60:])
    old.partial_fit(X[60:], y[60:])
    assert back.intercept_scaling_ == 1.0
    np.testing.assert_array_equal(back.coef_, old.coef_)
    np.testing.assert_array_equal(back.intercept_, old.intercept_)
    # a new stream on the same rows takes the rule's b
    assert Perceptron().partial_fit(X[:60], y[:60]).intercept_scaling_ == 100.0 == _rule(X[:60])


def test_spambase_one_pass_is_at_least_scikit_learns():
    """The cell of the issue "defaults that win on real data": one ``partial_fit`` pass over the
    shuffled training rows of spambase (raw counts up to 15,841), the protocol of
    benchmarks/defaults_stream.py (fixed 30 % test split, seeds 0-2)."""
    require_shared_data("pmlb/spambase")
    from sklearn.linear_model import Perceptron as SkPerceptron
    from sklearn.model_selection import train_test_split

    from onlinelearn.datasets import load_pmlb

    X, y = load_pmlb("spambase")
    X, Xt, y, yt = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    ours, theirs = [], []
    for seed in (0, 1, 2):
        order = np.random.default_rng(seed).permutation(X.shape[0])
        Xs, ys = X[order], y[order]
        est = Perceptron(random_state=seed).partial_fit(Xs, ys, classes=[0, 1])
        assert est.intercept_scaling_ == _rule(Xs) == 100.0
        ours.append(est.score(Xt, yt))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sk = SkPerceptron(random_state=seed).partial_fit(Xs, ys, classes=[0, 1])
        theirs.append(sk.score(Xt, yt))
    assert np.mean(ours) >= np.mean(theirs) - 0.005, (ours, theirs)
