"""``onlinelearn reproduce svm-cd-vs-sgd``: dual coordinate ascent against Pegasos / SGD."""

from __future__ import annotations

import time

from ._options import CLIError, _add_command, _positive_int
from .reproduce import add_datasets, add_run_options, need_matplotlib, progress, report, write_plot

_HELP = "dual coordinate ascent against Pegasos / SGD on a9a, w8a, news20, mnist"

_DESCRIPTION = """\
The course's comparison (EPFL ML, problem set 7, Sec. 2.4) on real data from the shared data
folder: DualCoordinateSVC (dual coordinate ascent, one gap evaluation per epoch) against Pegasos
(steps 1/(lambda t)) and SGD with steps 1/(lambda (t + t0)), t0 picked after the fact from a
grid, all on the same objective 1/2 ||w||^2 + C sum_i loss_i (binary hinge on a9a and w8a,
Crammer-Singer multiclass hinge on news20 and mnist; lambda = 1/(C N)).  Prints a Markdown table:
seconds and epochs to a primal sub-optimality of 1e-2 and 1e-3 (relative to the best dual value
CD certifies), the final sub-optimality, CD's final duality gap and test accuracy.
"""

_EPILOG = """\
examples:
  onlinelearn reproduce svm-cd-vs-sgd                          # all four data sets (minutes)
  onlinelearn reproduce svm-cd-vs-sgd --quick --plot svm.png   # 3000 rows, 15 epochs
  onlinelearn reproduce svm-cd-vs-sgd --datasets a9a w8a --epochs 100
"""


def _cmd(args) -> int:
    from onlinelearn.experiments.svm_cd_vs_sgd import DEFAULT_DATASETS, run_cd_vs_sgd

    if args.plot:
        need_matplotlib()
    datasets = args.datasets or list(DEFAULT_DATASETS)
    max_rows, epochs = args.max_rows, args.epochs
    if args.quick:
        max_rows = max_rows or 3000
        epochs = epochs or 15
    epochs = epochs or 50
    t0 = time.perf_counter()
    try:
        res = run_cd_vs_sgd(datasets, epochs=epochs, max_rows=max_rows, seed=args.seed,
                            progress=progress(args))  # fmt: skip
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    rows = "all rows" if max_rows is None else f"at most {max_rows} training rows"
    print(f"Dual CD against Pegasos / SGD: {rows}, {epochs} epochs, seed {args.seed}\n")
    report(res, t0)
    write_plot(res, args.plot)
    return 0


def register(rsub, fmt) -> None:
    """Add the ``svm-cd-vs-sgd`` experiment to ``onlinelearn reproduce``."""
    p = _add_command(rsub, fmt, "svm-cd-vs-sgd", _HELP, _DESCRIPTION, _EPILOG)
    add_datasets(p, "(default: a9a w8a news20 mnist)", ["a9a", "w8a", "news20", "mnist"])
    p.add_argument("--quick", action="store_true", help="3000 training rows and 15 epochs")
    p.add_argument("--max-rows", type=_positive_int, default=None, help="subsample to this many")
    p.add_argument("--epochs", type=_positive_int, default=None, help="epochs (default: 50)")
    add_run_options(p, plot=True)
    p.set_defaults(func=_cmd)
