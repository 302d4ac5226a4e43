"""What the commands share: learner names, errors, reading helpers, the progress table and the
pieces of their argument parsers."""

from __future__ import annotations

import argparse
import contextlib
import lzma
import os
import zlib

import numpy as np

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


def _add_command(sub, fmt, name, summary, description, epilog):
    """Add the sub-command ``name`` to ``sub`` and return its parser: ``summary`` is its line in
    the parent's --help, ``description`` and ``epilog`` its own --help, laid out by ``fmt``."""
    return sub.add_parser(
        name, help=summary, description=description, epilog=epilog, formatter_class=fmt
    )


def _add_plot(p, what="the figure"):
    p.add_argument("--plot", metavar="PNG", default=None, help=f"write {what} here")


def _add_chunk_size(p):
    p.add_argument(
        "--chunk-size", type=_positive_int, default=10000, help="rows per chunk (default: 10000)"
    )


def _add_model_in(p):
    p.add_argument("-m", "--model", required=True, help="model file written by train")


def _error_message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    if isinstance(exc, MemoryError):
        return f"out of memory ({exc})" if str(exc) else "out of memory"
    return str(exc) or type(exc).__name__
