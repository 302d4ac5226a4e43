"""The online-to-batch risk bounds (onlinelearn.bounds.online_to_batch, thesis App. B.3) for
Perceptron, PA-I and COPA, one pass, on news20 and mnist: online error, bound, held-out error.

Rows of the training split shuffled with seed 0: the first T are the run, the next M the
validation set of the 'validation' conversion, the next H (default 5000, at most the rest) the
held-out rows (i.i.d. with the run, as the bounds assume).  ``--test-split``: the held-out rows
are the data set's test split instead (news20's "bydate" test split holds later posts: not the
run's distribution).

    python benchmarks/bench_o2b.py [--datasets news20,mnist] [--rows 5000] [--val 2000]
        [--held 5000] [--test-split]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import onlinelearn as ol  # noqa: E402
from onlinelearn.bounds import format_online_to_batch, online_to_batch  # noqa: E402
from onlinelearn.datasets import load_shared  # noqa: E402

LEARNERS = {
    "Perceptron": lambda: ol.Perceptron(),
    "PA-I (C=0.1)": lambda: ol.PassiveAggressiveClassifier(variant="PA-I", C=0.1),
    "COPA": lambda: ol.COPA(),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="news20,mnist")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--val", type=int, default=2000)
    ap.add_argument("--held", type=int, default=5000)
    ap.add_argument("--test-split", action="store_true")
    ap.add_argument("--delta", type=float, default=0.05)
    args = ap.parse_args()
    reports, names = [], []
    for name in args.datasets.split(","):
        X, y = load_shared(name)
        y = np.asarray(y)
        p = np.random.default_rng(0).permutation(X.shape[0])
        run, val = p[: args.rows], p[args.rows : args.rows + args.val]
        if args.test_split:
            Xt, yt = load_shared(name, "test")
            yt = np.asarray(yt)
        else:
            held = p[args.rows + args.val : args.rows + args.val + args.held]
            Xt, yt = X[held], y[held]
        print(f"{name}: T = {len(run)}, validation {len(val)}, held-out {len(yt)} "
              f"({'test split' if args.test_split else 'training split'})", flush=True)
        for label, make in LEARNERS.items():
            for conv in ("average", "last", "validation"):
                kw = {"X_val": X[val], "y_val": y[val]} if conv == "validation" else {}
                t0 = time.perf_counter()
                r = online_to_batch(make(), X[run], y[run], conversion=conv, delta=args.delta,
                                    X_test=Xt, y_test=yt, show=False, **kw)  # fmt: skip
                extra = (f"R {r['R']:.3g}, U {r['U']:.3g} (run max {r['U_run']:.3g}), "
                         f"B {r['B']:.4g}" if conv == "average" else
                         f"eps {r['eps']:.3g}, validation bound {r['bound_validation']:.3g}, "
                         f"chain bound {r['bound_chain']:.3g}" if conv == "validation" else
                         f"Markov at delta/2 = {r['delta_markov']}")  # fmt: skip
                print(f"{name} {label} {conv}: {time.perf_counter() - t0:.1f} s; {extra}",
                      flush=True)  # fmt: skip
                reports.append(r)
                names.append(f"{name} {label}")
    print(format_online_to_batch(reports, names))


if __name__ == "__main__":
    main()
