"""``DualCoordinateSVC``: the linear SVM solved by dual coordinate ascent, one compiled call."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core.svm import dcd
from ..shell import validation as V
from ..shell.meta import (
    ScoresClassifier,
    estimator_from_meta,
    float_arrays,
    state_meta,
)
from ..shell.params import AT_LEAST_ONE, NON_NEGATIVE, POSITIVE, SHARED, Param, parameters

__all__ = ["DualCoordinateSVC"]

HISTORY_FIELDS = ("epoch", "primal", "dual", "gap", "time", "n_active")


def class_weight_vector(class_weight, classes, y_codes):
    """Weight of each class: 1, a dict {label: weight} (labels not in ``classes`` are refused),
    or 'balanced' (n / (K n_c), scikit-learn's convention)."""
    K = len(classes)
    if class_weight is None:
        return np.ones(K)
    if isinstance(class_weight, str):  # 'balanced'
        counts = np.bincount(y_codes, minlength=K).astype(np.float64)
        return len(y_codes) / (K * counts)
    cw = np.ones(K)
    for lab, val in class_weight.items():
        if not (isinstance(val, numbers.Real) and np.isfinite(val) and val >= 0):
            raise ValueError(
                f"class_weight[{lab!r}] = {val!r}: class weights must be finite numbers >= 0"
            )
        idx = np.searchsorted(classes, lab) if len(classes) else 0
        if not (idx < K and classes[idx] == lab):
            raise ValueError(
                f"class_weight names the label {lab!r}, which is not among the classes of y "
                f"({classes[:10].tolist()})"
            )
        cw[idx] = float(val)
    return cw


@parameters(
    "C * lam loss multi_class tol max_iter fit_intercept intercept_scaling class_weight "
    "shrinking check_every warm_start random_state",
    SHARED, lam=Param(None, POSITIVE, None), tol=Param(1e-3, NON_NEGATIVE),
    loss=Param("hinge", StrOptions({"hinge", "squared_hinge"})),
    multi_class=Param("ovr", StrOptions({"ovr", "crammer_singer"})),
    check_every=Param("auto", AT_LEAST_ONE, StrOptions({"auto"})),
    warm_start=Param(False, "boolean"),
)  # fmt: skip
class DualCoordinateSVC(ScoresClassifier):
    """Linear SVM by dual coordinate ascent (Hsieh et al. 2008; LIBLINEAR ``-s 1/3/4``).

    Problem (LIBLINEAR's form; per-example cost C_i = C x sample_weight_i x class_weight_{y_i})::

        hinge:          min_w 1/2 ||w||^2 + sum_i C_i [1 - y_i <w, x_i>]_+
        squared_hinge:  min_w 1/2 ||w||^2 + sum_i C_i [1 - y_i <w, x_i>]_+^2
        crammer_singer: min_W 1/2 sum_m ||w_m||^2
                              + sum_i C_i max_m (1 - [m = y_i] + <w_m - w_{y_i}, x_i>)

    and its dual, maximised one coordinate (one example) at a time by the exact clipped step
    (see :mod:`onlinelearn._core.svm.dcd_binary` and :mod:`onlinelearn._core.svm.dcd_cs`
    for the formulas).  The course's form
    (``lam`` given) is the same problem divided by C, with lambda = 1 / C::

        min_w sum_i [1 - y_i <w, x_i>]_+ + lambda/2 ||w||^2
        max_{alpha in [0,1]^N} alpha'1 - 1/(2 lambda) alpha' Q alpha
        w = 1/lambda sum_i alpha_i y_i x_i,   Q_ij = y_i y_j <x_i, x_j>

    so w is the same, alpha_course = lambda alpha_liblinear and every objective value (and the
    gap) of the course's form is lambda times LIBLINEAR's.  ``history_`` and ``alpha_`` are
    reported in the form the parameters chose.

    Exact and approximate: every step is exact (the clipped closed-form maximiser of the dual
    along one coordinate; for Crammer-Singer the sub-problem of one example, solved exactly by
    sorting), and the objectives of an evaluation are exact to rounding (the dual from w(alpha)
    summed afresh from alpha, ~1e-15 relative).  The fit as a whole is approximate, to the
    relative gap ``tol``: ``converged_`` says whether it was reached, and a fit that stops at
    ``max_iter`` without it issues one ConvergenceWarning.

    Parameters
    ----------
    C : float, default=1.0
        Cost of the losses (LIBLINEAR's ``-c``).  Ignored when ``lam`` is given.
    lam : float or None, default=None
        The course's regularisation lambda; when given, C = 1 / lam.
    loss : {'hinge', 'squared_hinge'}, default='hinge'
        L1-loss (box 0 <= alpha_i <= C_i) or L2-loss SVM (alpha_i >= 0, diagonal 1/(2 C_i)).
        Ignored by ``multi_class='crammer_singer'`` (hinge).
    multi_class : {'ovr', 'crammer_singer'}, default='ovr'
        For more than two classes: one binary problem per class against the rest (solved
        interleaved, in rounds of up to 8 epochs of each problem; one epoch per round with an
        integer ``check_every``), or the Crammer-Singer multiclass SVM solved by the
        sequential dual method.  With two classes 'ovr' solves the one binary problem;
        'crammer_singer' solves the two-class Crammer-Singer problem (coef_ = w_1 - w_0).
    tol : float, default=1e-3
        Stop when the relative duality gap (P - D) / P <= tol.  For 'ovr' P and D are the sums
        over the binary problems (the one-vs-rest objective); a binary problem that reaches
        the gap on its own stops early.
        The gap bounds the primal sub-optimality: P(w) - P(w*) <= P - D.
    max_iter : int, default=1000
        Maximum number of epochs (a ConvergenceWarning is issued if the gap is not reached).
    fit_intercept : bool, default=True
        Fit a bias as the weight of an extra feature of constant value ``intercept_scaling``,
        regularised like the other weights (LIBLINEAR's ``-B``).
    intercept_scaling : float, default=1.0
        The value b of the constant feature; ``intercept_ = b * weight``.
    class_weight : dict, 'balanced' or None, default=None
        Multiplies C for the examples of a class ('balanced': n / (n_classes n_c)).  For 'ovr'
        the weight is the example's own class weight in every binary problem.
    shrinking : bool, default=True
        Drop variables at a bound whose gradient points out of the box (Hsieh et al. 2008,
        Sec. 3.2; Keerthi et al. 2008 for Crammer-Singer).  Never changes the solution: the
        stopping gap is evaluated over all variables and an active set that looks optimal
        is re-opened until the gap is reached.
    check_every : int or 'auto', default='auto'
        Evaluate the primal, the dual and the gap over all examples every that many epochs;
        'auto' evaluates where LIBLINEAR would stop (an epoch that shrank nothing looks
        optimal) and once the coordinate steps since the last evaluation have cost
        2 + 2 ln(gap / (tol P)) times what it cost (rarely while the gap is far from tol).
        An evaluation is exact but reads only the rows whose loss the margins cached at
        earlier evaluations do not settle (see :mod:`onlinelearn._core.svm.dcd_binary`), so
        late evaluations are cheap.  ``history_`` has one row per evaluation
        (``check_every=1``: one per epoch).
    warm_start : bool, default=False
        Start from the dual variables of the previous fit when it had the same examples
        count, classes and problem (alpha is clipped into the new box when C changed); the
        primal w(alpha) is rebuilt exactly.  Otherwise start from alpha = 0.
    random_state : int, RandomState or None, default=None
        Seeds the order of the coordinates (a fresh random permutation per epoch).

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    coef_ : ndarray (1, n_features) for two classes, (n_classes, n_features) otherwise
        The weights w(alpha) of the evaluation with the smallest primal value (the last
        evaluation, unless the primal went up since: on the hinge loss P(w(alpha)) is not
        monotone while D(alpha) is); ``history_['primal'][-1]`` is their primal value.
    intercept_ : ndarray (1,) or (n_classes,)
    alpha_ : ndarray (n_problems, n_samples)
        Dual variables (n_problems = 1 for two classes with 'ovr', n_classes otherwise; for
        Crammer-Singer alpha_[m, i] is alpha_i^m), in LIBLINEAR's scale or, with ``lam``,
        the course's ([0, 1] box for the hinge loss).
    history_ : dict of ndarrays
        ``epoch``, ``primal``, ``dual``, ``gap`` (= primal - dual), ``time`` (seconds since
        the start of the solver) and ``n_active`` (variables not shrunk), one entry per
        evaluation; row 0 is the starting point.  ``primal`` is the smallest P(w(alpha))
        among the evaluations so far (the weights the solver would return there) and
        ``dual`` is D of the current alpha, with w(alpha) summed afresh from alpha at each
        evaluation (not the w that the coordinate steps update, whose rounding errors add
        up), so ``gap`` does not go up (but for rounding, ~1e-15 relative) and bounds the
        primal sub-optimality of the model returned: the last row is P(``coef_``,
        ``intercept_``) - D(``alpha_``).  For 'ovr' the sums over the binary problems.
    n_iter_ : int
        Epochs run.
    converged_ : bool
        Whether the gap reached ``tol``: P(``coef_``, ``intercept_``) - D(``alpha_``)
        <= tol P, both evaluated exactly (to rounding) at the model and the dual point
        returned.

    Examples
    --------
    >>> from onlinelearn import DualCoordinateSVC
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = DualCoordinateSVC(C=0.1, multi_class="crammer_singer", random_state=0).fit(X, y)
    >>> round(clf.score(*load_dna("test")), 3)
    0.954
    >>> h = clf.history_
    >>> bool(h["gap"][-1] <= clf.tol * h["primal"][-1] and (h["gap"] >= 0).all())
    True
    """

    #: span (epochs) of the average of w(alpha) evaluated as the primal point once the gap
    #: falls slowly (two classes with 'ovr' only: on news20 one-vs-rest the average made the
    #: problems finish later, +5% nonzeros read, mnist -5%; 0: w(alpha) itself); a private
    #: switch for the tests and the benchmark, see
    #: :data:`onlinelearn._core.svm.dcd_binary.AVG_SPAN`
    _avg_span = dcd.AVG_SPAN

    # ------------------------------------------------------------------ helpers
    @property
    def C_(self):
        """The effective LIBLINEAR cost: 1 / lam when ``lam`` is given, else C."""
        return 1.0 / float(self.lam) if self.lam is not None else float(self.C)

    def _scale(self):
        # objective values and alpha of the chosen form relative to LIBLINEAR's
        return float(self.lam) if self.lam is not None else 1.0

    def _problem_key(self, classes, n):
        return (
            tuple(np.asarray(classes).tolist()),
            int(n),
            self.multi_class if len(classes) > 2 or self.multi_class == "crammer_singer" else "",
            self.loss if self.multi_class != "crammer_singer" else "hinge",
            bool(self.fit_intercept),
        )

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Solve the SVM on (X, y) to the relative duality gap ``tol``.

        A rejected input or a failed solve leaves a fitted model exactly as it was."""
        self._validate_params()
        saved = dict(self.__dict__)
        try:
            X, y = V.check_X_y(self, X, y, reset=True)
            result = self._solve(X, y, sample_weight)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        self.__dict__.update(result)
        if not self.converged_:
            warnings.warn(
                f"DualCoordinateSVC did not reach the relative duality gap tol={self.tol} in "
                f"max_iter={self.max_iter} epochs (last gap {self.history_['gap'][-1]:.3g}, "
                f"primal {self.history_['primal'][-1]:.6g}); raise max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _solve(self, X, y, sample_weight):
        n, d = X.shape
        sw = V.check_sample_weight(sample_weight, n)
        classes, y_codes = np.unique(y, return_inverse=True)
        y_codes = y_codes.astype(np.int64)
        K = len(classes)
        if K < 2:
            raise ValueError(
                f"DualCoordinateSVC needs at least two classes in y; got {K} class(es): "
                f"{classes.tolist()}"
            )
        cw = class_weight_vector(self.class_weight, classes, y_codes)
        C = self.C_
        Ci = np.ascontiguousarray(C * sw * cw[y_codes], dtype=np.float64)
        if not np.all(np.isfinite(Ci)):
            raise ValueError("C x sample_weight x class_weight overflows to infinity")
        b = float(self.intercept_scaling) if self.fit_intercept else 0.0
        R = d + (1 if self.fit_intercept else 0)
        batch = V.CSRBatch(X)
        cs = self.multi_class == "crammer_singer"
        n_prob = K if (cs or K > 2) else 1
        key = self._problem_key(classes, n)
        seed = int(check_random_state(self.random_state).randint(0, 2**31 - 1))
        check_every = 0 if self.check_every == "auto" else int(self.check_every)
        hist = np.zeros((self.max_iter + 1, dcd.N_HIST))
        stats = np.zeros(len(dcd.STATS_FIELDS))
        alpha0 = self._warm_alpha(key, Ci, cs, y_codes, n_prob)
        if cs:
            alpha = np.ascontiguousarray(alpha0.T) if alpha0 is not None else np.zeros((n, K))
            W = np.zeros((R, K))
            nodes, ptr = dcd.pack_rows(batch.data, batch.indices, batch.indptr, b, d)
            epochs, rows, reached = dcd.cs_dcd(
                nodes, ptr, y_codes, Ci, alpha, W, float(self.tol), int(self.max_iter),
                bool(self.shrinking), seed, check_every, hist, stats,
            )  # fmt: skip
            converged = reached == 1
            alpha_out = np.ascontiguousarray(alpha.T)
            W_out = np.ascontiguousarray(W.T)  # (K, R)
            if K == 2:
                W_out = W_out[1:2] - W_out[0:1]
        else:
            alpha = alpha0 if alpha0 is not None else np.zeros((n_prob, n))
            W = np.zeros((n_prob, R))
            pos = np.arange(n_prob, dtype=np.int64) if n_prob > 1 else np.array([1], np.int64)
            nodes, ptr = dcd.pack_rows(batch.data, batch.indices, batch.indptr, b, d)
            epochs, rows, n_done = dcd.ovr_dcd(
                nodes, ptr, y_codes, pos, Ci, self.loss == "squared_hinge", alpha, W,
                float(self.tol), int(self.max_iter), bool(self.shrinking), seed, check_every,
                hist, stats, float(self._avg_span) if n_prob == 1 else 0.0,
            )  # fmt: skip
            converged = n_done == n_prob
            alpha_out = alpha
            W_out = W
        if not (np.isfinite(W_out).all() and np.isfinite(hist[:rows]).all()):
            raise FloatingPointError(
                "DualCoordinateSVC: a weight became infinite or NaN; the model was left as it "
                "was. Scale the features or lower C."
            )
        scale = self._scale()
        h = hist[:rows]
        history = {f: h[:, j].copy() for j, f in enumerate(HISTORY_FIELDS)}
        for f in ("primal", "dual", "gap"):
            history[f] *= scale
        history["epoch"] = history["epoch"].astype(np.int64)
        history["n_active"] = history["n_active"].astype(np.int64)
        return {
            "classes_": classes,
            "coef_": np.ascontiguousarray(W_out[:, :d]),
            "intercept_": (b * W_out[:, d]) if self.fit_intercept else np.zeros(W_out.shape[0]),
            "_alpha": alpha_out,  # (n_prob, n), LIBLINEAR's scale
            "_key": key,
            "_Ci": Ci,
            "history_": history,
            "n_iter_": int(epochs),
            "converged_": bool(converged),
            "_stats": dict(zip(dcd.STATS_FIELDS, stats.tolist(), strict=True)),
        }

    def _warm_alpha(self, key, Ci, cs, y_codes, n_prob):
        """Dual start of a warm start, feasible for the new costs; None for a cold start."""
        if not self.warm_start or getattr(self, "_key", None) != key:
            return None
        a = np.array(self._alpha, dtype=np.float64)  # (n_prob, n)
        if a.shape != (n_prob, Ci.shape[0]):
            return None
        if cs:
            # alpha_i^m <= C_i [m = y_i], sum_m alpha_i^m = 0: scale each example's column
            ay = a[y_codes, np.arange(a.shape[1])]
            f = np.where(ay > Ci, Ci / np.where(ay > 0, ay, 1.0), 1.0)
            a *= f[None, :]
        elif self.loss == "hinge":
            np.clip(a, 0.0, Ci[None, :], out=a)
        else:
            a[:, Ci <= 0] = 0.0
        return np.ascontiguousarray(a)

    # ------------------------------------------------------------------ predict
    @property
    def alpha_(self):
        """Dual variables (see the class docstring), in the parametrisation chosen."""
        check_is_fitted(self, "_alpha")
        return self._alpha * self._scale()

    def decision_function(self, X):
        """Scores <w, x> + b: (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes)."""
        check_is_fitted(self, "coef_")
        X = V.check_X(self, X, reset=False)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def primal_objective(self, X, y, sample_weight=None):
        """P(w) of the fitted weights on (X, y), in the parametrisation chosen."""
        check_is_fitted(self, "coef_")
        X, y, sw = V.check_batch(self, X, y, sample_weight, reset=False)
        codes = np.searchsorted(self.classes_, y)
        if not np.all(self.classes_[np.minimum(codes, len(self.classes_) - 1)] == y):
            raise ValueError("y has labels the model was not fitted on")
        cw = class_weight_vector(self.class_weight, self.classes_, codes)
        Ci = self.C_ * sw * cw[codes]
        b = float(self.intercept_scaling) if self.fit_intercept else 0.0
        Wb = np.hstack([self.coef_, (self.intercept_ / b if b else 0 * self.intercept_)[:, None]])
        reg = 0.5 * float((Wb * Wb).sum())
        S = np.asarray(X @ self.coef_.T) + self.intercept_
        if self.multi_class == "crammer_singer":
            if len(self.classes_) == 2:
                raise ValueError(
                    "primal_objective of a two-class Crammer-Singer model needs "
                    "both weight vectors, which coef_ (w_1 - w_0) does not keep"
                )
            sy = S[np.arange(len(y)), codes]
            marg = 1.0 + S - sy[:, None]
            marg[np.arange(len(y)), codes] = 0.0
            loss = marg.max(axis=1)
        elif S.shape[1] == 1:
            ys = np.where(codes == 1, 1.0, -1.0)
            loss = np.maximum(0.0, 1.0 - ys * S[:, 0])
            loss = loss**2 if self.loss == "squared_hinge" else loss
        else:
            Ys = np.where(codes[:, None] == np.arange(S.shape[1])[None, :], 1.0, -1.0)
            L = np.maximum(0.0, 1.0 - Ys * S)
            loss = (L**2 if self.loss == "squared_hinge" else L).sum(axis=1)
        return float(reg + (Ci * loss).sum()) * self._scale()

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        check_is_fitted(self, "coef_")
        meta = state_meta(self, n_iter_=int(self.n_iter_), converged_=bool(self.converged_))
        arrays = {"classes_": np.asarray(self.classes_), "coef": self.coef_,
                  "intercept": self.intercept_}  # fmt: skip
        for f in HISTORY_FIELDS:
            arrays[f"history_{f}"] = self.history_[f]
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta, arrays)
        (est.coef_,) = float_arrays(arrays, "coef")
        est.intercept_ = np.asarray(arrays["intercept"], dtype=np.float64)
        K = len(est.classes_)
        rows = 1 if K == 2 else K
        if est.coef_.shape != (rows, est.n_features_in_) or est.intercept_.shape != (rows,):
            raise ValueError(
                f"model state is inconsistent: coef of shape {est.coef_.shape} for {K} classes "
                f"and {est.n_features_in_} features"
            )
        est.history_ = {f: np.asarray(arrays[f"history_{f}"]) for f in HISTORY_FIELDS}
        est.n_iter_ = int(meta["n_iter_"])
        est.converged_ = bool(meta["converged_"])
        return est
