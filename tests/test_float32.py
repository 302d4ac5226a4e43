"""float32 weights: the weights follow the input's dtype (or ``dtype``), the sums stay float64.

The compiled passes are checked against the NumPy reference with float32 weights in
``test_core_reference.py``; here: long streams agree with float64 weights to float32 precision,
the dtype survives partial_fit, growth, model files and merging, and accuracy on real data is
the same as with float64 weights.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data

from onlinelearn import (
    COPA,
    PassiveAggressiveClassifier,
    Perceptron,
    PNormPerceptron,
    Winnow,
    merge_models,
)
from onlinelearn.datasets import SHARED_SETS
from onlinelearn.io import iter_svmlight_chunks
from onlinelearn.shell.linear_state import estimator_from_state

LEARNERS = [
    (lambda **k: PassiveAggressiveClassifier(**k), 5e-6),
    (lambda **k: PassiveAggressiveClassifier(variant="PA-II", average=True, **k), 5e-6),
    (lambda **k: Perceptron(average=True, **k), 5e-6),
    (lambda **k: COPA(**k), 5e-6),
    # the dual sum theta of the other links grows with the stream; w = grad f*(theta) has the
    # relative precision of theta
    (lambda **k: Winnow(step="PA-I", **k), 1e-4),
    (lambda **k: PNormPerceptron(**k), 1e-4),
]


def _stream(n, d, K, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.05, random_state=seed, format="csr", dtype=np.float32)
    W = rng.normal(size=(d, max(K, 2)))
    y = np.argmax(X @ W + 0.3 * rng.normal(size=(n, max(K, 2))), axis=1)
    return X, y


@pytest.mark.parametrize("K", [2, 5])
@pytest.mark.parametrize("make,rtol", LEARNERS)
def test_float32_weights_agree_with_float64_over_a_long_stream(make, rtol, K):
    X, y = _stream(20000, 200, K, seed=K)
    a, b = make(), make(dtype="float64")
    a.partial_fit(X, y)
    b.partial_fit(X, y)
    assert a._theta.dtype == np.float32 and b._theta.dtype == np.float64
    assert a.coef_.dtype == np.float32
    # the averaging sums and the counters are float64 whatever the weights
    assert a._st.dtype == np.float64 and (not a.average or a._A.dtype == np.float64)
    assert a.n_updates_ > 1000
    scale = np.abs(b.coef_).max()
    assert np.abs(a.coef_ - b.coef_).max() <= rtol * scale
    assert np.abs(a.intercept_ - b.intercept_).max() <= rtol * max(scale, 1.0)


def test_dtype_parameter_overrides_the_input():
    X, y = _stream(300, 20, 3, seed=0)
    a = PassiveAggressiveClassifier(dtype="float32").fit(X.astype(np.float64), y)
    b = PassiveAggressiveClassifier(dtype=np.float64).fit(X, y)
    c = PassiveAggressiveClassifier().fit(X.toarray().astype(np.float64), y)
    assert a._theta.dtype == np.float32
    assert b._theta.dtype == np.float64
    assert c._theta.dtype == np.float64


def test_bad_dtype_is_rejected_and_changes_nothing():
    X, y = _stream(200, 10, 2, seed=1)
    clf = Perceptron().fit(X, y)
    before = clf.coef_.copy()
    with pytest.raises(ValueError, match="dtype"):
        clf.set_params(dtype="int8").partial_fit(X, y)
    with pytest.raises(ValueError, match="dtype"):
        Perceptron(dtype=np.int32).fit(X, y)
    assert np.array_equal(clf.coef_, before)


def test_the_weights_keep_their_dtype_across_batches_and_growth():
    X, y = _stream(600, 15, 4, seed=2)
    clf = PassiveAggressiveClassifier(average=True)
    clf.partial_fit(X[:200], np.where(y[:200] > 1, 1, 0))  # two classes: one vector
    assert clf._theta.dtype == np.float32 and clf._theta.shape[1] == 1
    clf.partial_fit(X[200:].astype(np.float64), y[200:])  # float64 batch, new labels
    assert clf._theta.dtype == np.float32 and clf._theta.shape[1] == 4
    assert clf._A.dtype == np.float64


@pytest.mark.parametrize("make", [lambda **k: Perceptron(average=True, **k), COPA, Winnow])
def test_model_state_keeps_float32_and_float64_weights(make):
    X, y = _stream(400, 12, 3, seed=3)
    clf = make().fit(X, y)
    meta, arrays = clf._get_state()
    assert arrays["theta"].dtype == np.float32 and meta["params"]["dtype"] is None
    back = estimator_from_state(meta, arrays)
    assert back._theta.dtype == np.float32
    assert np.array_equal(back.coef_, clf.coef_)
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))
    # dtype=None on float64 rows: float64 weights, kept as such
    old = make().fit(X.astype(np.float64), y)
    meta, arrays = old._get_state()
    assert arrays["theta"].dtype == np.float64 and meta["params"]["dtype"] is None
    back = estimator_from_state(meta, arrays)
    assert back._theta.dtype == np.float64 and back.dtype is None
    assert np.array_equal(back.coef_, old.coef_)
    back.partial_fit(X, y)  # continues with float64 weights
    assert back._theta.dtype == np.float64
    named = make(dtype=np.float32).fit(X.astype(np.float64), y)
    assert named._get_state()[0]["params"]["dtype"] == "float32"  # JSON-friendly


def test_merge_of_float32_models_stays_float32_and_matches_float64():
    X, y = _stream(900, 30, 3, seed=4)
    parts32 = [PassiveAggressiveClassifier(average=True).partial_fit(X[s::3], y[s::3])
               for s in range(3)]  # fmt: skip
    parts64 = [PassiveAggressiveClassifier(average=True, dtype="float64").partial_fit(
        X[s::3], y[s::3]) for s in range(3)]  # fmt: skip
    m32, m64 = merge_models(parts32), merge_models(parts64)
    assert m32._theta.dtype == np.float32 and m32._A.dtype == np.float64
    np.testing.assert_allclose(m32.coef_, m64.coef_, rtol=0, atol=1e-5 * np.abs(m64.coef_).max())


def _head(name, split, n):
    path = require_shared_data(name, split)
    reader = iter_svmlight_chunks(path, chunk_size=n, n_features=SHARED_SETS[name].n_features,
                                  dtype=np.float32)  # fmt: skip
    with reader:
        return next(reader)


@pytest.mark.parametrize("name", ["news20", "mnist"])
def test_float32_accuracy_equals_float64_on_real_data(name):
    """The issue's bound (0.002) on subsamples; the full sets are measured in benchmarks/."""
    X, y = _head(name, "train", 3000)
    Xt, yt = _head(name, "test", 2000)
    for cls in (PassiveAggressiveClassifier, COPA):
        a = cls(random_state=0).fit(X, y)
        b = cls(random_state=0, dtype="float64").fit(X, y)
        assert a._theta.dtype == np.float32
        acc_a, acc_b = a.score(Xt, yt), b.score(Xt, yt)
        assert acc_b > 0.5
        assert abs(acc_a - acc_b) <= 0.002
