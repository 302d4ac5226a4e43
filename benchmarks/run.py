#!/usr/bin/env python
"""One-epoch, side-by-side benchmark of onlinelearn against other linear learners.

Run from the repository root::

    python benchmarks/run.py                       # news20 and mnist, full data
    python benchmarks/run.py --quick               # small subsamples, smoke test (< 1 minute)
    python benchmarks/run.py --datasets news20 --repeat 5

Everything runs in this one process, on the same data, loaded once: the training rows are put in
one fixed random order (``--seed``) and every learner then makes one pass over them in that order
without shuffling of its own.  See ``benchmarks/README.md`` for what each column measures and the
caveats.  This script is not part of the test suite and downloads nothing.
"""

from __future__ import annotations

import argparse
import bz2
import ctypes
import datetime as _dt
import functools
import gc
import io
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
import traceback
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
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


# --------------------------------------------------------------------------------------------
# memory
# --------------------------------------------------------------------------------------------
def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak_rss() -> bool:
    """Reset the kernel's per-process RSS high-water mark (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _trim_heap() -> None:
    """Give freed heap pages back to the OS (glibc), so that RSS deltas are not hidden by reuse."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def maxrss_mb() -> float:
    """Process-wide max RSS since start (getrusage; kB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# --------------------------------------------------------------------------------------------
# methods
# --------------------------------------------------------------------------------------------
@dataclass
class Method:
    key: str  # stable id used in the JSON
    label: str  # shown in the table
    call: str  # the exact call / command
    ref: str  # key of the "ours" row this one is compared with
    fit: Callable[[], object]
    predict: Callable[[object], object]
    slow: bool = False
    kind: str = "online, 1 pass"
    n_rows: int | None = None  # rows trained on, if not the whole training set
    table: str = "in-memory"  # "in-memory" or "end-to-end"
    warmup: Callable[[], object] | None = None
    cleanup: Callable[[object], None] | None = None
    notes: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def import_ours():
    try:
        import onlinelearn
    except ImportError:
        sys.path.insert(0, str(REPO_ROOT / "src"))
        try:
            import onlinelearn
        except ImportError as exc:
            return None, f"onlinelearn not importable: {exc}"
    missing = [
        n for n in ("PassiveAggressiveClassifier", "Perceptron") if not hasattr(onlinelearn, n)
    ]
    if missing:
        return None, f"onlinelearn lacks {missing}"
    return onlinelearn, None


def ours_methods(d: Data, C: float, ol) -> list[Method]:
    import numpy as np

    def pa():
        return ol.PassiveAggressiveClassifier(variant="PA-I", C=C, n_epochs=1, shuffle=False)

    def pa_auto():
        return ol.PassiveAggressiveClassifier(
            variant="PA-I", C=C, n_epochs=1, shuffle=False, intercept_scaling="auto"
        )

    def perc():
        return ol.Perceptron(n_epochs=1, shuffle=False)

    def pa_last():
        return ol.PassiveAggressiveClassifier(
            variant="PA-I", C=C, n_epochs=1, shuffle=False, average=False
        )

    def copa(class_weight):
        def make():
            return ol.COPA(C=C, class_weight=class_weight, n_epochs=1, shuffle=False)

        return make

    def warm(make):
        def run():
            # numba compiles on first use; this untimed call on a tiny slice is what we report
            # as compile time.  All classes are present so no code path is left uncompiled.
            idx = np.concatenate([np.flatnonzero(d.ytr == c)[:3] for c in np.unique(d.ytr)])
            est = make().fit(d.Xtr[idx], d.ytr[idx])
            est.predict(d.Xte[:WARMUP_ROWS])
            est2 = make()
            est2.partial_fit(d.Xtr[:WARMUP_ROWS], d.ytr[:WARMUP_ROWS], classes=d.classes)
            return est

        return run

    methods = [
        Method(
            key="ours_pa1",
            label="**ours** PA-I (multiclass, max-loss rival)",
            call=f"PassiveAggressiveClassifier(variant='PA-I', C={C}, n_epochs=1, shuffle=False)",
            ref="ours_pa1",
            fit=lambda: pa().fit(d.Xtr, d.ytr),
            predict=lambda m: m.predict(d.Xte),
            warmup=warm(pa),
        ),
        Method(
            key="ours_pa1_last",
            label="**ours** PA-I, last iterate (average=False)",
            call=(
                f"PassiveAggressiveClassifier(variant='PA-I', C={C}, n_epochs=1, shuffle=False, "
                "average=False)"
            ),
            ref="ours_pa1",
            fit=lambda: pa_last().fit(d.Xtr, d.ytr),
            predict=lambda m: m.predict(d.Xte),
            warmup=warm(pa_last),
        ),
        Method(
            key="ours_pa1_auto",
            label="**ours** PA-I, intercept_scaling='auto' (0.1 on sparse input)",
            call=(
                f"PassiveAggressiveClassifier(variant='PA-I', C={C}, n_epochs=1, shuffle=False, "
                "intercept_scaling='auto')"
            ),
            ref="ours_pa1",
            fit=lambda: pa_auto().fit(d.Xtr, d.ytr),
            predict=lambda m: m.predict(d.Xte),
            warmup=warm(pa_auto),
            notes=[
                "bias feature of value 0.1 on sparse input: its step is 1/100 of a unit "
                "feature's, as scikit-learn's intercept decay of 0.01 on sparse data"
            ],
        ),
        Method(
            key="ours_perceptron",
            label="**ours** Perceptron (multiclass)",
            call="Perceptron(n_epochs=1, shuffle=False)",
            ref="ours_perceptron",
            fit=lambda: perc().fit(d.Xtr, d.ytr),
            predict=lambda m: m.predict(d.Xte),
            warmup=warm(perc),
        ),
    ]
    if not hasattr(ol, "COPA"):
        return methods
    for cw, key, what in [
        (None, "ours_copa", "plain C"),
        ("confusion", "ours_copa_confusion", "C / T_y^2, eq. (17)"),
    ]:
        methods.append(
            Method(
                key=key,
                label=f"**ours** COPA, {what}",
                call=f"COPA(C={C}, class_weight={cw!r}, n_epochs=1, shuffle=False)",
                ref="ours_pa1",
                fit=(lambda make: lambda: make().fit(d.Xtr, d.ytr))(copa(cw)),
                predict=lambda m: m.predict(d.Xte),
                warmup=warm(copa(cw)),
            )
        )
    return methods


def sklearn_sgd_pa1(C: float):
    """scikit-learn's PA-I: SGD with the pa1 rate, one-vs-rest, one epoch, no shuffling."""
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(
        loss="hinge",
        penalty=None,
        learning_rate="pa1",
        eta0=C,
        max_iter=1,
        tol=None,
        shuffle=False,
        n_jobs=1,
    )


def sklearn_perceptron():
    """scikit-learn's Perceptron, one-vs-rest, one epoch, no shuffling."""
    from sklearn.linear_model import Perceptron

    return Perceptron(max_iter=1, tol=None, shuffle=False, n_jobs=1)


def sklearn_methods(d: Data, C: float) -> list[Method]:
    def sgd():
        return sklearn_sgd_pa1(C)

    def perc():
        return sklearn_perceptron()

    def warm(make):
        return lambda: make().fit(d.Xtr[:WARMUP_ROWS], d.ytr[:WARMUP_ROWS])

    return [
        Method(
            key="sklearn_sgd_pa1",
            label="scikit-learn SGDClassifier pa1 (one-vs-rest)",
            call=(
                f"SGDClassifier(loss='hinge', penalty=None, learning_rate='pa1', eta0={C}, "
                "max_iter=1, tol=None, shuffle=False, n_jobs=1)"
            ),
            ref="ours_pa1",
            fit=lambda: sgd().fit(d.Xtr, d.ytr),
            predict=lambda m: m.predict(d.Xte),
            warmup=warm(sgd),
        ),
        Method(
            key="sklearn_perceptron",
            label="scikit-learn Perceptron (one-vs-rest)",
            call="Perceptron(max_iter=1, tol=None, shuffle=False, n_jobs=1)",
            ref="ours_perceptron",
            fit=lambda: perc().fit(d.Xtr, d.ytr),
            predict=lambda m: m.predict(d.Xte),
            warmup=warm(perc),
        ),
    ]


def river_method(d: Data, C: float, n_rows: int, ol) -> Method:
    import numpy as np
    from river.linear_model import PAClassifier
    from river.multiclass import OneVsRestClassifier

    n_rows = min(n_rows, d.Xtr.shape[0])
    t0 = time.perf_counter()
    rows = csr_rows_as_dicts(d.Xtr, n_rows)
    labels = d.ytr[:n_rows].tolist()
    conv = time.perf_counter() - t0
    test_rows = csr_rows_as_dicts(d.Xte, d.Xte.shape[0])

    def make():
        return OneVsRestClassifier(PAClassifier(C=C, mode=1))

    def fit():
        model = make()
        for x, y in zip(rows, labels, strict=True):
            model.learn_one(x, y)
        return model

    def warmup():
        model = make()
        for x, y in zip(rows[:WARMUP_ROWS], labels[:WARMUP_ROWS], strict=True):
            model.learn_one(x, y)
        return model

    def predict(model):
        return np.array([model.predict_one(x) for x in test_rows])

    m = Method(
        key="river_pa1",
        label="River PAClassifier(mode=1) one-vs-rest",
        call=f"OneVsRestClassifier(PAClassifier(C={C}, mode=1)), learn_one on dict rows",
        ref="ours_pa1",
        fit=fit,
        predict=predict,
        slow=True,
        n_rows=n_rows,
        warmup=warmup,
        notes=[
            f"trained on the first {n_rows} rows only; time/epoch EXTRAPOLATED linearly",
            f"CSR->dict conversion {conv:.2f}s not timed",
        ],
    )
    if ol is not None:
        # accuracy of ours on the same subsample, so River's accuracy can be read fairly
        sub = ol.PassiveAggressiveClassifier(variant="PA-I", C=C, n_epochs=1, shuffle=False)
        sub.fit(d.Xtr[:n_rows], d.ytr[:n_rows])
        acc = float(np.mean(sub.predict(d.Xte) == d.yte))
        m.extra["ours_pa1_same_rows_accuracy"] = acc
        m.notes.append(f"ours PA-I on the same {n_rows} rows: acc {acc:.4f}")
    return m


VW_BITS = 18


def vw_base_args(K: int) -> list[str]:
    return ["--oaa", str(K), "--loss_function", "hinge", "-b", str(VW_BITS), "--quiet"]


def vw_methods(d: Data, tmp: Path) -> list[Method]:
    import numpy as np
    from vowpalwabbit import Workspace

    K = len(d.classes)
    label_index = {int(c): i + 1 for i, c in enumerate(d.classes)}
    t0 = time.perf_counter()
    train_vw = [vw_line(line, label_index, True) for line in d.train_lines]
    test_vw = [vw_line(line, label_index, False) for line in d.test_lines]
    conv = time.perf_counter() - t0
    train_path = tmp / f"{d.name}.train.vw"
    test_path = tmp / f"{d.name}.test.vw"
    train_path.write_text("\n".join(train_vw) + "\n")
    test_path.write_text("\n".join(test_vw) + "\n")
    cache_path = tmp / f"{d.name}.train.vw.cache"
    model_path = tmp / f"{d.name}.vw.model"
    pred_path = tmp / f"{d.name}.vw.pred"
    base = vw_base_args(K)

    # binary cache, built once (untimed): VW's fastest input path, no text parsing
    Workspace(arg_list=[*base, "-d", str(train_path), "--cache_file", str(cache_path)]).finish()

    def lines_fit():
        vw = Workspace(arg_list=base)
        for line in train_vw:
            vw.learn(line)
        return vw

    def lines_predict(vw):
        return d.classes[np.array([vw.predict(line) for line in test_vw]) - 1]

    def file_fit(*input_args):
        def run():
            vw = Workspace(arg_list=[*base, *input_args, "-f", str(model_path)])
            vw.finish()
            return model_path

        return run

    def file_predict(path):
        vw = Workspace(
            arg_list=[
                "-i", str(path), "-t", "-d", str(test_path), "-p", str(pred_path), "--quiet",
            ]
        )  # fmt: skip
        vw.finish()
        pred = np.loadtxt(pred_path).astype(np.int64)
        return d.classes[pred - 1]

    common = f"--oaa {K} --loss_function hinge -b {VW_BITS} (default adaptive/normalized lr 0.5)"
    return [
        Method(
            key="vw_oaa_pyvw_lines",
            label="Vowpal Wabbit --oaa, pyvw learn(text line)",
            call=f"pyvw Workspace('{common}').learn(line) per example",
            ref="ours_pa1",
            fit=lines_fit,
            predict=lines_predict,
            slow=True,
            cleanup=lambda vw: vw.finish(),
            notes=["includes VW's text parsing of pre-built lines (building them not timed)"],
        ),
        Method(
            key="vw_oaa_cache",
            label="Vowpal Wabbit --oaa, native, from its binary cache",
            call=f"vw {common} --cache_file train.cache --passes 1 (in-process C++ driver)",
            ref="ours_pa1",
            fit=file_fit("--cache_file", str(cache_path), "--passes", "1"),
            predict=file_predict,
            notes=["cache built beforehand, untimed; C++ driver with its own parser thread"],
        ),
        Method(
            key="vw_oaa_file",
            label="Vowpal Wabbit --oaa, native, reads VW text file",
            call=f"vw {common} -d train.vw (in-process C++ driver)",
            ref="ours_pa1_e2e",
            fit=file_fit("-d", str(train_path)),
            predict=file_predict,
            table="end-to-end",
            notes=[
                "parse text + 1 pass; C++ driver parses on a 2nd thread",
                f"svmlight->VW text conversion {conv:.2f}s not timed",
            ],
        ),
    ]


def end_to_end_methods(d: Data, C: float, tmp: Path, ol) -> list[Method]:
    """Parse an uncompressed svmlight text file (same rows, same order) and make one pass."""
    from sklearn.datasets import load_svmlight_file

    svm_path = tmp / f"{d.name}.train.svm"
    svm_path.write_bytes(b"".join(d.train_lines))
    methods = []
    if ol is not None:
        chunks = None
        try:
            from onlinelearn.io import iter_svmlight_chunks as chunks
        except ImportError:
            pass

        def make():
            return ol.PassiveAggressiveClassifier(variant="PA-I", C=C, n_epochs=1, shuffle=False)

        if chunks is not None:

            def fit():
                est = make()
                for X, y in chunks(
                    svm_path, chunk_size=10000, n_features=d.n_features, dtype=d.Xtr.dtype
                ):
                    est.partial_fit(X, y, classes=d.classes)
                return est

            how = (
                "onlinelearn.io.iter_svmlight_chunks(chunk_size=10000, dtype=the feature dtype, "
                "float32 here as in VW) + partial_fit per chunk"
            )
        else:

            def fit():
                X, y = load_svmlight_file(str(svm_path), n_features=d.n_features)
                return make().fit(X, y.astype("int64"))

            how = "sklearn load_svmlight_file + fit (onlinelearn.io not available yet)"
        methods.append(
            Method(
                key="ours_pa1_e2e",
                label="**ours** PA-I, parse svmlight text + 1 pass",
                call=how,
                ref="ours_pa1_e2e",
                fit=fit,
                predict=lambda m: m.predict(d.Xte),
                table="end-to-end",
            )
        )

    def sk_fit():
        X, y = load_svmlight_file(str(svm_path), n_features=d.n_features)
        return sklearn_sgd_pa1(C).fit(to_csr32(X), y)

    methods.append(
        Method(
            key="sklearn_sgd_pa1_e2e",
            label="scikit-learn SGD pa1, parse svmlight text + 1 pass",
            call="load_svmlight_file + SGDClassifier(learning_rate='pa1', ...).fit",
            ref="ours_pa1_e2e",
            fit=sk_fit,
            predict=lambda m: m.predict(d.Xte),
            table="end-to-end",
        )
    )
    return methods


def liblinear_method(d: Data, solver: int) -> Method:
    import numpy as np
    from liblinear.liblinearutil import parameter, predict, problem, train

    names = {
        4: "Crammer-Singer multiclass SVM (dual CD)",
        1: "L2-loss SVM dual CD, one-vs-rest",
        3: "L1-loss SVM dual CD, one-vs-rest",
        2: "L2-loss SVM primal (Newton), one-vs-rest",
    }
    extra: dict = {}

    def fit():
        t0 = time.perf_counter()
        prob = problem(d.ytr.astype(np.float64), d.Xtr, bias=1)
        extra["problem_seconds"] = time.perf_counter() - t0
        return train(prob, parameter(f"-s {solver} -q"))

    def pred(model):
        labels, _, _ = predict(d.yte.astype(np.float64), d.Xte, model, "-q")
        return np.asarray(labels, dtype=np.int64)

    return Method(
        key=f"liblinear_s{solver}",
        label=f"LIBLINEAR -s {solver} (batch reference, not online)",
        call=f"train(problem(y, X, bias=1), parameter('-s {solver} -q')): {names.get(solver, '')}",
        ref="ours_pa1",
        fit=fit,
        predict=pred,
        slow=True,
        kind="batch, to convergence (C=1, eps default)",
        notes=["time includes building LIBLINEAR's problem from CSR"],
        extra=extra,
    )


# --------------------------------------------------------------------------------------------
# measurement
# --------------------------------------------------------------------------------------------
def measure(m: Method, d: Data, repeat: int, trace: bool) -> dict:
    import numpy as np

    out: dict = {
        "key": m.key,
        "label": m.label,
        "call": m.call,
        "ref": m.ref,
        "kind": m.kind,
        "table": m.table,
        "n_train": int(d.Xtr.shape[0]),
        "n_rows_trained": int(m.n_rows if m.n_rows is not None else d.Xtr.shape[0]),
        "extrapolated": m.n_rows is not None and m.n_rows < d.Xtr.shape[0],
    }
    if m.warmup is not None:
        gc.collect()
        t0 = time.perf_counter()
        m.warmup()
        out["warmup_seconds"] = time.perf_counter() - t0
    times = []
    model = None
    rss_peak = None
    for r in range(repeat):
        if model is not None and m.cleanup is not None:
            m.cleanup(model)
        model = None
        gc.collect()
        if r == 0:
            _trim_heap()
            rss_before = _status_kb("VmRSS")
            hwm_ok = _reset_peak_rss() and rss_before is not None
        t0 = time.perf_counter()
        model = m.fit()
        times.append(time.perf_counter() - t0)
        if r == 0 and hwm_ok:
            rss_peak = max(0, (_status_kb("VmHWM") or 0) - rss_before) / 1024.0
    pred = m.predict(model)
    if m.cleanup is not None:
        m.cleanup(model)
    del model
    out["accuracy"] = float(np.mean(np.asarray(pred) == d.yte))
    out["times_seconds"] = times
    t_med = statistics.median(times)
    out["time_measured_seconds"] = t_med
    out["time_min_seconds"] = min(times)
    scale = out["n_train"] / out["n_rows_trained"]
    out["time_epoch_seconds"] = t_med * scale
    out["seconds_per_1000_examples"] = 1000.0 * t_med / out["n_rows_trained"]
    out["rss_peak_delta_mb"] = rss_peak
    if trace:
        gc.collect()
        tracemalloc.start()
        model = m.fit()
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / MB
        tracemalloc.stop()
        if m.cleanup is not None:
            m.cleanup(model)
        del model
    else:
        out["tracemalloc_peak_mb"] = None
    out["notes"] = list(m.notes)
    out.update(m.extra)
    return out


def run_dataset(name: str, args, ol, ol_error: str | None) -> dict:
    log(f"[{name}] loading")
    d = load_data(name, args.quick, args.seed, args.file_order)
    log(
        f"[{name}] train {d.Xtr.shape} nnz={d.Xtr.nnz}, test {d.Xte.shape}, "
        f"load {d.load_seconds:.2f}s"
    )
    res: dict = {
        "dataset": name,
        "description": DATASETS[name]["description"],
        "n_train": int(d.Xtr.shape[0]),
        "n_test": int(d.Xte.shape[0]),
        "n_features": d.n_features,
        "n_classes": len(d.classes),
        "train_nnz": int(d.Xtr.nnz),
        "train_order": (
            "file order" if args.file_order else f"one fixed permutation (seed {args.seed})"
        ),
        "load_seconds": d.load_seconds,
        "load_read_bz2_seconds": d.read_seconds,
        "load_parse_seconds": d.parse_seconds,
        "rows": [],
        "errors": [],
    }
    if ol is None:
        res["errors"].append(f"ours skipped: {ol_error}")
    river_rows = QUICK_RIVER_ROWS if args.quick else args.river_rows
    with tempfile.TemporaryDirectory(prefix="olbench-") as tmpdir:
        tmp = Path(tmpdir)
        builders: list[tuple[str, Callable[[], list[Method]]]] = []
        if ol is not None:
            builders.append(("ours", lambda: ours_methods(d, args.C, ol)))
        builders += [
            ("scikit-learn", lambda: sklearn_methods(d, args.C)),
            ("river", lambda: [river_method(d, args.C, river_rows, ol)]),
            ("vowpalwabbit", lambda: vw_methods(d, tmp)),
            ("liblinear", lambda: [liblinear_method(d, s) for s in args.liblinear_solvers]),
            ("end-to-end", lambda: end_to_end_methods(d, args.C, tmp, ol)),
        ]
        for lib, build in builders:
            if args.libraries and lib not in args.libraries:
                continue
            try:
                methods = build()
            except Exception as exc:  # a missing / broken peer must not stop the others
                log(traceback.format_exc())
                res["errors"].append(f"{lib}: {type(exc).__name__}: {exc}")
                continue
            for m in methods:
                rep = args.repeat_slow if m.slow else args.repeat
                log(f"[{name}] {m.key} (repeat {rep})")
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        row = measure(m, d, rep, trace=not args.no_tracemalloc)
                except Exception as exc:
                    log(traceback.format_exc())
                    res["errors"].append(f"{m.key}: {type(exc).__name__}: {exc}")
                    continue
                log(f"[{name}]   {row['time_epoch_seconds']:.3f}s/epoch acc={row['accuracy']:.4f}")
                res["rows"].append(row)
    by_key = {r["key"]: r for r in res["rows"]}
    for r in res["rows"]:
        ref = by_key.get(r["ref"])
        r["ratio_to_ref"] = (
            r["time_epoch_seconds"] / ref["time_epoch_seconds"] if ref is not None else None
        )
    res["targets"] = check_targets(by_key)
    if ol is not None and (not args.libraries or "ours" in args.libraries):
        try:
            res["kernels"] = kernel_measures(d, by_key, args.repeat)
        except Exception as exc:
            log(traceback.format_exc())
            res["errors"].append(f"kernels: {type(exc).__name__}: {exc}")
    return res


@functools.cache
def score_sweep():
    """The compiled floor of a pass, ``sweep(data, indices, indptr, W, out)``: the scores
    s_k = <w_k, x> of every row (K weights read per nonzero, float64 sums) and nothing else."""
    import numpy as np
    from numba import njit

    @njit(cache=False)
    def sweep(data, indices, indptr, W, out):
        K = W.shape[1]
        s = np.zeros(K)
        tot = 0.0
        for i in range(indptr.shape[0] - 1):
            for k in range(K):
                s[k] = 0.0
            for q in range(indptr[i], indptr[i + 1]):
                j = indices[q]
                v = np.float64(data[q])
                for k in range(K):
                    s[k] += v * W[j, k]
            tot += s[0]
        out[0] = tot

    return sweep


def kernel_measures(d: Data, by_key: dict, repeat: int) -> dict:
    """The floor of a pass (a score-only sweep reading K weights per nonzero), ns per
    nonzero x class of ours, and the parsers' MB/s on the uncompressed training text."""
    import numpy as np
    from sklearn.datasets import load_svmlight_file

    from onlinelearn.io import load_svmlight

    sweep = score_sweep()

    X = d.Xtr
    K = len(d.classes)
    cells = X.nnz * K
    out = {"nnz_x_classes": cells}
    for wdt in ("float32", "float64"):
        W = np.random.default_rng(0).normal(size=(X.shape[1] + 1, K)).astype(wdt)
        o = np.zeros(1)
        sweep(X.data, X.indices, X.indptr, W, o)
        args = (X.data, X.indices, X.indptr, W, o)
        best = min(_timed(lambda a=args: sweep(*a)) for _ in range(repeat))
        out[f"score_sweep_{wdt}_seconds"] = best
        out[f"score_sweep_{wdt}_ns"] = best / cells * 1e9
    for key in ("ours_pa1", "ours_pa1_last", "ours_perceptron", "ours_copa"):
        if key in by_key:
            out[f"{key}_ns"] = by_key[key]["time_epoch_seconds"] / cells * 1e9
    text = b"".join(d.train_lines)
    with tempfile.TemporaryDirectory(prefix="olparse-") as tmpdir:
        path = Path(tmpdir) / "train.svm"
        path.write_bytes(text)
        load_svmlight(path, n_features=d.n_features, dtype=VALUE_DTYPE)  # compile
        best = min(
            _timed(lambda: load_svmlight(path, n_features=d.n_features, dtype=VALUE_DTYPE))
            for _ in range(repeat)
        )
        sk = _timed(lambda: load_svmlight_file(str(path), n_features=d.n_features))
    out["text_mb"] = len(text) / 1e6
    out["parse_ours_mb_s"] = len(text) / 1e6 / best
    out["parse_sklearn_mb_s"] = len(text) / 1e6 / sk
    return out


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def check_targets(by_key: dict) -> list[dict]:
    """The project's stated goals, evaluated on whatever was measured."""
    out = []
    sk = by_key.get("sklearn_sgd_pa1")
    for ours_key, what in [
        ("ours_pa1", ""),
        ("ours_pa1_auto", " [ours with intercept_scaling='auto']"),
    ]:
        ours = by_key.get(ours_key)
        if not (ours and sk):
            continue
        speed = sk["time_epoch_seconds"] / ours["time_epoch_seconds"]
        ok = speed >= 4.0 and ours["accuracy"] >= sk["accuracy"]
        out.append(
            {
                "target": "ours PA-I >= 4x faster than sklearn SGD pa1 OvR (n_jobs=1), "
                f"equal or better accuracy{what}",
                "measured": f"sklearn/ours time = {speed:.2f}x; acc {ours['accuracy']:.4f} vs "
                f"{sk['accuracy']:.4f}",
                "met": bool(ok),
            }
        )
    for vw_key, ours_key, what in [
        ("vw_oaa_file", "ours_pa1_e2e", "end-to-end (parse text + 1 pass)"),
        ("vw_oaa_cache", "ours_pa1", "VW from binary cache vs ours in memory"),
        (
            "vw_oaa_cache",
            "ours_pa1_auto",
            "VW from binary cache vs ours in memory [ours with intercept_scaling='auto']",
        ),
    ]:
        vw, o = by_key.get(vw_key), by_key.get(ours_key)
        if vw and o:
            speed = vw["time_epoch_seconds"] / o["time_epoch_seconds"]
            ok = speed >= 1.0 and o["accuracy"] >= vw["accuracy"]
            out.append(
                {
                    "target": "ours PA-I no slower than VW --oaa, equal or better accuracy: "
                    + what,
                    "measured": f"VW/ours time = {speed:.2f}x; acc {o['accuracy']:.4f} vs "
                    f"{vw['accuracy']:.4f}",
                    "met": bool(ok),
                }
            )
    return out


# --------------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------------
def _fmt(x, spec: str, none: str = "—") -> str:
    return none if x is None else format(x, spec)


def markdown(report: dict) -> str:
    lines = [f"# onlinelearn benchmark — {report['date']}", ""]
    env = report["environment"]
    lines += [
        f"Python {env['python']}, numpy {env['numpy']}, numba {env['numba']}, "
        f"scikit-learn {env['sklearn']}, river {env['river']}, vowpalwabbit {env['vowpalwabbit']}, "
        f"liblinear-official {env['liblinear']}; {env['cpu_count']} CPUs ({env['machine']}); "
        f"mode: {'QUICK (subsamples)' if report['args']['quick'] else 'full'}; "
        f"repeat {report['args']['repeat']} (slow methods {report['args']['repeat_slow']}), "
        f"C = {report['args']['C']}.",
        "",
    ]
    for ds in report["datasets"]:
        lines += [
            f"## {ds['dataset']}: {ds['n_train']} train / {ds['n_test']} test, "
            f"{ds['n_features']} features, {ds['n_classes']} classes",
            "",
            f"{ds['description']}. Training order: {ds['train_order']}, the same for every "
            f"method. Load (bz2 read {ds['load_read_bz2_seconds']:.2f}s + parse "
            f"{ds['load_parse_seconds']:.2f}s) = {ds['load_seconds']:.2f}s, not in any time "
            "below except the end-to-end table.",
            "",
        ]
        for table, title in [
            ("in-memory", "One epoch on the in-memory CSR matrix"),
            ("end-to-end", "End to end: parse an uncompressed text file + one epoch"),
        ]:
            rows = [r for r in ds["rows"] if r["table"] == table]
            if not rows:
                continue
            lines += [
                f"### {title}",
                "",
                "| method | kind | rows trained | time / epoch (s) | vs ours | test acc "
                "| tracemalloc peak (MB) | RSS peak Δ (MB) | notes |",
                "|---|---|---:|---:|---:|---:|---:|---:|---|",
            ]
            for r in rows:
                t = _fmt(r["time_epoch_seconds"], ".3f")
                if r["extrapolated"]:
                    t = f"{t} (extrapolated)"
                ref = r["ref"].replace("ours_", "").replace("_e2e", " e2e")
                ratio = r.get("ratio_to_ref")
                ratio_s = "—" if ratio is None else f"{ratio:.2f}x ({ref})"
                if r["key"] == r["ref"]:
                    ratio_s = "1.00x"
                notes = list(r["notes"])
                if "warmup_seconds" in r and r["key"].startswith("ours"):
                    notes.insert(0, f"numba warm-up/compile {r['warmup_seconds']:.2f}s, untimed")
                if len(r["times_seconds"]) > 1:
                    notes.append("runs " + ", ".join(f"{x:.3f}" for x in r["times_seconds"]) + " s")
                lines.append(
                    f"| {r['label']} | {r['kind']} | {r['n_rows_trained']} | {t} | {ratio_s} "
                    f"| {r['accuracy']:.4f} | {_fmt(r['tracemalloc_peak_mb'], '.1f')} "
                    f"| {_fmt(r['rss_peak_delta_mb'], '.1f')} | {'; '.join(notes)} |"
                )
            lines.append("")
        kern = ds.get("kernels")
        if kern:
            lines += [
                "### The floor of a pass, and the parsers",
                "",
                "| measure | value |",
                "|---|---:|",
                f"| nonzeros x classes of the training set | {kern['nnz_x_classes']:.3g} |",
            ]
            for wdt in ("float32", "float64"):
                lines.append(
                    f"| score-only sweep, {wdt} weights (the floor): s / ns per nnz x class "
                    f"| {kern[f'score_sweep_{wdt}_seconds']:.3f} / "
                    f"{kern[f'score_sweep_{wdt}_ns']:.2f} |"
                )
            for key in ("ours_pa1", "ours_pa1_last", "ours_perceptron", "ours_copa"):
                if f"{key}_ns" in kern:
                    lines.append(f"| {key}: ns per nnz x class (median epoch) | "
                                 f"{kern[f'{key}_ns']:.2f} |")  # fmt: skip
            lines += [
                f"| parse {kern['text_mb']:.1f} MB of text, onlinelearn.io.load_svmlight "
                f"| {kern['parse_ours_mb_s']:.0f} MB/s |",
                f"| the same, sklearn load_svmlight_file | {kern['parse_sklearn_mb_s']:.0f} MB/s |",
                "",
            ]
        if ds["targets"]:
            lines += ["### Project targets", ""]
            for t in ds["targets"]:
                lines.append(
                    f"- {t['target']}: {t['measured']} — **{'met' if t['met'] else 'NOT met'}**"
                )
            lines.append("")
        if ds["errors"]:
            lines += ["### Errors / skipped", ""] + [f"- {e}" for e in ds["errors"]] + [""]
    lines += [
        "Calls:",
        "",
    ]
    seen = set()
    for ds in report["datasets"]:
        for r in ds["rows"]:
            if r["key"] not in seen:
                seen.add(r["key"])
                lines.append(f"- `{r['key']}`: `{r['call']}`")
    lines += [
        "",
        "Time vs ours = this method's time / the time of the ours row named in brackets "
        "(>1: ours is faster). tracemalloc peak: Python-visible allocations during one extra, "
        "untimed fit (numpy arrays included; C/C++ and numba-internal allocations are not seen). "
        "RSS peak Δ: kernel resident-set high-water mark (VmHWM, reset before the first timed "
        "fit) minus resident set before it; sees every allocation but is a lower bound when "
        "freed memory is reused. Process max RSS (getrusage) at the end: "
        f"{report['process_max_rss_mb']:.0f} MB.",
        "",
    ]
    return "\n".join(lines)


def environment() -> dict:
    import importlib.metadata as md

    import numba
    import numpy
    import sklearn

    def ver(pkg):
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "not installed"

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "sklearn": sklearn.__version__,
        "river": ver("river"),
        "vowpalwabbit": ver("vowpalwabbit"),
        "liblinear": ver("liblinear-official"),
        "cpu_count": os.cpu_count(),
        "machine": f"{platform.system()} {platform.machine()}",
        "processor": platform.processor(),
    }


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=["news20", "mnist"], choices=list(DATASETS))
    p.add_argument("--quick", action="store_true", help="small subsamples (smoke test)")
    p.add_argument("--out", default=str(REPO_ROOT / "benchmarks" / "results"))
    p.add_argument("--repeat", type=int, default=3, help="timed runs for fast methods (median)")
    p.add_argument("--repeat-slow", type=int, default=1, help="timed runs for slow methods")
    p.add_argument("--C", type=float, default=1.0, help="PA-I aggressiveness (eta0 in sklearn)")
    p.add_argument("--river-rows", type=int, default=2000, help="River trains on this many rows")
    p.add_argument("--liblinear-solvers", type=int, nargs="*", default=[4])
    p.add_argument("--seed", type=int, default=0, help="seed of the one training-order shuffle")
    p.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "float64"],
        help="dtype of the feature values given to every library (ours: of its weights too)",
    )
    p.add_argument("--file-order", action="store_true", help="keep the files' row order")
    p.add_argument(
        "--libraries",
        nargs="+",
        default=None,
        choices=["ours", "scikit-learn", "river", "vowpalwabbit", "liblinear", "end-to-end"],
        help="measure only these (default: all)",
    )
    p.add_argument("--no-tracemalloc", action="store_true", help="skip the tracemalloc runs")
    p.add_argument(
        "--numba-cache",
        action="store_true",
        help="use numba's on-disk cache (default: off, so the warm-up is a real compile)",
    )
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    global VALUE_DTYPE
    VALUE_DTYPE = args.dtype
    if not args.numba_cache:
        os.environ.setdefault("ONLINELEARN_NUMBA_CACHE", "0")
    t_start = time.perf_counter()
    ol, ol_error = import_ours()
    if ol is None:
        log(f"WARNING: {ol_error}; running the other libraries only")
    report = {
        "date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "args": vars(args) | {"out": None},
        "environment": environment(),
        "datasets": [],
    }
    for name in args.datasets:
        report["datasets"].append(run_dataset(name, args, ol, ol_error))
    report["process_max_rss_mb"] = maxrss_mb()
    report["wall_seconds"] = time.perf_counter() - t_start
    text = markdown(report)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = _dt.date.today().isoformat() + ("-quick" if args.quick else "")
    (out / f"{stem}.md").write_text(text + "\n")
    (out / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    log(f"wrote {out / (stem + '.md')} and .json; wall time {report['wall_seconds']:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
