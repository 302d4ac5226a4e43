#!/usr/bin/env python
"""Speed and ranking quality of LabelRanker on the Enron messages, side by side.

Run from the repository root::

    python benchmarks/bench_ranking.py             # full Enron stream (1702 messages, 53 labels)
    python benchmarks/bench_ranking.py --quick     # 600 messages, 1 repeat

Two measurements, everything in this one process on the same data, loaded once:

1. cost per example of the 6 algorithms (update I / II / III x squared norm / entropy): one
   ``partial_fit`` over the whole stream in file order (one compiled pass), best of ``--repeat``
   runs after a warm-up (numba compilation excluded); the ratio III / II per complexity (the issue
   asks for at most 5);
2. the streaming baseline scikit-learn users have for multi-label data,
   ``MultiOutputClassifier(SGDClassifier(loss='hinge'))`` with ``partial_fit``, against
   LabelRanker (defaults) on the same stream of mini-batches (``--batch`` rows): progressive
   validation (score a batch, then train on it), training time per example and the online
   ranking loss / one-error / coverage / average precision of the progressive scores.

The machine may be shared: the absolute times vary with its load, the ratios much less.
This script is not part of the test suite and downloads nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from run import data_dir  # noqa: E402

from onlinelearn import LabelRanker  # noqa: E402
from onlinelearn.experiments.message_folders import load_enron_stream  # noqa: E402
from onlinelearn.ranking import metrics as M  # noqa: E402


def time_algorithms(X, Y, repeat):
    rows = []
    for comp in ("euclidean", "entropy"):
        per = {}
        for upd in ("I", "II", "III"):
            LabelRanker(update=upd, complexity=comp).partial_fit(X[:20], Y[:20])  # compile
            best = np.inf
            for _ in range(repeat):
                est = LabelRanker(update=upd, complexity=comp)
                t0 = time.perf_counter()
                est.partial_fit(X, Y)
                best = min(best, time.perf_counter() - t0)
            per[upd] = best / X.shape[0] * 1e6
            rows.append((comp, upd, per[upd], 100.0 * est.n_mistakes_ / X.shape[0],
                         est.ip_iterations_max_))  # fmt: skip
        rows.append((comp, "III/II", per["III"] / per["II"], None, None))
    return rows


def progressive(make_fit, make_scores, X, Y, batch):
    scores, train_time = [], 0.0
    for a in range(0, X.shape[0], batch):
        Xb, Yb = X[a : a + batch], Y[a : a + batch]
        if a:
            scores.append(make_scores(Xb))
        t0 = time.perf_counter()
        make_fit(Xb, Yb)
        train_time += time.perf_counter() - t0
    S = np.vstack(scores)
    Yt = Y[batch:]
    quality = {
        "ranking loss": M.label_ranking_loss(Yt, S),
        "one-error": M.one_error(Yt, S),
        "coverage": M.coverage_error(Yt, S),
        "avg precision": M.average_precision(Yt, S),
        "mistakes %": 100.0 * M.ranking_mistakes(Yt, S).mean(),
    }
    return train_time / X.shape[0] * 1e6, quality


def versus_sklearn(X, Y, batch):
    from sklearn.linear_model import SGDClassifier
    from sklearn.multioutput import MultiOutputClassifier

    K = Y.shape[1]
    ours = LabelRanker()
    ours.partial_fit(X[:5], Y[:5])  # compile outside the timing
    ours = LabelRanker()
    us = progressive(
        lambda Xb, Yb: ours.partial_fit(Xb, Yb, classes=np.arange(K)),
        ours.decision_function,
        X, Y, batch,
    )  # fmt: skip
    base = MultiOutputClassifier(SGDClassifier(loss="hinge", random_state=0))
    classes = [np.array([0, 1])] * K
    them = progressive(
        lambda Xb, Yb: base.partial_fit(Xb, Yb, classes=classes),
        lambda Xb: np.column_stack([e.decision_function(Xb) for e in base.estimators_]),
        X, Y, batch,
    )  # fmt: skip
    return us, them


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="600 messages, 1 repeat")
    ap.add_argument("--repeat", type=int, default=3, help="timing repeats (default 3)")
    ap.add_argument("--batch", type=int, default=50, help="mini-batch of the comparison (50)")
    args = ap.parse_args(argv)
    X, Y = load_enron_stream(data_dir())
    if args.quick:
        X, Y, args.repeat = X[:600], Y[:600], 1
    print(f"Enron (MULAN): {X.shape[0]} messages, {Y.shape[1]} labels, {X.shape[1]} features\n")
    print("| complexity | update | us / example | online mistakes % | IP iterations (max) |")
    print("|---|---|---|---|---|")
    for comp, upd, t, m, its in time_algorithms(X, Y, args.repeat):
        if m is None:
            print(f"| {comp} | **III / II** | **{t:.2f}x** | | |")
        else:
            print(f"| {comp} | {upd} | {t:.1f} | {m:.1f} | {its} |")
    (t_us, q_us), (t_sk, q_sk) = versus_sklearn(X, Y, args.batch)
    print(f"\nProgressive validation, mini-batches of {args.batch} rows (score, then train):\n")
    print("| learner | train us / example | " + " | ".join(q_us) + " |")
    print("|---|---|" + "---|" * len(q_us))
    for name, t, q in (
        ("LabelRanker() (III, squared norm, C=0.01)", t_us, q_us),
        ("MultiOutputClassifier(SGDClassifier(hinge))", t_sk, q_sk),
    ):
        print(f"| {name} | {t:.1f} | " + " | ".join(f"{v:.4f}" for v in q.values()) + " |")
    print(f"\nspeed-up per example: {t_sk / t_us:.1f}x")


if __name__ == "__main__":
    main()
