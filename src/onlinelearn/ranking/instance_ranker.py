"""InstanceRanker: online instance ranking with pair hinge losses (thesis Sec. 5.3.4)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..shell.online import Call, OnlineMixin
from ..shell.snapshot import restore_attrs, save_attrs
from ..shell.validation import check_real, check_X
from . import _instance_core as IC

__all__ = ["InstanceRanker"]

_LOSSES = {"max": IC.MAX, "avg": IC.AVG}
_UPDATES = {"optimal": IC.OPTIMAL, "subgradient": IC.SUBGRADIENT}
#: what a call may change (kept by reference: a call learns on new arrays)
_STATE = ("coef_", "_st", "n_features_in_", "feature_names_in_")


def _query_pointers(qid, n):
    """Start offsets of the queries: maximal runs of equal ``qid`` (None: one query)."""
    if qid is None:
        return np.array([0, n], dtype=np.int64)
    q = np.asarray(qid)
    if q.ndim != 1 or q.shape[0] != n:
        raise ValueError(f"qid must be a 1-D array with one entry per row ({n}); got shape "
                         f"{q.shape}")  # fmt: skip
    if n == 0:
        return np.array([0], dtype=np.int64)
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    starts = np.concatenate([[0], change, [n]]).astype(np.int64)
    runs = q[starts[:-1]]
    if len(np.unique(runs)) != len(runs):
        raise ValueError(
            "the rows of a query must be contiguous: some qid value appears in two separate "
            "runs of rows (sort the rows by qid, keeping each query's rows together)"
        )
    return starts


def _float64(X):
    """The validated X (float32 or float64, dense or CSR) in float64, as the pass reads it."""
    return X if X.dtype == np.float64 else X.astype(np.float64)


def _targets(y):
    """y as a 1-D float64 vector of real targets (the relevance of each row)."""
    if y is None:
        raise ValueError(
            "This estimator requires y to be passed, but the target y is None: give one "
            "relevance score per row of X."
        )
    arr = check_real(y, "y")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    if arr.ndim != 1:
        raise ValueError(f"y should be a 1d array (one target per row); got shape {arr.shape}")
    try:
        return np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"y must hold numbers (relevance scores), got dtype {arr.dtype}") from None


class InstanceRanker(BaseEstimator):
    """Online instance ranking (thesis Sec. 5.3.4): one weight vector w scores the rows of a
    query, y_hat = X_t w; the pairs E_t = {(i, j) : y_i > y_j} should be ordered with margin
    y_i - y_j.

    Round t is a query (X_t, y_t): the rows of ``X`` sharing one ``qid`` (a maximal run of
    equal values; ``qid=None``: all the rows of the call form one query).  Pair loss
    l_ij(w) = [(y_i - y_j) - <w, x_i - x_j>]_+ and the round's loss g_t (``loss``):

    * ``'max'`` (eq. 5.26): g_t(w) = max_{(i,j) in E_t} l_ij(w);
    * ``'avg'`` (eq. 5.25): g_t(w) = (1/|E_t|) sum_{(i,j) in E_t} l_ij(w).

    Both are X_t-Lipschitz, X_t = max_{(i,j) in E_t} ||x_i - x_j||_2 (the thesis's remark that
    Corollaries 1 and 3 then bound the regret).  The complexity is f(w) = 1/2 ||w||^2 with the
    fixed c = 1/C (Fig. 3.1), and the update (``update``):

    * ``'optimal'`` (eq. 3.12 / 7.8), the problem a round solves::

          w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C g_t(w)

      through its dual over one variable per pair, a_p = x_i - x_j, c_p = (y_i - y_j) -
      <w_t, a_p>::

          max_alpha  sum_p alpha_p c_p - 1/2 ||sum_p alpha_p a_p||^2
          s.t.  'max': alpha >= 0, sum_p alpha_p <= C     'avg': 0 <= alpha_p <= C / |E_t|

      and w_{t+1} = w_t + sum_p alpha_p a_p.  Solved by accelerated projected gradient until
      the duality gap is at most ``tol`` (1 + |D|) (certified; ``n_inexact_steps_`` counts the
      rounds that hit ``max_iter`` first, and the call warns).  With 'max' the primal is
      nonsmooth, so the gap of a first-order iterate shrinks only as the square root of the
      dual's: after 400 iterations the exact step on the face the iterate points to (the KKT
      system of the pairs of largest loss, by least squares) is taken when it certifies the
      gap, P(exact step) - D(iterate) <= tol (1 + |D|).  The pairs' Gram matrix is never
      formed: G alpha is read from the query's k x k row Gram, O(|E_t| + k^2) per product.
    * ``'subgradient'`` (Fig. 3.1, the smallest update that satisfies eq. 3.9): when
      g_t(w_t) > 0, w_{t+1} = w_t - C lambda', lambda' in the subdifferential of g_t at w_t:
      'max', C (x_i - x_j) on the most violated pair; 'avg', (C/|E_t|) sum over the pairs with
      positive loss.

    A round is a *mistake* when some pair of E_t is scored in the wrong order or tied
    (s_i <= s_j with y_i > y_j).  A query without pairs (one row, or equal targets) has no loss
    and changes nothing.  No intercept: adding a constant to every score changes no ranking.

    Parameters
    ----------
    loss : {'max', 'avg'}, default='max'
    update : {'optimal', 'subgradient'}, default='optimal'
    C : float > 0, default=1.0
        1/c: the cap of the step (the weight of the loss in the round's problem).
    n_epochs : int >= 1, default=5
        Passes over the queries made by :meth:`fit` (``partial_fit`` makes one).
    shuffle : bool, default=True
        Visit the queries of each epoch of :meth:`fit` in a random order.
    random_state : int, RandomState or None, default=None
    tol : float > 0, default=1e-10
        Relative duality gap at which the optimal update stops.
    max_iter : int >= 1, default=100000
        Iterations of the optimal update's solver per round.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_features_in_ : int
    t_, n_mistakes_, n_updates_ : int
        Queries processed, online mistakes (counted before each update), rounds with a step.
    cumulative_loss_ : float
        Sum of g_t(w_t) over the rounds (the online loss, before each update).
    n_inexact_steps_, solver_iterations_max_ : int
    dual_objective_ : float
        The dual objective of the run so far, kept as the sum of the rounds' increments
        (see the property).

    Examples
    --------
    >>> import numpy as np
    >>> from onlinelearn.ranking import InstanceRanker
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5)); u = np.arange(5.0)
    >>> qid = np.repeat(np.arange(40), 5)
    >>> est = InstanceRanker().fit(X, X @ u, qid=qid)
    >>> print(f"{est.score(X, X @ u, qid=qid):.2f}")
    1.00
    """

    _parameter_constraints = {
        "loss": [StrOptions(set(_LOSSES))],
        "update": [StrOptions(set(_UPDATES))],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_epochs": [Interval(numbers.Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    }

    def __init__(self, loss="max", update="optimal", C=1.0, n_epochs=5, shuffle=True,
                 random_state=None, tol=1e-10, max_iter=100000):  # fmt: skip
        self.loss = loss
        self.update = update
        self.C = C
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter

    # ------------------------------------------------------------------ learning
    #: the one transaction of the online estimators (:mod:`onlinelearn.shell.online`), with
    #: the hooks below; ``qid`` is an option of the call
    _learn = OnlineMixin._learn

    def _started(self):
        return "coef_" in self.__dict__

    def _snapshot(self):
        return save_attrs(self, _STATE)

    def _restore(self, snap):
        restore_attrs(self, _STATE, snap)

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap, qid=None):
        """The set-up of a call: every check, then the state (new arrays, so that the
        snapshot holds the arrays of the model before the call by reference)."""
        self._validate_params()
        X = _float64(check_X(self, X, reset=first))
        y = _targets(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"X has {X.shape[0]} rows but y has {y.shape[0]} targets; they must be equal."
            )
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity")
        qptr = _query_pointers(qid, X.shape[0])
        X = sp.csr_matrix(X)
        X.sum_duplicates()
        self.coef_ = np.zeros(X.shape[1]) if first else self.coef_.copy()
        self._st = np.zeros(IC.N_ST) if first else self._st.copy()
        nq = qptr.shape[0] - 1
        return Call(n=nq, X=X, indices=X.indices.astype(np.int64),
                    indptr=X.indptr.astype(np.int64), y=y, qptr=qptr,
                    before=self._st[IC.N_INEXACT], mistakes=np.zeros(nq, dtype=np.int8),
                    losses=np.zeros(nq))  # fmt: skip

    def _epoch(self, call, order):
        """One compiled pass over the queries in ``order`` (None: in their order)."""
        if order is None:
            order = np.arange(call.n, dtype=np.int64)
        ok = IC.instance_pass(
            call.X.data, call.indices, call.indptr, call.y, call.qptr, order, self.coef_,
            self._st, _LOSSES[self.loss], _UPDATES[self.update], float(self.C),
            float(self.tol), int(self.max_iter), call.mistakes, call.losses,
        )  # fmt: skip
        if not ok:
            raise FloatingPointError(
                "InstanceRanker: a weight became infinite or NaN; the model was left as it "
                "was before this call. Scale the features or lower C."
            )

    def _finish(self, call):
        return call.mistakes

    def _after(self, call, fit_mode):
        st = self._st
        if st[IC.N_INEXACT] > call.before:
            warnings.warn(
                f"InstanceRanker: {int(st[IC.N_INEXACT] - call.before)} round(s) of this call "
                f"stopped at max_iter={self.max_iter} before the duality gap reached "
                f"tol={self.tol:g}",
                ConvergenceWarning,
                stacklevel=4,
            )

    def fit(self, X, y, qid=None):
        """Learn from scratch: ``n_epochs`` passes over the queries (``qid``: the query of each
        row, its rows contiguous; None: one query)."""
        self._learn(X, y, fit_mode=True, qid=qid)
        return self

    def partial_fit(self, X, y, qid=None):
        """One online pass over the queries, in order."""
        self._learn(X, y, fit_mode=False, qid=qid)
        return self

    def partial_fit_mistakes(self, X, y, qid=None):
        """As :meth:`partial_fit`; returns for each query whether its ranking before the update
        was a mistake (progressive validation)."""
        return self._learn(X, y, fit_mode=False, qid=qid).astype(bool)

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X):
        check_is_fitted(self, "coef_")
        X = _float64(check_X(self, X, reset=False))
        return np.asarray(X @ self.coef_).ravel()

    def predict(self, X):
        """The scores X w (rank each query's rows by them, highest first)."""
        return self.decision_function(X)

    def score(self, X, y, qid=None):
        """Pairwise accuracy: the fraction of the pairs (i, j) of a query with y_i > y_j that
        are scored s_i > s_j (1.0 when there are no pairs)."""
        s = self.decision_function(X)
        y = _targets(y)
        if y.shape[0] != s.shape[0]:
            raise ValueError(f"X has {s.shape[0]} rows but y has {y.shape[0]} targets")
        qptr = _query_pointers(qid, s.shape[0])
        good = total = 0
        for a, b in zip(qptr[:-1], qptr[1:], strict=True):
            dy = y[a:b, None] - y[None, a:b]
            ds = s[a:b, None] - s[None, a:b]
            mask = dy > 0
            total += int(mask.sum())
            good += int((ds[mask] > 0).sum())
        return good / total if total else 1.0

    # ------------------------------------------------------------------ read-outs
    def _stat(self, k):
        check_is_fitted(self, "coef_")
        return self._st[k]

    t_ = property(lambda self: int(self._stat(IC.T_SEEN)))
    n_mistakes_ = property(lambda self: int(self._stat(IC.N_MISTAKES)))
    n_updates_ = property(lambda self: int(self._stat(IC.N_UPDATES)))
    n_inexact_steps_ = property(lambda self: int(self._stat(IC.N_INEXACT)))
    solver_iterations_max_ = property(lambda self: int(self._stat(IC.ITER_MAX)))
    cumulative_loss_ = property(lambda self: float(self._stat(IC.CUM_LOSS)))

    @property
    def dual_objective_(self):
        """The dual objective of the run so far, kept as the sum of the rounds' increments.

        The instance-ranking problem of every round so far (all epochs; a query seen twice is
        two rounds), pairs p = (i, j) of E_t with a_tp = x_i - x_j and b_tp = y_i - y_j::

            P(w) = 1/2 ||w||^2 + C sum_t g_t(w),
            g_t = max_p [b_tp - <w, a_tp>]_+ ('max')  or  mean_p [b_tp - <w, a_tp>]_+ ('avg')

        has the dual (thesis eq. 5.12 with f = 1/2 ||w||^2 and c = 1/C, in the units
        alpha / c; each round's block is the dual of its step, eq. 3.12)::

            D(alpha) = sum_t sum_p alpha_tp b_tp - 1/2 ||sum_t sum_p alpha_tp a_tp||^2,
            'max': alpha_t >= 0, sum_p alpha_tp <= C;   'avg': 0 <= alpha_tp <= C / |E_t|

        and the learner's w is sum_t sum_p alpha_tp a_tp for the variables of its steps
        (both updates), so D = sum_t sum_p alpha_tp b_tp - 1/2 ||w||^2, kept as the sum of
        the rounds' rises sum_p alpha_p c_p - 1/2 ||Delta_t||^2 (c_p = b_p - <w_t, a_p>).
        Weak duality: D <= P(w) for every w, so P(w) - D bounds how far w is from the
        optimum of P; the optimal step maximises its round's rise, so D never decreases.

        NaN once a round's step is not a dual point: the exact 'max' step read from the KKT
        system (``update='optimal'``, ``loss='max'``, taken when the projected-gradient
        iterate cannot certify the gap) is a least-squares solution whose variables may be
        negative or sum above C (rounding up to 1e-12 C is accepted); then D would not be a
        certificate, and it stays NaN."""
        check_is_fitted(self, "coef_")
        return float(self._st[IC.DUAL])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags
