"""Default parameters against scikit-learn's defaults, on every shared classification data set.

For each data set: ours ``Perceptron()``, ``PassiveAggressiveClassifier()`` and ``COPA()`` with
their default parameters, scikit-learn's ``Perceptron()`` and ``PassiveAggressiveClassifier()``
with theirs (``max_iter=1000, tol=1e-3``: epochs until the training loss stops improving), and,
for reference, ours with the former default ``average=False``.  Test accuracy on the test file,
or on a fixed 30 % split (seed 0) for sets without one (a8a, w8a, PMLB).  Every learner gets the
same rows; the shuffling seeds are 0, 1, 2 and the table shows the mean accuracy over them.
The columns ``(n_epochs=5, tol=None, ...)`` are the former defaults (5 epochs, no stop,
b = 1); ``PA(intercept_scaling=1.0)`` is PA's former b with today's epochs.  A second table gives
the mean epochs (``n_iter_``) and ``fit`` seconds of each column that has them.

    python benchmarks/defaults.py [--sets mnist news20 ...] [--seeds 0 1 2] [--out docs/defaults.md]
                                  [--columns "ours PA()" "sklearn PA()" ...]

``--columns`` measures only the named columns (to rerun what a change can move).  The
``average_power=eta`` columns weigh round t by t^eta in the average (0: the uniform average).

Reads ``$ONLINELEARN_DATA`` (or ``../shared/data``); prints a Markdown table (and writes it with
``--out``) and the raw numbers as JSON on stderr.
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
from sklearn import linear_model as sk  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron  # noqa: E402
from onlinelearn.datasets import SHARED_SETS, load_pmlb, load_shared, pmlb_names  # noqa: E402

#: the weights t^eta of the averaged hypothesis measured (``average_power``; 0 = uniform)
POWERS = (0, 1, 2, 3)
SVMLIGHT = ["mnist", "news20", "dna", "pendigits", "a9a", "a8a", "w8a"]


def _load(name):
    if name in SHARED_SETS:
        X, y = load_shared(name)
        if SHARED_SETS[name].test is not None:
            Xt, yt = load_shared(name, "test")
            return X, y, Xt, yt
    else:
        X, y = load_pmlb(name)
    X, Xt, y, yt = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    return X, y, Xt, yt


def _learners(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn 1.8 deprecates its PA classifier
        sk_pa = sk.PassiveAggressiveClassifier(random_state=seed)
    return {
        "ours Perceptron()": Perceptron(random_state=seed),
        "ours Perceptron(average=False)": Perceptron(average=False, random_state=seed),
        "sklearn Perceptron()": sk.Perceptron(random_state=seed),
        "ours PA()": PassiveAggressiveClassifier(random_state=seed),
        "ours PA(average=False)": PassiveAggressiveClassifier(average=False, random_state=seed),
        "sklearn PA()": sk_pa,
        "ours COPA()": COPA(random_state=seed),
        "ours COPA(average=False)": COPA(average=False, random_state=seed),
        "ours Perceptron(n_epochs=5, tol=None, intercept_scaling=1.0)": Perceptron(
            n_epochs=5, tol=None, intercept_scaling=1.0, random_state=seed
        ),
        "ours PA(n_epochs=5, tol=None, intercept_scaling=1.0)": PassiveAggressiveClassifier(
            n_epochs=5, tol=None, intercept_scaling=1.0, random_state=seed
        ),
        "ours PA(intercept_scaling=1.0)": PassiveAggressiveClassifier(
            intercept_scaling=1.0, random_state=seed
        ),
        **{
            f"ours PA(average_power={eta})": PassiveAggressiveClassifier(
                average_power=eta, random_state=seed
            )
            for eta in POWERS
        },
        **{
            f"ours Perceptron(average_power={eta})": Perceptron(
                average_power=eta, random_state=seed
            )
            for eta in POWERS
        },
        **{f"ours COPA(average_power={eta})": COPA(average_power=eta, random_state=seed)
           for eta in POWERS},  # fmt: skip
    }


COLUMNS = list(_learners(0))


def mean_table(raw, columns, index, fmt, reduce=np.mean):
    """Markdown lines: one row per data set of ``raw``, the mean (or ``reduce``) over seeds of
    item ``index`` of each column's records, formatted with ``fmt``."""
    lines = ["| data set | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for name, per in raw.items():
        cells = [format(reduce([r[index] for r in per[c]]), fmt) for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def emit(table, raw, out):
    """Print the table, the raw numbers as JSON on stderr, and write the table to ``out``."""
    print(table)
    print(json.dumps(raw), file=sys.stderr)
    if out:
        Path(out).write_text(table + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=SVMLIGHT + pmlb_names())
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--out", default=None)
    ap.add_argument("--columns", nargs="+", default=COLUMNS, choices=COLUMNS)
    args = ap.parse_args(argv)
    columns = [c for c in COLUMNS if c in args.columns]
    raw = {}
    for name in args.sets:
        X, y, Xt, yt = _load(name)
        raw[name] = {c: [] for c in columns}
        raw[name]["_shape"] = [int(X.shape[0]), int(Xt.shape[0]), int(X.shape[1])]
        for seed in args.seeds:
            for col, est in _learners(seed).items():
                if col not in columns:
                    continue
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, y)
                secs = time.perf_counter() - t
                acc = float(est.score(Xt, yt))
                raw[name][col].append([acc, secs, int(getattr(est, "n_iter_", 0))])
                print(f"{name} seed {seed} {col}: {acc:.4f}", file=sys.stderr, flush=True)
    lines = [
        "| data set | n train / test | " + " | ".join(columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for name, cols in raw.items():
        n, nt, _ = cols["_shape"]
        cells = []
        for c in columns:
            acc = np.mean([r[0] for r in cols[c]])
            cells.append(f"{acc:.4f}")
        lines.append(f"| {name} | {n} / {nt} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Mean epochs made by `fit` / mean `fit` seconds (shared machine: times are noisy)",
        "",
    ]
    lines += ["| data set | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for name, cols in raw.items():
        cells = []
        for c in columns:
            ep = np.mean([r[2] for r in cols[c]])
            secs = np.mean([r[1] for r in cols[c]])
            cells.append(f"{ep:.1f} / {secs:.2f}" if ep > 0 else f"- / {secs:.2f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    emit("\n".join(lines), raw, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
