"""The label-ranking family: the estimator of a configuration link x ``RankingHinge`` x step.

Label ranking keeps K weight vectors and runs its own compiled pass
(:func:`onlinelearn._core.ranking.rank_pass`: the pair hinge loss (8.1), two complexities,
three dual ascent steps; thesis ch. 8).  :class:`LabelRankingFamily` is everything an
estimator of that pass does: the state, the transaction around every call, the pass, the
read-out, ``predict``, the dual objective, the tags and the model files.  It reads the learner
only through

* ``_configuration()`` -> ``(link, loss, step)``, objects of :mod:`onlinelearn.framework`,
  which give every code and number the pass reads (:func:`ranking_pass_codes`);
* ``_check_params()``: the parameter checks, run first in every call (they should include
  :func:`check_ranking_configuration`, the rules a configuration must satisfy);
* ``_projection()`` -> ``(code, value)``: a projection after every update (the codes of
  :mod:`onlinelearn._core.ranking`: ``NO_CONSTRAINT``, ``L1_BALL`` with its radius, ``FLOOR``
  with its floor); by default none;
* the shell's common parameters ``fit_intercept``, ``intercept_scaling``, ``n_epochs``,
  ``shuffle`` and ``random_state``.

:class:`onlinelearn.LabelRanker` is its preset: its parameters and a ``_configuration()``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import NamedTuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from .._core import ranking as RK
from ..framework.links import Entropy, Euclidean
from ..framework.losses import RankingHinge
from ..framework.steps import Aggressive, Conservative, RoundOptimal
from ..shell import validation as V
from ..shell.meta import (
    check_shape,
    counter,
    estimator_from_meta,
    float_arrays,
    state_meta,
    with_methods,
    with_tags,
)
from ..shell.online import Call, OnlineMixin
from ..shell.proba import ProbabilityMixin
from ..shell.readout import WeightsReadoutMixin
from ..shell.snapshot import copy_array, restore_attrs, save_attrs
from . import _targets as T
from ._counters import RoundCounters

__all__ = [
    "LabelRankingFamily",
    "RankingCodes",
    "check_ranking_configuration",
    "check_ranking_projection",
    "ranking_pass_codes",
]

#: what a call may change; a snapshot keeps theta by reference and copies the last two
_STATE = ("classes_", "_kind", "n_features_in_", "_n_relevant", "_since_exact", "_theta", "_lZ",
          "_st")  # fmt: skip
#: updates after which the entropy normalisers are recomputed exactly (the running sum drifts)
_EXACT_EVERY = 2000
#: the steps of the pass: updates I, II, III (thesis Sec. 8.3.2)
_STEPS = ((Conservative, RK.UPD_I), (Aggressive, RK.UPD_II), (RoundOptimal, RK.UPD_III))
_ACCEPTED = (
    "label ranking runs link Euclidean() or Entropy(eta=1.0, balanced=False), loss "
    "RankingHinge(margin) and step Conservative(eta) (update I), Aggressive(C, variant='PA-I') "
    "(update II) or RoundOptimal(C) (update III)"
)


class RankingCodes(NamedTuple):
    """What the ranking pass reads of a configuration: the complexity and update codes of
    :mod:`onlinelearn._core.ranking`, the cap C of the step and the margin gamma."""

    complexity: int
    update: int
    C: float
    margin: float


def check_ranking_configuration(link, loss, step) -> None:
    """Raise ``ValueError`` unless the ranking pass runs ``(link, loss, step)`` as given.

    * link: ``Euclidean()`` (w_r = theta_r), or ``Entropy(eta=1.0, balanced=False,
      self_tuned=False)``: w_r = softmax(theta_r), one softmax per label, weights on the
      simplex (thesis (8.3)); the pass has no learning rate on the link (scale the step's C),
      no weights of both signs (balanced) and no self-tuned c_t;
    * loss: ``RankingHinge(margin)``, margin a number > 0 (the pass updates only where the loss
      is positive);
    * step: ``Conservative(eta)`` (update I: tau = eta on the most violating pair, on
      mistakes), ``Aggressive(C, 'PA-I')`` (update II: the best step on that pair, capped at C)
      or ``RoundOptimal(C)`` (update III: the exact maximiser of the round's dual)."""
    if isinstance(link, Entropy):
        if link.self_tuned:
            raise ValueError(
                "Entropy(self_tuned=True) has no label-ranking pass (its c_t is the binary "
                f"learners'): use Entropy(eta=1.0, balanced=False); {_ACCEPTED}"
            )
        if link.balanced:
            raise ValueError(
                "Entropy(balanced=True) keeps weights of both signs (on [x, -x]); label ranking's "
                "entropy link is one softmax per label, on the simplex: use "
                f"Entropy(eta=1.0, balanced=False); {_ACCEPTED}"
            )
        if link.eta != 1.0:
            raise ValueError(
                f"Entropy(eta={link.eta!r}): label ranking's entropy link has no learning rate "
                "(w_r = softmax(theta_r)): use Entropy(eta=1.0, balanced=False) and scale the "
                "step's C instead"
            )
    elif not isinstance(link, Euclidean):
        raise ValueError(f"link {link!r} has no label-ranking pass; {_ACCEPTED}")
    if not isinstance(loss, RankingHinge):
        raise ValueError(f"loss {loss!r} is not a ranking loss; {_ACCEPTED}")
    m = loss.margin
    if not (isinstance(m, numbers.Real) and not isinstance(m, bool) and m > 0):
        raise ValueError(f"RankingHinge(margin): the margin must be a number > 0, got {m!r}")
    if isinstance(step, Aggressive):
        if step.variant != "PA-I":
            raise ValueError(
                f"Aggressive(variant={step.variant!r}) has no label-ranking pass: update II "
                f"takes the best step on the worst pair capped at C ('PA-I'); {_ACCEPTED}"
            )
    elif not isinstance(step, (Conservative, RoundOptimal)):
        raise ValueError(f"step {step!r} has no label-ranking pass; {_ACCEPTED}")


def ranking_pass_codes(link, loss, step) -> RankingCodes:
    """The codes and numbers the ranking pass reads of a configuration (checked first by
    :func:`check_ranking_configuration`): C is the conservative step's eta or the cap C."""
    check_ranking_configuration(link, loss, step)
    complexity = RK.ENTROPY if isinstance(link, Entropy) else RK.EUCLID
    update = next(code for cls, code in _STEPS if isinstance(step, cls))
    C = step.eta if isinstance(step, Conservative) else step.C
    return RankingCodes(complexity, update, float(C), float(loss.margin))


def check_ranking_projection(link, code, value, n_weights) -> None:
    """Raise ``ValueError`` unless the projection ``(code, value)`` (``_projection()``) fits the
    link: the l1 ball projects Euclidean weights, the floored simplex entropic ones, with
    floor * n <= 1 for n weights per label."""
    if code == RK.NO_CONSTRAINT:
        return
    if code not in (RK.L1_BALL, RK.FLOOR):
        raise ValueError(f"unknown projection code {code!r} of label ranking")
    if not (isinstance(value, numbers.Real) and value > 0):
        raise ValueError(f"the projection's radius or floor must be > 0, got {value!r}")
    if code == RK.L1_BALL and not isinstance(link, Euclidean):
        raise ValueError(
            "constraint='l1' projects Euclidean weights: use complexity='euclidean' (the link "
            f"Euclidean()), not {link!r}"
        )
    if code == RK.FLOOR:
        if not isinstance(link, Entropy):
            raise ValueError(
                "constraint='floor' projects weights on the simplex: use complexity='entropy' "
                f"(the link Entropy(eta=1.0, balanced=False)), not {link!r}"
            )
        if value * n_weights > 1:
            raise ValueError(
                f"floor = {value} is too large for {n_weights} weights per label: "
                f"floor * n must be <= 1 (floor <= {1.0 / n_weights:.3g})."
            )


def _plain(a, dtype):
    """``a`` as a writable C-contiguous array of ``dtype`` (a copy only when it is not one)."""
    if a.dtype == dtype and a.flags.writeable and a.flags.c_contiguous:
        return a
    return np.array(a, dtype=dtype, order="C")


@with_methods(OnlineMixin, RoundCounters, WeightsReadoutMixin)
class LabelRankingFamily(ProbabilityMixin):
    """The label-ranking estimator of a configuration (module docstring).  Not for direct use:
    a subclass adds scikit-learn's classifier bases and implements ``_configuration()`` and
    ``_check_params()`` (and overrides ``_projection()`` for a projected update).

    The family's methods call one another through ``self`` and read only the hooks and the
    five common parameters of the module docstring, so that they run unchanged when the mixin
    is combined with another base class whose methods of the same names they take the place
    of.  State: ``classes_``, ``n_features_in_``, ``_kind``, ``_theta`` (R, K), ``_lZ`` (K,),
    ``_st`` (the counters of :mod:`onlinelearn._core.ranking`), ``_n_relevant``,
    ``_since_exact``."""

    # ------------------------------------------------------------------ the learner's hooks
    # ``_configuration()`` and ``_check_params()`` are the learner's own: the family defines
    # neither, so that it can be combined with a base class that has them (module docstring)
    def _projection(self):
        """``(code, value)`` of the projection after every update; none by default."""
        return RK.NO_CONSTRAINT, 0.0

    def _ranking_codes(self) -> RankingCodes:
        return ranking_pass_codes(*self._configuration())

    def _projected(self) -> bool:
        return self._projection()[0] != RK.NO_CONSTRAINT

    # ------------------------------------------------------------------ state
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
        the bias (every row when a projection changes whole weight vectors)."""
        if "_theta" not in snap:
            return
        if self._projected() or batch.indices.shape[0] != batch.data.shape[0]:
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
        codes = self._ranking_codes()
        constraint, zc = self._projection()
        nnz = np.diff(batch.indptr)
        m = int(nnz.max()) + 1 if nnz.size else 1
        # one compiled signature: float64 values, writable arrays (float32 or read-only inputs
        # are copied, O(nnz), rather than compiled again)
        data = _plain(batch.data, np.float64)
        status = RK.rank_pass(
            data, _plain(batch.indices, np.int32), _plain(batch.indptr, np.int64),
            _plain(Y, np.int8), _plain(weight, np.float64), order, self._theta, self._lZ,
            self._st, codes.complexity, codes.update, codes.C, codes.margin,
            self._intercept_value(), mistakes, losses,
            np.zeros(K), np.zeros(K), np.zeros(K), np.zeros(K), np.zeros((2, K)),
            np.zeros((K, m)), np.zeros(m), np.zeros((10, K + 1)), np.zeros(R, dtype=np.int8),
            int(constraint), float(zc), np.zeros(R), np.zeros(R), np.array([0, R], dtype=np.int64),
        )  # fmt: skip
        if codes.complexity == RK.ENTROPY:
            self._since_exact += len(order)
            if self._since_exact >= _EXACT_EVERY:
                RK.exact_normalizers(self._theta, self._lZ)
                self._since_exact = 0
        finite = status == RK.OK and np.isfinite(self._lZ).all() and np.isfinite(self._st).all()
        if finite and R:
            finite = np.isfinite(self._theta[batch.indices[: batch.data.shape[0]]]).all()
        if not finite:
            raise FloatingPointError(
                f"{type(self).__name__}: a weight became infinite or NaN during the pass; the "
                "model was left as it was before this call. Scale the features or lower C."
            )

    def _begin(self, X, Y, classes, sample_weight, *, first, fit_mode, snap):
        """The family's set-up of a call (:mod:`onlinelearn.shell.online`); Y: a
        label-indicator matrix (n, K), a sequence of label sets, or one label per row;
        ``classes`` fixes the labels and their order (as ``MultiLabelBinarizer(classes=...)``).
        The label set is fixed by the first call (``fit`` starts afresh); later batches with
        other labels are refused.  The progressive predictions are each row's mistake
        (thesis Sec. 8.2)."""
        self._check_params()
        if fit_mode:  # fit starts afresh; a refused fit puts the fitted labels back
            for k in ("classes_", "_kind"):
                self.__dict__.pop(k, None)
        X = V.check_X(self, X, reset=first)
        batch = V.CSRBatch(X)
        n = batch.n_rows
        Yb, new_classes, kind = T.encode(
            Y, n, None if first else self.classes_, classes, None if first else self._kind
        )
        sw = V.check_sample_weight(sample_weight, n)
        code, value = self._projection()
        n_weights = batch.n_cols + (1 if self.fit_intercept else 0)
        check_ranking_projection(self._configuration()[0], code, value, n_weights)
        if first:
            self._init_state(new_classes, kind, batch.n_cols)
        else:
            self._save_rows(snap, batch)
        return Call(n=n, batch=batch, Y=Yb, sw=sw, missed=-float(self._st[RK.N_INEXACT]),
                    mistakes=np.zeros(n, dtype=np.int8), losses=np.zeros(n))  # fmt: skip

    def _epoch(self, call, order):
        """One compiled pass (:meth:`_run`) over ``order`` (None: the rows in their order)."""
        if order is None:
            order = np.arange(call.n, dtype=np.int64)
        self._run(call.batch, call.Y, call.sw, order, call.mistakes, call.losses)

    def _finish(self, call):
        self._n_relevant += float(call.Y.sum()) * call.epochs
        call.missed += float(self._st[RK.N_INEXACT])
        return call.mistakes

    def _after(self, call, fit_mode):
        # (no super(): the family's methods also run on OnlineLearner, which routes to them)
        if call.missed > 0:
            warnings.warn(
                f"{type(self).__name__}: the step of {int(call.missed)} round(s) of this call "
                f"(update III, complexity 'entropy') is not certified within "
                f"{RK.STEP_RTOL:g} (relative) of the optimum of its round "
                "(n_inexact_steps_ counts them over all calls); scale the features or lower C.",
                ConvergenceWarning,
                stacklevel=4,
            )

    # ------------------------------------------------------------------ public API
    def partial_fit_mistakes(self, X, y, classes=None, sample_weight=None):
        """As :meth:`partial_fit`, returning for each row 1 if the ranking made before its update
        was a mistake (thesis Sec. 8.2), else 0: progressive validation in one call."""
        return self._learn(X, y, classes, sample_weight, fit_mode=False).astype(bool)

    def _weights_matrix(self):
        check_is_fitted(self, "classes_")
        if self._ranking_codes().complexity == RK.EUCLID:
            return self._theta
        return np.exp(self._theta - self._lZ[None, :])

    ip_iterations_max_ = counter(RK.SOLVER_ITER_MAX)
    n_inexact_steps_ = counter(
        RK.N_INEXACT,
        "Rounds of update III with 'entropy' whose step misses its certified tolerance (all "
        "epochs and calls; a call that adds to it warns).",
    )

    @property
    def label_cardinality_(self):
        check_is_fitted(self, "classes_")
        return self._n_relevant / max(self._st[RK.T_SEEN], 1.0)

    @property
    def dual_objective_(self):
        check_is_fitted(self, "classes_")
        if self._projected():
            return float("nan")
        gain = float(self._st[RK.GAIN])
        if self._ranking_codes().complexity == RK.EUCLID:
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
        tags = with_tags(self, super().__sklearn_tags__())
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
        check_shape("st", est._st, (RK.N_ST,))
        R = est.n_features_in_ + (1 if est.fit_intercept else 0)
        K = len(est.classes_)
        if est._theta.shape != (R, K) or est._lZ.shape != (K,):
            raise ValueError(
                f"model state is inconsistent: weights {est._theta.shape}, expected {(R, K)}"
            )
        if est._kind not in (T.MULTICLASS, T.INDICATOR, T.SETS):
            raise ValueError(f"model state is inconsistent: unknown target kind {est._kind!r}")
        return est
