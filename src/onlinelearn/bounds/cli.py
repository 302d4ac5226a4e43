"""``python -m onlinelearn.bounds``: :func:`report` on a shared data set."""

from __future__ import annotations

import numpy as np

from .mistakes import report

_LEARNERS = {
    "perceptron": lambda: _ol().Perceptron(),
    "pa1": lambda: _ol().PassiveAggressiveClassifier(variant="PA-I", C=0.1),
    "winnow": lambda: _ol().Winnow(eta=0.5),
    "copa": lambda: _ol().COPA(),
    "pnorm": lambda: _ol().PNormPerceptron(),
    "pa": lambda: _ol().PassiveAggressiveClassifier(variant="PA"),
    "pa2": lambda: _ol().PassiveAggressiveClassifier(variant="PA-II", C=0.1),
    "lipschitz": lambda: _tuned("LipschitzTuned", "Hinge", U=1.0),
    "losstuned": lambda: _tuned("LossTuned", "SquaredHinge", beta1=1.0, beta2=1.0),
    "minmax": lambda: _ol().WeightedMinMax(),
}

#: the learners :func:`report` covers, as the help texts name them (one place, so the lists of
#: the CLI, ``onlinelearn report --bounds`` and the benchmark do not drift; a test checks that
#: every ``_LEARNERS`` entry is named here)
COVERED = (
    "Perceptron", "PNormPerceptron", "PassiveAggressiveClassifier (PA, PA-I, PA-II)", "Winnow",
    "COPA", "OnlineLearner with a LipschitzTuned or LossTuned step",
    "WeightedMinMax (full covariance)",
)  # fmt: skip


def _tuned(step, loss, **params):
    """OnlineLearner with a self-tuning step (Euclidean link, margin 1; thesis Sec. 3.5)."""
    from .. import framework as F

    return _ol().OnlineLearner(loss=getattr(F, loss)(1.0), step=getattr(F, step)(**params),
                               average=False, tol=None)  # fmt: skip


def _ol():
    import onlinelearn

    return onlinelearn


def main(argv=None):
    """``python -m onlinelearn.bounds DATASET [--learner perceptron|pnorm|pa|pa1|pa2|winnow|copa|
    lipschitz|losstuned|minmax]
    [--rows N] [--seed S] [--plot FILE.png] [--conversion average|last|validation]
    [--delta D]``: :func:`report` on a shared data set (its training split; N rows drawn at
    random with seed S, in that order).  COPA's observed value is measured on N rows of the
    test split drawn the same way (the training split's other rows for the sets without one).
    With ``--conversion``: :func:`onlinelearn.bounds.online_to_batch` instead (thesis App. B.3,
    i.i.d. rows) on the same N rows, the training split's next N rows as the validation set and
    the next N as held-out rows (the i.i.d. premise: not the test split)."""
    import argparse

    from ..datasets import load_shared

    ap = argparse.ArgumentParser(prog="python -m onlinelearn.bounds", description=main.__doc__)
    ap.add_argument("dataset")
    ap.add_argument("--learner", choices=sorted(_LEARNERS), default="perceptron")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", default=None, metavar="FILE.png")
    ap.add_argument("--conversion", choices=("average", "last", "validation"), default=None)
    ap.add_argument("--delta", type=float, default=0.05)
    args = ap.parse_args(argv)
    X, y = load_shared(args.dataset)
    perm = np.random.default_rng(args.seed).permutation(X.shape[0])
    rows = perm[: args.rows]
    if args.conversion:
        from .batch import online_to_batch

        y = np.asarray(y)
        val, held = perm[args.rows : 2 * args.rows], perm[2 * args.rows : 3 * args.rows]
        kw = {"X_val": X[val], "y_val": y[val]} if args.conversion == "validation" else {}
        online_to_batch(_LEARNERS[args.learner](), X[rows], y[rows], conversion=args.conversion,
                        delta=args.delta, X_test=X[held], y_test=y[held], **kw)  # fmt: skip
        return 0
    held = {}
    if args.learner == "copa":
        try:
            Xt, yt = load_shared(args.dataset, "test")
            test_rows = np.random.default_rng(args.seed).permutation(Xt.shape[0])[: args.rows]
        except (FileNotFoundError, ValueError, KeyError):
            Xt, yt, test_rows = X, y, perm[args.rows : 2 * args.rows]
        held = {"X_test": Xt[test_rows], "y_test": np.asarray(yt)[test_rows]}
    report(_LEARNERS[args.learner](), X[rows], np.asarray(y)[rows], plot_to=args.plot, **held)
    return 0
