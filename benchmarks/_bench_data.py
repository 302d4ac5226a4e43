"""The benchmark's data: the shared data sets loaded once, in one fixed order, as float32 CSR."""

from __future__ import annotations

import bz2
import io
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

DATASETS = {
    "news20": {
        "train": "20newsgroups/20news_bydate_tfidf.train.svm.bz2",
        "test": "20newsgroups/20news_bydate_tfidf.test.svm.bz2",
        "n_features": 56438,
        "description": "20 newsgroups bydate, TF-IDF (sublinear tf, l2 rows), 20 classes",
    },
    "mnist": {
        "train": "mnist/mnist.scale.bz2",
        "test": "mnist/mnist.scale.t.bz2",
        "n_features": 784,
        "description": "MNIST, pixels / 255, 10 classes",
    },
}

QUICK_TRAIN_ROWS = 2000
QUICK_TEST_ROWS = 1000
QUICK_RIVER_ROWS = 300
WARMUP_ROWS = 50
MB = 1024.0 * 1024.0


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
def data_dir() -> Path:
    env = os.environ.get("ONLINELEARN_DATA")
    path = Path(env) if env else REPO_ROOT / ".." / "shared" / "data"
    if not path.is_dir():
        raise SystemExit(
            f"data directory {path} not found; set ONLINELEARN_DATA to the shared data folder"
        )
    return path


def _read_lines(path: Path) -> list[bytes]:
    text = bz2.decompress(path.read_bytes())
    return [line + b"\n" for line in text.splitlines() if line.strip()]


def _parse(lines: list[bytes], n_features: int):
    import numpy as np
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(io.BytesIO(b"".join(lines)), n_features=n_features, dtype=np.float64)
    return to_csr32(X), y.astype(np.int64)


#: dtype of the feature values every library receives (--dtype; ours learns weights of it)
VALUE_DTYPE = "float32"


def to_csr32(X):
    """CSR of VALUE_DTYPE values with int32 indices (scikit-learn's SGD refuses int64 ones)."""
    import numpy as np
    import scipy.sparse as sp

    X = sp.csr_matrix(X)
    return sp.csr_matrix(
        (
            np.ascontiguousarray(X.data, dtype=VALUE_DTYPE),
            X.indices.astype(np.int32),
            X.indptr.astype(np.int32),
        ),
        shape=X.shape,
    )


@dataclass
class Data:
    name: str
    n_features: int
    Xtr: object
    ytr: object
    Xte: object
    yte: object
    train_lines: list[bytes]
    test_lines: list[bytes]
    classes: object
    load_seconds: float
    read_seconds: float
    parse_seconds: float


def load_data(name: str, quick: bool, seed: int, keep_file_order: bool) -> Data:
    """Read the bz2 files once, put the training rows in one fixed random order, parse to CSR.

    The 20 newsgroups training file is sorted by class; a single unshuffled pass over it in file
    order ends on 500 examples of the last class and every learner then predicts mostly that class.
    So all learners get the *same* permuted order (and none shuffles on its own).
    """
    import numpy as np

    spec = DATASETS[name]
    root = data_dir()
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    train_lines = _read_lines(root / spec["train"])
    test_lines = _read_lines(root / spec["test"])
    t1 = time.perf_counter()
    if not keep_file_order:
        order = rng.permutation(len(train_lines))
        train_lines = [train_lines[i] for i in order]
    if quick:
        train_lines = train_lines[:QUICK_TRAIN_ROWS]
        pick = np.sort(rng.choice(len(test_lines), QUICK_TEST_ROWS, replace=False))
        test_lines = [test_lines[i] for i in pick]
    t2 = time.perf_counter()
    Xtr, ytr = _parse(train_lines, spec["n_features"])
    Xte, yte = _parse(test_lines, spec["n_features"])
    t3 = time.perf_counter()
    return Data(
        name=name,
        n_features=spec["n_features"],
        Xtr=Xtr,
        ytr=ytr,
        Xte=Xte,
        yte=yte,
        train_lines=train_lines,
        test_lines=test_lines,
        classes=np.unique(np.concatenate([ytr, yte])),
        load_seconds=(t1 - t0) + (t3 - t2),
        read_seconds=t1 - t0,
        parse_seconds=t3 - t2,
    )


def vw_line(line: bytes, label_index: dict, with_label: bool) -> str:
    """svmlight line ``y i:v ...`` -> VW line ``k | i:v ...`` with k in 1..K."""
    text = line.decode("ascii").split("#", 1)[0].strip()
    head, _, feats = text.partition(" ")
    if with_label:
        return f"{label_index[int(float(head))]} | {feats}"
    return f"| {feats}"


def csr_rows_as_dicts(X, n_rows: int) -> list[dict]:
    data, indices, indptr = X.data, X.indices, X.indptr
    rows = []
    for i in range(n_rows):
        a, b = indptr[i], indptr[i + 1]
        rows.append(dict(zip(indices[a:b].tolist(), data[a:b].tolist(), strict=True)))
    return rows
