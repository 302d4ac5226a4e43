"""The cost of ``--bits``: raw 20 newsgroups as Vowpal Wabbit text, read + hashed + one pass of
multiclass PA-I, at several hash widths, ours against Vowpal Wabbit, each run in its own process
so that its peak memory is its own.

    python benchmarks/bench_vw_bits.py [--bits 18 24 28] [--repeat 3] [--dense 18]

The VW files are written as ``bench_vw.py`` writes them (untimed).  For each ``b`` and each
repeat, in turn (a shared machine slows all alike), one child process each:

* ``ours (SeenColumns)``: ``iter_vw_chunks(train.vw, n_bits=b, prefetch=True)`` +
  ``partial_fit_predict`` per chunk of ``SeenColumns(PassiveAggressiveClassifier('PA-I'),
  2**b)`` (weights only for the hashed columns seen: what ``onlinelearn train --format vw``
  runs);
* ``ours (dense)``: the same with the bare ``PassiveAggressiveClassifier`` (a (2**b, K)
  weight matrix and its averaging sums; only at the ``--dense`` widths, 2**b x K x 16 bytes);
* ``ours (command line)``: ``onlinelearn train --format vw --learner pa1 --bits b`` (its
  ``main``, from argument parsing to the saved model file; the process wall time column adds
  the start of Python and the imports, which VW's binary would not pay);
* ``VW --oaa K``: the ``vowpalwabbit`` package's C++ driver in process (``Workspace`` with
  ``-d train.vw``: VW's own parser thread and one pass; its defaults: adaptive, normalised,
  invariant SGD on the squared loss).

Reported: the median time of the fit (reading included, the imports not) and of the child's
whole run, the largest peak resident memory over the repeats (the child's ``VmHWM`` at the end
of the fit, before the test set is read: imports included), the model file's size, and test
accuracy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def _child(kind: str, bits: int, train: str, test: str, K: int, out: str) -> None:
    """One measured run; prints a JSON line."""
    sys.path.insert(0, str(SRC))
    res = {}
    if kind in ("seen", "dense"):
        from onlinelearn import PassiveAggressiveClassifier
        from onlinelearn.io.vw import iter_vw_chunks, load_vw
        from onlinelearn.model_io import save_model
        from onlinelearn.seen_columns import SeenColumns

        t0 = time.perf_counter()
        est = PassiveAggressiveClassifier(variant="PA-I", C=1.0)
        if kind == "seen":
            est = SeenColumns(est, 2**bits)
        with iter_vw_chunks(train, n_bits=bits, prefetch=True) as reader:
            for X, y in reader:
                est.partial_fit_predict(X, y)
        res["fit_s"] = time.perf_counter() - t0
        res["peak_mb"] = _peak_mb()
        save_model(est, out)
        Xt, yt = load_vw(test, n_bits=bits)
        res["accuracy"] = float(np.mean(est.predict(Xt) == yt))
    elif kind == "cli":
        from onlinelearn.cli import main as cli

        t0 = time.perf_counter()
        argv = ["train", "--format", "vw", "--learner", "pa1", "--bits", str(bits), "--quiet",
                "-m", out, train]  # fmt: skip
        if cli(argv) != 0:
            raise SystemExit(1)
        res["fit_s"] = time.perf_counter() - t0
        res["peak_mb"] = _peak_mb()
    elif kind == "vw":
        from vowpalwabbit import Workspace

        t0 = time.perf_counter()
        Workspace(arg_list=["--oaa", str(K), "-b", str(bits), "--quiet", "-d", train,
                            "-f", out]).finish()  # fmt: skip
        res["fit_s"] = time.perf_counter() - t0
        res["peak_mb"] = _peak_mb()
        pred = out + ".pred"
        Workspace(arg_list=["-i", out, "-t", "-d", test, "-p", pred, "--quiet"]).finish()
        yt = np.array([int(line.split(" ", 1)[0]) for line in open(test)])
        res["accuracy"] = float(np.mean(np.loadtxt(pred).astype(np.int64) == yt))
    print(json.dumps(res))


def _peak_mb() -> float:
    """The peak resident memory of this process (VmHWM: of its own address space since its
    exec; a parent's wait4 ru_maxrss would also count the parent's memory at the fork)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _run(cmd, env=None):
    """(wall seconds, the child's JSON line) of a child process."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return wall, json.loads(proc.stdout.decode().strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bits", type=int, nargs="+", default=[18, 24, 28])
    ap.add_argument(
        "--dense", type=int, nargs="*", default=[18],
        help="widths where the dense learner runs too (2**b x K x 16 bytes)",
    )  # fmt: skip
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        kind, bits, train, test, K, out = args.child
        _child(kind, int(bits), train, test, int(K), out)
        return 0
    sys.path.insert(0, str(HERE))
    from bench_vw import write_vw_files

    env = {**os.environ, "PYTHONPATH": str(SRC)}
    with tempfile.TemporaryDirectory(prefix="olbench-bits-") as tmp:
        tmp = Path(tmp)
        train, test, K = write_vw_files(tmp)  # (untimed)
        runs = []
        for b in args.bits:
            if b in args.dense:
                runs.append(("ours (dense)", b, "dense"))
            runs += [("ours (SeenColumns)", b, "seen"), ("ours (command line)", b, "cli"),
                     ("VW --oaa", b, "vw")]  # fmt: skip
        rec = {r: {"fit": [], "wall": [], "rss": []} for r in runs}
        for rep in range(args.repeat + 1):  # the first: warm-up (compilation, page cache)
            for r in runs:
                label, b, kind = r
                model = str(tmp / f"{kind}{b}.model")
                cmd = [sys.executable, __file__, "--child", kind, str(b), str(train),
                       str(test), str(K), model]  # fmt: skip
                wall, out = _run(cmd, env)
                if rep == 0:
                    rec[r]["size"] = os.path.getsize(model) / 1e6
                    if "accuracy" in out:
                        rec[r]["accuracy"] = out["accuracy"]
                    continue
                rss = out["peak_mb"]
                rec[r]["wall"].append(wall)
                rec[r]["rss"].append(rss)
                rec[r]["fit"].append(out["fit_s"])
                print(f"{label} b={b}: fit {rec[r]['fit'][-1]:.2f} s, peak {rss:.0f} MB",
                      file=sys.stderr)  # fmt: skip
    print(f"\n20 newsgroups raw text as VW ({K} classes), one pass of PA-I against VW --oaa "
          f"{K}; {args.repeat} repeats after a warm-up, each run in its own process\n")  # fmt: skip
    print("| b | method | fit (s, median) | process wall (s, median) | peak memory (MB) | "
          "model file (MB) | test accuracy |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for r, v in rec.items():
        label, b, kind = r
        acc = f"{v['accuracy']:.4f}" if "accuracy" in v else "-"
        print(f"| {b} | {label} | {statistics.median(v['fit']):.2f} | "
              f"{statistics.median(v['wall']):.2f} | {max(v['rss']):.0f} | {v['size']:.1f} | "
              f"{acc} |")  # fmt: skip
    print(f"\nload average: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
