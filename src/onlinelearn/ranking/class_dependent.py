"""ClassDependentPA: multiclass with class-dependent features phi(x, r), max-of-hinge step."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core import ranking as RK
from ..shell import validation as V
from ..shell.meta import (
    ScoresClassifier,
    check_shape,
    counter,
    estimator_from_meta,
    float_arrays,
    state_meta,
    with_methods,
)
from ..shell.online import Call, OnlineMixin
from ..shell.params import AT_LEAST_ONE, POSITIVE, Param, parameters
from ..shell.snapshot import copy_array, restore_attrs, save_attrs
from ._counters import RANKING, RoundCounters

__all__ = ["ClassDependentPA", "one_vs_rest_features"]

#: what a call may change (copied by its snapshot)
_STATE = ("classes_", "coef_", "_st", "n_features_in_")


def one_vs_rest_features(X, r, n_classes):
    """The default joint feature map phi(x, r) = e_r (x) x: x in the r-th block of K blocks.

    With it, <w, phi(x, r)> = <w_r, x> and the learner is a multiclass passive-aggressive
    learner whose step uses every rival at once (not only the highest-scoring one)."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    n, d = X.shape
    out = np.zeros((n, n_classes * d))
    out[:, r * d : (r + 1) * d] = X
    return out


@parameters(
    "C margin feature_map n_epochs shuffle random_state step_tol step_max_iter", RANKING,
    feature_map=Param(None, callable, None), step_tol=Param(1e-10, POSITIVE),
    step_max_iter=Param(10000, AT_LEAST_ONE),
)  # fmt: skip
@with_methods(OnlineMixin, RoundCounters)
class ClassDependentPA(ScoresClassifier):
    """Passive-aggressive multiclass learning with class-dependent features (thesis Sec. 7.4).

    Problem solved by a round (thesis eq. (7.35) with f = 1/2 ||w||^2)::

        w_{t+1} = argmin_w  1/2 ||w - w_t||^2 + C max_{r != y_t} [gamma - <w, a_r>]_+
        a_r = phi(x_t, y_t) - phi(x_t, r)

    solved through its dual (7.34): max_alpha sum_r alpha_r (gamma - <w_t, a_r>)
    - 1/2 ||sum_r alpha_r a_r||^2 over {alpha >= 0, sum alpha <= C}, then
    w_{t+1} = w_t + sum_r alpha_r a_r.  The dual is solved by accelerated projected gradient with
    the projection of Sec. 7.1, to a duality gap <= ``step_tol`` (1 + |D|) (the thesis's alternative
    to its Fig. 7.5 iteration); for K - 1 = 1 rival it is PA-I.

    Where
        phi(x, r)    the joint feature vector of instance x and class r (``feature_map``)
        w            the single weight vector over joint features; prediction argmax_r
                     <w, phi(x, r)> (first maximum)
        gamma        the margin (``margin``); C the cap of the dual step (``C`` x sample weight)

    Labels that arrive later (``partial_fit``, ``learn_one``; River's protocol) join
    ``classes_`` with a zero block of w (default map): the rivals of a round are the labels
    known at that round (the first call's labels and ``classes``, and every label met since,
    the round's own included), so a round before a label's arrival solved the problem above
    over the labels known then.  This is not the run with the label declared by ``classes=``
    from the start, whose earlier rounds also had the declared label as a rival (score 0).
    A custom ``feature_map`` refuses new labels (it numbers the classes of a fixed set).

    Parameters
    ----------
    C : float > 0, default=1.0
    margin : float > 0, default=1.0
    feature_map : callable or None, default=None
        ``feature_map(X, r, n_classes) -> array (n, D)``: phi(x, r) for every row of X and the
        class with index r (position in ``classes_``).  None: :func:`one_vs_rest_features`
        (D = K d, dense: meant for small problems and as the check of the construction).
    n_epochs : int >= 1, default=5
    shuffle : bool, default=True
    random_state : int, RandomState or None, default=None
    step_tol : float > 0, default=1e-10
        Relative duality gap at which the step's solver stops.
    step_max_iter : int >= 1, default=10000
        Iteration cap of the step's solver (``solver_iterations_max_`` reports the most used).

    Attributes
    ----------
    classes_, coef_ (D,) the weight vector over joint features, n_features_in_,
    n_updates_, n_mistakes_, t_, solver_iterations_max_

    Examples
    --------
    >>> from onlinelearn import ClassDependentPA
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> clf = ClassDependentPA(C=0.1, n_epochs=1, random_state=0).fit(X[:1000], y[:1000])
    >>> X_test, y_test = load_dna("test")
    >>> print(f"test accuracy {clf.score(X_test, y_test):.3f}")
    test accuracy 0.911
    """

    def _phi(self, X):
        """(n, K, D) joint features of the validated X."""
        fmap = self.feature_map or one_vs_rest_features
        K = len(self.classes_)
        blocks = [np.asarray(fmap(X, r, K), dtype=np.float64) for r in range(K)]
        shapes = {b.shape for b in blocks}
        if len(shapes) != 1 or blocks[0].ndim != 2 or blocks[0].shape[0] != X.shape[0]:
            raise ValueError(
                f"feature_map must return arrays of one shape (n_samples, D) for every class; "
                f"got {sorted(shapes)}."
            )
        Phi = np.ascontiguousarray(np.stack(blocks, axis=1))
        if not np.isfinite(Phi).all():
            raise ValueError("feature_map returned NaN or infinity.")
        if hasattr(self, "coef_") and Phi.shape[2] != self.coef_.shape[0]:
            raise ValueError(
                f"feature_map gives D = {Phi.shape[2]} joint features; the model has "
                f"{self.coef_.shape[0]}."
            )
        return Phi

    def _snapshot(self):
        return save_attrs(self, _STATE, copy_array)

    def _restore(self, snap):
        restore_attrs(self, _STATE, snap)

    def _begin(self, X, y, classes, sample_weight, *, first, fit_mode, snap):
        """The set-up of a call (:mod:`onlinelearn.shell.online`): the first call's labels
        (and ``classes``) start the label set; later labels join it (:meth:`_grow`)."""
        self._validate_params()
        X, y, sw = V.check_batch(self, X, y, sample_weight, reset=first)
        if classes is not None:
            classes = V.check_classes(classes, y)
        if first:
            for k in ("classes_", "coef_", "_st"):
                self.__dict__.pop(k, None)
            self.classes_ = V.grown_labels(None, y, classes)
        else:
            self._grow(V.grown_labels(self.classes_, y, classes))
        codes = np.searchsorted(self.classes_, y)
        Phi = self._phi(X)
        n, K, D = Phi.shape
        if first:
            self.coef_ = np.zeros(D)
            self._st = np.zeros(RK.N_ST)
        return Call(n=n, Phi=Phi, codes=codes.astype(np.int64), sw=sw)

    def _grow(self, new_classes):
        """Labels never seen join ``classes_`` (kept sorted): with the default map, coef_'s
        block of each known class moves to the class's new position and a new class's block
        is 0, so every known score <w, phi(x, r)> is unchanged and a new class scores 0.

        The rounds learned so far stay what they were (their rivals were the labels known
        then); from here on a round's rivals are all labels known at that round.  A custom
        ``feature_map`` numbers the classes by their position among a fixed set, which a new
        label would shift: it refuses new labels."""
        old = self.classes_
        if len(new_classes) == len(old):
            return
        if self.feature_map is not None:
            bad = np.setdiff1d(new_classes, old)[:5].tolist()
            raise ValueError(
                f"labels {bad} are not among the model's labels {old[:10].tolist()}: a custom "
                "feature_map numbers the classes by their position in a fixed label set, so "
                "declare every label with classes= on the first call (the default map grows)."
            )
        d = self.n_features_in_
        pos = np.searchsorted(new_classes, old)
        coef = np.zeros((len(new_classes), d))
        coef[pos] = self.coef_.reshape(len(old), d)
        self.coef_ = coef.reshape(-1)
        self.classes_ = new_classes

    def _epoch(self, call, order):
        """One compiled pass over ``order`` (None: the rows in their order)."""
        Phi = call.Phi
        n, K, D = Phi.shape
        k = max(K - 1, 1)
        if order is None:
            order = np.arange(n, dtype=np.int64)
        RK.max_hinge_pass(
            Phi, call.codes, call.sw, order, self.coef_, self._st, float(self.C),
            float(self.margin), float(self.step_tol), int(self.step_max_iter),
            np.zeros(n, dtype=np.int64), np.zeros((k, k)), np.zeros(max(K, 1)), np.zeros(k),
            np.zeros((4, k)), np.zeros((k, D)),
        )  # fmt: skip

    def _finish(self, call):
        if not np.isfinite(self.coef_).all():
            raise FloatingPointError(
                "ClassDependentPA: a weight became infinite or NaN; the model was left as "
                "it was. Scale the joint features or lower C."
            )

    def decision_function(self, X):
        """Scores <w, phi(x, r)>, shape (n, K); (n,) = s_1 - s_0 for two classes."""
        check_is_fitted(self, "classes_")
        X = V.check_X(self, X, reset=False)
        S = np.einsum("nkd,d->nk", self._phi(X), self.coef_)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    solver_iterations_max_ = counter(RK.SOLVER_ITER_MAX)

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        check_is_fitted(self, "classes_")
        if self.feature_map is not None:
            raise ValueError(
                "a ClassDependentPA with a custom feature_map cannot be saved (a callable is not "
                "data); save coef_ and classes_ yourself and rebuild with the same map."
            )
        arrays = {"classes_": np.asarray(self.classes_), "coef": self.coef_, "st": self._st}
        return state_meta(self), arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta, arrays)
        est.coef_, est._st = float_arrays(arrays, "coef", "st")
        check_shape("st", est._st, (RK.N_ST,))
        if est.coef_.shape != (len(est.classes_) * est.n_features_in_,):
            raise ValueError("model state is inconsistent: coef_ has the wrong shape")
        return est
