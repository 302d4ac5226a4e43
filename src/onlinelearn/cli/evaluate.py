"""``onlinelearn predict`` and ``onlinelearn evaluate``."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from ._learners import _model_task
from ._loop import _announce_compilation, _chunks, _ranking_labels
from ._options import (
    CLIError,
    _check_format,
    _error_message,
    _format_label,
    _format_options,
    _stderr_line,
    _vw_width,
)


def _online_bound_text(pair_counts, classes, delta) -> str:
    """Theorem 1 of the COPA paper for the progressive predictions of the first pass.

    With the misclassification losses l_{q|p} = 1[h_{t-1}(x_t) = q] (M = 1) the empirical online
    confusion risk (Definition 4) is C_hat[p, q] = #{t : y_t = p, prediction q} / T_p off the
    diagonal, and ||C|| <= ||C_hat|| + sqrt(2Q sum_p 1/T_p log(Q/delta)) with probability at
    least 1 - delta (eq. (13); onlinelearn.metrics.confusion_risk_bound).
    """
    from onlinelearn.metrics import confusion_risk_bound

    labels = sorted(set(np.asarray(classes).tolist()) | {v for pair in pair_counts for v in pair})
    index = {v: i for i, v in enumerate(labels)}
    N = np.zeros((len(labels), len(labels)))
    for (a, b), k in pair_counts.items():
        N[index[a], index[b]] += k
    T = N.sum(axis=1)
    C_hat = np.divide(N, T[:, None], out=np.zeros_like(N), where=T[:, None] > 0)
    np.fill_diagonal(C_hat, 0.0)
    res = confusion_risk_bound(C_hat, T, M=1.0, delta=delta)
    return (
        f"confusion risk bound (COPA paper Theorem 1, misclassification losses of the first "
        f"pass, T = {int(T.sum())}): ||C_hat|| = {res.empirical_norm:.4f}; with probability >= "
        f"{1 - delta:g} the online confusion risk has norm <= {res.empirical_norm:.4f} + "
        f"{res.deviation:.4f} = {res.bound:.4f} (delta = {delta:g})"
    )


# -- predict / evaluate -------------------------------------------------------------------------


def _read_options(args, est) -> dict:
    """The reader options of ``--format`` (``-q`` for vw), ``--bits`` checked against the model."""
    _vw_width(args, int(est.n_features_in_))
    return _format_options(args)


def _predict_file(est, path, chunk_size, task, fmt="svmlight", quiet=True, options=None):
    """``(labels, predictions, X)`` of each chunk of ``path`` (``-``: standard input)."""
    from tqdm import tqdm

    from onlinelearn.io.formats import chunk_reader, open_stdin

    _check_format(fmt)
    shown = "standard input" if str(path) == "-" else path
    source = open_stdin() if str(path) == "-" else path
    n_features = int(est.n_features_in_)
    try:
        reader = chunk_reader(fmt, source, chunk_size=chunk_size, n_features=n_features,
                              task=task, prefetch=True, **(options or {}))  # fmt: skip
    except ValueError as exc:
        if "unknown format" in str(exc):
            raise CLIError(f"--format {fmt}: {exc}") from None
        raise
    bar = tqdm(total=reader.total_bytes, unit="B" if reader.total_bytes else " rows",
               unit_scale=True, desc="predict", disable=True if quiet else None,
               file=sys.stderr, leave=False)  # fmt: skip
    with reader, bar:
        first_line = 1
        for X, y in _chunks(reader, shown):
            try:
                pred = np.asarray(est.predict(X))
            except (ValueError, FloatingPointError, OverflowError) as exc:
                raise CLIError(
                    f"{shown}: lines {first_line}-{reader.lines_read}: {_error_message(exc)}"
                ) from None
            first_line = reader.lines_read + 1
            bar.update(reader.bytes_read - bar.n if reader.total_bytes else len(pred))
            yield y, pred, X


def _format_prediction(p, task, classes):
    if task == "ranking":  # an indicator row: the predicted set of labels
        return _format_label(tuple(classes[np.flatnonzero(p)].tolist()))
    if task == "regression":
        return repr(float(p))
    return _format_label(p)


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _compiling_notice(args):
    """'compiling, once' on stderr when numba compiles (nothing with -q)."""
    return _announce_compilation((lambda s: None) if args.quiet else _stderr_line)


def _cmd_predict(args) -> int:
    with _compiling_notice(args):
        return _predict(args)


def _predict(args) -> int:
    from onlinelearn.model_io import load_model
    from onlinelearn.shell.atomic import atomic_write

    if args.output is not None:
        for what, other in (("the input file", args.data), ("the model file", args.model)):
            if _same_file(args.output, other):
                raise CLIError(f"-o {args.output} is {what}; write the predictions elsewhere")
    est = load_model(args.model)
    task = _model_task(est)
    classes = np.asarray(getattr(est, "classes_", []))

    def write_all(out):
        # the labels of the file are ignored: read as numbers (any will do), or as label sets
        read_as = "ranking" if task == "ranking" else "regression"
        for _, pred, _ in _predict_file(est, args.data, args.chunk_size, read_as, args.format,
                                        args.quiet, _read_options(args, est)):  # fmt: skip
            if task == "ranking" or task == "regression":
                out.write("".join(_format_prediction(p, task, classes) + "\n" for p in pred))
            else:
                out.write("".join(_format_label(p) + "\n" for p in pred.tolist()))

    if args.output is None:
        try:
            write_all(sys.stdout)
        finally:
            sys.stdout.flush()
        return 0
    # the output appears complete or not at all; an existing file stays until the last line
    with atomic_write(args.output, "w", encoding="utf-8") as out:
        write_all(out)
    return 0


def _format_matrix(M, labels, fmt) -> str:
    names = [_format_label(v) for v in labels]
    cells = [[fmt(v) for v in row] for row in M]
    width = max([len(n) for n in names] + [len(c) for row in cells for c in row] + [4])
    lines = [" " * (width + 2) + " ".join(f"{n:>{width}}" for n in names)]
    for name, row in zip(names, cells, strict=True):
        lines.append(f"{name:>{width}}  " + " ".join(f"{c:>{width}}" for c in row))
    return "\n".join(lines)


def _cmd_evaluate(args) -> int:
    with _compiling_notice(args):
        return _evaluate(args)


def _evaluate(args) -> int:
    from sklearn.metrics import balanced_accuracy_score, confusion_matrix

    from onlinelearn.model_io import load_model

    est = load_model(args.model)
    task = _model_task(est)
    if task == "regression":
        return _evaluate_regression(est, args)
    if task == "ranking":
        return _evaluate_ranking(est, args)
    ys, ps = [], []
    for y, pred, _ in _predict_file(est, args.data, args.chunk_size, task, args.format,
                                    args.quiet, _read_options(args, est)):  # fmt: skip
        ys.append(y)
        ps.append(pred)
    if not ys or sum(len(y) for y in ys) == 0:
        raise CLIError(f"{args.data}: no examples found")
    y = np.concatenate(ys)
    pred = np.concatenate(ps)
    labels = np.union1d(np.unique(y), np.asarray(est.classes_))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # labels that are predicted but absent from y
        bacc = balanced_accuracy_score(y, pred)
    acc = float(np.mean(y == pred))
    print(f"examples:           {len(y)}")
    print(f"accuracy:           {acc:.6f}")
    print(f"balanced accuracy:  {bacc:.6f}")
    print("\nconfusion matrix (rows: true label, columns: predicted label):")
    print(_format_matrix(confusion_matrix(y, pred, labels=labels), labels, str))
    try:
        from onlinelearn.metrics import confusion_matrix_conditional, operator_norm
    except ImportError:
        return 0
    C = confusion_matrix_conditional(y, pred, labels=labels)
    print("\nconditional confusion rates C[p, q] = P(predict q | true p), diagonal zeroed:")
    print(_format_matrix(C, labels, lambda v: f"{v:.4f}"))
    print(f"operator norm ||C||: {operator_norm(C):.6f}")
    return 0


def _evaluate_regression(est, args) -> int:
    n, se, ae, s1, s2 = 0, 0.0, 0.0, 0.0, 0.0
    for y, pred, _ in _predict_file(est, args.data, args.chunk_size, "regression", args.format,
                                    args.quiet, _read_options(args, est)):  # fmt: skip
        y = np.asarray(y, dtype=np.float64)
        n += len(y)
        se += float(np.sum((pred - y) ** 2))
        ae += float(np.sum(np.abs(pred - y)))
        s1 += float(np.sum(y))
        s2 += float(np.sum(y * y))
    if n == 0:
        raise CLIError(f"{args.data}: no examples found")
    var = s2 / n - (s1 / n) ** 2
    print(f"examples:             {n}")
    print(f"mean squared error:   {se / n:.6g}")
    print(f"mean absolute error:  {ae / n:.6g}")
    r2 = 1.0 - (se / n) / var if var > 0 else float("nan")
    print(f"R^2:                  {r2:.6f}")
    return 0


def _evaluate_ranking(est, args) -> int:
    from onlinelearn.ranking.metrics import (
        average_precision,
        coverage_error,
        label_ranking_loss,
        one_error,
    )

    classes = np.asarray(est.classes_)
    index = {v: i for i, v in enumerate(classes.tolist())}
    Ys, Ss, unknown = [], [], set()
    for y, _, X in _predict_file(est, args.data, args.chunk_size, "ranking", args.format,
                                 args.quiet, _read_options(args, est)):  # fmt: skip
        Y = np.zeros((len(y), len(classes)), dtype=np.int64)
        for i, labels in enumerate(_ranking_labels(y)):
            for v in labels:
                j = index.get(v)
                if j is None:
                    unknown.add(v)
                else:
                    Y[i, j] = 1
        Ys.append(Y)
        Ss.append(np.asarray(est.decision_function(X), dtype=np.float64).reshape(len(y), -1))
    if not Ys or sum(len(Y) for Y in Ys) == 0:
        raise CLIError(f"{args.data}: no examples found")
    Y, S = np.concatenate(Ys), np.concatenate(Ss)
    keep = (Y.sum(axis=1) > 0) & (Y.sum(axis=1) < Y.shape[1])  # the measures need both kinds
    print(f"examples:             {len(Y)} ({int(keep.sum())} with relevant and irrelevant "
          "labels, which the measures use)")  # fmt: skip
    if unknown:
        print(f"labels unknown to the model (ignored): {sorted(unknown)}")
    if not keep.any():
        raise CLIError(f"{args.data}: no row has both relevant and irrelevant known labels")
    Y, S = Y[keep], S[keep]
    print(f"ranking loss:         {label_ranking_loss(Y, S):.6f}")
    print(f"one-error:            {one_error(Y, S):.6f}")
    print(f"coverage:             {coverage_error(Y, S):.6f}")
    print(f"average precision:    {average_precision(Y, S):.6f}")
    return 0


# -- demo ---------------------------------------------------------------------------------------
