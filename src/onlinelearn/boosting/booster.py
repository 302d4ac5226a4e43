"""PrimalDualBoost: boosting as incremental ascent of the dual of thesis eq. (6.2)."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted

from .._core import boosting as B
from ..shell import validation as V
from ..shell.meta import (
    ScoresClassifier,
    estimator_from_meta,
    params_to_json,
    state_meta,
)
from ..shell.params import AT_LEAST_ONE, POSITIVE, Param, parameters

_STEPS = ("aggressive", "conservative", "gentle")


def _gain_bound(gamma, cap):
    """phi_cap(gamma) = max_{0 <= a <= cap} (2 a gamma - a^2 / 2)
    = 2 gamma^2 - 2 [gamma - cap/2]_+^2: the least rise of D/c in a round of edge gamma whose
    step maximises the rise over [0, cap] (or takes alpha = cap <= 2 gamma)."""
    over = max(0.0, gamma - 0.5 * cap)
    return 2.0 * gamma * gamma - 2.0 * over * over


class WeakLearnerError(ValueError):
    """The weak learner returned a hypothesis with weighted error >= 1/2."""


@parameters(
    "n_estimators * step C gamma weak_learner criterion", n_estimators=Param(50, AT_LEAST_ONE),
    step=Param("aggressive", StrOptions(set(_STEPS))), C=Param(None, POSITIVE, None),
    gamma=Param(0.1, Interval(numbers.Real, 0, 0.5, closed="right")),
    weak_learner=Param(None, HasMethods(["fit", "predict"]), None),
    criterion=Param("edge", StrOptions({"edge", "gini"})),
)  # fmt: skip
class PrimalDualBoost(ScoresClassifier):
    """Binary boosting as dual ascent: AdaBoost, its conservative and its Gentle variant.

    Problem (thesis Sec. 6.1, eqs. 6.2-6.3): the booster ascends the dual

        max_{alpha_1..alpha_T}  D(alpha) = -c log( 1/m sum_i exp(-y_i sum_t alpha_t h_t(x_i)) )

    of the primal  min_w c f(w) + sum_t g_t(w)  over distributions w on the m examples, with
    f(w) = log m + sum_i w_i log w_i (relative entropy) and g_t(w) = [<w, v_t>]_+,
    v_t,i = y_i h_t(x_i).  Round t: the primal weights are w_t = grad f*(theta_t), i.e.
    w_t,i proportional to exp(-y_i f_{t-1}(x_i)); the weak learner returns h_t with edge
    gamma_t = <w_t, v_t> / 2 = 1/2 - eps_t; the step sets the one new dual variable alpha_t:

        'aggressive'    alpha_t = argmax_alpha D = min(1/c, 1/2 log(w_t+ / w_t-))      (eq. 6.5)
                        = 1/2 log((1 - eps_t) / eps_t) without the cap: AdaBoost  (eq. 6.6)
        'conservative'  alpha_t = 1/c with c = 1/(2 gamma): alpha_t = 2 gamma        (Sec. 6.1)
        'gentle'        alpha_t = <w_t, v_t> = 2 gamma_t  (Gentle-Boost, noted after eq. 6.11)

    Where
        w_t+ / w_t- is the weight of the examples h_t gets right / wrong, eps_t = w_t-;
        ``C`` is 1/c, the cap of the aggressive step (None: no cap, AdaBoost);
        ``gamma`` is the edge the conservative step assumes (weak learnability, eq. 6.1).

    What each round gains (stumps with outputs +-1): the dual D/c (``dual_``) rises by exactly
    Delta_t = -log(w_t+ e^-alpha_t + w_t- e^alpha_t) >= 2 alpha_t gamma_t - alpha_t^2 / 2
    (Hoeffding's lemma, eqs. 6.8-6.9).  The aggressive step maximises Delta_t over
    [0, C] (eq. 6.10), so Delta_t >= max_{0 <= a <= C} (2 a gamma_t - a^2 / 2) =
    phi_C(gamma_t) with

        phi_a(g) = 2 g^2 - 2 [g - a/2]_+^2
                 = 2 g^2                  when 2 g <= a   (always without a cap: AdaBoost),
                 = 2 a g - a^2 / 2 < 2 g^2  when 2 g > a   (the cap is below <w_t, v_t> = 2 g).

    So 2 gamma_t^2 per round holds without a cap and when C >= 2 gamma_t, not when the cap
    binds harder (C < 2 gamma_t; dna, C = 0.05: in every round).  The Gentle step
    (alpha_t = 2 gamma_t) gains >= phi_inf = 2 gamma_t^2; the conservative step
    (alpha_t = 2 gamma <= 2 gamma_t) gains >= 4 gamma gamma_t - 2 gamma^2 = phi_{2 gamma}(gamma_t)
    >= 2 gamma^2.  phi_a increases with g, so after T rounds

        training error <= mean exp-loss <= exp(-sum_t phi_a(gamma_t))
                                         <= exp(-T phi_a(min_t gamma_t))

    with a = C (aggressive; no cap: a = inf), 2 gamma (conservative) or inf (gentle): the bound
    exp(-2 gamma^2 T), gamma = min_t gamma_t, of eq. 6.12 when a >= 2 gamma (no cap, gentle,
    C >= 2 min_t gamma_t), and exp(-2 gamma^2 T) with the assumed gamma for the conservative
    step (Sec. 6.1).  ``bounds_`` is exp(-t phi_a(min_{s<=t} gamma_s)).

    Exact and approximate: nothing is solved iteratively.  The stump is the exact best one by
    its criterion (one scan of each feature's sorted values), the aggressive step is the exact
    maximiser of the dual over [0, C] in closed form (eq. 6.5), and the primal weights are
    computed in closed form.  One step is not the maximiser: a hypothesis without error
    (eps_t = 0) has the maximiser alpha_t = inf; the booster takes alpha_t = 1 (first round)
    or 2 sum_s alpha_s + 1 (it then decides every training example alone) and stops there.

    The thesis gives no entropy-projected booster beyond these steps (its c-capped AdaBoost is
    ``C``); the weak learners are compiled decision stumps (dense and sparse X) or any
    scikit-learn classifier whose ``fit`` takes ``sample_weight``.

    Parameters
    ----------
    n_estimators : int, default=50
        Boosting rounds T.
    step : {'aggressive', 'conservative', 'gentle'}, default='aggressive'
    C : float or None, default=None
        Cap 1/c on the aggressive step.
    gamma : float, default=0.1
        The assumed edge of the conservative step (alpha_t = 2 gamma); the booster stops with a
        warning at the first round whose measured edge is below it (the assumption fails).
    weak_learner : None or scikit-learn classifier, default=None
        None: the compiled decision stump.  Otherwise cloned and fitted each round with
        ``sample_weight`` = m w_t on labels {-1, +1}.
    criterion : {'edge', 'gini'}, default='edge'
        How the compiled stump is chosen: the largest edge (the thesis's weak learner), or the
        smallest weighted Gini impurity with a majority vote on each side (what scikit-learn's
        ``DecisionTreeClassifier(max_depth=1)`` does, for a like-for-like comparison).

    Attributes
    ----------
    classes_ : the two labels (classes_[1] is the positive one)
    alphas_, edges_ : ndarray of shape (n_rounds,) — alpha_t and the measured gamma_t
    train_errors_, exp_losses_ : training 0-1 error and mean exp-loss after each round
    dual_ : ndarray — D / c = -log(mean exp-loss) after each round (never decreases)
    bounds_ : ndarray — exp(-t phi_a(min_{s<=t} gamma_s)) after each round (above): a bound on
        the mean exp-loss and the training error; exp(-2 min_{s<=t} gamma_s^2 t) unless a cap
        binds (C < 2 min_s gamma_s, or the conservative step)
    stumps_ : (features, thresholds, left values, right values) of the compiled stumps, or None
    estimators_ : the fitted weak learners when ``weak_learner`` is given

    Examples
    --------
    >>> from onlinelearn import PrimalDualBoost
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> keep = y != 3
    >>> clf = PrimalDualBoost(n_estimators=20).fit(X[keep], y[keep])
    >>> bool(clf.train_errors_[-1] <= clf.bounds_[-1])
    True
    >>> Xt, yt = load_dna("test")
    >>> round(clf.score(Xt[yt != 3], yt[yt != 3]), 3)
    0.959
    """

    _tags_multi_class = False  # binary only

    # ------------------------------------------------------------------ steps
    def _alpha(self, edge2, w_minus):
        """The dual step for a hypothesis with <w, v> = edge2 and error weight w_minus."""
        if self.step == "conservative":
            return 2.0 * self.gamma
        if self.step == "gentle":
            return edge2
        w_plus = 1.0 - w_minus
        alpha = math.inf if w_minus <= 0.0 else 0.5 * math.log(w_plus / w_minus)
        return alpha if self.C is None else min(float(self.C), alpha)

    def _cap(self):
        """The a of the guaranteed gain phi_a (see the class docstring): the largest alpha_t
        the step may take below <w_t, v_t>."""
        if self.step == "conservative":
            return 2.0 * self.gamma
        if self.step == "aggressive" and self.C is not None:
            return float(self.C)
        return math.inf

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Boost for ``n_estimators`` rounds (fewer if a hypothesis is perfect, or if the
        conservative step's assumed edge fails).  Raises :class:`WeakLearnerError` (a
        ``ValueError``) when a weak hypothesis has weighted error >= 1/2; the estimator is then
        left as it was."""
        self._validate_params()
        X, y = V.check_X_y(self, X, y, reset=True)
        X = X.astype(np.float64, copy=False)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        classes = np.unique(y)
        if y_type != "binary" or classes.shape[0] != 2:
            raise ValueError(
                "Only binary classification is supported. The type of the target is "
                f"{y_type} with {classes.shape[0]} class(es) {list(classes[:5])}; "
                "PrimalDualBoost needs exactly two (use one-vs-rest for more)"
            )
        m = X.shape[0]
        ypm = np.where(y == classes[1], 1.0, -1.0)
        if sample_weight is None:
            logw = np.zeros(m)
        else:
            sw = np.asarray(sample_weight, dtype=np.float64)
            if sw.shape != (m,) or not np.all(np.isfinite(sw)) or np.any(sw < 0) or sw.sum() <= 0:
                raise ValueError(
                    "sample_weight must be m finite non-negative values whose sum is not zero"
                )
            # examples of weight 0 play no part (as if removed)
            keep = sw > 0
            if not keep.all():
                X, ypm, sw = X[keep], ypm[keep], sw[keep]
            logw = np.log(sw / sw.mean())
        res = self._boost(X, ypm, logw)
        self.classes_ = classes
        for k, v in res.items():
            setattr(self, k, v)
        return self

    def _weak_learner_factory(self, X, ypm):
        if self.weak_learner is not None:
            return self._sklearn_weak(X, ypm)
        crit = B.EDGE if self.criterion == "edge" else B.GINI
        if sp.issparse(X) or np.count_nonzero(X) < 0.5 * X.size:
            # mostly zeros: the sparse scan treats the zeros of a feature as one block
            Xc = sp.csc_matrix(X, copy=True)
            Xc.eliminate_zeros()
            Xc.sort_indices()
            indptr = Xc.indptr.astype(np.int64)
            indices = Xc.indices.astype(np.int64)
            data = Xc.data
            rows, vals = B.presort_csc(indptr, indices, data)

            def learn(wy, out):
                j, thr, left, right = B.best_stump_csc(indptr, rows, vals, wy, crit)
                B.stump_outputs_csc(indptr, indices, data, j, thr, left, right, out)
                return (j, thr, left, right)

            return learn
        XT = np.ascontiguousarray(X.T)
        order, vals = B.presort_dense(XT)
        Xd = np.asarray(X)

        def learn(wy, out):
            j, thr, left, right = B.best_stump_dense(order, vals, wy, crit)
            B.stump_outputs_dense(Xd, j, thr, left, right, out)
            return (j, thr, left, right)

        return learn

    def _sklearn_weak(self, X, ypm):
        labels = ypm.astype(np.int64)

        def learn(wy, out):
            est = clone(self.weak_learner)
            w = np.abs(wy)
            est.fit(X, labels, sample_weight=w * w.shape[0])
            out[:] = np.where(np.asarray(est.predict(X)) > 0, 1.0, -1.0)
            return est

        return learn

    def _boost(self, X, ypm, logw):
        learn = self._weak_learner_factory(X, ypm)
        m = X.shape[0]
        f = np.zeros(m)
        h = np.empty(m)
        hyps, alphas, edges, errs, exps, duals, bounds = [], [], [], [], [], [], []
        min_gamma = math.inf
        cap = self._cap()
        w = np.empty(m)
        wy = np.empty(m)
        for t in range(self.n_estimators):
            B.primal_weights(logw, ypm, f, w, wy)
            hyp = learn(wy, h)
            edge2, w_minus = B.edge_and_error(w, ypm, h)  # <w_t, v_t>, eps_t
            eps = w_minus
            if eps >= 0.5:
                raise WeakLearnerError(
                    f"round {t + 1}: the weak hypothesis has weighted error {eps:.6f} >= 1/2 "
                    "(no edge: the weak learnability assumption, thesis eq. 6.1, fails); "
                    "boosting stopped and the estimator was left unchanged"
                )
            gamma_t = 0.5 - eps
            if self.step == "conservative" and gamma_t < self.gamma:
                warnings.warn(
                    f"round {t + 1}: measured edge {gamma_t:.4g} is below gamma={self.gamma}; "
                    f"the conservative step assumes it, so boosting stops after {t} rounds",
                    stacklevel=3,
                )
                break
            alpha = self._alpha(edge2, w_minus)
            perfect = not math.isfinite(alpha)
            if perfect:
                # a hypothesis without error: it alone classifies the training set
                alpha = 1.0 if not alphas else 2.0 * sum(alphas) + 1.0
            err, log_mean = B.take_step(f, h, alpha, ypm, logw)
            hyps.append(hyp)
            alphas.append(alpha)
            edges.append(gamma_t)
            min_gamma = min(min_gamma, gamma_t)
            errs.append(err)
            exps.append(math.exp(log_mean))
            duals.append(-log_mean)
            bounds.append(math.exp(-(t + 1) * _gain_bound(min_gamma, cap)))
            if perfect:
                break
        if not hyps:
            raise WeakLearnerError(
                "no round was kept: the first weak hypothesis already violates the assumed edge "
                f"gamma={self.gamma}; lower gamma"
            )
        out = {
            "alphas_": np.array(alphas),
            "edges_": np.array(edges),
            "train_errors_": np.array(errs),
            "exp_losses_": np.array(exps),
            "dual_": np.array(duals),
            "bounds_": np.array(bounds),
            "n_rounds_": len(alphas),
        }
        if self.weak_learner is None:
            out["stumps_"] = (
                np.array([hp[0] for hp in hyps], dtype=np.int64),
                np.array([hp[1] for hp in hyps]),
                np.array([hp[2] for hp in hyps]),
                np.array([hp[3] for hp in hyps]),
            )
            out["estimators_"] = None
        else:
            out["stumps_"] = None
            out["estimators_"] = hyps
        return out

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """f(x) = sum_t alpha_t h_t(x); positive means ``classes_[1]``."""
        check_is_fitted(self, "alphas_")
        X = V.check_X(self, X, reset=False).astype(np.float64, copy=False)
        out = np.empty(X.shape[0])
        if self.stumps_ is not None:
            feat, thr, left, right = self.stumps_
            if sp.issparse(X):
                X = X.tocsr()
                B.ensemble_csr(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data,
                               feat, thr, left, right, self.alphas_, X.shape[1], out)  # fmt: skip
            else:
                B.ensemble_dense(np.asarray(X), feat, thr, left, right, self.alphas_, out)
            return out
        out[:] = 0.0
        for alpha, est in zip(self.alphas_, self.estimators_, strict=True):
            out += alpha * np.where(np.asarray(est.predict(X)) > 0, 1.0, -1.0)
        return out

    # ------------------------------------------------------------------ model files
    _ARRAYS = ("alphas_", "edges_", "train_errors_", "exp_losses_", "dual_", "bounds_")

    def _get_state(self):
        check_is_fitted(self, "alphas_")
        if self.stumps_ is None:
            raise ValueError(
                "only boosters of compiled stumps can be saved to a model file; a booster of "
                "scikit-learn weak learners cannot (those have no pickle-free format)"
            )
        meta = state_meta(self, {**params_to_json(self), "weak_learner": None})
        arrays = {"classes_": np.asarray(self.classes_)}
        arrays.update({k: getattr(self, k) for k in self._ARRAYS})
        arrays.update(dict(zip(("feat", "thr", "left", "right"), self.stumps_, strict=True)))
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta, arrays)
        T = arrays["alphas_"].shape[0]
        for k in cls._ARRAYS:
            if arrays[k].shape != (T,):
                raise ValueError(f"model state array {k!r} has shape {arrays[k].shape}")
            setattr(est, k, np.asarray(arrays[k], dtype=np.float64))
        feat = np.asarray(arrays["feat"], dtype=np.int64)
        if (
            feat.shape != (T,)
            or feat.min(initial=0) < 0
            or feat.max(initial=0) >= est.n_features_in_
        ):
            raise ValueError("model state: stump features out of range")
        est.stumps_ = (feat,) + tuple(
            np.asarray(arrays[k], float) for k in ("thr", "left", "right")
        )
        est.estimators_ = None
        est.n_rounds_ = T
        return est
