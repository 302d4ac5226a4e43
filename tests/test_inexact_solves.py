"""No silent inexact solve: a fit that stops short of its tolerance says so, in a fitted
attribute and in one ConvergenceWarning per call; the estimators without an iterative solve
say in their docstrings that their steps are exact (the tests of each module check that they
are: test_svm_dcd, test_kernel_svc, test_boosting, test_alignment, test_structured_*).

KernelSVC had no ``converged_``: a fit stopped by ``max_iter`` only warned, and nothing fitted
told how many of its dual problems missed ``tol``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from onlinelearn import DualCoordinateSVC, KernelSVC, PrimalDualBoost
from onlinelearn.datasets import load_dna
from onlinelearn.kernels import RBF
from onlinelearn.model_io import load_model, save_model
from onlinelearn.structured import Aligner, OnlineStructuredLearner, SequenceTagger


def _fit_recording(est, X, y):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [w for w in rec if issubclass(w.category, ConvergenceWarning)]


def _dna(n=300, binary=False):
    X, y = load_dna("train")
    X, y = X[:n], y[:n]
    return X, (np.where(y == 3, 1, -1) if binary else y)


def _true_gaps(clf, X, y):
    """(P, D) of every dual problem of a KernelSVC, from its dual coefficients and the Gram
    matrix (RBF(0.02) + b^2 = 1)."""
    from sklearn.metrics.pairwise import rbf_kernel

    X = X.toarray()
    Kb = rbf_kernel(X, X, gamma=0.02) + 1.0
    codes = np.searchsorted(clf.classes_, y)
    coef = np.zeros((clf._dual.shape[0], len(y)))
    coef[:, clf.support_] = clf._dual
    out = []
    if clf._cs:
        F = Kb @ coef.T
        wsq = float(np.einsum("ik,ik->", coef.T, F))
        marg = 1 + F - F[np.arange(len(y)), codes][:, None]
        marg[np.arange(len(y)), codes] = 0
        return [(0.5 * wsq + marg.max(1).sum(), coef[codes, np.arange(len(y))].sum() - 0.5 * wsq)]
    K = len(clf.classes_)
    pairs = [(a, b) for a in range(K) for b in range(a + 1, K)]
    for p in range(coef.shape[0]):
        if clf._ovo:
            rows = np.isin(codes, pairs[p])
            ys = np.where(codes == pairs[p][0], 1.0, -1.0)
        else:
            rows = np.ones(len(y), bool)
            ys = np.where(codes == (1 if coef.shape[0] == 1 else p), 1.0, -1.0)
        c = coef[p, rows]
        f = Kb[np.ix_(rows, rows)] @ c
        q = float(c @ f)
        out.append((0.5 * q + np.maximum(0, 1 - ys[rows] * f).sum(), np.abs(c).sum() - 0.5 * q))
    return out


@pytest.mark.parametrize(
    "kw, binary, n_problems",
    [
        (dict(), True, 1),
        (dict(), False, 3),  # one-vs-one: 3 pairs
        (dict(multi_class="ovr"), False, 3),
        (dict(multi_class="ovr", selection="random"), False, 3),
        (dict(multi_class="crammer_singer"), False, 1),
        (dict(multi_class="crammer_singer", selection="random"), False, 1),
    ],
)
def test_kernel_svc_counts_the_problems_that_miss_tol(kw, binary, n_problems, tmp_path):
    X, y = _dna(binary=binary)
    clf = KernelSVC(RBF(0.02), C=10.0, tol=1e-12, max_iter=1, random_state=0, **kw)
    caught = _fit_recording(clf, X, y)
    assert clf.converged_ is False
    assert len(caught) == 1
    missed = re.search(r"(\d+) of its (\d+) dual problem", str(caught[0].message))
    assert missed and int(missed.group(2)) == n_problems
    gaps = [(P - D) / P for P, D in _true_gaps(clf, X, y)]
    assert int(missed.group(1)) == sum(g > 1e-12 for g in gaps) >= 1
    # a second call warns again, once
    assert len(_fit_recording(clf, X, y)) == 1

    clf.set_params(tol=1e-8, max_iter=5000)
    assert _fit_recording(clf, X, y) == [] and clf.converged_ is True
    for P, D in _true_gaps(clf, X, y):
        assert P - D <= 1e-8 * P * (1 + 1e-9)
    save_model(clf, tmp_path / "svc.npz")
    assert load_model(tmp_path / "svc.npz").converged_ is True


@pytest.mark.parametrize(
    "kw, binary",
    [
        (dict(), True),
        (dict(loss="squared_hinge"), True),
        (dict(), False),
        (dict(multi_class="crammer_singer"), False),
    ],
)
def test_dual_coordinate_svc_says_when_it_stops_short_of_tol(kw, binary):
    X, y = _dna(binary=binary)
    clf = DualCoordinateSVC(C=10.0, tol=1e-12, max_iter=3, random_state=0, **kw)
    for _ in range(2):  # one warning per call
        caught = _fit_recording(clf, X, y)
        assert len(caught) == 1 and clf.converged_ is False
        h = clf.history_
        assert h["gap"][-1] > clf.tol * h["primal"][-1]


@pytest.mark.parametrize(
    "cls",
    [DualCoordinateSVC, KernelSVC, PrimalDualBoost, Aligner, SequenceTagger,
     OnlineStructuredLearner],
)  # fmt: skip
def test_the_docstring_says_what_is_exact_and_what_is_approximate(cls):
    doc = " ".join(cls.__doc__.split())
    assert "Exact and approximate:" in doc
    assert "exact" in doc.split("Exact and approximate:")[1][:400]


def test_the_steps_without_an_iterative_solve_emit_no_convergence_warning():
    X, y = _dna(binary=True)
    assert _fit_recording(PrimalDualBoost(20, C=0.1), X, y) == []
    from onlinelearn.structured import make_alignment

    Xa, Ya = make_alignment(10, random_state=0)
    assert _fit_recording(Aligner(random_state=0), Xa, Ya) == []
