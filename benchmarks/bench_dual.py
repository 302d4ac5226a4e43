"""Cost of keeping ``dual_objective_``: one epoch with the dual accumulated against the same
pass told not to keep it (``ip[IP_DUAL] = 0``), interleaved in one process.

    python benchmarks/bench_dual.py [--dataset news20] [--repeat 7]
    python benchmarks/bench_dual.py --bounds [--datasets news20,mnist] [--rows 5000]

Same data, order and parameters for both rows (training rows in a fixed order, float32 values,
one epoch, ``shuffle=False``); each repeat times "off" and "on" in turn, so that a shared
machine slows both alike.  Reports the median and min wall clock of each and their ratio.

``--bounds``: the table of docs/bounds.md from one run: ``onlinelearn.bounds.report`` for every
learner it covers on N training rows of each set drawn at random (seed 0), in that order
(observed, bound, dual objective, primal of the averaged predictor, gap, primal at the
comparator); COPA's observed value on N rows of the test split drawn the same way.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import onlinelearn as ol  # noqa: E402
from onlinelearn.bounds import _LEARNERS as _BOUND_FACTORIES  # noqa: E402
from onlinelearn.datasets import load_shared  # noqa: E402

#: every learner bounds.report covers (its CLI's list); the min-max learner's full covariance is
#: run only up to MINMAX_MAX_DIM features (R^2 memory)
BOUND_LEARNERS = tuple(_BOUND_FACTORIES)
MINMAX_MAX_DIM = 1000


def bounds_table(datasets, n_rows):
    from onlinelearn import bounds

    reports, names = [], []
    for name in datasets:
        X, y = load_shared(name)
        y = np.asarray(y)
        rows = np.random.default_rng(0).permutation(X.shape[0])[:n_rows]
        Xt, yt = load_shared(name, "test")
        test_rows = np.random.default_rng(0).permutation(Xt.shape[0])[:n_rows]
        for key in BOUND_LEARNERS:
            if key == "minmax" and X.shape[1] > MINMAX_MAX_DIM:
                print(f"{name} WeightedMinMax: skipped ({X.shape[1]} features > "
                      f"{MINMAX_MAX_DIM}: full covariance)", flush=True)
                continue
            est = bounds._LEARNERS[key]()
            held = {}
            if key == "copa":
                held = {"X_test": Xt[test_rows], "y_test": np.asarray(yt)[test_rows]}
            t0 = time.perf_counter()
            r = bounds.report(est, X[rows], y[rows], show=False, **held)
            dt = time.perf_counter() - t0
            label = f"{name} {type(est).__name__}" + (
                f" {est.variant}" if hasattr(est, "variant") else
                f" {type(est.step).__name__}" if isinstance(est, ol.OnlineLearner) else "")
            print(f"{label}: {dt:.1f} s; {r['theorem']}", flush=True)
            if key == "copa":
                print(f"  observed on {r['observed_on']}; ||C_hat|| {r['empirical_norm']:.4g} + "
                      f"deviation {r['deviation']:.4g}, M = {r['M']:.4g} (largest loss met "
                      f"{r['loss_max']:.4g}); ||C(h_bar)|| = {r['observed_01']:.4g}; online "
                      f"mistakes {r['mistakes']}", flush=True)
            reports.append(r)
            names.append(label)
    print(bounds.format_table(reports, names))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="news20")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--bounds", action="store_true")
    ap.add_argument("--datasets", default="news20,mnist")
    ap.add_argument("--rows", type=int, default=5000)
    args = ap.parse_args()
    if args.bounds:
        bounds_table(args.datasets.split(","), args.rows)
        return
    X, y = load_shared(args.dataset)
    X = X.astype(np.float32)
    one = {"n_epochs": 1, "shuffle": False, "tol": None}
    makers = {
        "PA-I averaged": lambda: ol.PassiveAggressiveClassifier(variant="PA-I", C=1.0, **one),
        "PA-I last iterate": lambda: ol.PassiveAggressiveClassifier(
            variant="PA-I", C=1.0, average=False, **one),
        "Perceptron averaged": lambda: ol.Perceptron(**one),
    }
    for name, make in makers.items():
        times = {"off": [], "on": []}
        for r in range(args.repeat + 1):
            for mode in ("off", "on"):
                est = make()
                if mode == "off":
                    est._keeps_dual = lambda kernel: False
                t0 = time.perf_counter()
                est.fit(X, y)
                dt = time.perf_counter() - t0
                if r:  # the first round compiles
                    times[mode].append(dt)
            if r == 0:
                print(f"{name}: dual_objective_ = {est.dual_objective_:.6g}")
        med = {m: statistics.median(v) for m, v in times.items()}
        print(f"{name:22s} off median {1e3 * med['off']:.1f} ms (min "
              f"{1e3 * min(times['off']):.1f})  on median {1e3 * med['on']:.1f} ms (min "
              f"{1e3 * min(times['on']):.1f})  on/off {med['on'] / med['off']:.3f}")


if __name__ == "__main__":
    main()
