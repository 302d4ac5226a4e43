"""Evaluating online learners: progressive validation and online-to-batch conversions.

Progressive validation (test-then-train) scores every example with the hypothesis in force
*before* the learner saw it, so the whole stream serves as test data and as training data.

The online-to-batch conversions follow Shalev-Shwartz, "Online Learning: Theory, Algorithms, and
Applications" (PhD thesis, 2007), Appendix B.3.3 ("Choosing a hypothesis from the ensemble"):
*Last (with random stopping time)*, *Validation* and *Averaging*. They turn the ensemble of
online hypotheses ``h_1, ..., h_T`` into a single batch predictor with a risk bound.

Estimators are used through ``partial_fit``, ``partial_fit_predict`` and ``predict`` (see
``docs/CONTRACT.md``); the conversions ``sklearn.base.clone`` the estimator they are given and
never modify it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array

__all__ = [
    "ProgressiveValidationResult",
    "ValidationConversionResult",
    "online_to_batch_average",
    "online_to_batch_last",
    "online_to_batch_validation",
    "progressive_validation",
]


# --------------------------------------------------------------------------- input checks
def _check_Xy(X, y, name_X: str = "X", name_y: str = "y"):
    """Validate a stream: 2-D dense or CSR ``X``, 1-D ``y`` of the same, nonzero length."""
    X = check_array(X, accept_sparse="csr", dtype=None, ensure_2d=True, input_name=name_X)
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name_y} must be one-dimensional, got shape {y.shape}.")
    if X.shape[0] != y.shape[0]:
        raise ValueError(
            f"{name_X} and {name_y} have different numbers of rows: {X.shape[0]} != {y.shape[0]}."
        )
    if y.shape[0] == 0:
        raise ValueError(f"{name_X} and {name_y} are empty.")
    return X, y


def _check_sample_weight(sample_weight, n: int):
    if sample_weight is None:
        return None
    sw = np.asarray(sample_weight, dtype=float)
    if sw.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), got {sw.shape}.")
    return sw


def _classes(y: np.ndarray, classes) -> np.ndarray:
    """Classes for the first ``partial_fit``: the given ones (checked), else unique(y)."""
    if classes is None:
        return np.unique(y)
    classes = np.asarray(classes)
    missing = np.setdiff1d(np.unique(y), classes)
    if missing.size:
        raise ValueError(f"y contains labels that are not in classes: {missing[:10].tolist()}.")
    return classes


# --------------------------------------------------------------------------- progressive validation
@dataclass(frozen=True)
class ProgressiveValidationResult:
    """Outcome of :func:`progressive_validation`.

    Attributes
    ----------
    predictions : ndarray of shape (n_samples,)
        ``predictions[t]``: label predicted for example ``t`` by the hypothesis trained on
        examples ``0..t-1`` only.
    mistakes : ndarray of bool, shape (n_samples,)
        ``predictions != y``.
    cumulative_mistake_rate : ndarray of shape (n_samples,)
        ``cumulative_mistake_rate[t] = sum(mistakes[:t + 1]) / (t + 1)``: the online error rate
        after ``t + 1`` examples.
    """

    predictions: np.ndarray
    mistakes: np.ndarray
    cumulative_mistake_rate: np.ndarray

    @property
    def n_samples(self) -> int:
        """Length of the stream."""
        return int(self.mistakes.shape[0])

    @property
    def n_mistakes(self) -> int:
        """Total number of online mistakes."""
        return int(np.count_nonzero(self.mistakes))

    @property
    def mistake_rate(self) -> float:
        """Online error rate over the whole stream, ``n_mistakes / n_samples``."""
        return self.n_mistakes / self.n_samples

    def curve(
        self, points: int | None = 200, scale: Literal["log", "linear"] = "log"
    ) -> tuple[np.ndarray, np.ndarray]:
        """A sample of the learning curve, for plotting.

        Parameters
        ----------
        points : int or None, default=200
            Number of points wanted (fewer may be returned when log-spaced positions coincide);
            ``None`` returns every position. The last example is always included.
        scale : {"log", "linear"}, default="log"
            Spacing of the sampled positions.

        Returns
        -------
        n_seen : ndarray of int
            Number of examples seen, from 1 to ``n_samples``, increasing.
        rate : ndarray of float
            ``cumulative_mistake_rate[n_seen - 1]``.
        """
        n = self.n_samples
        if points is None or points >= n:
            n_seen = np.arange(1, n + 1)
        else:
            if points < 2:
                raise ValueError(f"points must be at least 2 or None, got {points}.")
            if scale == "log":
                grid = np.geomspace(1, n, points)
            elif scale == "linear":
                grid = np.linspace(1, n, points)
            else:
                raise ValueError(f"scale must be 'log' or 'linear', got {scale!r}.")
            n_seen = np.unique(np.rint(grid).astype(np.int64))
        return n_seen, self.cumulative_mistake_rate[n_seen - 1]


def progressive_validation(
    estimator, X, y, classes=None, sample_weight=None, chunk_size=None
) -> ProgressiveValidationResult:
    """Progressive validation (test-then-train) of an online learner over a stream.

    For ``t = 1, ..., T``: predict ``y_hat_t = h_{t-1}(x_t)``, then update on ``(x_t, y_t)``.
    The work is done by ``estimator.partial_fit_predict`` (one compiled pass per chunk), which
    returns the labels predicted before each update and trains on the rows.

    The estimator is trained **in place** (it ends in the state after the whole stream, and may
    already be fitted: the stream then continues its training). Use ``sklearn.base.clone`` first
    to start from scratch.

    Parameters
    ----------
    estimator : online classifier
        Provides ``partial_fit_predict(X, y, classes=None, sample_weight=None)``.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The stream, in order.
    y : array-like of shape (n_samples,)
    classes : array-like, default=None
        All classes of the problem, announced on the first call if the estimator is not fitted
        yet. ``None``: ``numpy.unique(y)``.
    sample_weight : array-like of shape (n_samples,), default=None
        Passed to the training updates; mistakes are counted unweighted.
    chunk_size : int, default=None
        Rows per ``partial_fit_predict`` call (bounds the memory of one call); ``None`` means
        one call for the whole stream. The result does not depend on it.

    Returns
    -------
    ProgressiveValidationResult

    Examples
    --------
    >>> from onlinelearn import Perceptron
    >>> from onlinelearn.datasets import load_dna
    >>> from onlinelearn.evaluation import progressive_validation
    >>> X, y = load_dna("train")
    >>> res = progressive_validation(Perceptron(), X, y, chunk_size=500)
    >>> print(res.n_mistakes, f"{res.mistake_rate:.3f}")
    343 0.172
    >>> n_seen, rate = res.curve(points=5)
    >>> print(n_seen.tolist(), rate.round(3).tolist())
    [1, 7, 45, 299, 2000] [1.0, 0.571, 0.511, 0.321, 0.172]
    """
    X, y = _check_Xy(X, y)
    n = y.shape[0]
    sw = _check_sample_weight(sample_weight, n)
    if chunk_size is None:
        chunk_size = n
    elif int(chunk_size) != chunk_size or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size!r}.")
    chunk_size = int(chunk_size)
    fitted = hasattr(estimator, "classes_")
    first_classes = None if fitted and classes is None else _classes(y, classes)

    parts = []
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        kwargs = {}
        if start == 0 and first_classes is not None:
            kwargs["classes"] = first_classes
        if sw is not None:
            kwargs["sample_weight"] = sw[start:stop]
        pred = np.asarray(estimator.partial_fit_predict(X[start:stop], y[start:stop], **kwargs))
        if pred.shape != (stop - start,):
            raise ValueError(
                f"partial_fit_predict returned shape {pred.shape}, expected ({stop - start},)."
            )
        parts.append(pred)
    predictions = np.concatenate(parts)
    mistakes = predictions != y
    cumulative = np.cumsum(mistakes) / np.arange(1, n + 1)
    return ProgressiveValidationResult(predictions, mistakes, cumulative)


# --------------------------------------------------------------------------- online-to-batch
def online_to_batch_last(estimator, X, y, random_state=None, random_stopping=True, classes=None):
    """Online-to-batch conversion "Last (with random stopping time)", thesis App. B.3.3.

    Runs the online algorithm once over the first ``r`` examples and returns the last hypothesis.
    With ``random_stopping=True``, ``r`` is drawn uniformly from ``{1, ..., T}`` (Lemma 23 and
    Corollary 8 bound the risk of this hypothesis with probability ``1 - delta``, with a
    dependence in ``1/delta``); with ``random_stopping=False``, ``r = T``: a plain single pass.

    Indexing note: in the thesis ``h_t`` is the hypothesis *before* example ``t`` (``h_1`` is the
    initial one) and ``h_r``, ``r ~ U[T]``, has seen ``r - 1`` examples. Here the returned model
    has seen ``r >= 1`` examples (``h_{r+1}``), which avoids returning the untrained initial
    hypothesis; it is the thesis' scheme on the first ``T + 1`` examples conditioned on
    ``r >= 2``.

    Parameters
    ----------
    estimator : online classifier
        Cloned, never modified.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    random_state : int, RandomState instance or None
        Draws ``r``.
    random_stopping : bool, default=True
    classes : array-like, default=None
        All classes (``None``: ``numpy.unique(y)``), announced to ``partial_fit`` since the first
        ``r`` examples may miss some.

    Returns
    -------
    estimator : fitted clone, trained by one ``partial_fit`` call on ``X[:r], y[:r]``.
    """
    X, y = _check_Xy(X, y)
    classes = _classes(y, classes)
    n = y.shape[0]
    r = int(check_random_state(random_state).randint(1, n + 1)) if random_stopping else n
    est = clone(estimator)
    est.partial_fit(X[:r], y[:r], classes=classes)
    return est


def online_to_batch_average(estimator, X, y, classes=None):
    """Online-to-batch conversion "Averaging", thesis App. B.3.3 (Theorem 13).

    Returns the average hypothesis ``h_bar = (1/T) sum_t h_t`` of one online pass. When the loss
    is convex in ``h``, Jensen's inequality gives ``risk(h_bar) <= (1/T) sum_t risk(h_t)``, so the
    bounds on the ensemble's average risk hold for ``h_bar``. The average is the estimator's own
    lazy averaging: a clone with ``average=True`` trained by one ``partial_fit`` call over the
    whole sequence (with ``average_power=0``: the learners that weigh round t by t^eta by
    default are made to average uniformly, as the theorem reads).

    Indexing note: the package's learners average the hypotheses *after* each of the ``T``
    rounds (``h_2, ..., h_{T+1}`` in the thesis' indexing, where ``h_1`` is the initial one), so
    the last example counts and the initial zero hypothesis does not.

    Parameters
    ----------
    estimator : online classifier with an ``average`` parameter
        Cloned (with ``average=True``), never modified.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    classes : array-like, default=None
        All classes (``None``: ``numpy.unique(y)``).

    Returns
    -------
    estimator : fitted clone whose coefficients are the averaged ones.

    Examples
    --------
    >>> from onlinelearn import PassiveAggressiveClassifier
    >>> from onlinelearn.datasets import load_dna
    >>> from onlinelearn.evaluation import online_to_batch_average
    >>> X, y = load_dna("train")
    >>> X_test, y_test = load_dna("test")
    >>> clf = online_to_batch_average(PassiveAggressiveClassifier(C=0.01), X, y)
    >>> print(f"test accuracy {clf.score(X_test, y_test):.3f}")
    test accuracy 0.948
    """
    X, y = _check_Xy(X, y)
    classes = _classes(y, classes)
    if "average" not in estimator.get_params(deep=False):
        raise ValueError(
            f"{type(estimator).__name__} has no 'average' parameter: averaging is not available."
        )
    est = clone(estimator).set_params(average=True)
    if "average_power" in est.get_params(deep=False):
        est.set_params(average_power=0.0)  # Theorem 13's h_bar: the uniform mean
    est.partial_fit(X, y, classes=classes)
    return est


class ValidationConversionResult(NamedTuple):
    """Outcome of :func:`online_to_batch_validation`.

    Attributes
    ----------
    estimator : the candidate with the smallest validation error (the first one on ties).
    candidates : list of the ``n_blocks`` fitted candidates ``h'_1, ..., h'_s``.
    validation_errors : ndarray of shape (n_blocks,), 0-1 loss of each candidate on the
        validation set.
    n_examples : ndarray of int, shape (n_blocks,), number of examples of its block each candidate
        was trained on.
    best_index : int, index of ``estimator`` in ``candidates``.
    """

    estimator: object
    candidates: list
    validation_errors: np.ndarray
    n_examples: np.ndarray
    best_index: int


def online_to_batch_validation(
    estimator, X, y, X_val, y_val, n_blocks=5, random_state=None, classes=None
) -> ValidationConversionResult:
    """Online-to-batch conversion "Validation", thesis App. B.3.3 (Theorem 12).

    The sequence is cut into ``s = n_blocks`` consecutive blocks of (about) ``T/s`` examples. The
    online algorithm is reset at the start of every block (a fresh clone); in block ``i`` one
    hypothesis ``h'_i`` is picked uniformly at random among the block's online hypotheses, i.e.
    the model after a uniformly random number ``r_i`` in ``{1, ..., len(block)}`` of the block's
    examples (one ``partial_fit`` call on the block's first ``r_i`` rows; see
    :func:`online_to_batch_last` for the indexing). With probability at least ``1 - e^{-s}`` one
    of ``h'_1, ..., h'_s`` has low risk (Theorem 12); the candidate with the smallest 0-1 loss on
    the fresh validation set ``(X_val, y_val)`` is returned.

    Parameters
    ----------
    estimator : online classifier
        Cloned, never modified.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    X_val : {array-like, sparse matrix} of shape (n_val, n_features)
    y_val : array-like of shape (n_val,)
        Validation set, disjoint from the training sequence.
    n_blocks : int, default=5
        ``s``, between 1 and ``n_samples``; blocks follow ``numpy.array_split``.
    random_state : int, RandomState instance or None
        Draws the ``r_i``; the result is reproducible for a fixed seed.
    classes : array-like, default=None
        All classes (``None``: ``numpy.unique(y)``), announced to every block's learner.

    Returns
    -------
    ValidationConversionResult
        ``(estimator, candidates, validation_errors, n_examples, best_index)``; ``result.estimator``
        (or ``result[0]``) is the selected fitted model.
    """
    X, y = _check_Xy(X, y)
    X_val, y_val = _check_Xy(X_val, y_val, "X_val", "y_val")
    classes = _classes(y, classes)
    n = y.shape[0]
    if int(n_blocks) != n_blocks or not 1 <= n_blocks <= n:
        raise ValueError(f"n_blocks must be an integer in [1, {n}], got {n_blocks!r}.")
    rng = check_random_state(random_state)
    sizes = [len(block) for block in np.array_split(np.arange(n), int(n_blocks))]
    bounds = np.cumsum([0, *sizes])

    candidates, errors, counts = [], [], []
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        r = int(rng.randint(1, stop - start + 1))
        est = clone(estimator)
        est.partial_fit(X[start : start + r], y[start : start + r], classes=classes)
        candidates.append(est)
        counts.append(r)
        errors.append(float(np.mean(np.asarray(est.predict(X_val)) != y_val)))
    errors = np.asarray(errors)
    best = int(np.argmin(errors))
    return ValidationConversionResult(
        candidates[best], candidates, errors, np.asarray(counts, dtype=np.int64), best
    )
