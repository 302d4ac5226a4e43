#!/usr/bin/env python
"""LabelRanker's defaults across the shared data sets: updates I / II / III x complexities
'euclidean' / 'entropy' x a grid of C (margin 1, intercept), on every multi-label set of the
shared folder and, as single-label rankings, its text, image and citation sets.

Two measurements per set and configuration, everything in one process:

1. **online**: one pass over the training rows in a fixed random order (seed 0; the files are
   grouped by class), progressive validation in batches of 64 rows: the scores of a batch come
   from the model before it (``decision_function``), then ``partial_fit_mistakes`` learns it
   row by row and returns the exact online mistakes.  Reported: the ranking loss of those
   scores (``onlinelearn.ranking.metrics.label_ranking_loss``; the first batch is scored by
   the empty model, ties, the same for every configuration) and the mistake rate;
2. **held-out** (sets with a test split): ``fit`` on the training rows with the defaults
   (5 epochs, shuffled, ``random_state=0``), the ranking loss of ``decision_function`` on the
   test rows.

Sets: ``enron`` (MULAN Enron, multi-label, train/test files), ``blogcatalog`` (multi-label
graph: the adjacency row of a node is its features, no test split), ``news20`` (TF-IDF),
``20news_words`` (all 18,846 raw messages as a binary bag of 173,753 words, the stream of
``onlinelearn reproduce message-folders``; no test split),
``dna``, ``pendigits``, ``mnist`` (the first 10,000 training rows, full test file), ``cora`` and
``citeseer`` (bag of words; test = the public split's 1,000 test nodes, train = the other
labelled nodes).

    python benchmarks/ranking_defaults.py [--sets enron news20 ...] [--C 0.001 0.01 ...]
                                          [--json results.json] [--report results.json ...]

``--report`` reads earlier JSON files (several: merged) and prints the tables of
``docs/ranking.md`` with the defaults chosen from them (``choose``).  Reads
``$ONLINELEARN_DATA`` (or ``../shared/data``); downloads nothing.
"""

from __future__ import annotations

import argparse
import bz2
import json
import lzma
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from sklearn.datasets import load_svmlight_file  # noqa: E402

from onlinelearn import LabelRanker  # noqa: E402
from onlinelearn.datasets import load_shared, shared_data_dir  # noqa: E402
from onlinelearn.ranking import metrics as M  # noqa: E402

GRID = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 3.0, 10.0)
CONFIGS = [(c, u) for c in ("euclidean", "entropy") for u in ("I", "II", "III")]
SETS = (
    "enron",
    "blogcatalog",
    "news20",
    "20news_words",
    "dna",
    "pendigits",
    "mnist",
    "cora",
    "citeseer",
)
BATCH = 64


# ------------------------------------------------------------------------------ the data
def _indicator(y, classes):
    """One label per row -> the indicator matrix over ``classes``."""
    return (np.asarray(y)[:, None] == np.asarray(classes)[None, :]).astype(np.int8)


def _enron(root):
    out = []
    for split in ("train", "test"):
        X, labels = load_svmlight_file(
            root / f"enron_multilabel/enron.{split}.svm.bz2", n_features=1001, multilabel=True
        )
        Y = np.zeros((X.shape[0], 53), dtype=np.int8)
        for i, lab in enumerate(labels):
            Y[i, [int(v) for v in lab]] = 1
        out += [sp.csr_matrix(X), Y]
    return (*out, "multi-label e-mail, binary bag of words")


def _blogcatalog(root):
    from scipy.io import loadmat

    mat = loadmat(root / "blogcatalog/blogcatalog.mat")
    X = sp.csr_matrix(mat["network"], dtype=np.float64)
    Y = np.asarray(sp.csr_matrix(mat["group"]).todense(), dtype=np.int8)
    return X, Y, None, None, "multi-label graph, adjacency rows as features"


def _svm(name, n_train=None):
    def load(root):
        X, y = load_shared(name)
        Xt, yt = load_shared(name, "test")
        if n_train is not None:
            X, y = X[:n_train], y[:n_train]
        classes = np.unique(np.concatenate([y, yt]))
        return X, _indicator(y, classes), Xt, _indicator(yt, classes), "single-label"

    return load


def _planetoid(name):
    def load(root):
        with bz2.open(root / f"{name}/{name}.features.svm.bz2", "rb") as f:
            X, y = load_svmlight_file(f, n_features={"cora": 1433, "citeseer": 3703}[name])
        with lzma.open(root / f"{name}/{name}.split.xz", "rt") as f:
            rows = (ln.split() for ln in f if not ln.startswith("#"))
            split = {p[0]: [int(v) for v in p[1:]] for p in rows if p}
        test = np.zeros(X.shape[0], bool)
        test[split["test"]] = True
        labelled = y >= 0
        classes = np.unique(y[labelled])
        X = sp.csr_matrix(X)
        tr, te = labelled & ~test, labelled & test
        return (X[tr], _indicator(y[tr], classes), X[te], _indicator(y[te], classes),
                "single-label citation graph, bag of words")  # fmt: skip

    return load


def _news20_words(root):
    from onlinelearn.experiments.message_folders import load_20news_stream

    X, Y = load_20news_stream(root)
    return (
        sp.csr_matrix(X, dtype=np.float64),
        np.asarray(Y, dtype=np.int8),
        None,
        None,
        ("single-label, the raw messages as a binary bag of words (the message-folders stream)"),
    )


LOADERS = {
    "enron": _enron,
    "20news_words": _news20_words,
    "blogcatalog": _blogcatalog,
    "news20": _svm("news20"),
    "dna": _svm("dna"),
    "pendigits": _svm("pendigits"),
    "mnist": _svm("mnist", n_train=10_000),
    "cora": _planetoid("cora"),
    "citeseer": _planetoid("citeseer"),
}


# ------------------------------------------------------------------------------ the measures
def online(X, Y, **params):
    """(ranking loss of the progressive scores, mistake rate, seconds) of one pass."""
    est = LabelRanker(**params)
    K = Y.shape[1]
    losses, mistakes = [], []
    t0 = time.perf_counter()
    for i in range(0, X.shape[0], BATCH):
        Xb, Yb = X[i : i + BATCH], Y[i : i + BATCH]
        S = est.decision_function(Xb) if i else np.zeros((Xb.shape[0], K))
        losses.append(M.label_ranking_loss(Yb, S) * Xb.shape[0])
        mistakes.append(est.partial_fit_mistakes(Xb, Yb, classes=np.arange(K)).sum())
    seconds = time.perf_counter() - t0
    return float(np.sum(losses) / X.shape[0]), float(np.sum(mistakes) / X.shape[0]), seconds


def held_out(X, Y, Xt, Yt, **params):
    est = LabelRanker(random_state=0, **params).fit(X, Y, classes=np.arange(Y.shape[1]))
    return float(M.label_ranking_loss(Yt, est.decision_function(Xt)))


def measure(name, root, grid, log):
    X, Y, Xt, Yt, what = LOADERS[name](root)
    order = np.random.default_rng(0).permutation(X.shape[0])
    Xo, Yo = X[order], Y[order]
    res = {"n": int(X.shape[0]), "n_test": None if Xt is None else int(Xt.shape[0]),
           "d": int(X.shape[1]), "K": int(Y.shape[1]), "what": what,
           "cardinality": float(Y.sum(1).mean()), "runs": []}  # fmt: skip
    for complexity, update in CONFIGS:
        for C in grid:
            p = {"complexity": complexity, "update": update, "C": C}
            loss, mist, sec = online(Xo, Yo, **p)
            test = None if Xt is None else held_out(X, Y, Xt, Yt, **p)
            res["runs"].append({**p, "online": loss, "mistakes": mist, "test": test,
                                "seconds": sec})  # fmt: skip
            log(f"{name} {complexity} {update} C={C:g}: online {loss:.4f} mistakes {mist:.4f} "
                f"test {test if test is None else round(test, 4)} ({sec:.1f} s)")  # fmt: skip
    return res


# ------------------------------------------------------------------------------ the choice
def table(results, metric):
    """{set: {(complexity, update): {C: loss}}} of one metric ('online' or 'test')."""
    out = {}
    for name, res in results.items():
        for r in res["runs"]:
            if r[metric] is not None:
                out.setdefault(name, {}).setdefault((r["complexity"], r["update"]), {})[r["C"]] = r[
                    metric
                ]
    return out


#: the spread of these single runs: update I with 'euclidean' does not depend on C in exact
#: arithmetic, yet its losses over the grid differ by up to this much (ties broken by rounding)
NOISE = 0.005
#: the default before this measurement (kept unless another C wins by more than NOISE)
OLD_C = 0.01


def gaps(results, complexity, update="III"):
    """{C: [gap of (complexity, update, C) to the best loss of that complexity, for every set
    and metric]}."""
    out = {}
    for metric in ("online", "test"):
        for t in table(results, metric).values():
            best = min(v for (c, _), by_c in t.items() if c == complexity for v in by_c.values())
            for C, v in t[(complexity, update)].items():
                out.setdefault(C, []).append(v - best)
    return out


def choose(results, update="III"):
    """Per complexity, the C of the grid whose worst gap (over the sets and both metrics) to
    the best loss of that complexity is smallest, the old default kept when within NOISE of it;
    {complexity: (C, its worst gap, its mean gap)}."""
    chosen = {}
    for complexity in ("euclidean", "entropy"):
        g = gaps(results, complexity, update)
        worst = {C: max(v) for C, v in g.items()}
        C = min(worst, key=lambda c: (worst[c], -c))
        if OLD_C in worst and worst[OLD_C] <= worst[C] + NOISE:
            C = OLD_C
        chosen[complexity] = (C, worst[C], float(np.mean(g[C])))
    return chosen


def report(results, defaults):
    """The Markdown tables of docs/ranking.md: per set and metric, each configuration's loss at
    the default C of its complexity, its best C of the grid, and the gaps of the two update III
    defaults to the best of their complexity (and of the default learner to the best of all)."""
    lines = []
    for metric, title in (("online", "online ranking loss, one pass"),
                          ("test", "held-out ranking loss after fit")):  # fmt: skip
        tab = table(results, metric)
        if not tab:
            continue
        lines += [f"**{title}**: each configuration's loss at the default C of its complexity "
                  "(best C of the grid and its loss in brackets; bold: the best of the row)", "",
                  "| set | n | d | K | " + " | ".join(f"{c[:3]}. {u}" for c, u in CONFIGS)
                  + " | default - best | entropy III default - best entropy |",
                  "|---|---|---|---|" + "---|" * len(CONFIGS) + "---|---|"]  # fmt: skip
        for name in SETS:
            if name not in tab:
                continue
            res = results[name]
            t = tab[name]
            cells = []
            best_all = min(v for by_c in t.values() for v in by_c.values())
            best_ent = min(v for (c, _), by_c in t.items() if c == "entropy" for v in by_c.values())
            for c, u in CONFIGS:
                by_c = t[(c, u)]
                Cb = min(by_c, key=by_c.get)
                cell = f"{by_c[defaults[c]]:.4f} ({by_c[Cb]:.4f}, {Cb:g})"
                cells.append(f"**{cell}**" if by_c[Cb] == best_all else cell)
            gap = t[("euclidean", "III")][defaults["euclidean"]] - best_all
            gap_e = t[("entropy", "III")][defaults["entropy"]] - best_ent
            n = res["n"] if metric == "online" else f"{res['n']}/{res['n_test']}"
            lines.append(f"| {name} | {n} | {res['d']} | {res['K']} | " + " | ".join(cells)
                         + f" | {gap:+.4f} | {gap_e:+.4f} |")  # fmt: skip
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--C", nargs="+", type=float, default=list(GRID))
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--report", nargs="+", help="JSON files of earlier runs: print the tables")
    args = ap.parse_args(argv)
    if args.report:
        results = {}
        for path in args.report:  # the runs of a set in several files are merged
            for name, res in json.loads(Path(path).read_text()).items():
                if name in results:
                    res = dict(res, runs=results[name]["runs"] + res["runs"])
                results[name] = res
        chosen = choose(results)
        print("chosen for update III (C, worst gap, mean gap over sets and metrics):", chosen)
        for complexity in ("euclidean", "entropy"):
            for C, g in sorted(gaps(results, complexity).items()):
                print(f"  {complexity} C={C:g}: worst {max(g):.4f} mean {np.mean(g):.4f}")
        print(report(results, {c: C for c, (C, *_) in chosen.items()}))
        return 0
    root = shared_data_dir()
    if root is None:
        raise SystemExit("no shared data folder: set ONLINELEARN_DATA")
    results = {}
    for name in args.sets:
        results[name] = measure(name, root, args.C, lambda s: print(s, file=sys.stderr, flush=True))
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
