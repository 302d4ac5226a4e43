r"""An online feature scaler: running means and variances, per row or per batch.

:class:`OnlineStandardScaler` keeps, for every feature :math:`j`, the number of values seen
:math:`n`, their mean :math:`\mu_j` and their sum of squared deviations :math:`M_j`, and maps
:math:`x_j \mapsto (x_j - \mu_j) / \sigma_j` with :math:`\sigma_j = \sqrt{M_j / n}` (the
population standard deviation; 1 where it is 0, so a constant feature is only centered).

* One row (Welford 1962): :math:`n \leftarrow n + 1`, :math:`d = x - \mu`,
  :math:`\mu \leftarrow \mu + d / n`, :math:`M \leftarrow M + d\,(x - \mu)`.
* A batch of :math:`n_B` rows with mean :math:`\mu_B` and sum of squared deviations :math:`M_B`
  (two passes over the batch) joins the running statistics by Chan, Golub and LeVeque's
  pairwise merge (1979): with :math:`\Delta = \mu_B - \mu` and :math:`n' = n + n_B`,
  :math:`\mu \leftarrow \mu + \Delta\, n_B / n'`,
  :math:`M \leftarrow M + M_B + \Delta^2\, n\, n_B / n'`.

Both are exact in real arithmetic, so ``partial_fit`` over batches gives, up to rounding, the
statistics of ``learn_one`` row by row and of ``fit`` on all rows at once.

Two interfaces, with their own statistics (one scaler serves one of them):

* scikit-learn's, on arrays: ``fit`` / ``partial_fit`` / ``transform`` / ``inverse_transform``
  on dense arrays and scipy CSR matrices; learned ``mean_``, ``var_``, ``scale_``,
  ``n_samples_seen_``.  On CSR input every row counts, its zeros included, and ``transform``
  only divides by ``scale_`` (no centering, as scikit-learn's ``with_mean=False``), so the
  result keeps the input's sparsity.  With ``with_mean=False`` dense input is not centered
  either; with ``with_std=False`` nothing is divided.
* River's, on dict rows: ``learn_one(x)`` / ``transform_one(x)``.  A feature's statistics start
  the first time it appears in a row (its own count, ``counts_``), as River's StandardScaler
  does; a feature never learned passes unchanged (mean 0, scale 1).

NaN or infinite values are refused (``ValueError``) and the scaler is left unchanged.

Parameters
----------
with_mean : bool, default True
    Center dense input (and dict rows) on the running mean.
with_std : bool, default True
    Divide by the running standard deviation.

Example::

    >>> import numpy as np
    >>> from onlinelearn.preprocessing import OnlineStandardScaler
    >>> X = np.array([[1.0, 10.0], [3.0, 10.0], [5.0, 10.0]])
    >>> scaler = OnlineStandardScaler().partial_fit(X[:2]).partial_fit(X[2:])
    >>> scaler.mean_, scaler.var_, scaler.scale_
    (array([ 3., 10.]), array([2.66666667, 0.        ]), array([1.63299316, 1.        ]))
    >>> s = OnlineStandardScaler()
    >>> for row in ({"a": 1.0}, {"a": 3.0, "b": 2.0}):
    ...     s.learn_one(row)
    >>> s.transform_one({"a": 3.0, "b": 2.0, "c": 7.0})
    {'a': 1.0, 'b': 0.0, 'c': 7.0}

In a scikit-learn pipeline, in front of any learner::

    from sklearn.pipeline import make_pipeline
    from onlinelearn import PassiveAggressiveClassifier
    model = make_pipeline(OnlineStandardScaler(), PassiveAggressiveClassifier()).fit(X, y)
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._core.config import njit
from .shell.validation import check_X

__all__ = ["OnlineStandardScaler"]


@njit(fastmath=False)
def _merge(n, mean, m2, nb, mean_b, m2_b):
    """Chan et al.'s merge of the batch statistics into (n, mean, m2), in place."""
    total = n + nb
    for j in range(mean.shape[0]):
        delta = mean_b[j] - mean[j]
        mean[j] += delta * (nb / total)
        m2[j] += m2_b[j] + delta * delta * (n * nb / total)


@njit(fastmath=False)
def _dense_stats(X, mean, m2, n):
    """Fold the rows of dense X into (n, mean, m2): the batch's mean and sum of squared
    deviations in two passes, then the merge."""
    nb, d = X.shape
    mean_b = np.zeros(d)
    m2_b = np.zeros(d)
    for i in range(nb):
        for j in range(d):
            mean_b[j] += X[i, j]
    for j in range(d):
        mean_b[j] /= nb
    for i in range(nb):
        for j in range(d):
            r = X[i, j] - mean_b[j]
            m2_b[j] += r * r
    _merge(float(n), mean, m2, float(nb), mean_b, m2_b)


@njit(fastmath=False)
def _csr_stats(data, indices, indptr, d, mean, m2, n):
    """As ``_dense_stats`` for CSR rows: a column's zeros add ``mean_b**2`` each."""
    nb = indptr.shape[0] - 1
    mean_b = np.zeros(d)
    m2_b = np.zeros(d)
    nnz = np.zeros(d)
    for k in range(indptr[nb]):
        mean_b[indices[k]] += data[k]
        nnz[indices[k]] += 1.0
    for j in range(d):
        mean_b[j] /= nb
    for k in range(indptr[nb]):
        r = data[k] - mean_b[indices[k]]
        m2_b[indices[k]] += r * r
    for j in range(d):
        m2_b[j] += (nb - nnz[j]) * mean_b[j] * mean_b[j]
    _merge(float(n), mean, m2, float(nb), mean_b, m2_b)


def _finite_row(x) -> dict:
    """The dict row ``x`` with float values, or ``ValueError`` (not a dict, a value that is not
    a real number, or not finite)."""
    if type(x) is not dict and not isinstance(x, dict):
        raise ValueError(f"learn_one / transform_one take a dict row, got {type(x).__name__}")
    out = {}
    for k, v in x.items():
        if type(v) is not float and type(v) is not int:  # the common cases, without the ABCs
            if not isinstance(v, (numbers.Real, np.bool_)):
                raise ValueError(f"feature {k!r} has a value that is not a number: {v!r}")
        v = float(v)
        if v - v != 0.0:  # NaN or an infinity
            raise ValueError(f"feature {k!r} is not finite: {v!r} (the scaler is unchanged)")
        out[k] = v
    return out


class OnlineStandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    __doc__ = __doc__

    def __init__(self, with_mean=True, with_std=True):
        self.with_mean = with_mean
        self.with_std = with_std

    # ------------------------------------------------------------------ arrays
    def fit(self, X, y=None):
        """Forget what was learned and learn the statistics of X's rows."""
        for name in ("n_samples_seen_", "mean_", "var_", "scale_", "_m2", "counts_"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X, y)

    def partial_fit(self, X, y=None):
        """Fold the rows of X (dense or CSR, at least one row) into the running statistics."""
        if hasattr(self, "counts_"):
            raise ValueError(
                "this scaler learned from dict rows (learn_one); use transform_one, or fit "
                "to start over on arrays"
            )
        first = not hasattr(self, "n_samples_seen_")
        before = dict(self.__dict__)
        try:  # validation may set n_features_in_ / feature_names_in_ before it refuses X
            X = _float64(check_X(self, X, reset=first), copy=False)
        except Exception:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        d = X.shape[1]
        mean = np.zeros(d) if first else self.mean_.copy()
        m2 = np.zeros(d) if first else self._m2.copy()
        n = 0 if first else self.n_samples_seen_
        if sp.issparse(X):
            X = X.tocsr()
            _csr_stats(X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64), d,
                       mean, m2, n)  # fmt: skip
        else:
            _dense_stats(np.ascontiguousarray(X), mean, m2, n)
        self.n_samples_seen_ = n + X.shape[0]
        self.mean_, self._m2 = mean, m2
        self.var_ = m2 / self.n_samples_seen_
        self.scale_ = _scale(self.var_)
        return self

    def transform(self, X, copy=None):
        """``(X - mean_) / scale_`` (dense; CSR and ``with_mean=False``: ``X / scale_``)."""
        check_is_fitted(self, "scale_")
        X = _float64(check_X(self, X, reset=False), copy=True)
        if sp.issparse(X):
            X = X.tocsr()
            if self.with_std:
                X.data /= self.scale_[X.indices]
            return X
        if self.with_mean:
            X -= self.mean_
        if self.with_std:
            X /= self.scale_
        return X

    def inverse_transform(self, X, copy=None):
        """The rows ``transform`` maps to X."""
        check_is_fitted(self, "scale_")
        X = _float64(check_X(self, X, reset=False), copy=True)
        if sp.issparse(X):
            X = X.tocsr()
            if self.with_std:
                X.data *= self.scale_[X.indices]
            return X
        if self.with_std:
            X *= self.scale_
        if self.with_mean:
            X += self.mean_
        return X

    # ------------------------------------------------------------------ dict rows
    def learn_one(self, x: dict):
        """Welford's update of each feature of the dict row ``x`` (River's ``learn_one``)."""
        if hasattr(self, "n_samples_seen_"):
            raise ValueError("this scaler learned from arrays (fit / partial_fit); use transform")
        x = _finite_row(x)
        if not hasattr(self, "counts_"):
            self.counts_, self.means_, self.m2_ = {}, {}, {}
        counts, means, m2 = self.counts_, self.means_, self.m2_
        for k, v in x.items():
            n = counts.get(k, 0) + 1
            mu = means.get(k, 0.0)
            d = v - mu
            mu += d / n
            counts[k], means[k] = n, mu
            m2[k] = m2.get(k, 0.0) + d * (v - mu)

    def transform_one(self, x: dict) -> dict:
        """The dict row ``x`` scaled feature by feature (River's ``transform_one``)."""
        if hasattr(self, "n_samples_seen_"):
            raise ValueError("this scaler learned from arrays (fit / partial_fit); use transform")
        x = _finite_row(x)
        counts = getattr(self, "counts_", {})
        for k, v in x.items():
            n = counts.get(k, 0)
            if n == 0:
                continue
            if self.with_mean:
                v -= self.means_[k]
            if self.with_std:
                var = self.m2_[k] / n
                v /= math.sqrt(var) if var > 0 else 1.0
            x[k] = v
        return x

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.requires_fit = True
        return tags


def _float64(X, copy):
    """X (dense or CSR, as ``check_X`` returns it) in float64, copied when ``copy``."""
    if sp.issparse(X):
        return X.astype(np.float64, copy=copy).tocsr()
    if copy:
        return np.array(X, dtype=np.float64, order="C")
    return np.ascontiguousarray(X, dtype=np.float64)


def _scale(var):
    scale = np.sqrt(var)
    scale[scale == 0.0] = 1.0
    return scale
