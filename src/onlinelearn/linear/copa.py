"""COPA: confusion-based passive-aggressive learner (Euclidean link x squared confusion hinge)."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from .._core import steps as S
from .._core.copa import copa_losses
from .._core.online_loop import current_weights
from ..framework.links import Euclidean
from ..framework.losses import Confusion
from ..framework.steps import Aggressive
from ..shell import validation as V
from ..shell.base import LINEAR, OnlineLinearClassifier
from ..shell.params import CONFUSION_CLASS_WEIGHT, Param, parameters
from ..shell.snapshot import restoring
from ._average import AVERAGE_POWER

__all__ = ["COPA"]

#: the per-round loss of COPA: the paper's squared confusion hinge, or the plain hinge
LOSSES = ("squared", "hinge")


@parameters(
    "* C loss class_weight n_epochs shuffle average average_power random_state fit_intercept"
    " intercept_scaling dtype",
    LINEAR, class_weight=CONFUSION_CLASS_WEIGHT, average=True, average_power=AVERAGE_POWER,
    loss=Param("squared", StrOptions(set(LOSSES))),
)  # fmt: skip
class COPA(OnlineLinearClassifier):
    """COPA, COnfusion Passive-Aggressive (Ralaivola, NIPS 2012, Algorithm 1).

    What
        A multiclass passive-aggressive learner that aims at a small operator norm of the
        confusion matrix rather than at a small error rate.  Each round solves exactly the
        problem below, a squared hinge version of the Lee-Lin-Wahba loss on the rival scores
        under a sum-to-zero constraint, in closed form (the compiled kernel
        :func:`onlinelearn._core.copa.copa_step`).  One weight vector per class, also for two
        classes.

    Problem solved by a round (paper eq. (18))::

        W^{t+1} = argmin_W  1/2 sum_{q=1}^{Q} ||w_q - w_q^t||^2
                            + C_t/2 sum_{q != y_t} [ <w_q, x_t> + 1/(Q-1) ]_+^2
                  s.t.      sum_{q=1}^{Q} w_q = 0

    Solution (paper Theorem 3, eqs. (19)-(21); supplement Theorem 1, eqs. (20)-(24)).  With
    ell_q = <w_q^t, x_t> + 1/(Q-1) for the rivals q != y_t sorted decreasingly
    ell_sigma(1) >= ... >= ell_sigma(Q-1), kappa = 1/C_t + ||x_t||^2, and the active set
    I* = {sigma(1), ..., sigma(I*)} where I* is the largest I with
    ell_sigma(I) + ||x||^2 / (kappa Q - (I-1) ||x||^2) sum_{i<I} ell_sigma(i) > 0::

        s_alpha   = Q / (kappa Q - I* ||x||^2) sum_{q in I*} ell_q                     (21)
        alpha*_q  = (ell_q + ||x||^2 s_alpha / Q) / kappa  for q in I*, 0 otherwise     (20)
        w_q^{t+1} = w_q^t - (alpha*_q - s_alpha / Q) x_t                                (24)

    No rival with positive loss (I* = 0) is a passive round.

    With ``loss='hinge'`` a round solves instead (the plain hinge of eq. (16); the paper's
    conclusion asks whether such an update exists in closed form)::

        W^{t+1} = argmin_W  1/2 sum_q ||w_q - w_q^t||^2
                            + C_t sum_{q != y_t} [<w_q, x_t> + 1/(Q-1)]_+
                  s.t.      sum_q w_q = 0

    whose dual is (S15) without its 1/C term, on the box 0 <= alpha_q <= C_t; its solution is
    alpha*_q = clip((ell_q + v) / ||x_t||^2, 0, C_t) with v >= 0 the unique root of
    sum_{q != y_t} clip(ell_q + v, 0, C_t ||x_t||^2) = Q v, found exactly by a walk over the
    sorted rivals (:func:`onlinelearn._core.copa.copa_hinge_step`), and the same update (24).
    The hinge bounds each rival's dual variable by C_t, as PA-I bounds its step; at C = inf
    the two losses give the same (hard-margin) step.  The update coefficients sum to
    zero, so sum_q w_q = 0 holds after every round (up to rounding).

    Where
        Q                the number of classes seen so far (``len(classes_)``, Q >= 2)
        W = [w_1..w_Q]   one weight vector per class; prediction argmax_q <w_q, x> (+ b_q)
        (x_t, y_t)       the example of round t; ||x_t||^2 includes the intercept feature
                         (value ``intercept_scaling``) when ``fit_intercept``; the bias
                         weights b_q also sum to zero
        1/(Q-1)          the margin of the loss (paper eq. (16))
        C_t              the cost of the round: ``C`` x ``sample_weight`` x class weight;
                         with ``class_weight='confusion'`` the class weight is 1 / T_{y_t}^2,
                         T_y the number of examples of class y (the class-normalised cost of
                         paper eq. (17)), so that C_t = C / T_{y_t}^2
        [u]_+            max(0, u)

    Parameters
    ----------
    C : float, default=1.0
        The cost of the squared loss in (18): larger C moves further towards zero loss on the
        current example (C = inf is the hard-constraint version).  With
        ``class_weight='confusion'`` it is divided by T_y^2, so the useful range is much larger.
    loss : {'squared', 'hinge'}, default='squared'
        The per-round loss: ``'squared'`` the paper's squared confusion hinge (problem (18),
        closed form of Theorem 3); ``'hinge'`` the plain confusion hinge with cost C (see
        above), which separates the effect of the loss from that of the confusion cost.
    class_weight : dict, 'balanced', 'confusion' or None, default=None
        Multiplies C for the examples of each class: a dict {label: weight}; 'balanced' =
        n / (n_classes * n_class); 'confusion' = 1 / n_class^2, the cost of paper eq. (17).
        Class counts are exact (the whole training set) in :meth:`fit` and running (all rows
        seen so far, this one included, in the order given) in :meth:`partial_fit`; an
        example's own class therefore always has a positive count, and classes announced
        through ``partial_fit(classes=...)`` before they are seen are harmless (they get a
        zero weight column and no examples to weight).
    n_epochs : int, default=5
        Passes over the data made by :meth:`fit` (``partial_fit`` always makes one); R of
        Algorithm 1.
    shuffle : bool, default=True
        Visit the rows of each epoch of :meth:`fit` in a random order drawn from
        ``random_state``; ``False`` keeps the given order.
    average : bool, default=True
        Predict with the average of the hypotheses after every round, as Algorithm 1 returns
        and as the confusion risk bounds of the paper recommend (Sec. 4: "as recommended by
        the theory we average"; eq. (15)); kept lazily.  True by default since the defaults
        review (docs/defaults.md; the last iterate reached 0.15 accuracy on a 26-class set
        where the average reaches 0.48-0.61); model files keep the value they were saved with.
    average_power : float in [0, 10], default=2.0
        eta of the weighted average sum_t t^eta W_t / sum_t t^eta (with ``average=True``), as
        in :class:`onlinelearn.Perceptron`: 0.0 is the uniform average of Algorithm 1, eta > 0
        the polynomial-decay averaging of Shamir & Zhang (ICML 2013).
    random_state : int, RandomState or None, default=None
        Seed of the shuffling; the same seed gives the same weights, bit for bit.
    fit_intercept : bool, default=True
        Learn a bias per class, as the weight of an extra feature of constant value
        ``intercept_scaling``.
    intercept_scaling : float > 0 or 'auto', default=1.0
        Value b of the intercept feature; ``'auto'`` as in
        :class:`onlinelearn.PassiveAggressiveClassifier` (0.1 on sparse input, 1 on dense).
    dtype : None, 'float32' or 'float64', default=None
        dtype of the weights, as in :class:`onlinelearn.Perceptron`.

    Attributes
    ----------
    classes_ : ndarray of shape (Q,)
        Labels seen so far, sorted.
    coef_ : ndarray of shape (Q, n_features)
        One row per class for every Q, including Q = 2 (COPA never collapses to one vector);
        its columns sum to zero (rows w_q with sum_q w_q = 0), as do the entries of
        ``intercept_``.  The average of the iterates when ``average``.
    intercept_ : ndarray of shape (Q,)
        The bias of each class (zeros when ``fit_intercept=False``).
    n_updates_, n_mistakes_, t_
        Rounds with an update (I* > 0), online mistakes (prediction before the update wrong),
        and examples processed, over all epochs and calls.
    class_counts_ : ndarray of shape (Q,)
        Examples of each class seen (the T_y of ``class_weight='confusion'``).

    Examples
    --------
    >>> from onlinelearn.linear.copa import COPA
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = COPA(C=0.1, average=True)
    >>> online = clf.partial_fit_predict(X, y)
    >>> print(f"online mistake rate {(online != y).mean():.3f}")
    online mistake rate 0.122
    >>> X_test, y_test = load_dna("test")
    >>> print(f"test accuracy {clf.score(X_test, y_test):.3f}")
    test accuracy 0.933
    >>> clf.coef_.shape, bool(abs(clf.coef_.sum(axis=0)).max() < 1e-12)
    ((3, 180), True)
    """

    _always_multiclass = True
    _class_weight_modes = ("balanced", "confusion")

    def _configuration(self):
        return Euclidean(), Confusion(), Aggressive(self.C)

    def _step_code(self) -> int:
        """COPA's closed form for ``loss``: the squared confusion hinge (``S.COPA``) or the
        plain one (``S.COPA_HINGE``)."""
        return S.COPA_HINGE if self.loss == "hinge" else S.COPA

    def partial_fit_confusion(self, X, y, classes=None, sample_weight=None):
        """:meth:`partial_fit`, also returning the per-class losses of the online confusion risk.

        Learns exactly as ``partial_fit(X, y, classes, sample_weight)`` (same weights, bit for
        bit) and returns ``losses`` of shape (n, Q), columns in the order of ``classes_`` after
        the call: ``losses[t, q] = [<w_q, x_t> + b_q + 1/(Q-1)]_+`` for q != y_t and 0 for
        q = y_t, the hinge of paper eq. (16) for the hypothesis in force *before* round t (the
        current iterate, not the average).  ``onlinelearn.metrics.online_confusion_risk(y,
        losses, clf.classes_)`` is then the empirical online confusion risk of Definition 4
        over this batch.  Rows are visited one compiled call each, so it is slower than
        :meth:`partial_fit`.  A rejected batch leaves the model unchanged.
        """
        first = not hasattr(self, "classes_")
        snap = self._snapshot(copy_arrays=True)
        with restoring(self, snap):
            batch, y, sw, new_classes = self._prepare(X, y, classes, sample_weight, reset=first)
            Xv = V.check_X(self, X, reset=False)
            if first:
                self._init_state(new_classes, batch.n_cols)
            else:
                self._grow(new_classes)
            y_codes = np.searchsorted(self.classes_, y).astype(np.int64)
            weights = self._example_weights(y_codes, sw, None)
            n, Q = batch.n_rows, len(self.classes_)
            d = self.n_features_in_
            pred = np.zeros(n, dtype=np.int64)
            loss = np.zeros(n)
            losses = np.zeros((n, Q))
            W = np.empty_like(self._theta)
            ip, fp = self._codes(self._n_weights())
            for i in range(n):
                if Q >= 2:
                    current_weights(self._theta, self._st, ip, fp, W)
                    scores = np.asarray(Xv[i : i + 1] @ W[:d]).reshape(-1)
                    if self.fit_intercept:
                        scores = scores + self._intercept_value() * W[d]
                    copa_losses(np.ascontiguousarray(scores), int(y_codes[i]), losses[i])
                self._run(batch, y_codes, weights, np.array([i], dtype=np.int64), pred, loss)
            self._count_classes(y_codes)
        self.last_losses_ = loss
        return losses

    def decision_function(self, X):
        """Scores <w_q, x> + b_q, shape (n, Q); for Q = 2, scikit-learn's binary convention:
        shape (n,), the difference s_1 - s_0 (positive means ``classes_[1]``)."""
        scores = super().decision_function(X)
        if scores.ndim == 2 and scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores
