"""``predict_proba`` and ``predict_log_proba`` of every classifier, written once.

Two cases.

* **Native** (a learner whose ``loss`` is the logistic loss, e.g.
  ``OnlineLearner(loss=Logistic())``): the loss l(z) = log(1 + e^{-z}) is the negative
  log-likelihood of p(y | x) = sigma(z), so the probabilities are the ones it defines:
  p(classes_[1] | x) = sigma(s) for one score s, softmax(s_1..s_K) for K scores (for K = 2 the
  same numbers; for K > 2 the multinomial model whose max-rival form the loss bounds).

* **Calibrated** (every margin learner: hinge, squared hinge, COPA, kernel, second-order, SVM,
  boosting).  Margins are not probabilities; a calibration map is learned *online* from
  **progressive-validation scores**: the decision values of training rows computed by the model
  *before* it learned from them (held-out scores, the only honest ones for an online learner:
  after its update a passive-aggressive learner has margin >= 1 on the row it just saw).

  - ``partial_fit`` / ``partial_fit_predict`` on a fitted model: the rows of the batch (its last
    ``PER_CALL`` = 256 rows) are scored by the model before the call (one ``decision_function``
    call); one row at a time this is exactly the progressive score of each row; for a larger
    batch, the score of the model as it was before the batch (still held out).  To keep the
    cost small, once the window holds ``REFIT`` rows only the calls that cross a multiple of a
    stride of rows are scored: about one row in 8 of a stream of rows or small batches (one
    batch in 8), fewer for a wide model; batches of 256 rows or more always (``THIN``);
  - ``fit`` and the first ``partial_fit`` (no model yet to score with): a copy of the learner
    learns from all but a held-out part of the rows (``fit``: a stratified random fifth, at most
    ``WINDOW`` rows, fixed seed; first ``partial_fit``: the last fifth of the batch, in order)
    and scores the held-out part; the learner itself learns from every row as before.  A
    family whose pass can stop part-way (``_held_out_in_pass``: the Euclidean linear
    learners) makes no copy on a first ``partial_fit``: it learns the rows before the
    held-out part, scores that part and learns it, in the same call (:class:`HeldOut`).

  The last ``WINDOW`` scored rows are kept (a window, because the scale of the scores drifts as
  the weights grow); the map is refitted on them, to convergence, whenever ``REFIT`` new rows
  arrived (1, 2, 4, ... at the start), and after every ``fit``.

  The maps, and why.  They must keep ``argmax predict_proba == predict`` (ties included),
  so a map is a strictly increasing function applied to every score alike, with no offset:

  - two classes, one score s: a **two-slope Platt scaling without intercept**,
    p(classes_[1] | s) = sigma(a_+ max(s, 0) + a_- min(s, 0)), a_+, a_- > 0.  Platt's sigmoid
    (Platt 1999) is the classic calibration of margins; its intercept would move the point
    p = 1/2 away from s = 0 (where ``predict`` changes its mind); two slopes keep that point and
    still let the side of each class be as confident as its rows were (with unequal classes
    the majority side's slope is the steeper).  The objective is separable: each slope solves a
    1-D problem over the rows on its side;
  - K > 2 scores: **temperature scaling** (Guo et al. 2017), p(k | s) = softmax(a s)_k,
    a > 0: one parameter, the argmax kept, the standard calibration of multiclass scores;
    a per-class offset or slope (a full multinomial-logistic map, or scikit-learn's one-vs-rest
    sigmoids) would change the argmax.

  Each map minimises the log loss over the window with **Platt's targets** in place of 0/1
  (the true class gets (N_y + 1) / (N_y + 2), the others share 1 / (N_y + 2), N_y the weight
  of class y in the window), which keeps a finite when the window is separated::

      binary:      min_{a >= a_min}  sum_{i on the side} w_i [log(1 + e^{a u_i}) - t_i a u_i]
      multiclass:  min_{a >= a_min}  sum_i w_i [logsumexp(a s_i) - a <t_i, s_i>]

  both convex in a (second derivatives sum_i w_i u_i^2 sigma'(a u_i) and
  sum_i w_i Var_{softmax(a s_i)}(s_i)), solved by Newton's method kept in a bracket to a
  relative 1e-12 (``tests/test_proba.py`` checks the minimiser against scipy's).
  w_i is ``sample_weight``; a_min = 1e-6 / max|s| keeps the map strictly increasing.

Multi-label targets (``LabelRanker`` on label sets) have no ``predict_proba`` (the method is
absent, as scikit-learn's ``available_if`` makes it).

Model files store the map and the window (``onlinelearn.model_io``).  A file written before
this module existed has neither: ``predict_proba`` then raises :class:`NotFittedError`
until the model learns from labelled rows again (``partial_fit``), which starts the window.

A call that fails changes nothing: the scores are computed before the learner's call and the
window and map change only after it succeeded.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import warnings

import numpy as np
from scipy.special import expit
from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if

__all__ = [
    "REFIT",
    "WINDOW",
    "Calibration",
    "ProbabilityMixin",
    "fit_binary_slopes",
    "fit_temperature",
    "log_proba_from_scores",
]

#: rows of progressive-validation scores kept for the calibration (the most recent ones)
WINDOW = 2048
#: the map is refitted when this many new rows arrived (or as many as it had, at the start)
REFIT = 256
#: scoring a call costs a decision_function call, whose fixed part (the validation, the
#: read-out of the weights: O(d K) for an averaged linear learner) can exceed a one-row
#: partial_fit; so once the window holds REFIT rows, a call of n < PER_CALL rows is scored
#: only when it crosses a multiple of ``stride`` rows, stride = max(THIN n, d K /
#: STRIDE_WEIGHTS up to MAX_STRIDE) (d features, K score columns): one row in THIN of a
#: stream, fewer on a wide model (one in 275 for news20's 20 x 56,438 weights); a call of
#: PER_CALL rows or more is always scored (thinning those left the window too old: news20,
#: one pass in batches of 1,000, log loss 0.81 instead of 0.65)
THIN = 8
#: at most this many rows of a call are scored (its last ones): scoring is a product with the
#: weights, a sizeable part of a pass's cost
PER_CALL = 256
STRIDE_WEIGHTS = 4096
MAX_STRIDE = 1024
#: the held-out share of ``fit`` and of a first ``partial_fit`` (at most ``WINDOW`` rows)
HOLDOUT = 0.2
#: the learner had no model before the call
_UNFITTED = "unfitted"
#: calibration switched off (the learner copies that produce the held-out scores)
_OFF = contextvars.ContextVar("onlinelearn_calibration_off", default=False)
#: estimators inside a learning call (only the outermost call calibrates)
_ACTIVE = contextvars.ContextVar("onlinelearn_calibration_active", default=frozenset())


class HeldOut:
    """A request to the family's first ``partial_fit`` (set while it runs): learn rows
    [0, n - m) of the batch, put the scores of rows [n - m, n) by that model in ``scores``,
    then learn those rows -- the held-out scores of :meth:`_held_out_scores` in the same
    call, without a copy learning n - m rows again (one pass instead of nearly two)."""

    __slots__ = ("owner", "n", "m", "scores")

    def __init__(self, owner, n, m):
        self.owner, self.n, self.m, self.scores = owner, n, m, None


_HOLD = contextvars.ContextVar("onlinelearn_hold_out", default=None)


def held_out_request(est, n):
    """The :class:`HeldOut` request for ``est``'s call over ``n`` rows, or None (a family
    whose pass can stop part-way declares ``_held_out_in_pass = True`` and asks here)."""
    req = _HOLD.get()
    if req is None or req.owner != id(est) or req.n != n:
        return None
    return req


def _held_out_size(n):
    """m, the held-out rows of a batch of n (0: too few rows to hold any out)."""
    m = min(WINDOW, int(n * HOLDOUT))
    return 0 if m < 1 or n - m < 2 else m


# ---------------------------------------------------------------------------- the maps
def _log_sigmoid(z):
    """log sigma(z) = -log(1 + e^{-z}), stable for every z."""
    return -np.logaddexp(0.0, -z)


def _log_softmax(Z):
    m = Z.max(axis=1, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    E = Z - m
    return E - np.log(np.exp(E).sum(axis=1, keepdims=True))


def log_proba_from_scores(scores, kind, params):
    """log p (n, K) from decision values: ``kind`` 'binary' (1-D scores, params (a_+, a_-)),
    'multiclass' ((n, K) scores, params (a,)), 'single' (one class)."""
    if kind == "single":
        return np.zeros((np.shape(scores)[0], 1))
    if kind == "binary":
        s = np.asarray(scores, dtype=np.float64)
        z = params[0] * np.maximum(s, 0.0) + params[1] * np.minimum(s, 0.0)
        return np.column_stack([_log_sigmoid(-z), _log_sigmoid(z)])
    return _log_softmax(params[0] * np.asarray(scores, dtype=np.float64))


def _as_kind(scores, kind):
    """Scores in the form of ``kind``: one per row for two classes (f_1 - f_0 when a learner
    gives a column per class), (n, K) otherwise."""
    scores = np.asarray(scores, dtype=np.float64)
    if kind == "binary" and scores.ndim == 2:
        return scores[:, 0] if scores.shape[1] == 1 else scores[:, 1] - scores[:, 0]
    return scores


def _agree(P, scores, kind):
    """Rows where rounding made the probabilities of predict's class and another equal
    (a |s| below 1e-16 relative): one ulp moves from the other to predict's class, so that
    the first maximum of each row is predict's label."""
    if kind == "single":
        return P
    if kind == "binary":
        pred = (np.asarray(scores) > 0).astype(np.int64)
    else:
        pred = np.argmax(scores, axis=1)
    top = np.argmax(P, axis=1)
    bad = np.flatnonzero(top != pred)
    if bad.size:
        P = P.copy()
        j, k = top[bad], pred[bad]
        eps = np.spacing(P[bad, j])
        P[bad, k] = P[bad, j] + eps
        P[bad, j] = P[bad, j] - eps
    return P


def _root(grad_hess, a0, a_min, rtol=1e-12, max_iter=200):
    """The minimiser over a >= a_min of a convex 1-D function given by its derivative g and
    second derivative h: a_min if g(a_min) >= 0, else the root of g, by Newton's method from
    ``a0`` kept in a bracket [lo, hi] (doubling while no upper end is known, bisection when a
    step leaves the bracket); it stops when a step moves a by at most ``rtol`` a or the
    bracket is that narrow."""
    a = max(float(a0), a_min)
    g, h = grad_hess(a)
    if g >= 0:
        if a == a_min:
            return a_min
        hi = a
        if grad_hess(a_min)[0] >= 0:
            return a_min
        lo = a_min
    else:
        lo, hi = a, np.inf  # g is increasing: g(a_min) <= g(a) < 0
    for _ in range(max_iter):
        if g == 0:
            return a
        step = a - g / h if h > 0 else np.inf
        if abs(step - a) <= rtol * a:  # a Newton step this small: converged
            return min(max(step, lo), hi)
        if not (lo < step < hi):
            if hi == np.inf:
                step = 2.0 * lo
            else:
                step = np.sqrt(lo * hi) if hi > 4.0 * lo else 0.5 * (lo + hi)
        if step > 1e300:
            return step
        a = step
        g, h = grad_hess(a)
        if g < 0:
            lo = a
        else:
            hi = a
        if hi < np.inf and hi - lo <= rtol * hi:
            return a
    return a


def _platt_targets(codes, w, n_classes):
    """Platt's targets: (N_y + 1) / (N_y + 2) for the true class, N_y its weight."""
    N = np.bincount(codes, weights=w, minlength=n_classes)
    return (N[codes] + 1.0) / (N[codes] + 2.0)


def fit_binary_slopes(s, y01, w, start=(1.0, 1.0)):
    """(a_+, a_-): the two-slope Platt map (module docstring) of scores ``s`` with labels
    ``y01`` in {0, 1} and weights ``w``.  A side without rows (or with only zero scores)
    keeps its ``start`` slope."""
    s = np.asarray(s, dtype=np.float64)
    y01 = np.asarray(y01, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    t_true = _platt_targets(y01, w, 2)
    t = np.where(y01 == 1, t_true, 1.0 - t_true)  # the target of class 1
    scale = float(np.abs(s).max()) if s.size else 0.0
    out = []
    for side, a0 in zip((s > 0, s < 0), start, strict=True):
        # solved for b = a scale over u / scale in [-1, 1] (no overflow for huge scores)
        u, ws, ts = s[side] / max(scale, 1e-300), w[side], t[side]
        if scale == 0.0 or not np.any(ws > 0):
            out.append(float(a0))
            continue

        def grad_hess(b, u=u, ws=ws, ts=ts):
            p = expit(b * u)
            return float(np.dot(ws, u * (p - ts))), float(np.dot(ws, u * u * p * (1.0 - p)))

        b0 = min(max(float(a0) * scale, 1e-6), 1e12)
        out.append(float(_root(grad_hess, b0, 1e-6)) / scale)
    return tuple(out)


def fit_temperature(S, codes, w, start=1.0):
    """a: the temperature map softmax(a s) (module docstring) of scores ``S`` (n, K) with
    true-class indices ``codes`` and weights ``w``; ``start`` when the scores carry no
    information (every row's scores equal)."""
    S = np.asarray(S, dtype=np.float64)
    codes = np.asarray(codes, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    n, K = S.shape
    keep = w > 0
    S, codes, w = S[keep], codes[keep], w[keep]
    spread = S.max(axis=1) - S.min(axis=1) if S.size else np.zeros(0)
    if not np.any(spread > 0):
        return float(start)
    t_true = _platt_targets(codes, w, K)
    scale = float(np.abs(S).max())
    S = S / scale  # solved for b = a scale over scores in [-1, 1] (no overflow)
    s_true = S[np.arange(S.shape[0]), codes]
    # <t_i, s_i>: the true class t_true, the K - 1 others (1 - t_true) / (K - 1) each
    ts = t_true * s_true + (1.0 - t_true) * (S.sum(axis=1) - s_true) / (K - 1)
    m = S.max(axis=1, keepdims=True)
    D = S - m  # <= 0: exp never overflows

    def grad_hess(a):
        E = np.exp(a * D)
        Z = E.sum(axis=1)
        mean = (E * S).sum(axis=1) / Z
        var = (E * D * D).sum(axis=1) / Z - ((E * D).sum(axis=1) / Z) ** 2
        return float(np.dot(w, mean - ts)), float(np.dot(w, np.maximum(var, 0.0)))

    b0 = min(max(float(start) * scale, 1e-6), 1e12)
    return float(_root(grad_hess, b0, 1e-6)) / scale


# ---------------------------------------------------------------------------- the state
class Calibration:
    """The window of progressive-validation scores and the map fitted on it.

    ``kind``: 'binary' (one score per row, map (a_+, a_-)) or 'multiclass' (K scores, map
    (a,)); ``scores`` (WINDOW, C), ``codes`` (WINDOW,) the true class of each row among the
    scores' classes, ``weights`` (WINDOW,); ``count`` rows held, ``head`` the next slot;
    ``since_fit`` rows added since the map was fitted, ``at_fit`` rows held then."""

    def __init__(self, kind, n_columns, params=None):
        self.kind = kind
        self.n_columns = int(n_columns)
        self.params = np.array(
            params if params is not None else ((1.0, 1.0) if kind == "binary" else (1.0,)),
            dtype=np.float64,
        )
        self.scores = np.zeros((WINDOW, self.n_columns))
        self.codes = np.zeros(WINDOW, dtype=np.int64)
        self.weights = np.zeros(WINDOW)
        self.count = self.head = self.since_fit = self.at_fit = 0
        self.offered = 0  # rows of every call since the window started, scored or not

    def __eq__(self, other):
        """Equal state, bit for bit (the transaction tests compare models field by field)."""
        if type(other) is not type(self):
            return NotImplemented
        a, b = vars(self), vars(other)
        if a.keys() != b.keys():
            return False
        for k, v in a.items():
            w = b[k]
            if isinstance(v, np.ndarray):
                if not (isinstance(w, np.ndarray) and v.dtype == w.dtype
                        and np.array_equal(v, w, equal_nan=v.dtype.kind in "fc")):  # fmt: skip
                    return False
            elif v != w:
                return False
        return True

    __hash__ = None

    def wants(self, n, n_weights):
        """Score a call of ``n`` rows?  Every call until the window holds REFIT rows; then the
        call that crosses a multiple of the stride (``THIN`` module comment)."""
        if self.count < REFIT or n >= PER_CALL:
            return True  # a large batch: the fixed cost is shared by many rows
        # about one row in THIN of a stream of small batches (one batch in THIN), and fewer
        # on a wide model
        stride = max(min(MAX_STRIDE, n_weights // STRIDE_WEIGHTS), THIN * n)
        return (self.offered + n) // stride != self.offered // stride

    def add(self, scores, codes, weights):
        """Append rows (the last WINDOW of them stay)."""
        n = len(codes)
        if n > WINDOW:
            scores, codes, weights = scores[-WINDOW:], codes[-WINDOW:], weights[-WINDOW:]
            n = WINDOW
        slots = (self.head + np.arange(n)) % WINDOW
        self.scores[slots] = np.asarray(scores, dtype=np.float64).reshape(n, self.n_columns)
        self.codes[slots] = codes
        self.weights[slots] = weights
        self.head = int((self.head + n) % WINDOW)
        self.count = min(WINDOW, self.count + n)
        self.since_fit += n

    def due(self):
        return self.since_fit > 0 and self.since_fit >= min(REFIT, max(1, self.at_fit))

    def ordered(self):
        """(scores, codes, weights) of the rows held, oldest first."""
        if self.count < WINDOW:
            idx = np.arange(self.count)
        else:
            idx = (self.head + np.arange(WINDOW)) % WINDOW
        return self.scores[idx], self.codes[idx], self.weights[idx]

    def refit(self):
        S, codes, w = self.ordered()
        if self.kind == "binary":
            self.params = np.array(fit_binary_slopes(S[:, 0], codes, w, tuple(self.params)))
        else:
            self.params = np.array([fit_temperature(S, codes, w, float(self.params[0]))])
        self.since_fit, self.at_fit = 0, self.count

    # -- model files
    def to_state(self):
        S, codes, w = self.ordered()
        meta = {"kind": self.kind, "n_columns": self.n_columns, "since_fit": self.since_fit,
                "at_fit": self.at_fit, "offered": self.offered}  # fmt: skip
        return meta, {"params": self.params, "scores": S, "codes": codes, "weights": w}

    @classmethod
    def from_state(cls, meta, arrays):
        kind = meta["kind"]
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"unknown calibration kind {kind!r} in model state")
        cal = cls(kind, int(meta["n_columns"]), np.asarray(arrays["params"], dtype=np.float64))
        want = 2 if kind == "binary" else 1
        if cal.params.shape != (want,) or not np.all(np.isfinite(cal.params) & (cal.params > 0)):
            raise ValueError("model state is inconsistent: calibration parameters")
        S = np.asarray(arrays["scores"], dtype=np.float64)
        codes = np.asarray(arrays["codes"], dtype=np.int64)
        w = np.asarray(arrays["weights"], dtype=np.float64)
        n = len(codes)
        if n > WINDOW or S.shape != (n, cal.n_columns) or w.shape != (n,):
            raise ValueError("model state is inconsistent: calibration window")
        cal.add(S, codes, w)
        cal.since_fit, cal.at_fit = int(meta["since_fit"]), int(meta["at_fit"])
        cal.offered = int(meta.get("offered", 0))
        return cal


# ---------------------------------------------------------------------------- the mixin
def _is_logistic(loss):
    if isinstance(loss, str):
        return loss == "logistic"
    return type(loss).__name__ == "Logistic" and type(loss).__module__.startswith("onlinelearn")


def _rows(X, idx):
    from sklearn.utils import _safe_indexing

    return _safe_indexing(X, idx)


def _n_rows(X):
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None else len(X)


def _labels_1d(y):
    """y as a 1-D array of labels, or None for multi-label targets."""
    if isinstance(y, list | tuple) and y and isinstance(y[0], list | tuple | set | frozenset):
        return None
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    return arr if arr.ndim == 1 else None


def _weights(sample_weight, n):
    if sample_weight is None:
        return np.ones(n)
    return np.broadcast_to(np.asarray(sample_weight, dtype=np.float64), (n,)).copy()


def _proba_available(est):
    return est.__dict__.get("_proba_multilabel") is None


class ProbabilityMixin:
    """``predict_proba`` / ``predict_log_proba`` (module docstring) and the calibration that
    every learning call of the shell updates (:meth:`_calibrating`)."""

    # -- which case
    def _native_proba(self):
        """True when the learner's loss is the logistic loss (probabilities it defines)."""
        return _is_logistic(self.__dict__.get("loss"))

    def _proba_kind(self):
        K = len(self.classes_)
        return "single" if K == 1 else ("binary" if K == 2 else "multiclass")

    # -- public
    @available_if(_proba_available)
    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`, computed without underflow (shape (n, n_classes))."""
        scores = self.decision_function(X)  # checks that the model is fitted
        kind = self._proba_kind()
        scores = _as_kind(scores, kind)
        return log_proba_from_scores(scores, kind, self._proba_params())

    @available_if(_proba_available)
    def predict_proba(self, X):
        """Class probabilities, shape (n, n_classes), columns in the order of ``classes_``.

        The logistic loss: the probabilities the loss defines (sigmoid / softmax of the
        scores).  Any other learner: its scores through the calibration map learned online
        from progressive-validation scores (two-slope Platt scaling for two classes,
        temperature scaling for more; see ``docs/probabilities.md``).  Rows sum to 1 and the
        first maximum of each row is :meth:`predict`'s label."""
        scores = self.decision_function(X)  # checks that the model is fitted
        kind = self._proba_kind()
        scores = _as_kind(scores, kind)
        P = np.exp(log_proba_from_scores(scores, kind, self._proba_params()))
        return _agree(P, scores, kind)

    def _proba_params(self):
        kind = self._proba_kind()
        if kind == "single" or self._native_proba():
            return np.ones(2 if kind == "binary" else 1)
        cal = self.__dict__.get("calibration_")
        if cal is None:
            raise NotFittedError(
                f"{type(self).__name__} has no probability calibration: it was read from a "
                "model file written before onlinelearn stored calibrations. Let it learn from "
                "a few labelled rows (partial_fit), which starts the calibration, or fit it "
                "again."
            )
        if cal.kind != kind:  # labels grew and no row was scored since: the map so far
            a = float(np.sqrt(np.prod(cal.params)))
            return np.array([a, a]) if kind == "binary" else np.array([a])
        return cal.params

    # -- the calibration, around every learning call
    @contextlib.contextmanager
    def _calibrating(self, mode, X, y, sample_weight=None, classes=None):
        """Around a learning call of the shell (``mode``: 'fit' or 'partial'): scores before
        it, the window and map updated after it succeeded (nothing if it fails)."""
        active = _ACTIVE.get()
        if _OFF.get() or id(self) in active or self._native_proba():
            yield
            return
        token = _ACTIVE.set(active | {id(self)})
        hold = req = None
        try:
            before = self._scores_before(mode, X)
            if before is _UNFITTED and getattr(self, "_held_out_in_pass", False):
                n = _n_rows(X)
                if _held_out_size(n):
                    req = HeldOut(id(self), n, _held_out_size(n))
                    hold = _HOLD.set(req)
            yield
        finally:
            if hold is not None:
                _HOLD.reset(hold)
            _ACTIVE.reset(token)
        self._calibrate_after(mode, X, y, sample_weight, classes, before, req)

    def _scores_before(self, mode, X):
        """(classes, scores of the last rows) of the model before a partial_fit; None when
        there is no model yet (or the batch cannot be scored: the call will say why)."""
        if mode != "partial":
            return None
        if "classes_" not in self.__dict__:
            return _UNFITTED
        try:
            n = _n_rows(X)
            cal = self.__dict__.get("calibration_")
            if cal is not None:
                width = 1 if cal.kind == "binary" else cal.n_columns
                if not cal.wants(n, int(getattr(self, "n_features_in_", 0)) * width):
                    return None
            Xt = X if n <= PER_CALL else _rows(X, np.arange(n - PER_CALL, n))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scores = np.asarray(self.decision_function(Xt), dtype=np.float64)
        except Exception:  # noqa: BLE001 - the learner's own call reports the problem
            return None
        return np.asarray(self.classes_), scores

    def _calibrate_after(self, mode, X, y, sample_weight, classes, before, req=None):
        labels = _labels_1d(y)
        if labels is None:
            self.__dict__["_proba_multilabel"] = True
            self.__dict__.pop("calibration_", None)
            return
        self.__dict__.pop("_proba_multilabel", None)
        kind = self._proba_kind()
        if kind == "single":
            return
        n = len(labels)
        weights = _weights(sample_weight, n)
        cal = self.__dict__.get("calibration_")
        if (
            mode == "fit"
            or cal is None
            or cal.kind != kind
            or cal.n_columns != (1 if kind == "binary" else len(self.classes_))
        ):
            params = None
            if cal is not None and mode != "fit":  # labels grew: start from the map so far
                a = float(np.sqrt(np.prod(cal.params)))
                params = (a, a) if kind == "binary" else (a,)
            cal = Calibration(kind, 1 if kind == "binary" else len(self.classes_), params)
        if mode == "fit" or before is _UNFITTED:
            if req is not None and req.scores is not None:  # scored inside the call
                test = np.arange(n - req.m, n)
                rows = self._held_out_rows(
                    np.asarray(self.classes_), req.scores, labels[test], weights[test]
                )
            else:
                rows = self._held_out_scores(mode, X, labels, weights, classes)
            if rows is not None:
                cal.add(*rows)
                cal.refit()
        elif before is not None:
            old_classes, scores = before
            if len(old_classes) == len(self.classes_):
                m = scores.shape[0]
                lab, wt = labels[n - m :], weights[n - m :]
                codes = np.searchsorted(old_classes, lab)
                codes = np.minimum(codes, len(old_classes) - 1)
                seen = old_classes[codes] == lab
                scores = _as_kind(scores, kind).reshape(m, cal.n_columns)
                cal.add(scores[seen], codes[seen], wt[seen])
                if cal.due():
                    cal.refit()
        cal.offered += n
        self.calibration_ = cal

    def _held_out_scores(self, mode, X, labels, weights, classes):
        """(scores, codes, weights) of held-out rows, scored by a copy of the learner that
        learned from the other rows (``fit``: a stratified random part; a first
        ``partial_fit``: the last rows of the batch, in order); None if too few rows."""
        from sklearn.base import clone

        n = len(labels)
        m = _held_out_size(n)
        if not m:
            return None
        if mode == "fit":
            rng = np.random.default_rng(0)
            _, codes_all = np.unique(labels, return_inverse=True)
            hold = []
            for c in range(codes_all.max() + 1):
                idx = np.flatnonzero(codes_all == c)
                k = int(round(len(idx) * m / n))
                if len(idx) >= 2 and k >= 1:
                    hold.append(rng.choice(idx, size=min(k, len(idx) - 1), replace=False))
            if not hold:
                return None
            test = np.sort(np.concatenate(hold))
            train = np.setdiff1d(np.arange(n), test)
        else:
            train, test = np.arange(n - m), np.arange(n - m, n)
        copy = clone(self)
        token = _OFF.set(True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kw = {} if np.all(weights == 1.0) else {"sample_weight": weights[train]}
                Xtr, ytr = _rows(X, train), labels[train]
                if mode == "fit":
                    if classes is not None:  # labels announced but maybe absent from y
                        kw["classes"] = classes
                    copy.fit(Xtr, ytr, **kw)
                else:
                    copy.partial_fit(Xtr, ytr, classes=classes, **kw)
                scores = np.asarray(copy.decision_function(_rows(X, test)), dtype=np.float64)
        except Exception:  # noqa: BLE001 - the copy may not learn from a part (one class...)
            return None
        finally:
            _OFF.reset(token)
        return self._held_out_rows(np.asarray(copy.classes_), scores, labels[test], weights[test])

    def _held_out_rows(self, cc, scores, lab, wt):
        """(scores, codes, weights) of the held-out rows whose label the scoring model knew;
        None when its label set ``cc`` is not the learner's."""
        if len(cc) != len(self.classes_) or not np.array_equal(cc, np.asarray(self.classes_)):
            return None
        codes = np.minimum(np.searchsorted(cc, lab), len(cc) - 1)
        seen = cc[codes] == lab
        kind = self._proba_kind()
        scores = _as_kind(scores, kind).reshape(len(lab), 1 if kind == "binary" else len(cc))
        return scores[seen], codes[seen], wt[seen]

    # -- model files (onlinelearn.model_io)
    def _calibration_state(self):
        cal = self.__dict__.get("calibration_")
        return None if cal is None else cal.to_state()

    def _set_calibration_state(self, meta, arrays):
        if meta is None:  # a file written before calibrations were stored
            self.__dict__.pop("calibration_", None)
            return
        self.calibration_ = Calibration.from_state(meta, arrays)

    # -- batch learners: their own fit, wrapped once per class
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fit = cls.__dict__.get("fit")
        # the online shell (shell.online.OnlineMixin) calibrates inside its own calls
        if (
            fit is None
            or getattr(cls, "_calls_calibrate", False)
            or getattr(fit, "_calibrates", False)
        ):
            return

        @functools.wraps(fit)
        def calibrated_fit(self, X, y, *args, **kwargs):
            sw = kwargs.get("sample_weight", args[0] if args else None)
            with self._calibrating("fit", X, y, sw):
                fit(self, X, y, *args, **kwargs)
            return self

        calibrated_fit._calibrates = True
        cls.fit = calibrated_fit


def calibrating(est, mode, X, y, sample_weight=None, classes=None):
    """The calibration context of ``est`` (a no-op for estimators without probabilities)."""
    hook = getattr(est, "_calibrating", None)
    if hook is None:
        return contextlib.nullcontext()
    return hook(mode, X, y, sample_weight, classes)
