"""The confusion matrix of the COPA paper, its operator norm and the misclassification rate
it gives (:mod:`onlinelearn.metrics`, eqs. 4-6), and the checks of their inputs."""

from __future__ import annotations

import math

import numpy as np


# --------------------------------------------------------------------------- input checks
def _as_1d(name: str, values) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got an array of shape {arr.shape}.")
    return arr


def _resolve_labels(labels, *sequences: np.ndarray) -> np.ndarray:
    """The label order: ``labels`` as given (checked unique), else the sorted union."""
    if labels is None:
        return np.unique(np.concatenate(sequences))
    labels = _as_1d("labels", labels)
    if labels.size == 0:
        raise ValueError("labels must not be empty.")
    if np.unique(labels).size != labels.size:
        raise ValueError("labels must not contain duplicates.")
    return labels


def _encode(name: str, values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Index of each value in ``labels``; ValueError if a value is not among them."""
    try:
        sorter = np.argsort(labels, kind="stable")
        pos = np.searchsorted(labels, values, sorter=sorter)
        pos = np.minimum(pos, labels.size - 1)
        idx = sorter[pos]
        unknown = np.asarray(labels[idx] != values, dtype=bool)
    except TypeError as exc:  # e.g. string values against integer labels
        raise ValueError(
            f"{name} ({values.dtype}) cannot be compared with labels ({labels.dtype})."
        ) from exc
    if np.any(unknown):
        missing = np.unique(values[unknown])
        raise ValueError(
            f"{name} contains values that are not in labels: {missing[:10].tolist()}"
            f"{' ...' if missing.size > 10 else ''}."
        )
    return idx


def _as_square_matrix(name: str, C) -> np.ndarray:
    C = np.asarray(C, dtype=float)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {C.shape}.")
    if not np.all(np.isfinite(C)):
        raise ValueError(f"{name} contains NaN or infinite values.")
    return C


# --------------------------------------------------------------------------- confusion matrix
def confusion_matrix_conditional(y_true, y_pred, labels=None, zero_diagonal=True) -> np.ndarray:
    """Class-conditional confusion matrix ``C(h)`` of the COPA paper, eq. (4).

    ``C[p, q] = P(h(X) = q | Y = p)``, estimated on a sample as::

        C[p, q] = #{t : y_t = p and h(x_t) = q} / T_p,      T_p = #{t : y_t = p}.

    With ``zero_diagonal=True`` (default) the diagonal is set to 0, which is the matrix the paper
    calls ``C(h)`` after eq. (4) and whose operator norm it minimizes: its row ``p`` holds the
    rates at which class ``p`` is confused with each other class.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels; any sortable label type (ints, strings, ...).
    labels : array-like of shape (Q,), default=None
        The classes, in the order of the rows and columns. ``None`` means the sorted union of
        ``y_true`` and ``y_pred``. Every value of ``y_true`` and ``y_pred`` must be in ``labels``
        (ValueError otherwise).
    zero_diagonal : bool, default=True
        Set ``C[p, p] = 0``.

    Returns
    -------
    C : ndarray of shape (Q, Q), float
        A class ``p`` absent from ``y_true`` (``T_p = 0``, e.g. a label that is only predicted,
        or listed in ``labels`` only) has no conditional distribution to estimate: its row is
        all zeros. Every other row of the matrix with its diagonal sums to 1.

    Notes
    -----
    Equals ``sklearn.metrics.confusion_matrix(y_true, y_pred, labels=labels, normalize='true')``
    with the diagonal zeroed.

    Examples
    --------
    >>> from onlinelearn.metrics import confusion_matrix_conditional
    >>> confusion_matrix_conditional(["a", "a", "b", "b"], ["a", "b", "b", "b"])
    array([[0. , 0.5],
           [0. , 0. ]])
    """
    y_true = _as_1d("y_true", y_true)
    y_pred = _as_1d("y_pred", y_pred)
    if y_true.shape[0] != y_pred.shape[0]:
        raise ValueError(
            f"y_true and y_pred have different lengths: {y_true.shape[0]} != {y_pred.shape[0]}."
        )
    if y_true.shape[0] == 0:
        raise ValueError("y_true and y_pred are empty: the confusion matrix is undefined.")
    labels = _resolve_labels(labels, y_true, y_pred)
    Q = labels.size
    i = _encode("y_true", y_true, labels)
    j = _encode("y_pred", y_pred, labels)
    counts = np.bincount(i * Q + j, minlength=Q * Q).reshape(Q, Q).astype(float)
    T = counts.sum(axis=1)
    C = np.divide(counts, T[:, None], out=np.zeros_like(counts), where=T[:, None] > 0)
    if zero_diagonal:
        np.fill_diagonal(C, 0.0)
    return C


def operator_norm(C) -> float:
    """Operator norm ``||C|| = max_{v != 0} ||C v||_2 / ||v||_2`` of the COPA paper, eq. (5).

    It is the largest singular value of ``C`` (the spectral norm, ``numpy.linalg.norm(C, 2)``).
    For entrywise nonnegative matrices it is monotone: ``0 <= A <= B`` entrywise implies
    ``||A|| <= ||B||``.

    Parameters
    ----------
    C : array-like of shape (m, n)
        A non-empty finite matrix.

    Returns
    -------
    float
    """
    C = np.asarray(C, dtype=float)
    if C.ndim != 2 or C.size == 0:
        raise ValueError(f"C must be a non-empty 2-D matrix, got shape {C.shape}.")
    if not np.all(np.isfinite(C)):
        raise ValueError("C contains NaN or infinite values.")
    return float(np.linalg.svd(C, compute_uv=False)[0])


def confusion_operator_norm(y_true, y_pred, labels=None) -> float:
    """``||C(h)||``: operator norm (eq. 5) of the zero-diagonal confusion matrix (eq. 4).

    The quantity COPA aims to keep small. By eq. (6) the misclassification rate satisfies
    ``R(h) <= sqrt(Q) ||C(h)||``. Parameters are those of :func:`confusion_matrix_conditional`.
    """
    return operator_norm(confusion_matrix_conditional(y_true, y_pred, labels=labels))


def misclassification_rate_from_confusion(C, class_priors) -> float:
    """Misclassification rate recovered from the confusion matrix, COPA paper eq. (6).

    ``R(h) = ||pi C(h)||_1 = sum_p pi_p sum_{q != p} C[p, q]`` (the entries are nonnegative, so
    the 1-norm of the row vector ``pi C`` is the plain sum).

    Only the off-diagonal entries are used, so ``C`` may be given with or without its diagonal.
    With ``C = confusion_matrix_conditional(y_true, y_pred)`` and ``pi`` the empirical class
    frequencies ``T_p / n`` this equals ``1 - accuracy``: ``sum_p (T_p / n) (errors_p / T_p)``.

    Parameters
    ----------
    C : array-like of shape (Q, Q)
        Confusion matrix with entries in [0, 1].
    class_priors : array-like of shape (Q,)
        ``pi_p = P(Y = p)`` in the order of the rows of ``C``; nonnegative, summing to 1.

    Returns
    -------
    float
    """
    C = _as_square_matrix("C", C)
    if np.any(C < 0):
        raise ValueError("C must be entrywise nonnegative.")
    pi = np.asarray(class_priors, dtype=float)
    if pi.shape != (C.shape[0],):
        raise ValueError(f"class_priors must have shape ({C.shape[0]},), got {pi.shape}.")
    if not np.all(np.isfinite(pi)) or np.any(pi < 0) or not math.isclose(pi.sum(), 1.0):
        raise ValueError("class_priors must be nonnegative and sum to 1.")
    off = C.copy()
    np.fill_diagonal(off, 0.0)
    return float(pi @ off.sum(axis=1))
