"""One row to the model's one-row step, for the requests of ``onlinelearn serve``.

A learner with a compiled one-event road (``_event_partial_fit``: the linear classifiers
through :mod:`onlinelearn.shell.events`, AROW, SCW and WeightedMinMax through their
``_event_road`` module) gets a single-row request's row as it was read, (values, columns),
without a one-row matrix: ``learn_entries``, ``predict_entries``, ``predict_proba_entries``.  A
learner whose own ``learn_one`` / ``predict_one`` is something else than ``partial_fit`` /
``predict`` of a one-row matrix gets the dict {column: value}.  Any other takes the row as a
(1, d) matrix through ``partial_fit_predict`` / ``predict``, which is what its ``learn_one``
would do.

The event roads keep scratch buffers per model, so two predictions on a model must not run at
once: the server makes every road prediction in one thread (the event loop's) and learns under
the write lock (module ``_server``).
"""

from __future__ import annotations

import numpy as np

from ._parse import BadRequest, Row, _one_line, _plain_list, _probabilities_of


def _plain(v):
    if isinstance(v, np.generic):
        v = v.item()
    return int(v) if isinstance(v, float) and v.is_integer() else v


class Road:
    """How the server reaches the one-row step of ``est`` (module docstring)."""

    def __init__(self, est):
        from onlinelearn.shell import events
        from onlinelearn.shell.online import OnlineMixin

        self.est = est
        #: the compiled road's module (learn_entries, predict_entries, predict_proba_entries)
        self.events = None
        if getattr(est, "_event_partial_fit", None) is not None:
            self.events = getattr(est, "_event_road", events)
        self.entries = self.events is not None
        #: a learn_one / predict_one of the learner's own, on dict rows
        own = getattr(type(est), "learn_one", OnlineMixin.learn_one)
        self.dicts = (
            not self.entries and own is not OnlineMixin.learn_one and hasattr(est, "predict_one")
        )
        self.n_features = int(est.n_features_in_)

    # -- predictions (the caller holds the read lock)
    def predict(self, row: Row, proba: bool) -> dict:
        est = self.est
        try:
            if self.entries:
                pred = self.events.predict_entries(est, row.data, row.indices)
            elif self.dicts:
                pred = est.predict_one(row.as_dict())
            else:
                pred = est.predict(row.matrix(self.n_features))[0]
        except ValueError as exc:
            raise BadRequest(_one_line(exc), status=422) from None
        out = {"predictions": [_plain(pred)]}
        if proba:
            with _probabilities_of(est):
                if self.entries:
                    P = self.events.predict_proba_entries(est, row.data, row.indices)
                elif self.dicts and hasattr(est, "predict_proba_one"):
                    P = est.predict_proba_one(row.as_dict())
                else:
                    P = None
                    p = est.predict_proba(row.matrix(self.n_features))[0]
            classes = _plain_list(est.classes_)
            if P is not None:
                plain = [c.item() if isinstance(c, np.generic) else c for c in est.classes_]
                p = [P[c] for c in plain]
            out["classes"] = classes
            out["probabilities"] = [np.asarray(p, dtype=np.float64).tolist()]
        return out

    # -- learning (the caller holds the write lock)
    def learn(self, row: Row, fallback):
        """Progressive validation of one row: the prediction ``/predict`` would have given just
        before the row is learned, then the update, on the one-row step; ``fallback(X, y, w)``
        (the batch path) when the road does not take the row (a weight, a new label, a row the
        step refuses: the batch path then raises the model's own error)."""
        est = self.est
        if row.weight is None:
            if self.entries:
                try:
                    pred = self.events.predict_entries(est, row.data, row.indices)
                except ValueError:  # (an overflow of the scores) the batch path says why
                    pred = None
                if pred is not None and self.events.learn_entries(
                    est, row.data, row.indices, row.label
                ):
                    return pred
            elif self.dicts:
                x = row.as_dict()
                pred = est.predict_one(x)
                est.learn_one(x, row.label)
                return pred
        y = np.array([row.label])
        w = None if row.weight is None else np.array([row.weight])
        return fallback(row.matrix(self.n_features), y, w)[0]
