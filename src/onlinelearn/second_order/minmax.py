"""The weighted last-step min-max learner with a fixed or adaptive margin (multiclass)."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core import second_order as SO
from ..shell.meta import counter
from ..shell.params import POSITIVE, Param, parameters
from ._base import SECOND_ORDER, SecondOrderClassifier, SecondOrderState, max_row_sqnorm

#: A^{-1} is recomputed from A after this many rank-one updates (or 4 R, if larger)
REFRESH_EVERY = 512


@parameters(
    "margin b covariance query c fit_intercept n_epochs shuffle random_state label_encoding",
    SECOND_ORDER,
    margin=Param("fixed", StrOptions({"fixed", "adaptive"})),
    label_encoding=Param("difference", StrOptions({"difference", "one-hot"})),
    b=Param("auto", POSITIVE, StrOptions({"auto"})), c=Param(1.0, POSITIVE),
    query=Param(None, StrOptions({"margin"}), None),
)  # fmt: skip
class WeightedMinMax(SecondOrderClassifier):
    """Weighted last-step min-max learner (second order), fixed or adaptive margin.

    Problem solved by a round (the note "Fix-Margin and Adaptive-Margin Theoretical
    Comparison", built on Forster 1999 and Moroshko & Crammer 2014)::

        U_t = argmin_U  b ||U||_F^2 + sum_{s in Z, s <= t} a_s ||y_s - U' x_s||^2

    i.e. a weighted ridge regression of label vectors on the update rounds Z, with the closed
    form U_t = A_t^{-1} B_t and

        A_t = b I + sum_{s in Z} a_s x_s x_s',   B_t = sum_{s in Z} a_s x_s y_s',
        a_t = 1 / (1 - x_t' A_{t-1}^{-1} x_t),   sigma_t = 1/2 a_t^2 x_t' A_t^{-1} x_t.

    Prediction: f_t = B_{t-1}' A_{t-1}^{-1} x_t, y_hat = argmax_i f_{t,i}.

    Update rule (``margin``): with Delta_t = f_t . y_t,
    'fixed' updates when Delta_t <= 0 (Lemma 1: the prediction errs, or ties); 'adaptive' also
    when 0 < Delta_t <= sigma_t (Theorem 1: correct but not confident).

    Where
        x_t is the row (plus the constant feature 1 when ``fit_intercept``), K the number of
        classes, r_t = argmax_{k != y_t} f_{t,k} the highest-scoring wrong class, b = ``b``,
        and the label vector y_t (||y_t|| = 1) is, by ``label_encoding``,
        'difference': y_t = (e_{y_t} - e_{r_t}) / sqrt 2  (then Delta_t = f_t . y_t), or
        'one-hot':    y_t = e_{y_t}.
        In both, Delta_t = (f_{t,y_t} - f_{t,r_t}) / sqrt 2 (the multiclass margin): the rounds
        that update are chosen by the same rule, only the regression target differs.

    Our reading of the note (it is terse and not fully consistent):

    * Prediction.  The proof uses f_t = a_t B_{t-1}' A_t^{-1} x_t (Forster's last-step
      forecaster) and Lemma 1 predicts with B_{T-1}' A_{T-1}^{-1} x_T.  They are the same
      vector: with m = x' A_{t-1}^{-1} x, A_t^{-1} x = A_{t-1}^{-1} x / (1 + a_t m) and
      1 + a_t m = a_t.  The same identity makes the Sherman-Morrison step A_t^{-1} =
      A_{t-1}^{-1} - v v' with v = A_{t-1}^{-1} x, and sigma_t = (a_t - 1) / 2.
    * Label encoding.  The proofs need, on every update round, -f_t . y_t >= 0 exactly when the
      round is a mistake (Lemma 1) or 0 < f_t . y_t <= sigma_t on a correct round
      (Theorem 1), and ||y_t|| = 1.  With a one-hot y_t, f_t . y_t is the true class's score,
      which can be positive on a mistake, so the bound would not count mistakes.  The
      difference of one-hot vectors y_t = (e_y - e_r) / sqrt 2 gives Delta_t = (f_y - f_r) /
      sqrt 2, which is <= 0 exactly on mistakes (and ties), and the proofs go through
      unchanged (they hold for any unit label vectors, including ones chosen after seeing
      f_t).  The hinge term of the bounds is then max(0, 1 - (u_y - u_r) . x / sqrt 2).
      ``label_encoding='one-hot'`` regresses on e_{y_t} instead (the plainest reading of the
      note's unit label vectors, which never mention a rival class) with the same update
      rounds; it made fewer mistakes on the graphs of docs/graph.md, but the note's bounds are
      not claimed for it (f_t . e_{y_t} can be > 0 on a mistake).
    * Constants.  The bounds' log-det step sum sigma_t <= b / (2 (b - 1)) log|A / b| assumes
      ||x_t|| <= 1; for ||x_t||^2 <= R^2 < b it reads b / (2 (b - R^2)) log|A / b|
      (``onlinelearn.second_order.bounds``).  With the diagonal covariance the bounds are not
      claimed.

    Numerics: a_t needs x' A^{-1} x < 1; since A >= b I, b > max ||x||^2 suffices and is
    checked on every batch (a ValueError, the model unchanged).  A^{-1} is kept by
    Sherman-Morrison updates, O(R^2) per update, and recomputed from A (kept too; Cholesky,
    about R^3 flops) every max(512, 4R) updates, which bounds the drift (the tests compare
    with a direct inverse to 1e-9 over long streams).  W = A^{-1} B is kept as well
    (W <- W + v (y_t - f_t)'), so a prediction costs O(nnz K).  ``covariance='diagonal'``
    keeps diag(A) only: O(nnz K) per round, for high-dimensional sparse input.

    Selective sampling (``query='margin'``): the label is asked with probability
    c / (c + |Delta_t|) (seeded by ``random_state``); a round whose label was not asked does
    not update; mistakes are counted on every round.  Averaging is not offered (the ridge
    solution is already a smoothed hypothesis) and :func:`onlinelearn.merge_models` refuses
    this class (merging the sums A and B of shards that each chose their own update rounds
    and weights a_t would not be a run of the algorithm).

    Parameters
    ----------
    margin : {'fixed', 'adaptive'}, default='fixed'
        Update on mistakes only, or also on correct rounds with Delta_t <= sigma_t.
    b : float or 'auto', default='auto'
        Regularisation b of A_0 = b I; must exceed max ||x||^2 (constant feature included).
        'auto': twice the largest ||x||^2 of the first batch (1 if that is 0), kept in ``b_``.
    covariance : {'full', 'diagonal'}, default='full'
    query : None or 'margin', default=None
        Selective sampling (above).
    c : float, default=1.0
        Query parameter: larger c asks for more labels.
    fit_intercept : bool, default=True
        Append the constant feature 1.
    n_epochs, shuffle, random_state
        Passes of :meth:`fit`, their shuffling, and the seed of shuffling and of the queries.
    label_encoding : {'difference', 'one-hot'}, default='difference'
        The regression target of an update round: (e_y - e_r) / sqrt 2 or e_y (above).

    Attributes
    ----------
    classes_, n_features_in_, coef_ (n_classes, n_features), intercept_, b_, t_, n_updates_,
    n_mistakes_, n_queries_, n_margin_updates_ (updates on correct rounds).

    Examples
    --------
    >>> from sklearn.preprocessing import normalize
    >>> from onlinelearn import WeightedMinMax
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> X = normalize(X)                                          # unit-norm rows
    >>> fixed = WeightedMinMax(margin="fixed")
    >>> adaptive = WeightedMinMax(margin="adaptive")
    >>> [int((m.partial_fit_predict(X, y) != y).sum()) for m in (fixed, adaptive)]
    [276, 204]
    >>> one_hot = [WeightedMinMax(margin=m, label_encoding="one-hot")
    ...            for m in ("fixed", "adaptive")]
    >>> [int((m.partial_fit_predict(X, y) != y).sum()) for m in one_hot]
    [246, 175]
    """

    _extra_state = ("b_", "_rng", "_trace")

    # ------------------------------------------------------------------ state
    def _new_state(self, R, n_cols):
        b = float(self.b_)
        if self.covariance == "full":
            arrays = {"P": np.eye(R) / b, "A": np.eye(R) * b}
        else:
            arrays = {"P": np.full(R, 1.0 / b), "A": np.full(R, b)}
        arrays["B"] = np.zeros((R, n_cols))
        arrays["W"] = np.zeros((R, n_cols))
        return SecondOrderState(arrays, ("B", "W"))

    def _before_pass(self, batch, first):
        r2 = max_row_sqnorm(batch, self._bias)
        if first:
            self.b_ = (2.0 * r2 if r2 > 0 else 1.0) if self.b == "auto" else float(self.b)
            seed = self.random_state
            if isinstance(seed, np.random.RandomState):
                seed = int(seed.randint(2**31))
            self._rng = np.random.default_rng(seed)
        elif self.covariance != ("full" if self._state.arrays["P"].ndim == 2 else "diagonal"):
            raise ValueError(
                "covariance changed since the model was fitted; call fit to start afresh"
            )
        if not r2 < self.b_:
            raise ValueError(
                f"a row has ||x||^2 = {r2:.6g} (constant feature included) >= b = "
                f"{self.b_:.6g}: the weight a_t = 1 / (1 - x' A^{{-1}} x) needs b > max "
                "||x||^2. Scale the rows (e.g. to unit norm) or choose a larger b."
            )

    # ------------------------------------------------------------------ the pass
    def _pass(self, batch, y_codes, pred):
        S = self._state
        arr = S.arrays
        n = batch.n_rows
        u = self._rng.random(n) if self.query == "margin" else np.zeros(n)
        jj, xx = self._row_buffers(batch)
        K = arr["W"].shape[1]
        upd = np.zeros(n, dtype=np.int64)
        a_out = np.zeros(n)
        rival = np.zeros(n, dtype=np.int64)
        delta = np.zeros(n)
        adaptive = self.margin == "adaptive"
        query = self.query == "margin"
        common = (batch.data, batch.indices, batch.indptr, y_codes, u, self._bias)
        d = self.n_features_in_
        onehot = self.label_encoding == "one-hot"  # label vector e_y, else (e_y - e_r)/sqrt 2
        if self.covariance == "full":
            R = arr["P"].shape[0]
            status = SO.minmax_pass_full(
                *common, d, arr["P"], arr["A"], arr["B"], arr["W"], adaptive, query,
                float(self.c), max(REFRESH_EVERY, 4 * R), S.st, pred, upd, a_out, rival, delta,
                jj, xx, np.empty(R), np.empty(K), onehot,
            )  # fmt: skip
        else:
            status = SO.minmax_pass_diag(
                *common, d, arr["P"], arr["A"], arr["B"], arr["W"], adaptive, query,
                float(self.c), S.st, pred, upd, a_out, rival, delta, jj, xx, np.empty(K), onehot,
            )  # fmt: skip
        if status == SO.NOT_PD:
            raise FloatingPointError(
                "x' A^{-1} x reached 1 (a_t undefined); the model was left as it was. "
                "Choose a larger b."
            )
        self._trace = {"update": upd, "a": a_out, "rival": rival, "delta": delta}

    def _weights(self):
        return self._state.arrays["W"]

    # ------------------------------------------------------------------ extras
    def partial_fit_trace(self, X, y, classes=None):
        """:meth:`partial_fit_predict` that also returns what the bounds need, per row.

        Returns a dict: ``pred`` (labels predicted before the update), ``update`` (0 none,
        1 Delta <= 0, 2 0 < Delta <= sigma), ``a`` (a_t), ``rival`` (index into ``classes_``
        of r_t, -1 with one class), ``delta`` (Delta_t), ``mistakes`` (their number).
        See :mod:`onlinelearn.second_order.bounds`."""
        pred = self._learn(X, y, classes, None, fit_mode=False)
        out = dict(self._trace) if len(self.classes_) >= 2 else _no_trace(len(pred))
        out["pred"] = pred
        out["mistakes"] = int((pred != np.asarray(y).ravel()).sum())
        return out

    n_queries_ = counter(
        SO.N_QUERIES, "Rounds whose label was asked for (every round when ``query`` is None)."
    )
    n_margin_updates_ = counter(
        SO.N_MARGIN_UPDATES,
        "Updates on correct but low-confidence rounds (0 < Delta_t <= sigma_t).",
    )

    @property
    def A_inv_(self):
        """A^{-1} (full) or its diagonal (diagonal covariance): a copy."""
        check_is_fitted(self, "classes_")
        return self._state.arrays["P"].copy()

    def _extra_meta(self):
        return {"b_": float(self.b_), "rng": self._rng.bit_generator.state}

    def _set_extra_meta(self, meta):
        self.b_ = float(meta["b_"])
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = meta["rng"]
        self._trace = _no_trace(0)


def _no_trace(n):
    return {
        "update": np.zeros(n, dtype=np.int64),
        "a": np.ones(n),
        "rival": np.full(n, -1, dtype=np.int64),
        "delta": np.zeros(n),
    }
