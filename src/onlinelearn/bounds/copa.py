"""COPA's Theorem 2 (Ralaivola 2012, eq. (15)) along one pass: :func:`_copa_report`."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ._stream import _augmented, _row_norms
from .table import format_table, plot


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
    from ..metrics import (
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
