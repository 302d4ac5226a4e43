"""Command line interface: ``onlinelearn train | predict | evaluate | demo | reproduce``.

Run ``onlinelearn --help`` or ``onlinelearn <command> --help`` for the options and an example of
each command.  Errors (missing file, malformed data line, corrupted model file, bad option) print
one line to stderr and exit with status 2; set ``ONLINELEARN_DEBUG=1`` to see the traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from ._common import (
    _DECOMPRESSION_ERRORS,
    LEARNERS,
    CLIError,
    _add_chunk_size,
    _add_command,
    _add_model_in,
    _add_plot,
    _error_message,
    _positive_float,
    _positive_int,
)
from .demo import _cmd_demo
from .evaluate import _cmd_evaluate, _cmd_predict
from .train import _cmd_train

__all__ = ["LEARNERS", "CLIError", "build_parser", "main"]

_MAIN_DESCRIPTION = """\
Online learning of linear classifiers (Perceptron, Passive-Aggressive, Winnow, p-norm, COPA)
on svmlight / LIBSVM files: "label index:value index:value ..." with 1-based indices, plain or
compressed (.gz, .bz2, .xz).  Files are streamed in chunks, so they may be larger than memory.
"""

_MAIN_EPILOG = """\
examples:
  onlinelearn demo                                  # try it on the shipped DNA data
  onlinelearn train train.svm -m model.npz --learner pa1 -C 0.5
  onlinelearn evaluate test.svm -m model.npz
  onlinelearn predict test.svm -m model.npz -o predictions.txt
  onlinelearn reproduce copa-toy --plot toy.png    # the COPA paper's toy experiment
  onlinelearn reproduce imbalance --quick          # COPA on imbalanced real data

Errors print one line and exit with status 2; ONLINELEARN_DEBUG=1 shows the traceback.
"""

_TRAIN_HELP = "train a model on an svmlight file (streaming) and save it"

_TRAIN_DESCRIPTION = """\
Train a learner on an svmlight file in one streaming pass (or --epochs passes) and save it.

Each chunk of rows is first predicted, then learned from (progressive validation), so the
printed loss is an honest online error rate on examples the learner had not yet seen (in the
first pass).  Lines are printed at example counts 1, 2, 4, 8, ...: the mistake rate since the
start, the rate since the previous line, the example count, and that example's label and
prediction.  New labels are learned as they appear.  The model is saved as a pickle-free .npz
file that predict, evaluate and onlinelearn.model_io.load_model read.
"""

_TRAIN_EPILOG = """\
learners:
  perceptron  classic multiclass Perceptron (update on mistakes)
  pa          Passive-Aggressive, hard margin          pa1 / pa2  PA-I / PA-II with cap -C
  winnow      balanced Winnow (multiplicative)         pnorm      p-norm Perceptron
  copa        COPA, confusion-matrix oriented PA with -C; after training it also prints the
              confusion risk bound of the COPA paper (Theorem 1) for the first pass (--delta)

example:
  onlinelearn train a9a.bz2 -m a9a.npz --learner pa1 -C 0.1 --n-features 123 --average
"""

_PREDICT_HELP = "write one predicted label per line"

_PREDICT_DESCRIPTION = """\
Predict the label of every example of an svmlight file with a saved model, one label per line
(in file order).  The labels in the input file are ignored (any number, e.g. 0, will do).
"""

_PREDICT_EPILOG = """\
example:
  onlinelearn predict test.svm -m model.npz -o predictions.txt
"""

_EVALUATE_HELP = "accuracy, balanced accuracy and confusion matrix of a model"

_EVALUATE_DESCRIPTION = """\
Evaluate a saved model on a labelled svmlight file: accuracy, balanced accuracy (mean recall
over the classes present), the confusion matrix of counts, and the class-conditional confusion
rates with their operator norm (the quantity COPA keeps small).
"""

_EVALUATE_EPILOG = """\
example:
  onlinelearn evaluate test.svm -m model.npz
"""

_DEMO_HELP = "compare the learners on the shipped DNA data"

_DEMO_DESCRIPTION = """\
Compare the learners on the DNA data shipped with the package (3 classes, 180 features,
2000 training / 1186 test examples): one progressive-validation pass over the training set per
learner, then the accuracy of the final model on the test set.  Timings exclude numba
compilation (done once beforehand on a few rows).
"""

_DEMO_EPILOG = """\
example:
  onlinelearn demo --plot mistakes.png     # needs matplotlib: pip install 'onlinelearn[plot]'
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="onlinelearn",
        description=_MAIN_DESCRIPTION,
        epilog=_MAIN_EPILOG,
        formatter_class=fmt,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = _add_command(sub, fmt, "train", _TRAIN_HELP, _TRAIN_DESCRIPTION, _TRAIN_EPILOG)
    p.add_argument(
        "data",
        metavar="DATA",
        nargs="+",
        help="training data, svmlight format (several files: read one after the other; with "
        "--scheduler: one shard per file)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="train on a Dask cluster by iterative parameter mixing, one shard per DATA file "
        "(--epochs mixing rounds); needs pip install 'onlinelearn[dist]'",
    )
    p.add_argument(
        "-m",
        "--model",
        default=None,
        help="where to save the model (.npz); replaced atomically (default with --resume: the "
        "resumed file)",
    )
    p.add_argument(
        "--resume",
        metavar="MODEL",
        default=None,
        help="continue training this saved model on DATA (same result as one uninterrupted "
        "run over the same rows in the same order); learner, -C, --average and the number of "
        "features come from the model",
    )
    p.add_argument(
        "--learner", choices=sorted(LEARNERS), default=None, help="(default: perceptron)"
    )
    p.add_argument(
        "-C",
        type=_positive_float,
        default=None,
        help="aggressiveness cap for pa1, pa2 and copa (default: the learner's, 1.0)",
    )
    p.add_argument(
        "--epochs", type=_positive_int, default=1, help="passes over the file (default: 1)"
    )
    p.add_argument(
        "--average",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="predict with the average of the weights over all updates, or with the last "
        "weights (default: the learner's own default: averaged for perceptron, pa, pa1, pa2 "
        "and copa, last for winnow and pnorm)",
    )
    _add_chunk_size(p)
    p.add_argument(
        "--n-features",
        type=_positive_int,
        default=None,
        help="number of features; if left out, the file is scanned once to find the highest "
        "index (pass it when known: the highest index present may be lower)",
    )
    p.add_argument("--seed", type=int, default=None, help="random seed (random_state)")
    p.add_argument(
        "--delta",
        type=float,
        default=0.05,
        help="copa: confidence of the confusion risk bound printed after training (default 0.05)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.set_defaults(func=_cmd_train)

    p = _add_command(sub, fmt, "predict", _PREDICT_HELP, _PREDICT_DESCRIPTION, _PREDICT_EPILOG)
    p.add_argument("data", metavar="DATA", help="data to predict, svmlight format")
    _add_model_in(p)
    p.add_argument("-o", "--output", default=None, help="output file (default: standard output)")
    _add_chunk_size(p)
    p.set_defaults(func=_cmd_predict)

    p = _add_command(sub, fmt, "evaluate", _EVALUATE_HELP, _EVALUATE_DESCRIPTION, _EVALUATE_EPILOG)
    p.add_argument("data", metavar="DATA", help="labelled test data, svmlight format")
    _add_model_in(p)
    _add_chunk_size(p)
    p.set_defaults(func=_cmd_evaluate)

    p = _add_command(sub, fmt, "demo", _DEMO_HELP, _DEMO_DESCRIPTION, _DEMO_EPILOG)
    _add_plot(p, "the mistake curves")
    p.add_argument(
        "--epochs",
        type=_positive_int,
        default=1,
        help="passes over the training set before testing (default: 1)",
    )
    p.set_defaults(func=_cmd_demo)

    from .reproduce import register as _register_reproduce

    _register_reproduce(sub, fmt)
    from .report import register as _register_report

    _register_report(sub, fmt)
    from .serve import register as _register_serve

    _register_serve(sub, fmt)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line interface; returns the exit status (0 ok, 2 error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "train" and args.model is None and args.resume is None:
        parser.error("train: the option -m/--model is required (or --resume MODEL)")
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `onlinelearn predict ... | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the final flush
        except OSError:  # pragma: no cover
            pass
        return 0
    except KeyboardInterrupt:
        print("onlinelearn: interrupted", file=sys.stderr)
        return 130
    except (
        CLIError,
        ValueError,
        OSError,
        EOFError,
        OverflowError,
        FloatingPointError,
        MemoryError,
        *_DECOMPRESSION_ERRORS,
    ) as exc:
        if os.environ.get("ONLINELEARN_DEBUG"):
            raise
        print(f"onlinelearn {args.command}: error: {_error_message(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: still one line, with the way to see more
        if os.environ.get("ONLINELEARN_DEBUG"):
            raise
        print(
            f"onlinelearn {args.command}: internal error: {type(exc).__name__}: {exc} "
            "(ONLINELEARN_DEBUG=1 shows the traceback; please report it)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
