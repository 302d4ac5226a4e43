"""The weighted min-max learner's mistake bounds (the note's Lemma 1 and Theorem 1 for the
difference labels, and their one-hot counterparts derived in docs/graph.md), through
:func:`onlinelearn.bounds.report`.

The terms are those of :mod:`onlinelearn.second_order.bounds` (``bound_terms``); here they are
also taken along the stream, for the comparator U the final bound uses: with Z_t the update
rounds up to t, ``log|A_t / b| = sum_{s in Z_t} log a_s`` (|A_s| = a_s |A_{s-1}| since
1 + a_s x' A_{s-1}^{-1} x = a_s), ``c_t = b / (2 (b - max_{s in Z_t} ||x_s||^2))``, and the
hinge and trace sums cut at t: each prefix is a run of its own, and U is any matrix, so every
point of the curve is the theorem on that prefix.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import clone

from .primal import batch_optimum
from .table import shown

_SQRT_HALF = math.sqrt(0.5)


def _directions(Xa, yc, K, trace, b, encoding):
    """Comparator directions: the Crammer-Singer batch optimum on the rows as seen (our dual
    coordinate ascent, C = 1, the constant feature a row of U), and for one-hot labels the
    hindsight ridge regression of the run (``second_order.bounds.ridge_direction``)."""
    from ..second_order.bounds import ridge_direction

    dirs = []
    if np.unique(yc).size >= 2:
        W = batch_optimum(Xa, yc, C=1.0, margin=1.0, fit_intercept=False, b=1.0,
                          multiclass=K > 2)  # fmt: skip
        if W.shape[1] == 1:  # two classes: one vector w, as the columns (-w/2, w/2)
            W = np.hstack([-W / 2, W / 2])
        dirs.append(W)  # (every class of the run is in y: classes = unique(y))
    if encoding == "one-hot":
        dirs.append(ridge_direction(Xa, yc, trace, b, K))
    return dirs or [np.zeros((Xa.shape[1], K))]


def _curve(Xa, yc, trace, b, U, adaptive, encoding):
    """The right-hand side at every prefix for the comparator U (module docstring)."""
    upd = trace["update"]
    Zr = upd != 0
    a = np.where(Zr, trace["a"], 0.0)
    XU = Xa @ U
    n = len(yc)
    if encoding == "one-hot":
        m = XU[np.arange(n), yc]
    else:
        rv = np.where(trace["rival"] >= 0, trace["rival"], 0)
        m = (XU[np.arange(n), yc] - XU[np.arange(n), rv]) * _SQRT_HALF
    hinge = np.cumsum(a * np.maximum(0.0, 1.0 - m))
    trace_term = 0.5 * (b * float(np.sum(U * U)) + np.cumsum(a * np.sum(XU * XU, axis=1)))
    logdet = np.cumsum(np.where(Zr, np.log(np.where(Zr, trace["a"], 1.0)), 0.0))
    R2 = np.maximum.accumulate(np.where(Zr, np.sum(Xa * Xa, axis=1), 0.0))
    c = b / (2.0 * (b - R2))
    D = np.cumsum(upd == 2)
    if encoding == "one-hot":
        return 4.0 / 3.0 * (hinge + trace_term + c * logdet) - (2.0 / 3.0 * D if adaptive else 0)
    if adaptive:
        return hinge + trace_term + 2.0 * c * logdet - D
    return hinge + trace_term + c * logdet


def minmax_report(estimator, X, y, *, comparator=None, show=True, plot_to=None):
    """:func:`onlinelearn.bounds.report` for :class:`onlinelearn.WeightedMinMax` (full
    covariance, no queries): its mistakes against the note's Lemma 1 (fixed margin) or
    Theorem 1 (adaptive) for ``label_encoding='difference'``, or the one-hot bounds of
    docs/graph.md.  Extra keys: ``M``, ``D`` (updates with Delta <= 0, and correct ones),
    ``bound_exact_sigma`` (sum sigma_t in place of its log-det bound), ``check`` (the
    :class:`~onlinelearn.second_order.bounds.BoundCheck`), ``trace`` (the run's
    ``partial_fit_trace``)."""
    from ..second_order.bounds import augmented_rows, fit_comparator

    est = clone(estimator)
    if est.covariance != "full":
        raise NotImplementedError(
            "bounds.report: the min-max bounds are for the full matrix A "
            "(covariance='full'); the diagonal one is not covered"
        )
    if est.query is not None:
        raise NotImplementedError("bounds.report: the min-max bounds count every round's "
                                  "update; selective sampling (query) is not covered")  # fmt: skip
    y = np.asarray(y)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError("bounds.report(WeightedMinMax): needs at least two classes")
    trace = est.partial_fit_trace(X, y, classes=classes)
    b = float(est.b_)
    Xa = augmented_rows(X, bool(est.fit_intercept))
    yc = np.searchsorted(est.classes_, y)
    K = len(est.classes_)
    adaptive = est.margin == "adaptive"
    enc = est.label_encoding
    if comparator is None:
        dirs = _directions(Xa, yc, K, trace, b, enc)
    else:
        dirs = [np.asarray(comparator, dtype=np.float64)]
    checks = [fit_comparator(Xa, yc, trace, b, d, adaptive, enc) for d in dirs]
    i = int(np.argmin([ch.rhs for ch in checks]))
    chk, U = checks[i], checks[i].scale * dirs[i]
    curve = _curve(Xa, yc, trace, b, U, adaptive, enc)
    if not math.isclose(curve[-1], chk.rhs, rel_tol=1e-7, abs_tol=1e-7):
        raise RuntimeError(
            f"bounds.report(WeightedMinMax): the bound along the stream ends at {curve[-1]!r}, "
            f"the bound from A_Z at {chk.rhs!r}: log|A_Z / b| != sum log a_t, a_t is wrong"
        )
    if enc == "one-hot":
        theorem = ("min-max note, Lemma 1" if not adaptive else "min-max note, Theorem 1") + (
            ", redone for one-hot labels (docs/graph.md): 4/3 (hinge1 + 1/2 tr(U'AU) + "
            "c log|A/b|)" + (" - 2/3 D" if adaptive else ""))  # fmt: skip
    else:
        theorem = ("min-max note, Lemma 1 (fixed margin)" if not adaptive
                   else "min-max note, Theorem 1 (adaptive margin)")  # fmt: skip
    mis = (trace["pred"] != y).astype(np.float64)
    out = {
        "estimator": est,
        "observed": int(mis.sum()),
        "updates": int(est.n_updates_),
        "M": chk.M,
        "D": chk.D,
        "bound": float(chk.rhs),
        "bound_exact_sigma": float(chk.rhs_exact_sigma),
        "quantity": "mistakes",
        "theorem": theorem,
        "rounds": int(len(y)),
        "dual_objective": math.nan,
        "primal_averaged": math.nan,
        "gap": math.nan,
        "primal_comparator": math.nan,
        "comparator": U,
        "check": chk,
        "trace": trace,
        "curve_observed": np.cumsum(mis),
        "curve_bound": curve,
    }
    return shown(out, show, plot_to)
