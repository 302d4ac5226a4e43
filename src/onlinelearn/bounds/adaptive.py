"""The regret bound of FTRL-Proximal with per-coordinate rates (:class:`~onlinelearn.
AdaGradClassifier`, :class:`~onlinelearn.AdaGradRegressor`), computed from the learner's state.

McMahan 2017, "A survey of algorithms and analysis for adaptive online learning" (JMLR 18),
Theorem 2 (the FTRL-Proximal regret bound): if x_{t+1} = argmin_x g_{1:t} x + r_{0:t}(x), each
r_t >= 0 is minimised at x_t (proximal) and r_{0:t} is 1-strongly convex w.r.t. a norm
||.||_{(t)}, then for every comparator x* and convex losses f_t with g_t in df_t(x_t)::

    sum_t f_t(x_t) - f_t(x*) <= r_{0:T}(x*) + 1/2 sum_t ||g_t||_{(t),*}^2

FTRL-Proximal (McMahan et al. 2013, Algorithm 1) is that update with, per weight i,
r_0(w) = beta/(2 alpha) w_i^2 + l1 |w_i| + l2/2 w_i^2 (minimised at w_1 = 0) and
r_t(w) = sigma_{t,i}/2 (w_i - w_{t,i})^2, sigma_{1:t,i} = sqrt(n_{t,i})/alpha; so
||w||_{(t)}^2 = sum_i ((beta + sqrt(n_{t,i}))/alpha + l2) w_i^2 and the bound reads::

    B(w*) = sum_i [ (beta/(2 alpha) + l2/2) w*_i^2 + l1 |w*_i|
                    + 1/2 sum_t sigma_{t,i} (w*_i - w_{t,i})^2 ]
            + 1/2 sum_t sum_i g_{t,i}^2 / ((beta + sqrt(n_{t,i}))/alpha + l2)

with n_{t,i} the sum of squares *including* round t.  The learner keeps, per weight,
sum_t sigma_t = sqrt(n)/alpha, sum_t sigma_t w_t = g_{1:T} - z and sum_t sigma_t w_t^2, and the
last sum as a scalar, so B(w*) is exact for any w*, in O(#weights).  With a box
|w*_i - w_{t,i}| <= D_i it gives the familiar per-coordinate form (beta = l1 = l2 = 0,
sum_t g_{t,i}^2 / sqrt(n_{t,i}) <= 2 sqrt(n_{T,i})): sum_i (D_i^2/(2 alpha) + alpha) sqrt(n_{T,i}).

The losses f_t are the learner's own (times the row's weight c): hinge, logistic, multiclass
hinge (max-loss rival), softmax, squared, absolute, epsilon-insensitive, all convex in W.
The bound covers the rounds since the model's state was created; a classifier whose label set
grew from two to more classes (or from K to K+1) changed its earlier rounds' losses, and its
bound is NaN from then on (announce every label with ``classes=`` in the first call).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone, is_classifier

from .._core import adaptive as AD

__all__ = ["losses", "regret_bound", "report"]


def _check_ftrl(est):
    if getattr(est, "_step", None) != AD.FTRL:
        raise ValueError(
            f"the FTRL-Proximal regret bound covers AdaGradClassifier and AdaGradRegressor, "
            f"not {type(est).__name__}"
        )
    est._stats()


def regret_bound(est, W) -> float:
    """B(W) (module docstring) for the comparator W, an (R, K) matrix over the learner's
    augmented features (the intercept's row last: weight of the constant feature of value
    ``intercept_scaling``), from the fitted FTRL-Proximal learner ``est``."""
    _check_ftrl(est)
    alpha, beta, l1, l2 = est._rates()
    W = np.asarray(W, dtype=np.float64)
    if W.shape != est._A.shape:
        raise ValueError(f"comparator of shape {W.shape}, expected {est._A.shape}")
    sig = np.sqrt(est._B) / alpha  # sum_t sigma_t
    sig_w = est._G1 - est._A  # sum_t sigma_t w_t
    prox = 0.5 * (sig * W * W - 2.0 * W * sig_w + est._Q)
    r0 = (beta / (2.0 * alpha) + 0.5 * l2) * W * W + l1 * np.abs(W)
    return float((r0 + prox).sum() + 0.5 * est._st[AD.ST_DNORM])


def losses(est, X, y, W) -> np.ndarray:
    """The learner's per-row losses l(W^T x_t, y_t) of the weights W (R, K) on (X, y)."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    if est.fit_intercept:
        X = np.hstack([X, np.full((X.shape[0], 1), est._intercept_value())])
    P = X @ W
    code = est._loss_code()
    if is_classifier(est):
        t = np.searchsorted(est.classes_, y)
        if code in (AD.HINGE, AD.LOGISTIC):
            m = np.where(t == 1, 1.0, -1.0) * P[:, 0]
            return np.maximum(0.0, 1.0 - m) if code == AD.HINGE else np.logaddexp(0.0, -m)
        rows = np.arange(len(t))
        py = P[rows, t]
        if code == AD.SOFTMAX:
            mx = P.max(axis=1)
            return mx + np.log(np.exp(P - mx[:, None]).sum(axis=1)) - py
        rival = P.copy()
        rival[rows, t] = -np.inf
        return np.maximum(0.0, 1.0 - py + rival.max(axis=1))
    r = P[:, 0] - np.asarray(y, dtype=np.float64)
    if code == AD.SQUARED:
        return 0.5 * r * r
    if code == AD.ABSOLUTE:
        return np.abs(r)
    return np.maximum(0.0, np.abs(r) - float(est.epsilon))


def report(est, X, y, W, sample_weight=None) -> dict:
    """Run a fresh clone of ``est`` once over (X, y) in order (one ``partial_fit``; a
    classifier is told every label of y first) and put its regret against the comparator W
    beside :func:`regret_bound`.  Returns ``observed`` (sum_t c_t (l_t(w_t) - l_t(W))),
    ``bound``, ``online_loss``, ``comparator_loss`` and ``estimator``."""
    run = clone(est)
    kw = {"classes": np.unique(y)} if is_classifier(run) else {}
    run.partial_fit(X, y, sample_weight=sample_weight, **kw)
    _check_ftrl(run)
    c = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    online = float(run._st[AD.ST_LOSS])
    comp = float((c * losses(run, X, y, W)).sum())
    return {"observed": online - comp, "bound": regret_bound(run, W), "online_loss": online,
            "comparator_loss": comp, "estimator": run}  # fmt: skip
