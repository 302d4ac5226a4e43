"""The kept dual of the kernel online learners: its cost and the certificate it gives.

    python benchmarks/bench_kernel_dual.py [--rows 2000] [--repeat 7]

* cost: one epoch of KernelPassiveAggressive (PA-I, RBF) and KernelPerceptron over the first
  N rows of dna (train, file order, ``shuffle=False``), the pass with the dual kept against the
  same pass told not to keep it (the estimator's ``_keeps_dual`` answering False), interleaved
  in one process; median and min wall clock of each;
* certificate: after that epoch, D = ``dual_objective_``, the primal P of the current and of
  the averaged hypothesis on the same rounds (P(f) = 1/2 ||f||_H^2 + sum_t C_t [gamma -
  margin_t(f)]_+, evaluated here from the kernel Gram of the support vectors), and the gap
  P(f_avg) - D >= 0: how far the averaged hypothesis is, at most, from the batch optimum.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from onlinelearn import KernelPassiveAggressive, KernelPerceptron  # noqa: E402
from onlinelearn.datasets import load_dna  # noqa: E402
from onlinelearn.kernels import RBF  # noqa: E402


def _learners():
    return {
        "KernelPassiveAggressive PA-I C=0.1": lambda: KernelPassiveAggressive(
            RBF(gamma=0.02), variant="PA-I", C=0.1, n_epochs=1, shuffle=False),
        "KernelPerceptron": lambda: KernelPerceptron(RBF(gamma=0.02), n_epochs=1,
                                                     shuffle=False),
    }  # fmt: skip


def primal(est, X, codes, coef, C):
    """P(f) over the rounds (X, codes) with unit weights, f = sum_s coef_s (k(x_s, .) + b^2)."""
    SV = est.support_vectors_
    SV = SV.toarray() if hasattr(SV, "toarray") else SV
    k = est._kernel
    S = (k(X, SV) + est._b2) @ coef
    norm2 = float(np.einsum("sk,st,tk->", coef, k(SV, SV) + est._b2, coef))
    if coef.shape[1] == 1:
        m = np.where(codes == 1, 1.0, -1.0) * S[:, 0]
    else:
        S2 = S.copy()
        S2[np.arange(len(codes)), codes] = -np.inf
        m = S[np.arange(len(codes)), codes] - S2.max(1)
    return 0.5 * norm2 + C * float(np.maximum(est._dual_margin() - m, 0.0).sum())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args(argv)
    X, y = load_dna("train")
    X = X[: a.rows].toarray() if hasattr(X, "toarray") else X[: a.rows]
    y = np.asarray(y)[: a.rows]
    print(f"dna train, first {len(y)} rows, one epoch, file order; {a.repeat} repeats")
    print("| learner | dual off: median / min ms | dual on: median / min ms | on / off "
          "(medians) | SV | D | P(f_last) | P(f_avg) | gap P(f_avg) - D |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, make in _learners().items():
        times = {False: [], True: []}
        for _ in range(a.repeat + 1):  # the first repeat compiles: dropped
            for keep in (False, True):
                est = make()
                if not keep:
                    est._keeps_dual = lambda: False
                t0 = time.perf_counter()
                est.fit(X, y)
                times[keep].append(time.perf_counter() - t0)
        est = make().fit(X, y)
        codes = np.searchsorted(est.classes_, y)
        C = est.C if isinstance(est, KernelPassiveAggressive) else 1.0
        n = est._n_sv
        p_last = primal(est, X, codes, est._coef[:n], C)
        p_avg = primal(est, X, codes, est._coef_in_use(), C)
        D = est.dual_objective_
        off = [1e3 * t for t in times[False][1:]]
        on = [1e3 * t for t in times[True][1:]]
        print(f"| {name} | {statistics.median(off):.1f} / {min(off):.1f} | "
              f"{statistics.median(on):.1f} / {min(on):.1f} | "
              f"{statistics.median(on) / statistics.median(off):.3f} | {n} | {D:.6g} | "
              f"{p_last:.6g} | {p_avg:.6g} | {p_avg - D:.6g} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
