#!/usr/bin/env python
"""One-epoch, side-by-side benchmark of onlinelearn against other linear learners.

Run from the repository root::

    python benchmarks/run.py                       # news20 and mnist, full data
    python benchmarks/run.py --quick               # small subsamples, smoke test (< 1 minute)
    python benchmarks/run.py --datasets news20 --repeat 5

Everything runs in this one process, on the same data, loaded once: the training rows are put in
one fixed random order (``--seed``) and every learner then makes one pass over them in that order
without shuffling of its own.  See ``benchmarks/README.md`` for what each column measures and the
caveats.  This script is not part of the test suite and downloads nothing.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as _dt
import functools
import gc
import json
import os
import resource
import statistics
import sys
import tempfile
import time
import traceback
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path

from _bench_data import (  # noqa: F401 - data_dir and load_data are used by the bench_* scripts
    DATASETS,
    MB,
    QUICK_RIVER_ROWS,
    REPO_ROOT,
    VALUE_DTYPE,
    Data,
    data_dir,
    load_data,
    log,
)
from _bench_methods import (  # noqa: F401 - the scikit-learn factories are used by bench_linear
    Method,
    end_to_end_methods,
    import_ours,
    liblinear_method,
    ours_methods,
    river_method,
    sklearn_methods,
    sklearn_perceptron,
    sklearn_sgd_pa1,
    vw_methods,
)
from _bench_report import environment, markdown


# --------------------------------------------------------------------------------------------
# memory
# --------------------------------------------------------------------------------------------
def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    """Reset the kernel's per-process RSS high-water mark (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _trim_heap() -> None:
    """Give freed heap pages back to the OS (glibc), so that RSS deltas are not hidden by reuse."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def maxrss_mb() -> float:
    """Process-wide max RSS since start (getrusage; kB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# --------------------------------------------------------------------------------------------
# measurement
# --------------------------------------------------------------------------------------------
def measure(m: Method, d: Data, repeat: int, trace: bool) -> dict:
    import numpy as np

    out: dict = {
        "key": m.key,
        "label": m.label,
        "call": m.call,
        "ref": m.ref,
        "kind": m.kind,
        "table": m.table,
        "n_train": int(d.Xtr.shape[0]),
        "n_rows_trained": int(m.n_rows if m.n_rows is not None else d.Xtr.shape[0]),
        "extrapolated": m.n_rows is not None and m.n_rows < d.Xtr.shape[0],
    }
    if m.warmup is not None:
        gc.collect()
        t0 = time.perf_counter()
        m.warmup()
        out["warmup_seconds"] = time.perf_counter() - t0
    times = []
    model = None
    rss_peak = None
    for r in range(repeat):
        if model is not None and m.cleanup is not None:
            m.cleanup(model)
        model = None
        gc.collect()
        if r == 0:
            _trim_heap()
            rss_before = _status_kb("VmRSS")
            hwm_ok = _reset_peak_rss() and rss_before is not None
        t0 = time.perf_counter()
        model = m.fit()
        times.append(time.perf_counter() - t0)
        if r == 0 and hwm_ok:
            rss_peak = max(0, (_status_kb("VmHWM") or 0) - rss_before) / 1024.0
    pred = m.predict(model)
    if m.cleanup is not None:
        m.cleanup(model)
    del model
    out["accuracy"] = float(np.mean(np.asarray(pred) == d.yte))
    out["times_seconds"] = times
    t_med = statistics.median(times)
    out["time_measured_seconds"] = t_med
    out["time_min_seconds"] = min(times)
    scale = out["n_train"] / out["n_rows_trained"]
    out["time_epoch_seconds"] = t_med * scale
    out["seconds_per_1000_examples"] = 1000.0 * t_med / out["n_rows_trained"]
    out["rss_peak_delta_mb"] = rss_peak
    if trace:
        gc.collect()
        tracemalloc.start()
        model = m.fit()
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / MB
        tracemalloc.stop()
        if m.cleanup is not None:
            m.cleanup(model)
        del model
    else:
        out["tracemalloc_peak_mb"] = None
    out["notes"] = list(m.notes)
    out.update(m.extra)
    return out


def run_dataset(name: str, args, ol, ol_error: str | None) -> dict:
    log(f"[{name}] loading")
    d = load_data(name, args.quick, args.seed, args.file_order)
    log(
        f"[{name}] train {d.Xtr.shape} nnz={d.Xtr.nnz}, test {d.Xte.shape}, "
        f"load {d.load_seconds:.2f}s"
    )
    res: dict = {
        "dataset": name,
        "description": DATASETS[name]["description"],
        "n_train": int(d.Xtr.shape[0]),
        "n_test": int(d.Xte.shape[0]),
        "n_features": d.n_features,
        "n_classes": len(d.classes),
        "train_nnz": int(d.Xtr.nnz),
        "train_order": (
            "file order" if args.file_order else f"one fixed permutation (seed {args.seed})"
        ),
        "load_seconds": d.load_seconds,
        "load_read_bz2_seconds": d.read_seconds,
        "load_parse_seconds": d.parse_seconds,
        "rows": [],
        "errors": [],
    }
    if ol is None:
        res["errors"].append(f"ours skipped: {ol_error}")
    river_rows = QUICK_RIVER_ROWS if args.quick else args.river_rows
    with tempfile.TemporaryDirectory(prefix="olbench-") as tmpdir:
        tmp = Path(tmpdir)
        builders: list[tuple[str, Callable[[], list[Method]]]] = []
        if ol is not None:
            builders.append(("ours", lambda: ours_methods(d, args.C, ol)))
        builders += [
            ("scikit-learn", lambda: sklearn_methods(d, args.C)),
            ("river", lambda: [river_method(d, args.C, river_rows, ol)]),
            ("vowpalwabbit", lambda: vw_methods(d, tmp)),
            ("liblinear", lambda: [liblinear_method(d, s) for s in args.liblinear_solvers]),
            ("end-to-end", lambda: end_to_end_methods(d, args.C, tmp, ol)),
        ]
        for lib, build in builders:
            if args.libraries and lib not in args.libraries:
                continue
            try:
                methods = build()
            except Exception as exc:  # a missing / broken peer must not stop the others
                log(traceback.format_exc())
                res["errors"].append(f"{lib}: {type(exc).__name__}: {exc}")
                continue
            for m in methods:
                rep = args.repeat_slow if m.slow else args.repeat
                log(f"[{name}] {m.key} (repeat {rep})")
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        row = measure(m, d, rep, trace=not args.no_tracemalloc)
                except Exception as exc:
                    log(traceback.format_exc())
                    res["errors"].append(f"{m.key}: {type(exc).__name__}: {exc}")
                    continue
                log(f"[{name}]   {row['time_epoch_seconds']:.3f}s/epoch acc={row['accuracy']:.4f}")
                res["rows"].append(row)
    by_key = {r["key"]: r for r in res["rows"]}
    for r in res["rows"]:
        ref = by_key.get(r["ref"])
        r["ratio_to_ref"] = (
            r["time_epoch_seconds"] / ref["time_epoch_seconds"] if ref is not None else None
        )
    res["targets"] = check_targets(by_key)
    if ol is not None and (not args.libraries or "ours" in args.libraries):
        try:
            res["kernels"] = kernel_measures(d, by_key, args.repeat)
        except Exception as exc:
            log(traceback.format_exc())
            res["errors"].append(f"kernels: {type(exc).__name__}: {exc}")
    return res


@functools.cache
def score_sweep():
    """The compiled floor of a pass, ``sweep(data, indices, indptr, W, out)``: the scores
    s_k = <w_k, x> of every row (K weights read per nonzero, float64 sums) and nothing else."""
    import numpy as np
    from numba import njit

    @njit(cache=False)
    def sweep(data, indices, indptr, W, out):
        K = W.shape[1]
        s = np.zeros(K)
        tot = 0.0
        for i in range(indptr.shape[0] - 1):
            for k in range(K):
                s[k] = 0.0
            for q in range(indptr[i], indptr[i + 1]):
                j = indices[q]
                v = np.float64(data[q])
                for k in range(K):
                    s[k] += v * W[j, k]
            tot += s[0]
        out[0] = tot

    return sweep


def kernel_measures(d: Data, by_key: dict, repeat: int) -> dict:
    """The floor of a pass (a score-only sweep reading K weights per nonzero), ns per
    nonzero x class of ours, and the parsers' MB/s on the uncompressed training text."""
    import numpy as np
    from sklearn.datasets import load_svmlight_file

    from onlinelearn.io import load_svmlight

    sweep = score_sweep()

    X = d.Xtr
    K = len(d.classes)
    cells = X.nnz * K
    out = {"nnz_x_classes": cells}
    for wdt in ("float32", "float64"):
        W = np.random.default_rng(0).normal(size=(X.shape[1] + 1, K)).astype(wdt)
        o = np.zeros(1)
        sweep(X.data, X.indices, X.indptr, W, o)
        args = (X.data, X.indices, X.indptr, W, o)
        best = min(_timed(lambda a=args: sweep(*a)) for _ in range(repeat))
        out[f"score_sweep_{wdt}_seconds"] = best
        out[f"score_sweep_{wdt}_ns"] = best / cells * 1e9
    for key in ("ours_pa1", "ours_pa1_last", "ours_perceptron", "ours_copa"):
        if key in by_key:
            out[f"{key}_ns"] = by_key[key]["time_epoch_seconds"] / cells * 1e9
    text = b"".join(d.train_lines)
    with tempfile.TemporaryDirectory(prefix="olparse-") as tmpdir:
        path = Path(tmpdir) / "train.svm"
        path.write_bytes(text)
        load_svmlight(path, n_features=d.n_features, dtype=VALUE_DTYPE)  # compile
        best = min(
            _timed(lambda: load_svmlight(path, n_features=d.n_features, dtype=VALUE_DTYPE))
            for _ in range(repeat)
        )
        sk = _timed(lambda: load_svmlight_file(str(path), n_features=d.n_features))
    out["text_mb"] = len(text) / 1e6
    out["parse_ours_mb_s"] = len(text) / 1e6 / best
    out["parse_sklearn_mb_s"] = len(text) / 1e6 / sk
    return out


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def check_targets(by_key: dict) -> list[dict]:
    """The project's stated goals, evaluated on whatever was measured."""
    out = []
    sk = by_key.get("sklearn_sgd_pa1")
    for ours_key, what in [
        ("ours_pa1", ""),
        ("ours_pa1_auto", " [ours with intercept_scaling='auto']"),
    ]:
        ours = by_key.get(ours_key)
        if not (ours and sk):
            continue
        speed = sk["time_epoch_seconds"] / ours["time_epoch_seconds"]
        ok = speed >= 4.0 and ours["accuracy"] >= sk["accuracy"]
        out.append(
            {
                "target": "ours PA-I >= 4x faster than sklearn SGD pa1 OvR (n_jobs=1), "
                f"equal or better accuracy{what}",
                "measured": f"sklearn/ours time = {speed:.2f}x; acc {ours['accuracy']:.4f} vs "
                f"{sk['accuracy']:.4f}",
                "met": bool(ok),
            }
        )
    for vw_key, ours_key, what in [
        ("vw_oaa_file", "ours_pa1_e2e", "end-to-end (parse text + 1 pass)"),
        ("vw_oaa_cache", "ours_pa1", "VW from binary cache vs ours in memory"),
        (
            "vw_oaa_cache",
            "ours_pa1_auto",
            "VW from binary cache vs ours in memory [ours with intercept_scaling='auto']",
        ),
    ]:
        vw, o = by_key.get(vw_key), by_key.get(ours_key)
        if vw and o:
            speed = vw["time_epoch_seconds"] / o["time_epoch_seconds"]
            ok = speed >= 1.0 and o["accuracy"] >= vw["accuracy"]
            out.append(
                {
                    "target": "ours PA-I no slower than VW --oaa, equal or better accuracy: "
                    + what,
                    "measured": f"VW/ours time = {speed:.2f}x; acc {o['accuracy']:.4f} vs "
                    f"{vw['accuracy']:.4f}",
                    "met": bool(ok),
                }
            )
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=["news20", "mnist"], choices=list(DATASETS))
    p.add_argument("--quick", action="store_true", help="small subsamples (smoke test)")
    p.add_argument("--out", default=str(REPO_ROOT / "benchmarks" / "results"))
    p.add_argument("--repeat", type=int, default=3, help="timed runs for fast methods (median)")
    p.add_argument("--repeat-slow", type=int, default=1, help="timed runs for slow methods")
    p.add_argument("--C", type=float, default=1.0, help="PA-I aggressiveness (eta0 in sklearn)")
    p.add_argument("--river-rows", type=int, default=2000, help="River trains on this many rows")
    p.add_argument("--liblinear-solvers", type=int, nargs="*", default=[4])
    p.add_argument("--seed", type=int, default=0, help="seed of the one training-order shuffle")
    p.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "float64"],
        help="dtype of the feature values given to every library (ours: of its weights too)",
    )
    p.add_argument("--file-order", action="store_true", help="keep the files' row order")
    p.add_argument(
        "--libraries",
        nargs="+",
        default=None,
        choices=["ours", "scikit-learn", "river", "vowpalwabbit", "liblinear", "end-to-end"],
        help="measure only these (default: all)",
    )
    p.add_argument("--no-tracemalloc", action="store_true", help="skip the tracemalloc runs")
    p.add_argument(
        "--numba-cache",
        action="store_true",
        help="use numba's on-disk cache (default: off, so the warm-up is a real compile)",
    )
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    global VALUE_DTYPE
    VALUE_DTYPE = args.dtype
    if not args.numba_cache:
        os.environ.setdefault("ONLINELEARN_NUMBA_CACHE", "0")
    t_start = time.perf_counter()
    ol, ol_error = import_ours()
    if ol is None:
        log(f"WARNING: {ol_error}; running the other libraries only")
    report = {
        "date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "args": vars(args) | {"out": None},
        "environment": environment(),
        "datasets": [],
    }
    for name in args.datasets:
        report["datasets"].append(run_dataset(name, args, ol, ol_error))
    report["process_max_rss_mb"] = maxrss_mb()
    report["wall_seconds"] = time.perf_counter() - t_start
    text = markdown(report)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = _dt.date.today().isoformat() + ("-quick" if args.quick else "")
    (out / f"{stem}.md").write_text(text + "\n")
    (out / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    log(f"wrote {out / (stem + '.md')} and .json; wall time {report['wall_seconds']:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
