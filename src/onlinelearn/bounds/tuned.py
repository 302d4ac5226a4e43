"""The self-tuning steps' regret bounds (thesis Sec. 3.5) as cumulative loss bounds.

:class:`~onlinelearn.framework.LipschitzTuned` (c_t = sqrt(t L_t / U), Corollaries 2 and 3)
and :class:`~onlinelearn.framework.LossTuned` (c_t = beta2 sqrt(beta1 + sum_{i<t} g_i(w_i)),
Theorem 2) choose c_t from what they have seen, without T or ||u||.  With u_t the round's
direction (y_t x_t, or x_t in the true column and -x_t in the rival's: ||u_t||_* = kappa
||x_t||_*, kappa = sqrt 2, 1, 2^(1/p) on the Euclidean, entropy and p-norm links; x_t with the
intercept feature of value b), G(u) = sum_t g_t(u) and f the link's complexity, for every u::

    Corollary 2 (L given)   sum_t g_t(w_t) <= G(u) + 2 (f(u) / sqrt(U) + sqrt(U)) sqrt(L T)
    Corollary 3 (L = None)  the same with L = max_t ||u_t||_*^2 / 2
                            (g_t = [gamma - margin_t(w)]_+ is ||u_t||_*-Lipschitz)
    Theorem 2 (LossTuned)   sum_t g_t(w_t) <= G(u) + B sqrt(G(u) + beta1) + B^2,
                            B = beta2 f(u) + L Gm / beta2, Gm = 2 sqrt(1 + max_t g_t(w_t) / beta1),
                            g_t = [gamma - margin_t(w)]_+^2, L = 2 max_t ||u_t||_*^2
                            (1/2 ||2 [.]_+ u_t||_*^2 = 2 ||u_t||_*^2 g_t: L-self-bounded)

These are the readings of ``tests/test_self_tuned_bounds.py`` (which checks them on a9a and w8a
from the learner's dual variables), written as bounds on the learner's cumulative loss.  For K
classes g_t is the hinge of the pair (y_t, r_t), r_t the rival of highest score at w_t: at w_t
it is the max-rival hinge, and at u it is at most the max-rival hinge, which G(u) sums (a
larger right-hand side, so still a bound).  Corollary 2 assumes g_t is sqrt(2 L)-Lipschitz:
from the first row with ||u_t||_*^2 / 2 > L on, the premise fails and the bound is +inf.

Each prefix of the stream is a stream of its own: the curve along the stream is the theorem on
the first t rounds (its own L_t, T = t and max_{i<=t} g_i(w_i)).  g_t(w_t) is read from the run:
before round t the learner's v (its state) gives w_t = grad f*(v / c_t), c_t by the step's rule
from the rows so far; for LossTuned the sum of these losses must equal the learner's own
(otherwise a RuntimeError: the read-out, not the theorem, would be wrong).

Certificate beside the bound: ``dual_objective`` is the learner's D_T, the dual of
min_w c_T f(w) + sum_t g_t(w) (c_T the last round's c); weak duality gives D_T <= P(u) =
c_T f(u) + G(u) for every u, reported as ``primal_comparator`` at the comparator of the bound.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ._stream import _augmented, _margins, _row_norms
from .curves import _best_scale
from .primal import _dual_exponent, batch_optimum, entropy_complexity
from .table import shown


def is_tuned(estimator):
    """True for an :class:`onlinelearn.OnlineLearner` whose step is LipschitzTuned or
    LossTuned (the learners :func:`tuned_report` covers)."""
    from ..engine.learner import OnlineLearner
    from ..framework import LipschitzTuned, LossTuned
    from ..framework.steps import as_step

    if not isinstance(estimator, OnlineLearner):
        return False
    try:
        step = as_step(estimator.step)
    except (TypeError, ValueError):
        return False
    return isinstance(step, (LipschitzTuned, LossTuned))


def _link_parts(link, p, R, K):
    """(order of the dual norm of a row, kappa, f(W) for W of shape (R, K))."""
    from ..framework import Entropy, Euclidean

    binary = K == 1
    if isinstance(link, Euclidean):
        return 2.0, (1.0 if binary else math.sqrt(2.0)), lambda W: 0.5 * float(np.sum(W * W))
    if isinstance(link, Entropy):  # the simplex of [w+, w-] over all R K weights
        return np.inf, 1.0, lambda W: entropy_complexity(W, 2 * R * K, balanced=True)
    q = _dual_exponent(p)

    def f(W):
        return float(np.sum(np.abs(W) ** q)) ** (2.0 / q) / (2.0 * (q - 1.0))

    return p, (1.0 if binary else 2.0 ** (1.0 / p)), f


def _dual_row_norms(Xa, order):
    if order in (2.0, np.inf):
        return _row_norms(Xa, order)
    if sp.issparse(Xa):
        s = np.asarray(abs(Xa).power(order).sum(axis=1)).ravel()
    else:
        s = (np.abs(Xa) ** order).sum(axis=1)
    return s ** (1.0 / order)


def _score(est, link, p, V, c, idx, val):
    """<w, x> per column for w = grad f*(V / c) (the link's read-out)."""
    from ..framework import Entropy, Euclidean

    if c <= 0:
        return np.zeros(V.shape[1])
    if isinstance(link, Euclidean):
        return val @ V[idx] / c
    if isinstance(link, Entropy):
        th = V / c
        m = np.abs(th).max()
        Z = np.exp(th - m).sum() + np.exp(-th - m).sum()
        return val @ ((np.exp(th[idx] - m) - np.exp(-th[idx] - m)) / Z)
    nrm = np.linalg.norm(V.ravel(), ord=p)
    if nrm == 0:
        return np.zeros(V.shape[1])
    th = V[idx] / nrm
    return val @ (np.sign(th) * np.abs(th) ** (p - 1.0) * nrm / ((p - 1.0) * c))


def _online_losses(est, X, Xa, y, link, p, rule, squared, gamma):
    """g_t(w_t) of every round, one row at a time: w_t = grad f*(v_{t-1} / c_t) from the
    learner's state before the round (module docstring), and the c_t.  ``est`` has already
    run round 0 (w_0 = 0)."""
    T = len(y)
    out = np.zeros(T)
    cs = np.zeros(T)
    rows = sp.csr_matrix(Xa) if sp.issparse(Xa) else None
    yc = np.searchsorted(est.classes_, y)
    for t in range(T):
        c = rule(t, out[:t])
        cs[t] = c
        if t == 0:
            score = np.zeros(est._state["V"].shape[1])
        else:
            if rows is not None:
                lo, hi = rows.indptr[t], rows.indptr[t + 1]
                idx, val = rows.indices[lo:hi], rows.data[lo:hi]
            else:
                idx = np.flatnonzero(Xa[t])
                val = Xa[t, idx]
            score = _score(est, link, p, est._state["V"], c, idx, val)
        if score.size == 1:
            z = score[0] if yc[t] == 1 else -score[0]
        else:
            z = score[yc[t]] - np.delete(score, yc[t]).max()
        h = max(gamma - z, 0.0)
        out[t] = h * h if squared else h
        if t > 0:
            est.partial_fit(X[t : t + 1], y[t : t + 1])
    return out, cs


def tuned_report(estimator, X, y, *, comparator=None, show=True, plot_to=None):
    """:func:`onlinelearn.bounds.report` for LipschitzTuned (Corollary 2 or 3) and LossTuned
    (Theorem 2): the cumulative loss sum_t g_t(w_t) against G(u) + the theorem's regret bound
    (module docstring).  Returns the keys of the mistake reports, ``observed`` being the
    cumulative loss, and ``regret``, ``regret_bound``, ``comparator_loss``, ``f_u``, ``L``,
    ``c_T``, ``curve_observed`` / ``curve_bound`` at every round."""
    from ..framework import Entropy, Euclidean, Hinge, LipschitzTuned, SquaredHinge
    from ..framework.links import as_link
    from ..framework.losses import as_loss
    from ..framework.steps import as_step

    est = clone(estimator)
    link, loss, step = as_link(est.link), as_loss(est.loss), as_step(est.step)
    lipschitz = isinstance(step, LipschitzTuned)
    need = Hinge if lipschitz else SquaredHinge
    if type(loss) is not need:
        raise NotImplementedError(
            f"bounds.report: the theorem of {type(step).__name__} is stated for "
            f"{need.__name__}(margin); got {loss!r}"
        )
    if getattr(est, "class_weight", None) is not None:
        raise ValueError("bounds.report: the theorems are stated for unit example weights")
    y = np.asarray(y)
    if len(y) == 0:
        raise ValueError("bounds.report: empty stream")
    if not sp.issparse(X):
        X = np.asarray(X)
    classes = np.unique(y)
    gamma = float(loss.margin)
    K = 1 if classes.size <= 2 else classes.size
    est.partial_fit(X[:1], y[:1], classes=classes)  # round 0: w_0 = 0 (its loss is read below)
    b = float(est._intercept_value())
    Xa = _augmented(X, b)
    R = Xa.shape[1]
    p = float(est._p_value()) if not isinstance(link, (Entropy, Euclidean)) else 2.0
    order, kappa, f = _link_parts(link, p, R, K)
    un = kappa * _dual_row_norms(Xa, order)  # ||u_t||_*
    umax = np.maximum.accumulate(un)
    T = len(y)
    tt = np.arange(1, T + 1, dtype=np.float64)
    if lipschitz:
        U = float(step.U)
        Lt = np.full(T, float(step.L)) if step.L is not None else 0.5 * umax**2

        def rule(t, past):
            return math.sqrt((t + 1) * Lt[t] / U)
    else:
        beta1, beta2 = float(step.beta1), float(step.beta2)
        Lt = 2.0 * umax**2

        def rule(t, past):
            return beta2 * math.sqrt(beta1 + float(past.sum()))

    online, cs = _online_losses(est, X, Xa, y, link, p, rule, not lipschitz, gamma)
    if not lipschitz:
        from .._core import dual_ascent as DA

        kept = float(est._state["st"][DA.CUM_LOSS])
        if not math.isclose(kept, float(online.sum()), rel_tol=1e-8, abs_tol=1e-10):
            raise RuntimeError(
                f"bounds.report: the losses read from the run sum to {online.sum():.12g}, the "
                f"learner kept {kept:.12g}: the read-out of w_t is wrong (not the theorem)"
            )
    binary = K == 1
    yc = np.searchsorted(est.classes_, y)
    if comparator is None:
        comparator = batch_optimum(X, y, C=1.0, margin=gamma, fit_intercept=bool(b),
                                   b=b or 1.0, multiclass=not binary)  # fmt: skip
        if isinstance(link, Entropy):  # the domain: the l1 ball (scales > 1 give f = inf)
            l1 = float(np.abs(comparator).sum())
            comparator = comparator / l1 if l1 > 0 else comparator
    U0 = np.asarray(comparator, dtype=np.float64)
    mu = _margins(Xa, U0, yc, binary)
    cum = np.cumsum(online)
    # Corollary 2's premise on each prefix: every row so far has ||u_t||_*^2 / 2 <= L
    broken = np.zeros(T, dtype=bool)
    if lipschitz:
        if step.L is not None:
            broken = np.logical_or.accumulate(0.5 * un**2 > float(step.L) * (1 + 1e-12))
        theorem = ("Shalev-Shwartz 2007 (thesis), Corollary 2 (Sec. 3.5, L given)"
                   if step.L is not None else
                   "Shalev-Shwartz 2007 (thesis), Corollary 3 (Sec. 3.5, L_t from the rows)")
        quantity = "cumulative hinge loss"

        def regret_curve(fu):
            return 2.0 * (fu / math.sqrt(U) + math.sqrt(U)) * np.sqrt(Lt * tt)

        def gu_curve(s):
            return np.cumsum(np.maximum(gamma - s * mu, 0.0))
    else:
        theorem = "Shalev-Shwartz 2007 (thesis), Theorem 2 (Sec. 3.5, LossTuned)"
        quantity = "cumulative squared hinge loss"
        Gm = 2.0 * np.sqrt(1.0 + np.maximum.accumulate(online) / beta1)

        def gu_curve(s):
            return np.cumsum(np.maximum(gamma - s * mu, 0.0) ** 2)

    def curve_of(s):
        fu = f(s * U0)
        if not np.isfinite(fu):
            return np.full(T, np.inf)
        gu = gu_curve(s)
        if lipschitz:
            return gu + regret_curve(fu)
        B = beta2 * fu + Lt * Gm / beta2
        return gu + B * np.sqrt(gu + beta1) + B * B

    s, curve_bound = _best_scale(curve_of)
    if broken.any():  # from the first such row on, the corollary says nothing
        curve_bound = np.where(broken, np.inf, curve_bound)
        theorem += ": a row has ||u_t||_*^2 / 2 > L, the premise fails"
    Ubest = s * U0
    fu = f(Ubest)
    gu = float(gu_curve(s)[-1])
    c_T = float(cs[-1])
    out = {
        "estimator": est,
        "observed": float(cum[-1]),
        "updates": int(est.n_updates_),
        "mistakes": int(est.n_mistakes_),
        "bound": float(curve_bound[-1]),
        "quantity": quantity,
        "theorem": theorem,
        "rounds": T,
        "regret": float(cum[-1]) - gu,
        "regret_bound": float(curve_bound[-1]) - gu,
        "comparator_loss": gu,
        "f_u": float(fu),
        "L": float(Lt[-1]),
        "c_T": c_T,
        "dual_objective": float(est.dual_objective_),
        "primal_averaged": math.nan,
        "gap": math.nan,
        "primal_comparator": c_T * float(fu) + gu,
        "comparator": Ubest,
        "curve_observed": cum,
        "curve_bound": curve_bound,
    }
    return shown(out, show, plot_to)
