"""report: a learner run over a stream, the bound of its theorem beside what it did."""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import clone

from ._stream import _augmented, _margins, _row_norms, _weights
from .copa import _copa_report
from .curves import (
    _best_scale,
    _pa1_curve,
    _pa2_curve,
    _perceptron_curve,
    _pnorm_curve,
    _winnow_curve,
)
from .dual_ascent import dual_ascent_report, is_dual_ascent
from .kernel import is_kernel, kernel_report
from .minmax import minmax_report
from .primal import _dual_exponent, batch_optimum, primal_objective
from .ranking import is_label_ranker, label_ranking_report
from .regression import is_regression, regression_report
from .structured import is_tagger, tagger_report
from .table import shown
from .tuned import is_tuned, tuned_report


def report(
    estimator, X, y, *, comparator=None, show=True, plot_to=None, X_test=None, y_test=None,
    delta=0.05, M=None,
):  # fmt: skip
    """Run ``estimator`` (a fresh clone) over the stream (X, y) in order and put the bound of
    its theorem beside what it did.

    Returns a dict with ``observed`` (prediction mistakes of the current iterate), ``bound``,
    ``quantity``, ``theorem``, ``updates`` (rounds with margin <= 0 for the conservative
    steps, or with an update), ``dual_objective``, ``primal_averaged`` (P of the averaged
    predictor, or of the last iterate without averaging), ``gap`` (their difference, >= 0 by
    weak duality), ``primal_comparator`` (P at the comparator as given, by default the batch
    optimum: P(w_avg) - primal_comparator is how far the averaged predictor is from it),
    ``curve_observed`` / ``curve_bound`` (along the
    stream), ``comparator`` (W over the augmented features) and ``estimator`` (the run).
    Prints the same as a table when ``show``; ``plot_to``: a PNG file drawn by :func:`plot`.

    Theorems by learner: Perceptron (thesis Cor. 5), PNormPerceptron (Cor. 7), PA (Crammer et
    al. 2006 Thm. 2, separable case: +inf when no comparator separates the stream), PA-I
    (Thm. 4), PA-II (Thm. 5), Winnow (thesis eq. 5.7); see the module docstring.
    :class:`onlinelearn.OnlineLearner` with the step LipschitzTuned (thesis Cor. 2 or 3) or
    LossTuned (Theorem 2): the cumulative loss against G(u) + the regret bound, see
    :mod:`onlinelearn.bounds.tuned`.  :class:`onlinelearn.WeightedMinMax`: the min-max note's
    Lemma 1 / Theorem 1 (difference labels) or their one-hot form (docs/graph.md), see
    :mod:`onlinelearn.bounds.minmax`.  KernelPerceptron and KernelPassiveAggressive: the same
    theorems in the RKHS of k + b^2, see :mod:`onlinelearn.bounds.kernel`.
    PassiveAggressiveRegressor (PA, PA-I, PA-II): the cumulative (squared) eps-insensitive
    loss against Crammer et al. 2006, Sec. 5, see :mod:`onlinelearn.bounds.regression`.

    COPA (Ralaivola 2012, Theorem 2, eq. (15)) bounds a different quantity, the confusion risk
    of the averaged hypothesis; see :func:`_copa_report` for what is observed and where.
    ``X_test, y_test`` (the held-out sample the observed value is measured on), ``delta`` and
    ``M`` (the bound on the losses) are read for COPA only.
    """
    from ..linear.copa import COPA
    from ..linear.passive_aggressive import PassiveAggressiveClassifier
    from ..linear.perceptron import Perceptron
    from ..linear.quasi_additive import PNormPerceptron, Winnow

    if isinstance(estimator, COPA):
        return _copa_report(estimator, X, y, X_test=X_test, y_test=y_test, delta=delta, M=M,
                            show=show, plot_to=plot_to)  # fmt: skip
    from ..second_order.minmax import WeightedMinMax

    if isinstance(estimator, WeightedMinMax):  # the min-max note's bounds (and one-hot's)
        if X_test is not None or y_test is not None or M is not None:
            raise ValueError("bounds.report: X_test, y_test and M are read for COPA only")
        return minmax_report(estimator, X, y, comparator=comparator, show=show, plot_to=plot_to)
    if is_tuned(estimator):  # LipschitzTuned, LossTuned: cumulative loss (thesis Sec. 3.5)
        if X_test is not None or y_test is not None or M is not None:
            raise ValueError("bounds.report: X_test, y_test and M are read for COPA only")
        return tuned_report(estimator, X, y, comparator=comparator, show=show, plot_to=plot_to)
    if X_test is not None or y_test is not None:
        raise ValueError("bounds.report: X_test, y_test are read for COPA only (the mistake "
                         "bounds count the rounds of the stream)")  # fmt: skip
    if is_regression(estimator):  # PassiveAggressiveRegressor: cumulative eps-insensitive loss
        return regression_report(estimator, X, y, comparator=comparator, show=show,
                                 plot_to=plot_to)  # fmt: skip
    if is_label_ranker(estimator):  # LabelRanker: thesis Lemma 1 + 18, see bounds.ranking
        return label_ranking_report(estimator, X, y, comparator=comparator, show=show,
                                    plot_to=plot_to)  # fmt: skip
    if is_kernel(estimator):  # KernelPerceptron, KernelPassiveAggressive: the same, in the RKHS
        return kernel_report(estimator, X, y, comparator=comparator, show=show, plot_to=plot_to)
    if is_dual_ascent(estimator):  # window steps: Sec. 5.2.2 with the PA-I / PA-II bounds
        return dual_ascent_report(estimator, X, y, comparator=comparator, show=show,
                                  plot_to=plot_to)  # fmt: skip
    if is_tagger(estimator):  # SequenceTagger 'self-tuned': thesis Theorem 7 (Hamming cost)
        return tagger_report(estimator, X, y, comparator=comparator, show=show, plot_to=plot_to)
    kinds = {Perceptron: "perceptron", Winnow: "winnow", PassiveAggressiveClassifier: "pa",
             PNormPerceptron: "pnorm"}  # fmt: skip
    kind = next((k for c, k in kinds.items() if type(estimator) is c), None)
    if kind is None:
        raise NotImplementedError(
            f"bounds.report has no theorem for {type(estimator).__name__}: it covers "
            "Perceptron, PNormPerceptron, PassiveAggressiveClassifier (PA, PA-I, PA-II), "
            "Winnow, COPA, WeightedMinMax, OnlineLearner with the LipschitzTuned or "
            "LossTuned step, KernelPerceptron, KernelPassiveAggressive, "
            "PassiveAggressiveRegressor, LabelRanker, DualAscentClassifier (window steps) and "
            "SequenceTagger (update='self-tuned'); InstanceRanker through "
            "bounds.ranking.instance_ranking_report (it needs the query ids)"
        )
    est = clone(estimator)
    if kind == "pa":
        kind = {"PA": "pa0", "PA-I": "pa", "PA-II": "pa2"}.get(est.variant)
        if kind is None:
            raise NotImplementedError(f"bounds.report: no theorem for variant {est.variant!r}")
        if getattr(est, "constraint", None) is not None:
            raise NotImplementedError("bounds.report: the PA theorems are for unprojected steps")
        if not est.margin > 0:  # PA(0) never leaves w = 0: not the theorems' step
            raise NotImplementedError(
                "bounds.report: the PA theorems are for the hinge at a margin > 0; got "
                f"margin={est.margin!r}"
            )
    if kind == "winnow" and (est.self_tuned or est.step != "conservative"):
        raise NotImplementedError("bounds.report covers Winnow with the conservative step")
    if kind == "pnorm" and est.step != "conservative":
        raise NotImplementedError("bounds.report covers PNormPerceptron with the conservative "
                                  "step (Corollary 7)")  # fmt: skip
    if getattr(est, "class_weight", None) is not None:
        raise ValueError("bounds.report: the theorems are stated for unit example weights")
    y = np.asarray(y)
    classes = np.unique(y)
    pred = est.partial_fit_predict(X, y, classes=classes)
    mis = (pred != y).astype(np.float64)
    W_avg, b = _weights(est)
    yc = np.searchsorted(est.classes_, y)
    binary = W_avg.shape[1] == 1
    Xa = _augmented(X, b)
    kappa = 1.0 if binary else 2.0
    from .._core.state import params_of

    par = params_of(*est._codes(est._n_weights()))

    gamma = est._dual_margin()
    pa_like = kind in ("pa", "pa0", "pa2")
    if comparator is None:
        if kind == "pa0":
            Cu = 1e4  # hard margin: the comparator must separate the stream
        else:
            Cu = par.eta if not pa_like else par.C
        comparator = batch_optimum(
            X, y, C=Cu, margin=gamma if pa_like else 1.0, fit_intercept=bool(b), b=b or 1.0,
            multiclass=not binary,
        )  # fmt: skip
    U = np.asarray(comparator, dtype=np.float64)
    U0 = U  # the comparator as given (the batch optimum), before the bound's rescaling
    mu = _margins(Xa, U, yc, binary)
    n_upd = int(est.n_updates_)
    on = np.ones_like(mis)  # the rounds the sums run over: all (see the module docstring)
    if kind == "perceptron":
        xn = np.sqrt(kappa) * _row_norms(Xa, 2) * on
        best = _best_scale(lambda s: _perceptron_curve(mis, np.maximum(1 - s * mu, 0) * on, xn,
                                                       s * np.linalg.norm(U)))  # fmt: skip
        theorem = "Shalev-Shwartz 2007 (thesis), Corollary 5 (Sec. 5.1.1)"
        quantity = "mistakes"
    elif kind == "pnorm":
        p = float(est._effective_p(est._n_weights()))
        q = _dual_exponent(p)
        # ||u_t||_p: x_t (one vector), or x_t and -x_t on two columns: 2^(1/p) ||x_t||_p
        xp = kappa ** (1.0 / p) * _row_norms(Xa, p) * on
        uq = float(np.sum(np.abs(U) ** q)) ** (1.0 / q)
        best = _best_scale(lambda s: _pnorm_curve(np.maximum(1 - s * mu, 0) * on, xp, s * uq, p))
        theorem = f"Shalev-Shwartz 2007 (thesis), Corollary 7 (Sec. 5.1.4), p = {p:.4g}"
        quantity = "mistakes"
    elif kind in ("pa", "pa2"):
        # PA-I's cap scales with gamma; PA-II(gamma, C) = gamma PA-II(1, C): C is not rescaled
        curve, Cb = (_pa1_curve, par.C / gamma) if kind == "pa" else (_pa2_curve, par.C)
        rn = np.sqrt(kappa) * _row_norms(Xa, 2)
        best = _best_scale(lambda s: curve(np.maximum(1 - s * mu / gamma, 0), rn,
                                           s * np.linalg.norm(U) / gamma, Cb))  # fmt: skip
        theorem = ("Crammer et al. 2006, Theorem 4 (PA-I); thesis Sec. 5.2, eq. (5.14)"
                   if kind == "pa" else "Crammer et al. 2006, Theorem 5 (PA-II)")  # fmt: skip
        quantity = "mistakes"
    elif kind == "pa0":
        # Thm. 2 needs margin_t(v) >= 1 on every round: v = u / min_t margin_t(u) for any u
        # with positive margins; candidates: the hard-margin optimum, the learner's weights
        R2 = np.maximum.accumulate(kappa * _row_norms(Xa, 2) ** 2)
        W_last = np.asarray(est._theta, dtype=np.float64)
        best = (1.0, np.full(len(y), np.inf))
        for cand in (U, W_last, W_avg):
            m = float(np.min(_margins(Xa, cand, yc, binary))) / gamma
            if m > 0:
                curve = R2 * float(np.sum(cand * cand)) / (gamma * gamma) / (m * m)
                if curve[-1] < best[1][-1]:
                    best = (1.0 / m, curve)
                    U = cand
        theorem = "Crammer et al. 2006, Theorem 2 (PA, separable case)"
        if not np.isfinite(best[1][-1]):
            theorem += ": no separating comparator found, the theorem does not apply"
        quantity = "mistakes"
    elif kind == "winnow":
        eta = par.eta
        l1 = np.abs(U).sum()
        V = U / l1 if l1 > 0 else U
        mv = _margins(Xa, V, yc, binary)
        xinf = _row_norms(Xa, np.inf) * on
        log_n = math.log(est._n_weights())
        best = None
        gmax = float(np.max(_row_norms(Xa, np.inf)))
        for s in np.linspace(0.05, 1.0, 20):
            for g in np.geomspace(1e-3, 1.0, 40) * gmax:
                curve = _winnow_curve(np.maximum(g - s * mv, 0) * on, xinf, eta, g, log_n)
                if best is None or curve[-1] < best[1][-1]:
                    best = (s, curve, g)
        U = best[0] * V
        theorem = "Shalev-Shwartz 2007 (thesis), eq. (5.7) (Sec. 5.1.2, fixed c = 1/eta)"
        quantity = "mistakes"
    if kind != "winnow":
        U = best[0] * U  # (PA: the separating candidate, rescaled to a smallest margin of 1)
    curve_bound = best[1]
    dual = float(est.dual_objective_)
    primal_avg = primal_objective(est, W_avg, Xa, yc, binary)
    # P at the comparator as given; Winnow: at the simplex point the bound used (the Euclidean
    # optimum is off the simplex); PA: at the separating comparator of the bound (margin gamma)
    U_primal = U0
    if kind == "winnow" or (kind == "pa0" and np.isfinite(curve_bound[-1])):
        U_primal = U
    out = {
        "estimator": est,
        "observed": int(mis.sum()),
        "updates": n_upd,
        "bound": float(curve_bound[-1]),
        "quantity": quantity,
        "theorem": theorem,
        "rounds": int(len(y)),
        "dual_objective": dual,
        "primal_averaged": primal_avg,
        "gap": primal_avg - dual,
        "primal_comparator": primal_objective(est, U_primal, Xa, yc, binary),
        "comparator": U,
        "curve_observed": np.cumsum(mis),
        "curve_bound": curve_bound,
    }
    return shown(out, show, plot_to)
