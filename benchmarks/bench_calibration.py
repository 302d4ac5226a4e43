"""Calibration of predict_proba on held-out data: ours against CalibratedClassifierCV.

For each data set (news20, mnist, a9a) and learner, on the official test split:

* ``ours, fit``: ``learner.fit(train)``, then ``predict_proba(test)`` (the map is learned from
  a held-out fifth scored by a copy of the learner, onlinelearn.shell.proba);
* ``ours, stream``: ``partial_fit`` over the training rows in batches of ``--batch`` (the map
  learned from progressive-validation scores: each batch scored before the model learns it);
* ``CalibratedClassifierCV(learner, method='sigmoid' | 'isotonic', cv=--cv)``: scikit-learn's
  cross-validated calibration around the same learner (cv models, probabilities averaged);
* ``logistic loss``: ``OnlineLearner(loss=Logistic())``, native probabilities (for reference).

Reported: log loss, expected calibration error (top-label confidence, 15 equal-width bins),
accuracy, and the seconds of the fit.  Run from the repository root::

    python benchmarks/bench_calibration.py                 # news20, mnist, a9a
    python benchmarks/bench_calibration.py --datasets a9a --train-rows 5000
    python benchmarks/bench_calibration.py --overhead      # cost of the calibration per call

``--overhead``: ``partial_fit`` per call on a9a and news20 rows (PA-I, batches of 1, 100 and
1,000 rows, after a first call of 3,000 rows), with the calibration switched off and on,
alternately in one process (best of ``--repeat``).
"""

from __future__ import annotations

import argparse
import bz2
import io
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SETS = {
    "news20": ("20newsgroups/20news_bydate_tfidf.train.svm.bz2",
               "20newsgroups/20news_bydate_tfidf.test.svm.bz2", 56438),
    "mnist": ("mnist/mnist.scale.bz2", "mnist/mnist.scale.t.bz2", 784),
    "a9a": ("a9a/a9a.bz2", "a9a/a9a.t.bz2", 123),
}  # fmt: skip


def load(name, train_rows, seed=0):
    from sklearn.datasets import load_svmlight_file

    root = Path(os.environ.get("ONLINELEARN_DATA", ROOT / ".." / "shared" / "data"))
    tr, te, d = SETS[name]
    out = []
    for f in (tr, te):
        X, y = load_svmlight_file(io.BytesIO(bz2.decompress((root / f).read_bytes())),
                                  n_features=d)  # fmt: skip
        out += [X.tocsr(), y.astype(np.int64)]
    Xtr, ytr, Xte, yte = out
    order = np.random.default_rng(seed).permutation(Xtr.shape[0])  # news20 comes sorted
    if train_rows:
        order = order[:train_rows]
    return Xtr[order], ytr[order], Xte, yte


def ece(P, y, classes, bins=15):
    """Expected calibration error of the top label: sum_b |B_b|/n |acc(B_b) - conf(B_b)|."""
    conf = P.max(axis=1)
    correct = classes[P.argmax(axis=1)] == y
    edges = np.linspace(0, 1, bins + 1)
    idx = np.clip(np.digitize(conf, edges[1:-1]), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            total += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return float(total)


def scores(P, y, classes, seconds):
    from sklearn.metrics import log_loss

    return {"log_loss": log_loss(y, np.clip(P, 1e-15, 1), labels=classes),
            "ece": ece(P, y, classes), "seconds": seconds,
            "accuracy": float(np.mean(classes[P.argmax(axis=1)] == y))}  # fmt: skip


def learners():
    from onlinelearn import AROW, PassiveAggressiveClassifier, Perceptron

    return {
        "PA-I": lambda: PassiveAggressiveClassifier(n_epochs=5, tol=None, random_state=0),
        "Perceptron": lambda: Perceptron(n_epochs=5, tol=None, random_state=0),
        "AROW (diagonal)": lambda: AROW(covariance="diagonal", n_epochs=1, random_state=0),
    }


def run(name, train_rows, batch, cv, which):
    from sklearn.calibration import CalibratedClassifierCV

    from onlinelearn import OnlineLearner
    from onlinelearn.framework import Aggressive, Logistic

    Xtr, ytr, Xte, yte = load(name, train_rows)
    classes = np.unique(ytr)
    rows = []
    makers = {k: v for k, v in learners().items() if k in which}
    for lname, make in makers.items():
        t = time.perf_counter()
        est = make().fit(Xtr, ytr)
        rows.append((lname, "ours, fit", scores(est.predict_proba(Xte), yte, classes,
                                                 time.perf_counter() - t)))  # fmt: skip
        t = time.perf_counter()
        est = make()
        for s in range(0, Xtr.shape[0], batch):
            est.partial_fit(Xtr[s : s + batch], ytr[s : s + batch], classes=classes)
        rows.append((lname, f"ours, stream (batches of {batch}, one pass)",
                     scores(est.predict_proba(Xte), yte, classes, time.perf_counter() - t)))
        for method in ("sigmoid", "isotonic"):
            t = time.perf_counter()
            cal = CalibratedClassifierCV(make(), method=method, cv=cv).fit(Xtr, ytr)
            rows.append((lname, f"CalibratedClassifierCV {method}, cv={cv}",
                         scores(cal.predict_proba(Xte), yte, classes, time.perf_counter() - t)))
        print(f"  {name} {lname} done", file=sys.stderr, flush=True)
    t = time.perf_counter()
    est = OnlineLearner(loss=Logistic(), step=Aggressive(0.1), n_epochs=5, tol=None,
                        random_state=0).fit(Xtr, ytr)  # fmt: skip
    rows.append(("OnlineLearner(loss=Logistic(), Aggressive(0.1))", "native (sigmoid/softmax)",
                 scores(est.predict_proba(Xte), yte, classes, time.perf_counter() - t)))
    return Xtr.shape, Xte.shape[0], rows


def overhead(repeat):
    from onlinelearn import PassiveAggressiveClassifier
    from onlinelearn.shell import proba

    print("| data | rows per partial_fit call | calls | without calibration, us/call | "
          "with calibration, us/call | overhead |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, size, calls in itertools.product(("a9a", "news20"), (1, 100, 1000), [None]):
        if name != getattr(overhead, "loaded", None):
            Xtr, ytr, _, _ = load(name, 0)
            classes, overhead.loaded = np.unique(ytr), name
        calls = {1: 2000, 100: 60, 1000: 8}[size]
        best = {True: np.inf, False: np.inf}
        for _ in range(repeat):
            for off in (True, False):
                est = PassiveAggressiveClassifier(random_state=0)
                est.partial_fit(Xtr[:3000], ytr[:3000], classes=classes)
                token = proba._OFF.set(off)
                try:
                    t = time.perf_counter()
                    for c in range(calls):
                        s = 3000 + c * size
                        est.partial_fit(Xtr[s : s + size], ytr[s : s + size])
                    best[off] = min(best[off], (time.perf_counter() - t) / calls * 1e6)
                finally:
                    proba._OFF.reset(token)
        print(f"| {name} | {size} | {calls} | {best[True]:.0f} | {best[False]:.0f} | "
              f"{best[False] / best[True] - 1:+.0%} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(SETS))
    ap.add_argument("--train-rows", type=int, default=0, help="0: all")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--cv", type=int, default=3)
    ap.add_argument("--learners", nargs="+", default=["PA-I", "Perceptron"])
    ap.add_argument("--overhead", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if args.overhead:
        return overhead(args.repeat)
    print("| data | learner | probabilities | log loss | ECE | accuracy | fit s |")
    print("|---|---|---|---:|---:|---:|---:|")
    for name in args.datasets:
        shape, n_test, rows = run(name, args.train_rows, args.batch, args.cv, args.learners)
        for lname, how, s in rows:
            print(f"| {name} ({shape[0]} train / {n_test} test) | {lname} | {how} | "
                  f"{s['log_loss']:.4f} | {s['ece']:.4f} | {s['accuracy']:.4f} | "
                  f"{s['seconds']:.2f} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
