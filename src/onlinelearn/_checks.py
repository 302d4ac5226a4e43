"""Reliability checks that every estimator runs before it trusts its input or its output.

* :func:`check_sparse_structure`: the structure of a scipy sparse matrix (``indptr`` monotone,
  ``indices`` inside ``[0, n_columns)``), one compiled sweep per batch
  (:mod:`onlinelearn._core.checks`); scipy does not re-check arrays edited after construction,
  and an index out of range would make the compiled pass read or write out of bounds.
* :func:`check_n_features`: a clear refusal of more than ``2**31 - 2`` columns (the compiled
  passes index weights with int32; a wider matrix would have its indices cut).

See ``docs/reliability.md`` for the promises these checks serve and how each is tested.
"""

from __future__ import annotations

import io

import numpy as np
import scipy.sparse as sp

__all__ = [
    "MAX_N_FEATURES",
    "check_binary_stream",
    "check_n_features",
    "check_sparse_structure",
]

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
    if isinstance(source, io.TextIOBase) or "b" not in getattr(source, "mode", "b"):
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
    from ._core import checks as K

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


# -- after a pass: degenerate steps and the weights that predict ------------------------------


def check_aggressive_steps(est, batch, loss, weights, order, updates_before) -> None:
    """Refuse a pass of a Euclidean aggressive learner (PA, PA-I, PA-II, COPA) in which a row
    that suffered a loss made no update because its squared norm overflowed float64.

    Such a row has ``tau = loss / ||x||^2 = 0``: the learner silently learns nothing (values
    near 1e160 give zero weights).  Costs nothing in the usual case: every row with a positive
    loss and weight updates, so the count of updates is compared first, and the row norms are
    computed only when the counts differ (rows of zeros without an intercept also differ)."""
    from ._core import links as L
    from ._core import steps as S
    from ._core.checks import count_lossy_rows, first_overflowing_row
    from ._core.state import N_UPDATES

    step = est._step_code()
    if est._link != L.EUCLID or step == S.CONSERVATIVE:
        return
    if step == S.COPA:
        # COPA's loss is not in ``loss`` (its own margin 1/(Q-1)): look at every weighted row
        rows = order[weights[order] > 0.0]
    else:
        # counted in one compiled loop first (the index array cost ~0.9 ms on mnist's 60 000
        # rows, on every call); built only when the counts differ
        if est._st[N_UPDATES] - updates_before >= count_lossy_rows(loss, weights, order):
            return
        rows = order[(loss[order] > 0.0) & (weights[order] > 0.0)]
    b = est._intercept_value()
    bad = first_overflowing_row(batch.data, batch.indptr, rows.astype(np.int64), b * b)
    if bad >= 0:
        lo, hi = batch.indptr[bad], batch.indptr[bad + 1]
        big = float(np.abs(batch.data[lo:hi]).max())
        raise ValueError(
            f"{type(est).__name__}: row {int(bad)} of the batch has a squared norm that "
            f"overflows float64 (largest |value| {big:.3g}), so its step would be 0 and nothing "
            "would be learned. The model was left as it was before this call. Scale the "
            "features (e.g. to unit norm)."
        )


def check_readout(est) -> None:
    """Refuse weights that predict nothing sensible: non-finite read-out weights, or read-out
    weights that underflowed to all zeros while the dual sum theta is not zero.

    The compiled pass checks theta; the weights that predict are ``grad f*(theta)`` (and their
    average), which can overflow or underflow for the multiplicative and p-norm links even when
    theta is finite (e.g. unbalanced Winnow with a large eta, or p = 500).  For the Euclidean
    link the read-out is linear in theta and A, already checked by the pass."""
    from ._core import links as L

    if est._link == L.EUCLID:
        # the read-out is theta, or (S theta - U) / T: finite when theta and U are,
        # which the pass's own check covers on the rows it touched (O(batch), not O(model))
        return
    with np.errstate(all="ignore"):
        W = est._weights_matrix()
    name = type(est).__name__
    advice = (
        "The model was left as it was before this call. Scale the features (e.g. to unit "
        "norm), lower eta or p, or use the balanced or Euclidean learners."
    )
    if not np.isfinite(W).all():
        raise FloatingPointError(
            f"{name}: the weights read out from the learner's state (grad f* of theta"
            f"{', averaged' if est.average else ''}) are infinite or NaN. {advice}"
        )
    if W.size and not W.any() and est._theta.any():
        raise FloatingPointError(
            f"{name}: the weights read out from the learner's state underflowed to zero "
            f"although its dual sum theta is not zero (a degenerate step). {advice}"
        )


def check_scores(scores) -> None:
    """Refuse decision values that overflowed (an argmax over inf or NaN is garbage)."""
    finite = np.isfinite(scores)
    if finite.all():
        return
    bad = np.flatnonzero(~finite.reshape(finite.shape[0], -1).all(axis=1))[0]
    raise ValueError(
        f"the decision values of row {int(bad)} are not finite (an overflow of <w, x>: its "
        "feature values are too large for float64 with these weights); scale the features."
    )
