"""The cumulative-loss bounds of Passive-Aggressive regression (Crammer et al. 2006, Sec. 5).

Crammer, Dekel, Keshet, Shalev-Shwartz & Singer, "Online Passive-Aggressive Algorithms", JMLR 7
(2006): Sec. 5 runs the classification analysis with the eps-insensitive loss
l_t(w) = [|y_t - <w, x_t>| - eps]_+ in place of the hinge.  Its Lemma 1 becomes, for the step
w_{t+1} = w_t + sign(y_t - <w_t, x_t>) tau_t x_t from w_1 = 0 and any comparator u::

    sum_t tau_t (2 l_t - tau_t ||x_t||^2 - 2 l_t*) <= ||u||^2,   l_t = l_t(w_t), l_t* = l_t(u)

(||w_t - u||^2 - ||w_{t+1} - u||^2 = 2 tau_t s_t <u - w_t, x_t> - tau_t^2 ||x_t||^2 with
s_t = sign(y_t - <w_t, x_t>), and s_t <u - w_t, x_t> >= (|y_t - <w_t, x_t>| - eps)
- (|y_t - <u, x_t>| - eps) >= l_t - l_t* whenever tau_t > 0; the sum telescopes to at most
||w_1 - u||^2).  The proofs of Thms. 2-5 then go through word for word; with
R = max_t ||x_t|| (over the prefix; x_t with the intercept feature) they give::

    PA    (tau = l / ||x||^2; Thm. 2 / 3):  with a = sum_t (l_t* / ||x_t||)^2,
          sum_t l_t^2 <= R^2 (sqrt(a) + sqrt(a + ||u||^2))^2
    PA-I  (tau = min(C, l / ||x||^2); Thm. 4):
          sum_t min(l_t, l_t^2) <= max(R^2, 1/C) (||u||^2 + 2 C sum_t l_t*)
    PA-II (tau = l / (||x||^2 + 1/(2C)); Thm. 5):
          sum_t l_t^2 <= (R^2 + 1/(2C)) (||u||^2 + 2 C sum_t l_t*^2)

PA: Lemma 1 gives sum (l_t / r_t)^2 - 2 sum (l_t / r_t)(l_t* / r_t) <= ||u||^2 (r_t = ||x_t||),
Cauchy-Schwarz and the root of z^2 - 2 sqrt(a) z - ||u||^2 give sqrt(sum (l_t / r_t)^2) <=
sqrt(a) + sqrt(a + ||u||^2), and sum l_t^2 <= R^2 sum (l_t / r_t)^2: Thm. 2 when a = 0, the
step of Thm. 3 before its last relaxation (to ||u|| + 2 sqrt(a)) when every ||x_t|| = 1.
PA-I: tau_t ||x_t||^2 <= l_t and tau_t <= C give sum tau_t l_t <= ||u||^2 + 2 C sum l_t*, and
tau_t l_t = min(C l_t, l_t^2 / ||x_t||^2) >= min(C, 1/R^2) min(l_t, l_t^2) (split at l_t = 1):
Thm. 4, with the mistakes replaced by sum min(l_t, l_t^2) (>= 1 on a round with l_t >= 1).
PA-II: 2 tau l* <= tau^2 / (2C) + 2 C l*^2 and the step's tau give sum l_t^2 / (||x_t||^2 +
1/(2C)) <= ||u||^2 + 2 C sum l_t*^2: Thm. 5.  A row with x_t = 0 changes nothing and has
l_t = l_t* (both predict 0): it adds l_t^2 to both sides of PA's bound (``a`` skips it) and is
covered by the 2C terms of PA-I and PA-II.

Comparator u: by default the batch optimum of the same regularised problem,
min 1/2 ||w||^2 + C sum_t l_t(w) (PA-II: l_t(w)^2), by dual coordinate ascent
(:func:`regression_optimum`, to a relative duality gap of 1e-6), then the scale on
``_SCALES`` that minimises the bound (the bounds hold for every u).  PA (C = inf): the
optimum of the squared problem at C in (0.01, 1, 100), keeping the smallest bound.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .._core.config import njit
from ._stream import _augmented, _row_norms
from .curves import _best_scale
from .table import shown

#: relative duality gap at which :func:`regression_optimum` stops
TOL = 1e-6
_PA_GRID = (0.01, 1.0, 100.0)
#: epochs the report gives the comparator's solve (its gap is reported: the bounds hold for
#: every u, an inexact optimum only loosens them)
_REPORT_EPOCHS = 1000


def is_regression(estimator):
    """True for the regressors this module covers (:class:`PassiveAggressiveRegressor`)."""
    from ..regression.passive_aggressive import PassiveAggressiveRegressor

    return isinstance(estimator, PassiveAggressiveRegressor)


def _variant(est):
    C = float(est.C)
    if math.isinf(C):  # PA-II at C = inf takes the same step tau = l / ||x||^2
        return "PA"
    return "PA-I" if est.loss == "epsilon_insensitive" else "PA-II"


# ---------------------------------------------------------------------- comparator
@njit
def _dca(data, indices, indptr, y, C, eps, squared, order, repeats, alpha, w):
    """``repeats`` epochs (in the given order) of dual coordinate ascent on D(alpha) =
    sum_t (alpha_t y_t - eps |alpha_t| [- alpha_t^2 / (4C)]) - 1/2 ||sum_t alpha_t x_t||^2
    (alpha_t in [-C, C] without the square): the coordinate's exact maximiser,
    a = (r -+ eps) / (q [+ 1/(2C)]) clipped, with r = y_t - <w - alpha_t x_t, x_t> and
    q = ||x_t||^2 (a = 0 when |r| <= eps)."""
    for _ in range(repeats):
        _dca_epoch(data, indices, indptr, y, C, eps, squared, order, alpha, w)


@njit
def _dca_epoch(data, indices, indptr, y, C, eps, squared, order, alpha, w):
    for i in order:
        lo, hi = indptr[i], indptr[i + 1]
        q = 0.0
        s = 0.0
        for k in range(lo, hi):
            q += data[k] * data[k]
            s += data[k] * w[indices[k]]
        if q == 0.0:
            continue
        r = y[i] - s + alpha[i] * q
        den = q + 0.5 / C if squared else q
        if r > eps:
            a = (r - eps) / den
        elif r < -eps:
            a = (r + eps) / den
        else:
            a = 0.0
        if not squared:
            a = min(max(a, -C), C)
        d = a - alpha[i]
        if d != 0.0:
            for k in range(lo, hi):
                w[indices[k]] += d * data[k]
            alpha[i] = a


def _losses(Xa, y, w, eps):
    return np.maximum(np.abs(y - np.asarray(Xa @ w).ravel()) - eps, 0.0)


def regression_primal(Xa, y, w, C, eps, squared):
    """P(w) = 1/2 ||w||^2 + C sum_t l_t(w) (squared: l_t(w)^2); C = inf: +inf unless every
    l_t(w) is 0 (to rounding)."""
    loss = _losses(Xa, y, w, eps)
    half = 0.5 * float(w @ w)
    if math.isinf(C):
        return half if not (loss > 1e-9 * max(1.0, float(np.max(np.abs(y))))).any() else math.inf
    return half + C * float(np.sum(loss * loss if squared else loss))


def _dual(y, alpha, w, C, eps, squared):
    D = float(alpha @ y - eps * np.abs(alpha).sum()) - 0.5 * float(w @ w)
    return D - float(alpha @ alpha) / (4.0 * C) if squared else D


def regression_optimum(Xa, y, *, C, eps, squared, tol=TOL, max_epochs=50000, random_state=0):
    """(w*, P(w*), D(alpha)): the batch optimum of min 1/2 ||w||^2 + C sum_t l_t(w) (PA-II:
    l_t(w)^2), l_t the eps-insensitive loss, over the augmented rows Xa, by dual coordinate
    ascent in random order, stopped when P(w) - D(alpha) <= tol max(1, |P(w)|) (or after
    ``max_epochs``; the gap is returned, so the caller sees how exact it is)."""
    X = sp.csr_matrix(Xa, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n, d = X.shape
    alpha = np.zeros(n)
    w = np.zeros(d)
    rng = np.random.default_rng(random_state)
    P = D = math.nan
    done = 0
    while done < max_epochs:  # the gap after 1, 2, 4, .. 64 epochs, then every 64
        k = min(max(done, 1), 64, max_epochs - done)
        _dca(X.data, X.indices, X.indptr, y, float(C), float(eps), bool(squared),
             rng.permutation(n).astype(np.int64), k, alpha, w)  # fmt: skip
        done += k
        w = np.asarray(X.T @ alpha).ravel()  # against drift of the running sum
        P = regression_primal(X, y, w, C, eps, squared)
        D = _dual(y, alpha, w, C, eps, squared)
        if P - D <= tol * max(1.0, abs(P)):
            break
    return w, P, D


# ---------------------------------------------------------------------- bounds
def _curves(variant, loss, r, pu, y, unorm, C, eps):
    """(observed, bound) along the stream for the comparator whose predictions are pu and
    whose norm is unorm (module docstring)."""
    lu = np.maximum(np.abs(y - pu) - eps, 0.0)
    R2 = np.maximum.accumulate(r * r)
    if variant == "PA-I":
        obs = np.cumsum(np.minimum(loss, loss * loss))
        return obs, np.maximum(R2, 1.0 / C) * (unorm * unorm + 2.0 * C * np.cumsum(lu))
    obs = np.cumsum(loss * loss)
    if variant == "PA-II":
        return obs, (R2 + 0.5 / C) * (unorm * unorm + 2.0 * C * np.cumsum(lu * lu))
    nz = r > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.cumsum(np.where(nz, (lu / np.where(nz, r, 1.0)) ** 2, 0.0))
    zero = np.cumsum(np.where(nz, 0.0, lu * lu))
    return obs, R2 * (np.sqrt(a) + np.sqrt(a + unorm * unorm)) ** 2 + zero


def regression_report(estimator, X, y, *, comparator=None, sample_weight=None, show=True,
                      plot_to=None):  # fmt: skip
    """:func:`onlinelearn.bounds.report` for :class:`PassiveAggressiveRegressor` (PA, PA-I,
    PA-II): a fresh clone run over (X, y) in order by one ``partial_fit_predict`` call; the
    observed quantity of the online predictions (before each update) against the bound of the
    module docstring, at every prefix (``curve_observed``, ``curve_bound``).

    Besides the classifiers' keys (``observed``, ``bound``, ``quantity``, ``theorem``,
    ``updates``, ``dual_objective``, ``primal_averaged`` = P(w_avg) (the last iterate without
    ``average``), ``gap``, ``primal_comparator`` = P(u*) at the comparator as given, and
    ``comparator``, u over the augmented features, rescaled), the terms of the bound:
    ``R`` (max ||x_t||), ``comparator_norm`` ||u||, ``comparator_loss`` (sum_t l_t(u), PA-II
    and PA: the sum of squares; PA: of (l_t(u) / ||x_t||)^2 over the rows with x_t != 0),
    ``variant``, ``scale`` (the factor applied to the given comparator) and, for the default
    comparator, ``comparator_gap`` (the duality gap at which its solve stopped).
    """
    if sample_weight is not None:
        raise ValueError("bounds.report: the PA regression bounds are stated for one C on every "
                         "round; sample weights (C_t = C s_t) are not covered")  # fmt: skip
    if getattr(estimator, "constraint", None) is not None:
        raise NotImplementedError("bounds.report: the PA regression bounds are for unprojected "
                                  f"steps; got constraint={estimator.constraint!r}")  # fmt: skip
    if not float(estimator.C) > 0:
        raise ValueError(f"bounds.report: the PA regression bounds need C > 0; got "
                         f"C={estimator.C!r} (C = 0 never updates)")  # fmt: skip
    est = clone(estimator)
    variant = _variant(est)
    pred = est.partial_fit_predict(X, y)
    y = np.asarray(y, dtype=np.float64).ravel()
    C, eps = float(est.C), float(est.epsilon)
    b = est._b()
    Xa = _augmented(X, b)
    r = _row_norms(Xa, 2)
    loss = np.maximum(np.abs(y - pred) - eps, 0.0)
    squared = variant != "PA-I"
    sol_gap = math.nan
    if comparator is None:
        grid = _PA_GRID if variant == "PA" else (C,)
        cands = []
        for Cu in grid:
            w, P, D = regression_optimum(Xa, y, C=Cu, eps=eps, squared=squared,
                                         max_epochs=_REPORT_EPOCHS)
            cands.append((w, P - D))
    else:
        U = np.asarray(comparator, dtype=np.float64).ravel()
        if U.shape != (Xa.shape[1],):
            raise ValueError(f"bounds.report: comparator must have {Xa.shape[1]} entries "
                             "(the features, then the intercept's weight when fit_intercept)")
        cands = [(U, math.nan)]
    best = None
    for U, g in cands:
        pu = np.asarray(Xa @ U).ravel()
        nu = float(np.linalg.norm(U))
        s, curve = _best_scale(
            lambda s, pu=pu, nu=nu: _curves(variant, loss, r, s * pu, y, s * nu, C, eps)[1]
        )
        if best is None or curve[-1] < best[2][-1]:
            best = (U, s, curve, g)
    U0, s, curve_bound, sol_gap = best
    U = s * U0
    observed, _ = _curves(variant, loss, r, np.asarray(Xa @ U).ravel(), y, 0.0, C, eps)
    lu = _losses(Xa, y, U, eps)
    if variant == "PA-I":
        uloss = float(lu.sum())
    elif variant == "PA-II":
        uloss = float(np.sum(lu * lu))
    else:
        nz = r > 0
        uloss = float(np.sum((lu[nz] / r[nz]) ** 2))
    coef = np.asarray(est.coef_, dtype=np.float64)
    w_avg = np.append(coef, est.intercept_ / b) if b else coef
    primal_avg = regression_primal(Xa, y, w_avg, C, eps, squared)
    dual = float(est.dual_objective_)
    theorem = {
        "PA": "Crammer et al. 2006, Sec. 5 with Thm. 2/3 (PA, eps-insensitive loss)",
        "PA-I": "Crammer et al. 2006, Sec. 5 with Thm. 4 (PA-I, eps-insensitive loss)",
        "PA-II": "Crammer et al. 2006, Sec. 5 with Thm. 5 (PA-II, squared eps-insensitive)",
    }[variant]
    out = {
        "estimator": est,
        "variant": variant,
        "observed": float(observed[-1]),
        "updates": int(est.n_updates_),
        "bound": float(curve_bound[-1]),
        "quantity": "sum min(l, l^2)" if variant == "PA-I" else "sum l^2",
        "theorem": theorem,
        "rounds": int(len(y)),
        "dual_objective": dual,
        "primal_averaged": primal_avg,
        "gap": primal_avg - dual,
        "primal_comparator": regression_primal(Xa, y, U0, C, eps, squared),
        "comparator": U,
        "scale": float(s),
        "comparator_gap": float(sol_gap),
        "R": float(np.max(r)) if len(r) else 0.0,
        "comparator_norm": float(np.linalg.norm(U)),
        "comparator_loss": uloss,
        "curve_observed": observed,
        "curve_bound": curve_bound,
    }
    return shown(out, show, plot_to)
