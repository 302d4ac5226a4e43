"""``onlinelearn demo``: the main job on built-in data."""

from __future__ import annotations

import time

import numpy as np

from ._options import CLIError

_DEMO = [
    ("Perceptron (last iterate)", "Perceptron", {"average": False}),
    ("Perceptron (averaged)", "Perceptron", {}),
    ("PA-I (C=1, averaged)", "PassiveAggressiveClassifier", {"variant": "PA-I", "C": 1.0}),
    ("PA-II (C=1, averaged)", "PassiveAggressiveClassifier", {"variant": "PA-II", "C": 1.0}),
    ("Winnow", "Winnow", {}),
    ("p-norm Perceptron", "PNormPerceptron", {}),
    ("COPA (C=1, averaged)", "COPA", {"C": 1.0}),
    ("PA-I, last 2 dual variables", "DualAscentClassifier", {"step": "last-k", "k": 2}),
    ("AROW", "AROW", {}),
    ("SCW-I", "SCW", {}),
    ("weighted min-max (adaptive)", "WeightedMinMax", {"margin": "adaptive"}),
    ("logistic loss, PA step (framework)", "OnlineLearner", {"loss": "logistic"}),
]


def _cmd_demo(args) -> int:
    import onlinelearn
    from onlinelearn.datasets import load_dna

    if args.epochs < 1:
        raise CLIError("--epochs must be at least 1")
    if args.plot:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise CLIError(
                "--plot needs matplotlib: pip install 'onlinelearn[plot]' (or matplotlib)"
            ) from None
    X, y = load_dna("train")
    Xt, yt = load_dna("test")
    classes = np.unique(y)
    print(
        f"DNA (LIBSVM, shipped): {X.shape[0]} training and {Xt.shape[0]} test examples, "
        f"{X.shape[1]} binary features, classes {classes.tolist()}\n"
        f"online mistake rate: progressive validation, one pass over the training set; "
        f"test accuracy after {args.epochs} pass(es)\n"
    )
    import sys

    from tqdm import tqdm

    rows, curves, notes = [], [], []
    quiet = getattr(args, "quiet", False)
    for label, class_name, params in tqdm(_DEMO, desc="demo", unit=" learner", leave=False,
                                          file=sys.stderr,
                                          disable=True if quiet else None):  # fmt: skip
        cls = getattr(onlinelearn, class_name, None)
        if cls is None:
            notes.append(f"{label}: skipped ({class_name} is not available in this version)")
            continue
        try:
            # Warm-up on a few rows so that the timing below excludes numba compilation.
            cls(random_state=0, **params).partial_fit(X[:20], y[:20], classes=classes)
            est = cls(random_state=0, **params)
            t0 = time.perf_counter()
            pred = np.asarray(est.partial_fit_predict(X, y, classes=classes))
            for _ in range(args.epochs - 1):
                est.partial_fit(X, y)
            elapsed = time.perf_counter() - t0
            test_acc = float(np.mean(np.asarray(est.predict(Xt)) == yt))
        except Exception as exc:  # one failing learner must not hide the others
            notes.append(f"{label}: failed ({type(exc).__name__}: {exc})")
            continue
        wrong = pred != y
        rows.append((label, wrong.mean(), test_acc, elapsed))
        curves.append((label, np.cumsum(wrong) / np.arange(1, len(y) + 1)))
    if not rows:
        raise CLIError("no learner could be run: " + "; ".join(notes))
    width = max(len("learner"), max(len(r[0]) for r in rows))
    print(f"{'learner':<{width}}  {'online mistakes':>15}  {'test accuracy':>13}  {'time (s)':>8}")
    print(f"{'-' * width}  {'-' * 15}  {'-' * 13}  {'-' * 8}")
    for label, rate, acc, secs in rows:
        print(f"{label:<{width}}  {rate:>15.4f}  {acc:>13.4f}  {secs:>8.3f}")
    for note in notes:
        print(f"note: {note}")
    if args.plot:
        fig, ax = plt.subplots(figsize=(9, 4.5))
        t = np.arange(1, len(y) + 1)
        colors = plt.get_cmap("tab20").colors  # one colour per learner (tab10 repeats after 10)
        for i, (label, curve) in enumerate(curves):
            ax.plot(t, curve, label=label, color=colors[(2 * i) % 20 + (2 * i) // 20],
                    linestyle="-" if i < 10 else "--")  # fmt: skip
        ax.set_xscale("log")
        ax.set_xlabel("examples seen")
        ax.set_ylabel("cumulative mistake rate")
        ax.set_title("Progressive validation on DNA (training set, one pass)")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        plt.close(fig)
        print(f"\nplot written to {args.plot}")
    return 0


# -- argument parsing ---------------------------------------------------------------------------
