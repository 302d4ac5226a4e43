"""``onlinelearn report MODEL DATA -o report.html``: one self-contained HTML page."""

from __future__ import annotations

import os

from ._loop import _chunks
from ._options import CLIError, _add_chunk_size, _add_command, _error_message

_HELP = "write one self-contained HTML page about a model on labelled data"

_DESCRIPTION = """\
Write one HTML page (no external file: it opens offline) about a saved model on a labelled
svmlight file: the mistake curve along the file, the confusion matrix, the recall of every
class and the model's parameters and counters.

By default the model only predicts (a held-out test of the saved model).  With --progressive it
goes on learning as it reads (each chunk is predicted, then learned from: progressive
validation), so the curve is the online mistake curve of the stream; the model file is not
changed either way.
"""

_EPILOG = """\
examples:
  onlinelearn report model.npz test.svm -o report.html
  onlinelearn report model.npz stream.svm -o online.html --progressive
"""


def register(sub, fmt) -> None:
    """Add ``report`` to the sub-commands ``sub``."""
    p = _add_command(sub, fmt, "report", _HELP, _DESCRIPTION, _EPILOG)
    p.add_argument("model", metavar="MODEL", help="model file written by train")
    p.add_argument("data", metavar="DATA", help="labelled data, svmlight format")
    p.add_argument("-o", "--output", required=True, help="the HTML file to write")
    p.add_argument(
        "--progressive",
        action="store_true",
        help="learn from each chunk after predicting it (the saved model is not changed)",
    )
    p.add_argument(
        "--bounds",
        action="store_true",
        # the list is onlinelearn.bounds.COVERED, spelt out so that the CLI starts without
        # importing the estimators (tests/test_bounds_o2b.py checks they agree)
        help="add the theorem's bound (onlinelearn.bounds.report: Perceptron, PNormPerceptron, "
        "PassiveAggressiveClassifier (PA, PA-I, PA-II), Winnow, COPA, OnlineLearner with a "
        "LipschitzTuned or LossTuned step, WeightedMinMax (full covariance)): "
        "the learner's parameters run from scratch over DATA in file order, observed mistakes "
        "against the bound, and the duality gap (reads DATA into memory)",
    )
    p.add_argument("--title", default=None, help="the page's title")
    _add_chunk_size(p)
    p.set_defaults(func=_cmd_report)


def _predictions(est, path, chunk_size, progressive):
    import numpy as np

    from onlinelearn.io import iter_svmlight_chunks

    ys, ps = [], []
    with iter_svmlight_chunks(
        path, chunk_size=chunk_size, n_features=int(est.n_features_in_), prefetch=True
    ) as reader:
        first_line = 1
        for X, y in _chunks(reader, path):
            try:
                pred = np.asarray(est.predict(X))
                if progressive:
                    est.partial_fit(X, y)
            except (ValueError, FloatingPointError, OverflowError) as exc:
                raise CLIError(
                    f"{path}: lines {first_line}-{reader.lines_read}: {_error_message(exc)}"
                ) from None
            first_line = reader.lines_read + 1
            ys.append(np.asarray(y))
            ps.append(pred)
    if not ys or sum(len(y) for y in ys) == 0:
        raise CLIError(f"{path}: no examples found")
    return np.concatenate(ys), np.concatenate(ps)


def _cmd_report(args) -> int:
    from onlinelearn.model_io import load_model
    from onlinelearn.registry import spec_of_estimator
    from onlinelearn.report import html_report
    from onlinelearn.shell.atomic import atomic_write

    for what, other in (("the input file", args.data), ("the model file", args.model)):
        try:
            same = os.path.samefile(args.output, other)
        except OSError:
            same = False
        if same:
            raise CLIError(f"-o {args.output} is {what}; write the report elsewhere")
    est = load_model(args.model)
    spec = spec_of_estimator(est)
    if spec is not None and spec.task != "classification":
        raise CLIError(
            f"report draws classifiers; {type(est).__name__} is a {spec.task} model "
            f"(onlinelearn evaluate {args.data} -m {args.model} gives its measures)"
        )
    y, pred = _predictions(est, args.data, args.chunk_size, args.progressive)
    kind = "progressive validation" if args.progressive else "predictions"
    title = args.title or (f"{type(est).__name__} on {os.path.basename(args.data)} ({kind})")
    subtitle = (
        "each chunk predicted by the model, then learned from (progressive validation; the "
        "model file is unchanged)"
        if args.progressive
        else "predictions of the saved model, in the order of the data"
    )
    bound = None
    if args.bounds:
        from onlinelearn.bounds import report as bound_report
        from onlinelearn.io import load_svmlight

        X, yb = load_svmlight(args.data, n_features=int(est.n_features_in_))
        try:
            bound = bound_report(est, X, yb, show=False)
        except NotImplementedError as exc:
            raise CLIError(f"--bounds: {exc}") from None
    page = html_report(
        est,
        y,
        pred,
        title=title,
        data_name=os.path.basename(args.data),
        subtitle=subtitle,
        bounds=bound,
    )
    with atomic_write(args.output, "w", encoding="utf-8") as out:
        out.write(page)
    return 0
