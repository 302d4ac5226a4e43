"""Online regressors side by side: onlinelearn against scikit-learn and River, one run.

Data (real, from the shared folder; features and target standardised on the training part,
80/20 split in file order after a seeded shuffle):

* ``texture`` (PMLB, 5500 x 40): regress the first texture feature ``A1`` from the other 39
  (the class column left out);
* ``adult`` (PMLB, 48842 x 14): regress ``age`` from the other 13 columns (the income class
  left out; categorical codes taken as numbers);
* ``sleep`` (PMLB, 105908 x 13): regress the sleep stage ``target`` (ordinal 0-4) as a number.

Pairs compared at the same problem and parameters, one epoch each (``partial_fit`` on the
whole training part, or one ``learn_one`` per row for River):

* PA-I, eps-insensitive (C = 0.1, epsilon = 0.1): ``onlinelearn.PassiveAggressiveRegressor``
  vs scikit-learn's ``PassiveAggressiveRegressor`` and River's ``linear_model.PARegressor``;
* squared loss: ``onlinelearn.OnlineLeastSquares`` (proximal step, C = 0.01, averaged; and RLS) vs
  ``SGDRegressor(penalty=None)`` (its default inverse-scaling step) and River's
  ``linear_model.LinearRegression`` (plain SGD, l2 = 0).

Reported per set and learner: seconds per epoch (best of ``--repeats``, the learners taking
turns, after a warm-up call that compiles the numba code), the median, the best CPU time,
microseconds per row, test MSE and MAE, and the speed ratios (best, median, CPU) against
scikit-learn's learner of the same loss.  River runs on
the first ``--river-rows`` rows only (it is pure Python); its time per epoch is scaled to the
whole training part.

Run from the repository root:  ``python benchmarks/bench_regression.py``
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from run import data_dir  # noqa: E402

from onlinelearn import OnlineLeastSquares, PassiveAggressiveRegressor  # noqa: E402

SETS = {
    "texture": ("A1", ("target",)),
    "adult": ("age", ("target",)),
    "sleep": ("target", ()),
}


def load(name):
    path = data_dir() / "pmlb" / name / f"{name}.tsv.gz"
    with gzip.open(path, "rt") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        table = np.loadtxt(fh, delimiter="\t", dtype=np.float64)
    target, drop = SETS[name]
    y = table[:, header.index(target)]
    keep = [i for i, h in enumerate(header) if h != target and h not in drop]
    X = table[:, keep]
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    X, y = X[perm], y[perm]
    n_tr = int(0.8 * len(y))
    mu, sd = X[:n_tr].mean(0), X[:n_tr].std(0)
    sd[sd == 0] = 1.0
    X = np.ascontiguousarray((X - mu) / sd)
    ym, ys = y[:n_tr].mean(), y[:n_tr].std()
    y = (y - ym) / ys
    return X[:n_tr], y[:n_tr], X[n_tr:], y[n_tr:]


def errors(y, p):
    r = np.asarray(p) - y
    return float(np.mean(r * r)), float(np.mean(np.abs(r)))


def run_interleaved(learners, Xtr, ytr, Xte, yte, repeats):
    """Seconds per epoch of each learner over ``repeats`` runs, the learners taking turns within
    each repeat (so that a burst of load on the shared machine hits all of them alike): wall
    time (best, median) and CPU time of this process (best)."""
    for _, _, make in learners:
        make().partial_fit(Xtr[:50], ytr[:50])  # warm-up (numba compilation, imports)
    wall = {label: [] for _, label, _ in learners}
    cpu = {label: [] for _, label, _ in learners}
    fitted = {}
    for _ in range(repeats):
        for _, label, make in learners:
            est = make()
            c0, t0 = time.process_time(), time.perf_counter()
            est.partial_fit(Xtr, ytr)
            wall[label].append(time.perf_counter() - t0)
            cpu[label].append(time.process_time() - c0)
            fitted[label] = est
    return {
        label: (
            loss, min(wall[label]), float(np.median(wall[label])), min(cpu[label]),
            *errors(yte, fitted[label].predict(Xte)),
        )
        for loss, label, _ in learners
    }  # fmt: skip


def run_river(make, Xtr, ytr, Xte, yte, n_rows):
    model = make()
    names = [f"f{j}" for j in range(Xtr.shape[1])]
    rows = [dict(zip(names, x, strict=True)) for x in Xtr[:n_rows].tolist()]
    t0 = time.perf_counter()
    for x, t in zip(rows, ytr[:n_rows].tolist(), strict=True):
        model.learn_one(x, t)
    sec = (time.perf_counter() - t0) * len(ytr) / n_rows
    test = [dict(zip(names, x, strict=True)) for x in Xte[:5000].tolist()]
    pred = np.array([model.predict_one(x) for x in test])
    return sec, errors(yte[: len(test)], pred)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS))
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--river-rows", type=int, default=5000)
    args = ap.parse_args(argv)

    from river import linear_model as rlm
    from river import optim
    from sklearn.linear_model import PassiveAggressiveRegressor as SkPA
    from sklearn.linear_model import SGDRegressor

    warnings.simplefilter("ignore", FutureWarning)  # scikit-learn 1.8 deprecates its PA
    C, eps = 0.1, 0.1
    rows = []
    for name in args.sets:
        Xtr, ytr, Xte, yte = load(name)
        n = len(ytr)
        print(f"\n{name}: {n} training rows, {len(yte)} test rows, {Xtr.shape[1]} features")
        learners = [
            ("PA-I", "onlinelearn PassiveAggressiveRegressor",
             lambda: PassiveAggressiveRegressor(C=C, epsilon=eps)),
            ("PA-I", "sklearn PassiveAggressiveRegressor",
             lambda: SkPA(C=C, epsilon=eps, shuffle=False)),
            ("squared", "onlinelearn OnlineLeastSquares(proximal, average)",
             lambda: OnlineLeastSquares(solver="proximal", C=0.01, average=True)),
            ("squared", "onlinelearn OnlineLeastSquares(rls)",
             lambda: OnlineLeastSquares(solver="rls", alpha=1.0)),
            ("squared", "sklearn SGDRegressor",
             lambda: SGDRegressor(penalty=None, shuffle=False)),
        ]  # fmt: skip
        res = run_interleaved(learners, Xtr, ytr, Xte, yte, args.repeats)
        n_r = min(args.river_rows, n)
        river = [
            ("PA-I", "river PARegressor", lambda: rlm.PARegressor(C=C, mode=1, eps=eps)),
            ("squared", "river LinearRegression",
             lambda: rlm.LinearRegression(optimizer=optim.SGD(0.01), l2=0.0)),
        ]  # fmt: skip
        for loss, label, make in river:
            sec, (mse, mae) = run_river(make, Xtr, ytr, Xte, yte, n_r)
            res[label + f" ({n_r} rows, scaled)"] = (loss, sec, sec, sec, mse, mae)
        ref = {"PA-I": res["sklearn PassiveAggressiveRegressor"],
               "squared": res["sklearn SGDRegressor"]}  # fmt: skip
        head = ("learner", "best ms", "med ms", "cpu ms", "us/row", "test MSE", "test MAE",
                "x best", "x med", "x cpu")  # fmt: skip
        print("{:52s} {:>8s} {:>8s} {:>8s} {:>7s} {:>9s} {:>9s} {:>7s} {:>6s} {:>6s}".format(*head))
        for label, (loss, best, med, cpu, mse, mae) in res.items():
            r = ref[loss]
            ratios = (r[1] / best, r[2] / med, r[3] / cpu if cpu > 0 else float("nan"))
            print(f"{label:52s} {1e3 * best:8.3f} {1e3 * med:8.3f} {1e3 * cpu:8.3f} "
                  f"{1e6 * best / n:7.3f} {mse:9.4f} {mae:9.4f} "
                  f"{ratios[0]:7.2f} {ratios[1]:6.2f} {ratios[2]:6.2f}")  # fmt: skip
            rows.append((name, label, best, med, mse, mae, *ratios))
    print("\nx best / x med / x cpu: scikit-learn's time over ours for the same loss (best wall,")
    print("median wall, best CPU time of this process), all from this one interleaved run.")
    return rows


if __name__ == "__main__":
    main()
