"""One epoch of the linear learners against scikit-learn, interleaved in one process.

    python benchmarks/bench_linear.py [--datasets news20 mnist] [--repeat 5] [--dtype float32]

Same data, order and parameters as ``benchmarks/run.py`` (one fixed permutation of the training
rows, no shuffling of anyone's own, C = 1, float32 feature values by default), but the methods
are timed *in turn* within each repeat (ours, scikit-learn, ours, ...), so that a machine shared
with other jobs slows all of them alike; each time is reported as wall clock (min and median)
and CPU time (``time.process_time``, median), with the ratio of scikit-learn's SGD ``pa1``
median to each row's and the nanoseconds per nonzero x class next to the score-only sweep (the
floor of a pass: it reads the K weights of every nonzero and does nothing else).

Rows "bare pass" time only the compiled pass of the default averaged PA-I (the state allocated
and padded as ``fit`` does, outside the timer): the difference to its ``fit`` row is the fixed
cost of a call (checks, label codes, allocation, the overflow check); the table after it times each
piece of that fixed cost in isolation next to the form it replaced.  "prefetch off" is the same pass
compiled in this process with the U prefetches disabled (``PREFETCH_MIN_ENTRIES`` out of
reach), the before/after of that change side by side.  A few minutes for both data sets.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import run as R  # noqa: E402

import onlinelearn as ol  # noqa: E402


def methods(C):
    one = {"n_epochs": 1, "shuffle": False}
    return {
        "ours PA-I, defaults (averaged)": lambda: ol.PassiveAggressiveClassifier(
            variant="PA-I", C=C, **one
        ),
        "ours PA-I, average=False": lambda: ol.PassiveAggressiveClassifier(
            variant="PA-I", C=C, average=False, **one
        ),
        "ours PA-I, intercept_scaling='auto' (averaged)": lambda: ol.PassiveAggressiveClassifier(
            variant="PA-I", C=C, intercept_scaling="auto", **one
        ),
        "ours Perceptron, defaults (averaged)": lambda: ol.Perceptron(**one),
        "ours COPA, defaults (averaged)": lambda: ol.COPA(C=C, **one),
        "ours COPA, average=False": lambda: ol.COPA(C=C, average=False, **one),
        "sklearn SGD pa1 OvR": lambda: R.sklearn_sgd_pa1(C),
        "sklearn Perceptron OvR": R.sklearn_perceptron,
    }


def score_sweep_4():
    """The floor of the Euclidean pass: its own score sweep
    (:func:`onlinelearn._core.sparse.row_scores_sqnorm`: K weights read per nonzero, four
    nonzeros per step, float64 sums, unsigned indices) called on every row, and nothing else
    (no prediction, no step, no update)."""
    from numba import njit

    from onlinelearn._core.sparse import row_scores_sqnorm

    @njit(cache=False)
    def sweep(data, indices, indptr, W, out):
        K = W.shape[1]
        s = np.zeros(K)
        tot = 0.0
        for i in range(indptr.shape[0] - 1):
            tot += row_scores_sqnorm(data, indices, 0, indptr[i], indptr[i + 1], W, s)
            tot += s[0]
        out[0] = tot

    return sweep


def bare_pass(make, X, y, kernel):
    """A callable running only ``kernel`` (one epoch, file order) on a fresh state of the
    estimator ``make()``, the state prepared as ``fit`` prepares it but outside the timing."""
    from onlinelearn._core.euclid_pass import padded_work_state
    from onlinelearn._core.online_loop import empty_scratch

    est = make().fit(X[:50], y[:50])
    classes = np.unique(y)
    codes = np.searchsorted(classes, y).astype(np.int64)
    weights = np.ones(len(y))
    order = np.arange(X.shape[0], dtype=np.int64)
    ip, fp = None, None

    def prepare():
        nonlocal ip, fp
        est._init_state(classes, X.shape[1], X.dtype)
        ip, fp = est._codes(est._n_weights())

    def run():
        # the state padded to a multiple of four classes as ``_run`` pads it (mnist)
        n, K = X.shape[0], est._theta.shape[1]
        theta, A, scratch = est._theta, est._A, empty_scratch(K)
        work = padded_work_state(theta, A, est.average, X.data.shape[0])
        if work is not None:
            theta, A = work
            scratch = (np.zeros(theta.shape[1]), np.zeros(theta.shape[1]), *scratch[2:])
        kernel(X.data, X.indices, X.indptr, codes, weights, order, theta, A,
               est._lastS, est._st, ip, fp, np.zeros(n, np.int64), np.zeros(n),
               *scratch)  # fmt: skip

    return prepare, run


def kernel_without_prefetch():
    """The Euclidean pass compiled here with the prefetches switched off."""
    from onlinelearn._core import euclid_pass as E
    from onlinelearn._core.prefetch import without_prefetch

    return without_prefetch(E.euclid_pass)


def fixed_costs(X, y, repeat):
    """The pieces of a call's fixed cost in isolation, each next to the form it replaced,
    interleaved in one process (CPU ms, min and median): the checks of X, the label codes,
    the overflow check of the state after a pass."""
    from sklearn.utils.validation import _assert_all_finite

    from onlinelearn._core import checks as K
    from onlinelearn.shell import validation as V

    classes = np.unique(y)
    theta = np.zeros((X.shape[1] + 1, len(classes)), dtype=X.data.dtype)
    U = np.zeros(theta.shape)

    scan = first_defect_scan()
    pieces = {
        "index range, first-defect loop (before)": lambda: scan(X.indices, X.shape[1]),
        "sparse structure check (now: min/max, then the first defect)": lambda: (
            V.check_sparse_structure(X)
        ),
        "finiteness of X, scikit-learn (before)": lambda: _assert_all_finite(X.data),
        "finiteness of X, compiled sum of x*0 (now: in predict; fit leaves it to the pass)": (
            lambda: K.all_finite(X.data)
        ),
        "labels, np.unique + searchsorted (before)": lambda: np.searchsorted(np.unique(y), y),
        "labels, table of marks (now)": lambda: V.label_codes(V.unique_labels(y), y),
        "state after a pass, np.isfinite (before)": lambda: (
            np.isfinite(theta).all() and np.isfinite(U).all()
        ),
        "state after a pass, compiled (now)": lambda: (
            K.all_finite(theta.reshape(-1)) and K.all_finite(U.reshape(-1))
        ),
    }
    times = {label: [] for label in pieces}
    for fn in pieces.values():
        fn()
    for _ in range(max(repeat, 5)):
        for label, fn in pieces.items():
            c0 = time.process_time()
            fn()
            times[label].append(time.process_time() - c0)
    lines = ["", "| fixed cost piece | CPU ms min | CPU ms median |", "|---|---:|---:|"]
    for label, ts in times.items():
        lines.append(f"| {label} | {min(ts) * 1e3:.2f} | {statistics.median(ts) * 1e3:.2f} |")
    return "\n".join(lines)


def first_defect_scan():
    """The former index range check (a loop that stops at the first bad index), compiled here."""
    from numba import njit

    @njit(cache=False)
    def scan(indices, n_minor):
        for q in range(indices.shape[0]):
            j = indices[q]
            if j < 0 or j >= n_minor:
                return q
        return -1

    return scan


def bench(name, repeat, C):
    d = R.load_data(name, False, 0, False)
    X, y = d.Xtr, d.ytr
    K = len(d.classes)
    cells = X.nnz * K
    make = methods(C)
    W = np.zeros((X.shape[1] + 1, K), dtype=X.data.dtype)
    sink = np.zeros(1)
    sweep = R.score_sweep()
    sweep4 = score_sweep_4()
    runs = {
        "score-only sweep, 1 nonzero per step (the former floor)": lambda: sweep(
            X.data, X.indices, X.indptr, W, sink
        ),
        "score-only sweep, 4 nonzeros per step (the floor)": lambda: sweep4(
            X.data, X.indices, X.indptr, W, sink
        ),
    }
    if K % 4:  # the pass pads the classes to a multiple of four: its own floor
        W4 = np.zeros((X.shape[1] + 1, K + (-K) % 4), dtype=X.data.dtype)
        runs["score-only sweep, 4 nonzeros per step, classes padded to a multiple of 4"] = lambda: (
            sweep4(X.data, X.indices, X.indptr, W4, sink)
        )
    runs.update({label: (lambda mk=mk: mk().fit(X, y)) for label, mk in make.items()})
    from onlinelearn._core.euclid_pass import euclid_pass

    default = make["ours PA-I, defaults (averaged)"]
    prep = {}
    for label, kern in [
        ("ours PA-I default, bare pass", euclid_pass),
        ("ours PA-I default, bare pass, prefetch off", kernel_without_prefetch()),
    ]:
        prep[label], runs[label] = bare_pass(default, X, y, kern)
    acc = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, fn in runs.items():  # compile / warm up
            if label in make:
                make[label]().fit(X[:300], y[:300])
            else:
                if label in prep:
                    prep[label]()
                fn()
        times = {label: [] for label in runs}
        for _ in range(repeat):
            for label, fn in runs.items():
                if label in prep:
                    prep[label]()
                t0, c0 = time.perf_counter(), time.process_time()
                model = fn()
                times[label].append((time.perf_counter() - t0, time.process_time() - c0))
                if label in make and label not in acc:
                    acc[label] = float(model.score(d.Xte, d.yte))
    ref = statistics.median(w for w, _ in times["sklearn SGD pa1 OvR"])
    lines = [
        f"### {name}: {X.shape[0]} rows, {X.nnz} nonzeros, {K} classes, "
        f"{X.data.dtype} values; nnz x classes = {cells:.3g}",
        "",
        "| method | wall min | wall median | CPU median | ns per nnz x class (wall min) "
        "| sklearn pa1 / this (medians) | accuracy |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, ts in times.items():
        wall = [w for w, _ in ts]
        cpu = [c for _, c in ts]
        med = statistics.median(wall)
        a = f"{acc[label]:.4f}" if label in acc else "—"
        lines.append(
            f"| {label} | {min(wall):.4f} | {med:.4f} | {statistics.median(cpu):.4f} | "
            f"{min(wall) / cells * 1e9:.2f} | {ref / med:.2f}x | {a} |"
        )
    med = {label: statistics.median(w for w, _ in ts) for label, ts in times.items()}
    cpu = {label: statistics.median(c for _, c in ts) for label, ts in times.items()}
    pa, pa_last = "ours PA-I, defaults (averaged)", "ours PA-I, average=False"
    copa, copa_last = "ours COPA, defaults (averaged)", "ours COPA, average=False"
    bare = "ours PA-I default, bare pass"
    lines += [
        "",
        f"COPA / PA-I epoch, wall (CPU) medians: averaged {med[copa] / med[pa]:.2f}x "
        f"({cpu[copa] / cpu[pa]:.2f}x), last iterate {med[copa_last] / med[pa_last]:.2f}x "
        f"({cpu[copa_last] / cpu[pa_last]:.2f}x); fixed cost of a fit (fit - bare pass, "
        f"CPU medians): {cpu[pa] - cpu[bare]:.4f} s",
    ]
    return "\n".join(lines) + "\n" + fixed_costs(X, y, repeat)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["news20", "mnist"], choices=R.DATASETS)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = ap.parse_args(argv)
    R.VALUE_DTYPE = args.dtype
    import os

    for name in args.datasets:
        print(bench(name, args.repeat, args.C))
        print(f"\n(load average at the end: {os.getloadavg()[0]:.1f})\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
