"""The loss and mistake bound of online label ranking (thesis Lemma 1 with Lemma 18, Sec. 8.3).

Shalev-Shwartz's thesis (2007) states no corollary of its own for label ranking: Sec. 8.3.1
says that f-bar, the sum over the K labels of the squared norm (8.2) or of the relative entropy
(8.3), satisfies Lemma 18, so that "the analysis given in Lemma 1 can be repeated for f-bar
where the only difference is that Eq. (3.15) is replaced with the inequality given in Lemma 18".
That is the theorem of this module.  With c = 1/C (the package's units: the dual and primal
divided by c), g_t the pair hinge loss (8.1) at the margin gamma, and lambda'_t the subgradient
of update I (-x_t on r0, +x_t on s0; Sec. 8.3.2), Lemma 1 reads, for every comparator U::

    C sum_{t in S} g_t(W_t) - C^2 sum_{t in S} X_t^2  <=  D  <=  f-bar(U) + C sum_{t in S} g_t(U)

where ||lambda'_t||^2 = sum_r ||lambda'_{t,r}||_*^2 = 2 X_t^2 (Lemma 18, part 3),
X_t = ||x_t||_2 for the squared norm, ||x_t||_inf for the entropy (strongly convex on the simplex
w.r.t. ||.||_1), and D = ``dual_objective_``.  S is the set of rounds the analysis runs on:

* update I (conservative, Eq. (3.11)): the mistake rounds M (it sets lambda_t = lambda'_t
  there and nothing elsewhere: Lemma 1 on the subsequence M, as for the Perceptron, Cor. 5);
* updates II and III (Eq. (3.12) along lambda'_t capped at alpha = 1, i.e. tau = C, and the
  optimal round): the rounds with g_t(W_t) > 0 (on the others both steps are 0 -- the round's
  dual gain is at most sum tau (gamma - margin) <= 0 -- so the run is the run on S alone, and
  each step's dual gain is at least that of lambda'_t, condition (3.9)).

Rearranged, the bound this module reports::

    sum_{t in S} g_t(W_t)  <=  sum_{t in S} g_t(U) + f-bar(U) / C + C sum_{t in S} X_t^2

at every prefix of the stream, and since a mistake has g_t(W_t) >= gamma (Sec. 8.2),
gamma |M| <= sum_{t in S} g_t(W_t) (M is a subset of S): the mistake bound is the loss bound
over gamma.  Update I with the squared norm runs the same rounds for every C (W_t scales with
C), so Lemma 1 holds for every c at once; its infimum over c, summed over all rounds and solved
for |M| as in Cor. 5 (with ||lambda'_t|| <= sqrt(2) X, X = max_t ||x_t||)::

    |M| <= L' + a sqrt(L') + a^2,   L' = sum_t g_t(U) / gamma,   a = sqrt(2) X ||U|| / gamma

(``curve_mistake_bound_scale_free``, its comparator scaled on its own; the reported
``mistake_bound`` is the smaller of the two at every prefix).  f-bar(U) = 1/2 ||U||^2, or
sum_r (log n + sum_j u_rj log u_rj) with every u_r on the simplex (n weights per label, the
intercept feature included).

Comparator U (the bound holds for every U; the reported one is the lowest of a few): no batch
solver of the regularised ranking problem exists in the package, so the candidates are the
learner's own weights, W_T of this run and W of a 5-epoch ``fit`` of the same configuration
(LabelRanker keeps no averaged weights).  Squared norm: s W over the scales ``_SCALES`` of
:func:`~onlinelearn.bounds.curves._best_scale`.  Entropy: u_r(s) = softmax(s theta_r) (the
tempered weights, s = 1 the learner's own; s -> 0 the uniform weights, f-bar = 0), the same
scales.  ``primal_averaged`` is P(W_T) = f-bar(W_T) + C sum_t g_t(W_T) over the whole stream
(no averaging: the last iterate), which weak duality puts above D.

Not covered (refused): a projected update (``constraint``: the greedy projected step is
outside Lemma 1's dual ascent, and ``dual_objective_`` is NaN), fewer than two labels.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .._core import ranking as RK
from ._stream import _augmented, _row_norms
from .curves import _best_scale, _perceptron_curve
from .table import shown

__all__ = ["instance_ranking_report", "is_label_ranker", "label_ranking_report", "ranking_hinge"]


def is_label_ranker(estimator):
    """LabelRanker, or InstanceRanker (refused by :func:`label_ranking_report` with a pointer
    to :func:`instance_ranking_report`, which needs the queries)."""
    from ..ranking.label_ranker import LabelRanker

    return isinstance(estimator, LabelRanker) or is_instance_ranker(estimator)


def ranking_hinge(S, Y, gamma):
    """g(W) of (8.1) per row: max_{r in Y, s not in Y} [gamma - (S_r - S_s)]_+ from the scores
    S (n, K) and the indicator Y (n, K); 0 on a row with no pair (r, s)."""
    Y = np.asarray(Y, dtype=bool)
    lo = np.where(Y, S, np.inf).min(axis=1)
    hi = np.where(Y, -np.inf, S).max(axis=1)
    has_pair = Y.any(axis=1) & (~Y).any(axis=1)
    return np.where(has_pair, np.maximum(0.0, gamma - (lo - hi)), 0.0)


def _complexity_value(U, entropy):
    if not entropy:
        return 0.5 * float(np.sum(U * U))
    n = U.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ulogu = np.where(U > 0, U * np.log(U), 0.0)
    return float(U.shape[1] * math.log(n) + ulogu.sum())


def _softmax_columns(T):
    T = T - T.max(axis=0, keepdims=True)
    E = np.exp(T)
    return E / E.sum(axis=0, keepdims=True)


def label_ranking_report(estimator, X, y, *, comparator=None, show=True, plot_to=None):
    """:func:`onlinelearn.bounds.report` for :class:`onlinelearn.LabelRanker` (module
    docstring): the learner (a fresh clone) runs once over (X, y) in order, one row at a time,
    and its cumulative ranking hinge loss over the rounds S is put beside the bound of Lemma 1.

    ``comparator``: U over the augmented features, shape (R, K) (entropy: every column on the
    simplex); by default the best candidate of the module docstring.  Returns the keys of
    :func:`~onlinelearn.bounds.report` plus ``mistakes``, ``mistake_bound`` (= bound / gamma),
    ``curve_dual`` (D after every round), ``curve_dual_lower`` (C L_S - C^2 sum X_t^2) and
    ``curve_primal_comparator`` (f-bar(U) + C L_S(U)), the two sides of Lemma 1."""
    from ..ranking import _targets as T

    if is_instance_ranker(estimator):
        raise NotImplementedError(
            "bounds.report: an InstanceRanker's rounds are queries, which report() cannot be "
            "told: use onlinelearn.bounds.ranking.instance_ranking_report(est, X, y, qid)"
        )
    est = clone(estimator)
    if est.constraint is not None:
        raise NotImplementedError(
            f"bounds.report: constraint={est.constraint!r} is a projected update, outside the "
            "dual ascent of the thesis's Lemma 1 (its dual_objective_ is NaN); no bound"
        )
    codes = est._ranking_codes()  # checks the configuration
    entropy = codes.complexity == RK.ENTROPY
    C, gamma, upd = codes.C, codes.margin, codes.update
    n = X.shape[0]
    Yb, classes, _ = T.encode(y, n, None, None, None)
    K = Yb.shape[1]
    if K < 2:
        raise ValueError("bounds.report: label ranking needs at least two labels")
    rows = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X)
    loss = np.zeros(n)
    mistake = np.zeros(n, dtype=bool)
    dual = np.zeros(n)
    for t in range(n):
        xt = rows[t : t + 1]
        if t:
            s = est._scores(xt)
            loss[t] = ranking_hinge(s, Yb[t : t + 1], gamma)[0]
        else:  # W_1 = 0 (entropy: uniform): every score ties
            loss[t] = ranking_hinge(np.zeros((1, K)), Yb[t : t + 1], gamma)[0]
        mistake[t] = bool(est.partial_fit_mistakes(xt, Yb[t : t + 1], classes=classes)[0])
        dual[t] = est.dual_objective_
    b = float(est._intercept_value())
    Xa = _augmented(X, b)
    Xn = _row_norms(Xa, np.inf if entropy else 2)
    in_S = mistake if upd == RK.UPD_I else loss > 0
    L_S = np.cumsum(np.where(in_S, loss, 0.0))
    sumX2 = np.cumsum(np.where(in_S, Xn * Xn, 0.0))
    W_T = np.array(est._weights_matrix(), dtype=np.float64)

    def curve_of(U):
        gU = ranking_hinge(np.asarray(Xa @ U), Yb, gamma)
        return np.cumsum(np.where(in_S, gU, 0.0)) + _complexity_value(U, entropy) / C + C * sumX2

    how = "given"
    if comparator is None:
        fitted = clone(estimator).set_params(n_epochs=5, random_state=0).fit(X, Yb)
        best = None
        for name, W in (("W_T of the run", W_T), ("5-epoch fit", fitted._weights_matrix())):
            if entropy:
                theta = est._theta if name == "W_T of the run" else fitted._theta

                def family(s, theta=theta):
                    return _softmax_columns(s * theta)
            else:

                def family(s, W=W):
                    return s * W

            s, curve = _best_scale(lambda s, family=family: curve_of(family(s)))
            if best is None or curve[-1] < best[2][-1]:
                best = (f"{name}, scale {s:.4g}", family(s), curve)
        how, U, curve_bound = best
    else:
        U = np.asarray(comparator, dtype=np.float64)
        if U.shape != W_T.shape:
            raise ValueError(f"bounds.report: comparator of shape {U.shape}, expected "
                             f"{W_T.shape} (augmented features x labels)")  # fmt: skip
        if entropy and (np.any(U < 0) or not np.allclose(U.sum(axis=0), 1.0)):
            raise ValueError("bounds.report: with complexity='entropy' every column of the "
                             "comparator must lie on the probability simplex")  # fmt: skip
        curve_bound = curve_of(U)
    mistake_curve = curve_bound / gamma
    scale_free = None
    if upd == RK.UPD_I and not entropy:  # Cor. 5's form: the run is the same for every C
        xr = math.sqrt(2.0) * Xn

        def mistakes_of(V):
            gV = ranking_hinge(np.asarray(Xa @ V), Yb, gamma) / gamma
            return _perceptron_curve(None, gV, xr, math.sqrt(float(np.sum(V * V))) / gamma)

        if comparator is None:
            scale_free = min((_best_scale(lambda s, W=W: mistakes_of(s * W))[1]
                              for W in (W_T, fitted._weights_matrix())),
                             key=lambda c: c[-1])  # fmt: skip
        else:
            scale_free = mistakes_of(U)
        mistake_curve = np.minimum(mistake_curve, scale_free)
    gU_all = ranking_hinge(np.asarray(Xa @ U), Yb, gamma)
    fU = _complexity_value(U, entropy)
    gW_all = ranking_hinge(np.asarray(Xa @ W_T), Yb, gamma)
    P_last = _complexity_value(W_T, entropy) + C * float(gW_all.sum())
    D = float(est.dual_objective_)
    name = {RK.UPD_I: "I", RK.UPD_II: "II", RK.UPD_III: "III"}[upd]
    link = "entropy (8.3)" if entropy else "squared norm (8.2)"
    report = {
        "observed": float(L_S[-1]),
        "bound": float(curve_bound[-1]),
        "quantity": "ranking hinge loss" + (" on mistakes" if upd == RK.UPD_I else ""),
        "theorem": f"thesis Lemma 1 + Lemma 18 (Sec. 8.3), update {name}, {link}",
        "rounds": n,
        "mistakes": int(mistake.sum()),
        "mistake_bound": float(mistake_curve[-1]),
        "curve_mistake_bound": mistake_curve,
        "curve_mistake_bound_scale_free": scale_free,
        "updates": int(est.n_updates_),
        "dual_objective": D,
        "primal_averaged": P_last,
        "gap": P_last - D,
        "primal_comparator": fU + C * float(gU_all.sum()),
        "comparator": U,
        "comparator_choice": how,
        "curve_observed": L_S,
        "curve_bound": curve_bound,
        "curve_mistakes": np.cumsum(mistake),
        "curve_dual": dual,
        "curve_dual_lower": C * L_S - C * C * sumX2,
        "curve_primal_comparator": fU + C * np.cumsum(np.where(in_S, gU_all, 0.0)),
        "estimator": est,
    }
    return shown(report, show, plot_to)


# ---------------------------------------------------------------------- instance ranking
def is_instance_ranker(estimator):
    from ..ranking.instance_ranker import InstanceRanker

    return isinstance(estimator, InstanceRanker)


def instance_pair_loss(s, y, kind):
    """g_t of one query from its scores s and targets y: 'max' (5.26) or 'avg' (5.25) of the
    pair losses [(y_i - y_j) - (s_i - s_j)]_+ over E_t = {(i, j) : y_i > y_j}; 0 without pairs."""
    d = y[:, None] - y[None, :]
    pairs = d > 0
    if not pairs.any():
        return 0.0
    lij = np.maximum(0.0, d - (s[:, None] - s[None, :]))[pairs]
    return float(lij.max() if kind == "max" else lij.mean())


def instance_ranking_report(estimator, X, y, qid=None, *, comparator=None, show=True,
                            plot_to=None):  # fmt: skip
    """The regret bound of :class:`onlinelearn.InstanceRanker` (thesis Sec. 5.3.4: g_t is
    X_t-Lipschitz, X_t = max_{(i,j) in E_t} ||x_i - x_j||_2, so Lemma 1 / Cor. 1 apply with
    f = 1/2 ||w||^2 and c = 1/C): for every comparator u, over the rounds S with g_t(w_t) > 0
    (both updates change nothing elsewhere)::

        C L_S(w) - C^2/2 sum_S X_t^2  <=  D  <=  1/2 ||u||^2 + C L_S(u)
        =>  L_S(w)  <=  L_S(u) + ||u||^2 / (2C) + C/2 sum_S X_t^2

    A round is a query (``qid``: maximal runs of equal values; None: every row is its own
    query, which has no pair: give qid).  Comparator: by default the best scale (``_SCALES``)
    of the final weights of this run or of a 5-epoch ``fit``.  ``primal_averaged``: P of the
    last iterate (no averaging).  Refused: a run whose optimal steps were not certified
    (``n_inexact_steps_`` > 0: then (3.9) is not guaranteed)."""
    from ..ranking.instance_ranker import _query_pointers

    est = clone(estimator)
    rows = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, np.float64)
    yv = np.asarray(y, dtype=np.float64).ravel()
    n = rows.shape[0]
    if qid is None:
        raise ValueError("bounds: instance ranking needs qid (the rows of each query): without "
                         "it every row is a query without pairs")  # fmt: skip
    starts = _query_pointers(qid, n)
    C = float(est.C)
    T_ = len(starts) - 1
    loss = np.zeros(T_)
    xn2 = np.zeros(T_)
    dual = np.zeros(T_)
    dense = rows.toarray() if sp.issparse(rows) else rows
    for t in range(T_):
        a, b = starts[t], starts[t + 1]
        Xq, yq = rows[a:b], yv[a:b]
        s = np.asarray(Xq @ est.coef_).ravel() if t else np.zeros(b - a)
        loss[t] = instance_pair_loss(s, yq, est.loss)
        d = yq[:, None] - yq[None, :]
        if (d > 0).any():
            ii, jj = np.nonzero(d > 0)
            diff = dense[a:b][ii] - dense[a:b][jj]
            xn2[t] = float((diff * diff).sum(axis=1).max())
        est.partial_fit(Xq, yq)
        dual[t] = est.dual_objective_
    if est.n_inexact_steps_:
        raise NotImplementedError(
            f"bounds: {est.n_inexact_steps_} optimal step(s) were not certified (max_iter); "
            "Lemma 1 needs every step's dual gain at least the subgradient's: raise max_iter"
        )
    in_S = loss > 0
    L_S = np.cumsum(np.where(in_S, loss, 0.0))
    sumX2 = np.cumsum(np.where(in_S, xn2, 0.0))

    def losses_of(u):
        sc = np.asarray(rows @ u).ravel()
        return np.array([instance_pair_loss(sc[starts[t]:starts[t + 1]],
                                            yv[starts[t]:starts[t + 1]], est.loss)
                         for t in range(T_)])  # fmt: skip

    def curve_of(u):
        gu = losses_of(u)
        return np.cumsum(np.where(in_S, gu, 0.0)) + 0.5 * float(u @ u) / C + 0.5 * C * sumX2

    w_T = np.array(est.coef_, dtype=np.float64)
    if comparator is None:
        fitted = clone(estimator).set_params(n_epochs=5, random_state=0).fit(X, yv, qid=qid)
        best = None
        for name, w in (("w_T of the run", w_T), ("5-epoch fit", np.asarray(fitted.coef_))):
            sc, curve = _best_scale(lambda s, w=w: curve_of(s * w))
            if best is None or curve[-1] < best[2][-1]:
                best = (f"{name}, scale {sc:.4g}", sc * w, curve)
        how, u, curve_bound = best
    else:
        how, u = "given", np.asarray(comparator, dtype=np.float64).ravel()
        if u.shape != w_T.shape:
            raise ValueError(f"bounds: comparator of shape {u.shape}, expected {w_T.shape}")
        curve_bound = curve_of(u)
    gu = losses_of(u)
    D = float(est.dual_objective_)
    P_last = 0.5 * float(w_T @ w_T) + C * float(losses_of(w_T).sum())
    report = {
        "observed": float(L_S[-1]),
        "bound": float(curve_bound[-1]),
        "quantity": f"ranking loss ({est.loss})",
        "theorem": f"thesis Sec. 5.3.4 + Lemma 1 (Cor. 1), update {est.update}",
        "rounds": T_,
        "mistakes": int(est.n_mistakes_),
        "updates": int(est.n_updates_),
        "dual_objective": D,
        "primal_averaged": P_last,
        "gap": P_last - D,
        "primal_comparator": 0.5 * float(u @ u) + C * float(gu.sum()),
        "comparator": u,
        "comparator_choice": how,
        "curve_observed": L_S,
        "curve_bound": curve_bound,
        "curve_dual": dual,
        "curve_dual_lower": C * L_S - 0.5 * C * C * sumX2,
        "curve_primal_comparator": 0.5 * float(u @ u) + C * np.cumsum(np.where(in_S, gu, 0.0)),
        "estimator": est,
    }
    return shown(report, show, plot_to)
