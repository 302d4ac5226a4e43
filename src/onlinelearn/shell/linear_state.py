"""Model files and merging of the linear learners: rebuild a fitted estimator from its
``_get_state()`` (every other family rebuilds itself through ``_from_state``), and
``merge_models`` (the mixture of several linear learners' weights, weighted by their updates)."""

from __future__ import annotations

import copy

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core import links as L
from .._core.euclid_pass import power_weight_sum
from .._core.online_loop import (
    recompute_aggregate,
)
from .._core.state import (
    DUAL,
    DUAL_QUAD,
    EXP_SHIFT,
    M_COUNT,
    N_MISTAKES,
    N_ROUNDS,
    N_ST,
    N_UPDATES,
    S_SUM,
    X_MAX,
    params_of,
)
from . import validation as V
from .base import OnlineLinearClassifier
from .linear_pass import _exp_shift
from .meta import check_shape, params_from_json
from .snapshot import _WEIGHT_DTYPES

__all__ = ["estimator_from_state", "merge_models"]


def estimator_from_state(meta, arrays):
    """Rebuild a fitted estimator from its ``_get_state()`` output.

    The linear learners are rebuilt here; any other public estimator class of ``onlinelearn``
    rebuilds itself with its classmethod ``_from_state(meta, arrays)`` (docs/CONTRACT.md)."""
    import onlinelearn

    name = meta["class"]
    cls = getattr(onlinelearn, name, None)
    if not isinstance(cls, type):
        raise ValueError(f"unknown estimator class {name!r} in model state")
    if not issubclass(cls, OnlineLinearClassifier):
        # every other family rebuilds itself: ``cls._from_state(meta, arrays)``
        from_state = getattr(cls, "_from_state", None)
        if from_state is None:
            raise ValueError(f"estimator class {name!r} cannot be read from a model file")
        return from_state(meta, arrays)
    route = getattr(cls, "_route_from_state", None)
    if route is not None:  # a learner whose configuration may belong to another family
        est = route(meta, arrays)
        if est is not None:
            return est
    params = params_from_json(meta["params"])
    decode = getattr(cls, "_decode_params", None)
    if decode is not None:  # link, loss and step objects written as JSON (engine.learner)
        params = decode(params)
    est = cls(**params)
    est.n_features_in_ = int(meta["n_features_in_"])
    if "n_iter_" in meta:  # the passes of the last fit or partial_fit (learners that count them)
        n_iter = meta["n_iter_"]
        if isinstance(n_iter, bool) or not isinstance(n_iter, int) or n_iter < 0:
            raise ValueError(f"model state is inconsistent: n_iter_ = {n_iter!r}")
        est.n_iter_ = n_iter
    est.classes_ = np.asarray(arrays["classes_"])
    theta = np.asarray(arrays["theta"])
    # the weights keep the dtype they were saved in (float32 or float64); averaging sums and
    # scalars are float64
    wdt = theta.dtype if theta.dtype in _WEIGHT_DTYPES else np.dtype(np.float64)
    est._theta = np.ascontiguousarray(theta, dtype=wdt)
    if ("U" in arrays) != est._u_layout():
        raise ValueError(
            "model state is inconsistent: averaging arrays of another layout (the Euclidean "
            "average is one array U; the other links and average=False keep A and lastS)"
        )
    if "U" in arrays:
        est._A = np.ascontiguousarray(arrays["U"], dtype=np.float64)
        est._lastS = np.zeros((1, 1))
    else:
        est._A = np.ascontiguousarray(arrays["A"], dtype=np.float64)
        est._lastS = np.ascontiguousarray(arrays["lastS"], dtype=np.float64)
    est._st = np.ascontiguousarray(arrays["st"], dtype=np.float64)
    check_shape("st", est._st, (N_ST,))
    est.class_counts_ = np.asarray(arrays["class_counts"], dtype=np.int64)
    if isinstance(est.intercept_scaling, str) and est.fit_intercept:
        if "intercept_scaling_" not in arrays:
            raise ValueError(
                "model state is inconsistent: intercept_scaling='auto' without its value"
            )
        est.intercept_scaling_ = float(np.asarray(arrays["intercept_scaling_"]).reshape(-1)[0])
        if not (np.isfinite(est.intercept_scaling_) and est.intercept_scaling_ > 0):
            raise ValueError("model state is inconsistent: intercept_scaling_ must be > 0")
    R = est.n_features_in_ + (1 if est.fit_intercept else 0)
    K = len(est.classes_)
    n_cols = 1 if (K <= 2 and not est._always_multiclass) else K
    if est._theta.shape != (R, n_cols):
        raise ValueError(
            f"model state is inconsistent: weights of shape {est._theta.shape}, expected "
            f"{(R, n_cols)} for {K} classes and {est.n_features_in_} features"
        )
    if est.average and (
        est._A.shape != est._theta.shape
        or ("U" not in arrays and est._lastS.shape != est._theta.shape)
    ):
        raise ValueError("model state is inconsistent: averaging arrays have the wrong shape")
    est._weights_matrix()
    return est


def _average_power(est):
    """eta of the weighted average the Euclidean state of ``est`` keeps (0: uniform)."""
    if not (est.average and est._u_layout()):
        return 0.0
    return float(getattr(est, "average_power", 0.0))


def weighted_average_state(theta, avg, T, power):
    """(S, U) of the one-array state that reads out the average ``avg`` after T rounds of the
    weighted average of power eta > 0 (:mod:`onlinelearn._core.euclid_pass`): S = sum_{t<=T}
    t^eta, the S of a stream of T rounds (so later rounds weigh as they would have in it), and
    U = S theta - S avg, so that (S theta - U) / S = avg (up to rounding, ~1e-16 |theta|)."""
    S = float(power_weight_sum(float(T), float(power)))
    U = S * np.asarray(theta, dtype=np.float64) - S * np.asarray(avg, dtype=np.float64)
    return S, np.ascontiguousarray(U)


def merge_models(models):
    """Average models trained on disjoint shards into one, weighted by their ``n_updates_``.

    All models must be of one class with the same parameters (``random_state`` aside) and the
    same number of features; their label sets may differ (the union is used, a class unknown to
    a shard has zero weights there).  The merged ``theta`` is ``sum_i (u_i / sum u) theta_i``
    with ``u_i`` the number of updates of shard i (equal weights when no shard updated), counters
    (``t_``, ``n_updates_``, ``n_mistakes_``, class counts) are summed, and with ``average=True``
    the merged averaged hypothesis is the same weighted mean of the shards' averages (with
    ``average_power`` > 0 it is held as the average of one stream of ``t_`` rounds: the rounds
    that follow weigh (t_ + 1)^eta, ... as in one stream).  For the
    Euclidean link this is the weighted mean of the primal weights (a one-shot parameter-mixing
    step, as in distributed Perceptron training); for the other links it is the mean of the dual
    sums theta, which is where those learners add their updates.
    """
    models = list(models)
    if not models:
        raise ValueError("merge_models needs at least one fitted model")
    first = models[0]
    cls = type(first)
    ref = {k: v for k, v in first.get_params().items() if k != "random_state"}
    for m in models:
        check_is_fitted(m, "classes_")
        if type(m) is not cls:
            raise ValueError("merge_models: all models must be of the same class")
        p = {k: v for k, v in m.get_params().items() if k != "random_state"}
        if p != ref:
            raise ValueError("merge_models: the models' parameters differ")
        if m.n_features_in_ != first.n_features_in_:
            raise ValueError("merge_models: the models have different numbers of features")
    classes = models[0].classes_
    for m in models[1:]:
        classes = V.merge_labels(classes, m.classes_)
    shards = []
    b0 = None
    for m in models:
        c = copy.deepcopy(m)
        c._grow(classes)
        c._flush_frame()
        if isinstance(c.intercept_scaling, str):
            b = c._intercept_value()
            b0 = b if b0 is None else b0
        if isinstance(c.intercept_scaling, str) and b != b0:
            # intercept_scaling='auto' fixed b per shard; the bias is b times the weight of the
            # constant feature: express every shard's bias with the first shard's b
            if c._link != L.EUCLID:
                raise ValueError(
                    "merge_models: the models' intercept feature values differ "
                    f"({b0} and {b}); merging them is exact only for the Euclidean learners"
                )
            d = c.n_features_in_
            c._theta[d] = c._theta[d] * (b / b0)
            if c.average:
                c._A[d] *= b / b0  # A or U: linear in the weights (lastS is a time)
            c.intercept_scaling_ = shards[0].intercept_scaling_
        shards.append(c)
    u = np.array([s.n_updates_ for s in shards], dtype=np.float64)
    omega = u / u.sum() if u.sum() > 0 else np.full(len(shards), 1.0 / len(shards))
    out = copy.deepcopy(shards[0])
    mixed = sum(o * s._theta.astype(np.float64) for o, s in zip(omega, shards, strict=True))
    out._theta = mixed.astype(first._theta.dtype)
    st = np.zeros(N_ST)
    st[DUAL] = st[DUAL_QUAD] = np.nan  # a mixture of runs: no kept dual
    for s in shards:
        counters = [N_ROUNDS, N_UPDATES, N_MISTAKES]
        st[counters] += s._st[counters]
        st[X_MAX] = max(st[X_MAX], s._st[X_MAX])
        st[M_COUNT] += s._st[M_COUNT]
    out.class_counts_ = sum(s.class_counts_ for s in shards)
    if out.average:
        avgs = [s._weights_matrix() for s in shards]
        T = st[N_ROUNDS]
        power = _average_power(out)
        if power != 0.0:
            # the weighted average: held as the average of one stream of T rounds
            avg = sum(o * a.astype(np.float64) for o, a in zip(omega, avgs, strict=True))
            st[S_SUM], out._A = weighted_average_state(out._theta, avg, T, power)
            out._lastS = np.zeros((1, 1))
        else:
            total = T * sum(o * a for o, a in zip(omega, avgs, strict=True))
            st[S_SUM] = 0.0
            if out._u_layout():
                out._A = -total  # S theta - U with S = 0
                out._lastS = np.zeros((1, 1))
            else:
                out._A = total
                out._lastS = np.zeros_like(out._theta)
    out._st = st
    par = params_of(*out._codes(out._n_weights()))
    out._st[EXP_SHIFT] = _exp_shift(out._theta, par.balanced) if out._link == L.ENTROPY else 0.0
    recompute_aggregate(out._theta, out._st, par.link, par.p, par.balanced)
    out._weights_matrix()
    return out
