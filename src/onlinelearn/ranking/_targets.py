"""Targets of a label ranker: indicator matrices, lists of label sets, or one label per row.

scikit-learn's multilabel conventions: a 2-D 0/1 array or sparse matrix whose columns are the
labels ``classes_`` (``arange(n_columns)`` unless ``classes`` names them), or a sequence of label
collections turned into that matrix as ``MultiLabelBinarizer`` does (``classes_`` = the declared
``classes`` in their order, else the sorted union of the labels).  A 1-D vector of class labels
is the single-label case (one relevant label per row).

A sequence of equal-length lists or arrays of 0 and 1 is read as the rows of an indicator matrix
(scikit-learn's list-of-lists form of a 2-D array); every other sequence of collections (sets,
ragged lists, lists of strings or of other labels) is read as label sets.  Pass sets (or
``frozenset``) to make label sets unambiguous.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..shell import validation as V

MULTICLASS = "multiclass"
INDICATOR = "indicator"
SETS = "sets"


def _is_label_sets(y):
    if isinstance(y, np.ndarray | str) or sp.issparse(y):
        return False
    try:
        items = list(y)
    except TypeError:
        return False
    return len(items) > 0 and all(
        isinstance(v, list | tuple | set | frozenset | np.ndarray) for v in items
    )


def _rows_of_indicator(y):
    """A sequence of equal-length 0/1 lists or arrays (no sets): the rows of a 2-D array."""
    if any(isinstance(v, set | frozenset) for v in y):
        return False
    lengths = {len(v) for v in y}
    if len(lengths) != 1 or lengths == {0}:
        return False
    try:
        arr = np.asarray([list(v) for v in y])
    except (TypeError, ValueError):
        return False
    return arr.dtype.kind in "biuf" and bool(np.all((arr == 0) | (arr == 1)))


def target_kind(y):
    """One of MULTICLASS, INDICATOR, SETS."""
    if sp.issparse(y):
        return INDICATOR
    if _is_label_sets(y):
        return INDICATOR if _rows_of_indicator(y) else SETS
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] > 1:
        return INDICATOR
    return MULTICLASS


def encode(y, n_rows, classes_known, classes_arg, kind_known):
    """Validate y and return (Y int8 (n, K) C-contiguous, classes, kind).

    ``classes_known``: the fitted ``classes_`` (None on a first call), which fixes the label set:
    a label outside it is an error.  Nothing is mutated."""
    kind = target_kind(y)
    if (
        kind_known is not None
        and kind != kind_known
        and not ({kind, kind_known} == {INDICATOR, SETS})
    ):
        raise ValueError(
            f"the targets are {kind} but the model was trained on {kind_known} targets; "
            "use one kind of target for a model."
        )
    if kind == INDICATOR:
        M = (
            y.tocsr()
            if sp.issparse(y)
            else np.asarray([list(v) for v in y] if isinstance(y, list) else y)
        )
        vals = M.data if sp.issparse(M) else M
        if vals.dtype.kind not in "biuf" or (vals.size and not np.all((vals == 0) | (vals == 1))):
            bad = np.unique(np.asarray(vals, dtype=object))[:5].tolist() if vals.size else []
            raise ValueError(
                "the label-indicator matrix must hold only 0 and 1 (a row's relevant labels are "
                f"its 1 columns); got values such as {bad}."
            )
        Y = np.ascontiguousarray(M.toarray() if sp.issparse(M) else M, dtype=np.int8)
        if Y.shape[0] != n_rows:
            raise ValueError(f"X has {n_rows} rows but Y has {Y.shape[0]}; they must be equal.")
        if classes_known is not None:
            classes = classes_known
        elif classes_arg is not None:
            classes = np.asarray(classes_arg)
        else:
            classes = np.arange(Y.shape[1])
        if Y.shape[1] != len(classes):
            raise ValueError(
                f"Y has {Y.shape[1]} columns but there are {len(classes)} labels "
                f"(classes_ = {np.asarray(classes)[:10].tolist()}...); one column per label."
            )
        return Y, classes, INDICATOR
    if kind == SETS:
        rows = [list(v) for v in y]
        if len(rows) != n_rows:
            raise ValueError(f"X has {n_rows} rows but Y has {len(rows)}; they must be equal.")
        flat = [lab for r in rows for lab in r]
        if classes_known is not None:
            classes = classes_known
        elif classes_arg is not None:
            classes = np.asarray(classes_arg)
        else:
            classes = np.unique(np.asarray(flat)) if flat else np.arange(0)
        if len(classes) and len(np.unique(classes)) != len(classes):
            raise ValueError("classes contains repeated labels.")
        index = {c.item() if isinstance(c, np.generic) else c: k for k, c in enumerate(classes)}
        Y = np.zeros((n_rows, len(classes)), dtype=np.int8)
        for i, r in enumerate(rows):
            for lab in r:
                key = lab.item() if isinstance(lab, np.generic) else lab
                k = index.get(key)
                if k is None:
                    raise ValueError(
                        f"label {lab!r} (row {i}) is not one of the model's labels "
                        f"{list(index)[:10]}{'...' if len(index) > 10 else ''}; declare every "
                        "label with classes= on the first call."
                    )
                Y[i, k] = 1
        return Y, classes, SETS
    arr = V.check_y(y)
    if arr.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {arr.shape[0]} labels.")
    if classes_known is not None:
        classes = classes_known
    elif classes_arg is not None:
        classes = V.merge_labels(None, np.asarray(classes_arg))
    else:
        classes = np.unique(arr)
    try:
        codes = np.searchsorted(classes, arr)
    except TypeError:
        codes = None
    if codes is None or np.any(codes >= len(classes)) or np.any(classes[codes] != arr):
        seen = set(np.asarray(classes).tolist())
        bad = [v for v in np.unique(arr).tolist() if v not in seen][:5]
        raise ValueError(
            f"labels {bad} are not among the model's labels {np.asarray(classes)[:10].tolist()}; "
            "declare every label with classes= on the first call."
        )
    Y = np.zeros((n_rows, len(classes)), dtype=np.int8)
    Y[np.arange(n_rows), codes] = 1
    return Y, classes, MULTICLASS
