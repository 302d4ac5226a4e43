"""``onlinelearn predict`` and ``onlinelearn evaluate``."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from ._common import CLIError, _chunks, _error_message, _format_label


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


def _predict_file(est, path, chunk_size, label_dtype):
    from onlinelearn.io import iter_svmlight_chunks

    n_features = int(est.n_features_in_)
    with iter_svmlight_chunks(
        path,
        chunk_size=chunk_size,
        n_features=n_features,
        label_dtype=label_dtype,
        prefetch=True,
    ) as reader:
        first_line = 1
        for X, y in _chunks(reader, path):
            try:
                pred = np.asarray(est.predict(X))
            except (ValueError, FloatingPointError, OverflowError) as exc:
                raise CLIError(
                    f"{path}: lines {first_line}-{reader.lines_read}: {_error_message(exc)}"
                ) from None
            first_line = reader.lines_read + 1
            yield y, pred


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _cmd_predict(args) -> int:
    from onlinelearn.model_io import load_model
    from onlinelearn.shell.atomic import atomic_write

    if args.output is not None:
        for what, other in (("the input file", args.data), ("the model file", args.model)):
            if _same_file(args.output, other):
                raise CLIError(f"-o {args.output} is {what}; write the predictions elsewhere")
    est = load_model(args.model)

    def write_all(out):
        for _, pred in _predict_file(est, args.data, args.chunk_size, None):
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
    from sklearn.metrics import balanced_accuracy_score, confusion_matrix

    from onlinelearn.model_io import load_model

    est = load_model(args.model)
    ys, ps = [], []
    for y, pred in _predict_file(est, args.data, args.chunk_size, np.int64):
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


# -- demo ---------------------------------------------------------------------------------------
