"""The checks of a call written for speed (issue 10, the fixed cost of ``fit``): each compiled
reduction against a plain numpy reference on random inputs with defects at random places, and
the estimators' refusals that rely on them (same error, model unchanged)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron, PNormPerceptron
from onlinelearn._core import checks as K
from onlinelearn.shell import validation as V


def _reference_structure(indptr, indices, n_values, n_minor):
    """The first defect, found the slow and obvious way."""
    if indptr[0] != 0:
        return K.BAD_START, 0
    for i in range(len(indptr) - 1):
        if indptr[i + 1] < indptr[i]:
            return K.DECREASING, i
    end = indptr[-1]
    if end > len(indices) or end > n_values:
        return K.BAD_END, len(indptr) - 1
    for q in range(end):
        if not 0 <= indices[q] < n_minor:
            return K.OUT_OF_RANGE, q
    return K.OK, -1


@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
def test_structure_error_finds_the_first_defect_as_a_scan_would(idx_dtype):
    rng = np.random.default_rng(0)
    seen = set()
    for trial in range(400):
        n_major, n_minor = int(rng.integers(0, 6)), int(rng.integers(1, 9))
        counts = rng.integers(0, 5, n_major)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(idx_dtype)
        nnz = int(indptr[-1])
        indices = rng.integers(0, n_minor, nnz + int(rng.integers(0, 3))).astype(idx_dtype)
        n_values = indices.shape[0]
        kind = trial % 5
        if kind == 1 and nnz:  # one or more indices out of range, below or above
            for q in rng.choice(nnz, size=int(rng.integers(1, min(nnz, 3) + 1)), replace=False):
                indices[q] = rng.choice([-1, n_minor, n_minor + 5, np.iinfo(idx_dtype).min])
        elif kind == 2 and n_major:
            indptr[int(rng.integers(1, n_major + 1))] -= int(rng.integers(1, 3))
        elif kind == 3:
            n_values = max(nnz - 1, 0) if nnz else 0
            indices = indices[: max(nnz - int(rng.integers(0, 2)), 0)]
        elif kind == 4:
            indptr[0] = 1
        got = K.sparse_structure_error(indptr, indices, n_values, n_minor)
        want = _reference_structure(indptr, indices, n_values, n_minor)
        assert (int(got[0]), int(got[1])) == want, (trial, indptr, indices)
        seen.add(want[0])
    assert seen == {K.OK, K.BAD_START, K.DECREASING, K.BAD_END, K.OUT_OF_RANGE}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_all_finite_and_rows_finite_agree_with_isfinite(dtype):
    rng = np.random.default_rng(1)
    big = np.finfo(dtype).max
    for trial in range(300):
        n = int(rng.integers(0, 40))
        a = (rng.standard_normal(n) * rng.choice([1e-30, 1.0, 1e30])).astype(dtype)
        if n and trial % 2:
            a[rng.integers(0, n)] = rng.choice([np.nan, np.inf, -np.inf])
        if n and trial % 3 == 0:
            a[rng.integers(0, n)] = rng.choice([big, -big, 0.0, -0.0])  # finite extremes
        assert bool(K.all_finite(a)) == bool(np.isfinite(a).all()), a
        M = a[: (n // 4) * 4].reshape(-1, 4) if n >= 4 else np.zeros((1, 4), dtype)
        rows = rng.choice(M.shape[0], size=int(rng.integers(0, M.shape[0] + 1)), replace=False)
        rows = rows.astype(np.int64)
        assert bool(K.rows_finite(M, rows)) == bool(np.isfinite(M[rows]).all())


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64])
def test_unique_labels_and_codes_equal_numpy(dtype):
    rng = np.random.default_rng(2)
    info = np.iinfo(dtype)
    for trial in range(60):
        lo = int(rng.integers(max(info.min, -100), 50)) if info.min < 0 else 0
        width = int(rng.choice([1, 3, 20, 200]))
        y = rng.integers(lo, lo + width, int(rng.integers(1, 300))).astype(dtype)
        if trial % 7 == 0:  # a range too wide for a table: numpy's sort
            y[0] = info.max
        u = V.unique_labels(y)
        assert u.dtype == np.unique(y).dtype and np.array_equal(u, np.unique(y))
        codes = V.label_codes(u, y)
        assert codes.dtype == np.int64
        assert np.array_equal(codes, np.searchsorted(np.unique(y), y))


@pytest.mark.parametrize(
    "classes, y, bad",
    [
        (np.array([0, 2, 5]), np.array([2, 5, 3, 0]), 3),
        (np.array([0, 2, 5]), np.array([9, 0]), 9),
        (np.array([0, 2, 5]), np.array([-4]), -4),
        (np.array(["a", "c"]), np.array(["a", "b"]), "b"),
        (np.array(["a", "c"]), np.array(["d"]), "d"),
        (np.array([0.5, 1.5]), np.array([1.0]), 1.0),
    ],
)
def test_label_codes_refuse_a_label_that_is_not_a_class(classes, y, bad):
    with pytest.raises(ValueError, match=f"label {bad!r}"):
        V.label_codes(classes, y)


def _nonfinite_inputs(value):
    X = np.abs(np.random.default_rng(3).standard_normal((12, 5)))
    X[7, 3] = value
    yield X
    yield X.astype(np.float32)
    yield sp.csr_matrix(X)
    yield sp.csr_matrix(X.astype(np.float32))
    yield sp.csc_matrix(X)  # converted to CSR first, then checked


@pytest.mark.parametrize("value, word", [(np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "inf")])
@pytest.mark.parametrize(
    "make",
    [
        Perceptron,
        PassiveAggressiveClassifier,
        COPA,
        lambda: COPA(average=False, n_epochs=3),
        lambda: PassiveAggressiveClassifier(constraint="l1", radius=1.0),  # checked before
        PNormPerceptron,  # the generic pass: checked before
    ],
)
def test_nonfinite_x_gets_scikit_learns_error_and_changes_nothing(value, word, make):
    """The Euclidean pass checks the values itself (fit, partial_fit, partial_fit_predict);
    the other passes and predict have X checked before; the error and the untouched model are
    the same either way."""
    y = np.arange(12) % 3
    good = np.abs(np.random.default_rng(4).standard_normal((12, 5)))
    for X in _nonfinite_inputs(value):
        with pytest.raises(ValueError, match=f"Input X contains {word}"):
            make().fit(X, y)
        est = make().fit(good, y)
        before = copy.deepcopy(est.__dict__)
        for method, args in (
            ("partial_fit", (X, y)),
            ("partial_fit_predict", (X, y)),
            ("predict", (X,)),
            ("decision_function", (X,)),
        ):
            with pytest.raises(ValueError, match=f"Input X contains {word}"):
                getattr(est, method)(*args)
            assert set(est.__dict__) == set(before)
            for k, v in before.items():
                now = est.__dict__[k]
                # (a NaN in the state, e.g. an unknown dual_objective_, equals itself)
                assert (np.array_equal(v, now, equal_nan=v.dtype.kind == "f")
                        if isinstance(v, np.ndarray) else v == now), k  # fmt: skip


def test_nonfinite_value_in_unused_csr_storage_is_still_refused():
    """scipy allows data past indptr[-1]; the check reads the whole data array, as before."""
    X = sp.csr_matrix(np.eye(3))
    X.data = np.concatenate([X.data, [np.nan]])
    X.indices = np.concatenate([X.indices, [0]]).astype(X.indices.dtype)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        Perceptron().fit(X, [0, 1, 2])


def test_fit_codes_match_the_sorted_classes_for_every_label_kind():
    """The table path (small integers) and the sort path (strings, wide integers) give the same
    model as each other for the same labels renamed monotonically."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((80, 6))
    y = rng.integers(0, 4, 80)
    ref = PassiveAggressiveClassifier(random_state=0).fit(X, y)
    for labels in (y.astype(np.int8), y * 10**12, np.array(["a", "b", "c", "d"])[y], y - 3):
        est = PassiveAggressiveClassifier(random_state=0).fit(X, labels)
        assert np.array_equal(est._theta, ref._theta)
        assert np.array_equal(est.class_counts_, ref.class_counts_)
        assert np.array_equal(est.classes_, np.unique(labels))


@pytest.mark.parametrize("make", [Perceptron, COPA])
def test_nonfinite_value_in_a_row_of_weight_zero_or_of_one_class_is_refused(make):
    """The pass reads every row (weight 0 included); a batch of one class runs no pass, so its
    values are checked before."""
    X = sp.csr_matrix(np.eye(4))
    X.data[2] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        make().fit(X, [0, 1, 2, 0], sample_weight=[1.0, 1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="Input X contains NaN"):
        make().fit(X, [5, 5, 5, 5])
    est = make().partial_fit(np.eye(4)[:1], [5])
    before = copy.deepcopy(est.__dict__)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        est.partial_fit(X, [5, 5, 5, 5])
    assert all(np.array_equal(v, est.__dict__[k]) for k, v in before.items())


def test_huge_finite_values_are_not_taken_for_nan():
    """||x||^2 overflows for values near 1e200 while every value is finite: the pass goes on
    (the overflow refusal of a row with a loss stays the one it was), it does not report NaN."""
    X = np.array([[1e200, 0.0], [0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="overflows float64"):
        PassiveAggressiveClassifier(shuffle=False).fit(X, [0, 1, 2])


def test_count_lossy_rows_equals_the_mask():
    rng = np.random.default_rng(8)
    for _ in range(200):
        n = int(rng.integers(0, 30))
        loss = rng.choice([0.0, 0.0, 0.5, 2.0, -0.0], size=n)
        weight = rng.choice([0.0, 1.0, 3.0], size=n)
        order = rng.permutation(n).astype(np.int64)[: int(rng.integers(0, n + 1))]
        want = int(((loss[order] > 0) & (weight[order] > 0)).sum())
        assert K.count_lossy_rows(loss, weight, order) == want


def test_which_learners_leave_the_finiteness_of_x_to_their_pass():
    """The Euclidean pass checks the values itself; the projected pass (a constraint) and the
    other links do not, so their validation keeps its sweep over X."""
    from onlinelearn import Winnow

    assert Perceptron()._finite_in_pass()
    assert PassiveAggressiveClassifier()._finite_in_pass()
    assert COPA()._finite_in_pass()
    assert not Perceptron(constraint="l1")._finite_in_pass()
    assert not PassiveAggressiveClassifier(constraint="simplex")._finite_in_pass()
    assert not PNormPerceptron()._finite_in_pass()
    assert not Winnow()._finite_in_pass()

    class OwnPass(Perceptron):
        def _pass_kernel(self, ip):
            return super()._pass_kernel(ip)

    assert not OwnPass()._finite_in_pass()  # a pass of its own: not known to check


def test_averaged_finite_is_isfinite_of_the_averaged_readout():
    """euclid_pass.averaged_finite (a sweep of x * 0, no division per entry) answers as
    ``isfinite`` of (S theta - U) / max(S, T) on the rows asked for, plus b times their last
    row, for states with an infinite or NaN entry, an S theta that overflows, a NaN S and a
    read-out whose intercept term alone overflows."""
    from onlinelearn._core.euclid_readout import averaged_finite
    from onlinelearn._core.state import N_ROUNDS, N_ST, S_SUM

    def reference(theta, U, st, rows, b):
        T, S = st[N_ROUNDS], st[S_SUM]
        if T <= 0:
            return True
        sel = rows if rows.size else np.arange(theta.shape[0])
        with np.errstate(all="ignore"):
            W = (S * theta[sel].astype(np.float64) - U[sel]) / max(S, T) if S == S else (
                (S * theta[sel].astype(np.float64) - U[sel]) / T
            )  # fmt: skip
            return bool(np.isfinite(W).all() and np.isfinite(b * W[-1]).all())

    rng = np.random.default_rng(5)
    seen = set()
    for trial in range(240):
        theta = rng.normal(size=(7, 3)).astype(np.float32 if trial % 2 else np.float64)
        U = rng.normal(size=(7, 3))
        st = np.zeros(N_ST)
        st[N_ROUNDS], st[S_SUM] = 50.0, 1275.0
        j, k = int(rng.integers(7)), int(rng.integers(3))
        case = trial % 6
        if case == 0:
            U[j, k] = np.inf
        elif case == 1:
            U[j, k] = np.nan
        elif case == 2:
            theta[j, k], st[S_SUM] = 3e38, 1e300
        elif case == 3:
            st[S_SUM] = np.nan
        elif case == 4:
            U[j, k] = 1e306
        elif case == 5:  # finite weights of ~1e10: only b w of the last row overflows
            theta *= theta.dtype.type(1e10)
        rows = np.sort(rng.choice(7, size=int(rng.integers(0, 5)), replace=False)).astype(np.int64)
        for b in (0.0, 1.0, 1e300):
            want = reference(theta, U, st, rows, b)
            assert averaged_finite(theta, U, st, rows, b) == want, (trial, b)
            seen.add(want)
    assert seen == {True, False}
