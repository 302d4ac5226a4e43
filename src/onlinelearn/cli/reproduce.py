"""``onlinelearn reproduce EXPERIMENT``: the registry of reproducible experiments.

Each experiment family lives in its own module ``onlinelearn.cli.reproduce_<family>`` with a
function ``register(rsub, fmt)`` that adds its sub-commands (``rsub.add_parser(NAME, ...)`` and
``set_defaults(func=...)``).  Adding an experiment is one new module and one line in
:data:`EXPERIMENT_MODULES`; the experiment's own code belongs in :mod:`onlinelearn.experiments`.
The functions below are what the experiment modules share: the options that end an experiment's
list, its progress on stderr, its printed table and its figure.
"""

from __future__ import annotations

import importlib
import sys
import time

from ._options import _add_plot

#: modules whose ``register(rsub, fmt)`` adds experiments, in the order of ``--help``
EXPERIMENT_MODULES = (
    "reproduce_copa",
    "reproduce_structured",
    "reproduce_ranking",
    "reproduce_graph",
    "reproduce_svm",
)


def need_matplotlib():
    """Raise a one-line CLI error when matplotlib (the ``[plot]`` extra) is missing."""
    from . import CLIError

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CLIError(
            "--plot needs matplotlib: pip install 'onlinelearn[plot]' (or matplotlib)"
        ) from None


def add_datasets(p, help, choices=None, metavar="NAME"):
    """--datasets NAME [NAME ...]: the data sets to run (None: the experiment's own list)."""
    p.add_argument(
        "--datasets", nargs="+", metavar=metavar, choices=choices, default=None, help=help
    )


def add_seed(p):
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")


def add_quiet(p):
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def add_run_options(p, plot=False):
    """The options that end an experiment's list: --seed, --plot (with ``plot``), -q."""
    add_seed(p)
    if plot:
        _add_plot(p)
    add_quiet(p)


def progress(args):
    """An experiment's ``progress`` callback: its lines go to stderr, or nowhere with -q."""
    if args.quiet:
        return lambda s: None
    return lambda s: print(s, file=sys.stderr, flush=True)


def report(res, t0, notes=(), time_note=" in all") -> None:
    """Print an experiment's table, the lines ``notes``, then the seconds since ``t0`` followed
    by ``time_note`` (after a blank line when there are no notes)."""
    print(res.format_table())
    for line in notes:
        print(line)
    gap = "" if notes else "\n"
    print(f"{gap}({time.perf_counter() - t0:.0f} s{time_note})")


def write_plot(res, path, what="figure") -> None:
    """With --plot ``path``: draw the experiment's figure there and say so."""
    if path:
        res.plot(path)
        print(f"{what} written to {path}")


def register(sub, fmt) -> None:
    """Add ``reproduce`` and every registered experiment to the main sub-parsers."""
    p = sub.add_parser(
        "reproduce",
        help="reproduce an experiment of the source papers",
        description="Reproduce an experiment of the source papers; "
        "'onlinelearn reproduce EXPERIMENT --help' describes each.",
    )
    rsub = p.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    for name in EXPERIMENT_MODULES:
        importlib.import_module(f"{__name__.rsplit('.', 1)[0]}.{name}").register(rsub, fmt)
