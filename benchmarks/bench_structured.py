#!/usr/bin/env python
"""Speed of the structured and boosting families, side by side with their baselines.

Run from the repository root::

    python benchmarks/bench_structured.py            # UD EWT full, a9a / w8a / spambase full
    python benchmarks/bench_structured.py --quick    # subsamples (about a minute)

Tagging (UD English EWT, 2^18 hashed token features, one training epoch):

* training time of one epoch: ``SequenceTagger`` (PA, max loss: two Viterbi passes a sentence)
  against the per-token ``PassiveAggressiveClassifier`` (PA-I) on the same features;
* tagging throughput (tokens/s of predict on the test part): the compiled Viterbi, the
  per-token PA (no transitions), and a pure-Python Viterbi (NumPy emission scores, Python loops
  over positions and tags) with the same weights.

Boosting: ``PrimalDualBoost`` (compiled stumps, both criteria) against scikit-learn's
``AdaBoostClassifier(DecisionTreeClassifier(max_depth=1))`` at equal T, fit time and test
accuracy, numba compilation excluded (warm-up fit).  Each time is the median of ``--repeat``
runs.  Everything runs in one process; the numbers depend on the load of the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402


def _median_time(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def python_viterbi(E, Tr):
    """Viterbi with Python loops over positions and tags (E: (n, K) emission scores)."""
    n, K = E.shape
    delta = [E[0, k] + Tr[K, k] for k in range(K)]
    back = []
    for i in range(1, n):
        new, bp = [], []
        for k in range(K):
            best, arg = -np.inf, 0
            for j in range(K):
                s = delta[j] + Tr[j, k]
                if s > best:
                    best, arg = s, j
            new.append(best + E[i, k])
            bp.append(arg)
        delta = new
        back.append(bp)
    k = int(np.argmax(delta))
    path = [k]
    for bp in reversed(back):
        k = bp[k]
        path.append(k)
    return path[::-1]


def bench_tagging(data, quick, repeat):
    from onlinelearn import PassiveAggressiveClassifier
    from onlinelearn.structured import SequenceTagger, read_conllu, token_features

    S, Y = read_conllu(data / "ud_english_ewt" / "en_ewt-ud-train.conllu.xz")
    St, Yt = read_conllu(data / "ud_english_ewt" / "en_ewt-ud-test.conllu.xz")
    if quick:
        S, Y, St, Yt = S[:2000], Y[:2000], St[:500], Yt[:500]
    X, Xt = token_features(S), token_features(St)
    Xflat, yflat = sp.vstack(X).tocsr(), np.concatenate(Y)
    Xtflat = sp.vstack(Xt).tocsr()
    n_tok, n_test = Xflat.shape[0], Xtflat.shape[0]
    SequenceTagger(n_epochs=1).fit(X[:10], Y[:10])  # compile
    PassiveAggressiveClassifier(n_epochs=1).fit(Xflat[:100], yflat[:100])
    t_tag, tagger = _median_time(
        lambda: SequenceTagger("PA", n_epochs=1, shuffle=False).fit(X, Y), repeat
    )
    t_pa, pa = _median_time(
        lambda: PassiveAggressiveClassifier(variant="PA-I", C=0.1, n_epochs=1, shuffle=False)
        .fit(Xflat, yflat), repeat,
    )  # fmt: skip
    p_tag, _ = _median_time(lambda: tagger.predict(Xt), repeat)
    p_pa, _ = _median_time(lambda: pa.predict(Xtflat), repeat)
    W, Tr = tagger.coef_, tagger.transitions_
    n_py = 300 if not quick else 100
    sub = Xt[:n_py]
    t0 = time.perf_counter()
    for x in sub:
        python_viterbi(np.asarray(x @ W), Tr)
    p_py = time.perf_counter() - t0
    py_tokens = sum(x.shape[0] for x in sub)
    print(f"\n## Tagging: UD EWT, {len(S)} training sentences ({n_tok} tokens), "
          f"{n_test} test tokens\n")  # fmt: skip
    print("| | SequenceTagger (PA) | per-token PA-I | ratio |")
    print("|---|---|---|---|")
    print(f"| one training epoch (s) | {t_tag:.2f} | {t_pa:.2f} | {t_tag / t_pa:.2f} |")
    print(f"| training tokens/s | {n_tok / t_tag:,.0f} | {n_tok / t_pa:,.0f} | |")
    print("\n| tagger | tokens/s | vs pure-Python Viterbi |")
    print("|---|---|---|")
    py_tps = py_tokens / p_py
    for name, tps in (("compiled Viterbi (SequenceTagger.predict)", n_test / p_tag),
                      ("per-token PA-I predict (no transitions)", n_test / p_pa),
                      (f"pure-Python Viterbi ({n_py} sentences)", py_tps)):  # fmt: skip
        print(f"| {name} | {tps:,.0f} | {tps / py_tps:.1f}x |")


def bench_boosting(data, quick, repeat, T, names=("a9a", "w8a", "spambase")):
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    from onlinelearn import PrimalDualBoost
    from onlinelearn.experiments.boosting_bound import load_binary

    PrimalDualBoost(2).fit(np.array([[0.0], [1.0], [2.0]]), [0, 1, 1])
    PrimalDualBoost(2).fit(sp.csr_matrix(np.array([[0.0], [1.0], [2.0]])), [0, 1, 1])
    print(f"\n## Boosting: T = {T} stumps, fit time (median of {repeat}) and test accuracy\n")
    print("| data | input | PrimalDualBoost edge (s / acc) | PrimalDualBoost gini (s / acc) | "
          "sklearn AdaBoost (s / acc) | speed-up (gini vs sklearn) |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name in names:
        X, y, Xt, yt = load_binary(name, 5000 if quick else None, 0)
        inputs = [("sparse", X, Xt), ("dense", X.toarray(), Xt.toarray())] if sp.issparse(X) \
            else [("dense", X, Xt)]  # fmt: skip
        for kind, Xa, Xb in inputs:
            res = []
            for make in (lambda: PrimalDualBoost(T, criterion="edge"),
                         lambda: PrimalDualBoost(T, criterion="gini"),
                         lambda: AdaBoostClassifier(DecisionTreeClassifier(max_depth=1),
                                                    n_estimators=T, random_state=0)):  # fmt: skip
                t, clf = _median_time(lambda m=make, A=Xa, b=y: m().fit(A, b), repeat)
                res.append((t, clf.score(Xb, yt)))
            cells = " | ".join(f"{t:.2f} / {a:.4f}" for t, a in res)
            print(f"| {name} | {kind} {Xa.shape[0]}x{Xa.shape[1]} | {cells} | "
                  f"{res[2][0] / res[1][0]:.1f}x |")  # fmt: skip


def main(argv=None):
    from run import data_dir

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="subsamples")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per method (median)")
    p.add_argument("--rounds", type=int, default=100, help="boosting rounds T")
    p.add_argument("--only", choices=["tagging", "boosting"], default=None)
    p.add_argument(
        "--boost-data",
        nargs="+",
        default=["a9a", "w8a", "spambase"],
        help="data sets of the boosting part (a9a, w8a, binary PMLB names)",
    )
    args = p.parse_args(argv)
    data = data_dir()
    print(f"# bench_structured ({'quick' if args.quick else 'full'}; shared machine: "
          "times vary with its load)")  # fmt: skip
    if args.only in (None, "tagging"):
        bench_tagging(data, args.quick, args.repeat)
    if args.only in (None, "boosting"):
        bench_boosting(data, args.quick, args.repeat, args.rounds, args.boost_data)


if __name__ == "__main__":
    main()
