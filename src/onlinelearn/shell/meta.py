"""Small pieces every estimator family shares: labels from scores (and ``predict`` made of
them), the scikit-learn tags, model-file metadata, and :func:`with_methods`, by which a
family's one base class takes the methods written in the shell's modules as its own.

Model files store ``meta = {"class", "params", "n_features_in_", ...}`` (docs/CONTRACT.md); the
parameters must be JSON types, so a seed object becomes ``None``, a ``class_weight`` dict with
non-string keys becomes a list of ``[label, weight]`` pairs and a dtype its name.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from .proba import ProbabilityMixin

__all__ = [
    "LabelsFromScoresMixin",
    "with_methods",
    "ScoresClassifier",
    "check_shape",
    "counter",
    "decision_values",
    "estimator_from_meta",
    "float_arrays",
    "labels_from_scores",
    "params_from_json",
    "params_to_json",
    "state_meta",
    "with_tags",
]


def labels_from_scores(classes, scores):
    """Predicted labels from decision values: one class -> that class; a 1-D score -> the sign
    (positive: ``classes[1]``); (n, K) scores -> the argmax (first maximum)."""
    scores = np.asarray(scores)
    if len(classes) == 1:
        return np.repeat(classes, scores.shape[0])
    if scores.ndim == 1:
        return classes[(scores > 0).astype(np.int64)]
    return classes[np.argmax(scores, axis=1)]


def decision_values(scores, n_classes):
    """scikit-learn's decision values from (n, n_columns) scores: zeros for one class, the one
    column of a binary model, f_1 - f_0 for two classes with a column each (positive means
    ``classes_[1]``), else the scores."""
    if n_classes == 1:
        return np.zeros(scores.shape[0])
    if scores.shape[1] == 1:
        return scores[:, 0]
    if scores.shape[1] == 2:
        return scores[:, 1] - scores[:, 0]
    return scores


class LabelsFromScoresMixin:
    """``predict`` of a classifier whose ``decision_function`` follows scikit-learn's
    convention (one score per row for two classes, one per class otherwise)."""

    def predict(self, X):
        """Labels from :meth:`decision_function`: the sign of one score per row (positive means
        ``classes_[1]``), the argmax (first maximum) of one score per class."""
        scores = self.decision_function(X)  # checks that the model is fitted
        return labels_from_scores(self.classes_, scores)


def with_tags(est, tags):
    """The scikit-learn tags of every family, on top of ``tags`` (those of scikit-learn's
    bases): sparse input is accepted, and a classifier handles any number of classes unless it
    sets ``_tags_multi_class = False``."""
    tags.input_tags.sparse = True
    if tags.classifier_tags is not None:
        tags.classifier_tags.multi_class = getattr(est, "_tags_multi_class", True)
    return tags


_NOT_TAKEN = frozenset({"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                        "__firstlineno__", "__static_attributes__"})  # fmt: skip


def with_methods(*holders):
    """Class decorator: the class takes, as its own attributes, the methods, properties and
    constants that the classes ``holders`` (and their bases) define, except those it defines
    itself; the first holder that defines a name gives it.  The result is what listing the
    holders first among its bases would give, without them in its MRO: a family's one base
    class holds everything an estimator of its kind does, its methods written in the modules
    of their subjects.  A holder's function that calls ``super()`` cannot be taken (it names
    its own class): refused here, when the class is made."""

    def decorate(cls):
        taken = {}
        for holder in holders:
            for klass in holder.__mro__[:-1]:  # (not object)
                for name, value in vars(klass).items():
                    if name in _NOT_TAKEN or name in taken:
                        continue
                    func = getattr(value, "fget", value)
                    func = getattr(func, "__func__", func)
                    code = getattr(func, "__code__", None)
                    if code is not None and "__class__" in code.co_freevars:
                        raise TypeError(f"{klass.__name__}.{name} calls super(): not takeable")
                    taken[name] = value
        for name, value in taken.items():
            if name not in cls.__dict__:
                setattr(cls, name, value)
        return cls

    return decorate


def counter(slot, doc=None):
    """A read-only property: the integer in ``slot`` of the estimator's counters, the vector
    its ``_stats()`` returns once it checked that the estimator is fitted."""
    return property(lambda est: int(est._stats()[slot]), doc=doc)


class ScoresClassifier(ProbabilityMixin, ClassifierMixin, BaseEstimator):
    """scikit-learn's classifier bases with what every family adds: the tags (sparse input),
    ``predict`` from ``decision_function`` and ``predict_proba`` (:mod:`.proba`)."""

    _tags_multi_class = True
    predict = LabelsFromScoresMixin.predict

    def __sklearn_tags__(self):
        return with_tags(self, super().__sklearn_tags__())


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


def state_meta(estimator, params=None, **extra) -> dict:
    """The ``meta`` part of ``_get_state()``: class name, JSON parameters (``params``, by default
    :func:`params_to_json`), ``n_features_in_`` (when fitted with one) and any further JSON
    scalars of the learned state."""
    if params is None:
        params = params_to_json(estimator)
    meta = {"class": type(estimator).__name__, "params": params}
    if hasattr(estimator, "n_features_in_"):
        meta["n_features_in_"] = int(estimator.n_features_in_)
    meta.update(extra)
    return meta


def estimator_from_meta(cls, meta, arrays=None, decode=params_from_json):
    """The first lines of every ``_from_state``: a new ``cls`` with the parameters of a model
    file (``decode`` undoes their JSON form) and its ``n_features_in_``; given the ``arrays``,
    also its ``classes_``."""
    est = cls(**decode(meta["params"]))
    est.n_features_in_ = int(meta["n_features_in_"])
    if arrays is not None:
        est.classes_ = np.asarray(arrays["classes_"])
    return est


def float_arrays(arrays, *names):
    """The arrays ``names`` of a model file as C-contiguous float64 arrays, in that order."""
    return [np.ascontiguousarray(arrays[name], dtype=np.float64) for name in names]


def check_shape(name, a, shape):
    """Refuse the array ``name`` of a model file unless its shape is ``shape`` (the estimator's
    state has no other: a file is never padded or converted on load)."""
    if np.shape(a) != tuple(shape):
        raise ValueError(
            f"model state is inconsistent: {name} has shape {np.shape(a)}, expected {tuple(shape)}"
        )
