"""The boosting bound of thesis ch. 6 on real data, and the booster against scikit-learn.

What
    For each data set and each number of rounds T: the training error of
    :class:`onlinelearn.PrimalDualBoost` (aggressive step = AdaBoost; stumps chosen by largest
    edge, and by Gini as scikit-learn's depth-1 tree does), the smallest measured edge
    gamma = min_t gamma_t, the bound exp(-2 gamma^2 T) and the sharper exp(-2 sum_t gamma_t^2),
    the test accuracy, and the same for ``sklearn.ensemble.AdaBoostClassifier`` with depth-1
    trees (SAMME, which is discrete AdaBoost on two classes), with both fit times.

Data sets
    ``a9a`` (train/test files), ``w8a`` (one file: 70/30 seeded split), PMLB ``spambase`` and
    ``mushroom`` (binary; 70/30 seeded split).  ``max_rows`` subsamples the training part.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

DEFAULT_DATASETS = ("a9a", "w8a", "spambase", "mushroom")


def load_binary(name, max_rows=None, seed=0):
    """(X_train, y_train, X_test, y_test) of a binary shared data set."""
    from sklearn.model_selection import train_test_split

    from ..datasets import load_pmlb, load_shared

    if name == "a9a":
        X, y = load_shared("a9a", "train")
        Xt, yt = load_shared("a9a", "test")
    else:
        if name == "w8a":
            X, y = load_shared("w8a", "train")
        else:
            X, y = load_pmlb(name)
        X, Xt, y, yt = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
    if max_rows is not None and X.shape[0] > max_rows:
        rng = np.random.default_rng(seed)
        keep = np.sort(rng.choice(X.shape[0], max_rows, replace=False))
        X, y = X[keep], y[keep]
    return X, y, Xt, yt


@dataclass
class BoostResult:
    settings: dict
    rows: list = field(default_factory=list)

    def format_table(self):
        head = (
            "| data | T | learner | train error | min gamma_t | exp(-2 gamma^2 T) | "
            "exp(-2 sum gamma_t^2) | test accuracy | fit s |"
        )
        lines = [head, "|---|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            g = "" if r["gamma"] is None else f"{r['gamma']:.4f}"
            b = "" if r["bound"] is None else f"{r['bound']:.4f}"
            b2 = "" if r["bound_sum"] is None else f"{r['bound_sum']:.4f}"
            lines.append(
                f"| {r['data']} | {r['T']} | {r['learner']} | {r['train_error']:.4f} | {g} | "
                f"{b} | {b2} | {r['test_accuracy']:.4f} | {r['fit_s']:.2f} |"
            )
        return "\n".join(lines)


def run_boosting_bound(
    datasets=DEFAULT_DATASETS, rounds=(10, 50, 200), max_rows=None, seed=0,
    progress=lambda s: None,
):  # fmt: skip
    from sklearn.ensemble import AdaBoostClassifier
    from sklearn.tree import DecisionTreeClassifier

    from .. import PrimalDualBoost

    res = BoostResult(settings={"rounds": list(rounds), "max_rows": max_rows, "seed": seed})
    PrimalDualBoost(2).fit(np.array([[0.0], [1.0], [2.0]]), [0, 1, 1])  # compile
    for name in datasets:
        X, y, Xt, yt = load_binary(name, max_rows, seed)
        progress(f"{name}: {X.shape[0]} x {X.shape[1]} training rows")
        for T in rounds:
            for crit in ("edge", "gini"):
                t = time.perf_counter()
                clf = PrimalDualBoost(T, criterion=crit).fit(X, y)
                fit_s = time.perf_counter() - t
                gamma = float(clf.edges_.min())
                res.rows.append({
                    "data": name, "T": T, "learner": f"PrimalDualBoost ({crit})",
                    "train_error": float(clf.train_errors_[-1]), "gamma": gamma,
                    "bound": math.exp(-2 * gamma**2 * clf.n_rounds_),
                    "bound_sum": math.exp(-2 * float(np.sum(clf.edges_**2))),
                    "test_accuracy": clf.score(Xt, yt), "fit_s": fit_s,
                })  # fmt: skip
            t = time.perf_counter()
            sk = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=T,
                                    random_state=seed).fit(X, y)  # fmt: skip
            fit_s = time.perf_counter() - t
            res.rows.append({
                "data": name, "T": T, "learner": "sklearn AdaBoost (stumps)",
                "train_error": 1.0 - sk.score(X, y), "gamma": None, "bound": None,
                "bound_sum": None, "test_accuracy": sk.score(Xt, yt), "fit_s": fit_s,
            })  # fmt: skip
            progress(f"{name} T={T} done")
    return res
