"""How many columns a COPA update moves: the size of its active set I*, on every shared set.

COPA's update (Ralaivola 2012, eq. (24)) is ``w_q += (s_alpha/Q - alpha*_q) x`` for every class
q: the true class and the inactive rivals all move by the common ``s_alpha/Q``, the |I*| active
rivals by their own coefficient.  Keeping the common term as one shared vector (issue 10,
"COPA's shared term") would make an update touch |I*| + 1 columns instead of Q, and make every
score one column longer (``<w_q, x> = <v_q, x> + <z, x>``).  It pays only where |I*| + 1 is
well below Q.  This script measures |I*| on the rounds that update.

For each shared data set with at least three classes: ``COPA(average=False, n_epochs=5,
shuffle=False, dtype=float64)`` (the default C, intercept and epochs, last iterate: averaging
changes no update) on the training rows in one fixed random order (seed 0), and the same rounds
replayed here with the library's own ``copa_step``, counting |I*| per round.  The replay's
weights must equal the estimator's (``assert``, relative 1e-9), so the counts are COPA's own.

    python benchmarks/copa_active_set.py [--sets mnist news20 ...]

Reads ``$ONLINELEARN_DATA`` (or ``../shared/data``); prints a Markdown table.  A few minutes.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from defaults import SVMLIGHT, _load  # noqa: E402

from onlinelearn import COPA  # noqa: E402
from onlinelearn._core.copa import copa_step  # noqa: E402
from onlinelearn.datasets import pmlb_names  # noqa: E402

EPOCHS = 5


@njit(cache=False)
def replay(data, indices, indptr, y, K, d, b, epochs, C):
    """COPA's last iterate over the rows in file order, ``epochs`` times; returns the weights
    (d+1 rows, the last the intercept's) and the count of rounds per |I*| (index 0: passive)."""
    th = np.zeros((d + 1, K))
    sc = np.zeros(K)
    al = np.zeros(K)
    wi = np.zeros(K, dtype=np.int64)
    wv = np.zeros(K)
    hist = np.zeros(K, dtype=np.int64)
    for _ in range(epochs):
        for i in range(indptr.shape[0] - 1):
            sq = b * b
            for k in range(K):
                sc[k] = b * th[d, k]
            for q in range(indptr[i], indptr[i + 1]):
                j = indices[q]
                v = data[q]
                sq += v * v
                for k in range(K):
                    sc[k] += th[j, k] * v
            n_act = copa_step(sc, y[i], sq, C, al, wi, wv)
            hist[n_act] += 1
            if n_act > 0:
                for q in range(indptr[i], indptr[i + 1]):
                    j = indices[q]
                    v = data[q]
                    for k in range(K):
                        th[j, k] += al[k] * v
                for k in range(K):
                    th[d, k] += al[k] * b
    return th, hist


def measure(name):
    X, y, _, _ = _load(name)
    X = sp.csr_matrix(X, dtype=np.float64)
    classes, codes = np.unique(y, return_inverse=True)
    K = len(classes)
    if K < 3:
        return None
    order = np.random.default_rng(0).permutation(X.shape[0])
    X, codes, y = X[order], codes[order].astype(np.int64), np.asarray(y)[order]
    est = COPA(average=False, n_epochs=EPOCHS, shuffle=False, dtype=np.float64).fit(X, y)
    b = float(est.intercept_scaling)
    th, hist = replay(X.data, X.indices, X.indptr, codes, K, X.shape[1], b, EPOCHS, est.C)
    # the replay is COPA's own trajectory: same weights as the estimator's
    W = np.vstack([est.coef_.T, est.intercept_[None, :] / b])
    assert np.allclose(th, W, rtol=1e-9, atol=1e-12 * np.abs(W).max()), name
    updates = int(hist[1:].sum())
    mean_act = float((np.arange(K) * hist).sum()) / max(updates, 1)
    return {
        "set": name,
        "Q": K,
        "rounds": int(hist.sum()),
        "updates": updates,
        "mean |I*|": mean_act,
        "share": (mean_act + 1.0) / K,
        "full": float(hist[K - 1]) / max(updates, 1),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="*", default=SVMLIGHT + list(pmlb_names()))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = [r for r in map(measure, args.sets) if r is not None]
    print(f"COPA, default C, intercept and {EPOCHS} epochs, last iterate; updating rounds.\n")
    print("| data set | Q | updates / rounds | mean \\|I*\\| | all Q-1 rivals active | "
          "(\\|I*\\|+1) / Q: columns a shared-term update moves |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        act = f"{r['mean |I*|']:.2f} of {r['Q'] - 1}"
        print(f"| {r['set']} | {r['Q']} | {r['updates']} / {r['rounds']} | {act} | "
              f"{r['full']:.0%} | {r['share']:.2f} |")  # fmt: skip
    shares = [r["share"] for r in rows]
    print(f"\nShare of columns moved with the shared term: min {min(shares):.2f}, "
          f"median {float(np.median(shares)):.2f} over {len(rows)} sets.")  # fmt: skip


if __name__ == "__main__":
    main()
