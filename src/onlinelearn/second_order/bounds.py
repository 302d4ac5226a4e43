"""The mistake bounds of the weighted min-max learner (Lemma 1 and Theorem 1 of the note), for a
comparator U, computed from their definitions on a recorded run.

With Z the update rounds of a run (``WeightedMinMax.partial_fit_trace``), M the updates with
Delta_t <= 0 (every mistake is one), D the updates with 0 < Delta_t <= sigma_t, x_t the rows as
the learner saw them (constant feature included), y_t = (e_{y_t} - e_{r_t}) / sqrt 2::

    A_Z      = b I + sum_{t in Z} a_t x_t x_t'
    hinge(U) = sum_{t in Z} a_t max(0, 1 - y_t . U' x_t)
    Lemma 1  (fixed margin, Z = M):  M <= hinge(U) + 1/2 tr(U' A_Z U) + c log|A_Z / b|
    Theorem 1 (adaptive margin):     M <= hinge(U) + 1/2 tr(U' A_Z U) + 2 c log|A_Z / b| - D

with c = b / (2 (b - R^2)), R^2 = max_{t in Z} ||x_t||^2 (the note's b / (2 (b - 1)) for
||x_t|| <= 1): the step sum_Z sigma_t <= c log|A_Z / b| holds because sigma_t = m/(2(1-m)),
log(|A_t| / |A_{t-1}|) = -log(1 - m) >= m and 1/(1 - m) <= b / (b - R^2) for m = x' A^{-1} x
<= R^2 / b.  ``exact_sigma`` reports the bounds with sum sigma_t itself in place of that step.

One-hot label vectors (``label_encoding='one-hot'``, y_t = e_{y_t}; docs/graph.md, "The
bound with one-hot labels").  The note's proof up to its eq. (1) holds for any unit label
vectors; keeping the term ||f_t||^2 / 2 it drops, it reads, for every U::

    sum_{t in Z} (1 - f_t . y_t + ||f_t||^2 / 2 - sigma_t) <= sum_Z a_t (1 - y_t . U' x_t)
                                                              + 1/2 tr(U' A_Z U)

With y_t = e_y the round's term phi_t = 1 - f_y + ||f||^2 / 2 >= 1 - f_y + (f_y^2 + f_r^2) / 2.
On an update with Delta_t <= 0 (f_y <= f_r) its minimum is 3/4 (at f_y = f_r = 1/2); on a
correct low-confidence update (D) it is >= 1 - f_y + f_y^2 / 2 >= 1/2.  Hence::

    one-hot, fixed     M <= 4/3 (hinge1(U) + 1/2 tr(U' A_Z U) + c log|A_Z / b|)
    one-hot, adaptive  M <= 4/3 (hinge1(U) + 1/2 tr(U' A_Z U) + c log|A_Z / b|) - 2/3 D
    hinge1(U) = sum_{t in Z} a_t max(0, 1 - (U' x_t)_{y_t})

(the note's own terms: -f_t . y_t >= 0 on a mistake fails for e_y, so its constant 1 becomes
3/4, and its 2 c log on D becomes c log since phi_t >= 1/2 needs no sigma_t).

The comparator is fitted in hindsight by :func:`fit_comparator`: U = s U_0 with U_0 the
Crammer-Singer multiclass linear SVM (scikit-learn ``LinearSVC(multi_class='crammer_singer')``,
no separate intercept: the constant feature is a row of U) trained on all rows of the run, and
the scale s >= 0 minimising the right-hand side (it is convex in s; grid then bounded search).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_SQRT_HALF = np.sqrt(0.5)


@dataclass
class BoundCheck:
    """Right-hand sides of Lemma 1 / Theorem 1 beside the measured mistakes of one run."""

    mistakes: int  #: rounds with a wrong prediction
    M: int  #: updates with Delta_t <= 0
    D: int  #: updates with 0 < Delta_t <= sigma_t
    hinge: float
    trace_term: float
    logdet: float  #: log |A_Z / b|
    c: float  #: b / (2 (b - R^2))
    sum_sigma: float
    rhs: float  #: the bound as stated (Lemma 1 for a fixed-margin run, Theorem 1 otherwise)
    rhs_exact_sigma: float  #: the same with sum sigma_t in place of its log-det bound
    scale: float  #: s of U = s U_0


def augmented_rows(X, fit_intercept):
    """The rows the learner saw: dense float64, with the constant feature 1 appended."""
    import scipy.sparse as sp

    Xd = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if fit_intercept:
        Xd = np.hstack([Xd, np.ones((Xd.shape[0], 1))])
    return np.ascontiguousarray(Xd, dtype=np.float64)


def bound_terms(Xa, y_codes, trace, b, U, adaptive, label_encoding="difference"):
    """:class:`BoundCheck` of one run for the comparator U (R x K), from the definitions.

    ``Xa``: rows as seen (:func:`augmented_rows`), ``y_codes``: class indices, ``trace``: the
    dict of ``WeightedMinMax.partial_fit_trace`` (with ``pred`` as class indices or labels
    compared through ``mistakes``); ``label_encoding``: the run's (module docstring: the
    note's bounds for 'difference', the one-hot bounds for 'one-hot')."""
    if label_encoding not in ("difference", "one-hot"):
        raise ValueError(f"label_encoding must be 'difference' or 'one-hot', got "
                         f"{label_encoding!r}")  # fmt: skip
    upd = trace["update"]
    Z = upd != 0
    a = trace["a"][Z]
    XZ = Xa[Z]
    yz = y_codes[Z]
    rz = trace["rival"][Z]
    R = Xa.shape[1]
    A = b * np.eye(R) + (XZ * a[:, None]).T @ XZ
    sign, logdet = np.linalg.slogdet(A / b)
    R2 = float((XZ**2).sum(axis=1).max()) if XZ.shape[0] else 0.0
    c = b / (2.0 * (b - R2))
    trace_term = 0.5 * float(np.trace(U.T @ A @ U))
    sum_sigma = float((0.5 * (a - 1.0)).sum())
    M = int((upd == 1).sum())
    D = int((upd == 2).sum())
    if label_encoding == "one-hot":
        hinge = float((a * np.maximum(0.0, 1.0 - np.einsum("ij,ij->i", XZ, U[:, yz].T))).sum())
        base = hinge + trace_term
        rhs = 4.0 / 3.0 * (base + c * logdet) - (2.0 / 3.0 * D if adaptive else 0.0)
        exact = 4.0 / 3.0 * (base + sum_sigma) - (2.0 / 3.0 * D if adaptive else 0.0)
        return BoundCheck(
            mistakes=int(trace["mistakes"]), M=M, D=D, hinge=hinge, trace_term=trace_term,
            logdet=float(logdet), c=c, sum_sigma=sum_sigma, rhs=float(rhs),
            rhs_exact_sigma=float(exact), scale=1.0,
        )  # fmt: skip
    margins = np.einsum("ij,ij->i", XZ, U[:, yz].T) - np.einsum("ij,ij->i", XZ, U[:, rz].T)
    hinge = float((a * np.maximum(0.0, 1.0 - margins * _SQRT_HALF)).sum())
    if adaptive:
        rhs = hinge + trace_term + 2.0 * c * logdet - D
        exact = hinge + trace_term + 2.0 * sum_sigma - D
    else:
        rhs = hinge + trace_term + c * logdet
        exact = hinge + trace_term + sum_sigma
    return BoundCheck(
        mistakes=int(trace["mistakes"]), M=M, D=D, hinge=hinge, trace_term=trace_term,
        logdet=float(logdet), c=c, sum_sigma=sum_sigma, rhs=float(rhs),
        rhs_exact_sigma=float(exact), scale=1.0,
    )  # fmt: skip


def svm_direction(Xa, y_codes, n_classes, C=1.0):
    """U_0 (R x K): the Crammer-Singer linear SVM on all rows (hindsight), no intercept."""
    from sklearn.svm import LinearSVC

    U0 = np.zeros((Xa.shape[1], n_classes))
    present = np.unique(y_codes)
    if present.size < 2:
        return U0
    svm = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=C, max_iter=5000)
    svm.fit(Xa, y_codes)
    U0[:, svm.classes_] = svm.coef_.T
    return U0


def ridge_direction(Xa, y_codes, trace, b, n_classes):
    """A_Z^{-1} sum_{t in Z} a_t x_t e_{y_t}': the one-hot regression of the run's update
    rounds in hindsight (the minimiser of the one-hot bound's linear form
    sum_Z a_t (1 - e_y . U' x_t) + 1/2 tr(U' A_Z U)), a comparator for the one-hot bounds."""
    Z = trace["update"] != 0
    a = trace["a"][Z]
    XZ = Xa[Z]
    A = b * np.eye(Xa.shape[1]) + (XZ * a[:, None]).T @ XZ
    Y = np.zeros((XZ.shape[0], n_classes))
    Y[np.arange(XZ.shape[0]), y_codes[Z]] = 1.0
    return np.linalg.solve(A, (XZ * a[:, None]).T @ Y)


def fit_comparator(Xa, y_codes, trace, b, U0, adaptive, label_encoding="difference"):
    """The :class:`BoundCheck` of U = s U0 with s >= 0 minimising the right-hand side.
    ``U0``: one direction, or a list of them (the best of each, then the best of those)."""
    if isinstance(U0, (list, tuple)):
        checks = [fit_comparator(Xa, y_codes, trace, b, u, adaptive, label_encoding)
                  for u in U0]  # fmt: skip
        return min(checks, key=lambda ch: ch.rhs)
    from scipy.optimize import minimize_scalar

    def rhs(s):
        return bound_terms(Xa, y_codes, trace, b, s * U0, adaptive, label_encoding).rhs

    grid = np.concatenate([[0.0], np.logspace(-3, 3, 25)])
    vals = [rhs(s) for s in grid]
    j = int(np.argmin(vals))
    lo, hi = grid[max(j - 1, 0)], grid[min(j + 1, len(grid) - 1)]
    best_s, best_v = grid[j], vals[j]
    if hi > lo:
        res = minimize_scalar(rhs, bounds=(lo, hi), method="bounded", options={"xatol": 1e-4})
        if res.fun < best_v:
            best_s, best_v = float(res.x), float(res.fun)
    out = bound_terms(Xa, y_codes, trace, b, best_s * U0, adaptive, label_encoding)
    out.scale = float(best_s)
    return out
