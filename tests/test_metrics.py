"""Tests of the confusion-based metrics (COPA paper, eqs. 4-6, Definition 4, Theorems 1-2)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, confusion_matrix

from onlinelearn.metrics import (
    ConfusionRiskBound,
    confusion_matrix_conditional,
    confusion_operator_norm,
    confusion_risk_bound,
    misclassification_rate_from_confusion,
    online_confusion_risk,
    operator_norm,
)


def _sklearn_reference(y_true, y_pred, labels=None):
    if labels is None:
        labels = np.unique(np.concatenate([y_true, y_pred]))
    with warnings.catch_warnings():  # sklearn warns when a single label is present
        warnings.simplefilter("ignore", UserWarning)
        ref = confusion_matrix(y_true, y_pred, labels=labels, normalize="true")
    np.fill_diagonal(ref, 0.0)
    return ref


label_pairs = st.integers(1, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
    )
)


# --------------------------------------------------------------------------- confusion matrix
def test_small_example_by_hand():
    y_true = [0, 0, 0, 0, 1, 1, 2]
    y_pred = [0, 1, 1, 2, 1, 0, 2]
    C = confusion_matrix_conditional(y_true, y_pred)
    expected = np.array([[0.0, 0.5, 0.25], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(C, expected)
    full = confusion_matrix_conditional(y_true, y_pred, zero_diagonal=False)
    np.testing.assert_allclose(np.diag(full), [0.25, 0.5, 1.0])
    np.testing.assert_allclose(full.sum(axis=1), 1.0)


@settings(max_examples=60, deadline=None)
@given(label_pairs)
def test_matches_sklearn_normalized_confusion(pair):
    y_true, y_pred = map(np.asarray, pair)
    C = confusion_matrix_conditional(y_true, y_pred)
    np.testing.assert_allclose(C, _sklearn_reference(y_true, y_pred), atol=1e-12)


def test_labels_fix_order_and_size():
    y_true = ["b", "a", "a", "c"]
    y_pred = ["a", "a", "c", "c"]
    labels = ["c", "a", "b", "d"]
    C = confusion_matrix_conditional(y_true, y_pred, labels=labels)
    assert C.shape == (4, 4)
    np.testing.assert_allclose(C, _sklearn_reference(y_true, y_pred, labels=labels))
    # row of "a": half of the a's were predicted "c" (column 0)
    np.testing.assert_allclose(C[1], [0.5, 0.0, 0.0, 0.0])


def test_string_labels_default_order_is_sorted():
    C = confusion_matrix_conditional(["dog", "cat", "cat"], ["cat", "cat", "dog"])
    np.testing.assert_allclose(C, [[0.0, 0.5], [1.0, 0.0]])


def test_single_class():
    C = confusion_matrix_conditional([3, 3, 3], [3, 3, 3])
    np.testing.assert_array_equal(C, [[0.0]])
    assert confusion_operator_norm([3, 3, 3], [3, 3, 3]) == 0.0
    full = confusion_matrix_conditional([3, 3, 3], [3, 3, 3], zero_diagonal=False)
    np.testing.assert_array_equal(full, [[1.0]])


def test_class_never_predicted_has_zero_column():
    C = confusion_matrix_conditional([0, 1, 2, 2], [0, 0, 0, 0])
    np.testing.assert_array_equal(C[:, 1], 0.0)
    np.testing.assert_array_equal(C[:, 2], 0.0)
    np.testing.assert_allclose(C[:, 0], [0.0, 1.0, 1.0])


def test_class_absent_from_y_true_has_zero_row():
    # class 2 is only predicted; class 9 is only listed in labels
    C = confusion_matrix_conditional([0, 1, 1], [2, 1, 2], labels=[0, 1, 2, 9])
    np.testing.assert_array_equal(C[2], 0.0)
    np.testing.assert_array_equal(C[3], 0.0)
    np.testing.assert_allclose(C[0], [0.0, 0.0, 1.0, 0.0])
    np.testing.assert_allclose(C[1], [0.0, 0.0, 0.5, 0.0])


@pytest.mark.parametrize(
    ("y_true", "y_pred", "labels", "match"),
    [
        ([0, 1], [0], None, "different lengths"),
        ([], [], None, "empty"),
        ([[0, 1]], [[0, 1]], None, "one-dimensional"),
        ([0, 1], [0, 5], [0, 1], "not in labels"),
        ([0, 7], [0, 1], [0, 1], "not in labels"),
        ([0, 1], [0, 1], [0, 1, 1], "duplicates"),
        ([0, 1], [0, 1], [], "empty"),
        ([0, 1], ["a", "b"], [0, 1], "labels"),
    ],
)
def test_confusion_input_validation(y_true, y_pred, labels, match):
    with pytest.raises(ValueError, match=match):
        confusion_matrix_conditional(y_true, y_pred, labels=labels)


# --------------------------------------------------------------------------- operator norm
def test_operator_norm_matches_numpy_spectral_norm():
    rng = np.random.default_rng(0)
    for shape in [(1, 1), (3, 3), (5, 2), (2, 7)]:
        M = rng.normal(size=shape)
        assert operator_norm(M) == pytest.approx(np.linalg.norm(M, 2), rel=1e-12)


def test_operator_norm_is_sup_of_ratio_and_monotone():
    rng = np.random.default_rng(1)
    A = rng.uniform(size=(4, 4))
    B = A + rng.uniform(size=(4, 4))
    norm_A = operator_norm(A)
    v = rng.normal(size=(4, 500))
    ratios = np.linalg.norm(A @ v, axis=0) / np.linalg.norm(v, axis=0)
    assert ratios.max() <= norm_A + 1e-12
    assert norm_A <= operator_norm(B)  # 0 <= A <= B entrywise (paper, after eq. 5)


@settings(max_examples=60, deadline=None)
@given(label_pairs)
def test_confusion_operator_norm_matches_reference_and_bounds_error(pair):
    y_true, y_pred = map(np.asarray, pair)
    ref = _sklearn_reference(y_true, y_pred)
    value = confusion_operator_norm(y_true, y_pred)
    assert value == pytest.approx(np.linalg.norm(ref, 2), abs=1e-12)
    # eq. (6) with pi = (1/Q, ..., 1/Q): R_uniform(h) <= sqrt(Q) ||C(h)||
    Q = ref.shape[0]
    r_uniform = misclassification_rate_from_confusion(ref, np.full(Q, 1.0 / Q))
    assert r_uniform <= math.sqrt(Q) * value + 1e-12


@pytest.mark.parametrize("bad", [np.zeros(3), np.zeros((0, 0)), [[np.nan, 0.0], [0.0, 1.0]]])
def test_operator_norm_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        operator_norm(bad)


# --------------------------------------------------------------------------- eq. (6)
@settings(max_examples=80, deadline=None)
@given(label_pairs)
def test_misclassification_identity_with_empirical_priors(pair):
    y_true, y_pred = map(np.asarray, pair)
    labels = np.unique(np.concatenate([y_true, y_pred]))
    C = confusion_matrix_conditional(y_true, y_pred, labels=labels)
    priors = np.array([np.mean(y_true == p) for p in labels])
    rate = misclassification_rate_from_confusion(C, priors)
    assert rate == pytest.approx(1.0 - accuracy_score(y_true, y_pred), abs=1e-12)
    # the diagonal is ignored: the full matrix gives the same value
    full = confusion_matrix_conditional(y_true, y_pred, labels=labels, zero_diagonal=False)
    assert misclassification_rate_from_confusion(full, priors) == pytest.approx(rate, abs=1e-12)


def test_misclassification_with_other_priors():
    C = np.array([[0.0, 0.2], [0.6, 0.0]])
    assert misclassification_rate_from_confusion(C, [0.75, 0.25]) == pytest.approx(0.3)


@pytest.mark.parametrize(
    ("C", "priors", "match"),
    [
        ([[0.0, 0.1], [0.2, 0.0]], [0.5, 0.6], "sum to 1"),
        ([[0.0, 0.1], [0.2, 0.0]], [1.5, -0.5], "nonnegative"),
        ([[0.0, 0.1], [0.2, 0.0]], [1.0], "shape"),
        ([[0.0, 0.1, 0.0], [0.2, 0.0, 0.0]], [0.5, 0.5], "square"),
        ([[0.0, -0.1], [0.2, 0.0]], [0.5, 0.5], "nonnegative"),
    ],
)
def test_misclassification_input_validation(C, priors, match):
    with pytest.raises(ValueError, match=match):
        misclassification_rate_from_confusion(C, priors)


# --------------------------------------------------------------------------- online confusion risk
def test_online_confusion_risk_by_hand():
    labels = ["a", "b", "c"]
    y = ["a", "b", "a", "c"]
    losses = np.array(
        [
            [9.0, 1.0, 2.0],  # diagonal entry (9) must be ignored
            [0.5, 9.0, 0.0],
            [0.0, 3.0, 4.0],
            [1.0, 1.0, 9.0],
        ]
    )
    C_hat = online_confusion_risk(y, losses, labels)
    expected = np.array([[0.0, 2.0, 3.0], [0.5, 0.0, 0.0], [1.0, 1.0, 0.0]])
    np.testing.assert_allclose(C_hat, expected)


@settings(max_examples=60, deadline=None)
@given(label_pairs)
def test_online_risk_with_indicator_losses_is_confusion_matrix(pair):
    # Example 1 with C_pq = 1: l_{q|y}(h, x) = 1[h(x) = q]
    y, pred = map(np.asarray, pair)
    labels = np.arange(5)
    losses = (pred[:, None] == labels[None, :]).astype(float)
    C_hat = online_confusion_risk(y, losses, labels)
    np.testing.assert_allclose(C_hat, confusion_matrix_conditional(y, pred, labels=labels))


def test_online_risk_matches_definition_4_sum():
    rng = np.random.default_rng(3)
    labels = np.array([10, 20, 30, 40])
    y = rng.choice(labels[:3], size=50)  # class 40 absent
    losses = rng.uniform(size=(50, 4))
    T = {p: np.sum(y == p) for p in labels}
    ref = np.zeros((4, 4))
    for t in range(50):  # sum_t L_hat_{|y_t}(h_{t-1}, x_t) / T_{y_t}
        L = np.zeros((4, 4))
        p = int(np.flatnonzero(labels == y[t])[0])
        L[p] = losses[t]
        L[p, p] = 0.0
        ref += L / T[y[t]]
    np.testing.assert_allclose(online_confusion_risk(y, losses, labels), ref)
    np.testing.assert_array_equal(online_confusion_risk(y, losses, labels)[3], 0.0)


@pytest.mark.parametrize(
    ("y", "losses", "labels", "match"),
    [
        ([0, 1], np.zeros((3, 2)), [0, 1], "shape"),
        ([0, 1], np.zeros((2, 3)), [0, 1], "shape"),
        ([], np.zeros((0, 2)), [0, 1], "empty"),
        ([0, 1], -np.ones((2, 2)), [0, 1], "nonnegative"),
        ([0, 1], np.full((2, 2), np.inf), [0, 1], "finite"),
        ([0, 2], np.zeros((2, 2)), [0, 1], "not in labels"),
    ],
)
def test_online_risk_input_validation(y, losses, labels, match):
    with pytest.raises(ValueError, match=match):
        online_confusion_risk(y, losses, labels)


# --------------------------------------------------------------------------- Theorems 1-2
def test_bound_formula_as_stated():
    C_hat = np.array([[0.0, 0.3, 0.1], [0.2, 0.0, 0.0], [0.0, 0.4, 0.0]])
    counts = np.array([10, 40, 50])
    M, delta = 2.0, 0.05
    res = confusion_risk_bound(C_hat, counts, M, delta)
    assert isinstance(res, ConfusionRiskBound)
    dev = M * math.sqrt(2 * 3 * (1 / 10 + 1 / 40 + 1 / 50) * math.log(3 / delta))
    assert res.deviation == pytest.approx(dev, rel=1e-12)
    assert res.empirical_norm == pytest.approx(np.linalg.norm(C_hat, 2), rel=1e-12)
    assert res.bound == pytest.approx(res.empirical_norm + dev, rel=1e-12)
    derived = confusion_risk_bound(C_hat, counts, M, delta, form="derived")
    dev2 = M * math.sqrt(2 * 3 * (1 / 10 + 1 / 40 + 1 / 50) * math.log(6 / delta))
    assert derived.deviation == pytest.approx(dev2, rel=1e-12)
    assert derived.bound > res.bound


def test_bound_skips_absent_classes_and_shrinks_with_data():
    C_hat = np.zeros((3, 3))
    with_absent = confusion_risk_bound(C_hat, [20, 0, 30], 1.0, 0.1)
    expected = math.sqrt(2 * 3 * (1 / 20 + 1 / 30) * math.log(3 / 0.1))
    assert with_absent.deviation == pytest.approx(expected)
    small = confusion_risk_bound(C_hat, [10, 10, 10], 1.0, 0.1).deviation
    large = confusion_risk_bound(C_hat, [1000, 1000, 1000], 1.0, 0.1).deviation
    assert large == pytest.approx(small / 10)  # O(sqrt(sum_p 1/T_p))


def test_bound_covers_true_confusion_on_a_simulation():
    # Fixed predictor (h_t = h for all t): C_{l,y}(h) is then the true confusion matrix, and
    # Theorem 1 with 0-1 losses (M = 1) must hold in (far) more than 1 - delta of the draws.
    rng = np.random.default_rng(7)
    Q, delta = 3, 0.1
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.0, 0.7]])  # P(h(X)=q | Y=p)
    true_C = P.copy()
    np.fill_diagonal(true_C, 0.0)
    true_norm = np.linalg.norm(true_C, 2)
    y = np.repeat(np.arange(Q), [30, 60, 90])
    held = 0
    for _ in range(200):
        pred = np.array([rng.choice(Q, p=P[p]) for p in y])
        C_hat = online_confusion_risk(y, np.eye(Q)[pred], np.arange(Q))
        held += true_norm <= confusion_risk_bound(C_hat, [30, 60, 90], 1.0, delta).bound
    assert held >= 0.9 * 200


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"class_counts": [1, 2]}, "shape"),
        ({"class_counts": [0, 0, 0]}, "all zero"),
        ({"class_counts": [1.5, 2, 3]}, "integers"),
        ({"class_counts": [-1, 2, 3]}, "integers"),
        ({"M": 0.0}, "M must be"),
        ({"M": np.inf}, "M must be"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.5}, "delta"),
        ({"form": "other"}, "form"),
    ],
)
def test_bound_input_validation(kwargs, match):
    args = {"C_hat": np.zeros((3, 3)), "class_counts": [5, 5, 5], "M": 1.0, "delta": 0.05}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        confusion_risk_bound(**args)
