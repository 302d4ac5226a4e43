"""Online-to-batch conversions of thesis App. B.3.3 for structured learners (lists of examples).

The same three schemes as :mod:`onlinelearn.evaluation` offers for the linear learners, for
estimators whose ``partial_fit`` takes a list of structured examples (``SequenceTagger``,
``OnlineStructuredLearner``): "Last" (with random stopping time, Lemma 23), "Averaging"
(Theorem 13) and "Validation" (Theorem 12).  The estimator passed in is cloned, never modified.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state

__all__ = ["structured_last", "structured_average", "structured_validation"]


def _lists(X, Y):
    X, Y = list(X), list(Y)
    if len(X) != len(Y) or not X:
        raise ValueError(f"need as many inputs as outputs, at least one ({len(X)} / {len(Y)})")
    return X, Y


def structured_last(estimator, X, Y, random_state=None, random_stopping=True, **fit_params):
    """ "Last": one online pass over the first r examples, r uniform in {1..T} (or T); returns
    the last hypothesis (the scheme of thesis ch. 9).  ``fit_params`` go to ``partial_fit``
    (e.g. ``classes=`` for a SequenceTagger, as the first r sequences may miss some tags)."""
    X, Y = _lists(X, Y)
    n = len(X)
    r = int(check_random_state(random_state).randint(1, n + 1)) if random_stopping else n
    est = clone(estimator)
    if "average" in est.get_params(deep=False):
        est.set_params(average=False)
    return est.partial_fit(X[:r], Y[:r], **fit_params)


def structured_average(estimator, X, Y, **fit_params):
    """ "Averaging": the mean of the hypotheses of one online pass (average=True)."""
    X, Y = _lists(X, Y)
    return clone(estimator).set_params(average=True).partial_fit(X, Y, **fit_params)


class StructuredValidationResult(NamedTuple):
    estimator: object
    candidates: list
    validation_scores: np.ndarray
    best_index: int


def structured_validation(
    estimator, X, Y, X_val, Y_val, n_blocks=5, random_state=None, **fit_params
):
    """ "Validation": one hypothesis drawn at random in each of ``n_blocks`` blocks (the
    learner restarted in each), the one of highest ``score`` on (X_val, Y_val) returned."""
    X, Y = _lists(X, Y)
    n = len(X)
    if int(n_blocks) != n_blocks or not 1 <= n_blocks <= n:
        raise ValueError(f"n_blocks must be an integer in [1, {n}], got {n_blocks!r}")
    rng = check_random_state(random_state)
    bounds = np.cumsum([0] + [len(b) for b in np.array_split(np.arange(n), int(n_blocks))])
    cands, scores = [], []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        r = int(rng.randint(1, hi - lo + 1))
        est = clone(estimator)
        if "average" in est.get_params(deep=False):
            est.set_params(average=False)
        est.partial_fit(X[lo : lo + r], Y[lo : lo + r], **fit_params)
        cands.append(est)
        scores.append(est.score(X_val, Y_val))
    scores = np.asarray(scores)
    best = int(np.argmax(scores))
    return StructuredValidationResult(cands[best], cands, scores, best)
