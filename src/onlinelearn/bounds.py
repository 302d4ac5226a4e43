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
scaled into the l1 ball, with gamma chosen on a grid.
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
    else:
        return math.nan
    if step == S.PA2:
        return f + C * float(np.sum(hinge * hinge))
    if math.isinf(C):
        return f if not (hinge > 0).any() else math.inf
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


def _winnow_curve(hinge, xinf, eta, gamma, log_n):
    X = np.maximum.accumulate(xinf)
    den = gamma - eta * X * X / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (log_n / eta + np.cumsum(hinge)) / den
    return np.where(den > 0, out, np.inf)


def report(estimator, X, y, *, comparator=None, show=True, plot_to=None):
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
    """
    from .linear.copa import COPA
    from .linear.passive_aggressive import PassiveAggressiveClassifier
    from .linear.perceptron import Perceptron
    from .linear.quasi_additive import Winnow

    if isinstance(estimator, COPA):
        raise NotImplementedError(
            "bounds.report(COPA): COPA's Theorem 2 bounds the confusion risk of the averaged "
            "hypothesis given the per-round losses l_{q|p} of the hypotheses h_0..h_{T-1} and "
            "a bound M on them; onlinelearn.metrics has the inequality "
            "(confusion_risk_bound) and online_confusion_risk, but nothing yet produces COPA's "
            "per-round confusion losses from a run, nor a valid M for its squared hinge."
        )
    kinds = {Perceptron: "perceptron", Winnow: "winnow", PassiveAggressiveClassifier: "pa"}
    kind = next((k for c, k in kinds.items() if type(estimator) is c), None)
    if kind is None:
        raise NotImplementedError(
            f"bounds.report has no theorem for {type(estimator).__name__}: it covers "
            "Perceptron, PassiveAggressiveClassifier(variant='PA-I') and Winnow"
        )
    est = clone(estimator)
    if kind == "pa" and est.variant != "PA-I":
        raise NotImplementedError("bounds.report covers PassiveAggressiveClassifier PA-I only")
    if kind == "winnow" and (est.self_tuned or est.step != "conservative"):
        raise NotImplementedError("bounds.report covers Winnow with the conservative step")
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
    if comparator is None:
        Cu = float(fp[FP_ETA]) if kind != "pa" else float(fp[FP_C])
        comparator = batch_optimum(
            X, y, C=Cu, margin=gamma if kind == "pa" else 1.0, fit_intercept=bool(b), b=b or 1.0,
            multiclass=not binary,
        )  # fmt: skip
    U = np.asarray(comparator, dtype=np.float64)
    U0 = U  # the comparator as given (the batch optimum), before the bound's rescaling
    mu = _margins(Xa, U, yc, binary)
    n_upd = int(est.n_updates_)
    on = np.ones_like(mis)  # the rounds the sums run over: all (see the module docstring)
    if kind == "perceptron":
        xn = np.sqrt(kappa) * _row_norms(Xa, 2) * on
        best = None
        for s in _SCALES:
            curve = _perceptron_curve(mis, np.maximum(1 - s * mu, 0) * on, xn,
                                      s * np.linalg.norm(U))  # fmt: skip
            if best is None or curve[-1] < best[1][-1]:
                best = (s, curve)
        theorem = "Shalev-Shwartz 2007 (thesis), Corollary 5 (Sec. 5.1.1)"
        quantity = "mistakes"
    elif kind == "pa":
        Ceff = float(fp[FP_C]) / gamma
        rn = np.sqrt(kappa) * _row_norms(Xa, 2)
        best = None
        for s in _SCALES:
            curve = _pa1_curve(np.maximum(1 - s * mu / gamma, 0), rn,
                               s * np.linalg.norm(U) / gamma, Ceff)  # fmt: skip
            if best is None or curve[-1] < best[1][-1]:
                best = (s, curve)
        theorem = "Crammer et al. 2006, Theorem 4 (PA-I); thesis Sec. 5.2, eq. (5.14)"
        quantity = "mistakes"
    else:
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
        U = best[0] * U
    curve_bound = best[1]
    dual = float(est.dual_objective_)
    primal_avg = primal_objective(est, W_avg, Xa, yc, binary)
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
        # P at the comparator as given (Winnow: at the simplex point the bound used; the
        # Euclidean optimum is off the simplex)
        "primal_comparator": primal_objective(est, U if kind == "winnow" else U0, Xa, yc,
                                              binary),  # fmt: skip
        "comparator": U,
        "curve_observed": np.cumsum(mis),
        "curve_bound": curve_bound,
    }
    if show:
        print(format_table([out]))
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
            f"| {name} | {r['rounds']} | {r['quantity']} | {r['observed']} | {r['bound']:.6g} "
            f"| {r['dual_objective']:.6g} | {r['primal_averaged']:.6g} | {r['gap']:.6g} "
            f"| {r['primal_comparator']:.6g} | {r['theorem']} |"
        )
    return "\n".join(lines)


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
    t = np.arange(1, len(result["curve_observed"]) + 1)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(t, result["curve_observed"], label=f"observed {result['quantity']}")
    ax.plot(t, result["curve_bound"], label="bound")
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
}


def _ol():
    import onlinelearn

    return onlinelearn


def main(argv=None):
    """``python -m onlinelearn.bounds DATASET [--learner perceptron|pa1|winnow|copa]
    [--rows N] [--seed S] [--plot FILE.png]``: :func:`report` on a shared data set (its
    training split; N rows drawn at random with seed S, in that order)."""
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
    rows = np.random.default_rng(args.seed).permutation(X.shape[0])[: args.rows]
    report(_LEARNERS[args.learner](), X[rows], np.asarray(y)[rows], plot_to=args.plot)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
