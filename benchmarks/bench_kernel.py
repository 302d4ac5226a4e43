"""Kernel family benchmark: KernelSVC next to scikit-learn's SVC (libsvm), and the cost per
example of the budgeted kernel Perceptron.

Run from the repository root (reads ``$ONLINELEARN_DATA`` or ``../shared/data``)::

    python benchmarks/bench_kernel.py                 # pendigits + mnist-10k, a few minutes
    python benchmarks/bench_kernel.py --quick         # subsamples, a smoke test
    python benchmarks/bench_kernel.py --extra ovr crammer_singer --datasets pendigits
    python benchmarks/bench_kernel.py --datasets dna pmlb/optdigits pmlb/texture --no-budget

The budgeted kernel Perceptron's stream alone (about 1 minute of CPU)::

    python -c "import sys; sys.path[:0] = ['benchmarks']; import bench_kernel; \
bench_kernel.report_budget()"

Both SVMs get the same RBF kernel (gamma = 1 / (d Var X), scikit-learn's 'scale', computed once
and passed to both), the same C and the same cache size.  Times are CPU seconds of this process
(``time.process_time``; the machine may be shared) and wall seconds; compilation is excluded by
a warm-up fit on a few rows.  BLAS runs on one thread (as libsvm).  The fits are interleaved
(scikit-learn, ours at each tol, scikit-learn, ...) and repeated; min and median are reported.
KernelSVC (one-vs-one, its default) runs at its default tol (relative duality gap 1e-3) and at
looser ones, so that its time at equal accuracy can be read off.
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
    if name in ("dna",) or name.startswith("pmlb/"):
        return _load_other(name, base)
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


def _load_other(name, base):
    """dna (its own test file) or a PMLB set (a fixed stratified 30 % test split, seed 0),
    features min-max scaled to [0, 1] on the training rows (as pendigits.scale)."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import MinMaxScaler

    if name == "dna":
        X, y = load_svmlight_file(str(base / "dna/dna.scale.bz2"), n_features=180)
        Xt, yt = load_svmlight_file(str(base / "dna/dna.scale.t.bz2"), n_features=180)
        X, Xt = X.toarray(), Xt.toarray()
    else:
        from onlinelearn.datasets import load_pmlb

        Xa, ya = load_pmlb(name.split("/", 1)[1])
        X, Xt, y, yt = train_test_split(Xa, ya, test_size=0.3, random_state=0, stratify=ya)
    scaler = MinMaxScaler().fit(X)
    return scaler.transform(X), y, np.clip(scaler.transform(Xt), -1.0, 2.0), yt


def _timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def _svc_methods(C, cache, gamma, extra):
    """(label, factory) of the fits compared: scikit-learn's SVC, then KernelSVC."""
    from sklearn.svm import SVC

    from onlinelearn import KernelSVC
    from onlinelearn.kernels import RBF

    out = [("sklearn SVC (libsvm, one-vs-one)",
            lambda: SVC(kernel="rbf", gamma=gamma, C=C, cache_size=cache))]  # fmt: skip
    for tol in (1e-3, 1e-2, 1e-1):
        label = f"KernelSVC ovo, tol={tol:g}" + (" (default)" if tol == 1e-3 else "")
        out.append((label, lambda t=tol: KernelSVC(RBF(gamma), C=C, tol=t, cache_size=cache)))
    for mc in extra:
        label = f"KernelSVC {mc}, tol=0.001 (one run)"
        out.append(
            (label, lambda m=mc: KernelSVC(RBF(gamma), C=C, cache_size=cache, multi_class=m))
        )
    return out


def bench_svc(name, quick, C, cache, extra, repeats):
    """Every method fitted ``repeats`` times, interleaved (sklearn, ours, sklearn, ours, ...)
    so that a change of load on a shared machine hits both; the extra methods once."""
    from onlinelearn import KernelSVC
    from onlinelearn.kernels import RBF

    X, y, Xt, yt = _load(name, quick)
    gamma = 1.0 / (X.shape[1] * X.var())
    for mc in ("ovo", "ovr", "crammer_singer"):  # compile outside the timing
        KernelSVC(RBF(gamma), C=C, multi_class=mc).fit(X[:60], y[:60])
    methods = _svc_methods(C, cache, gamma, extra)
    times = {label: [] for label, _ in methods}
    fitted = {}
    for rep in range(repeats):
        for label, make in methods:
            if rep > 0 and "one run" in label:
                continue
            m, c, w = _timed(lambda make=make: make().fit(X, y))
            times[label].append((c, w))
            fitted[label] = m
    rows = []
    for label, _ in methods:
        m = fitted[label]
        cpu = np.array([t[0] for t in times[label]])
        wall = np.array([t[1] for t in times[label]])
        nsv = int(m.n_support_.sum())
        rows.append((label, cpu.min(), np.median(cpu), wall.min(), np.median(wall),
                     m.score(Xt, yt), nsv))  # fmt: skip
    return {"name": name, "n": X.shape[0], "n_test": Xt.shape[0], "gamma": gamma, "C": C,
            "rows": rows}  # fmt: skip


def bench_budget(quick, budget, repeats=2):
    """The mnist stream through KernelPerceptron (defaults: averaged) with and without a budget,
    chunk by chunk, the two learners alternating on each chunk (same load on both); each chunk's
    CPU ms per example is the minimum over ``repeats`` runs of the stream."""
    from onlinelearn import KernelPerceptron
    from onlinelearn.kernels import RBF

    X, y, _, _ = _load("mnist", quick)
    gamma = 1.0 / (X.shape[1] * X.var())
    chunk = 250 if quick else 500
    KernelPerceptron(RBF(gamma), budget=5).partial_fit(X[:10], y[:10])  # compile
    starts = range(0, X.shape[0], chunk)
    best = {b: [np.inf] * len(starts) for b in (budget, None)}
    sizes = {b: [0] * len(starts) for b in (budget, None)}
    for _ in range(repeats):
        clfs = {b: KernelPerceptron(RBF(gamma), budget=b) for b in (budget, None)}
        for j, start in enumerate(starts):
            sl = slice(start, start + chunk)
            for b, clf in clfs.items():
                _, c, _ = _timed(lambda sl=sl, clf=clf: clf.partial_fit(X[sl], y[sl]))
                best[b][j] = min(best[b][j], 1e3 * c / chunk)
                sizes[b][j] = clf.support_vectors_.shape[0]
    return [(b, [(s + chunk, sizes[b][j], best[b][j]) for j, s in enumerate(starts)])
            for b in (budget, None)]  # fmt: skip


def report_budget(quick=False, budget=500, repeats=2):
    """Print the budgeted stream's table and whether its cost per example is flat once full:
    ratio of the mean cost over the last half of the stream to the mean cost over the chunks
    right after the set filled (1.0 = flat), next to the same ratio without a budget."""
    print(f"## Budgeted kernel Perceptron (RBF, mnist stream, budget {budget})\n")
    print("| examples seen | budget | support set | ms per example (CPU, min of "
          f"{repeats}) |")  # fmt: skip
    print("|---|---|---|---|")
    runs = bench_budget(quick, budget, repeats)
    for b, per in runs:
        for seen, nsv, ms in per:
            print(f"| {seen} | {b} | {nsv} | {ms:.3f} |")
    (_, per_b), (_, per_u) = runs
    full = next((j for j, (_, nsv, _) in enumerate(per_b) if nsv >= budget), None)
    if full is None or full + 2 >= len(per_b) // 2:
        print("\nthe budget did not fill early enough in this stream to judge flatness")
        return
    ms_b = np.array([ms for _, _, ms in per_b])
    ms_u = np.array([ms for _, _, ms in per_u])
    first, last = slice(full + 1, full + 3), slice(len(per_b) // 2, None)
    print(f"\nfull after {per_b[full][0]} examples; cost of the last half / cost just after "
          f"filling: budget {budget}: {ms_b[last].mean() / ms_b[first].mean():.2f} (flat = 1), "
          f"no budget: {ms_u[last].mean() / ms_u[first].mean():.2f}; last-half cost, no budget "
          f"/ budget: {ms_u[last].mean() / ms_b[last].mean():.2f}")  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--datasets", nargs="+", default=["pendigits", "mnist"])
    ap.add_argument("--C", type=float, default=10.0)
    ap.add_argument("--cache", type=float, default=500.0, help="cache size in MB for both")
    ap.add_argument("--budget", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3, help="fits per method (interleaved)")
    ap.add_argument(
        "--extra",
        nargs="*",
        default=[],
        choices=["ovr", "crammer_singer"],
        help="also fit these multi_class modes once (slow: ovr ~2x, crammer_singer ~80x libsvm)",
    )
    ap.add_argument("--no-budget", action="store_true", help="skip the kernel Perceptron part")
    args = ap.parse_args(argv)
    print("# Kernel family benchmark\n")
    print("CPU and wall seconds of one fit (min and median over the interleaved repeats) on a "
          "possibly shared machine; ratio = ours / scikit-learn (medians).\n")  # fmt: skip
    for name in args.datasets:
        r = bench_svc(name, args.quick, args.C, args.cache, args.extra, args.repeats)
        print(f"## {name}: n_train={r['n']}, n_test={r['n_test']}, RBF gamma={r['gamma']:.4g}, "
              f"C={r['C']:g}, cache {args.cache:g} MB, {args.repeats} repeats\n")  # fmt: skip
        print("| method | CPU s min / median | wall s min / median | ratio CPU | ratio wall | "
              "test accuracy | acc - sklearn | n_SV |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|")
        ref = r["rows"][0]
        for label, cmin, cmed, wmin, wmed, acc, nsv in r["rows"]:
            print(f"| {label} | {cmin:.3f} / {cmed:.3f} | {wmin:.3f} / {wmed:.3f} | "
                  f"{cmed / ref[2]:.2f} | {wmed / ref[4]:.2f} | {acc:.4f} | {acc - ref[5]:+.4f} "
                  f"| {nsv} |")  # fmt: skip
        print(flush=True)
    if args.no_budget:
        return 0
    report_budget(args.quick, args.budget)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
