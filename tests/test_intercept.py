"""The intercept is the weight of an extra feature of constant value ``intercept_scaling``:
learning with it equals learning without an intercept on X with that column appended."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron, PNormPerceptron, Winnow

LEARNERS = [
    lambda **kw: Perceptron(**kw),
    lambda **kw: PassiveAggressiveClassifier(variant="PA-I", C=0.5, **kw),
    lambda **kw: PassiveAggressiveClassifier(variant="PA-II", C=2.0, **kw),
    lambda **kw: COPA(C=0.8, **kw),
    lambda **kw: Winnow(eta=0.5, **kw),
    lambda **kw: PNormPerceptron(p=3.0, **kw),
]


@pytest.mark.parametrize("make", LEARNERS)
@pytest.mark.parametrize("b", [0.05, 1.0, 7.0])
@pytest.mark.parametrize("K", [2, 4])
@pytest.mark.parametrize("average", [False, True])
def test_intercept_equals_constant_feature(make, b, K, average):
    rng = np.random.default_rng(int(b * 100) + K)
    X = rng.normal(size=(80, 5)) + rng.normal(size=5)
    y = rng.integers(0, K, size=80)
    Xb = np.hstack([X, np.full((80, 1), b)])
    common = dict(n_epochs=2, random_state=3, average=average)
    a = make(fit_intercept=True, intercept_scaling=b, **common).fit(sp.csr_matrix(X), y)
    ref = make(fit_intercept=False, **common).fit(Xb, y)
    assert a.n_updates_ == ref.n_updates_ > 0
    np.testing.assert_allclose(a.coef_, ref.coef_[:, :5], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b * ref.coef_[:, 5], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        a.decision_function(X), ref.decision_function(Xb), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_array_equal(a.predict(X), ref.predict(Xb))


@pytest.mark.parametrize("bad", [0.0, -1.0, "1", np.nan])
def test_intercept_scaling_must_be_positive(bad):
    with pytest.raises(ValueError, match="intercept_scaling"):
        Perceptron(intercept_scaling=bad).fit(np.eye(3), [0, 1, 0])
