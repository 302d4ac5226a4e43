"""A user's loss against the built-in pass: one epoch, interleaved in one process.

    python benchmarks/bench_framework.py [--datasets news20 mnist] [--repeat 5]

The issue's target: a hinge written by the user (``CustomLoss(value, derivative)``, two numba
functions below) runs one news20 epoch within 1.5x of the built-in PA-I, compile time excluded.
Rows: the built-in PA-I (closed-form pass), the user's hinge (generic pass, the 1-D dual solved
numerically each update), the built-in logistic loss (generic pass), each averaged and not;
same data, fixed order, C = 1, float32 values as ``bench_linear.py``.  Each method is warmed up
once (compilation), then timed in turn within each repeat; medians and the ratio to the
built-in PA-I of the same averaging are printed, with the test accuracy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from _bench_data import load_data  # noqa: E402

import onlinelearn as ol  # noqa: E402
from onlinelearn.framework import Aggressive, CustomLoss, Logistic  # noqa: E402


@numba.njit
def hinge_value(z):
    return max(0.0, 1.0 - z)


@numba.njit
def hinge_derivative(z):
    return -1.0 if z < 1.0 else 0.0


USER_HINGE = CustomLoss(hinge_value, hinge_derivative)


def methods():
    one = {"n_epochs": 1, "shuffle": False, "tol": None}
    out = {}
    for avg in (True, False):
        tag = "averaged" if avg else "last iterate"
        out[f"built-in PA-I, {tag}"] = lambda a=avg: ol.PassiveAggressiveClassifier(
            C=1.0, average=a, **one
        )
        out[f"user hinge (CustomLoss), {tag}"] = lambda a=avg: ol.OnlineLearner(
            loss=USER_HINGE, step=Aggressive(1.0), average=a, **one
        )
        out[f"built-in Logistic (generic pass), {tag}"] = lambda a=avg: ol.OnlineLearner(
            loss=Logistic(), step=Aggressive(1.0), average=a, **one
        )
    return out


def run(name, repeat):
    d = load_data(name, quick=False, seed=0, keep_file_order=False)
    ms = methods()
    times = {k: [] for k in ms}
    acc = {}
    for k, make in ms.items():  # warm-up: compile
        acc[k] = make().partial_fit(d.Xtr, d.ytr, classes=d.classes).score(d.Xte, d.yte)
    for _ in range(repeat):
        for k, make in ms.items():
            est = make()
            t0 = time.perf_counter()
            est.partial_fit(d.Xtr, d.ytr, classes=d.classes)
            times[k].append(time.perf_counter() - t0)
    print(f"\n{name}: {d.Xtr.shape[0]} rows, {d.Xtr.nnz} nonzeros, {len(d.classes)} classes")
    print(f"{'method':46s} {'median ms':>10s} {'min ms':>8s} {'x built-in':>10s} {'test acc':>9s}")
    for k in ms:
        base = "built-in PA-I, " + k.split(", ")[-1]
        ratio = statistics.median(times[k]) / statistics.median(times[base])
        print(f"{k:46s} {1e3 * statistics.median(times[k]):10.1f} {1e3 * min(times[k]):8.1f} "
              f"{ratio:10.2f} {acc[k]:9.4f}")  # fmt: skip
    return times


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", nargs="+", default=["news20", "mnist"])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    print(f"numba {numba.__version__}, numpy {np.__version__}")
    for name in args.datasets:
        run(name, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
