"""Prequential accuracy on streams in time order: Elec2 and River's synthetic drift streams.

Every row, in order: predict it (``predict_one``), then learn it (``learn_one``); the accuracy
is the share of rows predicted right (a row before the first ``learn_one`` counts as wrong, for
every model alike).  The baseline for issue 32's defaults (drift and scale).

Streams (fixed seeds, ``--rows`` rows each, Elec2 whole):

* ``elec2``: the shared Elec2 (``elec2/elecNormNew.csv.xz``, 45,312 rows, 8 features in [0, 1]
  but ``day`` in 1-7), label UP;
* ``sea_abrupt``: SEA variant 0 (seed 1) for the first half, then variant 2 (seed 2);
* ``sea_gradual``: ``ConceptDriftStream`` between the same two, a sigmoid change of width
  ``rows // 5`` at the middle (seed 3);
* ``agrawal_abrupt``: Agrawal function 0 (seed 1) for the first half, then function 2
  (seed 2); unscaled features (salaries in the tens of thousands);
* ``agrawal_gradual``: Agrawal function 1 to function 4, width ``rows // 5``.

Models: River's ``PAClassifier(C=1, mode=1)`` (alone and behind River's ``StandardScaler``),
``StandardScaler | LogisticRegression()`` and ``Perceptron()``; ours through
``onlinelearn.river.RiverClassifier`` with default parameters:
``PassiveAggressiveClassifier(variant='PA-I')``, the same with ``average=False``,
``Perceptron()``, ``AROW()``, each alone and behind
``onlinelearn.preprocessing.OnlineStandardScaler`` ("+S": rows scaled with the statistics so far
to predict; the scaler learns the row, then the learner learns it scaled, as River's pipeline
does). Also the majority class of the stream (hindsight). us/row: the prequential loop's wall
time per row (prediction, learning and scaling), after a warm-up run that compiles.

    python benchmarks/stream_study.py [--rows 50000] [--streams elec2 sea_abrupt ...]
                                      [--models ...]
"""

from __future__ import annotations

import argparse
import csv
import io
import lzma
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


# ------------------------------------------------------------------ streams
def elec2(rows):
    from onlinelearn.datasets import shared_data_dir

    root = shared_data_dir() or Path(os.environ.get("ONLINELEARN_DATA", "."))
    with lzma.open(root / "elec2" / "elecNormNew.csv.xz", "rt") as fh:
        reader = csv.DictReader(io.StringIO(fh.read()))
        out = []
        for r in reader:
            y = r.pop("target") == "UP"
            out.append(({k: float(v) for k, v in r.items()}, y))
    return out


def _synth(make, rows):
    return [(dict(x), y) for x, y in make().take(rows)]


def _abrupt(before, after, rows):
    """The first half of ``before``, then ``after``: an abrupt change (River's
    ConceptDriftStream with width 1 overflows ``math.exp`` far from the change)."""
    head = [(dict(x), y) for x, y in before.take(rows // 2)]
    return head + [(dict(x), y) for x, y in after.take(rows - rows // 2)]


def sea_abrupt(rows):
    from river.datasets import synth

    return _abrupt(synth.SEA(variant=0, seed=1), synth.SEA(variant=2, seed=2), rows)


def sea_gradual(rows):
    from river.datasets import synth

    return _synth(lambda: synth.ConceptDriftStream(
        synth.SEA(variant=0, seed=1), synth.SEA(variant=2, seed=2),
        position=rows // 2, width=rows // 5, seed=3), rows)  # fmt: skip


def agrawal_abrupt(rows):
    from river.datasets import synth

    return _abrupt(synth.Agrawal(classification_function=0, seed=1),
                   synth.Agrawal(classification_function=2, seed=2), rows)  # fmt: skip


def agrawal_gradual(rows):
    from river.datasets import synth

    return _synth(lambda: synth.ConceptDriftStream(
        synth.Agrawal(classification_function=1, seed=1),
        synth.Agrawal(classification_function=4, seed=2),
        position=rows // 2, width=rows // 5, seed=3), rows)  # fmt: skip


STREAMS = {f.__name__: f for f in (elec2, sea_abrupt, sea_gradual, agrawal_abrupt,
                                   agrawal_gradual)}  # fmt: skip


# ------------------------------------------------------------------ models
class Scaled:
    """Our OnlineStandardScaler in front of a River-protocol model (River's pipeline order)."""

    def __init__(self, model):
        from onlinelearn.preprocessing import OnlineStandardScaler

        self.scaler, self.model = OnlineStandardScaler(), model

    def predict_one(self, x):
        return self.model.predict_one(self.scaler.transform_one(x))

    def learn_one(self, x, y):
        self.scaler.learn_one(x)
        self.model.learn_one(self.scaler.transform_one(x), y)


def _ours(make):
    from onlinelearn.river import RiverClassifier

    return lambda: RiverClassifier(make())


def models():
    from river import linear_model as rl
    from river import preprocessing as rp

    from onlinelearn import AROW, PassiveAggressiveClassifier, Perceptron

    ours = {
        "ours PA-I": lambda: PassiveAggressiveClassifier(variant="PA-I"),
        "ours PA-I avg=False": lambda: PassiveAggressiveClassifier(variant="PA-I",
                                                                   average=False),
        "ours Perceptron": Perceptron,
        "ours AROW": AROW,
    }  # fmt: skip
    out = {
        "River PA (C=1, mode=1)": lambda: rl.PAClassifier(C=1.0, mode=1),
        "River LogReg +River S": lambda: rp.StandardScaler() | rl.LogisticRegression(),
        "River PA +River S": lambda: rp.StandardScaler() | rl.PAClassifier(C=1.0, mode=1),
        "River Perceptron": rl.Perceptron,
    }
    for name, make in ours.items():
        out[name] = _ours(make)
        out[name + " +S"] = lambda make=make: Scaled(_ours(make)())
    return out


def prequential(model, stream):
    right = 0
    t0 = time.perf_counter()
    for x, y in stream:
        right += model.predict_one(x) == y
        model.learn_one(x, y)
    return right / len(stream), (time.perf_counter() - t0) / len(stream) * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--streams", nargs="+", default=list(STREAMS), choices=list(STREAMS))
    ap.add_argument("--models", nargs="+", default=None)
    args = ap.parse_args(argv)
    makers = models()
    names = args.models or list(makers)
    data = {s: STREAMS[s](args.rows) for s in args.streams}
    for name in names:  # warm-up: compile before anything is timed
        prequential(makers[name](), data[args.streams[0]][:200])
    results = {}
    for s, stream in data.items():
        ys = [y for _, y in stream]
        results[(s, "majority class")] = (max(ys.count(v) for v in set(ys)) / len(ys), 0.0)
        for name in names:
            results[(s, name)] = prequential(makers[name](), stream)
            print(f"{s:16s} {name:26s} {results[(s, name)][0]:.4f} "
                  f"{results[(s, name)][1]:6.1f} us/row", file=sys.stderr, flush=True)  # fmt: skip
    cols = ["majority class"] + names
    print("| model | " + " | ".join(f"{s} ({len(data[s])} rows)" for s in data) + " |")
    print("|---|" + "---|" * len(data))
    for c in cols:
        cells = []
        for s in data:
            acc, us = results[(s, c)]
            cells.append(f"{acc:.3f}" if c == "majority class" else f"{acc:.3f} ({us:.1f} us)")
        print(f"| {c} | " + " | ".join(cells) + " |")
    print(f"\nload average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
