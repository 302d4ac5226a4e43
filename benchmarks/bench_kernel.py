"""Kernel family benchmark: KernelSVC next to scikit-learn's SVC (libsvm), and the cost per
example of the budgeted kernel Perceptron.

Run from the repository root (reads ``$ONLINELEARN_DATA`` or ``../shared/data``)::

    python benchmarks/bench_kernel.py                 # pendigits + mnist-10k, about 5-10 minutes
    python benchmarks/bench_kernel.py --quick         # subsamples, a smoke test

Both SVMs get the same RBF kernel (gamma = 1 / (d Var X), scikit-learn's 'scale', computed once
and passed to both), the same C and the same cache size.  Times are CPU seconds of this process
(``time.process_time``; the machine may be shared) and wall seconds; compilation is excluded by
a warm-up fit on a few rows.  BLAS runs on one thread (as libsvm).  KernelSVC runs at its
default tol (relative duality gap 1e-3) and at looser ones, so that its time at equal accuracy
can be read off.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

# libsvm is single-threaded; so is the comparison (BLAS threads would only fight on a shared
# machine).  Set before numpy loads its BLAS.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _load(name, quick):
    from run import data_dir
    from sklearn.datasets import load_svmlight_file

    base = data_dir()
    if name == "pendigits":
        X, y = load_svmlight_file(str(base / "pendigits/pendigits.scale.bz2"), n_features=16)
        Xt, yt = load_svmlight_file(str(base / "pendigits/pendigits.scale.t.bz2"), n_features=16)
        n_train = 1500 if quick else X.shape[0]
    else:
        X, y = load_svmlight_file(str(base / "mnist/mnist.scale.bz2"), n_features=784)
        Xt, yt = load_svmlight_file(str(base / "mnist/mnist.scale.t.bz2"), n_features=784)
        n_train = 2000 if quick else 10000
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(X.shape[0], n_train, replace=False))
    n_test = 1000 if quick else Xt.shape[0]
    X, y = X[idx].toarray(), y[idx]
    Xt, yt = Xt[:n_test].toarray(), yt[:n_test]
    return X, y, Xt, yt


def _timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def bench_svc(name, quick, C, cache, cs):
    from sklearn.svm import SVC

    from onlinelearn import KernelSVC
    from onlinelearn.kernels import RBF

    X, y, Xt, yt = _load(name, quick)
    gamma = 1.0 / (X.shape[1] * X.var())
    KernelSVC(RBF(gamma), C=C).fit(X[:50], y[:50])  # compile outside the timing
    rows = []
    ref, c, w = _timed(lambda: SVC(kernel="rbf", gamma=gamma, C=C, cache_size=cache).fit(X, y))
    acc_ref = ref.score(Xt, yt)
    rows.append(("sklearn SVC (libsvm, one-vs-one)", c, w, acc_ref, int(ref.n_support_.sum())))
    for tol in (1e-3, 1e-2, 1e-1):
        for mc in ("ovr", "crammer_singer") if (tol == 1e-3 and cs) else ("ovr",):
            est = KernelSVC(RBF(gamma), C=C, tol=tol, cache_size=cache, multi_class=mc)
            m, c, w = _timed(lambda est=est: est.fit(X, y))
            rows.append((f"KernelSVC {mc}, tol={tol:g}", c, w, m.score(Xt, yt), len(m.support_)))
    return {"name": name, "n": X.shape[0], "n_test": Xt.shape[0], "gamma": gamma, "C": C,
            "rows": rows, "ref_cpu": rows[0][1], "ref_acc": acc_ref}  # fmt: skip


def bench_budget(quick, budget):
    from onlinelearn import KernelPerceptron
    from onlinelearn.kernels import RBF

    X, y, _, _ = _load("mnist", quick)
    gamma = 1.0 / (X.shape[1] * X.var())
    chunk = 250 if quick else 500
    out = []
    for b in (budget, None):
        clf = KernelPerceptron(RBF(gamma), budget=b)
        clf.partial_fit(X[:10], y[:10])  # compile
        clf = KernelPerceptron(RBF(gamma), budget=b)
        per = []
        for start in range(0, X.shape[0], chunk):
            sl = slice(start, start + chunk)
            _, c, _ = _timed(lambda sl=sl, clf=clf: clf.partial_fit(X[sl], y[sl]))
            per.append((start + chunk, clf.support_vectors_.shape[0], 1e3 * c / chunk))
        out.append((b, per))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--datasets", nargs="+", default=["pendigits", "mnist"])
    ap.add_argument("--C", type=float, default=10.0)
    ap.add_argument("--cache", type=float, default=500.0, help="cache size in MB for both")
    ap.add_argument("--budget", type=int, default=500)
    ap.add_argument(
        "--cs-datasets",
        nargs="*",
        default=["pendigits"],
        help="data sets on which Crammer-Singer also runs (slow on mnist)",
    )
    args = ap.parse_args(argv)
    print("# Kernel family benchmark\n")
    print("CPU and wall seconds of one fit on a shared machine; ratio = ours / scikit-learn "
          "(CPU).\n")  # fmt: skip
    for name in args.datasets:
        r = bench_svc(name, args.quick, args.C, args.cache, name in args.cs_datasets)
        print(f"## {name}: n_train={r['n']}, n_test={r['n_test']}, RBF gamma={r['gamma']:.4g}, "
              f"C={r['C']:g}, cache {args.cache:g} MB\n")  # fmt: skip
        print("| method | CPU s | wall s | ratio (CPU) | test accuracy | acc - sklearn | n_SV |")
        print("|---|---|---|---|---|---|---|")
        for label, c, w, acc, nsv in r["rows"]:
            print(f"| {label} | {c:.2f} | {w:.2f} | {c / r['ref_cpu']:.2f} | {acc:.4f} | "
                  f"{acc - r['ref_acc']:+.4f} | {nsv} |")  # fmt: skip
        print(flush=True)
    print(f"## Budgeted kernel Perceptron (RBF, mnist stream, budget {args.budget})\n")
    print("| examples seen | budget | support set | ms per example (CPU) |")
    print("|---|---|---|---|")
    for b, per in bench_budget(args.quick, args.budget):
        for seen, nsv, ms in per:
            print(f"| {seen} | {b} | {nsv} | {ms:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
