"""Dict rows (feature name -> value) as rows of a fixed number of columns, for
:mod:`onlinelearn.river` (the module docstring there says how names become columns)."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from .event_rows import as_float64

__all__ = ["DictRows"]

#: rows narrower than this are dense arrays, wider ones CSR
_DENSE_MAX = 4096


class DictRows:
    """Dict rows to the columns of the wrapped learner (module docstring)."""

    def __init__(self, n_features, hashing):
        if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral):
            raise TypeError(f"n_features must be an int, got {n_features!r}")
        if n_features < 1:
            raise ValueError(f"n_features must be >= 1, got {n_features}")
        self.n_features = int(n_features)
        self.hashing = bool(hashing)
        self.index: dict = {}

    def _column(self, name, grow):
        if self.hashing:
            from sklearn.utils import murmurhash3_32

            return murmurhash3_32(str(name), seed=0, positive=True) % self.n_features
        j = self.index.get(name)
        if j is None:
            if not grow:
                return None  # a feature never learned from has weight 0
            if len(self.index) >= self.n_features:
                raise ValueError(
                    f"feature {name!r} is new and all n_features={self.n_features} columns "
                    "are taken; pass a larger n_features or hashing=True"
                )
            j = self.index[name] = len(self.index)
        return j

    def _pairs(self, x, grow):
        cols, vals = [], []
        for k, v in x.items():
            if v is None:
                continue
            if isinstance(v, str):
                k, v = f"{k}={v}", 1.0
            j = self._column(k, grow)
            if j is not None:
                cols.append(j)
                vals.append(v)
        return cols, vals

    def _check_new_names(self, rows):
        """Raise before anything changes if the new names of ``rows`` do not fit."""
        if self.hashing:
            return
        new = {(f"{k}={v}" if isinstance(v, str) else k) for x in rows for k, v in x.items()
               if v is not None} - self.index.keys()  # fmt: skip
        if len(self.index) + len(new) > self.n_features:
            raise ValueError(
                f"{len(new)} new features and {len(self.index)} known ones do not fit in "
                f"n_features={self.n_features} columns; pass a larger n_features or hashing=True"
            )

    def matrix(self, rows, grow):
        """The rows as one (n, n_features) array or CSR matrix."""
        if grow:
            self._check_new_names(rows)
        n = len(rows)
        if self.n_features <= _DENSE_MAX:
            X = np.zeros((n, self.n_features))
            for i, x in enumerate(rows):
                cols, vals = self._pairs(x, grow)
                if self.hashing:  # colliding names add up
                    np.add.at(X[i], cols, vals)
                else:
                    X[i, cols] = vals
            return X
        indptr, indices, data = [0], [], []
        for x in rows:
            cols, vals = self._pairs(x, grow)
            indices += cols
            data += vals
            indptr.append(len(indices))
        X = sp.csr_matrix(
            (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64), indptr),
            shape=(n, self.n_features),
        )
        X.sum_duplicates()
        return X

    def row(self, x, grow):
        """One dict row as a (1, n_features) matrix: the preallocated dense row ``self.buf``
        (the caller zeroes it again with :meth:`clear`), or a CSR row.  The one-row protocol's
        path: :meth:`matrix` without its lists of rows (same values, same columns)."""
        data, idx = self.entries(x, grow)  # (colliding hashed names already added up)
        if self.n_features > _DENSE_MAX:
            X = self.csr(data, idx)
            X.sum_duplicates()  # (sorted columns)
            return X
        buf = self.__dict__.get("buf")
        if buf is None:
            buf = self.buf = np.zeros((1, self.n_features))
        buf[0, idx] = data  # the columns are distinct
        return buf

    def entries(self, x, grow):
        """One dict row as (float64 values, int32 columns) in the row's order, colliding hashed
        names added up in that order (the values :meth:`row` writes); names not known and not
        ``grow``: left out (weight 0).  The last row's entries are kept with its keys and
        values: a ``learn_one`` after a ``predict_one`` of an equal row, keys in the same order
        (River's test-then-train), reuses them, and a row of the same names in the same order
        its columns (the arrays are never written)."""
        keys, row = list(x), list(x.values())
        last = self.__dict__.get("last")
        same_keys = last is not None and last[1] == keys
        if same_keys:
            if last[0] == row and (last[4] or not grow):
                return last[2], last[3]
            if last[5]:  # a stream's usual row: the last row's names, numbers
                data = as_float64(row)
                if data is not None:
                    self.last = (row, keys, data, last[3], True, True)
                    return data, last[3]
        if not self.hashing:
            # the common case in one go: every name known, every value a number (the columns
            # of the last row of this case when the names are the same)
            data = as_float64(row)
            if data is not None:
                if same_keys and last[5]:
                    idx = last[3]
                else:
                    index = self.index
                    try:
                        idx = np.array([index[k] for k in x], dtype=np.int32)
                    except (KeyError, TypeError):
                        idx = None  # a new name: the loop below
                if idx is not None:
                    self.last = (row, keys, data, idx, True, True)
                    return data, idx
        hashing = self.hashing
        cols, vals = self._pairs(x, grow)
        # every name has its column (names never learned from, not grow: left out)
        complete = len(cols) == sum(v is not None for v in x.values())
        if hashing and len(set(cols)) < len(cols):  # colliding names add up, in row order
            acc = {}
            for j, v in zip(cols, vals, strict=True):
                acc[j] = acc.get(j, 0.0) + float(v)
            cols, vals = list(acc), list(acc.values())
        try:
            data = np.array(vals, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"feature values must be numbers, got {x!r}") from None
        idx = np.array(cols, dtype=np.int32)
        self.last = (row, keys, data, idx, complete, False)
        return data, idx

    def csr(self, data, idx):
        """The (1, n_features) CSR row of :meth:`entries`."""
        return sp.csr_matrix((data, idx, np.array([0, idx.shape[0]])),
                             shape=(1, self.n_features))  # fmt: skip

    def clear(self):
        """Zero the dense row again after the call that read it."""
        if self.n_features <= _DENSE_MAX:
            self.buf.fill(0.0)

    def forget(self, n):
        """Drop the names given columns >= n (a rejected call adds none)."""
        self.__dict__.pop("last", None)
        if len(self.index) > n:
            self.index = {k: j for k, j in self.index.items() if j < n}

    def frame(self, X, grow):
        """A pandas DataFrame (columns: feature names; NaN: missing) as a matrix: numeric
        columns are copied as blocks, the others (strings) go through the dict rows."""
        num = X.select_dtypes(include=["number", "bool"])
        other = X.drop(columns=num.columns)
        other_rows = [{k: v for k, v in r.items() if not _missing(v)}
                      for r in other.to_dict(orient="records")] if other.shape[1] else None
        if grow and not self.hashing:
            new = [k for k in num.columns if k not in self.index]
            names = [{k: 1.0 for k in new}] + (other_rows or [])
            self._check_new_names(names)
        cols = [self._column(k, grow) for k in num.columns]
        keep = [i for i, j in enumerate(cols) if j is not None]
        cols = np.asarray([cols[i] for i in keep], dtype=np.int64)
        V = np.nan_to_num(num.to_numpy(dtype=np.float64)[:, keep], nan=0.0)
        n = len(X)
        if self.n_features <= _DENSE_MAX:
            M = np.zeros((n, self.n_features))
            if self.hashing:  # colliding names add up
                np.add.at(M.T, cols, V.T)
            else:
                M[:, cols] = V
            if other_rows is not None:
                M += self.matrix(other_rows, grow)
            return M
        r, c = np.nonzero(V)
        M = sp.csr_matrix((V[r, c], (r, cols[c])), shape=(n, self.n_features))
        if other_rows is not None:
            M = M + self.matrix(other_rows, grow)
        M.sum_duplicates()
        return M


def _missing(v):
    return v is None or (isinstance(v, float) and v != v)
