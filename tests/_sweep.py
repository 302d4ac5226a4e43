"""The child side of the crash sweep: ``python _sweep.py NAME REPORT`` runs every case of the
estimator NAME (see ``_sweep_specs.SPECS``) and appends one JSON line per case to REPORT, after
a ``{"start": ...}`` line, so that the parent names the case a signal killed.

A case passes when the call ends in a clear error (ValueError, TypeError or FloatingPointError
with a message; a refused call leaves the model's state bit-identical) or in a sound result
(equal to that of the reference input when the case has one).  Which of the two is required is
the case's expectation (``_sweep_inputs``).
"""

from __future__ import annotations

import copy
import faulthandler
import json
import sys
import warnings

import numpy as np
import scipy.sparse as sp
from _sweep_inputs import ERROR, VALID, changed_keys, state_of

CLEAR = (ValueError, TypeError, FloatingPointError)


def _clear(exc):
    return isinstance(exc, CLEAR) and str(exc).strip() != ""


def _describe(exc):
    return f"{type(exc).__module__}.{type(exc).__name__}: {str(exc)[:300]}"


def _same(a, b):
    """Equal results: labels exactly, floats to 1e-7 (relative)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b, strict=True))
    if sp.issparse(a) or sp.issparse(b):
        a = a.toarray() if sp.issparse(a) else a
        b = b.toarray() if sp.issparse(b) else b
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-7, atol=1e-10))
    return bool(np.array_equal(a, b))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)


def run_case(kind, entry, name, args, ref, expect):
    """One call; returns a problem (str) or None, and the outcome."""
    est = kind.start(entry, name)
    before = state_of(est)
    try:
        ret = _quiet(kind.call, est, entry, args)
    except Exception as exc:  # noqa: BLE001 - every exception is judged here
        if not _clear(exc):
            return f"unclear error {_describe(exc)}", "error"
        if expect == VALID:
            return f"refused a valid input: {_describe(exc)}", "error"
        after = state_of(est)
        if after != before:
            return f"refused ({_describe(exc)}) but changed {changed_keys(before, after)}", "error"
        return None, f"error: {_describe(exc)}"
    if expect == ERROR:
        return "accepted without an error", "result"
    try:
        result = _quiet(kind.result, est, entry, ret, args)
    except Exception as exc:  # noqa: BLE001
        return f"accepted, then the model fails on clean data: {_describe(exc)}", "result"
    problem = kind.unsound(est, entry, result)
    if problem:
        return f"accepted with an unsound result: {problem}", "result"
    if ref is not None:
        other = kind.start(entry, name)
        try:
            want = _quiet(kind.result, other, entry, _quiet(kind.call, other, entry, ref), ref)
        except Exception as exc:  # noqa: BLE001
            return f"the reference input fails: {_describe(exc)}", "result"
        if not _same(result, want):
            return "accepted with a result that differs from the reference input's", "result"
    return None, "result"


def main(name, report):
    from _sweep_specs import SPECS

    faulthandler.enable()
    kind = SPECS[name]()
    with open(report, "a", encoding="utf-8") as out:

        def log(rec):
            out.write(json.dumps(rec) + "\n")
            out.flush()

        for entry in kind.entries():
            for case_name, args, ref, expect in kind.cases(entry):
                log({"start": f"{entry} / {case_name}"})
                problem, outcome = run_case(kind, entry, case_name, args, ref, expect)
                log({"entry": entry, "case": case_name, "expect": expect,
                     "outcome": outcome, "problem": problem})  # fmt: skip


class Tabular:
    """Estimators of X (n, d) and y (n,): classifiers, binary classifiers, regressors."""

    ENTRIES = ("fit", "partial_fit", "partial_fit[first]", "partial_fit_predict",
               "partial_fit_mistakes", "predict", "decision_function", "predict_proba")  # fmt: skip
    TRAIN = {"fit", "partial_fit", "partial_fit[first]", "partial_fit_predict",
             "partial_fit_mistakes"}  # fmt: skip

    def __init__(self, make, target="multiclass", n=30, d=4):
        from _sweep_inputs import X_CASES, Y_CASES

        self.make, self.target = make, target
        rng = np.random.default_rng(0)
        self.X0, self.Xt = rng.normal(size=(n, d)), rng.normal(size=(8, d))
        if target == "regression":
            self.y0 = rng.normal(size=n)
        else:
            self.y0 = np.arange(n) % (2 if target == "binary" else 3)
        self.fitted = _quiet(self.make().fit, self.X0, self.y0)
        self.x_cases, self.y_cases = X_CASES, Y_CASES

    def entries(self):
        return [e for e in self.ENTRIES if hasattr(self.fitted, e.split("[")[0])]

    def start(self, entry, name):
        if entry.endswith("[first]") or name == "unfitted model":
            return self.make()
        return copy.deepcopy(self.fitted)

    def labels_for(self, X):
        rows = len(X) if isinstance(X, list) else (X.shape[0] if X.ndim == 2 else len(self.y0))
        return np.resize(self.y0, rows)

    def cases(self, entry):
        train = entry in self.TRAIN
        for c in self.x_cases:
            X, ref = c.build(self.X0)
            args = (X, self.labels_for(X)) if train else (X,)
            refs = None if ref is None else ((ref, self.labels_for(ref)) if train else (ref,))
            yield c.name, args, refs, c.expect_for(entry)
        if not train:
            yield "unfitted model", (self.X0,), None, ERROR
            return
        col = 1 if self.target == "regression" else 0
        for c in self.y_cases:
            y, ref = c.build(self.y0)
            yield c.name, (self.X0, y), None if ref is None else (self.X0, ref), c.expect[col]
        if "sample_weight" in _params(getattr(self.fitted, entry.split("[")[0])):
            n = len(self.y0)
            for what, sw in (("nan", np.where(np.arange(n) == 1, np.nan, 1.0)),
                             ("-1", np.where(np.arange(n) == 1, -1.0, 1.0)),
                             ("too short", np.ones(n - 1)), ("2-D", np.ones((n, 2)))):  # fmt: skip
                yield f"sample_weight {what}", (self.X0, self.y0, sw), None, ERROR

    def call(self, est, entry, args):
        method = getattr(est, entry.split("[")[0])
        if len(args) == 3:
            return method(args[0], args[1], sample_weight=args[2])
        return method(*args)

    def test_rows(self, est):
        """Clean rows of the model's width (a fit on a wider batch makes a wider model)."""
        d = getattr(est, "n_features_in_", self.Xt.shape[1])
        return self.Xt if d == self.Xt.shape[1] else np.resize(self.Xt, (self.Xt.shape[0], d))

    def result(self, est, entry, ret, args):
        Xt = self.test_rows(est)
        out = {"predict": est.predict(Xt)}
        if hasattr(est, "decision_function"):
            out["decision_function"] = est.decision_function(Xt)
        if entry not in ("fit", "partial_fit", "partial_fit[first]"):
            out["returned"] = ret
        return out

    def unsound(self, est, entry, result):
        for key, value in result.items():
            what = entry.split("[")[0] if key == "returned" else key
            problem = self.unsound_output(est, what, value)
            if problem:
                return f"{key}: {problem}"
        return None

    def unsound_output(self, est, what, value):
        v = np.asarray(value.toarray() if sp.issparse(value) else value)
        if what in ("predict", "partial_fit_predict") and self.target != "regression":
            if v.ndim == 2 and v.dtype.kind in "biu" and np.isin(v, (0, 1)).all():
                return None  # a label-indicator matrix
            if not np.isin(v, est.classes_).all():
                return f"labels {np.setdiff1d(v, est.classes_)[:5]} not among classes_"
            return None
        if what == "partial_fit_mistakes":
            return None if v.dtype == bool else f"dtype {v.dtype}"
        if v.dtype.kind not in "fiub" or not np.isfinite(v).all():
            return f"non-finite or non-numeric values (dtype {v.dtype})"
        if what == "predict_proba" and not np.allclose(v.sum(axis=1), 1.0):
            return "probabilities do not sum to 1"
        return None


def _params(method):
    import inspect

    return inspect.signature(method).parameters


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
