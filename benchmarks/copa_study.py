"""COPA against PA-I on every shared multiclass set: when is the confusion loss worth it?

For each set, ``fit`` (the learners' own epochs; shuffled, seeds 0..) and the test file (or a
fixed 30 % split, seed 0): accuracy, balanced accuracy and the confusion operator norm
||C||_2 of the test predictions (``onlinelearn.metrics.confusion_operator_norm``: the
row-normalised confusion matrix with a zero diagonal, the quantity COPA minimises).  Columns:

* ``PA-I``: ``PassiveAggressiveClassifier()`` (max-rival hinge, averaged, epochs until the
  training loss stops improving); ``PA-I 5 epochs``: as COPA, 5 fixed epochs;
* ``PA-I sq``: the max-rival squared hinge with the aggressive step (``OnlineLearner(loss=
  SquaredHinge())``), COPA's squared hinge without its sum over all rivals;
* ``COPA``: ``COPA()`` (all-rival squared hinge, Lee-Lin-Wahba-like, no class cost; 5 epochs,
  averaged, intercept b = 1), then one change at a time: 100 epochs, the last iterate, no
  intercept;
* ``COPA conf``: ``COPA(class_weight='confusion')`` (the paper's cost 1 / T_y^2; its C grid
  is shifted up by the cost's scale);
* ``COPA C=...``: COPA at other C.

    python benchmarks/copa_study.py [--sets dna pendigits ...] [--seeds 0] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _load, emit, mean_table  # noqa: E402
from sklearn.metrics import balanced_accuracy_score  # noqa: E402

from onlinelearn import COPA, OnlineLearner, PassiveAggressiveClassifier  # noqa: E402
from onlinelearn.framework import Aggressive, SquaredHinge  # noqa: E402
from onlinelearn.metrics import confusion_operator_norm  # noqa: E402

MULTICLASS = ["dna", "pendigits", "mnist", "news20", "segmentation", "shuttle", "vowel",
              "optdigits", "connect_4", "krkopt", "waveform_40", "texture", "sleep"]  # fmt: skip


def _learners(seed):
    return {
        "PA-I": PassiveAggressiveClassifier(random_state=seed),
        "PA-I 5 epochs": PassiveAggressiveClassifier(n_epochs=5, tol=None, random_state=seed),
        "PA-I sq": OnlineLearner(loss=SquaredHinge(), step=Aggressive(C=1.0), random_state=seed),
        "COPA": COPA(random_state=seed),
        "COPA 100 epochs": COPA(n_epochs=100, random_state=seed),
        "COPA last iterate": COPA(average=False, random_state=seed),
        "COPA no intercept": COPA(fit_intercept=False, random_state=seed),
        "COPA C=0.1": COPA(C=0.1, random_state=seed),
        "COPA C=0.01": COPA(C=0.01, random_state=seed),
        "COPA conf": COPA(class_weight="confusion", C=100.0, random_state=seed),
        "COPA conf C=1e4": COPA(class_weight="confusion", C=1e4, random_state=seed),
    }


COLUMNS = list(_learners(0))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=MULTICLASS)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    raw = {}
    for name in args.sets:
        X, y, Xt, yt = _load(name)
        raw[name] = {c: [] for c in COLUMNS}
        for seed in args.seeds:
            for col, est in _learners(seed).items():
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, y)
                secs = time.perf_counter() - t
                pred = est.predict(Xt)
                norm = confusion_operator_norm(yt, pred, labels=np.unique(y))
                row = [float(np.mean(pred == yt)), float(balanced_accuracy_score(yt, pred)),
                       float(norm), secs]  # fmt: skip
                raw[name][col].append(row)
                print(f"{name} {seed} {col}: acc {row[0]:.4f} bal {row[1]:.4f} "
                      f"||C|| {row[2]:.3f} {secs:.1f}s", file=sys.stderr, flush=True)  # fmt: skip
    lines = []
    for title, i in (("accuracy", 0), ("balanced accuracy", 1), ("confusion norm ||C||_2", 2)):
        lines += ["", f"**{title}**", ""] + mean_table(raw, COLUMNS, i, ".3f")
    emit("\n".join(lines).strip(), raw, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
