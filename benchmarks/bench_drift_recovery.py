"""Recovery after an abrupt change: onlinelearn's DriftFollowingClassifier against River's
DriftRetrainingClassifier, and the plain models (issue 32, part 3).

Streams (``benchmarks/stream_study.py`` builds them; fixed seeds):

* ``sea_abrupt``: SEA variant 0 for the first half of ``--rows`` rows, then variant 2;
* ``agrawal_abrupt``: Agrawal function 0, then function 2 (unscaled features);
* ``elec2``: the shared Elec2 (45,312 rows; no known change point: accuracy only).

Every row, in order: predict, then learn (prequential; a row without a prediction counts as
wrong).  For a change at row ``c``: the pre-change error is the error on rows [c - 500, c); the
recovery is the smallest ``t >= 0`` such that the error on the 500 rows [c + t, c + t + 500)
is at most the pre-change error + 0.02 ("never": not within the stream); the worst window is
the largest error of a window of 500 rows starting in the 2,000 rows after the change.

Models: River's ``drift.DriftRetrainingClassifier`` (its defaults: DDM, a background model from
the warning) around ``StandardScaler | LogisticRegression``, and that pipeline alone; ours:
``DriftFollowingClassifier`` around ``PassiveAggressiveClassifier(variant='PA-I',
average=False)`` and around the default PA-I, each with ``policy='reset'`` (ADWIN) and
``policy='background'`` (DDM), and the plain learners; all of ours behind
``OnlineStandardScaler`` (dict rows, River's pipeline order: the scaler learns the row, then
the model learns it scaled; the scaler is not reset on a drift).

    python benchmarks/bench_drift_recovery.py [--rows 50000] [--streams sea_abrupt ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import stream_study  # noqa: E402

WINDOW, SLACK = 500, 0.02
STREAMS = ("sea_abrupt", "agrawal_abrupt", "elec2")


class Ours:
    """Our scaler on dict rows, then an onlinelearn model on the scaled row as an array."""

    def __init__(self, model, keys):
        from onlinelearn.preprocessing import OnlineStandardScaler

        self.scaler, self.model, self.keys = OnlineStandardScaler(), model, keys

    def _row(self, x):
        z = self.scaler.transform_one(x)
        return np.array([z[k] for k in self.keys], dtype=np.float64)

    def predict_one(self, x):
        return self.model.predict_one(self._row(x))

    def learn_one(self, x, y):
        self.scaler.learn_one(x)
        self.model.learn_one(self._row(x), y)


def models(keys):
    from river import drift as rd
    from river import linear_model as rl
    from river import preprocessing as rp

    from onlinelearn import PassiveAggressiveClassifier
    from onlinelearn.drift import DriftFollowingClassifier

    def last():
        return PassiveAggressiveClassifier(variant="PA-I", average=False)

    def default():
        return PassiveAggressiveClassifier(variant="PA-I")

    def follow(make, policy):
        return lambda: Ours(DriftFollowingClassifier(make(), policy=policy), keys)

    return {
        "River DriftRetraining(Scaler, LogReg)": lambda: rd.DriftRetrainingClassifier(
            model=rp.StandardScaler() | rl.LogisticRegression()),
        "River Scaler, LogReg": lambda: rp.StandardScaler() | rl.LogisticRegression(),
        "ours follow(PA-I avg=False), reset/ADWIN": follow(last, "reset"),
        "ours follow(PA-I avg=False), background/DDM": follow(last, "background"),
        "ours follow(PA-I), reset/ADWIN": follow(default, "reset"),
        "ours follow(PA-I), background/DDM": follow(default, "background"),
        "ours PA-I avg=False": lambda: Ours(last(), keys),
        "ours PA-I (default)": lambda: Ours(default(), keys),
    }  # fmt: skip


def prequential(model, stream):
    err = np.empty(len(stream))
    t0 = time.perf_counter()
    for i, (x, y) in enumerate(stream):
        p = model.predict_one(x)
        err[i] = p is None or p != y
        model.learn_one(x, y)
    return err, (time.perf_counter() - t0) / len(stream) * 1e6


def recovery(err, c):
    """(pre-change error, the worst error of a window of 500 starting in the 2,000 rows after
    c, rows after c until a window of 500 errs <= pre + 0.02 or None)."""
    pre = err[c - WINDOW : c].mean()
    s = np.r_[0.0, np.cumsum(err[c:])]
    windows = (s[WINDOW:] - s[:-WINDOW]) / WINDOW
    ok = np.flatnonzero(windows <= pre + SLACK + 1e-12)
    return pre, windows[:2000].max(), (int(ok[0]) if ok.size else None)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--streams", nargs="+", default=list(STREAMS), choices=list(STREAMS))
    args = ap.parse_args(argv)
    data = {s: getattr(stream_study, s)(args.rows) for s in args.streams}
    changes = {s: ([] if s == "elec2" else [len(data[s]) // 2]) for s in data}
    results = {}
    for s, stream in data.items():
        keys = list(stream[0][0])
        makers = models(keys)
        for make in makers.values():  # warm-up: compile before anything is timed
            prequential(make(), stream[:300])
        for name, make in makers.items():
            model = make()
            err, us = prequential(model, stream)
            inner = getattr(getattr(model, "model", None), "drift_indices_", None)
            rec = [recovery(err, c) for c in changes[s]]
            results[(s, name)] = (1 - err.mean(), rec, us)
            shown = [(round(float(a), 3), round(float(b), 3), t) for a, b, t in rec]
            print(f"{s:15s} {name:44s} acc {1 - err.mean():.4f} recovery {shown} "
                  f"{us:6.1f} us/row" + ("" if inner is None else f" alarms {inner.tolist()}"),
                  file=sys.stderr, flush=True)  # fmt: skip
    names = list(models([]))
    head = []
    for s in data:
        head.append(f"{s} acc")
        if changes[s]:
            head.append(f"{s}: pre-change err / worst window / rows to recover")
    print("| model | " + " | ".join(head) + " |")
    print("|---|" + "---|" * len(head))
    for name in names:
        cells = []
        for s in data:
            acc, rec, us = results[(s, name)]
            cells.append(f"{acc:.3f}")
            for pre, peak, t in rec:
                cells.append(f"{pre:.3f} / {peak:.3f} / {'never' if t is None else t}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    where = [f"{s} {len(d)} (change at {changes[s][0] if changes[s] else 'none'})"
             for s, d in data.items()]  # fmt: skip
    print(f"\nrows: {', '.join(where)}; window {WINDOW}, slack {SLACK}")
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
