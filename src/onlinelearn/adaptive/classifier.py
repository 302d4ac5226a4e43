"""Scale-free linear classifiers: :class:`AdaGradClassifier` (FTRL-Proximal with AdaGrad's
per-coordinate rates) and :class:`NormalizedClassifier` (Vowpal Wabbit's normalized adaptive
update, NAG)."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core import adaptive as AD
from ..shell import validation as V
from ..shell.meta import ScoresClassifier, estimator_from_meta, with_methods
from ..shell.online import Call, ProgressiveMixin
from ..shell.params import NON_NEGATIVE, POSITIVE, SHARED, Param, parameters, validate_once
from ..shell.readout import WeightsReadoutMixin
from ..shell.state_columns import GrowingLabelsMixin, spread_columns
from ..shell.weights import weights_by_class
from ._base import AdaptiveState
from ._event import EventMixin

__all__ = ["AdaGradClassifier", "NormalizedClassifier"]

#: the parameters of the family (beside :data:`~onlinelearn.shell.params.SHARED`)
ADAPTIVE = {
    "beta": Param(1.0, NON_NEGATIVE),
    "l1": Param(0.0, NON_NEGATIVE),
    "l2": Param(0.0, NON_NEGATIVE),
    "eta": Param(0.5, POSITIVE),
    "loss": Param("hinge", StrOptions({"hinge", "logistic"})),
    "importance_invariant": Param(False, "boolean"),
}


@with_methods(
    EventMixin, AdaptiveState, ProgressiveMixin, GrowingLabelsMixin, WeightsReadoutMixin
)
class _AdaptiveClassifier(ScoresClassifier):
    """The classifiers' side of the family: labels, class weights, the call's hooks."""

    def _loss_code(self):
        binary = self._A.shape[1] == 1
        if self.loss == "logistic":
            return AD.LOGISTIC if binary else AD.SOFTMAX
        return AD.HINGE if binary else AD.MC_HINGE

    def _init_state(self, classes, d):
        K = len(classes)
        self._new_state(d, 1 if K <= 2 else K)
        self.classes_ = classes
        self.class_counts_ = np.zeros(K, dtype=np.int64)

    def _move_columns(self, pos, K):
        """New labels: zero columns; one binary column w becomes (-w/2, w/2): NAG's weights
        and FTRL-Proximal's z are halved, the sums of squares kept, which halves FTRL's
        weights too when l1 = 0 (same decisions; with l1 > 0 the threshold on z/2 may zero a
        few more weights)."""
        if K <= 2:
            return
        # the earlier rounds' losses change with the label set: no regret bound covers them
        self._st[AD.ST_DNORM] = np.nan
        if self._step == AD.FTRL:
            self._G1 = np.full((self._A.shape[0], K), np.nan)
            self._Q = np.full((self._A.shape[0], K), np.nan)
        A, B = self._A, self._B
        split = A.shape[1] == 1 and len(self.classes_) == 2
        keep = pos if A.shape[1] > 1 or split else pos[:0]
        self._A = spread_columns(A, keep, K, split)
        if split:
            self._B = np.zeros((B.shape[0], K))
            self._B[:, pos[0]] = self._B[:, pos[1]] = B[:, 0]
        else:
            self._B = spread_columns(B, keep, K)

    def _weights(self, y_codes, sw, counts):
        return weights_by_class(self.class_weight, self.classes_, y_codes, sw, counts)

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap):
        """The set-up of a call (:mod:`onlinelearn.shell.online`)."""
        validate_once(self, self._validate_params)  # a stream of calls checks them once
        X, y, sw = V.check_batch(self, X, y, sample_weight, reset=first)
        new_classes = V.grown_labels(None if first else self.classes_, y, classes)
        batch = V.CSRBatch(X)
        if first:
            self._init_state(new_classes, batch.n_cols)
        else:
            self._grow(new_classes)
        y_codes = np.searchsorted(self.classes_, y).astype(np.int64)
        counts = self.class_counts_ + np.bincount(y_codes, minlength=len(self.classes_))
        weights = np.ascontiguousarray(self._weights(y_codes, sw, counts), dtype=np.float64)
        self.class_counts_ = counts
        return Call(n=batch.n_rows, batch=batch, target=y_codes.astype(np.float64),
                    weights=weights, pred=None)  # fmt: skip

    def _epoch(self, call, order):
        """One compiled pass over the rows in ``order`` (None: in their order)."""
        if order is None:
            order = np.arange(call.n, dtype=np.int64)
        if len(self.classes_) >= 2:
            call.pred = self._run(call.batch, call.target, call.weights, order)
        else:
            self._st[AD.ST_T] += len(order)
            call.pred = np.zeros(len(order))

    def _finish(self, call):
        return self.classes_[call.pred.astype(np.int64)]

    @property
    def n_mistakes_(self):
        """Rounds whose prediction, made before the update, was wrong."""
        return int(self._stats()[AD.ST_MIS])

    def decision_function(self, X):
        """Scores <w, x> + b: (n,) for two classes (positive: ``classes_[1]``), else (n, K)."""
        check_is_fitted(self, "classes_")
        scores = self._raw_scores(X)
        V.check_scores(scores)
        if len(self.classes_) == 1:
            return np.zeros(scores.shape[0])
        return scores[:, 0] if scores.shape[1] == 1 else scores

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta, arrays)
        est.class_counts_ = np.asarray(arrays["class_counts"], dtype=np.int64)
        K = len(est.classes_)
        if est.class_counts_.shape != (K,):
            raise ValueError("model state is inconsistent: class counts of the wrong shape")
        est._set_state_arrays(arrays, 1 if K <= 2 else K)
        return est


_COMMON = "n_epochs fit_intercept intercept_scaling class_weight shuffle random_state"


@parameters(f"loss * eta beta l1 l2 {_COMMON}", SHARED, ADAPTIVE)
class AdaGradClassifier(_AdaptiveClassifier):
    """Linear classifier by FTRL-Proximal with AdaGrad's per-coordinate learning rates.

    Round t, scores p = W^T x_t, loss l_t(W) = l(p, y_t) with gradient g_t; per weight (i, k)
    (McMahan et al. 2013, "Ad click prediction: a view from the trenches", Algorithm 1 and
    eq. 2; McMahan & Streeter 2010; Duchi, Hazan, Singer 2011, the diagonal case)::

        w_{t+1} = argmin_w g_{1:t} w + 1/2 sum_{s<=t} sigma_s (w - w_s)^2
                           + beta/(2 alpha) w^2 + l1 |w| + l2/2 w^2
                sigma_{1:t} = sqrt(n_t)/alpha,  n_t = sum_{s<=t} g_{s}^2
        closed form, z = g_{1:t} - sum_s sigma_s w_s:
        w = 0 if |z| <= l1, else -(z - sign(z) l1) / ((beta + sqrt(n))/alpha + l2)

    i.e. per-coordinate rates eta_{t,i} = alpha / (beta + sqrt(n_{t,i})): a coordinate that
    saw large gradients moves less, whatever the unit of its feature.  With l1 = l2 = 0
    (the default) it is AdaGrad's diagonal in its dual-averaging form.  Losses: the hinge
    [1 - y p]_+ and the logistic log(1 + e^{-y p}) for two classes (one weight vector); for K
    classes the multiclass hinge with the max-loss rival [1 - p_y + max_{r != y} p_r]_+
    (Crammer-Singer) and the softmax log loss (one weight row per class).  The intercept is
    the weight of a constant feature of value ``intercept_scaling``, updated (and regularised)
    like the others.  Weights are the last iterate (no averaging).

    Parameters
    ----------
    loss : {'hinge', 'logistic'}, default='hinge'
        'logistic' gives ``predict_proba`` the probabilities of the loss (sigmoid / softmax).
    eta, beta : float, default=0.5, 1.0
        The rates eta_{t,i} = alpha / (beta + sqrt(n_{t,i})) with alpha = ``eta`` (McMahan et
        al.'s alpha; named ``eta`` because scikit-learn's ``alpha`` is a regularisation).
    l1, l2 : float, default=0.0
        FTRL-Proximal's l1 (sparsity) and l2 regularisation strengths.
    n_epochs, fit_intercept, intercept_scaling, class_weight, shuffle, random_state
        As for the other online learners (``fit``: ``n_epochs`` passes, shuffled).

    Attributes
    ----------
    classes_, coef_, intercept_, t_, n_updates_, n_mistakes_, class_counts_,
    sum_sq_grad_ (the n of each weight).

    Examples
    --------
    >>> from onlinelearn import AdaGradClassifier
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = AdaGradClassifier(random_state=0).fit(X, y)
    >>> round(clf.score(*load_dna("test")), 3)
    0.937
    """

    _step = AD.FTRL


@parameters(f"loss * eta importance_invariant {_COMMON}", SHARED, ADAPTIVE)
class NormalizedClassifier(_AdaptiveClassifier):
    """Linear classifier by the normalized adaptive gradient update (NAG): invariant to the
    scale of each feature.

    Ross, Mineiro, Langford 2013, "Normalized online learning", Algorithm 2 (Vowpal Wabbit's
    ``--adaptive --normalized``).  Per feature i a scale s_i = max_t |x_{t,i}|; per weight
    (i, k) G_{ik}, the sum of its squared gradients; N = sum_t sum_i x_{t,i}^2 / s_i^2::

        for each i with |x_i| > s_i:  w_{i,:} <- w_{i,:} s_i / |x_i|;  s_i <- |x_i|
        p = W^T x;   N <- N + c sum_i x_i^2 / s_i^2;   t <- t + c
        G_{ik} <- G_{ik} + g_{ik}^2;   w_{ik} <- w_{ik} - eta sqrt(t/N) g_{ik} / (s_i sqrt(G_{ik}))

    with g_{ik} = c dl(p, y)/dp_k x_i (c: sample and class weight, 1 in the paper).
    ``importance_invariant=True`` (two classes, hinge loss) replaces the last line by the
    importance-invariant update of Karampatziakis & Langford 2011 (Vowpal Wabbit's default):
    G_{i} <- G_{i} + c (l' x_i)^2, rates r_i = eta sqrt(t/N) / (s_i sqrt(G_i)) frozen, and
    w_i <- w_i - r_i x_i s(c), s(c) = -y min(c, (1 - y p) / q), q = sum_i r_i x_i^2: the limit
    of infinitely many small steps, which never crosses the margin.

    Multiplying a feature by a constant c > 0 from the start divides its weights by c and
    changes no prediction.  Losses as :class:`AdaGradClassifier`.

    Parameters
    ----------
    loss : {'hinge', 'logistic'}, default='hinge'
    eta : float, default=0.5
        The learning rate (Vowpal Wabbit's ``-l``, whose default is 0.5).
    importance_invariant : bool, default=False
        The importance-invariant update (binary hinge loss only).
    n_epochs, fit_intercept, intercept_scaling, class_weight, shuffle, random_state
        As for the other online learners.

    Attributes
    ----------
    classes_, coef_, intercept_, t_, n_updates_, n_mistakes_, class_counts_, scale_ (s_i),
    sum_sq_grad_ (G).

    Examples
    --------
    >>> from onlinelearn import NormalizedClassifier
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = NormalizedClassifier(random_state=0).fit(X, y)
    >>> round(clf.score(*load_dna("test")), 3)
    0.947
    """

    _step = AD.NAG
