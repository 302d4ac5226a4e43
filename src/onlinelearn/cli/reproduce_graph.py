"""``onlinelearn reproduce graph-nodes``: online node classification on graphs."""

from __future__ import annotations

import time
import warnings

from ._options import CLIError, _add_command, _positive_int
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
measured mistakes, and the note's closing remark Z <= M (the adaptive learner's updates Z
against the fixed learner's updates M, which are its mistakes and ties) on every order.  The
data come from the shared data folder (ONLINELEARN_DATA).

Any graph: --edges FILE --labels FILE [--features FILE] runs the same study on a graph given as
text files (plain, .xz, .bz2 or .gz; '#' starts a comment; fields separated by white space or
commas).  Edge list: 'u v' (or 'u v weight') per line, node ids arbitrary strings without
spaces, made undirected.  Labels: 'node label' per line (labels are strings too; nodes without
a line are unlabelled and only shape the graph features).  Features: the node id, then either
its d values or svmlight-style index:value pairs; the features are appended to the graph
features as the bag of words is for cora.  A malformed line or a node that is not in the edge
list is an error naming the file and line.

--label-encoding: the min-max learners' label vectors, (e_y - e_r)/sqrt 2 ('difference', the
default) or e_y ('one-hot'); give both to compare them in the same orders.  --protocol paper:
the note's setting as we read it (one-hot label vectors, the fixed and adaptive learners only,
no label queries); --protocol ours (default): our defaults.  The note reports no figures, so
there is nothing of the paper's to print beside ours.
"""

_EPILOG = """\
examples:
  onlinelearn reproduce graph-nodes                          # 21 orders, k = 100, all three
  onlinelearn reproduce graph-nodes --quick --datasets cora  # 3 orders, k = 32
  onlinelearn reproduce graph-nodes --plot graph-nodes.png
  onlinelearn reproduce graph-nodes --label-encoding difference one-hot --no-words
  onlinelearn reproduce graph-nodes --edges my.edges --labels my.labels --features my.svm
  onlinelearn reproduce graph-nodes --protocol paper --datasets cora
"""

#: what --protocol sets (an explicit --label-encoding or --query-c wins)
PROTOCOLS = {
    "ours": {"label_encoding": ["difference"], "learners": "all", "query_c": [0.05, 0.2, 1.0]},
    "paper": {"label_encoding": ["one-hot"], "learners": "minmax", "query_c": []},
}


def _load_files(args):
    """The graph of --edges / --labels / --features, or None."""
    if args.edges is None and args.labels is None:
        if args.features is not None:
            raise CLIError("--features needs --edges and --labels")
        return None
    if args.edges is None or args.labels is None:
        raise CLIError("--edges and --labels go together")
    if args.datasets:
        raise CLIError("give either --datasets or --edges/--labels, not both")
    from onlinelearn.graph import GraphFileError, load_graph_files

    try:
        return load_graph_files(args.edges, args.labels, args.features, name=args.name)
    except (GraphFileError, OSError) as exc:
        raise CLIError(str(exc)) from None


def _cmd_graph_nodes(args) -> int:
    from onlinelearn.experiments.graph_nodes import DEFAULT_DATASETS, run_graph_nodes

    if args.plot:
        need_matplotlib()
    n_orders = args.orders or (3 if args.quick else 21)
    k = args.k or (32 if args.quick else 100)
    proto = PROTOCOLS[args.protocol]
    query_c = proto["query_c"] if args.query_c is None else args.query_c
    encodings = args.label_encoding or proto["label_encoding"]
    for c in query_c:
        if not c > 0:
            raise CLIError(f"--query-c values must be > 0, got {c}")
    g = _load_files(args)
    if g is not None:
        datasets, graphs = [g.name], {g.name: g}
        n_lab = int((g.labels >= 0).sum())
        print(
            f"Graph {g.name!r} from files: {g.n_nodes} nodes, {g.adjacency.nnz // 2} edges, "
            f"{n_lab} labelled nodes, {len(g.label_names)} classes"
            + (f", {g.features.shape[1]} features" if g.features is not None else "")
        )
        if len(g.label_names) < 2:
            raise CLIError(f"{args.labels}: at least two classes are needed")
    else:
        datasets, graphs = args.datasets or list(DEFAULT_DATASETS), None
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        from sklearn.exceptions import ConvergenceWarning

        warnings.simplefilter("ignore", category=ConvergenceWarning)
        try:
            res = run_graph_nodes(
                datasets,
                n_orders=n_orders,
                k=k,
                words=not args.no_words,
                query_c=query_c,
                random_state=args.seed,
                progress=progress(args),
                graphs=graphs,
                label_encoding=encodings,
                learners=proto["learners"],
            )
        except FileNotFoundError as exc:
            raise CLIError(str(exc)) from None
        except ValueError as exc:
            if g is None:
                raise
            raise CLIError(f"{g.name}: {exc}") from None
    print(
        f"Online node classification: {n_orders} random orders, k = {k} 'pinv' spectral "
        f"features (unit-norm rows), seed {args.seed}, protocol {args.protocol!r}, min-max "
        f"label encoding {' and '.join(encodings)}\n"
    )
    claims = [
        "\nMin-max mistakes by label encoding (mean +- std over the orders):\n",
        res.format_encodings(),
        "\nThe note's claims on every run:\n",
        res.format_claims(),
        f"\nbounds >= mistakes on every run: {res.all_bounds_hold()}",
        "\nThe note's remark Z <= M (Z: updates of the adaptive learner, M: updates of the "
        "fixed one, its mistakes and ties), per order:",
        res.format_z_vs_m(),
        f"Z <= M on every run: {res.z_le_m_everywhere()}",
    ]
    if args.protocol == "paper":
        claims.append(
            "\nThe note reports no figures: there are no paper numbers to print beside ours."
        )
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
        default=None,
        help="c values of the selective-sampling runs (default: 0.05 0.2 1; none with "
        "--protocol paper)",
    )
    p.add_argument("--edges", metavar="FILE", help="edge list: 'u v' per line (any graph)")
    p.add_argument("--labels", metavar="FILE", help="node labels: 'node label' per line")
    p.add_argument(
        "--features", metavar="FILE", help="node features: 'node v1 ... vd' or 'node j:v ...'"
    )
    p.add_argument("--name", default=None, help="name of the graph read from files")
    p.add_argument(
        "--label-encoding",
        nargs="+",
        choices=["difference", "one-hot"],
        default=None,
        help="min-max label vectors (default: difference; one-hot with --protocol paper); "
        "both to compare",
    )
    p.add_argument(
        "--protocol",
        choices=sorted(PROTOCOLS),
        default="ours",
        help="paper: the note's setting as we read it; ours: our defaults (default)",
    )
    add_run_options(p, plot=True)
    p.set_defaults(func=_cmd_graph_nodes)
