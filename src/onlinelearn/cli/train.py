"""``onlinelearn train``: learn from svmlight files in chunks (in process, resumed, or on Dask)."""

from __future__ import annotations

import os
import sys
import time

from ._learners import _learner_of, _make_learner, _model_task, _resumed_learner
from ._loop import (
    _announce_compilation,
    _check_model_size,
    _chunks,
    _concat_rows,
    _LabelRuns,
    _learn_chunk,
    _ProgressTable,
    _ranking_labels,
    _reading,
    _ShuffleBuffer,
)
from ._options import (
    CLIError,
    _check_format,
    _error_message,
    _format_options,
    _stderr_line,
    _vw_width,
)
from .evaluate import _online_bound_text

STDIN = "-"


def _spool_stdin(say):
    """Copy standard input (decompressed) to a temporary file, for what needs two passes."""
    import shutil
    import tempfile

    from onlinelearn.io.formats import open_stdin

    say("reading standard input into a temporary file (pass --n-features, one epoch and an "
        "online learner to stream it instead)")  # fmt: skip
    tmp = tempfile.NamedTemporaryFile(prefix="onlinelearn-stdin-", suffix=".txt", delete=False)  # noqa: SIM115
    with tmp, open_stdin() as src:
        shutil.copyfileobj(src, tmp, 1 << 20)
    return tmp.name


def _open_reader(args, path, n_features, task):
    from onlinelearn.io.formats import chunk_reader, open_stdin

    try:
        source = open_stdin() if path == STDIN else path
        return chunk_reader(args.format, source, chunk_size=args.chunk_size,
                            n_features=n_features, task=task, prefetch=True,
                            **_format_options(args))  # fmt: skip
    except ValueError as exc:
        if "unknown format" in str(exc):
            raise CLIError(f"--format {args.format}: {exc}") from None
        raise


def _seen_columns(args, est, n_features):
    """``--format vw``: a new learner that learns per coordinate keeps weights only for the
    hashed columns seen (:class:`~onlinelearn.seen_columns.SeenColumns`: the same model as on
    all ``2**bits`` columns, in memory and time of the columns seen); others as they are."""
    from onlinelearn.seen_columns import SeenColumns

    if args.resume is not None or not SeenColumns.supports(est):
        return est
    return SeenColumns(est, n_features)


def _shown(path) -> str:
    return "standard input" if path == STDIN else str(path)


def _cmd_train(args) -> int:
    from tqdm import tqdm

    from onlinelearn.io.formats import scan_n_features
    from onlinelearn.model_io import save_model
    from onlinelearn.seen_columns import SeenColumns
    from onlinelearn.shell.atomic import check_writable

    from .. import registry

    if args.epochs < 1:
        raise CLIError("--epochs must be at least 1")
    if args.chunk_size < 1:
        raise CLIError("--chunk-size must be at least 1")
    if not 0 < args.delta <= 1:
        raise CLIError(f"--delta must be in (0, 1], got {args.delta}")
    _check_format(args.format)
    model_path = args.model if args.model is not None else args.resume
    data = [str(p) for p in args.data]
    if data.count(STDIN) > 1:
        raise CLIError("standard input (-) can be read only once")
    for path in data:
        if path != STDIN and not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", path)
    check_writable(model_path)  # learn it now, not after the whole pass
    if args.resume is not None:
        est = _resumed_learner(args)
        spec = registry.spec_of_estimator(_learner_of(est))
        task = _model_task(est)
    else:
        name = args.learner or "perceptron"
        spec = registry.get(name)
        est = _make_learner(name, args.C, args.average, args.seed, args.param)
        task = spec.task
    if args.scheduler is not None:
        return _train_distributed(args, est, model_path)
    online = spec is None or spec.online
    say = (lambda s: None) if args.quiet else (lambda s: tqdm.write(s, file=sys.stdout))
    warn = (lambda s: None) if args.quiet else _stderr_line
    if not online:
        for flag, bad in (("--epochs", args.epochs != 1),
                          ("--shuffle-buffer", args.shuffle_buffer is not None)):  # fmt: skip
            if bad:
                raise CLIError(
                    f"{flag} applies to online learners; {spec.name} is a batch learner (fitted "
                    "once on the whole data)"
                )
    n_features = args.n_features
    if args.resume is not None:
        n_features = int(est.n_features_in_)
    if args.format == "vw":
        if args.n_features is not None:
            raise CLIError("--n-features does not apply to --format vw (use --bits)")
        n_features = _vw_width(args, n_features)
        scanned = f"--bits {n_features.bit_length() - 1}"
        est = _seen_columns(args, est, n_features)
    else:
        _vw_width(args)
    spooled = None
    needs_classes = spec is not None and spec.needs_classes and args.resume is None
    if STDIN in data and (n_features is None or args.epochs > 1 or not online or needs_classes):
        spooled = _spool_stdin(say)
        data = [spooled if p == STDIN else p for p in data]
    try:
        if n_features is None:
            shown = _shown(data[0]) if len(data) == 1 else f"{len(data)} files"
            if spooled is not None and len(data) == 1:
                shown = "standard input"
            say(f"scanning {shown} for the number of features (pass --n-features to skip this)")
            n_features, widest = 1, data[0]
            for path in data:
                with _reading(path, lambda: "while scanning for the number of features"):
                    width = scan_n_features(args.format, path, task)
                if width is not None and width > n_features:
                    n_features, widest = width, path
            scanned = f"{_shown(widest)}: the highest feature index, {n_features},"
        if not isinstance(est, SeenColumns):  # (its weights are for the columns seen)
            _check_model_size(
                n_features,
                bool(getattr(est, "average", False)),
                _stderr_line,
                None if args.n_features is not None or args.resume is not None else scanned,
            )
        classes = None
        if needs_classes:  # a learner that cannot add labels: read them first
            say(f"reading the labels first ({spec.name} needs them all at its first update)")
            classes = _scan_labels(args, data, n_features, task)
        say(f"learner: {est!r}\nfeatures: {n_features}\n")
        with _announce_compilation(warn):
            if online:
                summary = _train_online(args, est, data, n_features, task, say, warn, tqdm,
                                        classes)  # fmt: skip
            else:
                summary = _train_batch(args, est, data, n_features, task, say, tqdm)
    finally:
        if spooled is not None:
            os.unlink(spooled)
    save_model(est, model_path)
    say(f"{summary}\nmodel saved to {model_path}")
    return 0


def _progress_bar(tqdm, args, reader, desc):
    if reader.total_bytes is not None:
        return tqdm(total=reader.total_bytes, unit="B", unit_scale=True, desc=desc,
                    disable=True if args.quiet else None, file=sys.stderr,
                    leave=False)  # fmt: skip
    return tqdm(unit=" rows", unit_scale=True, desc=desc, file=sys.stderr, leave=False,
                disable=True if args.quiet else None)  # fmt: skip


def _advance(bar, reader, rows):
    if reader.total_bytes is not None:
        bar.update(reader.bytes_read - bar.n)
    else:
        bar.update(rows)


def _scan_labels(args, data, n_features, task):
    import numpy as np

    labels = set()
    for path in data:
        with _open_reader(args, path, n_features, task) as reader:
            for _, y in _chunks(reader, _shown(path)):
                labels.update(np.unique(y).tolist())
    return np.asarray(sorted(labels))


def _train_online(args, est, data, n_features, task, say, warn, tqdm, classes=None) -> str:
    import numpy as np

    table = _ProgressTable(say) if not args.quiet else None
    # (label, prediction) of pass 1
    pair_counts = {} if type(_learner_of(est)).__name__ == "COPA" else None
    runs = _LabelRuns() if task != "regression" else None
    seed = 0 if args.seed is None else args.seed
    shuffle = _ShuffleBuffer(args.shuffle_buffer, seed) if args.shuffle_buffer else None
    total_rows, total_loss = 0, 0.0
    t0 = time.perf_counter()

    def learn(X, y, path, first_line, last_line, epoch, sample_weight=None):
        nonlocal total_rows, total_loss
        pred, loss = _learn_chunk(est, X, y, path, first_line, last_line, task, classes,
                                  sample_weight)  # fmt: skip
        total_rows += len(y)
        total_loss += float(np.sum(loss))
        if table is not None:
            table.update(y, pred, loss)
        if runs is not None and epoch == 0:
            runs.update(y)
            if runs.rows <= runs.WATCH:
                verdict = runs.verdict()
                if verdict:
                    warn(verdict)
        if pair_counts is not None and epoch == 0 and len(y):
            pairs, n = np.unique(np.column_stack([y, pred]), axis=0, return_counts=True)
            for (a, b), k in zip(pairs.tolist(), n.tolist(), strict=True):
                pair_counts[a, b] = pair_counts.get((a, b), 0) + k

    for epoch in range(args.epochs):
        for path in data:
            reader = _open_reader(args, path, n_features, task)
            desc = f"epoch {epoch + 1}/{args.epochs}" if args.epochs > 1 else "train"
            with reader, _progress_bar(tqdm, args, reader, desc) as bar:
                first_line = 1
                for X, y in _chunks(reader, _shown(path)):
                    weights = getattr(reader, "sample_weight", None)  # VW importance weights
                    if weights is not None and shuffle is not None:
                        raise CLIError("--shuffle-buffer cannot keep importance weights yet")
                    if shuffle is not None:
                        shuffled = shuffle.push(X, y)
                        if shuffled is not None:
                            learn(*shuffled, f"{_shown(path)} (shuffled rows)", first_line,
                                  reader.lines_read, epoch)  # fmt: skip
                    else:
                        learn(X, y, _shown(path), first_line, reader.lines_read, epoch, weights)
                    first_line = reader.lines_read + 1
                    _advance(bar, reader, len(y))
        if shuffle is not None:  # every epoch ends with its rows
            rest = shuffle.drain()
            if rest is not None:
                learn(*rest, "the shuffled rows", "(buffer)", "end", epoch)
    elapsed = time.perf_counter() - t0
    if total_rows == 0:
        raise CLIError(f"{', '.join(_shown(p) for p in data)}: no examples found")
    if table is not None:
        table.finish()
    if runs is not None:
        verdict = runs.verdict()  # a file sorted beyond the rows watched
        if verdict:
            warn(verdict)
    passes = f"{total_rows} examples ({args.epochs} pass(es))"
    if task == "regression":
        what = f"progressive mean squared error {total_loss / total_rows:.6g}"
    elif task == "ranking":
        what = (f"{int(total_loss)} progressive ranking mistakes (rate "
                f"{total_loss / total_rows:.6f}), {len(est.classes_)} labels")  # fmt: skip
    else:
        what = (f"{int(total_loss)} progressive mistakes (rate {total_loss / total_rows:.6f}), "
                f"{len(est.classes_)} classes")  # fmt: skip
    summary = f"\nfinished: {passes}, {what}, {elapsed:.2f} s"
    if pair_counts:
        summary += "\n" + _online_bound_text(pair_counts, est.classes_, args.delta)
    return summary


def _train_batch(args, est, data, n_features, task, say, tqdm) -> str:
    """A batch learner: read every file, then one ``fit``; report the training error."""
    import numpy as np

    parts = []
    for path in data:
        reader = _open_reader(args, path, n_features, task)
        with reader, _progress_bar(tqdm, args, reader, "read") as bar:
            for X, y in _chunks(reader, _shown(path)):
                parts.append((X, y))
                _advance(bar, reader, len(y))
    parts = [p for p in parts if p[0].shape[0]]
    if not parts:
        raise CLIError(f"{', '.join(_shown(p) for p in data)}: no examples found")
    X, y = _concat_rows(parts)
    if task == "ranking":
        y = _ranking_labels(y)
    say(f"fitting {type(est).__name__} on {X.shape[0]} examples (a batch learner)")
    t0 = time.perf_counter()
    try:
        est.fit(X, y)
    except (ValueError, FloatingPointError, OverflowError, MemoryError) as exc:
        raise CLIError(f"{', '.join(_shown(p) for p in data)}: {_error_message(exc)}") from None
    elapsed = time.perf_counter() - t0
    pred = np.asarray(est.predict(X))
    if task == "regression":
        what = f"training mean squared error {float(np.mean((pred - y) ** 2)):.6g}"
    else:
        wrong = int(np.count_nonzero(pred != y))
        what = (f"{wrong} training mistakes (rate {wrong / len(y):.6f}; not progressive: the "
                f"model saw every row), {len(est.classes_)} classes")  # fmt: skip
    return f"\nfinished: {X.shape[0]} examples, {what}, {elapsed:.2f} s"


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
