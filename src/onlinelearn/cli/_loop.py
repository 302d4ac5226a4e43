"""The training loop over a file's chunks: reading them (a damaged file fails in one line naming
it), predict-then-learn on each chunk, the shuffle buffer, the watch for labels sorted in long
runs, the progress table, the note that numba compiles, and the check of the model's size."""

from __future__ import annotations

import contextlib
import lzma
import os
import zlib

from ._options import CLIError, _error_message, _format_label

#: what a damaged compressed file raises while it is read (gzip and bz2 raise OSError)
_DECOMPRESSION_ERRORS = (lzma.LZMAError, zlib.error, OSError)


# -- reading the chunks and learning them -------------------------------------------------------


class _ProgressTable:
    """Vowpal Wabbit style progress lines at example counts 1, 2, 4, 8, ..."""

    HEADER = (
        f"{'average':>10} {'since':>10} {'example':>12} {'current':>10} {'current':>10}\n"
        f"{'loss':>10} {'last':>10} {'counter':>12} {'label':>10} {'predict':>10}"
    )

    def __init__(self, write):
        self.write = write
        self.seen = 0
        self.mistakes = 0
        self.next_print = 1
        self.last_seen = 0
        self.last_mistakes = 0
        self._last = None
        self.write(self.HEADER)

    def _line(self, label, pred) -> None:
        avg = self.mistakes / self.seen
        n_since = self.seen - self.last_seen
        since = (self.mistakes - self.last_mistakes) / n_since if n_since else float("nan")
        self.write(
            f"{avg:>10.6f} {since:>10.6f} {self.seen:>12d} "
            f"{_format_label(label):>10} {_format_label(pred):>10}"
        )
        self.last_seen, self.last_mistakes = self.seen, self.mistakes

    def update(self, y, pred, loss=None) -> None:
        """Add a chunk: labels ``y``, predictions ``pred`` (None: not shown) and the loss of each
        row (default: the mistakes ``y != pred``)."""
        import numpy as np

        n = len(y)
        if n == 0:
            return
        if loss is None:
            loss = np.asarray(y != pred)
        if pred is None:
            pred = [None] * n
        cum = np.cumsum(np.asarray(loss, dtype=np.float64))
        base_seen, base_mistakes = self.seen, self.mistakes
        while self.next_print <= base_seen + n:
            i = self.next_print - base_seen - 1  # row of this chunk that reaches the count
            self.seen = self.next_print
            self.mistakes = base_mistakes + float(cum[i])
            self._line(y[i], pred[i])
            self.next_print *= 2
        self.seen = base_seen + n
        self.mistakes = base_mistakes + float(cum[-1])
        self._last = (y[-1], pred[-1])

    def finish(self) -> None:
        """Print the final counts unless the last line already shows them."""
        if self.seen and self.seen != self.last_seen:
            self._line(*self._last)


def _read_error(exc: BaseException) -> str:
    what = _error_message(exc)
    if isinstance(exc, EOFError):
        return f"the compressed file ends early (truncated?): {what}"
    if isinstance(exc, OverflowError):
        return f"a feature index or label is too large (at most 2**31 - 2 features): {what}"
    if not isinstance(exc, OSError):
        return f"the compressed data is corrupted: {what}"
    return what


@contextlib.contextmanager
def _reading(path, where):
    """Turn a failure of the file itself (truncated or corrupted compressed data, an index
    beyond what the parser reads) into a one-line error naming the file and ``where()``."""
    try:
        yield
    except (EOFError, OverflowError, *_DECOMPRESSION_ERRORS) as exc:
        if isinstance(exc, OSError) and exc.filename is not None:
            raise
        raise CLIError(f"{path}: {where()}: {_read_error(exc)}") from None


def _chunks(reader, path):
    """Iterate ``reader``; a failure names the file and the lines of the chunk being read."""
    while True:
        before = reader.lines_read
        with _reading(path, lambda b=before: f"in the lines from line {b + 1} on"):
            try:
                chunk = next(reader)
            except StopIteration:
                return
        yield chunk


def _ranking_labels(y):
    """Multi-label rows (tuples of floats) as tuples of ints where they are whole numbers."""
    return [tuple(int(v) if float(v).is_integer() else v for v in row) for row in y]


def _learn_step(est, X, y, task: str, classes=None, sample_weight=None):
    """Predict-then-learn one chunk: ``(predictions or None, loss of each row)``.

    Classification: the mistakes of ``partial_fit_predict`` (or, for a learner without it, of
    ``predict`` with the model before the chunk; the first row of a new model is learned alone
    first and counted as a mistake).  Regression: the squared errors.  Ranking: the ranking
    mistakes of ``partial_fit_mistakes``.  ``classes``: every label, for the first call of a
    learner that cannot add labels later.
    """
    import numpy as np

    if sample_weight is not None:  # importance weights of VW lines
        if task == "ranking" or not hasattr(est, "partial_fit_predict"):
            raise ValueError("importance weights need a learner with partial_fit_predict")
        pred = np.asarray(est.partial_fit_predict(X, y, sample_weight=sample_weight))
        if task == "regression":
            return pred, (pred - y) ** 2
        return pred, np.asarray(pred != y, dtype=np.float64)
    if task == "ranking":  # the ranking learners count their mistakes (thesis Sec. 8.2)
        y = _ranking_labels(y)
        return None, np.asarray(est.partial_fit_mistakes(X, y), dtype=np.float64)
    if hasattr(est, "partial_fit_predict"):
        pred = np.asarray(est.partial_fit_predict(X, y))
    else:
        from sklearn.exceptions import NotFittedError

        try:
            pred = np.asarray(est.predict(X))
            est.partial_fit(X, y)
        except NotFittedError:  # a new model has no prediction for its first row: a mistake
            est.partial_fit(X[:1], y[:1], **({} if classes is None else {"classes": classes}))
            rest = np.asarray(est.predict(X[1:])) if len(y) > 1 else np.empty(0, y.dtype)
            if len(y) > 1:
                est.partial_fit(X[1:], y[1:])
            pred = np.empty(len(y), dtype=object)
            pred[0], pred[1:] = None, rest
            loss = np.concatenate([[1.0], np.asarray(rest != y[1:], dtype=np.float64)])
            return pred, loss
    if task == "regression":
        return pred, (pred - y) ** 2
    return pred, np.asarray(pred != y, dtype=np.float64)


def _learn_chunk(est, X, y, path, first_line, last_line, task="classification", classes=None,
                 sample_weight=None):  # fmt: skip
    """:func:`_learn_step` on one chunk; a rejected chunk names the file and its lines."""
    try:
        return _learn_step(est, X, y, task, classes, sample_weight)
    except (ValueError, FloatingPointError, OverflowError, MemoryError) as exc:
        raise CLIError(f"{path}: lines {first_line}-{last_line}: {_error_message(exc)}") from None


# -- streams: shuffling, sorted labels, compilation ---------------------------------------------


def _take_rows(y, idx):
    import numpy as np

    if isinstance(y, list):
        return [y[i] for i in idx.tolist()]
    return np.asarray(y)[idx]


def _concat_rows(parts):
    import numpy as np
    import scipy.sparse as sp

    X = sp.vstack([p[0] for p in parts], format="csr")
    ys = [p[1] for p in parts]
    y = [v for part in ys for v in part] if isinstance(ys[0], list) else np.concatenate(ys)
    return X, y


class _ShuffleBuffer:
    """A seeded shuffle buffer of ``size`` rows over a stream of ``(X, y)`` chunks.

    Each arriving chunk joins the rows held; when more than ``size`` rows are held, a uniformly
    random subset of the excess is emitted (in random order) and the rest is kept; at the end the
    rows left are emitted in random order.  A row is thus emitted at a random time among the
    ``size`` rows that arrive after it, which breaks runs shorter than about ``size`` rows.
    """

    def __init__(self, size: int, seed):
        import numpy as np

        self.size = int(size)
        self.rng = np.random.default_rng(seed)
        self.held = None

    def push(self, X, y):
        """The rows to learn now (possibly none: ``None``)."""
        pool = _concat_rows([self.held, (X, y)]) if self.held is not None else (X, y)
        n = pool[0].shape[0]
        if n <= self.size:
            self.held = pool
            return None
        perm = self.rng.permutation(n)
        out, keep = perm[: n - self.size], perm[n - self.size :]
        keep.sort()
        self.held = (pool[0][keep], _take_rows(pool[1], keep))
        return pool[0][out], _take_rows(pool[1], out)

    def drain(self):
        """The rows left, in random order (``None`` if none)."""
        if self.held is None or self.held[0].shape[0] == 0:
            return None
        X, y = self.held
        self.held = None
        perm = self.rng.permutation(X.shape[0])
        return X[perm], _take_rows(y, perm)


class _LabelRuns:
    """Watch the first rows' labels for long runs of one label (a file sorted by label).

    A shuffled stream with label frequencies p changes label between consecutive rows with
    probability 1 - sum p^2; a file sorted by label changes only at the class boundaries.  When
    the changes seen are fewer than a tenth of what a shuffled order would give (and that is at
    least 30), :meth:`verdict` returns a warning once.
    """

    #: rows watched (the warning must come early)
    WATCH = 200_000

    def __init__(self):
        self.rows = 0
        self.changes = 0
        self.counts = {}
        self.last = None
        self.longest = 0
        self.run = 0
        self.warned = False

    def update(self, y) -> None:
        import numpy as np

        if self.rows >= self.WATCH or self.warned or len(y) == 0:
            return
        if isinstance(y, list):  # label sets (ranking): one integer per set
            y = np.asarray([hash(tuple(v)) for v in y], dtype=np.int64)
        y = np.asarray(y)
        boundary_same = self.last is not None and self.last == y[0]
        labels, counts = np.unique(y, return_counts=True)
        for lab, c in zip(labels.tolist(), counts.tolist(), strict=True):
            self.counts[lab] = self.counts.get(lab, 0) + c
        change = np.flatnonzero(y[1:] != y[:-1])
        self.changes += len(change) + (0 if self.last is None or boundary_same else 1)
        # the longest run so far
        edges = np.concatenate([[-1], change, [len(y) - 1]])
        runs = np.diff(edges)
        first_run = int(runs[0]) + (self.run if boundary_same else 0)
        self.longest = max(self.longest, first_run, int(runs.max()))
        self.run = int(runs[-1]) if len(runs) > 1 else first_run
        self.last = y[-1]
        self.rows += len(y)

    def verdict(self) -> str | None:
        if self.warned or self.rows < 2:
            return None
        p = [c / self.rows for c in self.counts.values()]
        expected = (self.rows - 1) * (1.0 - sum(q * q for q in p))
        if expected < 30 or self.changes >= 0.1 * expected:
            return None
        self.warned = True
        return (
            f"warning: the labels arrive in long sorted runs ({self.changes} change(s) of label "
            f"in the first {self.rows} rows, where a shuffled order would give about "
            f"{expected:.0f}; longest run so far {self.longest} rows): an online learner then "
            "mostly predicts the label it saw last, and the progressive loss looks low while "
            "the model is poor; shuffle the file first (e.g. shuf), or pass --shuffle-buffer N "
            f"with N much larger than the runs (e.g. --shuffle-buffer "
            f"{max(20 * self.longest, 10000)}; as many rows as the file shuffles it fully)"
        )


@contextlib.contextmanager
def _announce_compilation(say):
    """Call ``say`` once when numba compiles a function (a miss of its on-disk cache)."""
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover - numba is a dependency
        yield
        return

    class _Once(event.Listener):
        said = False

        def on_start(self, ev):
            if not self.said:
                self.said = True
                say(
                    "compiling, once: the compiled code is cached on disk, later runs start "
                    "at once"
                )

        def on_end(self, ev):
            pass

    listener = _Once()
    event.register("numba:compile", listener)
    try:
        yield listener
    finally:
        event.unregister("numba:compile", listener)


# -- the model's size ---------------------------------------------------------------------------


#: warn when one weight column of the model (all classes add as much) takes more bytes than this
_WARN_MODEL_BYTES = 2**30


def _check_model_size(n_features: int, average: bool, say_warning, what=None) -> None:
    """Refuse a number of features whose weights alone cannot fit in memory, warn above 1 GiB
    (one weight column; every class adds as much)."""
    from onlinelearn.shell.validation import MAX_N_FEATURES

    what = what or f"--n-features {n_features}"
    if n_features > MAX_N_FEATURES:
        raise CLIError(
            f"{what} is larger than {MAX_N_FEATURES} (2**31 - 2), the most features onlinelearn "
            "supports"
        )
    per_column = (n_features + 1) * 8 * (3 if average else 1)
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        memory = None
    gib = per_column / 2**30
    if memory is not None and per_column > memory:
        raise CLIError(
            f"{what} needs {gib:.1f} GiB of weights per class, more than "
            f"this machine's {memory / 2**30:.1f} GiB of memory; leave --n-features out to use "
            "the highest index of the file"
        )
    if per_column > _WARN_MODEL_BYTES:
        say_warning(
            f"warning: {what} needs {gib:.1f} GiB of weights per class "
            "(times the number of classes); leave --n-features out to use the highest index "
            "of the file"
        )
