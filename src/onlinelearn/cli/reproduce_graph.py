"""``onlinelearn reproduce graph-nodes``: online node classification on graphs."""

from __future__ import annotations

import time
import warnings

from ._common import CLIError, _add_command, _positive_int
from .reproduce import add_datasets, add_run_options, need_matplotlib, progress, report, write_plot

_HELP = "online node classification: weighted min-max (fixed/adaptive margin) and peers"

_DESCRIPTION = """\
Online node classification on cora, citeseer and pubmed (graph features; cora and citeseer also
with their bag of words appended): the labelled nodes arrive in N random orders (21 by default)
and each learner predicts a node's class before learning it.  Weighted min-max with fixed and
adaptive margin, with and without label queries (query='margin', several c), against the graph
Perceptron (kernel Perceptron on the Laplacian pseudo-inverse), PA-I, AROW and SCW-I on the same
features; reference lines: a batch LinearSVC on all labels and LabelSpreading on the graph.
Prints the table of final online error rates (mean +- std over the orders), then the note's
claims on every run: adaptive margin makes no more mistakes than fixed margin, and the
right-hand sides of Lemma 1 / Theorem 1 for a comparator fitted in hindsight are >= the
measured mistakes.  The data come from the shared data folder (ONLINELEARN_DATA).
"""

_EPILOG = """\
examples:
  onlinelearn reproduce graph-nodes                          # 21 orders, k = 100, all three
  onlinelearn reproduce graph-nodes --quick --datasets cora  # 3 orders, k = 32
  onlinelearn reproduce graph-nodes --plot graph-nodes.png
"""


def _cmd_graph_nodes(args) -> int:
    from onlinelearn.experiments.graph_nodes import DEFAULT_DATASETS, run_graph_nodes

    if args.plot:
        need_matplotlib()
    n_orders = args.orders or (3 if args.quick else 21)
    k = args.k or (32 if args.quick else 100)
    for c in args.query_c:
        if not c > 0:
            raise CLIError(f"--query-c values must be > 0, got {c}")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        from sklearn.exceptions import ConvergenceWarning

        warnings.simplefilter("ignore", category=ConvergenceWarning)
        try:
            res = run_graph_nodes(
                args.datasets or list(DEFAULT_DATASETS),
                n_orders=n_orders,
                k=k,
                words=not args.no_words,
                query_c=args.query_c,
                random_state=args.seed,
                progress=progress(args),
            )
        except FileNotFoundError as exc:
            raise CLIError(str(exc)) from None
    print(
        f"Online node classification: {n_orders} random orders, k = {k} 'pinv' spectral "
        f"features (unit-norm rows), seed {args.seed}\n"
    )
    claims = [
        "\nThe note's claims on every run:\n",
        res.format_claims(),
        f"\nbounds >= mistakes on every run: {res.all_bounds_hold()}",
    ]
    report(res, t0, claims, time_note="")
    write_plot(res, args.plot)
    return 0


def register(rsub, fmt) -> None:
    """Add the ``graph-nodes`` experiment to ``onlinelearn reproduce``."""
    p = _add_command(rsub, fmt, "graph-nodes", _HELP, _DESCRIPTION, _EPILOG)
    add_datasets(
        p, "graphs (default: cora citeseer pubmed)", ["cora", "citeseer", "pubmed"], metavar=None
    )
    p.add_argument("--quick", action="store_true", help="3 orders and k = 32 (unless given)")
    p.add_argument("--orders", type=_positive_int, default=None, help="random orders (21)")
    p.add_argument("--k", type=_positive_int, default=None, help="spectral features (100)")
    p.add_argument("--no-words", action="store_true", help="graph features only")
    p.add_argument(
        "--query-c",
        type=float,
        nargs="+",
        default=[0.05, 0.2, 1.0],
        help="c values of the selective-sampling runs (default: 0.05 0.2 1)",
    )
    add_run_options(p, plot=True)
    p.set_defaults(func=_cmd_graph_nodes)
