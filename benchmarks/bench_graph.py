#!/usr/bin/env python
"""Speed of the second-order learners and of the graph features (issue: online node
classification).

Run from the repository root::

    python benchmarks/bench_graph.py               # cora and pubmed
    python benchmarks/bench_graph.py --repeat 7

Measured, after one warm-up call that compiles the numba kernels:

* one pass (``partial_fit`` on the whole node sequence) over cora with k = 100 spectral
  features, full covariance: WeightedMinMax fixed / adaptive, AROW, SCW-I; target < 50 ms;
* one pass over pubmed with k = 100 features (19717 nodes): target < 1 s;
* building the pubmed features (``spectral_features(adjacency, 100)``): target < 30 s;
* side by side: onlinelearn's first-order PA-I and scikit-learn's ``PassiveAggressiveClassifier``
  (``partial_fit``, one pass) on the same rows, with the ratio to the fastest second-order run.

The machine may be shared: the median of ``--repeat`` runs is reported, with the load average.
Data come from ``$ONLINELEARN_DATA`` or ``../shared/data``.  Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "src"))
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))


def _median_time(fn, repeat):
    """(median wall seconds, median CPU seconds of this process) after a warm-up call.  On a
    shared machine the CPU time is the better estimate of the idle wall time."""
    fn()  # warm-up (compilation)
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--k", type=int, default=100)
    args = ap.parse_args(argv)

    from run import data_dir

    os.environ.setdefault("ONLINELEARN_DATA", str(data_dir()))
    import numpy as np
    from sklearn.linear_model import PassiveAggressiveClassifier as SkPA
    from sklearn.preprocessing import normalize

    from onlinelearn import AROW, SCW, PassiveAggressiveClassifier, WeightedMinMax
    from onlinelearn.graph import load_cora, load_pubmed, spectral_features

    rows = []
    print(f"load average: {os.getloadavg()}", file=sys.stderr)
    for name, loader, target in (("cora", load_cora, 0.05), ("pubmed", load_pubmed, 1.0)):
        g = loader() if name == "pubmed" else loader(features=False)
        t0, c0 = time.perf_counter(), time.process_time()
        F = spectral_features(g.adjacency, args.k)
        t_feat = (time.perf_counter() - t0, time.process_time() - c0)
        nodes = g.labelled()
        X = np.ascontiguousarray(normalize(F)[nodes])
        y = g.labels[nodes]
        order = np.random.default_rng(0).permutation(len(y))
        X, y = X[order], y[order]
        classes = np.unique(y)
        rows.append((name, f"spectral_features(k={args.k})", t_feat, None))
        learners = {
            "WeightedMinMax fixed, full": lambda: WeightedMinMax(margin="fixed"),
            "WeightedMinMax adaptive, full": lambda: WeightedMinMax(margin="adaptive"),
            "WeightedMinMax adaptive, diagonal": lambda: WeightedMinMax(
                margin="adaptive", covariance="diagonal"
            ),
            "AROW, full": lambda: AROW(),
            "SCW-I, full": lambda: SCW(),
            "peer: onlinelearn PA-I (first order)": lambda: PassiveAggressiveClassifier(
                n_epochs=1, shuffle=False
            ),
            "peer: scikit-learn PassiveAggressiveClassifier.partial_fit": lambda: SkPA(),
        }
        for lname, make in learners.items():

            def one_pass(make=make, X=X, y=y, classes=classes):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    make().partial_fit(X, y, classes=classes)

            t = _median_time(one_pass, args.repeat)
            rows.append((name, lname, t, target if "full" in lname else None))
        print(f"{name} done", file=sys.stderr)
    print(f"\nload average after: {os.getloadavg()} (2 cores, shared machine)\n")
    print("| data | what | median wall s | median CPU s | target | met (wall / CPU) |")
    print("|---|---|---|---|---|---|")
    for name, what, (t, c), target in rows:
        if what.startswith("spectral") and name == "pubmed":
            target = 30.0
        tgt = "" if target is None else f"< {target:g} s"
        met = ""
        if target is not None:
            met = f"{'yes' if t < target else 'NO'} / {'yes' if c < target else 'NO'}"
        print(f"| {name} | {what} | {t:.4f} | {c:.4f} | {tgt} | {met} |")
    base = {n: min(t[0] for nn, w, t, _ in rows if nn == n and "full" in w) for n, *_ in rows}
    print("\nwall-time ratios to the fastest full-covariance second-order pass:")
    for name, what, t, _ in rows:
        if what.startswith("peer"):
            print(f"  {name}: {what}: {t[0] / base[name]:.2f}x")


if __name__ == "__main__":
    main()
