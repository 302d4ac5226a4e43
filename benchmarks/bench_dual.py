"""Cost of keeping ``dual_objective_``: one epoch with the dual accumulated against the same
pass told not to keep it (``ip[IP_DUAL] = 0``), interleaved in one process.

    python benchmarks/bench_dual.py [--dataset news20] [--repeat 7]

Same data, order and parameters for both rows (training rows in a fixed order, float32 values,
one epoch, ``shuffle=False``); each repeat times "off" and "on" in turn, so that a shared
machine slows both alike.  Reports the median and min wall clock of each and their ratio.
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
from onlinelearn.datasets import load_shared  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="news20")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
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
