"""DualAscentClassifier: the dual ascent axis of the primal-dual framework, made selectable."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core import dual_ascent as DA
from .._core import links as L
from ..shell import validation as V
from ..shell.meta import (
    ScoresClassifier,
    counter,
    estimator_from_meta,
    state_meta,
)
from ..shell.online import ProgressiveMixin
from ..shell.params import AT_LEAST_ONE, POSITIVE, SHARED, Param, parameters, validate_once
from ..shell.readout import WeightsReadoutMixin
from ..shell.snapshot import restore_attrs, restoring, save_attrs

__all__ = ["DualAscentClassifier"]

_STEPS = {
    "last-k": DA.LASTK,
    "row-action": DA.ROWACTION,
    "ftrl": DA.FTRL,
    "self-tuned": DA.SELFTUNED,
    "strongly-convex": DA.STRONGLY,
}
_WINDOW = ("last-k", "row-action", "ftrl")
_VARIANTS = {"PA": DA.PA, "PA-I": DA.PA1, "PA-II": DA.PA2}
_LINKS = {"euclidean": L.EUCLID, "entropy": L.ENTROPY, "pnorm": L.PNORM}
_RULES = {"optimal": DA.OPTIMAL, "subgradient": DA.SUBGRADIENT}
#: what a call may change (the arrays in ``_state`` are copied by a snapshot)
_STATE = ("classes_", "n_features_in_", "feature_names_in_", "_state")


@parameters(
    "* step k variant C margin link p U sigma update tol max_sweeps n_epochs shuffle "
    "random_state fit_intercept intercept_scaling",
    SHARED, step=Param("last-k", StrOptions(set(_STEPS))), k=Param(1, AT_LEAST_ONE),
    link=Param("euclidean", StrOptions(set(_LINKS))), sigma=Param(1.0, POSITIVE),
    p=Param(None, Interval(numbers.Real, 1, None, closed="neither"), None),
    update=Param("optimal", StrOptions(set(_RULES))), tol=Param(1e-7, POSITIVE),
    max_sweeps=Param(200, AT_LEAST_ONE),
)  # fmt: skip
class DualAscentClassifier(ProgressiveMixin, WeightsReadoutMixin, ScoresClassifier):
    """Online hinge-loss classifier whose round raises the dual by a chosen dual ascent step.

    Problem (thesis eq. 5.11-5.12, 5.18): after round t the learner holds one dual variable per
    past round and its weights are a function of them; a round increases the dual objective
    of the regularised hinge-loss problem over a chosen set of dual variables, all others kept.

    Window steps (``step`` in 'last-k', 'row-action', 'ftrl'; Euclidean complexity, c = 1/C)::

        max_{tau}  D(tau) = gamma sum_{i<=t} tau_i - 1/2 ||sum_i tau_i u_i||^2
                            - sum_i tau_i^2 / (4 C s_i)          [PA-II only]
        s.t.  0 <= tau_i <= C s_i (PA-I; no cap for PA-II),  tau_i fixed for i not in I_t
        w_{t+1} = sum_i tau_i u_i

    'last-k': I_t = the last k rounds, solved exactly (k = 1: eq. 7.11, identical to
    :class:`onlinelearn.PassiveAggressiveClassifier`; k = 2: the closed form of the 2-variable
    box QP; k > 2: coordinate ascent to the tolerance ``tol`` on the projected gradient).
    'row-action': k single-variable steps, on t first, then t-1, ..., t-k+1 (Sec. 5.2.2);
    also on the entropy and p-norm links (PA-I box, alpha = tau c in [0, s_i], the dual
    D = gamma sum alpha - c f*(v / c) at the fixed c = 1/C, each step the 1-D optimum).
    'ftrl': I_t = [t], regularised follow-the-leader, by coordinate ascent warm-started from the
    previous round; it stores every example and costs O(t nnz) per sweep, O(T^2 nnz) in all.

    Growing-c steps (``step`` in 'self-tuned', 'strongly-convex'; any ``link``)::

        max_{alpha_t in [0, 1]}  D_t(alpha) = gamma sum_{i<=t} alpha_i - c_t f*(v / c_t),
        v = sum_i alpha_i u_i,    w_t = grad f*(v / c_t)

    'self-tuned': c_t = X_t sqrt((|M_{t-1}| + 1) / U) (Fig. 3.2 with eq. 5.15-5.17: no horizon
    T needed); 'strongly-convex': c_t = sigma t (Fig. 4.1 for sigma f(w) + hinge: logarithmic
    regret).  ``update='optimal'`` takes the maximising alpha_t (eq. 7.11, 7.16 or a bisection);
    ``'subgradient'`` takes alpha_t = 1 when the loss is positive (Fig. 4.1 as printed).

    Where
        u_i = y_i x_i (two classes, one weight vector) or x_i in column y_i and -x_i in column
        r_i, the rival of highest score at round i (K classes; r_i is fixed when the example
        arrives, so that g_i is the hinge loss of the pair (y_i, r_i), which at w_i is the
        max-loss of the multiclass PA); x includes the intercept feature (value
        ``intercept_scaling``); gamma = ``margin``; s_i = ``sample_weight``; M the rounds with
        a prediction mistake; X_t the largest dual norm of a row so far (l2 for 'euclidean',
        l_inf for 'entropy', l_p for 'pnorm'); f the complexity of ``link``: 1/2||w||^2,
        relative entropy on the doubled simplex (balanced weights), or 1/(2(q-1))||w||_q^2.

    The dual objective of the run, ``dual_objective_``, never decreases (the framework's
    invariant; with ``update='subgradient'`` only the bound of Lemma 2 holds).

    Parameters
    ----------
    step : {'last-k', 'row-action', 'ftrl', 'self-tuned', 'strongly-convex'}, default='last-k'
    k : int, default=1
        Dual variables per round of 'last-k' and 'row-action'; for the growing-c steps, k > 1
        adds a row-action sweep: after alpha_t, the optimal single-variable step on each of
        the k - 1 previous examples at the same c_t (Sec. 5.2.2, any link).
    variant : {'PA', 'PA-I', 'PA-II'}, default='PA-I'
        Window steps: the box (PA-I), the squared slack (PA-II), or no slack (PA, k = 1 only:
        the hard-margin window problem can be unbounded).
    C : float, default=1.0
        1/c of the window steps (cap on tau, or price of the squared slack).
    margin : float, default=1.0
        gamma, the margin of the hinge loss.
    link : {'euclidean', 'entropy', 'pnorm'}, default='euclidean'
        Growing-c steps only (the window steps are Euclidean).
    p : float or None, default=None
        p of the p-norm link (None: 2 ln(n_weights), at least 2).
    U : float, default=1.0
        'self-tuned': the bound on f(u) of the comparison vector in eq. (5.17).
    sigma : float, default=1.0
        'strongly-convex': the strong-convexity parameter (c_t = sigma t).
    update : {'optimal', 'subgradient'}, default='optimal'
        Growing-c steps: the maximising alpha_t, or Fig. 4.1's subgradient step.
    tol, max_sweeps : float, int
        Stopping rule of the coordinate ascent of 'last-k' (k > 2) and 'ftrl'.
    n_epochs, shuffle, random_state, fit_intercept, intercept_scaling
        As in :class:`onlinelearn.PassiveAggressiveClassifier`.

    Attributes
    ----------
    classes_, coef_, intercept_, n_features_in_, t_, n_updates_, n_mistakes_
    dual_objective_ : float
        D of the run after the last round.
    dual_coef_ : ndarray of shape (t_,)
        The dual variable of every round (tau_i, or alpha_i for the growing-c steps).
    n_unconverged_ : int
        Rounds whose coordinate ascent stopped at ``max_sweeps`` before ``tol``.

    Examples
    --------
    >>> from onlinelearn import DualAscentClassifier
    >>> from onlinelearn.datasets import load_dna
    >>> X, y = load_dna("train")
    >>> for k in (1, 2):  # online mistake rate and dual objective: k = 2 raises D more
    ...     clf = DualAscentClassifier(step="last-k", k=k, C=0.01)
    ...     online = clf.partial_fit_predict(X[:500], y[:500])
    ...     print(k, f"{(online != y[:500]).mean():.3f}", f"{clf.dual_objective_:.4f}")
    1 0.190 1.3161
    2 0.186 1.3297
    """

    # ------------------------------------------------------------------ parameters
    def _check_params(self):
        """Declarative constraints and the rules spanning two parameters; skipped while the
        parameters are the very objects last checked (a stream of small batches pays once)."""
        validate_once(self, self._validate_all_params)

    def _validate_all_params(self):
        self._validate_params()
        self._check_param_rules()

    def _check_param_rules(self):
        window = self.step in _WINDOW
        if window and self.link != "euclidean":
            if self.step == "ftrl" or (self.step == "last-k" and self.k > 1):
                raise ValueError(
                    f"step={self.step!r} with k > 1 is implemented for link='euclidean' only; "
                    "use step='row-action' (any k) with the entropy or p-norm link."
                )
            if self.variant != "PA-I":
                raise ValueError(
                    f"link={self.link!r} takes the box constraint of variant='PA-I' only."
                )
        self._check_growing_c()
        if window and self.variant == "PA" and not (self.step != "ftrl" and self.k == 1):
            raise ValueError(
                "variant='PA' (no slack) needs a single dual variable per round (k=1): with "
                "several, the hard-margin problem is unbounded as soon as two of them conflict. "
                "Use variant='PA-I' or 'PA-II'."
            )

    def _check_growing_c(self):
        if self.step not in _WINDOW and self.update == "subgradient" and self.k > 1:
            raise ValueError(
                "update='subgradient' takes one fixed step per round (Fig. 4.1); the row-action "
                "window (k > 1) of the growing-c steps needs update='optimal'."
            )

    def _window(self):
        """True for the SVM-form window kernel (Euclidean steps at a fixed c)."""
        return self.step in _WINDOW and self.link == "euclidean"

    def _tuned_step_code(self):
        return DA.FIXEDC if self.step in _WINDOW else _STEPS[self.step]

    def _p_value(self):
        if self.p is not None:
            return float(self.p)
        return max(2.0, 2.0 * np.log(max(self._state["V"].size, 2)))

    # ------------------------------------------------------------------ state
    def _init_state(self, classes, n_features):
        self.classes_ = classes
        R = n_features + (1 if self.fit_intercept else 0)
        K = 1 if len(classes) <= 2 else len(classes)
        self._state = {
            "theta" if self._window() else "V": np.zeros((R, K)),
            "Sd": np.zeros(0),
            "Sx": np.zeros(0, dtype=np.int64),
            "Sp": np.zeros(1, dtype=np.int64),
            "Sf": np.zeros((0, DA.N_SF)),
            "Si": np.zeros((0, DA.N_SI), dtype=np.int64),
            "dual": np.zeros(0),
            "st": np.zeros(DA.N_ST),
        }

    def _reserve(self, batch, n_rounds):
        """Grow the store and the dual history so that ``n_rounds`` rows of ``batch`` fit."""
        S = self._state
        st = S["st"]
        T_ = int(st[DA.T])
        if S["dual"].shape[0] < T_ + n_rounds:
            new = np.zeros(max(2 * S["dual"].shape[0], T_ + n_rounds))
            new[:T_] = S["dual"][:T_]
            S["dual"] = new
        if not self._window() and self.k == 1:
            return
        row_nnz = np.diff(batch.indptr)
        max_row = int(row_nnz.max()) if row_nnz.size else 0
        nst = int(st[DA.N_STORED])
        used = int(st[DA.STORE_NNZ])
        if self.step == "ftrl":
            rows = nst + n_rounds
            nnz = used + int(row_nnz.sum()) * max(1, n_rounds // max(batch.n_rows, 1))
        else:
            rows = self.k
            old_max = int(np.diff(S["Sp"][: nst + 1]).max()) if nst else 0
            nnz = self.k * max(max_row, old_max)
        if S["Sf"].shape[0] < rows:
            for name, width in (("Sf", DA.N_SF), ("Si", DA.N_SI)):
                arr = np.zeros((rows, width), dtype=S[name].dtype)
                arr[:nst] = S[name][:nst]
                S[name] = arr
            Sp = np.zeros(rows + 1, dtype=np.int64)
            Sp[: nst + 1] = S["Sp"][: nst + 1]
            S["Sp"] = Sp
        if S["Sd"].shape[0] < nnz:
            for name in ("Sd", "Sx"):
                arr = np.zeros(max(nnz, 2 * S[name].shape[0]), dtype=S[name].dtype)
                arr[:used] = S[name][:used]
                S[name] = arr

    def _snapshot(self):
        snap = save_attrs(self, _STATE[:-1])
        snap.update(save_attrs(self, ("_state",), lambda S: {k: v.copy() for k, v in S.items()}))
        return snap

    def _restore(self, snap):
        restore_attrs(self, _STATE, snap)

    # ------------------------------------------------------------------ learning
    def _run(self, batch, y_codes, sw, order, pred):
        S = self._state
        K = len(self.classes_)
        if K < 2:
            S["st"][DA.T] += len(order)
            pred[order] = 0
            return True
        scores = np.zeros(S["theta" if self._window() else "V"].shape[1])
        if self._window():
            return DA.window_pass(
                batch.data, batch.indices, batch.indptr, y_codes, sw, order, S["theta"],
                S["Sd"], S["Sx"], S["Sp"], S["Sf"], S["Si"], S["dual"], S["st"],
                _STEPS[self.step], int(self.k), _VARIANTS[self.variant], float(self.C),
                float(self.margin), self._intercept_value(), float(self.tol),
                int(self.max_sweeps), pred, scores,
            )  # fmt: skip
        nst = int(S["st"][DA.N_STORED])
        nn = int(np.diff(batch.indptr).max()) if batch.n_rows else 0
        if nst:
            nn = max(nn, int(np.diff(S["Sp"][: nst + 1]).max()))
        n_buf = 2 * (nn + 1)
        return DA.tuned_pass(
            batch.data, batch.indices, batch.indptr, y_codes, sw, order, S["V"], S["st"],
            S["dual"], S["Sd"], S["Sx"], S["Sp"], S["Sf"], S["Si"], int(self.k),
            self._tuned_step_code(),
            DA.OPTIMAL if self.step in _WINDOW else _RULES[self.update],
            _LINKS[self.link], float(self.margin),
            1.0 / float(self.C) if self.step in _WINDOW else float(self.U), float(self.sigma),
            self._p_value(), self._intercept_value(), pred, scores,
            np.zeros(n_buf, dtype=np.int64), np.zeros(n_buf, dtype=np.int64), np.zeros(n_buf),
        )  # fmt: skip

    def _learn(self, X, y, classes, sample_weight, *, fit_mode):
        """The family's call of :class:`~onlinelearn.shell.online.OnlineMixin` (each row of
        each pass is a round; the label set is fixed by the first call, its labels or
        ``classes``): the label predicted for each row before its round."""
        first = fit_mode or not hasattr(self, "_state")
        snap = self._snapshot()
        with restoring(self, snap):
            self._check_params()
            X, y, sw = V.check_batch(self, X, y, sample_weight, reset=first)
            batch = V.CSRBatch(X)
            if first:
                self._init_state(V.grown_labels(None, y, classes), batch.n_cols)
            else:
                if classes is not None and not np.array_equal(
                    np.unique(np.asarray(classes)), self.classes_
                ):
                    raise ValueError(
                        f"classes={list(classes)!r} differs from the classes of the first call "
                        f"{self.classes_.tolist()!r}."
                    )
                unseen = np.setdiff1d(np.unique(y), self.classes_)
                if unseen.size:
                    raise ValueError(
                        f"labels {unseen.tolist()!r} were not among the classes of the first "
                        f"call {self.classes_.tolist()!r}: the stored dual variables are tied "
                        "to a fixed label set; pass every label in classes= on the first call."
                    )
            y_codes = np.searchsorted(self.classes_, y).astype(np.int64)
            n = batch.n_rows
            pred = np.zeros(n, dtype=np.int64)
            epochs = self.n_epochs if fit_mode else 1
            self._reserve(batch, n * epochs)
            rng = check_random_state(self.random_state)
            for _ in range(epochs):
                if fit_mode and self.shuffle:
                    order = rng.permutation(n).astype(np.int64)
                else:
                    order = np.arange(n, dtype=np.int64)
                if not self._run(batch, y_codes, sw, order, pred):
                    raise FloatingPointError(
                        f"{type(self).__name__}: a weight became infinite or NaN; the model was "
                        "left as it was before this call. Scale the features or lower C."
                    )
        return self.classes_[pred]

    # ------------------------------------------------------------------ read-out
    def _c_next(self):
        st = self._state["st"]
        if self.step in _WINDOW:
            return 1.0 / float(self.C)
        if self.step == "strongly-convex":
            return float(self.sigma) * (st[DA.T] + 1.0)
        return float(st[DA.X_T] * np.sqrt((st[DA.N_MISTAKES] + 1.0) / self.U))

    def _weights_matrix(self):
        check_is_fitted(self, "_state")
        if self._window():
            return self._state["theta"]
        Vm = self._state["V"]
        c = self._c_next()
        if c <= 0.0:
            return np.zeros_like(Vm)
        if self.link == "euclidean":
            return Vm / c
        if self.link == "entropy":
            th = Vm / c
            m = np.abs(th).max()
            ep, em = np.exp(th - m), np.exp(-th - m)
            return (ep - em) / (ep.sum() + em.sum())
        p = self._p_value()
        nrm = np.linalg.norm(Vm.ravel(), ord=p)
        if nrm == 0.0:
            return np.zeros_like(Vm)
        th = Vm / nrm
        return np.sign(th) * np.abs(th) ** (p - 1.0) * nrm / ((p - 1.0) * c)

    coef_ = property(
        WeightsReadoutMixin.coef_.fget,
        doc="""Weights (1, n_features) for two classes, (n_classes, n_features) otherwise.

        Growing-c steps: w = grad f*(v / c) with the c of the next round as far as it is known
        (self-tuned: from the rows and mistakes so far; strongly convex: sigma (t + 1)).""",
    )

    def _stats(self):
        check_is_fitted(self, "_state")
        return self._state["st"]

    t_ = counter(DA.T, "Rounds processed (all epochs and calls).")
    n_updates_ = counter(DA.N_UPDATES, "Rounds on which the dual (and so the weights) changed.")
    n_mistakes_ = counter(
        DA.N_MISTAKES, "Online mistakes (prediction before the update was wrong)."
    )
    n_unconverged_ = counter(
        DA.N_UNCONVERGED, "Rounds whose coordinate ascent hit ``max_sweeps`` before ``tol``."
    )

    @property
    def dual_objective_(self):
        """D of the run after the last round (thesis eq. 5.12; the window steps report it in
        the units of tau = alpha / c, i.e. C times the thesis's D)."""
        return float(self._stats()[DA.DUAL])

    @property
    def dual_coef_(self):
        """Dual variable of every round so far (tau_i, or alpha_i for the growing-c steps)."""
        return self._state["dual"][: self.t_].copy()

    def decision_function(self, X):
        """Scores <w_k, x> + b_k: (n,) for two classes (positive: ``classes_[1]``), else (n, K)."""
        scores = self._scores(X)
        if len(self.classes_) <= 2:
            return scores[:, 0]
        return scores

    # ------------------------------------------------------------------ model files
    def _get_state(self):
        """(meta, arrays) describing the fitted model (docs/CONTRACT.md)."""
        check_is_fitted(self, "_state")
        arrays = {"classes_": np.asarray(self.classes_)}
        arrays.update({"s_" + k: v for k, v in self._state.items()})
        return state_meta(self), arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta)
        est._init_state(np.asarray(arrays["classes_"]), est.n_features_in_)
        for k, ref in est._state.items():
            a = np.ascontiguousarray(arrays["s_" + k], dtype=ref.dtype)
            if a.ndim != ref.ndim or (k in ("theta", "V", "st") and a.shape != ref.shape):
                raise ValueError(f"model state is inconsistent: {k} has shape {a.shape}")
            est._state[k] = a
        return est
