"""``onlinelearn train``: learn from svmlight files in chunks (in process, resumed, or on Dask)."""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from ._common import (
    CLIError,
    _check_model_size,
    _chunks,
    _learn_chunk,
    _make_learner,
    _ProgressTable,
    _reading,
    _resumed_learner,
)
from .evaluate import _online_bound_text


def _cmd_train(args) -> int:
    from tqdm import tqdm

    from onlinelearn.io import iter_svmlight_chunks, svmlight_n_features
    from onlinelearn.model_io import save_model
    from onlinelearn.shell.atomic import check_writable

    if args.epochs < 1:
        raise CLIError("--epochs must be at least 1")
    if args.chunk_size < 1:
        raise CLIError("--chunk-size must be at least 1")
    if not 0 < args.delta <= 1:
        raise CLIError(f"--delta must be in (0, 1], got {args.delta}")
    model_path = args.model if args.model is not None else args.resume
    for path in args.data:
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", path)
    check_writable(model_path)  # learn it now, not after the whole pass
    if args.resume is not None:
        est = _resumed_learner(args)
    else:
        est = _make_learner(args.learner or "perceptron", args.C, args.average, args.seed)
    if args.scheduler is not None:
        return _train_distributed(args, est, model_path)
    say = (lambda s: None) if args.quiet else (lambda s: tqdm.write(s, file=sys.stdout))
    n_features = args.n_features
    if args.resume is not None:
        n_features = int(est.n_features_in_)
    elif n_features is None:
        shown = args.data[0] if len(args.data) == 1 else f"{len(args.data)} files"
        say(f"scanning {shown} for the number of features (pass --n-features to skip this)")
        n_features, widest = 1, args.data[0]
        for path in args.data:
            with _reading(path, lambda: "while scanning for the number of features"):
                width = svmlight_n_features(path)
            if width > n_features:
                n_features, widest = width, path
        scanned = f"{widest}: the highest feature index, {n_features},"
    _check_model_size(
        n_features,
        bool(est.average),
        lambda s: print(s, file=sys.stderr),
        None if args.n_features is not None or args.resume is not None else scanned,
    )
    say(f"learner: {est!r}\nfeatures: {n_features}\n")
    table = _ProgressTable(say) if not args.quiet else None
    pair_counts = {} if type(est).__name__ == "COPA" else None  # (label, prediction), pass 1
    total_rows = total_mistakes = 0
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        for path in args.data:
            reader = iter_svmlight_chunks(
                path, chunk_size=args.chunk_size, n_features=n_features, prefetch=True
            )
            desc = f"epoch {epoch + 1}/{args.epochs}" if args.epochs > 1 else "train"
            with (
                reader,
                tqdm(
                    total=reader.total_bytes,
                    unit="B",
                    unit_scale=True,
                    desc=desc,
                    disable=True if args.quiet else None,
                    file=sys.stderr,
                    leave=False,
                ) as bar,
            ):
                first_line = 1
                for X, y in _chunks(reader, path):
                    pred = _learn_chunk(est, X, y, path, first_line, reader.lines_read)
                    first_line = reader.lines_read + 1
                    total_rows += len(y)
                    total_mistakes += int(np.count_nonzero(pred != y))
                    if table is not None:
                        table.update(y, pred)
                    if pair_counts is not None and epoch == 0 and len(y):
                        pairs, n = np.unique(np.column_stack([y, pred]), axis=0, return_counts=True)
                        for (a, b), k in zip(pairs.tolist(), n.tolist(), strict=True):
                            pair_counts[a, b] = pair_counts.get((a, b), 0) + k
                    bar.update(reader.bytes_read - bar.n)
    elapsed = time.perf_counter() - t0
    if total_rows == 0:
        raise CLIError(f"{', '.join(args.data)}: no examples found")
    if table is not None:
        table.finish()
    save_model(est, model_path)
    say(
        f"\nfinished: {total_rows} examples ({args.epochs} pass(es)), {total_mistakes} "
        f"progressive mistakes (rate {total_mistakes / total_rows:.6f}), "
        f"{len(est.classes_)} classes, {elapsed:.2f} s\nmodel saved to {model_path}"
    )
    if pair_counts:
        say(_online_bound_text(pair_counts, est.classes_, args.delta))
    return 0


def _train_distributed(args, est, model_path) -> int:
    """``train --scheduler ADDRESS``: iterative parameter mixing, one shard per DATA file."""
    from onlinelearn.distributed import ParameterMixing, require_dask
    from onlinelearn.model_io import save_model

    if args.resume is not None:
        raise CLIError("--resume cannot be combined with --scheduler")
    try:
        distributed = require_dask()
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    if args.n_features is not None:
        _check_model_size(args.n_features, bool(est.average), lambda s: print(s, file=sys.stderr))
    t0 = time.perf_counter()
    try:
        client = distributed.Client(args.scheduler, timeout="20s")
    except OSError as exc:
        raise CLIError(f"cannot reach the Dask scheduler {args.scheduler}: {exc}") from None
    try:
        pm = ParameterMixing(est, n_epochs=args.epochs, client=client, n_features=args.n_features)
        pm.fit([os.fspath(p) for p in args.data])
    finally:
        client.close()
    save_model(pm.estimator_, model_path)  # only a complete mixture is ever written
    if not args.quiet:
        for n, rec in enumerate(pm.history_, 1):
            rows, mistakes = sum(rec["rows"]), sum(rec["mistakes"])
            print(
                f"epoch {n}: {rows} examples on {len(rec['rows'])} shards, {mistakes} online "
                f"mistakes (rate {mistakes / max(rows, 1):.6f}), updates per shard "
                f"{rec['updates']}"
            )
        print(
            f"finished: {args.epochs} mixing round(s), {len(pm.classes_)} classes, "
            f"{time.perf_counter() - t0:.2f} s\nmodel saved to {model_path}"
        )
    return 0
