"""KernelSVC: the kernel SVM by dual coordinate ascent (course problem set 7; thesis Sec. 5.2.2)."""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions

from .._core.kernel import ovo as OV
from .._core.kernel import svc as SV
from .._core.kernel import svc_cs as CS
from ..kernels import Precomputed
from ..kernels._program import Program, Rows
from ..shell import validation as V
from ..shell.meta import ScoresClassifier
from ..shell.params import POSITIVE, Param, parameters
from ._online import kernel_param
from ._online_base import KERNEL_ONLINE
from ._svc_model import KernelSVCModelMixin

__all__ = ["KernelSVC"]


@parameters(
    "kernel * C multi_class tol max_iter shrinking cache_size fit_intercept intercept_scaling "
    "class_weight random_state selection",
    KERNEL_ONLINE, multi_class=Param("ovo", StrOptions({"ovo", "ovr", "crammer_singer"})),
    tol=Param(1e-3, POSITIVE), cache_size=Param(200.0, POSITIVE),
    selection=Param("greedy", StrOptions({"greedy", "random"})),
)  # fmt: skip
class KernelSVC(KernelSVCModelMixin, ScoresClassifier):
    """Kernel SVM trained by dual coordinate ascent, stopped on the duality gap.

    What
        The SVM with hinge loss in the RKHS of ``kernel``, solved in the dual one coordinate
        at a time with the exact clipped step of the course (problem set 7, "SVM using
        coordinate descent"; thesis Sec. 5.2.2: dual coordinate ascent is the end of the
        hierarchy of dual ascent steps where every dual variable is revisited).  Binary; for
        more classes one problem per pair of classes (``multi_class='ovo'``, the default, as
        libsvm: each problem only has the rows of its two classes, and a kernel cache of
        (row, class) segments shared by all the pairs computes each segment once), one problem
        per class (``'ovr'``, over all rows, solved side by side so that one kernel column
        serves every class), or the Crammer-Singer multiclass dual (``'crammer_singer'``, the
        sequential dual method of Keerthi et al. 2008, LIBLINEAR -s 4, with kernel columns).

    Problem solved (binary; each one-vs-rest problem with y_i = +1 for its class; each
    one-vs-one problem (a, b), a < b, over the rows of a and b with y_i = +1 for class a)::

        min_f  1/2 ||f||_H^2 + sum_i U_i [1 - y_i (f(x_i))]_+
        dual:  max_{0 <= alpha_i <= U_i}  sum_i alpha_i - 1/2 alpha' Q alpha
        step:  alpha_i <- clip(alpha_i - ((Q alpha)_i - 1) / Q_ii, 0, U_i)
        f(x) = sum_i alpha_i y_i (k(x_i, x) + b^2)

    Crammer-Singer::

        min_f 1/2 sum_m ||f_m||_H^2 + sum_i U_i max_m ([m != y_i] + f_m(x_i) - f_{y_i}(x_i))

    Where
        Q_ij = y_i y_j (k(x_i, x_j) + b^2); b = ``intercept_scaling`` when ``fit_intercept``
        (the bias is the weight of a constant feature, regularised, as in LIBLINEAR), else 0
        U_i = C x sample_weight_i x class_weight_{y_i}
        The course's form max alpha'1 - 1/(2 lambda) alpha'Q alpha, alpha in [0,1]^N is the
        same problem with C = 1/lambda and alpha = alpha_course / lambda.

    Stopping rule: the relative duality gap (P - D) / P <= ``tol`` for every problem, with P
    and D computed exactly at each epoch end from the gradient kept for every coordinate
    (``_core/kernel/svc.py`` has the formulas); ``max_iter`` epochs at most.

    Exact and approximate: every step is exact (the clipped closed-form coordinate step; in
    'ovo' the exact minimiser over two coordinates on their box; for Crammer-Singer the
    sub-problem of one example, solved exactly by sorting), so no inner solve stops short of
    a tolerance of its own.  The fit as a whole is approximate, to the relative gap ``tol``:
    a problem that has not reached it after ``max_iter`` epochs is counted, ``converged_`` is
    then False and one ConvergenceWarning per ``fit`` says how many problems missed ``tol``.

    Parameters
    ----------
    kernel : Kernel or str, default='rbf'
        A kernel of :mod:`onlinelearn.kernels` or 'linear', 'rbf', 'poly', 'laplacian',
        'cosine', 'precomputed'.  With 'precomputed' (or ``Precomputed()``), ``fit`` takes the
        square symmetric Gram matrix of the training rows and ``predict`` the (n_test, n_train)
        kernel values.
    C : float > 0, default=1.0
    multi_class : {'ovo', 'ovr', 'crammer_singer'}, default='ovo'
        'ovo' predicts by the votes of the K(K-1)/2 pair problems (ties broken by the summed
        pair decision values, as scikit-learn's SVC); it is the fastest on many classes (see
        docs/kernels.md) and needs ``selection='greedy'``.  Two classes: one problem whatever
        the choice.
    tol : float > 0, default=1e-3
        Relative duality gap at which a problem stops.
    max_iter : int, default=1000
        Maximum number of epochs (passes over the active coordinates).
    shrinking : bool, default=True
        Visit only the coordinates that the step can move (rebuilt every epoch from the exact
        gradient; the result does not depend on it beyond the visiting order).
    cache_size : float, default=200
        Size of the kernel-column cache in MB (LRU over columns of length n).
    fit_intercept : bool, default=True
    intercept_scaling : float > 0, default=1.0
    class_weight : dict, 'balanced' or None, default=None
        Multiplies C for the examples of each class ('balanced': n / (n_classes n_c)).
    random_state : int, RandomState or None, default=None
        Seed of the random order of the coordinates in each epoch (``selection='random'``).
    selection : {'greedy', 'random'}, default='greedy'
        Which coordinate the next step updates: 'random', the course's epochs over a random
        permutation (with shrinking); 'greedy', the coordinate (example, for Crammer-Singer)
        that violates optimality most (Gauss-Southwell, the rule of SMO solvers), one O(n) scan
        of the kept gradient per step.  The step is the same exact one; on kernel problems the
        greedy rule needs far fewer steps.  An epoch of 'greedy' is n steps per problem.

    Attributes
    ----------
    classes_, support_ (indices of the training rows with a nonzero dual variable),
    support_vectors_ (rows; CSR for CSR input; empty for 'precomputed'), n_support_ (per class),
    dual_coef_ (n_problems, n_SV): alpha_i y_i (binary, one-vs-rest, and one-vs-one with one row
    per pair (a, b) in the order (0, 1), (0, 2), ..., (1, 2), ...; zero outside a and b) or
    alpha_im (Crammer-Singer), so that problem p decides by sum_i dual_coef_[p, i]
    k(sv_i, x) + intercept_[p]; decision_function is (n, n_classes) for more than two classes
    (one-vs-one: votes plus squashed confidences),
    intercept_ (b^2 times the sum of each row of dual_coef_), n_iter_ (epochs), converged_
    (every problem reached ``tol``),
    history_ (one dict per epoch: epoch, primal, dual, gap, time; summed over problems),
    duality_gap_, cache_hits_, cache_misses_.

    Examples
    --------
    >>> from onlinelearn import KernelSVC
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> from onlinelearn.kernels import RBF
    >>> clf = KernelSVC(RBF(gamma=0.02), C=1.0).fit(X[:600], y[:600])
    >>> h = clf.history_[-1]
    >>> print(f"{clf.score(*load_dna('test')):.3f}", 0 <= h["gap"] <= 1e-3 * h["primal"])
    0.926 True
    """

    @property
    def _b2(self):
        return float(self.intercept_scaling) ** 2 if self.fit_intercept else 0.0

    def _precomputed(self):
        return isinstance(kernel_param(self.kernel, self), Precomputed)

    # ------------------------------------------------------------------ fit
    def _check_gram(self, X, n_train=None):
        X = X.toarray() if sp.issparse(X) else X
        X = np.ascontiguousarray(X, dtype=np.float64)
        if not np.isfinite(X).all():
            raise ValueError("the precomputed Gram matrix contains NaN or infinity")
        if n_train is None:
            if X.ndim != 2 or X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"a precomputed Gram matrix for fit must be square (n_train x n_train); "
                    f"got shape {X.shape}"
                )
            scale = max(float(np.abs(X).max()), 1e-300)
            if not np.allclose(X, X.T, rtol=1e-10, atol=1e-12 * scale):
                raise ValueError(
                    "the precomputed Gram matrix is not symmetric: a kernel matrix must satisfy "
                    "K[i, j] == K[j, i]"
                )
        elif X.shape[1] != n_train:
            raise ValueError(
                f"a precomputed kernel for predict needs one column per training row: "
                f"expected {n_train} columns, got {X.shape[1]}"
            )
        return X

    def _class_weights(self, y_codes, K):
        if self.class_weight is None:
            return np.ones(K)
        if self.class_weight == "balanced":
            counts = np.bincount(y_codes, minlength=K).astype(np.float64)
            return len(y_codes) / (K * np.maximum(counts, 1.0))
        cw = np.ones(K)
        for lab, val in self.class_weight.items():
            idx = np.searchsorted(self.classes_, lab)
            if idx < K and self.classes_[idx] == lab:
                if not (np.isfinite(val) and val >= 0):
                    raise ValueError(f"class_weight[{lab!r}] must be a finite number >= 0")
                cw[idx] = float(val)
        return cw

    def fit(self, X, y, sample_weight=None):
        """Solve the dual to a relative duality gap ``tol`` (one compiled call per epoch).

        A failure (bad input, a kernel giving NaN) leaves a fitted model as it was."""
        snap = dict(self.__dict__)
        try:
            return self._fit(X, y, sample_weight)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(snap)
            raise

    def _fit(self, X, y, sample_weight):
        self._validate_params()
        kernel = kernel_param(self.kernel, self)
        pre_mode = isinstance(kernel, Precomputed)
        X, y, sw = V.check_batch(self, X, y, sample_weight, reset=True)
        classes = np.unique(y)
        Kmat = self._check_gram(X) if pre_mode else None
        n = X.shape[0]
        self.classes_ = classes
        y_codes = np.searchsorted(classes, y).astype(np.int64)
        K = len(classes)
        cw = self._class_weights(y_codes, K)
        u = self.C * sw * cw[y_codes]
        cs = self.multi_class == "crammer_singer" and K > 2
        self._ovo = self.multi_class == "ovo" and K > 2
        if self._ovo:
            return self._fit_ovo(X, kernel, pre_mode, Kmat, y_codes, u)
        if K == 1:
            P = 1
        elif cs:
            P = K
        else:
            P = 1 if K == 2 else K
        if cs:
            Y = np.ones((n, P))
        elif K <= 2:
            Y = np.where(y_codes == K - 1, 1.0, -1.0)[:, None] if K == 2 else np.ones((n, 1))
        else:
            Y = np.where(y_codes[:, None] == np.arange(K)[None, :], 1.0, -1.0)
        Y = np.ascontiguousarray(Y)
        U = np.ascontiguousarray(np.repeat(u[:, None], 1 if cs else P, axis=1))

        prog, rows, pre, ops, par, ranges = self._rows(X, kernel, Kmat)
        n_slots = 1 if pre_mode else int(max(2, min(n, self.cache_size * 2**20 // (8 * n))))
        cache = np.zeros((n_slots, n if not pre_mode else 1))
        slot_row = np.full(n_slots, -1, dtype=np.int64)
        row_slot = np.full(n, -1, dtype=np.int64)
        stamp = np.zeros(n_slots, dtype=np.int64)
        cstate = np.zeros(3, dtype=np.int64)
        common = (rows.data, rows.indices, rows.indptr, rows.n_cols, rows.dense, rows.norms,
                  ops, par, ranges, self._b2, pre, cache, slot_row, row_slot, stamp,
                  cstate)  # fmt: skip
        Qd = self._diag(rows, ops, par, ranges, pre, kernel)
        alpha = np.zeros((n, P))
        G = np.zeros((n, P))
        self.history_ = []
        t0 = time.perf_counter()
        n_iter = 0
        obj = np.zeros((P, 3))
        n_missed = 0  # problems that did not reach tol
        if K >= 2:
            if SV.svc_init(*common, Y, alpha, G, cs, y_codes) != SV.OK:
                self._nonfinite(kernel)
            rng = check_random_state(self.random_state)
            active = np.arange(n, dtype=np.int64)
            n_active = n
            done = np.zeros(P, dtype=np.bool_)
            check = max(10, min(n // 20, 1000))
            # one contiguous row per problem for the greedy solver
            alphaT, GT = np.ascontiguousarray(alpha.T), np.ascontiguousarray(G.T)
            YT, UT = np.ascontiguousarray(Y.T), np.ascontiguousarray(U.T)
            for it in range(self.max_iter):
                if self.selection == "greedy":
                    status = SV.OK
                    if cs:
                        _, conv0, status = CS.cs_greedy(*common, y_codes, U, Qd, alpha, G, n,
                                                        check, self.tol)  # fmt: skip
                    else:
                        for p in np.flatnonzero(~done):
                            a_p, g_p = alphaT[p], GT[p]
                            _, conv0, status = SV.svc_greedy(*common, YT[p], UT[p], Qd, a_p, g_p,
                                                             n, check, self.tol,
                                                             self.shrinking)  # fmt: skip
                            alpha[:, p], G[:, p] = a_p, g_p
                            if status != SV.OK:
                                break
                else:
                    keys = rng.random_sample(n_active)
                    if cs:
                        status = CS.cs_epoch(*common, y_codes, U, Qd, alpha, G, active, n_active,
                                             keys)  # fmt: skip
                    else:
                        status = SV.svc_epoch(*common, Y, U, Qd, alpha, G, done, active,
                                              n_active, keys)  # fmt: skip
                if status != SV.OK:
                    self._nonfinite(kernel)
                n_iter = it + 1
                if cs:
                    CS.cs_objectives(alpha, G, U, y_codes, obj)
                    obj_p = obj[:1]
                else:
                    SV.svc_objectives(alpha, G, U, obj)
                    obj_p = obj
                self._record(n_iter, obj_p, t0)
                conv = obj_p[:, 2] <= self.tol * np.maximum(obj_p[:, 0], 1e-300)
                if cs:
                    if conv[0]:
                        break
                else:
                    done |= conv
                    if done.all():
                        break
                if self.shrinking and self.selection == "random":
                    if cs:
                        n_active = CS.cs_active(alpha, G, y_codes, active)
                    else:
                        n_active = SV.svc_active(alpha, G, U, done, active)
                    if n_active == 0:  # every gap term is 0: converged up to rounding
                        break
            # from the exact objectives of the last epoch, however the loop ended
            conv = obj_p[:, 2] <= self.tol * np.maximum(obj_p[:, 0], 1e-300)
            n_missed = int(not conv[0]) if cs else int(np.count_nonzero(~(done | conv)))
        coef = alpha if cs else alpha * Y
        self._finish(coef.T, X, prog, y_codes, n_iter, cstate, n_missed)
        return self

    def _rows(self, X, kernel, Kmat):
        """(program, rows, pre, ops, par, ranges) for the compiled core: the rows of X and the
        kernel program, or (``Kmat`` given, 'precomputed') the Gram matrix plus b^2."""
        n = X.shape[0]
        if Kmat is not None:
            rows = Rows()
            rows.data, rows.indices = np.zeros(1), np.zeros(1, np.int32)
            rows.indptr = np.zeros(1, np.int64)
            rows.n_rows, rows.n_cols, rows.dense, rows.norms = n, 0, True, np.zeros((n, 1))
            ops, par, ranges = np.zeros((1, 3), np.int64), np.zeros(1), np.zeros((1, 2), np.int64)
            return None, rows, Kmat + self._b2, ops, par, ranges
        prog = Program(kernel, X.shape[1])
        return prog, prog.rows(X), np.zeros((1, 1)), prog.ops, prog.par, prog.ranges

    def _diag(self, rows, ops, par, ranges, pre, kernel):
        Qd = np.zeros(rows.n_rows)
        SV.kernel_diag(rows.data, rows.indices, rows.indptr, rows.n_cols, rows.dense, rows.norms,
                       rows.n_rows, ops, par, ranges, self._b2, pre, Qd)  # fmt: skip
        if not np.isfinite(Qd).all():
            self._nonfinite(kernel)
        return Qd

    def _finish(self, coef, X, prog, y_codes, n_iter, cstate, n_missed):
        """The learned attributes from the dual coefficients ``coef`` (n_problems, n), and
        one ConvergenceWarning when ``n_missed`` of the problems did not reach ``tol``."""
        self.n_iter_ = n_iter
        self.converged_ = n_missed == 0
        if n_missed:
            cs = self.multi_class == "crammer_singer" and len(self.classes_) > 2
            self._warn_unconverged(n_missed, 1 if cs else coef.shape[0])
        self.cache_hits_ = int(cstate[SV.HITS])
        self.cache_misses_ = int(cstate[SV.MISSES])
        self.duality_gap_ = self.history_[-1]["gap"] if self.history_ else 0.0
        sv = np.flatnonzero(np.any(coef != 0.0, axis=0))
        self.support_ = sv
        self._dual = np.ascontiguousarray(coef[:, sv])  # (P, n_SV)
        self._cs = self.multi_class == "crammer_singer" and len(self.classes_) > 2
        self._prog = prog
        self._n_train = X.shape[0]
        self._sparse_input = sp.issparse(X)
        self._sv_rows = None if prog is None else prog.rows(X[sv])
        self._sv_label = y_codes[sv]
        return self

    def _fit_ovo(self, X, kernel, pre_mode, Kmat, y_codes, u):
        """One-vs-one: the binary problem of every pair of classes (``_core/kernel/ovo.py``),
        rows sorted by class so that a pair's rows are two blocks and each (row, class)
        kernel segment is computed once for all the pairs."""
        if self.selection != "greedy":
            raise ValueError("multi_class='ovo' solves its pairs with selection='greedy' only")
        n, K = X.shape[0], len(self.classes_)
        order = np.argsort(y_codes, kind="stable")
        cstart = np.searchsorted(y_codes[order], np.arange(K + 1)).astype(np.int64)
        Xs = X[order] if Kmat is None else None
        Ks = None if Kmat is None else np.ascontiguousarray(Kmat[np.ix_(order, order)])
        prog, rows, pre, ops, par, ranges = self._rows(Xs if Kmat is None else Ks, kernel, Ks)
        n_max = int(np.diff(cstart).max())
        if pre_mode:
            cache = np.zeros((2, 1))
        else:
            # >= 4: a two-coordinate step holds the segments of two rows in two classes
            n_slots = int(max(4, min(n * K, self.cache_size * 2**20 // (8 * n_max))))
            cache = np.zeros((n_slots, n_max))
        seg_slot = np.full((n, K), -1, dtype=np.int64)
        slot_key = np.full(cache.shape[0], -1, dtype=np.int64)
        stamp = np.zeros(cache.shape[0], dtype=np.int64)
        cstate = np.zeros(3, dtype=np.int64)
        common = (rows.data, rows.indices, rows.indptr, rows.n_cols, rows.dense, rows.norms, n,
                  ops, par, ranges, self._b2, pre, cstart, cache, seg_slot, slot_key, stamp,
                  cstate)  # fmt: skip
        Qd = self._diag(rows, ops, par, ranges, pre, kernel)
        us = u[order]
        pairs = [(a, b) for a in range(K) for b in range(a + 1, K)]
        local = []
        for a, b in pairs:
            idx = np.r_[cstart[a] : cstart[a + 1], cstart[b] : cstart[b + 1]]
            na = cstart[a + 1] - cstart[a]
            yl = np.where(np.arange(len(idx)) < na, 1.0, -1.0)
            local.append((idx, yl, us[idx], Qd[idx], np.zeros(len(idx)), np.full(len(idx), -1.0)))
        P = len(pairs)
        done = np.zeros(P, dtype=np.bool_)
        obj = np.zeros((P, 3))
        self.history_ = []
        t0 = time.perf_counter()
        n_iter = 0
        for it in range(self.max_iter):
            for p in np.flatnonzero(~done):
                (a, b), (idx, yl, Ul, Ql, al, Gl) = pairs[p], local[p]
                check = max(5, min(len(idx) // 200, 1000))  # shrink often: few steps a pair
                _, _, status = OV.pair_greedy(a, b, *common, yl, Ul, Ql, al, Gl, len(idx), check,
                                              self.tol, self.shrinking)  # fmt: skip
                if status != SV.OK:
                    self._nonfinite(kernel)
                obj[p] = SV._gap_terms(al, Gl, Ul)
            n_iter = it + 1
            self._record(n_iter, obj, t0)
            done |= obj[:, 2] <= self.tol * np.maximum(obj[:, 0], 1e-300)
            if done.all():
                break
        coef_sorted = np.zeros((P, n))
        for p, (idx, yl, _, _, al, _) in enumerate(local):
            coef_sorted[p, idx] = al * yl
        coef = np.empty_like(coef_sorted)
        coef[:, order] = coef_sorted
        self._finish(coef, X, prog, y_codes, n_iter, cstate, int(np.count_nonzero(~done)))
        return self

    def _record(self, n_iter, obj, t0):
        """One epoch of ``history_``: primal, dual and gap (columns of ``obj``) summed over the
        problems (its rows), and the time since ``t0``."""
        primal, dual, gap = (float(obj[:, j].sum()) for j in range(3))
        self.history_.append({"epoch": n_iter, "primal": primal, "dual": dual, "gap": gap,
                              "time": time.perf_counter() - t0})  # fmt: skip

    def _warn_unconverged(self, n_missed, n_problems):
        warnings.warn(
            f"KernelSVC: {n_missed} of its {n_problems} dual problem(s) did not reach the "
            f"relative duality gap tol={self.tol} in max_iter={self.max_iter} epochs (last "
            f"gap, summed over the problems, {self.history_[-1]['gap']:.3g}); the model is "
            "that of the last epoch. Increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=5,
        )

    def _nonfinite(self, kernel):
        raise FloatingPointError(
            f"KernelSVC: the kernel {kernel!r} gave NaN or infinity on the training data; scale "
            "the features or the kernel's parameters (e.g. a smaller gamma)."
        )
