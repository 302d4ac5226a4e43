"""The svmlight parser and parse + one pass, side by side with scikit-learn and Vowpal Wabbit.

    python benchmarks/bench_parser.py [--datasets news20 mnist] [--repeat 5]

Same data and row order as ``benchmarks/run.py`` (the training rows in one fixed permutation,
written once as an uncompressed svmlight file, and as a VW text file for VW).  Two tables, each
timed *in turn* within every repeat (ours, the peer, ours, ...) so that a machine shared with
other jobs slows all of them alike; wall clock min and median, CPU time (``time.process_time``,
which counts every thread of the process) median, MB/s of text and the ratios:

* parser: ``onlinelearn.io.load_svmlight`` (float32 values, as the learners take them) against
  ``sklearn.datasets.load_svmlight_file``;
* end to end, parse + one pass of multiclass PA-I (C = 1, defaults otherwise, no shuffling):
  ``load_svmlight`` + ``fit``, ``iter_svmlight_chunks`` + ``partial_fit`` per chunk, without
  and with ``prefetch=True`` (a second thread parses ahead; the row of run.py), and VW's C++
  driver reading its own text format (``--oaa K --loss_function hinge``,
  in process, its parser on a second thread), with the held-out accuracy of each.

A minute or two for both data sets (most of it loading them and writing the VW file).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import run as R  # noqa: E402
from _bench_methods import end_to_end_methods, vw_methods  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402

import onlinelearn as ol  # noqa: E402
from onlinelearn.io import iter_svmlight_chunks, load_svmlight  # noqa: E402


def _interleaved(runs: dict, repeat: int) -> dict:
    """{label: [(wall, cpu), ...]} with the callables timed in turn, ``repeat`` rounds."""
    times = {label: [] for label in runs}
    for _ in range(repeat):
        for label, fn in runs.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            times[label].append((time.perf_counter() - t0, time.process_time() - c0))
    return times


def _rows(times: dict, ref: str, mb: float, extra: dict | None = None) -> list[str]:
    med_ref = statistics.median(w for w, _ in times[ref])
    out = []
    for label, tw in times.items():
        wall = [w for w, _ in tw]
        cpu = statistics.median(c for _, c in tw)
        med = statistics.median(wall)
        note = "" if extra is None else f" | {extra.get(label, '')}"
        out.append(
            f"| {label} | {min(wall):.3f} / {med:.3f} | {cpu:.3f} | {mb / min(wall):.0f} / "
            f"{mb / med:.0f} | {med / med_ref:.2f}{note} |"
        )
    return out


def bench(name: str, repeat: int, C: float) -> list[str]:
    d = R.load_data(name, False, 0, False)
    K = len(d.classes)
    lines = [f"\n### {name}: {d.Xtr.shape[0]} rows, {d.Xtr.nnz} nonzeros, {K} classes\n"]
    with tempfile.TemporaryDirectory(prefix="olbench-parse-") as tmp:
        tmp = Path(tmp)
        e2e = {m.key: m for m in end_to_end_methods(d, C, tmp, ol)}
        path = tmp / f"{d.name}.train.svm"  # written by end_to_end_methods
        mb = path.stat().st_size / 1e6
        vw = {m.key: m for m in vw_methods(d, tmp)}["vw_oaa_file"]

        # -- the parsers
        def ours():
            return load_svmlight(path, n_features=d.n_features, dtype=np.float32)

        def sklearn():
            return load_svmlight_file(str(path), n_features=d.n_features, dtype=np.float32)

        ours()  # compile
        X, y = ours()
        X2, y2 = sklearn()
        same = (
            np.array_equal(X.indptr, X2.indptr)
            and np.array_equal(X.indices, X2.indices)
            and np.array_equal(X.data.view(np.uint32), X2.data.view(np.uint32))
            and np.array_equal(y, y2)
        )
        times = _interleaved(
            {"onlinelearn.io.load_svmlight": ours, "sklearn load_svmlight_file": sklearn},
            max(1, repeat // 2),
        )
        lines += [
            f"Parser, {mb:.1f} MB of text, float32 values (output identical to scikit-learn's: "
            f"{'yes' if same else 'NO'}):\n",
            "| parser | wall min / median (s) | CPU median (s) | MB/s (min / median) | "
            "median / ours |",
            "|---|---|---|---|---|",
            *_rows(times, "onlinelearn.io.load_svmlight", mb),
        ]

        # -- end to end: parse + one pass
        def make():
            return ol.PassiveAggressiveClassifier(variant="PA-I", C=C, n_epochs=1, shuffle=False)

        def whole():
            Xw, yw = load_svmlight(path, n_features=d.n_features, dtype=np.float32)
            return make().fit(Xw, yw)

        def chunked(prefetch):
            def run():
                est = make()
                for Xc, yc in iter_svmlight_chunks(
                    path, 10000, d.n_features, dtype=np.float32, prefetch=prefetch
                ):
                    est.partial_fit(Xc, yc, classes=d.classes)
                return est

            return run

        runs = {
            "ours: load_svmlight + fit": whole,
            "ours: iter_svmlight_chunks(10000) + partial_fit": chunked(False),
            "ours: the same, prefetch=True (2nd thread parses; run.py's row)": e2e[
                "ours_pa1_e2e"
            ].fit,
            "VW native driver, own text format (2nd thread parses)": vw.fit,
        }
        predict = {k: (lambda m: m.predict(d.Xte)) for k in runs}
        predict["VW native driver, own text format (2nd thread parses)"] = vw.predict
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            acc = {k: f"{np.mean(predict[k](fn()) == d.yte):.4f}" for k, fn in runs.items()}
            times = _interleaved(runs, repeat)
        lines += [
            f"\nEnd to end, parse {mb:.1f} MB + one pass (PA-I, C = {C:g}):\n",
            "| method | wall min / median (s) | CPU median (s) | MB/s (min / median) | "
            "median / ours | accuracy |",
            "|---|---|---|---|---|---|",
            *_rows(times, "ours: load_svmlight + fit", mb, acc),
        ]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["news20", "mnist"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--C", type=float, default=1.0)
    args = ap.parse_args(argv)
    out = []
    for name in args.datasets:
        out += bench(name, args.repeat, args.C)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
