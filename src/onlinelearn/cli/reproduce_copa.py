"""``onlinelearn reproduce copa-toy`` and ``onlinelearn reproduce imbalance``: the COPA study."""

from __future__ import annotations

import time

from ._options import CLIError, _add_command, _add_plot, _positive_int
from .reproduce import (
    add_datasets,
    add_run_options,
    add_seed,
    need_matplotlib,
    progress,
    report,
    write_plot,
)

_TOY_HELP = "the toy experiment of the COPA paper, with its confusion risk bound"

_TOY_DESCRIPTION = """\
The toy experiment of the COPA paper (Ralaivola, NIPS 2012, Sec. 4): three Gaussians in the
plane with class priors 0.9 / 0.05 / 0.05; averaged COPA (with the plain cost C and/or the
class-normalised cost C / T_y^2 of eq. (17)) against the averaged Perceptron.  Prints the mean
test accuracy and confusion norm ||C(h)|| next to the paper's figures (COPA 0.85 / 0.10,
Perceptron 0.86 / 0.18), then the confusion risk bound of Theorem 1 for one online pass of COPA
(misclassification losses, M = 1): ||C_hat|| + sqrt(2Q sum_p 1/T_p log(Q/delta)), and Theorem 2
(eq. 15) for the averaged hypothesis of one pass beside its observed confusion risk.

--protocol ours (the default) runs our defaults: an intercept, shuffled epochs, both cost
normalisations, C on a decade grid.  --protocol paper runs Sec. 4 to the letter: no intercept,
the stream's fixed order, COPA with the cost C / T_y^2 of eqs. (17)-(18), T = 2500 training
rounds, 5 epochs, 10 runs, C chosen on one more sample by a half split (grid 10^(k/8), 1..1e9).
--protocol both runs the two and prints them side by side with the paper's figures and the
distance of each figure to the paper's.
"""

_TOY_EPILOG = """\
examples:
  onlinelearn reproduce copa-toy                       # the full run (about 10 s)
  onlinelearn reproduce copa-toy --protocol both       # the paper's protocol beside ours
  onlinelearn reproduce copa-toy --samples 2 --n 1000 --plot toy.png
"""

_IMBALANCE_HELP = "COPA against PA-I, Perceptron and a balanced LinearSVC on imbalanced real data"

_IMBALANCE_DESCRIPTION = """\
COPA (both cost normalisations), multiclass PA-I, the Perceptron and scikit-learn's
LinearSVC(class_weight='balanced') on imbalanced real data from the shared data folder (see
onlinelearn.datasets.shared_data_dir): PMLB shuttle, sleep, krkopt (stratified 70/30 split,
standardised) and 20 newsgroups TF-IDF with 15 of its 20 classes subsampled to 10% in the
training part.  C is chosen per learner on a validation split of the training part.  Prints a
Markdown table: accuracy, balanced accuracy, confusion norm ||C(h)||, fit time.
"""

_IMBALANCE_EPILOG = """\
examples:
  onlinelearn reproduce imbalance                      # all four data sets, full size
  onlinelearn reproduce imbalance --quick --datasets shuttle krkopt
"""


def _cmd_reproduce_copa_toy(args) -> int:
    from onlinelearn.experiments.copa_toy import reproduce_copa_toy

    if args.plot:
        need_matplotlib()
    if not 0 < args.delta <= 1:
        raise CLIError(f"--delta must be in (0, 1], got {args.delta}")
    from onlinelearn.experiments.copa_toy import format_side_by_side

    cws = {"plain": (None,), "confusion": ("confusion",), "both": (None, "confusion"), None: None}
    class_weights = cws[args.class_weight]
    protocols = ["paper", "ours"] if args.protocol == "both" else [args.protocol]
    results = {}
    t0 = time.perf_counter()
    for i, protocol in enumerate(protocols):
        what = {
            "ours": "our protocol: intercept, shuffled epochs",
            "paper": "the paper's protocol: no intercept, the stream's fixed order, C / T_y^2",
        }[protocol]
        print(
            f"{'' if i == 0 else chr(10)}COPA paper, Sec. 4 toy experiment, {what}: 3 Gaussians "
            f"(priors 0.9 / 0.05 / 0.05), {args.samples} samples of {args.n} points (half "
            f"train, half test), {args.epochs} epochs, seed {args.seed}; C chosen on one more "
            f"sample (half split, smallest ||C(h)||)\n"
        )
        res = reproduce_copa_toy(
            n_samples=args.samples,
            n=args.n,
            epochs=args.epochs,
            random_state=args.seed,
            class_weights=class_weights,
            delta=args.delta,
            bound_form=args.bound_form,
            protocol=protocol,
        )
        results[protocol] = res
        print(res.format_table())
        print("\ndistance to the paper's figures (mean over the samples):")
        print("\n".join(res.gap_lines()))
    if len(results) > 1:
        print("\nside by side:\n")
        print(format_side_by_side(results))
    print(f"\n({time.perf_counter() - t0:.1f} s; mean +- std over the samples)")
    write_plot(results[protocols[-1]], args.plot, "confusion matrices")
    return 0


def _cmd_reproduce_imbalance(args) -> int:
    from onlinelearn.experiments.imbalance import DEFAULT_DATASETS, run_imbalance_study

    datasets = args.datasets or list(DEFAULT_DATASETS)
    max_rows = args.max_rows
    epochs = args.epochs
    if args.quick:
        max_rows = max_rows or 5000
        epochs = epochs or 2
    epochs = epochs or 5
    t0 = time.perf_counter()
    res = run_imbalance_study(
        datasets,
        epochs=epochs,
        select_by=args.select_by,
        max_rows=max_rows,
        random_state=args.seed,
        progress=progress(args),
    )
    s = res.settings
    rows = "all rows" if max_rows is None else f"about {max_rows} rows per data set"
    print(
        f"Imbalance study: {rows}, {s['epochs']} epochs, seed {s['random_state']}, C by "
        f"validation {s['select_by'].replace('_', ' ')} over {list(s['C_grid'])} "
        f"(x (n_fit/Q)^2 for COPA C/T_y^2)\n"
    )
    report(res, t0, time_note=" in all; fit time: final fit only")
    return 0


def register(rsub, fmt) -> None:
    """Add the ``copa-toy`` and ``imbalance`` experiments to ``onlinelearn reproduce``."""
    p = _add_command(rsub, fmt, "copa-toy", _TOY_HELP, _TOY_DESCRIPTION, _TOY_EPILOG)
    add_seed(p)
    p.add_argument(
        "--protocol",
        choices=["ours", "paper", "both"],
        default="ours",
        help="our defaults, the paper's protocol (no intercept, fixed order, C / T_y^2), or "
        "both side by side (default: ours)",
    )
    p.add_argument(
        "--class-weight",
        choices=["plain", "confusion", "both"],
        default=None,
        help="COPA cost normalisation: plain C, C / T_y^2 (eq. 17), or both (default: both "
        "with --protocol ours, C / T_y^2 with --protocol paper)",
    )
    p.add_argument(
        "--samples",
        type=_positive_int,
        default=10,
        help="evaluation samples (repetitions), as in the paper (default: 10)",
    )
    p.add_argument(
        "--n", type=_positive_int, default=5000, help="points per sample (default: 5000)"
    )
    p.add_argument("--epochs", type=_positive_int, default=5, help="epochs (default: 5)")
    p.add_argument(
        "--delta", type=float, default=0.05, help="confidence of the bound (default: 0.05)"
    )
    p.add_argument(
        "--bound-form",
        choices=["stated", "derived"],
        default="stated",
        help="log(Q/delta) as printed in the paper, or log(2Q/delta) as its proof gives",
    )
    _add_plot(p, "the mean confusion matrices")
    p.set_defaults(func=_cmd_reproduce_copa_toy)

    p = _add_command(
        rsub, fmt, "imbalance", _IMBALANCE_HELP, _IMBALANCE_DESCRIPTION, _IMBALANCE_EPILOG
    )
    add_datasets(p, "PMLB names and/or news20 (default: shuttle sleep krkopt news20)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="about 5000 rows per data set and 2 epochs (unless --max-rows / --epochs)",
    )
    p.add_argument("--max-rows", type=_positive_int, default=None, help="subsample to this many")
    p.add_argument(
        "--epochs", type=_positive_int, default=None, help="epochs of the online learners (5)"
    )
    p.add_argument(
        "--select-by",
        choices=["confusion_norm", "balanced_accuracy"],
        default="confusion_norm",
        help="validation criterion for C (default: confusion_norm)",
    )
    add_run_options(p)
    p.set_defaults(func=_cmd_reproduce_imbalance)
