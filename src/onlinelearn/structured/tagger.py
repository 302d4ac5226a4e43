"""SequenceTagger: online structured learning on a first-order chain (thesis Sec. 5.3.3)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._core import structured as K_
from ..shell.meta import estimator_from_meta, float_arrays, params_to_json, state_meta
from ..shell.online import Call, OnlineMixin, refuse_sample_weight
from ..shell.params import parameters
from ..shell.snapshot import restore_attrs, save_attrs
from ._sequences import check_tag_sequences, pack_sequences
from .learner import STRUCTURED

_UPDATES = {"perceptron": K_.PERCEPTRON, "PA": None, "self-tuned": K_.SELF_TUNED}
_LOSSES = {"max": K_.PA_MAX, "prediction": K_.PA_PRED}
#: the learned state (what ``fit`` replaces as a whole once it has succeeded)
_STATE = ("classes_", "n_features_in_", "_W", "_Tr", "_UW", "_UTr", "_st")
#: the arrays of a model file (each the attribute of the same name with a leading "_")
_FILE_ARRAYS = ("W", "Tr", "UW", "UTr", "st")


@parameters("update * loss C U average n_epochs shuffle random_state", STRUCTURED)
class SequenceTagger(OnlineMixin, BaseEstimator):
    """Online sequence tagger: w . phi(x, y) over a first-order chain, learnt by dual ascent.

    Problem solved by a round (thesis Sec. 5.3.3; Euclidean complexity f(w) = ||w||^2 / 2)::

        'PA', loss='max':     w_{t+1} = argmin_w 1/2 ||w - w_t||^2 + C xi
                              s.t. <w, phi(x, y) - phi(x, y_hat)> >= rho(y, y_hat) - xi, xi >= 0
                              with y_hat = argmax_y' rho(y, y') + <w_t, phi(x, y')>   (eq. 5.23)
        'PA', loss='prediction': the same with y_hat = argmax_y' <w_t, phi(x, y')>     (eq. 5.24)
        'perceptron':         w_{t+1} = w_t + phi(x, y) - phi(x, y_hat) if y_hat != y
                              (the conservative step; Collins 2002)
        'self-tuned':         thesis Fig. 5.4: c_t = X_t sqrt(M_t / (2U)),
                              theta += min(1, [c_t rho - <theta, a>]_+ / ||a||^2) a

    Solution of the PA round (one dual variable, the closed form of thesis eq. 7.11):
    ``tau = min(C, [rho - <w_t, a>]_+ / ||a||^2)``, ``w_{t+1} = w_t + tau a``.

    Exact and approximate: nothing is solved iteratively.  Both argmaxes are exact (Viterbi)
    and the step is the closed form above.

    Where
        x = (x_1..x_n) are the token rows of one sequence (a CSR matrix), y its tags;
        phi(x, y) = sum_i x_i (x) e_{y_i} + sum_i e_{y_{i-1}} (x) e_{y_i} with y_0 = BOS
        (eq. 5.21: emission weights ``coef_`` (n_features, n_tags) and transitions
        ``transitions_`` (n_tags + 1, n_tags), last row = from BOS);
        rho(y, y') = #{i : y_i != y'_i} is the Hamming cost; a = phi(x, y) - phi(x, y_hat);
        for 'self-tuned', theta is the scaled dual sum (w = theta / c_t: same predictions),
        X_t = max ||a_s|| and M_t the rounds with rho > 0.
        Both argmaxes are Viterbi in compiled code (the Hamming cost decomposes per position).

    Parameters
    ----------
    update : {'perceptron', 'PA', 'self-tuned'}, default='PA'
        The dual ascent step (above).
    loss : {'max', 'prediction'}, default='max'
        For 'PA': the maximal loss (5.22) with the loss-augmented Viterbi (5.23), or the
        prediction-based loss (5.24) with the plain Viterbi.
    C : float, default=1.0
        Cap on the PA step tau (PA-I); ``np.inf`` gives the pure PA step.
    U : float, default=1.0
        The bound U on f(u) of Fig. 5.4 ('self-tuned' only).
    average : bool, default=True
        Predict with the mean of the hypotheses after every round (the "Average" online-to-batch
        conversion of App. B.3); False keeps the last one ("Last").
    n_epochs : int, default=5
        Passes over the sequences in ``fit``.
    shuffle : bool, default=True
        Shuffle the sequence order at each epoch of ``fit``.
    random_state : int, RandomState or None
        Seed of the shuffle.

    Attributes
    ----------
    classes_ : ndarray of shape (n_tags,)
        Sorted tags.
    coef_, transitions_ : ndarray
        The weights used for prediction (averaged when ``average``).
    n_features_in_, n_updates_, n_mistakes_ (sequences predicted wrong online), t_ (rounds).

    Examples
    --------
    >>> from onlinelearn.structured import SequenceTagger, token_features
    >>> sents = [["the", "dog", "runs"], ["a", "cat", "sleeps"], ["the", "cat", "runs"]]
    >>> tags = [["DET", "NOUN", "VERB"]] * 3
    >>> X = token_features(sents, n_features=2**10)
    >>> tagger = SequenceTagger(n_epochs=3, random_state=0).fit(X, tags)
    >>> new = token_features([["a", "dog", "sleeps"]], n_features=2**10)
    >>> [t.tolist() for t in tagger.predict(new)]
    [['DET', 'NOUN', 'VERB']]
    """

    # ----------------------------------------------------------------- state
    def _update_code(self):
        if self.update == "PA":
            return _LOSSES[self.loss]
        return _UPDATES[self.update]

    def _init_state(self, classes, n_features):
        K = len(classes)
        self.classes_ = classes
        self.n_features_in_ = int(n_features)
        self._W = np.zeros((n_features, K))
        self._Tr = np.zeros((K + 1, K))
        self._UW = np.zeros((n_features, K)) if self.average else np.zeros((1, K))
        self._UTr = np.zeros((K + 1, K)) if self.average else np.zeros((1, K))
        self._st = np.zeros(K_.N_ST)

    def _grow(self, new_classes):
        """Insert tags never seen before (classes_ stays sorted; BOS stays the last row)."""
        old = self.classes_
        if len(new_classes) == len(old):
            return
        K = len(new_classes)
        pos = np.searchsorted(new_classes, old)
        rows = np.append(pos, K)

        def grow(W, Tr):
            W2 = np.zeros((W.shape[0], K))
            W2[:, pos] = W
            Tr2 = np.zeros((K + 1, K))
            Tr2[np.ix_(rows, pos)] = Tr
            return W2, Tr2

        self._W, self._Tr = grow(self._W, self._Tr)
        if self.average:
            self._UW, self._UTr = grow(self._UW, self._UTr)
        else:
            self._UW, self._UTr = np.zeros((1, K)), np.zeros((1, K))
        self.classes_ = new_classes

    def _encode(self, y, *, allow_new):
        """Tag codes; with ``allow_new`` returns the grown class list instead of failing."""
        classes = self.classes_
        new = np.setdiff1d(np.unique(y), classes)
        if new.size:
            if not allow_new:
                raise ValueError(
                    f"tags never seen in training: {[str(t) for t in new[:10]]}; the model "
                    f"knows {[str(t) for t in classes]}"
                )
            classes = np.union1d(classes, new)
        return np.searchsorted(classes, y).astype(np.int64), classes

    # ----------------------------------------------------------------- learning
    def _pass(self, batch, codes, order):
        """One compiled pass; on a non-finite weight the state is restored and an error raised."""
        rows = np.unique(batch.indices)
        saved = (self._W[rows].copy(), self._Tr.copy(), self._st.copy())
        if self.average:
            saved += (self._UW[rows].copy(), self._UTr.copy())
        status = K_.tagger_pass(
            batch.indptr, batch.indices, batch.data, batch.starts, codes, order,
            self._W, self._Tr, self._UW, self._UTr, self._st, self._update_code(),
            float(self.C), float(self.U), bool(self.average), batch.max_len, batch.max_nnz,
        )  # fmt: skip
        if status != K_.OK or not K_.check_finite_rows(self._W, batch.indices):
            self._W[rows], self._Tr, self._st = saved[0], saved[1], saved[2]
            if self.average:
                self._UW[rows], self._UTr = saved[3], saved[4]
            raise FloatingPointError(
                "non-finite weights after the update; the model was restored to its state "
                "before this call. Scale the token features down or lower C."
            )

    def _prepare(self, X_seqs, y_seqs, reset):
        """Validate everything before any change; returns (batch, codes, classes)."""
        self._validate_params()
        fitted = not reset and hasattr(self, "classes_")
        batch = pack_sequences(X_seqs, self.n_features_in_ if fitted else None)
        y = check_tag_sequences(y_seqs, batch)
        if fitted:
            try:
                classes = np.union1d(self.classes_, y)
            except TypeError:
                raise TypeError("tags of mixed types cannot be sorted into classes_") from None
        else:
            classes = np.unique(y)
        return batch, y, classes

    def _snapshot(self):
        """The state by reference: ``fit`` makes new arrays, and a failed pass of
        ``partial_fit`` puts back the rows it changed itself (:meth:`_pass`)."""
        return save_attrs(self, _STATE)

    def _restore(self, snap):
        restore_attrs(self, _STATE, snap)

    def _begin(self, X_seqs, y_seqs, classes, sample_weight, *, first, fit_mode, snap):
        """The set-up of a call (:mod:`onlinelearn.shell.online`).

        X_seqs : list of (n_i, n_features) CSR matrices (or arrays), one row per token.
        y_seqs : list of length-n_i tag arrays.
        ``fit``: ``n_epochs`` online passes from scratch over the sequences (shuffled when
        ``shuffle``); ``partial_fit``: one pass over the sequences in their order, new tags
        joining ``classes_``."""
        refuse_sample_weight(self, sample_weight)
        batch, y, seen = self._prepare(X_seqs, y_seqs, reset=fit_mode)
        if classes is not None:
            seen = np.union1d(seen, np.asarray(classes))
        if first:
            self._init_state(seen, batch.n_features)
        else:
            self._grow(seen)
        codes = np.searchsorted(self.classes_, y).astype(np.int64)
        order = np.arange(batch.n_sequences, dtype=np.int64)
        return Call(n=batch.n_sequences, batch=batch, codes=codes, order=order)

    def _epoch(self, call, order):
        """One compiled pass (:meth:`_pass`); a shuffled epoch visits the sequences in the
        previous epoch's order permuted by ``order``."""
        if order is not None:
            call.order = call.order[order]
        self._pass(call.batch, call.codes, call.order)

    def _finish(self, call):
        return None

    # ----------------------------------------------------------------- read-out
    def _averaged(self, name):
        """The weights ``name`` (``'W'`` or ``'Tr'``), averaged over the rounds when
        ``average``."""
        check_is_fitted(self, "classes_")
        M, T = getattr(self, "_" + name), self._st[K_.T_SEEN]
        if self.average and T > 0:
            return M - getattr(self, "_U" + name) / T
        return M

    @property
    def coef_(self):
        return self._averaged("W")

    @property
    def transitions_(self):
        return self._averaged("Tr")

    @property
    def dual_objective_(self):
        """D = sum_s tau_s rho_s - ||w||^2 / 2 with w the current (not averaged) weights: the
        dual of  min_w ||w||^2 / 2 + C sum_s loss_s(w)  at the dual variables tau_s the PA
        steps have set (thesis Sec. 3.3; it never decreases and is a lower bound of the primal
        for any w).  Meaningful for update='PA'."""
        check_is_fitted(self, "classes_")
        sq = float(np.sum(self._W**2) + np.sum(self._Tr**2))
        return float(self._st[K_.TAU_RHO]) - 0.5 * sq

    n_updates_ = property(lambda self: int(self._st[K_.N_UPDATES]))
    n_mistakes_ = property(lambda self: int(self._st[K_.N_MISTAKES]))
    t_ = property(lambda self: int(self._st[K_.T_SEEN]))

    def _predict_weights(self):
        """(coef_, transitions_) as contiguous arrays, cached until the next update (the
        averaged read-out costs O(n_features n_tags))."""
        key = (id(self._W), float(self._st[K_.T_SEEN]), float(self._st[K_.N_UPDATES]))
        cache = self.__dict__.get("_read_cache")
        if cache is None or cache[0] != key:
            W = np.ascontiguousarray(self.coef_)
            Tr = np.ascontiguousarray(self.transitions_)
            cache = self._read_cache = (key, W, Tr)
        return cache[1], cache[2]

    def _predict_codes(self, batch):
        W, Tr = self._predict_weights()
        out = np.empty(batch.n_tokens, dtype=np.int64)
        K_.tagger_predict(
            batch.indptr, batch.indices, batch.data, batch.starts, W, Tr, batch.max_len, out
        )
        return out

    def predict(self, X_seqs):
        """Viterbi tags of each sequence: a list of arrays, one per sequence."""
        check_is_fitted(self, "classes_")
        batch = pack_sequences(X_seqs, self.n_features_in_)
        tags = self.classes_[self._predict_codes(batch)]
        return np.split(tags, batch.starts[1:-1])

    def score(self, X_seqs, y_seqs):
        """Token accuracy of :meth:`predict` (every tag must be one seen in training)."""
        check_is_fitted(self, "classes_")
        batch = pack_sequences(X_seqs, self.n_features_in_)
        y = check_tag_sequences(y_seqs, batch)
        codes, _ = self._encode(y, allow_new=False)
        return float(np.mean(self._predict_codes(batch) == codes))

    # ----------------------------------------------------------------- model files
    def _get_state(self):
        check_is_fitted(self, "classes_")
        params = params_to_json(self)
        params["C"] = float(params["C"])
        arrays = {name: getattr(self, "_" + name) for name in _FILE_ARRAYS}
        return state_meta(self, params), {"classes_": np.asarray(self.classes_), **arrays}

    @classmethod
    def _from_state(cls, meta, arrays):
        est = estimator_from_meta(cls, meta, arrays)
        K, d = len(est.classes_), est.n_features_in_
        shapes = {"W": (d, K), "Tr": (K + 1, K), "st": (K_.N_ST,)}
        if est.average:
            shapes.update({"UW": (d, K), "UTr": (K + 1, K)})
        for name, shape in shapes.items():
            if arrays[name].shape != shape:
                raise ValueError(
                    f"model state array {name!r} has shape {arrays[name].shape}, expected {shape}"
                )
        for name, a in zip(_FILE_ARRAYS, float_arrays(arrays, *_FILE_ARRAYS), strict=True):
            setattr(est, "_" + name, a)
        return est
