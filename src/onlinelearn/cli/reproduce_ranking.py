"""``onlinelearn reproduce label-ranking`` (and its older form ``message-folders``): thesis
Table 8.1 (the 6 label-ranking algorithms online) over every multi-label set of the shared data."""

from __future__ import annotations

import time

from ._options import CLIError, _add_command
from .reproduce import add_quiet, progress, report

_HELP = "thesis Table 8.1: the 6 label-ranking algorithms online over real e-mail"

_DESCRIPTION = """\
The 6 label-ranking algorithms of the thesis, ch. 8 (update I / II / III x squared norm /
relative entropy: onlinelearn.LabelRanker), one online pass each over real messages: the
multi-label Enron messages of MULAN (1702 messages, 53 labels, file order) and the raw 20
newsgroups messages (18846, one label each, headers included, in date order as far as the
archive allows; binary bag of words).  Prints Table 8.1's layout (average online mistakes,
100 M / m) with the thesis's Enron figures beside ours -- different data: the thesis used 7
users' own folders, which are not available -- and checks the two claims of Sec. 8.4:
update III <= II <= I, and entropy <= squared norm.
"""

_EPILOG = """\
examples:
  onlinelearn reproduce message-folders                 # both corpora, in full (a few minutes)
  onlinelearn reproduce message-folders --quick --corpora enron
"""


_LR_HELP = "thesis Table 8.1: the 6 label-ranking algorithms online over every multi-label set"

_LR_DESCRIPTION = """\
Thesis Table 8.1 (Sec. 8.4): the 6 label-ranking algorithms (update I / II / III x squared norm /
relative entropy: onlinelearn.LabelRanker, its defaults unless --C / --margin), one online pass
each over every multi-label set of the shared data folder in its fixed order: enron (MULAN
Enron messages, 53 labels) and blogcatalog (10312 bloggers, 39 groups, adjacency rows as
features); --datasets 20news adds the single-label raw 20 newsgroups stream.  Prints Table
8.1's layout (100 M / m, % of rounds with a ranking mistake), the thesis's rows (the folders of
7 Enron users: not our data, printed for the layout and the claims only), and, per row, whether
the two claims of Sec. 8.4 hold as measured: update III <= II <= I, and entropy <= squared norm.
"""

_LR_EPILOG = """\
examples:
  onlinelearn reproduce label-ranking                          # enron and blogcatalog, in full
  onlinelearn reproduce label-ranking --datasets enron 20news  # + the single-label 20news stream
  onlinelearn reproduce label-ranking --quick                  # first 600 / 2000 rows
"""


def _params(args):
    params = {}
    if args.C is not None:
        params["C"] = args.C
    if args.margin is not None:
        params["margin"] = args.margin
    return params


def _table_8_1(args, folders, run, title, defaults, cases) -> int:
    """What both commands do: find the shared data folder (it must hold ``folders``), run
    ``run(root, params)`` with the LabelRanker parameters of ``--C`` / ``--margin``, then print
    ``title``, the result's table, the most interior point iterations of a round over the
    result's attribute ``cases``, and the time."""
    from onlinelearn.datasets import shared_data_dir

    root = args.data_dir or shared_data_dir()
    if root is None:
        raise CLIError(
            "no shared data folder: pass --data-dir or set ONLINELEARN_DATA "
            f"(it must hold {folders})"
        )
    params = _params(args)
    t0 = time.perf_counter()
    try:
        res = run(root, params)
    except FileNotFoundError as exc:
        raise CLIError(f"shared data missing: {exc}") from None
    print(f"{title}; LabelRanker parameters: {params or defaults}\n")
    its = max(c.ip_iterations_max for c in getattr(res, cases))
    note = f"\ninterior point method (update III, entropy): at most {its} iterations per round"
    report(res, t0, [note])
    return 0


def _cmd_label_ranking(args) -> int:
    from onlinelearn.experiments.label_ranking import QUICK_ROWS, run_label_ranking

    def run(root, params):
        return run_label_ranking(
            root, datasets=args.datasets, quick=args.quick, params=params,
            progress=progress(args),
        )  # fmt: skip

    quick = ", ".join(f"{QUICK_ROWS[d]} {d}" for d in args.datasets)
    title = "Online label ranking (thesis Table 8.1 layout)" + (
        f" -- quick run: first {quick} rows" if args.quick else ""
    )
    folders = "enron_multilabel/ and blogcatalog/"
    return _table_8_1(args, folders, run, title, "defaults (C=auto)", "datasets")


def _cmd_message_folders(args) -> int:
    from onlinelearn.experiments.message_folders import run_message_folders

    def run(root, params):
        return run_message_folders(
            root, corpora=args.corpora, quick=args.quick, params=params, progress=progress(args)
        )

    title = "Online message categorisation (thesis Table 8.1 layout)" + (
        " -- quick run: first 600 Enron / 3000 20news messages" if args.quick else ""
    )
    folders = "enron_multilabel/ and 20newsgroups/"
    return _table_8_1(args, folders, run, title, "defaults", "corpora")


def _common_options(p):
    p.add_argument("--C", type=float, default=None, help="LabelRanker C (default: its default)")
    p.add_argument(
        "--margin", type=float, default=None, help="LabelRanker margin (default: its default)"
    )
    p.add_argument("--data-dir", default=None, help="shared data folder (default: found)")
    add_quiet(p)


def register(rsub, fmt) -> None:
    """Add the ``label-ranking`` and ``message-folders`` experiments to ``onlinelearn
    reproduce``."""
    from onlinelearn.experiments._label_ranking_sets import DATASETS, MULTI_LABEL

    p = _add_command(rsub, fmt, "label-ranking", _LR_HELP, _LR_DESCRIPTION, _LR_EPILOG)
    p.add_argument(
        "--datasets",
        nargs="+",
        choices=list(DATASETS),
        default=list(MULTI_LABEL),
        help="data sets (default: every multi-label set: " + " ".join(MULTI_LABEL) + ")",
    )
    p.add_argument("--quick", action="store_true", help="the first rows of each set only")
    _common_options(p)
    p.set_defaults(func=_cmd_label_ranking)

    p = _add_command(rsub, fmt, "message-folders", _HELP, _DESCRIPTION, _EPILOG)
    p.add_argument(
        "--corpora",
        "--datasets",
        dest="corpora",
        nargs="+",
        choices=["enron", "20news"],
        default=["enron", "20news"],
        help="which corpora (default: both)",
    )
    p.add_argument(
        "--quick", action="store_true", help="first 600 Enron and 3000 20news messages only"
    )
    _common_options(p)
    p.set_defaults(func=_cmd_message_folders)
