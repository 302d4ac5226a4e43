"""The thesis's bounds as certificates: observed against bound on a stream, and the duality gap.

:func:`report` runs a learner over a stream (X, y) in the given order (one
``partial_fit_predict`` call on a fresh clone) and returns, beside the quantity a theorem
bounds (mistakes), the bound that theorem gives for a comparator u, the dual objective the
learner kept (``dual_objective_``), the primal value of its averaged predictor on the same
regularised problem and their gap ``primal - dual >= 0`` (weak duality: an anytime
certificate of how far the averaged predictor is from the batch optimum of that problem).

Bounds (u any comparator; L(u) = sum of the comparator's hinge losses; every right-hand side
grows with L and X, so sums over more rounds, or a larger X, give valid bounds too)::

    Perceptron  thesis Cor. 5:     |M| <= L + X ||u|| sqrt(L) + X^2 ||u||^2,
                L = sum_{t in M} [1 - margin_t(u)]_+,  X = max_{t in M} ||u_t||_2
    PA-I        Crammer et al. 2006, Thm. 4 (thesis Sec. 5.2, eq. 5.14):
                #mistakes <= max(R^2, 1/C) (||u||^2 + 2 C sum_t [1 - margin_t(u)]_+),
                R = max_t ||u_t||_2 (margin gamma != 1: PA-I(gamma, C) = gamma PA-I(1, C/gamma))
    Winnow      thesis eq. (5.7) at the fixed c = 1/eta (Sec. 5.1.2):
                gamma |M| <= log(n) / eta + eta X^2 |M| / 2 + sum_{t in M} [gamma - margin_t(u)]_+
                for u on the simplex of the n (doubled, when balanced) weights, X = max ||u_t||_inf
    p-norm      thesis Cor. 7 (Sec. 5.1.4), q = p / (p - 1), norms over all the weights:
    Perceptron  |M| <= L + X ||u||_q sqrt((p-1) L) + (p-1) X^2 ||u||_q^2,  X = max ||u_t||_p
    PA          Crammer et al. 2006, Thm. 2 (separable case): if margin_t(u) >= 1 on every
                round, sum_t loss_t^2 <= R^2 ||u||^2, hence #mistakes <= R^2 ||u||^2
                (a mistake has loss >= 1; PA(gamma) = gamma PA(1), so the margin-1 reading holds)
    PA-II       Crammer et al. 2006, Thm. 5: sum_t loss_t^2 <= (R^2 + 1/(2C)) (||u||^2
                + 2 C sum_t [1 - margin_t(u)]_+^2), hence #mistakes <= the same
                (PA-II(gamma, C) = gamma PA-II(1, C): C is not rescaled, unlike PA-I)
    COPA        Ralaivola 2012, Theorem 2, eq. (15): with probability 1 - delta,
                ||C_l(h_bar)|| <= ||C_hat_{l,y}(h, X)|| + M sqrt(2Q sum_p 1/T_p log(Q/delta)),
                h_bar = (1/T) sum_{t<T} h_t, the losses of eq. (16); see :func:`report`

Here u_t is the round's direction: y_t x_t (one weight vector) or x_t on the column of y_t and
-x_t on the max-score rival's (K columns, so ||u_t||_2 = sqrt(2) ||x_t||), x_t including the
intercept feature of value b.  M is the set of rounds on which the learner's margin was <= 0
(its updates for the conservative steps): the prediction mistakes and the ties, so the
prediction mistakes reported as ``observed`` are at most |M|.  The sums and maxima are taken
over all rounds, not over M only: the right-hand sides grow with them, so the bound stays
valid, and it says something.  With sums over M alone, u = 0 gives |M| <= |M| and the best
scale of u tends to 0: the bound then sits on the observed curve and certifies nothing.

Comparator: by default the batch optimum of the same regularised problem, solved by our dual
coordinate ascent (:class:`onlinelearn.DualCoordinateSVC`: binary hinge, or Crammer-Singer,
which is the max-rival multiclass hinge), then rescaled by the factor that minimises the bound
(the bounds hold for every u, so the minimum over a grid of scales is a bound).  For Winnow the
comparator must lie on the simplex: the SVM optimum's direction, normalised to ||u||_1 = 1 and
scaled into the l1 ball, with gamma chosen on a grid.  For PA (hard margin) the comparator
must separate the stream: the candidates are the hard-margin batch optimum (C = 1e4) and the
learner's own last and averaged weights, each rescaled to a smallest margin of 1; if none has
a positive margin on every round the theorem does not apply and the bound is +inf.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq
from sklearn.base import clone

__all__ = ["entropy_complexity", "plot", "primal_objective", "report"]

_SCALES = np.geomspace(1e-3, 1e3, 121)


# ---------------------------------------------------------------------- the stream
def _augmented(X, b):
    """X with the intercept column of value b (CSR or dense, float64)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if b:
            X = sp.hstack([X, sp.csr_matrix(np.full((X.shape[0], 1), b))], format="csr")
        return X
    X = np.asarray(X, dtype=np.float64)
    return np.hstack([X, np.full((X.shape[0], 1), b)]) if b else X


def _row_norms(Xa, order):
    if sp.issparse(Xa):
        if order == 2:
            return np.sqrt(np.asarray(Xa.multiply(Xa).sum(axis=1)).ravel())
        return np.asarray(abs(Xa).max(axis=1).todense()).ravel()
    return np.linalg.norm(Xa, ord=order, axis=1)


def _margins(Xa, W, yc, binary):
    """margin_t(W): y <w, x> (W of one column, y in {-1, +1} from the codes), or
    s_y - max_{r != y} s_r."""
    S = np.asarray(Xa @ W)
    if binary:
        return np.where(yc == 1, 1.0, -1.0) * S[:, 0]
    n = S.shape[0]
    sy = S[np.arange(n), yc]
    S2 = S.copy()
    S2[np.arange(n), yc] = -np.inf
    return sy - S2.max(axis=1)


def _weights(est):
    """(W over the augmented features (R, K), b): coef_ and intercept_ / b (the averaged
    predictor when the learner averages)."""
    b = float(est._intercept_value())
    W = np.asarray(est.coef_, dtype=np.float64).T.copy()
    if b:
        W = np.vstack([W, np.asarray(est.intercept_, dtype=np.float64)[None, :] / b])
    return W, b


# ---------------------------------------------------------------------- complexities
def entropy_complexity(v, n, balanced=True):
    """f(v) = min sum_i w_i log(n w_i) over the w on the simplex of n weights that represent v
    (balanced: w = [w+, w-] with w+ - w- = v, n counting both halves; else w = v).

    The minimiser is w+-_j = (+-v_j + sqrt(v_j^2 + 4 a^2)) / 2 with a >= 0 the root of
    sum_j sqrt(v_j^2 + 4 a^2) = 1 (KKT: w+_j w-_j = a^2); +inf when ||v||_1 > 1."""
    v = np.asarray(v, dtype=np.float64).ravel()
    if not balanced:
        if (v < -1e-12).any() or abs(v.sum() - 1.0) > 1e-9:
            return math.inf
        w = v[v > 0]
        return float(np.sum(w * np.log(n * w)))
    l1 = np.abs(v).sum()
    if l1 > 1.0 + 1e-9:
        return math.inf
    pairs = max(v.size, 1)  # each v_j has two weights, w+_j and w-_j
    if l1 >= 1.0:
        a = 0.0
    else:
        hi = 0.5 / pairs + 1.0
        a = brentq(lambda a: np.sqrt(v * v + 4 * a * a).sum() - 1.0, 0.0, hi, xtol=1e-300,
                   rtol=1e-15)  # fmt: skip
    r = np.sqrt(v * v + 4 * a * a)
    out = 0.0
    for w in ((r + v) / 2, (r - v) / 2):
        w = w[w > 0]
        out += float(np.sum(w * np.log(n * w)))
    return out


def _config(est):
    from ._core import links as L
    from ._core import steps as S

    link, loss, step = est._config()
    return link.code, est._step_code(), L, S


def primal_objective(est, W, Xa, yc, binary):
    """P(W) = f(W) + sum_t C_t loss_t(W): the problem whose dual ``dual_objective_`` keeps
    (see its docstring), over the rounds (Xa, yc) with unit example weights."""
    code, step, L, S = _config(est)
    ip, fp = est._codes(est._n_weights())
    from ._core.state import FP_C, FP_ETA

    gamma = est._dual_margin()
    if step == S.CONSERVATIVE:
        C = float(fp[FP_ETA])
    elif step == S.PA:
        C = math.inf
    else:
        C = float(fp[FP_C])
    hinge = np.maximum(gamma - _margins(Xa, W, yc, binary), 0.0)
    if code == L.EUCLID:
        f = 0.5 * float(np.sum(W * W))
    elif code == L.ENTROPY:
        f = entropy_complexity(W, est._n_weights(), bool(est._balanced_flag()))
    elif code == L.PNORM:  # f(w) = ||w||_q^2 / (2 (q - 1)), thesis Sec. 5.1.4
        q = _dual_exponent(est._effective_p(est._n_weights()))
        f = float(np.sum(np.abs(W) ** q)) ** (2.0 / q) / (2.0 * (q - 1.0))
    else:
        return math.nan
    if step == S.PA2:
        return f + C * float(np.sum(hinge * hinge))
    if math.isinf(C):  # hard margin: +inf unless every margin reaches gamma (to rounding)
        return f if not (hinge > 1e-9 * gamma).any() else math.inf
    return f + C * float(np.sum(hinge))


# ---------------------------------------------------------------------- comparator
def batch_optimum(X, y, *, C, margin, fit_intercept, b, multiclass, random_state=0):
    """The batch optimum of min 1/2 ||W||^2 + C sum_t [margin - margin_t(W)]_+ (binary hinge,
    or the max-rival multiclass hinge = Crammer-Singer), by :class:`DualCoordinateSVC`
    (margin gamma: W* = gamma W*(C / gamma) at margin 1).  W over the augmented features."""
    from .svm import DualCoordinateSVC

    svc = DualCoordinateSVC(
        C=C / margin, multi_class="crammer_singer" if multiclass else "ovr",
        fit_intercept=fit_intercept, intercept_scaling=b if fit_intercept else 1.0,
        tol=1e-4, max_iter=300, random_state=random_state,
    )  # fmt: skip
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc.fit(X, y)
    W = np.asarray(svc.coef_, dtype=np.float64).T
    if fit_intercept:
        W = np.vstack([W, np.asarray(svc.intercept_, dtype=np.float64)[None, :] / b])
    return margin * W


# ---------------------------------------------------------------------- bounds
def _perceptron_curve(mis, hinge, xn, unorm):
    L = np.cumsum(hinge)
    X = np.maximum.accumulate(xn)
    return L + X * unorm * np.sqrt(L) + X * X * unorm * unorm


def _pa1_curve(hinge, rn, unorm, Ceff):
    R2 = np.maximum.accumulate(rn * rn)
    return np.maximum(R2, 1.0 / Ceff) * (unorm * unorm + 2.0 * Ceff * np.cumsum(hinge))


def _pnorm_curve(hinge, xp, unorm_q, p):
    """Cor. 7: L + X ||u||_q sqrt((p-1) L) + (p-1) X^2 ||u||_q^2 along the stream."""
    L = np.cumsum(hinge)
    X = np.maximum.accumulate(xp)
    return L + X * unorm_q * np.sqrt((p - 1.0) * L) + (p - 1.0) * X * X * unorm_q * unorm_q


def _pa2_curve(hinge, rn, unorm, C):
    """Crammer et al. 2006 Thm. 5: (R^2 + 1/(2C)) (||u||^2 + 2 C sum [1 - margin(u)]_+^2)."""
    R2 = np.maximum.accumulate(rn * rn)
    return (R2 + 0.5 / C) * (unorm * unorm + 2.0 * C * np.cumsum(hinge * hinge))


def _dual_exponent(p):
    return p / (p - 1.0)


def _winnow_curve(hinge, xinf, eta, gamma, log_n):
    X = np.maximum.accumulate(xinf)
    den = gamma - eta * X * X / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (log_n / eta + np.cumsum(hinge)) / den
    return np.where(den > 0, out, np.inf)


def _best_scale(curve_of):
    """(s, curve) for the scale s of the comparator in ``_SCALES`` whose bound ends lowest: the
    bounds hold for every u, so their minimum over scales is a bound."""
    best = None
    for s in _SCALES:
        curve = curve_of(s)
        if best is None or curve[-1] < best[1][-1]:
            best = (s, curve)
    return best


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

    COPA (Ralaivola 2012, Theorem 2, eq. (15)) bounds a different quantity, the confusion risk
    of the averaged hypothesis; see :func:`_copa_report` for what is observed and where.
    ``X_test, y_test`` (the held-out sample the observed value is measured on), ``delta`` and
    ``M`` (the bound on the losses) are read for COPA only.
    """
    from .linear.copa import COPA
    from .linear.passive_aggressive import PassiveAggressiveClassifier
    from .linear.perceptron import Perceptron
    from .linear.quasi_additive import PNormPerceptron, Winnow

    if isinstance(estimator, COPA):
        return _copa_report(estimator, X, y, X_test=X_test, y_test=y_test, delta=delta, M=M,
                            show=show, plot_to=plot_to)  # fmt: skip
    if X_test is not None or y_test is not None:
        raise ValueError("bounds.report: X_test, y_test are read for COPA only (the mistake "
                         "bounds count the rounds of the stream)")  # fmt: skip
    kinds = {Perceptron: "perceptron", Winnow: "winnow", PassiveAggressiveClassifier: "pa",
             PNormPerceptron: "pnorm"}  # fmt: skip
    kind = next((k for c, k in kinds.items() if type(estimator) is c), None)
    if kind is None:
        raise NotImplementedError(
            f"bounds.report has no theorem for {type(estimator).__name__}: it covers "
            "Perceptron, PNormPerceptron, PassiveAggressiveClassifier (PA, PA-I, PA-II), "
            "Winnow and COPA"
        )
    est = clone(estimator)
    if kind == "pa":
        kind = {"PA": "pa0", "PA-I": "pa", "PA-II": "pa2"}.get(est.variant)
        if kind is None:
            raise NotImplementedError(f"bounds.report: no theorem for variant {est.variant!r}")
        if getattr(est, "constraint", None) is not None:
            raise NotImplementedError("bounds.report: the PA theorems are for unprojected steps")
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
    ip, fp = est._codes(est._n_weights())
    from ._core.state import FP_C, FP_ETA

    gamma = est._dual_margin()
    pa_like = kind in ("pa", "pa0", "pa2")
    if comparator is None:
        if kind == "pa0":
            Cu = 1e4  # hard margin: the comparator must separate the stream
        else:
            Cu = float(fp[FP_ETA]) if not pa_like else float(fp[FP_C])
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
    elif kind == "pa":
        Ceff = float(fp[FP_C]) / gamma
        rn = np.sqrt(kappa) * _row_norms(Xa, 2)
        best = _best_scale(lambda s: _pa1_curve(np.maximum(1 - s * mu / gamma, 0), rn,
                                                s * np.linalg.norm(U) / gamma, Ceff))  # fmt: skip
        theorem = "Crammer et al. 2006, Theorem 4 (PA-I); thesis Sec. 5.2, eq. (5.14)"
        quantity = "mistakes"
    elif kind == "pa2":
        C2 = float(fp[FP_C])  # PA-II(gamma, C) = gamma PA-II(1, C): C is not rescaled
        rn = np.sqrt(kappa) * _row_norms(Xa, 2)
        best = _best_scale(lambda s: _pa2_curve(np.maximum(1 - s * mu / gamma, 0), rn,
                                                s * np.linalg.norm(U) / gamma, C2))  # fmt: skip
        theorem = "Crammer et al. 2006, Theorem 5 (PA-II)"
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
        eta = float(fp[FP_ETA])
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
    if show:
        print(format_table([out]))
    if plot_to is not None:
        plot(out, plot_to)
    return out


def _copa_report(estimator, X, y, *, X_test, y_test, delta, M, show, plot_to, n_points=60):
    """COPA paper (Ralaivola 2012), Theorem 2, eq. (15), for one pass over (X, y) in order.

    With h_t the hypothesis after t rounds (h_0 = 0, weights W_t and intercepts c_t) and COPA's
    convex losses l_{q|p}(h, x) = [<w_q, x> + c_q + 1/(Q-1)]_+ (eq. (16)), with probability
    1 - delta over the stream::

        ||C_l(h_bar)|| <= ||C_hat_{l,y}(h, X)|| + M sqrt(2Q sum_p (1/T_p) log(Q/delta)),
        h_bar = (1/T) sum_{t=0}^{T-1} h_t,
        C_hat[p, q] = (1/T_p) sum_{t: y_t = p} l_{q|p}(h_{t-1}, x_t)      (Definition 4)

    (:func:`onlinelearn.metrics.confusion_risk_bound`, form 'stated').  What is computed:

    * ``bound``: the right-hand side, from the losses of h_{t-1} on x_t along the run (the
      estimator is cloned with ``average=True`` and fed one row at a time);
    * ``M``: as given, else the Cauchy-Schwarz bound on the points at hand,
      ``max_{t<T} max_q (||w_q^t|| R + |c_q^t|) + 1/(Q-1)``, R the largest ||x|| of X and
      X_test: it bounds every loss of every h_t, and of h_bar, on these points (as
      :func:`onlinelearn.metrics.averaged_confusion_bound`; ``||w_q^t||`` is tracked exactly
      from the coordinates each round changes);
    * ``observed``: ``||C_l(h_bar)||``, the per-class mean losses of h_bar, on
      ``(X_test, y_test)`` when given (a held-out estimate of the confusion risk of
      Definition 1, which the theorem bounds); without them, on the stream (X, y) itself, an
      in-sample value that is *not* independent of the hypotheses (``observed_on`` says which);
    * ``observed_01``: ``||C(h_bar)||`` of h_bar's predictions on the same rows (what the paper
      reports; ``observed_01 <= (Q-1) observed`` since COPA's columns sum to zero);
    * h_bar from the clone's uniform average of W_1..W_T (Algorithm 1's; the clone has
      ``average_power=0``) minus W_T / T;
    * the curves at ``n_points`` rounds along the stream (``curve_rounds``): the theorem applied
      to each prefix (its own M, T_p and h_bar) against the observed value of that prefix's h_bar.

    There is no dual for COPA's loss: ``dual_objective``, ``primal_averaged``, ``gap`` and
    ``primal_comparator`` are NaN.
    """
    from .metrics import (
        confusion_operator_norm,
        confusion_risk_bound,
        hinge_confusion_losses,
        online_confusion_risk,
        operator_norm,
    )

    if (X_test is None) != (y_test is None):
        raise ValueError("bounds.report(COPA): give both X_test and y_test, or neither")
    if not (0 < delta <= 1):
        raise ValueError(f"delta must be in (0, 1], got {delta!r}")
    if M is not None and not (np.isfinite(M) and M > 0):
        raise ValueError(f"M must be a positive finite number, got {M!r}")
    y = np.asarray(y)
    held_out = X_test is not None
    if held_out:
        y_test = np.asarray(y_test)
        XE, yE = X_test, y_test
        labels = np.unique(np.concatenate([y, y_test]))
    else:
        XE, yE = X, y
        labels = np.unique(y)
    Q = labels.size
    T = len(y)
    if Q < 2 or T == 0:
        raise ValueError("bounds.report(COPA): Theorem 2 needs a non-empty stream and Q >= 2")
    est = clone(estimator).set_params(average=True)
    if "average_power" in est.get_params():
        # Theorem 2's h_bar is the uniform average (the identity below reads it from U)
        est.set_params(average_power=0.0)
    if not sp.issparse(X):
        X = np.asarray(X)
    if not sp.issparse(XE):
        XE = np.asarray(XE, dtype=np.float64)
    Xs = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, np.float64)
    d = Xs.shape[1]
    R = float(max(_row_norms(Xs, 2).max(), _row_norms(_augmented(XE, 0), 2).max()))
    yc = np.searchsorted(labels, y)
    ycE = np.searchsorted(labels, yE)
    margin = 1.0 / (Q - 1)
    losses = np.zeros((T, Q))
    lip = np.zeros(T)  # max over s <= t and q of ||w_q^s|| R + |c_q^s|
    sq = np.zeros(Q)  # ||w_q^t||^2 over the d features (not the intercept)
    stops = np.unique(np.linspace(1, T, min(n_points, T)).round().astype(np.int64))
    c_obs, c_bnd, c_01, pieces = [], [], [], None
    cur = 0.0
    b = 0.0
    for t in range(T):
        if sp.issparse(Xs):
            lo, hi = Xs.indptr[t], Xs.indptr[t + 1]
            idx, val = Xs.indices[lo:hi], Xs.data[lo:hi]
        else:
            idx = np.flatnonzero(Xs[t])
            val = Xs[t, idx]
        if t == 0:  # h_0 = 0
            old = np.zeros((idx.size, Q))
            c = np.zeros(Q)
        else:  # h_t: W = theta on the Euclidean link, the intercept c = b theta[d]
            old = np.asarray(est._theta[idx], dtype=np.float64)
            c = b * np.asarray(est._theta[d], dtype=np.float64) if b else np.zeros(Q)
        losses[t] = hinge_confusion_losses((val @ old + c)[None, :], yc[t : t + 1])[0]
        cur = max(cur, float(np.max(np.sqrt(np.maximum(sq, 0.0)) * R + np.abs(c))))
        lip[t] = cur
        est.partial_fit(X[t : t + 1], y[t : t + 1], classes=labels)
        b = float(est._intercept_value())
        new = np.asarray(est._theta[idx], dtype=np.float64)
        sq += np.sum(new * new - old * old, axis=0)
        if t + 1 in stops:
            n = t + 1
            th = np.asarray(est._theta, dtype=np.float64)
            W_bar = np.asarray(est.coef_, dtype=np.float64) - th[:d].T / n
            c_bar = np.asarray(est.intercept_, dtype=np.float64) - (b * th[d] if b else 0) / n
            S = np.asarray(XE @ W_bar.T).reshape(-1, Q) + c_bar
            obs = operator_norm(online_confusion_risk(yE, hinge_confusion_losses(S, ycE),
                                                      labels))  # fmt: skip
            C_hat = online_confusion_risk(y[:n], losses[:n], labels)
            Mn = float(M) if M is not None else lip[n - 1] + margin
            res = confusion_risk_bound(C_hat, np.bincount(yc[:n], minlength=Q), M=Mn,
                                       delta=delta)  # fmt: skip
            c_obs.append(obs)
            c_bnd.append(res.bound)
            if n == T:
                pieces = (res, Mn, S)
                c_01 = confusion_operator_norm(yE, labels[np.argmax(S, axis=1)], labels=labels)
    # exact norms at the end: the tracked ones must agree (a check of the bookkeeping)
    th = np.asarray(est._theta, dtype=np.float64)
    exact = np.sum(th[:d] ** 2, axis=0)
    if not np.allclose(sq, exact, rtol=1e-8, atol=1e-10 * max(1.0, float(exact.max()))):
        raise RuntimeError("bounds.report(COPA): tracked weight norms drifted from the weights")
    res, Mn, S = pieces
    loss_max = float(max(losses.max(), hinge_confusion_losses(S, ycE).max()))
    on = (f"held-out (X_test, y_test), {len(yE)} rows" if held_out
          else f"the stream (X, y) itself, {T} rows: in-sample, not held-out")  # fmt: skip
    out = {
        "estimator": est,
        "observed": float(c_obs[-1]),
        "observed_on": on,
        "observed_01": float(c_01),
        "bound": float(c_bnd[-1]),
        "empirical_norm": float(res.empirical_norm),
        "deviation": float(res.deviation),
        "M": Mn,
        "M_given": M is not None,
        "loss_max": loss_max,
        "delta": float(delta),
        "quantity": "confusion risk norm ||C_l(h_bar)||",
        "theorem": f"Ralaivola 2012 (COPA paper), Theorem 2, eq. (15), delta = {delta:g}",
        "rounds": T,
        "mistakes": int(est.n_mistakes_),
        "updates": int(est.n_updates_),
        "dual_objective": math.nan,
        "primal_averaged": math.nan,
        "gap": math.nan,
        "primal_comparator": math.nan,
        "comparator": None,
        "curve_rounds": stops,
        "curve_observed": np.asarray(c_obs),
        "curve_bound": np.asarray(c_bnd),
    }
    if show:
        print(format_table([out]))
        print(f"observed on {on}; bound = ||C_hat|| {res.empirical_norm:.4g} + deviation "
              f"{res.deviation:.4g} (M = {Mn:.4g}, largest loss met {loss_max:.4g}); "
              f"||C(h_bar)|| = {c_01:.4g}")  # fmt: skip
    if plot_to is not None:
        plot(out, plot_to)
    return out


def format_table(reports, names=None):
    """The reports as a Markdown table (observed, bound, dual, primal of the averaged
    predictor, gap, primal of the comparator u*)."""
    head = ("| learner | rounds | quantity | observed | bound | dual D | P(w_avg) | gap "
            "| P(u*) | theorem |")  # fmt: skip
    lines = [head, "|" + "---|" * 10]
    for i, r in enumerate(reports):
        name = names[i] if names else type(r["estimator"]).__name__
        lines.append(
            f"| {name} | {r['rounds']} | {r['quantity']} | {_num(r['observed'])} "
            f"| {r['bound']:.6g} "
            f"| {r['dual_objective']:.6g} | {r['primal_averaged']:.6g} | {r['gap']:.6g} "
            f"| {r['primal_comparator']:.6g} | {r['theorem']} |"
        )
    return "\n".join(lines)


def _num(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def plot(result, path):
    """Draw observed and bound along the stream into ``path`` (PNG); needs matplotlib (the
    optional extra ``[plot]``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "bounds.plot needs matplotlib: pip install 'onlinelearn[plot]'"
        ) from exc
    t = result.get("curve_rounds")
    if t is None:
        t = np.arange(1, len(result["curve_observed"]) + 1)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(t, result["curve_observed"], label=f"observed {result['quantity']}")
    ax.plot(t, result["curve_bound"], label="bound")
    if result["quantity"] == "mistakes":
        ax.plot(t, t, ":", color="gray", label="t (every round a mistake)")
    ax.set_xlabel("round t")
    ax.set_ylabel(result["quantity"])
    ax.set_yscale("log")
    ax.set_title(f"{type(result['estimator']).__name__}: {result['theorem']}", fontsize=8)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


_LEARNERS = {
    "perceptron": lambda: _ol().Perceptron(),
    "pa1": lambda: _ol().PassiveAggressiveClassifier(variant="PA-I", C=0.1),
    "winnow": lambda: _ol().Winnow(eta=0.5),
    "copa": lambda: _ol().COPA(),
    "pnorm": lambda: _ol().PNormPerceptron(),
    "pa": lambda: _ol().PassiveAggressiveClassifier(variant="PA"),
    "pa2": lambda: _ol().PassiveAggressiveClassifier(variant="PA-II", C=0.1),
}


def _ol():
    import onlinelearn

    return onlinelearn


def main(argv=None):
    """``python -m onlinelearn.bounds DATASET [--learner perceptron|pnorm|pa|pa1|pa2|winnow|copa]
    [--rows N] [--seed S] [--plot FILE.png]``: :func:`report` on a shared data set (its
    training split; N rows drawn at random with seed S, in that order).  COPA's observed
    value is measured on N rows of the test split drawn the same way (the training split's
    other rows for the sets without one)."""
    import argparse

    from .datasets import load_shared

    ap = argparse.ArgumentParser(prog="python -m onlinelearn.bounds", description=main.__doc__)
    ap.add_argument("dataset")
    ap.add_argument("--learner", choices=sorted(_LEARNERS), default="perceptron")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default=None, metavar="FILE.png")
    args = ap.parse_args(argv)
    X, y = load_shared(args.dataset)
    perm = np.random.default_rng(args.seed).permutation(X.shape[0])
    rows = perm[: args.rows]
    held = {}
    if args.learner == "copa":
        try:
            Xt, yt = load_shared(args.dataset, "test")
            test_rows = np.random.default_rng(args.seed).permutation(Xt.shape[0])[: args.rows]
        except (FileNotFoundError, ValueError, KeyError):
            Xt, yt, test_rows = X, y, perm[args.rows : 2 * args.rows]
        held = {"X_test": Xt[test_rows], "y_test": np.asarray(yt)[test_rows]}
    report(_LEARNERS[args.learner](), X[rows], np.asarray(y)[rows], plot_to=args.plot, **held)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
