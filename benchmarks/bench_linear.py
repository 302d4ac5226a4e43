"""One epoch of the linear learners against scikit-learn, interleaved in one process.

    python benchmarks/bench_linear.py [--datasets news20 mnist] [--repeat 5] [--dtype float32]

Same data, order and parameters as ``benchmarks/run.py`` (one fixed permutation of the training
rows, no shuffling of anyone's own, C = 1, float32 feature values by default), but the methods
are timed *in turn* within each repeat (ours, scikit-learn, ours, ...), so that a machine shared
with other jobs slows all of them alike; each time is reported as wall clock (min and median)
and CPU time (``time.process_time``, median), with the ratio of scikit-learn's SGD ``pa1``
median to each row's and the nanoseconds per nonzero x class next to the score-only sweep (the
floor of a pass: it reads the K weights of every nonzero and does nothing else).  A few minutes
for both data sets.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import run as R  # noqa: E402

import onlinelearn as ol  # noqa: E402


def methods(C):
    one = {"n_epochs": 1, "shuffle": False}
    return {
        "ours PA-I, defaults (averaged)": lambda: ol.PassiveAggressiveClassifier(
            variant="PA-I", C=C, **one
        ),
        "ours PA-I, average=False": lambda: ol.PassiveAggressiveClassifier(
            variant="PA-I", C=C, average=False, **one
        ),
        "ours PA-I, intercept_scaling='auto' (averaged)": lambda: ol.PassiveAggressiveClassifier(
            variant="PA-I", C=C, intercept_scaling="auto", **one
        ),
        "ours Perceptron, defaults (averaged)": lambda: ol.Perceptron(**one),
        "ours COPA, defaults (averaged)": lambda: ol.COPA(C=C, **one),
        "ours COPA, average=False": lambda: ol.COPA(C=C, average=False, **one),
        "sklearn SGD pa1 OvR": lambda: R.sklearn_sgd_pa1(C),
        "sklearn Perceptron OvR": R.sklearn_perceptron,
    }


def bench(name, repeat, C):
    d = R.load_data(name, False, 0, False)
    X, y = d.Xtr, d.ytr
    K = len(d.classes)
    cells = X.nnz * K
    make = methods(C)
    W = np.zeros((X.shape[1] + 1, K), dtype=X.data.dtype)
    sink = np.zeros(1)
    sweep = R.score_sweep()
    runs = {"score-only sweep (the floor)": lambda: sweep(X.data, X.indices, X.indptr, W, sink)}
    runs.update({label: (lambda mk=mk: mk().fit(X, y)) for label, mk in make.items()})
    acc = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, fn in runs.items():  # compile / warm up
            if label in make:
                make[label]().fit(X[:300], y[:300])
            else:
                fn()
        times = {label: [] for label in runs}
        for _ in range(repeat):
            for label, fn in runs.items():
                t0, c0 = time.perf_counter(), time.process_time()
                model = fn()
                times[label].append((time.perf_counter() - t0, time.process_time() - c0))
                if label in make and label not in acc:
                    acc[label] = float(model.score(d.Xte, d.yte))
    ref = statistics.median(w for w, _ in times["sklearn SGD pa1 OvR"])
    lines = [
        f"### {name}: {X.shape[0]} rows, {X.nnz} nonzeros, {K} classes, "
        f"{X.data.dtype} values; nnz x classes = {cells:.3g}",
        "",
        "| method | wall min | wall median | CPU median | ns per nnz x class (wall min) "
        "| sklearn pa1 / this (medians) | accuracy |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, ts in times.items():
        wall = [w for w, _ in ts]
        cpu = [c for _, c in ts]
        med = statistics.median(wall)
        a = f"{acc[label]:.4f}" if label in acc else "—"
        lines.append(
            f"| {label} | {min(wall):.4f} | {med:.4f} | {statistics.median(cpu):.4f} | "
            f"{min(wall) / cells * 1e9:.2f} | {ref / med:.2f}x | {a} |"
        )
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["news20", "mnist"], choices=R.DATASETS)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = ap.parse_args(argv)
    R.VALUE_DTYPE = args.dtype
    import os

    for name in args.datasets:
        print(bench(name, args.repeat, args.C))
        print(f"\n(load average at the end: {os.getloadavg()[0]:.1f})\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
