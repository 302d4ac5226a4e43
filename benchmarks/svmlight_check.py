"""Compare onlinelearn's compiled svmlight parser with scikit-learn's on every shared svmlight file.

Whole files (the test suite compares a prefix of each): the CSR arrays bit for bit (float64 and
float32) and the labels; also the parse time of each.  Usage::

    python benchmarks/svmlight_check.py [--dtype float64 float32]

Reads ``$ONLINELEARN_DATA`` (or ``../shared/data``).  Prints one Markdown row per file and
exits with status 1 if any file differs.
"""

from __future__ import annotations

import argparse
import bz2
import io
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from onlinelearn.datasets import SHARED_SVMLIGHT_FILES, shared_data_dir  # noqa: E402
from onlinelearn.io import load_svmlight  # noqa: E402

FILES = list(SHARED_SVMLIGHT_FILES)


def _equal(a, b, multilabel):
    (X, y), (X2, y2) = a, b
    X2 = sp.csr_matrix(X2)
    same = (
        X.shape == X2.shape
        and X.dtype == X2.dtype
        and np.array_equal(X.indptr, X2.indptr)
        and np.array_equal(X.indices, X2.indices)
        and np.array_equal(X.data.view(np.uint8), X2.data.view(np.uint8))
    )
    return same and (list(y) == list(y2) if multilabel else np.array_equal(y, y2))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", nargs="+", default=["float64", "float32"])
    args = ap.parse_args(argv)
    root = shared_data_dir()
    if root is None:
        print("no shared data folder: set ONLINELEARN_DATA", file=sys.stderr)
        return 2
    print("| file | rows | MB (text) | identical | ours s | scikit-learn s |")
    print("|---|---|---|---|---|---|")
    bad = 0
    for rel, d, ml in FILES:
        path = root / rel
        if not path.is_file():
            print(f"| {rel} | missing | | | | |")
            continue
        with bz2.open(path, "rb") as f:
            text = f.read()  # parse from memory: both parsers timed without decompression
        for dt in args.dtype:
            t = time.perf_counter()
            ours = load_svmlight(io.BytesIO(text), n_features=d, dtype=dt, label_dtype=None,
                                 multilabel=ml)  # fmt: skip
            t_ours = time.perf_counter() - t
            t = time.perf_counter()
            theirs = load_svmlight_file(io.BytesIO(text), n_features=d, dtype=dt,
                                        zero_based=False, multilabel=ml)  # fmt: skip
            t_sk = time.perf_counter() - t
            ok = _equal(ours, theirs, ml)
            bad += not ok
            print(f"| {rel} ({dt}) | {ours[0].shape[0]} | {len(text) / 1e6:.1f} | "
                  f"{'yes' if ok else 'NO'} | {t_ours:.2f} | {t_sk:.2f} |", flush=True)  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
