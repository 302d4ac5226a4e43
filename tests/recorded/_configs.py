"""The recorded configurations and the code that runs them (one definition for both sides).

``record.py`` runs every configuration of :data:`CONFIGS` on every data variant of its tasks
and writes the outputs to ``outputs.npz``; ``tests/test_recorded_outputs.py`` runs them again
with these same functions and compares.  The point is the one-engine refactor (every named
learner becomes a preset of one engine): the presets must reproduce the outputs of the
learners as they are when the file was recorded, bit for bit on the same CPU.

Data: the first :data:`N_TRAIN` training rows and the first :data:`N_TEST` test rows of the
shipped DNA set (180 binary features, labels 1, 2, 3), as a dense ndarray or a CSR matrix, in
float64 or float32.  Tasks:

* ``multiclass``: the three classes;
* ``binary``: the first rows of classes 1 and 2 (as many as above);
* ``regression``: y = X beta + 0.5 + 0.1 noise (train; test without noise), beta and noise
  from ``default_rng(0)``;
* ``multilabel``: a (n, 4) indicator, the one-hot class and a fourth label = feature 89 (the
  first nucleotide after the junction), so a row has one or two relevant labels.

Each run (:func:`run`) makes two ``partial_fit_predict`` calls on the two halves of the
training rows, recorded together as ``online`` (``partial_fit`` then ``predict`` on the same
rows for the learners that have no ``partial_fit_predict``; ``partial_fit_mistakes`` for
``LabelRanker``); then it reads ``decision_function`` on the test rows (``predict`` for
regressors), ``coef_`` and ``intercept_`` (``dual_coef_`` for the kernel learners) and the
counters of :data:`STATS`; then it fits a fresh estimator on all the training rows
(``random_state=0``, :data:`FIT_EPOCHS` epochs unless the configuration says otherwise) and
records its test decision values (``fit_decision``, or ``fit_predict`` for regressors).

Outputs are keyed ``<Estimator>[<params>]/<dense|sparse>/<float64|float32>/<task>/<output>``;
see :func:`save` for how the file stores them.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import onlinelearn
from onlinelearn.datasets import load_dna

N_TRAIN = 600
N_TEST = 60
FIT_EPOCHS = 2
FORMATS = ("dense", "sparse")
DTYPES = ("float64", "float32")

CLASSIFY = ("binary", "multiclass")
RANK = ("binary", "multiclass", "multilabel")
REGRESS = ("regression",)

#: scalar attributes recorded (NaN where an estimator has none), in this order
STATS = ("t_", "n_updates_", "n_mistakes_", "n_iter_", "dual_objective_")


# ---------------------------------------------------------------------------------------- data
@functools.cache
def base_data():
    """{task: (X_train, y_train, X_test, y_test)} with dense float64 X."""
    X_all, y_all = load_dna("train")
    Xt_all, yt_all = load_dna("test")
    X_all, Xt_all = X_all.toarray(), Xt_all.toarray()
    y_all, yt_all = np.asarray(y_all), np.asarray(yt_all)

    def first(M, v, n, keep):
        rows = np.flatnonzero(np.isin(v, keep))[:n]
        return np.ascontiguousarray(M[rows], dtype=np.float64), v[rows]

    X, y = first(X_all, y_all, N_TRAIN, (1, 2, 3))
    Xt, yt = first(Xt_all, yt_all, N_TEST, (1, 2, 3))
    out = {"multiclass": (X, y, Xt, yt)}
    out["binary"] = (*first(X_all, y_all, N_TRAIN, (1, 2)), *first(Xt_all, yt_all, N_TEST, (1, 2)))
    rng = np.random.default_rng(0)
    beta = rng.normal(size=X.shape[1]) / math.sqrt(50.0)
    noise = rng.normal(size=X.shape[0])

    def linear(M):  # exactly rounded sums: the same target whatever BLAS would do
        return np.array([math.fsum(beta[row != 0] * row[row != 0]) for row in M]) + 0.5

    out["regression"] = (X, linear(X) + 0.1 * noise, Xt, linear(Xt))

    def labels(Xm, ym):
        Y = np.zeros((Xm.shape[0], 4), dtype=np.int64)
        Y[np.arange(Xm.shape[0]), ym - 1] = 1
        Y[:, 3] = Xm[:, 89] != 0
        return Y

    out["multilabel"] = (X, labels(X, y), Xt, labels(Xt, yt))
    return out


def data(task, fmt, dtype):
    """(X_train, y_train, X_test, y_test) of a task in a storage format and dtype."""
    X, y, Xt, yt = base_data()[task]

    def conv(M):
        M = np.ascontiguousarray(M, dtype=dtype)
        return sp.csr_matrix(M) if fmt == "sparse" else M

    return conv(X), y, conv(Xt), yt


# ------------------------------------------------------------------------------ configurations
@dataclass(frozen=True)
class Config:
    """One estimator with one set of parameters.

    ``params`` are given to the constructor and shown in the name; ``call`` are keyword
    arguments of ``partial_fit_predict`` (also shown); ``random_state=0``, ``n_epochs``
    (:data:`FIT_EPOCHS`) and ``average_power=0.0`` (the uniform average of the recording) are
    added when the estimator takes them and ``params`` does not set them.  ``kind``:
    'classifier', 'regressor', 'ranker' (``LabelRanker``) or 'partial_fit' (no
    ``partial_fit_predict``); ``train_rows``: use only the first training rows (shown)."""

    estimator: str
    params: tuple = ()
    tasks: tuple = CLASSIFY
    call: tuple = ()
    kind: str = "classifier"
    train_rows: int | None = None

    @property
    def name(self):
        shown = [f"{k}={_show(v)}" for k, v in (*self.params, *self.call)]
        if self.train_rows is not None:
            shown.append(f"train_rows={self.train_rows}")
        return f"{self.estimator}[{','.join(shown)}]"

    def make(self):
        cls = getattr(onlinelearn, self.estimator)
        kwargs = dict(self.params)
        accepted = cls._get_param_names()
        if "random_state" in accepted:
            kwargs.setdefault("random_state", 0)
        if "n_epochs" in accepted:
            kwargs.setdefault("n_epochs", FIT_EPOCHS)
        if "average_power" in accepted:
            # the uniform average the file was recorded with (the t^2 weights came later)
            kwargs.setdefault("average_power", 0.0)
        return cls(**kwargs)

    def variants(self):
        """(fmt, dtype, task) of every run of this configuration."""
        return [(f, d, t) for t in self.tasks for f in FORMATS for d in DTYPES]


def _show(v):
    if isinstance(v, float) and v == math.inf:
        return "inf"
    return str(v)


def _c(estimator, tasks=CLASSIFY, kind="classifier", call=None, train_rows=None, **params):
    call = tuple((call or {}).items())
    return Config(estimator, tuple(params.items()), tasks, call, kind, train_rows)


def _configs():
    c = []
    # ---- Perceptron
    P = "Perceptron"
    c += [
        _c(P),
        _c(P, average=False),
        _c(P, fit_intercept=False),
        _c(P, intercept_scaling="auto"),
        _c(P, intercept_scaling=1.0, average=False),
        _c(P, class_weight="balanced"),
        _c(P, call={"predict_with": "average"}),
        _c(P, n_epochs=3, n_iter_no_change=1, tol=5.0),  # the stop ends some fits after 2
        _c(P, constraint="simplex", radius=10.0),
    ]
    # ---- PassiveAggressiveClassifier
    P = "PassiveAggressiveClassifier"
    for variant in ("PA", "PA-I", "PA-II"):
        for average in (True, False):
            c.append(_c(P, variant=variant, average=average, C=0.01))
    c += [
        _c(P, variant="PA-I", fit_intercept=False),
        _c(P, variant="PA-II", intercept_scaling="auto"),
        _c(P, variant="PA-I", intercept_scaling="auto", average=False, margin=0.5),
        _c(P, variant="PA-I", class_weight="balanced", C=0.01),
        _c(P, variant="PA-I", call={"predict_with": "average"}),
        _c(P, variant="PA-I", constraint="l1", radius=5.0),
        _c(P, variant="PA-I", n_epochs=3, n_iter_no_change=1, tol=1.0),  # stops after 2
    ]
    # ---- Winnow
    P = "Winnow"
    c += [
        _c(P),
        _c(P, balanced=False),
        _c(P, eta=0.5, average=True),
        _c(P, balanced=False, eta=0.5, average=True),
        _c(P, self_tuned=True),
        _c(P, self_tuned=True, balanced=False),
        _c(P, step="PA", margin=0.05),
        _c(P, step="PA-I", C=0.1),
        _c(P, step="PA-II", C=0.1, average=True),
        _c(P, step="PA-I", balanced=False, fit_intercept=False),
    ]
    # ---- PNormPerceptron
    P = "PNormPerceptron"
    c += [
        _c(P),
        _c(P, p=2.0),
        _c(P, p=4.0, average=True),
        _c(P, p=3.0, step="PA"),
        _c(P, step="PA-I", C=1.0),
        _c(P, p=4.0, step="PA-II", C=0.1, fit_intercept=False),
    ]
    # ---- COPA
    P = "COPA"
    c += [
        _c(P),
        _c(P, class_weight="confusion", C=1000.0),
        _c(P, C=0.1, average=False),
        _c(P, C=0.1, fit_intercept=False),
        _c(P, intercept_scaling="auto", call={"predict_with": "average"}),
    ]
    # ---- DualAscentClassifier
    P = "DualAscentClassifier"
    for variant in ("PA", "PA-I", "PA-II"):
        c.append(_c(P, step="last-k", k=1, variant=variant, C=0.01))
    c += [
        _c(P, step="last-k", k=2, variant="PA-I", C=0.01),
        _c(P, step="last-k", k=3, variant="PA-II", C=0.01),
        _c(P, step="row-action", k=3, variant="PA-I", C=0.01),
        _c(P, step="row-action", k=2, variant="PA-II", C=0.01, fit_intercept=False),
        _c(P, step="row-action", k=2, link="entropy", C=1.0, margin=0.1),
        _c(P, step="row-action", k=2, link="pnorm", C=1.0),
        # ftrl costs O(t nnz) per sweep of every round: fewer rows, fewer sweeps
        _c(P, step="ftrl", variant="PA-I", C=0.01, max_sweeps=20, train_rows=120),
        _c(P, step="ftrl", variant="PA-II", C=0.01, max_sweeps=10, train_rows=120),
    ]
    for step, extra in (("self-tuned", {}), ("strongly-convex", {"sigma": 0.01})):
        for link in ("euclidean", "entropy", "pnorm"):
            margin = {"margin": 0.1} if link == "entropy" else {}
            c.append(_c(P, step=step, link=link, **extra, **margin))
    c += [
        _c(P, step="self-tuned", update="subgradient"),
        _c(P, step="strongly-convex", sigma=0.01, update="subgradient", link="pnorm", p=3.0),
        _c(P, step="self-tuned", k=3),
        _c(P, step="strongly-convex", sigma=0.01, k=2, link="entropy", margin=0.1),
    ]
    # ---- PassiveAggressiveRegressor
    P = "PassiveAggressiveRegressor"
    r = {"tasks": REGRESS, "kind": "regressor"}
    c += [
        _c(P, **r),
        _c(P, **r, loss="squared_epsilon_insensitive", C=0.1),
        _c(P, **r, C=0.005),
        _c(P, **r, C=math.inf, epsilon=0.5),
        _c(P, **r, C=0.1, average=True),
        _c(P, **r, epsilon=0.0, fit_intercept=False),
        _c(P, **r, C=0.1, constraint="l1", radius=5.0),
    ]
    # ---- OnlineLeastSquares
    P = "OnlineLeastSquares"
    c += [
        _c(P, **r, solver="rls"),
        _c(P, **r, solver="rls", alpha=10.0, fit_intercept=False),
        _c(P, **r, solver="proximal", C=0.1),
        _c(P, **r, solver="proximal", C=0.01, average=True),
        _c(P, **r, solver="proximal", C=0.1, constraint="simplex", radius=3.0),
    ]
    # ---- LabelRanker
    P = "LabelRanker"
    q = {"tasks": RANK, "kind": "ranker"}
    for complexity in ("euclidean", "entropy"):
        for update in ("I", "II", "III"):
            # C pinned at the entropy's former default (C='auto' is 0.003 for it since the
            # defaults were measured; the recordings are of C = 0.01)
            margin = {"margin": 0.1, "C": 0.01} if complexity == "entropy" else {}
            c.append(_c(P, **q, update=update, complexity=complexity, **margin))
    c += [
        _c(P, **q, update="II", C=0.1, fit_intercept=False),
        _c(P, **q, update="III", constraint="l1", radius=5.0),
        _c(P, **q, update="III", complexity="entropy", margin=0.1, C=0.01, constraint="floor",
           floor=1e-4),  # fmt: skip
    ]
    # ---- ClassDependentPA (no partial_fit_predict)
    P = "ClassDependentPA"
    k = {"kind": "partial_fit"}
    c += [_c(P, **k), _c(P, **k, C=0.1, margin=0.5)]
    # ---- WeightedMinMax
    P = "WeightedMinMax"
    for covariance in ("full", "diagonal"):
        for margin in ("fixed", "adaptive"):
            c.append(_c(P, margin=margin, covariance=covariance))
    c += [
        _c(P, margin="adaptive", query="margin", c=1.0),
        _c(P, b=500.0, fit_intercept=False),
    ]
    # ---- AROW, SCW
    c += [
        _c("AROW"),
        _c("AROW", r=10.0, covariance="diagonal"),
        _c("AROW", r=0.1, fit_intercept=False),
        _c("AROW", shuffle=True, n_epochs=3),
        _c("SCW"),
        _c("SCW", variant="SCW-II", C=0.1),
        _c("SCW", eta=0.75, covariance="diagonal"),
        _c("SCW", variant="SCW-II", C=0.1, covariance="diagonal", fit_intercept=False),
    ]
    # ---- kernel online learners (a round costs a kernel row per support vector: half the rows)
    n = {"train_rows": N_TRAIN // 2}
    P = "KernelPerceptron"
    c += [
        _c(P, **n),
        _c(P, **n, kernel="linear"),
        _c(P, **n, kernel="poly", average=False),
        _c(P, **n, budget=50, removal="oldest"),
        _c(P, **n, budget=50, removal="smallest", fit_intercept=False),
        _c(P, **n, call={"predict_with": "average"}),
    ]
    P = "KernelPassiveAggressive"
    c += [
        _c(P, **n),
        _c(P, **n, variant="PA", average=False),
        _c(P, **n, variant="PA-II", kernel="linear", C=0.1),
        _c(P, **n, variant="PA-I", budget=50, removal="smallest", C=0.1),
        _c(P, **n, kernel="laplacian", class_weight="balanced"),
    ]
    P = "KernelCOPA"
    c += [
        _c(P, **n),
        _c(P, **n, kernel="linear", C=0.1, average=False),
        _c(P, **n, budget=50, intercept_scaling=0.5),
    ]
    # ---- Pegasos (no partial_fit_predict)
    P = "Pegasos"
    c += [
        _c(P, **k),
        _c(P, **k, average=True),
        _c(P, **k, lam=1e-3, batch_size=8, projection=False),
        _c(P, **k, lam=1e-2, t0=100.0, average=100),
        _c(P, **k, class_weight="balanced", intercept_scaling=0.5),
    ]
    return tuple(c)


CONFIGS = _configs()
BY_NAME = {cfg.name: cfg for cfg in CONFIGS}
assert len(BY_NAME) == len(CONFIGS), "two configurations share a name"


# -------------------------------------------------------------------------------------- runs
def key(cfg, fmt, dtype, task, output=None):
    base = f"{cfg.name}/{fmt}/{dtype}/{task}"
    return base if output is None else f"{base}/{output}"


def _stats(est):
    out = np.full(len(STATS), np.nan)
    for i, name in enumerate(STATS):
        try:
            out[i] = float(getattr(est, name))
        except AttributeError:
            pass
    return out


def _readout(est, Xt, kind, out):
    if kind == "regressor":
        out["predict"] = est.predict(Xt)
    else:
        out["decision"] = est.decision_function(Xt)
    if hasattr(est, "support_vectors_"):  # the kernel learners: the support set's coefficients
        out["dual_coef"] = est.dual_coef_
    else:
        out["coef"] = np.asarray(est.coef_)
    if hasattr(est, "intercept_"):
        out["intercept"] = np.asarray(est.intercept_)
    out["stats"] = _stats(est)


def run(cfg, fmt, dtype, task):
    """{output name: array} of one configuration on one data variant."""
    X, y, Xt, _ = data(task, fmt, dtype)
    if cfg.train_rows is not None:
        X, y = X[: cfg.train_rows], y[: cfg.train_rows]
    h = X.shape[0] // 2
    out = {}
    est = cfg.make()
    call = dict(cfg.call)
    online = []
    for Xb, yb in ((X[:h], y[:h]), (X[h:], y[h:])):
        if cfg.kind == "partial_fit":
            est.partial_fit(Xb, yb)
            online.append(est.predict(Xb))
        elif cfg.kind == "ranker":
            online.append(est.partial_fit_mistakes(Xb, yb))
        else:
            online.append(est.partial_fit_predict(Xb, yb, **call))
    out["online"] = np.concatenate(online)
    _readout(est, Xt, cfg.kind, out)
    fitted = cfg.make().fit(X, y)
    if cfg.kind == "regressor":
        out["fit_predict"] = fitted.predict(Xt)
    else:
        out["fit_decision"] = fitted.decision_function(Xt)
    return {name: np.asarray(v) for name, v in out.items()}


def host():
    """The machine facts stored with the outputs: bit-for-bit equality is expected only on
    the same CPU (the core is compiled with fastmath reassoc/contract for the host)."""
    import llvmlite
    import llvmlite.binding as llvm
    import numba

    return {
        "cpu_name": str(llvm.get_host_cpu_name()),
        "cpu_features": str(llvm.get_host_cpu_features().flatten()),
        "numba_version": numba.__version__,
        "llvmlite_version": llvmlite.__version__,
        "numpy_version": np.__version__,
    }


def run_all(configs=CONFIGS):
    """{key: array} of every run of ``configs``."""
    out = {}
    for cfg in configs:
        for variant in cfg.variants():
            for name, a in run(cfg, *variant).items():
                out[key(cfg, *variant, name)] = a
    return out


def data_digest():
    """SHA-256 of every task's arrays: the recorded outputs are only meaningful on this data."""
    h = hashlib.sha256()
    for task, arrays in sorted(base_data().items()):
        h.update(task.encode())
        for a in arrays:
            a = np.ascontiguousarray(a)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
    return h.hexdigest()


# ------------------------------------------------------------------------------- the npz file
OUTPUTS = Path(__file__).with_name("outputs.npz")
META = "meta/"


def _digest(a):
    return hashlib.sha256(f"{a.dtype.str}{a.shape}".encode() + a.tobytes()).hexdigest()


def save(path, outputs, meta):
    """Write ``outputs`` ({key: array}) and ``meta`` ({name: str}) with np.savez_compressed.

    The arrays are packed, not stored one zip member each (about 5,000 small members cost
    more in zip headers and lost compression than their values): the values of each dtype are
    concatenated into ``values/<dtype>``, and ``index/key``, ``index/dtype``, ``index/shape``,
    ``index/offset`` say where each key's array is.  An array equal to one stored before (same
    dtype, shape and bytes: e.g. a learner that reads float32 input as float64) is stored once
    and its keys share the offset.  :func:`load` gives back {key: array}."""
    chunks, size, where = {}, {}, {}
    index = []
    for k, a in outputs.items():
        a = np.asarray(a)  # not ascontiguousarray: it turns a 0-d array into shape (1,)
        d = _digest(a)
        if d not in where:
            dt = a.dtype.str
            where[d] = size.get(dt, 0)
            chunks.setdefault(dt, []).append(a.reshape(-1))
            size[dt] = where[d] + a.size
        index.append((k, a.dtype.str, ",".join(map(str, a.shape)), where[d]))
    stored = {f"values/{dt}": np.concatenate(parts) for dt, parts in chunks.items()}
    stored["index/key"] = np.array([r[0] for r in index])
    stored["index/dtype"] = np.array([r[1] for r in index])
    stored["index/shape"] = np.array([r[2] for r in index])
    stored["index/offset"] = np.array([r[3] for r in index], dtype=np.int64)
    for name, value in meta.items():
        stored[META + name] = np.array(value)
    np.savez_compressed(path, **stored)


def load(path):
    """({key: array}, {meta name: str}) as :func:`save` wrote them."""
    with np.load(path, allow_pickle=False) as f:
        raw = {k: f[k] for k in f.files}
    meta = {k[len(META) :]: str(v) for k, v in raw.items() if k.startswith(META)}
    outputs = {}
    for k, dt, shape, off in zip(
        raw["index/key"], raw["index/dtype"], raw["index/shape"], raw["index/offset"],
        strict=True,
    ):
        shape = tuple(int(n) for n in str(shape).split(",") if n)
        n = math.prod(shape)
        values = raw[f"values/{dt}"]
        outputs[str(k)] = values[off : off + n].reshape(shape)
    return outputs, meta
