"""Snapshots, so that a failed call leaves the model as it was: :func:`save_attrs` and
:func:`restore_attrs` for any family's attributes, and the linear learner's snapshot (the small
state by deep copy, the weight arrays whole or only the rows a batch can touch)."""

from __future__ import annotations

import copy

import numpy as np

from .._core import links as L


def save_attrs(est, names, copier=None) -> dict:
    """``{name: value}`` of the attributes ``names`` that ``est`` has: the values themselves, or
    ``copier(value)``."""
    d = est.__dict__
    if copier is None:
        return {a: d[a] for a in names if a in d}
    return {a: copier(d[a]) for a in names if a in d}


def restore_attrs(est, names, snap) -> None:
    """Put the attributes ``names`` back as ``snap`` holds them; those it does not hold did not
    exist when it was taken and are removed."""
    d = est.__dict__
    for a in names:
        if a in snap:
            d[a] = snap[a]
        else:
            d.pop(a, None)


class restoring:
    """``with restoring(est, snap):`` runs the block as a transaction: when it raises anything,
    ``est._restore(snap)`` puts back what the snapshot ``snap`` saved before the error goes on,
    so that a failed call changes nothing.  The snapshot is the value of the ``with``."""

    __slots__ = ("_est", "_snap")

    def __init__(self, est, snap):
        self._est, self._snap = est, snap

    def __enter__(self):
        return self._snap

    def __exit__(self, kind, value, traceback):
        if kind is not None:
            self._est._restore(self._snap)
        return False


def copy_array(value):
    """A copy of an ndarray, anything else itself (a ``copier`` of :func:`save_attrs`)."""
    return value.copy() if isinstance(value, np.ndarray) else value


def copy_state(value):
    """:func:`copy.deepcopy`, cheaper for what the small state holds: an ndarray of numbers or
    strings is copied, a number, string or tuple (the parameters found valid, which nothing
    changes in place) kept; anything else deep-copied.  A stream of one-row calls paid ~4 us
    a call for the deep copy of the parameter tuple."""
    if isinstance(value, np.ndarray) and value.dtype.kind != "O":
        return value.copy()
    if value is None or isinstance(value, int | float | str | tuple):
        return value
    return copy.deepcopy(value)


_STATE_ATTRS = (
    "classes_",
    "n_features_in_",
    "feature_names_in_",
    "class_counts_",
    "intercept_scaling_",
    "_st",
    "_validated_params",
)
#: dtypes the weights theta may have
_WEIGHT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
#: (R, K) arrays of the state: a snapshot holds copies of them, or of the rows a batch can touch
_ARRAY_ATTRS = ("_theta", "_A", "_lastS")


class SnapshotMixin:
    """``_snapshot`` / ``_save_arrays`` / ``_restore`` / ``_touched_rows`` of
    :class:`onlinelearn.shell.base.OnlineLinearClassifier`."""

    def _snapshot(self, copy_arrays=False):
        """State to restore if a call fails.  Without ``copy_arrays`` the weight arrays are
        kept by reference only; the caller then saves what it may change with
        :meth:`_save_arrays` (all of them, or the rows a batch can touch) before changing it."""
        snap = save_attrs(self, _STATE_ATTRS, copy_state)
        for a in _ARRAY_ATTRS:
            if a in self.__dict__:
                snap[a] = self.__dict__[a].copy() if copy_arrays else self.__dict__[a]
        snap["_rows"] = None
        return snap

    def _save_arrays(self, snap, rows):
        """Save the weight arrays into ``snap``: whole (``rows`` None) or only ``rows``."""
        if rows is None:
            for a in _ARRAY_ATTRS:
                snap[a] = self.__dict__[a].copy()
        else:
            arrays = [self._theta] + self._avg_arrays()
            snap["_rows"] = (rows, [arr[rows] for arr in arrays])

    def _restore(self, snap):
        restore_attrs(self, _STATE_ATTRS + _ARRAY_ATTRS, snap)
        if snap.get("_rows") is not None:
            rows, saved = snap["_rows"]
            arrays = [self._theta] + self._avg_arrays()
            for arr, old in zip(arrays, saved, strict=True):
                arr[rows] = old

    def _touched_rows(self, batch):
        """Rows of theta a pass over ``batch`` can change, or None for "any row".

        Only the Euclidean pass is local: the other links rescale or re-centre every weight
        (the aggregate, the exp shift, the restart of S).  A dense batch touches every row."""
        if self._link != L.EUCLID or batch.indices.shape[0] != batch.data.shape[0]:
            return None
        # a mark per row, not np.unique: sorting the batch's nonzeros cost 21 ms of a 27 ms
        # news20 pass, and it is paid on every call that follows the first
        touched = np.zeros(self._theta.shape[0], dtype=bool)
        touched[batch.indices] = True
        if self.fit_intercept:
            touched[-1] = True
        return np.flatnonzero(touched)
