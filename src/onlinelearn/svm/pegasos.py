"""``Pegasos``: the SGD end of the SVM comparison (Shalev-Shwartz, Singer, Srebro 2007)."""

from __future__ import annotations

import copy

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core.svm import pegasos as PG
from ..shell import validation as V
from ..shell.meta import (
    ScoresClassifier,
    check_shape,
    estimator_from_meta,
    float_arrays,
    state_meta,
    with_methods,
)
from ..shell.online import Call, OnlineMixin
from ..shell.params import AT_LEAST_ONE, NON_NEGATIVE, POSITIVE, SHARED, Param, parameters
from ..shell.readout import WeightsReadoutMixin
from ..shell.state_columns import GrowingLabelsMixin, spread_columns
from ..shell.weights import weights_by_class

__all__ = ["Pegasos"]


@parameters(
    "lam * n_epochs batch_size projection average t0 fit_intercept intercept_scaling "
    "class_weight shuffle random_state",
    SHARED, lam=Param(1e-4, POSITIVE), batch_size=Param(1, AT_LEAST_ONE),
    projection=Param(True, "boolean"), average=Param(False, "boolean", AT_LEAST_ONE),
    t0=Param(0.0, NON_NEGATIVE),
)  # fmt: skip
@with_methods(OnlineMixin, GrowingLabelsMixin, WeightsReadoutMixin)
class Pegasos(ScoresClassifier):
    """Pegasos: stochastic sub-gradient steps 1/(lambda t) on the strongly convex SVM objective.

    Objective (the thesis's Fig. 4.1 with f = 1/2 ||.||^2 and sigma = lambda; Shalev-Shwartz
    et al. 2007, eq. 1), with c_i = sample_weight_i x class_weight_{y_i}::

        F(w) = lambda/2 ||w||^2 + 1/N sum_i c_i loss_i(w)
        binary (two classes):  loss_i = [1 - y_i <w, x_i>]_+
        multiclass:            loss_i = [1 - <w_{y_i}, x_i> + max_{r != y_i} <w_r, x_i>]_+

    The multiclass form is the multiclass hinge with the max-loss rival, i.e. the
    Crammer-Singer loss: with lambda = 1 / (C N) it is the problem that
    ``DualCoordinateSVC(C, multi_class='crammer_singer')`` solves (divided by C N), and the
    binary one is ``DualCoordinateSVC(C, loss='hinge')``'s.

    Step t (one mini-batch A_t of ``batch_size`` rows), eta_t = 1 / (lambda (t + t0))::

        w <- (1 - eta_t lambda) w + eta_t / |A_t| sum_{i in A_t with loss_i(w_t) > 0} c_i g_i
        w <- min(1, (1 / sqrt(lambda)) / ||w||) w        if ``projection``

    with g_i = y_i x_i (binary) or +x_i on w_{y_i} and -x_i on w_r (multiclass).  The optimum
    lies in the ball of radius 1/sqrt(lambda) (Shalev-Shwartz et al. 2007, Thm. 1), so the
    projection never cuts it off.  ``t0 = 0`` is Pegasos; t0 > 0 damps the first steps
    (Bottou's SGD schedule) and is a step-size knob that needs tuning.  A step costs
    O(nnz(A_t)): w is kept as a scalar times a matrix.

    Parameters
    ----------
    lam : float, default=1e-4
        The regularisation lambda.
    n_epochs : int, default=5
        Passes over the data in ``fit`` (shuffled each epoch when ``shuffle``).
    batch_size : int, default=1
        Rows per step (k of the paper).
    projection : bool, default=True
        Project onto the ball of radius 1/sqrt(lambda) after each step.
    average : bool or int, default=False
        Predict with the average of the iterates: True averages every step; an int k >= 1
        averages the steps t >= k (suffix averaging).
    t0 : float, default=0.0
        Offset of the step size eta_t = 1 / (lambda (t + t0)).
    fit_intercept, intercept_scaling
        The bias is the weight of a constant feature of value ``intercept_scaling``,
        regularised like the others (LIBLINEAR's convention, as the linear learners).
    class_weight : dict, 'balanced' or None
        Multiplies the loss of a class's examples; 'balanced' uses n / (K n_c) with the
        counts of the training set (``fit``) or of everything seen so far (``partial_fit``).
    shuffle : bool, default=True
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_, coef_ ((1, d) for two classes, (K, d) otherwise), intercept_, t_ (steps taken),
    n_updates_ (steps with a loss), class_counts_.

    Examples
    --------
    >>> from onlinelearn import Pegasos
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = Pegasos(lam=1e-4, average=True, random_state=0).fit(X, y)
    >>> round(clf.score(*load_dna("test")), 3)
    0.927
    >>> clf.t_  # 5 epochs of 2000 one-row steps
    10000
    """

    # ------------------------------------------------------------------ state
    def _avg_start(self):
        if self.average is True:
            return 1.0
        if self.average is False or self.average is None:
            return np.inf
        return float(self.average)

    def _init_state(self, classes, d):
        R = d + (1 if self.fit_intercept else 0)
        K = len(classes)
        Kc = 1 if K <= 2 else K
        self.classes_ = classes
        self._V = np.zeros((R, Kc))
        self._P = np.zeros((R, Kc)) if self._averaging() else np.zeros((1, 1))
        st = np.zeros(PG.N_ST)
        st[PG.ST_S] = 1.0
        st[PG.ST_AVG_START] = self._avg_start()
        self._st = st
        self.class_counts_ = np.zeros(K, dtype=np.int64)
        self.n_updates_ = 0

    def _averaging(self):
        return self.average is not False and self.average is not None

    def _materialise(self):
        """Fold the scale and the running sum: V = w, P = S (so columns can be rearranged)."""
        st = self._st
        if self._averaging():
            self._P = self._P + st[PG.ST_BETA] * self._V
            st[PG.ST_BETA] = 0.0
        self._V = self._V * st[PG.ST_S]
        st[PG.ST_S] = 1.0
        PG.exact_vsq(self._V, st)

    def _move_columns(self, pos, K):
        self._materialise()
        if K > 2:
            # one vector w (class 1 against class 0) -> columns (-w/2, w/2): same decisions; one
            # known class has no weights yet
            split = self._V.shape[1] == 1 and len(self.classes_) == 2
            keep = pos if self._V.shape[1] > 1 or split else pos[:0]
            self._V = spread_columns(self._V, keep, K, split)
            if self._averaging():
                self._P = spread_columns(self._P, keep, K, split)
            PG.exact_vsq(self._V, self._st)

    def _weights(self, y_codes, sw, counts):
        return weights_by_class(self.class_weight, self.classes_, y_codes, sw, counts)

    # ------------------------------------------------------------------ learning
    def _snapshot(self):
        return {k: copy.deepcopy(v) for k, v in self.__dict__.items()}

    def _restore(self, snap):
        self.__dict__.clear()
        self.__dict__.update(snap)

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap):
        """The set-up of a call (:mod:`onlinelearn.shell.online`)."""
        self._validate_params()
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
        return Call(n=batch.n_rows, batch=batch, y_codes=y_codes, weights=weights, orders=[])

    def _epoch(self, call, order):
        """The rows of one epoch, in ``order`` (None: in their order): every epoch of a call
        is one compiled pass (:meth:`_finish`), whose mini-batches run across epochs."""
        call.orders.append(np.arange(call.n, dtype=np.int64) if order is None else order)

    def _finish(self, call):
        order = np.concatenate(call.orders).astype(np.int64)
        if len(self.classes_) >= 2:
            self._run(call.batch, call.y_codes, call.weights, order)
        else:
            self._st[PG.ST_T] += len(order)

    def _run(self, batch, y_codes, weights, order):
        k = int(self.batch_size)
        Kc = self._V.shape[1]
        b = self._intercept_value()
        scores = np.zeros((k, Kc))
        rival = np.zeros(k, dtype=np.int64)
        coef = np.zeros(k)
        n_upd = PG.pegasos_pass(
            batch.data, batch.indices, batch.indptr, y_codes, weights, order, self._V, self._P,
            self._st, float(self.lam), float(self.t0), b, k, bool(self.projection),
            self._averaging(), scores, rival, coef,
        )  # fmt: skip
        PG.exact_vsq(self._V, self._st)
        self.n_updates_ += int(n_upd)
        if not (np.isfinite(self._V).all() and np.isfinite(self._P).all()
                and np.isfinite(self._st[:5]).all()):  # fmt: skip
            raise FloatingPointError(
                "Pegasos: a weight became infinite or NaN; the model was left as it was. "
                "Scale the features or raise lam."
            )

    # ------------------------------------------------------------------ read-out
    def _weights_matrix(self):
        check_is_fitted(self, "classes_")
        st = self._st
        if self._averaging() and st[PG.ST_NAVG] > 0:
            return (self._P + st[PG.ST_BETA] * self._V) / st[PG.ST_NAVG]
        return st[PG.ST_S] * self._V

    @property
    def t_(self):
        """Steps taken (mini-batches), all calls."""
        check_is_fitted(self, "classes_")
        return int(self._st[PG.ST_T])

    def objective(self, X, y, sample_weight=None):
        """F(w) = lambda/2 ||w||^2 + mean_i c_i loss_i(w) of the predicting weights on (X, y)
        (class weights from the counts of (X, y) for 'balanced')."""
        check_is_fitted(self, "classes_")
        X, y, sw = V.check_batch(self, X, y, sample_weight, reset=False)
        codes = np.searchsorted(self.classes_, y)
        codes = np.minimum(codes, len(self.classes_) - 1)
        if not np.all(self.classes_[codes] == y):
            raise ValueError("y has labels the model was not fitted on")
        c = self._weights(codes, sw, np.bincount(codes, minlength=len(self.classes_)))
        W = self._weights_matrix()
        reg = 0.5 * self.lam * float((W * W).sum())
        S = np.asarray(X @ self.coef_.T) + self.intercept_
        if S.shape[1] == 1:
            loss = np.maximum(0.0, 1.0 - np.where(codes == 1, 1.0, -1.0) * S[:, 0])
        else:
            sy = S[np.arange(len(y)), codes]
            M = 1.0 + S - sy[:, None]
            M[np.arange(len(y)), codes] = 0.0
            loss = M.max(axis=1)
        return reg + float((c * loss).mean())

    def decision_function(self, X):
        """Scores <w, x> + b: (n,) for two classes (positive: ``classes_[1]``), else (n, K)."""
        check_is_fitted(self, "classes_")
        X = V.check_X(self, X, reset=False)
        if len(self.classes_) == 1:
            return np.zeros(X.shape[0])
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        check_is_fitted(self, "classes_")
        meta = state_meta(self, n_updates_=int(self.n_updates_))
        arrays = {"classes_": np.asarray(self.classes_), "V": self._V, "P": self._P,
                  "st": self._st, "class_counts": self.class_counts_}  # fmt: skip
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta, arrays)
        est.n_updates_ = int(meta["n_updates_"])
        est._V, est._P, est._st = float_arrays(arrays, "V", "P", "st")
        check_shape("st", est._st, (PG.N_ST,))
        est.class_counts_ = np.asarray(arrays["class_counts"], dtype=np.int64)
        K = len(est.classes_)
        R = est.n_features_in_ + (1 if est.fit_intercept else 0)
        Kc = 1 if K <= 2 else K
        if est._V.shape != (R, Kc):
            raise ValueError(
                f"model state is inconsistent: weights of shape {est._V.shape}, expected "
                f"{(R, Kc)} for {K} classes and {est.n_features_in_} features"
            )
        if est._averaging() and est._P.shape != est._V.shape:
            raise ValueError("model state is inconsistent: averaging arrays have the wrong shape")
        return est
