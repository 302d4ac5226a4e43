"""State arrays as columns of the label set, and how they grow when ``partial_fit`` meets a
label never seen before: :class:`GrowingLabelsMixin` (``classes_`` and ``class_counts_``, for
every family whose label set grows) and :func:`spread_columns`; and the linear learner's state,
one column of theta (and of the averaging arrays) per class, or one for a binary model
(:class:`StateColumnsMixin`).

:class:`StateColumnsMixin`'s methods are taken by
:class:`onlinelearn.shell.base.OnlineLinearClassifier` (:func:`.meta.with_methods`);
they rely on the base's ``_codes``, ``_weights_dtype`` and ``_balanced_flag`` and on the
``_link``, ``_always_multiclass`` and parameter attributes of the learner.
"""

from __future__ import annotations

import numpy as np

from .._core import links as L
from .._core.online_loop import flush_all, recompute_aggregate
from .._core.state import DUAL, DUAL_QUAD, N_ST, S_SUM, params_of

__all__ = ["GrowingLabelsMixin", "StateColumnsMixin", "spread_columns"]


def spread_columns(M, pos, n_cols, split=False):
    """The columns of M at positions ``pos`` of ``n_cols`` zero columns.  ``split``: M's one
    column w (the second known class against the first) becomes -w/2 at ``pos[0]`` and w/2 at
    ``pos[1]``, which keeps every decision and margin f_1 - f_0 = <w, x>."""
    out = np.zeros((M.shape[0], n_cols), dtype=M.dtype)
    if split:
        out[:, pos[0]], out[:, pos[1]] = -0.5 * M[:, 0], 0.5 * M[:, 0]
    else:
        out[:, pos] = M
    return out


class GrowingLabelsMixin:
    """``_grow(new_classes)``: labels never seen before join ``classes_``, which stays sorted.
    The learner moves its per-class state (``_move_columns(pos, n_classes)``, ``pos`` the new
    positions of the known labels); ``class_counts_`` moves here."""

    def _grow(self, new_classes):
        old = self.classes_
        if len(new_classes) == len(old):
            return
        pos = np.searchsorted(new_classes, old)
        self._move_columns(pos, len(new_classes))
        counts = np.zeros(len(new_classes), dtype=np.int64)
        counts[pos] = self.class_counts_
        self.class_counts_ = counts
        self.classes_ = new_classes


class StateColumnsMixin(GrowingLabelsMixin):
    """``_init_state`` / ``_grow`` / ``_flush_frame`` and the layout queries of
    :class:`onlinelearn.shell.base.OnlineLinearClassifier`'s state (``_theta``, ``_A``,
    ``_lastS``, ``_st``, ``class_counts_``)."""

    @property
    def _n_cols(self):
        return self._theta.shape[1]

    def _u_layout(self):
        """True when the averaging state is the Euclidean pass's one array U (in ``_A``;
        ``_lastS`` is a placeholder): sum of the hypotheses = S theta - U.  The other links
        keep the generic pass's A and lastS (their scale changes every round)."""
        return self._link == L.EUCLID and bool(self.average)

    def _check_average_state(self):
        """``average=True`` on a model that learned with ``average=False`` has no averaging
        arrays (they are (1, 1) placeholders): refuse, before any pass or read-out indexes
        them as (R, K) (that wrote out of bounds and crashed the process)."""
        if self.average and (
            self._A.shape != self._theta.shape
            or (not self._u_layout() and self._lastS.shape != self._theta.shape)
        ):
            raise ValueError(
                f"{type(self).__name__}: average=True but this model learned with "
                "average=False, so it kept no average of its hypotheses. Set average=False "
                "again, or fit a new model with average=True."
            )

    def _avg_arrays(self):
        """The (R, K) averaging arrays the passes change (none without averaging)."""
        if not self.average:
            return []
        return [self._A] if self._u_layout() else [self._A, self._lastS]

    def _binary_mode(self):
        return self._theta.shape[1] == 1 and not self._always_multiclass

    def _init_state(self, classes, n_features, dtype=np.float64):
        n_rows = n_features + (1 if self.fit_intercept else 0)
        K = len(classes)
        n_cols = 1 if (K <= 2 and not self._always_multiclass) else K
        self.classes_ = classes
        self._theta = np.zeros((n_rows, n_cols), dtype=self._weights_dtype(dtype))
        self._A = np.zeros((n_rows, n_cols)) if self.average else np.zeros((1, 1))
        self._lastS = (
            np.zeros((n_rows, n_cols))
            if self.average and not self._u_layout()
            else np.zeros((1, 1))
        )
        self._st = np.zeros(N_ST)
        self.class_counts_ = np.zeros(K, dtype=np.int64)
        self._recompute_aggregate()

    def _link_args(self):
        """(link, p, balanced): the arguments of the link's compiled helpers."""
        par = params_of(*self._codes(self._n_weights()))
        return par.link, par.p, par.balanced

    def _recompute_aggregate(self):
        """The link's aggregate (Z or sum |theta|^p) recomputed exactly from theta."""
        recompute_aggregate(self._theta, self._st, *self._link_args())

    def _n_weights(self):
        n = self._theta.size
        return n * (2 if self._balanced_flag() else 1)

    def _flush_frame(self):
        """Fold pending averages before a change of the columns (growth, merge)."""
        if self.average and not self._u_layout():
            flush_all(self._theta, self._A, self._lastS, self._st, *self._link_args())

    def _move_columns(self, pos, K_new):
        """Insert columns for labels never seen before."""
        old = self.classes_
        self._flush_frame()
        R = self._theta.shape[0]
        S_now = self._st[S_SUM]
        if self._always_multiclass or K_new > 2:
            th = np.zeros((R, K_new), dtype=self._theta.dtype)
            A = np.zeros((R, K_new)) if self.average else self._A
            timestamps = self.average and not self._u_layout()
            lS = np.full((R, K_new), S_now) if timestamps else self._lastS
            if self._binary_mode() and len(old) == 2:
                # one vector w (class old[1] against old[0]) -> two columns, same decisions
                w = self._theta[:, 0]
                if self._link == L.EUCLID:
                    th[:, pos[0]], th[:, pos[1]] = -0.5 * w, 0.5 * w
                    # the same dual variables, halved, on the multiclass hinge: D / 2, and
                    # PA-II's terms tau^2 / (4 C) are a quarter of what they were: + Q / 4
                    q = self._st[DUAL_QUAD]
                    self._st[DUAL] = 0.5 * self._st[DUAL] + (0.25 * q if q != 0.0 else 0.0)
                    self._st[DUAL_QUAD] = 0.25 * q
                else:
                    th[:, pos[1]] = w  # phi(0) = 0 for the p-norm and balanced entropy links
                if self.average:
                    a = self._A[:, 0]
                    if self._link == L.EUCLID:
                        A[:, pos[0]], A[:, pos[1]] = -0.5 * a, 0.5 * a
                    else:
                        A[:, pos[1]] = a
            elif len(old) >= 2 or self._always_multiclass:
                th[:, pos] = self._theta
                if self.average:
                    A[:, pos] = self._A  # A, or U: both linear in the weights
                if timestamps:
                    lS[:, pos] = self._lastS
            # a single known class has no weights yet
            self._theta, self._A, self._lastS = th, A, lS
            if self._link != L.EUCLID:
                # f* of the entropy and p-norm links depends on the number of weights n (and
                # p = 2 ln n): the kept dual no longer reads as one
                self._st[DUAL] = np.nan
        # else: 1 -> 2 classes in binary mode: theta is still zero, nothing to move
        self._recompute_aggregate()
