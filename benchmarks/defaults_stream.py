"""One pass over a stream: our defaults against scikit-learn's, on every shared data set.

The protocol of a stream: the training rows in a seeded random order, one ``partial_fit``
call over them (every label given in ``classes``), then the accuracy on the test file (or a
fixed 30 % split, seed 0, for sets without one: a8a, w8a, PMLB).  Columns: our
``PassiveAggressiveClassifier`` and ``Perceptron`` with the averaging and intercept choices a
default could make, ``COPA``, and scikit-learn's ``PassiveAggressiveClassifier`` (as SGD with
``learning_rate='pa1'``, its replacement) and ``Perceptron`` with their defaults; the seconds of
the ``partial_fit`` call (after one warm-up call that compiles).

Besides the sets of ``benchmarks/defaults.py``, four more sparse ones, built here from the
shared raw data as a user would: ``news20_raw`` (the raw 20 newsgroups messages through
scikit-learn's ``HashingVectorizer``, 2^18 columns, l2 rows; the bydate split), ``ud_pos`` (each
token of UD English-EWT a row of ``onlinelearn.structured.text.token_features``, 2^18 hashed
columns, its UPOS tag the label; train / test files), ``cora`` and ``citeseer`` (the nodes' bags
of words, their labels, a fixed 30 % split).

    python benchmarks/defaults_stream.py [--sets news20 dna ...] [--seeds 0 1 2] [--out FILE]
                                         [--repeat 5] [--dtype float32]
                                         [--columns "ours PA()" "sklearn PA (SGD pa1)" ...]

``--columns`` measures only the named columns.  ``ours PA()`` is the default since
``intercept_scaling='auto'`` became it (b = 0.1 on text, 1 elsewhere); ``PA(b=1)`` is the
former default.  ``ours Perceptron()`` takes b from the first batch's typical value in a
stream (``intercept_scaling='fit'``: 10^floor(log10 r), at least 1); ``Perceptron(b=1)`` is its
former stream b.  The ``average_power=eta`` columns weigh round t by t^eta in the average
(0: the uniform average).
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
from defaults import SVMLIGHT, emit, mean_table  # noqa: E402
from defaults import _load as _load_shared_set  # noqa: E402
from sklearn import linear_model as sk  # noqa: E402

from onlinelearn import COPA, PassiveAggressiveClassifier, Perceptron  # noqa: E402
from onlinelearn.datasets import pmlb_names, shared_data_dir  # noqa: E402

EXTRA = ["news20_raw", "ud_pos", "cora", "citeseer"]


def _news20_raw(root):
    import tarfile

    from sklearn.feature_extraction.text import HashingVectorizer

    docs = {"train": ([], []), "test": ([], [])}
    with tarfile.open(root / "20newsgroups" / "20news-bydate.tar.xz") as tf:
        for m in tf:
            if m.isfile():
                top, group = m.name.split("/")[:2]
                split = docs["train" if "train" in top else "test"]
                split[0].append(tf.extractfile(m).read().decode("latin-1"))
                split[1].append(group)
    hv = HashingVectorizer(n_features=2**18, alternate_sign=False, norm="l2")
    (a, ya), (b, yb) = docs["train"], docs["test"]
    return hv.transform(a), np.array(ya), hv.transform(b), np.array(yb)


def _ud_pos(root):
    import scipy.sparse as sp

    from onlinelearn.structured.text import read_conllu, token_features

    out = []
    for split in ("train", "test"):
        sents, tags = read_conllu(root / "ud_english_ewt" / f"en_ewt-ud-{split}.conllu.xz")
        out += [sp.vstack(token_features(sents)).tocsr(), np.concatenate(tags)]
    return tuple(out)


def _bag_of_words(root, name):
    import lzma

    from sklearn.datasets import load_svmlight_file
    from sklearn.model_selection import train_test_split

    X, _ = load_svmlight_file(str(root / name / f"{name}.features.svm.bz2"))
    with lzma.open(root / name / f"{name}.labels.xz", "rt") as f:
        pairs = np.array([line.split() for line in f if line.strip()], dtype=np.int64)
    X = X.tocsr()[pairs[:, 0]]
    return tuple(train_test_split(X, pairs[:, 1], test_size=0.3, random_state=0)[i]
                 for i in (0, 2, 1, 3))  # fmt: skip


def _load(name):
    root = shared_data_dir()
    if name == "news20_raw":
        return _news20_raw(root)
    if name == "ud_pos":
        return _ud_pos(root)
    if name in ("cora", "citeseer"):
        return _bag_of_words(root, name)
    return _load_shared_set(name)


PA = PassiveAggressiveClassifier
#: the weights t^eta of the averaged hypothesis measured (``average_power``; 0 = uniform)
POWERS = (0, 1, 2, 3)


def _learners(seed):
    return {
        "ours PA()": PA(random_state=seed),
        "ours PA(average=False)": PA(average=False, random_state=seed),
        "ours PA(b=1)": PA(intercept_scaling=1.0, random_state=seed),
        "ours PA(b=1, average=False)": PA(
            intercept_scaling=1.0, average=False, random_state=seed
        ),
        "ours Perceptron()": Perceptron(random_state=seed),
        "ours Perceptron(average=False)": Perceptron(average=False, random_state=seed),
        "ours Perceptron(b='auto')": Perceptron(intercept_scaling="auto", random_state=seed),
        "ours Perceptron(b=1)": Perceptron(intercept_scaling=1.0, random_state=seed),
        "ours COPA()": COPA(random_state=seed),
        **{
            f"ours PA(average_power={eta})": PA(average_power=eta, random_state=seed)
            for eta in POWERS
        },
        **{
            f"ours Perceptron(average_power={eta})": Perceptron(
                average_power=eta, random_state=seed
            )
            for eta in POWERS
        },
        **{f"ours COPA(average_power={eta})": COPA(average_power=eta, random_state=seed)
           for eta in POWERS},  # fmt: skip
        "sklearn PA (SGD pa1)": sk.SGDClassifier(
            loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0, random_state=seed
        ),
        "sklearn Perceptron()": sk.Perceptron(random_state=seed),
    }


COLUMNS = list(_learners(0))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=SVMLIGHT + EXTRA + pmlb_names())
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--out", default=None)
    ap.add_argument("--repeat", type=int, default=1,
                    help="time each pass this many times, the columns in turn (the median)")
    ap.add_argument("--columns", nargs="+", default=COLUMNS, choices=COLUMNS)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                    help="the feature values' dtype (float32: the protocol of the issue's "
                         "news20 figures; scikit-learn's SGD learns float32 weights from it too)")
    args = ap.parse_args(argv)
    columns = [c for c in COLUMNS if c in args.columns]
    raw = {}
    for name in args.sets:
        X, y, Xt, yt = _load(name)
        X, Xt = X.astype(args.dtype), Xt.astype(args.dtype)
        classes = np.unique(y)
        raw[name] = {c: [] for c in columns}
        for seed in args.seeds:
            order = np.random.default_rng(seed).permutation(X.shape[0])
            Xs, ys = X[order], y[order]
            learners = {c: e for c, e in _learners(seed).items() if c in columns}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for est in learners.values():  # compile
                    type(est)(**est.get_params()).partial_fit(Xs[:50], ys[:50], classes=classes)
                times = {c: [] for c in learners}
                for _ in range(args.repeat):  # the columns in turn: a load slows them alike
                    for col, est in learners.items():
                        fresh = type(est)(**est.get_params())
                        t = time.perf_counter()
                        fresh.partial_fit(Xs, ys, classes=classes)
                        times[col].append(time.perf_counter() - t)
                        learners[col] = fresh
            for col, est in learners.items():
                acc = float(est.score(Xt, yt))
                secs = float(np.median(times[col]))
                raw[name][col].append([acc, secs])
                print(f"{name} seed {seed} {col}: {acc:.4f} {secs:.4f}s (median of "
                      f"{args.repeat})", file=sys.stderr, flush=True)  # fmt: skip
    lines = mean_table(raw, columns, 0, ".4f")
    lines += ["", f"Seconds of the one `partial_fit` pass (median over seeds of the median of "
              f"{args.repeat} runs)", ""]
    lines += mean_table(raw, columns, 1, ".3f", np.median)
    emit("\n".join(lines), raw, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
