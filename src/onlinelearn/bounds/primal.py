"""The regularised problem a learner's kept dual belongs to: its complexity f, its primal
value P(W), and the comparator by default (its batch optimum, by dual coordinate ascent)."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from ._stream import _margins


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
    from .._core import links as L
    from .._core import steps as S

    link, loss, step = est._config()
    return link.code, est._step_code(), L, S


def primal_objective(est, W, Xa, yc, binary):
    """P(W) = f(W) + sum_t C_t loss_t(W): the problem whose dual ``dual_objective_`` keeps
    (see its docstring), over the rounds (Xa, yc) with unit example weights."""
    code, step, L, S = _config(est)
    from .._core.state import params_of

    par = params_of(*est._codes(est._n_weights()))

    gamma = est._dual_margin()
    if step == S.CONSERVATIVE:
        C = par.eta
    elif step == S.PA:
        C = math.inf
    else:
        C = par.C
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
    from ..svm import DualCoordinateSVC

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


def _dual_exponent(p):
    return p / (p - 1.0)
