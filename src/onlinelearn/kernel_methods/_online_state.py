"""What a fitted kernel online learner keeps beyond its predictions: the dual objective of its
run and its model files (with the kernel written as JSON).  :class:`KernelOnlineState` holds
these methods for :class:`~onlinelearn.kernel_methods._online_base.KernelOnlineClassifier`,
which takes them as its own.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core import steps as S
from .._core.kernel import online as O
from ..kernels import from_dict
from ..shell.meta import check_shape, estimator_from_meta, params_to_json, state_meta
from ..shell.meta import params_from_json as _params_from_json

__all__ = ["KernelOnlineState", "json_params", "kernel_from_json", "kernel_to_json",
           "params_from_json"]  # fmt: skip


def kernel_to_json(kernel):
    return kernel if isinstance(kernel, str) else {"__kernel__": kernel.to_dict()}


def params_from_json(params):
    """Parameters of a model file: the kernel rebuilt, then ``shell.meta.params_from_json``."""
    params = _params_from_json(params)
    params["kernel"] = kernel_from_json(params["kernel"])
    return params


def kernel_from_json(value):
    if isinstance(value, dict) and "__kernel__" in value:
        return from_dict(value["__kernel__"])
    return value


def json_params(est):
    """``get_params()`` in JSON types (``shell.meta.params_to_json``), the kernel as a dict."""
    params = params_to_json(est)
    params["kernel"] = kernel_to_json(params["kernel"])
    return params


class KernelOnlineState:
    """The kept dual and the model files of the kernel online learners (module docstring)."""

    # ------------------------------------------------------------------ the kept dual
    def _keeps_dual(self):
        """True when the pass keeps the dual objective: the hinge steps (Perceptron, PA, PA-I,
        PA-II), not COPA (whose loss has no dual kept here, as :class:`onlinelearn.COPA`)."""
        return self._step()[0] != S.COPA

    def _dual_margin(self):
        """gamma of the hinge whose dual ``st[DUAL]`` keeps: the step's margin; 1 when it is 0
        (the Perceptron's Hinge(0): thesis Sec. 5.1.1 sets gamma = 1), as the linear twins."""
        gamma = self._step()[2]
        return gamma if gamma > 0.0 else 1.0

    @property
    def dual_objective_(self):
        """The dual objective of the run so far, kept as the sum of the rounds' increments.

        With tau_t >= 0 the step of round t (its update f += tau_t u_t, u_t = y_t k(x_t, .)
        binary, or k(x_t, .) on the column of y_t and -k(x_t, .) on the max-score rival's),
        f = sum_t tau_t u_t and gamma the hinge's margin (1 for the Perceptron)::

            D = sum_t (gamma tau_t - [PA-II] tau_t^2 / (4 C_t)) - 1/2 ||f||_H^2,
            ||f||_H^2 = sum_k sum_{s,s'} c_sk c_s'k (k(x_s, x_s') + b^2)

        (thesis eq. 5.12 divided by c, the Euclidean conjugate in the RKHS of k + b^2; the
        same definition as the linear learners' ``dual_objective_``, which it equals with
        ``kernel='linear'``).  It is the dual of::

            P(f) = 1/2 ||f||_H^2 + sum_t C_t [gamma - margin_t(f)]_+   (PA-II: squared hinge)

        over every round so far (all epochs), with C_t = C s_t (PA-I, PA-II), s_t (the
        Perceptron: tau_t = s_t on a mistake) and +inf (PA), s_t the example's weight (class
        weight x sample weight), margin_t the binary or max-rival multiclass margin and the
        intercept the weight of a regularised feature of constant value b =
        ``intercept_scaling``.  So D <= P(f) for every f (weak duality): P(f_avg) - D bounds
        how far the current or averaged hypothesis is from the optimum of P; averaging changes
        nothing in D (the average is another primal point).  The dual variables are in the
        state: sum_t tau_t = sum_s y_s c_s (binary) or sum_s c_{s, y_s} (multiclass).  When a
        binary model meets a third label its columns become (-c/2, c/2): the same variables,
        tau_t / 2, on the multiclass hinge (D is updated exactly, PA-II included).

        NaN for KernelCOPA (as :class:`onlinelearn.COPA`) and once a support vector has been
        removed by the budget (f then forgets some tau_t u_t, so it is no longer the primal
        point of these variables; with a budget never reached D is kept)."""
        if "classes_" not in self.__dict__:
            check_is_fitted(self, "classes_")
        return float(self._st[O.DUAL])

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        check_is_fitted(self, "classes_")
        n = self._n_sv
        d, i, p = self._compact()
        meta = state_meta(self, json_params(self), sparse_input=bool(self._sparse_input))
        arrays = {
            "classes_": np.asarray(self.classes_),
            "sv_data": d,
            "sv_indices": i,
            "sv_indptr": p,
            "st": self._st,
            "class_counts": self.class_counts_,
        }
        for a in ("_sv_norm", "_sv_kxx", "_coef", "_A", "_last", "_born", "_label"):
            arrays[a[1:]] = np.ascontiguousarray(getattr(self, a)[:n])
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta, decode=params_from_json)
        est._validate()
        classes = np.asarray(arrays["classes_"])
        est._init_state(classes, est.n_features_in_, meta["sparse_input"])
        st = np.asarray(arrays["st"], dtype=np.float64)
        check_shape("st", st, (O.N_ST,))
        n = int(st[O.N_SV])
        p = np.asarray(arrays["sv_indptr"], dtype=np.int64)
        est._pool_d = np.ascontiguousarray(arrays["sv_data"], dtype=np.float64)
        est._pool_i = np.ascontiguousarray(arrays["sv_indices"], dtype=np.int32)
        est._sv_lo = p[:-1].copy()
        est._sv_hi = p[1:].copy()
        for a in ("_sv_norm", "_sv_kxx", "_coef", "_A", "_last", "_born", "_label"):
            ref = getattr(est, a)
            setattr(est, a, np.ascontiguousarray(arrays[a[1:]], dtype=ref.dtype))
        est._sv_src = np.full(n, -1, dtype=np.int64)
        est._st = st
        est.class_counts_ = np.asarray(arrays["class_counts"], dtype=np.int64)
        n_cols = 1 if (len(classes) <= 2 and not cls._always_multiclass) else len(classes)
        if est._coef.shape != (n, n_cols) or p.shape != (n + 1,):
            raise ValueError("model state is inconsistent: support set arrays of wrong shapes")
        st[O.POOL_USED] = p[-1]
        return est
