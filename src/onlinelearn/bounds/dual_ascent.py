"""report for :class:`onlinelearn.DualAscentClassifier`: the PA-I / PA-II mistake bounds, by the
thesis's argument that a larger dual increase keeps the bound.

The statement (Shalev-Shwartz 2007, Sec. 5.2.2, after Eq. (5.18); the general form is the
condition Eq. (3.9)/(3.10) of the framework of Fig. 3.1, Lemma 1): an update that raises the
dual by at least as much as the single-variable step on the new round's variable, Eq. (5.14)
(aggressive, alpha_t maximising D with all other variables fixed), "also achieves the regret
and mistake bounds" of that step; the row-action sweep that starts on alpha_t does too ("since
on each operation we can only increase the dual").  The thesis states it as this argument,
not as a numbered lemma.

The window steps of the learner ('last-k', 'row-action', 'ftrl'; Euclidean link, c = 1/C)
keep, in the units tau = alpha / c (``dual_objective_``)::

    D(tau) = gamma sum_i tau_i - 1/2 ||sum_i tau_i u_i||^2  [- sum_i tau_i^2 / (4C)  PA-II]
    0 <= tau_i <= C (PA-I), tau_i >= 0 (PA-II)
    P(W)   = 1/2 ||W||^2 + C sum_t [gamma - margin_t(W)]_+     [PA-II: C sum_t [.]_+^2]

with u_i = y_i x_i (two classes) or x_i on the column of y_i and -x_i on the rival r_i of
highest score at round i (K classes, ||u_i||^2 = kappa ||x_i||^2, kappa = 2): D <= P(W) for
every W (weak duality; the pair hinge of (y_i, r_i) is at most the max-rival hinge of P).

The single-variable step from the learner's state at round t (weights w_t, loss
l_t = [gamma - margin_t(w_t)]_+ of the pair (y_t, r_t)) raises D by::

    PA-I:  max_{0 <= tau <= C} tau l_t - tau^2 ||u_t||^2 / 2
    PA-II: max_{tau >= 0}      tau l_t - tau^2 (||u_t||^2 + 1/(2C)) / 2
                               = l_t^2 / (2 (||u_t||^2 + 1/(2C)))

and on a mistake l_t >= gamma, so that increase is >= gamma min(C, gamma / R^2) / 2 (PA-I) or
gamma^2 / (2 (R^2 + 1/(2C))) (PA-II).  If every round of the learner raises D at least that
much (the premise, checked per round by :func:`premise`), summing over the mistakes and weak
duality at u give, with v = u / gamma::

    PA-I:   #mistakes <= max(R^2, gamma / C) (||v||^2 + 2 (C / gamma) sum_t [1 - margin_t(v)]_+)
    PA-II:  #mistakes <= (R^2 + 1/(2C)) (||v||^2 + 2 C sum_t [1 - margin_t(v)]_+^2)

which are Crammer et al. 2006 Thm. 4 and Thm. 5 read at margin gamma as the linear entries
read them: the same curves (:func:`.curves._pa1_curve`, :func:`.curves._pa2_curve`), the same
default comparator (:func:`.primal.batch_optimum` at C, margin gamma) and scale search.

Why the premise holds for this learner (``_core/dual_window.py``): 'last-k' k = 1 is the
single-variable step itself and k = 2 the exact optimum over (t-1, t), which includes it;
'row-action', 'last-k' k > 2 and 'ftrl' take coordinate steps newest first, so their first
step is the single-variable step on the new variable (at tau_t = 0) and every later step only
raises D, even in a round stopped at ``max_sweeps``.  :func:`premise` measures it anyway.

Refused: variant 'PA' (k = 1 only, where the learner is PassiveAggressiveClassifier(variant=
'PA'): use that), the entropy and p-norm links and the growing-c steps ('self-tuned',
'strongly-convex': Theorem 6 with c_t of Eq. (5.17), or Fig. 4.1, need other curves), and
example weights.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone

from ._stream import _augmented, _margins, _row_norms, _weights
from .curves import _best_scale, _pa1_curve, _pa2_curve
from .primal import batch_optimum
from .table import shown

__all__ = ["dual_ascent_report", "is_dual_ascent", "premise"]


def is_dual_ascent(estimator):
    """True for :class:`onlinelearn.DualAscentClassifier` (any configuration: the ones without
    a theorem are refused by :func:`dual_ascent_report`)."""
    from ..dual_ascent import DualAscentClassifier

    return isinstance(estimator, DualAscentClassifier)


def _check(est):
    """The configuration's variant ('PA-I' or 'PA-II'); NotImplementedError when no theorem
    covers it."""
    from ..framework.links import Euclidean
    from ..framework.steps import FTRL, LastK, RowAction

    link, _loss, step = est._configuration()
    if not isinstance(step, (LastK, RowAction, FTRL)):
        raise NotImplementedError(
            f"bounds.report covers DualAscentClassifier's window steps ('last-k', "
            f"'row-action', 'ftrl'); step={est.step!r} grows c (thesis Theorem 6 / Fig. 4.1), "
            "whose bound is not among the report's curves"
        )
    if not isinstance(link, Euclidean):
        raise NotImplementedError(
            "bounds.report covers DualAscentClassifier on link='euclidean' only (the PA-I / "
            f"PA-II bounds); got link={est.link!r}"
        )
    if step.variant == "PA":
        raise NotImplementedError(
            "bounds.report: DualAscentClassifier(variant='PA') is k = 1, the hard-margin PA "
            "step itself: report PassiveAggressiveClassifier(variant='PA') (Crammer et al. "
            "2006 Thm. 2)"
        )
    if not est.margin > 0:
        raise NotImplementedError(
            f"bounds.report: the PA theorems are for the hinge at a margin > 0; got "
            f"margin={est.margin!r}"
        )
    if getattr(est, "class_weight", None) is not None:
        raise ValueError("bounds.report: the theorems are stated for unit example weights")
    return step.variant


def _single_step_increase(l, n2, C, variant):
    """The dual increase of the single-variable step on a new round of loss ``l`` and
    ||u_t||^2 = ``n2`` (module docstring)."""
    if variant == "PA-II":
        return l * l / (2.0 * (n2 + 0.5 / C))
    tau = min(C, l / n2) if n2 > 0 else (C if l > 0 else 0.0)
    return tau * l - 0.5 * tau * tau * n2


def premise(estimator, X, y):
    """Run a fresh clone of ``estimator`` row by row and return (increase, single): per round,
    the learner's dual increase (consecutive ``dual_objective_``) and the increase the
    single-variable step (Eq. (5.14)/(7.11)) would have made from the same state.  The bounds
    of :func:`dual_ascent_report` hold when increase >= single on every round."""
    est = clone(estimator)
    variant = _check(est)
    y = np.asarray(y)
    classes = np.unique(y)
    binary = len(classes) <= 2
    C, gamma = float(est.C), float(est.margin)
    b = float(est.intercept_scaling) if est.fit_intercept else 0.0
    Xa = _augmented(X, b)
    n2 = (1.0 if binary else 2.0) * _row_norms(Xa, 2) ** 2
    yc = np.searchsorted(classes, y)
    inc, single = np.zeros(len(y)), np.zeros(len(y))
    D0 = 0.0
    W = np.zeros((Xa.shape[1], 1 if binary else len(classes)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unconverged rounds: the premise is what is checked
        for t in range(len(y)):
            m = float(_margins(Xa[t : t + 1], W, yc[t : t + 1], binary)[0])
            single[t] = _single_step_increase(max(gamma - m, 0.0), float(n2[t]), C, variant)
            est.partial_fit(X[t : t + 1], y[t : t + 1], classes=classes)
            D1 = float(est.dual_objective_)
            inc[t], D0 = D1 - D0, D1
            W = _weights(est)[0]
    return inc, single


def dual_ascent_report(estimator, X, y, *, comparator=None, show=True, plot_to=None):
    """The entry of :func:`onlinelearn.bounds.report` for DualAscentClassifier (module
    docstring): observed mistakes beside the PA-I / PA-II bound, the kept dual D, P of the
    last weights (the learner does not average), their gap and P at the comparator."""
    est = clone(estimator)
    variant = _check(est)
    y = np.asarray(y)
    classes = np.unique(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unconverged rounds are counted in the report
        pred = est.partial_fit_predict(X, y, classes=classes)
    mis = (pred != y).astype(np.float64)
    W, b = _weights(est)
    binary = W.shape[1] == 1
    yc = np.searchsorted(est.classes_, y)
    Xa = _augmented(X, b)
    kappa = 1.0 if binary else 2.0
    C, gamma = float(est.C), float(est.margin)
    if comparator is None:
        comparator = batch_optimum(X, y, C=C, margin=gamma, fit_intercept=bool(b), b=b or 1.0,
                                   multiclass=not binary)  # fmt: skip
    U0 = np.asarray(comparator, dtype=np.float64)
    mu = _margins(Xa, U0, yc, binary)
    rn = np.sqrt(kappa) * _row_norms(Xa, 2)
    un = float(np.linalg.norm(U0))
    if variant == "PA-I":
        Ceff = C / gamma
        best = _best_scale(lambda s: _pa1_curve(np.maximum(1 - s * mu / gamma, 0), rn,
                                                s * un / gamma, Ceff))  # fmt: skip
        theorem = ("thesis Sec. 5.2.2 (Eq. 5.18: dual increase >= the single-variable "
                   "step's) with Crammer et al. 2006 Thm. 4 (PA-I)")  # fmt: skip
    else:
        best = _best_scale(lambda s: _pa2_curve(np.maximum(1 - s * mu / gamma, 0), rn,
                                                s * un / gamma, C))  # fmt: skip
        theorem = ("thesis Sec. 5.2.2 (Eq. 5.18: dual increase >= the single-variable "
                   "step's) with Crammer et al. 2006 Thm. 5 (PA-II)")  # fmt: skip
    primal = float(primal_window(W, Xa, yc, binary, C, gamma, variant))
    dual = float(est.dual_objective_)
    out = {
        "estimator": est,
        "observed": int(mis.sum()),
        "updates": int(est.n_updates_),
        "n_unconverged": int(est.n_unconverged_),
        "bound": float(best[1][-1]),
        "quantity": "mistakes",
        "theorem": theorem,
        "rounds": int(len(y)),
        "dual_objective": dual,
        "primal_averaged": primal,
        "gap": primal - dual,
        "primal_comparator": float(primal_window(U0, Xa, yc, binary, C, gamma, variant)),
        "comparator": best[0] * U0,
        "curve_observed": np.cumsum(mis),
        "curve_bound": best[1],
    }
    return shown(out, show, plot_to)


def primal_window(W, Xa, yc, binary, C, gamma, variant):
    """P(W) = 1/2 ||W||^2 + C sum_t [gamma - margin_t(W)]_+ (PA-II: squared), the problem
    whose dual the window steps keep in the units of tau (max-rival hinge for K classes); the
    Euclidean branch of :func:`.primal.primal_objective`, which reads the linear learners'
    codes that this learner does not have."""
    h = np.maximum(gamma - _margins(Xa, W, yc, binary), 0.0)
    if variant == "PA-II":
        h = h * h
    return 0.5 * float(np.sum(W * W)) + C * float(np.sum(h))
