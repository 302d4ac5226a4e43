"""The calibration maps of :mod:`onlinelearn.shell.proba` and the window they are fitted on.

Two maps from a margin learner's scores to probabilities, each fitted to convergence by a
safeguarded Newton iteration on its weighted log loss: for two classes a two-slope Platt map
(a separate slope for each side of 0, no intercept), for more classes temperature scaling
(one positive factor on all the scores).  Both keep ``argmax predict_proba == predict``, ties
included.  :class:`Calibration` holds the last ``WINDOW`` scored rows and the fitted
parameters, decides which calls are scored and when the map is refitted, and reads and writes
its state in model files.  The estimator side (which scores, when, the transactions) is in
:mod:`onlinelearn.shell.proba`.
"""

from __future__ import annotations

import numpy as np

from .._core.calibration import (
    CAL_AT_FIT,
    CAL_COUNT,
    CAL_HEAD,
    CAL_N,
    CAL_OFFERED,
    CAL_REFIT,
    CAL_SINCE_FIT,
    slope_grad_hess,
    temperature_grad_hess,
)

__all__ = [
    "MAX_STRIDE",
    "PER_CALL",
    "REFIT",
    "STREAM_ROWS",
    "STRIDE_WEIGHTS",
    "THIN",
    "WINDOW",
    "Calibration",
    "fit_binary_slopes",
    "fit_temperature",
    "log_proba_from_scores",
]

#: rows of progressive-validation scores kept for the calibration (the most recent ones)
WINDOW = 2048
#: the map is refitted when this many new rows arrived (or as many as it had, at the start)
REFIT = CAL_REFIT
#: scoring a call costs a decision_function call, whose fixed part (the validation, the
#: read-out of the weights: O(d K) for an averaged linear learner) can exceed a one-row
#: partial_fit; so once the window holds REFIT rows, a call of n < PER_CALL rows is scored
#: only when it crosses a multiple of ``stride`` rows, stride = max(THIN n, d K /
#: STRIDE_WEIGHTS up to MAX_STRIDE) (d features, K score columns): one row in THIN of a
#: stream, fewer on a wide model (one in 275 for news20's 20 x 56,438 weights; not for the
#: learners whose pass scores the rows, which read no weights out: d K counts as 0); a call of
#: PER_CALL rows or more is always scored (thinning those left the window too old: news20,
#: one pass in batches of 1,000, log loss 0.81 instead of 0.65)
THIN = 8
#: at most this many rows of a call are scored (its last ones): scoring is a product with the
#: weights, a sizeable part of a pass's cost
PER_CALL = 256
#: a learner whose pass scores its rows (the Euclidean linear learners) scores the last this
#: many rows of every call: every row of a stream enters the window as one at a time would
#: put it there, and the map is decided at the same rows (:meth:`Calibration.add_stream`)
STREAM_ROWS = WINDOW + REFIT
STRIDE_WEIGHTS = 4096
MAX_STRIDE = 1024
#: the temperature fit starts from the root of every (n // WARM_ROWS)-th row when n >= 4 WARM_ROWS
WARM_ROWS = 256

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

        u, ws, ts = (np.ascontiguousarray(v, dtype=np.float64) for v in (u, ws, ts))

        def grad_hess(b, u=u, ws=ws, ts=ts):  # one compiled sweep (onlinelearn._core)
            return tuple(map(float, slope_grad_hess(float(b), u, ws, ts)))

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

    def sums(rows):  # one compiled sweep per Newton step (onlinelearn._core.calibration)
        args = tuple(np.ascontiguousarray(v[rows]) for v in (S, D, w, ts))
        return lambda a: tuple(map(float, temperature_grad_hess(float(a), *args)))

    b0 = min(max(float(start) * scale, 1e-6), 1e12)
    n = S.shape[0]
    if n >= 4 * WARM_ROWS:
        # the root of a sample of rows first (a start far from the root costs the doubling
        # and Newton steps, 8 on news20's first window): the steps on all the rows then start
        # close to theirs (3), and the root they reach does not depend on the start
        b0 = _root(sums(slice(None, None, n // WARM_ROWS)), b0, 1e-6, rtol=1e-3)
    return float(_root(sums(slice(None)), b0, 1e-6)) / scale


# ---------------------------------------------------------------------------- the state
def _counter(slot, doc):
    def get(self):
        return int(self._n[slot])

    def put(self, value):
        self._n[slot] = value

    return property(get, put, doc=doc)


class Calibration:
    """The window of progressive-validation scores and the map fitted on it.

    ``kind``: 'binary' (one score per row, map (a_+, a_-)) or 'multiclass' (K scores, map
    (a,)); ``scores`` (WINDOW, C), ``codes`` (WINDOW,) the true class of each row among the
    scores' classes, ``weights`` (WINDOW,); ``count`` rows held, ``head`` the next slot;
    ``since_fit`` rows added since the map was fitted, ``at_fit`` rows held then.

    :meth:`refit` decides the fit and keeps the window's rows aside; the fit itself runs when
    ``params`` is first read (by ``predict_proba``, a model file, the next labels), so it is
    always the fit on the window as it was at :meth:`refit`, started from the last map
    computed: a learner that is never asked for probabilities does not pay for it."""

    def __init__(self, kind, n_columns, params=None):
        self.kind = kind
        self.n_columns = int(n_columns)
        self._params = np.array(
            params if params is not None else ((1.0, 1.0) if kind == "binary" else (1.0,)),
            dtype=np.float64,
        )
        self._pending = False  # a refit decided and not run yet
        self._start = self._params  # the map a pending fit starts from (not part of ==)
        self._fit_rows = None  # the window a pending fit is on (not part of ==)
        self.scores = np.zeros((WINDOW, self.n_columns))
        self.codes = np.zeros(WINDOW, dtype=np.int64)
        self.weights = np.zeros(WINDOW)
        # the counters, in one array that the compiled one-row step updates (properties below)
        self._n = np.zeros(CAL_N, dtype=np.int64)

    head = _counter(CAL_HEAD, "the window's next slot")
    count = _counter(CAL_COUNT, "rows held")
    since_fit = _counter(CAL_SINCE_FIT, "rows added since the last fit was decided")
    at_fit = _counter(CAL_AT_FIT, "rows held when it was decided")
    offered = _counter(CAL_OFFERED, "rows of every call since the window started, scored or not")

    @property
    def params(self):
        """The map's parameters: (a_+, a_-) for two classes, (a,) for more."""
        if self._pending:
            self._fit()
        return self._params

    @params.setter
    def params(self, value):
        self._params = np.asarray(value, dtype=np.float64)
        self._pending = False
        self._fit_rows = None

    def __eq__(self, other):
        """Equal state, bit for bit (the transaction tests compare models field by field; a
        decided fit is run first, so a map fitted later equals one fitted at once)."""
        if type(other) is not type(self):
            return NotImplemented
        self.params, other.params  # noqa: B018 - runs a pending fit
        a, b = dict(vars(self)), dict(vars(other))
        for k in ("_start", "_fit_rows"):
            a.pop(k, None), b.pop(k, None)
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

    def add_stream(self, scores, codes, weights, skipped=0):
        """The rows of a call of a learner that scores every row in its pass, in order, after
        ``skipped`` rows of the call that were learned but not scored: the window, its
        counters and the decided fit end as if each row had come alone (:meth:`add`, then
        :meth:`refit` when :meth:`due`).  The skipped rows (only in a call of more than
        ``STREAM_ROWS`` rows) advance the counters; the fits decided among them and among the
        first scored rows are replaced by a later one in the call, whose window holds scored
        rows only (the last due row is at most REFIT rows from the end, its window the WINDOW
        rows up to it).  Only that last fit keeps a copy of its window (:meth:`refit`): the
        earlier ones would be replaced before anything reads them, and the fit a pending one
        starts from is the same either way."""
        last = self._last_due(skipped + len(codes))
        if last:
            given = max(0, last - skipped)  # the scored rows up to the last due row
            self._advance(last, scores[:given], codes[:given], weights[:given])
            self.refit()
            scores, codes, weights = scores[given:], codes[given:], weights[given:]
            skipped = max(0, skipped - last)
        self._advance(skipped + len(codes), scores, codes, weights)

    def _last_due(self, n):
        """The number of the next ``n`` rows after which the last fit among them is due
        (:meth:`due`, row by row), 0 if none is."""
        count, since, at = self.count, self.since_fit, self.at_fit
        pos = last = 0
        while True:
            step = max(1, min(REFIT, max(1, at)) - since)
            if pos + step > n:
                return last
            pos += step
            count = min(WINDOW, count + step)
            since, at, last = 0, count, pos
            if at >= REFIT:  # from here on, one every REFIT rows
                return pos + (n - pos) // REFIT * REFIT

    def _advance(self, k, scores, codes, weights):
        """Move the window on by ``k`` rows of which the last ``len(codes)`` were scored (the
        others only advance the counters and the head, as a skipped row does); rows
        overwritten within these k are not written."""
        m = len(codes)
        keep = min(m, WINDOW)
        if keep:
            slots = (self.head + (k - keep) + np.arange(keep)) % WINDOW
            rows = np.asarray(scores[m - keep :], dtype=np.float64)
            self.scores[slots] = rows.reshape(keep, self.n_columns)
            self.codes[slots] = codes[m - keep :]
            self.weights[slots] = weights[m - keep :]
        self.head = int((self.head + k) % WINDOW)
        self.count = min(WINDOW, self.count + k)
        self.since_fit += k

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
        """Fit the map on the rows held now, when ``params`` is next read: the rows are kept
        aside (a copy of the window, O(WINDOW) once every REFIT rows), so that learning never
        waits for a fit.  A fit decided while another is pending replaces it and starts from
        the same map (the last one computed)."""
        if not self._pending:
            self._start = self._params
        self._pending = True
        self._fit_rows = self.ordered()  # (fancy indexing: copies)
        self.since_fit, self.at_fit = 0, self.count

    def _fit(self):
        # from the start and the window fixed at refit(): two threads reading params at once
        # (a served model) compute the same map, bit for bit
        rows, start = self._fit_rows, self._start
        if rows is None:  # another reader finished this fit meanwhile
            self._pending = False
            return
        S, codes, w = rows
        if self.kind == "binary":
            params = np.array(fit_binary_slopes(S[:, 0], codes, w, tuple(start)))
        else:
            params = np.array([fit_temperature(S, codes, w, float(start[0]))])
        self._params = params
        self._pending = False
        self._fit_rows = None

    # -- model files
    def to_state(self):
        """(meta, arrays) for a model file.  A decided fit that has not run yet is written as
        it stands (its start and its window), not run: running it would change the start of
        the next fit, so a saved model would go on differently from one never saved."""
        S, codes, w = self.ordered()
        meta = {"kind": self.kind, "n_columns": self.n_columns, "since_fit": self.since_fit,
                "at_fit": self.at_fit, "offered": self.offered}  # fmt: skip
        arrays = {"params": self._params, "scores": S, "codes": codes, "weights": w}
        rows = self._fit_rows if self._pending else None
        if rows is not None:
            meta["pending"] = True
            arrays.update(start=self._start, fit_scores=rows[0], fit_codes=rows[1],
                          fit_weights=rows[2])  # fmt: skip
        return meta, arrays

    @classmethod
    def from_state(cls, meta, arrays):
        kind = meta["kind"]
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"unknown calibration kind {kind!r} in model state")
        cal = cls(kind, int(meta["n_columns"]), _map(kind, arrays["params"]))
        S, codes, w = _window(cal, arrays, "scores", "codes", "weights")
        cal.add(S, codes, w)
        cal.since_fit, cal.at_fit = int(meta["since_fit"]), int(meta["at_fit"])
        cal.offered = int(meta["offered"])
        if meta.get("pending", False):
            cal._start = _map(kind, arrays["start"])
            cal._fit_rows = _window(cal, arrays, "fit_scores", "fit_codes", "fit_weights")
            cal._pending = True
        return cal


def _map(kind, params):
    """A calibration map read from a file, checked: (a_+, a_-) or (a,), finite and > 0."""
    params = np.asarray(params, dtype=np.float64)
    want = 2 if kind == "binary" else 1
    if params.shape != (want,) or not np.all(np.isfinite(params) & (params > 0)):
        raise ValueError("model state is inconsistent: calibration parameters")
    return params


def _window(cal, arrays, *names):
    """(scores, codes, weights) of a window read from a file, checked against ``cal``."""
    S = np.asarray(arrays[names[0]], dtype=np.float64)
    codes = np.asarray(arrays[names[1]], dtype=np.int64)
    w = np.asarray(arrays[names[2]], dtype=np.float64)
    n = len(codes)
    if n > WINDOW or S.shape != (n, cal.n_columns) or w.shape != (n,):
        raise ValueError("model state is inconsistent: calibration window")
    return S, codes, w


# ---------------------------------------------------------------------------- the mixin
