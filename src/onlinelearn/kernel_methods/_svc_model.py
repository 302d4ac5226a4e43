"""What a fitted KernelSVC says and keeps: its decision function (one-vs-one votes), the
support vectors and dual coefficients, and its model files.  A mixin of
:class:`~onlinelearn.kernel_methods.KernelSVC`, which solves; it reads the solver's state
(``_dual``, ``_sv_rows``, ``_prog``, ``_ovo``, ...) and its ``_check_gram``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ..kernels import Precomputed
from ..kernels._program import Program
from ..shell import validation as V
from ..shell.meta import estimator_from_meta
from ._online import json_params, kernel_param, params_from_json

__all__ = ["KernelSVCModelMixin"]


def _ovo_scores(f, K):
    """(n, K) class scores from the (n, K(K-1)/2) pair decision values f (pairs (a, b), a < b,
    in lexicographic order; f > 0 votes for a, else for b): the votes plus the summed pair
    confidences squashed into (-1/3, 1/3), so that they only break ties between votes (the
    'ovr'-shaped decision function of libsvm's one-vs-one in scikit-learn)."""
    votes = np.zeros((f.shape[0], K))
    conf = np.zeros((f.shape[0], K))
    p = 0
    for a in range(K):
        for b in range(a + 1, K):
            win = f[:, p] >= 0.0
            votes[:, a] += win
            votes[:, b] += ~win
            conf[:, a] += f[:, p]
            conf[:, b] -= f[:, p]
            p += 1
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


class KernelSVCModelMixin:
    """Read-out and model files of :class:`~onlinelearn.kernel_methods.KernelSVC`."""

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """Scores f_p(x) = sum_i dual_coef_[p, i] (k(x_i, x) + b^2): shape (n,) for two classes
        (positive means ``classes_[1]``), (n, n_classes) otherwise."""
        check_is_fitted(self, "support_")
        if self._prog is None:
            X = V.check_X(self, X, reset=False) if not sp.issparse(X) else X
            Kx = self._check_gram(X, self._n_train)[:, self.support_]
        else:
            X = V.check_X(self, X, reset=False)
            Kx = self._prog.block(self._prog.rows(X), self._sv_rows)
        scores = Kx @ self._dual.T + self._b2 * self._dual.sum(axis=1)
        if not np.isfinite(scores).all():
            raise FloatingPointError("KernelSVC: the kernel gave NaN or infinity on these inputs")
        if getattr(self, "_ovo", False):
            return _ovo_scores(scores, len(self.classes_))
        if len(self.classes_) == 1:
            return np.zeros(scores.shape[0])
        if scores.shape[1] == 1:
            return scores[:, 0]
        return scores

    @property
    def dual_coef_(self):
        check_is_fitted(self, "support_")
        return self._dual

    @property
    def intercept_(self):
        check_is_fitted(self, "support_")
        return self._b2 * self._dual.sum(axis=1)

    @property
    def n_support_(self):
        check_is_fitted(self, "support_")
        return np.bincount(self._sv_label, minlength=len(self.classes_))

    @property
    def support_vectors_(self):
        check_is_fitted(self, "support_")
        if self._sv_rows is None:
            return np.zeros((0, 0))
        r = self._sv_rows
        d = self.n_features_in_
        if r.dense:
            M = r.data.reshape(r.n_rows, r.n_cols)[:, :d]
            return sp.csr_matrix(M) if self._sparse_input else np.array(M)
        M = sp.csr_matrix((r.data, r.indices, r.indptr), shape=(r.n_rows, r.n_cols))[:, :d]
        return M.tocsr() if self._sparse_input else M.toarray()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._precomputed() if self.kernel is not None else False
        return tags

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        check_is_fitted(self, "support_")
        meta = {
            "class": "KernelSVC",
            "params": json_params(self),
            "n_features_in_": int(self.n_features_in_),
            "n_train": int(self._n_train),
            "cs": self._cs,
            "ovo": bool(getattr(self, "_ovo", False)),
            "n_iter_": int(self.n_iter_),
            "converged_": bool(self.converged_) if self.converged_ is not None else None,
            "sparse_input": bool(self._sparse_input),
        }
        arrays = {
            "classes_": np.asarray(self.classes_),
            "support_": self.support_,
            "dual": self._dual,
            "sv_label": self._sv_label,
        }
        if self._sv_rows is not None:
            sv = self.support_vectors_
            arrays["sv"] = sv.toarray() if sp.issparse(sv) else sv
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta, arrays, decode=params_from_json)
        est._validate_params()
        est.support_ = np.asarray(arrays["support_"], dtype=np.int64)
        est._dual = np.ascontiguousarray(arrays["dual"], dtype=np.float64)
        est._sv_label = np.asarray(arrays["sv_label"], dtype=np.int64)
        est._n_train = int(meta["n_train"])
        est._cs = bool(meta["cs"])
        est._ovo = bool(meta["ovo"])
        est.n_iter_ = int(meta["n_iter_"])
        est.converged_ = meta["converged_"]
        est._sparse_input = bool(meta["sparse_input"])
        est.history_ = []
        kernel = kernel_param(est.kernel, est)
        if isinstance(kernel, Precomputed):
            est._prog, est._sv_rows = None, None
        else:
            est._prog = Program(kernel, est.n_features_in_)
            sv = np.ascontiguousarray(arrays["sv"], dtype=np.float64)
            if sv.shape != (len(est.support_), est.n_features_in_):
                raise ValueError("model state is inconsistent: support vectors of wrong shape")
            est._sv_rows = est._prog.rows(sp.csr_matrix(sv) if est._sparse_input else sv)
        if est._dual.shape[1] != len(est.support_):
            raise ValueError("model state is inconsistent: dual coefficients of wrong shape")
        return est
