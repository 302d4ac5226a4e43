"""The pieces of the commands' argument parsers and of their one-line errors.

:class:`CLIError` (an error reported in one line, exit status 2) and :func:`_error_message`;
argparse types (:func:`_positive_int`, :func:`_positive_float`) and the options several commands
add (``--plot``, ``--chunk-size``, ``--model``, VW's ``--bits`` / ``-q``); the checks and reader
options of ``--format``; the output lines (:func:`_stderr_line`, :func:`_format_label`).  Imports
nothing numerical, so that building the parser (``--help``) stays light.
"""

from __future__ import annotations

import argparse
import math
import sys


class CLIError(Exception):
    """An error to report in one line (exit status 2)."""


def _error_message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    if isinstance(exc, MemoryError):
        return f"out of memory ({exc})" if str(exc) else "out of memory"
    return str(exc) or type(exc).__name__


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _format_label(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, tuple | list):  # a set of labels (ranking)
        return ",".join(_format_label(u) for u in v) if len(v) else "-"
    if hasattr(v, "is_integer") and not isinstance(v, bool | int):
        if v.is_integer() and abs(v) < 2**63:
            return str(int(v))
        return f"{float(v):.6g}"
    return str(v)


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
    if not (value > 0 and math.isfinite(value)):
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


def _check_format(fmt: str) -> None:
    """A one-line error for an unknown ``--format``, before any reading."""
    from onlinelearn.io.formats import FORMATS

    if fmt not in FORMATS:
        raise CLIError(f"--format {fmt}: unknown format (known: {', '.join(FORMATS)})")


# -- Vowpal Wabbit input: --bits, -q AB / --quadratic AB -----------------------------------------


def _add_vw_options(p):
    p.add_argument(
        "--bits",
        type=_positive_int,
        default=None,
        metavar="B",
        help="--format vw: hash the features into 2**B columns (default 18 to train; predict "
        "and evaluate: the model's)",
    )
    p.add_argument(
        "--quadratic",
        metavar="AB",
        action="append",
        default=None,
        help="--format vw: interactions of the namespaces starting with A and B (repeatable; "
        "'-q AB' with two characters is the same, as in VW; -q alone is --quiet)",
    )


def _quadratic_argv(argv):
    """``-q AB`` (two characters, VW's spelling) -> ``--quadratic AB`` for train, predict and
    evaluate; ``-q`` alone or followed by an option stays ``--quiet``."""
    out = list(argv)
    if not out or str(out[0]) not in ("train", "predict", "evaluate"):
        return out
    for i in range(len(out) - 1):
        nxt = str(out[i + 1])
        if str(out[i]) == "-q" and len(nxt) == 2 and not nxt.startswith("-"):
            out[i] = "--quadratic"
    return out


def _vw_width(args, n_features=None) -> int | None:
    """``2**bits`` for ``--format vw`` (``--bits``, else a model's ``n_features``, else 2**18;
    a contradiction is refused), None for the other formats (where --bits and -q are refused)."""
    if getattr(args, "format", "svmlight") != "vw":
        if getattr(args, "bits", None) is not None or getattr(args, "quadratic", None):
            raise CLIError("--bits and -q/--quadratic apply to --format vw only")
        return None
    from onlinelearn.io.vw import MAX_BITS

    if args.bits is None:
        return n_features if n_features is not None else 1 << 18
    if args.bits > MAX_BITS:
        raise CLIError(f"--bits {args.bits} is larger than {MAX_BITS}")
    if n_features is not None and 1 << args.bits != n_features:
        raise CLIError(f"--bits {args.bits} gives {1 << args.bits} columns; the model has "
                       f"{n_features}")  # fmt: skip
    return 1 << args.bits


def _format_options(args) -> dict:
    """The reader options of ``args.format`` (``interactions`` for vw)."""
    if getattr(args, "format", "svmlight") == "vw":
        return {"interactions": args.quadratic}
    return {}
