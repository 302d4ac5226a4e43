"""Reduced run of the COPA paper's toy experiment (Sec. 4), ``onlinelearn.experiments.copa_toy``.

Observed (full run, 10 samples of 5000): with the class-normalised cost C / T_y^2 of eq. (17)
averaged COPA has a much smaller confusion norm than the averaged Perceptron, at a lower
accuracy; with a plain C its confusion norm is *larger* than the Perceptron's.
"""

from __future__ import annotations

import numpy as np
import pytest

from onlinelearn.experiments.copa_toy import make_toy_sample, reproduce_copa_toy


@pytest.fixture(scope="module")
def result():
    return reproduce_copa_toy(n_samples=2, n=1000, random_state=0)


def test_sample_matches_the_paper_setup():
    X, y = make_toy_sample(20000, np.random.default_rng(0))
    np.testing.assert_allclose(np.bincount(y) / len(y), [0.9, 0.05, 0.05], atol=0.01)
    np.testing.assert_allclose(X[y == 0].mean(axis=0), [0.0, 1.0], atol=0.02)
    np.testing.assert_allclose(X[y == 1].std(axis=0), [0.5, 0.5], atol=0.03)


def test_confusion_cost_copa_has_smaller_confusion_norm(result):
    copa = result.copa["confusion"]
    perc = result.perceptron
    assert copa.confusion_norm.mean() < perc.confusion_norm.mean()
    assert copa.confusion_norm.shape == (2,)
    # the norm is bought with accuracy on this imbalanced problem
    assert 0.6 < copa.accuracy.mean() <= perc.accuracy.mean()


def test_plain_cost_is_not_confusion_oriented(result):
    assert result.copa[None].confusion_norm.mean() > result.copa["confusion"].confusion_norm.mean()


def test_table_and_plot(result, tmp_path):
    table = result.format_table()
    assert "paper: COPA" in table and "Perceptron" in table
    pytest.importorskip("matplotlib")
    result.plot(tmp_path / "toy.png")
    assert (tmp_path / "toy.png").stat().st_size > 0


def test_bound_of_one_online_pass(result):
    """The bound printed for a COPA run is Theorem 1 on the progressive predictions."""
    from onlinelearn.experiments.copa_toy import online_bound
    from onlinelearn.linear.copa import COPA
    from onlinelearn.metrics import confusion_matrix_conditional, confusion_risk_bound

    assert set(result.bounds) == {None, "confusion"}
    for cw, b in result.bounds.items():
        assert b.C == result.copa[cw].C
        assert b.n_rounds == 500 and b.class_counts.sum() == 500
        assert b.result.bound == pytest.approx(b.result.empirical_norm + b.result.deviation)
        assert "bound" in result.format_table() and f"T={b.n_rounds}" in b.line()

    X, y = make_toy_sample(400, np.random.default_rng(3))
    b = online_bound(COPA(C=2.0, average=True, shuffle=False), X, y, delta=0.1, form="derived")
    twin = COPA(C=2.0, average=True, shuffle=False)
    pred = twin.partial_fit_predict(X, y, classes=[0, 1, 2])
    np.testing.assert_allclose(b.C_hat, confusion_matrix_conditional(y, pred, labels=[0, 1, 2]))
    expected = confusion_risk_bound(b.C_hat, np.bincount(y), M=1.0, delta=0.1, form="derived")
    assert b.result == pytest.approx(tuple(expected))
    np.testing.assert_array_equal(b.class_counts, np.bincount(y))
