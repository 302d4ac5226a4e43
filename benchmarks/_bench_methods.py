"""The benchmark's methods: ours, scikit-learn, River, Vowpal Wabbit, LIBLINEAR, end to end."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _bench_data import REPO_ROOT, WARMUP_ROWS, Data, csr_rows_as_dicts, to_csr32, vw_line


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

    def ours(key, label, call, make, ref, notes=None):
        return Method(
            key=key,
            label=label,
            call=call,
            ref=ref,
            fit=lambda: make().fit(d.Xtr, d.ytr),
            predict=lambda m: m.predict(d.Xte),
            warmup=warm(make),
            notes=notes or [],
        )

    pa_call = f"PassiveAggressiveClassifier(variant='PA-I', C={C}, n_epochs=1, shuffle=False"
    methods = [
        ours("ours_pa1", "**ours** PA-I (multiclass, max-loss rival)", pa_call + ")", pa,
             "ours_pa1"),
        ours("ours_pa1_last", "**ours** PA-I, last iterate (average=False)",
             pa_call + ", average=False)", pa_last, "ours_pa1"),
        ours("ours_pa1_auto", "**ours** PA-I, intercept_scaling='auto' (0.1 on sparse input)",
             pa_call + ", intercept_scaling='auto')", pa_auto, "ours_pa1",
             notes=["bias feature of value 0.1 on sparse input: its step is 1/100 of a unit "
                    "feature's, as scikit-learn's intercept decay of 0.01 on sparse data"]),
        ours("ours_perceptron", "**ours** Perceptron (multiclass)",
             "Perceptron(n_epochs=1, shuffle=False)", perc, "ours_perceptron"),
    ]  # fmt: skip
    if not hasattr(ol, "COPA"):
        return methods
    for cw, key, what in [
        (None, "ours_copa", "plain C"),
        ("confusion", "ours_copa_confusion", "C / T_y^2, eq. (17)"),
    ]:
        methods.append(
            ours(key, f"**ours** COPA, {what}",
                 f"COPA(C={C}, class_weight={cw!r}, n_epochs=1, shuffle=False)", copa(cw),
                 "ours_pa1")
        )  # fmt: skip
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
                    svm_path,
                    chunk_size=10000,
                    n_features=d.n_features,
                    dtype=d.Xtr.dtype,
                    prefetch=True,
                ):
                    est.partial_fit(X, y, classes=d.classes)
                return est

            how = (
                "onlinelearn.io.iter_svmlight_chunks(chunk_size=10000, dtype=the feature dtype, "
                "float32 here as in VW, prefetch=True: parsed on a 2nd thread as VW's) + "
                "partial_fit per chunk"
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
