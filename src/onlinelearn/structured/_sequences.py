"""Validation and packing of a list of token-feature sequences into one CSR batch."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..shell.validation import check_sparse_structure


class SequenceBatch:
    """Sequences packed for the compiled core: one CSR matrix of all token rows and the
    sequence boundaries ``starts`` (sequence s is rows ``starts[s]..starts[s+1]-1``)."""

    __slots__ = ("indptr", "indices", "data", "starts", "n_features", "max_len", "max_nnz")

    def __init__(self, indptr, indices, data, starts, n_features):
        self.indptr = indptr
        self.indices = indices
        self.data = data
        self.starts = starts
        self.n_features = n_features
        lengths = np.diff(starts)
        self.max_len = int(lengths.max()) if lengths.size else 0
        nnz = np.diff(indptr[starts]) if starts.size else np.zeros(0, np.int64)
        self.max_nnz = int(nnz.max()) if nnz.size else 0

    @property
    def n_sequences(self):
        return self.starts.shape[0] - 1

    @property
    def n_tokens(self):
        return int(self.starts[-1])


def pack_sequences(X_seqs, n_features=None, what="X_seqs"):
    """Check a list of (n_i, d) token-feature matrices (CSR, other sparse or dense) and pack them.

    Every sequence needs at least one token and all must have the same number of columns
    (``n_features`` when given).  Nothing is modified."""
    if isinstance(X_seqs, (np.ndarray, str)) or sp.issparse(X_seqs):
        raise TypeError(
            f"{what} must be a list of per-sequence matrices (one row per token), "
            f"got a single {type(X_seqs).__name__}"
        )
    try:
        seqs = list(X_seqs)
    except TypeError:
        raise TypeError(f"{what} must be a list of per-sequence matrices") from None
    if not seqs:
        raise ValueError(f"{what} is empty: at least one sequence is needed")
    indptrs, indices, datas, lengths = [], [], [], []
    offset = 0
    for s, X in enumerate(seqs):
        if sp.issparse(X):
            try:
                # the indices a compiled pass reads W's rows with, checked before scipy's
                # conversions or the pass trust them (neither checks bounds)
                check_sparse_structure(X)
            except ValueError as exc:
                raise ValueError(f"{what}[{s}]: {exc}") from None
            X = X.tocsr()
        else:
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2:
                raise ValueError(
                    f"{what}[{s}] must be 2-D (one row per token), got shape {X.shape}"
                )
            X = sp.csr_matrix(X)
        if X.shape[0] == 0:
            raise ValueError(f"{what}[{s}] has length 0: every sequence needs at least one token")
        if n_features is None:
            n_features = X.shape[1]
        elif X.shape[1] != n_features:
            raise ValueError(
                f"{what}[{s}] has {X.shape[1]} features, expected {n_features} "
                "(all sequences share one feature space)"
            )
        data = np.asarray(X.data, dtype=np.float64)
        if not np.all(np.isfinite(data)):
            raise ValueError(f"{what}[{s}] contains NaN or infinity")
        indptrs.append(X.indptr[1:].astype(np.int64) + offset)
        indices.append(X.indices.astype(np.int32))
        datas.append(data)
        lengths.append(X.shape[0])
        offset += X.indptr[-1]
    indptr = np.concatenate([np.zeros(1, np.int64)] + indptrs)
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return SequenceBatch(
        indptr, np.concatenate(indices), np.concatenate(datas), starts, int(n_features)
    )


def check_tag_sequences(y_seqs, batch, what="y_seqs"):
    """Check that ``y_seqs`` has one 1-D tag array per sequence, of the sequence's length; return
    the concatenated tags (original labels)."""
    if isinstance(y_seqs, (np.ndarray, str)) and np.ndim(y_seqs) != 1:
        raise TypeError(f"{what} must be a list of per-sequence tag arrays")
    seqs = list(y_seqs)
    if len(seqs) != batch.n_sequences:
        raise ValueError(f"{what} has {len(seqs)} sequences but X_seqs has {batch.n_sequences}")
    lengths = np.diff(batch.starts)
    out = []
    for s, y in enumerate(seqs):
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"{what}[{s}] must be a 1-D array of tags, got shape {y.shape}")
        if y.shape[0] != lengths[s]:
            raise ValueError(
                f"{what}[{s}] has {y.shape[0]} tags but X_seqs[{s}] has {lengths[s]} "
                "token rows: one tag per row is needed"
            )
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise ValueError(f"{what}[{s}] contains NaN or infinity")
        out.append(y)
    return np.concatenate(out)


def is_int(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)
