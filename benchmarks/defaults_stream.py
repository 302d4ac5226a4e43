"""One pass over a stream: our defaults against scikit-learn's, on every shared data set.

The protocol of a stream: the training rows in a seeded random order, one ``partial_fit``
call over them (every label given in ``classes``), then the accuracy on the test file (or a
fixed 30 % split, seed 0, for sets without one: a8a, w8a, PMLB).  Columns: our
``PassiveAggressiveClassifier`` and ``Perceptron`` with the averaging and intercept choices a
default could make, ``COPA``, and scikit-learn's ``PassiveAggressiveClassifier`` (as SGD with
``learning_rate='pa1'``, its replacement) and ``Perceptron`` with their defaults; the seconds of
the ``partial_fit`` call (after one warm-up call that compiles).

    python benchmarks/defaults_stream.py [--sets news20 dna ...] [--seeds 0 1 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import SVMLIGHT, _load  # noqa: E402
from sklearn import linear_model as sk  # noqa: E402

from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron  # noqa: E402
from onlinelearn.datasets import pmlb_names  # noqa: E402

PA = PassiveAggressiveClassifier


def _learners(seed):
    return {
        "ours PA()": PA(random_state=seed),
        "ours PA(average=False)": PA(average=False, random_state=seed),
        "ours PA(b='auto')": PA(intercept_scaling="auto", random_state=seed),
        "ours PA(b='auto', average=False)": PA(
            intercept_scaling="auto", average=False, random_state=seed
        ),
        "ours Perceptron()": Perceptron(random_state=seed),
        "ours Perceptron(average=False)": Perceptron(average=False, random_state=seed),
        "ours COPA()": COPA(random_state=seed),
        "sklearn PA (SGD pa1)": sk.SGDClassifier(
            loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0, random_state=seed
        ),
        "sklearn Perceptron()": sk.Perceptron(random_state=seed),
    }


COLUMNS = list(_learners(0))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=SVMLIGHT + pmlb_names())
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    raw = {}
    for name in args.sets:
        X, y, Xt, yt = _load(name)
        classes = np.unique(y)
        raw[name] = {c: [] for c in COLUMNS}
        for seed in args.seeds:
            order = np.random.default_rng(seed).permutation(X.shape[0])
            Xs, ys = X[order], y[order]
            for col, est in _learners(seed).items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    warm = type(est)(**est.get_params())
                    warm.partial_fit(Xs[:50], ys[:50], classes=classes)  # compile
                    t = time.perf_counter()
                    est.partial_fit(Xs, ys, classes=classes)
                    secs = time.perf_counter() - t
                acc = float(est.score(Xt, yt))
                raw[name][col].append([acc, secs])
                print(f"{name} seed {seed} {col}: {acc:.4f} {secs:.3f}s", file=sys.stderr,
                      flush=True)  # fmt: skip
    cols = " | ".join(COLUMNS)
    lines = [f"| data set | {cols} |", "|---|" + "---|" * len(COLUMNS)]
    for name, per in raw.items():
        cells = [f"{np.mean([r[0] for r in per[c]]):.4f}" for c in COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Seconds of the one `partial_fit` pass (mean over seeds)", ""]
    lines += [f"| data set | {cols} |", "|---|" + "---|" * len(COLUMNS)]
    for name, per in raw.items():
        cells = [f"{np.mean([r[1] for r in per[c]]):.3f}" for c in COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(table)
    print(json.dumps(raw), file=sys.stderr)
    if args.out:
        Path(args.out).write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
