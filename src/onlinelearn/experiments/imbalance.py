"""COPA on real imbalanced multiclass data: a comparison with PA-I, the Perceptron and a
class-balanced linear SVM.

What
    For each data set, one seeded split into a training and a test part; on the training part a
    second, stratified split (``val_size``) chooses C of every learner that has one, over a
    small grid, by the criterion ``select_by`` measured on the validation part; the learner is
    then refitted with that C on the whole training part and evaluated on the test part.
    Reported per learner: test accuracy, balanced accuracy (mean recall over the classes,
    ``sklearn.metrics.balanced_accuracy_score``), ``||C(h)||`` the operator norm of the
    class-conditional confusion matrix with zeroed diagonal (COPA paper eqs. (4)-(5),
    :func:`onlinelearn.metrics.confusion_operator_norm`, over all classes of the data set), and
    the wall-clock time of the final fit (numba compilation excluded by a warm-up fit).

Learners
    * ``COPA, C``: :class:`onlinelearn.COPA` with a plain cost C (problem (18),
      ``class_weight=None``);
    * ``COPA, C/T_y^2``: the class-normalised cost of eq. (17) (``class_weight='confusion'``);
    * ``PA-I``: :class:`onlinelearn.PassiveAggressiveClassifier` ``(variant='PA-I')``;
    * ``Perceptron``: :class:`onlinelearn.Perceptron` (no C);
    * ``LinearSVC balanced``: ``sklearn.svm.LinearSVC(class_weight='balanced')``, a batch
      one-vs-rest SVM whose hinge losses are reweighted by n / (Q n_y).

    The online learners all make ``epochs`` shuffled (seeded) passes, fit an intercept and
    predict with the averaged hypothesis (``average=True``, as Algorithm 1 of the COPA paper
    returns).

Data sets
    * PMLB ``shuttle``, ``sleep``, ``krkopt`` (any PMLB name of the shared folder works): a
      stratified, seeded train/test split (``test_size``); features standardised with the mean
      and standard deviation of the training part.
    * ``news20``: the 20 newsgroups "bydate" TF-IDF split.  Its training part is made
      imbalanced: ``news20_keep`` classes drawn at random (seeded) keep all their training
      examples, the others keep a random ``news20_fraction`` of them (at least one); the test
      part is left as it is (roughly balanced), so that the test figures show how the
      minority classes are recognised.  No scaling (the rows have unit norm).

    ``max_rows`` subsamples a data set (before the split, stratified) for quick runs; every
    class keeps at least ``min(n_class, 6)`` examples so that the stratified splits stay
    possible.

C grids (``select_by`` chooses among them)
    PA-I, COPA with plain C and LinearSVC: ``C_grid`` (default 0.001 to 100 in steps of x10).
    COPA with C / T_y^2: the same multipliers times (n_fit / Q)^2, n_fit the number of fitting
    rows, so that a class of average size gets the per-example cost of the plain grid; the C
    reported is the actual argument of ``COPA``.  Ties are broken by the other criterion, then
    the smaller C.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..linear.copa import COPA
from ..linear.passive_aggressive import PassiveAggressiveClassifier
from ..linear.perceptron import Perceptron
from ..metrics import confusion_operator_norm

__all__ = [
    "DEFAULT_DATASETS",
    "LEARNERS",
    "ImbalanceResult",
    "LearnerResult",
    "DatasetResult",
    "run_imbalance_study",
]

DEFAULT_DATASETS = ("shuttle", "sleep", "krkopt", "news20")
LEARNERS = ("COPA, C", "COPA, C/T_y^2", "PA-I", "Perceptron", "LinearSVC balanced")
DEFAULT_C_GRID = (0.001, 0.01, 0.1, 1.0, 10.0, 100.0)
MIN_PER_CLASS = 6


@dataclass
class LearnerResult:
    """Test figures of one learner on one data set."""

    learner: str
    C: float | None
    accuracy: float
    balanced_accuracy: float
    confusion_norm: float
    fit_seconds: float
    predictions: np.ndarray = field(repr=False)
    validation: list = field(default_factory=list, repr=False)  # [(C, norm, bal. accuracy)]


@dataclass
class DatasetResult:
    """One data set: its description, the test labels and every learner's figures."""

    name: str
    n_train: int
    n_test: int
    n_features: int
    classes: np.ndarray
    train_counts: np.ndarray
    y_test: np.ndarray = field(repr=False)
    learners: dict = field(default_factory=dict)  # learner name -> LearnerResult

    @property
    def imbalance_ratio(self) -> float:
        """Largest over smallest class count of the training part."""
        return float(self.train_counts.max() / self.train_counts.min())


@dataclass
class ImbalanceResult:
    """What :func:`run_imbalance_study` returns: one :class:`DatasetResult` per data set."""

    datasets: list
    settings: dict

    def format_table(self) -> str:
        """A Markdown table, one row per (data set, learner)."""
        lines = [
            "| data set | learner | C | accuracy | balanced acc. | ‖C(h)‖ | fit time (s) |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for ds in self.datasets:
            head = (
                f"{ds.name} ({ds.n_train}/{ds.n_test}, Q={len(ds.classes)}, "
                f"ratio {ds.imbalance_ratio:.0f})"
            )
            best_bacc = max(r.balanced_accuracy for r in ds.learners.values())
            best_norm = min(r.confusion_norm for r in ds.learners.values())
            for i, r in enumerate(ds.learners.values()):
                c = "—" if r.C is None else f"{r.C:.3g}"
                bacc = f"{r.balanced_accuracy:.3f}"
                norm = f"{r.confusion_norm:.3f}"
                if r.balanced_accuracy == best_bacc:
                    bacc = f"**{bacc}**"
                if r.confusion_norm == best_norm:
                    norm = f"**{norm}**"
                lines.append(
                    f"| {head if i == 0 else ''} | {r.learner} | {c} | {r.accuracy:.3f} "
                    f"| {bacc} | {norm} | {r.fit_seconds:.2f} |"
                )
        return "\n".join(lines)


# -- data ---------------------------------------------------------------------------------------


def _stratified_subsample(y, n_rows, rng):
    """Indices of about n_rows rows, each class in proportion, at least min(n_c, 6) per class."""
    classes, y_idx, counts = np.unique(y, return_inverse=True, return_counts=True)
    frac = min(1.0, n_rows / len(y))
    keep = []
    for k, n_c in enumerate(counts):
        rows = np.flatnonzero(y_idx == k)
        m = max(int(round(frac * n_c)), min(n_c, MIN_PER_CLASS))
        keep.append(rng.choice(rows, size=m, replace=False))
    return np.sort(np.concatenate(keep))


def _load_pmlb(name, test_size, max_rows, rng, seed):
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from ..datasets import load_pmlb

    X, y = load_pmlb(name)
    if max_rows is not None and max_rows < len(y):
        idx = _stratified_subsample(y, max_rows, rng)
        X, y = X[idx], y[idx]
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=test_size, stratify=y, random_state=seed
    )
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), y_tr, scaler.transform(X_te), y_te


def _load_news20(keep, fraction, max_rows, rng):
    from ..datasets import load_shared

    X, y = load_shared("news20", "train")
    X_te, y_te = load_shared("news20", "test")
    classes = np.unique(y)
    if not 0 <= keep <= len(classes):
        raise ValueError(f"news20_keep must be in [0, {len(classes)}], got {keep}")
    whole = set(rng.choice(classes, size=keep, replace=False).tolist())
    rows = []
    for c in classes:
        idx = np.flatnonzero(y == c)
        if c not in whole:
            idx = rng.choice(idx, size=max(1, int(round(fraction * len(idx)))), replace=False)
        rows.append(idx)
    rows = np.sort(np.concatenate(rows))
    X, y = X[rows], y[rows]
    if max_rows is not None and max_rows < len(y):
        idx = _stratified_subsample(y, max_rows, rng)
        X, y = X[idx], y[idx]
        test_rows = np.sort(rng.choice(len(y_te), size=min(len(y_te), max_rows), replace=False))
        X_te, y_te = X_te[test_rows], y_te[test_rows]
    return X, y, X_te, y_te


# -- learners -----------------------------------------------------------------------------------


def _make(learner, C, epochs, seed):
    common = {"n_epochs": epochs, "average": True, "random_state": seed}
    if learner == "COPA, C":
        return COPA(C=C, class_weight=None, **common)
    if learner == "COPA, C/T_y^2":
        return COPA(C=C, class_weight="confusion", **common)
    if learner == "PA-I":
        return PassiveAggressiveClassifier(variant="PA-I", C=C, **common)
    if learner == "Perceptron":
        return Perceptron(**common)
    if learner == "LinearSVC balanced":
        from sklearn.svm import LinearSVC

        return LinearSVC(C=C, class_weight="balanced", random_state=seed)
    raise ValueError(f"unknown learner {learner!r}; known: {LEARNERS}")


def _grid(learner, C_grid, n_fit, n_classes):
    if learner == "Perceptron":
        return [None]
    if learner == "COPA, C/T_y^2":
        scale = (n_fit / n_classes) ** 2
        return [c * scale for c in C_grid]
    return list(C_grid)


def _scores(y_true, pred, labels):
    from sklearn.metrics import balanced_accuracy_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a class predicted but absent from y_true
        bacc = float(balanced_accuracy_score(y_true, pred))
    return (
        float(np.mean(pred == y_true)),
        bacc,
        confusion_operator_norm(y_true, pred, labels=labels),
    )


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LinearSVC ConvergenceWarning: its C is still measured
        return est.fit(X, y)


def _select(learner, X_fit, y_fit, X_val, y_val, labels, C_grid, epochs, seed, select_by):
    rows = []
    for C in _grid(learner, C_grid, len(y_fit), len(labels)):
        est = _fit(_make(learner, C, epochs, seed), X_fit, y_fit)
        _, bacc, norm = _scores(y_val, np.asarray(est.predict(X_val)), labels)
        rows.append((C, norm, bacc))
    if select_by == "confusion_norm":
        key = lambda r: (r[1], -r[2], r[0] if r[0] is not None else 0.0)  # noqa: E731
    else:
        key = lambda r: (-r[2], r[1], r[0] if r[0] is not None else 0.0)  # noqa: E731
    return min(rows, key=key)[0], rows


def _run_one(
    name, X_tr, y_tr, X_te, y_te, learners, C_grid, epochs, seed, val_size, select_by, say
):
    from sklearn.model_selection import train_test_split

    labels = np.unique(np.concatenate([y_tr, y_te]))
    idx_fit, idx_val = train_test_split(
        np.arange(len(y_tr)), test_size=val_size, stratify=y_tr, random_state=seed
    )
    X_fit, y_fit, X_val, y_val = X_tr[idx_fit], y_tr[idx_fit], X_tr[idx_val], y_tr[idx_val]
    ds = DatasetResult(
        name=name,
        n_train=len(y_tr),
        n_test=len(y_te),
        n_features=X_tr.shape[1],
        classes=labels,
        train_counts=np.array([np.count_nonzero(y_tr == c) for c in labels]),
        y_test=y_te,
    )
    for learner in learners:
        say(f"{name}: {learner}")
        C, val_rows = _select(
            learner, X_fit, y_fit, X_val, y_val, labels, C_grid, epochs, seed, select_by
        )
        # warm-up on a small slice so that the timed fit excludes numba compilation
        _fit(_make(learner, C, 1, seed), X_fit[: min(200, len(y_fit))], y_fit[:200])
        est = _make(learner, C, epochs, seed)
        t0 = time.perf_counter()
        _fit(est, X_tr, y_tr)
        secs = time.perf_counter() - t0
        pred = np.asarray(est.predict(X_te))
        acc, bacc, norm = _scores(y_te, pred, labels)
        ds.learners[learner] = LearnerResult(learner, C, acc, bacc, norm, secs, pred, val_rows)
    return ds


def run_imbalance_study(
    datasets=DEFAULT_DATASETS,
    *,
    learners=LEARNERS,
    epochs=5,
    C_grid=DEFAULT_C_GRID,
    select_by="confusion_norm",
    test_size=0.3,
    val_size=0.25,
    max_rows=None,
    news20_keep=5,
    news20_fraction=0.1,
    random_state=0,
    progress=None,
):
    """Run the imbalance study described in the module docstring.

    Parameters
    ----------
    datasets : sequence of str
        PMLB names of the shared data folder and/or ``'news20'``.
    learners : sequence of str
        A subset of :data:`LEARNERS`.
    epochs : int
        Passes of every online learner (the same for all).
    C_grid : sequence of float
        Candidate values of C (positive); scaled by (n_fit / Q)^2 for COPA with C / T_y^2.
    select_by : {'confusion_norm', 'balanced_accuracy'}
        Validation criterion for C: the smallest ``||C(h)||`` or the largest balanced accuracy.
    test_size, val_size : float
        Fractions of a PMLB set held out for testing, and of the training part held out for
        choosing C (news20 keeps its own test split).
    max_rows : int or None
        Subsample every data set to about this many rows (quick runs); None uses all.
    news20_keep, news20_fraction : int, float
        news20 training part: classes kept whole, and the fraction kept of the others.
    random_state : int
        Seed of the subsampling, the splits and the learners' shuffling.
    progress : callable or None
        Called with a short message before each data set and learner.

    Returns
    -------
    ImbalanceResult
    """
    learners = tuple(learners)
    unknown = [x for x in learners if x not in LEARNERS]
    if unknown or not learners:
        raise ValueError(f"learners must be a nonempty subset of {LEARNERS}, got {learners}")
    if select_by not in ("confusion_norm", "balanced_accuracy"):
        raise ValueError(
            f"select_by must be 'confusion_norm' or 'balanced_accuracy', got {select_by!r}"
        )
    C_grid = tuple(float(c) for c in C_grid)
    if not C_grid or not all(np.isfinite(c) and c > 0 for c in C_grid):
        raise ValueError(f"C_grid must be nonempty and positive, got {C_grid}")
    if int(epochs) != epochs or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    if max_rows is not None and max_rows < 50:
        raise ValueError(f"max_rows must be at least 50, got {max_rows}")
    if not 0 < news20_fraction <= 1:
        raise ValueError(f"news20_fraction must be in (0, 1], got {news20_fraction}")
    say = progress or (lambda msg: None)
    results = []
    for name in datasets:
        rng = np.random.default_rng(random_state)
        say(f"{name}: loading")
        if name == "news20":
            parts = _load_news20(news20_keep, news20_fraction, max_rows, rng)
        else:
            parts = _load_pmlb(name, test_size, max_rows, rng, random_state)
        say(f"{name}: {len(parts[1])} training / {len(parts[3])} test rows")
        results.append(
            _run_one(
                name,
                *parts,
                learners,
                C_grid,
                int(epochs),
                random_state,
                val_size,
                select_by,
                say,
            )
        )
    settings = {
        "epochs": int(epochs),
        "C_grid": C_grid,
        "select_by": select_by,
        "test_size": test_size,
        "val_size": val_size,
        "max_rows": max_rows,
        "news20_keep": news20_keep,
        "news20_fraction": news20_fraction,
        "random_state": random_state,
    }
    return ImbalanceResult(results, settings)
