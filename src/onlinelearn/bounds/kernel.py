"""report for the kernel online learners: the linear entries' theorems in the RKHS.

:class:`onlinelearn.KernelPerceptron` and :class:`onlinelearn.KernelPassiveAggressive` (PA,
PA-I, PA-II) run the Perceptron and PA steps in the RKHS H of k + b^2 (b =
``intercept_scaling``, 0 without intercept): their round t adds tau_t u_t with u_t = y_t
(k(x_t, .) + b^2) (binary) or (k(x_t, .) + b^2) on the column of y_t and minus it on the
max-score rival's (K classes).  The proofs of the linear theorems use only inner products, so
they hold word for word in H with::

    ||u_t||_H^2 = kappa (k(x_t, x_t) + b^2),      R = max_t ||u_t||_H  (kappa = 1, or 2)
    Perceptron  thesis Cor. 5:   #mistakes <= L + R ||u||_H sqrt(L) + R^2 ||u||_H^2
    PA          Crammer et al. 2006 Thm. 2:  #mistakes <= R^2 ||u||_H^2 if every margin >= 1
    PA-I        Crammer et al. 2006 Thm. 4:  #mistakes <= max(R^2, 1/C) (||u||_H^2 + 2 C L)
    PA-II       Crammer et al. 2006 Thm. 5:  #mistakes <= (R^2 + 1/(2C)) (||u||_H^2
                                                           + 2 C sum_t [1 - margin_t(u)]_+^2)

(L = sum_t [1 - margin_t(u)]_+ over all rounds; margin gamma != 1 read as the linear entries
do: PA-I(gamma, C) = gamma PA-I(1, C / gamma), PA-II(gamma, C) = gamma PA-II(1, C)).  The
right-hand sides are the linear entries' curves (:mod:`.curves`), unchanged.

A comparator is a function of H, u = sum_i a_ik (k(z_i, .) + b^2) per column k, given as
``(Z, A)``: rows Z (n_u, d) and coefficients A (n_u, K).  Then::

    ||u||_H^2 = sum_k A_k' (k(Z, Z) + b^2) A_k,     u(x_t) = (k(x_t, Z) + b^2) A

(T x n_u kernel values for the margins on the stream).  By default u is the batch optimum of
the same regularised problem, by :class:`onlinelearn.KernelSVC` on the stream's rows (the same
kernel and intercept convention; ``multi_class='crammer_singer'`` for K classes, whose hinge
is the max-rival one): C = the learner's C (PA-I, PA-II; C / gamma at margin 1, times gamma),
1 for the Perceptron, 1e4 for PA (hard margin: u must separate the stream; the learner's last
and averaged hypotheses are candidates too, each rescaled to a smallest margin of 1).  Then u
is rescaled by the factor of the grid that minimises the bound (:func:`.curves._best_scale`).

Certificate: the kept dual D (``dual_objective_``) of

    P(f) = 1/2 ||f||_H^2 + sum_t C_t [gamma - margin_t(f)]_+       (PA-II: squared hinge)

(C_t = C for PA-I and PA-II, 1 for the Perceptron, +inf for PA), P of the averaged hypothesis
f_avg (its support vectors and ``dual_coef_``, evaluated from kernel values), their gap, and
P at the comparator as given.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .curves import _best_scale, _pa1_curve, _pa2_curve, _perceptron_curve
from .table import shown

__all__ = ["is_kernel", "kernel_report"]

_HARD_C = 1e4  # PA (hard margin): the comparator must separate the stream


def is_kernel(estimator):
    """True for the kernel online learners this module covers, or refuses (KernelCOPA)."""
    from ..kernel_methods._online_base import KernelOnlineClassifier

    return isinstance(estimator, KernelOnlineClassifier)


def _kind(est):
    from ..kernel_methods._online import KernelPassiveAggressive, KernelPerceptron

    if type(est) is KernelPerceptron:
        return "perceptron"
    if type(est) is KernelPassiveAggressive:
        kind = {"PA": "pa0", "PA-I": "pa", "PA-II": "pa2"}.get(est.variant)
        if kind is None:
            raise NotImplementedError(f"bounds.report: no theorem for variant {est.variant!r}")
        if not est.margin > 0:  # PA(0) never leaves f = 0: not the theorems' step
            raise NotImplementedError(
                "bounds.report: the PA theorems are for the hinge at a margin > 0; got "
                f"margin={est.margin!r}"
            )
        return kind
    raise NotImplementedError(
        f"bounds.report has no theorem for {type(est).__name__}: of the kernel learners it "
        "covers KernelPerceptron and KernelPassiveAggressive (PA, PA-I, PA-II); KernelCOPA's "
        "bound (Ralaivola 2012) is covered for the linear COPA only"
    )


def _dense(Z):
    return Z.toarray() if sp.issparse(Z) else np.asarray(Z, dtype=np.float64)


class _Space:
    """The RKHS of k + b^2 on the stream: kernel values, norms, margins, P."""

    def __init__(self, est, X, yc, binary):
        self.k = est._kernel
        self.n_features = int(est.n_features_in_)
        self.b2 = float(est._b2)
        self.X = X
        self.yc = yc
        self.binary = binary

    def gram(self, A_rows, B_rows):
        return np.asarray(self.k(A_rows, B_rows), dtype=np.float64) + self.b2

    def diag(self):
        return np.asarray(self.k.diag(self.X), dtype=np.float64) + self.b2

    def norm2(self, Z, A):
        """||u||_H^2 = sum_k A_k' (k(Z, Z) + b^2) A_k."""
        if A.shape[0] == 0:
            return 0.0
        return float(np.einsum("sk,st,tk->", A, self.gram(Z, Z), A))

    def margins(self, Z, A):
        """margin_t(u): y_t u(x_t) (binary, y in {-1, +1} from the codes), or
        u_y(x_t) - max_{r != y} u_r(x_t); from the T x n_u kernel values."""
        n = self.X.shape[0]
        if A.shape[0] == 0:
            return np.zeros(n)
        S = self.gram(self.X, Z) @ A
        if self.binary:
            return np.where(self.yc == 1, 1.0, -1.0) * S[:, 0]
        sy = S[np.arange(n), self.yc]
        S2 = S.copy()
        S2[np.arange(n), self.yc] = -np.inf
        return sy - S2.max(axis=1)


def _primal(kind, C, gamma, norm2, mu):
    """P(f) = 1/2 ||f||_H^2 + sum_t C [gamma - margin_t(f)]_+ (PA-II squared; PA: +inf unless
    every margin reaches gamma, to rounding)."""
    hinge = np.maximum(gamma - mu, 0.0)
    if kind == "pa2":
        return 0.5 * norm2 + C * float(np.sum(hinge * hinge))
    if kind == "pa0":
        return 0.5 * norm2 if not (hinge > 1e-9 * gamma).any() else math.inf
    return 0.5 * norm2 + C * float(np.sum(hinge))


def kernel_batch_optimum(est, X, y, *, C, margin, multiclass):
    """(Z, A): the batch optimum of min 1/2 ||f||_H^2 + C sum_t [margin - margin_t(f)]_+ over
    the rows (X, y), by :class:`onlinelearn.KernelSVC` with the learner's kernel and intercept
    convention (f = margin f*(C / margin) at margin 1; Crammer-Singer for K classes)."""
    from ..kernel_methods._svc import KernelSVC

    svc = KernelSVC(
        kernel=est.kernel, C=C / margin,
        multi_class="crammer_singer" if multiclass else "ovr",
        fit_intercept=est.fit_intercept, intercept_scaling=est.intercept_scaling,
        tol=1e-4, max_iter=1000,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc.fit(X, y)
    Z = _dense(svc.support_vectors_)
    A = margin * np.asarray(svc.dual_coef_, dtype=np.float64).T
    if Z.shape[0] == 0:
        Z = np.zeros((0, X.shape[1]))
        A = np.zeros((0, 1 if not multiclass else len(np.unique(y))))
    return Z, A


def kernel_report(estimator, X, y, *, comparator=None, show=True, plot_to=None):
    """:func:`onlinelearn.bounds.report` for KernelPerceptron and KernelPassiveAggressive.

    The linear report's keys (``observed``, ``bound``, ``dual_objective``,
    ``primal_averaged``, ``gap``, ``primal_comparator``, the curves, ...), with ``comparator``
    the pair (Z, A) of the bound (rescaled), and the bound's terms: ``R`` (max_t ||u_t||_H),
    ``comparator_norm`` (||u||_H), ``comparator_hinge`` ([gamma - margin_t(u)]_+ per round,
    gamma the learner's margin, 1 for the Perceptron) and ``margin`` (that gamma).
    ``comparator``: a pair (Z, A) as in the module docstring, A of shape (n_u, n_columns),
    in place of the batch optimum.  Refused: class weights (the theorems are for unit
    weights), a budget that removed support vectors (the step is then not the theorem's)."""
    kind = _kind(estimator)
    if getattr(estimator, "class_weight", None) is not None:
        raise ValueError("bounds.report: the theorems are stated for unit example weights")
    est = clone(estimator)
    y = np.asarray(y)
    classes = np.unique(y)
    pred = est.partial_fit_predict(X, y, classes=classes)
    if est.n_removed_ > 0:
        raise ValueError(
            f"bounds.report: the budget removed {est.n_removed_} support vectors; the "
            "theorems are for the unbudgeted steps (a budget never reached is the same run)"
        )
    mis = (pred != y).astype(np.float64)
    yc = np.searchsorted(est.classes_, y)
    binary = bool(est._binary())
    kappa = 1.0 if binary else 2.0
    Xd = X if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    space = _Space(est, Xd, yc, binary)
    gamma = float(est._dual_margin())
    C = float(est.C) if kind in ("pa", "pa2") else (1.0 if kind == "perceptron" else math.inf)
    if comparator is None:
        Cu = {"perceptron": 1.0, "pa0": _HARD_C}.get(kind, C)
        comparator = kernel_batch_optimum(
            est, Xd, y, C=Cu, margin=1.0 if kind == "perceptron" else gamma,
            multiclass=not binary,
        )  # fmt: skip
    Z0, A0 = comparator
    Z0 = _dense(Z0)
    A0 = np.asarray(A0, dtype=np.float64)
    n_cols = est._coef.shape[1]
    if A0.ndim != 2 or A0.shape != (Z0.shape[0], n_cols):
        raise ValueError(
            f"bounds.report: a kernel comparator is (Z, A) with A of shape (n_rows of Z, "
            f"{n_cols}); got Z {Z0.shape}, A {A0.shape}"
        )
    rn = np.sqrt(kappa * space.diag())  # ||u_t||_H
    unorm0 = math.sqrt(max(space.norm2(Z0, A0), 0.0))
    mu0 = space.margins(Z0, A0)
    g = 1.0 if kind == "perceptron" else gamma  # the margin of the theorem's hinge
    Z, A = Z0, A0
    if kind == "perceptron":
        best = _best_scale(lambda s: _perceptron_curve(mis, np.maximum(1 - s * mu0, 0), rn,
                                                       s * unorm0))  # fmt: skip
        theorem = "Shalev-Shwartz 2007 (thesis), Corollary 5 (Sec. 5.1.1), in the RKHS"
    elif kind == "pa":
        Ceff = C / gamma
        best = _best_scale(lambda s: _pa1_curve(np.maximum(1 - s * mu0 / gamma, 0), rn,
                                                s * unorm0 / gamma, Ceff))  # fmt: skip
        theorem = "Crammer et al. 2006, Theorem 4 (PA-I), in the RKHS"
    elif kind == "pa2":
        best = _best_scale(lambda s: _pa2_curve(np.maximum(1 - s * mu0 / gamma, 0), rn,
                                                s * unorm0 / gamma, C))  # fmt: skip
        theorem = "Crammer et al. 2006, Theorem 5 (PA-II), in the RKHS"
    else:  # PA: Thm. 2 needs margin_t(v) >= gamma on every round, v = u gamma / min margin
        R2 = np.maximum.accumulate(rn * rn)
        best = (1.0, np.full(len(y), np.inf))
        Zs = _dense(est.support_vectors_)
        n = est._n_sv
        for Zc, Ac in ((Z0, A0), (Zs, np.array(est._coef[:n])), (Zs, est._coef_in_use())):
            mc = space.margins(Zc, Ac)
            m = float(np.min(mc)) / gamma if len(mc) else 0.0
            if m > 0:
                curve = R2 * space.norm2(Zc, Ac) / (gamma * gamma) / (m * m)
                if curve[-1] < best[1][-1]:
                    best = (1.0 / m, curve)
                    Z, A = Zc, Ac
        theorem = "Crammer et al. 2006, Theorem 2 (PA, separable case), in the RKHS"
        if not np.isfinite(best[1][-1]):
            theorem += ": no separating comparator found, the theorem does not apply"
    A = best[0] * A
    curve_bound = best[1]
    mu = space.margins(Z, A)
    unorm = math.sqrt(max(space.norm2(Z, A), 0.0))
    # the averaged hypothesis (the current one without averaging): its support vectors
    Zs = _dense(est.support_vectors_)
    A_avg = est._coef_in_use()
    primal_avg = _primal(kind, C, gamma, space.norm2(Zs, A_avg), space.margins(Zs, A_avg))
    dual = float(est.dual_objective_)
    # P at the comparator as given; PA: at the separating comparator of the bound
    if kind == "pa0" and np.isfinite(curve_bound[-1]):
        primal_u = _primal(kind, C, gamma, unorm * unorm, mu)
    else:
        primal_u = _primal(kind, C, gamma, unorm0 * unorm0, mu0)
    out = {
        "estimator": est,
        "observed": int(mis.sum()),
        "updates": int(est.n_updates_),
        "bound": float(curve_bound[-1]),
        "quantity": "mistakes",
        "theorem": theorem,
        "rounds": int(len(y)),
        "dual_objective": dual,
        "primal_averaged": primal_avg,
        "gap": primal_avg - dual,
        "primal_comparator": primal_u,
        "comparator": (Z, A),
        "curve_observed": np.cumsum(mis),
        "curve_bound": curve_bound,
        "R": float(np.max(rn)) if len(rn) else 0.0,
        "comparator_norm": unorm,
        "comparator_hinge": np.maximum(g - mu, 0.0),
        "margin": g,
    }
    return shown(out, show, plot_to)
