"""``onlinelearn reproduce EXPERIMENT``: the registry of reproducible experiments.

Each experiment family lives in its own module ``onlinelearn.cli.reproduce_<family>`` with a
function ``register(rsub, fmt)`` that adds its sub-commands (``rsub.add_parser(NAME, ...)`` and
``set_defaults(func=...)``).  Adding an experiment is one new module and one line in
:data:`EXPERIMENT_MODULES`; the experiment's own code belongs in :mod:`onlinelearn.experiments`.
"""

from __future__ import annotations

import importlib

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
