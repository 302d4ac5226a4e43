"""Feature hashing in Python with the columns of the Vowpal Wabbit reader
(:func:`onlinelearn.io.vw.iter_vw_chunks`, ``onlinelearn train --format vw``).

:class:`Hasher` turns dict rows, token lists, or rows of namespaces (VW's ``|ns``) into a CSR
matrix of ``2**n_bits`` columns.  It is scikit-learn's
:class:`~sklearn.feature_extraction.FeatureHasher` (MurmurHash3_x86_32, seed 0, column
``|h| mod 2**n_bits``, sign of h, equal columns summed) on feature strings built by one rule:

* a feature ``name`` with value ``v`` of namespace ``ns`` is the string ``"ns^name"`` (just
  ``"name"`` in the default namespace ``""``); a string value ``s`` makes it ``"name=s"`` with
  value 1 (FeatureHasher's rule for dicts); a value of 0 drops the feature;
* an interaction ``"ab"`` (VW's ``-q ab``) adds, for every feature i of the namespaces whose
  name starts with ``a`` and every feature j of those starting with ``b``, the feature
  ``"<string_i>*<string_j>"`` with value ``v_i * v_j``; when ``a == b`` each unordered pair is
  taken once (``j`` at or after ``i`` in the row's order, squares included).

The VW reader hashes the line ``|ns name:v`` to the same string, so a row hashed here and the
same row written as a VW line give the same columns (``tests/test_hashing.py`` checks it on
random rows, against ``FeatureHasher`` too).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

__all__ = ["Hasher", "feature_string"]

_INPUT_TYPES = ("dict", "string", "namespaces")


def feature_string(namespace: str, name: str) -> str:
    """The string hashed for the feature ``name`` of ``namespace`` (``"ns^name"``, or ``name``
    in the default namespace ``""``)."""
    return f"{namespace}^{name}" if namespace else name


def _items(features, where):
    """``(name, value)`` of a dict (a string value: ``name=value``, 1) or of tokens (1 each)."""
    if isinstance(features, Mapping):
        for f, v in features.items():
            if isinstance(v, str):
                yield f"{f}={v}", 1.0
            else:
                yield f, v
    elif isinstance(features, str | bytes):
        raise ValueError(
            f"{where}: a single string is not a list of tokens (wrap it in a list, or split it)"
        )
    else:
        for f in features:
            yield f, 1.0


class Hasher(TransformerMixin, BaseEstimator):
    """Hash dict rows, token lists or namespaced rows into ``2**n_bits`` columns, as the VW reader.

    Stateless: ``fit`` only checks the parameters; ``transform`` gives a CSR matrix
    (``n_samples``, ``2**n_bits``).  The column of a feature is the one
    ``sklearn.feature_extraction.FeatureHasher(n_features=2**n_bits)`` gives its string (see the
    module's docstring for the strings); this class calls it.

    Parameters
    ----------
    n_bits : int, default=18
        Number of bits of the column index (VW's ``-b``), 1 to 30.
    input_type : {"dict", "string", "namespaces"}, default="dict"
        "dict": each row a mapping ``name -> value`` (a string value ``s`` is the feature
        ``name=s``); "string": each row an iterable of tokens (value 1 each, repeats add up);
        "namespaces": each row a mapping ``namespace -> dict or tokens``, ``""`` the default
        namespace (the VW line ``| a |ns b:2`` is ``{"": ["a"], "ns": {"b": 2}}``).
    interactions : str or list of str, optional
        Only with "namespaces": pairs of namespace first letters, e.g. ``["ab"]`` (VW's
        ``-q ab``).
    alternate_sign : bool, default=True
        The value's sign is the hash's (FeatureHasher's default and the VW reader's rule);
        False gives unsigned values (no longer the reader's columns' values).
    dtype : numpy float dtype, default=np.float64

    Examples
    --------
    >>> from onlinelearn.features import Hasher
    >>> X = Hasher(n_bits=10).transform([{"word": 2, "city": "Paris"}])
    >>> X.shape, X.nnz
    ((1, 1024), 2)
    """

    def __init__(
        self,
        n_bits=18,
        input_type="dict",
        interactions=None,
        alternate_sign=True,
        dtype=np.float64,
    ):
        self.n_bits = n_bits
        self.input_type = input_type
        self.interactions = interactions
        self.alternate_sign = alternate_sign
        self.dtype = dtype

    def _check(self):
        from .io.vw import check_interactions, check_n_bits

        check_n_bits(self.n_bits)
        if self.input_type not in _INPUT_TYPES:
            raise ValueError(
                f"input_type must be one of {_INPUT_TYPES}, got {self.input_type!r}"
            )
        pairs = check_interactions(self.interactions)
        if pairs and self.input_type != "namespaces":
            raise ValueError("interactions need input_type='namespaces'")
        if self.alternate_sign not in (True, False):
            raise ValueError(f"alternate_sign must be True or False, got {self.alternate_sign!r}")
        return pairs

    def fit(self, X=None, y=None):
        """Check the parameters; nothing is learned."""
        self._check()
        return self

    def row_features(self, row) -> list[tuple[str, float]]:
        """The ``(string, value)`` pairs hashed for one row (the documented contract)."""
        pairs = self._check()
        return self._row(row, pairs)

    def _row(self, row, pairs):
        if self.input_type == "dict":
            if not isinstance(row, Mapping):
                raise ValueError(f"a row must be a dict with input_type='dict', got {row!r}")
            return [(str(f), v) for f, v in _items(row, "a row")]
        if self.input_type == "string":
            return [(str(f), 1.0) for f, _ in _items(row, "a row")]
        if not isinstance(row, Mapping):
            raise ValueError(
                f"a row must be a dict namespace -> features with input_type='namespaces', "
                f"got {row!r}"
            )
        feats = []  # (namespace, string, value), zeros dropped
        for ns, features in row.items():
            ns = str(ns)
            if any(c in ns for c in " \t\n|:"):
                raise ValueError(f"namespace {ns!r} holds a space, '|' or ':'")
            for f, v in _items(features, f"namespace {ns!r}"):
                if v != 0:
                    feats.append((ns, feature_string(ns, str(f)), v))
        out = [(s, v) for _, s, v in feats]
        for a, b in pairs:
            for i, (ns_i, s_i, v_i) in enumerate(feats):
                if not ns_i.startswith(a):
                    continue
                for ns_j, s_j, v_j in feats[i if a == b else 0 :]:
                    if ns_j.startswith(b):
                        out.append((f"{s_i}*{s_j}", v_i * v_j))
        return out

    def transform(self, X):
        """Hash the rows of ``X`` (an iterable of rows); a CSR matrix of ``2**n_bits`` columns."""
        from sklearn.feature_extraction import FeatureHasher

        pairs = self._check()
        if isinstance(X, str | bytes | Mapping):
            raise ValueError("X must be an iterable of rows, not a single row or string")
        rows = [self._row(row, pairs) for row in X]
        n = 1 << int(self.n_bits)
        if not rows:
            return sp.csr_matrix((0, n), dtype=self.dtype)
        fh = FeatureHasher(
            n_features=n,
            input_type="pair",
            alternate_sign=self.alternate_sign,
            dtype=self.dtype,
        )
        return sp.csr_matrix(fh.transform(rows))

    def fit_transform(self, X, y=None, **fit_params):
        return self.fit(X, y).transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        if self.input_type == "string":
            tags.input_tags.string = True
        else:
            tags.input_tags.dict = True
        tags.requires_fit = False
        return tags
