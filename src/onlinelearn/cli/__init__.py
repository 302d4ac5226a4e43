"""Command line interface: ``onlinelearn train | predict | evaluate | demo | reproduce``.

Run ``onlinelearn --help`` or ``onlinelearn <command> --help`` for the options and an example of
each command.  Errors (missing file, malformed data line, corrupted model file, bad option) print
one line to stderr and exit with status 2; set ``ONLINELEARN_DEBUG=1`` to see the traceback.

Building the parser imports no numerical library (``--help`` answers at once): each command's
module is imported when the command runs.  A new sub-command is one ``_add_command`` block in
:func:`build_parser` and one entry of :data:`_COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .. import registry
from ._learners import LEARNERS, _parse_param
from ._loop import _DECOMPRESSION_ERRORS
from ._options import (
    CLIError,
    _add_chunk_size,
    _add_command,
    _add_model_in,
    _add_plot,
    _add_vw_options,
    _error_message,
    _positive_float,
    _positive_int,
    _quadratic_argv,
)

__all__ = ["LEARNERS", "CLIError", "build_parser", "main"]

#: command function -> its module (imported when the command runs)
_COMMANDS = {
    "_cmd_train": ".train",
    "_cmd_predict": ".evaluate",
    "_cmd_evaluate": ".evaluate",
    "_cmd_demo": ".demo",
}


def __getattr__(name: str):
    if name in _COMMANDS:
        return getattr(importlib.import_module(_COMMANDS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _run_command(name: str):
    """``args -> status`` running the command function ``name`` of this module, looked up when
    it runs (so that its module is imported only then)."""

    def run(args):
        func = globals().get(name) or __getattr__(name)
        return func(args)

    run.__name__ = name
    return run

_MAIN_DESCRIPTION = """\
Online learning (classification, regression, label ranking; linear, second-order, kernel and
SVM learners) on svmlight / LIBSVM files: "label index:value index:value ..." with 1-based
indices (multi-label rows "1,3 index:value ..."), plain or compressed (.gz, .bz2, .xz), or
standard input ("-").  Files are streamed in chunks, so they may be larger than memory.
"""

_MAIN_EPILOG = """\
examples:
  onlinelearn demo                                  # try it on the shipped DNA data
  onlinelearn train train.svm -m model.npz --learner pa1 -C 0.5
  zcat train.svm.gz | onlinelearn train - -m model.npz --learner arow --n-features 123
  onlinelearn train --list-learners                 # every learner, with its task
  onlinelearn evaluate test.svm -m model.npz
  onlinelearn predict test.svm -m model.npz -o predictions.txt
  onlinelearn reproduce copa-toy --plot toy.png    # the COPA paper's toy experiment
  onlinelearn reproduce imbalance --quick          # COPA on imbalanced real data

Errors print one line and exit with status 2; ONLINELEARN_DEBUG=1 shows the traceback.
"""

_TRAIN_HELP = "train a model on an svmlight file (streaming) and save it"

_TRAIN_DESCRIPTION = """\
Train a learner on svmlight files in one streaming pass (or --epochs passes) and save it.

Each chunk of rows is first predicted, then learned from (progressive validation), so the
printed loss is an honest online loss on examples the learner had not yet seen (in the first
pass): the mistake rate for classification and label ranking (a ranking mistake: an irrelevant
label scores at least as high as a relevant one), the squared error for regression.  Lines are
printed at example counts 1, 2, 4, 8, ...: the loss since the start, since the previous line,
the example count, and that example's label and prediction.  New labels are learned as they
appear.  Learners without a combined predict-and-learn step are validated chunk by chunk (the
model before the chunk); batch learners (dual-cd-svc, kernel-svc, primal-dual-boost) read the
whole data, are fitted once and print their training error.  The model is saved as a
pickle-free .npz file that predict, evaluate and onlinelearn.model_io.load_model read.

The first run of a learner compiles its numba code ("compiling, once" on stderr); the compiled
code is cached on disk, so later runs start at once.
"""


def _train_epilog() -> str:
    lines = ["learners (--learner NAME; --list-learners shows their tasks):"]
    for spec in registry.LEARNERS.values():
        lines.append(f"  {spec.name:<19} {spec.summary}")
    lines.append("  in Python only (they do not read rows of features):")
    lines.append("    " + ", ".join(registry.PYTHON_ONLY))
    lines += [
        "",
        "parameters: the typed flags -C, --average, --seed, or any parameter of the learner's",
        "class as --param NAME=VALUE (VALUE a Python literal or a string), checked as in Python.",
        "",
        "example:",
        "  onlinelearn train a9a.bz2 -m a9a.npz --learner pa1 -C 0.1 --n-features 123 --average",
        "  onlinelearn train cpusmall.svm -m reg.npz --learner pa-regressor --param epsilon=0.1",
        "  onlinelearn train enron.svm -m rank.npz --learner label-ranker --param update=II",
        "  onlinelearn train news20.svm -m m.npz --learner arow --shuffle-buffer 20000 --seed 0",
        "  zcat big.svm.gz | onlinelearn train - -m m.npz --n-features 1000000",
    ]
    return "\n".join(lines) + "\n"


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

    p = _add_command(sub, fmt, "train", _TRAIN_HELP, _TRAIN_DESCRIPTION, _train_epilog())
    p.add_argument(
        "data",
        metavar="DATA",
        nargs="*",
        help="training data, svmlight format; - reads standard input (several files: read one "
        "after the other; with --scheduler: one shard per file)",
    )
    p.add_argument(
        "--list-learners",
        action="store_true",
        help="list every learner with its task and exit",
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
        "--learner",
        choices=registry.names(),
        metavar="NAME",
        default=None,
        help="the learner, listed below (default: perceptron)",
    )
    p.add_argument(
        "-C",
        type=_positive_float,
        default=None,
        help="aggressiveness cap (or regularization) of the learners with a C parameter "
        "(default: the learner's)",
    )
    p.add_argument(
        "--param",
        metavar="NAME=VALUE",
        type=_parse_param,
        action="append",
        default=[],
        help="any parameter of the learner's class, e.g. --param variant=PA-II --param "
        "kernel=rbf (repeatable)",
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
    _add_format(p)
    p.add_argument(
        "--shuffle-buffer",
        metavar="N",
        type=_positive_int,
        default=None,
        help="learn the rows in a random order within a buffer of N rows (seeded by --seed, "
        "default 0): for files that come sorted by label",
    )
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
    _add_quiet(p)
    p.set_defaults(func=_run_command("_cmd_train"))

    p = _add_command(sub, fmt, "predict", _PREDICT_HELP, _PREDICT_DESCRIPTION, _PREDICT_EPILOG)
    p.add_argument(
        "data", metavar="DATA", help="data to predict, svmlight format; - reads standard input"
    )
    _add_model_in(p)
    p.add_argument("-o", "--output", default=None, help="output file (default: standard output)")
    _add_chunk_size(p)
    _add_format(p)
    _add_quiet(p, "no progress bar")
    p.set_defaults(func=_run_command("_cmd_predict"))

    p = _add_command(sub, fmt, "evaluate", _EVALUATE_HELP, _EVALUATE_DESCRIPTION, _EVALUATE_EPILOG)
    p.add_argument(
        "data", metavar="DATA", help="labelled test data, svmlight format; - reads standard input"
    )
    _add_model_in(p)
    _add_chunk_size(p)
    _add_format(p)
    _add_quiet(p, "no progress bar")
    p.set_defaults(func=_run_command("_cmd_evaluate"))

    p = _add_command(sub, fmt, "demo", _DEMO_HELP, _DEMO_DESCRIPTION, _DEMO_EPILOG)
    _add_plot(p, "the mistake curves")
    p.add_argument(
        "--epochs",
        type=_positive_int,
        default=1,
        help="passes over the training set before testing (default: 1)",
    )
    _add_quiet(p, "no progress bar")
    p.set_defaults(func=_run_command("_cmd_demo"))

    from .reproduce import register as _register_reproduce

    _register_reproduce(sub, fmt)
    from .report import register as _register_report

    _register_report(sub, fmt)
    from .serve import register as _register_serve

    _register_serve(sub, fmt)
    return parser


def _add_format(p):
    # the readers are onlinelearn.io.formats.FORMATS (not imported here: --help stays fast)
    p.add_argument(
        "--format", default="svmlight", metavar="FORMAT",
        help="input format: svmlight (default) or vw (Vowpal Wabbit's text, features hashed as "
        "onlinelearn.features.Hasher does; --bits, -q AB)",
    )  # fmt: skip
    _add_vw_options(p)


def _add_quiet(p, what="print nothing but errors"):
    p.add_argument("-q", "--quiet", action="store_true", help=what)


#: the reader's advice to Python callers -> the same advice on the command line
_CLI_ADVICE = (
    ("pass label_dtype=None to keep float labels",
     "for real targets choose a regressor: --learner pa-regressor, least-squares or "
     "online-regressor"),
    ("multi-label data: pass multilabel=True",
     "multi-label data: --learner label-ranker learns it"),
)  # fmt: skip


def _list_learners() -> int:
    width = max(len(n) for n in registry.LEARNERS)
    print(f"{'learner':<{width}}  {'task':<14}  {'kind':<6}  class")
    for spec in registry.LEARNERS.values():
        kind = "online" if spec.online else "batch"
        fixed = ", ".join(f"{k}={v!r}" for k, v in spec.params.items())
        cls = f"{spec.class_name}({fixed})"
        task = spec.task + (" (2 labels)" if spec.binary_only else "")
        print(f"{spec.name:<{width}}  {task:<14}  {kind:<6}  {cls}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line interface; returns the exit status (0 ok, 2 error)."""
    parser = build_parser()
    args = parser.parse_args(_quadratic_argv(sys.argv[1:] if argv is None else argv))
    if args.command == "train" and args.list_learners:
        return _list_learners()
    if args.command == "train" and not args.data:
        parser.error("train: the following arguments are required: DATA")
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
        message = _error_message(exc)
        for python_advice, cli_advice in _CLI_ADVICE:  # the reader speaks to Python callers
            message = message.replace(python_advice, cli_advice)
        print(f"onlinelearn {args.command}: error: {message}", file=sys.stderr)
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
