"""The imbalance study (``onlinelearn.experiments.imbalance``) on a small subsample of PMLB shuttle.

Checks structure and sanity that can fail: the five learners, scores recomputed from the stored
predictions, stratified splits, and a balanced LinearSVC beating the majority-class baseline on
balanced accuracy.  No figure of a run is hard-coded.
"""

from __future__ import annotations

import numpy as np
import pytest
from _data import require_shared_data
from sklearn.metrics import balanced_accuracy_score

from onlinelearn.experiments import imbalance
from onlinelearn.experiments.imbalance import LEARNERS, run_imbalance_study
from onlinelearn.metrics import confusion_operator_norm

GRID = (0.1, 1.0)


@pytest.fixture(scope="module")
def result():
    require_shared_data("pmlb/shuttle")
    return run_imbalance_study(["shuttle"], max_rows=3000, epochs=2, C_grid=GRID, random_state=1)


def test_structure(result):
    assert len(result.datasets) == 1
    ds = result.datasets[0]
    assert ds.name == "shuttle"
    assert list(ds.learners) == list(LEARNERS)
    Q = len(ds.classes)
    assert Q == 7  # shuttle's seven classes all survive the subsample (>= 6 rows each)
    assert ds.train_counts.sum() == ds.n_train and np.all(ds.train_counts >= 3)
    assert set(np.unique(ds.y_test)) == set(ds.classes)  # stratified: every class is tested
    assert ds.imbalance_ratio > 50  # shuttle is very imbalanced
    n_fit = ds.n_train - int(np.ceil(0.25 * ds.n_train))
    for r in ds.learners.values():
        if r.learner == "Perceptron":
            assert r.C is None
        elif r.learner == "COPA, C/T_y^2":
            assert r.C in [c * (n_fit / Q) ** 2 for c in GRID]
        else:
            assert r.C in GRID
        assert len(r.validation) == (1 if r.C is None else len(GRID))
        assert r.fit_seconds >= 0


def test_scores_recomputed_from_predictions(result):
    ds = result.datasets[0]
    Q = len(ds.classes)
    for r in ds.learners.values():
        assert r.predictions.shape == ds.y_test.shape
        assert 0 <= r.accuracy <= 1 and 0 <= r.balanced_accuracy <= 1
        assert r.accuracy == pytest.approx(np.mean(r.predictions == ds.y_test))
        assert r.balanced_accuracy == pytest.approx(
            balanced_accuracy_score(ds.y_test, r.predictions)
        )
        norm = confusion_operator_norm(ds.y_test, r.predictions, labels=ds.classes)
        assert r.confusion_norm == pytest.approx(norm)
        # rows of the conditional confusion matrix sum to <= 1, columns to <= Q - 1
        assert 0 <= r.confusion_norm <= np.sqrt(Q - 1) + 1e-12


def test_balanced_svm_beats_majority_baseline(result):
    ds = result.datasets[0]
    majority = ds.classes[np.argmax(ds.train_counts)]
    baseline = balanced_accuracy_score(ds.y_test, np.full_like(ds.y_test, majority))
    assert ds.learners["LinearSVC balanced"].balanced_accuracy > baseline + 0.1


def test_table(result):
    table = result.format_table()
    lines = table.splitlines()
    assert lines[0].startswith("| data set | learner |")
    assert len(lines) == 2 + len(LEARNERS)
    for name in LEARNERS:
        assert sum(f"| {name} |" in line for line in lines) == 1
    assert "**" in table  # the best balanced accuracy and confusion norm are marked


def test_news20_subsampling_scheme(monkeypatch):
    """Some classes keep all their training rows, the others a seeded fraction; test intact."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(1, 11), 100)
    X = rng.standard_normal((len(y), 4))
    y_te = np.repeat(np.arange(1, 11), 7)
    X_te = rng.standard_normal((len(y_te), 4))

    def fake_load_shared(name, split="train"):
        assert name == "news20"
        return (X, y) if split == "train" else (X_te, y_te)

    monkeypatch.setattr("onlinelearn.datasets.load_shared", fake_load_shared)
    runs = []
    for _ in range(2):
        Xs, ys, Xt, yt = imbalance._load_news20(3, 0.1, None, np.random.default_rng(5))
        counts = np.bincount(ys, minlength=11)[1:]
        assert sorted(counts.tolist()) == [10] * 7 + [100] * 3
        np.testing.assert_array_equal(yt, y_te)
        assert Xs.shape == (len(ys), 4)
        runs.append(ys)
    np.testing.assert_array_equal(runs[0], runs[1])  # seeded


def test_subsample_keeps_rare_classes():
    y = np.concatenate([np.zeros(1000, int), np.ones(3, int), np.full(20, 2)])
    idx = imbalance._stratified_subsample(y, 100, np.random.default_rng(0))
    counts = np.bincount(y[idx])
    assert counts[1] == 3 and counts[2] == 6 and 90 <= counts[0] <= 110
    assert len(np.unique(idx)) == len(idx)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"learners": ["SVM"]},
        {"learners": []},
        {"select_by": "accuracy"},
        {"C_grid": [0.0]},
        {"epochs": 0},
        {"max_rows": 10},
    ],
)
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        run_imbalance_study(["shuttle"], **kwargs)
