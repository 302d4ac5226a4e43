"""River's protocol: our learners through onlinelearn.river against River's own, per row.

The same stream, one row at a time through ``river.evaluate.progressive_val_score`` (predict,
then learn, each row): our PassiveAggressiveClassifier and Perceptron wrapped in
``onlinelearn.river.RiverClassifier`` against River's ``linear_model.PAClassifier`` (mode 1,
C=1) and ``linear_model.Perceptron``.  Streams: River's Phishing (1,250 rows, 9 features,
standardised in the pipeline) and the first ``--rows`` rows of a9a (123 binary features, dict
rows of the nonzeros).  Also, for reference, ours through ``learn_many`` / ``predict_many`` in
batches of 100 (predict the batch, then learn it: progressive validation by batch).

Reported: microseconds per row (predict + learn) and progressive accuracy.  Run from the
repository root::

    python benchmarks/bench_river.py [--rows 5000] [--repeat 3]
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


def a9a_rows(n):
    from sklearn.datasets import load_svmlight_file

    root = Path(os.environ.get("ONLINELEARN_DATA", ROOT / ".." / "shared" / "data"))
    X, y = load_svmlight_file(io.BytesIO(bz2.decompress((root / "a9a/a9a.bz2").read_bytes())),
                              n_features=123)  # fmt: skip
    X = X.tocsr()[:n]
    rows = []
    for i in range(X.shape[0]):
        a, b = X.indptr[i], X.indptr[i + 1]
        rows.append(({f"f{j}": float(v) for j, v in zip(X.indices[a:b], X.data[a:b],
                                                          strict=True)}, bool(y[i] > 0)))
    return rows


def models(scale):
    from river import linear_model, preprocessing

    from onlinelearn import PassiveAggressiveClassifier, Perceptron
    from onlinelearn.river import RiverClassifier

    def pipe(m):
        return (preprocessing.StandardScaler() | m) if scale else m

    return {
        "River linear_model.PAClassifier(C=1, mode=1)":
            lambda: pipe(linear_model.PAClassifier(C=1.0, mode=1)),
        "ours RiverClassifier(PassiveAggressiveClassifier())":
            lambda: pipe(RiverClassifier(PassiveAggressiveClassifier(), n_features=256)),
        "River linear_model.Perceptron()": lambda: pipe(linear_model.Perceptron()),
        "ours RiverClassifier(Perceptron(average=False))":
            lambda: pipe(RiverClassifier(Perceptron(average=False), n_features=256)),
    }  # fmt: skip


def per_row(stream, make, repeat):
    from river import evaluate, metrics

    best, acc = np.inf, None
    for _ in range(repeat):
        model = make()
        t = time.perf_counter()
        acc = evaluate.progressive_val_score(stream, model, metrics.Accuracy()).get()
        best = min(best, time.perf_counter() - t)
    return best / len(stream) * 1e6, acc


def batches(stream, repeat, size=100):
    import pandas as pd

    from onlinelearn import PassiveAggressiveClassifier
    from onlinelearn.river import RiverClassifier

    frames = [(pd.DataFrame([x for x, _ in stream[s : s + size]]).fillna(0.0),
               pd.Series([y for _, y in stream[s : s + size]]))
              for s in range(0, len(stream), size)]  # fmt: skip
    best, acc = np.inf, None
    for _ in range(repeat):
        model = RiverClassifier(PassiveAggressiveClassifier(), n_features=256)
        correct = 0
        t = time.perf_counter()
        for k, (X, y) in enumerate(frames):
            if k:
                correct += int((model.predict_many(X).to_numpy() == y.to_numpy()).sum())
            model.learn_many(X, y)
        best = min(best, time.perf_counter() - t)
        acc = correct / (len(stream) - len(frames[0][1]))
    return best / len(stream) * 1e6, acc


def main(argv=None):
    from river import datasets

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=5000, help="rows of a9a")
    ap.add_argument("--repeat", type=int, default=3, help="best of")
    args = ap.parse_args(argv)
    streams = {
        "Phishing (1250 rows, StandardScaler, then the model)": (list(datasets.Phishing()), True),
        f"a9a (first {args.rows} rows)": (a9a_rows(args.rows), False),
    }
    print("| stream | model | us per row (predict + learn) | / River's | progressive accuracy |")
    print("|---|---|---:|---:|---:|")
    for sname, (stream, scale) in streams.items():
        # compile and warm up once (numba's first call)
        for make in models(scale).values():
            per_row(list(itertools.islice(stream, 20)), make, 1)
        river_us = None
        for mname, make in models(scale).items():
            us, acc = per_row(stream, make, args.repeat)
            if mname.startswith("River"):  # the peer of the next row
                river_us, ratio = us, ""
            else:
                ratio = f"{us / river_us:.1f}x"
            print(f"| {sname} | {mname} | {us:.1f} | {ratio} | {acc:.4f} |", flush=True)
        if not scale:
            us, acc = batches(stream, args.repeat)
            print(f"| {sname} | ours learn_many / predict_many, batches of 100 | {us:.1f} | "
                  f"{us / river_us:.1f}x | {acc:.4f} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
