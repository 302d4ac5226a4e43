"""report for :class:`onlinelearn.structured.SequenceTagger` with ``update='self-tuned'``:
thesis Theorem 7 (Sec. 5.3.3, the algorithm of Fig. 5.4).

Theorem 7: for the run of Fig. 5.4 (f(w) = ||w||^2 / 2, a cost rho with values in
{0} u [1, inf), here the Hamming cost) and every u with ||u|| <= sqrt(2U)::

    sum_t rho(y_t, y'_t) <= Loss(u) + X sqrt(8 U Loss(u)) + 8 X^2 U,
    Loss(u) = sum_t max_{y'} [rho(y_t, y') - <u, phi(x_t, y_t) - phi(x_t, y')>]_+

with y'_t the online prediction (the argmax at theta_t).  X: the statement takes the largest
||phi(x_t, y') - phi(x_t, y_t)|| over all y'; its proof (Corollary 3 on the rounds with
rho > 0, the loss [rho_t - <w, a_t>]_+ being ||a_t||-Lipschitz) only uses X = max_t ||a_t|| of
the predictions made, which is the learner's own X_T (``st[X_MAX]``): that X is used here
(smaller, so the bound is the proof's, a little tighter than the statement's).  The bound of
a prefix is the theorem on that prefix (the run on it is the same).

Comparator: u = s sqrt(2U) u0 / ||u0|| for u0 the run's final weights (``coef_``,
``transitions_``: averaged when ``average``; or ``comparator=(W, Tr)``) and the s in (0, 1]
of a grid whose bound ends lowest (any u in the ball may be used).  Loss(u) by the
loss-augmented Viterbi (the Hamming cost decomposes per position).

Refused: update='PA' and 'perceptron' (their guarantees are the regret bound after Eq. (5.24),
Corollary 1 with a fixed c, and Collins' Perceptron bound, neither written here).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from .table import shown

__all__ = ["is_tagger", "tagger_report", "augmented_loss"]

_S = np.linspace(0.0, 1.0, 41)[1:]


def is_tagger(estimator):
    """True for :class:`onlinelearn.structured.SequenceTagger`."""
    from ..structured import SequenceTagger

    return isinstance(estimator, SequenceTagger)


def augmented_loss(Xs, ys, W, Tr):
    """max_{y'} [rho(y, y') - <u, phi(x, y) - phi(x, y')>]_+ for one sequence (token rows Xs,
    tag codes ys; u = (W, Tr), Tr's last row from BOS), by the loss-augmented Viterbi."""
    E = np.asarray(Xs @ W)
    n, K = E.shape
    A = E + (np.arange(K)[None, :] != ys[:, None])
    delta = A[0] + Tr[K]
    for i in range(1, n):
        delta = np.max(delta[:, None] + Tr[:K], axis=0) + A[i]
    true = E[np.arange(n), ys].sum() + Tr[K, ys[0]] + Tr[ys[:-1], ys[1:]].sum()
    return max(float(delta.max() - true), 0.0)


def tagger_report(estimator, X_seqs, y_seqs, *, comparator=None, show=True, plot_to=None):
    """Theorem 7 beside the run (module docstring): observed = the online Hamming cost."""
    from .._core import structured as K_

    if estimator.update != "self-tuned":
        raise NotImplementedError(
            "bounds.report covers SequenceTagger with update='self-tuned' (thesis Theorem 7, "
            f"Fig. 5.4); got update={estimator.update!r}"
        )
    est = clone(estimator)
    y_seqs = [np.asarray(y) for y in y_seqs]
    classes = np.unique(np.concatenate(y_seqs))
    T = len(y_seqs)
    cost, X = np.zeros(T), np.zeros(T)
    prev = 0.0
    for t in range(T):
        est.partial_fit([X_seqs[t]], [y_seqs[t]], classes=classes)
        cost[t] = est._st[K_.N_TOKEN_ERRORS] - prev
        prev = float(est._st[K_.N_TOKEN_ERRORS])
        X[t] = est._st[K_.X_MAX]
    if comparator is None:
        comparator = (np.asarray(est.coef_), np.asarray(est.transitions_))
    W0, Tr0 = (np.asarray(a, dtype=np.float64) for a in comparator)
    nrm = float(np.sqrt(np.sum(W0 * W0) + np.sum(Tr0 * Tr0)))
    U = float(est.U)
    codes = [np.searchsorted(est.classes_, y) for y in y_seqs]
    best = None
    for s in _S if nrm > 0 else [0.0]:
        f = s * np.sqrt(2.0 * U) / nrm if nrm > 0 else 0.0
        L = np.cumsum([augmented_loss(X_seqs[t], codes[t], f * W0, f * Tr0) for t in range(T)])
        curve = L + X * np.sqrt(8.0 * U * L) + 8.0 * X * X * U
        if best is None or curve[-1] < best[1][-1]:
            best = (f, curve, L)
    out = {
        "estimator": est,
        "observed": float(cost.sum()),
        "updates": int(est.n_updates_),
        "bound": float(best[1][-1]),
        "quantity": "Hamming cost",
        "theorem": "Shalev-Shwartz 2007 (thesis), Theorem 7 (Sec. 5.3.3, Fig. 5.4)",
        "rounds": T,
        "loss_comparator": float(best[2][-1]),
        "X": float(X[-1]),
        "comparator": (best[0] * W0, best[0] * Tr0),
        "curve_observed": np.cumsum(cost),
        "curve_bound": best[1],
    }
    return shown(out, show, plot_to)
