"""Training beyond one machine: iterative parameter mixing on Dask.

Iterative parameter mixing (McDonald, Hall & Mann, "Distributed training strategies for the
structured perceptron", NAACL 2010, Fig. 2): the training set is split into shards
T_1..T_S.  At epoch n every shard i starts from the mixed weights w^(n-1) and makes one online
pass over T_i, giving w_i^(n); the new mixture is

    w^(n) = sum_i mu_{i,n} w_i^(n),     mu_{i,n} = k_{i,n} / sum_j k_{j,n},

with k_{i,n} the number of updates shard i made in epoch n (the paper's Fig. 2, the mixture
weighted by errors; equal weights when no shard updated).  ``n_epochs=1`` is the one-shot
parameter mixture (each shard trains from zero, the models are averaged once).  The mixing
itself is :func:`onlinelearn.merge_models`, so every linear learner works, averaged or not
(the averaged hypotheses are mixed with the same weights), and label sets that differ between
shards are merged (a class unknown to a shard has zero weights there).

Dask is an optional dependency: ``pip install 'onlinelearn[dist]'``.  This module imports
without it; :meth:`ParameterMixing.fit` says how to install it when it is missing.
:func:`mix_in_process` runs the same mixing in this process, shard after shard; the cluster run
equals it exactly (same shards, same order of mixing, same compiled passes).
"""

from __future__ import annotations

import copy
import os

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..shell.params import store_params

__all__ = ["ParameterMixing", "mix_in_process", "require_dask"]

#: counters summed by ``merge_models``; each shard starts from the mixture, which already holds
#: them, so the mixture keeps them once and adds what every shard did during the epoch
_COUNTERS = ("N_ROUNDS", "N_UPDATES", "N_MISTAKES", "M_COUNT")


def require_dask():
    """Import ``dask`` and ``distributed`` or raise an ImportError that says how to install."""
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError as exc:
        raise ImportError(
            "onlinelearn.distributed needs Dask: pip install 'onlinelearn[dist]' "
            f"(or pip install 'dask[distributed]'); the import failed with: {exc}"
        ) from None
    return distributed


# -- one shard, one epoch (runs on a worker) -------------------------------------------------


def train_shard(start, template, shard):
    """One online pass over ``shard = (X, y)`` from the model ``start`` (a fresh clone of
    ``template`` when None).  Returns the trained model, or None for an empty shard."""
    X, y = shard
    if X.shape[0] == 0:
        return None
    est = clone(template) if start is None else copy.deepcopy(start)
    est.partial_fit(X, y)
    return est


def load_shard(path, n_features):
    """Read one svmlight file as a shard (on the worker that will train on it)."""
    from onlinelearn.io import load_svmlight

    return load_svmlight(path, n_features=n_features)


# -- the mixture -----------------------------------------------------------------------------


def mix(start, models):
    """The parameter mixture of the shard models of one epoch, weighted by the updates each
    shard made in that epoch (:func:`onlinelearn.merge_models` on per-epoch update counts).

    ``start`` is the model every shard began the epoch from (None at the first epoch).  The
    counters of the result are those of ``start`` plus what the shards did, and its averaged
    hypothesis (``average=True``) is the same weighted mean of the shards' averages."""
    from onlinelearn import merge_models
    from onlinelearn._core import state as ST
    from onlinelearn.shell.linear_state import _average_power, weighted_average_state

    models = [m for m in models if m is not None]
    if not models:
        if start is None:
            raise ValueError("every shard is empty: nothing to train on")
        return start
    if start is None:
        return merge_models(models)
    idx = [getattr(ST, name) for name in _COUNTERS]
    base = start._st[idx].copy()
    epoch = []
    for m in models:
        c = copy.copy(m)  # a shallow copy: only the counters are replaced
        c._st = m._st.copy()
        c._st[ST.N_UPDATES] -= base[1]  # merge_models weighs by n_updates_: this epoch's
        epoch.append(c)
    out = merge_models(epoch)
    S = len(models)
    # summed counters: the epoch's own counts plus those of the start, once
    rounds_merged = out._st[ST.N_ROUNDS]
    power = _average_power(out)
    mixed_avg = out._weights_matrix() if power != 0.0 else None
    for k, slot in enumerate(idx):
        if slot == ST.N_UPDATES:
            out._st[slot] += base[k]
        else:
            out._st[slot] -= (S - 1) * base[k]
    counts = np.zeros(len(out.classes_), dtype=np.int64)
    counts[np.searchsorted(out.classes_, start.classes_)] = start.class_counts_
    out.class_counts_ = out.class_counts_ - (S - 1) * counts
    if power != 0.0:
        # the weighted average: the same mixture, as the average of one stream of t_ rounds
        out._st[ST.S_SUM], out._A = weighted_average_state(
            out._theta, mixed_avg, out._st[ST.N_ROUNDS], power
        )
    elif out.average and rounds_merged > 0:
        # merge_models stores A = T * (mixed average) with T its summed round count
        out._A = out._A * (out._st[ST.N_ROUNDS] / rounds_merged)
    return out


def mix_in_process(estimator, shards, n_epochs, callback=None):
    """Iterative parameter mixing in this process, shard after shard: the exact reference of
    what :class:`ParameterMixing` computes on a cluster.  ``shards`` is a list of ``(X, y)``."""
    model = None
    for epoch in range(n_epochs):
        models = [train_shard(model, estimator, shard) for shard in shards]
        model = mix(model, models)
        if callback is not None:
            callback(epoch, model, models)
    return model


# -- the estimator ---------------------------------------------------------------------------


def _of_the_mixture(name):
    """The attribute ``name`` of the fitted mixture (``estimator_``), read through."""
    return property(lambda self: getattr(self._fitted(), name), doc=f"``estimator_.{name}``.")


class ParameterMixing(ClassifierMixin, BaseEstimator):
    """Iterative parameter mixing of an online linear learner over the shards of a Dask run.

    Parameters
    ----------
    estimator : onlinelearn linear learner
        The learner (Perceptron, PassiveAggressiveClassifier, Winnow, PNormPerceptron, COPA,
        averaged or not); its own ``n_epochs`` and ``shuffle`` are not used: every shard makes
        one pass per epoch in the order of its rows.
    n_epochs : int, default=1
        Mixing rounds.  1 is the one-shot parameter mixture.
    client : distributed.Client or None
        The Dask client; None uses the current default client (``distributed.Client(...)``).
    n_features : int or None
        Number of features, for a list of svmlight files (None: the highest index over all
        files, found by one scan per file on the workers).

    Attributes
    ----------
    estimator_ : the mixed model (``predict``, ``score``, ``coef_`` delegate to it)
    classes_, coef_, intercept_, n_features_in_
    history_ : list of dict, one per epoch: ``updates`` (per shard), ``mistakes`` (per shard,
        online mistakes of the epoch), ``rows`` (per shard)

    Notes
    -----
    ``fit(X, y)`` takes dask arrays (one shard per chunk of rows; X is rechunked to one chunk
    across the columns and y to X's row chunks) or a list of svmlight file paths with
    ``y=None`` (one shard per file).  Shards are read once and kept in the workers' memory
    for all epochs; every epoch sends the mixed model to each worker and brings one model back
    per shard: 2 x S x (model size) bytes per epoch (docs/distributed.md).

    Failures: a shard that cannot be read (a malformed line, a truncated file) or trained on
    raises that error from ``fit``, which then leaves ``estimator_`` as it was (no partial
    model).  A worker lost during an epoch is handled by Dask: its tasks (and the shards it
    held, read again from their source) are rerun on the other workers, which gives the same
    result because each shard's pass is deterministic; after ``distributed.scheduler.
    allowed-failures`` losses of one task Dask gives up and ``fit`` raises a RuntimeError.
    """

    def __init__(self, estimator, n_epochs=1, client=None, n_features=None):
        store_params(self, locals())

    # -- shards on the cluster
    def _client(self):
        distributed = require_dask()
        if self.client is not None:
            return self.client
        try:
            return distributed.default_client()
        except ValueError:
            raise ValueError(
                "ParameterMixing needs a Dask client: create one first, e.g. "
                "distributed.Client('tcp://scheduler:8786') or distributed.Client(LocalCluster())"
            ) from None

    def _shard_futures(self, client, X, y):
        if isinstance(X, list | tuple) and all(isinstance(p, str | os.PathLike) for p in X):
            if y is not None:
                raise ValueError("with a list of svmlight files, y must be None (labels are read)")
            if not X:
                raise ValueError("the list of svmlight files is empty")
            paths = [os.fspath(p) for p in X]
            n_features = self.n_features
            if n_features is None:
                from onlinelearn.io import svmlight_n_features

                n_features = max(client.gather(client.map(svmlight_n_features, paths, pure=False)))
            return [
                client.submit(load_shard, p, int(n_features), pure=False, key=f"shard-{i}-{p}")
                for i, p in enumerate(paths)
            ]
        import dask.array as da

        if not isinstance(X, da.Array):
            raise TypeError(
                f"ParameterMixing.fit takes a dask array or a list of svmlight files, got "
                f"{type(X).__name__}; for data in memory, wrap it: dask.array.from_array(X, "
                "chunks=(rows_per_shard, -1))"
            )
        if y is None:
            raise ValueError("y is required with a dask array X")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got {X.ndim} dimensions")
        X = X.rechunk({1: -1})
        y = da.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with {X.shape[0]} labels, got shape {y.shape}")
        y = y.rechunk((X.chunks[0],))
        blocks = X.to_delayed().ravel()
        labels = y.to_delayed().ravel()
        import dask

        pairs = [dask.delayed(tuple)([xb, yb]) for xb, yb in zip(blocks, labels, strict=True)]
        return client.compute(pairs)

    def fit(self, X, y=None):
        """Run ``n_epochs`` rounds of iterative parameter mixing on the cluster."""
        if not (isinstance(self.n_epochs, int | np.integer) and self.n_epochs >= 1):
            raise ValueError(f"n_epochs must be a positive integer, got {self.n_epochs!r}")
        client = self._client()
        shards = self._shard_futures(client, X, y)
        template = clone(self.estimator)
        model = None
        history = []
        try:
            for _ in range(self.n_epochs):
                start = None if model is None else client.scatter(model, broadcast=True)
                futures = [
                    client.submit(train_shard, start, template, s, pure=False) for s in shards
                ]
                models = client.gather(futures)
                history.append(_epoch_record(model, models))
                model = mix(model, models)
        except Exception as exc:
            if type(exc).__name__ == "KilledWorker":
                raise RuntimeError(
                    f"ParameterMixing: Dask lost the workers running a shard too often "
                    f"({exc}); nothing was kept from this fit"
                ) from exc
            raise
        finally:
            client.cancel(shards)
        self.estimator_ = model
        self.history_ = history
        return self

    # -- the fitted model
    def _fitted(self):
        check_is_fitted(self, "estimator_")
        return self.estimator_

    def predict(self, X):
        return self._fitted().predict(X)

    def decision_function(self, X):
        return self._fitted().decision_function(X)

    classes_ = _of_the_mixture("classes_")
    coef_ = _of_the_mixture("coef_")
    intercept_ = _of_the_mixture("intercept_")
    n_features_in_ = _of_the_mixture("n_features_in_")


def _epoch_record(start, models):
    """What each shard did during one epoch: rows, updates, online mistakes."""
    from onlinelearn._core import state as ST

    slots = [ST.N_ROUNDS, ST.N_UPDATES, ST.N_MISTAKES]
    before = np.zeros(3) if start is None else start._st[slots]
    rec = {"rows": [], "updates": [], "mistakes": []}
    for m in models:
        vals = np.zeros(3) if m is None else m._st[slots] - before
        for key, v in zip(("rows", "updates", "mistakes"), vals, strict=True):
            rec[key].append(int(v))
    return rec
