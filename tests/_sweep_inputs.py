"""The hostile inputs of the crash sweep (``tests/test_crash_sweep.py``), and the state of a
model compared bit for bit before and after a rejected call.

Each case says what a correct estimator does with it: ``ERROR`` (a ValueError, TypeError or
FloatingPointError with a message), ``VALID`` (a result, equal to that of the reference input
when the case has one) or ``EITHER`` (one of the two).  A result always has to be sound: labels
among ``classes_``, finite scores, a model that still predicts.

Unsorted and duplicate CSR indices (built with ``csr_matrix((data, indices, indptr))``, which
neither sorts nor sums) must give the result of the canonical matrix, duplicates summed, as
scikit-learn reads them; a clear refusal would also pass, but none of our estimators refuses.
"""

from __future__ import annotations

import pickle
import types

import numpy as np
import scipy.sparse as sp

ERROR, VALID, EITHER = "error", "valid", "either"


class Case:
    """``build(base) -> (hostile, reference or None)``; ``expect`` is one of ERROR, VALID,
    EITHER or a dict entry -> that (``'*'``: the default); ``sparse``: a scipy-matrix case."""

    def __init__(self, name, build, expect, sparse=False):
        self.name, self.build, self.expect, self.sparse = name, build, expect, sparse

    def expect_for(self, entry):
        """The expectation for ``entry`` (``'fit'``, ``'partial_fit[first]'``, ``'predict'``...)."""
        if isinstance(self.expect, dict):
            return self.expect.get(entry, self.expect["*"])
        return self.expect


# -- X: a 2-D batch built from a clean dense float batch B (n >= 3 rows, d >= 2 columns) -------


def _with(B, value, at=(0, 1)):
    X = B.copy()
    X[at] = value
    return X


def _raw_csr(data, indices, indptr, shape, index_dtype=None):
    """A CSR matrix exactly as given (scipy's constructor neither sorts nor sums; index arrays
    set afterwards keep their dtype)."""
    X = sp.csr_matrix((np.asarray(data, float), np.asarray(indices), np.asarray(indptr)), shape)
    if index_dtype is not None:
        X.indices = np.asarray(indices, dtype=index_dtype)
        X.indptr = np.asarray(indptr, dtype=index_dtype)
    return X


def _csr_parts(B):
    C = sp.csr_matrix(B)
    return C.data.copy(), C.indices.astype(np.int64), C.indptr.astype(np.int64), C.shape


def _csr_edit(B, pos, index, dtype=np.int32):
    data, indices, indptr, shape = _csr_parts(B)
    indices[pos] = index
    return _raw_csr(data, indices, indptr, shape, dtype)


def _unsorted(B):
    """Every row's entries in reverse column order."""
    data, indices, indptr, shape = _csr_parts(B)
    for i in range(shape[0]):
        a, b = indptr[i], indptr[i + 1]
        data[a:b], indices[a:b] = data[a:b][::-1].copy(), indices[a:b][::-1].copy()
    return _raw_csr(data, indices, indptr, shape)


def _duplicates(B):
    """Each stored value of the first half of the rows split in two halves at the same column
    (exact in binary: the sum is the value)."""
    C = sp.csr_matrix(B)
    data, indices, indptr = [], [], [0]
    for i in range(C.shape[0]):
        row = slice(C.indptr[i], C.indptr[i + 1])
        v, j = C.data[row], C.indices[row]
        if i < C.shape[0] // 2 + 1:
            v, j = np.repeat(v / 2, 2), np.repeat(j, 2)
        data.extend(v)
        indices.extend(j)
        indptr.append(len(data))
    return _raw_csr(data, indices, indptr, C.shape)


def _int64_csr(B):
    C = sp.csr_matrix(B)
    return _raw_csr(C.data, C.indices, C.indptr, C.shape, np.int64)


def _strings(B):
    X = B.astype(object)
    X[0, 0] = "a"
    return X


def _complex(B):
    return B + 1j * np.ones_like(B)


#: a new width is fine for a model that starts over, an error for a fitted one
_WIDTH = {"*": ERROR, "fit": VALID, "partial_fit[first]": VALID, "transform": VALID, "gram": VALID}

X_CASES = [
    Case("nan", lambda B: (_with(B, np.nan), None), ERROR),
    Case("inf", lambda B: (_with(B, np.inf), None), ERROR),
    Case("-inf", lambda B: (_with(B, -np.inf, (1, 0)), None), ERROR),
    Case("1e300", lambda B: (_with(B, 1e300, (0, slice(None))), None), EITHER),
    Case("-1e300 all", lambda B: (np.full_like(B, -1e300), None), EITHER),
    Case("empty batch", lambda B: (B[:0], None), EITHER),
    Case(
        "one row",
        lambda B: (B[:1], None),
        {"*": VALID, "fit": EITHER, "partial_fit[first]": EITHER},
    ),
    Case("zero rows", lambda B: (np.zeros_like(B), None), VALID),
    Case("wider", lambda B: (np.hstack([B, B[:, :1]]), None), _WIDTH),
    Case("narrower", lambda B: (B[:, :-1], None), _WIDTH),
    Case("1-D", lambda B: (B[0], None), ERROR),
    Case("3-D", lambda B: (B[None], None), ERROR),
    Case("list of lists", lambda B: (B.tolist(), B), VALID),
    Case("int64", lambda B: (np.round(B).astype(np.int64), np.round(B)), VALID),
    Case("bool", lambda B: (B > 0, (B > 0).astype(float)), VALID),
    Case("object numbers", lambda B: (B.astype(object), B), VALID),
    Case("object strings", lambda B: (_strings(B), None), ERROR),
    Case("str numbers", lambda B: (B.astype(str), B), EITHER),
    Case("str words", lambda B: (np.full(B.shape, "x"), None), ERROR),
    Case("complex", lambda B: (_complex(B), None), ERROR),
    Case("Fortran order", lambda B: (np.asfortranarray(B), B), VALID),
    Case("float32", lambda B: (B.astype(np.float32), None), VALID),
    Case("csr", lambda B: (sp.csr_matrix(B), None), VALID, True),
    Case("csc", lambda B: (sp.csc_matrix(B), sp.csr_matrix(B)), VALID, True),
    Case("csr int64 indices", lambda B: (_int64_csr(B), sp.csr_matrix(B)), VALID, True),
    Case("csr unsorted indices", lambda B: (_unsorted(B), sp.csr_matrix(B)), EITHER, True),
    Case("csr duplicate indices", lambda B: (_duplicates(B), sp.csr_matrix(B)), EITHER, True),
    Case("csr index = n_features", lambda B: (_csr_edit(B, 1, B.shape[1]), None), ERROR, True),
    Case("csr index -1", lambda B: (_csr_edit(B, 1, -1), None), ERROR, True),
    Case("csr int64 index 2**40", lambda B: (_csr_edit(B, 1, 2**40, np.int64), None), ERROR, True),
    Case("csr wider", lambda B: (sp.csr_matrix(np.hstack([B, B[:, :1]])), None), _WIDTH, True),
    Case("csr nan", lambda B: (sp.csr_matrix(_with(B, np.nan)), None), ERROR, True),
]


# -- y: labels for a batch of n rows, from clean labels y0 -----------------------------------


def _mixed_list(y0):
    y = list(y0.tolist())
    y[0] = "a"
    return y


def _mixed_object(y0):
    y = np.asarray(y0, dtype=object)
    y[0] = "a"
    return y


def _float_with(y0, value):
    y = y0.astype(float)
    y[0] = value
    return y


#: (classifier expectation, regressor expectation)
Y_CASES = [
    Case("y nan", lambda y0: (_float_with(y0, np.nan), None), (ERROR, ERROR)),
    Case("y inf", lambda y0: (_float_with(y0, np.inf), None), (ERROR, ERROR)),
    Case("y 1e300", lambda y0: (_float_with(y0, 1e300), None), (EITHER, EITHER)),
    Case("y 0.5", lambda y0: (_float_with(y0, 0.5), None), (ERROR, VALID)),
    Case("y mixed list", lambda y0: (_mixed_list(y0), None), (ERROR, ERROR)),
    Case("y mixed object", lambda y0: (_mixed_object(y0), None), (ERROR, ERROR)),
    Case("y one class", lambda y0: (np.full_like(y0, y0[0]), None), (EITHER, VALID)),
    Case("y strings", lambda y0: (np.array([f"c{v}" for v in y0]), None), (EITHER, ERROR)),
    Case("y bool", lambda y0: (y0 == y0[0], None), (EITHER, EITHER)),
    Case("y complex", lambda y0: (y0 + 1j, None), (ERROR, ERROR)),
    Case("y too short", lambda y0: (y0[:-1], None), (ERROR, ERROR)),
    Case("y 2-D", lambda y0: (np.stack([y0, y0 + 1], axis=1), None), (ERROR, ERROR)),
    Case("y None", lambda y0: (None, None), (ERROR, ERROR)),
    Case("y int64 list", lambda y0: (y0.tolist(), y0), (VALID, VALID)),
]


# -- the state of a model, compared bit for bit --------------------------------------------


def state_of(obj, depth=0, seen=None):
    """A comparable image of everything ``obj`` holds: arrays by dtype, shape and bytes;
    containers and objects with a ``__dict__`` recursively; functions by name.  Left out:
    attributes whose name holds ``cache`` (read-out caches), ``_validated_params`` and
    ``_plan_params`` (the memos of parameters found valid or planned, which a first call may
    set before it refuses X)."""
    seen = set() if seen is None else seen
    if isinstance(obj, np.ndarray):
        raw = repr(obj.tolist()) if obj.dtype == object else obj.tobytes()
        return ("ndarray", obj.dtype.str, obj.shape, raw)
    if sp.issparse(obj):
        parts = [
            getattr(obj, p) for p in ("data", "indices", "indptr", "row", "col") if hasattr(obj, p)
        ]
        return ("sparse", obj.format, obj.shape, [state_of(a, depth + 1, seen) for a in parts])
    if isinstance(obj, bool | int | float | complex | str | bytes | type(None) | np.generic):
        return (type(obj).__name__, repr(obj))
    if isinstance(obj, types.FunctionType | types.BuiltinFunctionType | types.MethodType | type):
        return ("callable", getattr(obj, "__qualname__", repr(obj)))
    if id(obj) in seen or depth > 8:
        return ("seen", type(obj).__name__)
    seen.add(id(obj))
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, [state_of(v, depth + 1, seen) for v in obj])
    if isinstance(obj, dict):
        return ("dict", sorted((repr(k), state_of(v, depth + 1, seen))
                               for k, v in obj.items() if not _memo(k)))  # fmt: skip
    if isinstance(obj, np.random.RandomState | np.random.Generator):
        return ("rng", pickle.dumps(obj))
    if hasattr(obj, "__dict__"):
        return (type(obj).__name__, state_of(vars(obj), depth + 1, seen))
    if hasattr(obj, "__slots__"):
        slots = [(s, state_of(getattr(obj, s, None), depth + 1, seen)) for s in obj.__slots__]
        return (type(obj).__name__, slots)
    return ("object", type(obj).__name__)


def _memo(key):
    return "cache" in str(key) or key in ("_validated_params", "_plan_params")


def changed_keys(before, after):
    """The top-level attributes whose state differs (for the report)."""
    b = dict(before[1][1]) if before[1][0] == "dict" else {}
    a = dict(after[1][1]) if after[1][0] == "dict" else {}
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
