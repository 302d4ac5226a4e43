"""DualCoordinateSVC's duality gap is the gap of the model it returns, at tight tolerances on
real data: the dual in ``history_`` is D(alpha_) summed from scratch, the primal is P(coef_,
intercept_), and ``converged_`` means that their relative gap is at most ``tol``.

The Crammer-Singer solver used to move alpha by every change but w only by the changes of
1e-12 or more (LIBLINEAR's rule), so that w drifted from w(alpha): on dna at C = 0.1 the dual
it recorded was off by up to 1.4e-11 relative at tol = 1e-10 (the size of the gap), the gap
rose between evaluations, and at tol = 3e-10 it stopped with ``converged_`` while the true
gap was above tol.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import require_shared_data

from onlinelearn import DualCoordinateSVC
from onlinelearn.datasets import load_dna, load_shared


def _with_bias(X, clf):
    X = sp.csr_matrix(X, dtype=np.float64)
    if not clf.fit_intercept:
        return X
    return sp.hstack([X, np.full((X.shape[0], 1), float(clf.intercept_scaling))]).tocsr()


def true_dual(clf, X, y):
    """D(alpha_) from scratch (LIBLINEAR's form, no sample or class weights: C_i = C)."""
    Xb = _with_bias(X, clf)
    A = np.asarray(clf.alpha_, dtype=np.float64)
    codes = np.searchsorted(clf.classes_, y)
    if clf.multi_class == "crammer_singer":
        W = np.asarray(Xb.T @ A.T)  # (R, K): w_m = sum_i alpha_i^m x_i
        return float(A[codes, np.arange(len(y))].sum() - 0.5 * (W * W).sum())
    D = 0.0
    for k in range(A.shape[0]):
        ys = np.where(codes == (1 if A.shape[0] == 1 else k), 1.0, -1.0)
        w = Xb.T @ (A[k] * ys)
        D += A[k].sum() - 0.5 * float(w @ w)
        if clf.loss == "squared_hinge":
            D -= float((A[k] ** 2).sum()) / (4.0 * clf.C)
    return D


def check_gap(clf, X, y):
    """The recorded dual and primal are those of alpha_ and of the weights returned, and
    converged_ means that the true relative gap is at most tol."""
    h = clf.history_
    D = true_dual(clf, X, y)
    P = clf.primal_objective(X, y)
    if clf.converged_:
        assert P - D <= clf.tol * P, ((P - D) / P, clf.tol)
    else:
        assert h["gap"][-1] > clf.tol * h["primal"][-1]
    np.testing.assert_allclose(h["dual"][-1], D, rtol=1e-12)
    np.testing.assert_allclose(h["primal"][-1], P, rtol=1e-12)


@pytest.mark.parametrize("tol", [3e-10, 1e-10])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_crammer_singer_gap_is_the_gap_of_alpha_at_tight_tol(tol, seed):
    X, y = load_dna("train")
    clf = DualCoordinateSVC(C=0.1, multi_class="crammer_singer", tol=tol, max_iter=5000,
                            random_state=seed).fit(X, y)  # fmt: skip
    assert clf.converged_
    check_gap(clf, X, y)


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("binary", [False, True])
def test_one_vs_rest_and_binary_gap_is_the_gap_of_alpha_at_tight_tol(loss, binary):
    X, y = load_dna("train")
    if binary:
        y = np.where(y == 3, 1, -1)  # the 'neither' class against the two boundary classes
    for seed in (0, 1):
        clf = DualCoordinateSVC(C=0.1, loss=loss, tol=1e-11, max_iter=5000,
                                random_state=seed).fit(X, y)  # fmt: skip
        assert clf.converged_
        check_gap(clf, X, y)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_every_evaluation_records_the_dual_of_its_alpha():
    """With an evaluation per epoch, the fit stopped at epoch k records in its last row the
    k-th row of the longer fit (the same steps), and that row is D of the alpha_ of epoch k."""
    X, y = load_dna("train")
    kw = dict(C=0.1, multi_class="crammer_singer", tol=0.0, check_every=1, random_state=0)
    full = DualCoordinateSVC(max_iter=1500, **kw).fit(X, y)
    for k in (700, 1100, 1500):
        part = DualCoordinateSVC(max_iter=k, **kw).fit(X, y)
        assert part.history_["dual"][-1] == full.history_["dual"][k]
        check_gap(part, X, y)
    # the dual of coordinate ascent only goes up: rounding aside, so does the recorded one
    d = full.history_["dual"]
    assert np.all(np.diff(d) >= -1e-13 * np.abs(d[1:]))


def test_crammer_singer_gap_on_pendigits():
    require_shared_data("pendigits")
    X, y = load_shared("pendigits")
    clf = DualCoordinateSVC(C=0.01, multi_class="crammer_singer", tol=1e-9, max_iter=5000,
                            random_state=0).fit(X, y)  # fmt: skip
    check_gap(clf, X, y)
