"""The reference of the per-event tests (``tests/test_events*.py``,
``tests/test_river_one_row.py``): ``partial_fit`` through the general path, the comparison of
two learners attribute by attribute (arrays bit for bit), the streams and rows, and the rejected
rows every road must refuse without changing anything."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from onlinelearn.shell.proba import calibrating

#: the kept event state (buffers built by whichever road was taken) and validation caches
_NOT_STATE = ("_event", "_validated_params", "_validated")


def general(est, X, y):
    """partial_fit through the general path (never the event road): OnlineMixin.partial_fit's
    body after its event test."""
    with calibrating(est, "partial", X, y):
        est._learn(X, y, None, None, fit_mode=False)


def _attrs(obj):
    if hasattr(obj, "__dict__"):
        return {k: v for k, v in vars(obj).items() if k not in _NOT_STATE}
    return {k: getattr(obj, k) for k in obj.__slots__ if hasattr(obj, k)}


def same(v, w, k="learner"):
    """Equal values, arrays bit for bit (NaN equals NaN); containers, random generators and
    objects (a learner, its calibration, a family's state, a kernel program) walked."""
    if isinstance(v, np.ndarray):
        assert isinstance(w, np.ndarray) and v.dtype == w.dtype and v.shape == w.shape, k
        assert np.array_equal(v, w, equal_nan=v.dtype.kind == "f"), k
    elif isinstance(v, dict):
        assert isinstance(w, dict) and set(v) == set(w), k
        for j in v:
            same(v[j], w[j], f"{k}[{j!r}]")
    elif isinstance(v, list | tuple):
        assert type(v) is type(w) and len(v) == len(w), k
        for j, (a, b) in enumerate(zip(v, w, strict=True)):
            same(a, b, f"{k}[{j}]")
    elif isinstance(v, np.random.Generator):
        assert v.bit_generator.state == w.bit_generator.state, k
    elif isinstance(v, float) and math.isnan(v):
        assert isinstance(w, float) and math.isnan(w), k
    elif (hasattr(v, "__dict__") or hasattr(v, "__slots__")) and not callable(v) and not (
        isinstance(v, str | int | float | np.generic)
    ):
        assert type(v) is type(w), k
        da, db = _attrs(v), _attrs(w)
        assert set(da) == set(db), k
        for a in da:
            same(da[a], db[a], f"{k}.{a}")
    else:
        assert v == w, k


def stream(n, d, K, seed, density=1.0, scales=(0.1, 1.0, 10.0), noisy=False):
    """n rows of d features (columns scaled by one of ``scales``, a share ``density`` of
    nonzeros) and labels of K classes from a random linear model (with noise for K > 2, and
    for K = 2 too when ``noisy``)."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(d, K))
    X = rng.normal(size=(n, d)) * rng.choice(list(scales), size=d)
    if density < 1.0:
        X[rng.random((n, d)) > density] = 0.0
    if K > 2 or noisy:
        noise = rng.normal(size=(n, K))
        y = np.argmax(X @ W + noise, axis=1) if K > 2 else (X @ W[:, 0] + noise[:, 0] > 0)
    else:
        y = X @ W[:, 0] > 0
    return X, y.astype(np.int64)


def row(X, i, kind, rng=None):
    """Row i as a 1-D array ('dense'), a dict of its nonzeros ('dict'; keys in a random order
    with ``rng``; 'dict unsorted': in decreasing order) or a one-row CSR matrix ('csr')."""
    if kind == "dense":
        return X[i]
    nz = np.flatnonzero(X[i])
    if kind == "dict unsorted":
        nz = nz[::-1]
    elif rng is not None and kind == "dict":
        nz = rng.permutation(nz)
    if kind.startswith("dict"):
        return {int(j): float(X[i, j]) for j in nz}
    return sp.csr_matrix(X[i : i + 1])


def ref_batch(X, i, kind):
    """The one-row batch that partial_fit gets for the same row."""
    if kind == "dense":
        return X[i : i + 1]
    return sp.csr_matrix(X[i : i + 1])


def known_label_rows(y, first=0):
    """The rows from ``first`` on whose label was seen before, once two labels were seen: the
    rows an event road learns."""
    seen, n = set(list(y)[:first]), 0
    for lab in list(y)[first:]:
        n += len(seen) >= 2 and lab in seen
        seen.add(lab)
    return n


def counting(monkeypatch, module, name, record=lambda out: 1, calls=None):
    """Replace ``module.name`` by a wrapper that appends ``record(result)`` of each call to
    the returned list (``calls``, or a new one)."""
    calls = [] if calls is None else calls
    real = getattr(module, name)

    def wrapper(*args, real=real):
        out = real(*args)
        calls.append(record(out))
        return out

    monkeypatch.setattr(module, name, wrapper)
    return calls


#: rows of a 6-feature model that every road refuses: (row, what the error says)
BAD_ROWS = {
    "NaN value": ({0: float("nan"), 2: 1.0}, "NaN"),
    "inf value": ({1: float("inf")}, "infinity"),
    "index out of range": ({6: 1.0}, "out of range"),
    "negative index": ({-1: 1.0}, "out of range"),
    "string value": ({0: "a"}, "numbers"),
    "string key on an unnamed model": ({"f0": 1.0}, "column indices"),
    "too short": (np.ones(5), "6 features"),
    "too long": (np.ones(7), "6 features"),
    "dense NaN": (np.array([1.0, np.nan, 0, 0, 0, 0]), "NaN"),
}


def check_rejected(fitted, bad):
    """``fitted()`` -> (a 6-feature learner, X, y): the row ``BAD_ROWS[bad]`` raises one clear
    error in ``learn_one`` and ``predict_one``, changes nothing, and the stream goes on as if
    it never came."""
    est, X, y = fitted()
    twin, _, _ = fitted()
    x, match = BAD_ROWS[bad]
    with pytest.raises(ValueError, match=match):
        est.learn_one(x, 1)
    same(est, twin)
    if bad != "string value":
        with pytest.raises(ValueError, match=match):
            est.predict_one(x)
    for i in range(20):
        est.learn_one(X[i], int(y[i]))
        twin.learn_one(X[i], int(y[i]))
    same(est, twin)


def check_named_features(make, general_ref, n=80):
    """A model fitted with feature names takes dict rows of names (in any order) as the rows
    of its columns; ``general_ref(ref, X, i, y)`` learns the reference's row i.  A name the
    model does not know has weight 0 for ``predict_one`` and is refused by ``learn_one``."""
    pd = pytest.importorskip("pandas")
    X, y = stream(n, 3, 2, seed=9)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    est = make().partial_fit(frame.iloc[:40], y[:40])
    ref = make().partial_fit(frame.iloc[:40], y[:40])
    for i in range(40, n):
        x = {"c": X[i, 2], "a": X[i, 0], "b": X[i, 1]}
        assert est.predict_one(x) == ref.predict(frame.iloc[i : i + 1])[0]
        est.learn_one({"a": X[i, 0], "b": X[i, 1], "c": X[i, 2]}, int(y[i]))
        general_ref(ref, frame, X, i, y)
    same(est, ref)
    assert est.predict_one({"a": 1.0, "zzz": 5.0}) == est.predict_one({"a": 1.0})
    with pytest.raises(ValueError, match="not one of the model"):
        est.learn_one({"a": 1.0, "zzz": 5.0}, 1)


def check_river_conventions(make, extra=()):
    """Before any learning: None and {} (River's conventions), and a dict row needs a fitted
    model; a first row of known width starts it."""
    est = make()
    assert est.predict_one({0: 1.0}) is None and est.predict_proba_one({0: 1.0}) == {}
    with pytest.raises(ValueError, match="fitted model"):
        est.learn_one({0: 1.0}, 1)
    est.learn_one(np.array([1.0, 0.0]), "spam")
    assert est.predict_one(np.array([1.0, 0.0])) == "spam"
    est.learn_one(np.array([0.0, 1.0]), "ham")
    for x in extra:
        est.learn_one(x, "ham")
    assert set(est.predict_proba_one({0: 1.0})) == {"ham", "spam"}
    return est


def check_partial_fit_rows(make, X, y, first=10):
    """``partial_fit`` of one row (a dense (1, d) array, then the same row as CSR) on every row
    after the ``first``: the model the general path gives on the same calls."""
    a, b = make(), make()
    a.partial_fit(X[:first], y[:first])
    general(b, X[:first], y[:first])
    for i in range(first, len(y)):
        a.partial_fit(X[i : i + 1], y[i : i + 1])
        general(b, X[i : i + 1], y[i : i + 1])
        Xs = sp.csr_matrix(X[i : i + 1])
        a.partial_fit(Xs, [int(y[i])])
        general(b, Xs, y[i : i + 1])
    same(a, b)
