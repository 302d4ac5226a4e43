"""The estimators of the crash sweep, and the kinds of input that are not a plain (X, y):
sequences, structured examples, alignments, graph nodes and feature maps.

``SPECS`` maps a name to a function that builds the estimator's kind (``_sweep.Tabular`` or one
below).  Every public estimator of ``onlinelearn`` and its subpackages is here, except
``onlinelearn.distributed.ParameterMixing`` (it needs a Dask cluster; each shard is a
``partial_fit`` of a linear learner swept here, and its ``predict`` is the mixed linear
model's).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from _sweep import Tabular, _quiet
from _sweep_inputs import EITHER, ERROR, VALID, X_CASES, Y_CASES, Case

import onlinelearn as ol
from onlinelearn import framework as fw
from onlinelearn import kernels as kn
from onlinelearn.graph import GraphPerceptron
from onlinelearn.structured import Aligner, OnlineStructuredLearner, make_alignment


def _tab(cls, target="multiclass", **params):
    return lambda: Tabular(lambda: cls(**params), target)


def _phi(x, y):
    return np.kron(np.eye(3)[int(y)], np.asarray(x, dtype=float))


def _argmax(w, x):
    return int(np.argmax(w.reshape(3, -1) @ np.asarray(x, dtype=float)))


def _aug(w, x, y):
    return int(np.argmax(w.reshape(3, -1) @ np.asarray(x, dtype=float) + (np.arange(3) != y)))


def _cost(y, z):
    return float(y != z)


class Sequences(Tabular):
    """SequenceTagger: X a list of (n_i, d) token matrices, y a list of tag arrays.  The X cases
    replace the first sequence; the y cases its tags."""

    ENTRIES = ("fit", "partial_fit", "partial_fit[first]", "predict")

    def __init__(self):
        rng = np.random.default_rng(0)
        self.make, self.target = (lambda: ol.SequenceTagger(random_state=0)), "multiclass"
        lengths = [4, 2, 3, 5, 3, 2]
        self.seqs = [sp.csr_matrix(rng.normal(size=(m, 4)) * (rng.random((m, 4)) < 0.6))
                     for m in lengths]  # fmt: skip
        self.tags = [np.arange(m) % 3 for m in lengths]
        self.X0, self.y0 = self.seqs[0].toarray(), self.tags[0]
        self.Xt = [sp.csr_matrix(rng.normal(size=(3, 4))) for _ in range(2)]
        self.fitted = _quiet(self.make().fit, self.seqs, self.tags)
        self.x_cases, self.y_cases = X_CASES, Y_CASES

    def cases(self, entry):
        for name, args, ref, expect in super().cases(entry):
            if name in ("wider", "narrower", "csr wider"):
                expect = ERROR  # the other sequences keep their width
            yield name, self._wrap(args), None if ref is None else self._wrap(ref), expect
        yield "no sequence", ([], []) if entry != "predict" else ([],), None, ERROR

    def _wrap(self, args):
        seqs = [args[0], *self.seqs[1:]]
        if len(args) == 1:
            return (seqs,)
        return (seqs, [args[1], *self.tags[1:]], *args[2:])

    def result(self, est, entry, ret, args):
        return {"predict": np.concatenate(est.predict(self.Xt))}


class Structured(Sequences):
    """OnlineStructuredLearner with the oracles of its docstring (x a vector, y in {0, 1, 2}):
    the dense X cases, each row of the batch one example.  An example x is opaque to the
    learner (what it holds is the oracles' business), so every case may be accepted or refused;
    a refusal, by the learner or by an oracle, must leave the model as it was."""

    ENTRIES = ("fit", "partial_fit", "partial_fit[first]", "predict")

    def __init__(self):
        rng = np.random.default_rng(0)
        self.make = lambda: OnlineStructuredLearner(_phi, _argmax, _cost, _aug, random_state=0)
        self.target = "multiclass"
        self.X0, self.Xt = rng.normal(size=(12, 3)), rng.normal(size=(4, 3))
        self.y0 = np.arange(12) % 3
        self.fitted = _quiet(self.make().fit, list(self.X0), list(self.y0))
        self.x_cases = [c for c in X_CASES if not c.sparse]
        self.y_cases = []

    def cases(self, entry):
        for name, args, ref, expect in Tabular.cases(self, entry):
            if name != "unfitted model":
                expect = EITHER
            if isinstance(args[0], np.ndarray) and args[0].ndim == 2:
                yield name, (list(args[0]), *args[1:]), ref and (list(ref[0]), *ref[1:]), expect
            else:
                yield name, args, ref, expect

    def result(self, est, entry, ret, args):
        d = est.coef_.shape[0] // 3
        return {"predict": np.asarray(est.predict(list(np.resize(self.Xt, (4, d)))))}

    def unsound_output(self, est, what, value):
        return None if np.isin(value, (0, 1, 2)).all() else f"labels {value}"


def _timing_cases():
    """(name, edit of (frames, events, G, timing), expectation per entry)."""

    def frames(fn):
        return lambda f, e, g, y: ((fn(f), e, g), y)

    def events(fn):
        return lambda f, e, g, y: ((f, fn(e), g), y)

    def table(fn):
        return lambda f, e, g, y: ((f, e, fn(g)), y)

    def timing(fn):
        return lambda f, e, g, y: ((f, e, g), fn(y, f.shape[0]))

    def put(a, i, v, dtype=None):
        a = np.array(a, dtype=dtype if dtype else np.asarray(a).dtype)
        a[i] = v
        return a

    n_types = 6
    return [
        ("frames nan", frames(lambda f: put(f, (0, 0), np.nan)), ERROR),
        ("frames inf", frames(lambda f: put(f, (1, 1), np.inf)), ERROR),
        ("frames 1e300", frames(lambda f: f * 1e300), EITHER),
        ("frames complex", frames(lambda f: f + 1j), ERROR),
        ("frames strings", frames(lambda f: np.full(f.shape, "x")), ERROR),
        ("frames 1-D", frames(lambda f: f[:, 0]), ERROR),
        ("frames empty", frames(lambda f: f[:0]), ERROR),
        ("frames wider", frames(lambda f: np.hstack([f, f[:, :1]])), EITHER),
        ("G nan", table(lambda g: put(g, (0, 0), np.nan)), ERROR),
        ("G one row short", table(lambda g: g[:-1]), ERROR),
        ("G one column short", table(lambda g: g[:, :-1]), ERROR),
        ("events -1", events(lambda e: put(e, 0, -1)), ERROR),
        ("events = n_types", events(lambda e: put(e, 0, n_types)), ERROR),
        ("events 2**40", events(lambda e: put(e, 0, 2**40, np.int64)), ERROR),
        ("events 1.5", events(lambda e: put(e, 0, 1.5, float)), ERROR),
        ("events 2.0", events(lambda e: put(e, 0, 2.0, float)), EITHER),
        ("events nan", events(lambda e: put(e, 0, np.nan, float)), ERROR),
        ("events empty", events(lambda e: e[:0]), ERROR),
        ("events 2-D", events(lambda e: e[None]), ERROR),
        ("events strings", events(lambda e: np.full(e.shape, "a")), ERROR),
        ("x not a tuple", lambda f, e, g, y: (f, y), ERROR),
        ("x of two parts", lambda f, e, g, y: ((f, e), y), ERROR),
        ("timing -1", timing(lambda y, T: put(y, 0, -1)), ERROR),
        ("timing start = T", timing(lambda y, T: put(y, -1, T)), ERROR),
        ("timing start 2**40", timing(lambda y, T: put(y, -1, 2**40, np.int64)), ERROR),
        ("timing decreasing", timing(lambda y, T: y[::-1].copy()), ERROR),
        ("timing repeated", timing(lambda y, T: put(y, 1, y[0])), ERROR),
        ("timing too long", timing(lambda y, T: y[:-1]), ERROR),
        ("timing 1.5", timing(lambda y, T: put(y, 1, y[1] + 0.5, float)), ERROR),
        ("timing nan", timing(lambda y, T: put(y, 1, np.nan, float)), ERROR),
        ("timing 2-D", timing(lambda y, T: y[None]), ERROR),
        ("timing None", timing(lambda y, T: None), ERROR),
        ("timing float", timing(lambda y, T: y.astype(float)), VALID),
    ]


class Alignment(Tabular):
    """Aligner: ``fit`` and ``predict`` with the first example edited, ``feature_map(x, y)``."""

    def __init__(self):
        self.make, self.target = (lambda: Aligner(random_state=0)), "alignment"
        self.X0, self.Y0 = make_alignment(10, random_state=0)
        self.Xt, _ = make_alignment(3, random_state=1)
        self.fitted = _quiet(self.make().fit, self.X0, self.Y0)

    def entries(self):
        return ["fit", "predict", "feature_map"]

    def cases(self, entry):
        for name, edit, expect in _timing_cases():
            x, y = edit(*self.X0[0], self.Y0[0])
            if entry == "feature_map":
                yield name, (x, y), None, expect
            elif entry == "fit":
                yield name, ([x, *self.X0[1:]], [y, *self.Y0[1:]]), None, expect
            elif not name.startswith("timing"):
                yield name, ([x, *self.X0[1:]],), None, expect
        if entry != "feature_map":
            yield "no example", ([], []) if entry == "fit" else ([],), None, EITHER
        if entry == "fit":
            yield "one timing short", (self.X0, self.Y0[:-1]), None, ERROR
        else:
            yield (
                "unfitted model",
                (self.X0,) if entry == "predict" else (self.X0[0], self.Y0[0]),
                None,
                ERROR,
            )

    def call(self, est, entry, args):
        return getattr(est, entry)(*args)

    def result(self, est, entry, ret, args):
        out = {"predict": est.predict(self.Xt)}
        if entry == "feature_map":
            out["returned"] = ret
        return out

    def unsound(self, est, entry, result):
        for (frames, _, _), y in zip(self.Xt, result["predict"], strict=True):
            if not (y[0] >= 0 and np.all(np.diff(y) > 0) and y[-1] < frames.shape[0]):
                return f"predicted timing {y} is not a timing of {frames.shape[0]} frames"
        if "returned" in result and not np.isfinite(result["returned"]).all():
            return "feature_map returned NaN or infinity"
        return None


class Graph(Tabular):
    """GraphPerceptron on a path of 8 nodes: X a vector of node ids."""

    ENTRIES = ("partial_fit_predict", "partial_fit_predict[first]", "predict",
               "decision_function")  # fmt: skip
    TRAIN = {"partial_fit_predict", "partial_fit_predict[first]"}

    def __init__(self):
        path = sp.diags([np.ones(7), np.ones(7)], [1, -1], shape=(8, 8))
        self.make = lambda: GraphPerceptron.from_adjacency(path)
        self.target = "multiclass"
        self.X0, self.Xt, self.y0 = np.arange(8), np.array([1, 6, 3]), np.arange(8) // 4
        self.fitted = self.make()
        _quiet(self.fitted.partial_fit_predict, self.X0, self.y0)
        self.x_cases = [
            Case(name, _no_reference(edit), e)
            for name, edit, e in [
                ("node -1", lambda X: np.r_[X[:-1], -1], ERROR),
                ("node = n", lambda X: np.r_[X[:-1], 8], ERROR),
                ("node 2**40", lambda X: np.r_[X[:-1], 2**40], ERROR),
                ("node 1.5", lambda X: np.r_[X[:-1], 1.5], ERROR),
                ("node 2.0", lambda X: X.astype(float), EITHER),
                ("node nan", lambda X: np.r_[X[:-1], np.nan], ERROR),
                ("nodes bool", lambda X: X % 2 == 0, EITHER),
                ("nodes strings", lambda X: X.astype(str), EITHER),
                ("nodes uint64", lambda X: X.astype(np.uint64), VALID),
                ("nodes list", lambda X: X.tolist(), VALID),
                ("nodes 2-D", lambda X: X[None], ERROR),
                ("no node", lambda X: X[:0], EITHER),
                ("nodes object", lambda X: np.array([*X[:-1], "a"], dtype=object), ERROR),
            ]
        ]
        self.y_cases = [c for c in Y_CASES if c.name != "y 0.5"]

    def labels_for(self, X):
        return np.resize(self.y0, len(X) if np.ndim(X) == 1 else len(self.y0))

    def call(self, est, entry, args):
        return getattr(est, entry.split("[")[0])(*args[:2])

    def test_rows(self, est):
        return self.Xt


def _no_reference(edit):
    return lambda X: (edit(X), None)


class Transform(Tabular):
    """A feature map's ``transform`` (or a kernel's Gram matrix ``k(X)``): the X cases."""

    def __init__(self, make, entry):
        rng = np.random.default_rng(0)
        self.make, self.entry, self.target = make, entry, "transform"
        self.X0, self.Xt = rng.normal(size=(6, 3)), rng.normal(size=(4, 3))
        self.fitted, self.x_cases = make(), X_CASES

    def entries(self):
        return [self.entry]

    def cases(self, entry):
        for c in self.x_cases:
            X, ref = c.build(self.X0)
            expect = c.expect_for(entry)
            yield c.name, (X,), None if ref is None else (ref,), expect

    def call(self, est, entry, args):
        return est(*args) if entry == "gram" else est.transform(*args)

    def result(self, est, entry, ret, args):
        return {"returned": ret}

    def unsound_output(self, est, what, value):
        v = value.toarray() if sp.issparse(value) else np.asarray(value)
        return None if np.isfinite(v).all() else "non-finite values"


SPECS = {
    "Perceptron": _tab(ol.Perceptron, random_state=0),
    "PassiveAggressiveClassifier": _tab(ol.PassiveAggressiveClassifier, random_state=0),
    "Winnow": _tab(ol.Winnow, random_state=0),
    "PNormPerceptron": _tab(ol.PNormPerceptron, random_state=0),
    "COPA": _tab(ol.COPA, random_state=0),
    "OnlineLearner": _tab(ol.OnlineLearner, random_state=0),
    "OnlineLearner(LastK(k=2))": _tab(
        ol.OnlineLearner, step=fw.LastK(k=2), average=False, tol=None, random_state=0
    ),
    "OnlineLearner(RankingHinge)": _tab(
        ol.OnlineLearner,
        link=fw.Euclidean(),
        loss=fw.RankingHinge(1.0),
        step=fw.RoundOptimal(0.01),
        average=False,
        tol=None,
        random_state=0,
    ),
    "OnlineRegressor": _tab(ol.OnlineRegressor, "regression", random_state=0),
    "DualAscentClassifier": _tab(ol.DualAscentClassifier, random_state=0),
    "WeightedMinMax": _tab(ol.WeightedMinMax),
    "WeightedMinMax(one-hot)": _tab(ol.WeightedMinMax, label_encoding="one-hot"),
    "AROW": _tab(ol.AROW),
    "SCW": _tab(ol.SCW),
    "PassiveAggressiveRegressor": _tab(ol.PassiveAggressiveRegressor, "regression", random_state=0),
    "OnlineLeastSquares": _tab(ol.OnlineLeastSquares, "regression", random_state=0),
    "LabelRanker": _tab(ol.LabelRanker, random_state=0),
    "LabelRanker(entropy)": _tab(ol.LabelRanker, complexity="entropy", random_state=0),
    "ClassDependentPA": _tab(ol.ClassDependentPA, random_state=0),
    "DualCoordinateSVC": _tab(ol.DualCoordinateSVC, random_state=0),
    "DualCoordinateSVC(crammer_singer)": _tab(
        ol.DualCoordinateSVC, multi_class="crammer_singer", random_state=0
    ),
    "Pegasos": _tab(ol.Pegasos, random_state=0),
    "AdaGradClassifier": _tab(ol.AdaGradClassifier, random_state=0),
    "NormalizedClassifier": _tab(ol.NormalizedClassifier, random_state=0),
    "AdaGradRegressor": _tab(ol.AdaGradRegressor, "regression", random_state=0),
    "NormalizedRegressor": _tab(ol.NormalizedRegressor, "regression", random_state=0),
    "PrimalDualBoost": _tab(ol.PrimalDualBoost, "binary", n_estimators=10),
    "KernelPerceptron": _tab(ol.KernelPerceptron, random_state=0),
    "KernelPassiveAggressive": _tab(ol.KernelPassiveAggressive, random_state=0),
    "KernelCOPA": _tab(ol.KernelCOPA, random_state=0),
    "KernelSVC": _tab(ol.KernelSVC, random_state=0),
    "SequenceTagger": Sequences,
    "OnlineStructuredLearner": Structured,
    "Aligner": Alignment,
    "GraphPerceptron": Graph,
    "Polynomial(2).feature_map()": lambda: Transform(
        lambda: kn.Polynomial(2).feature_map(), "transform"
    ),
    "(Linear() + Cosine()).feature_map()": lambda: Transform(
        lambda: (kn.Linear() + kn.Cosine()).feature_map(), "transform"
    ),
    "RBF() Gram": lambda: Transform(lambda: kn.RBF(), "gram"),
}
