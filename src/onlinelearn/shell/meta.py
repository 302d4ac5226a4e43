"""Small pieces every estimator family shares: labels from scores, and model-file metadata.

Model files store ``meta = {"class", "params", "n_features_in_", ...}`` (docs/CONTRACT.md); the
parameters must be JSON types, so a seed object becomes ``None``, a ``class_weight`` dict with
non-string keys becomes a list of ``[label, weight]`` pairs and a dtype its name.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["labels_from_scores", "params_from_json", "params_to_json", "state_meta"]


def labels_from_scores(classes, scores):
    """Predicted labels from decision values: one class -> that class; a 1-D score -> the sign
    (positive: ``classes[1]``); (n, K) scores -> the argmax (first maximum)."""
    scores = np.asarray(scores)
    if len(classes) == 1:
        return np.repeat(classes, scores.shape[0])
    if scores.ndim == 1:
        return classes[(scores > 0).astype(np.int64)]
    return classes[np.argmax(scores, axis=1)]


def _json_label(v):
    return v.item() if isinstance(v, np.generic) else v


def params_to_json(estimator) -> dict:
    """``get_params()`` in JSON types: seeds other than ints become None, class-weight dicts
    become ``{"__pairs__": [[label, weight], ...]}``, dtypes their names."""
    params = estimator.get_params()
    rs = params.get("random_state")
    if "random_state" in params:
        params["random_state"] = int(rs) if isinstance(rs, numbers.Integral) else None
    cw = params.get("class_weight")
    if isinstance(cw, dict):
        params["class_weight"] = {"__pairs__": [[_json_label(k), float(v)] for k, v in cw.items()]}
    if params.get("dtype") is not None:
        params["dtype"] = np.dtype(params["dtype"]).name
    for k, v in params.items():
        if isinstance(v, np.generic):
            params[k] = v.item()
    return params


def params_from_json(params: dict) -> dict:
    """Inverse of :func:`params_to_json` for the parameters it changed (seeds stay ints)."""
    params = dict(params)
    cw = params.get("class_weight")
    if isinstance(cw, dict) and "__pairs__" in cw:
        params["class_weight"] = {k: v for k, v in cw["__pairs__"]}
    return params


def state_meta(estimator, **extra) -> dict:
    """The ``meta`` part of ``_get_state()``: class name, JSON parameters, ``n_features_in_``
    (when fitted with one) and any further JSON scalars of the learned state."""
    meta = {"class": type(estimator).__name__, "params": params_to_json(estimator)}
    if hasattr(estimator, "n_features_in_"):
        meta["n_features_in_"] = int(estimator.n_features_in_)
    meta.update(extra)
    return meta
