"""Rows and read-outs of the event roads (:mod:`onlinelearn.shell.events`): a row (a dict, a
1-D array, a one-row sparse matrix) as float64 values and int32 columns, or as the (1, d)
matrix that ``partial_fit`` takes; a label as ``partial_fit``'s label array; and the label and
the probabilities ``predict`` and ``predict_proba`` give a row's scores."""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp


class _Rows:
    """The part of an event state that reads a dict row (a model's width and names)."""

    __slots__ = ("last", "n_features", "names")


def _entries(ev, x, learning):
    """(data, indices) of a row: float64 values and int32 columns (see the module docstring);
    raises ValueError for a row that cannot be the model's."""
    if type(x) is dict:
        # a stream's usual row first, in the fewest steps: the keys of the last row (whose
        # columns are kept), then the same values (a learn_one after a predict_one of the
        # row) or new numbers
        keys, vals = list(x), list(x.values())
        last = ev.last
        if last is not None and last[1] == keys:
            if last[0] == vals and (last[4] or not learning):
                return last[2], last[3]
            if last[5]:
                data = as_float64(vals)
                if data is not None:
                    ev.last = (vals, keys, data, last[3], True, True)
                    return data, last[3]
    if type(x) is np.ndarray and x.ndim == 1 and x.dtype == np.float64 and x.flags.c_contiguous:
        if x.shape[0] != ev.n_features:
            raise ValueError(
                f"a row of {ev.n_features} features was expected, got an array of shape "
                f"{x.shape}"
            )
        return x, ev.dense_idx
    if isinstance(x, dict):
        # the last dict row's entries are kept with its keys and values: a learn_one after a
        # predict_one of an equal row, keys in the same order (test-then-train), reuses them,
        # and a row of the same keys in the same order (a stream of fixed columns) its columns
        # (they are never written)
        keys, vals = list(x), list(x.values())
        last = ev.last
        same_keys = last is not None and last[1] == keys
        if same_keys and last[0] == vals and (last[4] or not learning):
            return last[2], last[3]
        if type(x) is dict and ev.names is None:
            # the common case in one go: int keys, number values (columns checked in compiled
            # code); the columns of the last row of this case when the keys are the same
            data = as_float64(vals)
            if data is not None:
                idx = last[3] if same_keys and last[5] else np.array(keys)
                if idx.dtype is _I64:
                    ev.last = (vals, keys, data, idx, True, True)
                    return data, idx
        data, idx, complete = _dict_entries(ev, x, learning)
        ev.last = (vals, keys, data, idx, complete, False)
        return data, idx
    if sp.issparse(x):
        if x.ndim == 2 and x.shape[0] != 1 or x.shape[-1] != ev.n_features:
            raise ValueError(
                f"a sparse row of shape (1, {ev.n_features}) was expected, got {x.shape}"
            )
        r = sp.csr_matrix(x)
        if not r.has_canonical_format:
            r = r.copy()
            r.sum_duplicates()
        nnz = int(r.indptr[-1])
        return (np.ascontiguousarray(r.data[:nnz], dtype=np.float64),
                np.ascontiguousarray(r.indices[:nnz], dtype=np.int32))  # fmt: skip
    a = np.asarray(x, dtype=np.float64) if not isinstance(x, np.ndarray) else x
    if a.ndim == 2 and a.shape[0] == 1:
        a = a[0]
    if a.ndim != 1 or a.shape[0] != ev.n_features:
        raise ValueError(
            f"a row of {ev.n_features} features was expected, got an array of shape "
            f"{np.shape(x)}"
        )
    if a.dtype != np.float64 or not a.flags.c_contiguous:
        a = np.ascontiguousarray(a, dtype=np.float64)
    return a, ev.dense_idx


def _dict_entries(ev, x, learning):
    """(data, indices, complete) of a dict row; ``complete``: no name was left out."""
    complete = True
    cols, vals = [], []
    names = ev.names
    for k, v in x.items():
        if v is None:
            continue
        if type(k) is int or (isinstance(k, numbers.Integral) and not isinstance(k, bool)):
            j = int(k)
        elif names is not None and isinstance(k, str):
            j = names.get(k)
            if j is None:
                if learning:
                    raise ValueError(
                        f"feature {k!r} is not one of the model's {ev.n_features} features "
                        "(feature_names_in_); a fitted model's width is fixed"
                    )
                complete = False
                continue  # never learned from: weight 0
        else:
            raise ValueError(
                f"feature {k!r}: a dict row's keys are column indices (int)"
                + (" or the model's feature names" if names is not None else
                   "; this model was not fitted with feature names")
            )  # fmt: skip
        if not 0 <= j < ev.n_features:
            raise ValueError(
                f"feature index {j} is out of range: the model has {ev.n_features} features"
            )
        cols.append(j)
        vals.append(v)
    try:
        data = np.array(vals, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("feature values must be numbers") from None
    return data, np.array(cols, dtype=np.int32), complete


def as_float64(vals):
    """The values (a list) as float64 when every one is a number (int, float, bool), else None
    (a missing value, a string...: the caller's general loop)."""
    try:
        data = np.array(vals)
    except (TypeError, ValueError):
        return None
    if data.dtype is _F64 and data.ndim == 1:
        return data
    if data.dtype.kind in "fiub" and data.ndim == 1:
        return data.astype(np.float64)
    return None


_F64, _I64 = np.dtype(np.float64), np.dtype(np.int64)


def _matrix(est, x):
    """The row ``x`` (a dict, a 1-D array, a one-row sparse matrix) as the (1, d) matrix that
    ``partial_fit`` / ``predict`` take."""
    if isinstance(x, dict):
        d = getattr(est, "n_features_in_", None)
        if d is None:
            raise ValueError(
                f"{type(est).__name__}: a dict row needs a fitted model (its width and "
                "features); fit or partial_fit it on a first batch, or use "
                "onlinelearn.river.RiverClassifier, which maps feature names to columns"
            )
        ev = _Rows()
        ev.last = None
        ev.n_features = int(d)
        names = est.__dict__.get("feature_names_in_")
        ev.names = None if names is None else {str(n): j for j, n in enumerate(names)}
        data, idx = _entries(ev, x, True)
        return _csr(ev.n_features, data, idx)
    if sp.issparse(x):
        return sp.csr_matrix(x)
    a = np.asarray(x)
    return a.reshape(1, -1) if a.ndim == 1 else a


def _csr(n_features, data, idx):
    return sp.csr_matrix((data, idx, np.array([0, idx.shape[0]])), shape=(1, n_features))


def _label_array(est, y):
    classes = est.__dict__.get("classes_")
    arr = np.array([y])
    if classes is not None and classes.dtype.kind == arr.dtype.kind == "U" and (
        arr.dtype.itemsize <= classes.dtype.itemsize  # a label no longer than the classes'
    ):
        return arr.astype(classes.dtype)
    return arr


def _label(ev, s):
    if ev.binary:
        return ev.plain[1] if s[0] > 0 else ev.plain[0]
    return ev.plain[_first_max(s)]


def _proba_dict(est, P):
    return {(c.item() if isinstance(c, np.generic) else c): float(p)
            for c, p in zip(est.classes_, P, strict=True)}  # fmt: skip


def _proba(est, ev, s):
    """The calibrated probabilities of the scores ``s`` (``predict_proba``'s steps)."""
    params = est._proba_params()
    if ev.kind == "binary":
        v = float(s[0]) if ev.binary else float(s[1]) - float(s[0])
        z = params[0] * max(v, 0.0) + params[1] * min(v, 0.0)
        P = [math.exp(_log_sigmoid(-z)), math.exp(_log_sigmoid(z))]
        pred = 1 if v > 0 else 0
    else:
        a = params[0]
        Z = [a * float(v) for v in s]
        m = max(Z)
        if not math.isfinite(m):
            m = 0.0
        E = [t - m for t in Z]
        tot = 0.0
        for t in E:
            tot += math.exp(t)
        lse = math.log(tot)
        P = [math.exp(t - lse) for t in E]
        pred = _first_max(list(s))
    top = _first_max(P)
    if top != pred:  # rounding made them equal: one ulp to predict's class (proba._agree)
        eps = math.ulp(P[top])
        P[pred] = P[top] + eps
        P[top] = P[top] - eps
    return dict(zip(ev.plain, P, strict=True))


def _first_max(v):
    best, top = 0, v[0]
    for k in range(1, len(v)):
        if v[k] > top:
            best, top = k, v[k]
    return best


_LOGE2 = math.log(2.0)


def _log_sigmoid(z):
    """log sigma(z) = -logaddexp(0, -z), in the steps of numpy's ``logaddexp``."""
    y = -z
    if y == 0.0:
        return -_LOGE2
    tmp = -y
    if tmp > 0:
        return -math.log1p(math.exp(-tmp))
    return -(y + math.log1p(math.exp(tmp)))
