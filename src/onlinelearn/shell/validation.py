"""Input checks shared by every estimator: X, y, sample weights, label sets, and the one module
the estimators import for checks.

Validation lives here, in Python; the compiled core receives only contiguous arrays, scalars and
int codes (DESIGN.md, style rule 2).  Every check runs *before* the model is touched, so a
rejected batch leaves the model exactly as it was.

* :func:`check_sparse_structure`: the structure of a scipy sparse matrix (``indptr`` monotone,
  ``indices`` inside ``[0, n_columns)``), one compiled sweep per batch
  (:mod:`onlinelearn._core.checks`); scipy does not re-check arrays edited after construction,
  and an index out of range would make the compiled pass read or write out of bounds.
* :func:`check_n_features`: a clear refusal of more than ``2**31 - 2`` columns (the compiled
  passes index weights with int32; a wider matrix would have its indices cut).
* the checks of what a pass produced (:func:`check_aggressive_steps`, :func:`check_readout`,
  :func:`check_scores`, :func:`check_mapped`) live in :mod:`onlinelearn.shell.output_checks`
  and are re-exported here, as are the forms the core reads once X and y are checked
  (:class:`CSRBatch`, :func:`unique_labels`, :func:`label_codes`, in
  :mod:`onlinelearn.shell.encoding`).

See ``docs/reliability.md`` for the promises these checks serve and how each is tested.
"""

from __future__ import annotations

import io

import numpy as np
import scipy.sparse as sp
from sklearn.utils import column_or_1d
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from .encoding import CSRBatch, label_codes, unique_labels
from .output_checks import check_aggressive_steps, check_mapped, check_readout, check_scores

__all__ = [
    "MAX_EXACT_LABEL",
    "MAX_N_FEATURES",
    "CSRBatch",
    "canonical",
    "check_X",
    "check_batch",
    "check_X_y",
    "check_aggressive_steps",
    "check_binary_stream",
    "check_class_weight_keys",
    "check_classes",
    "check_label_list",
    "check_mapped",
    "check_n_features",
    "check_one_label_kind",
    "check_positions",
    "check_real",
    "check_readout",
    "check_sample_weight",
    "check_scores",
    "check_sparse_structure",
    "check_timing",
    "check_y",
    "first_inexact_label",
    "grown_labels",
    "label_codes",
    "merge_labels",
    "raise_nonfinite_x",
    "unique_labels",
]


# -- the shape of X: feature count, sparse structure, byte streams -----------------------------


#: Most columns an estimator accepts: int32 feature indices, plus one row for the intercept.
MAX_N_FEATURES = 2**31 - 2


def check_n_features(n_features: int, what: str = "X") -> None:
    """Refuse more than :data:`MAX_N_FEATURES` columns with a clear error."""
    if n_features > MAX_N_FEATURES:
        raise ValueError(
            f"{what} has {n_features} columns; onlinelearn supports at most {MAX_N_FEATURES} "
            "features (2**31 - 2: weights are indexed with 32-bit integers). Hash or renumber "
            "the features into a smaller range."
        )


#: Largest integer label read exactly through float64 (the svmlight parsers read labels so).
MAX_EXACT_LABEL = 2**53


def first_inexact_label(y) -> int:
    """Position of the first float label beyond +-2**53 (where float64 no longer holds every
    integer, and int64 conversion may wrap: 2**63 - 1 reads as 2**63 -> -2**63), or -1."""
    big = np.abs(y) > MAX_EXACT_LABEL
    return int(np.flatnonzero(big)[0]) if big.any() else -1


def check_binary_stream(source) -> None:
    """Refuse a file object opened in text mode where bytes are read (svmlight files)."""
    if isinstance(source, str | bytes) or hasattr(source, "__fspath__"):
        return
    mode = getattr(source, "mode", "b")
    # gzip.GzipFile and bz2.BZ2File have an int mode (always binary)
    if isinstance(source, io.TextIOBase) or (isinstance(mode, str) and "b" not in mode):
        raise TypeError(
            f"{getattr(source, 'name', 'the file object')!r} is open in text mode; open it in "
            "binary mode (open(path, 'rb')) or pass the path itself."
        )


def check_sparse_structure(X) -> None:
    """Raise ValueError if a scipy sparse matrix has a broken structure; no-op for dense input.

    Checks CSR, CSC and BSR with the compiled sweep and COO with two vectorised range tests;
    the other formats (LIL, DOK, DIA) keep their indices in Python structures that scipy checks
    on conversion."""
    if not sp.issparse(X):
        return
    fmt = X.format
    n_rows, n_cols = X.shape
    check_n_features(n_cols)
    if fmt == "coo":
        for name, idx, bound in (("row", X.row, n_rows), ("column", X.col, n_cols)):
            if idx.size and (idx.min() < 0 or idx.max() >= bound):
                bad = int(np.flatnonzero((idx < 0) | (idx >= bound))[0])
                raise ValueError(
                    f"X is a broken COO matrix: entry {bad} has {name} index {int(idx[bad])}, "
                    f"outside [0, {bound})."
                )
        return
    if fmt not in ("csr", "csc", "bsr"):
        return
    if fmt == "bsr":
        br, bc = X.blocksize
        n_major, n_minor, unit = n_rows // br, n_cols // bc, "block row"
        n_values = X.data.shape[0]
    elif fmt == "csr":
        n_major, n_minor, unit = n_rows, n_cols, "row"
        n_values = X.data.shape[0]
    else:
        n_major, n_minor, unit = n_cols, n_rows, "column"
        n_values = X.data.shape[0]
    indptr, indices = X.indptr, X.indices
    for name, arr in (("indptr", indptr), ("indices", indices)):
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise ValueError(
                f"X is a broken {fmt.upper()} matrix: {name} must be a 1-D integer array, got "
                f"dtype {arr.dtype} and shape {arr.shape}."
            )
    if indptr.shape[0] != n_major + 1:
        raise ValueError(
            f"X is a broken {fmt.upper()} matrix: indptr has {indptr.shape[0]} entries for "
            f"{n_major} {unit}s (expected {n_major + 1})."
        )
    from .._core import checks as K

    code, pos = K.sparse_structure_error(
        np.ascontiguousarray(indptr), np.ascontiguousarray(indices), n_values, n_minor
    )
    if code == K.OK:
        return
    prefix = f"X is a broken {fmt.upper()} matrix"
    if code == K.BAD_START:
        raise ValueError(f"{prefix}: indptr[0] is {int(indptr[0])}, not 0.")
    if code == K.DECREASING:
        raise ValueError(
            f"{prefix}: indptr decreases at {unit} {pos} ({int(indptr[pos])} then "
            f"{int(indptr[pos + 1])})."
        )
    if code == K.BAD_END:
        raise ValueError(
            f"{prefix}: indptr[-1] = {int(indptr[-1])} but there are only {indices.shape[0]} "
            f"indices and {n_values} values."
        )
    major = int(np.searchsorted(indptr, pos, side="right") - 1)
    other = "column" if unit == "row" else ("row" if unit == "column" else "block column")
    raise ValueError(
        f"{prefix}: {unit} {major} has {other} index {int(indices[pos])}, outside "
        f"[0, {n_minor}). Was X.indices edited after the matrix was built?"
    )


# -- batches, labels and weights --------------------------------------------------------------


_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def _ready(estimator, X, finite=True):
    """True when X is already what the core reads and what scikit-learn would return unchanged
    for a fitted model: a float32/64 CSR matrix or C-contiguous ndarray, 2-D, non-empty, finite,
    with the fitted number of features, and no feature names in play.  Lets a stream of small
    batches skip the general checks (which cost ~0.5 ms a call); anything else takes them."""
    if getattr(estimator, "feature_names_in_", None) is not None:
        return False
    n_feat = getattr(estimator, "n_features_in_", None)
    if sp.issparse(X):
        if X.format != "csr" or X.dtype not in _FLOATS:
            return False
    elif type(X) is not np.ndarray or X.dtype not in _FLOATS or not X.flags.c_contiguous:
        return False
    if not (X.ndim == 2 and X.shape[0] >= 1 and X.shape[1] == n_feat):
        return False
    return _finite_values(X) if finite else _finite_unused(X)


def _finite_values(X):
    """True when every stored value of a float CSR matrix or C-contiguous float ndarray is
    finite: one compiled reduction (:func:`onlinelearn._core.checks.all_finite`), no boolean
    array the size of X (as ``np.isfinite(X).all()`` writes)."""
    from .._core.checks import all_finite

    values = X.data if sp.issparse(X) else X.reshape(-1)
    return bool(all_finite(np.ascontiguousarray(values)))


def raise_nonfinite_x(estimator, values):
    """Raise scikit-learn's own error for a NaN or an infinity among the feature ``values``
    (the message ``validate_data`` gives: "Input X contains NaN." ...)."""
    from sklearn.utils.validation import _assert_all_finite

    _assert_all_finite(
        values, allow_nan=False, estimator_name=type(estimator).__name__, input_name="X"
    )
    raise ValueError("Input X contains NaN or infinity.")  # in case it did not raise


def check_X(estimator, X, *, reset, finite=True):
    """Validate X (2-D, finite, float32/64, dense or CSR); checks the feature count when
    ``reset`` is False.  Raises ValueError with the reason.

    Finiteness is checked after the conversion, by :func:`_finite_values` (scikit-learn's own
    check cost 3.4 ms of a mnist ``fit``); when it finds a NaN or an infinity, scikit-learn's
    message is raised (:func:`raise_nonfinite_x`).  ``finite=False`` leaves the stored values
    of a CSR matrix's rows, or of a dense X, to the caller: the Euclidean pass checks them as
    it reads them (:data:`onlinelearn._core.euclid_pass.NONFINITE_X`); the unused storage of a
    CSR matrix past ``indptr[-1]``, which no pass reads, is still checked here."""
    check_sparse_structure(X)  # before anything (scipy included) trusts the indices
    if not reset and _ready(estimator, X, finite):
        return canonical(X)
    kwargs = dict(
        reset=reset,
        accept_sparse="csr",
        dtype=[np.float64, np.float32],
        order="C",
        ensure_min_samples=1,
    )
    Xv = validate_data(estimator, X, ensure_all_finite=False, **kwargs)
    if not (_finite_values(Xv) if finite else _finite_unused(Xv)):
        raise_nonfinite_x(estimator, Xv.data if sp.issparse(Xv) else Xv)
    return canonical(Xv)


def canonical(X):
    """X as scikit-learn reads a sparse matrix: duplicate entries summed and indices sorted (a
    copy, made only when X is not so already; scipy keeps the answer on the matrix, so that
    :class:`CSRBatch` does not pay for the question again).  Dense X is returned as it is.
    Without it, a learner that reads the stored entries (stumps, squared norms) saw a value
    split over two entries of one column as two values."""
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _finite_unused(X):
    """True unless a CSR matrix holds a NaN or inf in its storage past ``indptr[-1]``."""
    if not sp.issparse(X) or X.data.shape[0] == X.indptr[-1]:
        return True
    from .._core.checks import all_finite

    return bool(all_finite(np.ascontiguousarray(X.data[X.indptr[-1] :])))


def check_X_y(estimator, X, y, *, reset, finite=True):
    """Validate X as :func:`check_X` and y as a 1-D vector of class labels of the same length."""
    X = check_X(estimator, X, reset=reset, finite=finite)
    y = check_y(y)
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"X has {X.shape[0]} rows but y has {y.shape[0]} labels; they must be equal."
        )
    return X, y


def check_y(y):
    """A 1-D array of class labels: no NaN, not continuous, not multi-output."""
    if type(y) is np.ndarray and y.ndim == 1 and y.size:
        # the common cases, decided without the general machinery: integer or string labels
        # are class labels; floats are when finite and integral (else scikit-learn's
        # "continuous" target error below)
        if y.dtype.kind in "iuUb":  # (bool: two-class labels, River's streams)
            return y
        if y.dtype.kind == "f" and np.isfinite(y).all() and np.array_equal(y, np.floor(y)):
            return y
    check_label_list(y)
    if y is None:
        raise ValueError(
            "This estimator requires y to be passed, but the target y is None: "
            "give one class label per row of X."
        )
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] != 1:
        raise ValueError(
            f"y must be 1-D (one label per row); got an array of shape {arr.shape}. "
            "Multi-output classification is not supported."
        )
    arr = column_or_1d(arr, warn=True)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError("y contains NaN or infinity; every row needs a finite class label.")
    if arr.dtype.kind == "O":
        kinds = {type(v) for v in arr}
        if len(kinds) > 1 and not all(issubclass(k, (str, np.str_)) for k in kinds):
            raise ValueError(
                f"y mixes label types {sorted(k.__name__ for k in kinds)}; use one type."
            )
    check_classification_targets(arr)
    return arr


def check_real(values, what="X"):
    """``values`` as an ndarray, refused when complex (numpy's conversion to float drops the
    imaginary part with only a warning)."""
    arr = np.asarray(values)
    if arr.dtype.kind == "c":
        raise ValueError(f"{what} is complex ({arr.dtype}); only real numbers can be learned.")
    return arr


def check_positions(values, bound, what):
    """A 1-D int64 array of positions in ``[0, bound)`` (node ids, event codes, start frames):
    integers or integral floats; NaN, booleans, strings and negative positions (which numpy
    would count from the end) are refused, as are positions at or beyond ``bound`` (which the
    compiled code would read out of its arrays)."""
    arr = check_real(values, what)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be a 1-D array of positions, got shape {arr.shape}.")
    if arr.dtype.kind == "f" and not (np.isfinite(arr).all() and (arr == np.floor(arr)).all()):
        bad = int(np.flatnonzero(~np.isfinite(arr) | (arr != np.floor(arr)))[0])
        raise ValueError(f"{what} must be integers; {what}[{bad}] is {arr[bad]}.")
    if arr.dtype.kind not in "iuf" and arr.size:
        raise ValueError(f"{what} must be integers, got dtype {arr.dtype}.")
    if arr.size and (arr.min() < 0 or arr.max() >= bound):
        bad = int(np.flatnonzero((arr < 0) | (arr >= bound))[0])
        raise ValueError(f"{what}[{bad}] = {arr[bad]} is outside [0, {bound}).")
    return arr.astype(np.int64)


def check_timing(y, n_events, n_frames, what="the timing"):
    """Start frames y_1 < ... < y_K of K = ``n_events`` events among ``n_frames`` frames:
    positions as :func:`check_positions`, one per event, strictly increasing."""
    y = check_positions(y, n_frames, what)
    if y.shape[0] != n_events:
        raise ValueError(f"{what} has {y.shape[0]} starts for {n_events} events.")
    if y.size > 1 and not (np.diff(y) > 0).all():
        i = int(np.flatnonzero(np.diff(y) <= 0)[0])
        raise ValueError(f"{what} must increase: start {i + 1} is {y[i + 1]} after {y[i]}.")
    return y


def check_one_label_kind(arrays, what="y"):
    """Refuse label arrays of which some hold numbers and others strings (numpy would join them
    as strings without a word, e.g. the tags of two sequences)."""
    kinds = {_label_kind(np.asarray(a).dtype.kind) for a in arrays}
    if len(kinds) > 1:
        raise ValueError(f"{what} mixes label types ({' and '.join(sorted(kinds))}s); use one.")


def check_sample_weight(sample_weight, n):
    """Non-negative finite per-row weights (1 when None)."""
    if sample_weight is None:  # scikit-learn's answer, without its checks (a stream of rows)
        return np.ones(n, dtype=np.float64)
    sw = _check_sample_weight(sample_weight, np.empty((n, 0)), dtype=np.float64)
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be non-negative.")
    return np.ascontiguousarray(sw, dtype=np.float64)


def check_batch(estimator, X, y, sample_weight, *, reset, finite=True):
    """A training batch: X and y as :func:`check_X_y`, and its weights (1 when None)."""
    X, y = check_X_y(estimator, X, y, reset=reset, finite=finite)
    return X, y, check_sample_weight(sample_weight, X.shape[0])


def grown_labels(known, y, classes=None):
    """:func:`merge_labels` of the known classes, the labels of y and the announced ``classes``."""
    return merge_labels(known, y if classes is None else np.concatenate([np.asarray(classes), y]))


def merge_labels(known, new):
    """Sorted union of the known classes and the labels of a new batch.

    Raises ValueError when the label types cannot be compared (e.g. a model trained on integer
    labels receiving strings)."""
    if (known is not None and isinstance(new, np.ndarray) and new.shape == (1,)
            and new.dtype == known.dtype and known.size):  # one known label: nothing grows
        i = int(np.searchsorted(known, new[0]))
        if i < known.size and known[i] == new[0]:
            return known
    new_u = unique_labels(new)
    if known is None:
        return new_u
    try:
        if known.dtype.kind in "US" and new_u.dtype.kind not in "USO":
            raise TypeError
        if new_u.dtype.kind in "US" and known.dtype.kind not in "USO":
            raise TypeError
        merged = np.union1d(known, new_u)
    except TypeError:
        raise ValueError(
            f"labels of type {new_u.dtype} cannot join the model's classes of type "
            f"{known.dtype} (classes so far: {known[:10].tolist()})."
        ) from None
    return merged


def _label_kind(kind: str) -> str:
    """'number' or 'string' for a numpy dtype kind of labels ('other' for objects)."""
    if kind in "biuf":
        return "number"
    if kind in "US":
        return "string"
    return "other"


def check_classes(classes, y):
    """Validate the ``classes`` argument of ``partial_fit``: a 1-D array of distinct-typed class
    labels, without NaN, of the same kind (numbers or strings) as ``y``.  Without this check
    ``classes=['a']`` would silently turn integer labels into strings."""
    if isinstance(classes, str | bytes):
        raise ValueError(f"classes must be a list or array of labels, got the string {classes!r}")
    arr = np.asarray(classes)
    if arr.ndim != 1:
        raise ValueError(f"classes must be 1-D (a list of labels), got shape {arr.shape}")
    if arr.dtype.kind == "O":
        kinds = {_label_kind(np.asarray([v]).dtype.kind) for v in arr}
        if len(kinds) > 1 or kinds == {"other"}:
            raise ValueError(
                f"classes mixes label types or holds non-labels: {arr[:10].tolist()}; give "
                "numbers or strings, one kind only."
            )
        arr = np.asarray(arr.tolist())
    elif arr.size and isinstance(classes, list | tuple) and arr.dtype.kind == "U":
        if not all(isinstance(v, str | np.str_) for v in classes):
            raise ValueError(
                f"classes mixes numbers and strings: {list(classes)[:10]}; use one type."
            )
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError("classes contains NaN or infinity; class labels must be finite.")
    if _label_kind(arr.dtype.kind) == "other":
        raise ValueError(f"classes of dtype {arr.dtype} are not class labels.")
    y_kind = _label_kind(np.asarray(y).dtype.kind)
    if arr.size and y_kind != _label_kind(arr.dtype.kind):
        raise ValueError(
            f"classes are {_label_kind(arr.dtype.kind)}s ({arr[:10].tolist()}) but the labels "
            f"y are {y_kind}s; give classes of the same kind as y."
        )
    return arr


def check_class_weight_keys(class_weight, classes) -> None:
    """Refuse ``class_weight`` dict keys that can never match a label of this model: None,
    non-labels, or keys of the other kind (strings for numeric classes and vice versa), which
    would otherwise be ignored without a word.  Keys of the right kind not seen yet are fine."""
    if not isinstance(class_weight, dict):
        return
    kind = _label_kind(np.asarray(classes).dtype.kind)
    for key in class_weight:
        if isinstance(key, bool | np.bool_) or not isinstance(
            key, str | np.str_ | int | float | np.integer | np.floating
        ):
            raise ValueError(
                f"class_weight key {key!r} is not a class label (labels are numbers or "
                "strings); write class_weight={label: weight, ...}."
            )
        key_kind = "string" if isinstance(key, str | np.str_) else "number"
        if kind in ("number", "string") and key_kind != kind:
            raise ValueError(
                f"class_weight key {key!r} is a {key_kind} but the class labels are {kind}s "
                f"({np.asarray(classes)[:10].tolist()}); it would never apply."
            )


def check_label_list(y) -> None:
    """Refuse a Python list of labels that mixes numbers and strings (numpy would turn every
    label into a string without a word, e.g. ``[1, 'a']`` -> ``['1', 'a']``)."""
    if isinstance(y, list | tuple) and y:
        has_str = any(isinstance(v, str | np.str_) for v in y)
        if has_str and not all(isinstance(v, str | np.str_) for v in y):
            mixed = sorted({type(v).__name__ for v in y})
            raise ValueError(f"y mixes label types {mixed}; use one type.")
