"""The empirical online confusion risk (Definition 4) and the bounds of Theorems 1 and 2 of the
COPA paper (:mod:`onlinelearn.metrics`)."""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np

from ._confusion import (
    _as_1d,
    _as_square_matrix,
    _encode,
    _resolve_labels,
    confusion_operator_norm,
    operator_norm,
)


# --------------------------------------------------------------------------- online confusion risk
def online_confusion_risk(y, losses, labels) -> np.ndarray:
    """Empirical (conditional) online confusion risk ``C_hat_{l,y}(h, X)``, Definition 4, eq. (11).

    For the hypotheses ``h_0, ..., h_{T-1}`` an online learner produced on ``(x_t, y_t)``::

        C_hat = sum_{t=1}^T (1 / T_{y_t}) L_hat_{|y_t}(h_{t-1}, x_t),

    where ``L_hat_{|p}(h, x)`` (Definition 2) is zero except for its row ``p``, whose entries are
    ``l_{q|p}(h, x)`` for ``q != p`` and 0 on the diagonal. Entrywise::

        C_hat[p, q] = (1 / T_p) sum_{t : y_t = p} l_{q|p}(h_{t-1}, x_t)  (q != p),
        C_hat[p, p] = 0.

    With the misclassification losses of Example 1 (``l_{q|p}(h, x) = 1[h(x) = q]``, i.e. ``losses``
    the one-hot encoding of the progressive predictions), ``C_hat`` is the confusion matrix of
    those predictions (:func:`confusion_matrix_conditional`).

    Parameters
    ----------
    y : array-like of shape (T,)
        The labels ``y_t`` of the rounds, each in ``labels``.
    losses : array-like of shape (T, Q)
        ``losses[t, q] = l_{q|y_t}(h_{t-1}, x_t)``: the loss the hypothesis in force before round
        ``t`` suffered for favoring class ``labels[q]`` over ``y_t``; nonnegative and finite (the
        paper's losses take values in R+). The entry of the true class, ``losses[t, y_t]``, is
        not used.
    labels : array-like of shape (Q,)
        The classes, in the order of the columns of ``losses`` and of the rows/columns of the
        result.

    Returns
    -------
    C_hat : ndarray of shape (Q, Q)
        A class absent from ``y`` (``T_p = 0``) has a zero row.
    """
    y = _as_1d("y", y)
    labels = _resolve_labels(labels)
    losses = np.asarray(losses, dtype=float)
    if y.shape[0] == 0:
        raise ValueError("y is empty: the online confusion risk is undefined.")
    Q = labels.size
    if losses.shape != (y.shape[0], Q):
        raise ValueError(
            f"losses must have shape (n_rounds, n_labels) = ({y.shape[0]}, {Q}), "
            f"got {losses.shape}."
        )
    if not np.all(np.isfinite(losses)) or np.any(losses < 0):
        raise ValueError("losses must be finite and nonnegative.")
    idx = _encode("y", y, labels)
    sums = np.zeros((Q, Q))
    np.add.at(sums, idx, losses)
    T = np.bincount(idx, minlength=Q).astype(float)
    C_hat = np.divide(sums, T[:, None], out=np.zeros_like(sums), where=T[:, None] > 0)
    np.fill_diagonal(C_hat, 0.0)
    return C_hat


class ConfusionRiskBound(NamedTuple):
    """Pieces of the COPA confusion-risk bound (eqs. 13 and 15).

    ``bound = empirical_norm + deviation``, where ``empirical_norm = ||C_hat||`` and
    ``deviation`` bounds ``||C_{l,y}(h) - C_hat_{l,y}(h, X)||`` (eq. 12).
    """

    bound: float
    empirical_norm: float
    deviation: float


def confusion_risk_bound(
    C_hat,
    class_counts,
    M,
    delta,
    *,
    form: Literal["stated", "derived"] = "stated",
) -> ConfusionRiskBound:
    """High-probability bound on the confusion risk, COPA paper Theorem 1 (eq. 13) / Theorem 2 (15).

    If every loss satisfies ``0 <= l_{q|p} <= M``, then for any ``delta`` in (0, 1], with
    probability at least ``1 - delta`` over ``X ~ D_{X|y}``, the paper states (eqs. 12-13)::

        ||C_{l,y}(h)|| <= ||C_hat_{l,y}(h, X)|| + M sqrt( 2Q sum_p (1 / T_p) log(Q / delta) ),

    where ``C_{l,y}(h)`` is the online confusion risk of ``h_0, ..., h_{T-1}`` (Definition 3) and
    ``C_hat_{l,y}(h, X)`` its empirical counterpart (Definition 4; :func:`online_confusion_risk`).
    Theorem 2 gives the same right-hand side for ``||C_l(h_bar)||``, the confusion risk of the
    average hypothesis ``h_bar = (1/T) sum_t h_{t-1}``, when the losses are convex in ``h``
    (eq. 15). Both also hold for a random label sequence ``Y`` (end of Sec. 3.2).

    Discrepancy in the paper. The proof of Theorem 1 applies the rectangular matrix Azuma
    inequality (Corollary 1) to ``Q x Q`` matrices, whose dimension factor is
    ``d1 + d2 = 2Q``: ``P(||sum_t U_t|| >= eps) <= 2Q exp(-eps^2 / (2 M^2 Q sum_t T_{y_t}^-2))``.
    Setting that to ``delta`` gives ``log(2Q / delta)``, while eqs. (12), (13) and (15) print
    ``log(Q / delta)``. ``form="stated"`` (default) reproduces the theorems as printed;
    ``form="derived"`` uses ``log(2Q / delta)``, the value the proof supports (slightly larger).

    Classes with ``T_p = 0`` are left out of ``sum_p 1 / T_p``: the proof's sum is
    ``sum_t T_{y_t}^-2 = sum_{p : T_p > 0} 1 / T_p`` (the paper assumes all ``T_p > 1`` for
    simplicity). ``Q`` is the size of ``C_hat``.

    Parameters
    ----------
    C_hat : array-like of shape (Q, Q)
        Empirical online confusion risk.
    class_counts : array-like of shape (Q,)
        ``T_p``, the number of rounds of each class, in the order of ``C_hat``'s rows.
    M : float
        Upper bound on the losses, ``M > 0``.
    delta : float
        Confidence parameter in (0, 1].
    form : {"stated", "derived"}, default="stated"
        Logarithmic term ``log(Q / delta)`` (as printed) or ``log(2Q / delta)`` (as derived).

    Returns
    -------
    ConfusionRiskBound
        ``(bound, empirical_norm, deviation)`` with
        ``deviation = M sqrt(2Q sum_p (1/T_p) log(Q/delta))`` (``2Q/delta`` if ``form="derived"``).

    Examples
    --------
    With the misclassification losses (``M = 1``), ``C_hat`` is the confusion matrix of the
    progressive predictions, and Theorem 1 bounds the online confusion risk of ``h_0..h_{T-1}``
    (these losses are not convex, so Theorem 2 does not apply):

    >>> import numpy as np
    >>> from onlinelearn import Perceptron
    >>> from onlinelearn.datasets import load_dna
    >>> from onlinelearn.metrics import confusion_matrix_conditional, confusion_risk_bound
    >>> X, y = load_dna("train")
    >>> online = Perceptron().partial_fit_predict(X, y)
    >>> C_hat = confusion_matrix_conditional(y, online)
    >>> res = confusion_risk_bound(C_hat, np.unique(y, return_counts=True)[1], M=1.0, delta=0.05)
    >>> print(f"{res.empirical_norm:.3f} + {res.deviation:.3f} = {res.bound:.3f}")
    0.210 + 0.356 = 0.566
    """
    C_hat = _as_square_matrix("C_hat", C_hat)
    Q = C_hat.shape[0]
    T = np.asarray(class_counts, dtype=float)
    if T.shape != (Q,):
        raise ValueError(f"class_counts must have shape ({Q},), got {T.shape}.")
    if not np.all(np.isfinite(T)) or np.any(T < 0) or np.any(T != np.round(T)):
        raise ValueError("class_counts must be nonnegative integers.")
    if not np.any(T > 0):
        raise ValueError("class_counts are all zero: the bound needs at least one round.")
    if not (np.isfinite(M) and M > 0):
        raise ValueError(f"M must be a positive finite number, got {M!r}.")
    if not (0 < delta <= 1):
        raise ValueError(f"delta must be in (0, 1], got {delta!r}.")
    if form == "stated":
        log_term = math.log(Q / delta)
    elif form == "derived":
        log_term = math.log(2 * Q / delta)
    else:
        raise ValueError(f"form must be 'stated' or 'derived', got {form!r}.")
    inv_T = float(np.sum(1.0 / T[T > 0]))
    deviation = float(M) * math.sqrt(2 * Q * inv_T * log_term)
    empirical_norm = operator_norm(C_hat)
    return ConfusionRiskBound(empirical_norm + deviation, empirical_norm, deviation)


# --------------------------------------------------------------------------- Theorem 2, computed
def hinge_confusion_losses(scores, y_codes) -> np.ndarray:
    """The losses of COPA's family (paper eq. (16), Example 2) for linear scores.

    ``out[t, q] = [scores[t, q] + 1/(Q-1)]_+`` for ``q != y_codes[t]`` and 0 for the true class:
    the row ``y_t`` of ``L_hat_{|y_t}(h, x_t)`` (Definition 2) for ``h(x) = scores``.  These
    losses are convex in ``h`` (eq. (14)), which Theorem 2 needs; with columns of ``W`` summing
    to zero (COPA) the predicted class has a nonnegative score, so a confusion of ``p`` with
    ``q`` costs at least 1/(Q-1): ``C(h) <= (Q-1) C_l(h)`` entrywise (Lemma 1, scaled).

    Parameters
    ----------
    scores : array-like of shape (n, Q)
    y_codes : array-like of int, shape (n,), values in 0..Q-1
    """
    S = np.asarray(scores, dtype=float)
    if S.ndim != 2 or S.shape[1] < 2:
        raise ValueError(f"scores must have shape (n, Q) with Q >= 2, got {S.shape}.")
    yc = np.asarray(y_codes)
    if yc.shape != (S.shape[0],) or (yc.size and (yc.min() < 0 or yc.max() >= S.shape[1])):
        raise ValueError("y_codes must hold one class index in 0..Q-1 per row of scores.")
    out = np.maximum(S + 1.0 / (S.shape[1] - 1), 0.0)
    out[np.arange(S.shape[0]), yc] = 0.0
    return out


class AveragedConfusionBound(NamedTuple):
    """Theorem 2 of the COPA paper for one online pass, beside the value it bounds.

    ``observed``: ``||C_l(h_bar)||``, the confusion risk (Definition 1) of the averaged
    hypothesis ``h_bar = (1/T) sum_{t=1}^T h_{t-1}`` under COPA's hinge losses (eq. (16)),
    estimated on a held-out sample; ``bound = empirical_norm + deviation`` the right-hand side
    of eq. (15) with ``empirical_norm = ||C_hat_{l,y}(h, X)||`` (Definition 4: the losses of
    ``h_{t-1}`` on ``x_t``) and ``deviation = M sqrt(2Q sum_p 1/T_p log(Q/delta))``;
    ``M`` the bound on the losses used; ``observed_01``: ``||C(h_bar)||``, the zero-diagonal
    confusion matrix of ``h_bar``'s predictions on the held-out sample (what the paper reports);
    ``n_rounds``: T; ``loss_max``: the largest hinge loss met (online and held-out), <= M.
    """

    observed: float
    bound: float
    empirical_norm: float
    deviation: float
    M: float
    observed_01: float
    n_rounds: int
    loss_max: float


def _row_norms(X) -> np.ndarray:
    import scipy.sparse as sp

    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return np.linalg.norm(np.asarray(X, dtype=float), axis=1)


def averaged_confusion_bound(
    estimator, X, y, X_test, y_test, *, delta=0.05, M=None, form="stated"
) -> AveragedConfusionBound:
    """Theorem 2 of the COPA paper (eq. (15)) computed for one online pass, with the observed value.

    ``estimator`` (not modified; a copy with ``average=False`` is used) learns ``(X, y)`` in one
    pass, in the given order, one row at a time.  With ``W_t = [w_1^t .. w_Q^t]`` (and intercepts
    ``c^t``) the hypothesis after t rounds (``W_0 = 0``) and COPA's convex hinge losses
    ``l_{q|p}(h, x) = [<w_q, x> + c_q + 1/(Q-1)]_+`` (eq. (16)), it computes:

    * ``C_hat`` (Definition 4): ``C_hat[p, q] = (1/T_p) sum_{t: y_t = p} l_{q|p}(h_{t-1}, x_t)``;
    * ``h_bar = (1/T) sum_{t=1}^{T} h_{t-1}`` (the paper's average: ``W_0 .. W_{T-1}``);
    * the right-hand side of (15), ``||C_hat|| + M sqrt(2Q sum_p 1/T_p log(Q/delta))``, through
      :func:`confusion_risk_bound` (``form`` as there);
    * ``observed = ||C_l(h_bar)||``: the per-class mean losses of ``h_bar`` on ``(X_test, y_test)``,
      an estimate of the confusion risk of Definition 1; and ``||C(h_bar)||`` from its predictions.

    ``M`` must bound every loss of every ``h_t`` (Theorem 1's assumption ``0 <= l <= M``); the
    hinge losses of linear scores are unbounded on an unbounded domain, so ``M=None`` takes the
    Cauchy-Schwarz bound on the points at hand::

        M = max_{t < T} max_q (||w_q^t|| R + |c_q^t|) + 1/(Q-1),   R = max ||x|| over X and X_test

    which bounds every loss of every ``h_t`` (hence of ``h_bar``, by convexity) on these points,
    but not on points of larger norm: for a distribution with unbounded support (the Gaussians of
    the toy) the theorem's assumption does not hold, and this M is a plug-in.

    Reading of the theorem (checked by the tests, which find ``observed <= bound`` on every
    stream tried): the proof is "convexity and eq. (6)"; convexity gives
    ``C_l(h_bar)[p, q] <= (1/T) sum_t C_l(h_{t-1})[p, q]``, an average over *all* rounds, while
    row p of ``C_{l,y}(h)`` averages over the T_p rounds of class p only; the two agree when the
    hypotheses change little, which is what a large T gives.  We compute the statement as printed.

    Parameters
    ----------
    estimator : a linear multiclass learner with ``partial_fit``, ``coef_`` (Q, d) and
        ``intercept_`` (COPA: any ``loss``; Q >= 2 classes in ``y`` and ``y_test`` together).
    X, y : the stream (T rows), learned once in order.
    X_test, y_test : a held-out sample of the same distribution.
    delta : float in (0, 1]; M : float > 0 or None; form : {'stated', 'derived'}.

    Returns
    -------
    AveragedConfusionBound
    """
    from sklearn.base import clone

    y = _as_1d("y", y)
    y_test = _as_1d("y_test", y_test)
    labels = np.unique(np.concatenate([y, y_test]))
    Q = labels.size
    if Q < 2:
        raise ValueError("averaged_confusion_bound needs at least two classes.")
    T = y.shape[0]
    if T == 0 or y_test.shape[0] == 0:
        raise ValueError("the stream and the held-out sample must not be empty.")
    if not (0 < delta <= 1):
        raise ValueError(f"delta must be in (0, 1], got {delta!r}.")
    est = clone(estimator)
    if "average" in est.get_params():
        est.set_params(average=False)
    yc = _encode("y", y, labels)
    yc_test = _encode("y_test", y_test, labels)
    d = X.shape[1]
    W = np.zeros((Q, d))  # h_0 = 0
    c = np.zeros(Q)
    W_sum = np.zeros((Q, d))
    c_sum = np.zeros(Q)
    losses = np.empty((T, Q))
    R = max(float(_row_norms(X).max()), float(_row_norms(X_test).max()))
    lip = 0.0  # max over t < T and q of ||w_q^t|| R + |c_q^t|
    for t in range(T):
        xt = X[t : t + 1]
        s = np.asarray(xt @ W.T).reshape(1, Q) + c
        losses[t] = hinge_confusion_losses(s, yc[t : t + 1])[0]
        W_sum += W
        c_sum += c
        lip = max(lip, float(np.max(np.linalg.norm(W, axis=1) * R + np.abs(c))))
        est.partial_fit(xt, y[t : t + 1], classes=labels)
        W = np.asarray(est.coef_, dtype=float).reshape(Q, d)
        c = np.asarray(est.intercept_, dtype=float).reshape(Q)
    W_bar, c_bar = W_sum / T, c_sum / T
    C_hat = online_confusion_risk(y, losses, labels)
    if M is None:
        M = lip + 1.0 / (Q - 1)
    S_test = np.asarray(X_test @ W_bar.T).reshape(-1, Q) + c_bar
    test_losses = hinge_confusion_losses(S_test, yc_test)
    observed = operator_norm(online_confusion_risk(y_test, test_losses, labels))
    pred = labels[np.argmax(S_test, axis=1)]
    observed_01 = confusion_operator_norm(y_test, pred, labels=labels)
    counts = np.bincount(yc, minlength=Q)
    res = confusion_risk_bound(C_hat, counts, M=float(M), delta=delta, form=form)
    loss_max = float(max(losses.max(), test_losses.max()))
    return AveragedConfusionBound(
        observed, res.bound, res.empirical_norm, res.deviation, float(M), observed_01, T,
        loss_max,
    )  # fmt: skip
