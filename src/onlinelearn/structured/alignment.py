"""Alignment of an event sequence to a signal (thesis ch. 9) on the generic structured learner.

The thesis's data (TIMIT speech, polyphonic music) is not available here; :func:`make_alignment`
generates a task of the same shape, documented below.  It is *not* the thesis's data.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._core import alignment as A
from ..shell import validation as V
from ..shell.params import AT_LEAST_ONE, POSITIVE, Param, parameters
from .learner import STRUCTURED, OnlineStructuredLearner

__all__ = ["Aligner", "make_alignment"]


def _check_input(x, n_types=None):
    """An input is (frames (T, d), events (K,) int type codes, G (T, n_types) confidences);
    returns (frames, events, Gcum), the form the compiled oracles read."""
    if not isinstance(x, tuple | list) or len(x) != 3:
        raise TypeError("an alignment input is a tuple (frames, events, G)")
    frames, events, G = x
    frames = np.ascontiguousarray(V.check_real(frames, "frames"), dtype=np.float64)
    G = np.asarray(V.check_real(G, "G"), dtype=np.float64)
    if frames.ndim != 2 or frames.shape[0] == 0:
        raise ValueError(f"frames must be a non-empty 2-D array, got shape {frames.shape}")
    if G.ndim != 2 or G.shape[0] != frames.shape[0]:
        raise ValueError(f"G must have one row per frame ({frames.shape[0]}), got {G.shape}")
    if n_types is not None and G.shape[1] != n_types:
        raise ValueError(f"G has {G.shape[1]} columns, the model knows {n_types} event types")
    # the codes index the columns of G: a code outside them would be read out of bounds
    events = V.check_positions(events, G.shape[1], "event codes")
    if events.shape[0] == 0:
        raise ValueError("events must be a non-empty 1-D array of type codes")
    if not (np.all(np.isfinite(frames)) and np.all(np.isfinite(G))):
        raise ValueError("frames and G must be finite")
    Gcum = np.zeros((G.shape[0] + 1, G.shape[1]))
    np.cumsum(G, axis=0, out=Gcum[1:])
    return frames, events, Gcum


@parameters(
    "max_duration * eps cost_scale update C U average n_epochs shuffle random_state", STRUCTURED,
    update="self-tuned", average=False, n_epochs=1, max_duration=Param(12, AT_LEAST_ONE),
    eps=Param(1, Interval(numbers.Integral, 0, None, closed="left")),
    cost_scale=Param(10.0, POSITIVE),
)  # fmt: skip
class Aligner(BaseEstimator):
    """Learn to align event sequences to signals: y = argmax_y <w, phi(x, e, y)> (thesis eq. 9.2).

    Problem solved by a round: that of the chosen ``update`` of
    :class:`OnlineStructuredLearner` (default: the self-tuned step of Fig. 5.4, as in the
    thesis's experiments), with the alignment feature map phi = sum_i psi (eq. 9.3; the seven
    psi of Sec. 9.5 adapted to generic frames, see :mod:`onlinelearn._core.alignment`) and
    the cost rho(y, y') = ``cost_scale`` |{i : |y_i - y'_i| > eps}| / K (eq. 9.1).

    Where
        an input x is a tuple (frames (T, d), events (K,) type codes, G (T, n_types)) with
        G[s, e] a frame classifier's confidence that frame s belongs to an event of type e
        (the thesis's g_e of eq. 9.5); y = (y_1 < ... < y_K) are 0-based start frames;
        durations lie in [1, ``max_duration``] = [1, L].  argmax and loss-augmented argmax are
        the dynamic program of Fig. 9.1 in compiled code, O(K T L^2).
        The duration statistics mu_e, sigma_e of eq. 9.6 are estimated in ``fit`` from the
        training timings.  ``average=False`` keeps the last hypothesis (the "Last"
        online-to-batch conversion of App. B.3 that the thesis used).

    Exact and approximate: nothing is solved iteratively.  argmax and the loss-augmented argmax
    are the exact dynamic program (every admissible timing is scored); each round's step is
    the closed form of :class:`OnlineStructuredLearner`.

    Parameters
    ----------
    max_duration : int, default=12
    eps : int, default=1
        Tolerance of the cost in frames.
    cost_scale : float, default=10.0
        rho's factor (10 as in the thesis's experiments; it keeps rho in {0} u [1, inf) for
        K <= 10, as Fig. 5.4 assumes).
    update, C, U, average, n_epochs, shuffle, random_state
        As in :class:`OnlineStructuredLearner`.

    Examples
    --------
    >>> from onlinelearn.structured import Aligner, make_alignment
    >>> Xtr, ytr = make_alignment(60, random_state=0)
    >>> Xte, yte = make_alignment(30, random_state=1)
    >>> al = Aligner(n_epochs=2, random_state=0).fit(Xtr, ytr)
    >>> bool(al.mean_cost(Xte, yte) < 1.0)
    True
    """

    # ------------------------------------------------------------------ the oracles
    def cost(self, y, yp):
        y, yp = np.asarray(y), np.asarray(yp)
        return float(self.cost_scale * np.mean(np.abs(y - yp) > self.eps))

    def feature_map(self, x, y):
        """phi(x, e, y) (eq. 9.3) of an input x = (frames, events, G) and a timing y: start
        frames 0 <= y_1 < ... < y_K < T, one per event (checked: the compiled map reads the
        frames and G at these positions)."""
        check_is_fitted(self, "learner_")
        x = _check_input(x, self.n_types_)
        y = V.check_timing(y, x[1].shape[0], x[0].shape[0], "the timing y")
        phi = self._phi(x, y)
        if not np.isfinite(phi).all():
            raise ValueError("phi(x, y) overflows float64 (frames too large); scale the frames")
        return phi

    def argmax(self, w, x):
        """The timing of highest score <w, phi(x, e, y)> of an input x = (frames, events, G)."""
        return self._argmax(self._weights(w), _check_input(x, getattr(self, "n_types_", None)))

    def loss_augmented_argmax(self, w, x, y):
        """argmax_y' <w, phi(x, e, y')> + rho(y, y') for an input x = (frames, events, G)."""
        x = _check_input(x, getattr(self, "n_types_", None))
        y = V.check_timing(y, x[1].shape[0], x[0].shape[0], "the timing y")
        return self._aug(self._weights(w), x, y)

    def _weights(self, w):
        check_is_fitted(self, "learner_")
        w = np.ascontiguousarray(V.check_real(w, "w"), dtype=np.float64)
        if w.shape != (A.N_FEATURES,) or not np.isfinite(w).all():
            raise ValueError(f"w must be {A.N_FEATURES} finite weights, got shape {w.shape}")
        return w

    # the oracles of the structured learner, on checked inputs (x with the cumulated G)
    def _phi(self, x, y):
        frames, events, Gcum = x
        out = np.empty(A.N_FEATURES)
        A.feature_vector(frames, Gcum, events, self.mu_, self.sigma_,
                         np.asarray(y, dtype=np.int64), out)  # fmt: skip
        return out

    def _dp(self, w, x, truth, scale):
        frames, events, Gcum = x
        out = np.empty(events.shape[0], dtype=np.int64)
        w = np.ascontiguousarray(w, dtype=np.float64)
        L, eps = int(self.max_duration), int(self.eps)
        s = A.align(w, frames, Gcum, events, self.mu_, self.sigma_, L, truth, eps, scale, out)
        if s == -np.inf:
            raise ValueError(
                f"{events.shape[0]} events cannot fit in {frames.shape[0]} frames with "
                f"durations in [1, {self.max_duration}]"
            )
        return out

    def _argmax(self, w, x):
        return self._dp(w, x, np.zeros(x[1].shape[0], dtype=np.int64), 0.0)

    def _aug(self, w, x, y):
        return self._dp(w, x, np.asarray(y, dtype=np.int64), float(self.cost_scale))

    # ------------------------------------------------------------------ estimator
    def _inputs(self, X, Y=None, n_types=None):
        n_types = getattr(self, "n_types_", None) if n_types is None else n_types
        X = [_check_input(x, n_types) for x in X]
        if Y is None:
            return X, None
        Y = list(Y)
        if len(Y) != len(X):
            raise ValueError(f"{len(X)} inputs but {len(Y)} timings")
        L = self.max_duration
        for n, (frames, events, _) in enumerate(X):
            T = frames.shape[0]
            Y[n] = y = V.check_timing(Y[n], events.shape[0], T, f"timing {n}")
            dur = np.diff(np.append(y, T))
            if y[0] < 0 or y[0] >= L or np.any(dur < 1) or np.any(dur > L):
                raise ValueError(
                    f"timing {n} breaks the constraints 0 <= y_1 < L, 1 <= y_(i+1) - y_i <= L "
                    f"(L = max_duration = {L}, y_(K+1) = T = {T})"
                )
        return X, Y

    def fit(self, X, Y):
        """Estimate the duration statistics, then learn w online (``n_epochs`` passes)."""
        self._validate_params()
        X = list(X)
        if not X:
            raise ValueError("no examples")
        n_types = _check_input(X[0])[2].shape[1]
        Xc, Yc = self._inputs(X, Y, n_types)
        durs = [[] for _ in range(n_types)]
        for (frames, events, _), y in zip(Xc, Yc, strict=True):
            for e, dd in zip(events, np.diff(np.append(y, frames.shape[0])), strict=True):
                durs[e].append(dd)
        allm = np.mean(np.concatenate([np.asarray(d, float) for d in durs if d]))
        old = {k: self.__dict__[k] for k in ("mu_", "sigma_", "n_types_") if k in self.__dict__}
        self.mu_ = np.array([np.mean(d) if d else allm for d in durs])
        self.sigma_ = np.array([max(np.std(d), 0.5) if len(d) > 1 else 1.0 for d in durs])
        self.n_types_ = n_types
        learner = OnlineStructuredLearner(
            self._phi, self._argmax, self.cost, self._aug,
            update=self.update, loss="max", C=self.C, U=self.U, average=self.average,
            n_epochs=self.n_epochs, shuffle=self.shuffle, random_state=self.random_state,
        )  # fmt: skip
        try:
            learner.fit(Xc, Yc)
        except BaseException:
            for k in ("mu_", "sigma_", "n_types_"):
                self.__dict__.pop(k, None)
            self.__dict__.update(old)
            raise
        self.learner_ = learner
        return self

    @property
    def coef_(self):
        check_is_fitted(self, "learner_")
        return self.learner_.coef_

    def predict(self, X):
        """Start frames of each input's events (a list of int arrays)."""
        check_is_fitted(self, "learner_")
        Xc, _ = self._inputs(X)
        return self.learner_.predict(Xc)

    def mean_cost(self, X, Y):
        """Mean rho(y, h(x)) (eq. 9.1 times cost_scale)."""
        Y = list(Y)
        return float(np.mean([self.cost(y, p) for y, p in zip(Y, self.predict(X), strict=True)]))

    def score(self, X, Y):
        """Fraction of events whose predicted start is within ``eps`` frames of the truth."""
        hits = []
        for n, (y, p) in enumerate(zip(list(Y), self.predict(X), strict=True)):
            y = V.check_positions(y, np.iinfo(np.int64).max, f"timing {n}")
            if y.shape != p.shape:
                raise ValueError(f"timing {n} has shape {y.shape} for {p.shape[0]} events")
            hits.append(np.abs(y - p) <= self.eps)
        return float(np.mean(np.concatenate(hits)))


def make_alignment(
    n, *, n_types=6, n_events=(4, 8), d=5, max_duration=12, noise=1.0, random_state=None
):
    """A generated alignment task (NOT the thesis's data): ``n`` (input, timing) pairs.

    Generator: each event type e in {0..n_types-1} has a centroid m_e ~ N(0, I_d) and a mean
    duration D_e drawn uniformly from {3, ..., max_duration - 2}.  A sequence has K events,
    K uniform in ``n_events`` (inclusive), types uniform; it starts after a lead-in of
    uniform {0, 1, 2} frames (frames of "silence", centroid 0); event i lasts
    clip(round(N(D_e, 1)), 1, max_duration) frames, each frame x_s = m_{e_i} + noise N(0, I_d).
    The frame confidences are G[s, e] = -||x_s - m_e||^2 / (2 d) — a nearest-centroid frame
    classifier that knows the centroids (the role of the thesis's frame-wise phoneme
    classifier g_e of eq. 9.5).  The lead-in frames belong to no event; the first event's start
    y_1 is the lead-in length.

    Returns (X, Y): X a list of (frames, events, G), Y a list of start-frame arrays.
    """
    rng = np.random.default_rng(random_state)
    # the task itself (centroids, durations) is fixed by a seed independent of the sample
    task = np.random.default_rng(12345)
    M = task.normal(size=(n_types, d))
    D = task.integers(3, max(4, max_duration - 1), size=n_types)
    X, Y = [], []
    for _ in range(n):
        K = int(rng.integers(n_events[0], n_events[1] + 1))
        ev = rng.integers(0, n_types, size=K)
        lead = int(rng.integers(0, 3))
        dur = np.clip(np.round(rng.normal(D[ev], 1.0)), 1, max_duration).astype(np.int64)
        starts = lead + np.concatenate([[0], np.cumsum(dur)[:-1]])
        T = int(lead + dur.sum())
        frames = np.zeros((T, d))
        for i in range(K):
            frames[starts[i] : starts[i] + dur[i]] = M[ev[i]]
        frames += noise * rng.normal(size=(T, d))
        G = -((frames[:, None, :] - M[None, :, :]) ** 2).sum(axis=2) / (2 * d)
        X.append((frames, ev, G))
        Y.append(starts.astype(np.int64))
    return X, Y
