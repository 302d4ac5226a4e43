"""LabelRanker: online label ranking by dual ascent (thesis ch. 8, Secs. 7.2-7.3)."""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core import ranking as RK
from ..shell import validation as V
from ..shell.meta import (
    SparseInputMixin,
    counter,
    estimator_from_meta,
    float_arrays,
    state_meta,
)
from ..shell.online import OnlineMixin
from ..shell.params import Param, parameters
from ..shell.readout import WeightsReadoutMixin
from ..shell.snapshot import copy_array, restore_attrs, restoring, save_attrs
from . import _targets as T
from ._counters import RANKING, RoundCounters

__all__ = ["LabelRanker"]

_COMPLEXITY = {"euclidean": RK.EUCLID, "entropy": RK.ENTROPY}
_UPDATE = {"I": RK.UPD_I, "II": RK.UPD_II, "III": RK.UPD_III}
_CONSTRAINT = {None: RK.NO_CONSTRAINT, "l1": RK.L1_BALL, "floor": RK.FLOOR}
#: what a call may change; a snapshot keeps theta by reference and copies the last two
_STATE = ("classes_", "_kind", "n_features_in_", "_n_relevant", "_since_exact", "_theta", "_lZ",
          "_st")  # fmt: skip
#: updates after which the entropy normalisers are recomputed exactly (the running sum drifts)
_EXACT_EVERY = 2000


def _plain(a, dtype):
    """``a`` as a writable C-contiguous array of ``dtype`` (a copy only when it is not one)."""
    if a.dtype == dtype and a.flags.writeable and a.flags.c_contiguous:
        return a
    return np.array(a, dtype=dtype, order="C")


@parameters(
    "update complexity C margin fit_intercept intercept_scaling n_epochs shuffle random_state "
    "constraint radius floor",
    RANKING, C=0.01, update=Param("III", StrOptions(set(_UPDATE))),
    complexity=Param("euclidean", StrOptions(set(_COMPLEXITY))),
    constraint=Param(None, StrOptions({"l1", "floor"}), None),
    floor=Param(1e-6, Interval(numbers.Real, 0, 1, closed="neither")),
)  # fmt: skip
class LabelRanker(
    OnlineMixin,
    RoundCounters,
    WeightsReadoutMixin,
    SparseInputMixin,
    ClassifierMixin,
    BaseEstimator,
):
    """Online label ranking: K weight vectors, the pair hinge loss (8.1), three dual ascent steps.

    Problem solved by a round (thesis eq. (3.12)/(7.8); the one-round dual of (7.18))::

        max_tau  gamma sum_{r in Y_t} tau_r - sum_{r=1}^{K} [f*(theta_r + sigma_r tau_r x_t)
                                                             - f*(theta_r)]
        s.t.     tau_r >= 0,   sum_{r in Y_t} tau_r = sum_{s not in Y_t} tau_s <= C

    the dual of the primal step ``min_W f(W) - <theta, W> + C max_{r in Y, s not in Y}
    [gamma - (<w_r, x_t> - <w_s, x_t>)]_+`` (loss (8.1)); then theta_r += sigma_r tau_r x_t.

    Where
        x_t, Y_t     the instance (with a constant feature ``intercept_scaling`` appended when
                     ``fit_intercept``) and its set of relevant labels; sigma_r = +1 for r in Y_t,
                     -1 otherwise; s_r = <w_r, x_t> is the score (``decision_function``)
        w_r          the weight vector of label r, w_r = grad f*(theta_r):
                     ``complexity='euclidean'``, f = 1/2 ||w||^2 (8.2): w_r = theta_r (additive);
                     ``'entropy'``, f = log n + sum_j w_j log w_j on the simplex (8.3):
                     w_r = softmax(theta_r) (multiplicative, EG), n = number of weights
        gamma        the margin (``margin``)
        C            1/c of the thesis: the cap of the dual step (``C`` x ``sample_weight``)
        tau          the dual step of the round (alpha / c in the thesis)

    The three updates (thesis Sec. 8.3.2; combined with the two complexities, the 6 algorithms of
    Table 8.1):

    * ``'I'``, conservative (8.4): on a mistake, tau = C on the most violating pair
      r0 = argmin_{r in Y} s_r, s0 = argmax_{s not in Y} s_s (the label-ranking Perceptron for
      the Euclidean complexity, EG for the entropy);
    * ``'II'``, aggressive: tau = t (e_r0 + e_s0), t the best step on that pair, t in [0, C]
      (Euclidean: t = min{C, loss / (2 ||x||^2)}, PA-I; entropy: a safeguarded Newton search);
    * ``'III'``, optimal: the exact maximiser of the problem above (Euclidean: the O(K log K)
      solution of Sec. 7.3.1 / Fig. 7.4; entropy: the primal-dual interior point method of
      Sec. 7.3.2, which stops when its duality gap is below 1e-11 (1 + C): at most 20 iterations
      on our tests, 18 on the message corpora (the thesis saw <= 15), capped at 50;
      ``ip_iterations_max_`` reports the most used).

    Updates II and III act whenever the loss is positive, I only on mistakes.  A row with no
    relevant label or with every label relevant has no pair (r, s): it has no loss, is not a
    mistake and changes nothing (``n_mistakes_`` and the dual stay as they were).

    A round is a *mistake* (thesis Sec. 8.2) when some irrelevant label scores at least as high
    as some relevant label: min_{r in Y} s_r <= max_{s not in Y} s_s (ties count as mistakes).

    Parameters
    ----------
    update : {'I', 'II', 'III'}, default='III'
        The dual ascent step (above).
    complexity : {'euclidean', 'entropy'}, default='euclidean'
        The complexity function f: squared norm (8.2) or relative entropy (8.3).
    C : float > 0, default=0.01
        The cap of the dual step (1/c of the thesis).  For 'euclidean' with update II or III only
        C / margin matters; for update I with 'euclidean' it only scales the weights.  The
        default ranks best on the Enron messages (online ranking loss 0.128 with update III;
        entropy: 0.134, within 0.0002 of its best C; docs/ranking.md).
    margin : float > 0, default=1.0
        gamma of (8.1).  With 'entropy' the scores lie in [min_j x_j, max_j x_j] (w is on the
        simplex), so the margin is measured against the feature scale.
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` to every x (a bias per label); on Enron
        it lowers the online ranking loss for every C and both complexities (0.128 against
        0.140 at the default C).
    intercept_scaling : float > 0, default=1.0
        Value of that constant feature.
    n_epochs : int >= 1, default=5
        Passes over the data made by :meth:`fit` (``partial_fit`` makes one).
    shuffle : bool, default=True
        Visit the rows of each epoch of :meth:`fit` in a random order (``random_state``).
    random_state : int, RandomState or None, default=None
    constraint : {None, 'l1', 'floor'}, default=None
        A projected update: after every update, each weight vector the update changed is
        projected back onto a set (thesis Sec. 7.1).  ``'l1'`` (with 'euclidean'): the Euclidean
        projection onto the l1 ball {||w_r||_1 <= ``radius``} (Fig. 7.2; sparse weights).
        ``'floor'`` (with 'entropy'): the entropic projection onto {w_r in the simplex,
        w_rj >= ``floor``} (Fig. 7.3; no weight can vanish, so the learner can recover, as in
        shifting experts).  Each projection costs O(n log n) per changed vector.  With a
        constraint, ``dual_objective_`` is NaN (the greedy projected step is outside the
        framework's dual ascent).
    radius : float > 0, default=1.0
        z of the l1 ball (``constraint='l1'``).
    floor : float in (0, 1), default=1e-6
        eps of the floored simplex (``constraint='floor'``); eps n <= 1 is required.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The labels, in the order of the columns of Y and of ``decision_function``.
    coef_ : ndarray of shape (K, n_features)
        w_r (without the bias weight).  For 'entropy' the rows with the bias weight sum to 1.
    intercept_ : ndarray of shape (K,)
        ``intercept_scaling`` times the bias weight of each label (0 without intercept).
    n_updates_, n_mistakes_, t_ : int
        Rounds with an update, online mistakes (counted before each update), rows processed.
    dual_objective_ : float
        D = gamma sum_t sum_{r in Y_t} tau_{t,r} - sum_r (f*(theta_r) - f*(0)), the framework's
        dual objective (in units of c).  Updates II and III never decrease it; update I can (its
        step is not chosen by the dual).
    label_cardinality_ : float
        Mean number of relevant labels of the training rows (used by :meth:`predict`).
    ip_iterations_max_ : int
        Most interior-point iterations one round of update III with 'entropy' needed (0 else).

    Examples
    --------
    Progressive validation on the DNA data shipped with the package (one label per row):

    >>> from onlinelearn import LabelRanker
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> est = LabelRanker(update="III")
    >>> mistakes = est.partial_fit_mistakes(X, y)
    >>> print(f"online mistakes {mistakes.mean():.3f}")
    online mistakes 0.104
    >>> X_test, y_test = load_dna("test")
    >>> print(f"test accuracy {est.score(X_test, y_test):.3f}")
    test accuracy 0.924
    """

    # ------------------------------------------------------------------ state
    def _check_constraint(self, n_weights):
        if self.constraint == "l1" and self.complexity != "euclidean":
            raise ValueError(
                "constraint='l1' projects Euclidean weights: use complexity='euclidean'"
            )
        if self.constraint == "floor":
            if self.complexity != "entropy":
                raise ValueError(
                    "constraint='floor' projects weights on the simplex: use complexity='entropy'"
                )
            if self.floor * n_weights > 1:
                raise ValueError(
                    f"floor = {self.floor} is too large for {n_weights} weights per label: "
                    f"floor * n must be <= 1 (floor <= {1.0 / n_weights:.3g})."
                )

    def _init_state(self, classes, kind, n_features):
        R = n_features + (1 if self.fit_intercept else 0)
        K = len(classes)
        self.classes_ = classes
        self._kind = kind
        self._theta = np.zeros((R, K))
        self._lZ = np.full(K, math.log(R) if R > 0 else 0.0)
        self._st = np.zeros(RK.N_ST)
        self._n_relevant = 0.0
        self._since_exact = 0

    def _snapshot(self):
        """State to restore if a call fails; ``_theta`` by reference only: :meth:`_save_rows`
        copies what the pass can change before it runs (a transaction at the cost of the batch,
        not of the model)."""
        snap = save_attrs(self, _STATE[:-2])
        snap.update(save_attrs(self, _STATE[-2:], copy_array))
        return snap

    def _save_rows(self, snap, batch):
        """Copy the rows of theta the pass over ``batch`` can change: the batch's features and
        the bias (every row when a constraint projects whole weight vectors)."""
        if "_theta" not in snap:
            return
        if self.constraint is not None or batch.indices.shape[0] != batch.data.shape[0]:
            rows = np.arange(self._theta.shape[0])
        else:
            rows = np.unique(batch.indices).astype(np.intp)
            if self.fit_intercept:
                rows = np.append(rows, self._theta.shape[0] - 1)
        snap["_rows"] = (rows, self._theta[rows].copy())

    def _restore(self, snap):
        restore_attrs(self, _STATE, snap)
        if "_rows" in snap:
            rows, saved = snap["_rows"]
            self._theta[rows] = saved

    # ------------------------------------------------------------------ the pass
    def _run(self, batch, Y, weight, order, mistakes, losses):
        K = Y.shape[1]
        R = self._theta.shape[0]
        if K < 2:
            mistakes[order] = 0
            losses[order] = 0.0
            self._st[RK.T_SEEN] += len(order)
            return
        nnz = np.diff(batch.indptr)
        m = int(nnz.max()) + 1 if nnz.size else 1
        # one compiled signature: float64 values, writable arrays (float32 or read-only inputs
        # are copied, O(nnz), rather than compiled again)
        data = _plain(batch.data, np.float64)
        status = RK.rank_pass(
            data, _plain(batch.indices, np.int32), _plain(batch.indptr, np.int64),
            _plain(Y, np.int8), _plain(weight, np.float64), order, self._theta, self._lZ,
            self._st, _COMPLEXITY[self.complexity], _UPDATE[self.update], float(self.C),
            float(self.margin), self._intercept_value(), mistakes, losses,
            np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K), np.zeros((2, K)),
            np.zeros((K, m)), np.zeros(m), np.zeros((10, K + 1)), np.zeros(R, dtype=np.int8),
            _CONSTRAINT[self.constraint], float(self.radius if self.constraint == "l1" else
                                                 self.floor),
            np.zeros(R), np.zeros(R), np.array([0, R], dtype=np.int64),
        )  # fmt: skip
        if self.complexity == "entropy":
            self._since_exact += len(order)
            if self._since_exact >= _EXACT_EVERY:
                RK.exact_normalizers(self._theta, self._lZ)
                self._since_exact = 0
        if status != RK.OK or not (np.isfinite(self._lZ).all() and np.isfinite(self._st).all()):
            raise FloatingPointError(
                "LabelRanker: a weight became infinite or NaN during the pass; the model was left "
                "as it was before this call. Scale the features or lower C."
            )
        if R and not np.isfinite(self._theta[batch.indices[: batch.data.shape[0]]]).all():
            raise FloatingPointError(
                "LabelRanker: a weight became infinite or NaN during the pass; the model was left "
                "as it was before this call. Scale the features or lower C."
            )

    def _learn(self, X, Y, classes, sample_weight, *, fit_mode):
        """The family's call of :class:`~onlinelearn.shell.online.OnlineMixin`; Y: a
        label-indicator matrix (n, K), a sequence of label sets, or one label per row;
        ``classes`` fixes the labels and their order (as ``MultiLabelBinarizer(classes=...)``).
        The label set is fixed by the first call (``fit`` starts afresh); later batches with
        other labels are refused.  Returns each row's mistake (thesis Sec. 8.2)."""
        if fit_mode and hasattr(self, "classes_"):
            for k in ("classes_", "_kind"):
                self.__dict__.pop(k)
        first = fit_mode or not hasattr(self, "classes_")
        self._validate_params()
        snap = self._snapshot()
        with restoring(self, snap):
            X = V.check_X(self, X, reset=first)
            batch = V.CSRBatch(X)
            n = batch.n_rows
            Yb, new_classes, kind = T.encode(
                Y, n, None if first else self.classes_, classes, None if first else self._kind
            )
            sw = V.check_sample_weight(sample_weight, n)
            self._check_constraint(batch.n_cols + (1 if self.fit_intercept else 0))
            if first:
                self._init_state(new_classes, kind, batch.n_cols)
            else:
                self._save_rows(snap, batch)
            mistakes = np.zeros(n, dtype=np.int8)
            losses = np.zeros(n)
            if fit_mode:
                rng = check_random_state(self.random_state)
                for _ in range(self.n_epochs):
                    order = rng.permutation(n) if self.shuffle else np.arange(n)
                    self._run(batch, Yb, sw, order.astype(np.int64), mistakes, losses)
            else:
                self._run(batch, Yb, sw, np.arange(n, dtype=np.int64), mistakes, losses)
            self._n_relevant += float(Yb.sum()) * (self.n_epochs if fit_mode else 1)
        return mistakes

    # ------------------------------------------------------------------ public API
    def partial_fit_mistakes(self, X, y, classes=None, sample_weight=None):
        """As :meth:`partial_fit`, returning for each row 1 if the ranking made before its update
        was a mistake (thesis Sec. 8.2), else 0: progressive validation in one call."""
        return self._learn(X, y, classes, sample_weight, fit_mode=False).astype(bool)

    def _weights_matrix(self):
        check_is_fitted(self, "classes_")
        if self.complexity == "euclidean":
            return self._theta
        return np.exp(self._theta - self._lZ[None, :])

    ip_iterations_max_ = counter(RK.IP_ITER_MAX)

    @property
    def label_cardinality_(self):
        check_is_fitted(self, "classes_")
        return self._n_relevant / max(self._st[RK.T_SEEN], 1.0)

    @property
    def dual_objective_(self):
        check_is_fitted(self, "classes_")
        if self.constraint is not None:
            return float("nan")
        gain = float(self._st[RK.GAIN])
        if self.complexity == "euclidean":
            return gain - 0.5 * float(np.sum(self._theta * self._theta))
        R = self._theta.shape[0]
        return gain - float(np.sum(self._lZ - math.log(R)))

    def decision_function(self, X):
        """Ranking scores s_r = <w_r, x> + b_r, shape (n, K); for a single-label model with two
        classes, s_1 - s_0 (shape (n,), positive means ``classes_[1]``)."""
        S = self._scores(X)
        if self._kind == T.MULTICLASS and len(self.classes_) == 2:
            return S[:, 1] - S[:, 0]
        return S

    def predict(self, X):
        """Single-label model: the top-ranked label (first maximum).  Multi-label model: the
        indicator matrix (n, K) of the m top-ranked labels, m = max(1, round(
        ``label_cardinality_``)) (ties broken towards the earlier label)."""
        S = self.decision_function(X)
        if self._kind == T.MULTICLASS:
            if S.ndim == 1:
                return self.classes_[(S > 0).astype(np.int64)]
            return self.classes_[np.argmax(S, axis=1)]
        K = S.shape[1]
        m = min(K, max(1, int(round(self.label_cardinality_))))
        top = np.argsort(-S, axis=1, kind="stable")[:, :m]
        out = np.zeros(S.shape, dtype=np.int64)
        np.put_along_axis(out, top, 1, axis=1)
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        check_is_fitted(self, "classes_")
        meta = state_meta(self, kind=self._kind, n_relevant=float(self._n_relevant),
                          since_exact=int(self._since_exact))  # fmt: skip
        arrays = {"classes_": np.asarray(self.classes_), "theta": self._theta, "lZ": self._lZ,
                  "st": self._st}  # fmt: skip
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta, arrays)
        est._kind = str(meta["kind"])
        est._n_relevant = float(meta["n_relevant"])
        est._since_exact = int(meta["since_exact"])
        est._theta, est._lZ, est._st = float_arrays(arrays, "theta", "lZ", "st")
        R = est.n_features_in_ + (1 if est.fit_intercept else 0)
        K = len(est.classes_)
        if est._theta.shape != (R, K) or est._lZ.shape != (K,) or est._st.shape != (RK.N_ST,):
            raise ValueError(
                f"model state is inconsistent: weights {est._theta.shape}, expected {(R, K)}"
            )
        if est._kind not in (T.MULTICLASS, T.INDICATOR, T.SETS):
            raise ValueError(f"model state is inconsistent: unknown target kind {est._kind!r}")
        return est
