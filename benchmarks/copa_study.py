"""COPA against PA-I on every shared multiclass set: when is the confusion loss worth it?

For each set, ``fit`` (the learners' own epochs; shuffled, seeds 0..) and the test file (or a
fixed 30 % split, seed 0): accuracy, balanced accuracy and the confusion operator norm
||C||_2 of the test predictions (``onlinelearn.metrics.confusion_operator_norm``: the
row-normalised confusion matrix with a zero diagonal, the quantity COPA minimises).  Columns:

* ``PA-I``: ``PassiveAggressiveClassifier()`` (max-rival hinge, averaged, epochs until the
  training loss stops improving); ``PA-I 5 epochs``: as COPA, 5 fixed epochs;
* ``PA-I sq``: the max-rival squared hinge with the aggressive step (``OnlineLearner(loss=
  SquaredHinge())``), COPA's squared hinge without its sum over all rivals;
* ``COPA``: ``COPA()`` (all-rival squared hinge, Lee-Lin-Wahba-like, no class cost; 5 epochs,
  averaged, intercept b = 1), then one change at a time: 100 epochs, the last iterate, no
  intercept;
* ``COPA conf``: ``COPA(class_weight='confusion')`` (the paper's cost 1 / T_y^2; its C grid
  is shifted up by the cost's scale);
* ``COPA C=...``: COPA at other C.

    python benchmarks/copa_study.py [--sets dna pendigits ...] [--seeds 0] [--out FILE]

``--factorial`` runs instead COPA over loss (squared / hinge) x confusion cost (none /
1 / T_y^2) x intercept x averaging (16 columns) against PA-I, on the sets given (``toy``: the
COPA paper's Sec. 4 sample, 2500 / 2500; ``citeseer``, ``cora``: the node features of the
graph sets, stratified 70/30), and the diagnostics that explain the gap
(``--factorial --diagnose``): for PA-I and four COPA settings, on the test part, the confusion
norm ||C(h)|| of the predictions, the norm ||C_l(h)|| of COPA's surrogate (the hinge losses
of eq. (16), weights centred so that they sum to zero: argmax is unchanged), the mean number of
rivals with a positive loss, the largest column and row 2-norms of C(h) (where the operator
norm comes from) and the share of the errors that go to the most predicted wrong class.
With the cost 1 / T_y^2, C is multiplied by (n / Q)^2, so that a class of average size gets
the cost of the plain C (as ``onlinelearn reproduce imbalance``).

    python benchmarks/copa_study.py --factorial [--diagnose] [--sets toy vowel ...]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import _load, emit, mean_table  # noqa: E402
from sklearn.metrics import balanced_accuracy_score  # noqa: E402

from onlinelearn import COPA, OnlineLearner, PassiveAggressiveClassifier  # noqa: E402
from onlinelearn.framework import Aggressive, SquaredHinge  # noqa: E402
from onlinelearn.metrics import confusion_operator_norm  # noqa: E402

MULTICLASS = ["dna", "pendigits", "mnist", "news20", "segmentation", "shuttle", "vowel",
              "optdigits", "connect_4", "krkopt", "waveform_40", "texture", "sleep"]  # fmt: skip


def _learners(seed):
    return {
        "PA-I": PassiveAggressiveClassifier(random_state=seed),
        "PA-I 5 epochs": PassiveAggressiveClassifier(n_epochs=5, tol=None, random_state=seed),
        "PA-I sq": OnlineLearner(loss=SquaredHinge(), step=Aggressive(C=1.0), random_state=seed),
        "COPA": COPA(random_state=seed),
        "COPA 100 epochs": COPA(n_epochs=100, random_state=seed),
        "COPA last iterate": COPA(average=False, random_state=seed),
        "COPA no intercept": COPA(fit_intercept=False, random_state=seed),
        "COPA C=0.1": COPA(C=0.1, random_state=seed),
        "COPA C=0.01": COPA(C=0.01, random_state=seed),
        "COPA conf": COPA(class_weight="confusion", C=100.0, random_state=seed),
        "COPA conf C=1e4": COPA(class_weight="confusion", C=1e4, random_state=seed),
    }


COLUMNS = list(_learners(0))


FACTORIAL_SETS = ["toy", *MULTICLASS, "citeseer", "cora"]


def _load_any(name):
    """(X, y, X_test, y_test) of a study set: the shared sets, ``toy`` and the graph features."""
    if name == "toy":
        from onlinelearn.experiments.copa_toy import make_toy_sample

        X, y = make_toy_sample(5000, np.random.default_rng(0))
        return X[:2500], y[:2500], X[2500:], y[2500:]
    if name in ("citeseer", "cora"):
        import bz2

        from sklearn.datasets import load_svmlight_file
        from sklearn.model_selection import train_test_split

        from onlinelearn.datasets import shared_data_dir

        d = {"citeseer": 3703, "cora": 1433}[name]
        path = Path(shared_data_dir()) / name / f"{name}.features.svm.bz2"
        X, y = load_svmlight_file(bz2.open(path), n_features=d)
        keep = y >= 0  # citeseer: 15 nodes without a label
        X, y = X[keep], y[keep].astype(int)
        X, Xt, y, yt = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
        return X, y, Xt, yt
    return _load(name)


def _factorial(seed, n, Q):
    """PA-I and COPA over loss x cost x intercept x averaging (C = 1; x (n/Q)^2 with 1/T_y^2)."""
    out = {
        "PA-I": PassiveAggressiveClassifier(n_epochs=5, tol=None, random_state=seed),
        "PA-I no intercept": PassiveAggressiveClassifier(
            n_epochs=5, tol=None, fit_intercept=False, random_state=seed
        ),
        "PA-I last iterate": PassiveAggressiveClassifier(
            n_epochs=5, tol=None, average=False, random_state=seed
        ),
    }
    for loss in ("squared", "hinge"):
        for cost in (None, "confusion"):
            for fi in (True, False):
                for avg in (True, False):
                    name = (f"COPA {loss[:2]} {'conf' if cost else 'plain'} "
                            f"{'b' if fi else 'nob'} {'avg' if avg else 'last'}")  # fmt: skip
                    C = 1.0 if cost is None else (n / Q) ** 2
                    out[name] = COPA(C=C, loss=loss, class_weight=cost, fit_intercept=fi,
                                     average=avg, random_state=seed)  # fmt: skip
    return out


DIAGNOSED = ["PA-I", "COPA sq plain b avg", "COPA hi plain b avg", "COPA sq conf b avg",
             "COPA hi conf b avg"]  # fmt: skip


def _top_rival_share(S, codes, sq, C):
    """Mean share of COPA's dual step sum_q alpha*_q that goes to the highest-scoring rival, over
    the rows with a loss, if each row were learned by the model as it is (PA-I's own step puts
    all of it there)."""
    from onlinelearn._core.copa import copa_step

    Q = S.shape[1]
    alpha, idx, dual = np.zeros(Q), np.zeros(Q, dtype=np.int64), np.zeros(Q)
    shares = []
    for i in range(S.shape[0]):
        if copa_step(np.ascontiguousarray(S[i]), int(codes[i]), float(sq[i]), C, alpha, idx,
                     dual) > 0:  # fmt: skip
            riv = S[i].copy()
            riv[codes[i]] = -np.inf
            shares.append(dual[int(np.argmax(riv))] / dual.sum())
    return float(np.mean(shares)) if shares else 1.0


def _diagnose(est, Xt, yt, labels):
    """[||C||, ||C_l||, mean rivals with positive loss, max column norm, max row norm,
    share of the errors going to the most predicted wrong class, share of COPA's step on the
    top rival] on the test part."""
    from onlinelearn.metrics import (
        confusion_matrix_conditional,
        hinge_confusion_losses,
        online_confusion_risk,
        operator_norm,
    )

    W = np.asarray(est.coef_, dtype=float)
    c = np.asarray(est.intercept_, dtype=float).reshape(-1)
    W = W - W.mean(axis=0)  # the columns sum to zero; argmax is unchanged
    c = c - c.mean()
    S = np.asarray(Xt @ W.T) + c
    codes = np.searchsorted(labels, yt)
    L = hinge_confusion_losses(S, codes)
    pred = labels[np.argmax(S, axis=1)]
    Cm = confusion_matrix_conditional(yt, pred, labels=labels)
    wrong = pred[pred != yt]
    share = (np.unique(wrong, return_counts=True)[1].max() / len(wrong)) if len(wrong) else 0.0
    sq = np.asarray(Xt.multiply(Xt).sum(axis=1)).ravel() if hasattr(Xt, "multiply") else (
        np.einsum("ij,ij->i", Xt, Xt))  # fmt: skip
    if est.fit_intercept:
        sq = sq + 1.0
    return [
        operator_norm(Cm),
        operator_norm(online_confusion_risk(yt, L, labels)),
        float(np.mean(np.sum(L > 0, axis=1))),
        float(np.linalg.norm(Cm, axis=0).max()),
        float(np.linalg.norm(Cm, axis=1).max()),
        float(share),
        _top_rival_share(S, codes, sq, 1.0),
    ]


def factorial(args):
    raw, diag = {}, {}
    for name in args.sets:
        X, y, Xt, yt = _load_any(name)
        labels = np.unique(y)
        raw[name], diag[name] = {}, {}
        for seed in args.seeds:
            for col, est in _factorial(seed, X.shape[0], len(labels)).items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, y)
                pred = est.predict(Xt)
                row = [float(np.mean(pred == yt)), float(balanced_accuracy_score(yt, pred)),
                       float(confusion_operator_norm(yt, pred, labels=labels))]  # fmt: skip
                raw[name].setdefault(col, []).append(row)
                if args.diagnose and col in DIAGNOSED:
                    diag[name].setdefault(col, []).append(_diagnose(est, Xt, yt, labels))
                print(f"{name} {seed} {col}: acc {row[0]:.4f} ||C|| {row[2]:.3f}",
                      file=sys.stderr, flush=True)  # fmt: skip
    cols = list(_factorial(0, 10, 2))
    lines = []
    for title, i in (("accuracy", 0), ("confusion norm ||C||_2", 2)):
        lines += ["", f"**{title}**", ""] + _transposed(raw, cols, i)
    if args.diagnose:
        names = ["||C(h)||", "||C_l(h)||", "rivals with loss > 0", "max column norm",
                 "max row norm", "errors to the top wrong class",
                 "share of a COPA step (C = 1) on the top rival, at the model's weights"]
        for k, title in enumerate(names):
            lines += ["", f"**diagnostic: {title}**", ""] + mean_table(diag, DIAGNOSED, k, ".3f")
    emit("\n".join(lines).strip(), {"raw": raw, "diagnostics": diag}, args.out)
    return 0


def _transposed(raw, cols, index):
    """Markdown lines, one row per column (learner), one column per data set."""
    sets = list(raw)
    lines = ["| learner | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
    for c in cols:
        cells = [format(np.mean([r[index] for r in raw[s][c]]), ".3f") for s in sets]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=None)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--factorial", action="store_true")
    ap.add_argument("--diagnose", action="store_true")
    args = ap.parse_args(argv)
    if args.factorial:
        args.sets = args.sets or FACTORIAL_SETS
        return factorial(args)
    args.sets = args.sets or MULTICLASS
    raw = {}
    for name in args.sets:
        X, y, Xt, yt = _load(name)
        raw[name] = {c: [] for c in COLUMNS}
        for seed in args.seeds:
            for col, est in _learners(seed).items():
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(X, y)
                secs = time.perf_counter() - t
                pred = est.predict(Xt)
                norm = confusion_operator_norm(yt, pred, labels=np.unique(y))
                row = [float(np.mean(pred == yt)), float(balanced_accuracy_score(yt, pred)),
                       float(norm), secs]  # fmt: skip
                raw[name][col].append(row)
                print(f"{name} {seed} {col}: acc {row[0]:.4f} bal {row[1]:.4f} "
                      f"||C|| {row[2]:.3f} {secs:.1f}s", file=sys.stderr, flush=True)  # fmt: skip
    lines = []
    for title, i in (("accuracy", 0), ("balanced accuracy", 1), ("confusion norm ||C||_2", 2)):
        lines += ["", f"**{title}**", ""] + mean_table(raw, COLUMNS, i, ".3f")
    emit("\n".join(lines).strip(), raw, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
