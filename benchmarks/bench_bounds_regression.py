"""bounds.report on PassiveAggressiveRegressor (PA, PA-I, PA-II): one pass over the training
part of a PMLB regression set (``bench_regression.load``: texture, adult or sleep, features and
target standardised), the rows of docs/bounds.md.

Run from the repository root:  ``python benchmarks/bench_bounds_regression.py texture``
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from bench_regression import load  # noqa: E402

from onlinelearn import PassiveAggressiveRegressor  # noqa: E402
from onlinelearn.bounds import report  # noqa: E402

VARIANTS = {
    "PA": dict(C=math.inf),
    "PA-I": dict(C=0.1),
    "PA-II": dict(C=0.1, loss="squared_epsilon_insensitive"),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("data", nargs="?", default="texture")
    ap.add_argument("--rows", type=int, default=None, help="first rows of the training part")
    ap.add_argument("--epsilon", type=float, default=0.1)
    args = ap.parse_args(argv)
    X, y, _, _ = load(args.data)
    if args.rows:
        X, y = X[: args.rows], y[: args.rows]
    print(f"{args.data}: {len(y)} rows x {X.shape[1]}, epsilon = {args.epsilon}, one pass, "
          "average=True")  # fmt: skip
    print("| variant | C | quantity | observed | bound | bound / observed | R | ||u|| "
          "| u's loss term | dual D | P(w_avg) | gap | P(u*) | its solve's gap | seconds |")
    print("|" + "---|" * 15)
    for name, kw in VARIANTS.items():
        est = PassiveAggressiveRegressor(epsilon=args.epsilon, average=True, **kw)
        t0 = time.perf_counter()
        r = report(est, X, y, show=False)
        sec = time.perf_counter() - t0
        assert (r["curve_observed"] <= r["curve_bound"]).all()
        print(f"| {name} | {kw['C']:g} | {r['quantity']} | {r['observed']:.6g} "
              f"| {r['bound']:.6g} | {r['bound'] / r['observed']:.3g} | {r['R']:.4g} "
              f"| {r['comparator_norm']:.4g} | {r['comparator_loss']:.6g} "
              f"| {r['dual_objective']:.6g} | {r['primal_averaged']:.6g} | {r['gap']:.6g} "
              f"| {r['primal_comparator']:.6g} | {r['comparator_gap']:.2g} | {sec:.2f} |")


if __name__ == "__main__":
    main()
