"""Command line interface: ``onlinelearn train | predict | evaluate | demo | reproduce``.

Run ``onlinelearn --help`` or ``onlinelearn <command> --help`` for the options and an example of
each command.  Errors (missing file, malformed data line, corrupted model file, bad option) print
one line to stderr and exit with status 2; set ``ONLINELEARN_DEBUG=1`` to see the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import lzma
import os
import sys
import time
import warnings
import zlib

import numpy as np

__all__ = ["main"]

#: what a damaged compressed file raises while it is read (gzip and bz2 raise OSError)
_DECOMPRESSION_ERRORS = (lzma.LZMAError, zlib.error, OSError)

#: learner name on the command line -> (class name in ``onlinelearn``, fixed parameters, takes C)
LEARNERS: dict[str, tuple[str, dict, bool]] = {
    "perceptron": ("Perceptron", {}, False),
    "pa": ("PassiveAggressiveClassifier", {"variant": "PA"}, False),
    "pa1": ("PassiveAggressiveClassifier", {"variant": "PA-I"}, True),
    "pa2": ("PassiveAggressiveClassifier", {"variant": "PA-II"}, True),
    "winnow": ("Winnow", {}, False),
    "pnorm": ("PNormPerceptron", {}, False),
    "copa": ("COPA", {}, True),
}


class CLIError(Exception):
    """An error to report in one line (exit status 2)."""


def _learner_class(class_name: str):
    try:
        import onlinelearn
    except ImportError as exc:  # pragma: no cover - broken installation
        raise CLIError(f"cannot import onlinelearn: {exc}") from None
    cls = getattr(onlinelearn, class_name, None)
    if cls is None:
        raise CLIError(f"learner {class_name} is not available in this version of onlinelearn")
    return cls


def _make_learner(name: str, C: float | None, average: bool | None, seed: int | None):
    class_name, fixed, takes_c = LEARNERS[name]
    params = dict(fixed)
    if C is not None:
        if not takes_c:
            with_c = ", ".join(k for k, v in LEARNERS.items() if v[2])
            raise CLIError(f"-C applies only to the learners {with_c}, not to {name}")
        params["C"] = C
    if average is not None:  # None: the learner's own default
        params["average"] = average
    if seed is not None:
        params["random_state"] = seed
    return _learner_class(class_name)(**params)


def _format_label(v) -> str:
    if isinstance(v, float | np.floating) and float(v).is_integer():
        return str(int(v))
    return str(v)


# -- train --------------------------------------------------------------------------------------


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

    def update(self, y, pred) -> None:
        n = len(y)
        if n == 0:
            return
        cum = np.cumsum(np.asarray(y != pred, dtype=np.int64))
        base_seen, base_mistakes = self.seen, self.mistakes
        while self.next_print <= base_seen + n:
            i = self.next_print - base_seen - 1  # row of this chunk that reaches the count
            self.seen = self.next_print
            self.mistakes = base_mistakes + int(cum[i])
            self._line(y[i], pred[i])
            self.next_print *= 2
        self.seen = base_seen + n
        self.mistakes = base_mistakes + int(cum[-1])
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


def _learn_chunk(est, X, y, path, first_line, last_line):
    """``partial_fit_predict`` on one chunk; a rejected chunk names the file and its lines."""
    try:
        return np.asarray(est.partial_fit_predict(X, y))
    except (ValueError, FloatingPointError, OverflowError, MemoryError) as exc:
        raise CLIError(f"{path}: lines {first_line}-{last_line}: {_error_message(exc)}") from None


def _resumed_learner(args):
    """The model of ``--resume``, after checking that no option contradicts it."""
    from onlinelearn.model_io import load_model

    for flag, value in (
        ("--learner", args.learner),
        ("-C", args.C),
        ("--seed", args.seed),
    ):
        if value is not None:
            raise CLIError(f"{flag} cannot be combined with --resume: the model file fixes it")
    if args.average is not None:
        raise CLIError(
            "--average / --no-average cannot be combined with --resume: the model file fixes it"
        )
    est = load_model(args.resume)
    if args.n_features is not None and args.n_features != est.n_features_in_:
        raise CLIError(
            f"--n-features {args.n_features} differs from the {est.n_features_in_} features of "
            f"the model {args.resume}"
        )
    return est


#: warn when one weight column of the model (all classes add as much) takes more bytes than this
_WARN_MODEL_BYTES = 2**30


def _check_model_size(n_features: int, average: bool, say_warning, what=None) -> None:
    """Refuse a number of features whose weights alone cannot fit in memory, warn above 1 GiB
    (one weight column; every class adds as much)."""
    from onlinelearn._checks import MAX_N_FEATURES

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


def _cmd_train(args) -> int:
    from tqdm import tqdm

    from onlinelearn._atomic import check_writable
    from onlinelearn.io import iter_svmlight_chunks, svmlight_n_features
    from onlinelearn.model_io import save_model

    if args.epochs < 1:
        raise CLIError("--epochs must be at least 1")
    if args.chunk_size < 1:
        raise CLIError("--chunk-size must be at least 1")
    if not 0 < args.delta <= 1:
        raise CLIError(f"--delta must be in (0, 1], got {args.delta}")
    model_path = args.model if args.model is not None else args.resume
    for path in args.data:
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", path)
    check_writable(model_path)  # learn it now, not after the whole pass
    if args.resume is not None:
        est = _resumed_learner(args)
    else:
        est = _make_learner(args.learner or "perceptron", args.C, args.average, args.seed)
    if args.scheduler is not None:
        return _train_distributed(args, est, model_path)
    say = (lambda s: None) if args.quiet else (lambda s: tqdm.write(s, file=sys.stdout))
    n_features = args.n_features
    if args.resume is not None:
        n_features = int(est.n_features_in_)
    elif n_features is None:
        shown = args.data[0] if len(args.data) == 1 else f"{len(args.data)} files"
        say(f"scanning {shown} for the number of features (pass --n-features to skip this)")
        n_features, widest = 1, args.data[0]
        for path in args.data:
            with _reading(path, lambda: "while scanning for the number of features"):
                width = svmlight_n_features(path)
            if width > n_features:
                n_features, widest = width, path
        scanned = f"{widest}: the highest feature index, {n_features},"
    _check_model_size(
        n_features,
        bool(est.average),
        lambda s: print(s, file=sys.stderr),
        None if args.n_features is not None or args.resume is not None else scanned,
    )
    say(f"learner: {est!r}\nfeatures: {n_features}\n")
    table = _ProgressTable(say) if not args.quiet else None
    pair_counts = {} if type(est).__name__ == "COPA" else None  # (label, prediction), pass 1
    total_rows = total_mistakes = 0
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        for path in args.data:
            reader = iter_svmlight_chunks(path, chunk_size=args.chunk_size, n_features=n_features)
            desc = f"epoch {epoch + 1}/{args.epochs}" if args.epochs > 1 else "train"
            with (
                reader,
                tqdm(
                    total=reader.total_bytes,
                    unit="B",
                    unit_scale=True,
                    desc=desc,
                    disable=True if args.quiet else None,
                    file=sys.stderr,
                    leave=False,
                ) as bar,
            ):
                first_line = 1
                for X, y in _chunks(reader, path):
                    pred = _learn_chunk(est, X, y, path, first_line, reader.lines_read)
                    first_line = reader.lines_read + 1
                    total_rows += len(y)
                    total_mistakes += int(np.count_nonzero(pred != y))
                    if table is not None:
                        table.update(y, pred)
                    if pair_counts is not None and epoch == 0 and len(y):
                        pairs, n = np.unique(np.column_stack([y, pred]), axis=0, return_counts=True)
                        for (a, b), k in zip(pairs.tolist(), n.tolist(), strict=True):
                            pair_counts[a, b] = pair_counts.get((a, b), 0) + k
                    bar.update(reader.bytes_read - bar.n)
    elapsed = time.perf_counter() - t0
    if total_rows == 0:
        raise CLIError(f"{', '.join(args.data)}: no examples found")
    if table is not None:
        table.finish()
    save_model(est, model_path)
    say(
        f"\nfinished: {total_rows} examples ({args.epochs} pass(es)), {total_mistakes} "
        f"progressive mistakes (rate {total_mistakes / total_rows:.6f}), "
        f"{len(est.classes_)} classes, {elapsed:.2f} s\nmodel saved to {model_path}"
    )
    if pair_counts:
        say(_online_bound_text(pair_counts, est.classes_, args.delta))
    return 0


def _train_distributed(args, est, model_path) -> int:
    """``train --scheduler ADDRESS``: iterative parameter mixing, one shard per DATA file."""
    from onlinelearn.distributed import ParameterMixing, require_dask
    from onlinelearn.model_io import save_model

    if args.resume is not None:
        raise CLIError("--resume cannot be combined with --scheduler")
    try:
        distributed = require_dask()
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    if args.n_features is not None:
        _check_model_size(args.n_features, bool(est.average), lambda s: print(s, file=sys.stderr))
    t0 = time.perf_counter()
    try:
        client = distributed.Client(args.scheduler, timeout="20s")
    except OSError as exc:
        raise CLIError(f"cannot reach the Dask scheduler {args.scheduler}: {exc}") from None
    try:
        pm = ParameterMixing(est, n_epochs=args.epochs, client=client, n_features=args.n_features)
        pm.fit([os.fspath(p) for p in args.data])
    finally:
        client.close()
    save_model(pm.estimator_, model_path)  # only a complete mixture is ever written
    if not args.quiet:
        for n, rec in enumerate(pm.history_, 1):
            rows, mistakes = sum(rec["rows"]), sum(rec["mistakes"])
            print(
                f"epoch {n}: {rows} examples on {len(rec['rows'])} shards, {mistakes} online "
                f"mistakes (rate {mistakes / max(rows, 1):.6f}), updates per shard "
                f"{rec['updates']}"
            )
        print(
            f"finished: {args.epochs} mixing round(s), {len(pm.classes_)} classes, "
            f"{time.perf_counter() - t0:.2f} s\nmodel saved to {model_path}"
        )
    return 0


def _online_bound_text(pair_counts, classes, delta) -> str:
    """Theorem 1 of the COPA paper for the progressive predictions of the first pass.

    With the misclassification losses l_{q|p} = 1[h_{t-1}(x_t) = q] (M = 1) the empirical online
    confusion risk (Definition 4) is C_hat[p, q] = #{t : y_t = p, prediction q} / T_p off the
    diagonal, and ||C|| <= ||C_hat|| + sqrt(2Q sum_p 1/T_p log(Q/delta)) with probability at
    least 1 - delta (eq. (13); onlinelearn.metrics.confusion_risk_bound).
    """
    from onlinelearn.metrics import confusion_risk_bound

    labels = sorted(set(np.asarray(classes).tolist()) | {v for pair in pair_counts for v in pair})
    index = {v: i for i, v in enumerate(labels)}
    N = np.zeros((len(labels), len(labels)))
    for (a, b), k in pair_counts.items():
        N[index[a], index[b]] += k
    T = N.sum(axis=1)
    C_hat = np.divide(N, T[:, None], out=np.zeros_like(N), where=T[:, None] > 0)
    np.fill_diagonal(C_hat, 0.0)
    res = confusion_risk_bound(C_hat, T, M=1.0, delta=delta)
    return (
        f"confusion risk bound (COPA paper Theorem 1, misclassification losses of the first "
        f"pass, T = {int(T.sum())}): ||C_hat|| = {res.empirical_norm:.4f}; with probability >= "
        f"{1 - delta:g} the online confusion risk has norm <= {res.empirical_norm:.4f} + "
        f"{res.deviation:.4f} = {res.bound:.4f} (delta = {delta:g})"
    )


# -- predict / evaluate -------------------------------------------------------------------------


def _predict_file(est, path, chunk_size, label_dtype):
    from onlinelearn.io import iter_svmlight_chunks

    n_features = int(est.n_features_in_)
    with iter_svmlight_chunks(
        path, chunk_size=chunk_size, n_features=n_features, label_dtype=label_dtype
    ) as reader:
        first_line = 1
        for X, y in _chunks(reader, path):
            try:
                pred = np.asarray(est.predict(X))
            except (ValueError, FloatingPointError, OverflowError) as exc:
                raise CLIError(
                    f"{path}: lines {first_line}-{reader.lines_read}: {_error_message(exc)}"
                ) from None
            first_line = reader.lines_read + 1
            yield y, pred


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _cmd_predict(args) -> int:
    from onlinelearn._atomic import atomic_write
    from onlinelearn.model_io import load_model

    if args.output is not None:
        for what, other in (("the input file", args.data), ("the model file", args.model)):
            if _same_file(args.output, other):
                raise CLIError(f"-o {args.output} is {what}; write the predictions elsewhere")
    est = load_model(args.model)

    def write_all(out):
        for _, pred in _predict_file(est, args.data, args.chunk_size, None):
            out.write("".join(_format_label(p) + "\n" for p in pred.tolist()))

    if args.output is None:
        try:
            write_all(sys.stdout)
        finally:
            sys.stdout.flush()
        return 0
    # the output appears complete or not at all; an existing file stays until the last line
    with atomic_write(args.output, "w", encoding="utf-8") as out:
        write_all(out)
    return 0


def _format_matrix(M, labels, fmt) -> str:
    names = [_format_label(v) for v in labels]
    cells = [[fmt(v) for v in row] for row in M]
    width = max([len(n) for n in names] + [len(c) for row in cells for c in row] + [4])
    lines = [" " * (width + 2) + " ".join(f"{n:>{width}}" for n in names)]
    for name, row in zip(names, cells, strict=True):
        lines.append(f"{name:>{width}}  " + " ".join(f"{c:>{width}}" for c in row))
    return "\n".join(lines)


def _cmd_evaluate(args) -> int:
    from sklearn.metrics import balanced_accuracy_score, confusion_matrix

    from onlinelearn.model_io import load_model

    est = load_model(args.model)
    ys, ps = [], []
    for y, pred in _predict_file(est, args.data, args.chunk_size, np.int64):
        ys.append(y)
        ps.append(pred)
    if not ys or sum(len(y) for y in ys) == 0:
        raise CLIError(f"{args.data}: no examples found")
    y = np.concatenate(ys)
    pred = np.concatenate(ps)
    labels = np.union1d(np.unique(y), np.asarray(est.classes_))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # labels that are predicted but absent from y
        bacc = balanced_accuracy_score(y, pred)
    acc = float(np.mean(y == pred))
    print(f"examples:           {len(y)}")
    print(f"accuracy:           {acc:.6f}")
    print(f"balanced accuracy:  {bacc:.6f}")
    print("\nconfusion matrix (rows: true label, columns: predicted label):")
    print(_format_matrix(confusion_matrix(y, pred, labels=labels), labels, str))
    try:
        from onlinelearn.metrics import confusion_matrix_conditional, operator_norm
    except ImportError:
        return 0
    C = confusion_matrix_conditional(y, pred, labels=labels)
    print("\nconditional confusion rates C[p, q] = P(predict q | true p), diagonal zeroed:")
    print(_format_matrix(C, labels, lambda v: f"{v:.4f}"))
    print(f"operator norm ||C||: {operator_norm(C):.6f}")
    return 0


# -- demo ---------------------------------------------------------------------------------------

_DEMO = [
    ("Perceptron (last iterate)", "Perceptron", {"average": False}),
    ("Perceptron (averaged)", "Perceptron", {}),
    ("PA-I (C=1, averaged)", "PassiveAggressiveClassifier", {"variant": "PA-I", "C": 1.0}),
    ("PA-II (C=1, averaged)", "PassiveAggressiveClassifier", {"variant": "PA-II", "C": 1.0}),
    ("Winnow", "Winnow", {}),
    ("p-norm Perceptron", "PNormPerceptron", {}),
    ("COPA (C=1, averaged)", "COPA", {"C": 1.0}),
    ("PA-I, last 2 dual variables", "DualAscentClassifier", {"step": "last-k", "k": 2}),
    ("AROW", "AROW", {}),
    ("SCW-I", "SCW", {}),
    ("weighted min-max (adaptive)", "WeightedMinMax", {"margin": "adaptive"}),
]


def _cmd_demo(args) -> int:
    import onlinelearn
    from onlinelearn.datasets import load_dna

    if args.epochs < 1:
        raise CLIError("--epochs must be at least 1")
    if args.plot:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise CLIError(
                "--plot needs matplotlib: pip install 'onlinelearn[plot]' (or matplotlib)"
            ) from None
    X, y = load_dna("train")
    Xt, yt = load_dna("test")
    classes = np.unique(y)
    print(
        f"DNA (LIBSVM, shipped): {X.shape[0]} training and {Xt.shape[0]} test examples, "
        f"{X.shape[1]} binary features, classes {classes.tolist()}\n"
        f"online mistake rate: progressive validation, one pass over the training set; "
        f"test accuracy after {args.epochs} pass(es)\n"
    )
    rows, curves, notes = [], [], []
    for label, class_name, params in _DEMO:
        cls = getattr(onlinelearn, class_name, None)
        if cls is None:
            notes.append(f"{label}: skipped ({class_name} is not available in this version)")
            continue
        try:
            # Warm-up on a few rows so that the timing below excludes numba compilation.
            cls(random_state=0, **params).partial_fit(X[:20], y[:20], classes=classes)
            est = cls(random_state=0, **params)
            t0 = time.perf_counter()
            pred = np.asarray(est.partial_fit_predict(X, y, classes=classes))
            for _ in range(args.epochs - 1):
                est.partial_fit(X, y)
            elapsed = time.perf_counter() - t0
            test_acc = float(np.mean(np.asarray(est.predict(Xt)) == yt))
        except Exception as exc:  # one failing learner must not hide the others
            notes.append(f"{label}: failed ({type(exc).__name__}: {exc})")
            continue
        wrong = pred != y
        rows.append((label, wrong.mean(), test_acc, elapsed))
        curves.append((label, np.cumsum(wrong) / np.arange(1, len(y) + 1)))
    if not rows:
        raise CLIError("no learner could be run: " + "; ".join(notes))
    width = max(len("learner"), max(len(r[0]) for r in rows))
    print(f"{'learner':<{width}}  {'online mistakes':>15}  {'test accuracy':>13}  {'time (s)':>8}")
    print(f"{'-' * width}  {'-' * 15}  {'-' * 13}  {'-' * 8}")
    for label, rate, acc, secs in rows:
        print(f"{label:<{width}}  {rate:>15.4f}  {acc:>13.4f}  {secs:>8.3f}")
    for note in notes:
        print(f"note: {note}")
    if args.plot:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        t = np.arange(1, len(y) + 1)
        for label, curve in curves:
            ax.plot(t, curve, label=label)
        ax.set_xscale("log")
        ax.set_xlabel("examples seen")
        ax.set_ylabel("cumulative mistake rate")
        ax.set_title("Progressive validation on DNA (training set, one pass)")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        plt.close(fig)
        print(f"\nplot written to {args.plot}")
    return 0


# -- argument parsing ---------------------------------------------------------------------------

_MAIN_DESCRIPTION = """\
Online learning of linear classifiers (Perceptron, Passive-Aggressive, Winnow, p-norm, COPA)
on svmlight / LIBSVM files: "label index:value index:value ..." with 1-based indices, plain or
compressed (.gz, .bz2, .xz).  Files are streamed in chunks, so they may be larger than memory.
"""

_MAIN_EPILOG = """\
examples:
  onlinelearn demo                                  # try it on the shipped DNA data
  onlinelearn train train.svm -m model.npz --learner pa1 -C 0.5
  onlinelearn evaluate test.svm -m model.npz
  onlinelearn predict test.svm -m model.npz -o predictions.txt
  onlinelearn reproduce copa-toy --plot toy.png    # the COPA paper's toy experiment
  onlinelearn reproduce imbalance --quick          # COPA on imbalanced real data

Errors print one line and exit with status 2; ONLINELEARN_DEBUG=1 shows the traceback.
"""

_TRAIN_DESCRIPTION = """\
Train a learner on an svmlight file in one streaming pass (or --epochs passes) and save it.

Each chunk of rows is first predicted, then learned from (progressive validation), so the
printed loss is an honest online error rate on examples the learner had not yet seen (in the
first pass).  Lines are printed at example counts 1, 2, 4, 8, ...: the mistake rate since the
start, the rate since the previous line, the example count, and that example's label and
prediction.  New labels are learned as they appear.  The model is saved as a pickle-free .npz
file that predict, evaluate and onlinelearn.model_io.load_model read.
"""

_TRAIN_EPILOG = """\
learners:
  perceptron  classic multiclass Perceptron (update on mistakes)
  pa          Passive-Aggressive, hard margin          pa1 / pa2  PA-I / PA-II with cap -C
  winnow      balanced Winnow (multiplicative)         pnorm      p-norm Perceptron
  copa        COPA, confusion-matrix oriented PA with -C; after training it also prints the
              confusion risk bound of the COPA paper (Theorem 1) for the first pass (--delta)

example:
  onlinelearn train a9a.bz2 -m a9a.npz --learner pa1 -C 0.1 --n-features 123 --average
"""

_PREDICT_DESCRIPTION = """\
Predict the label of every example of an svmlight file with a saved model, one label per line
(in file order).  The labels in the input file are ignored (any number, e.g. 0, will do).
"""

_PREDICT_EPILOG = """\
example:
  onlinelearn predict test.svm -m model.npz -o predictions.txt
"""

_EVALUATE_DESCRIPTION = """\
Evaluate a saved model on a labelled svmlight file: accuracy, balanced accuracy (mean recall
over the classes present), the confusion matrix of counts, and the class-conditional confusion
rates with their operator norm (the quantity COPA keeps small).
"""

_EVALUATE_EPILOG = """\
example:
  onlinelearn evaluate test.svm -m model.npz
"""

_DEMO_DESCRIPTION = """\
Compare the learners on the DNA data shipped with the package (3 classes, 180 features,
2000 training / 1186 test examples): one progressive-validation pass over the training set per
learner, then the accuracy of the final model on the test set.  Timings exclude numba
compilation (done once beforehand on a few rows).
"""

_DEMO_EPILOG = """\
example:
  onlinelearn demo --plot mistakes.png     # needs matplotlib: pip install 'onlinelearn[plot]'
"""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (value > 0 and np.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return value


def _add_chunk_size(p):
    p.add_argument(
        "--chunk-size", type=_positive_int, default=10000, help="rows per chunk (default: 10000)"
    )


def _add_model_in(p):
    p.add_argument("-m", "--model", required=True, help="model file written by train")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="onlinelearn",
        description=_MAIN_DESCRIPTION,
        epilog=_MAIN_EPILOG,
        formatter_class=fmt,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "train",
        help="train a model on an svmlight file (streaming) and save it",
        description=_TRAIN_DESCRIPTION,
        epilog=_TRAIN_EPILOG,
        formatter_class=fmt,
    )
    p.add_argument(
        "data",
        metavar="DATA",
        nargs="+",
        help="training data, svmlight format (several files: read one after the other; with "
        "--scheduler: one shard per file)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="train on a Dask cluster by iterative parameter mixing, one shard per DATA file "
        "(--epochs mixing rounds); needs pip install 'onlinelearn[dist]'",
    )
    p.add_argument(
        "-m",
        "--model",
        default=None,
        help="where to save the model (.npz); replaced atomically (default with --resume: the "
        "resumed file)",
    )
    p.add_argument(
        "--resume",
        metavar="MODEL",
        default=None,
        help="continue training this saved model on DATA (same result as one uninterrupted "
        "run over the same rows in the same order); learner, -C, --average and the number of "
        "features come from the model",
    )
    p.add_argument(
        "--learner", choices=sorted(LEARNERS), default=None, help="(default: perceptron)"
    )
    p.add_argument(
        "-C",
        type=_positive_float,
        default=None,
        help="aggressiveness cap for pa1, pa2 and copa (default: the learner's, 1.0)",
    )
    p.add_argument(
        "--epochs", type=_positive_int, default=1, help="passes over the file (default: 1)"
    )
    p.add_argument(
        "--average",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="predict with the average of the weights over all updates, or with the last "
        "weights (default: the learner's own default: averaged for perceptron, pa, pa1, pa2 "
        "and copa, last for winnow and pnorm)",
    )
    _add_chunk_size(p)
    p.add_argument(
        "--n-features",
        type=_positive_int,
        default=None,
        help="number of features; if left out, the file is scanned once to find the highest "
        "index (pass it when known: the highest index present may be lower)",
    )
    p.add_argument("--seed", type=int, default=None, help="random seed (random_state)")
    p.add_argument(
        "--delta",
        type=float,
        default=0.05,
        help="copa: confidence of the confusion risk bound printed after training (default 0.05)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=_cmd_train)

    p = sub.add_parser(
        "predict",
        help="write one predicted label per line",
        description=_PREDICT_DESCRIPTION,
        epilog=_PREDICT_EPILOG,
        formatter_class=fmt,
    )
    p.add_argument("data", metavar="DATA", help="data to predict, svmlight format")
    _add_model_in(p)
    p.add_argument("-o", "--output", default=None, help="output file (default: standard output)")
    _add_chunk_size(p)
    p.set_defaults(func=_cmd_predict)

    p = sub.add_parser(
        "evaluate",
        help="accuracy, balanced accuracy and confusion matrix of a model",
        description=_EVALUATE_DESCRIPTION,
        epilog=_EVALUATE_EPILOG,
        formatter_class=fmt,
    )
    p.add_argument("data", metavar="DATA", help="labelled test data, svmlight format")
    _add_model_in(p)
    _add_chunk_size(p)
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser(
        "demo",
        help="compare the learners on the shipped DNA data",
        description=_DEMO_DESCRIPTION,
        epilog=_DEMO_EPILOG,
        formatter_class=fmt,
    )
    p.add_argument("--plot", metavar="PNG", default=None, help="write the mistake curves here")
    p.add_argument(
        "--epochs",
        type=_positive_int,
        default=1,
        help="passes over the training set before testing (default: 1)",
    )
    p.set_defaults(func=_cmd_demo)

    from .reproduce import register as _register_reproduce

    _register_reproduce(sub, fmt)
    return parser


def _error_message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    if isinstance(exc, MemoryError):
        return f"out of memory ({exc})" if str(exc) else "out of memory"
    return str(exc) or type(exc).__name__


def main(argv: list[str] | None = None) -> int:
    """Run the command line interface; returns the exit status (0 ok, 2 error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "train" and args.model is None and args.resume is None:
        parser.error("train: the option -m/--model is required (or --resume MODEL)")
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `onlinelearn predict ... | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the final flush
        except OSError:  # pragma: no cover
            pass
        return 0
    except KeyboardInterrupt:
        print("onlinelearn: interrupted", file=sys.stderr)
        return 130
    except (
        CLIError,
        ValueError,
        OSError,
        EOFError,
        OverflowError,
        FloatingPointError,
        MemoryError,
        *_DECOMPRESSION_ERRORS,
    ) as exc:
        if os.environ.get("ONLINELEARN_DEBUG"):
            raise
        print(f"onlinelearn {args.command}: error: {_error_message(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: still one line, with the way to see more
        if os.environ.get("ONLINELEARN_DEBUG"):
            raise
        print(
            f"onlinelearn {args.command}: internal error: {type(exc).__name__}: {exc} "
            "(ONLINELEARN_DEBUG=1 shows the traceback; please report it)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
