"""``onlinelearn reproduce pos-tagging`` and ``onlinelearn reproduce boosting-bound``."""

from __future__ import annotations

import time

from ._options import CLIError, _add_command, _positive_int
from .reproduce import add_datasets, add_run_options, progress, report

_POS_HELP = "structured learners against a per-token PA on UD English EWT"

_POS_DESCRIPTION = """\
Part-of-speech tagging on UD English EWT (train -> test, 17 UPOS tags): the structured
Perceptron, PA on the maximal loss (5.22), PA on the prediction-based loss (5.24) and the
self-tuned learner of Fig. 5.4 (all averaged), against a per-token multiclass PA-I on the same
hashed token features.  Prints test accuracy, time per epoch and tagging throughput.
Needs ud_english_ewt/ in the shared data folder (ONLINELEARN_DATA).
"""

_POS_EPILOG = """\
examples:
  onlinelearn reproduce pos-tagging                 # 12544 sentences, 5 epochs
  onlinelearn reproduce pos-tagging --quick         # 2000 sentences, 2 epochs
"""

_BOOST_HELP = "boosting's training error against exp(-2 gamma^2 T), and scikit-learn's AdaBoost"

_BOOST_DESCRIPTION = """\
The boosting bound of thesis ch. 6: training error of PrimalDualBoost (AdaBoost as the
aggressive dual step, compiled stumps chosen by edge or by Gini) against exp(-2 gamma^2 T) with
the measured gamma = min_t gamma_t, and scikit-learn's AdaBoostClassifier with depth-1 trees
(SAMME = discrete AdaBoost on two classes) at equal T: train error, test accuracy, fit time.
Data: a9a, w8a, PMLB spambase and mushroom from the shared data folder.
"""

_BOOST_EPILOG = """\
examples:
  onlinelearn reproduce boosting-bound              # full data, T = 10, 50, 200
  onlinelearn reproduce boosting-bound --quick      # 3000 rows, T = 10, 50
"""


def _cmd_pos(args) -> int:
    from onlinelearn.experiments.pos_tagging import run_pos_tagging

    max_train = args.max_train or (2000 if args.quick else None)
    epochs = args.epochs or (2 if args.quick else 5)
    t0 = time.perf_counter()
    try:
        res = run_pos_tagging(
            max_train=max_train, epochs=epochs, random_state=args.seed, progress=progress(args)
        )
    except FileNotFoundError as exc:
        raise CLIError(str(exc)) from None
    s = res.settings
    print(
        f"UD English EWT UPOS: {s['train_sentences']} training sentences, {s['test_tokens']} "
        f"test tokens, {s['epochs']} epochs, 2^18 hashed features, seed {s['seed']}\n"
    )
    report(res, t0, time_note=" in all; machine load affects the times")
    return 0


def _cmd_boost(args) -> int:
    from onlinelearn.experiments.boosting_bound import DEFAULT_DATASETS, run_boosting_bound

    max_rows = args.max_rows or (3000 if args.quick else None)
    rounds = args.rounds or ([10, 50] if args.quick else [10, 50, 200])
    t0 = time.perf_counter()
    try:
        res = run_boosting_bound(
            args.datasets or DEFAULT_DATASETS, rounds=rounds, max_rows=max_rows,
            seed=args.seed, progress=progress(args),
        )  # fmt: skip
    except FileNotFoundError as exc:
        raise CLIError(str(exc)) from None
    rows = "all training rows" if max_rows is None else f"at most {max_rows} training rows"
    print(f"Boosting bound: {rows}, T in {list(rounds)}, seed {args.seed}\n")
    report(res, t0, time_note=" in all; machine load affects the times")
    return 0


def register(rsub, fmt) -> None:
    """Add the ``pos-tagging`` and ``boosting-bound`` experiments to ``onlinelearn reproduce``."""
    p = _add_command(rsub, fmt, "pos-tagging", _POS_HELP, _POS_DESCRIPTION, _POS_EPILOG)
    p.add_argument("--quick", action="store_true", help="2000 sentences, 2 epochs")
    p.add_argument("--max-train", type=_positive_int, default=None, help="training sentences")
    p.add_argument("--epochs", type=_positive_int, default=None, help="passes (default: 5)")
    add_run_options(p)
    p.set_defaults(func=_cmd_pos)

    p = _add_command(rsub, fmt, "boosting-bound", _BOOST_HELP, _BOOST_DESCRIPTION, _BOOST_EPILOG)
    p.add_argument("--quick", action="store_true", help="3000 training rows, T = 10, 50")
    add_datasets(p, "a9a, w8a and/or binary PMLB names (default: a9a w8a spambase mushroom)")
    p.add_argument("--rounds", nargs="+", type=_positive_int, default=None, metavar="T",
                   help="numbers of rounds (default: 10 50 200)")  # fmt: skip
    p.add_argument("--max-rows", type=_positive_int, default=None, help="subsample training rows")
    add_run_options(p)
    p.set_defaults(func=_cmd_boost)
